//! The planner grid the movers share: one raster of the static geometry per obstacle band,
//! resolution and inflation radius, on the blackboard under `nav_grid:<lo>:<hi>:<res>:<infl>`,
//! grown (rasterised anew over the union) when a goal falls outside it.

use std::rc::Rc;

use crate::context::SimContext;
use crate::nav::grid::{Footprint, Grid};

/// What makes two movers' grids the same grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GridSpec {
    /// z band `[lo, hi]` a geom must reach into to be a wall (m).
    pub band: [f64; 2],
    /// Cell size (m).
    pub resolution: f64,
    /// Walls are grown by this radius (m).
    pub inflation: f64,
}

fn union(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    [a[0].min(b[0]), a[1].min(b[1]), a[2].max(b[2]), a[3].max(b[3])]
}

fn extent(g: &Grid) -> [f64; 4] {
    [
        g.origin[0],
        g.origin[1],
        g.origin[0] + g.width as f64 * g.resolution,
        g.origin[1] + g.height as f64 * g.resolution,
    ]
}

/// The grid of `spec` covering `need` `[x0, y0, x1, y1]` (m): the shared one when it covers,
/// else a new raster of `footprints` over the union of `need`, the footprints and the old grid
/// (1 m plus the inflation beyond), shared from then on.
pub fn shared_grid(
    ctx: &mut SimContext,
    footprints: &[Footprint],
    spec: GridSpec,
    need: [f64; 4],
) -> Result<Rc<Grid>, String> {
    let key = format!(
        "nav_grid:{}:{}:{}:{}",
        spec.band[0], spec.band[1], spec.resolution, spec.inflation
    );
    let shared = ctx.blackboard.get::<Rc<Grid>>(&key).ok().cloned();
    if let Some(g) = &shared {
        let e = extent(g);
        if e[0] <= need[0] && e[1] <= need[1] && e[2] >= need[2] && e[3] >= need[3] {
            return Ok(g.clone());
        }
    }
    let mut area = need;
    for f in footprints {
        area = union(area, f.bounds);
    }
    if let Some(g) = &shared {
        area = union(area, extent(g));
    }
    let m = spec.inflation + 1.0;
    let area = [area[0] - m, area[1] - m, area[2] + m, area[3] + m];
    let g = Rc::new(Grid::rasterize(footprints, spec.inflation, area, spec.resolution)?);
    ctx.blackboard.set(key, g.clone());
    Ok(g)
}
