//! nav2_msgs as r2r generates it (feature `ros`; needs the ROS environment of scripts/env.sh, in
//! which IDL_PACKAGE_FILTER lists nav2_msgs and geographic_msgs).
//!
//! The type supports r2r hands to rcl report the RIHS01 hashes of interfaces/TYPE_HASHES.txt (what
//! a Jazzy Nav2 peer compares), goals survive a CDR round trip through the C type support, and the
//! defaults of the published definitions reach the Rust structs.
#![cfg(feature = "ros")]

use std::collections::BTreeMap;
use std::path::Path;

use r2r::nav2_msgs::{action, msg, srv};
use r2r::{WrappedActionTypeSupport, WrappedServiceTypeSupport, WrappedTypesupport};

/// `pkg/kind/Type` → `RIHS01_<hex>` from interfaces/TYPE_HASHES.txt.
fn listed() -> BTreeMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("interfaces/TYPE_HASHES.txt");
    let text = std::fs::read_to_string(&path).expect("TYPE_HASHES.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut f = l.split_whitespace();
            (f.next().unwrap().to_string(), f.next().unwrap().to_string())
        })
        .collect()
}

fn rihs(version: u8, value: &[u8]) -> String {
    let hex: String = value.iter().map(|b| format!("{b:02x}")).collect();
    format!("RIHS{version:02}_{hex}")
}

macro_rules! action_hash {
    ($t:ty) => {{
        let ts = <$t>::get_ts();
        let f = ts.get_type_hash_func.expect("action type support has a hash function");
        // SAFETY: the generated function returns a pointer to a static hash; it ignores its argument.
        let h = unsafe { &*f(ts) };
        rihs(h.version, &h.value)
    }};
}

macro_rules! service_hash {
    ($t:ty) => {{
        let ts = <$t>::get_ts();
        let f = ts.get_type_hash_func.expect("service type support has a hash function");
        // SAFETY: as above.
        let h = unsafe { &*f(ts) };
        rihs(h.version, &h.value)
    }};
}

macro_rules! msg_hash {
    ($t:ty) => {{
        let ts = <$t>::get_ts();
        let f = ts.get_type_hash_func.expect("message type support has a hash function");
        // SAFETY: as above.
        let h = unsafe { &*f(ts) };
        rihs(h.version, &h.value)
    }};
}

#[test]
fn r2r_type_supports_report_the_listed_hashes() {
    let list = listed();
    let got = [
        ("nav2_msgs/action/NavigateToPose", action_hash!(action::NavigateToPose::Action)),
        (
            "nav2_msgs/action/NavigateThroughPoses",
            action_hash!(action::NavigateThroughPoses::Action),
        ),
        ("nav2_msgs/action/FollowWaypoints", action_hash!(action::FollowWaypoints::Action)),
        ("nav2_msgs/action/FollowGPSWaypoints", action_hash!(action::FollowGPSWaypoints::Action)),
        ("nav2_msgs/action/DockRobot", action_hash!(action::DockRobot::Action)),
        ("nav2_msgs/action/FollowObject", action_hash!(action::FollowObject::Action)),
        ("nav2_msgs/srv/GetCost", service_hash!(srv::GetCost::Service)),
        ("nav2_msgs/srv/ManageLifecycleNodes", service_hash!(srv::ManageLifecycleNodes::Service)),
        ("nav2_msgs/msg/Costmap", msg_hash!(msg::Costmap)),
        ("nav2_msgs/msg/ParticleCloud", msg_hash!(msg::ParticleCloud)),
        ("geographic_msgs/msg/GeoPose", msg_hash!(r2r::geographic_msgs::msg::GeoPose)),
    ];
    for (name, hash) in got {
        assert_eq!(Some(&hash), list.get(name), "{name}");
    }
}

#[test]
fn navigate_to_pose_goal_survives_a_cdr_round_trip() {
    let mut goal = action::NavigateToPose::Goal::default();
    goal.pose.header.frame_id = "map".into();
    goal.pose.header.stamp.sec = 42;
    goal.pose.pose.position.x = 1.5;
    goal.pose.pose.position.y = -2.25;
    goal.pose.pose.orientation.z = (std::f64::consts::PI / 8.0).sin();
    goal.pose.pose.orientation.w = (std::f64::consts::PI / 8.0).cos();
    goal.behavior_tree = "navigate_w_replanning.xml".into();
    let bytes = goal.to_serialized_bytes().expect("serializes");
    // CDR: 4 encapsulation bytes, then Time (8), "map\0" with its length (8: the Pose's float64s
    // start 8-aligned at 16), Pose (7 × 8), behavior_tree's length and 25 characters + NUL (30).
    assert_eq!(bytes.len(), 4 + 8 + 8 + 56 + 30);
    let back = action::NavigateToPose::Goal::from_serialized_bytes(&bytes).expect("deserializes");
    assert_eq!(back, goal);

    let through = action::NavigateThroughPoses::Goal {
        poses: vec![goal.pose.clone(), goal.pose.clone(), goal.pose],
        ..Default::default()
    };
    let bytes = through.to_serialized_bytes().expect("serializes");
    let back =
        action::NavigateThroughPoses::Goal::from_serialized_bytes(&bytes).expect("deserializes");
    assert_eq!(back.poses.len(), 3);
    assert_eq!(back, through);
}

#[test]
fn defaults_of_the_published_definitions_reach_the_rust_structs() {
    let dock = action::DockRobot::Goal::default();
    assert!(dock.use_dock_id && dock.navigate_to_staging_pose);
    assert_eq!(dock.max_staging_time, 1000.0);
    let res = action::DockRobot::Result::default();
    assert!(res.success);
    assert_eq!((res.error_code, res.num_retries), (0, 0));
    assert_eq!(action::UndockRobot::Goal::default().max_undocking_time, 30.0);
    assert_eq!(action::FollowWaypoints::Goal::default().goal_index, 0);
    let gps = action::FollowGPSWaypoints::Result { error_code: -1, ..Default::default() };
    assert_eq!(gps.error_code, -1i16);
    assert_eq!(r2r::geographic_msgs::msg::GeoPoseWithCovariance::default().covariance.len(), 36);
}
