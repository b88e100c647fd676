//! Neutral payloads: what endpoints carry, independent of any transport.
//!
//! Units and frames follow REP 103 (SI units; x forward, y left, z up; quaternions here are
//! `[x, y, z, w]` as in geometry_msgs). Stamps are simulation time in seconds.
//!
//! Every payload serializes (serde) so a recording can keep the inbound ones and a replay can
//! deliver them again; a call's or goal's channels are not data: they serialize as the request
//! alone and deserialize with fresh channels nobody listens on.

use serde::{Deserialize, Serialize};

mod detection;
mod image;
mod reports;

pub use detection::*;
pub use image::*;
pub use reports::*;

/// serde for a 6×6 covariance (serde derives arrays up to 32 elements only).
mod arr36 {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(a: &[f64; 36], s: S) -> Result<S::Ok, S::Error> {
        a.as_slice().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[f64; 36], D::Error> {
        let v = Vec::<f64>::deserialize(d)?;
        let n = v.len();
        v.try_into().map_err(|_| serde::de::Error::invalid_length(n, &"36 numbers"))
    }
}

/// A rigid transform `parent → child`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Transform {
    /// Parent frame id (unnamespaced; the bridge applies frame prefixes).
    pub parent: String,
    /// Child frame id.
    pub child: String,
    /// Translation [x, y, z] (m) of the child origin in the parent frame.
    pub translation: [f64; 3],
    /// Rotation [x, y, z, w] of the child in the parent frame.
    pub rotation: [f64; 4],
}

/// nav_msgs/Odometry shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Odometry {
    /// Sim time (s).
    pub stamp: f64,
    /// Pose frame (`odom`).
    pub frame_id: String,
    /// Body frame (`base_link`).
    pub child_frame_id: String,
    /// Position [x, y, z] (m) in `frame_id`.
    pub position: [f64; 3],
    /// Orientation [x, y, z, w] in `frame_id`.
    pub orientation: [f64; 4],
    /// Linear velocity [x, y, z] (m/s) in `child_frame_id`.
    pub linear: [f64; 3],
    /// Angular velocity [x, y, z] (rad/s) in `child_frame_id`.
    pub angular: [f64; 3],
    /// Row-major 6×6 pose covariance.
    #[serde(with = "arr36")]
    pub pose_covariance: [f64; 36],
    /// Row-major 6×6 twist covariance.
    #[serde(with = "arr36")]
    pub twist_covariance: [f64; 36],
    /// Broadcast `frame_id → child_frame_id` on TF with it.
    pub publish_tf: bool,
}

impl Default for Odometry {
    fn default() -> Self {
        Odometry {
            stamp: 0.0,
            frame_id: String::new(),
            child_frame_id: String::new(),
            position: [0.0; 3],
            orientation: [0.0, 0.0, 0.0, 1.0],
            linear: [0.0; 3],
            angular: [0.0; 3],
            pose_covariance: [0.0; 36],
            twist_covariance: [0.0; 36],
            publish_tf: false,
        }
    }
}

/// sensor_msgs/LaserScan shape (REP 117: -inf too close, +inf no return).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LaserScan {
    /// Sim time (s) of the scan.
    pub stamp: f64,
    /// Scan frame.
    pub frame_id: String,
    /// First ray angle (rad).
    pub angle_min: f32,
    /// Last ray angle (rad), inclusive.
    pub angle_max: f32,
    /// Angle between rays (rad).
    pub angle_increment: f32,
    /// Time between rays (s); 0 for an instantaneous scan.
    pub time_increment: f32,
    /// Time between scans (s).
    pub scan_time: f32,
    /// Minimum range value (m).
    pub range_min: f32,
    /// Maximum range value (m).
    pub range_max: f32,
    /// Ranges (m).
    pub ranges: Vec<f32>,
    /// Intensities (empty when not modelled).
    pub intensities: Vec<f32>,
}

/// sensor_msgs/Imu shape.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Imu {
    /// Sim time (s).
    pub stamp: f64,
    /// Sensor frame.
    pub frame_id: String,
    /// Orientation [x, y, z, w] (world-fixed reference).
    pub orientation: [f64; 4],
    /// Row-major 3×3; element 0 = -1 means "no orientation" (sensor_msgs/Imu convention).
    pub orientation_covariance: [f64; 9],
    /// Angular velocity (rad/s) in the sensor frame.
    pub angular_velocity: [f64; 3],
    /// Row-major 3×3.
    pub angular_velocity_covariance: [f64; 9],
    /// Linear acceleration (m/s²) in the sensor frame, gravity included (specific force).
    pub linear_acceleration: [f64; 3],
    /// Row-major 3×3.
    pub linear_acceleration_covariance: [f64; 9],
}

/// sensor_msgs/JointState shape.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JointState {
    /// Sim time (s).
    pub stamp: f64,
    /// Joint names (unprefixed, as a URDF names them, with the entity's frame prefix applied by the producer).
    pub name: Vec<String>,
    /// Positions (rad or m).
    pub position: Vec<f64>,
    /// Velocities (rad/s or m/s).
    pub velocity: Vec<f64>,
    /// Efforts (N·m or N).
    pub effort: Vec<f64>,
}

/// sensor_msgs/Range shape: one reading of an active ranger (REP 117: -inf too close, +inf no
/// return).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Range {
    /// Sim time (s) of the reading.
    pub stamp: f64,
    /// Sensor frame (its +x is the boresight).
    pub frame_id: String,
    /// `0` ultrasound, `1` infrared (the message's enum).
    pub radiation_type: u8,
    /// Size of the arc the reading is valid for (rad).
    pub field_of_view: f32,
    /// Minimum range value (m).
    pub min_range: f32,
    /// Maximum range value (m).
    pub max_range: f32,
    /// The reading (m), or a REP 117 special.
    pub range: f32,
    /// Variance of the reading (m²); 0 = unknown (a noiseless sensor).
    pub variance: f32,
}

/// sensor_msgs/PointCloud2 of bare points: fields x, y, z (float32), one row (height 1).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PointCloud {
    /// Sim time (s) of the scan.
    pub stamp: f64,
    /// Frame the points are expressed in.
    pub frame_id: String,
    /// Points (m) in `frame_id`.
    pub points: Vec<[f32; 3]>,
}

/// sensor_msgs/NavSatFix shape.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NavSatFix {
    /// Sim time (s) of the fix.
    pub stamp: f64,
    /// Antenna frame.
    pub frame_id: String,
    /// NavSatStatus.status: -1 no fix, 0 fix, 1 SBAS, 2 GBAS.
    pub status: i8,
    /// NavSatStatus.service bit field (1 GPS, 2 GLONASS, 4 COMPASS, 8 GALILEO).
    pub service: u16,
    /// Latitude (deg, + north); NaN without a fix.
    pub latitude: f64,
    /// Longitude (deg, + east); NaN without a fix.
    pub longitude: f64,
    /// Altitude (m above the datum's reference); NaN without a fix.
    pub altitude: f64,
    /// Row-major 3×3 ENU position covariance (m²).
    pub position_covariance: [f64; 9],
    /// 0 unknown, 1 approximated, 2 diagonal known, 3 known.
    pub position_covariance_type: u8,
}

/// geometry_msgs/TwistWithCovarianceStamped shape (a measured velocity).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TwistCov {
    /// Sim time (s).
    pub stamp: f64,
    /// Frame the velocity is stamped in.
    pub frame_id: String,
    /// Linear [x, y, z] (m/s).
    pub linear: [f64; 3],
    /// Angular [x, y, z] (rad/s).
    pub angular: [f64; 3],
    /// Row-major 6×6 covariance.
    #[serde(with = "arr36")]
    pub covariance: [f64; 36],
}

/// geometry_msgs/Twist shape (an inbound velocity command).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Twist {
    /// Linear [x, y, z] (m/s).
    pub linear: [f64; 3],
    /// Angular [x, y, z] (rad/s).
    pub angular: [f64; 3],
}

/// geometry_msgs/PoseStamped (+ twist) of a body: ground truth.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PoseTwist {
    /// Sim time (s).
    pub stamp: f64,
    /// Reference frame (`world`).
    pub frame_id: String,
    /// Body frame.
    pub child_frame_id: String,
    /// Position (m).
    pub position: [f64; 3],
    /// Orientation [x, y, z, w].
    pub orientation: [f64; 4],
    /// Linear velocity (m/s), world frame.
    pub linear: [f64; 3],
    /// Angular velocity (rad/s), world frame.
    pub angular: [f64; 3],
}

/// ackermann_msgs/AckermannDrive shape.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct AckermannDrive {
    /// Steering angle (rad), left positive.
    pub steering_angle: f64,
    /// Steering angle velocity (rad/s), 0 = as fast as possible.
    pub steering_angle_velocity: f64,
    /// Forward speed (m/s).
    pub speed: f64,
    /// Acceleration (m/s²), 0 = as fast as possible.
    pub acceleration: f64,
    /// Jerk (m/s³).
    pub jerk: f64,
}

/// geometry_msgs/WrenchStamped shape.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Wrench {
    /// Sim time (s).
    pub stamp: f64,
    /// Frame.
    pub frame_id: String,
    /// Force (N).
    pub force: [f64; 3],
    /// Torque (N·m).
    pub torque: [f64; 3],
}

/// One point of a joint trajectory (trajectory_msgs/JointTrajectoryPoint shape).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TrajectoryPoint {
    /// Positions (rad or m), one per joint name; may be empty.
    pub positions: Vec<f64>,
    /// Velocities (rad/s or m/s); may be empty.
    pub velocities: Vec<f64>,
    /// Accelerations; may be empty.
    pub accelerations: Vec<f64>,
    /// Efforts; may be empty.
    pub effort: Vec<f64>,
    /// Time from the trajectory start (s).
    pub time_from_start: f64,
}

/// Per-joint tolerance (control_msgs/JointTolerance shape); 0 = use the default, -1 = none.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JointTolerance {
    /// Joint name.
    pub name: String,
    /// Position tolerance (rad or m).
    pub position: f64,
    /// Velocity tolerance.
    pub velocity: f64,
    /// Acceleration tolerance.
    pub acceleration: f64,
}

/// A FollowJointTrajectory goal (control_msgs/action/FollowJointTrajectory shape, joint part).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TrajectoryGoal {
    /// Joint names, in the order of every point's arrays.
    pub joint_names: Vec<String>,
    /// Points in time order.
    pub points: Vec<TrajectoryPoint>,
    /// Path tolerances.
    pub path_tolerance: Vec<JointTolerance>,
    /// Goal tolerances (graded on where the joints ended).
    pub goal_tolerance: Vec<JointTolerance>,
    /// Extra time allowed after the last point (s).
    pub goal_time_tolerance: f64,
}

/// A GripperCommand goal (control_msgs/GripperCommand shape).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct GripperGoal {
    /// Target position (m of opening, or the joint's unit).
    pub position: f64,
    /// Maximum effort (N); 0 = no limit beyond the actuator's.
    pub max_effort: f64,
}

/// The outcome of an action goal, as the producer grades it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionOutcome {
    /// `Succeeded`, `Aborted` or `Canceled`.
    pub status: GoalStatus,
    /// Result code (control_msgs conventions: FollowJointTrajectory SUCCESSFUL = 0,
    /// GOAL_TOLERANCE_VIOLATED = -5, ...).
    pub error_code: i32,
    /// Human-readable reason.
    pub error_string: String,
    /// Result payload (e.g. the gripper's final position/effort/stalled/reached as a Payload).
    pub result: Option<Box<Payload>>,
}

/// Terminal status of a goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GoalStatus {
    /// Done as asked.
    Succeeded,
    /// Ended early by the producer (e.g. tolerance violated).
    Aborted,
    /// Ended early by the caller.
    Canceled,
}

/// A service call delivered to an `in` endpoint with a `service` hint: the consumer answers on
/// `reply` (from any hook, possibly steps later). Transport-neutral: a crossbeam channel.
#[derive(Debug, Clone)]
pub struct ServiceCall {
    /// The request.
    pub request: Box<Payload>,
    /// Where the answer goes.
    pub reply: crossbeam_channel::Sender<Payload>,
    /// Taken by its consumer or withdrawn by its caller: exactly one of the two.
    pub claim: CallClaim,
}

/// Who a service call belongs to: its consumer, once an inbox hands it over ([`CallClaim::take`]),
/// or its caller, who stopped waiting ([`CallClaim::withdraw`]): a caller answered "no answer"
/// must never see the request applied later (a fault switched on after a paused run resumed).
#[derive(Debug, Clone, Default)]
pub struct CallClaim(std::sync::Arc<std::sync::atomic::AtomicU8>);

impl CallClaim {
    const WAITING: u8 = 0;
    const TAKEN: u8 = 1;
    const WITHDRAWN: u8 = 2;

    fn to(&self, state: u8) -> bool {
        use std::sync::atomic::Ordering::SeqCst;
        match self.0.compare_exchange(Self::WAITING, state, SeqCst, SeqCst) {
            Ok(_) => true,
            Err(now) => now == state,
        }
    }

    /// The consumer takes the call: false when its caller withdrew it first.
    pub fn take(&self) -> bool {
        self.to(Self::TAKEN)
    }

    /// The caller withdraws the call: false when the consumer took it first (its answer follows).
    pub fn withdraw(&self) -> bool {
        self.to(Self::WITHDRAWN)
    }
}

/// An action goal delivered to an `in` endpoint with an `action` hint.
#[derive(Debug, Clone)]
pub struct ActionCall {
    /// The goal.
    pub goal: Box<Payload>,
    /// Feedback stream (send as often as useful).
    pub feedback: crossbeam_channel::Sender<Payload>,
    /// The outcome, sent once.
    pub outcome: crossbeam_channel::Sender<ActionOutcome>,
    /// Set by the transport when the caller cancels; the consumer then holds the measured state
    /// and answers `Canceled`.
    pub cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Serialize for ServiceCall {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.request.serialize(s)
    }
}

impl<'de> Deserialize<'de> for ServiceCall {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let request = Box::new(Payload::deserialize(d)?);
        Ok(ServiceCall {
            request,
            reply: crossbeam_channel::unbounded().0,
            claim: CallClaim::default(),
        })
    }
}

impl Serialize for ActionCall {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.goal.serialize(s)
    }
}

impl<'de> Deserialize<'de> for ActionCall {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let goal = Box::new(Payload::deserialize(d)?);
        Ok(ActionCall {
            goal,
            feedback: crossbeam_channel::unbounded().0,
            outcome: crossbeam_channel::unbounded().0,
            cancel: Default::default(),
        })
    }
}

impl PartialEq for ServiceCall {
    fn eq(&self, o: &Self) -> bool {
        self.request == o.request
    }
}

impl PartialEq for ActionCall {
    fn eq(&self, o: &Self) -> bool {
        self.goal == o.goal
    }
}

/// One pose of a navigation goal (geometry_msgs/PoseStamped of nav2_msgs NavigateToPose and
/// NavigateThroughPoses).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NavPose {
    /// Frame the pose is stated in (`map`, `world` or empty: the simulator's world frame).
    pub frame_id: String,
    /// Position (m).
    pub position: [f64; 3],
    /// Orientation [x, y, z, w].
    pub orientation: [f64; 4],
}

/// A navigation goal: the poses to reach, in order (one for NavigateToPose).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NavGoal {
    /// The poses.
    pub poses: Vec<NavPose>,
}

/// Navigation feedback (nav2_msgs NavigateToPose / NavigateThroughPoses feedback).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NavFeedback {
    /// Sim time (s).
    pub stamp: f64,
    /// Where the mover is (world frame).
    pub current_pose: NavPose,
    /// Seconds since the goal was accepted (sim time).
    pub navigation_time: f64,
    /// Remaining route length over the speed (s).
    pub estimated_time_remaining: f64,
    /// Recoveries run for this goal.
    pub number_of_recoveries: u32,
    /// Remaining route length (m).
    pub distance_remaining: f64,
    /// Goal poses not yet reached.
    pub number_of_poses_remaining: u32,
}

/// Anything an endpoint carries.
// A payload is built once per publish and moved into its endpoint's slot; boxing the large
// variants would add an allocation per message for no saving.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Payload {
    /// Wheel odometry (+ optional TF).
    Odometry(Odometry),
    /// A 2D scan.
    LaserScan(LaserScan),
    /// One range reading (sensor_msgs/Range).
    Range(Range),
    /// A point cloud (sensor_msgs/PointCloud2, x/y/z float32).
    PointCloud(PointCloud),
    /// A GNSS fix (sensor_msgs/NavSatFix).
    NavSatFix(NavSatFix),
    /// A measured velocity with covariance (geometry_msgs/TwistWithCovarianceStamped).
    TwistCov(TwistCov),
    /// An IMU sample.
    Imu(Imu),
    /// Joint states.
    JointState(JointState),
    /// A velocity command (Twist or TwistStamped on the wire).
    Twist(Twist),
    /// A pose + twist (ground truth).
    PoseTwist(PoseTwist),
    /// Transforms (static or dynamic per the endpoint's hint).
    Transforms(Vec<Transform>),
    /// An Ackermann command.
    Ackermann(AckermannDrive),
    /// A wrench.
    Wrench(Wrench),
    /// std_msgs/Float64.
    Float64(f64),
    /// std_msgs/Bool.
    Bool(bool),
    /// std_msgs/String.
    String(String),
    /// A joint trajectory goal.
    Trajectory(TrajectoryGoal),
    /// A gripper goal.
    Gripper(GripperGoal),
    /// A trajectory feedback sample: (joint names, desired, actual positions).
    TrajectoryFeedback {
        /// Joint names, in the goal's order.
        joint_names: Vec<String>,
        /// Desired positions now (rad | m).
        desired: Vec<f64>,
        /// Measured positions now (rad | m).
        actual: Vec<f64>,
    },
    /// A gripper result: position, effort, stalled, reached_goal.
    GripperResult {
        /// Finger position (m).
        position: f64,
        /// Grip effort (N).
        effort: f64,
        /// The fingers stopped short of the goal against an object.
        stalled: bool,
        /// The goal position was reached.
        reached_goal: bool,
    },
    /// A service call (request + reply channel).
    Call(ServiceCall),
    /// An action goal (goal + feedback/outcome channels + cancel flag).
    Goal(ActionCall),
    /// Empty request/response (std_srvs/Trigger request, std_srvs/Empty).
    Empty,
    /// A success flag with a message (std_srvs/Trigger and SetBool responses).
    Ack {
        /// Whether the request succeeded.
        success: bool,
        /// What happened, for the caller.
        message: String,
    },
    /// A contact monitor's report.
    ContactReport(ContactReport),
    /// A clearance monitor's report.
    ClearanceReport(ClearanceReport),
    /// A contact impulse integrator's report.
    ContactImpulseReport(ContactImpulseReport),
    /// A contact location (geometry_msgs/PointStamped of the centre on the wire).
    ContactLocation(ContactLocation),
    /// An energy monitor's report (sensor_msgs/BatteryState on the wire).
    EnergyReport(EnergyReport),
    /// An upright monitor's report.
    UprightReport(UprightReport),
    /// A force limit's report.
    LimitReport(LimitReport),
    /// Lifecycle transitions of one controller since its last publication, in order (one
    /// lifecycle_msgs/msg/TransitionEvent each on the wire).
    TransitionEvents(Vec<TransitionEvent>),
    /// An image (sensor_msgs/Image).
    Image(Image),
    /// A compressed image (sensor_msgs/CompressedImage).
    CompressedImage(CompressedImage),
    /// Camera calibration (sensor_msgs/CameraInfo).
    CameraInfo(CameraInfo),
    /// A point cloud (sensor_msgs/PointCloud2).
    PointCloud2(PointCloud2),
    /// 2D detections (vision_msgs/Detection2DArray).
    Detections2D(Detection2DArray),
    /// 3D detections (vision_msgs/Detection3DArray).
    Detections3D(Detection3DArray),
    /// A navigation goal (an action goal's content).
    NavGoal(NavGoal),
    /// Navigation feedback.
    NavFeedback(NavFeedback),
}

impl Payload {
    /// Variant name, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Payload::Odometry(_) => "Odometry",
            Payload::LaserScan(_) => "LaserScan",
            Payload::Range(_) => "Range",
            Payload::PointCloud(_) => "PointCloud",
            Payload::NavSatFix(_) => "NavSatFix",
            Payload::TwistCov(_) => "TwistCov",
            Payload::Imu(_) => "Imu",
            Payload::JointState(_) => "JointState",
            Payload::Twist(_) => "Twist",
            Payload::PoseTwist(_) => "PoseTwist",
            Payload::Transforms(_) => "Transforms",
            Payload::Ackermann(_) => "Ackermann",
            Payload::Wrench(_) => "Wrench",
            Payload::Float64(_) => "Float64",
            Payload::Bool(_) => "Bool",
            Payload::String(_) => "String",
            Payload::Trajectory(_) => "Trajectory",
            Payload::Gripper(_) => "Gripper",
            Payload::TrajectoryFeedback { .. } => "TrajectoryFeedback",
            Payload::GripperResult { .. } => "GripperResult",
            Payload::Call(_) => "Call",
            Payload::Goal(_) => "Goal",
            Payload::Empty => "Empty",
            Payload::Ack { .. } => "Ack",
            Payload::TransitionEvents(_) => "TransitionEvents",
            Payload::ContactReport(_) => "ContactReport",
            Payload::ClearanceReport(_) => "ClearanceReport",
            Payload::ContactImpulseReport(_) => "ContactImpulseReport",
            Payload::ContactLocation(_) => "ContactLocation",
            Payload::EnergyReport(_) => "EnergyReport",
            Payload::UprightReport(_) => "UprightReport",
            Payload::LimitReport(_) => "LimitReport",
            Payload::Image(_) => "Image",
            Payload::CompressedImage(_) => "CompressedImage",
            Payload::CameraInfo(_) => "CameraInfo",
            Payload::PointCloud2(_) => "PointCloud2",
            Payload::Detections2D(_) => "Detections2D",
            Payload::Detections3D(_) => "Detections3D",
            Payload::NavGoal(_) => "NavGoal",
            Payload::NavFeedback(_) => "NavFeedback",
        }
    }

    /// A primitive member of a monitor report, by name (what a `("ros2", "field", <member>)` hint
    /// publishes): `in_contact`/`first_time`/`count`/`geom_a`/`geom_b` of a ContactReport,
    /// `current`/`minimum`/`at_time`/`geom`/`saturated` of a ClearanceReport, every member of a
    /// ContactImpulseReport and of a ContactLocation,
    /// `energy_j`/`driving_j`/`driven_j`/`torque_integral_nms`/`power_w`/`state_of_charge`/`depleted`
    /// of an EnergyReport, `upright`/`settled`/`tilt_deg`/`rise_m`/`fallen_time`/`reason` of an
    /// UprightReport, `tripped`/`reason`/`at_time`/`force`/`torque` of a LimitReport, and
    /// `success`/`message` of an Ack. `None` for anything else.
    pub fn member(&self, name: &str) -> Option<Payload> {
        let f = |x: f64| Some(Payload::Float64(x));
        let b = |x: bool| Some(Payload::Bool(x));
        let s = |x: &str| Some(Payload::String(x.to_string()));
        match self {
            Payload::ContactReport(r) => match name {
                "stamp" => f(r.stamp),
                "in_contact" => b(r.in_contact),
                "first_time" => f(r.first_time),
                "count" => f(r.count as f64),
                "geom_a" => s(&r.geom_a),
                "geom_b" => s(&r.geom_b),
                _ => None,
            },
            Payload::ClearanceReport(r) => match name {
                "stamp" => f(r.stamp),
                "current" => f(r.current),
                "minimum" => f(r.minimum),
                "at_time" => f(r.at_time),
                "geom" => s(&r.geom),
                "saturated" => b(r.saturated),
                _ => None,
            },
            Payload::ContactImpulseReport(r) => match name {
                "stamp" => f(r.stamp),
                "impulse_ns" => f(r.impulse_ns),
                "peak_normal_n" => f(r.peak_normal_n),
                "contact_time_s" => f(r.contact_time_s),
                "normal_n" => f(r.normal_n),
                "count" => f(r.count as f64),
                "peak_time" => f(r.peak_time),
                "peak_geom_a" => s(&r.peak_geom_a),
                "peak_geom_b" => s(&r.peak_geom_b),
                _ => None,
            },
            Payload::ContactLocation(r) => match name {
                "time" => f(r.time),
                "frame_id" => s(&r.frame_id),
                "in_contact" => b(r.in_contact),
                "kind" => s(&r.kind),
                "x" => f(r.x),
                "y" => f(r.y),
                "z" => f(r.z),
                "extent" => f(r.extent),
                "count" => f(r.count as f64),
                _ => None,
            },
            Payload::EnergyReport(r) => match name {
                "stamp" => f(r.stamp),
                "energy_j" => f(r.energy_j),
                "driving_j" => f(r.driving_j),
                "driven_j" => f(r.driven_j),
                "torque_integral_nms" => f(r.torque_integral_nms),
                "power_w" => f(r.power_w),
                "state_of_charge" => f(r.state_of_charge.unwrap_or(f64::NAN)),
                "depleted" => b(r.depleted),
                _ => None,
            },
            Payload::UprightReport(r) => match name {
                "stamp" => f(r.stamp),
                "upright" => b(r.upright),
                "settled" => b(r.settled),
                "tilt_deg" => f(r.tilt_deg),
                "rise_m" => f(r.rise_m),
                "fallen_time" => f(r.fallen_time),
                "reason" => s(&r.reason),
                _ => None,
            },
            Payload::LimitReport(r) => match name {
                "stamp" => f(r.stamp),
                "tripped" => b(r.tripped),
                "reason" => s(&r.reason),
                "at_time" => f(r.at_time),
                "force" => f(r.force),
                "torque" => f(r.torque),
                _ => None,
            },
            Payload::Ack { success, message } => match name {
                "success" => b(*success),
                "message" => s(message),
                _ => None,
            },
            _ => None,
        }
    }
}
