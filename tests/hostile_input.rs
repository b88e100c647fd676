//! Hostile-but-realistic input, one test per class: numbers outside what MuJoCo or the runner can
//! hold are refused naming the key (never accepted and silently clamped, wrapped or ignored), a bad
//! request is answered with a failed result and changes nothing, and a paused run never keeps
//! stepping. docs/bounds.md lists every bound checked here.

mod common;

use std::process::Command;

use common::{assert_has, assert_sc_refused, engine, refusal};
use roqsim::context::RunState;
use roqsim::engine::sim_control::{self as sc, codes, state};

const WORLD: &str = "sim: {timestep: 0.002, seed: 1}
components:
  - box: {pose: {position: {x: 0.0, y: 0.0, z: 0.5}}, size: [0.2, 0.2, 0.2], motion: physics}
    name: crate
  - box: {pose: {position: {x: 1.0, y: 0.0}}, size: [0.3, 0.3, 0.3], motion: physics, present: false}
    name: spare
";

fn finite_state(e: &roqsim::Engine) -> bool {
    let d = e.ctx.data();
    d.qpos().iter().chain(d.qvel().iter()).all(|x| x.is_finite())
}

/// Class: numeric fields of the `sim:` block beyond MuJoCo's documented range or the runner's.
#[test]
fn sim_numbers_outside_their_range_are_refused_naming_the_key() {
    let cases: &[(&str, &[&str])] = &[
        (
            "sim: {impratio: 0}\n",
            &["sim.impratio", "must be a ratio in (0, 1000], got 0", "frictionless"],
        ),
        (
            "sim: {noslip_iterations: 4000000000}\n",
            &["sim.noslip_iterations", "must be between 0 (off) and 10000, got 4000000000"],
        ),
        (
            "sim: {timestep: 1e-320}\n",
            &["sim.timestep", "shorter than 0.000001 s", "sim time would stop advancing"],
        ),
        (
            "sim: {pacing: {factor: 1e-300}}\n",
            &["sim.pacing.factor", "within [0.001, 10000], got 1e-300", "use `asap`"],
        ),
        ("sim: {pacing: {factor: 1e9}}\n", &["sim.pacing.factor", "got 1e9"]),
        (
            "sim: {contact_override: {solimp: [0.9, 1.5, 0.001, 0.5, 0.2]}}\n",
            &[
                "sim.contact_override.solimp[1]",
                "dmax must be within [0.0001, 0.9999] (MuJoCo clamps to it), got 1.5",
                "sim.contact_override.solimp[4]",
                "power must be a power in [1, 100] (MuJoCo's default 2), got 0.2",
            ],
        ),
        (
            "sim: {contact_override: {solref: [.nan, 1]}}\n",
            &["sim.contact_override.solref[0]", "must be finite and non-zero, got NaN"],
        ),
        (
            "sim: {contact_override: {friction: [-1]}}\n",
            &["sim.contact_override.friction[0]", "must be a coefficient in [0, 1000], got -1"],
        ),
        ("sim: {sync: {timeout_s: 1e300}}\n", &["sim.sync.timeout_s", "in (0, 86400]"]),
        (
            "sim: {contact_override: {solref: [0.02, -1]}}\n",
            &[
                "sim.contact_override.solref",
                "[0.02, -1.0] mixes signs: give (timeconst, dampratio) both > 0",
            ],
        ),
        (
            "sim: {contact_override: {solref: [-100]}}\n",
            &["mixes signs", "the direct form needs both values"],
        ),
        (
            "sim: {density: 1e20, impratio: 1e300}\n",
            &[
                "sim.density",
                "must be in [0, 100000] kg/m³",
                "got 1e20",
                "sim.impratio",
                "got 1e300",
            ],
        ),
        (
            "components:\n  - dummy: {size: 1e308}\n",
            &["size", "must be in (0, 10000] m, got 1e308"],
        ),
        (
            "components:\n  - box: {pose: {position: {x: 0, y: 0}}, size: [1, 1, 1], friction: 1e308}\n",
            &[
                "components.box.friction",
                "friction coefficients must be in [0, 1000], got [1e308, 0.005, 0.0001]",
            ],
        ),
        (
            "sim: {contact_override: {solimp: []}}\n",
            &["sim.contact_override.solimp", "is empty; give 1 to 5 numbers or remove the key"],
        ),
        (
            "components:\n  - dummy: {stop_at_s: -1}\n",
            &["stop_at_s", "must be a finite sim time >= 0 s, got -1"],
        ),
    ];
    for (yaml, needles) in cases {
        let text = refusal(&format!(
            "{yaml}{}",
            if yaml.contains("components") { "" } else { "components: []\n" }
        ));
        assert_has(&text, needles);
    }
    // the edges themselves are accepted
    let mut e = engine(
        "sim: {timestep: 0.000001, impratio: 0.5, noslip_iterations: 10000, pacing: {factor: 0.001}, \
         contact_override: {solimp: [0.0001, 0.9999, 0.001, 0.5, 1]}}\ncomponents: []\n",
    );
    e.step().unwrap();
    assert_eq!(e.ctx.model().ffi().opt.noslip_iterations, 10000);
}

/// Class: CLI rates and factors: `--pacing` shares the range of `sim.pacing`, and nothing panics.
#[test]
fn cli_pacing_outside_its_range_is_refused_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("w.yaml");
    std::fs::write(&world, "components: []\n").unwrap();
    for (flag, needle) in [
        ("1e-300", "--pacing takes realtime, asap or a real-time factor, got `1e-300`: a real-time factor must be within [0.001, 10000]"),
        ("inf", "got `inf`: a real-time factor must be within"),
        ("fast", "got `fast`"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_roqsim"))
            .args(["sim", world.to_str().unwrap(), "--pacing", flag, "--steps", "1", "--seed", "1"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {err}");
        assert!(err.contains(needle), "{flag}: `{err}` lacks `{needle}`");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// Class: numeric fields of state requests: non-finite or beyond bounds is refused with the
/// standard code naming the field, nothing is written, and the run keeps stepping.
#[test]
fn state_requests_with_non_finite_or_huge_values_are_refused_and_change_nothing() {
    let mut e = engine(WORLD);
    e.step().unwrap();
    let before = sc::entity_state(&e.ctx, "crate").unwrap();
    let id = [0.0, 0.0, 0.0, 1.0];
    let bad_poses: &[([f64; 3], [f64; 4], &str)] = &[
        ([1e300, 0.0, 0.0], id, "pose.position.x = 1e300: must be finite and within ±1000000 m"),
        ([0.0, f64::NAN, 0.0], id, "pose.position.y = NaN"),
        ([0.0; 3], [1e300, 0.0, 0.0, 1e300], "pose.orientation has norm 1.4142135623730952e300"),
        ([0.0; 3], [0.0; 4], "pose.orientation has norm 0e0"),
        ([0.0; 3], [0.0, 0.0, f64::INFINITY, 1.0], "pose.orientation.z = inf: must be finite"),
    ];
    for (p, q, needle) in bad_poses {
        assert_sc_refused(
            sc::set_entity_state(&mut e.ctx, "crate", Some((*p, *q)), None),
            codes::SET_INVALID_POSE,
            needle,
        );
    }
    let bad_twists: &[([f64; 3], [f64; 3], &str)] = &[
        ([1e9, 0.0, 0.0], [0.0; 3], "twist.linear.x = 1e9: must be finite and within ±1000 m/s"),
        ([0.0; 3], [0.0, f64::NAN, 0.0], "twist.angular.y = NaN"),
    ];
    for (l, a, needle) in bad_twists {
        assert_sc_refused(
            sc::set_entity_state(&mut e.ctx, "crate", None, Some((*l, *a))),
            codes::INCORRECT_STATE,
            needle,
        );
    }
    assert_eq!(sc::entity_state(&e.ctx, "crate").unwrap(), before, "a refused request wrote state");
    // spawning at a bad pose: refused before the entity is made present
    assert_sc_refused(
        sc::spawn(&mut e.ctx, "", "spare", "", "", Some(([0.0; 3], [1e300, 0.0, 0.0, 1e300]))),
        codes::SPAWN_INVALID_POSE,
        "invalid pose for `spare`: pose.orientation has norm",
    );
    assert!(
        sc::spawnables(&e.ctx).contains(&"spare".to_string()),
        "a refused spawn left it present"
    );
    // a request within bounds still works, and the run keeps stepping with a finite state
    sc::set_entity_state(&mut e.ctx, "crate", None, Some(([999.0, 0.0, 0.0], [0.0; 3]))).unwrap();
    for _ in 0..50 {
        e.step().unwrap();
    }
    assert!(finite_state(&e));
    let s = sc::entity_state(&e.ctx, "crate").unwrap();
    assert!(
        s.position[0] > 90.0,
        "the accepted 999 m/s twist moved it {} m in 0.1 s",
        s.position[0]
    );
}

/// Class: leaving PAUSED with steps outstanding cancels them; the run never takes them later.
#[test]
fn leaving_pause_cancels_outstanding_steps_and_stepping_works_again() {
    let mut e = engine(WORLD);
    let c = &mut e.ctx;
    sc::set_state(c, state::PAUSED).unwrap();
    sc::step(c, 50_000).unwrap();
    assert_eq!(c.control.pending_steps, 50_000);
    sc::set_state(c, state::PLAYING).unwrap();
    assert_eq!(c.control.pending_steps, 0, "PLAYING kept the paused request's steps queued");
    sc::set_state(c, state::PAUSED).unwrap();
    assert_eq!(c.control.state, RunState::Paused);
    sc::step(c, 3).unwrap(); // not refused as "steps of an earlier request are still being taken"
    assert_eq!(c.control.pending_steps, 3);
}

/// Class: request enums with undefined values: an unknown ResetSimulation scope bit is refused.
#[test]
fn reset_with_undefined_scope_bits_is_refused() {
    let mut e = engine(WORLD);
    assert_sc_refused(sc::request_reset(&mut e.ctx, 8), codes::OPERATION_FAILED, "unknown ResetSimulation scope 8 (bits 0b00001000 are not defined): use SCOPE_DEFAULT 0, SCOPE_ALL 255");
    assert_sc_refused(
        sc::request_reset(&mut e.ctx, 0x13),
        codes::OPERATION_FAILED,
        "bits 0b00010000",
    );
    assert!(e.ctx.control.reset.is_none(), "a refused reset was queued");
    sc::request_reset(&mut e.ctx, 1 | 4).unwrap();
    assert!(e.ctx.control.reset.is_some());
}

/// Class: huge strings in requests are quoted clipped, not echoed back whole.
#[test]
fn a_huge_uri_is_quoted_clipped() {
    let mut e = engine(WORLD);
    let uri = "x".repeat(1 << 20);
    let r = sc::spawn(&mut e.ctx, "", &uri, "", "", None).unwrap_err();
    assert_eq!(r.code, codes::NOT_FOUND);
    assert!(r.message.len() < 400, "{} bytes echoed", r.message.len());
    assert!(
        r.message.contains(&format!("{}… (1048576 bytes in all)", "x".repeat(80))),
        "{}",
        r.message
    );
}

/// Class: documents that would make the parser spin or swell are refused before parsing.
#[test]
fn oversized_and_overnested_documents_are_refused_before_parsing() {
    let deep = format!("components: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    assert_has(
        &refusal(&deep),
        &["YAML nesting deeper than 64 levels at line 1, column 77", "unbalanced `[` or `{`"],
    );
    let many: String = std::iter::once("components:\n".to_string())
        .chain((0..2_001).map(|i| format!("  - nope{i}: {{}}\n")))
        .collect();
    assert_has(
        &refusal(&many),
        &["components: has 2001 entries; a components list may hold at most 2000"],
    );
    // 2 000 bad entries: every one reported, each once (the duplicate check is linear)
    let bad: String = std::iter::once("components:\n".to_string())
        .chain((0..2_000).map(|i| format!("  - nope{i}: {{}}\n")))
        .collect();
    let text = refusal(&bad);
    assert_has(
        &text,
        &["2000 problems in the world", "components.nope1999: unknown plugin `nope1999`"],
    );
    // a file over 8 MiB is refused from its size, before it is read
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.yaml");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(9 << 20).unwrap();
    let e = roqsim::load_world(&big, &roqsim::LoadOptions::default()).unwrap_err().to_string();
    assert_has(&e, &["is 9437184 bytes; a YAML file may be at most 8388608 bytes (8 MiB)"]);
    let e =
        roqsim::load_world(dir.path(), &roqsim::LoadOptions::default()).unwrap_err().to_string();
    assert_has(&e, &["is a directory: name a YAML file in it"]);
}

/// A small deterministic generator (xorshift64*), so a failing case is reproducible by index.
struct Gen(u64);
impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[(self.next() % xs.len() as u64) as usize]
    }
}

const FUZZ_BASE: &str = "sim:
  timestep: 0.002
  seed: 1
  iterations: 50
  impratio: 1.0
  gravity: [0.0, 0.0, -9.81]
  contact_override: {solref: [0.02, 1.0], solimp: [0.9, 0.95, 0.001, 0.5, 2.0], friction: [1.0, 1.0]}
components:
  - spawn_robot:
      model: turtlebot4
      pose: {position: {x: 0.0, y: 0.0}, orientation: {yaw: 0.5}}
    name: robot
  - box: {pose: {position: {x: 1.0, y: 0.5, z: 0.3}}, size: [0.3, 0.2, 0.1], mass: 2.0, motion: physics}
    name: crate
  - box: {pose: {position: {x: -1.5, y: 1.0}}, size: [0.2, 0.2, 1.0]}
    name: pillar
";

/// Fuzz: 400 worlds, each the base with one to three number or token replaced by a hostile value
/// (NaN, inf, huge, tiny, negative, wrapped integers, wrong types, broken syntax) or a plausible one. Each must be
/// refused with a message, or load and take 50 steps with a finite state: never a panic.
#[test]
fn fuzzed_worlds_are_refused_or_run_finite_never_panic() {
    let hostile = [
        ".nan",
        ".inf",
        "-.inf",
        "1e300",
        "-1e300",
        "1e-320",
        "0",
        "-1",
        "4000000000",
        "-0.0",
        "18446744073709551616",
        "x",
        "[]",
        "{}",
        "[1, 2",
        "}",
        "~",
        "'",
        "&a",
        "*a",
        "!!binary AA==",
        // and plausible values, so that accepted worlds are exercised too
        "0.5",
        "1.5",
        "3",
        "0.01",
        "0.25",
        "2.0",
        "0.75",
        "1",
        "0.1",
        "4",
        "0.3",
        "1.2",
        "0.05",
        "2.5",
        "0.6",
        "0.9",
        "1.1",
        "0.2",
        "0.4",
        "1.0",
    ];
    let num = regex::Regex::new(r"-?\d+(\.\d+)?").unwrap();
    let spots: Vec<(usize, usize)> =
        num.find_iter(FUZZ_BASE).map(|m| (m.start(), m.end())).collect();
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    let (mut refused_n, mut ran) = (0, 0);
    let mut failures: Vec<String> = Vec::new();
    for case in 0..400 {
        let mut doc = FUZZ_BASE.to_string();
        let k = 1 + (g.next() % 3) as usize;
        let mut chosen: Vec<(usize, usize)> = (0..k).map(|_| *g.pick(&spots)).collect();
        chosen.sort();
        chosen.dedup();
        for &(a, b) in chosen.iter().rev() {
            let v = *g.pick::<&str>(&hostile);
            doc.replace_range(a..b, v);
        }
        let outcome = std::panic::catch_unwind(|| {
            let w = match roqsim::load_world_str(
                &doc,
                &common::base(),
                &roqsim::LoadOptions::default(),
            ) {
                Ok(w) => w,
                Err(e) => return Err(e.to_string()),
            };
            let mut e = match roqsim::Engine::new(
                w,
                roqsim::EngineOptions { profile: false, seed: Some(1) },
            ) {
                Ok(e) => e,
                Err(e) => return Err(e.to_string()),
            };
            for _ in 0..50 {
                e.step().map_err(|x| format!("STEP: {x}"))?;
            }
            Ok(finite_state(&e))
        });
        let changed: Vec<&str> = doc.lines().filter(|l| !FUZZ_BASE.contains(l)).collect();
        match outcome {
            Err(_) => failures.push(format!("case {case} panicked on: {changed:?}")),
            Ok(Err(m)) if m.starts_with("STEP: ") => failures
                .push(format!("case {case}: accepted, then the run died: {m} on {changed:?}")),
            Ok(Err(m)) if m.trim().is_empty() => {
                failures.push(format!("case {case}: an empty refusal"))
            }
            Ok(Err(_)) => refused_n += 1,
            Ok(Ok(false)) => {
                failures.push(format!("case {case}: accepted, stepped non-finite: {changed:?}"))
            }
            Ok(Ok(true)) => ran += 1,
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 400 cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    println!("fuzz: {refused_n} refused, {ran} ran 50 finite steps");
    assert!(refused_n > 100 && ran > 60, "the generator should produce both: {refused_n} / {ran}");
}

/// Fuzz: 600 requests with values drawn from hostile and plausible numbers (state, spawn, delete,
/// reset with any scope, state transitions, stepping), stepping between them: each is answered
/// (a result or a refusal with a message), never a panic, and the state stays finite throughout.
#[test]
fn fuzzed_requests_are_answered_and_the_state_stays_finite() {
    let vals = [
        f64::NAN,
        f64::INFINITY,
        -f64::INFINITY,
        1e300,
        -1e300,
        1e9,
        -1e9,
        1e-300,
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.0,
        0.1,
        3.0,
        999.0,
        -0.7,
    ];
    let mut g = Gen(0xD1B5_4A32_D192_ED03);
    let mut e = engine(WORLD);
    let names = ["crate", "spare", "ghost", ""];
    let (mut ok, mut refused_n) = (0, 0);
    for i in 0..600 {
        let mut v = || *g.pick(&vals);
        let p = [v(), v(), v()];
        let q = [v(), v(), v(), v()];
        let (l, a) = ([v(), v(), v()], [v(), v(), v()]);
        let name = *g.pick(&names);
        let r: Result<(), sc::Refusal> = match g.next() % 7 {
            0 => sc::set_entity_state(&mut e.ctx, name, Some((p, q)), None),
            1 => sc::set_entity_state(&mut e.ctx, name, None, Some((l, a))),
            2 => sc::spawn(&mut e.ctx, "", name, "", "", Some((p, q))).map(|_| ()),
            3 => sc::delete(&mut e.ctx, name),
            4 => sc::request_reset(&mut e.ctx, (g.next() % 256) as u8),
            5 => sc::set_state(&mut e.ctx, (g.next() % 7) as u8),
            _ => sc::step(&mut e.ctx, g.next() % 5),
        };
        match r {
            Ok(()) => ok += 1,
            Err(f) => {
                assert!(!f.message.is_empty(), "request {i}: a refusal without a message");
                refused_n += 1;
            }
        }
        if e.ctx.control.state == RunState::Quitting {
            sc::set_state(&mut e.ctx, state::PLAYING).unwrap_err();
            e = engine(WORLD);
        }
        if let Some(scope) = e.ctx.control.reset.take() {
            e.reset_scoped(scope).unwrap();
        }
        for _ in 0..3 {
            e.step().unwrap_or_else(|x| panic!("request {i}: the run died: {x}"));
        }
        assert!(finite_state(&e), "request {i}: non-finite state");
    }
    println!("request fuzz: {ok} answered OK, {refused_n} refused");
    assert!(ok > 40 && refused_n > 100, "{ok} / {refused_n}");
}

/// Class: flags in the wrong section: a roqsim flag after `--ros-args` is refused (rcl's own
/// flags are accepted there), and after the closing `--` it works.
#[test]
fn a_roqsim_flag_inside_the_ros_arguments_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("w.yaml");
    std::fs::write(&world, "components: []\n").unwrap();
    let w = world.to_str().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_roqsim")).args(args).output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), text)
    };
    let (code, err) = run(&["sim", w, "--seed", "1", "--ros-args", "-r", "a:=b", "--steps", "100"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("`--steps` comes after --ros-args, where only ROS arguments go"), "{err}");
    let (code, err) = run(&[
        "sim",
        w,
        "--seed",
        "1",
        "--pacing",
        "asap",
        "--ros-args",
        "-r",
        "a:=b",
        "--log-level",
        "info",
        "--",
        "--steps",
        "3",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("run finished (steps): 3 steps"), "{err}");
}

/// Class: `check` passes only what runs: a world that compiles but goes non-finite in its first
/// step is refused, naming the joint and the world entry it belongs to.
#[test]
fn check_takes_one_step_and_names_the_entry_of_a_non_finite_state() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("m.xml"),
        r#"<mujoco><worldbody><body name="b" pos="0 0 1"><freejoint name="bf"/>
           <geom type="box" size="0.1 0.1 0.1" mass="1" friction="1e300 1e300 1e300"/></body></worldbody></mujoco>"#,
    )
    .unwrap();
    let w = dir.path().join("w.yaml");
    std::fs::write(
        &w,
        "components:\n  - spawn_model: {model: m.xml, motion: physics}\n    name: thing\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_roqsim"))
        .args(["check", w.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_has(
        &err,
        &[
            "the world compiles, but its first step fails: non-finite state at t=0.002000 s",
            "(joint `bf` of entity `thing`, the first value to go non-finite: check the pose, sizes, masses and friction of components.thing",
        ],
    );
}

/// Class: a refusal's fix must be one the plugin takes: a welded arm is not told to use
/// `motion: physics` (spawn_arm has no such key).
#[test]
fn a_welded_entity_refusal_names_a_fix_its_plugin_takes() {
    let mut e = engine(
        "components:\n  - spawn_arm: {model: ur5e, prefix: ur_, pos: [0, 0, 0.5], pedestal: true, default_plugins: false}\n    name: ur\n",
    );
    let r =
        sc::set_entity_state(&mut e.ctx, "ur", Some(([1.0, 0.0, 0.5], [0.0, 0.0, 0.0, 1.0])), None)
            .unwrap_err();
    assert_eq!(r.code, codes::OPERATION_FAILED);
    assert_has(
        &r.message,
        &[
            "`ur` is welded and cannot be moved: spawn_arm welds `ur5e` to the world",
            "put it on a `rail:` or a robot with `mount:`",
        ],
    );
    assert!(!r.message.contains("motion:"), "{}", r.message);
}

/// Class: parser and shape errors in plain words, at the right place: a duplicate key at its own
/// line, a tab, an integer too large, bad indentation, a NUL byte, a 2-value friction, a stray key
/// beside the plugin.
#[test]
fn parser_and_shape_errors_name_the_place_and_the_fix() {
    let cases: &[(&str, &[&str])] = &[
        (
            "sim: {timestep: 0.002}\ncomponents: []\nsim: {seed: 1}\n",
            &["YAML syntax error at line 3, column 1: duplicate entry with key \"sim\"", "a key may appear once per mapping"],
        ),
        ("sim:\n\ttimestep: 0.002\n", &["at line 2, column 1", "that is a tab: YAML indents with spaces only"]),
        ("sim: {seed: 99999999999999999999999}\n", &["sim.seed", "the integer is too large", "at most 18446744073709551615"]),
        (
            "components:\n  - box: {size: [1, 1, 1]}\n   name: b\n",
            &["at line 3, column 4", "check the indentation of line 3"],
        ),
        ("a: 1\nb: 2\nc: x\u{0}\n", &["at line 3, column 5: control characters are not allowed", "not a text file"]),
        (
            "components:\n  - box: {size: [1, 1, 1], friction: [1, 2]}\n",
            &[
                "components.box.friction: friction takes a sliding coefficient (e.g. 0.8) or the triple [sliding, torsional, rolling]; got a list of 2 numbers",
            ],
        ),
        (
            "components:\n  - box: {size: [1, 1, 1]}\n    label: b\n",
            &["components[0].label: `label` beside the plugin `box` is not an entry key", "(an entry is named with `name:`)"],
        ),
    ];
    for (yaml, needles) in cases {
        let text = refusal(yaml);
        assert_has(&text, needles);
        assert!(!text.contains("did not match any variant"), "{text}");
    }
}

/// Class: negative or fractional numbers on the command line are refused saying what the flag
/// takes, not with clap's `-- -1` tip.
#[test]
fn negative_cli_numbers_are_refused_saying_what_the_flag_takes() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.yaml");
    std::fs::write(&w, "components: []\n").unwrap();
    for (args, needle) in [
        (["--steps", "-1"], "invalid value '-1' for '--steps <STEPS>': takes a whole number from 1 to 18446744073709551615"),
        (["--seed", "-5"], "invalid value '-5' for '--seed <SEED>': takes a whole number"),
        (["--steps", "1.5"], "got `1.5`"),
        (["--seconds", "-1"], "--seconds must be a sim time within [0, 31536000] s (a year; count a longer run with --steps), got -1"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_roqsim"))
            .args(["sim", w.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: `{err}` lacks `{needle}`");
        assert!(!err.contains("-- -1"), "{err}");
    }
}

/// Class: every publish rate is a rate a run can hold: far below one per 1000 s is refused at
/// setup naming the stream (it used to overflow the step spacing and panic).
#[test]
fn a_rate_too_slow_to_hold_is_refused_not_a_panic() {
    let set = roqsim::world::overrides::parse_set("components.robot.diff_drive.odom_rate_hz=1e-17")
        .unwrap();
    let w = roqsim::load_world_str(
        "components:\n  - spawn_robot: {model: turtlebot4}\n    name: robot\n",
        &common::base(),
        &roqsim::LoadOptions { assignments: vec![set], ..Default::default() },
    )
    .unwrap();
    let e = roqsim::Engine::new(w, roqsim::EngineOptions { profile: false, seed: Some(1) })
        .err()
        .expect("refused");
    assert_has(
        &e.to_string(),
        &["odom: a rate of 1e-17 Hz is not one a run can hold: give at least 0.001 Hz"],
    );
}

/// Class: strings with control characters (a NUL reaches MuJoCo's C API as a panic) are refused
/// naming the key; a byte-order mark is accepted; brackets inside scalars are text, not nesting.
#[test]
fn control_characters_are_refused_and_scalar_text_is_not_nesting() {
    assert_has(
        &refusal("components:\n  - dummy: {}\n    name: \"a\\u0000b\"\n"),
        &["components[0].name: the string \"a\\0b\" holds a control character"],
    );
    assert_has(
        &refusal("components:\n  - spawn_robot: {model: turtlebot4, prefix: \"r\\u0000_\"}\n"),
        &["components[0].spawn_robot.prefix", "holds a control character"],
    );
    let e = roqsim::world::overrides::parse_set("components.a.name=\"x\\u0007\"").unwrap_err();
    assert!(e.to_string().contains("holds a control character"), "{e}");
    let mut e = engine("\u{feff}components:\n  - dummy: {}\n    name: \"a[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"\n");
    e.step().unwrap();
    let deep_plain = format!("components:\n  - dummy: {{}}\n    name: a{}\n", "[".repeat(70));
    common::engine(&deep_plain).step().unwrap(); // a plain scalar's brackets are text
}

/// Class: paths that are not regular files: a device (reading /dev/zero never ends), a
/// directory, as a world, a parent world or a --record-rate outside what a run can hold.
#[test]
fn non_regular_files_and_bad_record_rates_are_refused_by_kind() {
    let dir = tempfile::tempdir().unwrap();
    let e = roqsim::load_world(std::path::Path::new("/dev/zero"), &roqsim::LoadOptions::default())
        .unwrap_err()
        .to_string();
    assert_has(
        &e,
        &["world `/dev/zero` is not a regular file (a character device): name a YAML file"],
    );
    for (parent, needle) in [
        ("/dev/zero", "parent world `/dev/zero` is not a regular file (a device, pipe or socket)"),
        (dir.path().to_str().unwrap(), "is a directory: name a world YAML file in it"),
    ] {
        assert_has(&refusal(&format!("extends: {parent}\ncomponents: []\n")), &["extends", needle]);
    }
    let w = dir.path().join("w.yaml");
    std::fs::write(&w, "components: []\n").unwrap();
    for rate in ["1e-300", "1e308"] {
        let out = Command::new(env!("CARGO_BIN_EXE_roqsim"))
            .args(["sim", w.to_str().unwrap(), "--steps", "2", "--record"])
            .arg(dir.path().join("r.mcap"))
            .arg(format!("--record-rate={rate}"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{rate}: {err}");
        assert!(err.contains(&format!("--record-rate must be a rate in [0.001, 1000000] Hz (above the physics rate every step is recorded), got {rate}")), "{err}");
    }
}

/// Class: a MuJoCo compile error names the world entries whose model files the element may come
/// from (MuJoCo gives only the element and its line).
#[test]
fn a_compile_error_names_the_entries_that_attached_model_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.xml"),
        r#"<mujoco><worldbody><body name="b"><geom type="box" size="0.1"/></body></worldbody></mujoco>"#,
    )
    .unwrap();
    let text = common::refusal_in(
        "components:\n  - spawn_model: {model: bad.xml}\n    name: thing\n",
        dir.path(),
    );
    assert_has(
        &text,
        &[
            "size 1 must be positive in geom",
            "line 1",
            "the line is in that file",
            "components.thing (bad.xml, prefix ``)",
        ],
    );
}

/// Class: an ASCII STL mesh (MuJoCo reads binary STL only) is refused before MuJoCo reads it,
/// naming the file and the fix, wherever a mesh is named: an MJCF `<mesh>`, a URDF `<mesh>` and a
/// floorplan's `mesh:`. A binary STL whose 80-byte header starts with `solid` still loads.
#[test]
fn an_ascii_stl_mesh_is_refused_naming_the_file_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // a tetrahedron, as ASCII STL
    let v = [[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.1, 0.0], [0.0, 0.0, 0.1]];
    let faces = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]];
    let mut ascii = String::from("solid tet\n");
    for f in faces {
        ascii.push_str(" facet normal 0 0 0\n  outer loop\n");
        for i in f {
            let p = v[i];
            ascii.push_str(&format!("   vertex {} {} {}\n", p[0], p[1], p[2]));
        }
        ascii.push_str("  endloop\n endfacet\n");
    }
    ascii.push_str("endsolid tet\n");
    std::fs::write(d.join("tet.stl"), &ascii).unwrap();
    // the same tetrahedron as binary STL, its header starting with `solid` as some exporters write
    let mut bin = b"solid exported as binary".to_vec();
    bin.resize(80, b' ');
    bin.extend_from_slice(&(faces.len() as u32).to_le_bytes());
    for f in faces {
        bin.extend_from_slice(&[0u8; 12]);
        for i in f {
            for c in v[i] {
                bin.extend_from_slice(&(c as f32).to_le_bytes());
            }
        }
        bin.extend_from_slice(&[0u8; 2]);
    }
    std::fs::write(d.join("tet_bin.stl"), &bin).unwrap();
    let mjcf = |mesh: &str| {
        format!(
            r#"<mujoco><asset><mesh name="tet" file="{mesh}"/></asset><worldbody><body name="b"><geom type="mesh" mesh="tet"/></body></worldbody></mujoco>"#
        )
    };
    std::fs::write(d.join("ascii.xml"), mjcf("tet.stl")).unwrap();
    std::fs::write(d.join("binary.xml"), mjcf("tet_bin.stl")).unwrap();
    // plain MuJoCo 3.17 cannot read the ASCII file (so the refusal is not a limit of ours)
    let out = Command::new(common::venv_python())
        .args(["-c", "import mujoco, sys; mujoco.MjModel.from_xml_path(sys.argv[1])"])
        .arg(d.join("ascii.xml"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("perhaps this is an ASCII file?"), "{err}");
    let fix = "is an ASCII STL file; MuJoCo reads binary STL only: convert it to binary STL (e.g. `admesh --write-binary-stl=OUT.stl IN.stl`, or export it as binary STL from MeshLab or Blender) or to OBJ, and name the converted file";
    let stl = d.join("tet.stl").display().to_string();
    let r = common::refusal_in(
        "components:\n  - spawn_model: {model: ascii.xml}\n    name: thing\n",
        d,
    );
    assert_has(
        &r,
        &[&format!(
            "<mesh file=\"tet.stl\"> in `{}` names `{stl}` {fix}",
            d.join("ascii.xml").display()
        )],
    );
    let urdf = r#"<robot name="r"><link name="base"><visual><geometry><mesh filename="tet.stl"/></geometry></visual></link></robot>"#;
    std::fs::write(d.join("r.urdf"), urdf).unwrap();
    let r = common::refusal_in("components:\n  - spawn_model: {model: r.urdf}\n    name: r\n", d);
    assert_has(&r, &[&format!("mesh `tet.stl`: `{stl}` {fix}")]);
    let r = common::refusal_in("components:\n  - floorplan: {mesh: tet.stl}\n", d);
    assert_has(&r, &[&format!("mesh: `tet.stl`: the floorplan mesh `{stl}` {fix}")]);
    // the binary file with a `solid` header loads
    let e = engine(&format!(
        "components:\n  - spawn_model: {{model: {}}}\n    name: thing\n",
        d.join("binary.xml").display()
    ));
    assert_eq!(e.ctx.model().ffi().nmesh, 1);
}

/// Class: the components cap holds across `extends:` (a 1500-entry parent and a 600-entry child).
#[test]
fn the_components_cap_holds_across_extends() {
    let dir = tempfile::tempdir().unwrap();
    let list = |tag: &str, n: usize| -> String {
        (0..n).map(|i| format!("  - dummy: {{}}\n    name: {tag}{i}\n")).collect()
    };
    std::fs::write(dir.path().join("parent.yaml"), format!("components:\n{}", list("p", 1500)))
        .unwrap();
    let child = format!("extends: parent.yaml\ncomponents:\n{}", list("c", 600));
    let w = dir.path().join("child.yaml");
    std::fs::write(&w, child).unwrap();
    let e = roqsim::load_world(&w, &roqsim::LoadOptions::default()).unwrap_err().to_string();
    assert_has(&e, &["components", "with the 1500 inherited from `parent.yaml` the world has 2100 entries; a world may hold at most 2000"]);
}

/// Class: an output flag naming an input. `--record` and `--summary` pointing at the world file,
/// an `--override` file or each other are refused before anything is written: the files keep
/// their bytes (the world file used to be truncated into an MCAP before it was read).
#[test]
fn outputs_naming_an_input_are_refused_and_the_inputs_keep_their_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("w.yaml");
    let over = dir.path().join("o.yaml");
    let text = "sim: {timestep: 0.002}\ncomponents:\n  - dummy: {}\n";
    std::fs::write(&world, text).unwrap();
    std::fs::write(&over, "sim: {timestep: 0.004}\n").unwrap();
    let (w, o) = (world.to_str().unwrap(), over.to_str().unwrap());
    let out_mcap = dir.path().join("x.mcap");
    let x = out_mcap.to_str().unwrap();
    let cases: [(&[&str], String); 4] = [
        (&["--summary", w], format!("error: --summary {w} is the world file: writing it would overwrite it; name another file")),
        (&["--record", w], format!("error: --record {w} is the world file: writing it would overwrite it; name another file")),
        (&["--override", o, "--summary", o], format!("error: --summary {o} is the --override file: writing it would overwrite it; name another file")),
        (&["--record", x, "--summary", x], format!("error: --record and --summary both name {x}: name two files")),
    ];
    for (extra, want) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_roqsim"))
            .args(["sim", w, "--steps", "5", "-q"])
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(&want), "{extra:?}: {err}");
        assert_eq!(std::fs::read_to_string(&world).unwrap(), text);
        assert_eq!(std::fs::read_to_string(&over).unwrap(), "sim: {timestep: 0.004}\n");
        assert!(!out_mcap.exists(), "nothing recorded");
    }
}

/// Class: a small file whose header declares a huge content is refused from its header, before
/// anything is allocated: a 70-byte PNG height field claiming 60000 x 60000 16-bit samples (a
/// 7 GB buffer) names the per-side limit.
#[test]
fn a_height_field_declaring_a_huge_image_is_refused_from_its_header() {
    fn chunk(out: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
        out.extend((data.len() as u32).to_be_bytes());
        let start = out.len();
        out.extend(kind);
        out.extend(data);
        // CRC-32 (IEEE), bit by bit: the chunk's kind and data.
        let mut crc = !0u32;
        for &b in &out[start..] {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
            }
        }
        out.extend((!crc).to_be_bytes());
    }
    let dir = tempfile::tempdir().unwrap();
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend(60000u32.to_be_bytes());
    ihdr.extend(60000u32.to_be_bytes());
    ihdr.extend([16, 0, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &ihdr);
    // The pixel data starts (a zlib header); the decoder reads the header up to here.
    chunk(&mut png, b"IDAT", &[0x78, 0x01]);
    chunk(&mut png, b"IEND", &[]);
    let p = dir.path().join("huge.png");
    std::fs::write(&p, &png).unwrap();
    let text = common::refusal_in(
        "components:\n  - heightfield: {source: huge.png}\n    name: t\n",
        dir.path(),
    );
    assert_has(
        &text,
        &[&format!(
            "components.t.source: height field `{}` is 60000 x 60000 samples; a height field may have at most 4096 per side: downsample it (heightfield)",
            p.display()
        )],
    );
}

/// Class: a mesh or texture path that exists but is no regular file (a FIFO would block the
/// read, a directory cannot be read) is refused saying what it is, not "no file".
#[test]
fn an_existing_fifo_or_directory_mesh_or_texture_is_refused_by_kind() {
    let dir = tempfile::tempdir().unwrap();
    for n in ["plan.stl", "floor.png"] {
        assert!(Command::new("mkfifo").arg(dir.path().join(n)).status().unwrap().success());
    }
    std::fs::create_dir(dir.path().join("dir.png")).unwrap();
    let d = dir.path().display();
    for (world, want) in [
        (
            "components:\n  - floorplan: {mesh: plan.stl}\n".to_string(),
            format!("`plan.stl`: `{d}/plan.stl` is not a regular file (a FIFO): name an .stl or .obj file"),
        ),
        (
            "components:\n  - floorplan: {lines: [{id: 0, x0_m: 0, y0_m: 0, x1_m: 6, y1_m: 0}], floor: {texture: floor.png}}\n".to_string(),
            format!("`floor.png`: `{d}/floor.png` is not a regular file (a FIFO): name a .png file"),
        ),
        (
            "components:\n  - floorplan: {lines: [{id: 0, x0_m: 0, y0_m: 0, x1_m: 6, y1_m: 0}], floor: {texture: dir.png}}\n".to_string(),
            format!("`dir.png`: `{d}/dir.png` is a directory: name a .png file"),
        ),
    ] {
        let text = common::refusal_in(&world, dir.path());
        assert!(text.contains(&want), "{text}\nlacks\n{want}");
        assert!(!text.contains("no file"), "{text}");
    }
}

/// Class: setup refuses every entry's problem at once (as the parse stage does): two entries
/// refused in configure are both named, each on its own line; an entry nested under a refused one
/// is not configured (it would only repeat the problem).
#[test]
fn every_configure_refusal_of_a_world_is_reported_at_once() {
    let text = refusal(
        "components:
  - spawn_robot: {model: turtlebot4}
    name: tb
    components:
      - diff_drive: {odom_child_frame: odom}
      - ground_truth_pose: {child_frame: my frame}
      - imu: {}
        name: imu_a
      - imu: {}
        name: imu_b
",
    );
    assert_eq!(
        text,
        "[tb.diff_drive] configure: odom_child_frame: this entry publishes `odom -> odom` on /tf, a frame as its own parent: TF is a tree and refuses the loop. Name the child frame apart from its parent (change `odom_child_frame:`)
[tb.ground_truth_pose] configure: child_frame: `my frame` is not a TF frame id: ' ' is not allowed; a frame id holds letters, digits and `_`, with `/` between namespace segments (as ROS names do)"
    );
    // with the configure refusals fixed, the topic clash of the IMUs is next (`check` and `sim`
    // ask for it after setup): every clash, each naming both entries
    let text = engine(
        "components:
  - spawn_robot: {model: turtlebot4}
    name: tb
    components:
      - imu: {}
        name: imu_a
      - imu: {}
        name: imu_b
      - imu: {}
        name: imu_c
",
    )
    .topic_clashes()
    .unwrap_err()
    .to_string();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.lines().all(|l| l.contains("is already published by `tb.imu_a`")), "{text}");
}

/// Class: a whole-number key given a value past its Rust type says the range of the key, not
/// of the type (`u8`, `u32`, `i64`): the key's own check is quoted with the user's value.
#[test]
fn whole_number_keys_past_their_type_say_their_own_range() {
    let text = refusal(
        "components:
  - camera: {camera: cam, jpeg_quality: 8193}
    name: c
  - heightfield: {octaves: -1, resolution: 4294967296}
    name: hf
  - shelf: {layers: 1e30}
    name: sh
  - spawn_robot: {model: turtlebot4}
    name: tb
    components:
      - spawn_sensor: {}
        name: rplidar
        components:
          - lidar: {rays: 4294967296}
",
    );
    for line in [
        "components.c.jpeg_quality: must be 1..=100, got 8193 (camera)",
        "components.hf.octaves: must be within 1..=10, got -1 (heightfield)",
        "components.hf.resolution: must be within 2..=4096 samples per side, got 4294967296 (heightfield)",
        "components.sh.layers: the number of boards is an integer in 2..=200 (a bottom and a top board at least), got 1e30 (shelf)",
        "components.tb.rplidar.lidar.rays: must be <= 100000, got 4294967296",
    ] {
        assert!(text.contains(line), "{text}\nlacks\n{line}");
    }
    assert!(!text.contains("4294967295") && !text.contains("9223372036854775807"), "{text}");
    let frac = refusal("components:\n  - shelf: {layers: 2.5}\n    name: sh\n");
    assert_has(&frac, &["layers: the number of boards is an integer in 2..=200 (a bottom and a top board at least), got 2.5 (not a whole number) (shelf)"]);
}
