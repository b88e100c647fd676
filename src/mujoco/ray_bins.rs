//! Angular bins for a scan whose rays lie in one plane (a 2D lidar): each candidate geom of a
//! cast is filed under the bins its bounding sphere can be seen in, so a ray visits only its
//! bin's candidates instead of every candidate of the scan. Conservative by construction: a ray
//! that passes within `r` of a centre has its in-plane direction within `asin(r / ρ)` of the
//! centre's in-plane direction (ρ: the centre's in-plane distance), since leaving the plane only
//! adds distance; the interval is widened by 1e-6 rad and one bin on each side, far above
//! rounding. Angles are compared as a monotone pseudo-angle (no `atan2`).

/// Number of bins around the circle.
const BINS: usize = 128;

/// A monotone function of the angle of (x, y) in [0, 4) (the "diamond angle").
fn diamond(x: f64, y: f64) -> f64 {
    if y >= 0.0 {
        if x >= 0.0 {
            y / (x + y)
        } else {
            1.0 - x / (-x + y)
        }
    } else if x < 0.0 {
        2.0 - y / (-x - y)
    } else {
        3.0 + x / (x - y)
    }
}

fn bin(x: f64, y: f64) -> usize {
    ((diamond(x, y) * (BINS as f64 / 4.0)) as usize).min(BINS - 1)
}

/// The bins of one cast (reused across casts: no allocation once warm).
#[derive(Debug, Clone, Default)]
pub(crate) struct ScanBins {
    e1: [f64; 3],
    e2: [f64; 3],
    lists: Vec<Vec<u32>>,
    /// Every candidate: for a ray whose direction has (almost) no in-plane part.
    all: Vec<u32>,
}

fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

impl ScanBins {
    /// Start a cast in the plane of unit normal `n`; `inplane` is any nonzero direction in it.
    pub(crate) fn reset(&mut self, n: &[f64; 3], inplane: &[f64; 3]) {
        let l = dot(inplane, inplane).sqrt();
        self.e1 = [inplane[0] / l, inplane[1] / l, inplane[2] / l];
        let e = &self.e1;
        self.e2 = [n[1] * e[2] - n[2] * e[1], n[2] * e[0] - n[0] * e[2], n[0] * e[1] - n[1] * e[0]];
        self.lists.resize_with(BINS, Vec::new);
        self.lists.iter_mut().for_each(Vec::clear);
        self.all.clear();
    }

    /// No bins for this cast: [`ScanBins::all`] lists candidates `0..n`.
    pub(crate) fn unbinned(&mut self, n: usize) {
        self.all.clear();
        self.all.extend(0..n as u32);
    }

    /// Every candidate filed (or `0..n` after [`ScanBins::unbinned`]), in visiting order.
    pub(crate) fn all(&self) -> &[u32] {
        &self.all
    }

    /// File candidate `idx` (add them in visiting order) whose bounding sphere, of radius `r`
    /// (infinite: seen everywhere), is centred at `w` from the origin.
    pub(crate) fn add(&mut self, idx: u32, w: &[f64; 3], r: f64) {
        self.all.push(idx);
        let (a, b) = (dot(w, &self.e1), dot(w, &self.e2));
        let rho = (a * a + b * b).sqrt();
        let ratio = r / rho;
        // The origin inside (or near) the sphere's cross-section, or a wide one: every bin.
        if ratio.is_nan() || ratio >= 0.99 {
            self.lists.iter_mut().for_each(|l| l.push(idx));
            return;
        }
        let half = ratio.asin() + 1e-6;
        let (sa, ca) = half.sin_cos();
        let lo = bin(a * ca + b * sa, b * ca - a * sa);
        let hi = bin(a * ca - b * sa, b * ca + a * sa);
        let span = (hi + BINS - lo) % BINS + 3;
        if span >= BINS {
            self.lists.iter_mut().for_each(|l| l.push(idx));
            return;
        }
        for k in 0..span {
            self.lists[(lo + BINS - 1 + k) % BINS].push(idx);
        }
    }

    /// The candidates the ray along `v` (squared length `vv`) can meet, in visiting order.
    pub(crate) fn for_ray(&self, v: &[f64; 3], vv: f64) -> &[u32] {
        let (x, y) = (dot(v, &self.e1), dot(v, &self.e2));
        if x * x + y * y < 1e-12 * vv {
            return &self.all;
        }
        &self.lists[bin(x, y)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pseudo_angle_is_monotone_around_the_circle() {
        let mut prev = -1.0;
        for k in 0..3600 {
            let a = k as f64 * std::f64::consts::TAU / 3600.0;
            let d = diamond(a.cos(), a.sin());
            assert!(d > prev && (0.0..4.0).contains(&d), "{k}: {d} after {prev}");
            prev = d;
        }
    }

    #[test]
    fn a_candidate_is_filed_where_its_sphere_is_seen_and_not_opposite() {
        let mut s = ScanBins::default();
        s.reset(&[0.0, 0.0, 1.0], &[1.0, 0.0, 0.0]);
        s.add(0, &[2.0, 0.0, 0.3], 0.5); // ahead, +x, about ±14.5 degrees
        s.add(1, &[0.1, 0.0, 0.0], 0.5); // the origin inside: everywhere
        let at = |deg: f64| {
            let a = deg.to_radians();
            s.for_ray(&[a.cos(), a.sin(), 0.0], 1.0).to_vec()
        };
        assert_eq!(at(0.0), vec![0, 1]);
        assert_eq!(at(14.0), vec![0, 1]);
        assert_eq!(at(-14.0), vec![0, 1]);
        assert_eq!(at(180.0), vec![1]);
        assert_eq!(at(90.0), vec![1]);
        // straight up: no in-plane part, every candidate
        assert_eq!(s.for_ray(&[0.0, 0.0, 1.0], 1.0), &[0, 1]);
    }
}
