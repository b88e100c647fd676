//! `bumper`: which ZONE of a body is being pushed, every step.
//!
//! A zone is a bearing sector in the base body's frame, radians counter-clockwise from +x:
//! `{<zone>: [from, to]}`; a sector with `from > to` wraps through ±π (a rear zone is
//! `[2.6, -2.6]`). A contact presses a zone when one of its geoms is a bumper geom (`geoms` /
//! `geom_prefixes`, default the entity's whole subtree), the other is outside the entity and not
//! ignored, its normal force reaches `min_force` (N), and the bearing of the contact point in the
//! base frame (`atan2(y, x)`) falls in the sector. A contact in no declared zone presses nothing
//! (contact_monitor still reports it). Not latched: a bumper releases when the robot backs off.
//!
//! One out endpoint per zone, `bumper/<zone>`, reads a Bool (ROS 2: std_msgs/Bool on the
//! relative topic `bumper/<zone>`). Blackboard: `bumper:<address>` holds a [`BumperReader`]
//! giving the current [`BumperReading`] — read that, not the endpoint, inside a control loop.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::f64::consts::PI;
use std::rc::Rc;

use mujoco_rs::prelude::*;
use nalgebra::Matrix3;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::Payload;
use crate::context::{Endpoint, EndpointId, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::math::vec3;
use crate::plugin::check_rate;
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared::contact_watch::{check_names, default_ignore, is_present, GeomWatch};
use crate::plugins::shared::{self as common, Scope};

fn d_min_force() -> f64 {
    1.0
}
fn d_rate() -> f64 {
    62.0
}

/// Default zones: `front` [-0.52, 0.52] and `left` [0.52, 1.57] (the catalogue's defaults), plus the
/// mirrored `right` [-1.57, -0.52] (a front bumper's three switches).
pub fn default_zones() -> BTreeMap<String, [f64; 2]> {
    BTreeMap::from([
        ("front".to_string(), [-0.52, 0.52]),
        ("left".to_string(), [0.52, 1.57]),
        ("right".to_string(), [-1.57, -0.52]),
    ])
}

/// Config of `bumper`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BumperConfig {
    /// Base body override (the model's own name); default "": the entity's registered base body.
    /// Bearings are measured in this body's frame.
    #[serde(default)]
    pub body: String,
    /// Transport scope of the endpoints; default (omitted or ""): the entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Bearing sectors `{<zone>: [from, to]}` (rad, base frame, counter-clockwise from +x; from >
    /// to wraps through ±π). Default front [-0.52, 0.52], left [0.52, 1.57], right [-1.57, -0.52].
    #[serde(default = "default_zones")]
    pub zones: BTreeMap<String, [f64; 2]>,
    /// Geom NAMES (the model's own) that ARE the bumper. Default: the entity's whole subtree.
    #[serde(default)]
    pub geoms: Vec<String>,
    /// Geom name prefixes (the model's own names) that are the bumper.
    #[serde(default)]
    pub geom_prefixes: Vec<String>,
    /// Geom NAMES that never count. Default `[floor]`.
    #[serde(default)]
    pub ignore: Option<Vec<String>>,
    /// Geom name prefixes that never count.
    #[serde(default)]
    pub ignore_prefixes: Vec<String>,
    /// Contacts below this normal force (N) are ignored. Default 1.0.
    #[serde(default = "d_min_force")]
    pub min_force: f64,
    /// Endpoint publish rate (Hz). Default 62.
    #[serde(default = "d_rate")]
    pub rate_hz: f64,
    /// Topic per endpoint role (`bumper/<zone>`): absolute hardwires, relative renames.
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

fn valid_zone_name(z: &str) -> bool {
    !z.is_empty()
        && z.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !z.starts_with(|c: char| c.is_ascii_digit())
}

impl ValidateConfig for BumperConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if self.zones.is_empty() {
            e.push(ConfigError::new(
                "zones",
                "declares no zone; give at least one `{<zone>: [from, to]}` (rad)",
            ));
        }
        for (z, [a, b]) in &self.zones {
            if !valid_zone_name(z) {
                e.push(ConfigError::new(format!("zones.{z}"), "a zone name becomes a topic (`bumper/<zone>`): use letters, digits and `_`, not starting with a digit"));
            }
            if !(a.is_finite() && b.is_finite() && (-PI..=PI).contains(a) && (-PI..=PI).contains(b))
            {
                e.push(ConfigError::new(
                    format!("zones.{z}"),
                    format!("bearings must be finite radians within [-pi, pi], got [{a}, {b}]"),
                ));
            } else if a == b {
                e.push(ConfigError::new(
                    format!("zones.{z}"),
                    format!("an empty sector [{a}, {b}]: from must differ from to"),
                ));
            }
        }
        if !(self.min_force >= 0.0 && self.min_force.is_finite()) {
            e.push(ConfigError::new(
                "min_force",
                format!("must be a finite number >= 0 (N), got {}", self.min_force),
            ));
        }
        e.extend(check_rate("rate_hz", self.rate_hz));
        e.extend(check_names("geoms", &self.geoms));
        e.extend(check_names("geom_prefixes", &self.geom_prefixes));
        e.extend(check_names("ignore", self.ignore.as_deref().unwrap_or(&[])));
        e.extend(check_names("ignore_prefixes", &self.ignore_prefixes));
        let roles: Vec<String> = self.zones.keys().map(|z| format!("bumper/{z}")).collect();
        let roles: Vec<&str> = roles.iter().map(String::as_str).collect();
        e.extend(common::check_topics(&self.topics, &roles));
        e
    }
}

/// True when `bearing` (rad) lies in the sector `[from, to]` (wrapping through ±π when from > to).
pub fn in_sector(bearing: f64, from: f64, to: f64) -> bool {
    if from <= to {
        bearing >= from && bearing <= to
    } else {
        bearing >= from || bearing <= to
    }
}

/// One bumper reading: which zones are pressed at `stamp`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BumperReading {
    /// Sim time (s).
    pub stamp: f64,
    /// Zone → pressed this step.
    pub pressed: BTreeMap<String, bool>,
    /// Bearing (rad, base frame) of the strongest qualifying contact this step, if any.
    pub bearing: Option<f64>,
}

/// In-process reader (blackboard `bumper:<address>`).
pub type BumperReader = crate::plugins::shared::latest::Reader<BumperReading>;

/// Blackboard key of the reader of the bumper at `address`.
pub fn reader_key(address: &str) -> String {
    format!("bumper:{address}")
}

/// The `bumper` plugin.
pub struct Bumper {
    cfg: BumperConfig,
    address: String,
    owner: Option<String>,
    watch: GeomWatch,
    zones: Vec<(String, [f64; 2], EndpointId)>,
    reading: Rc<RefCell<BumperReading>>,
}

impl Bumper {
    /// Construct from config.
    pub fn new(cfg: BumperConfig, args: &PluginArgs) -> Self {
        Bumper {
            cfg,
            address: args.address.clone(),
            owner: args.owner.clone(),
            watch: GeomWatch::default(),
            zones: Vec::new(),
            reading: Rc::default(),
        }
    }
}

/// The descriptor (refused at the top of a document: `requires_owner`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "bumper",
        "Which bearing zone of the entity's base is pressed, every step (std_msgs/Bool per zone on bumper/<zone>).",
        BumperConfig,
        Bumper
    )
    .requires_owner()
}

impl Plugin for Bumper {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let entity = common::owner_entity(ctx, "bumper", self.owner.as_deref())?;
        let ignore = self.cfg.ignore.clone().unwrap_or_else(default_ignore);
        let m = ctx.model();
        let mut watch = GeomWatch::resolve(
            m,
            &entity,
            &self.cfg.body,
            &ignore,
            &self.cfg.ignore_prefixes,
            self.cfg.ignore.is_some(),
        )?;
        if !self.cfg.geoms.is_empty() || !self.cfg.geom_prefixes.is_empty() {
            let mut shell = vec![false; watch.watched.len()];
            let own: Vec<String> = watch
                .in_subtree
                .iter()
                .enumerate()
                .filter(|(_, s)| **s)
                .map(|(g, _)| crate::plugins::shared::geom_name(m, g))
                .collect();
            for (i, n) in self.cfg.geoms.iter().enumerate() {
                let full = format!("{}{n}", entity.prefix);
                match m.name_to_id(MjtObjBase::mjOBJ_GEOM, &full) {
                    Some(g) if watch.in_subtree[g] => shell[g] = true,
                    _ => {
                        let names: Vec<&str> =
                            own.iter().map(|s| common::unprefixed(s, &entity.prefix)).collect();
                        return Err(format!(
                            "geoms[{i}]: entity `{}` has no geom `{n}` (looked up as `{full}`); its geoms are [{}]",
                            entity.name,
                            names.join(", ")
                        ));
                    }
                }
            }
            for (i, p) in self.cfg.geom_prefixes.iter().enumerate() {
                let mut any = false;
                for (g, flag) in shell.iter_mut().enumerate() {
                    if watch.in_subtree[g]
                        && common::unprefixed(
                            &crate::plugins::shared::geom_name(m, g),
                            &entity.prefix,
                        )
                        .starts_with(p.as_str())
                    {
                        *flag = true;
                        any = true;
                    }
                }
                if !any {
                    return Err(format!(
                        "geom_prefixes[{i}]: no geom of entity `{}` starts with `{p}`",
                        entity.name
                    ));
                }
            }
            for (g, w) in watch.watched.iter_mut().enumerate() {
                *w = *w && shell[g];
            }
        }
        self.watch = watch;
        let scope = Scope::new(&entity, self.cfg.namespace.as_deref());
        self.zones.clear();
        for (z, sector) in &self.cfg.zones {
            let ep = Endpoint::out(&format!("bumper/{z}"))
                .rate(self.cfg.rate_hz)
                .hint("ros2", "type", "std_msgs/msg/Bool")
                .hint("ros2", "qos", "reliable");
            let id = ctx.interface.add(scope.apply(ep, &self.cfg.topics));
            self.zones.push((z.clone(), *sector, id));
        }
        *self.reading.borrow_mut() = BumperReading {
            stamp: 0.0,
            pressed: self.zones.iter().map(|(z, _, _)| (z.clone(), false)).collect(),
            bearing: None,
        };
        ctx.blackboard.set(reader_key(&self.address), BumperReader::from(self.reading.clone()));
        Ok(())
    }

    fn on_reset(&mut self, _ctx: &mut SimContext) -> HookResult {
        let mut r = self.reading.borrow_mut();
        r.stamp = 0.0;
        r.bearing = None;
        for v in r.pressed.values_mut() {
            *v = false;
        }
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let hits = if is_present(ctx, &self.watch.entity) {
            self.watch.contacts(ctx, self.cfg.min_force)
        } else {
            Vec::new()
        };
        let mut pressed: BTreeMap<String, bool> =
            self.zones.iter().map(|(z, _, _)| (z.clone(), false)).collect();
        let mut strongest: Option<(f64, f64)> = None;
        if !hits.is_empty() {
            let d = ctx.data();
            let (o, r) = (d.xpos()[self.watch.root], d.xmat()[self.watch.root]);
            for &(i, _, _, f) in &hits {
                let p = d.contact()[i].pos;
                let v = [p[0] - o[0], p[1] - o[1], p[2] - o[2]];
                // body frame = R^T v (xmat is row-major: columns are the body axes)
                let local = Matrix3::from_row_slice(&r).tr_mul(&vec3(&v));
                let bearing = local.y.atan2(local.x);
                for (z, [a, b], _) in &self.zones {
                    if in_sector(bearing, *a, *b) {
                        pressed.insert(z.clone(), true);
                    }
                }
                if strongest.is_none_or(|(sf, _)| f > sf) {
                    strongest = Some((f, bearing));
                }
            }
        }
        let now = ctx.sim_time();
        let tick = ctx.tick;
        for (z, _, id) in &self.zones {
            if ctx.interface.is_due(*id, tick) {
                ctx.interface.publish(*id, tick, Payload::Bool(pressed[z]));
            }
        }
        *self.reading.borrow_mut() =
            BumperReading { stamp: now, pressed, bearing: strongest.map(|(_, b)| b) };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sectors_wrap_through_pi() {
        assert!(in_sector(0.0, -0.52, 0.52));
        assert!(!in_sector(1.0, -0.52, 0.52));
        assert!(in_sector(3.0, 2.6, -2.6));
        assert!(in_sector(-3.0, 2.6, -2.6));
        assert!(!in_sector(0.0, 2.6, -2.6));
    }
}
