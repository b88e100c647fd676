//! Helpers of the manipulation tests: the bundled ur5e's joints and rest stance, goals delivered
//! as a transport would (channels and a cancel flag), trajectories, joint and site readings, and
//! a vertical-tool inverse kinematics for placing the tool, and the pick of ur_pick's box
//! (descend onto it and close, lift).

use std::f64::consts::FRAC_PI_2;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crossbeam_channel::{unbounded, Receiver};
use mujoco_rs::prelude::MjtObjBase;
use roqsim::context::payload::{
    ActionCall, ActionOutcome, GoalStatus, GripperGoal, Payload, TrajectoryGoal, TrajectoryPoint,
};
use roqsim::Engine;

use super::{base, body_pos, dist3, endpoint};

pub fn world_file(name: &str) -> String {
    std::fs::read_to_string(base().join(name)).unwrap()
}

pub fn site(e: &Engine, name: &str) -> [f64; 3] {
    let id = e
        .ctx
        .model()
        .name_to_id(MjtObjBase::mjOBJ_SITE, name)
        .unwrap_or_else(|| panic!("no site {name}"));
    e.ctx.data().site_xpos()[id]
}

pub fn qadr(e: &Engine, joint: &str) -> (usize, usize) {
    let m = e.ctx.model();
    let j =
        m.name_to_id(MjtObjBase::mjOBJ_JOINT, joint).unwrap_or_else(|| panic!("no joint {joint}"));
    (m.jnt_qposadr()[j] as usize, m.jnt_dofadr()[j] as usize)
}

pub fn q(e: &Engine, joint: &str) -> f64 {
    e.ctx.data().qpos()[qadr(e, joint).0]
}

pub fn endpoint_topic(e: &Engine, topic: &str) -> usize {
    e.ctx
        .interface
        .all()
        .iter()
        .position(|ep| ep.get_hint("ros2", "topic") == Some(topic))
        .unwrap_or_else(|| panic!("no endpoint on {topic}"))
}

pub const JOINTS: [&str; 6] = [
    "shoulder_pan_joint",
    "shoulder_lift_joint",
    "elbow_joint",
    "wrist_1_joint",
    "wrist_2_joint",
    "wrist_3_joint",
];
/// The ur5e manifest's rest stance.
pub const REST: [f64; 6] = [0.0, -FRAC_PI_2, FRAC_PI_2, -FRAC_PI_2, -FRAC_PI_2, 0.0];

/// A goal as a transport delivers it: channels and a cancel flag.
pub struct Goal {
    pub outcome: Receiver<ActionOutcome>,
    pub feedback: Receiver<Payload>,
    pub cancel: Arc<AtomicBool>,
}

pub fn send(e: &mut Engine, ep: usize, goal: Payload) -> Goal {
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
pub fn wait(e: &mut Engine, g: &Goal, max: u64) -> (ActionOutcome, u64) {
    for i in 0..max {
        e.step().unwrap();
        if let Ok(o) = g.outcome.try_recv() {
            return (o, i + 1);
        }
    }
    panic!("no outcome within {max} steps");
}

pub fn traj(points: &[(f64, [f64; 6])]) -> TrajectoryGoal {
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

pub fn plus(d: [f64; 6]) -> [f64; 6] {
    let mut o = REST;
    for i in 0..6 {
        o[i] += d[i];
    }
    o
}

/// The bare arm on a pedestal, with `extra` keys in its spawn_arm config.
pub fn bare_arm(extra: &str) -> String {
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
pub fn ik_vertical(e: &Engine, prefix: &str, site_name: &str, target: [f64; 3]) -> [f64; 6] {
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

/// A straight vertical path of the pinch from where it is by `dz` (m) over `secs`, as joint
/// waypoints (a planner's Cartesian path, not a joint-space swing that would sweep the jaws
/// sideways into the box).
pub fn vertical_path(e: &Engine, dz: f64, secs: f64, n: usize) -> TrajectoryGoal {
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
pub fn descend_and_close(e: &mut Engine, max_effort: f64) -> ActionOutcome {
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

pub fn lift(e: &mut Engine, dz: f64) {
    let goal = vertical_path(e, dz, 1.0, 10);
    let ep = endpoint(e, "follow_joint_trajectory");
    let g = send(e, ep, Payload::Trajectory(goal));
    let (o, _) = wait(e, &g, 1500);
    assert_eq!(o.status, GoalStatus::Succeeded, "lift: {o:?}");
}
