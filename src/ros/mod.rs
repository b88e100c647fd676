//! The ROS 2 transport.
//!
//! One `ros2_bridge` plugin serves the whole world from inside the engine's process: every
//! endpoint on the ROS graph (out → publisher, in + `type` → subscription, in + `service` →
//! service server, in + `action` → action server), /clock from sim time, /tf and the latched
//! /tf_static, merged joint_states, and a once-a-second type-mismatch watchdog.
//!
//! The naming, routing and merging rules (`config`, `names`, `plan`) are ROS-free and tested by
//! plain `cargo test`; the r2r parts (`bridge`, `convert`, `handlers`, `graph`) build only with
//! the `ros` feature, so a pip-only build never needs a ROS environment.
//!
//! Threads: the physics thread creates the node, every publisher, subscription and service in
//! `configure`, publishes in `post_step` (filling one preallocated message per publisher), and
//! applies inbound messages through commands posted by the ROS thread, which owns the node and
//! spins it. Nothing off the physics thread touches MjData.

pub mod clock;
pub mod config;
pub mod field;
pub mod graph;
pub mod names;
pub mod param_files;
pub mod plan;
pub mod remap;

#[cfg(feature = "ros")]
pub mod actions;
#[cfg(feature = "ros")]
pub mod bridge;
#[cfg(feature = "ros")]
pub mod controller_manager;
#[cfg(feature = "ros")]
pub mod controller_nodes;
#[cfg(feature = "ros")]
pub mod convert;
#[cfg(feature = "ros")]
pub mod handlers;
#[cfg(feature = "ros")]
pub mod nav_actions;
#[cfg(feature = "ros")]
pub mod params;
#[cfg(feature = "ros")]
pub mod reports;
#[cfg(feature = "ros")]
pub mod rosout;
#[cfg(feature = "ros")]
pub mod services;
#[cfg(feature = "ros")]
pub mod sim_interfaces;

pub use config::BridgeConfig;

/// The transport's plugins (`ros2_bridge`, `sim_interfaces`); empty without the `ros` feature.
pub fn descriptors() -> Vec<crate::plugin::PluginDescriptor> {
    #[cfg(feature = "ros")]
    {
        vec![bridge::descriptor(), sim_interfaces::descriptor()]
    }
    #[cfg(not(feature = "ros"))]
    {
        Vec::new()
    }
}
