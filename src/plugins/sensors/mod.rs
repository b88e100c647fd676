//! roqsim_sensors: sensor devices and their capture plugins.

pub mod camera;
pub mod force_torque;
pub mod ground_truth_pose;
pub mod imu;
pub mod lidar;
pub mod oakd_camera;
pub mod realsense_d415;
pub mod realsense_d435;
pub mod realsense_d455;
pub mod spawn_sensor;
