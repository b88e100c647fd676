//! `floorplan`: a floorplan as the world — ground plane, light and walls built from wall
//! segments with door openings. Flag `provides_world`: the
//! engine then skips the built-in `empty_room`.
//!
//! The building comes from exactly one source: `lines:` inline, `floorplan: <file.json>` (the
//! same `{lines, doors}` shape, relative to the world file), or `mesh: <file.stl|.obj>` (drawn as
//! is, collided through boxes derived from its wall tops: [`mesh`]). Each wall segment is one box
//! (visible and collidable), extended by half the wall thickness past both ends so corners close.
//! A door cuts an opening of `width_m` centred at `t` (0..1 along its wall) up to
//! `opening_height`; the wall above it becomes a lintel box. `height`, `thickness` and
//! `opening_height` shape segments only, `mesh_scale`/`mesh_pos` a mesh only: each is refused
//! beside the other source.
//!
//! Floor and walls are a checker (a solid colour when rgb1 == rgb2) or a PNG `texture:`
//! ([`texture`]), tiled every `physical_size` metres (texuniform; on a mesh with its own texture
//! coordinates, a UV'd .obj, its UVs scaled to that size: [`mesh::uv_metres`]), tinted by `rgba`;
//! a texture folder's manifest supplies `reflectance` and `physical_size` where the world states
//! none.
//!
//! Names: the ground plane is `floor`, wall boxes `wall_<id>_<k>` (k-th solid piece of line
//! `id`), lintels `wall_<id>_lintel_<j>`, the mesh geom `floorplan_mesh` and its colliders
//! `floorplan_collider_<k>`, the light `floorplan_light`.

pub mod mesh;
pub mod texture;

use std::path::{Path, PathBuf};

use mujoco_rs::prelude::*;
use mujoco_rs::wrappers::mj_editing::MjtBuiltin;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_norway::Value;

use crate::error::{ConfigError, HookResult};
use crate::plugin::{
    typed_config, BuildContext, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig,
};
use crate::plugin_descriptor;
use crate::spawn::MJ_DEFAULT_FRICTION;

/// One wall segment, in the floorplan JSON's own vocabulary (m, world frame).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WallLine {
    /// Segment id (doors refer to it).
    pub id: i64,
    /// Start x (m).
    pub x0_m: f64,
    /// Start y (m).
    pub y0_m: f64,
    /// End x (m).
    pub x1_m: f64,
    /// End y (m).
    pub y1_m: f64,
}

/// A door: an opening in one wall segment.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Door {
    /// The wall segment's `id`.
    pub line_id: i64,
    /// Centre of the opening as a fraction 0..1 along the wall (from x0,y0 to x1,y1).
    pub t: f64,
    /// Opening width (m).
    pub width_m: f64,
}

/// A metres-per-tile value: a scalar or [x, y].
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum TileSize {
    /// Same along x and y (m).
    Uniform(f64),
    /// [x, y] (m).
    PerAxis([f64; 2]),
}

impl TileSize {
    fn xy(self) -> [f64; 2] {
        match self {
            TileSize::Uniform(s) => [s, s],
            TileSize::PerAxis(v) => v,
        }
    }
}

/// Ground-plane appearance and physics.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FloorLook {
    /// Checker colour A (0..1 RGB). Default [0.85, 0.85, 0.85].
    #[serde(default = "floor_rgb1")]
    pub rgb1: [f64; 3],
    /// Checker colour B. Default [0.78, 0.78, 0.79].
    #[serde(default = "floor_rgb2")]
    pub rgb2: [f64; 3],
    /// 0..1. Default: the texture manifest's, else 0.2.
    #[serde(default)]
    pub reflectance: Option<f64>,
    /// PNG texture, overriding rgb1/rgb2: a PNG path (relative to the world file),
    /// `package://<pkg>/<path>.png` or `<pkg>:<name>` (share/<pkg>/textures/<name>/<name>.png).
    #[serde(default)]
    pub texture: Option<String>,
    /// Multiplicative tint [r, g, b, a] on the texture or checker (RGB > 1 brightens). Default none.
    #[serde(default)]
    pub rgba: Option<[f64; 4]>,
    /// Metres one tile spans: scalar or [x, y]. Default: the texture manifest's, else 1.0.
    #[serde(default)]
    pub physical_size: Option<TileSize>,
    /// Contact friction [sliding, torsional, rolling]. Default MuJoCo's [1.0, 0.005, 0.0001]
    /// (the floor the drive calibrations, e.g. the husky's slip_factor, were measured on).
    #[serde(default)]
    pub friction: Option<[f64; 3]>,
}

fn floor_rgb1() -> [f64; 3] {
    [0.85, 0.85, 0.85]
}
fn floor_rgb2() -> [f64; 3] {
    [0.78, 0.78, 0.79]
}

impl Default for FloorLook {
    fn default() -> Self {
        FloorLook {
            rgb1: floor_rgb1(),
            rgb2: floor_rgb2(),
            reflectance: None,
            texture: None,
            rgba: None,
            physical_size: None,
            friction: None,
        }
    }
}

/// Wall appearance (the floor's keys minus friction).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WallLook {
    /// Colour A (a solid colour when rgb1 == rgb2, the default). Default [0.8, 0.8, 0.82].
    #[serde(default = "wall_rgb")]
    pub rgb1: [f64; 3],
    /// Colour B. Default [0.8, 0.8, 0.82].
    #[serde(default = "wall_rgb")]
    pub rgb2: [f64; 3],
    /// 0..1. Default: the texture manifest's, else 0.0.
    #[serde(default)]
    pub reflectance: Option<f64>,
    /// PNG texture on the walls (boxes or mesh), overriding rgb1/rgb2 (see `floor.texture`).
    #[serde(default)]
    pub texture: Option<String>,
    /// Multiplicative tint [r, g, b, a]. Default none.
    #[serde(default)]
    pub rgba: Option<[f64; 4]>,
    /// Metres one tile spans. Default: the texture manifest's, else 2.4.
    #[serde(default)]
    pub physical_size: Option<TileSize>,
}

fn wall_rgb() -> [f64; 3] {
    [0.8, 0.8, 0.82]
}

impl Default for WallLook {
    fn default() -> Self {
        WallLook {
            rgb1: wall_rgb(),
            rgb2: wall_rgb(),
            reflectance: None,
            texture: None,
            rgba: None,
            physical_size: None,
        }
    }
}

/// One overhead light at the floorplan centre plus a global ambient.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LightLook {
    /// Height of the light above the floor (m). Default 2.5.
    #[serde(default = "light_height")]
    pub height: f64,
    /// Light colour/intensity. Default [0.35, 0.35, 0.35].
    #[serde(default = "light_diffuse")]
    pub diffuse: [f64; 3],
    /// Spot half-angle (deg); 90 = hemisphere. Default 90.
    #[serde(default = "light_cutoff")]
    pub cutoff: f64,
    /// Uniform global ambient; [0, 0, 0] disables it. Default [0.3, 0.3, 0.3].
    #[serde(default = "light_fill")]
    pub fill: [f64; 3],
}

fn light_height() -> f64 {
    2.5
}
fn light_diffuse() -> [f64; 3] {
    [0.35; 3]
}
fn light_cutoff() -> f64 {
    90.0
}
fn light_fill() -> [f64; 3] {
    [0.3; 3]
}

impl Default for LightLook {
    fn default() -> Self {
        LightLook {
            height: light_height(),
            diffuse: light_diffuse(),
            cutoff: light_cutoff(),
            fill: light_fill(),
        }
    }
}

/// Config of `floorplan`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FloorplanConfig {
    /// A floorplan mesh (.stl or .obj; absolute or relative to the world file): drawn as is,
    /// collided through boxes derived from its wall tops.
    #[serde(default)]
    pub mesh: Option<String>,
    /// A floorplan JSON file `{lines: [...], doors: [...]}` (relative to the world file).
    #[serde(default)]
    pub floorplan: Option<String>,
    /// Wall segments inline: `{id, x0_m, y0_m, x1_m, y1_m}` (m).
    #[serde(default)]
    pub lines: Option<Vec<WallLine>>,
    /// Door openings `{line_id, t, width_m}` (with `lines:`; a JSON file carries its own).
    #[serde(default)]
    pub doors: Option<Vec<Door>>,
    /// Wall (ceiling) height (m). Default 2.5.
    #[serde(default = "wall_height")]
    pub height: f64,
    /// Wall thickness (m). Default 0.12.
    #[serde(default = "wall_thickness")]
    pub thickness: f64,
    /// Door height (m); the wall above an opening is a lintel. Default 2.0.
    #[serde(default = "opening_height")]
    pub opening_height: f64,
    /// Mesh scale (`mesh:` only): a number or [x, y, z]. Default 1.0.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Value>")]
    pub mesh_scale: Option<Value>,
    /// Placement offset of the mesh in the world frame (m; `mesh:` only). Default [0, 0, 0].
    #[serde(default)]
    pub mesh_pos: Option<[f64; 3]>,
    /// Ground plane appearance and friction.
    #[serde(default)]
    pub floor: FloorLook,
    /// Wall appearance.
    #[serde(default)]
    pub wall: WallLook,
    /// Overhead light and ambient.
    #[serde(default)]
    pub light: LightLook,
}

fn wall_height() -> f64 {
    2.5
}
fn wall_thickness() -> f64 {
    0.12
}
fn opening_height() -> f64 {
    2.0
}

/// The `{lines, doors}` shape of a floorplan JSON file.
#[derive(Debug, Clone, Deserialize)]
pub struct FloorplanFile {
    /// Wall segments.
    pub lines: Vec<WallLine>,
    /// Doors.
    #[serde(default)]
    pub doors: Vec<Door>,
}

fn pos_finite(v: f64) -> bool {
    v > 0.0 && v.is_finite()
}

impl ValidateConfig for FloorplanConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        let sources: Vec<&str> = [
            ("mesh", self.mesh.is_some()),
            ("floorplan", self.floorplan.is_some()),
            ("lines", self.lines.is_some()),
        ]
        .iter()
        .filter(|(_, on)| *on)
        .map(|(k, _)| *k)
        .collect();
        match sources.len() {
            0 => e.push(ConfigError::new(
                "",
                "floorplan needs one source for its building: `lines:` (wall segments) or `floorplan: <file.json>` (or `mesh:`); it names neither",
            )),
            1 => {}
            _ => e.push(ConfigError::new(
                sources[1],
                format!(
                    "`{}` are two sources for one building; name exactly one of `lines:`, `floorplan:` or `mesh:`",
                    sources.join("` and `")
                ),
            )),
        }
        if self.mesh.is_some() {
            if let Err(m) = self.scale() {
                e.push(ConfigError::new("mesh_scale", m));
            }
            if let Some(p) = self.mesh_pos {
                if p.iter()
                    .any(|v| !v.is_finite() || v.abs() > crate::world::bounds::MAX_POSITION_M)
                {
                    e.push(ConfigError::new(
                        "mesh_pos",
                        format!("must be finite (m, within ±1e6), got {p:?}"),
                    ));
                }
            }
        }
        if self.mesh_scale.is_some() && self.mesh.is_none() {
            e.push(ConfigError::new("mesh_scale", "applies to a `mesh:` source only; remove it"));
        }
        if self.mesh_pos.is_some() && self.mesh.is_none() {
            e.push(ConfigError::new("mesh_pos", "applies to a `mesh:` source only; remove it"));
        }
        if self.doors.is_some() && self.lines.is_none() {
            e.push(ConfigError::new(
                "doors",
                "goes with inline `lines:`; a `floorplan:` file carries its own doors",
            ));
        }
        if !pos_finite(self.height) {
            e.push(ConfigError::new("height", format!("must be > 0 (m), got {}", self.height)));
        }
        if !pos_finite(self.thickness) {
            e.push(ConfigError::new(
                "thickness",
                format!("must be > 0 (m), got {}", self.thickness),
            ));
        }
        if !pos_finite(self.opening_height) || self.opening_height > self.height {
            e.push(ConfigError::new(
                "opening_height",
                format!(
                    "must be > 0 and <= height ({} m), got {}",
                    self.height, self.opening_height
                ),
            ));
        }
        for (k, c) in [
            ("floor.rgb1", self.floor.rgb1),
            ("floor.rgb2", self.floor.rgb2),
            ("wall.rgb1", self.wall.rgb1),
            ("wall.rgb2", self.wall.rgb2),
        ] {
            if c.iter().any(|v| !(0.0..=1.0).contains(v)) {
                e.push(ConfigError::new(k, format!("RGB components are in 0..1, got {c:?}")));
            }
        }
        for (k, r) in [
            ("floor.reflectance", self.floor.reflectance),
            ("wall.reflectance", self.wall.reflectance),
        ] {
            if let Some(r) = r {
                if !(0.0..=1.0).contains(&r) {
                    e.push(ConfigError::new(k, format!("is in 0..1, got {r}")));
                }
            }
        }
        for (k, p) in [
            ("floor.physical_size", self.floor.physical_size),
            ("wall.physical_size", self.wall.physical_size),
        ] {
            if let Some(p) = p {
                if p.xy().iter().any(|v| !pos_finite(*v)) {
                    e.push(ConfigError::new(
                        k,
                        format!("metres per tile must be > 0, got {:?}", p.xy()),
                    ));
                }
            }
        }
        if let Some(f) = self.floor.friction {
            if f.iter().any(|v| !v.is_finite() || *v < 0.0) {
                e.push(ConfigError::new(
                    "floor.friction",
                    format!("[sliding, torsional, rolling] must be finite and >= 0, got {f:?}"),
                ));
            }
        }
        if !pos_finite(self.light.height) {
            e.push(ConfigError::new(
                "light.height",
                format!("must be > 0 (m), got {}", self.light.height),
            ));
        }
        if !(self.light.cutoff > 0.0 && self.light.cutoff <= 180.0) {
            e.push(ConfigError::new(
                "light.cutoff",
                format!("a spot half-angle in (0, 180] degrees, got {}", self.light.cutoff),
            ));
        }
        if let Some(lines) = &self.lines {
            e.extend(check_layout(
                lines,
                self.doors.as_deref().unwrap_or(&[]),
                self.thickness,
                "lines",
                "doors",
            ));
        }
        e
    }
}

impl FloorplanConfig {
    /// `mesh_scale` as [x, y, z] (1.0 when unset).
    pub fn scale(&self) -> Result<[f64; 3], String> {
        let s = match &self.mesh_scale {
            None => [1.0; 3],
            Some(v) => match (v.as_f64(), v.as_sequence()) {
                (Some(f), _) => [f; 3],
                (_, Some(seq)) if seq.len() == 3 && seq.iter().all(|x| x.as_f64().is_some()) => {
                    [seq[0].as_f64().unwrap(), seq[1].as_f64().unwrap(), seq[2].as_f64().unwrap()]
                }
                _ => {
                    return Err(format!(
                        "a number or [x, y, z], got {}",
                        serde_norway::to_string(v).unwrap_or_default().trim()
                    ))
                }
            },
        };
        if s.iter().any(|v| !(*v > 0.0 && v.is_finite())) {
            return Err(format!("every factor must be > 0, got {s:?}"));
        }
        Ok(s)
    }
}

/// Check a layout: non-degenerate segments with distinct ids; doors on existing walls, inside
/// them, not overlapping.
pub fn check_layout(
    lines: &[WallLine],
    doors: &[Door],
    _thickness: f64,
    lines_key: &str,
    doors_key: &str,
) -> Vec<ConfigError> {
    let mut e = Vec::new();
    if lines.is_empty() {
        e.push(ConfigError::new(lines_key, "is empty; give at least one wall segment"));
    }
    for (i, l) in lines.iter().enumerate() {
        if [l.x0_m, l.y0_m, l.x1_m, l.y1_m].iter().any(|v| !v.is_finite()) {
            e.push(ConfigError::new(
                format!("{lines_key}[{i}]"),
                "coordinates must be finite numbers (m)",
            ));
        } else if seg_len(l) < 1e-6 {
            e.push(ConfigError::new(
                format!("{lines_key}[{i}]"),
                format!("wall `{}` has zero length", l.id),
            ));
        }
        if lines[..i].iter().any(|o| o.id == l.id) {
            e.push(ConfigError::new(
                format!("{lines_key}[{i}].id"),
                format!("id {} is used by two walls; ids must be distinct", l.id),
            ));
        }
    }
    let ids: Vec<String> = lines.iter().map(|l| l.id.to_string()).collect();
    for (i, d) in doors.iter().enumerate() {
        let at = format!("{doors_key}[{i}]");
        let Some(l) = lines.iter().find(|l| l.id == d.line_id) else {
            e.push(ConfigError::new(
                format!("{at}.line_id"),
                format!("no wall has id {}; ids: {}", d.line_id, ids.join(", ")),
            ));
            continue;
        };
        if !(0.0..=1.0).contains(&d.t) {
            e.push(ConfigError::new(
                format!("{at}.t"),
                format!("is a fraction 0..1 along the wall, got {}", d.t),
            ));
            continue;
        }
        if !pos_finite(d.width_m) {
            e.push(ConfigError::new(
                format!("{at}.width_m"),
                format!("must be > 0 (m), got {}", d.width_m),
            ));
            continue;
        }
        let len = seg_len(l);
        let (a, b) = opening(l, d);
        if a < -1e-9 || b > len + 1e-9 {
            e.push(ConfigError::new(
                format!("{at}.width_m"),
                format!(
                    "a {} m door at t = {} runs past the end of wall {} ({len:.3} m long)",
                    d.width_m, d.t, l.id
                ),
            ));
        }
        for (j, o) in doors[..i].iter().enumerate() {
            if o.line_id == d.line_id {
                let (oa, ob) = opening(l, o);
                if a < ob && oa < b {
                    e.push(ConfigError::new(
                        &at,
                        format!("overlaps {doors_key}[{j}] on wall {}", l.id),
                    ));
                }
            }
        }
    }
    e
}

fn seg_len(l: &WallLine) -> f64 {
    (l.x1_m - l.x0_m).hypot(l.y1_m - l.y0_m)
}

/// The opening of a door along its wall, [start, end] in metres from (x0, y0).
fn opening(l: &WallLine, d: &Door) -> (f64, f64) {
    let c = d.t * seg_len(l);
    (c - d.width_m / 2.0, c + d.width_m / 2.0)
}

/// One box of the built floorplan (a wall piece or a lintel), world frame.
#[derive(Debug, Clone, PartialEq)]
pub struct WallBox {
    /// Geom name.
    pub name: String,
    /// Centre (m).
    pub pos: [f64; 3],
    /// Half-extents along the wall, across it, and up (m).
    pub half: [f64; 3],
    /// Heading of the wall (rad).
    pub yaw: f64,
}

/// The wall boxes of a layout (pure geometry; what `build` adds).
pub fn wall_boxes(
    lines: &[WallLine],
    doors: &[Door],
    height: f64,
    thickness: f64,
    opening_height: f64,
) -> Vec<WallBox> {
    let mut out = Vec::new();
    let ht = thickness / 2.0;
    for l in lines {
        let len = seg_len(l);
        let u = [(l.x1_m - l.x0_m) / len, (l.y1_m - l.y0_m) / len];
        let yaw = u[1].atan2(u[0]);
        let mut ops: Vec<(f64, f64)> =
            doors.iter().filter(|d| d.line_id == l.id).map(|d| opening(l, d)).collect();
        ops.sort_by(|a, b| a.0.total_cmp(&b.0));
        let at = |s: f64, z: f64| [l.x0_m + u[0] * s, l.y0_m + u[1] * s, z];
        let mut start = -ht;
        let mut k = 0;
        for &(a, b) in ops.iter().chain(std::iter::once(&(len + ht, len + ht))) {
            if a - start > 1e-9 {
                out.push(WallBox {
                    name: format!("wall_{}_{k}", l.id),
                    pos: at((start + a) / 2.0, height / 2.0),
                    half: [(a - start) / 2.0, ht, height / 2.0],
                    yaw,
                });
                k += 1;
            }
            start = start.max(b);
        }
        for (j, &(a, b)) in ops.iter().enumerate() {
            if height - opening_height > 1e-9 {
                out.push(WallBox {
                    name: format!("wall_{}_lintel_{j}", l.id),
                    pos: at((a + b) / 2.0, (opening_height + height) / 2.0),
                    half: [(b - a) / 2.0, ht, (height - opening_height) / 2.0],
                    yaw,
                });
            }
        }
    }
    out
}

/// The `floorplan` plugin.
pub struct Floorplan {
    cfg: FloorplanConfig,
    lines: Vec<WallLine>,
    doors: Vec<Door>,
    /// `mesh:`: the file, its collider boxes and its metres per texture-coordinate unit (u, v).
    mesh: Option<(PathBuf, Vec<mesh::ColliderBox>, Option<[f64; 2]>)>,
    floor_tex: Option<texture::Texture>,
    wall_tex: Option<texture::Texture>,
}

/// Keys that shape wall segments (refused beside a `mesh:`).
pub const SEGMENT_KEYS: [&str; 3] = ["height", "thickness", "opening_height"];

fn read_file(path: &Path) -> Result<FloorplanFile, String> {
    let json = crate::input_file::Expect { file: "a floorplan JSON file", cap: 64 << 20 };
    let text = crate::input_file::read_text(path, "floorplan", json)?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "`{}` is not a floorplan JSON ({{lines: [...], doors: [...]}}): {e}",
            path.display()
        )
    })
}

/// Registry constructor: the typed config, validation, and (for `floorplan: file.json`) the file
/// read and checked at load time.
pub fn create(value: &Value, args: &PluginArgs) -> Result<Box<dyn Plugin>, Vec<ConfigError>> {
    let cfg: FloorplanConfig = typed_config(value)
        .map_err(|e| crate::key_ranges::key_ranges::<FloorplanConfig>(value, e))?;
    let mut errs = cfg.validate();
    if cfg.mesh.is_some() {
        for k in SEGMENT_KEYS {
            if value.get(k).is_some() {
                errs.push(ConfigError::new(
                    k,
                    "shapes wall segments; a `mesh:` building has its own walls: remove it (the light's height is `light.height`)",
                ));
            }
        }
    }
    let resolve_tex = |key: &str, t: &Option<String>, errs: &mut Vec<ConfigError>| {
        t.as_deref().and_then(|t| {
            texture::resolve(t, &args.base_dir)
                .map_err(|m| errs.push(ConfigError::new(key, m)))
                .ok()
        })
    };
    let floor_tex = resolve_tex("floor.texture", &cfg.floor.texture, &mut errs);
    let wall_tex = resolve_tex("wall.texture", &cfg.wall.texture, &mut errs);
    if !errs.is_empty() {
        return Err(errs);
    }
    let mesh = match &cfg.mesh {
        Some(m) => {
            let path =
                mesh::resolve(m, &args.base_dir).map_err(|e| vec![ConfigError::new("mesh", e)])?;
            let scale = cfg.scale().map_err(|e| vec![ConfigError::new("mesh_scale", e)])?;
            let boxes = mesh::colliders(&path, scale, cfg.mesh_pos.unwrap_or_default())
                .map_err(|e| vec![ConfigError::new("mesh", e)])?;
            let uv =
                mesh::uv_metres(&path, scale).map_err(|e| vec![ConfigError::new("mesh", e)])?;
            Some((path, boxes, uv))
        }
        None => None,
    };
    let (lines, doors) = if let Some(f) = &cfg.floorplan {
        let p = if Path::new(f).is_absolute() { PathBuf::from(f) } else { args.base_dir.join(f) };
        let file = read_file(&p).map_err(|e| vec![ConfigError::new("floorplan", e)])?;
        let errs = check_layout(
            &file.lines,
            &file.doors,
            cfg.thickness,
            "floorplan lines",
            "floorplan doors",
        );
        if !errs.is_empty() {
            return Err(errs
                .into_iter()
                .map(|e| {
                    ConfigError::new(
                        "floorplan",
                        format!("{}: {}: {}", p.display(), e.path, e.message),
                    )
                })
                .collect());
        }
        (file.lines, file.doors)
    } else {
        (cfg.lines.clone().unwrap_or_default(), cfg.doors.clone().unwrap_or_default())
    };
    Ok(Box::new(Floorplan { cfg, lines, doors, mesh, floor_tex, wall_tex }))
}

/// The registry entry.
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "floorplan",
        "A floorplan as the world: ground plane `floor`, an overhead light and the walls: one box per wall segment (door openings, lintels) or a mesh with derived colliders.",
        FloorplanConfig;
        create
    )
    .provides_world()
}

fn tint(rgb: [f64; 3], t: Option<[f64; 4]>) -> [f32; 4] {
    let t = t.unwrap_or([1.0; 4]);
    [(rgb[0] * t[0]) as f32, (rgb[1] * t[1]) as f32, (rgb[2] * t[2]) as f32, t[3] as f32]
}

impl Plugin for Floorplan {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD
    }

    fn build(&mut self, spec: &mut MjSpec, _b: &mut BuildContext) -> HookResult {
        let c = &self.cfg;
        // Extent of the building, for the plane's rendered size and the light's position.
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for l in &self.lines {
            for (x, y) in [(l.x0_m, l.y0_m), (l.x1_m, l.y1_m)] {
                lo = [lo[0].min(x), lo[1].min(y)];
                hi = [hi[0].max(x), hi[1].max(y)];
            }
        }
        for b in self.mesh.iter().flat_map(|(_, b, _)| b) {
            lo = [lo[0].min(b.pos[0] - b.half[0]), lo[1].min(b.pos[1] - b.half[1])];
            hi = [hi[0].max(b.pos[0] + b.half[0]), hi[1].max(b.pos[1] + b.half[1])];
        }
        let centre = [(lo[0] + hi[0]) / 2.0, (lo[1] + hi[1]) / 2.0];
        let margin = 1.0;
        let half =
            [((hi[0] - lo[0]) / 2.0 + margin).max(1.0), ((hi[1] - lo[1]) / 2.0 + margin).max(1.0)];

        // Floor: a PNG texture, else a checker.
        let ftex = self.floor_tex.as_ref().map(|t| &t.manifest);
        let tile = c
            .floor
            .physical_size
            .or(ftex.and_then(|m| m.physical_size))
            .map(TileSize::xy)
            .unwrap_or([1.0, 1.0]);
        let tex = spec.add_texture().with_name("floorplan_floor_tex");
        tex.set_type(MjtTexture::mjTEXTURE_2D);
        if let Some(t) = &self.floor_tex {
            tex.set_file(&t.png.display().to_string());
        } else {
            tex.set_builtin(MjtBuiltin::mjBUILTIN_CHECKER);
            *tex.rgb1_mut() = c.floor.rgb1;
            *tex.rgb2_mut() = c.floor.rgb2;
            tex.set_width(512);
            tex.set_height(512);
        }
        let mat = spec.add_material().with_name("floorplan_floor_mat");
        mat.set_texture(MjtTextureRoleBase::mjTEXROLE_RGB, "floorplan_floor_tex");
        mat.set_texuniform(true);
        *mat.texrepeat_mut() = [(1.0 / tile[0]) as f32, (1.0 / tile[1]) as f32];
        let refl = c.floor.reflectance.or(ftex.and_then(|m| m.reflectance)).unwrap_or(0.2);
        mat.set_reflectance(refl as f32);
        *mat.rgba_mut() = tint([1.0; 3], c.floor.rgba);

        // Walls: a PNG texture, a solid colour, or a checker when rgb1 != rgb2.
        let wtex = self.wall_tex.as_ref().map(|t| &t.manifest);
        let wall_mat = spec.add_material().with_name("floorplan_wall_mat");
        let refl = c.wall.reflectance.or(wtex.and_then(|m| m.reflectance)).unwrap_or(0.0);
        wall_mat.set_reflectance(refl as f32);
        if let Some(t) = &self.wall_tex {
            let wt = c
                .wall
                .physical_size
                .or(t.manifest.physical_size)
                .map(TileSize::xy)
                .unwrap_or([2.4, 2.4]);
            wall_mat.set_texture(MjtTextureRoleBase::mjTEXROLE_RGB, "floorplan_wall_tex");
            // A UV-mapped mesh keeps its own mapping, its UVs scaled so a tile spans `wt` metres
            // (MuJoCo's texuniform would smear it); boxes and a UV-less mesh tile in world units.
            let uv = self.mesh.as_ref().and_then(|m| m.2);
            wall_mat.set_texuniform(uv.is_none());
            let per = uv.unwrap_or([1.0, 1.0]);
            *wall_mat.texrepeat_mut() = [(per[0] / wt[0]) as f32, (per[1] / wt[1]) as f32];
            *wall_mat.rgba_mut() = tint([1.0; 3], c.wall.rgba);
            let tx = spec.add_texture().with_name("floorplan_wall_tex");
            tx.set_type(MjtTexture::mjTEXTURE_2D);
            tx.set_file(&t.png.display().to_string());
        } else if c.wall.rgb1 == c.wall.rgb2 {
            *wall_mat.rgba_mut() = tint(c.wall.rgb1, c.wall.rgba);
        } else {
            let wt = c.wall.physical_size.map(TileSize::xy).unwrap_or([2.4, 2.4]);
            wall_mat.set_texture(MjtTextureRoleBase::mjTEXROLE_RGB, "floorplan_wall_tex");
            wall_mat.set_texuniform(true);
            *wall_mat.texrepeat_mut() = [(1.0 / wt[0]) as f32, (1.0 / wt[1]) as f32];
            *wall_mat.rgba_mut() = tint([1.0; 3], c.wall.rgba);
            let t = spec.add_texture().with_name("floorplan_wall_tex");
            t.set_type(MjtTexture::mjTEXTURE_2D);
            t.set_builtin(MjtBuiltin::mjBUILTIN_CHECKER);
            *t.rgb1_mut() = c.wall.rgb1;
            *t.rgb2_mut() = c.wall.rgb2;
            t.set_width(256);
            t.set_height(256);
        }

        if let Some((path, ..)) = &self.mesh {
            mesh::add_asset(spec, path, c.scale()?);
        }
        let world = spec.world_body_mut();
        let floor = world
            .add_geom()
            .with_name("floor")
            .with_type(MjtGeomBase::mjGEOM_PLANE)
            .with_pos([centre[0], centre[1], 0.0])
            .with_size([half[0], half[1], 0.1])
            .with_material("floorplan_floor_mat");
        *floor.friction_mut() = c.floor.friction.unwrap_or(MJ_DEFAULT_FRICTION);

        for w in wall_boxes(&self.lines, &self.doors, c.height, c.thickness, c.opening_height) {
            world
                .add_geom()
                .with_name(&w.name)
                .with_type(MjtGeomBase::mjGEOM_BOX)
                .with_pos(w.pos)
                .with_quat(crate::math::quat_from_rpy(0.0, 0.0, w.yaw))
                .with_size(w.half)
                .with_material("floorplan_wall_mat");
        }

        if let Some((_, boxes, _)) = &self.mesh {
            world
                .add_geom()
                .with_name("floorplan_mesh")
                .with_type(MjtGeomBase::mjGEOM_MESH)
                .with_meshname("floorplan_mesh")
                .with_pos(c.mesh_pos.unwrap_or_default())
                .with_contype(0)
                .with_conaffinity(0)
                .with_material("floorplan_wall_mat");
            for (k, b) in boxes.iter().enumerate() {
                let g = world
                    .add_geom()
                    .with_name(&format!("floorplan_collider_{k}"))
                    .with_type(MjtGeomBase::mjGEOM_BOX)
                    .with_pos(b.pos)
                    .with_size(b.half)
                    .with_group(3);
                // alpha 0: rays skip it (they hit the mesh's own faces) and renders hide it
                *g.rgba_mut() = [0.5, 0.5, 0.5, 0.0];
            }
        }
        let light = world
            .add_light()
            .with_name("floorplan_light")
            .with_pos([centre[0], centre[1], c.light.height])
            .with_dir([0.0, 0.0, -1.0]);
        *light.diffuse_mut() =
            [c.light.diffuse[0] as f32, c.light.diffuse[1] as f32, c.light.diffuse[2] as f32];
        light.set_cutoff(c.light.cutoff as f32);
        spec.visual_mut().headlight.ambient =
            [c.light.fill[0] as f32, c.light.fill[1] as f32, c.light.fill[2] as f32];
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn door_splits_wall_and_adds_lintel() {
        let lines = vec![WallLine { id: 0, x0_m: 0.0, y0_m: 0.0, x1_m: 6.0, y1_m: 0.0 }];
        let doors = vec![Door { line_id: 0, t: 0.5, width_m: 0.9 }];
        let b = wall_boxes(&lines, &doors, 2.5, 0.12, 2.0);
        assert_eq!(b.len(), 3);
        // left piece from -0.06 to 2.55, right from 3.45 to 6.06
        assert!((b[0].half[0] * 2.0 - 2.61).abs() < 1e-9 && (b[0].pos[0] - 1.245).abs() < 1e-9);
        assert!((b[1].half[0] * 2.0 - 2.61).abs() < 1e-9 && (b[1].pos[0] - 4.755).abs() < 1e-9);
        assert_eq!(b[2].name, "wall_0_lintel_0");
        assert!((b[2].pos[2] - 2.25).abs() < 1e-9 && (b[2].half[0] - 0.45).abs() < 1e-9);
    }
}
