//! `contact_location`: where the entity this entry is nested under is being touched, every step.
//!
//! Qualifying contacts are `contact_monitor`'s (the entity's kinematic subtree or `body:`, exactly
//! one side in it, the other not ignored, normal force ≥ `min_force` N). Their points are merged
//! into sensing areas: a contact within `merge_radius` (m) of an area's centre joins it (the
//! centre is its members' mean), else it starts a new one. One area is a `point` at its centre
//! (`extent` 0.0); two or more are a `line` whose centre is the mean of the areas' centres and
//! whose `extent` is the distance between the two furthest areas; no contact is `none` (the
//! centre then reads 0, 0, 0). `frame: base` (default) reports in the watched body's own frame
//! (`frame_id` its model name), which makes a reading independent of where the robot stands;
//! `frame: world` in world coordinates (`frame_id` `world`).
//!
//! `compute_rate_hz` decimates the computation (0, the default: every physics step — a contact
//! shorter than the interval is simply missed otherwise); `rate_hz` is the publish rate. Endpoint
//! `contact_location` (out) carries a [`ContactLocation`]; its ROS 2 hint publishes the centre as
//! geometry_msgs/PointStamped on `contact_location`. Blackboard `contact_location:<address>` holds
//! a [`ContactLocationReader`], current at every computation.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::{ContactLocation, Payload};
use crate::context::{EndpointId, SimContext};
use crate::error::{num, ConfigError, HookResult};
use crate::plugin::{check_rate, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared as common;
use crate::plugins::shared::contact_watch::{check_names, is_present, watch_keys_of, GeomWatch};
use crate::plugins::shared::report::{publish_due, ReportEndpoint};

/// Endpoint roles (keys of `topics:`).
pub const ROLES: [&str; 1] = ["contact_location"];

fn d_min_force() -> f64 {
    1.0
}
fn d_merge() -> f64 {
    0.02
}
fn d_frame() -> String {
    "base".into()
}
fn d_rate() -> f64 {
    30.0
}

/// Config of `contact_location`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContactLocationConfig {
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
    /// Contacts below this normal force (N) are ignored (numerical grazing). Default 1.0.
    #[serde(default = "d_min_force")]
    pub min_force: f64,
    /// Contacts closer than this (m) count as one sensing area. Default 0.02.
    #[serde(default = "d_merge")]
    pub merge_radius: f64,
    /// `base`: in the watched body's frame (default); `world`: world frame.
    #[serde(default = "d_frame")]
    pub frame: String,
    /// How often the reading is computed (Hz); 0 = every physics step (default).
    #[serde(default)]
    pub compute_rate_hz: f64,
    /// How often the endpoint is published (Hz). Default 30.
    #[serde(default = "d_rate")]
    pub rate_hz: f64,
    /// Topic per endpoint role (`contact_location`): absolute hardwires, relative renames.
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

impl ValidateConfig for ContactLocationConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if !(self.min_force >= 0.0 && self.min_force.is_finite()) {
            e.push(ConfigError::new(
                "min_force",
                format!("must be a finite number >= 0 (N), got {}", num(self.min_force)),
            ));
        }
        if !(self.merge_radius >= 0.0 && self.merge_radius <= crate::world::bounds::MAX_SIZE_M) {
            e.push(ConfigError::new(
                "merge_radius",
                format!("must be in [0, 10000] m, got {}", num(self.merge_radius)),
            ));
        }
        if self.frame != "base" && self.frame != "world" {
            e.push(ConfigError::new(
                "frame",
                format!("`base` (the watched body's frame) or `world`, got `{}`", self.frame),
            ));
        }
        if self.compute_rate_hz != 0.0 {
            e.extend(check_rate("compute_rate_hz", self.compute_rate_hz));
        }
        e.extend(check_rate("rate_hz", self.rate_hz));
        e.extend(check_names("ignore", self.ignore.as_deref().unwrap_or(&[])));
        e.extend(check_names("ignore_prefixes", &self.ignore_prefixes));
        e.extend(common::check_topics(&self.topics, &ROLES));
        e
    }
}

/// In-process reader of the reading (blackboard `contact_location:<address>`).
pub type ContactLocationReader = crate::plugins::shared::latest::Reader<ContactLocation>;

/// Blackboard key of the reader of the plugin at `address`.
pub fn reader_key(address: &str) -> String {
    format!("contact_location:{address}")
}

fn none(time: f64, frame_id: &str) -> ContactLocation {
    ContactLocation {
        time,
        frame_id: frame_id.to_string(),
        in_contact: false,
        kind: "none".into(),
        x: 0.0,
        y: 0.0,
        z: 0.0,
        extent: 0.0,
        count: 0,
    }
}

fn dist(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// Merge `points` into sensing areas of `radius` (each a centre); order-stable.
pub fn merge_areas(points: &[[f64; 3]], radius: f64) -> Vec<[f64; 3]> {
    let mut areas: Vec<([f64; 3], usize)> = Vec::new();
    for p in points {
        match areas.iter_mut().find(|(c, _)| dist(c, p) <= radius) {
            Some((c, n)) => {
                let k = *n as f64;
                *c = [0, 1, 2].map(|i| (c[i] * k + p[i]) / (k + 1.0));
                *n += 1;
            }
            None => areas.push((*p, 1)),
        }
    }
    areas.into_iter().map(|(c, _)| c).collect()
}

/// The `contact_location` plugin.
pub struct ContactLocationPlugin {
    cfg: ContactLocationConfig,
    address: String,
    owner: Option<String>,
    watch: GeomWatch,
    frame_id: String,
    every: u64,
    reading: Rc<RefCell<ContactLocation>>,
    id: EndpointId,
}

impl ContactLocationPlugin {
    /// Construct from config.
    pub fn new(cfg: ContactLocationConfig, args: &PluginArgs) -> Self {
        ContactLocationPlugin {
            cfg,
            address: args.address.clone(),
            owner: args.owner.clone(),
            watch: GeomWatch::default(),
            frame_id: String::new(),
            every: 1,
            reading: Rc::new(RefCell::new(none(0.0, ""))),
            id: 0,
        }
    }

    fn compute(&self, ctx: &SimContext) -> ContactLocation {
        let now = ctx.sim_time();
        if !is_present(ctx, &self.watch.entity) {
            return none(now, &self.frame_id);
        }
        let hits = self.watch.contacts(ctx, self.cfg.min_force);
        if hits.is_empty() {
            return none(now, &self.frame_id);
        }
        let d = ctx.data();
        let contacts = d.contact();
        let (origin, r) = (d.xpos()[self.watch.root], d.xmat()[self.watch.root]);
        let base = self.cfg.frame == "base";
        let points: Vec<[f64; 3]> = hits
            .iter()
            .map(|h| {
                let p = contacts[h.0].pos;
                if base {
                    let v = [p[0] - origin[0], p[1] - origin[1], p[2] - origin[2]];
                    // R^T v (xmat is row-major: world = R · local)
                    [0, 1, 2].map(|j| r[j] * v[0] + r[3 + j] * v[1] + r[6 + j] * v[2])
                } else {
                    p
                }
            })
            .collect();
        let areas = merge_areas(&points, self.cfg.merge_radius);
        let n = areas.len() as f64;
        let c = [0, 1, 2].map(|i| areas.iter().map(|a| a[i]).sum::<f64>() / n);
        let mut extent: f64 = 0.0;
        for (i, a) in areas.iter().enumerate() {
            for b in &areas[i + 1..] {
                extent = extent.max(dist(a, b));
            }
        }
        ContactLocation {
            time: now,
            frame_id: self.frame_id.clone(),
            in_contact: true,
            kind: if areas.len() == 1 { "point" } else { "line" }.into(),
            x: c[0],
            y: c[1],
            z: c[2],
            extent,
            count: areas.len() as u32,
        }
    }
}

/// The descriptor (refused at the top of a document: `requires_owner`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "contact_location",
        "Where the entity it is nested under is being touched (ContactLocation; the centre as geometry_msgs/PointStamped on contact_location).",
        ContactLocationConfig,
        ContactLocationPlugin
    )
    .requires_owner()
}

impl Plugin for ContactLocationPlugin {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let (watch, entity, scope) = GeomWatch::for_owner(
            ctx,
            "contact_location",
            self.owner.as_deref(),
            watch_keys_of!(self.cfg),
        )?;
        self.watch = watch;
        self.frame_id = if self.cfg.frame == "world" {
            "world".into()
        } else {
            let body = ctx
                .model()
                .id_to_name(mujoco_rs::prelude::MjtObjBase::mjOBJ_BODY, self.watch.root)
                .unwrap_or("")
                .to_string();
            common::unprefixed(&body, &entity.prefix).to_string()
        };
        if self.cfg.compute_rate_hz > 0.0 {
            self.every = ((1.0 / (self.cfg.compute_rate_hz * ctx.dt)).round() as u64).max(1);
        }
        *self.reading.borrow_mut() = none(0.0, &self.frame_id);
        self.id = ReportEndpoint {
            role: "contact_location",
            ros_type: "geometry_msgs/msg/PointStamped",
            field: None,
            reliable: false,
            topic: "contact_location",
        }
        .add(ctx, &scope, self.cfg.rate_hz, &self.cfg.topics);
        ctx.blackboard
            .set(reader_key(&self.address), ContactLocationReader::from(self.reading.clone()));
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        *self.reading.borrow_mut() = none(ctx.sim_time(), &self.frame_id);
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if ctx.tick % self.every == 0 {
            let r = self.compute(ctx);
            *self.reading.borrow_mut() = r;
        }
        publish_due(ctx, self.id, || Payload::ContactLocation(self.reading.borrow().clone()));
        Ok(())
    }
}
