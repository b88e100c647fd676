//! `roqsim campaign run CAMPAIGN -o DIR [--jobs N] [--retry-failed] [--ray ADDRESS]` and
//! `roqsim campaign trial DIR INDEX`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use clap::{Args, Subcommand};

use crate::campaign::document::load_campaign;
use crate::campaign::expand::expand;
use crate::campaign::folder;
use crate::campaign::run::{
    check_definitions, pending, prepare_trial, read_status, read_trial_file, run_pool, run_trial,
    trial_dir, STOP,
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
        #[arg(allow_hyphen_values = true, value_parser = trial_index)]
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
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = crate::cli::count_from_1)]
    pub jobs: Option<u64>,
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
    crate::cli::stderr::say!("error: {}", m.trim_end());
    ExitCode::from(2)
}

/// A campaign document's refusals: `FILE: path: message`, one line each.
fn document_errors(file: &Path, e: &crate::error::ConfigErrors) -> String {
    let lines: Vec<String> = e.0.iter().map(|x| format!("{}: {x}", file.display())).collect();
    lines.join("\nerror: ")
}

/// Stop (SIGINT, SIGTERM, SIGHUP) sets [`STOP`]: running trials (or the Ray driver) are ended
/// and marked, instead of left running without their timeout.
fn handle_stops() {
    let _ = ctrlc::set_handler(|| STOP.store(true, Ordering::SeqCst));
}

/// The trial folders hold runs (a folder without resolved.json that has any is not resumable).
fn has_trials(dir: &Path) -> bool {
    std::fs::read_dir(dir.join("trials")).is_ok_and(|mut r| r.next().is_some())
}

fn run(a: &RunArgs) -> ExitCode {
    match run_steps(a) {
        Ok(code) | Err(code) => code,
    }
}

/// `campaign run` in its steps; a refusal is the `Err` exit code (after its message).
fn run_steps(a: &RunArgs) -> Result<ExitCode, ExitCode> {
    check_flags(a)?;
    let c = load_campaign(&a.campaign).map_err(|e| fail(document_errors(&a.campaign, &e)))?;
    let trials = expand(&c);
    // Building every cell logs what each trial's own stderr.txt will say again: keep it quiet here.
    let checked =
        tracing::subscriber::with_default(tracing::subscriber::NoSubscriber::default(), || {
            validate(&c, &trials)
        });
    let inputs = checked.map_err(|m| fail(format!("{}: {m}", a.campaign.display())))?;
    let exe = std::env::current_exe()
        .map_err(|e| fail(format!("cannot find the roqsim executable: {e}")))?;
    let binary = folder::binary_identity(&exe).map_err(fail)?;
    let (dir, _lock) = open_folder(a, &c, &inputs, &binary)?;
    prepare_folder(a, &c, &trials, &dir)?;
    let todo = pending(&dir, &trials, a.retry_failed);
    let skipped = trials.len() - todo.len();
    handle_stops();
    let tally = run_trials(a, &exe, &dir, &todo)?;
    write_table(&c, &trials, &dir).map_err(fail)?;
    Ok(summarize(a, &trials, &dir, &tally, skipped))
}

/// The flags checked before anything is read: `--jobs`, `--ray`, and `-o` not a file nor a
/// folder of something else.
fn check_flags(a: &RunArgs) -> Result<(), ExitCode> {
    if let Some(addr) = &a.ray {
        crate::campaign::ray::check_address(addr).map_err(fail)?;
    }
    if a.output.exists() && !a.output.is_dir() {
        return Err(fail(format!(
            "-o {}: is a file, not a folder: name a new folder (or a campaign's folder to resume)",
            a.output.display()
        )));
    }
    folder::check_not_foreign(&a.output, &a.output).map_err(fail)
}

/// The output folder, created and locked (the lock is held while the returned guard lives), and
/// checked to be this campaign's: the same campaign.yaml (written when new), the same resolved
/// names, inputs and binary (recorded when new). A folder of trials whose inputs are unknown is
/// refused.
fn open_folder(
    a: &RunArgs,
    c: &crate::campaign::document::Campaign,
    inputs: &std::collections::BTreeMap<String, String>,
    binary: &serde_json::Value,
) -> Result<(PathBuf, folder::FolderLock), ExitCode> {
    let text = std::fs::read_to_string(&a.campaign).unwrap_or_default();
    std::fs::create_dir_all(&a.output)
        .map_err(|e| fail(format!("-o {}: {e}", a.output.display())))?;
    let dir = std::fs::canonicalize(&a.output).unwrap_or_else(|_| a.output.clone());
    // Checked again just before the lock is made: a folder refused as foreign gets no `.lock`.
    folder::check_not_foreign(&dir, &a.output).map_err(fail)?;
    // One campaign at a time in a folder; held until this process ends.
    let lock = folder::lock(&dir, &a.output).map_err(|m| fail(format!("-o {m}")))?;
    let kept = dir.join("campaign.yaml");
    match std::fs::read_to_string(&kept) {
        Ok(old) if old != text => {
            return Err(fail(format!(
                "-o {}: the folder holds another campaign (its campaign.yaml differs from {}): \
                 choose a new folder, or delete this one to start over",
                a.output.display(),
                a.campaign.display()
            )))
        }
        Ok(_) => {}
        Err(_) => {
            std::fs::write(&kept, &text).map_err(|e| fail(format!("{}: {e}", kept.display())))?
        }
    }
    // The same text in another folder can name other files, and the files can have changed
    // since the trials ran (or the binary): then the folder's results are another campaign's.
    let names = c.resolved();
    match folder::read_resolved(&dir) {
        Some(then) => {
            if let Some(d) = folder::names_difference(&then, &names) {
                return Err(fail(format!(
                    "-o {}: the folder holds another campaign (the same campaign.yaml, but {d}): \
                     choose a new folder, or delete this one to start over",
                    a.output.display()
                )));
            }
            if let Some(d) = folder::inputs_difference(&then, Some(inputs), binary) {
                return Err(fail(format!(
                    "-o {}: cannot resume: {d}; its trials would sit in one table with trials \
                     of other inputs: {}",
                    a.output.display(),
                    folder::NEW_FOLDER
                )));
            }
        }
        None if has_trials(&dir) => {
            return Err(fail(format!(
                "-o {}: the folder holds trials but no readable {}, so what they ran on is \
                 unknown: {}",
                a.output.display(),
                folder::RESOLVED,
                folder::NEW_FOLDER
            )))
        }
        None => {
            folder::write_resolved(&dir, &folder::record(&names, inputs, binary)).map_err(fail)?
        }
    }
    Ok((dir, lock))
}

/// Before any trial runs: the table's files can be written, every trial folder holds this
/// campaign's trial (refused before any folder is rewritten), and each trial folder is prepared.
fn prepare_folder(
    a: &RunArgs,
    c: &crate::campaign::document::Campaign,
    trials: &[crate::campaign::expand::Trial],
    dir: &Path,
) -> Result<(), ExitCode> {
    crate::campaign::table::check_table_files(dir)
        .map_err(|m| fail(format!("-o {}: {m}", a.output.display())))?;
    check_definitions(c, trials, dir)
        .map_err(|m| fail(format!("-o {}: {m}", a.output.display())))?;
    for t in trials {
        prepare_trial(c, t, dir).map_err(|m| fail(format!("trial {}: {m}", t.index)))?;
    }
    Ok(())
}

/// Run the `todo` trials: as Ray tasks with `--ray`, else `--jobs` at a time here (default: the
/// number of cores) with a progress bar and a line per trial that did not end ok.
fn run_trials(
    a: &RunArgs,
    exe: &Path,
    dir: &Path,
    todo: &[usize],
) -> Result<crate::campaign::run::Tally, ExitCode> {
    if let Some(addr) = &a.ray {
        return crate::campaign::ray::ray_run(exe, dir, todo, addr, a.quiet).map_err(fail);
    }
    let jobs = a
        .jobs
        .map(|j| usize::try_from(j).unwrap_or(usize::MAX))
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    let bar = progress_bar(todo.len() as u64, a.quiet);
    let mut failed = 0usize;
    let t = run_pool(exe, dir, todo, jobs, &mut |i, st| {
        if !st.is_ok() {
            failed += 1;
            bar.suspend(|| crate::cli::stderr::say!("trial {i}: {} ({})", st.status, st.note));
        }
        bar.set_message(format!("failed {failed}"));
        bar.inc(1);
    });
    bar.finish_and_clear();
    Ok(t)
}

/// The closing line and exit code: 130 after a stop signal, else the tally on stdout and 0 when
/// every trial is ok (1 otherwise).
fn summarize(
    a: &RunArgs,
    trials: &[crate::campaign::expand::Trial],
    dir: &Path,
    tally: &crate::campaign::run::Tally,
    skipped: usize,
) -> ExitCode {
    if STOP.load(Ordering::SeqCst) {
        let what = if a.ray.is_some() {
            "the Ray tasks not yet returned were cancelled (their trials keep their previous \
             state and run again on resume)"
        } else {
            "running trials were ended and marked interrupted (they run again on resume)"
        };
        crate::cli::stderr::say!(
            "campaign: stopped by a signal; {what}; table {}",
            dir.join("results.csv").display()
        );
        return ExitCode::from(130);
    }
    let (mut ok, mut marked) = (0, 0);
    for t in trials {
        match read_status(&trial_dir(dir, t.index)) {
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
    let then = folder::read_resolved(dir).ok_or_else(|| {
        format!("{} is missing or unreadable", dir.join(folder::RESOLVED).display())
    })?;
    let from = PathBuf::from(then["document_dir"].as_str().unwrap_or_default());
    let c = crate::campaign::parse_campaign(&text, &from)
        .map_err(|e| document_errors(&doc, &e).replace("\nerror: ", "; "))?;
    if let Some(d) = folder::names_difference(&then, &c.resolved()) {
        return Err(format!("{}: {d}", doc.display()));
    }
    Ok(c)
}

/// A trial index: a whole number, said so when it is not (clap's own text for `-1` is a tip to
/// write `-- -1`); past the trials is refused with their range once the folder is read.
fn trial_index(s: &str) -> Result<usize, String> {
    crate::cli::whole_number(s).map(|n| usize::try_from(n).unwrap_or(usize::MAX))
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
    // A folder that is not a campaign's gets no `.lock`.
    if !dir.join("campaign.yaml").is_file() {
        return fail(format!(
            "trial {index} of {}: the folder is not a campaign's folder (it has no \
             campaign.yaml): name a campaign's output folder; nothing in it was touched",
            dir.display()
        ));
    }
    // Not while a campaign (or another `campaign trial`) runs in the folder.
    let canonical = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let _lock = match folder::lock(&canonical, dir) {
        Ok(l) => l,
        Err(m) => return fail(m),
    };
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
    // An exact re-run needs the inputs the campaign's trials ran on.
    let changed = folder::binary_identity(&exe).map(|b| match folder::read_resolved(dir) {
        Some(then) => folder::inputs_difference(&then, None, &b),
        None => Some(format!("{} is missing or unreadable", folder::RESOLVED)),
    });
    match changed {
        Err(m) => return fail(m),
        Ok(Some(d)) => {
            return fail(format!(
                "trial {index} of {}: cannot re-run it exactly: {d}: run the campaign again into \
                 a new folder (-o)",
                dir.display()
            ))
        }
        Ok(None) => {}
    }
    if let Err(m) = crate::campaign::table::check_table_files(dir) {
        return fail(format!("trial {index} of {}: {m}", dir.display()));
    }
    handle_stops();
    let st = run_trial(&exe, &f, &td);
    let stopped = STOP.load(Ordering::SeqCst);
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
    if stopped {
        crate::cli::stderr::say!(
            "campaign trial: stopped by a signal; the trial was ended and marked interrupted"
        );
        return ExitCode::from(130);
    }
    if st.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
