//! People: `walker`, a kinematic pedestrian (a capsule person on a mocap body) patrolling a route.
//! Every walker of a world joins one shared crowd controller (`crowd`), so ORCA sees them all
//! together with the robot and the driven props; `route` is a walker's patrol and dwell;
//! `goal` drives a walker to nav2 goals (the action endpoints, A* on the shared planner grid).

pub mod crowd;
pub mod goal;
pub mod route;
pub mod walker;

/// This family's plugins, in catalogue order.
pub fn descriptors() -> Vec<crate::plugin::PluginDescriptor> {
    vec![walker::descriptor()]
}
