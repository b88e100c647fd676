//! `contact_impulse`: how hard the entity this entry is nested under was hit, integrated over the
//! run.
//!
//! The watched set, the qualifying rule and the `ignore` / `ignore_prefixes` filter are
//! `contact_monitor`'s (the entity's kinematic subtree or `body:`, exactly one side in it), with
//! no force threshold: every contact MuJoCo lists counts, and one carrying no force adds nothing
//! to the integral. Every physics step the qualifying contacts' normal forces are summed
//! (`normal_n`, N) and integrated (`impulse_ns` += `normal_n` · dt); `contact_time_s` grows by dt
//! in every step with a qualifying contact (contact_monitor's notion of touching, which lasts
//! longer than force is transmitted: MuJoCo still lists a pair overlapping on the way apart, at
//! zero force); `peak_normal_n` is the largest step's `normal_n`, `peak_time` its time (-1.0 if
//! nothing was touched) and `peak_geom_a` / `peak_geom_b` that step's strongest single contact
//! (the entity's geom first). There is no compute-rate knob: decimating would drop samples the
//! integral is made of.
//!
//! Endpoint `contact_impulse` (out, `rate_hz`: the RUNNING TOTAL leaves at that rate, the
//! integral is not rate-limited) carries a [`ContactImpulseReport`]; its ROS 2 hint publishes
//! `impulse_ns` as std_msgs/Float64 on `contact_impulse`. Blackboard `contact_impulse:<address>`
//! holds a [`ContactImpulseReader`]. `on_reset` zeroes the totals, and so does the entity gaining
//! presence (`reset_on_spawn`, default true); a SetEntityState resets nothing. It never ends a
//! trial.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::{ContactImpulseReport, Payload};
use crate::context::{EndpointId, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::plugin::{check_rate, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared::contact_watch::{
    check_names, is_present, watch_keys_of, GeomWatch, SpawnEdge,
};
use crate::plugins::shared::report::{publish_due, ReportEndpoint};
use crate::plugins::shared::{self as common, geom_name};

/// Endpoint roles (keys of `topics:`).
pub const ROLES: [&str; 1] = ["contact_impulse"];

fn d_rate() -> f64 {
    30.0
}

/// Config of `contact_impulse`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContactImpulseConfig {
    /// Base body override (the model's own name); default "": the entity's registered base body.
    #[serde(default)]
    pub body: String,
    /// Transport scope of the endpoint; default (omitted or ""): the entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Geom NAMES that never count. Default `[floor]`.
    #[serde(default)]
    pub ignore: Option<Vec<String>>,
    /// Geom name prefixes that never count (e.g. `[ground]`). Default none.
    #[serde(default)]
    pub ignore_prefixes: Vec<String>,
    /// Spawning the watched entity (it gains presence) restarts the integral. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub reset_on_spawn: bool,
    /// Publish rate of the running total (Hz); the integral itself runs every step. Default 30.
    #[serde(default = "d_rate")]
    pub rate_hz: f64,
    /// Topic per endpoint role (`contact_impulse`): absolute hardwires, relative renames.
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

impl ValidateConfig for ContactImpulseConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        e.extend(check_rate("rate_hz", self.rate_hz));
        e.extend(check_names("ignore", self.ignore.as_deref().unwrap_or(&[])));
        e.extend(check_names("ignore_prefixes", &self.ignore_prefixes));
        e.extend(common::check_topics(&self.topics, &ROLES));
        e
    }
}

/// In-process reader of the report (blackboard `contact_impulse:<address>`).
pub type ContactImpulseReader = crate::plugins::shared::latest::Reader<ContactImpulseReport>;

/// Blackboard key of the reader of the integrator at `address`.
pub fn reader_key(address: &str) -> String {
    format!("contact_impulse:{address}")
}

fn empty_report() -> ContactImpulseReport {
    ContactImpulseReport {
        stamp: 0.0,
        impulse_ns: 0.0,
        peak_normal_n: 0.0,
        contact_time_s: 0.0,
        normal_n: 0.0,
        count: 0,
        peak_time: -1.0,
        peak_geom_a: String::new(),
        peak_geom_b: String::new(),
    }
}

/// The `contact_impulse` plugin.
pub struct ContactImpulse {
    cfg: ContactImpulseConfig,
    address: String,
    owner: Option<String>,
    watch: GeomWatch,
    report: Rc<RefCell<ContactImpulseReport>>,
    spawn: SpawnEdge,
    id: EndpointId,
}

impl ContactImpulse {
    /// Construct from config.
    pub fn new(cfg: ContactImpulseConfig, args: &PluginArgs) -> Self {
        ContactImpulse {
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
        "contact_impulse",
        "How hard the entity it is nested under was hit: the normal-force impulse integrated every step (impulse_ns as std_msgs/Float64 on contact_impulse).",
        ContactImpulseConfig,
        ContactImpulse
    )
    .requires_owner()
}

impl Plugin for ContactImpulse {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let (watch, _, scope) = GeomWatch::for_owner(
            ctx,
            "contact_impulse",
            self.owner.as_deref(),
            watch_keys_of!(self.cfg),
        )?;
        self.watch = watch;
        self.id = ReportEndpoint {
            role: "contact_impulse",
            ros_type: "std_msgs/msg/Float64",
            field: Some("impulse_ns"),
            reliable: true,
            topic: "contact_impulse",
        }
        .add(ctx, &scope, self.cfg.rate_hz, &self.cfg.topics);
        ctx.blackboard
            .set(reader_key(&self.address), ContactImpulseReader::from(self.report.clone()));
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
        let hits = if present { self.watch.contacts(ctx, 0.0) } else { Vec::new() };
        let (now, dt) = (ctx.sim_time(), ctx.dt);
        {
            let mut r = self.report.borrow_mut();
            let normal: f64 = hits.iter().map(|h| h.3).sum();
            r.stamp = now;
            r.count = hits.len() as u32;
            r.normal_n = normal;
            r.impulse_ns += normal * dt;
            if !hits.is_empty() {
                r.contact_time_s += dt;
            }
            if normal > r.peak_normal_n {
                let strongest = hits.iter().max_by(|a, b| a.3.total_cmp(&b.3)).copied();
                if let Some((_, w, o, _)) = strongest {
                    r.peak_normal_n = normal;
                    r.peak_time = now;
                    r.peak_geom_a = geom_name(ctx.model(), w);
                    r.peak_geom_b = geom_name(ctx.model(), o);
                }
            }
        }
        publish_due(ctx, self.id, || Payload::ContactImpulseReport(self.report.borrow().clone()));
        Ok(())
    }
}
