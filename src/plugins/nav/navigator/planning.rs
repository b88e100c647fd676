//! The navigator's route making: the shared planner grid (rasterised once per band, resolution
//! and inflation; grown when a goal falls outside it), the mover's own copy with the blockages it
//! remembers, A* legs, and the forward probe that finds what the grid does not hold.

use super::*;
use crate::plugins::shared::nav_grid::{shared_grid, GridSpec};

impl Navigator {
    /// The planner grid covering `need` `[x0, y0, x1, y1]` (shared by the movers that agree on
    /// the band, resolution and inflation).
    pub(super) fn grid_covering(
        &mut self,
        ctx: &mut SimContext,
        need: [f64; 4],
    ) -> Result<Rc<Grid>, String> {
        let c = &self.cfg;
        let spec = GridSpec {
            band: c.obstacle_height,
            resolution: c.resolution,
            inflation: c.planner.inflation_radius,
        };
        shared_grid(ctx, &self.footprints, spec, need).map_err(|e| match self.far_outside(need) {
            Some(why) => why,
            None => e,
        })
    }

    /// When a too-large grid is the doing of a point far outside the static geometry (more than
    /// 100 m from it), the refusal says so instead of asking for a coarser grid.
    fn far_outside(&self, need: [f64; 4]) -> Option<String> {
        let mut walls: Option<[f64; 4]> = None;
        for f in self.footprints.iter() {
            walls = Some(walls.map_or(f.bounds, |w| union(w, f.bounds)));
        }
        let w = walls?;
        let beyond = [w[0] - need[0], w[1] - need[1], need[2] - w[2], need[3] - w[3]];
        let d = beyond.iter().cloned().fold(0.0, f64::max);
        (d > 100.0).then(|| {
            format!(
                "a goal or the start lies {d:.0} m outside the static geometry (which spans [{:.1}, {:.1}] .. [{:.1}, {:.1}] m), \
                 so the planner grid would have to cover it all; move the goal inside the world, or use `route_mode: exact` \
                 to drive straight at it",
                w[0], w[1], w[2], w[3]
            )
        })
    }

    /// Plan the leg from `from` to goal `k` into `st.leg` (straight in `exact` mode).
    pub(super) fn plan_leg(&mut self, ctx: &mut SimContext, from: [f64; 2]) -> Result<(), Failure> {
        let goal = self.st.goals[self.st.k];
        let pts = match self.cfg.route_mode {
            RouteMode::Exact => vec![from, goal.xy],
            RouteMode::Plan => {
                let grid = self.planning_grid(ctx, from, &[goal.xy])?;
                astar::plan(grid, from, goal.xy).map_err(|e| Failure::plan(&e))?
            }
        };
        self.st.leg = Polyline::new(pts);
        self.st.leg_s = 0.0;
        self.st.wp = 1.min(self.st.leg.points().len() - 1);
        self.st.progress_xy = from;
        self.st.progress_t = ctx.sim_time();
        Ok(())
    }

    /// The mover's own grid (the shared one plus its blockages), covering `from` and `to`.
    pub(super) fn planning_grid(
        &mut self,
        ctx: &mut SimContext,
        from: [f64; 2],
        to: &[[f64; 2]],
    ) -> Result<&Grid, Failure> {
        let mut need = [from[0], from[1], from[0], from[1]];
        for p in to {
            need = union(need, [p[0], p[1], p[0], p[1]]);
        }
        let base =
            self.grid_covering(ctx, need).map_err(|msg| Failure { code: codes::UNKNOWN, msg })?;
        let rebuild = self.base_grid.as_ref().is_none_or(|b| !Rc::ptr_eq(b, &base));
        if rebuild || self.grid.is_none() {
            self.base_grid = Some(base);
            self.rebuild_blockages();
        }
        Ok(self.grid.as_ref().expect("just built"))
    }

    /// The mover's own grid: the shared one plus the blockages it remembers.
    pub(super) fn rebuild_blockages(&mut self) {
        let Some(base) = &self.base_grid else { return };
        let mut g = (**base).clone();
        for (c, r, _) in &self.st.blockages {
            g.mark_disc(*c, *r + self.cfg.planner.inflation_radius);
        }
        self.grid = Some(g);
    }

    /// The probe: the nearest blocking hit ahead (world x, y) and the entity it belongs to when
    /// that can move, if any. `width` replaces `avoidance.width` (while a model steers).
    pub(super) fn probe(
        &self,
        ctx: &mut SimContext,
        pose: [f64; 3],
        dir: f64,
        width: Option<f64>,
    ) -> Option<([f64; 2], Option<String>)> {
        let a = &self.cfg.avoidance;
        let w = width.unwrap_or(a.width);
        let z = if a.height > 0.0 { a.height } else { self.cfg.obstacle_height[0] + 0.02 };
        let (s, c) = dir.sin_cos();
        let n = a.rays as usize;
        let mut best: Option<(f64, [f64; 2], usize)> = None;
        let mut batch = RayBatch::new(1);
        batch.set_dir(0, [c, s, 0.0]);
        for i in 0..n {
            let off = if n == 1 { 0.0 } else { -w / 2.0 + w * i as f64 / (n - 1) as f64 };
            let o = [pose[0] + c * self.front - s * off, pose[1] + s * self.front + c * off, z];
            batch.cast(ctx.data_mut(), o, Some(self.body), None, true, a.lookahead);
            let (d, g) = (batch.dist()[0], batch.geom()[0]);
            if g < 0 || d < 0.0 || d > a.lookahead {
                continue;
            }
            let g = g as usize;
            if self.known.get(g).copied().unwrap_or(false) {
                continue;
            }
            let body = ctx.model().geom_bodyid()[g] as usize;
            let m = ctx.model();
            if in_entity(m, body, &self.roots) || in_entity(m, body, &self.ignore_roots) {
                continue;
            }
            if best.is_none_or(|(bd, _, _)| d < bd) {
                best = Some((d, [o[0] + c * d, o[1] + s * d], body));
            }
        }
        best.map(|(_, p, body)| (p, self.entity_of(ctx, body)))
    }

    /// Mark the blockage at `hit` on the mover's own grid and plan around it.
    pub(super) fn reroute(&mut self, ctx: &mut SimContext, hit: [f64; 2], xy: [f64; 2], now: f64) {
        let a = &self.cfg.avoidance;
        let r = if a.blockage_radius > 0.0 { a.blockage_radius } else { a.width / 2.0 };
        self.st.blockages.push((hit, r, now));
        self.rebuild_blockages();
        match self.plan_leg(ctx, xy) {
            Ok(()) => {
                self.st.reroutes += 1;
                self.st.phase = NavPhase::Moving;
            }
            Err(e) => {
                tracing::info!("[{}] no way around the blockage yet: {}", self.address, e.msg);
                self.st.blocked_since = now;
            }
        }
    }
}

fn union(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    [a[0].min(b[0]), a[1].min(b[1]), a[2].max(b[2]), a[3].max(b[3])]
}
