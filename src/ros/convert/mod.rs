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

use r2r::{builtin_interfaces::msg::Time, QosProfile};

use crate::context::payload::Payload;
use crate::ros::names;
use crate::ros::plan::Qos;

use r2r::geometry_msgs::msg as geo;
use r2r::std_msgs::msg as std_msgs;

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

pub(super) fn v3(v: &mut geo::Vector3, a: &[f64; 3]) {
    v.x = a[0];
    v.y = a[1];
    v.z = a[2];
}
pub(super) fn p3(v: &mut geo::Point, a: &[f64; 3]) {
    v.x = a[0];
    v.y = a[1];
    v.z = a[2];
}
pub(super) fn q4(q: &mut geo::Quaternion, a: &[f64; 4]) {
    q.x = a[0];
    q.y = a[1];
    q.z = a[2];
    q.w = a[3];
}
pub(super) fn vec_from(dst: &mut Vec<f64>, src: &[f64]) {
    dst.clear();
    dst.extend_from_slice(src);
}
pub(super) fn header(h: &mut std_msgs::Header, t: f64, fr: &Frames, frame: &str) {
    h.stamp = stamp(t);
    fr.write(frame, &mut h.frame_id);
}
pub(super) fn a3(v: &geo::Vector3) -> [f64; 3] {
    [v.x, v.y, v.z]
}

pub(super) fn wrong(p: &Payload, ty: &str) -> String {
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
        "geometry_msgs/msg/PointStamped" => vec!["ContactLocation"],
        "sensor_msgs/msg/BatteryState" => vec!["EnergyReport"],
        "sensor_msgs/msg/Image" => vec!["Image"],
        "sensor_msgs/msg/CompressedImage" => vec!["CompressedImage"],
        "sensor_msgs/msg/CameraInfo" => vec!["CameraInfo"],
        "vision_msgs/msg/Detection2DArray" => vec!["Detections2D"],
        "vision_msgs/msg/Detection3DArray" => vec!["Detections3D"],
        "ackermann_msgs/msg/AckermannDriveStamped" => vec!["Ackermann"],
        "rosgraph_msgs/msg/Clock" => vec!["Float64 (seconds)"],
        "lifecycle_msgs/msg/TransitionEvent" => vec!["TransitionEvents"],
        "std_msgs/msg/Float64" => vec!["Float64"],
        "std_msgs/msg/Bool" => vec!["Bool"],
        "std_msgs/msg/String" => vec!["String"],
        _ => vec![],
    }
}

mod fill;
mod inbound;
mod outbound;
mod vision;

pub use fill::*;
pub use inbound::*;
pub use outbound::*;
pub use vision::*;

#[cfg(test)]
mod tests;
