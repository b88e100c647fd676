//! The wiring plan: which ROS entity serves which endpoint, on what topic, with what type, QoS and
//! frame prefix; which endpoints feed /tf and /tf_static; which joint_states are merged; which
//! rates the bridge gates on.
//!
//! ROS-free: the plan is computed from the endpoint registry and the bridge config alone, so
//! every naming, routing and merging rule is tested by plain `cargo test`. `bridge.rs` then
//! creates one r2r publisher / subscription per row.

use crate::context::{Direction, Endpoint, EndpointId, Interface};
use crate::engine::rates::{snap_rate, SnappedRate};
use crate::ros::config::{BridgeConfig, MergedJointStates};
use crate::ros::names;

/// Backend key of the ROS 2 hints on an endpoint.
pub const BACKEND: &str = "ros2";
/// The wire type of joint states.
pub const JOINT_STATE: &str = "sensor_msgs/msg/JointState";
/// The wire type of TF.
pub const TF_MESSAGE: &str = "tf2_msgs/msg/TFMessage";

/// QoS profile of a publisher or subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Qos {
    /// Best effort, keep last 5, volatile (`rmw_qos_profile_sensor_data`): scan, imu, images.
    SensorData,
    /// Reliable, keep last 10, volatile (the ROS default): odom, joint_states, cmd_vel.
    Reliable,
    /// Reliable, keep last 100, volatile: /tf (as tf2_ros's TransformBroadcaster).
    Tf,
    /// Reliable, keep last 1, transient local: /tf_static (a late joiner gets the latched set).
    TransientLocal,
}

impl Qos {
    /// From the endpoint's `qos` hint (`sensor_data` | `reliable` | `transient_local`); default reliable.
    pub fn from_hint(h: Option<&str>) -> Result<Qos, String> {
        match h {
            None | Some("reliable") | Some("default") => Ok(Qos::Reliable),
            Some("sensor_data") | Some("best_effort") => Ok(Qos::SensorData),
            Some("transient_local") | Some("latched") => Ok(Qos::TransientLocal),
            Some(o) => {
                Err(format!("unknown qos hint `{o}`: use sensor_data, reliable or transient_local"))
            }
        }
    }
}

/// An outbound endpoint with a publisher of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct OutPlan {
    /// The endpoint.
    pub id: EndpointId,
    /// `namespace/name` (for messages and the rate table).
    pub label: String,
    /// Resolved absolute topic.
    pub topic: String,
    /// Wire type, `pkg/msg/Type`.
    pub msg_type: String,
    /// QoS.
    pub qos: Qos,
    /// Prefix applied to every frame id of this endpoint's messages (bridge + endpoint prefix).
    pub frame_prefix: String,
    /// `frame_id` hint: used when the payload leaves its frame empty.
    pub frame_id_hint: Option<String>,
    /// `field` hint: publish this member of a structured payload as a primitive.
    pub field: Option<String>,
    /// A `rates:` override, as requested (Hz).
    pub rate_override: Option<f64>,
    /// Lazy: the producer skips work while this publisher has no subscribers.
    pub lazy: bool,
}

/// Where a TF-carrying endpoint goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TfRoute {
    /// Into the bridge's /tf message of this tick.
    Dynamic,
    /// Into the accumulated, latched /tf_static set.
    Static,
}

/// An endpoint whose payload joins the bridge's TF topics.
#[derive(Debug, Clone, PartialEq)]
pub struct TfPlan {
    /// The endpoint.
    pub id: EndpointId,
    /// Static or dynamic.
    pub route: TfRoute,
    /// Frame prefix (bridge + endpoint).
    pub frame_prefix: String,
}

/// What an inbound endpoint is served as.
#[derive(Debug, Clone, PartialEq)]
pub enum InKind {
    /// A subscription (the `type` hint): a stream with no reply.
    Topic {
        /// `pkg/msg/Type`.
        msg_type: String,
        /// QoS.
        qos: Qos,
    },
    /// A service server (the `service` hint): a command whose outcome the caller needs.
    Service {
        /// `pkg/srv/Type`.
        srv_type: String,
    },
    /// An action server (the `action` hint): a goal that takes time.
    Action {
        /// `pkg/action/Type`.
        action_type: String,
    },
}

/// An inbound endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct InPlan {
    /// The endpoint.
    pub id: EndpointId,
    /// `namespace/name`.
    pub label: String,
    /// Resolved absolute topic / service / action name.
    pub name: String,
    /// How it is served.
    pub kind: InKind,
    /// Frame prefix (bridge + endpoint), stripped from inbound frame ids when present.
    pub frame_prefix: String,
}

/// One merged joint_states publisher.
#[derive(Debug, Clone, PartialEq)]
pub struct MergedPlan {
    /// Absolute topic.
    pub topic: String,
    /// Member endpoints, in merge order.
    pub members: Vec<EndpointId>,
    /// Requested rate (Hz): the fastest member's realised rate.
    pub requested_hz: f64,
}

/// The whole wiring.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    /// Outbound endpoints with their own publisher.
    pub outputs: Vec<OutPlan>,
    /// Endpoints feeding /tf and /tf_static.
    pub tf: Vec<TfPlan>,
    /// Inbound endpoints. (Odometry endpoints among `outputs` also feed /tf when their payload
    /// asks, `publish_tf`.)
    pub inputs: Vec<InPlan>,
    /// Merged joint_states publishers.
    pub merged: Vec<MergedPlan>,
    /// /tf topic.
    pub tf_topic: String,
    /// /tf_static topic.
    pub tf_static_topic: String,
    /// Notes (info level): endpoints deliberately not served, and why.
    pub notes: Vec<String>,
    /// Warnings.
    pub warnings: Vec<String>,
}

/// `namespace/name` of an endpoint.
pub fn label(ep: &Endpoint) -> String {
    if ep.namespace.is_empty() {
        ep.name.clone()
    } else {
        format!("{}/{}", ep.namespace, ep.name)
    }
}

fn hint<'a>(ep: &'a Endpoint, key: &str) -> Option<&'a str> {
    ep.get_hint(BACKEND, key).filter(|s| !s.is_empty())
}

/// Build the plan for every endpoint in `iface` that passes the owner filter. Errors name the
/// endpoint and the fix.
pub fn build(iface: &Interface, cfg: &BridgeConfig) -> Result<Plan, Vec<String>> {
    build_with_robots(iface, cfg, &|owner: &str| owner.to_string())
}

/// [`build`], with `robot_of` naming the physical robot an owner belongs to (an arm mounted on a
/// base is part of the base's robot), which is what `merged_joint_states: auto` groups by.
pub fn build_with_robots(
    iface: &Interface,
    cfg: &BridgeConfig,
    robot_of: &dyn Fn(&str) -> String,
) -> Result<Plan, Vec<String>> {
    let mut errors = Vec::new();
    let (tf_topic, tf_static_topic) = names::tf_topics(cfg.tf_namespace.as_deref());
    let mut plan = Plan { tf_topic, tf_static_topic, ..Default::default() };
    let owners = cfg.owners.as_deref();
    check_owners(iface, owners, &mut errors);
    let mut used_rates: Vec<String> = Vec::new();
    for (id, ep) in iface.all().iter().enumerate() {
        if !names::owner_matches(owners, ep.owner.as_deref()) {
            continue;
        }
        let at = Placed::of(id, ep, cfg);
        let planned = match at.topic_hint.map(names::check_topic) {
            Some(Err(m)) => Err(format!("topic hint: {m}")),
            _ => match ep.direction {
                Direction::Out => plan_output(&at, cfg, &mut plan, &mut used_rates),
                Direction::In => plan_input(&at, cfg, &mut plan),
            },
        };
        if let Err(m) = planned {
            errors.push(format!("endpoint {}: {m}", at.label));
        }
    }
    check_rates_used(cfg, &used_rates, &plan, &mut errors);
    merge_joint_states(iface, cfg, robot_of, &mut plan, &mut errors);
    check_collisions(&plan, &mut errors);
    check_shared_topics(iface, robot_of, &plan, &mut errors);

    if errors.is_empty() {
        Ok(plan)
    } else {
        Err(errors)
    }
}

/// Every owner named must own something: a misspelt one would serve nothing without a word.
fn check_owners(iface: &Interface, owners: Option<&[String]>, errors: &mut Vec<String>) {
    for (i, o) in owners.unwrap_or_default().iter().enumerate() {
        let one = std::slice::from_ref(o);
        if !iface.all().iter().any(|ep| names::owner_matches(Some(one), ep.owner.as_deref())) {
            let mut known: Vec<&str> =
                iface.all().iter().filter_map(|ep| ep.owner.as_deref()).collect();
            known.sort();
            known.dedup();
            errors.push(format!(
                "owners[{i}]: `{o}` owns no endpoint, so it would serve nothing; owners in this world: [{}]",
                known.join(", ")
            ));
        }
    }
}

/// An endpoint as the plan places it: its id, label, frame prefix and ros2 topic hint.
struct Placed<'a> {
    id: EndpointId,
    ep: &'a Endpoint,
    label: String,
    frame_prefix: String,
    topic_hint: Option<&'a str>,
}

impl<'a> Placed<'a> {
    fn of(id: EndpointId, ep: &'a Endpoint, cfg: &BridgeConfig) -> Self {
        let frame_prefix = format!(
            "{}{}",
            names::normalize_prefix(&cfg.frame_prefix),
            names::normalize_prefix(&ep.frame_prefix)
        );
        Placed { id, ep, label: label(ep), frame_prefix, topic_hint: hint(ep, "topic") }
    }

    /// The resolved topic (or service / action name).
    fn topic(&self, cfg: &BridgeConfig) -> String {
        names::resolve_topic(&cfg.namespace, &self.ep.namespace, &self.ep.name, self.topic_hint)
    }
}

/// An out endpoint: onto /tf (a `tf` hint without a topic of its own), a TFMessage publisher of
/// its own (a `tf` hint renamed), or a publisher of its `type` hint with its `rates:` override.
/// Without a type it is noted and not published.
fn plan_output(
    at: &Placed,
    cfg: &BridgeConfig,
    plan: &mut Plan,
    used_rates: &mut Vec<String>,
) -> Result<(), String> {
    let (id, ep, lbl) = (at.id, at.ep, &at.label);
    if let Some(route) = hint(ep, "tf") {
        let route = match route {
            "static" => TfRoute::Static,
            "dynamic" => TfRoute::Dynamic,
            o => return Err(format!("tf hint `{o}`: use `static` or `dynamic`")),
        };
        let joins_tree = match at.topic_hint {
            None => true,
            Some(t) => t == "tf" || t == "tf_static",
        };
        if joins_tree {
            plan.tf.push(TfPlan { id, route, frame_prefix: at.frame_prefix.clone() });
            return Ok(());
        }
        // A TF payload renamed onto a topic of its own: a TFMessage publisher there.
        let qos = if route == TfRoute::Static { Qos::TransientLocal } else { Qos::Tf };
        plan.outputs.push(OutPlan {
            id,
            label: lbl.clone(),
            topic: at.topic(cfg),
            msg_type: TF_MESSAGE.to_string(),
            qos,
            frame_prefix: at.frame_prefix.clone(),
            frame_id_hint: None,
            field: None,
            rate_override: None,
            lazy: ep.lazy,
        });
        return Ok(());
    }
    let Some(msg_type) = hint(ep, "type").map(|t| names::normalize_type(t, "msg")) else {
        plan.notes.push(format!("endpoint {lbl} has no ros2 `type` hint: not published"));
        return Ok(());
    };
    let qos = Qos::from_hint(hint(ep, "qos"))?;
    let key = if cfg.rates.contains_key(lbl) {
        Some(lbl.clone())
    } else if cfg.rates.contains_key(&ep.name) {
        Some(ep.name.clone())
    } else {
        None
    };
    let rate_override = key.as_ref().map(|k| cfg.rates[k]);
    used_rates.extend(key);
    plan.outputs.push(OutPlan {
        id,
        label: lbl.clone(),
        topic: at.topic(cfg),
        msg_type,
        qos,
        frame_prefix: at.frame_prefix.clone(),
        frame_id_hint: hint(ep, "frame_id").map(str::to_string),
        field: hint(ep, "field").map(str::to_string),
        rate_override,
        lazy: ep.lazy,
    });
    Ok(())
}

/// An in endpoint: an action, a service or a subscription by its hints; without one it is noted
/// and not served.
fn plan_input(at: &Placed, cfg: &BridgeConfig, plan: &mut Plan) -> Result<(), String> {
    let ep = at.ep;
    let kind = if let Some(a) = hint(ep, "action") {
        InKind::Action { action_type: names::normalize_type(a, "action") }
    } else if let Some(s) = hint(ep, "service") {
        InKind::Service { srv_type: names::normalize_type(s, "srv") }
    } else if let Some(t) = hint(ep, "type") {
        InKind::Topic {
            msg_type: names::normalize_type(t, "msg"),
            qos: Qos::from_hint(hint(ep, "qos"))?,
        }
    } else {
        plan.notes.push(format!(
            "inbound endpoint {} has no ros2 `type`, `service` or `action` hint: not served",
            at.label
        ));
        return Ok(());
    };
    plan.inputs.push(InPlan {
        id: at.id,
        label: at.label.clone(),
        name: at.topic(cfg),
        kind,
        frame_prefix: at.frame_prefix.clone(),
    });
    Ok(())
}

/// Every `rates:` key must name a published endpoint.
fn check_rates_used(cfg: &BridgeConfig, used: &[String], plan: &Plan, errors: &mut Vec<String>) {
    for k in cfg.rates.keys() {
        if !used.contains(k) {
            let known: Vec<String> = plan.outputs.iter().map(|o| o.label.clone()).collect();
            errors.push(format!(
                "rates.{k}: no published endpoint is called `{k}` (by name or namespace/name); the bridge publishes: {}",
                known.join(", ")
            ));
        }
    }
}

/// Realised rate (Hz) an endpoint publishes at: its snapped rate, else the physics rate.
fn realised_hz(iface: &Interface, id: EndpointId) -> f64 {
    iface.get(id).snapped.map(|s| s.realised_hz).unwrap_or(iface.physics_hz())
}

/// The scope several namespaces share, by whole segments (`dual/left`, `dual/right` → `dual`).
pub fn common_scope(nss: &[&str]) -> String {
    let split: Vec<Vec<&str>> =
        nss.iter().map(|n| n.split('/').filter(|s| !s.is_empty()).collect()).collect();
    let Some(first) = split.first() else { return String::new() };
    let mut n = first.len();
    for s in &split[1..] {
        n = n.min(s.iter().zip(first).take_while(|(a, b)| a == b).count());
    }
    first[..n].join("/")
}

/// The bridge's gate for an endpoint with a `rates:` override: forward every `every_steps`-th
/// step, a whole multiple of the producer's own spacing `producer_every` (the bridge can only
/// forward what was produced), nearest to the request.
pub fn snap_override(requested_hz: f64, physics_hz: f64, producer_every: u64) -> SnappedRate {
    let p = producer_every.max(1);
    let on_producer_grid = snap_rate(requested_hz, physics_hz / p as f64);
    let every = on_producer_grid.every_steps * p;
    SnappedRate { requested_hz, realised_hz: physics_hz / every as f64, every_steps: every }
}

mod checks;
use checks::{check_collisions, check_shared_topics, merge_joint_states};

#[cfg(test)]
mod tests;
