//! `contact_monitor`: report when an entity touches something it should not.
//!
//! The watched set is the kinematic subtree of the entity this entry is nested under (or of
//! `body:`): for a mobile base the chassis plus its wheels, so a wheel clipping a box counts as
//! much as the bumper does. A contact qualifies when exactly one of its geoms is in that subtree,
//! the other is not ignored (`ignore`, default `[floor]`; `ignore_prefixes`), and its normal force
//! reaches `min_force` (N) — below that it is numerical grazing.
//!
//! Endpoint `contact` (out) carries a [`ContactReport`] `(in_contact, first_time, count, geom_a,
//! geom_b)`; its ROS 2 hint publishes the `in_contact` member as a std_msgs/Bool on the relative
//! topic `collision` (scoped by the entity's namespace). `first_time` is the sim time of the first
//! qualifying contact since the reset (-1.0 if none) and `geom_a`/`geom_b` name that contact (the
//! entity's geom first), so a failure is attributable. With `latch` (default) `in_contact` stays
//! true until `on_reset`: a trial is failed, not un-failed. `count` is the current step's
//! qualifying contacts.
//!
//! `reset_on_spawn` (default true) restarts the report when the entity GAINS presence; a
//! SetEntityState (a pose and a twist) resets nothing. Blackboard: `contact_monitor:<address>`
//! holds a [`ContactReader`] of the report, current every step.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::{ContactReport, Payload};
use crate::context::{EndpointId, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::plugin::check_rate;
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared::contact_watch::{
    check_names, is_present, watch_keys_of, GeomWatch, SpawnEdge,
};
use crate::plugins::shared::report::{publish_due, ReportEndpoint};
use crate::plugins::shared::{self as common, geom_name};

/// Endpoint roles (keys of `topics:`).
pub const ROLES: [&str; 1] = ["contact"];

fn d_min_force() -> f64 {
    1.0
}
fn d_rate() -> f64 {
    30.0
}
/// Config of `contact_monitor`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContactMonitorConfig {
    /// Base body override (the model's own name); default "": the entity's registered base body.
    #[serde(default)]
    pub body: String,
    /// Transport scope of the endpoint; default (omitted or ""): the entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Geom NAMES that never count as a collision. Default `[floor]`.
    #[serde(default)]
    pub ignore: Option<Vec<String>>,
    /// Geom name prefixes that never count (e.g. `[ground]`). Default none.
    #[serde(default)]
    pub ignore_prefixes: Vec<String>,
    /// Contacts below this normal force (N) are ignored (numerical grazing). Default 1.0.
    #[serde(default = "d_min_force")]
    pub min_force: f64,
    /// Once true, stay true until on_reset (a trial is failed, not un-failed). Default true.
    #[serde(default = "crate::plugin::yes")]
    pub latch: bool,
    /// Spawning the watched entity (it gains presence) restarts the report. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub reset_on_spawn: bool,
    /// Endpoint publish rate (Hz). Default 30.
    #[serde(default = "d_rate")]
    pub rate_hz: f64,
    /// Topic per endpoint role (`contact`; default topic `collision`): absolute hardwires,
    /// relative renames.
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

impl ValidateConfig for ContactMonitorConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if !(self.min_force >= 0.0 && self.min_force.is_finite()) {
            e.push(ConfigError::new(
                "min_force",
                format!("must be a finite number >= 0 (N), got {}", self.min_force),
            ));
        }
        e.extend(check_rate("rate_hz", self.rate_hz));
        e.extend(check_names("ignore", self.ignore.as_deref().unwrap_or(&[])));
        e.extend(check_names("ignore_prefixes", &self.ignore_prefixes));
        e.extend(common::check_topics(&self.topics, &ROLES));
        e
    }
}

/// In-process reader of a contact monitor's report (blackboard `contact_monitor:<address>`).
pub type ContactReader = crate::plugins::shared::latest::Reader<ContactReport>;

/// Blackboard key of the reader of the monitor at `address`.
pub fn reader_key(address: &str) -> String {
    format!("contact_monitor:{address}")
}

fn empty_report() -> ContactReport {
    ContactReport {
        stamp: 0.0,
        in_contact: false,
        first_time: -1.0,
        count: 0,
        geom_a: String::new(),
        geom_b: String::new(),
    }
}

/// The `contact_monitor` plugin.
pub struct ContactMonitor {
    cfg: ContactMonitorConfig,
    address: String,
    owner: Option<String>,
    watch: GeomWatch,
    report: Rc<RefCell<ContactReport>>,
    spawn: SpawnEdge,
    id: EndpointId,
}

impl ContactMonitor {
    /// Construct from config.
    pub fn new(cfg: ContactMonitorConfig, args: &PluginArgs) -> Self {
        ContactMonitor {
            cfg,
            address: args.address.clone(),
            owner: args.owner.clone(),
            watch: GeomWatch::default(),
            report: Rc::new(RefCell::new(empty_report())),
            spawn: SpawnEdge::default(),
            id: 0,
        }
    }
}

/// The descriptor (refused at the top of a document: `requires_owner`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "contact_monitor",
        "Did the entity it is nested under touch something it should not (latched ContactReport; in_contact as std_msgs/Bool on collision).",
        ContactMonitorConfig,
        ContactMonitor
    )
    .requires_owner()
}

impl Plugin for ContactMonitor {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let (watch, _, scope) = GeomWatch::for_owner(
            ctx,
            "contact_monitor",
            self.owner.as_deref(),
            watch_keys_of!(self.cfg),
        )?;
        self.watch = watch;
        self.id = ReportEndpoint {
            role: "contact",
            ros_type: "std_msgs/msg/Bool",
            field: Some("in_contact"),
            reliable: true,
            topic: "collision",
        }
        .add(ctx, &scope, self.cfg.rate_hz, &self.cfg.topics);
        ctx.blackboard.set(reader_key(&self.address), ContactReader::from(self.report.clone()));
        Ok(())
    }

    fn on_reset(&mut self, _ctx: &mut SimContext) -> HookResult {
        *self.report.borrow_mut() = empty_report();
        self.spawn.clear();
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let present = is_present(ctx, &self.watch.entity);
        if self.spawn.gained(present) && self.cfg.reset_on_spawn {
            *self.report.borrow_mut() = empty_report();
        }
        let hits = if present { self.watch.contacts(ctx, self.cfg.min_force) } else { Vec::new() };
        let now = ctx.sim_time();
        {
            let mut r = self.report.borrow_mut();
            r.stamp = now;
            r.count = hits.len() as u32;
            if let Some(&(_, w, o, _)) = hits.first() {
                if r.first_time < 0.0 {
                    r.first_time = now;
                    r.geom_a = geom_name(ctx.model(), w);
                    r.geom_b = geom_name(ctx.model(), o);
                }
            }
            r.in_contact = if self.cfg.latch { r.first_time >= 0.0 } else { !hits.is_empty() };
        }
        publish_due(ctx, self.id, || Payload::ContactReport(self.report.borrow().clone()));
        Ok(())
    }
}
