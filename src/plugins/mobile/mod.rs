//! roqsim_mobile: mobile bases and their drives.

pub mod spawn_robot;
