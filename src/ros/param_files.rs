//! ros2_control parameter files as `spawner --param-file` hands them to a controller manager:
//! the manager is told `<controller>.params_file` (and `<controller>.type`, read from the file by
//! the spawner), and `load_controller` reads the controller's section.
//!
//! A section is found under the keys the spawner itself accepts, in its order: `<controller>`
//! (only when the manager has no namespace), `/<ns>/<controller>`, `/**/<controller>`,
//! `/**/<ns>/<controller>`, or a `/**` block whose `ros__parameters` apply to every node. Its
//! `ros__parameters` must be a mapping.
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
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("parameter file `{file}` cannot be read: {e}"))?;
    section_of(&text, file, controller, ns)
}

/// [`section`] of a file's text.
pub fn section_of(
    text: &str,
    file: &str,
    controller: &str,
    ns: &str,
) -> Result<Option<Section>, String> {
    let doc: Value = serde_norway::from_str(text)
        .map_err(|e| format!("parameter file `{file}` is not YAML: {e}"))?;
    let Value::Mapping(top) = doc else {
        return Err(format!("parameter file `{file}` is not a mapping of node names"));
    };
    let ns = if ns.is_empty() { "/" } else { ns };
    let namespaced =
        if ns == "/" { format!("/{controller}") } else { format!("{ns}/{controller}") };
    let wild = top.get("/**").and_then(Value::as_mapping);
    let mut candidates: Vec<(String, Option<&Value>)> = Vec::new();
    if ns == "/" {
        candidates.push((controller.to_string(), top.get(controller)));
    }
    candidates.push((namespaced.clone(), top.get(namespaced.as_str())));
    let k = format!("/**/{controller}");
    candidates
        .push((k.clone(), top.get(k.as_str()).or_else(|| wild.and_then(|w| w.get(controller)))));
    let k = format!("/**{namespaced}");
    candidates.push((k.clone(), top.get(k.as_str())));
    let (key, node) = match candidates.into_iter().find(|(_, v)| v.is_some()) {
        Some((k, Some(v))) => (k, v),
        _ => match wild {
            Some(w) if w.contains_key("ros__parameters") => {
                ("/**".to_string(), top.get("/**").expect("present"))
            }
            _ => return Ok(None),
        },
    };
    let params: &Mapping = node
        .as_mapping()
        .and_then(|m| m.get("ros__parameters"))
        .and_then(Value::as_mapping)
        .ok_or_else(|| {
            format!(
                "parameter file `{file}`: `{key}` has no `ros__parameters` mapping; it is not a ROS parameter file for controller {namespaced}"
            )
        })?;
    let mut sec = Section { file: file.to_string(), key, ..Default::default() };
    for (k, v) in params {
        let Some(k) = k.as_str() else { continue };
        if k == "type" {
            sec.type_name = v.as_str().map(str::to_string);
        } else {
            flatten(k, v, &mut sec.others);
        }
    }
    sec.others.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(Some(sec))
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
        assert!(e.contains("has no `ros__parameters` mapping"), "{e}");
        let e = section_of("- a\n", "g.yaml", "x", "/ur").unwrap_err();
        assert_eq!(e, "parameter file `g.yaml` is not a mapping of node names");
    }

    #[test]
    fn values_are_checked_against_the_declared_parameters() {
        let dir = std::env::temp_dir().join(format!("roqsim_pf_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
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
        let dir = std::env::temp_dir().join(format!("roqsim_pf_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("c.yaml");
        std::fs::write(&f, FILE).unwrap();
        let f = f.to_string_lossy().to_string();
        let e = check(std::slice::from_ref(&f), "joint_state_broadcaster", "/ur", "x/Y", &[])
            .unwrap_err();
        assert!(e.contains("gives `joint_state_broadcaster` type `joint_state_broadcaster/JointStateBroadcaster`, but the world declares it as `x/Y`"), "{e}");
        let e = check(&["/nonexistent/p.yaml".to_string()], "c", "/ur", "t", &[]).unwrap_err();
        assert!(e.starts_with("parameter file `/nonexistent/p.yaml` cannot be read"), "{e}");
    }
}
