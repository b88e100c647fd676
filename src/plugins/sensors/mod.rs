//! roqsim_sensors: sensor devices and their capture plugins.

pub mod spawn_sensor;
pub mod imu;
pub mod lidar;
pub mod ground_truth_pose;
pub mod force_torque;
