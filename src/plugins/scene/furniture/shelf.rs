//! `shelf`: a parametric chipboard shelf — `layers` boards between four square corner uprights,
//! built from boxes. The defaults are a 5-board, 0.80 × 1.51 × 2.00 m chipboard shelf.
//!
//! Geometry, in the shelf frame (`pos` = the centre of its footprint on the floor, `rpy` turning
//! it): boards are `depth` (x) × `width` (y) × `thickness`, the lowest resting on the floor and
//! the highest flush with `height`, the rest evenly spaced between (board k's centre at
//! `thickness/2 + k·(height − thickness)/(layers − 1)`); the uprights are `leg` × `leg` ×
//! `height` in the four corners. Everything collides. Names: `<stem>_board_<k>` (k = 0 lowest),
//! `<stem>_leg_<i>`.

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use super::parts::{check_len, check_pos, check_rpy, point3, Contact, Look, Parts, Placement};
use crate::error::{num, ConfigError, HookResult};
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};

/// Chipboard colour.
pub const CHIPBOARD_RGBA: [f64; 4] = [0.78, 0.66, 0.5, 1.0];

fn d_layers() -> i64 {
    5
}
fn d_width() -> f64 {
    1.51
}
fn d_depth() -> f64 {
    0.80
}
fn d_height() -> f64 {
    2.00
}
fn d_thickness() -> f64 {
    0.02
}
fn d_leg() -> f64 {
    0.04
}
fn d_pos() -> Vec<f64> {
    vec![0.0, 0.0, 0.0]
}

/// Config of `shelf`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShelfConfig {
    /// MJCF name prefix (distinct prefixes for more than one shelf). Default "".
    #[serde(default)]
    pub prefix: String,
    /// World placement of the footprint's centre: [x, y] or [x, y, z] (m). Default [0, 0, 0].
    #[serde(default = "d_pos")]
    pub pos: Vec<f64>,
    /// Orientation [roll, pitch, yaw] (rad). Default [0, 0, 0].
    #[serde(default)]
    pub rpy: [f64; 3],
    /// Number of boards (>= 2). Default 5.
    #[serde(default = "d_layers")]
    pub layers: i64,
    /// Board size along y (m). Default 1.51.
    #[serde(default = "d_width")]
    pub width: f64,
    /// Board size along x (m). Default 0.80.
    #[serde(default = "d_depth")]
    pub depth: f64,
    /// Overall height (m). Default 2.00.
    #[serde(default = "d_height")]
    pub height: f64,
    /// Board thickness (m). Default 0.02.
    #[serde(default = "d_thickness")]
    pub thickness: f64,
    /// Square cross-section of a corner upright (m). Default 0.04.
    #[serde(default = "d_leg")]
    pub leg: f64,
}

impl ValidateConfig for ShelfConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e: Vec<ConfigError> = [
            check_pos("pos", &self.pos, &[2, 3]),
            check_rpy("rpy", &self.rpy),
            check_len("width", self.width),
            check_len("depth", self.depth),
            check_len("height", self.height),
            check_len("thickness", self.thickness),
            check_len("leg", self.leg),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !(2..=200).contains(&self.layers) {
            e.push(ConfigError::new(
                "layers",
                format!("the number of boards is an integer in 2..=200 (a bottom and a top board at least), got {}", self.layers),
            ));
        } else if self.layers as f64 * self.thickness >= self.height {
            e.push(ConfigError::new(
                "layers",
                format!(
                    "{} boards of thickness {} m do not fit in height {} m: fewer layers, thinner boards or a taller shelf",
                    self.layers,
                    num(self.thickness),
                    num(self.height)
                ),
            ));
        }
        if 2.0 * self.leg >= self.width.min(self.depth) {
            e.push(ConfigError::new(
                "leg",
                format!(
                    "two uprights of {} m do not fit across the shelf's {} m: a leg must be under half the smaller of width and depth",
                    num(self.leg),
                    num(self.width.min(self.depth))
                ),
            ));
        }
        e
    }
}

impl ShelfConfig {
    /// Centre height (m, shelf frame) of board `k` (0 = the lowest).
    pub fn board_z(&self, k: usize) -> f64 {
        let t = self.thickness;
        t / 2.0 + k as f64 * (self.height - t) / (self.layers - 1) as f64
    }

    /// The piece's parts.
    pub fn parts(&self, stem: &str) -> Parts {
        let mut p = Parts::new(stem);
        let (hx, hy) = (self.depth / 2.0, self.width / 2.0);
        let look = Look::Rgba(CHIPBOARD_RGBA);
        for k in 0..self.layers as usize {
            let z = self.board_z(k);
            p.cuboid(
                &format!("board_{k}"),
                [hx, hy, self.thickness / 2.0],
                [0.0, 0.0, z],
                [1.0, 0.0, 0.0, 0.0],
                look,
                Contact::Solid,
            );
        }
        let l = self.leg / 2.0;
        for (i, (sx, sy)) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)].iter().enumerate()
        {
            p.cuboid(
                &format!("leg_{i}"),
                [l, l, self.height / 2.0],
                [sx * (hx - l), sy * (hy - l), self.height / 2.0],
                [1.0, 0.0, 0.0, 0.0],
                look,
                Contact::Solid,
            );
        }
        p
    }
}

/// The `shelf` plugin.
pub struct Shelf {
    cfg: ShelfConfig,
    address: String,
}

impl Shelf {
    /// Construct from config.
    pub fn new(cfg: ShelfConfig, args: &PluginArgs) -> Self {
        Shelf { cfg, address: args.address.clone() }
    }
}

impl Plugin for Shelf {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD
    }
    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        let c = &self.cfg;
        Placement::at_rpy(&self.address, &c.prefix, "shelf", point3(&c.pos), c.rpy).build(
            spec,
            b.ctx,
            |stem| c.parts(stem),
        )
    }
}

/// The registry entry of `shelf`.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "shelf",
        "A parametric chipboard shelf: `layers` boards between four corner uprights, built from boxes.",
        ShelfConfig,
        Shelf
    )
}
