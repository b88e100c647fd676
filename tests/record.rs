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

/// What a recorded run is set up from: the world file, the `--override` file, the topic filter
/// and the state rate (`--record-rate`).
struct Setup<'a> {
    world: &'a Path,
    out: &'a Path,
    rate_hz: f64,
    topics: TopicFilter,
    override_file: Option<&'a Path>,
}

impl<'a> Setup<'a> {
    /// `world` recorded into `out` at 50 Hz, every topic, no override file.
    fn new(world: &'a Path, out: &'a Path) -> Self {
        Setup { world, out, rate_hz: 50.0, topics: TopicFilter::All, override_file: None }
    }

    /// Open the recording, load the world (seed 7) and build its engine with the recorder
    /// attached, as `roqsim sim --record` does.
    fn engine(self) -> Engine {
        let mut rec = Recorder::create(RecordOptions {
            path: self.out.to_path_buf(),
            rate_hz: self.rate_hz,
            topics: self.topics,
        })
        .unwrap();
        let assignments = self
            .override_file
            .map(|f| roqsim::world::overrides::load_override_file(f).unwrap())
            .unwrap_or_default();
        let opts = LoadOptions { assignments: assignments.clone(), ..Default::default() };
        let w = load_world(self.world, &opts).unwrap();
        let inputs = RunInputs {
            world_ref: self.world.display().to_string(),
            world_path: self.world.to_path_buf(),
            world_yaml: std::fs::read_to_string(self.world).unwrap(),
            assignments,
            override_files: self.override_file.map(Path::to_path_buf).into_iter().collect(),
            seed: 7,
            ..Default::default()
        };
        rec.prepare(&inputs, &w).unwrap();
        let mut e = Engine::new(w, EngineOptions { profile: false, seed: Some(7) }).unwrap();
        rec.attach(&mut e).unwrap();
        e
    }

    /// Record `steps` plain steps (no commands).
    fn steps(self, steps: u64) {
        let mut e = self.engine();
        e.step_n(steps).unwrap();
        assert!(e.shutdown().is_empty());
    }
}

/// A temporary folder holding [`WORLD`] recorded for `steps` plain steps at 50 Hz: the folder
/// (removed when dropped) and the recording.
fn recorded(steps: u64) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let world = world_file(dir.path(), WORLD);
    let out = dir.path().join("run.mcap");
    Setup::new(&world, &out).steps(steps);
    (dir, out)
}

/// Record the scripted run into `out`; returns the engine's final qpos.
fn record_run(world: &Path, out: &Path, rate_hz: f64) -> Vec<f64> {
    let mut e = Setup { rate_hz, ..Setup::new(world, out) }.engine();
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
            let call = ServiceCall {
                request: Box::new(Payload::Bool(on)),
                reply,
                claim: Default::default(),
            };
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
    assert_eq!(p["format_version"], "2");
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
    // Each rate row names its topic: the lidar's, and the Create 3's eleven `range` endpoints'.
    let rates: serde_json::Value = serde_json::from_str(&p["endpoint_rates"]).unwrap();
    let rows = rates.as_array().unwrap();
    let topic_of = |name: &str| -> Vec<&str> {
        rows.iter().filter(|r| r["name"] == name).map(|r| r["topic"].as_str().unwrap()).collect()
    };
    assert_eq!(topic_of("scan"), ["/scan"]);
    assert_eq!(
        topic_of("range"),
        [
            "/cliff_side_left",
            "/cliff_side_right",
            "/cliff_front_left",
            "/cliff_front_right",
            "/ir_intensity_side_left",
            "/ir_intensity_left",
            "/ir_intensity_front_left",
            "/ir_intensity_front_center_left",
            "/ir_intensity_front_center_right",
            "/ir_intensity_front_right",
            "/ir_intensity_right"
        ]
    );

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
    let newer = write("newer.mcap", Some(("format_version", "3")));
    assert_eq!(
        record::open(&newer).unwrap_err(),
        format!(
            "{}: recorded with format_version 3; this roqsim reads format_version 2 and older: replay it with a newer roqsim",
            newer.display()
        )
    );
}

#[test]
fn an_unwritable_path_is_refused_before_anything_is_built() {
    for (path, rate_hz, want) in [
        (
            "/nonexistent-dir/run.mcap",
            50.0,
            "--record /nonexistent-dir/run.mcap: cannot create the file: No such file or directory (os error 2)",
        ),
        (
            "/tmp/x.mcap",
            0.0,
            "--record-rate must be a rate in [0.001, 1000000] Hz (above the physics rate every step is recorded), got 0",
        ),
    ] {
        let opts = RecordOptions { path: PathBuf::from(path), rate_hz, topics: TopicFilter::All };
        assert_eq!(Recorder::create(opts).err().unwrap(), want);
    }
}

/// A world two `extends:` deep: the robot and its lidar in the grandparent, the crate in the
/// parent, the seed in the child.
const GRANDPARENT: &str = "sim:
  timestep: 0.002
components:
  - spawn_robot: {model: turtlebot4, pose: {position: {x: 0.0, y: 0.0}, orientation: {yaw: 0.0}}}
    name: robot
    components:
      - spawn_sensor: {}
        name: rplidar
        components:
          - lidar: {range_stddev: 0.02}
";
const PARENT: &str = "extends: ../base/grandparent.yaml
components:
  - box: {pose: {position: {x: 0.8, y: 0.0, z: 0.6}}, size: [0.3, 0.3, 0.3], motion: physics, mass: 1.0}
    name: crate
";
const CHILD: &str = "extends: ../mid/parent.yaml
sim: {seed: 7}
";

#[test]
fn an_extends_chain_is_rebuilt_from_the_recording_after_its_parents_change_or_go() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p.canonicalize().unwrap()
    };
    let gp = write("base/grandparent.yaml", GRANDPARENT);
    let parent = write("mid/parent.yaml", PARENT);
    let child = write("top/child.yaml", CHILD);
    let out = dir.path().join("run.mcap");
    Setup::new(&child, &out).steps(500);

    // The chain is kept, nearest parent first, text and hash of each.
    let rec = record::open(&out).unwrap();
    let p = &rec.provenance;
    let chain = record::provenance::chain_from_json(&p["world_chain"]).unwrap();
    let keys: Vec<String> = chain.iter().map(|(k, _)| k.clone()).collect();
    let (pk, gk) = (parent.display().to_string(), gp.display().to_string());
    assert_eq!(keys, [pk.clone(), gk.clone()]);
    assert_eq!((chain[0].1.text.as_str(), chain[1].1.text.as_str()), (PARENT, GRANDPARENT));
    let hashes: std::collections::BTreeMap<String, String> =
        serde_json::from_str(&p["input_hashes"]).unwrap();
    use record::provenance::hash_bytes;
    assert_eq!(hashes[&gk], hash_bytes(GRANDPARENT.as_bytes()));
    assert_eq!(hashes[&pk], hash_bytes(PARENT.as_bytes()));
    assert_eq!(hashes[&child.display().to_string()], hash_bytes(CHILD.as_bytes()));

    let changed = vec![
        format!("{gk} changed on disk since the recording; the recorded text is used"),
        format!("{pk} changed on disk since the recording; the recorded text is used"),
    ];
    // Both parents edited: a noisier lidar, the crate elsewhere. Replayed from the recorded texts.
    std::fs::write(&gp, GRANDPARENT.replace("range_stddev: 0.02", "range_stddev: 0.5")).unwrap();
    std::fs::write(&parent, PARENT.replace("x: 0.8", "x: 1.5")).unwrap();
    let r = record::replay(&rec, true, None).unwrap();
    assert_eq!(
        r.to_string(),
        "replay ok: 500 steps, 0 inbound events applied, 51 state samples bitwise identical"
    );
    assert_eq!(r.notes, changed);

    // Both parents deleted: replay, state and a sensor re-run still work.
    std::fs::remove_file(&gp).unwrap();
    std::fs::remove_file(&parent).unwrap();
    let gone: Vec<String> =
        changed.iter().map(|n| n.replace("changed on disk", "is gone")).collect();
    let r = record::replay(&rec, true, None).unwrap();
    assert!(r.divergence.is_none(), "{r}");
    assert_eq!((r.compared, r.notes.clone()), (51, gone.clone()));
    let s = record::replay::state_at(&rec, 0.5).unwrap();
    assert_eq!(s.step, 250);
    let (v, notes) = record::restore::rerun_sensor(&rec, 0.5, "robot.rplidar.lidar").unwrap();
    assert_eq!(notes, gone);
    assert_eq!((v["step"].as_u64(), v["tick"].as_u64()), (Some(250), Some(250)));
    let scan = v["outputs"].as_object().unwrap().values().next().unwrap().to_string();
    assert!(scan.contains("\"ranges\""), "{v}");
}

#[test]
fn a_corrupted_chunk_is_refused_naming_it() {
    let (dir, out) = recorded(3000);
    let mut bytes = std::fs::read(&out).unwrap();
    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
    let n = summary.chunk_indexes.len();
    assert!(n >= 3, "{n} chunks");
    let k = n / 2;
    let idx = &summary.chunk_indexes[k];
    let (start, end) = (idx.chunk_start_offset, idx.chunk_start_offset + idx.chunk_length);
    bytes[(start + idx.chunk_length / 2) as usize] ^= 0x10;
    let bad = dir.path().join("bad.mcap");
    std::fs::write(&bad, &bytes).unwrap();
    let e = record::open(&bad).unwrap_err();
    let head = format!(
        "{}: corrupt: chunk {} of {n} (bytes {start}–{end}, log times {} s to {} s) fails its CRC check (Chunk CRC failed (expected ",
        bad.display(),
        k + 1,
        idx.message_start_time as f64 * 1e-9,
        idx.message_end_time as f64 * 1e-9
    );
    assert!(e.starts_with(&head), "{e}\nwant {head}");
    assert!(
        e.ends_with("): the file was damaged after it was written; MCAP tools in recovery mode read the intact chunks, but a replay needs the whole run"),
        "{e}"
    );
    // The intact file opens.
    assert!(record::open(&out).is_ok());
}

/// A damaged length field (the header's, a record's, the footer's) is refused like any other
/// damage: the reader is fed only the bytes the file holds, so a length of 2^63 is never
/// allocated (it aborted the process before).
#[test]
fn damaged_length_fields_are_refused_not_allocated() {
    let (dir, out) = recorded(300);
    let good = std::fs::read(&out).unwrap();
    let bad = dir.path().join("bad.mcap");
    // The header record's opcode and length (bytes 8..17), and the last 300 bytes (summary,
    // summary offsets, footer).
    let offsets: Vec<usize> = (8..17).chain(good.len() - 300..good.len() - 8).collect();
    for o in offsets {
        for x in [0x80u8, 0x01] {
            let mut bytes = good.clone();
            bytes[o] ^= x;
            std::fs::write(&bad, &bytes).unwrap();
            let e = record::open(&bad).expect_err(&format!("byte {o} ^ {x:#x} opened"));
            assert!(e.starts_with(&format!("{}: ", bad.display())), "byte {o}: {e}");
        }
    }
    assert!(record::open(&out).is_ok());
}

#[test]
fn a_time_outside_the_recording_is_refused_with_its_range() {
    let (_dir, out) = recorded(500);
    let rec = record::open(&out).unwrap();
    let range =
        "the recording holds sim times 0 s to 1 s (51 state samples): give a time in that range";
    for (t, shown) in [(1.5, "1.5"), (-0.1, "-0.1"), (f64::NAN, "NaN"), (f64::INFINITY, "inf")] {
        let e = record::replay::state_at(&rec, t).unwrap_err();
        assert_eq!(e, format!("--at {shown}: {range}"));
    }
    // The ends themselves, and a hair past them, have their samples.
    assert_eq!(record::replay::state_at(&rec, 1.0).unwrap().step, 500);
    assert_eq!(record::replay::state_at(&rec, 1.009).unwrap().step, 500);
    assert_eq!(record::replay::state_at(&rec, -0.009).unwrap().step, 0);
    assert!(record::replay::state_at(&rec, 1.011).is_err());
}

#[test]
fn an_edited_override_file_is_not_read_by_the_replay() {
    let dir = tempfile::tempdir().unwrap();
    let world = world_file(dir.path(), WORLD);
    let o = dir.path().join("light.yaml");
    std::fs::write(&o, "components:\n  crate:\n    mass: 3.0\n").unwrap();
    let out = dir.path().join("run.mcap");
    // A glob that keeps nothing is named in the provenance with the run's topics.
    let topics = TopicFilter::parse("/scan,/nothing/*").unwrap();
    Setup { topics, override_file: Some(&o), ..Setup::new(&world, &out) }.steps(500);
    let rec = record::open(&out).unwrap();
    let meta: serde_json::Value = serde_json::from_str(&rec.provenance["record"]).unwrap();
    let unmatched = meta["unmatched_topic_globs"].as_array().unwrap();
    assert_eq!(unmatched.len(), 1);
    assert!(
        unmatched[0].as_str().unwrap().starts_with(
            "--record-topics: `/nothing/*` matches no topic of this run, so it keeps nothing; the run's topics: "
        ) && unmatched[0].as_str().unwrap().contains("/scan"),
        "{unmatched:?}"
    );
    assert_eq!(
        rec.counts.keys().filter(|t| !t.starts_with("/roqsim/")).collect::<Vec<_>>(),
        ["/scan"]
    );

    // The override file edited: the replay applies the recorded assignments, and says so.
    std::fs::write(&o, "components:\n  crate:\n    mass: 30.0\n").unwrap();
    let r = record::replay(&rec, true, None).unwrap();
    assert!(r.divergence.is_none(), "{r}");
    assert_eq!(
        r.notes,
        [format!(
            "{} changed on disk since the recording; the file is not read: the assignments recorded from it (provenance `overrides`) are applied",
            o.canonicalize().unwrap().display()
        )]
    );
}

/// A hand-built MCAP: header, one chunk whose records are compressed with `compression` (the
/// bytes are never looked at), data end, footer without a summary.
fn mcap_with_chunk(compression: &str) -> Vec<u8> {
    const MAGIC: &[u8] = b"\x89MCAP0\r\n";
    fn string(b: &mut Vec<u8>, s: &str) {
        b.extend((s.len() as u32).to_le_bytes());
        b.extend(s.as_bytes());
    }
    fn record(out: &mut Vec<u8>, op: u8, body: &[u8]) {
        out.push(op);
        out.extend((body.len() as u64).to_le_bytes());
        out.extend(body);
    }
    let mut f = MAGIC.to_vec();
    let mut header = Vec::new();
    string(&mut header, "ros2");
    string(&mut header, "hand-built");
    record(&mut f, 0x01, &header);
    let records = b"\x28\xb5\x2f\xfd not really zstd";
    let mut chunk = Vec::new();
    chunk.extend(0u64.to_le_bytes()); // message_start_time
    chunk.extend(0u64.to_le_bytes()); // message_end_time
    chunk.extend(100u64.to_le_bytes()); // uncompressed_size
    chunk.extend(0u32.to_le_bytes()); // uncompressed_crc (0: not checked)
    string(&mut chunk, compression);
    chunk.extend((records.len() as u64).to_le_bytes());
    chunk.extend(records);
    record(&mut f, 0x06, &chunk);
    record(&mut f, 0x0F, &0u32.to_le_bytes()); // data end, no CRC
    let mut footer = Vec::new();
    footer.extend(0u64.to_le_bytes());
    footer.extend(0u64.to_le_bytes());
    footer.extend(0u32.to_le_bytes());
    record(&mut f, 0x02, &footer);
    f.extend(MAGIC);
    f
}

#[test]
fn a_compressed_file_and_appended_bytes_are_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let zstd = dir.path().join("zstd.mcap");
    std::fs::write(&zstd, mcap_with_chunk("zstd")).unwrap();
    assert_eq!(
        record::open(&zstd).unwrap_err(),
        format!(
            "{}: its chunks are compressed with zstd, which this build does not read (roqsim writes and reads uncompressed MCAP): write an uncompressed copy with the mcap CLI (`mcap decompress FILE -o plain.mcap`) and open that",
            zstd.display()
        )
    );

    let world = world_file(dir.path(), WORLD);
    let out = dir.path().join("run.mcap");
    Setup::new(&world, &out).steps(100);
    let mut bytes = std::fs::read(&out).unwrap();
    let end = bytes.len();
    bytes.extend(b"garbage appended\n");
    let more = dir.path().join("more.mcap");
    std::fs::write(&more, &bytes).unwrap();
    assert_eq!(
        record::open(&more).unwrap_err(),
        format!(
            "{}: 17 bytes follow the end of the MCAP data (its closing magic ends at byte {end}): something was appended to the file after it was written. The recording itself is intact: cut the file to {end} bytes (`truncate -s {end} FILE`) to read it",
            more.display()
        )
    );
    // Cut as told, it opens and replays.
    std::fs::write(&more, &bytes[..end]).unwrap();
    let r = record::replay(&record::open(&more).unwrap(), true, None).unwrap();
    assert_eq!(
        r.to_string(),
        "replay ok: 100 steps, 0 inbound events applied, 11 state samples bitwise identical"
    );
}

#[test]
fn a_recording_without_state_samples_or_naming_a_device_is_refused() {
    let (dir, out) = recorded(100);
    let rec = record::open(&out).unwrap();

    // The provenance alone, no messages: nothing to compare.
    let empty = dir.path().join("empty.mcap");
    let mut w =
        mcap::Writer::new(std::io::BufWriter::new(std::fs::File::create(&empty).unwrap())).unwrap();
    w.write_metadata(&mcap::records::Metadata {
        name: "roqsim.provenance".into(),
        metadata: rec.provenance.clone(),
    })
    .unwrap();
    w.finish().unwrap();
    drop(w);
    let e = record::open(&empty).unwrap();
    assert!(e.states.is_empty());
    assert_eq!(
        record::replay(&e, true, None).unwrap_err(),
        "the recording holds no state samples (no message on `/roqsim/state`): there is nothing to re-run against or compare (a roqsim recording holds at least the sample of step 0)"
    );
    assert_eq!(
        record::replay(&e, false, None).unwrap_err(),
        record::replay(&e, true, None).unwrap_err()
    );

    // A provenance edited to name a device among the inputs: refused, not read forever.
    let mut edited = rec.clone();
    let mut hashes: std::collections::BTreeMap<String, String> =
        serde_json::from_str(&rec.provenance["input_hashes"]).unwrap();
    hashes.insert("/dev/zero".into(), "sha256:00".into());
    edited.provenance.insert("input_hashes".into(), serde_json::to_string(&hashes).unwrap());
    assert_eq!(
        record::replay(&edited, true, None).unwrap_err(),
        "provenance `input_hashes` names /dev/zero: `/dev/zero` is a character device, not a regular file: a world input is a file"
    );
    hashes.remove("/dev/zero");
    let d = dir.path().display().to_string();
    hashes.insert(d.clone(), "sha256:00".into());
    edited.provenance.insert("input_hashes".into(), serde_json::to_string(&hashes).unwrap());
    assert_eq!(
        record::restore::rerun_sensor(&edited, 0.1, "robot.rplidar.lidar").unwrap_err(),
        format!("provenance `input_hashes` names {d}: `{d}` is a directory, not a regular file: a world input is a file")
    );
}

#[test]
fn a_sensor_device_resolves_to_its_one_sensor_and_a_robot_is_refused_naming_its_sensors() {
    let (_dir, out) = recorded(100);
    let rec = record::open(&out).unwrap();
    let (lidar, notes) = record::restore::rerun_sensor(&rec, 0.1, "robot.rplidar.lidar").unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    let (device, notes) = record::restore::rerun_sensor(&rec, 0.1, "robot.rplidar").unwrap();
    assert_eq!(
        notes,
        ["--sensor robot.rplidar is a spawn_sensor plugin, not a sensor; its one sensor robot.rplidar.lidar is re-run"]
    );
    assert_eq!(device["sensor"], "robot.rplidar.lidar");
    assert_eq!(device["outputs"], lidar["outputs"]);
    let ranges = device["outputs"]["scan"]["LaserScan"]["ranges"].as_array().unwrap();
    assert_eq!(ranges.len(), 360);
    assert_eq!(
        record::restore::rerun_sensor(&rec, 0.1, "robot").unwrap_err(),
        "--sensor robot: that is a spawn_robot plugin holding 13 sensors, not a sensor; give one of: robot.rplidar.lidar, robot.imu, robot.cliff_side_left, robot.cliff_side_right, robot.cliff_front_left, robot.cliff_front_right, robot.ir_intensity_side_left, robot.ir_intensity_left, robot.ir_intensity_front_left, robot.ir_intensity_front_center_left, robot.ir_intensity_front_center_right, robot.ir_intensity_front_right, robot.ir_intensity_right"
    );
    assert_eq!(
        record::restore::rerun_sensor(&rec, 0.1, "crate").unwrap_err(),
        "--sensor crate: that is a box plugin, not a sensor, and holds none; sensors: robot.rplidar.lidar, robot.imu, robot.cliff_side_left, robot.cliff_side_right, robot.cliff_front_left, robot.cliff_front_right, robot.ir_intensity_side_left, robot.ir_intensity_left, robot.ir_intensity_front_left, robot.ir_intensity_front_center_left, robot.ir_intensity_front_center_right, robot.ir_intensity_front_right, robot.ir_intensity_right"
    );
}

/// The encoders write a frame name straight into the message; it is the name `Frames::name`
/// builds, for every prefix and hint form.
#[test]
fn frame_names_are_encoded_as_frames_name_builds_them() {
    use roqsim::context::payload::Odometry;
    use roqsim::record::cdr::CdrWriter;
    use roqsim::record::msgs::{encode, Frames};
    for prefix in ["", "/", "robot1_", "/ns/", "a/b"] {
        for hint in [None, Some("hint_link")] {
            let fr = Frames { prefix: prefix.into(), hint: hint.map(String::from) };
            for (f, child) in [("", "/"), ("odom", "base_link"), ("/odom", "//x/y")] {
                let o = Odometry {
                    frame_id: f.into(),
                    child_frame_id: child.into(),
                    stamp: 1.5,
                    ..Default::default()
                };
                let got = encode(
                    "geometry_msgs/msg/PoseStamped",
                    &Payload::Odometry(o.clone()),
                    &fr,
                    0.0,
                )
                .unwrap();
                let mut w = CdrWriter::new();
                w.i32(1);
                w.u32(500_000_000);
                w.string(&fr.name(f));
                w.f64_array(&o.position);
                w.f64_array(&o.orientation);
                assert_eq!(got, w.finish(), "prefix {prefix:?} hint {hint:?} frame {f:?}");
                let got = encode("nav_msgs/msg/Odometry", &Payload::Odometry(o), &fr, 0.0).unwrap();
                let mut w = CdrWriter::new();
                w.i32(1);
                w.u32(500_000_000);
                w.string(&fr.name(f));
                w.string(&fr.name(child));
                assert!(
                    got.starts_with(&w.finish()),
                    "prefix {prefix:?} hint {hint:?} child {child:?}"
                );
            }
        }
    }
}
