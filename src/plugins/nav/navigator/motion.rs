//! The command laws: a body-frame twist that steers a base at a target point, shaped for the
//! base's kinematics, and the heading step of a mocap mover.

use crate::math::wrap_angle;

use super::config::{Face, Kinematics, NavigatorConfig};

/// The body-frame twist `(vx, vy, wz)` that takes a base at `pose` (x, y, yaw) toward `target`.
/// `hold_yaw` is the heading a holonomic base keeps with `face: hold`; `speed` the pace (m/s).
pub fn twist_toward(
    cfg: &NavigatorConfig,
    kin: Kinematics,
    pose: [f64; 3],
    target: [f64; 2],
    hold_yaw: f64,
    speed: f64,
) -> [f64; 3] {
    let (dx, dy) = (target[0] - pose[0], target[1] - pose[1]);
    let heading = dy.atan2(dx);
    let err = wrap_angle(heading - pose[2]);
    let turn = |e: f64| (cfg.heading_gain * e).clamp(-cfg.max_angular_vel, cfg.max_angular_vel);
    match kin {
        Kinematics::Holonomic => {
            let d = dx.hypot(dy);
            let (ux, uy) = if d > 1e-9 { (dx / d, dy / d) } else { (0.0, 0.0) };
            let (s, c) = pose[2].sin_cos();
            let (wx, wy) = (speed * ux, speed * uy);
            let wz = match cfg.face {
                Face::Travel if d > 1e-9 => turn(err),
                Face::Travel => 0.0,
                Face::Hold => turn(wrap_angle(hold_yaw - pose[2])),
            };
            [c * wx + s * wy, -s * wx + c * wy, wz]
        }
        Kinematics::Ackermann => [speed.max(cfg.min_speed), 0.0, turn(err)],
        Kinematics::Unicycle | Kinematics::Auto => {
            if err.abs() > cfg.turn_in_place {
                [0.0, 0.0, turn(err)]
            } else {
                [speed, 0.0, turn(err)]
            }
        }
    }
}

/// The body-frame twist that moves a base at `pose` with the world velocity `v` (a steering
/// model's choice): its direction steered at as a target, its magnitude as the pace. A velocity
/// of (nearly) zero stops the base. A unicycle base turns toward it while driving the part of it
/// along its heading (`|v| cos e`, none when it points more than 90° away) instead of pivoting:
/// a model's velocity changes direction as it passes something, and a pivot stands still.
pub fn twist_along(
    cfg: &NavigatorConfig,
    kin: Kinematics,
    pose: [f64; 3],
    v: [f64; 2],
    hold_yaw: f64,
) -> [f64; 3] {
    let s = v[0].hypot(v[1]);
    if s < 1e-6 {
        return [0.0, 0.0, 0.0];
    }
    let target = [pose[0] + v[0] / s, pose[1] + v[1] / s];
    let t = twist_toward(cfg, kin, pose, target, hold_yaw, s);
    match kin {
        Kinematics::Unicycle | Kinematics::Auto => {
            let e = wrap_angle(v[1].atan2(v[0]) - pose[2]);
            [s * e.cos().max(0.0), 0.0, t[2]]
        }
        _ => t,
    }
}

/// The yaw-rate command that turns a base at heading `yaw` to `goal_yaw`, and whether it is there
/// (within `yaw_goal_tolerance`).
pub fn align(cfg: &NavigatorConfig, yaw: f64, goal_yaw: f64) -> (f64, bool) {
    let e = wrap_angle(goal_yaw - yaw);
    (
        (cfg.heading_gain * e).clamp(-cfg.max_angular_vel, cfg.max_angular_vel),
        e.abs() <= cfg.yaw_goal_tolerance,
    )
}

/// One physics step of a mocap mover's heading from `yaw` toward `goal` at `rate` (rad/s; 0 = at once).
pub fn turn_step(yaw: f64, goal: f64, rate: f64, dt: f64) -> f64 {
    let e = wrap_angle(goal - yaw);
    if rate <= 0.0 || e.abs() <= rate * dt {
        goal
    } else {
        yaw + rate * dt * e.signum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> NavigatorConfig {
        crate::plugin::typed_config(&serde_norway::from_str("speed: 0.5").unwrap()).unwrap()
    }

    #[test]
    fn unicycle_pivots_on_large_errors_and_drives_on_small_ones() {
        let c = cfg();
        let t = twist_toward(&c, Kinematics::Unicycle, [0.0, 0.0, 0.0], [0.0, 1.0], 0.0, 0.5);
        assert_eq!(t, [0.0, 0.0, 1.5], "90° off: pivot at the capped rate");
        let t = twist_toward(&c, Kinematics::Unicycle, [0.0, 0.0, 0.0], [1.0, 0.1], 0.0, 0.5);
        assert_eq!(t[0], 0.5);
        assert!((t[2] - 2.0 * 0.1f64.atan()).abs() < 1e-12);
    }

    #[test]
    fn holonomic_moves_in_the_world_direction_whatever_its_heading() {
        let mut c = cfg();
        c.face = Face::Hold;
        let t = twist_toward(
            &c,
            Kinematics::Holonomic,
            [0.0, 0.0, std::f64::consts::FRAC_PI_2],
            [1.0, 0.0],
            0.0,
            0.5,
        );
        // facing +y, travelling +x: body-frame velocity is to the right (−y)
        assert!(t[0].abs() < 1e-12 && (t[1] + 0.5).abs() < 1e-12, "{t:?}");
        assert_eq!(t[2], -1.5, "hold turns back toward the held heading 0");
    }

    #[test]
    fn ackermann_never_stops_to_pivot() {
        let c = cfg();
        let t = twist_toward(&c, Kinematics::Ackermann, [0.0, 0.0, 0.0], [-1.0, 0.0], 0.0, 0.5);
        assert_eq!(t[0], 0.5);
        assert_eq!(t[2].abs(), 1.5);
    }

    #[test]
    fn turn_step_is_rate_limited() {
        assert!((turn_step(0.0, 1.0, 3.0, 0.01) - 0.03).abs() < 1e-12);
        assert_eq!(turn_step(0.0, 1.0, 0.0, 0.01), 1.0);
        assert_eq!(turn_step(0.99, 1.0, 3.0, 0.01), 1.0);
    }
}
