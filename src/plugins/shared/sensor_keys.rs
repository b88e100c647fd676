//! The config checks the sensors share, one home each: a noise or range key that must be finite
//! and >= 0 ([`finite_nonneg`]); a ray sensor's names ([`check_site`], [`check_frame_and_topics`]:
//! the site it casts from, the frame it stamps, its topic renames); and a `fault:` block's
//! degraded values ([`fault_params`]: the block checked against the sensor's allowlist, written
//! over a copy of the config with `overlay!`, the copy checked like the nominal config, every
//! refusal at `fault.<key>`). The range keys of a ray sensor (`range_min` … `range_resolution`)
//! are checked and resolved by [`super::scan::RayKeys`].
//!
//! The keys themselves stay fields of each sensor's own config rather than one
//! `#[serde(flatten)]`ed struct: serde reads a flattened struct from a buffer, so a refusal of one
//! of its keys would lose the key's path (and an unknown key the list of the keys there are).

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;

use crate::error::ConfigError;
use crate::handles::sensor_fault::{self, FaultAllowlist, FaultBlock};

/// Refuse `v` at `key` unless it is finite and >= 0 (`unit` names what it measures).
pub fn finite_nonneg(e: &mut Vec<ConfigError>, key: &str, v: f64, unit: &str) {
    if !(v.is_finite() && v >= 0.0) {
        e.push(ConfigError::new(key, format!("must be a finite number >= 0 ({unit}), got {v}")));
    }
}

/// The `site` a ray sensor casts from: `required` when it is missing, refused when blank.
pub fn check_site(site: &Option<String>, required: &str) -> Option<ConfigError> {
    match site {
        None => Some(ConfigError::new("site", required)),
        Some(s) if s.trim().is_empty() => {
            Some(ConfigError::new("site", "must name a site of the model"))
        }
        _ => None,
    }
}

/// A stated `frame_id` must not be blank (`default` says what omitting it gives); the `topics:`
/// renames must name the sensor's `roles` ([`super::check_topics`]).
pub fn check_frame_and_topics(
    frame_id: &Option<String>,
    default: &str,
    topics: &BTreeMap<String, String>,
    roles: &[&str],
) -> Vec<ConfigError> {
    let mut e = Vec::new();
    if frame_id.as_deref().is_some_and(|f| f.trim().is_empty()) {
        e.push(ConfigError::new("frame_id", format!("must not be empty ({default})")));
    }
    e.extend(super::check_topics(topics, roles));
    e
}

/// Write every key a typed fault block `$f` states over the config `$c` (same field names):
/// `overlay!(c, f; range_stddev, dropout_percent)`.
macro_rules! overlay {
    ($c:ident, $f:ident; $($k:ident),* $(,)?) => {$(
        if let Some(v) = $f.$k {
            $c.$k = v;
        }
    )*};
}
pub(crate) use overlay;

/// The per-frame values a sensor takes while its `fault:` block is on, checked: `None` without a
/// block. The block is checked against `allow` and typed as `F`, written over a copy of
/// `nominal` by `overlay`, and the copy checked by `check` (the nominal config's own check), its
/// refusals named `fault.<key>: in the fault block: ...`.
pub fn fault_params<C: Clone, F: DeserializeOwned, P>(
    nominal: &C,
    block: Option<&FaultBlock>,
    allow: &FaultAllowlist,
    overlay: impl FnOnce(&mut C, F),
    check: impl FnOnce(&C) -> Result<P, Vec<ConfigError>>,
) -> Result<Option<P>, Vec<ConfigError>> {
    let Some(block) = block else { return Ok(None) };
    let f: F = sensor_fault::parse(block, allow)?;
    let mut degraded = nominal.clone();
    overlay(&mut degraded, f);
    check(&degraded).map(Some).map_err(|es| {
        es.into_iter()
            .map(|x| {
                ConfigError::new(
                    sensor_fault::prefix_path(&x.path),
                    format!("in the fault block: {}", x.message),
                )
            })
            .collect()
    })
}
