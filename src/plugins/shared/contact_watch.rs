//! The geoms an observer watches, shared by the contact and clearance observers: the watched geom
//! set (the entity's kinematic subtree, or a `body:` override), the `ignore` / `ignore_prefixes`
//! filter, resolving it for the entity an entry is nested under ([`GeomWatch::for_owner`]), the
//! per-step pass over `data.contact` that keeps contacts between a watched geom and a geom outside
//! the entity whose normal force reaches `min_force`, and the entity's presence edge.

use mujoco_rs::prelude::*;

use crate::context::{Entity, SimContext};
use crate::error::ConfigError;
use crate::plugins::shared::{self as common, Scope};

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

/// The keys every geometry watcher reads to choose its geoms.
#[derive(Debug, Clone, Copy)]
pub struct WatchKeys<'a> {
    /// `body:` ("" = the entity's root body): the root of the watched subtree.
    pub body: &'a str,
    /// `ignore:` as written (`None`: the default [`default_ignore`], not checked).
    pub ignore: Option<&'a [String]>,
    /// `ignore_prefixes:`.
    pub ignore_prefixes: &'a [String],
    /// `namespace:` (the endpoint scope; `None`: the entity's).
    pub namespace: Option<&'a str>,
}

/// [`WatchKeys`] read from a contact observer's config (`body`, `ignore`, `ignore_prefixes`,
/// `namespace`): one body for every observer that carries those keys.
macro_rules! watch_keys_of {
    ($cfg:expr) => {
        $crate::plugins::shared::contact_watch::WatchKeys {
            body: &$cfg.body,
            ignore: $cfg.ignore.as_deref(),
            ignore_prefixes: &$cfg.ignore_prefixes,
            namespace: $cfg.namespace.as_deref(),
        }
    };
}
pub(crate) use watch_keys_of;

impl GeomWatch {
    /// Resolve the watch of `plugin`, nested under `owner`: the owning entity (refused when there
    /// is none), its watched geoms by `keys`, and the scope its endpoints take.
    pub fn for_owner(
        ctx: &SimContext,
        plugin: &str,
        owner: Option<&str>,
        keys: WatchKeys,
    ) -> Result<(GeomWatch, Entity, Scope), String> {
        let entity = common::owner_entity(ctx, plugin, owner)?;
        let ignore = keys.ignore.map(<[String]>::to_vec).unwrap_or_else(default_ignore);
        let watch = GeomWatch::resolve(
            ctx.model(),
            &entity,
            keys.body,
            &ignore,
            keys.ignore_prefixes,
            keys.ignore.is_some(),
        )?;
        let scope = Scope::new(&entity, keys.namespace);
        Ok((watch, entity, scope))
    }

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
