//! `roqsim campaign run ... --ray ADDRESS`: the pending trials handed to the `roqsim_ray` Python
//! package (campaign/roqsim_ray), one Ray task per trial running the same `trial.json`
//! arguments on a worker and writing the same files.
//!
//! The driver is this process's child: it dies with it (`PR_SET_PDEATHSIG`, and Ray ends a dead
//! driver's tasks), and a SIGINT/SIGTERM/SIGHUP to the campaign reaches it as SIGTERM (it cancels
//! its tasks, killing their trial processes, and exits), then SIGKILL after
//! [`DRIVER_STOP_GRACE`]. An address no cluster answers at is refused by the driver within its
//! connect bound (docs/campaigns.md, docs/bounds.md).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::campaign::run::{die_with_parent, read_status, trial_dir, Tally, STOP};

/// How long a stopped driver has to cancel its tasks and leave the cluster before it is killed.
pub const DRIVER_STOP_GRACE: Duration = Duration::from_secs(20);

/// What a `--ray` address must be, for its refusals.
const ADDRESS_FIX: &str = "give `auto` (the cluster of this node) or HOST:PORT with a port from 1 \
                           to 65535, as `ray start --head` printed it (e.g. 127.0.0.1:6379)";

/// Check a `--ray` address before anything is read or written: `auto`, or `HOST:PORT` with a
/// non-empty host and a port from 1 to 65535.
pub fn check_address(address: &str) -> Result<(), String> {
    if address.trim().is_empty() {
        return Err(format!("--ray is empty: {ADDRESS_FIX}"));
    }
    if address == "auto" {
        return Ok(());
    }
    let ok = address.rsplit_once(':').is_some_and(|(host, port)| {
        !host.is_empty()
            && !host.chars().any(char::is_whitespace)
            // `h:1:2` is no host and port (an IPv6 host is not taken: Ray's address is host:port)
            && !host.contains(':')
            && port.bytes().all(|b| b.is_ascii_digit())
            && port.parse::<u16>().is_ok_and(|p| p >= 1)
    });
    if ok {
        Ok(())
    } else {
        Err(format!("--ray {address}: not a Ray cluster address: {ADDRESS_FIX}"))
    }
}

/// Run the trials `todo` of folder `dir` on the Ray cluster at `address`; the tally of how they
/// ended. A stop (STOP set) ends the driver and returns what had finished.
pub fn ray_run(
    exe: &Path,
    dir: &Path,
    todo: &[usize],
    address: &str,
    quiet: bool,
) -> Result<Tally, String> {
    let python = std::env::var("ROQSIM_PYTHON").unwrap_or_else(|_| "python3".into());
    let pkg = ray_package_dir().ok_or_else(|| {
        "--ray: the roqsim_ray package is not installed beside roqsim (campaign/roqsim_ray)"
            .to_string()
    })?;
    let mut pp = pkg.display().to_string();
    if let Ok(old) = std::env::var("PYTHONPATH") {
        if !old.is_empty() {
            pp = format!("{pp}:{old}");
        }
    }
    let mut cmd = std::process::Command::new(&python);
    cmd.env("PYTHONPATH", pp)
        .args(["-m", "roqsim_ray", "--address", address, "--exe"])
        .arg(exe)
        .arg("--dir")
        .arg(dir);
    if quiet {
        cmd.arg("--quiet");
    }
    cmd.args(todo.iter().map(|i| i.to_string()));
    die_with_parent(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| format!("--ray: cannot start {python}: {e}"))?;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {}
            Err(e) => return Err(format!("--ray: waiting for the roqsim_ray driver: {e}")),
        }
        if STOP.load(Ordering::SeqCst) {
            if let Ok(pid) = i32::try_from(child.id()) {
                // SAFETY: kill(2) on our own child's pid, which is not yet reaped.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            let grace = Instant::now();
            while grace.elapsed() < DRIVER_STOP_GRACE {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // A driver stopped by the same signal (a Ctrl-C reaches the whole process group) exits 130.
    let stopped = STOP.load(Ordering::SeqCst);
    if let Some(s) = status.filter(|s| !s.success() && !stopped) {
        return Err(format!("--ray: the roqsim_ray driver failed ({s}); its error is above"));
    }
    let mut t = Tally::default();
    for &i in todo {
        match read_status(&trial_dir(dir, i)) {
            Some(s) if s.is_ok() => t.ok += 1,
            Some(_) => t.failed += 1,
            None => {}
        }
    }
    Ok(t)
}

/// Where the `roqsim_ray` package is: an install's `share/roqsim/campaign`, else the source tree.
fn ray_package_dir() -> Option<PathBuf> {
    let mut c = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        if let Some(prefix) = exe.parent().and_then(Path::parent).and_then(Path::parent) {
            c.push(prefix.join("share/roqsim/campaign"));
        }
    }
    c.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("campaign"));
    c.into_iter().find(|p| p.join("roqsim_ray").is_dir())
}
