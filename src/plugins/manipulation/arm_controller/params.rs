//! The parameters of the three controllers this plugin models, as ros2_controllers (Jazzy)
//! declares them on each controller's node, with the world's values — and what each does here
//! ([`crate::handles::controller_params`]: applied, or fixed at what the simulator does).
//!
//! Applied values are re-read whenever the registry's parameter generation moves (a parameter
//! file at load, an accepted `ros2 param set`), as the real trajectory controller refreshes its
//! tolerances every update.

use super::*;
use crate::handles::controller_params::{ParamSpec, ParamValue as V};

const POSITION_ONLY: &str =
    "the arm's MuJoCo actuators are position servos: the controller commands positions";
const NO_PID: &str = "the trajectory controller's PID acts only on velocity/effort command interfaces; the arm is position-commanded (its servo gains are the model's actuator gains)";

impl ArmController {
    /// joint_trajectory_controller's parameters.
    pub(super) fn jtc_parameters(&self) -> Vec<ParamSpec> {
        let joints = self.joint_names();
        let strings = |v: &[&str]| V::Strings(v.iter().map(|s| s.to_string()).collect());
        let mut p = vec![
            ParamSpec::fixed(
                "joints",
                V::Strings(joints.clone()),
                true,
                "the world's arm_controller drives exactly these joints (arm_controller `joints:`)",
            ),
            ParamSpec::fixed("command_joints", V::Strings(vec![]), true, "no controller chains in roqsim"),
            ParamSpec::fixed("command_interfaces", strings(&["position"]), true, POSITION_ONLY),
            ParamSpec::fixed(
                "state_interfaces",
                strings(&["position", "velocity"]),
                true,
                "trajectories start from the measured positions and velocities",
            ),
            ParamSpec::fixed("speed_scaling.initial_scaling_factor", V::Double(1.0), true, "no speed scaling in roqsim"),
            ParamSpec::fixed("speed_scaling.state_interface", V::Str(String::new()), true, "no speed scaling in roqsim"),
            ParamSpec::fixed("speed_scaling.command_interface", V::Str(String::new()), true, "no speed scaling in roqsim"),
            ParamSpec::applied(
                "allow_partial_joints_goal",
                V::Bool(self.allow_partial),
                false,
                "accept goals naming some of the joints (the others hold)",
            ),
            ParamSpec::fixed("open_loop_control", V::Bool(false), true, "trajectories start from the measured state"),
            ParamSpec::fixed("interpolate_from_desired_state", V::Bool(false), true, "trajectories start from the measured state"),
            ParamSpec::fixed(
                "allow_integration_in_goal_trajectories",
                V::Bool(false),
                false,
                "every trajectory point needs positions",
            ),
            ParamSpec::fixed(
                "set_last_command_interface_value_as_state_on_activation",
                V::Bool(false),
                false,
                "on activation the joints hold their measured positions",
            ),
            ParamSpec::applied(
                "action_monitor_rate",
                V::Double(self.cfg.action_monitor_rate),
                true,
                "Hz, feedback rate of a running goal (arm_controller `action_monitor_rate`)",
            )
            .min(0.1),
            ParamSpec::fixed("interpolation_method", V::Str("splines".into()), true, "roqsim interpolates splines between waypoints"),
            ParamSpec::applied(
                "allow_nonzero_velocity_at_trajectory_end",
                V::Bool(self.allow_nonzero_end),
                false,
                "false: a goal whose last point has a nonzero velocity is refused",
            ),
            ParamSpec::fixed("cmd_timeout", V::Double(0.0), false, "no command timeout in roqsim"),
            ParamSpec::applied(
                "constraints.stopped_velocity_tolerance",
                V::Double(self.cfg.stopped_velocity_tolerance),
                false,
                "rad/s under which a joint counts as stopped at the goal (arm_controller `stopped_velocity_tolerance`)",
            )
            .min(0.0),
            ParamSpec::applied(
                "constraints.goal_time",
                V::Double(if self.cfg.goal_time_tolerance.is_finite() { self.cfg.goal_time_tolerance } else { 0.0 }),
                false,
                "s the joints get after the last waypoint; 0 = no limit (arm_controller `goal_time_tolerance`)",
            )
            .min(0.0),
            ParamSpec::fixed("constraints.decelerate_on_cancel", V::Bool(false), true, "a cancel holds the measured position"),
        ];
        for j in &joints {
            let goal = match &self.cfg.goal_tolerance {
                Some(Tolerance::Scalar(v)) => *v,
                Some(Tolerance::PerJoint(m)) => {
                    let model = j.strip_prefix(&self.cfg.joint_prefix).unwrap_or(j);
                    m.get(model).or_else(|| m.get(j)).copied().unwrap_or(DEFAULT_GOAL_TOLERANCE)
                }
                None => DEFAULT_GOAL_TOLERANCE,
            };
            p.push(ParamSpec::fixed(
                &format!("constraints.{j}.trajectory"),
                V::Double(0.0),
                false,
                "roqsim checks no path tolerance while a trajectory runs (0 = off)",
            ));
            p.push(
                ParamSpec::applied(
                    &format!("constraints.{j}.goal"),
                    V::Double(goal),
                    false,
                    "rad the joint may end from the last waypoint; 0 = unchecked (arm_controller `goal_tolerance`)",
                )
                .min(0.0),
            );
            p.push(ParamSpec::fixed(
                &format!("constraints.{j}.max_deceleration_on_cancel"),
                V::Double(0.0),
                true,
                "a cancel holds the measured position",
            ));
            for (k, v) in [
                ("p", 0.0),
                ("i", 0.0),
                ("d", 0.0),
                ("i_clamp", f64::INFINITY),
                ("i_clamp_max", f64::INFINITY),
                ("i_clamp_min", f64::NEG_INFINITY),
                ("ff_velocity_scale", 0.0),
                ("u_clamp_max", f64::INFINITY),
                ("u_clamp_min", f64::NEG_INFINITY),
                ("tracking_time_constant", 0.0),
                ("error_deadband", 0.0),
            ] {
                p.push(ParamSpec::fixed(&format!("gains.{j}.{k}"), V::Double(v), false, NO_PID));
            }
            p.push(ParamSpec::fixed(
                &format!("gains.{j}.antiwindup_strategy"),
                V::Str("legacy".into()),
                true,
                NO_PID,
            ));
        }
        p
    }

    /// gripper_action_controller's parameters (`Some` with a gripper).
    pub(super) fn gripper_parameters(&self) -> Vec<ParamSpec> {
        let Some(g) = &self.gripper else { return Vec::new() };
        vec![
            ParamSpec::fixed(
                "action_monitor_rate",
                V::Double(self.cfg.action_monitor_rate),
                false,
                "the gripper action is graded every physics step",
            ),
            ParamSpec::fixed("joint", V::Str(g.name.clone()), false, "the world's gripper joint (arm_controller `gripper_joint`)"),
            ParamSpec::applied(
                "goal_tolerance",
                V::Double(self.cfg.gripper_goal_tolerance),
                false,
                "position error under which a goal is reached (arm_controller `gripper_goal_tolerance`)",
            )
            .min(0.0),
            ParamSpec::fixed(
                "max_effort",
                V::Double(0.0),
                false,
                "each GripperCommand goal's max_effort clamps the effort (0 = the model's own limit)",
            ),
            ParamSpec::applied(
                "allow_stalling",
                V::Bool(self.cfg.gripper_allow_stalling),
                false,
                "a stalled grip succeeds (arm_controller `gripper_allow_stalling`)",
            ),
            ParamSpec::applied(
                "stall_velocity_threshold",
                V::Double(self.cfg.gripper_stall_velocity),
                false,
                "mean speed under which the gripper counts as not moving (arm_controller `gripper_stall_velocity`)",
            )
            .min(0.0),
            ParamSpec::applied(
                "stall_timeout",
                V::Double(self.cfg.gripper_stall_timeout),
                false,
                "s over which the mean speed is taken (arm_controller `gripper_stall_timeout`)",
            )
            .min(0.0),
        ]
    }

    /// joint_state_broadcaster's parameters.
    pub(super) fn jsb_parameters() -> Vec<ParamSpec> {
        let all = "joint_states carries every joint of the arm and its gripper";
        vec![
            ParamSpec::fixed(
                "use_local_topics",
                V::Bool(false),
                true,
                "joint_states is published in the robot's namespace",
            ),
            ParamSpec::fixed("joints", V::Strings(vec![]), true, all),
            ParamSpec::fixed("extra_joints", V::Strings(vec![]), true, all),
            ParamSpec::fixed("interfaces", V::Strings(vec![]), true, all),
            ParamSpec::fixed(
                "map_interface_to_joint_state.position",
                V::Str("position".into()),
                true,
                all,
            ),
            ParamSpec::fixed(
                "map_interface_to_joint_state.velocity",
                V::Str("velocity".into()),
                true,
                all,
            ),
            ParamSpec::fixed(
                "map_interface_to_joint_state.effort",
                V::Str("effort".into()),
                true,
                all,
            ),
            ParamSpec::fixed("use_urdf_to_filter", V::Bool(true), true, all),
            ParamSpec::fixed(
                "frame_id",
                V::Str(String::new()),
                true,
                "joint_states are published with an empty frame_id",
            ),
            ParamSpec::fixed(
                "publish_dynamic_joint_states",
                V::Bool(false),
                true,
                "roqsim does not publish dynamic_joint_states",
            ),
        ]
    }

    /// Re-read the applied parameters of this plugin's controllers when they changed.
    pub(super) fn apply_parameters(&mut self) {
        let gen = self.registry.parameter_generation();
        if gen == self.params_seen {
            return;
        }
        self.params_seen = gen;
        let reg = self.registry.clone();
        let jtc = self.cfg.controller_name.clone();
        let num = |c: &str, k: &str| reg.value(c, k).and_then(|v| v.as_f64());
        let flag = |c: &str, k: &str| reg.value(c, k).and_then(|v| v.as_bool());
        if let Some(v) = flag(&jtc, "allow_partial_joints_goal") {
            self.allow_partial = v;
        }
        if let Some(v) = flag(&jtc, "allow_nonzero_velocity_at_trajectory_end") {
            self.allow_nonzero_end = v;
        }
        if let Some(v) = num(&jtc, "action_monitor_rate") {
            self.cfg.action_monitor_rate = v;
            self.monitor_dt = 1.0 / v;
        }
        if let Some(v) = num(&jtc, "constraints.stopped_velocity_tolerance") {
            self.cfg.stopped_velocity_tolerance = v;
        }
        if let Some(v) = num(&jtc, "constraints.goal_time") {
            self.cfg.goal_time_tolerance = v;
        }
        let goals: BTreeMap<String, f64> = self
            .joint_names()
            .into_iter()
            .filter_map(|j| num(&jtc, &format!("constraints.{j}.goal")).map(|v| (j, v)))
            .collect();
        if goals.len() == self.joints.len() && !goals.is_empty() {
            self.cfg.goal_tolerance = Some(Tolerance::PerJoint(goals));
        }
        let gn = self.cfg.gripper_controller_name.clone();
        if let Some(v) = num(&gn, "goal_tolerance") {
            self.cfg.gripper_goal_tolerance = v;
        }
        if let Some(v) = flag(&gn, "allow_stalling") {
            self.cfg.gripper_allow_stalling = v;
        }
        if let Some(v) = num(&gn, "stall_velocity_threshold") {
            self.cfg.gripper_stall_velocity = v;
        }
        if let Some(v) = num(&gn, "stall_timeout") {
            self.cfg.gripper_stall_timeout = v;
        }
    }
}
