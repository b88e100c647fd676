//! Outbound publishers: one per endpoint row, owning its preallocated message and the fill
//! function of its wire type.

use crate::context::payload::Payload;

use r2r::ackermann_msgs::msg as ack;
use r2r::geometry_msgs::msg as geo;
use r2r::lifecycle_msgs::msg as lifecycle;
use r2r::nav_msgs::msg as nav;
use r2r::rosgraph_msgs::msg as rosgraph;
use r2r::sensor_msgs::msg as sensor;
use r2r::std_msgs::msg as std_msgs;
use r2r::tf2_msgs::msg as tf2;
use r2r::vision_msgs::msg as vision;
use r2r::QosProfile;

use super::fill::*;
use super::*;

/// A publisher with its preallocated message.
pub trait Outbound {
    /// Fill the message from `p` and publish it. `now` = sim time (s) for payloads without a stamp.
    fn publish(&mut self, p: &Payload, fr: &Frames, now: f64) -> Result<(), String>;
    /// Subscriptions matched in other processes.
    fn subscribers(&self) -> usize;
}

pub(super) type FillFn<T> = fn(&mut T, &Payload, &Frames, f64) -> Result<(), String>;

pub(super) struct Typed<T: r2r::WrappedTypesupport + 'static> {
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

pub(super) fn typed<T: r2r::WrappedTypesupport + Default + 'static>(
    node: &mut r2r::Node,
    topic: &str,
    qos: QosProfile,
    fill: FillFn<T>,
) -> r2r::Result<Box<dyn Outbound>> {
    let publisher = node.create_publisher::<T>(topic, qos)?;
    Ok(Box::new(Typed { publisher, msg: T::default(), fill }))
}

/// lifecycle_msgs/TransitionEvent: one message per event of a `TransitionEvents` payload.
pub(super) struct Transitions {
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
    "geometry_msgs/msg/PointStamped",
    "sensor_msgs/msg/BatteryState",
    "sensor_msgs/msg/Image",
    "sensor_msgs/msg/CompressedImage",
    "sensor_msgs/msg/CameraInfo",
    "sensor_msgs/msg/PointCloud2",
    "vision_msgs/msg/Detection2DArray",
    "vision_msgs/msg/Detection3DArray",
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
        "geometry_msgs/msg/PointStamped" => {
            typed::<geo::PointStamped>(node, topic, q, |m, p, fr, _| fill_point(m, p, fr))
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
        "vision_msgs/msg/Detection2DArray" => {
            typed::<vision::Detection2DArray>(node, topic, q, |m, p, fr, _| {
                fill_detections_2d(m, p, fr)
            })
        }
        "vision_msgs/msg/Detection3DArray" => {
            typed::<vision::Detection3DArray>(node, topic, q, |m, p, fr, _| {
                fill_detections_3d(m, p, fr)
            })
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
