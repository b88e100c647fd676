//! Reading back one override a step after it was switched: the verdict (landed, no effect,
//! untested) and its reason, per field by what the model or the contacts now show.

use std::collections::BTreeSet;

use super::{touching, ModelOverride, Resolved, CONTACT_WAIT_STEPS, FRICTIONLESS_BELOW, MJ_MINMU};
use crate::context::SimContext;
use crate::plugins::faults::Verdict;

/// What a landed friction reply adds for a frictionless target (see [`FRICTIONLESS_BELOW`]).
fn frictionless_note(sliding: f64) -> &'static str {
    if sliding < FRICTIONLESS_BELOW {
        " (frictionless: condim 1 while the fault is on)"
    } else {
        ""
    }
}

fn pairs_collide(ct: &[i32], ca: &[i32], a: usize, b: usize) -> bool {
    (ct[a] & ca[b]) != 0 || (ct[b] & ca[a]) != 0
}

impl ModelOverride {
    /// Verify one override one step after `on` was applied.
    pub(super) fn verify(&self, ctx: &SimContext, r: &Resolved, on: bool) -> (Verdict, String) {
        let what = format!("{} -> {:?} on [{}]", r.field.name, r.target, r.names.join(", "));
        if !on {
            return (
                Verdict::Untested,
                format!("{} restored to nominal (nothing to verify)", r.field.name),
            );
        }
        if r.nominal.iter().all(|n| n == &r.target) {
            return (
                Verdict::NoEffect,
                format!("{what}: the target equals the nominal value, so nothing changed"),
            );
        }
        match r.field.name {
            "geom_friction" => verify_friction(ctx, r, &what),
            "geom_contype" | "geom_conaffinity" => self.verify_masks(ctx, &what),
            "actuator_forcerange" => verify_forcerange(ctx, r, &what),
            "body_mass" => verify_mass(ctx, r, &what),
            _ => (Verdict::Untested, what),
        }
    }

    /// Contype/conaffinity: no selected pair collides against its new masks, and a contact the
    /// change removes (or one only the new masks make) is the evidence.
    fn verify_masks(&self, ctx: &SimContext, what: &str) -> (Verdict, String) {
        let m = ctx.model();
        let sel = self.selected_geoms();
        let (ct, ca) = (m.geom_contype(), m.geom_conaffinity());
        let after: Vec<(usize, usize)> =
            touching(ctx, &sel).into_iter().map(|(_, a, b)| (a, b)).collect();
        if let Some(&(a, b)) = after.iter().find(|&&(a, b)| !pairs_collide(ct, ca, a, b)) {
            let nm = |g| crate::plugins::shared::geom_name(m, g);
            return (
                Verdict::NoEffect,
                format!(
                    "{what}: `{}` and `{}` still collide although their masks no longer pair",
                    nm(a),
                    nm(b)
                ),
            );
        }
        let removed = self
            .before
            .iter()
            .filter(|&&(a, b)| !pairs_collide(ct, ca, a, b) && !after.contains(&(a, b)))
            .count();
        if removed > 0 {
            return (
                Verdict::Landed,
                format!("{what}: {removed} contact(s) the selection had before are gone"),
            );
        }
        let nominal_pairs = |a: usize, b: usize| {
            let nom = |g: usize, f: &str| -> i32 {
                self.resolved
                    .iter()
                    .filter(|x| x.field.name == f)
                    .find_map(|x| {
                        x.ids.iter().position(|&id| id == g).map(|k| x.nominal[k][0] as i32)
                    })
                    .unwrap_or(if f == "geom_contype" { ct[g] } else { ca[g] })
            };
            (nom(a, "geom_contype") & nom(b, "geom_conaffinity")) != 0
                || (nom(b, "geom_contype") & nom(a, "geom_conaffinity")) != 0
        };
        let added = after.iter().filter(|&&(a, b)| !nominal_pairs(a, b)).count();
        if added > 0 {
            return (
                Verdict::Landed,
                format!("{what}: {added} contact(s) the nominal masks would not have made"),
            );
        }
        (Verdict::Untested, format!("{what}: no contact the change affects was present before or after it (not a failure)"))
    }
}

/// Friction: the contacts touching the selection carry the new sliding coefficient, unless the
/// other side owns them (higher priority, or the larger value at equal priority).
fn verify_friction(ctx: &SimContext, r: &Resolved, what: &str) -> (Verdict, String) {
    let m = ctx.model();
    let sel: BTreeSet<usize> = r.ids.iter().copied().collect();
    let hits = touching(ctx, &sel);
    if hits.is_empty() {
        return (Verdict::Untested, format!("{what}: nothing touched the selected geoms in the {CONTACT_WAIT_STEPS} steps after the change, so the applied contact could not be read (not a failure)"));
    }
    let want = r.target[0];
    // MuJoCo floors a contact's friction coefficients at mjMINMU (1e-5)
    let applied = want.max(MJ_MINMU);
    let tol = 1e-9 * applied.abs().max(1.0);
    let d = ctx.data();
    let mut carry = 0;
    let mut others = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for &(i, _, o) in &hits {
        let mu = d.contact()[i].friction[0];
        if (mu - applied).abs() <= tol {
            carry += 1;
        } else {
            others.insert(crate::plugins::shared::geom_name(m, o));
            seen.insert(format!("{mu}"));
        }
    }
    let n = hits.len();
    if carry == 0 {
        let seen: Vec<String> = seen.into_iter().collect();
        let others: Vec<String> = others.into_iter().collect();
        (
            Verdict::NoEffect,
            format!(
                "{what}: {n} contact(s) touching the selection still carry sliding friction {} (wanted {want}); MuJoCo takes a contact's friction from the geom with the higher priority, and at equal priority the larger value, so the other side owns these contacts ([{}]): select the geoms that own the contact, or both sides",
                seen.join(" / "),
                others.join(", ")
            ),
        )
    } else if carry == n {
        (Verdict::Landed, format!("{what}: {carry} of {n} contact(s) touching the selection carry sliding friction {want}{}", frictionless_note(want)))
    } else {
        let others: Vec<String> = others.into_iter().collect();
        (Verdict::Landed, format!("{what}: {carry} of {n} contact(s) carry sliding friction {want}{}; the rest are owned by the other side ([{}])", frictionless_note(want), others.join(", ")))
    }
}

/// Force range: no selected actuator exerts outside the new range; one at a bound is the
/// evidence.
fn verify_forcerange(ctx: &SimContext, r: &Resolved, what: &str) -> (Verdict, String) {
    let m = ctx.model();
    let force = ctx.data().actuator_force();
    let outadr = m.actuator_outadr();
    let [lo, hi] = [r.target[0], r.target[1]];
    let tol = 1e-6 * lo.abs().max(hi.abs()).max(1.0);
    let mut landed = Vec::new();
    for (k, &a) in r.ids.iter().enumerate() {
        let f = force[outadr[a] as usize];
        if f < lo - tol || f > hi + tol {
            return (
                Verdict::NoEffect,
                format!("{what}: `{}` still exerts {f} outside [{lo}, {hi}]", r.names[k]),
            );
        }
        if (f - lo).abs() <= tol || (f - hi).abs() <= tol {
            landed.push(format!("{} at {f}", r.names[k]));
        }
    }
    if landed.is_empty() {
        (Verdict::Untested, format!("{what}: no selected actuator pushed against the new limit one step later (not a failure)"))
    } else {
        (Verdict::Landed, format!("{what}: clamped ({})", landed.join(", ")))
    }
}

/// Mass: every selected body reads the new mass, and its subtree mass (mj_setConst) the new mass
/// plus its children's.
fn verify_mass(ctx: &SimContext, r: &Resolved, what: &str) -> (Verdict, String) {
    let m = ctx.model();
    let (mass, sub, parent) = (m.body_mass(), m.body_subtreemass(), m.body_parentid());
    for (k, &b) in r.ids.iter().enumerate() {
        let children: f64 =
            (1..mass.len()).filter(|&c| parent[c] as usize == b && c != b).map(|c| sub[c]).sum();
        let tol = 1e-9 * r.target[0].max(1.0);
        if (mass[b] - r.target[0]).abs() > tol
            || (sub[b] - (r.target[0] + children)).abs() > 1e-6 * sub[b].max(1.0)
        {
            return (
                Verdict::NoEffect,
                format!(
                    "{what}: `{}` reads mass {} / subtree {} after mj_setConst",
                    r.names[k], mass[b], sub[b]
                ),
            );
        }
    }
    (
        Verdict::Landed,
        format!(
            "{what}: body masses and the derived subtree masses (mj_setConst) carry the new value"
        ),
    )
}
