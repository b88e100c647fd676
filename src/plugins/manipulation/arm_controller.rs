//! `arm_controller`: joint-position hold for a manipulator, FollowJointTrajectory and
//! GripperCommand execution on the physics thread, and joint-state publishing.
//!
//! **The only writer.** This plugin writes its arm's actuators every `pre_step`, whatever else
//! happens — that write is the hardware holding the joints, and it never stops. What changes is
//! where its targets come from: a trajectory goal, a streamed trajectory, velocity commands, the
//! in-process [`ArmHandle`], `test_target`, or nothing (it holds the last target). A second writer
//! of the same actuators is refused naming both.
//!
//! **Controllers.** It declares, in the robot's [`crate::handles::controllers::Registry`]:
//! `<controller_name>` (`joint_trajectory_controller/JointTrajectoryController`, claims
//! `<joint>/position` of its joints), `<gripper_controller_name>`
//! (`position_controllers/GripperActionController`, claims `<gripper_joint>/position`) when it has a
//! gripper, and `joint_state_broadcaster` (claims nothing; `joint_states` is published only while
//! it is active). Each starts in its `*initial_state` (default: the world's
//! `sim.controllers.initial_state`, `unloaded` unless the world says otherwise, so the standard
//! `spawner` bringup loads them). While a controller is not active its
//! goals are refused with a message saying so, and the joints hold where they were when it was
//! deactivated.
//!
//! **Trajectories** (`follow_joint_trajectory`, `Payload::Goal` carrying `Payload::Trajectory`)
//! are interpolated every step from the measured state at acceptance: quintic between points that
//! state positions, velocities and accelerations, cubic Hermite with positions and velocities,
//! linear with positions only. The result is graded on where the joints ENDED: after the last
//! point, success as soon as every checked joint is within its goal tolerance and has stopped
//! (|qvel| ≤ `stopped_velocity_tolerance`); at `goal_time_tolerance` past the last point, success
//! if the positions are within tolerance, else `GOAL_TOLERANCE_VIOLATED` (-5). Tolerance per joint:
//! the goal's own `goal_tolerance` entry (> 0; -1 disables), then the config's (scalar or
//! `{joint: rad}`; 0 disables), then the loose default 0.5 rad. Unknown or duplicate joint names
//! abort with `INVALID_JOINTS` (-2), a malformed trajectory with `INVALID_GOAL` (-1). A cancel holds
//! the MEASURED position and answers `Canceled`. A newer goal cancels the running one.
//!
//! **Gripper** (`gripper_cmd`, `Payload::Gripper`): the commanded position is the gripper JOINT's
//! (rad or m, as control_msgs defines it), `gripper_open` .. `gripper_close`, mapped linearly onto
//! the gripper actuator's ctrlrange. Unstated, the two ends are derived from the model: the joint
//! positions the servo settles at when holding each end of its ctrlrange (a 0..255-ctrl Robotiq
//! 2F-85 maps 0 .. 0.8 rad); the mapping is written into the entity's resolved actuator table. A
//! goal outside the reachable range drives to the end it can reach and reports stalled, never
//! reached.
//! `max_effort` clamps the gripper JOINT's effort, as ros2_control's gripper action controller does:
//! the actuator's force range becomes ±max_effort / moment (moment = the transmission's constant
//! joint-force per actuator-force: gear, times the joint's coefficient in a fixed tendon), never
//! above the model's own; `max_effort <= 0` and every reset restore the model's range. A
//! transmission without a constant moment keeps its range (position only). The goal succeeds with
//! `reached_goal` within `gripper_goal_tolerance`, or `stalled` once its MEAN speed over the last
//! `gripper_stall_timeout` s is below `gripper_stall_velocity` (success when
//! `gripper_allow_stalling`, else abort). The mean, not the instantaneous velocity: a jaw squeezing
//! an object chatters (the bundled parallel_gripper: ±0.25 mm at up to 45 mm/s), and a stall is a
//! gripper that stopped getting anywhere.
//!
//! **joint_states** reports the controller's joints (names with `joint_prefix`) and the gripper
//! joint; efforts are `qfrc_actuator + qfrc_gravcomp` — what the joint physically carries when
//! gravity compensation supplies the holding term outside the actuator.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::Ordering;

use mujoco_rs::mujoco_c::{mjtJoint, mjtTrn, mjtWrap};
use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::{
    ActionCall, ActionOutcome, GoalStatus, GripperGoal, JointState, Payload, TrajectoryGoal,
    TransitionEvent,
};
use crate::context::{Endpoint, EndpointId, Entity, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::handles::controllers::{ControllerSpec, Registry, State};
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared::{self as common, Scope};

/// FollowJointTrajectory result codes (control_msgs/action/FollowJointTrajectory).
pub mod codes {
    /// Success.
    pub const SUCCESSFUL: i32 = 0;
    /// A malformed goal (or one the controller refuses in its state).
    pub const INVALID_GOAL: i32 = -1;
    /// A joint name the controller does not command.
    pub const INVALID_JOINTS: i32 = -2;
    /// A stale header.
    pub const OLD_HEADER_TIMESTAMP: i32 = -3;
    /// Path tolerance violated.
    pub const PATH_TOLERANCE_VIOLATED: i32 = -4;
    /// The joints did not end within the goal tolerance.
    pub const GOAL_TOLERANCE_VIOLATED: i32 = -5;
}

/// ros2_control type name of the trajectory controller this plugin serves.
pub const JTC_TYPE: &str = "joint_trajectory_controller/JointTrajectoryController";
/// ros2_control type name of the gripper controller.
pub const GRIPPER_TYPE: &str = "position_controllers/GripperActionController";
/// ros2_control type name of the joint-state broadcaster.
pub const JSB_TYPE: &str = "joint_state_broadcaster/JointStateBroadcaster";
/// Name of the broadcaster it declares.
pub const JSB_NAME: &str = "joint_state_broadcaster";
/// Default goal tolerance (rad): loose on purpose, it catches an arm that never arrived.
pub const DEFAULT_GOAL_TOLERANCE: f64 = 0.5;

/// Endpoint roles (keys of `topics:`).
pub const ROLES: [&str; 6] = [
    "joint_states",
    "follow_joint_trajectory",
    "joint_trajectory",
    "joint_velocity",
    "gripper_cmd",
    "transition_event",
];

/// Blackboard key of an arm's handle.
pub fn arm_key(entity: &str) -> String {
    format!("arm:{entity}")
}
/// Blackboard key of an arm's gripper reader.
pub fn gripper_key(entity: &str) -> String {
    format!("gripper:{entity}")
}
/// Blackboard key of an arm's gripper effort.
pub fn gripper_effort_key(entity: &str) -> String {
    format!("gripper_effort:{entity}")
}
fn writers_key(entity: &str) -> String {
    format!("arm_writers:{entity}")
}

/// `goal_tolerance:` — one value for every joint, or per joint.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Tolerance {
    /// rad (or m) for every joint; 0 disables the check.
    Scalar(f64),
    /// `{joint: rad}`; joints not listed get the default 0.5; 0 disables.
    PerJoint(BTreeMap<String, f64>),
}

fn d_controller() -> String {
    "arm_controller".into()
}
fn d_gripper_controller() -> String {
    "gripper_controller".into()
}
fn d_gtt() -> f64 {
    1.0
}
fn d_svt() -> f64 {
    0.01
}
fn d_monitor() -> f64 {
    20.0
}
fn d_vto() -> f64 {
    0.5
}
fn d_gctrl() -> f64 {
    255.0
}
fn d_rate() -> f64 {
    100.0
}
fn d_ggt() -> f64 {
    0.01
}
fn d_stall_v() -> f64 {
    0.001
}
fn d_stall_t() -> f64 {
    1.0
}
/// Config of `arm_controller` (a component of the entry that spawns the arm).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArmControllerConfig {
    /// The joints this controller owns (model names). Omitted: every joint actuator sharing the
    /// entity's prefix (its subtree when the prefix is empty), in model order.
    #[serde(default)]
    pub joints: Option<Vec<String>>,
    /// The gripper's actuator (by ACTUATOR name). Required WITH `joints:` for a gripper; omitted
    /// without `joints:`, the one non-joint (tendon) actuator of the arm is the gripper.
    #[serde(default)]
    pub gripper_actuator: Option<String>,
    /// Prefix of every joint name this controller reports and accepts. Default "".
    #[serde(default)]
    pub joint_prefix: String,
    /// Transport scope. Default: the owning entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Topic per endpoint role (`joint_states: /joint_states` hardwires it).
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
    /// Trajectory controller name: the action is `<controller_name>/follow_joint_trajectory`.
    /// Default `arm_controller`.
    #[serde(default = "d_controller")]
    pub controller_name: String,
    /// Lifecycle state the trajectory controller starts (and restarts on reset) in:
    /// `unloaded` (loaded later by `spawner`), `inactive` (as after `spawner --inactive`) or
    /// `active` (as after `spawner`). Default: the world's `sim.controllers.initial_state`
    /// (itself `unloaded` by default, as ros2_control starts every controller).
    #[serde(default)]
    pub initial_state: Option<String>,
    /// The same for the gripper controller. Default: the world's.
    #[serde(default)]
    pub gripper_initial_state: Option<String>,
    /// The same for `joint_state_broadcaster`, which publishes `joint_states` only while active
    /// (as ros2_control's broadcaster does). Default: the world's.
    #[serde(default)]
    pub broadcaster_initial_state: Option<String>,
    /// rad the joints may end from the last waypoint (scalar, or `{joint: rad}`); 0 disables.
    /// Default 0.5.
    #[serde(default)]
    pub goal_tolerance: Option<Tolerance>,
    /// s the joints get after the last waypoint to reach it. Default 1.0.
    #[serde(default = "d_gtt")]
    pub goal_time_tolerance: f64,
    /// rad/s below which a joint counts as stopped at the goal. Default 0.01.
    #[serde(default = "d_svt")]
    pub stopped_velocity_tolerance: f64,
    /// Feedback rate of a running goal (Hz). Default 20.
    #[serde(default = "d_monitor")]
    pub action_monitor_rate: f64,
    /// Also accept `<controller_name>/joint_trajectory` (a streamed trajectory, no result).
    #[serde(default)]
    pub stream_commands: bool,
    /// Also accept joint velocities at `<controller_name>/joint_velocity`, integrated into the
    /// held target (target += qd·dt, clamped to the joint range).
    #[serde(default)]
    pub velocity_commands: bool,
    /// s: a velocity command not refreshed within this decays to zero. Default 0.5.
    #[serde(default = "d_vto")]
    pub velocity_timeout_s: f64,
    /// ctrl held on the gripper actuator at reset (clamped to its ctrlrange). Default 255.
    #[serde(default = "d_gctrl")]
    pub gripper_ctrl: f64,
    /// `{joint: angle}` spawn+hold stance: seeds the reset qpos AND the held target.
    #[serde(default)]
    pub rest: Option<BTreeMap<String, f64>>,
    /// A joint vector (this controller's joint order) held every tick while no goal runs.
    #[serde(default)]
    pub test_target: Option<Vec<f64>>,
    /// joint_states publish rate (Hz). Default 100.
    #[serde(default = "d_rate")]
    pub rate_hz: f64,
    /// Gripper controller name: the action is `<name>/gripper_cmd`. Default `gripper_controller`.
    #[serde(default = "d_gripper_controller")]
    pub gripper_controller_name: String,
    /// Joint whose position is the reported gripper position. Default: the gripper actuator's
    /// joint (or its tendon's first joint).
    #[serde(default)]
    pub gripper_joint: Option<String>,
    /// Position that maps to the open end of the actuator's ctrlrange. Default: ctrlrange low.
    #[serde(default)]
    pub gripper_open: Option<f64>,
    /// Position that maps to the closed end. Default: ctrlrange high.
    #[serde(default)]
    pub gripper_close: Option<f64>,
    /// Position error (gripper joint unit) under which a gripper goal is reached. Default 0.01.
    #[serde(default = "d_ggt")]
    pub gripper_goal_tolerance: f64,
    /// Mean speed (gripper joint unit/s) under which the gripper counts as not moving. Default 0.001.
    #[serde(default = "d_stall_v")]
    pub gripper_stall_velocity: f64,
    /// Window (s) over which the gripper's mean speed must stay below `gripper_stall_velocity`
    /// short of the goal for it to count as stalled. Default 1.0.
    #[serde(default = "d_stall_t")]
    pub gripper_stall_timeout: f64,
    /// A stalled grip (closed on an object) succeeds (true, default) or aborts (ros2_control's
    /// `allow_stalling: false`).
    #[serde(default = "crate::plugin::yes")]
    pub gripper_allow_stalling: bool,
}

impl ValidateConfig for ArmControllerConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if let Some(j) = &self.joints {
            if j.is_empty() {
                e.push(ConfigError::new(
                    "joints",
                    "is empty; omit it to claim the arm's joint actuators by prefix",
                ));
            }
            for (i, n) in j.iter().enumerate() {
                if n.trim().is_empty() {
                    e.push(ConfigError::new(format!("joints[{i}]"), "empty joint name"));
                } else if j[..i].contains(n) {
                    e.push(ConfigError::new(
                        format!("joints[{i}]"),
                        format!("`{n}` is listed twice"),
                    ));
                }
            }
        }
        if self.controller_name.trim().is_empty() {
            e.push(ConfigError::new(
                "controller_name",
                "is empty; the action is served at <controller_name>/follow_joint_trajectory",
            ));
        }
        if self.gripper_controller_name.trim().is_empty()
            || self.gripper_controller_name == self.controller_name
        {
            e.push(ConfigError::new(
                "gripper_controller_name",
                "must be a non-empty name distinct from controller_name",
            ));
        }
        for (key, v) in [
            ("initial_state", &self.initial_state),
            ("gripper_initial_state", &self.gripper_initial_state),
            ("broadcaster_initial_state", &self.broadcaster_initial_state),
        ] {
            if let Some(v) = v {
                if !matches!(v.as_str(), "unloaded" | "inactive" | "active") {
                    e.push(ConfigError::new(
                        key,
                        format!("`{v}`: one of unloaded, inactive, active"),
                    ));
                }
            }
        }
        match &self.goal_tolerance {
            Some(Tolerance::Scalar(v)) if !(v.is_finite() && *v >= 0.0) => {
                e.push(ConfigError::new(
                    "goal_tolerance",
                    format!("must be >= 0 (rad; 0 disables), got {v}"),
                ))
            }
            Some(Tolerance::PerJoint(m)) => {
                for (k, v) in m {
                    if !(v.is_finite() && *v >= 0.0) {
                        e.push(ConfigError::new(
                            format!("goal_tolerance.{k}"),
                            format!("must be >= 0 (rad; 0 disables), got {v}"),
                        ));
                    }
                }
            }
            _ => {}
        }
        for (k, v, strict) in [
            ("goal_time_tolerance", self.goal_time_tolerance, false),
            ("stopped_velocity_tolerance", self.stopped_velocity_tolerance, false),
            ("action_monitor_rate", self.action_monitor_rate, true),
            ("velocity_timeout_s", self.velocity_timeout_s, true),
            ("rate_hz", self.rate_hz, true),
            ("gripper_goal_tolerance", self.gripper_goal_tolerance, true),
            ("gripper_stall_velocity", self.gripper_stall_velocity, true),
            ("gripper_stall_timeout", self.gripper_stall_timeout, true),
        ] {
            if !(v.is_finite() && (v > 0.0 || (!strict && v == 0.0))) {
                e.push(ConfigError::new(
                    k,
                    format!("must be {} 0, got {v}", if strict { ">" } else { ">=" }),
                ));
            }
        }
        if !self.gripper_ctrl.is_finite() {
            e.push(ConfigError::new("gripper_ctrl", "must be finite"));
        }
        if let (Some(o), Some(c)) = (self.gripper_open, self.gripper_close) {
            if !(o.is_finite() && c.is_finite()) || o == c {
                e.push(ConfigError::new(
                    "gripper_close",
                    format!("gripper_open ({o}) and gripper_close ({c}) must be finite and differ"),
                ));
            }
        }
        if let Some(r) = &self.rest {
            for (k, v) in r {
                if !v.is_finite() {
                    e.push(ConfigError::new(
                        format!("rest.{k}"),
                        format!("must be finite, got {v}"),
                    ));
                }
            }
        }
        if let Some(t) = &self.test_target {
            if t.iter().any(|v| !v.is_finite()) {
                e.push(ConfigError::new("test_target", "must be finite"));
            }
        }
        e.extend(common::check_topics(&self.topics, &ROLES));
        e
    }
}

// ------------------------------------------------------------------------------------------
// the in-process handle
// ------------------------------------------------------------------------------------------

#[derive(Debug, Default)]
struct ArmShared {
    names: Vec<String>,
    positions: Vec<f64>,
    velocities: Vec<f64>,
    efforts: Vec<f64>,
    targets: Vec<f64>,
    pending_targets: Option<Vec<(String, f64)>>,
    pending_velocities: Option<Vec<(String, f64)>>,
}

/// Handle to one arm's controller (blackboard `arm:<entity>`): in-process consumers read the
/// joints and command targets or velocities (taken at the next step; a running goal is canceled).
#[derive(Debug, Clone, Default)]
pub struct ArmHandle(Rc<RefCell<ArmShared>>);

impl ArmHandle {
    /// Joint names (as reported, with `joint_prefix`), in controller order.
    pub fn names(&self) -> Vec<String> {
        self.0.borrow().names.clone()
    }
    /// Measured positions (rad | m) after the last step.
    pub fn positions(&self) -> Vec<f64> {
        self.0.borrow().positions.clone()
    }
    /// Measured velocities.
    pub fn velocities(&self) -> Vec<f64> {
        self.0.borrow().velocities.clone()
    }
    /// Joint efforts (qfrc_actuator + qfrc_gravcomp).
    pub fn efforts(&self) -> Vec<f64> {
        self.0.borrow().efforts.clone()
    }
    /// Held targets.
    pub fn targets(&self) -> Vec<f64> {
        self.0.borrow().targets.clone()
    }
    /// Hold `positions` for the named joints from the next step.
    pub fn set_targets(&self, names: &[&str], positions: &[f64]) {
        self.0.borrow_mut().pending_targets =
            Some(names.iter().map(|s| s.to_string()).zip(positions.iter().copied()).collect());
    }
    /// Integrate `velocities` (rad/s) into the named joints' targets (subject to the watchdog).
    pub fn set_velocities(&self, names: &[&str], velocities: &[f64]) {
        self.0.borrow_mut().pending_velocities =
            Some(names.iter().map(|s| s.to_string()).zip(velocities.iter().copied()).collect());
    }
}

/// The gripper as a reader sees it (blackboard `gripper:<entity>`): `(position, velocity)` of the
/// gripper joint; `gripper_effort:<entity>` holds its effort (joint unit: N for a slide jaw).
#[derive(Debug, Clone, Default)]
pub struct GripperReader(Rc<RefCell<(f64, f64, f64)>>);

impl GripperReader {
    /// `(position, velocity)` of the gripper joint.
    pub fn read(&self) -> (f64, f64) {
        let s = self.0.borrow();
        (s.0, s.1)
    }
    /// The gripper joint's effort (its own unit).
    pub fn effort(&self) -> f64 {
        self.0.borrow().2
    }
}

// ------------------------------------------------------------------------------------------
// trajectories
// ------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Knot {
    t: f64,
    q: f64,
    v: Option<f64>,
    a: Option<f64>,
}

/// Position and velocity at `t` on one joint's knots (clamped to the first/last).
fn sample(k: &[Knot], t: f64) -> (f64, f64) {
    if t <= k[0].t {
        return (k[0].q, 0.0);
    }
    let last = k.last().expect("non-empty");
    if t >= last.t {
        return (last.q, 0.0);
    }
    let i = k.windows(2).position(|w| t < w[1].t).expect("inside");
    let (a, b) = (&k[i], &k[i + 1]);
    let h = b.t - a.t;
    if h <= 1e-12 {
        return (b.q, 0.0);
    }
    let s = t - a.t;
    match (a.v, b.v, a.a, b.a) {
        (Some(v0), Some(v1), Some(a0), Some(a1)) => {
            // Quintic through (q, v, a) at both ends.
            let (q0, q1) = (a.q, b.q);
            let c0 = q0;
            let c1 = v0;
            let c2 = a0 / 2.0;
            let h2 = h * h;
            let h3 = h2 * h;
            let c3 =
                (20.0 * (q1 - q0) - (8.0 * v1 + 12.0 * v0) * h - (3.0 * a0 - a1) * h2) / (2.0 * h3);
            let c4 = (30.0 * (q0 - q1) + (14.0 * v1 + 16.0 * v0) * h + (3.0 * a0 - 2.0 * a1) * h2)
                / (2.0 * h3 * h);
            let c5 = (12.0 * (q1 - q0) - 6.0 * (v1 + v0) * h - (a0 - a1) * h2) / (2.0 * h3 * h2);
            let q = c0 + s * (c1 + s * (c2 + s * (c3 + s * (c4 + s * c5))));
            let v = c1 + s * (2.0 * c2 + s * (3.0 * c3 + s * (4.0 * c4 + s * 5.0 * c5)));
            (q, v)
        }
        (Some(v0), Some(v1), _, _) => {
            // Cubic Hermite.
            let u = s / h;
            let (h00, h10, h01, h11) = (
                2.0 * u * u * u - 3.0 * u * u + 1.0,
                u * u * u - 2.0 * u * u + u,
                -2.0 * u * u * u + 3.0 * u * u,
                u * u * u - u * u,
            );
            let q = h00 * a.q + h10 * h * v0 + h01 * b.q + h11 * h * v1;
            let (d00, d10, d01, d11) = (
                6.0 * u * u - 6.0 * u,
                3.0 * u * u - 4.0 * u + 1.0,
                -6.0 * u * u + 6.0 * u,
                3.0 * u * u - 2.0 * u,
            );
            let v = (d00 * a.q + d01 * b.q) / h + d10 * v0 + d11 * v1;
            (q, v)
        }
        _ => {
            let u = s / h;
            (a.q + u * (b.q - a.q), (b.q - a.q) / h)
        }
    }
}

struct Exec {
    call: Option<ActionCall>,
    /// Our joint index → knots (joints the goal does not name hold their target).
    knots: Vec<(usize, Vec<Knot>)>,
    start: f64,
    t_last: f64,
    tol: Vec<(usize, Option<f64>)>,
    vel_tol: Vec<(usize, f64)>,
    time_tol: f64,
    last_feedback: f64,
}

struct GripExec {
    call: ActionCall,
    target: f64,
    /// (sim time, position) samples over the last `gripper_stall_timeout`.
    window: std::collections::VecDeque<(f64, f64)>,
}

struct Joint {
    /// Reported name (`joint_prefix` + model name).
    name: String,
    qpos: usize,
    dof: usize,
    ctrl: usize,
    range: Option<[f64; 2]>,
}

struct Gripper {
    act: usize,
    ctrl: usize,
    lo: f64,
    hi: f64,
    open: f64,
    close: f64,
    joint: common::JointRef,
    /// Reported joint name.
    name: String,
    moment: Option<f64>,
    own_force: [f64; 2],
    own_limited: bool,
    exec: Option<GripExec>,
    target_ctrl: f64,
}

/// The `arm_controller` plugin.
pub struct ArmController {
    cfg: ArmControllerConfig,
    address: String,
    owner: Option<String>,
    entity: String,
    joints: Vec<Joint>,
    targets: Vec<f64>,
    gripper: Option<Gripper>,
    /// The gripper's derived command mapping `(actuator, text, origin)`, for the actuator table.
    gripper_map: Option<(String, String, crate::spawn::actuators::Origin)>,
    exec: Option<Exec>,
    vel: Option<(Vec<f64>, f64)>,
    registry: Registry,
    jtc_was_active: bool,
    grip_was_active: bool,
    controllers: Vec<(String, usize, EndpointId)>,
    ep_states: EndpointId,
    ep_follow: EndpointId,
    ep_stream: Option<EndpointId>,
    ep_vel: Option<EndpointId>,
    ep_grip: Option<EndpointId>,
    handle: ArmHandle,
    reader: GripperReader,
    rest: Vec<(usize, usize, f64)>,
    monitor_dt: f64,
}

impl ArmController {
    /// Construct from config.
    pub fn new(cfg: ArmControllerConfig, args: &PluginArgs) -> Self {
        ArmController {
            cfg,
            address: args.address.clone(),
            owner: args.owner.clone(),
            entity: String::new(),
            joints: Vec::new(),
            targets: Vec::new(),
            gripper: None,
            gripper_map: None,
            exec: None,
            vel: None,
            registry: Registry::default(),
            jtc_was_active: true,
            grip_was_active: true,
            controllers: Vec::new(),
            ep_states: 0,
            ep_follow: 0,
            ep_stream: None,
            ep_vel: None,
            ep_grip: None,
            handle: ArmHandle::default(),
            reader: GripperReader::default(),
            rest: Vec::new(),
            monitor_dt: 0.05,
        }
    }

    /// Reported joint names, in controller order.
    pub fn joint_names(&self) -> Vec<String> {
        self.joints.iter().map(|j| j.name.clone()).collect()
    }
}

/// The descriptor (refused at the top of a document: `requires_owner`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "arm_controller",
        "Joint-position hold for an arm: FollowJointTrajectory and GripperCommand on the physics thread, controller registry entries, joint_states.",
        ArmControllerConfig,
        ArmController
    )
    .requires_owner()
}

fn outcome(status: GoalStatus, code: i32, msg: impl Into<String>) -> ActionOutcome {
    ActionOutcome { status, error_code: code, error_string: msg.into(), result: None }
}

fn is_joint_trn(t: mjtTrn) -> bool {
    t == mjtTrn::mjTRN_JOINT || t == mjtTrn::mjTRN_JOINTINPARENT
}

impl ArmController {
    fn resolve(&mut self, ctx: &mut SimContext, entity: &Entity) -> Result<(), String> {
        let model = ctx.model();
        let roots = common::entity_roots(model, entity)?;
        let nu = model.ffi().nu as usize;
        let prefix = &entity.prefix;
        let on_entity = |a: usize| -> bool {
            if prefix.is_empty() {
                match common::actuator_joint(model, a) {
                    Some(j) => common::in_entity(model, model.jnt_bodyid()[j] as usize, &roots),
                    None => {
                        model.actuator_trntype()[a] == mjtTrn::mjTRN_TENDON
                            && tendon_on(model, model.actuator_trnid()[a][0] as usize, &roots)
                    }
                }
            } else {
                model
                    .id_to_name(MjtObjBase::mjOBJ_ACTUATOR, a)
                    .is_some_and(|n| n.starts_with(prefix.as_str()))
            }
        };
        // Gripper.
        let grip_act = match (&self.cfg.gripper_actuator, &self.cfg.joints) {
            (Some(g), _) => Some(common::resolve_actuator(model, entity, "gripper_actuator", g)?),
            (None, Some(_)) => None,
            (None, None) => {
                let cands: Vec<usize> = (0..nu)
                    .filter(|&a| on_entity(a) && !is_joint_trn(model.actuator_trntype()[a]))
                    .collect();
                match cands.len() {
                    0 => None,
                    1 => Some(cands[0]),
                    _ => {
                        return Err(format!(
                            "gripper_actuator: entity `{}` has several non-joint actuators ([{}]); name the gripper's",
                            entity.name,
                            cands.iter().map(|&a| common::unprefixed(model.id_to_name(MjtObjBase::mjOBJ_ACTUATOR, a).unwrap_or("?"), prefix).to_string()).collect::<Vec<_>>().join(", ")
                        ))
                    }
                }
            }
        };
        // Arm joints and their actuators.
        let mut pairs: Vec<(usize, usize)> = Vec::new(); // (joint, actuator)
        match &self.cfg.joints {
            Some(names) => {
                for (i, n) in names.iter().enumerate() {
                    let key = format!("joints[{i}]");
                    let j = common::resolve_joint(model, entity, &key, n)?;
                    let a = (0..nu).find(|&a| common::actuator_joint(model, a) == Some(j) && Some(a) != grip_act).ok_or_else(|| {
                        format!("{key}: no actuator drives joint `{n}`, so this controller cannot hold it; list only actuated joints")
                    })?;
                    pairs.push((j, a));
                }
            }
            None => {
                for a in 0..nu {
                    if Some(a) == grip_act || !on_entity(a) {
                        continue;
                    }
                    if let Some(j) = common::actuator_joint(model, a) {
                        if matches!(
                            model.jnt_type()[j],
                            mjtJoint::mjJNT_HINGE | mjtJoint::mjJNT_SLIDE
                        ) {
                            pairs.push((j, a));
                        }
                    }
                }
                pairs.sort_by_key(|(j, _)| *j);
                if pairs.is_empty() {
                    return Err(format!("entity `{}` has no joint actuator sharing its prefix `{prefix}`; name the `joints:`", entity.name));
                }
            }
        }
        for &(j, a) in &pairs {
            if !common::is_position_servo(model, a) {
                let an = common::unprefixed(
                    model.id_to_name(MjtObjBase::mjOBJ_ACTUATOR, a).unwrap_or("?"),
                    prefix,
                )
                .to_string();
                let jn = common::unprefixed(
                    model.id_to_name(MjtObjBase::mjOBJ_JOINT, j).unwrap_or("?"),
                    prefix,
                )
                .to_string();
                return Err(format!(
                    "actuator `{an}` (joint `{jn}`) is not a position servo, so the position targets this controller writes would not mean positions there; \
                     {} (an arm under `control: effort` or `velocity` is commanded by another controller)",
                    if self.cfg.joints.is_none() { "name this arm's `joints:` so the prefix scan does not claim it" } else { "drop it from `joints:`" }
                ));
            }
        }
        // One writer per actuator.
        let mut acts: Vec<usize> = pairs.iter().map(|p| p.1).collect();
        if let Some(g) = grip_act {
            acts.push(g);
        }
        let wk = writers_key(&entity.name);
        let mut writers: BTreeMap<usize, String> =
            ctx.blackboard.get::<BTreeMap<usize, String>>(&wk).cloned().unwrap_or_default();
        for a in &acts {
            if let Some(w) = writers.get(a) {
                let an = common::unprefixed(
                    ctx.model().id_to_name(MjtObjBase::mjOBJ_ACTUATOR, *a).unwrap_or("?"),
                    prefix,
                )
                .to_string();
                return Err(format!(
                    "actuator `{an}` of `{}` is already written by `{w}`; `{}` would be a second command source for it — one writer per arm: keep one controller (give yours the manifest's label to override it), or give them disjoint `joints:`",
                    entity.name, self.address
                ));
            }
        }
        for a in &acts {
            writers.insert(*a, self.address.clone());
        }
        ctx.blackboard.set(wk, writers);
        let model = ctx.model();
        self.joints = pairs
            .iter()
            .map(|&(j, a)| {
                let n = common::unprefixed(
                    model.id_to_name(MjtObjBase::mjOBJ_JOINT, j).unwrap_or(""),
                    prefix,
                )
                .to_string();
                Joint {
                    name: format!("{}{n}", self.cfg.joint_prefix),
                    qpos: model.jnt_qposadr()[j] as usize,
                    dof: model.jnt_dofadr()[j] as usize,
                    ctrl: model.actuator_ctrladr()[a] as usize,
                    range: model.jnt_limited()[j].then(|| model.jnt_range()[j]),
                }
            })
            .collect();
        // Gripper details.
        if let Some(g) = grip_act {
            let gname = common::unprefixed(
                model.id_to_name(MjtObjBase::mjOBJ_ACTUATOR, g).unwrap_or("?"),
                prefix,
            )
            .to_string();
            let ctrl = model.actuator_ctrladr()[g] as usize;
            if !model.actuator_ctrllimited()[ctrl] {
                return Err(format!("gripper_actuator: `{gname}` has no ctrlrange, so there is nothing to map gripper_open/gripper_close onto; give the actuator a ctrlrange"));
            }
            let [lo, hi] = model.actuator_ctrlrange()[ctrl];
            let jid = match &self.cfg.gripper_joint {
                Some(n) => common::resolve_joint(model, entity, "gripper_joint", n)?,
                None => match model.actuator_trntype()[g] {
                    t if is_joint_trn(t) => model.actuator_trnid()[g][0] as usize,
                    mjtTrn::mjTRN_TENDON => first_tendon_joint(model, model.actuator_trnid()[g][0] as usize)
                        .ok_or_else(|| format!("gripper_joint: `{gname}`'s tendon has no joint to report; name the gripper_joint"))?,
                    _ => return Err(format!("gripper_joint: cannot infer the joint `{gname}` moves; name the gripper_joint")),
                },
            };
            let moment = transmission_moment(model, g, jid);
            let jr = common::JointRef::new(model, entity, jid);
            let name = format!("{}{}", self.cfg.joint_prefix, jr.name);
            // GripperCommand positions are the gripper JOINT's (control_msgs): the ends of the
            // ctrlrange map onto the joint positions the servo settles at, derived from the model
            // unless the config states them.
            let derived = servo_joint_position(model, g, jid, lo)
                .zip(servo_joint_position(model, g, jid, hi));
            let (open, close, origin) = match (
                self.cfg.gripper_open,
                self.cfg.gripper_close,
                derived,
            ) {
                (Some(o), Some(c), _) => (o, c, crate::spawn::actuators::Origin::World),
                (o, c, Some((dl, dh))) => (
                    o.unwrap_or(dl),
                    c.unwrap_or(dh),
                    if o.is_some() || c.is_some() {
                        crate::spawn::actuators::Origin::World
                    } else {
                        crate::spawn::actuators::Origin::Model
                    },
                ),
                (o, c, None) => {
                    if o.is_none() || c.is_none() {
                        return Err(format!(
                            "gripper_open: `{gname}` is not a position servo on a joint or fixed tendon, so its ctrl cannot be mapped onto the gripper joint's position from the model; state gripper_open and gripper_close (the joint positions at ctrl {lo} and {hi})"
                        ));
                    }
                    (o.unwrap_or(lo), c.unwrap_or(hi), crate::spawn::actuators::Origin::World)
                }
            };
            let unit = if model.jnt_type()[jid] == mjtJoint::mjJNT_SLIDE { "m" } else { "rad" };
            let map_text = format!(
                "gripper position {open:.6} .. {close:.6} {unit} ({}) -> ctrl {lo} .. {hi}",
                jr.name
            );
            self.gripper_map = Some((gname.clone(), map_text, origin));
            self.gripper = Some(Gripper {
                act: g,
                ctrl,
                lo,
                hi,
                open,
                close,
                joint: jr,
                name,
                moment,
                own_force: model.actuator_forcerange()[g],
                own_limited: model.actuator_forcelimited()[g],
                exec: None,
                target_ctrl: self.cfg.gripper_ctrl.clamp(lo, hi),
            });
        } else if self.cfg.gripper_joint.is_some()
            || self.cfg.gripper_open.is_some()
            || self.cfg.gripper_close.is_some()
        {
            return Err(if self.cfg.joints.is_some() {
                "gripper_joint: gripper keys are set but no gripper_actuator is named; with `joints:` the gripper is declared only by `gripper_actuator:`".to_string()
            } else {
                format!("gripper_joint: gripper keys are set but entity `{}` has no gripper (non-joint) actuator; name the `gripper_actuator:`", entity.name)
            });
        }
        // rest: by joint name (of this controller's joints or the gripper joint).
        if let Some(rest) = &self.cfg.rest {
            for (n, &q) in rest {
                let key = format!("rest.{n}");
                let j = common::resolve_joint(model, entity, &key, n)?;
                let idx = pairs.iter().position(|p| p.0 == j).ok_or_else(|| {
                    format!(
                        "{key}: joint `{n}` is not one of this controller's joints [{}]",
                        self.joints.iter().map(|j| j.name.as_str()).collect::<Vec<_>>().join(", ")
                    )
                })?;
                self.rest.push((idx, model.jnt_qposadr()[j] as usize, q));
            }
        }
        if let Some(t) = &self.cfg.test_target {
            if t.len() != self.joints.len() {
                return Err(format!(
                    "test_target: {} values for {} joints ({})",
                    t.len(),
                    self.joints.len(),
                    self.joint_names().join(", ")
                ));
            }
        }
        Ok(())
    }

    fn measured(&self, ctx: &SimContext) -> Vec<f64> {
        let q = ctx.data().qpos();
        self.joints.iter().map(|j| q[j.qpos]).collect()
    }

    fn hold_measured(&mut self, ctx: &SimContext) {
        self.targets = self.measured(ctx);
    }

    fn finish(&mut self, out: ActionOutcome) {
        if let Some(ex) = self.exec.take() {
            if let Some(c) = ex.call {
                let _ = c.outcome.send(out);
            }
        }
    }

    fn tolerance_for(&self, name: &str, goal: &TrajectoryGoal) -> Option<f64> {
        if let Some(t) = goal.goal_tolerance.iter().find(|t| t.name == name) {
            if t.position > 0.0 {
                return Some(t.position);
            }
            if t.position < 0.0 {
                return None;
            }
        }
        let model_name = name.strip_prefix(&self.cfg.joint_prefix).unwrap_or(name);
        let v = match &self.cfg.goal_tolerance {
            Some(Tolerance::Scalar(v)) => *v,
            Some(Tolerance::PerJoint(m)) => {
                m.get(model_name).or_else(|| m.get(name)).copied().unwrap_or(DEFAULT_GOAL_TOLERANCE)
            }
            None => DEFAULT_GOAL_TOLERANCE,
        };
        (v > 0.0).then_some(v)
    }

    /// Validate a trajectory and build its execution. Err = (code, message).
    fn plan(
        &self,
        ctx: &SimContext,
        goal: &TrajectoryGoal,
        call: Option<ActionCall>,
    ) -> Result<Exec, (i32, String)> {
        let mine: Vec<&str> = self.joints.iter().map(|j| j.name.as_str()).collect();
        if goal.joint_names.is_empty() {
            return Err((codes::INVALID_JOINTS, "the trajectory names no joints".into()));
        }
        let mut idx = Vec::new();
        for (k, n) in goal.joint_names.iter().enumerate() {
            let Some(i) = mine.iter().position(|m| m == n) else {
                return Err((
                    codes::INVALID_JOINTS,
                    format!(
                        "joint `{n}` is not commanded by controller `{}`; its joints: [{}]",
                        self.cfg.controller_name,
                        mine.join(", ")
                    ),
                ));
            };
            if goal.joint_names[..k].contains(n) {
                return Err((codes::INVALID_JOINTS, format!("joint `{n}` is named twice")));
            }
            idx.push(i);
        }
        if goal.points.is_empty() {
            return Err((codes::INVALID_GOAL, "the trajectory has no points".into()));
        }
        let nj = goal.joint_names.len();
        let mut prev = -1.0;
        for (p, pt) in goal.points.iter().enumerate() {
            if pt.positions.len() != nj {
                return Err((codes::INVALID_GOAL, format!("point {p} has {} positions for {nj} joints (a position controller needs positions)", pt.positions.len())));
            }
            if !(pt.velocities.is_empty() || pt.velocities.len() == nj)
                || !(pt.accelerations.is_empty() || pt.accelerations.len() == nj)
            {
                return Err((
                    codes::INVALID_GOAL,
                    format!("point {p}: velocities/accelerations must be empty or one per joint"),
                ));
            }
            if pt
                .positions
                .iter()
                .chain(&pt.velocities)
                .chain(&pt.accelerations)
                .any(|v| !v.is_finite())
                || !pt.time_from_start.is_finite()
            {
                return Err((codes::INVALID_GOAL, format!("point {p} has a non-finite value")));
            }
            if pt.time_from_start < 0.0 || pt.time_from_start <= prev {
                return Err((
                    codes::INVALID_GOAL,
                    format!(
                        "point {p}: time_from_start {} s is not after the previous point's",
                        pt.time_from_start
                    ),
                ));
            }
            prev = pt.time_from_start;
        }
        let q = ctx.data().qpos();
        let v = ctx.data().qvel();
        let all_vel = goal.points.iter().all(|p| !p.velocities.is_empty());
        let all_acc = all_vel && goal.points.iter().all(|p| !p.accelerations.is_empty());
        let knots = idx
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let j = &self.joints[i];
                let mut ks = vec![Knot {
                    t: 0.0,
                    q: q[j.qpos],
                    v: all_vel.then_some(v[j.dof]),
                    a: all_acc.then_some(0.0),
                }];
                for pt in &goal.points {
                    ks.push(Knot {
                        t: pt.time_from_start,
                        q: pt.positions[k],
                        v: all_vel.then(|| pt.velocities[k]),
                        a: all_acc.then(|| pt.accelerations[k]),
                    });
                }
                (i, ks)
            })
            .collect();
        let tol =
            idx.iter().map(|&i| (i, self.tolerance_for(&self.joints[i].name, goal))).collect();
        let vel_tol = idx
            .iter()
            .map(|&i| {
                let t = goal
                    .goal_tolerance
                    .iter()
                    .find(|t| t.name == self.joints[i].name)
                    .map(|t| t.velocity)
                    .unwrap_or(0.0);
                (
                    i,
                    if t > 0.0 {
                        t
                    } else if t < 0.0 {
                        f64::INFINITY
                    } else {
                        self.cfg.stopped_velocity_tolerance.max(1e-12)
                    },
                )
            })
            .collect();
        let time_tol = if goal.goal_time_tolerance > 0.0 {
            goal.goal_time_tolerance
        } else {
            self.cfg.goal_time_tolerance
        };
        let now = ctx.sim_time();
        Ok(Exec {
            call,
            knots,
            start: now,
            t_last: prev,
            tol,
            vel_tol,
            time_tol,
            last_feedback: f64::NEG_INFINITY,
        })
    }

    fn accept(&mut self, ctx: &SimContext, goal: &TrajectoryGoal, call: Option<ActionCall>) {
        match self.plan(ctx, goal, call.clone()) {
            Ok(ex) => {
                self.finish(outcome(
                    GoalStatus::Canceled,
                    codes::SUCCESSFUL,
                    "preempted by a newer trajectory",
                ));
                self.vel = None;
                self.exec = Some(ex);
            }
            Err((code, msg)) => {
                if let Some(c) = call {
                    let _ = c.outcome.send(outcome(GoalStatus::Aborted, code, msg));
                } else {
                    tracing::warn!("[{}] streamed trajectory refused: {msg}", self.address);
                }
            }
        }
    }

    fn refuse(&self, call: &ActionCall, controller: &str) {
        let st = self.registry.state(controller).map(|s| s.label()).unwrap_or("unloaded");
        let _ = call.outcome.send(outcome(
            GoalStatus::Aborted,
            codes::INVALID_GOAL,
            format!("controller `{controller}` is {st}: goals are refused until it is activated (switch_controller activate_controllers: [{controller}])"),
        ));
    }

    fn gripper_ctrl_for(g: &Gripper, pos: f64) -> f64 {
        let u = (pos - g.open) / (g.close - g.open);
        (g.lo + u * (g.hi - g.lo)).clamp(g.lo.min(g.hi), g.hi.max(g.lo))
    }

    fn set_gripper_force(ctx: &mut SimContext, g: &Gripper, limit: Option<f64>) {
        let (range, limited) = match limit {
            Some(l) => {
                let own =
                    if g.own_limited { g.own_force[1].min(-g.own_force[0]) } else { f64::INFINITY };
                let l = l.min(own);
                ([-l, l], true)
            }
            None => (g.own_force, g.own_limited),
        };
        // The model's own values are restored on reset (model_override's contract: put back
        // exactly what was found).
        ctx.model_writer().actuator_force_limit(g.act, range, limited);
    }

    fn write_ctrl(&self, ctx: &mut SimContext) {
        let d = ctx.data_mut();
        let ctrl = d.ctrl_mut();
        for (j, t) in self.joints.iter().zip(&self.targets) {
            ctrl[j.ctrl] = *t;
        }
        if let Some(g) = &self.gripper {
            ctrl[g.ctrl] = g.target_ctrl;
        }
    }

    fn publish_transitions(&mut self, ctx: &mut SimContext) {
        let tick = ctx.tick;
        for (name, cursor, ep) in &mut self.controllers {
            let ts = self.registry.transitions_since(name, cursor);
            if !ts.is_empty() {
                let ev = ts.iter().flat_map(lifecycle_events).collect();
                ctx.interface.publish(*ep, tick, Payload::TransitionEvents(ev));
            }
        }
    }
}

/// The two `TransitionEvent`s rclcpp_lifecycle publishes for one transition: into its transition
/// state (`configure`: unconfigured → configuring), then out of it on success
/// (`transition_success`: configuring → inactive), with lifecycle_msgs' ids.
fn lifecycle_events(t: &crate::handles::controllers::Transition) -> [TransitionEvent; 2] {
    // (transition state id, label, on-success transition id)
    let (mid_id, mid, success) = match t.id {
        1 => (10, "configuring", 10),
        2 => (11, "cleaningup", 20),
        3 => (13, "activating", 30),
        4 => (14, "deactivating", 40),
        _ => (12, "shuttingdown", 50),
    };
    [
        TransitionEvent {
            stamp: t.stamp,
            transition_id: t.id,
            transition_label: t.label.to_string(),
            start_id: t.start.id(),
            start_label: t.start.label().to_string(),
            goal_id: mid_id,
            goal_label: mid.to_string(),
        },
        TransitionEvent {
            stamp: t.stamp,
            transition_id: success,
            transition_label: "transition_success".to_string(),
            start_id: mid_id,
            start_label: mid.to_string(),
            goal_id: t.goal.id(),
            goal_label: t.goal.label().to_string(),
        },
    ]
}

fn tendon_on(model: &MjModel, t: usize, roots: &[usize]) -> bool {
    first_tendon_joint(model, t)
        .is_some_and(|j| common::in_entity(model, model.jnt_bodyid()[j] as usize, roots))
}

fn first_tendon_joint(model: &MjModel, t: usize) -> Option<usize> {
    let adr = model.tendon_adr()[t] as usize;
    let num = model.tendon_num()[t] as usize;
    (adr..adr + num)
        .find(|&w| model.wrap_type()[w] == mjtWrap::mjWRAP_JOINT)
        .map(|w| model.wrap_objid()[w] as usize)
}

/// Joint force on `joint` per unit actuator force, when the transmission makes it constant: a joint
/// transmission on that joint (gear), or a fixed tendon (gear × the joint's coefficient).
/// The position `joint` settles at when the gripper actuator `act` (a position-like servo: fixed
/// gain, affine bias with a stiffness term) holds `ctrl`: the actuator length where
/// `gain·ctrl + b0 + b1·length = 0`, divided by the transmission's moment summed over the joints
/// a fixed tendon couples (they move together: a parallel gripper's jaws, a linkage's drivers).
/// `None` for any other actuator or transmission.
fn servo_joint_position(model: &MjModel, act: usize, joint: usize, ctrl: f64) -> Option<f64> {
    use mujoco_rs::mujoco_c::{mjtBias, mjtGain};
    if model.actuator_gaintype()[act] != mjtGain::mjGAIN_FIXED
        || model.actuator_biastype()[act] != mjtBias::mjBIAS_AFFINE
    {
        return None;
    }
    let g = model.actuator_gainprm()[act];
    let b = model.actuator_biasprm()[act];
    if b[1] == 0.0 || g[0] == 0.0 {
        return None;
    }
    let length = -(g[0] * ctrl + b[0]) / b[1];
    let gear = model.actuator_gear()[model.actuator_outadr()[act] as usize][0];
    let t = model.actuator_trntype()[act];
    let per_unit = if is_joint_trn(t) {
        (model.actuator_trnid()[act][0] as usize == joint).then_some(gear)?
    } else if t == mjtTrn::mjTRN_TENDON {
        let ten = model.actuator_trnid()[act][0] as usize;
        let adr = model.tendon_adr()[ten] as usize;
        let num = model.tendon_num()[ten] as usize;
        if (adr..adr + num).any(|w| model.wrap_type()[w] != mjtWrap::mjWRAP_JOINT)
            || !(adr..adr + num).any(|w| model.wrap_objid()[w] as usize == joint)
        {
            return None;
        }
        gear * (adr..adr + num).map(|w| model.wrap_prm()[w]).sum::<f64>()
    } else {
        return None;
    };
    (per_unit != 0.0).then(|| length / per_unit)
}

fn transmission_moment(model: &MjModel, act: usize, joint: usize) -> Option<f64> {
    let gear = model.actuator_gear()[model.actuator_outadr()[act] as usize][0];
    let t = model.actuator_trntype()[act];
    if is_joint_trn(t) {
        return (model.actuator_trnid()[act][0] as usize == joint).then_some(gear);
    }
    if t == mjtTrn::mjTRN_TENDON {
        let ten = model.actuator_trnid()[act][0] as usize;
        let adr = model.tendon_adr()[ten] as usize;
        let num = model.tendon_num()[ten] as usize;
        if (adr..adr + num).any(|w| model.wrap_type()[w] != mjtWrap::mjWRAP_JOINT) {
            return None; // spatial tendon: the moment varies with the pose
        }
        return (adr..adr + num)
            .find(|&w| model.wrap_objid()[w] as usize == joint)
            .map(|w| gear * model.wrap_prm()[w]);
    }
    None
}

impl Plugin for ArmController {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::PRE_STEP | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let entity = common::owner_entity(ctx, "arm_controller", self.owner.as_deref())?;
        self.entity = entity.name.clone();
        self.resolve(ctx, &entity)?;
        // The gripper's command mapping goes into the entity's resolved actuator table.
        if let Some((act, text, origin)) = self.gripper_map.take() {
            let key = crate::spawn::actuators::table_key(&entity.name);
            if let Ok(t) = ctx.blackboard.get_mut::<crate::spawn::actuators::ActuatorTable>(&key) {
                if let Some(r) = t.rows.iter_mut().find(|r| r.actuator == act) {
                    r.command_map = Some((text, origin));
                }
            }
        }
        self.monitor_dt = 1.0 / self.cfg.action_monitor_rate;
        // Registry.
        let reg = Registry::of(ctx, &entity.name);
        let now = ctx.sim_time();
        let rate = (1.0 / ctx.dt).round() as u32;
        let cmd: Vec<String> = self.joints.iter().map(|j| format!("{}/position", j.name)).collect();
        let mut state_ifaces: Vec<String> = Vec::new();
        let mut names: Vec<String> = self.joint_names();
        if let Some(g) = &self.gripper {
            names.push(g.name.clone());
        }
        for n in &names {
            for k in ["position", "velocity", "effort"] {
                state_ifaces.push(format!("{n}/{k}"));
            }
        }
        let mut hw_cmd = cmd.clone();
        if let Some(g) = &self.gripper {
            hw_cmd.push(format!("{}/position", g.name));
        }
        reg.add_hardware(&hw_cmd, &state_ifaces);
        let world_default = ctx.run.controller_initial_state;
        let initial_of =
            |v: &Option<String>| v.as_deref().and_then(State::parse).unwrap_or(world_default);
        let initial = initial_of(&self.cfg.initial_state);
        let gripper_initial = initial_of(&self.cfg.gripper_initial_state);
        let broadcaster_initial = initial_of(&self.cfg.broadcaster_initial_state);
        let jtc_state: Vec<String> = self
            .joint_names()
            .iter()
            .flat_map(|n| [format!("{n}/position"), format!("{n}/velocity")])
            .collect();
        reg.declare(
            ControllerSpec {
                name: self.cfg.controller_name.clone(),
                type_name: JTC_TYPE.into(),
                command_interfaces: cmd,
                state_interfaces: jtc_state,
                update_rate: rate,
                initial_state: initial,
                owner: self.address.clone(),
            },
            now,
        )?;
        let mut ctl_names = vec![self.cfg.controller_name.clone()];
        if let Some(g) = &self.gripper {
            reg.declare(
                ControllerSpec {
                    name: self.cfg.gripper_controller_name.clone(),
                    type_name: GRIPPER_TYPE.into(),
                    command_interfaces: vec![format!("{}/position", g.name)],
                    state_interfaces: vec![
                        format!("{}/position", g.name),
                        format!("{}/velocity", g.name),
                    ],
                    update_rate: rate,
                    initial_state: gripper_initial,
                    owner: self.address.clone(),
                },
                now,
            )?;
            ctl_names.push(self.cfg.gripper_controller_name.clone());
        }
        if reg.state(JSB_NAME).is_none() && !reg.declared().iter().any(|n| n == JSB_NAME) {
            reg.declare(
                ControllerSpec {
                    name: JSB_NAME.into(),
                    type_name: JSB_TYPE.into(),
                    command_interfaces: vec![],
                    state_interfaces: state_ifaces.clone(),
                    update_rate: rate,
                    initial_state: broadcaster_initial,
                    owner: self.address.clone(),
                },
                now,
            )?;
            ctl_names.push(JSB_NAME.into());
        }
        self.registry = reg;
        // Endpoints.
        let scope = Scope::new(&entity, self.cfg.namespace.as_deref());
        let topics = &self.cfg.topics;
        let cn = self.cfg.controller_name.clone();
        let topic = |role: &str, default: String| topics.get(role).cloned().unwrap_or(default);
        let mk = |ep: Endpoint| {
            ep.owner(Some(&scope.owner))
                .namespace(&scope.namespace)
                .frame_prefix(&scope.frame_prefix)
        };
        self.ep_states = ctx.interface.add(mk(Endpoint::out("joint_states")
            .rate(self.cfg.rate_hz)
            .hint("ros2", "type", "sensor_msgs/msg/JointState")
            .hint("ros2", "qos", "reliable")
            .hint("ros2", "topic", topic("joint_states", "joint_states".into()))));
        self.ep_follow = ctx.interface.add(mk(Endpoint::input("follow_joint_trajectory")
            .hint("ros2", "action", "control_msgs/action/FollowJointTrajectory")
            .hint(
                "ros2",
                "topic",
                topic("follow_joint_trajectory", format!("{cn}/follow_joint_trajectory")),
            )
            .hint("ros2", "controller", cn.clone())));
        if self.cfg.stream_commands {
            self.ep_stream = Some(
                ctx.interface.add(mk(Endpoint::input("joint_trajectory")
                    .hint("ros2", "type", "trajectory_msgs/msg/JointTrajectory")
                    .hint(
                        "ros2",
                        "topic",
                        topic("joint_trajectory", format!("{cn}/joint_trajectory")),
                    ))),
            );
        }
        if self.cfg.velocity_commands {
            self.ep_vel = Some(
                ctx.interface.add(mk(Endpoint::input("joint_velocity")
                    .hint("ros2", "type", "sensor_msgs/msg/JointState")
                    .hint("ros2", "field", "velocity")
                    .hint(
                        "ros2",
                        "topic",
                        topic("joint_velocity", format!("{cn}/joint_velocity")),
                    ))),
            );
        }
        if self.gripper.is_some() {
            let gn = self.cfg.gripper_controller_name.clone();
            self.ep_grip = Some(
                ctx.interface.add(mk(Endpoint::input("gripper_cmd")
                    .hint("ros2", "action", "control_msgs/action/GripperCommand")
                    .hint("ros2", "topic", topic("gripper_cmd", format!("{gn}/gripper_cmd")))
                    .hint("ros2", "state_key", gripper_key(&entity.name))
                    .hint("ros2", "effort_key", gripper_effort_key(&entity.name))
                    .hint("ros2", "controller", gn))),
            );
        }
        for n in ctl_names {
            let ep = ctx.interface.add(mk(Endpoint::out("transition_event")
                .hint("ros2", "type", "lifecycle_msgs/msg/TransitionEvent")
                .hint("ros2", "qos", "reliable")
                .hint("ros2", "topic", format!("{n}/transition_event"))
                .hint("ros2", "controller", n.clone())));
            self.controllers.push((n, 0, ep));
        }
        // Handles.
        {
            let mut h = self.handle.0.borrow_mut();
            h.names = self.joint_names();
        }
        ctx.blackboard.set(arm_key(&entity.name), self.handle.clone());
        if self.gripper.is_some() {
            ctx.blackboard.set(gripper_key(&entity.name), self.reader.clone());
            ctx.blackboard.set(gripper_effort_key(&entity.name), self.reader.clone());
        }
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        let now = ctx.sim_time();
        self.finish(outcome(GoalStatus::Aborted, codes::INVALID_GOAL, "the simulation was reset"));
        if let Some(g) = &mut self.gripper {
            if let Some(ex) = g.exec.take() {
                let _ = ex.call.outcome.send(outcome(
                    GoalStatus::Aborted,
                    -1,
                    "the simulation was reset",
                ));
            }
        }
        self.vel = None;
        for (n, _, _) in &self.controllers {
            self.registry.restore(n, now);
        }
        self.jtc_was_active = self.registry.is_active(&self.cfg.controller_name);
        self.grip_was_active = self.registry.is_active(&self.cfg.gripper_controller_name);
        // rest: reset qpos and held target.
        {
            let d = ctx.data_mut();
            for &(_, adr, q) in &self.rest {
                d.qpos_mut()[adr] = q;
            }
        }
        if let Some(g) = &mut self.gripper {
            g.target_ctrl = self.cfg.gripper_ctrl.clamp(g.lo.min(g.hi), g.hi.max(g.lo));
        }
        if let Some(g) = &self.gripper {
            Self::set_gripper_force(ctx, g, None);
        }
        self.targets = self.measured(ctx);
        if let Some(t) = &self.cfg.test_target {
            self.targets = t.clone();
        }
        {
            let mut h = self.handle.0.borrow_mut();
            h.pending_targets = None;
            h.pending_velocities = None;
            h.targets = self.targets.clone();
        }
        self.write_ctrl(ctx);
        Ok(())
    }

    fn pre_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let now = ctx.sim_time();
        let jtc = self.cfg.controller_name.clone();
        let active = self.registry.is_active(&jtc);
        // A deactivation while running: hold where the joints are.
        if self.jtc_was_active && !active {
            self.hold_measured(ctx);
            self.finish(outcome(
                GoalStatus::Aborted,
                codes::INVALID_GOAL,
                format!(
                    "controller `{jtc}` was deactivated mid-goal; holding the measured position"
                ),
            ));
            self.vel = None;
        }
        self.jtc_was_active = active;
        // Trajectory goals.
        for p in ctx.interface.drain(self.ep_follow) {
            match p {
                Payload::Goal(call) => match call.goal.as_ref() {
                    Payload::Trajectory(goal) if active => {
                        let goal = goal.clone();
                        self.accept(ctx, &goal, Some(call));
                    }
                    Payload::Trajectory(_) => self.refuse(&call, &jtc),
                    other => {
                        let _ = call.outcome.send(outcome(
                            GoalStatus::Aborted,
                            codes::INVALID_GOAL,
                            format!(
                                "follow_joint_trajectory takes a Trajectory goal, not {}",
                                other.kind()
                            ),
                        ));
                    }
                },
                other => tracing::warn!(
                    "[{}] follow_joint_trajectory: ignored a {} payload (expected an action Goal)",
                    self.address,
                    other.kind()
                ),
            }
        }
        if let Some(id) = self.ep_stream {
            if let Some(p) = ctx.interface.take_latest(id) {
                match p {
                    Payload::Trajectory(goal) if active => self.accept(ctx, &goal, None),
                    Payload::Trajectory(_) => tracing::warn!(
                        "[{}] joint_trajectory ignored: controller `{jtc}` is not active",
                        self.address
                    ),
                    other => tracing::warn!(
                        "[{}] joint_trajectory: ignored a {} payload",
                        self.address,
                        other.kind()
                    ),
                }
            }
        }
        // Velocity commands (endpoint, then handle).
        let mut vcmd: Option<Vec<(String, f64)>> = None;
        if let Some(id) = self.ep_vel {
            if let Some(Payload::JointState(js)) = ctx.interface.take_latest(id) {
                let names = if js.name.is_empty() { self.joint_names() } else { js.name.clone() };
                vcmd = Some(names.into_iter().zip(js.velocity.iter().copied()).collect());
            }
        }
        let (pend_t, pend_v) = {
            let mut h = self.handle.0.borrow_mut();
            (h.pending_targets.take(), h.pending_velocities.take())
        };
        if pend_v.is_some() {
            vcmd = pend_v;
        }
        if let Some(v) = vcmd {
            if active {
                let mut qd = vec![0.0; self.joints.len()];
                for (n, x) in v {
                    match self.joints.iter().position(|j| j.name == n) {
                        Some(i) if x.is_finite() => qd[i] = x,
                        _ => tracing::warn!(
                            "[{}] joint_velocity: unknown joint `{n}` ignored",
                            self.address
                        ),
                    }
                }
                if self.exec.is_some() {
                    self.hold_measured(ctx);
                    self.finish(outcome(
                        GoalStatus::Canceled,
                        codes::SUCCESSFUL,
                        "preempted by a joint velocity command",
                    ));
                }
                self.vel = Some((qd, now));
            }
        }
        if let Some(t) = pend_t {
            if self.exec.is_some() {
                self.finish(outcome(
                    GoalStatus::Canceled,
                    codes::SUCCESSFUL,
                    "preempted by an in-process target",
                ));
            }
            for (n, x) in t {
                if let Some(i) = self.joints.iter().position(|j| j.name == n) {
                    self.targets[i] = x;
                }
            }
        }
        // Cancel.
        if let Some(ex) = &self.exec {
            if ex.call.as_ref().is_some_and(|c| c.cancel.load(Ordering::SeqCst)) {
                self.hold_measured(ctx);
                self.finish(outcome(
                    GoalStatus::Canceled,
                    codes::SUCCESSFUL,
                    "canceled by the caller; holding the measured position",
                ));
            }
        }
        // Targets from the running trajectory.
        if let Some(ex) = &self.exec {
            let t = now - ex.start;
            for (i, k) in &ex.knots {
                self.targets[*i] = sample(k, t).0;
            }
        } else if let Some((qd, stamp)) = &self.vel {
            if now - stamp <= self.cfg.velocity_timeout_s {
                for (i, j) in self.joints.iter().enumerate() {
                    let mut x = self.targets[i] + qd[i] * ctx.dt;
                    if let Some([lo, hi]) = j.range {
                        x = x.clamp(lo, hi);
                    }
                    self.targets[i] = x;
                }
            } else {
                self.vel = None;
            }
        } else if let Some(t) = &self.cfg.test_target {
            self.targets = t.clone();
        }
        // Gripper goals.
        let gname = self.cfg.gripper_controller_name.clone();
        let gactive = self.registry.is_active(&gname);
        if let (Some(id), Some(_)) = (self.ep_grip, &self.gripper) {
            let was = self.grip_was_active;
            self.grip_was_active = gactive;
            let g = self.gripper.as_mut().expect("checked");
            if was && !gactive {
                let pos = ctx.data().qpos()[g.joint.qpos];
                g.target_ctrl = Self::gripper_ctrl_for(g, pos);
                if let Some(ex) = g.exec.take() {
                    let _ = ex.call.outcome.send(outcome(
                        GoalStatus::Aborted,
                        -1,
                        format!("controller `{gname}` was deactivated mid-goal"),
                    ));
                }
            }
            for p in ctx.interface.drain(id) {
                let Payload::Goal(call) = p else { continue };
                let Payload::Gripper(GripperGoal { position, max_effort }) = *call.goal.as_ref()
                else {
                    let _ = call.outcome.send(outcome(
                        GoalStatus::Aborted,
                        -1,
                        format!("gripper_cmd takes a Gripper goal, not {}", call.goal.kind()),
                    ));
                    continue;
                };
                if !gactive {
                    let st = self.registry.state(&gname).map(|s| s.label()).unwrap_or("unloaded");
                    let _ = call.outcome.send(outcome(
                        GoalStatus::Aborted,
                        -1,
                        format!("controller `{gname}` is {st}: goals are refused until it is activated (switch_controller activate_controllers: [{gname}])"),
                    ));
                    continue;
                }
                if !position.is_finite() {
                    let _ = call.outcome.send(outcome(
                        GoalStatus::Aborted,
                        -1,
                        "gripper position is not finite",
                    ));
                    continue;
                }
                if let Some(old) = g.exec.take() {
                    let _ = old.call.outcome.send(outcome(
                        GoalStatus::Canceled,
                        0,
                        "preempted by a newer gripper goal",
                    ));
                }
                g.target_ctrl = Self::gripper_ctrl_for(g, position);
                let limit = (max_effort > 0.0 && max_effort.is_finite())
                    .then(|| g.moment.map(|m| max_effort / m.abs()))
                    .flatten();
                Self::set_gripper_force(ctx, g, limit);
                g.exec = Some(GripExec { call, target: position, window: Default::default() });
            }
            if let Some(ex) = &g.exec {
                if ex.call.cancel.load(Ordering::SeqCst) {
                    let pos = ctx.data().qpos()[g.joint.qpos];
                    g.target_ctrl = Self::gripper_ctrl_for(g, pos);
                    let ex = g.exec.take().expect("checked");
                    let _ = ex.call.outcome.send(outcome(
                        GoalStatus::Canceled,
                        0,
                        "canceled by the caller; holding the measured position",
                    ));
                }
            }
        }
        if !ctx.run.manual_control {
            self.write_ctrl(ctx); // --manual-control: a person owns ctrl (on_reset still holds)
        }
        self.handle.0.borrow_mut().targets = self.targets.clone();
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let now = ctx.sim_time();
        let (q, v, fa, fg) = {
            let d = ctx.data();
            (
                d.qpos().to_vec(),
                d.qvel().to_vec(),
                d.qfrc_actuator().to_vec(),
                d.qfrc_gravcomp().to_vec(),
            )
        };
        {
            let mut h = self.handle.0.borrow_mut();
            h.positions = self.joints.iter().map(|j| q[j.qpos]).collect();
            h.velocities = self.joints.iter().map(|j| v[j.dof]).collect();
            h.efforts = self.joints.iter().map(|j| fa[j.dof] + fg[j.dof]).collect();
        }
        // Grade / feed back the running trajectory.
        if let Some(ex) = &mut self.exec {
            let t = now - ex.start;
            if let Some(c) = &ex.call {
                if now - ex.last_feedback >= self.monitor_dt - 1e-9 {
                    ex.last_feedback = now;
                    let names: Vec<String> =
                        ex.knots.iter().map(|(i, _)| self.joints[*i].name.clone()).collect();
                    let desired = ex.knots.iter().map(|(_, k)| sample(k, t).0).collect();
                    let actual = ex.knots.iter().map(|(i, _)| q[self.joints[*i].qpos]).collect();
                    let _ = c.feedback.send(Payload::TrajectoryFeedback {
                        joint_names: names,
                        desired,
                        actual,
                    });
                }
            }
            if t >= ex.t_last {
                let mut worst: Option<(String, f64, f64)> = None;
                for (i, tol) in &ex.tol {
                    let goal = ex
                        .knots
                        .iter()
                        .find(|(k, _)| k == i)
                        .map(|(_, k)| k.last().expect("knots").q)
                        .unwrap_or(0.0);
                    let err = (q[self.joints[*i].qpos] - goal).abs();
                    if let Some(tol) = tol {
                        if err > *tol && worst.as_ref().is_none_or(|w| err - tol > w.1 - w.2) {
                            worst = Some((self.joints[*i].name.clone(), err, *tol));
                        }
                    }
                }
                let stopped = ex.vel_tol.iter().all(|(i, vt)| v[self.joints[*i].dof].abs() <= *vt);
                let late = t > ex.t_last + ex.time_tol;
                match (&worst, stopped, late) {
                    (None, true, _) | (None, _, true) => {
                        let msg = if stopped {
                            "the joints ended within the goal tolerance"
                        } else {
                            "the joints are within the goal tolerance (still settling)"
                        };
                        self.finish(outcome(GoalStatus::Succeeded, codes::SUCCESSFUL, msg));
                    }
                    (Some((n, err, tol)), _, true) => {
                        let msg = format!(
                            "GOAL_TOLERANCE_VIOLATED: joint `{n}` ended {err:.4} rad from its goal (tolerance {tol} rad) {:.3} s after the last waypoint; the arm did not arrive (blocked or saturated?)",
                            t - ex.t_last
                        );
                        self.hold_measured(ctx);
                        self.finish(outcome(
                            GoalStatus::Aborted,
                            codes::GOAL_TOLERANCE_VIOLATED,
                            msg,
                        ));
                    }
                    _ => {}
                }
            }
        }
        // Gripper.
        if let Some(g) = &mut self.gripper {
            let pos = q[g.joint.qpos];
            let vel = v[g.joint.dof];
            let eff = fa[g.joint.dof];
            *self.reader.0.borrow_mut() = (pos, vel, eff);
            let mut done: Option<ActionOutcome> = None;
            if let Some(ex) = &mut g.exec {
                let err = (pos - ex.target).abs();
                if err <= self.cfg.gripper_goal_tolerance {
                    done = Some(ActionOutcome {
                        status: GoalStatus::Succeeded,
                        error_code: 0,
                        error_string: "reached the goal position".into(),
                        result: Some(Box::new(Payload::GripperResult {
                            position: pos,
                            effort: eff,
                            stalled: false,
                            reached_goal: true,
                        })),
                    });
                } else {
                    // Stalled: over the last stall_timeout the gripper moved less than
                    // stall_velocity x stall_timeout — its MEAN speed is below the threshold
                    // (contact chatter makes the instantaneous velocity useless for this).
                    ex.window.push_back((now, pos));
                    let timeout = self.cfg.gripper_stall_timeout;
                    while ex.window.len() > 1 && now - ex.window[1].0 >= timeout - 1e-9 {
                        ex.window.pop_front();
                    }
                    let (t0, p0) = ex.window[0];
                    if now - t0 >= timeout - 1e-9
                        && (pos - p0).abs() < self.cfg.gripper_stall_velocity * (now - t0)
                    {
                        let ok = self.cfg.gripper_allow_stalling;
                        done = Some(ActionOutcome {
                            status: if ok { GoalStatus::Succeeded } else { GoalStatus::Aborted },
                            error_code: 0,
                            error_string: format!(
                                "stalled {err:.4} short of the goal (closed on an object?)"
                            ),
                            result: Some(Box::new(Payload::GripperResult {
                                position: pos,
                                effort: eff,
                                stalled: true,
                                reached_goal: false,
                            })),
                        });
                    }
                }
            }
            if let Some(o) = done {
                let ex = g.exec.take().expect("running");
                let _ = ex.call.outcome.send(o);
            }
        }
        // joint_states: published by joint_state_broadcaster, so only while it is active.
        if ctx.interface.is_due(self.ep_states, ctx.tick) && self.registry.is_active(JSB_NAME) {
            let mut js = JointState { stamp: now, ..Default::default() };
            for j in &self.joints {
                js.name.push(j.name.clone());
                js.position.push(q[j.qpos]);
                js.velocity.push(v[j.dof]);
                js.effort.push(fa[j.dof] + fg[j.dof]);
            }
            if let Some(g) = &self.gripper {
                js.name.push(g.name.clone());
                js.position.push(q[g.joint.qpos]);
                js.velocity.push(v[g.joint.dof]);
                js.effort.push(fa[g.joint.dof] + fg[g.joint.dof]);
            }
            let tick = ctx.tick;
            ctx.interface.publish(self.ep_states, tick, Payload::JointState(js));
        }
        self.publish_transitions(ctx);
        Ok(())
    }
}
