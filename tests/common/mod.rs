//! Helpers the integration tests share: loading a world from YAML text into an engine (seed 1
//! unless a test picks one), collecting a refusal's text, stepping for a sim duration, finding an
//! endpoint. Each test binary includes this with `mod common;` and uses what it needs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use roqsim::{load_world_str, Engine, EngineOptions, LoadOptions};

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

/// The world `components:` over the MJCF `scene` (written as `scene.xml` into a fresh folder, kept
/// alive by the returned guard), as loaded: the refusal when it is refused.
pub fn scene_world(
    scene: &str,
    components: &str,
) -> (tempfile::TempDir, Result<roqsim::LoadedWorld, roqsim::error::ConfigErrors>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("scene.xml"), scene).unwrap();
    let yaml = format!("sim:\n  world: scene.xml\ncomponents:\n{components}");
    let loaded = load_world_str(&yaml, dir.path(), &LoadOptions::default());
    (dir, loaded)
}

/// An engine of [`scene_world`] with `seed` (`None`: the world's); panics on a load refusal,
/// returns the engine's own error.
pub fn scene_engine(scene: &str, components: &str, seed: Option<u64>) -> Result<Engine, String> {
    let (_dir, loaded) = scene_world(scene, components);
    let w = loaded.unwrap_or_else(|e| panic!("refused:\n{e}"));
    Engine::new(w, EngineOptions { profile: false, seed }).map_err(|e| e.to_string())
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
