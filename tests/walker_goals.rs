//! `walker` goals and getting unstuck (ROS-free): `action_name` renames the goal actions, a
//! goal's yaw is faced on arrival, and `recovery` backs a walker out of a spot where giving way
//! holds it, then gives the target up. Measured poses, counts and exact refusal texts.

use mujoco_rs::prelude::MjtObjBase;
use roqsim::context::payload::{ActionCall, ActionOutcome, GoalStatus, NavGoal, NavPose, Payload};
use roqsim::plugins::people::crowd::{Crowd, CROWD_KEY};
use roqsim::Engine;

mod common;
use common::*;

fn walker(cfg: &str) -> String {
    components_world(&format!("  - walker: {cfg}\n    name: w\n"))
}

/// The walker's mocap (x, y, yaw).
fn pose(e: &Engine) -> [f64; 3] {
    let m = e.ctx.model();
    let id = m.body_mocapid()[m.name_to_id(MjtObjBase::mjOBJ_BODY, "w").unwrap()] as usize;
    let (p, q) = (e.ctx.data().mocap_pos()[id], e.ctx.data().mocap_quat()[id]);
    [p[0], p[1], roqsim::math::yaw_of(&q)]
}

/// Post a one-pose goal at (x, y, yaw) on the endpoint `name`.
fn goal(e: &mut Engine, name: &str, p: [f64; 3]) -> crossbeam_channel::Receiver<ActionOutcome> {
    let (ftx, _frx) = crossbeam_channel::unbounded();
    let (otx, orx) = crossbeam_channel::unbounded();
    let (s, c) = (p[2] / 2.0).sin_cos();
    let g = NavGoal {
        poses: vec![NavPose {
            frame_id: "map".into(),
            position: [p[0], p[1], 0.0],
            orientation: [0.0, 0.0, s, c],
        }],
    };
    let call = ActionCall {
        goal: Box::new(Payload::NavGoal(g)),
        feedback: ftx,
        outcome: otx,
        cancel: Default::default(),
    };
    let ep = endpoint(e, name);
    e.ctx.interface.deliver(ep, Payload::Goal(call));
    orx
}

fn wait(
    e: &mut Engine,
    out: &crossbeam_channel::Receiver<ActionOutcome>,
    secs: f64,
) -> ActionOutcome {
    for _ in 0..(secs / e.dt()) as u64 {
        e.step().unwrap();
        if let Ok(o) = out.try_recv() {
            return o;
        }
    }
    panic!("no outcome within {secs} s");
}

#[test]
fn a_walker_faces_the_goal_yaw_on_arrival() {
    let mut e = engine(&walker("{pos: [0.0, 0.0]}"));
    let out = goal(&mut e, "navigate_to_pose", [2.0, 0.0, 2.5]);
    secs(&mut e, 0.5);
    let walking = pose(&e);
    assert!(walking[2].abs() < 1e-9, "faces its travel (+x) while walking: {walking:?}");
    let o = wait(&mut e, &out, 10.0);
    assert_eq!(o.status, GoalStatus::Succeeded, "{o:?}");
    e.step().unwrap();
    let p = pose(&e);
    assert!((p[2] - 2.5).abs() < 1e-9, "faces the goal's yaw 2.5 on arrival: {p:?}");
    assert!((p[0] - 2.0).hypot(p[1]) <= 0.25, "{p:?}");
}

#[test]
fn action_name_renames_the_goal_actions() {
    let topic = |e: &Engine, name: &str| {
        e.ctx.interface.all()[endpoint(e, name)].get_hint("ros2", "topic").map(str::to_string)
    };
    let e = engine(&walker("{pos: [0, 0], action_name: visitor/go}"));
    assert_eq!(topic(&e, "navigate_through_poses").as_deref(), Some("visitor/go"));
    assert_eq!(topic(&e, "navigate_to_pose").as_deref(), Some("w/navigate_to_pose"));
    let mut e = engine(&walker(
        "{pos: [0, 0], action_name: {navigate_to_pose: goto, navigate_through_poses: tour}}",
    ));
    assert_eq!(topic(&e, "navigate_to_pose").as_deref(), Some("goto"));
    assert_eq!(topic(&e, "navigate_through_poses").as_deref(), Some("tour"));
    // the renamed action still takes goals
    let out = goal(&mut e, "navigate_to_pose", [1.0, 0.0, 0.0]);
    assert_eq!(wait(&mut e, &out, 5.0).status, GoalStatus::Succeeded);
    let r = refusal(&walker("{pos: [0, 0], action_name: /abs/go}"));
    assert_has(&r, &["action_name.navigate_through_poses: `/abs/go` is absolute; an action name here is relative (placed in the walker's namespace): drop the leading `/`"]);
    let r = refusal(&walker(
        "{pos: [0, 0], action_name: {navigate_to_pose: a, navigate_through_poses: a}}",
    ));
    assert_has(&r, &["action_name: navigate_to_pose and navigate_through_poses are two actions and need two names"]);
    let r = refusal(&walker("{pos: [0, 0], action_name: {goto: a}}"));
    assert_has(&r, &["action_name takes a relative action name (the NavigateThroughPoses action's) or a map {navigate_to_pose: name, navigate_through_poses: name}", "unknown field `goto`"]);
    let r = refusal(&walker("{pos: [0, 0], action_name: 'bad name'}"));
    assert_has(&r, &["action_name.navigate_through_poses: `bad name` is not a valid ROS topic"]);
    let r = refusal(&walker("{pos: [0, 0], goal_endpoint: false, action_name: go}"));
    assert_has(&r, &["action_name: `action_name` plans the path to a goal, and this walker has `goal_endpoint: false`"]);
}

/// A robot standing on the walker's second waypoint (2, 0); the walker patrols
/// (-2, 0) → (2, 0) → (-2, 1) once.
fn blocked(recovery: &str) -> Engine {
    engine(&components_world(&format!(
        "  - spawn_robot: {{model: turtlebot4, pose: {{position: {{x: 2.0, y: 0.0}}}}}}
    name: robot
  - walker: {{waypoints: [[-2, 0], [2, 0], [-2, 1]], loop: false, speed: 1.0, avoidance: true, robot_radius: 0.25, goal_endpoint: false{recovery}}}
    name: w
"
    )))
}

/// Run `secs`; the closest the walker came to the robot, the most recoveries seen, targets given up.
fn trapped(e: &mut Engine, secs: f64) -> (f64, u32, u32) {
    let crowd = e.ctx.blackboard.get::<Crowd>(CROWD_KEY).unwrap().clone();
    let (mut closest, mut most) = (f64::INFINITY, 0);
    for _ in 0..(secs / e.dt()) as u64 {
        e.step().unwrap();
        let p = pose(e);
        closest = closest.min((p[0] - 2.0).hypot(p[1]));
        most = most.max(crowd.state("w").unwrap().recoveries);
    }
    (closest, most, crowd.state("w").unwrap().gave_up)
}

#[test]
fn recovery_backs_out_then_gives_up_a_waypoint_a_robot_stands_on() {
    let mut e = blocked(", recovery: {stuck_time: 1.0, backup_time: 0.5, max_recovery: 2}");
    let (closest, most, gave_up) = trapped(&mut e, 30.0);
    let p = pose(&e);
    eprintln!("recovery: closest {closest:.4} m, {most} recoveries, gave up {gave_up}, at {p:?}");
    assert!(closest >= 0.26 + 0.25 - 0.01, "kept clear of the robot: {closest}");
    assert_eq!((most, gave_up), (2, 1), "two recoveries, then the waypoint was given up");
    assert!((p[0] + 2.0).hypot(p[1] - 1.0) <= 0.25, "walked on to (-2, 1): {p:?}");
    // without recovery it never gets there
    let mut e = blocked("");
    let (closest, most, gave_up) = trapped(&mut e, 30.0);
    let p = pose(&e);
    eprintln!("no recovery: closest {closest:.4} m, at {p:?}");
    assert_eq!((most, gave_up), (0, 0));
    assert!((p[0] - 2.0).hypot(p[1]) < 1.0, "still at the robot: {p:?}");
    let r = refusal(&walker("{waypoints: [[0, 0], [2, 0]], recovery: {stuck_time: 1.0}}"));
    assert_has(&r, &["recovery: gets a walker unstuck when giving way holds it in place, and this one has `avoidance: false` (nothing holds it: it walks its route): set `avoidance: true` or drop the key"]);
    let r = refusal(&walker("{waypoints: [[0, 0], [2, 0]], avoidance: true, recovery: {stuck_time: 0, backup_time: -1}}"));
    assert_has(
        &r,
        &[
            "recovery.stuck_time: must be in (0, 86400] s, got 0",
            "recovery.backup_time: must be in [0, 60] s, got -1",
        ],
    );
    // a wrong type in one key of the block does not hide the others' problems
    let r = refusal(&walker("{waypoints: [[0, 0], [2, 0]], avoidance: true, recovery: {stuck_time: 0, backup_time: soon, max_recovery: -1}}"));
    assert_has(
        &r,
        &[
            "recovery.stuck_time: must be in (0, 86400] s, got 0",
            "recovery.backup_time: must be a number, got the string \"soon\"",
            "recovery.max_recovery: must be a whole number from 0 to 4294967295, got the integer -1",
        ],
    );
}
