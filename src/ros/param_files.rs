//! ros2_control parameter files as `spawner --param-file` hands them to a controller manager:
//! the manager is told `<controller>.params_file` (and `<controller>.type`, read from the file by
//! the spawner), and `load_controller` reads the controller's section.
//!
//! A controller's values are those of every section whose node name matches its node
//! `/<ns>/<controller>` by rclcpp's rules (a leading `/` added, `/*` one name token, `/**` any
//! number of them: `/ur/jtc`, `/*/jtc`, `/**/jtc`, `/**`, `jtc` for a manager without namespace),
//! merged in file order. A file rcl cannot parse (not YAML, no `ros__parameters` mapping under a
//! node name) fails the load with rcl's words, as ros2_control's manager fails it when the
//! controller's node cannot be created.
//!
//! The world declares which controllers exist and their types, so a file may confirm the
//! controller's `type` (a different type refuses the load, naming both). Its other keys become the
//! controller node's parameter overrides, as ros2_control hands the files to the controller's node
//! at load: each is checked against the parameters the controller declares
//! ([`ParamSpec::accept`]: a value the simulator cannot honour refuses the load, naming the
//! parameter, the file and the reason); a key the controller does not declare is reported (rclcpp
//! ignores overrides of undeclared parameters, and so does the simulator, but says so). Files
//! given later override earlier ones, as rcl applies them. ROS-free: plain `cargo test` covers it.

use serde_norway::{Mapping, Value};

use crate::handles::controller_params::{ParamSpec, ParamValue};

/// What a parameter file says about one controller.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Section {
    /// The file it came from.
    pub file: String,
    /// The key it was found under.
    pub key: String,
    /// Its `type`, if the file gives one.
    pub type_name: Option<String>,
    /// Every other parameter it sets (flattened dotted names), sorted by name.
    pub others: Vec<(String, Value)>,
}

/// The section of `controller` in `file` for a manager in namespace `ns` (`/` or `/robot`).
/// `Ok(None)`: the file has none; `Err`: unreadable, not YAML, or not a ROS parameter file.
pub fn section(file: &str, controller: &str, ns: &str) -> Result<Option<Section>, String> {
    let text = crate::input_file::read_text(
        std::path::Path::new(file),
        "parameter file",
        crate::input_file::YAML,
    )?;
    section_of(&text, file, controller, ns)
}

/// What rcl answers when a `--params-file` cannot be parsed, as ros2_control's manager logs it
/// when the controller's node cannot be created (the load fails).
fn unparsable(file: &str, controller: &str, why: &str) -> String {
    format!(
        "Caught exception of type : rclcpp::exceptions::RCLInvalidROSArgsError while initializing controller '{controller}': failed to parse arguments: Couldn't parse params file: '--params-file {file}'. Error: {why}"
    )
}

/// The node-name sections of a parameter file as rcl's YAML parser reads them, in file order:
/// the keys down to a `ros__parameters` mapping joined with `/`, with a leading `/` (rclcpp).
fn node_sections<'a>(
    prefix: &str,
    m: &'a Mapping,
    out: &mut Vec<(String, &'a Mapping)>,
) -> Result<(), String> {
    for (k, v) in m {
        let Some(k) = k.as_str() else {
            return Err(format!("a node name is not a string ({k:?})"));
        };
        if k == "ros__parameters" {
            if prefix.is_empty() {
                return Err("`ros__parameters` at the top level names no node".into());
            }
            let Value::Mapping(p) = v else {
                return Err(format!("`{prefix}`'s `ros__parameters` is not a mapping"));
            };
            out.push((prefix.to_string(), p));
            continue;
        }
        let name = if prefix.is_empty() { k.to_string() } else { format!("{prefix}/{k}") };
        match v {
            Value::Mapping(inner) => node_sections(&name, inner, out)?,
            _ => return Err(format!("`{name}` has no `ros__parameters` mapping")),
        }
    }
    Ok(())
}

/// rclcpp's node-name match of a parameter file's section: the name with a leading `/`, every
/// `/*` made `(/\w+)` (so `/*` is one name token and `/**` any number, none included), the whole
/// node name matched. `Err`: the name is not a valid pattern (rclcpp's regex throws).
pub fn node_name_matches(section: &str, fqn: &str) -> Result<bool, String> {
    let name = if section.starts_with('/') { section.to_string() } else { format!("/{section}") };
    let mut rx = String::from("^(?:");
    let mut rest = name.as_str();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("/*") {
            rx += "(/[A-Za-z0-9_]+)";
            rest = r;
        } else {
            let c = rest.chars().next().expect("not empty");
            // A `*` left over (the second of `/**`) is a repetition, as in rclcpp's regex.
            if c == '*' {
                rx.push('*');
            } else {
                rx += &regex::escape(&c.to_string());
            }
            rest = &rest[c.len_utf8()..];
        }
    }
    rx += ")$";
    let re = regex::Regex::new(&rx)
        .map_err(|e| format!("node name `{section}` is not a valid pattern: {e}"))?;
    Ok(re.is_match(fqn))
}

/// [`section`] of a file's text: every section whose node name matches the controller's node
/// (`/<ns>/<controller>`) by rclcpp's rules ([`node_name_matches`]), merged in file order (a
/// later section's value replaces an earlier one's, as rclcpp applies them).
pub fn section_of(
    text: &str,
    file: &str,
    controller: &str,
    ns: &str,
) -> Result<Option<Section>, String> {
    let doc: Value =
        serde_norway::from_str(text).map_err(|e| unparsable(file, controller, &e.to_string()))?;
    let Value::Mapping(top) = doc else {
        return Err(unparsable(file, controller, "the file is not a mapping of node names"));
    };
    let ns = if ns.is_empty() { "/" } else { ns };
    let fqn = if ns == "/" { format!("/{controller}") } else { format!("{ns}/{controller}") };
    let mut sections = Vec::new();
    node_sections("", &top, &mut sections).map_err(|e| unparsable(file, controller, &e))?;
    let mut keys = Vec::new();
    let mut type_name = None;
    let mut others: Vec<(String, Value)> = Vec::new();
    for (name, params) in sections {
        if !node_name_matches(&name, &fqn).map_err(|e| unparsable(file, controller, &e))? {
            continue;
        }
        keys.push(name);
        for (k, v) in params {
            let Some(k) = k.as_str() else { continue };
            if k == "type" {
                type_name = v.as_str().map(str::to_string);
            } else {
                let mut flat = Vec::new();
                flatten(k, v, &mut flat);
                for (k, v) in flat {
                    others.retain(|(n, _)| n != &k);
                    others.push((k, v));
                }
            }
        }
    }
    if keys.is_empty() {
        return Ok(None);
    }
    others.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Some(Section { file: file.to_string(), key: keys.join(", "), type_name, others }))
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Mapping(m) => {
            for (k, v) in m {
                if let Some(k) = k.as_str() {
                    flatten(&format!("{prefix}.{k}"), v, out);
                }
            }
        }
        _ => out.push((prefix.to_string(), v.clone())),
    }
}

/// A YAML value as a parameter value (what rcl's YAML parser makes of it); `None`: a type no
/// controller parameter here takes (null, number arrays, mixed arrays).
pub fn param_value(v: &Value) -> Option<ParamValue> {
    Some(match v {
        Value::Bool(b) => ParamValue::Bool(*b),
        Value::Number(n) if n.is_i64() => ParamValue::Int(n.as_i64()?),
        Value::Number(n) => ParamValue::Double(n.as_f64()?),
        Value::String(s) => ParamValue::Str(s.clone()),
        Value::Sequence(items) => ParamValue::Strings(
            items.iter().map(|i| i.as_str().map(str::to_string)).collect::<Option<Vec<_>>>()?,
        ),
        _ => return None,
    })
}

/// What the files say for one controller: the overrides its node gets at load, and notes for the
/// log (keys the controller does not declare, files without a section).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Checked {
    /// `(parameter, value)` overrides, each accepted by its [`ParamSpec`], in name order; a later
    /// file's value replaces an earlier one's.
    pub overrides: Vec<(String, ParamValue)>,
    /// Warnings for the log.
    pub notes: Vec<String>,
}

/// Check what the files given for `controller` say against its declared type and parameters.
/// `Err`: refuse the load (a file unreadable, another type, a value the simulator cannot honour).
pub fn check(
    files: &[String],
    controller: &str,
    ns: &str,
    declared_type: &str,
    declared: &[ParamSpec],
) -> Result<Checked, String> {
    let mut out = Checked::default();
    for f in files {
        let Some(sec) = section(f, controller, ns)? else {
            out.notes.push(format!("parameter file `{f}` has no section for `{controller}`"));
            continue;
        };
        if let Some(t) = &sec.type_name {
            if t != declared_type {
                return Err(format!(
                    "parameter file `{f}` gives `{controller}` type `{t}`, but the world declares it as `{declared_type}`: the world is the parameter file here, so fix the type in `{f}` or load the controller the world declares"
                ));
            }
        }
        let mut unknown = Vec::new();
        for (k, v) in &sec.others {
            // Read by the spawner and the manager, not by the controller's node.
            if k == "fallback_controllers" {
                continue;
            }
            let Some(spec) = declared.iter().find(|p| &p.name == k) else {
                unknown.push(k.clone());
                continue;
            };
            let value = param_value(v).ok_or_else(|| {
                format!("parameter file `{f}`: `{controller}`'s `{k}` has a value no parameter takes here ({v:?})")
            })?;
            let value = spec
                .accept(value)
                .map_err(|e| format!("parameter file `{f}`, controller `{controller}`: {e}"))?;
            out.overrides.retain(|(n, _)| n != k);
            out.overrides.push((k.clone(), value));
        }
        if !unknown.is_empty() {
            out.notes.push(format!(
                "parameters [{}] of `{controller}` in `{f}` are not parameters of `{declared_type}` as roqsim models it and are ignored (rclcpp ignores overrides of undeclared parameters); `ros2 param list` on the controller's node shows those it has",
                unknown.join(", ")
            ));
        }
    }
    out.overrides.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "controller_manager:
  ros__parameters:
    update_rate: 500
/ur/scaled_joint_trajectory_controller:
  ros__parameters:
    type: joint_trajectory_controller/JointTrajectoryController
    joints: [a, b]
    constraints:
      goal_time: 1.0
/**/joint_state_broadcaster:
  ros__parameters:
    type: joint_state_broadcaster/JointStateBroadcaster
";

    #[test]
    fn sections_by_the_spawners_keys() {
        let s = section_of(FILE, "f.yaml", "scaled_joint_trajectory_controller", "/ur")
            .unwrap()
            .unwrap();
        assert_eq!(s.key, "/ur/scaled_joint_trajectory_controller");
        assert_eq!(
            s.type_name.as_deref(),
            Some("joint_trajectory_controller/JointTrajectoryController")
        );
        let names: Vec<&str> = s.others.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, vec!["constraints.goal_time", "joints"]);
        let s = section_of(FILE, "f.yaml", "joint_state_broadcaster", "/ur").unwrap().unwrap();
        assert_eq!(s.key, "/**/joint_state_broadcaster");
        assert!(s.others.is_empty());
        // Not namespaced for a namespaced manager: not found (the spawner refuses it too).
        assert_eq!(
            section_of(FILE, "f.yaml", "scaled_joint_trajectory_controller", "/").unwrap(),
            None
        );
        let e = section_of("/ur/x: 3\n", "g.yaml", "x", "/ur").unwrap_err();
        assert_eq!(e, "Caught exception of type : rclcpp::exceptions::RCLInvalidROSArgsError while initializing controller 'x': failed to parse arguments: Couldn't parse params file: '--params-file g.yaml'. Error: `/ur/x` has no `ros__parameters` mapping");
        let e = section_of("- a\n", "g.yaml", "x", "/ur").unwrap_err();
        assert!(
            e.ends_with("'--params-file g.yaml'. Error: the file is not a mapping of node names"),
            "{e}"
        );
        let e =
            section_of("/ur/x:\n  ros__parameters: {a: [1,\n", "g.yaml", "x", "/ur").unwrap_err();
        assert!(
            e.starts_with("Caught exception of type : rclcpp::exceptions::RCLInvalidROSArgsError while initializing controller 'x': failed to parse arguments: Couldn't parse params file: '--params-file g.yaml'. Error: "),
            "{e}"
        );
    }

    #[test]
    fn node_names_match_by_rclcpps_wildcard_rules() {
        let m = |p: &str, f: &str| node_name_matches(p, f).unwrap();
        assert!(m("/*/jtc", "/ur/jtc"));
        assert!(!m("/*/jtc", "/jtc"), "`/*` is exactly one token");
        assert!(!m("/*/jtc", "/a/b/jtc"));
        assert!(m("/**/jtc", "/jtc") && m("/**/jtc", "/a/b/jtc"), "`/**` is any number");
        assert!(m("/**", "/ur/jtc") && m("/ur/*", "/ur/jtc") && !m("/ur/*", "/ur/a/jtc"));
        assert!(m("jtc", "/jtc") && !m("jtc", "/ur/jtc"), "a leading `/` is added");
        assert!(m("/ur/**", "/ur/jtc") && !m("/ur/**", "/left/jtc"));
        assert!(!m("/ur/jt", "/ur/jtc") && !m("/ur.x/jtc", "/urax/jtc"), "whole name, literal");
        // Every matching section applies, in file order: later values replace earlier ones.
        let f = "/**:\n  ros__parameters:\n    a: 1\n    b: 1\n/*/jtc:\n  ros__parameters:\n    b: 2\n    c: 2\n/**/jtc:\n  ros__parameters:\n    c: 3\n/*/other:\n  ros__parameters:\n    a: 9\n/*/*/jtc:\n  ros__parameters:\n    a: 9\n";
        let s = section_of(f, "f.yaml", "jtc", "/ur").unwrap().unwrap();
        assert_eq!(s.key, "/**, /*/jtc, /**/jtc");
        let vals: Vec<(String, i64)> =
            s.others.iter().map(|(k, v)| (k.clone(), v.as_i64().unwrap())).collect();
        assert_eq!(vals, vec![("a".into(), 1), ("b".into(), 2), ("c".into(), 3)]);
        // Nested node names join with `/` as rcl reads them.
        let f = "ur:\n  jtc:\n    ros__parameters:\n      type: t/T\n";
        let s = section_of(f, "f.yaml", "jtc", "/ur").unwrap().unwrap();
        assert_eq!((s.key.as_str(), s.type_name.as_deref()), ("ur/jtc", Some("t/T")));
        // `/*/jtc` names no controller of a manager without namespace.
        assert_eq!(
            section_of("/*/jtc:\n  ros__parameters: {a: 1}\n", "f.yaml", "jtc", "/").unwrap(),
            None
        );
    }

    #[test]
    fn values_are_checked_against_the_declared_parameters() {
        // A folder of its own: the tests run in parallel threads of one process.
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let f = dir.join("c.yaml");
        std::fs::write(&f, FILE).unwrap();
        let f = f.to_string_lossy().to_string();
        let declared = vec![
            ParamSpec::fixed(
                "joints",
                ParamValue::Strings(vec!["a".into(), "b".into()]),
                true,
                "the world's joints",
            ),
            ParamSpec::applied("constraints.goal_time", ParamValue::Double(0.5), false, "s")
                .min(0.0),
        ];
        let c = check(
            std::slice::from_ref(&f),
            "scaled_joint_trajectory_controller",
            "/ur",
            "joint_trajectory_controller/JointTrajectoryController",
            &declared,
        )
        .unwrap();
        assert_eq!(
            c.overrides,
            vec![
                ("constraints.goal_time".to_string(), ParamValue::Double(1.0)),
                ("joints".to_string(), ParamValue::Strings(vec!["a".into(), "b".into()])),
            ]
        );
        assert!(c.notes.is_empty(), "{:?}", c.notes);
        // Only the goal time declared: `joints` is reported as ignored.
        let c = check(
            std::slice::from_ref(&f),
            "scaled_joint_trajectory_controller",
            "/ur",
            "joint_trajectory_controller/JointTrajectoryController",
            &declared[1..],
        )
        .unwrap();
        assert_eq!(c.notes.len(), 1);
        assert!(
            c.notes[0].starts_with("parameters [joints] of `scaled_joint_trajectory_controller`"),
            "{}",
            c.notes[0]
        );
        // Another joint list: the load is refused naming the parameter.
        let g = dir.join("d.yaml");
        std::fs::write(&g, FILE.replace("joints: [a, b]", "joints: [a, c]")).unwrap();
        let e = check(
            &[g.to_string_lossy().to_string()],
            "scaled_joint_trajectory_controller",
            "/ur",
            "joint_trajectory_controller/JointTrajectoryController",
            &declared,
        )
        .unwrap_err();
        assert!(e.ends_with("controller `scaled_joint_trajectory_controller`: `joints` = [a, c] is not supported: the world's joints (the simulator's value is [a, b])"), "{e}");
    }

    #[test]
    fn type_mismatch_refuses_the_load() {
        // A folder of its own: the tests run in parallel threads of one process.
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let f = dir.join("c.yaml");
        std::fs::write(&f, FILE).unwrap();
        let f = f.to_string_lossy().to_string();
        let e = check(std::slice::from_ref(&f), "joint_state_broadcaster", "/ur", "x/Y", &[])
            .unwrap_err();
        assert!(e.contains("gives `joint_state_broadcaster` type `joint_state_broadcaster/JointStateBroadcaster`, but the world declares it as `x/Y`"), "{e}");
        let e = check(&["/nonexistent/p.yaml".to_string()], "c", "/ur", "t", &[]).unwrap_err();
        assert!(e.starts_with("cannot read parameter file `/nonexistent/p.yaml`: "), "{e}");
    }
}
