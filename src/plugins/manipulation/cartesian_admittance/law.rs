//! The control laws on one 6-vector twist [linear; angular], world frame. Pure: no model, no data.

/// One admittance update over `dt`: `M v̇ + D v = F` per axis, integrated semi-implicitly
/// (`v ← (v + dt F / M) / (1 + dt D / M)`), which is stable for any positive damping and step;
/// the steady state is `v = F / D`.
pub fn admittance_step(
    v: &mut [f64; 6],
    force: &[f64; 6],
    mass: &[f64; 6],
    damping: &[f64; 6],
    dt: f64,
) {
    for i in 0..6 {
        v[i] = (v[i] + dt * force[i] / mass[i]) / (1.0 + dt * damping[i] / mass[i]);
    }
}

/// Scale the linear and the angular halves down to at most `max_lin` (m/s) and `max_ang`
/// (rad/s) in magnitude, keeping each half's direction.
pub fn clamp_twist(v: &mut [f64; 6], max_lin: f64, max_ang: f64) {
    for (range, max) in [(0..3, max_lin), (3..6, max_ang)] {
        let n = v[range.clone()].iter().map(|x| x * x).sum::<f64>().sqrt();
        if n > max {
            for x in &mut v[range] {
                *x *= max / n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admittance_settles_at_force_over_damping() {
        let mut v = [0.0; 6];
        let f = [-10.0, 0.0, 4.0, 0.0, 0.0, 1.6];
        for _ in 0..2000 {
            admittance_step(&mut v, &f, &[1.0; 6], &[80.0, 80.0, 80.0, 160.0, 160.0, 160.0], 0.01);
        }
        assert!((v[0] + 0.125).abs() < 1e-12 && (v[2] - 0.05).abs() < 1e-12, "{v:?}");
        assert!((v[5] - 0.01).abs() < 1e-12, "{v:?}");
    }

    #[test]
    fn clamp_keeps_direction() {
        let mut v = [0.3, 0.4, 0.0, 0.0, 0.0, 2.0];
        clamp_twist(&mut v, 0.1, 1.0);
        assert!((v[0] - 0.06).abs() < 1e-12 && (v[1] - 0.08).abs() < 1e-12 && v[5] == 1.0);
        let mut w = [0.01, 0.0, 0.0, 0.1, 0.0, 0.0];
        clamp_twist(&mut w, 0.1, 1.0);
        assert_eq!(w, [0.01, 0.0, 0.0, 0.1, 0.0, 0.0]);
    }
}
