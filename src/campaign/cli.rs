//! `roqsim campaign run CAMPAIGN -o DIR [--jobs N] [--retry-failed] [--ray ADDRESS]` and
//! `roqsim campaign trial DIR INDEX`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::campaign::document::load_campaign;
use crate::campaign::expand::expand;
use crate::campaign::run::{
    check_definitions, pending, prepare_trial, read_status, read_trial_file, run_pool, run_trial,
    trial_dir,
};
use crate::campaign::table::write_table;
use crate::campaign::validate::validate;

/// `roqsim campaign ...`.
#[derive(Subcommand)]
pub enum CampaignCmd {
    /// Run a campaign's trials (each a `roqsim sim` process) into DIR, N at a time; resumable.
    Run(RunArgs),
    /// Re-run one trial of DIR exactly (same world, overrides and seed), then rewrite the table.
    Trial {
        /// The campaign's output folder.
        dir: PathBuf,
        /// The trial's index (the table's `trial` column).
        index: usize,
    },
}

/// `roqsim campaign run`.
#[derive(Args)]
pub struct RunArgs {
    /// The campaign document (YAML; docs/campaigns.md).
    pub campaign: PathBuf,
    /// Output folder: one subfolder per trial, results.csv and results.jsonl.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: PathBuf,
    /// Trials run at once (default: the number of cores).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Also re-run trials marked failed, timeout or crashed.
    #[arg(long)]
    pub retry_failed: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Run the trials as Ray tasks on this cluster (`auto`, or `HOST:PORT`) instead of locally.
    #[arg(long, value_name = "ADDRESS")]
    pub ray: Option<String>,
}

/// Dispatch a campaign verb.
pub fn campaign(cmd: CampaignCmd) -> ExitCode {
    match cmd {
        CampaignCmd::Run(a) => run(&a),
        CampaignCmd::Trial { dir, index } => trial(&dir, index),
    }
}

fn fail(msg: impl std::fmt::Display) -> ExitCode {
    let m = msg.to_string();
    eprintln!("error: {}", m.trim_end());
    ExitCode::from(2)
}

/// A campaign document's refusals: `FILE: path: message`, one line each.
fn document_errors(file: &Path, e: &crate::error::ConfigErrors) -> String {
    let lines: Vec<String> = e.0.iter().map(|x| format!("{}: {x}", file.display())).collect();
    lines.join("\nerror: ")
}

/// `DIR/resolved.json`: what the document's names resolved to when the folder was made.
const RESOLVED: &str = "resolved.json";

/// The first difference between two `Campaign::resolved` records, for a person.
fn resolved_difference(then: &serde_json::Value, now: &serde_json::Value) -> Option<String> {
    for (key, what) in [("worlds", "the world files"), ("override_files", "the override files")] {
        if then[key] != now[key] {
            return Some(format!("{what} were {} then and are {} now", then[key], now[key]));
        }
    }
    None
}

fn run(a: &RunArgs) -> ExitCode {
    if a.jobs == Some(0) {
        return fail("--jobs must be at least 1");
    }
    if a.output.exists() && !a.output.is_dir() {
        return fail(format!(
            "-o {}: is a file, not a folder: name a new folder (or a campaign's folder to resume)",
            a.output.display()
        ));
    }
    let c = match load_campaign(&a.campaign) {
        Ok(c) => c,
        Err(e) => return fail(document_errors(&a.campaign, &e)),
    };
    let trials = expand(&c);
    // Building every cell logs what each trial's own stderr.txt will say again: keep it quiet here.
    let checked =
        tracing::subscriber::with_default(tracing::subscriber::NoSubscriber::default(), || {
            validate(&c, &trials)
        });
    if let Err(m) = checked {
        return fail(format!("{}: {m}", a.campaign.display()));
    }
    let text = std::fs::read_to_string(&a.campaign).unwrap_or_default();
    if let Err(e) = std::fs::create_dir_all(&a.output) {
        return fail(format!("-o {}: {e}", a.output.display()));
    }
    let dir = std::fs::canonicalize(&a.output).unwrap_or_else(|_| a.output.clone());
    let kept = dir.join("campaign.yaml");
    match std::fs::read_to_string(&kept) {
        Ok(old) if old != text => {
            return fail(format!(
                "-o {}: the folder holds another campaign (its campaign.yaml differs from {}): \
                 choose a new folder, or delete this one to start over",
                a.output.display(),
                a.campaign.display()
            ))
        }
        Ok(_) => {}
        Err(_) => {
            if let Err(e) = std::fs::write(&kept, &text) {
                return fail(format!("{}: {e}", kept.display()));
            }
        }
    }
    // The same text in another folder can name other files: those must match too.
    let resolved = c.resolved();
    let rp = dir.join(RESOLVED);
    match std::fs::read_to_string(&rp).ok().and_then(|s| serde_json::from_str(&s).ok()) {
        Some(then) => {
            if let Some(d) = resolved_difference(&then, &resolved) {
                return fail(format!(
                    "-o {}: the folder holds another campaign (the same campaign.yaml, but {d}): \
                     choose a new folder, or delete this one to start over",
                    a.output.display()
                ));
            }
        }
        None => {
            let text = serde_json::to_string_pretty(&resolved).unwrap_or_default() + "\n";
            if let Err(e) = std::fs::write(&rp, text) {
                return fail(format!("{}: {e}", rp.display()));
            }
        }
    }
    // A trial folder written for another trial (DIR/campaign.yaml edited, a folder reused)
    // holds results that are not this campaign's: refused before any folder is rewritten.
    if let Err(m) = check_definitions(&c, &trials, &dir) {
        return fail(format!("-o {}: {m}", a.output.display()));
    }
    for t in &trials {
        if let Err(m) = prepare_trial(&c, t, &dir) {
            return fail(format!("trial {}: {m}", t.index));
        }
    }
    let todo = pending(&dir, &trials, a.retry_failed);
    let skipped = trials.len() - todo.len();
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return fail(format!("cannot find the roqsim executable: {e}")),
    };
    let tally = if let Some(addr) = &a.ray {
        match crate::campaign::cli::ray_run(&exe, &dir, &todo, addr, a.quiet) {
            Ok(t) => t,
            Err(m) => return fail(m),
        }
    } else {
        let jobs = a
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
        // A stop (Ctrl-C, SIGTERM, SIGHUP) reaches the running trials: they are ended, marked
        // `interrupted` and the table written, instead of left running without their timeout.
        let _ = ctrlc::set_handler(|| {
            crate::campaign::run::STOP.store(true, std::sync::atomic::Ordering::SeqCst)
        });
        let bar = progress_bar(todo.len() as u64, a.quiet);
        let mut failed = 0usize;
        let t = run_pool(&exe, &dir, &todo, jobs, &mut |i, st| {
            if !st.is_ok() {
                failed += 1;
                bar.suspend(|| eprintln!("trial {i}: {} ({})", st.status, st.note));
            }
            bar.set_message(format!("failed {failed}"));
            bar.inc(1);
        });
        bar.finish_and_clear();
        t
    };
    if let Err(m) = write_table(&c, &trials, &dir) {
        return fail(m);
    }
    if crate::campaign::run::STOP.load(std::sync::atomic::Ordering::SeqCst) {
        eprintln!(
            "campaign: stopped by a signal; running trials were ended and marked interrupted \
             (they run again on resume); table {}",
            dir.join("results.csv").display()
        );
        return ExitCode::from(130);
    }
    let (mut ok, mut marked) = (0, 0);
    for t in &trials {
        match read_status(&trial_dir(&dir, t.index)) {
            Some(s) if s.is_ok() => ok += 1,
            Some(_) => marked += 1,
            None => {}
        }
    }
    let line = format!(
        "campaign: {} trials: {} ran ({} ok, {} not), {} skipped as already run; {} ok, {} marked failed; table {}",
        trials.len(),
        tally.ok + tally.failed,
        tally.ok,
        tally.failed,
        skipped,
        ok,
        marked,
        dir.join("results.csv").display()
    );
    if let Err(c) = crate::cli::stdout::emit(&line) {
        return c;
    }
    if ok == trials.len() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn progress_bar(n: u64, quiet: bool) -> indicatif::ProgressBar {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    let visible = !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let bar = ProgressBar::with_draw_target(
        Some(n),
        if visible { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() },
    );
    if let Ok(style) = ProgressStyle::with_template(
        "{bar:30} {pos}/{len} trials done, {msg}, {elapsed} elapsed, ETA {eta}",
    ) {
        bar.set_style(style);
    }
    bar.set_message("failed 0");
    bar
}

/// The trial folders of `dir` (`trials/NNNN`), counted.
fn trial_count(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("trials"))
        .map(|r| {
            r.filter_map(Result::ok)
                .filter(|e| e.file_name().to_str().is_some_and(|n| n.parse::<usize>().is_ok()))
                .count()
        })
        .unwrap_or(0)
}

/// The campaign of folder `dir`, read as the run that made it read it: `DIR/campaign.yaml` with
/// its relative paths resolved against the document's original folder (`resolved.json`).
fn folder_campaign(dir: &Path) -> Result<crate::campaign::Campaign, String> {
    let doc = dir.join("campaign.yaml");
    let text = std::fs::read_to_string(&doc).map_err(|e| format!("{}: {e}", doc.display()))?;
    let rp = dir.join(RESOLVED);
    let then: serde_json::Value = std::fs::read_to_string(&rp)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .ok_or_else(|| format!("{} is missing or unreadable", rp.display()))?;
    let from = PathBuf::from(then["document_dir"].as_str().unwrap_or_default());
    let c = crate::campaign::parse_campaign(&text, &from)
        .map_err(|e| document_errors(&doc, &e).replace("\nerror: ", "; "))?;
    if let Some(d) = resolved_difference(&then, &c.resolved()) {
        return Err(format!("{}: {d}", doc.display()));
    }
    Ok(c)
}

fn trial(dir: &Path, index: usize) -> ExitCode {
    let td = trial_dir(dir, index);
    let n = trial_count(dir);
    if index >= n || !td.is_dir() {
        return fail(if n == 0 {
            format!("trial {index} of {}: the folder holds no trials (trials/ is empty or missing): name a campaign's output folder", dir.display())
        } else {
            format!(
                "trial {index} of {}: out of range: the trials are 0 to {} (the table's `trial` column)",
                dir.display(),
                n - 1
            )
        });
    }
    let f = match read_trial_file(&td)
        .and_then(|f| crate::campaign::run::check_runnable(&f, &td).map(|_| f))
    {
        Ok(f) => f,
        Err(m) => return fail(format!("trial {index} of {}: {m}", dir.display())),
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return fail(format!("cannot find the roqsim executable: {e}")),
    };
    let st = run_trial(&exe, &f, &td);
    let line = format!(
        "trial {index}: {} in {:.3} s{}",
        st.status,
        st.wall_s,
        if st.note.is_empty() { String::new() } else { format!(" ({})", st.note) }
    );
    if let Err(c) = crate::cli::stdout::emit(&line) {
        return c;
    }
    // The table follows, read as the run that made the folder read it.
    if let Err(m) = folder_campaign(dir).and_then(|c| {
        let trials = expand(&c);
        check_definitions(&c, &trials, dir)?;
        write_table(&c, &trials, dir)
    }) {
        return fail(format!("the table of {} was not rewritten: {m}", dir.display()));
    }
    if st.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Hand the pending trials to the `roqsim_ray` Python package (campaign/roqsim_ray): one Ray task
/// per trial runs the same `trial.json` arguments on a worker and writes the same files.
pub fn ray_run(
    exe: &Path,
    dir: &Path,
    todo: &[usize],
    address: &str,
    quiet: bool,
) -> Result<crate::campaign::run::Tally, String> {
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
    let status = cmd.status().map_err(|e| format!("--ray: cannot start {python}: {e}"))?;
    if !status.success() {
        return Err(format!("--ray: the roqsim_ray driver failed ({status}); its error is above"));
    }
    let mut t = crate::campaign::run::Tally::default();
    for &i in todo {
        match read_status(&trial_dir(dir, i)) {
            Some(s) if s.is_ok() => t.ok += 1,
            _ => t.failed += 1,
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
