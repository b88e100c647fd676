//! The gripper half of an arm controller: GripperCommand goals (in the gripper joint's units, as
//! control_msgs defines them), their preemption and cancel, the force limit from `max_effort`.
//! Every outcome carries the gripper's measured position and effort of that step (a refused,
//! preempted or canceled goal too, not zeros).

use super::*;
use crate::error::num;

/// `o` with the gripper as it is now as its GripperCommand result.
pub(super) fn with_now(ctx: &SimContext, g: &Gripper, mut o: ActionOutcome) -> ActionOutcome {
    let d = ctx.data();
    o.result = Some(Box::new(Payload::GripperResult {
        position: d.qpos()[g.joint.qpos],
        effort: d.qfrc_actuator()[g.joint.dof],
        stalled: false,
        reached_goal: false,
    }));
    o
}

impl ArmController {
    /// Take this step's gripper goals and cancels, and keep the gripper target.
    pub(super) fn take_gripper_goals(&mut self, ctx: &mut SimContext) {
        // Gripper goals.
        let gname = self.cfg.gripper_controller_name.clone();
        let gactive = self.registry.is_active(&gname);
        if let (Some(id), Some(_)) = (self.ep_grip, &self.gripper) {
            let was = self.grip_was_active;
            self.grip_was_active = gactive;
            let g = self.gripper.as_mut().expect("checked");
            if was && !gactive {
                let pos = ctx.data().qpos()[g.joint.qpos];
                g.target_ctrl = Self::gripper_ctrl_for(g, pos);
                if let Some(ex) = g.exec.take() {
                    let _ = ex.call.outcome.send(with_now(
                        ctx,
                        g,
                        outcome(
                            GoalStatus::Aborted,
                            -1,
                            format!("controller `{gname}` was deactivated mid-goal"),
                        ),
                    ));
                }
            }
            for p in ctx.interface.drain(id) {
                let Payload::Goal(call) = p else { continue };
                let Payload::Gripper(GripperGoal { position, max_effort }) = *call.goal.as_ref()
                else {
                    let _ = call.outcome.send(with_now(
                        ctx,
                        g,
                        outcome(
                            GoalStatus::Aborted,
                            -1,
                            format!("gripper_cmd takes a Gripper goal, not {}", call.goal.kind()),
                        ),
                    ));
                    continue;
                };
                if !gactive {
                    let st = self.registry.state(&gname).map(|s| s.label()).unwrap_or("unloaded");
                    let _ = call.outcome.send(with_now(ctx, g, outcome(
                            GoalStatus::Aborted,
                            -1,
                            format!("controller `{gname}` is {st}: goals are refused until it is activated (switch_controller activate_controllers: [{gname}])"),
                        )));
                    continue;
                }
                if !position.is_finite() {
                    let _ = call.outcome.send(with_now(
                        ctx,
                        g,
                        outcome(
                            GoalStatus::Aborted,
                            -1,
                            format!(
                            "command.position = {}: the gripper position must be finite (m or rad)",
                            num(position)
                        ),
                        ),
                    ));
                    continue;
                }
                if !(max_effort >= 0.0 && max_effort.is_finite()) {
                    let _ = call.outcome.send(with_now(ctx, g, outcome(
                        GoalStatus::Aborted,
                        -1,
                        format!("command.max_effort = {}: must be a finite effort >= 0 (N or N·m; 0 = no limit)", num(max_effort)),
                    )));
                    continue;
                }
                if let Some(old) = g.exec.take() {
                    let _ = old.call.outcome.send(with_now(
                        ctx,
                        g,
                        outcome(GoalStatus::Canceled, 0, "preempted by a newer gripper goal"),
                    ));
                }
                g.target_ctrl = Self::gripper_ctrl_for(g, position);
                let limit = (max_effort > 0.0 && max_effort.is_finite())
                    .then(|| g.moment.map(|m| max_effort / m.abs()))
                    .flatten();
                Self::set_gripper_force(ctx, g, limit);
                g.exec = Some(GripExec { call, target: position, window: Default::default() });
            }
            if let Some(ex) = &g.exec {
                if ex.call.cancel.load(Ordering::SeqCst) {
                    let pos = ctx.data().qpos()[g.joint.qpos];
                    g.target_ctrl = Self::gripper_ctrl_for(g, pos);
                    let ex = g.exec.take().expect("checked");
                    let _ = ex.call.outcome.send(with_now(
                        ctx,
                        g,
                        outcome(
                            GoalStatus::Canceled,
                            0,
                            "canceled by the caller; holding the measured position",
                        ),
                    ));
                }
            }
        }
    }

    pub(super) fn gripper_ctrl_for(g: &Gripper, pos: f64) -> f64 {
        let u = (pos - g.open) / (g.close - g.open);
        (g.lo + u * (g.hi - g.lo)).clamp(g.lo.min(g.hi), g.hi.max(g.lo))
    }

    pub(super) fn set_gripper_force(ctx: &mut SimContext, g: &Gripper, limit: Option<f64>) {
        let (range, limited) = match limit {
            Some(l) => {
                let own =
                    if g.own_limited { g.own_force[1].min(-g.own_force[0]) } else { f64::INFINITY };
                let l = l.min(own);
                ([-l, l], true)
            }
            None => (g.own_force, g.own_limited),
        };
        // The model's own values are restored on reset (model_override's contract: put back
        // exactly what was found).
        ctx.model_writer().actuator_force_limit(g.act, range, limited);
    }
}
