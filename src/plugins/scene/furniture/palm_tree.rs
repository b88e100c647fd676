//! `palm_tree`: a parametric artificial palm-like tree — a pole trunk in a pot, a crown of
//! arching two-segment fronds, and bunches of round fruit.
//!
//! Geometry, in the tree frame (`pos` = the trunk's base on the floor, `rpy` turning it): the pot
//! is a cylinder `pot_radius` × `pot_height` standing on the floor (none when `pot_height` is 0),
//! the trunk a cylinder `trunk_radius` from the floor to `trunk_height`. `fronds` blades spring
//! from the trunk's axis at `crown_height`, evenly spread in azimuth (blade k at 2πk/fronds; the
//! odd ones `frond_tier` higher). A blade is two flat boxes `frond_width` wide and 8 mm thick,
//! each half of `frond_length`: the inner one rising `frond_pitch_deg` above horizontal, the outer
//! one continuing from its tip turned down by a further `frond_droop_deg`. A bunch (`pos`
//! relative to the trunk base) is `fruits` spheres of 0.4·`radius` on a sphere of 0.6·`radius`
//! about its centre, so the bunch fits in a ball of `radius`.
//!
//! Everything collides — the trunk, the fronds and the fruit are all things an arm can hit, the
//! fronds above all, and the pot is a solid object on the floor. Names: `<stem>_pot`,
//! `<stem>_trunk`, `<stem>_frond_<k>_inner`, `<stem>_frond_<k>_outer`, `<stem>_bunch_<b>_fruit_<i>`.

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use super::parts::{
    check_len, check_len0, check_pos, check_rpy, point3, Contact, Look, Parts, Placement,
};
use crate::error::{num, ConfigError, HookResult};
use crate::math::{quat, quat_from_rpy, Vector3};
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};

/// Blade thickness (m).
pub const FROND_T: f64 = 0.008;
/// Most fronds a crown holds.
pub const MAX_FRONDS: i64 = 64;
/// Most fruits a bunch holds.
pub const MAX_FRUITS: i64 = 200;

const POT_RGBA: [f64; 4] = [0.25, 0.25, 0.27, 1.0];
const TRUNK_RGBA: [f64; 4] = [0.45, 0.33, 0.22, 1.0];
const FROND_RGBA: [f64; 4] = [0.22, 0.52, 0.22, 1.0];
const FRUIT_RGBA: [f64; 4] = [0.85, 0.55, 0.12, 1.0];

/// One fruit bunch.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bunch {
    /// Centre [x, y, z] relative to the trunk base (m, tree frame). REQUIRED.
    pub pos: Vec<f64>,
    /// Radius of the ball the bunch fits in (m). Default 0.075.
    #[serde(default = "d_bunch_radius")]
    pub radius: f64,
    /// Fruits in the bunch. Default 9.
    #[serde(default = "d_fruits")]
    pub fruits: i64,
}

fn d_bunch_radius() -> f64 {
    0.075
}
fn d_fruits() -> i64 {
    9
}
fn d_pos() -> Vec<f64> {
    vec![0.0, 0.0, 0.0]
}
fn d_trunk_height() -> f64 {
    1.60
}
fn d_trunk_radius() -> f64 {
    0.030
}
fn d_pot_height() -> f64 {
    0.16
}
fn d_pot_radius() -> f64 {
    0.085
}
fn d_crown_height() -> f64 {
    0.95
}
fn d_fronds() -> i64 {
    8
}
fn d_frond_length() -> f64 {
    0.45
}
fn d_frond_width() -> f64 {
    0.10
}
fn d_frond_pitch() -> f64 {
    35.0
}
fn d_frond_droop() -> f64 {
    45.0
}
fn d_frond_tier() -> f64 {
    0.10
}
fn d_bunches() -> Vec<Bunch> {
    vec![Bunch { pos: vec![-0.13, 0.02, 0.88], radius: 0.075, fruits: 9 }]
}

/// Config of `palm_tree`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PalmTreeConfig {
    /// MJCF name prefix (distinct prefixes for more than one tree). Default "".
    #[serde(default)]
    pub prefix: String,
    /// Trunk base placement: [x, y] or [x, y, z] (m, world). Default [0, 0, 0].
    #[serde(default = "d_pos")]
    pub pos: Vec<f64>,
    /// Orientation [roll, pitch, yaw] (rad). Default [0, 0, 0].
    #[serde(default)]
    pub rpy: [f64; 3],
    /// Top of the pole above the floor (m). Default 1.60.
    #[serde(default = "d_trunk_height")]
    pub trunk_height: f64,
    /// Trunk radius (m). Default 0.030.
    #[serde(default = "d_trunk_radius")]
    pub trunk_radius: f64,
    /// Pot height (m); 0 = a pole with no pot. Default 0.16.
    #[serde(default = "d_pot_height")]
    pub pot_height: f64,
    /// Pot radius (m). Default 0.085.
    #[serde(default = "d_pot_radius")]
    pub pot_radius: f64,
    /// Where the fronds spring from the trunk (m above the floor). Default 0.95.
    #[serde(default = "d_crown_height")]
    pub crown_height: f64,
    /// Blades in the crown. Default 8.
    #[serde(default = "d_fronds")]
    pub fronds: i64,
    /// Blade length, trunk to tip, split over its two segments (m). Default 0.45.
    #[serde(default = "d_frond_length")]
    pub frond_length: f64,
    /// Blade width (m). Default 0.10.
    #[serde(default = "d_frond_width")]
    pub frond_width: f64,
    /// Inner segment's rise above horizontal (deg). Default 35.
    #[serde(default = "d_frond_pitch")]
    pub frond_pitch_deg: f64,
    /// Extra downward turn of the outer segment (deg). Default 45.
    #[serde(default = "d_frond_droop")]
    pub frond_droop_deg: f64,
    /// Height offset between alternating fronds (m). Default 0.10.
    #[serde(default = "d_frond_tier")]
    pub frond_tier: f64,
    /// Fruit bunches. Default one bunch of 9 at [-0.13, 0.02, 0.88], radius 0.075.
    #[serde(default = "d_bunches")]
    pub bunches: Vec<Bunch>,
}

impl ValidateConfig for PalmTreeConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e: Vec<ConfigError> = [
            check_pos("pos", &self.pos, &[2, 3]),
            check_rpy("rpy", &self.rpy),
            check_len("trunk_height", self.trunk_height),
            check_len("trunk_radius", self.trunk_radius),
            check_len0("pot_height", self.pot_height),
            check_len("pot_radius", self.pot_radius),
            check_len("crown_height", self.crown_height),
            check_len("frond_length", self.frond_length),
            check_len("frond_width", self.frond_width),
            check_len0("frond_tier", self.frond_tier),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !e.is_empty() {
            return e;
        }
        if self.crown_height <= self.pot_height || self.crown_height > self.trunk_height {
            e.push(ConfigError::new(
                "crown_height",
                format!(
                    "the fronds spring from the trunk, above the pot ({} m) and at most at its top ({} m), got {}",
                    num(self.pot_height),
                    num(self.trunk_height),
                    num(self.crown_height)
                ),
            ));
        }
        if self.pot_height > 0.0 && self.pot_radius <= self.trunk_radius {
            e.push(ConfigError::new(
                "pot_radius",
                format!(
                    "a pot of radius {} m cannot hold a trunk of radius {} m",
                    num(self.pot_radius),
                    num(self.trunk_radius)
                ),
            ));
        }
        if !(1..=MAX_FRONDS).contains(&self.fronds) {
            e.push(ConfigError::new(
                "fronds",
                format!(
                    "the blades in the crown are an integer in 1..={MAX_FRONDS}, got {}",
                    self.fronds
                ),
            ));
        }
        if !(-90.0..=90.0).contains(&self.frond_pitch_deg) {
            e.push(ConfigError::new(
                "frond_pitch_deg",
                format!(
                    "a rise above horizontal within [-90, 90] degrees, got {}",
                    num(self.frond_pitch_deg)
                ),
            ));
        }
        if !(0.0..=180.0).contains(&self.frond_droop_deg) {
            e.push(ConfigError::new(
                "frond_droop_deg",
                format!(
                    "a downward turn within [0, 180] degrees, got {}",
                    num(self.frond_droop_deg)
                ),
            ));
        }
        for (b, bunch) in self.bunches.iter().enumerate() {
            if let Some(err) = check_pos(&format!("bunches[{b}].pos"), &bunch.pos, &[3]) {
                e.push(err);
            }
            if let Some(err) = check_len(&format!("bunches[{b}].radius"), bunch.radius) {
                e.push(err);
            }
            if !(1..=MAX_FRUITS).contains(&bunch.fruits) {
                e.push(ConfigError::new(
                    format!("bunches[{b}].fruits"),
                    format!("an integer in 1..={MAX_FRUITS}, got {}", bunch.fruits),
                ));
            }
        }
        e
    }
}

/// Fibonacci-sphere direction `i` of `n` (unit vector).
fn fibonacci(i: usize, n: usize) -> [f64; 3] {
    if n == 1 {
        return [0.0, 0.0, -1.0];
    }
    let z = 1.0 - 2.0 * (i as f64 + 0.5) / n as f64;
    let r = (1.0 - z * z).sqrt();
    let a = i as f64 * std::f64::consts::PI * (3.0 - 5f64.sqrt());
    [r * a.cos(), r * a.sin(), z]
}

impl PalmTreeConfig {
    /// Base point (tree frame) of frond `k`.
    pub fn frond_base(&self, k: usize) -> [f64; 3] {
        let tier = if k % 2 == 1 { self.frond_tier } else { 0.0 };
        [0.0, 0.0, self.crown_height + tier]
    }

    /// The piece's parts, in the tree frame.
    pub fn parts(&self, stem: &str) -> Parts {
        let mut p = Parts::new(stem);
        let s = Contact::Solid;
        if self.pot_height > 0.0 {
            p.cylinder(
                "pot",
                self.pot_radius,
                [0.0; 3],
                [0.0, 0.0, self.pot_height],
                Look::Rgba(POT_RGBA),
                s,
            );
        }
        p.cylinder(
            "trunk",
            self.trunk_radius,
            [0.0; 3],
            [0.0, 0.0, self.trunk_height],
            Look::Rgba(TRUNK_RGBA),
            s,
        );
        let seg = self.frond_length / 2.0;
        let half = [seg / 2.0, self.frond_width / 2.0, FROND_T / 2.0];
        let look = Look::Rgba(FROND_RGBA);
        let inner = self.frond_pitch_deg.to_radians();
        let outer = inner - self.frond_droop_deg.to_radians();
        for k in 0..self.fronds as usize {
            let az = std::f64::consts::TAU * k as f64 / self.fronds as f64;
            let base = self.frond_base(k);
            let mut at = base;
            for (part, elev) in [("inner", inner), ("outer", outer)] {
                let q = quat_from_rpy(0.0, -elev, az);
                let dir = quat(&q) * Vector3::x();
                let c = [0, 1, 2].map(|i| at[i] + dir[i] * seg / 2.0);
                p.cuboid(&format!("frond_{k}_{part}"), half, c, q, look, s);
                at = [0, 1, 2].map(|i| at[i] + dir[i] * seg);
            }
        }
        for (b, bunch) in self.bunches.iter().enumerate() {
            let n = bunch.fruits as usize;
            for i in 0..n {
                let d = fibonacci(i, n);
                let c = [0, 1, 2].map(|j| bunch.pos[j] + d[j] * 0.6 * bunch.radius);
                p.sphere(
                    &format!("bunch_{b}_fruit_{i}"),
                    0.4 * bunch.radius,
                    c,
                    Look::Rgba(FRUIT_RGBA),
                    s,
                );
            }
        }
        p
    }
}

/// The `palm_tree` plugin.
pub struct PalmTree {
    cfg: PalmTreeConfig,
    address: String,
}

impl PalmTree {
    /// Construct from config.
    pub fn new(cfg: PalmTreeConfig, args: &PluginArgs) -> Self {
        PalmTree { cfg, address: args.address.clone() }
    }
}

impl Plugin for PalmTree {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD
    }
    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        let c = &self.cfg;
        Placement::at_rpy(&self.address, &c.prefix, "palm_tree", point3(&c.pos), c.rpy).build(
            spec,
            b.ctx,
            |stem| c.parts(stem),
        )
    }
}

/// The registry entry of `palm_tree`.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "palm_tree",
        "A parametric artificial palm-like tree: trunk in a pot, arching two-segment fronds, fruit bunches (all collide).",
        PalmTreeConfig,
        PalmTree
    )
}
