//! `contact_pair_override`: override the contact between ONE pair of geoms.
//!
//! MuJoCo mixes a contact's parameters from its two geoms — friction from the geom of higher
//! `priority`, at equal priority the element-wise maximum — so lowering one side's friction can
//! never bring a pair below the other side's value, and a per-geom edit changes that geom's
//! contact with everything. An explicit MuJoCo `<pair>` states the pair's parameters outright
//! and applies to that pair alone (whatever the geoms' contype/conaffinity; MuJoCo then skips the
//! pair's mixed contact). This entry adds that `<pair>` to the spec at build time, before
//! compile, so no compiled-model value is ever written at run time.
//!
//! Keys are MuJoCo's `<pair>` attributes: `geom1`, `geom2` (compiled geom names, REQUIRED, two
//! different geoms existing in the world built so far: the world definition and the entries above
//! this one), `friction` (1 value = sliding; 3 = [sliding, torsional, rolling]; or MuJoCo's 5
//! [slide1, slide2, spin, roll1, roll2]), `condim`, `solref`, `solreffriction`, `solimp`,
//! `margin`, `gap`. An attribute not given takes MuJoCo's `<pair>` default (friction
//! 1 1 0.005 0.0001 0.0001, condim 3, solref 0.02 1, solimp 0.9 0.95 0.001 0.5 2, margin and gap
//! 0), exactly as plain MuJoCo compiles the same `<pair>`; at least one must be given.

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::{num, ConfigError, HookResult};
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::world::bounds::{MAX_FRICTION, MAX_SIZE_M};

/// MuJoCo's `<pair>` default friction.
pub const PAIR_FRICTION: [f64; 5] = [1.0, 1.0, 0.005, 0.0001, 0.0001];

/// `friction:` as one, three or five numbers.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PairFriction {
    /// Sliding friction (both tangent directions); torsional and rolling keep MuJoCo's defaults.
    Sliding(f64),
    /// [sliding, torsional, rolling] (or MuJoCo's five [slide1, slide2, spin, roll1, roll2]).
    List(Vec<f64>),
}

impl PairFriction {
    /// MuJoCo's five pair coefficients.
    pub fn five(&self) -> [f64; 5] {
        match self {
            PairFriction::Sliding(s) => {
                [*s, *s, PAIR_FRICTION[2], PAIR_FRICTION[3], PAIR_FRICTION[4]]
            }
            PairFriction::List(v) if v.len() == 1 => {
                [v[0], v[0], PAIR_FRICTION[2], PAIR_FRICTION[3], PAIR_FRICTION[4]]
            }
            PairFriction::List(v) if v.len() == 3 => [v[0], v[0], v[1], v[2], v[2]],
            PairFriction::List(v) => [v[0], v[1], v[2], v[3], v[4]],
        }
    }

    fn values(&self) -> Vec<f64> {
        match self {
            PairFriction::Sliding(s) => vec![*s],
            PairFriction::List(v) => v.clone(),
        }
    }
}

/// Config of `contact_pair_override`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContactPairOverrideConfig {
    /// First geom (its compiled name). REQUIRED.
    pub geom1: String,
    /// Second geom (its compiled name). REQUIRED.
    pub geom2: String,
    /// Friction: sliding, [sliding, torsional, rolling], or [slide1, slide2, spin, roll1, roll2].
    #[serde(default)]
    pub friction: Option<PairFriction>,
    /// Contact dimensionality: 1 (frictionless), 3 (sliding), 4 (+ torsional), 6 (+ rolling).
    #[serde(default)]
    pub condim: Option<i32>,
    /// Solver reference of the normal direction [timeconst, dampratio] (or MuJoCo's negative
    /// [stiffness, damping]).
    #[serde(default)]
    pub solref: Option<[f64; 2]>,
    /// Solver reference of the frictional directions (same form as `solref`).
    #[serde(default)]
    pub solreffriction: Option<[f64; 2]>,
    /// Solver impedance [dmin, dmax, width] or [dmin, dmax, width, midpoint, power].
    #[serde(default)]
    pub solimp: Option<Vec<f64>>,
    /// Contact detection margin (m).
    #[serde(default)]
    pub margin: Option<f64>,
    /// Contact gap (m): contacts within the margin but farther than this are not active.
    #[serde(default)]
    pub gap: Option<f64>,
}

impl ValidateConfig for ContactPairOverrideConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        for (k, v) in [("geom1", &self.geom1), ("geom2", &self.geom2)] {
            if v.trim().is_empty() {
                e.push(ConfigError::new(k, "empty name: name a geom of the world"));
            }
        }
        if !self.geom1.is_empty() && self.geom1 == self.geom2 {
            e.push(ConfigError::new(
                "geom2",
                format!("is geom1 again (`{}`): a pair is two different geoms", self.geom2),
            ));
        }
        if let Some(f) = &self.friction {
            let v = f.values();
            if ![1, 3, 5].contains(&v.len()) {
                e.push(ConfigError::new(
                    "friction",
                    format!("1, 3 or 5 numbers (sliding; sliding, torsional, rolling; or MuJoCo's five), got {}", v.len()),
                ));
            } else if v.iter().any(|x| !(*x >= 0.0 && *x <= MAX_FRICTION)) {
                e.push(ConfigError::new(
                    "friction",
                    format!(
                        "coefficients are in [0, {MAX_FRICTION}], got [{}]",
                        v.iter().map(|x| num(*x)).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
        if let Some(c) = self.condim {
            if ![1, 3, 4, 6].contains(&c) {
                e.push(ConfigError::new(
                    "condim",
                    format!("MuJoCo's contact dimensionality is 1, 3, 4 or 6, got {c}"),
                ));
            }
        }
        for (k, v) in [("solref", self.solref), ("solreffriction", self.solreffriction)] {
            if let Some(r) = v {
                if r.iter().any(|x| !x.is_finite()) || (r[0] > 0.0) != (r[1] > 0.0) || r[0] == 0.0 {
                    e.push(ConfigError::new(
                        k,
                        format!(
                            "[timeconst, dampratio] both > 0, or [-stiffness, -damping] both < 0, got [{}]",
                            r.map(num).join(", ")
                        ),
                    ));
                }
            }
        }
        if let Some(s) = &self.solimp {
            let ok_len = s.len() == 3 || s.len() == 5;
            let ok_d = s.len() >= 2
                && (0.0..1.0).contains(&s[0])
                && (0.0..1.0).contains(&s[1])
                && s[0] > 0.0
                && s[1] > 0.0;
            if !ok_len || !ok_d || s.iter().any(|x| !x.is_finite()) {
                e.push(ConfigError::new(
                    "solimp",
                    format!(
                        "[dmin, dmax, width] or [dmin, dmax, width, midpoint, power] with dmin, dmax in (0, 1), got [{}]",
                        s.iter().map(|x| num(*x)).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
        for (k, v) in [("margin", self.margin), ("gap", self.gap)] {
            if let Some(x) = v {
                if !(0.0..=MAX_SIZE_M).contains(&x) {
                    e.push(ConfigError::new(k, format!("must be in [0, 10000] m, got {}", num(x))));
                }
            }
        }
        if let (Some(g), m) = (self.gap, self.margin.unwrap_or(0.0)) {
            if g > m {
                e.push(ConfigError::new(
                    "gap",
                    format!(
                        "a gap ({} m) larger than the margin ({} m) leaves no active contact",
                        num(g),
                        num(m)
                    ),
                ));
            }
        }
        if self.friction.is_none()
            && self.condim.is_none()
            && self.solref.is_none()
            && self.solreffriction.is_none()
            && self.solimp.is_none()
            && self.margin.is_none()
            && self.gap.is_none()
        {
            e.push(ConfigError::new(
                "",
                "overrides nothing: give at least one of friction, condim, solref, solreffriction, solimp, margin, gap",
            ));
        }
        e
    }
}

/// The `contact_pair_override` plugin.
pub struct ContactPairOverride {
    cfg: ContactPairOverrideConfig,
}

impl ContactPairOverride {
    /// Construct from config.
    pub fn new(cfg: ContactPairOverrideConfig, _args: &PluginArgs) -> Self {
        ContactPairOverride { cfg }
    }
}

impl Plugin for ContactPairOverride {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD
    }

    fn build(&mut self, spec: &mut MjSpec, _b: &mut BuildContext) -> HookResult {
        let c = &self.cfg;
        for (k, g) in [("geom1", &c.geom1), ("geom2", &c.geom2)] {
            if spec.geom(g).is_none() {
                return Err(format!(
                    "{k}: no geom `{g}` in the world built so far (this entry sees the world definition and the entries above it; \
                     name a compiled geom, prefix included, and place this entry after the one that builds it)"
                ));
            }
        }
        let pair = spec.add_pair().with_geomname1(&c.geom1).with_geomname2(&c.geom2);
        if let Some(f) = &c.friction {
            *pair.friction_mut() = f.five();
        }
        if let Some(d) = c.condim {
            pair.set_condim(d);
        }
        if let Some(r) = c.solref {
            *pair.solref_mut() = r;
        }
        if let Some(r) = c.solreffriction {
            *pair.solreffriction_mut() = r;
        }
        if let Some(s) = &c.solimp {
            let imp = pair.solimp_mut();
            imp[..s.len()].copy_from_slice(s);
        }
        if let Some(m) = c.margin {
            pair.set_margin(m);
        }
        if let Some(g) = c.gap {
            pair.set_gap(g);
        }
        Ok(())
    }
}

/// The registry entry of `contact_pair_override`.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "contact_pair_override",
        "Override the contact between ONE pair of geoms (a MuJoCo <pair>: friction, condim, solref, solimp, margin, gap), added before compile.",
        ContactPairOverrideConfig,
        ContactPairOverride
    )
}
