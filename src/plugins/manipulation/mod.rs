//! roqsim_manipulation: arms, their end effectors and controllers.
//!
//! - [`spawn_arm`]: attach an arm (on the ground, a mobile base or a rail), graft a gripper,
//!   rewrite its actuators (`actuators:`), compensate gravity, register the `Arm` entity;
//! - [`arm_controller`]: the single writer of an arm's actuators — position hold,
//!   FollowJointTrajectory and GripperCommand on the physics thread, controller registry entries,
//!   joint_states.

pub mod arm_controller;
pub mod payload;
pub mod spawn_arm;

/// This family's plugins, in catalogue order.
pub fn descriptors() -> Vec<crate::plugin::PluginDescriptor> {
    vec![spawn_arm::descriptor(), arm_controller::descriptor(), payload::descriptor()]
}
