//! The one raycast seam: every ray sensor casts through [`RayBatch::cast`], which wraps
//! `mj_multiRay`.
//!
//! - The visibility mask is the default: [`VISIBLE_GROUPS`] excludes [`ABSENT_GEOM_GROUP`], so an
//!   entity made absent is never a return. Pass an explicit mask to see everything.
//! - Single-threaded per MjData on purpose: `mj_multiRay` allocates from mjData's stack, and
//!   concurrent casts on one mjData corrupt that allocator. Callers run on
//!   the physics thread.
//! - Planes are exact at any cutoff: `mj_multiRay` culls a geom whose centre is farther than
//!   `cutoff` plus its bounding radius, and a plane's radius is 0, so a short-range sensor more
//!   than `cutoff` from a floor plane's origin would miss the floor right below it (measured:
//!   a ray straight down from 0.02 m above a plane, 0.16 m from its origin, returns nothing with
//!   cutoff 0.15). [`RayBatch::cast`] therefore intersects every eligible plane itself
//!   (`mju_rayGeom`) and keeps the nearer hit.
//! - Culled, bitwise-identical casting: `mj_multiRay` answers each ray with the nearest hit over
//!   every eligible geom within `cutoff` plus its bounding radius, testing many geoms per ray
//!   (two `atan2` per ray and eight corners per geom for its angular cull). [`RayBatch::cast`]
//!   computes the same answer itself: the same eligibility rules (body, invisible rgba or
//!   material, static, group) and the same cutoff rule, then per ray only the geoms whose
//!   bounding sphere the ray passes through (a conservative test: a hit lies on the geom, inside
//!   its sphere; in a planar scan, for a capsule or cylinder, through its section by the scan
//!   plane, a disc about its axis), each intersected by the very function `mj_multiRay` calls (`mju_rayGeom`,
//!   `mj_rayMesh`, `mj_rayHfield`), nearest first-in-geom-order winning ties as there. Two
//!   cheaper exact tests keep most rays from calling those functions: the candidates are visited
//!   nearest bounding box first, and each ray first meets a geom's bounding box (a slab test in
//!   the box's frame, the box grown by 1e-7 of the scale): a ray that misses it, or enters it
//!   beyond the best hit so far, cannot change the answer (in a room, a ray along one wall no
//!   longer intersects the other three). `mj_multiRay`'s angular cull compares cosines instead
//!   of `atan2` results where a margin of 1e-9 decides it, the exact `atan2` test otherwise. A model
//!   with SDF geoms (whose ray function MuJoCo does not export) uses `mj_multiRay` itself.
//!   [`RayBatch::cast_reference`] is plain `mj_multiRay`, for the tests that hold the two equal.

use mujoco_rs::mujoco_c::{mjNGROUP, mj_multiRay, mj_rayHfield, mj_rayMesh, mjtGeom, mju_rayGeom};

use mujoco_rs::prelude::MjModel;
use std::f64::consts::PI;

use super::ray_bins::ScanBins;
use super::ray_culls::{
    bounding_angles, box_distance, ray_sphere_hits, scan_plane, scan_section, slab_frame, AngleCull,
};
use crate::context::Data;

/// Geom group that absent entities' geoms move to (MuJoCo has groups 0..=5).
pub const ABSENT_GEOM_GROUP: usize = 5;

/// The default mask: every geom group except [`ABSENT_GEOM_GROUP`].
pub const VISIBLE_GROUPS: [u8; mjNGROUP as usize] = {
    let mut g = [1u8; mjNGROUP as usize];
    g[ABSENT_GEOM_GROUP] = 0;
    g
};

/// Preallocated ray directions and results for one sensor. The buffers are private and keep the
/// lengths [`RayBatch::new`] gave them (3 direction numbers, one distance and one geom id per
/// ray), so `mj_multiRay` can never be handed a buffer shorter than the ray count.
#[derive(Debug, Clone, Default)]
pub struct RayBatch {
    dirs: Vec<f64>,
    dist: Vec<f64>,
    geom: Vec<i32>,
    /// Per-scan scratch: the candidate geoms (id, centre minus origin, squared radius, |w|²).
    cand: Vec<Candidate>,
    /// Per-scan scratch: a planar scan's angular bins of `cand` (boxed: a batch stays small
    /// inside the plugins that hold one).
    bins: Box<ScanBins>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Candidate {
    id: usize,
    kind: i32,
    /// The disc or sphere every ray that meets the geom passes through: its centre minus the
    /// origin, its squared radius, |w|² (the bounding sphere, or for a capsule or cylinder in a
    /// planar scan its section by the scan plane, see `scan_section`).
    w: [f64; 3],
    r2: f64,
    w2: f64,
    /// `mj_multiRay`'s culls, replicated: the body's bounding sphere (centre, squared radius)
    /// and the geom's bounding angles (azimuth min, elevation min, azimuth max, elevation max);
    /// `None` for a body without a bounding volume (no cull there either).
    body_sphere: Option<([f64; 3], f64)>,
    ba: [f64; 4],
    /// `ba` computed yet (lazily: only for a geom some ray comes near).
    ba_done: bool,
    /// Distance from the origin to the geom's bounding box (0 for a plane): no hit is nearer.
    near: f64,
    /// The geom's orientation (row-major `geom_xmat`), the origin in its bounding box's frame
    /// (relative to the box's centre) and the box's half sizes grown by a margin far above
    /// rounding: the per-ray slab test (a ray that misses the grown box, or enters it beyond the
    /// best hit so far, cannot change the answer).
    mat: [f64; 9],
    lp: [f64; 3],
    half: [f64; 3],
    /// The bounding angles as cosines (see [`AngleCull`]), once `ba` is computed.
    fast: AngleCull,
}

/// `mj_multiRay`'s angular cull of candidate `c` for the ray along `v` (true: culled), for a
/// body with a bounding volume only, as there. The geom's bounding angles are computed once per
/// cast, the ray's angles once per ray (`angles`), both lazily.
fn angle_culled(
    c: &mut Candidate,
    m: &MjModel,
    xpos: &[[f64; 3]],
    xmat: &[[f64; 9]],
    origin: &[f64; 3],
    v: &[f64; 3],
    angles: &mut Option<(f64, f64)>,
) -> bool {
    if c.body_sphere.is_none() {
        return false;
    }
    if !c.ba_done {
        let g = c.id;
        c.ba = bounding_angles(&m.geom_aabb()[g], &xpos[g], &xmat[g], origin);
        c.fast = AngleCull::new(&c.ba);
        c.ba_done = true;
    }
    if let Some(culled) = c.fast.decide(&c.ba, v, v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) {
        return culled;
    }
    let (az, el) = *angles
        .get_or_insert_with(|| (v[1].atan2(v[0]), (v[0] * v[0] + v[1] * v[1]).sqrt().atan2(v[2])));
    if el < c.ba[1] || el > c.ba[3] {
        return true;
    }
    let centre_az = (c.ba[0] + c.ba[2]) * 0.5;
    let half = (c.ba[2] - c.ba[0]) * 0.5;
    let mut diff = az - centre_az;
    if diff > PI {
        diff -= 2.0 * PI;
    } else if diff < -PI {
        diff += 2.0 * PI;
    }
    diff.abs() > half
}

/// A capsule's or cylinder's radius (`geom_size[0]`).
fn size_of(m: &MjModel, g: usize) -> f64 {
    m.geom_size()[g][0]
}

/// True when the ray along `v` (length `vlen`) cannot give candidate `c` a hit that beats `best`
/// (-1: none yet): it misses the grown bounding box, or enters it beyond `best`. Conservative:
/// every hit lies inside the geom's bounding box; the box is grown by 1e-7 of the scale; an axis
/// the ray is nearly parallel to (|component| < 1e-6 of its length) constrains nothing, so each
/// slab's entry and exit move outward by at least the growth, far more than their rounding.
fn slab_skips(c: &Candidate, v: &[f64; 3], vlen: f64, best: f64) -> bool {
    let m = &c.mat;
    let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
    for j in 0..3 {
        let d = m[j] * v[0] + m[3 + j] * v[1] + m[6 + j] * v[2];
        if d.abs() < 1e-6 * vlen {
            continue;
        }
        let inv = 1.0 / d;
        let (t1, t2) = ((-c.half[j] - c.lp[j]) * inv, (c.half[j] - c.lp[j]) * inv);
        let (a, b) = if t1 < t2 { (t1, t2) } else { (t2, t1) };
        lo = lo.max(a);
        hi = hi.min(b);
    }
    hi < 0.0 || lo > hi || (best >= 0.0 && lo > best * (1.0 + 1e-9) + 1e-9)
}

/// One culled cast's inputs: the model and data, the cast's arguments and what follows from the
/// ray directions (the scan plane, and whether the capsule and cylinder sections apply).
struct Query<'a> {
    m: &'a MjModel,
    data: &'a Data,
    origin: [f64; 3],
    /// The excluded body's id, or -1.
    exclude: i32,
    mask: &'a [u8; mjNGROUP as usize],
    include_static: bool,
    cutoff: f64,
    within: bool,
    /// `cutoff` grown by a margin far above rounding.
    reach: f64,
    plane_n: Option<[f64; 3]>,
    sections: bool,
}

const PLANE: i32 = mjtGeom::mjGEOM_PLANE as i32;
const MESH: i32 = mjtGeom::mjGEOM_MESH as i32;
const HFIELD: i32 = mjtGeom::mjGEOM_HFIELD as i32;
const CAPSULE: i32 = mjtGeom::mjGEOM_CAPSULE as i32;
const CYLINDER: i32 = mjtGeom::mjGEOM_CYLINDER as i32;

impl Query<'_> {
    /// Geom `g` as a candidate, or `None` when no ray of this cast can return it.
    fn candidate(&self, g: usize) -> Option<Candidate> {
        let (m, data, origin) = (self.m, self.data, self.origin);
        let (xpos, xmat) = (data.geom_xpos(), data.geom_xmat());
        let (rbound, bodyid, weld) = (m.geom_rbound(), m.geom_bodyid(), m.body_weldid());
        let (matid, rgba, mat_rgba, group) =
            (m.geom_matid(), m.geom_rgba(), m.mat_rgba(), m.geom_group());
        let kind = m.geom_type()[g] as i32;
        // Only hits within cutoff count: every point of a geom lies inside its bounding
        // sphere, so one whose sphere lies beyond the cutoff cannot give one (the cheapest
        // test first: a short-range sensor drops almost every geom here).
        let c = xpos[g];
        let w = [c[0] - origin[0], c[1] - origin[1], c[2] - origin[2]];
        let w2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
        if self.within && kind != PLANE {
            let lim = self.reach + rbound[g] * (1.0 + 1e-9) + 1e-9;
            if w2 > lim * lim {
                return None;
            }
        }
        // mj_multiRay's eligibility, rule for rule.
        let b = bodyid[g];
        if b == self.exclude
            || (matid[g] < 0 && rgba[g][3] == 0.0)
            || (matid[g] >= 0 && mat_rgba[matid[g] as usize][3] == 0.0)
            || (!self.include_static && weld[b as usize] == 0)
            || self.mask[group[g].clamp(0, mjNGROUP as i32 - 1) as usize] == 0
        {
            return None;
        }
        // Its cutoff rule (the centre farther than cutoff plus the bounding radius) and its
        // bounding angles, both only for a body with a bounding volume, as there.
        let bvh = m.body_bvhadr()[b as usize];
        let (mut body_sphere, ba) = (None, [0.0; 4]);
        if bvh != -1 {
            if w2.sqrt() > self.cutoff + rbound[g] {
                return None;
            }
            let bb = &m.bvh_aabb()[bvh as usize];
            let xi = data.xipos()[b as usize];
            let centre = [bb[0] + xi[0], bb[1] + xi[1], bb[2] + xi[2]];
            body_sphere = Some((centre, bb[3] * bb[3] + bb[4] * bb[4] + bb[5] * bb[5]));
        }
        // A plane is unbounded (radius 0): never culled per ray. Others: the sphere grown by
        // a relative and an absolute margin, so rounding can only keep a geom, never drop it.
        let r = rbound[g] * (1.0 + 1e-9) + 1e-9;
        let r2 = if kind == PLANE { f64::INFINITY } else { r * r };
        // A 2D scan: a sphere that does not meet the scan plane meets none of its rays.
        if let Some(n) = self.plane_n {
            if kind != PLANE
                && (n[0] * w[0] + n[1] * w[1] + n[2] * w[2]).abs() > r * (1.0 + 1e-9) + 1e-9
            {
                return None;
            }
        }
        // Only hits within cutoff count: a geom whose bounding box (in its own frame, every
        // point of the geom inside it) lies farther than cutoff from the origin cannot give
        // one. The margin keeps rounding from ever dropping a hit at the cutoff.
        let near = if kind == PLANE {
            0.0
        } else {
            box_distance(&m.geom_aabb()[g], &c, &xmat[g], &origin)
        };
        if self.within && near > self.reach {
            return None;
        }
        let (lp, half) = if kind == PLANE {
            ([0.0; 3], [0.0; 3])
        } else {
            slab_frame(&m.geom_aabb()[g], &c, &xmat[g], &origin)
        };
        // A capsule or cylinder in a planar scan: the rays meet it only within its section
        // by the scan plane (`scan_section`), when that is tighter than its sphere.
        let (mut w, mut r2, mut w2) = (w, r2, w2);
        if let Some(n) =
            self.plane_n.filter(|_| self.sections && (kind == CAPSULE || kind == CYLINDER))
        {
            let x = &xmat[g];
            let reach_g = w2.sqrt() + r;
            if let Some((p, rs)) = scan_section(&n, &w, &[x[2], x[5], x[8]], size_of(m, g), reach_g)
            {
                if rs < r {
                    (w, r2, w2) = (p, rs * rs, p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
                }
            }
        }
        Some(Candidate {
            id: g,
            kind,
            w,
            r2,
            w2,
            body_sphere,
            ba,
            ba_done: false,
            near,
            mat: xmat[g],
            lp,
            half,
            fast: AngleCull::default(),
        })
    }

    /// The ray along `v` (|v|² = `vv` > 0): its nearest hit over the candidates `list` names (in
    /// that order), as (distance, geom id), or (-1, -1).
    fn nearest_hit(
        &self,
        cand: &mut [Candidate],
        list: &[u32],
        v: &[f64; 3],
        vv: f64,
    ) -> (f64, i32) {
        let (m, data, origin) = (self.m, self.data, self.origin);
        let (xpos, xmat, size) = (data.geom_xpos(), data.geom_xmat(), m.geom_size());
        let (mp, dp) = (m.ffi() as *const _, data.ffi() as *const _);
        let (mut dist, mut geom) = (-1.0, -1);
        let mut angles: Option<(f64, f64)> = None;
        let vlen = vv.sqrt();
        for &k in list {
            let c = &mut cand[k as usize];
            // Nearest box first: once a hit is nearer than every remaining geom's box can be
            // (with a margin far above rounding), none of them can change the answer.
            if dist >= 0.0 && c.near > dist * vlen * (1.0 + 1e-9) + 1e-9 {
                break;
            }
            if c.w2 > c.r2 {
                // The ray must come within r of the centre, ahead of the origin.
                let t = v[0] * c.w[0] + v[1] * c.w[1] + v[2] * c.w[2];
                if t < 0.0 || c.w2 - t * t / vv > c.r2 {
                    continue;
                }
            }
            // The ray must meet the geom's (grown) bounding box, and enter it no farther
            // than the best hit so far.
            if c.kind != PLANE && slab_skips(c, v, vlen, dist) {
                continue;
            }
            // mj_multiRay's own culls decide what it returns (they can drop a geom the ray
            // does hit, so they are part of the answer, not only of its speed). Each is a
            // pure test, so their order is free: the cheap body sphere first; the angular
            // cull (atan2s) before a costly mesh or height-field intersection, but after a
            // primitive's, and then only for a hit that would become the ray's answer.
            if let Some((centre, ssz)) = c.body_sphere {
                if !ray_sphere_hits(&centre, ssz, &origin, v) {
                    continue;
                }
            }
            let costly = c.kind == MESH || c.kind == HFIELD;
            if costly && angle_culled(c, m, xpos, xmat, &origin, v, &mut angles) {
                continue;
            }
            let g = c.id;
            // SAFETY: plain arrays of the declared sizes; model and data are live and only
            // read (the mesh and hfield functions read the model and the geom poses).
            let d = unsafe {
                if c.kind == MESH {
                    mj_rayMesh(mp, dp, g as i32, &origin, v, std::ptr::null_mut())
                } else if c.kind == HFIELD {
                    mj_rayHfield(mp, dp, g as i32, &origin, v, std::ptr::null_mut())
                } else {
                    mju_rayGeom(
                        &xpos[g],
                        &xmat[g],
                        &size[g],
                        &origin,
                        v,
                        c.kind,
                        std::ptr::null_mut(),
                    )
                }
            };
            // The nearest hit wins and, at equal distance, the lowest geom id (mj_multiRay
            // visits geoms in id order and keeps a hit only when strictly nearer).
            let better = dist < 0.0 || d < dist || (d == dist && (g as i32) < geom);
            if !(d >= 0.0 && better) || (self.within && d > self.cutoff) {
                continue;
            }
            if !costly && angle_culled(c, m, xpos, xmat, &origin, v, &mut angles) {
                continue;
            }
            dist = d;
            geom = g as i32;
        }
        (dist, geom)
    }
}

impl RayBatch {
    /// A batch for `n` rays.
    pub fn new(n: usize) -> Self {
        RayBatch {
            dirs: vec![0.0; 3 * n],
            dist: vec![-1.0; n],
            geom: vec![-1; n],
            cand: Vec::new(),
            bins: Box::default(),
        }
    }

    /// Number of rays.
    pub fn len(&self) -> usize {
        self.dist.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.dist.is_empty()
    }

    /// Unit ray directions in the world frame, 3 per ray (fill before [`RayBatch::cast`]); the
    /// slice's length is fixed.
    pub fn dirs_mut(&mut self) -> &mut [f64] {
        &mut self.dirs
    }

    /// Set ray `i`'s direction (world frame, unit length).
    pub fn set_dir(&mut self, i: usize, dir: [f64; 3]) {
        self.dirs[3 * i..3 * i + 3].copy_from_slice(&dir);
    }

    /// Hit distance along each ray (m) from the last cast; -1 = no hit within `cutoff`.
    pub fn dist(&self) -> &[f64] {
        &self.dist
    }

    /// Hit geom id per ray from the last cast; -1 = none.
    pub fn geom(&self) -> &[i32] {
        &self.geom
    }

    /// Cast every ray from `origin` (world frame, m). `exclude_body` is a body id whose geoms are
    /// ignored (the sensor's housing); `mask` = `None` uses [`VISIBLE_GROUPS`]; `include_static`
    /// includes geoms of static bodies (walls); `cutoff` is the farthest distance considered (m).
    pub fn cast(
        &mut self,
        data: &mut Data,
        origin: [f64; 3],
        exclude_body: Option<usize>,
        mask: Option<&[u8; mjNGROUP as usize]>,
        include_static: bool,
        cutoff: f64,
    ) {
        self.cast_mode(data, origin, exclude_body, mask, include_static, cutoff, false);
    }

    /// [`RayBatch::cast`] for a sensor that reads any return beyond `cutoff` as no return: each
    /// ray's answer is [`RayBatch::cast`]'s where that lies within `cutoff`, and no hit (-1, geom
    /// -1) where it lies beyond. Knowing that, it never intersects a geom that cannot be met
    /// within `cutoff` (its bounding box is farther) and never evaluates `mj_multiRay`'s angular
    /// cull for a hit beyond `cutoff`, which makes short-range sensors (cliff, IR, ToF) cheap.
    pub fn cast_within(
        &mut self,
        data: &mut Data,
        origin: [f64; 3],
        exclude_body: Option<usize>,
        mask: Option<&[u8; mjNGROUP as usize]>,
        include_static: bool,
        cutoff: f64,
    ) {
        self.cast_mode(data, origin, exclude_body, mask, include_static, cutoff, true);
    }

    #[allow(clippy::too_many_arguments)]
    fn cast_mode(
        &mut self,
        data: &mut Data,
        origin: [f64; 3],
        exclude_body: Option<usize>,
        mask: Option<&[u8; mjNGROUP as usize]>,
        include_static: bool,
        cutoff: f64,
        within: bool,
    ) {
        let mask = mask.unwrap_or(&VISIBLE_GROUPS);
        let sdf = mjtGeom::mjGEOM_SDF as i32;
        if data.model().geom_type().iter().any(|t| *t as i32 == sdf) {
            self.multi_ray(data, origin, exclude_body, mask, include_static, cutoff);
            if within {
                for (d, g) in self.dist.iter_mut().zip(self.geom.iter_mut()) {
                    if *d > cutoff {
                        (*d, *g) = (-1.0, -1);
                    }
                }
            }
        } else {
            self.cast_culled(data, origin, exclude_body, mask, include_static, cutoff, within);
        }
        self.cast_planes(data, origin, exclude_body, mask, include_static, cutoff);
    }

    /// [`RayBatch::cast`] through plain `mj_multiRay` (plus the same plane pass): the reference
    /// the culled cast is held bitwise equal to.
    pub fn cast_reference(
        &mut self,
        data: &mut Data,
        origin: [f64; 3],
        exclude_body: Option<usize>,
        mask: Option<&[u8; mjNGROUP as usize]>,
        include_static: bool,
        cutoff: f64,
    ) {
        let mask = mask.unwrap_or(&VISIBLE_GROUPS);
        self.multi_ray(data, origin, exclude_body, mask, include_static, cutoff);
        self.cast_planes(data, origin, exclude_body, mask, include_static, cutoff);
    }

    /// `mj_multiRay`'s answer, computed with a per-ray bounding-sphere cull (module notes);
    /// `within`: only hits within `cutoff` (see [`RayBatch::cast_within`]).
    #[allow(clippy::too_many_arguments)]
    fn cast_culled(
        &mut self,
        data: &Data,
        origin: [f64; 3],
        exclude_body: Option<usize>,
        mask: &[u8; mjNGROUP as usize],
        include_static: bool,
        cutoff: f64,
        within: bool,
    ) {
        let m = data.model();
        let plane_n = scan_plane(&self.dirs);
        // a planar scan's rays all at least 0.5 long: the capsule and cylinder sections apply
        let sections = plane_n.is_some()
            && self.dirs.chunks_exact(3).all(|d| d[0] * d[0] + d[1] * d[1] + d[2] * d[2] >= 0.25);
        let q = Query {
            m,
            data,
            origin,
            exclude: exclude_body.map(|b| b as i32).unwrap_or(-1),
            mask,
            include_static,
            cutoff,
            within,
            reach: cutoff * (1.0 + 1e-9) + 1e-9,
            plane_n,
            sections,
        };
        self.cand.clear();
        self.cand.extend((0..m.ffi().ngeom as usize).filter_map(|g| q.candidate(g)));
        // Visited nearest box first (stable: id order among equals).
        self.cand.sort_by(|a, b| a.near.total_cmp(&b.near));
        let binned = self.bin_candidates(q.plane_n);
        for i in 0..self.dist.len() {
            let v = [self.dirs[3 * i], self.dirs[3 * i + 1], self.dirs[3 * i + 2]];
            let vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
            if vv < 1e-15 {
                // mj_multiRay: a zero direction gets no hit (its geom id is left as it was).
                self.dist[i] = -1.0;
                continue;
            }
            let list: &[u32] = if binned { self.bins.for_ray(&v, vv) } else { self.bins.all() };
            (self.dist[i], self.geom[i]) = q.nearest_hit(&mut self.cand, list, &v, vv);
        }
    }

    /// A planar scan with several candidates: each ray visits only those its angular bin holds
    /// (src/mujoco/ray_bins.rs), in the same order. True when binned.
    fn bin_candidates(&mut self, plane_n: Option<[f64; 3]>) -> bool {
        match plane_n {
            Some(n) if self.cand.len() > 4 => {
                self.bins.reset(&n, &[self.dirs[0], self.dirs[1], self.dirs[2]]);
                for (k, c) in self.cand.iter().enumerate() {
                    let r = if c.w2 > c.r2 { c.r2.sqrt() } else { f64::INFINITY };
                    self.bins.add(k as u32, &c.w, r);
                }
                true
            }
            _ => {
                self.bins.unbinned(self.cand.len());
                false
            }
        }
    }

    fn multi_ray(
        &mut self,
        data: &mut Data,
        origin: [f64; 3],
        exclude_body: Option<usize>,
        mask: &[u8; mjNGROUP as usize],
        include_static: bool,
        cutoff: f64,
    ) {
        let n = self.dist.len();
        debug_assert!(self.dirs.len() == 3 * n && self.geom.len() == n);
        // SAFETY: the private buffers hold exactly n rays (fixed by `new`); model and data are live and only this thread touches them.
        unsafe {
            let m = data.model().ffi() as *const _;
            mj_multiRay(
                m,
                data.ffi_mut(),
                &origin,
                self.dirs.as_ptr(),
                mask.as_ptr(),
                include_static,
                exclude_body.map(|b| b as i32).unwrap_or(-1),
                self.geom.as_mut_ptr(),
                self.dist.as_mut_ptr(),
                std::ptr::null_mut(),
                n as i32,
                cutoff,
            );
        }
    }

    /// Intersect every eligible plane geom directly (see the module notes), keeping the nearer hit.
    fn cast_planes(
        &mut self,
        data: &Data,
        origin: [f64; 3],
        exclude_body: Option<usize>,
        mask: &[u8; mjNGROUP as usize],
        include_static: bool,
        cutoff: f64,
    ) {
        let m = data.model();
        let plane = mjtGeom::mjGEOM_PLANE as i32;
        for g in 0..m.ffi().ngeom as usize {
            if m.geom_type()[g] as i32 != plane {
                continue;
            }
            let group = m.geom_group()[g];
            if !(0..mjNGROUP as i32).contains(&group) || mask[group as usize] == 0 {
                continue;
            }
            let body = m.geom_bodyid()[g] as usize;
            if Some(body) == exclude_body || (!include_static && m.body_weldid()[body] == 0) {
                continue;
            }
            let (pos, mat, size) = (data.geom_xpos()[g], data.geom_xmat()[g], m.geom_size()[g]);
            for i in 0..self.dist.len() {
                let v = [self.dirs[3 * i], self.dirs[3 * i + 1], self.dirs[3 * i + 2]];
                // SAFETY: plain arrays of the declared sizes; no model or data state is touched.
                let d = unsafe {
                    mju_rayGeom(&pos, &mat, &size, &origin, &v, plane, std::ptr::null_mut())
                };
                if d >= 0.0 && d <= cutoff && (self.dist[i] < 0.0 || d < self.dist[i]) {
                    self.dist[i] = d;
                    self.geom[i] = g as i32;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_keep_the_lengths_new_gave_them() {
        let mut b = RayBatch::new(3);
        assert_eq!((b.len(), b.dirs_mut().len(), b.dist().len(), b.geom().len()), (3, 9, 3, 3));
        b.set_dir(2, [0.0, 0.0, -1.0]);
        assert_eq!(&b.dirs_mut()[6..], &[0.0, 0.0, -1.0]);
        assert_eq!((b.dist(), b.geom()), (&[-1.0; 3][..], &[-1; 3][..]));
    }
}
