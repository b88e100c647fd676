//! Action servers for `in` endpoints with an `action` hint (grading on the final pose, cancel
//! holds the measured pose).
//!
//! * `control_msgs/action/FollowJointTrajectory` → [`ActionCall`] with `Payload::Trajectory`.
//! * `control_msgs/action/GripperCommand` → [`ActionCall`] with `Payload::Gripper`.
//!
//! **A goal's life.** The server accepts every goal (the producer is the one that knows whether it
//! can run it: an inactive controller, unknown joints or a malformed trajectory are answered with
//! an abort whose `error_code`/`error_string` say why), then posts a command that delivers
//! `Payload::Goal` to the endpoint on the physics thread. The producer streams feedback and sends
//! one [`ActionOutcome`]; a helper thread per goal moves both from their crossbeam channels onto
//! an async channel the goal's task reads (crossbeam cannot wake a task). Feedback becomes the
//! action's feedback, stamped with the sim time the bridge had recorded when the helper thread
//! received it (the feedback payload carries no stamp of its own: exact to the step on an idle
//! machine, a few steps late when the helper thread waits for a core); the outcome's status picks
//! succeed / abort / cancel and its `error_code`, `error_string` or gripper result fill the result.
//!
//! **Cancel.** A cancel request is accepted at once and posts the raising of the goal's `cancel`
//! flag to the physics thread (so the producer sees it at a step boundary and a recording logs the
//! step); the goal stays CANCELING until the producer — at the next step — holds the MEASURED position and answers
//! `Canceled`, which ends it with status CANCELED. (r2r 0.9.7 forgets a goal's handle once it
//! processed an accepted cancel, so a success or abort that races the cancel and loses is reported
//! through the CANCELED path, with the producer's result and message.) A goal preempted by a newer
//! one ends CANCELED, as ros2_controllers' JointTrajectoryController does it.
//!
//! A `multi_dof_trajectory` is not supported by the arm (no planar/floating joints are commanded):
//! such a goal is aborted with INVALID_GOAL naming it. `component_*_tolerance`s are ignored (they
//! apply to multi-DOF joints only).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crossbeam_channel::Receiver;
use futures::channel::mpsc::{unbounded, UnboundedReceiver};
use futures::StreamExt;
use r2r::builtin_interfaces::msg::Duration as RosDuration;
use r2r::control_msgs::action::{FollowJointTrajectory as Fjt, GripperCommand as Grip};
use r2r::{ActionServerGoal, ActionServerGoalRequest, WrappedActionTypeSupport};

use crate::context::payload::{self as pl, ActionCall, ActionOutcome, GoalStatus, Payload};
use crate::context::{CommandSender, SimContext};
use crate::ros::convert::{self, Task};
use crate::ros::handlers::ServeArgs;
use crate::ros::services::{serve_loop, sim_time, BoxFut};

/// FollowJointTrajectory result code INVALID_GOAL.
const INVALID_GOAL: i32 = -1;

/// builtin_interfaces/Duration → seconds.
pub fn duration_s(d: &RosDuration) -> f64 {
    d.sec as f64 + d.nanosec as f64 * 1e-9
}

fn tolerances(t: &[r2r::control_msgs::msg::JointTolerance]) -> Vec<pl::JointTolerance> {
    t.iter()
        .map(|t| pl::JointTolerance {
            name: t.name.clone(),
            position: t.position,
            velocity: t.velocity,
            acceleration: t.acceleration,
        })
        .collect()
}

/// A FollowJointTrajectory goal as a payload, or why it cannot be run.
pub fn decode_fjt_goal(g: &Fjt::Goal) -> Result<Payload, String> {
    if !g.multi_dof_trajectory.joint_names.is_empty() || !g.multi_dof_trajectory.points.is_empty() {
        return Err(format!(
            "multi_dof_trajectory is not supported (joints [{}]): this controller commands single-DOF joints only; send them in `trajectory`",
            g.multi_dof_trajectory.joint_names.join(", ")
        ));
    }
    // The joint part as the streamed `joint_trajectory` topic decodes it.
    let Payload::Trajectory(mut goal) = convert::decode_trajectory(g.trajectory.clone()) else {
        return Err("internal: the JointTrajectory decoder returned no trajectory".into());
    };
    goal.path_tolerance = tolerances(&g.path_tolerance);
    goal.goal_tolerance = tolerances(&g.goal_tolerance);
    goal.goal_time_tolerance = duration_s(&g.goal_time_tolerance);
    Ok(Payload::Trajectory(goal))
}

/// Trajectory feedback → FollowJointTrajectory feedback (desired, actual and error positions),
/// stamped `t` (sim s).
pub fn fjt_feedback(p: &Payload, t: f64) -> Option<Fjt::Feedback> {
    let Payload::TrajectoryFeedback { joint_names, desired, actual } = p else { return None };
    let mut f = Fjt::Feedback::default();
    f.header.stamp = convert::stamp(t);
    f.joint_names.clone_from(joint_names);
    f.desired.positions.clone_from(desired);
    f.actual.positions.clone_from(actual);
    f.error.positions = desired.iter().zip(actual).map(|(d, a)| d - a).collect();
    Some(f)
}

/// The FollowJointTrajectory result of an outcome.
pub fn fjt_result(o: &ActionOutcome) -> Fjt::Result {
    Fjt::Result { error_code: o.error_code, error_string: o.error_string.clone() }
}

/// GripperCommand feedback from a GripperResult-shaped sample (the door sends it; the gripper none).
pub fn gripper_feedback(p: &Payload, _t: f64) -> Option<Grip::Feedback> {
    let Payload::GripperResult { position, effort, stalled, reached_goal } = p else { return None };
    Some(Grip::Feedback {
        position: *position,
        effort: *effort,
        stalled: *stalled,
        reached_goal: *reached_goal,
    })
}

/// The GripperCommand result of an outcome: the producer's GripperResult (every outcome of the
/// gripper and the door carries one, refused and canceled goals too; zeros only if one did not).
pub fn gripper_result(o: &ActionOutcome) -> Grip::Result {
    match o.result.as_deref() {
        Some(Payload::GripperResult { position, effort, stalled, reached_goal }) => Grip::Result {
            position: *position,
            effort: *effort,
            stalled: *stalled,
            reached_goal: *reached_goal,
        },
        _ => Grip::Result::default(),
    }
}

/// What the per-goal helper thread passes to the goal's task.
enum Event {
    /// A feedback sample and the sim time (s) the bridge had recorded when it was sent.
    Feedback(Box<Payload>, f64),
    Outcome(ActionOutcome),
}

/// Move feedback and the outcome from their crossbeam channels onto one async channel (a helper
/// thread; it ends with the outcome, or when the producer dropped the goal).
fn forward(
    feedback: Receiver<Payload>,
    outcome: Receiver<ActionOutcome>,
) -> UnboundedReceiver<Event> {
    let (tx, rx) = unbounded();
    let _ = std::thread::Builder::new().name("roqsim-goal".into()).spawn(move || {
        let mut feedback_open = true;
        loop {
            if feedback_open {
                crossbeam_channel::select! {
                    recv(feedback) -> m => match m {
                        Ok(p) => {
                            if tx.unbounded_send(Event::Feedback(Box::new(p), sim_time())).is_err() {
                                return;
                            }
                        }
                        Err(_) => feedback_open = false,
                    },
                    recv(outcome) -> m => {
                        // Feedback sent before the outcome goes first.
                        for p in feedback.try_iter() {
                            let _ = tx.unbounded_send(Event::Feedback(Box::new(p), sim_time()));
                        }
                        if let Ok(o) = m {
                            let _ = tx.unbounded_send(Event::Outcome(o));
                        }
                        return;
                    }
                }
            } else {
                if let Ok(o) = outcome.recv() {
                    let _ = tx.unbounded_send(Event::Outcome(o));
                }
                return;
            }
        }
    });
    rx
}

/// End goal `g` as `o` says (the CANCELED path when a cancel was accepted and r2r refuses the
/// other: see the module doc).
fn finish<A>(
    g: &mut ActionServerGoal<A>,
    o: &ActionOutcome,
    result: A::Result,
    canceling: bool,
    name: &str,
) where
    A: WrappedActionTypeSupport + 'static,
    A::Result: Clone,
{
    let r = match o.status {
        GoalStatus::Succeeded => g.succeed(result.clone()),
        GoalStatus::Aborted => g.abort(result.clone()),
        GoalStatus::Canceled => g.cancel(result.clone()),
    };
    // After an accepted cancel r2r no longer holds the goal's handle: only the CANCELED path is left.
    let r = if r.is_err() && canceling { g.cancel(result) } else { r };
    match r {
        Ok(()) => tracing::debug!("{name}: goal {} {:?}: {}", g.uuid, o.status, o.error_string),
        Err(e) => tracing::warn!("{name}: cannot report goal {} as {:?}: {e}", g.uuid, o.status),
    }
}

/// Run one accepted goal: deliver it, forward feedback, map the outcome; a cancel request sets
/// the `cancel` flag and is accepted.
pub(crate) fn run_goal<A>(
    req: ActionServerGoalRequest<A>,
    goal: Result<Payload, String>,
    commands: CommandSender,
    id: crate::context::EndpointId,
    feedback_of: fn(&Payload, f64) -> Option<A::Feedback>,
    result_of: fn(&ActionOutcome) -> A::Result,
    name: String,
) -> BoxFut
where
    A: WrappedActionTypeSupport + 'static,
    A::Feedback: Send,
    A::Result: Send + Clone,
    A::Goal: Send,
{
    Box::pin(async move {
        let (mut g, cancel_requests) = match req.accept() {
            Ok(x) => x,
            Err(e) => {
                tracing::warn!("{name}: cannot accept a goal: {e}");
                return;
            }
        };
        let payload = match goal {
            Ok(p) => p,
            Err(msg) => {
                let o = ActionOutcome {
                    status: GoalStatus::Aborted,
                    error_code: INVALID_GOAL,
                    error_string: msg,
                    result: None,
                };
                finish(&mut g, &o, result_of(&o), false, &name);
                return;
            }
        };
        let (ftx, frx) = crossbeam_channel::unbounded();
        let (otx, orx) = crossbeam_channel::bounded(1);
        let cancel = Arc::new(AtomicBool::new(false));
        let call = ActionCall {
            goal: Box::new(payload),
            feedback: ftx,
            outcome: otx,
            cancel: cancel.clone(),
        };
        commands.post(move |ctx: &mut SimContext| ctx.interface.deliver(id, Payload::Goal(call)));
        let mut events = forward(frx, orx).fuse();
        let mut cancel_requests = cancel_requests.fuse();
        // Accepted here at once; the flag is raised on the physics thread (a step boundary the
        // consumer sees it at, and a recording logs).
        let mut canceling = false;
        loop {
            futures::select! {
                c = cancel_requests.next() => if let Some(c) = c {
                    if !canceling {
                        canceling = true;
                        let flag = cancel.clone();
                        commands.post(move |ctx: &mut SimContext| ctx.interface.cancel_goal(id, &flag));
                    }
                    c.accept();
                },
                e = events.next() => match e {
                    Some(Event::Feedback(p, t)) => {
                        if let Some(f) = feedback_of(&p, t) {
                            let _ = g.publish_feedback(f);
                        }
                    }
                    Some(Event::Outcome(o)) => {
                        finish(&mut g, &o, result_of(&o), canceling, &name);
                        return;
                    }
                    None => {
                        let o = ActionOutcome {
                            status: GoalStatus::Aborted,
                            error_code: INVALID_GOAL,
                            error_string: "the simulation dropped the goal without an outcome (the run ended or was reset)".into(),
                            result: None,
                        };
                        finish(&mut g, &o, result_of(&o), canceling, &name);
                        return;
                    }
                },
            }
        }
    })
}

/// control_msgs/action/FollowJointTrajectory.
pub fn serve_follow_joint_trajectory(a: ServeArgs) -> Result<Task, String> {
    let requests = a.node.create_action_server::<Fjt::Action>(a.name).map_err(|e| {
        format!(
            "cannot create the control_msgs/action/FollowJointTrajectory server {}: {e}",
            a.name
        )
    })?;
    let (commands, id, name) = (a.commands, a.endpoint, a.name.to_string());
    Ok(serve_loop(requests, move |req: ActionServerGoalRequest<Fjt::Action>| {
        let goal = decode_fjt_goal(&req.goal);
        run_goal::<Fjt::Action>(
            req,
            goal,
            commands.clone(),
            id,
            fjt_feedback,
            fjt_result,
            name.clone(),
        )
    }))
}

/// control_msgs/action/GripperCommand.
pub fn serve_gripper_command(a: ServeArgs) -> Result<Task, String> {
    let requests = a.node.create_action_server::<Grip::Action>(a.name).map_err(|e| {
        format!("cannot create the control_msgs/action/GripperCommand server {}: {e}", a.name)
    })?;
    let (commands, id, name) = (a.commands, a.endpoint, a.name.to_string());
    Ok(serve_loop(requests, move |req: ActionServerGoalRequest<Grip::Action>| {
        let c = &req.goal.command;
        let goal = Ok(Payload::Gripper(pl::GripperGoal {
            position: c.position,
            max_effort: c.max_effort,
        }));
        run_goal::<Grip::Action>(
            req,
            goal,
            commands.clone(),
            id,
            gripper_feedback,
            gripper_result,
            name.clone(),
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    use r2r::trajectory_msgs::msg::JointTrajectoryPoint;

    #[test]
    fn fjt_goal_decodes_points_tolerances_and_refuses_multi_dof() {
        let mut g = Fjt::Goal::default();
        g.trajectory.joint_names = vec!["a".into(), "b".into()];
        g.trajectory.points.push(JointTrajectoryPoint {
            positions: vec![0.1, 0.2],
            time_from_start: RosDuration { sec: 1, nanosec: 500_000_000 },
            ..Default::default()
        });
        g.goal_tolerance.push(r2r::control_msgs::msg::JointTolerance {
            name: "a".into(),
            position: 0.05,
            velocity: 0.0,
            acceleration: 0.0,
        });
        g.goal_time_tolerance = RosDuration { sec: 0, nanosec: 250_000_000 };
        let Payload::Trajectory(t) = decode_fjt_goal(&g).unwrap() else { panic!() };
        assert_eq!(t.joint_names, vec!["a", "b"]);
        assert_eq!(t.points[0].positions, vec![0.1, 0.2]);
        assert_eq!(t.points[0].time_from_start, 1.5);
        assert_eq!(t.goal_tolerance[0].position, 0.05);
        assert_eq!(t.goal_time_tolerance, 0.25);
        g.multi_dof_trajectory.joint_names = vec!["base".into()];
        let e = decode_fjt_goal(&g).unwrap_err();
        assert!(e.contains("multi_dof_trajectory is not supported (joints [base])"), "{e}");
    }

    #[test]
    fn outcomes_and_feedback_map_to_messages() {
        let o = ActionOutcome {
            status: GoalStatus::Aborted,
            error_code: -5,
            error_string: "GOAL_TOLERANCE_VIOLATED: x".into(),
            result: None,
        };
        let r = fjt_result(&o);
        assert_eq!((r.error_code, r.error_string.as_str()), (-5, "GOAL_TOLERANCE_VIOLATED: x"));
        let f = fjt_feedback(
            &Payload::TrajectoryFeedback {
                joint_names: vec!["a".into()],
                desired: vec![1.0],
                actual: vec![0.75],
            },
            1.25,
        )
        .unwrap();
        assert_eq!(f.error.positions, vec![0.25]);
        assert_eq!((f.header.stamp.sec, f.header.stamp.nanosec), (1, 250_000_000));
        assert!(fjt_feedback(&Payload::Empty, 0.0).is_none());
        let o = ActionOutcome {
            status: GoalStatus::Succeeded,
            error_code: 0,
            error_string: String::new(),
            result: Some(Box::new(Payload::GripperResult {
                position: 0.0175,
                effort: 40.0,
                stalled: true,
                reached_goal: false,
            })),
        };
        let r = gripper_result(&o);
        assert_eq!((r.position, r.effort, r.stalled, r.reached_goal), (0.0175, 40.0, true, false));
        assert_eq!(gripper_result(&ActionOutcome { result: None, ..o }).position, 0.0);
    }
}
