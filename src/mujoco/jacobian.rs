//! Jacobians of the compiled model: a site's 6-row Jacobian (`mj_jacSite`, read-only on the
//! data) restricted to the dofs a controller commands, and the damped-least-squares step that
//! turns a Cartesian twist into joint velocities with it.

use nalgebra::{DMatrix, DVector};

use crate::context::Data;

/// The Jacobian of site `site` at the current kinematics (as of the last forward pass), one
/// column per dof in `dofs`: rows 0..3 the world-frame linear velocity of the site's origin per
/// unit dof velocity, rows 3..6 the world-frame angular velocity.
pub fn site_jacobian(data: &Data, site: usize, dofs: &[usize]) -> Vec<[f64; 6]> {
    let nv = data.model().ffi().nv as usize;
    let (jacp, jacr) = data.jac_site(true, true, site);
    dofs.iter()
        .map(|&d| {
            [jacp[d], jacp[nv + d], jacp[2 * nv + d], jacr[d], jacr[nv + d], jacr[2 * nv + d]]
        })
        .collect()
}

/// Damped least squares: the joint velocities `dq = Jᵀ (J Jᵀ + λ² I)⁻¹ v` for the twist `v`
/// ([linear; angular]) with the Jacobian given by columns. λ (`lambda`) trades exactness for
/// bounded joint speed near a singularity.
///
/// λ > 0 makes `J Jᵀ + λ² I` symmetric positive definite: solved by Cholesky. λ = 0 (and a λ
/// so small that λ² vanishes, where Cholesky refuses the semi-definite `J Jᵀ`) takes the λ → 0
/// limit instead, the pseudo-inverse `dq = J⁺ v` by SVD: the least-squares twist with the least
/// joint motion, exact on a square, regular J; singular values below 1e-12 of the largest count
/// as zero, so a direction the arm cannot move in gets no motion.
pub fn damped_least_squares(jac: &[[f64; 6]], v: &[f64; 6], lambda: f64) -> Vec<f64> {
    if jac.is_empty() {
        return Vec::new();
    }
    let j = DMatrix::from_fn(6, jac.len(), |r, c| jac[c][r]);
    let v = DVector::from_column_slice(v);
    let chol = if lambda > 0.0 {
        (&j * j.transpose() + DMatrix::identity(6, 6) * (lambda * lambda)).cholesky()
    } else {
        None
    };
    let dq = match chol {
        Some(ch) => j.tr_mul(&ch.solve(&v)),
        None => {
            let svd = j.svd(true, true);
            let eps = 1e-12 * svd.singular_values.max();
            svd.solve(&v, eps).expect("u and vᵀ were computed and eps >= 0")
        }
    };
    dq.iter().copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-written solver this module used before nalgebra (kept as the reference): `Jᵀ y`
    /// with `(J Jᵀ + λ² I) y = v` by Cholesky, a pivot <= 1e-18 giving its direction no motion.
    fn hand_dls(jac: &[[f64; 6]], v: &[f64; 6], lambda: f64) -> Vec<f64> {
        let mut a = [[0.0; 6]; 6];
        for col in jac {
            for r in 0..6 {
                for c in 0..6 {
                    a[r][c] += col[r] * col[c];
                }
            }
        }
        for (r, row) in a.iter_mut().enumerate() {
            row[r] += lambda * lambda;
        }
        let mut l = [[0.0; 6]; 6];
        for i in 0..6 {
            for j in 0..=i {
                let s: f64 = a[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
                if i == j {
                    l[i][i] = if s > 1e-18 { s.sqrt() } else { 0.0 };
                } else {
                    l[i][j] = if l[j][j] > 0.0 { s / l[j][j] } else { 0.0 };
                }
            }
        }
        let mut y = [0.0; 6];
        for i in 0..6 {
            let s = v[i] - (0..i).map(|k| l[i][k] * y[k]).sum::<f64>();
            y[i] = if l[i][i] > 0.0 { s / l[i][i] } else { 0.0 };
        }
        let mut x = [0.0; 6];
        for i in (0..6).rev() {
            let s = y[i] - (i + 1..6).map(|k| l[k][i] * x[k]).sum::<f64>();
            x[i] = if l[i][i] > 0.0 { s / l[i][i] } else { 0.0 };
        }
        jac.iter().map(|col| (0..6).map(|r| col[r] * x[r]).sum()).collect()
    }

    fn regular() -> Vec<[f64; 6]> {
        (0..6)
            .map(|c| {
                let mut col = [0.0; 6];
                for (r, x) in col.iter_mut().enumerate() {
                    *x = if r == c { 2.0 } else { 0.1 * ((r * 7 + c * 3) % 5) as f64 };
                }
                col
            })
            .collect()
    }

    fn apply(jac: &[[f64; 6]], dq: &[f64]) -> [f64; 6] {
        let mut out = [0.0; 6];
        for (col, q) in jac.iter().zip(dq) {
            for r in 0..6 {
                out[r] += col[r] * q;
            }
        }
        out
    }

    #[test]
    fn dls_inverts_a_regular_square_jacobian_and_damps_a_singular_one() {
        // A regular 6×6 J at λ = 0 (the SVD pseudo-inverse): J dq reproduces v.
        let jac = regular();
        let v = [0.1, -0.2, 0.3, 0.05, 0.0, -0.4];
        let jv = apply(&jac, &damped_least_squares(&jac, &v, 0.0));
        for r in 0..6 {
            assert!((jv[r] - v[r]).abs() < 1e-12, "row {r}: {} vs {}", jv[r], v[r]);
        }
        // One column only (rank 1), damped: the answer along it, 0.5 / (1 + 0.1²).
        let one = vec![[1.0, 0.0, 0.0, 0.0, 0.0, 0.0]];
        let dq = damped_least_squares(&one, &[0.5, 1.0, 0.0, 0.0, 0.0, 0.0], 0.1);
        assert!((dq[0] - 0.5 / 1.01).abs() < 1e-12, "{dq:?}");
        // ... and undamped (J Jᵀ semi-definite): the least-squares 0.5, nothing blows up.
        let dq = damped_least_squares(&one, &[0.5, 1.0, 0.0, 0.0, 0.0, 0.0], 0.0);
        assert!((dq[0] - 0.5).abs() < 1e-15, "{dq:?}");
        assert!(damped_least_squares(&[], &v, 0.0).is_empty());
    }

    #[test]
    fn the_cholesky_solve_matches_the_hand_written_one() {
        // The damped solve (nalgebra's Cholesky) equals the former hand-written Cholesky.
        let v = [0.1, -0.2, 0.3, 0.05, 0.0, -0.4];
        let five: Vec<[f64; 6]> = regular().into_iter().take(5).collect();
        for (jac, lambda) in [(regular(), 0.01), (regular(), 0.5), (five.clone(), 0.01)] {
            let (ours, hand) = (damped_least_squares(&jac, &v, lambda), hand_dls(&jac, &v, lambda));
            let d = ours.iter().zip(&hand).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            assert!(d < 1e-12, "λ {lambda}: {ours:?} vs {hand:?}");
        }
        // λ = 0 on a rank-5 J and a twist it cannot make: the pseudo-inverse's answer is the
        // least-squares one (normal equations Jᵀ (J dq - v) = 0). The hand-written solve zeroed
        // the last pivot, so it met the first five rows exactly and ignored the sixth: its
        // residual is larger.
        let resid = |dq: &[f64]| {
            let jv = apply(&five, dq);
            (0..6).map(|k| jv[k] - v[k]).collect::<Vec<f64>>()
        };
        let r = resid(&damped_least_squares(&five, &v, 0.0));
        for col in &five {
            let g: f64 = (0..6).map(|k| col[k] * r[k]).sum();
            assert!(g.abs() < 1e-12, "normal equation residual {g}");
        }
        let rh = resid(&hand_dls(&five, &v, 0.0));
        let norm = |r: &[f64]| r.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!(rh[..5].iter().all(|x| x.abs() < 1e-12), "{rh:?}");
        assert!(norm(&r) < norm(&rh) - 1e-3, "{} vs {}", norm(&r), norm(&rh));
    }

    type Solver = dyn Fn(&[[f64; 6]], &[f64; 6]) -> Vec<f64>;

    #[test]
    fn undamped_ik_converges_on_a_planar_arm() {
        // A planar two-link arm (links 0.5 m and 0.4 m) driving its tip to a reachable point with
        // λ = 0: only the x and y rows are non-zero, so J Jᵀ is semi-definite (rank 2) at every
        // step. Both the SVD fallback and the former hand-written solve reach the point.
        let (l1, l2, target) = (0.5, 0.4, [0.3, 0.6]);
        let tip = |q: &[f64]| {
            [l1 * q[0].cos() + l2 * (q[0] + q[1]).cos(), l1 * q[0].sin() + l2 * (q[0] + q[1]).sin()]
        };
        let run = |solve: &Solver| {
            let mut q = vec![0.2, 0.9];
            for _ in 0..200 {
                let p = tip(&q);
                let (s1, c1) = q[0].sin_cos();
                let (s12, c12) = (q[0] + q[1]).sin_cos();
                let jac = [
                    [-l1 * s1 - l2 * s12, l1 * c1 + l2 * c12, 0.0, 0.0, 0.0, 0.0],
                    [-l2 * s12, l2 * c12, 0.0, 0.0, 0.0, 0.0],
                ];
                let e = [target[0] - p[0], target[1] - p[1], 0.0, 0.0, 0.0, 0.0];
                let dq = solve(&jac, &e);
                q[0] += 0.5 * dq[0];
                q[1] += 0.5 * dq[1];
            }
            q
        };
        let ours = run(&|j, e| damped_least_squares(j, e, 0.0));
        let hand = run(&|j, e| hand_dls(j, e, 0.0));
        for q in [&ours, &hand] {
            let p = tip(q);
            assert!((p[0] - target[0]).hypot(p[1] - target[1]) < 1e-12, "{q:?} -> {p:?}");
        }
        assert!((ours[0] - hand[0]).abs() < 1e-9 && (ours[1] - hand[1]).abs() < 1e-9);
    }
}
