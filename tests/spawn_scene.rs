//! Spawn and scene plugins: spawn_robot, spawn_sensor, box/boxes/cylinder(s), spawn_model,
//! floorplan. Every test asserts measured values or the exact refusal text.

use std::path::Path;

use mujoco_rs::prelude::MjtObjBase;
use roqsim::context::payload::{Payload, Transform};
use roqsim::context::EntityKind;
use roqsim::mujoco::raycast::RayBatch;
use roqsim::world::overrides::parse_set;
use roqsim::{load_world_str, Engine, EngineOptions, LoadOptions};

mod common;
use common::*;

fn load_with(yaml: &str, dir: &Path, sets: &[&str]) -> Result<roqsim::LoadedWorld, String> {
    let opts = LoadOptions {
        assignments: sets.iter().map(|s| parse_set(s).unwrap()).collect(),
        ..Default::default()
    };
    load_world_str(yaml, dir, &opts).map_err(|e| e.to_string())
}

fn load(yaml: &str) -> Result<roqsim::LoadedWorld, String> {
    load_with(yaml, &base(), &[])
}

fn body_pose(e: &Engine, name: &str) -> ([f64; 3], [f64; 4]) {
    let id = e
        .ctx
        .model()
        .name_to_id(MjtObjBase::mjOBJ_BODY, name)
        .unwrap_or_else(|| panic!("no body {name}"));
    (e.ctx.data().xpos()[id], e.ctx.data().xquat()[id])
}

fn yaw(q: &[f64; 4]) -> f64 {
    roqsim::math::yaw_of(q)
}

/// The turtlebot4's manifest components switched off, so a test needs no drive/sensor plugin.
const TB_OFF: &str = "
    components:
      - diff_drive: {}
        enabled: false
      - imu: {}
        enabled: false
      - spawn_sensor: {}
        name: rplidar
        components:
          - lidar: {}
            enabled: false
";

const SIM: &str = "sim: {timestep: 0.002, seed: 1}\n";

fn tf_of(e: &Engine, owner: &str) -> Vec<Transform> {
    let ep = e
        .ctx
        .interface
        .all()
        .iter()
        .find(|ep| ep.name == "tf_static" && ep.owner.as_deref() == Some(owner))
        .unwrap_or_else(|| panic!("no tf_static of {owner}"));
    assert_eq!(ep.get_hint("ros2", "tf"), Some("static"));
    match ep.latest() {
        Some((Payload::Transforms(t), _)) => t.clone(),
        other => panic!("tf_static of {owner} carries {other:?}"),
    }
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

// ----------------------------------------------------------------------------------------------
// spawn_robot
// ----------------------------------------------------------------------------------------------

#[test]
fn robot_rests_at_its_pose_and_rest_height() {
    let mut e = engine(&format!(
        "{SIM}components:
  - spawn_robot: {{model: turtlebot4, default_plugins: false, pose: {{position: {{x: 1.5, y: -0.5}}, orientation: {{yaw: 0.785}}}}}}
    name: robot
  - spawn_robot: {{model: husky_a200, default_plugins: false, prefix: h_, pose: {{position: {{x: -2.0, y: 2.0}}, orientation: {{yaw: -1.2}}}}}}
    name: husky
"
    ));
    e.step_n(500).unwrap(); // 1 s
    let (p, q) = body_pose(&e, "base_link");
    assert!((p[0] - 1.5).abs() < 0.005 && (p[1] + 0.5).abs() < 0.005, "turtlebot at {p:?}");
    assert!(p[2].abs() < 0.002, "turtlebot base_link on the floor (rest_height 0): z {}", p[2]);
    assert!((yaw(&q) - 0.785).abs() < 0.005, "yaw {}", yaw(&q));
    let (p, q) = body_pose(&e, "h_base_link");
    assert!((p[0] + 2.0).abs() < 0.005 && (p[1] - 2.0).abs() < 0.005, "husky at {p:?}");
    assert!((p[2] - 0.13228).abs() < 0.002, "husky rests at its rest_height 0.13228: z {}", p[2]);
    assert!((yaw(&q) + 1.2).abs() < 0.005);
}

#[test]
fn quaternion_pose_and_explicit_z() {
    // yaw 0.5 as a quaternion, dropped from 0.05 m.
    let (s, c) = (0.25f64.sin(), 0.25f64.cos());
    let e = engine(&format!(
        "{SIM}components:
  - spawn_robot: {{model: turtlebot4, default_plugins: false, pose: {{header: {{frame_id: world}}, position: {{x: 0.3, z: 0.05}}, orientation: {{x: 0, y: 0, z: {s}, w: {c}}}}}}}
    name: robot
"
    ));
    let (p, q) = body_pose(&e, "base_link");
    assert!(close(&p, &[0.3, 0.0, 0.05], 1e-9), "{p:?}");
    assert!((yaw(&q) - 0.5).abs() < 1e-9);
    let ent = e.ctx.entities.get("robot").unwrap();
    assert!(close(&ent.initial_pose.pos, &[0.3, 0.0, 0.05], 1e-12));
}

#[test]
fn two_robots_with_distinct_prefixes_and_the_registry() {
    let e = engine(&format!(
        "{SIM}components:
  - spawn_robot: {{model: turtlebot4, namespace: robot1, prefix: r1_, pose: {{position: {{x: 1.0}}}}}}
    name: tb1{TB_OFF}  - spawn_robot: {{model: turtlebot4, namespace: robot2, prefix: r2_, present: false, pose: {{position: {{x: -1.0}}}}}}
    name: tb2{TB_OFF}"
    ));
    let m = e.ctx.model();
    for b in ["r1_base_link", "r2_base_link", "r1_rplidar_mount", "r2_rplidar_mount"] {
        assert!(m.name_to_id(MjtObjBase::mjOBJ_BODY, b).is_some(), "{b}");
    }
    let names = e.ctx.entities.names();
    assert_eq!(names, vec!["tb1", "tb1.rplidar", "tb2", "tb2.rplidar"]);
    let r1 = e.ctx.entities.get("tb1").unwrap();
    assert_eq!(r1.kind, EntityKind::Robot);
    assert_eq!(r1.body, "r1_base_link");
    assert_eq!(r1.prefix, "r1_");
    assert_eq!(r1.namespace, "robot1");
    assert_eq!(r1.model, "turtlebot4");
    assert_eq!(r1.free_joint.as_deref(), Some("r1_base_free"));
    assert_eq!(r1.weld_reason, None);
    assert!(r1.declared_present && r1.present);
    assert_eq!(r1.meta.get("rest_height").map(String::as_str), Some("0"));
    assert!(close(&r1.initial_pose.pos, &[1.0, 0.0, 0.0], 1e-12));
    let r2 = e.ctx.entities.get("tb2").unwrap();
    assert!(!r2.declared_present && !r2.present, "present: false is stored on the entity");
    let lidar = e.ctx.entities.get("tb2.rplidar").unwrap();
    assert!(!lidar.declared_present, "a mounted device is absent with its carrier");
    let m = e.ctx.model();
    let housing = m.name_to_id(MjtObjBase::mjOBJ_GEOM, "r2_rplidar_head").unwrap();
    assert_eq!(m.geom_group()[housing] as usize, roqsim::mujoco::raycast::ABSENT_GEOM_GROUP);
    let housing1 = m.name_to_id(MjtObjBase::mjOBJ_GEOM, "r1_rplidar_head").unwrap();
    assert_eq!(m.geom_group()[housing1], 0);
    assert_eq!(lidar.meta.get("pose_frame").map(String::as_str), Some("r2_base_link"));
    assert_eq!(lidar.kind, EntityKind::Sensor);
    assert_eq!(lidar.prefix, "r2_rplidar_", "prefix defaults to <attach_prefix><label>_");
    assert_eq!(lidar.namespace, "robot2", "namespace defaults to the carrier's");
    assert_eq!(lidar.body, "r2_rplidar_mount");
    assert_eq!(lidar.free_joint, None);
    assert_eq!(
        lidar.weld_reason.as_deref(),
        Some("mounted on `r2_base_link` (welded to its carrier; it moves with it)")
    );
    assert_eq!(lidar.meta.get("frame_id").map(String::as_str), Some("rplidar_link"));
}

#[test]
fn same_prefix_twice_is_refused() {
    let msg = refusal(&format!(
        "{SIM}components:
  - spawn_robot: {{model: turtlebot4, default_plugins: false}}
    name: a
  - spawn_robot: {{model: turtlebot4, default_plugins: false, pose: {{position: {{x: 1}}}}}}
    name: b
"
    ));
    assert_contains(&msg, "[b] build: prefix: the world already has a body `base_link` (another spawn with prefix ``?); give each robot a distinct `prefix:` (e.g. `prefix: robot2_`)");
}

#[test]
fn robot_frames_become_static_transforms() {
    let e = engine(&format!(
        "{SIM}components:
  - spawn_robot:
      model: turtlebot4
      namespace: robot1
      frames:
        - {{name: cover_link, parent: shell_link, pos: [0.01, 0.0, 0.05], rpy: [0.0, 0.0, 0.5]}}
        - {{name: mast_link, parent: base_link, pos: [0.0, 0.0, 0.3]}}
    name: robot{TB_OFF}"
    ));
    let ep = e
        .ctx
        .interface
        .all()
        .iter()
        .find(|ep| ep.name == "tf_static" && ep.owner.as_deref() == Some("robot"))
        .unwrap();
    assert_eq!(ep.namespace, "robot1");
    assert_eq!(ep.frame_prefix, "robot1/");
    let t = tf_of(&e, "robot");
    let pairs: Vec<(&str, &str)> =
        t.iter().map(|t| (t.parent.as_str(), t.child.as_str())).collect();
    assert_eq!(
        pairs,
        vec![("base_link", "shell_link"), ("shell_link", "cover_link"), ("base_link", "mast_link")]
    );
    assert!(
        close(&t[0].translation, &[0.0, 0.0, 0.0942], 1e-12)
            && close(&t[0].rotation, &[0.0, 0.0, 0.0, 1.0], 1e-12)
    );
    assert!(close(&t[1].translation, &[0.01, 0.0, 0.05], 1e-12));
    assert!(
        close(&t[1].rotation, &[0.0, 0.0, 0.25f64.sin(), 0.25f64.cos()], 1e-12),
        "{:?}",
        t[1].rotation
    );
    assert!(close(&t[2].translation, &[0.0, 0.0, 0.3], 1e-12));
    // The site sits on base_link at the composed pose.
    let m = e.ctx.model();
    let s = m.name_to_id(MjtObjBase::mjOBJ_SITE, "cover_link").unwrap();
    assert!(close(&m.site_pos()[s], &[0.01, 0.0, 0.0942 + 0.05], 1e-12));
    // The mount publishes shell_link -> rplidar_link, the vendor joint origin.
    let t = tf_of(&e, "robot.rplidar");
    assert_eq!(t.len(), 1);
    assert_eq!((t[0].parent.as_str(), t[0].child.as_str()), ("shell_link", "rplidar_link"));
    assert!(close(&t[0].translation, &[-0.04, 0.0, 0.098715], 1e-12));
    let h = std::f64::consts::FRAC_PI_4;
    assert!(close(&t[0].rotation, &[0.0, 0.0, h.sin(), h.cos()], 1e-9), "{:?}", t[0].rotation);
    // World pose of the scan site: base at the origin, shell 0.0942 up, mount 0.098715 above it.
    let (p, _) = body_pose(&e, "rplidar_mount");
    assert!(close(&p, &[-0.04, 0.0, 0.0942 + 0.098715], 1e-9), "{p:?}");
}

#[test]
fn frame_refusals() {
    let msg = refusal(&format!(
        "{SIM}components:
  - spawn_robot: {{model: turtlebot4, default_plugins: false, frames: [{{name: cover_link, parent: roof_link}}]}}
"
    ));
    assert_contains(&msg, "frames[0].parent: `roof_link` is neither a body of the model nor a frame declared before it; bodies: base_link, left_wheel, right_wheel; frames: shell_link");
    let msg = refusal(&format!(
        "{SIM}components:
  - spawn_robot: {{model: turtlebot4, default_plugins: false, frames: [{{name: cap_link, parent: left_wheel}}]}}
"
    ));
    assert_contains(&msg, "frames: frame `left_wheel` is not welded to `base_link`: body `left_wheel` has a joint, so the transform through it is not static");
}

#[test]
fn pose_and_name_refusals() {
    let msg = refusal(&format!(
        "{SIM}components:
  - spawn_robot: {{model: turtlebot4, default_plugins: false, pose: {{header: {{frame_id: map}}, orientation: {{yaw: 1.0, w: 1.0}}}}, namespace: 'robot 1'}}
    name: robot
"
    ));
    assert_contains(&msg, "components.robot.pose.header.frame_id: a spawn pose is stated in the world frame: use `world` (got `map`) (spawn_robot)");
    assert_contains(&msg, "components.robot.pose.orientation: give either a quaternion {x, y, z, w} or Euler angles {roll, pitch, yaw}, not both (spawn_robot)");
    assert_contains(&msg, "components.robot.namespace: `robot 1` is not a valid ROS namespace");
    let msg = refusal(&format!(
        "{SIM}components:\n  - spawn_robot: {{model: turtlebot4, kinematics: diff}}\n"
    ));
    assert_contains(&msg, "components.spawn_robot.kinematics: unknown field `kinematics`");
    let msg = refusal(&format!("{SIM}components:\n  - spawn_robot: {{default_plugins: false}}\n"));
    assert_contains(&msg, "missing field `model`");
}

#[test]
fn unknown_model_is_refused_naming_the_bundled_ones() {
    let msg = refusal(&format!(
        "{SIM}components:\n  - spawn_robot: {{model: turtlebot9}}\n    name: robot\n"
    ));
    assert_contains(&msg, "components.robot.model: unknown model `turtlebot9`; bundled models: ");
    for m in ["husky_a200", "rplidar_a1", "turtlebot4"] {
        assert_contains(&msg, m);
    }
}

#[test]
fn base_joint_refusal_and_weld() {
    let msg = refusal(&format!("{SIM}components:\n  - spawn_robot: {{model: turtlebot4, default_plugins: false, base_joint: chassis_free}}\n"));
    assert_contains(
        &msg,
        "base_joint: model `turtlebot4` has no joint `chassis_free`; free joints: base_free",
    );
    let msg = refusal(&format!("{SIM}components:\n  - spawn_robot: {{model: turtlebot4, default_plugins: false, base_joint: left_wheel_joint}}\n"));
    assert_contains(&msg, "base_joint: joint `left_wheel_joint` of model `turtlebot4` is not a free joint; free joints: base_free");
    // A gripper model has no free joint: spawned as a "robot" it is welded, and says why.
    let e = engine(&format!("{SIM}components:\n  - spawn_robot: {{model: parallel_gripper, default_plugins: false, pose: {{position: {{z: 0.5}}}}}}\n    name: post\n"));
    let ent = e.ctx.entities.get("post").unwrap();
    assert_eq!(ent.free_joint, None);
    assert_eq!(
        ent.weld_reason.as_deref(),
        Some("model `parallel_gripper` has no free joint `base_free`: its base is welded to the world")
    );
    // a device model's frames are named by spawn_sensor: as a "robot" its placeholder frame is refused
    let msg = refusal(&format!("{SIM}components:\n  - spawn_robot: {{model: rplidar_a1, default_plugins: false}}\n    name: post\n"));
    assert_contains(&msg, "[post] configure: namespace: `{frame_id}` is not a TF frame id: a manifest placeholder left unfilled (a device manifest's frames are filled by `spawn_sensor`, which names them; spawn the device with it)");
}

// ----------------------------------------------------------------------------------------------
// manifests, overrides
// ----------------------------------------------------------------------------------------------

fn component<'a>(w: &'a roqsim::LoadedWorld, addr: &str) -> &'a roqsim::world::LoadedComponent {
    w.components.iter().find(|c| c.args.address == addr).unwrap_or_else(|| {
        panic!(
            "no component {addr}; have {:?}",
            w.components.iter().map(|c| &c.args.address).collect::<Vec<_>>()
        )
    })
}

fn int(c: &roqsim::world::LoadedComponent, key: &str) -> Option<i64> {
    c.config.get(key).and_then(|v| v.as_i64())
}

#[test]
fn manifest_merge_keeps_the_manifest_keys() {
    let w = load(&format!(
        "{SIM}components:
  - spawn_robot: {{model: turtlebot4}}
    name: robot
    components:
      - spawn_sensor: {{}}
        name: rplidar
        components:
          - lidar: {{range_stddev: 0.05}}
"
    ))
    .unwrap();
    let addrs: Vec<&str> = w.components.iter().map(|c| c.args.address.as_str()).collect();
    let mut want =
        vec!["robot", "robot.diff_drive", "robot.rplidar", "robot.rplidar.lidar", "robot.imu"];
    // the Create 3's cliff and IR range sensors (models/turtlebot4 manifest)
    let sensors = [
        "cliff_side_left",
        "cliff_side_right",
        "cliff_front_left",
        "cliff_front_right",
        "ir_intensity_side_left",
        "ir_intensity_left",
        "ir_intensity_front_left",
        "ir_intensity_front_center_left",
        "ir_intensity_front_center_right",
        "ir_intensity_front_right",
        "ir_intensity_right",
    ];
    let named: Vec<String> = sensors.iter().map(|s| format!("robot.{s}")).collect();
    want.extend(named.iter().map(String::as_str));
    assert_eq!(addrs, want);
    let lidar = component(&w, "robot.rplidar.lidar");
    assert_eq!(
        lidar.config.get("range_stddev").and_then(|v| v.as_f64()),
        Some(0.05),
        "the world's value wins"
    );
    assert_eq!(int(lidar, "rays"), Some(360), "the manifest's rays is kept");
    // {frame_id} filled from the mount (rplidar_link), not the device's default (laser).
    assert_eq!(lidar.config.get("frame_id").and_then(|v| v.as_str()), Some("rplidar_link"));
    let mount = component(&w, "robot.rplidar");
    assert_eq!(mount.config.get("parent_frame").and_then(|v| v.as_str()), Some("shell_link"));
    assert_eq!(lidar.args.owner.as_deref(), Some("robot.rplidar"));
}

#[test]
fn set_reaches_a_manifest_component_and_late_expansion_keys_are_refused() {
    let yaml =
        format!("{SIM}components:\n  - spawn_robot: {{model: turtlebot4}}\n    name: robot\n");
    let w = load_with(&yaml, &base(), &["components.robot.rplidar.lidar.rays=720"]).unwrap();
    assert_eq!(int(component(&w, "robot.rplidar.lidar"), "rays"), Some(720));
    let msg =
        load_with(&yaml, &base(), &["components.robot.rplidar.model=rplidar_a2"]).unwrap_err();
    assert_contains(
        &msg,
        "components.robot.rplidar.model: `model` is read when `robot.rplidar` expands its model's manifest, which happened before this override could reach it (`robot.rplidar` comes from a manifest). Declare `robot.rplidar` in the world, nested under its carrier, with `model:` set there (--set components.robot.rplidar.model=rplidar_a2)",
    );
    let msg = load_with(&yaml, &base(), &["components.robot.rplidar.frame_id=laser2"]).unwrap_err();
    assert_contains(&msg, "`frame_id` is read when `robot.rplidar` expands");
    // A key that is not an expansion input still reaches the manifest's mount.
    let w = load_with(&yaml, &base(), &["components.robot.rplidar.pos=[0.0, 0.0, 0.1]"]).unwrap();
    assert!(component(&w, "robot.rplidar").config.get("pos").unwrap().as_sequence().is_some());
}

#[test]
fn second_mount_with_the_same_frame_id_is_refused() {
    let msg = refusal(&format!(
        "{SIM}components:
  - spawn_robot: {{model: turtlebot4}}
    name: robot{TB_OFF}      - spawn_sensor: {{model: rplidar_a1, parent_frame: shell_link, pos: [0.05, 0, 0.1], frame_id: rplidar_link, default_plugins: false}}
        name: rplidar2
"
    ));
    assert_contains(&msg, "[robot.rplidar2] build: frame_id: `rplidar_link` is already the frame of `robot.rplidar` on the same carrier `robot`; two mounts on one carrier share its namespace, so give this one a distinct `frame_id:`");
}

#[test]
fn mount_on_a_declared_frame_and_mount_refusals() {
    let e = engine(&format!(
        "{SIM}components:
  - spawn_robot: {{model: turtlebot4, frames: [{{name: cover_link, parent: shell_link, pos: [0.0, 0.0, 0.05]}}]}}
    name: robot{TB_OFF}      - spawn_sensor: {{model: rplidar_a1, parent_frame: cover_link, pos: [0.1, 0, 0.02], frame_id: top_laser, default_plugins: false}}
        name: top
"
    ));
    let (p, _) = body_pose(&e, "top_mount");
    assert!(close(&p, &[0.1, 0.0, 0.0942 + 0.05 + 0.02], 1e-9), "{p:?}");
    let t = tf_of(&e, "robot.top");
    assert_eq!((t[0].parent.as_str(), t[0].child.as_str()), ("cover_link", "top_laser"));
    assert!(close(&t[0].translation, &[0.1, 0.0, 0.02], 1e-12));

    let msg = refusal(&format!(
        "{SIM}components:
  - spawn_robot: {{model: turtlebot4, default_plugins: false}}
    name: robot
    components:
      - spawn_sensor: {{model: rplidar_a1, default_plugins: false}}
        name: a
      - spawn_sensor: {{model: rplidar_a1, parent_frame: shell_link, attach_to: base_link, motion: driven, default_plugins: false}}
        name: b
"
    ));
    assert_contains(&msg, "components.robot.a.parent_frame: required for a mount nested under `robot`: name a body or a declared frame of the carrier to hang from (or `attach_to:` a body) (spawn_sensor)");
    assert_contains(
        &msg,
        "components.robot.b.attach_to: `parent_frame` and `attach_to` are mutually exclusive",
    );
    assert_contains(&msg, "components.robot.b.motion: `attach_to` and `motion` are mutually exclusive: a mount that rides a body takes its pose from that body");
    let msg = refusal(&format!(
        "{SIM}components:
  - spawn_robot: {{model: turtlebot4, default_plugins: false}}
    name: robot
    components:
      - spawn_sensor: {{model: rplidar_a1, parent_frame: roof_link, default_plugins: false}}
        name: a
"
    ));
    assert_contains(&msg, "parent_frame: `roof_link` (`roof_link`) is neither a body nor a declared frame of the carrier `robot`; bodies: base_link, left_wheel, right_wheel; frames: shell_link");
}

#[test]
fn top_level_sensor_motion_modes() {
    let e = engine(&format!(
        "{SIM}components:
  - spawn_sensor: {{model: rplidar_a1, pos: [1, 0, 1.5], rpy: [0, 0, 0.3]}}
    name: mast
    components:
      - lidar: {{}}
        enabled: false
  - spawn_sensor: {{model: rplidar_a1, pos: [2, 0, 1.0], motion: physics, frame_id: drop_laser, default_plugins: false}}
    name: dropped
  - spawn_sensor: {{model: rplidar_a1, pos: [3, 0, 1.0], motion: driven, frame_id: moving_laser, default_plugins: false}}
    name: moved
"
    ));
    let mast = e.ctx.entities.get("mast").unwrap();
    assert_eq!(mast.prefix, "mast_");
    assert_eq!(mast.weld_reason.as_deref(), Some("motion: static (welded to the world; give `motion: driven` or `motion: physics` to move it)"));
    let t = tf_of(&e, "mast");
    assert_eq!(
        (t[0].parent.as_str(), t[0].child.as_str()),
        ("world", "laser"),
        "the vendor default frame_id"
    );
    assert!(close(&t[0].translation, &[1.0, 0.0, 1.5], 1e-12));
    assert!(close(&t[0].rotation, &[0.0, 0.0, 0.15f64.sin(), 0.15f64.cos()], 1e-12));
    let d = e.ctx.entities.get("dropped").unwrap();
    assert_eq!(d.free_joint.as_deref(), Some("dropped_mount_free"));
    assert_eq!(d.weld_reason, None);
    let m = e.ctx.model();
    let moved = m.name_to_id(MjtObjBase::mjOBJ_BODY, "moved_mount").unwrap();
    assert!(m.body_mocapid()[moved] >= 0, "driven = a mocap body");
    // A physics mount falls; a welded or driven one does not.
    let mut e = e;
    e.step_n(250).unwrap();
    assert!(body_pose(&e, "dropped_mount").0[2] < 0.9);
    assert!((body_pose(&e, "moved_mount").0[2] - 1.0).abs() < 1e-12);
    assert!((body_pose(&e, "mast_mount").0[2] - 1.5).abs() < 1e-12);
}

fn device_dir(manifest: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("dev")).unwrap();
    std::fs::write(
        dir.path().join("dev/dev.xml"),
        "<mujoco><worldbody><body name=\"mount\"><geom type=\"box\" size=\"0.02 0.02 0.02\"/><site name=\"lens\"/></body></worldbody></mujoco>",
    )
    .unwrap();
    std::fs::write(dir.path().join("dev/dev.manifest.yaml"), manifest).unwrap();
    dir
}

#[test]
fn placeholder_refusals() {
    let dir = device_dir("components:\n  - dummy: {record: true, fail_on: '{frame_id}'}\n");
    let msg = refusal_in(
        &format!("{SIM}components:\n  - spawn_sensor: {{model: dev/dev.xml}}\n    name: cam\n"),
        dir.path(),
    );
    assert_contains(&msg, "components.cam.model: frame_id: the manifest of `dev/dev.xml` uses {frame_id} (component `dummy`) but neither this mount nor the manifest names one; set `frame_id:` on the mount");
    let dir = device_dir("frame_id: optical\ncomponents:\n  - dummy: {fail_on: '{bogus}'}\n");
    let msg = refusal_in(
        &format!("{SIM}components:\n  - spawn_sensor: {{model: dev/dev.xml}}\n    name: cam\n"),
        dir.path(),
    );
    assert_contains(&msg, "manifest of `dev/dev.xml`, component `dummy`: unknown placeholder `{bogus}`; a device manifest may use only {frame_id}, {parent_frame} and {camera_name}");
    // Both filled: a mount under a robot gets its frame and parent names.
    let dir = device_dir(
        "frame_id: optical\nframes:\n  - {name: '{frame_id}', parent: mount, pos: [0, 0, 0.01]}\n  - {name: '{frame_id}_rot', parent: '{frame_id}', rpy: [0, 1.5707963267948966, 0]}\ncomponents:\n  - dummy: {fail_on: '{parent_frame}'}\n    enabled: false\n",
    );
    let yaml = format!(
        "{SIM}components:\n  - spawn_robot: {{model: {}/models/turtlebot4/turtlebot4.xml, default_plugins: false}}\n    name: robot\n    components:\n      - spawn_sensor: {{model: dev/dev.xml, parent_frame: shell_link, pos: [0, 0, 0.2]}}\n        name: cam\n",
        env!("CARGO_MANIFEST_DIR")
    );
    let w = load_with(&yaml, dir.path(), &[]).unwrap();
    assert_eq!(
        w.doc.components[0].components[0].components[0]
            .config
            .get("fail_on")
            .and_then(|v| v.as_str()),
        Some("shell_link")
    );
    let e = Engine::new(w, EngineOptions { profile: false, seed: Some(1) }).unwrap();
    let t = tf_of(&e, "robot.cam");
    let pairs: Vec<(&str, &str)> =
        t.iter().map(|t| (t.parent.as_str(), t.child.as_str())).collect();
    assert_eq!(pairs, vec![("shell_link", "optical"), ("optical", "optical_rot")]);
    assert!(close(&t[0].translation, &[0.0, 0.0, 0.21], 1e-12));
    assert!(close(
        &t[1].rotation,
        &[0.0, std::f64::consts::FRAC_PI_4.sin(), 0.0, std::f64::consts::FRAC_PI_4.cos()],
        1e-9
    ));
}

// ----------------------------------------------------------------------------------------------
// props
// ----------------------------------------------------------------------------------------------

#[test]
fn boxes_sit_on_the_floor_and_motion_decides_the_joint() {
    let mut e = engine(&format!(
        "{SIM}components:
  - box: {{pose: {{position: {{x: 1.0, y: 1.0}}}}, size: [0.4, 0.6, 0.8]}}
    name: crate
  - box: {{pose: {{position: {{x: -1.0, y: 1.0}}, orientation: {{yaw: 0.3}}}}, size: [0.3, 0.3, 0.3], motion: physics, mass: 2.0, friction: 0.8}}
    name: parcel
  - box: {{pose: {{position: {{x: 0.0, y: -2.0}}, orientation: {{roll: 0.7853981633974483}}}}, size: [0.2, 0.2, 0.2], motion: physics}}
    name: tipped
  - box: {{pose: {{position: {{x: 2.0, y: -2.0, z: 1.0}}}}, size: [0.2, 0.2, 0.2], motion: driven, collide: false, color: [1, 0, 0]}}
    name: ghost
"
    ));
    let crate_ = e.ctx.entities.get("crate").unwrap();
    assert_eq!(crate_.kind, EntityKind::Object);
    assert_eq!(crate_.free_joint, None);
    assert_eq!(
        crate_.weld_reason.as_deref(),
        Some("motion: static (welded scenery; give `motion: physics` to move it)")
    );
    let parcel = e.ctx.entities.get("parcel").unwrap();
    assert_eq!(parcel.free_joint.as_deref(), Some("parcel_free"));
    assert_eq!(parcel.weld_reason, None);
    let m = e.ctx.model();
    let pid = m.name_to_id(MjtObjBase::mjOBJ_BODY, "parcel").unwrap();
    assert!((m.body_mass()[pid] - 2.0).abs() < 1e-9);
    let g = m.name_to_id(MjtObjBase::mjOBJ_GEOM, "parcel").unwrap();
    assert!(close(&m.geom_friction()[g], &[0.8, 0.005, 0.0001], 1e-12));
    let ghost = m.name_to_id(MjtObjBase::mjOBJ_GEOM, "ghost").unwrap();
    assert_eq!((m.geom_contype()[ghost], m.geom_conaffinity()[ghost]), (0, 0));
    e.step_n(500).unwrap();
    let (p, _) = body_pose(&e, "crate");
    assert!(close(&p, &[1.0, 1.0, 0.4], 1e-12), "static box at half its height: {p:?}");
    let (p, q) = body_pose(&e, "parcel");
    assert!(
        (p[2] - 0.15).abs() < 0.002 && (yaw(&q) - 0.3).abs() < 0.01,
        "physics box rests at half height: {p:?}"
    );
    // Tipped onto an edge: its centre starts at 0.1·√2 so the edge touches the floor.
    let (p, _) = body_pose(&e, "tipped");
    assert!(p[2] > 0.09 && p[2] < 0.1415, "{p:?}");
    assert!((body_pose(&e, "ghost").0[2] - 1.0).abs() < 1e-12, "a driven box holds its pose");
    e.reset().unwrap();
    let (p, _) = body_pose(&e, "tipped");
    assert!(
        (p[2] - 0.1 * 2f64.sqrt()).abs() < 1e-9,
        "reset re-seats the free box at its spawn pose: {p:?}"
    );
}

#[test]
fn populations_and_cylinders() {
    let mut e = engine(&format!(
        "{SIM}components:
  - boxes:
      instances:
        - {{pose: {{position: {{x: 1.0}}}}, size: [0.2, 0.2, 0.4]}}
        - {{pose: {{position: {{x: 2.0}}}}, size: [0.2, 0.2, 0.2], motion: physics, name: pallet}}
    name: shelf
  - cylinder: {{pose: {{position: {{x: -1.0}}}}, radius: 0.1, height: 0.5, motion: physics, mass: 0.4}}
    name: can
  - cylinders:
      instances:
        - {{pose: {{position: {{y: 2.0}}}}, radius: 0.05, height: 1.0}}
    name: posts
"
    ));
    assert_eq!(e.ctx.entities.names(), vec!["shelf_0", "pallet", "can", "posts_0"]);
    let m = e.ctx.model();
    let can = m.name_to_id(MjtObjBase::mjOBJ_BODY, "can").unwrap();
    assert!((m.body_mass()[can] - 0.4).abs() < 1e-9);
    let g = m.name_to_id(MjtObjBase::mjOBJ_GEOM, "can").unwrap();
    assert!(close(&m.geom_size()[g][..2], &[0.1, 0.25], 1e-12), "[radius, half-height]");
    e.step_n(250).unwrap();
    assert!(close(&body_pose(&e, "shelf_0").0, &[1.0, 0.0, 0.2], 1e-12));
    assert!((body_pose(&e, "pallet").0[2] - 0.1).abs() < 0.002);
    assert!((body_pose(&e, "can").0[2] - 0.25).abs() < 0.002);
    assert!(close(&body_pose(&e, "posts_0").0, &[0.0, 2.0, 0.5], 1e-12));
}

#[test]
fn a_populations_present_is_each_instances_default_and_its_own_wins() {
    let mut e = engine(&format!(
        "{SIM}components:
  - boxes:
      present: false
      instances:
        - {{pose: {{position: {{x: 0.0, z: 1.0}}}}, size: [0.2, 0.2, 0.2], motion: physics}}
        - {{pose: {{position: {{x: 2.0, z: 1.0}}}}, size: [0.2, 0.2, 0.2], motion: physics, present: true}}
    name: crates
  - cylinders: {{present: false, instances: [{{pose: {{position: {{y: 2.0}}}}, radius: 0.05, height: 1.0}}]}}
    name: posts
"
    ));
    let present: Vec<(String, bool, bool)> = e
        .ctx
        .entities
        .all()
        .iter()
        .map(|x| (x.name.clone(), x.present, x.declared_present))
        .collect();
    assert_eq!(
        present,
        [
            ("crates_0".to_string(), false, false),
            ("crates_1".to_string(), true, true),
            ("posts_0".to_string(), false, false)
        ]
    );
    let geom = |e: &Engine, name: &str| {
        let m = e.ctx.model();
        let g = m.name_to_id(MjtObjBase::mjOBJ_GEOM, name).unwrap();
        (m.geom_group()[g], m.geom_contype()[g], m.geom_conaffinity()[g])
    };
    let absent = (roqsim::engine::presence::ABSENT_GEOM_GROUP as i32, 0, 0);
    assert_eq!(geom(&e, "crates_0"), absent);
    assert_eq!(geom(&e, "posts_0"), absent);
    assert_eq!(geom(&e, "crates_1"), (0, 1, 1));
    let ray_down = |e: &mut Engine, x: f64, y: f64| {
        let mut r = RayBatch::new(1);
        r.dirs_mut().copy_from_slice(&[0.0, 0.0, -1.0]);
        r.cast(e.ctx.data_mut(), [x, y, 3.0], None, None, true, 10.0);
        r.dist()[0]
    };
    e.step_n(500).unwrap();
    // the absent crate hangs frozen at z 1.0 with no contact; the present one fell to the floor
    assert_eq!(body_pose(&e, "crates_0").0, [0.0, 0.0, 1.0]);
    assert!((body_pose(&e, "crates_1").0[2] - 0.1).abs() < 2e-3, "{:?}", body_pose(&e, "crates_1"));
    assert_eq!(ray_down(&mut e, 0.0, 0.0), 3.0, "rays pass the absent crate");
    assert_eq!(ray_down(&mut e, 0.0, 2.0), 3.0, "rays pass the absent post");
    let d = e.ctx.data();
    let m = e.ctx.model();
    let absent_geoms =
        ["crates_0", "posts_0"].map(|n| m.name_to_id(MjtObjBase::mjOBJ_GEOM, n).unwrap() as i32);
    let touching = d
        .contact()
        .iter()
        .filter(|c| absent_geoms.contains(&c.geom[0]) || absent_geoms.contains(&c.geom[1]))
        .count();
    assert_eq!(touching, 0, "no contact involves an absent instance");
    // SpawnEntity-style presence still toggles one instance
    roqsim::engine::presence::set_present(&mut e.ctx, "crates_0", true).unwrap();
    assert_eq!(geom(&e, "crates_0"), (0, 1, 1));
    e.step_n(500).unwrap();
    assert!((body_pose(&e, "crates_0").0[2] - 0.1).abs() < 2e-3, "{:?}", body_pose(&e, "crates_0"));
    let x0 = body_pose(&e, "crates_0").0[0];
    assert!((ray_down(&mut e, x0, 0.0) - 2.8).abs() < 2e-3);
    roqsim::engine::presence::set_present(&mut e.ctx, "crates_1", false).unwrap();
    assert_eq!(geom(&e, "crates_1"), absent);
    // a reset re-applies each instance's declared presence
    e.reset().unwrap();
    assert_eq!(geom(&e, "crates_0"), absent);
    assert_eq!(geom(&e, "crates_1"), (0, 1, 1));
    let r = refusal(&format!(
        "{SIM}components:\n  - boxes: {{present: maybe, instances: [{{pose: {{}}, size: [1, 1, 1]}}]}}\n"
    ));
    assert_contains(&r, "components.boxes.present: ");
}

#[test]
fn prop_refusals() {
    let msg = refusal(&format!(
        "{SIM}components:
  - box: {{pose: {{}}, size: [0.4, 0, 0.8], color: [1, 0], motion: wobbly}}
    name: a
  - box: {{size: [1, 1, 1]}}
    name: b
  - boxes: {{instances: [{{pose: {{}}, size: [1, 1, -1]}}, {{size: [1, 1, 1], pose: {{}}, colour: [1, 1, 1]}}]}}
  - cylinder: {{pose: {{}}, radius: 0.1, height: 0.0, mass: -1}}
"
    ));
    assert_contains(&msg, "components.a.motion: unknown variant `wobbly`, expected one of `static`, `driven`, `physics` (box)");
    assert_contains(&msg, "components.b: missing field `pose` (box)");
    assert_contains(&msg, "components.boxes.instances[0].size: full extents [x, y, z] must all be in (0, 10000] m, got [1, 1, -1] (boxes)");
    assert_contains(&msg, "components.boxes.instances[1].colour: unknown field `colour`");
    assert_contains(
        &msg,
        "components.cylinder.height: the full height must be in (0, 10000] m, got 0 (cylinder)",
    );
    assert_contains(
        &msg,
        "components.cylinder.mass: must be in (0, 1000000000] kg, got -1 (cylinder)",
    );
    let msg = refusal(&format!("{SIM}components:\n  - box: {{pose: {{}}, size: [0.4, 0.2, 0.8], color: [1, 0]}}\n    name: a\n"));
    assert_contains(
        &msg,
        "components.a.color: a colour is [r, g, b] or [r, g, b, a] in 0..1, got 2 values (box)",
    );
}

fn prop_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("crate.xml"),
        "<mujoco><worldbody><body name=\"crate\"><geom name=\"shell\" type=\"box\" size=\"0.1 0.1 0.1\" pos=\"0 0 0.1\"/><geom name=\"lid\" type=\"box\" size=\"0.1 0.1 0.01\" pos=\"0 0 0.21\" mass=\"0.5\"/></body></worldbody></mujoco>",
    )
    .unwrap();
    dir
}

#[test]
fn spawn_model_props() {
    let dir = prop_dir();
    let mut e = engine_in(
        &format!(
            "{SIM}components:
  - spawn_model: {{model: crate.xml, prefix: a_, pose: {{position: {{x: 1.0}}, orientation: {{yaw: 1.5707963267948966}}}}, publish_tf: static}}
    name: table
  - spawn_model: {{model: crate.xml, prefix: b_, pose: {{position: {{x: -1.0}}}}, motion: physics, mass: 3.0, friction: [0.7, 0.01, 0.001], publish_tf: dynamic, tf_rate: 50}}
    name: box
  - spawn_model: {{model: crate.xml, prefix: c_, pose: {{position: {{y: 2.0}}}}, scale: 2.0}}
    name: big
"
        ),
        dir.path(),
    );
    let m = e.ctx.model();
    let b = m.name_to_id(MjtObjBase::mjOBJ_BODY, "b_crate").unwrap();
    assert!((m.body_mass()[b] - 3.0).abs() < 1e-9, "mass rescaled to 3 kg: {}", m.body_mass()[b]);
    // proportion kept: the shell (8 kg at density 1000) and the lid (0.5 kg) scale alike
    let shell = m.name_to_id(MjtObjBase::mjOBJ_GEOM, "b_shell").unwrap();
    assert!(close(&m.geom_friction()[shell], &[0.7, 0.01, 0.001], 1e-12));
    let big = m.name_to_id(MjtObjBase::mjOBJ_GEOM, "c_shell").unwrap();
    assert!(
        close(&m.geom_size()[big], &[0.2, 0.2, 0.2], 1e-12),
        "scale 2: {:?}",
        m.geom_size()[big]
    );
    assert!(close(&m.geom_pos()[big], &[0.0, 0.0, 0.2], 1e-12));
    assert_eq!(e.ctx.entities.get("box").unwrap().free_joint.as_deref(), Some("b_crate_free"));
    assert!(e.ctx.entities.get("table").unwrap().weld_reason.is_some());
    let t = tf_of(&e, "table");
    assert_eq!((t[0].parent.as_str(), t[0].child.as_str()), ("world", "a_crate"));
    assert!(close(&t[0].translation, &[1.0, 0.0, 0.0], 1e-12));
    e.step_n(25).unwrap();
    let ep = e
        .ctx
        .interface
        .all()
        .iter()
        .find(|ep| ep.name == "tf" && ep.owner.as_deref() == Some("box"))
        .unwrap();
    assert_eq!(ep.get_hint("ros2", "tf"), Some("dynamic"));
    match ep.latest() {
        Some((Payload::Transforms(t), tick)) => {
            assert_eq!(tick, 20, "50 Hz on a 500 Hz grid: every 10 steps");
            assert_eq!(t[0].child, "b_crate");
            assert!((t[0].translation[0] + 1.0).abs() < 1e-6);
        }
        other => panic!("{other:?}"),
    }
    let msg = refusal_in(&format!("{SIM}components:\n  - spawn_model: {{model: crate.xml, mocap: true, motion: physics, publish_tf: sometimes, scale: 0}}\n    name: p\n"), dir.path());
    assert_contains(&msg, "components.p.mocap: `mocap: true` is `motion: driven`, which contradicts `motion: physics`; keep one (spawn_model)");
    assert_contains(&msg, "components.p.publish_tf: one of false, static, dynamic (or true)");
    assert_contains(
        &msg,
        "components.p.scale: a uniform scale factor must be in (0, 1000], got 0 (spawn_model)",
    );
}

// ----------------------------------------------------------------------------------------------
// floorplan
// ----------------------------------------------------------------------------------------------

const TWO_ROOMS: &str = "
  - floorplan:
      lines:
        - {id: 0, x0_m: 0.0, y0_m: 0.0, x1_m: 10.0, y1_m: 0.0}
        - {id: 1, x0_m: 10.0, y0_m: 0.0, x1_m: 10.0, y1_m: 4.0}
        - {id: 2, x0_m: 10.0, y0_m: 4.0, x1_m: 0.0, y1_m: 4.0}
        - {id: 3, x0_m: 0.0, y0_m: 4.0, x1_m: 0.0, y1_m: 0.0}
        - {id: 4, x0_m: 5.0, y0_m: 0.0, x1_m: 5.0, y1_m: 4.0}
      doors: [{line_id: 4, t: 0.5, width_m: 0.9}]
      height: 2.5
      opening_height: 2.0
";

/// Distance along +x from (x, y, z) to the first geom (m), or None.
fn ray_x(e: &mut Engine, from: [f64; 3]) -> Option<(f64, String)> {
    ray_x_excluding(e, from, None)
}

fn ray_x_excluding(
    e: &mut Engine,
    from: [f64; 3],
    exclude: Option<usize>,
) -> Option<(f64, String)> {
    let mut rays = RayBatch::new(1);
    rays.dirs_mut().copy_from_slice(&[1.0, 0.0, 0.0]);
    rays.cast(e.ctx.data_mut(), from, exclude, None, true, 50.0);
    let g = rays.geom()[0];
    (g >= 0).then(|| {
        (
            rays.dist()[0],
            e.ctx.model().id_to_name(MjtObjBase::mjOBJ_GEOM, g as usize).unwrap_or("?").to_string(),
        )
    })
}

#[test]
fn floorplan_builds_walls_with_a_door_gap() {
    let mut e = engine(&format!("{SIM}components:{TWO_ROOMS}"));
    let m = e.ctx.model();
    assert!(m.name_to_id(MjtObjBase::mjOBJ_GEOM, "floor").is_some());
    assert!(
        m.name_to_id(MjtObjBase::mjOBJ_GEOM, "wall_north").is_none(),
        "the empty room is not built"
    );
    // Through the door at mid height: the far wall (face at 9.94).
    let (d, g) = ray_x(&mut e, [2.0, 2.0, 1.0]).unwrap();
    assert_eq!(g, "wall_1_0");
    assert!((d - 7.94).abs() < 1e-9, "{d}");
    // Beside the door: the divider (face at 4.94).
    let (d, g) = ray_x(&mut e, [2.0, 1.0, 1.0]).unwrap();
    assert_eq!(g, "wall_4_0");
    assert!((d - 2.94).abs() < 1e-9, "{d}");
    // Above the opening: the lintel.
    let (d, g) = ray_x(&mut e, [2.0, 2.0, 2.2]).unwrap();
    assert_eq!(g, "wall_4_lintel_0");
    assert!((d - 2.94).abs() < 1e-9);
    // Without gravity, a puck thrown at the door flies through; one thrown beside it stops.
    let mut e = engine(&format!(
        "sim: {{timestep: 0.002, seed: 1, gravity: [0, 0, 0]}}\ncomponents:{TWO_ROOMS}  - cylinder: {{pose: {{position: {{x: 4.0, y: 2.0, z: 1.0}}}}, radius: 0.2, height: 0.3, motion: physics}}\n    name: through\n  - cylinder: {{pose: {{position: {{x: 4.0, y: 1.0, z: 1.0}}}}, radius: 0.2, height: 0.3, motion: physics}}\n    name: beside\n"
    ));
    for puck in ["through", "beside"] {
        let adr = {
            let m = e.ctx.model();
            let j = m.name_to_id(MjtObjBase::mjOBJ_JOINT, &format!("{puck}_free")).unwrap();
            m.jnt_dofadr()[j] as usize
        };
        e.ctx.data_mut().qvel_mut()[adr] = 3.0;
    }
    e.step_n(500).unwrap();
    let x = body_pose(&e, "through").0[0];
    assert!(x > 6.5, "the puck went through the 0.9 m door: x {x}");
    let x = body_pose(&e, "beside").0[0];
    assert!(x < 4.94 - 0.2 + 0.01, "the wall stopped the other: x {x}");
}

#[test]
fn floorplan_from_a_json_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("rooms.json"),
        r#"{"lines": [{"id": 7, "x0_m": 0, "y0_m": 0, "x1_m": 0, "y1_m": 6}], "doors": [{"line_id": 7, "t": 0.25, "width_m": 1.0}]}"#,
    )
    .unwrap();
    let mut e = engine_in(
        &format!("{SIM}components:\n  - floorplan: {{floorplan: rooms.json, thickness: 0.2}}\n"),
        dir.path(),
    );
    let m = e.ctx.model();
    let g = m.name_to_id(MjtObjBase::mjOBJ_GEOM, "wall_7_0").unwrap();
    // the piece below the door: from -0.1 to 1.0 along the wall
    assert!((m.geom_size()[g][0] - 0.55).abs() < 1e-9 && (m.geom_size()[g][1] - 0.1).abs() < 1e-9);
    assert!(ray_x(&mut e, [-1.0, 1.5, 1.0]).is_none(), "the door at y 1.0..2.0 is open");
    let (d, _) = ray_x(&mut e, [-1.0, 3.0, 1.0]).unwrap();
    assert!((d - 0.9).abs() < 1e-9);
}

#[test]
fn floorplan_refusals() {
    let msg = refusal(&format!("{SIM}components:\n  - floorplan: {{height: 3.0}}\n"));
    assert_contains(&msg, "components.floorplan: floorplan needs one source for its building: `lines:` (wall segments) or `floorplan: <file.json>` (or `mesh:`); it names neither (floorplan)");
    let msg = refusal(&format!("{SIM}components:\n  - floorplan: {{mesh: house.stl, lines: [{{id: 0, x0_m: 0, y0_m: 0, x1_m: 1, y1_m: 0}}]}}\n"));
    assert_contains(&msg, "components.floorplan.floorplan: `mesh` and `lines` are two sources for one building; name exactly one of `lines:`, `floorplan:` or `mesh:` (floorplan)".replace(".floorplan: `mesh`", ".lines: `mesh`").as_str());
    let msg = refusal(&format!("{SIM}components:\n  - floorplan: {{mesh: house.stl}}\n"));
    assert_contains(
        &msg,
        &format!(
            "components.floorplan.mesh: `house.stl`: no file `{}` (floorplan)",
            base().join("house.stl").display()
        ),
    );
    let msg = refusal(&format!(
        "{SIM}components:
  - floorplan:
      lines: [{{id: 0, x0_m: 0, y0_m: 0, x1_m: 2, y1_m: 0}}, {{id: 0, x0_m: 0, y0_m: 1, x1_m: 0, y1_m: 1}}]
      doors: [{{line_id: 3, t: 0.5, width_m: 0.9}}, {{line_id: 0, t: 0.1, width_m: 0.9}}]
      opening_height: 3.0
      floor: {{texture: roqsim_assets:Concrete030}}
"
    ));
    assert_contains(&msg, "components.floorplan.lines[1]: wall `0` has zero length (floorplan)");
    assert_contains(
        &msg,
        "components.floorplan.lines[1].id: id 0 is used by two walls; ids must be distinct",
    );
    assert_contains(&msg, "components.floorplan.doors[0].line_id: no wall has id 3; ids: 0, 0");
    assert_contains(&msg, "components.floorplan.doors[1].width_m: a 0.9 m door at t = 0.1 runs past the end of wall 0 (2.000 m long)");
    assert_contains(
        &msg,
        "components.floorplan.opening_height: must be > 0 and <= height (2.5 m), got 3",
    );
    assert_contains(&msg, "components.floorplan.floor.texture: `roqsim_assets:Concrete030`: package `roqsim_assets` not found on AMENT_PREFIX_PATH or ROS_PACKAGE_PATH; source the workspace that installs it, or give a PNG path");
    let msg = refusal(&format!("{SIM}components:{TWO_ROOMS}  - floorplan: {{lines: [{{id: 0, x0_m: 0, y0_m: 0, x1_m: 1, y1_m: 0}}]}}\n    name: second\n"));
    assert_contains(&msg, "two plugins build a ground and light (floorplan, second); keep one");
}

// ----------------------------------------------------------------------------------------------
// bundled worlds
// ----------------------------------------------------------------------------------------------

#[test]
fn bundled_worlds_load() {
    for (file, entities) in [
        ("turtlebot_empty.yaml", vec!["robot", "robot.rplidar"]),
        ("turtlebot_floorplan.yaml", vec!["crate", "parcel", "bin", "robot", "robot.rplidar"]),
    ] {
        let path = base().join(file);
        let w = roqsim::load_world(&path, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let e = Engine::new(w, EngineOptions { profile: false, seed: Some(1) })
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(e.ctx.entities.names(), entities, "{file}");
    }
    let w = roqsim::load_world(&base().join("four_bases.yaml"), &LoadOptions::default()).unwrap();
    let e = Engine::new(w, EngineOptions { profile: false, seed: Some(1) }).unwrap();
    let ns: Vec<(String, String)> = e
        .ctx
        .entities
        .all()
        .iter()
        .filter(|x| x.kind == EntityKind::Robot)
        .map(|x| (x.name.clone(), x.namespace.clone()))
        .collect();
    assert_eq!(
        ns,
        vec![
            ("turtlebot".into(), "robot1".into()),
            ("husky".into(), "robot2".into()),
            ("omni".into(), "robot3".into()),
            ("car".into(), "robot4".into())
        ]
    );
}

#[test]
fn floorplan_world_robot_faces_the_divider_two_metres_from_its_scanner() {
    let path = base().join("turtlebot_floorplan.yaml");
    let w = roqsim::load_world(&path, &LoadOptions::default()).unwrap();
    let mut e = Engine::new(w, EngineOptions { profile: false, seed: Some(1) }).unwrap();
    e.step_n(100).unwrap();
    let m = e.ctx.model();
    let s = m.name_to_id(MjtObjBase::mjOBJ_SITE, "rplidar_laser").unwrap();
    let p = e.ctx.data().site_xpos()[s];
    let mount = m.name_to_id(MjtObjBase::mjOBJ_BODY, "rplidar_mount");
    let (d, g) = ray_x_excluding(&mut e, p, mount).unwrap();
    assert_eq!(g, "wall_4_0");
    assert!((d - 2.0).abs() < 0.002, "scanner to the divider: {d}");
}

#[test]
fn mesh_refs_resolve_from_the_models_own_dir() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("tet");
    std::fs::create_dir_all(m.join("meshes")).unwrap();
    std::fs::write(
        m.join("meshes/tet.obj"),
        "v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n",
    )
    .unwrap();
    std::fs::write(
        m.join("tet.xml"),
        "<mujoco><compiler meshdir=\"meshes\"/><asset><mesh name=\"tet\" file=\"tet.obj\"/></asset><worldbody><body name=\"tet\"><geom type=\"mesh\" mesh=\"tet\"/></body></worldbody></mujoco>",
    )
    .unwrap();
    let xml = m.join("tet.xml");
    let loaded = roqsim::spawn::load_model(xml.to_str().unwrap(), &base()).unwrap();
    let file = loaded.spec.mesh_iter().next().unwrap().file().to_string();
    assert_eq!(
        Path::new(&file),
        m.join("meshes/tet.obj").canonicalize().unwrap_or(m.join("meshes/tet.obj"))
    );
    // The world lives elsewhere (worlds/): the prop still compiles, twice, under two prefixes.
    let e = engine(&format!(
        "{SIM}components:\n  - spawn_model: {{model: {0}, prefix: a_}}\n    name: a\n  - spawn_model: {{model: {0}, prefix: b_, pose: {{position: {{x: 1}}}}}}\n    name: b\n",
        xml.display()
    ));
    assert_eq!(e.ctx.model().ffi().nmesh, 2);
}

#[test]
fn top_level_mount_attached_to_a_spawned_body_rides_it() {
    let mut e = engine(&format!(
        "{SIM}components:
  - spawn_robot: {{model: turtlebot4, prefix: r1_, default_plugins: false, pose: {{position: {{x: 1.0}}, orientation: {{yaw: 1.5707963267948966}}}}}}
    name: robot
  - spawn_sensor: {{model: rplidar_a1, attach_to: base_link, attach_prefix: r1_, pos: [0.1, 0, 0.4], frame_id: mast_laser, default_plugins: false}}
    name: mast
"
    ));
    let ent = e.ctx.entities.get("mast").unwrap();
    assert_eq!(ent.prefix, "r1_mast_");
    assert_eq!(
        ent.weld_reason.as_deref(),
        Some("mounted on `r1_base_link` (welded to its carrier; it moves with it)")
    );
    let t = tf_of(&e, "mast");
    assert_eq!((t[0].parent.as_str(), t[0].child.as_str()), ("base_link", "mast_laser"));
    e.step_n(100).unwrap();
    let (p, _) = body_pose(&e, "r1_mast_mount");
    // base at (1, 0, 0) turned +90°: the mount's +0.1 m x lands on world +y.
    assert!(close(&p, &[1.0, 0.1, 0.4], 0.003), "{p:?}");
    let msg = refusal(&format!(
        "{SIM}components:\n  - spawn_sensor: {{model: rplidar_a1, attach_to: chassis, default_plugins: false}}\n    name: mast\n"
    ));
    assert_contains(&msg, "attach_to: no body `chassis` (attach_prefix `` + `chassis`) has been spawned before this mount; bodies: (none)");
}
