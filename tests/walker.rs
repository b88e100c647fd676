//! `walker` (ROS-free): capsule pedestrians on mocap bodies sharing one ORCA crowd. Measured:
//! closest approach of two walkers crossing head-on, giving way to a robot driven over its
//! RobotHandle, the time stood at a waypoint, seeded random dwells, what the robot's lidar and a
//! clearance monitor read off a walker, presence through DeleteEntity/SpawnEntity and
//! `present: false`, and every refusal's text.

use mujoco_rs::prelude::MjtObjBase;
use roqsim::context::payload::LaserScan;
use roqsim::engine::sim_control;
use roqsim::handles::robot::RobotHandle;
use roqsim::plugins::observe::clearance_monitor::ClearanceReader;
use roqsim::plugins::people::crowd::{Crowd, CROWD_KEY};
use roqsim::plugins::sensors::lidar::LidarReader;
use roqsim::{load_world_str, Engine, EngineOptions, LoadOptions};

mod common;
use common::*;

/// The walker's (x, y), straight from its mocap body.
fn xy(e: &Engine, body: &str) -> [f64; 2] {
    let m = e.ctx.model();
    let b = m.name_to_id(MjtObjBase::mjOBJ_BODY, body).unwrap_or_else(|| panic!("no body {body}"));
    let id = m.body_mocapid()[b] as usize;
    let p = e.ctx.data().mocap_pos()[id];
    [p[0], p[1]]
}

fn dist(a: [f64; 2], b: [f64; 2]) -> f64 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}

/// Two walkers starting 8 m apart on the x axis, each walking to the other's start.
fn head_on(avoidance: bool) -> String {
    components_world(&format!(
        "  - walker: {{waypoints: [[-4, 0], [4, 0]], loop: false, avoidance: {avoidance}}}\n    name: a\n  - walker: {{waypoints: [[4, 0], [-4, 0]], loop: false, avoidance: {avoidance}}}\n    name: b\n"
    ))
}

/// Min distance between a and b over `secs`, and the largest |y| of each.
fn cross(e: &mut Engine, secs: f64) -> (f64, f64, f64) {
    let (mut min, mut ya, mut yb) = (f64::INFINITY, 0.0f64, 0.0f64);
    for _ in 0..(secs / e.dt()).round() as u64 {
        e.step().unwrap();
        let (a, b) = (xy(e, "a"), xy(e, "b"));
        min = min.min(dist(a, b));
        ya = ya.max(a[1].abs());
        yb = yb.max(b[1].abs());
    }
    (min, ya, yb)
}

#[test]
fn two_walkers_head_on_with_orca_never_come_closer_than_two_radii() {
    let mut e = engine(&head_on(true));
    let (min, ya, yb) = cross(&mut e, 10.0);
    let r = 0.26;
    assert!(min >= 2.0 * r - 1e-6, "closest approach {min} < 2 r = {}", 2.0 * r);
    assert!(min < 2.0 * r + 0.05, "they passed close ({min}), not far apart");
    // reciprocity: each gives way by the same amount, sideways
    assert!(ya > 0.1 && (ya - yb).abs() < 1e-9, "sideways: a {ya}, b {yb}");
    // both got where they were going
    assert!(dist(xy(&e, "a"), [4.0, 0.0]) <= 0.25, "a at {:?}", xy(&e, "a"));
    assert!(dist(xy(&e, "b"), [-4.0, 0.0]) <= 0.25, "b at {:?}", xy(&e, "b"));
    // the same crossing without avoidance walks straight through
    let mut e = engine(&head_on(false));
    let (min, ya, yb) = cross(&mut e, 10.0);
    assert!(min < 0.01 && ya == 0.0 && yb == 0.0, "min {min}, |y| {ya} {yb}");
}

/// Two walkers crossing head-on, each re-deciding at `hz`: the velocity of `a` per step.
fn head_on_at(hz: f64) -> (Engine, Vec<[f64; 2]>, f64) {
    let w = |name: &str, from: i32| {
        format!("  - walker: {{waypoints: [[{from}, 0], [{}, 0]], loop: false, avoidance: true, orca: {{update_hz: {hz}}}}}\n    name: {name}\n", -from)
    };
    let mut e = engine(&components_world(&(w("a", -4) + &w("b", 4))));
    let (mut vel, mut min) = (Vec::new(), f64::INFINITY);
    for _ in 0..5000 {
        let before = xy(&e, "a");
        e.step().unwrap();
        let after = xy(&e, "a");
        vel.push([(after[0] - before[0]) / e.dt(), (after[1] - before[1]) / e.dt()]);
        min = min.min(dist(after, xy(&e, "b")));
    }
    (e, vel, min)
}

#[test]
fn orca_runs_at_update_hz_and_the_walkers_move_every_step_in_between() {
    // 10 Hz at 0.002 s: a new velocity every 50 steps (the first at step 0)
    let (e, vel, min) = head_on_at(10.0);
    let changes: Vec<usize> = (1..vel.len())
        .filter(|&k| (vel[k][0] - vel[k - 1][0]).abs() + (vel[k][1] - vel[k - 1][1]).abs() > 1e-9)
        .collect();
    assert!(changes.len() >= 3, "it steered: {changes:?}");
    // every change is on the gate, except the stop on arrival (the route's event)
    let off_gate: Vec<&usize> = changes.iter().filter(|&&k| k % 50 != 0).collect();
    assert!(off_gate.len() <= 1, "velocity changed off the 10 Hz gate at steps {off_gate:?}");
    // in between it still moves every step (the mocap pose is integrated at the physics rate)
    let moving = vel.iter().take(4000).filter(|v| v[0].hypot(v[1]) > 1.0).count();
    assert!(moving > 3000, "moved on {moving} of the first 4000 steps");
    assert!(min >= 0.52 - 1e-6, "closest approach {min} < 2 r at 10 Hz");
    assert!(dist(xy(&e, "a"), [4.0, 0.0]) <= 0.25, "a at {:?}", xy(&e, "a"));
    // at the physics rate the same crossing also keeps 2 r, with a different (finer) path
    let (_, vel500, min500) = head_on_at(500.0);
    assert!(min500 >= 0.52 - 1e-6, "closest approach {min500} at 500 Hz");
    assert_ne!(vel, vel500, "the update rate is used");
}

#[test]
fn the_crowd_is_one_controller_on_the_blackboard() {
    let e = engine(&head_on(true));
    let crowd = e.ctx.blackboard.get::<Crowd>(CROWD_KEY).unwrap();
    assert_eq!(crowd.len(), 2);
    let s = crowd.state("a").unwrap();
    assert_eq!(s.pos, [-4.0, 0.0]);
    assert!(s.present);
    assert_eq!(
        sim_control::category_of(&e.ctx, "a"),
        Some(sim_control::category::HUMAN),
        "a walker is a person"
    );
}

/// A TurtleBot 4 at the origin facing +x, with a contact monitor, and a walker coming the other
/// way along the x axis.
fn robot_and_walker(walker: &str) -> Engine {
    engine(&components_world(&format!(
        "  - spawn_robot: {{model: turtlebot4}}\n    name: robot\n    components:\n      - contact_monitor: {{}}\n  - walker: {{waypoints: [[3, 0], [-3, 0]], loop: false{walker}}}\n    name: w\n"
    )))
}

/// Drive the robot forward at 0.3 m/s over its handle for `secs`; min walker–base distance and
/// the walker's largest |y|.
fn drive_at_walker(e: &mut Engine, secs: f64) -> (f64, f64) {
    let h = e.ctx.blackboard.get::<RobotHandle>("robot:robot").unwrap().clone();
    let base = e.ctx.entities.get("robot").unwrap().body.clone();
    let (mut min, mut y) = (f64::INFINITY, 0.0f64);
    for _ in 0..(secs / e.dt()).round() as u64 {
        h.drive(0.3, 0.0, 0.0);
        e.step().unwrap();
        let w = xy(e, "w");
        min = min.min(dist(w, body_xy(e, &base)));
        y = y.max(w[1].abs());
    }
    (min, y)
}

#[test]
fn a_walker_with_avoidance_gives_way_to_a_driven_robot_and_one_without_does_not() {
    let mut e = robot_and_walker(", avoidance: true, robot_radius: 0.25");
    let (min, y) = drive_at_walker(&mut e, 6.0);
    assert!(min >= 0.26 + 0.25 - 0.01, "avoiding walker came within {min} of the base");
    assert!(y > 0.2, "it stepped aside by {y}");
    assert!(xy(&e, "w")[0] < -2.5, "and walked on to {:?}", xy(&e, "w"));
    assert!(!robot_contact(&e).in_contact, "no contact: {:?}", robot_contact(&e));
    // robot_body by its model name resolves to the same base
    let mut e = robot_and_walker(", avoidance: true, robot_body: base_link");
    let (min2, _) = drive_at_walker(&mut e, 6.0);
    assert_eq!(min2, min, "robot_body: base_link is the robot entity's base");

    let mut e = robot_and_walker("");
    let (min, y) = drive_at_walker(&mut e, 6.0);
    assert_eq!(y, 0.0, "no avoidance: it keeps its line");
    assert!(min < 0.26 + 0.25 - 0.05, "and runs into the robot: {min}");
    let c = robot_contact(&e);
    assert!(c.in_contact && c.geom_b == "w", "the contact monitor names the walker: {c:?}");
}

/// Steps the walker stood still for, each run of unchanged positions that followed a move.
fn stands(e: &mut Engine, body: &str, secs: f64) -> Vec<(f64, [f64; 2])> {
    let mut out = Vec::new();
    let mut last = xy(e, body);
    let mut still = 0u64;
    for _ in 0..(secs / e.dt()).round() as u64 {
        e.step().unwrap();
        let p = xy(e, body);
        if p == last {
            still += 1;
        } else {
            if still > 0 {
                out.push((still as f64 * e.dt(), last));
            }
            still = 0;
        }
        last = p;
    }
    out
}

#[test]
fn a_patrol_stands_its_dwell_at_each_waypoint_and_loops() {
    let mut e = engine(&components_world("  - walker: {waypoints: [[0, 0], [2, 0, 1.5], [2, 2]], dwell: 0.5, speed: 1.0}\n    name: w\n"));
    let st = stands(&mut e, "w", 12.0);
    // at [2, 0] its own 1.5 s, at [2, 2] and [0, 0] the walker's 0.5 s, then [2, 0] again
    let stood: Vec<f64> = st.iter().map(|s| s.0).collect();
    assert!(stood.len() >= 4, "{st:?}");
    for (got, want) in stood.iter().zip([1.5, 0.5, 0.5, 1.5]) {
        assert!((got - want).abs() <= 0.0021, "stood {got} s, want {want}: {st:?}");
    }
    for (s, at) in st.iter().zip([[2.0, 0.0], [2.0, 2.0], [0.0, 0.0], [2.0, 0.0]]) {
        let d = dist(s.1, at);
        assert!(d <= 0.25 && d > 0.24, "stood {d} m from {at:?} (arrival radius 0.25)");
    }
    // loop: false stays at the last point
    let mut e = engine(&components_world(
        "  - walker: {waypoints: [[0, 0], [1, 0]], loop: false, speed: 1.0}\n    name: w\n",
    ));
    secs(&mut e, 5.0);
    let p = xy(&e, "w");
    assert!((p[0] - 0.75).abs() < 0.0021 && p[1] == 0.0, "{p:?}");
}

/// The dwells a walker with a random [1, 4] s dwell stands over 40 s, with `seed`.
fn random_dwells(seed: u64) -> (Vec<f64>, Engine) {
    let mut e = engine_seed(
        &components_world(
            "  - walker: {waypoints: [[0, 0], [1, 0]], dwell: [1, 4], speed: 1.0}\n    name: w\n",
        ),
        seed,
    );
    let d = stands(&mut e, "w", 40.0).into_iter().map(|s| s.0).collect();
    (d, e)
}

#[test]
fn random_dwells_repeat_with_the_seed_differ_across_seeds_and_episodes() {
    let (a, ea) = random_dwells(7);
    let (b, eb) = random_dwells(7);
    let (c, _) = random_dwells(8);
    assert!(a.len() >= 5, "{a:?}");
    assert_eq!(a, b, "same seed, same dwells");
    assert_eq!(xy(&ea, "w"), xy(&eb, "w"), "and bit-identical positions");
    assert_ne!(a, c, "another seed, other dwells");
    for d in a.iter().chain(&c) {
        assert!((1.0 - 0.0021..=4.0 + 0.0021).contains(d), "dwell {d} outside [1, 4]");
    }
    let distinct: std::collections::BTreeSet<u64> = a.iter().map(|d| d.to_bits()).collect();
    assert!(distinct.len() > 1, "drawn per arrival, not once: {a:?}");
    // a reset starts the next episode: the route starts over with fresh draws
    let mut e = ea;
    e.reset().unwrap();
    assert_eq!(xy(&e, "w"), [0.0, 0.0]);
    let again: Vec<f64> = stands(&mut e, "w", 40.0).into_iter().map(|s| s.0).collect();
    assert_ne!(again, a, "episode 1 draws anew");
}

#[test]
fn a_random_dwell_without_a_seed_fails_at_the_draw() {
    let yaml = components_world(
        "  - walker: {waypoints: [[0, 0], [0.5, 0]], dwell: [1, 2]}\n    name: w\n",
    );
    let w = load_world_str(&yaml, &base(), &LoadOptions::default()).unwrap();
    let mut e = Engine::new(w, EngineOptions { profile: false, seed: None }).unwrap();
    let err = e.step_n(1000).unwrap_err().to_string();
    assert_has(
        &err,
        &["`walker:w` draws noise but the run has no seed: pass --seed N or set sim.seed"],
    );
    // a fixed dwell draws nothing and needs no seed
    let yaml =
        components_world("  - walker: {waypoints: [[0, 0], [0.5, 0]], dwell: 1}\n    name: w\n");
    let w = load_world_str(&yaml, &base(), &LoadOptions::default()).unwrap();
    let mut e = Engine::new(w, EngineOptions { profile: false, seed: None }).unwrap();
    e.step_n(1000).unwrap();
}

fn scan(e: &Engine) -> LaserScan {
    e.ctx
        .blackboard
        .get::<LidarReader>("lidar:robot.rplidar.lidar")
        .unwrap()
        .latest()
        .expect("a scan")
}

/// World (x, y) and yaw of the RPLIDAR's scan frame.
fn laser(e: &Engine) -> ([f64; 2], f64) {
    let m = e.ctx.model();
    let s = (0..m.ffi().nsite as usize)
        .find(|&s| m.id_to_name(MjtObjBase::mjOBJ_SITE, s).is_some_and(|n| n.ends_with("laser")))
        .expect("the laser site");
    let p = e.ctx.data().site_xpos()[s];
    let r = e.ctx.data().site_xmat()[s];
    ([p[0], p[1]], r[3].atan2(r[0]))
}

/// The scan's nearest return and what ground truth says that ray reads: the ray's world angle
/// from the scan frame, then its exact intersection with the walker's disc (centre `c`,
/// radius `r`) — d·cos δ − √(r² − d²·sin² δ), δ the ray's angle off the bearing of the centre.
fn nearest_and_truth(e: &Engine, c: [f64; 2], r: f64) -> (f64, f64) {
    let s = scan(e);
    let (i, got) = s
        .ranges
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .min_by(|a, b| a.1.total_cmp(b.1))
        .expect("a return");
    let (o, yaw) = laser(e);
    let ray = yaw + s.angle_min as f64 + i as f64 * s.angle_increment as f64;
    let d = dist(o, c);
    let delta = ray - (c[1] - o[1]).atan2(c[0] - o[0]);
    assert!(delta.abs() <= s.angle_increment as f64 / 2.0 + 1e-6, "nearest ray {delta} rad off");
    let truth = d * delta.cos() - (r * r - (d * delta.sin()).powi(2)).sqrt();
    (*got as f64, truth)
}

/// The range of the ray nearest in angle to the bearing of `c` (inf for no return).
fn range_toward(e: &Engine, c: [f64; 2]) -> f64 {
    let s = scan(e);
    let (o, yaw) = laser(e);
    let bearing = (c[1] - o[1]).atan2(c[0] - o[0]) - yaw;
    let i = ((bearing - s.angle_min as f64) / s.angle_increment as f64).round() as usize;
    s.ranges[i % s.ranges.len()] as f64
}

#[test]
fn the_lidar_sees_a_walker_where_ground_truth_puts_it_and_not_when_absent() {
    let yaml = components_world("  - spawn_robot: {model: turtlebot4}\n    name: robot\n  - walker: {pos: [2.0, 0.5]}\n    name: w\n");
    let mut e = engine(&yaml);
    secs(&mut e, 0.2);
    let (got, truth) = nearest_and_truth(&e, xy(&e, "w"), 0.26);
    assert!((got - truth).abs() < 1e-5, "scan {got}, ground truth {truth}");
    assert!((got - 1.8412).abs() < 1e-3, "{got}");
    assert_eq!(range_toward(&e, [2.0, 0.5]), got, "the nearest return is the ray toward it");
    // DeleteEntity: the next scan passes through it
    sim_control::delete(&mut e.ctx, "w").unwrap();
    secs(&mut e, 0.2);
    assert!(range_toward(&e, [2.0, 0.5]) > 3.0, "absent: the ray passes through it");
    // SpawnEntity brings it back, at a new pose
    sim_control::spawn(&mut e.ctx, "", "w", "", "", Some(([3.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0])))
        .unwrap();
    secs(&mut e, 0.2);
    let (got, truth) = nearest_and_truth(&e, [3.0, 0.0], 0.26);
    assert!((got - truth).abs() < 1e-5, "scan {got}, ground truth {truth}");
    // present: false starts it absent
    let mut e = engine(&yaml.replace("pos: [2.0, 0.5]", "pos: [2.0, 0.5], present: false"));
    secs(&mut e, 0.2);
    assert!(range_toward(&e, [2.0, 0.5]) > 3.0, "declared absent: not seen");
    assert_eq!(sim_control::spawnables(&e.ctx), vec!["w".to_string()]);
}

#[test]
fn an_absent_walker_stands_still_and_a_teleported_one_walks_on_from_there() {
    let mut e = engine(&components_world(
        "  - walker: {waypoints: [[0, 0], [4, 0]], loop: false, speed: 1.0}\n    name: w\n",
    ));
    secs(&mut e, 1.0);
    let p = xy(&e, "w");
    assert!((p[0] - 1.0).abs() < 0.0021, "{p:?}");
    sim_control::delete(&mut e.ctx, "w").unwrap();
    secs(&mut e, 1.0);
    assert_eq!(xy(&e, "w"), p, "absent: it stands");
    sim_control::spawn(&mut e.ctx, "", "w", "", "", None).unwrap();
    sim_control::set_entity_state(
        &mut e.ctx,
        "w",
        Some(([2.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0])),
        None,
    )
    .unwrap();
    secs(&mut e, 1.0);
    let q = xy(&e, "w");
    // from (2, 1) toward (4, 0) at 1 m/s for 1 s
    let dir = [2.0 / 5f64.sqrt(), -1.0 / 5f64.sqrt()];
    assert!(dist(q, [2.0 + dir[0], 1.0 + dir[1]]) < 0.0021, "{q:?}");
}

#[test]
fn a_clearance_monitor_measures_the_walker() {
    let mut e = engine(&components_world("  - spawn_robot: {model: turtlebot4}\n    name: robot\n    components:\n      - clearance_monitor: {}\n  - walker: {pos: [1.0, 0.0]}\n    name: w\n"));
    secs(&mut e, 0.1);
    let rd = e.ctx.blackboard.get::<ClearanceReader>("clearance_monitor:robot.clearance_monitor");
    let r = rd.unwrap().clone();
    let first = r.get();
    assert_eq!(first.geom, "w");
    assert!(first.current > 0.3 && first.current < 0.74, "{first:?}");
    sim_control::set_entity_state(
        &mut e.ctx,
        "w",
        Some(([1.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0])),
        None,
    )
    .unwrap();
    secs(&mut e, 0.1);
    let second = r.get();
    assert!((second.current - first.current - 0.5).abs() < 1e-6, "{first:?} -> {second:?}");
}

// ------------------------------------------------------------------------------ refusals

fn refused(cfg: &str) -> String {
    refusal(&components_world(&format!("  - walker: {cfg}\n    name: w\n")))
}

#[test]
fn every_refusal_names_the_key_and_the_fix() {
    let cases: &[(&str, &str)] = &[
        ("{speed: 0}", "speed: must be in (0, 12.5] m/s (a person), got 0"),
        (
            "{speed: 2, avoidance: true}",
            "speed: 2 m/s is above orca.max_speed (1.6 m/s), the fastest this walker may go while giving way: raise orca.max_speed or lower speed",
        ),
        (
            "{pos: [1, 1], waypoints: [[0, 0], [1, 0]]}",
            "pos: a walker with waypoints starts at waypoints[0]; `pos` places one without: drop one of the two",
        ),
        ("{pos: [1e7, 0]}", "components.w.pos: must be finite and within ±1000000 m, got 1e7 (walker)"),
        (
            "{waypoints: [[0, 0]]}",
            "waypoints: a route needs 2 or more points; for a walker that stands still give `pos: [x, y]` instead",
        ),
        (
            "{waypoints: [[0, 0], [0.1, 0], [0, 0.2, 3]]}",
            "waypoints: every point lies within arrival_radius (0.25 m) of waypoints[0], so the walker would never leave its start: spread the route, or give `pos: [x, y]` for a walker that stands",
        ),
        (
            "{waypoints: [[0, 0], [1]]}",
            "waypoints[1]: a waypoint is [x, y] or [x, y, dwell] (dwell: seconds, or [lo, hi])",
        ),
        (
            "{waypoints: [[0, 0], [1, 0, -1]]}",
            "waypoints[1]: a dwell must be in [0, 86400] s, got -1",
        ),
        (
            "{waypoints: [[0, 0], [1, 0]], dwell: [3, 1]}",
            "dwell: a random dwell [lo, hi] needs 0 <= lo <= hi <= 86400 s, got [3, 1]",
        ),
        (
            "{loop: true}",
            "loop: `loop` shapes a patrol route and this walker has no `waypoints`: give the route or drop the key",
        ),
        (
            "{arrival_radius: 0.5, goal_endpoint: false}",
            "arrival_radius: `arrival_radius` shapes a patrol route and this walker has no `waypoints`: give the route or drop the key",
        ),
        (
            "{waypoints: [[0, 0], [1, 0]], arrival_radius: 0}",
            "arrival_radius: must be in (0, 1000] m, got 0",
        ),
        (
            "{robot_radius: 0.3}",
            "robot_radius: `robot_radius` tunes how a walker gives way, and this one has `avoidance: false` (it walks its route and the others avoid it): set `avoidance: true` or drop the key",
        ),
        (
            "{orca: {time_horizon: 2}}",
            "orca.time_horizon: `orca.time_horizon` tunes how a walker gives way, and this one has `avoidance: false`",
        ),
        ("{orca: {radius: 0.9}}", "orca.radius: must be in (0, 0.875) m (a capsule 1.75 m tall), got 0.9"),
        ("{avoidance: true, orca: {neighbor_dist: -1}}", "orca.neighbor_dist: must be in (0, 1000] m, got -1"),
        (
            "{avoidance: true, robot_body: ' '}",
            "robot_body: is empty: name the robot's body (`base_link`) or drop the key for every robot entity's base",
        ),
        (
            "{avoidance: true, orca: {update_hz: 0}}",
            "orca.update_hz: must be a rate of at least 0.001 Hz (above the physics rate it updates every step), got 0",
        ),
        (
            "{orca: {update_hz: 50}}",
            "orca.update_hz: `orca.update_hz` tunes how a walker gives way, and this one has `avoidance: false`",
        ),
        ("{outfit: B}", "unknown field `outfit`"),
        ("{orca: {inflation: 1}}", "unknown field `inflation`"),
    ];
    for (cfg, want) in cases {
        let got = refused(cfg);
        assert_has(&got, &[want]);
    }
}

#[test]
fn an_unknown_robot_body_is_refused_at_setup_naming_the_robots() {
    let got = refusal(&components_world("  - spawn_robot: {model: turtlebot4}\n    name: robot\n  - walker: {avoidance: true, robot_body: chassis}\n    name: w\n"));
    assert_has(
        &got,
        &["walker `w`: robot_body: no body `chassis` in the compiled model, nor one of that model name in a robot entity (robots: [robot (prefix `"],
    );
}

#[test]
fn a_walker_without_avoidance_is_avoided_with_the_whole_change() {
    let mut e = engine(&components_world("  - walker: {waypoints: [[-4, 0], [4, 0]], loop: false, avoidance: true}\n    name: a\n  - walker: {waypoints: [[4, 0], [-4, 0]], loop: false}\n    name: b\n"));
    let (min, ya, yb) = cross(&mut e, 10.0);
    assert!((0.52 - 1e-6..0.53).contains(&min), "closest approach {min}");
    assert_eq!(yb, 0.0, "b keeps its line");
    assert!(ya >= 0.52 - 1e-3, "a steps aside by the whole 2 r: {ya}");
}

#[test]
fn an_avoiding_walker_gives_way_to_a_driven_prop_and_ignores_an_absent_one() {
    // a 0.4 m driven box moved toward the walker at 0.5 m/s by SetEntityState every step
    let yaml = components_world("  - box: {pose: {position: {x: 3, y: 0}}, size: [0.4, 0.4, 1.0], motion: driven}\n    name: cart\n  - walker: {waypoints: [[-3, 0], [3, 0]], loop: false, avoidance: true}\n    name: w\n");
    let run = |e: &mut Engine| {
        let mut min = f64::INFINITY;
        for k in 0..4000 {
            let x = 3.0 - 0.5 * 0.002 * k as f64;
            let q = [1.0, 0.0, 0.0, 0.0];
            sim_control::set_entity_state(&mut e.ctx, "cart", Some(([x, 0.0, 0.5], q)), None)
                .unwrap();
            e.step().unwrap();
            min = min.min(dist(xy(e, "w"), [x, 0.0]));
        }
        min
    };
    let mut e = engine(&yaml);
    let min = run(&mut e);
    let reach = 0.2f64.hypot(0.2) + 0.26;
    assert!(min >= reach - 0.01, "closest approach to the cart {min}, discs touch at {reach}");
    // absent, the cart is not avoided: the walker keeps its line through where it is
    let mut e = engine(&yaml);
    sim_control::delete(&mut e.ctx, "cart").unwrap();
    let min = run(&mut e);
    assert!(min < 0.01, "absent cart: walked through its place ({min})");
}

#[test]
fn the_bundled_aisle_world_keeps_every_walker_clear() {
    let w = roqsim::load_world(&base().join("people_aisle.yaml"), &LoadOptions::default()).unwrap();
    let mut e = Engine::new(w, EngineOptions { profile: false, seed: Some(1) }).unwrap();
    let base_body = e.ctx.entities.get("robot").unwrap().body.clone();
    let (mut ww, mut wr) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..(40.0 / e.dt()) as u64 {
        e.step().unwrap();
        let (v, p) = (xy(&e, "visitor"), xy(&e, "picker"));
        let r = body_xy(&e, &base_body);
        ww = ww.min(dist(v, p));
        wr = wr.min(dist(v, r)).min(dist(p, r));
    }
    // they do meet: visitor and picker pass at 2 r, visitor passes the robot at r + robot_radius
    assert!((0.52 - 1e-6..0.53).contains(&ww), "walkers came within {ww}");
    assert!((0.51 - 0.01..0.52).contains(&wr), "a walker came within {wr} of the robot");
}

#[test]
fn a_walker_makes_no_contact_with_the_floor_or_the_walls_it_passes() {
    // the capsule reaches below the floor (so a scan at any height sees a full disc) and brushes
    // walls on a patrol; contacts between a mocap body and the world would cost solver time every
    // step and push nothing, so they are excluded
    let mut e = engine(&components_world("  - walker: {waypoints: [[0.0, 0.0], [3.0, 0.0]], loop: true}\n    name: w\n  - box: {pose: {position: {x: 1.5, y: 0.3}}, size: [0.4, 0.2, 1.0]}\n    name: wall\n"));
    for _ in 0..2000 {
        e.step().unwrap();
        assert_eq!(e.ctx.data().ffi().ncon, 0, "contacts at t = {}", e.ctx.sim_time());
    }
}

#[test]
fn a_dwell_of_the_wrong_shape_is_told_what_the_key_takes() {
    let r = refusal(&components_world(
        "  - walker: {waypoints: [[1.0, 2.0], [3.0, 2.0]], dwell: [1, 2, 3]}\n    name: wk\n",
    ));
    assert_has(&r, &["components.wk.dwell: takes a number (seconds, or a coordinate in m) or a random range [lo, hi] in seconds; got a list of 3 items"]);
    let r = refusal(&components_world(
        "  - walker: {waypoints: [[1.0, 2.0], [3.0, 2.0, long]]}\n    name: wk\n",
    ));
    assert_has(&r, &["waypoints[1][2]: takes a number", "got long"]);
}

/// The two-room floorplan (room A x 0..5, room B x 5..10, y 0..4, a 0.9 m door in x = 5 centred
/// at y = 2) with one goal-driven walker `w`.
fn rooms(walker: &str) -> String {
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
  - walker: {walker}
    name: w
"
    )
}

type Goal = (
    crossbeam_channel::Receiver<roqsim::context::payload::Payload>,
    crossbeam_channel::Receiver<roqsim::context::payload::ActionOutcome>,
);

/// Post a goal of `poses` (world frame `frame`) on walker endpoint `name`.
fn send_goal(e: &mut Engine, name: &str, frame: &str, poses: &[[f64; 2]]) -> Goal {
    use roqsim::context::payload::{ActionCall, NavGoal, NavPose, Payload};
    let (ftx, frx) = crossbeam_channel::unbounded();
    let (otx, orx) = crossbeam_channel::unbounded();
    let goal = NavGoal {
        poses: poses
            .iter()
            .map(|p| NavPose {
                frame_id: frame.into(),
                position: [p[0], p[1], 0.0],
                orientation: [0.0, 0.0, 0.0, 1.0],
            })
            .collect(),
    };
    let call = ActionCall {
        goal: Box::new(Payload::NavGoal(goal)),
        feedback: ftx,
        outcome: otx,
        cancel: Default::default(),
    };
    let ep = endpoint(e, name);
    e.ctx.interface.deliver(ep, Payload::Goal(call));
    (frx, orx)
}

#[test]
fn a_walker_driven_to_a_goal_walks_through_the_door_and_arrives() {
    use roqsim::context::payload::{GoalStatus, Payload};
    let mut e = engine(&rooms("{pos: [1.0, 1.0]}"));
    let (fb, out) = send_goal(&mut e, "navigate_to_pose", "map", &[[8.0, 1.0]]);
    let mut through_wall = Vec::new();
    let mut outcome = None;
    let mut last = xy(&e, "w");
    for _ in 0..(20.0 / e.dt()) as usize {
        e.step().unwrap();
        let p = xy(&e, "w");
        if (last[0] - 5.0) * (p[0] - 5.0) <= 0.0 && last[0] != p[0] {
            through_wall.push(p[1]);
        }
        last = p;
        if let Ok(o) = out.try_recv() {
            outcome = Some(o);
            break;
        }
    }
    let o = outcome.expect("the goal finished within 20 s");
    assert_eq!(o.status, GoalStatus::Succeeded, "{o:?}");
    let p = xy(&e, "w");
    assert!(dist(p, [8.0, 1.0]) <= 0.25, "arrived at {p:?}");
    // it crossed x = 5 once, inside the door (y 1.55..2.45) with its 0.26 m radius clear
    assert_eq!(through_wall.len(), 1, "{through_wall:?}");
    assert!((through_wall[0] - 2.0).abs() <= 0.45 - 0.26, "crossed at y = {}", through_wall[0]);
    // feedback: the planned route's length counts down to the arrival radius
    let f: Vec<_> = fb
        .try_iter()
        .filter_map(|p| match p {
            Payload::NavFeedback(f) => Some(f),
            _ => None,
        })
        .collect();
    assert!(f.len() > 100, "{} feedback messages", f.len());
    let d0 = f[0].distance_remaining;
    // around the wall: longer than the straight 7 m
    assert!(d0 > 7.2 && d0 < 8.5, "first distance_remaining {d0}");
    assert!(f.windows(2).all(|w| w[1].distance_remaining <= w[0].distance_remaining + 1e-9));
    let end = f.last().unwrap();
    assert!(end.distance_remaining < 0.3, "{end:?}");
    assert_eq!(f[0].number_of_poses_remaining, 1);
    assert!((f[0].estimated_time_remaining - d0 / 1.2).abs() < 1e-9);
    // and it stands there: the goal replaced the patrol
    let q = xy(&e, "w");
    for _ in 0..500 {
        e.step().unwrap();
    }
    assert_eq!(xy(&e, "w"), q);
}

#[test]
fn a_walker_goal_through_poses_visits_each_and_bad_goals_are_refused_with_nav2_codes() {
    use roqsim::context::payload::GoalStatus;
    let mut e = engine(&rooms("{waypoints: [[1, 1], [1, 3]], avoidance: true}"));
    let (_f, out) =
        send_goal(&mut e, "navigate_through_poses", "", &[[3.0, 1.0], [3.0, 3.0], [7.0, 3.0]]);
    let mut visited = [f64::INFINITY; 3];
    let mut outcome = None;
    for _ in 0..(20.0 / e.dt()) as usize {
        e.step().unwrap();
        let p = xy(&e, "w");
        for (k, g) in [[3.0, 1.0], [3.0, 3.0], [7.0, 3.0]].iter().enumerate() {
            visited[k] = visited[k].min(dist(p, *g));
        }
        if let Ok(o) = out.try_recv() {
            outcome = Some(o);
            break;
        }
    }
    assert_eq!(outcome.expect("finished").status, GoalStatus::Succeeded);
    assert!(visited.iter().all(|&d| d <= 0.25), "closest to each pose {visited:?}");
    let refused = |e: &mut Engine, frame: &str, p: [f64; 2]| {
        let (_f, out) = send_goal(e, "navigate_to_pose", frame, &[p]);
        e.step().unwrap();
        out.try_recv().expect("answered on the step")
    };
    let o = refused(&mut e, "odom", [2.0, 2.0]);
    assert_eq!((o.status, o.error_code), (GoalStatus::Aborted, 202), "{o:?}");
    assert_has(&o.error_string, &["pose 0 is in frame `odom`", "`map`, `world`, or empty"]);
    let o = refused(&mut e, "map", [5.0, 1.0]);
    assert_eq!(o.error_code, 206, "a goal in the wall: GOAL_OCCUPIED {o:?}");
    assert_has(&o.error_string, &["pose 0: "]);
    let o = refused(&mut e, "map", [50.0, 1.0]);
    assert_eq!(o.status, GoalStatus::Aborted, "{o:?}");
}

#[test]
fn a_patrol_only_walker_declares_no_goal_endpoint_and_planner_keys_need_one() {
    let e = engine(&rooms("{waypoints: [[1, 1], [1, 3]], goal_endpoint: false}"));
    assert!(!e.ctx.interface.all().iter().any(|ep| ep.name.starts_with("navigate")));
    let e = engine(&rooms("{pos: [1, 1]}"));
    let ep = &e.ctx.interface.all()[endpoint(&e, "navigate_to_pose")];
    assert_eq!(ep.get_hint("ros2", "topic"), Some("w/navigate_to_pose"));
    assert_eq!(ep.get_hint("ros2", "action"), Some("nav2_msgs/action/NavigateToPose"));
    assert_has(
        &refused("{pos: [1, 1], goal_endpoint: false, planner: {inflation_radius: 0.4}}"),
        &["planner.inflation_radius: `planner.inflation_radius` plans the path to a goal, and this walker has `goal_endpoint: false` (it takes no goals): set `goal_endpoint: true` or drop the key"],
    );
    assert_has(
        &refused("{pos: [1, 1], planner: {waypoint_radius: 0}}"),
        &["planner.waypoint_radius: must be in (0, 1000] m, got 0"],
    );
    assert_has(
        &refused("{pos: [1, 1], planner: {inflation_radius: 0.2}}"),
        &["planner.inflation_radius: 0.2 m is less than the person's radius (orca.radius 0.26 m): a planned path would run the walker into walls; give at least 0.26"],
    );
}
