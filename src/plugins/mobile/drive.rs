//! Drive arithmetic the base controllers (`diff_drive`, `omni_drive`, `ackermann_drive`) share:
//! the planar odometry integrator ([`Odom2d`]) and the slew limiter ([`ramp`]).

/// Move `current` towards `target` by at most `max_delta` (a slew / acceleration limit applied
/// over one step); `max_delta <= 0` means no limit.
pub fn ramp(current: f64, target: f64, max_delta: f64) -> f64 {
    if max_delta <= 0.0 {
        return target;
    }
    current + (target - current).clamp(-max_delta, max_delta)
}

/// Planar dead reckoning in the `odom` frame.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Odom2d {
    /// x (m).
    pub x: f64,
    /// y (m).
    pub y: f64,
    /// Heading (rad), unwrapped.
    pub yaw: f64,
}

impl Odom2d {
    /// Advance by a body-frame twist held for `dt` seconds. The twist is integrated exactly
    /// (constant body twist = a circular arc), so a constant-curvature drive does not accumulate
    /// integration error; for a vanishing yaw change it is the midpoint rule.
    pub fn integrate(&mut self, vx: f64, vy: f64, wz: f64, dt: f64) {
        let dth = wz * dt;
        // Body-frame displacement over the step, exactly, for constant (vx, vy, wz):
        // ∫ R(wz t) v dt = [ sin(dth)/wz, -(1-cos dth)/wz ; (1-cos dth)/wz, sin(dth)/wz ] v.
        let (a, b) = if dth.abs() < 1e-9 {
            (dt * (1.0 - dth * dth / 6.0), dt * dth / 2.0)
        } else {
            (dth.sin() / wz, (1.0 - dth.cos()) / wz)
        };
        let dx_b = a * vx - b * vy;
        let dy_b = b * vx + a * vy;
        let (s, c) = self.yaw.sin_cos();
        self.x += c * dx_b - s * dy_b;
        self.y += s * dx_b + c * dy_b;
        self.yaw += dth;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arc_integration_is_exact() {
        // 1 m/s at 1 rad/s for π s: a half circle of radius 1 → (0, 2), yaw π.
        let mut o = Odom2d::default();
        let n = 1000;
        let dt = std::f64::consts::PI / n as f64;
        for _ in 0..n {
            o.integrate(1.0, 0.0, 1.0, dt);
        }
        assert!(
            o.x.abs() < 1e-9
                && (o.y - 2.0).abs() < 1e-9
                && (o.yaw - std::f64::consts::PI).abs() < 1e-12,
            "{o:?}"
        );
        // Pure strafe at yaw 0 moves along +y.
        let mut o = Odom2d::default();
        o.integrate(0.0, 0.5, 0.0, 2.0);
        assert!((o.y - 1.0).abs() < 1e-12 && o.x.abs() < 1e-12);
    }

    #[test]
    fn ramp_limits_and_unlimited() {
        assert_eq!(ramp(0.0, 1.0, 0.1), 0.1);
        assert_eq!(ramp(0.0, -1.0, 0.0), -1.0);
    }
}
