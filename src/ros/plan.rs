//! The wiring plan: which ROS entity serves which endpoint, on what topic, with what type, QoS and
//! frame prefix; which endpoints feed /tf and /tf_static; which joint_states are merged; which
//! rates the bridge gates on.
//!
//! ROS-free: the plan is computed from the endpoint registry and the bridge config alone, so
//! every naming, routing and merging rule is tested by plain `cargo test`. `bridge.rs` then
//! creates one r2r publisher / subscription per row.

use std::collections::BTreeMap;

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
    let mut used_rates: Vec<String> = Vec::new();
    // Every owner named must own something: a misspelt one would serve nothing without a word.
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

    for (id, ep) in iface.all().iter().enumerate() {
        if !names::owner_matches(owners, ep.owner.as_deref()) {
            continue;
        }
        let lbl = label(ep);
        let frame_prefix = format!(
            "{}{}",
            names::normalize_prefix(&cfg.frame_prefix),
            names::normalize_prefix(&ep.frame_prefix)
        );
        let topic_hint = hint(ep, "topic");
        if let Some(t) = topic_hint {
            if let Err(m) = names::check_topic(t) {
                errors.push(format!("endpoint {lbl}: topic hint: {m}"));
                continue;
            }
        }
        match ep.direction {
            Direction::Out => {
                let tf = hint(ep, "tf");
                let msg_type = hint(ep, "type").map(|t| names::normalize_type(t, "msg"));
                if let Some(route) = tf {
                    let route = match route {
                        "static" => TfRoute::Static,
                        "dynamic" => TfRoute::Dynamic,
                        o => {
                            errors.push(format!(
                                "endpoint {lbl}: tf hint `{o}`: use `static` or `dynamic`"
                            ));
                            continue;
                        }
                    };
                    let joins_tree = match topic_hint {
                        None => true,
                        Some(t) => t == "tf" || t == "tf_static",
                    };
                    if joins_tree {
                        plan.tf.push(TfPlan { id, route, frame_prefix });
                        continue;
                    }
                    // A TF payload renamed onto a topic of its own: a TFMessage publisher there.
                    let qos = if route == TfRoute::Static { Qos::TransientLocal } else { Qos::Tf };
                    plan.outputs.push(OutPlan {
                        id,
                        label: lbl,
                        topic: names::resolve_topic(
                            &cfg.namespace,
                            &ep.namespace,
                            &ep.name,
                            topic_hint,
                        ),
                        msg_type: TF_MESSAGE.to_string(),
                        qos,
                        frame_prefix,
                        frame_id_hint: None,
                        field: None,
                        rate_override: None,
                        lazy: ep.lazy,
                    });
                    continue;
                }
                let Some(msg_type) = msg_type else {
                    plan.notes
                        .push(format!("endpoint {lbl} has no ros2 `type` hint: not published"));
                    continue;
                };
                let qos = match Qos::from_hint(hint(ep, "qos")) {
                    Ok(q) => q,
                    Err(m) => {
                        errors.push(format!("endpoint {lbl}: {m}"));
                        continue;
                    }
                };
                let key = if cfg.rates.contains_key(&lbl) {
                    Some(lbl.clone())
                } else if cfg.rates.contains_key(&ep.name) {
                    Some(ep.name.clone())
                } else {
                    None
                };
                let rate_override = key.as_ref().map(|k| cfg.rates[k]);
                if let Some(k) = key {
                    used_rates.push(k);
                }
                plan.outputs.push(OutPlan {
                    id,
                    label: lbl,
                    topic: names::resolve_topic(
                        &cfg.namespace,
                        &ep.namespace,
                        &ep.name,
                        topic_hint,
                    ),
                    msg_type,
                    qos,
                    frame_prefix,
                    frame_id_hint: hint(ep, "frame_id").map(str::to_string),
                    field: hint(ep, "field").map(str::to_string),
                    rate_override,
                    lazy: ep.lazy,
                });
            }
            Direction::In => {
                let kind = if let Some(a) = hint(ep, "action") {
                    InKind::Action { action_type: names::normalize_type(a, "action") }
                } else if let Some(s) = hint(ep, "service") {
                    InKind::Service { srv_type: names::normalize_type(s, "srv") }
                } else if let Some(t) = hint(ep, "type") {
                    match Qos::from_hint(hint(ep, "qos")) {
                        Ok(qos) => InKind::Topic { msg_type: names::normalize_type(t, "msg"), qos },
                        Err(m) => {
                            errors.push(format!("endpoint {lbl}: {m}"));
                            continue;
                        }
                    }
                } else {
                    plan.notes.push(format!("inbound endpoint {lbl} has no ros2 `type`, `service` or `action` hint: not served"));
                    continue;
                };
                plan.inputs.push(InPlan {
                    id,
                    label: lbl,
                    name: names::resolve_topic(&cfg.namespace, &ep.namespace, &ep.name, topic_hint),
                    kind,
                    frame_prefix,
                });
            }
        }
    }

    for k in cfg.rates.keys() {
        if !used_rates.contains(k) {
            let known: Vec<String> = plan.outputs.iter().map(|o| o.label.clone()).collect();
            errors.push(format!(
                "rates.{k}: no published endpoint is called `{k}` (by name or namespace/name); the bridge publishes: {}",
                known.join(", ")
            ));
        }
    }

    merge_joint_states(iface, cfg, robot_of, &mut plan, &mut errors);
    check_collisions(&plan, &mut errors);
    check_shared_topics(iface, robot_of, &plan, &mut errors);

    if errors.is_empty() {
        Ok(plan)
    } else {
        Err(errors)
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

fn merge_joint_states(
    iface: &Interface,
    cfg: &BridgeConfig,
    robot_of: &dyn Fn(&str) -> String,
    plan: &mut Plan,
    errors: &mut Vec<String>,
) {
    let js: Vec<OutPlan> = plan
        .outputs
        .iter()
        .filter(|o| o.msg_type == JOINT_STATE && o.field.is_none())
        .cloned()
        .collect();
    let topic_of = |id: EndpointId| {
        js.iter().find(|o| o.id == id).map(|o| o.topic.clone()).unwrap_or_default()
    };
    let mut groups: Vec<(String, Vec<EndpointId>)> = Vec::new();
    match &cfg.merged_joint_states {
        MergedJointStates::Off => {}
        MergedJointStates::Auto => {
            let mut by_owner: BTreeMap<String, Vec<EndpointId>> = BTreeMap::new();
            let mut order: Vec<String> = Vec::new();
            for o in &js {
                let owner = iface.get(o.id).owner.as_deref().map(robot_of).unwrap_or_default();
                if !by_owner.contains_key(&owner) {
                    order.push(owner.clone());
                }
                by_owner.entry(owner).or_default().push(o.id);
            }
            if order.len() > 1 {
                plan.warnings.push(format!(
                    "merged_joint_states auto: {} robots publish joint states ({}) and auto keeps them apart (one robot per \
                     entity, an arm mounted on a base counting as the base's); if they share one robot_description, set merged_joint_states: true or list a group",
                    order.len(),
                    order.iter().map(|o| if o.is_empty() { "(no owner)" } else { o.as_str() }).collect::<Vec<_>>().join(", ")
                ));
            }
            for owner in order {
                let members = by_owner.remove(&owner).unwrap_or_default();
                if members.len() < 2 {
                    continue;
                }
                let nss: Vec<&str> =
                    members.iter().map(|&id| iface.get(id).namespace.as_str()).collect();
                let scope = common_scope(&nss);
                groups.push((
                    names::resolve_topic(&cfg.namespace, &scope, "joint_states", None),
                    members,
                ));
            }
        }
        MergedJointStates::All => {
            if js.len() >= 2 {
                groups.push((
                    names::resolve_global(&cfg.namespace, "joint_states"),
                    js.iter().map(|o| o.id).collect(),
                ));
            }
        }
        MergedJointStates::Groups(gs) => {
            for (i, g) in gs.iter().enumerate() {
                let mut members = Vec::new();
                for owner in &g.owners {
                    for o in &js {
                        if names::owner_matches(
                            Some(std::slice::from_ref(owner)),
                            iface.get(o.id).owner.as_deref(),
                        ) && !members.contains(&o.id)
                        {
                            members.push(o.id);
                        }
                    }
                }
                if members.is_empty() {
                    let have: Vec<String> =
                        js.iter().filter_map(|o| iface.get(o.id).owner.clone()).collect();
                    errors.push(format!(
                        "merged_joint_states[{i}]: no joint_states endpoint is owned by [{}]; entities publishing joint states: [{}]",
                        g.owners.join(", "),
                        have.join(", ")
                    ));
                    continue;
                }
                groups.push((names::resolve_global(&cfg.namespace, &g.topic), members));
            }
        }
    }
    let stated = matches!(cfg.merged_joint_states, MergedJointStates::Groups(_));
    for (mut topic, members) in groups {
        // Controllers already sharing one topic would send partial messages on it: the merged
        // publisher takes that topic over (one complete message per tick), unless a group states
        // its own topic.
        let first = topic_of(members[0]);
        if members.iter().all(|&m| topic_of(m) == first) && !stated {
            let who: Vec<String> = members.iter().map(|&m| label(iface.get(m))).collect();
            plan.notes.push(format!(
                "joint_states of [{}] share {first}: one merged publisher carries them all there",
                who.join(", ")
            ));
            topic = first;
        }
        let requested_hz = members.iter().map(|&m| realised_hz(iface, m)).fold(0.0, f64::max);
        // A member whose own topic IS the merged topic is carried by the merged publisher only
        // (one publisher per topic; the merged message is a superset of it).
        plan.outputs.retain(|o| !(members.contains(&o.id) && o.topic == topic));
        plan.merged.push(MergedPlan { topic, members, requested_hz });
    }
}

fn check_collisions(plan: &Plan, errors: &mut Vec<String>) {
    let mut seen: BTreeMap<&str, (&str, String)> = BTreeMap::new();
    for o in &plan.outputs {
        if let Some((t, who)) = seen.get(o.topic.as_str()) {
            if *t != o.msg_type {
                errors.push(format!(
                    "topic {}: endpoint {} publishes {} but endpoint {} publishes {} there; a ROS topic has one type: rename one with its `topics:` map",
                    o.topic, who, t, o.label, o.msg_type
                ));
            }
        } else {
            seen.insert(o.topic.as_str(), (o.msg_type.as_str(), o.label.clone()));
        }
    }
    for i in &plan.inputs {
        if let InKind::Topic { msg_type, .. } = &i.kind {
            if let Some((t, who)) = seen.get(i.name.as_str()) {
                if *t != msg_type {
                    errors.push(format!(
                        "topic {}: endpoint {} publishes {} but endpoint {} subscribes {} there; rename one with its `topics:` map",
                        i.name, who, t, i.label, msg_type
                    ));
                }
            }
        }
    }
}

/// Two robots on one topic: a command topic two robots subscribe would drive both, and a state
/// topic two robots publish (odometry, scans) would interleave them. Both come from two robots in
/// one namespace; refuse naming the topic and both endpoints. Joint states are merged on a shared
/// topic (`merged_joint_states`), and many publishers on /diagnostics is ROS's convention.
fn check_shared_topics(
    iface: &Interface,
    robot_of: &dyn Fn(&str) -> String,
    plan: &Plan,
    errors: &mut Vec<String>,
) {
    let robot = |id: EndpointId| iface.get(id).owner.as_deref().map(robot_of);
    let mut seen: BTreeMap<String, (String, String)> = BTreeMap::new();
    let outs = plan
        .outputs
        .iter()
        .filter(|o| {
            o.msg_type != "diagnostic_msgs/msg/DiagnosticArray" && o.msg_type != JOINT_STATE
        })
        .map(|o| (&o.topic, o.id, &o.label, "publish"));
    let ins = plan.inputs.iter().map(|i| (&i.name, i.id, &i.label, "serve"));
    for (topic, id, label, verb) in outs.chain(ins) {
        let Some(r) = robot(id) else { continue };
        let key = format!("{verb} {topic}");
        match seen.get(&key) {
            Some((other, who)) if *other != r => errors.push(format!(
                "topic {topic}: robots `{other}` (endpoint {who}) and `{r}` (endpoint {label}) would both {verb} it; \
                 give each robot its own namespace (`namespace:` on its spawn entry) or rename one with `topics:`"
            )),
            Some(_) => {}
            None => {
                seen.insert(key, (r, label.clone()));
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ros::config::MergeGroup;

    fn iface() -> Interface {
        let mut i = Interface::new(500.0);
        let ns = |e: Endpoint, owner: &str, ns: &str| {
            e.owner(Some(owner)).namespace(ns).frame_prefix(&names::normalize_prefix(ns))
        };
        i.add(ns(
            Endpoint::out("odom").rate(50.0).hint("ros2", "type", "nav_msgs/msg/Odometry"),
            "robot1",
            "robot1",
        ));
        i.add(ns(
            Endpoint::out("scan")
                .rate(10.0)
                .hint("ros2", "type", "sensor_msgs.msg.LaserScan")
                .hint("ros2", "qos", "sensor_data"),
            "robot1",
            "robot1",
        ));
        i.add(ns(Endpoint::out("tf_static").hint("ros2", "tf", "static"), "robot1", "robot1"));
        i.add(ns(
            Endpoint::input("cmd_vel").hint("ros2", "type", "geometry_msgs/msg/Twist"),
            "robot1",
            "robot1",
        ));
        i.add(ns(
            Endpoint::out("joint_states").rate(50.0).hint("ros2", "type", JOINT_STATE),
            "robot1",
            "robot1",
        ));
        i.add(ns(
            Endpoint::out("joint_states").rate(100.0).hint("ros2", "type", JOINT_STATE),
            "robot1",
            "robot1/arm",
        ));
        i.add(ns(
            Endpoint::out("odom").rate(50.0).hint("ros2", "type", "nav_msgs/msg/Odometry"),
            "robot2",
            "robot2",
        ));
        i.add(ns(
            Endpoint::out("scan")
                .rate(10.0)
                .hint("ros2", "type", "sensor_msgs/msg/LaserScan")
                .hint("ros2", "topic", "/front_scan"),
            "robot2",
            "robot2",
        ));
        i.add(ns(
            Endpoint::out("joint_states").rate(50.0).hint("ros2", "type", JOINT_STATE),
            "robot2",
            "robot2",
        ));
        i.add(Endpoint::out("debug"));
        i
    }

    fn topics(p: &Plan) -> Vec<(String, String)> {
        p.outputs.iter().map(|o| (o.label.clone(), o.topic.clone())).collect()
    }

    #[test]
    fn default_plan() {
        let p = build(&iface(), &BridgeConfig::default()).unwrap();
        let t = topics(&p);
        assert!(t.contains(&("robot1/odom".into(), "/robot1/odom".into())));
        assert!(t.contains(&("robot1/scan".into(), "/robot1/scan".into())));
        assert!(
            t.contains(&("robot2/scan".into(), "/front_scan".into())),
            "absolute hint hardwires: {t:?}"
        );
        // robot1's base joint_states is replaced by the merged one on the same topic; the arm keeps its own
        assert!(!t.contains(&("robot1/joint_states".into(), "/robot1/joint_states".into())));
        assert!(t.contains(&("robot1/arm/joint_states".into(), "/robot1/arm/joint_states".into())));
        assert_eq!(p.merged.len(), 1);
        assert_eq!(p.merged[0].topic, "/robot1/joint_states");
        assert_eq!(p.merged[0].members, vec![4, 5]);
        assert_eq!(p.merged[0].requested_hz, 100.0);
        assert!(
            p.warnings[0].contains(
                "2 robots publish joint states (robot1, robot2) and auto keeps them apart"
            ),
            "{:?}",
            p.warnings
        );
        // robot2 has a single joint_states endpoint: published as is
        assert!(t.contains(&("robot2/joint_states".into(), "/robot2/joint_states".into())));
        let scan = p.outputs.iter().find(|o| o.label == "robot1/scan").unwrap();
        assert_eq!(scan.msg_type, "sensor_msgs/msg/LaserScan");
        assert_eq!(scan.qos, Qos::SensorData);
        assert_eq!(scan.frame_prefix, "robot1/");
        assert_eq!(
            p.tf,
            vec![TfPlan { id: 2, route: TfRoute::Static, frame_prefix: "robot1/".into() }]
        );
        assert_eq!(p.inputs.len(), 1);
        assert_eq!(p.inputs[0].name, "/robot1/cmd_vel");
        assert_eq!(
            p.inputs[0].kind,
            InKind::Topic { msg_type: "geometry_msgs/msg/Twist".into(), qos: Qos::Reliable }
        );
        assert!(p.notes.iter().any(|n| n.contains("endpoint debug has no ros2 `type` hint")));
        assert_eq!((p.tf_topic.as_str(), p.tf_static_topic.as_str()), ("/tf", "/tf_static"));
    }

    #[test]
    fn two_robots_in_one_namespace_are_refused_naming_the_topic() {
        let mut i = Interface::new(500.0);
        for r in ["r1", "r2"] {
            let at = |e: Endpoint| e.owner(Some(r)).namespace("r");
            i.add(at(Endpoint::out("odom").rate(50.0).hint(
                "ros2",
                "type",
                "nav_msgs/msg/Odometry",
            )));
            i.add(at(Endpoint::input("cmd_vel").hint("ros2", "type", "geometry_msgs/msg/Twist")));
        }
        let e = build(&i, &BridgeConfig::default()).unwrap_err();
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e[0].starts_with("topic /r/odom: robots `r1` (endpoint r/odom) and `r2` (endpoint r/odom) would both publish it; give each robot its own namespace"), "{e:?}");
        assert!(e[1].starts_with("topic /r/cmd_vel: robots `r1`"), "{e:?}");
        assert!(e[1].contains("would both serve it"), "{e:?}");
    }

    #[test]
    fn a_misspelt_owner_is_refused_naming_the_owners() {
        let cfg = BridgeConfig { owners: Some(vec!["robto2".into()]), ..Default::default() };
        let e = build(&iface(), &cfg).unwrap_err();
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].starts_with("owners[0]: `robto2` owns no endpoint, so it would serve nothing; owners in this world: [robot1, robot2"),
            "{e:?}"
        );
    }

    #[test]
    fn namespace_owner_filter_frame_prefix_tf_namespace() {
        let cfg = BridgeConfig {
            namespace: "sim".into(),
            owners: Some(vec!["robot2".into()]),
            frame_prefix: "world1".into(),
            tf_namespace: Some("robot2".into()),
            ..Default::default()
        };
        let p = build(&iface(), &cfg).unwrap();
        let t = topics(&p);
        assert_eq!(
            t,
            vec![
                ("robot2/odom".to_string(), "/sim/robot2/odom".to_string()),
                ("robot2/scan".to_string(), "/front_scan".to_string()),
                ("robot2/joint_states".to_string(), "/sim/robot2/joint_states".to_string())
            ]
        );
        assert_eq!(p.outputs[0].frame_prefix, "world1/robot2/");
        assert!(p.merged.is_empty() && p.warnings.is_empty() && p.inputs.is_empty());
        assert_eq!(
            (p.tf_topic.as_str(), p.tf_static_topic.as_str()),
            ("/robot2/tf", "/robot2/tf_static")
        );
    }

    #[test]
    fn merged_true_false_groups() {
        let all = build(
            &iface(),
            &BridgeConfig { merged_joint_states: MergedJointStates::All, ..Default::default() },
        )
        .unwrap();
        assert_eq!(all.merged.len(), 1);
        assert_eq!(all.merged[0].topic, "/joint_states");
        assert_eq!(all.merged[0].members, vec![4, 5, 8]);
        assert!(all.warnings.is_empty());
        let off = build(
            &iface(),
            &BridgeConfig { merged_joint_states: MergedJointStates::Off, ..Default::default() },
        )
        .unwrap();
        assert!(off.merged.is_empty());
        assert_eq!(off.outputs.iter().filter(|o| o.msg_type == JOINT_STATE).count(), 3);
        let g = MergedJointStates::Groups(vec![MergeGroup {
            topic: "/cell/joint_states".into(),
            owners: vec!["robot2".into(), "robot1".into()],
        }]);
        let grp = build(&iface(), &BridgeConfig { merged_joint_states: g, ..Default::default() })
            .unwrap();
        assert_eq!(grp.merged[0].members, vec![8, 4, 5], "group order, then registration order");
        let bad = MergedJointStates::Groups(vec![MergeGroup {
            topic: "js".into(),
            owners: vec!["nobody".into()],
        }]);
        let e = build(&iface(), &BridgeConfig { merged_joint_states: bad, ..Default::default() })
            .unwrap_err();
        assert!(
            e[0].contains("no joint_states endpoint is owned by [nobody]")
                && e[0].contains("robot1"),
            "{e:?}"
        );
    }

    #[test]
    fn shared_topic_is_merged_in_place_and_mounted_arms_join_their_base() {
        let mut i = Interface::new(500.0);
        for _ in 0..2 {
            i.add(
                Endpoint::out("joint_states")
                    .owner(Some("dual"))
                    .namespace("dual")
                    .hint("ros2", "type", JOINT_STATE)
                    .hint("ros2", "topic", "/joint_states"),
            );
        }
        let p = build(&i, &BridgeConfig::default()).unwrap();
        assert_eq!(p.merged.len(), 1);
        assert_eq!(
            (p.merged[0].topic.as_str(), p.merged[0].members.clone()),
            ("/joint_states", vec![0, 1])
        );
        assert!(p.outputs.is_empty(), "the partial publishers are replaced: {:?}", p.outputs);
        assert!(
            p.notes
                .iter()
                .any(|n| n
                    .contains("share /joint_states: one merged publisher carries them all there")),
            "{:?}",
            p.notes
        );
        // An arm mounted on a base is the base's robot: one group across both entities.
        let mut i = Interface::new(500.0);
        for o in ["husky", "arm"] {
            i.add(Endpoint::out("joint_states").owner(Some(o)).namespace("husky").hint(
                "ros2",
                "type",
                JOINT_STATE,
            ));
        }
        let p = build_with_robots(&i, &BridgeConfig::default(), &|o: &str| {
            if o == "arm" {
                "husky".into()
            } else {
                o.to_string()
            }
        })
        .unwrap();
        assert_eq!(
            (p.merged[0].topic.as_str(), p.merged[0].members.clone()),
            ("/husky/joint_states", vec![0, 1])
        );
        assert!(p.outputs.is_empty() && p.warnings.is_empty(), "{:?} {:?}", p.outputs, p.warnings);
        let p = build(&i, &BridgeConfig::default()).unwrap();
        assert!(p.merged.is_empty(), "two robots stay apart");
        // dual/left + dual/right → /dual/joint_states
        let mut i = Interface::new(500.0);
        i.add(Endpoint::out("joint_states").owner(Some("dual")).namespace("dual/left").hint(
            "ros2",
            "type",
            JOINT_STATE,
        ));
        i.add(Endpoint::out("joint_states").owner(Some("dual")).namespace("dual/right").hint(
            "ros2",
            "type",
            JOINT_STATE,
        ));
        let p = build(&i, &BridgeConfig::default()).unwrap();
        assert_eq!(p.merged[0].topic, "/dual/joint_states");
        assert_eq!(p.outputs.len(), 2, "members keep their own topics");
    }

    #[test]
    fn rates_and_refusals() {
        let mut rates = BTreeMap::new();
        rates.insert("robot1/scan".to_string(), 5.0);
        rates.insert("odom".to_string(), 20.0);
        let p =
            build(&iface(), &BridgeConfig { rates: rates.clone(), ..Default::default() }).unwrap();
        assert_eq!(
            p.outputs.iter().find(|o| o.label == "robot1/scan").unwrap().rate_override,
            Some(5.0)
        );
        assert_eq!(
            p.outputs.iter().find(|o| o.label == "robot2/scan").unwrap().rate_override,
            None
        );
        assert_eq!(
            p.outputs.iter().find(|o| o.label == "robot2/odom").unwrap().rate_override,
            Some(20.0)
        );
        rates.insert("lidar".to_string(), 5.0);
        let e = build(&iface(), &BridgeConfig { rates, ..Default::default() }).unwrap_err();
        assert!(
            e[0].starts_with("rates.lidar: no published endpoint") && e[0].contains("robot1/scan"),
            "{e:?}"
        );
        // producer every 10 steps (50 Hz at 500): on 50/k, 20 Hz is nearest k=3 (16.67 Hz, 3.3 off; 25 Hz is 5 off)
        let s = snap_override(20.0, 500.0, 10);
        assert_eq!(s.every_steps, 30);
        assert_eq!(s.realised_hz, 500.0 / 30.0);
        assert_eq!(snap_override(5.0, 500.0, 50).every_steps, 100);
    }

    #[test]
    fn type_collision_and_bad_hints() {
        let mut i = Interface::new(500.0);
        i.add(
            Endpoint::out("a")
                .hint("ros2", "type", "std_msgs/msg/Float64")
                .hint("ros2", "topic", "/x"),
        );
        i.add(
            Endpoint::out("b")
                .hint("ros2", "type", "std_msgs/msg/Bool")
                .hint("ros2", "topic", "/x"),
        );
        i.add(
            Endpoint::out("c")
                .hint("ros2", "type", "std_msgs/msg/Bool")
                .hint("ros2", "qos", "fast"),
        );
        i.add(Endpoint::out("d").hint("ros2", "tf", "sometimes"));
        i.add(
            Endpoint::out("e")
                .hint("ros2", "type", "std_msgs/msg/Bool")
                .hint("ros2", "topic", "a b"),
        );
        let e = build(&i, &BridgeConfig::default()).unwrap_err();
        assert!(e.iter().any(|m| m.contains("unknown qos hint `fast`")), "{e:?}");
        assert!(e.iter().any(|m| m.contains("tf hint `sometimes`")), "{e:?}");
        assert!(e.iter().any(|m| m.contains("endpoint e: topic hint")), "{e:?}");
        assert!(e.iter().any(|m| m.contains("topic /x: endpoint a publishes std_msgs/msg/Float64 but endpoint b publishes std_msgs/msg/Bool")), "{e:?}");
    }

    #[test]
    fn tf_routing() {
        let mut i = Interface::new(500.0);
        i.add(
            Endpoint::out("pose")
                .hint("ros2", "tf", "dynamic")
                .hint("ros2", "topic", "tf")
                .hint("ros2", "type", TF_MESSAGE),
        );
        i.add(
            Endpoint::out("pose")
                .namespace("r")
                .hint("ros2", "tf", "dynamic")
                .hint("ros2", "topic", "gt_pose"),
        );
        let p = build(&i, &BridgeConfig::default()).unwrap();
        assert_eq!(p.tf.len(), 1);
        assert_eq!(p.tf[0].route, TfRoute::Dynamic);
        assert_eq!(p.outputs.len(), 1);
        assert_eq!(
            (p.outputs[0].topic.as_str(), p.outputs[0].msg_type.as_str()),
            ("/r/gt_pose", TF_MESSAGE)
        );
    }

    #[test]
    fn inbound_kinds() {
        let mut i = Interface::new(500.0);
        i.add(Endpoint::input("fault").hint("ros2", "service", "std_srvs/SetBool"));
        i.add(Endpoint::input("follow_joint_trajectory").namespace("arm").hint(
            "ros2",
            "action",
            "control_msgs.action.FollowJointTrajectory",
        ));
        i.add(Endpoint::input("drive").hint(
            "ros2",
            "type",
            "ackermann_msgs/msg/AckermannDriveStamped",
        ));
        let p = build(&i, &BridgeConfig::default()).unwrap();
        assert_eq!(p.inputs[0].kind, InKind::Service { srv_type: "std_srvs/srv/SetBool".into() });
        assert_eq!(
            p.inputs[1].kind,
            InKind::Action { action_type: "control_msgs/action/FollowJointTrajectory".into() }
        );
        assert_eq!(p.inputs[1].name, "/arm/follow_joint_trajectory");
        assert_eq!(p.inputs[2].name, "/drive");
        assert_eq!(common_scope(&["dual/left", "dual/right"]), "dual");
        assert_eq!(common_scope(&["a", "b"]), "");
    }
}
