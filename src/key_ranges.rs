//! A whole-number key given a value past its Rust type (`jpeg_quality: 8193` for a `u8`,
//! `rays: 4294967296` for a `u32`, `octaves: -1`) says the range of its key, not of its type.
//!
//! serde refuses such a value before the config's own range check runs, and its words name the
//! type ("from 0 to 255"). [`key_ranges`] asks the key's check instead: it puts the type's bound
//! nearest the user's value in its place, validates the config, and quotes the check's refusal of
//! that bound with the user's value in it. A key whose check accepts the type's bound has no
//! narrower range, so the type's range is its own and the serde text stands.

use serde::de::DeserializeOwned;
use serde_norway::Value;

use crate::error::ConfigError;
use crate::plugin::{typed_config, ValidateConfig};

/// Deserialize and validate `value` as `C`: every problem, a whole-number key past its type
/// quoting the key's own range ([`key_ranges`]).
pub fn typed_valid<C: DeserializeOwned + ValidateConfig>(
    value: &Value,
) -> Result<C, Vec<ConfigError>> {
    crate::plugin::typed_validated(value)
}

/// `errs` (from deserializing `value` as `C`) with each "must be a whole number from A to B"
/// refusal restated in the words of the key's own range check, where it has a narrower one.
pub fn key_ranges<C: DeserializeOwned + ValidateConfig>(
    value: &Value,
    mut errs: Vec<ConfigError>,
) -> Vec<ConfigError> {
    use std::sync::OnceLock;
    static TYPE_RANGE: OnceLock<regex::Regex> = OnceLock::new();
    let re = TYPE_RANGE.get_or_init(|| {
        regex::Regex::new(
            r"^must be a whole number from (-?\d+) to (\d+), got (?:the integer|the number) (\S+)$",
        )
        .expect("valid pattern")
    });
    // (error index, user's text, the bounds to try in turn)
    let mut hits: Vec<(usize, String, Vec<i128>)> = Vec::new();
    for (i, e) in errs.iter().enumerate() {
        let Some(c) = re.captures(&e.message) else { continue };
        let (Ok(lo), Ok(hi)) = (c[1].parse::<i128>(), c[2].parse::<i128>()) else { continue };
        let user = c[3].to_string();
        let Ok(u) = user.parse::<f64>() else { continue };
        let tries = if u > hi as f64 {
            vec![hi]
        } else if u < lo as f64 {
            vec![lo]
        } else {
            vec![lo, hi] // a fraction inside the type's range: either bound may be outside the key's
        };
        hits.push((i, user, tries));
    }
    for round in 0..2 {
        let mut probe = value.clone();
        let mut live = Vec::new();
        for (i, user, tries) in &hits {
            let Some(&b) = tries.get(round) else { continue };
            let n = if b < 0 { Value::from(b as i64) } else { Value::from(b as u64) };
            if set_at(&mut probe, &errs[*i].path, n) {
                live.push((*i, user.clone(), b));
            }
        }
        if live.is_empty() {
            break;
        }
        let Ok(c) = typed_config::<C>(&probe) else { break };
        let checked = c.validate();
        for (i, user, b) in live {
            let Some(ve) = checked.iter().find(|v| v.path == errs[i].path) else { continue };
            let bound = b.to_string();
            let mut m = ve.message.clone();
            if let Some(at) = m.rfind(&bound) {
                m.replace_range(at..at + bound.len(), &user);
            }
            if user.parse::<f64>().is_ok_and(|u| u.fract() != 0.0) {
                m.push_str(" (not a whole number)");
            }
            errs[i] = ConfigError::new(errs[i].path.clone(), m);
            hits.retain(|h| h.0 != i);
        }
    }
    errs
}

/// Put `v` at `path` (`a.b[2].c`, as serde_path_to_error writes it) inside `doc`; false when
/// the path does not lead to an existing value.
fn set_at(doc: &mut Value, path: &str, v: Value) -> bool {
    let mut at = doc;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (key, idx) = match part.find('[') {
            Some(b) => (&part[..b], &part[b..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            let Value::Mapping(m) = at else { return false };
            let Some(next) = m.get_mut(key) else { return false };
            at = next;
        }
        for i in idx.split(['[', ']']).filter(|s| !s.is_empty()) {
            let (Ok(i), Value::Sequence(s)) = (i.parse::<usize>(), &mut *at) else { return false };
            let Some(next) = s.get_mut(i) else { return false };
            at = next;
        }
    }
    *at = v;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_at_follows_keys_and_indices() {
        let mut d: Value = serde_norway::from_str("{a: {b: [1, {c: 2}]}}").unwrap();
        assert!(set_at(&mut d, "a.b[1].c", Value::from(7u64)));
        assert!(!set_at(&mut d, "a.x", Value::from(7u64)));
        assert_eq!(d, serde_norway::from_str::<Value>("{a: {b: [1, {c: 7}]}}").unwrap());
    }
}
