//! Observation plugins: `contact_monitor` (did it touch), `contact_impulse` (how hard, integrated),
//! `contact_location` (where), `bumper` (which zone is pressed),
//! `clearance_monitor` (how close did it come), `energy_monitor` (what did it cost) and
//! `upright_monitor` (did it stay in the plane). Each watches the entity it is nested under
//! (`requires_owner`), publishes a structured report on an out endpoint (plus the primitive member
//! the catalog names, through the `("ros2", "field", <member>)` hint) and puts a reader on the
//! blackboard for in-process consumers. None of them ever ends a trial: a threshold is the
//! experiment's, stated in the experiment.
//!
//! This module holds what the geometry watchers share: the watched geom set (the entity's
//! kinematic subtree, or a `body:` override), the `ignore` / `ignore_prefixes` filter, and the
//! per-step pass over `data.contact` that keeps contacts between a watched geom and a geom
//! outside the entity whose normal force reaches `min_force`.

pub mod bumper;
pub mod clearance_monitor;
pub mod contact_impulse;
pub mod contact_location;
pub mod contact_monitor;
pub mod energy_monitor;
pub mod upright_monitor;

/// This family's plugins, in catalogue order.
pub fn descriptors() -> Vec<crate::plugin::PluginDescriptor> {
    vec![
        contact_monitor::descriptor(),
        contact_impulse::descriptor(),
        contact_location::descriptor(),
        bumper::descriptor(),
        clearance_monitor::descriptor(),
        energy_monitor::descriptor(),
        upright_monitor::descriptor(),
    ]
}

use mujoco_rs::prelude::*;

use crate::context::{Entity, SimContext};
use crate::error::ConfigError;
use crate::plugins::shared as common;

/// Default `ignore:` list: the ground plane (named `floor` by the built-in world and by floorplan).
pub fn default_ignore() -> Vec<String> {
    vec!["floor".to_string()]
}

/// Checks shared by the `ignore` / `ignore_prefixes` keys: no empty names.
pub fn check_names(key: &str, names: &[String]) -> Vec<ConfigError> {
    names
        .iter()
        .enumerate()
        .filter(|(_, n)| n.trim().is_empty())
        .map(|(i, _)| ConfigError::new(format!("{key}[{i}]"), "empty name"))
        .collect()
}

/// The geoms one observer watches and the ones it never counts, resolved at configure.
#[derive(Debug, Clone, Default)]
pub struct GeomWatch {
    /// The watched entity.
    pub entity: String,
    /// Root body of the watched subtree.
    pub root: usize,
    /// Per geom id: in the watched subtree (the entity itself, for the xor test).
    pub in_subtree: Vec<bool>,
    /// Per geom id: watched (counts on the entity's side).
    pub watched: Vec<bool>,
    /// Per geom id: never counts (ignore / ignore_prefixes).
    pub ignored: Vec<bool>,
}

impl GeomWatch {
    /// Resolve for `entity`: `body` ("" = the entity's root body) roots the watched subtree;
    /// `ignore` names (exact compiled names, or the model's own name under the entity's prefix)
    /// and `ignore_prefixes` are never counted. `check_ignore` refuses an ignore name that is in
    /// neither form (an explicitly written list; the default `floor` is not checked).
    pub fn resolve(
        m: &MjModel,
        entity: &Entity,
        body: &str,
        ignore: &[String],
        ignore_prefixes: &[String],
        check_ignore: bool,
    ) -> Result<GeomWatch, String> {
        let root = common::resolve_body(m, entity, "body", body)?;
        let ngeom = m.ffi().ngeom as usize;
        let gbody = m.geom_bodyid();
        let in_subtree: Vec<bool> =
            (0..ngeom).map(|g| common::in_subtree(m, gbody[g] as usize, root)).collect();
        let mut ignored = vec![false; ngeom];
        for (i, name) in ignore.iter().enumerate() {
            let id = m.name_to_id(MjtObjBase::mjOBJ_GEOM, name).or_else(|| {
                m.name_to_id(MjtObjBase::mjOBJ_GEOM, &format!("{}{name}", entity.prefix))
            });
            match id {
                Some(g) => ignored[g] = true,
                None if check_ignore => {
                    return Err(format!(
                        "ignore[{i}]: no geom `{name}` in the model (looked up as `{name}` and `{}{name}`); use ignore_prefixes for a family of names",
                        entity.prefix
                    ))
                }
                None => {}
            }
        }
        if !ignore_prefixes.is_empty() {
            for (g, flag) in ignored.iter_mut().enumerate() {
                if let Some(n) = m.id_to_name(MjtObjBase::mjOBJ_GEOM, g) {
                    let own = common::unprefixed(n, &entity.prefix);
                    if ignore_prefixes
                        .iter()
                        .any(|p| n.starts_with(p.as_str()) || own.starts_with(p.as_str()))
                    {
                        *flag = true;
                    }
                }
            }
        }
        let watched = in_subtree.iter().zip(&ignored).map(|(s, i)| *s && !*i).collect();
        Ok(GeomWatch { entity: entity.name.clone(), root, in_subtree, watched, ignored })
    }

    /// Watched geom ids.
    pub fn watched_ids(&self) -> Vec<usize> {
        self.watched.iter().enumerate().filter(|(_, w)| **w).map(|(g, _)| g).collect()
    }

    /// Qualifying contacts this step: exactly one side in the entity's subtree (a robot touching
    /// itself is not a collision), that side watched, the other side not ignored, normal force ≥
    /// `min_force` (N). Returned as (contact index, watched geom, other geom, normal force).
    pub fn contacts(&self, ctx: &SimContext, min_force: f64) -> Vec<(usize, usize, usize, f64)> {
        let d = ctx.data();
        let mut out = Vec::new();
        for (i, c) in d.contact().iter().enumerate() {
            let (g1, g2) = (c.geom[0], c.geom[1]);
            if g1 < 0 || g2 < 0 {
                continue;
            }
            let (g1, g2) = (g1 as usize, g2 as usize);
            let (w, o) = match (self.in_subtree[g1], self.in_subtree[g2]) {
                (true, false) => (g1, g2),
                (false, true) => (g2, g1),
                _ => continue,
            };
            if !self.watched[w] || self.ignored[o] {
                continue;
            }
            let f = d.contact_force(i)[0];
            if f < min_force {
                continue;
            }
            out.push((i, w, o, f));
        }
        out
    }
}

/// True while the watched entity is present (an entity not registered counts as present).
pub fn is_present(ctx: &SimContext, entity: &str) -> bool {
    ctx.entities.get(entity).map(|e| e.present).unwrap_or(true)
}

/// Tracks an entity's presence to detect the step it GAINS presence (`reset_on_spawn`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SpawnEdge {
    was_present: Option<bool>,
}

impl SpawnEdge {
    /// True exactly when `present` went false → true since the last call.
    pub fn gained(&mut self, present: bool) -> bool {
        let gained = self.was_present == Some(false) && present;
        self.was_present = Some(present);
        gained
    }
    /// Forget the history (reset).
    pub fn clear(&mut self) {
        self.was_present = None;
    }
}
