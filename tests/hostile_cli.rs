//! Hostile input at the command line and in what it writes, one test per class: an output flag
//! naming any file the world reads, a span of sim time that would run until interrupted, stderr
//! or stdout that cannot be written, serde's type errors, a flood of `disable:` misses, and
//! `catalog worlds` over files that are too big, not regular, or oddly commented. docs/bounds.md
//! lists the bounds checked here.

mod common;

use std::process::{Command, Output, Stdio};

use common::refusal;

fn roqsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roqsim"))
        .args(args)
        .env_remove("AMENT_PREFIX_PATH")
        .env("ROQSIM_LOG", "error")
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn dev_full() -> Stdio {
    Stdio::from(std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap())
}

const MODEL: &str = r#"<mujoco><worldbody><body name="m"><geom type="box" size="0.1 0.1 0.1"/></body></worldbody></mujoco>
"#;
const PARENT: &str = "components:\n  - dummy: {}\n    name: a\n";

/// Class: an output naming a file the world reads through its parent or its models (not only
/// the world file itself): `sim --record/--summary`, `render --out` and `export -o` are refused
/// before anything is written, and every input keeps its bytes.
#[test]
fn outputs_naming_a_parent_or_a_model_file_are_refused_and_the_inputs_keep_their_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let parent = dir.path().join("parent.yaml");
    let model = dir.path().join("model.xml");
    let child = dir.path().join("child.yaml");
    std::fs::write(&parent, PARENT).unwrap();
    std::fs::write(&model, MODEL).unwrap();
    let child_text =
        "extends: parent.yaml\ncomponents:\n  - spawn_model: {model: model.xml}\n    name: thing\n";
    std::fs::write(&child, child_text).unwrap();
    let (c, p, m) = (child.to_str().unwrap(), parent.to_str().unwrap(), model.to_str().unwrap());
    let reads = "is a file the world reads (`roqsim scenes inputs` lists it): writing it would overwrite it; name another file";
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["sim", c, "--steps", "2", "-q", "--record", p],
            format!("error: --record {p} {reads}\n"),
        ),
        (
            vec!["sim", c, "--steps", "2", "-q", "--summary", m],
            format!("error: --summary {m} {reads}\n"),
        ),
        (vec!["render", c, "--out", m], format!("error: --out {m} {reads}\n")),
        (
            vec!["render", c, "--video", p, "--seconds", "1"],
            format!("error: --video {p} {reads}\n"),
        ),
        (
            vec!["export", "urdf", c, "--robot", "thing", "-o", p],
            format!("error: -o {p} {reads}\n"),
        ),
    ];
    // A hard link to an input is that input (refused as the file it is).
    let hard = dir.path().join("parent_link.yaml");
    std::fs::hard_link(&parent, &hard).unwrap();
    let h = hard.to_str().unwrap();
    let mut cases = cases;
    cases.push((
        vec!["sim", c, "--steps", "2", "-q", "--summary", h],
        format!("error: --summary {h} {reads}\n"),
    ));
    for (args, want) in cases {
        let out = roqsim(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err, want, "{args:?}");
        assert_eq!(std::fs::read_to_string(&parent).unwrap(), PARENT);
        assert_eq!(std::fs::read_to_string(&model).unwrap(), MODEL);
        assert_eq!(std::fs::read_to_string(&child).unwrap(), child_text);
    }
    // The same world with outputs elsewhere runs and writes them.
    let s = dir.path().join("s.json");
    let out =
        roqsim(&["sim", c, "--steps", "2", "-q", "--seed", "1", "--summary", s.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(std::fs::read_to_string(&s).unwrap().contains("\"steps\": 2"));
    // Rendering a recording reads the recorded world's model files from disk: they are inputs too.
    let r = dir.path().join("r.mcap");
    let out = roqsim(&["sim", c, "--steps", "2", "-q", "--record", r.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = roqsim(&["render", r.to_str().unwrap(), "--out", m]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!("error: --out {m} is a file the recorded world reads: writing it would overwrite it; name another file\n")
    );
    assert_eq!(std::fs::read_to_string(&model).unwrap(), MODEL);
}

/// Class: a span of sim time a flag asks for is bounded: `sim --seconds` and `render --at`
/// beyond a year (1e308 used to run until interrupted), negative, NaN or infinite are refused;
/// `render --at` past a recording's last sample is refused rather than drawing the last one.
#[test]
fn sim_seconds_and_render_at_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.yaml");
    std::fs::write(&w, "sim: {timestep: 0.002, seed: 1}\ncomponents:\n  - dummy: {}\n").unwrap();
    let w = w.to_str().unwrap();
    let bound =
        "must be a sim time within [0, 31536000] s (a year; count a longer run with --steps), got";
    for (verb, flag, value, shown) in [
        ("sim", "--seconds", "1e308", "1e308"),
        ("sim", "--seconds", "31536001", "3.1536001e7"),
        ("sim", "--seconds", "NaN", "NaN"),
        ("sim", "--seconds", "inf", "inf"),
        ("sim", "--seconds", "-0.5", "-0.5"),
        ("render", "--at", "1e308", "1e308"),
        ("render", "--at", "-inf", "-inf"),
    ] {
        let out = roqsim(&[verb, w, &format!("{flag}={value}")]);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {}", stderr(&out));
        assert_eq!(stderr(&out), format!("error: {flag} {bound} {shown}\n"));
    }
    // A recording of 0.1 s: --at 5 is past its last sample.
    let rec = dir.path().join("r.mcap");
    let out = roqsim(&["sim", w, "--steps", "50", "-q", "--record", rec.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let png = dir.path().join("x.png");
    let r = rec.to_str().unwrap();
    let out = roqsim(&["render", r, "--at", "5", "--out", png.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.starts_with(&format!(
            "error: {r}: --at 5: the recording holds sim times 0 s to 0.1 s ("
        )) && text.ends_with(" state samples): give a time in that range\n"),
        "{text}"
    );
    assert!(!png.exists());
}

/// Class: stderr that cannot be written (`2>/dev/full`) never turns a refusal into a panic: the
/// refusal's own exit code stands. Help that cannot be written to stdout is a write error,
/// exit 2, as coreutils do (`ls --help >/dev/full`).
#[test]
fn a_full_stderr_keeps_the_refusal_code_and_unwritable_help_exits_2() {
    for args in [
        vec!["check", "/nonexistent/w.yaml"],
        vec!["sim", "/nonexistent/w.yaml", "--seconds", "-1"],
        vec!["plugins", "describe", "nosuchplugin"],
        vec!["sim", "--steps", "-1", "w.yaml"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_roqsim"))
            .args(&args)
            .stderr(dev_full())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    for flag in ["--help", "--version"] {
        let out = Command::new(env!("CARGO_BIN_EXE_roqsim"))
            .arg(flag)
            .stdout(dev_full())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}");
        assert_eq!(
            stderr(&out),
            "error: write error: cannot write to stdout: No space left on device (os error 28)\n"
        );
        let ok = roqsim(&[flag]);
        assert_eq!(ok.status.code(), Some(0), "{flag}");
        assert!(ok.stderr.is_empty());
    }
}

/// Class: serde's own type and shape texts ("invalid type: integer `3`, expected a sequence")
/// are said in plain words naming the key path, for the `sim:` block and every plugin alike.
#[test]
fn type_and_shape_errors_name_the_key_and_the_form_it_takes() {
    let text = refusal(
        "sim: {seed: -1, gravity: 3, timestep: fast}\ncomponents:\n  - box: {size: 3, present: 3, pose: {position: {x: far}}}\n    name: b\n  - walker: {pos: {x: 1}}\n    name: w\n  - conveyor: {speed: [1, 2]}\n    name: c\n  - spawn_robot: {model: turtlebot4, namespace: 3}\n    name: r\n  - box: {size: [1, 2]}\n    name: s\n",
    );
    for line in [
        "sim.seed: must be a whole number >= 0, got the integer -1",
        "sim.gravity: must be a list of 3 items, got the integer 3",
        "sim.timestep: must be a number, got the string \"fast\"",
        "components.b.size: must be a list of 3 items, got the integer 3 (box)",
        "components.b.present: must be true or false, got the integer 3 (box)",
        "components.b.pose.position.x: must be a number, got the string \"far\" (box)",
        "components.w.pos: must be a list of 2 items, got a mapping (walker)",
        "components.c.speed: must be a number, got a list (conveyor)",
        "components.r.namespace: must be text (a string), got the integer 3 (spawn_robot)",
        "components.s.size: must be a list of 3 items, got a list of 2 items (box)",
    ] {
        assert!(text.contains(&format!("  - {line}\n")), "missing `{line}` in:\n{text}");
    }
    for raw in ["invalid type", "invalid length", "invalid value", "expected a sequence"] {
        assert!(!text.contains(raw), "{raw} in:\n{text}");
    }
}

/// The same for enum keys (serde_yaml says "a Value::Tagged enum") and keys taking one of two
/// forms (serde: "data did not match any variant of untagged enum Home").
#[test]
fn enum_and_two_form_keys_say_the_forms_they_take() {
    let text = refusal(
        "sim: {integrator: 3}\ncomponents:\n  - box: {motion: 3}\n    name: b\n  - spawn_arm: {model: ur5e, home: true}\n    name: arm\n  - spawn_model: {model: ur5e, publish_tf: [1]}\n    name: m\n",
    );
    for line in [
        "sim.integrator: must be one of its names (text), got the integer 3",
        "components.b.motion: must be one of its names (text), got the integer 3 (box)",
        "components.arm.home: has none of the forms this key takes (a list of joint positions in model order, or a mapping joint: position; `roqsim plugins describe` shows them) (spawn_arm)",
        "components.m.publish_tf: has none of the forms this key takes (true or false, or one of the words static, dynamic; `roqsim plugins describe` shows them) (spawn_model)",
    ] {
        assert!(text.contains(&format!("  - {line}\n")), "missing `{line}` in:\n{text}");
    }
    for raw in ["Value::Tagged", "untagged enum"] {
        assert!(!text.contains(raw), "{raw} in:\n{text}");
    }
}

/// Class: 2000 `disable:` misses against a 2000-component parent list the inherited components
/// once (each miss used to repeat the whole list: 144 MB of refusal).
#[test]
fn disable_misses_list_the_inherited_components_once() {
    let dir = tempfile::tempdir().unwrap();
    let parent: String = (0..2000)
        .map(|i| format!("  - dummy: {{}}\n    name: inherited_component_{i:04}\n"))
        .collect();
    std::fs::write(dir.path().join("p.yaml"), format!("components:\n{parent}")).unwrap();
    let misses: Vec<String> = (0..2000).map(|i| format!("missing_{i:04}")).collect();
    let child = dir.path().join("c.yaml");
    std::fs::write(&child, format!("extends: p.yaml\ndisable: [{}]\n", misses.join(", "))).unwrap();
    let e = roqsim::load_world(&child, &roqsim::LoadOptions::default()).unwrap_err();
    assert_eq!(e.0.len(), 2000);
    let inherited: Vec<String> = (0..2000).map(|i| format!("inherited_component_{i:04}")).collect();
    assert_eq!(
        e.0[0].message,
        format!(
            "`missing_0000` matches no component inherited from `p.yaml`; inherited: {}",
            inherited.join(", ")
        )
    );
    assert_eq!(e.0[1999].path, "disable[1999]");
    assert_eq!(
        e.0[1999].message,
        "`missing_1999` matches no component inherited from `p.yaml` (the inherited components are listed at disable[0])"
    );
    // One list (56 KB) and one line per miss: 313 KB in all (it was 2000 lists, 112 MB).
    let all = e.to_string().len();
    assert!(all < 400_000, "the refusal is {all} bytes");
}

/// Class: `catalog worlds` reads a package's worlds as a world is read: a file over 8 MiB or one
/// that is not a regular file (a FIFO would never end) is reported in the row's `errors`, not
/// read; headlines skip a `#!` line and leading bare `#` lines and do not stop at "Dr.".
#[test]
fn catalog_worlds_caps_reads_and_finds_headlines() {
    let prefix = tempfile::tempdir().unwrap();
    let worlds = prefix.path().join("share/hostile_pkg/worlds");
    std::fs::create_dir_all(&worlds).unwrap();
    let big = worlds.join("big.yaml");
    std::fs::File::create(&big).unwrap().set_len(9 * 1024 * 1024).unwrap();
    let fifo = worlds.join("fifo.yaml");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    std::fs::write(
        worlds.join("shebang.yaml"),
        "#!/usr/bin/env -S roqsim sim\n#\n# A clinic run by Dr. Who, e.g. on Sundays. Not this.\ncomponents: []\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_roqsim"))
        .args(["catalog", "worlds"])
        .env("AMENT_PREFIX_PATH", prefix.path())
        .env("ROQSIM_LOG", "error")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = |name: &str| -> serde_json::Value {
        j["worlds"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["ref"] == format!("hostile_pkg:{name}"))
            .unwrap_or_else(|| panic!("no {name} in {j}"))
            .clone()
    };
    let (b, f, s) = (row("big"), row("fifo"), row("shebang"));
    assert_eq!(b["headline"], serde_json::Value::Null);
    assert_eq!(
        b["errors"],
        serde_json::json!([format!(
            "world `{}` is 9437184 bytes; a YAML document may be at most 8388608 bytes (8 MiB)",
            big.display()
        )])
    );
    assert_eq!(
        f["errors"],
        serde_json::json!([format!(
            "world `{}` is not a regular file: name a YAML file",
            fifo.display()
        )])
    );
    assert_eq!(s["headline"], "A clinic run by Dr. Who, e.g. on Sundays.");
    assert_eq!(s["errors"], serde_json::json!([]));
}
