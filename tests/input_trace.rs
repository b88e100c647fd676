//! The benchmark's same-physics replay (src/engine/input_trace.rs): what the plugins write into
//! mjData before each mj_step, recorded by the engine and replayed on a bare MjData of the same
//! compiled model, gives bitwise the same final state; a replay that diverges is refused, naming
//! the field and the step.

mod common;

use mujoco_rs::prelude::*;
use roqsim::engine::input_trace::{state_digest, InputTrace};
use roqsim::Engine;

/// worlds/moving_props.yaml: two moving boxes (mocap) and a stage carrying a parcel round a
/// circle (its joints set every step), so the plugins write mocap and the physics state itself.
fn moving_props() -> Engine {
    let yaml = std::fs::read_to_string(common::base().join("moving_props.yaml")).unwrap();
    common::engine(&yaml)
}

/// One TurtleBot 4 on the floor; the test pushes its base with a varying xfrc_applied between
/// steps (as a plugin's pre_step would) and teleports it once, 0.1 m up, at `teleport_at`.
fn pushed_robot(steps: usize, teleport_at: Option<usize>) -> (Engine, InputTrace) {
    let mut e = common::engine(
        "components:\n  - spawn_robot: {model: turtlebot4, pose: {position: {x: 0.0, y: 0.0}}}\n    name: robot\n",
    );
    let m = e.ctx.data().model();
    let free =
        (0..m.ffi().njnt as usize).find(|&j| m.jnt_type()[j] as i32 == 0).expect("free joint");
    let (adr, body) = (m.jnt_qposadr()[free] as usize, m.jnt_bodyid()[free] as usize);
    e.record_inputs();
    for k in 0..steps {
        let d = e.ctx.data_mut();
        if Some(k) == teleport_at {
            d.qpos_mut()[adr + 2] += 0.1;
        }
        d.xfrc_applied_mut()[body] = [5.0 * (k as f64 * 0.01).sin(), 2.0, 0.0, 0.0, 0.0, 0.3];
        e.step().unwrap();
    }
    let t = e.take_input_trace().unwrap();
    (e, t)
}
fn replay<'a>(model: &'a MjModel, t: &InputTrace) -> MjData<&'a MjModel> {
    let mut d = MjData::new(model);
    let mut user = t.set_initial(model.ffi(), unsafe { d.ffi_mut() });
    d.forward();
    for k in 0..t.len() {
        t.replay_step(k, model.ffi(), unsafe { d.ffi_mut() }, &mut user);
        d.step();
    }
    d
}

#[test]
fn replaying_the_recorded_inputs_steps_bitwise_the_same_physics() {
    let (e, t) = pushed_robot(600, Some(300));
    let engine_digest = state_digest(e.ctx.data().model().ffi(), e.ctx.data().ffi());
    assert_eq!(t.len(), 600);
    // The push: step 1 sets fy and tz (fx = 5 sin 0 = 0 stays as it was), every later step
    // changes fx only; the teleport is the one overwritten physics state.
    assert_eq!(t.steps[0].user_changes.len(), 2);
    assert!(t.steps[1..].iter().all(|s| s.user_changes.len() == 1));
    let overwritten: Vec<usize> =
        t.steps.iter().enumerate().filter(|(_, s)| s.physics.is_some()).map(|(k, _)| k).collect();
    assert_eq!(overwritten, vec![300]);

    // Through the file format and back.
    let mut bytes = Vec::new();
    t.write_to(&mut bytes).unwrap();
    let t2 = InputTrace::read_from(&mut bytes.as_slice()).unwrap();
    assert_eq!(
        (&t2.initial, &t2.initial_user, &t2.last, &t2.steps),
        (&t.initial, &t.initial_user, &t.last, &t.steps)
    );

    let model: MjModel = (*e.ctx.data().model_clone()).clone();
    let d = replay(&model, &t2);
    assert_eq!(t2.check_final(model.ffi(), d.ffi()), Ok(()));
    assert_eq!(state_digest(model.ffi(), d.ffi()), engine_digest);
    let mut d3 = MjData::new(&model);
    assert_eq!(t2.locate(model.ffi(), unsafe { d3.ffi_mut() }), None);

    // Without the teleport the replay leaves the recorded physics at that very step.
    let mut t3 = t2.clone();
    t3.steps[300].physics = None;
    let d = replay(&model, &t3);
    let fin = t3.check_final(model.ffi(), d.ffi()).unwrap_err();
    assert_eq!(fin.field, "qpos");
    let mut d4 = MjData::new(&model);
    let at = t3.locate(model.ffi(), unsafe { d4.ffi_mut() }).unwrap();
    assert_eq!(at.to_string(), "qpos diverged after step 301");

    // A dropped input (step 101's push) is found at its step too.
    let mut t4 = t2.clone();
    t4.steps[100].user_changes.clear();
    let mut d5 = MjData::new(&model);
    let at = t4.locate(model.ffi(), unsafe { d5.ffi_mut() }).unwrap();
    assert_eq!(at.to_string(), "qpos diverged after step 101");
}

#[test]
fn plugins_that_set_joints_every_step_are_replayed_bitwise() {
    let mut e = moving_props();
    e.record_inputs();
    e.step_n(500).unwrap();
    let t = e.take_input_trace().unwrap();
    // The movers write mocap; the stage's joints are set by its plugin before every step
    // (measured: every step but one, where the set value equalled what mj_step left).
    assert!(t.steps.iter().filter(|s| !s.user_changes.is_empty()).count() > 400);
    assert!(t.steps.iter().filter(|s| s.physics.is_some()).count() > 400);
    let model: MjModel = (*e.ctx.data().model_clone()).clone();
    let d = replay(&model, &t);
    assert_eq!(t.check_final(model.ffi(), d.ffi()), Ok(()));
    assert_eq!(
        state_digest(model.ffi(), d.ffi()),
        state_digest(e.ctx.data().model().ffi(), e.ctx.data().ffi())
    );
}
