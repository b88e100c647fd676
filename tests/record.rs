//! Recording and replay, ROS-free: a run with noisy sensors, cmd_vel commands, a fault switched on
//! and off and resets is recorded through the engine's observer, reopened, rebuilt from its
//! provenance alone (also after the world file changed on disk) and re-run bitwise; a replay that
//! misses a command reports where it diverged; bad files are refused with the reason.

use std::path::{Path, PathBuf};

use roqsim::context::payload::{Payload, ServiceCall, Twist};
use roqsim::context::ResetScope;
use roqsim::record::{self, RecordOptions, Recorder, RunInputs, TopicFilter};
use roqsim::{load_world, Engine, EngineOptions, LoadOptions};

const WORLD: &str = "sim:
  timestep: 0.002
  seed: 7
components:
  - spawn_robot: {model: turtlebot4, pose: {position: {x: 0.0, y: 0.0}, orientation: {yaw: 0.0}}}
    name: robot
    components:
      - spawn_sensor: {}
        name: rplidar
        components:
          - lidar: {range_stddev: 0.02}
  - box: {pose: {position: {x: 0.8, y: 0.0}}, size: [0.3, 0.3, 0.3], motion: physics, mass: 1.0}
    name: crate
  - model_override:
      overrides:
        - {field: body_mass, select: [crate], to: 20.0}
    name: heavy
";

const STEPS: u64 = 10_000;

fn world_file(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("run_world.yaml");
    std::fs::write(&p, text).unwrap();
    p
}

fn label_id(e: &Engine, label: &str) -> usize {
    e.ctx
        .interface
        .all()
        .iter()
        .position(|ep| roqsim::ros::plan::label(ep) == label)
        .unwrap_or_else(|| panic!("no endpoint {label}"))
}

/// Record the scripted run into `out`; returns the engine's final qpos.
fn record_run(world: &Path, out: &Path, rate_hz: f64) -> Vec<f64> {
    let mut rec = Recorder::create(RecordOptions {
        path: out.to_path_buf(),
        rate_hz,
        topics: TopicFilter::All,
    })
    .unwrap();
    let w = load_world(world, &LoadOptions::default()).unwrap();
    let inputs = RunInputs {
        world_ref: world.display().to_string(),
        world_path: world.to_path_buf(),
        world_yaml: std::fs::read_to_string(world).unwrap(),
        seed: 7,
        ..Default::default()
    };
    rec.prepare(&inputs, &w).unwrap();
    let mut e = Engine::new(w, EngineOptions { profile: false, seed: Some(7) }).unwrap();
    rec.attach(&mut e).unwrap();
    let cmd = label_id(&e, "cmd_vel");
    let fault = label_id(&e, "heavy/override");
    let tx = e.ctx.command_sender();
    for step in 0..STEPS {
        // Commands arrive as the ROS bridge posts them: a closure drained before the next step.
        if step % 100 == 0 {
            let turn = if (step / 1000) % 2 == 0 { 0.4 } else { -0.3 };
            let t = Twist { linear: [0.25, 0.0, 0.0], angular: [0.0, 0.0, turn] };
            tx.post(move |ctx| ctx.interface.deliver(cmd, Payload::Twist(t)));
        }
        if step == 2500 || step == 4000 {
            let on = step == 2500;
            let (reply, _) = crossbeam_channel::unbounded();
            let call = ServiceCall { request: Box::new(Payload::Bool(on)), reply };
            tx.post(move |ctx| ctx.interface.deliver(fault, Payload::Call(call)));
        }
        if step == 5000 {
            e.reset_scoped(ResetScope::ALL).unwrap();
        }
        if step == 7500 {
            e.reset_scoped(ResetScope { time: false, state: true, spawned: false }).unwrap();
        }
        e.step().unwrap();
    }
    let q = e.ctx.data().qpos().to_vec();
    assert!(e.shutdown().is_empty());
    q
}

#[test]
fn record_then_replay_verify_is_bitwise_over_10000_steps() {
    let dir = tempfile::tempdir().unwrap();
    let world = world_file(dir.path(), WORLD);
    let out = dir.path().join("run.mcap");
    let final_q = record_run(&world, &out, 50.0);

    let rec = record::open(&out).unwrap();
    // 50 Hz on a 500 Hz grid: every 10th step, plus the state after the initial reset.
    assert_eq!(rec.states.len() as u64, STEPS / 10 + 1);
    assert_eq!(rec.states[1].step, 10);
    assert_eq!(rec.states.last().unwrap().qpos, final_q);
    // 100 cmd_vel + 2 fault calls + 2 resets. The two cmd_vel posted right before a reset are
    // drained by that reset before it is logged: they come before it in the log (the reset then
    // clears them with every inbox, in the run and in the replay alike).
    assert_eq!(rec.events.len(), 104);
    let summary = rec.summary.as_ref().unwrap();
    assert_eq!(summary["steps"], "10000");
    assert_eq!(summary["episode"], "1");
    // the fault did something: the crate the robot pushes weighs 20 kg between steps 2500 and 4000
    let p = &rec.provenance;
    assert_eq!(p["format_version"], "1");
    assert_eq!(p["seed"], "7");
    assert!(p["components"].contains("\"plugin\":\"model_override\""), "{}", p["components"]);
    let acts: serde_json::Value = serde_json::from_str(&p["actuators"]).unwrap();
    let left = acts.as_array().unwrap().iter().find(|a| a["name"] == "left_wheel_motor").unwrap();
    assert_eq!(left["ctrllimited"], true, "{left}");
    // no `actuators:` block in this world: the table restates the model's own actuators
    assert!(
        p["actuator_tables"]
            .contains("left_wheel_motor [joint left_wheel_joint]: velocity (model)"),
        "{}",
        p["actuator_tables"]
    );
    assert!(p["endpoint_rates"].contains("\"name\":\"scan\""), "{}", p["endpoint_rates"]);

    let r = record::replay(&rec, true, None).unwrap();
    assert!(r.divergence.is_none(), "{r}");
    assert_eq!((r.steps, r.compared, r.events), (STEPS, rec.states.len(), 104));
    assert_eq!(
        r.to_string(),
        "replay ok: 10000 steps, 104 inbound events applied, 1001 state samples bitwise identical"
    );

    // --until: a prefix
    let r = record::replay(&rec, true, Some(1.0)).unwrap();
    assert!(r.divergence.is_none(), "{r}");
    assert_eq!((r.steps, r.compared), (500, 51));

    // Without the fault call the crate is lighter: the replay says where it first differs.
    let mut missing = rec.clone();
    missing.events.retain(|(_, ev)| {
        !matches!(ev, record::replay::Event::Deliver { endpoint, .. } if endpoint == "heavy/override")
    });
    let r = record::replay(&missing, true, None).unwrap();
    let (step, tick, episode, _, d) = r.divergence.clone().expect("a divergence");
    assert!(step > 2500 && step < 5000, "{r}");
    assert_eq!((tick, episode), (step, 0));
    assert!(["qpos", "qvel"].contains(&d.field), "{r}");
    assert!(
        r.to_string()
            .starts_with(&format!("replay diverged at step {step} (tick {step}, episode 0, time ")),
        "{r}"
    );
}

#[test]
fn provenance_rebuilds_the_recorded_world_after_the_file_changed() {
    let dir = tempfile::tempdir().unwrap();
    let world = world_file(dir.path(), WORLD);
    let out = dir.path().join("run.mcap");
    record_run(&world, &out, 10.0);
    // Edit the world on disk: another seed, a heavier crate, no fault.
    std::fs::write(&world, WORLD.replace("seed: 7", "seed: 8").replace("mass: 1.0", "mass: 9.0"))
        .unwrap();
    let rec = record::open(&out).unwrap();
    let r = record::replay(&rec, true, None).unwrap();
    assert!(r.divergence.is_none(), "{r}");
    assert_eq!(r.compared, (STEPS / 50 + 1) as usize);
    let canon = world.canonicalize().unwrap().display().to_string();
    assert_eq!(
        r.notes,
        vec![format!("{canon} changed on disk since the recording; the recorded text is used")]
    );
}

#[test]
fn bad_files_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.mcap");
    std::fs::write(&text, "hello, not a recording").unwrap();
    assert_eq!(
        record::open(&text).unwrap_err(),
        format!(
            "{}: not an MCAP file (it does not start with the MCAP magic bytes)",
            text.display()
        )
    );

    let world = world_file(dir.path(), WORLD);
    let out = dir.path().join("run.mcap");
    record_run(&world, &out, 50.0);
    let bytes = std::fs::read(&out).unwrap();
    let cut = dir.path().join("cut.mcap");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = record::open(&cut).unwrap_err();
    assert!(
        e.starts_with(&format!("{}: truncated: the MCAP file has no footer", cut.display())),
        "{e}"
    );

    // An MCAP file from somebody else, and one from a newer roqsim.
    let write = |name: &str, meta: Option<(&str, &str)>| {
        let p = dir.path().join(name);
        let mut w =
            mcap::Writer::new(std::io::BufWriter::new(std::fs::File::create(&p).unwrap())).unwrap();
        if let Some((k, v)) = meta {
            let metadata = [(k.to_string(), v.to_string())].into_iter().collect();
            w.write_metadata(&mcap::records::Metadata {
                name: "roqsim.provenance".into(),
                metadata,
            })
            .unwrap();
        }
        w.finish().unwrap();
        drop(w);
        p
    };
    let other = write("other.mcap", None);
    assert_eq!(
        record::open(&other).unwrap_err(),
        format!(
            "{}: an MCAP file without `roqsim.provenance` metadata: not a roqsim recording",
            other.display()
        )
    );
    let newer = write("newer.mcap", Some(("format_version", "2")));
    assert_eq!(
        record::open(&newer).unwrap_err(),
        format!(
            "{}: recorded with format_version 2; this roqsim reads format_version 1 and older: replay it with a newer roqsim",
            newer.display()
        )
    );
}

#[test]
fn an_unwritable_path_is_refused_before_anything_is_built() {
    let e = Recorder::create(RecordOptions {
        path: PathBuf::from("/nonexistent-dir/run.mcap"),
        rate_hz: 50.0,
        topics: TopicFilter::All,
    })
    .err()
    .unwrap();
    assert_eq!(
        e,
        "--record /nonexistent-dir/run.mcap: cannot create the file: No such file or directory (os error 2)"
    );
    let e = Recorder::create(RecordOptions {
        path: PathBuf::from("/tmp/x.mcap"),
        rate_hz: 0.0,
        topics: TopicFilter::All,
    })
    .err()
    .unwrap();
    assert_eq!(e, "--record-rate must be a rate in [0.001, 1000000] Hz (above the physics rate every step is recorded), got 0");
}
