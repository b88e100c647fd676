//! A planar polyline parametrised by arc length: the point at distance `s` along it.

/// A polyline of 2-D points (m) with its cumulative arc lengths.
#[derive(Debug, Clone, PartialEq)]
pub struct Polyline {
    points: Vec<[f64; 2]>,
    /// `cum[i]`: arc length from the first point to point `i`.
    cum: Vec<f64>,
}

impl Polyline {
    /// A polyline through `points` (at least one); `closed` adds the leg from the last point back
    /// to the first.
    pub fn new(mut points: Vec<[f64; 2]>, closed: bool) -> Self {
        assert!(!points.is_empty(), "a polyline needs a point");
        if closed && points.len() > 1 {
            points.push(points[0]);
        }
        let mut cum = Vec::with_capacity(points.len());
        let mut acc = 0.0;
        cum.push(0.0);
        for w in points.windows(2) {
            acc += (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1]);
            cum.push(acc);
        }
        Polyline { points, cum }
    }

    /// Total arc length (m).
    pub fn length(&self) -> f64 {
        *self.cum.last().expect("non-empty")
    }

    /// Arc length at point `i` (m).
    pub fn length_at(&self, i: usize) -> f64 {
        self.cum[i]
    }

    /// The points (the first repeated at the end when closed).
    pub fn points(&self) -> &[[f64; 2]] {
        &self.points
    }

    /// The point at arc length `s`, clamped into [0, length].
    pub fn at(&self, s: f64) -> [f64; 2] {
        let s = s.clamp(0.0, self.length());
        // the last leg whose start is at or before s
        let i = self.cum.partition_point(|&c| c <= s).saturating_sub(1);
        if i + 1 >= self.points.len() {
            return *self.points.last().expect("non-empty");
        }
        let (a, b) = (self.points[i], self.points[i + 1]);
        let len = self.cum[i + 1] - self.cum[i];
        if len <= 0.0 {
            return a;
        }
        let t = (s - self.cum[i]) / len;
        [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arc_length_parametrisation() {
        let p = Polyline::new(vec![[0.0, 0.0], [3.0, 0.0], [3.0, 4.0]], false);
        assert_eq!(p.length(), 7.0);
        assert_eq!(p.at(1.5), [1.5, 0.0]);
        assert_eq!(p.at(3.0), [3.0, 0.0]);
        assert_eq!(p.at(5.0), [3.0, 2.0]);
        assert_eq!(p.at(9.0), [3.0, 4.0]);
        assert_eq!(p.at(-1.0), [0.0, 0.0]);
        let c = Polyline::new(vec![[0.0, 0.0], [3.0, 0.0], [3.0, 4.0]], true);
        assert_eq!(c.length(), 12.0);
        assert_eq!(c.at(9.5), [1.5, 2.0]);
        // a repeated point (zero-length leg) is passed, not stuck on
        let d = Polyline::new(vec![[0.0, 0.0], [1.0, 0.0], [1.0, 0.0], [1.0, 1.0]], false);
        assert_eq!(d.at(1.5), [1.0, 0.5]);
    }
}
