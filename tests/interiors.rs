//! Interiors (issue 19's rest of the catalog): the door's GripperCommand action, `present:` and
//! `topics:` on door, conveyor and a standalone spawn_sensor, a user's conveyor belt model, and
//! the floorplan's `mesh:` source and PNG textures. ROS-free; every test asserts measured values,
//! goal outcomes or exact refusal texts.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_channel::{unbounded, Receiver};
use mujoco_rs::prelude::MjtObjBase;
use roqsim::context::payload::{ActionCall, ActionOutcome, GoalStatus, GripperGoal, Payload};
use roqsim::Engine;

mod common;
use common::*;

// ---------------------------------------------------------------------------------------- door

fn door_world(door_keys: &str, extra: &str) -> String {
    format!(
        "sim: {{timestep: 0.002}}
components:
  - door: {{pos: [0.0, 0.0], width: 0.9, height: 2.0{door_keys}}}
    name: door_1
{extra}"
    )
}

const CRATE: &str = "  - box: {pose: {position: {x: 0.25, y: 0.55}}, size: [0.2, 0.2, 1.0]}
    name: crate
";

struct Goal {
    outcome: Receiver<ActionOutcome>,
    feedback: Receiver<Payload>,
    cancel: Arc<AtomicBool>,
}

/// Send a GripperCommand goal to the door's `door` action endpoint.
fn send_goal(e: &mut Engine, position: f64, max_effort: f64) -> Goal {
    let (ftx, frx) = unbounded();
    let (otx, orx) = unbounded();
    let cancel = Arc::new(AtomicBool::new(false));
    let call = ActionCall {
        goal: Box::new(Payload::Gripper(GripperGoal { position, max_effort })),
        feedback: ftx,
        outcome: otx,
        cancel: cancel.clone(),
    };
    let id = endpoint_in(e, "door_1", "door");
    e.ctx.interface.deliver(id, Payload::Goal(call));
    Goal { outcome: orx, feedback: frx, cancel }
}

/// Step until the goal ends (at most `max_s` of sim time); the outcome and the sim time it took.
fn run_goal(e: &mut Engine, g: &Goal, max_s: f64) -> (ActionOutcome, f64) {
    let t0 = e.ctx.sim_time();
    for _ in 0..(max_s / e.dt()) as usize {
        e.step().unwrap();
        if let Ok(o) = g.outcome.try_recv() {
            return (o, e.ctx.sim_time() - t0);
        }
    }
    panic!("the goal did not end within {max_s} s");
}

fn result(o: &ActionOutcome) -> (f64, f64, bool, bool) {
    match o.result.as_deref() {
        Some(Payload::GripperResult { position, effort, stalled, reached_goal }) => {
            (*position, *effort, *stalled, *reached_goal)
        }
        other => panic!("no gripper result: {other:?} ({o:?})"),
    }
}

fn hinge_deg(e: &Engine) -> f64 {
    let j = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_JOINT, "door_1_hinge").unwrap();
    e.ctx.data().qpos()[e.ctx.model().jnt_qposadr()[j] as usize].to_degrees()
}

fn force_range(e: &Engine) -> [f64; 2] {
    let a = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_ACTUATOR, "door_1_actuator").unwrap();
    e.ctx.model().actuator_forcerange()[a]
}

#[test]
fn door_action_opens_to_the_goal_with_feedback() {
    let mut e = engine(&door_world("", ""));
    let id = endpoint_in(&e, "door_1", "door");
    assert_eq!(
        e.ctx.interface.get(id).get_hint("ros2", "action"),
        Some("control_msgs/action/GripperCommand")
    );
    let g = send_goal(&mut e, 0.5, 0.0);
    let (o, took) = run_goal(&mut e, &g, 10.0);
    let (pos, effort, stalled, reached) = result(&o);
    let fb: Vec<f64> = g
        .feedback
        .try_iter()
        .map(|p| match p {
            Payload::GripperResult { position, .. } => position,
            other => panic!("feedback {other:?}"),
        })
        .collect();
    eprintln!(
        "door goal 0.5: {:?} `{}` after {took:.3} s at {pos:.4} ({:.2} deg), effort {effort:.3}, {} feedback {:?}",
        o.status,
        o.error_string,
        hinge_deg(&e),
        fb.len(),
        &fb[..fb.len().min(4)]
    );
    assert_eq!(o.status, GoalStatus::Succeeded);
    assert_eq!(o.error_string, "reached the goal openness");
    assert!(reached && !stalled);
    assert!((pos - 0.5).abs() <= 0.01, "openness {pos}");
    assert!((hinge_deg(&e) - 60.0).abs() <= 1.2, "hinge at {} deg", hinge_deg(&e));
    // feedback at the state rate (10 Hz), rising toward the goal
    assert!(fb.len() as f64 >= (took * 10.0).floor() - 1.0, "{} feedback in {took} s", fb.len());
    assert!(fb.windows(2).all(|w| w[1] >= w[0] - 1e-3), "feedback {fb:?}");
    // the default force range is the door's own
    assert_eq!(force_range(&e), [-30.0, 30.0]);
}

#[test]
fn door_action_aborts_stalled_against_a_crate_and_clamps_its_effort() {
    let mut e = engine(&door_world("", CRATE));
    let g = send_goal(&mut e, 1.0, 12.0);
    e.step().unwrap();
    assert_eq!(force_range(&e), [-12.0, 12.0], "max_effort 12 clamps the hinge");
    let act = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_ACTUATOR, "door_1_actuator").unwrap();
    let mut peak: f64 = 0.0;
    let t0 = e.ctx.sim_time();
    let o = loop {
        e.step().unwrap();
        peak = peak.max(e.ctx.data().actuator_force()[act].abs());
        if let Ok(o) = g.outcome.try_recv() {
            break o;
        }
        assert!(e.ctx.sim_time() - t0 < 10.0, "no outcome");
    };
    let (pos, _effort, stalled, reached) = result(&o);
    eprintln!("stall goal: {:?} `{}` at {pos:.4}, peak torque {peak:.3}", o.status, o.error_string);
    assert_eq!(o.status, GoalStatus::Aborted);
    assert!(stalled && !reached);
    assert!((peak - 12.0).abs() < 0.01, "pushed with {peak} N·m, max_effort 12");
    assert!(o.error_string.starts_with("stalled at openness "), "{}", o.error_string);
    assert!(o.error_string.ends_with("(blocked?): the door backed off"), "{}", o.error_string);
    // a reset restores the door's own limit
    e.reset().unwrap();
    assert_eq!(force_range(&e), [-30.0, 30.0]);
}

#[test]
fn door_goals_are_preempted_canceled_and_refused_in_words() {
    let mut e = engine(&door_world("", ""));
    // a newer goal preempts
    let g1 = send_goal(&mut e, 1.0, 0.0);
    secs(&mut e, 0.2);
    let g2 = send_goal(&mut e, 0.2, 0.0);
    e.step().unwrap();
    let o1 = g1.outcome.try_recv().expect("the first goal ended");
    assert_eq!((o1.status, o1.error_string.as_str()), (GoalStatus::Canceled, "preempted by a newer door goal"));
    // a cmd preempts
    secs(&mut e, 0.2);
    let cmd = endpoint_in(&e, "door_1", "cmd");
    e.ctx.interface.deliver(cmd, Payload::Float64(0.3));
    e.step().unwrap();
    let o2 = g2.outcome.try_recv().expect("the second goal ended");
    assert_eq!((o2.status, o2.error_string.as_str()), (GoalStatus::Canceled, "preempted by a command on `cmd`"));
    // a cancel holds the measured angle
    let g3 = send_goal(&mut e, 1.0, 0.0);
    secs(&mut e, 0.5);
    g3.cancel.store(true, Ordering::SeqCst);
    e.step().unwrap();
    let o3 = g3.outcome.try_recv().expect("canceled");
    assert_eq!(
        (o3.status, o3.error_string.as_str()),
        (GoalStatus::Canceled, "canceled by the caller; holding the measured angle")
    );
    let at = hinge_deg(&e);
    secs(&mut e, 2.0);
    eprintln!("canceled at {at:.2} deg, 2 s later {:.2} deg", hinge_deg(&e));
    assert!((hinge_deg(&e) - at).abs() < 2.0, "held {at} deg, now {}", hinge_deg(&e));
    // refusals
    for (pos, eff, want) in [
        (1.5, 0.0, "command.position = 1.5: a door's target is its openness, a fraction 0..1 (0 closed, 1 open at max_angle 120 deg)"),
        (f64::NAN, 0.0, "command.position = NaN: a door's target is its openness, a fraction 0..1 (0 closed, 1 open at max_angle 120 deg)"),
        (0.5, -1.0, "command.max_effort = -1: must be a finite hinge torque >= 0 (N·m; 0 = the door's max_torque 30)"),
    ] {
        let g = send_goal(&mut e, pos, eff);
        e.step().unwrap();
        let o = g.outcome.try_recv().expect("refused at once");
        assert_eq!((o.status, o.error_string.as_str()), (GoalStatus::Aborted, want));
    }
}

#[test]
fn an_absent_door_is_hidden_holds_and_refuses_goals() {
    let mut e = engine(&door_world(", present: false", ""));
    let ent = e.ctx.entities.get("door_1").unwrap();
    assert!(!ent.present && !ent.declared_present);
    let leaf = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_GEOM, "door_1_leaf").unwrap();
    assert_eq!(e.ctx.model().geom_group()[leaf], roqsim::mujoco::raycast::ABSENT_GEOM_GROUP as i32);
    assert_eq!(e.ctx.model().geom_contype()[leaf], 0);
    let cmd = endpoint_in(&e, "door_1", "cmd");
    e.ctx.interface.deliver(cmd, Payload::Float64(1.0));
    secs(&mut e, 1.0);
    assert!(hinge_deg(&e).abs() < 1e-9, "an absent door moved to {} deg", hinge_deg(&e));
    let g = send_goal(&mut e, 1.0, 0.0);
    e.step().unwrap();
    let o = g.outcome.try_recv().expect("refused");
    assert_eq!(
        (o.status, o.error_string.as_str()),
        (GoalStatus::Aborted, "door `door_1` is absent (present: false or DeleteEntity): SpawnEntity it before commanding it")
    );
    // spawned, it takes commands again
    roqsim::engine::presence::set_present(&mut e.ctx, "door_1", true).unwrap();
    let g = send_goal(&mut e, 0.25, 0.0);
    let (o, _) = run_goal(&mut e, &g, 10.0);
    assert_eq!(o.status, GoalStatus::Succeeded);
    assert!((hinge_deg(&e) - 30.0).abs() <= 1.2, "hinge {}", hinge_deg(&e));
}

#[test]
fn door_topics_rename_its_endpoints() {
    let e = engine(&door_world(", topics: {cmd: open_cmd, door: /lobby/door}", ""));
    let hint = |name: &str| {
        let id = endpoint_in(&e, "door_1", name);
        e.ctx.interface.get(id).get_hint("ros2", "topic").map(str::to_string)
    };
    assert_eq!(hint("cmd").as_deref(), Some("open_cmd"));
    assert_eq!(hint("door").as_deref(), Some("/lobby/door"));
    assert_eq!(hint("state"), None);
    let r = refusal(&door_world(", topics: {opening: x}", ""));
    assert_contains(&r, "topics.opening: no endpoint role `opening` here; the roles are: cmd, state, door");
    let r = refusal(&door_world(", controllable: false, topics: {cmd: x}", ""));
    assert_contains(&r, "topics: renames endpoints this door does not have: a passive door (`controllable: false`) or a cased opening (`leaf: false`) serves none; remove `topics:`");
}
