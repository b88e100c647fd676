//! Hostile-but-realistic input, one test per class: numbers outside what MuJoCo or the runner can
//! hold are refused naming the key (never accepted and silently clamped, wrapped or ignored), a bad
//! request is answered with a failed result and changes nothing, and a paused run never keeps
//! stepping. docs/bounds.md lists every bound checked here.

mod common;

use std::process::Command;

use common::{assert_has, engine, refusal};
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

#[track_caller]
fn refused<T: std::fmt::Debug>(r: Result<T, sc::Refusal>, code: u8, needle: &str) {
    let e = r.unwrap_err();
    assert_eq!(e.code, code, "{}", e.message);
    assert!(e.message.contains(needle), "`{}` lacks `{needle}`", e.message);
}

/// Class: numeric fields of the `sim:` block beyond MuJoCo's documented range or the runner's.
#[test]
fn sim_numbers_outside_their_range_are_refused_naming_the_key() {
    let cases: &[(&str, &[&str])] = &[
        (
            "sim: {impratio: 0}\n",
            &["sim.impratio", "must be a finite ratio > 0, got 0", "frictionless"],
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
                "power must be a power >= 1, got 0.2",
            ],
        ),
        (
            "sim: {contact_override: {solref: [.nan, 1]}}\n",
            &["sim.contact_override.solref[0]", "must be finite, got NaN"],
        ),
        (
            "sim: {contact_override: {friction: [-1]}}\n",
            &["sim.contact_override.friction[0]", "must be a finite coefficient >= 0, got -1"],
        ),
        ("sim: {sync: {timeout_s: 1e300}}\n", &["sim.sync.timeout_s", "in (0, 86400]"]),
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
        refused(
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
        refused(
            sc::set_entity_state(&mut e.ctx, "crate", None, Some((*l, *a))),
            codes::INCORRECT_STATE,
            needle,
        );
    }
    assert_eq!(sc::entity_state(&e.ctx, "crate").unwrap(), before, "a refused request wrote state");
    // spawning at a bad pose: refused before the entity is made present
    refused(
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
    refused(
        sc::request_reset(&mut e.ctx, 8),
        codes::OPERATION_FAILED,
        "unknown ResetSimulation scope 8 (bits 0b00001000 are not defined): use SCOPE_DEFAULT 0, SCOPE_ALL 255",
    );
    refused(sc::request_reset(&mut e.ctx, 0x13), codes::OPERATION_FAILED, "bits 0b00010000");
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
