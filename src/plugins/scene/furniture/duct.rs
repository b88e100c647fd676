//! `duct`: a parametric round ventilation duct run under a ceiling.
//!
//! The main tube (a cylinder of `radius`) runs from `start` to `end` ([x, y], world) with its axis
//! at height `z`. At each distance of `branches` along the run a drop tube of `branch_radius`
//! hangs from the main tube's underside `branch_length` down, ending in a 20 mm diffuser disc of
//! `diffuser_radius` (0: no disc). Visual only (no contacts), for the reason the ceiling panels
//! are: nothing on the floor reaches a duct, and rays see it regardless. Names: `<stem>_main`,
//! `<stem>_drop_<k>`, `<stem>_diffuser_<k>`.

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use super::parts::{
    check_color, check_len, check_len0, check_pos, rgba_or, um, Contact, Look, Parts, Placement,
};
use crate::error::{num, ConfigError, HookResult};
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};

/// Default colour: galvanised steel.
pub const GALVANISED_RGBA: [f64; 4] = [0.7, 0.72, 0.74, 1.0];
/// Diffuser disc thickness (m).
pub const DIFFUSER_T: f64 = 0.02;
/// Most drops one run may carry.
pub const MAX_BRANCHES: usize = 1000;

fn d_z() -> f64 {
    3.2
}
fn d_radius() -> f64 {
    0.14
}
fn d_branch_length() -> f64 {
    0.40
}
fn d_branch_radius() -> f64 {
    0.08
}
fn d_diffuser_radius() -> f64 {
    0.16
}

/// Config of `duct`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DuctConfig {
    /// MJCF name prefix (distinct prefixes for more than one run). Default "".
    #[serde(default)]
    pub prefix: String,
    /// Run start [x, y] (m, world). REQUIRED.
    pub start: Vec<f64>,
    /// Run end [x, y] (m, world). REQUIRED.
    pub end: Vec<f64>,
    /// Height of the run's axis (m). Default 3.2.
    #[serde(default = "d_z")]
    pub z: f64,
    /// Main tube radius (m). Default 0.14.
    #[serde(default = "d_radius")]
    pub radius: f64,
    /// Distances along the run (m, from `start`) where a drop and diffuser hang. Default none.
    #[serde(default)]
    pub branches: Vec<f64>,
    /// How far a drop hangs below the main tube (m). Default 0.40.
    #[serde(default = "d_branch_length")]
    pub branch_length: f64,
    /// Drop tube radius (m). Default 0.08.
    #[serde(default = "d_branch_radius")]
    pub branch_radius: f64,
    /// Disc radius at the bottom of a drop (m); 0 = no disc. Default 0.16.
    #[serde(default = "d_diffuser_radius")]
    pub diffuser_radius: f64,
    /// Colour [r, g, b] or [r, g, b, a]. Default galvanised steel.
    #[serde(default)]
    pub color: Option<Vec<f64>>,
}

impl DuctConfig {
    /// Run length (m).
    pub fn length(&self) -> f64 {
        (self.end[0] - self.start[0]).hypot(self.end[1] - self.start[1])
    }
}

impl ValidateConfig for DuctConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e: Vec<ConfigError> = [
            check_pos("start", &self.start, &[2]),
            check_pos("end", &self.end, &[2]),
            check_len("z", self.z),
            check_len("radius", self.radius),
            check_len("branch_length", self.branch_length),
            check_len("branch_radius", self.branch_radius),
            check_len0("diffuser_radius", self.diffuser_radius),
        ]
        .into_iter()
        .flatten()
        .collect();
        e.extend(check_color("color", &self.color));
        if !e.is_empty() {
            return e;
        }
        let len = self.length();
        if len < 2.0 * self.radius {
            e.push(ConfigError::new(
                "end",
                format!(
                    "the run from start to end is {} m, shorter than the tube's diameter {} m: a duct needs a run",
                    um(len),
                    um(2.0 * self.radius)
                ),
            ));
        }
        if self.branch_radius > self.radius {
            e.push(ConfigError::new(
                "branch_radius",
                format!(
                    "a drop of radius {} m is wider than the main tube it hangs from ({} m)",
                    num(self.branch_radius),
                    num(self.radius)
                ),
            ));
        }
        if self.branches.len() > MAX_BRANCHES {
            e.push(ConfigError::new(
                "branches",
                format!(
                    "{} drops are more than one run carries ({MAX_BRANCHES})",
                    self.branches.len()
                ),
            ));
        }
        for (k, d) in self.branches.iter().enumerate() {
            if !(d.is_finite() && *d >= 0.0 && *d <= len) {
                e.push(ConfigError::new(
                    format!("branches[{k}]"),
                    format!(
                        "a distance along the run within 0 .. {} m (its length), got {}",
                        um(len),
                        num(*d)
                    ),
                ));
            }
        }
        if self.radius + self.branch_length + DIFFUSER_T >= self.z {
            e.push(ConfigError::new(
                "branch_length",
                format!(
                    "a drop {} m long under a run at {} m reaches the floor",
                    num(self.branch_length),
                    num(self.z)
                ),
            ));
        }
        e
    }
}

impl DuctConfig {
    /// The piece's parts, in world coordinates (the piece's frame is the world's).
    pub fn parts(&self, stem: &str) -> Parts {
        let mut p = Parts::new(stem);
        let look = Look::Rgba(rgba_or(&self.color, GALVANISED_RGBA));
        let v = Contact::Visual;
        let (s, e, z) = (&self.start, &self.end, self.z);
        p.cylinder("main", self.radius, [s[0], s[1], z], [e[0], e[1], z], look, v);
        let len = self.length();
        for (k, d) in self.branches.iter().enumerate() {
            let t = d / len;
            let (x, y) = (s[0] + t * (e[0] - s[0]), s[1] + t * (e[1] - s[1]));
            let top = z - self.radius;
            let bottom = top - self.branch_length;
            p.cylinder(
                &format!("drop_{k}"),
                self.branch_radius,
                [x, y, top],
                [x, y, bottom],
                look,
                v,
            );
            if self.diffuser_radius > 0.0 {
                p.cylinder(
                    &format!("diffuser_{k}"),
                    self.diffuser_radius,
                    [x, y, bottom],
                    [x, y, bottom - DIFFUSER_T],
                    look,
                    v,
                );
            }
        }
        p
    }
}

/// The `duct` plugin.
pub struct Duct {
    cfg: DuctConfig,
    address: String,
}

impl Duct {
    /// Construct from config.
    pub fn new(cfg: DuctConfig, args: &PluginArgs) -> Self {
        Duct { cfg, address: args.address.clone() }
    }
}

impl Plugin for Duct {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD
    }
    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        let c = &self.cfg;
        let at = Placement {
            address: &self.address,
            prefix: &c.prefix,
            model: "duct",
            pos: [0.0; 3],
            quat: [1.0, 0.0, 0.0, 0.0],
        };
        at.build(spec, b.ctx, |stem| c.parts(stem))
    }
}

/// The registry entry of `duct`.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "duct",
        "A parametric round ventilation duct run under a ceiling, with drops and diffusers (visual only).",
        DuctConfig,
        Duct
    )
}
