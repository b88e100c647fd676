//! What a campaign's resume checks its inputs against: every file `roqsim scenes inputs` lists
//! for its worlds (an MJCF world's `<include>`s and meshes among them), keyed `package://` for a
//! packaged world so that a campaign over an installed world resumes. ROS-free; each test runs
//! the real binary and reads what it wrote.

use std::path::Path;
use std::process::Command;

use serde_json::Value as Json;

mod common;
use common::{snapshot, write, Out};

const BIN: &str = env!("CARGO_BIN_EXE_roqsim");

const TETRA_OBJ: &str =
    "v 0 0 0\nv 0.1 0 0\nv 0 0 0.1\nv 0 0.1 0\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";

/// An MJCF scene that includes `parts.xml`, whose body is the mesh `wedge.obj`.
const SCENE: &str = "<mujoco model=\"cell\"><include file=\"parts.xml\"/>\
    <worldbody><geom name=\"floor\" type=\"plane\" size=\"5 5 0.1\"/></worldbody></mujoco>";
const PARTS: &str = "<mujoco><asset><mesh name=\"wedge\" file=\"wedge.obj\"/></asset>\
    <worldbody><body name=\"wedge\" pos=\"0 0 0.5\"><freejoint/>\
    <geom type=\"mesh\" mesh=\"wedge\" mass=\"0.2\"/></body></worldbody></mujoco>";

fn roqsim(args: &[&str], cwd: &Path, env: &[(&str, String)]) -> Out {
    let mut c = Command::new(BIN);
    c.args(args).current_dir(cwd);
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    Out::from(o)
}

fn run_campaign(d: &Path, env: &[(&str, String)]) -> Out {
    roqsim(&["campaign", "run", "campaign.yaml", "-o", "out", "--jobs", "2", "-q"], d, env)
}

fn inputs(out: &Path) -> serde_json::Map<String, Json> {
    let r: Json =
        serde_json::from_str(&std::fs::read_to_string(out.join("resolved.json")).unwrap()).unwrap();
    r["inputs"].as_object().unwrap().clone()
}

fn refusal(file: &str) -> String {
    format!(
        "error: -o out: cannot resume: the input file {file} changed since the trials ran (its \
         content hash differs); its trials would sit in one table with trials of other inputs: \
         choose a new folder (-o), or delete this one to start over"
    )
}

const RESUMED: &str = "2 trials: 0 ran (0 ok, 0 not), 2 skipped as already run";

#[test]
fn an_edited_include_or_mesh_of_the_mjcf_world_refuses_the_resume() {
    let d = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap();
    write(d.path(), "cell.yaml", "sim: {world: scene.xml, timestep: 0.002}\n");
    write(d.path(), "scene.xml", SCENE);
    write(d.path(), "parts.xml", PARTS);
    write(d.path(), "wedge.obj", TETRA_OBJ);
    write(d.path(), "campaign.yaml", "world: cell.yaml\nrepetitions: 2\nlimits: {steps: 10}\n");
    let r = run_campaign(d.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = d.path().join("out");
    // resolved.json hashes what `roqsim scenes inputs` lists: the YAML, the scene, its include
    // and the mesh the include names.
    let keys: Vec<String> = inputs(&out).keys().cloned().collect();
    let want: Vec<String> = ["cell.yaml", "parts.xml", "scene.xml", "wedge.obj"]
        .iter()
        .map(|f| root.join(f).display().to_string())
        .collect();
    assert_eq!(keys, want);
    let listed = roqsim(&["scenes", "inputs", "cell.yaml"], d.path(), &[]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let listed: Json = serde_json::from_str(&listed.stdout).unwrap();
    let mut listed: Vec<String> = listed["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    listed.sort();
    assert_eq!(listed, want, "the campaign hashed other files than `scenes inputs` lists");
    let before = snapshot(&out);
    // The included file is edited: the resume is refused naming it; the folder is untouched.
    write(d.path(), "parts.xml", &PARTS.replace("0 0 0.5", "0 0 0.7"));
    let r = run_campaign(d.path(), &[]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(r.stderr.trim(), refusal(&root.join("parts.xml").display().to_string()));
    assert_eq!(snapshot(&out), before, "a refusal touched the folder");
    write(d.path(), "parts.xml", PARTS);
    // So is the mesh the include names.
    write(d.path(), "wedge.obj", &TETRA_OBJ.replace("v 0 0 0.1", "v 0 0 0.2"));
    let r = run_campaign(d.path(), &[]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(r.stderr.trim(), refusal(&root.join("wedge.obj").display().to_string()));
    assert_eq!(snapshot(&out), before);
    // Restored, the campaign resumes: nothing runs again.
    write(d.path(), "wedge.obj", TETRA_OBJ);
    let r = run_campaign(d.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(RESUMED), "{}", r.stdout);
}

#[test]
fn a_campaign_over_a_packaged_world_resumes() {
    let prefix = tempfile::tempdir().unwrap();
    let share = prefix.path().join("share");
    write(&share, "acme_cells/worlds/cell.yaml", "sim: {world: cell/scene.xml, timestep: 0.002}\n");
    write(&share, "acme_cells/worlds/cell/scene.xml", SCENE);
    write(&share, "acme_cells/worlds/cell/parts.xml", PARTS);
    write(&share, "acme_cells/worlds/cell/wedge.obj", TETRA_OBJ);
    let old = std::env::var("AMENT_PREFIX_PATH").unwrap_or_default();
    let env = [("AMENT_PREFIX_PATH", format!("{}:{old}", prefix.path().display()))];
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "campaign.yaml",
        "world: acme_cells:cell\nrepetitions: 2\nlimits: {steps: 10}\n",
    );
    let r = run_campaign(d.path(), &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = d.path().join("out");
    // The packaged files are keyed by package, as a recording keys them.
    let keys: Vec<String> = inputs(&out).keys().cloned().collect();
    assert_eq!(
        keys,
        [
            "package://acme_cells/worlds/cell.yaml",
            "package://acme_cells/worlds/cell/parts.xml",
            "package://acme_cells/worlds/cell/scene.xml",
            "package://acme_cells/worlds/cell/wedge.obj",
        ]
    );
    // The resume re-hashes them through the installed package: nothing runs again.
    let r = run_campaign(d.path(), &env);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains(RESUMED), "{}", r.stdout);
    // An edited packaged file is named by its package key.
    let before = snapshot(&out);
    write(&share, "acme_cells/worlds/cell/parts.xml", &PARTS.replace("0 0 0.5", "0 0 0.7"));
    let r = run_campaign(d.path(), &env);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(r.stderr.trim(), refusal("package://acme_cells/worlds/cell/parts.xml"));
    assert_eq!(snapshot(&out), before);
}

#[test]
fn a_mesh_the_main_files_meshdir_places_for_an_include_is_an_input() {
    // MuJoCo's <compiler> holds for the whole model: meshdir set in the main file places the
    // mesh that the included file names.
    let d = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap();
    write(d.path(), "cell.yaml", "sim: {world: scene.xml, timestep: 0.002}\n");
    write(
        d.path(),
        "scene.xml",
        &SCENE.replace("<include", "<compiler meshdir=\"meshes\"/><include"),
    );
    write(d.path(), "parts.xml", PARTS);
    write(d.path(), "meshes/wedge.obj", TETRA_OBJ);
    write(d.path(), "campaign.yaml", "world: cell.yaml\nrepetitions: 2\nlimits: {steps: 10}\n");
    let r = run_campaign(d.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = d.path().join("out");
    let keys: Vec<String> = inputs(&out).keys().cloned().collect();
    let mesh = root.join("meshes/wedge.obj").display().to_string();
    assert!(keys.contains(&mesh), "{keys:?}");
    let before = snapshot(&out);
    write(d.path(), "meshes/wedge.obj", &TETRA_OBJ.replace("v 0 0 0.1", "v 0 0 0.2"));
    let r = run_campaign(d.path(), &[]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(r.stderr.trim(), refusal(&mesh));
    assert_eq!(snapshot(&out), before);
}
