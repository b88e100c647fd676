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
