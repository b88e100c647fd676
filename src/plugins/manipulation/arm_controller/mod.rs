//! `arm_controller`: joint-position hold for a manipulator, FollowJointTrajectory and
//! GripperCommand execution on the physics thread, and joint-state publishing.
//!
//! **The only writer.** This plugin writes its arm's actuators every `pre_step`, whatever else
//! happens — that write is the hardware holding the joints, and it never stops. What changes is
//! where its targets come from: a trajectory goal, a streamed trajectory, velocity commands, the
//! in-process [`ArmHandle`], `test_target`, or nothing (it holds the last target). A second writer
//! of the same actuators is refused naming both.
//!
//! **Controllers.** It declares, in the robot's [`crate::handles::controllers::Registry`]:
//! `<controller_name>` (`joint_trajectory_controller/JointTrajectoryController`, claims
//! `<joint>/position` of its joints), `<gripper_controller_name>`
//! (`position_controllers/GripperActionController`, claims `<gripper_joint>/position`) when it has a
//! gripper, and `joint_state_broadcaster` (claims nothing; `joint_states` is published only while
//! it is active). Each starts in its `*initial_state` (default: the world's
//! `sim.controllers.initial_state`, `unloaded` unless the world says otherwise, so the standard
//! `spawner` bringup loads them). While a controller is not active its
//! goals are refused with a message saying so, and the joints hold where they were when it was
//! deactivated.
//!
//! **Trajectories** (`follow_joint_trajectory`, `Payload::Goal` carrying `Payload::Trajectory`)
//! are interpolated every step from the measured state at acceptance: quintic between points that
//! state positions, velocities and accelerations, cubic Hermite with positions and velocities,
//! linear with positions only. The result is graded on where the joints ENDED: after the last
//! point, success as soon as every checked joint is within its goal tolerance and has stopped
//! (|qvel| ≤ `stopped_velocity_tolerance`); at `goal_time_tolerance` past the last point, success
//! if the positions are within tolerance, else `GOAL_TOLERANCE_VIOLATED` (-5). Tolerance per joint:
//! the goal's own `goal_tolerance` entry (> 0; -1 disables), then the config's (scalar or
//! `{joint: rad}`; 0 disables), then the loose default 0.5 rad. Unknown or duplicate joint names
//! abort with `INVALID_JOINTS` (-2), a malformed trajectory with `INVALID_GOAL` (-1). A cancel holds
//! the MEASURED position and answers `Canceled`. A newer goal cancels the running one.
//!
//! **Gripper** (`gripper_cmd`, `Payload::Gripper`): the commanded position is the gripper JOINT's
//! (rad or m, as control_msgs defines it), `gripper_open` .. `gripper_close`, mapped linearly onto
//! the gripper actuator's ctrlrange. Unstated, the two ends are derived from the model: the joint
//! positions the servo settles at when holding each end of its ctrlrange (a 0..255-ctrl Robotiq
//! 2F-85 maps 0 .. 0.8 rad); the mapping is written into the entity's resolved actuator table. A
//! goal outside the reachable range drives to the end it can reach and reports stalled, never
//! reached.
//! `max_effort` clamps the gripper JOINT's effort, as ros2_control's gripper action controller does:
//! the actuator's force range becomes ±max_effort / moment (moment = the transmission's constant
//! joint-force per actuator-force: gear, times the joint's coefficient in a fixed tendon), never
//! above the model's own; `max_effort <= 0` and every reset restore the model's range. A
//! transmission without a constant moment keeps its range (position only). The goal succeeds with
//! `reached_goal` within `gripper_goal_tolerance`, or `stalled` once its MEAN speed over the last
//! `gripper_stall_timeout` s is below `gripper_stall_velocity` (success when
//! `gripper_allow_stalling`, else abort). The mean, not the instantaneous velocity: a jaw squeezing
//! an object chatters (the bundled parallel_gripper: ±0.25 mm at up to 45 mm/s), and a stall is a
//! gripper that stopped getting anywhere.
//!
//! **Other command sources.** A Cartesian controller does not write ctrl: it attaches to the
//! arm's [`CommandPort`] (blackboard `arm_command:<entity>`, [`crate::handles::arm_command`]) and
//! this plugin pulls its joint targets every step while that source's controller is active (the
//! registry keeps it and the trajectory controller from being active together); when it is
//! deactivated the joints hold the measured position.
//!
//! **joint_states** reports the controller's joints (names with `joint_prefix`) and the gripper
//! joint; efforts are `qfrc_actuator + qfrc_gravcomp` — what the joint physically carries when
//! gravity compensation supplies the holding term outside the actuator.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::Ordering;

use mujoco_rs::mujoco_c::{mjtJoint, mjtTrn, mjtWrap};
use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::{
    ActionCall, ActionOutcome, GoalStatus, GripperGoal, JointState, Payload, TrajectoryGoal,
};
use crate::context::{Endpoint, EndpointId, Entity, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::handles::arm_command::{port_key, CommandPort, PortJoint, Pull};
use crate::handles::controllers::{ControllerSpec, Registry, State};
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared::{self as common, Scope};

mod config;
mod discovery;
mod gripper;
mod handle;
mod lifecycle;
mod params;
mod planning;
mod setup;
mod states;
mod trajectory;
mod transmission;

pub use config::*;
pub use handle::*;
use trajectory::*;
use transmission::*;

/// FollowJointTrajectory result codes (control_msgs/action/FollowJointTrajectory).
pub mod codes {
    /// Success.
    pub const SUCCESSFUL: i32 = 0;
    /// A malformed goal (or one the controller refuses in its state).
    pub const INVALID_GOAL: i32 = -1;
    /// A joint name the controller does not command.
    pub const INVALID_JOINTS: i32 = -2;
    /// A stale header.
    pub const OLD_HEADER_TIMESTAMP: i32 = -3;
    /// Path tolerance violated.
    pub const PATH_TOLERANCE_VIOLATED: i32 = -4;
    /// The joints did not end within the goal tolerance.
    pub const GOAL_TOLERANCE_VIOLATED: i32 = -5;
}

/// ros2_control type name of the trajectory controller this plugin serves.
pub const JTC_TYPE: &str = "joint_trajectory_controller/JointTrajectoryController";
/// ros2_control type name of the gripper controller.
pub const GRIPPER_TYPE: &str = "position_controllers/GripperActionController";
/// ros2_control type name of the joint-state broadcaster.
pub const JSB_TYPE: &str = "joint_state_broadcaster/JointStateBroadcaster";
/// Name of the broadcaster it declares.
pub const JSB_NAME: &str = "joint_state_broadcaster";
/// Default goal tolerance (rad): loose on purpose, it catches an arm that never arrived.
pub const DEFAULT_GOAL_TOLERANCE: f64 = 0.5;

/// Endpoint roles (keys of `topics:`).
pub const ROLES: [&str; 6] = [
    "joint_states",
    "follow_joint_trajectory",
    "joint_trajectory",
    "joint_velocity",
    "gripper_cmd",
    "transition_event",
];

/// Blackboard key of an arm's handle.
pub fn arm_key(entity: &str) -> String {
    format!("arm:{entity}")
}
/// Blackboard key of an arm's gripper reader.
pub fn gripper_key(entity: &str) -> String {
    format!("gripper:{entity}")
}
/// Blackboard key of an arm's gripper effort.
pub fn gripper_effort_key(entity: &str) -> String {
    format!("gripper_effort:{entity}")
}
fn writers_key(entity: &str) -> String {
    format!("arm_writers:{entity}")
}

struct Exec {
    call: Option<ActionCall>,
    /// Our joint index → knots (joints the goal does not name hold their target).
    knots: Vec<(usize, Vec<Knot>)>,
    start: f64,
    t_last: f64,
    tol: Vec<(usize, Option<f64>)>,
    vel_tol: Vec<(usize, f64)>,
    time_tol: f64,
    last_feedback: f64,
}

struct GripExec {
    call: ActionCall,
    target: f64,
    /// (sim time, position) samples over the last `gripper_stall_timeout`.
    window: std::collections::VecDeque<(f64, f64)>,
}

struct Joint {
    /// Reported name (`joint_prefix` + model name).
    name: String,
    qpos: usize,
    dof: usize,
    ctrl: usize,
    range: Option<[f64; 2]>,
}

struct Gripper {
    act: usize,
    ctrl: usize,
    lo: f64,
    hi: f64,
    open: f64,
    close: f64,
    joint: common::JointRef,
    /// Reported joint name.
    name: String,
    moment: Option<f64>,
    own_force: [f64; 2],
    own_limited: bool,
    exec: Option<GripExec>,
    target_ctrl: f64,
}

/// The `arm_controller` plugin.
pub struct ArmController {
    cfg: ArmControllerConfig,
    address: String,
    owner: Option<String>,
    entity: String,
    joints: Vec<Joint>,
    targets: Vec<f64>,
    gripper: Option<Gripper>,
    /// The gripper's derived command mapping `(actuator, text, origin)`, for the actuator table.
    gripper_map: Option<(String, String, crate::spawn::actuators::Origin)>,
    exec: Option<Exec>,
    vel: Option<(Vec<f64>, f64)>,
    registry: Registry,
    jtc_was_active: bool,
    grip_was_active: bool,
    controllers: Vec<(String, usize, EndpointId)>,
    ep_states: EndpointId,
    ep_follow: EndpointId,
    ep_stream: Option<EndpointId>,
    ep_vel: Option<EndpointId>,
    ep_grip: Option<EndpointId>,
    handle: ArmHandle,
    reader: GripperReader,
    rest: Vec<(usize, usize, f64)>,
    monitor_dt: f64,
    port: CommandPort,
    /// joint_trajectory_controller's `allow_partial_joints_goal` (true: what roqsim always did).
    allow_partial: bool,
    /// `allow_nonzero_velocity_at_trajectory_end` (true: no check unless a parameter says so).
    allow_nonzero_end: bool,
    /// The registry's parameter generation last applied.
    params_seen: u64,
    /// joint_states content last read from the hardware (republished while it is not read).
    last_read: Option<JointState>,
}

impl ArmController {
    /// Construct from config.
    pub fn new(cfg: ArmControllerConfig, args: &PluginArgs) -> Self {
        ArmController {
            cfg,
            address: args.address.clone(),
            owner: args.owner.clone(),
            entity: String::new(),
            joints: Vec::new(),
            targets: Vec::new(),
            gripper: None,
            gripper_map: None,
            exec: None,
            vel: None,
            registry: Registry::default(),
            jtc_was_active: true,
            grip_was_active: true,
            controllers: Vec::new(),
            ep_states: 0,
            ep_follow: 0,
            ep_stream: None,
            ep_vel: None,
            ep_grip: None,
            handle: ArmHandle::default(),
            reader: GripperReader::default(),
            rest: Vec::new(),
            monitor_dt: 0.05,
            port: CommandPort::default(),
            allow_partial: true,
            allow_nonzero_end: true,
            params_seen: 0,
            last_read: None,
        }
    }

    /// Reported joint names, in controller order.
    pub fn joint_names(&self) -> Vec<String> {
        self.joints.iter().map(|j| j.name.clone()).collect()
    }
}

/// The descriptor (refused at the top of a document: `requires_owner`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "arm_controller",
        "Joint-position hold for an arm: FollowJointTrajectory and GripperCommand on the physics thread, controller registry entries, joint_states.",
        ArmControllerConfig,
        ArmController
    )
    .requires_owner()
}

fn outcome(status: GoalStatus, code: i32, msg: impl Into<String>) -> ActionOutcome {
    ActionOutcome { status, error_code: code, error_string: msg.into(), result: None }
}

fn is_joint_trn(t: mjtTrn) -> bool {
    t == mjtTrn::mjTRN_JOINT || t == mjtTrn::mjTRN_JOINTINPARENT
}

impl ArmController {
    fn measured(&self, ctx: &SimContext) -> Vec<f64> {
        let q = ctx.data().qpos();
        self.joints.iter().map(|j| q[j.qpos]).collect()
    }

    fn hold_measured(&mut self, ctx: &SimContext) {
        self.targets = self.measured(ctx);
    }

    fn finish(&mut self, out: ActionOutcome) {
        if let Some(ex) = self.exec.take() {
            if let Some(c) = ex.call {
                let _ = c.outcome.send(out);
            }
        }
    }

    fn accept(&mut self, ctx: &SimContext, goal: &TrajectoryGoal, call: Option<ActionCall>) {
        match self.plan(ctx, goal, call.clone()) {
            Ok(ex) => {
                self.finish(outcome(
                    GoalStatus::Canceled,
                    codes::SUCCESSFUL,
                    "preempted by a newer trajectory",
                ));
                self.vel = None;
                self.exec = Some(ex);
            }
            Err((code, msg)) => {
                if let Some(c) = call {
                    let _ = c.outcome.send(outcome(GoalStatus::Aborted, code, msg));
                } else {
                    tracing::warn!("[{}] streamed trajectory refused: {msg}", self.address);
                }
            }
        }
    }

    fn refuse(&self, call: &ActionCall, controller: &str) {
        let st = self.registry.state(controller).map(|s| s.label()).unwrap_or("unloaded");
        let _ = call.outcome.send(outcome(
            GoalStatus::Aborted,
            codes::INVALID_GOAL,
            format!("controller `{controller}` is {st}: goals are refused until it is activated (switch_controller activate_controllers: [{controller}])"),
        ));
    }

    fn write_ctrl(&self, ctx: &mut SimContext) {
        let d = ctx.data_mut();
        let ctrl = d.ctrl_mut();
        for (j, t) in self.joints.iter().zip(&self.targets) {
            ctrl[j.ctrl] = *t;
        }
        if let Some(g) = &self.gripper {
            ctrl[g.ctrl] = g.target_ctrl;
        }
    }
}

impl ArmController {
    /// A deactivation while running: hold where the joints are.
    fn deactivated_mid_goal(&mut self, ctx: &SimContext, jtc: &str) {
        self.hold_measured(ctx);
        self.finish(outcome(
            GoalStatus::Aborted,
            codes::INVALID_GOAL,
            format!("controller `{jtc}` was deactivated mid-goal; holding the measured position"),
        ));
        self.vel = None;
    }

    /// Trajectory goals (the action) and the streamed `joint_trajectory` topic.
    fn take_trajectory_goals(&mut self, ctx: &mut SimContext, active: bool, jtc: &str) {
        for p in ctx.interface.drain(self.ep_follow) {
            match p {
                Payload::Goal(call) => match call.goal.as_ref() {
                    Payload::Trajectory(goal) if active => {
                        let goal = goal.clone();
                        self.accept(ctx, &goal, Some(call));
                    }
                    Payload::Trajectory(_) => self.refuse(&call, jtc),
                    other => {
                        let _ = call.outcome.send(outcome(
                            GoalStatus::Aborted,
                            codes::INVALID_GOAL,
                            format!(
                                "follow_joint_trajectory takes a Trajectory goal, not {}",
                                other.kind()
                            ),
                        ));
                    }
                },
                other => tracing::warn!(
                    "[{}] follow_joint_trajectory: ignored a {} payload (expected an action Goal)",
                    self.address,
                    other.kind()
                ),
            }
        }
        if let Some(id) = self.ep_stream {
            if let Some(p) = ctx.interface.take_latest(id) {
                match p {
                    Payload::Trajectory(goal) if active => self.accept(ctx, &goal, None),
                    Payload::Trajectory(_) => tracing::warn!(
                        "[{}] joint_trajectory ignored: controller `{jtc}` is not active",
                        self.address
                    ),
                    other => tracing::warn!(
                        "[{}] joint_trajectory: ignored a {} payload",
                        self.address,
                        other.kind()
                    ),
                }
            }
        }
    }

    /// Velocity commands (endpoint, then handle) and the handle's in-process targets; either
    /// preempts a running trajectory.
    fn take_direct_commands(&mut self, ctx: &mut SimContext, active: bool, now: f64) {
        let mut vcmd: Option<Vec<(String, f64)>> = None;
        if let Some(id) = self.ep_vel {
            if let Some(Payload::JointState(js)) = ctx.interface.take_latest(id) {
                let names = if js.name.is_empty() { self.joint_names() } else { js.name.clone() };
                vcmd = Some(names.into_iter().zip(js.velocity.iter().copied()).collect());
            }
        }
        let (pend_t, pend_v) = {
            let mut h = self.handle.0.borrow_mut();
            (h.pending_targets.take(), h.pending_velocities.take())
        };
        if pend_v.is_some() {
            vcmd = pend_v;
        }
        if let Some(v) = vcmd {
            if active {
                let mut qd = vec![0.0; self.joints.len()];
                for (n, x) in v {
                    match self.joints.iter().position(|j| j.name == n) {
                        Some(i) if x.is_finite() => qd[i] = x,
                        _ => tracing::warn!(
                            "[{}] joint_velocity: unknown joint `{n}` ignored",
                            self.address
                        ),
                    }
                }
                if self.exec.is_some() {
                    self.hold_measured(ctx);
                    self.finish(outcome(
                        GoalStatus::Canceled,
                        codes::SUCCESSFUL,
                        "preempted by a joint velocity command",
                    ));
                }
                self.vel = Some((qd, now));
            }
        }
        if let Some(t) = pend_t {
            if self.exec.is_some() {
                self.finish(outcome(
                    GoalStatus::Canceled,
                    codes::SUCCESSFUL,
                    "preempted by an in-process target",
                ));
            }
            for (n, x) in t {
                if let Some(i) = self.joints.iter().position(|j| j.name == n) {
                    self.targets[i] = x;
                }
            }
        }
    }

    /// A cancel of the running goal: hold the measured position.
    fn take_cancel(&mut self, ctx: &SimContext) {
        if let Some(ex) = &self.exec {
            if ex.call.as_ref().is_some_and(|c| c.cancel.load(Ordering::SeqCst)) {
                self.hold_measured(ctx);
                self.finish(outcome(
                    GoalStatus::Canceled,
                    codes::SUCCESSFUL,
                    "canceled by the caller; holding the measured position",
                ));
            }
        }
    }

    /// This step's targets: sampled from the running trajectory, else integrated from a fresh
    /// velocity command, else the configured test target.
    fn advance_targets(&mut self, ctx: &SimContext, now: f64) {
        if let Some(ex) = &self.exec {
            let t = now - ex.start;
            for (i, k) in &ex.knots {
                self.targets[*i] = sample(k, t).0;
            }
        } else if let Some((qd, stamp)) = &self.vel {
            if now - stamp <= self.cfg.velocity_timeout_s {
                for (i, j) in self.joints.iter().enumerate() {
                    let mut x = self.targets[i] + qd[i] * ctx.dt;
                    if let Some([lo, hi]) = j.range {
                        x = x.clamp(lo, hi);
                    }
                    self.targets[i] = x;
                }
            } else {
                self.vel = None;
            }
        } else if let Some(t) = &self.cfg.test_target {
            self.targets = t.clone();
        }
    }
}

impl Plugin for ArmController {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::PRE_STEP | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        self.setup(ctx)
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        let now = ctx.sim_time();
        self.finish(outcome(GoalStatus::Aborted, codes::INVALID_GOAL, "the simulation was reset"));
        if let Some(g) = &mut self.gripper {
            if let Some(ex) = g.exec.take() {
                let o = outcome(GoalStatus::Aborted, -1, "the simulation was reset");
                let _ = ex.call.outcome.send(gripper::with_now(ctx, g, o));
            }
        }
        self.vel = None;
        self.port.reset();
        for (n, _, _) in &self.controllers {
            self.registry.restore(n, now);
        }
        self.jtc_was_active = self.registry.is_active(&self.cfg.controller_name);
        self.grip_was_active = self.registry.is_active(&self.cfg.gripper_controller_name);
        // rest: reset qpos and held target.
        {
            let d = ctx.data_mut();
            for &(_, adr, q) in &self.rest {
                d.qpos_mut()[adr] = q;
            }
        }
        if let Some(g) = &mut self.gripper {
            g.target_ctrl = self.cfg.gripper_ctrl.clamp(g.lo.min(g.hi), g.hi.max(g.lo));
        }
        if let Some(g) = &self.gripper {
            Self::set_gripper_force(ctx, g, None);
        }
        self.targets = self.measured(ctx);
        if let Some(t) = &self.cfg.test_target {
            self.targets = t.clone();
        }
        {
            let mut h = self.handle.0.borrow_mut();
            h.pending_targets = None;
            h.pending_velocities = None;
            h.targets = self.targets.clone();
        }
        self.write_ctrl(ctx);
        Ok(())
    }

    fn pre_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let now = ctx.sim_time();
        self.apply_parameters();
        let jtc = self.cfg.controller_name.clone();
        let active = self.registry.is_active(&jtc);
        if self.jtc_was_active && !active {
            self.deactivated_mid_goal(ctx, &jtc);
        }
        self.jtc_was_active = active;
        self.take_trajectory_goals(ctx, active, &jtc);
        self.take_direct_commands(ctx, active, now);
        self.take_cancel(ctx);
        self.advance_targets(ctx, now);
        // Another command source drives the joints while its controller is active.
        if self.port.has_sources() {
            match self.port.pull(ctx, &self.registry)? {
                Pull::Targets(t) => self.targets = t,
                Pull::Released => self.hold_measured(ctx),
                Pull::Idle => {}
            }
        }
        self.take_gripper_goals(ctx);
        // --manual-control: a person owns ctrl (on_reset still holds). A hardware component that
        // is not active takes no commands (ros2_control calls write only while it is active): the
        // actuators hold the last command written.
        if !ctx.run.manual_control && self.registry.hardware_writes() {
            self.write_ctrl(ctx);
        }
        self.handle.0.borrow_mut().targets = self.targets.clone();
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let now = ctx.sim_time();
        let (q, v, fa, fg) = {
            let d = ctx.data();
            (
                d.qpos().to_vec(),
                d.qvel().to_vec(),
                d.qfrc_actuator().to_vec(),
                d.qfrc_gravcomp().to_vec(),
            )
        };
        {
            let mut h = self.handle.0.borrow_mut();
            h.positions = self.joints.iter().map(|j| q[j.qpos]).collect();
            h.velocities = self.joints.iter().map(|j| v[j.dof]).collect();
            h.efforts = self.joints.iter().map(|j| fa[j.dof] + fg[j.dof]).collect();
        }
        // Grade / feed back the running trajectory.
        if let Some(ex) = &mut self.exec {
            let t = now - ex.start;
            if let Some(c) = &ex.call {
                if now - ex.last_feedback >= self.monitor_dt - 1e-9 {
                    ex.last_feedback = now;
                    let names: Vec<String> =
                        ex.knots.iter().map(|(i, _)| self.joints[*i].name.clone()).collect();
                    let desired = ex.knots.iter().map(|(_, k)| sample(k, t).0).collect();
                    let actual = ex.knots.iter().map(|(i, _)| q[self.joints[*i].qpos]).collect();
                    let _ = c.feedback.send(Payload::TrajectoryFeedback {
                        joint_names: names,
                        desired,
                        actual,
                    });
                }
            }
            if t >= ex.t_last {
                let mut worst: Option<(String, f64, f64)> = None;
                for (i, tol) in &ex.tol {
                    let goal = ex
                        .knots
                        .iter()
                        .find(|(k, _)| k == i)
                        .map(|(_, k)| k.last().expect("knots").q)
                        .unwrap_or(0.0);
                    let err = (q[self.joints[*i].qpos] - goal).abs();
                    if let Some(tol) = tol {
                        if err > *tol && worst.as_ref().is_none_or(|w| err - tol > w.1 - w.2) {
                            worst = Some((self.joints[*i].name.clone(), err, *tol));
                        }
                    }
                }
                let stopped = ex.vel_tol.iter().all(|(i, vt)| v[self.joints[*i].dof].abs() <= *vt);
                let late = t > ex.t_last + ex.time_tol;
                match (&worst, stopped, late) {
                    (None, true, _) | (None, _, true) => {
                        let msg = if stopped {
                            "the joints ended within the goal tolerance"
                        } else {
                            "the joints are within the goal tolerance (still settling)"
                        };
                        self.finish(outcome(GoalStatus::Succeeded, codes::SUCCESSFUL, msg));
                    }
                    (Some((n, err, tol)), _, true) => {
                        let msg = format!(
                            "GOAL_TOLERANCE_VIOLATED: joint `{n}` ended {err:.4} rad from its goal (tolerance {tol} rad) {:.3} s after the last waypoint; the arm did not arrive (blocked or saturated?)",
                            t - ex.t_last
                        );
                        self.hold_measured(ctx);
                        self.finish(outcome(
                            GoalStatus::Aborted,
                            codes::GOAL_TOLERANCE_VIOLATED,
                            msg,
                        ));
                    }
                    _ => {}
                }
            }
        }
        // Gripper.
        if let Some(g) = &mut self.gripper {
            let pos = q[g.joint.qpos];
            let vel = v[g.joint.dof];
            let eff = fa[g.joint.dof];
            *self.reader.0.borrow_mut() = (pos, vel, eff);
            let mut done: Option<ActionOutcome> = None;
            if let Some(ex) = &mut g.exec {
                let err = (pos - ex.target).abs();
                if err <= self.cfg.gripper_goal_tolerance {
                    done = Some(ActionOutcome {
                        status: GoalStatus::Succeeded,
                        error_code: 0,
                        error_string: "reached the goal position".into(),
                        result: Some(Box::new(Payload::GripperResult {
                            position: pos,
                            effort: eff,
                            stalled: false,
                            reached_goal: true,
                        })),
                    });
                } else {
                    // Stalled: over the last stall_timeout the gripper moved less than
                    // stall_velocity x stall_timeout — its MEAN speed is below the threshold
                    // (contact chatter makes the instantaneous velocity useless for this).
                    ex.window.push_back((now, pos));
                    let timeout = self.cfg.gripper_stall_timeout;
                    while ex.window.len() > 1 && now - ex.window[1].0 >= timeout - 1e-9 {
                        ex.window.pop_front();
                    }
                    let (t0, p0) = ex.window[0];
                    if now - t0 >= timeout - 1e-9
                        && (pos - p0).abs() < self.cfg.gripper_stall_velocity * (now - t0)
                    {
                        let ok = self.cfg.gripper_allow_stalling;
                        done = Some(ActionOutcome {
                            status: if ok { GoalStatus::Succeeded } else { GoalStatus::Aborted },
                            error_code: 0,
                            error_string: format!(
                                "stalled {err:.4} short of the goal (closed on an object?)"
                            ),
                            result: Some(Box::new(Payload::GripperResult {
                                position: pos,
                                effort: eff,
                                stalled: true,
                                reached_goal: false,
                            })),
                        });
                    }
                }
            }
            if let Some(o) = done {
                let ex = g.exec.take().expect("running");
                let _ = ex.call.outcome.send(o);
            }
        }
        self.publish_joint_states(ctx, &q, &v, &fa, &fg);
        self.publish_transitions(ctx);
        Ok(())
    }
}
