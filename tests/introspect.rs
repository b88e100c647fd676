//! Worlds that explain themselves: `roqsim scenes inputs`, `roqsim scenes describe`,
//! `roqsim catalog`, run as a caller runs them (the binary; one line of JSON on stdout).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

mod common;
use common::{root, write, Out};

fn roqsim(args: &[&str]) -> Out {
    let o = Command::new(env!("CARGO_BIN_EXE_roqsim"))
        .args(args)
        .env_remove("AMENT_PREFIX_PATH")
        .env("ROQSIM_LOG", "error")
        .output()
        .unwrap();
    Out::from(o)
}

fn canon(p: &Path) -> String {
    p.canonicalize().unwrap().display().to_string()
}

const TETRA_OBJ: &str =
    "v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";

/// A world with a floorplan JSON and two copies of a meshed prop (one mesh, one texture).
fn meshed_world(dir: &Path) -> PathBuf {
    write(
        dir,
        "plan.json",
        r#"{"lines": [{"id": 0, "x0_m": 0.0, "y0_m": 0.0, "x1_m": 4.0, "y1_m": 0.0}], "doors": []}"#,
    );
    write(dir, "props/crate/meshes/crate.obj", TETRA_OBJ);
    // A 2x2 RGB PNG.
    let png: [u8; 73] = [
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0xfd,
        0xd4, 0x9a, 0x73, 0x00, 0x00, 0x00, 0x10, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x38,
        0x31, 0x2d, 0x0a, 0x88, 0x18, 0x20, 0x14, 0x00, 0x31, 0xe6, 0x06, 0xe1, 0xd0, 0xb2, 0xcb,
        0x80, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];
    std::fs::create_dir_all(dir.join("props/crate/textures")).unwrap();
    std::fs::write(dir.join("props/crate/textures/wood.png"), png).unwrap();
    write(
        dir,
        "props/crate/crate.xml",
        "<!-- A meshed crate for tests. -->\n<mujoco model=\"crate\"><compiler meshdir=\"meshes\" texturedir=\"textures\"/>\
         <asset><mesh name=\"crate\" file=\"crate.obj\"/><texture name=\"wood\" type=\"2d\" file=\"wood.png\"/>\
         <material name=\"wood\" texture=\"wood\"/></asset>\
         <worldbody><body name=\"crate\"><geom type=\"mesh\" mesh=\"crate\" material=\"wood\" mass=\"0.3\"/></body></worldbody></mujoco>",
    );
    write(dir, "props/crate/crate.manifest.yaml", "license: original\n");
    write(
        dir,
        "world.yaml",
        "components:\n  - floorplan: {floorplan: plan.json}\n\
         \x20 - spawn_model: {model: props/crate/crate.xml, prefix: c1_, pose: {position: {x: 1.0, y: 1.0}}}\n    name: c1\n\
         \x20 - spawn_model: {model: props/crate/crate.xml, prefix: c2_, pose: {position: {x: 2.0, y: 1.0}}}\n    name: c2\n",
    )
}

#[test]
fn inputs_list_each_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let w = meshed_world(dir.path());
    let out = roqsim(&["scenes", "inputs", w.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let d = dir.path();
    assert_eq!(
        out.json(),
        json!({
            "world": canon(&w),
            "packaged": false,
            "inputs": [
                canon(&w),
                canon(&d.join("plan.json")),
                canon(&d.join("props/crate/crate.xml")),
                canon(&d.join("props/crate/meshes/crate.obj")),
                canon(&d.join("props/crate/textures/wood.png")),
                canon(&d.join("props/crate/crate.manifest.yaml")),
            ]
        })
    );
    // The world compiles from exactly those files.
    let out = roqsim(&["check", w.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn inputs_follow_the_extends_chain_and_the_parents_scene() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "cell/scene.xml", "<mujoco><worldbody><geom name=\"floor\" type=\"plane\" size=\"2 2 0.1\"/></worldbody></mujoco>");
    let parent = write(
        dir.path(),
        "cell/cell.yaml",
        "sim: {world: scene.xml}\ncomponents:\n  - dummy: {}\n",
    );
    let child = write(dir.path(), "runs/child.yaml", "extends: ../cell/cell.yaml\n");
    let out = roqsim(&["scenes", "inputs", child.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.json()["inputs"],
        json!([canon(&parent), canon(&child), canon(&dir.path().join("cell/scene.xml"))])
    );
}

#[test]
fn inputs_best_effort_and_require_complete() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "plan.json", r#"{"lines": [], "doors": []}"#);
    let w = write(
        dir.path(),
        "w.yaml",
        "extends: missing_parent.yaml\ncomponents:\n  - warp_drive: {data: plan.json}\n",
    );
    // Best effort: what resolved, exit 0.
    let out = roqsim(&["scenes", "inputs", w.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.json()["inputs"], json!([canon(&w), canon(&dir.path().join("plan.json"))]));
    // --require-complete: nothing on stdout, every part it gave up on on stderr.
    let out = roqsim(&["scenes", "inputs", w.to_str().unwrap(), "--require-complete"]);
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "");
    let missing = dir.path().join("missing_parent.yaml");
    assert!(
        out.stderr.contains(&format!(
            "  - extends: parent world `missing_parent.yaml` not found: `{}` is not a file",
            missing.display()
        )),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("  - the world does not load: "), "{}", out.stderr);
    assert!(
        out.stderr.contains("  - components.warp_drive: plugin `warp_drive` is not registered in this binary, so its files cannot be asked for"),
        "{}",
        out.stderr
    );
    // An absent optional file is not a part it gave up on.
    let w2 = write(dir.path(), "w2.yaml", "components:\n  - dummy: {}\n");
    let out = roqsim(&["scenes", "inputs", w2.to_str().unwrap(), "--require-complete"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.json()["inputs"], json!([canon(&w2)]));
}

/// The issue's example: a robot that brings three components from its manifest lists them with
/// origin manifest and their config paths.
#[test]
fn describe_lists_manifest_components_with_origin_and_paths() {
    let w = root().join("worlds/turtlebot_empty.yaml");
    let out = roqsim(&["scenes", "describe", w.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let j = out.json();
    assert_eq!(
        j["addresses"],
        json!([
            "robot",
            "robot.diff_drive",
            "robot.rplidar",
            "robot.rplidar.lidar",
            "robot.imu",
            "robot.cliff_side_left",
            "robot.cliff_side_right",
            "robot.cliff_front_left",
            "robot.cliff_front_right",
            "robot.ir_intensity_side_left",
            "robot.ir_intensity_left",
            "robot.ir_intensity_front_left",
            "robot.ir_intensity_front_center_left",
            "robot.ir_intensity_front_center_right",
            "robot.ir_intensity_front_right",
            "robot.ir_intensity_right"
        ])
    );
    let plugins = j["plugins"].as_array().unwrap();
    let row = |a: &str| plugins.iter().find(|p| p["address"] == a).unwrap().clone();
    assert_eq!(
        row("robot"),
        json!({"address": "robot", "ref": "spawn_robot", "name": "robot", "entity": null,
               "enabled": true, "origin": "document",
               "paths": ["components.robot.model", "components.robot.pose.position.x",
                         "components.robot.pose.position.y", "components.robot.pose.orientation.yaw"]})
    );
    let lidar = row("robot.rplidar.lidar");
    assert_eq!(lidar["ref"], "lidar");
    assert_eq!(lidar["name"], Value::Null);
    assert_eq!(lidar["entity"], "robot.rplidar");
    assert_eq!(lidar["origin"], "manifest");
    let paths: Vec<&str> =
        lidar["paths"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    assert!(paths.contains(&"components.robot.rplidar.lidar.rays"), "{paths:?}");
    assert!(paths.contains(&"components.robot.rplidar.lidar.max_range"), "{paths:?}");
    for a in ["robot.diff_drive", "robot.rplidar", "robot.imu"] {
        assert_eq!(row(a)["origin"], "manifest", "{a}");
        assert_eq!(row(a)["entity"], "robot", "{a}");
    }
    assert!(row("robot.diff_drive")["paths"]
        .as_array()
        .unwrap()
        .contains(&json!("components.robot.diff_drive.wheel_radius")));
    // The free half only: nothing compiled.
    assert_eq!(j["entities"], Value::Null);
    assert_eq!(j["overridable"]["targets"], Value::Null);
    let fields: Vec<&str> = j["overridable"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        ["geom_friction", "geom_contype", "geom_conaffinity", "actuator_forcerange", "body_mass"]
    );
    assert_eq!(j["dropped_transport"], json!([]));
    assert_eq!(j["errors"], Value::Null);
}

#[test]
fn describe_entities_and_overridable_targets_from_one_build() {
    let w = root().join("worlds/ur_pick.yaml");
    let out = roqsim(&[
        "scenes",
        "describe",
        w.to_str().unwrap(),
        "--entities",
        "--overridable",
        "ur_left_pad*",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let j = out.json();
    assert_eq!(j["entities"], json!(["pick_box", "table", "ur"]));
    let t = &j["overridable"]["targets"];
    let geoms = t["geom"].as_array().unwrap();
    assert!(!geoms.is_empty(), "{t}");
    for g in geoms {
        assert!(g["name"].as_str().unwrap().starts_with("ur_left_pad"), "{g}");
        assert_eq!(g["geom_priority"], 1, "{g}");
        assert_eq!(g["geom_friction"].as_array().unwrap().len(), 3);
    }
}

#[test]
fn describe_with_override_file_sees_the_overridden_world() {
    let dir = tempfile::tempdir().unwrap();
    let w = write(
        dir.path(),
        "w.yaml",
        "components:\n  - box: {size: [0.2, 0.2, 0.2], pose: {position: {x: 1.0}}}\n    name: obstacle_0\n\
         \x20 - box: {size: [0.2, 0.2, 0.2], pose: {position: {x: 2.0}}}\n    name: obstacle_1\n    enabled: false\n",
    );
    let ov =
        write(dir.path(), "run.overrides.yaml", "components:\n  obstacle_1:\n    enabled: true\n");
    let out = roqsim(&["scenes", "describe", w.to_str().unwrap(), "--entities"]);
    assert_eq!(out.json()["entities"], json!(["obstacle_0"]));
    let out = roqsim(&[
        "scenes",
        "describe",
        w.to_str().unwrap(),
        "--entities",
        "--override",
        ov.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.json()["entities"], json!(["obstacle_0", "obstacle_1"]));
    // An address the world does not have is refused, as at load: nothing on stdout.
    let out = roqsim(&[
        "scenes",
        "describe",
        w.to_str().unwrap(),
        "--set",
        "components.obstacle_9.size=[1,1,1]",
    ]);
    assert_eq!(out.code, 2);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("components.obstacle_9"), "{}", out.stderr);
}

#[test]
fn describe_partial_reply_when_only_the_build_fails() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "bad/bad.xml", "<mujoco><asset><mesh name=\"m\" file=\"gone.obj\"/></asset><worldbody><body name=\"b\"><geom type=\"mesh\" mesh=\"m\"/></body></worldbody></mujoco>");
    let w = write(
        dir.path(),
        "w.yaml",
        "components:\n  - spawn_model: {model: bad/bad.xml}\n    name: prop\n",
    );
    let out = roqsim(&["scenes", "describe", w.to_str().unwrap(), "--entities"]);
    assert_eq!(out.code, 1);
    let j = out.json();
    assert_eq!(j["addresses"], json!(["prop"]));
    assert_eq!(j["entities"], Value::Null);
    let build = j["errors"]["build"].as_str().unwrap();
    assert!(build.contains("mesh file `gone.obj` of model"), "{build}");
    // Without the build-fed flags the same world is fully answered.
    let out = roqsim(&["scenes", "describe", w.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // A world that does not load prints nothing.
    let w = write(dir.path(), "w2.yaml", "components:\n  - dummy: {size: -1}\n");
    let out = roqsim(&["scenes", "describe", w.to_str().unwrap()]);
    assert_eq!(out.code, 2);
    assert_eq!(out.stdout, "");
}

#[cfg(not(feature = "ros"))]
#[test]
fn describe_drops_transport_from_the_build_and_keeps_it_listed() {
    let dir = tempfile::tempdir().unwrap();
    let w = write(
        dir.path(),
        "w.yaml",
        "components:\n  - box: {size: [0.2, 0.2, 0.2], pose: {position: {x: 1.0}}}\n    name: obstacle_0\n  - ros2_bridge: {}\n  - sim_interfaces: {}\n",
    );
    let out = roqsim(&["scenes", "describe", w.to_str().unwrap(), "--entities"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "describing the scene without transport: dropped ros2_bridge, sim_interfaces"
        ),
        "{}",
        out.stderr
    );
    let j = out.json();
    assert_eq!(j["dropped_transport"], json!(["ros2_bridge", "sim_interfaces"]));
    assert_eq!(j["entities"], json!(["obstacle_0"]));
    assert_eq!(j["addresses"], json!(["obstacle_0", "ros2_bridge", "sim_interfaces"]));
}

#[test]
fn catalog_model_lists_the_arms_actuators_with_their_joints() {
    let out = roqsim(&["catalog", "model", "ur5e"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let j = out.json();
    let acts: Vec<(String, String)> = j["actuators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (a["name"].as_str().unwrap().to_string(), a["joint"].as_str().unwrap().to_string())
        })
        .collect();
    let want: Vec<(String, String)> =
        ["shoulder_pan", "shoulder_lift", "elbow", "wrist_1", "wrist_2", "wrist_3"]
            .iter()
            .map(|n| (n.to_string(), format!("{n}_joint")))
            .collect();
    assert_eq!(acts, want);
    assert_eq!(j["license"], "original");
    assert_eq!(j["headline"], "Universal Robots UR5e-class 6-DoF arm for MuJoCo, built from UR's published DH parameters with primitive collision geoms.");
    assert_eq!(
        j["frames"],
        json!([{"name": "base", "parent": "base_link"}, {"name": "flange", "parent": "tool0"}])
    );
    assert_eq!(
        j["components"],
        json!([{"ref": "arm_controller", "name": null, "label": "arm_controller"}])
    );
    let sites: Vec<&str> =
        j["sites"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    assert!(sites.contains(&"attachment_site") && sites.contains(&"fts_site"), "{sites:?}");
    assert_eq!(j["bodies"].as_array().unwrap()[0], "base_link");
    // An unknown model names what exists.
    let out = roqsim(&["catalog", "model", "ur99"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .starts_with("error: unknown model `ur99`; bundled models: ackermann_car, husky_a200"),
        "{}",
        out.stderr
    );
}

#[test]
fn catalog_models_worlds_plugins() {
    let j = roqsim(&["catalog", "models"]).json();
    let models = j["models"].as_array().unwrap();
    let ur = models.iter().find(|m| m["name"] == "ur5e").unwrap();
    assert_eq!(ur["ref"], "roqsim:ur5e");
    assert_eq!(ur["provider"], "roqsim");
    assert_eq!(ur["license"], "original");
    assert_eq!(ur["path"], canon(&root().join("models/ur5e/ur5e.xml")));
    for m in models {
        assert!(
            m["headline"].as_str().is_some_and(|h| h.ends_with('.')),
            "model without a headline: {m}"
        );
        assert!(m["license"].is_string(), "model without a licence: {m}");
    }
    let j = roqsim(&["catalog", "worlds"]).json();
    let demo =
        j["worlds"].as_array().unwrap().iter().find(|w| w["name"] == "demo").unwrap().clone();
    assert_eq!(demo["ref"], "roqsim:demo");
    assert_eq!(
        demo["headline"],
        "The framework demo: the built-in empty room and five dummy plugins, each dropping a box."
    );
    // Headlines are the first full sentence of the leading comment, joined across lines.
    let mm =
        j["worlds"].as_array().unwrap().iter().find(|w| w["name"] == "mobile_manipulator").unwrap();
    assert_eq!(
        mm["headline"],
        "A mobile manipulator: a UR5e-class arm with a parallel gripper mounted on a Husky A200-class skid-steer base (issue 6)."
    );
    for m in models {
        assert_eq!(m["errors"], json!([]), "{m}");
    }
    let j = roqsim(&["catalog", "plugins"]).json();
    let dd = j["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "diff_drive")
        .unwrap()
        .clone();
    assert_eq!(dd["provider"], "roqsim");
}

#[test]
fn help_lists_every_verb_on_one_line() {
    let out = roqsim(&["--help"]);
    assert_eq!(out.code, 0);
    for verb in ["sim", "check", "plugins", "scenes", "catalog", "help"] {
        let lines: Vec<&str> = out
            .stdout
            .lines()
            .filter(|l| l.trim_start().starts_with(&format!("{verb} ")))
            .collect();
        assert_eq!(lines.len(), 1, "verb `{verb}` in:\n{}", out.stdout);
    }
}

fn roqsim_with(args: &[&str], env: &[(&str, &str)], stdout: std::process::Stdio) -> Out {
    let mut c = Command::new(env!("CARGO_BIN_EXE_roqsim"));
    c.args(args).env_remove("AMENT_PREFIX_PATH").env("ROQSIM_LOG", "error").stdout(stdout);
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    Out::from(o)
}

const PROP_XML: &str =
    "<!-- A test prop. -->\n<mujoco model=\"prop\"><worldbody><body name=\"prop_base\">\
                        <geom type=\"box\" size=\"0.1 0.1 0.1\"/></body></worldbody></mujoco>";

/// A prop whose manifest borrows from a provider that is not installed: `--require-complete`
/// fails naming the part (its borrowed meshes would be left out), once.
#[test]
fn inputs_require_complete_names_a_props_broken_manifest() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m/prop.xml", PROP_XML);
    let man = write(dir.path(), "m/prop.manifest.yaml", "license: MIT\nassets: nosuchprovider\n");
    let w = write(
        dir.path(),
        "w.yaml",
        "components:\n  - spawn_model: {model: m/prop.xml}\n    name: prop\n",
    );
    let out = roqsim(&["scenes", "inputs", w.to_str().unwrap(), "--require-complete"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.stdout, "");
    let want = format!(
        "  - the world does not load: components.prop.model: {}: assets: `assets:` borrows from `nosuchprovider`, which \
         is no installed model provider: use `roqsim` or a package with share/nosuchprovider/models on AMENT_PREFIX_PATH\n",
        canon(&man)
    );
    assert!(out.stderr.ends_with(&want), "{}", out.stderr);
    assert_eq!(out.stderr.matches("  - ").count(), 1, "{}", out.stderr);
    // A failing extends is listed once, not again under "the world does not load".
    let c = write(dir.path(), "c.yaml", "extends: nope.yaml\n");
    let out = roqsim(&["scenes", "inputs", c.to_str().unwrap(), "--require-complete"]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        format!(
            "error: the inputs of `{}` are incomplete; gave up on:\n  - extends: parent world `nope.yaml` not found: `{}` \
             is not a file (a path resolves against this world's folder; a bundled world is `roqsim:<name>`)\n",
            c.display(),
            dir.path().join("nope.yaml").display()
        )
    );
}

/// A model whose manifest does not load is reported with its error, its licence still read.
#[test]
fn catalog_models_reports_a_broken_manifest() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "prop/prop.xml", PROP_XML);
    let man = write(dir.path(), "prop/prop.manifest.yaml", "license: MIT\ncolour: blue\n");
    let root = dir.path().to_str().unwrap();
    let out = roqsim_with(
        &["catalog", "models"],
        &[("ROQSIM_MODEL_PATH", root)],
        std::process::Stdio::piped(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let j = out.json();
    let prop =
        j["models"].as_array().unwrap().iter().find(|m| m["ref"] == "roqsim:prop").unwrap().clone();
    let err = format!(
        "{}: colour: unknown manifest key; roqsim acts on license, source, rest_height, frame_id, camera_name, frames, components, \
         assets, home and nothing else (a key that is not acted on would be silently ignored)",
        canon(&man)
    );
    assert_eq!(prop["license"], "MIT");
    assert_eq!(prop["errors"], json!([err]));
    assert!(
        out.stderr.contains(&format!("warning: model `roqsim:prop`: {err}\n")),
        "{}",
        out.stderr
    );
}

/// JSON answers never panic on a stdout that cannot take them: a closed pipe ends quietly with
/// 141, a full device is an error with exit 1.
#[test]
fn json_answers_on_a_closed_or_full_stdout() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = roqsim_with(&["catalog", "plugins"], &[], full.into());
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "error: cannot write the answer to stdout: No space left on device (os error 28)\n"
    );
    for args in [
        &["catalog", "plugins"][..],
        &["scenes", "inputs", "roqsim:warehouse"],
        &["plugins", "list"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader); // closed before the process starts: its first write meets a broken pipe
        let out = roqsim_with(args, &[], writer.into());
        assert_eq!(out.code, 141, "{args:?}: {}", out.stderr);
        assert_eq!(out.stderr, "", "{args:?}");
    }
}

#[test]
fn refusals_name_what_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = roqsim(&["catalog", "model", dir.path().to_str().unwrap()]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        format!(
            "error: model `{}` is a directory: name the model's MJCF or URDF file in it\n",
            dir.path().display()
        )
    );
    let out = roqsim(&["scenes", "inputs", "roqsim:"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.starts_with(
            "error: world `roqsim:` names no world: write `roqsim:<world>` (bundled: demo, "
        ),
        "{}",
        out.stderr
    );
    for (glob, want) in [
        ("[", "error: --overridable `[` is not a glob pattern (invalid range pattern at character 1); `*` matches any run, `?` one character, `[abc]` one of a set (close every `[`)\n"),
        ("[a-", "error: --overridable `[a-` is not a glob pattern (invalid range pattern at character 1); `*` matches any run, `?` one character, `[abc]` one of a set (close every `[`)\n"),
        ("", "error: --overridable: the pattern is empty; give a glob over geom, body and actuator names (`gripper_*`, or `*` for every one)\n"),
    ] {
        let out = roqsim(&["scenes", "describe", "roqsim:demo", "--overridable", glob]);
        assert_eq!((out.code, out.stdout.as_str(), out.stderr.as_str()), (2, "", want));
    }
}

/// The walk reads MJCF as MuJoCo does: single-quoted attributes, an `<include>` naming a file
/// that includes meshes, an `<asset><model file=…>` (an MJCF attached with `<attach>`); and a
/// URDF's `<mesh filename=…>`. Each was missed before (found by review: a campaign resumed over
/// an edited mesh, and `sim --summary` overwrote one).
#[test]
fn inputs_follow_single_quotes_asset_models_and_urdf_meshes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "m/meshes/a.obj", TETRA_OBJ);
    write(d, "m/meshes/b.obj", TETRA_OBJ);
    write(d, "m/parts.xml", "<mujoco><asset><mesh name='b' file='meshes/b.obj'/></asset></mujoco>");
    write(d, "m/sub.xml", "<mujoco model='sub'><worldbody><body name='s'><geom size='0.1'/></body></worldbody></mujoco>");
    write(
        d,
        "m/prop.xml",
        "<mujoco model='prop'><include file='parts.xml'/>\
         <asset><mesh name='a' file='meshes/a.obj'/><model name='sub' file='sub.xml'/></asset>\
         <worldbody><body name='p'><geom type='mesh' mesh='a'/></body></worldbody></mujoco>",
    );
    write(d, "m/prop.manifest.yaml", "license: original\n");
    write(d, "u/meshes/body.obj", TETRA_OBJ);
    write(
        d,
        "u/bot.urdf",
        "<robot name='bot'><link name='base'><visual><geometry>\
         <mesh filename=\"meshes/body.obj\"/></geometry></visual></link></robot>",
    );
    let w = write(
        d,
        "world.yaml",
        "components:\n  - spawn_model: {model: m/prop.xml}\n    name: p\n\
         \x20 - spawn_robot: {model: u/bot.urdf}\n    name: r\n",
    );
    let out = roqsim(&["scenes", "inputs", w.to_str().unwrap()]);
    let inputs: Vec<String> = out.json()["inputs"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", out.stderr))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    for f in [
        "m/prop.xml",
        "m/parts.xml",
        "m/meshes/a.obj",
        "m/meshes/b.obj",
        "m/sub.xml",
        "u/bot.urdf",
        "u/meshes/body.obj",
    ] {
        assert!(inputs.contains(&canon(&d.join(f))), "{f} missing from {inputs:?}\n{}", out.stderr);
    }
}
