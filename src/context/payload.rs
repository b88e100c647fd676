//! Neutral payloads: what endpoints carry, independent of any transport (seed 000 §13).
//!
//! Units and frames follow REP 103 (SI units; x forward, y left, z up; quaternions here are
//! `[x, y, z, w]` as in geometry_msgs). Stamps are simulation time in seconds.

/// A rigid transform `parent → child`.
#[derive(Debug, Clone, PartialEq, Default)]
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
#[derive(Debug, Clone, PartialEq)]
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
    pub pose_covariance: [f64; 36],
    /// Row-major 6×6 twist covariance.
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
#[derive(Debug, Clone, PartialEq, Default)]
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
#[derive(Debug, Clone, PartialEq, Default)]
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
#[derive(Debug, Clone, PartialEq, Default)]
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

/// geometry_msgs/Twist shape (an inbound velocity command).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Twist {
    /// Linear [x, y, z] (m/s).
    pub linear: [f64; 3],
    /// Angular [x, y, z] (rad/s).
    pub angular: [f64; 3],
}

/// geometry_msgs/PoseStamped (+ twist) of a body: ground truth.
#[derive(Debug, Clone, PartialEq, Default)]
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
#[derive(Debug, Clone, Copy, PartialEq, Default)]
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
#[derive(Debug, Clone, PartialEq, Default)]
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
#[derive(Debug, Clone, PartialEq, Default)]
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
#[derive(Debug, Clone, PartialEq, Default)]
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
#[derive(Debug, Clone, PartialEq, Default)]
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
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GripperGoal {
    /// Target position (m of opening, or the joint's unit).
    pub position: f64,
    /// Maximum effort (N); 0 = no limit beyond the actuator's.
    pub max_effort: f64,
}

/// The outcome of an action goal, as the producer grades it.
#[derive(Debug, Clone, PartialEq)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// Anything an endpoint carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// Wheel odometry (+ optional TF).
    Odometry(Odometry),
    /// A 2D scan.
    LaserScan(LaserScan),
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
    TrajectoryFeedback { joint_names: Vec<String>, desired: Vec<f64>, actual: Vec<f64> },
    /// A gripper result: position, effort, stalled, reached_goal.
    GripperResult { position: f64, effort: f64, stalled: bool, reached_goal: bool },
    /// A service call (request + reply channel).
    Call(ServiceCall),
    /// An action goal (goal + feedback/outcome channels + cancel flag).
    Goal(ActionCall),
    /// Empty request/response (std_srvs/Trigger request, std_srvs/Empty).
    Empty,
    /// A success flag with a message (std_srvs/Trigger and SetBool responses).
    Ack { success: bool, message: String },
}

impl Payload {
    /// Variant name, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Payload::Odometry(_) => "Odometry",
            Payload::LaserScan(_) => "LaserScan",
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
        }
    }
}
