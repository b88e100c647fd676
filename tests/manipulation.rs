//! Manipulation (ROS-free), the arm in motion: spawn_arm's actuator laws and gravity
//! compensation, arm_controller's FollowJointTrajectory and GripperCommand execution on the
//! physics thread. Goals go in as a transport would deliver them (`Payload::Goal` with
//! feedback/outcome channels and a cancel flag) and every assertion is on a measured value or a
//! message's text. The controller registry and the arm's setup are in
//! `manipulation_controllers.rs`, force sensing and force control in `manipulation_force.rs`;
//! the helpers all three share in `common/arm.rs`.

// The ur5e MJCF states its ctrlrange as the literal ±6.28319 rad; the table must report exactly that.
#![allow(clippy::approx_constant)]

use std::sync::atomic::Ordering;

use mujoco_rs::prelude::MjtObjBase;
use roqsim::context::payload::{
    ActionOutcome, GoalStatus, GripperGoal, JointState, JointTolerance, Payload,
};
use roqsim::plugins::manipulation::arm_controller::{ArmHandle, GripperReader};
use roqsim::spawn::actuators::{ActuatorTable, Control, Law, Origin};
use roqsim::Engine;

mod common;
use common::arm::*;
use common::*;

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
