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
        let raw = e.to_string();
        let (line, col) = e.location().map(|l| (l.line(), l.column())).unwrap_or((0, 0));
        let (line, col) = duplicate_key_line(text, &raw)
            .or_else(|| raw.contains("control characters").then(|| control_char_at(text)).flatten())
            .unwrap_or((line, col));
        let at = if line > 0 { format!(" at line {line}, column {col}") } else { String::new() };
        let hint = hint_for(text, &raw, line, col);
        ConfigError::new("", format!("YAML syntax error{at}: {raw}{hint}"))
    })
}

/// The parser reports a duplicate key at the start of its mapping; find the line of the second
/// occurrence instead (the key at the same indentation as its first).
fn duplicate_key_line(text: &str, raw: &str) -> Option<(usize, usize)> {
    let key = raw.split("duplicate entry with key \"").nth(1)?.split('"').next()?;
    let mut first_indent = None;
    for (i, l) in text.lines().enumerate() {
        let body = l.trim_start_matches([' ', '-']);
        let indent = l.len() - body.len();
        if body.strip_prefix(key).is_some_and(|r| r.trim_start().starts_with(':')) {
            match first_indent {
                None => first_indent = Some(indent),
                Some(f) if f == indent => return Some((i + 1, indent + 1)),
                Some(_) => {}
            }
        }
    }
    None
}

/// Line and column (1-based) of the first control character (other than tab and line breaks).
fn control_char_at(text: &str) -> Option<(usize, usize)> {
    for (i, l) in text.split('\n').enumerate() {
        if let Some(c) = l
            .chars()
            .position(|c| (c.is_control() && !matches!(c, '\t' | '\r')) || c == '\u{feff}' && i > 0)
        {
            return Some((i + 1, c + 1));
        }
    }
    None
}

/// A plain-words hint for the parser errors people meet most.
fn hint_for(text: &str, raw: &str, line: usize, col: usize) -> String {
    let at = text.lines().nth(line.saturating_sub(1)).unwrap_or("");
    let ch = at.chars().nth(col.saturating_sub(1));
    if ch == Some('\t') || (raw.contains("cannot start any token") && at.contains('\t')) {
        "; that is a tab: YAML indents with spaces only".into()
    } else if raw.contains("duplicate entry with key") {
        "; a key may appear once per mapping: merge the two, or remove one".into()
    } else if raw.contains("as u128") || raw.contains("as i128") {
        "; the integer is too large: roqsim's integers (seeds, counts) are at most 18446744073709551615".into()
    } else if raw.contains("did not find expected")
        || raw.contains("mapping values are not allowed")
    {
        format!(
            "; check the indentation of line {line}: the keys of one mapping line up, and a list item's keys line up after its `- `"
        )
    } else if raw.contains("control characters are not allowed") || text.contains('\0') {
        "; the file holds a control character (a NUL byte?): it is not a text file".into()
    } else {
        String::new()
    }
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
