//! Contact sensing (ROS-free): `contact_impulse` integrates what a resting box weighs,
//! `contact_location` finds where a dropped ball and a resting box touch the floor, and
//! `contact_pair_override` turns a box that slid down a (gravity-tilted) slope into one that
//! sticks, on either side of the friction coefficient the slope needs.

mod common;

use std::path::PathBuf;

use common::{assert_has, engine, engine_in, refusal, refusal_in, secs};
use mujoco_rs::prelude::MjtObjBase;
use roqsim::context::payload::{ContactImpulseReport, ContactLocation};
use roqsim::plugins::observe::contact_impulse::ContactImpulseReader;
use roqsim::plugins::observe::contact_location::ContactLocationReader;
use roqsim::Engine;

const G: f64 = 9.81;

fn impulse(e: &Engine, key: &str) -> ContactImpulseReport {
    e.ctx.blackboard.get::<ContactImpulseReader>(key).expect("no impulse reader").get()
}

fn location(e: &Engine, key: &str) -> ContactLocation {
    e.ctx.blackboard.get::<ContactLocationReader>(key).expect("no location reader").get()
}

fn crate_world(mass: f64, observer: &str) -> String {
    format!(
        "sim: {{timestep: 0.002}}\ncomponents:\n  - box: {{pose: {{position: {{x: 1.0, y: -0.5}}}}, size: [0.2, 0.2, 0.2], motion: physics, mass: {mass}}}\n    name: crate\n    components:\n      - {observer}\n"
    )
}

// -------------------------------------------------------------------------------- contact_impulse

#[test]
fn a_resting_box_bills_its_weight_times_dt_every_step() {
    let m = 2.0;
    let mut e = engine(&crate_world(m, "contact_impulse: {ignore: []}"));
    let key = "contact_impulse:crate.contact_impulse";
    secs(&mut e, 1.0);
    let a = impulse(&e, key);
    secs(&mut e, 1.0);
    let b = impulse(&e, key);
    let per_step = (b.impulse_ns - a.impulse_ns) / 500.0;
    let expect = m * G * 0.002;
    eprintln!("impulse per step {per_step:.6} N·s (m·g·dt = {expect:.6}), normal {} N", b.normal_n);
    assert!((per_step / expect - 1.0).abs() < 0.01, "per step {per_step} vs {expect}");
    assert!((b.normal_n / (m * G) - 1.0).abs() < 0.01, "normal {}", b.normal_n);
    assert!((b.contact_time_s - a.contact_time_s - 1.0).abs() < 1e-9, "touching the whole second");
    assert_eq!(b.count, 4, "four corners on the floor");
    assert_eq!((b.peak_geom_a.as_str(), b.peak_geom_b.as_str()), ("crate", "floor"));
    assert!(b.peak_normal_n >= b.normal_n && b.peak_time >= 0.0 && b.peak_time <= 2.0);
    // the endpoint publishes the running total
    let ep = e.ctx.interface.all().iter().find(|x| x.name == "contact_impulse").unwrap();
    assert_eq!(ep.get_hint("ros2", "field"), Some("impulse_ns"));
    assert_eq!(ep.get_hint("ros2", "type"), Some("std_msgs/msg/Float64"));
    // a reset zeroes the totals
    e.reset().unwrap();
    let r = impulse(&e, key);
    assert_eq!(
        (r.impulse_ns, r.peak_normal_n, r.contact_time_s, r.peak_time),
        (0.0, 0.0, 0.0, -1.0)
    );
}

#[test]
fn an_ignored_floor_is_a_measured_zero() {
    let mut e = engine(&crate_world(2.0, "contact_impulse: {}"));
    secs(&mut e, 0.5);
    let r = impulse(&e, "contact_impulse:crate.contact_impulse");
    assert_eq!(
        (r.impulse_ns, r.peak_normal_n, r.contact_time_s, r.peak_time),
        (0.0, 0.0, 0.0, -1.0)
    );
    assert_eq!(r.count, 0);
}

// ------------------------------------------------------------------------------- contact_location

/// A folder of this test's own: tests of one binary run in parallel in one process, and a shared
/// folder let one test truncate the MJCF another was reading ("empty file" in a clean-clone run).
fn unique_dir(stem: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    std::env::temp_dir().join(format!("{stem}_{}_{n}", std::process::id()))
}

fn ball_dir() -> PathBuf {
    let dir = unique_dir("roqsim_contact");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("ball.xml"),
        r#"<mujoco model="ball"><worldbody><body name="ball"><geom name="ball" type="sphere" size="0.05" mass="0.5"/></body></worldbody></mujoco>"#,
    )
    .unwrap();
    dir
}

#[test]
fn a_dropped_ball_touches_the_floor_right_under_its_centre() {
    let dir = ball_dir();
    let yaml = "sim: {timestep: 0.002}\ncomponents:\n  - spawn_model: {model: ball.xml, pose: {position: {x: 1.3, y: -0.7, z: 0.5}}, motion: physics}\n    name: ball\n    components:\n      - contact_location: {ignore: [], frame: world}\n        name: world_loc\n      - contact_location: {ignore: []}\n        name: base_loc\n";
    let mut e = engine_in(yaml, &dir);
    let key = "contact_location:ball.world_loc";
    assert_eq!(location(&e, key).kind, "none");
    secs(&mut e, 1.5);
    let w = location(&e, key);
    eprintln!("world: {w:?}");
    assert!(w.in_contact && w.kind == "point" && w.count == 1, "{w:?}");
    assert!((w.x - 1.3).abs() < 1e-6 && (w.y + 0.7).abs() < 1e-6, "{w:?}");
    assert!(w.z.abs() < 1e-3, "on the floor: {}", w.z);
    assert_eq!((w.extent, w.frame_id.as_str()), (0.0, "world"));
    let b = location(&e, "contact_location:ball.base_loc");
    assert_eq!(b.frame_id, "ball");
    assert!(b.x.abs() < 1e-6 && b.y.abs() < 1e-6 && (b.z + 0.05).abs() < 1e-3, "{b:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_resting_box_is_a_line_across_its_corners() {
    let mut e = engine(&crate_world(2.0, "contact_location: {ignore: [], frame: world}"));
    secs(&mut e, 1.0);
    let r = location(&e, "contact_location:crate.contact_location");
    eprintln!("{r:?}");
    assert_eq!((r.kind.as_str(), r.count), ("line", 4));
    assert!((r.x - 1.0).abs() < 1e-4 && (r.y + 0.5).abs() < 1e-4, "{r:?}");
    assert!((r.extent - 0.2 * 2f64.sqrt()).abs() < 1e-3, "diagonal: {}", r.extent);
    // one merge radius wider than the box: the four corners are one sensing area
    let mut e = engine(&crate_world(
        2.0,
        "contact_location: {ignore: [], frame: world, merge_radius: 0.5}",
    ));
    secs(&mut e, 1.0);
    let r = location(&e, "contact_location:crate.contact_location");
    assert_eq!((r.kind.as_str(), r.count, r.extent), ("point", 1, 0.0));
    // min_force above each corner's share (2 kg · g / 4 = 4.9 N) leaves nothing
    let mut e = engine(&crate_world(2.0, "contact_location: {ignore: [], min_force: 6.0}"));
    secs(&mut e, 1.0);
    assert_eq!(location(&e, "contact_location:crate.contact_location").kind, "none");
}

#[test]
fn contact_observer_refusals() {
    let t = refusal("sim: {timestep: 0.002}\ncomponents:\n  - contact_impulse: {}\n");
    assert_has(&t, &["`contact_impulse` belongs to a robot", "requires_owner"]);
    let t = refusal("sim: {timestep: 0.002}\ncomponents:\n  - contact_location: {}\n");
    assert_has(&t, &["`contact_location` belongs to a robot", "requires_owner"]);
    let t = refusal(&crate_world(1.0, "contact_location: {frame: map}"));
    assert_has(&t, &["frame: `base` (the watched body's frame) or `world`, got `map`"]);
    let t = refusal(&crate_world(1.0, "contact_location: {merge_radius: -1.0}"));
    assert_has(&t, &["merge_radius: must be in [0, 10000] m, got -1"]);
    let t = refusal(&crate_world(1.0, "contact_impulse: {ignore: [carpet]}"));
    assert_has(&t, &["ignore[0]: no geom `carpet` in the model"]);
}

// -------------------------------------------------------------------------- contact_pair_override

/// A slope of tan θ = 0.5 made by tilting gravity; a 1 kg box on a floor of friction 0.3.
fn slope_world(extra: &str) -> (String, PathBuf) {
    let dir = unique_dir("roqsim_pair");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("slick.xml"),
        r#"<mujoco model="slick"><worldbody><light pos="0 0 5"/><geom name="floor" type="plane" size="20 20 0.1" friction="0.3 0.005 0.0001"/></worldbody></mujoco>"#,
    )
    .unwrap();
    let th = 0.5f64.atan();
    let yaml = format!(
        "sim: {{timestep: 0.002, world: slick.xml, gravity: [{gx}, 0.0, {gz}]}}\ncomponents:\n  - box: {{pose: {{position: {{x: 0.0, y: 0.0}}}}, size: [0.2, 0.2, 0.2], motion: physics, mass: 1.0, friction: 0.3}}\n    name: crate\n{extra}",
        gx = G * th.sin(),
        gz = -G * th.cos()
    );
    (yaml, dir)
}

fn slide(extra: &str) -> f64 {
    let (yaml, dir) = slope_world(extra);
    let mut e = engine_in(&yaml, &dir);
    secs(&mut e, 0.2);
    let b = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_BODY, "crate").unwrap();
    let x0 = e.ctx.data().xpos()[b][0];
    secs(&mut e, 1.0);
    e.ctx.data().xpos()[b][0] - x0
}

#[test]
fn a_pair_override_makes_a_sliding_box_stick_past_the_slopes_friction() {
    let th = 0.5f64.atan();
    // mixed friction max(0.3, 0.3) < tan θ: the box slides at g (sin θ − μ cos θ)
    let free = slide("");
    let a = G * (th.sin() - 0.3 * th.cos());
    eprintln!("no override: slid {free:.4} m (the 1 s after 0.2 s of a = {a:.4} m/s²)");
    let expect = a * (1.2f64.powi(2) - 0.2f64.powi(2)) / 2.0;
    assert!((free / expect - 1.0).abs() < 0.03, "slid {free} vs {expect}");
    // pair friction 0.45 < 0.5: still slides, slower, at the pair's coefficient
    let slow = slide("  - contact_pair_override: {geom1: crate, geom2: floor, friction: 0.45}\n");
    let a = G * (th.sin() - 0.45 * th.cos());
    let expect = a * (1.2f64.powi(2) - 0.2f64.powi(2)) / 2.0;
    eprintln!("mu 0.45: slid {slow:.4} m vs {expect:.4}");
    assert!((slow / expect - 1.0).abs() < 0.05, "slid {slow} vs {expect}");
    // pair friction 0.55 > 0.5: it sticks — what is left is MuJoCo's soft-contact creep
    // (measured 6 mm in the second, constant speed), fifty times less than the 0.45 slide
    let stuck = slide("  - contact_pair_override: {geom1: floor, geom2: crate, friction: [0.55, 0.005, 0.0001]}\n");
    eprintln!("mu 0.55: moved {stuck:.6} m");
    assert!(stuck.abs() < 0.01 && stuck.abs() < slow / 50.0, "moved {stuck}");
    // and the compiled pair holds the stated coefficients
    let (yaml, dir) = slope_world(
        "  - contact_pair_override: {geom1: crate, geom2: floor, friction: 0.55, condim: 4}\n",
    );
    let e = engine_in(&yaml, &dir);
    let m = e.ctx.model();
    assert_eq!(m.ffi().npair, 1);
    assert_eq!(m.pair_friction()[0], [0.55, 0.55, 0.005, 0.0001, 0.0001]);
    assert_eq!(m.pair_dim()[0], 4);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn contact_pair_override_refusals() {
    let (yaml, dir) =
        slope_world("  - contact_pair_override: {geom1: crate, geom2: rug, friction: 0.5}\n");
    let t = refusal_in(&yaml, &dir);
    assert_has(&t, &["geom2: no geom `rug` in the world built so far (this entry sees the world definition and the entries above it; name a compiled geom, prefix included, and place this entry after the one that builds it)"]);
    let (yaml, dir) = slope_world("  - contact_pair_override: {geom1: crate, geom2: floor}\n");
    let t = refusal_in(&yaml, &dir);
    assert_has(&t, &["overrides nothing: give at least one of friction, condim, solref, solreffriction, solimp, margin, gap"]);
    let (yaml, dir) =
        slope_world("  - contact_pair_override: {geom1: crate, geom2: crate, condim: 3}\n");
    assert_has(
        &refusal_in(&yaml, &dir),
        &["geom2: is geom1 again (`crate`): a pair is two different geoms"],
    );
    let (yaml, dir) =
        slope_world("  - contact_pair_override: {geom1: crate, geom2: floor, condim: 2}\n");
    assert_has(
        &refusal_in(&yaml, &dir),
        &["condim: MuJoCo's contact dimensionality is 1, 3, 4 or 6, got 2"],
    );
    let (yaml, dir) = slope_world(
        "  - contact_pair_override: {geom1: crate, geom2: floor, friction: [0.5, 0.1]}\n",
    );
    assert_has(&refusal_in(&yaml, &dir), &["friction: 1, 3 or 5 numbers (sliding; sliding, torsional, rolling; or MuJoCo's five), got 2"]);
    let (yaml, dir) = slope_world(
        "  - contact_pair_override: {geom1: crate, geom2: floor, solref: [0.02, -1.0]}\n",
    );
    assert_has(&refusal_in(&yaml, &dir), &["solref: [timeconst, dampratio] both > 0, or [-stiffness, -damping] both < 0, got [0.02, -1]"]);
    std::fs::remove_dir_all(&dir).ok();
}
