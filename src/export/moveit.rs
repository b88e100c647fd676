//! `roqsim export moveit`: a MoveIt 2 configuration folder for one robot, every name read off
//! what the simulator serves rather than restated:
//! - `<robot>.urdf`: its `robot_description`; `<robot>.srdf`: [`crate::export::srdf`];
//! - `joint_limits.yaml`: each moving joint's velocity limit from the URDF (a joint stating none
//!   gets `has_velocity_limits: false`), no acceleration limits (the model states none);
//! - `kinematics.yaml`: MoveIt's KDL plugin on every arm group (a chain);
//! - `ompl_planning.yaml`: the OMPL pipeline's parameters as MoveIt 2 Jazzy reads them and per
//!   group planner configurations ([`ompl_planning`]);
//! - `moveit_controllers.yaml`: MoveIt's simple controller manager, one entry per arm and gripper
//!   controller, with the action namespace and controller name split out of the action name the
//!   ROS plan (`crate::ros::plan`, the same wiring the bridge serves, with the world's bridge
//!   settings: its `namespace:`) resolves for the controller's
//!   FollowJointTrajectory / GripperCommand endpoint, and its joints in `/joint_states` order;
//! - `ros2_controllers.yaml`: the controllers the world declares (type, joints, interfaces), as a
//!   ros2_control parameter file mirrors them;
//! - `move_group.launch.py`: move_group with all of the above, in the namespace the actions live in,
//!   on sim time.

use std::fmt::Write;

use crate::context::entities::Entity;
use crate::context::SimContext;
use crate::export::srdf::{description, export_srdf, gripper_group, Srdf};
use crate::ros::config::BridgeConfig;
use crate::ros::plan::InKind;

/// One controller as MoveIt's simple controller manager sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveitController {
    /// Name (the action's parent segment).
    pub name: String,
    /// `FollowJointTrajectory` | `GripperCommand`.
    pub kind: &'static str,
    /// Last segment of the action name.
    pub action_ns: String,
    /// The namespace the action lives in (`/` for none).
    pub namespace: String,
    /// The absolute action name.
    pub action: String,
    /// Joints, `/joint_states` order.
    pub joints: Vec<String>,
}

/// The files of the folder: `(file name, content)`, in writing order.
pub type Files = Vec<(String, String)>;

fn yaml_list(v: &[String]) -> String {
    format!("[{}]", v.iter().map(|s| format!("\"{s}\"")).collect::<Vec<_>>().join(", "))
}

/// What `roqsim export moveit` is asked for besides the robot.
#[derive(Debug, Clone)]
pub struct MoveitOptions {
    /// Random configurations the SRDF's collision matrix samples.
    pub samples: usize,
    /// Their seed.
    pub seed: u64,
    /// The site whose frame ends the arm chain (`--tip-site`).
    pub tip_site: Option<String>,
    /// The world's `ros2_bridge` settings (its `namespace:` moves every action).
    pub bridge: BridgeConfig,
}

impl Default for MoveitOptions {
    fn default() -> Self {
        MoveitOptions {
            samples: crate::export::srdf::DEFAULT_SAMPLES,
            seed: 0,
            tip_site: None,
            bridge: BridgeConfig::default(),
        }
    }
}

/// The MoveIt controllers of entity `ent`: its trajectory and gripper action endpoints as the ROS
/// plan names them under the world's bridge settings `cfg`.
pub fn controllers(
    ctx: &mut SimContext,
    ent: &Entity,
    cfg: &BridgeConfig,
) -> Result<Vec<MoveitController>, String> {
    let plan = crate::ros::plan::build(&ctx.interface, cfg).map_err(|e| e.join("; "))?;
    let reg = crate::handles::controllers::Registry::of(ctx, &ent.name);
    let specs = reg.declared_specs();
    let mut out = Vec::new();
    for ip in &plan.inputs {
        let InKind::Action { action_type } = &ip.kind else { continue };
        let ep = ctx.interface.get(ip.id);
        if ep.owner.as_deref() != Some(ent.name.as_str()) {
            continue;
        }
        let kind = match action_type.as_str() {
            "control_msgs/action/FollowJointTrajectory" => "FollowJointTrajectory",
            "control_msgs/action/GripperCommand" => "GripperCommand",
            _ => continue,
        };
        let controller = ep.get_hint("ros2", "controller").unwrap_or_default().to_string();
        let joints: Vec<String> = specs
            .iter()
            .find(|s| s.name == controller)
            .map(|s| {
                s.command_interfaces
                    .iter()
                    .filter_map(|c| c.rsplit_once('/').map(|(j, _)| j.to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let (parent, action_ns) = ip.name.rsplit_once('/').unwrap_or(("", ip.name.as_str()));
        let (ns, name) = parent.rsplit_once('/').unwrap_or(("", parent));
        out.push(MoveitController {
            name: name.to_string(),
            kind,
            action_ns: action_ns.to_string(),
            namespace: if ns.is_empty() { "/".into() } else { ns.to_string() },
            action: ip.name.clone(),
            joints,
        });
    }
    if out.is_empty() {
        return Err(format!(
            "robot `{}` serves no FollowJointTrajectory action: give it an `arm_controller` (MoveIt executes trajectories through one)",
            ent.name
        ));
    }
    let ns = out[0].namespace.clone();
    if let Some(o) = out.iter().find(|c| c.namespace != ns) {
        return Err(format!(
            "robot `{}`: its actions live in two namespaces (`{}` and `{}`), and one move_group reads one: give its controllers one namespace",
            ent.name, o.action, out[0].action
        ));
    }
    Ok(out)
}

/// The whole folder for entity `ent` (see the module docs and [`MoveitOptions`]).
pub fn export_moveit(
    ctx: &mut SimContext,
    ent: &Entity,
    opts: &MoveitOptions,
) -> Result<Files, String> {
    let robot = ent.name.replace('.', "_");
    let urdf = description(ctx, ent)?;
    let srdf = export_srdf(ctx, ent, opts.samples, opts.seed, opts.tip_site.as_deref())?;
    let ctrls = controllers(ctx, ent, &opts.bridge)?;
    let (_, joints) = crate::spawn::urdf::tree(&urdf)?;
    Ok(vec![
        (format!("{robot}.urdf"), urdf.clone()),
        (format!("{robot}.srdf"), srdf.text.clone()),
        ("joint_limits.yaml".into(), joint_limits_yaml(&joints)),
        ("kinematics.yaml".into(), kinematics_yaml(&srdf)),
        ("ompl_planning.yaml".into(), ompl_planning(&srdf)),
        ("moveit_controllers.yaml".into(), moveit_controllers_yaml(ent, &ctrls)),
        ("ros2_controllers.yaml".into(), ros2_controllers_yaml(ctx, ent)),
        ("move_group.launch.py".into(), move_group_launch(ent, &robot, &srdf, &ctrls)),
    ])
}

/// joint_limits.yaml: the kinematic limits MoveIt times a path with, from the URDF's moving
/// joints.
fn joint_limits_yaml(joints: &[crate::spawn::urdf::UrdfJoint]) -> String {
    let mut jl = String::from(
        "# Kinematic limits MoveIt times a path with (from the URDF's <limit velocity=>).\ndefault_velocity_scaling_factor: 0.1\ndefault_acceleration_scaling_factor: 0.1\njoint_limits:\n",
    );
    for j in
        joints.iter().filter(|j| matches!(j.kind.as_str(), "revolute" | "continuous" | "prismatic"))
    {
        let v = j.velocity.unwrap_or(0.0);
        let _ = writeln!(
            jl,
            "  {}:\n    has_velocity_limits: {}\n    max_velocity: {v:?}\n    has_acceleration_limits: false\n    max_acceleration: 0.0",
            j.name,
            v > 0.0
        );
    }
    jl
}

/// kinematics.yaml: MoveIt's KDL solver on every arm group.
fn kinematics_yaml(srdf: &Srdf) -> String {
    let mut k =
        String::from("# MoveIt's KDL solver on every arm group (a serial chain of the SRDF).\n");
    for g in &srdf.groups {
        let _ = writeln!(
            k,
            "{}:\n  kinematics_solver: kdl_kinematics_plugin/KDLKinematicsPlugin\n  kinematics_solver_search_resolution: 0.005\n  kinematics_solver_timeout: 0.005",
            g.name
        );
    }
    k
}

/// moveit_controllers.yaml: the actions roqsim serves for the robot (the first arm and every
/// gripper the default).
fn moveit_controllers_yaml(ent: &Entity, ctrls: &[MoveitController]) -> String {
    let names: Vec<String> = ctrls.iter().map(|c| c.name.clone()).collect();
    let mut mc = format!(
        "# The actions roqsim serves for robot `{}` (namespace {}), joints in /joint_states order.\nmoveit_controller_manager: moveit_simple_controller_manager/MoveItSimpleControllerManager\nmoveit_simple_controller_manager:\n  controller_names: {}\n",
        ent.name,
        ctrls[0].namespace,
        yaml_list(&names)
    );
    let first_arm = ctrls.iter().position(|c| c.kind == "FollowJointTrajectory");
    for (i, c) in ctrls.iter().enumerate() {
        let _ = writeln!(
            mc,
            "  {}:\n    type: {}\n    action_ns: {}\n    default: {}\n    joints: {}",
            c.name,
            c.kind,
            c.action_ns,
            Some(i) == first_arm || c.kind == "GripperCommand",
            yaml_list(&c.joints)
        );
    }
    mc
}

/// ros2_controllers.yaml: the controllers the world declares for the robot, with their joints and
/// interfaces.
fn ros2_controllers_yaml(ctx: &mut SimContext, ent: &Entity) -> String {
    let reg = crate::handles::controllers::Registry::of(ctx, &ent.name);
    let specs = reg.declared_specs();
    let rate = specs.iter().map(|s| s.update_rate).max().unwrap_or(100);
    let ns = if ent.namespace.is_empty() { String::new() } else { format!("{}/", ent.namespace) };
    let mut rc = format!(
        "# The controllers the world declares for robot `{}` (roqsim serves them in-process).\n{ns}controller_manager:\n  ros__parameters:\n    update_rate: {rate}\n",
        ent.name
    );
    for s in &specs {
        let _ = writeln!(rc, "    {}:\n      type: {}", s.name, s.type_name);
    }
    for s in &specs {
        let joints: Vec<String> = s
            .command_interfaces
            .iter()
            .filter_map(|c| c.rsplit_once('/').map(|(j, _)| j.to_string()))
            .collect();
        if joints.is_empty() {
            continue;
        }
        let mut cmd: Vec<String> = s
            .command_interfaces
            .iter()
            .filter_map(|c| c.rsplit_once('/').map(|(_, i)| i.to_string()))
            .collect();
        cmd.dedup();
        let mut st: Vec<String> = s
            .state_interfaces
            .iter()
            .filter_map(|c| c.rsplit_once('/').map(|(_, i)| i.to_string()))
            .collect();
        st.sort();
        st.dedup();
        if s.type_name.ends_with("GripperActionController") {
            let _ = writeln!(rc, "{ns}{}:\n  ros__parameters:\n    joint: {}", s.name, joints[0]);
        } else {
            let _ = writeln!(
                rc,
                "{ns}{}:\n  ros__parameters:\n    joints: {}\n    command_interfaces: {}\n    state_interfaces: {}",
                s.name,
                yaml_list(&joints),
                yaml_list(&cmd),
                yaml_list(&st)
            );
        }
    }
    rc
}

/// move_group.launch.py: move_group in the robot's namespace, reading the folder's files.
fn move_group_launch(ent: &Entity, robot: &str, srdf: &Srdf, ctrls: &[MoveitController]) -> String {
    let ns_arg = ctrls[0].namespace.trim_start_matches('/').to_string();
    let groups: Vec<String> = srdf.groups.iter().map(|g| g.name.clone()).collect();
    let grippers: Vec<String> =
        srdf.groups.iter().filter(|g| g.gripper.is_some()).map(gripper_group).collect();
    format!(
        r#""""move_group against roqsim for robot `{entity}` (exported by `roqsim export moveit`).

Start the simulation first (`roqsim sim WORLD --ros`), then `ros2 launch ./move_group.launch.py`
from this folder. Planning groups: {groups}; grippers: {grippers}.
"""

import os

import yaml
from launch import LaunchDescription
from launch_ros.actions import Node

HERE = os.path.dirname(os.path.realpath(__file__))


def _text(name):
    with open(os.path.join(HERE, name)) as f:
        return f.read()


def _yaml(name):
    return yaml.safe_load(_text(name))


def generate_launch_description():
    params = {{
        "robot_description": _text("{robot}.urdf"),
        "robot_description_semantic": _text("{robot}.srdf"),
        "robot_description_kinematics": _yaml("kinematics.yaml"),
        "robot_description_planning": _yaml("joint_limits.yaml"),
        "use_sim_time": True,
        "publish_robot_description_semantic": True,
        "planning_pipelines": ["ompl"],
        "default_planning_pipeline": "ompl",
        "ompl": _yaml("ompl_planning.yaml"),
    }}
    params.update(_yaml("moveit_controllers.yaml"))
    return LaunchDescription(
        [
            Node(
                package="moveit_ros_move_group",
                executable="move_group",
                namespace="{ns_arg}",
                output="screen",
                parameters=[params],
            )
        ]
    )
"#,
        entity = ent.name,
        groups = groups.join(", "),
        grippers = if grippers.is_empty() { "none".to_string() } else { grippers.join(", ") },
    )
}

/// OMPL's planners as MoveIt's setup assistant lists them, with MoveIt's default parameters
/// (`name`, `[(parameter, value)]`).
const PLANNERS: &[(&str, &[(&str, &str)])] = &[
    ("SBL", &[("range", "0.0")]),
    ("EST", &[("range", "0.0"), ("goal_bias", "0.05")]),
    (
        "LBKPIECE",
        &[("range", "0.0"), ("border_fraction", "0.9"), ("min_valid_path_fraction", "0.5")],
    ),
    (
        "BKPIECE",
        &[
            ("range", "0.0"),
            ("border_fraction", "0.9"),
            ("failed_expansion_score_factor", "0.5"),
            ("min_valid_path_fraction", "0.5"),
        ],
    ),
    (
        "KPIECE",
        &[
            ("range", "0.0"),
            ("goal_bias", "0.05"),
            ("border_fraction", "0.9"),
            ("failed_expansion_score_factor", "0.5"),
            ("min_valid_path_fraction", "0.5"),
        ],
    ),
    ("RRT", &[("range", "0.0"), ("goal_bias", "0.05")]),
    ("RRTConnect", &[("range", "0.0")]),
    ("RRTstar", &[("range", "0.0"), ("goal_bias", "0.05"), ("delay_collision_checking", "1")]),
    (
        "TRRT",
        &[
            ("range", "0.0"),
            ("goal_bias", "0.05"),
            ("max_states_failed", "10"),
            ("temp_change_factor", "2.0"),
            ("min_temperature", "10e-10"),
            ("init_temperature", "10e-6"),
            ("frountier_threshold", "0.0"),
            ("frountierNodeRatio", "0.1"),
            ("k_constant", "0.0"),
        ],
    ),
    ("PRM", &[("max_nearest_neighbors", "10")]),
    ("PRMstar", &[]),
];

/// `ompl_planning.yaml`: the OMPL pipeline's parameters as MoveIt 2 (Jazzy) reads them
/// (`planning_plugins`, `request_adapters`, `response_adapters`, as moveit_configs_utils' default
/// OMPL config states them), the planner configurations, and per SRDF group its planners
/// (RRTConnect first and default), a projection over its first two joints and the collision
/// checking resolution, as the setup assistant writes them.
pub fn ompl_planning(srdf: &crate::export::srdf::Srdf) -> String {
    let mut o = String::from(
        "# OMPL for move_group (MoveIt 2 Jazzy): a starting point, meant to be overridden.\n\
         planning_plugins:\n  - ompl_interface/OMPLPlanner\n\
         start_state_max_bounds_error: 0.1\n\
         jiggle_fraction: 0.05\n\
         # The order is the order the pipeline applies them in.\n\
         request_adapters:\n\
         \x20 - default_planning_request_adapters/ResolveConstraintFrames\n\
         \x20 - default_planning_request_adapters/ValidateWorkspaceBounds\n\
         \x20 - default_planning_request_adapters/CheckStartStateBounds\n\
         \x20 - default_planning_request_adapters/CheckStartStateCollision\n\
         response_adapters:\n\
         \x20 - default_planning_response_adapters/AddTimeOptimalParameterization\n\
         \x20 - default_planning_response_adapters/ValidateSolution\n\
         \x20 - default_planning_response_adapters/DisplayMotionPath\n\
         planner_configs:\n",
    );
    for (name, params) in PLANNERS {
        let _ = writeln!(o, "  {name}:\n    type: geometric::{name}");
        for (k, v) in *params {
            let _ = writeln!(o, "    {k}: {v}");
        }
    }
    let mut order: Vec<&str> = vec!["RRTConnect"];
    order.extend(PLANNERS.iter().map(|(n, _)| *n).filter(|n| *n != "RRTConnect"));
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for g in &srdf.groups {
        groups.push((g.name.clone(), g.joints.clone()));
        if let Some((_, gj)) = &g.gripper {
            groups.push((crate::export::srdf::gripper_group(g), vec![gj.clone()]));
        }
    }
    for (name, joints) in groups {
        let proj: Vec<&str> = joints.iter().take(2).map(String::as_str).collect();
        let _ = writeln!(
            o,
            "{name}:\n  default_planner_config: RRTConnect\n  planner_configs: {}\n  projection_evaluator: joints({})\n  longest_valid_segment_fraction: 0.005",
            yaml_list(&order.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
            proj.join(",")
        );
    }
    o
}
