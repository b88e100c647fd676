//! Rigid-body math on plain arrays: quaternions `[w, x, y, z]` (MuJoCo order) unless a name says
//! `xyzw` (ROS order), vectors `[x, y, z]`, and [`Pose`] composition.

use crate::context::entities::Pose;

/// Quaternion [w, x, y, z] from roll, pitch, yaw (rad; fixed-axis XYZ, REP 103).
pub fn quat_from_rpy(r: f64, p: f64, y: f64) -> [f64; 4] {
    let (sr, cr) = (r * 0.5).sin_cos();
    let (sp, cp) = (p * 0.5).sin_cos();
    let (sy, cy) = (y * 0.5).sin_cos();
    [
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    ]
}

/// Yaw (rad) of a quaternion [w, x, y, z].
pub fn yaw_of(q: &[f64; 4]) -> f64 {
    let [w, x, y, z] = *q;
    (2.0 * (w * z + x * y)).atan2(1.0 - 2.0 * (y * y + z * z))
}

/// Rotate vector `v` by quaternion `q` ([w, x, y, z]).
pub fn quat_rotate(q: &[f64; 4], v: &[f64; 3]) -> [f64; 3] {
    let [w, x, y, z] = *q;
    let u = [x, y, z];
    let uv = cross(&u, v);
    let uuv = cross(&u, &uv);
    [
        v[0] + 2.0 * (w * uv[0] + uuv[0]),
        v[1] + 2.0 * (w * uv[1] + uuv[1]),
        v[2] + 2.0 * (w * uv[2] + uuv[2]),
    ]
}

/// Cross product.
pub fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// Dot product.
pub fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Euclidean length.
pub fn norm(v: &[f64; 3]) -> f64 {
    dot(v, v).sqrt()
}

/// Quaternion [w, x, y, z] of a rotation by `angle` (rad) about the unit `axis`.
pub fn axis_angle(axis: [f64; 3], angle: f64) -> [f64; 4] {
    let (s, c) = (angle * 0.5).sin_cos();
    [c, axis[0] * s, axis[1] * s, axis[2] * s]
}

/// Quaternion [w, x, y, z] of a rotation vector (axis × angle, rad); the identity below 1e-15.
pub fn rotvec_quat(v: [f64; 3]) -> [f64; 4] {
    let a = norm(&v);
    if a < 1e-15 {
        return [1.0, 0.0, 0.0, 0.0];
    }
    axis_angle([v[0] / a, v[1] / a, v[2] / a], a)
}

/// Shortest-arc rotation [w, x, y, z] taking unit vector `a` to unit vector `b`; for opposite
/// vectors a half turn about an axis perpendicular to `a` (about z when `a` is x).
pub fn quat_between(a: [f64; 3], b: [f64; 3]) -> [f64; 4] {
    let c = cross(&a, &b);
    let d = dot(&a, &b);
    if d < -1.0 + 1e-12 {
        let other = if a[0].abs() < 0.9 { [1.0, 0.0, 0.0] } else { [0.0, 1.0, 0.0] };
        let p = cross(&a, &other);
        let n = norm(&p);
        return [0.0, p[0] / n, p[1] / n, p[2] / n];
    }
    quat_normalize(&[1.0 + d, c[0], c[1], c[2]])
}

/// MuJoCo [w, x, y, z] → ROS [x, y, z, w].
pub fn wxyz_to_xyzw(q: &[f64; 4]) -> [f64; 4] {
    [q[1], q[2], q[3], q[0]]
}

/// Hamilton product `a ⊗ b`.
pub fn quat_mul(a: &[f64; 4], b: &[f64; 4]) -> [f64; 4] {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

/// Conjugate (the inverse of a unit quaternion).
pub fn quat_conj(q: &[f64; 4]) -> [f64; 4] {
    [q[0], -q[1], -q[2], -q[3]]
}

/// Compose rigid transforms: `(a ∘ b)` maps b's frame through a (`a.pos + a.rot·b.pos`, `a.q ⊗ b.q`).
pub fn compose(a: &Pose, b: &Pose) -> Pose {
    let r = crate::math::quat_rotate(&a.quat, &b.pos);
    Pose {
        pos: [a.pos[0] + r[0], a.pos[1] + r[1], a.pos[2] + r[2]],
        quat: quat_normalize(&quat_mul(&a.quat, &b.quat)),
    }
}

/// `a⁻¹ ∘ b`: b expressed in a's frame.
pub fn relative(a: &Pose, b: &Pose) -> Pose {
    let inv = quat_conj(&a.quat);
    let d = [b.pos[0] - a.pos[0], b.pos[1] - a.pos[1], b.pos[2] - a.pos[2]];
    Pose { pos: crate::math::quat_rotate(&inv, &d), quat: quat_normalize(&quat_mul(&inv, &b.quat)) }
}

/// Normalise a quaternion (the identity when its norm is below 1e-12).
pub fn quat_normalize(q: &[f64; 4]) -> [f64; 4] {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if n < 1e-12 {
        [1.0, 0.0, 0.0, 0.0]
    } else {
        [q[0] / n, q[1] / n, q[2] / n, q[3] / n]
    }
}

/// An angle wrapped into (-π, π] (rad).
pub fn wrap_angle(a: f64) -> f64 {
    use std::f64::consts::PI;
    let mut a = (a + PI).rem_euclid(2.0 * PI) - PI;
    if a <= -PI {
        a += 2.0 * PI;
    }
    a
}

/// Quaternion `[x, y, z, w]` (ROS order) of a pure yaw (rad).
pub fn yaw_quat_xyzw(yaw: f64) -> [f64; 4] {
    let (s, c) = (yaw * 0.5).sin_cos();
    [0.0, 0.0, s, c]
}

/// Quaternion [w, x, y, z] of a row-major rotation matrix (MuJoCo's `xmat`), by Shepperd's method
/// (the largest diagonal term picks the stable branch).
pub fn quat_from_mat(r: &[f64; 9]) -> [f64; 4] {
    let (m00, m01, m02, m10, m11, m12, m20, m21, m22) =
        (r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8]);
    let tr = m00 + m11 + m22;
    let q = if tr > 0.0 {
        let s = (tr + 1.0).sqrt() * 2.0;
        [0.25 * s, (m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s]
    } else if m00 > m11 && m00 > m22 {
        let s = (1.0 + m00 - m11 - m22).sqrt() * 2.0;
        [(m21 - m12) / s, 0.25 * s, (m01 + m10) / s, (m02 + m20) / s]
    } else if m11 > m22 {
        let s = (1.0 + m11 - m00 - m22).sqrt() * 2.0;
        [(m02 - m20) / s, (m01 + m10) / s, 0.25 * s, (m12 + m21) / s]
    } else {
        let s = (1.0 + m22 - m00 - m11).sqrt() * 2.0;
        [(m10 - m01) / s, (m02 + m20) / s, (m12 + m21) / s, 0.25 * s]
    };
    let q = quat_normalize(&q);
    if q[0] < 0.0 {
        [-q[0], -q[1], -q[2], -q[3]]
    } else {
        q
    }
}

/// The rotation vector (axis × angle, rad; angle in [0, π]) that turns `from` into `to`, both
/// [w, x, y, z], expressed in the frame they are both given in: `to = exp(v) ⊗ from`.
pub fn rotation_error(to: &[f64; 4], from: &[f64; 4]) -> [f64; 3] {
    let mut e = quat_mul(to, &quat_conj(from));
    if e[0] < 0.0 {
        e = [-e[0], -e[1], -e[2], -e[3]];
    }
    let s = (e[1] * e[1] + e[2] * e[2] + e[3] * e[3]).sqrt();
    if s < 1e-12 {
        return [2.0 * e[1], 2.0 * e[2], 2.0 * e[3]];
    }
    let k = 2.0 * s.atan2(e[0]) / s;
    [k * e[1], k * e[2], k * e[3]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quat_from_mat_inverts_the_rotation_and_the_error_is_the_axis_angle() {
        for (r, p, y) in [(0.3, -0.2, 1.1), (3.0, 0.1, -2.9), (0.0, 3.1, 0.0), (-1.5, 0.4, 0.2)] {
            let q = quat_from_rpy(r, p, y);
            // Row-major matrix of q: column j is q applied to unit axis j.
            let cols =
                [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]].map(|a| quat_rotate(&q, &a));
            let m = [
                cols[0][0], cols[1][0], cols[2][0], cols[0][1], cols[1][1], cols[2][1], cols[0][2],
                cols[1][2], cols[2][2],
            ];
            let back = quat_from_mat(&m);
            let sign = if q[0] < 0.0 { -1.0 } else { 1.0 };
            for i in 0..4 {
                assert!((back[i] - sign * q[i]).abs() < 1e-12, "{back:?} vs {q:?}");
            }
        }
        // 0.5 rad about z, then the error from identity is [0, 0, 0.5].
        let to = quat_from_rpy(0.0, 0.0, 0.5);
        let e = rotation_error(&to, &[1.0, 0.0, 0.0, 0.0]);
        assert!((e[2] - 0.5).abs() < 1e-12 && e[0].abs() < 1e-12 && e[1].abs() < 1e-12, "{e:?}");
        let e = rotation_error(&to, &to);
        assert!(e.iter().all(|x| x.abs() < 1e-12));
    }

    #[test]
    fn quat_between_turns_a_onto_b_and_rotvec_is_axis_angle() {
        let x = [1.0, 0.0, 0.0];
        for b in [[0.0, 1.0, 0.0], [0.6, 0.0, 0.8], [-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]] {
            let r = quat_rotate(&quat_between(x, b), &x);
            assert!((0..3).all(|i| (r[i] - b[i]).abs() < 1e-12), "{r:?} vs {b:?}");
        }
        assert_eq!(quat_between(x, [-1.0, 0.0, 0.0]), [0.0, 0.0, 0.0, 1.0]);
        let z = [0.0, 0.0, 1.0];
        let r = quat_rotate(&quat_between(z, [0.0, 0.0, -1.0]), &z);
        assert!((r[2] + 1.0).abs() < 1e-12, "{r:?}");
        let q = rotvec_quat([0.0, 0.0, 0.5]);
        let e = quat_from_rpy(0.0, 0.0, 0.5);
        assert!((0..4).all(|i| (q[i] - e[i]).abs() < 1e-15), "{q:?} vs {e:?}");
        assert_eq!(rotvec_quat([0.0; 3]), [1.0, 0.0, 0.0, 0.0]);
        assert_eq!(norm(&[3.0, 4.0, 12.0]), 13.0);
    }

    #[test]
    fn rpy_yaw_roundtrip() {
        let q = quat_from_rpy(0.0, 0.0, 1.0);
        assert!((yaw_of(&q) - 1.0).abs() < 1e-12);
        let v = quat_rotate(&q, &[1.0, 0.0, 0.0]);
        assert!((v[0] - 1f64.cos()).abs() < 1e-12 && (v[1] - 1f64.sin()).abs() < 1e-12);
    }

    #[test]
    fn relative_roundtrip() {
        let a = Pose { pos: [1.0, 2.0, 0.5], quat: quat_from_rpy(0.1, 0.2, 0.3) };
        let b = Pose { pos: [0.3, -0.2, 0.1], quat: quat_from_rpy(0.0, 0.0, 1.0) };
        let c = compose(&a, &b);
        let r = relative(&a, &c);
        for i in 0..3 {
            assert!((r.pos[i] - b.pos[i]).abs() < 1e-12);
        }
        assert!((r.quat[0] - b.quat[0]).abs() < 1e-12 && (r.quat[3] - b.quat[3]).abs() < 1e-12);
    }
}
