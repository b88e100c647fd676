//! A mesh geom as URDF geometry: the mesh's own file, its scale, and the pose of the file's frame.
//!
//! MuJoCo re-centres a mesh when it compiles it: the vertices are moved to the mesh's inertial
//! frame (`mesh_pos`, `mesh_quat`: "translation/rotation applied to asset vertices") and the geom
//! frame moves the other way, so the compiled geom frame is not the frame of the file. A URDF
//! `<mesh>` places the file's own vertices (times `scale`), so its origin is the geom frame
//! composed with the inverse of that re-centring: `T_file = T_geom · T_mesh⁻¹`.
//!
//! The file is named where it lies: `package://roqsim/models/<path>` for a mesh of a bundled model
//! (under one of this package's installed or source `models/` roots, which the package installs to
//! `share/roqsim/models`), else a `file://` URI of its absolute path. A mesh MuJoCo did not read
//! from a file (vertices written in the MJCF), a file that no longer exists, or a format URDF tools
//! do not read is not written (the reason goes into an XML comment).

use std::path::{Path, PathBuf};

use mujoco_rs::prelude::*;

use crate::context::entities::Pose;

/// A mesh geom's URDF geometry.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshGeometry {
    /// The `<mesh filename=... scale=.../>` element.
    pub element: String,
    /// The pose of the file's frame in the geom's body frame.
    pub frame: Pose,
    /// The mesh file on disk.
    pub file: PathBuf,
}

/// The file MuJoCo read mesh `mesh` from (`None` for a mesh without one).
pub fn mesh_file(model: &MjModel, mesh: usize) -> Option<PathBuf> {
    let m = model.ffi();
    if mesh >= m.nmesh as usize || m.mesh_pathadr.is_null() || m.paths.is_null() {
        return None;
    }
    // SAFETY: `mesh < nmesh`, so `mesh_pathadr[mesh]` is in bounds; a non-negative address
    // points into `paths` (npaths chars, each path 0-terminated), as mjModel documents.
    unsafe {
        let adr = *m.mesh_pathadr.add(mesh);
        if adr < 0 || i64::from(adr) >= m.npaths {
            return None;
        }
        let s = std::ffi::CStr::from_ptr(m.paths.add(adr as usize));
        let s = s.to_str().ok()?;
        (!s.is_empty()).then(|| PathBuf::from(s))
    }
}

/// `(scale, pos, quat)` MuJoCo applied to mesh `mesh`'s asset vertices.
fn recentring(model: &MjModel, mesh: usize) -> ([f64; 3], [f64; 3], [f64; 4]) {
    let m = model.ffi();
    // SAFETY: `mesh < nmesh` (checked by the caller through `geom_dataid`); the arrays are
    // nmesh x 3, nmesh x 3 and nmesh x 4 doubles.
    unsafe {
        let s = std::slice::from_raw_parts(m.mesh_scale.add(3 * mesh), 3);
        let p = std::slice::from_raw_parts(m.mesh_pos.add(3 * mesh), 3);
        let q = std::slice::from_raw_parts(m.mesh_quat.add(4 * mesh), 4);
        ([s[0], s[1], s[2]], [p[0], p[1], p[2]], [q[0], q[1], q[2], q[3]])
    }
}

/// The mesh id of geom `g`, when it is a mesh geom.
pub fn geom_mesh(model: &MjModel, g: usize) -> Option<usize> {
    if model.geom_type()[g] != MjtGeomBase::mjGEOM_MESH {
        return None;
    }
    let m = model.ffi();
    // SAFETY: `g < ngeom` (the caller iterates geoms); geom_dataid is ngeom ints.
    let id = unsafe { *m.geom_dataid.add(g) };
    (id >= 0 && (id as usize) < m.nmesh as usize).then_some(id as usize)
}

/// This package's bundled model roots, resolved: the roots models are found under
/// ([`crate::world::models::model_roots`]: `$ROQSIM_MODEL_PATH`, `share/roqsim/models` next to
/// the running binary and in every `AMENT_PREFIX_PATH` prefix, the source tree's `models/`).
pub fn bundled_roots() -> Vec<PathBuf> {
    crate::world::models::model_roots().into_iter().filter_map(|r| r.canonicalize().ok()).collect()
}

/// The URI a URDF names `file` by: `package://roqsim/models/<rel>` under a bundled root, else
/// `file://<absolute path>`.
pub fn mesh_uri(file: &Path, roots: &[PathBuf]) -> String {
    let abs = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
    for r in roots {
        if let Ok(rel) = abs.strip_prefix(r) {
            return format!("package://roqsim/models/{}", rel.display());
        }
    }
    format!("file://{}", abs.display())
}

/// The URDF geometry of mesh geom `g`, or why it is not written.
pub fn mesh_geometry(model: &MjModel, g: usize, roots: &[PathBuf]) -> Result<MeshGeometry, String> {
    let mesh = geom_mesh(model, g).ok_or_else(|| "not a mesh geom".to_string())?;
    let mname = model.id_to_name(MjtObjBase::mjOBJ_MESH, mesh).unwrap_or("").to_string();
    let file =
        mesh_file(model, mesh).ok_or_else(|| format!("mesh `{mname}` was not read from a file"))?;
    if !file.is_file() {
        return Err(format!("mesh `{mname}`: its file {} does not exist", file.display()));
    }
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    if !matches!(ext.as_str(), "stl" | "obj") {
        return Err(format!(
            "mesh `{mname}`: URDF tools do not read `.{ext}` files ({})",
            file.display()
        ));
    }
    let (scale, mpos, mquat) = recentring(model, mesh);
    // The geom's frame composed with the inverse of the mesh's recentring: T_geom · T_mesh⁻¹.
    let mesh_t = Pose { pos: mpos, quat: mquat }.iso();
    let geom = Pose { pos: model.geom_pos()[g], quat: model.geom_quat()[g] };
    let frame = Pose::from_iso(&(geom.iso() * mesh_t.inverse()));
    let uri = mesh_uri(&file, roots);
    let element = format!(
        "<mesh filename=\"{}\" scale=\"{} {} {}\"/>",
        uri.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;"),
        scale[0],
        scale[1],
        scale[2]
    );
    Ok(MeshGeometry { element, frame, file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_under_a_bundled_root_is_a_package_uri_else_a_file_uri() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("share/roqsim/models");
        std::fs::create_dir_all(root.join("arm/meshes")).unwrap();
        let inside = root.join("arm/meshes/link.stl");
        let outside = dir.path().join("other.stl");
        std::fs::write(&inside, b"x").unwrap();
        std::fs::write(&outside, b"x").unwrap();
        let roots = vec![root.canonicalize().unwrap()];
        assert_eq!(mesh_uri(&inside, &roots), "package://roqsim/models/arm/meshes/link.stl");
        assert_eq!(
            mesh_uri(&outside, &roots),
            format!("file://{}", outside.canonicalize().unwrap().display())
        );
    }
}
