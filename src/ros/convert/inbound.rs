//! Inbound decoders: a received message turned into a neutral payload and posted to its sink.

use crate::context::payload::{self as pl, Payload};

use futures::StreamExt;
use r2r::ackermann_msgs::msg as ack;
use r2r::geometry_msgs::msg as geo;
use r2r::sensor_msgs::msg as sensor;
use r2r::std_msgs::msg as std_msgs;
use r2r::trajectory_msgs::msg as traj;
use r2r::QosProfile;

use super::*;

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

pub(super) fn sub<T, F>(
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
