//! roqsim_sensors: sensor devices, their capture plugins and joint_state_publisher.

pub mod camera;
pub mod force_torque;
pub mod gnss;
pub mod ground_truth_pose;
pub mod imu;
pub mod joint_state_publisher;
pub mod lidar;
pub mod lidar_config;
pub mod livox_mid360;
pub mod oakd_camera;
pub mod object_detector;
pub mod range_sensor;
pub mod realsense_d415;
pub mod realsense_d435;
pub mod realsense_d455;
pub mod segmentation_camera;
pub mod seyond_robin_w1g;
pub mod spawn_sensor;

/// This family's plugins, in catalogue order.
pub fn descriptors() -> Vec<crate::plugin::PluginDescriptor> {
    vec![
        spawn_sensor::descriptor(),
        lidar::descriptor(),
        livox_mid360::descriptor(),
        seyond_robin_w1g::descriptor(),
        range_sensor::descriptor(),
        gnss::descriptor(),
        imu::descriptor(),
        joint_state_publisher::descriptor(),
        ground_truth_pose::descriptor(),
        force_torque::descriptor(),
        camera::descriptor(),
        realsense_d435::descriptor(),
        realsense_d415::descriptor(),
        realsense_d455::descriptor(),
        oakd_camera::descriptor(),
        segmentation_camera::descriptor(),
        object_detector::descriptor(),
    ]
}
