//! Config of the `ros2_bridge` plugin.
//!
//! ROS-free on purpose: the struct, its defaults and its refusals build and test with plain
//! `cargo test`; only the plugin that uses it (`bridge.rs`) needs the `ros` feature.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};

use crate::error::ConfigError;
use crate::plugin::ValidateConfig;
use crate::ros::names;

/// Config of `ros2_bridge`: one bridge serves the whole world.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BridgeConfig {
    /// Global outer namespace put in front of every relative topic (`sim` → `/sim/robot1/odom`).
    /// Absolute (hardwired) topics, /clock and the TF topics are not affected. Default "" (none).
    #[serde(default)]
    pub namespace: String,
    /// Serve only endpoints owned by these entities (an entity name, or any entity under it:
    /// `robot1` also takes `robot1.arm`). Default: every endpoint. For splitting a world's
    /// endpoints across several transports on purpose.
    #[serde(default)]
    pub owners: Option<Vec<String>>,
    /// Publish TF on `/<tf_namespace>/tf` and `/<tf_namespace>/tf_static` instead of the global
    /// `/tf`, `/tf_static` (a namespaced Nav2 bringup remaps `/tf -> tf`). Frame ids are not
    /// changed by it. Set by `roqsim sim --tf-namespace NS`. Default: none (global TF).
    #[serde(default)]
    pub tf_namespace: Option<String>,
    /// Extra prefix in front of every frame id the bridge publishes, before the endpoint's own
    /// prefix (`sim` → `sim/robot1/base_link`; a trailing `/` is added). Default "" (none).
    #[serde(default)]
    pub frame_prefix: String,
    /// /clock (rosgraph_msgs/Clock) rate in Hz, snapped to the physics grid; a rate at or above
    /// the physics rate publishes every step. Default: [`DEFAULT_CLOCK_HZ`] as an exact
    /// decimation of the physics rate (every 5th step at 500 Hz; every step below 100 Hz).
    /// Whatever the rate, /clock also goes out after the last step a StepSimulation /
    /// SimulateSteps request or the viewer asked for, on pause, on reset and when the run ends,
    /// so ROS time is never stale while the simulation stands still.
    #[serde(default)]
    pub clock_rate_hz: Option<f64>,
    /// Publish /clock at all. Default true. (Off only when another process owns the clock.)
    #[serde(default = "crate::plugin::yes")]
    pub publish_clock: bool,
    /// Merged joint_states: `auto` (default: one merged topic per entity that declares several
    /// joint_states endpoints on different topics, in the scope they share), `true` (one
    /// `/joint_states` across all entities), `false` (never), or a list of groups
    /// `{topic, owners}` stated outright.
    #[serde(default, deserialize_with = "merged_from_value")]
    #[schemars(with = "MergedSchema")]
    pub merged_joint_states: MergedJointStates,
    /// Per-endpoint rate overrides (Hz), keyed by endpoint name (`scan`, every namespace) or
    /// `<namespace>/<name>` (`robot1/scan`). The bridge publishes that endpoint at this rate,
    /// snapped to the producer's own publication grid (a multiple of its spacing, since the bridge
    /// can only forward what was produced). Default: none.
    #[serde(default)]
    pub rates: BTreeMap<String, f64>,
    /// ROS node name. Default `roqsim`.
    #[serde(default = "default_node_name")]
    pub node_name: String,
    /// Check the ROS graph once a second and end the run when a peer of another message type sits
    /// on one of our topics (naming the topic, both types and both sides). Default true.
    #[serde(default = "crate::plugin::yes")]
    pub type_check: bool,
    /// Benchmark aid: write one line per outbound message (`topic stamp_ns wall_ns`, wall time in
    /// ns since the Unix epoch taken right after the physics step that produced it) to this file
    /// when the bridge shuts down. Default: none.
    #[serde(default)]
    pub latency_trace: Option<String>,
    /// Wall seconds to keep the node up at shutdown so the last messages (the final /clock)
    /// reach peers that are subscribed. Default 0.3 s; 0 = exit at once.
    #[serde(default = "default_linger")]
    pub linger_s: f64,
}

/// Default /clock rate (Hz): with `use_sim_time`, rclcpp timers fire only when /clock moves, so
/// 100 Hz does not quantise a 20 Hz control loop, at a fifth of the messages of every step.
pub const DEFAULT_CLOCK_HZ: f64 = 100.0;

impl BridgeConfig {
    /// The /clock rate (Hz) to bind at `physics_hz`: `clock_rate_hz` (capped at the physics rate,
    /// i.e. every step), or by default the decimation of `physics_hz` nearest [`DEFAULT_CLOCK_HZ`]
    /// (exactly `physics_hz / k`, so binding it never warns).
    pub fn clock_hz(&self, physics_hz: f64) -> f64 {
        match self.clock_rate_hz {
            Some(hz) => hz.min(physics_hz),
            None => {
                let k = crate::engine::rates::snap_rate(DEFAULT_CLOCK_HZ, physics_hz).every_steps;
                physics_hz / k as f64
            }
        }
    }
}

fn default_node_name() -> String {
    "roqsim".to_string()
}
fn default_linger() -> f64 {
    0.3
}

impl Default for BridgeConfig {
    fn default() -> Self {
        BridgeConfig {
            namespace: String::new(),
            owners: None,
            tf_namespace: None,
            frame_prefix: String::new(),
            clock_rate_hz: None,
            publish_clock: true,
            merged_joint_states: MergedJointStates::Auto,
            rates: BTreeMap::new(),
            node_name: default_node_name(),
            type_check: true,
            latency_trace: None,
            linger_s: default_linger(),
        }
    }
}

/// How joint_states endpoints are merged.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum MergedJointStates {
    /// One merged publisher per entity with several joint_states endpoints on different topics.
    #[default]
    Auto,
    /// One `/joint_states` across every entity.
    All,
    /// Never merge.
    Off,
    /// Groups stated outright.
    Groups(Vec<MergeGroup>),
}

/// One explicit merged joint_states group.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MergeGroup {
    /// Topic of the merged publisher (absolute, or relative to the bridge `namespace`).
    pub topic: String,
    /// Entities whose joint_states endpoints it carries, in this order.
    pub owners: Vec<String>,
}

/// Schema-only shape of `merged_joint_states` (`roqsim plugins describe`).
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum MergedSchema {
    /// `auto`
    Keyword(AutoKeyword),
    /// `true` / `false`
    Flag(bool),
    /// groups
    Groups(Vec<MergeGroup>),
}

#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum AutoKeyword {
    Auto,
}

fn merged_from_value<'de, D: Deserializer<'de>>(d: D) -> Result<MergedJointStates, D::Error> {
    use serde::de::Error;
    let v = serde_norway::Value::deserialize(d)?;
    const HOW: &str = "merged_joint_states takes `auto`, `true`, `false`, or a list of groups `{topic: /joint_states, owners: [robot1, robot2]}`";
    match v {
        serde_norway::Value::Null => Ok(MergedJointStates::Auto),
        serde_norway::Value::Bool(true) => Ok(MergedJointStates::All),
        serde_norway::Value::Bool(false) => Ok(MergedJointStates::Off),
        serde_norway::Value::String(s) if s == "auto" => Ok(MergedJointStates::Auto),
        serde_norway::Value::Sequence(items) => {
            let mut groups = Vec::new();
            for (i, item) in items.into_iter().enumerate() {
                let g: MergeGroup = serde_norway::from_value(item).map_err(|e| {
                    let e = crate::error::plain_serde(&e.to_string());
                    D::Error::custom(format!("group [{i}]: {e} ({HOW})"))
                })?;
                groups.push(g);
            }
            Ok(MergedJointStates::Groups(groups))
        }
        other => Err(D::Error::custom(format!(
            "got `{}`: {HOW}",
            serde_norway::to_string(&other).unwrap_or_default().trim()
        ))),
    }
}

impl ValidateConfig for BridgeConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if let Err(m) = names::check_namespace(&self.namespace) {
            e.push(ConfigError::new("namespace", m));
        }
        if let Some(ns) = &self.tf_namespace {
            if ns.trim_matches('/').is_empty() {
                e.push(ConfigError::new(
                    "tf_namespace",
                    "empty: omit it for the global /tf, or name the robot's namespace (`robot1`)",
                ));
            } else if let Err(m) = names::check_namespace(ns) {
                e.push(ConfigError::new("tf_namespace", m));
            }
        }
        if let Err(m) = names::check_frame_prefix(&self.frame_prefix) {
            e.push(ConfigError::new("frame_prefix", m));
        }
        if let Some(hz) = self.clock_rate_hz {
            let min = crate::engine::rates::MIN_RATE_HZ;
            if !(hz >= min && hz.is_finite()) {
                e.push(ConfigError::new("clock_rate_hz", format!("must be a rate of at least {min} Hz, got {hz}; omit it for the default {DEFAULT_CLOCK_HZ} Hz, or give the physics rate to publish every step")));
            }
        }
        for (k, hz) in &self.rates {
            let min = crate::engine::rates::MIN_RATE_HZ;
            if !(*hz >= min && hz.is_finite()) {
                e.push(ConfigError::new(
                    format!("rates.{k}"),
                    format!("must be a rate of at least {min} Hz, got {hz}"),
                ));
            }
        }
        if let Some(o) = &self.owners {
            if o.is_empty() {
                e.push(ConfigError::new(
                    "owners",
                    "an empty owner list serves nothing: omit `owners` to serve every endpoint",
                ));
            }
        }
        if let MergedJointStates::Groups(gs) = &self.merged_joint_states {
            let mut seen = BTreeMap::new();
            for (i, g) in gs.iter().enumerate() {
                if let Err(m) = names::check_topic(&g.topic) {
                    e.push(ConfigError::new(format!("merged_joint_states[{i}].topic"), m));
                }
                if g.owners.is_empty() {
                    e.push(ConfigError::new(
                        format!("merged_joint_states[{i}].owners"),
                        "empty: name the entities whose joint states this group merges",
                    ));
                }
                if let Some(j) = seen.insert(g.topic.clone(), i) {
                    e.push(ConfigError::new(
                        format!("merged_joint_states[{i}].topic"),
                        format!(
                            "`{}` is also group [{j}]'s topic: one merged publisher per topic",
                            g.topic
                        ),
                    ));
                }
            }
        }
        if self.node_name.is_empty()
            || !self.node_name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || self.node_name.starts_with(|c: char| c.is_ascii_digit())
        {
            e.push(ConfigError::new(
                "node_name",
                format!(
                    "`{}` is not a ROS node name (letters, digits, `_`; not starting with a digit)",
                    self.node_name
                ),
            ));
        }
        if !(self.linger_s >= 0.0 && self.linger_s.is_finite() && self.linger_s <= 10.0) {
            e.push(ConfigError::new(
                "linger_s",
                format!("must be in [0, 10] s, got {}", self.linger_s),
            ));
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::typed_config;

    fn parse(y: &str) -> Result<BridgeConfig, Vec<ConfigError>> {
        let v: serde_norway::Value = serde_norway::from_str(y).unwrap();
        let c: BridgeConfig = typed_config(&v)?;
        let e = c.validate();
        if e.is_empty() {
            Ok(c)
        } else {
            Err(e)
        }
    }

    #[test]
    fn defaults() {
        let c = parse("{}").unwrap();
        assert_eq!(c, BridgeConfig::default());
        assert_eq!(c.merged_joint_states, MergedJointStates::Auto);
        assert_eq!(c.node_name, "roqsim");
        assert!(c.publish_clock && c.type_check);
    }

    #[test]
    fn merged_forms() {
        assert_eq!(
            parse("{merged_joint_states: auto}").unwrap().merged_joint_states,
            MergedJointStates::Auto
        );
        assert_eq!(
            parse("{merged_joint_states: true}").unwrap().merged_joint_states,
            MergedJointStates::All
        );
        assert_eq!(
            parse("{merged_joint_states: false}").unwrap().merged_joint_states,
            MergedJointStates::Off
        );
        let c =
            parse("{merged_joint_states: [{topic: /cell/joint_states, owners: [l, r]}]}").unwrap();
        assert_eq!(
            c.merged_joint_states,
            MergedJointStates::Groups(vec![MergeGroup {
                topic: "/cell/joint_states".into(),
                owners: vec!["l".into(), "r".into()]
            }])
        );
    }

    #[test]
    fn clock_defaults_to_an_exact_decimation_near_100_hz() {
        let d = BridgeConfig::default();
        assert_eq!(d.clock_hz(500.0), 100.0);
        assert_eq!(d.clock_hz(1000.0), 100.0);
        assert_eq!(d.clock_hz(60.0), 60.0, "every step below 100 Hz");
        assert_eq!(
            d.clock_hz(1000.0 / 3.0),
            (1000.0 / 3.0) / 3.0,
            "every 3rd step: nearest 100 Hz"
        );
        let every = parse("{clock_rate_hz: 500}").unwrap();
        assert_eq!(every.clock_hz(500.0), 500.0);
        assert_eq!(
            parse("{clock_rate_hz: 1e6}").unwrap().clock_hz(500.0),
            500.0,
            "capped: every step"
        );
        assert_eq!(parse("{clock_rate_hz: 30}").unwrap().clock_hz(500.0), 30.0);
        let e = parse("{clock_rate_hz: 0}").unwrap_err();
        assert!(
            e[0].message.contains("omit it for the default 100 Hz, or give the physics rate"),
            "{}",
            e[0].message
        );
        let e = parse("{clock_rate_hz: 1e-9}").unwrap_err();
        assert!(
            e[0].message.starts_with("must be a rate of at least 0.001 Hz, got 1e-9;"),
            "{}",
            e[0].message
        );
    }

    #[test]
    fn refusals_name_the_key() {
        let e = parse("{merged_joint_states: sometimes}").unwrap_err();
        assert_eq!(e[0].path, "merged_joint_states");
        assert!(e[0].message.contains("takes `auto`, `true`, `false`"), "{}", e[0].message);
        let e = parse("{merged_joint_states: [{topic: /js}]}").unwrap_err();
        assert!(
            e[0].message.contains("group [0]") && e[0].message.contains("owners"),
            "{}",
            e[0].message
        );
        let e = parse("{clock_rate_hz: 0}").unwrap_err();
        assert_eq!(e[0].path, "clock_rate_hz");
        let e = parse("{tf_namespace: 'a b'}").unwrap_err();
        assert_eq!(e[0].path, "tf_namespace");
        let e = parse("{rates: {scan: -1}}").unwrap_err();
        assert_eq!(e[0].path, "rates.scan");
        let e = parse("{bogus: 1}").unwrap_err();
        assert!(e[0].message.contains("unknown field `bogus`"), "{}", e[0].message);
        let e = parse("{owners: []}").unwrap_err();
        assert_eq!(e[0].path, "owners");
        let e =
            parse("{merged_joint_states: [{topic: /a, owners: [x]}, {topic: /a, owners: [y]}]}")
                .unwrap_err();
        assert_eq!(e[0].path, "merged_joint_states[1].topic");
        let e = parse("{node_name: 'my node'}").unwrap_err();
        assert_eq!(e[0].path, "node_name");
    }
}
