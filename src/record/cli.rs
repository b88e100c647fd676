//! The command-line side of recording: `roqsim sim --record ...` flags and the `replay` and
//! `state` subcommands (the `roqsim` binary flattens these into its own parser).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::record::recorder::{RecordOptions, Recorder, TopicFilter, DEFAULT_RATE_HZ};

/// `roqsim sim` recording flags.
#[derive(Args, Debug, Clone, Default)]
pub struct RecordArgs {
    /// Record the run into one MCAP file (state samples, every topic as ROS 2 messages, inbound
    /// commands, provenance). The file is created before the world is built.
    #[arg(long, value_name = "FILE.mcap")]
    pub record: Option<PathBuf>,
    /// State sample rate in Hz, snapped to an exact decimation of the physics rate.
    #[arg(long, value_name = "HZ", requires = "record", allow_hyphen_values = true)]
    pub record_rate: Option<f64>,
    /// ROS topics to keep: `all` (default), `none`, or comma-separated globs (`/robot/*,/clock`).
    #[arg(long, value_name = "all|none|GLOB,...", requires = "record")]
    pub record_topics: Option<String>,
}

impl RecordArgs {
    /// Open the recording, if asked (refusing a bad rate, a bad filter or an unwritable path).
    pub fn create(&self) -> Result<Option<Recorder>, String> {
        let Some(path) = &self.record else { return Ok(None) };
        let topics = match &self.record_topics {
            Some(t) => TopicFilter::parse(t)?,
            None => TopicFilter::All,
        };
        let rate_hz = self.record_rate.unwrap_or(DEFAULT_RATE_HZ);
        Recorder::create(RecordOptions { path: path.clone(), rate_hz, topics }).map(Some)
    }
}

/// `roqsim replay`.
#[derive(Args, Debug, Clone)]
pub struct ReplayArgs {
    /// A recording made with `roqsim sim --record`.
    pub file: PathBuf,
    /// Compare every recorded state sample bitwise; report the first divergence.
    #[arg(long)]
    pub verify: bool,
    /// Stop after this much run time (s).
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub until: Option<f64>,
}

/// `roqsim state`.
#[derive(Args, Debug, Clone)]
pub struct StateArgs {
    /// A recording made with `roqsim sim --record`.
    pub file: PathBuf,
    /// Sim time (s): the sample nearest it is printed as one line of JSON.
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub at: f64,
    /// Re-run the sensor at this plugin address on the restored sample (seed and episode from
    /// the recording) and print what it publishes instead.
    #[arg(long, value_name = "ADDRESS")]
    pub sensor: Option<String>,
}

/// Run `roqsim replay`: exit 0 when it ran (and, with --verify, matched), 1 on a divergence,
/// 2 when the file is refused.
pub fn replay(a: &ReplayArgs) -> ExitCode {
    // The flags first: a bad one is refused before the recording is read.
    if let Some(t) = a.until.filter(|t| !(t.is_finite() && *t >= 0.0)) {
        crate::cli::stderr::say!(
            "error: --until {}: give a run time in seconds, 0 or more",
            crate::error::num(t)
        );
        return ExitCode::from(2);
    }
    let rec = match crate::record::open(&a.file) {
        Ok(r) => r,
        Err(e) => {
            crate::cli::stderr::say!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match crate::record::replay(&rec, a.verify, a.until) {
        Ok(report) => {
            for n in &report.notes {
                crate::cli::stderr::say!("note: {n}");
            }
            if let Err(c) = crate::cli::stdout::emit(&report.to_string()) {
                return c;
            }
            if report.divergence.is_some() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            crate::cli::stderr::say!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Run `roqsim state`.
pub fn state(a: &StateArgs) -> ExitCode {
    let rec = match crate::record::open(&a.file) {
        Ok(r) => r,
        Err(e) => {
            crate::cli::stderr::say!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(address) = &a.sensor {
        return match crate::record::restore::rerun_sensor(&rec, a.at, address) {
            Ok((v, notes)) => {
                for n in &notes {
                    crate::cli::stderr::say!("note: {n}");
                }
                crate::cli::stdout::emit_then(&v.to_string(), ExitCode::SUCCESS)
            }
            Err(e) => {
                crate::cli::stderr::say!("error: {}: {e}", a.file.display());
                ExitCode::from(2)
            }
        };
    }
    match crate::record::replay::state_at(&rec, a.at) {
        Ok(s) => crate::cli::stdout::emit_then(&s.to_json().to_string(), ExitCode::SUCCESS),
        Err(e) => {
            crate::cli::stderr::say!("error: {}: {e}", a.file.display());
            ExitCode::from(2)
        }
    }
}
