//! What the movers that take nav2 goals (`navigator`, `walker`) share: the result codes they
//! answer with, a failure's code and reason, and the world-frame goals of a request (the frame
//! checked, the position bounded, the yaw read off the orientation).

use crate::context::payload::{ActionCall, ActionOutcome, GoalStatus, NavGoal, Payload};
use crate::context::{EndpointId, SimContext};
use crate::math::yaw_of;

/// The result codes a mover answers with: the ones Nav2's bt_navigator reports (Jazzy) for the
/// stage that failed — nav2_msgs ComputePathToPose's for planning, FollowPath's for following —
/// so a client written against Nav2 reads the same number for the same failure.
pub mod codes {
    /// Success, and endings that are no failure (preempted, reset, shutdown, canceled).
    pub const NONE: u16 = 0;
    /// ComputePathToPose UNKNOWN: a malformed goal, a grid that cannot be built.
    pub const UNKNOWN: u16 = 200;
    /// ComputePathToPose TF_ERROR: the goal's frame is not the world frame.
    pub const TF_ERROR: u16 = 202;
    /// ComputePathToPose GOAL_OUTSIDE_MAP.
    pub const GOAL_OUTSIDE_MAP: u16 = 204;
    /// ComputePathToPose START_OCCUPIED.
    pub const START_OCCUPIED: u16 = 205;
    /// ComputePathToPose GOAL_OCCUPIED.
    pub const GOAL_OCCUPIED: u16 = 206;
    /// ComputePathToPose NO_VALID_PATH.
    pub const NO_VALID_PATH: u16 = 208;
    /// FollowPath FAILED_TO_MAKE_PROGRESS: stuck after every recovery.
    pub const FAILED_TO_MAKE_PROGRESS: u16 = 105;
}

/// Why navigation failed: a [`codes`] value and the reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The result code.
    pub code: u16,
    /// The reason, for the caller.
    pub msg: String,
}

impl Failure {
    /// A planning failure, with the code Nav2's planner server gives it.
    pub fn plan(e: &crate::nav::astar::PlanError) -> Failure {
        use crate::nav::astar::PlanError as P;
        let code = match e {
            P::GoalOutside(_) => codes::GOAL_OUTSIDE_MAP,
            P::GoalBlocked(_) => codes::GOAL_OCCUPIED,
            P::StartBlocked(_) => codes::START_OCCUPIED,
            P::Unreachable(..) => codes::NO_VALID_PATH,
        };
        Failure { code, msg: e.to_string() }
    }
}

/// Frames a goal may be stated in: the simulator's world frame by its names.
const WORLD_FRAMES: [&str; 3] = ["", "map", "world"];

/// A goal position (m, world frame) and its yaw when the orientation names one (rad).
pub type WorldGoal = ([f64; 2], Option<f64>);

/// The world-frame goals of a request (position, yaw when the orientation names one), or why
/// it is refused.
pub fn world_goals(goal: &NavGoal) -> Result<Vec<WorldGoal>, Failure> {
    let unknown = |msg: String| Failure { code: codes::UNKNOWN, msg };
    if goal.poses.is_empty() {
        return Err(unknown("the goal holds no pose".into()));
    }
    let mut out = Vec::new();
    for (k, p) in goal.poses.iter().enumerate() {
        let frame = p.frame_id.trim_start_matches('/');
        if !WORLD_FRAMES.contains(&frame) {
            return Err(Failure {
                code: codes::TF_ERROR,
                msg: format!(
                    "pose {k} is in frame `{}`; goals are taken in the world frame (`map`, `world`, or empty)",
                    p.frame_id
                ),
            });
        }
        if p.position
            .iter()
            .any(|v| !v.is_finite() || v.abs() > crate::world::bounds::MAX_POSITION_M)
        {
            return Err(unknown(format!(
                "pose {k} has a non-finite or out-of-range position {:?}",
                p.position
            )));
        }
        let [x, y, z, w] = p.orientation;
        let n = (x * x + y * y + z * z + w * w).sqrt();
        let yaw = if n.is_finite() && n > 1e-3 { Some(yaw_of(&[w, x, y, z])) } else { None };
        if yaw.is_none() && n != 0.0 {
            return Err(unknown(format!(
                "pose {k} has an orientation that names no rotation ({:?})",
                p.orientation
            )));
        }
        out.push(([p.position[0], p.position[1]], yaw));
    }
    Ok(out)
}

/// Answer `call` as aborted with `f`'s code and reason.
pub fn refuse(call: &ActionCall, f: Failure) {
    let _ = call.outcome.send(ActionOutcome {
        status: GoalStatus::Aborted,
        error_code: f.code as i32,
        error_string: f.msg,
        result: None,
    });
}

/// Drain the goal endpoints `eps` of mover `who`: each goal call with its world-frame goals, or
/// the failure it is to be refused with (not a navigation goal, or [`world_goals`]' refusal).
/// Payloads that are no goal call are logged and dropped.
pub fn take_goals(
    ctx: &mut SimContext,
    eps: [EndpointId; 2],
    who: &str,
) -> Vec<(ActionCall, Result<Vec<WorldGoal>, Failure>)> {
    let mut out = Vec::new();
    for ep in eps {
        for p in ctx.interface.drain(ep) {
            let Payload::Goal(call) = p else {
                tracing::warn!("{who}: ignored a {} payload on a goal endpoint", p.kind());
                continue;
            };
            let goals = match call.goal.as_ref() {
                Payload::NavGoal(g) => world_goals(g),
                other => Err(Failure {
                    code: codes::UNKNOWN,
                    msg: format!("expected a navigation goal, got {}", other.kind()),
                }),
            };
            out.push((call, goals));
        }
    }
    out
}
