//! The navigator's doors: nav2-shaped goals on the action endpoints (accepted, preempted,
//! canceled, refused with the reason), the start/stop services, the handle's requests, and what it
//! publishes — feedback for the running goal, the goal/reached/stuck topics, the handle's state.

use std::sync::atomic::Ordering;

use super::*;
use crate::plugins::shared::nav_goal::{refuse, take_goals};

pub(super) struct Active {
    call: ActionCall,
    t0: f64,
    total: usize,
}

impl Navigator {
    /// Finish the running action, if any.
    pub(super) fn finish(&mut self, status: GoalStatus, code: u16, msg: impl Into<String>) {
        if let Some(a) = self.action.take() {
            let _ = a.call.outcome.send(ActionOutcome {
                status,
                error_code: code as i32,
                error_string: msg.into(),
                result: None,
            });
        }
    }

    /// Take goals and cancels from the action endpoints, start/stop calls, and handle requests.
    pub(super) fn intake(&mut self, ctx: &mut SimContext) {
        if let Some(a) = &self.action {
            if a.call.cancel.load(Ordering::SeqCst) {
                self.finish(
                    GoalStatus::Canceled,
                    codes::NONE,
                    "canceled by the caller; stopped where it was",
                );
                self.st.phase = NavPhase::Idle;
                self.st.goals.clear();
                self.halt();
            }
        }
        let who = &self.who;
        for (call, goals) in take_goals(ctx, [self.ep_to_pose, self.ep_through], who) {
            let goals =
                goals.map(|g| g.into_iter().map(|(xy, yaw)| Goal { xy, yaw }).collect::<Vec<_>>());
            match goals {
                Ok(goals) => {
                    self.finish(GoalStatus::Aborted, codes::NONE, "preempted by a newer goal");
                    let total = goals.len();
                    self.action = Some(Active { call, t0: ctx.sim_time(), total });
                    self.begin_route(ctx, goals);
                    self.st.started = true;
                    // a goal from a caller sets off at once, planned now: the first feedback
                    // states the planned route, and an unplannable goal aborts on this step
                    let p = self.pose(ctx);
                    match self.plan_leg(ctx, [p[0], p[1]]) {
                        Ok(()) => self.st.phase = NavPhase::Moving,
                        Err(f) => self.fail(ctx, f),
                    }
                }
                Err(msg) => refuse(&call, msg),
            }
        }
        for (ep, run) in [(self.ep_start, true), (self.ep_stop, false)] {
            for p in ctx.interface.drain(ep) {
                if let Payload::Call(call) = p {
                    let msg = self.set_running(ctx, run);
                    let _ = call.reply.send(Payload::Ack { success: true, message: msg });
                }
            }
        }
        let (route, run) = {
            let mut s = self.handle.0.borrow_mut();
            (s.route.take(), s.run.take())
        };
        if let Some(r) = route {
            self.finish(
                GoalStatus::Aborted,
                codes::NONE,
                "the route was replaced through the navigator handle",
            );
            self.begin_route(ctx, goals_of(&r));
            self.st.started = true;
        }
        if let Some(run) = run {
            self.set_running(ctx, run);
        }
    }

    pub(super) fn set_running(&mut self, ctx: &SimContext, run: bool) -> String {
        if run == self.st.started {
            return format!("already {}", if run { "running" } else { "stopped" });
        }
        self.st.started = run;
        self.st.progress_t = ctx.sim_time();
        if !run {
            self.halt();
            "stopped; `start` resumes the route".into()
        } else {
            "started".into()
        }
    }

    pub(super) fn publish_state(&mut self, ctx: &mut SimContext) {
        let s = &self.st;
        let state = NavState {
            phase: s.phase,
            goal_index: s.k,
            goal: s.goals.get(s.k).map(|g| g.xy),
            reached: s.reached,
            stuck: s.stuck,
            recoveries: s.recoveries,
            reroutes: s.reroutes,
            path: s.leg.points().to_vec(),
            error: s.error.clone(),
            blocked_by: s.blocked_by.clone(),
            yielding_to: s.yielding.clone(),
            drives: matches!(self.out, Some(Out::Drive(_))),
        };
        self.handle.0.borrow_mut().state = state;
        let tick = ctx.tick;
        if let Some(a) = &self.action {
            let pose = self.pose(ctx);
            let remaining = self.remaining([pose[0], pose[1]]);
            let fb = NavFeedback {
                stamp: ctx.sim_time(),
                current_pose: NavPose {
                    frame_id: "map".into(),
                    position: [pose[0], pose[1], ctx.data().xpos()[self.body][2]],
                    orientation: yaw_quat_xyzw(pose[2]),
                },
                navigation_time: ctx.sim_time() - a.t0,
                estimated_time_remaining: remaining / self.cfg.speed,
                number_of_recoveries: s.recoveries,
                distance_remaining: remaining,
                number_of_poses_remaining: (a.total.saturating_sub(s.reached as usize)) as u32,
            };
            let _ = a.call.feedback.send(Payload::NavFeedback(fb));
        }
        if ctx.interface.is_due(self.ep_goal, tick) {
            if let Some(g) = self.st.goals.get(self.st.k) {
                let pt = PoseTwist {
                    stamp: ctx.sim_time(),
                    frame_id: "map".into(),
                    child_frame_id: String::new(),
                    position: [g.xy[0], g.xy[1], 0.0],
                    orientation: yaw_quat_xyzw(g.yaw.unwrap_or(0.0)),
                    linear: [0.0; 3],
                    angular: [0.0; 3],
                };
                ctx.interface.publish(self.ep_goal, tick, Payload::PoseTwist(pt));
            }
        }
        if ctx.interface.is_due(self.ep_reached, tick) {
            let done = self.st.phase == NavPhase::Arrived;
            ctx.interface.publish(self.ep_reached, tick, Payload::Bool(done));
        }
        if ctx.interface.is_due(self.ep_stuck, tick) {
            ctx.interface.publish(self.ep_stuck, tick, Payload::Bool(self.st.stuck));
        }
    }
}
