//! roqsim_mobile: mobile bases and their drives.

pub mod ackermann_drive;
pub mod diff_drive;
pub mod drive;
pub mod omni_drive;
pub mod spawn_robot;

/// This family's plugins, in catalogue order.
pub fn descriptors() -> Vec<crate::plugin::PluginDescriptor> {
    vec![
        spawn_robot::descriptor(),
        diff_drive::descriptor(),
        omni_drive::descriptor(),
        ackermann_drive::descriptor(),
    ]
}
