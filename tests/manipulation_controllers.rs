//! Manipulation (ROS-free), the controllers and the arm's setup: the controller registry (list,
//! switch, unload, transition events, the spawner sequence, initial states, streamed
//! trajectories), the mobile manipulator, the rail, `home`, spawn_robot's actuators block, and
//! the refusals of spawn_arm, arm_controller and force_torque. Every assertion is on a measured
//! value or a message's text.

// The ur5e MJCF states its ctrlrange as the literal ±6.28319 rad; the table must report exactly that.
#![allow(clippy::approx_constant)]

use crossbeam_channel::unbounded;
use roqsim::context::payload::{
    GoalStatus, GripperGoal, JointTolerance, Payload, TrajectoryGoal, TrajectoryPoint,
};
use roqsim::handles::controllers::{
    ControllerSpec, Registry, State, BEST_EFFORT, FORCE_AUTO, STRICT,
};
use roqsim::plugins::manipulation::arm_controller::ArmHandle;
use roqsim::spawn::actuators::{ActuatorTable, Control, Law, Origin};

mod common;
use common::arm::*;
use common::*;

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
