//! Topic, frame and type-name resolution.
//!
//! * A topic hint starting with `/` is published verbatim (hardwired), bypassing every
//!   namespace. A relative one (or the endpoint's name when there is no hint) is placed inside
//!   `/<bridge namespace>/<endpoint namespace>/`.
//! * Frames are namespaced independently of topics: `<bridge frame_prefix><endpoint
//!   frame_prefix><frame>`. A hardwired topic keeps its frames namespaced.
//! * Message type names are accepted as `pkg/msg/Type`, `pkg.msg.Type` or `pkg/Type` and
//!   normalised to `pkg/msg/Type` (the form the ROS graph reports).
//!
//! ROS-free: tested by plain `cargo test`.

/// Join non-empty scope parts and a name into an absolute ROS name (`/a/b/name`).
pub fn join_absolute(parts: &[&str]) -> String {
    let mut out = String::new();
    for p in parts {
        for seg in p.split('/').filter(|s| !s.is_empty()) {
            out.push('/');
            out.push_str(seg);
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// The topic an endpoint publishes on: `hint` absolute → verbatim; else
/// `/<global_ns>/<endpoint_ns>/<hint or name>`.
pub fn resolve_topic(global_ns: &str, endpoint_ns: &str, name: &str, hint: Option<&str>) -> String {
    match hint {
        Some(t) if t.starts_with('/') => t.to_string(),
        Some(t) => join_absolute(&[global_ns, endpoint_ns, t]),
        None => join_absolute(&[global_ns, endpoint_ns, name]),
    }
}

/// A group topic stated in the bridge config: absolute verbatim, relative inside the bridge
/// namespace.
pub fn resolve_global(global_ns: &str, topic: &str) -> String {
    if topic.starts_with('/') {
        topic.to_string()
    } else {
        join_absolute(&[global_ns, topic])
    }
}

/// The TF topics: `/tf`, `/tf_static`, or `/<tf_ns>/tf`, `/<tf_ns>/tf_static`.
pub fn tf_topics(tf_namespace: Option<&str>) -> (String, String) {
    let ns = tf_namespace.unwrap_or("");
    (join_absolute(&[ns, "tf"]), join_absolute(&[ns, "tf_static"]))
}

/// Normalise a frame prefix: empty stays empty, otherwise it ends with exactly one `/`.
pub fn normalize_prefix(p: &str) -> String {
    let t = p.trim_matches('/');
    if t.is_empty() {
        String::new()
    } else {
        format!("{t}/")
    }
}

/// The published frame id: `<global prefix><endpoint prefix><frame>`. An empty frame stays
/// empty (nothing to name).
pub fn frame(global_prefix: &str, endpoint_prefix: &str, frame: &str) -> String {
    if frame.is_empty() {
        return String::new();
    }
    let f = frame.trim_start_matches('/');
    format!("{}{}{}", normalize_prefix(global_prefix), normalize_prefix(endpoint_prefix), f)
}

/// Normalise a message/service/action type name to `pkg/<kind>/Type` (`kind` = msg, srv, action).
pub fn normalize_type(t: &str, kind: &str) -> String {
    let t = t.trim();
    let parts: Vec<&str> = t.split(['/', '.']).filter(|s| !s.is_empty()).collect();
    match parts.as_slice() {
        [pkg, k, name] => format!("{pkg}/{k}/{name}"),
        [pkg, name] => format!("{pkg}/{kind}/{name}"),
        _ => t.to_string(),
    }
}

fn check_segments(s: &str, what: &str) -> Result<(), String> {
    for seg in s.split('/').filter(|x| !x.is_empty()) {
        let ok = seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !seg.starts_with(|c: char| c.is_ascii_digit());
        if !ok {
            return Err(format!(
                "`{s}` is not a valid ROS {what}: segment `{seg}` must hold only letters, digits and `_`, and not start with a digit"
            ));
        }
    }
    if s.contains("//") {
        return Err(format!("`{s}` is not a valid ROS {what}: empty segment (`//`)"));
    }
    Ok(())
}

/// Check a namespace (`robot1`, `fleet/robot1`; empty is fine).
pub fn check_namespace(ns: &str) -> Result<(), String> {
    check_segments(ns.trim_matches('/'), "namespace")
}

/// Check a topic name (absolute or relative).
pub fn check_topic(t: &str) -> Result<(), String> {
    if t.trim_matches('/').is_empty() {
        return Err(
            "empty topic: give a relative name (placed in the namespace) or an absolute `/name`"
                .into(),
        );
    }
    if t.ends_with('/') {
        return Err(format!("`{t}` is not a valid ROS topic: it ends with `/`"));
    }
    check_segments(t, "topic")
}

/// Check a frame prefix (letters, digits, `_`, `/`).
pub fn check_frame_prefix(p: &str) -> Result<(), String> {
    check_segments(p.trim_matches('/'), "frame prefix")
}

/// Does an endpoint owned by `owner` pass the owner filter `owners` (exact, or an entity nested
/// under a listed one: `robot1` takes `robot1.arm`)?
pub fn owner_matches(owners: Option<&[String]>, owner: Option<&str>) -> bool {
    match owners {
        None => true,
        Some(list) => match owner {
            None => false,
            Some(o) => list.iter().any(|l| o == l || o.starts_with(&format!("{l}."))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics() {
        assert_eq!(resolve_topic("", "", "odom", None), "/odom");
        assert_eq!(resolve_topic("", "robot1", "odom", None), "/robot1/odom");
        assert_eq!(resolve_topic("sim", "robot1", "odom", None), "/sim/robot1/odom");
        // relative rename inside the namespace
        assert_eq!(resolve_topic("", "robot1", "scan", Some("scan2")), "/robot1/scan2");
        assert_eq!(resolve_topic("", "robot1", "scan", Some("front/scan")), "/robot1/front/scan");
        // absolute hardwires, bypassing both namespaces
        assert_eq!(
            resolve_topic("sim", "robot1", "joint_states", Some("/joint_states")),
            "/joint_states"
        );
        assert_eq!(resolve_global("sim", "joint_states"), "/sim/joint_states");
        assert_eq!(resolve_global("sim", "/cell/joint_states"), "/cell/joint_states");
        assert_eq!(tf_topics(None), ("/tf".to_string(), "/tf_static".to_string()));
        assert_eq!(
            tf_topics(Some("a200_0000")),
            ("/a200_0000/tf".to_string(), "/a200_0000/tf_static".to_string())
        );
        assert_eq!(tf_topics(Some("/r1/")), ("/r1/tf".to_string(), "/r1/tf_static".to_string()));
    }

    #[test]
    fn frames() {
        assert_eq!(frame("", "", "base_link"), "base_link");
        assert_eq!(frame("", "robot1/", "base_link"), "robot1/base_link");
        assert_eq!(frame("", "robot1", "base_link"), "robot1/base_link");
        assert_eq!(frame("sim", "robot1/", "odom"), "sim/robot1/odom");
        assert_eq!(frame("sim/", "", "map"), "sim/map");
        assert_eq!(frame("sim", "robot1/", ""), "");
    }

    #[test]
    fn types() {
        assert_eq!(normalize_type("nav_msgs/msg/Odometry", "msg"), "nav_msgs/msg/Odometry");
        assert_eq!(normalize_type("sensor_msgs.msg.LaserScan", "msg"), "sensor_msgs/msg/LaserScan");
        assert_eq!(normalize_type("std_srvs/SetBool", "srv"), "std_srvs/srv/SetBool");
        assert_eq!(
            normalize_type("control_msgs.action.FollowJointTrajectory", "action"),
            "control_msgs/action/FollowJointTrajectory"
        );
    }

    #[test]
    fn checks() {
        assert!(check_namespace("robot1").is_ok());
        assert!(check_namespace("/fleet/robot_1/").is_ok());
        assert!(check_namespace("").is_ok());
        assert!(check_namespace("robot-1").unwrap_err().contains("segment `robot-1`"));
        assert!(check_namespace("1robot").is_err());
        assert!(check_topic("/cmd_vel").is_ok());
        assert!(check_topic("scan2").is_ok());
        assert!(check_topic("").is_err());
        assert!(check_topic("/a//b").is_err());
        assert!(check_topic("a b").is_err());
    }

    #[test]
    fn owners() {
        let l = vec!["robot1".to_string()];
        assert!(owner_matches(None, None));
        assert!(owner_matches(Some(&l), Some("robot1")));
        assert!(owner_matches(Some(&l), Some("robot1.arm")));
        assert!(!owner_matches(Some(&l), Some("robot10")));
        assert!(!owner_matches(Some(&l), None));
    }
}
