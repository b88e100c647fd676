//! A* over a [`Grid`]: 8-connected, octile heuristic, no corner cutting past a blocked
//! neighbour, ties broken by insertion order (deterministic), then line-of-sight smoothing so the
//! route is a few straight legs instead of a staircase of cells.
//!
//! A start inside a blocked cell (a robot parked closer to a wall than the inflation radius) first
//! leaves by the nearest free cell; a goal inside one is refused, since no route could end there.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::grid::Grid;

/// How far (m) a blocked start may be from the nearest free cell and still be planned from.
pub const MAX_START_ESCAPE_M: f64 = 1.0;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Open {
    f: f64,
    order: u64,
    cell: usize,
}

impl Eq for Open {}

impl Ord for Open {
    fn cmp(&self, o: &Self) -> Ordering {
        // BinaryHeap is a max-heap: the smallest f (then the earliest pushed) must compare greatest.
        o.f.total_cmp(&self.f).then(o.order.cmp(&self.order))
    }
}

impl PartialOrd for Open {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// Why no route was found.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanError {
    /// The goal is outside the planner grid.
    GoalOutside([f64; 2]),
    /// The goal is on an obstacle or within the inflation radius of one.
    GoalBlocked([f64; 2]),
    /// The start is boxed in: no free cell within [`MAX_START_ESCAPE_M`].
    StartBlocked([f64; 2]),
    /// Start and goal are in regions no route connects.
    Unreachable([f64; 2], [f64; 2]),
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::GoalOutside(g) => {
                write!(f, "goal ({:.2}, {:.2}) is outside the planner grid", g[0], g[1])
            }
            PlanError::GoalBlocked(g) => write!(
                f,
                "goal ({:.2}, {:.2}) is on an obstacle or closer to one than the inflation radius",
                g[0], g[1]
            ),
            PlanError::StartBlocked(s) => write!(
                f,
                "start ({:.2}, {:.2}) has no free cell within {MAX_START_ESCAPE_M} m (it is boxed in by obstacles)",
                s[0], s[1]
            ),
            PlanError::Unreachable(s, g) => write!(
                f,
                "no route from ({:.2}, {:.2}) to ({:.2}, {:.2}): the obstacles (inflated by the planner radius) separate them",
                s[0], s[1], g[0], g[1]
            ),
        }
    }
}

const NEIGHBOURS: [(i64, i64); 8] =
    [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)];

/// The nearest free cell to `(i, j)` within `max_cells` (Chebyshev rings, nearest by distance).
fn nearest_free(grid: &Grid, i: usize, j: usize, max_cells: usize) -> Option<(usize, usize)> {
    for ring in 1..=max_cells as i64 {
        let mut best: Option<(i64, (usize, usize))> = None;
        for dj in -ring..=ring {
            for di in -ring..=ring {
                if di.abs() != ring && dj.abs() != ring {
                    continue;
                }
                let (ni, nj) = (i as i64 + di, j as i64 + dj);
                if ni < 0 || nj < 0 || ni >= grid.width as i64 || nj >= grid.height as i64 {
                    continue;
                }
                let (ni, nj) = (ni as usize, nj as usize);
                let d2 = di * di + dj * dj;
                if !grid.is_blocked(ni, nj) && best.is_none_or(|(b, _)| d2 < b) {
                    best = Some((d2, (ni, nj)));
                }
            }
        }
        if let Some((_, c)) = best {
            return Some(c);
        }
    }
    None
}

/// The moves A* and the flood fill make from `cell`: to the 8 neighbours that are inside the
/// grid and free, never cutting a blocked corner; each with its step length in cells.
fn moves(grid: &Grid, cell: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
    let w = grid.width;
    let (ci, cj) = ((cell % w) as i64, (cell / w) as i64);
    NEIGHBOURS.iter().filter_map(move |&(di, dj)| {
        let (ni, nj) = (ci + di, cj + dj);
        if ni < 0 || nj < 0 || ni >= grid.width as i64 || nj >= grid.height as i64 {
            return None;
        }
        let (ni, nj) = (ni as usize, nj as usize);
        if grid.is_blocked(ni, nj) {
            return None;
        }
        let diagonal = di != 0 && dj != 0;
        if diagonal && (grid.is_blocked(ci as usize, nj) || grid.is_blocked(ni, cj as usize)) {
            return None; // no corner cutting
        }
        Some((nj * w + ni, if diagonal { std::f64::consts::SQRT_2 } else { 1.0 }))
    })
}

/// The cell a search from `start` begins in: its own, or — when it is blocked or outside the
/// grid — the nearest free cell within [`MAX_START_ESCAPE_M`].
fn start_cell(grid: &Grid, start: [f64; 2]) -> Result<(usize, usize), PlanError> {
    let (si, sj) = grid.clamp_cell(start);
    if grid.is_blocked(si, sj) || grid.cell_of(start).is_none() {
        let cells = (MAX_START_ESCAPE_M / grid.resolution).ceil() as usize;
        nearest_free(grid, si, sj, cells).ok_or(PlanError::StartBlocked(start))
    } else {
        Ok((si, sj))
    }
}

/// Plan from `start` to `goal` (world x, y): the smoothed route's points, `start` first and `goal`
/// last.
pub fn plan(grid: &Grid, start: [f64; 2], goal: [f64; 2]) -> Result<Vec<[f64; 2]>, PlanError> {
    let Some((gi, gj)) = grid.cell_of(goal) else {
        return Err(PlanError::GoalOutside(goal));
    };
    if grid.is_blocked(gi, gj) {
        return Err(PlanError::GoalBlocked(goal));
    }
    let mut prefix = vec![start];
    let (si, sj) = start_cell(grid, start)?;
    if (si, sj) != grid.clamp_cell(start) || grid.cell_of(start).is_none() {
        prefix.push(grid.center(si, sj));
    }
    let w = grid.width;
    let idx = |i: usize, j: usize| j * w + i;
    let h = |i: usize, j: usize| {
        let (dx, dy) = ((i as f64 - gi as f64).abs(), (j as f64 - gj as f64).abs());
        (dx.max(dy) + (std::f64::consts::SQRT_2 - 1.0) * dx.min(dy)) * grid.resolution
    };
    let n = grid.width * grid.height;
    let mut g = vec![f64::INFINITY; n];
    let mut came = vec![usize::MAX; n];
    let mut closed = vec![false; n];
    let mut heap = BinaryHeap::new();
    let mut order = 0u64;
    g[idx(si, sj)] = 0.0;
    heap.push(Open { f: h(si, sj), order, cell: idx(si, sj) });
    let goal_cell = idx(gi, gj);
    let mut found = false;
    while let Some(Open { cell, .. }) = heap.pop() {
        if closed[cell] {
            continue;
        }
        if cell == goal_cell {
            found = true;
            break;
        }
        closed[cell] = true;
        for (k, step) in moves(grid, cell) {
            let cand = g[cell] + step * grid.resolution;
            if cand < g[k] {
                g[k] = cand;
                came[k] = cell;
                order += 1;
                heap.push(Open { f: cand + h(k % w, k / w), order, cell: k });
            }
        }
    }
    if !found {
        return Err(PlanError::Unreachable(start, goal));
    }
    let mut cells = vec![goal_cell];
    while let Some(&c) = cells.last() {
        if came[c] == usize::MAX {
            break;
        }
        cells.push(came[c]);
    }
    cells.reverse();
    let mut pts: Vec<[f64; 2]> = cells.iter().map(|&c| grid.center(c % w, c / w)).collect();
    // the exact endpoints instead of their cell centres
    pts[0] = *prefix.last().unwrap();
    *pts.last_mut().unwrap() = goal;
    let mut route = prefix;
    route.pop();
    route.extend(smooth(grid, &pts));
    Ok(route)
}

/// Check that every one of `goals` can be reached from `start` — one flood fill of the free
/// cells connected to the start (the moves A* makes: 8-connected, no corner cutting), so a route
/// of many goals costs one pass over the grid, not one search per leg. Returns the first goal
/// that cannot be reached, with why.
pub fn check_reachable(
    grid: &Grid,
    start: [f64; 2],
    goals: &[[f64; 2]],
) -> Result<(), (usize, PlanError)> {
    for (k, &g) in goals.iter().enumerate() {
        match grid.cell_of(g) {
            None => return Err((k, PlanError::GoalOutside(g))),
            Some((i, j)) if grid.is_blocked(i, j) => return Err((k, PlanError::GoalBlocked(g))),
            _ => {}
        }
    }
    let (si, sj) = start_cell(grid, start).map_err(|e| (0, e))?;
    let w = grid.width;
    let mut seen = vec![false; grid.width * grid.height];
    let mut stack = vec![sj * w + si];
    seen[sj * w + si] = true;
    while let Some(c) = stack.pop() {
        for (k, _) in moves(grid, c) {
            if !seen[k] {
                seen[k] = true;
                stack.push(k);
            }
        }
    }
    let mut from = start;
    for (k, &g) in goals.iter().enumerate() {
        let (i, j) = grid.cell_of(g).expect("checked above");
        if !seen[j * w + i] {
            return Err((k, PlanError::Unreachable(from, g)));
        }
        from = g;
    }
    Ok(())
}

/// True when the straight segment `a`–`b` crosses no blocked cell (sampled at a quarter cell).
pub fn line_of_sight(grid: &Grid, a: [f64; 2], b: [f64; 2]) -> bool {
    let len = (b[0] - a[0]).hypot(b[1] - a[1]);
    let n = (len / (grid.resolution * 0.25)).ceil().max(1.0) as usize;
    (0..=n).all(|k| {
        let t = k as f64 / n as f64;
        !grid.blocked_at([a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])])
    })
}

/// Greedy string pulling: from each kept point, jump to the farthest later point in sight.
fn smooth(grid: &Grid, pts: &[[f64; 2]]) -> Vec<[f64; 2]> {
    let mut out = vec![pts[0]];
    let mut i = 0;
    while i + 1 < pts.len() {
        let mut j = pts.len() - 1;
        while j > i + 1 && !line_of_sight(grid, pts[i], pts[j]) {
            j -= 1;
        }
        out.push(pts[j]);
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nav::grid::{Footprint, Shape};

    fn wall_with_gap() -> Grid {
        // a wall along x = 0 from y = -5 to 5 with a 1 m gap centred at y = 2
        let seg = |y0: f64, y1: f64| {
            let v = vec![[-0.05, y0], [0.05, y0], [0.05, y1], [-0.05, y1]];
            Footprint { geom: 0, bounds: crate::nav::grid::bounds_of(&v), shape: Shape::Polygon(v) }
        };
        Grid::rasterize(&[seg(-5.0, 1.5), seg(2.5, 5.0)], 0.2, [-3.0, -5.0, 3.0, 5.0], 0.05)
            .unwrap()
    }

    #[test]
    fn route_goes_through_the_gap_and_keeps_clear() {
        let g = wall_with_gap();
        let r = plan(&g, [-2.0, -2.0], [2.0, -2.0]).unwrap();
        assert_eq!(r[0], [-2.0, -2.0]);
        assert_eq!(*r.last().unwrap(), [2.0, -2.0]);
        // the route crosses x = 0 inside the gap, clear of the inflated wall ends
        let cross = r.windows(2).find(|w| w[0][0] < 0.0 && w[1][0] >= 0.0).unwrap();
        let t = -cross[0][0] / (cross[1][0] - cross[0][0]);
        let y = cross[0][1] + t * (cross[1][1] - cross[0][1]);
        assert!(y > 1.5 + 0.2 - 0.05 && y < 2.5 - 0.2 + 0.05, "crossed at y = {y}");
        for w in r.windows(2) {
            assert!(line_of_sight(&g, w[0], w[1]));
        }
        assert!(r.len() <= 6, "smoothed to a few legs: {r:?}");
        assert_eq!(plan(&g, [-2.0, -2.0], [2.0, -2.0]).unwrap(), r, "deterministic");
    }

    #[test]
    fn blocked_goal_and_separated_regions_are_refused() {
        let g = wall_with_gap();
        assert_eq!(plan(&g, [-2.0, 0.0], [0.0, 0.0]), Err(PlanError::GoalBlocked([0.0, 0.0])));
        let mut closed = g.clone();
        closed.mark_disc([0.0, 2.0], 0.8);
        let e = plan(&closed, [-2.0, 0.0], [2.0, 0.0]).unwrap_err();
        assert_eq!(e, PlanError::Unreachable([-2.0, 0.0], [2.0, 0.0]));
        assert!(e.to_string().contains("no route from (-2.00, 0.00) to (2.00, 0.00)"), "{e}");
    }

    #[test]
    fn reachability_of_many_goals_agrees_with_planning() {
        let g = wall_with_gap();
        assert_eq!(check_reachable(&g, [-2.0, 0.0], &[[2.0, 0.0], [-2.0, 3.0]]), Ok(()));
        assert_eq!(
            check_reachable(&g, [-2.0, 0.0], &[[2.0, 0.0], [0.0, 0.0]]),
            Err((1, PlanError::GoalBlocked([0.0, 0.0])))
        );
        let mut closed = g.clone();
        closed.mark_disc([0.0, 2.0], 0.8);
        assert_eq!(
            check_reachable(&closed, [-2.0, 0.0], &[[-2.0, 3.0], [2.0, 0.0]]),
            Err((1, PlanError::Unreachable([-2.0, 3.0], [2.0, 0.0])))
        );
        assert!(plan(&closed, [-2.0, 3.0], [2.0, 0.0]).is_err());
        assert_eq!(
            check_reachable(&g, [0.0, 0.0], &[[9.0, 0.0]]),
            Err((0, PlanError::GoalOutside([9.0, 0.0])))
        );
    }

    #[test]
    fn a_start_inside_the_inflation_escapes_to_the_nearest_free_cell() {
        let g = wall_with_gap();
        let r = plan(&g, [-0.15, -2.0], [-2.0, -2.0]).unwrap();
        assert_eq!(r[0], [-0.15, -2.0]);
        assert!(!g.blocked_at(r[1]) && r[1][0] < -0.2, "{r:?}");
    }
}
