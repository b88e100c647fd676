//! Overriding a world before it is built: `--set path=value` and `--override file.yaml`.
//!
//! Both forms become a list of leaf assignments (`components.robot.rplidar.lidar.rays = 720`),
//! applied in order (later wins). A path through `components` consumes segments while they name
//! a component, and the first one that does not begins the path into that component's config.
//! Assignments are applied twice: against what the document declares, then again after model
//! manifests have contributed their components; one that matches in neither pass is refused,
//! naming the addresses that do exist.

use std::path::Path;

use serde_norway::{Mapping, Value};

use crate::error::{ConfigError, ConfigErrors};
use crate::world::document::{addresses, walk, Component, Origin, WorldDoc};

/// One leaf assignment.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    /// Dotted path split into segments (`["components", "robot", "lidar", "rays"]`).
    pub path: Vec<String>,
    /// The value (parsed as YAML for `--set`).
    pub value: Value,
    /// Where it came from, for messages (`--set ...` or the override file's path).
    pub source: String,
}

impl Assignment {
    /// The dotted path.
    pub fn dotted(&self) -> String {
        self.path.join(".")
    }
}

/// Parse `path=value` (the value is read as YAML: `720` is a number, `[1, 2]` a list).
pub fn parse_set(arg: &str) -> Result<Assignment, ConfigError> {
    let Some((path, raw)) = arg.split_once('=') else {
        return Err(ConfigError::new(
            arg,
            "--set takes path=value (e.g. --set sim.timestep=0.001)",
        ));
    };
    let path = path.trim();
    if path.is_empty() || path.split('.').any(str::is_empty) {
        return Err(ConfigError::new(path, format!("--set {arg}: the path has an empty segment")));
    }
    let value: Value = if raw.trim().is_empty() {
        Value::Null
    } else {
        serde_norway::from_str(raw).map_err(|e| {
            let (line, col) = e.location().map(|l| (l.line(), l.column())).unwrap_or((0, 0));
            // The same plain-words hint a world file's parse error gets (an integer too large).
            let hint = crate::world::yaml::hint_for(raw, &e.to_string(), line, col);
            ConfigError::new(
                path,
                format!("--set value `{}` is not valid YAML: {e}{hint}", crate::error::clip(raw)),
            )
        })?
    };
    crate::world::yaml::check_strings(&value, path)?;
    Ok(Assignment {
        path: path.split('.').map(str::to_string).collect(),
        value,
        source: format!("--set {arg}"),
    })
}

/// Read an override document (the same nested shape as a world) into leaf assignments.
pub fn load_override_file(path: &Path) -> Result<Vec<Assignment>, ConfigError> {
    let text = crate::world::yaml::read_document(path, "override file")
        .map_err(|m| ConfigError::new("", format!("--override {}: {m}", path.display())))?;
    let v: Value = crate::world::yaml::parse_yaml(&text).map_err(|e| {
        ConfigError::new("", format!("--override {}: {}", path.display(), e.message))
    })?;
    let mut out = Vec::new();
    let src = format!("--override {}", path.display());
    match v {
        Value::Mapping(m) => flatten(&m, &mut Vec::new(), &src, &mut out),
        Value::Null => {}
        _ => {
            return Err(ConfigError::new(
                "",
                format!("{src}: must be a mapping like the world document"),
            ))
        }
    }
    Ok(out)
}

fn flatten(m: &Mapping, prefix: &mut Vec<String>, src: &str, out: &mut Vec<Assignment>) {
    for (k, v) in m {
        let key = match k {
            Value::String(s) => s.clone(),
            other => serde_norway::to_string(other).unwrap_or_default().trim().to_string(),
        };
        let n = prefix.len();
        prefix.extend(key.split('.').map(str::to_string));
        match v {
            Value::Mapping(inner) if !inner.is_empty() => flatten(inner, prefix, src, out),
            _ => out.push(Assignment {
                path: prefix.clone(),
                value: v.clone(),
                source: src.to_string(),
            }),
        }
        prefix.truncate(n);
    }
}

/// Set `value` at `path` inside `map`, creating intermediate mappings.
pub fn set_in(map: &mut Mapping, path: &[String], value: Value) -> Result<(), String> {
    let (first, rest) = path.split_first().expect("non-empty path");
    let key = Value::String(first.clone());
    if rest.is_empty() {
        map.insert(key, value);
        return Ok(());
    }
    let entry = map.entry(key).or_insert_with(|| Value::Mapping(Mapping::new()));
    if entry.is_null() {
        *entry = Value::Mapping(Mapping::new());
    }
    match entry {
        Value::Mapping(inner) => set_in(inner, rest, value),
        _ => Err(format!(
            "`{first}` holds a value, not a mapping; cannot set `{}` inside it",
            rest.join(".")
        )),
    }
}

/// Outcome of applying one assignment to the component tree.
enum Hit {
    Applied,
    NoMatch,
    Refused(String),
}

/// Plugin refs and the config keys their `expand` reads (for the late-override refusal).
pub type ExpansionKeys<'a> = &'a dyn Fn(&str) -> &'static [&'static str];

fn apply_components(
    list: &mut [Component],
    segs: &[String],
    value: &Value,
    late: Option<ExpansionKeys>,
    parent: &str,
) -> Hit {
    let Some((first, rest)) = segs.split_first() else { return Hit::NoMatch };
    let Some(c) = list.iter_mut().find(|c| c.label() == first) else { return Hit::NoMatch };
    let addr = if parent.is_empty() { first.clone() } else { format!("{parent}.{first}") };
    if rest.is_empty() {
        return Hit::Refused(format!(
            "`{addr}` names a component, not one of its keys; add the key (e.g. {addr}.<key>=...)"
        ));
    }
    if c.components.iter().any(|n| n.label() == rest[0]) {
        return apply_components(&mut c.components, rest, value, late, &addr);
    }
    match rest[0].as_str() {
        "enabled" if rest.len() == 1 => match value {
            Value::Bool(b) => {
                c.enabled = Some(*b);
                return Hit::Applied;
            }
            _ => return Hit::Refused("`enabled` takes true or false".into()),
        },
        "name" | "components" => {
            return Hit::Refused(format!(
                "`{}` is a reserved sibling of the entry, not settable by an override",
                rest[0]
            ))
        }
        _ => {}
    }
    // Pass 1: a nested path whose head is neither a component nor an existing config key may
    // name a component a manifest has yet to contribute (`robot.rplidar.lidar.rays`): defer it
    // to pass 2 rather than creating `rplidar:` inside the robot's config.
    if late.is_none() && rest.len() > 1 && !c.config.contains_key(rest[0].as_str()) {
        return Hit::NoMatch;
    }
    if let Some(keys) = late {
        if c.origin == Origin::Manifest && c.expanded && keys(&c.plugin).contains(&rest[0].as_str())
        {
            return Hit::Refused(format!(
                "`{}` is read when `{addr}` expands its model's manifest, which happened before this override could \
                 reach it (`{addr}` comes from a manifest). Declare `{addr}` in the world, nested under its carrier, \
                 with `{}:` set there",
                rest[0], rest[0]
            ));
        }
    }
    match set_in(&mut c.config, rest, value.clone()) {
        Ok(()) => Hit::Applied,
        Err(e) => Hit::Refused(e),
    }
}

/// Apply assignments to `doc`. Returns the assignments that matched nothing (to retry after
/// expansion), and records refusals in `errors`. `late` is given on the second pass.
pub fn apply(
    doc: &mut WorldDoc,
    assigns: &[Assignment],
    late: Option<ExpansionKeys>,
    errors: &mut ConfigErrors,
) -> Vec<Assignment> {
    let mut deferred = Vec::new();
    for a in assigns {
        let Some((head, rest)) = a.path.split_first() else { continue };
        match head.as_str() {
            "sim" if !rest.is_empty() => {
                if let Err(e) = set_in(&mut doc.sim, rest, a.value.clone()) {
                    errors.push(a.dotted(), format!("{e} ({})", a.source));
                }
            }
            "components" if !rest.is_empty() => {
                match apply_components(&mut doc.components, rest, &a.value, late, "") {
                    Hit::Applied => {}
                    Hit::NoMatch => deferred.push(a.clone()),
                    Hit::Refused(msg) => errors.push(a.dotted(), format!("{msg} ({})", a.source)),
                }
            }
            _ => errors.push(
                a.dotted(),
                format!(
                    "an override path starts with `sim.` or `components.<address>.` ({})",
                    a.source
                ),
            ),
        }
    }
    deferred
}

/// Refuse assignments that matched in neither pass, naming what the document does have.
pub fn refuse_unmatched(doc: &WorldDoc, unmatched: &[Assignment], errors: &mut ConfigErrors) {
    if unmatched.is_empty() {
        return;
    }
    let all = addresses(&doc.components);
    let mut tree = Vec::new();
    walk(&doc.components, None, &mut tree);
    for a in unmatched {
        let wanted: Vec<&str> = a.path[1..].iter().map(String::as_str).collect();
        // Components whose label or plugin ref is named anywhere in the path.
        let mut near: Vec<String> = tree
            .iter()
            .filter(|(_, _, c)| wanted.contains(&c.label()) || wanted.contains(&c.plugin.as_str()))
            .map(|(addr, _, _)| addr.clone())
            .collect();
        near.dedup();
        let hint = if !near.is_empty() {
            format!(
                "did you mean {}?",
                near.iter().map(|n| format!("components.{n}")).collect::<Vec<_>>().join(" or ")
            )
        } else if all.is_empty() {
            "the world has no components".to_string()
        } else {
            format!("the addresses that exist are: {}", all.join(", "))
        };
        errors.push(
            a.dotted(),
            format!("matches no component; {hint} ({})", crate::error::clip(&a.source)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_parses_yaml_values() {
        let a = parse_set("components.robot.lidar.rays=720").unwrap();
        assert_eq!(a.path, vec!["components", "robot", "lidar", "rays"]);
        assert_eq!(a.value, Value::Number(720.into()));
        let b = parse_set("sim.gravity=[0, 0, 0]").unwrap();
        assert!(matches!(b.value, Value::Sequence(ref s) if s.len() == 3));
        assert!(parse_set("sim.timestep").unwrap_err().message.contains("path=value"));
    }
}
