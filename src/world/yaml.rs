//! Reading and parsing a YAML document under fixed limits, so no file can make the loader spin or
//! swell: the size is checked before the file is read, flow nesting before it is parsed (the YAML
//! parser's own recursion limit only fires after a cost that grows with the square of the depth),
//! and a syntax error names its line and column.

use std::path::Path;

use serde_norway::Value;

use crate::error::ConfigError;

/// Largest YAML document accepted (bytes). A world, an override file or a manifest is a few
/// kilobytes; 8 MiB leaves room for generated worlds while bounding the parse to well under a
/// second and a few hundred MB.
pub const MAX_DOCUMENT_BYTES: u64 = 8 << 20;
/// Deepest flow (`[...]` / `{...}`) nesting accepted. The deepest key path roqsim reads is 6.
pub const MAX_FLOW_DEPTH: usize = 64;

/// Read the document at `path` (`what` names it in the error: "world", "override file"),
/// refusing one larger than [`MAX_DOCUMENT_BYTES`] before reading it.
pub fn read_document(path: &Path, what: &str) -> Result<String, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {what} `{shown}`: {e}"))?;
    if meta.is_dir() {
        return Err(format!("{what} `{shown}` is a directory: name a YAML file in it"));
    }
    if meta.len() > MAX_DOCUMENT_BYTES {
        return Err(format!(
            "{what} `{shown}` is {} bytes; a YAML document may be at most {MAX_DOCUMENT_BYTES} bytes (8 MiB)",
            meta.len()
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {what} `{shown}`: {e}"))
}

/// The line and column (1-based) of the first place flow nesting exceeds `max`, ignoring quoted
/// scalars and comments; `None` when it never does.
fn too_deep(text: &str, max: usize) -> Option<(usize, usize)> {
    let (mut depth, mut line, mut col) = (0usize, 1usize, 0usize);
    let mut quote: Option<char> = None;
    let mut comment = false;
    let mut prev = '\n';
    for ch in text.chars() {
        col += 1;
        if ch == '\n' {
            line += 1;
            col = 0;
            comment = false;
            prev = ch;
            continue;
        }
        if comment {
            continue;
        }
        match quote {
            Some(q) => {
                if ch == q {
                    quote = None;
                }
            }
            None => match ch {
                '"' | '\'' => quote = Some(ch),
                '#' if prev == ' ' || prev == '\t' || prev == '\n' => comment = true,
                '[' | '{' => {
                    depth += 1;
                    if depth > max {
                        return Some((line, col));
                    }
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
        prev = ch;
    }
    None
}

/// Parse YAML text, reporting a syntax error with its line and column; a document over
/// [`MAX_DOCUMENT_BYTES`] or nested deeper than [`MAX_FLOW_DEPTH`] is refused before parsing.
pub fn parse_yaml(text: &str) -> Result<Value, ConfigError> {
    if text.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(ConfigError::new(
            "",
            format!(
                "the document is {} bytes; a YAML document may be at most {MAX_DOCUMENT_BYTES} bytes (8 MiB)",
                text.len()
            ),
        ));
    }
    if let Some((line, col)) = too_deep(text, MAX_FLOW_DEPTH) {
        return Err(ConfigError::new(
            "",
            format!(
                "YAML nesting deeper than {MAX_FLOW_DEPTH} levels at line {line}, column {col}: no roqsim key nests that deep; \
                 look for unbalanced `[` or `{{`"
            ),
        ));
    }
    serde_norway::from_str::<Value>(text).map_err(|e| {
        let at = e
            .location()
            .map(|l| format!(" at line {}, column {}", l.line(), l.column()))
            .unwrap_or_default();
        ConfigError::new("", format!("YAML syntax error{at}: {e}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_ignores_quotes_and_comments() {
        assert_eq!(too_deep("a: [[[1]]]", 3), None);
        assert_eq!(too_deep("a: [[[[1]]]]", 3), Some((1, 7)));
        assert_eq!(too_deep("a: '[[[[' # [[[[\nb: \"{{{{\"", 3), None);
        assert_eq!(too_deep("a: 1\nb: {c: [[[x]]]}", 3), Some((2, 10)));
    }
}
