//! `fiducial_marker`: an AprilTag or ArUco marker, free-standing in the world or welded to a body.
//!
//! The marker is a thin visual-only box (`thickness` behind the face, no contacts: a marker on a
//! wrist must not collide with the arm carrying it) whose +z face carries the marker texture: the
//! marker of `id` in `family` ([`dictionary`]) — its data bits inside a one-cell black border,
//! `size` m a side (the black square, the length a detector estimates) — in a white quiet zone
//! of `quiet_zone` × `size` on every side. The texture is drawn at 16 pixels per cell (the quiet
//! zone rounded to whole pixels), rows top to bottom; `vflip` / `hflip` flip its rows / columns
//! where a render comes out mirrored (a mirrored tag does not decode). `emission` brightens it
//! for viewing; it changes what a camera sees, so leave it 0 for detection.
//!
//! Placement, exactly one form: free-standing, `pose: [x, y, z]` (the marker centre, world) with
//! `quat: [w, x, y, z]` or `rpy` (default: facing +z, up); or welded to a body, `attach_to:` (the
//! body's model name) under `prefix` (default: the prefix of the entity this entry is nested
//! under), with `rel_pose` and `rel_quat` or `rel_rpy` in that body's frame. The body must exist
//! in the world built so far (the entry comes after the spawn that builds it).
//!
//! Names: the geom is `<prefix><stem>`, its texture `<prefix><stem>_tex` and material
//! `<prefix><stem>_mat`, where the stem is the entry's address with dots as `_` (its label at the
//! top of a document), so several markers in one world each take their own label.

pub mod dictionary;

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::{num, ConfigError, HookResult};
use crate::math::{arr3, quat as unit_quat, quat_from_rpy, vec3, wxyz};
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::world::bounds::{MAX_POSITION_M, MAX_SIZE_M};
use dictionary::{family, Family, FAMILIES};

/// Texture pixels per marker cell.
pub const CELL_PX: usize = 16;

fn d_family() -> String {
    "apriltag_36h11".into()
}
fn d_size() -> f64 {
    0.05
}
fn d_quiet() -> f64 {
    0.15
}
fn d_thickness() -> f64 {
    0.002
}

/// Config of `fiducial_marker`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FiducialMarkerConfig {
    /// Dictionary: apriltag_36h11 (default) | apriltag_25h9 | apriltag_16h5 | apriltag_36h10 |
    /// aruco_4x4_50 … aruco_7x7_1000 | aruco_original | aruco_mip_36h12.
    #[serde(default = "d_family")]
    pub family: String,
    /// Marker id within the family. Default 0.
    #[serde(default)]
    pub id: u32,
    /// Side of the black marker square (m): the length a detector estimates. Default 0.05.
    #[serde(default = "d_size")]
    pub size: f64,
    /// White margin around the marker, as a fraction of `size`. Default 0.15.
    #[serde(default = "d_quiet")]
    pub quiet_zone: f64,
    /// Material emission 0..1: for viewing only, it changes what a camera sees. Default 0.
    #[serde(default)]
    pub emission: f64,
    /// Box half-thickness behind the marker face (m). Default 0.002.
    #[serde(default = "d_thickness")]
    pub thickness: f64,
    /// Flip the texture's rows (a render that comes out mirrored top to bottom). Default false.
    #[serde(default)]
    pub vflip: bool,
    /// Flip the texture's columns. Default false.
    #[serde(default)]
    pub hflip: bool,
    /// Free-standing: world position [x, y, z] of the marker centre (m).
    #[serde(default)]
    pub pose: Option<Vec<f64>>,
    /// Free-standing: world orientation [w, x, y, z]. Default: facing +z.
    #[serde(default)]
    pub quat: Option<[f64; 4]>,
    /// Free-standing: world orientation [roll, pitch, yaw] (rad), instead of `quat`.
    #[serde(default)]
    pub rpy: Option<[f64; 3]>,
    /// Welded: the body (its model name, without prefix) the marker rides.
    #[serde(default)]
    pub attach_to: Option<String>,
    /// Welded: the carrier's MJCF prefix. Default: the prefix of the entity this entry is nested under.
    #[serde(default)]
    pub prefix: Option<String>,
    /// Welded: marker position in the body's frame (m). Default [0, 0, 0].
    #[serde(default)]
    pub rel_pose: Option<[f64; 3]>,
    /// Welded: marker orientation in the body's frame [w, x, y, z]. Default identity.
    #[serde(default)]
    pub rel_quat: Option<[f64; 4]>,
    /// Welded: marker orientation in the body's frame [roll, pitch, yaw], instead of `rel_quat`.
    #[serde(default)]
    pub rel_rpy: Option<[f64; 3]>,
}

fn family_names() -> String {
    FAMILIES.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
}

fn check_quat(key: &str, q: &Option<[f64; 4]>, e: &mut Vec<ConfigError>) {
    if let Some(q) = q {
        let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
        if q.iter().any(|v| !v.is_finite()) || n < 1e-9 {
            e.push(ConfigError::new(
                key,
                format!(
                    "a quaternion [w, x, y, z] of non-zero length, got [{}]",
                    q.map(num).join(", ")
                ),
            ));
        }
    }
}

impl ValidateConfig for FiducialMarkerConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        match family(&self.family) {
            None => e.push(ConfigError::new(
                "family",
                format!(
                    "unknown dictionary `{}`; the dictionaries are: {}",
                    self.family,
                    family_names()
                ),
            )),
            Some(f) if self.id as usize >= f.count => e.push(ConfigError::new(
                "id",
                format!("{} has ids 0..={}, got {}", f.name, f.count - 1, self.id),
            )),
            _ => {}
        }
        if !(self.size > 0.0 && self.size <= MAX_SIZE_M) {
            e.push(ConfigError::new(
                "size",
                format!("must be in (0, 10000] m, got {}", num(self.size)),
            ));
        }
        if !(self.thickness > 0.0 && self.thickness <= MAX_SIZE_M) {
            e.push(ConfigError::new(
                "thickness",
                format!("must be in (0, 10000] m, got {}", num(self.thickness)),
            ));
        }
        if !(0.0..=10.0).contains(&self.quiet_zone) {
            e.push(ConfigError::new(
                "quiet_zone",
                format!("a fraction of `size` within 0..10, got {}", num(self.quiet_zone)),
            ));
        }
        if !(0.0..=1.0).contains(&self.emission) {
            e.push(ConfigError::new(
                "emission",
                format!("must be within 0..1, got {}", num(self.emission)),
            ));
        }
        let free = self.pose.is_some() || self.quat.is_some() || self.rpy.is_some();
        let welded = self.attach_to.is_some()
            || self.rel_pose.is_some()
            || self.rel_quat.is_some()
            || self.rel_rpy.is_some()
            || self.prefix.is_some();
        if free && welded {
            e.push(ConfigError::new(
                "attach_to",
                "a marker is placed EITHER free-standing (pose, quat/rpy) OR welded to a body (attach_to, prefix, rel_pose, rel_quat/rel_rpy), not both",
            ));
        } else if !free && !welded {
            e.push(ConfigError::new(
                "pose",
                "place the marker: `pose: [x, y, z]` (free-standing) or `attach_to: <body>` (welded to a robot's body)",
            ));
        } else if welded && self.attach_to.is_none() {
            e.push(ConfigError::new(
                "attach_to",
                "rel_pose / rel_quat / rel_rpy / prefix place a marker on a body: name it with `attach_to`",
            ));
        } else if free && self.pose.is_none() {
            e.push(ConfigError::new("pose", "a free-standing marker needs `pose: [x, y, z]`"));
        }
        if let Some(p) = &self.pose {
            if p.len() != 3 || p.iter().any(|v| !v.is_finite() || v.abs() > MAX_POSITION_M) {
                e.push(ConfigError::new(
                    "pose",
                    format!(
                        "the marker centre [x, y, z] (m, within ±1e6), got [{}]",
                        p.iter().map(|v| num(*v)).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
        if let Some(a) = &self.attach_to {
            if a.trim().is_empty() {
                e.push(ConfigError::new("attach_to", "must name a body"));
            }
        }
        if self.quat.is_some() && self.rpy.is_some() {
            e.push(ConfigError::new("rpy", "give `quat` or `rpy`, not both"));
        }
        if self.rel_quat.is_some() && self.rel_rpy.is_some() {
            e.push(ConfigError::new("rel_rpy", "give `rel_quat` or `rel_rpy`, not both"));
        }
        check_quat("quat", &self.quat, &mut e);
        check_quat("rel_quat", &self.rel_quat, &mut e);
        for (k, v) in [("rpy", self.rpy), ("rel_rpy", self.rel_rpy), ("rel_pose", self.rel_pose)] {
            if v.is_some_and(|v| v.iter().any(|x| !x.is_finite())) {
                e.push(ConfigError::new(k, "must be finite"));
            }
        }
        e
    }
}

/// The marker's texture: `side` × `side` RGB pixels, rows top to bottom, and the black square's
/// side in pixels.
pub fn texture(
    f: &Family,
    id: usize,
    quiet_zone: f64,
    vflip: bool,
    hflip: bool,
) -> (Vec<u8>, usize, usize) {
    let cells = f.marker_cells(id).expect("validated id");
    let black = cells.len() * CELL_PX;
    let q = (quiet_zone * black as f64).round() as usize;
    let side = black + 2 * q;
    let mut px = vec![255u8; side * side * 3];
    for r in 0..side {
        for c in 0..side {
            let (rr, cc) =
                (if vflip { side - 1 - r } else { r }, if hflip { side - 1 - c } else { c });
            let inside = (q..q + black).contains(&rr) && (q..q + black).contains(&cc);
            if inside && !cells[(rr - q) / CELL_PX][(cc - q) / CELL_PX] {
                let i = (r * side + c) * 3;
                px[i..i + 3].copy_from_slice(&[0, 0, 0]);
            }
        }
    }
    (px, side, black)
}

/// The `fiducial_marker` plugin.
pub struct FiducialMarker {
    cfg: FiducialMarkerConfig,
    stem: String,
    owner: Option<String>,
}

impl FiducialMarker {
    /// Construct from config.
    pub fn new(cfg: FiducialMarkerConfig, args: &PluginArgs) -> Self {
        FiducialMarker { cfg, stem: args.address.replace('.', "_"), owner: args.owner.clone() }
    }
}

impl Plugin for FiducialMarker {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD
    }

    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        let c = &self.cfg;
        let f = family(&c.family).expect("validated family");
        let prefix = match (&c.prefix, &c.attach_to) {
            (Some(p), _) => p.clone(),
            (None, Some(_)) => b
                .ctx
                .entities
                .resolve_owner(self.owner.as_deref())
                .map(|e| e.prefix.clone())
                .unwrap_or_default(),
            (None, None) => String::new(),
        };
        let name = format!("{prefix}{}", self.stem);
        let (tex_name, mat_name) = (format!("{name}_tex"), format!("{name}_mat"));
        if spec.geom(&name).is_some() {
            return Err(format!(
                "the world already has a geom `{name}`; give this marker its own `name:`"
            ));
        }
        let (px, side, black) = texture(f, c.id as usize, c.quiet_zone, c.vflip, c.hflip);
        let tex = spec.add_texture().with_name(&tex_name);
        tex.set_type(MjtTexture::mjTEXTURE_2D);
        tex.set_width(side as i32);
        tex.set_height(side as i32);
        tex.set_nchannel(3);
        tex.set_data(&px);
        let mat = spec.add_material().with_name(&mat_name);
        mat.set_texture(MjtTextureRoleBase::mjTEXROLE_RGB, &tex_name);
        *mat.texrepeat_mut() = [1.0, 1.0];
        mat.set_emission(c.emission as f32);
        let half = c.size / 2.0 * side as f64 / black as f64;
        let (body, pos, quat) = match &c.attach_to {
            Some(a) => {
                let q = c
                    .rel_quat
                    .or(c.rel_rpy.map(|r| quat_from_rpy(r[0], r[1], r[2])))
                    .unwrap_or([1.0, 0.0, 0.0, 0.0]);
                (Some(format!("{prefix}{a}")), c.rel_pose.unwrap_or([0.0; 3]), q)
            }
            None => {
                let p = c.pose.clone().unwrap_or_default();
                let q = c
                    .quat
                    .or(c.rpy.map(|r| quat_from_rpy(r[0], r[1], r[2])))
                    .unwrap_or([1.0, 0.0, 0.0, 0.0]);
                (None, [p[0], p[1], p[2]], q)
            }
        };
        let rot = unit_quat(&quat);
        let quat = wxyz(&rot);
        let centre = arr3(&(vec3(&pos) + rot * vec3(&[0.0, 0.0, -c.thickness])));
        let parent = match &body {
            Some(bn) => spec.body_mut(bn).ok_or_else(|| {
                format!(
                    "attach_to: no body `{bn}` in the world built so far (`{}` under prefix `{prefix}`); \
                     the marker's entry must come after the spawn that builds the body",
                    c.attach_to.as_deref().unwrap_or("")
                )
            })?,
            None => spec.world_body_mut(),
        };
        let g = parent
            .add_geom()
            .with_name(&name)
            .with_type(MjtGeomBase::mjGEOM_BOX)
            .with_size([half, half, c.thickness])
            .with_pos(centre)
            .with_quat(quat)
            .with_material(&mat_name);
        g.set_contype(0);
        g.set_conaffinity(0);
        Ok(())
    }
}

/// The registry entry of `fiducial_marker`.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "fiducial_marker",
        "An AprilTag (36h11, 25h9, 16h5, 36h10) or ArUco marker, free-standing or welded to a body (attach_to); visual only.",
        FiducialMarkerConfig,
        FiducialMarker
    )
}
