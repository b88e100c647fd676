//! ORCA: optimal reciprocal collision avoidance (van den Berg, Guy, Lin, Manocha, "Reciprocal
//! n-Body Collision Avoidance", ISRR 2011 — the algorithm of the RVO2 library), in 2-D, f64.
//!
//! Each neighbour `B` of an agent `A` turns into one half-plane of permitted velocities: the
//! velocity obstacle of `B` for the time horizon τ (a cone truncated by a circle of radius
//! `(rA + rB) / τ`), `u` the smallest change of the relative velocity that leaves it, and the
//! half-plane through `vA + share · u` with outward normal `u`. `share` is A's part of the
//! avoidance: ½ between two agents that both run ORCA (each takes half: reciprocity), 1 against
//! one that does not react (a robot on its own controller, a driven prop). Agents already
//! overlapping get the half-plane that separates them within one update period `dt`.
//!
//! The new velocity is the one nearest the preferred velocity inside every half-plane and the
//! `max_speed` disc: an incremental 2-D linear program over the lines, in the lines' order; when
//! the half-planes leave nothing (a dense crowd), the 3-D fallback minimises the largest violation
//! instead, so the agent still gets the safest velocity there is.
//!
//! Why not a crate: the maintained Rust port (`dodgy_2d`) computes in f32, applies the full `u`
//! (not `share · u`) whenever the relative velocity lies outside the obstacle, and picks a random
//! direction from an unseeded thread-local generator for two coincident agents — a run would stop
//! being a function of its seed. Here that case takes the caller's deterministic `fallback`.

/// A 2-D vector (m or m/s).
pub type V2 = [f64; 2];

/// Below this a denominator is treated as zero (parallel lines).
pub const EPSILON: f64 = 1e-9;

fn add(a: V2, b: V2) -> V2 {
    [a[0] + b[0], a[1] + b[1]]
}
fn sub(a: V2, b: V2) -> V2 {
    [a[0] - b[0], a[1] - b[1]]
}
fn scale(a: V2, s: f64) -> V2 {
    [a[0] * s, a[1] * s]
}
/// Dot product.
pub fn dot(a: V2, b: V2) -> f64 {
    a[0] * b[0] + a[1] * b[1]
}
/// The 2-D cross product `a × b` (positive when `b` is counter-clockwise of `a`).
pub fn det(a: V2, b: V2) -> f64 {
    a[0] * b[1] - a[1] * b[0]
}
/// Euclidean length.
pub fn norm(a: V2) -> f64 {
    dot(a, a).sqrt()
}
fn unit(a: V2) -> V2 {
    let n = norm(a);
    if n > 0.0 {
        scale(a, 1.0 / n)
    } else {
        [0.0, 0.0]
    }
}

/// One agent as ORCA sees it: where it is, how fast it moves, how big it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agent {
    /// Position (m), world frame.
    pub pos: V2,
    /// Current velocity (m/s), world frame.
    pub vel: V2,
    /// Radius of its disc (m).
    pub radius: f64,
}

/// A half-plane of permitted velocities: everything on the LEFT of `dir` through `point`
/// (`det(dir, v - point) >= 0`). `dir` is a unit vector.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// A point on the boundary (m/s).
    pub point: V2,
    /// Unit direction of the boundary; the permitted side is to its left.
    pub dir: V2,
}

impl Line {
    /// How far `v` lies on the forbidden side (m/s): ≤ 0 inside the half-plane.
    pub fn violation(&self, v: V2) -> f64 {
        det(self.dir, sub(self.point, v))
    }
}

/// The ORCA half-plane `me` must keep to so as not to collide with `other` within `tau` seconds,
/// taking `share` of the avoidance (½ reciprocal, 1 against a non-reacting agent). `dt` is the
/// update period (used only when the two already overlap); `fallback` is the unit direction to
/// push apart along when the geometry names none (coincident agents with equal velocities).
pub fn orca_line(me: &Agent, other: &Agent, share: f64, tau: f64, dt: f64, fallback: V2) -> Line {
    let rel_pos = sub(other.pos, me.pos);
    let rel_vel = sub(me.vel, other.vel);
    let dist_sq = dot(rel_pos, rel_pos);
    let r = me.radius + other.radius;
    let r_sq = r * r;
    let (dir, u);
    if dist_sq > r_sq {
        // Not colliding: the truncated cone of the velocity obstacle.
        let inv_tau = 1.0 / tau;
        let w = sub(rel_vel, scale(rel_pos, inv_tau));
        let w_len_sq = dot(w, w);
        let d1 = dot(w, rel_pos);
        if d1 < 0.0 && d1 * d1 > r_sq * w_len_sq {
            // Nearest boundary point is on the cut-off circle.
            let w_len = w_len_sq.sqrt();
            let uw = scale(w, 1.0 / w_len);
            dir = [uw[1], -uw[0]];
            u = scale(uw, r * inv_tau - w_len);
        } else {
            // Nearest boundary point is on a leg of the cone.
            let leg = (dist_sq - r_sq).sqrt();
            let d = if det(rel_pos, w) > 0.0 {
                [rel_pos[0] * leg - rel_pos[1] * r, rel_pos[0] * r + rel_pos[1] * leg]
            } else {
                [-(rel_pos[0] * leg + rel_pos[1] * r), -(-rel_pos[0] * r + rel_pos[1] * leg)]
            };
            dir = scale(d, 1.0 / dist_sq);
            u = sub(scale(dir, dot(rel_vel, dir)), rel_vel);
        }
    } else {
        // Overlapping: separate within one update period.
        let inv_dt = 1.0 / dt;
        let w = sub(rel_vel, scale(rel_pos, inv_dt));
        let w_len = norm(w);
        let uw = if w_len > 0.0 { scale(w, 1.0 / w_len) } else { fallback };
        dir = [uw[1], -uw[0]];
        u = scale(uw, r * inv_dt - w_len);
    }
    Line { point: add(me.vel, scale(u, share)), dir }
}

/// Optimise along line `i` subject to lines `0..i` and the speed disc. `None`: infeasible.
fn lp1(lines: &[Line], i: usize, radius: f64, opt: V2, dir_opt: bool) -> Option<V2> {
    let l = lines[i];
    let dp = dot(l.point, l.dir);
    let disc = dp * dp + radius * radius - dot(l.point, l.point);
    if disc < 0.0 {
        return None; // the disc does not reach this line
    }
    let sq = disc.sqrt();
    let (mut t_left, mut t_right) = (-dp - sq, -dp + sq);
    for o in &lines[..i] {
        let denom = det(l.dir, o.dir);
        let numer = det(o.dir, sub(l.point, o.point));
        if denom.abs() <= EPSILON {
            if numer < 0.0 {
                return None; // parallel and on the forbidden side
            }
            continue;
        }
        let t = numer / denom;
        if denom >= 0.0 {
            t_right = t_right.min(t);
        } else {
            t_left = t_left.max(t);
        }
        if t_left > t_right {
            return None;
        }
    }
    let t = if dir_opt {
        if dot(opt, l.dir) > 0.0 {
            t_right
        } else {
            t_left
        }
    } else {
        dot(l.dir, sub(opt, l.point)).clamp(t_left, t_right)
    };
    Some(add(l.point, scale(l.dir, t)))
}

/// The 2-D program: the velocity nearest `opt` (or, with `dir_opt`, farthest along the unit
/// direction `opt`) in every half-plane and the disc. Returns the result and the index of the
/// first line that made it infeasible (`lines.len()` when none did).
fn lp2(lines: &[Line], radius: f64, opt: V2, dir_opt: bool) -> (V2, usize) {
    let mut result = if dir_opt {
        scale(opt, radius)
    } else if dot(opt, opt) > radius * radius {
        scale(unit(opt), radius)
    } else {
        opt
    };
    for (i, l) in lines.iter().enumerate() {
        if l.violation(result) > 0.0 {
            match lp1(lines, i, radius, opt, dir_opt) {
                Some(r) => result = r,
                None => return (result, i),
            }
        }
    }
    (result, lines.len())
}

/// The 3-D fallback: from line `begin` on, minimise the largest violation of any half-plane.
fn lp3(lines: &[Line], begin: usize, radius: f64, mut result: V2) -> V2 {
    let mut distance = 0.0;
    for i in begin..lines.len() {
        let li = lines[i];
        if li.violation(result) <= distance {
            continue;
        }
        let mut proj: Vec<Line> = Vec::with_capacity(i);
        for lj in &lines[..i] {
            let d = det(li.dir, lj.dir);
            let point = if d.abs() <= EPSILON {
                if dot(li.dir, lj.dir) > 0.0 {
                    continue; // same direction: line i already dominates
                }
                scale(add(li.point, lj.point), 0.5)
            } else {
                add(li.point, scale(li.dir, det(lj.dir, sub(li.point, lj.point)) / d))
            };
            proj.push(Line { point, dir: unit(sub(lj.dir, li.dir)) });
        }
        let before = result;
        let (r, fail) = lp2(&proj, radius, [-li.dir[1], li.dir[0]], true);
        // A failure here is floating-point noise: keep the previous answer.
        result = if fail < proj.len() { before } else { r };
        distance = li.violation(result);
    }
    result
}

/// The velocity nearest `preferred` that satisfies every half-plane in `lines` and stays within
/// `max_speed`; when no velocity satisfies them all, the one whose largest violation is smallest.
pub fn solve(lines: &[Line], preferred: V2, max_speed: f64) -> V2 {
    let (v, fail) = lp2(lines, max_speed, preferred, false);
    if fail < lines.len() {
        lp3(lines, fail, max_speed, v)
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_half_plane_projects_the_preferred_velocity() {
        // permitted: x <= 0.5 (left of a line pointing +y through (0.5, 0))
        let l = Line { point: [0.5, 0.0], dir: [0.0, 1.0] };
        assert!(l.violation([1.0, 0.0]) > 0.0 && l.violation([0.0, 0.0]) < 0.0);
        let v = solve(&[l], [1.0, 0.3], 2.0);
        assert!((v[0] - 0.5).abs() < 1e-12 && (v[1] - 0.3).abs() < 1e-12, "{v:?}");
        // the speed disc clips the preferred velocity
        let v = solve(&[], [3.0, 4.0], 1.0);
        assert!((v[0] - 0.6).abs() < 1e-12 && (v[1] - 0.8).abs() < 1e-12, "{v:?}");
    }

    #[test]
    fn infeasible_lines_minimise_the_largest_violation() {
        // x <= -1 and x >= 1 cannot both hold: the fallback splits the violation (x = 0).
        let a = Line { point: [-1.0, 0.0], dir: [0.0, 1.0] };
        let b = Line { point: [1.0, 0.0], dir: [0.0, -1.0] };
        let v = solve(&[a, b], [0.7, 0.0], 5.0);
        assert!(v[0].abs() < 1e-9, "{v:?}");
        assert!((a.violation(v) - 1.0).abs() < 1e-9 && (b.violation(v) - 1.0).abs() < 1e-9);
    }
}
