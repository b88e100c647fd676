//! Foundation tests: bad input is refused naming the key path (all errors at once), overrides,
//! lifecycle order, determinism, rate snapping, seeding, stop requests, non-finite detection.

mod common;

use common::{assert_refused_at, root};
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use roqsim::engine::rates::snap_rate;
use roqsim::error::ConfigErrors;
use roqsim::world::overrides::{load_override_file, parse_set};
use roqsim::{load_world_str, Engine, EngineOptions, LoadOptions};

fn load(yaml: &str) -> Result<roqsim::LoadedWorld, ConfigErrors> {
    load_world_str(yaml, root(), &LoadOptions::default())
}

fn load_with(yaml: &str, sets: &[&str]) -> Result<roqsim::LoadedWorld, ConfigErrors> {
    let assignments = sets.iter().map(|s| parse_set(s).unwrap()).collect();
    load_world_str(yaml, root(), &LoadOptions { assignments, ..Default::default() })
}

/// Assert the document is refused with an error at `path` whose message contains `needle`.
#[track_caller]
fn refused(yaml: &str, path: &str, needle: &str) {
    assert_refused_at(load(yaml), path, needle)
}

const OK: &str = "components:\n  - dummy: {size: 0.1}\n    name: a\n";

// ---------------------------------------------------------------- bad input (each names its path)

#[test]
fn bad_01_yaml_syntax_has_line_and_column() {
    refused("components:\n  - dummy: {size: 0.1\n", "", "YAML syntax error at line");
}

#[test]
fn bad_02_document_not_a_mapping() {
    refused("- dummy: {}\n", "", "must be a mapping");
}

#[test]
fn bad_03_plugins_key_names_components() {
    refused("plugins:\n  - dummy: {}\n", "plugins", "spelled `components:`");
}

#[test]
fn bad_04_unknown_top_level_key() {
    refused("componets:\n  - dummy: {}\n", "componets", "unknown top-level key");
}

#[test]
fn bad_05_components_not_a_list() {
    refused("components:\n  dummy: {}\n", "components", "must be a list");
}

#[test]
fn bad_06_entry_is_a_bare_string() {
    refused("components:\n  - dummy\n", "components[0]", "write `- dummy: {}`");
}

#[test]
fn bad_07_entry_without_plugin_ref() {
    refused("components:\n  - name: a\n", "components[0]", "no plugin ref");
}

#[test]
fn bad_08_two_plugin_refs_in_one_entry() {
    refused(
        "components:\n  - dummy: {}\n    lidar: {}\n",
        "components[0]",
        "2 plugin refs (dummy, lidar)",
    );
}

#[test]
fn bad_09_unknown_plugin() {
    refused(
        "components:\n  - warp_drive: {}\n",
        "components.warp_drive",
        "unknown plugin `warp_drive`",
    );
}

#[test]
fn bad_10_unknown_config_key() {
    refused(
        "components:\n  - dummy: {sise: 0.1}\n    name: a\n",
        "components.a.sise",
        "unknown field `sise`, expected one of",
    );
}

#[test]
fn bad_11_wrong_type() {
    refused(
        "components:\n  - dummy: {size: big}\n    name: a\n",
        "components.a.size",
        "must be a number, got the string \"big\"",
    );
}

#[test]
fn bad_12_name_inside_config_gives_corrected_spelling() {
    refused(
        "components:\n  - dummy: {size: 0.1, name: a}\n",
        "components.dummy.name",
        "write it as a sibling of the plugin ref:\n      - dummy: {...}\n        name: a",
    );
}

#[test]
fn bad_13_components_inside_config() {
    refused(
        "components:\n  - dummy: {components: []}\n",
        "components.dummy.components",
        "sibling of the plugin ref",
    );
}

#[test]
fn bad_14_name_with_a_dot() {
    refused("components:\n  - dummy: {}\n    name: a.b\n", "components[0].name", "contains a dot");
}

#[test]
fn bad_15_enabled_not_bool() {
    refused(
        "components:\n  - dummy: {}\n    enabled: nope\n",
        "components[0].enabled",
        "must be true or false",
    );
}

#[test]
fn bad_16_duplicate_labels() {
    refused(
        "components:\n  - dummy: {}\n  - dummy: {}\n",
        "components.dummy",
        "two entries labelled `dummy`",
    );
}

#[test]
fn bad_17_unknown_sim_key() {
    refused(
        "sim: {timestepp: 0.001}\ncomponents: []\n",
        "sim.timestepp",
        "unknown field `timestepp`, expected one of `timestep`",
    );
}

#[test]
fn bad_18_negative_timestep() {
    refused("sim: {timestep: -0.001}\n", "sim.timestep", "must be a positive number of seconds");
}

#[test]
fn bad_19_unknown_integrator() {
    refused("sim: {integrator: verlet}\n", "sim.integrator", "unknown variant `verlet`");
}

#[test]
fn bad_20_bad_pacing() {
    refused(
        "sim: {pacing: {factor: -2}}\n",
        "sim.pacing.factor",
        "a real-time factor must be within [0.001, 10000], got -2; use `asap` for as fast as possible",
    );
    let forms =
        "has none of the forms this key takes (`realtime`, `asap` or `{factor: x}` with x > 0)";
    refused("sim: {pacing: warp}\n", "sim.pacing", forms);
    refused("sim: {pacing: {factor: 2, speed: 3}}\n", "sim.pacing", forms);
    // a list is no form of the key (serde would read a struct from the list of its fields)
    refused("sim: {pacing: [1]}\n", "sim.pacing", forms);
    refused(
        "sim: {gravity: [0, 0, .nan]}\n",
        "sim.gravity",
        "every component must be finite and within ±1e4",
    );
    refused("sim: {timestep: 1.0}\n", "sim.timestep", "longer than 0.1 s");
    refused("sim: {iterations: 0}\n", "sim.iterations", "must be between 1 and 10000, got 0");
}

#[test]
fn bad_21_contact_override_below_floor_names_it() {
    refused(
        "sim: {timestep: 0.002, contact_override: {solref: [0.001]}}\n",
        "sim.contact_override.solref",
        "below the floor 2*timestep = 0.004 s",
    );
}

#[test]
fn bad_22_contact_override_too_long() {
    refused(
        "sim: {contact_override: {solref: [0.02, 1, 3]}}\n",
        "sim.contact_override.solref",
        "at most 2",
    );
}

#[test]
fn bad_23_contact_override_unknown_key() {
    refused(
        "sim: {contact_override: {solrf: [0.02]}}\n",
        "sim.contact_override.solrf",
        "unknown field `solrf`",
    );
}

#[test]
fn bad_24_unknown_world() {
    refused(
        "sim: {world: moon_base}\n",
        "sim.world",
        "use the built-in `empty_room`, or a path to an MJCF file",
    );
}

#[test]
fn bad_25_missing_world_file() {
    refused("sim: {world: scenes/nowhere.xml}\n", "sim.world", "not found");
}

#[test]
fn bad_26_override_matches_nothing_names_addresses() {
    assert_refused_at(
        load_with(OK, &["components.b.size=0.2"]),
        "components.b.size",
        "the addresses that exist are: a",
    );
}

#[test]
fn bad_27_override_near_miss_names_candidates() {
    let yaml = "components:\n  - dummy: {}\n    name: a\n    components:\n      - dummy: {}\n        name: inner\n";
    assert_refused_at(
        load_with(yaml, &["components.inner.size=0.2"]),
        "components.inner.size",
        "did you mean components.a.inner?",
    );
}

#[test]
fn bad_28_set_without_equals_and_reserved_keys() {
    let e = parse_set("sim.timestep").unwrap_err();
    assert!(e.message.contains("path=value"), "{e}");
    assert_refused_at(
        load_with(OK, &["components.a.name=x"]),
        "components.a.name",
        "reserved sibling",
    );
    assert_refused_at(
        load_with(OK, &["physics.timestep=1"]),
        "physics.timestep",
        "starts with `sim.` or `components.<address>.`",
    );
}

#[test]
fn bad_29_override_file_missing() {
    let e = load_override_file(Path::new("/nonexistent/over.yaml")).unwrap_err();
    assert!(e.message.contains("--override /nonexistent/over.yaml: cannot read"), "{e}");
}

#[test]
fn bad_30_plugin_value_checks() {
    refused(
        "components:\n  - dummy: {size: 0}\n    name: a\n",
        "components.a.size",
        "must be in (0, 10000] m, got 0",
    );
    refused(
        "components:\n  - dummy: {fail_on: launch}\n    name: a\n",
        "components.a.fail_on",
        "unknown hook `launch`",
    );
}

#[test]
fn bad_31_gravity_wrong_length() {
    refused(
        "sim: {gravity: [0, -9.81]}\n",
        "sim.gravity",
        "must be a list of 3 items, got a list of 2 items",
    );
}

#[test]
fn bad_32_config_must_be_a_mapping() {
    refused(
        "components:\n  - dummy: [1, 2]\n",
        "components.dummy",
        "must be a mapping, got a list",
    );
}

#[test]
fn bad_33_ros_and_no_communication_refused_together() {
    let r = load_world_str(
        OK,
        root(),
        &LoadOptions { ros: true, no_communication: true, ..Default::default() },
    );
    assert_refused_at(r, "", "refused together");
}

#[cfg(not(feature = "ros"))]
#[test]
fn bad_34_bridge_only_failure_names_both_ways_out() {
    refused(
        "components:\n  - dummy: {}\n  - ros2_bridge: {}\n",
        "components.ros2_bridge",
        "Either build the ROS node (scripts/setup.sh --ros, or cargo build --features ros) and source scripts/env.sh, or run with --no-communication",
    );
}

#[test]
fn bad_35_sync_block_values() {
    refused(
        "sim: {sync: {enabled: true, timeout_s: 2.0}}\n",
        "sim.sync.control",
        "lockstep waits for control but names no inbound endpoint: list the endpoints the controller publishes to, e.g. control: [cmd_vel]",
    );
    refused(
        "sim: {sync: {timeout_s: 0}}\n",
        "sim.sync.timeout_s",
        "must be a number of seconds in (0, 86400], got 0",
    );
    refused(
        "sim: {sync: {wait_for: [sensors, odometry]}}\n",
        "sim.sync.wait_for[1]",
        "unknown gate `odometry`: use sensors or control",
    );
    assert!(load("sim: {sync: {enabled: false}}\ncomponents:\n  - dummy: {}\n").is_ok());
    assert!(load(
        "sim: {sync: {enabled: true, wait_for: [sensors]}}\ncomponents:\n  - dummy: {}\n"
    )
    .is_ok());
}

#[test]
fn every_error_is_reported_at_once() {
    let yaml = "sim: {timestep: 0, bogus: 1}\ncomponents:\n  - dummy: {size: -1}\n    name: a\n  - nope: {}\n  - dummy: {name: x}\n";
    let e = load(yaml).unwrap_err();
    for (path, needle) in [
        ("sim.bogus", "unknown field `bogus`"),
        ("components.a.size", "must be in (0, 10000] m, got -1"),
        ("components.nope", "unknown plugin"),
        ("components.dummy.name", "sibling"),
    ] {
        assert!(
            e.0.iter().any(|x| x.path == path && x.message.contains(needle)),
            "missing {path}: {needle}\n{e}"
        );
    }
    assert!(e.len() >= 4, "{e}");
}

#[test]
fn no_communication_drops_bridges_and_warns() {
    let w = load_world_str(
        "components:\n  - dummy: {}\n  - ros2_bridge: {}\n",
        root(),
        &LoadOptions { no_communication: true, ..Default::default() },
    )
    .unwrap();
    assert_eq!(w.components.len(), 1);
    assert!(
        w.warnings[0].contains("communicates with nothing (dropped ros2_bridge)"),
        "{:?}",
        w.warnings
    );
}

#[test]
fn no_communication_drops_the_settings_of_the_bridges_it_drops() {
    // A replay (and --no-communication) drops the transport plugins, declared or added by
    // --ros/--sim-control: a recorded `--set` on one of them has nothing left to set.
    let assignments = vec![
        parse_set("components.ros2_bridge.clock_rate_hz=500").unwrap(),
        parse_set("components.sim_interfaces.start_paused=true").unwrap(),
        parse_set("components.a.size=0.25").unwrap(),
    ];
    let w = load_world_str(
        "components:\n  - dummy: {}\n    name: a\n  - ros2_bridge: {}\n",
        root(),
        &LoadOptions { no_communication: true, assignments, ..Default::default() },
    )
    .unwrap();
    assert_eq!(w.components.len(), 1);
    assert_eq!(w.components[0].config.get("size").and_then(|v| v.as_f64()), Some(0.25));
    assert_eq!(
        w.warnings[1..],
        [
            "--no-communication: --set components.ros2_bridge.clock_rate_hz=500 sets `components.ros2_bridge.clock_rate_hz` of a dropped transport component: ignored",
            "--no-communication: --set components.sim_interfaces.start_paused=true sets `components.sim_interfaces.start_paused` of a dropped transport component: ignored",
        ]
    );
}

// ---------------------------------------------------------------- overrides

#[test]
fn overrides_apply_compose_and_later_wins() {
    let w =
        load_with(OK, &["components.a.size=0.3", "sim.timestep=0.001", "components.a.size=0.25"])
            .unwrap();
    assert_eq!(w.components[0].config.get("size").and_then(|v| v.as_f64()), Some(0.25));
    assert_eq!(w.timestep, 0.001);
    // an override file, same nested shape, dotted addresses allowed
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("o.yaml");
    std::fs::write(&f, "sim: {seed: 9}\ncomponents:\n  a.inner: {size: 0.05}\n").unwrap();
    let yaml = "components:\n  - dummy: {}\n    name: a\n    components:\n      - dummy: {}\n        name: inner\n";
    let assignments = load_override_file(&f).unwrap();
    let w =
        load_world_str(yaml, root(), &LoadOptions { assignments, ..Default::default() }).unwrap();
    assert_eq!(w.sim.seed, Some(9));
    let inner = w.components.iter().find(|c| c.args.address == "a.inner").unwrap();
    assert_eq!(inner.config.get("size").and_then(|v| v.as_f64()), Some(0.05));
    assert_eq!(inner.args.owner.as_deref(), Some("a"));
}

#[test]
fn enabled_false_removes_the_entry_and_its_children() {
    let yaml = "components:\n  - dummy: {}\n    name: a\n    enabled: false\n    components:\n      - dummy: {}\n        name: inner\n  - dummy: {}\n    name: b\n";
    let w = load(yaml).unwrap();
    let addrs: Vec<&str> = w.components.iter().map(|c| c.args.address.as_str()).collect();
    assert_eq!(addrs, vec!["b"]);
    let w = load_with(yaml, &["components.a.enabled=true"]).unwrap();
    assert_eq!(w.components.len(), 3);
}

// ---------------------------------------------------------------- lifecycle

fn calls(engine: &Engine) -> Vec<String> {
    engine
        .ctx
        .blackboard
        .get::<Rc<RefCell<Vec<String>>>>(roqsim::plugins::dummy::CALL_LOG_KEY)
        .unwrap()
        .borrow()
        .clone()
}

#[test]
fn lifecycle_order_and_reverse_shutdown() {
    let yaml = "components:\n  - dummy: {record: true}\n    name: a\n  - dummy: {record: true}\n    name: b\n  - dummy: {record: true}\n    name: c\n";
    let mut e =
        Engine::new(load(yaml).unwrap(), EngineOptions { profile: true, seed: Some(1) }).unwrap();
    e.step_n(2).unwrap();
    let errs = e.shutdown();
    assert!(errs.is_empty());
    let got = calls(&e);
    let want: Vec<String> = [
        "a:build",
        "b:build",
        "c:build",
        "a:configure",
        "b:configure",
        "c:configure",
        "a:on_reset",
        "b:on_reset",
        "c:on_reset",
        "a:pre_step",
        "b:pre_step",
        "c:pre_step",
        "a:post_step",
        "b:post_step",
        "c:post_step",
        "a:pre_step",
        "b:pre_step",
        "c:pre_step",
        "a:post_step",
        "b:post_step",
        "c:post_step",
        "c:shutdown",
        "b:shutdown",
        "a:shutdown",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(got, want);
    // every implemented hook is timed, with its call count
    let rows = e.timing_report();
    let pre = rows.iter().find(|r| r.plugin.starts_with("b ") && r.hook == "pre_step").unwrap();
    assert_eq!(pre.calls, 2);
    assert_eq!(
        e.load_report().iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        vec!["parse", "expand", "instantiate", "world", "build", "compile", "data", "configure"]
    );
}

#[test]
fn failing_shutdown_is_reported_and_others_still_run() {
    let yaml = "components:\n  - dummy: {record: true}\n    name: a\n  - dummy: {record: true, fail_on: shutdown}\n    name: b\n  - dummy: {record: true}\n    name: c\n";
    let mut e =
        Engine::new(load(yaml).unwrap(), EngineOptions { profile: false, seed: Some(1) }).unwrap();
    let errs = e.shutdown();
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].to_string(), "[b] shutdown: failing on purpose (fail_on: shutdown)");
    let got = calls(&e);
    assert_eq!(&got[got.len() - 3..], &["c:shutdown", "b:shutdown", "a:shutdown"]);
}

#[test]
fn failing_hook_names_plugin_and_hook() {
    let yaml = "components:\n  - dummy: {fail_on: configure}\n    name: a\n";
    let err = Engine::new(load(yaml).unwrap(), EngineOptions::default()).err().unwrap();
    assert_eq!(err.to_string(), "[a] configure: failing on purpose (fail_on: configure)");
}

#[test]
fn stop_request_ends_the_run_cleanly() {
    let yaml = "sim: {timestep: 0.002}\ncomponents:\n  - dummy: {stop_at_s: 0.5}\n    name: a\n";
    let mut e = Engine::new(load(yaml).unwrap(), EngineOptions::default()).unwrap();
    let s = roqsim::runner::run(
        &mut e,
        roqsim::runner::Limits { steps: Some(10_000), seconds: None },
        None,
        false,
        &|| false,
    )
    .unwrap();
    assert_eq!(s.steps, 250);
    assert_eq!(s.reason, "stop requested: a reached stop_at_s = 0.5 s");
}

// ---------------------------------------------------------------- determinism

fn state(e: &Engine) -> (Vec<u64>, Vec<u64>) {
    let d = e.ctx.data();
    (d.qpos().iter().map(|x| x.to_bits()).collect(), d.qvel().iter().map(|x| x.to_bits()).collect())
}

#[test]
fn two_runs_are_bitwise_identical_and_reset_reproduces() {
    let world = || {
        load_world_str(
            &std::fs::read_to_string(root().join("worlds/demo.yaml")).unwrap(),
            &root().join("worlds"),
            &LoadOptions::default(),
        )
        .unwrap()
    };
    let mut a = Engine::new(world(), EngineOptions { profile: false, seed: Some(3) }).unwrap();
    let mut b = Engine::new(world(), EngineOptions { profile: false, seed: Some(3) }).unwrap();
    a.step_n(10_000).unwrap();
    b.step_n(10_000).unwrap();
    let sa = state(&a);
    assert_eq!(sa, state(&b));
    // the boxes actually moved (fell and settled): the state is not trivially the initial one
    let z: Vec<f64> = a.ctx.data().qpos().chunks(7).map(|c| c[2]).collect();
    assert!(z.iter().all(|&z| z < 0.3), "{z:?}");
    a.reset().unwrap();
    assert_eq!(a.ctx.episode, 1);
    a.step_n(10_000).unwrap();
    assert_eq!(state(&a), sa);
}

// ---------------------------------------------------------------- rates and seeding

#[test]
fn rates_snap_to_the_physics_grid() {
    let s = snap_rate(30.0, 500.0);
    assert_eq!((s.every_steps, s.realised_hz), (17, 500.0 / 17.0));
    let mut i = roqsim::context::Interface::new(500.0);
    let id = i.add(roqsim::context::Endpoint::out("scan").rate(30.0));
    assert_eq!(i.get(id).snapped.unwrap().every_steps, 17);
    assert!(!i.is_due(id, 16) && i.is_due(id, 17) && i.is_due(id, 34));
    assert!(
        matches!(&i.notes[0], roqsim::engine::rates::SnapNote::Warn(m) if m.contains("500/17") || m.contains("29.4118 Hz"))
    );
    let row = &i.rate_table()[0];
    assert_eq!((row.requested_hz, row.every_steps), (30.0, 17));
}

#[test]
fn rng_for_is_keyed_by_seed_episode_time_and_name() {
    let mut e =
        Engine::new(load(OK).unwrap(), EngineOptions { profile: false, seed: Some(42) }).unwrap();
    e.step_n(10).unwrap();
    let draw = |e: &Engine, name: &str| -> Vec<u32> {
        let mut r = e.ctx.rng_for(name).unwrap();
        (0..4).map(|_| r.next_u32()).collect()
    };
    let first = draw(&e, "lidar");
    assert_eq!(first, draw(&e, "lidar"), "same step, same name: same stream");
    assert_ne!(first, draw(&e, "imu"));
    e.step().unwrap();
    assert_ne!(first, draw(&e, "lidar"), "another sim time");
    e.reset().unwrap();
    e.step_n(10).unwrap();
    assert_ne!(first, draw(&e, "lidar"), "another episode");
    // a fresh engine, same seed: episode 0 at the same time reproduces
    let mut f =
        Engine::new(load(OK).unwrap(), EngineOptions { profile: false, seed: Some(42) }).unwrap();
    f.step_n(10).unwrap();
    assert_eq!(first, draw(&f, "lidar"));
}

#[test]
fn unresolved_seed_is_an_error_at_the_first_draw() {
    let e = Engine::new(load(OK).unwrap(), EngineOptions { profile: false, seed: None }).unwrap();
    let err = e.ctx.rng_for("lidar").unwrap_err().to_string();
    assert!(
        err.contains("`lidar` draws noise but the run has no seed: pass --seed N or set sim.seed"),
        "{err}"
    );
}

#[test]
fn non_finite_state_ends_the_run_naming_time_and_field() {
    let mut e = Engine::new(load(OK).unwrap(), EngineOptions::default()).unwrap();
    e.step_n(10).unwrap();
    // a corrupted velocity (as a broken controller would write): the run ends, loudly
    e.ctx.data_mut().qvel_mut()[2] = f64::NAN;
    let err = e.step().unwrap_err().to_string();
    assert!(err.starts_with("non-finite state at t=0.02"), "{err}");
    assert!(err.contains("BADQVEL") || err.contains("qvel[2]"), "{err}");
}

#[test]
fn sim_block_reaches_the_compiled_model() {
    let yaml = "sim:\n  timestep: 0.001\n  integrator: rk4\n  noslip_iterations: 7\n  gravity: [0, 0, -1.62]\n  cone: elliptic\n  contact_override: {solref: [0.05]}\ncomponents: []\n";
    let e = Engine::new(load(yaml).unwrap(), EngineOptions::default()).unwrap();
    let o = &e.ctx.model().ffi().opt;
    assert_eq!(o.timestep, 0.001);
    assert_eq!(o.integrator, 1); // mjINT_RK4
    assert_eq!(o.noslip_iterations, 7);
    assert_eq!(o.gravity, [0.0, 0.0, -1.62]);
    assert_eq!(o.cone, 1);
    assert_eq!(o.o_solref, [0.05, 1.0], "padded from MuJoCo's current damping ratio");
    assert_eq!(o.enableflags & 1, 1, "override flag set");
    // empty_room: floor and four walls
    let m = e.ctx.model();
    assert!(m.name_to_id(mujoco_rs::prelude::MjtObjBase::mjOBJ_GEOM, "floor").is_some());
    assert!(m.name_to_id(mujoco_rs::prelude::MjtObjBase::mjOBJ_GEOM, "wall_north").is_some());
}
