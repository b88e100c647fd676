//! The cost of one 360-ray 2D scan, in µs (issue 3 benchmark; prints, asserts nothing).
//!
//! Scene: a floorplan-ish MJCF (two 6 m × 4 m rooms joined by a door, 12 boxes and 4 cylinders)
//! with a TurtleBot 4 (its RPLIDAR A1, 360 rays, set to scan on every step) spawned in it.
//! Printed:
//! - the lidar's post_step (cast + classify + noise + publish) from the engine's profiler;
//! - the bare cast (`RayBatch::cast` of 360 rays) on the same MjData, timed directly;
//! - mj_step of the same world, for scale.
//!
//! Run: `cargo run --release --example scan_cost` (debug builds time the Rust side unoptimised).

use std::time::Instant;

use roqsim::mujoco::raycast::RayBatch;
use roqsim::world::overrides::parse_set;
use roqsim::{load_world_str, Engine, EngineOptions, LoadOptions};

fn scene_xml() -> String {
    let mut g = String::new();
    // outer walls of a 12 m × 4 m building split into two rooms by a wall at x = 0 with a 0.9 m door
    let walls = [
        ("south", -0.0, -2.05, 6.1, 0.05),
        ("north", 0.0, 2.05, 6.1, 0.05),
        ("west", -6.05, 0.0, 0.05, 2.1),
        ("east", 6.05, 0.0, 0.05, 2.1),
        ("mid_a", 0.0, -1.225, 0.05, 0.775),
        ("mid_b", 0.0, 1.225, 0.05, 0.775),
    ];
    for (n, x, y, sx, sy) in walls {
        g += &format!("    <geom name=\"wall_{n}\" type=\"box\" pos=\"{x} {y} 1.25\" size=\"{sx} {sy} 1.25\" rgba=\".8 .8 .8 1\"/>\n");
    }
    for i in 0..12 {
        let x = -5.0 + (i % 6) as f64 * 1.9;
        let y = if i < 6 { -1.2 } else { 1.3 };
        g += &format!("    <geom name=\"box_{i}\" type=\"box\" pos=\"{x} {y} 0.25\" size=\"0.25 0.2 0.25\" rgba=\".6 .4 .2 1\"/>\n");
    }
    for i in 0..4 {
        let x = -4.0 + i as f64 * 2.6;
        g += &format!("    <geom name=\"pillar_{i}\" type=\"cylinder\" pos=\"{x} 0.4 0.5\" size=\"0.12 0.5\" rgba=\".5 .5 .6 1\"/>\n");
    }
    format!(
        "<mujoco model=\"floorplan_ish\">\n  <option timestep=\"0.002\"/>\n  <worldbody>\n    <light pos=\"0 0 5\" dir=\"0 0 -1\" directional=\"true\"/>\n    <geom name=\"floor\" type=\"plane\" size=\"20 20 0.1\"/>\n{g}  </worldbody>\n</mujoco>\n"
    )
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("floorplan.xml"), scene_xml()).unwrap();
    let yaml = "sim: {world: floorplan.xml}\ncomponents:\n  - spawn_robot: {model: turtlebot4, pose: {position: {x: -3.0, y: 0.2}, orientation: {yaw: 0.3}}}\n    name: robot\n";
    let sets = [
        "components.robot.rplidar.lidar.rate_hz=500",
        "components.robot.rplidar.lidar.range_stddev=0.01",
    ];
    let assignments = sets.iter().map(|s| parse_set(s).unwrap()).collect();
    let loaded =
        load_world_str(yaml, dir.path(), &LoadOptions { assignments, ..Default::default() })
            .unwrap_or_else(|e| panic!("{e}"));
    let mut e = Engine::new(loaded, EngineOptions { profile: true, seed: Some(1) })
        .unwrap_or_else(|e| panic!("{e}"));
    let steps = 5000;
    let t = Instant::now();
    e.step_n(steps).unwrap();
    let step_wall = t.elapsed().as_secs_f64() / steps as f64 * 1e6;
    let scan_us = e
        .timing_report()
        .into_iter()
        .find(|r| r.plugin.starts_with("robot.rplidar.lidar") && r.hook == "post_step")
        .map(|r| (r.avg_us, r.calls));

    // bare cast: 360 rays in the scan plane from the scanner's site, on the same MjData
    let site = {
        let m = e.ctx.model();
        m.name_to_id(mujoco_rs::prelude::MjtObjBase::mjOBJ_SITE, "rplidar_laser")
            .expect("scanner site")
    };
    let (origin, mat) = (e.ctx.data().site_xpos()[site], e.ctx.data().site_xmat()[site]);
    let mut batch = RayBatch::new(360);
    for i in 0..360 {
        let a = -std::f64::consts::PI + i as f64 * std::f64::consts::TAU / 359.0;
        let (s, c) = a.sin_cos();
        batch.set_dir(
            i,
            [mat[0] * c + mat[1] * s, mat[3] * c + mat[4] * s, mat[6] * c + mat[7] * s],
        );
    }
    let n = 2000;
    let t = Instant::now();
    for _ in 0..n {
        batch.cast(e.ctx.data_mut(), origin, None, None, true, 12.0);
    }
    let cast_us = t.elapsed().as_secs_f64() / n as f64 * 1e6;
    let hits = batch.dist().iter().filter(|d| **d >= 0.0).count();

    let build = if cfg!(debug_assertions) { "debug" } else { "release" };
    println!("scan cost ({build} build, {} geoms, 360 rays):", e.ctx.model().ffi().ngeom);
    if let Some((us, calls)) = scan_us {
        println!("  lidar post_step (cast + classify + noise + publish): {us:.1} µs per scan ({calls} scans)");
    }
    println!("  bare RayBatch::cast of 360 rays:                     {cast_us:.1} µs per scan ({hits}/360 hit)");
    println!("  engine step incl. one scan per step (wall):          {step_wall:.1} µs");
}
