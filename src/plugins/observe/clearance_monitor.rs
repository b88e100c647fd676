//! `clearance_monitor`: how close an entity came to something it should not touch.
//!
//! Measured with MuJoCo's own `mj_geomDistance` between every watched geom (the entity's subtree,
//! or `body:`'s) and every candidate geom outside it, so the nearest LIMB of an articulated
//! obstacle is what is found and named, not its origin. MuJoCo's distance query ignores collision
//! masks, so both sides are filtered by MuJoCo's own pairing rule, read live from the model at
//! every measurement: a pair counts only when `(contype_a & conaffinity_b) || (contype_b &
//! conaffinity_a)` — a render-only geom (and an absent entity's geoms) is never clearance.
//! `ignore` (default `[floor]`) / `ignore_prefixes` never count.
//!
//! `compute_rate_hz` (default 200) is how often the distance is MEASURED and `rate_hz` (default
//! 30) how often the report is PUBLISHED: measuring is a distance query per geom pair, which every
//! physics step costs a large share of a nav world's step budget, while 200 Hz resolves ~1.5 mm at
//! walking pace. `distmax` (m, default 5) is the cutoff: beyond it a pair is not computed (MuJoCo
//! rejects it cheaply) and the report reads `current == distmax`, `saturated: true` ("at least
//! this far"). A bounding-sphere test skips a pair that cannot beat the best distance found so far
//! in the same measurement (the answer is unchanged).
//!
//! Endpoint `clearance` (out) carries a [`ClearanceReport`] `(current, minimum, at_time, geom,
//! saturated)`; `minimum` is the closest approach since the reset and `geom` names what it was to.
//! Its ROS 2 hint publishes the `current` member as a std_msgs/Float64 on `clearance`. It never
//! ends a trial. Blackboard: `clearance_monitor:<address>` holds a [`ClearanceReader`].

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::{ClearanceReport, Payload};
use crate::context::{Endpoint, EndpointId, SimContext};
use crate::engine::rates::snap_rate;
use crate::error::{ConfigError, HookResult};
use crate::plugin::check_rate;
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared::contact_watch::{check_names, default_ignore, GeomWatch};
use crate::plugins::shared::geom_name;
use crate::plugins::shared::{self as common, Scope};

/// Endpoint roles (keys of `topics:`).
pub const ROLES: [&str; 1] = ["clearance"];

fn d_distmax() -> f64 {
    5.0
}
fn d_compute() -> f64 {
    200.0
}
fn d_rate() -> f64 {
    30.0
}

/// Config of `clearance_monitor`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClearanceMonitorConfig {
    /// Base body override (the model's own name); default "": the entity's registered base body.
    #[serde(default)]
    pub body: String,
    /// Transport scope of the endpoint; default (omitted or ""): the entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Geom NAMES that never count. Default `[floor]`.
    #[serde(default)]
    pub ignore: Option<Vec<String>>,
    /// Geom name prefixes that never count.
    #[serde(default)]
    pub ignore_prefixes: Vec<String>,
    /// Cutoff (m): beyond it the distance is not computed and the report saturates. Default 5.
    #[serde(default = "d_distmax")]
    pub distmax: f64,
    /// How often the distance is MEASURED (Hz, snapped to the physics grid). Default 200.
    #[serde(default = "d_compute")]
    pub compute_rate_hz: f64,
    /// How often the endpoint is PUBLISHED (Hz). Default 30.
    #[serde(default = "d_rate")]
    pub rate_hz: f64,
    /// Topic per endpoint role (`clearance`): absolute hardwires, relative renames.
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

impl ValidateConfig for ClearanceMonitorConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if !(self.distmax > 0.0 && self.distmax.is_finite()) {
            e.push(ConfigError::new("distmax", format!("must be > 0 (m), got {}", self.distmax)));
        }
        e.extend(check_rate("compute_rate_hz", self.compute_rate_hz));
        e.extend(check_rate("rate_hz", self.rate_hz));
        e.extend(check_names("ignore", self.ignore.as_deref().unwrap_or(&[])));
        e.extend(check_names("ignore_prefixes", &self.ignore_prefixes));
        e.extend(common::check_topics(&self.topics, &ROLES));
        e
    }
}

/// In-process reader (blackboard `clearance_monitor:<address>`).
pub type ClearanceReader = crate::plugins::shared::latest::Reader<ClearanceReport>;

/// Blackboard key of the reader of the monitor at `address`.
pub fn reader_key(address: &str) -> String {
    format!("clearance_monitor:{address}")
}

/// The `clearance_monitor` plugin.
pub struct ClearanceMonitor {
    cfg: ClearanceMonitorConfig,
    address: String,
    owner: Option<String>,
    watched: Vec<usize>,
    candidates: Vec<usize>,
    /// Geoms the bounding-sphere prune must not use (planes, height fields: unbounded).
    unbounded: Vec<bool>,
    every: u64,
    report: Rc<RefCell<ClearanceReport>>,
    id: EndpointId,
    /// Pair-distance queries made by the last measurement (diagnostics).
    pub last_queries: usize,
}

impl ClearanceMonitor {
    /// Construct from config.
    pub fn new(cfg: ClearanceMonitorConfig, args: &PluginArgs) -> Self {
        let report = Rc::new(RefCell::new(Self::empty(cfg.distmax)));
        ClearanceMonitor {
            cfg,
            address: args.address.clone(),
            owner: args.owner.clone(),
            watched: Vec::new(),
            candidates: Vec::new(),
            unbounded: Vec::new(),
            every: 1,
            report,
            id: 0,
            last_queries: 0,
        }
    }

    fn empty(distmax: f64) -> ClearanceReport {
        ClearanceReport {
            stamp: 0.0,
            current: distmax,
            minimum: distmax,
            at_time: -1.0,
            geom: String::new(),
            saturated: true,
        }
    }

    /// One measurement: the smallest pairing-rule-filtered distance (m) and the candidate geom.
    fn measure(&mut self, ctx: &mut SimContext) -> (f64, Option<usize>) {
        let distmax = self.cfg.distmax;
        let mut best = distmax;
        let mut best_geom = None;
        let mut queries = 0;
        let d = ctx.data_mut();
        // SAFETY-free reads: copy what the loop needs before the &mut distance calls.
        let (ct, ca, rb): (Vec<i32>, Vec<i32>, Vec<f64>) = {
            let m = d.model();
            (m.geom_contype().to_vec(), m.geom_conaffinity().to_vec(), m.geom_rbound().to_vec())
        };
        let xpos: Vec<[f64; 3]> = d.geom_xpos().to_vec();
        for &w in &self.watched {
            if ct[w] == 0 && ca[w] == 0 {
                continue;
            }
            for &c in &self.candidates {
                if (ct[w] & ca[c]) == 0 && (ct[c] & ca[w]) == 0 {
                    continue;
                }
                if !self.unbounded[w] && !self.unbounded[c] {
                    let (a, b) = (xpos[w], xpos[c]);
                    let centre =
                        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2))
                            .sqrt();
                    if centre - rb[w] - rb[c] >= best {
                        continue;
                    }
                }
                queries += 1;
                let dist = d.geom_distance(w, c, distmax, None);
                if dist < best {
                    best = dist;
                    best_geom = Some(c);
                }
            }
        }
        self.last_queries = queries;
        (best, best_geom)
    }
}

/// The descriptor (refused at the top of a document: `requires_owner`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "clearance_monitor",
        "How close the entity came to anything it could collide with (mj_geomDistance under MuJoCo's pairing rule; ClearanceReport).",
        ClearanceMonitorConfig,
        ClearanceMonitor
    )
    .requires_owner()
}

impl Plugin for ClearanceMonitor {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let entity = common::owner_entity(ctx, "clearance_monitor", self.owner.as_deref())?;
        let ignore = self.cfg.ignore.clone().unwrap_or_else(default_ignore);
        let m = ctx.model();
        let watch = GeomWatch::resolve(
            m,
            &entity,
            &self.cfg.body,
            &ignore,
            &self.cfg.ignore_prefixes,
            self.cfg.ignore.is_some(),
        )?;
        self.watched = watch.watched_ids();
        if self.watched.is_empty() {
            return Err(format!(
                "entity `{}` has no geom to measure from (its subtree's geoms are all ignored)",
                entity.name
            ));
        }
        // Candidates: outside the entity's whole subtree (a robot is not clearance to itself).
        self.candidates = (0..watch.in_subtree.len())
            .filter(|&g| !watch.in_subtree[g] && !watch.ignored[g])
            .collect();
        self.unbounded = m
            .geom_type()
            .iter()
            .map(|t| matches!(t, MjtGeomBase::mjGEOM_PLANE | MjtGeomBase::mjGEOM_HFIELD))
            .collect();
        self.every =
            snap_rate(self.cfg.compute_rate_hz, ctx.interface.physics_hz()).every_steps.max(1);
        let scope = Scope::new(&entity, self.cfg.namespace.as_deref());
        self.id = ctx.interface.add(
            scope.apply(
                Endpoint::out("clearance")
                    .rate(self.cfg.rate_hz)
                    .hint("ros2", "type", "std_msgs/msg/Float64")
                    .hint("ros2", "field", "current")
                    .hint("ros2", "qos", "reliable"),
                &self.cfg.topics,
            ),
        );
        ctx.interface
            .bind_rate(&format!("{}/clearance (compute)", self.address), self.cfg.compute_rate_hz);
        ctx.blackboard.set(reader_key(&self.address), ClearanceReader::from(self.report.clone()));
        Ok(())
    }

    fn on_reset(&mut self, _ctx: &mut SimContext) -> HookResult {
        *self.report.borrow_mut() = Self::empty(self.cfg.distmax);
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if ctx.tick % self.every == 0 {
            let (dist, geom) = self.measure(ctx);
            let now = ctx.sim_time();
            let name = geom.map(|g| geom_name(ctx.model(), g)).unwrap_or_default();
            let mut r = self.report.borrow_mut();
            r.stamp = now;
            r.saturated = dist >= self.cfg.distmax;
            r.current = dist.min(self.cfg.distmax);
            if dist < r.minimum {
                r.minimum = dist;
                r.at_time = now;
                r.geom = name;
            }
        }
        if ctx.interface.is_due(self.id, ctx.tick) {
            let p = Payload::ClearanceReport(self.report.borrow().clone());
            let tick = ctx.tick;
            ctx.interface.publish(self.id, tick, p);
        }
        Ok(())
    }
}
