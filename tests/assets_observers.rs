//! Assets (conveyor, door), payload and the observation plugins (contact_monitor, bumper,
//! clearance_monitor, energy_monitor, upright_monitor). ROS-free; every test asserts measured
//! values, payload contents or exact refusal texts.

use std::path::{Path, PathBuf};

use mujoco_rs::prelude::MjtObjBase;
use roqsim::context::payload::Payload;
use roqsim::{load_world_str, Engine, EngineOptions, LoadOptions};

fn base() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("worlds")
}

fn engine(yaml: &str) -> Engine {
    let w = load_world_str(yaml, &base(), &LoadOptions::default()).unwrap_or_else(|e| panic!("load failed: {e}"));
    Engine::new(w, EngineOptions { profile: false, seed: Some(1) }).unwrap_or_else(|e| panic!("engine failed: {e}"))
}

/// The refusal text of a world that must not load or set up.
fn refusal(yaml: &str) -> String {
    match load_world_str(yaml, &base(), &LoadOptions::default()) {
        Err(e) => e.to_string(),
        Ok(w) => match Engine::new(w, EngineOptions { profile: false, seed: Some(1) }) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("expected a refusal for:\n{yaml}"),
        },
    }
}

fn assert_has(text: &str, needles: &[&str]) {
    for n in needles {
        assert!(text.contains(n), "missing `{n}` in:\n{text}");
    }
}

fn body_pos(e: &Engine, name: &str) -> [f64; 3] {
    let id = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_BODY, name).unwrap_or_else(|| panic!("no body {name}"));
    e.ctx.data().xpos()[id]
}

fn endpoint(e: &Engine, ns: &str, name: &str) -> usize {
    e.ctx.interface.all().iter().position(|ep| ep.name == name && ep.namespace == ns).unwrap_or_else(|| {
        let have: Vec<String> = e.ctx.interface.all().iter().map(|ep| format!("{}/{}", ep.namespace, ep.name)).collect();
        panic!("no endpoint {ns}/{name}; have {have:?}")
    })
}

fn secs(e: &mut Engine, s: f64) {
    let n = (s / e.dt()).round() as u64;
    e.step_n(n).unwrap();
}

// ------------------------------------------------------------------------------------ conveyor

const BELT: &str = "sim: {timestep: 0.002}
components:
  - conveyor: {pos: [0.0, 0.0, 0.0], length: 3.0, width: 0.6, height: 0.5, speed: 0.3, namespace: belt}
    name: belt
  - box: {pose: {position: {x: -1.2, y: 0.0, z: 0.6}}, size: [0.2, 0.2, 0.2], motion: physics, mass: 1.0}
    name: parcel
";

#[test]
fn conveyor_carries_a_box_and_stops_on_command() {
    let mut e = engine(BELT);
    secs(&mut e, 0.5); // drop onto the belt and pick up its speed
    let x0 = body_pos(&e, "parcel")[0];
    secs(&mut e, 5.0);
    let x1 = body_pos(&e, "parcel")[0];
    let travelled = x1 - x0;
    eprintln!("travelled {travelled:.4} m in 5 s");
    assert!((travelled - 1.5).abs() < 0.1, "travelled {travelled} m in 5 s at 0.3 m/s");
    // a commanded stop stops it
    let id = endpoint(&e, "belt", "speed");
    e.ctx.interface.deliver(id, Payload::Float64(0.0));
    secs(&mut e, 0.3);
    let xs = body_pos(&e, "parcel")[0];
    secs(&mut e, 1.0);
    let moved = (body_pos(&e, "parcel")[0] - xs).abs();
    eprintln!("after stop: moved {moved:.6} m in 1 s");
    assert!(moved < 0.002, "moved {moved} m after the stop");
}

// ---------------------------------------------------------------------------------------- door

fn door_world(extra: &str) -> String {
    format!(
        "sim: {{timestep: 0.002}}
components:
  - door: {{pos: [0.0, 0.0], width: 0.9, height: 2.0}}
    name: door_1
{extra}"
    )
}

fn door(e: &Engine) -> roqsim::plugins::assets::door::DoorHandle {
    e.ctx.blackboard.get::<roqsim::plugins::assets::door::DoorHandle>("door:door_1").unwrap().clone()
}

fn hinge_deg(e: &Engine) -> f64 {
    let j = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_JOINT, "door_1_hinge").unwrap();
    e.ctx.data().qpos()[e.ctx.model().jnt_qposadr()[j] as usize].to_degrees()
}

#[test]
fn door_opens_to_its_target_and_reports_state() {
    let mut e = engine(&door_world(""));
    let ent = e.ctx.entities.get("door_1").unwrap();
    assert_eq!(ent.kind, roqsim::context::EntityKind::Door);
    assert_eq!(ent.body, "door_1");
    let cmd = endpoint(&e, "door_1", "cmd");
    let state = endpoint(&e, "door_1", "state");
    assert_eq!(e.ctx.interface.get(cmd).get_hint("ros2", "type"), Some("std_msgs/msg/Float64"));
    e.ctx.interface.deliver(cmd, Payload::Float64(0.5));
    let mut peak: f64 = 0.0;
    for _ in 0..2000 {
        e.step().unwrap();
        peak = peak.max(hinge_deg(&e));
    }
    let deg = hinge_deg(&e);
    let (p, _) = e.ctx.interface.get(state).latest().unwrap();
    eprintln!("door at {deg:.2} deg (peak {peak:.2}), state {p:?}, handle {}", door(&e).openness());
    assert!((deg - 60.0).abs() < 1.0, "hinge at {deg} deg, target 60");
    match p {
        Payload::Float64(f) => assert!((f - 0.5).abs() < 0.01, "state {f}"),
        other => panic!("state payload {other:?}"),
    }
    assert!(!door(&e).stalled());
    // close again
    e.ctx.interface.deliver(cmd, Payload::Float64(0.0));
    secs(&mut e, 4.0);
    assert!(hinge_deg(&e).abs() < 1.0, "closed at {} deg", hinge_deg(&e));
}

#[test]
fn door_backs_off_against_a_blocking_box() {
    // a welded crate in the swing path: the leaf meets it at ~30 deg
    let mut e = engine(&door_world(
        "  - box: {pose: {position: {x: 0.25, y: 0.55}}, size: [0.2, 0.2, 1.0]}
    name: crate
",
    ));
    let h = door(&e);
    h.set_open(1.0);
    let act = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_ACTUATOR, "door_1_actuator").unwrap();
    let mut peak_force: f64 = 0.0;
    let mut stall_deg = f64::NAN;
    for _ in 0..2500 {
        e.step().unwrap();
        peak_force = peak_force.max(e.ctx.data().actuator_force()[act].abs());
        if h.stalled() && stall_deg.is_nan() {
            stall_deg = hinge_deg(&e);
        }
    }
    let deg = hinge_deg(&e);
    let force = e.ctx.data().actuator_force()[act];
    eprintln!("peak force {peak_force:.2} N·m, stalled at {stall_deg:.2} deg, now {deg:.2} deg, force {force:.3}");
    assert!(h.stalled(), "the door never stalled");
    assert!((peak_force - 30.0).abs() < 0.01, "it pushed with {peak_force} N·m, the limit is 30");
    assert!(deg < 30.0 && deg > 15.0, "backed off to {deg} deg");
    assert!(force.abs() < 3.0, "still pushing with {force} N·m after backing off");
    // a new command clears the stall
    h.set_open(0.0);
    e.step().unwrap();
    assert!(!h.stalled());
}

// ------------------------------------------------------------------------------------- payload

fn tb_payload(extra: &str) -> String {
    format!(
        "sim: {{timestep: 0.002}}
components:
  - spawn_robot: {{model: turtlebot4}}
    name: robot
    components:
      - diff_drive: {{}}
        enabled: false
      - imu: {{}}
        enabled: false
      - spawn_sensor: {{}}
        name: rplidar
        components:
          - lidar: {{}}
            enabled: false
{extra}"
    )
}

fn model_bytes(e: &Engine) -> Vec<u8> {
    let m = e.ctx.model();
    let mut buf = vec![0u8; m.size()];
    m.save_to_buffer(&mut buf).unwrap();
    buf
}

#[test]
fn payload_adds_a_point_mass_and_zero_leaves_the_model_identical() {
    let bare = engine(&tb_payload(""));
    let zero = engine(&tb_payload("      - payload: {mass: 0.0}\n"));
    let a = model_bytes(&bare);
    let b = model_bytes(&zero);
    assert_eq!(a.len(), b.len());
    assert!(a == b, "mass 0 changed the compiled model");

    let loaded = engine(&tb_payload("      - payload: {mass: 2.5}\n"));
    let m0 = bare.ctx.model();
    let m1 = loaded.ctx.model();
    let root = m0.name_to_id(MjtObjBase::mjOBJ_BODY, "base_link").unwrap();
    assert!((m1.body_mass()[root] - m0.body_mass()[root] - 2.5).abs() < 1e-12);
    // mj_setConst re-derived the subtree mass; the inertia (a point mass at the COM) is unchanged
    assert!((m1.body_subtreemass()[root] - m0.body_subtreemass()[root] - 2.5).abs() < 1e-9, "{} vs {}", m1.body_subtreemass()[root], m0.body_subtreemass()[root]);
    assert_eq!(m1.body_inertia()[root], m0.body_inertia()[root]);
    // another body, by its model name
    let wheel = engine(&tb_payload("      - payload: {mass: 0.5, body: left_wheel}\n"));
    let w = m0.name_to_id(MjtObjBase::mjOBJ_BODY, "left_wheel").unwrap();
    assert!((wheel.ctx.model().body_mass()[w] - m0.body_mass()[w] - 0.5).abs() < 1e-12);
}

#[test]
fn payload_refusals() {
    let t = refusal(&tb_payload("      - payload: {mass: 1.0, offset: [0.1, 0.0, 0.0]}\n"));
    assert_has(&t, &["offset", "refused rather than approximated", "parallel-axis", "a different body, not a heavier one"]);
    let t = refusal(&tb_payload("      - payload: {mass: -1.0}\n"));
    assert_has(&t, &["mass", "must be a finite number >= 0 (kg), got -1"]);
    let t = refusal(&tb_payload("      - payload: {body: base_link}\n"));
    assert_has(&t, &["mass"]);
    let t = refusal(&tb_payload("      - payload: {mass: 1.0, body: tray}\n"));
    assert_has(&t, &["body: entity `robot` has no body `tray`", "left_wheel"]);
    let t = refusal("sim: {timestep: 0.002}\ncomponents:\n  - payload: {mass: 1.0}\n");
    assert_has(&t, &["requires_owner"]);
}
