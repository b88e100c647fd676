//! The up-front check: every trial's world is loaded with its overrides and compiled, and every
//! collected entity and endpoint address is looked up in it, before any trial runs.
//!
//! Trials that differ only in their repetition (their seed) build the same model, so each
//! distinct (world, overrides) cell is built once. The first cell that fails names the trial,
//! its levels and the world's own refusal. Each cell's input files are hashed on the way (every
//! file `roqsim scenes inputs` lists for it, and its override files): what `DIR/resolved.json`
//! keeps so a resume can tell that a world, or any file it is made of, changed.

use std::collections::BTreeMap;

use crate::campaign::document::Campaign;
use crate::campaign::expand::Trial;
use crate::campaign::folder::world_input_hashes;
use crate::campaign::summary::check_endpoints;
use crate::engine::{Engine, EngineOptions};
use crate::world::{load_world, LoadOptions};

/// A trial's name in messages: `trial 3 (world = a.yaml, components.x.y = 0.01)`.
pub fn describe_trial(c: &Campaign, t: &Trial) -> String {
    let mut parts = Vec::new();
    if c.world_is_factor {
        parts.push(format!("world = {}", t.world.written));
    }
    for (k, v) in &t.levels {
        parts.push(format!("{k} = {v}"));
    }
    if parts.is_empty() {
        format!("trial {}", t.index)
    } else {
        format!("trial {} ({})", t.index, parts.join(", "))
    }
}

/// Check every trial of `c`; `Err` holds the refusal text of the first cell that fails. `Ok`
/// holds every input file of every cell with its content hash (`path → sha256:…`).
pub fn validate(c: &Campaign, trials: &[Trial]) -> Result<BTreeMap<String, String>, String> {
    let mut inputs = BTreeMap::new();
    let mut seen: Vec<(&std::path::Path, &[crate::world::overrides::Assignment])> = Vec::new();
    for t in trials {
        let key = (t.world.path.as_path(), t.assignments.as_slice());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let who = describe_trial(c, t);
        t.override_document().map_err(|m| format!("{who}: its overrides conflict: {m}"))?;
        let opts = LoadOptions {
            assignments: t.assignments.clone(),
            no_communication: true,
            ..LoadOptions::default()
        };
        let world = load_world(&t.world.path, &opts)
            .map_err(|e| format!("{who}: the world {} refuses it:\n{e}", t.world.path.display()))?;
        inputs.extend(world_input_hashes(&t.world.path, &opts, &t.files));
        // A preview seed: building is not a measurement.
        let engine = Engine::new(world, EngineOptions { profile: false, seed: Some(0) })
            .map_err(|e| format!("{who}: the world does not build: {e}"))?;
        for (i, name) in c.collect.poses.iter().enumerate() {
            if engine.ctx.entities.get(name).is_none() {
                return Err(format!(
                    "collect.poses[{i}]: {who}: no entity `{name}` in the world; entities: {}",
                    engine.ctx.entities.names().join(", ")
                ));
            }
        }
        check_endpoints(&engine.ctx, &c.collect.endpoints)
            .map_err(|m| format!("collect.endpoints: {who}: {m}"))?;
    }
    Ok(inputs)
}
