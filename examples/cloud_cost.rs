//! The cost of a 3D lidar scan — the Livox Mid-360 (20,160 rays, the default) or the Seyond
//! Robin W1G (16,800 rays) — and what it does to a one-robot world's speed (issue 19 benchmark;
//! prints, asserts nothing).
//!
//! World: `worlds/turtlebot_floorplan.yaml` (one TurtleBot 4 with its RPLIDAR, odometry, IMU and
//! the Create 3's cliff/IR sensors, in a two-room floorplan with props), run as is and with a
//! `livox_mid360` (or `seyond_robin_w1g`) on the robot's `shell_link` frame site, at 10 Hz.
//! Printed: the lidar's post_step per scan (cast + classify + cloud) from the engine's profiler,
//! and the real-time factor of both worlds stepped asap (no transport).
//!
//! Run: `cargo run --release --example cloud_cost [SIM_SECONDS] [livox_mid360|seyond_robin_w1g]`
//! (default 20 s, livox_mid360).

use std::path::Path;
use std::time::Instant;

use roqsim::{load_world_str, Engine, EngineOptions, LoadOptions};

fn run(yaml: &str, seconds: f64, device: &str) -> (f64, Option<(f64, u64)>) {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("worlds");
    let loaded =
        load_world_str(yaml, &base, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let mut e = Engine::new(loaded, EngineOptions { profile: true, seed: Some(1) })
        .unwrap_or_else(|e| panic!("{e}"));
    let steps = (seconds / e.ctx.dt).round() as u64;
    let t = Instant::now();
    e.step_n(steps).unwrap();
    let wall = t.elapsed().as_secs_f64();
    let rows = e.timing_report();
    if std::env::var("CLOUD_COST_ROWS").is_ok() {
        for r in &rows {
            eprintln!("{} {} {:.1} us x {}", r.plugin, r.hook, r.avg_us, r.calls);
        }
    }
    let scan = rows
        .into_iter()
        .find(|r| r.plugin.contains(device) && r.hook == "post_step")
        .map(|r| (r.avg_us, r.calls));
    (seconds / wall, scan)
}

fn main() {
    let seconds: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(20.0);
    let device = std::env::args().nth(2).unwrap_or_else(|| "livox_mid360".into());
    let rays = match device.as_str() {
        "livox_mid360" => 360 * 56,
        "seyond_robin_w1g" => 240 * 70,
        other => panic!("unknown device `{other}`: livox_mid360 or seyond_robin_w1g"),
    };
    let world = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("worlds/turtlebot_floorplan.yaml"),
    )
    .unwrap();
    let with =
        format!("{world}    components:\n      - {device}: {{site: shell_link, rate_hz: 10}}\n");
    let (rtf_base, _) = run(&world, seconds, &device);
    let (rtf_livox, scan) = run(&with, seconds, &device);
    let (us, calls) = scan.expect("the lidar ran");
    // post_step runs every step; the average over all calls times the scans' share
    let per_scan_ms = us * calls as f64 / (seconds * 10.0) / 1000.0;
    println!("sim seconds per run: {seconds}");
    println!("one-robot world, no 3D lidar: {rtf_base:.1}x real time");
    println!("with a {device} at 10 Hz: {rtf_livox:.1}x real time");
    println!("{device} scan ({rays} rays, cast + cloud): {per_scan_ms:.2} ms per scan");
}
