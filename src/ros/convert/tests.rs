//! Converter round trips and stamps.

use r2r::ackermann_msgs::msg as ack;
use r2r::nav_msgs::msg as nav;
use r2r::sensor_msgs::msg as sensor;
use r2r::trajectory_msgs::msg as traj;

use super::*;
use crate::context::payload as pl;

#[test]
fn stamps_are_exact_nanoseconds() {
    let mut t = 0.0;
    for _ in 0..5000 {
        t += 0.002;
    }
    let s = stamp(t);
    assert_eq!((s.sec, s.nanosec), (10, 0));
    let s = stamp(1.0021);
    assert_eq!((s.sec, s.nanosec), (1, 2_100_000));
    assert_eq!(seconds(&stamp(3.25)), 3.25);
}

#[test]
fn odometry_fills_in_place_with_prefixed_frames() {
    let fr = Frames { prefix: "robot1/".into(), hint: None };
    let p = Payload::Odometry(pl::Odometry {
        stamp: 1.5,
        frame_id: "odom".into(),
        child_frame_id: "base_link".into(),
        position: [1.0, 2.0, 0.0],
        orientation: [0.0, 0.0, 0.6, 0.8],
        linear: [0.2, 0.0, 0.0],
        angular: [0.0, 0.0, 0.1],
        pose_covariance: [0.01; 36],
        ..Default::default()
    });
    let mut m = nav::Odometry::default();
    fill_odometry(&mut m, &p, &fr).unwrap();
    assert_eq!(m.header.frame_id, "robot1/odom");
    assert_eq!(m.child_frame_id, "robot1/base_link");
    assert_eq!((m.header.stamp.sec, m.header.stamp.nanosec), (1, 500_000_000));
    assert_eq!(m.pose.pose.position.y, 2.0);
    assert_eq!(m.pose.pose.orientation.w, 0.8);
    assert_eq!(m.pose.covariance.len(), 36);
    assert_eq!(m.twist.twist.angular.z, 0.1);
    let mut tfs = Vec::new();
    transforms_of(&p, 9.0, &fr, &mut tfs).unwrap();
    assert_eq!(tfs.len(), 1);
    assert_eq!(
        (tfs[0].header.frame_id.as_str(), tfs[0].child_frame_id.as_str()),
        ("robot1/odom", "robot1/base_link")
    );
    assert_eq!(tfs[0].header.stamp.nanosec, 500_000_000, "odometry TF carries the odometry stamp");
    assert_eq!(tfs[0].transform.translation.x, 1.0);
    let e = fill_scan(&mut sensor::LaserScan::default(), &p, &fr).unwrap_err();
    assert!(e.contains("a Odometry payload cannot be published as sensor_msgs/msg/LaserScan (it takes: LaserScan)"), "{e}");
}

#[test]
fn cloud_fills_xyz_float32_little_endian() {
    let fr = Frames { prefix: String::new(), hint: None };
    let p = Payload::PointCloud(pl::PointCloud {
        stamp: 0.5,
        frame_id: "livox_frame".into(),
        points: vec![[1.0, 2.0, 3.0], [0.0, 0.0, -0.5]],
    });
    let mut m = sensor::PointCloud2::default();
    fill_cloud(&mut m, &p, &fr).unwrap();
    assert_eq!(m.header.frame_id, "livox_frame");
    let names: Vec<_> = m.fields.iter().map(|f| (f.name.as_str(), f.offset, f.datatype)).collect();
    assert_eq!(names, vec![("x", 0, 7), ("y", 4, 7), ("z", 8, 7)]);
    assert_eq!((m.height, m.width, m.point_step, m.row_step), (1, 2, 12, 24));
    assert!(m.is_dense && !m.is_bigendian);
    assert_eq!(m.data.len(), 24);
    assert_eq!(f32::from_le_bytes(m.data[4..8].try_into().unwrap()), 2.0);
    assert_eq!(f32::from_le_bytes(m.data[20..24].try_into().unwrap()), -0.5);
}

#[test]
fn range_navsat_and_twist_cov_fill_every_field() {
    let fr = Frames { prefix: "robot/".into(), hint: None };
    let p = Payload::Range(pl::Range {
        stamp: 1.25,
        frame_id: "cliff_front_left".into(),
        radiation_type: 1,
        field_of_view: 0.0873,
        min_range: 0.0001,
        max_range: 0.15,
        range: f32::INFINITY,
        variance: 0.0,
    });
    let mut m = sensor::Range::default();
    fill_range(&mut m, &p, &fr).unwrap();
    assert_eq!(m.header.frame_id, "robot/cliff_front_left");
    assert_eq!((m.header.stamp.sec, m.header.stamp.nanosec), (1, 250_000_000));
    assert_eq!((m.radiation_type, m.field_of_view, m.max_range), (1, 0.0873, 0.15));
    assert_eq!(m.range, f32::INFINITY);
    let e = fill_navsat(&mut sensor::NavSatFix::default(), &p, &fr).unwrap_err();
    assert!(e.contains("a Range payload cannot be published as sensor_msgs/msg/NavSatFix (it takes: NavSatFix)"), "{e}");
    let f = Payload::NavSatFix(pl::NavSatFix {
        stamp: 0.1,
        frame_id: "gps".into(),
        status: 0,
        service: 1,
        latitude: 47.5,
        longitude: 8.5,
        altitude: 488.0,
        position_covariance: [0.25, 0.0, 0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 1.0],
        position_covariance_type: 2,
    });
    let mut n = sensor::NavSatFix::default();
    fill_navsat(&mut n, &f, &fr).unwrap();
    assert_eq!((n.status.status, n.status.service), (0, 1));
    assert_eq!((n.latitude, n.longitude, n.altitude), (47.5, 8.5, 488.0));
    assert_eq!(n.position_covariance[8], 1.0);
    assert_eq!(n.position_covariance_type, 2);
    let mut cov = [0.0; 36];
    cov[0] = 0.01;
    let t = Payload::TwistCov(pl::TwistCov {
        stamp: 0.1,
        frame_id: "gps".into(),
        linear: [1.0, 2.0, 3.0],
        angular: [0.0; 3],
        covariance: cov,
    });
    let mut v = geo::TwistWithCovarianceStamped::default();
    fill_twist_cov(&mut v, &t, &fr).unwrap();
    assert_eq!(v.header.frame_id, "robot/gps");
    assert_eq!((v.twist.twist.linear.x, v.twist.twist.linear.z), (1.0, 3.0));
    assert_eq!(v.twist.covariance.len(), 36);
    assert_eq!(v.twist.covariance[0], 0.01);
}

#[test]
fn scan_frame_hint_and_merge() {
    let fr = Frames { prefix: String::new(), hint: Some("rplidar_link".into()) };
    let p = Payload::LaserScan(pl::LaserScan {
        stamp: 0.1,
        ranges: vec![1.0, 2.0],
        angle_increment: 0.5,
        ..Default::default()
    });
    let mut m = sensor::LaserScan { ranges: vec![9.0; 10], ..Default::default() };
    fill_scan(&mut m, &p, &fr).unwrap();
    assert_eq!(m.header.frame_id, "rplidar_link");
    assert_eq!(m.ranges, vec![1.0, 2.0]);
    let a = pl::JointState {
        stamp: 0.0,
        name: vec!["l".into(), "r".into()],
        position: vec![1.0, 2.0],
        velocity: vec![0.1, 0.2],
        effort: vec![],
    };
    let b = pl::JointState {
        stamp: 0.0,
        name: vec!["j1".into()],
        position: vec![3.0],
        velocity: vec![0.3],
        effort: vec![],
    };
    let mut js = sensor::JointState::default();
    fill_merged(&mut js, &[Some(a), None, Some(b)], 2.0);
    assert_eq!(js.name, vec!["l", "r", "j1"]);
    assert_eq!(js.position, vec![1.0, 2.0, 3.0]);
    assert_eq!(js.velocity, vec![0.1, 0.2, 0.3]);
    assert!(js.effort.is_empty());
    assert_eq!(js.header.stamp.sec, 2);
}

#[test]
fn decoders() {
    let mut t = geo::TwistStamped::default();
    t.twist.linear.x = 0.2;
    t.twist.angular.z = -0.5;
    assert_eq!(
        decode_twist(&t.twist),
        Payload::Twist(pl::Twist { linear: [0.2, 0.0, 0.0], angular: [0.0, 0.0, -0.5] })
    );
    let d = ack::AckermannDrive { steering_angle: 0.25, speed: 1.5, ..Default::default() };
    assert_eq!(
        decode_ackermann(&d),
        Payload::Ackermann(pl::AckermannDrive {
            steering_angle: 0.25,
            speed: 1.5,
            ..Default::default()
        })
    );
    let mut jt =
        traj::JointTrajectory { joint_names: vec!["a".into(), "b".into()], ..Default::default() };
    jt.points.push(traj::JointTrajectoryPoint {
        positions: vec![0.1, 0.2],
        time_from_start: r2r::builtin_interfaces::msg::Duration { sec: 1, nanosec: 500_000_000 },
        ..Default::default()
    });
    let Payload::Trajectory(g) = decode_trajectory(jt) else { panic!("not a trajectory") };
    assert_eq!(g.joint_names, vec!["a", "b"]);
    assert_eq!((g.points[0].positions.clone(), g.points[0].time_from_start), (vec![0.1, 0.2], 1.5));
    let fr = Frames { prefix: "robot1/".into(), hint: None };
    assert_eq!(fr.strip("robot1/map"), "map");
    assert_eq!(fr.strip("map"), "map");
}
