//! The wiring rules of the plan, checked on registries built by hand.

use std::collections::BTreeMap;

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
        Endpoint::out("scan").rate(10.0).hint("ros2", "type", "sensor_msgs.msg.LaserScan").hint(
            "ros2",
            "qos",
            "sensor_data",
        ),
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
        Endpoint::out("scan").rate(10.0).hint("ros2", "type", "sensor_msgs/msg/LaserScan").hint(
            "ros2",
            "topic",
            "/front_scan",
        ),
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
        p.warnings[0]
            .contains("2 robots publish joint states (robot1, robot2) and auto keeps them apart"),
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
        i.add(at(Endpoint::out("odom").rate(50.0).hint("ros2", "type", "nav_msgs/msg/Odometry")));
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
    let grp =
        build(&iface(), &BridgeConfig { merged_joint_states: g, ..Default::default() }).unwrap();
    assert_eq!(grp.merged[0].members, vec![8, 4, 5], "group order, then registration order");
    let bad = MergedJointStates::Groups(vec![MergeGroup {
        topic: "js".into(),
        owners: vec!["nobody".into()],
    }]);
    let e = build(&iface(), &BridgeConfig { merged_joint_states: bad, ..Default::default() })
        .unwrap_err();
    assert!(
        e[0].contains("no joint_states endpoint is owned by [nobody]") && e[0].contains("robot1"),
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
    let p = build(&iface(), &BridgeConfig { rates: rates.clone(), ..Default::default() }).unwrap();
    assert_eq!(
        p.outputs.iter().find(|o| o.label == "robot1/scan").unwrap().rate_override,
        Some(5.0)
    );
    assert_eq!(p.outputs.iter().find(|o| o.label == "robot2/scan").unwrap().rate_override, None);
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
        Endpoint::out("a").hint("ros2", "type", "std_msgs/msg/Float64").hint("ros2", "topic", "/x"),
    );
    i.add(Endpoint::out("b").hint("ros2", "type", "std_msgs/msg/Bool").hint("ros2", "topic", "/x"));
    i.add(Endpoint::out("c").hint("ros2", "type", "std_msgs/msg/Bool").hint("ros2", "qos", "fast"));
    i.add(Endpoint::out("d").hint("ros2", "tf", "sometimes"));
    i.add(
        Endpoint::out("e").hint("ros2", "type", "std_msgs/msg/Bool").hint("ros2", "topic", "a b"),
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
