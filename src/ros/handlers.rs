//! Service and action handler registries (an `in` endpoint with a `service` hint is served as a
//! service, one with an `action` hint as an action server; "a new srv or action type is a handler
//! there and no change here").
//!
//! A handler is keyed by the interface type string. It creates the server on the node in
//! `configure` (physics thread) and returns the task the ROS thread drives. A request that needs
//! simulation state is answered on the physics thread: the handler posts a command carrying a
//! reply channel, and the command answers after delivering the request as a payload to the
//! endpoint (so the reply is consistent with one tick).
//!
//! The issue that introduced the bridge needs no concrete service or action; later issues add
//! theirs to [`SERVICES`] / [`ACTIONS`] (std_srvs/SetBool for model_override,
//! control_msgs/FollowJointTrajectory for arm_controller, simulation_interfaces for
//! `--sim-control`).

use crate::context::{CommandSender, EndpointId};
use crate::ros::convert::Task;

/// What a handler gets to build its server.
pub struct ServeArgs<'a> {
    /// The node (physics thread, during configure).
    pub node: &'a mut r2r::Node,
    /// Resolved absolute service / action name.
    pub name: &'a str,
    /// The inbound endpoint requests are delivered to.
    pub endpoint: EndpointId,
    /// Posts commands to the physics thread.
    pub commands: CommandSender,
}

/// Builds a server for one interface type; returns the task serving it.
pub type ServeFn = fn(ServeArgs) -> Result<Task, String>;

/// Service handlers, keyed by `pkg/srv/Type`.
pub const SERVICES: &[(&str, ServeFn)] = &[
    ("std_srvs/srv/SetBool", crate::ros::services::serve_set_bool),
    ("std_srvs/srv/Trigger", crate::ros::services::serve_trigger),
];

/// Action handlers, keyed by `pkg/action/Type`.
pub const ACTIONS: &[(&str, ServeFn)] = &[
    (
        "control_msgs/action/FollowJointTrajectory",
        crate::ros::actions::serve_follow_joint_trajectory,
    ),
    ("control_msgs/action/GripperCommand", crate::ros::actions::serve_gripper_command),
    ("nav2_msgs/action/NavigateToPose", crate::ros::nav_actions::serve_navigate_to_pose),
    (
        "nav2_msgs/action/NavigateThroughPoses",
        crate::ros::nav_actions::serve_navigate_through_poses,
    ),
];

/// The handler for a service type.
pub fn service(ty: &str) -> Option<ServeFn> {
    SERVICES.iter().find(|(t, _)| *t == ty).map(|(_, f)| *f)
}

/// The handler for an action type.
pub fn action(ty: &str) -> Option<ServeFn> {
    ACTIONS.iter().find(|(t, _)| *t == ty).map(|(_, f)| *f)
}

/// Registered type names of a registry (for messages).
pub fn known(reg: &[(&str, ServeFn)]) -> String {
    if reg.is_empty() {
        "none yet".to_string()
    } else {
        reg.iter().map(|(t, _)| *t).collect::<Vec<_>>().join(", ")
    }
}
