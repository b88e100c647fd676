//! Seeing the simulation, ROS-free and without a display: `--manual-control` (controllers stop
//! writing ctrl per tick, still hold the pose on reset), `sim.view` schema and value checks, the
//! camera's resolution against a model (MuJoCo's default free camera, tracking an entity) and the
//! `--view` vocabulary round trip. The window itself is tested under Xvfb (test/e2e/test_view.py).

mod common;

use roqsim::view::camera::{default_free_camera, split_view_arg, ViewCamera};
use roqsim::world::sim::View;
use roqsim::{load_world, load_world_str, Engine, EngineOptions, LoadOptions};

fn load_error(yaml: &str) -> String {
    match load_world_str(yaml, &common::base(), &LoadOptions::default()) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("expected a refusal for:\n{yaml}"),
    }
}

const DRIVING: &str = "sim: {timestep: 0.002}
components:
  - spawn_robot: {model: turtlebot4}
    name: robot
    components:
      - diff_drive: {test_cmd: [0.3, 0.0]}
";

#[test]
fn manual_control_stops_a_drives_ctrl_writes() {
    // Without manual control the drive overwrites whatever ctrl holds, every tick.
    let mut e = common::engine(DRIVING);
    e.ctx.data_mut().ctrl_mut().fill(1.25);
    e.step_n(50).unwrap();
    let driven = e.ctx.data().ctrl().to_vec();
    println!("driven ctrl after 50 steps: {driven:?}");
    assert!(driven.iter().all(|&c| c != 1.25), "the drive did not write ctrl: {driven:?}");

    // With it, ctrl stays exactly what the person (here: the test) set.
    let mut e = common::engine(DRIVING);
    e.ctx.run.manual_control = true;
    let set: Vec<f64> = (0..e.ctx.data().ctrl().len()).map(|i| 0.5 + i as f64).collect();
    e.ctx.data_mut().ctrl_mut().copy_from_slice(&set);
    e.step_n(500).unwrap();
    assert_eq!(e.ctx.data().ctrl(), &set[..], "ctrl changed under --manual-control");
}

#[test]
fn manual_control_keeps_the_arms_holding_pose_on_reset_and_then_leaves_ctrl_alone() {
    let w = load_world(&common::base().join("ur_pick.yaml"), &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut e = Engine::new(w, EngineOptions { profile: false, seed: Some(1) }).unwrap();
    let hold = e.ctx.data().ctrl().to_vec();
    println!("holding ctrl after reset: {hold:?}");
    assert!(hold.iter().any(|&c| c.abs() > 0.1), "no holding pose written on reset: {hold:?}");
    e.ctx.run.manual_control = true;
    // A person moves the first joint's slider.
    let mut moved = hold.clone();
    moved[0] += 0.4;
    e.ctx.data_mut().ctrl_mut().copy_from_slice(&moved);
    e.step_n(250).unwrap();
    assert_eq!(e.ctx.data().ctrl(), &moved[..], "the controller wrote ctrl in manual mode");
    // The joint follows the slider (the actuator acts on the person's ctrl).
    let m = e.ctx.model();
    let joint = m.actuator_trnid()[0][0] as usize;
    let q0 = e.ctx.data().qpos()[m.jnt_qposadr()[joint] as usize];
    println!("joint 0 after 0.5 s: {q0:.4} rad (slider {:.4})", moved[0]);
    assert!((q0 - moved[0]).abs() < 0.05, "joint 0 at {q0}, slider at {}", moved[0]);
    // A reset writes the holding pose again, in every mode.
    e.reset().unwrap();
    assert_eq!(e.ctx.data().ctrl(), &hold[..]);
}

#[test]
fn sim_view_is_schema_checked() {
    let t = load_error("sim: {view: {zoom: 2}}\ncomponents: []\n");
    println!("{t}");
    assert!(t.contains("sim.view") && t.contains("zoom"), "{t}");
    let t = load_error("sim: {view: {distance: 0}}\ncomponents: []\n");
    assert!(
        t.contains("sim.view.distance: must be a distance within (0, 1000000] m, got 0"),
        "{t}"
    );
    let t = load_error("sim: {view: {elevation: 95}}\ncomponents: []\n");
    assert!(t.contains("sim.view.elevation: must be within (-90, 90) degrees, got 95"), "{t}");
    let t = load_error("sim: {view: {follow_heading: true}}\ncomponents: []\n");
    assert!(
        t.contains(
            "sim.view.follow_heading: follows the heading of the tracked entity; set sim.view.track too"
        ),
        "{t}"
    );
}

#[test]
fn camera_defaults_to_mujocos_free_camera_and_keeps_given_keys() {
    let e = common::engine("sim: {view: {azimuth: 30}}\ncomponents:\n  - dummy: {}\n    name: a\n");
    let d = default_free_camera(e.ctx.model());
    let view = e.sim.view.clone().unwrap();
    let c = ViewCamera::resolve(&view, &e.ctx).unwrap();
    let m = e.ctx.model().ffi();
    assert_eq!(c.lookat, m.stat.center);
    assert_eq!(c.distance, 1.5 * m.stat.extent);
    assert_eq!(c.elevation, m.vis.global.elevation as f64);
    assert_eq!(c.azimuth, 30.0);
    assert_eq!(d.azimuth, m.vis.global.azimuth as f64);
    // The printed form parses back into the same camera.
    let arg = c.to_view_arg();
    println!("--view {arg}");
    let mut v = View::default();
    for (k, val) in split_view_arg(&arg).unwrap() {
        let y: serde_norway::Value = serde_norway::from_str(&val).unwrap();
        match k.as_str() {
            "lookat" => v.lookat = Some(serde_norway::from_value(y).unwrap()),
            "distance" => v.distance = Some(serde_norway::from_value(y).unwrap()),
            "azimuth" => v.azimuth = Some(serde_norway::from_value(y).unwrap()),
            "elevation" => v.elevation = Some(serde_norway::from_value(y).unwrap()),
            other => panic!("unexpected key {other}"),
        }
    }
    assert_eq!(ViewCamera::resolve(&v, &e.ctx).unwrap(), c, "bitwise round trip");
}

#[test]
fn tracking_follows_the_entity_and_its_heading() {
    let mut e = common::engine(
        "sim: {timestep: 0.002}
components:
  - spawn_robot: {model: turtlebot4}
    name: robot
    components:
      - diff_drive: {test_cmd: [0.2, 0.5]}
",
    );
    let view = View {
        lookat: Some([0.5, 0.0, 0.0]),
        distance: Some(3.0),
        azimuth: Some(180.0),
        elevation: Some(-30.0),
        track: Some("robot".into()),
        follow_heading: Some(true),
    };
    let c = ViewCamera::resolve(&view, &e.ctx).unwrap();
    e.step_n(1500).unwrap();
    let t = c.track.as_ref().unwrap();
    let d = e.ctx.data();
    let (x, y) = (d.xpos()[t.body][0], d.xpos()[t.body][1]);
    let yaw = roqsim::math::yaw_of(&d.xquat()[t.body]);
    let p = c.pose(d);
    println!(
        "robot at ({x:.3}, {y:.3}) yaw {yaw:.3}; camera lookat {:?} azimuth {:.2}",
        p.lookat, p.azimuth
    );
    assert!(yaw.abs() > 0.5, "the robot did not turn: yaw {yaw}");
    assert!((p.lookat[0] - (x + 0.5 * yaw.cos())).abs() < 1e-9);
    assert!((p.lookat[1] - (y + 0.5 * yaw.sin())).abs() < 1e-9);
    assert!((p.azimuth - (180.0 + yaw.to_degrees())).abs() < 1e-9);

    let bad = View { track: Some("robbot".into()), ..Default::default() };
    assert_eq!(
        ViewCamera::resolve(&bad, &e.ctx).unwrap_err(),
        "sim.view.track: no entity `robbot` in this world (--view track=...); entities: robot, robot.rplidar"
    );
}
