//! `ackermann_drive`: car-like steering + wheel-encoder odometry.
//!
//! A command is a forward speed and a centre steering angle δ (the yaw of a virtual wheel at the
//! centre of the front axle). `cmd_vel` (v, w) states a curvature: δ = atan(w·L / v), clamped to
//! `max_steer_angle`; with v = 0 it says nothing about the angle, so the rack holds the angle it
//! has and the car does not move. `ackermann_cmd` (AckermannDriveStamped, topic `drive`) states
//! the angle directly, so a stopped car can turn its wheels. Whichever arrived last owns the angle.
//!
//! δ slews at `steer_rate`, the speed at `accel_limit`. The two front wheels get different angles
//! (the Ackermann split over `steer_track`), the two driven wheels different speeds (the split over
//! `track`). Odometry is what the encoders say: v from the driven wheels' measured speed, the yaw
//! rate from the MEASURED steering angles through the bicycle relation w = v·tan(δ)/L — dead
//! reckoning that drifts where the tyres slip, deliberately uncorrected.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::drive::{ramp, DriveBase, DriveSpec, OdomNoise};
use crate::context::payload::Payload;
use crate::context::{Endpoint, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::handles::robot::OdomState;
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared::{self as common, JointRef};

/// Endpoint roles of `ackermann_drive` (keys of its `topics:` map).
pub const ROLES: [&str; 4] = ["cmd_vel", "ackermann_cmd", "odom", "joint_states"];

fn d_radius() -> f64 {
    0.05
}
fn d_wheelbase() -> f64 {
    0.32
}
fn d_track() -> f64 {
    0.24
}
fn d_vmax() -> f64 {
    2.0
}
fn d_steer() -> f64 {
    0.5
}
fn d_steer_rate() -> f64 {
    4.0
}
fn d_accel() -> f64 {
    2.0
}
fn d_base() -> String {
    "base_link".into()
}
fn d_rate() -> f64 {
    50.0
}
/// Config of `ackermann_drive`. Defaults are the example values (a 1:10 car).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AckermannDriveConfig {
    /// Transport scope of the endpoints; default (omitted or empty): the owning entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Driven wheel radius (m). Default 0.05.
    #[serde(default = "d_radius")]
    pub wheel_radius: f64,
    /// Front axle to rear axle (m): what turns a curvature into an angle. Default 0.32.
    #[serde(default = "d_wheelbase")]
    pub wheelbase: f64,
    /// Driven axle width (m), for the drive split. Default 0.24.
    #[serde(default = "d_track")]
    pub track: f64,
    /// Steering-axis (kingpin) separation (m), for the steer split. Default: `track`.
    #[serde(default)]
    pub steer_track: Option<f64>,
    /// Forward speed limit (m/s). Default 2.0.
    #[serde(default = "d_vmax")]
    pub max_linear_vel: f64,
    /// Centre steering angle limit (rad): the rack's limit, and the turning circle with it
    /// (minimum radius = wheelbase / tan(max_steer_angle)). Default 0.5.
    #[serde(default = "d_steer")]
    pub max_steer_angle: f64,
    /// Slew rate of the centre steering angle (rad/s); 0 = instant. Default 4.0.
    #[serde(default = "d_steer_rate")]
    pub steer_rate: f64,
    /// Ramp on the commanded speed (m/s²); 0 = instant. Default 2.0.
    #[serde(default = "d_accel")]
    pub accel_limit: f64,
    /// The two steering POSITION servos, left then right (model names).
    #[serde(default)]
    pub steer_actuators: Option<Vec<String>>,
    /// The two steering joints, left then right.
    #[serde(default)]
    pub steer_joints: Option<Vec<String>>,
    /// The two driven wheels' VELOCITY servos, left then right.
    #[serde(default)]
    pub drive_actuators: Option<Vec<String>>,
    /// The two driven wheel joints, left then right (their measured speed is the encoder).
    #[serde(default)]
    pub drive_joints: Option<Vec<String>>,
    /// The chassis body (model name); the wheelbase and tracks are checked against its geometry.
    /// Default `base_link`.
    #[serde(default = "d_base")]
    pub base_body: String,
    /// Frame the odometry TF points at: the ROOT of the robot's URDF. Default `base_link`.
    #[serde(default = "d_base")]
    pub odom_child_frame: String,
    /// Publish rate of `odom` (with its TF) and `joint_states` (Hz). Default 50.
    #[serde(default = "d_rate")]
    pub odom_rate_hz: f64,
    /// The stack publishes `geometry_msgs/TwistStamped` instead of `Twist`. Default false.
    #[serde(default)]
    pub stamped_cmd_vel: bool,
    /// Optional `[v (m/s), w (rad/s)]` applied every tick (standalone demo).
    #[serde(default)]
    pub test_cmd: Option<[f64; 2]>,
    /// Command watchdog (s): > 0 brings the car to a stop (through `accel_limit`; the rack holds
    /// its angle) when no command (cmd_vel or ackermann_cmd) arrived for this long. 0 (default)
    /// holds the last command.
    #[serde(default)]
    pub cmd_vel_timeout: f64,
    /// Publish the driven and steer joints on `joint_states`. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub publish_joint_states: bool,
    /// Optional odometry error; omitted = exact odometry, nothing drawn.
    #[serde(default)]
    pub odom_noise: Option<OdomNoise>,
    /// Topic per endpoint role (`cmd_vel`, `ackermann_cmd` (default topic `drive`), `odom`,
    /// `joint_states`).
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

impl AckermannDriveConfig {
    fn steer_track(&self) -> f64 {
        self.steer_track.unwrap_or(self.track)
    }
}

impl ValidateConfig for AckermannDriveConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        let mut pos = vec![
            ("wheel_radius", self.wheel_radius),
            ("wheelbase", self.wheelbase),
            ("track", self.track),
            ("max_linear_vel", self.max_linear_vel),
            ("odom_rate_hz", self.odom_rate_hz),
        ];
        if let Some(v) = self.steer_track {
            pos.push(("steer_track", v));
        }
        for (k, v) in pos {
            if !(v > 0.0 && v.is_finite()) {
                e.push(ConfigError::new(k, format!("must be > 0, got {v}")));
            }
        }
        if !(self.max_steer_angle > 0.0 && self.max_steer_angle < std::f64::consts::FRAC_PI_2) {
            e.push(ConfigError::new(
                "max_steer_angle",
                format!("must be in (0, π/2) rad, got {}", self.max_steer_angle),
            ));
        }
        for (k, v) in [("steer_rate", self.steer_rate), ("accel_limit", self.accel_limit)] {
            if !(v >= 0.0 && v.is_finite()) {
                e.push(ConfigError::new(k, format!("must be >= 0 (0 = instant), got {v}")));
            }
        }
        if !(self.cmd_vel_timeout >= 0.0 && self.cmd_vel_timeout.is_finite()) {
            e.push(ConfigError::new(
                "cmd_vel_timeout",
                format!("must be >= 0 (0 = off), got {}", self.cmd_vel_timeout),
            ));
        }
        if let Some(n) = &self.odom_noise {
            n.validate(&mut e);
        }
        for (k, v, what) in [
            ("steer_actuators", &self.steer_actuators, "the two steering POSITION servos"),
            ("steer_joints", &self.steer_joints, "the two steering joints"),
            ("drive_actuators", &self.drive_actuators, "the two driven wheels' VELOCITY servos"),
            ("drive_joints", &self.drive_joints, "the two driven wheel joints"),
        ] {
            match v {
                None => {
                    e.push(ConfigError::new(k, format!("missing: list {what}, left then right")))
                }
                Some(l) if l.len() != 2 => e.push(ConfigError::new(
                    k,
                    format!("needs exactly 2 names ({what}, left then right), got {}", l.len()),
                )),
                _ => {}
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
        e.extend(common::check_topics(&self.topics, &ROLES));
        e
    }
}

/// Steering angle (rad) for a curvature command (v, w) at wheelbase `l`: atan(w·l / v); `None`
/// when v = 0 (a curvature at rest says nothing about the angle).
pub fn steer_for_twist(v: f64, w: f64, l: f64) -> Option<f64> {
    (v.abs() > 1e-9).then(|| (w * l / v).atan())
}

/// Ackermann steer split: the left and right wheel angles (rad) for centre angle `delta` on a car
/// of wheelbase `l` whose steering axes are `steer_track` apart. Left positive (REP 103).
pub fn steer_split(delta: f64, l: f64, steer_track: f64) -> [f64; 2] {
    let t = delta.tan();
    let a = steer_track / 2.0;
    [(l * t).atan2(l - a * t), (l * t).atan2(l + a * t)]
}

/// Inverse of [`steer_split`] per wheel: the path curvature (1/m, left positive) the rear-axle
/// centre follows for a measured left (`left = true`) or right wheel angle.
pub fn curvature_from_wheel(angle: f64, l: f64, steer_track: f64, left: bool) -> f64 {
    let t = angle.tan();
    let a = steer_track / 2.0;
    if left {
        t / (l + a * t)
    } else {
        t / (l - a * t)
    }
}

/// Drive split: left and right driven-wheel speeds (m/s) for rear-axle speed `v` on curvature
/// `kappa` (1/m) across `track`.
pub fn drive_split(v: f64, kappa: f64, track: f64) -> [f64; 2] {
    [v * (1.0 - kappa * track / 2.0), v * (1.0 + kappa * track / 2.0)]
}

/// The `ackermann_drive` plugin.
pub struct AckermannDrive {
    cfg: AckermannDriveConfig,
    address: String,
    owner: Option<String>,
    /// Owning entity's name (resolved at configure).
    entity: String,
    steer_acts: [usize; 2],
    steer_joints: Vec<JointRef>,
    drive_acts: [usize; 2],
    drive_joints: Vec<JointRef>,
    /// Endpoints (cmd_vel, ackermann_cmd, odom, joint_states), robot handle, command intake and
    /// odometry (set at configure).
    base: Option<DriveBase>,
    /// Joints `joint_states` carries (driven, then steer).
    js_joints: Vec<JointRef>,
    /// Control range of every actuator (ctrl is clamped to it).
    limits: Vec<[f64; 2]>,
    /// Commanded speed (m/s) and centre angle (rad); optional per-command slew/accel limits.
    target_speed: f64,
    target_angle: f64,
    msg_steer_rate: f64,
    msg_accel: f64,
    /// Ramped speed (m/s) and centre angle (rad).
    speed: f64,
    angle: f64,
}

impl AckermannDrive {
    /// Construct from config.
    pub fn new(cfg: AckermannDriveConfig, args: &PluginArgs) -> Self {
        AckermannDrive {
            cfg,
            address: args.address.clone(),
            owner: args.owner.clone(),
            entity: String::new(),
            steer_acts: [0; 2],
            steer_joints: Vec::new(),
            drive_acts: [0; 2],
            drive_joints: Vec::new(),
            base: None,
            js_joints: Vec::new(),
            limits: Vec::new(),
            target_speed: 0.0,
            target_angle: 0.0,
            msg_steer_rate: 0.0,
            msg_accel: 0.0,
            speed: 0.0,
            angle: 0.0,
        }
    }

    /// The odometry integrated so far (odom frame; noise included when configured).
    pub fn odometry(&self) -> OdomState {
        self.base.as_ref().map(DriveBase::odometry).unwrap_or_default()
    }

    /// Drain cmd_vel, then ackermann_cmd, then the robot handle and `test_cmd` (non-finite
    /// commands are dropped by the base).
    fn take_commands(&mut self, ctx: &mut SimContext, base: &mut DriveBase) -> HookResult {
        for [v, _vy, w] in base.drain_cmd_vel(ctx)? {
            self.twist_command(v, w);
        }
        for p in ctx.interface.drain(base.extra_ids[0]) {
            match p {
                Payload::Ackermann(a) => {
                    let values = [
                        a.speed,
                        a.steering_angle,
                        a.steering_angle_velocity,
                        a.acceleration,
                        a.jerk,
                    ];
                    if base.accept(ctx, "ackermann_cmd", &values) {
                        self.target_speed = a.speed;
                        self.target_angle = a.steering_angle;
                        self.msg_steer_rate = a.steering_angle_velocity.abs();
                        self.msg_accel = a.acceleration.abs();
                    }
                }
                other => {
                    return Err(format!(
                        "ackermann_cmd received a {} payload; it takes an Ackermann drive",
                        other.kind()
                    ))
                }
            }
        }
        if let Some([vx, _, wz]) = base.take_handle_command(ctx) {
            self.twist_command(vx, wz);
        }
        if let Some([v, w]) = self.cfg.test_cmd {
            base.note_command(ctx);
            self.twist_command(v, w);
        }
        Ok(())
    }

    fn twist_command(&mut self, v: f64, w: f64) {
        self.target_speed = v;
        if let Some(d) = steer_for_twist(v, w, self.cfg.wheelbase) {
            self.target_angle = d;
        }
        self.msg_steer_rate = 0.0;
        self.msg_accel = 0.0;
    }
}

/// The `ackermann_drive` descriptor (refused at the top of a document: `requires_owner`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "ackermann_drive",
        "Car-like (Ackermann) steering + wheel-encoder odometry (cmd_vel and ackermann_cmd in; odom with TF, joint_states out).",
        AckermannDriveConfig,
        AckermannDrive
    )
    .requires_owner()
}

impl Plugin for AckermannDrive {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::PRE_STEP | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let entity = common::owner_entity(ctx, "ackermann_drive", self.owner.as_deref())?;
        self.entity = entity.name.clone();
        let c = &self.cfg;
        let model = ctx.model();
        self.limits = common::ctrl_limits(model);
        let base = common::resolve_body(model, &entity, "base_body", &c.base_body)?;
        let names = |v: &Option<Vec<String>>| v.clone().unwrap_or_default();
        let (sa, sj, da, dj) = (
            names(&c.steer_actuators),
            names(&c.steer_joints),
            names(&c.drive_actuators),
            names(&c.drive_joints),
        );
        let mut steer_x = [0.0; 2];
        let mut steer_y = [0.0; 2];
        let mut drive_x = [0.0; 2];
        let mut drive_y = [0.0; 2];
        for i in 0..2 {
            self.steer_acts[i] = common::resolve_position_actuator(
                model,
                &entity,
                &format!("steer_actuators[{i}]"),
                &sa[i],
            )?;
            self.drive_acts[i] = common::resolve_velocity_actuator(
                model,
                &entity,
                &format!("drive_actuators[{i}]"),
                &da[i],
            )?;
            let s = common::resolve_joint(model, &entity, &format!("steer_joints[{i}]"), &sj[i])?;
            let d = common::resolve_joint(model, &entity, &format!("drive_joints[{i}]"), &dj[i])?;
            let (ps, _) = common::rest_pose_in(model, model.jnt_bodyid()[s] as usize, base);
            let (pd, _) = common::rest_pose_in(model, model.jnt_bodyid()[d] as usize, base);
            steer_x[i] = ps[0];
            steer_y[i] = ps[1];
            drive_x[i] = pd[0];
            drive_y[i] = pd[1];
            self.steer_joints.push(JointRef::new(model, &entity, s));
            self.drive_joints.push(JointRef::new(model, &entity, d));
        }
        // Left then right: a swapped pair steers the wrong way round every corner.
        if steer_y[0] < steer_y[1] || drive_y[0] < drive_y[1] {
            return Err(format!(
                "the steer/drive lists must be left then right, but `{}`/`{}` sit right of `{}`/`{}` in `{}`'s frame; swap them",
                sj[0], dj[0], sj[1], dj[1], c.base_body
            ));
        }
        // The model's geometry against the configured numbers (a mismatch bends every odometry arc).
        let geo_wheelbase = (steer_x[0] + steer_x[1]) / 2.0 - (drive_x[0] + drive_x[1]) / 2.0;
        for (k, cfg_v, geo) in [
            ("wheelbase", c.wheelbase, geo_wheelbase),
            ("steer_track", c.steer_track(), steer_y[0] - steer_y[1]),
            ("track", c.track, drive_y[0] - drive_y[1]),
        ] {
            if (cfg_v - geo).abs() > 0.02 * geo.abs().max(1e-3) {
                tracing::warn!(
                    "ackermann_drive on `{}`: {k} is {cfg_v} m but the model's joints are {geo:.4} m apart; odometry and the splits use {cfg_v}",
                    entity.name
                );
            }
        }

        let mut ack = Endpoint::input("ackermann_cmd")
            .hint("ros2", "type", "ackermann_msgs/msg/AckermannDriveStamped")
            .hint("ros2", "qos", "reliable");
        if !c.topics.contains_key("ackermann_cmd") {
            ack = ack.hint("ros2", "topic", "drive");
        }
        let spec = DriveSpec {
            plugin: "ackermann_drive",
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
        self.base = Some(DriveBase::configure(ctx, &self.address, &entity, spec, vec![ack])?);
        self.js_joints = [&self.drive_joints[..], &self.steer_joints[..]].concat();
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.target_speed = 0.0;
        self.target_angle = 0.0;
        self.msg_steer_rate = 0.0;
        self.msg_accel = 0.0;
        self.speed = 0.0;
        self.angle = 0.0;
        if let Some(b) = self.base.as_mut() {
            b.reset(ctx);
        }
        let ctrl = ctx.data_mut().ctrl_mut();
        for a in self.steer_acts.iter().chain(self.drive_acts.iter()) {
            ctrl[*a] = 0.0;
        }
        Ok(())
    }

    fn pre_step(&mut self, ctx: &mut SimContext) -> HookResult {
        // Arrival order decides who owns the angle; cmd_vel first, so a same-step ackermann_cmd wins.
        let Some(mut base) = self.base.take() else { return Ok(()) };
        let taken = self.take_commands(ctx, &mut base);
        self.base = Some(base);
        taken?;
        if ctx.run.manual_control {
            return Ok(()); // a person owns ctrl (--manual-control)
        }
        if !common::entity_present(ctx, &self.entity) {
            // Absent: stop the drive; the rack holds the angle it has.
            self.target_speed = 0.0;
            self.speed = 0.0;
            let ctrl = ctx.data_mut().ctrl_mut();
            for a in self.drive_acts {
                ctrl[a] = 0.0;
            }
            return Ok(());
        }
        let c = &self.cfg;
        // No command yet, or the watchdog fired: stop through the ramp; the rack holds its angle.
        let fresh = self.base.as_ref().is_some_and(|b| b.command_fresh(ctx));
        let target_speed = if fresh { self.target_speed } else { 0.0 };
        let target_v = target_speed.clamp(-c.max_linear_vel, c.max_linear_vel);
        let target_d = self.target_angle.clamp(-c.max_steer_angle, c.max_steer_angle);
        // A message's own rate/accel (0 = as fast as possible) never exceeds the configured limit.
        let lim = |cfg: f64, msg: f64| match (cfg > 0.0, msg > 0.0) {
            (true, true) => cfg.min(msg),
            (true, false) => cfg,
            (false, _) => msg,
        };
        self.speed = ramp(self.speed, target_v, lim(c.accel_limit, self.msg_accel) * ctx.dt);
        self.angle = ramp(self.angle, target_d, lim(c.steer_rate, self.msg_steer_rate) * ctx.dt);
        let steer = steer_split(self.angle, c.wheelbase, c.steer_track());
        let kappa = self.angle.tan() / c.wheelbase;
        let drive = drive_split(self.speed, kappa, c.track);
        let r = c.wheel_radius;
        let lim = &self.limits;
        let ctrl = ctx.data_mut().ctrl_mut();
        for i in 0..2 {
            let (s, d) = (self.steer_acts[i], self.drive_acts[i]);
            ctrl[s] = steer[i].clamp(lim[s][0], lim[s][1]);
            ctrl[d] = (drive[i] / r).clamp(lim[d][0], lim[d][1]);
        }
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let c = &self.cfg;
        let (v, kappa) = {
            let d = ctx.data();
            let (qpos, qvel) = (d.qpos(), d.qvel());
            let v = (qvel[self.drive_joints[0].dof] + qvel[self.drive_joints[1].dof]) / 2.0
                * c.wheel_radius;
            let kl = curvature_from_wheel(
                qpos[self.steer_joints[0].qpos],
                c.wheelbase,
                c.steer_track(),
                true,
            );
            let kr = curvature_from_wheel(
                qpos[self.steer_joints[1].qpos],
                c.wheelbase,
                c.steer_track(),
                false,
            );
            (v, (kl + kr) / 2.0)
        };
        let w = v * kappa;
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
    fn split_round_trips() {
        let (l, st) = (0.3302, 0.2);
        for d in [-0.4, -0.1, 0.0, 0.2, 0.4189] {
            let [dl, dr] = steer_split(d, l, st);
            let k = d.tan() / l;
            assert!((curvature_from_wheel(dl, l, st, true) - k).abs() < 1e-12);
            assert!((curvature_from_wheel(dr, l, st, false) - k).abs() < 1e-12);
            if d > 0.0 {
                assert!(dl > d && dr < d, "inner (left) wheel steers more on a left turn");
            }
        }
        assert_eq!(steer_for_twist(0.0, 1.0, 0.33), None);
        let [vl, vr] = drive_split(1.0, 1.0, 0.2);
        assert!((vl - 0.9).abs() < 1e-12 && (vr - 1.1).abs() < 1e-12);
    }
}
