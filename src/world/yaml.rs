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
pub const MAX_DOCUMENT_BYTES: u64 = crate::input_file::YAML.cap;
/// Deepest flow (`[...]` / `{...}`) nesting accepted: far deeper than any world writes inline.
pub const MAX_FLOW_DEPTH: usize = 64;

/// Read the document at `path` (`what` names it in the error: "world", "override file"),
/// refusing one larger than [`MAX_DOCUMENT_BYTES`] or not a regular file before reading it
/// ([`crate::input_file`]).
pub fn read_document(path: &Path, what: &str) -> Result<String, String> {
    crate::input_file::read_text(path, what, crate::input_file::YAML)
}

/// The line and column (1-based) of the first place flow nesting exceeds `max`; `None` when it
/// never does. A bracket counts only where YAML opens a flow collection (at the start of a value:
/// after a line's indentation, `: `, `- `, `,`, `?` or another opener), never inside quoted,
/// plain or block scalars, or comments.
fn too_deep(text: &str, max: usize) -> Option<(usize, usize)> {
    let mut depth = 0usize;
    // Indentation of the line that opened a block scalar (`|` / `>`): deeper lines are its text.
    let mut block: Option<usize> = None;
    for (li, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(b) = block {
            if line.trim().is_empty() || indent > b {
                continue;
            }
            block = None;
        }
        let mut quote: Option<char> = None;
        let mut escaped = false;
        let mut prev = ' ';
        let mut at_value_start = true;
        for (ci, ch) in line.chars().enumerate() {
            if let Some(q) = quote {
                if escaped {
                    escaped = false;
                } else if q == '"' && ch == '\\' {
                    escaped = true;
                } else if ch == q {
                    quote = None;
                    at_value_start = false;
                }
                prev = ch;
                continue;
            }
            match ch {
                '#' if prev == ' ' || prev == '\t' || ci == 0 => break,
                '"' | '\'' if at_value_start => quote = Some(ch),
                '[' | '{' if at_value_start => {
                    depth += 1;
                    if depth > max {
                        return Some((li + 1, ci + 1));
                    }
                }
                ']' | '}' if depth > 0 => {
                    depth -= 1;
                    at_value_start = false;
                }
                ' ' | '\t' => {}
                ',' if depth > 0 => at_value_start = true,
                ':' | '-' | '?' => {
                    // `: ` / `- ` / `? ` start a value; inside a word they are plain text.
                    // `key:` always ends a key; `-` / `?` open a value only after a space.
                    at_value_start =
                        ch == ':' || matches!(prev, ' ' | '\t' | '[' | '{' | ',') || ci == 0;
                }
                _ => at_value_start = false,
            }
            prev = ch;
        }
        // A block scalar header (`|`, `>`, with chomping/indent indicators) ends the line.
        let t = line.trim_end();
        let head = t.trim_end_matches(|c: char| c == '+' || c == '-' || c.is_ascii_digit());
        if quote.is_none()
            && depth == 0
            && (head.ends_with(" |")
                || head.ends_with(" >")
                || head == "|"
                || head == ">"
                || head.ends_with(":|")
                || head.ends_with(":>"))
        {
            block = Some(indent);
        }
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
    let text = text.strip_prefix('\u{feff}').unwrap_or(text); // a UTF-8 byte-order mark
    let v = serde_norway::from_str::<Value>(text).map_err(|e| {
        let raw = e.to_string();
        let (line, col) = e.location().map(|l| (l.line(), l.column())).unwrap_or((0, 0));
        let (line, col) = duplicate_key_line(text, &raw)
            .or_else(|| raw.contains("control characters").then(|| control_char_at(text)).flatten())
            .unwrap_or((line, col));
        let at = if line > 0 { format!(" at line {line}, column {col}") } else { String::new() };
        let hint = hint_for(text, &raw, line, col);
        ConfigError::new("", format!("YAML syntax error{at}: {raw}{hint}"))
    })?;
    check_strings(&v, "")?;
    Ok(v)
}

/// Refuse a string (key or value) holding a control character other than tab and line breaks:
/// no name, path or setting has one, and a NUL cannot even reach MuJoCo's C API.
pub fn check_strings(v: &Value, path: &str) -> Result<(), ConfigError> {
    let bad = |s: &str| s.chars().any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'));
    let at = |k: &str| if path.is_empty() { k.to_string() } else { format!("{path}.{k}") };
    match v {
        Value::String(s) if bad(s) => Err(ConfigError::new(
            path,
            format!(
                "the string {:?} holds a control character (a NUL byte?): names, paths and settings are plain text",
                crate::error::clip(s)
            ),
        )),
        Value::Sequence(items) => {
            items.iter().enumerate().try_for_each(|(i, x)| check_strings(x, &format!("{path}[{i}]")))
        }
        Value::Mapping(m) => m.iter().try_for_each(|(k, x)| {
            let key = match k {
                Value::String(s) => s.clone(),
                other => serde_norway::to_string(other).unwrap_or_default().trim().to_string(),
            };
            if bad(&key) {
                return Err(ConfigError::new(
                    path,
                    format!("the key {:?} holds a control character: keys are plain text", crate::error::clip(&key)),
                ));
            }
            check_strings(x, &at(&key))
        }),
        Value::Tagged(t) => check_strings(&t.value, path),
        _ => Ok(()),
    }
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
pub(crate) fn hint_for(text: &str, raw: &str, line: usize, col: usize) -> String {
    let at = text.lines().nth(line.saturating_sub(1)).unwrap_or("");
    let ch = at.chars().nth(col.saturating_sub(1));
    if ch == Some('\t') || (raw.contains("cannot start any token") && at.contains('\t')) {
        "; that is a tab: YAML indents with spaces only".into()
    } else if raw.contains("duplicate entry with key") {
        "; a key may appear once per mapping: merge the two, or remove one".into()
    } else if raw.contains("as u128") || raw.contains("as i128") {
        "; the integer is too large: roqsim's integers (seeds, counts) are at most 18446744073709551615".into()
    } else if raw.contains("recursion limit exceeded") {
        "; the document nests deeper than the parser's 128 levels: no roqsim key nests that deep (an unbalanced `[`, or a runaway indentation?)".into()
    } else if raw.contains("repetition limit exceeded") {
        "; anchors and aliases expand past the parser's limit (an alias bomb?): write the values out".into()
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
        // brackets inside plain, escaped double-quoted and block scalars are text
        assert_eq!(too_deep("name: a[[[[[[", 3), None);
        assert_eq!(too_deep("name: \"a\\\"[[[[[[\"", 3), None);
        assert_eq!(too_deep("name: |\n  [[[[[[\n  [[[[\nb: 1", 3), None);
        assert_eq!(too_deep("name: >-\n  {{{{{{\nb: [[[[x]]]]", 3), Some((3, 7)));
        assert_eq!(too_deep("- [[[[x]]]]", 3), Some((1, 6)));
    }
}
