//! Manipulation (ROS-free): spawn_arm with its actuator laws and gravity compensation,
//! arm_controller's FollowJointTrajectory / GripperCommand execution on the physics thread, the
//! controller registry, force_torque, the mobile manipulator and the rail. Goals go in as a
//! transport would deliver them (`Payload::Goal` with feedback/outcome channels and a cancel flag)
//! and every assertion is on a measured value or a message's text.

// The ur5e MJCF states its ctrlrange as the literal ±6.28319 rad; the table must report exactly that.
#![allow(clippy::approx_constant)]

use std::f64::consts::FRAC_PI_2;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_channel::{unbounded, Receiver};
use mujoco_rs::prelude::MjtObjBase;
use roqsim::context::payload::{
    ActionCall, ActionOutcome, GoalStatus, GripperGoal, JointState, JointTolerance, Payload,
    ServiceCall, TrajectoryGoal, TrajectoryPoint,
};
use roqsim::handles::controllers::{
    ControllerSpec, Registry, State, BEST_EFFORT, FORCE_AUTO, STRICT,
};
use roqsim::plugins::manipulation::arm_controller::{ArmHandle, GripperReader};
use roqsim::plugins::sensors::force_torque::WrenchReader;
use roqsim::spawn::actuators::{ActuatorTable, Control, Law, Origin};
use roqsim::Engine;

mod common;
use common::*;

// ------------------------------------------------------------------------------------------
// helpers
// ------------------------------------------------------------------------------------------

fn world_file(name: &str) -> String {
    std::fs::read_to_string(base().join(name)).unwrap()
}

fn site(e: &Engine, name: &str) -> [f64; 3] {
    let id = e
        .ctx
        .model()
        .name_to_id(MjtObjBase::mjOBJ_SITE, name)
        .unwrap_or_else(|| panic!("no site {name}"));
    e.ctx.data().site_xpos()[id]
}

fn qadr(e: &Engine, joint: &str) -> (usize, usize) {
    let m = e.ctx.model();
    let j =
        m.name_to_id(MjtObjBase::mjOBJ_JOINT, joint).unwrap_or_else(|| panic!("no joint {joint}"));
    (m.jnt_qposadr()[j] as usize, m.jnt_dofadr()[j] as usize)
}

fn q(e: &Engine, joint: &str) -> f64 {
    e.ctx.data().qpos()[qadr(e, joint).0]
}

fn endpoint_topic(e: &Engine, topic: &str) -> usize {
    e.ctx
        .interface
        .all()
        .iter()
        .position(|ep| ep.get_hint("ros2", "topic") == Some(topic))
        .unwrap_or_else(|| panic!("no endpoint on {topic}"))
}

const JOINTS: [&str; 6] = [
    "shoulder_pan_joint",
    "shoulder_lift_joint",
    "elbow_joint",
    "wrist_1_joint",
    "wrist_2_joint",
    "wrist_3_joint",
];
/// The ur5e manifest's rest stance.
const REST: [f64; 6] = [0.0, -FRAC_PI_2, FRAC_PI_2, -FRAC_PI_2, -FRAC_PI_2, 0.0];

/// A goal as a transport delivers it: channels and a cancel flag.
struct Goal {
    outcome: Receiver<ActionOutcome>,
    feedback: Receiver<Payload>,
    cancel: Arc<AtomicBool>,
}

fn send(e: &mut Engine, ep: usize, goal: Payload) -> Goal {
    let (ftx, frx) = unbounded();
    let (otx, orx) = unbounded();
    let cancel = Arc::new(AtomicBool::new(false));
    e.ctx.interface.deliver(
        ep,
        Payload::Goal(ActionCall {
            goal: Box::new(goal),
            feedback: ftx,
            outcome: otx,
            cancel: cancel.clone(),
        }),
    );
    Goal { outcome: orx, feedback: frx, cancel }
}

/// Step until the goal's outcome arrives (at most `max` steps). Returns it and the steps taken.
fn wait(e: &mut Engine, g: &Goal, max: u64) -> (ActionOutcome, u64) {
    for i in 0..max {
        e.step().unwrap();
        if let Ok(o) = g.outcome.try_recv() {
            return (o, i + 1);
        }
    }
    panic!("no outcome within {max} steps");
}

fn traj(points: &[(f64, [f64; 6])]) -> TrajectoryGoal {
    TrajectoryGoal {
        joint_names: JOINTS.iter().map(|s| s.to_string()).collect(),
        points: points
            .iter()
            .map(|(t, p)| TrajectoryPoint {
                positions: p.to_vec(),
                time_from_start: *t,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn plus(d: [f64; 6]) -> [f64; 6] {
    let mut o = REST;
    for i in 0..6 {
        o[i] += d[i];
    }
    o
}

/// The bare arm on a pedestal, with `extra` keys in its spawn_arm config.
fn bare_arm(extra: &str) -> String {
    format!(
        "sim: {{timestep: 0.002, controllers: {{initial_state: active}}}}
components:
  - spawn_arm: {{model: ur5e, prefix: ur_, pos: [0.0, 0.0, 0.5], pedestal: true{extra}}}
    name: ur
"
    )
}

/// Joint vector (lift, elbow, wrist_1 keeping the tool vertical) that puts site `site` at
/// `target`, by Newton iterations on a copy of the state (pan and the wrists 2/3 at rest).
fn ik_vertical(e: &Engine, prefix: &str, site_name: &str, target: [f64; 3]) -> [f64; 6] {
    let mut d = e.ctx.data().clone();
    let m = e.ctx.model();
    let s = m.name_to_id(MjtObjBase::mjOBJ_SITE, &format!("{prefix}{site_name}")).unwrap();
    let adr: Vec<usize> = JOINTS
        .iter()
        .map(|j| {
            m.jnt_qposadr()[m.name_to_id(MjtObjBase::mjOBJ_JOINT, &format!("{prefix}{j}")).unwrap()]
                as usize
        })
        .collect();
    let mut x = [REST[1], REST[2]];
    let fk = |d: &mut roqsim::context::Data, x: [f64; 2]| -> [f64; 2] {
        let mut qv = REST;
        qv[1] = x[0];
        qv[2] = x[1];
        qv[3] = -FRAC_PI_2 - x[0] - x[1];
        for i in 0..6 {
            d.qpos_mut()[adr[i]] = qv[i];
        }
        d.forward();
        let p = d.site_xpos()[s];
        [p[0], p[2]]
    };
    for _ in 0..30 {
        let f = fk(&mut d, x);
        let r = [target[0] - f[0], target[2] - f[1]];
        if r[0].abs() + r[1].abs() < 1e-9 {
            break;
        }
        let h = 1e-6;
        let fa = fk(&mut d, [x[0] + h, x[1]]);
        let fb = fk(&mut d, [x[0], x[1] + h]);
        let j =
            [[(fa[0] - f[0]) / h, (fb[0] - f[0]) / h], [(fa[1] - f[1]) / h, (fb[1] - f[1]) / h]];
        let det = j[0][0] * j[1][1] - j[0][1] * j[1][0];
        x[0] += (j[1][1] * r[0] - j[0][1] * r[1]) / det;
        x[1] += (-j[1][0] * r[0] + j[0][0] * r[1]) / det;
    }
    let mut out = REST;
    out[1] = x[0];
    out[2] = x[1];
    out[3] = -FRAC_PI_2 - x[0] - x[1];
    out
}

// ------------------------------------------------------------------------------------------
// actuator laws and gravity compensation
// ------------------------------------------------------------------------------------------

#[test]
fn impedance_arm_holds_pose_within_1mm_and_table_records_the_law() {
    let mut e = engine(&bare_arm(", actuators: {control: impedance, stiffness: 2.0, damping: 0.02, each: {wrist_3: {control: position, p: 2000, d: 500}}}"));
    let f0 = site(&e, "ur_attachment_site");
    e.step_n(1500).unwrap();
    let f1 = site(&e, "ur_attachment_site");
    let drift = dist3(f0, f1);
    println!("impedance 2 N·m/rad with gravity compensation: flange moved {:.3e} m in 3 s", drift);
    assert!(drift < 1e-3, "flange drifted {drift} m");
    let t = e.ctx.blackboard.get::<ActuatorTable>("actuator_table:ur").unwrap();
    let lift = t.row("shoulder_lift").unwrap();
    assert_eq!((lift.law, lift.law_origin), (Law::Control(Control::Impedance), Origin::World));
    assert_eq!(
        lift.gains,
        vec![("stiffness", 2.0, Origin::World), ("damping", 0.02, Origin::World)]
    );
    assert_eq!(
        (lift.ctrlrange, lift.ctrlrange_origin),
        (Some([-6.28319, 6.28319]), Origin::Model),
        "unit kept: the model's ctrlrange stays"
    );
    assert_eq!((lift.forcerange, lift.forcerange_origin), (Some([-150.0, 150.0]), Origin::Model));
    let w3 = t.row("wrist_3").unwrap();
    assert_eq!(w3.law, Law::Control(Control::Position));
    assert_eq!(w3.gains, vec![("p", 2000.0, Origin::World), ("d", 500.0, Origin::World)]);
    assert_eq!(
        t.gravcomp_bodies,
        vec![
            "shoulder_link",
            "upper_arm_link",
            "forearm_link",
            "wrist_1_link",
            "wrist_2_link",
            "wrist_3_link",
            "tool0"
        ]
    );
    // The compiled model carries the law: gain = stiffness, bias = [0, -stiffness, -damping].
    let m = e.ctx.model();
    let a = m.name_to_id(MjtObjBase::mjOBJ_ACTUATOR, "ur_shoulder_lift").unwrap();
    assert_eq!(m.actuator_gainprm()[a][0], 2.0);
    assert_eq!(&m.actuator_biasprm()[a][..3], &[0.0, -2.0, -0.02]);
    let b = m.name_to_id(MjtObjBase::mjOBJ_BODY, "ur_forearm_link").unwrap();
    assert_eq!(m.body_gravcomp()[b], 1.0);
}

#[test]
fn without_gravity_compensation_the_arm_sags() {
    // The model's own 2000 N·m/rad servo: the seed measured 9 mm at the flange.
    let mut e = engine(&bare_arm(", gravity_compensation: false"));
    let f0 = site(&e, "ur_attachment_site");
    e.step_n(1500).unwrap();
    let sag = dist3(f0, site(&e, "ur_attachment_site"));
    println!("position 2000 N·m/rad, no gravity compensation: flange sag {:.4} m", sag);
    assert!(sag > 3e-3 && sag < 3e-2, "sag {sag} m is not of the order of 1 cm");
    assert!(e
        .ctx
        .blackboard
        .get::<ActuatorTable>("actuator_table:ur")
        .unwrap()
        .gravcomp_bodies
        .is_empty());
    // A compliance gain without it folds: metres of arc, not millimetres.
    let mut e = engine(&bare_arm(", gravity_compensation: false, actuators: {control: impedance, stiffness: 2.0, damping: 0.02}"));
    let f0 = site(&e, "ur_attachment_site");
    e.step_n(250).unwrap();
    let fold = dist3(f0, site(&e, "ur_attachment_site"));
    println!("impedance 2 N·m/rad, no gravity compensation: flange fell {:.3} m in 0.5 s", fold);
    assert!(fold > 0.1, "a 2 N·m/rad arm without compensation should fold, moved {fold} m");
}

#[test]
fn effort_law_applies_exactly_the_commanded_torque() {
    let mut e = engine(&bare_arm(
        ", default_plugins: false, actuators: {control: effort, ctrlrange: [-150, 150]}",
    ));
    let t = e.ctx.blackboard.get::<ActuatorTable>("actuator_table:ur").unwrap().clone();
    assert!(
        t.gravcomp_bodies.is_empty(),
        "effort: supplying the gravity term is the controller's job"
    );
    assert_eq!(t.row("elbow").unwrap().gains, vec![]);
    assert_eq!(
        (t.row("elbow").unwrap().ctrlrange, t.row("elbow").unwrap().ctrlrange_origin),
        (Some([-150.0, 150.0]), Origin::World)
    );
    let cmd = [12.5, -40.0, 7.25, 3.0, -2.5, 0.75];
    for step in 0..20 {
        for (i, j) in JOINTS.iter().enumerate() {
            let a = e
                .ctx
                .model()
                .name_to_id(
                    MjtObjBase::mjOBJ_ACTUATOR,
                    &format!("ur_{}", j.trim_end_matches("_joint")),
                )
                .unwrap();
            e.ctx.data_mut().ctrl_mut()[a] = cmd[i] * (1.0 + step as f64 * 0.01);
        }
        e.step().unwrap();
        for (i, j) in JOINTS.iter().enumerate() {
            let dof = qadr(&e, &format!("ur_{j}")).1;
            let got = e.ctx.data().qfrc_actuator()[dof];
            assert!(
                (got - cmd[i] * (1.0 + step as f64 * 0.01)).abs() < 1e-12,
                "{j}: qfrc_actuator {got} vs ctrl {}",
                cmd[i]
            );
        }
    }
}

#[test]
fn joint_state_efforts_add_gravity_compensation_back() {
    let mut comp = engine(&bare_arm(""));
    let mut raw = engine(&bare_arm(", gravity_compensation: false"));
    comp.step_n(750).unwrap();
    raw.step_n(750).unwrap();
    let ep = endpoint(&comp, "joint_states");
    let Some((Payload::JointState(js), _)) =
        comp.ctx.interface.get(ep).latest().map(|(p, t)| (p.clone(), t))
    else {
        panic!("no joint_states")
    };
    assert_eq!(js.name, JOINTS.to_vec());
    let dof = qadr(&comp, "ur_shoulder_lift_joint").1;
    let actuator_only = comp.ctx.data().qfrc_actuator()[dof];
    let raw_effort = raw.ctx.data().qfrc_actuator()[dof];
    println!(
        "shoulder_lift: reported {:.3} N·m, actuator alone {:.3}, uncompensated arm {:.3}",
        js.effort[1], actuator_only, raw_effort
    );
    assert!(
        actuator_only.abs() < 0.5,
        "the compensated servo does almost nothing: {actuator_only}"
    );
    assert!(
        js.effort[1].abs() > 20.0 && (js.effort[1] - raw_effort).abs() < 0.03 * raw_effort.abs(),
        "reported {} vs uncompensated {raw_effort}",
        js.effort[1]
    );
    assert!((js.stamp - comp.sim_time()).abs() < 0.011);
}

// ------------------------------------------------------------------------------------------
// FollowJointTrajectory
// ------------------------------------------------------------------------------------------

#[test]
fn three_point_trajectory_succeeds_within_0_01_rad() {
    let mut e = engine(&bare_arm(""));
    let ep = endpoint_topic(&e, "scaled_joint_trajectory_controller/follow_joint_trajectory");
    let last = plus([0.5, -0.3, 0.3, 0.1, 0.1, 0.8]);
    let g = send(
        &mut e,
        ep,
        Payload::Trajectory(traj(&[
            (0.6, plus([0.2, -0.1, 0.1, 0.0, 0.0, 0.3])),
            (1.2, plus([0.4, -0.2, 0.2, 0.1, 0.0, 0.6])),
            (1.8, last),
        ])),
    );
    let (o, steps) = wait(&mut e, &g, 2500);
    let t = steps as f64 * e.dt();
    let errs: Vec<f64> = JOINTS
        .iter()
        .enumerate()
        .map(|(i, j)| (q(&e, &format!("ur_{j}")) - last[i]).abs())
        .collect();
    let fb: Vec<Payload> = g.feedback.try_iter().collect();
    println!(
        "outcome {:?} at t = {t:.3} s; final errors {:?} rad; {} feedback messages",
        o.status,
        errs,
        fb.len()
    );
    assert_eq!((o.status, o.error_code), (GoalStatus::Succeeded, 0), "{o:?}");
    assert!((1.8..2.8).contains(&t), "graded at {t} s");
    assert!(errs.iter().all(|e| *e < 0.01), "errors {errs:?}");
    assert!(fb.len() >= 30, "feedback at 20 Hz over ~1.8 s: {}", fb.len());
    let Payload::TrajectoryFeedback { joint_names, desired, actual } = &fb[fb.len() / 2] else {
        panic!()
    };
    assert_eq!(joint_names.len(), 6);
    assert!(desired.iter().zip(actual).all(|(d, a)| (d - a).abs() < 0.1));
    // Holding the last point afterwards.
    e.step_n(250).unwrap();
    assert!((q(&e, "ur_wrist_3_joint") - last[5]).abs() < 0.005);
}

#[test]
fn quintic_trajectory_with_velocities_and_accelerations_ends_on_target() {
    let mut e = engine(&bare_arm(""));
    let ep = endpoint(&e, "follow_joint_trajectory");
    let mut goal = traj(&[
        (0.8, plus([0.3, 0.0, 0.0, 0.0, 0.0, 0.0])),
        (1.6, plus([0.6, 0.0, 0.0, 0.0, 0.0, 0.0])),
    ]);
    goal.points[0].velocities = vec![0.375, 0.0, 0.0, 0.0, 0.0, 0.0];
    goal.points[0].accelerations = vec![0.0; 6];
    goal.points[1].velocities = vec![0.0; 6];
    goal.points[1].accelerations = vec![0.0; 6];
    let g = send(&mut e, ep, Payload::Trajectory(goal));
    e.step_n(400).unwrap(); // t = 0.8: on the first point, moving
    let mid = q(&e, "ur_shoulder_pan_joint");
    let (o, _) = wait(&mut e, &g, 2000);
    assert_eq!(o.status, GoalStatus::Succeeded, "{o:?}");
    assert!((mid - 0.3).abs() < 0.02, "at the first point's time the pan was {mid}");
    assert!((q(&e, "ur_shoulder_pan_joint") - 0.6).abs() < 0.01);
}

#[test]
fn blocked_arm_aborts_with_goal_tolerance_violated() {
    // A fixed pillar in the sweep of the wrist: the pan stops ~0.45 rad short of 1.2.
    let yaml = format!(
        "{}  - box: {{pose: {{position: {{x: 0.33, y: 0.386, z: 0.8}}}}, size: [0.08, 0.08, 0.6]}}\n    name: pillar\n",
        bare_arm("")
    );
    let mut e = engine(&yaml);
    let ep = endpoint(&e, "follow_joint_trajectory");
    let g =
        send(&mut e, ep, Payload::Trajectory(traj(&[(1.0, plus([1.2, 0.0, 0.0, 0.0, 0.0, 0.0]))])));
    let (o, steps) = wait(&mut e, &g, 2000);
    let t = steps as f64 * e.dt();
    let pan = q(&e, "ur_shoulder_pan_joint");
    println!(
        "blocked: {:?} code {} at t = {t:.3} s, pan {pan:.3} rad: {}",
        o.status, o.error_code, o.error_string
    );
    assert_eq!((o.status, o.error_code), (GoalStatus::Aborted, -5));
    assert!((t - 2.0).abs() < 0.01, "graded at the last point + goal_time_tolerance (1 s): {t}");
    assert!(pan < 0.7 && pan > 0.1, "the pillar stops the pan: {pan}");
    assert_has(
        &o.error_string,
        &["GOAL_TOLERANCE_VIOLATED", "shoulder_pan_joint", "tolerance 0.5 rad"],
    );
    // Afterwards it holds where it was, not pressing on towards 1.2.
    let held = q(&e, "ur_shoulder_pan_joint");
    e.step_n(200).unwrap();
    assert!((q(&e, "ur_shoulder_pan_joint") - held).abs() < 0.01);
    let h = e.ctx.blackboard.get::<ArmHandle>("arm:ur").unwrap();
    assert!((h.targets()[0] - held).abs() < 0.01, "target {} vs held {held}", h.targets()[0]);
}

#[test]
fn goal_tolerance_precedence_goal_then_config_then_default() {
    let yaml = format!(
        "{}  - box: {{pose: {{position: {{x: 0.33, y: 0.386, z: 0.8}}}}, size: [0.08, 0.08, 0.6]}}\n    name: pillar\n",
        bare_arm("")
    )
    .replace("pedestal: true}", "pedestal: true}\n    components:\n      - arm_controller: {goal_tolerance: {shoulder_pan_joint: 2.0}, goal_time_tolerance: 0.2}");
    let mut e = engine(&yaml);
    let ep = endpoint(&e, "follow_joint_trajectory");
    // Config tolerance 2.0 rad on the pan: the blocked arm "arrives".
    let g =
        send(&mut e, ep, Payload::Trajectory(traj(&[(0.6, plus([1.2, 0.0, 0.0, 0.0, 0.0, 0.0]))])));
    let (o, _) = wait(&mut e, &g, 1500);
    assert_eq!(o.status, GoalStatus::Succeeded, "{o:?}");
    // The goal's own tolerance wins over the config's.
    let mut goal = traj(&[(0.6, plus([1.2, 0.0, 0.0, 0.0, 0.0, 0.0]))]);
    goal.goal_tolerance = vec![JointTolerance {
        name: "shoulder_pan_joint".into(),
        position: 0.05,
        ..Default::default()
    }];
    let g = send(&mut e, ep, Payload::Trajectory(goal));
    let (o, _) = wait(&mut e, &g, 1500);
    assert_eq!((o.status, o.error_code), (GoalStatus::Aborted, -5), "{o:?}");
    assert_has(&o.error_string, &["tolerance 0.05 rad"]);
}

#[test]
fn cancel_mid_motion_holds_the_measured_position() {
    let mut e = engine(&bare_arm(""));
    let ep = endpoint(&e, "follow_joint_trajectory");
    let g =
        send(&mut e, ep, Payload::Trajectory(traj(&[(2.0, plus([1.0, 0.0, 0.0, 0.0, 0.0, 0.0]))])));
    e.step_n(500).unwrap();
    g.cancel.store(true, Ordering::SeqCst);
    let at_cancel = q(&e, "ur_shoulder_pan_joint");
    let (o, _) = wait(&mut e, &g, 5);
    e.step_n(500).unwrap();
    let after = q(&e, "ur_shoulder_pan_joint");
    let v = e.ctx.data().qvel()[qadr(&e, "ur_shoulder_pan_joint").1];
    println!(
        "canceled at pan {at_cancel:.4}, 1 s later {after:.4} (v {v:.2e}): {}",
        o.error_string
    );
    assert_eq!(o.status, GoalStatus::Canceled);
    assert!((at_cancel - 0.5).abs() < 0.05, "mid-motion: {at_cancel}");
    assert!((after - at_cancel).abs() < 0.01, "stopped where it was: {at_cancel} -> {after}");
    assert!(v.abs() < 1e-3);
}

#[test]
fn invalid_goals_are_refused_with_codes_and_messages() {
    let mut e = engine(&bare_arm(""));
    let ep = endpoint(&e, "follow_joint_trajectory");
    let mut bad = traj(&[(1.0, REST)]);
    bad.joint_names[2] = "elbow".into();
    let g = send(&mut e, ep, Payload::Trajectory(bad));
    let (o, _) = wait(&mut e, &g, 2);
    assert_eq!((o.status, o.error_code), (GoalStatus::Aborted, -2));
    assert_has(
        &o.error_string,
        &[
            "joint `elbow` is not commanded by controller `scaled_joint_trajectory_controller`",
            "elbow_joint",
        ],
    );
    let mut bad = traj(&[(1.0, REST), (0.5, REST)]);
    bad.points[1].time_from_start = 0.5;
    let g = send(&mut e, ep, Payload::Trajectory(bad));
    assert_eq!(wait(&mut e, &g, 2).0.error_code, -1);
    let mut bad = traj(&[(1.0, REST)]);
    bad.points[0].positions.pop();
    let g = send(&mut e, ep, Payload::Trajectory(bad));
    let (o, _) = wait(&mut e, &g, 2);
    assert_eq!(o.error_code, -1);
    assert_has(&o.error_string, &["5 positions for 6 joints"]);
    let g = send(&mut e, ep, Payload::Gripper(GripperGoal { position: 0.0, max_effort: 0.0 }));
    assert_has(&wait(&mut e, &g, 2).0.error_string, &["takes a Trajectory goal, not Gripper"]);
}

#[test]
fn velocity_commands_integrate_and_the_watchdog_stops_them() {
    let yaml = bare_arm("").replace("pedestal: true}", "pedestal: true}\n    components:\n      - arm_controller: {velocity_commands: true, velocity_timeout_s: 0.4}");
    let mut e = engine(&yaml);
    let ep = endpoint(&e, "joint_velocity");
    e.ctx.interface.deliver(
        ep,
        Payload::JointState(JointState {
            name: vec!["shoulder_pan_joint".into()],
            velocity: vec![0.5],
            ..Default::default()
        }),
    );
    e.step_n(1000).unwrap();
    let h = e.ctx.blackboard.get::<ArmHandle>("arm:ur").unwrap();
    let pan = q(&e, "ur_shoulder_pan_joint");
    println!("0.5 rad/s with a 0.4 s watchdog: target {:.4}, pan {pan:.4}", h.targets()[0]);
    assert!((h.targets()[0] - 0.2).abs() < 0.002, "integrated 0.4 s worth: {}", h.targets()[0]);
    assert!((pan - 0.2).abs() < 0.005);
}

// ------------------------------------------------------------------------------------------
// gripper
// ------------------------------------------------------------------------------------------

/// A straight vertical path of the pinch from where it is by `dz` (m) over `secs`, as joint
/// waypoints (a planner's Cartesian path, not a joint-space swing that would sweep the jaws
/// sideways into the box).
fn vertical_path(e: &Engine, dz: f64, secs: f64, n: usize) -> TrajectoryGoal {
    let p = site(e, "ur_pinch");
    let pts: Vec<(f64, [f64; 6])> = (1..=n)
        .map(|k| {
            let f = k as f64 / n as f64;
            (secs * f, ik_vertical(e, "ur_", "pinch", [p[0], p[1], p[2] + dz * f]))
        })
        .collect();
    traj(&pts)
}

/// Descend onto the ur_pick box (pinch 5 mm above its centre), close (optionally with a
/// max_effort), returning the gripper's outcome.
fn descend_and_close(e: &mut Engine, max_effort: f64) -> ActionOutcome {
    let bx = body_pos(e, "pick_box");
    let p = site(e, "ur_pinch");
    assert!(
        (p[0] - bx[0]).abs() < 1e-3 && (p[1] - bx[1]).abs() < 1e-3,
        "the box is under the pinch"
    );
    let goal = vertical_path(e, bx[2] + 0.005 - p[2], 1.5, 15);
    let ep = endpoint(e, "follow_joint_trajectory");
    let g = send(e, ep, Payload::Trajectory(goal));
    let (o, _) = wait(e, &g, 1500);
    assert_eq!(o.status, GoalStatus::Succeeded, "descent: {o:?}");
    let p = site(e, "ur_pinch");
    assert!(
        dist3(p, [bx[0], bx[1], bx[2] + 0.005]) < 2e-3,
        "the pinch reached the box: {p:?} vs {bx:?}"
    );
    let ep = endpoint(e, "gripper_cmd");
    let g = send(e, ep, Payload::Gripper(GripperGoal { position: 0.0425, max_effort }));
    wait(e, &g, 2000).0
}

fn lift(e: &mut Engine, dz: f64) {
    let goal = vertical_path(e, dz, 1.0, 10);
    let ep = endpoint(e, "follow_joint_trajectory");
    let g = send(e, ep, Payload::Trajectory(goal));
    let (o, _) = wait(e, &g, 1500);
    assert_eq!(o.status, GoalStatus::Succeeded, "lift: {o:?}");
}

/// Sum of contact normal forces between a geom and a body's geoms.
fn contact_normal(e: &Engine, geom: &str, body_name: &str) -> f64 {
    let m = e.ctx.model();
    let g = m.name_to_id(MjtObjBase::mjOBJ_GEOM, geom).unwrap() as i32;
    let b = m.name_to_id(MjtObjBase::mjOBJ_BODY, body_name).unwrap() as i32;
    let d = e.ctx.data();
    let mut f = 0.0;
    for (i, c) in d.contact().iter().enumerate() {
        let (g1, g2) = (c.geom[0], c.geom[1]);
        let other = if g1 == g {
            g2
        } else if g2 == g {
            g1
        } else {
            continue;
        };
        if m.geom_bodyid()[other as usize] == b {
            f += d.contact_force(i)[0];
        }
    }
    f
}

/// The pad's normal force on the box, averaged over `n` steps (the jaws chatter).
fn mean_contact_normal(e: &mut Engine, geom: &str, body_name: &str, n: u64) -> f64 {
    let mut s = 0.0;
    for _ in 0..n {
        e.step().unwrap();
        s += contact_normal(e, geom, body_name);
    }
    s / n as f64
}

#[test]
fn gripper_picks_the_box_lifts_it_0_2_m_and_holds_it_5_s() {
    let mut e = engine(&world_file("ur_pick.yaml"));
    let z0 = body_pos(&e, "pick_box")[2];
    let o = descend_and_close(&mut e, 0.0);
    let Some(Payload::GripperResult { position, stalled, reached_goal, effort }) =
        o.result.as_deref().cloned()
    else {
        panic!("{o:?}")
    };
    println!("grip: {:?}, position {position:.4} m, effort {effort:.1} N, stalled {stalled}, reached {reached_goal}", o.status);
    assert_eq!(o.status, GoalStatus::Succeeded);
    assert!(stalled && !reached_goal, "closed on a 50 mm box: stalls short of fully closed");
    assert!((position - 0.0175).abs() < 0.002, "each jaw travels (85 - 50) / 2 mm: {position}");
    lift(&mut e, 0.2);
    let rel0 = {
        let (b, p) = (body_pos(&e, "pick_box"), site(&e, "ur_pinch"));
        [b[0] - p[0], b[1] - p[1], b[2] - p[2]]
    };
    let z_lift = body_pos(&e, "pick_box")[2];
    e.step_n(2500).unwrap();
    let (b, p) = (body_pos(&e, "pick_box"), site(&e, "ur_pinch"));
    let slip = dist3([b[0] - p[0], b[1] - p[1], b[2] - p[2]], rel0);
    println!(
        "box lifted {:.4} m; after 5 s held it slipped {:.2e} m in the jaws",
        z_lift - z0,
        slip
    );
    assert!((z_lift - z0 - 0.2).abs() < 0.01, "lifted {}", z_lift - z0);
    assert!(b[2] - z0 > 0.19, "still up after 5 s: {}", b[2] - z0);
    // Measured with the shipped parallel_gripper: a steady ~0.9 mm/s creep (4.4 mm in 5 s), the
    // same with noslip 10/50 or an elliptic cone: it is driven by the jaws' contact chatter.
    assert!(slip < 6e-3, "slip {slip}");
    let r = e.ctx.blackboard.get::<GripperReader>("gripper:ur").unwrap();
    assert!((r.read().0 - 0.0175).abs() < 0.002);
}

#[test]
fn max_effort_limits_the_measured_grip_force() {
    let mut e = engine(&world_file("ur_pick.yaml"));
    let o = descend_and_close(&mut e, 10.0);
    let limited = mean_contact_normal(&mut e, "ur_left_pad", "pick_box", 250);
    let Some(Payload::GripperResult { effort, .. }) = o.result.as_deref().cloned() else {
        panic!("{o:?}")
    };
    let ep = endpoint(&e, "gripper_cmd");
    let g = send(&mut e, ep, Payload::Gripper(GripperGoal { position: 0.0425, max_effort: 0.0 }));
    wait(&mut e, &g, 2000);
    let full = mean_contact_normal(&mut e, "ur_left_pad", "pick_box", 250);
    println!("grip force: max_effort 10 N -> pad normal {limited:.2} N (reported effort {effort:.2}); max_effort 0 -> {full:.2} N");
    assert!((limited - 10.0).abs() < 1.0, "limited grip {limited}");
    assert!((effort - 10.0).abs() < 0.5, "reported {effort}");
    assert!((full - 50.0).abs() < 5.0, "the model's own kp 1000 N/m x 50 mm: {full}");
}

/// A gripper goal with a NaN or negative max_effort, or a NaN position, is aborted naming the
/// field; the jaws do not move.
#[test]
fn gripper_goals_with_bad_numbers_are_aborted_and_move_nothing() {
    let mut e = engine(&world_file("ur_pick.yaml"));
    e.step_n(50).unwrap();
    let jaw = q(&e, "ur_left_finger_joint");
    let ep = endpoint(&e, "gripper_cmd");
    for (goal, needle) in [
        (
            GripperGoal { position: 0.0, max_effort: f64::NAN },
            "command.max_effort = NaN: must be a finite effort >= 0",
        ),
        (
            GripperGoal { position: 0.0, max_effort: -5.0 },
            "command.max_effort = -5: must be a finite effort >= 0",
        ),
        (
            GripperGoal { position: f64::NAN, max_effort: 10.0 },
            "command.position = NaN: the gripper position must be finite",
        ),
    ] {
        let g = send(&mut e, ep, Payload::Gripper(goal));
        let (o, _) = wait(&mut e, &g, 5);
        assert_eq!(o.status, GoalStatus::Aborted, "{o:?}");
        assert_has(&o.error_string, &[needle]);
    }
    e.step_n(250).unwrap();
    assert!((q(&e, "ur_left_finger_joint") - jaw).abs() < 1e-3, "a refused goal moved the jaw");
}

/// A preempted, canceled or refused gripper goal reports where the jaws are (and their effort) in
/// its result, not zeros.
#[test]
fn gripper_results_of_ended_goals_report_the_measured_position() {
    let mut e = engine(&world_file("ur_pick.yaml"));
    e.step_n(50).unwrap();
    let r = e.ctx.blackboard.get::<GripperReader>("gripper:ur").unwrap().clone();
    let ep = endpoint(&e, "gripper_cmd");
    let pos_of = |o: &ActionOutcome| match o.result.as_deref() {
        Some(Payload::GripperResult { position, effort, stalled, reached_goal }) => {
            (*position, *effort, *stalled, *reached_goal)
        }
        other => panic!("no gripper result: {other:?}"),
    };
    let g1 = send(&mut e, ep, Payload::Gripper(GripperGoal { position: 0.0425, max_effort: 0.0 }));
    e.step_n(60).unwrap();
    let g2 = send(&mut e, ep, Payload::Gripper(GripperGoal { position: 0.0425, max_effort: 0.0 }));
    let (before, effort) = (r.read().0, r.effort());
    e.step().unwrap();
    let o1 = g1.outcome.try_recv().expect("preempted");
    assert_eq!(o1.error_string, "preempted by a newer gripper goal");
    eprintln!("preempted at {before:.5} (effort {effort:.4}): {:?}", pos_of(&o1));
    assert!(before > 0.002, "the jaws had started closing: {before}");
    assert_eq!(pos_of(&o1), (before, effort, false, false));
    e.step_n(5).unwrap();
    g2.cancel.store(true, Ordering::SeqCst);
    let (before, effort) = (r.read().0, r.effort());
    e.step().unwrap();
    let o2 = g2.outcome.try_recv().expect("canceled");
    assert_eq!(o2.status, GoalStatus::Canceled);
    assert_eq!(pos_of(&o2), (before, effort, false, false));
    let g3 =
        send(&mut e, ep, Payload::Gripper(GripperGoal { position: f64::NAN, max_effort: 0.0 }));
    let (before, effort) = (r.read().0, r.effort());
    e.step().unwrap();
    let o3 = g3.outcome.try_recv().expect("refused");
    assert_eq!(o3.status, GoalStatus::Aborted);
    assert!(before > 0.002, "{before}");
    assert_eq!(pos_of(&o3), (before, effort, false, false));
    // a reset aborts a running goal, its result where the reset put the jaws
    let g4 = send(&mut e, ep, Payload::Gripper(GripperGoal { position: 0.0425, max_effort: 0.0 }));
    e.step_n(5).unwrap();
    e.reset().unwrap();
    let o4 = g4.outcome.try_recv().expect("aborted by the reset");
    assert_eq!(o4.error_string, "the simulation was reset");
    eprintln!("reset: {:?}, jaw now {}", pos_of(&o4), q(&e, "ur_left_finger_joint"));
    assert_eq!(pos_of(&o4).0, q(&e, "ur_left_finger_joint"));
}

// ------------------------------------------------------------------------------------------
// controller registry
// ------------------------------------------------------------------------------------------

#[test]
fn controller_registry_list_switch_unload_and_transition_events() {
    let mut e = engine(&world_file("ur_pick.yaml"));
    let reg = Registry::get(&e.ctx, "ur").expect("registry");
    let list = reg.list();
    let names: Vec<(&str, &str, State)> =
        list.iter().map(|c| (c.name.as_str(), c.type_name.as_str(), c.state)).collect();
    assert_eq!(
        names,
        vec![
            (
                "scaled_joint_trajectory_controller",
                "joint_trajectory_controller/JointTrajectoryController",
                State::Active
            ),
            ("gripper_controller", "position_controllers/GripperActionController", State::Active),
            (
                "joint_state_broadcaster",
                "joint_state_broadcaster/JointStateBroadcaster",
                State::Active
            ),
        ]
    );
    assert_eq!(
        list[0].claimed_interfaces,
        JOINTS.iter().map(|j| format!("{j}/position")).collect::<Vec<_>>()
    );
    assert_eq!(list[1].claimed_interfaces, vec!["left_finger_joint/position".to_string()]);
    assert!(list[2].claimed_interfaces.is_empty() && list[2].required_state_interfaces.len() == 21);
    assert_eq!(list[0].update_rate, 500);
    let hw = reg.hardware_interfaces();
    assert_eq!(hw.iter().filter(|h| h.is_command).count(), 7);
    assert!(hw.iter().filter(|h| h.is_command).all(|h| h.is_claimed));
    // A Cartesian controller declares itself (as cartesian_admittance will), inactive, on the same joints.
    reg.declare(
        ControllerSpec {
            name: "cartesian_compliance_controller".into(),
            type_name: "cartesian_compliance_controller/CartesianComplianceController".into(),
            command_interfaces: JOINTS.iter().map(|j| format!("{j}/position")).collect(),
            state_interfaces: vec![],
            update_rate: 500,
            initial_state: State::Inactive,
            owner: "test".into(),
            parameters: vec![],
        },
        e.sim_time(),
    )
    .unwrap();
    e.step_n(100).unwrap();
    // STRICT without naming the holder: refused, nothing changes.
    let err = reg
        .switch(&["cartesian_compliance_controller".into()], &[], STRICT, e.sim_time())
        .unwrap_err();
    assert_has(
        &err,
        &[
            "cannot activate `cartesian_compliance_controller`",
            "claimed by `scaled_joint_trajectory_controller`",
            "deactivate_controllers",
        ],
    );
    // BEST_EFFORT (and strictness 0) never deactivate what was not named.
    let rep =
        reg.switch(&["cartesian_compliance_controller".into()], &[], 0, e.sim_time()).unwrap();
    assert!(
        rep.activated.is_empty()
            && rep.skipped.len() == 1
            && reg.is_active("scaled_joint_trajectory_controller")
    );
    let rep = reg
        .switch(&["cartesian_compliance_controller".into()], &[], BEST_EFFORT, e.sim_time())
        .unwrap();
    assert!(rep.activated.is_empty());
    // STRICT naming both sides hands over in one call, posted like a service would, stamped with sim time.
    let (tx, rx) = unbounded();
    e.ctx.post(move |ctx| {
        let r2 = Registry::get(ctx, "ur").expect("registry");
        let _ = tx.send(r2.switch(
            &["cartesian_compliance_controller".into()],
            &["scaled_joint_trajectory_controller".into()],
            STRICT,
            ctx.sim_time(),
        ));
    });
    let t_switch = e.sim_time();
    e.step().unwrap();
    let rep = rx.try_recv().unwrap().unwrap();
    assert_eq!(rep.message(), "deactivated [scaled_joint_trajectory_controller]; activated [cartesian_compliance_controller]");
    assert_eq!(reg.state("scaled_joint_trajectory_controller"), Some(State::Inactive));
    assert!(reg.is_active("cartesian_compliance_controller"));
    let ev_ep = endpoint_topic(&e, "scaled_joint_trajectory_controller/transition_event");
    let (p, tick) = e
        .ctx
        .interface
        .get(ev_ep)
        .latest()
        .map(|(p, t)| (p.clone(), t))
        .expect("transition published");
    assert_eq!(tick, e.ctx.tick);
    let Payload::TransitionEvents(evs) = p else { panic!("{p:?}") };
    // rclcpp_lifecycle's pair: active -> deactivating, then deactivating -> inactive.
    assert_eq!(evs.len(), 2);
    assert_eq!(
        (evs[0].transition_label.as_str(), evs[0].start_label.as_str(), evs[0].goal_label.as_str()),
        ("deactivate", "active", "deactivating")
    );
    assert_eq!((evs[0].transition_id, evs[0].start_id, evs[0].goal_id), (4, 3, 14));
    assert_eq!(
        (evs[1].transition_label.as_str(), evs[1].start_label.as_str(), evs[1].goal_label.as_str()),
        ("transition_success", "deactivating", "inactive")
    );
    assert_eq!((evs[1].transition_id, evs[1].start_id, evs[1].goal_id), (40, 14, 2));
    assert_eq!(evs[0].stamp, evs[1].stamp);
    assert!(
        (evs[0].stamp - t_switch).abs() < 1e-12 && evs[0].stamp > 0.19,
        "stamped with sim time: {}",
        evs[0].stamp
    );
    // While inactive: goals refused, and the arm holds.
    let ep = endpoint(&e, "follow_joint_trajectory");
    let g =
        send(&mut e, ep, Payload::Trajectory(traj(&[(0.5, plus([0.5, 0.0, 0.0, 0.0, 0.0, 0.0]))])));
    let (o, _) = wait(&mut e, &g, 2);
    assert_eq!(o.status, GoalStatus::Aborted);
    assert_has(
        &o.error_string,
        &["controller `scaled_joint_trajectory_controller` is inactive", "activate_controllers"],
    );
    e.step_n(200).unwrap();
    assert!(q(&e, "ur_shoulder_pan_joint").abs() < 1e-3);
    // Unload of an active controller is refused; of an inactive one it works, and only declared ones load.
    assert_has(
        &reg.unload("cartesian_compliance_controller", e.sim_time()).unwrap_err(),
        &["is active and cannot be unloaded", "deactivate it first"],
    );
    reg.unload("scaled_joint_trajectory_controller", e.sim_time()).unwrap();
    assert!(reg.list().iter().all(|c| c.name != "scaled_joint_trajectory_controller"));
    assert_has(
        &reg.load("joint_trajectory_controller", e.sim_time()).unwrap_err(),
        &["is not declared", "scaled_joint_trajectory_controller"],
    );
    reg.load("scaled_joint_trajectory_controller", e.sim_time()).unwrap();
    reg.configure("scaled_joint_trajectory_controller", e.sim_time()).unwrap();
    // FORCE_AUTO arbitrates: activating the trajectory controller deactivates the Cartesian one.
    let rep = reg
        .switch(&["scaled_joint_trajectory_controller".into()], &[], FORCE_AUTO, e.sim_time())
        .unwrap();
    assert_eq!(rep.deactivated, vec!["cartesian_compliance_controller".to_string()]);
    e.step().unwrap();
    let g =
        send(&mut e, ep, Payload::Trajectory(traj(&[(0.5, plus([0.3, 0.0, 0.0, 0.0, 0.0, 0.0]))])));
    let (o, _) = wait(&mut e, &g, 1500);
    assert_eq!(o.status, GoalStatus::Succeeded, "{o:?}");
    // Every transition is in the log with its sim-time stamp.
    let log = reg.log();
    assert!(log.iter().any(|t| t.controller == "scaled_joint_trajectory_controller"
        && t.label == "shutdown"
        && t.goal == State::Finalized));
    // A reset restores the declared states.
    let rep = reg.switch(&[], &["gripper_controller".into()], STRICT, e.sim_time()).unwrap();
    assert_eq!(rep.deactivated.len(), 1);
    let ep = endpoint(&e, "gripper_cmd");
    let g = send(&mut e, ep, Payload::Gripper(GripperGoal { position: 0.02, max_effort: 0.0 }));
    assert_has(
        &wait(&mut e, &g, 2).0.error_string,
        &["controller `gripper_controller` is inactive"],
    );
    e.reset().unwrap();
    assert!(
        reg.is_active("gripper_controller") && reg.is_active("scaled_joint_trajectory_controller")
    );
}

// ------------------------------------------------------------------------------------------
// force/torque
// ------------------------------------------------------------------------------------------

#[test]
fn ft_reads_a_1kg_payload_as_9_81_n_along_world_z_after_tare() {
    let yaml = world_file("ur_pick.yaml").replace("mass: 0.5", "mass: 1.0");
    let mut e = engine(&yaml);
    e.step_n(50).unwrap();
    let reader = e.ctx.blackboard.get::<WrenchReader>("ft:ft").unwrap().clone();
    let before = reader.read(&e.ctx).unwrap();
    // Tare through the service endpoint (std_srvs/Trigger).
    let (tx, rx) = unbounded();
    let tare = endpoint(&e, "tare");
    e.ctx.interface.deliver(
        tare,
        Payload::Call(ServiceCall {
            request: Box::new(Payload::Empty),
            reply: tx,
            claim: Default::default(),
        }),
    );
    e.step().unwrap();
    let Ok(Payload::Ack { success: true, message }) = rx.try_recv() else {
        panic!("no tare reply")
    };
    let tared = reader.read(&e.ctx).unwrap();
    descend_and_close(&mut e, 0.0);
    lift(&mut e, 0.1);
    e.step_n(500).unwrap();
    let ep = endpoint(&e, "wrench");
    while e.ctx.interface.get(ep).latest().map(|(_, t)| t) != Some(e.ctx.tick) {
        e.step().unwrap();
    }
    let w = reader.read(&e.ctx).unwrap();
    let Some((Payload::Wrench(pw), _)) =
        e.ctx.interface.get(ep).latest().map(|(p, t)| (p.clone(), t))
    else {
        panic!()
    };
    println!(
        "F/T world frame: before tare Fz {:.3} N (the gripper), after tare {:.2e}; holding 1 kg: F = {:?} N ({message})",
        before.force[2], tared.force[2], w.force
    );
    assert!(
        (before.force[2] + 0.925 * 9.81).abs() < 0.1,
        "untared: the gripper's weight, inverted: {:?}",
        before.force
    );
    assert!(tared.force.iter().all(|f| f.abs() < 1e-6));
    assert!((w.force[2] + 9.81).abs() < 0.1, "1 kg payload: {:?}", w.force);
    assert!(w.force[0].abs() < 0.1 && w.force[1].abs() < 0.1);
    assert_eq!(w.frame_id, "world");
    assert_eq!(pw.force, w.force, "the endpoint and the reader agree");
    // A reset re-arms the tare: the reading is the gripper's weight again.
    e.reset().unwrap();
    e.step().unwrap();
    assert!((reader.read(&e.ctx).unwrap().force[2] + 0.925 * 9.81).abs() < 0.1);
    assert!(reader.tared_at().is_none());
}

#[test]
fn ft_frames_invert_tare_at_and_noise() {
    let yaml = |extra: &str| {
        format!(
            "sim: {{timestep: 0.002, controllers: {{initial_state: active}}}}
components:
  - spawn_arm: {{model: ur5e, prefix: ur_, pos: [0, 0, 0.5], pedestal: true, end_effector: {{model: parallel_gripper}}}}
    name: ur
    components:
      - force_torque: {{site: fts_site{extra}}}
        name: ft
"
        )
    };
    // Raw sensor frame, not inverted: what holds the tool up, along the site's z (pointing down).
    let mut e = engine(&yaml(", frame: sensor, invert: false"));
    e.step_n(20).unwrap();
    let r = e.ctx.blackboard.get::<WrenchReader>("ft:ft").unwrap().clone();
    let w = r.read(&e.ctx).unwrap();
    assert!((w.force[2] + 0.925 * 9.81).abs() < 0.1, "{:?}", w.force);
    assert_eq!(w.frame_id, "fts_site");
    // Base frame (the arm's base_link, upright): inverted reads the weight downwards.
    let mut e = engine(&yaml(", frame: base, tare_at_s: 0.1"));
    e.step_n(20).unwrap();
    let r = e.ctx.blackboard.get::<WrenchReader>("ft:ft").unwrap().clone();
    assert!((r.read(&e.ctx).unwrap().force[2] + 0.925 * 9.81).abs() < 0.1);
    e.step_n(100).unwrap();
    assert!(r.tared_at().is_some_and(|t| (t - 0.1).abs() < 0.011), "tared at {:?}", r.tared_at());
    assert!(r.read(&e.ctx).unwrap().force[2].abs() < 1e-6);
    // Noise: seeded, identical for two reads in one step, zero-mean with the stated sigma.
    let mut e = engine(&yaml(", frame: world, noise_force_stddev: 0.5, noise_torque_stddev: 0.05"));
    let r = e.ctx.blackboard.get::<WrenchReader>("ft:ft").unwrap().clone();
    let mut xs = Vec::new();
    for _ in 0..400 {
        e.step().unwrap();
        let a = r.read(&e.ctx).unwrap();
        assert_eq!(a, r.read(&e.ctx).unwrap());
        xs.push(a.force[0]);
    }
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64).sqrt();
    assert!(mean.abs() < 0.1 && (sd - 0.5).abs() < 0.08, "mean {mean}, sd {sd}");
}

// ------------------------------------------------------------------------------------------
// mobile manipulator, rail, spawn_robot actuators
// ------------------------------------------------------------------------------------------

#[test]
fn mobile_manipulator_arm_rides_the_base_and_claims_no_wheels() {
    let mut e = engine(&world_file("mobile_manipulator.yaml"));
    let arm = e.ctx.entities.get("arm").unwrap().clone();
    assert_eq!(arm.kind, roqsim::context::EntityKind::Arm);
    assert_eq!(arm.meta.get("mount").map(String::as_str), Some("husky:base_link"));
    let h = e.ctx.blackboard.get::<ArmHandle>("arm:arm").unwrap().clone();
    assert_eq!(h.names(), JOINTS.to_vec());
    let p0 = site(&e, "arm_pinch");
    let b0 = body_pos(&e, "base_link");
    e.ctx
        .blackboard
        .get::<roqsim::handles::robot::RobotHandle>("robot:husky")
        .unwrap()
        .drive(0.5, 0.0, 0.0);
    e.step_n(1000).unwrap();
    let (p1, b1) = (site(&e, "arm_pinch"), body_pos(&e, "base_link"));
    println!("base moved {:.3} m, pinch moved {:.3} m", b1[0] - b0[0], p1[0] - p0[0]);
    assert!(b1[0] - b0[0] > 0.5);
    assert!(
        ((p1[0] - p0[0]) - (b1[0] - b0[0])).abs() < 0.02 && (p1[2] - p0[2]).abs() < 0.01,
        "the arm rides the base"
    );
    assert!(
        h.positions().iter().zip(REST).all(|(a, b)| (a - b).abs() < 0.01),
        "and holds its rest stance: {:?}",
        h.positions()
    );
}

#[test]
fn rail_joint_comes_first_and_is_homed() {
    let mut e = engine(
        "sim: {timestep: 0.002, controllers: {initial_state: active}}
components:
  - spawn_arm: {model: ur5e, prefix: g_, pos: [0, 0, 0.6], pedestal: false, rail: {axis: [0, 1, 0], range: [-1, 1], home: 0.4}}
    name: gantry
",
    );
    let h = e.ctx.blackboard.get::<ArmHandle>("arm:gantry").unwrap().clone();
    assert_eq!(h.names()[0], "rail_joint");
    assert_eq!(&h.names()[1..], &JOINTS[..]);
    assert!((q(&e, "g_rail_joint") - 0.4).abs() < 1e-12);
    e.step_n(500).unwrap();
    assert!(
        (q(&e, "g_rail_joint") - 0.4).abs() < 1e-3,
        "held at rail.home: {}",
        q(&e, "g_rail_joint")
    );
    assert!((body_pos(&e, "g_base_link")[1] - 0.4).abs() < 1e-3);
    let ep = endpoint(&e, "follow_joint_trajectory");
    let g = send(
        &mut e,
        ep,
        Payload::Trajectory(TrajectoryGoal {
            joint_names: vec!["rail_joint".into()],
            points: vec![TrajectoryPoint {
                positions: vec![-0.5],
                time_from_start: 1.5,
                ..Default::default()
            }],
            goal_tolerance: vec![JointTolerance {
                name: "rail_joint".into(),
                position: 0.005,
                ..Default::default()
            }],
            ..Default::default()
        }),
    );
    let (o, _) = wait(&mut e, &g, 2000);
    assert_eq!(o.status, GoalStatus::Succeeded, "{o:?}");
    assert!(
        (body_pos(&e, "g_base_link")[1] + 0.5).abs() < 0.005,
        "the arm base rode the rail to -0.5: {:?}",
        body_pos(&e, "g_base_link")
    );
}

#[test]
fn home_map_seeds_qpos_and_targets() {
    let mut e =
        engine(&bare_arm(", home: {shoulder_pan_joint: 0.7}, default_plugins: false").replace(
            "default_plugins: false}",
            "default_plugins: false}\n    components:\n      - arm_controller: {}",
        ));
    assert!((q(&e, "ur_shoulder_pan_joint") - 0.7).abs() < 1e-12);
    e.step_n(300).unwrap();
    assert!((q(&e, "ur_shoulder_pan_joint") - 0.7).abs() < 1e-3);
}

/// The bundled UR5e with its own plugins: spawn_arm `home:` (list or map) is where the arm starts
/// and what its controller holds, over the manifest's home; without one, the manifest's home.
#[test]
fn home_on_the_bundled_ur5e_wins_over_the_manifest_home() {
    let joints = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint"];
    let list = [0.3, -1.2, 1.0, -1.4, -1.5707963267948966, 0.0];
    for home in [
        format!(", home: {list:?}"),
        ", home: {shoulder_pan_joint: 0.3, shoulder_lift_joint: -1.2, elbow_joint: 1.0, wrist_1_joint: -1.4}".to_string(),
    ] {
        let mut e = engine(&bare_arm(&home));
        e.step_n(500).unwrap();
        for (k, j) in joints.iter().enumerate() {
            let got = q(&e, &format!("ur_{j}"));
            assert!((got - list[k]).abs() < 2e-3, "{home}: {j} at {got}, home {}", list[k]);
        }
        e.reset().unwrap();
        assert!((q(&e, "ur_shoulder_lift_joint") + 1.2).abs() < 1e-12, "{home}: reset forgot home");
    }
    let mut e = engine(&bare_arm(""));
    e.step_n(100).unwrap();
    assert!((q(&e, "ur_shoulder_lift_joint") + std::f64::consts::FRAC_PI_2).abs() < 2e-3);
    let err = refusal(&bare_arm(", home: [0.0, .nan]"));
    assert_has(
        &err,
        &["home[1]", "must be a finite angle (rad) or position (m) within ±100, got NaN"],
    );
}

#[test]
fn spawn_robot_takes_an_actuators_block() {
    let mut e = engine(
        "sim: {timestep: 0.002}
components:
  - spawn_robot: {model: turtlebot4, actuators: {each: {left_wheel_motor: {d: 3.0}}}}
    name: robot
",
    );
    let t = e.ctx.blackboard.get::<ActuatorTable>("actuator_table:robot").unwrap().clone();
    let l = t.row("left_wheel_motor").unwrap();
    assert_eq!(
        (l.law, l.gains.clone()),
        (Law::Control(Control::Velocity), vec![("d", 3.0, Origin::World)])
    );
    assert_eq!(t.row("right_wheel_motor").unwrap().gains[0].2, Origin::Model);
    assert!(
        t.gravcomp_bodies.is_empty(),
        "velocity-driven wheels are the load path to the ground: not compensated"
    );
    e.step_n(10).unwrap();
    let err = refusal("components:\n  - spawn_robot: {model: turtlebot4, actuators: {each: {left_wheel_joint: {d: 1}}}}\n");
    assert_has(
        &err,
        &["actuators.each.left_wheel_joint", "is a joint, not an actuator", "`left_wheel_motor`"],
    );
}

// ------------------------------------------------------------------------------------------
// refusals
// ------------------------------------------------------------------------------------------

#[test]
fn actuators_block_refusals_name_the_fix() {
    let cases: &[(&str, &[&str])] = &[
        ("{kp: 100}", &["actuators.kp", "MuJoCo's spelling", "write `p`"]),
        ("{kv: 10}", &["actuators.kv", "write `d`"]),
        ("{kd: 10}", &["actuators.kd", "`damping`"]),
        (
            "{each: {wrist_3: {forcerange: [-1, 1]}}}",
            &["actuators.each.wrist_3.forcerange", "effort_limit"],
        ),
        ("{control: motor}", &["actuators.control", "`control: effort`"]),
        ("{control: pd}", &["actuators.control", "`control: position`"]),
        (
            "{control: position, stiffness: 5}",
            &["actuators.stiffness", "`position` law does not read `stiffness`", "write `p`"],
        ),
        ("{control: effort, each: {elbow: {d: 3}}}", &["actuators.each.elbow.d", "no gain"]),
        ("{bogus: 1}", &["actuators.bogus", "unknown key", "effort_limit"]),
        ("{effort_limit: -3}", &["actuators.effort_limit", "> 0"]),
        // model-dependent, at build:
        (
            "{each: {wrist_3_joint: {p: 100}}}",
            &[
                "actuators.each.wrist_3_joint",
                "is a joint, not an actuator",
                "the actuator driving it is `wrist_3`",
            ],
        ),
        (
            "{each: {gripper: {p: 100}}}",
            &[
                "actuators.each.gripper",
                "has no actuator `gripper`",
                "shoulder_pan, shoulder_lift, elbow, wrist_1, wrist_2, wrist_3",
            ],
        ),
        (
            "{control: velocity, d: 5}",
            &[
                "actuators.ctrlrange",
                "from a position (rad or m) to a velocity",
                "state `ctrlrange: [lo, hi]`",
            ],
        ),
        ("{control: effort}", &["actuators.ctrlrange", "to an effort"]),
        ("{stiffness: 3}", &["actuators.stiffness", "model's own `position` law", "reads p, d"]),
    ];
    for (block, needles) in cases {
        let err = refusal(&bare_arm(&format!(", default_plugins: false, actuators: {block}")));
        assert_has(&err, needles);
        assert!(
            err.contains("components.ur") || err.contains("[ur]") || err.contains("ur"),
            "{err}"
        );
    }
    // position -> impedance keeps the unit: the model's ctrlrange stays, nothing is refused.
    engine(&bare_arm(", actuators: {control: impedance, stiffness: 50}"));
}

#[test]
fn spawn_arm_refusals() {
    // mount: the base must be declared first.
    let err = refusal(
        "components:
  - spawn_arm: {model: ur5e, prefix: arm_, mount: {robot: husky}}
    name: arm
  - spawn_robot: {model: husky_a200}
    name: husky
",
    );
    assert_has(
        &err,
        &[
            "mount.robot",
            "no robot `husky` has been spawned before this arm",
            "declared BEFORE the arm",
        ],
    );
    let err = refusal(
        "components:
  - spawn_robot: {model: husky_a200}
    name: husky
  - spawn_arm: {model: ur5e, mount: {robot: husky}}
    name: arm
",
    );
    assert_has(&err, &["prefix", "needs a non-empty prefix", "wheel joints"]);
    let err = refusal(
        "components:
  - spawn_robot: {model: husky_a200}
    name: husky
  - spawn_arm: {model: ur5e, prefix: a_, mount: {robot: husky, body: roof}}
    name: arm
",
    );
    assert_has(&err, &["mount.body", "no body `roof`", "base_link"]);
    let err = refusal(&bare_arm(", end_effector: {model: parallel_gripper, replaces: [ee_plate]}"));
    assert_has(&err, &["end_effector.replaces", "no body `ee_plate`", "tool0"]);
    let err = refusal(&bare_arm(", end_effector: {model: parallel_gripper, site: flange_site}"));
    assert_has(&err, &["end_effector.site", "no site `flange_site`", "attachment_site"]);
    let err = refusal(&bare_arm(", home: {elbow: 1.0}"));
    assert_has(&err, &["home.elbow", "no joint `elbow`", "elbow_joint"]);
    let err = refusal(&bare_arm(", rail: {range: [1, -1]}"));
    assert_has(&err, &["rail.range", "lo < hi"]);
    // replaces really deletes: the arm without tool0 has no attachment site to weld to.
    let err = refusal(&bare_arm(", end_effector: {model: parallel_gripper, replaces: [tool0]}"));
    assert_has(&err, &["end_effector.site", "no site `attachment_site`"]);
}

#[test]
fn arm_controller_and_force_torque_refusals() {
    // A second writer of the same actuators.
    let err = refusal(&bare_arm("").replace(
        "pedestal: true}",
        "pedestal: true}\n    components:\n      - arm_controller: {controller_name: a}\n      - arm_controller: {controller_name: b}\n        name: second",
    ));
    assert_has(
        &err,
        &["already written by `ur.arm_controller`", "`ur.second` would be a second command source"],
    );
    // Top level: requires_owner.
    let err = refusal("components:\n  - arm_controller: {}\n");
    assert_has(&err, &["`arm_controller` belongs to a robot and must be nested under it"]);
    // Unknown joint.
    let err = refusal(&bare_arm(", default_plugins: false").replace("default_plugins: false}", "default_plugins: false}\n    components:\n      - arm_controller: {joints: [shoulder_pan]}"));
    assert_has(
        &err,
        &["joints[0]", "`shoulder_pan` is an actuator, not a joint", "shoulder_pan_joint"],
    );
    // A velocity-law arm is not held by position targets.
    let err = refusal(&bare_arm(", actuators: {control: velocity, d: 5, ctrlrange: [-3, 3]}"));
    assert_has(&err, &["is not a position servo", "`joints:`"]);
    // Bad config shapes.
    let err = refusal(&bare_arm("").replace("pedestal: true}", "pedestal: true}\n    components:\n      - arm_controller: {goal_tolerance: -1, initial_state: sleeping}"));
    assert_has(
        &err,
        &["goal_tolerance", "initial_state", "`sleeping`: one of unloaded, inactive, active"],
    );
    // F/T: unknown site; required key.
    let err = refusal(&bare_arm("").replace(
        "pedestal: true}",
        "pedestal: true}\n    components:\n      - force_torque: {site: wrist_site}",
    ));
    assert_has(&err, &["site: no site `wrist_site`", "fts_site"]);
    let err = refusal(&bare_arm("").replace(
        "pedestal: true}",
        "pedestal: true}\n    components:\n      - force_torque: {frame: base}",
    ));
    assert_has(&err, &["site"]);
    let err = refusal(&bare_arm("").replace(
        "pedestal: true}",
        "pedestal: true}\n    components:\n      - force_torque: {site: fts_site, frame: tool}",
    ));
    assert_has(&err, &["frame", "tool"]);
    // Registry: a second initially-active controller on the same joints names both.
    let mut e = engine(&bare_arm(""));
    let reg = Registry::get(&e.ctx, "ur").unwrap();
    let err = reg
        .declare(
            ControllerSpec {
                name: "forward_position_controller".into(),
                type_name: "forward_command_controller/ForwardCommandController".into(),
                command_interfaces: vec!["elbow_joint/position".into()],
                state_interfaces: vec![],
                update_rate: 500,
                initial_state: State::Active,
                owner: "teleop".into(),
                parameters: vec![],
            },
            0.0,
        )
        .unwrap_err();
    assert_has(
        &err,
        &[
            "`teleop`",
            "`ur.arm_controller` (controller `scaled_joint_trajectory_controller`)",
            "elbow_joint/position",
            "one command source per joint",
        ],
    );
    e.step().unwrap();
}

#[test]
fn streamed_trajectories_in_process_targets_and_startup_transitions() {
    let yaml = bare_arm("").replace(
        "pedestal: true}",
        "pedestal: true}\n    components:\n      - arm_controller: {stream_commands: true}",
    );
    let mut e = engine(&yaml);
    e.step().unwrap();
    // The declared controllers' startup transitions are published on the first step, stamped 0.
    let ev = endpoint_topic(&e, "scaled_joint_trajectory_controller/transition_event");
    let Some((Payload::TransitionEvents(evs), 1)) =
        e.ctx.interface.get(ev).latest().map(|(p, t)| (p.clone(), t))
    else {
        panic!("no startup transitions")
    };
    let labels: Vec<&str> = evs.iter().map(|t| t.transition_label.as_str()).collect();
    assert_eq!(labels, vec!["configure", "transition_success", "activate", "transition_success"]);
    assert!(evs.iter().all(|t| t.stamp == 0.0));
    // A streamed trajectory (no result): the joints follow.
    let st = endpoint_topic(&e, "scaled_joint_trajectory_controller/joint_trajectory");
    e.ctx
        .interface
        .deliver(st, Payload::Trajectory(traj(&[(0.5, plus([0.3, 0.0, 0.0, 0.0, 0.0, 0.0]))])));
    e.step_n(600).unwrap();
    assert!(
        (q(&e, "ur_shoulder_pan_joint") - 0.3).abs() < 0.005,
        "streamed: {}",
        q(&e, "ur_shoulder_pan_joint")
    );
    // The in-process handle: a target taken at the next step.
    let h = e.ctx.blackboard.get::<ArmHandle>("arm:ur").unwrap().clone();
    h.set_targets(&["wrist_3_joint"], &[0.9]);
    e.step_n(400).unwrap();
    assert!((q(&e, "ur_wrist_3_joint") - 0.9).abs() < 0.005);
    assert!((h.positions()[5] - 0.9).abs() < 0.005 && (h.positions()[0] - 0.3).abs() < 0.005);
    // A reset: rest again, the handle's targets with it.
    e.reset().unwrap();
    assert!(
        q(&e, "ur_shoulder_pan_joint").abs() < 1e-12 && (h.targets()[1] - REST[1]).abs() < 1e-12
    );
}

#[test]
fn controllers_start_unloaded_and_the_spawner_sequence_brings_them_up() {
    // No `sim.controllers`: every controller is declared but not loaded, as ros2_control starts.
    let mut e = engine(
        "sim: {timestep: 0.002}
components:
  - spawn_arm: {model: ur5e, prefix: ur_, pos: [0.0, 0.0, 0.5], pedestal: true}
    name: ur
",
    );
    let reg = Registry::get(&e.ctx, "ur").expect("registry");
    assert_eq!(
        reg.declared(),
        vec!["scaled_joint_trajectory_controller".to_string(), "joint_state_broadcaster".into()]
    );
    assert!(reg.list().is_empty(), "nothing loaded");
    let js = endpoint(&e, "joint_states");
    e.step_n(10).unwrap();
    assert!(e.ctx.interface.get(js).latest().is_none(), "no broadcaster, no joint_states");
    // spawner joint_state_broadcaster: load -> unconfigured, configure -> inactive, switch -> active.
    let t = e.sim_time();
    reg.load("joint_state_broadcaster", t).unwrap();
    assert_eq!(reg.state("joint_state_broadcaster"), Some(State::Unconfigured));
    reg.configure("joint_state_broadcaster", t).unwrap();
    assert_eq!(reg.state("joint_state_broadcaster"), Some(State::Inactive));
    reg.switch(&["joint_state_broadcaster".into()], &[], STRICT, t).unwrap();
    e.step_n(10).unwrap();
    let Some((Payload::JointState(m), _)) = e.ctx.interface.get(js).latest() else {
        panic!("joint_states once the broadcaster is active")
    };
    assert_eq!(m.name.len(), 6);
    // Configure of an inactive controller cleans it up first (as ros2_control does); cleanup of
    // an active one is refused; a second configure of an active one is refused.
    reg.load("scaled_joint_trajectory_controller", t).unwrap();
    reg.configure("scaled_joint_trajectory_controller", t).unwrap();
    reg.configure("scaled_joint_trajectory_controller", t).unwrap();
    let labels: Vec<&str> = reg
        .log()
        .iter()
        .filter(|x| x.controller == "scaled_joint_trajectory_controller")
        .map(|x| x.label)
        .collect();
    assert_eq!(labels, vec!["configure", "cleanup", "configure"]);
    assert_eq!(
        reg.cleanup("joint_state_broadcaster", t).unwrap_err(),
        "controller `joint_state_broadcaster` is active and cannot be cleaned up; deactivate it first"
    );
    reg.cleanup("scaled_joint_trajectory_controller", t).unwrap();
    assert_eq!(reg.state("scaled_joint_trajectory_controller"), Some(State::Unconfigured));
    assert_eq!(
        reg.configure("joint_state_broadcaster", t).unwrap_err(),
        "controller `joint_state_broadcaster` is active; deactivate it before configuring it"
    );
    assert_eq!(
        reg.types(),
        vec![
            "joint_state_broadcaster/JointStateBroadcaster".to_string(),
            "joint_trajectory_controller/JointTrajectoryController".into()
        ]
    );
    // A reset leaves what the bringup did (the spawner does not run again).
    e.reset().unwrap();
    assert_eq!(reg.state("joint_state_broadcaster"), Some(State::Active));
    assert_eq!(reg.state("scaled_joint_trajectory_controller"), Some(State::Unconfigured));
}

#[test]
fn initial_states_per_world_and_per_controller() {
    let e = engine(
        "sim: {timestep: 0.002, controllers: {initial_state: inactive}}
components:
  - spawn_arm: {model: ur5e, prefix: ur_, pos: [0.0, 0.0, 0.5], pedestal: true}
    name: ur
    components:
      - arm_controller: {broadcaster_initial_state: active}
",
    );
    let reg = Registry::get(&e.ctx, "ur").expect("registry");
    let states: Vec<(String, &str)> =
        reg.list().into_iter().map(|c| (c.name, c.state.label())).collect();
    assert_eq!(
        states,
        vec![
            ("scaled_joint_trajectory_controller".to_string(), "inactive"),
            ("joint_state_broadcaster".to_string(), "active")
        ]
    );
    let err =
        refusal("sim: {timestep: 0.002, controllers: {initial_state: sleeping}}\ncomponents: []\n");
    assert_has(&err, &["sim.controllers.initial_state", "unknown variant `sleeping`"]);
    let err = refusal(&bare_arm("").replace(
        "pedestal: true}",
        "pedestal: true}\n    components:\n      - arm_controller: {gripper_initial_state: asleep}",
    ));
    assert_has(&err, &["gripper_initial_state", "`asleep`: one of unloaded, inactive, active"]);
}

// ------------------------------------------------------------------------------------------
// force_limit and cartesian_admittance: a tool pressed onto a block
// ------------------------------------------------------------------------------------------

/// The ur5e with the parallel gripper on the table of ur_pick, a fixed 0.1 × 0.1 × 0.3 m block
/// under the pinch (top at z = 1.05 m, 15 mm under the fingertips at rest) and a raw
/// (`invert: false`) world-frame F/T at the flange tared at 0.05 s: pressing down reads a
/// negative z force, the sign of the wrench the tool applies. `components` goes under the arm,
/// `controllers` is the world's `sim.controllers.initial_state`.
fn press_world(controllers: &str, components: &str) -> String {
    format!(
        "sim: {{timestep: 0.002, controllers: {{initial_state: {controllers}}}}}
components:
  - box: {{pose: {{position: {{x: 0.35, y: 0.0}}}}, size: [1.0, 1.2, 0.75]}}
    name: table
  - spawn_arm: {{model: ur5e, prefix: ur_, pos: [0.0, 0.0, 0.75], end_effector: {{model: parallel_gripper}}}}
    name: ur
    components:
      - force_torque: {{site: fts_site, frame: world, invert: false, tare_at_s: 0.05}}
        name: ft
{components}
  - box: {{pose: {{position: {{x: 0.4919, y: 0.1333, z: 0.90}}}}, size: [0.1, 0.1, 0.3]}}
    name: block
"
    )
}

fn wrench_reader(e: &Engine) -> WrenchReader {
    e.ctx.blackboard.get::<WrenchReader>("ft:ft").unwrap().clone()
}

fn norm3(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

fn arm_ctrl(e: &Engine) -> Vec<f64> {
    let m = e.ctx.model();
    JOINTS
        .iter()
        .map(|j| {
            let a = m.name_to_id(MjtObjBase::mjOBJ_ACTUATOR, &format!("ur_{}", &j[..j.len() - 6]));
            e.ctx.data().ctrl()[a.unwrap_or_else(|| panic!("no actuator for {j}"))]
        })
        .collect()
}

#[test]
fn force_limit_trips_when_the_pressed_force_first_exceeds_the_limit_and_releases_the_arm() {
    let mut e = engine(&press_world(
        "active",
        "      - force_limit: {ft: ft, max_force: 30.0, settle_s: 0.1}\n        name: limit",
    ));
    e.step_n(100).unwrap();
    let reader = wrench_reader(&e);
    // A straight descent of the pinch 40 mm over 4 s (10 mm/s): the fingertips meet the block
    // after 15 mm, then the servo presses harder every step.
    let goal = vertical_path(&e, -0.04, 4.0, 40);
    let ep = endpoint_topic(&e, "scaled_joint_trajectory_controller/follow_joint_trajectory");
    let g = send(&mut e, ep, Payload::Trajectory(goal));
    let limit = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::manipulation::force_limit::LimitReader>("force_limit:ur.limit")
        .unwrap()
        .clone();
    let mut prev = norm3(reader.read(&e.ctx).unwrap().force);
    let mut trip_step = None;
    for i in 0..2500 {
        e.step().unwrap();
        let f = norm3(reader.read(&e.ctx).unwrap().force);
        if limit.get().tripped {
            trip_step = Some(i);
            let r = limit.get();
            println!(
                "force_limit tripped at t = {:.3} s: |F| {:.3} N (previous step {prev:.3} N), |T| {:.3} N·m; {}",
                r.at_time, r.force, r.torque, r.reason
            );
            assert!(r.force > 30.0 && prev < 30.0, "trip {} after {prev}", r.force);
            assert_eq!(r.force, f, "the report names the magnitude measured at the trip");
            assert!((r.at_time - e.ctx.sim_time()).abs() < 1e-9);
            assert!(r.at_time > 0.2 + 1.5, "not before contact: {}", r.at_time);
            assert_has(&r.reason, &["protective_stop: force", "> 30 N"]);
            break;
        }
        prev = f;
    }
    assert!(trip_step.is_some(), "the limit never tripped (last |F| {prev})");
    let at = limit.get().at_time;
    // The run is asked to stop, naming the stop.
    assert_has(e.ctx.stop_requested().unwrap(), &["ur.limit", "protective_stop: force"]);
    // The trajectory controller was deactivated at the trip time; its goal aborts.
    let reg = Registry::get(&e.ctx, "ur").unwrap();
    assert_eq!(reg.state("scaled_joint_trajectory_controller"), Some(State::Inactive));
    let released: Vec<(String, f64)> = reg
        .log()
        .into_iter()
        .filter(|t| t.label == "deactivate")
        .map(|t| (t.controller, t.stamp))
        .collect();
    assert_eq!(
        released,
        vec![
            ("scaled_joint_trajectory_controller".to_string(), at),
            ("gripper_controller".to_string(), at)
        ],
        "every controller commanding the arm, at the trip time"
    );
    assert!(reg.is_active("joint_state_broadcaster"), "a broadcaster commands nothing");
    let (o, _) = wait(&mut e, &g, 5);
    assert_eq!(o.status, GoalStatus::Aborted);
    assert_has(&o.error_string, &["was deactivated mid-goal; holding the measured position"]);
    // From then on ctrl holds where the joints were; the trajectory would have gone 20 mm deeper.
    let held = arm_ctrl(&e);
    e.step_n(500).unwrap();
    assert_eq!(arm_ctrl(&e), held, "ctrl no longer follows the trajectory");
    assert!(limit.get().tripped, "latched");
    // A reset clears the report.
    e.reset().unwrap();
    e.step().unwrap();
    assert!(!limit.get().tripped && limit.get().at_time == -1.0);
}

#[test]
fn force_limit_refusals() {
    let w = |cfg: &str| press_world("active", &format!("      - force_limit: {cfg}"));
    assert_has(
        &refusal(&w("{max_force: 0.0}")),
        &["max_force and max_torque are both 0, so nothing is watched"],
    );
    assert_has(
        &refusal(&w("{max_force: -1.0}")),
        &["max_force", "must be a finite number >= 0 (N; 0 disables), got -1"],
    );
    assert_has(
        &refusal(&w("{ft: wrist}")),
        &["ft: no force_torque sensor labelled `wrist` is configured before this force_limit (blackboard `ft:wrist`)", "Sensors configured so far: [ft]"],
    );
    assert_has(
        &refusal("components:\n  - force_limit: {}\n"),
        &["`force_limit` belongs to a robot and must be nested under it"],
    );
}

fn target_pose(frame: &str, p: [f64; 3], xyzw: [f64; 4]) -> Payload {
    Payload::PoseTwist(roqsim::context::payload::PoseTwist {
        stamp: 0.0,
        frame_id: frame.into(),
        child_frame_id: String::new(),
        position: p,
        orientation: xyzw,
        linear: [0.0; 3],
        angular: [0.0; 3],
    })
}

/// The pinch's world orientation [x, y, z, w].
fn site_xyzw(e: &Engine, name: &str) -> [f64; 4] {
    let id = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_SITE, name).unwrap();
    let q = roqsim::math::quat_from_mat(&e.ctx.data().site_xmat()[id]);
    [q[1], q[2], q[3], q[0]]
}

#[test]
fn cartesian_motion_takes_over_from_the_trajectory_controller_and_tracks_a_target_frame() {
    let mut e = engine(&press_world(
        "active",
        "      - cartesian_admittance: {controller_type: cartesian_motion_controller, site: pinch, initial_state: inactive}",
    ));
    e.step_n(50).unwrap();
    let reg = Registry::get(&e.ctx, "ur").unwrap();
    let info = reg.list().into_iter().find(|c| c.name == "cartesian_motion_controller").unwrap();
    assert_eq!(info.type_name, "cartesian_motion_controller/CartesianMotionController");
    assert_eq!(info.update_rate, 100);
    assert_eq!(info.state, State::Inactive);
    assert_eq!(info.required_command_interfaces[0], "shoulder_pan_joint/position");
    // One command source per arm: activating it beside the active trajectory controller is
    // refused naming both; a hand-over names both sides.
    let err = reg.switch(&["cartesian_motion_controller".into()], &[], STRICT, 0.1).unwrap_err();
    assert_has(
        &err,
        &[
            "cannot activate `cartesian_motion_controller`",
            "is claimed by `scaled_joint_trajectory_controller`",
        ],
    );
    reg.switch(
        &["cartesian_motion_controller".into()],
        &["scaled_joint_trajectory_controller".into()],
        STRICT,
        0.1,
    )
    .unwrap();
    let p0 = site(&e, "ur_pinch");
    let q0 = site_xyzw(&e, "ur_pinch");
    let goal = [p0[0] + 0.05, p0[1] - 0.03, p0[2] + 0.04];
    let ep = endpoint_topic(&e, "cartesian_motion_controller/target_frame");
    e.ctx.interface.deliver(ep, target_pose("world", goal, q0));
    let mut settled = None;
    for i in 0..3000 {
        e.step().unwrap();
        let d = dist3(site(&e, "ur_pinch"), goal);
        if d < 1e-3 && settled.is_none() {
            settled = Some((i + 1) as f64 * 0.002);
        } else if d >= 1e-3 {
            settled = None;
        }
    }
    let p = site(&e, "ur_pinch");
    let q = site_xyzw(&e, "ur_pinch");
    let dq: f64 = (0..4).map(|i| (q[i] - q0[i]).abs()).sum();
    println!(
        "motion: target 50/-30/40 mm away reached within 1 mm after {settled:?} s; final error {:.3e} m, orientation drift {dq:.2e}",
        dist3(p, goal)
    );
    assert!(dist3(p, goal) < 1e-3, "steady-state error {}", dist3(p, goal));
    assert!(settled.is_some_and(|t| t < 5.0), "settled {settled:?}");
    assert!(dq < 1e-3, "orientation held: {q:?} vs {q0:?}");
    // current_pose: the pinch in the arm's base frame (base_link at z = 0.75, unrotated).
    let cp = endpoint_topic(&e, "cartesian_motion_controller/current_pose");
    let Some((Payload::PoseTwist(c), _)) =
        e.ctx.interface.get(cp).latest().map(|(p, t)| (p.clone(), t))
    else {
        panic!("no current_pose")
    };
    assert_eq!(c.frame_id, "base_link");
    assert!(dist3(c.position, [p[0], p[1], p[2] - 0.75]) < 2e-3, "{:?} vs {p:?}", c.position);
    // A target in the base frame means the same place.
    e.ctx.interface.deliver(ep, target_pose("base_link", [p0[0], p0[1], p0[2] - 0.75], q0));
    e.step_n(2500).unwrap();
    assert!(dist3(site(&e, "ur_pinch"), p0) < 1e-3, "{:?} vs {p0:?}", site(&e, "ur_pinch"));
    // Handing back: the trajectory controller holds where the arm is.
    reg.switch(
        &["scaled_joint_trajectory_controller".into()],
        &["cartesian_motion_controller".into()],
        STRICT,
        e.ctx.sim_time(),
    )
    .unwrap();
    e.step().unwrap();
    let held = arm_ctrl(&e);
    e.ctx.interface.deliver(ep, target_pose("world", goal, q0));
    e.step_n(250).unwrap();
    assert_eq!(arm_ctrl(&e), held, "an inactive Cartesian controller moves nothing");
}

/// Let the arm stand 0.2 s (the F/T tares at rest at 0.05 s), then activate `controller`.
fn activate_after_tare(e: &mut Engine, controller: &str) {
    secs(e, 0.2);
    assert!(wrench_reader(e).tared_at().is_some());
    let reg = Registry::get(&e.ctx, "ur").unwrap();
    reg.switch(&[controller.to_string()], &[], STRICT, e.ctx.sim_time()).unwrap();
}

/// Mean and extreme deviation from `want` of the F/T z force over `n` steps.
fn fz_band(e: &mut Engine, r: &WrenchReader, n: u64, want: f64) -> (f64, f64) {
    let (mut sum, mut worst) = (0.0, 0.0f64);
    for _ in 0..n {
        e.step().unwrap();
        let f = r.read(&e.ctx).unwrap().force[2];
        sum += f;
        worst = worst.max((f - want).abs());
    }
    (sum / n as f64, worst)
}

#[test]
fn cartesian_force_presses_the_tool_down_with_the_commanded_10_n() {
    let mut e = engine(&press_world(
        "inactive",
        "      - cartesian_admittance: {controller_type: cartesian_force_controller, site: pinch, ft: ft, target_wrench: [0, 0, -5, 0, 0, 0], initial_state: inactive}",
    ));
    let r = wrench_reader(&e);
    activate_after_tare(&mut e, "cartesian_force_controller");
    // The configured 5 N first, then the commanded 10 N (what the tool applies: -z presses down).
    secs(&mut e, 2.0);
    let (m5, w5) = fz_band(&mut e, &r, 500, -5.0);
    let ep = endpoint_topic(&e, "cartesian_force_controller/target_wrench");
    e.ctx.interface.deliver(
        ep,
        Payload::Wrench(roqsim::context::payload::Wrench {
            stamp: 0.0,
            frame_id: "world".into(),
            force: [0.0, 0.0, -10.0],
            torque: [0.0; 3],
        }),
    );
    let mut settle = None;
    for i in 0..1500 {
        e.step().unwrap();
        let f = r.read(&e.ctx).unwrap().force[2];
        if (f + 10.0).abs() < 0.5 {
            settle.get_or_insert((i + 1) as f64 * 0.002);
        } else {
            settle = None;
        }
    }
    let (m10, w10) = fz_band(&mut e, &r, 500, -10.0);
    println!("force: 5 N -> mean Fz {m5:.3} N (worst {w5:.3}); 10 N -> mean {m10:.3} N (worst deviation {w10:.3} N over 1 s), within 0.5 N from {settle:?} s after the command");
    assert!((m5 + 5.0).abs() < 0.5 && w5 < 0.5, "{m5} {w5}");
    assert!((m10 + 10.0).abs() < 0.1, "mean {m10}");
    assert!(w10 < 0.5, "every sample within 10 ± 0.5 N: worst {w10}");
    assert!(settle.is_some(), "never settled");
}

#[test]
fn cartesian_compliance_offsets_the_pose_by_force_over_stiffness() {
    // Free space (the block far below), z stiffness 500 N/m and a 10 N push down: the tool
    // settles 10 / 500 = 20 mm below its target, x and y on it.
    let mut e = engine(&press_world(
        "inactive",
        "      - cartesian_admittance: {site: pinch, stiffness: [500, 500, 500, 50, 50, 50], damping: [100, 100, 100, 20, 20, 20], initial_state: inactive}",
    ).replace("z: 0.90}}, size: [0.1, 0.1, 0.3]", "z: 0.80}}, size: [0.1, 0.1, 0.1]"));
    let reg = Registry::get(&e.ctx, "ur").unwrap();
    assert_eq!(
        reg.type_of("cartesian_compliance_controller").as_deref(),
        Some("cartesian_compliance_controller/CartesianComplianceController")
    );
    activate_after_tare(&mut e, "cartesian_compliance_controller");
    let p0 = site(&e, "ur_pinch");
    let h = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::manipulation::cartesian_admittance::CartesianHandle>("cartesian:ur")
        .unwrap()
        .clone();
    secs(&mut e, 4.0);
    let p = site(&e, "ur_pinch");
    println!("compliance: offset from target {:?} mm", [0, 1, 2].map(|i| (p[i] - p0[i]) * 1e3));
    assert!((p[2] - p0[2] + 0.020).abs() < 5e-4, "z offset {}", p[2] - p0[2]);
    assert!((p[0] - p0[0]).abs() < 5e-4 && (p[1] - p0[1]).abs() < 5e-4, "{p:?} vs {p0:?}");
    // The in-process handle moves the target 30 mm along x; the offset stays.
    let q = roqsim::math::quat_from_mat(&{
        let id = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_SITE, "ur_pinch").unwrap();
        e.ctx.data().site_xmat()[id]
    });
    h.set_target_frame([p0[0] + 0.03, p0[1], p0[2]], q);
    secs(&mut e, 4.0);
    let p = site(&e, "ur_pinch");
    assert!((p[0] - p0[0] - 0.03).abs() < 5e-4 && (p[2] - p0[2] + 0.020).abs() < 5e-4, "{p:?}");
    assert!(h.current_pose().is_some());
}

#[test]
fn cartesian_admittance_refusals() {
    let w = |cfg: &str| press_world("inactive", &format!("      - cartesian_admittance: {cfg}"));
    // Two active command sources on one arm, named both.
    assert_has(
        &refusal(&press_world("active", "      - cartesian_admittance: {controller_type: cartesian_motion_controller}")),
        &[
            "`ur.cartesian_admittance` (controller `cartesian_motion_controller`) would command `shoulder_pan_joint/position`",
            "which `ur.arm_controller` (controller `scaled_joint_trajectory_controller`) already commands on robot `ur`: one command source per joint",
        ],
    );
    // No arm to drive.
    assert_has(
        &refusal(&bare_arm(", default_plugins: false").replace(
            "default_plugins: false}",
            "default_plugins: false}\n    components:\n      - cartesian_admittance: {controller_type: cartesian_motion_controller}",
        )),
        &["entity `ur` has no arm_controller configured before this cartesian_admittance (blackboard `arm_command:ur`), so there is no arm to drive"],
    );
    assert_has(
        &refusal("components:\n  - cartesian_admittance: {}\n"),
        &["`cartesian_admittance` belongs to a robot and must be nested under it"],
    );
    // Unknown site, unknown sensor.
    assert_has(
        &refusal(&w("{site: tcp}")),
        &[
            "site: entity `ur` has no site `tcp` (looked up as `ur_tcp`); its sites are [",
            "pinch",
            "tool_site",
        ],
    );
    assert_has(
        &refusal(&w("{ft: wrist}")),
        &["ft: no force_torque sensor labelled `wrist` is configured before this cartesian_compliance_controller (blackboard `ft:wrist`)"],
    );
    // Config shapes.
    assert_has(
        &refusal(&w("{controller_type: cartesian_force_controller, law: admittance}")),
        &["law", "is the older spelling of controller_type, which is set too (`cartesian_force_controller`)"],
    );
    assert_has(
        &refusal(&w(
            "{controller_type: cartesian_force_controller, stiffness: [100, 0, 0, 0, 0, 0]}",
        )),
        &["cartesian_force_controller has no stiffness"],
    );
    assert_has(
        &refusal(&w("{axes: [1, 1, 2, 1, 1, 1], mass: [1, 1, 0, 1, 1, 1], initial_state: on}")),
        &[
            "axes[2]",
            "must be 0 (held) or 1 (controlled), got 2",
            "mass[2]",
            "`on`: one of active, inactive, unloaded",
        ],
    );
    // `law:` still works and derives the type.
    let e = engine(&w("{law: position, site: pinch}"));
    let reg = Registry::get(&e.ctx, "ur").unwrap();
    assert_eq!(
        reg.type_of("cartesian_motion_controller").as_deref(),
        Some("cartesian_motion_controller/CartesianMotionController")
    );
}
