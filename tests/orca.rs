//! ORCA (`roqsim::nav::orca`) against the properties of the published algorithm: reciprocity
//! (each of two avoiding agents takes half of the change, a non-reacting one leaves all of it to
//! the other), the chosen velocity is the permitted one nearest the preferred velocity, agents
//! that are not on a collision course are left alone, and agents stepping by their ORCA
//! velocities never come closer than the sum of their radii.

use roqsim::nav::orca::{dot, norm, orca_line, solve, Agent, Line};

fn agent(pos: [f64; 2], vel: [f64; 2]) -> Agent {
    Agent { pos, vel, radius: 0.3 }
}

#[test]
fn each_of_two_avoiding_agents_takes_half_and_a_non_reacting_one_none() {
    let a = agent([-2.0, 0.1], [1.0, 0.0]);
    let b = agent([2.0, -0.1], [-1.0, 0.0]);
    let la = orca_line(&a, &b, 0.5, 3.0, 0.02, [1.0, 0.0]);
    let lb = orca_line(&b, &a, 0.5, 3.0, 0.02, [-1.0, 0.0]);
    let ua = [la.point[0] - a.vel[0], la.point[1] - a.vel[1]];
    let ub = [lb.point[0] - b.vel[0], lb.point[1] - b.vel[1]];
    assert!(norm(ua) > 0.01, "on a collision course: a change is needed ({ua:?})");
    assert!((ua[0] + ub[0]).abs() < 1e-12 && (ua[1] + ub[1]).abs() < 1e-12, "{ua:?} vs {ub:?}");
    // the half-planes are mirror images: same boundary direction, opposite sides
    assert!((dot(la.dir, lb.dir) + 1.0).abs() < 1e-12);
    // against a non-reacting agent the whole change is A's
    let full = orca_line(&a, &b, 1.0, 3.0, 0.02, [1.0, 0.0]);
    let uf = [full.point[0] - a.vel[0], full.point[1] - a.vel[1]];
    assert!((uf[0] - 2.0 * ua[0]).abs() < 1e-12 && (uf[1] - 2.0 * ua[1]).abs() < 1e-12);
}

#[test]
fn agents_moving_apart_keep_their_preferred_velocity() {
    let a = agent([-1.0, 0.0], [-1.0, 0.0]);
    let b = agent([1.0, 0.0], [1.0, 0.0]);
    let l = orca_line(&a, &b, 0.5, 3.0, 0.02, [1.0, 0.0]);
    assert!(l.violation(a.vel) < 0.0, "already permitted");
    assert_eq!(solve(&[l], a.vel, 2.0), a.vel);
}

/// A small deterministic generator for the scenes below.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[test]
fn the_chosen_velocity_is_the_permitted_one_nearest_the_preferred() {
    let mut g = Lcg(42);
    let mut feasible = 0;
    for _ in 0..200 {
        let me = agent([0.0, 0.0], [g.next() * 2.0 - 1.0, g.next() * 2.0 - 1.0]);
        let lines: Vec<Line> = (0..4)
            .map(|_| {
                let ang = g.next() * std::f64::consts::TAU;
                let d = 0.8 + g.next() * 3.0;
                let other = agent(
                    [d * ang.cos(), d * ang.sin()],
                    [g.next() * 2.0 - 1.0, g.next() * 2.0 - 1.0],
                );
                orca_line(&me, &other, 0.5, 2.0, 0.02, [1.0, 0.0])
            })
            .collect();
        let pref = [g.next() * 3.0 - 1.5, g.next() * 3.0 - 1.5];
        let max = 1.5;
        let v = solve(&lines, pref, max);
        assert!(norm(v) <= max + 1e-9, "{v:?}");
        // brute force over a 1 cm grid of the speed disc: the nearest permitted velocity
        let mut best: Option<f64> = None;
        let n = 300;
        for i in 0..=n {
            for j in 0..=n {
                let c = [
                    -max + 2.0 * max * i as f64 / n as f64,
                    -max + 2.0 * max * j as f64 / n as f64,
                ];
                if norm(c) <= max && lines.iter().all(|l| l.violation(c) <= 0.0) {
                    let d = norm([c[0] - pref[0], c[1] - pref[1]]);
                    best = Some(best.map_or(d, |b: f64| b.min(d)));
                }
            }
        }
        if let Some(best) = best {
            feasible += 1;
            for l in &lines {
                assert!(l.violation(v) <= 1e-9, "violates a half-plane by {}", l.violation(v));
            }
            let got = norm([v[0] - pref[0], v[1] - pref[1]]);
            // no grid point beats it
            assert!(
                got <= best + 1e-9,
                "chose {got} from the preferred, a permitted one is {best}"
            );
            // nor any permitted point of a 0.2 mm grid around it: the permitted set is convex, so
            // nearest locally is nearest overall
            for i in -50..=50 {
                for j in -50..=50 {
                    let c = [v[0] + i as f64 * 2e-4, v[1] + j as f64 * 2e-4];
                    if norm(c) <= max && lines.iter().all(|l| l.violation(c) <= 0.0) {
                        let d = norm([c[0] - pref[0], c[1] - pref[1]]);
                        assert!(d >= got - 1e-12, "{c:?} is nearer ({d} < {got})");
                    }
                }
            }
        }
    }
    assert!(feasible > 100, "only {feasible} feasible scenes");
}

#[test]
fn agents_stepping_by_orca_never_overlap() {
    // four agents on a circle, each heading for the opposite point: the classic antipodal swap
    // (placed off the square: a symmetric start is the case ORCA is known to deadlock in)
    let r = 0.3;
    let dt = 0.02;
    let mut pos: Vec<[f64; 2]> = (0..4)
        .map(|k| {
            let a: f64 = [0.0, 1.7, 3.0, 4.9][k];
            [3.0 * a.cos(), 3.0 * a.sin()]
        })
        .collect();
    let goals: Vec<[f64; 2]> = pos.iter().map(|p| [-p[0], -p[1]]).collect();
    let mut vel = [[0.0; 2]; 4];
    let mut min = f64::INFINITY;
    for _ in 0..1500 {
        let agents: Vec<Agent> =
            (0..4).map(|k| Agent { pos: pos[k], vel: vel[k], radius: r }).collect();
        let new: Vec<[f64; 2]> = (0..4)
            .map(|i| {
                let lines: Vec<Line> = (0..4)
                    .filter(|&j| j != i)
                    .map(|j| orca_line(&agents[i], &agents[j], 0.5, 2.0, dt, [1.0, 0.0]))
                    .collect();
                let to = [goals[i][0] - pos[i][0], goals[i][1] - pos[i][1]];
                let d = norm(to);
                let pref =
                    if d > 1e-3 { [to[0] / d.max(1.0), to[1] / d.max(1.0)] } else { [0.0; 2] };
                solve(&lines, pref, 1.0)
            })
            .collect();
        for k in 0..4 {
            vel[k] = new[k];
            pos[k] = [pos[k][0] + new[k][0] * dt, pos[k][1] + new[k][1] * dt];
        }
        for i in 0..4 {
            for j in i + 1..4 {
                min = min.min(norm([pos[i][0] - pos[j][0], pos[i][1] - pos[j][1]]));
            }
        }
    }
    assert!(min >= 2.0 * r - 1e-6, "closest pair {min} < {}", 2.0 * r);
    for k in 0..4 {
        let d = norm([goals[k][0] - pos[k][0], goals[k][1] - pos[k][1]]);
        assert!(d < 0.05, "agent {k} ended {d} m from its goal");
    }
}
