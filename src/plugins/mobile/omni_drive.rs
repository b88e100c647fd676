//! `omni_drive`: holonomic (mecanum or swerve) base kinematics + odometry.
//!
//! Planar drive: the commanded body twist (vx, vy, wz) is applied to the base's free joint through
//! three velocity actuators (`base_vx`, `base_vy` on its WORLD-frame translational DOFs, `base_wz`
//! on its body-frame yaw DOF). The frame trap: a free joint's translational DOFs are world-frame,
//! so the body-frame (vx, vy) is rotated by the base yaw before it is written to ctrl; wz needs no
//! rotation. The drive stays in MuJoCo's force path (contacts still win).
//!
//! Wheels are OBSERVATIONAL: their velocity servos follow mecanum inverse kinematics (or, with
//! `steer_joints`, swerve kinematics with the nearer-heading rule) so joint_states and the visual
//! are right; each wheel's roll sign comes from its joint axis in the base frame at configure.
//! Odometry integrates the base's achieved twist (a base held against a wall reports no progress).

use std::collections::BTreeMap;
use std::f64::consts::PI;

use crate::math::wrap_angle as wrap;

use mujoco_rs::mujoco_c::mjtJoint;
use schemars::JsonSchema;
use serde::Deserialize;

use super::drive::{ramp, DriveBase, DriveSpec, OdomNoise};
use crate::context::SimContext;
use crate::error::{ConfigError, HookResult};
use crate::handles::robot::OdomState;
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared::{self as common, JointRef};

/// Endpoint roles of `omni_drive` (keys of its `topics:` map).
pub const ROLES: [&str; 3] = ["cmd_vel", "odom", "joint_states"];

fn s(v: &str) -> String {
    v.to_string()
}
fn d_base_joint() -> String {
    s("base_free")
}
fn d_vx() -> String {
    s("base_vx")
}
fn d_vy() -> String {
    s("base_vy")
}
fn d_wz() -> String {
    s("base_wz")
}
fn d_one() -> f64 {
    1.0
}
fn d_comb() -> f64 {
    0.7
}
fn d_wmax() -> f64 {
    2.09
}
fn d_radius() -> f64 {
    0.0762
}
fn d_sep() -> f64 {
    0.44715
}
fn d_axis() -> f64 {
    0.488
}
fn d_child() -> String {
    s("base_footprint")
}
fn d_rate() -> f64 {
    50.0
}
/// Config of `omni_drive`. Defaults are the PAL TIAGo OMNI Base values.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OmniDriveConfig {
    /// Transport scope of the endpoints; default (omitted or empty): the owning entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// The base's free joint (model name). Default `base_free`.
    #[serde(default = "d_base_joint")]
    pub base_joint: String,
    /// Velocity actuator on the free joint's world-x DOF (m/s). Default `base_vx`.
    #[serde(default = "d_vx")]
    pub vx_actuator: String,
    /// Velocity actuator on the free joint's world-y DOF (m/s). Default `base_vy`.
    #[serde(default = "d_vy")]
    pub vy_actuator: String,
    /// Velocity actuator on the free joint's body-z (yaw) DOF (rad/s). Default `base_wz`.
    #[serde(default = "d_wz")]
    pub wz_actuator: String,
    /// Forward speed limit (m/s), applies to vx. Default 1.0.
    #[serde(default = "d_one")]
    pub max_linear_vel: f64,
    /// Lateral speed limit (m/s), applies to vy. Default: `max_linear_vel`.
    #[serde(default)]
    pub max_lateral_vel: Option<f64>,
    /// Cap on hypot(vx, vy) (m/s), scaling both down together; 0 disables. Default 0.7.
    #[serde(default = "d_comb")]
    pub max_combined_linear_vel: f64,
    /// Yaw-rate limit (rad/s). Default 2.09 (120°/s).
    #[serde(default = "d_wmax")]
    pub max_angular_vel: f64,
    /// Ramp on vx and vy (m/s²); 0 = instant. Default 1.0.
    #[serde(default = "d_one")]
    pub accel_limit: f64,
    /// Ramp on wz (rad/s²); 0 = instant. Default 2.09.
    #[serde(default = "d_wmax")]
    pub angular_accel_limit: f64,
    /// Wheel radius (m), for the observational wheel kinematics. Default 0.0762.
    #[serde(default = "d_radius")]
    pub wheel_radius: f64,
    /// Lateral wheel separation, left ↔ right (m). Default 0.44715.
    #[serde(default = "d_sep")]
    pub wheel_separation: f64,
    /// Longitudinal wheel separation, front ↔ rear (m). Default 0.488.
    #[serde(default = "d_axis")]
    pub axis_separation: f64,
    /// Wheel joint name stems (joint `<stem>_joint`). Mecanum: exactly
    /// `[front_left, front_right, rear_left, rear_right]`-ordered. Empty (default) = no wheel handling.
    #[serde(default)]
    pub wheels: Vec<String>,
    /// Wheel velocity actuators, same order as `wheels`; default `<stem>_motor`.
    #[serde(default)]
    pub wheel_actuators: Option<Vec<String>>,
    /// SWERVE: steer joints, same order as `wheels` (their presence selects swerve kinematics).
    #[serde(default)]
    pub steer_joints: Option<Vec<String>>,
    /// SWERVE: steer POSITION actuators, same order as `wheels`.
    #[serde(default)]
    pub steer_actuators: Option<Vec<String>>,
    /// Frame the odometry TF points at: the ROOT of the robot's URDF. Default `base_footprint`.
    #[serde(default = "d_child")]
    pub odom_child_frame: String,
    /// Publish rate of `odom` (with its TF) and `joint_states` (Hz). Default 50.
    #[serde(default = "d_rate")]
    pub odom_rate_hz: f64,
    /// The stack publishes `geometry_msgs/TwistStamped` instead of `Twist`. Default false.
    #[serde(default)]
    pub stamped_cmd_vel: bool,
    /// Command watchdog (s): > 0 stops the base (through the ramps) when no command arrived for
    /// this long. 0 (default) holds the last command.
    #[serde(default)]
    pub cmd_vel_timeout: f64,
    /// Publish the wheel (and steer) joints on `joint_states`. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub publish_joint_states: bool,
    /// Optional `[vx (m/s), vy (m/s), wz (rad/s)]` applied every tick (standalone demo).
    #[serde(default)]
    pub test_cmd: Option<[f64; 3]>,
    /// Optional odometry error (on vx, vy and wz); omitted = exact odometry, nothing drawn.
    #[serde(default)]
    pub odom_noise: Option<OdomNoise>,
    /// Topic per endpoint role (`cmd_vel`, `odom`, `joint_states`).
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

impl OmniDriveConfig {
    fn max_lateral(&self) -> f64 {
        self.max_lateral_vel.unwrap_or(self.max_linear_vel)
    }
    fn swerve(&self) -> bool {
        self.steer_joints.is_some()
    }
}

impl ValidateConfig for OmniDriveConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        let mut pos = vec![
            ("max_linear_vel", self.max_linear_vel),
            ("max_angular_vel", self.max_angular_vel),
            ("odom_rate_hz", self.odom_rate_hz),
            ("wheel_radius", self.wheel_radius),
            ("wheel_separation", self.wheel_separation),
            ("axis_separation", self.axis_separation),
        ];
        if let Some(v) = self.max_lateral_vel {
            pos.push(("max_lateral_vel", v));
        }
        for (k, v) in pos {
            if !(v > 0.0 && v.is_finite()) {
                e.push(ConfigError::new(k, format!("must be > 0, got {v}")));
            }
        }
        for (k, v) in [
            ("max_combined_linear_vel", self.max_combined_linear_vel),
            ("accel_limit", self.accel_limit),
            ("angular_accel_limit", self.angular_accel_limit),
            ("cmd_vel_timeout", self.cmd_vel_timeout),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                e.push(ConfigError::new(k, format!("must be >= 0 (0 = off), got {v}")));
            }
        }
        let n = self.wheels.len();
        if let Some(a) = &self.wheel_actuators {
            if n == 0 {
                e.push(ConfigError::new(
                    "wheel_actuators",
                    "given without `wheels`: list the wheel joint stems first",
                ));
            } else if a.len() != n {
                e.push(ConfigError::new(
                    "wheel_actuators",
                    format!(
                        "{} actuator(s) for {n} wheel(s): same order and length as `wheels`",
                        a.len()
                    ),
                ));
            }
        }
        match (&self.steer_joints, &self.steer_actuators) {
            (Some(_), None) => e.push(ConfigError::new(
                "steer_actuators",
                "missing: a swerve base (`steer_joints` given) also needs its steer POSITION actuators, same order as `wheels`",
            )),
            (None, Some(_)) => e.push(ConfigError::new(
                "steer_joints",
                "missing: `steer_actuators` given without `steer_joints`; a swerve base needs both (omit both for mecanum)",
            )),
            (Some(j), Some(a)) => {
                if n == 0 {
                    e.push(ConfigError::new("steer_joints", "a swerve base needs `wheels` (the roll joint stems), same order"));
                }
                for (k, l) in [("steer_joints", j), ("steer_actuators", a)] {
                    if n > 0 && l.len() != n {
                        e.push(ConfigError::new(k, format!("{} entries for {n} wheel(s): same order and length as `wheels`", l.len())));
                    }
                }
            }
            (None, None) => {
                if n != 0 && n != 4 {
                    e.push(ConfigError::new(
                        "wheels",
                        format!("mecanum kinematics needs exactly 4 wheels ordered [front_left, front_right, rear_left, rear_right], got {n}"),
                    ));
                }
            }
        }
        if let Some(t) = self.test_cmd {
            if t.iter().any(|x| !x.is_finite()) {
                e.push(ConfigError::new(
                    "test_cmd",
                    "must be three finite numbers [vx (m/s), vy (m/s), wz (rad/s)]",
                ));
            }
        }
        if self.odom_child_frame.trim().is_empty() {
            e.push(ConfigError::new(
                "odom_child_frame",
                "empty: name the root link of the robot's URDF (e.g. base_footprint)",
            ));
        }
        if let Some(n) = &self.odom_noise {
            n.validate(&mut e);
        }
        e.extend(common::check_topics(&self.topics, &ROLES));
        e
    }
}

/// Clamp a body twist to the omni limits: vx to ±`max_x`, vy to ±`max_y`, then (vx, vy) scaled
/// together so hypot ≤ `max_xy` (0 = no cap), wz to ±`max_w`.
pub fn clamp_twist(
    vx: f64,
    vy: f64,
    wz: f64,
    max_x: f64,
    max_y: f64,
    max_xy: f64,
    max_w: f64,
) -> [f64; 3] {
    let mut vx = vx.clamp(-max_x, max_x);
    let mut vy = vy.clamp(-max_y, max_y);
    let h = vx.hypot(vy);
    if max_xy > 0.0 && h > max_xy {
        vx *= max_xy / h;
        vy *= max_xy / h;
    }
    [vx, vy, wz.clamp(-max_w, max_w)]
}

/// Rotate a body-frame planar velocity into the world frame by the base yaw (rad): what the
/// free joint's world-frame translational DOFs take (the frame trap).
pub fn body_to_world(vx: f64, vy: f64, yaw: f64) -> [f64; 2] {
    let (s, c) = yaw.sin_cos();
    [c * vx - s * vy, s * vx + c * vy]
}

/// Mecanum inverse kinematics: wheel surface speeds (m/s, positive = rolling the base forward) of
/// [front_left, front_right, rear_left, rear_right] for a body twist; `lx` = half the axis
/// separation, `ly` = half the wheel separation (m).
pub fn mecanum_ik(vx: f64, vy: f64, wz: f64, lx: f64, ly: f64) -> [f64; 4] {
    let k = (lx + ly) * wz;
    [vx - vy - k, vx + vy + k, vx + vy - k, vx - vy + k]
}

/// Swerve module target: for contact velocity (vx, vy) (m/s, base frame) and the steer joint's
/// current angle `current` (rad), the steer target nearer to `current` among θ and θ+π (as an
/// angle continuous with `current`) and the signed roll speed (m/s, negated for the flipped
/// heading). A vanishing velocity holds the current angle with zero roll.
pub fn swerve_target(vx: f64, vy: f64, current: f64) -> (f64, f64) {
    let speed = vx.hypot(vy);
    if speed < 1e-9 {
        return (current, 0.0);
    }
    let theta = vy.atan2(vx);
    let d0 = wrap(theta - current);
    let d1 = wrap(theta + PI - current);
    if d0.abs() <= d1.abs() {
        (current + d0, speed)
    } else {
        (current + d1, -speed)
    }
}

#[derive(Debug, Clone)]
struct Wheel {
    joint: JointRef,
    actuator: usize,
    /// +1 when positive joint rotation rolls the base forward (axis along +y of the base).
    sign: f64,
    /// Steer joint + actuator, and the module's position (m) in the base frame (swerve).
    steer: Option<(JointRef, usize, [f64; 2])>,
}

/// The `omni_drive` plugin.
pub struct OmniDrive {
    cfg: OmniDriveConfig,
    address: String,
    owner: Option<String>,
    /// Owning entity's name (resolved at configure).
    entity: String,
    base_qpos: usize,
    base_dof: usize,
    acts: [usize; 3],
    wheels: Vec<Wheel>,
    /// Endpoints, robot handle, command intake and odometry (set at configure).
    base: Option<DriveBase>,
    /// Joints `joint_states` carries (wheels, then steer joints).
    js_joints: Vec<JointRef>,
    /// Control range of every actuator (ctrl is clamped to it).
    limits: Vec<[f64; 2]>,
    /// Scratch: the steer joints' current angles (swerve), reused every step.
    steer_now: Vec<f64>,
    /// Held command (vx, vy, wz).
    cmd: Option<[f64; 3]>,
    /// Ramped body twist (vx, vy, wz).
    twist: [f64; 3],
}

impl OmniDrive {
    /// Construct from config.
    pub fn new(cfg: OmniDriveConfig, args: &PluginArgs) -> Self {
        OmniDrive {
            cfg,
            address: args.address.clone(),
            owner: args.owner.clone(),
            entity: String::new(),
            base_qpos: 0,
            base_dof: 0,
            acts: [0; 3],
            wheels: Vec::new(),
            base: None,
            js_joints: Vec::new(),
            limits: Vec::new(),
            steer_now: Vec::new(),
            cmd: None,
            twist: [0.0; 3],
        }
    }

    /// The odometry integrated so far (odom frame; noise included when configured).
    pub fn odometry(&self) -> OdomState {
        self.base.as_ref().map(DriveBase::odometry).unwrap_or_default()
    }

    fn base_yaw(&self, ctx: &SimContext) -> f64 {
        let q = &ctx.data().qpos()[self.base_qpos + 3..self.base_qpos + 7];
        crate::math::yaw_of(&[q[0], q[1], q[2], q[3]])
    }
}

/// The `omni_drive` descriptor (refused at the top of a document: `requires_owner`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "omni_drive",
        "Holonomic (mecanum / swerve) base: planar drive on the free joint, observational wheels, odometry from the achieved twist.",
        OmniDriveConfig,
        OmniDrive
    )
    .requires_owner()
}

impl Plugin for OmniDrive {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::PRE_STEP | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let entity = common::owner_entity(ctx, "omni_drive", self.owner.as_deref())?;
        self.entity = entity.name.clone();
        let c = &self.cfg;
        let model = ctx.model();
        self.limits = common::ctrl_limits(model);
        let bj = common::resolve_joint(model, &entity, "base_joint", &c.base_joint)?;
        if model.jnt_type()[bj] != mjtJoint::mjJNT_FREE {
            return Err(format!(
                "base_joint: `{}` is not a free joint; omni_drive drives the base's free joint",
                c.base_joint
            ));
        }
        self.base_qpos = model.jnt_qposadr()[bj] as usize;
        self.base_dof = model.jnt_dofadr()[bj] as usize;
        let base_body = model.jnt_bodyid()[bj] as usize;
        for (i, (key, name, axis)) in [
            ("vx_actuator", &c.vx_actuator, 0usize),
            ("vy_actuator", &c.vy_actuator, 1),
            ("wz_actuator", &c.wz_actuator, 5),
        ]
        .into_iter()
        .enumerate()
        {
            let a = common::resolve_velocity_actuator(model, &entity, key, name)?;
            let gear = model.actuator_gear()[a];
            let on_axis =
                gear.iter().enumerate().all(|(k, &g)| if k == axis { g == 1.0 } else { g == 0.0 });
            if common::actuator_joint(model, a) != Some(bj) || !on_axis {
                let dof = ["world x", "world y", "", "", "", "body z (yaw)"][axis];
                return Err(format!(
                    "{key}: `{name}` must be a velocity actuator on `{}`'s {dof} DOF (joint=\"{}\" gear with a single 1 at index {axis})",
                    c.base_joint, c.base_joint
                ));
            }
            self.acts[i] = a;
        }
        let stems = c.wheels.clone();
        for (k, stem) in stems.iter().enumerate() {
            let jname = format!("{stem}_joint");
            let j = common::resolve_joint(
                model,
                &entity,
                &format!("wheels[{k}] (joint `{stem}_joint`)"),
                &jname,
            )?;
            let aname = c
                .wheel_actuators
                .as_ref()
                .map(|v| v[k].clone())
                .unwrap_or_else(|| format!("{stem}_motor"));
            let a = common::resolve_velocity_actuator(
                model,
                &entity,
                &format!("wheel_actuators[{k}]"),
                &aname,
            )?;
            // Roll sign from the joint axis in the base frame (rest configuration).
            let jb = model.jnt_bodyid()[j] as usize;
            let (_, q) = common::rest_pose_in(model, jb, base_body);
            let axis = crate::math::quat(&q) * crate::math::vec3(&model.jnt_axis()[j]);
            let axis = crate::math::arr3(&axis);
            if axis[1].abs() < 0.5 {
                return Err(format!("wheels[{k}]: joint `{jname}` does not roll about the base's lateral (y) axis (axis in base frame {axis:?})"));
            }
            let sign = axis[1].signum();
            let steer = match (&c.steer_joints, &c.steer_actuators) {
                (Some(sj), Some(sa)) => {
                    let sjid = common::resolve_joint(
                        model,
                        &entity,
                        &format!("steer_joints[{k}]"),
                        &sj[k],
                    )?;
                    let said = common::resolve_position_actuator(
                        model,
                        &entity,
                        &format!("steer_actuators[{k}]"),
                        &sa[k],
                    )?;
                    let (p, _) =
                        common::rest_pose_in(model, model.jnt_bodyid()[sjid] as usize, base_body);
                    Some((JointRef::new(model, &entity, sjid), said, [p[0], p[1]]))
                }
                _ => None,
            };
            self.wheels.push(Wheel {
                joint: JointRef::new(model, &entity, j),
                actuator: a,
                sign,
                steer,
            });
        }

        self.js_joints = self.wheels.iter().map(|w| w.joint.clone()).collect();
        self.js_joints
            .extend(self.wheels.iter().filter_map(|w| w.steer.as_ref().map(|(j, _, _)| j.clone())));
        let spec = DriveSpec {
            plugin: "omni_drive",
            namespace: c.namespace.as_deref(),
            topics: &c.topics,
            stamped_cmd_vel: c.stamped_cmd_vel,
            odom_rate_hz: c.odom_rate_hz,
            joint_states: c.publish_joint_states && !self.wheels.is_empty(),
            odom_child_frame: &c.odom_child_frame,
            cmd_vel_timeout: c.cmd_vel_timeout,
            odom_noise: c.odom_noise.as_ref(),
            holonomic: true,
        };
        self.base = Some(DriveBase::configure(ctx, &self.address, &entity, spec, Vec::new())?);
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.cmd = None;
        self.twist = [0.0; 3];
        if let Some(b) = self.base.as_mut() {
            b.reset(ctx);
        }
        let steer_hold: Vec<(usize, f64)> = self
            .wheels
            .iter()
            .filter_map(|w| w.steer.as_ref().map(|(j, a, _)| (*a, ctx.data().qpos()[j.qpos])))
            .collect();
        let ctrl = ctx.data_mut().ctrl_mut();
        for &a in &self.acts {
            ctrl[a] = 0.0;
        }
        for w in &self.wheels {
            ctrl[w.actuator] = 0.0;
        }
        for (a, q) in steer_hold {
            ctrl[a] = q;
        }
        Ok(())
    }

    fn pre_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if let Some(base) = self.base.as_mut() {
            if let Some(t) = base.drain_cmd_vel(ctx)?.pop() {
                self.cmd = Some(t);
            }
            if let Some(t) = base.take_handle_command(ctx) {
                self.cmd = Some(t);
            }
            if let Some(t) = self.cfg.test_cmd {
                base.note_command(ctx);
                self.cmd = Some(t);
            }
        }
        if ctx.run.manual_control {
            return Ok(()); // a person owns ctrl (--manual-control)
        }
        if !common::entity_present(ctx, &self.entity) {
            // Absent: the planar drive would push the frozen, contact-free base away. Hold it.
            self.cmd = None;
            if let Some(b) = self.base.as_mut() {
                b.drop_command();
            }
            self.twist = [0.0; 3];
            let ctrl = ctx.data_mut().ctrl_mut();
            for a in self.acts.iter().copied().chain(self.wheels.iter().map(|w| w.actuator)) {
                ctrl[a] = 0.0;
            }
            return Ok(());
        }
        let c = &self.cfg;
        let fresh = self.base.as_ref().is_some_and(|b| b.command_fresh(ctx));
        let target = match self.cmd {
            Some(cmd) if fresh => cmd,
            _ => [0.0; 3], // no command yet, or the watchdog fired: stop (through the ramps)
        };
        let target = clamp_twist(
            target[0],
            target[1],
            target[2],
            c.max_linear_vel,
            c.max_lateral(),
            c.max_combined_linear_vel,
            c.max_angular_vel,
        );
        let (dv, dw) = (c.accel_limit * ctx.dt, c.angular_accel_limit * ctx.dt);
        self.twist = [
            ramp(self.twist[0], target[0], dv),
            ramp(self.twist[1], target[1], dv),
            ramp(self.twist[2], target[2], dw),
        ];
        let [vx, vy, wz] = self.twist;
        let yaw = self.base_yaw(ctx);
        let [wx, wy] = body_to_world(vx, vy, yaw);
        let r = c.wheel_radius;
        self.steer_now.clear();
        if c.swerve() {
            let qpos = ctx.data().qpos();
            self.steer_now.extend(
                self.wheels
                    .iter()
                    .map(|w| w.steer.as_ref().map(|(sj, _, _)| qpos[sj.qpos]).unwrap_or(0.0)),
            );
        }
        let lim = &self.limits;
        let ctrl = ctx.data_mut().ctrl_mut();
        let mut put = |a: usize, u: f64| ctrl[a] = u.clamp(lim[a][0], lim[a][1]);
        put(self.acts[0], wx);
        put(self.acts[1], wy);
        put(self.acts[2], wz);
        if c.swerve() {
            for (k, w) in self.wheels.iter().enumerate() {
                let (_, sa, p) = w.steer.as_ref().expect("swerve wheel has a steer joint");
                let (target, roll) =
                    swerve_target(vx - wz * p[1], vy + wz * p[0], self.steer_now[k]);
                put(*sa, target);
                put(w.actuator, w.sign * roll / r);
            }
        } else if !self.wheels.is_empty() {
            let speeds = mecanum_ik(vx, vy, wz, c.axis_separation / 2.0, c.wheel_separation / 2.0);
            for (w, v) in self.wheels.iter().zip(speeds) {
                put(w.actuator, w.sign * v / r);
            }
        }
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let yaw = self.base_yaw(ctx);
        let qv = &ctx.data().qvel()[self.base_dof..self.base_dof + 6];
        // Free joint: linear DOFs world-frame, angular DOFs body-frame.
        let (s, c) = yaw.sin_cos();
        let (vx, vy, wz) = (c * qv[0] + s * qv[1], -s * qv[0] + c * qv[1], qv[5]);
        match self.base.as_mut() {
            Some(b) => b.publish(ctx, [vx, vy, wz], &self.js_joints),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_trap_rotation() {
        // Pure strafe at yaw = 1 rad moves along (−sin 1, cos 1) in the world.
        let [x, y] = body_to_world(0.0, 0.5, 1.0);
        assert!((x + 0.5 * 1f64.sin()).abs() < 1e-12 && (y - 0.5 * 1f64.cos()).abs() < 1e-12);
    }

    #[test]
    fn combined_cap_scales_both() {
        let [vx, vy, wz] = clamp_twist(1.0, 1.0, 5.0, 1.0, 1.0, 0.7, 2.09);
        assert!((vx.hypot(vy) - 0.7).abs() < 1e-12 && (vx - vy).abs() < 1e-12 && wz == 2.09);
    }

    #[test]
    fn mecanum_strafe_counter_rotates() {
        let [fl, fr, rl, rr] = mecanum_ik(0.0, 1.0, 0.0, 0.244, 0.2236);
        assert_eq!([fl, fr, rl, rr], [-1.0, 1.0, 1.0, -1.0]);
    }

    #[test]
    fn swerve_picks_nearer_heading() {
        // Straight ahead from 0: no flip.
        assert_eq!(swerve_target(1.0, 0.0, 0.0), (0.0, 1.0));
        // Straight back while at 0: flip (θ+π = 0 is nearer than π), roll negated.
        let (a, r) = swerve_target(-1.0, 0.0, 0.0);
        assert!(a.abs() < 1e-12 && (r + 1.0).abs() < 1e-12);
        // Crossing straight ahead at a small negative velocity angle from a small positive angle:
        // no half-turn slew.
        let (a, r) = swerve_target(1.0, -0.01, 0.05);
        assert!((a + 0.01f64.atan()).abs() < 1e-9 && r > 0.0);
        // Sideways from 1.5 rad, target −π/2 → the nearer is +π/2 with negated roll.
        let (a, r) = swerve_target(0.0, -1.0, 1.5);
        assert!((a - PI / 2.0).abs() < 1e-12 && (r + 1.0).abs() < 1e-12);
        // Zero velocity holds the angle.
        assert_eq!(swerve_target(0.0, 0.0, 0.3), (0.3, 0.0));
    }
}
