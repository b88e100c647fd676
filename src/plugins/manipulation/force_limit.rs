//! `force_limit`: stop when a measured wrench exceeds what the task allows.
//!
//! Every step after `settle_s` (while a reset transient decays) it reads the force/torque sensor
//! labelled `ft` (blackboard `ft:<label>`, the same tared, noisy wrench the sensor publishes) and
//! compares the force magnitude with `max_force` (N) and the torque magnitude with `max_torque`
//! (N·m); 0 disables either. The first step a magnitude is above its limit trips the stop:
//! - the [`LimitReport`] records the sim time (`at_time`) and both magnitudes at that step, and a
//!   `reason` led by `reports_as` (`protective_stop: force 41.3 N > 40 N`);
//! - `release_controllers`: every active controller of the entity that claims a command
//!   interface is deactivated in its controller registry (stamped with the trip time), the way a
//!   stop ends the motion. `arm_controller` stays the writer of the actuators, as a drive keeps its
//!   brakes: from the next step its joints hold the position measured then, a running trajectory
//!   goal is aborted, and a Cartesian controller's targets are no longer pulled. Nothing is
//!   re-activated by the limit; a `switch_controller` (or a reset) brings them back;
//! - `stop_run`: the run is asked to end (`ctx.request_stop`, reason as above).
//!
//! With `latch` (default) the trip stays until a reset (a trial is failed, not un-failed); without,
//! `tripped` clears once both magnitudes are back under their limits (`at_time` keeps the first
//! trip). It is not a controller and is not listed as one: on a real arm such a stop comes from
//! the controller box and shows up in the vendor's status interface, which `reports_as` names.
//!
//! Endpoint `force_limit` (out, at `rate_hz`) carries the [`LimitReport`]; its ROS 2 hint
//! publishes the `tripped` member as std_msgs/Bool. Blackboard: `force_limit:<address>` holds a
//! [`LimitReader`].

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::{LimitReport, Payload};
use crate::context::{Endpoint, EndpointId, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::handles::controllers::{Registry, BEST_EFFORT};
use crate::handles::wrench::{reader_key as ft_key, WrenchReader};
use crate::math::vec3;
use crate::plugin::{check_rate, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared::{self as common, Scope};

/// Endpoint roles (keys of `topics:`).
pub const ROLES: [&str; 1] = ["force_limit"];

fn d_ft() -> String {
    "ft".into()
}
fn d_force() -> f64 {
    40.0
}
fn d_reports_as() -> String {
    "protective_stop".into()
}
fn d_rate() -> f64 {
    30.0
}

/// Config of `force_limit` (a component of the entity whose wrench is watched).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForceLimitConfig {
    /// Label of the force_torque sensor whose wrench is watched (blackboard `ft:<label>`).
    /// Default `ft`.
    #[serde(default = "d_ft")]
    pub ft: String,
    /// Limit on the measured force magnitude (N); 0 disables. Default 40.
    #[serde(default = "d_force")]
    pub max_force: f64,
    /// Limit on the measured torque magnitude (N·m); 0 disables. Default 0.
    #[serde(default)]
    pub max_torque: f64,
    /// Sim time (s) after each reset during which nothing trips (a reset transient decays).
    /// Default 0.
    #[serde(default)]
    pub settle_s: f64,
    /// Once tripped, stay tripped until reset. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub latch: bool,
    /// Ask the driver to end the run at the trip. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub stop_run: bool,
    /// Deactivate the entity's controllers that command it (hold the measured position) at the
    /// trip. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub release_controllers: bool,
    /// The word the report's reason starts with: what this robot's own interface calls such a
    /// stop. Default `protective_stop`.
    #[serde(default = "d_reports_as")]
    pub reports_as: String,
    /// Endpoint publish rate (Hz). Default 30.
    #[serde(default = "d_rate")]
    pub rate_hz: f64,
    /// Transport scope; default: the owning entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Topic per endpoint role (`force_limit`).
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

impl ValidateConfig for ForceLimitConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if self.ft.trim().is_empty() {
            e.push(ConfigError::new(
                "ft",
                "is empty: name the force_torque sensor whose wrench is watched (its label, blackboard ft:<label>)",
            ));
        }
        for (k, v, unit) in
            [("max_force", self.max_force, "N"), ("max_torque", self.max_torque, "N·m")]
        {
            if !(v.is_finite() && v >= 0.0) {
                e.push(ConfigError::new(
                    k,
                    format!(
                        "must be a finite number >= 0 ({unit}; 0 disables), got {}",
                        crate::error::num(v)
                    ),
                ));
            }
        }
        if self.max_force == 0.0 && self.max_torque == 0.0 {
            e.push(ConfigError::new(
                "max_force",
                "max_force and max_torque are both 0, so nothing is watched; set a limit on one of them",
            ));
        }
        if !(self.settle_s.is_finite() && self.settle_s >= 0.0) {
            e.push(ConfigError::new(
                "settle_s",
                format!(
                    "must be a finite number >= 0 (s), got {}",
                    crate::error::num(self.settle_s)
                ),
            ));
        }
        if self.reports_as.trim().is_empty() {
            e.push(ConfigError::new(
                "reports_as",
                "is empty: the word the report's reason starts with (e.g. protective_stop)",
            ));
        }
        e.extend(check_rate("rate_hz", self.rate_hz));
        e.extend(common::check_topics(&self.topics, &ROLES));
        e
    }
}

/// In-process reader of a force limit (blackboard `force_limit:<address>`).
pub type LimitReader = crate::plugins::shared::latest::Reader<LimitReport>;

/// Blackboard key of the reader of the force limit at `address`.
pub fn reader_key(address: &str) -> String {
    format!("force_limit:{address}")
}

fn fresh() -> LimitReport {
    LimitReport {
        stamp: 0.0,
        tripped: false,
        reason: String::new(),
        at_time: -1.0,
        force: 0.0,
        torque: 0.0,
    }
}

/// The `force_limit` plugin.
pub struct ForceLimit {
    cfg: ForceLimitConfig,
    address: String,
    owner: Option<String>,
    entity: String,
    reader: Option<WrenchReader>,
    /// Sim time of the episode's start.
    start: f64,
    report: Rc<RefCell<LimitReport>>,
    id: EndpointId,
}

impl ForceLimit {
    /// Construct from config.
    pub fn new(cfg: ForceLimitConfig, args: &PluginArgs) -> Self {
        ForceLimit {
            cfg,
            address: args.address.clone(),
            owner: args.owner.clone(),
            entity: String::new(),
            reader: None,
            start: 0.0,
            report: Rc::new(RefCell::new(fresh())),
            id: 0,
        }
    }

    /// Deactivate every active controller of the entity that claims a command interface.
    fn release(&self, ctx: &SimContext, now: f64) -> Vec<String> {
        let Some(reg) = Registry::get(ctx, &self.entity) else { return Vec::new() };
        let driving: Vec<String> = reg
            .list()
            .into_iter()
            .filter(|c| !c.claimed_interfaces.is_empty())
            .map(|c| c.name)
            .collect();
        if driving.is_empty() {
            return driving;
        }
        match reg.switch(&[], &driving, BEST_EFFORT, now) {
            Ok(rep) => rep.deactivated,
            Err(e) => {
                tracing::warn!("[{}] could not release the controllers: {e}", self.address);
                Vec::new()
            }
        }
    }
}

/// The descriptor (refused at the top of a document: `requires_owner`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "force_limit",
        "Protective stop on a measured wrench above max_force / max_torque: latches, releases the arm's controllers, asks the run to stop (LimitReport; tripped as std_msgs/Bool).",
        ForceLimitConfig,
        ForceLimit
    )
    .requires_owner()
}

impl Plugin for ForceLimit {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let entity = common::owner_entity(ctx, "force_limit", self.owner.as_deref())?;
        self.entity = entity.name.clone();
        let key = ft_key(&self.cfg.ft);
        let reader = ctx.blackboard.get::<WrenchReader>(&key).cloned().map_err(|_| {
            let known: Vec<&str> = ctx
                .blackboard
                .keys()
                .filter_map(|k| k.strip_prefix("ft:"))
                .collect();
            format!(
                "ft: no force_torque sensor labelled `{}` is configured before this force_limit (blackboard `{key}`); \
                 list the force_torque entry (name: {}) before it. Sensors configured so far: [{}]",
                self.cfg.ft,
                self.cfg.ft,
                known.join(", ")
            )
        })?;
        self.reader = Some(reader);
        let scope = Scope::new(&entity, self.cfg.namespace.as_deref());
        self.id = ctx.interface.add(
            scope.apply(
                Endpoint::out("force_limit")
                    .rate(self.cfg.rate_hz)
                    .hint("ros2", "type", "std_msgs/msg/Bool")
                    .hint("ros2", "field", "tripped")
                    .hint("ros2", "qos", "reliable"),
                &self.cfg.topics,
            ),
        );
        ctx.blackboard.set(reader_key(&self.address), LimitReader::from(self.report.clone()));
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        *self.report.borrow_mut() = fresh();
        self.start = ctx.sim_time();
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let now = ctx.sim_time();
        let reader = self.reader.as_ref().ok_or("force_limit: post_step before configure")?;
        let judged = now - self.start >= self.cfg.settle_s - 0.5 * ctx.dt;
        let mut tripped_now: Option<String> = None;
        if judged {
            let w = reader.read(ctx)?;
            let (f, t) = (vec3(&w.force).norm(), vec3(&w.torque).norm());
            let over = if self.cfg.max_force > 0.0 && f > self.cfg.max_force {
                Some(format!("force {f:.2} N > {} N", self.cfg.max_force))
            } else if self.cfg.max_torque > 0.0 && t > self.cfg.max_torque {
                Some(format!("torque {t:.2} N·m > {} N·m", self.cfg.max_torque))
            } else {
                None
            };
            let mut r = self.report.borrow_mut();
            match over {
                Some(why) if !r.tripped => {
                    r.tripped = true;
                    r.reason = format!("{}: {why}", self.cfg.reports_as);
                    if r.at_time < 0.0 {
                        r.at_time = now;
                        r.force = f;
                        r.torque = t;
                    }
                    tripped_now = Some(r.reason.clone());
                }
                None if r.tripped && !self.cfg.latch => {
                    r.tripped = false;
                    r.reason.clear();
                }
                _ => {}
            }
        }
        self.report.borrow_mut().stamp = now;
        if let Some(reason) = tripped_now {
            let released =
                if self.cfg.release_controllers { self.release(ctx, now) } else { Vec::new() };
            tracing::warn!(
                "[{}] {reason} at t = {now:.4} s; released controllers [{}]",
                self.address,
                released.join(", ")
            );
            if self.cfg.stop_run {
                ctx.request_stop(format!("{}: {reason} at t = {now:.4} s", self.address));
            }
        }
        if ctx.interface.is_due(self.id, ctx.tick) {
            let p = Payload::LimitReport(self.report.borrow().clone());
            let tick = ctx.tick;
            ctx.interface.publish(self.id, tick, p);
        }
        Ok(())
    }
}
