//! `navigator`: robots and driven props that move by themselves. ROS-free; every test asserts
//! measured values (poses reached, contacts, cross-track error, seeded dwells) or exact refusals.

use roqsim::context::payload::{ActionCall, ActionOutcome, GoalStatus, NavGoal, NavPose, Payload};
use roqsim::nav::path::Polyline;
use roqsim::plugins::nav::navigator::{NavHandle, NavPhase};
use roqsim::Engine;

mod common;
use common::*;

/// The two-room floorplan (room A x 0..5, room B x 5..10, y 0..4, a 0.9 m door in x = 5 centred
/// at y = 2) with the crate, the bin, and `robot` spawned from `robot_entry`.
fn floorplan(robot_entry: &str) -> String {
    format!(
        "sim: {{timestep: 0.002}}
components:
  - floorplan:
      lines:
        - {{id: 0, x0_m: 0.0, y0_m: 0.0, x1_m: 10.0, y1_m: 0.0}}
        - {{id: 1, x0_m: 10.0, y0_m: 0.0, x1_m: 10.0, y1_m: 4.0}}
        - {{id: 2, x0_m: 10.0, y0_m: 4.0, x1_m: 0.0, y1_m: 4.0}}
        - {{id: 3, x0_m: 0.0, y0_m: 4.0, x1_m: 0.0, y1_m: 0.0}}
        - {{id: 4, x0_m: 5.0, y0_m: 0.0, x1_m: 5.0, y1_m: 4.0}}
      doors: [{{line_id: 4, t: 0.5, width_m: 0.9}}]
      height: 2.5
      thickness: 0.12
      opening_height: 2.0
  - box: {{pose: {{position: {{x: 1.0, y: 3.2}}}}, size: [0.4, 0.4, 0.8]}}
    name: crate
  - cylinder: {{pose: {{position: {{x: 8.5, y: 3.0}}}}, radius: 0.15, height: 0.6}}
    name: bin
{robot_entry}"
    )
}

fn turtlebot(x: f64, y: f64, yaw: f64, nav: &str) -> String {
    format!(
        "  - spawn_robot: {{model: turtlebot4, pose: {{position: {{x: {x}, y: {y}}}, orientation: {{yaw: {yaw}}}}}}}
    name: robot
    components:
      - contact_monitor: {{}}
      - navigator: {nav}
"
    )
}

fn nav(e: &Engine) -> NavHandle {
    e.ctx.blackboard.get::<NavHandle>("nav:robot").unwrap().clone()
}

/// Step until the navigator leaves Moving/Dwelling/… or `max_s` passes; returns the trace of the
/// base's (x, y) every 10 steps.
fn run_until_done(e: &mut Engine, body: &str, max_s: f64) -> Vec<[f64; 2]> {
    let key = e.ctx.blackboard.keys().find(|k| k.starts_with("nav:")).unwrap().to_string();
    let h = e.ctx.blackboard.get::<NavHandle>(&key).unwrap().clone();
    let mut trace = Vec::new();
    let n = (max_s / e.dt()) as u64;
    for i in 0..n {
        e.step().unwrap();
        if i % 10 == 0 {
            trace.push(body_xy(e, body));
        }
        if matches!(h.state().phase, NavPhase::Arrived | NavPhase::Failed) {
            break;
        }
    }
    trace
}

/// Where the trace crosses x = 5 (the divider), by linear interpolation.
fn door_crossing(trace: &[[f64; 2]]) -> f64 {
    let w =
        trace.windows(2).find(|w| w[0][0] < 5.0 && w[1][0] >= 5.0).expect("never crossed x = 5");
    let t = (5.0 - w[0][0]) / (w[1][0] - w[0][0]);
    w[0][1] + t * (w[1][1] - w[0][1])
}

#[test]
fn a_turtlebot_plans_through_the_door_and_arrives_without_a_contact() {
    let mut e = engine(&floorplan(&turtlebot(
        1.0,
        1.0,
        0.0,
        "{speed: 0.3, goals: [[8.0, 1.5]], arrival_radius: 0.2}",
    )));
    let trace = run_until_done(&mut e, "base_link", 90.0);
    let s = nav(&e).state();
    assert_eq!(s.phase, NavPhase::Arrived, "{s:?}");
    let end = body_xy(&e, "base_link");
    let d = (end[0] - 8.0).hypot(end[1] - 1.5);
    assert!(d <= 0.2, "ended {d:.3} m from the goal at {end:?}");
    let y = door_crossing(&trace);
    assert!(
        (y - 2.0).abs() < 0.45 - 0.17,
        "crossed the divider at y = {y:.3}, outside the door's clear width"
    );
    let c = robot_contact(&e);
    assert!(
        !c.in_contact && c.first_time < 0.0,
        "touched {} / {} at t = {}",
        c.geom_a,
        c.geom_b,
        c.first_time
    );
    assert_eq!(s.reached, 1);
    assert!(!s.stuck && s.recoveries == 0, "{s:?}");
}

/// A TurtleBot sent to (3, 1, yaw 2.0) in room A: its heading when it arrives (and 1 s later),
/// with `extra` keys.
fn final_yaw_error(extra: &str) -> (f64, f64) {
    let mut e = engine(&floorplan(&turtlebot(
        1.0,
        1.0,
        0.0,
        &format!("{{speed: 0.3, goals: [[3.0, 1.0, 2.0]]{extra}}}"),
    )));
    run_until_done(&mut e, "base_link", 60.0);
    let s = nav(&e).state();
    assert_eq!(s.phase, NavPhase::Arrived, "{s:?}");
    let yaw = |e: &Engine| {
        let m = e.ctx.model();
        let b = m.name_to_id(mujoco_rs::prelude::MjtObjBase::mjOBJ_BODY, "base_link").unwrap();
        roqsim::math::yaw_of(&e.ctx.data().xquat()[b])
    };
    let at = (yaw(&e) - 2.0).abs();
    secs(&mut e, 1.0);
    (at, (yaw(&e) - 2.0).abs())
}

#[test]
fn a_goal_yaw_is_reached_within_yaw_goal_tolerance() {
    let (at, later) = final_yaw_error("");
    eprintln!("default tolerance: yaw error {at:.4} rad on arrival, {later:.4} rad 1 s later");
    assert!(at <= 0.02, "arrived {at:.4} rad off the goal yaw (default tolerance 0.02)");
    assert!(later <= 0.02, "settled {later:.4} rad off");
    let (loose, _) = final_yaw_error(", yaw_goal_tolerance: 0.2");
    eprintln!("yaw_goal_tolerance 0.2: yaw error {loose:.4} rad on arrival");
    assert!(loose <= 0.2 && loose > 0.02, "a looser tolerance stops sooner: {loose:.4} rad");
}

#[test]
fn pure_pursuit_keeps_cross_track_error_under_the_lookahead() {
    let mut e = engine(&floorplan(&turtlebot(
        1.0,
        1.0,
        0.0,
        "{speed: 0.3, goals: [[8.0, 1.5]], tracker: pure_pursuit, lookahead: 0.5}",
    )));
    let h = nav(&e);
    let mut worst: f64 = 0.0;
    let mut path = Polyline::default();
    for _ in 0..(90.0 / e.dt()) as u64 {
        e.step().unwrap();
        let st = h.state();
        if st.phase == NavPhase::Moving {
            if path.points() != st.path.as_slice() {
                path = Polyline::new(st.path.clone());
            }
            let (_, d) = path.project(body_xy(&e, "base_link"), 0.0, 1e9);
            worst = worst.max(d);
        }
        if matches!(st.phase, NavPhase::Arrived | NavPhase::Failed) {
            break;
        }
    }
    assert_eq!(h.state().phase, NavPhase::Arrived, "{:?}", h.state());
    assert!(worst < 0.5, "cross-track error reached {worst:.3} m (lookahead 0.5 m)");
    assert!(worst > 0.0);
    assert!(!robot_contact(&e).in_contact);
}

#[test]
fn an_ackermann_car_and_an_omni_base_reach_the_same_goal() {
    for (model, body) in [("ackermann_car", "base_link"), ("omni_base", "base_link")] {
        let robot = format!(
            "  - spawn_robot: {{model: {model}, pose: {{position: {{x: 2.0, y: 2.0}}}}}}
    name: robot
    components:
      - contact_monitor: {{}}
      - navigator: {{speed: 0.5, goals: [[8.0, 1.8]], arrival_radius: 0.3}}
"
        );
        let mut e = engine(&floorplan(&robot));
        let trace = run_until_done(&mut e, body, 60.0);
        let s = nav(&e).state();
        assert_eq!(s.phase, NavPhase::Arrived, "{model}: {s:?}");
        let end = body_xy(&e, body);
        assert!((end[0] - 8.0).hypot(end[1] - 1.8) <= 0.3, "{model} ended at {end:?}");
        let y = door_crossing(&trace);
        assert!((y - 2.0).abs() < 0.3, "{model} crossed at y = {y:.3}");
        let c = robot_contact(&e);
        assert!(!c.in_contact, "{model} touched {} / {}", c.geom_a, c.geom_b);
    }
}

/// A box on the route after planning: `stop` holds until it is moved away; `reroute` goes around.
fn blocked_world(avoid: &str) -> String {
    let robot = turtlebot(
        1.0,
        2.0,
        0.0,
        &format!("{{speed: 0.3, goals: [[4.0, 2.0]], avoidance: {avoid}}}"),
    );
    format!(
        "{}  - box: {{pose: {{position: {{x: 2.0, y: 8.0}}}}, size: [0.4, 0.4, 0.5], motion: physics}}
    name: obstacle
",
        floorplan(&robot)
    )
}

fn place_obstacle(e: &mut Engine, x: f64, y: f64) {
    roqsim::engine::sim_control::set_entity_state(
        &mut e.ctx,
        "obstacle",
        Some(([x, y, 0.25], [0.0, 0.0, 0.0, 1.0])),
        Some(([0.0; 3], [0.0; 3])),
    )
    .unwrap();
}

#[test]
fn stop_holds_before_a_box_dropped_on_the_route_until_it_is_removed() {
    let mut e = engine(&blocked_world("{stop: true}"));
    let h = nav(&e);
    secs(&mut e, 1.0);
    assert_eq!(h.state().phase, NavPhase::Moving);
    place_obstacle(&mut e, 2.8, 2.0);
    secs(&mut e, 8.0);
    let s = h.state();
    assert_eq!(s.phase, NavPhase::Blocked, "{s:?}");
    let held = body_xy(&e, "base_link");
    assert!(held[0] < 2.8 - 0.2 - 0.17, "stopped at x = {:.3}, in front of the box", held[0]);
    secs(&mut e, 5.0);
    let still = body_xy(&e, "base_link");
    assert!((still[0] - held[0]).abs() < 0.01, "crept from {held:?} to {still:?} while blocked");
    assert!(!robot_contact(&e).in_contact);
    place_obstacle(&mut e, 2.0, 8.0);
    run_until_done(&mut e, "base_link", 40.0);
    assert_eq!(h.state().phase, NavPhase::Arrived, "{:?}", h.state());
    assert_eq!(h.state().reroutes, 0);
}

#[test]
fn reroute_goes_around_a_box_that_stays() {
    let mut e = engine(&blocked_world("{stop: true, reroute: true, yield_time: 1.0}"));
    let h = nav(&e);
    secs(&mut e, 1.0);
    place_obstacle(&mut e, 2.8, 2.0);
    let trace = run_until_done(&mut e, "base_link", 60.0);
    let s = h.state();
    assert_eq!(s.phase, NavPhase::Arrived, "{s:?}");
    assert!(s.reroutes >= 1, "{s:?}");
    // it went around: somewhere beside the box it was at least box half-width + robot radius off the line
    let off = trace
        .iter()
        .filter(|p| (p[0] - 2.8).abs() < 0.2)
        .map(|p| (p[1] - 2.0).abs())
        .fold(0.0, f64::max);
    assert!(off > 0.2 + 0.17, "passed the box only {off:.3} m off its centre line");
    assert!(!robot_contact(&e).in_contact, "{:?}", robot_contact(&e));
}

fn dwell_times(seed: u64) -> Vec<f64> {
    // a driven box patrolling two points with a random dwell at each: the dwell is measured as
    // the time the box stands still
    let yaml = "sim: {timestep: 0.002}
components:
  - box: {pose: {position: {x: 0.0, y: 0.0}}, size: [0.3, 0.3, 0.3], motion: driven}
    name: mover
    components:
      - navigator: {speed: 1.0, goals: [[1.0, 0.0], [0.0, 0.0]], loop: true, dwell: [0.5, 2.0], route_mode: exact, avoidance: {stop: false}}
";
    let mut e = engine_seed(yaml, seed);
    let h: NavHandle = e.ctx.blackboard.get::<NavHandle>("nav:mover").unwrap().clone();
    let mut out = Vec::new();
    let mut since: Option<f64> = None;
    for _ in 0..(12.0 / e.dt()) as u64 {
        e.step().unwrap();
        let t = e.ctx.sim_time();
        match (h.state().phase, since) {
            (NavPhase::Dwelling, None) => since = Some(t),
            (NavPhase::Moving, Some(s)) => {
                out.push(((t - s) * 1e3).round() / 1e3);
                since = None;
            }
            _ => {}
        }
    }
    out
}

#[test]
fn random_dwells_repeat_with_the_seed_and_differ_across_seeds() {
    let a = dwell_times(7);
    let b = dwell_times(7);
    let c = dwell_times(8);
    assert!(a.len() >= 4, "{a:?}");
    assert_eq!(a, b);
    assert_ne!(a, c);
    for d in a.iter().chain(&c) {
        assert!(
            (0.5..=2.0 + 0.05 + 1e-9).contains(d),
            "dwell {d} outside [0.5, 2.0] (+ one update)"
        );
    }
}

#[test]
fn a_driven_box_follows_an_exact_route_at_its_speed() {
    let yaml = "sim: {timestep: 0.002}
components:
  - box: {pose: {position: {x: 0.0, y: 0.0}}, size: [0.3, 0.3, 0.3], motion: driven}
    name: mover
    components:
      - navigator: {speed: 0.5, goals: [[2.0, 0.0], [2.0, 1.0, 1.5707963]], route_mode: exact, avoidance: {stop: false}, yaw_rate: 0}
";
    let mut e = engine(yaml);
    let h: NavHandle = e.ctx.blackboard.get::<NavHandle>("nav:mover").unwrap().clone();
    secs(&mut e, 2.0);
    let p = body_xy(&e, "mover");
    // sets off at the first update (t = 0), 0.5 m/s along x: 2 s → 1.0 m (within one step)
    assert!((p[0] - 1.0).abs() <= 0.5 * e.dt() + 1e-9 && p[1].abs() < 1e-12, "{p:?}");
    run_until_done(&mut e, "mover", 10.0);
    assert_eq!(h.state().phase, NavPhase::Arrived);
    let p = body_xy(&e, "mover");
    assert!((p[0] - 2.0).abs() < 1e-9 && (p[1] - 1.0).abs() < 1e-9, "{p:?}");
    let q = e.ctx.data().mocap_quat()[0];
    let yaw = roqsim::math::yaw_of(&q);
    assert!((yaw - std::f64::consts::FRAC_PI_2).abs() < 1e-6, "yaw {yaw}");
}

/// A NavigateToPose goal to (`x`, `y`) in `frame` delivered to endpoint `ep` as the bridge
/// delivers it; its feedback and outcome receivers.
fn nav_goal(
    e: &mut Engine,
    ep: usize,
    frame: &str,
    x: f64,
    y: f64,
) -> (crossbeam_channel::Receiver<Payload>, crossbeam_channel::Receiver<ActionOutcome>) {
    let (ftx, frx) = crossbeam_channel::unbounded();
    let (otx, orx) = crossbeam_channel::unbounded();
    let goal = NavGoal {
        poses: vec![NavPose {
            frame_id: frame.into(),
            position: [x, y, 0.0],
            orientation: [0.0, 0.0, 0.0, 1.0],
        }],
    };
    let call = ActionCall {
        goal: Box::new(Payload::NavGoal(goal)),
        feedback: ftx,
        outcome: otx,
        cancel: Default::default(),
    };
    e.ctx.interface.deliver(ep, Payload::Goal(call));
    (frx, orx)
}

#[test]
fn a_goal_over_the_action_endpoint_succeeds_with_feedback_and_a_bad_frame_is_refused() {
    let mut e = engine(&floorplan(&turtlebot(1.0, 1.0, 0.0, "{speed: 0.3}")));
    let ep = endpoint(&e, "navigate_to_pose");
    let send = |e: &mut Engine, frame: &str, x: f64, y: f64| nav_goal(e, ep, frame, x, y);
    let (_f, o) = send(&mut e, "odom", 2.0, 1.0);
    e.step().unwrap();
    let out = o.try_recv().unwrap();
    assert_eq!(out.status, GoalStatus::Aborted);
    assert_eq!(out.error_code, 202, "nav2's ComputePathToPose TF_ERROR");
    assert_has(&out.error_string, &["pose 0 is in frame `odom`", "`map`, `world`, or empty"]);
    let (f, o) = send(&mut e, "map", 3.0, 1.0);
    for _ in 0..(30.0 / e.dt()) as u64 {
        e.step().unwrap();
        if !o.is_empty() {
            break;
        }
    }
    let out = o.try_recv().unwrap();
    assert_eq!(out.status, GoalStatus::Succeeded, "{out:?}");
    let fb: Vec<Payload> = f.try_iter().collect();
    assert!(fb.len() > 20, "{} feedback messages", fb.len());
    let Payload::NavFeedback(first) = &fb[0] else { panic!() };
    let Payload::NavFeedback(last) = fb.last().unwrap() else { panic!() };
    assert!((first.distance_remaining - 2.0).abs() < 0.05, "{first:?}");
    assert!(last.distance_remaining < 0.3 && last.navigation_time > 1.75 / 0.31, "{last:?}");
    assert!((last.current_pose.position[0] - 3.0).abs() < 0.3);
}

#[test]
fn a_goal_sent_to_a_looping_navigator_ends_at_its_pose() {
    // `loop: true` repeats the configured route; a NavigateToPose goal still ends where it asked
    // (the action succeeds there, as nav2's does) instead of starting over at its one pose.
    let yaml = "sim: {timestep: 0.002}
components:
  - box: {pose: {position: {x: 0.0, y: 0.0}}, size: [0.3, 0.3, 0.3], motion: driven}
    name: mover
    components:
      - navigator: {speed: 0.5, goals: [[2.0, 0.0], [2.0, 1.0]], loop: true, route_mode: exact, avoidance: {stop: false}, yaw_rate: 0}
";
    let mut e = engine(yaml);
    let h: NavHandle = e.ctx.blackboard.get::<NavHandle>("nav:mover").unwrap().clone();
    let ep = endpoint(&e, "navigate_to_pose");
    let (_f, orx) = nav_goal(&mut e, ep, "map", 1.0, -0.5);
    let mut t = 0.0;
    while orx.is_empty() && t < 10.0 {
        e.step().unwrap();
        t += e.dt();
    }
    let out = orx.try_recv().expect("the goal ends");
    assert_eq!(out.status, GoalStatus::Succeeded, "{out:?}");
    // 1.118 m at 0.5 m/s
    assert!((2.2..2.4).contains(&t), "ended at t = {t}");
    secs(&mut e, 1.0);
    assert_eq!(h.state().phase, NavPhase::Arrived);
    let p = body_xy(&e, "mover");
    assert!((p[0] - 1.0).abs() < 1e-9 && (p[1] + 0.5).abs() < 1e-9, "stays at the goal: {p:?}");
}

#[test]
fn refusals_name_the_key() {
    let r = refusal(&floorplan(&turtlebot(1.0, 1.0, 0.0, "{speed: 0.3, goals: [[5.0, 1.0]]}")));
    assert_has(&r, &["goals[0]: goal (5.00, 1.00) is on an obstacle or closer to one than the inflation radius"]);
    let r = refusal(&floorplan(&turtlebot(
        1.0,
        1.0,
        0.0,
        "{speed: 0.3, goals: [[2.0, 1.0], [3.0, 1.0]], dwell: [1, 2, 3, 4]}",
    )));
    assert_has(&r, &["dwell", "2 goals need 3 entries, got 4"]);
    let r = refusal(&floorplan(&turtlebot(
        1.0,
        1.0,
        0.0,
        "{speed: 0.3, goals: [[2.0, 1.0]], dwell: [[1, 2], [3, 1]]}",
    )));
    assert_has(&r, &["dwell[1]", "0 <= lo <= hi", "got [3, 1]"]);
    let r =
        refusal(&floorplan(&turtlebot(1.0, 1.0, 0.0, "{speed: 0, goals: [[2.0, 1.0, 0.1, 4]]}")));
    assert_has(
        &r,
        &["speed", "must be in (0, 1000] m/s, got 0", "goals[0]", "[x, y] or [x, y, yaw]"],
    );
    let r = refusal(&floorplan(&turtlebot(
        1.0,
        1.0,
        0.0,
        "{speed: 0.3, avoidance: {stop: false, reroute: true}}",
    )));
    assert_has(&r, &["avoidance.reroute", "needs `avoidance.stop: true`"]);
    let r =
        refusal(&floorplan(&turtlebot(1.0, 1.0, 0.0, "{speed: 0.3, avoidance: {steer: swerve}}")));
    assert_has(&r, &["avoidance.steer"]);
    let r = refusal(&floorplan(&turtlebot(1.0, 1.0, 0.0, "{speed: 0.3, output: mocap}")));
    assert_has(
        &r,
        &["`output: mocap` needs entity `robot`'s root body `base_link` to be a mocap body"],
    );
    let r = refusal(
        "components:
  - box: {pose: {position: {x: 0.0, y: 0.0}}, size: [0.3, 0.3, 0.3]}
    name: crate
    components:
      - navigator: {speed: 0.3}
",
    );
    assert_has(&r, &["nothing to move entity `crate` with", "give it `motion: driven`"]);
    let r =
        refusal(&floorplan(&turtlebot(1.0, 1.0, 0.0, "{speed: 0.3, goals: [[100000.0, 1.0]]}")));
    assert_has(
        &r,
        &[
            "goals: a goal or the start lies 99990 m outside the static geometry",
            "use `route_mode: exact`",
        ],
    );
    let r = refusal("components:\n  - navigator: {speed: 0.3}\n");
    assert_has(&r, &["`navigator` belongs to a robot and must be nested under it"]);
}

#[test]
fn navigation_is_deterministic() {
    let world = floorplan(&turtlebot(
        1.0,
        1.0,
        0.0,
        "{speed: 0.3, goals: [[8.0, 1.5], [2.0, 3.0]], loop: true, dwell: [0.2, 1.0], tracker: pure_pursuit}",
    ));
    let run = || {
        let mut e = engine_seed(&world, 3);
        secs(&mut e, 30.0);
        let d = e.ctx.data();
        (d.qpos().to_vec(), d.qvel().to_vec())
    };
    let (a, b) = (run(), run());
    assert_eq!(
        a.0.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        b.0.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    assert_eq!(
        a.1.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        b.1.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    assert!(a.0[0] > 4.0, "the robot went somewhere: x = {}", a.0[0]);
}

#[test]
fn a_mover_that_stops_making_progress_recovers_then_gives_up_as_stuck() {
    // a 4.5 cm kerb across room A: below the planner band (it starts at 5 cm) and under the
    // probe, higher than the Create 3 climbs, so the robot drives into it without knowing
    let robot = turtlebot(
        1.0,
        2.0,
        0.0,
        "{speed: 0.3, goals: [[4.0, 2.0]], recovery: {stuck_time: 1.0, backup_time: 0.5, max_recovery: 2}}",
    );
    let world = format!(
        "{}  - box: {{pose: {{position: {{x: 2.5, y: 2.0}}}}, size: [0.1, 3.6, 0.045]}}
    name: kerb
",
        floorplan(&robot)
    );
    let mut e = engine(&world);
    run_until_done(&mut e, "base_link", 60.0);
    let s = nav(&e).state();
    assert_eq!(s.phase, NavPhase::Failed, "{s:?}");
    assert!(s.stuck && s.recoveries == 2, "{s:?}");
    assert_has(
        s.error.as_deref().unwrap(),
        &["stuck at (", "on the way to (4.00, 2.00)", "after 2 recoveries"],
    );
    let x = body_xy(&e, "base_link")[0];
    assert!(x < 2.5 - 0.05, "got past the kerb: x = {x}");
}

#[test]
fn a_navigator_under_a_moving_box_or_a_walker_is_refused_not_left_to_fight_it() {
    let r = refusal(
        "components:
  - moving_box: {size: [0.3, 0.3, 0.3], pose: {position: {x: 2.0, y: 2.0}}, speed: 0.5, waypoints: [[3.0, 2.0]]}
    name: mb
    components:
      - navigator: {speed: 0.3, goals: [[2.0, 1.0]], route_mode: exact}
",
    );
    assert_has(&r, &["entity `mb` is already moved by `moving_box` at `mb`; `navigator` at `mb.navigator` would write the same pose"]);
    let r = refusal(
        "components:
  - walker: {waypoints: [[1.0, 1.0], [1.0, 3.0]]}
    name: wk
    components:
      - navigator: {speed: 0.3, goals: [[3.0, 1.0]], route_mode: exact}
",
    );
    assert_has(&r, &["entity `wk` is already moved by `walker` at `wk`"]);
}

#[test]
fn two_driven_props_with_navigators_share_a_world_once_one_renames_its_topics() {
    let world = |topics: &str| {
        format!(
            "components:
  - box: {{pose: {{position: {{x: 0.0, y: 0.0}}}}, size: [0.3, 0.3, 0.3], motion: driven}}
    name: m1
    components:
      - navigator: {{speed: 0.3, goals: [[1.0, 0.0]], route_mode: exact}}
  - box: {{pose: {{position: {{x: 0.0, y: 2.0}}}}, size: [0.3, 0.3, 0.3], motion: driven}}
    name: m2
    components:
      - navigator: {{speed: 0.3, goals: [[1.0, 2.0]], route_mode: exact{topics}}}
"
        )
    };
    let clash = engine(&world("")).topic_clashes().unwrap_err().to_string();
    assert!(
        clash.starts_with("[m2.navigator] configure: topics.goal: `/navigator/goal` is already published by `m1.navigator` (its `goal`, geometry_msgs/msg/PoseStamped); two publishers on one topic interleave their messages: give this one another topic with its `topics:` map"),
        "{clash}"
    );
    let mut e = engine(&world(", topics: {goal: m2/goal, reached: m2/reached, stuck: m2/stuck}"));
    e.topic_clashes().unwrap();
    let topics: Vec<String> = e
        .ctx
        .interface
        .all()
        .iter()
        .filter(|x| x.owner.as_deref() == Some("m2") && x.name == "goal")
        .map(|x| x.get_hint("ros2", "topic").unwrap_or_default().to_string())
        .collect();
    assert_eq!(topics, ["m2/goal"]);
    secs(&mut e, 4.0);
    let x2 = body_pos(&e, "m2")[0];
    assert!((x2 - 1.0).abs() < 0.05, "m2 reaches its goal x = 1.0, at {x2}");
    let bad = refusal(&world(", topics: {goals: x}"));
    assert!(bad.contains("topics.goals: no endpoint role `goals` here; the roles are: navigate_to_pose, navigate_through_poses, start, stop, goal, reached, stuck"), "{bad}");
}
