//! The per-ray cull tests of the raycast seam ([`super::raycast`]), pure geometry on plain
//! arrays: MuJoCo's own ray-sphere test and bounding angles, op for op (their answers are part of
//! what `mj_multiRay` returns), the angular cull's cosine form, a planar scan's plane and a
//! capsule's or cylinder's section by it, and a geom's bounding box as seen from the origin.

/// `mj_multiRay`'s angular cull without `atan2` where the answer is clear: the ray's elevation
/// and azimuth are compared with the bounding angles through their cosines, with a margin of
/// 1e-9 (a cosine never moves faster than its angle, so the angles are then at least 1e-9 apart,
/// far above the rounding of either side's `atan2`); within the margin the exact test decides.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct AngleCull {
    /// The bounding angles are MuJoCo's "no cull" answer: never culled.
    none: bool,
    /// cos of the elevation bounds (`ba[1]`, `ba[3]`), when strictly inside (0, pi).
    cos_el_lo: Option<f64>,
    cos_el_hi: Option<f64>,
    /// Unit vector of the azimuth centre and the cosine of the half width.
    centre: [f64; 2],
    cos_half: f64,
}

/// Margin of the cosine comparisons in [`AngleCull`].
const COS_MARGIN: f64 = 1e-9;

impl AngleCull {
    pub(super) fn new(ba: &[f64; 4]) -> Self {
        let none = ba == &[-PI, 0.0, PI, PI];
        let inside = |a: f64| (a > 0.0 && a < PI).then(|| a.cos());
        let c = (ba[0] + ba[2]) * 0.5;
        AngleCull {
            none,
            cos_el_lo: inside(ba[1]),
            cos_el_hi: inside(ba[3]),
            centre: [c.cos(), c.sin()],
            cos_half: ((ba[2] - ba[0]) * 0.5).cos(),
        }
    }

    /// Some(culled) when the cosines decide it, None when the exact test must.
    pub(super) fn decide(&self, ba: &[f64; 4], v: &[f64; 3], vv: f64) -> Option<bool> {
        if self.none {
            return Some(false);
        }
        let cz = v[2] / vv.sqrt(); // cos of the ray's elevation (angle from +z)
                                   // el < ba[1]: never when ba[1] <= 0 (el >= 0); else cos(el) > cos(ba[1])
        match self.cos_el_lo {
            Some(cl) if cz > cl + COS_MARGIN => return Some(true),
            Some(cl) if cz >= cl - COS_MARGIN => return None,
            None if ba[1] > 0.0 => return None,
            _ => {}
        }
        // el > ba[3]: never when ba[3] >= pi (el <= pi); else cos(el) < cos(ba[3])
        match self.cos_el_hi {
            Some(ch) if cz < ch - COS_MARGIN => return Some(true),
            Some(ch) if cz <= ch + COS_MARGIN => return None,
            None if ba[3] < PI => return None,
            _ => {}
        }
        // |wrapped az - centre| > half (half <= pi/2, the wrapped difference within [-pi, pi])
        let rho2 = v[0] * v[0] + v[1] * v[1];
        if rho2 < 1e-12 * vv {
            return None;
        }
        let cosd = (v[0] * self.centre[0] + v[1] * self.centre[1]) / rho2.sqrt();
        if cosd < self.cos_half - COS_MARGIN {
            Some(true)
        } else if cosd > self.cos_half + COS_MARGIN {
            Some(false)
        } else {
            None
        }
    }
}

const MJ_MINVAL: f64 = 1e-15;
const MJ_MAXVAL: f64 = 1e10;
const PI: f64 = std::f64::consts::PI;

fn mj_min(a: f64, b: f64) -> f64 {
    if a < b {
        a
    } else {
        b
    }
}

fn mj_max(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

/// The unit normal of the plane every ray direction lies in (a 2D scan), or `None`. A direction
/// off the plane by more than 1e-12 (relative) disqualifies it; the cull it enables keeps a
/// margin far above that.
pub(super) fn scan_plane(dirs: &[f64]) -> Option<[f64; 3]> {
    let n = dirs.len() / 3;
    let d = |i: usize| [dirs[3 * i], dirs[3 * i + 1], dirs[3 * i + 2]];
    if n < 3 {
        return None;
    }
    let a = d(0);
    let mut best = ([0.0; 3], 0.0);
    for i in 1..n {
        let b = d(i);
        let c = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
        let l = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt();
        if l > best.1 {
            best = (c, l);
        }
        if l > 0.5 {
            break;
        }
    }
    if best.1 < 1e-6 {
        return None;
    }
    let nrm = [best.0[0] / best.1, best.0[1] / best.1, best.0[2] / best.1];
    for i in 0..n {
        let v = d(i);
        let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        if (nrm[0] * v[0] + nrm[1] * v[1] + nrm[2] * v[2]).abs() > 1e-12 * len.max(1.0) {
            return None;
        }
    }
    Some(nrm)
}

/// Where a planar scan can meet a capsule or cylinder: every point of either lies within its
/// `radius` of its axis line, so every point it has in the scan plane (unit normal `n`) lies
/// within `radius / cos θ` of where the axis (unit `axis`) crosses the plane, θ the axis's angle
/// to the normal — for an upright person scanned level, a disc of its own radius instead of its
/// bounding sphere. Returns that crossing (relative to the scan's origin; `w` is the geom's centre
/// relative to it) and that radius grown by margins far above rounding that also cover a ray up
/// to 1e-12 off the plane (rays at least 0.5 long) meeting the geom within `reach` of the origin;
/// `None` for an axis more than 60 degrees off the normal.
pub(super) fn scan_section(
    n: &[f64; 3],
    w: &[f64; 3],
    axis: &[f64; 3],
    radius: f64,
    reach: f64,
) -> Option<([f64; 3], f64)> {
    let nu = n[0] * axis[0] + n[1] * axis[1] + n[2] * axis[2];
    let cos = nu.abs();
    if cos.is_nan() || cos < 0.5 {
        return None;
    }
    let s = -(n[0] * w[0] + n[1] * w[1] + n[2] * w[2]) / nu;
    let p = [w[0] + s * axis[0], w[1] + s * axis[1], w[2] + s * axis[2]];
    let e = 1e-9 * (1.0 + reach);
    let r = (radius + e) / cos * (1.0 + 1e-9) + e + 1e-9;
    r.is_finite().then_some((p, r))
}

/// MuJoCo's ray-sphere test (smallest non-negative root of the quadratic, or -1), op for op.
fn ray_sphere(pos: &[f64; 3], dist_sqr: f64, pnt: &[f64; 3], vec: &[f64; 3]) -> f64 {
    let dif = [pnt[0] - pos[0], pnt[1] - pos[1], pnt[2] - pos[2]];
    let a = vec[0] * vec[0] + vec[1] * vec[1] + vec[2] * vec[2];
    let b = vec[0] * dif[0] + vec[1] * dif[1] + vec[2] * dif[2];
    let c = dif[0] * dif[0] + dif[1] * dif[1] + dif[2] * dif[2] - dist_sqr;
    let det = b * b - a * c;
    if det < 0.0 || a < MJ_MINVAL {
        return -1.0;
    }
    let det = det.sqrt();
    let (x0, x1) = ((-b - det) / a, (-b + det) / a);
    if x0 >= 0.0 {
        x0
    } else if x1 >= 0.0 {
        x1
    } else {
        -1.0
    }
}

/// `ray_sphere(..) >= 0.0`, without its square root and divisions where the answer is clear: the
/// same discriminant (the same operations, so the same value); with it non-negative, a ray
/// pointing towards the centre (b <= 0) has a non-negative far root, and so does one whose
/// discriminant exceeds b² by a relative 1e-9 (then sqrt(det) > b far beyond rounding). Other
/// cases (and NaN) take the exact test.
pub(super) fn ray_sphere_hits(
    pos: &[f64; 3],
    dist_sqr: f64,
    pnt: &[f64; 3],
    vec: &[f64; 3],
) -> bool {
    let dif = [pnt[0] - pos[0], pnt[1] - pos[1], pnt[2] - pos[2]];
    let a = vec[0] * vec[0] + vec[1] * vec[1] + vec[2] * vec[2];
    let b = vec[0] * dif[0] + vec[1] * dif[1] + vec[2] * dif[2];
    let c = dif[0] * dif[0] + dif[1] * dif[1] + dif[2] * dif[2] - dist_sqr;
    let det = b * b - a * c;
    if det >= 0.0 && a >= MJ_MINVAL && (b <= 0.0 || det > b * b * (1.0 + 1e-9)) {
        return true;
    }
    ray_sphere(pos, dist_sqr, pnt, vec) >= 0.0
}

/// MuJoCo's bounding angles of a geom seen from `pnt`, op for op.
pub(super) fn bounding_angles(
    aabb: &[f64; 6],
    xpos: &[f64; 3],
    xmat: &[f64; 9],
    pnt: &[f64; 3],
) -> [f64; 4] {
    const NONE: [f64; 4] = [-PI, 0.0, PI, PI];
    // the point inside the geom's box: no angular cull
    let d = [pnt[0] - xpos[0], pnt[1] - xpos[1], pnt[2] - xpos[2]];
    let mut p = [
        xmat[0] * d[0] + xmat[3] * d[1] + xmat[6] * d[2],
        xmat[1] * d[0] + xmat[4] * d[1] + xmat[7] * d[2],
        xmat[2] * d[0] + xmat[5] * d[1] + xmat[8] * d[2],
    ];
    for j in 0..3 {
        p[j] -= aabb[j];
    }
    if (0..3).all(|j| p[j].abs() <= aabb[3 + j]) {
        return NONE;
    }
    let mut ba = [MJ_MAXVAL, MJ_MAXVAL, -MJ_MAXVAL, -MJ_MAXVAL];
    for v in 0..8 {
        let vert = [
            if v & 1 != 0 { aabb[0] + aabb[3] } else { aabb[0] - aabb[3] },
            if v & 2 != 0 { aabb[1] + aabb[4] } else { aabb[1] - aabb[4] },
            if v & 4 != 0 { aabb[2] + aabb[5] } else { aabb[2] - aabb[5] },
        ];
        let mut b = [
            xmat[0] * vert[0] + xmat[1] * vert[1] + xmat[2] * vert[2],
            xmat[3] * vert[0] + xmat[4] * vert[1] + xmat[5] * vert[2],
            xmat[6] * vert[0] + xmat[7] * vert[1] + xmat[8] * vert[2],
        ];
        for j in 0..3 {
            b[j] += xpos[j];
        }
        let r = [b[0] - pnt[0], b[1] - pnt[1], b[2] - pnt[2]];
        let az = r[1].atan2(r[0]);
        let el = (r[0] * r[0] + r[1] * r[1]).sqrt().atan2(r[2]);
        ba[0] = mj_min(ba[0], az);
        ba[1] = mj_min(ba[1], el);
        ba[2] = mj_max(ba[2], az);
        ba[3] = mj_max(ba[3], el);
    }
    let max_half = mj_max(aabb[3], mj_max(aabb[4], aabb[5]));
    let e = [pnt[0] - xpos[0], pnt[1] - xpos[1], pnt[2] - xpos[2]];
    let dist = (e[0] * e[0] + e[1] * e[1] + e[2] * e[2]).sqrt();
    if dist > MJ_MINVAL {
        let margin = max_half.atan2(dist);
        ba[0] -= margin;
        ba[1] -= margin;
        ba[2] += margin;
        ba[3] += margin;
    }
    if ba[2] - ba[0] > PI || ba[3] - ba[1] > PI {
        return NONE;
    }
    ba
}

/// Distance from `pnt` to a geom's bounding box (`aabb`: centre and half sizes in the geom's
/// frame, placed by the geom's `xpos`/`xmat`): no point of the geom is nearer.
pub(super) fn box_distance(
    aabb: &[f64; 6],
    xpos: &[f64; 3],
    xmat: &[f64; 9],
    pnt: &[f64; 3],
) -> f64 {
    let d = [pnt[0] - xpos[0], pnt[1] - xpos[1], pnt[2] - xpos[2]];
    let mut s = 0.0;
    for j in 0..3 {
        let local = xmat[j] * d[0] + xmat[3 + j] * d[1] + xmat[6 + j] * d[2] - aabb[j];
        let out = local.abs() - aabb[3 + j];
        if out > 0.0 {
            s += out * out;
        }
    }
    s.sqrt()
}

/// The origin in the frame of a geom's bounding box (`aabb`: centre and half sizes in the geom's
/// frame), relative to the box's centre, and the half sizes grown by a margin (1e-7 of the
/// scale) far above the rounding of the slab test in `raycast::slab_skips`.
pub(super) fn slab_frame(
    aabb: &[f64; 6],
    xpos: &[f64; 3],
    xmat: &[f64; 9],
    pnt: &[f64; 3],
) -> ([f64; 3], [f64; 3]) {
    let d = [pnt[0] - xpos[0], pnt[1] - xpos[1], pnt[2] - xpos[2]];
    let mut lp = [0.0; 3];
    for j in 0..3 {
        lp[j] = xmat[j] * d[0] + xmat[3 + j] * d[1] + xmat[6 + j] * d[2] - aabb[j];
    }
    let scale = 1.0
        + lp.iter().fold(0.0f64, |a, x| a.max(x.abs()))
        + aabb[3..].iter().fold(0.0f64, |a, x| a.max(x.abs()));
    let grow = 1e-7 * scale;
    (lp, [aabb[3] + grow, aabb[4] + grow, aabb[5] + grow])
}
