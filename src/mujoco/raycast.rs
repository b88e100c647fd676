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

use mujoco_rs::mujoco_c::{mjNGROUP, mj_multiRay, mjtGeom, mju_rayGeom};

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
}

impl RayBatch {
    /// A batch for `n` rays.
    pub fn new(n: usize) -> Self {
        RayBatch { dirs: vec![0.0; 3 * n], dist: vec![-1.0; n], geom: vec![-1; n] }
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
        let n = self.dist.len();
        debug_assert!(self.dirs.len() == 3 * n && self.geom.len() == n);
        let mask = mask.unwrap_or(&VISIBLE_GROUPS);
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
        self.cast_planes(data, origin, exclude_body, mask, include_static, cutoff);
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
