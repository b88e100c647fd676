//! The planner's occupancy grid: what counts as a wall for one mover, rasterised from the compiled
//! model.
//!
//! A geom is a wall for a mover when it cannot move and the mover cannot pass it:
//! - its body is welded to the world (`body_weldid == 0`) and neither it nor an ancestor is a mocap
//!   body — walkers, driven boxes and anything a plugin moves are left out on purpose: the grid
//!   holds only what cannot move, and a mover finds the rest with its forward probe;
//! - it collides (`contype` or `conaffinity` non-zero) and is not in the absent group;
//! - it is not a plane or a height field (the floor and terrain are driven on, not around);
//! - its vertical extent overlaps the mover's `obstacle_height` band `[lo, hi]` — a ceiling beam
//!   above a pallet's band does not block the pallet.
//!
//! Each such geom becomes a [`Footprint`] in the floor plane: a disc for spheres and upright
//! cylinders and capsules, else the convex hull of its bounding box's corners projected onto the
//! floor (exact for boxes at any rotation, conservative for the rest). A [`Grid`] cell is blocked
//! when its centre lies within the inflation radius of any footprint, measured exactly against the
//! footprint's shape, so inflation is not quantised to whole cells.

use mujoco_rs::mujoco_c::mjtGeom;

use crate::context::Data;
use crate::mujoco::raycast::ABSENT_GEOM_GROUP;

/// The most cells one grid may have (a 200 m × 200 m floor at 5 cm): a finer grid is refused with
/// the resolution that would fit.
pub const MAX_CELLS: usize = 16_000_000;

/// A static obstacle's shape in the floor plane (world x, y; m).
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// A convex polygon, counter-clockwise.
    Polygon(Vec<[f64; 2]>),
    /// A disc.
    Disc {
        /// Centre.
        c: [f64; 2],
        /// Radius (m).
        r: f64,
    },
}

/// One wall geom's footprint.
#[derive(Debug, Clone, PartialEq)]
pub struct Footprint {
    /// Geom id in the compiled model.
    pub geom: usize,
    /// Its shape.
    pub shape: Shape,
    /// Axis-aligned bounds `[x0, y0, x1, y1]`.
    pub bounds: [f64; 4],
}

impl Footprint {
    /// Distance (m) from `p` to the footprint; 0 inside.
    pub fn distance(&self, p: [f64; 2]) -> f64 {
        match &self.shape {
            Shape::Disc { c, r } => ((p[0] - c[0]).hypot(p[1] - c[1]) - r).max(0.0),
            Shape::Polygon(v) => polygon_distance(v, p),
        }
    }
}

/// Distance from `p` to a convex CCW polygon (0 inside).
fn polygon_distance(v: &[[f64; 2]], p: [f64; 2]) -> f64 {
    let n = v.len();
    if n == 1 {
        return (p[0] - v[0][0]).hypot(p[1] - v[0][1]);
    }
    let mut inside = n >= 3;
    let mut best = f64::INFINITY;
    for i in 0..n {
        let a = v[i];
        let b = v[(i + 1) % n];
        let e = [b[0] - a[0], b[1] - a[1]];
        let w = [p[0] - a[0], p[1] - a[1]];
        if e[0] * w[1] - e[1] * w[0] < 0.0 {
            inside = false;
        }
        let len2 = e[0] * e[0] + e[1] * e[1];
        let t = if len2 > 0.0 { ((w[0] * e[0] + w[1] * e[1]) / len2).clamp(0.0, 1.0) } else { 0.0 };
        best = best.min((w[0] - t * e[0]).hypot(w[1] - t * e[1]));
    }
    if inside {
        0.0
    } else {
        best
    }
}

/// Convex hull (Andrew's monotone chain), counter-clockwise, without repeated points.
pub fn convex_hull(mut pts: Vec<[f64; 2]>) -> Vec<[f64; 2]> {
    pts.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    pts.dedup();
    if pts.len() < 3 {
        return pts;
    }
    let cross = |o: [f64; 2], a: [f64; 2], b: [f64; 2]| {
        (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    };
    let mut lower: Vec<[f64; 2]> = Vec::new();
    for &p in &pts {
        while lower.len() >= 2 && cross(lower[lower.len() - 2], lower[lower.len() - 1], p) <= 0.0 {
            lower.pop();
        }
        lower.push(p);
    }
    let mut upper: Vec<[f64; 2]> = Vec::new();
    for &p in pts.iter().rev() {
        while upper.len() >= 2 && cross(upper[upper.len() - 2], upper[upper.len() - 1], p) <= 0.0 {
            upper.pop();
        }
        upper.push(p);
    }
    lower.pop();
    upper.pop();
    lower.extend(upper);
    lower
}

/// True when `body` or one of its ancestors is a mocap body.
fn under_mocap(mocapid: &[i32], parent: &[i32], mut body: usize) -> bool {
    while body != 0 {
        if mocapid[body] >= 0 {
            return true;
        }
        body = parent[body] as usize;
    }
    false
}

/// The footprints of every wall geom for the band `[lo, hi]` (m above the floor), read from the
/// current state (call after `mj_forward`: `geom_xpos`/`geom_xmat` must be current).
pub fn static_footprints(data: &Data, band: [f64; 2]) -> Vec<Footprint> {
    let m = data.model();
    let (xpos, xmat) = (data.geom_xpos(), data.geom_xmat());
    let (weld, mocap, parent) = (m.body_weldid(), m.body_mocapid(), m.body_parentid());
    let mut out = Vec::new();
    for g in 0..m.ffi().ngeom as usize {
        let ty = m.geom_type()[g] as i32;
        if ty == mjtGeom::mjGEOM_PLANE as i32 || ty == mjtGeom::mjGEOM_HFIELD as i32 {
            continue;
        }
        if m.geom_contype()[g] == 0 && m.geom_conaffinity()[g] == 0 {
            continue;
        }
        if m.geom_group()[g] as usize == ABSENT_GEOM_GROUP {
            continue;
        }
        let body = m.geom_bodyid()[g] as usize;
        if weld[body] != 0 || under_mocap(mocap, parent, body) {
            continue;
        }
        let (p, r) = (xpos[g], xmat[g]);
        let aabb = m.geom_aabb()[g];
        let mut corners = Vec::with_capacity(8);
        let (mut zlo, mut zhi) = (f64::INFINITY, f64::NEG_INFINITY);
        for k in 0..8 {
            let l = [
                aabb[0] + if k & 1 == 0 { -aabb[3] } else { aabb[3] },
                aabb[1] + if k & 2 == 0 { -aabb[4] } else { aabb[4] },
                aabb[2] + if k & 4 == 0 { -aabb[5] } else { aabb[5] },
            ];
            let w = [
                p[0] + r[0] * l[0] + r[1] * l[1] + r[2] * l[2],
                p[1] + r[3] * l[0] + r[4] * l[1] + r[5] * l[2],
                p[2] + r[6] * l[0] + r[7] * l[1] + r[8] * l[2],
            ];
            zlo = zlo.min(w[2]);
            zhi = zhi.max(w[2]);
            corners.push([w[0], w[1]]);
        }
        if zhi < band[0] || zlo > band[1] {
            continue;
        }
        let size = m.geom_size()[g];
        let upright = r[8].abs() > 0.999; // the geom's z axis is the world's
        let disc = ty == mjtGeom::mjGEOM_SPHERE as i32
            || (upright
                && (ty == mjtGeom::mjGEOM_CYLINDER as i32 || ty == mjtGeom::mjGEOM_CAPSULE as i32));
        let shape = if disc {
            Shape::Disc { c: [p[0], p[1]], r: size[0] }
        } else {
            Shape::Polygon(convex_hull(corners.clone()))
        };
        let bounds = match &shape {
            Shape::Disc { c, r } => [c[0] - r, c[1] - r, c[0] + r, c[1] + r],
            Shape::Polygon(v) => bounds_of(v),
        };
        out.push(Footprint { geom: g, shape, bounds });
    }
    out
}

/// Axis-aligned bounds `[x0, y0, x1, y1]` of points.
pub fn bounds_of(v: &[[f64; 2]]) -> [f64; 4] {
    v.iter().fold([f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY], |b, p| {
        [b[0].min(p[0]), b[1].min(p[1]), b[2].max(p[0]), b[3].max(p[1])]
    })
}

/// A blocked/free raster of the floor, `resolution` m per cell, cell (0, 0)'s corner at `origin`.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// World (x, y) of cell (0, 0)'s lower-left corner (m).
    pub origin: [f64; 2],
    /// Cell edge (m).
    pub resolution: f64,
    /// Cells along x.
    pub width: usize,
    /// Cells along y.
    pub height: usize,
    blocked: Vec<bool>,
}

impl Grid {
    /// Rasterise `footprints` inflated by `inflation` (m) over the rectangle `area` `[x0, y0, x1,
    /// y1]` (grown to whole cells). Refused when the grid would exceed [`MAX_CELLS`].
    pub fn rasterize(
        footprints: &[Footprint],
        inflation: f64,
        area: [f64; 4],
        resolution: f64,
    ) -> Result<Grid, String> {
        let width = ((area[2] - area[0]) / resolution).ceil().max(1.0);
        let height = ((area[3] - area[1]) / resolution).ceil().max(1.0);
        if width * height > MAX_CELLS as f64 {
            let fits = ((area[2] - area[0]) * (area[3] - area[1]) / MAX_CELLS as f64).sqrt();
            return Err(format!(
                "the planner grid over [{:.1}, {:.1}] .. [{:.1}, {:.1}] m at resolution {resolution} m would have {:.0} cells \
                 (at most {MAX_CELLS}); raise `resolution` to at least {:.3} m",
                area[0], area[1], area[2], area[3], width * height, fits
            ));
        }
        let (width, height) = (width as usize, height as usize);
        let mut grid = Grid {
            origin: [area[0], area[1]],
            resolution,
            width,
            height,
            blocked: vec![false; width * height],
        };
        for f in footprints {
            let b = f.bounds;
            let (i0, j0) = grid.clamp_cell([b[0] - inflation, b[1] - inflation]);
            let (i1, j1) = grid.clamp_cell([b[2] + inflation, b[3] + inflation]);
            for j in j0..=j1 {
                for i in i0..=i1 {
                    let k = j * width + i;
                    if !grid.blocked[k] && f.distance(grid.center(i, j)) <= inflation {
                        grid.blocked[k] = true;
                    }
                }
            }
        }
        Ok(grid)
    }

    /// The cell holding `p`, if inside the grid.
    pub fn cell_of(&self, p: [f64; 2]) -> Option<(usize, usize)> {
        let i = ((p[0] - self.origin[0]) / self.resolution).floor();
        let j = ((p[1] - self.origin[1]) / self.resolution).floor();
        (i >= 0.0 && j >= 0.0 && (i as usize) < self.width && (j as usize) < self.height)
            .then_some((i as usize, j as usize))
    }

    /// The cell nearest `p` (clamped into the grid).
    pub fn clamp_cell(&self, p: [f64; 2]) -> (usize, usize) {
        let i =
            ((p[0] - self.origin[0]) / self.resolution).floor().clamp(0.0, (self.width - 1) as f64);
        let j = ((p[1] - self.origin[1]) / self.resolution)
            .floor()
            .clamp(0.0, (self.height - 1) as f64);
        (i as usize, j as usize)
    }

    /// World (x, y) of cell (i, j)'s centre.
    pub fn center(&self, i: usize, j: usize) -> [f64; 2] {
        [
            self.origin[0] + (i as f64 + 0.5) * self.resolution,
            self.origin[1] + (j as f64 + 0.5) * self.resolution,
        ]
    }

    /// True when cell (i, j) is blocked.
    pub fn is_blocked(&self, i: usize, j: usize) -> bool {
        self.blocked[j * self.width + i]
    }

    /// True when `p` is blocked or outside the grid.
    pub fn blocked_at(&self, p: [f64; 2]) -> bool {
        self.cell_of(p).is_none_or(|(i, j)| self.is_blocked(i, j))
    }

    /// Block every cell whose centre is within `r` of `c` (a remembered blockage).
    pub fn mark_disc(&mut self, c: [f64; 2], r: f64) {
        let (i0, j0) = self.clamp_cell([c[0] - r, c[1] - r]);
        let (i1, j1) = self.clamp_cell([c[0] + r, c[1] + r]);
        for j in j0..=j1 {
            for i in i0..=i1 {
                let p = self.center(i, j);
                if (p[0] - c[0]).hypot(p[1] - c[1]) <= r {
                    self.blocked[j * self.width + i] = true;
                }
            }
        }
    }

    /// Number of blocked cells.
    pub fn blocked_count(&self) -> usize {
        self.blocked.iter().filter(|b| **b).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hull_of_a_rotated_square_and_distances() {
        let h = convex_hull(vec![[0.0, 1.0], [1.0, 0.0], [0.0, -1.0], [-1.0, 0.0], [0.0, 0.0]]);
        assert_eq!(h.len(), 4);
        let f = Footprint { geom: 0, bounds: bounds_of(&h), shape: Shape::Polygon(h) };
        assert_eq!(f.distance([0.2, 0.2]), 0.0);
        assert!((f.distance([2.0, 0.0]) - 1.0).abs() < 1e-12);
        assert!((f.distance([1.0, 1.0]) - 0.5f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn inflation_is_measured_not_quantised() {
        let f = Footprint {
            geom: 0,
            shape: Shape::Disc { c: [0.0, 0.0], r: 0.5 },
            bounds: [-0.5, -0.5, 0.5, 0.5],
        };
        let g = Grid::rasterize(&[f], 0.3, [-2.0, -2.0, 2.0, 2.0], 0.1).unwrap();
        // cell centres at 0.05 + 0.1 k: (0.75, 0.05) is 0.7517 from the centre (blocked, ≤ 0.8);
        // (0.85, 0.05) is 0.8515 (free).
        assert!(g.blocked_at([0.75, 0.05]));
        assert!(!g.blocked_at([0.85, 0.05]));
        assert!(g.blocked_at([5.0, 0.0]), "outside the grid reads as blocked");
    }

    #[test]
    fn too_fine_a_grid_is_refused_with_the_resolution_that_fits() {
        let e = Grid::rasterize(&[], 0.0, [0.0, 0.0, 1000.0, 1000.0], 0.01).unwrap_err();
        assert!(e.contains("raise `resolution` to at least 0.250 m"), "{e}");
    }
}
