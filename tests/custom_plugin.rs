//! Plugins from outside the tree: the template crate (examples/custom_plugin) adds
//! `height_probe` through `roqsim::cli::main_with` and gets the full command line. Plain
//! `cargo test` builds the example before running this; the ROS half is
//! test/e2e/test_custom_plugin.py.

use std::path::{Path, PathBuf};
use std::process::Command;

fn example_bin() -> PathBuf {
    let roqsim = Path::new(env!("CARGO_BIN_EXE_roqsim"));
    let p = roqsim.parent().unwrap().join("examples").join("custom_plugin");
    assert!(
        p.is_file(),
        "{} missing: build it with `cargo build --example custom_plugin` (plain `cargo test` does)",
        p.display()
    );
    p
}

fn run(bin: &Path, args: &[&str]) -> (i32, String, String) {
    let o = Command::new(bin)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("ROQSIM_LOG", "error")
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

const WORLD: &str = "examples/custom_plugin/world.yaml";

#[test]
fn the_template_runs_a_world_using_its_plugin() {
    let (code, out, err) =
        run(&example_bin(), &["sim", WORLD, "--seconds", "2", "--pacing", "asap", "-q"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("run finished (seconds): 1000 steps, sim time 2.000 s"), "{out}");
    // The box dropped from 0.5 m rests on its 0.1 m half-size.
    assert!(err.contains("height_probe `probe`: a_box at z = 0.0999 m"), "{err}");
}

#[test]
fn the_template_has_every_verb_and_names_its_plugin() {
    let bin = example_bin();
    let (code, out, _) = run(&bin, &["catalog", "plugins"]);
    assert_eq!(code, 0);
    let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let row = j["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "height_probe")
        .unwrap()
        .clone();
    assert_eq!(row["provider"], "custom_plugin");
    assert_eq!(j["plugins"][0]["provider"], "roqsim");
    let (code, out, _) = run(&bin, &["scenes", "describe", WORLD]);
    assert_eq!(code, 0);
    let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(j["addresses"], serde_json::json!(["a", "probe"]));
    let (code, out, err) = run(&bin, &["check", WORLD]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("ok: 2 components"), "{out}");
    // Its own config is validated like a built-in's.
    let (code, _, err) = run(&bin, &["check", WORLD, "--set", "components.probe.rate_hz=0"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("components.probe.rate_hz: must be > 0 (Hz), got 0 (height_probe)"),
        "{err}"
    );
}

#[test]
fn roqsim_itself_refuses_the_plugin_it_does_not_have() {
    let (code, _, err) = run(Path::new(env!("CARGO_BIN_EXE_roqsim")), &["check", WORLD]);
    assert_eq!(code, 2);
    assert!(
        err.contains("components.probe: unknown plugin `height_probe`; `roqsim plugins list` shows the registered ones"),
        "{err}"
    );
}
