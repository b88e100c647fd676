//! What the plugins of a world claim while it is set up (in `configure`), so that two of them
//! that would publish one thing are refused before the run starts — `roqsim check` refuses
//! them without a ROS transport, naming both plugins, the key that names the thing in each and
//! the fix.
//!
//! - **TF frames**: every plugin that publishes a transform (static or dynamic) claims its
//!   `(parent, child)` edge. A frame has one parent in TF; two publishers of one child frame
//!   make `/tf` alternate between them (or `/tf_static` keep only the last), so the second is
//!   refused.
//! - **Stamped frames**: a camera stamps its images in an optical frame. One frame names one
//!   pose: two cameras rendering from different views cannot stamp the same frame (two cameras
//!   through one view may: a label camera beside the colour camera whose optics it shares).
//! - **Camera topics**: two cameras on one topic would interleave their frames.
//!
//! Frames are compared with the endpoint's frame prefix applied (the namespace + `/`), topics
//! fully resolved ([`absolute_topic`]).

/// Who claims: a plugin entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimant {
    /// The entry's address (`robot.camera`, `robot.diff_drive`).
    pub address: String,
    /// The plugin (`spawn_sensor`).
    pub plugin: String,
}

impl Claimant {
    /// A claimant.
    pub fn new(address: &str, plugin: &str) -> Self {
        Claimant { address: address.to_string(), plugin: plugin.to_string() }
    }
}

/// Which TF topic an edge goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TfRoute {
    /// `/tf_static` (latched).
    Static,
    /// `/tf`.
    Dynamic,
}

impl TfRoute {
    fn topic(self) -> &'static str {
        match self {
            TfRoute::Static => "/tf_static",
            TfRoute::Dynamic => "/tf",
        }
    }
}

/// One TF edge a plugin publishes, frames as published (frame prefix applied).
#[derive(Debug, Clone, PartialEq)]
pub struct TfEdge {
    /// Parent frame.
    pub parent: String,
    /// Child frame.
    pub child: String,
    /// `/tf` or `/tf_static`.
    pub route: TfRoute,
    /// A static edge's transform (translation, then rotation x y z w), when known at claim
    /// time: two static publishers of the very same transform (two sensors on one site, one
    /// frame) do not contradict each other, so they are not refused.
    pub value: Option<[f64; 7]>,
}

impl TfEdge {
    /// The same static transform as `o` (same parent, child and value within 1e-9).
    fn same_static(&self, o: &TfEdge) -> bool {
        self.route == TfRoute::Static
            && o.route == TfRoute::Static
            && self.parent == o.parent
            && self.child == o.child
            && match (self.value, o.value) {
                (Some(a), Some(b)) => a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9),
                _ => false,
            }
    }
}

/// How a claimant's frames are named and renamed, for the refusal's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameKeys {
    /// The key (path inside the entry) that names the frame (`camera_name`, `odom_child_frame`,
    /// `namespace`).
    pub key: String,
    /// What to change so the frames differ, in plain words.
    pub fix: String,
}

impl FrameKeys {
    /// Key and fix.
    pub fn new(key: &str, fix: &str) -> Self {
        FrameKeys { key: key.to_string(), fix: fix.to_string() }
    }
}

#[derive(Debug, Clone)]
struct TfClaim {
    by: Claimant,
    edge: TfEdge,
    keys: FrameKeys,
}

#[derive(Debug, Clone)]
struct StampClaim {
    by: Claimant,
    view: String,
    key: String,
    frame: String,
}

#[derive(Debug, Clone)]
struct TopicClaim {
    by: Claimant,
    role: String,
    topic: String,
}

/// Every claim made so far (the context's `claims`).
#[derive(Debug, Clone, Default)]
pub struct Claims {
    tf: Vec<TfClaim>,
    stamps: Vec<StampClaim>,
    topics: Vec<TopicClaim>,
}

impl Claims {
    /// Claim TF edges for `by` (all or none). Refused: a child frame another claimant already
    /// publishes, and a child this list names twice with different parents.
    pub fn tf(&mut self, by: &Claimant, edges: &[TfEdge], keys: &FrameKeys) -> Result<(), String> {
        for e in edges {
            for f in [&e.parent, &e.child] {
                check_frame_id(f).map_err(|m| format!("{}: {m}", keys.key))?;
            }
            if e.parent == e.child {
                return Err(format!(
                    "{}: this entry publishes `{} -> {}` on {}, a frame as its own parent: TF is a tree and refuses the loop. Name the child frame apart from its parent (change `{}:`)",
                    keys.key,
                    e.parent,
                    e.child,
                    e.route.topic(),
                    keys.key
                ));
            }
        }
        for (i, e) in edges.iter().enumerate() {
            let mut earlier = self
                .tf
                .iter()
                .filter(|c| c.by != *by && c.edge.child == e.child && !c.edge.same_static(e));
            if let Some(TfClaim { by: other, edge: oe, keys: ok }) = earlier.next() {
                return Err(format!(
                    "{}: TF frame `{}` is already published by `{}` ({}, `{} -> {}` on {}, named by its `{}`); this entry publishes `{} -> {}` on {}, and a frame has one parent: TF would jump between the two. {}",
                    keys.key,
                    e.child,
                    other.address,
                    other.plugin,
                    oe.parent,
                    oe.child,
                    oe.route.topic(),
                    ok.key,
                    e.parent,
                    e.child,
                    e.route.topic(),
                    keys.fix
                ));
            }
            if edges[..i].iter().any(|p| p.child == e.child && p.parent != e.parent) {
                return Err(format!(
                    "{}: TF frame `{}` is published twice by this entry, with different parents; {}",
                    keys.key, e.child, keys.fix
                ));
            }
        }
        for (i, e) in edges.iter().enumerate() {
            if let Some(path) = self.path_up(&edges[..i], &e.parent, &e.child) {
                let chain: Vec<String> = path
                    .iter()
                    .map(|(p, c, who)| match who {
                        Some((o, k)) => format!(
                            "`{p} -> {c}` by `{}` ({}, named by its `{}`)",
                            o.address, o.plugin, k.key
                        ),
                        None => format!("`{p} -> {c}` by this entry"),
                    })
                    .collect();
                return Err(format!(
                    "{}: this entry publishes `{} -> {}` on {}, but `{}` is already an ancestor of `{}`: {}; TF is a tree and a frame cannot be its own ancestor. Name the frames apart: change this entry's `{}:` or the frame of the other entry",
                    keys.key,
                    e.parent,
                    e.child,
                    e.route.topic(),
                    e.child,
                    e.parent,
                    chain.join(", "),
                    keys.key
                ));
            }
        }
        for e in edges {
            if !self.tf.iter().any(|c| c.by == *by && c.edge == *e) {
                self.tf.push(TfClaim { by: by.clone(), edge: e.clone(), keys: keys.clone() });
            }
        }
        Ok(())
    }

    /// The chain of edges from `to` down to `from` when `to` is an ancestor of `from` (or is
    /// `from`) through the claimed edges and `pending` (this claimant's earlier edges), each
    /// with who claimed it (`None`: pending); `None` when it is not.
    #[allow(clippy::type_complexity)]
    fn path_up(
        &self,
        pending: &[TfEdge],
        from: &str,
        to: &str,
    ) -> Option<Vec<(String, String, Option<(Claimant, FrameKeys)>)>> {
        let mut chain = Vec::new();
        let mut at = from.to_string();
        // a frame has one parent (refused otherwise), so the walk up is a path; the bound keeps
        // it finite whatever the claims hold
        for _ in 0..=self.tf.len() + pending.len() {
            if at == to {
                chain.reverse();
                return Some(chain);
            }
            let up = match self.tf.iter().find(|c| c.edge.child == at) {
                Some(c) => (c.edge.parent.clone(), Some((c.by.clone(), c.keys.clone()))),
                None => match pending.iter().find(|p| p.child == at) {
                    Some(p) => (p.parent.clone(), None),
                    None => return None,
                },
            };
            chain.push((up.0.clone(), at.clone(), up.1));
            at = up.0;
        }
        None
    }

    /// Claim that `by` stamps messages in `frame` (named by its key `key`) rendering from `view`
    /// (`camera 3`). Refused: a frame another claimant stamps from another view.
    pub fn stamp(
        &mut self,
        by: &Claimant,
        view: &str,
        key: &str,
        frame: &str,
    ) -> Result<(), String> {
        check_frame_id(frame).map_err(|m| format!("{key}: {m}"))?;
        if let Some(o) =
            self.stamps.iter().find(|c| c.by != *by && c.frame == frame && c.view != view)
        {
            return Err(format!(
                "{key}: `{frame}` is already the optical frame of `{}` ({}, its `{}`), which renders from another view; one frame names one pose: give this one another `{key}:` (or `camera_name:`)",
                o.by.address, o.by.plugin, o.key
            ));
        }
        if !self.stamps.iter().any(|c| c.by == *by && c.frame == frame) {
            self.stamps.push(StampClaim {
                by: by.clone(),
                view: view.to_string(),
                key: key.to_string(),
                frame: frame.to_string(),
            });
        }
        Ok(())
    }

    /// Claim that camera `by` publishes `topic` (fully resolved) as its endpoint `role`.
    /// Refused: a topic another camera publishes.
    pub fn topic(&mut self, by: &Claimant, role: &str, topic: &str) -> Result<(), String> {
        if let Some(o) = self.topics.iter().find(|c| c.by != *by && c.topic == topic) {
            return Err(format!(
                "topics.{role}: `{topic}` is already published by `{}` ({}, its `{}`); two cameras on one topic interleave their frames: give this one another `camera_name:` (or rename it with `topics:`)",
                o.by.address, o.by.plugin, o.role
            ));
        }
        if !self.topics.iter().any(|c| c.by == *by && c.topic == topic) {
            self.topics.push(TopicClaim {
                by: by.clone(),
                role: role.to_string(),
                topic: topic.to_string(),
            });
        }
        Ok(())
    }

    /// Every claimed TF edge, in claim order, with its claimant.
    pub fn tf_edges(&self) -> impl Iterator<Item = (&Claimant, &TfEdge)> {
        self.tf.iter().map(|c| (&c.by, &c.edge))
    }
}

/// The topics the ROS node opens itself, and what it carries on each: no endpoint may take one.
const NODE_TOPICS: [(&str, &str); 5] = [
    ("/clock", "the simulation time, rosgraph_msgs/msg/Clock"),
    ("/tf", "the transforms, tf2_msgs/msg/TFMessage"),
    ("/tf_static", "the static transforms, tf2_msgs/msg/TFMessage"),
    ("/rosout", "the log, rcl_interfaces/msg/Log"),
    ("/parameter_events", "parameter changes, rcl_interfaces/msg/ParameterEvent"),
];

/// The longest topic name ROS 2 takes (rmw's `RMW_TOPIC_MAX_NAME_LENGTH`, 255 less the 8 its DDS
/// prefix needs).
const MAX_TOPIC_LEN: usize = 247;

/// Every endpoint topic of a configured world, checked as the ROS bridge would publish it (in
/// the endpoint's namespace, with no bridge namespace) so `roqsim check` refuses without a ROS
/// transport what `--ros` would: two publishers of one topic (their messages would interleave)
/// and one topic with two message types (ROS gives a topic one type). Topics many publishers
/// share by convention are left alone: joint states (merged into one message by the bridge),
/// `/diagnostics`, and the TF tree (its edges are claimed frame by frame instead). Every clash
/// is reported, each naming both entries; so are topic names ROS refuses and the node's own topics.
pub fn endpoint_topics(iface: &crate::context::Interface) -> Result<(), Vec<String>> {
    use crate::context::Direction;
    use crate::ros::names;
    const SHARED: [&str; 2] = ["sensor_msgs/msg/JointState", "diagnostic_msgs/msg/DiagnosticArray"];
    struct Row<'a> {
        who: String,
        role: &'a str,
        topic: String,
        msg_type: String,
        publishes: bool,
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut errors = Vec::new();
    for ep in iface.all() {
        let hint = |k: &str| ep.get_hint("ros2", k).filter(|s| !s.is_empty());
        // The frame its messages are stamped in, as TF and the ROS tools take a frame id.
        if let Some(Err(m)) = hint("frame_id").map(|f| check_frame_id(f.trim_start_matches('/'))) {
            let who = ep
                .added_by
                .clone()
                .or_else(|| ep.owner.clone())
                .unwrap_or_else(|| crate::ros::plan::label(ep));
            errors.push(format!("[{who}] configure: frame_id: {m}"));
        }
        let topic_hint = hint("topic");
        let msg_type = if hint("tf").is_some() {
            match topic_hint {
                None | Some("tf") | Some("tf_static") => continue,
                Some(_) => "tf2_msgs/msg/TFMessage".to_string(),
            }
        } else {
            match hint("type") {
                Some(t) => names::normalize_type(t, "msg"),
                None => continue,
            }
        };
        let who = ep
            .added_by
            .clone()
            .or_else(|| ep.owner.clone())
            .unwrap_or_else(|| crate::ros::plan::label(ep));
        let topic = names::resolve_topic("", &ep.namespace, &ep.name, topic_hint);
        // What the bridge (rcl) would refuse at --ros is refused here already.
        let invalid = match topic_hint.map(names::check_topic) {
            Some(Err(e)) => Some(e),
            _ => names::check_topic(&topic).err(),
        };
        if let Some(e) = invalid {
            errors.push(format!("[{who}] configure: topics.{}: {e}", ep.name));
            continue;
        }
        if topic.len() > MAX_TOPIC_LEN {
            errors.push(format!(
                "[{who}] configure: topics.{}: `{}` is {} characters long; ROS 2 takes topic names of at most {MAX_TOPIC_LEN}: give a shorter topic or namespace",
                ep.name,
                crate::error::clip(&topic),
                topic.len()
            ));
            continue;
        }
        if let Some((_, what)) = NODE_TOPICS.iter().find(|(t, _)| *t == topic) {
            errors.push(format!(
                "[{who}] configure: topics.{}: `{topic}` is the ROS node's own topic ({what}): give this one another topic with its `topics:` map",
                ep.name
            ));
            continue;
        }
        let row =
            Row { topic, role: &ep.name, msg_type, publishes: ep.direction == Direction::Out, who };
        for o in rows.iter().filter(|o| o.topic == row.topic) {
            let verb = |r: &Row| if r.publishes { "publishes" } else { "subscribes" };
            if o.msg_type != row.msg_type {
                errors.push(format!(
                    "[{}] configure: topics.{}: `{}` {} {} on `{}`, but `{}` (its `{}`) {} {} there; a ROS topic has one message type: rename one of them with its `topics:` map",
                    row.who,
                    row.role,
                    row.who,
                    verb(&row),
                    row.msg_type,
                    crate::error::clip(&row.topic),
                    o.who,
                    o.role,
                    verb(o),
                    o.msg_type
                ));
                break;
            }
            if o.publishes && row.publishes && !SHARED.contains(&row.msg_type.as_str()) {
                errors.push(format!(
                    "[{}] configure: topics.{}: `{}` is already published by `{}` (its `{}`, {}); two publishers on one topic interleave their messages: give this one another topic with its `topics:` map, or its robot a `namespace:`",
                    row.who,
                    row.role,
                    crate::error::clip(&row.topic),
                    o.who,
                    o.role,
                    o.msg_type
                ));
                break;
            }
        }
        rows.push(row);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Check a TF frame id as tf2 and the ROS tools take it: one or more `/`-separated segments of
/// letters, digits and `_`, with no leading `/` (tf2 refuses it) and no empty segment.
pub fn check_frame_id(f: &str) -> Result<(), String> {
    let q = crate::error::clip(f);
    if f.is_empty() {
        return Err("an empty frame id: TF names every frame".into());
    }
    if f.starts_with('/') {
        return Err(format!(
            "`{q}` is not a TF frame id: tf2 refuses a leading `/` (write `{}`)",
            crate::error::clip(f.trim_start_matches('/'))
        ));
    }
    if f.ends_with('/') || f.contains("//") {
        return Err(format!(
            "`{q}` is not a TF frame id: it has an empty segment (`//` or a trailing `/`)"
        ));
    }
    if f.contains('{') && f.contains('}') {
        return Err(format!(
            "`{q}` is not a TF frame id: a manifest placeholder left unfilled (a device manifest's frames are filled by `spawn_sensor`, which names them; spawn the device with it)"
        ));
    }
    if let Some(c) = f.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '/')) {
        return Err(format!(
            "`{q}` is not a TF frame id: {c:?} is not allowed; a frame id holds letters, digits and `_`, with `/` between namespace segments (as ROS names do)"
        ));
    }
    Ok(())
}

/// The absolute topic `topic` (relative to namespace `ns`, or absolute `/x`) names.
pub fn absolute_topic(ns: &str, topic: &str) -> String {
    let parts: Vec<&str> = if topic.starts_with('/') {
        topic.split('/').collect()
    } else {
        ns.split('/').chain(topic.split('/')).collect()
    };
    let joined: Vec<&str> = parts.into_iter().filter(|p| !p.is_empty()).collect();
    format!("/{}", joined.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_resolve_inside_the_namespace_unless_absolute() {
        assert_eq!(absolute_topic("", "camera/color/image_raw"), "/camera/color/image_raw");
        assert_eq!(
            absolute_topic("/robot/", "oak/stereo/image_raw"),
            "/robot/oak/stereo/image_raw"
        );
        assert_eq!(absolute_topic("robot", "/x//y"), "/x/y");
    }

    fn edge(p: &str, c: &str, route: TfRoute) -> TfEdge {
        TfEdge { parent: p.into(), child: c.into(), route, value: None }
    }

    #[test]
    fn a_second_publisher_of_one_child_frame_is_refused_naming_both() {
        let mut c = Claims::default();
        let a = Claimant::new("r1.diff_drive", "diff_drive");
        let b = Claimant::new("r2.diff_drive", "diff_drive");
        let k = FrameKeys::new("odom_child_frame", "Give each robot its own `namespace:`.");
        c.tf(&a, &[edge("odom", "base_footprint", TfRoute::Dynamic)], &k).unwrap();
        // the same claimant may claim again (a re-announce); another parent of another child is fine
        c.tf(&a, &[edge("odom", "base_footprint", TfRoute::Dynamic)], &k).unwrap();
        c.tf(&b, &[edge("r2/odom", "r2/base_footprint", TfRoute::Dynamic)], &k).unwrap();
        assert_eq!(
            c.tf(&b, &[edge("odom", "base_footprint", TfRoute::Dynamic)], &k).unwrap_err(),
            "odom_child_frame: TF frame `base_footprint` is already published by `r1.diff_drive` (diff_drive, `odom -> base_footprint` on /tf, named by its `odom_child_frame`); this entry publishes `odom -> base_footprint` on /tf, and a frame has one parent: TF would jump between the two. Give each robot its own `namespace:`."
        );
        assert_eq!(c.tf_edges().count(), 2);
        // the very same static transform from two sensors on one site: no contradiction
        let v = Some([0.1, 0.0, 0.3, 0.0, 0.0, 0.0, 1.0]);
        let s = TfEdge { value: v, ..edge("base_link", "laser", TfRoute::Static) };
        c.tf(&a, std::slice::from_ref(&s), &k).unwrap();
        c.tf(&b, std::slice::from_ref(&s), &k).unwrap();
        let moved = TfEdge { value: Some([0.2, 0.0, 0.3, 0.0, 0.0, 0.0, 1.0]), ..s };
        assert!(c.tf(&b, &[moved], &k).is_err());
    }
}
