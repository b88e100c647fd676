//! Turning a FollowJointTrajectory goal into an execution: tolerances and validation with
//! control_msgs' result codes.

use super::*;

impl ArmController {
    /// The goal tolerance (rad) of joint `name` under `goal`, if any.
    pub(super) fn tolerance_for(&self, name: &str, goal: &TrajectoryGoal) -> Option<f64> {
        if let Some(t) = goal.goal_tolerance.iter().find(|t| t.name == name) {
            if t.position > 0.0 {
                return Some(t.position);
            }
            if t.position < 0.0 {
                return None;
            }
        }
        let model_name = name.strip_prefix(&self.cfg.joint_prefix).unwrap_or(name);
        let v = match &self.cfg.goal_tolerance {
            Some(Tolerance::Scalar(v)) => *v,
            Some(Tolerance::PerJoint(m)) => {
                m.get(model_name).or_else(|| m.get(name)).copied().unwrap_or(DEFAULT_GOAL_TOLERANCE)
            }
            None => DEFAULT_GOAL_TOLERANCE,
        };
        (v > 0.0).then_some(v)
    }

    /// Validate a trajectory and build its execution. Err = (code, message).
    pub(super) fn plan(
        &self,
        ctx: &SimContext,
        goal: &TrajectoryGoal,
        call: Option<ActionCall>,
    ) -> Result<Exec, (i32, String)> {
        let idx = self.joint_indices(goal)?;
        self.check_end(goal)?;
        let t_last = check_points(goal)?;
        let tol =
            idx.iter().map(|&i| (i, self.tolerance_for(&self.joints[i].name, goal))).collect();
        let vel_tol = idx.iter().map(|&i| (i, self.velocity_tolerance(i, goal))).collect();
        Ok(Exec {
            call,
            knots: self.knots(ctx, goal, &idx),
            start: ctx.sim_time(),
            t_last,
            tol,
            vel_tol,
            time_tol: self.time_tolerance(goal),
            last_feedback: f64::NEG_INFINITY,
        })
    }

    /// Our index of every joint the goal names, in its order: each one ours, none twice, all of
    /// them unless partial goals are allowed.
    fn joint_indices(&self, goal: &TrajectoryGoal) -> Result<Vec<usize>, (i32, String)> {
        let mine: Vec<&str> = self.joints.iter().map(|j| j.name.as_str()).collect();
        if goal.joint_names.is_empty() {
            return Err((codes::INVALID_JOINTS, "the trajectory names no joints".into()));
        }
        let mut idx = Vec::new();
        for (k, n) in goal.joint_names.iter().enumerate() {
            let Some(i) = mine.iter().position(|m| m == n) else {
                return Err((
                    codes::INVALID_JOINTS,
                    format!(
                        "joint `{n}` is not commanded by controller `{}`; its joints: [{}]",
                        self.cfg.controller_name,
                        mine.join(", ")
                    ),
                ));
            };
            if goal.joint_names[..k].contains(n) {
                return Err((codes::INVALID_JOINTS, format!("joint `{n}` is named twice")));
            }
            idx.push(i);
        }
        if !self.allow_partial && goal.joint_names.len() != mine.len() {
            return Err((
                codes::INVALID_JOINTS,
                format!(
                    "the trajectory names {} of the {} joints of controller `{}` and its allow_partial_joints_goal is false",
                    goal.joint_names.len(),
                    mine.len(),
                    self.cfg.controller_name
                ),
            ));
        }
        Ok(idx)
    }

    /// A trajectory has points, and its last one is at rest unless a nonzero end is allowed.
    fn check_end(&self, goal: &TrajectoryGoal) -> Result<(), (i32, String)> {
        let Some(last) = goal.points.last() else {
            return Err((codes::INVALID_GOAL, "the trajectory has no points".into()));
        };
        if !self.allow_nonzero_end {
            if let Some((k, v)) = last.velocities.iter().enumerate().find(|(_, v)| **v != 0.0) {
                return Err((
                    codes::INVALID_GOAL,
                    format!(
                        "the velocity of the last trajectory point of joint `{}` is not zero ({v}) and allow_nonzero_velocity_at_trajectory_end is false",
                        goal.joint_names[k]
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Per joint the goal names: the knots from the measured state (t = 0) through every point,
    /// with velocities (and accelerations) where every point gives them.
    fn knots(
        &self,
        ctx: &SimContext,
        goal: &TrajectoryGoal,
        idx: &[usize],
    ) -> Vec<(usize, Vec<Knot>)> {
        let q = ctx.data().qpos();
        let v = ctx.data().qvel();
        let all_vel = goal.points.iter().all(|p| !p.velocities.is_empty());
        let all_acc = all_vel && goal.points.iter().all(|p| !p.accelerations.is_empty());
        idx.iter()
            .enumerate()
            .map(|(k, &i)| {
                let j = &self.joints[i];
                let mut ks = vec![Knot {
                    t: 0.0,
                    q: q[j.qpos],
                    v: all_vel.then_some(v[j.dof]),
                    a: all_acc.then_some(0.0),
                }];
                for pt in &goal.points {
                    ks.push(Knot {
                        t: pt.time_from_start,
                        q: pt.positions[k],
                        v: all_vel.then(|| pt.velocities[k]),
                        a: all_acc.then(|| pt.accelerations[k]),
                    });
                }
                (i, ks)
            })
            .collect()
    }

    /// The velocity a joint must settle under at the end (rad/s): the goal's (negative: no
    /// check), else `stopped_velocity_tolerance`.
    fn velocity_tolerance(&self, i: usize, goal: &TrajectoryGoal) -> f64 {
        let t = goal
            .goal_tolerance
            .iter()
            .find(|t| t.name == self.joints[i].name)
            .map(|t| t.velocity)
            .unwrap_or(0.0);
        if t > 0.0 {
            t
        } else if t < 0.0 {
            f64::INFINITY
        } else {
            self.cfg.stopped_velocity_tolerance.max(1e-12)
        }
    }

    /// How late the end may be (s): the goal's, else the config's; 0 = no limit, as
    /// joint_trajectory_controller's constraints.goal_time.
    fn time_tolerance(&self, goal: &TrajectoryGoal) -> f64 {
        if goal.goal_time_tolerance > 0.0 {
            goal.goal_time_tolerance
        } else if self.cfg.goal_time_tolerance > 0.0 {
            self.cfg.goal_time_tolerance
        } else {
            f64::INFINITY
        }
    }
}

/// Every point: one position per joint, velocities/accelerations empty or one per joint, all
/// finite, times strictly increasing from 0. The last point's time.
fn check_points(goal: &TrajectoryGoal) -> Result<f64, (i32, String)> {
    let nj = goal.joint_names.len();
    let mut prev = -1.0;
    for (p, pt) in goal.points.iter().enumerate() {
        if pt.positions.len() != nj {
            return Err((codes::INVALID_GOAL, format!("point {p} has {} positions for {nj} joints (a position controller needs positions)", pt.positions.len())));
        }
        if !(pt.velocities.is_empty() || pt.velocities.len() == nj)
            || !(pt.accelerations.is_empty() || pt.accelerations.len() == nj)
        {
            return Err((
                codes::INVALID_GOAL,
                format!("point {p}: velocities/accelerations must be empty or one per joint"),
            ));
        }
        if pt
            .positions
            .iter()
            .chain(&pt.velocities)
            .chain(&pt.accelerations)
            .any(|v| !v.is_finite())
            || !pt.time_from_start.is_finite()
        {
            return Err((codes::INVALID_GOAL, format!("point {p} has a non-finite value")));
        }
        if pt.time_from_start < 0.0 || pt.time_from_start <= prev {
            return Err((
                codes::INVALID_GOAL,
                format!(
                    "point {p}: time_from_start {} s is not after the previous point's",
                    pt.time_from_start
                ),
            ));
        }
        prev = pt.time_from_start;
    }
    Ok(prev)
}
