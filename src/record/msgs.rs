//! The ROS 2 messages a recording carries: their published Jazzy definitions (the `.msg` files
//! beside this file, copied byte for byte from the ROS 2 Jazzy packages) in rosbag2's `ros2msg`
//! schema form, and CDR encoders that turn a neutral [`Payload`] into the message the ROS 2
//! bridge would publish for it (same frames, prefixes and stamps).

use std::collections::BTreeSet;

use crate::context::payload::{self as pl, Payload};
use crate::record::cdr::CdrWriter;
use crate::ros::names;

/// (`pkg/msg/Type`, definition text) of every message embedded here.
const DEFINITIONS: &[(&str, &str)] = &[
    ("builtin_interfaces/msg/Time", include_str!("msgs/builtin_interfaces__Time.msg")),
    ("std_msgs/msg/Header", include_str!("msgs/std_msgs__Header.msg")),
    ("std_msgs/msg/Float64", include_str!("msgs/std_msgs__Float64.msg")),
    ("std_msgs/msg/Bool", include_str!("msgs/std_msgs__Bool.msg")),
    ("std_msgs/msg/String", include_str!("msgs/std_msgs__String.msg")),
    ("geometry_msgs/msg/Point", include_str!("msgs/geometry_msgs__Point.msg")),
    ("geometry_msgs/msg/Quaternion", include_str!("msgs/geometry_msgs__Quaternion.msg")),
    ("geometry_msgs/msg/Pose", include_str!("msgs/geometry_msgs__Pose.msg")),
    (
        "geometry_msgs/msg/PoseWithCovariance",
        include_str!("msgs/geometry_msgs__PoseWithCovariance.msg"),
    ),
    ("geometry_msgs/msg/PoseStamped", include_str!("msgs/geometry_msgs__PoseStamped.msg")),
    ("geometry_msgs/msg/Twist", include_str!("msgs/geometry_msgs__Twist.msg")),
    (
        "geometry_msgs/msg/TwistWithCovariance",
        include_str!("msgs/geometry_msgs__TwistWithCovariance.msg"),
    ),
    ("geometry_msgs/msg/TwistStamped", include_str!("msgs/geometry_msgs__TwistStamped.msg")),
    ("geometry_msgs/msg/Vector3", include_str!("msgs/geometry_msgs__Vector3.msg")),
    ("geometry_msgs/msg/Wrench", include_str!("msgs/geometry_msgs__Wrench.msg")),
    ("geometry_msgs/msg/WrenchStamped", include_str!("msgs/geometry_msgs__WrenchStamped.msg")),
    ("geometry_msgs/msg/Transform", include_str!("msgs/geometry_msgs__Transform.msg")),
    (
        "geometry_msgs/msg/TransformStamped",
        include_str!("msgs/geometry_msgs__TransformStamped.msg"),
    ),
    ("nav_msgs/msg/Odometry", include_str!("msgs/nav_msgs__Odometry.msg")),
    ("sensor_msgs/msg/LaserScan", include_str!("msgs/sensor_msgs__LaserScan.msg")),
    ("sensor_msgs/msg/Imu", include_str!("msgs/sensor_msgs__Imu.msg")),
    ("sensor_msgs/msg/JointState", include_str!("msgs/sensor_msgs__JointState.msg")),
    ("rosgraph_msgs/msg/Clock", include_str!("msgs/rosgraph_msgs__Clock.msg")),
    ("tf2_msgs/msg/TFMessage", include_str!("msgs/tf2_msgs__TFMessage.msg")),
    ("sensor_msgs/msg/Range", include_str!("msgs/sensor_msgs__Range.msg")),
    ("sensor_msgs/msg/BatteryState", include_str!("msgs/sensor_msgs__BatteryState.msg")),
    ("sensor_msgs/msg/NavSatFix", include_str!("msgs/sensor_msgs__NavSatFix.msg")),
    ("sensor_msgs/msg/NavSatStatus", include_str!("msgs/sensor_msgs__NavSatStatus.msg")),
    (
        "geometry_msgs/msg/TwistWithCovarianceStamped",
        include_str!("msgs/geometry_msgs__TwistWithCovarianceStamped.msg"),
    ),
    ("geometry_msgs/msg/PointStamped", include_str!("msgs/geometry_msgs__PointStamped.msg")),
    (
        "ackermann_msgs/msg/AckermannDriveStamped",
        include_str!("msgs/ackermann_msgs__AckermannDriveStamped.msg"),
    ),
    ("ackermann_msgs/msg/AckermannDrive", include_str!("msgs/ackermann_msgs__AckermannDrive.msg")),
    (
        "lifecycle_msgs/msg/TransitionEvent",
        include_str!("msgs/lifecycle_msgs__TransitionEvent.msg"),
    ),
    ("lifecycle_msgs/msg/Transition", include_str!("msgs/lifecycle_msgs__Transition.msg")),
    ("lifecycle_msgs/msg/State", include_str!("msgs/lifecycle_msgs__State.msg")),
];

/// The recording's own state-sample message (not a ROS package type; documented in
/// docs/recording.md). Foxglove and the mcap-ros2 readers decode it from this definition.
pub const STATE_SAMPLE_TYPE: &str = "roqsim_msgs/msg/StateSample";
/// Its definition.
pub const STATE_SAMPLE_DEF: &str = "\
# One physics state sample of a roqsim run, taken after a step.
float64 time          # sim time (s), the /clock value
uint64 step           # physics steps since the run started (never reset)
uint64 tick           # physics steps since the last reset
uint32 episode        # advanced by every reset after the first
float64[] qpos        # mjData.qpos
float64[] qvel        # mjData.qvel
float64[] act         # mjData.act
float64[] ctrl        # mjData.ctrl
float64[] mocap_pos   # mjData.mocap_pos, 3 per mocap body
float64[] mocap_quat  # mjData.mocap_quat, 4 per mocap body (w, x, y, z)
string[] entities     # entity names, in registration order
bool[] present        # per entity: present in the world
";

const PRIMITIVES: &[&str] = &[
    "bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32",
    "uint32", "int64", "uint64", "string", "wstring",
];

fn definition(ty: &str) -> Option<&'static str> {
    DEFINITIONS.iter().find(|(n, _)| *n == ty).map(|(_, d)| *d)
}

/// The message types of every field of a definition (`pkg/msg/Type`), in order.
fn field_types(pkg: &str, def: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in def.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some(ty) = line.split_whitespace().next() else { continue };
        if line.contains('=') && !line.contains(' ') {
            continue;
        }
        let base = ty.split('[').next().unwrap_or(ty);
        let base = base.split("<=").next().unwrap_or(base);
        if PRIMITIVES.contains(&base) || line.split_whitespace().nth(1).is_none() {
            continue;
        }
        let parts: Vec<&str> = base.split('/').collect();
        let full = match parts.as_slice() {
            [name] => format!("{pkg}/msg/{name}"),
            [p, name] => format!("{p}/msg/{name}"),
            _ => base.to_string(),
        };
        out.push(full);
    }
    out
}

/// The complete `ros2msg` schema of `ty`: its definition, then every type it depends on
/// (recursively, each once) after a line of 80 `=` and `MSG: pkg/msg/Type`, as rosbag2 writes it.
pub fn schema(ty: &str) -> Option<String> {
    let (top, pkg) = if ty == STATE_SAMPLE_TYPE {
        (STATE_SAMPLE_DEF, "roqsim_msgs")
    } else {
        (definition(ty)?, ty.split('/').next()?)
    };
    let mut text = top.to_string();
    let mut seen = BTreeSet::new();
    let mut queue = field_types(pkg, top);
    while let Some(dep) = queue.first().cloned() {
        queue.remove(0);
        if !seen.insert(dep.clone()) {
            continue;
        }
        let d = definition(&dep)?;
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&"=".repeat(80));
        text.push_str(&format!("\nMSG: {dep}\n"));
        text.push_str(d);
        queue.extend(field_types(dep.split('/').next()?, d));
    }
    Some(text)
}

/// Frame naming of one publication: the combined prefix and the `frame_id` hint (as the bridge).
#[derive(Debug, Clone, Default)]
pub struct Frames {
    /// Prefix (bridge + endpoint), normalised with a trailing `/` or empty.
    pub prefix: String,
    /// Used when a payload leaves its frame id empty.
    pub hint: Option<String>,
}

impl Frames {
    /// The published name of `f`.
    pub fn name(&self, f: &str) -> String {
        let f = if f.is_empty() { self.hint.as_deref().unwrap_or("") } else { f };
        names::frame("", &self.prefix, f)
    }

    /// Write [`Frames::name`] of `f` as a CDR string without building it (this runs for every
    /// recorded message with a header).
    fn write_name(&self, w: &mut CdrWriter, f: &str) {
        let f = if f.is_empty() { self.hint.as_deref().unwrap_or("") } else { f };
        let p = self.prefix.trim_matches('/');
        match (f.is_empty(), p.is_empty()) {
            (true, _) => w.string(""),
            (false, true) => w.string(f.trim_start_matches('/')),
            (false, false) => w.string_parts(&[p, "/", f.trim_start_matches('/')]),
        }
    }
}

/// Nanoseconds of a sim time, rounded as the bridge stamps it.
pub fn nanos(t: f64) -> i64 {
    (t * 1e9).round() as i64
}

fn time(w: &mut CdrWriter, t: f64) {
    let ns = nanos(t);
    w.i32(ns.div_euclid(1_000_000_000) as i32);
    w.u32(ns.rem_euclid(1_000_000_000) as u32);
}

fn header(w: &mut CdrWriter, t: f64, fr: &Frames, frame: &str) {
    time(w, t);
    fr.write_name(w, frame);
}

fn pose(w: &mut CdrWriter, p: &[f64; 3], q: &[f64; 4]) {
    w.f64_array(p);
    w.f64_array(q);
}

fn transform(w: &mut CdrWriter, t: &pl::Transform, at: f64, fr: &Frames) {
    header(w, at, fr, &t.parent);
    fr.write_name(w, &t.child);
    w.f64_array(&t.translation);
    w.f64_array(&t.rotation);
}

/// The transforms a payload contributes to /tf (Transforms as given; Odometry and PoseTwist as
/// `frame → child`), stamped with the payload's stamp, else `now`.
pub fn transforms_of(p: &Payload, now: f64) -> Option<Vec<(pl::Transform, f64)>> {
    let one = |f: &str, c: &str, pos: [f64; 3], q: [f64; 4], t: f64| {
        let tr = pl::Transform { parent: f.into(), child: c.into(), translation: pos, rotation: q };
        vec![(tr, t)]
    };
    Some(match p {
        Payload::Transforms(ts) => ts.iter().map(|t| (t.clone(), now)).collect(),
        Payload::Odometry(o) => {
            one(&o.frame_id, &o.child_frame_id, o.position, o.orientation, o.stamp)
        }
        Payload::PoseTwist(o) => {
            one(&o.frame_id, &o.child_frame_id, o.position, o.orientation, o.stamp)
        }
        _ => return None,
    })
}

/// A tf2_msgs/TFMessage of (transform, stamp, frames) triples.
pub fn encode_tf(ts: &[(pl::Transform, f64, Frames)]) -> Vec<u8> {
    let mut w = CdrWriter::new();
    w.u32(ts.len() as u32);
    for (t, at, fr) in ts {
        transform(&mut w, t, *at, fr);
    }
    w.finish()
}

/// A rosgraph_msgs/Clock.
pub fn encode_clock(t: f64) -> Vec<u8> {
    let mut w = CdrWriter::new();
    time(&mut w, t);
    w.finish()
}

/// The wire types [`encode`] converts.
pub const ENCODED_TYPES: &[&str] = &[
    "nav_msgs/msg/Odometry",
    "sensor_msgs/msg/LaserScan",
    "sensor_msgs/msg/Imu",
    "sensor_msgs/msg/JointState",
    "geometry_msgs/msg/Twist",
    "geometry_msgs/msg/TwistStamped",
    "geometry_msgs/msg/PoseStamped",
    "geometry_msgs/msg/WrenchStamped",
    "tf2_msgs/msg/TFMessage",
    "rosgraph_msgs/msg/Clock",
    "std_msgs/msg/Float64",
    "std_msgs/msg/Bool",
    "std_msgs/msg/String",
    "sensor_msgs/msg/Range",
    "sensor_msgs/msg/NavSatFix",
    "geometry_msgs/msg/TwistWithCovarianceStamped",
    "geometry_msgs/msg/PointStamped",
    "ackermann_msgs/msg/AckermannDriveStamped",
    "lifecycle_msgs/msg/TransitionEvent",
    "sensor_msgs/msg/BatteryState",
];

/// A merged sensor_msgs/JointState as the bridge builds it: every member's names, positions,
/// velocities and efforts in member order, stamped `now`, no frame; velocities or efforts left
/// empty when a member reports none (JointState allows empty arrays, not ragged ones).
pub fn encode_merged_joint_states(members: &[Option<pl::JointState>], now: f64) -> Vec<u8> {
    let (mut name, mut position, mut velocity, mut effort) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for s in members.iter().flatten() {
        name.extend(s.name.iter().cloned());
        position.extend_from_slice(&s.position);
        velocity.extend_from_slice(&s.velocity);
        effort.extend_from_slice(&s.effort);
    }
    if velocity.len() != name.len() {
        velocity.clear();
    }
    if effort.len() != name.len() {
        effort.clear();
    }
    let mut w = CdrWriter::new();
    time(&mut w, now);
    w.string("");
    w.string_seq(&name);
    w.f64_seq(&position);
    w.f64_seq(&velocity);
    w.f64_seq(&effort);
    w.finish()
}

/// Encode `p` as the messages of `ty` the bridge publishes for it: one, except a
/// `TransitionEvents` payload (one lifecycle_msgs/TransitionEvent per event, in order).
pub fn encode_all(ty: &str, p: &Payload, fr: &Frames, now: f64) -> Result<Vec<Vec<u8>>, String> {
    match (ty, p) {
        ("lifecycle_msgs/msg/TransitionEvent", Payload::TransitionEvents(evs)) => Ok(evs
            .iter()
            .map(|e| {
                let mut w = CdrWriter::new();
                // TransitionEvent.timestamp: nanoseconds of sim time, as the bridge writes it
                w.u64(nanos(e.stamp).max(0) as u64);
                w.u8(e.transition_id);
                w.string(&e.transition_label);
                w.u8(e.start_id);
                w.string(&e.start_label);
                w.u8(e.goal_id);
                w.string(&e.goal_label);
                w.finish()
            })
            .collect()),
        _ => encode(ty, p, fr, now).map(|b| vec![b]),
    }
}

fn wrong(p: &Payload, ty: &str) -> String {
    format!("a {} payload cannot be recorded as {ty}", p.kind())
}

/// Encode `p` as the CDR bytes of `ty`. `now` stamps payloads that carry no stamp.
pub fn encode(ty: &str, p: &Payload, fr: &Frames, now: f64) -> Result<Vec<u8>, String> {
    let mut w = CdrWriter::new();
    match (ty, p) {
        ("nav_msgs/msg/Odometry", Payload::Odometry(o)) => {
            header(&mut w, o.stamp, fr, &o.frame_id);
            fr.write_name(&mut w, &o.child_frame_id);
            pose(&mut w, &o.position, &o.orientation);
            w.f64_array(&o.pose_covariance);
            w.f64_array(&o.linear);
            w.f64_array(&o.angular);
            w.f64_array(&o.twist_covariance);
        }
        ("sensor_msgs/msg/LaserScan", Payload::LaserScan(s)) => {
            header(&mut w, s.stamp, fr, &s.frame_id);
            for v in [
                s.angle_min,
                s.angle_max,
                s.angle_increment,
                s.time_increment,
                s.scan_time,
                s.range_min,
                s.range_max,
            ] {
                w.f32(v);
            }
            w.f32_seq(&s.ranges);
            w.f32_seq(&s.intensities);
        }
        ("sensor_msgs/msg/Imu", Payload::Imu(s)) => {
            header(&mut w, s.stamp, fr, &s.frame_id);
            w.f64_array(&s.orientation);
            w.f64_array(&s.orientation_covariance);
            w.f64_array(&s.angular_velocity);
            w.f64_array(&s.angular_velocity_covariance);
            w.f64_array(&s.linear_acceleration);
            w.f64_array(&s.linear_acceleration_covariance);
        }
        ("sensor_msgs/msg/JointState", Payload::JointState(s)) => {
            time(&mut w, s.stamp);
            w.string("");
            w.string_seq(&s.name);
            w.f64_seq(&s.position);
            w.f64_seq(&s.velocity);
            w.f64_seq(&s.effort);
        }
        ("geometry_msgs/msg/Twist", Payload::Twist(t)) => {
            w.f64_array(&t.linear);
            w.f64_array(&t.angular);
        }
        ("geometry_msgs/msg/TwistStamped", Payload::Twist(t)) => {
            header(&mut w, now, fr, "");
            w.f64_array(&t.linear);
            w.f64_array(&t.angular);
        }
        ("geometry_msgs/msg/PoseStamped", Payload::PoseTwist(o)) => {
            header(&mut w, o.stamp, fr, &o.frame_id);
            pose(&mut w, &o.position, &o.orientation);
        }
        ("geometry_msgs/msg/PoseStamped", Payload::Odometry(o)) => {
            header(&mut w, o.stamp, fr, &o.frame_id);
            pose(&mut w, &o.position, &o.orientation);
        }
        ("geometry_msgs/msg/WrenchStamped", Payload::Wrench(x)) => {
            header(&mut w, x.stamp, fr, &x.frame_id);
            w.f64_array(&x.force);
            w.f64_array(&x.torque);
        }
        ("tf2_msgs/msg/TFMessage", p) => {
            let ts = transforms_of(p, now).ok_or_else(|| wrong(p, ty))?;
            let ts: Vec<_> = ts.into_iter().map(|(t, at)| (t, at, fr.clone())).collect();
            return Ok(encode_tf(&ts));
        }
        ("sensor_msgs/msg/Range", Payload::Range(r)) => {
            header(&mut w, r.stamp, fr, &r.frame_id);
            w.u8(r.radiation_type);
            for v in [r.field_of_view, r.min_range, r.max_range, r.range, r.variance] {
                w.f32(v);
            }
        }
        ("sensor_msgs/msg/NavSatFix", Payload::NavSatFix(f)) => {
            header(&mut w, f.stamp, fr, &f.frame_id);
            w.i8(f.status);
            w.u16(f.service);
            w.f64(f.latitude);
            w.f64(f.longitude);
            w.f64(f.altitude);
            w.f64_array(&f.position_covariance);
            w.u8(f.position_covariance_type);
        }
        ("geometry_msgs/msg/TwistWithCovarianceStamped", Payload::TwistCov(t)) => {
            header(&mut w, t.stamp, fr, &t.frame_id);
            w.f64_array(&t.linear);
            w.f64_array(&t.angular);
            w.f64_array(&t.covariance);
        }
        ("geometry_msgs/msg/PointStamped", Payload::ContactLocation(c)) => {
            header(&mut w, c.time, fr, &c.frame_id);
            w.f64_array(&[c.x, c.y, c.z]);
        }
        ("ackermann_msgs/msg/AckermannDriveStamped", Payload::Ackermann(a)) => {
            header(&mut w, now, fr, "");
            for v in [a.steering_angle, a.steering_angle_velocity, a.speed, a.acceleration, a.jerk]
            {
                w.f32(v as f32);
            }
        }
        ("sensor_msgs/msg/BatteryState", Payload::EnergyReport(r)) => {
            header(&mut w, r.stamp, fr, "");
            let b = r.battery();
            // voltage, temperature (not modelled), current, charge, capacity, design_capacity,
            // percentage
            for v in
                [b.voltage, f32::NAN, b.current, b.charge, b.capacity, b.capacity, b.percentage]
            {
                w.f32(v);
            }
            w.u8(b.status);
            w.u8(b.health);
            w.u8(0); // POWER_SUPPLY_TECHNOLOGY_UNKNOWN
            w.bool(b.present);
            w.f32_seq(&[]);
            w.f32_seq(&[]);
            w.string("");
            w.string("");
        }
        ("lifecycle_msgs/msg/TransitionEvent", Payload::TransitionEvents(_)) => {
            return Err("a TransitionEvents payload is several messages: encode_all".into())
        }
        ("rosgraph_msgs/msg/Clock", Payload::Float64(t)) => time(&mut w, *t),
        ("std_msgs/msg/Float64", Payload::Float64(x)) => w.f64(*x),
        ("std_msgs/msg/Bool", Payload::Bool(x)) => w.bool(*x),
        ("std_msgs/msg/String", Payload::String(x)) => w.string(x),
        _ if ENCODED_TYPES.contains(&ty) => return Err(wrong(p, ty)),
        _ => return Err(format!("no recording encoder for `{ty}`")),
    }
    Ok(w.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_encoded_type_has_a_complete_schema() {
        for ty in ENCODED_TYPES.iter().chain([&STATE_SAMPLE_TYPE]) {
            let s = schema(ty).unwrap_or_else(|| panic!("{ty}: missing a dependency"));
            assert!(!s.is_empty());
        }
        let odom = schema("nav_msgs/msg/Odometry").unwrap();
        for dep in [
            "MSG: std_msgs/msg/Header",
            "MSG: builtin_interfaces/msg/Time",
            "MSG: geometry_msgs/msg/PoseWithCovariance",
            "MSG: geometry_msgs/msg/Pose",
            "MSG: geometry_msgs/msg/Point",
            "MSG: geometry_msgs/msg/Quaternion",
            "MSG: geometry_msgs/msg/TwistWithCovariance",
            "MSG: geometry_msgs/msg/Twist",
            "MSG: geometry_msgs/msg/Vector3",
        ] {
            assert_eq!(odom.matches(&format!("{dep}\n")).count(), 1, "{dep} in\n{odom}");
        }
        assert!(odom.starts_with(include_str!("msgs/nav_msgs__Odometry.msg")));
    }

    #[test]
    fn clock_is_exact_nanoseconds() {
        assert_eq!(encode_clock(1.5), vec![0, 1, 0, 0, 1, 0, 0, 0, 0, 0x65, 0xcd, 0x1d]);
        assert_eq!(
            encode("std_msgs/msg/Bool", &Payload::Float64(1.0), &Frames::default(), 0.0)
                .unwrap_err(),
            "a Float64 payload cannot be recorded as std_msgs/msg/Bool"
        );
    }
}
