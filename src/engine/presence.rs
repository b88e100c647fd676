//! Presence: making a compiled entity appear and disappear without recompiling.
//!
//! Absent means three model fields, per geom and body of the entity's subtree:
//! - its geoms move to [`ABSENT_GEOM_GROUP`], so the raycast seam's default mask (and a renderer)
//!   no longer sees them — `mj_multiRay` ignores contype, so this is the one that hides it from a
//!   lidar;
//! - its geoms lose contact (`contype = conaffinity = 0`);
//! - its bodies are frozen: `body_gravcomp = 1` (gravity compensated) and, at the moment it goes
//!   absent, the velocity of its joints is zeroed — it is not parked far away, so it never falls.
//!
//! Going present restores exactly the values saved at configure. Reset re-applies every entity's
//! declared presence. MuJoCo decides at compile whether gravity compensation is computed at all
//! (`ngravcomp > 0`), so the engine arms it once per world before compile ([`arm_gravcomp`]).

use std::collections::BTreeMap;

use mujoco_rs::prelude::*;

use crate::context::SimContext;
pub use crate::mujoco::raycast::ABSENT_GEOM_GROUP;

/// Name of the static, massless body that arms gravity compensation for the world.
pub const GRAVCOMP_ANCHOR: &str = "roqsim_presence_gravcomp_anchor";

/// What presence saved about one entity at configure.
#[derive(Debug, Clone, Default)]
struct Record {
    bodies: Vec<usize>,
    geoms: Vec<usize>,
    /// Nominal (group, contype, conaffinity) per geom.
    geom_nominal: Vec<(i32, i32, i32)>,
    /// Nominal gravcomp per body.
    body_nominal: Vec<f64>,
    /// dof ranges (dofadr, dofnum) of the subtree's joints.
    dofs: Vec<(usize, usize)>,
}

/// Per-entity saved model values.
#[derive(Debug, Default)]
pub struct PresenceTable {
    records: BTreeMap<String, Record>,
}

/// Add a static massless body with `gravcomp = 1` so MuJoCo computes gravity compensation at
/// run time (it skips it entirely when no body has gravcomp at compile).
pub fn arm_gravcomp(spec: &mut MjSpec) {
    spec.world_body_mut().add_body().with_name(GRAVCOMP_ANCHOR).set_gravcomp(1.0);
}

/// Save every registered entity's nominal values (engine, after configure).
pub fn capture(ctx: &mut SimContext) -> Result<(), String> {
    let mut table = PresenceTable::default();
    let m = ctx.model();
    let nbody = m.ffi().nbody as usize;
    let parent = m.body_parentid();
    let geom_body = m.geom_bodyid();
    let (group, contype, conaff) = (m.geom_group(), m.geom_contype(), m.geom_conaffinity());
    let gravcomp = m.body_gravcomp();
    let (jntadr, jntnum) = (m.body_jntadr(), m.body_jntnum());
    let (dofadr, dofnum) = (m.body_dofadr(), m.body_dofnum());
    for e in ctx.entities.all() {
        let Some(root) = m.name_to_id(MjtObjBase::mjOBJ_BODY, &e.body) else {
            return Err(format!(
                "entity `{}`: body `{}` is not in the compiled model",
                e.name, e.body
            ));
        };
        let mut bodies = vec![root];
        for (b, &p) in parent.iter().enumerate().take(nbody).skip(root + 1) {
            if bodies.contains(&(p as usize)) {
                bodies.push(b);
            }
        }
        let geoms: Vec<usize> =
            (0..geom_body.len()).filter(|&g| bodies.contains(&(geom_body[g] as usize))).collect();
        let rec = Record {
            geom_nominal: geoms.iter().map(|&g| (group[g], contype[g], conaff[g])).collect(),
            body_nominal: bodies.iter().map(|&b| gravcomp[b]).collect(),
            dofs: bodies
                .iter()
                .filter(|&&b| jntnum[b] > 0 && jntadr[b] >= 0)
                .map(|&b| (dofadr[b] as usize, dofnum[b] as usize))
                .collect(),
            bodies,
            geoms,
        };
        table.records.insert(e.name.clone(), rec);
    }
    ctx.presence = table;
    Ok(())
}

/// Make entity `name` present or absent. Idempotent. Errors name an unknown entity.
pub fn set_present(ctx: &mut SimContext, name: &str, present: bool) -> Result<(), String> {
    let rec = ctx.presence.records.get(name).cloned().ok_or_else(|| {
        format!("no entity `{name}`; entities: {}", ctx.entities.names().join(", "))
    })?;
    let was = ctx.entities.get(name).map(|e| e.present).unwrap_or(true);
    {
        let mut w = ctx.model_writer();
        for (k, &g) in rec.geoms.iter().enumerate() {
            let (grp, ct, ca) =
                if present { rec.geom_nominal[k] } else { (ABSENT_GEOM_GROUP as i32, 0, 0) };
            w.geom_group(g, grp);
            w.geom_contact(g, ct, ca);
        }
        for (k, &b) in rec.bodies.iter().enumerate() {
            w.body_gravcomp(b, if present { rec.body_nominal[k] } else { 1.0 });
        }
    }
    if !present && was {
        let d = ctx.data_mut();
        let qvel = d.qvel_mut();
        for &(adr, n) in &rec.dofs {
            for v in &mut qvel[adr..adr + n] {
                *v = 0.0;
            }
        }
    }
    if let Some(e) = ctx.entities.get_mut(name) {
        e.present = present;
    }
    Ok(())
}

/// Re-apply every entity's declared presence (engine, on reset).
pub fn apply_declared(ctx: &mut SimContext) -> Result<(), String> {
    let decl: Vec<(String, bool)> =
        ctx.entities.all().iter().map(|e| (e.name.clone(), e.declared_present)).collect();
    for (n, p) in decl {
        if ctx.presence.records.contains_key(&n) {
            set_present(ctx, &n, p)?;
        }
    }
    Ok(())
}
