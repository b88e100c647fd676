//! Base drives and state publishers: diff_drive (single and skid-steer), omni_drive,
//! ackermann_drive, joint_state_publisher, ground_truth_pose. Physics outcomes with the bundled
//! models (spawned by spawn_robot with their manifests), payload contents, endpoint metadata, and
//! every refusal's message. Commands go in through the endpoint inbox (`interface.deliver`), the
//! `robot:<name>` handle, or `test_cmd`.

use mujoco_rs::prelude::MjtObjBase;
use roqsim::context::payload::{AckermannDrive, Payload, Twist};
use roqsim::context::Direction;
use roqsim::handles::robot::RobotHandle;
use roqsim::plugins::sensors::ground_truth_pose::GroundTruthReader;
use roqsim::Engine;

mod common;
use common::*;

/// World pose (x, y, yaw) of a body.
fn pose2d(e: &Engine, body: &str) -> (f64, f64, f64) {
    let m = e.ctx.model();
    let id = m.name_to_id(MjtObjBase::mjOBJ_BODY, body).unwrap_or_else(|| panic!("no body {body}"));
    let d = e.ctx.data();
    (d.xpos()[id][0], d.xpos()[id][1], roqsim::math::yaw_of(&d.xquat()[id]))
}

/// Ground-truth pose of a robot's free joint straight from qpos (current after the step).
fn qpose(e: &Engine, joint: &str) -> (f64, f64, f64) {
    let m = e.ctx.model();
    let j =
        m.name_to_id(MjtObjBase::mjOBJ_JOINT, joint).unwrap_or_else(|| panic!("no joint {joint}"));
    let a = m.jnt_qposadr()[j] as usize;
    let q = e.ctx.data().qpos();
    (q[a], q[a + 1], roqsim::math::yaw_of(&[q[a + 3], q[a + 4], q[a + 5], q[a + 6]]))
}

/// Unwrapped yaw tracker: call every step.
struct Unwrap {
    last: f64,
    total: f64,
}
impl Unwrap {
    fn new(y: f64) -> Self {
        Unwrap { last: y, total: 0.0 }
    }
    fn update(&mut self, y: f64) -> f64 {
        let d = (y - self.last + std::f64::consts::PI).rem_euclid(2.0 * std::f64::consts::PI)
            - std::f64::consts::PI;
        self.total += d;
        self.last = y;
        self.total
    }
}

fn twist(v: f64, vy: f64, w: f64) -> Payload {
    Payload::Twist(Twist { linear: [v, vy, 0.0], angular: [0.0, 0.0, w] })
}

fn handle(e: &Engine, name: &str) -> RobotHandle {
    e.ctx.blackboard.get::<RobotHandle>(&format!("robot:{name}")).unwrap().clone()
}

/// A TurtleBot 4 from its manifest, with `extra` keys merged into its diff_drive.
fn turtlebot(extra: &str) -> String {
    format!(
        "sim: {{timestep: 0.002}}
components:
  - spawn_robot: {{model: turtlebot4}}
    name: robot
    components:
      - diff_drive: {{{extra}}}
"
    )
}

/// Step `secs` of sim time, delivering `cmd` on cmd_vel at 50 Hz (a stack's publisher), tracking
/// the base's unwrapped yaw. Returns the yaw turned.
fn drive_for(e: &mut Engine, cmd: Option<Payload>, secs: f64, joint: &str) -> f64 {
    let id = endpoint(e, "cmd_vel");
    let mut u = Unwrap::new(qpose(e, joint).2);
    let n = (secs / e.dt()).round() as u64;
    for i in 0..n {
        if let Some(c) = &cmd {
            if i % 10 == 0 {
                e.ctx.interface.deliver(id, c.clone());
            }
        }
        e.step().unwrap();
        u.update(qpose(e, joint).2);
    }
    u.total
}

// ------------------------------------------------------------------------------------------
// diff_drive: physics
// ------------------------------------------------------------------------------------------

#[test]
fn diff_straight_one_metre_and_odometry_within_2_percent() {
    let mut e = engine(&turtlebot(""));
    let p0 = qpose(&e, "base_free");
    drive_for(&mut e, Some(twist(0.2, 0.0, 0.0)), 5.0, "base_free");
    let p1 = qpose(&e, "base_free");
    let dist = (p1.0 - p0.0).hypot(p1.1 - p0.1);
    let (ox, oy, oyaw, ov, _, _) = handle(&e, "robot").read_odom();
    println!("straight: travelled {dist:.4} m (lateral {:.2e}), odom ({ox:.4}, {oy:.2e}, {oyaw:.2e}) v {ov:.4}", p1.1 - p0.1);
    assert!((dist - 1.0).abs() < 0.05, "0.2 m/s for 5 s travelled {dist} m");
    assert!((p1.1 - p0.1).abs() < 1e-3 && p1.2.abs() < 1e-3, "drifted off the line: {p1:?}");
    assert!((ox - dist).abs() < 0.02 * dist, "odometry {ox} vs truth {dist}");
    assert!((ov - 0.2).abs() < 0.005, "odom twist {ov}");
}

#[test]
fn diff_turns_in_place_five_radians() {
    let mut e = engine(&turtlebot(""));
    let p0 = qpose(&e, "base_free");
    let turned = drive_for(&mut e, Some(twist(0.0, 0.0, 1.0)), 5.0, "base_free");
    let p1 = qpose(&e, "base_free");
    let (_, _, oyaw, _, _, ow) = handle(&e, "robot").read_odom();
    println!("in place: turned {turned:.4} rad, odometry {oyaw:.4} rad (w {ow:.4}), centre moved {:.2e} m", (p1.0 - p0.0).hypot(p1.1 - p0.1));
    assert!((oyaw - turned).abs() < 0.02 * turned, "odometry yaw {oyaw} vs truth {turned}");
    assert!((p1.0 - p0.0).hypot(p1.1 - p0.1) < 0.005, "the centre wandered while turning in place");
    // The spec target. Measured with the bundled turtlebot4 (wheel servo kv 0.3): 4.73 rad — the
    // 0.9 m/s² ramp costs 0.065 rad and the P-only wheel servo runs 2.9 % slow under the tyres'
    // scrub load; kv 0.6 gives 4.82 rad (models/turtlebot4 owns that number).
    assert!((turned - 5.0).abs() < 0.25, "1 rad/s for 5 s turned {turned} rad");
}

#[test]
fn diff_arc_odometry_within_2_percent_of_ground_truth() {
    let mut e = engine(&turtlebot(""));
    let p0 = qpose(&e, "base_free");
    let turned = drive_for(&mut e, Some(twist(0.25, 0.0, 0.6)), 6.0, "base_free");
    let p1 = qpose(&e, "base_free");
    // Truth in the start frame (the odom frame is where the robot started).
    let (s, c) = p0.2.sin_cos();
    let (dx, dy) = (p1.0 - p0.0, p1.1 - p0.1);
    let (tx, ty) = (c * dx + s * dy, -s * dx + c * dy);
    let (ox, oy, oyaw, ..) = handle(&e, "robot").read_odom();
    let err = (ox - tx).hypot(oy - ty);
    println!("arc: truth ({tx:.4}, {ty:.4}, {turned:.4}) odom ({ox:.4}, {oy:.4}, {oyaw:.4}) position error {err:.4} m");
    assert!(
        err < 0.02 * 0.25 * 6.0,
        "odometry position error {err} m over {} m driven",
        0.25 * 6.0
    );
    assert!((oyaw - turned).abs() < 0.02 * turned, "odometry yaw {oyaw} vs truth {turned}");
}

#[test]
fn diff_watchdog_stops_the_base_after_cmd_vel_timeout() {
    // The manifest's cmd_vel_timeout: 0.5 s (Create 3 firmware). One command, then silence.
    let mut e = engine(&turtlebot(""));
    let id = endpoint(&e, "cmd_vel");
    e.ctx.interface.deliver(id, twist(0.2, 0.0, 0.0));
    e.step_n(250).unwrap(); // 0.5 s: still driving
    let v_during = handle(&e, "robot").read_odom().3;
    e.step_n(250).unwrap(); // 1.0 s: timed out at 0.5 s, ramped down within 0.22 s
    let at_1s = qpose(&e, "base_free");
    let v_after = handle(&e, "robot").read_odom().3;
    e.step_n(500).unwrap();
    let at_2s = qpose(&e, "base_free");
    println!(
        "watchdog: v at 0.5 s {v_during:.4}, at 1.0 s {v_after:.2e}; x at 1 s {:.4}, at 2 s {:.4}",
        at_1s.0, at_2s.0
    );
    assert!((v_during - 0.2).abs() < 0.01, "driving before the timeout: {v_during}");
    assert!(v_after.abs() < 1e-3, "still moving after the timeout: {v_after}");
    assert!((at_2s.0 - at_1s.0).abs() < 1e-3, "crept on after stopping");
    // 0.5 s of command plus the ramp down (no jump): ~0.2·0.5 = 0.10 m.
    assert!((at_1s.0 - 0.10).abs() < 0.02, "travelled {} m", at_1s.0);

    // Without the watchdog the held command keeps going.
    let mut e = engine(&turtlebot("cmd_vel_timeout: 0.0"));
    let id = endpoint(&e, "cmd_vel");
    e.ctx.interface.deliver(id, twist(0.2, 0.0, 0.0));
    e.step_n(1000).unwrap();
    let x = qpose(&e, "base_free").0;
    assert!((x - 0.38).abs() < 0.02, "held command travelled {x} m in 2 s");
}

#[test]
fn diff_odom_noise_is_seeded_reproducible_and_drifts() {
    let noisy = "cmd_vel_timeout: 0.0, odom_noise: {linear_stddev: 0.05, angular_stddev: 0.1, linear_scale: 1.02, angular_scale: 0.97}";
    let run = |extra: &str, seed: u64| {
        let mut e = engine_seed(&turtlebot(extra), seed);
        handle(&e, "robot").drive(0.2, 0.0, 0.4);
        e.step_n(1500).unwrap();
        let o = handle(&e, "robot").read_odom();
        let odom = match e.ctx.interface.get(endpoint(&e, "odom")).latest() {
            Some((Payload::Odometry(o), _)) => o.clone(),
            other => panic!("no odometry published: {other:?}"),
        };
        (o, qpose(&e, "base_free"), odom)
    };
    let (a, truth_a, msg_a) = run(noisy, 7);
    let (b, truth_b, msg_b) = run(noisy, 7);
    let (c, _, _) = run(noisy, 8);
    let (clean, truth_clean, _) = run("cmd_vel_timeout: 0.0", 7);
    println!("noise: seed 7 {a:?}\n       seed 8 {c:?}\n       clean {clean:?}\n       truth {truth_a:?}");
    // Reproducible: bitwise.
    assert_eq!(a, b);
    assert_eq!(msg_a, msg_b);
    // The robot's motion is untouched by odometry noise: ground truth is bitwise the clean run's.
    assert_eq!(truth_a, truth_clean);
    assert_eq!(truth_a, truth_b);
    // Drifting: away from the exact odometry by centimetres, and differently per seed.
    let drift = (a.0 - clean.0).hypot(a.1 - clean.1);
    assert!(drift > 0.01, "noisy odometry drifted only {drift} m from the exact one");
    assert!(
        (a.0 - c.0).hypot(a.1 - c.1) > 1e-3 && a.2 != c.2,
        "seeds 7 and 8 gave the same odometry"
    );
    // The noise is on what is reported (twist covariance states it), not on the robot.
    assert!(
        (msg_a.twist_covariance[0] - 0.0025).abs() < 1e-15
            && (msg_a.twist_covariance[35] - 0.01).abs() < 1e-15
    );
}

#[test]
fn skid_steer_husky_achieves_commanded_yaw_rate_with_manifest_slip_factor() {
    // slip_factor 3.86 from the manifest (calibrated at 0.5 rad/s).
    let mut e = engine(
        "sim: {timestep: 0.002}
components:
  - spawn_robot: {model: husky_a200}
    name: robot
    components:
      - diff_drive: {test_cmd: [0.0, 0.5]}
",
    );
    drive_for(&mut e, None, 2.0, "base_free");
    let settled = drive_for(&mut e, None, 3.0, "base_free");
    let achieved = settled / 3.0;
    let ow = handle(&e, "robot").read_odom().5;
    println!("husky: commanded 0.5 rad/s, achieved {achieved:.4} rad/s, odometry {ow:.4} rad/s");
    assert!((achieved - 0.5).abs() < 0.05, "achieved {achieved} rad/s for 0.5 commanded");
    // Odometry divides the slip factor back out: it reports the commanded yaw rate, near the truth.
    assert!((ow - 0.5).abs() < 0.05, "odometry yaw rate {ow}");

    // Without compensation the base barely turns (the reason slip_factor exists).
    let mut e = engine(
        "sim: {timestep: 0.002}
components:
  - spawn_robot: {model: husky_a200}
    name: robot
    components:
      - diff_drive: {test_cmd: [0.0, 0.5], slip_factor: 1.0}
",
    );
    drive_for(&mut e, None, 2.0, "base_free");
    let raw = drive_for(&mut e, None, 3.0, "base_free") / 3.0;
    println!("husky uncompensated: {raw:.4} rad/s");
    assert!(raw < 0.3 * 0.5, "uncompensated skid-steer achieved {raw} rad/s");
}

// ------------------------------------------------------------------------------------------
// diff_drive: endpoints, payloads, handle
// ------------------------------------------------------------------------------------------

#[test]
fn diff_endpoints_payloads_and_handle() {
    let mut e = engine(
        "sim: {timestep: 0.002}
components:
  - spawn_robot: {model: turtlebot4, namespace: robot1, prefix: r1_}
    name: tb
    components:
      - diff_drive: {stamped_cmd_vel: true, cmd_vel_timeout: 0.0, topics: {cmd_vel: diffdrive_controller/cmd_vel, odom: /odom_hw}}
",
    );
    let all = e.ctx.interface.all();
    let cmd = &all[endpoint(&e, "cmd_vel")];
    assert_eq!(cmd.direction, Direction::In);
    assert_eq!(
        (cmd.owner.as_deref(), cmd.namespace.as_str(), cmd.frame_prefix.as_str()),
        (Some("tb"), "robot1", "robot1/")
    );
    assert_eq!(cmd.get_hint("ros2", "type"), Some("geometry_msgs/msg/TwistStamped"));
    assert_eq!(cmd.get_hint("ros2", "qos"), Some("reliable"));
    assert_eq!(cmd.get_hint("ros2", "topic"), Some("diffdrive_controller/cmd_vel"));
    let odom = &all[endpoint(&e, "odom")];
    assert_eq!(odom.get_hint("ros2", "type"), Some("nav_msgs/msg/Odometry"));
    assert_eq!(odom.get_hint("ros2", "topic"), Some("/odom_hw"));
    assert_eq!(odom.snapped.unwrap().every_steps, 10, "50 Hz on a 500 Hz grid");
    let js = &all[endpoint(&e, "joint_states")];
    assert_eq!(js.get_hint("ros2", "type"), Some("sensor_msgs/msg/JointState"));
    assert_eq!(js.get_hint("ros2", "topic"), None, "default topic = the role name");

    // Drive through the handle; odom publishes on ticks 10, 20, ...
    let h = handle(&e, "tb");
    assert_eq!((h.name(), h.controller()), ("tb", "diff_drive"));
    h.drive(0.1, 0.0, 0.0);
    e.step_n(9).unwrap();
    assert!(
        e.ctx.interface.get(endpoint(&e, "odom")).latest().is_none(),
        "odom published before its first gate"
    );
    e.step_n(491).unwrap();
    let (msg, tick) = match e.ctx.interface.get(endpoint(&e, "odom")).latest() {
        Some((Payload::Odometry(o), t)) => (o.clone(), t),
        other => panic!("{other:?}"),
    };
    assert_eq!(tick, 500);
    assert_eq!(
        (msg.frame_id.as_str(), msg.child_frame_id.as_str(), msg.publish_tf),
        ("odom", "base_link", true)
    );
    assert!((msg.stamp - 1.0).abs() < 1e-9, "stamp {}", msg.stamp);
    let (x, y, yaw, vx, _, _) = h.read_odom();
    assert_eq!((msg.position[0], msg.position[1]), (x, y));
    assert!(
        (msg.orientation[3] - (yaw / 2.0).cos()).abs() < 1e-12
            && (msg.linear[0] - vx).abs() < 1e-12
    );
    assert!((x - 0.094).abs() < 0.005, "0.1 m/s for 1 s (ramped): odom x {x}");
    let truth = qpose(&e, "r1_base_free");
    assert!((truth.0 - x).abs() < 0.002, "odom {x} vs truth {}", truth.0);
    // joint_states: the two wheels, names without the spawn prefix, measured values.
    let js = match e.ctx.interface.get(endpoint(&e, "joint_states")).latest() {
        Some((Payload::JointState(j), _)) => j.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(js.name, vec!["left_wheel_joint", "right_wheel_joint"]);
    let wheel_rate = 0.1 / 0.03575;
    assert!(
        js.velocity.iter().all(|w| (w - wheel_rate).abs() < 0.05 * wheel_rate),
        "wheel rates {:?}",
        js.velocity
    );
    assert!(
        js.position.iter().all(|p| (p - x / 0.03575).abs() < 0.05 * x / 0.03575),
        "wheel angles {:?}",
        js.position
    );
    assert_eq!(js.effort.len(), 2);

    // Reset zeroes the odometry and forgets the command.
    e.reset().unwrap();
    assert_eq!(h.read_odom(), (0.0, 0.0, 0.0, 0.0, 0.0, 0.0));
    e.step_n(200).unwrap();
    assert!(qpose(&e, "r1_base_free").0.abs() < 1e-3, "moved after reset without a command");
}

#[test]
fn diff_publish_joint_states_false_and_joint_state_publisher() {
    // The seed's pattern: the base's two-joint message off, one message of every joint instead.
    let mut e = engine(
        "sim: {timestep: 0.002}
components:
  - spawn_robot: {model: ackermann_car, prefix: car_}
    name: car
    components:
      - joint_state_publisher: {rate_hz: 62}
        name: all_joints
      - joint_state_publisher: {joints: [rear_right_joint, left_steer_joint], namespace: diag, topics: {joint_states: /subset}}
        name: subset
  - spawn_robot: {model: turtlebot4, prefix: tb_, namespace: tb, pose: {position: {x: 2.0}}}
    name: tb
    components:
      - diff_drive: {publish_joint_states: false}
",
    );
    let js: Vec<usize> = e
        .ctx
        .interface
        .all()
        .iter()
        .enumerate()
        .filter(|(_, ep)| ep.name == "joint_states")
        .map(|(i, _)| i)
        .collect();
    let owners: Vec<Option<&str>> =
        js.iter().map(|&i| e.ctx.interface.get(i).owner.as_deref()).collect();
    assert_eq!(
        owners,
        vec![Some("car"), Some("car"), Some("car")],
        "ackermann + 2 publishers; the turtlebot publishes none"
    );
    let every = e.ctx.interface.get(js[1]).snapped.unwrap();
    assert_eq!(every.every_steps, 8, "62 Hz snaps to every 8 steps of 0.002 s");
    assert_eq!(e.ctx.interface.get(js[2]).get_hint("ros2", "topic"), Some("/subset"));
    assert_eq!(
        (
            e.ctx.interface.get(js[2]).namespace.as_str(),
            e.ctx.interface.get(js[2]).frame_prefix.as_str()
        ),
        ("diag", "diag/")
    );
    assert_eq!(e.ctx.interface.get(js[1]).namespace, "", "no namespace on the car: global");
    e.step_n(40).unwrap();
    let get = |i: usize| match e.ctx.interface.get(i).latest() {
        Some((Payload::JointState(j), _)) => j.clone(),
        other => panic!("{other:?}"),
    };
    let all = get(js[1]);
    assert_eq!(
        all.name,
        vec![
            "left_steer_joint",
            "front_left_wheel_joint",
            "right_steer_joint",
            "front_right_wheel_joint",
            "rear_left_joint",
            "rear_right_joint"
        ]
    );
    let sub = get(js[2]);
    assert_eq!(sub.name, vec!["rear_right_joint", "left_steer_joint"]);
    let m = e.ctx.model();
    let j = m.name_to_id(MjtObjBase::mjOBJ_JOINT, "car_rear_right_joint").unwrap();
    assert_eq!(sub.position[0], e.ctx.data().qpos()[m.jnt_qposadr()[j] as usize]);
}

// ------------------------------------------------------------------------------------------
// omni_drive
// ------------------------------------------------------------------------------------------

#[test]
fn omni_strafes_along_body_y_at_yaw_one_radian() {
    let mut e = engine(
        "sim: {timestep: 0.002}
components:
  - spawn_robot: {model: omni_base, pose: {orientation: {yaw: 1.0}}}
    name: robot
",
    );
    let p0 = qpose(&e, "base_free");
    let turned = drive_for(&mut e, Some(twist(0.0, 0.3, 0.0)), 3.0, "base_free");
    let p1 = qpose(&e, "base_free");
    let (dx, dy) = (p1.0 - p0.0, p1.1 - p0.1);
    let d = dx.hypot(dy);
    let (ux, uy) = (dx / d, dy / d);
    let angle_err = (ux * 1f64.cos() + uy * 1f64.sin()).asin(); // component along body x
    let (ox, oy, oyaw, _, ovy, _) = handle(&e, "robot").read_odom();
    println!("omni: moved {d:.4} m along ({ux:.4}, {uy:.4}), body y = ({:.4}, {:.4}); off-axis {:.3} deg; turned {turned:.2e}; odom ({ox:.4}, {oy:.4}, {oyaw:.2e}) vy {ovy:.4}", -1f64.sin(), 1f64.cos(), angle_err.to_degrees());
    assert!(
        (ux + 1f64.sin()).abs() < 0.01 && (uy - 1f64.cos()).abs() < 0.01,
        "moved along ({ux}, {uy})"
    );
    // 0.3 m/s for 3 s minus the 1 m/s² ramp (0.045 m) and the planar servo's 0.1 s lag (0.03 m).
    assert!((d - 0.825).abs() < 0.02, "strafed {d} m");
    assert!(turned.abs() < 0.01, "yawed {turned} rad while strafing");
    // Odometry: body-frame y, from the achieved twist.
    assert!(
        ox.abs() < 0.01 && (oy - d).abs() < 0.01 * d && (ovy - 0.3).abs() < 0.01,
        "odom ({ox}, {oy}) vy {ovy}"
    );
    // Observational mecanum wheels counter-rotate pairwise when strafing.
    let id = endpoint(&e, "joint_states");
    e.step_n(10).unwrap();
    let js = match e.ctx.interface.get(id).latest() {
        Some((Payload::JointState(j), _)) => j.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        js.name,
        vec!["front_left_joint", "front_right_joint", "rear_left_joint", "rear_right_joint"]
    );
    let w = &js.velocity;
    println!("omni wheels {w:?}");
    assert!(
        w[0] < -1.0 && w[1] > 1.0 && w[2] > 1.0 && w[3] < -1.0,
        "mecanum strafe pattern: {w:?}"
    );
}

#[test]
fn omni_limits_combined_speed_and_turns() {
    let omni = |cmd: &str| {
        engine(&format!(
            "sim: {{timestep: 0.002}}
components:
  - spawn_robot: {{model: omni_base}}
    name: robot
    components:
      - omni_drive: {{test_cmd: {cmd}, accel_limit: 0.0, angular_accel_limit: 0.0}}
"
        ))
    };
    // [1, 1] m/s is capped to hypot 0.7 (max_combined_linear_vel), direction kept.
    let mut e = omni("[1.0, 1.0, 0.0]");
    let p0 = qpose(&e, "base_free");
    e.step_n(1000).unwrap();
    let p1 = qpose(&e, "base_free");
    let (_, _, _, vx, vy, _) = handle(&e, "robot").read_odom();
    println!(
        "omni combined: body twist ({vx:.4}, {vy:.4}), moved ({:.4}, {:.4})",
        p1.0 - p0.0,
        p1.1 - p0.1
    );
    assert!(
        (vx.hypot(vy) - 0.7).abs() < 0.01,
        "hypot {} vs max_combined_linear_vel 0.7",
        vx.hypot(vy)
    );
    assert!(
        (vx - vy).abs() < 0.005 && ((p1.1 - p0.1) / (p1.0 - p0.0) - 1.0).abs() < 0.01,
        "direction lost: ({vx}, {vy})"
    );
    // Yaw rate 3 rad/s is capped to max_angular_vel 2.0944.
    let mut e = omni("[0.0, 0.0, 3.0]");
    let turned = drive_for(&mut e, None, 1.0, "base_free");
    let (_, _, oyaw, _, _, wz) = handle(&e, "robot").read_odom();
    println!("omni turn: wz {wz:.4}, turned {turned:.4} rad, odometry {oyaw:.4}");
    assert!((wz - 2.0944).abs() < 0.01, "yaw rate {wz}");
    // 2.0944 rad/s for 1 s less the yaw servo's 0.04 s lag.
    assert!(
        (turned - 2.0944 * 0.96).abs() < 0.03 && (oyaw - turned).abs() < 1e-3,
        "turned {turned}, odom {oyaw}"
    );
}

// ------------------------------------------------------------------------------------------
// ackermann_drive
// ------------------------------------------------------------------------------------------

fn car(extra: &str) -> String {
    format!(
        "sim: {{timestep: 0.002}}
components:
  - spawn_robot: {{model: ackermann_car}}
    name: car
    components:
      - ackermann_drive: {{{extra}}}
"
    )
}

/// Least-squares circle (Kasa fit) through points: (cx, cy, r).
fn fit_circle(pts: &[(f64, f64)]) -> (f64, f64, f64) {
    let mut m = [[0.0f64; 3]; 3];
    let mut r = [0.0f64; 3];
    for &(x, y) in pts {
        let row = [x, y, 1.0];
        for i in 0..3 {
            for j in 0..3 {
                m[i][j] += row[i] * row[j];
            }
            r[i] -= row[i] * (x * x + y * y);
        }
    }
    let det = |m: &[[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let d = det(&m);
    let mut s = [0.0; 3];
    for k in 0..3 {
        let mut mk = m;
        for i in 0..3 {
            mk[i][k] = r[i];
        }
        s[k] = det(&mk) / d;
    }
    let (cx, cy) = (-s[0] / 2.0, -s[1] / 2.0);
    (cx, cy, (cx * cx + cy * cy - s[2]).sqrt())
}

fn steer_angles(e: &Engine) -> (f64, f64) {
    let m = e.ctx.model();
    let q = e.ctx.data().qpos();
    let a =
        |n: &str| q[m.jnt_qposadr()[m.name_to_id(MjtObjBase::mjOBJ_JOINT, n).unwrap()] as usize];
    (a("left_steer_joint"), a("right_steer_joint"))
}

#[test]
fn ackermann_zero_speed_with_yaw_rate_does_not_move() {
    let mut e = engine(&car(""));
    let p0 = qpose(&e, "base_free");
    let turned = drive_for(&mut e, Some(twist(0.0, 0.0, 1.0)), 2.0, "base_free");
    let p1 = qpose(&e, "base_free");
    let moved = (p1.0 - p0.0).hypot(p1.1 - p0.1);
    let (l, r) = steer_angles(&e);
    println!("car v=0 w=1: moved {moved:.2e} m, turned {turned:.2e} rad, steer ({l:.2e}, {r:.2e})");
    assert!(
        moved < 1e-3 && turned.abs() < 1e-3,
        "a car commanded v = 0 moved {moved} m / turned {turned} rad"
    );
    assert!(l.abs() < 0.01 && r.abs() < 0.01, "a curvature at rest set the rack: ({l}, {r})");
}

#[test]
fn ackermann_cmd_turns_the_wheels_of_a_stopped_car_with_the_split() {
    let mut e = engine(&car(""));
    let id = endpoint(&e, "ackermann_cmd");
    let ep = e.ctx.interface.get(id);
    assert_eq!(ep.get_hint("ros2", "type"), Some("ackermann_msgs/msg/AckermannDriveStamped"));
    assert_eq!(ep.get_hint("ros2", "topic"), Some("drive"));
    e.ctx.interface.deliver(
        id,
        Payload::Ackermann(AckermannDrive {
            steering_angle: 0.3,
            speed: 0.0,
            ..Default::default()
        }),
    );
    let p0 = qpose(&e, "base_free");
    e.step_n(500).unwrap();
    let (l, r) = steer_angles(&e);
    let p1 = qpose(&e, "base_free");
    // Ackermann split of a 0.3 rad centre angle, L 0.3302, steer_track 0.2.
    let (t, ll, a) = (0.3f64.tan(), 0.3302, 0.1);
    let (el, er) = ((ll * t).atan2(ll - a * t), (ll * t).atan2(ll + a * t));
    println!(
        "stopped car: steer ({l:.4}, {r:.4}) expected ({el:.4}, {er:.4}); moved {:.2e}",
        (p1.0 - p0.0).hypot(p1.1 - p0.1)
    );
    assert!((l - el).abs() < 0.01 && (r - er).abs() < 0.01 && l > r, "steer ({l}, {r})");
    assert!((p1.0 - p0.0).hypot(p1.1 - p0.1) < 2e-3, "a stopped car moved while steering");
    // joint_states carries the steer joints with the driven ones.
    let js = match e.ctx.interface.get(endpoint(&e, "joint_states")).latest() {
        Some((Payload::JointState(j), _)) => j.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        js.name,
        vec!["rear_left_joint", "rear_right_joint", "left_steer_joint", "right_steer_joint"]
    );
    assert!((js.position[2] - l).abs() < 0.01);
    // A later cmd_vel owns the angle again: straight ahead.
    e.ctx.interface.deliver(endpoint(&e, "cmd_vel"), twist(0.5, 0.0, 0.0));
    e.step_n(500).unwrap();
    let (l, r) = steer_angles(&e);
    assert!(l.abs() < 0.01 && r.abs() < 0.01, "cmd_vel did not take the angle back: ({l}, {r})");
}

#[test]
fn ackermann_minimum_turning_radius_matches_wheelbase_over_tan_max_steer() {
    // Ask for more yaw rate than the rack allows: the centre angle saturates at max_steer_angle.
    let mut e = engine(&car("test_cmd: [0.5, 5.0]"));
    e.step_n(1000).unwrap();
    let mut pts = Vec::new();
    for _ in 0..100 {
        e.step_n(40).unwrap();
        let p = qpose(&e, "base_free");
        pts.push((p.0, p.1));
    }
    let (_, _, radius) = fit_circle(&pts);
    let expected = 0.3302 / 0.4189f64.tan();
    let ow = handle(&e, "car").read_odom();
    let (l, r) = steer_angles(&e);
    println!("car full lock: radius {radius:.4} m, expected {expected:.4} m ({:+.1} %), steer ({l:.4}, {r:.4}), odom v {:.4} w {:.4}", 100.0 * (radius / expected - 1.0), ow.3, ow.5);
    // Measured with the bundled ackermann_car: 0.830 m (+12 %): its steer joints' range and
    // ctrlrange (±0.4189) clamp the INNER wheel below the Ackermann angle of a 0.4189 rad centre
    // angle (0.4753 rad). With them widened to ±0.5 the same drive turns 0.770 m (+3.8 %).
    assert!(
        (radius - expected).abs() < 0.05 * expected,
        "minimum turning radius {radius} m vs {expected} m"
    );
}

#[test]
fn ackermann_straight_odometry_and_accel_limit() {
    let mut e = engine(&car("test_cmd: [1.0, 0.0]"));
    e.step_n(100).unwrap(); // 0.2 s at 3 m/s² → 0.6 m/s commanded
    let v_ramp = handle(&e, "car").read_odom().3;
    e.step_n(900).unwrap();
    let p = qpose(&e, "base_free");
    let (ox, oy, ..) = handle(&e, "car").read_odom();
    println!(
        "car straight: v after 0.2 s {v_ramp:.3}; truth x {:.4} odom x {ox:.4} (y {oy:.2e})",
        p.0
    );
    assert!((v_ramp - 0.6).abs() < 0.1, "speed after 0.2 s: {v_ramp}");
    assert!((ox - p.0).abs() < 0.03 * p.0 && p.1.abs() < 0.02, "odom {ox} vs truth {}", p.0);
}

// ------------------------------------------------------------------------------------------
// ground_truth_pose
// ------------------------------------------------------------------------------------------

#[test]
fn ground_truth_pose_world_and_base_relative() {
    let mut e = engine(
        "sim: {timestep: 0.002}
components:
  - spawn_robot: {model: turtlebot4, namespace: robot1, prefix: r1_, pose: {position: {x: 1.0, y: 2.0}, orientation: {yaw: 0.5}}}
    name: tb
    components:
      - diff_drive: {test_cmd: [0.2, 0.3]}
      - ground_truth_pose: {}
        name: gt
      - ground_truth_pose: {site: imu, relative_to: base, rate_hz: 10, topics: {pose: /gt/imu}}
        name: gt_imu
",
    );
    e.step_n(750).unwrap();
    let ids: Vec<usize> = e
        .ctx
        .interface
        .all()
        .iter()
        .enumerate()
        .filter(|(_, ep)| ep.name == "pose")
        .map(|(i, _)| i)
        .collect();
    let (w, b) = (e.ctx.interface.get(ids[0]), e.ctx.interface.get(ids[1]));
    assert_eq!(
        (w.get_hint("ros2", "tf"), w.get_hint("ros2", "topic")),
        (Some("dynamic"), Some("tf"))
    );
    assert_eq!(
        (w.frame_prefix.as_str(), b.frame_prefix.as_str()),
        ("", "robot1/"),
        "map/<model>_gt global; a link namespaced"
    );
    assert_eq!(b.get_hint("ros2", "topic"), Some("/gt/imu"));
    assert_eq!((w.snapped.unwrap().every_steps, b.snapped.unwrap().every_steps), (17, 50));
    let tf = |i: usize| match e.ctx.interface.get(i).latest() {
        Some((Payload::Transforms(t), tick)) => (t[0].clone(), tick),
        other => panic!("{other:?}"),
    };
    let (tw, tick) = tf(ids[0]);
    assert_eq!((tw.parent.as_str(), tw.child.as_str()), ("map", "turtlebot4_base_link_gt"));
    assert_eq!(tick % 17, 0);
    // The reader is refreshed every step: it equals the body's pose now.
    let reader = e.ctx.blackboard.get::<GroundTruthReader>("ground_truth:tb.gt").unwrap().clone();
    let pt = reader.get();
    let (x, y, yaw) = pose2d(&e, "r1_base_link");
    assert!((pt.position[0] - x).abs() < 1e-12 && (pt.position[1] - y).abs() < 1e-12);
    let o = pt.orientation;
    assert!((roqsim::math::yaw_of(&[o[3], o[0], o[1], o[2]]) - yaw).abs() < 1e-9);
    assert!((pt.stamp - 1.5).abs() < 1e-9);
    // World-frame twist of base_link = the free joint's (linear world-frame, angular body-frame ≈
    // world z on the flat floor); the kinematics are from the start of the step, qvel from its end.
    let m = e.ctx.model();
    let dof =
        m.jnt_dofadr()[m.name_to_id(MjtObjBase::mjOBJ_JOINT, "r1_base_free").unwrap()] as usize;
    let qv = &e.ctx.data().qvel()[dof..dof + 6];
    println!("gt twist {:?} {:?}; qvel {qv:?}", pt.linear, pt.angular);
    assert!(
        (pt.linear[0] - qv[0]).abs() < 1e-3
            && (pt.linear[1] - qv[1]).abs() < 1e-3
            && (pt.angular[2] - qv[5]).abs() < 1e-3
    );
    assert!((pt.linear[0].hypot(pt.linear[1]) - 0.2).abs() < 0.01, "speed {:?}", pt.linear);
    // Ground truth moves with the robot from its spawn pose (not the odom frame's origin).
    assert!((x - 1.0).hypot(y - 2.0) > 0.2, "robot at ({x}, {y})");
    // Base-relative IMU site: the model's fixed offset, whatever the robot does.
    let (tb_, _) = tf(ids[1]);
    assert_eq!((tb_.parent.as_str(), tb_.child.as_str()), ("base_link", "imu"));
    let t = tb_.translation;
    assert!(
        (t[0] - 0.050613).abs() < 1e-9
            && (t[1] - 0.043673).abs() < 1e-9
            && (t[2] - 0.0844).abs() < 1e-9,
        "{t:?}"
    );
    assert!((tb_.rotation[3] - 1.0).abs() < 1e-9);
    let imu = e.ctx.blackboard.get::<GroundTruthReader>("ground_truth:tb.gt_imu").unwrap().get();
    assert!(
        imu.linear.iter().all(|v| v.abs() < 1e-9),
        "a fixed site moves relative to its base: {:?}",
        imu.linear
    );
}

// ------------------------------------------------------------------------------------------
// Refusals
// ------------------------------------------------------------------------------------------

const TB_NAMES: &str = "left_actuator: left_wheel_motor, right_actuator: right_wheel_motor, left_joint: left_wheel_joint, right_joint: right_wheel_joint";

fn bare_tb(dd: &str) -> String {
    format!(
        "components:
  - spawn_robot: {{model: turtlebot4, default_plugins: false, prefix: p_}}
    name: robot
    components:
      - diff_drive: {{{dd}}}
"
    )
}

#[test]
fn refusals_top_level_without_owner() {
    for (plugin, cfg) in [
        ("diff_drive", TB_NAMES),
        ("omni_drive", ""),
        ("ackermann_drive", ""),
        ("joint_state_publisher", ""),
        ("ground_truth_pose", ""),
    ] {
        let t = refusal(&format!("components:\n  - {plugin}: {{{cfg}}}\n"));
        assert_has(
            &t,
            &[
                &format!("components.{plugin}"),
                &format!("`{plugin}` belongs to a robot and must be nested under it"),
                "components:",
            ],
        );
    }
}

#[test]
fn refusal_joint_name_for_actuator_names_the_actuator() {
    let t = refusal(&bare_tb(
        "left_actuator: left_wheel_joint, right_actuator: right_wheel_motor, left_joint: left_wheel_joint, right_joint: right_wheel_joint",
    ));
    assert_has(&t, &["[robot.diff_drive] configure", "left_actuator: `left_wheel_joint` is a joint, not an actuator; the actuator driving it is `left_wheel_motor`"]);
}

#[test]
fn refusal_missing_actuator_lists_the_entitys_actuators() {
    let t = refusal(&bare_tb("left_actuators: [left_wheel_motor, left_rear_motor], right_actuators: [right_wheel_motor, right_wheel_motor], left_joints: [left_wheel_joint, left_wheel_joint], right_joints: [right_wheel_joint, right_wheel_joint]"));
    assert_has(&t, &["left_actuators[1]: entity `robot` has no actuator `left_rear_motor` (looked up as `p_left_rear_motor`); its actuators are [left_wheel_motor, right_wheel_motor]"]);
    let t = refusal(&bare_tb("left_actuator: left_wheel_motor, right_actuator: right_wheel_motor, left_joint: left_wheel_joint, right_joint: right_wheel"));
    assert_has(
        &t,
        &[
            "right_joint: entity `robot` has no joint `right_wheel`",
            "its joints are [base_free, left_wheel_joint, right_wheel_joint]",
        ],
    );
}

#[test]
fn refusal_singular_and_list_forms() {
    let t = refusal(&bare_tb(&format!("{TB_NAMES}, left_actuators: [left_wheel_motor]")));
    assert_has(
        &t,
        &[
            "components.robot.diff_drive.left_actuators",
            "both `left_actuator` and `left_actuators` are given",
        ],
    );
    let t = refusal(&bare_tb("left_actuator: left_wheel_motor, left_joint: left_wheel_joint, right_joint: right_wheel_joint"));
    assert_has(
        &t,
        &[
            "components.robot.diff_drive.right_actuator",
            "missing: name the right wheel velocity actuator(s) with `right_actuator`",
        ],
    );
    let t = refusal(&bare_tb("left_actuators: [a, b], right_actuator: right_wheel_motor, left_joints: [left_wheel_joint], right_joint: right_wheel_joint"));
    assert_has(&t, &["left_joints", "1 left joint(s) for 2 left actuator(s)"]);
    let t =
        refusal(&bare_tb("left_actuators: [], right_actuator: r, left_joint: l, right_joint: r"));
    assert_has(&t, &["left_actuators", "empty list"]);
}

#[test]
fn refusal_bad_values_and_keys() {
    let t = refusal(&bare_tb(&format!("{TB_NAMES}, wheel_radius: 0, odom_noise: {{linear_stddev: -1, angular_scale: 0}}, topics: {{scan: x}}, cmd_vel_timeout: -1")));
    assert_has(
        &t,
        &[
            "diff_drive.wheel_radius: must be > 0, got 0",
            "diff_drive.odom_noise.linear_stddev: must be >= 0",
            "diff_drive.odom_noise.angular_scale: must be > 0",
            "diff_drive.topics.scan: no endpoint role `scan` here; the roles are: cmd_vel, odom, joint_states",
            "diff_drive.cmd_vel_timeout: must be >= 0",
        ],
    );
    let t = refusal(&bare_tb(&format!("{TB_NAMES}, wheel_radus: 0.1")));
    assert_has(&t, &["unknown field `wheel_radus`"]);
}

#[test]
fn refusal_position_servo_where_velocity_expected() {
    let t = refusal(
        "components:
  - spawn_robot: {model: ackermann_car, default_plugins: false}
    name: car
    components:
      - ackermann_drive: {steer_actuators: [rear_left_motor, right_steer_motor], steer_joints: [left_steer_joint, right_steer_joint], drive_actuators: [rear_left_motor, rear_right_motor], drive_joints: [rear_left_joint, rear_right_joint]}
",
    );
    assert_has(&t, &["steer_actuators[0]: `rear_left_motor` is not a position servo"]);
    let t = refusal(
        "components:
  - spawn_robot: {model: ackermann_car, default_plugins: false}
    name: car
    components:
      - ackermann_drive: {steer_actuators: [left_steer_motor, right_steer_motor], steer_joints: [right_steer_joint, left_steer_joint], drive_actuators: [rear_left_motor, rear_right_motor], drive_joints: [rear_left_joint, rear_right_joint]}
",
    );
    assert_has(&t, &["must be left then right", "swap them"]);
    let t = refusal(
        "components:
  - spawn_robot: {model: ackermann_car, default_plugins: false}
    name: car
    components:
      - ackermann_drive: {steer_actuators: [left_steer_motor], drive_actuators: [rear_left_motor, rear_right_motor], drive_joints: [rear_left_joint, rear_right_joint]}
",
    );
    assert_has(
        &t,
        &[
            "ackermann_drive.steer_actuators: needs exactly 2 names",
            "ackermann_drive.steer_joints: missing: list the two steering joints, left then right",
        ],
    );
}

#[test]
fn refusal_omni_keys() {
    let t = refusal(
        "components:
  - spawn_robot: {model: omni_base, default_plugins: false}
    name: robot
    components:
      - omni_drive: {wheels: [front_left, front_right, rear_left], steer_actuators: [a]}
",
    );
    assert_has(
        &t,
        &["omni_drive.steer_joints: missing: `steer_actuators` given without `steer_joints`"],
    );
    let t = refusal(
        "components:
  - spawn_robot: {model: omni_base, default_plugins: false}
    name: robot
    components:
      - omni_drive: {wheels: [front_left, front_right, rear_left]}
",
    );
    assert_has(&t, &["omni_drive.wheels: mecanum kinematics needs exactly 4 wheels"]);
    let t = refusal(
        "components:
  - spawn_robot: {model: omni_base, default_plugins: false}
    name: robot
    components:
      - omni_drive: {vx_actuator: base_vy}
",
    );
    assert_has(
        &t,
        &["vx_actuator: `base_vy` must be a velocity actuator on `base_free`'s world x DOF"],
    );
    let t = refusal(
        "components:
  - spawn_robot: {model: omni_base, default_plugins: false}
    name: robot
    components:
      - omni_drive: {base_joint: front_left_joint}
",
    );
    assert_has(&t, &["base_joint: `front_left_joint` is not a free joint"]);
}

#[test]
fn refusal_two_controllers_on_one_robot() {
    let t = refusal(
        "components:
  - spawn_robot: {model: turtlebot4}
    name: robot
    components:
      - diff_drive: {left_actuator: left_wheel_motor, right_actuator: right_wheel_motor, left_joint: left_wheel_joint, right_joint: right_wheel_joint}
        name: second_drive
",
    );
    assert_has(
        &t,
        &[
            "[robot.second_drive] configure",
            "entity `robot` already has a base controller (`diff_drive` serves `robot:robot`)",
        ],
    );
}

#[test]
fn refusal_joint_state_publisher_and_ground_truth() {
    let t = refusal(
        "components:
  - spawn_robot: {model: turtlebot4, default_plugins: false}
    name: robot
    components:
      - joint_state_publisher: {joints: [left_wheel_joint, caster_joint]}
",
    );
    assert_has(
        &t,
        &[
            "joints[1]: entity `robot` has no joint `caster_joint`",
            "its joints are [base_free, left_wheel_joint, right_wheel_joint]",
        ],
    );
    let t = refusal(
        "components:
  - spawn_robot: {model: turtlebot4, default_plugins: false}
    name: robot
    components:
      - joint_state_publisher: {joints: [base_free]}
",
    );
    assert_has(&t, &["joints[0]: `base_free` is a mjJNT_FREE joint"]);
    let t = refusal(
        "components:
  - spawn_robot: {model: turtlebot4, default_plugins: false}
    name: robot
    components:
      - ground_truth_pose: {body: base_link, site: imu}
      - ground_truth_pose: {rate_hz: 0}
        name: gt2
",
    );
    assert_has(
        &t,
        &["ground_truth_pose.site: give `body` or `site`, not both", "gt2.rate_hz: must be > 0"],
    );
    let t = refusal(
        "components:
  - spawn_robot: {model: turtlebot4, default_plugins: false}
    name: robot
    components:
      - ground_truth_pose: {site: lidar}
",
    );
    assert_has(
        &t,
        &["site: entity `robot` has no site `lidar`", "its sites are [imu, lidar_mount"],
    );
}

// ------------------------------------------------------------------------------------------
// omni_drive: swerve (no bundled swerve model: a minimal one written here)
// ------------------------------------------------------------------------------------------

fn swerve_mjcf() -> String {
    let mut modules = String::new();
    let mut acts = String::new();
    for (n, x, y) in
        [("fl", 0.2, 0.15), ("fr", 0.2, -0.15), ("rl", -0.2, 0.15), ("rr", -0.2, -0.15)]
    {
        modules += &format!(
            r#"<body name="{n}_module" pos="{x} {y} 0"><joint name="{n}_steer_joint" axis="0 0 1" damping="0.05" armature="0.01"/>
                 <geom type="sphere" size="0.02" mass="0.3" contype="0" conaffinity="0"/>
                 <body name="{n}_wheel"><joint name="{n}_joint" axis="0 1 0" damping="0.001"/>
                   <geom type="cylinder" size="0.05 0.02" zaxis="0 1 0" mass="0.3" condim="1" priority="1" friction="0 0 0"/></body></body>"#
        );
        acts += &format!(
            r#"<position name="{n}_steer_motor" joint="{n}_steer_joint" kp="20" kv="1"/><velocity name="{n}_motor" joint="{n}_joint" kv="0.2"/>"#
        );
    }
    format!(
        r#"<mujoco model="swerve"><worldbody><body name="base_link" pos="0 0 0.05"><freejoint name="base_free"/>
             <geom type="box" size="0.25 0.2 0.03" pos="0 0 0.06" mass="10"/>{modules}</body></worldbody>
           <actuator><velocity name="base_vx" joint="base_free" gear="1 0 0 0 0 0" kv="200"/>
             <velocity name="base_vy" joint="base_free" gear="0 1 0 0 0 0" kv="200"/>
             <velocity name="base_wz" joint="base_free" gear="0 0 0 0 0 1" kv="20"/>{acts}</actuator></mujoco>"#
    )
}

#[test]
fn swerve_steers_modules_along_their_contact_velocity() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("swerve.xml");
    std::fs::write(&path, swerve_mjcf()).unwrap();
    let world = |cmd: &str| {
        format!(
            "sim: {{timestep: 0.002}}
components:
  - spawn_robot: {{model: {}}}
    name: sw
    components:
      - omni_drive:
          wheel_radius: 0.05
          wheels: [fl, fr, rl, rr]
          steer_joints: [fl_steer_joint, fr_steer_joint, rl_steer_joint, rr_steer_joint]
          steer_actuators: [fl_steer_motor, fr_steer_motor, rl_steer_motor, rr_steer_motor]
          test_cmd: {cmd}
",
            path.display()
        )
    };
    let read = |e: &Engine| match e.ctx.interface.get(endpoint(e, "joint_states")).latest() {
        Some((Payload::JointState(j), _)) => j.clone(),
        other => panic!("{other:?}"),
    };
    // Strafe left: every module steers to ±π/2 (the nearer of the two from 0 is +π/2) and rolls.
    let mut e = engine(&world("[0.0, 0.3, 0.0]"));
    e.step_n(1000).unwrap();
    let js = read(&e);
    assert_eq!(js.name[..4], ["fl_joint", "fr_joint", "rl_joint", "rr_joint"]);
    assert_eq!(
        js.name[4..],
        ["fl_steer_joint", "fr_steer_joint", "rl_steer_joint", "rr_steer_joint"]
    );
    println!("swerve strafe: steer {:?}, roll {:?}", &js.position[4..], &js.velocity[..4]);
    for k in 0..4 {
        assert!(
            (js.position[4 + k] - std::f64::consts::FRAC_PI_2).abs() < 0.02,
            "steer {k}: {}",
            js.position[4 + k]
        );
        assert!((js.velocity[k] - 0.3 / 0.05).abs() < 0.3, "roll {k}: {}", js.velocity[k]);
    }
    let p = qpose(&e, "base_free");
    // 0.3 m/s for 2 s less the 1 m/s² ramp (0.045 m) and the planar servo lag (~0.017 m).
    assert!(p.0.abs() < 0.01 && (p.1 - 0.538).abs() < 0.015, "base at {p:?}");
    // Turn in place: each module tangent to its circle, (fl) at atan2(0.2, -0.15)-ish → nearer branch.
    let mut e = engine(&world("[0.0, 0.0, 1.0]"));
    e.step_n(500).unwrap();
    let js = read(&e);
    println!("swerve turn: steer {:?}, roll {:?}", &js.position[4..], &js.velocity[..4]);
    for (k, (x, y)) in
        [(0.2f64, 0.15f64), (0.2, -0.15), (-0.2, 0.15), (-0.2, -0.15)].into_iter().enumerate()
    {
        // Contact velocity w × r = (−y, x); the steer angle is its heading or that plus π, within ±π/2.
        let heading = x.atan2(-y);
        let a = js.position[4 + k];
        let d = (a - heading).rem_euclid(std::f64::consts::PI);
        assert!(
            d.min(std::f64::consts::PI - d) < 0.02, // within 0.02 rad of the heading, mod π
            "module {k} steer {a} vs heading {heading}"
        );
        assert!(
            a.abs() <= std::f64::consts::FRAC_PI_2 + 0.02,
            "module {k} slewed past the nearer branch: {a}"
        );
        assert!((js.velocity[k].abs() - 0.25 / 0.05).abs() < 0.3, "roll {k}: {}", js.velocity[k]);
    }
}

#[test]
fn absent_robot_is_not_driven_until_present() {
    let mut e = engine(
        "sim: {timestep: 0.002}
components:
  - spawn_robot: {model: omni_base, present: false, pose: {position: {x: 1.0}}}
    name: robot
    components:
      - omni_drive: {test_cmd: [0.5, 0.0, 0.0]}
",
    );
    let p0 = qpose(&e, "base_free");
    e.step_n(500).unwrap();
    let p1 = qpose(&e, "base_free");
    println!("absent omni: {p0:?} -> {p1:?}");
    assert!(
        (p1.0 - p0.0).hypot(p1.1 - p0.1) < 1e-3,
        "an absent base was driven from {p0:?} to {p1:?}"
    );
    roqsim::engine::presence::set_present(&mut e.ctx, "robot", true).unwrap();
    e.step_n(500).unwrap();
    let p2 = qpose(&e, "base_free");
    println!("present omni: {p2:?}");
    assert!(p2.0 - p1.0 > 0.3, "present again, the base did not drive: {p2:?}");
}

// ------------------------------------------------------------------------------------------
// The shared drive base: odometry noise, the watchdog and non-finite commands on every drive
// ------------------------------------------------------------------------------------------

/// An omni_base from its manifest, with `extra` keys merged into its omni_drive.
fn omni(extra: &str) -> String {
    format!(
        "sim: {{timestep: 0.002}}
components:
  - spawn_robot: {{model: omni_base}}
    name: robot
    components:
      - omni_drive: {{{extra}}}
"
    )
}

fn latest_odom(e: &Engine) -> roqsim::context::payload::Odometry {
    match e.ctx.interface.get(endpoint(e, "odom")).latest() {
        Some((Payload::Odometry(o), _)) => o.clone(),
        other => panic!("no odometry published: {other:?}"),
    }
}

/// `RobotHandle::read_odom`: (x, y, yaw, vx, vy, wz).
type OdomRead = (f64, f64, f64, f64, f64, f64);
/// Ground-truth planar pose (x, y, yaw).
type Pose2d = (f64, f64, f64);

/// Seeded run of `yaml` driven through the handle for 3 s: (odometry, ground truth, odom message).
fn noisy_run(
    yaml: &str,
    name: &str,
    seed: u64,
    cmd: [f64; 3],
) -> (OdomRead, Pose2d, roqsim::context::payload::Odometry) {
    let mut e = engine_seed(yaml, seed);
    handle(&e, name).drive(cmd[0], cmd[1], cmd[2]);
    e.step_n(1500).unwrap();
    (handle(&e, name).read_odom(), qpose(&e, "base_free"), latest_odom(&e))
}

#[test]
fn omni_and_ackermann_odom_noise_is_seeded_reproducible_and_drifts() {
    let noise = "odom_noise: {linear_stddev: 0.05, angular_stddev: 0.1, linear_scale: 1.02, angular_scale: 0.97}";
    for (yaml, clean, name, cmd, holonomic) in [
        (omni(noise), omni(""), "robot", [0.2, 0.1, 0.4], true),
        (car(noise), car(""), "car", [1.0, 0.0, 0.5], false),
    ] {
        let (a, truth_a, msg_a) = noisy_run(&yaml, name, 7, cmd);
        let (b, truth_b, msg_b) = noisy_run(&yaml, name, 7, cmd);
        let (c, _, _) = noisy_run(&yaml, name, 8, cmd);
        let (exact, truth_exact, msg_exact) = noisy_run(&clean, name, 7, cmd);
        println!(
            "{name} noise: seed 7 {a:?}\n  seed 8 {c:?}\n  exact {exact:?}\n  truth {truth_a:?}"
        );
        assert_eq!(a, b, "{name}: same seed, different odometry");
        assert_eq!(msg_a, msg_b);
        assert_eq!(truth_a, truth_exact, "{name}: odometry noise moved the robot");
        assert_eq!(truth_a, truth_b);
        let drift = (a.0 - exact.0).hypot(a.1 - exact.1);
        assert!(drift > 0.01, "{name}: noisy odometry drifted only {drift} m from the exact one");
        assert!(a.2 != c.2 && (a.0 - c.0).hypot(a.1 - c.1) > 1e-3, "{name}: seeds 7 and 8 agree");
        assert_eq!(msg_a.twist_covariance[0], 0.05 * 0.05);
        assert_eq!(msg_a.twist_covariance[7], if holonomic { 0.05 * 0.05 } else { 0.0 });
        assert_eq!(msg_a.twist_covariance[35], 0.1 * 0.1);
        assert_eq!(msg_exact.twist_covariance, [0.0; 36]);
    }
}

#[test]
fn omni_and_ackermann_watchdog_stop_after_cmd_vel_timeout() {
    for (yaml, held, name, cmd) in [
        (omni("cmd_vel_timeout: 0.5"), omni("cmd_vel_timeout: 0.0"), "robot", twist(0.3, 0.0, 0.0)),
        (car("cmd_vel_timeout: 0.5"), car("cmd_vel_timeout: 0.0"), "car", twist(1.0, 0.0, 0.0)),
    ] {
        let mut e = engine(&yaml);
        let id = endpoint(&e, "cmd_vel");
        e.ctx.interface.deliver(id, cmd.clone());
        e.step_n(250).unwrap(); // 0.5 s: still driving
        let v_during = handle(&e, name).read_odom().3;
        e.step_n(500).unwrap(); // 1.5 s: timed out at 0.5 s and ramped down
        let at_1_5 = qpose(&e, "base_free");
        let v_after = handle(&e, name).read_odom().3;
        e.step_n(500).unwrap();
        let at_2_5 = qpose(&e, "base_free");
        println!(
            "{name} watchdog: v at 0.5 s {v_during:.4}, at 1.5 s {v_after:.2e}; x {:.4} -> {:.4}",
            at_1_5.0, at_2_5.0
        );
        assert!(v_during > 0.2, "{name}: not driving before the timeout: {v_during}");
        assert!(v_after.abs() < 1e-3, "{name}: still moving after the timeout: {v_after}");
        assert!((at_2_5.0 - at_1_5.0).abs() < 1e-3, "{name}: crept on after stopping");

        // Without the watchdog the held command keeps going.
        let mut e = engine(&held);
        let id = endpoint(&e, "cmd_vel");
        e.ctx.interface.deliver(id, cmd);
        e.step_n(750).unwrap();
        let v = handle(&e, name).read_odom().3;
        assert!(v > 0.2, "{name}: held command stopped: v {v}");
    }
}

#[test]
fn refusal_omni_and_ackermann_noise_and_timeout_keys() {
    let t = refusal(&omni("odom_noise: {linear_stddev: -1, angular_scale: 0}"));
    assert_has(
        &t,
        &[
            "omni_drive.odom_noise.linear_stddev: must be >= 0 (a standard deviation), got -1",
            "omni_drive.odom_noise.angular_scale: must be > 0 (a multiplicative bias; 1 = none), got 0",
        ],
    );
    let t = refusal(&car("cmd_vel_timeout: -1, odom_noise: {angular_stddev: -2}"));
    assert_has(
        &t,
        &[
            "ackermann_drive.cmd_vel_timeout: must be >= 0 (0 = off), got -1",
            "ackermann_drive.odom_noise.angular_stddev: must be >= 0 (a standard deviation), got -2",
        ],
    );
}

/// Drive `yaml` for 4 s with `cmd` delivered at 50 Hz on `input`; with `poison`, the non-finite
/// payload is delivered (alone) at 1 s and again at 2 s, between two valid commands. Returns the
/// ground-truth pose and the odometry.
fn drive_with_poison(
    yaml: &str,
    name: &str,
    input: &str,
    cmd: &Payload,
    poison: Option<&Payload>,
) -> (Pose2d, OdomRead) {
    let mut e = engine(yaml);
    let id = endpoint(&e, input);
    for i in 0..2000u64 {
        if i % 25 == 0 {
            e.ctx.interface.deliver(id, cmd.clone());
        }
        if let Some(p) = poison {
            if i == 505 || i == 1005 {
                e.ctx.interface.deliver(id, p.clone());
            }
        }
        e.step().unwrap();
    }
    (qpose(&e, "base_free"), handle(&e, name).read_odom())
}

#[test]
fn non_finite_commands_are_dropped_and_every_drive_keeps_driving() {
    let nan = f64::NAN;
    let ack = |speed: f64, angle: f64| {
        Payload::Ackermann(AckermannDrive { speed, steering_angle: angle, ..Default::default() })
    };
    let cases: Vec<(String, &str, &str, Payload, Payload, f64)> = vec![
        // (world, robot, input, valid command, poison, expected distance over 4 s)
        (
            turtlebot("cmd_vel_timeout: 0.5"),
            "robot",
            "cmd_vel",
            twist(0.2, 0.0, 0.0),
            twist(nan, 0.0, 0.0),
            0.2 * 4.0,
        ),
        (
            turtlebot("cmd_vel_timeout: 0.5"),
            "robot",
            "cmd_vel",
            twist(0.2, 0.0, 0.0),
            twist(0.2, 0.0, f64::INFINITY),
            0.2 * 4.0,
        ),
        (omni(""), "robot", "cmd_vel", twist(0.3, 0.0, 0.0), twist(0.3, nan, 0.0), 0.3 * 4.0),
        (car(""), "car", "cmd_vel", twist(1.0, 0.0, 0.0), twist(1.0, 0.0, nan), 1.0 * 4.0),
        (car(""), "car", "ackermann_cmd", ack(1.0, 0.0), ack(nan, 0.0), 1.0 * 4.0),
        (car(""), "car", "ackermann_cmd", ack(1.0, 0.0), ack(1.0, f64::NEG_INFINITY), 1.0 * 4.0),
    ];
    for (yaml, name, input, cmd, poison, expected) in cases {
        let (p_clean, o_clean) = drive_with_poison(&yaml, name, input, &cmd, None);
        let (p, o) = drive_with_poison(&yaml, name, input, &cmd, Some(&poison));
        let d = p.0.hypot(p.1);
        println!(
            "{name} {input} {poison:?}: travelled {d:.4} m (clean {:.4}); odom {o:?}",
            p_clean.0.hypot(p_clean.1)
        );
        // Dropped: the run is bitwise the run that never saw the poison.
        assert_eq!(p, p_clean, "{name} {input}: the non-finite command changed the motion");
        assert_eq!(o, o_clean, "{name} {input}: the non-finite command changed the odometry");
        assert!(o.0.is_finite() && o.3.is_finite(), "{name}: odometry went non-finite: {o:?}");
        // And it moved the expected distance (less the start-up ramp).
        assert!(
            d > 0.9 * expected && d < expected,
            "{name} {input}: travelled {d} m, expected ~{expected}"
        );
    }
}
