//! The `arm_controller` config: joints, gripper, tolerances, rates, controller names.

use super::*;

/// `goal_tolerance:` — one value for every joint, or per joint.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Tolerance {
    /// rad (or m) for every joint; 0 disables the check.
    Scalar(f64),
    /// `{joint: rad}`; joints not listed get the default 0.5; 0 disables.
    PerJoint(BTreeMap<String, f64>),
}

pub(super) fn d_controller() -> String {
    "arm_controller".into()
}
pub(super) fn d_gripper_controller() -> String {
    "gripper_controller".into()
}
pub(super) fn d_gtt() -> f64 {
    1.0
}
pub(super) fn d_svt() -> f64 {
    0.01
}
pub(super) fn d_monitor() -> f64 {
    20.0
}
pub(super) fn d_vto() -> f64 {
    0.5
}
pub(super) fn d_gctrl() -> f64 {
    255.0
}
pub(super) fn d_rate() -> f64 {
    100.0
}
pub(super) fn d_ggt() -> f64 {
    0.01
}
pub(super) fn d_stall_v() -> f64 {
    0.001
}
pub(super) fn d_stall_t() -> f64 {
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
    /// s the joints get after the last waypoint to reach it; 0 = no limit (the goal ends only
    /// once the joints are within tolerance and stopped, as the trajectory controller's
    /// `constraints.goal_time: 0`). Default 1.0.
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
