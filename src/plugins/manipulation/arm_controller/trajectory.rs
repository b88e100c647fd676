//! Trajectory interpolation: one joint's knots sampled at a time, as joint_trajectory_controller
//! does (quintic with positions, velocities and accelerations; cubic Hermite with velocities;
//! linear with positions only). Pure: no model, no data.

#[derive(Debug, Clone)]
pub(super) struct Knot {
    pub(super) t: f64,
    pub(super) q: f64,
    pub(super) v: Option<f64>,
    pub(super) a: Option<f64>,
}

/// Position and velocity at `t` on one joint's knots (clamped to the first/last).
pub(super) fn sample(k: &[Knot], t: f64) -> (f64, f64) {
    if t <= k[0].t {
        return (k[0].q, 0.0);
    }
    let last = k.last().expect("non-empty");
    if t >= last.t {
        return (last.q, 0.0);
    }
    let i = k.windows(2).position(|w| t < w[1].t).expect("inside");
    let (a, b) = (&k[i], &k[i + 1]);
    let h = b.t - a.t;
    if h <= 1e-12 {
        return (b.q, 0.0);
    }
    let s = t - a.t;
    match (a.v, b.v, a.a, b.a) {
        (Some(v0), Some(v1), Some(a0), Some(a1)) => {
            // Quintic through (q, v, a) at both ends.
            let (q0, q1) = (a.q, b.q);
            let c0 = q0;
            let c1 = v0;
            let c2 = a0 / 2.0;
            let h2 = h * h;
            let h3 = h2 * h;
            let c3 =
                (20.0 * (q1 - q0) - (8.0 * v1 + 12.0 * v0) * h - (3.0 * a0 - a1) * h2) / (2.0 * h3);
            let c4 = (30.0 * (q0 - q1) + (14.0 * v1 + 16.0 * v0) * h + (3.0 * a0 - 2.0 * a1) * h2)
                / (2.0 * h3 * h);
            let c5 = (12.0 * (q1 - q0) - 6.0 * (v1 + v0) * h - (a0 - a1) * h2) / (2.0 * h3 * h2);
            let q = c0 + s * (c1 + s * (c2 + s * (c3 + s * (c4 + s * c5))));
            let v = c1 + s * (2.0 * c2 + s * (3.0 * c3 + s * (4.0 * c4 + s * 5.0 * c5)));
            (q, v)
        }
        (Some(v0), Some(v1), _, _) => {
            // Cubic Hermite.
            let u = s / h;
            let (h00, h10, h01, h11) = (
                2.0 * u * u * u - 3.0 * u * u + 1.0,
                u * u * u - 2.0 * u * u + u,
                -2.0 * u * u * u + 3.0 * u * u,
                u * u * u - u * u,
            );
            let q = h00 * a.q + h10 * h * v0 + h01 * b.q + h11 * h * v1;
            let (d00, d10, d01, d11) = (
                6.0 * u * u - 6.0 * u,
                3.0 * u * u - 4.0 * u + 1.0,
                -6.0 * u * u + 6.0 * u,
                3.0 * u * u - 2.0 * u,
            );
            let v = (d00 * a.q + d01 * b.q) / h + d10 * v0 + d11 * v1;
            (q, v)
        }
        _ => {
            let u = s / h;
            (a.q + u * (b.q - a.q), (b.q - a.q) / h)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(t: f64, q: f64, v: Option<f64>, a: Option<f64>) -> Knot {
        Knot { t, q, v, a }
    }

    #[test]
    fn clamps_before_the_first_and_after_the_last_knot() {
        let ks = [k(1.0, 0.2, None, None), k(2.0, 0.8, None, None)];
        assert_eq!(sample(&ks, 0.0), (0.2, 0.0));
        assert_eq!(sample(&ks, 5.0), (0.8, 0.0));
    }

    #[test]
    fn positions_only_interpolate_linearly() {
        let ks = [k(0.0, 0.0, None, None), k(2.0, 1.0, None, None)];
        assert_eq!(sample(&ks, 0.5), (0.25, 0.5));
    }

    #[test]
    fn velocities_give_a_cubic_hermite_through_the_knots() {
        let ks = [k(0.0, 0.0, Some(0.0), None), k(1.0, 1.0, Some(0.0), None)];
        let (q, v) = sample(&ks, 0.5);
        assert!((q - 0.5).abs() < 1e-12 && (v - 1.5).abs() < 1e-12, "{q} {v}");
        let (q, v) = sample(&ks, 0.25);
        assert!((q - 0.15625).abs() < 1e-12 && (v - 1.125).abs() < 1e-12, "{q} {v}");
    }

    #[test]
    fn accelerations_give_the_minimum_jerk_quintic() {
        // q(t) = 10t^3 - 15t^4 + 6t^5 for rest-to-rest over 1 s
        let ks = [k(0.0, 0.0, Some(0.0), Some(0.0)), k(1.0, 1.0, Some(0.0), Some(0.0))];
        let (q, v) = sample(&ks, 0.25);
        assert!((q - 0.103515625).abs() < 1e-12, "{q}");
        assert!((v - (30.0 * 0.0625 - 60.0 * 0.015625 + 30.0 * 0.00390625)).abs() < 1e-12, "{v}");
        let (q, v) = sample(&ks, 0.5);
        assert!((q - 0.5).abs() < 1e-12 && (v - 1.875).abs() < 1e-12, "{q} {v}");
    }

    #[test]
    fn picks_the_segment_the_time_falls_in() {
        let ks = [k(0.0, 0.0, None, None), k(1.0, 1.0, None, None), k(3.0, 0.0, None, None)];
        assert_eq!(sample(&ks, 2.0), (0.5, -0.5));
    }
}
