//! Helpers the integration tests share: loading a world from YAML text into an engine (seed 1
//! unless a test picks one), collecting a refusal's text, stepping for a sim duration, finding an
//! endpoint. Each test binary includes this with `mod common;` and uses what it needs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use roqsim::{load_world_str, Engine, EngineOptions, LoadOptions};

pub mod arm;

/// The repository root (relative model and world paths in test YAML resolve against it).
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The bundled `worlds/` folder (a world file's directory: `../models/...` resolves from it).
pub fn base() -> PathBuf {
    root().join("worlds")
}

/// An engine for `yaml` loaded from `dir`, with `seed`; panics naming the load or engine error.
pub fn engine_at(yaml: &str, dir: &Path, seed: u64) -> Engine {
    let w = load_world_str(yaml, dir, &LoadOptions::default())
        .unwrap_or_else(|e| panic!("load failed: {e}"));
    Engine::new(w, EngineOptions { profile: false, seed: Some(seed) })
        .unwrap_or_else(|e| panic!("engine failed: {e}"))
}

/// An engine for `yaml` loaded from [`base`], seed 1.
pub fn engine(yaml: &str) -> Engine {
    engine_at(yaml, &base(), 1)
}

/// An engine for `yaml` loaded from `dir`, seed 1.
pub fn engine_in(yaml: &str, dir: &Path) -> Engine {
    engine_at(yaml, dir, 1)
}

/// An engine for `yaml` loaded from [`base`] with `seed`.
pub fn engine_seed(yaml: &str, seed: u64) -> Engine {
    engine_at(yaml, &base(), seed)
}

/// The text of the refusal `yaml` gets, at load or at engine setup, from `dir`; panics when it
/// is accepted.
pub fn refusal_in(yaml: &str, dir: &Path) -> String {
    match load_world_str(yaml, dir, &LoadOptions::default()) {
        Err(e) => e.to_string(),
        Ok(w) => match Engine::new(w, EngineOptions { profile: false, seed: Some(1) }) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("expected a refusal for:\n{yaml}"),
        },
    }
}

/// [`refusal_in`] from [`base`].
pub fn refusal(yaml: &str) -> String {
    refusal_in(yaml, &base())
}

/// Assert that `text` contains every one of `needles`, showing the text when one is missing.
pub fn assert_has(text: &str, needles: &[&str]) {
    for n in needles {
        assert!(text.contains(n), "missing `{n}` in:\n{text}");
    }
}

/// Step the engine for `s` seconds of sim time (rounded to whole steps).
pub fn secs(e: &mut Engine, s: f64) {
    let n = (s / e.dt()).round() as u64;
    e.step_n(n).unwrap();
}

/// Index of the endpoint `name` in namespace `ns`; panics listing the endpoints there are.
pub fn endpoint_in(e: &Engine, ns: &str, name: &str) -> usize {
    e.ctx
        .interface
        .all()
        .iter()
        .position(|ep| ep.name == name && ep.namespace == ns)
        .unwrap_or_else(|| {
            let have: Vec<String> = e
                .ctx
                .interface
                .all()
                .iter()
                .map(|ep| format!("{}/{}", ep.namespace, ep.name))
                .collect();
            panic!("no endpoint {ns}/{name}; have {have:?}")
        })
}

/// Index of the first endpoint called `name` (any namespace).
pub fn endpoint(e: &Engine, name: &str) -> usize {
    e.ctx
        .interface
        .all()
        .iter()
        .position(|ep| ep.name == name)
        .unwrap_or_else(|| panic!("no endpoint {name}"))
}

/// Assert that `text` contains `needle`, showing both when it does not.
pub fn assert_contains(text: &str, needle: &str) {
    assert!(text.contains(needle), "expected\n  {needle}\nin\n  {text}");
}

/// The venv's Python (found by the repository path, so it works under `env -i`); panics naming
/// the setup step when it is missing.
pub fn venv_python() -> PathBuf {
    let p = root().join(".deps/venv/bin/python");
    assert!(p.exists(), "{} missing: run scripts/setup.sh", p.display());
    p
}

/// The stdout of `tests/third_party/plain_mujoco.py ARGS` (plain MuJoCo / yourdfpy in the venv);
/// panics with its stderr when it fails.
pub fn plain_mujoco(args: &[&str]) -> String {
    let out = std::process::Command::new(venv_python())
        .arg(root().join("tests/third_party/plain_mujoco.py"))
        .args(args)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "plain_mujoco.py {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The absolute path of `rel` inside the installed Python package `package`.
pub fn locate(package: &str, rel: &str) -> String {
    plain_mujoco(&["locate", package, rel]).trim().to_string()
}

/// Largest component difference of two unit quaternions, up to sign (q and -q are one rotation).
pub fn quat_dist(a: [f64; 4], b: [f64; 4]) -> f64 {
    let d1 = (0..4).map(|i| (a[i] - b[i]).abs()).fold(0.0, f64::max);
    let d2 = (0..4).map(|i| (a[i] + b[i]).abs()).fold(0.0, f64::max);
    d1.min(d2)
}

/// Write `empty.xml` (a world with no ground: plain MuJoCo compiles a model file alone) into `dir`.
pub fn write_empty_world(dir: &Path) {
    std::fs::write(dir.join("empty.xml"), "<mujoco model=\"empty\"><worldbody/></mujoco>").unwrap();
}

/// A loaded world and the temporary folder its files sit in (MuJoCo reads the MJCF when the
/// engine is built: keep the folder alive until then).
pub type SceneWorld = (tempfile::TempDir, Result<roqsim::LoadedWorld, roqsim::error::ConfigErrors>);

/// The world `sim:\n  world: scene.xml\n{sim_extra}components:\n{components}`, loaded from a fresh
/// folder holding `files` (name, text; one of them `scene.xml`): the refusal when it is refused.
pub fn scene_files_world(files: &[(&str, &str)], sim_extra: &str, components: &str) -> SceneWorld {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let yaml = format!("sim:\n  world: scene.xml\n{sim_extra}components:\n{components}");
    let loaded = load_world_str(&yaml, dir.path(), &LoadOptions::default());
    (dir, loaded)
}

/// The world `components:` over the MJCF `scene` (written as `scene.xml` into a fresh folder, kept
/// alive by the returned guard), as loaded: the refusal when it is refused.
pub fn scene_world(scene: &str, components: &str) -> SceneWorld {
    scene_files_world(&[("scene.xml", scene)], "", components)
}

/// The engine of a [`SceneWorld`] with `seed` (`None`: the world's); panics on a load refusal,
/// returns the engine's own error.
pub fn engine_of(w: SceneWorld, seed: Option<u64>) -> Result<Engine, String> {
    let (_dir, loaded) = w;
    let w = loaded.unwrap_or_else(|e| panic!("refused:\n{e}"));
    Engine::new(w, EngineOptions { profile: false, seed }).map_err(|e| e.to_string())
}

/// An engine of [`scene_world`] with `seed` (`None`: the world's); panics on a load refusal,
/// returns the engine's own error.
pub fn scene_engine(scene: &str, components: &str, seed: Option<u64>) -> Result<Engine, String> {
    engine_of(scene_world(scene, components), seed)
}

/// The error building the engine of a [`SceneWorld`] gives (seed 1); panics when the world is
/// refused at load or the engine is built.
pub fn setup_error_of(w: SceneWorld) -> String {
    match engine_of(w, Some(1)) {
        Ok(_) => panic!("expected a setup error"),
        Err(e) => e,
    }
}

/// Assert that `loaded` was refused with an error at key path `path` whose message contains
/// `needle`.
#[track_caller]
pub fn assert_refused_at(
    loaded: Result<roqsim::LoadedWorld, roqsim::error::ConfigErrors>,
    path: &str,
    needle: &str,
) {
    let e = match loaded {
        Ok(_) => panic!("expected a refusal at `{path}`"),
        Err(e) => e,
    };
    assert!(
        e.0.iter().any(|x| x.path == path && x.message.contains(needle)),
        "no error at `{path}` containing `{needle}`; got:\n{e}"
    );
}

/// Assert that `loaded` was refused with an error at a key path ending in `path` that reads
/// exactly `message`.
#[track_caller]
pub fn assert_refused_ending(
    loaded: Result<roqsim::LoadedWorld, roqsim::error::ConfigErrors>,
    path: &str,
    message: &str,
) {
    let e = match loaded {
        Ok(_) => panic!("expected a refusal at `{path}`"),
        Err(e) => e,
    };
    assert!(
        e.0.iter().any(|x| x.path.ends_with(path) && x.message == message),
        "no error at `{path}` saying `{message}`; got:\n{e}"
    );
}

/// Assert that `loaded` was refused with an error at key path `path` that reads exactly
/// `message`.
#[track_caller]
pub fn assert_refused_exactly(
    loaded: Result<roqsim::LoadedWorld, roqsim::error::ConfigErrors>,
    path: &str,
    message: &str,
) {
    let e = match loaded {
        Ok(_) => panic!("expected a refusal at `{path}`"),
        Err(e) => e,
    };
    assert!(
        e.0.iter().any(|x| x.path == path && x.message == message),
        "no error at `{path}` reading exactly:\n  {message}\ngot:\n{e}"
    );
}

/// Assert that a simulation-control request was refused with result `code` and a message
/// containing `needle`.
#[track_caller]
pub fn assert_sc_refused<T: std::fmt::Debug>(
    r: Result<T, roqsim::engine::sim_control::Refusal>,
    code: u8,
    needle: &str,
) {
    let e = r.unwrap_err();
    assert_eq!(e.code, code, "{}", e.message);
    assert!(e.message.contains(needle), "`{}` lacks `{needle}`", e.message);
}

/// An engine for `yaml` loaded from `dir` after writing `empty.xml` there (see
/// [`write_empty_world`]), seed 1.
pub fn empty_world_engine(yaml: &str, dir: &Path) -> Engine {
    write_empty_world(dir);
    engine_in(yaml, dir)
}

/// [`refusal_in`] from `dir` after writing `empty.xml` there.
pub fn empty_world_refusal(yaml: &str, dir: &Path) -> String {
    write_empty_world(dir);
    refusal_in(yaml, dir)
}

/// The world position of body `name` (`xpos`); panics when there is no such body.
pub fn body_pos(e: &Engine, name: &str) -> [f64; 3] {
    let id = e
        .ctx
        .model()
        .name_to_id(mujoco_rs::prelude::MjtObjBase::mjOBJ_BODY, name)
        .unwrap_or_else(|| panic!("no body {name}"));
    e.ctx.data().xpos()[id]
}

/// The distance of two points.
pub fn dist3(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// A finished process: its exit code (-1 when a signal ended it), stdout and stderr as text.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<std::process::Output> for Out {
    fn from(o: std::process::Output) -> Self {
        Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Out {
    /// The single JSON line on stdout.
    pub fn json(&self) -> serde_json::Value {
        let lines: Vec<&str> = self.stdout.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "expected one line on stdout, got:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        serde_json::from_str(lines[0]).unwrap()
    }
}

/// The world `sim: {timestep: 0.002}` with `components` (YAML list entries, indented two spaces).
pub fn components_world(components: &str) -> String {
    format!("sim: {{timestep: 0.002}}\ncomponents:\n{components}")
}

/// The world (x, y) of body `name` (`xpos`); panics when there is no such body.
pub fn body_xy(e: &Engine, name: &str) -> [f64; 2] {
    let p = body_pos(e, name);
    [p[0], p[1]]
}

/// The latest report of the `contact_monitor` of entity `robot`.
pub fn robot_contact(e: &Engine) -> roqsim::context::payload::ContactReport {
    e.ctx
        .blackboard
        .get::<roqsim::plugins::observe::contact_monitor::ContactReader>(
            "contact_monitor:robot.contact_monitor",
        )
        .unwrap()
        .get()
}

/// The notes the model import left on the blackboard (none: empty).
pub fn import_notes(e: &Engine) -> Vec<String> {
    use roqsim::spawn::import::{ImportNotes, NOTES_KEY};
    e.ctx.blackboard.get::<ImportNotes>(NOTES_KEY).map(|n| n.lines.clone()).unwrap_or_default()
}

/// A campaign trial's folder: `DIR/trials/NNNN`.
pub fn trial_dir(dir: &Path, i: usize) -> PathBuf {
    dir.join("trials").join(format!("{i:04}"))
}

/// A campaign folder's results.jsonl, one JSON object a row.
pub fn campaign_table(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Write `text` to `dir/name`, creating the folders on the way; the path.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

/// Every file under `dir` with its bytes, but a campaign folder's lock (it holds the last
/// holder's pid): two snapshots are equal when nothing was written.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(snapshot(&p));
        } else if p.file_name().is_some_and(|n| n != ".lock") {
            out.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
    out.sort();
    out
}

/// Write a `w`×`h` 8-bit RGB PNG to `path` (folders created on the way), the pixel at column `x`,
/// row `y` being `pixel(x, y)`; the path.
pub fn write_png(path: &Path, w: u32, h: u32, pixel: impl Fn(u32, u32) -> [u8; 3]) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let f = std::fs::File::create(path).unwrap();
    let mut enc = png::Encoder::new(std::io::BufWriter::new(f), w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut wr = enc.write_header().unwrap();
    let px: Vec<u8> = (0..w * h).flat_map(|i| pixel(i % w, i / w)).collect();
    wr.write_image_data(&px).unwrap();
    path.to_path_buf()
}
