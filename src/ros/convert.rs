//! Converters: one per wire format, keyed by the type string an endpoint names.
//!
//! Outbound, a converter fills a message preallocated once per publisher (strings and vectors
//! keep their capacity: `clone_from`, `clear` + `extend`), and r2r copies it into the native
//! message once at publish. Inbound, a decoder turns a message into a neutral [`Payload`].
//! Stamps are sim time; frame ids get the endpoint's prefix here (outbound) and lose it
//! (inbound). A producer imports none of this: it names the type as a string.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures::StreamExt;
use r2r::{builtin_interfaces::msg::Time, QosProfile};

use crate::context::payload::{self as pl, Payload};
use crate::ros::names;
use crate::ros::plan::Qos;

use r2r::ackermann_msgs::msg as ack;
use r2r::geometry_msgs::msg as geo;
use r2r::lifecycle_msgs::msg as lifecycle;
use r2r::nav_msgs::msg as nav;
use r2r::rosgraph_msgs::msg as rosgraph;
use r2r::sensor_msgs::msg as sensor;
use r2r::std_msgs::msg as std_msgs;
use r2r::tf2_msgs::msg as tf2;
use r2r::trajectory_msgs::msg as traj;

/// A task the ROS thread runs (a subscription or service loop).
pub type Task = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Where a decoded inbound payload goes (posts a command to the physics thread).
pub type Sink = Arc<dyn Fn(Payload) + Send + Sync>;

/// The r2r QoS profile for a plan QoS.
pub fn qos_profile(q: Qos) -> QosProfile {
    match q {
        Qos::SensorData => QosProfile::sensor_data(),
        Qos::Reliable => QosProfile::default(),
        Qos::Tf => QosProfile::default().keep_last(100),
        Qos::TransientLocal => QosProfile::default()
            .keep_last(1)
            .durability(r2r::qos::DurabilityPolicy::TransientLocal),
    }
}

/// The QoS every service server of the node is created with: the services default (reliable,
/// volatile) but keeping ALL requests, so a burst from a KEEP_ALL client is served whole instead of
/// the default's newest 10 (docs/ros.md "Limits").
pub fn server_qos() -> QosProfile {
    QosProfile::services_default().keep_all()
}

/// Sim time (s) → builtin_interfaces/Time, rounded to the nanosecond (so n steps of dt stamp
/// exactly n·dt).
pub fn stamp(t: f64) -> Time {
    let ns = (t * 1e9).round() as i64;
    Time { sec: ns.div_euclid(1_000_000_000) as i32, nanosec: ns.rem_euclid(1_000_000_000) as u32 }
}

/// builtin_interfaces/Time → seconds.
pub fn seconds(t: &Time) -> f64 {
    t.sec as f64 + t.nanosec as f64 * 1e-9
}

/// Nanoseconds of a sim time, as [`stamp`] rounds it.
pub fn nanos(t: f64) -> i64 {
    (t * 1e9).round() as i64
}

/// Frame naming for one publication: the endpoint's combined prefix and its `frame_id` hint.
#[derive(Debug, Clone, Default)]
pub struct Frames {
    /// Prefix (bridge + endpoint), normalised with a trailing `/` or empty.
    pub prefix: String,
    /// Used when a payload leaves its frame id empty.
    pub hint: Option<String>,
}

impl Frames {
    /// The published name of `f` (the hint when `f` is empty).
    pub fn name(&self, f: &str) -> String {
        let f = if f.is_empty() { self.hint.as_deref().unwrap_or("") } else { f };
        names::frame("", &self.prefix, f)
    }
    /// Write the published name of `f` into `out`, reusing its allocation.
    pub fn write(&self, f: &str, out: &mut String) {
        let f = if f.is_empty() { self.hint.as_deref().unwrap_or("") } else { f };
        out.clear();
        if !f.is_empty() {
            out.push_str(&self.prefix);
            out.push_str(f.trim_start_matches('/'));
        }
    }
    /// Strip the prefix from an inbound frame id (left as is when it lacks it).
    pub fn strip<'a>(&self, f: &'a str) -> &'a str {
        f.strip_prefix(self.prefix.as_str()).unwrap_or(f)
    }
}

fn v3(v: &mut geo::Vector3, a: &[f64; 3]) {
    v.x = a[0];
    v.y = a[1];
    v.z = a[2];
}
fn p3(v: &mut geo::Point, a: &[f64; 3]) {
    v.x = a[0];
    v.y = a[1];
    v.z = a[2];
}
fn q4(q: &mut geo::Quaternion, a: &[f64; 4]) {
    q.x = a[0];
    q.y = a[1];
    q.z = a[2];
    q.w = a[3];
}
fn vec_from(dst: &mut Vec<f64>, src: &[f64]) {
    dst.clear();
    dst.extend_from_slice(src);
}
fn header(h: &mut std_msgs::Header, t: f64, fr: &Frames, frame: &str) {
    h.stamp = stamp(t);
    fr.write(frame, &mut h.frame_id);
}
fn a3(v: &geo::Vector3) -> [f64; 3] {
    [v.x, v.y, v.z]
}

fn wrong(p: &Payload, ty: &str) -> String {
    format!(
        "a {} payload cannot be published as {ty} (it takes: {})",
        p.kind(),
        accepts(ty).join(", ")
    )
}

/// The payload kinds a wire type's converter accepts.
pub fn accepts(ty: &str) -> Vec<&'static str> {
    match ty {
        "nav_msgs/msg/Odometry" => vec!["Odometry"],
        "sensor_msgs/msg/LaserScan" => vec!["LaserScan"],
        "sensor_msgs/msg/Range" => vec!["Range"],
        "sensor_msgs/msg/PointCloud2" => vec!["PointCloud", "PointCloud2"],
        "sensor_msgs/msg/NavSatFix" => vec!["NavSatFix"],
        "geometry_msgs/msg/TwistWithCovarianceStamped" => vec!["TwistCov"],
        "sensor_msgs/msg/Imu" => vec!["Imu"],
        "sensor_msgs/msg/JointState" => vec!["JointState"],
        "geometry_msgs/msg/Twist" | "geometry_msgs/msg/TwistStamped" => vec!["Twist"],
        "geometry_msgs/msg/PoseStamped" => vec!["PoseTwist", "Odometry"],
        "tf2_msgs/msg/TFMessage" => vec!["Transforms", "Odometry", "PoseTwist"],
        "geometry_msgs/msg/WrenchStamped" => vec!["Wrench"],
        "sensor_msgs/msg/BatteryState" => vec!["EnergyReport"],
        "sensor_msgs/msg/Image" => vec!["Image"],
        "sensor_msgs/msg/CompressedImage" => vec!["CompressedImage"],
        "sensor_msgs/msg/CameraInfo" => vec!["CameraInfo"],
        "ackermann_msgs/msg/AckermannDriveStamped" => vec!["Ackermann"],
        "rosgraph_msgs/msg/Clock" => vec!["Float64 (seconds)"],
        "lifecycle_msgs/msg/TransitionEvent" => vec!["TransitionEvents"],
        "std_msgs/msg/Float64" => vec!["Float64"],
        "std_msgs/msg/Bool" => vec!["Bool"],
        "std_msgs/msg/String" => vec!["String"],
        _ => vec![],
    }
}

// ---------------------------------------------------------------- outbound fill functions

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
fn fill_xyz_cloud(m: &mut sensor::PointCloud2, p: &Payload, fr: &Frames) -> Result<(), String> {
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
fn fill_twist_stamped(
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

fn fill_tf(m: &mut tf2::TFMessage, p: &Payload, fr: &Frames, now: f64) -> Result<(), String> {
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

fn fill_ackermann(
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

fn fill_clock(m: &mut rosgraph::Clock, p: &Payload) -> Result<(), String> {
    let Payload::Float64(t) = p else { return Err(wrong(p, "rosgraph_msgs/msg/Clock")) };
    m.clock = stamp(*t);
    Ok(())
}

fn fill_f64(m: &mut std_msgs::Float64, p: &Payload) -> Result<(), String> {
    let Payload::Float64(x) = p else { return Err(wrong(p, "std_msgs/msg/Float64")) };
    m.data = *x;
    Ok(())
}
fn fill_bool(m: &mut std_msgs::Bool, p: &Payload) -> Result<(), String> {
    let Payload::Bool(x) = p else { return Err(wrong(p, "std_msgs/msg/Bool")) };
    m.data = *x;
    Ok(())
}
fn fill_string(m: &mut std_msgs::String, p: &Payload) -> Result<(), String> {
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
fn fill_organised_cloud(
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

// ---------------------------------------------------------------- outbound publishers

/// A publisher with its preallocated message.
pub trait Outbound {
    /// Fill the message from `p` and publish it. `now` = sim time (s) for payloads without a stamp.
    fn publish(&mut self, p: &Payload, fr: &Frames, now: f64) -> Result<(), String>;
    /// Subscriptions matched in other processes.
    fn subscribers(&self) -> usize;
}

type FillFn<T> = fn(&mut T, &Payload, &Frames, f64) -> Result<(), String>;

struct Typed<T: r2r::WrappedTypesupport + 'static> {
    publisher: r2r::Publisher<T>,
    msg: T,
    fill: FillFn<T>,
}

impl<T: r2r::WrappedTypesupport + 'static> Outbound for Typed<T> {
    fn publish(&mut self, p: &Payload, fr: &Frames, now: f64) -> Result<(), String> {
        (self.fill)(&mut self.msg, p, fr, now)?;
        self.publisher.publish(&self.msg).map_err(|e| format!("publish failed: {e}"))
    }
    fn subscribers(&self) -> usize {
        self.publisher.get_inter_process_subscription_count().unwrap_or(0)
    }
}

fn typed<T: r2r::WrappedTypesupport + Default + 'static>(
    node: &mut r2r::Node,
    topic: &str,
    qos: QosProfile,
    fill: FillFn<T>,
) -> r2r::Result<Box<dyn Outbound>> {
    let publisher = node.create_publisher::<T>(topic, qos)?;
    Ok(Box::new(Typed { publisher, msg: T::default(), fill }))
}

/// lifecycle_msgs/TransitionEvent: one message per event of a `TransitionEvents` payload.
struct Transitions {
    publisher: r2r::Publisher<lifecycle::TransitionEvent>,
    msg: lifecycle::TransitionEvent,
}

impl Outbound for Transitions {
    fn publish(&mut self, p: &Payload, _fr: &Frames, _now: f64) -> Result<(), String> {
        let Payload::TransitionEvents(evs) = p else {
            return Err(wrong(p, "lifecycle_msgs/msg/TransitionEvent"));
        };
        for e in evs {
            // TransitionEvent.timestamp: nanoseconds (here of sim time).
            self.msg.timestamp = nanos(e.stamp).max(0) as u64;
            self.msg.transition.id = e.transition_id;
            self.msg.transition.label.clone_from(&e.transition_label);
            self.msg.start_state.id = e.start_id;
            self.msg.start_state.label.clone_from(&e.start_label);
            self.msg.goal_state.id = e.goal_id;
            self.msg.goal_state.label.clone_from(&e.goal_label);
            self.publisher.publish(&self.msg).map_err(|e| format!("publish failed: {e}"))?;
        }
        Ok(())
    }
    fn subscribers(&self) -> usize {
        self.publisher.get_inter_process_subscription_count().unwrap_or(0)
    }
}

/// The wire types with an outbound converter.
pub const OUT_TYPES: &[&str] = &[
    "nav_msgs/msg/Odometry",
    "sensor_msgs/msg/LaserScan",
    "sensor_msgs/msg/Range",
    "sensor_msgs/msg/PointCloud2",
    "sensor_msgs/msg/NavSatFix",
    "geometry_msgs/msg/TwistWithCovarianceStamped",
    "sensor_msgs/msg/Imu",
    "sensor_msgs/msg/JointState",
    "geometry_msgs/msg/Twist",
    "geometry_msgs/msg/TwistStamped",
    "geometry_msgs/msg/PoseStamped",
    "geometry_msgs/msg/WrenchStamped",
    "sensor_msgs/msg/BatteryState",
    "sensor_msgs/msg/Image",
    "sensor_msgs/msg/CompressedImage",
    "sensor_msgs/msg/CameraInfo",
    "sensor_msgs/msg/PointCloud2",
    "tf2_msgs/msg/TFMessage",
    "ackermann_msgs/msg/AckermannDriveStamped",
    "rosgraph_msgs/msg/Clock",
    "lifecycle_msgs/msg/TransitionEvent",
    "std_msgs/msg/Float64",
    "std_msgs/msg/Bool",
    "std_msgs/msg/String",
];

/// Create a publisher of `msg_type` on `topic` with its converter. An unknown type is an error
/// naming the types that have one.
pub fn make_outbound(
    node: &mut r2r::Node,
    msg_type: &str,
    topic: &str,
    qos: Qos,
) -> Result<Box<dyn Outbound>, String> {
    let q = qos_profile(qos);
    let r = match msg_type {
        "nav_msgs/msg/Odometry" => {
            typed::<nav::Odometry>(node, topic, q, |m, p, fr, _| fill_odometry(m, p, fr))
        }
        "sensor_msgs/msg/LaserScan" => {
            typed::<sensor::LaserScan>(node, topic, q, |m, p, fr, _| fill_scan(m, p, fr))
        }
        "sensor_msgs/msg/Range" => {
            typed::<sensor::Range>(node, topic, q, |m, p, fr, _| fill_range(m, p, fr))
        }
        "sensor_msgs/msg/PointCloud2" => {
            typed::<sensor::PointCloud2>(node, topic, q, |m, p, fr, _| fill_cloud(m, p, fr))
        }
        "sensor_msgs/msg/NavSatFix" => {
            typed::<sensor::NavSatFix>(node, topic, q, |m, p, fr, _| fill_navsat(m, p, fr))
        }
        "geometry_msgs/msg/TwistWithCovarianceStamped" => {
            typed::<geo::TwistWithCovarianceStamped>(node, topic, q, |m, p, fr, _| {
                fill_twist_cov(m, p, fr)
            })
        }
        "sensor_msgs/msg/Imu" => {
            typed::<sensor::Imu>(node, topic, q, |m, p, fr, _| fill_imu(m, p, fr))
        }
        "sensor_msgs/msg/JointState" => {
            typed::<sensor::JointState>(node, topic, q, |m, p, fr, _| fill_joint_state(m, p, fr))
        }
        "geometry_msgs/msg/Twist" => {
            typed::<geo::Twist>(node, topic, q, |m, p, fr, _| fill_twist(m, p, fr))
        }
        "geometry_msgs/msg/TwistStamped" => {
            typed::<geo::TwistStamped>(node, topic, q, fill_twist_stamped)
        }
        "geometry_msgs/msg/PoseStamped" => {
            typed::<geo::PoseStamped>(node, topic, q, |m, p, fr, _| fill_pose(m, p, fr))
        }
        "geometry_msgs/msg/WrenchStamped" => {
            typed::<geo::WrenchStamped>(node, topic, q, |m, p, fr, _| fill_wrench(m, p, fr))
        }
        "sensor_msgs/msg/BatteryState" => {
            typed::<sensor::BatteryState>(node, topic, q, |m, p, fr, _| {
                crate::ros::reports::fill_battery(m, p, fr)
            })
        }
        "sensor_msgs/msg/Image" => {
            typed::<sensor::Image>(node, topic, q, |m, p, fr, _| fill_image(m, p, fr))
        }
        "sensor_msgs/msg/CompressedImage" => {
            typed::<sensor::CompressedImage>(node, topic, q, |m, p, fr, _| {
                fill_compressed(m, p, fr)
            })
        }
        "sensor_msgs/msg/CameraInfo" => {
            typed::<sensor::CameraInfo>(node, topic, q, |m, p, fr, _| fill_camera_info(m, p, fr))
        }
        "tf2_msgs/msg/TFMessage" => typed::<tf2::TFMessage>(node, topic, q, fill_tf),
        "ackermann_msgs/msg/AckermannDriveStamped" => {
            typed::<ack::AckermannDriveStamped>(node, topic, q, fill_ackermann)
        }
        "rosgraph_msgs/msg/Clock" => {
            typed::<rosgraph::Clock>(node, topic, q, |m, p, _, _| fill_clock(m, p))
        }
        "lifecycle_msgs/msg/TransitionEvent" => {
            node.create_publisher::<lifecycle::TransitionEvent>(topic, q).map(|publisher| {
                Box::new(Transitions { publisher, msg: lifecycle::TransitionEvent::default() })
                    as Box<dyn Outbound>
            })
        }
        "std_msgs/msg/Float64" => {
            typed::<std_msgs::Float64>(node, topic, q, |m, p, _, _| fill_f64(m, p))
        }
        "std_msgs/msg/Bool" => {
            typed::<std_msgs::Bool>(node, topic, q, |m, p, _, _| fill_bool(m, p))
        }
        "std_msgs/msg/String" => {
            typed::<std_msgs::String>(node, topic, q, |m, p, _, _| fill_string(m, p))
        }
        other => {
            return Err(format!(
                "no converter for `{other}`; the ROS 2 bridge converts: {}",
                OUT_TYPES.join(", ")
            ))
        }
    };
    r.map_err(|e| format!("cannot create a {msg_type} publisher on {topic}: {e}"))
}

// ---------------------------------------------------------------- inbound decoders

/// Decode a Twist.
pub fn decode_twist(m: &geo::Twist) -> Payload {
    Payload::Twist(pl::Twist { linear: a3(&m.linear), angular: a3(&m.angular) })
}

/// Decode an AckermannDrive.
pub fn decode_ackermann(d: &ack::AckermannDrive) -> Payload {
    Payload::Ackermann(pl::AckermannDrive {
        steering_angle: d.steering_angle as f64,
        steering_angle_velocity: d.steering_angle_velocity as f64,
        speed: d.speed as f64,
        acceleration: d.acceleration as f64,
        jerk: d.jerk as f64,
    })
}

fn sub<T, F>(
    node: &mut r2r::Node,
    topic: &str,
    qos: QosProfile,
    sink: Sink,
    decode: F,
) -> r2r::Result<Task>
where
    T: r2r::WrappedTypesupport + Send + 'static,
    F: Fn(T) -> Payload + Send + 'static,
{
    let stream = node.subscribe::<T>(topic, qos)?;
    Ok(Box::pin(stream.for_each(move |m| {
        sink(decode(m));
        futures::future::ready(())
    })))
}

/// Decode a JointTrajectory (a streamed trajectory command).
pub fn decode_trajectory(m: traj::JointTrajectory) -> Payload {
    Payload::Trajectory(pl::TrajectoryGoal {
        joint_names: m.joint_names,
        points: m
            .points
            .into_iter()
            .map(|p| pl::TrajectoryPoint {
                positions: p.positions,
                velocities: p.velocities,
                accelerations: p.accelerations,
                effort: p.effort,
                time_from_start: p.time_from_start.sec as f64
                    + p.time_from_start.nanosec as f64 * 1e-9,
            })
            .collect(),
        ..Default::default()
    })
}

/// The wire types with an inbound decoder.
pub const IN_TYPES: &[&str] = &[
    "geometry_msgs/msg/Twist",
    "geometry_msgs/msg/TwistStamped",
    "ackermann_msgs/msg/AckermannDriveStamped",
    "ackermann_msgs/msg/AckermannDrive",
    "sensor_msgs/msg/JointState",
    "trajectory_msgs/msg/JointTrajectory",
    "geometry_msgs/msg/PoseStamped",
    "geometry_msgs/msg/WrenchStamped",
    "std_msgs/msg/Float64",
    "std_msgs/msg/Bool",
    "std_msgs/msg/String",
];

/// Subscribe to `msg_type` on `topic`; every message is decoded and handed to `sink`. Inbound
/// frame ids lose `fr`'s prefix.
pub fn make_inbound(
    node: &mut r2r::Node,
    msg_type: &str,
    topic: &str,
    qos: Qos,
    fr: Frames,
    sink: Sink,
) -> Result<Task, String> {
    let q = qos_profile(qos);
    let r = match msg_type {
        "geometry_msgs/msg/Twist" => {
            sub::<geo::Twist, _>(node, topic, q, sink, |m| decode_twist(&m))
        }
        "geometry_msgs/msg/TwistStamped" => {
            sub::<geo::TwistStamped, _>(node, topic, q, sink, |m| decode_twist(&m.twist))
        }
        "ackermann_msgs/msg/AckermannDriveStamped" => {
            sub::<ack::AckermannDriveStamped, _>(node, topic, q, sink, |m| {
                decode_ackermann(&m.drive)
            })
        }
        "ackermann_msgs/msg/AckermannDrive" => {
            sub::<ack::AckermannDrive, _>(node, topic, q, sink, |m| decode_ackermann(&m))
        }
        "sensor_msgs/msg/JointState" => sub::<sensor::JointState, _>(node, topic, q, sink, |m| {
            Payload::JointState(pl::JointState {
                stamp: seconds(&m.header.stamp),
                name: m.name,
                position: m.position,
                velocity: m.velocity,
                effort: m.effort,
            })
        }),
        "trajectory_msgs/msg/JointTrajectory" => {
            sub::<traj::JointTrajectory, _>(node, topic, q, sink, decode_trajectory)
        }
        "geometry_msgs/msg/PoseStamped" => {
            sub::<geo::PoseStamped, _>(node, topic, q, sink, move |m| {
                Payload::PoseTwist(pl::PoseTwist {
                    stamp: seconds(&m.header.stamp),
                    frame_id: fr.strip(&m.header.frame_id).to_string(),
                    child_frame_id: String::new(),
                    position: [m.pose.position.x, m.pose.position.y, m.pose.position.z],
                    orientation: [
                        m.pose.orientation.x,
                        m.pose.orientation.y,
                        m.pose.orientation.z,
                        m.pose.orientation.w,
                    ],
                    linear: [0.0; 3],
                    angular: [0.0; 3],
                })
            })
        }
        "geometry_msgs/msg/WrenchStamped" => {
            sub::<geo::WrenchStamped, _>(node, topic, q, sink, move |m| {
                Payload::Wrench(pl::Wrench {
                    stamp: seconds(&m.header.stamp),
                    frame_id: fr.strip(&m.header.frame_id).to_string(),
                    force: a3(&m.wrench.force),
                    torque: a3(&m.wrench.torque),
                })
            })
        }
        "std_msgs/msg/Float64" => {
            sub::<std_msgs::Float64, _>(node, topic, q, sink, |m| Payload::Float64(m.data))
        }
        "std_msgs/msg/Bool" => {
            sub::<std_msgs::Bool, _>(node, topic, q, sink, |m| Payload::Bool(m.data))
        }
        "std_msgs/msg/String" => {
            sub::<std_msgs::String, _>(node, topic, q, sink, |m| Payload::String(m.data))
        }
        other => {
            return Err(format!(
                "no decoder for `{other}`; the ROS 2 bridge subscribes: {}",
                IN_TYPES.join(", ")
            ))
        }
    };
    r.map_err(|e| format!("cannot subscribe {msg_type} on {topic}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            tfs[0].header.stamp.nanosec, 500_000_000,
            "odometry TF carries the odometry stamp"
        );
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
        let names: Vec<_> =
            m.fields.iter().map(|f| (f.name.as_str(), f.offset, f.datatype)).collect();
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
        let mut jt = traj::JointTrajectory {
            joint_names: vec!["a".into(), "b".into()],
            ..Default::default()
        };
        jt.points.push(traj::JointTrajectoryPoint {
            positions: vec![0.1, 0.2],
            time_from_start: r2r::builtin_interfaces::msg::Duration {
                sec: 1,
                nanosec: 500_000_000,
            },
            ..Default::default()
        });
        let Payload::Trajectory(g) = decode_trajectory(jt) else { panic!("not a trajectory") };
        assert_eq!(g.joint_names, vec!["a", "b"]);
        assert_eq!(
            (g.points[0].positions.clone(), g.points[0].time_from_start),
            (vec![0.1, 0.2], 1.5)
        );
        let fr = Frames { prefix: "robot1/".into(), hint: None };
        assert_eq!(fr.strip("robot1/map"), "map");
        assert_eq!(fr.strip("map"), "map");
    }
}
