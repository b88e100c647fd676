//! Shared spawn helpers (seed 001 `spawn_robot`, `spawn_sensor`, `spawn_model`, `box`; seed 000
//! §4 "Model plugin manifests", "Model discovery").
//!
//! What every plugin that places something in the world shares:
//! - the `pose:` shape ([`PoseConfig`]): a geometry_msgs/PoseStamped as SpawnEntity states one,
//!   with a world-frame `header`, an orientation given as a quaternion or as Euler angles, and an
//!   omittable `z` whose meaning the caller supplies (a robot's resting height, a prop's floor);
//! - who owns a placed thing's pose ([`Motion`]: welded, mocap-driven or a free body);
//! - contact friction as a scalar or a triple ([`Friction`]) and colours ([`check_rgba`]);
//! - names: MJCF prefixes, transport namespaces and TF frame prefixes ([`frame_prefix`],
//!   [`device_prefix`], [`body_name_for`]);
//! - loading a model for attaching ([`load_model`]: resolve, read its manifest, absolutize its
//!   mesh/texture file refs from the model's own dirs first, find its root body);
//! - vendor frames ([`FrameSites`]) and their static transforms read from the compiled model
//!   ([`static_transform`], [`StaticTfPublisher`]).
//!
//! Conventions: positions in metres, angles in radians, quaternions `[w, x, y, z]` (MuJoCo order)
//! unless a payload says otherwise (payload quaternions are ROS `[x, y, z, w]`).

use std::path::{Path, PathBuf};

use mujoco_rs::prelude::*;
use mujoco_rs::wrappers::mj_editing::MjsBody;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::{Payload, Transform};
use crate::context::{Endpoint, EndpointId, SimContext};
use crate::error::ConfigError;
use crate::mjcf::quat_from_rpy;
use crate::world::models::{load_manifest, resolve_model, FrameSpec, Manifest, ModelAsset};

pub use crate::context::entities::Pose;

// ------------------------------------------------------------------------------------------
// pose:
// ------------------------------------------------------------------------------------------

/// `pose.header`: only the world frame is accepted (a spawn pose is a world pose).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoseHeader {
    /// Reference frame of the pose; must be `world` (default `world`; `""` reads as `world`).
    #[serde(default = "world_frame")]
    pub frame_id: String,
}

fn world_frame() -> String {
    "world".to_string()
}

/// `pose.position` (m, world frame). Omitted `x`/`y` are 0; an omitted `z` is the caller's
/// default (a robot model's `rest_height`, a prop's seat on the floor).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PositionConfig {
    /// x (m). Default 0.
    #[serde(default)]
    pub x: f64,
    /// y (m). Default 0.
    #[serde(default)]
    pub y: f64,
    /// z (m). Default: the caller's (resting height / on the floor).
    #[serde(default)]
    pub z: Option<f64>,
}

/// `pose.orientation`: a quaternion `{x, y, z, w}` (geometry_msgs order; missing components
/// read 0, normalised) OR Euler angles `{roll, pitch, yaw}` (rad, REP 103 fixed-axis XYZ;
/// missing ones 0). Mixing the two is refused. Omitted: unrotated.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrientationConfig {
    /// Quaternion x.
    #[serde(default)]
    pub x: Option<f64>,
    /// Quaternion y.
    #[serde(default)]
    pub y: Option<f64>,
    /// Quaternion z.
    #[serde(default)]
    pub z: Option<f64>,
    /// Quaternion w.
    #[serde(default)]
    pub w: Option<f64>,
    /// Roll about x (rad).
    #[serde(default)]
    pub roll: Option<f64>,
    /// Pitch about y (rad).
    #[serde(default)]
    pub pitch: Option<f64>,
    /// Yaw about z (rad).
    #[serde(default)]
    pub yaw: Option<f64>,
}

impl OrientationConfig {
    fn has_quat(&self) -> bool {
        self.x.is_some() || self.y.is_some() || self.z.is_some() || self.w.is_some()
    }
    fn has_euler(&self) -> bool {
        self.roll.is_some() || self.pitch.is_some() || self.yaw.is_some()
    }
    /// The rotation as a unit quaternion `[w, x, y, z]` (identity when empty or invalid —
    /// validation reports the invalid cases).
    pub fn quat(&self) -> [f64; 4] {
        if self.has_quat() {
            let q = [
                self.w.unwrap_or(0.0),
                self.x.unwrap_or(0.0),
                self.y.unwrap_or(0.0),
                self.z.unwrap_or(0.0),
            ];
            let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
            if n > 1e-9 && n.is_finite() {
                return [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
            }
            return [1.0, 0.0, 0.0, 0.0];
        }
        quat_from_rpy(self.roll.unwrap_or(0.0), self.pitch.unwrap_or(0.0), self.yaw.unwrap_or(0.0))
    }
}

/// A spawn pose in the shape SpawnEntity gives its `initial_pose` (geometry_msgs/PoseStamped):
/// `{header: {frame_id: world}, position: {x, y, z}, orientation: {x, y, z, w} | {roll, pitch, yaw}}`.
/// Every part is optional: omitted, the thing sits at the origin, unrotated, at the caller's
/// default height.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoseConfig {
    /// Reference frame (only `world`).
    #[serde(default)]
    pub header: Option<PoseHeader>,
    /// Position (m).
    #[serde(default)]
    pub position: Option<PositionConfig>,
    /// Orientation (quaternion or roll/pitch/yaw).
    #[serde(default)]
    pub orientation: Option<OrientationConfig>,
}

impl PoseConfig {
    /// Check what serde cannot: a world header, finite numbers, a non-zero quaternion, no mix of
    /// quaternion and Euler keys. `path` is the key path of the pose (`pose`).
    pub fn validate(&self, path: &str) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if let Some(h) = &self.header {
            if !(h.frame_id.is_empty() || h.frame_id == "world") {
                e.push(ConfigError::new(
                    format!("{path}.header.frame_id"),
                    format!(
                        "a spawn pose is stated in the world frame: use `world` (got `{}`)",
                        h.frame_id
                    ),
                ));
            }
        }
        if let Some(p) = &self.position {
            for (k, v) in [("x", Some(p.x)), ("y", Some(p.y)), ("z", p.z)] {
                if let Some(v) = v {
                    if !v.is_finite() {
                        e.push(ConfigError::new(
                            format!("{path}.position.{k}"),
                            format!("must be a finite number (m), got {v}"),
                        ));
                    }
                }
            }
        }
        if let Some(o) = &self.orientation {
            if o.has_quat() && o.has_euler() {
                e.push(ConfigError::new(
                    format!("{path}.orientation"),
                    "give either a quaternion {x, y, z, w} or Euler angles {roll, pitch, yaw}, not both",
                ));
            }
            let all = [
                ("x", o.x),
                ("y", o.y),
                ("z", o.z),
                ("w", o.w),
                ("roll", o.roll),
                ("pitch", o.pitch),
                ("yaw", o.yaw),
            ];
            for (k, v) in all {
                if let Some(v) = v {
                    if !v.is_finite() {
                        e.push(ConfigError::new(
                            format!("{path}.orientation.{k}"),
                            format!("must be a finite number, got {v}"),
                        ));
                    }
                }
            }
            if o.has_quat() && !o.has_euler() {
                let n = [o.x, o.y, o.z, o.w]
                    .iter()
                    .map(|v| v.unwrap_or(0.0).powi(2))
                    .sum::<f64>()
                    .sqrt();
                if n < 1e-9 {
                    e.push(ConfigError::new(
                        format!("{path}.orientation"),
                        "the quaternion is zero; an unrotated pose is {w: 1} (or give {yaw: ...})",
                    ));
                }
            }
        }
        e
    }

    /// The world pose, with `default_z` for an omitted `position.z`.
    pub fn resolve(&self, default_z: f64) -> Pose {
        let (x, y, z) = match &self.position {
            Some(p) => (p.x, p.y, p.z.unwrap_or(default_z)),
            None => (0.0, 0.0, default_z),
        };
        let quat =
            self.orientation.as_ref().map(OrientationConfig::quat).unwrap_or([1.0, 0.0, 0.0, 0.0]);
        Pose { pos: [x, y, z], quat }
    }

    /// True when `position.z` was stated.
    pub fn has_z(&self) -> bool {
        self.position.as_ref().is_some_and(|p| p.z.is_some())
    }
}

// ------------------------------------------------------------------------------------------
// motion:, friction:, colours
// ------------------------------------------------------------------------------------------

/// Who owns a placed thing's pose (seed 001 `spawn_model`, `box`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Motion {
    /// Welded scenery: no degrees of freedom, nothing can move it (the default).
    #[default]
    Static,
    /// A mocap body: a plugin writes its pose; collidable, immovable by contact.
    Driven,
    /// A free joint: physics moves it; teleportable; re-seated at its spawn pose on reset.
    Physics,
}

impl Motion {
    /// The YAML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Motion::Static => "static",
            Motion::Driven => "driven",
            Motion::Physics => "physics",
        }
    }
}

/// Contact friction: a sliding coefficient alone (torsional 0.005 and rolling 0.0001 stay at
/// MuJoCo's defaults) or the full `[sliding, torsional, rolling]` triple.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Friction {
    /// Sliding coefficient only.
    Sliding(f64),
    /// `[sliding, torsional, rolling]`.
    Full([f64; 3]),
}

/// MuJoCo's default geom friction `[sliding, torsional, rolling]`.
pub const MJ_DEFAULT_FRICTION: [f64; 3] = [1.0, 0.005, 0.0001];

impl Friction {
    /// The triple (a scalar keeps MuJoCo's torsional/rolling defaults).
    pub fn triple(self) -> [f64; 3] {
        match self {
            Friction::Sliding(s) => [s, MJ_DEFAULT_FRICTION[1], MJ_DEFAULT_FRICTION[2]],
            Friction::Full(t) => t,
        }
    }
    /// Refuse negative or non-finite coefficients at `path`.
    pub fn validate(self, path: &str) -> Vec<ConfigError> {
        let t = self.triple();
        if t.iter().any(|v| !v.is_finite() || *v < 0.0) {
            vec![ConfigError::new(
                path,
                format!("friction coefficients must be finite and >= 0, got {t:?}"),
            )]
        } else {
            Vec::new()
        }
    }
}

/// Check a colour `[r, g, b]` or `[r, g, b, a]` in 0..1 at `path`.
pub fn check_rgba(c: &[f64], path: &str) -> Vec<ConfigError> {
    if !(c.len() == 3 || c.len() == 4) {
        return vec![ConfigError::new(
            path,
            format!("a colour is [r, g, b] or [r, g, b, a] in 0..1, got {} values", c.len()),
        )];
    }
    if c.iter().any(|v| !(0.0..=1.0).contains(v)) {
        return vec![ConfigError::new(path, format!("colour components are in 0..1, got {c:?}"))];
    }
    Vec::new()
}

/// `[r, g, b]` / `[r, g, b, a]` → rgba (alpha 1 when omitted).
pub fn rgba4(c: &[f64]) -> [f32; 4] {
    [c[0] as f32, c[1] as f32, c[2] as f32, c.get(3).copied().unwrap_or(1.0) as f32]
}

// ------------------------------------------------------------------------------------------
// names
// ------------------------------------------------------------------------------------------

/// The TF frame prefix of a namespace: `robot1` → `robot1/`, `""` → `""`.
pub fn frame_prefix(namespace: &str) -> String {
    let ns = namespace.trim_matches('/');
    if ns.is_empty() {
        String::new()
    } else {
        format!("{ns}/")
    }
}

/// Default MJCF prefix of a device mounted on a carrier: `<attach_prefix><label>_`.
pub fn device_prefix(attach_prefix: &str, label: &str) -> String {
    format!("{attach_prefix}{label}_")
}

/// An MJCF-safe name for an address (`room.box_1` → `room_box_1`), with `prefix` before it.
pub fn body_name_for(prefix: &str, address: &str) -> String {
    format!("{prefix}{}", address.replace('.', "_"))
}

/// The label of an address (its last segment).
pub fn label_of(address: &str) -> &str {
    address.rsplit('.').next().unwrap_or(address)
}

// ------------------------------------------------------------------------------------------
// quaternion math ([w, x, y, z])
// ------------------------------------------------------------------------------------------

/// Hamilton product `a ⊗ b`.
pub fn quat_mul(a: &[f64; 4], b: &[f64; 4]) -> [f64; 4] {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

/// Conjugate (the inverse of a unit quaternion).
pub fn quat_conj(q: &[f64; 4]) -> [f64; 4] {
    [q[0], -q[1], -q[2], -q[3]]
}

/// Compose rigid transforms: `(a ∘ b)` maps b's frame through a (`a.pos + a.rot·b.pos`, `a.q ⊗ b.q`).
pub fn compose(a: &Pose, b: &Pose) -> Pose {
    let r = crate::mjcf::quat_rotate(&a.quat, &b.pos);
    Pose {
        pos: [a.pos[0] + r[0], a.pos[1] + r[1], a.pos[2] + r[2]],
        quat: normalize(quat_mul(&a.quat, &b.quat)),
    }
}

/// `a⁻¹ ∘ b`: b expressed in a's frame.
pub fn relative(a: &Pose, b: &Pose) -> Pose {
    let inv = quat_conj(&a.quat);
    let d = [b.pos[0] - a.pos[0], b.pos[1] - a.pos[1], b.pos[2] - a.pos[2]];
    Pose { pos: crate::mjcf::quat_rotate(&inv, &d), quat: normalize(quat_mul(&inv, &b.quat)) }
}

fn normalize(q: [f64; 4]) -> [f64; 4] {
    let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    if n < 1e-12 {
        [1.0, 0.0, 0.0, 0.0]
    } else {
        [q[0] / n, q[1] / n, q[2] / n, q[3] / n]
    }
}

/// Height of the lowest point of a box with half-extents `half` rotated by `quat`, below its
/// centre (m): how high its centre must sit for it to rest on a floor at z = 0.
pub fn box_floor_offset(half: [f64; 3], quat: &[f64; 4]) -> f64 {
    (0..3)
        .map(|i| {
            let mut e = [0.0; 3];
            e[i] = 1.0;
            crate::mjcf::quat_rotate(quat, &e)[2].abs() * half[i]
        })
        .sum()
}

/// Same for an upright-axis cylinder of `radius` and half-height `half_h` rotated by `quat`.
pub fn cylinder_floor_offset(radius: f64, half_h: f64, quat: &[f64; 4]) -> f64 {
    let c = crate::mjcf::quat_rotate(quat, &[0.0, 0.0, 1.0])[2].abs().min(1.0);
    radius * (1.0 - c * c).sqrt() + half_h * c
}

// ------------------------------------------------------------------------------------------
// models
// ------------------------------------------------------------------------------------------

/// A model ready to attach: its file, manifest, spec (mesh/texture refs absolutized) and root
/// body name (unprefixed).
pub struct LoadedModel {
    /// Where it was found.
    pub asset: ModelAsset,
    /// Its `<model>.manifest.yaml` (empty when it has none).
    pub manifest: Manifest,
    /// The child spec.
    pub spec: MjSpec,
    /// Name of the first body under its world body (the base / mount), unprefixed.
    pub root: String,
    /// Every named body directly under its world body, file order (`root` first).
    pub roots: Vec<String>,
    /// The pose the file gives `root` (in the file's world frame).
    pub root_pose: Pose,
}

/// Resolve `reference` (short name, `<package>:<model>`, or a path relative to `base_dir`), load
/// its MJCF and manifest, absolutize its mesh/texture file refs ([`apply_assets`]), and reset its
/// root body's pose to the identity (the caller's attach frame carries the spawn pose).
pub fn load_model(reference: &str, base_dir: &Path) -> Result<LoadedModel, String> {
    let mut m = load_model_as_written(reference, base_dir)?;
    let body = m.spec.body_mut(&m.root).expect("root body exists");
    body.set_pos([0.0; 3]);
    body.set_quat([1.0, 0.0, 0.0, 0.0]);
    body.alt_mut().switch_quat();
    Ok(m)
}

/// [`load_model`] keeping every top-level body at the pose the file gives it (the attach frame
/// then composes with the model's own root frames, as plain MuJoCo places them).
pub fn load_model_as_written(reference: &str, base_dir: &Path) -> Result<LoadedModel, String> {
    let asset = resolve_model(reference, base_dir)?;
    let manifest = load_manifest(&asset)?;
    let mut spec = crate::mjcf::child_spec_from_file(&asset.path)?;
    apply_assets(&mut spec, &asset)?;
    let root = spec.world_body().body_iter(false).next().map(|b| b.name().to_string()).ok_or_else(
        || {
            format!(
                "model `{reference}` ({}) has no body under <worldbody> to spawn",
                asset.path.display()
            )
        },
    )?;
    if root.is_empty() {
        return Err(format!("model `{reference}`: its root body has no name; name it (e.g. <body name=\"base_link\">)"));
    }
    let roots = crate::model_import::top_level_bodies(&spec);
    let rb = spec.body(&root).expect("root body exists");
    let root_pose = Pose { pos: *rb.pos(), quat: crate::model_import::resolved_quat(&spec, rb) };
    Ok(LoadedModel { asset, manifest, spec, root, roots, root_pose })
}

/// Move every top-level body of `spec` by `offset` (`offset ∘ pose as written`): what attaching
/// the model through a frame at `offset` does, for attaches that have no frame (a site attach).
pub fn compose_top_level(spec: &mut MjSpec, offset: &Pose) {
    let roots = crate::model_import::top_level_bodies(spec);
    for r in roots {
        let b = spec.body(&r).expect("listed body exists");
        let written = Pose { pos: *b.pos(), quat: crate::model_import::resolved_quat(spec, b) };
        let p = compose(offset, &written);
        let b = spec.body_mut(&r).expect("listed body exists");
        b.set_pos(p.pos);
        b.set_quat(p.quat);
        b.alt_mut().switch_quat();
    }
}

trait SetPose {
    fn set_pos(&mut self, p: [f64; 3]);
    fn set_quat(&mut self, q: [f64; 4]);
}

impl SetPose for MjsBody {
    fn set_pos(&mut self, p: [f64; 3]) {
        *self.pos_mut() = p;
    }
    fn set_quat(&mut self, q: [f64; 4]) {
        *self.quat_mut() = q;
    }
}

/// Rewrite the relative `file=` refs of a model's meshes and textures to absolute paths, found
/// in the model's own declared `meshdir`/`texturedir` (relative to the model file) first, then in
/// the asset's search dirs (its own dir first). An asset that a sub-model brought (an MJCF
/// `<attach>` of another file) is searched first where MuJoCo looks for it: that file's own
/// directory and `meshdir`/`texturedir`. MuJoCo allows one meshdir per model, so absolute paths
/// are what lets models from several places coexist in one world. A ref found nowhere is an error
/// naming the dirs searched.
pub fn apply_assets(spec: &mut MjSpec, asset: &ModelAsset) -> Result<(), String> {
    let model_dir = asset.path.parent().map(Path::to_path_buf).unwrap_or_default();
    let meshdir = spec.compiler().meshdir().to_string();
    let texturedir = spec.compiler().texturedir().to_string();
    let top: *const mujoco_rs::mujoco_c::mjSpec = spec.ffi();
    let dirs_for = |declared: &str| -> Vec<PathBuf> {
        let mut v = Vec::new();
        if !declared.is_empty() {
            let d = Path::new(declared);
            v.push(if d.is_absolute() { d.to_path_buf() } else { model_dir.join(d) });
        }
        v.extend(asset.asset_dirs.iter().cloned());
        v
    };
    let find = |file: &str, dirs: &[PathBuf], what: &str| -> Result<Option<String>, String> {
        if file.is_empty() || Path::new(file).is_absolute() {
            return Ok(None);
        }
        for d in dirs {
            let p = d.join(file);
            if p.is_file() {
                return Ok(Some(p.to_string_lossy().into_owned()));
            }
        }
        Err(format!(
            "{what} file `{file}` of model `{}` not found in {}",
            asset.path.display(),
            dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
        ))
    };
    let mesh_dirs = dirs_for(&meshdir);
    for m in spec.mesh_iter_mut() {
        let mut dirs = origin_dirs(m, top, true);
        dirs.extend(mesh_dirs.iter().cloned());
        if let Some(abs) = find(m.file(), &dirs, "mesh")? {
            m.set_file(&abs);
        }
    }
    let tex_dirs = dirs_for(&texturedir);
    for t in spec.texture_iter_mut() {
        let mut dirs = origin_dirs(t, top, false);
        dirs.extend(tex_dirs.iter().cloned());
        if let Some(abs) = find(t.file(), &dirs, "texture")? {
            t.set_file(&abs);
        }
    }
    Ok(())
}

/// Where MuJoCo looks for an asset another file brought into this spec (an MJCF `<attach>`): that
/// file's directory joined with its own `meshdir` (`mesh`) or `texturedir`, then the directory
/// itself. Empty for an asset the spec's own file declared.
fn origin_dirs<E: mujoco_rs::wrappers::mj_editing::SpecElement>(
    e: &E,
    top: *const mujoco_rs::mujoco_c::mjSpec,
    mesh: bool,
) -> Vec<PathBuf> {
    use mujoco_rs::mujoco_c::{mjs_getCompiler, mjs_getOriginSpec, mjs_getString};
    let read = |s: *const mujoco_rs::mujoco_c::mjString| -> String {
        if s.is_null() {
            return String::new();
        }
        // SAFETY: a live mjString of a live spec; MuJoCo returns a NUL-terminated C string.
        let c = unsafe { mjs_getString(s) };
        if c.is_null() {
            return String::new();
        }
        // SAFETY: as above; copied out at once.
        unsafe { std::ffi::CStr::from_ptr(c) }.to_string_lossy().into_owned()
    };
    // SAFETY: the element is live; MuJoCo returns the spec that defined it (or null).
    let origin = unsafe { mjs_getOriginSpec(e.element_pointer()) };
    if origin.is_null() || std::ptr::eq(origin as *const _, top) {
        return Vec::new();
    }
    // SAFETY: `origin` is a live spec (an asset of this one); fields are read only.
    let dir = PathBuf::from(read(unsafe { (*origin).modelfiledir }));
    // SAFETY: the element is live; its origin spec's compiler is returned.
    let comp = unsafe { mjs_getCompiler(e.element_pointer()) };
    let mut v = Vec::new();
    if !comp.is_null() {
        // SAFETY: a live compiler struct of the origin spec; the handle type is its transparent
        // view and is only read.
        let c = unsafe { &*(comp as *const mujoco_rs::wrappers::mj_editing::MjsCompiler) };
        let declared = if mesh { c.meshdir() } else { c.texturedir() }.to_string();
        if !declared.is_empty() {
            let d = Path::new(&declared);
            v.push(if d.is_absolute() { d.to_path_buf() } else { dir.join(d) });
        }
    }
    if !dir.as_os_str().is_empty() {
        v.push(dir);
    }
    v
}

/// Names of every body of a spec (world excluded), for error messages.
pub fn body_names(spec: &MjSpec) -> Vec<String> {
    spec.world_body()
        .body_iter(true)
        .map(|b| b.name().to_string())
        .filter(|n| !n.is_empty())
        .collect()
}

/// The body a named site sits on and the site's local pose, searching the whole spec.
pub fn find_site(spec: &MjSpec, site: &str) -> Option<(String, Pose)> {
    let world = spec.world_body();
    let check = |b: &MjsBody| -> Option<(String, Pose)> {
        b.site_iter(false)
            .find(|s| s.name() == site)
            .map(|s| (b.name().to_string(), Pose { pos: *s.pos(), quat: *s.quat() }))
    };
    if let Some(r) = check(world) {
        return Some(r);
    }
    world.body_iter(true).find_map(check)
}

// ------------------------------------------------------------------------------------------
// frames
// ------------------------------------------------------------------------------------------

/// A vendor frame built as a site (seed 001 `spawn_robot` "Vendor frames").
#[derive(Debug, Clone, PartialEq)]
pub struct PlacedFrame {
    /// Frame name (unprefixed; the site is `<prefix><name>` after attach).
    pub name: String,
    /// Declared parent (a body or an earlier frame), unprefixed.
    pub parent: String,
    /// True when the parent is another frame rather than a body.
    pub parent_is_frame: bool,
    /// Body the site sits on (unprefixed).
    pub body: String,
}

/// Builder of vendor frames as sites in an (unprefixed) model spec. Frames are added list by
/// list (a model manifest's, then a spawn config's); a later list may hang from an earlier one.
#[derive(Debug, Clone, Default)]
pub struct FrameSites {
    placed: Vec<(PlacedFrame, Pose)>,
}

impl FrameSites {
    /// No frames yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The frames placed so far, in order.
    pub fn frames(&self) -> Vec<PlacedFrame> {
        self.placed.iter().map(|(p, _)| p.clone()).collect()
    }

    /// Add each frame as a site on its parent's body, in order. A parent that is itself an
    /// earlier frame puts the site on that frame's body with the composed pose. `key` names the
    /// list in messages (`frames`). Refused: a parent that is neither a body nor an earlier frame
    /// (the message lists both), a name that collides with a body, or with a site at another pose
    /// (a site of that name at the same pose is reused), a duplicate.
    pub fn add(
        &mut self,
        spec: &mut MjSpec,
        frames: &[FrameSpec],
        key: &str,
    ) -> Result<(), String> {
        for (i, f) in frames.iter().enumerate() {
            if f.name.is_empty() {
                return Err(format!("{key}[{i}].name: a frame needs a name"));
            }
            if self.placed.iter().any(|(p, _)| p.name == f.name) {
                return Err(format!("{key}[{i}]: frame `{}` is declared twice", f.name));
            }
            if spec.body(&f.name).is_some() {
                return Err(format!(
                    "{key}[{i}]: frame `{}` collides with a body of the model of the same name; name the frame differently",
                    f.name
                ));
            }
            let existing_site = find_site(spec, &f.name);
            let local = Pose { pos: f.pos, quat: quat_from_rpy(f.rpy[0], f.rpy[1], f.rpy[2]) };
            let (body, pose, parent_is_frame) = if let Some((pf, ppose)) =
                self.placed.iter().find(|(p, _)| p.name == f.parent)
            {
                (pf.body.clone(), compose(ppose, &local), true)
            } else if !f.parent.is_empty() && spec.body(&f.parent).is_some() {
                (f.parent.clone(), local, false)
            } else if frames.iter().skip(i + 1).any(|g| g.name == f.parent) {
                return Err(format!(
                    "{key}[{i}].parent: frame `{}` is declared after `{}`; declare a parent frame before its children",
                    f.parent, f.name
                ));
            } else {
                let so_far: Vec<&str> = self.placed.iter().map(|(p, _)| p.name.as_str()).collect();
                return Err(format!(
                    "{key}[{i}].parent: `{}` is neither a body of the model nor a frame declared before it; bodies: {}; frames: {}",
                    f.parent,
                    body_names(spec).join(", "),
                    if so_far.is_empty() { "(none)".to_string() } else { so_far.join(", ") }
                ));
            };
            if let Some((sbody, spose)) = existing_site {
                // The model already has this site (a device whose scan site IS its default
                // frame): reuse it when it is the same frame, refuse when it is not.
                let same = sbody == body
                    && (0..3).all(|k| (spose.pos[k] - pose.pos[k]).abs() < 1e-9)
                    && (quat_mul(&quat_conj(&spose.quat), &pose.quat)[0].abs() - 1.0).abs() < 1e-9;
                if !same {
                    return Err(format!(
                        "{key}[{i}]: frame `{}` collides with a site of the model of the same name at a different pose; name the frame differently",
                        f.name
                    ));
                }
                self.placed.push((
                    PlacedFrame {
                        name: f.name.clone(),
                        parent: f.parent.clone(),
                        parent_is_frame,
                        body,
                    },
                    pose,
                ));
                continue;
            }
            let b = spec.body_mut(&body).expect("resolved body exists");
            b.add_site()
                .with_name(&f.name)
                .with_pos(pose.pos)
                .with_quat(pose.quat)
                .with_size([0.005, 0.005, 0.005])
                .with_rgba([0.0, 0.0, 0.0, 0.0]);
            self.placed.push((
                PlacedFrame {
                    name: f.name.clone(),
                    parent: f.parent.clone(),
                    parent_is_frame,
                    body,
                },
                pose,
            ));
        }
        Ok(())
    }
}

/// A frame of the compiled model: a body or a site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameRef {
    /// A body's frame (id).
    Body(usize),
    /// A site's frame (id).
    Site(usize),
}

impl FrameRef {
    /// Resolve a compiled name: a body first, then a site.
    pub fn lookup(model: &MjModel, name: &str) -> Option<FrameRef> {
        if let Some(b) = model.name_to_id(MjtObjBase::mjOBJ_BODY, name) {
            return Some(FrameRef::Body(b));
        }
        model.name_to_id(MjtObjBase::mjOBJ_SITE, name).map(FrameRef::Site)
    }

    /// The body it sits on and its pose in that body's frame (from the compiled model).
    pub fn in_body(self, model: &MjModel) -> (usize, Pose) {
        match self {
            FrameRef::Body(b) => (b, Pose::default()),
            FrameRef::Site(s) => {
                let b = model.site_bodyid()[s] as usize;
                (b, Pose { pos: model.site_pos()[s], quat: model.site_quat()[s] })
            }
        }
    }
}

fn body_chain(model: &MjModel, mut b: usize) -> Vec<usize> {
    let mut v = vec![b];
    while b != 0 {
        b = model.body_parentid()[b] as usize;
        v.push(b);
    }
    v
}

/// The pose of `child` in `parent`'s frame, read from the compiled model. Both must be welded
/// to each other: no body between either one and their common ancestor may carry a joint
/// (otherwise the transform is not static and the error names the joint's body).
pub fn static_relative_pose(
    model: &MjModel,
    parent: FrameRef,
    child: FrameRef,
) -> Result<Pose, String> {
    let (pb, plocal) = parent.in_body(model);
    let (cb, clocal) = child.in_body(model);
    let pchain = body_chain(model, pb);
    let cchain = body_chain(model, cb);
    let lca = *pchain.iter().find(|b| cchain.contains(b)).expect("world is a common ancestor");
    let to_lca = |chain: &[usize], local: Pose| -> Result<Pose, String> {
        let mut pose = local;
        for &b in chain.iter().take_while(|&&b| b != lca) {
            if model.body_jntnum()[b] > 0 {
                let name = model.id_to_name(MjtObjBase::mjOBJ_BODY, b).unwrap_or("?");
                return Err(format!(
                    "body `{name}` has a joint, so the transform through it is not static"
                ));
            }
            pose = compose(&Pose { pos: model.body_pos()[b], quat: model.body_quat()[b] }, &pose);
        }
        Ok(pose)
    };
    let p = to_lca(&pchain, plocal)?;
    let c = to_lca(&cchain, clocal)?;
    Ok(relative(&p, &c))
}

/// A static transform `parent_name → child_name` between two compiled frames (names in the
/// payload are unprefixed; the endpoint's frame prefix is applied by the transport).
pub fn static_transform(
    model: &MjModel,
    parent: FrameRef,
    child: FrameRef,
    parent_name: &str,
    child_name: &str,
) -> Result<Transform, String> {
    let p = static_relative_pose(model, parent, child)
        .map_err(|e| format!("frame `{child_name}` is not welded to `{parent_name}`: {e}"))?;
    Ok(Transform {
        parent: parent_name.to_string(),
        child: child_name.to_string(),
        translation: p.pos,
        rotation: crate::mjcf::wxyz_to_xyzw(&p.quat),
    })
}

/// The robot-side transforms of a set of placed frames: each `parent → name` from the compiled
/// model (sites `<prefix><name>`, parents `<prefix><parent>`), preceded by `root → body` for a
/// chain that starts at a body other than the root (that body must be welded to the root).
pub fn frame_transforms(
    model: &MjModel,
    prefix: &str,
    root: &str,
    frames: &[PlacedFrame],
) -> Result<Vec<Transform>, String> {
    let mut out: Vec<Transform> = Vec::new();
    let lookup = |n: &str| {
        FrameRef::lookup(model, &format!("{prefix}{n}"))
            .ok_or_else(|| format!("frame `{n}` (`{prefix}{n}`) missing after compile"))
    };
    for f in frames {
        if !f.parent_is_frame && f.parent != root && !out.iter().any(|t| t.child == f.parent) {
            out.push(static_transform(model, lookup(root)?, lookup(&f.parent)?, root, &f.parent)?);
        }
        out.push(static_transform(
            model,
            lookup(&f.parent)?,
            lookup(&f.name)?,
            &f.parent,
            &f.name,
        )?);
    }
    Ok(out)
}

/// A `tf_static` out endpoint carrying [`Payload::Transforms`] (hint `ros2.tf = static`), in an
/// entity's namespace with its frame prefix. Register in `configure`; [`StaticTfPublisher::publish`]
/// in `on_reset` (the engine clears endpoints at every reset, after configure) — a bridge latches it.
#[derive(Debug, Clone, Default)]
pub struct StaticTfPublisher {
    /// The endpoint, once registered (none when there is nothing to publish).
    pub endpoint: Option<EndpointId>,
    /// The transforms it carries.
    pub transforms: Vec<Transform>,
}

impl StaticTfPublisher {
    /// Register the endpoint for `transforms` (nothing when empty). `owner` is the entity's
    /// name, `namespace` its transport scope (frame prefix `<namespace>/`).
    pub fn register(
        ctx: &mut SimContext,
        owner: &str,
        namespace: &str,
        transforms: Vec<Transform>,
    ) -> Self {
        if transforms.is_empty() {
            return StaticTfPublisher::default();
        }
        let ep = Endpoint::out("tf_static")
            .owner(Some(owner))
            .namespace(namespace)
            .frame_prefix(&frame_prefix(namespace))
            .hint("ros2", "tf", "static")
            .hint("ros2", "type", "tf2_msgs/msg/TFMessage");
        let id = ctx.interface.add(ep);
        StaticTfPublisher { endpoint: Some(id), transforms }
    }

    /// Publish the transforms at the current tick.
    pub fn publish(&self, ctx: &mut SimContext) {
        if let Some(id) = self.endpoint {
            let tick = ctx.tick;
            ctx.interface.publish(id, tick, Payload::Transforms(self.transforms.clone()));
        }
    }
}

// ------------------------------------------------------------------------------------------
// placeholders ({frame_id}, {parent_frame})
// ------------------------------------------------------------------------------------------

/// Fill `{name}` placeholders in `s` from `vars` (`(name, value)`; a `None` value means the
/// placeholder has no value). Any placeholder not in `vars` is an error naming it; one whose
/// value is `None` is an error too (the caller's message says how to set it).
pub fn fill_placeholders(s: &str, vars: &[(&str, Option<&str>)]) -> Result<String, String> {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| regex::Regex::new(r"\{([^{}]*)\}").expect("static regex"));
    let mut err = None;
    let out = re.replace_all(s, |c: &regex::Captures| {
        let name = &c[1];
        match vars.iter().find(|(k, _)| *k == name) {
            Some((_, Some(v))) => v.to_string(),
            Some((_, None)) => {
                err.get_or_insert(format!("`{{{name}}}` has no value"));
                String::new()
            }
            None => {
                err.get_or_insert(format!(
                    "unknown placeholder `{{{name}}}`; a device manifest may use only {}",
                    vars.iter().map(|(k, _)| format!("{{{k}}}")).collect::<Vec<_>>().join(" and ")
                ));
                String::new()
            }
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(out.into_owned()),
    }
}

/// Fill placeholders in every string of a YAML value (keys untouched), recursively.
pub fn fill_placeholders_value(
    v: &mut serde_norway::Value,
    vars: &[(&str, Option<&str>)],
) -> Result<(), String> {
    use serde_norway::Value;
    match v {
        Value::String(s) => {
            *s = fill_placeholders(s, vars)?;
        }
        Value::Sequence(seq) => {
            for x in seq {
                fill_placeholders_value(x, vars)?;
            }
        }
        Value::Mapping(m) => {
            for (_, x) in m.iter_mut() {
                fill_placeholders_value(x, vars)?;
            }
        }
        Value::Tagged(t) => fill_placeholders_value(&mut t.value, vars)?,
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pose_defaults_and_yaw() {
        let p: PoseConfig =
            serde_norway::from_str("{position: {x: 1.5, y: 2.0}, orientation: {yaw: 0.785}}")
                .unwrap();
        assert!(p.validate("pose").is_empty());
        let r = p.resolve(0.13);
        assert_eq!(r.pos, [1.5, 2.0, 0.13]);
        assert!((crate::mjcf::yaw_of(&r.quat) - 0.785).abs() < 1e-12);
        let bad: PoseConfig = serde_norway::from_str("{orientation: {yaw: 1, w: 1}}").unwrap();
        assert!(bad.validate("pose")[0].message.contains("not both"));
    }

    #[test]
    fn placeholders() {
        let v = [("frame_id", Some("laser")), ("parent_frame", None)];
        assert_eq!(fill_placeholders("{frame_id}", &v).unwrap(), "laser");
        assert!(fill_placeholders("{parent_frame}", &v).unwrap_err().contains("no value"));
        assert!(fill_placeholders("{other}", &v)
            .unwrap_err()
            .contains("unknown placeholder `{other}`"));
    }

    #[test]
    fn relative_roundtrip() {
        let a = Pose { pos: [1.0, 2.0, 0.5], quat: quat_from_rpy(0.1, 0.2, 0.3) };
        let b = Pose { pos: [0.3, -0.2, 0.1], quat: quat_from_rpy(0.0, 0.0, 1.0) };
        let c = compose(&a, &b);
        let r = relative(&a, &c);
        for i in 0..3 {
            assert!((r.pos[i] - b.pos[i]).abs() < 1e-12);
        }
        assert!((r.quat[0] - b.quat[0]).abs() < 1e-12 && (r.quat[3] - b.quat[3]).abs() < 1e-12);
    }
}
