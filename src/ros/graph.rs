//! The type-mismatch watchdog: a ROS 2 topic is one name and one type, and the middleware never
//! connects a publisher of another type, nor logs that it did not, so a stack sending a plain Twist
//! to a base subscribing TwistStamped shows up only as a robot that never moves. Once a second the
//! ROS thread asks the graph about each of our topics; a peer of another type ends the run naming
//! the topic, both types and both sides.
//!
//! The decision is ROS-free (tested by plain `cargo test`); only [`check`] asks r2r.

use std::collections::HashMap;

/// Which side of a topic roqsim is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// roqsim publishes it.
    Publishes,
    /// roqsim subscribes it.
    Subscribes,
}

impl Side {
    fn verb(self) -> &'static str {
        match self {
            Side::Publishes => "publishes",
            Side::Subscribes => "subscribes",
        }
    }
}

/// One of our topics.
#[derive(Debug, Clone, PartialEq)]
pub struct Watched {
    /// Absolute topic.
    pub topic: String,
    /// Our type (`pkg/msg/Type`).
    pub msg_type: String,
    /// Our side.
    pub side: Side,
    /// The endpoint behind it (for the message).
    pub endpoint: String,
}

/// A foreign-type peer, as the graph reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Peer {
    /// Its type, when the graph names it.
    pub msg_type: Option<String>,
    /// True when it publishes (found among the topic's publishers), false when it only subscribes.
    pub publishes: bool,
    /// Nodes publishing that type (`/ns/name`), when known.
    pub nodes: Vec<String>,
    /// How many types the graph lists on the topic.
    pub n_types: usize,
}

/// The run-ending message for a mismatch.
pub fn mismatch_message(w: &Watched, peer: &Peer) -> String {
    let who = if peer.nodes.is_empty() {
        String::new()
    } else {
        format!(" (node {})", peer.nodes.join(", "))
    };
    let peer_side = if peer.publishes { "publishes" } else { "subscribes" };
    let ty = match &peer.msg_type {
        Some(t) => t.clone(),
        None => format!("another type (the graph lists {} types on this topic)", peer.n_types),
    };
    format!(
        "topic {}: roqsim {} {} (endpoint {}) but a peer {} {}{}; ROS 2 never connects endpoints of different types, so \
         nothing would flow. Make both sides use one type (for cmd_vel: the drive's `cmd_vel_type`, or the peer's message type)",
        w.topic,
        w.side.verb(),
        w.msg_type,
        w.endpoint,
        peer_side,
        ty,
        who
    )
}

/// Find the first watched topic with a foreign-type peer.
///
/// `types` is the graph's topic → types map as r2r 0.9.7 returns it: its LENGTH per topic is
/// right, but only the FIRST entry is that topic's own type (r2r reads entry i of a topic from
/// the i-th following topic). The graph lists a topic's types sorted, so the first is foreign
/// whenever it is not ours. `publishers(topic)` lists `(type, node)` of the topic's publishers
/// (exact: rcl_get_publishers_info_by_topic). A foreign publisher is named with its type and
/// node; a foreign subscriber with its type when the graph's first entry gives it away.
pub fn find_mismatch(
    watched: &[Watched],
    types: &HashMap<String, Vec<String>>,
    publishers: &dyn Fn(&str) -> Vec<(String, String)>,
) -> Option<String> {
    for w in watched {
        let Some(ts) = types.get(&w.topic) else { continue };
        let first_foreign = ts.first().filter(|t| **t != w.msg_type).cloned();
        if ts.len() < 2 && first_foreign.is_none() {
            continue;
        }
        let pubs = publishers(&w.topic);
        let peer = if let Some((t, _)) = pubs.iter().find(|(t, _)| *t != w.msg_type) {
            let nodes: Vec<String> =
                pubs.iter().filter(|(pt, _)| pt == t).map(|(_, n)| n.clone()).collect();
            Peer { msg_type: Some(t.clone()), publishes: true, nodes, n_types: ts.len() }
        } else {
            Peer { msg_type: first_foreign, publishes: false, nodes: Vec::new(), n_types: ts.len() }
        };
        return Some(mismatch_message(w, &peer));
    }
    None
}

/// Ask the node's graph (ROS thread).
#[cfg(feature = "ros")]
pub fn check(node: &r2r::Node, watched: &[Watched]) -> Option<String> {
    let types = node.get_topic_names_and_types().ok()?;
    let publishers = |topic: &str| -> Vec<(String, String)> {
        node.get_publishers_info_by_topic(topic, false)
            .map(|v| {
                v.into_iter()
                    .map(|i| {
                        let ns = i.node_namespace.trim_end_matches('/');
                        (i.topic_type, format!("{ns}/{}", i.node_name))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    find_mismatch(watched, &types, &publishers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_topic_types_and_sides() {
        let w = vec![
            Watched {
                topic: "/odom".into(),
                msg_type: "nav_msgs/msg/Odometry".into(),
                side: Side::Publishes,
                endpoint: "odom".into(),
            },
            Watched {
                topic: "/cmd_vel".into(),
                msg_type: "geometry_msgs/msg/Twist".into(),
                side: Side::Subscribes,
                endpoint: "cmd_vel".into(),
            },
        ];
        let mut types = HashMap::new();
        types.insert("/odom".to_string(), vec!["nav_msgs/msg/Odometry".to_string()]);
        // r2r's second entry is another topic's type: only the count and the publishers matter
        types.insert(
            "/cmd_vel".to_string(),
            vec!["geometry_msgs/msg/Twist".to_string(), "sensor_msgs/msg/Imu".to_string()],
        );
        let pubs = |t: &str| {
            if t == "/cmd_vel" {
                vec![("geometry_msgs/msg/TwistStamped".to_string(), "/teleop".to_string())]
            } else {
                vec![]
            }
        };
        let m = find_mismatch(&w, &types, &pubs).unwrap();
        assert!(
            m.starts_with("topic /cmd_vel: roqsim subscribes geometry_msgs/msg/Twist (endpoint cmd_vel) but a peer publishes geometry_msgs/msg/TwistStamped (node /teleop)"),
            "{m}"
        );
        // a subscriber of another type on our publication (sorted first: named)
        types.insert(
            "/odom".to_string(),
            vec!["geometry_msgs/msg/PoseStamped".to_string(), "x".to_string()],
        );
        types.remove("/cmd_vel");
        let m = find_mismatch(&w, &types, &|_| vec![]).unwrap();
        assert!(m.starts_with("topic /odom: roqsim publishes nav_msgs/msg/Odometry (endpoint odom) but a peer subscribes geometry_msgs/msg/PoseStamped;"), "{m}");
        // sorted after ours: r2r cannot name it
        types.insert(
            "/odom".to_string(),
            vec!["nav_msgs/msg/Odometry".to_string(), "garbage".to_string()],
        );
        let m = find_mismatch(&w, &types, &|_| vec![]).unwrap();
        assert!(
            m.contains(
                "but a peer subscribes another type (the graph lists 2 types on this topic)"
            ),
            "{m}"
        );
        types.insert("/odom".to_string(), vec!["nav_msgs/msg/Odometry".to_string()]);
        assert_eq!(find_mismatch(&w, &types, &|_| vec![]), None);
    }
}
