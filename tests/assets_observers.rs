//! Assets (conveyor, door), payload and the observation plugins (contact_monitor, bumper,
//! clearance_monitor, energy_monitor, upright_monitor). ROS-free; every test asserts measured
//! values, payload contents or exact refusal texts.

use mujoco_rs::prelude::MjtObjBase;
use roqsim::context::payload::Payload;
use roqsim::{Engine, EngineOptions, LoadOptions};

mod common;
use common::*;

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
    let id = endpoint_in(&e, "belt", "speed");
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
    e.ctx
        .blackboard
        .get::<roqsim::plugins::assets::door::DoorHandle>("door:door_1")
        .unwrap()
        .clone()
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
    let cmd = endpoint_in(&e, "door_1", "cmd");
    let state = endpoint_in(&e, "door_1", "state");
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
    // the leaf meets the crate at ~23 deg and holds 0.1 rad (5.73 deg) back from it
    assert!(stall_deg > 20.0 && stall_deg < 26.0, "stalled at {stall_deg} deg");
    assert!((stall_deg - deg - 5.73).abs() < 0.5, "backed off to {deg} deg from {stall_deg}");
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
    assert!(
        (m1.body_subtreemass()[root] - m0.body_subtreemass()[root] - 2.5).abs() < 1e-9,
        "{} vs {}",
        m1.body_subtreemass()[root],
        m0.body_subtreemass()[root]
    );
    assert_eq!(m1.body_inertia()[root], m0.body_inertia()[root]);
    // another body, by its model name
    let wheel = engine(&tb_payload("      - payload: {mass: 0.5, body: left_wheel}\n"));
    let w = m0.name_to_id(MjtObjBase::mjOBJ_BODY, "left_wheel").unwrap();
    assert!((wheel.ctx.model().body_mass()[w] - m0.body_mass()[w] - 0.5).abs() < 1e-12);
}

#[test]
fn payload_refusals() {
    let t = refusal(&tb_payload("      - payload: {mass: 1.0, offset: [0.1, 0.0, 0.0]}\n"));
    assert_has(
        &t,
        &[
            "offset",
            "refused rather than approximated",
            "parallel-axis",
            "a different body, not a heavier one",
        ],
    );
    let t = refusal(&tb_payload("      - payload: {mass: -1.0}\n"));
    assert_has(&t, &["mass", "must be in [0, 1e9] kg, got -1"]);
    let t = refusal(&tb_payload("      - payload: {body: base_link}\n"));
    assert_has(&t, &["mass"]);
    let t = refusal(&tb_payload("      - payload: {mass: 1.0, body: tray}\n"));
    assert_has(&t, &["body: entity `robot` has no body `tray`", "left_wheel"]);
    let t = refusal("sim: {timestep: 0.002}\ncomponents:\n  - payload: {mass: 1.0}\n");
    assert_has(&t, &["requires_owner"]);
}

// ------------------------------------------------------------------------------------ observers

/// A TurtleBot 4 (drive on, sensors off) heading +x at a welded crate whose near face is at
/// x = 0.8 m, with every observer nested under it.
fn tb_observed(observers: &str) -> String {
    format!(
        "sim: {{timestep: 0.002}}
components:
  - box: {{pose: {{position: {{x: 1.0, y: 0.0}}}}, size: [0.4, 0.4, 0.5]}}
    name: crate
  - spawn_robot: {{model: turtlebot4}}
    name: robot
    components:
      - imu: {{}}
        enabled: false
      - spawn_sensor: {{}}
        name: rplidar
        components:
          - lidar: {{}}
            enabled: false
{observers}"
    )
}

fn drive(e: &mut Engine, v: f64, secs_: f64) {
    let id = endpoint_in(e, "", "cmd_vel");
    let n = (secs_ / e.dt()).round() as u64;
    for i in 0..n {
        if i % 10 == 0 {
            e.ctx.interface.deliver(
                id,
                Payload::Twist(roqsim::context::payload::Twist {
                    linear: [v, 0.0, 0.0],
                    angular: [0.0; 3],
                }),
            );
        }
        e.step().unwrap();
    }
}

fn latest(e: &Engine, ns: &str, name: &str) -> Payload {
    e.ctx
        .interface
        .get(endpoint_in(e, ns, name))
        .latest()
        .unwrap_or_else(|| panic!("{name} never published"))
        .0
        .clone()
}

#[test]
fn observers_report_a_collision_its_zone_and_the_closest_approach() {
    let mut e = engine(&tb_observed(
        "      - contact_monitor: {}
      - bumper: {}
      - clearance_monitor: {compute_rate_hz: 100.0}
      - upright_monitor: {}
",
    ));
    // endpoints and hints
    let c = e.ctx.interface.get(endpoint_in(&e, "", "contact"));
    assert_eq!(c.get_hint("ros2", "type"), Some("std_msgs/msg/Bool"));
    assert_eq!(c.get_hint("ros2", "field"), Some("in_contact"));
    assert_eq!(c.get_hint("ros2", "topic"), Some("collision"));
    assert_eq!(c.owner.as_deref(), Some("robot"));
    for z in ["front", "left", "right"] {
        let b = e.ctx.interface.get(endpoint_in(&e, "", &format!("bumper/{z}")));
        assert_eq!(b.get_hint("ros2", "type"), Some("std_msgs/msg/Bool"));
    }
    assert_eq!(
        e.ctx.interface.get(endpoint_in(&e, "", "upright")).get_hint("ros2", "field"),
        Some("upright")
    );

    // before contact: clear, not pressed, and the measured clearance is the gap to the crate
    e.step_n(50).unwrap();
    let cl = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::observe::clearance_monitor::ClearanceReader>(
            "clearance_monitor:robot.clearance_monitor",
        )
        .unwrap()
        .get();
    eprintln!("initial clearance {cl:?}");
    assert!(!cl.saturated && cl.geom == "crate", "{cl:?}");
    // the bumper shell (radius 0.1694 m, centred 0.01 m ahead of base_link) to the crate face at 0.8 m
    assert!((cl.current - (0.8 - 0.01 - 0.1694)).abs() < 0.01, "clearance {}", cl.current);
    match latest(&e, "", "contact") {
        Payload::ContactReport(r) => {
            assert!(!r.in_contact && r.first_time == -1.0 && r.count == 0, "{r:?}")
        }
        p => panic!("{p:?}"),
    }

    drive(&mut e, 0.3, 3.5);
    let r = match latest(&e, "", "contact") {
        Payload::ContactReport(r) => r,
        p => panic!("{p:?}"),
    };
    eprintln!("contact {r:?}");
    assert!(r.in_contact && r.first_time > 1.5 && r.first_time < 3.5, "{r:?}");
    assert_eq!(r.geom_b, "crate");
    assert_eq!(Payload::ContactReport(r.clone()).member("in_contact"), Some(Payload::Bool(true)));
    let bump = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::observe::bumper::BumperReader>("bumper:robot.bumper")
        .unwrap()
        .get();
    eprintln!("bumper {bump:?}");
    assert!(bump.pressed["front"] && !bump.pressed["left"] && !bump.pressed["right"], "{bump:?}");
    assert!(bump.bearing.unwrap().abs() < 0.2);
    assert_eq!(latest(&e, "", "bumper/front"), Payload::Bool(true));
    let cl = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::observe::clearance_monitor::ClearanceReader>(
            "clearance_monitor:robot.clearance_monitor",
        )
        .unwrap()
        .get();
    eprintln!("clearance at contact {cl:?}");
    assert!(cl.minimum < 0.002 && cl.geom == "crate" && cl.at_time > 1.5, "{cl:?}");

    // back off: the bumper releases, the contact monitor stays latched
    drive(&mut e, -0.3, 1.0);
    let bump = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::observe::bumper::BumperReader>("bumper:robot.bumper")
        .unwrap()
        .get();
    assert!(!bump.pressed["front"], "{bump:?}");
    match latest(&e, "", "contact") {
        Payload::ContactReport(r2) => {
            assert!(r2.in_contact && r2.count == 0 && r2.first_time == r.first_time, "{r2:?}")
        }
        p => panic!("{p:?}"),
    }
    let cl2 = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::observe::clearance_monitor::ClearanceReader>(
            "clearance_monitor:robot.clearance_monitor",
        )
        .unwrap()
        .get();
    assert!(cl2.current > 0.1 && cl2.minimum == cl.minimum, "{cl2:?}");
    // the robot stayed in the plane
    match latest(&e, "", "upright") {
        Payload::UprightReport(u) => {
            eprintln!("upright {u:?}");
            assert!(u.upright && u.settled && u.tilt_deg < 5.0 && u.rise_m.abs() < 0.01, "{u:?}");
        }
        p => panic!("{p:?}"),
    }
    // re-spawning the robot (it GAINS presence) restarts the report
    roqsim::engine::presence::set_present(&mut e.ctx, "robot", false).unwrap();
    e.step().unwrap();
    roqsim::engine::presence::set_present(&mut e.ctx, "robot", true).unwrap();
    e.step().unwrap();
    let r = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::observe::contact_monitor::ContactReader>(
            "contact_monitor:robot.contact_monitor",
        )
        .unwrap()
        .get();
    assert!(!r.in_contact && r.first_time == -1.0, "{r:?}");
    // reset clears the latched report
    drive(&mut e, 0.3, 0.2);
    e.reset().unwrap();
    e.step().unwrap();
    let r = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::observe::contact_monitor::ContactReader>(
            "contact_monitor:robot.contact_monitor",
        )
        .unwrap()
        .get();
    assert!(!r.in_contact && r.first_time == -1.0 && r.geom_a.is_empty(), "{r:?}");
}

#[test]
fn clearance_skips_render_only_geoms_and_saturates_beyond_distmax() {
    let yaml = tb_observed("      - clearance_monitor: {distmax: 2.0}\n").replace(
        "    name: crate\n",
        "    name: crate\n  - box: {pose: {position: {x: 0.5, y: 0.0}}, size: [0.2, 0.2, 0.3], collide: false}\n    name: ghost\n",
    );
    let mut e = engine(&yaml);
    e.step_n(10).unwrap();
    let key = "clearance_monitor:robot.clearance_monitor";
    let cl = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::observe::clearance_monitor::ClearanceReader>(key)
        .unwrap()
        .get();
    // the ghost's face is 0.22 m away but it pairs with nothing: the crate is what counts
    assert_eq!(cl.geom, "crate", "{cl:?}");
    assert!((cl.current - 0.6206).abs() < 0.005, "{cl:?}");
    // a short cutoff: nothing within 0.3 m -> saturated, current == distmax
    let mut e = engine(&tb_observed("      - clearance_monitor: {distmax: 0.3}\n"));
    e.step_n(10).unwrap();
    let cl = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::observe::clearance_monitor::ClearanceReader>(key)
        .unwrap()
        .get();
    assert!(
        cl.saturated && cl.current == 0.3 && cl.geom.is_empty() && cl.at_time == -1.0,
        "{cl:?}"
    );
    // measured at compute_rate_hz, published at rate_hz: 50 Hz = every 10 steps
    let mut e =
        engine(&tb_observed("      - clearance_monitor: {compute_rate_hz: 50.0, rate_hz: 10.0}\n"));
    let r = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::observe::clearance_monitor::ClearanceReader>(key)
        .unwrap()
        .clone();
    e.step_n(15).unwrap();
    assert!((r.get().stamp - 0.02).abs() < 1e-9, "measured at {}", r.get().stamp);
    e.step_n(5).unwrap();
    assert!((r.get().stamp - 0.04).abs() < 1e-9, "measured at {}", r.get().stamp);
    let ep = endpoint_in(&e, "", "clearance");
    e.step_n(30).unwrap();
    assert_eq!(e.ctx.interface.get(ep).latest().unwrap().1, 50, "published every 50 steps (10 Hz)");
    assert_eq!(Payload::ClearanceReport(cl).member("saturated"), Some(Payload::Bool(true)));
}

fn energy(e: &Engine, name: &str) -> roqsim::context::payload::EnergyReport {
    e.ctx
        .blackboard
        .get::<roqsim::plugins::observe::energy_monitor::EnergyReader>(&format!(
            "energy:robot.{name}"
        ))
        .unwrap()
        .get()
}

#[test]
fn energy_monitor_splits_driving_from_driven_and_bills_what_was_stated() {
    let mut e = engine(&tb_observed(
        "      - energy_monitor: {efficiency: 0.5, idle_w: 2.0, capacity_wh: 0.0005, voltage: 14.4}
        name: pack
      - energy_monitor: {efficiency: 0.5, regenerative: true}
        name: regen
      - energy_monitor: {}
        name: plain
",
    )
    .replace("x: 1.0, y: 0.0", "x: 4.0, y: 0.0"));
    let ep = e.ctx.interface.get(endpoint_in(&e, "", "battery"));
    assert_eq!(ep.get_hint("ros2", "type"), Some("sensor_msgs/msg/BatteryState"));
    assert_eq!(ep.get_hint("ros2", "topic"), Some("battery_state"));
    drive(&mut e, 0.3, 1.5);
    drive(&mut e, 0.0, 1.0);
    let t = e.sim_time();
    let plain = energy(&e, "plain");
    let pack = energy(&e, "pack");
    let regen = energy(&e, "regen");
    eprintln!("plain {plain:?}\nregen {regen:?}\npack {pack:?}");
    assert_eq!(
        plain.actuators,
        vec!["left_wheel_motor".to_string(), "right_wheel_motor".to_string()]
    );
    assert!(plain.driving_j > 0.05 && plain.driven_j > 0.0, "{plain:?}");
    // per-actuator split sums to the totals
    assert!((plain.actuator_driving_j.iter().sum::<f64>() - plain.driving_j).abs() < 1e-9);
    assert!((plain.actuator_driven_j.iter().sum::<f64>() - plain.driven_j).abs() < 1e-9);
    // defaults assume nothing: energy = mechanical driving work; no charge, no current
    assert!((plain.energy_j - plain.driving_j).abs() < 1e-9 * plain.driving_j.max(1.0));
    assert_eq!(plain.state_of_charge, None);
    assert_eq!(plain.current_a, None);
    assert!(plain.torque_integral_nms > 0.0);
    // efficiency and idle: E = W_drive / e + idle * t
    assert!((pack.driving_j - plain.driving_j).abs() < 1e-12);
    let want = plain.driving_j / 0.5 + 2.0 * t;
    assert!((pack.energy_j - want).abs() < 1e-6 * want, "{} vs {want}", pack.energy_j);
    // regeneration credits e * driven back
    let want = plain.driving_j / 0.5 - 0.5 * plain.driven_j;
    assert!(
        (regen.energy_j - want).abs() < 1e-9 * want.abs().max(1.0),
        "{} vs {want}",
        regen.energy_j
    );
    // a 0.0005 Wh (1.8 J) pack under a 2 W idle load is flat and latched
    assert!(pack.depleted && pack.state_of_charge == Some(0.0), "{pack:?}");
    assert_eq!(pack.capacity_wh, Some(0.0005));
    assert!((pack.current_a.unwrap() - pack.power_w / 14.4).abs() < 1e-12);
    // reset zeroes the bill
    e.reset().unwrap();
    let z = energy(&e, "pack");
    assert!(
        z.energy_j == 0.0 && z.driving_j == 0.0 && !z.depleted && z.state_of_charge == Some(1.0),
        "{z:?}"
    );
}

#[test]
fn upright_monitor_flags_a_fall_and_latches() {
    let mut e = engine(
        "sim: {timestep: 0.002}
components:
  - box: {pose: {position: {x: 0.0, y: 0.0}, orientation: {roll: 0.35}}, size: [0.1, 0.1, 1.0], motion: physics, mass: 2.0}
    name: pole
    components:
      - upright_monitor: {settle_s: 0.0}
",
    );
    let r = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::observe::upright_monitor::UprightReader>(
            "upright_monitor:pole.upright_monitor",
        )
        .unwrap()
        .clone();
    e.step().unwrap();
    let first = r.get();
    assert!(first.upright && first.settled && (first.tilt_deg - 20.05).abs() < 0.1, "{first:?}");
    secs(&mut e, 2.0);
    let u = r.get();
    eprintln!("upright {u:?}");
    assert!(!u.upright && u.fallen_time > 0.0 && u.reason.starts_with("tilt"), "{u:?}");
    assert!(u.tilt_deg > 80.0, "{u:?}");
    e.reset().unwrap();
    assert!(r.get().upright && !r.get().settled);
}

#[test]
fn observer_refusals() {
    let t = refusal("sim: {timestep: 0.002}\ncomponents:\n  - contact_monitor: {}\n");
    assert_has(
        &t,
        &["`contact_monitor` belongs to a robot and must be nested under it (requires_owner)"],
    );
    for p in ["bumper", "clearance_monitor", "energy_monitor", "upright_monitor"] {
        let t = refusal(&format!("sim: {{timestep: 0.002}}\ncomponents:\n  - {p}: {{}}\n"));
        assert_has(&t, &[&format!("`{p}` belongs to a robot"), "requires_owner"]);
    }
    let t = refusal(&tb_observed("      - contact_monitor: {ignore: [carpet]}\n"));
    assert_has(&t, &["ignore[0]: no geom `carpet` in the model"]);
    let t = refusal(&tb_observed("      - contact_monitor: {min_force: -1.0}\n"));
    assert_has(&t, &["min_force", "must be a finite number >= 0 (N), got -1"]);
    let t = refusal(&tb_observed("      - bumper: {zones: {rear: [2.6, 4.0]}}\n"));
    assert_has(&t, &["zones.rear", "within [-pi, pi], got [2.6, 4]"]);
    let t = refusal(&tb_observed("      - bumper: {zones: {}}\n"));
    assert_has(&t, &["zones", "declares no zone"]);
    let t = refusal(&tb_observed("      - bumper: {geoms: [shell_front]}\n"));
    assert_has(&t, &["geoms[0]: entity `robot` has no geom `shell_front`", "body_collision"]);
    let t = refusal(&tb_observed("      - clearance_monitor: {distmax: 0.0}\n"));
    assert_has(&t, &["distmax", "must be > 0 (m), got 0"]);
    let t = refusal(&tb_observed("      - clearance_monitor: {compute_rate_hz: 0.0}\n"));
    assert_has(&t, &["compute_rate_hz", "must be > 0 (Hz), got 0"]);
    let t = refusal(&tb_observed("      - energy_monitor: {efficiency: 1.5}\n"));
    assert_has(&t, &["efficiency", "must be within (0, 1]"]);
    let t = refusal(&tb_observed("      - energy_monitor: {actuators: [left_wheel_joint]}\n"));
    assert_has(
        &t,
        &["actuators[0]: `left_wheel_joint` is a joint, not an actuator", "left_wheel_motor"],
    );
    let t = refusal(&tb_observed(
        "      - energy_monitor: {resistive_w_per_nm2: {front_motor: 0.1}}\n",
    ));
    assert_has(
        &t,
        &[
            "resistive_w_per_nm2.front_motor",
            "not a metered actuator",
            "left_wheel_motor, right_wheel_motor",
        ],
    );
    let t = refusal(
        "sim: {timestep: 0.002}\ncomponents:\n  - box: {pose: {position: {x: 0.0}}, size: [0.1, 0.1, 0.1], motion: physics}\n    name: crate\n    components:\n      - energy_monitor: {}\n",
    );
    assert_has(
        &t,
        &[
            "entity `crate` has no actuators to meter",
            "looks exactly like a robot that costs nothing",
        ],
    );
    let t = refusal(&tb_observed("      - upright_monitor: {max_tilt_deg: 0.0}\n"));
    assert_has(&t, &["max_tilt_deg", "must be within (0, 180]"]);
    let t = refusal(&tb_observed("      - upright_monitor: {body: chassis}\n"));
    assert_has(&t, &["body: entity `robot` has no body `chassis`"]);
}

// ----------------------------------------------------------------------------- warehouse world

#[test]
fn warehouse_world_runs_with_its_conveyor_door_arm_and_faults() {
    let w = roqsim::load_world(&base().join("warehouse.yaml"), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut e = Engine::new(w, EngineOptions { profile: false, seed: Some(1) }).unwrap();
    for (name, kind) in [
        ("door_1", roqsim::context::EntityKind::Door),
        ("ur", roqsim::context::EntityKind::Arm),
        ("robot", roqsim::context::EntityKind::Robot),
        ("belt", roqsim::context::EntityKind::Other),
    ] {
        assert_eq!(
            e.ctx.entities.get(name).unwrap_or_else(|| panic!("no entity {name}")).kind,
            kind
        );
    }
    for (ns, ep) in [
        ("belt", "speed"),
        ("door_1", "cmd"),
        ("door_1", "state"),
        ("grip_fault", "override"),
        ("", "robot/rplidar/lidar/override"),
        ("", "contact"),
        ("", "battery"),
    ] {
        endpoint_in(&e, ns, ep);
    }
    // the gripper's pinch point waits above the belt's end
    let pinch =
        e.ctx.model().name_to_id(MjtObjBase::mjOBJ_SITE, "ur_pinch").expect("ur_pinch site");
    let p = e.ctx.data().site_xpos()[pinch];
    eprintln!("pinch at {p:?}");
    assert!(
        (p[0] - 4.51).abs() < 0.03 && (p[1] - 1.87).abs() < 0.03 && (p[2] - 1.11).abs() < 0.05,
        "pinch at {p:?}"
    );
    let x0 = body_pos(&e, "parcel_1")[0];
    secs(&mut e, 1.5);
    let x1 = body_pos(&e, "parcel_1")[0];
    eprintln!("parcel_1 moved {:.4} m in 1.5 s", x1 - x0);
    assert!((x1 - x0 - 0.15).abs() < 0.01, "parcel_1 moved {} m at 0.1 m/s", x1 - x0);
    // the door opens on command
    let cmd = endpoint_in(&e, "door_1", "cmd");
    e.ctx.interface.deliver(cmd, Payload::Float64(1.0));
    secs(&mut e, 3.0);
    let h =
        e.ctx.blackboard.get::<roqsim::plugins::assets::door::DoorHandle>("door:door_1").unwrap();
    eprintln!("door openness {}", h.openness());
    assert!(h.openness() > 0.95 && !h.stalled(), "door at {}", h.openness());
    let u = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::observe::upright_monitor::UprightReader>(
            "upright_monitor:robot.upright_monitor",
        )
        .unwrap()
        .get();
    assert!(u.upright && u.settled, "{u:?}");
    // both faults answer: the grip fault has nothing in the jaws yet (untested), the lidar's lands
    let mut replies = Vec::new();
    for (ns, name) in [("grip_fault", "override"), ("", "robot/rplidar/lidar/override")] {
        let (tx, rx) = crossbeam_channel::unbounded();
        let id = endpoint_in(&e, ns, name);
        e.ctx.interface.deliver(
            id,
            Payload::Call(roqsim::context::payload::ServiceCall {
                request: Box::new(Payload::Bool(true)),
                reply: tx,
                claim: Default::default(),
            }),
        );
        replies.push(rx);
    }
    // the grip fault waits its 10 steps for a contact on the pads before it answers untested
    e.step_n(roqsim::plugins::faults::model_override::CONTACT_WAIT_STEPS as u64).unwrap();
    let msgs: Vec<String> = replies
        .iter()
        .map(|rx| match rx.try_recv() {
            Ok(Payload::Ack { success: true, message }) => message,
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(
        msgs[0].starts_with(
            "untested: geom_friction -> [0.0, 0.0, 0.0] on [ur_left_pad, ur_right_pad]"
        ),
        "{}",
        msgs[0]
    );
    assert!(msgs[1].starts_with("landed: `robot.rplidar.lidar`"), "{}", msgs[1]);
}

#[test]
fn bumper_zones_wrap_through_pi_and_a_contact_outside_every_zone_presses_nothing() {
    // the crate is BEHIND the robot; it reverses into it
    let mut e = engine(
        &tb_observed(
            "      - contact_monitor: {}
      - bumper: {zones: {front: [-0.52, 0.52], rear: [2.6, -2.6]}}
        name: ring
      - bumper: {zones: {left: [0.52, 1.57], right: [-1.57, -0.52]}}
        name: sides
",
        )
        .replace("x: 1.0, y: 0.0", "x: -1.0, y: 0.0"),
    );
    drive(&mut e, -0.3, 3.5);
    let ring = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::observe::bumper::BumperReader>("bumper:robot.ring")
        .unwrap()
        .get();
    let sides = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::observe::bumper::BumperReader>("bumper:robot.sides")
        .unwrap()
        .get();
    eprintln!("ring {ring:?}\nsides {sides:?}");
    assert!(ring.pressed["rear"] && !ring.pressed["front"], "{ring:?}");
    assert!(ring.bearing.unwrap().abs() > 3.0, "{ring:?}");
    assert!(!sides.pressed["left"] && !sides.pressed["right"], "{sides:?}");
    assert_eq!(latest(&e, "", "bumper/rear"), Payload::Bool(true));
    let c = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::observe::contact_monitor::ContactReader>(
            "contact_monitor:robot.contact_monitor",
        )
        .unwrap()
        .get();
    assert!(c.in_contact && c.geom_b == "crate", "{c:?}");
}
