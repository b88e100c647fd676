//! `diff_drive`: differential-drive (and skid-steer) kinematics + wheel-encoder odometry.
//!
//! A component of the entry that spawns the base (ownership is position). Each step it takes the
//! newest command (the `cmd_vel` endpoint, the `robot:<name>` handle, or `test_cmd`), clamps it to
//! the base's limits, splits it into left/right wheel speeds (the yaw term inflated by
//! `slip_factor`), ramps each wheel by `wheel_accel_limit` and writes the wheel velocity servos
//! (ctrl = wheel angular velocity, rad/s). After the step it integrates the MEASURED wheel
//! velocities into odometry (`odom` → `odom_child_frame`), optionally corrupted by `odom_noise`,
//! and publishes it (with the TF) and the wheel joint states at `odom_rate_hz`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

pub use super::drive::OdomNoise;
use super::drive::{ramp, DriveBase, DriveSpec};
use crate::context::SimContext;
use crate::error::{ConfigError, HookResult};
use crate::handles::robot::OdomState;
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared::{self as common, JointRef};

/// Endpoint roles of `diff_drive` (keys of its `topics:` map).
pub const ROLES: [&str; 3] = ["cmd_vel", "odom", "joint_states"];

fn one() -> f64 {
    1.0
}
fn d_radius() -> f64 {
    0.03575
}
fn d_sep() -> f64 {
    0.233
}
fn d_vmax() -> f64 {
    0.31
}
fn d_wmax() -> f64 {
    1.90
}
fn d_accel() -> f64 {
    0.9
}
fn d_rate() -> f64 {
    50.0
}
fn d_child() -> String {
    "base_link".into()
}
/// Config of `diff_drive`. Defaults are the TurtleBot 4 / Create 3 values.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiffDriveConfig {
    /// Transport scope of the endpoints; default (omitted or empty): the owning entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Wheel radius (m). Default 0.03575 (Create 3).
    #[serde(default = "d_radius")]
    pub wheel_radius: f64,
    /// Distance between the left and right wheel contact lines (m); the track width of a
    /// skid-steer. Default 0.233 (Create 3).
    #[serde(default = "d_sep")]
    pub wheel_separation: f64,
    /// Commanded forward speed limit (m/s). Default 0.31 (Create 3 safe mode).
    #[serde(default = "d_vmax")]
    pub max_linear_vel: f64,
    /// Commanded yaw-rate limit (rad/s). Default 1.90.
    #[serde(default = "d_wmax")]
    pub max_angular_vel: f64,
    /// Per-wheel acceleration limit on the wheel's linear speed (m/s²); ramps every command,
    /// including the watchdog's stop. 0 = instant. Default 0.9 (Create 3 default and maximum).
    #[serde(default = "d_accel")]
    pub wheel_accel_limit: f64,
    /// Skid-steer ICR slip compensation: multiplies the yaw term of the wheel command and is
    /// divided back out of odometry. 1 = ideal differential drive (default). A per-robot
    /// calibration (achieved vs commanded yaw rate).
    #[serde(default = "one")]
    pub slip_factor: f64,
    /// Left wheel velocity actuator (model name, without the spawn prefix).
    #[serde(default)]
    pub left_actuator: Option<String>,
    /// Right wheel velocity actuator.
    #[serde(default)]
    pub right_actuator: Option<String>,
    /// Left wheel joint (its measured velocity is the encoder).
    #[serde(default)]
    pub left_joint: Option<String>,
    /// Right wheel joint.
    #[serde(default)]
    pub right_joint: Option<String>,
    /// Skid-steer: every left wheel's velocity actuator (instead of `left_actuator`).
    #[serde(default)]
    pub left_actuators: Option<Vec<String>>,
    /// Skid-steer: every right wheel's velocity actuator.
    #[serde(default)]
    pub right_actuators: Option<Vec<String>>,
    /// Skid-steer: every left wheel joint, same order as `left_actuators` (odometry averages them).
    #[serde(default)]
    pub left_joints: Option<Vec<String>>,
    /// Skid-steer: every right wheel joint.
    #[serde(default)]
    pub right_joints: Option<Vec<String>>,
    /// Frame the odometry (and its `odom` → child TF) points at: the ROOT of the robot's URDF.
    /// Default `base_link`.
    #[serde(default = "d_child")]
    pub odom_child_frame: String,
    /// Publish rate of `odom` (with its TF) and `joint_states` (Hz). Default 50.
    #[serde(default = "d_rate")]
    pub odom_rate_hz: f64,
    /// The stack publishes `geometry_msgs/TwistStamped` instead of `Twist`. Default false.
    #[serde(default)]
    pub stamped_cmd_vel: bool,
    /// Command watchdog (s): with > 0, the base stops (through the acceleration ramp) when no
    /// command arrived for this long. 0 (default) holds the last command.
    #[serde(default)]
    pub cmd_vel_timeout: f64,
    /// Publish the wheel joints on `joint_states`; false when a joint_state_publisher covers the
    /// whole robot. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub publish_joint_states: bool,
    /// Optional `[v (m/s), w (rad/s)]` applied every tick (standalone demo).
    #[serde(default)]
    pub test_cmd: Option<[f64; 2]>,
    /// Optional odometry error; omitted = exact odometry, nothing drawn.
    #[serde(default)]
    pub odom_noise: Option<OdomNoise>,
    /// Topic per endpoint role (`cmd_vel`, `odom`, `joint_states`): absolute hardwires, relative
    /// renames inside the namespace.
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

/// Check a singular-or-list pair (`left_actuator` / `left_actuators`): exactly one form.
fn one_form(
    e: &mut Vec<ConfigError>,
    single_key: &str,
    single: &Option<String>,
    list_key: &str,
    list: &Option<Vec<String>>,
    what: &str,
) -> Option<Vec<String>> {
    match (single, list) {
        (Some(_), Some(_)) => {
            e.push(ConfigError::new(
                list_key,
                format!("both `{single_key}` and `{list_key}` are given: use `{single_key}` for one wheel per side, or `{list_key}` for a skid-steer's wheels, not both"),
            ));
            None
        }
        (None, None) => {
            e.push(ConfigError::new(
                single_key,
                format!("missing: name the {what} with `{single_key}` (one wheel per side) or list them with `{list_key}` (skid-steer)"),
            ));
            None
        }
        (Some(s), None) => {
            if s.trim().is_empty() {
                e.push(ConfigError::new(single_key, format!("empty name: give the {what}")));
            }
            Some(vec![s.clone()])
        }
        (None, Some(l)) => {
            if l.is_empty() {
                e.push(ConfigError::new(list_key, format!("empty list: give at least one {what}")));
                return None;
            }
            Some(l.clone())
        }
    }
}

impl DiffDriveConfig {
    /// The per-side actuator and joint name lists (validated).
    fn sides(&self, e: &mut Vec<ConfigError>) -> Option<[(Vec<String>, Vec<String>); 2]> {
        let la = one_form(
            e,
            "left_actuator",
            &self.left_actuator,
            "left_actuators",
            &self.left_actuators,
            "left wheel velocity actuator(s)",
        );
        let ra = one_form(
            e,
            "right_actuator",
            &self.right_actuator,
            "right_actuators",
            &self.right_actuators,
            "right wheel velocity actuator(s)",
        );
        let lj = one_form(
            e,
            "left_joint",
            &self.left_joint,
            "left_joints",
            &self.left_joints,
            "left wheel joint(s)",
        );
        let rj = one_form(
            e,
            "right_joint",
            &self.right_joint,
            "right_joints",
            &self.right_joints,
            "right wheel joint(s)",
        );
        let (la, ra, lj, rj) = (la?, ra?, lj?, rj?);
        for (side, a, j, ka, kj) in [
            ("left", &la, &lj, "left_actuators", "left_joints"),
            ("right", &ra, &rj, "right_actuators", "right_joints"),
        ] {
            if a.len() != j.len() {
                e.push(ConfigError::new(
                    kj,
                    format!("{} {side} joint(s) for {} {side} actuator(s) (`{ka}`): list every {side} wheel's joint, same order", j.len(), a.len()),
                ));
            }
        }
        Some([(la, lj), (ra, rj)])
    }
}

impl ValidateConfig for DiffDriveConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        for (k, v) in [
            ("wheel_radius", self.wheel_radius),
            ("wheel_separation", self.wheel_separation),
            ("max_linear_vel", self.max_linear_vel),
            ("max_angular_vel", self.max_angular_vel),
            ("odom_rate_hz", self.odom_rate_hz),
            ("slip_factor", self.slip_factor),
        ] {
            if !(v > 0.0 && v.is_finite()) {
                e.push(ConfigError::new(k, format!("must be > 0, got {v}")));
            }
        }
        for (k, v) in [
            ("wheel_accel_limit", self.wheel_accel_limit),
            ("cmd_vel_timeout", self.cmd_vel_timeout),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                e.push(ConfigError::new(k, format!("must be >= 0 (0 = off), got {v}")));
            }
        }
        if let Some(t) = self.test_cmd {
            if t.iter().any(|x| !x.is_finite()) {
                e.push(ConfigError::new(
                    "test_cmd",
                    "must be two finite numbers [v (m/s), w (rad/s)]",
                ));
            }
        }
        if self.odom_child_frame.trim().is_empty() {
            e.push(ConfigError::new(
                "odom_child_frame",
                "empty: name the root link of the robot's URDF (e.g. base_link)",
            ));
        }
        if let Some(n) = &self.odom_noise {
            n.validate(&mut e);
        }
        self.sides(&mut e);
        e.extend(common::check_topics(&self.topics, &ROLES));
        e
    }
}

/// One side's wheels, resolved.
#[derive(Debug, Clone, Default)]
struct Side {
    actuators: Vec<usize>,
    joints: Vec<JointRef>,
}

/// A body command: forward speed (m/s) and yaw rate (rad/s).
#[derive(Debug, Clone, Copy)]
struct Cmd {
    v: f64,
    w: f64,
}

/// The `diff_drive` plugin.
pub struct DiffDrive {
    cfg: DiffDriveConfig,
    address: String,
    owner: Option<String>,
    /// Owning entity's name (resolved at configure).
    entity: String,
    sides: [Side; 2],
    /// Endpoints, robot handle, command intake and odometry (set at configure).
    base: Option<DriveBase>,
    /// Joints `joint_states` carries (every wheel, left then right).
    js_joints: Vec<JointRef>,
    /// Control range of every actuator (ctrl is clamped to it).
    limits: Vec<[f64; 2]>,
    /// Held command.
    cmd: Option<Cmd>,
    /// Ramped wheel linear speeds (m/s), left and right.
    wheel: [f64; 2],
}

impl DiffDrive {
    /// Construct from config.
    pub fn new(cfg: DiffDriveConfig, args: &PluginArgs) -> Self {
        DiffDrive {
            cfg,
            address: args.address.clone(),
            owner: args.owner.clone(),
            entity: String::new(),
            sides: Default::default(),
            base: None,
            js_joints: Vec::new(),
            limits: Vec::new(),
            cmd: None,
            wheel: [0.0; 2],
        }
    }

    /// The odometry integrated so far (odom frame; noise included when configured).
    pub fn odometry(&self) -> OdomState {
        self.base.as_ref().map(DriveBase::odometry).unwrap_or_default()
    }

    fn take_commands(&mut self, ctx: &mut SimContext) -> HookResult {
        let Some(base) = self.base.as_mut() else { return Ok(()) };
        if let Some([v, _vy, w]) = base.drain_cmd_vel(ctx)?.pop() {
            self.cmd = Some(Cmd { v, w });
        }
        if let Some([v, _vy, w]) = base.take_handle_command(ctx) {
            self.cmd = Some(Cmd { v, w });
        }
        if let Some([v, w]) = self.cfg.test_cmd {
            base.note_command(ctx);
            self.cmd = Some(Cmd { v, w });
        }
        Ok(())
    }
}

/// Wheel-ctrl arithmetic: body command (v, w) → left/right wheel linear speeds (m/s).
pub fn wheel_speeds(v: f64, w: f64, separation: f64, slip_factor: f64) -> [f64; 2] {
    let d = w * slip_factor * separation / 2.0;
    [v - d, v + d]
}

/// The `diff_drive` descriptor (refused at the top of a document: `requires_owner`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "diff_drive",
        "Differential-drive / skid-steer kinematics + wheel-encoder odometry (cmd_vel in; odom with TF, joint_states out).",
        DiffDriveConfig,
        DiffDrive
    )
    .requires_owner()
}

impl Plugin for DiffDrive {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::PRE_STEP | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let entity = common::owner_entity(ctx, "diff_drive", self.owner.as_deref())?;
        self.entity = entity.name.clone();
        let mut errs = Vec::new();
        let sides = self
            .cfg
            .sides(&mut errs)
            .ok_or_else(|| errs.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; "))?;
        let single = self.cfg.left_actuators.is_none();
        let model = ctx.model();
        self.limits = common::ctrl_limits(model);
        for (i, (acts, joints)) in sides.iter().enumerate() {
            let side = if i == 0 { "left" } else { "right" };
            let mut s = Side::default();
            for (k, a) in acts.iter().enumerate() {
                let key = if single {
                    format!("{side}_actuator")
                } else {
                    format!("{side}_actuators[{k}]")
                };
                let id = common::resolve_velocity_actuator(model, &entity, &key, a)?;
                s.actuators.push(id);
            }
            for (k, j) in joints.iter().enumerate() {
                let key =
                    if single { format!("{side}_joint") } else { format!("{side}_joints[{k}]") };
                let id = common::resolve_joint(model, &entity, &key, j)?;
                s.joints.push(JointRef::new(model, &entity, id));
            }
            self.sides[i] = s;
        }

        self.js_joints = self.sides.iter().flat_map(|s| s.joints.iter().cloned()).collect();
        let c = &self.cfg;
        let spec = DriveSpec {
            plugin: "diff_drive",
            namespace: c.namespace.as_deref(),
            topics: &c.topics,
            stamped_cmd_vel: c.stamped_cmd_vel,
            odom_rate_hz: c.odom_rate_hz,
            joint_states: c.publish_joint_states,
            odom_child_frame: &c.odom_child_frame,
            cmd_vel_timeout: c.cmd_vel_timeout,
            odom_noise: c.odom_noise.as_ref(),
            holonomic: false,
        };
        self.base = Some(DriveBase::configure(ctx, &self.address, &entity, spec, Vec::new())?);
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.cmd = None;
        self.wheel = [0.0; 2];
        if let Some(b) = self.base.as_mut() {
            b.reset(ctx);
        }
        let ctrl = ctx.data_mut().ctrl_mut();
        for s in &self.sides {
            for &a in &s.actuators {
                ctrl[a] = 0.0;
            }
        }
        Ok(())
    }

    fn pre_step(&mut self, ctx: &mut SimContext) -> HookResult {
        self.take_commands(ctx)?;
        if ctx.run.manual_control {
            return Ok(()); // a person owns ctrl (--manual-control)
        }
        if !common::entity_present(ctx, &self.entity) {
            // Absent: drop the command, brake the wheels (velocity servos at 0).
            self.cmd = None;
            if let Some(b) = self.base.as_mut() {
                b.drop_command();
            }
            self.wheel = [0.0; 2];
            let ctrl = ctx.data_mut().ctrl_mut();
            for s in &self.sides {
                for &a in &s.actuators {
                    ctrl[a] = 0.0;
                }
            }
            return Ok(());
        }
        let c = &self.cfg;
        let fresh = self.base.as_ref().is_some_and(|b| b.command_fresh(ctx));
        let (v, w) = match self.cmd {
            Some(cmd) if fresh => (cmd.v, cmd.w),
            _ => (0.0, 0.0), // no command yet, or the watchdog fired: stop (through the ramp)
        };
        let v = v.clamp(-c.max_linear_vel, c.max_linear_vel);
        let w = w.clamp(-c.max_angular_vel, c.max_angular_vel);
        let target = wheel_speeds(v, w, c.wheel_separation, c.slip_factor);
        let dv = c.wheel_accel_limit * ctx.dt;
        for (w, t) in self.wheel.iter_mut().zip(target) {
            *w = ramp(*w, t, dv);
        }
        let radius = c.wheel_radius;
        let ctrl = ctx.data_mut().ctrl_mut();
        for (i, s) in self.sides.iter().enumerate() {
            for &a in &s.actuators {
                let [lo, hi] = self.limits[a];
                ctrl[a] = (self.wheel[i] / radius).clamp(lo, hi);
            }
        }
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let c = &self.cfg;
        let (vl, vr) = {
            let qvel = ctx.data().qvel();
            let avg = |s: &Side| {
                s.joints.iter().map(|j| qvel[j.dof]).sum::<f64>() / s.joints.len() as f64
            };
            (avg(&self.sides[0]) * c.wheel_radius, avg(&self.sides[1]) * c.wheel_radius)
        };
        let v = (vr + vl) / 2.0;
        let w = (vr - vl) / c.wheel_separation / c.slip_factor;
        match self.base.as_mut() {
            Some(b) => b.publish(ctx, [v, 0.0, w], &self.js_joints),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wheel_split_and_inverse() {
        let [l, r] = wheel_speeds(0.2, 1.0, 0.233, 1.0);
        assert!((l - (0.2 - 0.1165)).abs() < 1e-12 && (r - (0.2 + 0.1165)).abs() < 1e-12);
        // slip inflates the yaw term; odometry divides it back out.
        let [l, r] = wheel_speeds(0.0, 0.5, 0.5708, 3.86);
        assert!(((r - l) / 0.5708 / 3.86 - 0.5).abs() < 1e-12);
    }
}
