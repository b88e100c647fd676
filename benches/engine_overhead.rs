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

fn main() {
    let steps: u64 = std::env::var("ROQSIM_BENCH_STEPS").ok().and_then(|s| s.parse().ok()).unwrap_or(50_000);
    let world = Path::new(env!("CARGO_MANIFEST_DIR")).join("worlds/demo.yaml");
    let w = load_world(&world, &LoadOptions::default()).expect("demo world loads");
    let mut engine = Engine::new(w, EngineOptions { profile: false, seed: Some(1) }).expect("engine");
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
    println!("model: worlds/demo.yaml (empty_room + 5 dummy plugins, {} plugins' hooks each step)", engine.plugin_addresses().len());
    println!("{:<34} {:>14}", "loop", "steps/s");
    println!("{:<34} {:>14.0}", "bare mj_step", b);
    println!("{:<34} {:>14.0}", "engine (5 dummy plugins)", e);
    println!("ratio engine/bare: {:.3}x (target >= 0.95x)", e / b);
}
