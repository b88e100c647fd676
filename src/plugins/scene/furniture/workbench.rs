//! `workbench`: a parametric ESD assembly workbench on two electric lift columns.
//!
//! Geometry, in the bench frame (`pos` = the centre of its footprint on the floor, `rpy` turning
//! it; x along the worktop's `width`, y across its `depth`, the operator on −y): a 30 mm worktop
//! whose top is at `height` (the lift columns' stroke, 0.695 .. 0.995 m), a 40 mm steel frame
//! under it, two lift columns (80 × 80 mm) on floor beams running the depth, a drawer cabinet
//! (0.45 m wide, hanging under the worktop to 0.15 m above the floor) on the `cabinet` side, and
//! with `superstructure` two rear uprights rising 1.20 m above the worktop carrying a tool panel
//! and an overhead beam.
//!
//! The structure collides (worktop, frame, columns, floor beams, cabinet, uprights, tool panel,
//! overhead beam); the trim is visual (feet pads, drawer fronts and handles, the power strip,
//! the monitor arm, the light bar), so a bench in a navigation scene costs no contacts for
//! decoration. Names: `<stem>_<part>` (`worktop`, `frame_front`, `column_l`, `cabinet`,
//! `upright_l`, `tool_panel`, `overhead_beam`, `light_bar`, …).

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use super::parts::{check_len, check_pos, check_rpy, point3, Contact, Look, Parts, Placement};
use crate::error::{num, ConfigError, HookResult};
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};

/// The lift columns' stroke: lowest and highest worktop height (m).
pub const HEIGHT_RANGE: (f64, f64) = (0.695, 0.995);
/// Worktop thickness (m).
pub const WORKTOP_T: f64 = 0.03;
/// Frame tube section (m).
pub const FRAME_T: f64 = 0.04;
/// Lift column section (m).
pub const COLUMN: f64 = 0.08;
/// Drawer cabinet width (m).
pub const CABINET_W: f64 = 0.45;
/// Superstructure height above the worktop (m).
pub const UPRIGHT_H: f64 = 1.2;

const TOP_RGBA: [f64; 4] = [0.30, 0.42, 0.36, 1.0]; // ESD laminate
const STEEL_RGBA: [f64; 4] = [0.62, 0.64, 0.66, 1.0];
const TRIM_RGBA: [f64; 4] = [0.15, 0.15, 0.16, 1.0];
const PANEL_RGBA: [f64; 4] = [0.35, 0.45, 0.6, 1.0];
const LIGHT_RGBA: [f64; 4] = [0.95, 0.95, 0.92, 1.0];

fn d_height() -> f64 {
    0.695
}
fn d_width() -> f64 {
    2.0
}
fn d_depth() -> f64 {
    0.7
}
fn d_cabinet() -> String {
    "left".into()
}
fn d_pos() -> Vec<f64> {
    vec![0.0, 0.0, 0.0]
}

/// Config of `workbench`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkbenchConfig {
    /// MJCF name prefix (distinct prefixes for more than one bench). Default "".
    #[serde(default)]
    pub prefix: String,
    /// World placement of the footprint's centre: [x, y] or [x, y, z] (m). Default [0, 0, 0].
    #[serde(default = "d_pos")]
    pub pos: Vec<f64>,
    /// Orientation [roll, pitch, yaw] (rad). Default [0, 0, 0].
    #[serde(default)]
    pub rpy: [f64; 3],
    /// Worktop height (m), within the lift columns' stroke 0.695 .. 0.995. Default 0.695.
    #[serde(default = "d_height")]
    pub height: f64,
    /// Worktop size along x (m). Default 2.00.
    #[serde(default = "d_width")]
    pub width: f64,
    /// Worktop size along y (m). Default 0.70.
    #[serde(default = "d_depth")]
    pub depth: f64,
    /// Drawer cabinet side: `left` (−x) | `right` (+x) | `none`. Default left.
    #[serde(default = "d_cabinet")]
    pub cabinet: String,
    /// Rear uprights, tool panel, monitor arm and overhead light frame. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub superstructure: bool,
}

impl ValidateConfig for WorkbenchConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e: Vec<ConfigError> = [
            check_pos("pos", &self.pos, &[2, 3]),
            check_rpy("rpy", &self.rpy),
            check_len("width", self.width),
            check_len("depth", self.depth),
        ]
        .into_iter()
        .flatten()
        .collect();
        let (lo, hi) = HEIGHT_RANGE;
        if !(lo..=hi).contains(&self.height) {
            e.push(ConfigError::new(
                "height",
                format!(
                    "the worktop height is within the lift columns' stroke {lo} .. {hi} m, got {}",
                    num(self.height)
                ),
            ));
        }
        if !matches!(self.cabinet.as_str(), "left" | "right" | "none") {
            e.push(ConfigError::new(
                "cabinet",
                format!("`left`, `right` or `none`, got `{}`", self.cabinet),
            ));
        }
        let min_w = CABINET_W + 2.0 * COLUMN + 0.2;
        if self.width.is_finite() && self.width < min_w {
            e.push(ConfigError::new(
                "width",
                format!(
                    "a bench narrower than {} m leaves no room between its columns for the cabinet, got {}",
                    super::parts::um(min_w),
                    num(self.width)
                ),
            ));
        }
        if self.depth.is_finite() && self.depth < 0.3 {
            e.push(ConfigError::new(
                "depth",
                format!(
                    "a worktop shallower than 0.3 m cannot carry the columns, got {}",
                    num(self.depth)
                ),
            ));
        }
        e
    }
}

impl WorkbenchConfig {
    /// The piece's parts.
    pub fn parts(&self, stem: &str) -> Parts {
        let mut p = Parts::new(stem);
        let (hx, hy, h) = (self.width / 2.0, self.depth / 2.0, self.height);
        let steel = Look::Rgba(STEEL_RGBA);
        let trim = Look::Rgba(TRIM_RGBA);
        let (s, v) = (Contact::Solid, Contact::Visual);
        // worktop and the frame under it
        p.slab("worktop", [-hx, -hy, h - WORKTOP_T], [hx, hy, h], Look::Rgba(TOP_RGBA), s);
        let fz = h - WORKTOP_T;
        let (fx, fy) = (hx - 0.05, hy - 0.05);
        p.slab("frame_front", [-fx, -fy, fz - FRAME_T], [fx, -fy + FRAME_T, fz], steel, s);
        p.slab("frame_back", [-fx, fy - FRAME_T, fz - FRAME_T], [fx, fy, fz], steel, s);
        // lift columns on floor beams, with visual feet pads
        let cx = hx - 0.15;
        for (side, sx) in [("l", -1.0), ("r", 1.0)] {
            let x = sx * cx;
            let c = COLUMN / 2.0;
            p.slab(
                &format!("column_{side}"),
                [x - c, -c, 0.06],
                [x + c, c, fz - FRAME_T],
                steel,
                s,
            );
            p.slab(&format!("beam_{side}"), [x - c, -fy, 0.02], [x + c, fy, 0.06], steel, s);
            for (end, sy) in [("front", -1.0), ("back", 1.0)] {
                let y = sy * (fy - 0.03);
                p.cylinder(
                    &format!("foot_{side}_{end}"),
                    0.025,
                    [x, y, 0.0],
                    [x, y, 0.02],
                    trim,
                    v,
                );
            }
        }
        p.slab(
            "frame_cross",
            [-cx, -0.02, fz - FRAME_T - 0.06],
            [cx, 0.02, fz - FRAME_T],
            steel,
            s,
        );
        // drawer cabinet between the column and the bench's end
        if self.cabinet != "none" {
            let sx = if self.cabinet == "left" { -1.0 } else { 1.0 };
            let (x0, x1) = (cx - COLUMN / 2.0 - 0.02 - CABINET_W, cx - COLUMN / 2.0 - 0.02);
            let (lo_x, hi_x) = if sx < 0.0 { (-x1, -x0) } else { (x0, x1) };
            let (top, bottom) = (fz - FRAME_T, 0.15);
            p.slab("cabinet", [lo_x, -fy + 0.02, bottom], [hi_x, fy - 0.02, top], steel, s);
            let drawers = 4;
            let dh = (top - bottom) / drawers as f64;
            for k in 0..drawers {
                let z0 = bottom + k as f64 * dh + 0.005;
                let z1 = z0 + dh - 0.01;
                let front_y = -fy + 0.02;
                p.slab(
                    &format!("drawer_{k}"),
                    [lo_x + 0.01, front_y - 0.015, z0],
                    [hi_x - 0.01, front_y, z1],
                    Look::Rgba(PANEL_RGBA),
                    v,
                );
                let xm = (lo_x + hi_x) / 2.0;
                let zh = z1 - 0.03;
                p.cylinder(
                    &format!("handle_{k}"),
                    0.008,
                    [xm - 0.08, front_y - 0.03, zh],
                    [xm + 0.08, front_y - 0.03, zh],
                    trim,
                    v,
                );
            }
        }
        if self.superstructure {
            let top = h + UPRIGHT_H;
            let u = 0.025;
            let uy = hy - 0.03;
            for (side, sx) in [("l", -1.0), ("r", 1.0)] {
                let x = sx * (hx - 0.05);
                p.slab(
                    &format!("upright_{side}"),
                    [x - u, uy - u, h],
                    [x + u, uy + u, top],
                    steel,
                    s,
                );
            }
            let px = hx - 0.05 - u;
            p.slab(
                "tool_panel",
                [-px, uy - 0.01, h + 0.25],
                [px, uy + 0.01, h + 0.95],
                Look::Rgba(PANEL_RGBA),
                s,
            );
            p.slab("overhead_beam", [-px, uy - u, top - 2.0 * u], [px, uy + u, top], steel, s);
            p.slab(
                "light_bar",
                [-px + 0.1, uy - 0.35, top - 0.04],
                [px - 0.1, uy - 0.25, top - 0.01],
                Look::Rgba(LIGHT_RGBA),
                v,
            );
            p.slab(
                "light_arm_l",
                [-px + 0.1, uy - 0.35, top - 0.01],
                [-px + 0.14, uy, top],
                steel,
                v,
            );
            p.slab(
                "light_arm_r",
                [px - 0.14, uy - 0.35, top - 0.01],
                [px - 0.1, uy, top],
                steel,
                v,
            );
            p.slab("power_strip", [-0.4, uy - 0.06, h + 0.1], [0.4, uy - 0.01, h + 0.15], trim, v);
            p.cylinder(
                "monitor_arm",
                0.015,
                [0.0, uy - 0.02, h + 0.2],
                [0.0, uy - 0.3, h + 0.45],
                trim,
                v,
            );
        }
        p
    }
}

/// The `workbench` plugin.
pub struct Workbench {
    cfg: WorkbenchConfig,
    address: String,
}

impl Workbench {
    /// Construct from config.
    pub fn new(cfg: WorkbenchConfig, args: &PluginArgs) -> Self {
        Workbench { cfg, address: args.address.clone() }
    }
}

impl Plugin for Workbench {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD
    }
    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        let c = &self.cfg;
        Placement::at_rpy(&self.address, &c.prefix, "workbench", point3(&c.pos), c.rpy).build(
            spec,
            b.ctx,
            |stem| c.parts(stem),
        )
    }
}

/// The registry entry of `workbench`.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "workbench",
        "A parametric ESD assembly workbench on two lift columns (worktop height 0.695 .. 0.995 m), drawer cabinet and superstructure.",
        WorkbenchConfig,
        Workbench
    )
}
