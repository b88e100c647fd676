//! Loading a model for attaching: resolve it, read its manifest, absolutize its mesh/texture file
//! refs from the model's own dirs first, find its root body; and finding bodies and sites in a spec.

use std::path::{Path, PathBuf};

use mujoco_rs::prelude::*;
use mujoco_rs::wrappers::mj_editing::MjsBody;

use crate::world::models::{load_manifest, resolve_model, Manifest, ModelAsset};

use super::Pose;

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
    /// The URDF it was compiled from (a `.urdf`, `package://` or `.xacro` model), else `None`.
    pub urdf: Option<crate::spawn::urdf::UrdfSource>,
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
    let mut asset = resolve_model(reference, base_dir)?;
    let manifest = load_manifest(&asset)?;
    // Borrowed providers come after the model's own declared meshdir (which `apply_assets`
    // searches first) and before the model file's folder.
    asset.asset_dirs.splice(0..0, manifest.borrowed_dirs.iter().cloned());
    // MuJoCo opens the includes, meshes and textures itself: a FIFO among them would hang it.
    crate::introspect::inputs::check_mjcf_files(&asset.path, &asset.asset_dirs)
        .map_err(|m| format!("model `{reference}`: {m}"))?;
    let (mut spec, urdf) = if crate::spawn::urdf::is_urdf(&asset.path) {
        // Mesh paths are made absolute in the text itself (crate::spawn::urdf).
        let src = crate::spawn::urdf::prepare(&asset.path)?;
        (crate::spawn::urdf::spec_of(&src)?, Some(src))
    } else {
        (crate::spawn::mjcf::child_spec_from_file(&asset.path)?, None)
    };
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
    let roots = crate::spawn::import::top_level_bodies(&spec);
    let rb = spec.body(&root).expect("root body exists");
    let root_pose = Pose { pos: *rb.pos(), quat: crate::spawn::import::resolved_quat(&spec, rb) };
    Ok(LoadedModel { asset, manifest, spec, root, roots, root_pose, urdf })
}

/// Move every top-level body of `spec` by `offset` (`offset ∘ pose as written`): what attaching
/// the model through a frame at `offset` does, for attaches that have no frame (a site attach).
pub fn compose_top_level(spec: &mut MjSpec, offset: &Pose) {
    let roots = crate::spawn::import::top_level_bodies(spec);
    for r in roots {
        let b = spec.body(&r).expect("listed body exists");
        let written = Pose { pos: *b.pos(), quat: crate::spawn::import::resolved_quat(spec, b) };
        let p = crate::math::compose(offset, &written);
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
