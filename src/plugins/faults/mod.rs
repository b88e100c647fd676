//! Fault plugins.
//!
//! `model_override` changes named MuJoCo model values mid-run on an external trigger (a
//! std_srvs/SetBool service, or the blackboard handle in a ROS-free run) and reports whether the
//! change landed. Its sensor counterpart — a sensor's `fault:` block switched by the same
//! service shape — lives with the sensors ([`crate::handles::sensor_fault`]).

pub mod model_override;

/// This family's plugins, in catalogue order.
pub fn descriptors() -> Vec<crate::plugin::PluginDescriptor> {
    vec![model_override::descriptor()]
}

/// What one step after a change says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Nothing the selection touches could be read (nothing in contact, a limit not binding):
    /// not a failure.
    Untested,
    /// The applied value is what the contact (or the dynamics) now carries.
    Landed,
    /// The change is in the model and changed nothing (the other side owns the contact, the
    /// target equals the nominal value, ...): a failed service reply and a warning.
    NoEffect,
}

impl Verdict {
    /// The word published on `override_verified` and leading the service reply's message.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Untested => "untested",
            Verdict::Landed => "landed",
            Verdict::NoEffect => "no_effect",
        }
    }
    /// The SetBool reply's `success`: false only for `no_effect`.
    pub fn success(self) -> bool {
        self != Verdict::NoEffect
    }
}
