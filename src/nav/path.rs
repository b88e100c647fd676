//! Route geometry on a polyline in the floor plane: arc length, the point at an arc length, the
//! projection of a position onto the route (searched forward from the last one, so a route that
//! doubles back is not short-cut), and the pure-pursuit carrot.

/// A polyline with its cumulative arc length.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Polyline {
    pts: Vec<[f64; 2]>,
    cum: Vec<f64>,
}

impl Polyline {
    /// A polyline through `pts` (at least one point).
    pub fn new(pts: Vec<[f64; 2]>) -> Self {
        let mut cum = Vec::with_capacity(pts.len());
        let mut s = 0.0;
        for (k, p) in pts.iter().enumerate() {
            if k > 0 {
                s += (p[0] - pts[k - 1][0]).hypot(p[1] - pts[k - 1][1]);
            }
            cum.push(s);
        }
        Polyline { pts, cum }
    }

    /// The vertices.
    pub fn points(&self) -> &[[f64; 2]] {
        &self.pts
    }

    /// Total length (m).
    pub fn length(&self) -> f64 {
        self.cum.last().copied().unwrap_or(0.0)
    }

    /// Arc length (m) of vertex `k`.
    pub fn vertex_s(&self, k: usize) -> f64 {
        self.cum[k]
    }

    /// The point at arc length `s` (clamped to the ends).
    pub fn at(&self, s: f64) -> [f64; 2] {
        if self.pts.len() == 1 || s <= 0.0 {
            return self.pts[0];
        }
        let k = self.cum.partition_point(|&c| c <= s).min(self.pts.len() - 1).max(1);
        let (a, b) = (self.pts[k - 1], self.pts[k]);
        let seg = self.cum[k] - self.cum[k - 1];
        if seg <= 0.0 {
            return b;
        }
        let t = ((s - self.cum[k - 1]) / seg).clamp(0.0, 1.0);
        [a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])]
    }

    /// Project `p` onto the route at or after arc length `from` and within `window` m of it: the
    /// arc length of the nearest point and the distance to it (the cross-track error).
    pub fn project(&self, p: [f64; 2], from: f64, window: f64) -> (f64, f64) {
        if self.pts.len() == 1 {
            return (0.0, (p[0] - self.pts[0][0]).hypot(p[1] - self.pts[0][1]));
        }
        let mut best = (from.clamp(0.0, self.length()), f64::INFINITY);
        for k in 1..self.pts.len() {
            if self.cum[k] < from || self.cum[k - 1] > from + window {
                continue;
            }
            let (a, b) = (self.pts[k - 1], self.pts[k]);
            let e = [b[0] - a[0], b[1] - a[1]];
            let len2 = e[0] * e[0] + e[1] * e[1];
            let mut t = if len2 > 0.0 {
                (((p[0] - a[0]) * e[0] + (p[1] - a[1]) * e[1]) / len2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let seg = self.cum[k] - self.cum[k - 1];
            let s_lo = (from - self.cum[k - 1]).max(0.0);
            if seg > 0.0 && t * seg < s_lo {
                t = s_lo / seg;
            }
            let q = [a[0] + t * e[0], a[1] + t * e[1]];
            let d = (p[0] - q[0]).hypot(p[1] - q[1]);
            if d < best.1 {
                best = (self.cum[k - 1] + t * seg, d);
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arc_length_projection_and_carrot() {
        let p = Polyline::new(vec![[0.0, 0.0], [3.0, 0.0], [3.0, 4.0]]);
        assert_eq!(p.length(), 7.0);
        assert_eq!(p.at(1.5), [1.5, 0.0]);
        assert_eq!(p.at(5.0), [3.0, 2.0]);
        assert_eq!(p.at(99.0), [3.0, 4.0]);
        let (s, d) = p.project([1.0, 0.5], 0.0, 10.0);
        assert!((s - 1.0).abs() < 1e-12 && (d - 0.5).abs() < 1e-12);
        // a route doubling back is not short-cut: searched forward from s = 4
        let back = Polyline::new(vec![[0.0, 0.0], [4.0, 0.0], [0.0, 0.0]]);
        let (s, _) = back.project([1.0, 0.0], 4.5, 10.0);
        assert!((s - 7.0).abs() < 1e-12, "{s}");
    }
}
