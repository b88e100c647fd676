//! The `model_override` config: which field, on which named objects, to what value, when.

use super::*;

/// `to:`: a scalar broadcast over the field's row, or the full row.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ToValue {
    /// Broadcast to every element of the row.
    Scalar(f64),
    /// The full row.
    Row(Vec<f64>),
}

/// One override: a field, a selection, a target.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverrideSpec {
    /// mjModel field; must be on the allowlist (`geom_friction`, `geom_contype`,
    /// `geom_conaffinity`, `actuator_forcerange`, `body_mass`).
    pub field: String,
    /// Names in the field's own namespace (geom / body / actuator), as compiled (with any spawn
    /// prefix); nested under an entity, the entity's prefix is also tried.
    #[serde(default)]
    pub select: Vec<String>,
    /// Geom fields only: every geom of these bodies' subtrees.
    #[serde(default)]
    pub bodies: Vec<String>,
    /// Geom fields only: every geom of this entity's body subtree.
    #[serde(default)]
    pub entity: String,
    /// Target: a scalar (broadcast over the row) or the field's full row.
    pub to: ToValue,
}

pub(super) fn d_rate() -> f64 {
    10.0
}

/// Config of `model_override`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelOverrideConfig {
    /// One or more overrides, applied and restored together.
    pub overrides: Vec<OverrideSpec>,
    /// Initial state, re-applied on every reset; false = nominal (the plugin is inert). Default false.
    #[serde(default)]
    pub active: bool,
    /// Transport scope; default (omitted or ""): this instance's `name:`.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Publish rate (Hz) of `override_state` and `override_verified`. Default 10.
    #[serde(default = "d_rate")]
    pub rate_hz: f64,
}

pub(super) fn catalog(field: &str) -> Option<&'static FieldRow> {
    FIELD_CATALOG.iter().find(|r| r.name == field)
}

impl OverrideSpec {
    /// The target row (validated).
    pub(super) fn row(&self, width: usize) -> Vec<f64> {
        match &self.to {
            ToValue::Scalar(x) => vec![*x; width],
            ToValue::Row(r) => r.clone(),
        }
    }
}

impl ValidateConfig for ModelOverrideConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if self.overrides.is_empty() {
            e.push(ConfigError::new(
                "overrides",
                "is empty: name at least one {field, select, to}",
            ));
        }
        e.extend(crate::plugin::check_rate("rate_hz", self.rate_hz));
        for (i, o) in self.overrides.iter().enumerate() {
            let at = |k: &str| format!("overrides[{i}].{k}");
            let Some(row) = catalog(&o.field) else {
                e.push(ConfigError::new(at("field"), refusal(&o.field).unwrap_or_default()));
                continue;
            };
            if o.select.is_empty() && o.bodies.is_empty() && o.entity.trim().is_empty() {
                e.push(ConfigError::new(
                    at("select"),
                    format!(
                        "the override selects nothing: name {}s in `select:`{}",
                        row.ns.word(),
                        if row.ns == FieldNs::Geom {
                            ", or give `bodies:` or `entity:`"
                        } else {
                            ""
                        }
                    ),
                ));
            }
            if row.ns != FieldNs::Geom && (!o.bodies.is_empty() || !o.entity.trim().is_empty()) {
                let k = if o.bodies.is_empty() { "entity" } else { "bodies" };
                e.push(ConfigError::new(
                    at(k),
                    format!(
                        "`{k}:` selects geoms, and `{}` is a {} field: name its {}s in `select:`",
                        o.field,
                        row.ns.word(),
                        row.ns.word()
                    ),
                ));
            }
            for (j, n) in o.select.iter().enumerate() {
                if n.trim().is_empty() {
                    e.push(ConfigError::new(format!("overrides[{i}].select[{j}]"), "empty name"));
                }
            }
            if o.field == "actuator_forcerange" && matches!(o.to, ToValue::Scalar(_)) {
                e.push(ConfigError::new(at("to"), "a scalar would broadcast to [s, s], a range of one value: give the full row [lo, hi] (N or N·m)"));
                continue;
            }
            let vals = o.row(row.width);
            if vals.len() != row.width {
                e.push(ConfigError::new(at("to"), format!("`{}` rows have {} value(s), got {}: give a scalar (broadcast) or the full row", o.field, row.width, vals.len())));
                continue;
            }
            if vals.iter().any(|v| !v.is_finite()) {
                e.push(ConfigError::new(at("to"), format!("must be finite, got {vals:?}")));
                continue;
            }
            match o.field.as_str() {
                "geom_friction" if vals.iter().any(|v| *v < 0.0) => e.push(ConfigError::new(
                    at("to"),
                    format!("friction must be >= 0, got {vals:?}"),
                )),
                "geom_contype" | "geom_conaffinity"
                    if vals[0] < 0.0 || vals[0].fract() != 0.0 || vals[0] > i32::MAX as f64 =>
                {
                    e.push(ConfigError::new(
                        at("to"),
                        format!("a bit mask: a whole number >= 0, got {}", vals[0]),
                    ))
                }
                "actuator_forcerange" if vals[0] > vals[1] => e.push(ConfigError::new(
                    at("to"),
                    format!("[lo, hi] needs lo <= hi, got {vals:?}"),
                )),
                "body_mass" if vals[0] <= 0.0 => e.push(ConfigError::new(
                    at("to"),
                    format!("a body mass must be > 0 (kg), got {}", vals[0]),
                )),
                _ => {}
            }
        }
        // contype and conaffinity travel together (either alone was measured to be a no-op)
        let has = |f: &str| self.overrides.iter().any(|o| o.field == f);
        for (i, o) in self.overrides.iter().enumerate() {
            let partner = match o.field.as_str() {
                "geom_contype" => "geom_conaffinity",
                "geom_conaffinity" => "geom_contype",
                _ => continue,
            };
            if !has(partner) {
                e.push(ConfigError::new(
                    format!("overrides[{i}].field"),
                    format!("a `{}` override without its `{partner}` partner: MuJoCo pairs two geoms when contype_a & conaffinity_b or contype_b & conaffinity_a, so writing one of the two alone was measured to change nothing; add an override of `{partner}` over the same geoms", o.field),
                ));
            }
        }
        e
    }
}
