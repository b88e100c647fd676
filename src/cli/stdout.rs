//! Writing a verb's answer to stdout without panicking: `println!` panics when stdout is closed
//! (`roqsim ... | true`) or full (`> /dev/full`). A closed pipe means the reader has gone, so the
//! process ends quietly with 141 (128 + SIGPIPE, what a shell reports for a Unix tool killed by
//! it); any other failure (a full disk) is reported on stderr with exit 1.

use std::io::Write;
use std::process::ExitCode;

/// Exit status of a verb whose reader closed the pipe.
pub const BROKEN_PIPE_EXIT: u8 = 141;

/// Write `line` and a newline to stdout and flush; `Err` is the exit code to end with.
pub fn emit(line: &str) -> Result<(), ExitCode> {
    emit_text(&format!("{line}\n"))
}

/// Write `text` to stdout as is and flush ([`emit`] without the added newline).
pub fn emit_text(text: &str) -> Result<(), ExitCode> {
    let mut out = std::io::stdout().lock();
    let r = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    match r {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            Err(ExitCode::from(BROKEN_PIPE_EXIT))
        }
        Err(e) => {
            crate::cli::stderr::say!("error: cannot write the answer to stdout: {e}");
            Err(ExitCode::from(1))
        }
    }
}

/// [`emit`], then `then` when it was written.
pub fn emit_then(line: &str, then: ExitCode) -> ExitCode {
    match emit(line) {
        Ok(()) => then,
        Err(code) => code,
    }
}

/// A JSON value on one line ([`emit`]).
pub fn emit_json(v: &serde_json::Value) -> Result<(), ExitCode> {
    emit(&serde_json::to_string(v).unwrap_or_else(|_| "null".into()))
}
