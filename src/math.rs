//! Rigid-body math on nalgebra's types ([`UnitQuaternion`], [`Vector3`], [`Isometry3`]) and the
//! one place that converts them to and from the arrays at the boundaries: MuJoCo's buffers and
//! spec fields hold quaternions as `[w, x, y, z]` and vectors as `[x, y, z]` ([`quat`], [`wxyz`],
//! [`vec3`], [`arr3`]), ROS messages as `[x, y, z, w]` ([`xyzw`]), and a [`Pose`] keeps MuJoCo's
//! arrays ([`Pose::iso`], [`Pose::from_iso`]). Functions whose names say `wxyz`/`xyzw`, or that
//! take a `[f64; 4]`, use those array orders.

pub use nalgebra::{Isometry3, Matrix3, Quaternion, Rotation3, UnitQuaternion, Vector3};

use crate::context::entities::Pose;

/// The unit quaternion of MuJoCo's `[w, x, y, z]` (normalised; the identity when its norm is
/// below 1e-12 or not finite).
pub fn quat(wxyz: &[f64; 4]) -> UnitQuaternion<f64> {
    let q = Quaternion::new(wxyz[0], wxyz[1], wxyz[2], wxyz[3]);
    let n = q.norm();
    if n.is_finite() && n >= 1e-12 {
        UnitQuaternion::new_unchecked(q / n)
    } else {
        UnitQuaternion::identity()
    }
}

/// MuJoCo's `[w, x, y, z]` of a unit quaternion.
pub fn wxyz(q: &UnitQuaternion<f64>) -> [f64; 4] {
    [q.w, q.i, q.j, q.k]
}

/// ROS's `[x, y, z, w]` of a unit quaternion.
pub fn xyzw(q: &UnitQuaternion<f64>) -> [f64; 4] {
    [q.i, q.j, q.k, q.w]
}

/// A vector of an `[x, y, z]` array.
pub fn vec3(v: &[f64; 3]) -> Vector3<f64> {
    Vector3::new(v[0], v[1], v[2])
}

/// The `[x, y, z]` array of a vector.
pub fn arr3(v: &Vector3<f64>) -> [f64; 3] {
    [v.x, v.y, v.z]
}

impl Pose {
    /// The rigid transform of this pose (its frame → the frame it is given in).
    pub fn iso(&self) -> Isometry3<f64> {
        Isometry3::from_parts(vec3(&self.pos).into(), quat(&self.quat))
    }

    /// The pose of a rigid transform.
    pub fn from_iso(t: &Isometry3<f64>) -> Pose {
        Pose { pos: arr3(&t.translation.vector), quat: wxyz(&t.rotation) }
    }
}

/// Quaternion [w, x, y, z] from roll, pitch, yaw (rad; fixed-axis XYZ, REP 103).
pub fn quat_from_rpy(r: f64, p: f64, y: f64) -> [f64; 4] {
    wxyz(&UnitQuaternion::from_euler_angles(r, p, y))
}

/// Roll, pitch, yaw (rad; fixed-axis XYZ, `R = Rz(yaw)·Ry(pitch)·Rx(roll)`, as REP 103 and URDF
/// state them) of a rotation, stable at ±90° pitch (then roll carries the whole turn about x and
/// yaw is 0). nalgebra's `euler_angles()` takes pitch by `asin` and divides by `cos(pitch)`, which
/// loses roll and yaw near ±90° pitch; the `atan2` forms here do not.
pub fn rpy_of(q: &UnitQuaternion<f64>) -> [f64; 3] {
    let m = q.to_rotation_matrix();
    let m = m.matrix();
    let c = m[(2, 1)].hypot(m[(2, 2)]);
    let pitch = (-m[(2, 0)]).atan2(c);
    if c < 1e-9 {
        return [(-m[(1, 2)]).atan2(m[(1, 1)]), pitch, 0.0];
    }
    [m[(2, 1)].atan2(m[(2, 2)]), pitch, m[(1, 0)].atan2(m[(0, 0)])]
}

/// Yaw (rad): the heading of the body x axis in the xy-plane, of a quaternion [w, x, y, z].
pub fn yaw_of(q: &[f64; 4]) -> f64 {
    let x = quat(q) * Vector3::x();
    x.y.atan2(x.x)
}

/// Shortest-arc rotation taking unit vector `a` to unit vector `b`; for opposite vectors (where
/// nalgebra's `rotation_between` has no answer) a half turn about an axis perpendicular to `a`
/// (about z when `a` is x).
pub fn quat_between(a: &Vector3<f64>, b: &Vector3<f64>) -> UnitQuaternion<f64> {
    if a.dot(b) < -1.0 + 1e-12 {
        let other = if a.x.abs() < 0.9 { Vector3::x() } else { Vector3::y() };
        let axis = nalgebra::Unit::new_normalize(a.cross(&other));
        return UnitQuaternion::from_axis_angle(&axis, std::f64::consts::PI);
    }
    UnitQuaternion::rotation_between(a, b).unwrap_or_else(UnitQuaternion::identity)
}

/// MuJoCo [w, x, y, z] → ROS [x, y, z, w] (a reordering, no normalisation).
pub fn wxyz_to_xyzw(q: &[f64; 4]) -> [f64; 4] {
    [q[1], q[2], q[3], q[0]]
}

/// Compose rigid transforms: `(a ∘ b)` maps b's frame through a (`a.pos + a.rot·b.pos`, `a.q ⊗ b.q`).
pub fn compose(a: &Pose, b: &Pose) -> Pose {
    Pose::from_iso(&(a.iso() * b.iso()))
}

/// `a⁻¹ ∘ b`: b expressed in a's frame.
pub fn relative(a: &Pose, b: &Pose) -> Pose {
    Pose::from_iso(&(a.iso().inv_mul(&b.iso())))
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

/// Quaternion `[w, x, y, z]` (MuJoCo order) of a pure yaw (rad): `[cos(yaw/2), 0, 0, sin(yaw/2)]`
/// (computed directly, so a mocap body's quaternion keeps `+0.0` in x and y).
pub fn yaw_quat_wxyz(yaw: f64) -> [f64; 4] {
    [(yaw / 2.0).cos(), 0.0, 0.0, (yaw / 2.0).sin()]
}

/// Quaternion `[x, y, z, w]` (ROS order) of a pure yaw (rad).
pub fn yaw_quat_xyzw(yaw: f64) -> [f64; 4] {
    xyzw(&UnitQuaternion::from_axis_angle(&Vector3::z_axis(), yaw))
}

/// The rotation of a row-major rotation matrix (MuJoCo's `xmat`), with `w >= 0`.
pub fn rot_of_xmat(r: &[f64; 9]) -> UnitQuaternion<f64> {
    let m = Rotation3::from_matrix_unchecked(Matrix3::from_row_slice(r));
    let q = UnitQuaternion::from_rotation_matrix(&m).into_inner();
    let q = q / q.norm();
    UnitQuaternion::new_unchecked(if q.w < 0.0 { -q } else { q })
}

/// Quaternion [w, x, y, z] (`w >= 0`) of a row-major rotation matrix (MuJoCo's `xmat`).
pub fn quat_from_mat(r: &[f64; 9]) -> [f64; 4] {
    wxyz(&rot_of_xmat(r))
}

/// The rotation vector (axis × angle, rad; angle in [0, π]) that turns `from` into `to`,
/// expressed in the frame they are both given in: `to = exp(v) ⊗ from`. The angle comes from
/// `atan2(|v|, w)`, exact for small errors, where nalgebra's `scaled_axis()` (an `acos` of `w`)
/// loses half the digits.
pub fn rotation_error(to: &UnitQuaternion<f64>, from: &UnitQuaternion<f64>) -> Vector3<f64> {
    let mut e = (to * from.inverse()).into_inner();
    if e.w < 0.0 {
        e = -e;
    }
    let v = e.imag();
    let s = v.norm();
    if s < 1e-12 {
        return v * 2.0;
    }
    v * (2.0 * s.atan2(e.w) / s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < tol)
    }

    #[test]
    fn quat_from_mat_inverts_the_rotation_and_the_error_is_the_axis_angle() {
        for (r, p, y) in [(0.3, -0.2, 1.1), (3.0, 0.1, -2.9), (0.0, 3.1, 0.0), (-1.5, 0.4, 0.2)] {
            let q = quat_from_rpy(r, p, y);
            // Row-major matrix of q: column j is q applied to unit axis j.
            let cols = [Vector3::x(), Vector3::y(), Vector3::z()].map(|a| quat(&q) * a);
            let m = [
                cols[0][0], cols[1][0], cols[2][0], cols[0][1], cols[1][1], cols[2][1], cols[0][2],
                cols[1][2], cols[2][2],
            ];
            let back = quat_from_mat(&m);
            let sign = if q[0] < 0.0 { -1.0 } else { 1.0 };
            assert!(close(&back, &q.map(|x| sign * x), 1e-12), "{back:?} vs {q:?}");
        }
        // 0.5 rad about z, then the error from identity is [0, 0, 0.5].
        let to = UnitQuaternion::from_euler_angles(0.0, 0.0, 0.5);
        let e = rotation_error(&to, &UnitQuaternion::identity());
        assert!(close(e.as_slice(), &[0.0, 0.0, 0.5], 1e-12), "{e:?}");
        assert!(rotation_error(&to, &to).norm() < 1e-12);
        // A 1e-7 rad error keeps its digits (an acos of w would be off by ~1e-9 here).
        let tiny = UnitQuaternion::from_euler_angles(1e-7, 0.0, 0.0);
        let e = rotation_error(&tiny, &UnitQuaternion::identity());
        assert!((e.x - 1e-7).abs() < 1e-20 && e.y == 0.0 && e.z == 0.0, "{e:?}");
    }

    #[test]
    fn quat_between_turns_a_onto_b() {
        let x = Vector3::x();
        for b in [[0.0, 1.0, 0.0], [0.6, 0.0, 0.8], [-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]] {
            let r = quat_between(&x, &vec3(&b)) * x;
            assert!(close(r.as_slice(), &b, 1e-12), "{r:?} vs {b:?}");
        }
        assert!(close(&wxyz(&quat_between(&x, &-x)), &[0.0, 0.0, 0.0, 1.0], 1e-15));
        let z = Vector3::z();
        let r = quat_between(&z, &-z) * z;
        assert!((r.z + 1.0).abs() < 1e-12, "{r:?}");
    }

    #[test]
    fn rpy_yaw_roundtrip_and_the_array_orders() {
        let q = quat_from_rpy(0.0, 0.0, 1.0);
        assert!((yaw_of(&q) - 1.0).abs() < 1e-12);
        let v = quat(&q) * Vector3::x();
        assert!((v.x - 1f64.cos()).abs() < 1e-12 && (v.y - 1f64.sin()).abs() < 1e-12);
        // The same rotation in both orders; a pure yaw's ROS quaternion.
        assert_eq!(wxyz_to_xyzw(&q), xyzw(&quat(&q)));
        assert_eq!(yaw_quat_xyzw(1.0), [0.0, 0.0, 0.5f64.sin(), 0.5f64.cos()]);
        // Not normalisable: the identity.
        assert_eq!(wxyz(&quat(&[0.0; 4])), [1.0, 0.0, 0.0, 0.0]);
        assert_eq!(wxyz(&quat(&[2.0, 0.0, 0.0, 0.0])), [1.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn rpy_roundtrip_including_gimbal() {
        use std::f64::consts::FRAC_PI_2;
        for rpy in
            [[0.1, 0.2, 0.3], [-2.0, 1.0, 3.0], [0.4, FRAC_PI_2, 0.0], [0.4, -FRAC_PI_2, 0.0]]
        {
            let q = UnitQuaternion::from_euler_angles(rpy[0], rpy[1], rpy[2]);
            let back = rpy_of(&q);
            let q2 = UnitQuaternion::from_euler_angles(back[0], back[1], back[2]);
            assert!(rotation_error(&q, &q2).norm() < 1e-12, "{rpy:?} -> {back:?}");
            if rpy[1].abs() < 1.0 {
                assert!(close(&back, &rpy, 1e-12), "{rpy:?} -> {back:?}");
            }
        }
    }

    #[test]
    fn relative_roundtrip() {
        let a = Pose { pos: [1.0, 2.0, 0.5], quat: quat_from_rpy(0.1, 0.2, 0.3) };
        let b = Pose { pos: [0.3, -0.2, 0.1], quat: quat_from_rpy(0.0, 0.0, 1.0) };
        let c = compose(&a, &b);
        // a ∘ b by hand: a.pos + a.rot·b.pos.
        let want = vec3(&a.pos) + quat(&a.quat) * vec3(&b.pos);
        assert!(close(&c.pos, want.as_slice(), 1e-15), "{c:?}");
        let r = relative(&a, &c);
        assert!(close(&r.pos, &b.pos, 1e-12) && close(&r.quat, &b.quat, 1e-12), "{r:?}");
    }
}
