//! `roqsim export srdf` / `export moveit` beyond the defaults: `ompl_planning.yaml`, `--tip-site`,
//! an arm controller's `joint_prefix` (the description, SRDF and MoveIt files name joints as
//! /joint_states does) and a bridge `namespace:` (the controllers' action namespaces).

mod common;

use common::import_notes;

use std::path::Path;
use std::process::Command;

use roqsim::context::payload::Payload;
use roqsim::export::moveit::{export_moveit, MoveitOptions};
use roqsim::export::srdf::export_srdf;
use roqsim::ros::config::BridgeConfig;
use roqsim::Engine;

/// A 3-joint arm with a slide finger, a tool site on the last link and a pad site on the finger.
const ARM: &str = r#"<mujoco model="parm">
  <worldbody>
    <body name="base_link">
      <geom type="cylinder" size="0.06 0.05" pos="0 0 0.05"/>
      <body name="link1" pos="0 0 0.1">
        <joint name="joint1" axis="0 0 1" range="-2.9 2.9"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.2" size="0.03"/>
        <body name="link2" pos="0 0 0.2">
          <joint name="joint2" axis="0 1 0" range="-1.8 1.8"/>
          <geom type="capsule" fromto="0 0 0 0 0 0.3" size="0.025"/>
          <body name="link3" pos="0 0 0.3">
            <joint name="joint3" axis="0 1 0" range="-2.4 2.4"/>
            <geom type="capsule" fromto="0 0 0 0 0 0.2" size="0.02"/>
            <site name="tool_tip" pos="0 0 0.25"/>
            <body name="finger" pos="0 0 0.22">
              <joint name="finger_joint" type="slide" axis="1 0 0" range="0 0.04"/>
              <geom type="box" size="0.005 0.01 0.02"/>
              <site name="pad" pos="0 0 0.02"/>
            </body>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="a1" joint="joint1" kp="100" forcerange="-40 40"/>
    <position name="a2" joint="joint2" kp="100"/>
    <position name="a3" joint="joint3" kp="100"/>
    <position name="grip" joint="finger_joint" kp="50" ctrlrange="0 0.04"/>
  </actuator>
  <keyframe><key name="ready" qpos="0.1 0.2 0.3 0.01"/></keyframe>
</mujoco>
"#;

fn world(controller_extra: &str) -> String {
    format!(
        "sim: {{world: empty.xml}}\ncomponents:\n  - spawn_arm: {{model: parm.xml, gravity_compensation: false}}\n    name: arm\n    components:\n      - arm_controller: {{joints: [joint1, joint2, joint3], gripper_actuator: grip, gripper_joint: finger_joint{controller_extra}}}\n"
    )
}

fn setup(dir: &Path) {
    common::write_empty_world(dir);
    std::fs::write(dir.join("parm.xml"), ARM).unwrap();
}

fn engine(dir: &Path, yaml: &str) -> Engine {
    setup(dir);
    common::engine_in(yaml, dir)
}

fn arm_names(e: &Engine) -> Vec<String> {
    e.ctx
        .blackboard
        .get::<roqsim::plugins::manipulation::arm_controller::ArmHandle>("arm:arm")
        .unwrap()
        .names()
}

fn strings(v: &serde_norway::Value) -> Vec<String> {
    v.as_sequence().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

#[test]
fn joint_prefix_names_the_description_srdf_and_moveit_files_as_joint_states_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = engine(dir.path(), &world(", joint_prefix: left_"));
    let ent = e.ctx.entities.get("arm").unwrap().clone();
    let reported = arm_names(&e);
    assert_eq!(reported, vec!["left_joint1", "left_joint2", "left_joint3"]);
    // The description (export urdf, robot_description) names the joints as reported.
    let urdf = roqsim::export::urdf::export_for(&e.ctx, &ent).unwrap();
    let (_, joints) = roqsim::spawn::urdf::tree(&urdf).unwrap();
    let moving: Vec<&str> =
        joints.iter().filter(|j| j.kind != "fixed").map(|j| j.name.as_str()).collect();
    assert_eq!(moving, vec!["left_joint1", "left_joint2", "left_joint3", "left_finger_joint"]);
    e.step().unwrap();
    let rd = e.ctx.interface.all().iter().position(|ep| ep.name == "robot_description").unwrap();
    match e.ctx.interface.get(rd).latest() {
        Some((Payload::String(s), _)) => {
            assert!(s.contains("<joint name=\"left_joint2\" type=\"revolute\">"), "{s}")
        }
        other => panic!("{other:?}"),
    }
    // The SRDF: the chain over the reported joints; home (the `ready` keyframe, the model's
    // first) and the keyframe as group states with the reported names and the keyframe's values.
    let s = export_srdf(&mut e.ctx, &ent, 300, 0, None).unwrap();
    assert_eq!(s.groups[0].joints, reported);
    assert!(s.groups[0].chain);
    for state in ["home", "ready"] {
        let want = format!(
            "<group_state name=\"{state}\" group=\"arm\">\n    <joint name=\"left_joint1\" value=\"0.1\"/>\n    <joint name=\"left_joint2\" value=\"0.2\"/>\n    <joint name=\"left_joint3\" value=\"0.3\"/>\n  </group_state>"
        );
        assert!(s.text.contains(&want), "{state}:\n{}", s.text);
    }
    assert!(s.text.contains("<joint name=\"left_finger_joint\"/>"), "{}", s.text);
    // The MoveIt files: controllers' joints = /joint_states names, limits keyed by them.
    let files =
        export_moveit(&mut e.ctx, &ent, &MoveitOptions { samples: 300, ..Default::default() })
            .unwrap();
    let get = |n: &str| -> serde_norway::Value {
        serde_norway::from_str(&files.iter().find(|(f, _)| f == n).unwrap().1).unwrap()
    };
    let mc = get("moveit_controllers.yaml");
    let sc = &mc["moveit_simple_controller_manager"];
    assert_eq!(strings(&sc["arm_controller"]["joints"]), reported);
    assert_eq!(strings(&sc["gripper_controller"]["joints"]), vec!["left_finger_joint"]);
    let jl = get("joint_limits.yaml");
    let mut limited: Vec<String> = jl["joint_limits"]
        .as_mapping()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap().to_string())
        .collect();
    limited.sort();
    assert_eq!(limited, vec!["left_finger_joint", "left_joint1", "left_joint2", "left_joint3"]);
    let ompl = get("ompl_planning.yaml");
    assert_eq!(
        ompl["arm"]["projection_evaluator"].as_str(),
        Some("joints(left_joint1,left_joint2)")
    );
}

#[test]
fn a_urdf_robot_whose_controller_adds_a_joint_prefix_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("one.urdf"),
        r#"<robot name="one"><link name="base"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
<link name="l1"><inertial><origin xyz="0 0 0.1"/><mass value="0.5"/><inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="5" velocity="1"/></joint></robot>"#,
    )
    .unwrap();
    let mut e = engine(
        dir.path(),
        "sim: {world: empty.xml}\ncomponents:\n  - spawn_arm: {model: one.urdf, actuators: {add: [j1], control: position, p: 20}}\n    name: one\n    components:\n      - arm_controller: {joints: [j1], joint_prefix: left_}\n",
    );
    let ent = e.ctx.entities.get("one").unwrap().clone();
    let want = "its URDF names joint `j1`, which the arm controller reports as `left_j1` (joint_prefix): a description spawned from a URDF keeps the URDF's joint names, so drop `joint_prefix` from its arm_controller";
    assert_eq!(export_srdf(&mut e.ctx, &ent, 10, 0, None).unwrap_err(), want);
    assert_eq!(export_moveit(&mut e.ctx, &ent, &MoveitOptions::default()).unwrap_err(), want);
    // robot_description still carries the URDF as written, and the run log says why it disagrees.
    assert!(
        import_notes(&e).contains(&format!("robot_description: `one`: {want}")),
        "{:?}",
        import_notes(&e)
    );
}

#[test]
fn ompl_planning_and_a_bridge_namespace_in_the_moveit_folder() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = engine(dir.path(), &world(""));
    let ent = e.ctx.entities.get("arm").unwrap().clone();
    let bridge = BridgeConfig { namespace: "sim".into(), ..Default::default() };
    let opts = MoveitOptions { samples: 300, bridge: bridge.clone(), ..Default::default() };
    let files = export_moveit(&mut e.ctx, &ent, &opts).unwrap();
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "arm.urdf",
            "arm.srdf",
            "joint_limits.yaml",
            "kinematics.yaml",
            "ompl_planning.yaml",
            "moveit_controllers.yaml",
            "ros2_controllers.yaml",
            "move_group.launch.py"
        ]
    );
    let text = |n: &str| files.iter().find(|(f, _)| f == n).unwrap().1.clone();
    let get = |n: &str| -> serde_norway::Value { serde_norway::from_str(&text(n)).unwrap() };
    // ompl_planning.yaml: MoveIt 2 Jazzy's pipeline keys, the planners, one entry per SRDF group.
    let o = get("ompl_planning.yaml");
    assert_eq!(strings(&o["planning_plugins"]), vec!["ompl_interface/OMPLPlanner"]);
    assert_eq!(
        strings(&o["request_adapters"]),
        vec![
            "default_planning_request_adapters/ResolveConstraintFrames",
            "default_planning_request_adapters/ValidateWorkspaceBounds",
            "default_planning_request_adapters/CheckStartStateBounds",
            "default_planning_request_adapters/CheckStartStateCollision"
        ]
    );
    assert_eq!(
        strings(&o["response_adapters"]),
        vec![
            "default_planning_response_adapters/AddTimeOptimalParameterization",
            "default_planning_response_adapters/ValidateSolution",
            "default_planning_response_adapters/DisplayMotionPath"
        ]
    );
    assert_eq!(o["start_state_max_bounds_error"].as_f64(), Some(0.1));
    assert_eq!(o["planner_configs"]["RRTConnect"]["type"].as_str(), Some("geometric::RRTConnect"));
    assert_eq!(o["planner_configs"]["RRTstar"]["goal_bias"].as_f64(), Some(0.05));
    assert_eq!(o["planner_configs"].as_mapping().unwrap().len(), 11);
    assert_eq!(o["arm"]["default_planner_config"].as_str(), Some("RRTConnect"));
    let arm_planners = strings(&o["arm"]["planner_configs"]);
    assert_eq!(arm_planners.len(), 11);
    assert_eq!(arm_planners[0], "RRTConnect");
    for p in &arm_planners {
        assert!(o["planner_configs"][p.as_str()]["type"].as_str().is_some(), "{p}");
    }
    assert_eq!(o["arm"]["projection_evaluator"].as_str(), Some("joints(joint1,joint2)"));
    assert_eq!(o["arm"]["longest_valid_segment_fraction"].as_f64(), Some(0.005));
    assert_eq!(o["gripper"]["projection_evaluator"].as_str(), Some("joints(finger_joint)"));
    assert!(text("move_group.launch.py").contains("\"ompl\": _yaml(\"ompl_planning.yaml\")"));
    // The namespace: controller name and action_ns recombine, under the launch namespace, into
    // exactly the actions the ROS plan serves with that bridge configuration.
    let plan = roqsim::ros::plan::build(&e.ctx.interface, &bridge).unwrap();
    let mut served: Vec<String> = plan
        .inputs
        .iter()
        .filter(|i| matches!(i.kind, roqsim::ros::plan::InKind::Action { .. }))
        .map(|i| i.name.clone())
        .collect();
    served.sort();
    assert_eq!(
        served,
        vec!["/sim/arm_controller/follow_joint_trajectory", "/sim/gripper_controller/gripper_cmd"]
    );
    let launch = text("move_group.launch.py");
    assert!(launch.contains("namespace=\"sim\""), "{launch}");
    let mc = get("moveit_controllers.yaml");
    let sc = &mc["moveit_simple_controller_manager"];
    let mut recombined: Vec<String> = strings(&sc["controller_names"])
        .iter()
        .map(|c| format!("/sim/{c}/{}", sc[c.as_str()]["action_ns"].as_str().unwrap()))
        .collect();
    recombined.sort();
    assert_eq!(recombined, served);
    assert!(text("moveit_controllers.yaml").contains("(namespace /sim)"));
}

#[test]
fn tip_site_ends_the_chain_at_a_site_and_unknown_or_moving_sites_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = engine(dir.path(), &world(""));
    let ent = e.ctx.entities.get("arm").unwrap().clone();
    let s = export_srdf(&mut e.ctx, &ent, 300, 0, Some("tool_tip")).unwrap();
    assert!(
        s.text.contains("<chain base_link=\"base_link\" tip_link=\"tool_tip\"/>"),
        "{}",
        s.text
    );
    assert!(s.groups[0].chain);
    assert!(
        s.text.contains("<group name=\"gripper\">\n    <link name=\"finger\"/>\n    <link name=\"pad\"/>\n    <joint name=\"finger_joint\"/>\n  </group>"),
        "{}",
        s.text
    );
    assert!(
        s.text.contains(
            "<end_effector name=\"arm_ee\" parent_link=\"tool_tip\" group=\"gripper\" parent_group=\"arm\"/>"
        ),
        "{}",
        s.text
    );
    assert_eq!(
        export_srdf(&mut e.ctx, &ent, 10, 0, Some("nope")).unwrap_err(),
        "--tip-site: robot `arm` has no site `nope`; its sites: [tool_tip, pad]"
    );
    assert_eq!(
        export_srdf(&mut e.ctx, &ent, 10, 0, Some("pad")).unwrap_err(),
        "--tip-site `pad` is not fixed to the last link of an arm group ([arm: link3]): a tip frame hangs from it through fixed joints only (a site on a finger moves with the gripper); its sites: [tool_tip, pad]"
    );
    // Through the command line: written into the folder, and refused with exit status 2.
    let w = dir.path().join("w.yaml");
    std::fs::write(&w, world("")).unwrap();
    let bin = env!("CARGO_BIN_EXE_roqsim");
    let out = dir.path().join("cfg");
    let o = Command::new(bin)
        .args(["export", "moveit"])
        .arg(&w)
        .args(["--robot", "arm", "--samples", "100", "--tip-site", "tool_tip", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let srdf = std::fs::read_to_string(out.join("arm.srdf")).unwrap();
    assert!(srdf.contains("tip_link=\"tool_tip\""), "{srdf}");
    assert!(out.join("ompl_planning.yaml").is_file());
    let o = Command::new(bin)
        .args(["export", "moveit"])
        .arg(&w)
        .args(["--robot", "arm", "--tip-site", "nope", "-o"])
        .arg(dir.path().join("x"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr).trim().lines().last(),
        Some("error: export moveit `arm`: --tip-site: robot `arm` has no site `nope`; its sites: [tool_tip, pad]")
    );
}

fn has_description(e: &Engine) -> bool {
    e.ctx.interface.all().iter().any(|ep| ep.name == "robot_description")
}

#[test]
fn a_robot_whose_actions_live_in_two_namespaces_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = engine(
        dir.path(),
        "sim: {world: empty.xml}\ncomponents:\n  - spawn_arm: {model: parm.xml, gravity_compensation: false}\n    name: arm\n    components:\n      - arm_controller: {joints: [joint1, joint2], namespace: left}\n      - arm_controller: {joints: [joint3], namespace: right, controller_name: wrist_controller}\n        name: wrist\n",
    );
    let ent = e.ctx.entities.get("arm").unwrap().clone();
    assert_eq!(
        export_moveit(&mut e.ctx, &ent, &MoveitOptions { samples: 10, ..Default::default() })
            .unwrap_err(),
        "robot `arm`: its actions live in two namespaces (`/right/wrist_controller/follow_joint_trajectory` and `/left/arm_controller/follow_joint_trajectory`), and one move_group reads one: give its controllers one namespace"
    );
}

#[test]
fn robot_description_is_withheld_and_logged_when_it_cannot_be_right() {
    let dir = tempfile::tempdir().unwrap();
    // Two arms in one namespace: one topic cannot carry two descriptions.
    let e = engine(
        dir.path(),
        "sim: {world: empty.xml}\ncomponents:\n  - spawn_arm: {model: parm.xml, prefix: a_, gravity_compensation: false}\n    name: a\n  - spawn_arm: {model: parm.xml, prefix: b_, pos: [1, 0, 0], gravity_compensation: false}\n    name: b\n",
    );
    assert!(!has_description(&e));
    let n = import_notes(&e);
    for (me, other) in [("a", "b"), ("b", "a")] {
        let want = format!("robot_description: `{me}` shares namespace `` with [{other}]: no description is published there; give each robot its own namespace");
        assert!(n.contains(&want), "{n:?}");
    }
    // A body with two joints: no URDF can express it.
    std::fs::write(
        dir.path().join("two.xml"),
        r#"<mujoco><worldbody><body name="base"><geom size="0.1"/><body name="link" pos="0 0 0.2"><joint name="a" axis="1 0 0"/><joint name="b" axis="0 1 0"/><geom size="0.05"/></body></body></worldbody></mujoco>"#,
    )
    .unwrap();
    let e = engine(
        dir.path(),
        "sim: {world: empty.xml}\ncomponents:\n  - spawn_arm: {model: two.xml, gravity_compensation: false}\n    name: m\n",
    );
    assert!(!has_description(&e));
    assert!(
        import_notes(&e).contains(&"robot_description: `m` is not published: body `link` has 2 joints; a URDF link has one joint: split the body in the model".to_string()),
        "{:?}",
        import_notes(&e)
    );
}
