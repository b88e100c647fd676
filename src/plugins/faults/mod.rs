//! Fault plugins.
//!
//! `model_override` changes named MuJoCo model values mid-run on an external trigger (a
//! std_srvs/SetBool service, or the blackboard handle in a ROS-free run) and reports whether the
//! change landed. Its sensor counterpart — a sensor's `fault:` block switched by the same
//! service shape — lives with the sensors ([`crate::handles::sensor_fault`]); both switch through
//! [`crate::handles::override_switch`].

pub mod model_override;

/// This family's plugins, in catalogue order.
pub fn descriptors() -> Vec<crate::plugin::PluginDescriptor> {
    vec![model_override::descriptor()]
}

/// The verdict words a change reports (one home with the switch every fault shares).
pub use crate::handles::override_switch::Verdict;
