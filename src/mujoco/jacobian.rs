//! Jacobians of the compiled model: a site's 6-row Jacobian (`mj_jacSite`, read-only on the
//! data) restricted to the dofs a controller commands, and the damped-least-squares step that
//! turns a Cartesian twist into joint velocities with it.

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
/// bounded joint speed near a singularity; λ = 0 on a square, regular J is the exact inverse.
pub fn damped_least_squares(jac: &[[f64; 6]], v: &[f64; 6], lambda: f64) -> Vec<f64> {
    // A = J Jᵀ + λ² I (6×6, symmetric positive definite for λ > 0 or a full-rank J).
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
    let y = cholesky_solve(a, *v);
    jac.iter().map(|col| (0..6).map(|r| col[r] * y[r]).sum()).collect()
}

/// Solve `A x = b` for a symmetric positive (semi-)definite 6×6 `A` by Cholesky; a pivot that
/// is not positive (a rank-deficient A with λ = 0) gives that direction no motion.
fn cholesky_solve(a: [[f64; 6]; 6], b: [f64; 6]) -> [f64; 6] {
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
        let s = b[i] - (0..i).map(|k| l[i][k] * y[k]).sum::<f64>();
        y[i] = if l[i][i] > 0.0 { s / l[i][i] } else { 0.0 };
    }
    let mut x = [0.0; 6];
    for i in (0..6).rev() {
        let s = y[i] - (i + 1..6).map(|k| l[k][i] * x[k]).sum::<f64>();
        x[i] = if l[i][i] > 0.0 { s / l[i][i] } else { 0.0 };
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dls_inverts_a_regular_square_jacobian_and_damps_a_singular_one() {
        // A regular 6×6 J (columns): J dq must reproduce v.
        let jac: Vec<[f64; 6]> = (0..6)
            .map(|c| {
                let mut col = [0.0; 6];
                for (r, x) in col.iter_mut().enumerate() {
                    *x = if r == c { 2.0 } else { 0.1 * ((r * 7 + c * 3) % 5) as f64 };
                }
                col
            })
            .collect();
        let v = [0.1, -0.2, 0.3, 0.05, 0.0, -0.4];
        let dq = damped_least_squares(&jac, &v, 0.0);
        for r in 0..6 {
            let jv: f64 = (0..6).map(|c| jac[c][r] * dq[c]).sum();
            assert!((jv - v[r]).abs() < 1e-12, "row {r}: {jv} vs {}", v[r]);
        }
        // One column only (rank 1): the least-squares answer along it, nothing blows up.
        let one = vec![[1.0, 0.0, 0.0, 0.0, 0.0, 0.0]];
        let dq = damped_least_squares(&one, &[0.5, 1.0, 0.0, 0.0, 0.0, 0.0], 0.1);
        assert!((dq[0] - 0.5 / 1.01).abs() < 1e-12, "{dq:?}");
    }
}
