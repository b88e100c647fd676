//! Engine overhead: the same compiled model stepped bare (`mj_step` in a loop) and through the
//! engine with five dummy plugins (every hook implemented), alternated, median of 5 rounds.
//! Prints steps/s and the ratio (target ≥ 0.95×). Run: `cargo bench --bench engine_overhead`.
//! No timing is asserted anywhere; this only reports.

use std::path::Path;
use std::time::Instant;

use mujoco_rs::prelude::MjData;
use roqsim::{load_world, Engine, EngineOptions, LoadOptions};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn measure(world_rel: &str, steps: u64) {
    let world = Path::new(env!("CARGO_MANIFEST_DIR")).join(world_rel);
    let w = load_world(&world, &LoadOptions::default()).expect("world loads");
    let mut engine =
        Engine::new(w, EngineOptions { profile: false, seed: Some(1) }).expect("engine");
    let model = engine.ctx.data().model_clone();
    let mut bare = MjData::new(model);
    let (mut r_bare, mut r_eng) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        bare.reset();
        let t = Instant::now();
        for _ in 0..steps {
            bare.step();
        }
        r_bare.push(steps as f64 / t.elapsed().as_secs_f64());
        engine.reset().unwrap();
        let t = Instant::now();
        for _ in 0..steps {
            engine.step().unwrap();
        }
        r_eng.push(steps as f64 / t.elapsed().as_secs_f64());
    }
    let (b, e) = (median(r_bare), median(r_eng));
    println!(
        "| {:<28} | {:>3} | {:>12.0} | {:>12.0} | {:>6.3}x |",
        world_rel,
        engine.plugin_addresses().len(),
        b,
        e,
        e / b
    );
}

fn main() {
    let steps: u64 =
        std::env::var("ROQSIM_BENCH_STEPS").ok().and_then(|s| s.parse().ok()).unwrap_or(20_000);
    println!("Engine vs bare mj_step on the same compiled model, same run, median of 5 alternating rounds of {steps} steps.");
    println!("Targets: demo (5 dummy plugins) >= 0.95x; turtlebot_floorplan (diff_drive, 360-ray lidar at 10 Hz, IMU) >= 0.90x.\n");
    println!(
        "| {:<28} | {:>3} | {:>12} | {:>12} | {:>7} |",
        "world", "plg", "bare steps/s", "engine st/s", "ratio"
    );
    println!(
        "|{}|{}|{}|{}|{}|",
        "-".repeat(30),
        "-".repeat(5),
        "-".repeat(14),
        "-".repeat(14),
        "-".repeat(9)
    );
    for w in ["worlds/demo.yaml", "worlds/turtlebot_floorplan.yaml"] {
        measure(w, steps);
    }
}
