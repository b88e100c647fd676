//! `roqsim campaign`'s guards around its folder and its processes: a resume whose inputs changed
//! (a world, an override file, the binary) is refused naming the file; one campaign at a time in
//! a folder; a folder that is not a campaign's is never written into; trials die with a
//! SIGKILLed campaign; `campaign trial` passes a stop on; incomplete results run again; a base
//! seed that would wrap is refused; `sim --summary` to an unwritable path is refused before the
//! run. ROS-free; each test runs the real binary and reads what it wrote.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

mod common;
use common::{campaign_table, snapshot, trial_dir, Out};

const BIN: &str = env!("CARGO_BIN_EXE_roqsim");

/// A world extending `parent.yaml` (a TurtleBot 4 in the empty room under the navigator);
/// `campaign.yaml` = `doc`; `narrow.yaml` an override file.
fn setup(doc: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("parent.yaml"), "sim: {timestep: 0.002, world: empty_room}\n")
        .unwrap();
    std::fs::write(
        d.path().join("open.yaml"),
        "extends: parent.yaml
components:
  - spawn_robot: {model: turtlebot4, pose: {position: {x: 0.0, y: 0.0}}}
    name: robot
    components:
      - navigator: {speed: 0.3, goals: [[2.0, 1.0]], arrival_radius: 0.2}
",
    )
    .unwrap();
    std::fs::write(d.path().join("narrow.yaml"), "sim: {timestep: 0.004}\n").unwrap();
    std::fs::write(d.path().join("campaign.yaml"), doc).unwrap();
    d
}

/// Trials that run until they are stopped (100 000 sim seconds).
const ENDLESS: &str = "world: open.yaml\nrepetitions: 2\nlimits: {seconds: 100000}\n";

fn roqsim_with(bin: &Path, args: &[&str], cwd: &Path) -> Out {
    let o = Command::new(bin).args(args).current_dir(cwd).output().unwrap();
    Out::from(o)
}

fn roqsim(args: &[&str], cwd: &Path) -> Out {
    roqsim_with(Path::new(BIN), args, cwd)
}

fn run_campaign(d: &Path, out: &str) -> Out {
    roqsim(&["campaign", "run", "campaign.yaml", "-o", out, "--jobs", "2", "-q"], d)
}

fn spawn(args: &[&str], cwd: &Path) -> Child {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn read_json(p: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// The pids of live `roqsim sim` processes whose command line names `world` (the trials of a
/// campaign in that folder).
fn trials_running(world: &Path) -> Vec<i32> {
    let w = world.to_str().unwrap();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else { continue };
        let args: Vec<String> =
            cmd.split(|&b| b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
        let zombie = std::fs::read_to_string(e.path().join("stat"))
            .map(|s| s.rsplit_once(')').is_some_and(|(_, r)| r.trim_start().starts_with('Z')))
            .unwrap_or(true);
        if !zombie && args.get(1).is_some_and(|a| a == "sim") && args.iter().any(|a| a == w) {
            out.push(pid);
        }
    }
    out
}

/// Wait (bounded: a hang fails the test, no time is asserted) until `f` holds.
fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(t0.elapsed() < Duration::from_secs(120), "never: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill").args([sig, &pid.to_string()]).status().unwrap();
    assert!(ok.success());
}

#[test]
fn a_resume_whose_world_override_file_or_binary_changed_is_refused_naming_it() {
    let d = setup(
        "world: open.yaml\nfactors:\n  variant: {files: [narrow.yaml]}\nrepetitions: 2\nlimits: {steps: 20}\n",
    );
    let r = run_campaign(d.path(), "out");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let root = std::fs::canonicalize(d.path()).unwrap();
    let out = d.path().join("out");
    // resolved.json holds a content hash of every input: the world, its parent, the override
    // file, the robot's model files; and the binary's version and hash.
    let resolved = read_json(&out.join("resolved.json"));
    let inputs = resolved["inputs"].as_object().unwrap();
    for f in ["open.yaml", "parent.yaml", "narrow.yaml"] {
        let h = inputs[root.join(f).to_str().unwrap()].as_str().unwrap();
        assert!(h.starts_with("sha256:") && h.len() == 71, "{f}: {h}");
    }
    assert!(inputs.keys().any(|k| k.ends_with("turtlebot4.xml")), "{inputs:?}");
    assert_eq!(resolved["roqsim"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(resolved["roqsim"]["sha256"].as_str().unwrap().starts_with("sha256:"));
    let before = snapshot(&out);
    let refused = |file: &str| {
        format!(
            "the input file {} changed since the trials ran (its content hash differs)",
            root.join(file).display()
        )
    };
    // The parent world is edited between two runs: the resume and an exact re-run are refused,
    // naming it and the fix; the folder is untouched.
    let parent = std::fs::read(d.path().join("parent.yaml")).unwrap();
    std::fs::write(d.path().join("parent.yaml"), "sim: {timestep: 0.001, world: empty_room}\n")
        .unwrap();
    let r = run_campaign(d.path(), "out");
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(
        r.stderr.trim(),
        format!(
            "error: -o out: cannot resume: {}; its trials would sit in one table with trials of \
             other inputs: choose a new folder (-o), or delete this one to start over",
            refused("parent.yaml")
        )
    );
    let r = roqsim(&["campaign", "trial", "out", "1"], d.path());
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(
        r.stderr.trim(),
        format!(
            "error: trial 1 of out: cannot re-run it exactly: {}: run the campaign again into a \
             new folder (-o)",
            refused("parent.yaml")
        )
    );
    assert_eq!(snapshot(&out), before, "a refusal touched the folder");
    // The fix named: a new folder runs the edited world.
    let r = run_campaign(d.path(), "edited");
    assert_eq!(r.code, 0, "{}", r.stderr);
    std::fs::write(d.path().join("parent.yaml"), &parent).unwrap();
    // An override file of a files factor.
    std::fs::write(d.path().join("narrow.yaml"), "sim: {timestep: 0.003}\n").unwrap();
    let r = run_campaign(d.path(), "out");
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains(&refused("narrow.yaml")), "{}", r.stderr);
    std::fs::write(d.path().join("narrow.yaml"), "sim: {timestep: 0.004}\n").unwrap();
    // Another roqsim binary (here: one byte appended) ran none of these trials.
    let other = d.path().join("roqsim-other");
    let mut bytes = std::fs::read(BIN).unwrap();
    bytes.push(0);
    std::fs::write(&other, bytes).unwrap();
    std::fs::set_permissions(&other, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let r = roqsim_with(&other, &["campaign", "run", "campaign.yaml", "-o", "out", "-q"], d.path());
    assert_eq!(r.code, 2, "{}", r.stdout);
    let then = resolved["roqsim"]["sha256"].as_str().unwrap();
    assert!(
        r.stderr.contains(&format!(
            "error: -o out: cannot resume: the roqsim binary is not the one that ran the trials \
             (then version {v}, {then}; now version {v}, sha256:",
            v = env!("CARGO_PKG_VERSION")
        )),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(&format!("at {}); its trials", root.join("roqsim-other").display())),
        "{}",
        r.stderr
    );
    assert_eq!(snapshot(&out), before);
    // Restored inputs resume: nothing runs again.
    let r = run_campaign(d.path(), "out");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("2 trials: 0 ran (0 ok, 0 not), 2 skipped as already run"),
        "{}",
        r.stdout
    );
}

#[test]
fn one_campaign_at_a_time_and_campaign_trial_passes_a_stop_on() {
    let d = setup(ENDLESS);
    let world = std::fs::canonicalize(d.path()).unwrap().join("open.yaml");
    let first =
        spawn(&["campaign", "run", "campaign.yaml", "-o", "out", "--jobs", "2", "-q"], d.path());
    wait_until("two trials run", || trials_running(&world).len() == 2);
    let lock = std::fs::canonicalize(d.path()).unwrap().join("out/.lock");
    // A second campaign into the folder, and `campaign trial`, are refused naming the holder.
    let held = format!(
        "another roqsim campaign (pid {}) is running in this folder (it holds {}): wait for it to \
         end, or name another folder",
        first.id(),
        lock.display()
    );
    let r = run_campaign(d.path(), "out");
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(r.stderr.trim(), format!("error: -o out: {held}"));
    let r = roqsim(&["campaign", "trial", "out", "0"], d.path());
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(r.stderr.trim(), format!("error: out: {held}"));
    signal(first.id(), "-TERM");
    let o = first.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(trials_running(&world).is_empty());
    // `campaign trial` gets SIGINT: its trial is ended (not left running), marked, the table
    // rewritten, exit code 130.
    let t = spawn(&["campaign", "trial", "out", "1"], d.path());
    wait_until("the re-run's trial runs", || trials_running(&world).len() == 1);
    signal(t.id(), "-INT");
    let o = t.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains(
            "campaign trial: stopped by a signal; the trial was ended and marked interrupted"
        ),
        "{stderr}"
    );
    assert!(trials_running(&world).is_empty(), "the trial outlived `campaign trial`");
    let st = read_json(&trial_dir(&d.path().join("out"), 1).join("status.json"));
    assert_eq!(st["status"], "interrupted");
    assert_eq!(st["attempts"], 2);
    assert_eq!(st["note"], "the campaign was stopped (SIGINT/SIGTERM) while it ran");
    assert_eq!(campaign_table(&d.path().join("out"))[1]["attempts"], 2);
}

#[test]
fn a_sigkilled_campaign_takes_its_trials_with_it() {
    let d = setup(ENDLESS);
    let world = std::fs::canonicalize(d.path()).unwrap().join("open.yaml");
    let mut c =
        spawn(&["campaign", "run", "campaign.yaml", "-o", "out", "--jobs", "2", "-q"], d.path());
    wait_until("two trials run", || trials_running(&world).len() == 2);
    let trials = trials_running(&world);
    signal(c.id(), "-KILL");
    c.wait().unwrap();
    // PR_SET_PDEATHSIG: each trial got SIGKILL when its campaign died.
    wait_until("the trials die with their campaign", || trials_running(&world).is_empty());
    for pid in trials {
        assert!(trials_running(&world).iter().all(|&p| p != pid));
    }
    // The lock died with the holder: the folder resumes (here: refused for another reason,
    // proving the lock was free).
    std::fs::write(d.path().join("campaign.yaml"), "world: open.yaml\nlimits: {steps: 5}\n")
        .unwrap();
    let r = run_campaign(d.path(), "out");
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("the folder holds another campaign (its campaign.yaml differs"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_non_empty_folder_that_is_not_a_campaigns_is_refused_untouched() {
    let d = setup("world: open.yaml\nlimits: {steps: 5}\n");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("notes.txt"), "my thesis\n").unwrap();
    let r = run_campaign(d.path(), "data");
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(
        r.stderr.trim(),
        "error: -o data: the folder is not empty and is not a campaign's folder (it has no \
         campaign.yaml): name a new or empty folder, or a campaign's folder to resume; nothing in \
         it was touched"
    );
    let names: Vec<_> = std::fs::read_dir(&data).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["notes.txt"]);
    assert_eq!(std::fs::read_to_string(data.join("notes.txt")).unwrap(), "my thesis\n");
    // An empty folder is a new campaign's.
    std::fs::create_dir(d.path().join("empty")).unwrap();
    let r = run_campaign(d.path(), "empty");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(campaign_table(&d.path().join("empty"))[0]["steps"], 5);
    // A campaign folder without resolved.json cannot say what its trials ran on.
    std::fs::remove_file(d.path().join("empty/resolved.json")).unwrap();
    let r = run_campaign(d.path(), "empty");
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr.trim(),
        "error: -o empty: the folder holds trials but no readable resolved.json, so what they ran \
         on is unknown: choose a new folder (-o), or delete this one to start over"
    );
}

#[test]
fn results_without_a_complete_summarys_fields_run_again() {
    let d = setup("world: open.yaml\nrepetitions: 3\nseed: 5\nlimits: {steps: 30}\n");
    assert_eq!(run_campaign(d.path(), "out").code, 0);
    let out = d.path().join("out");
    let good: Vec<Vec<u8>> =
        (0..3).map(|i| std::fs::read(trial_dir(&out, i).join("results.json")).unwrap()).collect();
    // Any JSON object is not a result; nor is another trial's (seed 6 is trial 1's).
    std::fs::write(trial_dir(&out, 0).join("results.json"), "{}\n").unwrap();
    std::fs::copy(trial_dir(&out, 1).join("results.json"), trial_dir(&out, 2).join("results.json"))
        .unwrap();
    let r = run_campaign(d.path(), "out");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("3 trials: 2 ran (2 ok, 0 not), 1 skipped as already run"),
        "{}",
        r.stdout
    );
    for (i, g) in good.iter().enumerate() {
        assert_eq!(
            &std::fs::read(trial_dir(&out, i).join("results.json")).unwrap(),
            g,
            "trial {i}"
        );
    }
    let rows = campaign_table(&out);
    assert_eq!([&rows[0]["attempts"], &rows[1]["attempts"], &rows[2]["attempts"]], [2, 1, 2]);
}

#[test]
fn a_base_seed_whose_trial_seeds_would_wrap_is_refused() {
    let max = u64::MAX;
    let d =
        setup(&format!("world: open.yaml\nrepetitions: 2\nseed: {max}\nlimits: {{steps: 5}}\n"));
    let r = run_campaign(d.path(), "out");
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr.trim(),
        format!(
            "error: campaign.yaml: seed: {max} + the last trial index (1) passes the largest \
             seed, {max}: trial seeds are `seed + trial index` and never wrap; lower `seed` to at \
             most {}",
            max - 1
        )
    );
    assert!(!d.path().join("out").exists());
    // The largest base seed that fits runs, its last trial on seed 2^64 - 1.
    std::fs::write(
        d.path().join("campaign.yaml"),
        format!("world: open.yaml\nrepetitions: 2\nseed: {}\nlimits: {{steps: 5}}\n", max - 1),
    )
    .unwrap();
    let r = run_campaign(d.path(), "out");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = campaign_table(&d.path().join("out"));
    assert_eq!([rows[0]["seed"].as_u64(), rows[1]["seed"].as_u64()], [Some(max - 1), Some(max)]);
    assert_eq!(read_json(&trial_dir(&d.path().join("out"), 1).join("results.json"))["seed"], max);
}

#[test]
fn an_unwritable_summary_path_is_refused_before_the_run() {
    let d = setup("world: open.yaml\nlimits: {steps: 5}\n");
    // Half a million steps would run for a while: the refusal comes before any of them.
    let args = |summary: &str| {
        vec![
            "sim",
            "open.yaml",
            "--steps",
            "500000",
            "-q",
            "--record",
            "r.mcap",
            "--summary",
            summary,
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let run = |s: &str| {
        let a = args(s);
        roqsim(&a.iter().map(String::as_str).collect::<Vec<_>>(), d.path())
    };
    let r = run("nowhere/s.json");
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(
        r.stderr.trim(),
        "error: --summary nowhere/s.json: cannot write the summary there (No such file or \
         directory (os error 2)): name a file in a folder that exists and is writable"
    );
    assert!(!d.path().join("r.mcap").exists(), "the recording was started before the refusal");
    let r = run(".");
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("error: --summary .: cannot write the summary there (it is a folder)"),
        "{}",
        r.stderr
    );
    // A writable path is not left behind by the check when the world is refused.
    let r = roqsim(&["sim", "nope.yaml", "--steps", "5", "--summary", "s.json"], d.path());
    assert_eq!(r.code, 2);
    assert!(!d.path().join("s.json").exists());
}

#[test]
fn two_factors_that_set_one_key_are_refused_before_anything_is_written() {
    let refused = |doc: &str| {
        let d = setup(doc);
        std::fs::write(d.path().join("wide.yaml"), "sim: {timestep: 0.001}\n").unwrap();
        std::fs::write(
            d.path().join("fast.yaml"),
            "components: {robot: {navigator: {speed: 0.5}}}\n",
        )
        .unwrap();
        let r = run_campaign(d.path(), "out");
        assert_eq!(r.code, 2, "{}", r.stdout);
        assert!(!d.path().join("out").exists(), "a refused campaign wrote its folder");
        r.stderr.trim().to_string()
    };
    const WHY: &str = "two factors must not set one key (in every trial one would silently win, \
                       and rows that differ only in the other's level would run the same world); \
                       vary the key in one factor, or remove it from one of them";
    // A value factor and a files factor whose file sets the same key.
    assert_eq!(
        refused(
            "world: open.yaml\nfactors:\n  sim.timestep: [0.002, 0.004]\n  \
             variant: {files: [narrow.yaml]}\nlimits: {steps: 5}\n"
        ),
        format!(
            "error: campaign.yaml: factors.variant: sets `sim.timestep` (in `narrow.yaml`), and \
             factor `sim.timestep` sets `sim.timestep`: {WHY}"
        )
    );
    // Two files factors touching one path.
    assert_eq!(
        refused(
            "world: open.yaml\nfactors:\n  a: {files: [fast.yaml, narrow.yaml]}\n  \
             b: {files: [wide.yaml]}\nlimits: {steps: 5}\n"
        ),
        format!(
            "error: campaign.yaml: factors.b: sets `sim.timestep` (in `wide.yaml`), and factor \
             `a` sets `sim.timestep` (in `narrow.yaml`): {WHY}"
        )
    );
    // A key inside another factor's key.
    assert_eq!(
        refused(
            "world: open.yaml\nfactors:\n  variant: {files: [fast.yaml]}\n  \
             components.robot.navigator: [{speed: 0.2}]\nlimits: {steps: 5}\n"
        ),
        format!(
            "error: campaign.yaml: factors.components.robot.navigator: sets \
             `components.robot.navigator`, and factor `variant` sets \
             `components.robot.navigator.speed` (in `fast.yaml`): {WHY}"
        )
    );
}

#[test]
fn a_non_finite_level_is_refused_naming_the_factor() {
    for (level, shown) in [(".nan", ".nan"), (".inf", ".inf"), ("-.inf", "-.inf")] {
        let d = setup(&format!(
            "world: open.yaml\nfactors:\n  components.robot.navigator.speed: [0.3, {level}]\n\
             limits: {{steps: 5}}\n"
        ));
        let r = run_campaign(d.path(), "out");
        assert_eq!(r.code, 2, "{}", r.stdout);
        assert_eq!(
            r.stderr.trim(),
            format!(
                "error: campaign.yaml: factors.components.robot.navigator.speed[1]: is {shown}, \
                 not a finite number: a factor level must be finite (a trial cannot be told \
                 apart by it, and the table would show it as null); give a finite value"
            )
        );
        assert!(!d.path().join("out").exists());
    }
}

#[test]
fn a_bad_ray_address_is_refused_before_anything_is_read() {
    let d = setup("world: open.yaml\nlimits: {steps: 5}\n");
    const FIX: &str = "give `auto` (the cluster of this node) or HOST:PORT with a port from 1 to \
                       65535, as `ray start --head` printed it (e.g. 127.0.0.1:6379)";
    for (addr, want) in [
        ("nohost:abc", format!("--ray nohost:abc: not a Ray cluster address: {FIX}")),
        ("", format!("--ray is empty: {FIX}")),
        ("127.0.0.1:0", format!("--ray 127.0.0.1:0: not a Ray cluster address: {FIX}")),
        ("127.0.0.1:65536", format!("--ray 127.0.0.1:65536: not a Ray cluster address: {FIX}")),
        (":6379", format!("--ray :6379: not a Ray cluster address: {FIX}")),
        ("localhost", format!("--ray localhost: not a Ray cluster address: {FIX}")),
        ("h:1:2", format!("--ray h:1:2: not a Ray cluster address: {FIX}")),
    ] {
        let r = roqsim(&["campaign", "run", "campaign.yaml", "-o", "out", "--ray", addr], d.path());
        assert_eq!(r.code, 2, "{addr}: {}", r.stdout);
        assert_eq!(r.stderr.trim(), format!("error: {want}"), "{addr}");
        assert!(!d.path().join("out").exists());
    }
}

#[test]
fn a_symlinked_lock_or_table_and_a_foreign_folder_for_campaign_trial_are_refused() {
    let d = setup("world: open.yaml\nrepetitions: 2\nlimits: {steps: 5}\n");
    let r = run_campaign(d.path(), "out");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = std::fs::canonicalize(d.path().join("out")).unwrap();
    let before = snapshot(&out);
    // A `.lock` that is a symbolic link is never followed (the pid would be written there).
    let victim = d.path().join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    std::fs::remove_file(out.join(".lock")).unwrap();
    std::os::unix::fs::symlink(&victim, out.join(".lock")).unwrap();
    let lock = out.join(".lock");
    let want = format!(
        "out: {l} is not a plain file (a symbolic or hard link, a folder or a device): a \
         campaign's lock is a plain file it creates; remove {l} and run again",
        l = lock.display()
    );
    let r = run_campaign(d.path(), "out");
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(r.stderr.trim(), format!("error: -o {want}"));
    let r = roqsim(&["campaign", "trial", "out", "0"], d.path());
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(r.stderr.trim(), format!("error: {want}"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert_eq!(snapshot(&out), before);
    // Nor is a hard link (the pid would be written over the file it shares).
    std::fs::remove_file(&lock).unwrap();
    std::fs::hard_link(&victim, &lock).unwrap();
    let r = run_campaign(d.path(), "out");
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(r.stderr.trim(), format!("error: -o {want}"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    std::fs::remove_file(&lock).unwrap();
    // A table file the table cannot be written to is refused before any trial runs.
    std::fs::remove_file(out.join("results.csv")).unwrap();
    std::os::unix::fs::symlink("/dev/full", out.join("results.csv")).unwrap();
    let r = run_campaign(d.path(), "out");
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(
        r.stderr.trim(),
        format!(
            "error: -o out: {} is not a plain file (a symbolic link, a folder or a device): the \
             results table is written there after the trials; remove it (the table is rewritten \
             from the trial folders) and run again",
            out.join("results.csv").display()
        )
    );
    std::fs::remove_file(out.join("results.csv")).unwrap();
    let r = run_campaign(d.path(), "out");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(campaign_table(&out).len(), 2);
    // `campaign trial` in a folder that is not a campaign's leaves no `.lock` behind.
    let data = d.path().join("data");
    std::fs::create_dir_all(data.join("trials/0000")).unwrap();
    let r = roqsim(&["campaign", "trial", "data", "0"], d.path());
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(
        r.stderr.trim(),
        "error: trial 0 of data: the folder is not a campaign's folder (it has no \
         campaign.yaml): name a campaign's output folder; nothing in it was touched"
    );
    let names: Vec<_> = std::fs::read_dir(&data).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["trials"]);
}
