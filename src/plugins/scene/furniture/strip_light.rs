//! `strip_light`: a parametric linear ceiling luminaire — an LED batten, optionally lit.
//!
//! The fixture is a box `length` (along `yaw`) × `width` × `height` whose top is at `pos`'s z (the
//! underside of the ceiling it hangs on), so its centre is `height/2` below it. It glows with
//! `emission` so it reads as lit; `emit: true` also adds a real spot light 1 cm below the
//! fixture, shining down with `diffuse` and half-angle `cutoff`. Keep `emit` for the few battens
//! that should light the scene: MuJoCo renders at most 100 lights, and every one costs render
//! time. The fixture is visual only (nothing on the floor reaches it; rays still see it). Names:
//! `<stem>_fixture`, `<stem>_light`.

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use super::parts::{
    check_color, check_len, check_pos, check_unit, rgba_or, Contact, Look, Parts, Placement,
};
use crate::error::{num, ConfigError, HookResult};
use crate::math::quat_from_rpy;
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};

/// Default fixture colour: white.
pub const FIXTURE_RGBA: [f64; 4] = [1.0, 1.0, 1.0, 1.0];
/// The light's distance below the fixture (m).
pub const LIGHT_GAP: f64 = 0.01;

fn d_length() -> f64 {
    2.4
}
fn d_width() -> f64 {
    0.09
}
fn d_height() -> f64 {
    0.06
}
fn d_emission() -> f64 {
    0.6
}
fn d_diffuse() -> [f64; 3] {
    [0.25; 3]
}
fn d_cutoff() -> f64 {
    80.0
}

/// Config of `strip_light`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StripLightConfig {
    /// MJCF name prefix (distinct prefixes for more than one batten). Default "".
    #[serde(default)]
    pub prefix: String,
    /// Fixture centre [x, y, z] (m, world; z = the underside of the ceiling it hangs on). REQUIRED.
    pub pos: Vec<f64>,
    /// Direction of the run (rad). Default 0.
    #[serde(default)]
    pub yaw: f64,
    /// Along `yaw` (m). Default 2.4.
    #[serde(default = "d_length")]
    pub length: f64,
    /// Across it (m). Default 0.09.
    #[serde(default = "d_width")]
    pub width: f64,
    /// How deep the fixture hangs (m). Default 0.06.
    #[serde(default = "d_height")]
    pub height: f64,
    /// Fixture colour [r, g, b] or [r, g, b, a]. Default white.
    #[serde(default)]
    pub color: Option<Vec<f64>>,
    /// Self-illumination 0..1. Default 0.6.
    #[serde(default = "d_emission")]
    pub emission: f64,
    /// Also add a real spot light below the fixture. Default false.
    #[serde(default)]
    pub emit: bool,
    /// The light's colour/intensity (only with `emit`). Default [0.25, 0.25, 0.25].
    #[serde(default = "d_diffuse")]
    pub diffuse: [f64; 3],
    /// The light's spot half-angle (deg; only with `emit`). Default 80.
    #[serde(default = "d_cutoff")]
    pub cutoff: f64,
}

impl ValidateConfig for StripLightConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e: Vec<ConfigError> = [
            check_pos("pos", &self.pos, &[3]),
            check_len("length", self.length),
            check_len("width", self.width),
            check_len("height", self.height),
            check_unit("emission", self.emission),
        ]
        .into_iter()
        .flatten()
        .collect();
        e.extend(check_color("color", &self.color));
        if !self.yaw.is_finite() {
            e.push(ConfigError::new("yaw", format!("must be finite (rad), got {}", self.yaw)));
        }
        if self.diffuse.iter().any(|v| !(0.0..=1.0).contains(v)) {
            e.push(ConfigError::new(
                "diffuse",
                format!(
                    "light colour components are in 0..1, got [{}]",
                    self.diffuse.map(num).join(", ")
                ),
            ));
        }
        if !(self.cutoff > 0.0 && self.cutoff <= 90.0) {
            e.push(ConfigError::new(
                "cutoff",
                format!("a spot half-angle in (0, 90] degrees, got {}", num(self.cutoff)),
            ));
        }
        if !self.emit && (self.diffuse != d_diffuse() || self.cutoff != d_cutoff()) {
            e.push(ConfigError::new(
                "emit",
                "`diffuse` and `cutoff` describe the light `emit: true` adds; with emit false there is none: set emit: true or drop them",
            ));
        }
        e
    }
}

impl StripLightConfig {
    /// The piece's parts, in the fixture frame (origin at `pos`, x along the run).
    pub fn parts(&self, stem: &str) -> Parts {
        let mut p = Parts::new(stem);
        let mat = p.material("fixture_mat", rgba_or(&self.color, FIXTURE_RGBA), self.emission);
        let h = self.height / 2.0;
        p.cuboid(
            "fixture",
            [self.length / 2.0, self.width / 2.0, h],
            [0.0, 0.0, -h],
            [1.0, 0.0, 0.0, 0.0],
            Look::Mat(&mat),
            Contact::Visual,
        );
        if self.emit {
            p.light(
                "light",
                [0.0, 0.0, -self.height - LIGHT_GAP],
                [0.0, 0.0, -1.0],
                self.diffuse,
                self.cutoff,
            );
        }
        p
    }
}

/// The `strip_light` plugin.
pub struct StripLight {
    cfg: StripLightConfig,
    address: String,
}

impl StripLight {
    /// Construct from config.
    pub fn new(cfg: StripLightConfig, args: &PluginArgs) -> Self {
        StripLight { cfg, address: args.address.clone() }
    }
}

impl Plugin for StripLight {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD
    }
    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        let c = &self.cfg;
        let at = Placement {
            address: &self.address,
            prefix: &c.prefix,
            model: "strip_light",
            pos: [c.pos[0], c.pos[1], c.pos[2]],
            quat: quat_from_rpy(0.0, 0.0, c.yaw),
        };
        at.build(spec, b.ctx, |stem| c.parts(stem))
    }
}

/// The registry entry of `strip_light`.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "strip_light",
        "A parametric linear ceiling luminaire (an LED batten; `emit: true` adds a real spot light).",
        StripLightConfig,
        StripLight
    )
}
