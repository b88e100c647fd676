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

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_norway::{Mapping, Value};

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
#[derive(Debug, Clone, Default)]
pub struct FaultSwitch(Rc<Cell<bool>>);

impl FaultSwitch {
    /// Apply (`true`) or restore (`false`) the fault values.
    pub fn set(&self, on: bool) {
        self.0.set(on);
    }
    /// Whether the fault values are in force.
    pub fn is_on(&self) -> bool {
        self.0.get()
    }
}

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

/// What switching a fault block reports (the same words `model_override` uses): `(verdict,
/// success, message)`. Applying a block whose values equal the nominal ones is `no_effect` (an
/// unfaulted outcome wearing a faulted label is worse than a failed run); a restore has nothing to
/// verify and is `untested`; any other apply is `landed` (the next frame reads the fault values).
pub fn verdict(on: bool, equals_nominal: bool, address: &str) -> (&'static str, bool, String) {
    match (on, equals_nominal) {
        (false, _) => ("untested", true, format!("untested: `{address}` restored to its nominal config (nothing to verify)")),
        (true, true) => (
            "no_effect",
            false,
            format!("no_effect: the fault block of `{address}` equals its nominal config, so applying it changed nothing; give the fault values that differ"),
        ),
        (true, false) => ("landed", true, format!("landed: `{address}` reads its fault values from the next frame")),
    }
}

#[derive(Debug, Default)]
struct OverrideShared {
    verified: String,
    message: String,
    requests: std::collections::VecDeque<bool>,
}

/// In-process switch of one sensor's fault (blackboard `sensor_override:<address>`): what
/// `set_sensor_override(instance, active)` calls in a ROS-free run. A request takes effect at the
/// sensor's next post_step.
#[derive(Debug, Clone)]
pub struct SensorOverrideHandle {
    switch: FaultSwitch,
    shared: Rc<std::cell::RefCell<OverrideShared>>,
}

impl SensorOverrideHandle {
    /// Apply (`true`) or restore (`false`) the fault block at the sensor's next post_step.
    pub fn set_active(&self, on: bool) {
        self.shared.borrow_mut().requests.push_back(on);
    }
    /// Whether the fault values are in force.
    pub fn active(&self) -> bool {
        self.switch.is_on()
    }
    /// The latest verdict word (`landed`, `no_effect`, `untested`).
    pub fn verified(&self) -> String {
        self.shared.borrow().verified.clone()
    }
    /// The latest verdict's message.
    pub fn message(&self) -> String {
        self.shared.borrow().message.clone()
    }
}

/// Blackboard key of the [`SensorOverrideHandle`] of the sensor at `address`.
pub fn override_key(address: &str) -> String {
    format!("sensor_override:{address}")
}

/// The transport side of a sensor's fault switch: an inbound `<address/with/slashes>/override`
/// endpoint (ROS 2 service std_srvs/SetBool: a [`crate::context::payload::ServiceCall`] whose
/// request is `Payload::Bool(on)`, answered with
/// `Payload::Ack { success, message }`), and `<path>/override_state` (std_msgs/Bool) and
/// `<path>/override_verified` (std_msgs/String) published at [`OVERRIDE_RATE_HZ`]. A sensor with
/// a `fault:` block registers one in `configure`, calls [`FaultService::poll`] at the top of its
/// `post_step` (so the frame of that step already reads the switched values) and
/// [`FaultService::reset`] in `on_reset` (a fault does not survive reset).
pub struct FaultService {
    address: String,
    switch: FaultSwitch,
    equals_nominal: bool,
    shared: Rc<std::cell::RefCell<OverrideShared>>,
    ep_in: crate::context::EndpointId,
    ep_state: crate::context::EndpointId,
    ep_verified: crate::context::EndpointId,
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
        use crate::context::Endpoint;
        let path = override_path(address);
        let shared = Rc::new(std::cell::RefCell::new(OverrideShared {
            verified: "untested".into(),
            ..Default::default()
        }));
        let ep_in =
            ctx.interface.add(Endpoint::input(&format!("{path}/override")).owner(owner).hint(
                "ros2",
                "service",
                "std_srvs/srv/SetBool",
            ));
        let ep_state = ctx.interface.add(
            Endpoint::out(&format!("{path}/override_state"))
                .owner(owner)
                .rate(OVERRIDE_RATE_HZ)
                .hint("ros2", "type", "std_msgs/msg/Bool")
                .hint("ros2", "qos", "reliable"),
        );
        let ep_verified = ctx.interface.add(
            Endpoint::out(&format!("{path}/override_verified"))
                .owner(owner)
                .rate(OVERRIDE_RATE_HZ)
                .hint("ros2", "type", "std_msgs/msg/String")
                .hint("ros2", "qos", "reliable"),
        );
        ctx.blackboard.set(
            override_key(address),
            SensorOverrideHandle { switch: switch.clone(), shared: shared.clone() },
        );
        FaultService {
            address: address.to_string(),
            switch,
            equals_nominal,
            shared,
            ep_in,
            ep_state,
            ep_verified,
        }
    }

    /// Take the requests delivered since the last call (service calls and handle requests, in
    /// order), switch, answer every call, and publish the state on due ticks.
    pub fn poll(&mut self, ctx: &mut crate::context::SimContext) {
        use crate::context::payload::Payload;
        let mut switched: Option<bool> = None;
        let mut replies = Vec::new();
        for p in ctx.interface.drain(self.ep_in) {
            match p {
                Payload::Call(call) => match *call.request {
                    Payload::Bool(on) => {
                        switched = Some(on);
                        replies.push((on, call.reply));
                    }
                    other => {
                        let _ = call.reply.send(Payload::Ack { success: false, message: format!("`override` is a std_srvs/SetBool service: the request must be a Bool, got {}", other.kind()) });
                    }
                },
                Payload::Bool(on) => switched = Some(on),
                other => tracing::warn!(
                    "`{}`: ignored a {} delivered to `override` (expects a SetBool call)",
                    self.address,
                    other.kind()
                ),
            }
        }
        let queued: Vec<bool> = self.shared.borrow_mut().requests.drain(..).collect();
        if let Some(&on) = queued.last() {
            switched = Some(on);
        }
        if let Some(on) = switched {
            self.switch.set(on);
            let (word, success, message) = verdict(on, self.equals_nominal, &self.address);
            if word == "no_effect" {
                tracing::warn!("{message}");
            }
            {
                let mut s = self.shared.borrow_mut();
                s.verified = word.into();
                s.message = message.clone();
            }
            for (asked, tx) in replies {
                let (ok, msg) = if asked == on {
                    (success, message.clone())
                } else {
                    (false, format!("superseded: a later request in the same step set active = {on}; {message}"))
                };
                let _ = tx.send(Payload::Ack { success: ok, message: msg });
            }
        }
        let tick = ctx.tick;
        if ctx.interface.is_due(self.ep_state, tick) {
            ctx.interface.publish(self.ep_state, tick, Payload::Bool(self.switch.is_on()));
        }
        if ctx.interface.is_due(self.ep_verified, tick) {
            let v = self.shared.borrow().verified.clone();
            ctx.interface.publish(self.ep_verified, tick, Payload::String(v));
        }
    }

    /// Back to nominal (reset): the switch off, the verdict `untested`, pending requests dropped.
    pub fn reset(&mut self) {
        self.switch.set(false);
        let mut s = self.shared.borrow_mut();
        s.verified = "untested".into();
        s.message.clear();
        s.requests.clear();
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
