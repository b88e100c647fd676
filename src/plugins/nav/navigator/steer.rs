//! Steering around what moves (`avoidance.steer`), and the way out of two navigators holding for
//! each other.
//!
//! The other movers are every other entity of the world that can move (a root body that is a
//! mocap body or has a joint: robots, walkers, driven and physics props); static geometry is the
//! planner's business. Each is a disc of its planar reach (the farthest its geoms extend from its
//! root in the floor plane, measured at the first reset) moving at its velocity measured between
//! two navigation updates.
//!
//! A steering model turns them into ORCA half-planes (`crate::nav::orca`) around the mover's own
//! disc (`avoidance.params.radius`, default half the probe's `width`: the body plus the clearance
//! it keeps) and takes the velocity nearest the route's (toward the tracker's target at `speed`)
//! that leaves them: `give_way` takes all of the avoidance against every mover, `orca` half of it
//! against another navigator that also steers with `orca`. With nothing within `neighbor_dist`
//! the mover follows its route exactly as without a model.
//!
//! Deadlock: two navigators whose probes hold each of them for the other (each one's probe hit the
//! other, and neither steers) would wait for ever. After both have been held `yield_time`, the one
//! whose entity name sorts later among those driving a base gives way with the `give_way` model
//! until the other is behind it, and says so in a warning (once per pair and episode); two mocap
//! movers can only be told about.

use std::cell::RefCell;

use super::config::{Steer, DEFAULT_STEER_NEIGHBOR_DIST, DEFAULT_STEER_TIME_HORIZON};
use super::*;
use crate::nav::orca::{self, Agent, Line, V2};

/// Blackboard key of the names of the navigators that steer with `orca` (the reciprocal ones).
pub const ORCA_MOVERS_KEY: &str = "navigator:orca_movers";

/// The entities whose navigators steer with `orca` (blackboard [`ORCA_MOVERS_KEY`]).
#[derive(Debug, Clone, Default)]
pub struct OrcaMovers(Rc<RefCell<Vec<String>>>);

/// Another entity that can move.
#[derive(Debug, Clone)]
pub(super) struct Other {
    pub(super) entity: String,
    roots: Vec<usize>,
    body: usize,
    radius: f64,
    last: Option<(V2, f64)>,
    agent: Agent,
    present: bool,
}

/// The farthest the geoms under `roots` reach from `center` in the floor plane (m): collision
/// geoms, or every geom when none collides.
pub(super) fn planar_reach(ctx: &SimContext, roots: &[usize], center: [f64; 3]) -> f64 {
    let m = ctx.model();
    let d = ctx.data();
    let ng = m.ffi().ngeom as usize;
    let mine: Vec<usize> =
        (0..ng).filter(|&g| in_entity(m, m.geom_bodyid()[g] as usize, roots)).collect();
    let collides = |g: &usize| m.geom_contype()[*g] != 0 || m.geom_conaffinity()[*g] != 0;
    let any = mine.iter().any(collides);
    let mut reach: f64 = 0.0;
    for g in mine.into_iter().filter(|g| !any || collides(g)) {
        use mujoco_rs::prelude::MjtGeomBase as T;
        let s = m.geom_size()[g];
        // the geom's z axis, world frame: how far it leans out of the vertical
        let zz = d.geom_xmat()[g][8].abs().min(1.0);
        let lean = (1.0 - zz * zz).sqrt();
        let extent = match m.geom_type()[g] {
            T::mjGEOM_PLANE => continue,
            T::mjGEOM_SPHERE => s[0],
            T::mjGEOM_CAPSULE | T::mjGEOM_CYLINDER => s[0] + s[1] * lean,
            T::mjGEOM_BOX => s[0].hypot(s[1]) + s[2] * lean,
            T::mjGEOM_ELLIPSOID => s[0].max(s[1]).max(s[2] * lean),
            _ => m.geom_rbound()[g],
        };
        let p = d.geom_xpos()[g];
        reach = reach.max((p[0] - center[0]).hypot(p[1] - center[1]) + extent);
    }
    reach
}

impl Navigator {
    /// Collect the other movers and the mover's own reach (first reset), and join the reciprocal
    /// movers when steering with `orca`.
    pub(super) fn collect_others(&mut self, ctx: &mut SimContext) -> Result<(), String> {
        let c = ctx.data().xpos()[self.body];
        self.reach = planar_reach(ctx, &self.roots, c);
        let mut others = Vec::new();
        for e in ctx.entities.all().iter().filter(|e| e.name != self.entity) {
            let m = ctx.model();
            let roots = entity_roots(m, e)?;
            let movable = roots.iter().any(|&b| m.body_mocapid()[b] >= 0 || m.body_jntnum()[b] > 0);
            if !movable {
                continue;
            }
            let body = roots[0];
            let radius = planar_reach(ctx, &roots, ctx.data().xpos()[body]);
            others.push(Other {
                entity: e.name.clone(),
                roots,
                body,
                radius,
                last: None,
                agent: Agent { pos: [0.0; 2], vel: [0.0; 2], radius },
                present: true,
            });
        }
        self.others = others;
        if self.cfg.avoidance.steer == Steer::Orca {
            if !ctx.blackboard.contains(ORCA_MOVERS_KEY) {
                ctx.blackboard.set(ORCA_MOVERS_KEY, OrcaMovers::default());
            }
            let reg = ctx.blackboard.get::<OrcaMovers>(ORCA_MOVERS_KEY)?;
            let mut v = reg.0.borrow_mut();
            if !v.contains(&self.entity) {
                v.push(self.entity.clone());
            }
        }
        Ok(())
    }

    /// Forget the measured velocities (reset).
    pub(super) fn reset_others(&mut self) {
        for o in &mut self.others {
            o.last = None;
            o.agent.vel = [0.0; 2];
        }
    }

    /// The entity (other than this mover) that `body` belongs to, if it can move.
    pub(super) fn entity_of(&self, ctx: &SimContext, body: usize) -> Option<String> {
        let m = ctx.model();
        self.others.iter().find(|o| in_entity(m, body, &o.roots)).map(|o| o.entity.clone())
    }

    /// The model steering now: the configured one, or `give_way` while yielding out of a deadlock.
    fn steer_model(&self) -> Steer {
        if self.st.yielding.is_some() {
            Steer::GiveWay
        } else {
            self.cfg.avoidance.steer
        }
    }

    /// Width the probe sweeps while a model steers: the mover's own body (the clearance is the
    /// model's job); `None` without a model (the configured `width`).
    pub(super) fn steer_probe_width(&self) -> Option<f64> {
        (self.steer_model() != Steer::None).then_some(2.0 * self.reach)
    }

    /// The steered world velocity toward `target`, or `None` when no model steers or nothing that
    /// moves is within `neighbor_dist` (the route is then followed as it is).
    pub(super) fn steer_velocity(
        &mut self,
        ctx: &SimContext,
        pose: [f64; 3],
        target: [f64; 2],
    ) -> Option<V2> {
        let model = self.steer_model();
        if model == Steer::None {
            return None;
        }
        let now = ctx.sim_time();
        let xy = [pose[0], pose[1]];
        // measure: the mover and the others, between two updates
        let vel_of = |last: Option<(V2, f64)>, p: V2| match last {
            Some((l, t)) if now > t => [(p[0] - l[0]) / (now - t), (p[1] - l[1]) / (now - t)],
            _ => [0.0, 0.0],
        };
        let my_vel = vel_of(self.st.my_last, xy);
        self.st.my_last = Some((xy, now));
        let xpos = ctx.data().xpos();
        for o in &mut self.others {
            let p = [xpos[o.body][0], xpos[o.body][1]];
            o.agent = Agent { pos: p, vel: vel_of(o.last, p), radius: o.radius };
            o.last = Some((p, now));
            o.present = entity_present(ctx, &o.entity);
        }
        let sp = &self.cfg.avoidance.params;
        let reach = sp.neighbor_dist.unwrap_or(DEFAULT_STEER_NEIGHBOR_DIST);
        let tau = sp.time_horizon.unwrap_or(DEFAULT_STEER_TIME_HORIZON);
        let radius = sp.radius.unwrap_or(self.cfg.avoidance.width / 2.0);
        let me = Agent { pos: xy, vel: my_vel, radius };
        let period = self.every as f64 * ctx.dt;
        let reciprocal: Vec<String> = match ctx.blackboard.get::<OrcaMovers>(ORCA_MOVERS_KEY) {
            Ok(r) if model == Steer::Orca => r.0.borrow().clone(),
            _ => Vec::new(),
        };
        let lines: Vec<Line> = self
            .others
            .iter()
            .filter(|o| o.present)
            .filter(|o| orca::norm([o.agent.pos[0] - xy[0], o.agent.pos[1] - xy[1]]) < reach)
            .map(|o| {
                let share = if reciprocal.contains(&o.entity) { 0.5 } else { 1.0 };
                // coincident movers part along a direction fixed by their names
                let fallback = if self.entity < o.entity { [1.0, 0.0] } else { [-1.0, 0.0] };
                orca::orca_line(&me, &o.agent, share, tau, period, fallback)
            })
            .collect();
        if lines.is_empty() {
            return None;
        }
        let (dx, dy) = (target[0] - xy[0], target[1] - xy[1]);
        let d = dx.hypot(dy);
        let s = self.cfg.speed;
        if d <= 1e-9 {
            return Some(orca::solve(&lines, [0.0, 0.0], s));
        }
        let dir = self.pass_side([dx / d, dy / d], xy, radius, reach);
        Some(orca::solve(&lines, [s * dir[0], s * dir[1]], s))
    }

    /// The route's direction `dir`, turned to pass the nearest mover in the way (its disc within
    /// reach of the line ahead) along its tangent: on the side it leaves more room, on the right
    /// when it stands dead ahead. ORCA alone keeps a mover heading straight at something standing
    /// on its line (the half-planes are symmetric about it): it slows to a stop in front of it.
    fn pass_side(&self, dir: V2, xy: V2, radius: f64, reach: f64) -> V2 {
        let mut nearest: Option<(f64, V2, f64, f64)> = None;
        for o in self.others.iter().filter(|o| o.present) {
            let rel = [o.agent.pos[0] - xy[0], o.agent.pos[1] - xy[1]];
            let along = orca::dot(rel, dir);
            let lateral = orca::det(dir, rel);
            let r = radius + o.radius;
            let d = orca::norm(rel);
            if along > 0.0 && d < reach && lateral.abs() < r && nearest.is_none_or(|n| along < n.0)
            {
                nearest = Some((along, rel, lateral, r));
            }
        }
        let Some((_, rel, lateral, r)) = nearest else { return dir };
        let d = orca::norm(rel);
        if d <= r {
            return dir; // already touching: ORCA's overlap half-plane parts them
        }
        // to the tangent of its disc: clockwise (pass on the right) unless it lies right of the line
        let theta = (r / d).asin() * if lateral < 0.0 { 1.0 } else { -1.0 };
        let (sn, cs) = theta.sin_cos();
        let u = [rel[0] / d, rel[1] / d];
        [cs * u[0] - sn * u[1], sn * u[0] + cs * u[1]]
    }

    /// Yielding out of a deadlock ends once the other mover is behind (its centre past the
    /// mover's, seen along the way to the target) and clear of it. Where the other is is read
    /// now: the steering model's last measurement may predate the yield (a mover with `steer:
    /// none` never measured it), and a stale position can lie "behind" in any direction.
    pub(super) fn end_yield(&mut self, ctx: &SimContext, xy: [f64; 2], target: [f64; 2]) {
        let Some(who) = &self.st.yielding else { return };
        let Some(o) = self.others.iter().find(|o| &o.entity == who) else {
            self.st.yielding = None;
            return;
        };
        let p = ctx.data().xpos()[o.body];
        let rel = [p[0] - xy[0], p[1] - xy[1]];
        let ahead = [target[0] - xy[0], target[1] - xy[1]];
        let r = self.cfg.avoidance.width / 2.0 + o.radius;
        if orca::dot(rel, ahead) < 0.0 && orca::norm(rel) > r {
            self.st.yielding = None;
        }
    }

    /// Held by another navigator that is held by this one: after `yield_time`, the later-named of
    /// the two that drive a base gives way (see the module doc).
    pub(super) fn check_deadlock(&mut self, ctx: &SimContext, now: f64) {
        let a = &self.cfg.avoidance;
        if self.st.yielding.is_some() || now - self.st.blocked_since < a.yield_time {
            return;
        }
        let Some(other) = self.st.blocked_by.clone() else { return };
        let Ok(h) = ctx.blackboard.get::<NavHandle>(&nav_key(&other)) else { return };
        let s = h.state();
        if s.phase != NavPhase::Blocked || s.blocked_by.as_deref() != Some(self.entity.as_str()) {
            return;
        }
        let me_drives = matches!(self.out, Some(Out::Drive(_)));
        let i_yield = match (me_drives, s.drives) {
            (true, true) => self.entity > other,
            (mine, _) => mine,
        };
        // told once an episode per pair (a standoff that recurs on a long route is not news)
        let first = !self.st.deadlocks_told.contains(&other);
        if first {
            self.st.deadlocks_told.push(other.clone());
        }
        if i_yield {
            if first {
                tracing::warn!(
                "[{}] navigators `{}` and `{other}` each hold for the other (deadlock); `{}` gives way \
                 (give_way steering) until `{other}` is behind it. Give them `avoidance.steer` to pass without waiting",
                self.address,
                self.entity,
                self.entity
            );
            }
            self.st.yielding = Some(other);
            self.st.phase = NavPhase::Moving;
            let p = self.pose(ctx);
            self.st.progress_xy = [p[0], p[1]];
            self.st.progress_t = now;
        } else if !me_drives && !s.drives && first {
            tracing::warn!(
                "[{}] navigators `{}` and `{other}` each hold for the other (deadlock) and neither drives a base \
                 that could steer aside: they wait until one is moved; route them apart",
                self.address,
                self.entity
            );
        }
    }
}
