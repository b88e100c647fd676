//! Writing to stderr without panicking: `eprintln!` panics when stderr is closed or full
//! (`2>/dev/full`), so a refusal written there would end in a panic instead of its own exit code.
//! Every line the command line writes to stderr goes through here; a failed write is dropped (there
//! is nowhere left to report it) and the verb ends with the code it was ending with anyway.

use std::io::Write;

/// Write `text` to stderr, its long quoted values clipped ([`crate::error::tidy`]: a 1 MiB flag
/// value is not echoed back whole); a failed write is dropped.
pub fn text(text: &str) {
    let text = tidy_lines(text);
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}

/// Write `line` and a newline to stderr, as [`text`] does; a failed write is dropped.
pub fn line(line: &str) {
    let line = tidy_lines(line);
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(line.as_bytes()).and_then(|()| err.write_all(b"\n"));
}

/// The log's writer (`tracing`'s stderr layer): each event, a whole formatted line, tidied as
/// [`text`] does, so a warning quoting a 100,000-character value does not echo it whole.
pub struct TidyLog;

impl Write for TidyLog {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        text(&String::from_utf8_lossy(buf));
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let _ = std::io::stderr().flush();
        Ok(())
    }
}

/// [`crate::error::tidy`] line by line: a backquote left open on one line never pairs with one
/// on the next.
fn tidy_lines(text: &str) -> String {
    text.split_inclusive('\n').map(crate::error::tidy).collect()
}

/// `eprintln!` that never panics ([`line`]).
macro_rules! say {
    () => {
        $crate::cli::stderr::line("")
    };
    ($($arg:tt)*) => {
        $crate::cli::stderr::line(&format!($($arg)*))
    };
}
/// `eprint!` that never panics ([`text`]).
macro_rules! say_text {
    ($($arg:tt)*) => {
        $crate::cli::stderr::text(&format!($($arg)*))
    };
}
pub(crate) use say;
pub(crate) use say_text;
