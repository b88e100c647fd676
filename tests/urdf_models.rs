//! URDF in: descriptions written here (a diff-drive base with an OBJ mesh found through
//! `package://`, a 3-joint arm with an STL mesh found relative to the file, a xacro), spawned by
//! `spawn_robot` / `spawn_arm`, driven, and compared against plain MuJoCo (the `mujoco` Python
//! package) compiling the same rewritten URDF; and every refusal of URDF in, by its text.
//!
//! The tests of this binary share one process environment: [`setup`] puts a temporary install
//! prefix (`share/test_bot`) first on AMENT_PREFIX_PATH, once, before any of them resolves a model.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::quat_dist;
use mujoco_rs::prelude::MjtObjBase;
use roqsim::context::payload::Payload;
use roqsim::Engine;
use serde_json::Value;

const CHASSIS_OBJ: &str = "v -0.15 -0.1 -0.04\nv 0.15 -0.1 -0.04\nv 0.15 0.1 -0.04\nv -0.15 0.1 -0.04\n\
v -0.15 -0.1 0.04\nv 0.15 -0.1 0.04\nv 0.15 0.1 0.04\nv -0.15 0.1 0.04\n\
f 1 3 2\nf 1 4 3\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n";

const BOT: &str = r#"<?xml version="1.0"?>
<robot name="test_bot">
  <material name="grey"><color rgba="0.5 0.5 0.5 1"/></material>
  <link name="base_link">
    <inertial><origin xyz="0 0 0.01"/><mass value="4.0"/><inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial>
    <visual><geometry><mesh filename="package://test_bot/meshes/chassis.obj"/></geometry><material name="grey"/></visual>
    <collision><origin xyz="0 0 0.02"/><geometry><box size="0.3 0.2 0.06"/></geometry></collision>
  </link>
  <link name="left_wheel">
    <inertial><mass value="0.2"/><inertia ixx="0.0002" ixy="0" ixz="0" iyy="0.00025" iyz="0" izz="0.0002"/></inertial>
    <collision><origin rpy="1.5707963267948966 0 0"/><geometry><cylinder radius="0.05" length="0.02"/></geometry></collision>
  </link>
  <link name="right_wheel">
    <inertial><mass value="0.2"/><inertia ixx="0.0002" ixy="0" ixz="0" iyy="0.00025" iyz="0" izz="0.0002"/></inertial>
    <collision><origin rpy="1.5707963267948966 0 0"/><geometry><cylinder radius="0.05" length="0.02"/></geometry></collision>
  </link>
  <link name="caster">
    <inertial><mass value="0.05"/><inertia ixx="0.00001" ixy="0" ixz="0" iyy="0.00001" iyz="0" izz="0.00001"/></inertial>
    <collision><geometry><sphere radius="0.02"/></geometry></collision>
  </link>
  <link name="laser_link"/>
  <joint name="left_wheel_joint" type="continuous">
    <parent link="base_link"/><child link="left_wheel"/>
    <origin xyz="0.05 0.12 0" rpy="0 0 0"/><axis xyz="0 1 0"/><limit effort="2" velocity="20"/>
  </joint>
  <joint name="right_wheel_joint" type="continuous">
    <parent link="base_link"/><child link="right_wheel"/>
    <origin xyz="0.05 -0.12 0" rpy="0 0 0"/><axis xyz="0 1 0"/><limit effort="2" velocity="20"/>
  </joint>
  <joint name="caster_joint" type="fixed">
    <parent link="base_link"/><child link="caster"/><origin xyz="-0.11 0 -0.03"/>
  </joint>
  <joint name="laser_joint" type="fixed">
    <parent link="base_link"/><child link="laser_link"/><origin xyz="0.1 0 0.08" rpy="0 0 0.3"/>
  </joint>
</robot>
"#;

const ARM: &str = r#"<?xml version="1.0"?>
<robot name="test_arm">
  <link name="base_link">
    <inertial><mass value="2.0"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><origin xyz="0 0 0.05"/><geometry><cylinder radius="0.06" length="0.1"/></geometry></collision>
  </link>
  <link name="link1">
    <inertial><origin xyz="0 0 0.1"/><mass value="1.0"/><inertia ixx="0.004" ixy="0" ixz="0" iyy="0.004" iyz="0" izz="0.001"/></inertial>
    <collision><geometry><mesh filename="meshes/link1.stl"/></geometry></collision>
  </link>
  <link name="link2">
    <inertial><origin xyz="0 0 0.15"/><mass value="0.8"/><inertia ixx="0.006" ixy="0" ixz="0" iyy="0.006" iyz="0" izz="0.0005"/></inertial>
    <collision><origin xyz="0 0 0.15"/><geometry><box size="0.05 0.05 0.3"/></geometry></collision>
  </link>
  <link name="link3">
    <inertial><origin xyz="0 0 0.1"/><mass value="0.5"/><inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.0003"/></inertial>
    <collision><origin xyz="0 0 0.15"/><geometry><capsule radius="0.02" length="0.3"/></geometry></collision>
  </link>
  <link name="tool0"/>
  <link name="finger">
    <inertial><mass value="0.05"/><inertia ixx="0.00001" ixy="0" ixz="0" iyy="0.00001" iyz="0" izz="0.00001"/></inertial>
    <collision><origin xyz="0 0 0.02"/><geometry><box size="0.01 0.02 0.04"/></geometry></collision>
  </link>
  <joint name="finger_joint" type="prismatic">
    <parent link="tool0"/><child link="finger"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.04" effort="10" velocity="0.1"/>
  </joint>
  <joint name="joint1" type="revolute">
    <parent link="base_link"/><child link="link1"/><origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>
    <limit lower="-2.9" upper="2.9" effort="40" velocity="2.0"/>
  </joint>
  <joint name="joint2" type="revolute">
    <parent link="link1"/><child link="link2"/><origin xyz="0 0 0.2" rpy="0 0.2 0"/><axis xyz="0 1 0"/>
    <limit lower="-1.8" upper="1.8" effort="40" velocity="2.0"/>
  </joint>
  <joint name="joint3" type="revolute">
    <parent link="link2"/><child link="link3"/><origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>
    <limit lower="-2.4" upper="2.4" effort="20" velocity="3.0"/>
  </joint>
  <joint name="tool0_joint" type="fixed">
    <parent link="link3"/><child link="tool0"/><origin xyz="0 0 0.3" rpy="3.141592653589793 0 0"/>
  </joint>
</robot>
"#;

/// A closed box mesh as binary STL (half-extents `h`, centred at `c`).
fn box_stl(h: [f32; 3], c: [f32; 3]) -> Vec<u8> {
    let v = |i: usize| -> [f32; 3] {
        [
            c[0] + if i & 1 == 0 { -h[0] } else { h[0] },
            c[1] + if i & 2 == 0 { -h[1] } else { h[1] },
            c[2] + if i & 4 == 0 { -h[2] } else { h[2] },
        ]
    };
    let faces = [
        [0, 2, 3],
        [0, 3, 1],
        [4, 5, 7],
        [4, 7, 6],
        [0, 1, 5],
        [0, 5, 4],
        [2, 6, 7],
        [2, 7, 3],
        [0, 4, 6],
        [0, 6, 2],
        [1, 3, 7],
        [1, 7, 5],
    ];
    let mut out = vec![0u8; 80];
    out.extend((faces.len() as u32).to_le_bytes());
    for f in faces {
        out.extend([0u8; 12]);
        for i in f {
            for x in v(i) {
                out.extend(x.to_le_bytes());
            }
        }
        out.extend([0u8; 2]);
    }
    out
}

/// The shared fixture: `<prefix>/share/test_bot/{urdf/bot.urdf, meshes/chassis.obj}` on
/// AMENT_PREFIX_PATH, and `<root>/arm/{arm.urdf, meshes/link1.stl}`. Returns the root.
fn setup() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("roqsim_urdf_models_{}", std::process::id()));
        let share = root.join("prefix/share/test_bot");
        std::fs::create_dir_all(share.join("urdf")).unwrap();
        std::fs::create_dir_all(share.join("meshes")).unwrap();
        std::fs::write(share.join("urdf/bot.urdf"), BOT).unwrap();
        std::fs::write(share.join("meshes/chassis.obj"), CHASSIS_OBJ).unwrap();
        std::fs::write(share.join("package.xml"), "<package><name>test_bot</name></package>")
            .unwrap();
        std::fs::create_dir_all(root.join("arm/meshes")).unwrap();
        std::fs::write(root.join("arm/arm.urdf"), ARM).unwrap();
        std::fs::write(
            root.join("arm/meshes/link1.stl"),
            box_stl([0.03, 0.03, 0.1], [0.0, 0.0, 0.1]),
        )
        .unwrap();
        std::fs::write(root.join("empty.xml"), "<mujoco model=\"empty\"><worldbody/></mujoco>")
            .unwrap();
        let prefix = root.join("prefix").display().to_string();
        let old = std::env::var("AMENT_PREFIX_PATH").unwrap_or_default();
        let new = if old.is_empty() { prefix } else { format!("{prefix}:{old}") };
        // Set once, before any test of this binary resolves a model (every test calls setup()).
        std::env::set_var("AMENT_PREFIX_PATH", new);
        std::env::set_var("ROQSIM_PYTHON", common::venv_python());
        root
    })
}

/// Plain MuJoCo's poses of the rewritten URDF (written beside the original as `<name>.mujoco.urdf`).
fn plain_poses(urdf: &Path, n: usize, seed: u64) -> Value {
    let src = roqsim::spawn::urdf::prepare(urdf).unwrap();
    let out = urdf.with_extension("mujoco.urdf");
    std::fs::write(&out, &src.rewritten).unwrap();
    let o = Command::new(common::venv_python())
        .arg(common::root().join("tests/third_party/plain_mujoco.py"))
        .args(["poses", out.to_str().unwrap(), &n.to_string(), &seed.to_string()])
        .output()
        .unwrap();
    assert!(o.status.success(), "plain_mujoco.py: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// At every configuration plain MuJoCo dumped, the same joint values in a copy of the engine's
/// state (`free`: a free joint put at the identity first), and every body compared. Returns
/// (bodies compared, max position error, max quaternion error).
fn compare(e: &Engine, dump: &Value, free: Option<&str>) -> (usize, f64, f64) {
    let m = e.ctx.model();
    let joints: Vec<&str> =
        dump["joints"].as_array().unwrap().iter().map(|j| j.as_str().unwrap()).collect();
    let (mut n, mut pe, mut qe) = (0, 0.0f64, 0.0f64);
    for (k, cfg) in dump["configs"].as_array().unwrap().iter().enumerate() {
        let mut d = e.ctx.data().clone();
        if let Some(f) = free {
            let j = m.name_to_id(MjtObjBase::mjOBJ_JOINT, f).unwrap();
            let a = m.jnt_qposadr()[j] as usize;
            d.qpos_mut()[a..a + 7].copy_from_slice(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
        }
        for (i, name) in joints.iter().enumerate() {
            let id = m.name_to_id(MjtObjBase::mjOBJ_JOINT, name).unwrap();
            d.qpos_mut()[m.jnt_qposadr()[id] as usize] = cfg[i].as_f64().unwrap();
        }
        d.forward();
        for (name, poses) in dump["bodies"].as_object().unwrap() {
            let id = m
                .name_to_id(MjtObjBase::mjOBJ_BODY, name)
                .unwrap_or_else(|| panic!("body `{name}` missing"));
            let p = &poses[k];
            let x = d.xpos()[id];
            let q = d.xquat()[id];
            for i in 0..3 {
                pe = pe.max((x[i] - p[i].as_f64().unwrap()).abs());
            }
            let pq = [0, 1, 2, 3].map(|i| p[3 + i].as_f64().unwrap());
            qe = qe.max(quat_dist(q, pq));
            n += 1;
        }
    }
    (n, pe, qe)
}

fn body_names(e: &Engine) -> Vec<String> {
    let m = e.ctx.model();
    (1..m.ffi().nbody as usize)
        .map(|b| m.id_to_name(MjtObjBase::mjOBJ_BODY, b).unwrap_or("").to_string())
        .filter(|n| !n.starts_with("roqsim_"))
        .collect()
}

const BOT_WORLD: &str = "components:
  - spawn_robot:
      model: package://test_bot/urdf/bot.urdf
      default_plugins: false
      pose: {position: {x: 0, y: 0, z: 0.05}}
      actuators: {add: [left_wheel_joint, right_wheel_joint], control: velocity, d: 2}
    name: bot
    components:
      - diff_drive:
          wheel_radius: 0.05
          wheel_separation: 0.24
          left_actuator: left_wheel_joint
          right_actuator: right_wheel_joint
          left_joint: left_wheel_joint
          right_joint: right_wheel_joint
          test_cmd: [0.2, 0.0]
";

#[test]
fn a_urdf_base_through_package_uri_spawns_drives_and_keeps_its_names() {
    let root = setup();
    let mut e = common::engine_in(BOT_WORLD, root);
    // Every link is a body of its own name (no fixed link fused away), the base rides `base_free`.
    assert_eq!(
        body_names(&e),
        vec!["base_link", "left_wheel", "right_wheel", "caster", "laser_link"]
    );
    let m = e.ctx.model();
    assert!(m.name_to_id(MjtObjBase::mjOBJ_JOINT, "base_free").is_some());
    // The OBJ mesh reached through package:// is compiled (the visual geom keeps its mesh).
    assert_eq!(m.ffi().nmesh, 1);
    // Effort limit: the joint's actuator force range; velocity limit: the created servo's command range.
    let lw = m.name_to_id(MjtObjBase::mjOBJ_JOINT, "left_wheel_joint").unwrap();
    assert_eq!(m.jnt_actfrcrange()[lw], [-2.0, 2.0]);
    let la = m.name_to_id(MjtObjBase::mjOBJ_ACTUATOR, "left_wheel_joint").unwrap();
    assert_eq!(m.actuator_ctrlrange()[la], [-20.0, 20.0]);

    // Body poses equal plain MuJoCo's of the same rewritten URDF (base at the identity).
    let dump = plain_poses(&root.join("prefix/share/test_bot/urdf/bot.urdf"), 5, 3);
    let (n, pe, qe) = compare(&e, &dump, Some("base_free"));
    assert_eq!(n, 25);
    assert!(pe < 1e-9 && qe < 1e-9, "position {pe} m, rotation {qe}");

    // Driven at 0.2 m/s for 2 s: it goes straight ahead.
    let steps = (2.0 / e.dt()).round() as u64;
    e.step_n(steps).unwrap();
    let m = e.ctx.model();
    let fj = m.name_to_id(MjtObjBase::mjOBJ_JOINT, "base_free").unwrap();
    let a = m.jnt_qposadr()[fj] as usize;
    let q = &e.ctx.data().qpos()[a..a + 7];
    eprintln!(
        "measured: base x {} y {} z {} after 2 s; pose error {pe} m / {qe}",
        q[0], q[1], q[2]
    );
    assert!(q[0] > 0.3 && q[0] < 0.42, "x after 2 s at 0.2 m/s: {}", q[0]);
    assert!(q[1].abs() < 0.01, "y {}", q[1]);
    assert!((q[2] - 0.05).abs() < 0.005, "z {}", q[2]);
    // joint_states carry the URDF's joint names.
    let id = e
        .ctx
        .interface
        .all()
        .iter()
        .position(|ep| ep.name == "joint_states" && ep.owner.as_deref() == Some("bot"))
        .expect("joint_states endpoint");
    let js = match e.ctx.interface.get(id).latest() {
        Some((Payload::JointState(j), _)) => j.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(js.name, vec!["left_wheel_joint", "right_wheel_joint"]);
    let rate = 0.2 / 0.05;
    assert!(js.velocity.iter().all(|w| (w - rate).abs() < 0.1 * rate), "{:?}", js.velocity);
    // robot_description is the URDF as written (package:// kept, for RViz to resolve).
    let rd = e
        .ctx
        .interface
        .all()
        .iter()
        .position(|ep| ep.name == "robot_description")
        .expect("robot_description endpoint");
    e.reset().unwrap();
    match e.ctx.interface.get(rd).latest() {
        Some((Payload::String(s), _)) => assert_eq!(s, BOT),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_urdf_arm_matches_plain_mujoco_and_reaches_its_target() {
    let root = setup();
    let yaml = "sim: {world: empty.xml}
components:
  - spawn_arm:
      model: arm/arm.urdf
      actuators: {add: [joint1, joint2, joint3, finger_joint], control: position, p: 200, d: 20}
    name: arm
    components:
      - arm_controller: {joints: [joint1, joint2, joint3], gripper_actuator: finger_joint, gripper_joint: finger_joint, test_target: [0.5, -0.4, 0.8]}
";
    let mut e = common::engine_in(yaml, root);
    assert_eq!(body_names(&e), vec!["base_link", "link1", "link2", "link3", "tool0", "finger"]);
    let dump = plain_poses(&root.join("arm/arm.urdf"), 5, 11);
    let (n, pe, qe) = compare(&e, &dump, None);
    assert_eq!(n, 30);
    assert!(pe < 1e-9 && qe < 1e-9, "position {pe} m, rotation {qe}");
    // The STL collision mesh found beside the file is compiled.
    assert_eq!(e.ctx.model().ffi().nmesh, 1);
    let steps = (3.0 / e.dt()).round() as u64;
    e.step_n(steps).unwrap();
    let m = e.ctx.model();
    for (j, want) in [("joint1", 0.5), ("joint2", -0.4), ("joint3", 0.8)] {
        let id = m.name_to_id(MjtObjBase::mjOBJ_JOINT, j).unwrap();
        let q = e.ctx.data().qpos()[m.jnt_qposadr()[id] as usize];
        eprintln!("measured: {j} {q} (target {want}); pose error {pe} m / {qe}");
        assert!((q - want).abs() < 0.01, "{j}: {q} (target {want})");
    }
}

#[test]
fn a_xacro_is_expanded_by_the_pypi_xacro_package() {
    let root = setup();
    let dir = root.join("xacro");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("rover.urdf.xacro"),
        r#"<?xml version="1.0"?>
<robot name="rover" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:property name="arm_len" value="0.4"/>
  <xacro:macro name="seg" params="name len">
    <link name="${name}">
      <inertial><origin xyz="0 0 ${len/2}"/><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
      <collision><origin xyz="0 0 ${len/2}"/><geometry><box size="0.05 0.05 ${len}"/></geometry></collision>
    </link>
  </xacro:macro>
  <xacro:seg name="base_link" len="0.1"/>
  <xacro:seg name="boom" len="${arm_len}"/>
  <joint name="boom_joint" type="revolute"><parent link="base_link"/><child link="boom"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
</robot>
"#,
    )
    .unwrap();
    let e = common::engine_in("sim: {world: empty.xml}\ncomponents:\n  - spawn_arm: {model: xacro/rover.urdf.xacro}\n    name: rover\n", root);
    assert_eq!(body_names(&e), vec!["base_link", "boom"]);
    let m = e.ctx.model();
    let g =
        (0..m.ffi().ngeom as usize).find(|&g| m.geom_bodyid()[g] as usize == 2).expect("boom geom");
    assert_eq!(m.geom_size()[g], [0.025, 0.025, 0.2]);
    let j = m.name_to_id(MjtObjBase::mjOBJ_JOINT, "boom_joint").unwrap();
    assert_eq!(m.jnt_range()[j], [-1.0, 1.0]);
}

#[test]
fn xacro_without_the_package_is_refused_with_the_install_hint() {
    let root = setup();
    let p = root.join("none.urdf.xacro");
    std::fs::write(&p, "<robot name=\"n\"/>").unwrap();
    let e = roqsim::spawn::urdf::expand_xacro(&p, "/nonexistent/python3").unwrap_err();
    let hint = format!(
        "expanding `{}` needs the PyPI package `xacro` importable by `/nonexistent/python3`: `/nonexistent/python3 -m pip install xacro` (or set ROQSIM_PYTHON to a Python that has it), or expand it yourself (`xacro {} > robot.urdf`) and spawn the .urdf",
        p.display(),
        p.display()
    );
    assert!(e.starts_with(&hint), "{e}");
    // A Python that runs but lacks the module gets the same hint (Debian's python3 has no xacro).
    if Path::new("/usr/bin/python3").exists() {
        let e = roqsim::spawn::urdf::expand_xacro(&p, "/usr/bin/python3").unwrap_err();
        assert!(
            e.starts_with("expanding `") && e.contains("/usr/bin/python3 -m pip install xacro"),
            "{e}"
        );
    }
}

fn one_link(mesh: &str) -> String {
    format!(
        r#"<robot name="r"><link name="base_link"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
<visual><geometry><mesh filename="{mesh}"/></geometry></visual></link></robot>"#
    )
}

#[test]
fn urdf_refusals_name_the_cause_and_the_fix() {
    let root = setup();
    let dir = root.join("bad");
    std::fs::create_dir_all(dir.join("meshes")).unwrap();
    let world = |file: &str| {
        format!("sim: {{world: ../empty.xml}}\ncomponents:\n  - spawn_arm: {{model: {file}}}\n    name: a\n")
    };
    let d = dir.display();
    // A mesh not found, with the paths searched.
    std::fs::write(dir.join("missing.urdf"), one_link("meshes/nope.stl")).unwrap();
    let t = common::refusal_in(&world("missing.urdf"), &dir);
    assert!(
        t.contains(&format!("model `{d}/missing.urdf`, link `base_link`: mesh `meshes/nope.stl` not found; searched {d}/meshes/nope.stl")),
        "{t}"
    );
    // An unresolved package, with the variables searched.
    std::fs::write(dir.join("nopkg.urdf"), one_link("package://no_such_pkg/meshes/x.stl")).unwrap();
    let t = common::refusal_in(&world("nopkg.urdf"), &dir);
    let ament = std::env::var("AMENT_PREFIX_PATH").unwrap();
    assert!(
        t.contains(&format!("model `{d}/nopkg.urdf`, link `base_link`: mesh `package://no_such_pkg/meshes/x.stl`: package `no_such_pkg` not found: searched AMENT_PREFIX_PATH={ament} (as <prefix>/share/no_such_pkg) and ROS_PACKAGE_PATH")),
        "{t}"
    );
    assert!(t.contains("source the workspace that installs it (`source install/setup.bash`) or add the folder holding it to ROS_PACKAGE_PATH"), "{t}");
    // The model itself through an unknown package.
    let t = common::refusal_in(&world("package://no_such_pkg/urdf/r.urdf"), &dir);
    assert!(
        t.contains("model: `package://no_such_pkg/urdf/r.urdf`: package `no_such_pkg` not found"),
        "{t}"
    );
    // A package found without the file: the paths searched.
    let t = common::refusal_in(&world("package://test_bot/urdf/gone.urdf"), &dir);
    assert!(
        t.contains(&format!("`package://test_bot/urdf/gone.urdf`: package `test_bot` has no file `urdf/gone.urdf`; searched {}/prefix/share/test_bot/urdf/gone.urdf", root.display())),
        "{t}"
    );
    // A mesh format MuJoCo cannot load, with the conversion.
    std::fs::write(dir.join("meshes/body.dae"), "<COLLADA/>").unwrap();
    std::fs::write(dir.join("dae.urdf"), one_link("meshes/body.dae")).unwrap();
    let t = common::refusal_in(&world("dae.urdf"), &dir);
    assert!(
        t.contains(&format!("model `{d}/dae.urdf`, link `base_link`: mesh `meshes/body.dae` is a .dae file, which MuJoCo cannot load (it reads .stl, .obj and .msh); convert it, e.g. `python3 -c \"import trimesh; trimesh.load('body.dae', force='mesh').export('body.obj')\"`, and point the URDF at body.obj")),
        "{t}"
    );
    // Joint types MuJoCo lacks.
    let two = |kind: &str, parent: &str| {
        format!(
            r#"<robot name="r"><link name="base_link"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
<link name="slider"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
<joint name="table_joint" type="{kind}"><parent link="{parent}"/><child link="slider"/><axis xyz="0 0 1"/></joint></robot>"#
        )
    };
    std::fs::write(dir.join("planar.urdf"), two("planar", "base_link")).unwrap();
    let t = common::refusal_in(&world("planar.urdf"), &dir);
    assert!(t.contains(&format!("model `{d}/planar.urdf`: joint `table_joint` is `planar`, a joint type MuJoCo lacks (its URDF reader would make three joints `table_joint_TX`, `table_joint_TY`, `table_joint_RZ` that /joint_states and TF would not match); model it as two prismatic joints and a revolute one through massless links")), "{t}");
    std::fs::write(dir.join("floating.urdf"), two("floating", "base_link")).unwrap();
    let t = common::refusal_in(&world("floating.urdf"), &dir);
    assert!(t.contains(&format!("model `{d}/floating.urdf`: joint `table_joint` is `floating` below link `base_link`, and MuJoCo allows a free joint only on a body of the world: a floating joint must have the parent link `world`, or spawn the link as its own robot")), "{t}");
    // A .urdf that holds MJCF.
    std::fs::write(dir.join("mjcf.urdf"), "<mujoco><worldbody/></mujoco>").unwrap();
    let t = common::refusal_in(&world("mjcf.urdf"), &dir);
    assert!(t.contains(&format!("model `{d}/mjcf.urdf`: its root element is <mujoco>, not <robot>: a .urdf file holds a URDF (an MJCF file ends in .xml)")), "{t}");
}

const ARM_WORLD: &str = "sim: {world: empty.xml}
components:
  - spawn_arm:
      model: arm/arm.urdf
      actuators: {add: [joint1, joint2, joint3, finger_joint], control: position, p: 200, d: 20}
    name: arm
    components:
      - arm_controller: {joints: [joint1, joint2, joint3], gripper_actuator: finger_joint, gripper_joint: finger_joint}
";

/// A configuration (joint2, joint3) where MuJoCo's own collision pipeline puts link3 in contact
/// with link1, searched on a grid.
fn contact_config(e: &Engine, a: &str, b: &str) -> Option<(f64, f64)> {
    let m = e.ctx.model();
    let ba = m.name_to_id(MjtObjBase::mjOBJ_BODY, a).unwrap() as i32;
    let bb = m.name_to_id(MjtObjBase::mjOBJ_BODY, b).unwrap() as i32;
    let j2 = m.jnt_qposadr()[m.name_to_id(MjtObjBase::mjOBJ_JOINT, "joint2").unwrap()] as usize;
    let j3 = m.jnt_qposadr()[m.name_to_id(MjtObjBase::mjOBJ_JOINT, "joint3").unwrap()] as usize;
    for i in 0..=36 {
        for k in 0..=48 {
            let (q2, q3) = (-1.8 + 0.1 * i as f64, -2.4 + 0.1 * k as f64);
            let mut d = e.ctx.data().clone();
            d.qpos_mut()[j2] = q2;
            d.qpos_mut()[j3] = q3;
            d.forward();
            let hit = d.contact().iter().any(|c| {
                let (g1, g2) = (c.geom[0] as usize, c.geom[1] as usize);
                let (x, y) = (m.geom_bodyid()[g1], m.geom_bodyid()[g2]);
                (x == ba && y == bb) || (x == bb && y == ba)
            });
            if hit {
                return Some((q2, q3));
            }
        }
    }
    None
}

#[test]
fn export_srdf_groups_the_arm_controller_and_samples_the_collision_matrix() {
    let root = setup();
    let mut e = common::engine_in(ARM_WORLD, root);
    let ent = e.ctx.entities.get("arm").unwrap().clone();
    let s = roqsim::export::srdf::export_srdf(&mut e.ctx, &ent, 2000, 0, None).unwrap();
    // Read back as XML: one arm group (a chain over exactly the controller's joints), the gripper.
    let doc = &s.text;
    assert!(doc.contains("<group name=\"arm\">\n    <chain base_link=\"base_link\" tip_link=\"link3\"/>\n  </group>"), "{doc}");
    assert!(doc.contains("<group name=\"gripper\">\n    <link name=\"tool0\"/>\n    <link name=\"finger\"/>\n    <joint name=\"finger_joint\"/>\n  </group>"), "{doc}");
    assert_eq!(s.groups.len(), 1);
    assert_eq!(s.groups[0].joints, vec!["joint1", "joint2", "joint3"]);
    assert!(s.groups[0].chain);
    assert!(doc.contains("<end_effector name=\"arm_ee\" parent_link=\"link3\" group=\"gripper\" parent_group=\"arm\"/>"), "{doc}");
    assert!(
        doc.contains(
            "<group_state name=\"home\" group=\"arm\">\n    <joint name=\"joint1\" value=\"0\"/>"
        ),
        "{doc}"
    );
    // A welded arm has no virtual joint.
    assert!(!doc.contains("virtual_joint"), "{doc}");
    let reason = |a: &str, b: &str| s.disabled.get(&(a.to_string(), b.to_string())).copied();
    assert_eq!(reason("base_link", "link1"), Some("Adjacent"));
    assert_eq!(reason("link1", "link2"), Some("Adjacent"));
    assert_eq!(reason("link2", "link3"), Some("Adjacent"));
    // finger hangs from link3 through tool0, which has no collision geometry: adjacent to link3.
    assert_eq!(reason("finger", "link3"), Some("Adjacent"));
    // A pair MuJoCo puts in contact in some configuration is not disabled.
    // Pairs MuJoCo's own collision pipeline puts in contact in some configuration are kept.
    for (a, b) in
        [("link1", "link3"), ("base_link", "link3"), ("base_link", "finger"), ("finger", "link1")]
    {
        let (q2, q3) = contact_config(&e, a, b).unwrap_or_else(|| panic!("{a}/{b} never touch"));
        assert!(reason(a, b).is_none(), "{a}/{b} collide at joint2 {q2}, joint3 {q3}:\n{doc}");
    }
    // link2 never reaches the base: sampled as never in collision (and MuJoCo agrees on the grid).
    assert!(contact_config(&e, "base_link", "link2").is_none());
    assert_eq!(reason("base_link", "link2"), Some("Never"));
    assert_eq!(reason("finger", "link2"), Some("Never"));
    assert_eq!(s.disabled.len(), 6);
    assert_eq!(s.samples, 2000);
    assert!(doc.contains("from 2000 random configurations (seed 0)"), "{doc}");
    // The same file every run.
    let again = roqsim::export::srdf::export_srdf(&mut e.ctx, &ent, 2000, 0, None).unwrap();
    assert_eq!(again.text, s.text);
}

#[test]
fn export_moveit_names_the_served_actions_and_the_declared_controllers() {
    let root = setup();
    let mut e = common::engine_in(ARM_WORLD, root);
    let ent = e.ctx.entities.get("arm").unwrap().clone();
    let opts = roqsim::export::moveit::MoveitOptions { samples: 200, ..Default::default() };
    let files = roqsim::export::moveit::export_moveit(&mut e.ctx, &ent, &opts).unwrap();
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
    let get = |n: &str| files.iter().find(|(f, _)| f == n).unwrap().1.clone();
    assert_eq!(get("arm.urdf"), ARM);
    let y = |n: &str| -> serde_norway::Value { serde_norway::from_str(&get(n)).unwrap() };
    // The actions the ROS plan serves, split into MoveIt's controller name and action namespace.
    let plan =
        roqsim::ros::plan::build(&e.ctx.interface, &roqsim::ros::config::BridgeConfig::default())
            .unwrap();
    let mut served: Vec<String> = plan
        .inputs
        .iter()
        .filter(|i| matches!(i.kind, roqsim::ros::plan::InKind::Action { .. }))
        .map(|i| i.name.clone())
        .collect();
    served.sort();
    assert_eq!(
        served,
        vec!["/arm_controller/follow_joint_trajectory", "/gripper_controller/gripper_cmd"]
    );
    let mc = y("moveit_controllers.yaml");
    let sc = &mc["moveit_simple_controller_manager"];
    let listed: Vec<String> = sc["controller_names"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let mut from_yaml: Vec<String> = listed
        .iter()
        .map(|c| format!("/{c}/{}", sc[c.as_str()]["action_ns"].as_str().unwrap()))
        .collect();
    from_yaml.sort();
    assert_eq!(from_yaml, served);
    assert_eq!(sc["arm_controller"]["type"].as_str(), Some("FollowJointTrajectory"));
    assert_eq!(sc["gripper_controller"]["type"].as_str(), Some("GripperCommand"));
    // Joints in the order /joint_states (the arm controller) reports them.
    let arm = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::manipulation::arm_controller::ArmHandle>("arm:arm")
        .unwrap()
        .clone();
    let js: Vec<String> = sc["arm_controller"]["joints"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(js, arm.names());
    assert_eq!(sc["gripper_controller"]["joints"][0].as_str(), Some("finger_joint"));
    // kinematics: KDL on the arm group; limits: the URDF's velocities.
    let k = y("kinematics.yaml");
    assert_eq!(
        k["arm"]["kinematics_solver"].as_str(),
        Some("kdl_kinematics_plugin/KDLKinematicsPlugin")
    );
    let jl = y("joint_limits.yaml");
    assert_eq!(jl["joint_limits"]["joint3"]["max_velocity"].as_f64(), Some(3.0));
    assert_eq!(jl["joint_limits"]["finger_joint"]["max_velocity"].as_f64(), Some(0.1));
    assert_eq!(jl["joint_limits"]["joint1"]["has_velocity_limits"].as_bool(), Some(true));
    // ros2_controllers mirrors the declared controllers.
    let rc = y("ros2_controllers.yaml");
    let cm = &rc["controller_manager"]["ros__parameters"];
    assert_eq!(
        cm["arm_controller"]["type"].as_str(),
        Some("joint_trajectory_controller/JointTrajectoryController")
    );
    assert_eq!(
        cm["gripper_controller"]["type"].as_str(),
        Some("position_controllers/GripperActionController")
    );
    assert_eq!(
        cm["joint_state_broadcaster"]["type"].as_str(),
        Some("joint_state_broadcaster/JointStateBroadcaster")
    );
    assert_eq!(rc["arm_controller"]["ros__parameters"]["joints"].as_sequence().unwrap().len(), 3);
    assert_eq!(rc["gripper_controller"]["ros__parameters"]["joint"].as_str(), Some("finger_joint"));
    // The launch file is Python that compiles, and reads the files written beside it.
    let dir = root.join("moveit_out");
    std::fs::create_dir_all(&dir).unwrap();
    for (n, t) in &files {
        std::fs::write(dir.join(n), t).unwrap();
    }
    let o = Command::new(common::venv_python())
        .args(["-m", "py_compile"])
        .arg(dir.join("move_group.launch.py"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let l = get("move_group.launch.py");
    assert!(
        l.contains("_text(\"arm.urdf\")")
            && l.contains("_text(\"arm.srdf\")")
            && l.contains("namespace=\"\""),
        "{l}"
    );
}

#[test]
fn roqsim_export_srdf_and_moveit_write_their_files() {
    let root = setup();
    let world = root.join("arm_world.yaml");
    std::fs::write(&world, ARM_WORLD).unwrap();
    let bin = env!("CARGO_BIN_EXE_roqsim");
    let o = Command::new(bin)
        .args(["export", "srdf"])
        .arg(&world)
        .args(["--robot", "arm", "--samples", "300"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("from 300 random configurations (seed 0)"), "{text}");
    assert!(text.contains("<chain base_link=\"base_link\" tip_link=\"link3\"/>"), "{text}");
    let dir = root.join("cli_moveit");
    let o = Command::new(bin)
        .args(["export", "moveit"])
        .arg(&world)
        .args(["--robot", "arm", "--samples", "300", "-o"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in [
        "arm.urdf",
        "arm.srdf",
        "joint_limits.yaml",
        "kinematics.yaml",
        "ompl_planning.yaml",
        "moveit_controllers.yaml",
        "ros2_controllers.yaml",
        "move_group.launch.py",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    // A robot without an arm_controller has nothing for MoveIt to execute against.
    let w2 = root.join("bare_world.yaml");
    std::fs::write(&w2, "sim: {world: empty.xml}\ncomponents:\n  - spawn_arm: {model: arm/arm.urdf}\n    name: arm\n").unwrap();
    let o = Command::new(bin)
        .args(["export", "moveit"])
        .arg(&w2)
        .args(["--robot", "arm", "-o"])
        .arg(root.join("x"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    // The log says the URDF has no actuators, and how to create them.
    assert!(err.contains("spawn_arm `arm`: model `arm/arm.urdf` is a URDF and declares no actuators; to drive its joints state `actuators: {add: [<joints>], control: position | velocity | effort, ...}`"), "{err}");
    assert_eq!(
        err.trim().lines().last().unwrap(),
        "error: export moveit `arm`: robot `arm` serves no FollowJointTrajectory action: give it an `arm_controller` (MoveIt executes trajectories through one)"
    );
}

#[test]
fn the_urdf_export_carries_the_static_frames_sensor_plugins_publish() {
    let mut e = common::engine_in(
        "components:\n  - spawn_robot: {model: turtlebot4}\n    name: robot\n",
        &common::root().join("worlds"),
    );
    let ent = e.ctx.entities.get("robot").unwrap().clone();
    let plain = roqsim::export::urdf::export_urdf(e.ctx.model(), &ent).unwrap();
    let full = roqsim::export::urdf::with_static_frames(&e.ctx, &ent, &plain);
    let (links, joints) = roqsim::spawn::urdf::tree(&full).unwrap();
    let (plain_links, _) = roqsim::spawn::urdf::tree(&plain).unwrap();
    assert!(!plain_links.contains(&"imu_link".to_string()));
    for f in ["imu_link", "rplidar_link"] {
        assert!(links.contains(&f.to_string()), "{f} missing:\n{full}");
        let j = joints.iter().find(|j| j.child == f).unwrap();
        assert_eq!(j.kind, "fixed");
        assert!(links.contains(&j.parent), "{f} hangs from {}", j.parent);
    }
    // robot_description gains them at the first step (the frames are published at reset).
    let rd = e.ctx.interface.all().iter().position(|ep| ep.name == "robot_description").unwrap();
    e.step().unwrap();
    match e.ctx.interface.get(rd).latest() {
        Some((Payload::String(s), _)) => assert_eq!(s, &full),
        other => panic!("{other:?}"),
    }
}
