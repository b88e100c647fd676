//! The Rust side of the benchmark suite (bench/README.md): rows 1, 6 and 7, and the compiled
//! model every other row steps. Driven by `bench/run.sh`; prints one JSON object per call on
//! stdout, asserts nothing. Not part of any test.
//!
//! ```text
//! bench_rows prepare WORLD.yaml OUT_PREFIX      row 6: load + compile once (timed), then save the
//!                                               compiled model to OUT_PREFIX.mjb (mj_saveModel)
//!                                               and its post-reset state to OUT_PREFIX.state
//! bench_rows bare OUT_PREFIX STEPS              row 1: load the .mjb and OUT_PREFIX.trace, set the
//!                                               trace's initial state, time a bare `mj_step` loop of
//!                                               STEPS steps replaying the recorded inputs before
//!                                               each step, then check the final state bitwise
//! bench_rows trace WORLD.yaml STEPS OUT_PREFIX  the same-physics record: run the engine as row 3
//!                                               does (untimed) recording every input the plugins
//!                                               wrote before each mj_step (OUT_PREFIX.trace), and
//!                                               a dense copy for Python (OUT_PREFIX.user/.phys)
//! bench_rows engine WORLD.yaml STEPS [--ros]    rows 3 and 4: the engine through the CLI's own loop
//!                                               (`roqsim::runner::run`, asap), transport off, or
//!                                               with the ROS 2 bridge (`--ros`, needs the `ros`
//!                                               feature); with `--ros` the loop starts only once
//!                                               every published endpoint has a matched subscriber;
//!                                               (`--lazy-unsubscribed`: lazy ones may stay
//!                                               unsubscribed, and then produce nothing);
//!                                               `--set KEY=VALUE` as the CLI's (e.g.
//!                                               `components.ros2_bridge.clock_rate_hz=100`);
//!                                               `--record OUT.mcap` records the run as
//!                                               `roqsim sim --record` (state at 50 Hz, every topic:
//!                                               the recording row); prints
//!                                               the loop's wall time and the process's CPU time
//! bench_rows pacing WORLD.yaml SIM_SECONDS      row 7: run the engine at --pacing realtime with the
//!                                               runner's Pacer, recording wall time per step
//! ```
//!
//! The `.state` file is `mj_getState(mjSTATE_INTEGRATION)` as little-endian f64 (qpos, qvel, act,
//! ctrl, applied forces, mocap, ... in MuJoCo 3.17.0's order; time included), so Python (row 2 and
//! row 5) starts from the same state the engine starts from after its reset.
//!
//! Build: `cargo build --release --example bench_rows` (bench/run.sh does it).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use mujoco_rs::mujoco_c::{mj_getState, mj_stateSize, mjtState};
use mujoco_rs::prelude::*;
use roqsim::context::Direction;
use roqsim::engine::input_trace::{state_digest, InputTrace};
use roqsim::engine::pacing::Pacer;
use roqsim::runner::{self, Limits};
use roqsim::{load_world, Engine, EngineOptions, LoadOptions};

/// State signature shared with Python (`mujoco.mjtState.mjSTATE_INTEGRATION`).
const SIG: i32 = mjtState::mjSTATE_INTEGRATION as i32;

fn usage() -> ! {
    eprintln!("usage: bench_rows prepare WORLD.yaml OUT_PREFIX | bare OUT_PREFIX STEPS | trace WORLD.yaml STEPS OUT_PREFIX | engine WORLD.yaml STEPS [--ros [--lazy-unsubscribed]] [--set KEY=VALUE]... [--record OUT.mcap] | pacing WORLD.yaml SIM_SECONDS");
    std::process::exit(2)
}

fn arg(args: &[String], i: usize) -> &str {
    args.get(i).map(String::as_str).unwrap_or_else(|| usage())
}

fn main() {
    // MuJoCo/roqsim log lines go to stderr; stdout carries only the JSON answer.
    let args: Vec<String> = std::env::args().collect();
    match arg(&args, 1) {
        "prepare" => prepare(Path::new(arg(&args, 2)), arg(&args, 3)),
        "bare" => bare(arg(&args, 2), arg(&args, 3).parse().unwrap_or_else(|_| usage())),
        "trace" => trace(
            Path::new(arg(&args, 2)),
            arg(&args, 3).parse().unwrap_or_else(|_| usage()),
            arg(&args, 4),
        ),
        "engine" => {
            // [--ros] [--set KEY=VALUE]...: the CLI's flags of the same names
            let mut opts = LoadOptions::default();
            let mut lazy_idle = false;
            let mut record = None;
            let mut rest = args.iter().skip(4);
            while let Some(a) = rest.next() {
                match a.as_str() {
                    "--ros" => opts.ros = true,
                    "--record" => record = Some(rest.next().unwrap_or_else(|| usage()).clone()),
                    "--lazy-unsubscribed" => lazy_idle = true,
                    "--set" => {
                        let kv = rest.next().unwrap_or_else(|| usage());
                        opts.assignments.push(
                            roqsim::world::overrides::parse_set(kv)
                                .unwrap_or_else(|e| panic!("--set {kv}: {e}")),
                        );
                    }
                    _ => usage(),
                }
            }
            engine_run(
                Path::new(arg(&args, 2)),
                arg(&args, 3).parse().unwrap_or_else(|_| usage()),
                opts,
                lazy_idle,
                record.as_deref(),
            )
        }
        "pacing" => {
            pacing(Path::new(arg(&args, 2)), arg(&args, 3).parse().unwrap_or_else(|_| usage()))
        }
        _ => usage(),
    }
}

fn load_engine(world: &Path) -> (Engine, f64) {
    load_engine_with(world, LoadOptions::default())
}

fn load_engine_with(world: &Path, opts: LoadOptions) -> (Engine, f64) {
    let t0 = Instant::now();
    let w = load_world(world, &opts).unwrap_or_else(|e| panic!("{}: {e}", world.display()));
    let engine = Engine::new(w, EngineOptions { profile: false, seed: Some(1) })
        .unwrap_or_else(|e| panic!("{}: {e}", world.display()));
    (engine, t0.elapsed().as_secs_f64())
}

/// [`load_engine_with`] recording the run as `roqsim sim --record OUT` does (state at 50 Hz,
/// every topic): the recording row.
fn load_engine_recording(world: &Path, opts: LoadOptions, out: &str) -> (Engine, f64) {
    use roqsim::record::{RecordOptions, Recorder, RunInputs, TopicFilter};
    let t0 = Instant::now();
    let mut rec = Recorder::create(RecordOptions {
        path: out.into(),
        rate_hz: roqsim::record::recorder::DEFAULT_RATE_HZ,
        topics: TopicFilter::All,
    })
    .unwrap_or_else(|e| panic!("--record {out}: {e}"));
    let w = load_world(world, &opts).unwrap_or_else(|e| panic!("{}: {e}", world.display()));
    let inputs = RunInputs {
        world_ref: world.display().to_string(),
        world_path: world.to_path_buf(),
        world_yaml: std::fs::read_to_string(world).unwrap_or_default(),
        assignments: opts.assignments.clone(),
        override_files: Vec::new(),
        ros: opts.ros,
        tf_namespace: opts.tf_namespace.clone(),
        sim_control: opts.sim_control,
        no_communication: opts.no_communication,
        seed: 1,
    };
    rec.prepare(&inputs, &w).unwrap_or_else(|e| panic!("--record: {e}"));
    let mut engine = Engine::new(w, EngineOptions { profile: false, seed: Some(1) })
        .unwrap_or_else(|e| panic!("{}: {e}", world.display()));
    rec.attach(&mut engine).unwrap_or_else(|e| panic!("--record: {e}"));
    (engine, t0.elapsed().as_secs_f64())
}

/// Row 6 (load + compile) and the shared compiled model.
fn prepare(world: &Path, out: &str) {
    let (engine, total) = load_engine(world);
    let phase = |names: &[&str]| -> f64 {
        engine
            .load_report()
            .iter()
            .filter(|(n, _)| names.contains(&n.as_str()))
            .map(|(_, s)| s)
            .sum()
    };
    let load = phase(&["parse", "expand", "instantiate"]);
    let build = phase(&["world", "build"]);
    let compile = phase(&["compile"]);
    let configure = phase(&["data", "configure"]);

    let model = engine.ctx.data().model_clone();
    model.save_to_file(format!("{out}.mjb")).unwrap_or_else(|e| panic!("saving {out}.mjb: {e}"));
    let state = get_state(engine.ctx.data());
    let bytes: Vec<u8> = state.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(format!("{out}.state"), bytes)
        .unwrap_or_else(|e| panic!("writing {out}.state: {e}"));

    let m = model.ffi();
    println!(
        "{{\"world\": \"{}\", \"total_s\": {total}, \"load_s\": {load}, \"build_s\": {build}, \"compile_s\": {compile}, \"configure_s\": {configure}, \
         \"plugins\": {}, \"nbody\": {}, \"ngeom\": {}, \"nu\": {}, \"nq\": {}, \"timestep\": {}, \"state_len\": {}}}",
        world.display(),
        engine.plugin_addresses().len(),
        m.nbody,
        m.ngeom,
        m.nu,
        m.nq,
        engine.dt(),
        state.len()
    );
}

fn get_state(d: &roqsim::context::Data) -> Vec<f64> {
    let m = d.model();
    // SAFETY: the buffer holds mj_stateSize(m, SIG) numbers; model and data are live.
    unsafe {
        let n = mj_stateSize(m.ffi(), SIG) as usize;
        let mut s = vec![0.0; n];
        mj_getState(m.ffi(), d.ffi(), s.as_mut_ptr(), SIG);
        s
    }
}

/// Row 1: bare `mj_step` on the saved model, replaying the engine run's recorded inputs before
/// every step (`bench_rows trace`), then the bitwise same-physics check against that run's final
/// state. Prints `same_physics` and, when false, where the replay diverged.
fn bare(prefix: &str, steps: u64) {
    let model = Arc::new(
        MjModel::from_mjb(format!("{prefix}.mjb")).unwrap_or_else(|e| panic!("{prefix}.mjb: {e}")),
    );
    let trace = read_trace(prefix);
    if trace.len() as u64 != steps {
        eprintln!(
            "bench_rows bare: {prefix}.trace holds {} steps, asked for {steps}: record it with the same STEPS",
            trace.len()
        );
        std::process::exit(2);
    }
    let mut d = MjData::new(model.clone());
    let m = model.ffi();
    // SAFETY: model and data are live and belong together; only this thread touches them.
    let mut user = trace.set_initial(m, unsafe { d.ffi_mut() });
    d.forward();
    let t = Instant::now();
    for k in 0..steps as usize {
        // SAFETY: as above.
        trace.replay_step(k, m, unsafe { d.ffi_mut() }, &mut user);
        d.step();
    }
    let wall = t.elapsed().as_secs_f64();
    let verdict = match trace.check_final(m, d.ffi()) {
        Ok(()) => "\"same_physics\": true".to_string(),
        Err(fin) => {
            // Find the first step and field that differ (untimed, on a fresh MjData).
            let mut d2 = MjData::new(model.clone());
            // SAFETY: as above.
            let at = trace.locate(m, unsafe { d2.ffi_mut() }).unwrap_or(fin);
            format!("\"same_physics\": false, \"divergence\": \"{at}\"")
        }
    };
    println!(
        "{{\"steps\": {steps}, \"wall_s\": {wall}, \"sim_s\": {}, \"time\": {}, \"final_digest\": \"{:016x}\", {verdict}}}",
        steps as f64 * m.opt.timestep,
        d.time(),
        state_digest(m, d.ffi()),
    );
}

fn read_trace(prefix: &str) -> InputTrace {
    let f = std::fs::File::open(format!("{prefix}.trace"))
        .unwrap_or_else(|e| panic!("{prefix}.trace: {e} (run `bench_rows trace` first)"));
    InputTrace::read_from(&mut std::io::BufReader::new(f))
        .unwrap_or_else(|e| panic!("{prefix}.trace: {e}"))
}

/// The same-physics record: the engine through the CLI's loop, untimed, recording every input the
/// plugins wrote before each `mj_step`. Writes OUT_PREFIX.trace, and for Python (row 2) the dense
/// OUT_PREFIX.user (STEPS rows of the `mjSTATE_USER` vector), OUT_PREFIX.phys (step index + the
/// physics state, for every step whose physics a plugin overwrote) and OUT_PREFIX.last (the final
/// `mjSTATE_INTEGRATION` state).
fn trace(world: &Path, steps: u64, out: &str) {
    let (mut engine, _) = load_engine(world);
    engine.record_inputs();
    let limits = Limits { steps: Some(steps), seconds: None };
    let s = runner::run(&mut engine, limits, None, false, &|| false)
        .unwrap_or_else(|e| panic!("run: {e}"));
    let t = engine.take_input_trace().expect("recording");
    let errs = engine.shutdown();
    assert!(errs.is_empty(), "shutdown: {errs:?}");
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(format!("{out}.trace"))
            .unwrap_or_else(|e| panic!("{out}.trace: {e}")),
    );
    t.write_to(&mut f).unwrap_or_else(|e| panic!("{out}.trace: {e}"));
    let le = |v: &[f64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let write = |ext: &str, bytes: Vec<u8>| {
        std::fs::write(format!("{out}.{ext}"), bytes).unwrap_or_else(|e| panic!("{out}.{ext}: {e}"))
    };
    let (user, phys) = t.dense();
    write("user", le(&user));
    write("phys", le(&phys));
    write("last", le(&t.last));
    let overwritten = t.steps.iter().filter(|s| s.physics.is_some()).count();
    let changes: usize = t.steps.iter().map(|s| s.user_changes.len()).sum();
    println!(
        "{{\"steps\": {}, \"user_len\": {}, \"user_changes\": {changes}, \"physics_overwritten\": {overwritten}, \"final_digest\": \"{:016x}\"}}",
        s.steps,
        t.user_len(),
        roqsim::engine::input_trace::digest_of(&t.last),
    );
}

/// Rows 3 and 4: `roqsim sim WORLD --pacing asap --steps STEPS [--ros]`, in process: the same
/// load, engine and loop (`runner::run`) as the CLI. With `--ros`, the engine idles (transport
/// alive, no step: what a pause does) until the bridge reports a matched subscriber on every
/// endpoint it publishes, then 1 s more for /clock and /tf_static, so the timed loop is the loop
/// with its subscribers attached, not DDS discovery. Prints the runner's summary as JSON.
fn engine_run(world: &Path, steps: u64, opts: LoadOptions, lazy_idle: bool, record: Option<&str>) {
    let ros = opts.ros;
    let (mut engine, _) = match record {
        None => load_engine_with(world, opts),
        Some(out) => load_engine_recording(world, opts, out),
    };
    if ros {
        let t0 = Instant::now();
        let matched = |e: &Engine| {
            let outs: Vec<Option<bool>> = e
                .ctx
                .interface
                .all()
                .iter()
                .filter(|ep| ep.direction == Direction::Out && !(lazy_idle && ep.lazy))
                .map(|ep| ep.has_subscribers)
                .collect();
            outs.iter().any(Option::is_some) && outs.iter().all(|h| *h != Some(false))
        };
        while !matched(&engine) {
            if t0.elapsed().as_secs_f64() > 30.0 {
                let missing: Vec<&str> = engine
                    .ctx
                    .interface
                    .all()
                    .iter()
                    .filter(|ep| ep.has_subscribers == Some(false) && !(lazy_idle && ep.lazy))
                    .map(|ep| ep.name.as_str())
                    .collect();
                panic!("no subscriber matched within 30 s on: {}", missing.join(", "));
            }
            engine.idle().unwrap_or_else(|e| panic!("idle: {e}"));
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let t1 = Instant::now();
        while t1.elapsed().as_secs_f64() < 1.0 {
            engine.idle().unwrap_or_else(|e| panic!("idle: {e}"));
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        eprintln!("subscribers matched after {:.2} s", t0.elapsed().as_secs_f64());
    }
    let limits = Limits { steps: Some(steps), seconds: None };
    let cpu0 = process_cpu_s();
    let s = runner::run(&mut engine, limits, None, false, &|| false)
        .unwrap_or_else(|e| panic!("run: {e}"));
    let cpu = process_cpu_s() - cpu0;
    let digest = {
        let d = engine.ctx.data();
        state_digest(d.model().ffi(), d.ffi())
    };
    let errs = engine.shutdown();
    assert!(errs.is_empty(), "shutdown: {errs:?}");
    println!(
        "{{\"steps\": {}, \"wall_s\": {}, \"sim_s\": {}, \"cpu_s\": {cpu}, \"reason\": \"{}\", \"final_digest\": \"{digest:016x}\"}}",
        s.steps, s.wall_s, s.sim_time, s.reason
    );
}

/// This process's CPU time so far, user + sys over every thread (the bridge's and DDS's too), in
/// seconds: `CLOCK_PROCESS_CPUTIME_ID`.
fn process_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Row 7: realtime pacing, instrumented. The loop is the runner's (`roqsim::runner::run` without
/// its command/pause handling): `Pacer::due_steps()` then that many `Engine::step()`s. Recorded:
/// the wall time (monotonic) at which each step starts.
fn pacing(world: &Path, sim_seconds: f64) {
    let (mut engine, _) = load_engine(world);
    let dt = engine.dt();
    let n = (sim_seconds / dt).round() as usize;
    let mut starts: Vec<Instant> = Vec::with_capacity(n);
    let mut pacer = Pacer::new(dt, Some(1.0));
    let t0 = Instant::now();
    let cpu0 = process_cpu_s();
    'run: loop {
        let due = pacer.due_steps();
        for _ in 0..due {
            if starts.len() >= n {
                break 'run;
            }
            starts.push(Instant::now());
            engine.step().unwrap_or_else(|e| panic!("step: {e}"));
        }
    }
    let wall = t0.elapsed().as_secs_f64();
    let cpu_per_sim_s = (process_cpu_s() - cpu0) / (n as f64 * dt);
    // Spacing error: |(t_k - t_{k-1}) - dt| for consecutive step starts (µs).
    let mut spacing: Vec<f64> =
        starts.windows(2).map(|w| ((w[1] - w[0]).as_secs_f64() - dt).abs() * 1e6).collect();
    // Lateness: how far step k starts after its due time t0 + (k+1)·dt on the wall clock (µs);
    // the Pacer never starts a step early, so this is >= 0 up to timer resolution.
    let mut late: Vec<f64> = starts
        .iter()
        .enumerate()
        .map(|(k, s)| ((*s - t0).as_secs_f64() - (k as f64 + 1.0) * dt) * 1e6)
        .collect();
    let drift_ms = ((*starts.last().unwrap() - t0).as_secs_f64() - n as f64 * dt) * 1e3;
    let q = |v: &mut Vec<f64>, p: f64| -> f64 {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[((v.len() - 1) as f64 * p).round() as usize]
    };
    let (s50, s99, smax) = (q(&mut spacing, 0.5), q(&mut spacing, 0.99), q(&mut spacing, 1.0));
    let (l50, l99, lmax) = (q(&mut late, 0.5), q(&mut late, 0.99), q(&mut late, 1.0));
    println!(
        "{{\"steps\": {n}, \"dt\": {dt}, \"wall_s\": {wall}, \"spacing_p50_us\": {s50}, \"spacing_p99_us\": {s99}, \"spacing_max_us\": {smax}, \
         \"late_p50_us\": {l50}, \"late_p99_us\": {l99}, \"late_max_us\": {lmax}, \"end_drift_ms\": {drift_ms}, \"cpu_per_sim_s\": {cpu_per_sim_s}, \"dropped_s\": {}}}",
        pacer.dropped_s
    );
}
