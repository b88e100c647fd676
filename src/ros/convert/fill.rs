//! Outbound fill functions: a payload written into a preallocated message, reusing its
//! strings' and vectors' capacity.

use crate::context::payload::{self as pl, Payload};

use r2r::ackermann_msgs::msg as ack;
use r2r::geometry_msgs::msg as geo;
use r2r::nav_msgs::msg as nav;
use r2r::rosgraph_msgs::msg as rosgraph;
use r2r::sensor_msgs::msg as sensor;
use r2r::std_msgs::msg as std_msgs;
use r2r::tf2_msgs::msg as tf2;

use super::*;

/// Fill an Odometry.
pub fn fill_odometry(m: &mut nav::Odometry, p: &Payload, fr: &Frames) -> Result<(), String> {
    let Payload::Odometry(o) = p else { return Err(wrong(p, "nav_msgs/msg/Odometry")) };
    header(&mut m.header, o.stamp, fr, &o.frame_id);
    fr.write(&o.child_frame_id, &mut m.child_frame_id);
    p3(&mut m.pose.pose.position, &o.position);
    q4(&mut m.pose.pose.orientation, &o.orientation);
    vec_from(&mut m.pose.covariance, &o.pose_covariance);
    v3(&mut m.twist.twist.linear, &o.linear);
    v3(&mut m.twist.twist.angular, &o.angular);
    vec_from(&mut m.twist.covariance, &o.twist_covariance);
    Ok(())
}

/// Fill a LaserScan.
pub fn fill_scan(m: &mut sensor::LaserScan, p: &Payload, fr: &Frames) -> Result<(), String> {
    let Payload::LaserScan(s) = p else { return Err(wrong(p, "sensor_msgs/msg/LaserScan")) };
    header(&mut m.header, s.stamp, fr, &s.frame_id);
    m.angle_min = s.angle_min;
    m.angle_max = s.angle_max;
    m.angle_increment = s.angle_increment;
    m.time_increment = s.time_increment;
    m.scan_time = s.scan_time;
    m.range_min = s.range_min;
    m.range_max = s.range_max;
    m.ranges.clear();
    m.ranges.extend_from_slice(&s.ranges);
    m.intensities.clear();
    m.intensities.extend_from_slice(&s.intensities);
    Ok(())
}

/// Fill a Range.
pub fn fill_range(m: &mut sensor::Range, p: &Payload, fr: &Frames) -> Result<(), String> {
    let Payload::Range(r) = p else { return Err(wrong(p, "sensor_msgs/msg/Range")) };
    header(&mut m.header, r.stamp, fr, &r.frame_id);
    m.radiation_type = r.radiation_type;
    m.field_of_view = r.field_of_view;
    m.min_range = r.min_range;
    m.max_range = r.max_range;
    m.range = r.range;
    m.variance = r.variance;
    Ok(())
}

/// Fill a PointCloud2 from a `PointCloud` payload or a `PointCloud2` payload (the two shapes
/// sensors publish).
pub fn fill_cloud(m: &mut sensor::PointCloud2, p: &Payload, fr: &Frames) -> Result<(), String> {
    match p {
        Payload::PointCloud(_) => fill_xyz_cloud(m, p, fr),
        _ => fill_organised_cloud(m, p, fr),
    }
}

/// A `PointCloud` payload: fields x, y, z (FLOAT32 = 7) at offsets 0, 4, 8, little-endian, one row,
/// dense (a cloud carries no NaN: what is not measured is left out or put at the origin).
pub(super) fn fill_xyz_cloud(
    m: &mut sensor::PointCloud2,
    p: &Payload,
    fr: &Frames,
) -> Result<(), String> {
    let Payload::PointCloud(c) = p else { return Err(wrong(p, "sensor_msgs/msg/PointCloud2")) };
    header(&mut m.header, c.stamp, fr, &c.frame_id);
    if m.fields.len() != 3 {
        m.fields = ["x", "y", "z"]
            .iter()
            .enumerate()
            .map(|(i, n)| sensor::PointField {
                name: n.to_string(),
                offset: 4 * i as u32,
                datatype: 7,
                count: 1,
            })
            .collect();
    }
    m.height = 1;
    m.width = c.points.len() as u32;
    m.is_bigendian = false;
    m.point_step = 12;
    m.row_step = 12 * m.width;
    m.is_dense = true;
    m.data.clear();
    m.data.reserve(12 * c.points.len());
    for q in &c.points {
        for v in q {
            m.data.extend_from_slice(&v.to_le_bytes());
        }
    }
    Ok(())
}

/// Fill a NavSatFix.
pub fn fill_navsat(m: &mut sensor::NavSatFix, p: &Payload, fr: &Frames) -> Result<(), String> {
    let Payload::NavSatFix(f) = p else { return Err(wrong(p, "sensor_msgs/msg/NavSatFix")) };
    header(&mut m.header, f.stamp, fr, &f.frame_id);
    m.status.status = f.status;
    m.status.service = f.service;
    m.latitude = f.latitude;
    m.longitude = f.longitude;
    m.altitude = f.altitude;
    vec_from(&mut m.position_covariance, &f.position_covariance);
    m.position_covariance_type = f.position_covariance_type;
    Ok(())
}

/// Fill a TwistWithCovarianceStamped.
pub fn fill_twist_cov(
    m: &mut geo::TwistWithCovarianceStamped,
    p: &Payload,
    fr: &Frames,
) -> Result<(), String> {
    let Payload::TwistCov(t) = p else {
        return Err(wrong(p, "geometry_msgs/msg/TwistWithCovarianceStamped"));
    };
    header(&mut m.header, t.stamp, fr, &t.frame_id);
    v3(&mut m.twist.twist.linear, &t.linear);
    v3(&mut m.twist.twist.angular, &t.angular);
    vec_from(&mut m.twist.covariance, &t.covariance);
    Ok(())
}

/// Fill an Imu.
pub fn fill_imu(m: &mut sensor::Imu, p: &Payload, fr: &Frames) -> Result<(), String> {
    let Payload::Imu(s) = p else { return Err(wrong(p, "sensor_msgs/msg/Imu")) };
    header(&mut m.header, s.stamp, fr, &s.frame_id);
    q4(&mut m.orientation, &s.orientation);
    vec_from(&mut m.orientation_covariance, &s.orientation_covariance);
    v3(&mut m.angular_velocity, &s.angular_velocity);
    vec_from(&mut m.angular_velocity_covariance, &s.angular_velocity_covariance);
    v3(&mut m.linear_acceleration, &s.linear_acceleration);
    vec_from(&mut m.linear_acceleration_covariance, &s.linear_acceleration_covariance);
    Ok(())
}

/// Fill a JointState (joint names are published as the producer gives them).
pub fn fill_joint_state(
    m: &mut sensor::JointState,
    p: &Payload,
    _fr: &Frames,
) -> Result<(), String> {
    let Payload::JointState(s) = p else { return Err(wrong(p, "sensor_msgs/msg/JointState")) };
    m.header.stamp = stamp(s.stamp);
    m.header.frame_id.clear();
    m.name.clone_from(&s.name);
    vec_from(&mut m.position, &s.position);
    vec_from(&mut m.velocity, &s.velocity);
    vec_from(&mut m.effort, &s.effort);
    Ok(())
}

/// Fill a merged JointState from several members' latest states, in order.
pub fn fill_merged(m: &mut sensor::JointState, members: &[Option<pl::JointState>], t: f64) {
    m.header.stamp = stamp(t);
    m.header.frame_id.clear();
    m.name.clear();
    m.position.clear();
    m.velocity.clear();
    m.effort.clear();
    for s in members.iter().flatten() {
        m.name.extend(s.name.iter().cloned());
        m.position.extend_from_slice(&s.position);
        m.velocity.extend_from_slice(&s.velocity);
        m.effort.extend_from_slice(&s.effort);
    }
    // A member that reports no velocities/efforts leaves them empty for everyone (JointState
    // allows empty arrays, not ragged ones).
    if m.velocity.len() != m.name.len() {
        m.velocity.clear();
    }
    if m.effort.len() != m.name.len() {
        m.effort.clear();
    }
}

/// Fill a Twist.
pub fn fill_twist(m: &mut geo::Twist, p: &Payload, _fr: &Frames) -> Result<(), String> {
    let Payload::Twist(t) = p else { return Err(wrong(p, "geometry_msgs/msg/Twist")) };
    v3(&mut m.linear, &t.linear);
    v3(&mut m.angular, &t.angular);
    Ok(())
}

/// Fill a TwistStamped (stamped with `now`: a Twist payload carries no stamp).
pub(super) fn fill_twist_stamped(
    m: &mut geo::TwistStamped,
    p: &Payload,
    fr: &Frames,
    now: f64,
) -> Result<(), String> {
    let Payload::Twist(t) = p else { return Err(wrong(p, "geometry_msgs/msg/TwistStamped")) };
    header(&mut m.header, now, fr, "");
    v3(&mut m.twist.linear, &t.linear);
    v3(&mut m.twist.angular, &t.angular);
    Ok(())
}

/// Fill a PoseStamped from a PoseTwist or an Odometry.
pub fn fill_pose(m: &mut geo::PoseStamped, p: &Payload, fr: &Frames) -> Result<(), String> {
    let (t, f, pos, q) = match p {
        Payload::PoseTwist(o) => (o.stamp, &o.frame_id, &o.position, &o.orientation),
        Payload::Odometry(o) => (o.stamp, &o.frame_id, &o.position, &o.orientation),
        _ => return Err(wrong(p, "geometry_msgs/msg/PoseStamped")),
    };
    header(&mut m.header, t, fr, f);
    p3(&mut m.pose.position, pos);
    q4(&mut m.pose.orientation, q);
    Ok(())
}

/// Fill a PointStamped from a ContactLocation (its centre, in its frame).
pub fn fill_point(m: &mut geo::PointStamped, p: &Payload, fr: &Frames) -> Result<(), String> {
    let Payload::ContactLocation(c) = p else {
        return Err(wrong(p, "geometry_msgs/msg/PointStamped"));
    };
    header(&mut m.header, c.time, fr, &c.frame_id);
    p3(&mut m.point, &[c.x, c.y, c.z]);
    Ok(())
}

/// One TransformStamped from a payload transform.
pub fn transform_stamped(t: &pl::Transform, at: f64, fr: &Frames) -> geo::TransformStamped {
    let mut m = geo::TransformStamped::default();
    header(&mut m.header, at, fr, &t.parent);
    fr.write(&t.child, &mut m.child_frame_id);
    v3(&mut m.transform.translation, &t.translation);
    q4(&mut m.transform.rotation, &t.rotation);
    m
}

/// The TF a payload contributes: Transforms as given; Odometry/PoseTwist as `frame → child`.
/// Stamped with the payload's stamp, else `now`.
pub fn transforms_of(
    p: &Payload,
    now: f64,
    fr: &Frames,
    out: &mut Vec<geo::TransformStamped>,
) -> Result<(), String> {
    match p {
        Payload::Transforms(ts) => {
            out.extend(ts.iter().map(|t| transform_stamped(t, now, fr)));
        }
        Payload::Odometry(o) => {
            let t = pl::Transform {
                parent: o.frame_id.clone(),
                child: o.child_frame_id.clone(),
                translation: o.position,
                rotation: o.orientation,
            };
            out.push(transform_stamped(&t, o.stamp, fr));
        }
        Payload::PoseTwist(o) => {
            let t = pl::Transform {
                parent: o.frame_id.clone(),
                child: o.child_frame_id.clone(),
                translation: o.position,
                rotation: o.orientation,
            };
            out.push(transform_stamped(&t, o.stamp, fr));
        }
        _ => return Err(wrong(p, "tf2_msgs/msg/TFMessage")),
    }
    Ok(())
}

pub(super) fn fill_tf(
    m: &mut tf2::TFMessage,
    p: &Payload,
    fr: &Frames,
    now: f64,
) -> Result<(), String> {
    m.transforms.clear();
    transforms_of(p, now, fr, &mut m.transforms)
}

/// Fill a WrenchStamped.
pub fn fill_wrench(m: &mut geo::WrenchStamped, p: &Payload, fr: &Frames) -> Result<(), String> {
    let Payload::Wrench(w) = p else { return Err(wrong(p, "geometry_msgs/msg/WrenchStamped")) };
    header(&mut m.header, w.stamp, fr, &w.frame_id);
    v3(&mut m.wrench.force, &w.force);
    v3(&mut m.wrench.torque, &w.torque);
    Ok(())
}

pub(super) fn fill_ackermann(
    m: &mut ack::AckermannDriveStamped,
    p: &Payload,
    fr: &Frames,
    now: f64,
) -> Result<(), String> {
    let Payload::Ackermann(a) = p else {
        return Err(wrong(p, "ackermann_msgs/msg/AckermannDriveStamped"));
    };
    header(&mut m.header, now, fr, "");
    m.drive.steering_angle = a.steering_angle as f32;
    m.drive.steering_angle_velocity = a.steering_angle_velocity as f32;
    m.drive.speed = a.speed as f32;
    m.drive.acceleration = a.acceleration as f32;
    m.drive.jerk = a.jerk as f32;
    Ok(())
}

pub(super) fn fill_clock(m: &mut rosgraph::Clock, p: &Payload) -> Result<(), String> {
    let Payload::Float64(t) = p else { return Err(wrong(p, "rosgraph_msgs/msg/Clock")) };
    m.clock = stamp(*t);
    Ok(())
}

pub(super) fn fill_f64(m: &mut std_msgs::Float64, p: &Payload) -> Result<(), String> {
    let Payload::Float64(x) = p else { return Err(wrong(p, "std_msgs/msg/Float64")) };
    m.data = *x;
    Ok(())
}
pub(super) fn fill_bool(m: &mut std_msgs::Bool, p: &Payload) -> Result<(), String> {
    let Payload::Bool(x) = p else { return Err(wrong(p, "std_msgs/msg/Bool")) };
    m.data = *x;
    Ok(())
}
pub(super) fn fill_string(m: &mut std_msgs::String, p: &Payload) -> Result<(), String> {
    let Payload::String(x) = p else { return Err(wrong(p, "std_msgs/msg/String")) };
    m.data.clone_from(x);
    Ok(())
}

/// Fill an Image (pixels copied once into the preallocated message).
pub fn fill_image(m: &mut sensor::Image, p: &Payload, fr: &Frames) -> Result<(), String> {
    let Payload::Image(i) = p else { return Err(wrong(p, "sensor_msgs/msg/Image")) };
    header(&mut m.header, i.stamp, fr, &i.frame_id);
    m.height = i.height;
    m.width = i.width;
    m.encoding.clone_from(&i.encoding);
    m.is_bigendian = 0;
    m.step = i.step;
    m.data.clear();
    m.data.extend_from_slice(&i.data);
    Ok(())
}

/// Fill a CompressedImage.
pub fn fill_compressed(
    m: &mut sensor::CompressedImage,
    p: &Payload,
    fr: &Frames,
) -> Result<(), String> {
    let Payload::CompressedImage(i) = p else {
        return Err(wrong(p, "sensor_msgs/msg/CompressedImage"));
    };
    header(&mut m.header, i.stamp, fr, &i.frame_id);
    m.format.clone_from(&i.format);
    m.data.clear();
    m.data.extend_from_slice(&i.data);
    Ok(())
}

/// Fill a CameraInfo.
pub fn fill_camera_info(
    m: &mut sensor::CameraInfo,
    p: &Payload,
    fr: &Frames,
) -> Result<(), String> {
    let Payload::CameraInfo(c) = p else { return Err(wrong(p, "sensor_msgs/msg/CameraInfo")) };
    header(&mut m.header, c.stamp, fr, &c.frame_id);
    m.height = c.height;
    m.width = c.width;
    m.distortion_model.clone_from(&c.distortion_model);
    vec_from(&mut m.d, &c.d);
    vec_from(&mut m.k, &c.k);
    vec_from(&mut m.r, &c.r);
    vec_from(&mut m.p, &c.p);
    m.binning_x = 0;
    m.binning_y = 0;
    Ok(())
}

/// A `PointCloud2` payload (any fields, organised or not), copied as it is.
pub(super) fn fill_organised_cloud(
    m: &mut sensor::PointCloud2,
    p: &Payload,
    fr: &Frames,
) -> Result<(), String> {
    let Payload::PointCloud2(c) = p else { return Err(wrong(p, "sensor_msgs/msg/PointCloud2")) };
    header(&mut m.header, c.stamp, fr, &c.frame_id);
    m.height = c.height;
    m.width = c.width;
    if m.fields.len() != c.fields.len()
        || m.fields.iter().zip(&c.fields).any(|(a, b)| a.name != b.name || a.offset != b.offset)
    {
        m.fields = c
            .fields
            .iter()
            .map(|f| sensor::PointField {
                name: f.name.clone(),
                offset: f.offset,
                datatype: f.datatype,
                count: f.count,
            })
            .collect();
    }
    m.is_bigendian = false;
    m.point_step = c.point_step;
    m.row_step = c.row_step;
    m.data.clear();
    m.data.extend_from_slice(&c.data);
    m.is_dense = c.is_dense;
    Ok(())
}
