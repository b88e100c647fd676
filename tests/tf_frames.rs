//! TF frame claims (issues 14 and 15), ROS-free: every plugin that publishes a transform claims
//! its `(parent, child)` edge while the world is set up, and a second publisher of one child
//! frame is refused naming both entries, the key that names the frame and the fix. A camera
//! device's frames take its `camera_name` as realsense-ros and depthai-ros name them, so two
//! devices of one model are two distinct chains. Needs no GL (nothing is rendered).

mod common;

use common::{engine, refusal};
use roqsim::context::Payload;
use roqsim::Engine;

/// The `(parent, child)` edges of the static TF an entry publishes (latched at setup).
fn static_edges(e: &Engine, owner: &str) -> Vec<(String, String)> {
    let ep = e
        .ctx
        .interface
        .all()
        .iter()
        .find(|x| x.name == "tf_static" && x.owner.as_deref() == Some(owner))
        .unwrap_or_else(|| panic!("no tf_static of `{owner}`"));
    let Some((Payload::Transforms(ts), _)) = ep.latest() else { panic!("nothing latched") };
    ts.iter().map(|t| (t.parent.clone(), t.child.clone())).collect()
}

/// `(topic, frame_id)` of the camera endpoint `role` of entity `owner`.
fn stream(e: &Engine, owner: &str, role: &str) -> (String, String) {
    let ep = e
        .ctx
        .interface
        .all()
        .iter()
        .find(|x| x.name == role && x.owner.as_deref() == Some(owner))
        .unwrap_or_else(|| panic!("no {role} of `{owner}`"));
    let hint = |k| ep.get_hint("ros2", k).unwrap_or_default().to_string();
    (hint("topic"), hint("frame_id"))
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

const TWO_D435: &str = "sim: {timestep: 0.002}
components:
  - spawn_sensor: {model: realsense_d435, camera_name: camera_front, pos: [0.0, 0.0, 0.5]}
    name: front
  - spawn_sensor: {model: realsense_d435, camera_name: camera_rear, pos: [-0.2, 0.0, 0.5], rpy: [0.0, 0.0, 3.141592653589793]}
    name: rear
";

#[test]
fn two_d435_named_apart_publish_two_full_chains_and_stamp_their_own_frames() {
    let e = engine(TWO_D435);
    for (entry, n) in [("front", "camera_front"), ("rear", "camera_rear")] {
        let f = |s: &str| format!("{n}_{s}");
        assert_eq!(
            static_edges(&e, entry),
            pairs(&[
                ("world", &f("link")),
                (&f("link"), &f("depth_frame")),
                (&f("depth_frame"), &f("depth_optical_frame")),
                (&f("link"), &f("color_frame")),
                (&f("color_frame"), &f("color_optical_frame")),
            ]),
            "{entry}"
        );
        // realsense-ros's topics under the camera's name, stamped in its own optical frame
        assert_eq!(
            stream(&e, entry, "image"),
            (format!("{n}/color/image_raw"), f("color_optical_frame"))
        );
        assert_eq!(
            stream(&e, entry, "depth"),
            (format!("{n}/depth/image_rect_raw"), f("color_optical_frame"))
        );
        assert_eq!(
            stream(&e, entry, "camera_info"),
            (format!("{n}/color/camera_info"), f("color_optical_frame"))
        );
    }
    // every edge is claimed once: ten device edges, no child twice
    let children: Vec<&str> = e.ctx.claims.tf_edges().map(|(_, t)| t.child.as_str()).collect();
    let mut unique = children.clone();
    unique.sort();
    unique.dedup();
    assert_eq!((children.len(), unique.len()), (10, 10), "{children:?}");
}

#[test]
fn a_single_device_keeps_the_vendor_default_names() {
    let e = engine(
        "components:
  - spawn_sensor: {model: realsense_d435, pos: [0.0, 0.0, 0.5]}
    name: camera
  - spawn_sensor: {model: oakd_pro, pos: [0.0, 0.5, 0.5]}
    name: oak
  - spawn_sensor: {model: realsense_d415, pos: [0.0, -0.5, 0.5], camera_name: d415}
    name: d415
",
    );
    assert_eq!(
        static_edges(&e, "camera"),
        pairs(&[
            ("world", "camera_link"),
            ("camera_link", "camera_depth_frame"),
            ("camera_depth_frame", "camera_depth_optical_frame"),
            ("camera_link", "camera_color_frame"),
            ("camera_color_frame", "camera_color_optical_frame"),
        ])
    );
    assert_eq!(
        stream(&e, "camera", "image"),
        ("camera/color/image_raw".into(), "camera_color_optical_frame".into())
    );
    // depthai-ros: base frame = the node's name, then <name>_rgb_camera_frame and its optical frame
    assert_eq!(
        static_edges(&e, "oak"),
        pairs(&[
            ("world", "oak"),
            ("oak", "oak_rgb_camera_frame"),
            ("oak_rgb_camera_frame", "oak_rgb_camera_optical_frame"),
        ])
    );
    assert_eq!(
        stream(&e, "oak", "depth"),
        ("oak/stereo/image_raw".into(), "oak_rgb_camera_optical_frame".into())
    );
    assert_eq!(
        static_edges(&e, "d415"),
        pairs(&[
            ("world", "d415_link"),
            ("d415_link", "d415_color_frame"),
            ("d415_color_frame", "d415_color_optical_frame"),
        ])
    );
}

#[test]
fn two_devices_of_one_model_with_one_name_are_refused_naming_both() {
    let two = "components:
  - spawn_sensor: {model: realsense_d435, pos: [0.0, 0.0, 0.5]}
    name: front
  - spawn_sensor: {model: realsense_d435, pos: [-0.2, 0.0, 0.5]}
    name: rear
";
    assert_eq!(
        refusal(two),
        "[rear] configure: camera_name: TF frame `camera_link` is already published by `front` (spawn_sensor, `world -> camera_link` on /tf_static, named by its `camera_name`); this entry publishes `world -> camera_link` on /tf_static, and a frame has one parent: TF would jump between the two. Give each device its own `camera_name:` on its spawn_sensor entry (every frame of the device and its camera's topics take it), or its carrier a `namespace:`."
    );
    let oaks = "components:
  - spawn_sensor: {model: oakd_pro, pos: [0.0, 0.0, 0.5]}
    name: left
  - spawn_sensor: {model: oakd_pro, pos: [0.0, 0.3, 0.5]}
    name: right
";
    assert!(refusal(oaks).starts_with("[right] configure: camera_name: TF frame `oak` is already published by `left` (spawn_sensor, `world -> oak` on /tf_static"), "{}", refusal(oaks));
}

#[test]
fn a_mount_frame_id_naming_another_devices_frame_is_refused() {
    let yaml = "components:
  - spawn_sensor: {model: realsense_d435, pos: [0.0, 0.0, 0.5]}
    name: front
  - spawn_sensor: {model: realsense_d435, camera_name: rear, frame_id: camera_color_frame, pos: [-0.2, 0.0, 0.5]}
    name: rear
";
    assert_eq!(
        refusal(yaml),
        "[rear] configure: frame_id: TF frame `camera_color_frame` is already published by `front` (spawn_sensor, `camera_link -> camera_color_frame` on /tf_static, named by its `camera_name`); this entry publishes `world -> camera_color_frame` on /tf_static, and a frame has one parent: TF would jump between the two. Give this mount another `frame_id:` (it names the device's first frame), or leave it out: the device's `camera_name:` names every frame."
    );
}

#[test]
fn a_camera_named_apart_from_its_mount_is_refused() {
    // `camera_name:` on the camera entry renames its topics and frames but not the mount's chain:
    // the images would be stamped in a frame nothing publishes.
    let yaml = "components:
  - spawn_sensor: {model: realsense_d435, pos: [0.0, 0.0, 0.5]}
    name: cam
    components:
      - realsense_d435: {camera_name: front}
";
    assert_eq!(
        refusal(yaml),
        "[cam.realsense_d435] configure: frame_id: `front_color_optical_frame` is not a frame of the device `cam` this camera is nested under (it publishes camera_link, camera_depth_frame, camera_depth_optical_frame, camera_color_frame, camera_color_optical_frame), so nothing would publish the frame its images are stamped in; name the device on its spawn_sensor entry (`camera_name:` there names the device's frames and this camera's topics and frames together), or set `frame_id:` to one of its frames"
    );
}

#[test]
fn camera_name_is_refused_on_a_device_that_is_not_a_camera_and_when_malformed() {
    let lidar = "components:
  - spawn_sensor: {model: rplidar_a1, camera_name: front, pos: [0.0, 0.0, 0.5]}
    name: lidar
";
    common::assert_has(
        &refusal(lidar),
        &["camera_name: `rplidar_a1` is not a camera device (its manifest declares no `camera_name`), so nothing takes the name; name its frame with `frame_id:`"],
    );
    let bad = "components:
  - spawn_sensor: {model: realsense_d435, camera_name: 2front, pos: [0.0, 0.0, 0.5]}
    name: cam
";
    common::assert_has(
        &refusal(bad),
        &[
            "camera_name",
            "`2front` is not a camera name: letters, digits and `_`, not starting with a digit",
        ],
    );
}

#[test]
fn two_robots_without_a_namespace_whose_topics_were_renamed_apart_are_refused() {
    // Renaming topics apart leaves both drives publishing odom -> base_footprint on /tf: TF would
    // alternate between the two robots.
    let yaml = "components:
  - spawn_robot: {model: omni_base, prefix: r1_}
    name: r1
  - spawn_robot: {model: omni_base, prefix: r2_, pose: {position: {x: 2.0}}}
    name: r2
    components:
      - omni_drive: {topics: {cmd_vel: r2/cmd_vel, odom: r2/odom}}
";
    assert_eq!(
        refusal(yaml),
        "[r2.omni_drive] configure: odom_child_frame: TF frame `base_footprint` is already published by `r1.omni_drive` (omni_drive, `odom -> base_footprint` on /tf, named by its `odom_child_frame`); this entry publishes `odom -> base_footprint` on /tf, and a frame has one parent: TF would jump between the two. Give each robot its own `namespace:` on its spawn entry (its frames then take the prefix `<namespace>/`); renaming topics apart does not rename frames."
    );
    // namespaced apart, both load and each claims its own prefixed frames
    let e = engine(
        "components:
  - spawn_robot: {model: omni_base, namespace: r1, prefix: r1_}
    name: r1
  - spawn_robot: {model: omni_base, namespace: r2, prefix: r2_, pose: {position: {x: 2.0}}}
    name: r2
",
    );
    let odom: Vec<(String, String)> = e
        .ctx
        .claims
        .tf_edges()
        .filter(|(_, t)| t.child.ends_with("base_footprint"))
        .map(|(by, t)| (by.address.clone(), format!("{} -> {}", t.parent, t.child)))
        .collect();
    assert_eq!(
        odom,
        pairs(&[
            ("r1.omni_drive", "r1/odom -> r1/base_footprint"),
            ("r2.omni_drive", "r2/odom -> r2/base_footprint")
        ])
    );
}

// ------------------------------------------------------------------ loops, self-edges, frame ids

#[test]
fn a_frame_as_its_own_parent_is_refused_naming_the_key() {
    let drive = "components:
  - spawn_robot: {model: turtlebot4}
    name: tb
    components:
      - diff_drive: {odom_child_frame: odom}
";
    assert_eq!(refusal(drive), "[tb.diff_drive] configure: odom_child_frame: this entry publishes `odom -> odom` on /tf, a frame as its own parent: TF is a tree and refuses the loop. Name the child frame apart from its parent (change `odom_child_frame:`)");
}

#[test]
fn a_ground_truth_frame_as_its_own_parent_is_refused() {
    let gt = "components:
  - spawn_robot: {model: turtlebot4}
    name: tb
    components:
      - ground_truth_pose: {frame_id: gt, child_frame: gt}
";
    assert_eq!(refusal(gt), "[tb.ground_truth_pose] configure: child_frame: this entry publishes `gt -> gt` on /tf, a frame as its own parent: TF is a tree and refuses the loop. Name the child frame apart from its parent (change `child_frame:`)");
}

#[test]
fn a_loop_through_two_publishers_is_refused_naming_both() {
    // the oak's base frame takes its camera_name: `odom` hangs the robot's odom frame under its
    // own base link, while the drive publishes odom -> base_footprint
    let cam = "components:
  - spawn_robot: {model: turtlebot4}
    name: tb
    components:
      - diff_drive: {}
      - spawn_sensor: {model: oakd_pro, camera_name: odom, parent_frame: base_link, pos: [0.0, 0.0, 0.3]}
        name: oak
";
    assert_eq!(refusal(cam), "[tb.oak] configure: camera_name: this entry publishes `base_link -> odom` on /tf_static, but `odom` is already an ancestor of `base_link`: `odom -> base_link` by `tb.diff_drive` (diff_drive, named by its `odom_child_frame`); TF is a tree and a frame cannot be its own ancestor. Name the frames apart: change this entry's `camera_name:` or the frame of the other entry");
}

#[test]
fn frame_ids_tf_refuses_are_refused_with_the_rule() {
    let sp = "components:
  - spawn_robot: {model: turtlebot4}
    name: tb
    components:
      - ground_truth_pose: {child_frame: my frame}
";
    assert_eq!(refusal(sp), "[tb.ground_truth_pose] configure: child_frame: `my frame` is not a TF frame id: ' ' is not allowed; a frame id holds letters, digits and `_`, with `/` between namespace segments (as ROS names do)");
    let slash = "components:
  - spawn_robot: {model: turtlebot4}
    name: tb
    components:
      - ground_truth_pose: {child_frame: 'gt#1'}
";
    assert_eq!(refusal(slash), "[tb.ground_truth_pose] configure: child_frame: `gt#1` is not a TF frame id: '#' is not allowed; a frame id holds letters, digits and `_`, with `/` between namespace segments (as ROS names do)");
}

// ------------------------------------------------------------------------- one topic, one writer

/// The topic clashes `roqsim check` and `roqsim sim` refuse after setup.
fn clash(yaml: &str) -> String {
    engine(yaml).topic_clashes().unwrap_err().to_string()
}

#[test]
fn two_sensors_of_one_kind_on_one_topic_are_refused_naming_both() {
    let imus = "components:
  - spawn_robot: {model: turtlebot4}
    name: tb
    components:
      - imu: {}
        name: imu_a
      - imu: {}
        name: imu_b
";
    assert_eq!(clash(imus), "[tb.imu_b] configure: topics.imu: `/imu/data` is already published by `tb.imu_a` (its `imu`, sensor_msgs/msg/Imu); two publishers on one topic interleave their messages: give this one another topic with its `topics:` map, or its robot a `namespace:`");
}

#[test]
fn two_lidars_on_one_scan_topic_are_refused_and_renamed_apart_they_load() {
    let two = |topics: &str| {
        format!(
            "components:
  - spawn_robot: {{model: turtlebot4}}
    name: tb
    components:
      - spawn_sensor: {{}}
        name: rplidar
        components:
          - lidar: {{}}
      - spawn_sensor: {{model: rplidar_a1, parent_frame: base_link, frame_id: rear_laser, pos: [-0.1, 0.0, 0.3]}}
        name: rear
        components:
          - lidar: {{{topics}}}
"
        )
    };
    assert_eq!(
        clash(&two("")),
        "[tb.rear.lidar] configure: topics.scan: `/scan` is already published by `tb.rplidar.lidar` (its `scan`, sensor_msgs/msg/LaserScan); two publishers on one topic interleave their messages: give this one another topic with its `topics:` map, or its robot a `namespace:`"
    );
    let e = engine(&two("topics: {scan: scan_rear}"));
    let scans: Vec<(String, String)> = e
        .ctx
        .interface
        .all()
        .iter()
        .filter(|x| x.name == "scan")
        .map(|x| {
            (
                x.added_by.clone().unwrap_or_default(),
                x.get_hint("ros2", "topic").unwrap_or("scan").to_string(),
            )
        })
        .collect();
    assert_eq!(scans, pairs(&[("tb.rplidar.lidar", "scan"), ("tb.rear.lidar", "scan_rear")]));
}

#[test]
fn two_message_types_on_one_topic_are_refused_naming_both() {
    let mixed = "components:
  - spawn_robot: {model: turtlebot4}
    name: tb
    components:
      - imu: {topics: {imu: scan}}
      - spawn_sensor: {}
        name: rplidar
        components:
          - lidar: {}
";
    assert_eq!(clash(mixed), "[tb.imu] configure: topics.imu: `tb.imu` publishes sensor_msgs/msg/Imu on `/scan`, but `tb.rplidar.lidar` (its `scan`) publishes sensor_msgs/msg/LaserScan there; a ROS topic has one message type: rename one of them with its `topics:` map");
}

#[test]
fn the_node_s_own_topics_and_names_ros_refuses_are_refused_by_check() {
    let with = |component: &str| {
        format!(
            "components:
  - spawn_robot: {{model: turtlebot4}}
    name: tb
    components:
      - {component}
"
        )
    };
    assert_eq!(
        clash(&with("imu: {topics: {imu: /tf}}")),
        "[tb.imu] configure: topics.imu: `/tf` is the ROS node's own topic (the transforms, tf2_msgs/msg/TFMessage): give this one another topic with its `topics:` map"
    );
    assert_eq!(
        clash(&with("imu: {topics: {imu: /clock}}")),
        "[tb.imu] configure: topics.imu: `/clock` is the ROS node's own topic (the simulation time, rosgraph_msgs/msg/Clock): give this one another topic with its `topics:` map"
    );
    assert_eq!(
        clash(&with("imu: {topics: {imu: /imu/}}")),
        "[tb.imu] configure: topics.imu: `/imu/` is not a valid ROS topic: it ends with `/`"
    );
    let long = "a".repeat(300);
    assert_eq!(
        clash(&with(&format!("imu: {{topics: {{imu: {long}}}}}"))),
        format!("[tb.imu] configure: topics.imu: `/{}… (301 bytes in all)` is 301 characters long; ROS 2 takes topic names of at most 247: give a shorter topic or namespace", "a".repeat(79))
    );
}

#[test]
fn a_stamped_frame_id_tf_would_refuse_is_refused_where_it_is_given() {
    let lidar = "components:
  - spawn_robot: {model: turtlebot4}
    name: tb
    components:
      - spawn_sensor: {}
        name: rplidar
        components:
          - lidar: {frame_id: my laser}
";
    assert_eq!(clash(lidar), "[tb.rplidar.lidar] configure: frame_id: `my laser` is not a TF frame id: ' ' is not allowed; a frame id holds letters, digits and `_`, with `/` between namespace segments (as ROS names do)");
    let gnss = "components:
  - spawn_robot: {model: turtlebot4}
    name: tb
    components:
      - gnss: {datum: {lat: 0, lon: 0, alt: 0}, frame_id: my gps}
";
    assert_eq!(refusal(gnss), "1 problem in the world:\n  - components.tb.gnss.frame_id: `my gps` is not a TF frame id: ' ' is not allowed; a frame id holds letters, digits and `_`, with `/` between namespace segments (as ROS names do) (gnss)\n");
}
