//! `navigator`: move the entity this entry is nested under along a route, inside the simulator.
//!
//! A component of the entry whose entity it moves (ownership is position). The route is `goals`
//! (world metres), replaced at run time by a goal on the `navigate_to_pose` /
//! `navigate_through_poses` endpoints (nav2_msgs actions over ROS) or by the blackboard
//! [`NavHandle`] (`nav:<entity>`).
//!
//! **Output.** `drive` sends body-frame twists through the entity's base controller handle
//! (`robot:<entity>`), shaped for the kinematics the controller reports (diff → unicycle, omni →
//! holonomic, Ackermann → ackermann) — so the base's own limits, slip and odometry stay in the
//! loop. `mocap` writes the entity's mocap pose every physics step along the path at `speed`
//! (a driven prop: `motion: driven`). `auto` picks `drive` when the entity has a base controller.
//!
//! **Planning.** `route_mode: plan` runs A* (`crate::nav::astar`) from where the mover is to each
//! goal on an occupancy grid of the static geometry overlapping `obstacle_height`, inflated by
//! `planner.inflation_radius` (`crate::nav::grid`); movers agreeing on band, resolution and
//! inflation share one grid on the blackboard. `exact` drives straight at each point.
//!
//! **Tracking.** `waypoint` steers at the next path point (passed within
//! `planner.waypoint_radius`, goals within `arrival_radius`); `pure_pursuit` steers at the point
//! `lookahead` along the path past the mover's projection onto it, which bounds cross-track
//! error by the lookahead. A goal with a yaw is finished by turning in place to it (not on an
//! Ackermann base, which cannot).
//!
//! **Avoidance** (`avoidance:`). The forward probe casts `rays` rays across `width` at `height`,
//! from the mover's front out to `lookahead`; what the planner grid already holds is ignored
//! (walls are the planner's business), as are the mover itself and the `ignore` entities. `stop`
//! holds while the corridor is blocked and sets off after it has been clear for `clear_time`;
//! `reroute` marks a blockage that lasted `yield_time` as a disc on the mover's own copy of the
//! grid, plans around it, and forgets it after `forget_after`.
//!
//! **Recovery.** Less than 5 cm of progress over `recovery.stuck_time` while moving is stuck: back
//! up for `backup_time`, plan again, at most `max_recovery` times per goal; then the goal fails
//! (`stuck` is set, a running action aborts).
//!
//! Dwell draws come from `ctx.rng_for("<address>/dwell/<point>")`: seeded, identical across runs
//! with the same seed, re-drawn per episode.

pub mod config;
mod goals;
pub mod handle;
pub mod motion;
mod planning;
pub mod steer;

use std::rc::Rc;

use crate::context::payload::{
    ActionCall, ActionOutcome, GoalStatus, NavFeedback, NavPose, PoseTwist,
};
use crate::context::{Endpoint, EndpointId, Payload, SimContext};
use crate::error::HookResult;
use crate::handles::robot::{robot_key, RobotHandle};
use crate::math::{quat, wrap_angle, wxyz, yaw_of, yaw_quat_xyzw, UnitQuaternion};
use crate::mujoco::raycast::RayBatch;
use crate::nav::astar;
use crate::nav::grid::{static_footprints, Footprint, Grid};
use crate::nav::path::Polyline;
use crate::plugin::{Hooks, Plugin, PluginArgs};
use crate::plugins::shared::owner::{entity_present, owner_entity, Scope};
use crate::plugins::shared::resolve::{entity_body, entity_roots, in_entity};

pub use config::NavigatorConfig;
use config::{DwellPoint, Kinematics, Output, RouteMode, Tracker};
use goals::Active;
pub use handle::{nav_key, NavHandle, NavPhase, NavState};

pub use crate::plugins::shared::nav_goal::{codes, Failure};

/// Progress (m) that resets the stuck timer.
const PROGRESS_M: f64 = 0.05;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Goal {
    xy: [f64; 2],
    yaw: Option<f64>,
}

fn goals_of(v: &[Vec<f64>]) -> Vec<Goal> {
    v.iter().map(|g| Goal { xy: [g[0], g[1]], yaw: g.get(2).copied() }).collect()
}

enum Out {
    Drive(RobotHandle),
    Mocap(usize),
}

#[derive(Default)]
struct Run {
    goals: Vec<Goal>,
    k: usize,
    leg: Polyline,
    leg_s: f64,
    wp: usize,
    phase: NavPhase,
    until: f64,
    started: bool,
    blocked_since: f64,
    clear_since: Option<f64>,
    hit: Option<[f64; 2]>,
    recoveries: u32,
    reroutes: u32,
    reached: u32,
    stuck: bool,
    error: Option<String>,
    progress_xy: [f64; 2],
    progress_t: f64,
    blockages: Vec<([f64; 2], f64, f64)>,
    commanding: bool,
    mocap_xy: [f64; 2],
    mocap_yaw: f64,
    hold_yaw: f64,
    blocked_by: Option<String>,
    yielding: Option<String>,
    /// The navigators a deadlock with was told about this episode.
    deadlocks_told: Vec<String>,
    my_last: Option<([f64; 2], f64)>,
}

/// The `navigator` plugin.
pub struct Navigator {
    cfg: NavigatorConfig,
    address: String,
    label: String,
    owner: Option<String>,
    entity: String,
    body: usize,
    roots: Vec<usize>,
    ignore_roots: Vec<usize>,
    out: Option<Out>,
    kin: Kinematics,
    every: u64,
    ep_to_pose: EndpointId,
    ep_through: EndpointId,
    ep_start: EndpointId,
    ep_stop: EndpointId,
    ep_goal: EndpointId,
    ep_reached: EndpointId,
    ep_stuck: EndpointId,
    handle: NavHandle,
    footprints: Rc<Vec<Footprint>>,
    known: Vec<bool>,
    base_grid: Option<Rc<Grid>>,
    grid: Option<Grid>,
    front: f64,
    z0: f64,
    q0: [f64; 4],
    action: Option<Active>,
    st: Run,
    given: Vec<String>,
    /// How the log names this navigator (made once: `intake` runs every step).
    who: String,
    reach: f64,
    others: Vec<steer::Other>,
}

impl Navigator {
    /// Construct from config.
    pub fn new(cfg: NavigatorConfig, args: &PluginArgs) -> Self {
        Navigator {
            cfg,
            address: args.address.clone(),
            label: args.label.clone(),
            owner: args.owner.clone(),
            entity: String::new(),
            body: 0,
            roots: Vec::new(),
            ignore_roots: Vec::new(),
            out: None,
            kin: Kinematics::Unicycle,
            every: 1,
            ep_to_pose: 0,
            ep_through: 0,
            ep_start: 0,
            ep_stop: 0,
            ep_goal: 0,
            ep_reached: 0,
            ep_stuck: 0,
            handle: NavHandle::default(),
            footprints: Rc::new(Vec::new()),
            known: Vec::new(),
            base_grid: None,
            grid: None,
            front: 0.0,
            z0: 0.0,
            q0: [1.0, 0.0, 0.0, 0.0],
            action: None,
            st: Run::default(),
            given: Vec::new(),
            who: format!("[{}]", args.address),
            reach: 0.0,
            others: Vec::new(),
        }
    }

    /// World (x, y, yaw) of the mover's root body.
    pub(super) fn pose(&self, ctx: &SimContext) -> [f64; 3] {
        if let Some(Out::Mocap(_)) = self.out {
            return [self.st.mocap_xy[0], self.st.mocap_xy[1], self.st.mocap_yaw];
        }
        let d = ctx.data();
        let p = d.xpos()[self.body];
        [p[0], p[1], yaw_of(&d.xquat()[self.body])]
    }

    /// Resolve the output (after every configure, so a base controller listed after this entry
    /// has put its handle on the blackboard).
    fn resolve_output(&mut self, ctx: &mut SimContext) -> Result<(), String> {
        if self.out.is_some() {
            return Ok(());
        }
        let handle = ctx.blackboard.get::<RobotHandle>(&robot_key(&self.entity)).ok().cloned();
        let mocap = ctx.model().body_mocapid()[self.body];
        let out = match (self.cfg.output, handle, mocap) {
            (Output::Drive | Output::Auto, Some(h), _) => Out::Drive(h),
            (Output::Mocap | Output::Auto, _, m) if m >= 0 => Out::Mocap(m as usize),
            (Output::Drive, None, _) => {
                return Err(format!(
                    "`output: drive` needs a base controller on entity `{}` (diff_drive, omni_drive or ackermann_drive \
                     in its components, which puts `robot:{}` on the blackboard); there is none",
                    self.entity, self.entity
                ))
            }
            (Output::Mocap, _, _) => {
                return Err(format!(
                    "`output: mocap` needs entity `{}`'s root body `{}` to be a mocap body (`motion: driven` on a box, \
                     cylinder or spawn_model); it is not",
                    self.entity,
                    ctx.model().id_to_name(mujoco_rs::prelude::MjtObjBase::mjOBJ_BODY, self.body).unwrap_or("?")
                ))
            }
            (Output::Auto, None, _) => {
                return Err(format!(
                    "nothing to move entity `{}` with: it has no base controller (`robot:{}` on the blackboard) and its root \
                     body is not a mocap body; add a drive plugin to its components or give it `motion: driven`",
                    self.entity, self.entity
                ))
            }
        };
        self.kin = match (&out, self.cfg.kinematics) {
            (Out::Mocap(_), _) => Kinematics::Holonomic,
            (Out::Drive(h), Kinematics::Auto) => match h.controller() {
                "omni_drive" => Kinematics::Holonomic,
                "ackermann_drive" => Kinematics::Ackermann,
                _ => Kinematics::Unicycle,
            },
            (_, k) => k,
        };
        if self.cfg.output == Output::Auto {
            let mocap = matches!(out, Out::Mocap(_));
            let why = if mocap {
                format!("`output: auto` found no base controller on entity `{}`", self.entity)
            } else {
                format!("`output: auto` found entity `{}`'s base controller", self.entity)
            };
            let e = config::output_key_errors(&self.cfg, &self.given, mocap, &why);
            if !e.is_empty() {
                return Err(e.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "));
            }
        }
        if let Out::Mocap(_) = out {
            crate::plugins::shared::owner::claim_mover(
                ctx,
                &format!("`navigator` at `{}`", self.address),
                &self.entity,
            )?;
        }
        self.out = Some(out);
        Ok(())
    }

    /// Set the route and start toward its first goal after the start's dwell.
    fn begin_route(&mut self, ctx: &mut SimContext, goals: Vec<Goal>) {
        self.st.goals = goals;
        self.st.k = 0;
        self.st.reached = 0;
        self.st.recoveries = 0;
        self.st.stuck = false;
        self.st.error = None;
        self.st.yielding = None;
        self.st.blocked_by = None;
        self.st.leg = Polyline::default();
        if self.st.goals.is_empty() {
            self.st.phase = NavPhase::Idle;
            return;
        }
        self.st.phase = NavPhase::Dwelling;
        self.st.until = ctx.sim_time() + self.dwell(ctx, 0);
        self.st.leg = Polyline::new(vec![[self.pose(ctx)[0], self.pose(ctx)[1]]]);
    }

    /// The dwell at route point `k` (0 = the start), drawn from the run's seed when it is a range.
    fn dwell(&self, ctx: &SimContext, k: usize) -> f64 {
        let Some(d) = &self.cfg.dwell else { return 0.0 };
        match d.at(k) {
            DwellPoint::Fixed(x) => x,
            DwellPoint::Range([lo, hi]) => {
                match ctx.rng_for(&format!("{}/dwell/{k}", self.address)) {
                    Ok(mut r) => lo + (hi - lo) * r.uniform(),
                    Err(e) => {
                        tracing::warn!("[{}] {e}; dwelling {lo} s", self.address);
                        lo
                    }
                }
            }
        }
    }

    /// Stop commanding (one zero twist when a command was being sent).
    fn halt(&mut self) {
        if let Some(Out::Drive(h)) = &self.out {
            if self.st.commanding {
                h.drive(0.0, 0.0, 0.0);
            }
        }
        self.st.commanding = false;
    }

    fn command(&mut self, t: [f64; 3]) {
        if let Some(Out::Drive(h)) = &self.out {
            h.drive(t[0], t[1], t[2]);
            self.st.commanding = true;
        }
    }

    pub(super) fn fail(&mut self, ctx: &SimContext, f: Failure) {
        tracing::warn!(
            "[{}] navigation failed at t = {:.3} s: {}",
            self.address,
            ctx.sim_time(),
            f.msg
        );
        self.st.phase = NavPhase::Failed;
        self.st.error = Some(f.msg.clone());
        self.halt();
        self.finish(GoalStatus::Aborted, f.code, f.msg);
    }

    /// Whether the route starts over after its last goal: the configured `loop`, except for a
    /// route a NavigateToPose / NavigateThroughPoses goal gave, which ends at its last pose (the
    /// action succeeds there, as nav2's does).
    fn looping(&self) -> bool {
        self.cfg.loop_route && self.action.is_none()
    }

    /// Goal `k` reached: dwell and go on, or arrive.
    fn reached_goal(&mut self, ctx: &mut SimContext) {
        self.st.reached += 1;
        let last = self.st.k + 1 == self.st.goals.len();
        if last && !self.looping() {
            self.st.phase = NavPhase::Arrived;
            self.halt();
            self.finish(GoalStatus::Succeeded, codes::NONE, "");
            return;
        }
        let dwell = self.dwell(ctx, self.st.k + 1);
        self.st.k = (self.st.k + 1) % self.st.goals.len();
        self.st.recoveries = 0;
        self.st.phase = NavPhase::Dwelling;
        self.st.until = ctx.sim_time() + dwell;
        self.halt();
    }

    /// Remaining route length from the mover to the last goal (m).
    fn remaining(&self, xy: [f64; 2]) -> f64 {
        let leg = (self.st.leg.length() - self.st.leg_s).max(0.0);
        let here = if self.st.leg.points().len() < 2 {
            self.st
                .goals
                .get(self.st.k)
                .map(|g| (g.xy[0] - xy[0]).hypot(g.xy[1] - xy[1]))
                .unwrap_or(0.0)
        } else {
            leg
        };
        let mut rest = 0.0;
        for w in self.st.goals.get(self.st.k..).unwrap_or(&[]).windows(2) {
            rest += (w[1].xy[0] - w[0].xy[0]).hypot(w[1].xy[1] - w[0].xy[1]);
        }
        here + rest
    }

    /// One navigation update (every `update_hz`).
    fn update(&mut self, ctx: &mut SimContext) {
        let now = ctx.sim_time();
        let pose = self.pose(ctx);
        let xy = [pose[0], pose[1]];
        // forget old blockages
        let fa = self.cfg.avoidance.forget_after;
        let before = self.st.blockages.len();
        self.st.blockages.retain(|b| now - b.2 < fa);
        if self.st.blockages.len() != before {
            self.rebuild_blockages();
        }
        if !self.st.started {
            return;
        }
        match self.st.phase {
            NavPhase::Idle | NavPhase::Arrived | NavPhase::Failed => {}
            NavPhase::Dwelling => {
                if now >= self.st.until {
                    match self.plan_leg(ctx, xy) {
                        Ok(()) => self.st.phase = NavPhase::Moving,
                        Err(e) => self.fail(ctx, e),
                    }
                }
            }
            NavPhase::Recovering => {
                if now >= self.st.until {
                    self.halt();
                    match self.plan_leg(ctx, xy) {
                        Ok(()) => self.st.phase = NavPhase::Moving,
                        Err(e) => self.fail(ctx, e),
                    }
                } else {
                    let back = match self.kin {
                        Kinematics::Holonomic => {
                            let d = self.travel_dir(xy);
                            let (s, c) = (d - pose[2]).sin_cos();
                            [-0.5 * self.cfg.speed * c, -0.5 * self.cfg.speed * s, 0.0]
                        }
                        _ => [-0.5 * self.cfg.speed, 0.0, 0.0],
                    };
                    self.command(back);
                }
            }
            NavPhase::Aligning => {
                let yaw = self.st.goals[self.st.k].yaw.unwrap_or(pose[2]);
                if matches!(self.out, Some(Out::Mocap(_))) {
                    if (wrap_angle(yaw - pose[2])).abs() < 1e-9 {
                        self.reached_goal(ctx);
                    }
                } else {
                    let (wz, done) = motion::align(&self.cfg, pose[2], yaw);
                    if done {
                        self.halt();
                        self.reached_goal(ctx);
                    } else {
                        self.command([0.0, 0.0, wz]);
                    }
                }
            }
            NavPhase::Blocked => {
                let target = self.target(xy);
                let v = self.steer_velocity(ctx, pose, target);
                let dir = self.probe_dir(xy, v);
                let hit = self.probe(ctx, pose, dir, self.steer_probe_width());
                if let Some((hit, who)) = hit {
                    self.st.clear_since = None;
                    self.st.hit = Some(hit);
                    self.st.blocked_by = who;
                    if self.cfg.avoidance.reroute
                        && now - self.st.blocked_since >= self.cfg.avoidance.yield_time
                    {
                        self.reroute(ctx, hit, xy, now);
                    } else {
                        self.check_deadlock(ctx, now);
                    }
                } else {
                    let since = *self.st.clear_since.get_or_insert(now);
                    if now - since >= self.cfg.avoidance.clear_time {
                        self.st.blocked_by = None;
                        self.st.phase = NavPhase::Moving;
                        self.st.progress_xy = xy;
                        self.st.progress_t = now;
                    }
                }
            }
            NavPhase::Moving => self.update_moving(ctx, now, pose),
        }
    }

    /// Heading of travel: toward the current target on the leg.
    fn travel_dir(&self, xy: [f64; 2]) -> f64 {
        let t = self.target(xy);
        (t[1] - xy[1]).atan2(t[0] - xy[0])
    }

    /// Direction the probe looks: along the steered velocity when a model steers, else toward
    /// the target.
    fn probe_dir(&self, xy: [f64; 2], v: Option<[f64; 2]>) -> f64 {
        match v {
            Some(v) if v[0].hypot(v[1]) > 1e-6 => v[1].atan2(v[0]),
            _ => self.travel_dir(xy),
        }
    }

    /// The point steered at.
    fn target(&self, _xy: [f64; 2]) -> [f64; 2] {
        let pts = self.st.leg.points();
        if pts.is_empty() {
            return _xy;
        }
        match self.cfg.tracker {
            Tracker::Waypoint => pts[self.st.wp.min(pts.len() - 1)],
            Tracker::PurePursuit => self.st.leg.at(self.st.leg_s + self.cfg.lookahead),
        }
    }

    fn update_moving(&mut self, ctx: &mut SimContext, now: f64, pose: [f64; 3]) {
        let xy = [pose[0], pose[1]];
        let goal = self.st.goals[self.st.k];
        let last_point = self.st.leg.points().len() - 1;
        // progress along the leg
        let (s, _) = self.st.leg.project(xy, self.st.leg_s, self.cfg.lookahead.max(1.0) * 2.0);
        self.st.leg_s = s;
        if self.cfg.tracker == Tracker::Waypoint {
            let r = self.cfg.planner.waypoint_radius;
            while self.st.wp < last_point {
                let p = self.st.leg.points()[self.st.wp];
                if (p[0] - xy[0]).hypot(p[1] - xy[1]) <= r {
                    self.st.wp += 1;
                } else {
                    break;
                }
            }
        }
        let dist = (goal.xy[0] - xy[0]).hypot(goal.xy[1] - xy[1]);
        let intermediate = self.st.k + 1 < self.st.goals.len() || self.looping();
        let crossed = self.cfg.tracker == Tracker::PurePursuit
            && intermediate
            && self.st.leg.length() - s < 1e-6;
        // a mocap mover follows the path exactly, so it arrives at the point itself
        let arrived = match self.out {
            Some(Out::Mocap(_)) => self.st.leg.length() - s < 1e-9,
            _ => dist <= self.cfg.arrival_radius || crossed,
        };
        if arrived {
            self.st.yielding = None;
            self.halt();
            let turnable = self.kin != Kinematics::Ackermann;
            if goal.yaw.is_some() && turnable {
                self.st.phase = NavPhase::Aligning;
            } else {
                self.reached_goal(ctx);
            }
            return;
        }
        // steering (a model, and something that moves near), then the probe along it
        let target = self.target(xy);
        self.end_yield(ctx, xy, target);
        let steered = self.steer_velocity(ctx, pose, target);
        let dir = self.probe_dir(xy, steered);
        if self.cfg.avoidance.stop && self.st.yielding.is_none() {
            if let Some((hit, who)) = self.probe(ctx, pose, dir, self.steer_probe_width()) {
                self.st.phase = NavPhase::Blocked;
                self.st.blocked_since = now;
                self.st.clear_since = None;
                self.st.hit = Some(hit);
                self.st.blocked_by = who;
                self.halt();
                return;
            }
        }
        // stuck?
        if matches!(self.out, Some(Out::Drive(_))) {
            let moved = (xy[0] - self.st.progress_xy[0]).hypot(xy[1] - self.st.progress_xy[1]);
            if moved >= PROGRESS_M {
                self.st.progress_xy = xy;
                self.st.progress_t = now;
            } else if now - self.st.progress_t > self.cfg.recovery.stuck_time {
                if self.cfg.recovery.enabled && self.st.recoveries < self.cfg.recovery.max_recovery
                {
                    self.st.recoveries += 1;
                    self.st.phase = NavPhase::Recovering;
                    self.st.until = now + self.cfg.recovery.backup_time;
                    self.st.progress_t = now;
                    return;
                }
                self.st.stuck = true;
                let why = format!(
                    "stuck at ({:.2}, {:.2}) on the way to ({:.2}, {:.2}): no progress for {} s after {} recoveries",
                    xy[0], xy[1], goal.xy[0], goal.xy[1], self.cfg.recovery.stuck_time, self.st.recoveries
                );
                self.fail(ctx, Failure { code: codes::FAILED_TO_MAKE_PROGRESS, msg: why });
                return;
            }
        }
        let hold = self.st.hold_yaw;
        let t = match steered {
            Some(v) => motion::twist_along(&self.cfg, self.kin, pose, v, hold),
            None => motion::twist_toward(&self.cfg, self.kin, pose, target, hold, self.cfg.speed),
        };
        self.command(t);
    }

    /// Mocap output: advance along the leg at `speed` and turn toward the travel (every step).
    fn mocap_step(&mut self, ctx: &mut SimContext, mocap: usize) {
        let dt = ctx.dt;
        let st = &mut self.st;
        if st.started && st.phase == NavPhase::Moving && st.leg.points().len() >= 2 {
            let s = (st.leg_s + self.cfg.speed * dt).min(st.leg.length());
            let p = st.leg.at(s);
            let (dx, dy) = (p[0] - st.mocap_xy[0], p[1] - st.mocap_xy[1]);
            if dx.hypot(dy) > 1e-12 {
                st.mocap_yaw = motion::turn_step(st.mocap_yaw, dy.atan2(dx), self.cfg.yaw_rate, dt);
            }
            st.mocap_xy = p;
            st.leg_s = s;
        } else if st.started && st.phase == NavPhase::Aligning {
            if let Some(y) = st.goals.get(st.k).and_then(|g| g.yaw) {
                st.mocap_yaw = motion::turn_step(st.mocap_yaw, y, self.cfg.yaw_rate, dt);
            }
        }
        let yaw0 = yaw_of(&self.q0);
        let turn = UnitQuaternion::from_euler_angles(0.0, 0.0, st.mocap_yaw - yaw0);
        let q = wxyz(&(turn * quat(&self.q0)));
        let d = ctx.data_mut();
        d.mocap_pos_mut()[mocap] = [st.mocap_xy[0], st.mocap_xy[1], self.z0];
        d.mocap_quat_mut()[mocap] = q;
    }
}

impl Plugin for Navigator {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::PRE_STEP | Hooks::POST_STEP | Hooks::SHUTDOWN
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let entity = owner_entity(ctx, "navigator", self.owner.as_deref())?;
        self.body = entity_body(ctx.model(), &entity)?;
        self.roots = entity_roots(ctx.model(), &entity)?;
        for name in &self.cfg.avoidance.ignore {
            let e = ctx.entities.get(name).ok_or_else(|| {
                format!(
                    "avoidance.ignore names entity `{name}`, which this world does not have (entities: [{}])",
                    ctx.entities.names().join(", ")
                )
            })?;
            self.ignore_roots.extend(entity_roots(ctx.model(), e)?);
        }
        self.entity = entity.name.clone();
        let key = nav_key(&entity.name);
        if ctx.blackboard.contains(&key) {
            return Err(format!(
                "entity `{}` already has a navigator (`{key}` is taken); one navigator moves one entity",
                entity.name
            ));
        }
        ctx.blackboard.set(key, self.handle.clone());
        self.every = ((1.0 / (self.cfg.update_hz * ctx.dt)).round() as u64).max(1);
        let scope = Scope::new(&entity, None);
        let mk = |ep: Endpoint| scope.apply(ep, &self.cfg.topics);
        let label = self.label.clone();
        self.ep_to_pose = ctx.interface.add(mk(Endpoint::input("navigate_to_pose")
            .hint("ros2", "action", "nav2_msgs/action/NavigateToPose")
            .hint("ros2", "topic", "navigate_to_pose")));
        self.ep_through = ctx.interface.add(mk(Endpoint::input("navigate_through_poses")
            .hint("ros2", "action", "nav2_msgs/action/NavigateThroughPoses")
            .hint("ros2", "topic", "navigate_through_poses")));
        self.ep_start = ctx.interface.add(mk(Endpoint::input("start")
            .hint("ros2", "service", "std_srvs/srv/Trigger")
            .hint("ros2", "topic", format!("{label}/start"))));
        self.ep_stop = ctx.interface.add(mk(Endpoint::input("stop")
            .hint("ros2", "service", "std_srvs/srv/Trigger")
            .hint("ros2", "topic", format!("{label}/stop"))));
        let rate = self.cfg.update_hz;
        self.ep_goal = ctx.interface.add(mk(Endpoint::out("goal")
            .rate(rate)
            .hint("ros2", "type", "geometry_msgs/msg/PoseStamped")
            .hint("ros2", "qos", "reliable")
            .hint("ros2", "topic", format!("{label}/goal"))));
        self.ep_reached = ctx.interface.add(mk(Endpoint::out("reached")
            .rate(rate)
            .hint("ros2", "type", "std_msgs/msg/Bool")
            .hint("ros2", "qos", "reliable")
            .hint("ros2", "topic", format!("{label}/reached"))));
        self.ep_stuck = ctx.interface.add(mk(Endpoint::out("stuck")
            .rate(rate)
            .hint("ros2", "type", "std_msgs/msg/Bool")
            .hint("ros2", "qos", "reliable")
            .hint("ros2", "topic", format!("{label}/stuck"))));
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.resolve_output(ctx)?;
        if self.known.is_empty() {
            // the static geometry, read once (it cannot move)
            self.footprints = Rc::new(static_footprints(ctx.data(), self.cfg.obstacle_height));
            self.known = vec![false; ctx.model().ffi().ngeom as usize];
            for f in self.footprints.iter() {
                self.known[f.geom] = true;
            }
            // the front: how far the mover's geoms reach from its root, in the floor plane
            let m = ctx.model();
            let d = ctx.data();
            let c = d.xpos()[self.body];
            let mut front: f64 = 0.0;
            for g in 0..m.ffi().ngeom as usize {
                let collides = m.geom_contype()[g] != 0 || m.geom_conaffinity()[g] != 0;
                if collides && in_entity(m, m.geom_bodyid()[g] as usize, &self.roots) {
                    let p = d.geom_xpos()[g];
                    front = front.max((p[0] - c[0]).hypot(p[1] - c[1]) + m.geom_rbound()[g]);
                }
            }
            self.front = front;
            self.collect_others(ctx)?;
        }
        self.reset_others();
        self.finish(GoalStatus::Aborted, codes::NONE, "the simulation was reset");
        self.st = Run::default();
        self.st.blockages.clear();
        self.rebuild_blockages();
        let d = ctx.data();
        let p = d.xpos()[self.body];
        self.z0 = p[2];
        self.q0 = d.xquat()[self.body];
        if let Some(Out::Mocap(m)) = self.out {
            let mp = d.mocap_pos()[m];
            self.z0 = mp[2];
            self.q0 = d.mocap_quat()[m];
            self.st.mocap_xy = [mp[0], mp[1]];
        }
        self.st.mocap_yaw = yaw_of(&self.q0);
        self.st.hold_yaw = yaw_of(&self.q0);
        let goals = goals_of(&self.cfg.goals);
        // a configured route must be plannable from the start: say so now, not mid-run (one
        // flood fill of the grid, however many goals)
        if self.cfg.route_mode == RouteMode::Plan && !goals.is_empty() {
            let mut from = [p[0], p[1]];
            if let Some(Out::Mocap(_)) = self.out {
                from = self.st.mocap_xy;
            }
            let pts: Vec<[f64; 2]> = goals.iter().map(|g| g.xy).collect();
            let grid =
                self.planning_grid(ctx, from, &pts).map_err(|e| format!("goals: {}", e.msg))?;
            astar::check_reachable(grid, from, &pts)
                .map_err(|(k, e)| format!("goals[{k}]: {}", Failure::plan(&e).msg))?;
        }
        self.begin_route(ctx, goals);
        self.st.started = self.cfg.autostart;
        Ok(())
    }

    fn pre_step(&mut self, ctx: &mut SimContext) -> HookResult {
        self.intake(ctx);
        if !entity_present(ctx, &self.entity) {
            self.halt();
            return Ok(());
        }
        if ctx.run.manual_control {
            return Ok(());
        }
        if ctx.tick % self.every == 0 {
            self.update(ctx);
        }
        if let Some(Out::Mocap(m)) = self.out {
            self.mocap_step(ctx, m);
        }
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if ctx.tick % self.every == 0 {
            self.publish_state(ctx);
        }
        Ok(())
    }

    fn shutdown(&mut self, _ctx: &mut SimContext) -> HookResult {
        self.finish(GoalStatus::Aborted, codes::NONE, "the simulator is shutting down");
        Ok(())
    }
}

/// The registry entry of `navigator`.
pub fn descriptor() -> crate::plugin::PluginDescriptor {
    crate::plugin_descriptor!(
        "navigator",
        "Move the owning entity along a route inside the simulator: A* on the static geometry, waypoint or pure-pursuit tracking, probe stop/reroute, recovery; nav2_msgs goals.",
        NavigatorConfig;
        create
    )
    .requires_owner()
}

/// Typed config → validated → the keys of the other output refused when `output` is stated
/// (with `auto` they are checked once the output is resolved) → plugin.
fn create(
    v: &serde_norway::Value,
    args: &PluginArgs,
) -> Result<Box<dyn Plugin>, Vec<crate::error::ConfigError>> {
    // every problem at once: the values' own (a key of the wrong type dropped, so it hides
    // nothing), then the keys of the other output
    let (cfg, mut e) = crate::plugin::typed_validated_partial::<NavigatorConfig>(v);
    let Some(cfg) = cfg else { return Err(e) };
    let given = config::given_keys(v);
    match cfg.output {
        Output::Mocap => e.extend(config::output_key_errors(&cfg, &given, true, "`output: mocap`")),
        Output::Drive => {
            e.extend(config::output_key_errors(&cfg, &given, false, "`output: drive`"))
        }
        Output::Auto => {}
    }
    if !e.is_empty() {
        return Err(e);
    }
    let mut n = Navigator::new(cfg, args);
    n.given = given;
    Ok(Box::new(n))
}
