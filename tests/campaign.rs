//! `roqsim campaign`: a factorial of worlds, override values and seeds run as separate `roqsim
//! sim` processes into one table. ROS-free; each test runs the real binary and reads the files it
//! writes: the table's content, per-trial results bitwise across runs, the noise a seed draws,
//! refusals before anything runs, a hung trial killed and marked, resume and exact re-runs.

use std::path::Path;
use std::process::Command;

use serde_json::Value as Json;

mod common;
use common::{campaign_table, snapshot, trial_dir, Out};

const BIN: &str = env!("CARGO_BIN_EXE_roqsim");

/// A TurtleBot 4 in the empty room driving to `goal` under the navigator, with a contact
/// monitor; `extra` adds entries.
fn world(goal: &str, extra: &str) -> String {
    format!(
        "sim: {{timestep: 0.002, world: empty_room}}
components:
  - spawn_robot: {{model: turtlebot4, pose: {{position: {{x: 0.0, y: 0.0}}}}}}
    name: robot
    components:
      - contact_monitor: {{}}
      - navigator: {{speed: 0.3, goals: [{goal}], arrival_radius: 0.2}}
{extra}"
    )
}

/// A folder with the two world variants (`open.yaml`: a goal at (2, 1); `crate.yaml`: a goal at
/// (1.5, -1.5) past a crate) and `campaign.yaml` = `doc`.
fn setup(doc: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("open.yaml"), world("[2.0, 1.0]", "")).unwrap();
    std::fs::write(
        d.path().join("crate.yaml"),
        world(
            "[1.5, -1.5]",
            "  - box: {pose: {position: {x: 1.2, y: 0.6}}, size: [0.3, 0.3, 0.4]}\n    name: crate\n",
        ),
    )
    .unwrap();
    std::fs::write(d.path().join("campaign.yaml"), doc).unwrap();
    d
}

/// The 3 × 2 × 4 campaign: lidar noise × world variant × 4 repetitions, 2 sim seconds each.
const SWEEP: &str = "worlds: [open.yaml, crate.yaml]
factors:
  components.robot.rplidar.lidar.range_stddev: [0.0, 0.01, 0.05]
repetitions: 4
seed: 100
limits: {seconds: 2.0, wall_timeout_s: 120}
collect:
  poses: [robot]
  endpoints: [/scan]
";

fn roqsim(args: &[&str], cwd: &Path) -> Out {
    let o = Command::new(BIN).args(args).current_dir(cwd).output().unwrap();
    Out::from(o)
}

fn run_campaign(d: &Path, out: &str, extra: &[&str]) -> Out {
    let mut a = vec!["campaign", "run", "campaign.yaml", "-o", out, "--jobs", "2", "-q"];
    a.extend_from_slice(extra);
    roqsim(&a, d)
}

fn results(dir: &Path, i: usize) -> Json {
    serde_json::from_str(&std::fs::read_to_string(trial_dir(dir, i).join("results.json")).unwrap())
        .unwrap()
}

fn scan(dir: &Path, i: usize) -> Vec<Json> {
    results(dir, i)["endpoints"]["/scan"]["value"]["ranges"].as_array().unwrap().clone()
}

#[test]
fn a_3x2x4_sweep_fills_the_table_and_repeats_bitwise() {
    let d = setup(SWEEP);
    let r = run_campaign(d.path(), "a", &[]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("campaign: 24 trials: 24 ran (24 ok, 0 not), 0 skipped as already run"),
        "{}",
        r.stdout
    );
    let dir = d.path().join("a");
    let rows = campaign_table(&dir);
    assert_eq!(rows.len(), 24);
    // The CSV holds the same table: a header and 24 rows, the factor columns first.
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(
        header.starts_with(
            "trial,world,components.robot.rplidar.lidar.range_stddev,repetition,seed,status,exit_code,attempts,wall_s,reason,stop_reason,error,steps,sim_time,pose.robot.x,pose.robot.y,pose.robot.z,pose.robot.yaw,"
        ),
        "{header}"
    );
    assert!(header.contains("monitor./collision.in_contact"), "{header}");
    assert!(header.contains("endpoint./scan.range_max"), "{header}");
    assert_eq!(csv.lines().count(), 25);
    let noise = [0.0, 0.01, 0.05];
    for (i, row) in rows.iter().enumerate() {
        // World slowest, then the noise level, then the repetition; seed = base + index.
        let (w, n, rep) = (i / 12, (i / 4) % 3, i % 4);
        assert_eq!(row["trial"], i);
        assert_eq!(row["world"], ["open.yaml", "crate.yaml"][w]);
        assert_eq!(row["components.robot.rplidar.lidar.range_stddev"], noise[n]);
        assert_eq!(row["repetition"], rep);
        assert_eq!(row["seed"], 100 + i as u64);
        assert_eq!(row["status"], "ok", "{row}");
        assert_eq!(row["exit_code"], 0);
        assert_eq!(row["reason"], "seconds");
        assert_eq!(row["steps"], 1000);
        assert!((row["sim_time"].as_f64().unwrap() - 2.0).abs() < 1e-9, "{row}");
        assert_eq!(row["monitor./collision.in_contact"], false, "{row}");
        assert_eq!(row["endpoint./scan.range_max"], 12.0, "{row}");
        // The navigator drove towards its goal: x grew, y went the goal's way.
        let (x, y) = (row["pose.robot.x"].as_f64().unwrap(), row["pose.robot.y"].as_f64().unwrap());
        assert!(x > 0.2, "trial {i} ended at x = {x}");
        assert!(if w == 0 { y > 0.05 } else { y < -0.05 }, "trial {i} ended at y = {y}");
        // Ground truth stays clean: the pose is the same at every noise level.
        let same_cell_no_noise = &rows[w * 12 + rep];
        assert_eq!(row["pose.robot.x"], same_cell_no_noise["pose.robot.x"], "trial {i}");
        // The files of a trial are all there.
        for f in ["override.yaml", "trial.json", "stdout.txt", "stderr.txt", "status.json"] {
            assert!(trial_dir(&dir, i).join(f).is_file(), "trial {i}: no {f}");
        }
    }
    // The override document is what ran: the noise level, shaped like the world.
    let ov = std::fs::read_to_string(trial_dir(&dir, 9).join("override.yaml")).unwrap();
    assert_eq!(
        ov,
        "components:\n  robot:\n    rplidar:\n      lidar:\n        range_stddev: 0.05\n"
    );
    // Noise: without it the four repetitions see one scan; with it every repetition its own.
    assert_eq!(scan(&dir, 0), scan(&dir, 1));
    assert_ne!(scan(&dir, 4), scan(&dir, 5));
    assert_ne!(scan(&dir, 0), scan(&dir, 4));
    // A second run gives every trial's results.json bitwise.
    let r2 = run_campaign(d.path(), "b", &[]);
    assert_eq!(r2.code, 0, "{}", r2.stderr);
    for i in 0..24 {
        let a = std::fs::read(trial_dir(&dir, i).join("results.json")).unwrap();
        let b = std::fs::read(trial_dir(&d.path().join("b"), i).join("results.json")).unwrap();
        assert!(a == b, "trial {i}: results differ between two runs");
    }
}

#[test]
fn trial_i_draws_the_same_noise_when_another_factor_differs() {
    let doc = |rate: u32| {
        format!(
            "world: open.yaml
factors:
  components.robot.imu.rate_hz: [{rate}]
  components.robot.rplidar.lidar.range_stddev: [0.02]
repetitions: 3
seed: 7
limits: {{seconds: 0.5}}
collect: {{endpoints: [/scan]}}
"
        )
    };
    let d = setup(&doc(100));
    assert_eq!(run_campaign(d.path(), "imu100", &[]).code, 0);
    std::fs::write(d.path().join("campaign.yaml"), doc(50)).unwrap();
    assert_eq!(run_campaign(d.path(), "imu50", &[]).code, 0);
    let (a, b) = (d.path().join("imu100"), d.path().join("imu50"));
    for i in 0..3 {
        assert_eq!(campaign_table(&a)[i]["seed"], 7 + i as u64);
        assert_eq!(campaign_table(&b)[i]["seed"], 7 + i as u64);
        assert_eq!(campaign_table(&a)[i]["components.robot.imu.rate_hz"], 100);
        assert_eq!(campaign_table(&b)[i]["components.robot.imu.rate_hz"], 50);
        assert_eq!(scan(&a, i), scan(&b, i), "trial {i}: another factor changed the lidar's draws");
    }
    assert_ne!(scan(&a, 0), scan(&a, 1), "two seeds drew the same noise");
}

#[test]
fn a_bad_factor_path_is_refused_before_anything_runs() {
    let d = setup(
        "world: open.yaml
factors:
  components.robot.rplidar.lidar.range_stdev: [0.0, 0.01]
limits: {seconds: 1}
",
    );
    let r = run_campaign(d.path(), "out", &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "error: campaign.yaml: trial 0 (components.robot.rplidar.lidar.range_stdev = 0.0): the world "
        ),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("components.robot.rplidar.lidar.range_stdev: unknown field `range_stdev`"),
        "{}",
        r.stderr
    );
    assert!(!d.path().join("out").exists(), "something was written before the refusal");
    // A path through a component that does not exist names the addresses that do.
    std::fs::write(
        d.path().join("campaign.yaml"),
        "world: open.yaml\nfactors:\n  components.robto.rplidar.lidar.rays: [90]\nlimits: {seconds: 1}\n",
    )
    .unwrap();
    let r = run_campaign(d.path(), "out", &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "  - components.robto.rplidar.lidar.rays: matches no component; did you mean components.robot.rplidar or components.robot.rplidar.lidar? (campaign factor components.robto.rplidar.lidar.rays)"
        ),
        "{}",
        r.stderr
    );
    assert!(!d.path().join("out").exists(), "something was written before the refusal");
}

#[test]
fn campaign_document_refusals_name_the_key_and_the_fix() {
    let cases = [
        (
            "world: open.yaml\nlimits: {seconds: 1}\nrepetitons: 3\n",
            "error: campaign.yaml: repetitons: unknown field `repetitons`",
        ),
        (
            "world: open.yaml\nlimits: {wall_timeout_s: 5}\n",
            "error: campaign.yaml: limits: give `seconds` or `steps`: a trial must end on its own (wall_timeout_s only kills a hung one)",
        ),
        (
            "world: open.yaml\nfactors: {robot.lidar.rays: [1, 2]}\nlimits: {seconds: 1}\n",
            "error: campaign.yaml: factors.robot.lidar.rays: a factor with a list of values is an override path: start it with `sim.` or `components.<address>.`",
        ),
        (
            "world: open.yaml\nfactors: {sim.timestep: []}\nlimits: {seconds: 1}\n",
            "error: campaign.yaml: factors.sim.timestep: has no values: list at least one",
        ),
        (
            "world: open.yaml\nrepetitions: 0\nlimits: {seconds: 1}\n",
            "error: campaign.yaml: repetitions: must be at least 1",
        ),
        (
            "world: nowhere.yaml\nlimits: {seconds: 1}\n",
            "error: campaign.yaml: world: world `nowhere.yaml` not found",
        ),
        (
            "world: open.yaml\nlimits: {seconds: 1}\ncollect: {endpoints: [/scna]}\n",
            "error: campaign.yaml: collect.endpoints: trial 0: endpoint `/scna` is not an outbound endpoint of this world; the addresses that exist are: /tf_static, /robot_description, /odom,",
        ),
        (
            "world: open.yaml\nlimits: {seconds: 1}\ncollect: {poses: [robto]}\n",
            "error: campaign.yaml: collect.poses[0]: trial 0: no entity `robto` in the world; entities: robot",
        ),
        (
            "world: open.yaml\nfactors: {variant: {files: [missing.yaml]}}\nlimits: {seconds: 1}\n",
            "error: campaign.yaml: factors.variant.files[0]: --override ",
        ),
    ];
    let many: String = (0..64).map(|i| format!("  components.robot.k{i}: [1, 2]\n")).collect();
    let many = format!("world: open.yaml\nfactors:\n{many}limits: {{seconds: 1}}\n");
    let some: String = (0..17).map(|i| format!("  components.robot.k{i}: [1, 2]\n")).collect();
    let some = format!("world: open.yaml\nfactors:\n{some}limits: {{seconds: 1}}\n");
    let reserved = "is a column of the results table: rename the factor (reserved: trial, world, repetition, seed, status, exit_code, attempts, wall_s, reason, stop_reason, error, steps, sim_time, and names starting with `pose.`, `monitor.`, `endpoint.`)";
    let more = [
        (
            "world: open.yaml\nlimits: {seconds: 1, wall_timeout_s: 1e300}\n".to_string(),
            "error: campaign.yaml: limits.wall_timeout_s: must be a number of seconds in (0, 86400] (at most a day), got 1e300".to_string(),
        ),
        (
            many,
            "error: campaign.yaml: factors: expand to more than 18446744073709551615 cells (64 factors), more than 100000 trials: split the campaign".into(),
        ),
        (
            some,
            "error: campaign.yaml: factors: expand to 131072 cells, more than 100000 trials: split the campaign".into(),
        ),
        (
            "world: open.yaml\nfactors: {sim.timestep: [0.001, 0.002]}\nrepetitions: 60000\nlimits: {seconds: 1}\n".into(),
            "error: campaign.yaml: repetitions: 60000 repetitions of 2 cells expand to 120000 trials, more than 100000: lower `repetitions` or split the campaign".into(),
        ),
        (
            "world: open.yaml\nfactors: {seed: {files: [a.yaml]}}\nlimits: {seconds: 1}\n".into(),
            format!("error: campaign.yaml: factors.seed: {reserved}"),
        ),
        (
            "world: open.yaml\nfactors: {pose.robot.x: {files: [a.yaml]}}\nlimits: {seconds: 1}\n".into(),
            format!("error: campaign.yaml: factors.pose.robot.x: {reserved}"),
        ),
        (
            "world: open.yaml\nfactors: {sim.seed: [1, 2]}\nlimits: {seconds: 1}\n".into(),
            "error: campaign.yaml: factors.sim.seed: a trial's seed comes from `seed:` and `seed_by:` (its `--seed` wins over `sim.seed`): set `seed:` / `seed_by:` instead".into(),
        ),
    ];
    let cases = cases.iter().map(|(a, b)| (a.to_string(), b.to_string())).chain(more);
    for (doc, want) in cases {
        let d = setup(&doc);
        let r = run_campaign(d.path(), "out", &[]);
        assert_eq!(r.code, 2, "{doc}: {}", r.stderr);
        assert!(r.stderr.contains(&want), "{doc}\nwanted: {want}\ngot: {}", r.stderr);
        assert!(!d.path().join("out").exists(), "{doc}: wrote before refusing");
    }
}

#[test]
fn a_hung_trial_is_killed_at_its_timeout_marked_and_retried_only_when_asked() {
    // 100 000 sim seconds cannot finish in 1.5 wall seconds: the trial hangs as far as the
    // campaign can tell. The world beside it ends itself (a plugin's request_stop at 0.5 s).
    let d = setup(
        "worlds: [quick.yaml, open.yaml]
factors:
  variant: {files: [tiny_step.yaml]}
limits: {seconds: 100000, wall_timeout_s: 1.5}
",
    );
    std::fs::write(
        d.path().join("quick.yaml"),
        "sim: {timestep: 0.01}\ncomponents:\n  - dummy: {stop_at_s: 0.5, present: false}\n",
    )
    .unwrap();
    std::fs::write(d.path().join("tiny_step.yaml"), "sim: {timestep: 0.002}\n").unwrap();
    let r = run_campaign(d.path(), "out", &[]);
    let dir = d.path().join("out");
    let rows = campaign_table(&dir);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(rows[0]["world"], "quick.yaml");
    assert_eq!(rows[0]["variant"], "tiny_step.yaml");
    assert_eq!(rows[0]["status"], "ok", "{}", rows[0]);
    assert_eq!(rows[0]["steps"], 250);
    assert_eq!(rows[0]["reason"], "stop requested: dummy reached stop_at_s = 0.5 s");
    assert_eq!(rows[0]["stop_reason"], "dummy reached stop_at_s = 0.5 s");
    assert_eq!(rows[1]["world"], "open.yaml");
    assert_eq!(rows[1]["status"], "timeout");
    assert_eq!(rows[1]["exit_code"], Json::Null);
    assert_eq!(rows[1]["reason"], Json::Null, "a killed trial has no results");
    let wall = rows[1]["wall_s"].as_f64().unwrap();
    assert!((1.5..30.0).contains(&wall), "killed after {wall} s");
    let st: Json = serde_json::from_str(
        &std::fs::read_to_string(trial_dir(&dir, 1).join("status.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(st["note"], "killed at the wall timeout of 1.5 s");
    // A re-run leaves the marked trial marked and the complete one alone...
    let r = run_campaign(d.path(), "out", &[]);
    assert!(
        r.stdout.contains("0 ran (0 ok, 0 not), 2 skipped as already run; 1 ok, 1 marked failed"),
        "{}",
        r.stdout
    );
    // ...and --retry-failed runs it again (attempt 2), not the complete one.
    let r = run_campaign(d.path(), "out", &["--retry-failed"]);
    assert!(r.stdout.contains("1 ran (0 ok, 1 not), 1 skipped"), "{}", r.stdout);
    let rows = campaign_table(&dir);
    assert_eq!(rows[1]["attempts"], 2);
    assert_eq!(rows[0]["attempts"], 1);
}

#[test]
fn resume_skips_complete_trials_and_trial_reruns_one_exactly() {
    let d = setup(
        "world: open.yaml
factors:
  components.robot.rplidar.lidar.range_stddev: [0.03]
repetitions: 4
seed: 11
limits: {steps: 300}
collect: {poses: [robot], endpoints: [/scan]}
",
    );
    assert_eq!(run_campaign(d.path(), "out", &[]).code, 0);
    let dir = d.path().join("out");
    let before: Vec<Vec<u8>> =
        (0..4).map(|i| std::fs::read(trial_dir(&dir, i).join("results.json")).unwrap()).collect();
    // Trial 2 never finished (its status is gone): only it runs again.
    std::fs::remove_file(trial_dir(&dir, 2).join("status.json")).unwrap();
    let r = run_campaign(d.path(), "out", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("4 trials: 1 ran (1 ok, 0 not), 3 skipped as already run"),
        "{}",
        r.stdout
    );
    assert_eq!(campaign_table(&dir)[1]["attempts"], 1);
    // `campaign trial` re-runs one trial exactly: the same results, bitwise.
    let r = roqsim(&["campaign", "trial", "out", "3"], d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("trial 3: ok in "), "{}", r.stdout);
    for (i, b) in before.iter().enumerate() {
        assert_eq!(
            &std::fs::read(trial_dir(&dir, i).join("results.json")).unwrap(),
            b,
            "trial {i}"
        );
    }
    assert_eq!(campaign_table(&dir)[3]["attempts"], 2);
    assert_eq!(campaign_table(&dir)[3]["steps"], 300);
    // A different document into the same folder is refused.
    std::fs::write(d.path().join("campaign.yaml"), "world: open.yaml\nlimits: {steps: 10}\n")
        .unwrap();
    let r = run_campaign(d.path(), "out", &[]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("error: -o out: the folder holds another campaign (its campaign.yaml differs from campaign.yaml): choose a new folder, or delete this one to start over"), "{}", r.stderr);
    let r = roqsim(&["campaign", "trial", "out", "9"], d.path());
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains(
            "error: trial 9 of out: out of range: the trials are 0 to 3 (the table's `trial` column)"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn the_summary_carries_a_plugins_stop_reason() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("w.yaml"),
        "sim: {timestep: 0.01}\ncomponents:\n  - dummy: {stop_at_s: 0.5, present: false}\n",
    )
    .unwrap();
    let r = roqsim(
        &[
            "sim",
            "w.yaml",
            "--seconds",
            "5",
            "--pacing",
            "asap",
            "-q",
            "--seed",
            "3",
            "--summary",
            "s.json",
        ],
        d.path(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let s: Json =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("s.json")).unwrap()).unwrap();
    assert_eq!(s["stop_reason"], "dummy reached stop_at_s = 0.5 s");
    assert_eq!(s["reason"], "stop requested: dummy reached stop_at_s = 0.5 s");
    assert_eq!(s["steps"], 50);
    assert_eq!(s["seed"], 3);
    assert_eq!(s["error"], Json::Null);
    let r = roqsim(
        &[
            "sim",
            "w.yaml",
            "--steps",
            "1",
            "-q",
            "--summary",
            "s.json",
            "--summary-endpoint",
            "/nope",
        ],
        d.path(),
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("error: --summary-endpoint: endpoint `/nope` is not an outbound endpoint of this world; the addresses that exist are: "),
        "{}",
        r.stderr
    );
}

#[test]
fn seed_by_repetition_gives_every_cell_the_same_seeds() {
    let d = setup(
        "world: open.yaml
factors:
  components.robot.rplidar.lidar.range_stddev: [0.01, 0.02]
repetitions: 2
seed: 50
seed_by: repetition
limits: {steps: 50}
collect: {endpoints: [/scan]}
",
    );
    let r = run_campaign(d.path(), "out", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = campaign_table(&d.path().join("out"));
    let seeds: Vec<u64> = rows.iter().map(|r| r["seed"].as_u64().unwrap()).collect();
    assert_eq!(seeds, [50, 51, 50, 51]);
    assert_eq!(rows[2]["components.robot.rplidar.lidar.range_stddev"], 0.02);
}

#[test]
fn a_seed_file_factor_a_file_as_output_and_jobs_0_are_refused() {
    let d = setup("world: open.yaml\nfactors: {v: {files: [seeded.yaml]}}\nlimits: {seconds: 1}\n");
    std::fs::write(d.path().join("seeded.yaml"), "sim: {seed: 3}\n").unwrap();
    let r = run_campaign(d.path(), "out", &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("error: campaign.yaml: factors.v.files[0]: `seeded.yaml` sets sim.seed: a trial's seed comes from `seed:` and `seed_by:`"), "{}", r.stderr);
    std::fs::write(d.path().join("afile"), "x").unwrap();
    let r = run_campaign(d.path(), "afile", &[]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("error: -o afile: is a file, not a folder: name a new folder (or a campaign's folder to resume)"), "{}", r.stderr);
    // --jobs 0 is refused before the (bad) document is even built.
    let r = roqsim(&["campaign", "run", "campaign.yaml", "-o", "out", "--jobs", "0"], d.path());
    assert_eq!(r.code, 2);
    assert_eq!(r.stderr.trim(), "error: invalid value '0' for '--jobs <N>': takes a whole number from 1 to 18446744073709551615, got `0`\n\nFor more information, try '--help'.");
}

/// Copy folder `from` to `to` (files and folders).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn a_copied_folder_reruns_in_itself_and_a_failed_rerun_keeps_the_results() {
    let d = setup(
        "world: open.yaml
repetitions: 2
seed: 7
limits: {steps: 50}
collect: {poses: [robot]}
",
    );
    let r = run_campaign(d.path(), "out", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = d.path().join("out");
    let trial_json = std::fs::read_to_string(trial_dir(&out, 1).join("trial.json")).unwrap();
    assert!(!trial_json.contains(out.to_str().unwrap()), "{trial_json}");
    copy_dir(&out, &d.path().join("copy"));
    let copy = d.path().join("copy");
    let original = snapshot(&out);
    let good = std::fs::read(trial_dir(&copy, 1).join("results.json")).unwrap();
    // The world is relative to the document, not to the folder: the table is still rewritten.
    let r = roqsim(&["campaign", "trial", "copy", "1"], d.path());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(snapshot(&out), original, "the re-run of the copy touched the original folder");
    assert_eq!(std::fs::read(trial_dir(&copy, 1).join("results.json")).unwrap(), good);
    let rows = campaign_table(&copy);
    assert_eq!(rows[1]["attempts"], 2);
    assert_eq!(rows[1]["steps"], 50);
    assert_eq!(campaign_table(&out)[1]["attempts"], 1);
    // A re-run that fails leaves the good results in place; the row shows the failure.
    std::fs::write(trial_dir(&copy, 1).join("override.yaml"), "sim: {timestepp: 0.001}\n").unwrap();
    let r = roqsim(&["campaign", "trial", "copy", "1"], d.path());
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.starts_with("trial 1: failed in "), "{}", r.stdout);
    assert_eq!(std::fs::read(trial_dir(&copy, 1).join("results.json")).unwrap(), good);
    assert_eq!(campaign_table(&copy)[1]["status"], "failed");
    assert_eq!(campaign_table(&copy)[1]["attempts"], 3);
    // A world that is gone is refused before anything of the trial is touched.
    std::fs::rename(d.path().join("open.yaml"), d.path().join("moved.yaml")).unwrap();
    let before = snapshot(&copy);
    let r = roqsim(&["campaign", "trial", "copy", "0"], d.path());
    assert_eq!(r.code, 2);
    let world = std::fs::canonicalize(d.path()).unwrap().join("open.yaml");
    assert_eq!(
        r.stderr.trim(),
        format!("error: trial 0 of copy: its world {} no longer exists (trial.json names it so): restore the file, or run the campaign again from its document", world.display())
    );
    assert_eq!(snapshot(&copy), before);
    std::fs::rename(d.path().join("moved.yaml"), d.path().join("open.yaml")).unwrap();
    // A torn results.json is not a complete trial: resume runs it again.
    std::fs::write(trial_dir(&out, 0).join("results.json"), "{\"reason\": \"st").unwrap();
    let r = run_campaign(d.path(), "out", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("2 trials: 1 ran (1 ok, 0 not), 1 skipped as already run"),
        "{}",
        r.stdout
    );
    assert_eq!(results(&out, 0)["steps"], 50);
    // The same document in another folder names other files: another campaign.
    std::fs::create_dir(d.path().join("other")).unwrap();
    std::fs::copy(d.path().join("campaign.yaml"), d.path().join("other/campaign.yaml")).unwrap();
    std::fs::copy(d.path().join("open.yaml"), d.path().join("other/open.yaml")).unwrap();
    let r = roqsim(&["campaign", "run", "other/campaign.yaml", "-o", "out", "-q"], d.path());
    assert_eq!(r.code, 2, "{}", r.stderr);
    let root = std::fs::canonicalize(d.path()).unwrap();
    assert!(
        r.stderr.contains(&format!(
            "error: -o out: the folder holds another campaign (the same campaign.yaml, but the world files were [\"{}\"] then and are [\"{}\"] now): choose a new folder",
            root.join("open.yaml").display(),
            root.join("other/open.yaml").display()
        )),
        "{}",
        r.stderr
    );
}

#[test]
fn sigterm_to_the_campaign_ends_its_trials_and_marks_them_interrupted() {
    let d =
        setup("world: open.yaml\nrepetitions: 2\nlimits: {seconds: 100000, wall_timeout_s: 600}\n");
    let child = Command::new(BIN)
        .args(["campaign", "run", "campaign.yaml", "-o", "out", "--jobs", "2", "-q"])
        .current_dir(d.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = d.path().join("out");
    let t0 = std::time::Instant::now();
    while !(0..2).all(|i| trial_dir(&out, i).join("stderr.txt").exists()) {
        assert!(t0.elapsed().as_secs() < 120, "the trials never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let ok = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(ok.success());
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("campaign: stopped by a signal; running trials were ended and marked interrupted (they run again on resume)"), "{stderr}");
    let rows = campaign_table(&out);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row["status"], "interrupted", "trial {i}: {row}");
        let st: Json = serde_json::from_str(
            &std::fs::read_to_string(trial_dir(&out, i).join("status.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(st["note"], "the campaign was stopped (SIGINT/SIGTERM) while it ran");
    }
    // No trial process outlives the campaign (their command lines name the world in d).
    let world = std::fs::canonicalize(d.path()).unwrap().join("open.yaml");
    let world = world.to_str().unwrap();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            assert!(
                !String::from_utf8_lossy(&cmd).contains(world),
                "a trial still runs: {:?}",
                e.path()
            );
        }
    }
}

#[test]
fn a_trial_folder_written_for_another_trial_is_never_relabelled() {
    // Edit the folder's own campaign.yaml (which the "another campaign" check compares against)
    // and run it: trial 0 was run at timestep 0.002, so its results must not be kept as 0.004's.
    let d =
        setup("world: open.yaml\nfactors:\n  sim.timestep: [0.002, 0.001]\nlimits: {steps: 20}\n");
    assert_eq!(run_campaign(d.path(), "out", &[]).code, 0);
    let out = d.path().join("out");
    // (the world by its absolute path: the same file from DIR and from the original folder)
    let w = d.path().join("open.yaml");
    std::fs::write(
        out.join("campaign.yaml"),
        format!(
            "world: {}\nfactors:\n  sim.timestep: [0.004, 0.001]\nlimits: {{steps: 20}}\n",
            w.display()
        ),
    )
    .unwrap();
    let before = snapshot(&out);
    let r = roqsim(&["campaign", "run", "out/campaign.yaml", "-o", "out", "-q"], d.path());
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.contains(
            "error: -o out: trial 0 was run as another trial (its factor levels were \
             [[\"sim.timestep\",0.002]] and are [[\"sim.timestep\",0.004]] now): its results are \
             not this campaign's; choose a new folder, or delete this one to start over"
        ),
        "{}",
        r.stderr
    );
    assert_eq!(snapshot(&out), before, "the refusal rewrote the folder");
    // `campaign trial` re-runs trial 1 (its definition is unchanged) but will not rewrite the
    // table under the edited document's labels.
    let r = roqsim(&["campaign", "trial", "out", "1"], d.path());
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("error: the table of out was not rewritten: trial 0 was run as another trial (its factor levels were"), "{}", r.stderr);
    assert_eq!(campaign_table(&out)[0]["sim.timestep"], 0.002);
}
