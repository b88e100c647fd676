//! roqsim_mobile: mobile bases and their drives.

pub mod ackermann_drive;
pub mod diff_drive;
pub mod omni_drive;
pub mod spawn_robot;
