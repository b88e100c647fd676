//! roqsim_manipulation: arms, their end effectors and controllers.
//!
//! - [`spawn_arm`]: attach an arm (on the ground, a mobile base or a rail), graft a gripper,
//!   rewrite its actuators (`actuators:`), compensate gravity, register the `Arm` entity;
//! - [`arm_controller`]: the single writer of an arm's actuators — position hold,
//!   FollowJointTrajectory and GripperCommand on the physics thread, controller registry entries,
//!   joint_states;
//! - [`force_limit`]: a protective stop on a measured wrench above its limit (releases the arm's
//!   controllers, asks the run to stop, reports when and how hard);
//! - [`cartesian_admittance`]: Cartesian motion, force and compliance control of an arm's site,
//!   as a second command source on the arm's command port.

pub mod arm_controller;
pub mod cartesian_admittance;
pub mod force_limit;
pub mod payload;
pub mod spawn_arm;

/// This family's plugins, in catalogue order.
pub fn descriptors() -> Vec<crate::plugin::PluginDescriptor> {
    vec![
        spawn_arm::descriptor(),
        arm_controller::descriptor(),
        cartesian_admittance::descriptor(),
        force_limit::descriptor(),
        payload::descriptor(),
    ]
}
