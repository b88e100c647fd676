//! A walker driven to goals: the nav2 NavigateToPose / NavigateThroughPoses endpoints a walker
//! declares (served over ROS by the same action servers as the navigator's), A* on the planner
//! grid the movers share, the planned path handed to the crowd as the walker's route, feedback
//! while it walks, and the outcome on arrival, cancel, preemption or reset.
//!
//! A goal replaces the patrol: the walker walks the planned path (its corners reached within the
//! planner's `waypoint_radius`, each goal pose within `arrival_radius`), still giving way through
//! the crowd when it avoids, and stands at the last pose. A reset puts it back on its patrol.

use std::rc::Rc;
use std::sync::atomic::Ordering;

use super::crowd::Crowd;
use super::route::{Dwell, Route};
use crate::context::payload::{
    ActionCall, ActionOutcome, GoalStatus, NavFeedback, NavPose, Payload,
};
use crate::context::{Endpoint, EndpointId, SimContext};
use crate::math::yaw_quat_xyzw;
use crate::nav::astar;
use crate::nav::grid::{bounds_of, static_footprints, Footprint};
use crate::plugins::shared::nav_goal::{codes, refuse, take_goals, Failure};
use crate::plugins::shared::nav_grid::{shared_grid, GridSpec};

/// How a goal-driven walker plans.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GoalPlanner {
    /// The grid: the band a geom must reach into to be a wall for a person, resolution and
    /// inflation radius.
    pub grid: GridSpec,
    /// A planned path's corners count as passed within this distance (m).
    pub waypoint_radius: f64,
    /// A goal pose counts as reached within this distance (m).
    pub arrival_radius: f64,
    /// Walking speed (m/s), for the time remaining.
    pub speed: f64,
}

struct Active {
    call: ActionCall,
    t0: f64,
    /// The planned path, the walker's position first.
    path: Vec<[f64; 2]>,
    /// Index in `path` of each goal pose.
    goal_at: Vec<usize>,
}

/// A walker's goal endpoints and the goal it is walking to.
pub struct WalkerGoals {
    entity: String,
    /// How the log names this walker (made once: `intake` runs every step).
    who: String,
    planner: GoalPlanner,
    ep_to_pose: EndpointId,
    ep_through: EndpointId,
    footprints: Option<Rc<Vec<Footprint>>>,
    active: Option<Active>,
    /// Feedback every this many physics steps.
    every: u64,
}

impl WalkerGoals {
    /// Declare the endpoints for walker `entity`: the NavigateToPose and NavigateThroughPoses
    /// actions at the relative names `names` (in that order) in the walker's namespace.
    pub fn declare(
        ctx: &mut SimContext,
        entity: &str,
        namespace: &str,
        names: [String; 2],
        planner: GoalPlanner,
        feedback_every: u64,
    ) -> Self {
        let mk = |name: &str, ty: &str, topic: &str| {
            Endpoint::input(name)
                .owner(Some(entity))
                .namespace(namespace)
                .hint("ros2", "action", ty)
                .hint("ros2", "topic", topic)
        };
        let [to_pose, through] = names;
        let ep_to_pose =
            ctx.interface.add(mk("navigate_to_pose", "nav2_msgs/action/NavigateToPose", &to_pose));
        let ep_through = ctx.interface.add(mk(
            "navigate_through_poses",
            "nav2_msgs/action/NavigateThroughPoses",
            &through,
        ));
        WalkerGoals {
            entity: entity.to_string(),
            who: format!("walker `{entity}`"),
            planner,
            ep_to_pose,
            ep_through,
            footprints: None,
            active: None,
            every: feedback_every.max(1),
        }
    }

    /// End the running goal, if any, with `status`.
    pub fn finish(&mut self, status: GoalStatus, code: u16, msg: &str) {
        if let Some(a) = self.active.take() {
            let _ = a.call.outcome.send(ActionOutcome {
                status,
                error_code: code as i32,
                error_string: msg.to_string(),
                result: None,
            });
        }
    }

    /// The planned path through `goals` from `from`, and where each goal lies on it.
    fn plan(
        &mut self,
        ctx: &mut SimContext,
        from: [f64; 2],
        goals: &[[f64; 2]],
    ) -> Result<(Vec<[f64; 2]>, Vec<usize>), Failure> {
        let footprints = match &self.footprints {
            Some(f) => f.clone(),
            None => {
                let f = Rc::new(static_footprints(ctx.data(), self.planner.grid.band));
                self.footprints = Some(f.clone());
                f
            }
        };
        let mut pts = goals.to_vec();
        pts.push(from);
        let need = bounds_of(&pts);
        let grid = shared_grid(ctx, &footprints, self.planner.grid, need)
            .map_err(|msg| Failure { code: codes::UNKNOWN, msg })?;
        let mut path = vec![from];
        let mut goal_at = Vec::with_capacity(goals.len());
        for (k, &g) in goals.iter().enumerate() {
            let start = *path.last().unwrap_or(&from);
            let leg = astar::plan(&grid, start, g).map_err(|e| {
                let f = Failure::plan(&e);
                Failure { code: f.code, msg: format!("pose {k}: {}", f.msg) }
            })?;
            path.extend(leg.into_iter().skip(1));
            goal_at.push(path.len() - 1);
        }
        Ok((path, goal_at))
    }

    /// Take goals and cancels (the walker's `pre_step`); `mocap` is the walker's mocap index
    /// (where it stands is read only when a goal came).
    pub fn intake(&mut self, ctx: &mut SimContext, crowd: &Crowd, mocap: usize) {
        if let Some(a) = &self.active {
            if a.call.cancel.load(Ordering::SeqCst) {
                self.finish(
                    GoalStatus::Canceled,
                    codes::NONE,
                    "canceled by the caller; the walker stands where it was",
                );
                crowd.set_route(&self.entity, stand());
            }
        }
        let eps = [self.ep_to_pose, self.ep_through];
        if !eps.iter().any(|&ep| ctx.interface.has_input(ep)) {
            return; // the common case, every step
        }
        let p = ctx.data().mocap_pos()[mocap];
        let pos = [p[0], p[1]];
        for (call, goals) in take_goals(ctx, eps, &self.who) {
            let goals = goals.map(|g| {
                let yaw = g.last().and_then(|p| p.1);
                (g.into_iter().map(|(xy, _)| xy).collect::<Vec<_>>(), yaw)
            });
            match goals.and_then(|(g, yaw)| self.plan(ctx, pos, &g).map(|r| (r, yaw))) {
                Ok(((path, goal_at), yaw)) => {
                    self.finish(GoalStatus::Aborted, codes::NONE, "preempted by a newer goal");
                    let mut radii = vec![self.planner.waypoint_radius; path.len()];
                    for &k in &goal_at {
                        radii[k] = self.planner.arrival_radius;
                    }
                    let dwell = vec![Dwell::Fixed(0.0); path.len()];
                    crowd.set_route(
                        &self.entity,
                        Route::with_radii(path.clone(), dwell, false, radii).with_final_yaw(yaw),
                    );
                    self.active = Some(Active { call, t0: ctx.sim_time(), path, goal_at });
                }
                Err(f) => refuse(&call, f),
            }
        }
    }

    /// Feedback while walking, success on arrival (the walker's `pre_step`, after the crowd
    /// moved it).
    pub fn report(&mut self, ctx: &SimContext, crowd: &Crowd) {
        let Some(a) = &self.active else { return };
        let Some(st) = crowd.state(&self.entity) else { return };
        if st.gave_up > 0 {
            let why = format!(
                "stuck at ({:.2}, {:.2}): no progress toward the goal after `recovery.max_recovery` recoveries",
                st.pos[0], st.pos[1]
            );
            self.finish(GoalStatus::Aborted, codes::FAILED_TO_MAKE_PROGRESS, &why);
            crowd.set_route(&self.entity, stand());
            return;
        }
        let Some(target) = st.target.filter(|&t| t < a.path.len()) else {
            if st.target.is_none() {
                self.finish(GoalStatus::Succeeded, codes::NONE, "");
            }
            return;
        };
        if ctx.tick % self.every != 0 {
            return;
        }
        let mut remaining = (a.path[target][0] - st.pos[0]).hypot(a.path[target][1] - st.pos[1]);
        for w in a.path[target..].windows(2) {
            remaining += (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1]);
        }
        let yaw = st.vel[1].atan2(st.vel[0]);
        let fb = NavFeedback {
            stamp: ctx.sim_time(),
            current_pose: NavPose {
                frame_id: "map".into(),
                position: [st.pos[0], st.pos[1], 0.0],
                orientation: yaw_quat_xyzw(yaw),
            },
            navigation_time: ctx.sim_time() - a.t0,
            estimated_time_remaining: remaining / self.planner.speed,
            number_of_recoveries: st.recoveries,
            distance_remaining: remaining,
            number_of_poses_remaining: a.goal_at.iter().filter(|&&k| k >= target).count() as u32,
        };
        let _ = a.call.feedback.send(Payload::NavFeedback(fb));
    }

    /// True while a goal runs.
    pub fn busy(&self) -> bool {
        self.active.is_some()
    }
}

/// A route that stands where the walker is.
pub fn stand() -> Route {
    Route::new(Vec::new(), Vec::new(), false, 0.0)
}
