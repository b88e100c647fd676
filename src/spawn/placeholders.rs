//! `{frame_id}`-style placeholders a manifest's component configs carry, filled at expansion.

/// Fill `{name}` placeholders in `s` from `vars` (`(name, value)`; a `None` value means the
/// placeholder has no value). Any placeholder not in `vars` is an error naming it; one whose
/// value is `None` is an error too (the caller's message says how to set it).
pub fn fill_placeholders(s: &str, vars: &[(&str, Option<&str>)]) -> Result<String, String> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"\{([^{}]*)\}").expect("static regex"));
    let mut err = None;
    let out = re.replace_all(s, |c: &regex::Captures| {
        let name = &c[1];
        match vars.iter().find(|(k, _)| *k == name) {
            Some((_, Some(v))) => v.to_string(),
            Some((_, None)) => {
                err.get_or_insert(format!("`{{{name}}}` has no value"));
                String::new()
            }
            None => {
                let names: Vec<String> = vars.iter().map(|(k, _)| format!("{{{k}}}")).collect();
                let list = match names.split_last() {
                    Some((last, rest)) if !rest.is_empty() => {
                        format!("{} and {last}", rest.join(", "))
                    }
                    _ => names.join(""),
                };
                err.get_or_insert(format!(
                    "unknown placeholder `{{{name}}}`; a device manifest may use only {list}"
                ));
                String::new()
            }
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(out.into_owned()),
    }
}

/// Fill placeholders in every string of a YAML value (keys untouched), recursively.
pub fn fill_placeholders_value(
    v: &mut serde_norway::Value,
    vars: &[(&str, Option<&str>)],
) -> Result<(), String> {
    use serde_norway::Value;
    match v {
        Value::String(s) => {
            *s = fill_placeholders(s, vars)?;
        }
        Value::Sequence(seq) => {
            for x in seq {
                fill_placeholders_value(x, vars)?;
            }
        }
        Value::Mapping(m) => {
            for (_, x) in m.iter_mut() {
                fill_placeholders_value(x, vars)?;
            }
        }
        Value::Tagged(t) => fill_placeholders_value(&mut t.value, vars)?,
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        let v = [("frame_id", Some("laser")), ("parent_frame", None)];
        assert_eq!(fill_placeholders("{frame_id}", &v).unwrap(), "laser");
        assert!(fill_placeholders("{parent_frame}", &v).unwrap_err().contains("no value"));
        assert!(fill_placeholders("{other}", &v)
            .unwrap_err()
            .contains("unknown placeholder `{other}`"));
    }
}
