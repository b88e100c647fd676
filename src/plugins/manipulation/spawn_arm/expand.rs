//! `spawn_arm`'s manifest expansion (load time, before the world is built).

use serde_norway::Value;

use crate::plugin::{ExpandArgs, Expansion};
use crate::world::expand::{expand_manifest, merge_under};
use crate::world::models::{load_manifest, resolve_model};

/// Config keys [`expand`] reads (a late override of one is refused).
pub const EXPANSION_KEYS: &[&str] = &["model", "prefix", "default_plugins", "end_effector", "rail"];

/// `spawn_arm`'s manifest expansion: the arm manifest's components, with the end effector's
/// manifest merged UNDER them (the arm's keys win; the gripper fills `gripper_*`), its actuator
/// and joint names given the end effector's prefix.
pub fn expand(args: &ExpandArgs) -> Result<Option<Expansion>, String> {
    let Some(mut exp) = expand_manifest(args)? else {
        // No components taken: the end effector's model and manifest are still read at load.
        if let Some(model) =
            args.config.get("end_effector").and_then(|e| e.get("model")).and_then(Value::as_str)
        {
            let asset = resolve_model(model, args.base_dir)
                .map_err(|e| format!("end_effector.model: {e}"))?;
            load_manifest(&asset).map_err(|e| format!("end_effector.model: {e}"))?;
        }
        return Ok(None);
    };
    // A rail's joint leads an explicit joint list: [rail, arm joints...] is model order.
    if let Some(rail) = args.config.get("rail").and_then(Value::as_mapping) {
        let joint = rail.get("joint").and_then(Value::as_str).unwrap_or("rail_joint").to_string();
        for c in &mut exp.components {
            if c.plugin == "arm_controller" {
                if let Some(Value::Sequence(js)) = c.config.get_mut("joints") {
                    if !js.iter().any(|j| j.as_str() == Some(joint.as_str())) {
                        js.insert(0, Value::String(joint.clone()));
                    }
                }
            }
        }
    }
    let ee = args.config.get("end_effector").and_then(Value::as_mapping);
    if let Some(ee) = ee {
        if let Some(model) = ee.get("model").and_then(Value::as_str) {
            let asset = resolve_model(model, args.base_dir)
                .map_err(|e| format!("end_effector.model: {e}"))?;
            let manifest = load_manifest(&asset).map_err(|e| format!("end_effector.model: {e}"))?;
            let pre = ee.get("prefix").and_then(Value::as_str).unwrap_or("").to_string();
            let mut comps = manifest.components;
            for c in &mut comps {
                if c.plugin == "arm_controller" && !pre.is_empty() {
                    for k in ["gripper_actuator", "gripper_joint"] {
                        if let Some(Value::String(s)) = c.config.get_mut(k) {
                            *s = format!("{pre}{s}");
                        }
                    }
                }
            }
            merge_under(&mut exp.components, comps);
        }
    }
    Ok(Some(exp))
}
