//! nav2_msgs action servers for the `navigator`'s goal endpoints:
//!
//! * `nav2_msgs/action/NavigateToPose` → [`ActionCall`] with `Payload::NavGoal` (one pose);
//! * `nav2_msgs/action/NavigateThroughPoses` → `Payload::NavGoal` (the poses, in order).
//!
//! A goal's life (accept, deliver, feedback, cancel, outcome) is the one every action server here
//! shares (`crate::ros::actions`). A walker's goal endpoints carry the same hints and are served
//! here too. The goal's `behavior_tree` is not read: the movers have no
//! behaviour tree, and a goal naming one runs the navigator's own pipeline — said once per server
//! in the log. Result `error_code` is the producer's code (Nav2's for the failing stage, see
//! docs/navigation.md), `error_msg` its reason.

use r2r::builtin_interfaces::msg::Duration as RosDuration;
use r2r::geometry_msgs::msg::PoseStamped;
use r2r::nav2_msgs::action::{NavigateThroughPoses as Ntp, NavigateToPose as Ntop};
use r2r::ActionServerGoalRequest;

use crate::context::payload::{ActionOutcome, NavFeedback, NavGoal, NavPose, Payload};
use crate::ros::actions::run_goal;
use crate::ros::convert::{self, Task};
use crate::ros::handlers::ServeArgs;
use crate::ros::services::serve_loop;

/// A PoseStamped as a navigation pose.
pub fn nav_pose(p: &PoseStamped) -> NavPose {
    let (q, o) = (&p.pose.orientation, &p.pose.position);
    NavPose {
        frame_id: p.header.frame_id.clone(),
        position: [o.x, o.y, o.z],
        orientation: [q.x, q.y, q.z, q.w],
    }
}

/// A navigation pose as a PoseStamped stamped `t` (sim s).
pub fn pose_stamped(p: &NavPose, t: f64) -> PoseStamped {
    let mut m = PoseStamped::default();
    m.header.stamp = convert::stamp(t);
    m.header.frame_id.clone_from(&p.frame_id);
    m.pose.position.x = p.position[0];
    m.pose.position.y = p.position[1];
    m.pose.position.z = p.position[2];
    m.pose.orientation.x = p.orientation[0];
    m.pose.orientation.y = p.orientation[1];
    m.pose.orientation.z = p.orientation[2];
    m.pose.orientation.w = p.orientation[3];
    m
}

/// Seconds as a builtin_interfaces/Duration (clamped at 0 and at i32::MAX s).
pub fn duration(s: f64) -> RosDuration {
    let s = if s.is_finite() { s.clamp(0.0, i32::MAX as f64) } else { 0.0 };
    let sec = s.floor();
    RosDuration { sec: sec as i32, nanosec: (((s - sec) * 1e9) as u32).min(999_999_999) }
}

/// The producer's code as the u16 nav2 results carry (a code out of range reads as UNKNOWN 200).
fn code(o: &ActionOutcome) -> u16 {
    u16::try_from(o.error_code).unwrap_or(crate::plugins::nav::navigator::codes::UNKNOWN)
}

fn feedback_of(p: &Payload) -> Option<&NavFeedback> {
    match p {
        Payload::NavFeedback(f) => Some(f),
        _ => None,
    }
}

/// NavigateToPose feedback.
pub fn ntop_feedback(p: &Payload, _t: f64) -> Option<Ntop::Feedback> {
    let f = feedback_of(p)?;
    Some(Ntop::Feedback {
        current_pose: pose_stamped(&f.current_pose, f.stamp),
        navigation_time: duration(f.navigation_time),
        estimated_time_remaining: duration(f.estimated_time_remaining),
        number_of_recoveries: f.number_of_recoveries.min(i16::MAX as u32) as i16,
        distance_remaining: f.distance_remaining as f32,
    })
}

/// NavigateThroughPoses feedback.
pub fn ntp_feedback(p: &Payload, _t: f64) -> Option<Ntp::Feedback> {
    let f = feedback_of(p)?;
    Some(Ntp::Feedback {
        current_pose: pose_stamped(&f.current_pose, f.stamp),
        navigation_time: duration(f.navigation_time),
        estimated_time_remaining: duration(f.estimated_time_remaining),
        number_of_recoveries: f.number_of_recoveries.min(i16::MAX as u32) as i16,
        distance_remaining: f.distance_remaining as f32,
        number_of_poses_remaining: f.number_of_poses_remaining.min(i16::MAX as u32) as i16,
    })
}

/// NavigateToPose result.
pub fn ntop_result(o: &ActionOutcome) -> Ntop::Result {
    Ntop::Result { error_code: code(o), error_msg: o.error_string.clone() }
}

/// NavigateThroughPoses result.
pub fn ntp_result(o: &ActionOutcome) -> Ntp::Result {
    Ntp::Result { error_code: code(o), error_msg: o.error_string.clone() }
}

fn note_behavior_tree(name: &str, bt: &str, said: &std::sync::atomic::AtomicBool) {
    if !bt.is_empty() && !said.swap(true, std::sync::atomic::Ordering::Relaxed) {
        tracing::info!(
            "{name}: goal names behavior_tree `{bt}`; roqsim's movers (navigator, walker) have no behaviour tree and run their own pipeline (said once)"
        );
    }
}

/// nav2_msgs/action/NavigateToPose.
pub fn serve_navigate_to_pose(a: ServeArgs) -> Result<Task, String> {
    let requests = a.node.create_action_server::<Ntop::Action>(a.name).map_err(|e| {
        format!("cannot create the nav2_msgs/action/NavigateToPose server {}: {e}", a.name)
    })?;
    let (commands, id, name) = (a.commands, a.endpoint, a.name.to_string());
    let said = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    Ok(serve_loop(requests, move |req: ActionServerGoalRequest<Ntop::Action>| {
        note_behavior_tree(&name, &req.goal.behavior_tree, &said);
        let goal = Ok(Payload::NavGoal(NavGoal { poses: vec![nav_pose(&req.goal.pose)] }));
        run_goal::<Ntop::Action>(
            req,
            goal,
            commands.clone(),
            id,
            ntop_feedback,
            ntop_result,
            name.clone(),
        )
    }))
}

/// nav2_msgs/action/NavigateThroughPoses.
pub fn serve_navigate_through_poses(a: ServeArgs) -> Result<Task, String> {
    let requests = a.node.create_action_server::<Ntp::Action>(a.name).map_err(|e| {
        format!("cannot create the nav2_msgs/action/NavigateThroughPoses server {}: {e}", a.name)
    })?;
    let (commands, id, name) = (a.commands, a.endpoint, a.name.to_string());
    let said = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    Ok(serve_loop(requests, move |req: ActionServerGoalRequest<Ntp::Action>| {
        note_behavior_tree(&name, &req.goal.behavior_tree, &said);
        let poses = req.goal.poses.iter().map(nav_pose).collect();
        let goal = Ok(Payload::NavGoal(NavGoal { poses }));
        run_goal::<Ntp::Action>(
            req,
            goal,
            commands.clone(),
            id,
            ntp_feedback,
            ntp_result,
            name.clone(),
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::payload::GoalStatus;

    #[test]
    fn poses_feedback_and_results_map_both_ways() {
        let mut m = PoseStamped::default();
        m.header.frame_id = "map".into();
        m.pose.position.x = 1.5;
        m.pose.orientation.z = 1.0;
        m.pose.orientation.w = 0.0; // geometry_msgs/Quaternion defaults w to 1
        let p = nav_pose(&m);
        assert_eq!(p.position, [1.5, 0.0, 0.0]);
        assert_eq!(p.orientation, [0.0, 0.0, 1.0, 0.0]);
        assert_eq!(pose_stamped(&p, 2.25).pose.position.x, 1.5);
        assert_eq!(duration(1.25), RosDuration { sec: 1, nanosec: 250_000_000 });
        assert_eq!(duration(-3.0), RosDuration { sec: 0, nanosec: 0 });
        let f = Payload::NavFeedback(NavFeedback {
            stamp: 3.0,
            current_pose: p,
            navigation_time: 3.0,
            estimated_time_remaining: 4.5,
            number_of_recoveries: 2,
            distance_remaining: 1.35,
            number_of_poses_remaining: 3,
        });
        let t = ntp_feedback(&f, 0.0).unwrap();
        assert_eq!((t.number_of_recoveries, t.number_of_poses_remaining), (2, 3));
        assert_eq!(t.estimated_time_remaining, RosDuration { sec: 4, nanosec: 500_000_000 });
        assert_eq!(t.current_pose.header.stamp.sec, 3);
        assert!((t.distance_remaining - 1.35).abs() < 1e-6);
        assert!(ntop_feedback(&Payload::Empty, 0.0).is_none());
        let o = ActionOutcome {
            status: GoalStatus::Aborted,
            error_code: 206,
            error_string: "goal (5.00, 1.00) is on an obstacle".into(),
            result: None,
        };
        let r = ntop_result(&o);
        assert_eq!(
            (r.error_code, r.error_msg.as_str()),
            (206, "goal (5.00, 1.00) is on an obstacle")
        );
        assert_eq!(ntp_result(&ActionOutcome { error_code: -1, ..o }).error_code, 200);
    }
}
