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

/// The door's measured openness as the plugin computes it (hinge angle / max_angle 120 deg).
fn openness(e: &Engine) -> f64 {
    let j = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_JOINT, "door_1_hinge").unwrap();
    e.ctx.data().qpos()[e.ctx.model().jnt_qposadr()[j] as usize] / 120f64.to_radians()
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
    let at = openness(&e);
    e.step().unwrap();
    let o1 = g1.outcome.try_recv().expect("the first goal ended");
    assert_eq!(
        (o1.status, o1.error_string.as_str()),
        (GoalStatus::Canceled, "preempted by a newer door goal")
    );
    // a canceled goal's result is the door as it was, not zeros
    let (pos, _, stalled, reached) = result(&o1);
    eprintln!("preempted at openness {pos:.4}");
    assert!(at > 0.01, "the door had started opening: {at}");
    assert_eq!((pos, stalled, reached), (at, false, false));
    // a cmd preempts
    secs(&mut e, 0.2);
    let cmd = endpoint_in(&e, "door_1", "cmd");
    e.ctx.interface.deliver(cmd, Payload::Float64(0.3));
    e.step().unwrap();
    let o2 = g2.outcome.try_recv().expect("the second goal ended");
    assert_eq!(
        (o2.status, o2.error_string.as_str()),
        (GoalStatus::Canceled, "preempted by a command on `cmd`")
    );
    // a cancel holds the measured angle
    let g3 = send_goal(&mut e, 1.0, 0.0);
    secs(&mut e, 0.5);
    g3.cancel.store(true, Ordering::SeqCst);
    let before = openness(&e);
    e.step().unwrap();
    let o3 = g3.outcome.try_recv().expect("canceled");
    assert_eq!(
        (o3.status, o3.error_string.as_str()),
        (GoalStatus::Canceled, "canceled by the caller; holding the measured angle")
    );
    assert_eq!(result(&o3).0, before, "the result reports the openness it held");
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
        let before = openness(&e);
        e.step().unwrap();
        let o = g.outcome.try_recv().expect("refused at once");
        assert_eq!((o.status, o.error_string.as_str()), (GoalStatus::Aborted, want));
        // a refused goal's result is the door as it is (held open by the canceled goal)
        assert!(before > 0.1, "openness {before}");
        assert_eq!(result(&o).0, before);
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
fn a_door_deleted_while_a_goal_runs_aborts_it_and_holds() {
    let mut e = engine(&door_world("", ""));
    let g = send_goal(&mut e, 1.0, 10.0);
    secs(&mut e, 1.5);
    assert!(g.outcome.try_recv().is_err(), "still running");
    assert_eq!(force_range(&e), [-10.0, 10.0]);
    roqsim::engine::presence::set_present(&mut e.ctx, "door_1", false).unwrap();
    let at = openness(&e);
    e.step().unwrap();
    let o = g.outcome.try_recv().expect("the goal ended when the door was deleted");
    let (pos, _effort, stalled, reached) = result(&o);
    eprintln!("deleted mid-goal: `{}`, result openness {pos:.4}", o.error_string);
    assert_eq!(o.status, GoalStatus::Aborted);
    assert_eq!(
        o.error_string,
        format!("door `door_1` was deleted (DeleteEntity) while the goal ran: aborted at openness {at:.3}; SpawnEntity it before commanding it again")
    );
    assert!(at > 0.05 && at < 0.95, "mid-swing: {at}");
    assert_eq!((pos, stalled, reached), (at, false, false));
    assert_eq!(force_range(&e), [-30.0, 30.0], "the goal's max_effort is released");
    // spawned again, the door holds where it was instead of resuming the aborted goal
    roqsim::engine::presence::set_present(&mut e.ctx, "door_1", true).unwrap();
    secs(&mut e, 2.0);
    eprintln!("respawned: openness {:.4} (was {at:.4})", openness(&e));
    assert!((openness(&e) - at).abs() < 0.02, "held {at}, now {}", openness(&e));
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
    assert_contains(
        &r,
        "topics.opening: no endpoint role `opening` here; the roles are: cmd, state, door",
    );
    let r = refusal(&door_world(", topics: {cmd: same, state: same}", ""));
    assert_contains(&r, "topics.state: renamed to `same`, as is `topics.cmd`: one topic would carry two roles' messages (a state read back as a command); give each role its own topic");
    let r = refusal(&door_world(", controllable: false, topics: {cmd: x}", ""));
    assert_contains(&r, "topics: renames endpoints this door does not have: a passive door (`controllable: false`) or a cased opening (`leaf: false`) serves none; remove `topics:`");
}

// ------------------------------------------------------------------------------------ conveyor

/// A user's belt: a frame, and a 3 m slab on the `belt_slide` joint, top at 0.5 m.
const USER_BELT: &str = r#"<mujoco model="my_belt">
  <worldbody>
    <body name="frame">
      <geom name="legs" type="box" size="1.4 0.25 0.23" pos="0 0 0.23" rgba="0.3 0.3 0.3 1"/>
      <body name="slab" pos="0 0 0.47">
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
    let slab = m
        .name_to_id(MjtObjBase::mjOBJ_GEOM, "belt_slab")
        .expect("the user's slab, prefixed by the stem");
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
    // the slab rests on the frame's legs (bottom 0.46 m = their top): the model's other bodies
    // are excluded from its contacts, so the frame does not hold the belt back
    assert!((z - 0.58).abs() < 0.005, "the parcel rides the slab top (0.48 m): centre at {z}");
    // without `friction:` the slab keeps its own
    let e = engine_in(&belt_world(", model: my_belt.xml"), dir.path());
    let slab = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_GEOM, "belt_slab").unwrap();
    assert_eq!(e.ctx.model().geom_friction()[slab][0], 0.1);
}

#[test]
fn conveyor_model_refusals() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "my_belt.xml", USER_BELT);
    write(
        dir.path(),
        "no_slide.xml",
        &USER_BELT.replace("belt_slide\" type=\"slide", "roller\" type=\"hinge"),
    );
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
    let r = refusal(
        "components:\n  - conveyor: {present: false, package_pose: [0, 0, 1.0, 1, 0, 0, 0]}\n",
    );
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
        assert_eq!(
            e.ctx.model().geom_group()[g],
            roqsim::mujoco::raycast::ABSENT_GEOM_GROUP as i32
        );
    }
    let scan = e.ctx.interface.all().iter().find(|ep| ep.name == "scan").expect("the lidar's scan");
    assert_eq!(scan.get_hint("ros2", "topic"), Some("scan_front"));
    // the capture component's own `topics:` wins
    let e = engine(&LIDAR_MOUNT.replace(
        "KEYS",
        ", topics: {scan: scan_front}}\n    components:\n      - lidar: {topics: {scan: mine}",
    ));
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

// ---------------------------------------------------------------------------- floorplan mesh

/// The 12 outward-wound triangles of an axis-aligned cuboid.
fn cuboid(lo: [f64; 3], hi: [f64; 3]) -> Vec<[[f64; 3]; 3]> {
    let v = |i: usize| {
        [
            if i & 1 == 0 { lo[0] } else { hi[0] },
            if i & 2 == 0 { lo[1] } else { hi[1] },
            if i & 4 == 0 { lo[2] } else { hi[2] },
        ]
    };
    // faces as quads (counter-clockwise seen from outside)
    let quads =
        [[0, 2, 3, 1], [4, 5, 7, 6], [0, 1, 5, 4], [2, 6, 7, 3], [0, 4, 6, 2], [1, 3, 7, 5]];
    quads.iter().flat_map(|q| [[v(q[0]), v(q[1]), v(q[2])], [v(q[0]), v(q[2]), v(q[3])]]).collect()
}

/// A binary STL (what MuJoCo reads) of `tris`.
fn stl(tris: &[[[f64; 3]; 3]]) -> Vec<u8> {
    let mut b = vec![0u8; 80];
    b.extend((tris.len() as u32).to_le_bytes());
    for t in tris {
        b.extend([0f32; 3].iter().flat_map(|x| x.to_le_bytes()));
        for p in t {
            b.extend(p.iter().flat_map(|x| (*x as f32).to_le_bytes()));
        }
        b.extend([0u8; 2]);
    }
    b
}

/// An L of two walls 2.5 m high: A along x (0..4, 0..0.2) with a 1 m doorway (x 1.5..2.5) under
/// a lintel from 2.0 m up, B along y (0..0.2, 0.2..3).
fn l_walls() -> Vec<u8> {
    let mut t = cuboid([0.0, 0.0, 0.0], [1.5, 0.2, 2.5]);
    t.extend(cuboid([1.5, 0.0, 2.0], [2.5, 0.2, 2.5]));
    t.extend(cuboid([2.5, 0.0, 0.0], [4.0, 0.2, 2.5]));
    t.extend(cuboid([0.0, 0.2, 0.0], [0.2, 3.0, 2.5]));
    stl(&t)
}

fn geom_box(e: &Engine, name: &str) -> ([f64; 3], [f64; 3]) {
    let g = e
        .ctx
        .model()
        .name_to_id(MjtObjBase::mjOBJ_GEOM, name)
        .unwrap_or_else(|| panic!("no geom {name}"));
    (e.ctx.data().geom_xpos()[g], e.ctx.model().geom_size()[g])
}

#[test]
fn a_mesh_floorplan_collides_through_its_derived_boxes_and_rays_hit_the_mesh() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.stl"), l_walls()).unwrap();
    let world = "sim: {timestep: 0.002}
components:
  - floorplan: {mesh: plan.stl}
  - box: {pose: {position: {x: 1.0, y: 0.1, z: 3.0}}, size: [0.2, 0.2, 0.2], motion: physics, mass: 1.0}
    name: on_wall
  - box: {pose: {position: {x: 2.0, y: 0.1, z: 3.0}}, size: [0.2, 0.2, 0.2], motion: physics, mass: 1.0}
    name: on_lintel
  - box: {pose: {position: {x: 2.0, y: 0.1, z: 1.0}}, size: [0.2, 0.2, 0.2], motion: physics, mass: 1.0}
    name: in_doorway
  - box: {pose: {position: {x: 2.0, y: 1.5, z: 0.5}}, size: [0.2, 0.2, 0.2], motion: physics, mass: 1.0}
    name: on_floor
";
    let mut e = engine_in(world, dir.path());
    let m = e.ctx.model();
    let mesh = m.name_to_id(MjtObjBase::mjOBJ_GEOM, "floorplan_mesh").unwrap();
    assert_eq!(
        (m.geom_contype()[mesh], m.geom_conaffinity()[mesh]),
        (0, 0),
        "the mesh draws, boxes collide"
    );
    let boxes: Vec<([f64; 3], [f64; 3])> =
        (0..4).map(|k| geom_box(&e, &format!("floorplan_collider_{k}"))).collect();
    eprintln!("colliders: {boxes:?}");
    assert!(m.name_to_id(MjtObjBase::mjOBJ_GEOM, "floorplan_collider_4").is_none(), "four boxes");
    // MuJoCo keeps mesh vertices as f32: within 1e-6 m
    let near = |a: [f64; 3], b: [f64; 3]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6);
    for w in [
        ([0.75, 0.1, 1.25], [0.75, 0.1, 1.25]), // wall A left of the doorway
        ([2.0, 0.1, 2.25], [0.5, 0.1, 0.25]),   // the lintel: the doorway below stays open
        ([3.25, 0.1, 1.25], [0.75, 0.1, 1.25]), // wall A right of it
        ([0.1, 1.6, 1.25], [0.1, 1.4, 1.25]),   // wall B
    ] {
        assert!(
            boxes.iter().any(|b| near(b.0, w.0) && near(b.1, w.1)),
            "no collider {w:?} in {boxes:?}"
        );
    }
    // a ray meets the mesh's face, not a collider (they are invisible to rays); one through the
    // doorway passes (nothing behind it within 10 m)
    let mut rays = roqsim::mujoco::raycast::RayBatch::new(1);
    rays.set_dir(0, [0.0, -1.0, 0.0]);
    rays.cast(e.ctx.data_mut(), [1.0, 2.0, 1.0], None, None, true, 10.0);
    eprintln!("ray: {} m, geom {}", rays.dist()[0], rays.geom()[0]);
    assert!((rays.dist()[0] - 1.8).abs() < 1e-6 && rays.geom()[0] == mesh as i32);
    rays.cast(e.ctx.data_mut(), [2.0, 2.0, 1.6], None, None, true, 10.0); // above the box in it
    assert_eq!(
        rays.geom()[0],
        -1,
        "the doorway is open to rays: hit {} at {}",
        rays.geom()[0],
        rays.dist()[0]
    );
    secs(&mut e, 2.0);
    let z = |n: &str| body_pos(&e, n)[2];
    let (top, lintel, floor, door) = (z("on_wall"), z("on_lintel"), z("on_floor"), z("in_doorway"));
    eprintln!(
        "boxes at z: wall top {top:.4}, lintel {lintel:.4}, floor {floor:.4}, doorway {door:.4}"
    );
    assert!((top - 2.6).abs() < 0.005, "rests on the 2.5 m wall top: {top}");
    assert!((lintel - 2.6).abs() < 0.005, "rests on the lintel's top: {lintel}");
    assert!((floor - 0.1).abs() < 0.005, "rests on the floor: {floor}");
    assert!((door - 0.1).abs() < 0.005, "falls through the doorway to the floor: {door}");
}

#[test]
fn floorplan_mesh_refusals() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.stl"), l_walls()).unwrap();
    std::fs::write(dir.path().join("slab.stl"), stl(&cuboid([0.0, 0.0, -0.02], [5.0, 5.0, 0.0])))
        .unwrap();
    write(dir.path(), "plan.dae", "x");
    let r = refusal_in("components:\n  - floorplan: {mesh: plan.stl, height: 3.0}\n", dir.path());
    assert_contains(&r, "height: shapes wall segments; a `mesh:` building has its own walls: remove it (the light's height is `light.height`)");
    let r = refusal_in("components:\n  - floorplan: {mesh: plan.dae}\n", dir.path());
    assert_contains(
        &r,
        "mesh: `plan.dae`: a floorplan mesh is an .stl or .obj file (what MuJoCo loads as a mesh)",
    );
    let r = refusal_in("components:\n  - floorplan: {mesh: none.stl}\n", dir.path());
    assert_contains(
        &r,
        &format!("mesh: `none.stl`: no file `{}`", dir.path().join("none.stl").display()),
    );
    let r = refusal_in("components:\n  - floorplan: {mesh: slab.stl}\n", dir.path());
    assert_contains(&r, "has no wall tops (upward faces wholly above 0.05 m), so no colliders can be derived from it: give closed walls (an extruded plan), or the walls as `lines:`");
    // a wall 10 mm thin: thinner than a collider cell, so no box (the floor's extent came out NaN)
    std::fs::write(dir.path().join("thin.stl"), stl(&cuboid([0.0, 0.0, 0.0], [4.0, 0.01, 2.5])))
        .unwrap();
    let r = refusal_in("components:\n  - floorplan: {mesh: thin.stl}\n", dir.path());
    assert_contains(&r, "gives no collider: every wall is thinner than the 0.025 m collider cell, so nothing would stop a robot: model the walls at least 0.025 m thick, or give them as `lines:`");
    let r = refusal_in(
        "components:\n  - floorplan: {mesh: plan.stl, mesh_scale: [1, 0, 1]}\n",
        dir.path(),
    );
    assert_contains(&r, "mesh_scale: every factor must be > 0, got [1.0, 0.0, 1.0]");
    let r = refusal_in("components:\n  - floorplan: {lines: [{id: 0, x0_m: 0, y0_m: 0, x1_m: 1, y1_m: 0}], mesh_pos: [1, 0, 0]}\n", dir.path());
    assert_contains(&r, "mesh_pos: applies to a `mesh:` source only; remove it");
}

// ------------------------------------------------------------------------- floorplan textures

/// A solid `w`×`h` RGB PNG.
fn png(dir: &std::path::Path, name: &str, rgb: [u8; 3], w: u32, h: u32) -> std::path::PathBuf {
    write_png(&dir.join(name), w, h, |_, _| rgb)
}

const ROOM: &str = "lines: [{id: 0, x0_m: 0, y0_m: 0, x1_m: 6, y1_m: 0}, {id: 1, x0_m: 6, y0_m: 0, x1_m: 6, y1_m: 4}]";

#[test]
fn floor_and_wall_textures_load_tile_and_draw() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("grass")).unwrap();
    png(&dir.path().join("grass"), "grass.png", [40, 190, 60], 4, 4);
    write(
        &dir.path().join("grass"),
        "manifest.yaml",
        "reflectance: 0.35\nphysical_size: 0.5\nlicense: CC0\n",
    );
    png(dir.path(), "brick.png", [50, 60, 200], 8, 8);
    let world = format!(
        "components:\n  - floorplan: {{{ROOM}, floor: {{texture: grass/grass.png}}, wall: {{texture: brick.png, physical_size: [2.0, 1.0]}}}}\n"
    );
    let mut e = engine_in(&world, dir.path());
    let m = e.ctx.model();
    let mat = |n: &str| m.name_to_id(MjtObjBase::mjOBJ_MATERIAL, n).unwrap();
    let tex = |n: &str| m.name_to_id(MjtObjBase::mjOBJ_TEXTURE, n).unwrap();
    let (fm, wm) = (mat("floorplan_floor_mat"), mat("floorplan_wall_mat"));
    // the manifest's surface values where the world states none; the world's where it does
    assert_eq!(m.mat_reflectance()[fm], 0.35);
    assert_eq!(m.mat_texrepeat()[fm], [2.0, 2.0]);
    assert_eq!(m.mat_reflectance()[wm], 0.0);
    assert_eq!(m.mat_texrepeat()[wm], [0.5, 1.0]);
    // the PNG's pixels are the texture's
    let ft = tex("floorplan_floor_tex");
    let (adr, w, h) = (m.tex_adr()[ft] as usize, m.tex_width()[ft], m.tex_height()[ft]);
    assert_eq!((w, h, m.tex_nchannel()[ft]), (4, 4, 3));
    assert!(m.tex_data()[adr..adr + 48].chunks(3).all(|c| c == [40, 190, 60]));
    // drawn: the floor is green where the default checker is grey, the wall blue
    let mut r = roqsim::render::RenderService::default();
    let down = roqsim::render::RenderRequest::new(
        roqsim::render::View::Free {
            lookat: [3.0, 2.0, 0.0],
            distance: 2.0,
            azimuth: 90.0,
            elevation: -89.0,
        },
        32,
        24,
    );
    let f = r.render(e.ctx.data_mut(), &down).unwrap();
    let c = f.rgb_at(16, 12).unwrap();
    let side = roqsim::render::RenderRequest::new(
        roqsim::render::View::Free {
            lookat: [3.0, 0.0, 1.2],
            distance: 1.5,
            azimuth: 90.0,
            elevation: 0.0,
        },
        32,
        24,
    );
    let wpx = r.render(e.ctx.data_mut(), &side).unwrap().rgb_at(16, 12).unwrap();
    eprintln!("floor pixel {c:?}, wall pixel {wpx:?}");
    assert!(c[1] > 2 * c[0] && c[1] > 2 * c[2], "the floor is green: {c:?}");
    assert!(wpx[2] > 2 * wpx[0] && wpx[2] > 2 * wpx[1], "the wall is blue: {wpx:?}");
}

/// An 8×8 PNG whose left half (u < 0.5) is `left` and right half `right`.
fn png_halves(dir: &std::path::Path, name: &str, left: [u8; 3], right: [u8; 3]) {
    write_png(&dir.join(name), 8, 8, |x, _| if x < 4 { left } else { right });
}

/// A 4 m × 0.2 m × 2.5 m wall as an OBJ whose texture coordinates are metres / 4 on every face
/// (u along x on the long faces and the top, along y on the ends; v along z, or y on the top).
fn uv_wall_obj() -> String {
    let faces: [[[f64; 3]; 4]; 6] = [
        [[0.0, 0.0, 0.0], [4.0, 0.0, 0.0], [4.0, 0.0, 2.5], [0.0, 0.0, 2.5]], // front, -y
        [[4.0, 0.2, 0.0], [0.0, 0.2, 0.0], [0.0, 0.2, 2.5], [4.0, 0.2, 2.5]], // back, +y
        [[0.0, 0.2, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 2.5], [0.0, 0.2, 2.5]], // -x
        [[4.0, 0.0, 0.0], [4.0, 0.2, 0.0], [4.0, 0.2, 2.5], [4.0, 0.0, 2.5]], // +x
        [[0.0, 0.0, 2.5], [4.0, 0.0, 2.5], [4.0, 0.2, 2.5], [0.0, 0.2, 2.5]], // top
        [[0.0, 0.0, 0.0], [0.0, 0.2, 0.0], [4.0, 0.2, 0.0], [4.0, 0.0, 0.0]], // bottom
    ];
    let mut o = String::new();
    for (k, f) in faces.iter().enumerate() {
        for v in f {
            o.push_str(&format!("v {} {} {}\n", v[0], v[1], v[2]));
            let (u, w) = match k {
                0 | 1 => (v[0], v[2]),
                2 | 3 => (v[1], v[2]),
                _ => (v[0], v[1]),
            };
            o.push_str(&format!("vt {} {}\n", u / 4.0, w / 4.0));
        }
        let b = 4 * k + 1;
        o.push_str(&format!(
            "f {b}/{b} {}/{} {}/{} {}/{}\n",
            b + 1,
            b + 1,
            b + 2,
            b + 2,
            b + 3,
            b + 3
        ));
    }
    o
}

/// A wall mesh with its own UVs (.obj) shows its PNG texture tiled every `physical_size` metres,
/// drawn by the render service (MuJoCo's uniform tiling would smear a UV'd mesh's texture).
#[test]
fn a_uv_mapped_obj_wall_shows_its_texture_tiled_at_its_physical_size() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "wall.obj", &uv_wall_obj());
    png_halves(dir.path(), "halves.png", [220, 30, 30], [30, 30, 220]);
    let world = "components:\n  - floorplan: {mesh: wall.obj, wall: {texture: halves.png, physical_size: 2.0}}\n";
    let mut e = engine_in(world, dir.path());
    let m = e.ctx.model();
    let mesh = m.name_to_id(MjtObjBase::mjOBJ_MESH, "floorplan_mesh").unwrap();
    assert!(m.mesh_texcoordnum()[mesh] > 0, "the OBJ's texture coordinates reach the model");
    let wm = m.name_to_id(MjtObjBase::mjOBJ_MATERIAL, "floorplan_wall_mat").unwrap();
    // 4 m per UV unit, a 2 m tile: the UVs are repeated twice
    assert_eq!(m.mat_texrepeat()[wm], [2.0, 2.0]);
    assert!(!m.mat_texuniform()[wm], "a UV-mapped mesh keeps its own mapping");
    let mut r = roqsim::render::RenderService::default();
    let front = roqsim::render::RenderRequest::new(
        roqsim::render::View::Free {
            lookat: [2.0, 0.0, 1.25],
            distance: 3.0,
            azimuth: 90.0,
            elevation: 0.0,
        },
        64,
        32,
    );
    let f = r.render(e.ctx.data_mut(), &front).unwrap();
    // fovy 45°: 38.6 px per unit at depth 1, so x = 0.5, 1.5, 2.5, 3.5 m at depth 3 are 12.9 px apart
    let cols = [13, 26, 38, 51];
    let px: Vec<[u8; 3]> = cols.iter().map(|&u| f.rgb_at(u, 16).unwrap()).collect();
    eprintln!("wall pixels at x = 0.5, 1.5, 2.5, 3.5 m (either order): {px:?}");
    let red = |c: &[u8; 3]| c[0] > 2 * c[2].max(c[1]);
    let blue = |c: &[u8; 3]| c[2] > 2 * c[0].max(c[1]);
    // two tiles of a red|blue texture over the 4 m wall: the colours alternate metre by metre
    assert!(
        (red(&px[0]) && blue(&px[1]) && red(&px[2]) && blue(&px[3]))
            || (blue(&px[0]) && red(&px[1]) && blue(&px[2]) && red(&px[3])),
        "{px:?}"
    );
}

#[test]
fn texture_refusals() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "photo.jpg", "x");
    std::fs::create_dir_all(dir.path().join("bad")).unwrap();
    png(&dir.path().join("bad"), "bad.png", [1, 2, 3], 2, 2);
    write(&dir.path().join("bad"), "manifest.yaml", "reflectance: 0.3\nroughness: 0.5\n");
    let r = refusal_in(
        &format!("components:\n  - floorplan: {{{ROOM}, floor: {{texture: photo.jpg}}}}\n"),
        dir.path(),
    );
    assert_contains(&r, &format!("floor.texture: `photo.jpg` is `{}`: MuJoCo loads PNG textures only; convert it to a .png", dir.path().join("photo.jpg").display()));
    let r = refusal_in(
        &format!("components:\n  - floorplan: {{{ROOM}, wall: {{texture: missing.png}}}}\n"),
        dir.path(),
    );
    assert_contains(
        &r,
        &format!(
            "wall.texture: `missing.png`: no file `{}`",
            dir.path().join("missing.png").display()
        ),
    );
    let r = refusal_in(
        &format!("components:\n  - floorplan: {{{ROOM}, wall: {{texture: bad/bad.png}}}}\n"),
        dir.path(),
    );
    assert_contains(&r, "manifest.yaml`: unknown field `roughness`");
    let r = refusal_in(&format!("components:\n  - floorplan: {{{ROOM}, floor: {{texture: no_such_pkg_here:Concrete030}}}}\n"), dir.path());
    assert_contains(&r, "floor.texture: `no_such_pkg_here:Concrete030`: package `no_such_pkg_here` not found on AMENT_PREFIX_PATH or ROS_PACKAGE_PATH; source the workspace that installs it, or give a PNG path");
}

#[test]
fn scenes_inputs_list_the_mesh_the_textures_with_their_manifest_and_a_belt_model() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.stl"), l_walls()).unwrap();
    std::fs::create_dir_all(dir.path().join("grass")).unwrap();
    png(&dir.path().join("grass"), "grass.png", [40, 190, 60], 4, 4);
    write(&dir.path().join("grass"), "manifest.yaml", "reflectance: 0.35\n");
    png(dir.path(), "brick.png", [50, 60, 200], 8, 8);
    write(dir.path(), "my_belt.xml", USER_BELT);
    let w = write(
        dir.path(),
        "w.yaml",
        "components:\n  - floorplan: {mesh: plan.stl, floor: {texture: grass/grass.png}, wall: {texture: brick.png}}\n  - conveyor: {model: my_belt.xml, pos: [2.0, 1.5, 0.0]}\n",
    );
    let got = roqsim::introspect::inputs::world_inputs(&w, &Default::default());
    let rel: Vec<String> = got
        .inputs
        .iter()
        .map(|p| p.strip_prefix(dir.path().canonicalize().unwrap()).unwrap().display().to_string())
        .collect();
    eprintln!("inputs {rel:?}, gave up {:?}", got.gave_up);
    for f in
        ["w.yaml", "plan.stl", "grass/grass.png", "grass/manifest.yaml", "brick.png", "my_belt.xml"]
    {
        assert!(rel.iter().any(|r| r == f), "{f} missing from {rel:?}");
    }
    assert!(got.gave_up.is_empty(), "{:?}", got.gave_up);
}
