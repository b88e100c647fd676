//! `navigator` avoidance beyond the probe: `avoidance.steer` (give_way, orca) steering around
//! what moves, the way out of two navigators holding for each other, and the keys that belong to
//! the other output. ROS-free; every test asserts measured clearances, phases or exact refusals.

use roqsim::plugins::nav::navigator::{NavHandle, NavPhase};
use roqsim::plugins::observe::contact_monitor::ContactReader;
use roqsim::Engine;

mod common;
use common::*;

/// Room A of the two-room floorplan (x 0..5, y 0..4), closed at x = 5, and `extra` entries.
fn room(extra: &str) -> String {
    format!(
        "sim: {{timestep: 0.002}}
components:
  - floorplan:
      lines:
        - {{id: 0, x0_m: 0.0, y0_m: 0.0, x1_m: 5.0, y1_m: 0.0}}
        - {{id: 1, x0_m: 5.0, y0_m: 0.0, x1_m: 5.0, y1_m: 4.0}}
        - {{id: 2, x0_m: 5.0, y0_m: 4.0, x1_m: 0.0, y1_m: 4.0}}
        - {{id: 3, x0_m: 0.0, y0_m: 4.0, x1_m: 0.0, y1_m: 0.0}}
      height: 2.5
      thickness: 0.12
{extra}"
    )
}

fn bot(name: &str, x: f64, y: f64, yaw: f64, nav: &str) -> String {
    format!(
        "  - spawn_robot: {{model: turtlebot4, prefix: {name}_, namespace: {name}, pose: {{position: {{x: {x}, y: {y}}}, orientation: {{yaw: {yaw}}}}}}}
    name: {name}
    components:
      - contact_monitor: {{}}
      - navigator: {nav}
"
    )
}

fn handle(e: &Engine, entity: &str) -> NavHandle {
    e.ctx.blackboard.get::<NavHandle>(&format!("nav:{entity}")).unwrap().clone()
}

fn first_contact(e: &Engine, entity: &str) -> f64 {
    e.ctx
        .blackboard
        .get::<ContactReader>(&format!("contact_monitor:{entity}.contact_monitor"))
        .unwrap()
        .get()
        .first_time
}

fn dist(a: [f64; 2], b: [f64; 2]) -> f64 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}

/// One robot driving (exact route) from (0.8, 2) to (4.4, 2) past a walker; returns the closest
/// centre distance between the two, the robot's first contact time, and its final phase.
fn past_the_walker(steer: &str, walker: &str) -> (f64, f64, NavPhase, String) {
    let nav = format!(
        "{{speed: 0.3, goals: [[4.4, 2.0]], route_mode: exact, avoidance: {{stop: false, steer: {steer}}}}}"
    );
    let world = room(&format!(
        "{}  - walker: {walker}\n    name: person\n",
        bot("robot", 0.8, 2.0, 0.0, &nav)
    ));
    let mut e = engine(&world);
    let h = handle(&e, "robot");
    let mut closest = f64::INFINITY;
    for _ in 0..(40.0 / e.dt()) as u64 {
        e.step().unwrap();
        closest = closest.min(dist(body_xy(&e, "robot_base_link"), body_xy(&e, "person")));
        if matches!(h.state().phase, NavPhase::Arrived | NavPhase::Failed) {
            break;
        }
    }
    (closest, first_contact(&e, "robot"), h.state().phase, format!("{:?}", h.state()))
}

const STANDING: &str = "{pos: [2.6, 2.0], goal_endpoint: false}";
const HEAD_ON: &str =
    "{waypoints: [[4.2, 2.0], [0.3, 2.0]], loop: false, speed: 0.5, goal_endpoint: false}";

#[test]
fn without_a_model_the_robot_drives_into_the_person_it_did_not_plan_for() {
    let (closest, contact, _, _) = past_the_walker("none", STANDING);
    eprintln!("steer none: closest {closest:.4} m, first contact at {contact} s");
    assert!(contact > 0.0, "it touched the person (first contact at {contact} s)");
    assert!(closest < 0.26 + 0.2, "centres {closest:.3} m apart");
}

#[test]
fn give_way_steers_around_a_standing_person_and_arrives() {
    let (closest, contact, phase, err) = past_the_walker("give_way", STANDING);
    eprintln!("give_way, standing: closest {closest:.4} m");
    assert_eq!(phase, NavPhase::Arrived, "{err}");
    assert_eq!(contact, -1.0, "no contact");
    // its disc (half the probe width, 0.3 m) and the person's (0.26 m) stay apart
    assert!(closest >= 0.3 + 0.26 - 0.02, "centres came {closest:.4} m close");
}

#[test]
fn orca_steers_around_a_person_walking_head_on() {
    let (none, c0, _, _) = past_the_walker("none", HEAD_ON);
    let (closest, contact, phase, err) = past_the_walker("orca", HEAD_ON);
    eprintln!("head-on: none {none:.4} m (contact {c0}), orca {closest:.4} m");
    assert!(c0 > 0.0, "without a model the two collide");
    assert_eq!(phase, NavPhase::Arrived, "{err}");
    assert_eq!(contact, -1.0, "no contact");
    assert!(closest >= 0.3 + 0.26 - 0.05, "centres came {closest:.4} m close");
}

/// Two robots on one line, facing each other, each driving (exact) to where the other starts:
/// `a` from `from` to `to`, `b` back. Returns the engine, the closest centre distance, whether `a`
/// ever gave way and whether `b` gave way to `a`.
fn face_to_face_at(
    [a_name, b_name]: [&str; 2],
    from: [f64; 2],
    to: [f64; 2],
    nav_extra: &str,
) -> (Engine, f64, bool, bool) {
    let nav = |g: [f64; 2]| {
        format!("{{speed: 0.3, goals: [[{}, {}]], route_mode: exact, avoidance: {{yield_time: 1.0{nav_extra}}}}}", g[0], g[1])
    };
    let yaw = (to[1] - from[1]).atan2(to[0] - from[0]);
    let world = room(&format!(
        "{}{}",
        bot(a_name, from[0], from[1], yaw, &nav(to)),
        bot(b_name, to[0], to[1], yaw + std::f64::consts::PI, &nav(from))
    ));
    let mut e = engine(&world);
    let (a, b) = (handle(&e, a_name), handle(&e, b_name));
    let (a_body, b_body) = (format!("{a_name}_base_link"), format!("{b_name}_base_link"));
    let mut closest = f64::INFINITY;
    let (mut a_yielded, mut b_yielded) = (false, false);
    for _ in 0..(90.0 / e.dt()) as u64 {
        e.step().unwrap();
        closest = closest.min(dist(body_xy(&e, &a_body), body_xy(&e, &b_body)));
        a_yielded |= a.state().yielding_to.is_some();
        b_yielded |= b.state().yielding_to.as_deref() == Some(a_name);
        if a.state().phase == NavPhase::Arrived && b.state().phase == NavPhase::Arrived {
            break;
        }
    }
    (e, closest, a_yielded, b_yielded)
}

/// [`face_to_face_at`] along y = 2: alpha from x = 1 to x = 4, bravo back.
fn face_to_face(nav_extra: &str) -> (Engine, f64, bool, bool) {
    face_to_face_at(["alpha", "bravo"], [1.0, 2.0], [4.0, 2.0], nav_extra)
}

#[test]
fn two_navigators_holding_for_each_other_resolve_by_name_and_both_arrive() {
    let (e, closest, a_yielded, b_yielded) = face_to_face("");
    let (a, b) = (handle(&e, "alpha").state(), handle(&e, "bravo").state());
    eprintln!("deadlock: closest {closest:.4} m, at {:.1} s", e.ctx.sim_time());
    eprintln!("alpha {a:?}\nbravo {b:?} a_yielded {a_yielded} b_yielded {b_yielded}");
    assert_eq!(a.phase, NavPhase::Arrived, "{a:?}");
    assert_eq!(b.phase, NavPhase::Arrived, "{b:?}");
    assert!(b_yielded && !a_yielded, "bravo (the later name) gives way, alpha waits");
    assert_eq!(first_contact(&e, "alpha"), -1.0);
    assert_eq!(first_contact(&e, "bravo"), -1.0);
    assert!(dist(body_xy(&e, "alpha_base_link"), [4.0, 2.0]) <= 0.25);
    assert!(dist(body_xy(&e, "bravo_base_link"), [1.0, 2.0]) <= 0.25);
}

/// The log lines a run writes (tracing, this thread only), for counting warnings.
fn logged<T>(f: impl FnOnce() -> T) -> (T, String) {
    use std::sync::{Arc, Mutex};
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buf = Buf::default();
    let w = buf.clone();
    let sub = tracing_subscriber::fmt().with_ansi(false).with_writer(move || w.clone()).finish();
    let out = tracing::subscriber::with_default(sub, f);
    let text = String::from_utf8_lossy(&buf.0.lock().unwrap()).into_owned();
    (out, text)
}

#[test]
fn a_deadlock_on_a_vertical_line_resolves_either_way_round_and_is_told_once() {
    // delta (the later name) gives way driving up (+y) and driving down: the first used to end
    // its yield at once, judging the other "behind" from a position never measured
    for (from, to) in [([2.5, 3.4], [2.5, 0.6]), ([2.5, 0.6], [2.5, 3.4])] {
        let ((e, closest, c_yielded, d_yielded), log) =
            logged(|| face_to_face_at(["charlie", "delta"], from, to, ""));
        let (c, d) = (handle(&e, "charlie").state(), handle(&e, "delta").state());
        let told = log.matches("each hold for the other (deadlock)").count();
        eprintln!(
            "charlie from {from:?}: closest {closest:.4} m, at {:.1} s, told {told}",
            e.ctx.sim_time()
        );
        eprintln!("charlie {c:?}\ndelta {d:?}");
        assert_eq!(c.phase, NavPhase::Arrived, "{c:?}");
        assert_eq!(d.phase, NavPhase::Arrived, "{d:?}");
        assert!(d_yielded && !c_yielded, "delta (the later name) gives way, charlie waits");
        assert_eq!(first_contact(&e, "charlie"), -1.0);
        assert_eq!(first_contact(&e, "delta"), -1.0);
        assert!(dist(body_xy(&e, "charlie_base_link"), to) <= 0.25);
        assert!(dist(body_xy(&e, "delta_base_link"), from) <= 0.25);
        assert_eq!(told, 1, "one warning for the one standoff:\n{log}");
    }
}

#[test]
fn two_orca_navigators_pass_each_other_without_holding() {
    let (e, closest, a_yielded, b_yielded) = face_to_face(", steer: orca");
    let (a, b) = (handle(&e, "alpha").state(), handle(&e, "bravo").state());
    eprintln!("orca pair: closest {closest:.4} m, at {:.1} s", e.ctx.sim_time());
    eprintln!("alpha {a:?}\nbravo {b:?} a_yielded {a_yielded} b_yielded {b_yielded}");
    assert_eq!(a.phase, NavPhase::Arrived, "{a:?}");
    assert_eq!(b.phase, NavPhase::Arrived, "{b:?}");
    assert!(!a_yielded && !b_yielded, "no deadlock to resolve");
    assert_eq!(first_contact(&e, "alpha"), -1.0);
    assert_eq!(first_contact(&e, "bravo"), -1.0);
}

#[test]
fn steering_is_deterministic() {
    let run = || {
        let (e, _, _, _) = face_to_face(", steer: orca");
        e.ctx.data().qpos().iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
}

#[test]
fn keys_of_the_other_output_are_refused_naming_the_key() {
    let prop = |nav: &str| {
        room(&format!(
            "  - box: {{pose: {{position: {{x: 1.0, y: 1.0}}}}, size: [0.3, 0.3, 0.3], motion: driven}}
    name: cart
    components:
      - navigator: {nav}
"
        ))
    };
    let r = refusal(&prop(
        "{speed: 0.3, output: mocap, heading_gain: 3.0, recovery: {stuck_time: 2.0}}",
    ));
    assert_has(&r, &[
        "heading_gain: shapes the twist a drive output sends through a base controller, and this navigator writes a mocap body (`output: mocap`), which follows its path exactly: drop the key",
        "recovery: shapes the twist a drive output sends",
    ]);
    // a key of the wrong type hides none of the other keys' refusals: all in one message
    let r = refusal(&prop(
        "{speed: 0.3, output: mocap, arrival_radius: wide, heading_gain: 3.0, yaw_rate: -1}",
    ));
    assert_has(&r, &[
        "arrival_radius: must be a number, got the string \"wide\"",
        "yaw_rate: must be in [0, 10000] rad/s, got -1",
        "heading_gain: shapes the twist a drive output sends through a base controller, and this navigator writes a mocap body (`output: mocap`), which follows its path exactly: drop the key",
    ]);
    let r = refusal(&prop("{speed: 0.3, turn_in_place: 0.5}"));
    assert_has(&r, &["turn_in_place: shapes the twist a drive output sends through a base controller, and this navigator writes a mocap body (`output: auto` found no base controller on entity `cart`), which follows its path exactly: drop the key"]);
    let r = refusal(&prop("{speed: 0.3, avoidance: {steer: give_way}}"));
    assert_has(&r, &["avoidance.steer: steers a base through its controller, and this navigator writes a mocap body (`output: auto` found no base controller on entity `cart`), which follows its path exactly: use `output: drive`, or a `walker` with `avoidance: true` for a person that gives way"]);
    let r =
        refusal(&room(&bot("robot", 1.0, 1.0, 0.0, "{speed: 0.3, output: drive, yaw_rate: 2.0}")));
    assert_has(&r, &["yaw_rate: turns a mocap body, and this navigator drives a base through its controller (`output: drive`), whose turn rate is `max_angular_vel`: drop the key"]);
    let r = refusal(&room(&bot("robot", 1.0, 1.0, 0.0, "{speed: 0.3, yaw_rate: 2.0}")));
    assert_has(&r, &["yaw_rate: turns a mocap body, and this navigator drives a base through its controller (`output: auto` found entity `robot`'s base controller)"]);
    let r = refusal(&room(&bot(
        "robot",
        1.0,
        1.0,
        0.0,
        "{speed: 0.3, avoidance: {params: {radius: 0.4}}}",
    )));
    assert_has(&r, &["avoidance.params.radius: tunes the steering model, and `avoidance.steer` is `none`: set `steer: give_way` or `steer: orca`, or drop the key"]);
    let r = refusal(&room(&bot(
        "robot",
        1.0,
        1.0,
        0.0,
        "{speed: 0.3, avoidance: {steer: orca, params: {time_horizon: 0}}}",
    )));
    assert_has(&r, &["avoidance.params.time_horizon: must be in (0, 86400] s, got 0"]);
    let r =
        refusal(&room(&bot("robot", 1.0, 1.0, 0.0, "{speed: 0.3, avoidance: {steer: swerve}}")));
    assert_has(
        &r,
        &[
            "avoidance.steer",
            "unknown variant `swerve`, expected one of `none`, `give_way`, `orca`",
        ],
    );
}
