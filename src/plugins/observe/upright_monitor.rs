//! `upright_monitor`: did a body a trial drives in the plane stop being in the plane.
//!
//! Two departures, both judged only after `settle_s` of sim time (default 0.5 s), the moment the
//! reference height is taken — where the body SETTLED, not where it was spawned, so a body
//! dropped onto the floor is not a departure:
//! - tilt: the angle (deg) between the body's own +z and world +z exceeds `max_tilt_deg`
//!   (default 30). It says nothing about yaw: turning on the spot is what a planar trial does;
//! - rise: the body's height departs from the reference by more than `max_rise_m` (m, default
//!   0.10), EITHER way — sinking through the floor leaves the plane as much as taking off.
//!
//! With `latch` (default) a fallen verdict stays until `on_reset` (a trial is failed, not
//! un-failed). The reference is measured per episode. Endpoint `upright` (out) carries an
//! [`UprightReport`]; its ROS 2 hint publishes the `upright` member as a std_msgs/Bool on
//! `upright` (relative: scoped by the entity's namespace). Blackboard:
//! `upright_monitor:<address>` holds an [`UprightReader`]. It reports; it never ends a trial.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::{Payload, UprightReport};
use crate::context::{Endpoint, EndpointId, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::plugin::check_rate;
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared::{self as common, Scope};

/// Endpoint roles (keys of `topics:`).
pub const ROLES: [&str; 1] = ["upright"];

fn d_tilt() -> f64 {
    30.0
}
fn d_rise() -> f64 {
    0.10
}
fn d_settle() -> f64 {
    0.5
}
fn d_rate() -> f64 {
    30.0
}
/// Config of `upright_monitor`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UprightMonitorConfig {
    /// Base body override (the model's own name); default "": the entity's registered base body.
    #[serde(default)]
    pub body: String,
    /// Degrees the body's own +z may lean from world +z. Default 30.
    #[serde(default = "d_tilt")]
    pub max_tilt_deg: f64,
    /// Metres its height may depart from where it settled, either way. Default 0.10.
    #[serde(default = "d_rise")]
    pub max_rise_m: f64,
    /// Sim time (s) to let the body come to rest before judging it; the reference height is
    /// taken then. Default 0.5; 0 judges from the first step.
    #[serde(default = "d_settle")]
    pub settle_s: f64,
    /// Transport scope of the endpoint; default (omitted or ""): the entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Once fallen, stay fallen until on_reset. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub latch: bool,
    /// Endpoint publish rate (Hz). Default 30.
    #[serde(default = "d_rate")]
    pub rate_hz: f64,
    /// Topic per endpoint role (`upright`).
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

impl ValidateConfig for UprightMonitorConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if !(self.max_tilt_deg > 0.0 && self.max_tilt_deg <= 180.0) {
            e.push(ConfigError::new(
                "max_tilt_deg",
                format!("must be within (0, 180] (deg), got {}", self.max_tilt_deg),
            ));
        }
        if !(self.max_rise_m > 0.0 && self.max_rise_m.is_finite()) {
            e.push(ConfigError::new(
                "max_rise_m",
                format!("must be > 0 (m), got {}", self.max_rise_m),
            ));
        }
        if !(self.settle_s >= 0.0 && self.settle_s.is_finite()) {
            e.push(ConfigError::new(
                "settle_s",
                format!("must be a finite number >= 0 (s), got {}", self.settle_s),
            ));
        }
        e.extend(check_rate("rate_hz", self.rate_hz));
        e.extend(common::check_topics(&self.topics, &ROLES));
        e
    }
}

/// In-process reader (blackboard `upright_monitor:<address>`).
pub type UprightReader = crate::plugins::shared::latest::Reader<UprightReport>;

/// Blackboard key of the reader of the monitor at `address`.
pub fn reader_key(address: &str) -> String {
    format!("upright_monitor:{address}")
}

fn fresh() -> UprightReport {
    UprightReport {
        stamp: 0.0,
        upright: true,
        settled: false,
        tilt_deg: 0.0,
        rise_m: 0.0,
        reference_z: f64::NAN,
        fallen_time: -1.0,
        reason: String::new(),
    }
}

/// The `upright_monitor` plugin.
pub struct UprightMonitor {
    cfg: UprightMonitorConfig,
    address: String,
    owner: Option<String>,
    body: usize,
    /// Sim time of the episode's start (a state-only reset keeps sim time running).
    start: f64,
    report: Rc<RefCell<UprightReport>>,
    id: EndpointId,
}

impl UprightMonitor {
    /// Construct from config.
    pub fn new(cfg: UprightMonitorConfig, args: &PluginArgs) -> Self {
        UprightMonitor {
            cfg,
            address: args.address.clone(),
            owner: args.owner.clone(),
            body: 0,
            start: 0.0,
            report: Rc::new(RefCell::new(fresh())),
            id: 0,
        }
    }
}

/// The descriptor (refused at the top of a document: `requires_owner`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "upright_monitor",
        "Did the entity's base tilt past max_tilt_deg or leave its settled height (UprightReport; upright as std_msgs/Bool).",
        UprightMonitorConfig,
        UprightMonitor
    )
    .requires_owner()
}

impl Plugin for UprightMonitor {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let entity = common::owner_entity(ctx, "upright_monitor", self.owner.as_deref())?;
        self.body = common::resolve_body(ctx.model(), &entity, "body", &self.cfg.body)?;
        let scope = Scope::new(&entity, self.cfg.namespace.as_deref());
        self.id = ctx.interface.add(
            scope.apply(
                Endpoint::out("upright")
                    .rate(self.cfg.rate_hz)
                    .hint("ros2", "type", "std_msgs/msg/Bool")
                    .hint("ros2", "field", "upright")
                    .hint("ros2", "qos", "reliable"),
                &self.cfg.topics,
            ),
        );
        ctx.blackboard.set(reader_key(&self.address), UprightReader::from(self.report.clone()));
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        *self.report.borrow_mut() = fresh();
        self.start = ctx.sim_time();
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let now = ctx.sim_time();
        let (z, zz) = {
            let d = ctx.data();
            (d.xpos()[self.body][2], d.xmat()[self.body][8])
        };
        {
            let mut r = self.report.borrow_mut();
            r.stamp = now;
            r.tilt_deg = zz.clamp(-1.0, 1.0).acos().to_degrees();
            if !r.settled && now - self.start >= self.cfg.settle_s - 0.5 * ctx.dt {
                r.settled = true;
                r.reference_z = z;
            }
            if r.settled {
                r.rise_m = z - r.reference_z;
                let reason = if r.tilt_deg > self.cfg.max_tilt_deg {
                    Some(format!("tilt {:.1} deg > {} deg", r.tilt_deg, self.cfg.max_tilt_deg))
                } else if r.rise_m.abs() > self.cfg.max_rise_m {
                    Some(format!("rise {:+.3} m beyond {} m", r.rise_m, self.cfg.max_rise_m))
                } else {
                    None
                };
                match reason {
                    Some(why) if r.upright => {
                        r.upright = false;
                        r.fallen_time = now;
                        r.reason = why;
                    }
                    Some(_) => {}
                    None if !self.cfg.latch => {
                        r.upright = true;
                        r.reason.clear();
                    }
                    None => {}
                }
            }
        }
        if ctx.interface.is_due(self.id, ctx.tick) {
            let p = Payload::UprightReport(self.report.borrow().clone());
            let tick = ctx.tick;
            ctx.interface.publish(self.id, tick, p);
        }
        Ok(())
    }
}
