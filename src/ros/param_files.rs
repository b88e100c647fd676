//! ros2_control parameter files as `spawner --param-file` hands them to a controller manager:
//! the manager is told `<controller>.params_file` (and `<controller>.type`, read from the file by
//! the spawner), and `load_controller` reads the controller's section.
//!
//! A section is found under the keys the spawner itself accepts, in its order: `<controller>`
//! (only when the manager has no namespace), `/<ns>/<controller>`, `/**/<controller>`,
//! `/**/<ns>/<controller>`, or a `/**` block whose `ros__parameters` apply to every node. Its
//! `ros__parameters` must be a mapping.
//!
//! The world is roqsim's parameter file: what a controller commands, its joints and gains are
//! world-authored, so a file may confirm the controller's `type` (a different type refuses the
//! load, naming both) and its other keys are reported as not applied. ROS-free: plain
//! `cargo test` covers it.

use serde_norway::{Mapping, Value};

/// What a parameter file says about one controller.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Section {
    /// The file it came from.
    pub file: String,
    /// The key it was found under.
    pub key: String,
    /// Its `type`, if the file gives one.
    pub type_name: Option<String>,
    /// Every other parameter name it sets, sorted.
    pub others: Vec<String>,
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
    sec.others.sort();
    Ok(Some(sec))
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Mapping(m) => {
            for (k, v) in m {
                if let Some(k) = k.as_str() {
                    flatten(&format!("{prefix}.{k}"), v, out);
                }
            }
        }
        _ => out.push(prefix.to_string()),
    }
}

/// Check what the files given for `controller` say against its declared type. `Ok(notes)`: the
/// load may go ahead (notes: what is not applied, for the log); `Err`: refuse the load.
pub fn check(
    files: &[String],
    controller: &str,
    ns: &str,
    declared_type: &str,
) -> Result<Vec<String>, String> {
    let mut notes = Vec::new();
    for f in files {
        let Some(sec) = section(f, controller, ns)? else {
            notes.push(format!("parameter file `{f}` has no section for `{controller}`"));
            continue;
        };
        if let Some(t) = &sec.type_name {
            if t != declared_type {
                return Err(format!(
                    "parameter file `{f}` gives `{controller}` type `{t}`, but the world declares it as `{declared_type}`: the world is the parameter file here, so fix the type in `{f}` or load the controller the world declares"
                ));
            }
        }
        if !sec.others.is_empty() {
            notes.push(format!(
                "parameters [{}] of `{controller}` in `{f}` are not applied: the world declares the controller (its joints, interfaces and gains are world-authored)",
                sec.others.join(", ")
            ));
        }
    }
    Ok(notes)
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
        assert_eq!(s.others, vec!["constraints.goal_time".to_string(), "joints".to_string()]);
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
    fn type_mismatch_refuses_the_load() {
        let dir = std::env::temp_dir().join(format!("roqsim_pf_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("c.yaml");
        std::fs::write(&f, FILE).unwrap();
        let f = f.to_string_lossy().to_string();
        let notes = check(
            std::slice::from_ref(&f),
            "scaled_joint_trajectory_controller",
            "/ur",
            "joint_trajectory_controller/JointTrajectoryController",
        )
        .unwrap();
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("parameters [constraints.goal_time, joints] of `scaled_joint_trajectory_controller`"), "{}", notes[0]);
        let e =
            check(std::slice::from_ref(&f), "joint_state_broadcaster", "/ur", "x/Y").unwrap_err();
        assert!(e.contains("gives `joint_state_broadcaster` type `joint_state_broadcaster/JointStateBroadcaster`, but the world declares it as `x/Y`"), "{e}");
        let e = check(&["/nonexistent/p.yaml".to_string()], "c", "/ur", "t").unwrap_err();
        assert!(e.starts_with("parameter file `/nonexistent/p.yaml` cannot be read"), "{e}");
    }
}
