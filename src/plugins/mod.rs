//! The built-in plugin registry: short name → descriptor (constructor, schema, flags).

pub mod assets;
pub mod core;
pub mod dummy;
pub mod faults;
pub mod manipulation;
pub mod mobile;
pub mod observe;
pub mod scene;
pub mod sensors;

use crate::plugin::{PluginDescriptor, PluginFlags};
use crate::plugin_descriptor;

/// Every built-in plugin, in catalogue order.
pub fn registry() -> &'static [PluginDescriptor] {
    static REGISTRY: std::sync::OnceLock<Vec<PluginDescriptor>> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(|| {
        #[allow(unused_mut)]
        let mut v = vec![plugin_descriptor!(
            "dummy",
            "Trivial plugin implementing every hook; adds one free box (framework validation).",
            dummy::DummyConfig,
            dummy::Dummy,
            PluginFlags { parallel_safe: true, ..Default::default() }
        )];
        v.push(plugin_descriptor!("spawn_robot", "Attach a robot model at a spawn pose, build its vendor frames, register the robot entity and bring its manifest's plugins.", mobile::spawn_robot::SpawnRobotConfig, mobile::spawn_robot::SpawnRobot, PluginFlags { provides_entity: true, ..Default::default() }, mobile::spawn_robot::EXPANSION_KEYS, Some(crate::world::expand::expand_manifest)));
        v.push(sensors::spawn_sensor::descriptor());
        v.push(plugin_descriptor!("box", "A parametric box obstacle (full extents; on the floor unless z is given; static | driven | physics).", scene::box_prop::BoxConfig, scene::box_prop::BoxProp, PluginFlags { provides_entity: true, ..Default::default() }));
        v.push(scene::boxes::descriptor());
        v.push(plugin_descriptor!("cylinder", "A parametric upright cylinder obstacle (radius, full height; static | driven | physics; mass).", scene::cylinder::CylinderConfig, scene::cylinder::CylinderProp, PluginFlags { provides_entity: true, ..Default::default() }));
        v.push(scene::cylinder::cylinders_descriptor());
        v.push(plugin_descriptor!("spawn_model", "Place a model as a prop at a pose (static | driven | physics; scale, mass, friction, publish_tf).", scene::spawn_model::SpawnModelConfig, scene::spawn_model::SpawnModel, PluginFlags { provides_entity: true, ..Default::default() }));
        v.push(scene::floorplan::descriptor());
        v.push(scene::heightfield::descriptor());
        v.push(plugin_descriptor!("lidar", "2D lidar by batched ray casting (REP 117 specials, seeded range noise, dropout, static mount TF).", sensors::lidar::LidarConfig, sensors::lidar::Lidar, PluginFlags::default()));
        v.push(sensors::livox_mid360::descriptor());
        v.push(sensors::range_sensor::descriptor());
        v.push(sensors::gnss::descriptor());
        v.push(sensors::imu::descriptor());
        v.push(mobile::diff_drive::descriptor());
        v.push(mobile::omni_drive::descriptor());
        v.push(mobile::ackermann_drive::descriptor());
        v.push(core::joint_state_publisher::descriptor());
        v.push(sensors::ground_truth_pose::descriptor());
        v.push(plugin_descriptor!("spawn_arm", "Attach an arm (ground, pedestal, mount on a robot, or rail), graft an end effector, restate its actuators (actuators:), compensate gravity, register the Arm entity and bring its manifest's controller.", manipulation::spawn_arm::SpawnArmConfig, manipulation::spawn_arm::SpawnArm, PluginFlags { provides_entity: true, ..Default::default() }, manipulation::spawn_arm::EXPANSION_KEYS, Some(manipulation::spawn_arm::expand)));
        v.push(manipulation::arm_controller::descriptor());
        v.push(sensors::force_torque::descriptor());
        v.push(core::payload::descriptor());
        v.push(observe::contact_monitor::descriptor());
        v.push(observe::bumper::descriptor());
        v.push(observe::clearance_monitor::descriptor());
        v.push(observe::energy_monitor::descriptor());
        v.push(observe::upright_monitor::descriptor());
        v.push(faults::model_override::descriptor());
        v.push(plugin_descriptor!("conveyor", "A velocity-driven belt conveyor (slide-joint belt, forced speed with position wrap; speed commandable as Float64).", assets::conveyor::ConveyorConfig, assets::conveyor::Conveyor, PluginFlags { provides_entity: true, ..Default::default() }));
        v.push(plugin_descriptor!("door", "A hinged swing door: force-limited position actuator, openness 0..1 on cmd/state, backs off when stalled.", assets::door::DoorConfig, assets::door::Door, PluginFlags { provides_entity: true, ..Default::default() }));
        #[cfg(feature = "ros")]
        v.push(crate::ros::bridge::descriptor());
        #[cfg(feature = "ros")]
        v.push(crate::ros::sim_interfaces::descriptor());
        v
    })
}

/// Look up a plugin by its short name.
pub fn lookup(name: &str) -> Option<&'static PluginDescriptor> {
    registry().iter().find(|d| d.name == name)
}

/// Human-readable description of a plugin's config (keys, types, defaults, docs with units),
/// generated from the config struct's schema.
pub fn describe(d: &PluginDescriptor) -> String {
    let schema = (d.schema)();
    let v = schema.as_value();
    let mut out = format!("{} — {}\n", d.name, d.summary);
    let flags = d.flags;
    let mut fl = Vec::new();
    if flags.provides_world {
        fl.push("provides_world");
    }
    if flags.transport_only {
        fl.push("transport_only");
    }
    if flags.provides_entity {
        fl.push("provides_entity");
    }
    if flags.parallel_safe {
        fl.push("parallel_safe");
    }
    if !fl.is_empty() {
        out += &format!("flags: {}\n", fl.join(", "));
    }
    out += "config keys:\n";
    let defs = v.get("$defs").cloned().unwrap_or_default();
    describe_props(v, &defs, "  ", &mut out);
    out
}

fn type_of(p: &serde_json::Value, defs: &serde_json::Value) -> String {
    if let Some(r) = p.get("$ref").and_then(|r| r.as_str()) {
        let name = r.rsplit('/').next().unwrap_or(r);
        if let Some(d) = defs.get(name) {
            if let Some(e) = d.get("enum") {
                return e
                    .as_array()
                    .map(|a| a.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join(" | "))
                    .unwrap_or_default();
            }
            if let Some(one) = d.get("oneOf").or(d.get("anyOf")) {
                return one
                    .as_array()
                    .map(|a| a.iter().map(|x| type_of(x, defs)).collect::<Vec<_>>().join(" | "))
                    .unwrap_or_default();
            }
        }
        return name.to_string();
    }
    if let Some(e) = p.get("enum") {
        return e
            .as_array()
            .map(|a| a.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" | "))
            .unwrap_or_default();
    }
    if let Some(one) = p.get("anyOf").or(p.get("oneOf")) {
        let parts: Vec<String> = one
            .as_array()
            .map(|a| a.iter().map(|x| type_of(x, defs)).filter(|t| t != "null").collect())
            .unwrap_or_default();
        return parts.join(" | ");
    }
    match p.get("type") {
        Some(serde_json::Value::String(t)) if t == "array" => {
            let item = p.get("items").map(|i| type_of(i, defs)).unwrap_or_else(|| "any".into());
            match (p.get("minItems"), p.get("maxItems")) {
                (Some(a), Some(b)) if a == b => format!("[{item}; {a}]"),
                _ => format!("list of {item}"),
            }
        }
        Some(serde_json::Value::String(t)) => t.clone(),
        Some(serde_json::Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str())
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join(" | "),
        _ => "any".into(),
    }
}

fn describe_props(v: &serde_json::Value, defs: &serde_json::Value, indent: &str, out: &mut String) {
    let Some(props) = v.get("properties").and_then(|p| p.as_object()) else {
        out.push_str(&format!("{indent}(none)\n"));
        return;
    };
    let required: Vec<&str> = v
        .get("required")
        .and_then(|r| r.as_array())
        .map(|a| a.iter().filter_map(|x| x.as_str()).collect())
        .unwrap_or_default();
    for (k, p) in props {
        let ty = type_of(p, defs);
        let default = p.get("default").map(|d| format!(" = {d}")).unwrap_or_default();
        let req = if required.contains(&k.as_str()) && p.get("default").is_none() {
            " (required)"
        } else {
            ""
        };
        out.push_str(&format!("{indent}{k}: {ty}{default}{req}\n"));
        if let Some(desc) = p.get("description").and_then(|d| d.as_str()) {
            for line in desc.lines() {
                out.push_str(&format!("{indent}    {line}\n"));
            }
        }
        // nested struct
        if let Some(r) = p.get("$ref").and_then(|r| r.as_str()) {
            let name = r.rsplit('/').next().unwrap_or(r);
            if let Some(d) = defs.get(name) {
                if d.get("properties").is_some() {
                    describe_props(d, defs, &format!("{indent}    "), out);
                }
            }
        }
    }
}
