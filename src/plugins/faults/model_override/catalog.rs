//! The curated allowlist of compiled-model fields a fault may write at run time: each field's
//! object namespace, row width, how the write takes effect (live, or after `mj_setConst`), what it
//! does and its caveats, and the fields refused with the reason.

use super::*;

/// MuJoCo's floor on a contact's friction coefficients (`mjMINMU`): a requested 0 reads 1e-5.
pub const MJ_MINMU: f64 = 1e-5;

/// A sliding friction below this is written as a frictionless contact: the geom's condim becomes 1
/// while the fault is on (its nominal condim comes back on restore and reset). Under MuJoCo's
/// default pyramidal cone each friction facet is regularised with `2 μ² R` (R: the normal's), so
/// at the floor μ = 1e-5 a contact is numerically rigid: a 0.5 kg box squeezed at ~50 N between
/// two pads at μ = 1e-5 or 3e-5 was shot out at 33–87 m/s (measured), while μ = 1e-4 and above,
/// condim 1, or the elliptic cone drop it under gravity alone.
pub const FRICTIONLESS_BELOW: f64 = 1e-4;

/// Object namespace a field's `select:` names live in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldNs {
    /// Geoms (`select`, `bodies`, `entity`).
    Geom,
    /// Bodies.
    Body,
    /// Actuators.
    Actuator,
}

impl FieldNs {
    pub(super) fn word(self) -> &'static str {
        match self {
            FieldNs::Geom => "geom",
            FieldNs::Body => "body",
            FieldNs::Actuator => "actuator",
        }
    }
    pub(super) fn obj(self) -> MjtObjBase {
        match self {
            FieldNs::Geom => MjtObjBase::mjOBJ_GEOM,
            FieldNs::Body => MjtObjBase::mjOBJ_BODY,
            FieldNs::Actuator => MjtObjBase::mjOBJ_ACTUATOR,
        }
    }
}

/// When a write takes effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteClass {
    /// On the next step.
    Live,
    /// After `mj_setConst` (which the plugin calls).
    NeedsSetConst,
}

/// One allowlisted field.
#[derive(Debug, Clone, Copy)]
pub struct FieldRow {
    /// MuJoCo's mjModel field name.
    pub name: &'static str,
    /// Namespace of its selection.
    pub ns: FieldNs,
    /// Row width (a scalar `to:` is broadcast to it).
    pub width: usize,
    /// Write class.
    pub class: WriteClass,
    /// What it does.
    pub what: &'static str,
    /// How it can silently do nothing.
    pub caveat: &'static str,
}

/// The curated allowlist (`roqsim scenes describe --overridable` reads it).
pub const FIELD_CATALOG: &[FieldRow] = &[
    FieldRow {
        name: "geom_friction",
        ns: FieldNs::Geom,
        width: 3,
        class: WriteClass::Live,
        what: "contact friction [sliding, torsional, rolling] of the selected geoms (a grip that stops holding, a wheel that loses traction); a sliding value below 1e-4 is a frictionless contact, written with condim 1 while the fault is on",
        caveat: "a contact takes its friction from the geom with the higher priority, and at equal priority the element-wise maximum: lowering one side cannot bring a pair below the other side's value; select the side that owns the contact, or both",
    },
    FieldRow {
        name: "geom_contype",
        ns: FieldNs::Geom,
        width: 1,
        class: WriteClass::Live,
        what: "collision type bits (with geom_conaffinity: whether the geoms collide at all)",
        caveat: "alone it is a no-op (MuJoCo pairs on contype_a & conaffinity_b OR contype_b & conaffinity_a): override geom_conaffinity over the same geoms too",
    },
    FieldRow {
        name: "geom_conaffinity",
        ns: FieldNs::Geom,
        width: 1,
        class: WriteClass::Live,
        what: "collision affinity bits (with geom_contype)",
        caveat: "alone it is a no-op: override geom_contype over the same geoms too",
    },
    FieldRow {
        name: "actuator_forcerange",
        ns: FieldNs::Actuator,
        width: 2,
        class: WriteClass::Live,
        what: "force clamp [lo, hi] (N or N·m) of the selected actuators (a weak or failing motor)",
        caveat: "ignored unless the actuator is force-limited (forcelimited / autolimits with a forcerange); only a binding limit is observable",
    },
    FieldRow {
        name: "body_mass",
        ns: FieldNs::Body,
        width: 1,
        class: WriteClass::NeedsSetConst,
        what: "mass (kg) of the selected bodies (a payload that changes under load)",
        caveat: "the dynamics ignore the write until mj_setConst re-derives body_subtreemass / invweight0; the plugin calls it (inertia is left as compiled)",
    },
];

/// The reason a field is refused (None for an allowlisted field).
pub fn refusal(field: &str) -> Option<String> {
    let allowed: Vec<&str> = FIELD_CATALOG.iter().map(|r| r.name).collect();
    if FIELD_CATALOG.iter().any(|r| r.name == field) {
        return None;
    }
    let why = if field == "geom_size" {
        "geom_size is refused: geom_rbound (the bounding radius the broad phase uses) is cached at compile, so a box grown 0.05 -> 0.4 m kept rbound 0.0866 and, while overlapping the floor, produced no contact at all — geometry that renders big and collides as if small. Size is a build-time property: use a differently sized prop, or presence to swap one in".to_string()
    } else if field == "geom_priority" {
        "geom_priority is refused: priority also decides whose condim/solref/solimp a contact uses, so writing it would swap the contact's stiffness model at the instant of the fault, not just its friction. Select the geoms that own the contact instead (or both sides)".to_string()
    } else if field == "sensor_noise" {
        "sensor_noise is refused: sensor perturbation belongs to each sensor's own config, switched mid-run by its `fault:` block, not to MuJoCo's sensor_noise field".to_string()
    } else if field.starts_with("opt.") || field.starts_with("opt_") || field == "opt" {
        format!("`{field}` is refused: every opt.* global is owned by the sim: block and sim.contact_override, applied before compile, so it is in the compiled model and in the run's provenance; a runtime write would make the recorded value differ from the one that ran. Set it there")
    } else {
        format!("`{field}` is not on the allowlist of fields that can be written at runtime and take effect")
    };
    Some(format!("{why}; writable fields: {}", allowed.join(", ")))
}
