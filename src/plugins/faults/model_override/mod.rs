//! `model_override`: change named MuJoCo model values while a run is in progress, on an external
//! trigger, and say whether the change landed.
//!
//! Each entry of `overrides:` names a field, a selection (`select:` names in the field's own
//! namespace, or — geom fields only — every geom of `bodies:`' subtrees or of an `entity:`) and a
//! target `to:` (a scalar broadcast over the row, or the full row). The plugin is inert until
//! fired (`active: false`), so adding it changes nothing about a nominal run.
//!
//! **The allowlist** ([`FIELD_CATALOG`]), two write classes measured against MuJoCo:
//! - live, in effect on the next step: `geom_friction` (row [sliding, torsional, rolling]; a
//!   sliding value below [`FRICTIONLESS_BELOW`] (1e-4) also writes condim 1 while the fault is on:
//!   under MuJoCo's pyramidal cone a contact at the friction floor is numerically rigid and fires
//!   a squeezed object out at tens of m/s, while a condim-1 contact lets it slide out under gravity),
//!   `geom_contype` + `geom_conaffinity` (together: either alone was measured to be a no-op),
//!   `actuator_forcerange` (row [lo, hi]; the actuator must be force-limited);
//! - needs_setconst: `body_mass`, whose write the dynamics ignore until `mj_setConst`
//!   re-derives the inertia-dependent constants — the plugin runs it (on a scratch mjData).
//!
//! Everything else is refused by name with the reason ([`refusal`]): `geom_size` (the bounding
//! radius is cached at compile: geometry that renders big and collides small), `geom_priority`
//! (it also swaps the contact's condim/solref/solimp at the instant of the fault), MuJoCo's own
//! `sensor_noise` (per-sensor `fault:` blocks own sensor perturbation), and every `opt.*` global
//! (`sim:` and `sim.contact_override` own those, before compile, so the run's provenance records
//! the value that ran).
//!
//! **Configure-time refusals** (what is certain): an unknown name, an empty selection, an
//! explicit `<pair>` covering a selected geom (a pair carries its own friction and ignores
//! contype/conaffinity), a geom of an entity declared absent (`present: false`), an all
//! visual-only selection (contype = conaffinity = 0: it takes part in no contact), a
//! `geom_contype` override without its `geom_conaffinity` partner over the same geoms (and vice
//! versa), a `forcerange` on an actuator that is not force-limited.
//!
//! **Verification** (what is measured, not predicted): a change is applied in `pre_step` and read
//! back in the same step's `post_step`, i.e. one `mj_step` after it (a friction change, read from
//! the contacts, at the first of [`CONTACT_WAIT_STEPS`] steps at which one touches the
//! selection): `landed` (the contacts
//! touching the selection carry the requested friction; a removed contact is gone; a force sits
//! at the new limit; the derived masses moved), `no_effect` (with a warning and a failed reply:
//! e.g. the other geom owns the contact — MuJoCo takes a contact's friction from the geom with
//! the higher priority, and at equal priority the larger value — or the target equals the
//! nominal value) or `untested` (nothing touched the selection: not a failure). A restore
//! has nothing to verify and reports `untested`.
//!
//! **Endpoints** (namespace: `namespace:`, default this instance's `name:`, so two faults in one
//! world do not both serve `/override`): the [`crate::handles::override_switch`] every fault
//! shares — `override` (in, ROS 2 service std_srvs/SetBool: a `Payload::Call` whose request is
//! `Payload::Bool(on)`, answered with `Payload::Ack { success, message }` from `post_step` once
//! verified), `override_state` (out, std_msgs/Bool of active) and `override_verified` (out,
//! std_msgs/String of the verdict word) at `rate_hz` — a service
//! call leaves no trace in a rosbag and mjModel is in neither the bag nor the state recording.
//! Blackboard: `model_override:<name>` holds a [`ModelOverrideHandle`], which is how a ROS-free
//! stepped run fires it.
//!
//! **Reset** returns the world to the configured state exactly: every selected row is written
//! back from the values saved at setup (read at the first reset, after every plugin's configure,
//! so a `payload` is part of the nominal), then `active: true` re-applies. `mj_resetData` never
//! touches mjModel, so without this repetition 2 would start already faulted.

use std::collections::BTreeSet;

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::SimContext;
use crate::error::{ConfigError, HookResult};
use crate::handles::override_switch::{
    FaultSwitch, OverrideHandle, OverrideSwitch, SwitchEndpoints,
};
use crate::mujoco::raycast::ABSENT_GEOM_GROUP;
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::faults::Verdict;
use crate::plugins::shared::{self as common};

mod catalog;
mod config;
mod verify;

pub use catalog::*;
pub use config::*;

/// One resolved override: ids, nominal rows (saved at setup) and the target row.
#[derive(Debug, Clone)]
struct Resolved {
    field: &'static FieldRow,
    /// Object ids (geom / body / actuator).
    ids: Vec<usize>,
    /// Display names of the ids.
    names: Vec<String>,
    target: Vec<f64>,
    /// Per id: the nominal row (empty until captured).
    nominal: Vec<Vec<f64>>,
    /// Per id, `geom_friction` only: the nominal condim (a frictionless target writes condim 1).
    nominal_condim: Vec<i32>,
}

/// The in-process switch of one `model_override` instance (blackboard `model_override:<name>`).
/// `set_active` takes effect at the next step (like a command posted from a service); read
/// `verified()` after that step (`pending` for the one step between a change and its reading).
pub type ModelOverrideHandle = OverrideHandle;

/// Blackboard key of the handle of the instance labelled `name`.
pub fn handle_key(name: &str) -> String {
    format!("model_override:{name}")
}

/// Steps a friction change waits for a contact touching its selection before it is reported
/// `untested`: a held object's contacts drop out for a single step now and then (stick-slip), and
/// one reading step would report such a step as nothing touching.
pub const CONTACT_WAIT_STEPS: u32 = 10;

/// Contacts (geom pairs, selected side first) touching a geom set, from the current data.
fn touching(ctx: &SimContext, sel: &BTreeSet<usize>) -> Vec<(usize, usize, usize)> {
    ctx.data()
        .contact()
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let (a, b) = (c.geom[0], c.geom[1]);
            if a < 0 || b < 0 {
                return None;
            }
            let (a, b) = (a as usize, b as usize);
            if sel.contains(&a) {
                Some((i, a, b))
            } else if sel.contains(&b) {
                Some((i, b, a))
            } else {
                None
            }
        })
        .collect()
}

/// The `model_override` plugin.
pub struct ModelOverride {
    cfg: ModelOverrideConfig,
    label: String,
    owner: Option<String>,
    resolved: Vec<Resolved>,
    captured: bool,
    /// The SetBool switch (registered in configure).
    switch: Option<OverrideSwitch>,
    /// The change applied in a pre_step, awaiting its reading in post_step, and the steps it
    /// has waited for a contact to read (at most [`CONTACT_WAIT_STEPS`]).
    pending: Option<(bool, u32)>,
    /// Geom pairs touching the selection before the change (for contype/conaffinity).
    before: Vec<(usize, usize)>,
}

impl ModelOverride {
    /// Construct from a validated config.
    pub fn new(cfg: ModelOverrideConfig, args: &PluginArgs) -> Self {
        ModelOverride {
            cfg,
            label: args.label.clone(),
            owner: args.owner.clone(),
            resolved: Vec::new(),
            captured: false,
            switch: None,
            pending: None,
            before: Vec::new(),
        }
    }

    fn selected_geoms(&self) -> BTreeSet<usize> {
        self.resolved
            .iter()
            .filter(|r| r.field.ns == FieldNs::Geom)
            .flat_map(|r| r.ids.iter().copied())
            .collect()
    }

    /// Read the current rows of every selected object.
    fn read_row(ctx: &SimContext, field: &str, id: usize) -> Vec<f64> {
        let m = ctx.model();
        match field {
            "geom_friction" => m.geom_friction()[id].to_vec(),
            "geom_contype" => vec![m.geom_contype()[id] as f64],
            "geom_conaffinity" => vec![m.geom_conaffinity()[id] as f64],
            "actuator_forcerange" => m.actuator_forcerange()[id].to_vec(),
            "body_mass" => vec![m.body_mass()[id]],
            _ => Vec::new(),
        }
    }

    fn write_row(ctx: &mut SimContext, field: &str, id: usize, row: &[f64]) {
        let mut w = ctx.model_writer();
        match field {
            "geom_friction" => w.geom_friction(id, [row[0], row[1], row[2]]),
            "geom_contype" => w.geom_contype(id, row[0] as i32),
            "geom_conaffinity" => w.geom_conaffinity(id, row[0] as i32),
            "actuator_forcerange" => w.actuator_forcerange(id, [row[0], row[1]]),
            "body_mass" => w.body_mass(id, row[0]),
            _ => {}
        }
    }

    /// Write the target (`on`) or the nominal rows; re-derive constants for body_mass.
    fn write_all(&mut self, ctx: &mut SimContext, on: bool) {
        let group = ctx.model().geom_group().to_vec();
        let mut setconst = false;
        for r in &self.resolved {
            for (k, &id) in r.ids.iter().enumerate() {
                let absent = r.field.ns == FieldNs::Geom && group[id] == ABSENT_GEOM_GROUP as i32;
                if absent && matches!(r.field.name, "geom_contype" | "geom_conaffinity") {
                    // presence owns an absent geom's masks; it restores its own saved nominal
                    continue;
                }
                let row = if on { &r.target } else { &r.nominal[k] };
                Self::write_row(ctx, r.field.name, id, row);
                if r.field.name == "geom_friction" {
                    // a frictionless contact is condim 1: MuJoCo's pyramidal facets at the
                    // friction floor are unregularised and fire a squeezed object out
                    let frictionless = on && r.target[0] < FRICTIONLESS_BELOW;
                    let condim = if frictionless { 1 } else { r.nominal_condim[k] };
                    ctx.model_writer().geom_condim(id, condim);
                }
            }
            setconst |= r.field.class == WriteClass::NeedsSetConst;
        }
        if setconst {
            ctx.model_writer().set_const();
        }
    }

    fn capture(&mut self, ctx: &SimContext) {
        for r in &mut self.resolved {
            r.nominal = r.ids.iter().map(|&id| Self::read_row(ctx, r.field.name, id)).collect();
            if r.field.name == "geom_friction" {
                let condim = ctx.model().geom_condim();
                r.nominal_condim = r.ids.iter().map(|&id| condim[id]).collect();
            }
        }
        self.captured = true;
    }

    /// A friction change that can be read only from a contact has none to read yet: nothing
    /// touches its selection this step (a held object's contacts flicker off for single steps).
    fn friction_unread(&self, ctx: &SimContext) -> bool {
        self.resolved.iter().any(|r| {
            r.field.name == "geom_friction"
                && r.nominal.iter().any(|n| n != &r.target)
                && touching(ctx, &r.ids.iter().copied().collect()).is_empty()
        })
    }

    fn apply(&mut self, ctx: &mut SimContext, on: bool) {
        let sel = self.selected_geoms();
        self.before = touching(ctx, &sel).into_iter().map(|(_, a, b)| (a, b)).collect();
        self.write_all(ctx, on);
        self.pending = Some((on, 0));
        if let Some(sw) = &self.switch {
            sw.set(on, true);
        }
    }

    fn finish(&mut self, ctx: &SimContext, on: bool) {
        let mut verdict = Verdict::Untested;
        let mut parts = Vec::new();
        let mut seen_mask = false;
        for r in &self.resolved {
            if matches!(r.field.name, "geom_contype" | "geom_conaffinity") {
                if seen_mask {
                    continue; // the pair is verified once
                }
                seen_mask = true;
            }
            let (v, msg) = self.verify(ctx, r, on);
            verdict = verdict.max(v);
            parts.push(msg);
        }
        // a restore is never a failure
        if !on {
            verdict = Verdict::Untested;
        }
        let message = format!("{}: {}", verdict.as_str(), parts.join("; "));
        if verdict == Verdict::NoEffect {
            tracing::warn!("model_override `{}`: {message}", self.label);
        }
        if let Some(sw) = &mut self.switch {
            sw.answer(on, verdict, &message);
        }
    }
}

/// The object ids override `i` selects: its `select:` names (looked up as written, then under the
/// owner's prefix), then the geoms of its `bodies:` and `entity:` subtrees, each once.
fn select_ids(
    ctx: &SimContext,
    i: usize,
    o: &OverrideSpec,
    row: &FieldRow,
    prefix: &str,
) -> Result<Vec<usize>, String> {
    let m = ctx.model();
    let ngeom = m.ffi().ngeom as usize;
    let gbody = m.geom_bodyid();
    let mut ids: Vec<usize> = Vec::new();
    for (j, name) in o.select.iter().enumerate() {
        let id = m.name_to_id(row.ns.obj(), name).or_else(|| {
            (!prefix.is_empty())
                .then(|| m.name_to_id(row.ns.obj(), &format!("{prefix}{name}")))
                .flatten()
        });
        let Some(id) = id else {
            return Err(format!(
                "overrides[{i}].select[{j}]: no {} `{name}` in the model{}; {}s named like it: {}",
                row.ns.word(),
                if prefix.is_empty() {
                    String::new()
                } else {
                    format!(" (also looked up as `{prefix}{name}`)")
                },
                row.ns.word(),
                near_names(m, row.ns, name)
            ));
        };
        if row.ns == FieldNs::Body && id == 0 {
            return Err(format!("overrides[{i}].select[{j}]: `world` is the static world body; it has no mass to override"));
        }
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let mut roots: Vec<(String, usize)> = Vec::new();
    for (j, b) in o.bodies.iter().enumerate() {
        let id = m.name_to_id(MjtObjBase::mjOBJ_BODY, b).or_else(|| {
            (!prefix.is_empty())
                .then(|| m.name_to_id(MjtObjBase::mjOBJ_BODY, &format!("{prefix}{b}")))
                .flatten()
        });
        let Some(id) = id else {
            return Err(format!(
                "overrides[{i}].bodies[{j}]: no body `{b}` in the model; bodies named like it: {}",
                near_names(m, FieldNs::Body, b)
            ));
        };
        roots.push((format!("bodies[{j}]"), id));
    }
    if !o.entity.trim().is_empty() {
        let Some(e) = ctx.entities.get(&o.entity) else {
            return Err(format!(
                "overrides[{i}].entity: no entity `{}`; entities: [{}]",
                o.entity,
                ctx.entities.names().join(", ")
            ));
        };
        roots.push(("entity".into(), common::entity_body(m, e)?));
    }
    for (key, root) in &roots {
        let subtree: Vec<usize> =
            (0..ngeom).filter(|&g| common::in_subtree(m, gbody[g] as usize, *root)).collect();
        if subtree.is_empty() {
            return Err(format!(
                "overrides[{i}].{key}: the subtree of body `{}` has no geoms: it selects nothing",
                m.id_to_name(MjtObjBase::mjOBJ_BODY, *root).unwrap_or("?")
            ));
        }
        for g in subtree {
            if !ids.contains(&g) {
                ids.push(g);
            }
        }
    }
    if ids.is_empty() {
        return Err(format!(
            "overrides[{i}]: the selection resolves to no {}: the override selects nothing",
            row.ns.word()
        ));
    }
    Ok(ids)
}

/// Geoms override `i` could change nothing for are refused: a geom an explicit
/// `<pair>` covers, a geom presence makes absent, a selection of visual-only geoms.
fn check_geoms(
    ctx: &SimContext,
    i: usize,
    o: &OverrideSpec,
    ids: &[usize],
    names: &[String],
) -> Result<(), String> {
    let m = ctx.model();
    let gbody = m.geom_bodyid();
    // an explicit <pair> carries its own friction and ignores contype/conaffinity
    let (p1, p2) = (m.pair_geom1(), m.pair_geom2());
    for p in 0..p1.len() {
        let (a, b) = (p1[p] as usize, p2[p] as usize);
        if let Some(k) = ids.iter().position(|&g| g == a || g == b) {
            let nm = |g| crate::plugins::shared::geom_name(m, g);
            return Err(format!(
                "overrides[{i}]: geom `{}` is covered by an explicit <pair> (`{}` / `{}`), which carries its own friction and ignores contype/conaffinity, so `{}` would change nothing for that contact; override the pair's parameters in the model instead, or select other geoms",
                names[k],
                nm(a),
                nm(b),
                o.field
            ));
        }
    }
    // absent geoms: an entity declared `present: false` (or made absent since)
    let group = m.geom_group();
    for (k, &g) in ids.iter().enumerate() {
        let owner = ctx.entities.all().iter().find(|e| {
            m.name_to_id(MjtObjBase::mjOBJ_BODY, &e.body)
                .is_some_and(|root| common::in_subtree(m, gbody[g] as usize, root))
        });
        let declared_absent = owner.is_some_and(|e| !e.declared_present || !e.present);
        if declared_absent || group[g] == ABSENT_GEOM_GROUP as i32 {
            return Err(format!(
                "overrides[{i}]: geom `{}` belongs to {} which presence makes absent (no contact at all while absent), so `{}` could only take effect after a spawn; select present geoms",
                names[k],
                owner.map(|e| format!("entity `{}`", e.name)).unwrap_or_else(|| "an entity".into()),
                o.field
            ));
        }
    }
    let (ct, ca) = (m.geom_contype(), m.geom_conaffinity());
    if ids.iter().all(|&g| ct[g] == 0 && ca[g] == 0) {
        return Err(format!(
            "overrides[{i}]: every selected geom ([{}]) is visual-only (contype = conaffinity = 0): it takes part in no contact, so `{}` would change nothing; select the colliding geoms",
            names.join(", "),
            o.field
        ));
    }
    Ok(())
}

/// An actuator MuJoCo ignores the forcerange of (not force-limited) is refused.
fn check_actuators(m: &MjModel, i: usize, ids: &[usize], names: &[String]) -> Result<(), String> {
    let fl = m.actuator_forcelimited();
    if let Some(k) = ids.iter().position(|&a| !fl[a]) {
        return Err(format!(
            "overrides[{i}]: actuator `{}` is not force-limited (no forcerange / forcelimited=\"false\"), so MuJoCo ignores its forcerange and the override would change nothing; give it a forcerange in the model",
            names[k]
        ));
    }
    Ok(())
}

/// `geom_contype` and `geom_conaffinity` are overridden over the same geoms (either alone was
/// measured to be a no-op).
fn check_mask_pairs(m: &MjModel, resolved: &[Resolved]) -> Result<(), String> {
    let set = |f: &str| -> BTreeSet<usize> {
        resolved
            .iter()
            .filter(|r: &&Resolved| r.field.name == f)
            .flat_map(|r| r.ids.iter().copied())
            .collect()
    };
    let (cts, cas) = (set("geom_contype"), set("geom_conaffinity"));
    if cts != cas {
        let only: Vec<String> = cts
            .symmetric_difference(&cas)
            .map(|&g| crate::plugins::shared::geom_name(m, g))
            .collect();
        return Err(format!(
            "geom_contype and geom_conaffinity must be overridden over the same geoms (either alone was measured to be a no-op); only one of the two covers [{}]",
            only.join(", ")
        ));
    }
    Ok(())
}

/// The descriptor.
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "model_override",
        "Fault injection: change allowlisted model values (friction, contype+conaffinity, forcerange, body_mass) on a SetBool trigger; replies landed / no_effect / untested.",
        ModelOverrideConfig,
        ModelOverride
    )
}

/// Names of every object of `ns` close to `name` (sharing its first 4 characters, or containing
/// it), else the first 30; for an unknown-name refusal.
fn near_names(m: &MjModel, ns: FieldNs, name: &str) -> String {
    let n = match ns {
        FieldNs::Geom => m.ffi().ngeom,
        FieldNs::Body => m.ffi().nbody,
        FieldNs::Actuator => m.ffi().nu,
    } as usize;
    let all: Vec<&str> =
        (0..n).filter_map(|i| m.id_to_name(ns.obj(), i)).filter(|s| !s.is_empty()).collect();
    let stem: String = name.chars().take(4).collect();
    let near: Vec<&str> = all
        .iter()
        .copied()
        .filter(|s| {
            s.contains(name) || name.contains(*s) || (!stem.is_empty() && s.starts_with(&stem))
        })
        .collect();
    let list =
        if near.is_empty() { all.iter().take(30).copied().collect::<Vec<_>>() } else { near };
    let more =
        if list.len() < all.len() { format!(" ({} in all)", all.len()) } else { String::new() };
    format!("[{}]{more}", list.join(", "))
}

impl Plugin for ModelOverride {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::PRE_STEP | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let prefix = ctx
            .entities
            .resolve_owner(self.owner.as_deref())
            .map(|e| e.prefix.clone())
            .unwrap_or_default();
        let mut resolved = Vec::new();
        for (i, o) in self.cfg.overrides.iter().enumerate() {
            let row = catalog(&o.field).expect("validated");
            let ids = select_ids(ctx, i, o, row, &prefix)?;
            let m = ctx.model();
            let names: Vec<String> = ids
                .iter()
                .map(|&id| {
                    m.id_to_name(row.ns.obj(), id)
                        .map(str::to_string)
                        .unwrap_or_else(|| format!("{}#{id}", row.ns.word()))
                })
                .collect();
            if row.ns == FieldNs::Geom {
                check_geoms(ctx, i, o, &ids, &names)?;
            }
            if row.ns == FieldNs::Actuator {
                check_actuators(m, i, &ids, &names)?;
            }
            resolved.push(Resolved {
                field: row,
                ids,
                names,
                target: o.row(row.width),
                nominal: Vec::new(),
                nominal_condim: Vec::new(),
            });
        }
        check_mask_pairs(ctx.model(), &resolved)?;
        self.resolved = resolved;

        let ns = self
            .cfg
            .namespace
            .clone()
            .filter(|s| !s.trim_matches('/').is_empty())
            .unwrap_or_else(|| self.label.clone());
        let at = SwitchEndpoints {
            path: "",
            owner: self.owner.as_deref(),
            namespace: Some(&ns),
            rate_hz: self.cfg.rate_hz,
        };
        let who = format!("model_override `{}`", self.label);
        self.switch = Some(OverrideSwitch::register(
            ctx,
            at,
            handle_key(&self.label),
            who,
            FaultSwitch::default(),
        ));
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        if !self.captured {
            self.capture(ctx);
        }
        if let Some(sw) = &mut self.switch {
            sw.reset();
        }
        self.pending = None;
        self.write_all(ctx, false);
        if self.cfg.active {
            self.apply(ctx, true);
        }
        Ok(())
    }

    fn pre_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if self.pending.is_some() {
            // a change still waits for its reading: later requests stay queued until it is answered
            return Ok(());
        }
        let wanted = self.switch.as_mut().and_then(|sw| sw.take_request(ctx));
        if let Some(on) = wanted {
            self.apply(ctx, on);
        }
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if let Some((on, waited)) = self.pending.take() {
            if on && waited + 1 < CONTACT_WAIT_STEPS && self.friction_unread(ctx) {
                self.pending = Some((on, waited + 1));
            } else {
                self.finish(ctx, on);
            }
        }
        if let Some(sw) = &self.switch {
            sw.publish(ctx);
        }
        Ok(())
    }
}
