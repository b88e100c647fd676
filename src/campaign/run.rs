//! Running trials: each one a separate `roqsim sim` process of this same binary, N at a time,
//! under a wall timeout, into its own folder.
//!
//! A trial's folder (`DIR/trials/NNNN/`) holds `trial.json` (its definition and the exact
//! argument list), `override.yaml`, `stdout.txt`, `stderr.txt`, `status.json` (status, exit code,
//! wall time, attempts), `results.json` (the run's `--summary`) and `record.mcap` when the
//! campaign records. The process runs in the folder and names those files relative to it, so a
//! moved or copied campaign folder is self-contained (only the world path is absolute). A run
//! writes `results.new.json` (`record.new.mcap`) and renames it into place when it is ok: a failed
//! re-run never replaces good results. A trial is complete when its status is `ok` and its
//! results.json parses;
//! re-running a campaign skips complete trials, leaves `failed`/`timeout`/`crashed` ones marked
//! (re-run with `--retry-failed`) and runs everything else (never run, or `interrupted`).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::campaign::document::Campaign;
use crate::campaign::expand::Trial;

/// What `status.json` says about a trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialStatus {
    /// `ok`, `failed` (non-zero exit or no results), `timeout` (killed at the wall timeout),
    /// `crashed` (ended by a signal), `interrupted` (stopped by SIGINT/SIGTERM before its limit;
    /// runs again on resume).
    pub status: String,
    /// The process's exit code (None when killed or ended by a signal).
    pub exit_code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
    /// Wall time of the process (s).
    pub wall_s: f64,
    /// How many times the trial has been run.
    pub attempts: u32,
    /// What went wrong, for a person (empty when ok).
    pub note: String,
}

impl TrialStatus {
    /// The trial needs no re-run.
    pub fn is_ok(&self) -> bool {
        self.status == "ok"
    }
}

/// A trial's folder.
pub fn trial_dir(dir: &Path, index: usize) -> PathBuf {
    dir.join("trials").join(format!("{index:04}"))
}

/// The trial's status, if it has run.
pub fn read_status(td: &Path) -> Option<TrialStatus> {
    let s = std::fs::read_to_string(td.join("status.json")).ok()?;
    serde_json::from_str(&s).ok()
}

fn write_json<T: Serialize>(path: &Path, v: &T) -> Result<(), String> {
    let text = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
}

/// The flags whose value is a file of the trial's folder: trial.json names it relative to the
/// folder, and the process runs in the folder, so a moved or copied campaign folder reads and
/// writes its own files.
const FOLDER_FLAGS: [&str; 3] = ["--override", "--summary", "--record"];

/// The `roqsim` arguments that run trial `t` of `c` in its folder (the world absolute, the
/// trial's own files relative to the folder).
pub fn trial_args(c: &Campaign, t: &Trial) -> Vec<String> {
    let p = |name: &str| name.to_string();
    let mut a = vec![
        "sim".to_string(),
        t.world.path.display().to_string(),
        "--override".into(),
        p("override.yaml"),
        "--seed".into(),
        t.seed.to_string(),
    ];
    if let Some(s) = c.limits.seconds {
        a.extend(["--seconds".into(), format!("{s}")]);
    }
    if let Some(n) = c.limits.steps {
        a.extend(["--steps".into(), n.to_string()]);
    }
    a.extend(["--pacing".into(), "asap".into(), "--no-communication".into(), "-q".into()]);
    a.extend(["--summary".into(), p("results.json")]);
    for e in &c.collect.endpoints {
        a.extend(["--summary-endpoint".into(), e.clone()]);
    }
    if c.record {
        a.extend(["--record".into(), p("record.mcap")]);
    }
    a
}

/// What `trial.json` holds: enough to re-run the trial exactly without the campaign document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialFile {
    /// Index in the campaign.
    pub index: usize,
    /// The world as the campaign wrote it.
    pub world: String,
    /// Factor levels by name.
    pub levels: Vec<(String, serde_json::Value)>,
    /// Repetition.
    pub repetition: u64,
    /// Seed.
    pub seed: u64,
    /// The `roqsim` arguments.
    pub args: Vec<String>,
    /// Wall timeout (s).
    pub wall_timeout_s: f64,
}

/// The trial.json this campaign writes for trial `t`.
fn trial_file(c: &Campaign, t: &Trial) -> TrialFile {
    TrialFile {
        index: t.index,
        world: t.world.written.clone(),
        levels: t.levels.clone(),
        repetition: t.repetition,
        seed: t.seed,
        args: trial_args(c, t),
        wall_timeout_s: c.limits.wall_timeout_s,
    }
}

/// How the trial folder of `t` was written for another trial: its trial.json differs from the
/// one this campaign writes (DIR/campaign.yaml edited, or the folder reused), so its results
/// are not `t`'s and must not be kept under `t`'s labels. `None` when the folder has no readable
/// trial.json (it is written and run) or the same one.
pub fn redefined(c: &Campaign, t: &Trial, dir: &Path) -> Option<String> {
    let old = read_trial_file(&trial_dir(dir, t.index)).ok()?;
    let new = trial_file(c, t);
    if old == new {
        return None;
    }
    Some(if old.levels != new.levels {
        format!(
            "its factor levels were {} and are {} now",
            compact(&old.levels),
            compact(&new.levels)
        )
    } else if old.world != new.world {
        format!("its world was {} and is {} now", old.world, new.world)
    } else if (old.repetition, old.seed) != (new.repetition, new.seed) {
        format!(
            "it was repetition {} with seed {} and is repetition {} with seed {} now",
            old.repetition, old.seed, new.repetition, new.seed
        )
    } else if old.args != new.args {
        format!("its arguments were {} and are {} now", compact(&old.args), compact(&new.args))
    } else {
        format!("its wall timeout was {} s and is {} s now", old.wall_timeout_s, new.wall_timeout_s)
    })
}

/// `v` as one line of JSON.
fn compact<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The first trial of `trials` whose folder was written for another trial, as a refusal.
pub fn check_definitions(c: &Campaign, trials: &[Trial], dir: &Path) -> Result<(), String> {
    for t in trials {
        if let Some(d) = redefined(c, t, dir) {
            return Err(format!(
                "trial {} was run as another trial ({d}): its results are not this \
                 campaign's; choose a new folder, or delete this one to start over",
                t.index
            ));
        }
    }
    Ok(())
}

/// Write a trial's folder: trial.json and override.yaml (kept if already there and unchanged).
pub fn prepare_trial(c: &Campaign, t: &Trial, dir: &Path) -> Result<TrialFile, String> {
    let td = trial_dir(dir, t.index);
    std::fs::create_dir_all(&td).map_err(|e| format!("{}: {e}", td.display()))?;
    let doc = t.override_document()?;
    let yaml =
        serde_norway::to_string(&serde_norway::Value::Mapping(doc)).map_err(|e| e.to_string())?;
    std::fs::write(td.join("override.yaml"), yaml)
        .map_err(|e| format!("{}: {e}", td.join("override.yaml").display()))?;
    let f = trial_file(c, t);
    write_json(&td.join("trial.json"), &f)?;
    Ok(f)
}

/// Read a trial's trial.json.
pub fn read_trial_file(td: &Path) -> Result<TrialFile, String> {
    let p = td.join("trial.json");
    let s = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    serde_json::from_str(&s).map_err(|e| format!("{}: {e}", p.display()))
}

/// Set by SIGINT/SIGTERM/SIGHUP to the campaign: running trials are stopped and marked
/// `interrupted`, no new one starts.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// The arguments to run in the trial's folder: a file flag's value becomes the file's name in
/// the folder (an older trial.json named them absolute, in the folder it was written in), and
/// the run's outputs go to `*.new` names, renamed when the run is done.
fn local_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        out.push(a.clone());
        if FOLDER_FLAGS.contains(&a.as_str()) {
            if let Some(v) = it.next() {
                let name = Path::new(v)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| v.clone());
                out.push(if a == "--override" { name } else { new_name(&name) });
            }
        }
    }
    out
}

/// Where a run writes output `name` before it is kept: `results.json` → `results.new.json`.
fn new_name(name: &str) -> String {
    match name.rsplit_once('.') {
        Some((stem, ext)) => format!("{stem}.new.{ext}"),
        None => format!("{name}.new"),
    }
}

/// The file holds a trial's complete results: the summary `roqsim sim --summary` writes after a
/// run that ended at its limit or a stop request, for the trial's own seed — `reason` a string,
/// `error` null, `steps` a whole number, `sim_time` a number, `seed` the trial's, and `poses`,
/// `monitors`, `endpoints` objects. A torn, corrupt or foreign file (any other JSON object)
/// is not complete: resume runs the trial again.
pub fn results_ok(path: &Path, seed: u64) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
        .is_some_and(|v| complete_results(&v, seed))
}

/// See [`results_ok`].
pub fn complete_results(v: &serde_json::Value, seed: u64) -> bool {
    v["reason"].is_string()
        && v["error"].is_null()
        && v.get("error").is_some()
        && v["steps"].is_u64()
        && v["sim_time"].is_number()
        && v["seed"].as_u64() == Some(seed)
        && ["poses", "monitors", "endpoints"].iter().all(|k| v[k].is_object())
}

/// Why trial.json cannot run here (checked before anything of the trial is touched).
pub fn check_runnable(f: &TrialFile, td: &Path) -> Result<(), String> {
    if let Some(world) = f.args.get(1) {
        if !Path::new(world).is_file() {
            return Err(format!(
                "its world {world} no longer exists (trial.json names it so): restore the file, \
                 or run the campaign again from its document"
            ));
        }
    }
    if !td.join("override.yaml").is_file() {
        return Err(format!(
            "{} is missing: run the campaign again from its document to rewrite it",
            td.join("override.yaml").display()
        ));
    }
    if Duration::try_from_secs_f64(f.wall_timeout_s).is_err() {
        return Err(format!("trial.json: wall_timeout_s {} is not a duration", f.wall_timeout_s));
    }
    Ok(())
}

/// Make `cmd`'s process get SIGKILL when this process dies, however it dies (a SIGKILLed
/// campaign leaves no trial running unwatched): `PR_SET_PDEATHSIG` in the child before it execs.
/// The signal follows the thread that started the child, so the thread that spawns a trial is
/// the one that waits for it.
pub fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: getpid is async-signal-safe; it runs before the fork.
    let parent = unsafe { libc::getpid() };
    // SAFETY: prctl and getppid are async-signal-safe; nothing is allocated between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died between fork and prctl: the signal will never come.
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// Run one trial's process, in its folder, to its end, its timeout or the campaign's stop;
/// writes stdout/stderr/status.json, and results.json (record.mcap) only when the run is ok or
/// there was none before: a failed re-run never replaces good results (its summary is kept as
/// results.failed.json).
pub fn run_trial(exe: &Path, f: &TrialFile, td: &Path) -> TrialStatus {
    let attempts = read_status(td).map(|s| s.attempts).unwrap_or(0) + 1;
    let fail = |note: String| TrialStatus {
        status: "failed".into(),
        exit_code: None,
        signal: None,
        wall_s: 0.0,
        attempts,
        note,
    };
    if let Err(m) = check_runnable(f, td) {
        let st = fail(m);
        let _ = write_json(&td.join("status.json"), &st);
        return st;
    }
    let new_results = td.join(new_name("results.json"));
    let new_record = td.join(new_name("record.mcap"));
    let _ = std::fs::remove_file(&new_results);
    let _ = std::fs::remove_file(&new_record);
    let files = std::fs::File::create(td.join("stdout.txt"))
        .and_then(|o| Ok((o, std::fs::File::create(td.join("stderr.txt"))?)));
    let (out, err) = match files {
        Ok(x) => x,
        Err(e) => return fail(format!("cannot create the trial's output files: {e}")),
    };
    let start = Instant::now();
    let mut cmd = Command::new(exe);
    cmd.args(local_args(&f.args).iter().map(OsString::from))
        .current_dir(td)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    die_with_parent(&mut cmd);
    let child = cmd.spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return fail(format!("cannot start {}: {e}", exe.display())),
    };
    let deadline = Duration::try_from_secs_f64(f.wall_timeout_s).unwrap_or(Duration::ZERO);
    let mut timed_out = false;
    let mut stopped = false;
    let exit = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {}
            Err(_) => break None,
        }
        if STOP.load(Ordering::SeqCst) {
            // The campaign is being stopped: pass the stop on, give the trial a moment to end
            // its loop, then kill it; it never outlives the campaign.
            stopped = true;
            if let Ok(pid) = i32::try_from(child.id()) {
                // SAFETY: kill(2) on our own child's pid, which is not yet reaped.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            let grace = Instant::now();
            while grace.elapsed() < Duration::from_secs(2) {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = child.kill();
            break child.wait().ok();
        }
        if start.elapsed() >= deadline {
            let _ = child.kill();
            timed_out = true;
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let wall_s = start.elapsed().as_secs_f64();
    use std::os::unix::process::ExitStatusExt;
    let code = exit.and_then(|s| s.code());
    let signal = exit.and_then(|s| s.signal());
    let has_results = results_ok(&new_results, f.seed);
    let (status, note) = if stopped {
        ("interrupted", "the campaign was stopped (SIGINT/SIGTERM) while it ran".to_string())
    } else if timed_out {
        ("timeout", format!("killed at the wall timeout of {} s", f.wall_timeout_s))
    } else if let Some(sig) = signal {
        ("crashed", format!("ended by signal {sig}"))
    } else if code != Some(0) {
        (
            "failed",
            format!(
                "exited with code {}; see stderr.txt",
                code.map_or("?".to_string(), |c| c.to_string())
            ),
        )
    } else if !has_results {
        ("failed", "exited 0 without writing complete results (results.json)".to_string())
    } else if interrupted(&new_results) {
        ("interrupted", "the run was interrupted (SIGINT/SIGTERM) before its limit".to_string())
    } else {
        ("ok", String::new())
    };
    let st = TrialStatus { status: status.into(), exit_code: code, signal, wall_s, attempts, note };
    keep_outputs(td, st.is_ok());
    let _ = write_json(&td.join("status.json"), &st);
    st
}

/// Move a run's `*.new` outputs into place: over the previous ones when the run is ok (or there
/// were none), else aside (`results.failed.json`, `record.failed.mcap`).
fn keep_outputs(td: &Path, ok: bool) {
    for (kept, failed) in
        [("results.json", "results.failed.json"), ("record.mcap", "record.failed.mcap")]
    {
        let new = td.join(new_name(kept));
        let kept = td.join(kept);
        // An earlier failure's summary never stands in for this run's.
        let _ = std::fs::remove_file(td.join(failed));
        if !new.exists() {
            continue;
        }
        let to = if ok || !kept.exists() { kept } else { td.join(failed) };
        let _ = std::fs::rename(&new, &to);
    }
}

/// The trial's results say a signal ended its loop (the campaign itself was being stopped).
fn interrupted(results: &Path) -> bool {
    std::fs::read_to_string(results)
        .ok()
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
        .is_some_and(|v| v["reason"] == "interrupted")
}

/// Which trials to run now: not complete, and not marked failed unless `retry_failed`.
pub fn pending(dir: &Path, trials: &[Trial], retry_failed: bool) -> Vec<usize> {
    trials
        .iter()
        .filter(|t| {
            let td = trial_dir(dir, t.index);
            match read_status(&td) {
                None => true,
                Some(s) if s.status == "interrupted" => true,
                Some(s) if s.is_ok() => !results_ok(&td.join("results.json"), t.seed),
                Some(_) => retry_failed,
            }
        })
        .map(|t| t.index)
        .collect()
}

/// Counts of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Ran and finished ok.
    pub ok: usize,
    /// Ran and did not (failed, timeout, crashed).
    pub failed: usize,
}

/// Run the trial folders `todo` (indices) `jobs` at a time; `done` is called on this thread after
/// each trial ends.
pub fn run_pool(
    exe: &Path,
    dir: &Path,
    todo: &[usize],
    jobs: usize,
    done: &mut dyn FnMut(usize, &TrialStatus),
) -> Tally {
    let queue = Mutex::new(todo.iter().copied().collect::<VecDeque<usize>>());
    let (tx, rx) = mpsc::channel::<(usize, TrialStatus)>();
    let mut tally = Tally::default();
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(todo.len().max(1)) {
            let tx = tx.clone();
            let queue = &queue;
            s.spawn(move || loop {
                if STOP.load(Ordering::SeqCst) {
                    break;
                }
                let next = queue.lock().map(|mut q| q.pop_front()).unwrap_or(None);
                let Some(i) = next else { break };
                let td = trial_dir(dir, i);
                let st = match read_trial_file(&td) {
                    Ok(f) => run_trial(exe, &f, &td),
                    Err(m) => TrialStatus {
                        status: "failed".into(),
                        exit_code: None,
                        signal: None,
                        wall_s: 0.0,
                        attempts: 1,
                        note: m,
                    },
                };
                if tx.send((i, st)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (i, st) in rx {
            if st.is_ok() {
                tally.ok += 1;
            } else {
                tally.failed += 1;
            }
            done(i, &st);
        }
    });
    tally
}
