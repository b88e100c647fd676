//! Recording and replay of what reaches a run besides endpoint deliveries, ROS-free: the
//! controller manager's requests (load with a parameter file's value, configure, switch, unload,
//! hardware state, a controller parameter, a refused one) recorded and replayed bitwise, and a
//! replay that misses them (or the load's value) diverging; the recorded /clock at resets, a pause
//! and requested steps, as the bridge publishes it.

mod common;

use std::path::Path;

use common::arm::{endpoint_topic, qadr, JOINTS, REST};

use roqsim::context::payload::Payload;
use roqsim::context::ResetScope;
use roqsim::record::{self, RecordOptions, Recorder, RunInputs, TopicFilter};
use roqsim::{load_world, Engine, EngineOptions, LoadOptions};

/// `yaml` written to `dir` and loaded, its engine built (seed 7) with a recorder writing `out`
/// attached (state at 50 Hz, every topic), as `roqsim sim --record` does.
fn recorded_engine(dir: &Path, yaml: &str, out: &Path) -> Engine {
    let world = dir.join("run_world.yaml");
    std::fs::write(&world, yaml).unwrap();
    let mut rec = Recorder::create(RecordOptions {
        path: out.to_path_buf(),
        rate_hz: 50.0,
        topics: TopicFilter::All,
    })
    .unwrap();
    let w = load_world(&world, &LoadOptions::default()).unwrap();
    let inputs = RunInputs {
        world_ref: world.display().to_string(),
        world_path: world.clone(),
        world_yaml: yaml.to_string(),
        seed: 7,
        ..Default::default()
    };
    rec.prepare(&inputs, &w).unwrap();
    let mut e = Engine::new(w, EngineOptions { profile: false, seed: Some(7) }).unwrap();
    rec.attach(&mut e).unwrap();
    e
}

/// A UR5e-class arm whose controllers are left to the bringup (none loaded at start).
const ARM_WORLD: &str = "sim: {timestep: 0.002, seed: 7, controllers: {initial_state: unloaded}}
components:
  - spawn_arm: {model: ur5e, prefix: ur_, pos: [0.0, 0.0, 0.5], pedestal: true}
    name: ur
";

const JTC: &str = "scaled_joint_trajectory_controller";

/// A FollowJointTrajectory goal as the bridge delivers it; the outcome's receiver.
fn trajectory_goal(
    joints: &[&str],
    to: &[f64],
) -> (Payload, crossbeam_channel::Receiver<roqsim::context::payload::ActionOutcome>) {
    use roqsim::context::payload::{ActionCall, TrajectoryGoal, TrajectoryPoint};
    let (ftx, _) = crossbeam_channel::unbounded();
    let (otx, orx) = crossbeam_channel::unbounded();
    let goal = TrajectoryGoal {
        joint_names: joints.iter().map(|j| j.to_string()).collect(),
        points: vec![TrajectoryPoint {
            positions: to.to_vec(),
            time_from_start: 1.0,
            ..Default::default()
        }],
        ..Default::default()
    };
    let call = ActionCall {
        goal: Box::new(Payload::Trajectory(goal)),
        feedback: ftx,
        outcome: otx,
        cancel: Default::default(),
    };
    (Payload::Goal(call), orx)
}

#[test]
fn controller_manager_requests_are_recorded_and_replayed_bitwise() {
    use roqsim::context::payload::GoalStatus;
    use roqsim::handles::controller_params::ParamValue;
    use roqsim::handles::controllers::command::{self, ControllerCommand as C};
    use roqsim::record::replay::Event;

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("arm.mcap");
    let mut e = recorded_engine(dir.path(), ARM_WORLD, &out);
    let follow = endpoint_topic(&e, &format!("{JTC}/follow_joint_trajectory"));
    let pan = qadr(&e, "ur_shoulder_pan_joint").0;
    let (rest, joints) = (REST, JOINTS);
    let tx = e.ctx.command_sender();
    // As the controller manager posts them: each request one closure through the core.
    let request = |cmd: C| {
        assert!(tx.post(move |ctx| {
            let _ = command::apply(ctx, "ur", &cmd);
        }));
    };
    let mut outcomes = Vec::new();
    for step in 0..1000u64 {
        match step {
            100 => {
                // spawner --param-file: the file's value is resolved into the load
                request(C::Load {
                    name: JTC.into(),
                    overrides: vec![("allow_partial_joints_goal".into(), ParamValue::Bool(false))],
                });
                request(C::Configure { name: JTC.into() });
                request(C::Switch {
                    activate: vec![JTC.into()],
                    deactivate: vec![],
                    strictness: 2,
                    activate_asap: true,
                });
                request(C::Unload { name: "no_such_controller".into() }); // refused, replayed refused
            }
            110 | 120 => {
                // the partial goal is refused (the load's override); the full one runs
                let (goal, rx) = if step == 110 {
                    trajectory_goal(&joints[..1], &[0.4])
                } else {
                    let mut to = rest;
                    to[0] = 0.4;
                    trajectory_goal(&joints, &to)
                };
                outcomes.push(rx);
                assert!(tx.post(move |ctx| ctx.interface.deliver(follow, goal)));
            }
            400 => request(C::Switch {
                activate: vec![],
                deactivate: vec![JTC.into()],
                strictness: 2,
                activate_asap: true,
            }),
            450 => request(C::SetParameter {
                controller: JTC.into(),
                param: "constraints.goal_time".into(),
                value: ParamValue::Double(2.0),
            }),
            500 => request(C::Unload { name: JTC.into() }),
            600 => {
                request(C::SetHardwareState { component: "ur".into(), id: 2, label: "x".into() })
            }
            700 => request(C::SetHardwareState {
                component: "ur".into(),
                id: 0,
                label: "active".into(),
            }),
            _ => {}
        }
        e.step().unwrap();
    }
    // Paused after the last step, a request (refused: nothing is loaded) and then the end: it is
    // logged at the final step, and a replay applies it after its last step.
    e.ctx.control.state = roqsim::context::RunState::Paused;
    request(C::Configure { name: "late".into() });
    e.idle().unwrap();
    let reg = roqsim::handles::controllers::Registry::get(&e.ctx, "ur").unwrap();
    assert!(reg.list().is_empty(), "unloaded again");
    let results: Vec<_> = outcomes.iter().map(|rx| rx.try_recv().unwrap()).collect();
    assert!(e.shutdown().is_empty());
    assert_eq!(results[0].status, GoalStatus::Aborted);
    assert!(results[0].error_string.contains("allow_partial_joints_goal is false"), "{results:?}");
    assert_eq!(results[1].status, GoalStatus::Aborted);
    assert_eq!(
        results[1].error_string,
        format!("controller `{JTC}` was deactivated mid-goal; holding the measured position")
    );

    let rec = record::open(&out).unwrap();
    let controller: Vec<&C> = rec
        .events
        .iter()
        .filter_map(|(_, ev)| match ev {
            Event::Controller { entity, command } if entity == "ur" => Some(command),
            _ => None,
        })
        .collect();
    assert_eq!(controller.len(), 10, "{controller:?}");
    assert_eq!(controller[9], &C::Configure { name: "late".into() });
    assert_eq!(
        controller[0],
        &C::Load {
            name: JTC.into(),
            overrides: vec![("allow_partial_joints_goal".into(), ParamValue::Bool(false))]
        }
    );
    let at: Vec<u64> = rec
        .events
        .iter()
        .filter(|(_, ev)| matches!(ev, Event::Controller { .. }))
        .map(|(s, _)| *s)
        .collect();
    assert_eq!(at, [100, 100, 100, 100, 400, 450, 500, 600, 700, 1000]);
    // the goal moved the pan joint until the deactivation held it
    let q_pan = rec.states.last().unwrap().qpos[pan];
    println!("pan joint at the end: {q_pan} rad");
    assert!(q_pan > 0.1 && q_pan < 0.4, "pan at {q_pan}");
    assert!(rec.states[0].qpos[pan].abs() < 1e-6);

    let r = record::replay(&rec, true, None).unwrap();
    assert!(r.divergence.is_none(), "{r}");
    assert_eq!(
        r.to_string(),
        "replay ok: 1000 steps, 12 inbound events applied, 101 state samples bitwise identical"
    );

    // An edited log is refused, not replayed around: a request for a robot the world lacks, and
    // an event moved past the recording's end (every later one would never be applied).
    let mut stranger = rec.clone();
    for (_, ev) in &mut stranger.events {
        if let Event::Controller { entity, .. } = ev {
            *entity = "robot_x".into();
        }
    }
    assert_eq!(
        record::replay(&stranger, true, None).unwrap_err(),
        "a controller_manager request at step 100 for robot `robot_x`, which has no controllers \
         in the rebuilt world (edited log?)"
    );
    let mut late = rec.clone();
    let first = late.events.iter().position(|(_, ev)| matches!(ev, Event::Controller { .. }));
    let moved = late.events.remove(first.unwrap());
    late.events.push((1_000_000, moved.1));
    assert_eq!(
        record::replay(&late, false, None).unwrap_err(),
        "1 inbound event was not applied: the first is logged at step 1000000, past the \
         recording's 1000 steps (edited log?)"
    );

    // Without the manager's requests the goals find no active controller: the arm stays.
    let mut none = rec.clone();
    none.events.retain(|(_, ev)| !matches!(ev, Event::Controller { .. }));
    let r = record::replay(&none, true, None).unwrap();
    println!("without the requests: {r}");
    let (step, ..) = r.divergence.clone().expect("a divergence without the requests");
    assert!(step > 100 && step <= 130, "{r}");
    // A load without the file's value accepts the partial goal: the replay differs from step 110.
    let mut plain = rec.clone();
    for (_, ev) in &mut plain.events {
        if let Event::Controller { command: C::Load { overrides, .. }, .. } = ev {
            overrides.clear();
        }
    }
    let r = record::replay(&plain, true, None).unwrap();
    println!("without the load's overrides: {r}");
    let (step, ..) = r.divergence.clone().expect("a divergence without the load's overrides");
    assert!(step > 110 && step <= 120, "{r}");
}

/// The sim times (ns) of every /clock message of a recording, in file order.
fn recorded_clock(path: &Path) -> Vec<i64> {
    let buf = std::fs::read(path).unwrap();
    mcap::MessageStream::new(&buf)
        .unwrap()
        .map(|m| m.unwrap())
        .filter(|m| m.channel.topic == "/clock")
        .map(|m| {
            // CDR: 4-byte encapsulation header, then builtin_interfaces/Time (int32 sec, uint32 nanosec)
            let d = &m.data[4..12];
            let sec = i32::from_le_bytes(d[..4].try_into().unwrap()) as i64;
            let nsec = u32::from_le_bytes(d[4..].try_into().unwrap()) as i64;
            sec * 1_000_000_000 + nsec
        })
        .collect()
}

#[test]
fn the_recorded_clock_follows_the_bridge_at_resets_pauses_and_requested_steps() {
    use roqsim::context::RunState;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("clock.mcap");
    let mut e = recorded_engine(dir.path(), ARM_WORLD, &out);
    for step in 0..1000u64 {
        match step {
            // a full reset: t = 0 again
            302 => e.reset_scoped(ResetScope::ALL).unwrap(),
            // a state-only reset: the time stands (0.3 s into the second episode)
            452 => e.reset_scoped(ResetScope { time: false, state: true, spawned: false }).unwrap(),
            // a time-only reset runs no on_reset: the bridge sends no /clock for it
            603 => e.reset_scoped(ResetScope { time: true, state: false, spawned: false }).unwrap(),
            // paused: three idles, then three steps a StepSimulation asked for
            801 => {
                e.ctx.control.state = RunState::Paused;
                for _ in 0..3 {
                    e.idle().unwrap();
                }
                e.ctx.control.pending_steps = 3;
            }
            _ => {}
        }
        e.step().unwrap();
        if e.ctx.control.pending_steps > 0 {
            // as the runner counts a requested step off, after the step's hooks
            e.ctx.control.pending_steps -= 1;
            if e.ctx.control.pending_steps == 0 {
                e.ctx.control.state = RunState::Playing;
            }
        }
    }
    assert!(e.shutdown().is_empty());
    let got = recorded_clock(&out);
    // The bridge's rules, written out: every 5th tick at 500 Hz; t = 0 at the start's reset; the
    // time a state reset leaves; one at the pause; the last requested step; the final time.
    let ms = |t: u64| (t * 2_000_000) as i64; // ticks to ns at 500 Hz
    let mut want = vec![0];
    want.extend((1..=302).filter(|k| k % 5 == 0).map(ms)); // episode 0: ticks 1..=302
    want.push(0); // the full reset at step 302
    want.extend((1..=150).filter(|k| k % 5 == 0).map(ms)); // ticks 1..=150 of episode 1
    want.push(ms(150)); // the state-only reset: the time stands at 0.3 s
    want.extend((151..=301).filter(|k| k % 5 == 0).map(ms)); // to step 603 (tick 301)
                                                             // time-only reset at step 603: ticks restart at 0 with no /clock; steps 604..=801 are ticks 1..=198
    want.extend((1..=198).filter(|k| k % 5 == 0).map(ms));
    want.push(ms(198)); // paused at tick 198: one /clock for the pause, not one per idle
                        // three requested steps, ticks 199..=201: the grid's 200, and the last one off the grid
    want.extend([ms(200), ms(201)]);
    want.extend((202..=397).filter(|k| k % 5 == 0).map(ms)); // to step 1000 (tick 397)
    want.push(ms(397)); // the final time, off the grid
    assert_eq!(got, want);
}
