//! `floorplan`'s `mesh:` source: a building that already exists as geometry (.stl or .obj).
//!
//! The mesh is drawn as one geom, `floorplan_mesh`, with the wall material, and rays hit its
//! triangles exactly (MuJoCo intersects a mesh's faces, not its hull). It does not collide:
//! MuJoCo collides a mesh as its convex hull, and the hull of a building fills its rooms. The
//! colliders are boxes derived from the mesh instead: every upward-facing triangle (normal within
//! 26° of +z) lying wholly above [`TOP_ABOVE_FLOOR`] is a wall top, every such downward-facing one
//! an underside (a lintel's, over a doorway); the floor is covered with [`COLLIDER_CELL`] square
//! cells, a cell whose centre lies under a wall top is solid up to that top — from the floor, or
//! from the underside below the top when there is one, so a doorway stays open under its lintel —
//! and runs of cells with the same span merge into boxes `floorplan_collider_<k>` (invisible,
//! group 3). So every wall face is within one cell of the drawn one; a wall thinner than a cell
//! may get none.
//! A mesh with no wall tops (open-topped walls, a floor only) is refused; a roofed mesh reads its
//! roof as one solid block, so give the walls without the roof.

use std::path::{Path, PathBuf};

use mujoco_rs::prelude::*;
use nalgebra::Matrix3;

use crate::math::{arr3, vec3};

/// Collider cell edge (m).
pub const COLLIDER_CELL: f64 = 0.025;
/// A wall top lies wholly above this height (m); faces below it are the floor.
pub const TOP_ABOVE_FLOOR: f64 = 0.05;
/// The least +z component of an upward face's unit normal (cos 26°).
pub const MIN_UP_NORMAL: f64 = 0.9;

/// Resolve a `mesh:` path (absolute, or relative to the world file's folder).
pub fn resolve(reference: &str, base_dir: &Path) -> Result<PathBuf, String> {
    let p = if Path::new(reference).is_absolute() {
        PathBuf::from(reference)
    } else {
        base_dir.join(reference)
    };
    let ext = p.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    if !matches!(ext.as_deref(), Some("stl" | "obj")) {
        return Err(format!(
            "`{reference}`: a floorplan mesh is an .stl or .obj file (what MuJoCo loads as a mesh)"
        ));
    }
    if let Some(kind) = crate::input_file::not_a_file(&p) {
        return Err(format!("`{reference}`: `{}` {kind}: name an .stl or .obj file", p.display()));
    }
    if !p.is_file() {
        return Err(format!("`{reference}`: no file `{}`", p.display()));
    }
    crate::input_file::check_stl(&p, &format!("`{reference}`: the floorplan mesh"))?;
    Ok(p)
}

/// Add the mesh asset `floorplan_mesh` (scaled) to `spec`.
pub fn add_asset(spec: &mut MjSpec, path: &Path, scale: [f64; 3]) {
    let mesh = spec.add_mesh().with_name("floorplan_mesh");
    mesh.set_file(&path.display().to_string());
    *mesh.scale_mut() = scale;
}

/// An axis-aligned collider box: centre and half-extents (m, world).
#[derive(Debug, Clone, PartialEq)]
pub struct ColliderBox {
    /// Centre (m).
    pub pos: [f64; 3],
    /// Half-extents (m).
    pub half: [f64; 3],
}

/// The mesh alone, scaled and placed, compiled.
fn compile_alone(path: &Path, scale: [f64; 3], pos: [f64; 3]) -> Result<MjModel, String> {
    let mut spec = MjSpec::new();
    add_asset(&mut spec, path, scale);
    spec.world_body_mut()
        .add_geom()
        .with_type(MjtGeomBase::mjGEOM_MESH)
        .with_meshname("floorplan_mesh")
        .with_pos(pos);
    spec.compile().map_err(|e| format!("`{}` does not load as a mesh: {e}", path.display()))
}

/// Metres one texture-coordinate unit spans along u and along v on the scaled mesh: the mean
/// over its triangles weighted by their area (each triangle's |∂p/∂u|, |∂p/∂v|); `None` for a
/// mesh without texture coordinates (an STL, an OBJ without `vt`). A wall texture's tile is then
/// `physical_size` metres on a UV-mapped mesh too (module doc of `floorplan`).
pub fn uv_metres(path: &Path, scale: [f64; 3]) -> Result<Option<[f64; 2]>, String> {
    let m = compile_alone(path, scale, [0.0; 3])?;
    let tadr = m.mesh_texcoordadr()[0];
    if tadr < 0 {
        return Ok(None);
    }
    let (vadr, fadr, fnum) =
        (m.mesh_vertadr()[0] as usize, m.mesh_faceadr()[0] as usize, m.mesh_facenum()[0] as usize);
    let (vert, tex) = (m.mesh_vert(), m.mesh_texcoord());
    let (mut sum, mut area) = ([0.0f64; 2], 0.0f64);
    for k in fadr..fadr + fnum {
        let p = m.mesh_face()[k].map(|i| vec3(&vert[vadr + i as usize].map(f64::from)));
        let t = m.mesh_facetexcoord()[k].map(|i| tex[tadr as usize + i as usize].map(f64::from));
        let e = [p[1] - p[0], p[2] - p[0]];
        let d = [[t[1][0] - t[0][0], t[1][1] - t[0][1]], [t[2][0] - t[0][0], t[2][1] - t[0][1]]];
        let det = d[0][0] * d[1][1] - d[1][0] * d[0][1];
        let a = e[0].cross(&e[1]).norm() / 2.0;
        if det.abs() < 1e-12 || a <= 0.0 {
            continue;
        }
        let dpdu = (e[0] * d[1][1] - e[1] * d[0][1]) / det;
        let dpdv = (e[1] * d[0][0] - e[0] * d[1][0]) / det;
        sum[0] += a * dpdu.norm();
        sum[1] += a * dpdv.norm();
        area += a;
    }
    Ok((area > 0.0).then(|| [sum[0] / area, sum[1] / area]))
}

/// The placed mesh's triangles in the world frame (the mesh alone, compiled once).
fn world_triangles(
    path: &Path,
    scale: [f64; 3],
    pos: [f64; 3],
) -> Result<Vec<[[f64; 3]; 3]>, String> {
    let model = compile_alone(path, scale, pos)?;
    let mut data = MjData::new(Box::new(model));
    data.kinematics();
    let m = data.model();
    let (p, r) = (data.geom_xpos()[0], data.geom_xmat()[0]);
    let (vadr, fadr, fnum) =
        (m.mesh_vertadr()[0] as usize, m.mesh_faceadr()[0] as usize, m.mesh_facenum()[0] as usize);
    let (vert, face) = (m.mesh_vert(), m.mesh_face());
    let (p, r) = (vec3(&p), Matrix3::from_row_slice(&r));
    let world = |v: [f32; 3]| arr3(&(p + r * vec3(&[v[0] as f64, v[1] as f64, v[2] as f64])));
    Ok(face[fadr..fadr + fnum].iter().map(|f| f.map(|i| world(vert[vadr + i as usize]))).collect())
}

/// The collider boxes of the mesh at `path`, scaled by `scale` and placed at `pos` (module doc).
pub fn colliders(path: &Path, scale: [f64; 3], pos: [f64; 3]) -> Result<Vec<ColliderBox>, String> {
    let tris = world_triangles(path, scale, pos)?;
    let tops: Vec<&[[f64; 3]; 3]> = tris.iter().filter(|t| facing(t) == 1).collect();
    let undersides: Vec<&[[f64; 3]; 3]> = tris.iter().filter(|t| facing(t) == -1).collect();
    if tops.is_empty() {
        return Err(format!(
            "`{}` has no wall tops (upward faces wholly above {TOP_ABOVE_FLOOR} m), so no colliders can be derived from it: give closed walls (an extruded plan), or the walls as `lines:`",
            path.display()
        ));
    }
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for t in &tops {
        for p in t.iter() {
            lo = [lo[0].min(p[0]), lo[1].min(p[1])];
            hi = [hi[0].max(p[0]), hi[1].max(p[1])];
        }
    }
    let c = COLLIDER_CELL;
    let nx = ((hi[0] - lo[0]) / c).ceil() as usize + 1;
    let ny = ((hi[1] - lo[1]) / c).ceil() as usize + 1;
    if nx.saturating_mul(ny) > 64_000_000 {
        return Err(format!(
            "`{}` spans {:.0} x {:.0} m: more than 64 million {c} m collider cells; scale it to metres (`mesh_scale`)",
            path.display(),
            hi[0] - lo[0],
            hi[1] - lo[1]
        ));
    }
    // per cell: the highest wall top over it (0 = free) and the highest underside
    let mut top = vec![0.0f64; nx * ny];
    let mut under = vec![0.0f64; nx * ny];
    for (t, up) in tops.iter().map(|t| (t, true)).chain(undersides.iter().map(|t| (t, false))) {
        let xs = t.iter().map(|p| p[0]);
        let ys = t.iter().map(|p| p[1]);
        let (x0, x1) =
            (xs.clone().fold(f64::INFINITY, f64::min), xs.fold(f64::NEG_INFINITY, f64::max));
        let (y0, y1) =
            (ys.clone().fold(f64::INFINITY, f64::min), ys.fold(f64::NEG_INFINITY, f64::max));
        let z = if up {
            t.iter().map(|p| p[2]).fold(f64::NEG_INFINITY, f64::max)
        } else {
            t.iter().map(|p| p[2]).fold(f64::INFINITY, f64::min)
        };
        // to the micrometre: MuJoCo's f32 vertices put one face's corners a few 1e-8 m apart,
        // which would split a run of cells into boxes differing by that much
        let z = (z * 1e6).round() / 1e6;
        // the cells whose centre lies within the triangle's bounding box
        let first = |v0: f64, o: f64| ((v0 - o) / c - 0.5).ceil().max(0.0) as usize;
        let past = |v1: f64, o: f64| (((v1 - o) / c - 0.5).floor().max(-1.0) + 1.0) as usize;
        for j in first(y0, lo[1])..past(y1, lo[1]).min(ny) {
            for i in first(x0, lo[0])..past(x1, lo[0]).min(nx) {
                let q = [lo[0] + (i as f64 + 0.5) * c, lo[1] + (j as f64 + 0.5) * c];
                if inside(q, t) {
                    let k = j * nx + i;
                    let g = if up { &mut top } else { &mut under };
                    g[k] = g[k].max(z);
                }
            }
        }
    }
    // each cell's solid span [bottom, top]: from the underside below its top, else the floor
    let span: Vec<(f64, f64)> = top
        .iter()
        .zip(&under)
        .map(|(&t, &u)| if t > 0.0 && u < t { (u, t) } else { (0.0, t) })
        .collect();
    // runs of equal spans along x per row, then equal runs of consecutive rows merged along y
    let mut open: Vec<(usize, usize, (f64, f64), usize)> = Vec::new(); // (i0, i1, span, j0)
    let mut out = Vec::new();
    let emit = |out: &mut Vec<ColliderBox>, run: (usize, usize, (f64, f64), usize), j1: usize| {
        let (i0, i1, (z0, z1), j0) = run;
        let (x0, x1) = (lo[0] + i0 as f64 * c, lo[0] + i1 as f64 * c);
        let (y0, y1) = (lo[1] + j0 as f64 * c, lo[1] + j1 as f64 * c);
        out.push(ColliderBox {
            pos: [(x0 + x1) / 2.0, (y0 + y1) / 2.0, (z0 + z1) / 2.0],
            half: [(x1 - x0) / 2.0, (y1 - y0) / 2.0, (z1 - z0) / 2.0],
        });
    };
    for j in 0..=ny {
        let mut runs = Vec::new();
        if j < ny {
            let mut i = 0;
            while i < nx {
                let z = span[j * nx + i];
                if z.1 > 0.0 {
                    let s = i;
                    while i < nx && span[j * nx + i] == z {
                        i += 1;
                    }
                    runs.push((s, i, z));
                } else {
                    i += 1;
                }
            }
        }
        let mut next = Vec::new();
        for o in open.drain(..) {
            if let Some(p) = runs.iter().position(|r| r.0 == o.0 && r.1 == o.1 && r.2 == o.2) {
                runs.remove(p);
                next.push(o);
            } else {
                emit(&mut out, o, j);
            }
        }
        next.extend(runs.into_iter().map(|(a, b, z)| (a, b, z, j)));
        open = next;
    }
    if out.is_empty() {
        return Err(format!(
            "`{}` gives no collider: every wall is thinner than the {c} m collider cell, so nothing would stop a robot: model the walls at least {c} m thick, or give them as `lines:`",
            path.display()
        ));
    }
    Ok(out)
}

/// +1 for a wall top (an upward face wholly above [`TOP_ABOVE_FLOOR`]), -1 for an underside (such
/// a downward face), 0 for any other face.
fn facing(t: &[[f64; 3]; 3]) -> i32 {
    let (a, b, c) = (t[0], t[1], t[2]);
    let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
    let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
    let n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    if len == 0.0 || !t.iter().all(|p| p[2] > TOP_ABOVE_FLOOR) {
        0
    } else if n[2] / len >= MIN_UP_NORMAL {
        1
    } else if n[2] / len <= -MIN_UP_NORMAL {
        -1
    } else {
        0
    }
}

/// Whether point `q` lies inside triangle `t` (in x, y; edges count).
fn inside(q: [f64; 2], t: &[[f64; 3]; 3]) -> bool {
    let s =
        |a: [f64; 3], b: [f64; 3]| (b[0] - a[0]) * (q[1] - a[1]) - (b[1] - a[1]) * (q[0] - a[0]);
    let (d0, d1, d2) = (s(t[0], t[1]), s(t[1], t[2]), s(t[2], t[0]));
    let neg = d0 < 0.0 || d1 < 0.0 || d2 < 0.0;
    let pos = d0 > 0.0 || d1 > 0.0 || d2 > 0.0;
    !(neg && pos)
}
