//! `ceiling_panels`: a parametric field of flat acoustic ceiling panels hung under a soffit.
//!
//! The field covers the world rectangle `area` = [x0, y0, x1, y1]: a grid of `panel`-sized
//! panels at `pitch` spacing, as many as fit inside the rectangle along each axis (in the
//! field's own axes, before `yaw`), centred on it; `yaw` turns the whole field about the
//! rectangle's centre. A panel's top is `drop` below the soffit `z`, so its centre is at
//! `z − drop − thickness/2`.
//!
//! Panels are visual only (no contacts): nothing driving on the floor reaches them and a collider
//! per panel would be pure cost; rays still see them (the raycast seam ignores contype), so an
//! upward-looking sensor reads the panelled ceiling. `emission` makes them read as the white they
//! are: a panel faces away from every lamp of a room lit from the same height. Names:
//! `<stem>_panel_<i>_<j>` (i along the field's x, j along its y).

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use super::parts::{
    check_color, check_len, check_len0, check_unit, rgba_or, Contact, Look, Parts, Placement,
};
use crate::error::{num, ConfigError, HookResult};
use crate::math::quat_from_rpy;
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::world::bounds::MAX_POSITION_M;

/// Default panel colour: near-white.
pub const PANEL_RGBA: [f64; 4] = [0.94, 0.94, 0.92, 1.0];
/// Most panels one field may hold (a larger area is several fields).
pub const MAX_PANELS: usize = 10_000;

fn d_z() -> f64 {
    3.5
}
fn d_drop() -> f64 {
    0.04
}
fn d_panel() -> [f64; 2] {
    [1.8, 0.6]
}
fn d_pitch() -> [f64; 2] {
    [2.6, 1.6]
}
fn d_thickness() -> f64 {
    0.04
}
fn d_emission() -> f64 {
    0.35
}

/// Config of `ceiling_panels`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CeilingPanelsConfig {
    /// MJCF name prefix (distinct prefixes for more than one field). Default "".
    #[serde(default)]
    pub prefix: String,
    /// World rectangle to cover [x0, y0, x1, y1] (m). REQUIRED.
    pub area: [f64; 4],
    /// Soffit height (m); the panels hang below it. Default 3.5.
    #[serde(default = "d_z")]
    pub z: f64,
    /// Gap between soffit and panel top (m). Default 0.04.
    #[serde(default = "d_drop")]
    pub drop: f64,
    /// Panel size [x, y] before `yaw` (m). Default [1.8, 0.6].
    #[serde(default = "d_panel")]
    pub panel: [f64; 2],
    /// Grid spacing [x, y] (m), each >= the panel's size. Default [2.6, 1.6].
    #[serde(default = "d_pitch")]
    pub pitch: [f64; 2],
    /// Panel thickness (m). Default 0.04.
    #[serde(default = "d_thickness")]
    pub thickness: f64,
    /// Rotation of the whole field about the area's centre (rad). Default 0.
    #[serde(default)]
    pub yaw: f64,
    /// Panel colour [r, g, b] or [r, g, b, a]. Default near-white.
    #[serde(default)]
    pub color: Option<Vec<f64>>,
    /// Self-illumination 0..1. Default 0.35.
    #[serde(default = "d_emission")]
    pub emission: f64,
}

impl CeilingPanelsConfig {
    /// Panels along the field's x and y.
    pub fn counts(&self) -> [usize; 2] {
        let a = &self.area;
        let span = [a[2] - a[0], a[3] - a[1]];
        [0, 1].map(|i| {
            if span[i] < self.panel[i] {
                0
            } else {
                ((span[i] - self.panel[i]) / self.pitch[i] + 1e-9).floor() as usize + 1
            }
        })
    }

    /// The piece's parts, in the field frame (origin at the area's centre, on the floor).
    pub fn parts(&self, stem: &str) -> Parts {
        let mut p = Parts::new(stem);
        let mat = p.material("panel_mat", rgba_or(&self.color, PANEL_RGBA), self.emission);
        let [nx, ny] = self.counts();
        let z = self.z - self.drop - self.thickness / 2.0;
        let half = [self.panel[0] / 2.0, self.panel[1] / 2.0, self.thickness / 2.0];
        for i in 0..nx {
            for j in 0..ny {
                let x = (i as f64 - (nx as f64 - 1.0) / 2.0) * self.pitch[0];
                let y = (j as f64 - (ny as f64 - 1.0) / 2.0) * self.pitch[1];
                p.cuboid(
                    &format!("panel_{i}_{j}"),
                    half,
                    [x, y, z],
                    [1.0, 0.0, 0.0, 0.0],
                    Look::Mat(&mat),
                    Contact::Visual,
                );
            }
        }
        p
    }
}

impl ValidateConfig for CeilingPanelsConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e: Vec<ConfigError> = [
            check_len("z", self.z),
            check_len0("drop", self.drop),
            check_len("panel[0]", self.panel[0]),
            check_len("panel[1]", self.panel[1]),
            check_len("pitch[0]", self.pitch[0]),
            check_len("pitch[1]", self.pitch[1]),
            check_len("thickness", self.thickness),
            check_unit("emission", self.emission),
        ]
        .into_iter()
        .flatten()
        .collect();
        e.extend(check_color("color", &self.color));
        if !self.yaw.is_finite() {
            e.push(ConfigError::new("yaw", format!("must be finite (rad), got {}", self.yaw)));
        }
        let a = self.area;
        if a.iter().any(|v| !v.is_finite() || v.abs() > MAX_POSITION_M)
            || a[2] <= a[0]
            || a[3] <= a[1]
        {
            e.push(ConfigError::new(
                "area",
                format!(
                    "a world rectangle [x0, y0, x1, y1] with x1 > x0 and y1 > y0 (m), got [{}]",
                    a.map(num).join(", ")
                ),
            ));
            return e;
        }
        for (i, axis) in ["x", "y"].iter().enumerate() {
            if self.pitch[i] < self.panel[i] {
                e.push(ConfigError::new(
                    format!("pitch[{i}]"),
                    format!(
                        "the grid spacing along {axis} ({} m) is less than the panel's {} m: the panels would overlap",
                        num(self.pitch[i]),
                        num(self.panel[i])
                    ),
                ));
            }
        }
        if self.drop + self.thickness >= self.z {
            e.push(ConfigError::new(
                "drop",
                format!(
                    "panels hung {} m below a soffit at {} m would reach the floor",
                    super::parts::um(self.drop + self.thickness),
                    num(self.z)
                ),
            ));
        }
        if !e.is_empty() {
            return e;
        }
        let [nx, ny] = self.counts();
        if nx == 0 || ny == 0 {
            e.push(ConfigError::new(
                "area",
                format!(
                    "a {} × {} m area holds no {} × {} m panel: enlarge the area or shrink `panel`",
                    super::parts::um(a[2] - a[0]),
                    super::parts::um(a[3] - a[1]),
                    num(self.panel[0]),
                    num(self.panel[1])
                ),
            ));
        } else if nx * ny > MAX_PANELS {
            e.push(ConfigError::new(
                "area",
                format!("{nx} × {ny} panels are more than one field holds ({MAX_PANELS}): split the area or widen `pitch`"),
            ));
        }
        e
    }
}

/// The `ceiling_panels` plugin.
pub struct CeilingPanels {
    cfg: CeilingPanelsConfig,
    address: String,
}

impl CeilingPanels {
    /// Construct from config.
    pub fn new(cfg: CeilingPanelsConfig, args: &PluginArgs) -> Self {
        CeilingPanels { cfg, address: args.address.clone() }
    }
}

impl Plugin for CeilingPanels {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD
    }
    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        let c = &self.cfg;
        let a = c.area;
        let at = Placement {
            address: &self.address,
            prefix: &c.prefix,
            model: "ceiling_panels",
            pos: [(a[0] + a[2]) / 2.0, (a[1] + a[3]) / 2.0, 0.0],
            quat: quat_from_rpy(0.0, 0.0, c.yaw),
        };
        at.build(spec, b.ctx, |stem| c.parts(stem))
    }
}

/// The registry entry of `ceiling_panels`.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "ceiling_panels",
        "A parametric field of flat acoustic ceiling panels under a soffit (visual only; rays see them).",
        CeilingPanelsConfig,
        CeilingPanels
    )
}
