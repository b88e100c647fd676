//! Props that move by themselves (ROS-free): `moving_box` on a fixed route and on a seeded random
//! walk, and `prop_trajectory` carrying a box along a CSV path. Every assertion is a measured
//! position, a scan range or an exact refusal text.

mod common;

use std::path::Path;

use common::{assert_has, engine_at, refusal_in, secs};
use mujoco_rs::prelude::MjtObjBase;
use roqsim::engine::sim_control;
use roqsim::plugins::assets::prop_trajectory::{handle_key, PropTrajectoryHandle};
use roqsim::plugins::sensors::lidar::LidarReader;
use roqsim::Engine;

/// A floor, a lidar site at (0, 0, 0.2) on its own body, and far away (x = 100) a 4 m × 100 m
/// walled strip with its inner face at x = 103.
const SCENE: &str = r#"<mujoco model="movers_scene">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="300 300 0.1"/>
    <body name="sensor_base" pos="0 0 0.2">
      <geom name="housing" type="cylinder" size="0.04 0.02" contype="0" conaffinity="0"/>
      <site name="scan"/>
    </body>
    <geom name="wall_e" type="box" pos="103.05 0 0.5" size="0.05 50 0.5"/>
  </worldbody>
</mujoco>
"#;

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("scene.xml"), SCENE).unwrap();
        Dir(d)
    }
    fn path(&self) -> &Path {
        self.0.path()
    }
    fn file(&self, name: &str, text: &str) {
        std::fs::write(self.0.path().join(name), text).unwrap();
    }
    fn engine(&self, components: &str) -> Engine {
        engine_at(&world(components), self.path(), 1)
    }
    fn refusal(&self, components: &str) -> String {
        refusal_in(&world(components), self.path())
    }
}

fn world(components: &str) -> String {
    format!("sim:\n  world: scene.xml\ncomponents:\n{components}")
}

fn body(e: &Engine, name: &str) -> usize {
    e.ctx
        .model()
        .name_to_id(MjtObjBase::mjOBJ_BODY, name)
        .unwrap_or_else(|| panic!("no body {name}"))
}

/// The mocap position of body `name`.
fn mocap(e: &Engine, name: &str) -> [f64; 3] {
    let id = e.ctx.model().body_mocapid()[body(e, name)];
    assert!(id >= 0, "{name} is not a mocap body");
    e.ctx.data().mocap_pos()[id as usize]
}

fn xpos(e: &Engine, name: &str) -> [f64; 3] {
    e.ctx.data().xpos()[body(e, name)]
}

fn close2(a: [f64; 3], b: [f64; 2], tol: f64) {
    assert!(
        (a[0] - b[0]).abs() <= tol && (a[1] - b[1]).abs() <= tol,
        "at ({}, {}), expected ({}, {}) within {tol}",
        a[0],
        a[1],
        b[0],
        b[1]
    );
}

fn route(extra: &str) -> String {
    format!("  - moving_box: {{prefix: '', size: [0.3, 0.3, 0.3], speed: 0.5, {extra}}}\n    name: mover\n")
}

// ------------------------------------------------------------------------------------- mode A

#[test]
fn route_is_followed_at_speed_along_its_arc_length_and_the_loop_closes() {
    let d = Dir::new();
    let mut e = d.engine(&route("waypoints: [[2.0, 0.0], [2.0, 1.0]]"));
    // on the floor, at the start pose
    let p = mocap(&e, "mover");
    assert_eq!(p, [0.0, 0.0, 0.15]);
    // (t, expected position): arc length 0.5 t along (0,0) → (2,0) → (2,1) → back to (0,0)
    let back = 5f64.sqrt();
    let checks: [(f64, [f64; 2]); 4] = [
        (1.0, [0.5, 0.0]),
        (3.0, [1.5, 0.0]),
        (5.0, [2.0, 0.5]),
        (7.0, [2.0 - 2.0 * 0.5 / back, 1.0 - 0.5 / back]),
    ];
    let mut t = 0.0;
    for (at, want) in checks {
        secs(&mut e, at - t);
        t = at;
        close2(mocap(&e, "mover"), want, 1e-6);
        // the body the physics sees is where the mocap pose says
        close2(xpos(&e, "mover"), want, 1e-6);
        assert_eq!(mocap(&e, "mover")[2], 0.15, "the box never leaves the floor");
    }
    // laps later it is still on the closed route at arc length 0.5 t, modulo the lap (3 + sqrt 5 m)
    secs(&mut e, 40.0);
    let lap = 3.0 + back;
    let s = (0.5 * e.ctx.sim_time()).rem_euclid(lap);
    let want = match s {
        s if s <= 2.0 => [s, 0.0],
        s if s <= 3.0 => [2.0, s - 2.0],
        s => [2.0 - 2.0 * (s - 3.0) / back, 1.0 - (s - 3.0) / back],
    };
    close2(mocap(&e, "mover"), want, 1e-6);
}

#[test]
fn ping_pong_reverses_at_each_end() {
    let d = Dir::new();
    let mut e = d.engine(&route("waypoints: [[1.0, 0.0], [1.0, 1.0]], ping_pong: true"));
    secs(&mut e, 3.0); // s = 1.5: on the second leg
    close2(mocap(&e, "mover"), [1.0, 0.5], 1e-6);
    secs(&mut e, 2.0); // s = 2.5: reversed at (1, 1), back on the second leg
    close2(mocap(&e, "mover"), [1.0, 0.5], 1e-6);
    secs(&mut e, 2.0); // s = 3.5: past (1, 0), heading back to the start
    close2(mocap(&e, "mover"), [0.5, 0.0], 1e-6);
    secs(&mut e, 2.0); // s = 4.5: reversed at the start, outward again
    close2(mocap(&e, "mover"), [0.5, 0.0], 1e-6);
}

#[test]
fn loop_false_stops_at_the_last_waypoint_and_ping_pong_once_at_the_start() {
    let d = Dir::new();
    let mut e = d.engine(&route("waypoints: [[1.0, 0.0], [1.0, 1.0]], loop: false"));
    secs(&mut e, 3.0);
    close2(mocap(&e, "mover"), [1.0, 0.5], 1e-6);
    secs(&mut e, 1.5);
    assert_eq!(&mocap(&e, "mover")[..2], &[1.0, 1.0]);
    secs(&mut e, 5.0);
    assert_eq!(&mocap(&e, "mover")[..2], &[1.0, 1.0], "it stays at the end");
    let mut e = d.engine(&route("waypoints: [[1.0, 0.0]], loop: false, ping_pong: true"));
    secs(&mut e, 1.0);
    close2(mocap(&e, "mover"), [0.5, 0.0], 1e-6);
    secs(&mut e, 2.0);
    close2(mocap(&e, "mover"), [0.5, 0.0], 1e-6);
    secs(&mut e, 3.0);
    assert_eq!(&mocap(&e, "mover")[..2], &[0.0, 0.0], "one out-and-back, then it stays home");
}

#[test]
fn reset_puts_the_box_back_at_its_pose_and_restarts_the_route() {
    let d = Dir::new();
    let mut e = d.engine(&route(
        "pose: {position: {x: 1.0, y: 2.0, z: 0.5}}, waypoints: [[3.0, 2.0]], loop: false",
    ));
    secs(&mut e, 2.0);
    close2(mocap(&e, "mover"), [2.0, 2.0], 1e-6);
    e.reset().unwrap();
    assert_eq!(mocap(&e, "mover"), [1.0, 2.0, 0.5]);
    secs(&mut e, 1.0);
    close2(mocap(&e, "mover"), [1.5, 2.0], 1e-6);
}

#[test]
fn a_teleport_is_adopted_and_the_route_continues_toward_its_waypoint() {
    let d = Dir::new();
    let mut e = d.engine(&route("waypoints: [[4.0, 0.0]], loop: false"));
    secs(&mut e, 1.0);
    sim_control::set_entity_state(
        &mut e.ctx,
        "mover",
        Some(([2.0, 1.0, 0.15], [0.0, 0.0, 0.0, 1.0])),
        None,
    )
    .unwrap();
    secs(&mut e, 2.0);
    // 1 m from (2, 1) toward (4, 0)
    let u = 1.0 / 5f64.sqrt();
    close2(mocap(&e, "mover"), [2.0 + 2.0 * u, 1.0 - u], 1e-6);
}

#[test]
fn present_false_holds_it_absent_and_spawn_delete_work_on_it() {
    let d = Dir::new();
    let mut e = d.engine(&route("waypoints: [[4.0, 0.0]], loop: false, present: false"));
    secs(&mut e, 1.0);
    assert_eq!(&mocap(&e, "mover")[..2], &[0.0, 0.0], "an absent box stands still");
    assert!(sim_control::spawnables(&e.ctx).contains(&"mover".to_string()));
    sim_control::spawn(&mut e.ctx, "", "mover", "", "", None).unwrap();
    secs(&mut e, 1.0);
    close2(mocap(&e, "mover"), [0.5, 0.0], 1e-6);
    sim_control::delete(&mut e.ctx, "mover").unwrap();
    secs(&mut e, 1.0);
    close2(mocap(&e, "mover"), [0.5, 0.0], 1e-6);
    // spawned again at a pose: it goes on from there toward its waypoint
    let at = Some(([3.0, 0.0, 0.15], [0.0, 0.0, 0.0, 1.0]));
    sim_control::spawn(&mut e.ctx, "", "mover", "", "", at).unwrap();
    secs(&mut e, 1.0);
    close2(mocap(&e, "mover"), [3.5, 0.0], 1e-6);
    // a driven box takes a pose, not a velocity
    let err =
        sim_control::set_entity_state(&mut e.ctx, "mover", None, Some(([1.0, 0.0, 0.0], [0.0; 3])))
            .unwrap_err();
    assert_eq!(err.message, "`mover` is a driven (mocap) body: it takes a pose, not a velocity");
    let ent = e.ctx.entities.get("mover").unwrap();
    assert_eq!(ent.meta.get("motion").map(String::as_str), Some("driven"));
}

#[test]
fn the_lidar_sees_the_moving_box_at_the_distance_ground_truth_says() {
    let d = Dir::new();
    let comps = format!(
        "  - lidar: {{site: scan, exclude_body: sensor_base, rate_hz: 50}}\n{}",
        route("pose: {position: {x: 3.0, y: 0.0}}, waypoints: [[1.0, 0.0]], loop: false")
    );
    let mut e = d.engine(&comps);
    let reader = e.ctx.blackboard.get::<LidarReader>("lidar:lidar").unwrap().clone();
    for _ in 0..4 {
        secs(&mut e, 0.5);
        let scan = reader.latest().expect("a scan");
        let t = scan.stamp;
        assert!(e.ctx.sim_time() - t < 0.02 + 1e-9, "a 50 Hz scan is at most 20 ms old");
        // ground truth at the scan's time: the box's near face, from the sensor at x = 0
        let face = 3.0 - 0.5 * t - 0.15;
        let r = scan.ranges[0] as f64;
        assert!((r - face).abs() < 1e-5, "scan {r} vs ground truth {face} at t = {t}");
    }
}

// ------------------------------------------------------------------------------------- mode B

fn walk(seed: u64, extra: &str) -> String {
    format!(
        "  - moving_box: {{prefix: '', size: [0.4, 0.4, 0.4], speed: 1.0, pose: {{position: {{x: 100.0, y: 0.0}}}}, random_walk: {{seed: {seed}, clearance: 0.5{extra}}}}}\n    name: walker_box\n"
    )
}

/// Positions every 0.1 s for `s` seconds.
fn track(e: &mut Engine, s: f64) -> Vec<[f64; 3]> {
    let n = (s / 0.1).round() as usize;
    (0..n)
        .map(|_| {
            secs(e, 0.1);
            mocap(e, "walker_box")
        })
        .collect()
}

fn bits(v: &[[f64; 3]]) -> Vec<[u64; 3]> {
    v.iter().map(|p| p.map(f64::to_bits)).collect()
}

#[test]
fn a_random_walk_is_identical_for_one_seed_and_differs_for_another() {
    let d = Dir::new();
    let extra = ", bounds: [98.0, -2.0, 102.0, 2.0]";
    let a = track(&mut d.engine(&walk(7, extra)), 30.0);
    let b = track(&mut d.engine(&walk(7, extra)), 30.0);
    let c = track(&mut d.engine(&walk(8, extra)), 30.0);
    assert_eq!(bits(&a), bits(&b));
    let differ = a.iter().zip(&c).filter(|(p, q)| p != q).count();
    assert!(differ > 200, "seed 8 should walk elsewhere ({differ} of {} samples differ)", a.len());
}

#[test]
fn a_random_walk_stays_inside_its_bounds_and_covers_them() {
    let d = Dir::new();
    let path = track(&mut d.engine(&walk(3, ", bounds: [99.0, -1.0, 101.0, 1.0]")), 60.0);
    let (mut lo, mut hi) = ([f64::MAX; 2], [f64::MIN; 2]);
    for p in &path {
        assert!(
            (99.0..=101.0).contains(&p[0]) && (-1.0..=1.0).contains(&p[1]),
            "left bounds at {p:?}"
        );
        for k in 0..2 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    // it turned at the edges and roamed the area (both axes explored over most of the box)
    assert!(hi[0] - lo[0] > 1.5 && hi[1] - lo[1] > 1.5, "explored x {lo:?}..{hi:?}");
}

#[test]
fn a_random_walk_turns_before_a_wall_keeping_its_clearance() {
    let d = Dir::new();
    // heading +x (the pose's yaw) toward the wall face at x = 103; half the box is 0.2 m: it
    // must turn when its face would come within 0.5 m of the wall, i.e. at centre x = 102.3
    let mut e = d.engine(&walk(1, ", turn_deg: [180, 180]"));
    let path = track(&mut e, 6.0);
    let max_x = path.iter().map(|p| p[0]).fold(f64::MIN, f64::max);
    assert!(max_x <= 102.3 + 1e-9 && max_x > 102.3 - 0.002 - 1e-9, "closest approach x = {max_x}");
    // reversed: 6 s at 1 m/s with 2.3 m out and the rest back
    let last = path.last().unwrap();
    assert!((last[0] - (102.3 - (6.0 - 2.3))).abs() < 0.01, "x at 6 s = {}", last[0]);
    assert!(last[1].abs() < 1e-9, "a 180° turn keeps the line");
}

#[test]
fn a_random_walk_is_reseeded_by_reset_whatever_ran_before() {
    let d = Dir::new();
    let extra = ", bounds: [98.0, -2.0, 102.0, 2.0]";
    // A: a long first episode; B: a short one. Episode 2 is the same walk in both.
    let mut a = d.engine(&walk(5, extra));
    track(&mut a, 20.0);
    a.reset().unwrap();
    assert_eq!(mocap(&a, "walker_box"), [100.0, 0.0, 0.2]);
    let a2 = track(&mut a, 20.0);
    let mut b = d.engine(&walk(5, extra));
    track(&mut b, 1.0);
    b.reset().unwrap();
    let b2 = track(&mut b, 20.0);
    assert_eq!(bits(&a2), bits(&b2));
    // and episode 2 is not a replay of episode 1
    let mut c = d.engine(&walk(5, extra));
    let c1 = track(&mut c, 20.0);
    assert_ne!(bits(&c1), bits(&a2));
}

// ------------------------------------------------------------------------------- prop_trajectory

/// A 100 mm square path (closed by `loop`), the plate's top at z = 0.3.
const SQUARE: &str = "x,y\n0,0\n100,0\n100,100\n0,100\n";

fn stage(extra: &str) -> String {
    format!("  - prop_trajectory: {{path: square.csv, speed: 0.03, origin: [5.0, 5.0, 0.3]{extra}}}\n    name: stage\n")
}

fn handle(e: &Engine) -> PropTrajectoryHandle {
    e.ctx.blackboard.get::<PropTrajectoryHandle>(&handle_key("stage")).unwrap().clone()
}

#[test]
fn the_plate_follows_the_path_exactly_at_speed_and_carries_a_box() {
    let d = Dir::new();
    d.file("square.csv", SQUARE);
    let comps = format!(
        "{}  - box: {{size: [0.05, 0.05, 0.05], motion: physics, mass: 0.2, pose: {{position: {{x: 5.0, y: 5.0, z: 0.3255}}}}}}\n    name: parcel\n",
        stage(", loop: true")
    );
    let mut e = d.engine(&comps);
    let h = handle(&e);
    assert!((h.length - 0.4).abs() < 1e-12);
    secs(&mut e, 0.5); // settle onto the plate (it moves 15 mm meanwhile)
    let off0 = {
        let (b, p) = (xpos(&e, "parcel"), xpos(&e, "stage"));
        [b[0] - p[0], b[1] - p[1]]
    };
    let mut worst = 0.0f64;
    for _ in 0..95 {
        secs(&mut e, 0.1);
        // the plate is where the path says, at arc length speed × t
        let want = h.point_at(h.arc_length());
        let p = e.ctx.data().qpos();
        let plate = [5.0 + p[0], 5.0 + p[1]];
        worst = worst.max((plate[0] - want[0]).abs().max((plate[1] - want[1]).abs()));
    }
    assert!(worst < 1e-6, "plate off its path by {worst} m");
    let t = e.ctx.sim_time();
    assert!((h.arc_length() - 0.03 * t).abs() < 1e-9);
    // after 10 s (0.3 m of path, two corners) the parcel is still where it sat on the plate
    let (b, p) = (xpos(&e, "parcel"), xpos(&e, "stage"));
    let drift = (b[0] - p[0] - off0[0]).hypot(b[1] - p[1] - off0[1]);
    eprintln!("plate path error {worst} m, parcel drift {drift} m");
    assert!(drift < 0.003, "the parcel slid {drift} m on the plate");
    // s = 0.3 m: the third corner of the square, (0, 100) mm (xpos lags qpos by one step)
    close2(p, [5.0, 5.1], 1e-4);
    let moved = (b[0] - 5.0).hypot(b[1] - 5.0);
    assert!(moved > 0.09, "the parcel was carried ({moved} m from its start)");
}

#[test]
fn the_stage_stops_at_the_end_starts_at_start_index_and_resets() {
    let d = Dir::new();
    d.file("square.csv", SQUARE);
    let mut e = d.engine(&stage(", start_index: 1"));
    let at = |e: &Engine| {
        let q = e.ctx.data().qpos();
        [q[0], q[1], 0.0]
    };
    close2(at(&e), [0.1, 0.0], 1e-12);
    secs(&mut e, 5.0); // 0.15 m from row 1: (0.1, 0) → (0.1, 0.1) → 0.05 toward (0, 0.1)
    close2(at(&e), [0.05, 0.1], 1e-6);
    secs(&mut e, 5.0); // past the last row: it stopped there
    close2(at(&e), [0.0, 0.1], 1e-9);
    let v = e.ctx.data().qvel();
    assert!(v[0].abs() < 1e-9 && v[1].abs() < 1e-9);
    e.reset().unwrap();
    close2(at(&e), [0.1, 0.0], 1e-12);
    // deleted, it stands (its path time stopped); spawned, it resumes where it stopped
    secs(&mut e, 1.0);
    close2(at(&e), [0.1, 0.03], 1e-6);
    sim_control::delete(&mut e.ctx, "stage").unwrap();
    secs(&mut e, 1.0);
    close2(at(&e), [0.1, 0.03], 1e-6);
    sim_control::spawn(&mut e.ctx, "", "stage", "", "", None).unwrap();
    secs(&mut e, 1.0);
    close2(at(&e), [0.1, 0.06], 1e-6);
}

#[test]
fn metres_and_travel_limits_clamp_the_path() {
    let d = Dir::new();
    d.file("far.csv", "# a path in metres\n0.0, 0.0\n\n0.5, 0.0\n");
    let mut e = d.engine("  - prop_trajectory: {path: far.csv, units: m, speed: 0.1, origin: [0.0, 10.0, 0.3], travel: [0.2, 0.2]}\n    name: stage\n");
    let h = handle(&e);
    assert_eq!(h.clamped, 1);
    assert!((h.length - 0.2).abs() < 1e-12, "clamped path length {}", h.length);
    secs(&mut e, 4.0);
    assert!((e.ctx.data().qpos()[0] - 0.2).abs() < 1e-9, "held at the +x soft limit");
}

/// Timed poses `t,x,y,yaw` in metres: east 0.1 m in 2 s, then north 0.1 m turning a quarter turn
/// by t = 4 s.
const TIMED: &str = "t,x,y,yaw\n0,0,0,0\n2,0.1,0,0\n4,0.1,0.1,1.5707963267948966\n";

/// The plate's (x, y, yaw) from its joints.
fn stage_pose(e: &Engine) -> [f64; 3] {
    let q = e.ctx.data().qpos();
    [q[0], q[1], q[2]]
}

#[test]
fn a_timed_path_puts_the_plate_at_each_pose_at_its_time() {
    let d = Dir::new();
    d.file("timed.csv", TIMED);
    let mut e = d.engine("  - prop_trajectory: {path: timed.csv, units: m, origin: [5.0, 5.0, 0.3]}\n    name: stage\n");
    let h = handle(&e);
    assert!(h.timed && h.warnings.is_empty());
    let near = |a: [f64; 3], b: [f64; 3]| (0..3).all(|k| (a[k] - b[k]).abs() < 1e-9);
    secs(&mut e, 1.0);
    assert!(near(stage_pose(&e), [0.05, 0.0, 0.0]), "t = 1: {:?}", stage_pose(&e));
    secs(&mut e, 2.0);
    let q = stage_pose(&e);
    assert!(near(q, [0.1, 0.05, std::f64::consts::FRAC_PI_4]), "t = 3: {q:?}");
    assert_eq!(h.pose_at(3.0), [5.1, 5.05, std::f64::consts::FRAC_PI_4]);
    // the body turns with the joint: its world yaw is the path's (xquat lags qpos by one step)
    let m = e.ctx.model();
    let b = m.name_to_id(mujoco_rs::prelude::MjtObjBase::mjOBJ_BODY, "stage").unwrap();
    let yaw = roqsim::math::yaw_of(&e.ctx.data().xquat()[b]);
    assert!((yaw - h.pose_at(3.0 - e.dt())[2]).abs() < 1e-9, "body yaw {yaw}");
    secs(&mut e, 3.0); // past the last row: held there
    assert!(near(stage_pose(&e), [0.1, 0.1, std::f64::consts::FRAC_PI_2]), "{:?}", stage_pose(&e));
    // start_index starts at that row's time; reset re-seats it
    let mut e = d.engine("  - prop_trajectory: {path: timed.csv, units: m, origin: [5.0, 5.0, 0.3], start_index: 1}\n    name: stage\n");
    assert!(near(stage_pose(&e), [0.1, 0.0, 0.0]));
    secs(&mut e, 1.0);
    assert!(near(stage_pose(&e), [0.1, 0.05, std::f64::consts::FRAC_PI_4]), "{:?}", stage_pose(&e));
}

#[test]
fn a_timed_yaml_path_without_yaw_loops_when_it_closes() {
    let d = Dir::new();
    // mm, t,x,y: a 100 mm out-and-back in 4 s
    d.file("shuttle.yaml", "- [0, 0, 0]\n- [2, 100, 0]\n- [4, 0, 0]\n");
    let mut e = d.engine("  - prop_trajectory: {path: shuttle.yaml, origin: [5.0, 5.0, 0.3], loop: true}\n    name: stage\n");
    assert_eq!(e.ctx.data().qpos().len(), 2, "no yaw column: no yaw joint");
    secs(&mut e, 5.0); // one lap and 1 s: halfway out again
    let q = e.ctx.data().qpos();
    assert!((q[0] - 0.05).abs() < 1e-9 && q[1].abs() < 1e-12, "{q:?}");
}

#[test]
fn a_metres_file_read_as_millimetres_is_warned_about() {
    let d = Dir::new();
    d.file("metres.csv", "0.0,0.0\n0.5,0.0\n0.5,0.25\n");
    let e = d.engine("  - prop_trajectory: {path: metres.csv, speed: 0.1, origin: [0.0, 0.0, 0.3]}\n    name: stage\n");
    assert_eq!(handle(&e).warnings, vec!["prop_trajectory `stage`: every x and y in `metres.csv` is within ±2 of the origin, so read as millimetres (the default `units`) the whole path stays within 0.5 mm; if the file is in metres, set `units: m` (`units: mm` keeps millimetres and silences this)".to_string()]);
    // stated units, or a millimetre path, are not warned about
    let e = d.engine("  - prop_trajectory: {path: metres.csv, units: mm, speed: 0.1, origin: [0.0, 0.0, 0.3]}\n    name: stage\n");
    assert!(handle(&e).warnings.is_empty());
    d.file("square.csv", SQUARE);
    let e = d.engine(&stage(""));
    assert!(handle(&e).warnings.is_empty());
}

#[test]
fn timed_path_refusals() {
    let d = Dir::new();
    d.file("timed.csv", TIMED);
    d.file("back.csv", "0,0,0\n2,1,0\n2,2,0\n");
    d.file("neg.csv", "-1,0,0\n2,1,0\n");
    d.file("ragged.csv", "0,0,0,0\n1,1,1\n");
    d.file("bad.yaml", "- [0, 0]\n- [1, 1, 1]\n");
    let pt = |body: &str| format!("  - prop_trajectory: {{{body}}}\n");
    refused(&d, &pt("path: timed.csv, units: m, origin: [0, 0, 0.5], speed: 0.1"), &["speed: `timed.csv` holds timed poses (t, x, y rows), which set their own pace: drop `speed`"]);
    refused(
        &d,
        &pt("path: back.csv, origin: [0, 0, 0.5]"),
        &["path: back.csv:3: t = 2 s is not after the previous row's 2 s; times must increase"],
    );
    refused(
        &d,
        &pt("path: neg.csv, origin: [0, 0, 0.5]"),
        &["path: neg.csv:1: t = -1 s is before the start; times count from 0"],
    );
    refused(&d, &pt("path: ragged.csv, origin: [0, 0, 0.5]"), &["path: ragged.csv:2: expected four finite numbers `t,x,y,yaw` like the first row, got `1,1,1`"]);
    refused(
        &d,
        &pt("path: bad.yaml, origin: [0, 0, 0.5]"),
        &["path: bad.yaml: row 1: expected two finite numbers `x,y`, got 3 number(s)"],
    );
    refused(&d, &pt("path: timed.csv, units: m, origin: [0, 0, 0.5], loop: true"), &["loop: a looping timed path goes from its last row straight back to its first, so the last pose must be the first: `timed.csv` ends at (0.1, 0.1, yaw 1.5707963267948966) and starts at (0, 0, yaw 0); add a closing row at the time the loop should take"]);
    // a closing yaw 2e-4 rad off is not the first pose; a row 1 µs after the one before is
    // passed within one 2 ms step (a jump), so it is refused naming the rows
    d.file("open.csv", "0,0,0,0\n1,10,0,1\n2,0,0,0.0002\n");
    refused(&d, &pt("path: open.csv, origin: [0, 0, 0.5], loop: true"), &["loop: a looping timed path goes from its last row straight back to its first, so the last pose must be the first: `open.csv` ends at (0, 0, yaw 0.00019999999999997797) and starts at (0, 0, yaw 0)"]);
    d.file("jump.csv", "0,0,0\n1,0,0\n1.000001,10,0\n2,10,0\n");
    refused(&d, &pt("path: jump.csv, origin: [0, 0, 0.5]"), &["[prop_trajectory] build: path: rows 2 and 3 of `jump.csv` (t = 1 s and 1.000001 s) are 9.999999999177334e-7 s apart, less than the physics timestep 0.002 s: the stage moves once a step, so it would jump between their poses at once; space timed rows at least one timestep apart (a step in the path is the time it should take; resample a denser recording)"]);
    // a path recorded at the physics rate, its times printed to the millisecond: rows are one
    // timestep apart within rounding, and the stage follows it
    let rows: String = (0..=500)
        .map(|k| format!("{:.3},{:.4},0\n", k as f64 * 0.002, k as f64 * 0.0002))
        .collect();
    d.file("p500.csv", &rows);
    let mut e = d.engine(
        "  - prop_trajectory: {path: p500.csv, units: m, origin: [0, 0, 0.5]}\n    name: stage\n",
    );
    secs(&mut e, 1.2);
    let x = e.ctx.data().qpos()[0];
    assert!((x - 0.1).abs() < 1e-3, "the stage ends at the path's last x 0.1, got {x}");
}

#[test]
fn a_looping_timed_path_closes_on_a_yaw_printed_to_four_decimals() {
    let d = Dir::new();
    // π written as 3.1416 at the start and −3.1416 at the end: 7.3e-6 rad apart, whole turns
    // aside, within the 1e-4 rad the closing row is allowed
    d.file("spin.csv", "0,0,0,3.1416\n1,50,0,0\n2,0,0,-3.1416\n");
    let mut e = d.engine("  - prop_trajectory: {path: spin.csv, origin: [5.0, 5.0, 0.3], loop: true}\n    name: stage\n");
    secs(&mut e, 2.5); // one lap and a quarter: halfway out again, yaw halfway to 0
    let q = stage_pose(&e);
    eprintln!("after 2.5 s: {q:?}");
    assert!((q[0] - 0.025).abs() < 1e-9 && q[1].abs() < 1e-12, "{q:?}");
}

// ---------------------------------------------------------------------------------- determinism

#[test]
fn movers_are_bitwise_deterministic() {
    let d = Dir::new();
    d.file("square.csv", SQUARE);
    let comps = format!(
        "{}{}{}  - box: {{size: [0.05, 0.05, 0.05], motion: physics, pose: {{position: {{x: 5.0, y: 5.0, z: 0.3255}}}}}}\n    name: parcel\n",
        route("waypoints: [[2.0, 0.0], [2.0, 1.0]], ping_pong: true"),
        walk(11, ", bounds: [98.0, -2.0, 102.0, 2.0]"),
        stage(", loop: true"),
    );
    let run = || {
        let mut e = d.engine(&comps);
        e.step_n(3000).unwrap();
        let q: Vec<u64> = e.ctx.data().qpos().iter().map(|v| v.to_bits()).collect();
        let m: Vec<u64> = e.ctx.data().mocap_pos().iter().flatten().map(|v| v.to_bits()).collect();
        (q, m)
    };
    let (a, b) = (run(), run());
    assert_eq!(a, b);
    assert!(a.1.len() == 6 && a.0.len() == 2 + 7);
}

// ------------------------------------------------------------------------------------ refusals

fn refused(d: &Dir, comps: &str, needles: &[&str]) {
    assert_has(&d.refusal(comps), needles);
}

#[test]
fn moving_box_refusals() {
    let d = Dir::new();
    let mb = |body: &str| format!("  - moving_box: {{{body}}}\n");
    refused(&d, &mb("size: [0.3, 0.3, 0.3], speed: 0.5"), &["give exactly one motion: `waypoints` (mode A, a fixed route) or `random_walk` (mode B, a seeded random walk)"]);
    refused(&d, &mb("size: [0.3, 0.3, 0.3], speed: 0.5, waypoints: [[1.0, 0.0]], random_walk: {seed: 1}"), &["random_walk: `waypoints` (a fixed route) and `random_walk` are two motions; give exactly one"]);
    refused(
        &d,
        &mb("size: [0.3, 0.3, 0.3], speed: 0.5, random_walk: {clearance: 0.5}"),
        &["random_walk", "missing field `seed`"],
    );
    refused(&d, &mb("size: [0.3, 0.3, 0.3], speed: 0.5, random_walk: {seed: 1}, loop: true, ping_pong: false"), &[
        "loop: belongs to a fixed route (`waypoints`); a random walk has no route to repeat — remove it",
        "ping_pong: belongs to a fixed route (`waypoints`); a random walk has no route to repeat — remove it",
    ]);
    refused(
        &d,
        &mb("size: [0.3, 0.3, 0.3], speed: 0.0, waypoints: [[1.0, 0.0]]"),
        &["speed: must be in (0, 1000] m/s, got 0"],
    );
    refused(
        &d,
        &mb("size: [0.3, 0.3, 0.3], speed: 2000, waypoints: [[1.0, 0.0]]"),
        &["speed: must be in (0, 1000] m/s, got 2000"],
    );
    refused(&d, &mb("size: [0.3, 0.3, 0.3], waypoints: [[1.0, 0.0]]"), &["missing field `speed`"]);
    refused(
        &d,
        &mb("size: [0.3, 0.0, 0.3], speed: 1, waypoints: [[1.0, 0.0]]"),
        &["size: full extents [x, y, z] must all be in (0, 10000] m, got [0.3, 0, 0.3]"],
    );
    refused(
        &d,
        &mb("size: [0.3, 0.3, 0.3], speed: 1, waypoints: []"),
        &["waypoints: is empty: give at least one [x, y] point (m) after the start `pose`"],
    );
    refused(
        &d,
        &mb("size: [0.3, 0.3, 0.3], speed: 1, waypoints: [[0.0, 0.0], [0.0, 0.0]]"),
        &["waypoints: every waypoint is the start `pose`: the route has no length to travel"],
    );
    refused(
        &d,
        &mb("size: [0.3, 0.3, 0.3], speed: 1, waypoints: [[1.0, 0.0], [.nan, 0.0]]"),
        &["waypoints[1]: [x, y] must be finite and within ±1000000 m, got [NaN, 0]"],
    );
    refused(
        &d,
        &mb("size: [0.3, 0.3, 0.3], speed: 1, random_walk: {seed: 1, clearance: -1}"),
        &["random_walk.clearance: must be in [0, 10000] m, got -1"],
    );
    refused(&d, &mb("size: [0.3, 0.3, 0.3], speed: 1, random_walk: {seed: 1, turn_deg: [90, 30]}"), &["random_walk.turn_deg: must be [lo, hi] with 0 <= lo <= hi <= 360 (degrees), got [90, 30]"]);
    refused(&d, &mb("size: [0.3, 0.3, 0.3], speed: 1, random_walk: {seed: 1, bounds: [1, 0, -1, 2]}"), &["random_walk.bounds: must be [x0, y0, x1, y1] (m) with x0 < x1 and y0 < y1, got [1, 0, -1, 2]"]);
    refused(&d, &mb("size: [0.3, 0.3, 0.3], speed: 1, pose: {position: {x: 5.0}}, random_walk: {seed: 1, bounds: [-1, -1, 1, 1]}"), &["random_walk.bounds: the start `pose` (5, 0) is outside [-1, -1, 1, 1]: put the start inside the bounds"]);
    refused(
        &d,
        &mb("size: [0.3, 0.3, 0.3], speed: 1, waypoints: [[1.0, 0.0]], motion: physics"),
        &["unknown field `motion`"],
    );
    refused(
        &d,
        &mb("size: [0.3, 0.3, 0.3], speed: 1, waypoints: [[1.0, 0.0]], color: [2, 0, 0]"),
        &["color"],
    );
}

#[test]
fn prop_trajectory_refusals() {
    let d = Dir::new();
    d.file("square.csv", SQUARE);
    d.file("bad.csv", "x,y\n0,0\n1,2\n3;4\n");
    d.file("three.csv", "0,0\n1,2,3\n");
    d.file("one.csv", "x,y\n5,5\n");
    d.file("same.csv", "5,5\n5,5\n");
    let big = std::fs::File::create(d.path().join("big.csv")).unwrap();
    big.set_len((16 << 20) + 1).unwrap();
    let pt = |body: &str| format!("  - prop_trajectory: {{{body}}}\n");
    refused(&d, &pt("path: big.csv, origin: [0, 0, 0.5]"), &["path: `big.csv` is 16777217 bytes; a path file is read whole and may hold at most 16777216 bytes (16 MiB)"]);
    let t = d.refusal(&pt("path: missing.csv, origin: [0, 0, 0.5]"));
    assert_has(
        &t,
        &[
            "path: `missing.csv`: cannot read the path file (",
            "a relative path is resolved against the world file's directory (",
            "missing.csv)",
        ],
    );
    refused(
        &d,
        &pt("path: bad.csv, origin: [0, 0, 0.5]"),
        &["path: bad.csv:4: expected two finite numbers `x,y`, got `3;4`"],
    );
    // a device reports no size and never ends; a FIFO blocks the reader: both refused up front
    refused(
        &d,
        &pt("path: /dev/zero, origin: [0, 0, 0.5]"),
        &["path: `/dev/zero` is not a regular file (a device, pipe or socket)"],
    );
    let fifo = d.path().join("fifo.csv");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    refused(
        &d,
        &pt("path: fifo.csv, origin: [0, 0, 0.5]"),
        &["path: `fifo.csv` is not a regular file"],
    );
    refused(
        &d,
        &pt("path: '', origin: [0, 0, 0.5]"),
        &["is a directory; name a CSV file of `x,y` rows"],
    );
    let abs = d.refusal(&pt("path: /nonexistent/p.csv, origin: [0, 0, 0.5]"));
    assert!(!abs.contains("relative path"), "an absolute path gets no relative-path hint: {abs}");
    refused(
        &d,
        &pt("path: three.csv, origin: [0, 0, 0.5]"),
        &["path: three.csv:2: expected two finite numbers `x,y`, got `1,2,3`"],
    );
    refused(
        &d,
        &pt("path: one.csv, origin: [0, 0, 0.5]"),
        &["path: `one.csv` holds 1 point(s); a path needs at least 2"],
    );
    refused(&d, &pt("path: same.csv, origin: [0, 0, 0.5]"), &["path: every point of `same.csv` is the same (after clamping into travel): the path has no length"]);
    refused(
        &d,
        &pt("path: square.csv, origin: [0, 0, 0.5], start_index: 4"),
        &["start_index: 4 is past the last row of `square.csv` (4 points: 0..=3)"],
    );
    refused(
        &d,
        &pt("path: square.csv, origin: [0, 0, 0.5], speed: -0.1"),
        &["speed: must be in (0, 1000] m/s, got -0.1"],
    );
    refused(
        &d,
        &pt("path: square.csv, origin: [0, 0, 0.5], plate: [0.1, 0.0, 0.01]"),
        &["plate: half-extents [x, y, z] must all be in (0, 10000] m, got [0.1, 0, 0.01]"],
    );
    refused(
        &d,
        &pt("path: square.csv, origin: [0, 0, 0.5], travel: [0.1, -1]"),
        &["travel: ± limits [x, y] must both be in (0, 10000] m, got [0.1, -1]"],
    );
    refused(
        &d,
        &pt("path: square.csv, origin: [0, 0, 0.5], friction: -1"),
        &["friction: must be finite and >= 0, got -1"],
    );
    refused(
        &d,
        &pt("path: square.csv, origin: [0, 0, .inf]"),
        &["origin: [x, y, z] must be finite and within ±1000000 m, got [0, 0, inf]"],
    );
    refused(
        &d,
        &pt("path: square.csv, origin: [0, 0, 0.5], units: cm"),
        &["units", "unknown variant `cm`, expected `mm` or `m`"],
    );
    refused(&d, &pt("path: square.csv"), &["missing field `origin`"]);
    refused(&d, &pt("origin: [0, 0, 0.5]"), &["missing field `path`"]);
}

// ------------------------------------------------------------------------------ bundled world

#[test]
fn the_bundled_moving_props_world_runs_and_carries_its_parcel() {
    let path = common::base().join("moving_props.yaml");
    let w = roqsim::load_world(&path, &roqsim::LoadOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut e = Engine::new(w, roqsim::EngineOptions { profile: false, seed: Some(1) }).unwrap();
    let off = |e: &Engine| {
        let (b, p) = (xpos(e, "parcel"), xpos(e, "stage"));
        [b[0] - p[0], b[1] - p[1]]
    };
    secs(&mut e, 0.5);
    let off0 = off(&e);
    secs(&mut e, 9.5);
    // the forklift is 5 m along its route: at (6.5, 1.5)
    close2(mocap(&e, "forklift"), [6.5, 1.5], 1e-6);
    let r = mocap(&e, "rover_box");
    assert!((3.0..=5.8).contains(&r[0]) && (2.3..=3.7).contains(&r[1]), "rover at {r:?}");
    let o = off(&e);
    let drift = (o[0] - off0[0]).hypot(o[1] - off0[1]);
    assert!(drift < 0.003, "the parcel slid {drift} m on the stage");
    let p = xpos(&e, "parcel");
    assert!((p[0] - 1.0).hypot(p[1] - 5.0) > 0.05, "the parcel went round: at {p:?}");
}
