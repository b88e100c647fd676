//! The seam for a sensor's `fault:` block.
//!
//! A sensor may carry `fault: {<key>: <value>, ...}`: the values it takes on while degraded. A
//! scenario switches the block on and off by the sensor's address ([`FaultService`]: a SetBool
//! endpoint at `<address/with/slashes>/override`, or the `sensor_override:<address>` handle). At
//! load this module parses and checks the block:
//!
//! - Only keys the sensor reads **per frame** may appear. Each sensor declares them as a
//!   [`FaultAllowlist`]. Anything else is refused by name with the reason: `rays` changes the
//!   message layout (a LaserScan's length), `site`/`frame_id` are consumed once at configure. A
//!   write that lands, does nothing, and reads back as though it had is worse than a refusal.
//! - The values are typed like the nominal keys (the sensor deserializes the block into its own
//!   all-optional struct with [`FaultBlock::typed`]) and the degraded config as a whole is
//!   validated like the nominal one, so a fault that could never apply is refused at load.
//!
//! Severity stays configuration (`components.robot.rplidar.lidar.fault.dropout_percent` is an
//! ordinary experiment factor); only the on/off bit crosses the wire later.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_norway::{Mapping, Value};

use super::override_switch::{OverrideHandle, OverrideSwitch, SwitchEndpoints, Verdict};
use crate::error::ConfigError;

/// The raw `fault:` block as written: key → value. Checked against the sensor's
/// [`FaultAllowlist`] by [`FaultBlock::check`], typed by [`FaultBlock::typed`].
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct FaultBlock(
    #[schemars(with = "BTreeMap<String, serde_json::Value>")] pub BTreeMap<String, Value>,
);

/// Why a key that is not per-frame is refused in a `fault:` block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Changes the message layout (length or meaning of indices), e.g. a LaserScan's `rays`.
    Layout(&'static str),
    /// Consumed once at configure (`site`, `frame_id`, `exclude_body`): a later write does nothing.
    ConfiguredOnce,
}

/// The per-frame keys a sensor's `fault:` block may write, and the reasons for the ones it may not.
#[derive(Debug, Clone, Copy)]
pub struct FaultAllowlist {
    /// Plugin ref, for messages (`lidar`).
    pub sensor: &'static str,
    /// Keys the sensor reads every frame: the only ones a fault may write.
    pub per_frame: &'static [&'static str],
    /// Config keys that exist but are not per-frame, with why.
    pub refused: &'static [(&'static str, Refusal)],
}

impl FaultAllowlist {
    /// True when `key` may appear in a `fault:` block.
    pub fn allows(&self, key: &str) -> bool {
        self.per_frame.contains(&key)
    }

    /// The refusal message for `key` (not on the allowlist).
    pub fn refusal(&self, key: &str) -> String {
        let allowed = self.per_frame.join(", ");
        match self.refused.iter().find(|(k, _)| *k == key).map(|(_, r)| *r) {
            Some(Refusal::Layout(what)) => format!(
                "`{key}` cannot be faulted: it changes the message layout ({what}); a {} fault may write only the keys it reads per frame: {allowed}",
                self.sensor
            ),
            Some(Refusal::ConfiguredOnce) => format!(
                "`{key}` cannot be faulted: it is consumed once at configure, so a mid-run write would take effect nowhere; a {} fault may write only the keys it reads per frame: {allowed}",
                self.sensor
            ),
            None if key == "fault" => format!("a fault block cannot nest another `fault:`; a {} fault may write only: {allowed}", self.sensor),
            None => format!("unknown key `{key}` in a {} fault; it may write only the keys the sensor reads per frame: {allowed}", self.sensor),
        }
    }
}

impl FaultBlock {
    /// True when the block writes nothing.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Keys it writes, sorted.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// Every key that is not per-frame, refused with its reason at `fault.<key>`.
    pub fn check(&self, allow: &FaultAllowlist) -> Vec<ConfigError> {
        self.0
            .keys()
            .filter(|k| !allow.allows(k))
            .map(|k| ConfigError::new(format!("fault.{k}"), allow.refusal(k)))
            .collect()
    }

    /// Deserialize the block into the sensor's all-optional fault struct `T`; a bad value is
    /// reported at `fault.<key>`.
    pub fn typed<T: DeserializeOwned>(&self) -> Result<T, Vec<ConfigError>> {
        let mut m = Mapping::new();
        for (k, v) in &self.0 {
            m.insert(Value::String(k.clone()), v.clone());
        }
        crate::plugin::typed_config::<T>(&Value::Mapping(m)).map_err(|es| {
            es.into_iter().map(|e| ConfigError::new(prefix_path(&e.path), e.message)).collect()
        })
    }
}

/// The on/off bit of one sensor's fault (physics thread only). A sensor with a `fault:` block
/// registers its switch on the blackboard under [`switch_key`] at configure and turns it off on
/// every reset (a fault does not survive reset); [`FaultService`] is the scenario side that flips it.
pub use super::override_switch::FaultSwitch;

/// Blackboard key of the [`FaultSwitch`] of the sensor at `address`.
pub fn switch_key(address: &str) -> String {
    format!("sensor_fault:{address}")
}

/// `fault` or `fault.<sub>`.
pub fn prefix_path(sub: &str) -> String {
    if sub.is_empty() {
        "fault".to_string()
    } else {
        format!("fault.{sub}")
    }
}

/// Check and type a `fault:` block in one go: refusals first (a refused key is not typed).
pub fn parse<T: DeserializeOwned>(
    block: &FaultBlock,
    allow: &FaultAllowlist,
) -> Result<T, Vec<ConfigError>> {
    let errs = block.check(allow);
    if !errs.is_empty() {
        return Err(errs);
    }
    block.typed::<T>()
}

// ------------------------------------------------------------------ the switch's transport side

/// Publish rate (Hz) of a sensor fault's `override_state` / `override_verified` endpoints.
pub const OVERRIDE_RATE_HZ: f64 = 10.0;

/// The endpoint path of the sensor at `address`: its dotted address with dots as slashes (a dot
/// is not legal in a ROS name; a bare `lidar` would name neither of a robot's two lidars).
pub fn override_path(address: &str) -> String {
    address.replace('.', "/")
}

/// What switching a fault block reports (the words every override switch uses): `(verdict,
/// message)`. Applying a block whose values equal the nominal ones is `no_effect` (an unfaulted
/// outcome wearing a faulted label is worse than a failed run); a restore has nothing to verify and
/// is `untested`; any other apply is `landed` (the next frame reads the fault values).
pub fn verdict(on: bool, equals_nominal: bool, address: &str) -> (Verdict, String) {
    match (on, equals_nominal) {
        (false, _) => (Verdict::Untested, format!("untested: `{address}` restored to its nominal config (nothing to verify)")),
        (true, true) => (
            Verdict::NoEffect,
            format!("no_effect: the fault block of `{address}` equals its nominal config, so applying it changed nothing; give the fault values that differ"),
        ),
        (true, false) => (Verdict::Landed, format!("landed: `{address}` reads its fault values from the next frame")),
    }
}

/// In-process switch of one sensor's fault (blackboard `sensor_override:<address>`): what
/// `set_sensor_override(instance, active)` calls in a ROS-free run. A request takes effect at the
/// sensor's next post_step.
pub type SensorOverrideHandle = OverrideHandle;

/// Blackboard key of the [`SensorOverrideHandle`] of the sensor at `address`.
pub fn override_key(address: &str) -> String {
    format!("sensor_override:{address}")
}

/// The transport side of a sensor's fault switch, an [`OverrideSwitch`] at
/// `<address/with/slashes>/override` (with `override_state` and `override_verified` published at
/// [`OVERRIDE_RATE_HZ`]). A sensor with a `fault:` block registers one in `configure`, calls
/// [`FaultService::poll`] at the top of its `post_step` (so the frame of that step already reads
/// the switched values) and [`FaultService::reset`] in `on_reset` (a fault does not survive reset).
pub struct FaultService {
    address: String,
    equals_nominal: bool,
    switch: OverrideSwitch,
}

impl FaultService {
    /// Register the endpoints and the blackboard handle for the sensor at `address` (owned by
    /// entity `owner`). `equals_nominal`: the fault block's values are the nominal ones.
    pub fn register(
        ctx: &mut crate::context::SimContext,
        address: &str,
        owner: Option<&str>,
        switch: FaultSwitch,
        equals_nominal: bool,
    ) -> FaultService {
        let path = format!("{}/", override_path(address));
        let at = SwitchEndpoints { path: &path, owner, namespace: None, rate_hz: OVERRIDE_RATE_HZ };
        let switch = OverrideSwitch::register(
            ctx,
            at,
            override_key(address),
            format!("`{address}`"),
            switch,
        );
        FaultService { address: address.to_string(), equals_nominal, switch }
    }

    /// Take the requests delivered since the last call (service calls and handle requests, in
    /// order), switch, answer every call, and publish the state on due ticks.
    pub fn poll(&mut self, ctx: &mut crate::context::SimContext) {
        if let Some(on) = self.switch.take_request(ctx) {
            self.switch.set(on, false);
            let (word, message) = verdict(on, self.equals_nominal, &self.address);
            if word == Verdict::NoEffect {
                tracing::warn!("{message}");
            }
            self.switch.answer(on, word, &message);
        }
        self.switch.publish(ctx);
    }

    /// Back to nominal (reset): the switch off, the verdict `untested`, pending requests dropped.
    pub fn reset(&mut self) {
        self.switch.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALLOW: FaultAllowlist = FaultAllowlist {
        sensor: "lidar",
        per_frame: &["range_stddev", "dropout_percent"],
        refused: &[
            ("rays", Refusal::Layout("a LaserScan's length")),
            ("site", Refusal::ConfiguredOnce),
        ],
    };

    #[derive(Debug, Deserialize, Default)]
    #[serde(deny_unknown_fields)]
    struct F {
        range_stddev: Option<f64>,
        dropout_percent: Option<f64>,
    }

    fn block(y: &str) -> FaultBlock {
        serde_norway::from_str(y).unwrap()
    }

    #[test]
    fn refuses_layout_and_configure_keys_with_reason() {
        let e = block("{rays: 720, site: x, range_stddev: 0.1, bogus: 1}").check(&ALLOW);
        assert_eq!(e.len(), 3);
        let by = |p: &str| e.iter().find(|x| x.path == p).unwrap().message.clone();
        assert!(by("fault.rays").contains("changes the message layout (a LaserScan's length)"));
        assert!(by("fault.site").contains("consumed once at configure"));
        assert!(by("fault.bogus").contains("unknown key `bogus`"));
        assert!(by("fault.rays").contains("range_stddev, dropout_percent"));
    }

    #[test]
    fn types_values_and_names_bad_ones() {
        let f: F = parse(&block("{dropout_percent: 20}"), &ALLOW).unwrap();
        assert_eq!(f.dropout_percent, Some(20.0));
        assert_eq!(f.range_stddev, None);
        let e = parse::<F>(&block("{range_stddev: lots}"), &ALLOW).unwrap_err();
        assert_eq!(e[0].path, "fault.range_stddev");
    }
}
