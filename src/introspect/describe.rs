//! `roqsim scenes describe`: what a world provides, for a caller holding an override.
//!
//! - `plugins`: every component that will run — the document's entries and what its models'
//!   manifests contribute — with the address an override names it by, its ref, its `name:`, the
//!   entity it belongs to, whether it is enabled, its origin (`document` | `manifest`) and the
//!   dotted config paths that exist;
//! - `addresses`: exactly the set override resolution accepts;
//! - `entities`: only with `--entities` (naming them means compiling the model);
//! - `overridable.fields`: the runtime-writable model fields (always; no build needed);
//!   `overridable.targets`: with `--overridable GLOB`, the named geoms/bodies/actuators matching
//!   it with their current values (one build serves both flags);
//! - `dropped_transport`: the transport components left out of the build (a describe publishes
//!   nothing; they stay listed in `plugins`);
//! - `errors`: `{"build": "..."}` when only the build failed (the build-fed keys are then null).

use std::path::Path;

use mujoco_rs::prelude::*;
use serde_json::{json, Value as Json};
use serde_norway::{Mapping, Value};

use crate::engine::{Engine, EngineOptions};
use crate::error::ConfigErrors;
use crate::plugins::faults::model_override::{FieldNs, WriteClass, FIELD_CATALOG};
use crate::plugins::lookup;
use crate::world::document::{Component, Origin};
use crate::world::{load_world, LoadOptions, BRIDGE_REFS};

/// What to describe beyond the free half.
#[derive(Debug, Clone, Default)]
pub struct DescribeOptions {
    /// `--entities`: compile and list the entities.
    pub entities: bool,
    /// `--overridable GLOB`: compile and list the matching named targets.
    pub overridable: Option<String>,
    /// `--override FILE` (and `--set`) assignments.
    pub load: LoadOptions,
}

/// A describe answer: the JSON line, and whether it is complete (exit 0) or partial.
pub struct Described {
    /// The one-line JSON reply.
    pub json: Json,
    /// False when the build failed (`errors.build` is set).
    pub complete: bool,
    /// Notes for stderr (the dropped transport).
    pub notes: Vec<String>,
}

/// Dotted paths of every key that exists in `config`, under `prefix` (lists are leaves).
pub fn config_paths(config: &Mapping, prefix: &str, out: &mut Vec<String>) {
    for (k, v) in config {
        let Some(k) = k.as_str() else { continue };
        let p = format!("{prefix}.{k}");
        match v {
            Value::Mapping(m) if !m.is_empty() => config_paths(m, &p, out),
            _ => out.push(p),
        }
    }
}

fn is_transport(plugin: &str) -> bool {
    BRIDGE_REFS.contains(&plugin) || lookup(plugin).is_some_and(|d| d.flags.transport_only)
}

fn plugin_rows(list: &[Component], parent: Option<&str>, enabled: bool, rows: &mut Vec<Json>) {
    for c in list {
        let addr = match parent {
            Some(p) => format!("{p}.{}", c.label()),
            None => c.label().to_string(),
        };
        let on = enabled && c.is_enabled();
        let mut paths = Vec::new();
        config_paths(&c.config, &format!("components.{addr}"), &mut paths);
        rows.push(json!({
            "address": addr,
            "ref": c.plugin,
            "name": c.name,
            "entity": parent,
            "enabled": on,
            "origin": match c.origin { Origin::Document => "document", Origin::Manifest => "manifest" },
            "paths": paths,
        }));
        plugin_rows(&c.components, Some(&addr), on, rows);
    }
}

/// Refuse an `--overridable` pattern that is empty or not a glob (an unclosed `[`), which would
/// otherwise match nothing without a word.
pub fn check_glob(pattern: &str) -> Result<(), String> {
    if pattern.is_empty() {
        return Err(
            "--overridable: the pattern is empty; give a glob over geom, body and actuator names \
                    (`gripper_*`, or `*` for every one)"
                .to_string(),
        );
    }
    glob::Pattern::new(pattern).map(|_| ()).map_err(|e| {
        format!(
            "--overridable `{pattern}` is not a glob pattern ({} at character {}); `*` matches any run, `?` one \
             character, `[abc]` one of a set (close every `[`)",
            e.msg,
            e.pos + 1
        )
    })
}

/// `*` and `?` glob match (whole name); a pattern that is not a glob matches only itself.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    glob::Pattern::new(pattern).map(|p| p.matches(name)).unwrap_or(pattern == name)
}

/// The allowlisted runtime-writable fields (no model needed).
pub fn overridable_fields() -> Vec<Json> {
    FIELD_CATALOG
        .iter()
        .map(|r| {
            json!({
                "field": r.name,
                "namespace": match r.ns { FieldNs::Geom => "geom", FieldNs::Body => "body", FieldNs::Actuator => "actuator" },
                "width": r.width,
                "write": match r.class { WriteClass::Live => "live", WriteClass::NeedsSetConst => "after mj_setConst" },
                "does": r.what,
                "caveats": r.caveat,
            })
        })
        .collect()
}

/// Named geoms, bodies and actuators of `m` matching `glob`, with the overridable values.
pub fn overridable_targets(m: &MjModel, glob: &str) -> Json {
    let name = |obj: MjtObjBase, i: usize| m.id_to_name(obj, i).filter(|s| !s.is_empty());
    let mut geoms = Vec::new();
    for g in 0..m.ffi().ngeom as usize {
        let Some(n) = name(MjtObjBase::mjOBJ_GEOM, g) else { continue };
        if !glob_match(glob, n) {
            continue;
        }
        let b = m.geom_bodyid()[g] as usize;
        geoms.push(json!({
            "name": n,
            "body": name(MjtObjBase::mjOBJ_BODY, b),
            "geom_priority": m.geom_priority()[g],
            "geom_friction": m.geom_friction()[g],
            "geom_contype": m.geom_contype()[g],
            "geom_conaffinity": m.geom_conaffinity()[g],
        }));
    }
    let mut bodies = Vec::new();
    for b in 0..m.ffi().nbody as usize {
        let Some(n) = name(MjtObjBase::mjOBJ_BODY, b) else { continue };
        if glob_match(glob, n) {
            bodies.push(json!({"name": n, "body_mass": m.body_mass()[b]}));
        }
    }
    let mut acts = Vec::new();
    for a in 0..m.ffi().nu as usize {
        let Some(n) = name(MjtObjBase::mjOBJ_ACTUATOR, a) else { continue };
        if glob_match(glob, n) {
            acts.push(json!({"name": n, "actuator_forcerange": m.actuator_forcerange()[a]}));
        }
    }
    json!({"geom": geoms, "body": bodies, "actuator": acts})
}

/// Describe a world. `Err` when the world does not load (nothing to hand back).
pub fn describe(path: &Path, opts: &DescribeOptions) -> Result<Described, ConfigErrors> {
    // The full document (transport included) for `plugins`/`addresses`.
    let full = load_world(path, &LoadOptions { no_communication: false, ..opts.load.clone() });
    // The build has no transport in it.
    let mut notes = Vec::new();
    let scene = load_world(path, &LoadOptions { no_communication: true, ..opts.load.clone() })?;
    let doc = match &full {
        Ok(w) => w.doc.clone(),
        Err(_) => {
            // A ROS-free binary cannot load the transport entries; they are still part of the
            // document, and still checkable override targets.
            let composed = crate::introspect::inputs::yaml_chain(path, &mut Vec::new())
                .map(|(d, _)| d)
                .unwrap_or_default();
            let mut d = scene.doc.clone();
            d.components
                .extend(composed.components.iter().filter(|c| is_transport(&c.plugin)).cloned());
            d
        }
    };
    let mut rows = Vec::new();
    let mut dropped: Vec<String> = Vec::new();
    for c in doc.components.iter().filter(|c| is_transport(&c.plugin)) {
        dropped.push(c.label().to_string());
    }
    plugin_rows(&doc.components, None, true, &mut rows);
    let addresses: Vec<Json> = rows.iter().map(|r| r["address"].clone()).collect();
    if !dropped.is_empty() {
        notes.push(format!(
            "describing the scene without transport: dropped {}",
            dropped.join(", ")
        ));
    }
    let inputs = crate::introspect::inputs::world_inputs(path, &opts.load);
    let mut entities = Json::Null;
    let mut targets = Json::Null;
    let mut errors = Json::Null;
    let mut complete = true;
    if opts.entities || opts.overridable.is_some() {
        match Engine::new(scene, EngineOptions { profile: false, seed: Some(0) }) {
            Ok(e) => {
                if opts.entities {
                    let mut names = e.ctx.entities.names();
                    names.sort();
                    entities = json!(names);
                }
                if let Some(g) = &opts.overridable {
                    targets = overridable_targets(e.ctx.model(), g);
                }
            }
            Err(e) => {
                complete = false;
                errors = json!({"build": e.to_string()});
            }
        }
    }
    let json = json!({
        "world": inputs.world.display().to_string(),
        "packaged": inputs.packaged,
        "inputs": inputs.inputs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "plugins": rows,
        "addresses": addresses,
        "entities": entities,
        "overridable": {"fields": overridable_fields(), "targets": targets},
        "dropped_transport": dropped,
        "errors": errors,
    });
    Ok(Described { json, complete, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("gripper_right*", "gripper_right_left_pad1"));
        assert!(!glob_match("gripper_right*", "gripper_left_pad"));
        assert!(glob_match("*pad?", "left_pad1"));
        assert!(glob_match("*", ""));
        assert!(!glob_match("a", "ab"));
    }
}
