//! The crowd: the one controller every `walker` of a world shares.
//!
//! The first walker to configure puts a [`Crowd`] on the blackboard under [`CROWD_KEY`] and owns
//! its tick; every walker (that one included) adds its agent. Each physics step (`pre_step` of the
//! owning walker) the crowd:
//! 1. reads every walker's position back from its mocap body (so a SetEntityState teleport is
//!    where it walks on from) and its presence from the entity registry;
//! 2. asks each route for its preferred velocity (random dwells drawn from `rng_for`);
//! 3. measures the robots' velocities (finite difference of the body position between steps) and
//!    the driven (mocap) props' — every mocap body of the model that is not a walker, with the
//!    horizontal radius of its geoms;
//! 4. gives every present avoiding walker that is due — on its `orca.update_hz` gate, or its
//!    route target, dwell or presence changed since its last decision — the ORCA velocity
//!    (`crate::nav::orca`, for a velocity held one update period) against the other present
//!    walkers (½ share with an avoiding one, 1 with one that does not avoid), its robots
//!    and the props (1: they do not react); a walker without avoidance takes its preferred
//!    velocity every step, and one not due keeps the velocity it last chose. All are decided
//!    from the same state before any body moves, in registration order, so the result does not
//!    depend on the order of the plugins;
//! 5. moves each present walker by its velocity × dt and, when its velocity changed, faces it the
//!    way it walks. An absent walker stands still and is invisible to the others.

use std::cell::RefCell;
use std::rc::Rc;

use mujoco_rs::prelude::*;

use super::route::Route;
use crate::context::SimContext;
use crate::mujoco::raycast::ABSENT_GEOM_GROUP;
use crate::nav::orca::{self, Agent, Line, V2};

/// Blackboard key of the shared crowd.
pub const CROWD_KEY: &str = "people:crowd";

/// A body a walker yields to.
#[derive(Debug, Clone, PartialEq)]
pub struct RobotRef {
    /// Body id in the compiled model.
    pub body: usize,
    /// The robot entity it belongs to ("" when named by a body outside any robot): its presence
    /// decides whether it is avoided.
    pub entity: String,
    /// Radius of its disc (m).
    pub radius: f64,
}

/// What a walker contributes to the crowd.
#[derive(Debug, Clone)]
pub struct AgentSpec {
    /// Entity name (the entry's address).
    pub entity: String,
    /// Body id.
    pub body: usize,
    /// Mocap index of the body.
    pub mocap: usize,
    /// Disc radius (m).
    pub radius: f64,
    /// Walking speed (m/s).
    pub speed: f64,
    /// Runs ORCA.
    pub avoidance: bool,
    /// Neighbours considered within this centre distance (m).
    pub neighbor_dist: f64,
    /// ORCA time horizon (s).
    pub time_horizon: f64,
    /// Speed cap while giving way (m/s).
    pub max_speed: f64,
    /// An avoiding walker re-decides its velocity every this many physics steps (≥ 1).
    pub every: u64,
    /// The robots it yields to.
    pub robots: Vec<RobotRef>,
    /// Its patrol.
    pub route: Route,
    /// Getting unstuck, when it has `recovery`.
    pub recovery: Option<Recovery>,
}

/// How an avoiding walker gets unstuck: coming no closer to its target by [`PROGRESS_M`] in
/// `stuck_time` backs it up (half its speed, away from the target) for `backup_time`; after
/// `max_recovery` of those on one target it gives that target up (a patrol heads for the next
/// point, a goal fails).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Recovery {
    /// Seconds without progress that count as stuck.
    pub stuck_time: f64,
    /// Seconds a recovery backs up.
    pub backup_time: f64,
    /// Recoveries per target before giving it up.
    pub max_recovery: u32,
}

/// Progress (m) that resets a walker's stuck timer.
pub const PROGRESS_M: f64 = 0.05;

#[derive(Debug, Clone, Copy, Default)]
struct Progress {
    /// The closest it came to its target (m).
    best: f64,
    t: f64,
    target: Option<usize>,
    backing_until: Option<f64>,
}

/// One walker's state as the crowd last left it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AgentState {
    /// Position (m).
    pub pos: V2,
    /// Velocity it moved at in the last step (m/s).
    pub vel: V2,
    /// Velocity its route asked for (m/s).
    pub preferred: V2,
    /// Standing out a dwell.
    pub dwelling: bool,
    /// Present (absent walkers stand still and are not seen).
    pub present: bool,
    /// The route's target when the velocity was last decided (`None`: finished or standing).
    pub target: Option<usize>,
    /// Backing up in a recovery.
    pub backing: bool,
    /// Recoveries run for the current target.
    pub recoveries: u32,
    /// Targets given up (recoveries ran out) since the route was set.
    pub gave_up: u32,
}

#[derive(Debug, Clone)]
struct Tracked {
    body: usize,
    entity: String,
    radius: f64,
    last: Option<V2>,
    agent: Agent,
    present: bool,
    /// The body's geoms (a prop: absent when every one is in the absent group).
    geoms: Vec<usize>,
}

#[derive(Debug, Default)]
struct State {
    agents: Vec<(AgentSpec, AgentState)>,
    robots: Vec<Tracked>,
    props: Vec<Tracked>,
    yaw: Vec<f64>,
    /// Each walker's orientation as last written (w, x, y, z).
    quat: Vec<[f64; 4]>,
    /// Each walker's index in the entity registry, checked by name before use.
    entity_index: Vec<usize>,
    /// Physics steps since the reset (the update gates count on it).
    step: u64,
    /// Each walker's progress toward its target (recovery).
    progress: Vec<Progress>,
    /// Per-step scratch, kept between steps so a step allocates nothing: who re-decides, the
    /// ORCA snapshot, the new velocities, the half-planes.
    decide: Vec<bool>,
    snapshot: Vec<(Agent, bool, bool)>,
    new_vel: Vec<V2>,
    lines: Vec<Line>,
}

impl State {
    /// Whether walker `i` is present, through its cached registry index (looked up again when the
    /// registry changed under it).
    fn present(&mut self, i: usize, ctx: &SimContext) -> bool {
        let name = &self.agents[i].0.entity;
        let all = ctx.entities.all();
        match all.get(self.entity_index[i]) {
            Some(e) if e.name == *name => e.present,
            _ => match all.iter().position(|e| e.name == *name) {
                Some(k) => {
                    self.entity_index[i] = k;
                    all[k].present
                }
                None => true,
            },
        }
    }
}

/// One step of walker recovery (see [`Recovery`]): track its progress toward its target, back it
/// up when it made none for `stuck_time`, give the target up after `max_recovery` recoveries.
fn recover(rc: &Recovery, a: &mut AgentSpec, st: &mut AgentState, pr: &mut Progress, now: f64) {
    let to_target = |a: &AgentSpec, st: &AgentState| match st.target {
        Some(k) if k < a.route.points().len() => {
            let g = a.route.points()[k];
            orca::norm([g[0] - st.pos[0], g[1] - st.pos[1]])
        }
        _ => 0.0,
    };
    let d = to_target(a, st);
    if pr.target != st.target {
        *pr = Progress { best: d, t: now, target: st.target, backing_until: None };
        st.recoveries = 0;
    }
    st.backing = false;
    if let Some(until) = pr.backing_until {
        if now < until {
            st.preferred = [-0.5 * st.preferred[0], -0.5 * st.preferred[1]];
            st.backing = true;
            return;
        }
        pr.backing_until = None;
        pr.best = d;
        pr.t = now;
    }
    let walking = orca::norm(st.preferred) > 0.0;
    if !walking || d <= pr.best - PROGRESS_M {
        pr.best = d;
        pr.t = now;
    } else if now - pr.t > rc.stuck_time {
        pr.t = now;
        if st.recoveries < rc.max_recovery {
            st.recoveries += 1;
            pr.backing_until = Some(now + rc.backup_time);
            st.preferred = [-0.5 * st.preferred[0], -0.5 * st.preferred[1]];
            st.backing = true;
        } else {
            a.route.skip();
            st.gave_up += 1;
            st.recoveries = 0;
            st.preferred = [0.0, 0.0];
            st.target = a.route.target();
            st.dwelling = a.route.dwelling();
            *pr =
                Progress { best: to_target(a, st), t: now, target: st.target, backing_until: None };
        }
    }
}

/// The shared crowd (blackboard [`CROWD_KEY`]); cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct Crowd(Rc<RefCell<State>>);

/// Horizontal radius (m) of a body's geoms around the body origin, `None` without geoms.
fn horizontal_radius(m: &MjModel, body: usize) -> Option<f64> {
    let ng = m.ffi().ngeom as usize;
    let mut r: Option<f64> = None;
    for g in (0..ng).filter(|&g| m.geom_bodyid()[g] as usize == body) {
        let s = m.geom_size()[g];
        let extent = match m.geom_type()[g] {
            MjtGeomBase::mjGEOM_BOX => s[0].hypot(s[1]),
            MjtGeomBase::mjGEOM_ELLIPSOID => s[0].max(s[1]),
            MjtGeomBase::mjGEOM_SPHERE
            | MjtGeomBase::mjGEOM_CAPSULE
            | MjtGeomBase::mjGEOM_CYLINDER => s[0],
            MjtGeomBase::mjGEOM_PLANE => continue,
            _ => m.geom_rbound()[g],
        };
        let p = m.geom_pos()[g];
        let v = p[0].hypot(p[1]) + extent;
        r = Some(r.map_or(v, |x: f64| x.max(v)));
    }
    r
}

/// The geoms of `body`.
fn body_geoms(m: &MjModel, body: usize) -> Vec<usize> {
    (0..m.ffi().ngeom as usize).filter(|&g| m.geom_bodyid()[g] as usize == body).collect()
}

/// True when every one of a body's `geoms` sits in the absent-entity group (an absent driven prop).
fn body_absent(m: &MjModel, geoms: &[usize]) -> bool {
    geoms.iter().all(|&g| m.geom_group()[g] == ABSENT_GEOM_GROUP as i32)
}

impl Crowd {
    /// Add a walker's agent (configure).
    pub fn add(&self, spec: AgentSpec) {
        let mut s = self.0.borrow_mut();
        s.agents.push((spec, AgentState::default()));
        s.yaw.push(0.0);
        s.quat.push([1.0, 0.0, 0.0, 0.0]);
        s.entity_index.push(usize::MAX);
        s.progress.push(Progress::default());
    }

    /// How many walkers the crowd moves.
    pub fn len(&self) -> usize {
        self.0.borrow().agents.len()
    }

    /// True when no walker joined.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Give walker `entity` a new route (a goal's planned path, or its patrol back), walked from
    /// where it stands at the next step.
    pub fn set_route(&self, entity: &str, route: Route) {
        let mut s = self.0.borrow_mut();
        if let Some((a, st)) = s.agents.iter_mut().find(|(a, _)| a.entity == entity) {
            a.route = route;
            a.route.reset();
            // no real target: the next step sees a change and re-decides this walker's velocity
            st.target = Some(usize::MAX);
            st.recoveries = 0;
            st.gave_up = 0;
        }
    }

    /// The state of walker `entity` after the last step.
    pub fn state(&self, entity: &str) -> Option<AgentState> {
        self.0.borrow().agents.iter().find(|(a, _)| a.entity == entity).map(|(_, s)| *s)
    }

    /// Reset (the owning walker's `on_reset`, after `mj_resetData` re-seated every mocap body):
    /// routes back to their start, velocities zero, the robots and props to track collected.
    pub fn reset(&self, ctx: &mut SimContext) -> Result<(), String> {
        let mut s = self.0.borrow_mut();
        let m = ctx.model();
        let d = ctx.data();
        let walker_bodies: Vec<usize> = s.agents.iter().map(|(a, _)| a.body).collect();
        let mut robots: Vec<Tracked> = Vec::new();
        for (a, _) in &s.agents {
            for r in &a.robots {
                if !robots.iter().any(|t| t.body == r.body) {
                    robots.push(Tracked {
                        body: r.body,
                        entity: r.entity.clone(),
                        radius: r.radius,
                        last: None,
                        agent: Agent { pos: [0.0; 2], vel: [0.0; 2], radius: r.radius },
                        present: true,
                        geoms: Vec::new(),
                    });
                }
            }
        }
        let nbody = m.ffi().nbody as usize;
        let props = (0..nbody)
            .filter(|&b| m.body_mocapid()[b] >= 0 && !walker_bodies.contains(&b))
            .filter_map(|b| {
                horizontal_radius(m, b).map(|radius| Tracked {
                    body: b,
                    entity: String::new(),
                    radius,
                    last: None,
                    agent: Agent { pos: [0.0; 2], vel: [0.0; 2], radius },
                    present: true,
                    geoms: body_geoms(m, b),
                })
            })
            .collect();
        let mocap = d.mocap_pos();
        let quat = d.mocap_quat();
        let st = &mut *s;
        for ((a, state), yaw) in st.agents.iter_mut().zip(st.yaw.iter_mut()) {
            a.route.reset();
            let p = mocap[a.mocap];
            let q = quat[a.mocap];
            let present = ctx.entities.get(&a.entity).is_none_or(|e| e.present);
            *state = AgentState { pos: [p[0], p[1]], present, ..Default::default() };
            *yaw = crate::math::yaw_of(&q);
        }
        st.robots = robots;
        st.props = props;
        st.step = 0;
        st.progress.iter_mut().for_each(|p| *p = Progress::default());
        Ok(())
    }

    /// One step of the crowd (the owning walker's `pre_step`): the steps of the module notes.
    pub fn tick(&self, ctx: &mut SimContext) -> Result<(), String> {
        let mut guard = self.0.borrow_mut();
        let s = &mut *guard;
        let step = s.step;
        s.step += 1;
        s.sense_walkers(ctx, step)?;
        s.measure_others(ctx);
        s.decide_velocities(ctx.dt);
        s.move_walkers(ctx, step);
        Ok(())
    }
}

impl State {
    /// Steps 1 and 2: every walker's position, presence and preferred velocity, and who
    /// re-decides this step (`decide`): an avoiding walker on its update gate, or one whose
    /// situation changed since its last decision (it arrived, a dwell began or ended, it left or
    /// rejoined the world) — so a dwell starts where the route says, not up to one update period
    /// later.
    fn sense_walkers(&mut self, ctx: &SimContext, step: u64) -> Result<(), String> {
        let now = ctx.sim_time();
        let mut decide = std::mem::take(&mut self.decide);
        decide.clear();
        for i in 0..self.agents.len() {
            let present = self.present(i, ctx);
            let p = ctx.data().mocap_pos()[self.agents[i].0.mocap];
            let (a, st) = &mut self.agents[i];
            let was = (st.present, st.dwelling, st.target, st.backing);
            st.present = present;
            st.pos = [p[0], p[1]];
            // preferred velocity (random dwells drawn from the run's generator)
            if !st.present {
                st.preferred = [0.0, 0.0];
            } else {
                let entity = &a.entity;
                st.preferred = a.route.preferred(st.pos, now, a.speed, |lo, hi| {
                    let mut rng =
                        ctx.rng_for(&format!("walker:{entity}")).map_err(|e| e.to_string())?;
                    Ok(lo + (hi - lo) * rng.uniform())
                })?;
            }
            st.dwelling = a.route.dwelling();
            st.target = a.route.target();
            if let Some(rc) = a.recovery.filter(|_| a.avoidance && st.present) {
                recover(&rc, a, st, &mut self.progress[i], now);
            }
            let changed = was != (st.present, st.dwelling, st.target, st.backing);
            decide.push(!a.avoidance || changed || step % a.every == 0);
        }
        self.decide = decide;
        Ok(())
    }

    /// Step 3: the robots' and the driven props' positions and measured velocities.
    fn measure_others(&mut self, ctx: &SimContext) {
        let dt = ctx.dt;
        let m = ctx.model();
        let d = ctx.data();
        let xpos = d.xpos();
        let mocap = d.mocap_pos();
        for t in self.robots.iter_mut() {
            let p = [xpos[t.body][0], xpos[t.body][1]];
            t.present =
                t.entity.is_empty() || ctx.entities.get(&t.entity).is_none_or(|e| e.present);
            let v = t.last.map_or([0.0, 0.0], |l| [(p[0] - l[0]) / dt, (p[1] - l[1]) / dt]);
            t.last = Some(p);
            t.agent = Agent { pos: p, vel: v, radius: t.radius };
        }
        for t in self.props.iter_mut() {
            let id = m.body_mocapid()[t.body] as usize;
            let p = [mocap[id][0], mocap[id][1]];
            t.present = !body_absent(m, &t.geoms);
            let v = t.last.map_or([0.0, 0.0], |l| [(p[0] - l[0]) / dt, (p[1] - l[1]) / dt]);
            t.last = Some(p);
            t.agent = Agent { pos: p, vel: v, radius: t.radius };
        }
    }

    /// Step 4: every walker's new velocity (`new_vel`), all from the same state (the ORCA
    /// snapshot taken only when some walker runs it).
    fn decide_velocities(&mut self, dt: f64) {
        let decide = &self.decide;
        let orca_due =
            self.agents.iter().zip(decide).any(|((a, st), d)| *d && a.avoidance && st.present);
        let mut agents = std::mem::take(&mut self.snapshot);
        agents.clear();
        if orca_due {
            agents.extend(self.agents.iter().map(|(a, st)| {
                (Agent { pos: st.pos, vel: st.vel, radius: a.radius }, a.avoidance, st.present)
            }));
        }
        let mut new_vel = std::mem::take(&mut self.new_vel);
        new_vel.clear();
        let mut lines = std::mem::take(&mut self.lines);
        for (i, (a, st)) in self.agents.iter().enumerate() {
            if !st.present {
                new_vel.push([0.0, 0.0]);
                continue;
            }
            if !decide[i] {
                new_vel.push(st.vel);
                continue;
            }
            if !a.avoidance {
                new_vel.push(st.preferred);
                continue;
            }
            let me = agents[i].0;
            // the velocity is held for one update period: overlaps resolve within it
            let period = a.every as f64 * dt;
            let near = |o: &Agent| {
                orca::norm([o.pos[0] - me.pos[0], o.pos[1] - me.pos[1]]) < a.neighbor_dist
            };
            lines.clear();
            for (j, (other, avoids, present)) in agents.iter().enumerate() {
                if j == i || !present || !near(other) {
                    continue;
                }
                let share = if *avoids { 0.5 } else { 1.0 };
                let fallback = if i < j { [1.0, 0.0] } else { [-1.0, 0.0] };
                lines.push(orca::orca_line(&me, other, share, a.time_horizon, period, fallback));
            }
            let robots = self
                .robots
                .iter()
                .filter(|t| t.present && a.robots.iter().any(|r| r.body == t.body));
            let props = self.props.iter().filter(|t| t.present);
            for t in robots.chain(props) {
                if near(&t.agent) {
                    lines.push(orca::orca_line(
                        &me,
                        &t.agent,
                        1.0,
                        a.time_horizon,
                        period,
                        [1.0, 0.0],
                    ));
                }
            }
            new_vel.push(orca::solve(&lines, st.preferred, a.max_speed));
        }
        (self.snapshot, self.new_vel, self.lines) = (agents, new_vel, lines);
    }

    /// Step 5: each present walker moved by its new velocity × dt and faced the way it walks
    /// (or, at the end of a goal, the goal's yaw).
    fn move_walkers(&mut self, ctx: &mut SimContext, step: u64) {
        let dt = ctx.dt;
        let d = ctx.data_mut();
        let s = self;
        for ((((a, st), &v), yaw), quat) in
            s.agents.iter_mut().zip(&s.new_vel).zip(s.yaw.iter_mut()).zip(s.quat.iter_mut())
        {
            if !st.present {
                st.vel = [0.0, 0.0];
                continue;
            }
            // re-faced when the velocity changes (and on the first step after a reset); a finished
            // route with a final yaw (a goal's orientation) faces it
            let turned = v != st.vel || step == 0;
            st.vel = v;
            st.pos = [st.pos[0] + v[0] * dt, st.pos[1] + v[1] * dt];
            let p = &mut d.mocap_pos_mut()[a.mocap];
            p[0] = st.pos[0];
            p[1] = st.pos[1];
            let face = a.route.final_yaw().filter(|_| a.route.target().is_none());
            if let Some(y) = face {
                if *yaw != y || turned {
                    *yaw = y;
                    *quat = crate::math::yaw_quat_wxyz(y);
                }
            } else if turned {
                if orca::norm(v) > 1e-3 {
                    *yaw = v[1].atan2(v[0]);
                }
                *quat = crate::math::yaw_quat_wxyz(*yaw);
            }
            // upright and facing its travel, whatever a teleport wrote
            let q = &mut d.mocap_quat_mut()[a.mocap];
            if *q != *quat {
                *q = *quat;
            }
        }
    }
}
