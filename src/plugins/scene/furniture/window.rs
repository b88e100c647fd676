//! `window`: a parametric fixed window — a glazed pane in a slim frame, built from boxes.
//!
//! Geometry, in the window frame (`pos` = the opening's CENTRE on the floor, `rpy` whose yaw
//! aligns the pane with its wall; x along the wall, y through it, z up): the frame is four boxes
//! `depth` deep — two jambs `frame` wide over the full `height`, a sill from the floor and a head
//! at the top, each `frame` high, spanning `width` — and the glass (`glass` thick, in the
//! wall's centre plane) fills the rest: `width − 2·frame` × `height − 2·frame`, centred at
//! `height/2`. Both parts collide: the wall around the opening stops a robot and the glass must
//! too, or a robot would drive through the window. Names: `<stem>_jamb_l`, `<stem>_jamb_r`,
//! `<stem>_sill`, `<stem>_head`, `<stem>_glass`.

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use super::parts::{
    check_color, check_len, check_pos, check_rpy, point3, rgba_or, Contact, Look, Parts, Placement,
};
use crate::error::{num, ConfigError, HookResult};
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};

/// Default frame colour: a neutral grey.
pub const FRAME_RGBA: [f64; 4] = [0.55, 0.56, 0.58, 1.0];
/// Default glass colour: a pale blue, see-through.
pub const GLASS_RGBA: [f64; 4] = [0.75, 0.85, 0.9, 0.3];

fn d_width() -> f64 {
    0.94
}
fn d_height() -> f64 {
    2.06
}
fn d_depth() -> f64 {
    0.10
}
fn d_frame() -> f64 {
    0.05
}
fn d_glass() -> f64 {
    0.012
}
fn d_pos() -> Vec<f64> {
    vec![0.0, 0.0, 0.0]
}

/// Config of `window`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WindowConfig {
    /// MJCF name prefix (distinct prefixes for more than one window). Default "".
    #[serde(default)]
    pub prefix: String,
    /// Opening centre: [x, y] or [x, y, z] (m, world). Default [0, 0, 0].
    #[serde(default = "d_pos")]
    pub pos: Vec<f64>,
    /// Orientation [roll, pitch, yaw] (rad); yaw aligns the pane with its wall. Default 0.
    #[serde(default)]
    pub rpy: [f64; 3],
    /// Opening width along the wall (m). Default 0.94.
    #[serde(default = "d_width")]
    pub width: f64,
    /// Overall height from the floor (m). Default 2.06 (the door casing's outer height).
    #[serde(default = "d_height")]
    pub height: f64,
    /// Thickness through the wall (m). Default 0.10 (the default wall thickness).
    #[serde(default = "d_depth")]
    pub depth: f64,
    /// Frame border width (m); glass fills the rest. Default 0.05.
    #[serde(default = "d_frame")]
    pub frame: f64,
    /// Glass thickness (m). Default 0.012.
    #[serde(default = "d_glass")]
    pub glass: f64,
    /// Frame colour [r, g, b] or [r, g, b, a]. Default a neutral grey.
    #[serde(default)]
    pub color: Option<Vec<f64>>,
    /// Glass colour [r, g, b, a] (alpha < 1 to see through it). Default pale blue, alpha 0.3.
    #[serde(default)]
    pub glass_color: Option<Vec<f64>>,
}

impl ValidateConfig for WindowConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e: Vec<ConfigError> = [
            check_pos("pos", &self.pos, &[2, 3]),
            check_rpy("rpy", &self.rpy),
            check_len("width", self.width),
            check_len("height", self.height),
            check_len("depth", self.depth),
            check_len("frame", self.frame),
            check_len("glass", self.glass),
        ]
        .into_iter()
        .flatten()
        .collect();
        e.extend(check_color("color", &self.color));
        e.extend(check_color("glass_color", &self.glass_color));
        if !e.is_empty() {
            return e;
        }
        if 2.0 * self.frame >= self.width.min(self.height) {
            e.push(ConfigError::new(
                "frame",
                format!(
                    "a {} m border on both sides leaves no glass in a {} × {} m window: a frame must be under half the smaller of width and height",
                    num(self.frame),
                    num(self.width),
                    num(self.height)
                ),
            ));
        }
        if self.glass > self.depth {
            e.push(ConfigError::new(
                "glass",
                format!(
                    "glass {} m thick does not fit in a {} m deep frame",
                    num(self.glass),
                    num(self.depth)
                ),
            ));
        }
        e
    }
}

impl WindowConfig {
    /// The piece's parts, in the window frame.
    pub fn parts(&self, stem: &str) -> Parts {
        let mut p = Parts::new(stem);
        let (hw, hd, h, f) = (self.width / 2.0, self.depth / 2.0, self.height, self.frame);
        let frame = Look::Rgba(rgba_or(&self.color, FRAME_RGBA));
        let s = Contact::Solid;
        p.slab("jamb_l", [-hw, -hd, 0.0], [-hw + f, hd, h], frame, s);
        p.slab("jamb_r", [hw - f, -hd, 0.0], [hw, hd, h], frame, s);
        p.slab("sill", [-hw + f, -hd, 0.0], [hw - f, hd, f], frame, s);
        p.slab("head", [-hw + f, -hd, h - f], [hw - f, hd, h], frame, s);
        let g = self.glass / 2.0;
        p.slab(
            "glass",
            [-hw + f, -g, f],
            [hw - f, g, h - f],
            Look::Rgba(rgba_or(&self.glass_color, GLASS_RGBA)),
            s,
        );
        p
    }
}

/// The `window` plugin.
pub struct Window {
    cfg: WindowConfig,
    address: String,
}

impl Window {
    /// Construct from config.
    pub fn new(cfg: WindowConfig, args: &PluginArgs) -> Self {
        Window { cfg, address: args.address.clone() }
    }
}

impl Plugin for Window {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD
    }
    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        let c = &self.cfg;
        Placement::at_rpy(&self.address, &c.prefix, "window", point3(&c.pos), c.rpy).build(
            spec,
            b.ctx,
            |stem| c.parts(stem),
        )
    }
}

/// The registry entry of `window`.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "window",
        "A parametric fixed window: a glazed pane in a slim frame, built from boxes (both collide).",
        WindowConfig,
        Window
    )
}
