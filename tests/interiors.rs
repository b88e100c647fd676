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

// ------------------------------------------------------------------------------------ conveyor

fn body_pos(e: &Engine, name: &str) -> [f64; 3] {
    let id = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_BODY, name).unwrap();
    e.ctx.data().xpos()[id]
}

/// A user's belt: a frame, and a 3 m slab on the `belt_slide` joint, top at 0.5 m.
const USER_BELT: &str = r#"<mujoco model="my_belt">
  <worldbody>
    <body name="frame">
      <geom name="legs" type="box" size="1.4 0.25 0.23" pos="0 0 0.23" rgba="0.3 0.3 0.3 1"/>
      <body name="slab" pos="0 0 0.49">
        <joint name="belt_slide" type="slide" axis="1 0 0"/>
        <geom name="slab" type="box" size="1.5 0.3 0.01" mass="200" friction="0.1"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"#;

fn belt_world(keys: &str) -> String {
    format!(
        "sim: {{timestep: 0.002}}
components:
  - conveyor: {{pos: [0.0, 0.0, 0.0], speed: 0.3, namespace: belt{keys}}}
    name: belt
  - box: {{pose: {{position: {{x: -1.2, y: 0.0, z: 0.6}}}}, size: [0.2, 0.2, 0.2], motion: physics, mass: 1.0}}
    name: parcel
"
    )
}

#[test]
fn a_user_belt_model_carries_a_box_at_the_belt_speed() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "my_belt.xml", USER_BELT);
    let mut e = engine_in(&belt_world(", model: my_belt.xml, friction: 0.8"), dir.path());
    let m = e.ctx.model();
    let slab = m.name_to_id(MjtObjBase::mjOBJ_GEOM, "belt_slab").expect("the user's slab, prefixed by the stem");
    assert_eq!(m.geom_priority()[slab], 1);
    assert_eq!(m.geom_friction()[slab][0], 0.8);
    assert!(m.name_to_id(MjtObjBase::mjOBJ_JOINT, "belt_belt_slide").is_some());
    assert_eq!(e.ctx.entities.get("belt").unwrap().model, "my_belt.xml");
    secs(&mut e, 0.5);
    let x0 = body_pos(&e, "parcel")[0];
    secs(&mut e, 5.0);
    let travelled = body_pos(&e, "parcel")[0] - x0;
    let z = body_pos(&e, "parcel")[2];
    eprintln!("user belt: travelled {travelled:.4} m in 5 s, parcel centre at z {z:.4}");
    assert!((travelled - 1.5).abs() < 0.01, "travelled {travelled} m in 5 s at 0.3 m/s");
    assert!((z - 0.6).abs() < 0.005, "the parcel rides the slab top (0.5 m): centre at {z}");
    // without `friction:` the slab keeps its own
    let e = engine_in(&belt_world(", model: my_belt.xml"), dir.path());
    let slab = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_GEOM, "belt_slab").unwrap();
    assert_eq!(e.ctx.model().geom_friction()[slab][0], 0.1);
}

#[test]
fn conveyor_model_refusals() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "my_belt.xml", USER_BELT);
    write(dir.path(), "no_slide.xml", &USER_BELT.replace("belt_slide\" type=\"slide", "roller\" type=\"hinge"));
    let r = refusal_in(&belt_world(", model: no_slide.xml"), dir.path());
    assert_contains(&r, "model: `no_slide.xml` has no slide joint named `belt_slide`; a belt model carries one, on the belt slab, its axis the travel direction (joints: roller)");
    let r = refusal_in(&belt_world(", model: my_belt.xml, length: 3.0, width: 0.6"), dir.path());
    assert_contains(&r, "length: sizes the built-in belt; a belt `model:` (`my_belt.xml`) keeps its own size: remove `length` (or scale the model's MJCF)");
    assert_contains(&r, "width: sizes the built-in belt; a belt `model:` (`my_belt.xml`) keeps its own size: remove `width` (or scale the model's MJCF)");
    let r = refusal_in(&belt_world(", model: nothing_here.xml"), dir.path());
    assert_contains(&r, "nothing_here.xml");
    assert_contains(&r, "not found");
}

#[test]
fn an_absent_conveyor_stands_still_and_its_topic_renames() {
    let mut e = engine(&belt_world(", present: false, topics: {speed: /line_1/belt_speed}"));
    let ent = e.ctx.entities.get("belt").unwrap();
    assert!(!ent.present);
    let id = endpoint_in(&e, "belt", "speed");
    assert_eq!(e.ctx.interface.get(id).get_hint("ros2", "topic"), Some("/line_1/belt_speed"));
    let j = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_JOINT, "belt_belt_slide").unwrap();
    let dof = e.ctx.model().jnt_dofadr()[j] as usize;
    secs(&mut e, 0.5);
    assert_eq!(e.ctx.data().qvel()[dof], 0.0, "an absent belt runs");
    // the parcel falls through where the absent belt is
    assert!(body_pos(&e, "parcel")[2] < 0.2, "parcel at {:?}", body_pos(&e, "parcel"));
    roqsim::engine::presence::set_present(&mut e.ctx, "belt", true).unwrap();
    e.step().unwrap();
    assert_eq!(e.ctx.data().qvel()[dof], 0.3);
    let r = refusal("components:\n  - conveyor: {present: false, package_pose: [0, 0, 1.0, 1, 0, 0, 0]}\n");
    assert_contains(&r, "present: `present: false` with `package_pose`: the carton is a free body of its own and would fall where the absent belt was; give the carton as a `box` entry with its own `present:`");
    let r = refusal("components:\n  - conveyor: {topics: {belt: x}}\n");
    assert_contains(&r, "topics.belt: no endpoint role `belt` here; the roles are: speed");
}

// -------------------------------------------------------------------------------- spawn_sensor

const LIDAR_MOUNT: &str = "sim: {timestep: 0.002}
components:
  - spawn_sensor: {model: rplidar_a1, pos: [0.0, 0.0, 0.3]KEYS}
    name: scanner
";

#[test]
fn a_standalone_mount_starts_absent_and_forwards_its_topics() {
    let e = engine(&LIDAR_MOUNT.replace("KEYS", ", present: false, topics: {scan: scan_front}"));
    let ent = e.ctx.entities.get("scanner").unwrap();
    assert!(!ent.present && !ent.declared_present);
    let body = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_BODY, &ent.body).unwrap();
    let geoms: Vec<usize> = (0..e.ctx.model().ffi().ngeom as usize)
        .filter(|&g| e.ctx.model().geom_bodyid()[g] as usize == body)
        .collect();
    assert!(!geoms.is_empty());
    for g in geoms {
        assert_eq!(e.ctx.model().geom_group()[g], roqsim::mujoco::raycast::ABSENT_GEOM_GROUP as i32);
    }
    let scan = e.ctx.interface.all().iter().find(|ep| ep.name == "scan").expect("the lidar's scan");
    assert_eq!(scan.get_hint("ros2", "topic"), Some("scan_front"));
    // the capture component's own `topics:` wins
    let e = engine(&LIDAR_MOUNT.replace("KEYS", ", topics: {scan: scan_front}}\n    components:\n      - lidar: {topics: {scan: mine}"));
    let scan = e.ctx.interface.all().iter().find(|ep| ep.name == "scan").unwrap();
    assert_eq!(scan.get_hint("ros2", "topic"), Some("mine"));
}

#[test]
fn spawn_sensor_present_and_topics_refusals() {
    let nested = "sim: {timestep: 0.002}
components:
  - spawn_robot: {model: turtlebot4}
    name: robot
    components:
      - spawn_sensor: {model: rplidar_a1, parent_frame: shell_link, present: false}
        name: lidar2
";
    assert_contains(&refusal(nested), "present: a mount nested under `robot` is present when its carrier is: remove `present:` (declare it on the carrier's spawn entry)");
    let r = refusal(&LIDAR_MOUNT.replace("KEYS", ", default_plugins: false, topics: {scan: x}"));
    assert_contains(&r, "topics: renames the capture plugin's endpoints, but `default_plugins: false` brings none; rename them on the capture component you declare instead");
    let r = refusal(&LIDAR_MOUNT.replace("KEYS", ", topics: {points: x}"));
    assert_contains(&r, "topics.points");
}
