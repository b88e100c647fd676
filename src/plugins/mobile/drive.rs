//! What the base controllers (`diff_drive`, `omni_drive`, `ackermann_drive`) share: the drive
//! base ([`DriveBase`]: the cmd_vel / odom / joint_states endpoints, the `robot:<name>` handle,
//! command intake that drops non-finite values, the command watchdog, and the odometry publish
//! with the seeded [`OdomNoise`]), the planar odometry integrator ([`Odom2d`]) and the slew
//! limiter ([`ramp`]).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::{Odometry, Payload, Transform};
use crate::context::{Claimant, Endpoint, EndpointId, Entity, FrameKeys, SimContext, TfRoute};
use crate::error::{ConfigError, HookResult};
use crate::handles::robot::{OdomState, RobotHandle};
use crate::math::yaw_quat_xyzw;
use crate::plugins::shared::{self as common, JointRef, Scope};
use crate::spawn::claim_tf;

fn one() -> f64 {
    1.0
}

/// `odom_noise`: wheel-odometry error applied to the measured velocities before they are
/// integrated (so the pose drifts rather than jitters). Draws come from
/// `ctx.rng_for(<address>)`, once per physics step.
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OdomNoise {
    /// White noise on the reported linear velocity (m/s, 1σ, per physics step; on vx and vy of a
    /// holonomic base). Default 0.
    #[serde(default)]
    pub linear_stddev: f64,
    /// White noise on the reported yaw rate (rad/s, 1σ, per physics step). Default 0.
    #[serde(default)]
    pub angular_stddev: f64,
    /// Multiplicative bias on the linear velocity (1.01 = a wheel radius stated 1 % small). Default 1.
    #[serde(default = "one")]
    pub linear_scale: f64,
    /// Multiplicative bias on the yaw rate (an effective-track error). Default 1.
    #[serde(default = "one")]
    pub angular_scale: f64,
}

impl OdomNoise {
    /// Range checks (`odom_noise.<key>`).
    pub fn validate(&self, e: &mut Vec<ConfigError>) {
        for (k, v) in
            [("linear_stddev", self.linear_stddev), ("angular_stddev", self.angular_stddev)]
        {
            if !(v >= 0.0 && v.is_finite()) {
                e.push(ConfigError::new(
                    format!("odom_noise.{k}"),
                    format!("must be >= 0 (a standard deviation), got {v}"),
                ));
            }
        }
        for (k, v) in [("linear_scale", self.linear_scale), ("angular_scale", self.angular_scale)] {
            if !(v > 0.0 && v.is_finite()) {
                e.push(ConfigError::new(
                    format!("odom_noise.{k}"),
                    format!("must be > 0 (a multiplicative bias; 1 = none), got {v}"),
                ));
            }
        }
    }
}

/// The endpoint keys every drive has, borrowed from its config.
pub struct DriveSpec<'a> {
    /// Plugin name (`diff_drive`, ...), for messages and the robot handle.
    pub plugin: &'static str,
    /// `namespace:`.
    pub namespace: Option<&'a str>,
    /// `topics:`.
    pub topics: &'a BTreeMap<String, String>,
    /// `stamped_cmd_vel:`.
    pub stamped_cmd_vel: bool,
    /// `odom_rate_hz:`.
    pub odom_rate_hz: f64,
    /// Whether a `joint_states` endpoint is published.
    pub joint_states: bool,
    /// `odom_child_frame:`.
    pub odom_child_frame: &'a str,
    /// `cmd_vel_timeout:` (s, 0 = hold the last command).
    pub cmd_vel_timeout: f64,
    /// `odom_noise:`.
    pub odom_noise: Option<&'a OdomNoise>,
    /// Holonomic base: odometry noise also on vy, and vy is reported.
    pub holonomic: bool,
}

/// Seconds of sim time between two "dropped a non-finite command" warnings.
const NONFINITE_WARN_PERIOD_S: f64 = 1.0;

/// The shared half of a drive plugin: its endpoints, robot handle, command intake with the
/// watchdog, and the odometry it integrates and publishes.
pub struct DriveBase {
    plugin: &'static str,
    address: String,
    entity: String,
    child_frame: String,
    timeout: f64,
    noise: Option<OdomNoise>,
    holonomic: bool,
    cmd_id: EndpointId,
    odom_id: EndpointId,
    js_id: Option<EndpointId>,
    /// Ids of the plugin's extra inputs, in the order given to [`DriveBase::configure`].
    pub extra_ids: Vec<EndpointId>,
    handle: RobotHandle,
    /// Sim time (s) of the newest accepted command.
    last_cmd: Option<f64>,
    /// Non-finite commands dropped since the last warning, and when that warning was.
    dropped: u64,
    last_warn: Option<f64>,
    odom: Odom2d,
    last: OdomState,
}

impl DriveBase {
    /// Add the endpoints (cmd_vel, then `extra` inputs, then odom and joint_states) and claim the
    /// `robot:<entity>` handle.
    pub fn configure(
        ctx: &mut SimContext,
        address: &str,
        entity: &Entity,
        spec: DriveSpec<'_>,
        extra: Vec<Endpoint>,
    ) -> Result<Self, String> {
        let scope = Scope::new(entity, spec.namespace);
        let topics = spec.topics;
        let cmd_type = if spec.stamped_cmd_vel {
            "geometry_msgs/msg/TwistStamped"
        } else {
            "geometry_msgs/msg/Twist"
        };
        let cmd_id = ctx.interface.add(
            scope.apply(
                Endpoint::input("cmd_vel")
                    .hint("ros2", "type", cmd_type)
                    .hint("ros2", "qos", "reliable"),
                topics,
            ),
        );
        let extra_ids =
            extra.into_iter().map(|ep| ctx.interface.add(scope.apply(ep, topics))).collect();
        let odom_id = ctx.interface.add(
            scope.apply(
                Endpoint::out("odom")
                    .rate(spec.odom_rate_hz)
                    .hint("ros2", "type", "nav_msgs/msg/Odometry")
                    .hint("ros2", "qos", "reliable"),
                topics,
            ),
        );
        let js_id = spec.joint_states.then(|| {
            ctx.interface.add(
                scope.apply(
                    Endpoint::out("joint_states")
                        .rate(spec.odom_rate_hz)
                        .hint("ros2", "type", "sensor_msgs/msg/JointState")
                        .hint("ros2", "qos", "reliable"),
                    topics,
                ),
            )
        });
        let key = common::claim_robot_key(ctx, spec.plugin, entity)?;
        // odom -> child frame goes on /tf with every odometry message: claim it.
        let t = Transform {
            parent: "odom".into(),
            child: spec.odom_child_frame.to_string(),
            ..Default::default()
        };
        let keys = FrameKeys::new(
            "odom_child_frame",
            "Give each robot its own `namespace:` on its spawn entry (its frames then take the prefix `<namespace>/`); renaming topics apart does not rename frames.",
        );
        let by = Claimant::new(address, spec.plugin);
        claim_tf(ctx, &by, TfRoute::Dynamic, &scope.frame_prefix, &[t], &keys)?;
        let handle = RobotHandle::new(&entity.name, spec.plugin);
        ctx.blackboard.set(key, handle.clone());
        Ok(DriveBase {
            plugin: spec.plugin,
            address: address.to_string(),
            entity: entity.name.clone(),
            child_frame: spec.odom_child_frame.to_string(),
            timeout: spec.cmd_vel_timeout,
            noise: spec.odom_noise.cloned(),
            holonomic: spec.holonomic,
            cmd_id,
            odom_id,
            js_id,
            extra_ids,
            handle,
            last_cmd: None,
            dropped: 0,
            last_warn: None,
            odom: Odom2d::default(),
            last: OdomState::default(),
        })
    }

    /// The odometry integrated so far (odom frame; noise included when configured).
    pub fn odometry(&self) -> OdomState {
        self.last
    }

    /// Accept a command's values when all are finite (and restart the watchdog); otherwise drop
    /// it with a warning throttled to one per second of sim time, and keep the last command.
    pub fn accept(&mut self, ctx: &SimContext, what: &str, values: &[f64]) -> bool {
        let now = ctx.sim_time();
        if values.iter().all(|v| v.is_finite()) {
            self.last_cmd = Some(now);
            return true;
        }
        self.dropped += 1;
        let due = self.last_warn.is_none_or(|t| now - t >= NONFINITE_WARN_PERIOD_S);
        if due {
            tracing::warn!(
                "{} on `{}`: dropped {} {what} command(s) with a non-finite value (latest {values:?}); the drive keeps its last valid command",
                self.plugin,
                self.entity,
                self.dropped
            );
            self.dropped = 0;
            self.last_warn = Some(now);
        }
        false
    }

    /// Drain `cmd_vel`: every finite twist as (vx, vy, wz), in arrival order.
    pub fn drain_cmd_vel(&mut self, ctx: &mut SimContext) -> Result<Vec<[f64; 3]>, String> {
        let mut out = Vec::new();
        for p in ctx.interface.drain(self.cmd_id) {
            match p {
                Payload::Twist(t) => {
                    if self.accept(ctx, "cmd_vel", &[t.linear[0], t.linear[1], t.angular[2]]) {
                        out.push([t.linear[0], t.linear[1], t.angular[2]]);
                    }
                }
                other => {
                    return Err(format!(
                        "cmd_vel received a {} payload; it takes a Twist",
                        other.kind()
                    ))
                }
            }
        }
        Ok(out)
    }

    /// The newest finite command set through the `robot:<name>` handle (vx, vy, wz).
    pub fn take_handle_command(&mut self, ctx: &SimContext) -> Option<[f64; 3]> {
        let c = self.handle.take_command()?;
        self.accept(ctx, "robot handle", &c).then_some(c)
    }

    /// `test_cmd` applied this tick (configs refuse non-finite ones); restarts the watchdog.
    pub fn note_command(&mut self, ctx: &SimContext) {
        self.last_cmd = Some(ctx.sim_time());
    }

    /// False once `cmd_vel_timeout` (> 0) has passed without a command, or before the first one.
    pub fn command_fresh(&self, ctx: &SimContext) -> bool {
        match self.last_cmd {
            None => false,
            Some(t0) => self.timeout <= 0.0 || ctx.sim_time() - t0 <= self.timeout + 1e-9,
        }
    }

    /// Forget commands and odometry (the episode restarts).
    pub fn reset(&mut self, ctx: &SimContext) {
        self.last_cmd = None;
        self.odom = Odom2d::default();
        self.last = OdomState { stamp: ctx.sim_time(), ..Default::default() };
        self.handle.reset();
    }

    /// Forget the held command (the robot is absent).
    pub fn drop_command(&mut self) {
        self.last_cmd = None;
    }

    /// After the step: corrupt the measured body twist (vx, vy, wz) by `odom_noise`, integrate
    /// it, hand it to the robot handle and publish odom (with TF) and joint_states when due.
    pub fn publish(
        &mut self,
        ctx: &mut SimContext,
        measured: [f64; 3],
        js_joints: &[JointRef],
    ) -> HookResult {
        let [mut vx, mut vy, mut wz] = measured;
        if let Some(n) = &self.noise {
            let mut rng = ctx.rng_for(&self.address).map_err(|e| e.to_string())?;
            vx = vx * n.linear_scale + rng.normal(n.linear_stddev);
            if self.holonomic {
                vy = vy * n.linear_scale + rng.normal(n.linear_stddev);
            }
            wz = wz * n.angular_scale + rng.normal(n.angular_stddev);
        }
        self.odom.integrate(vx, vy, wz, ctx.dt);
        let stamp = ctx.sim_time();
        self.last =
            OdomState { stamp, x: self.odom.x, y: self.odom.y, yaw: self.odom.yaw, vx, vy, wz };
        self.handle.set_odom(self.last);
        let tick = ctx.tick;
        if ctx.interface.is_due(self.odom_id, tick) {
            let mut twist_covariance = [0.0; 36];
            if let Some(n) = &self.noise {
                twist_covariance[0] = n.linear_stddev * n.linear_stddev;
                if self.holonomic {
                    twist_covariance[7] = n.linear_stddev * n.linear_stddev;
                }
                twist_covariance[35] = n.angular_stddev * n.angular_stddev;
            }
            let msg = Odometry {
                stamp,
                frame_id: "odom".into(),
                child_frame_id: self.child_frame.clone(),
                position: [self.odom.x, self.odom.y, 0.0],
                orientation: yaw_quat_xyzw(self.odom.yaw),
                linear: [vx, vy, 0.0],
                angular: [0.0, 0.0, wz],
                twist_covariance,
                publish_tf: true,
                ..Default::default()
            };
            ctx.interface.publish(self.odom_id, tick, Payload::Odometry(msg));
        }
        if let Some(js) = self.js_id {
            if ctx.interface.is_due(js, tick) {
                let msg = common::joint_state(ctx, js_joints);
                ctx.interface.publish(js, tick, Payload::JointState(msg));
            }
        }
        Ok(())
    }
}

/// Move `current` towards `target` by at most `max_delta` (a slew / acceleration limit applied
/// over one step); `max_delta <= 0` means no limit.
pub fn ramp(current: f64, target: f64, max_delta: f64) -> f64 {
    if max_delta <= 0.0 {
        return target;
    }
    current + (target - current).clamp(-max_delta, max_delta)
}

/// Planar dead reckoning in the `odom` frame.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Odom2d {
    /// x (m).
    pub x: f64,
    /// y (m).
    pub y: f64,
    /// Heading (rad), unwrapped.
    pub yaw: f64,
}

impl Odom2d {
    /// Advance by a body-frame twist held for `dt` seconds. The twist is integrated exactly
    /// (constant body twist = a circular arc), so a constant-curvature drive does not accumulate
    /// integration error; for a vanishing yaw change it is the midpoint rule.
    pub fn integrate(&mut self, vx: f64, vy: f64, wz: f64, dt: f64) {
        let dth = wz * dt;
        // Body-frame displacement over the step, exactly, for constant (vx, vy, wz):
        // ∫ R(wz t) v dt = [ sin(dth)/wz, -(1-cos dth)/wz ; (1-cos dth)/wz, sin(dth)/wz ] v.
        let (a, b) = if dth.abs() < 1e-9 {
            (dt * (1.0 - dth * dth / 6.0), dt * dth / 2.0)
        } else {
            (dth.sin() / wz, (1.0 - dth.cos()) / wz)
        };
        let dx_b = a * vx - b * vy;
        let dy_b = b * vx + a * vy;
        let (s, c) = self.yaw.sin_cos();
        self.x += c * dx_b - s * dy_b;
        self.y += s * dx_b + c * dy_b;
        self.yaw += dth;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arc_integration_is_exact() {
        // 1 m/s at 1 rad/s for π s: a half circle of radius 1 → (0, 2), yaw π.
        let mut o = Odom2d::default();
        let n = 1000;
        let dt = std::f64::consts::PI / n as f64;
        for _ in 0..n {
            o.integrate(1.0, 0.0, 1.0, dt);
        }
        assert!(
            o.x.abs() < 1e-9
                && (o.y - 2.0).abs() < 1e-9
                && (o.yaw - std::f64::consts::PI).abs() < 1e-12,
            "{o:?}"
        );
        // Pure strafe at yaw 0 moves along +y.
        let mut o = Odom2d::default();
        o.integrate(0.0, 0.5, 0.0, 2.0);
        assert!((o.y - 1.0).abs() < 1e-12 && o.x.abs() < 1e-12);
    }

    #[test]
    fn ramp_limits_and_unlimited() {
        assert_eq!(ramp(0.0, 1.0, 0.1), 0.1);
        assert_eq!(ramp(0.0, -1.0, 0.0), -1.0);
    }
}
