//! roqsim_sensors: sensor devices and their capture plugins.

pub mod force_torque;
pub mod gnss;
pub mod ground_truth_pose;
pub mod imu;
pub mod lidar;
pub mod livox_mid360;
pub mod range_sensor;
pub mod ray_mount;
pub mod spawn_sensor;
