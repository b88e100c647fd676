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
        "sim.seed: must be a whole number from 0 to 18446744073709551615, got the integer -1",
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
            "world `{}` is 9437184 bytes; a YAML file may be at most 8388608 bytes (8 MiB)",
            big.display()
        )])
    );
    assert_eq!(
        f["errors"],
        serde_json::json!([format!(
            "world `{}` is not a regular file (a FIFO): name a YAML file",
            fifo.display()
        )])
    );
    assert_eq!(s["headline"], "A clinic run by Dr. Who, e.g. on Sundays.");
    assert_eq!(s["errors"], serde_json::json!([]));
}

/// Run roqsim with `envs`, killed after 60 s: a command that reads a FIFO would wait for a writer
/// forever, and the test must fail saying so rather than hang.
fn roqsim_bounded(args: &[&str], envs: &[(&str, &std::path::Path)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_roqsim"));
    cmd.args(args).env_remove("AMENT_PREFIX_PATH").env("ROQSIM_LOG", "error");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    for _ in 0..600 {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = child.kill();
    panic!("roqsim {args:?} did not end (a FIFO read blocks?)");
}

fn mkfifo(p: &std::path::Path) {
    assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
}

/// Class: a world that does not load writes nothing. `--record`/`--summary` naming a parent the
/// world `extends:` is refused when the world loads; when a syntax error hides the `extends:` from
/// the output check, the load fails before any output is opened, so the parent keeps its bytes.
#[test]
fn a_world_that_does_not_load_leaves_every_file_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let parent = common::write(dir.path(), "parent.yaml", PARENT);
    let child = common::write(
        dir.path(),
        "bad.yaml",
        "extends: parent.yaml\ncomponents:\n  - dummy: {}\n    name: b\n   bad: [\n",
    );
    let (c, p) = (child.to_str().unwrap(), parent.to_str().unwrap());
    let before = common::snapshot(dir.path());
    for flag in ["--record", "--summary"] {
        let out = roqsim(&["sim", c, "--steps", "2", "-q", flag, p]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flag}: {err}");
        assert!(err.starts_with("error: "), "{err}");
        assert!(!err.contains(flag), "{flag}: the load's refusal comes first: {err}");
        assert_eq!(common::snapshot(dir.path()), before, "{flag} wrote: {err}");
    }
    // The same for a new output path: nothing is created.
    let rec = dir.path().join("new.mcap");
    let out = roqsim(&["sim", c, "--steps", "2", "-q", "--record", rec.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!rec.exists());
    assert_eq!(common::snapshot(dir.path()), before);
    // A world that parses but fails to build (an MJCF box with two sizes) keeps an existing
    // recording at the output path: the new one is written beside it until the engine is built.
    let good = common::write(dir.path(), "good.yaml", "components:\n  - dummy: {}\n    name: d\n");
    let out = roqsim(&[
        "sim",
        good.to_str().unwrap(),
        "--steps",
        "20",
        "-q",
        "--record",
        rec.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    common::write(
        dir.path(),
        "m.xml",
        "<mujoco><worldbody><body><geom type=\"box\" size=\"1 1\"/></body></worldbody></mujoco>\n",
    );
    let broken = common::write(
        dir.path(),
        "broken.yaml",
        "components:\n  - spawn_model: {model: m.xml}\n    name: thing\n",
    );
    let before = common::snapshot(dir.path());
    let out = roqsim(&[
        "sim",
        broken.to_str().unwrap(),
        "--steps",
        "2",
        "-q",
        "--record",
        rec.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        common::snapshot(dir.path()),
        before,
        "a failed build changed a file: {}",
        stderr(&out)
    );
}

/// Class: the files `--ros-args` names are inputs: `--params-file p.yaml --summary p.yaml` is
/// refused before anything is written, and a params file that is a FIFO is refused (rcl would
/// wait on it forever).
#[test]
fn ros_args_files_are_inputs_and_must_be_regular() {
    let dir = tempfile::tempdir().unwrap();
    let w = common::write(dir.path(), "w.yaml", "components:\n  - dummy: {}\n");
    let params = "/**:\n  ros__parameters:\n    use_sim_time: true\n";
    let p = common::write(dir.path(), "p.yaml", params);
    let (w, ps) = (w.to_str().unwrap(), p.to_str().unwrap());
    for flag in ["--summary", "--record"] {
        let out =
            roqsim(&["sim", w, "--steps", "2", "-q", flag, ps, "--ros-args", "--params-file", ps]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!("error: {flag} {ps} is the --ros-args --params-file file: writing it would overwrite it; name another file\n")
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), params);
    }
    let out = roqsim(&["render", w, "--out", ps, "--ros-args", "-r", "a:=b", "--params-file", ps]);
    assert_eq!(
        stderr(&out),
        format!("error: --out {ps} is the --ros-args --params-file file: writing it would overwrite it; name another file\n")
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), params);
    let fifo = dir.path().join("fifo.yaml");
    mkfifo(&fifo);
    let f = fifo.to_str().unwrap();
    let out =
        roqsim_bounded(&["sim", w, "--steps", "2", "-q", "--ros-args", "--params-file", f], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!("error: --ros-args --params-file `{f}` is not a regular file (a FIFO): name a YAML file\n")
    );
}

/// Class: every file a world reads through MuJoCo or a plugin is refused when it is a FIFO (or a
/// device), naming the key path and the file, before it is opened: an MJCF `<include>`, a mesh, a
/// model file, `sim.world`, a height field source, a floorplan, a recording. `check`, `sim` (with
/// its output check), `scenes inputs` and `catalog models` all end.
#[test]
fn fifos_anywhere_a_world_reads_are_refused_naming_the_key_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for f in ["inc.xml", "m.stl", "fifo_model.xml", "world.xml", "h.png", "plan.json", "r.mcap"] {
        mkfifo(&d.join(f));
    }
    let shown = |f: &str| d.join(f).display().to_string();
    common::write(d, "incl.xml", "<mujoco><include file=\"inc.xml\"/><worldbody><body name=\"m\"><geom type=\"box\" size=\"0.1 0.1 0.1\"/></body></worldbody></mujoco>\n");
    common::write(d, "mesh.xml", "<mujoco><asset><mesh name=\"x\" file=\"m.stl\"/></asset><worldbody><body name=\"m\"><geom type=\"mesh\" mesh=\"x\"/></body></worldbody></mujoco>\n");
    let cases: Vec<(&str, String)> = vec![
        (
            "components:\n  - spawn_model: {model: incl.xml}\n    name: t\n",
            format!("error: [t] build: model: model `incl.xml`: <include file=\"inc.xml\"> in `{}` names `{}` is not a regular file (a FIFO): name an MJCF or URDF file", shown("incl.xml"), shown("inc.xml")),
        ),
        (
            "components:\n  - spawn_model: {model: mesh.xml}\n    name: t\n",
            format!("error: [t] build: model: model `mesh.xml`: <mesh file=\"m.stl\"> in `{}` names `{}` is not a regular file (a FIFO): name a mesh, texture or height field file", shown("mesh.xml"), shown("m.stl")),
        ),
        (
            "components:\n  - spawn_model: {model: fifo_model.xml}\n    name: t\n",
            format!("components.t.model: model `{}` is not a regular file (a FIFO): name an MJCF or URDF file", shown("fifo_model.xml")),
        ),
        (
            "sim: {world: world.xml}\ncomponents: []\n",
            format!("sim.world: model `{}` is not a regular file (a FIFO): name an MJCF or URDF file", shown("world.xml")),
        ),
        (
            "components:\n  - heightfield: {source: h.png}\n    name: t\n",
            format!("components.t.source: height field `{}` is not a regular file (a FIFO): name a PNG or .npy elevation image (heightfield)", shown("h.png")),
        ),
        (
            "components:\n  - floorplan: {floorplan: plan.json}\n    name: t\n",
            format!("components.t.floorplan: floorplan `{}` is not a regular file (a FIFO): name a floorplan JSON file (floorplan)", shown("plan.json")),
        ),
    ];
    for (i, (yaml, want)) in cases.iter().enumerate() {
        let w = common::write(d, &format!("w{i}.yaml"), yaml);
        let w = w.to_str().unwrap();
        let summary = d.join("s.json");
        for args in [
            vec!["check", w],
            vec!["sim", w, "--steps", "1", "-q", "--summary", summary.to_str().unwrap()],
        ] {
            let out = roqsim_bounded(&args, &[]);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains(want.as_str()), "{args:?}:\n{err}\nlacks\n{want}");
        }
        assert!(!summary.exists());
        let out = roqsim_bounded(&["scenes", "inputs", w], &[]);
        assert!(out.status.code().is_some(), "scenes inputs {yaml}");
    }
    let r = d.join("r.mcap");
    for args in
        [vec!["replay", r.to_str().unwrap()], vec!["state", r.to_str().unwrap(), "--at", "0"]]
    {
        let out = roqsim_bounded(&args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "error: recording `{}` is not a regular file (a FIFO): name an MCAP recording\n",
                r.display()
            )
        );
    }
    // `catalog models` over a package whose model folder holds a FIFO `x.xml`.
    let prefix = tempfile::tempdir().unwrap();
    let models = prefix.path().join("share/fifo_pkg/models");
    std::fs::create_dir_all(&models).unwrap();
    mkfifo(&models.join("x.xml"));
    let out = roqsim_bounded(&["catalog", "models"], &[("AMENT_PREFIX_PATH", prefix.path())]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = j["models"].as_array().unwrap().iter().find(|m| m["ref"] == "fifo_pkg:x").unwrap();
    assert_eq!(row["headline"], serde_json::Value::Null);
    assert_eq!(
        row["errors"],
        serde_json::json!([format!(
            "model `{}` is not a regular file (a FIFO): name an MJCF or URDF file",
            models.join("x.xml").display()
        )])
    );
}

/// Class: a number flag is answered by its own range check, never clap's `-- -1` tip, whatever
/// follows the hyphen (`-inf`, `-1`): `sim --seconds`, `render --fps/--seconds/--seed/--at`,
/// `replay --until`, `state --at`, `export --samples`, `campaign run --jobs`, `campaign trial`'s
/// index; `--fps` is checked
/// against what an MP4 can hold before ffmpeg starts, and nothing is written.
#[test]
fn number_flags_answer_with_their_range_not_clap_tips() {
    let dir = tempfile::tempdir().unwrap();
    let w = common::write(
        dir.path(),
        "w.yaml",
        "sim: {timestep: 0.002, seed: 1}\ncomponents:\n  - dummy: {}\n",
    );
    let w = w.to_str().unwrap();
    let v = dir.path().join("v.mp4");
    let vs = v.to_str().unwrap();
    let fps = "must be a frame rate within [0.001, 1000] frames per sim second (an MP4 cannot hold a frame longer than 1000 s), got";
    let span =
        "must be a sim time within [0, 31536000] s (a year; count a longer run with --steps), got";
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec!["sim", w, "--seconds", "-inf"], format!("error: --seconds {span} -inf\n")),
        (
            vec!["render", w, "--video", vs, "--seconds", "1", "--fps", "-1"],
            format!("error: --fps {fps} -1: give one in that range\n"),
        ),
        (
            vec!["render", w, "--video", vs, "--seconds", "1", "--fps", "1e-300"],
            format!("error: --fps {fps} 1e-300: give one in that range\n"),
        ),
        (
            vec!["render", w, "--video", vs, "--seconds", "1", "--fps", "-inf"],
            format!("error: --fps {fps} -inf: give one in that range\n"),
        ),
        (
            vec!["render", w, "--video", vs, "--seconds", "-1"],
            format!("error: --seconds {span} -1\n"),
        ),
        (
            vec!["render", w, "--fps", "5"],
            "error: --fps is the frame rate of a --video; give --video FILE too\n".into(),
        ),
        (
            vec!["render", w, "--overlay", "clock:margin=100000", "--out", vs],
            "error: --overlay clock: margin 100000 px puts the 258x33 px box outside the 1280x720 frame: give a margin of at most 687\n".into(),
        ),
    ];
    for (args, want) in cases {
        let out = roqsim(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), want, "{args:?}");
        assert!(!v.exists());
    }
    for (args, needle) in [
        (vec!["render", w, "--seed", "-1"], "invalid value '-1' for '--seed <SEED>': takes a whole number from 0 to 18446744073709551615, got `-1`"),
        (vec!["export", "srdf", w, "--robot", "r", "--samples", "-1"], "invalid value '-1' for '--samples <SAMPLES>': takes a whole number of random configurations from 0 to 1000000 (default 10000), got `-1`"),
        (vec!["export", "srdf", w, "--robot", "r", "--samples", "18446744073709551615"], "takes a whole number of random configurations from 0 to 1000000 (default 10000), got `18446744073709551615`"),
        (vec!["campaign", "run", "c.yaml", "-o", "out", "--jobs", "-1"], "invalid value '-1' for '--jobs <N>': takes a whole number from 1 to 18446744073709551615, got `-1`"),
        (vec!["replay", "r.mcap", "--until", "-inf"], "error: --until -inf: give a run time in seconds, 0 or more"),
        (vec!["campaign", "trial", "out", "-1"], "invalid value '-1' for '<INDEX>': takes a whole number from 0 to 18446744073709551615, got `-1`"),
        (vec!["campaign", "trial", "out", "99999999999999999999"], "invalid value '99999999999999999999' for '<INDEX>': takes a whole number from 0 to 18446744073709551615"),
        (vec!["sim", w, "--pacing", "-1"], "error: --pacing takes realtime, asap or a real-time factor, got `-1`"),
        (vec!["sim", w, "--pacing", "-inf"], "error: --pacing takes realtime, asap or a real-time factor, got `-inf`"),
        (vec!["render", w, "--size", "-1x5", "--out", vs], "--size"),
        (vec!["render", w, "--size", "-5", "--out", vs], "--size"),
    ] {
        let out = roqsim(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: `{err}` lacks `{needle}`");
        assert!(!err.contains("-- -"), "{err}");
    }
}

/// Class: an integer past its type says the range of its key: a camera's `width: 4294967296`
/// (past the renderer's u32) or `-1` is refused with the image side's 1..=8192, the solver's
/// iterations with theirs; a fraction is refused as not a whole number.
#[test]
fn integers_past_their_type_say_the_range_of_their_key() {
    let text = refusal(
        "sim: {seed: 1, iterations: 4294967296, ls_iterations: 2.5, noslip_iterations: -1}\ncomponents:\n  - camera: {camera: cam, width: 4294967296, height: -1}\n    name: c\n",
    );
    for line in [
        "sim.iterations: must be between 1 and 10000, got 4294967296",
        "sim.ls_iterations: must be a whole number, got the number 2.5",
        "sim.noslip_iterations: must be between 0 (off) and 10000, got -1",
        "components.c.width: must be 1..=8192 px, got 4294967296 (camera)",
        "components.c.height: must be 1..=8192 px, got -1 (camera)",
    ] {
        assert!(text.contains(line), "{text}\nlacks\n{line}");
    }
    assert!(!text.contains(">= 0"), "{text}");
    // A --set integer past u64 gets the world file's hint, not the parser's words alone.
    let dir = tempfile::tempdir().unwrap();
    let w = common::write(dir.path(), "w.yaml", "components: []\n");
    let out = roqsim(&["check", w.to_str().unwrap(), "--set", "sim.seed=18446744073709551616"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).ends_with("; the integer is too large: roqsim's integers (seeds, counts) are at most 18446744073709551615\n"),
        "{}",
        stderr(&out)
    );
}

/// Class: an output that exists but cannot be written to the end: a FIFO nothing reads (opening
/// it to write would wait forever), or for `--record`, which seeks back into its file, anything but
/// a regular file (`/dev/null` made the MCAP writer panic). Refused before the world is built;
/// `--summary /dev/null` still runs.
#[test]
fn outputs_that_would_block_or_cannot_seek_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let w = common::write(
        dir.path(),
        "w.yaml",
        "sim: {timestep: 0.002, seed: 1}\ncomponents:\n  - dummy: {}\n",
    );
    let w = w.to_str().unwrap();
    let fifo = dir.path().join("out.fifo");
    mkfifo(&fifo);
    let f = fifo.to_str().unwrap();
    let unread =
        "is a FIFO that nothing reads: writing it would wait for a reader forever; name a file";
    let seeks = "a recording is finished by seeking back into its file; name a file";
    for (args, want) in [
        (
            vec!["sim", w, "--steps", "2", "-q", "--record", f],
            format!("error: --record {f} is not a regular file (a FIFO): {seeks}\n"),
        ),
        (
            vec!["sim", w, "--steps", "2", "-q", "--record", "/dev/null"],
            format!(
                "error: --record /dev/null is not a regular file (a character device): {seeks}\n"
            ),
        ),
        (
            vec!["sim", w, "--steps", "2", "-q", "--summary", f],
            format!("error: --summary {f} {unread}\n"),
        ),
        (vec!["render", w, "--out", f], format!("error: --out {f} {unread}\n")),
        (vec!["export", "urdf", w, "--robot", "r", "-o", f], format!("error: -o {f} {unread}\n")),
    ] {
        let out = roqsim_bounded(&args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), want, "{args:?}");
    }
    let out = roqsim_bounded(&["sim", w, "--steps", "2", "-q", "--summary", "/dev/null"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Class: a huge flag value is quoted clipped, never echoed back whole: every refusal of a
/// 3000-byte `--overlay`, `--size`, `--pacing`, `--set` path, model name or plugin name is a few
/// hundred bytes and says how long the value was.
#[test]
fn huge_flag_values_are_quoted_clipped() {
    let dir = tempfile::tempdir().unwrap();
    let w = common::write(
        dir.path(),
        "w.yaml",
        "sim: {timestep: 0.002, seed: 1}\ncomponents:\n  - dummy: {}\n",
    );
    let w = w.to_str().unwrap();
    let x = "x".repeat(3000);
    let set = format!("components.{x}.y=1");
    let clock = format!("clock:{x}");
    for args in [
        vec!["render", w, "--overlay", &x],
        vec!["render", w, "--overlay", &clock],
        vec!["render", w, "--size", &x],
        vec!["sim", w, "--pacing", &x],
        vec!["sim", w, "--set", &set],
        vec!["catalog", "model", &x],
        vec!["plugins", "describe", &x],
        vec!["check", &x],
    ] {
        let out = roqsim(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{}: {}", args[0], &err[..err.len().min(300)]);
        assert!(err.len() < 1000, "{} {}: {} bytes: {}", args[0], args[1], err.len(), &err[..300]);
        assert!(err.contains("… (30"), "{}: {err}", args[0]);
    }
}

/// Class: the camera a view states is bounded like a position: a `distance: 1e308` or a `lookat`
/// a million metres out sees nothing of any world (and was echoed as 309 digits), a `1e300`
/// azimuth has lost its degrees; each is refused naming its range.
#[test]
fn a_view_camera_is_bounded_like_a_position() {
    let text = refusal(
        "sim: {view: {distance: 1e308, lookat: [1e308, 0, 0], azimuth: 1e300}}\ncomponents: []\n",
    );
    for line in [
        "sim.view.distance: must be a distance within (0, 1000000] m, got 1e308",
        "sim.view.lookat: every component must be finite and within ±1000000 m, got [1e308, 0, 0]",
        "sim.view.azimuth: must be finite degrees within ±36000, got 1e300",
    ] {
        assert!(text.contains(line), "{text}\nlacks\n{line}");
    }
}

/// Class: a run that would take no step is refused with the range instead of ending at once
/// silently (`--seconds 0`, `--steps 0`), and so is a campaign of no parallel trial.
#[test]
fn a_run_of_no_step_is_refused_with_the_range() {
    let dir = tempfile::tempdir().unwrap();
    let w = common::write(dir.path(), "w.yaml", "sim: {seed: 1}\ncomponents:\n  - dummy: {}\n");
    let w = w.to_str().unwrap();
    for (args, want) in [
        (vec!["sim", w, "--seconds", "0"], "error: --seconds 0 runs no step: give a sim time of at least one physics step (sim.timestep)\n"),
        (vec!["sim", w, "--seconds", "0.0001"], "error: --seconds 0.0001 is shorter than one physics step (0.002 s): a run takes at least one step\n"),
        (vec!["sim", w, "--steps", "0"], "error: invalid value '0' for '--steps <STEPS>': takes a whole number from 1 to 18446744073709551615, got `0`\n\nFor more information, try '--help'.\n"),
        (vec!["campaign", "run", "c.yaml", "-o", "out", "--jobs", "0"], "error: invalid value '0' for '--jobs <N>': takes a whole number from 1 to 18446744073709551615, got `0`\n\nFor more information, try '--help'.\n"),
    ] {
        let out = roqsim(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&out), want, "{args:?}");
    }
}

/// Class: every user value a refusal or warning echoes is clipped to 80 characters and its
/// length, wherever it is quoted: a path (`--record`, `--override`), a flag's value in clap's
/// own text (`--steps`), a `--record-topics` glob in the log's warning.
#[test]
fn long_values_are_clipped_wherever_they_are_echoed() {
    let dir = tempfile::tempdir().unwrap();
    let w = common::write(dir.path(), "w.yaml", "sim: {seed: 1}\ncomponents:\n  - dummy: {}\n");
    let w = w.to_str().unwrap();
    let long = "x".repeat(100_000);
    let nodir = format!("/nodir/{long}");
    let rec = dir.path().join("r.mcap");
    let glob = format!("/{long}");
    let clipped = format!("{}… (", "x".repeat(73));
    for args in [
        vec!["sim", w, "--steps", "1", "-q", "--record", &nodir],
        vec!["check", w, "--override", &nodir],
        vec!["sim", w, "--steps", &long],
        vec![
            "sim",
            w,
            "--steps",
            "1",
            "-q",
            "--record",
            rec.to_str().unwrap(),
            "--record-topics",
            &glob,
        ],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_roqsim"))
            .args(&args)
            .env_remove("AMENT_PREFIX_PATH")
            .output()
            .unwrap();
        let err = stderr(&out);
        assert!(err.len() < 2_000, "{} bytes for {:?}", err.len(), &args[..3]);
        assert!(err.contains(&clipped), "{:?}: {err}", &args[..3]);
        assert!(err.contains("bytes in all)"), "{err}");
    }
}

/// Class: `check` (no `--ros`) refuses two publishers on one topic and two message types on one
/// topic, naming both entries; `sim` refuses them the same way before it runs.
#[test]
fn check_and_sim_refuse_topic_clashes_without_ros() {
    let dir = tempfile::tempdir().unwrap();
    let w = common::write(
        dir.path(),
        "w.yaml",
        "sim: {seed: 1}
components:
  - spawn_robot: {model: turtlebot4}
    name: tb
    components:
      - imu: {}
        name: imu_a
      - imu: {}
        name: imu_b
",
    );
    let w = w.to_str().unwrap();
    for verb in [vec!["check", w], vec!["sim", w, "--steps", "1", "-q"]] {
        let out = roqsim(&verb);
        assert_eq!(out.status.code(), Some(2), "{verb:?}");
        assert_eq!(
            stderr(&out),
            "error: [tb.imu_b] configure: topics.imu: `/imu/data` is already published by `tb.imu_a` (its `imu`, sensor_msgs/msg/Imu); two publishers on one topic interleave their messages: give this one another topic with its `topics:` map, or its robot a `namespace:`\n",
            "{verb:?}"
        );
    }
}
