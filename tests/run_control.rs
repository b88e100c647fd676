//! Run control (ROS-free): paused stepping advances exactly N steps, pause holds sim time, a
//! state-only reset keeps sim time monotonic while restoring the state, quit ends the run.

mod common;

use std::cell::Cell;

use common::engine;
use roqsim::context::{ResetScope, RunState};
use roqsim::runner::{run, Limits};

const WORLD: &str = "sim: {timestep: 0.002}\ncomponents:\n  - dummy: {size: 0.1}\n    name: a\n";

#[test]
fn paused_run_takes_exactly_the_requested_steps_then_holds() {
    let mut e = engine(WORLD);
    e.ctx.control.state = RunState::Paused;
    e.ctx.control.pending_steps = 10;
    let calls = Cell::new(0);
    let s = run(&mut e, Limits::default(), Some(1.0), false, &|| {
        calls.set(calls.get() + 1);
        calls.get() > 30
    })
    .unwrap();
    assert_eq!(s.steps, 10);
    assert_eq!(e.ctx.tick, 10);
    assert!((e.sim_time() - 10.0 * 0.002).abs() < 1e-12);
    assert_eq!(e.ctx.control.pending_steps, 0);
}

#[test]
fn state_only_reset_keeps_time_monotonic_and_restores_state() {
    let mut e = engine(WORLD);
    let q0: Vec<u64> = e.ctx.data().qpos().iter().map(|x| x.to_bits()).collect();
    e.step_n(250).unwrap();
    let t = e.sim_time();
    e.reset_scoped(ResetScope { time: false, state: true, spawned: true }).unwrap();
    assert_eq!(e.sim_time(), t, "sim time did not jump back");
    assert_eq!(e.ctx.episode, 0);
    let q: Vec<u64> = e.ctx.data().qpos().iter().map(|x| x.to_bits()).collect();
    assert_eq!(q, q0, "state is the initial one, bitwise");
    e.step().unwrap();
    assert!(e.sim_time() > t);
    // a full reset starts a new episode at t = 0
    e.reset_scoped(ResetScope::ALL).unwrap();
    assert_eq!((e.sim_time(), e.ctx.episode), (0.0, 1));
}

#[test]
fn reset_request_and_quit_are_honoured_by_the_runner() {
    let mut e = engine(WORLD);
    e.step_n(100).unwrap();
    e.ctx.control.reset = Some(ResetScope::ALL);
    // quit from a command posted on the physics thread after 5 steps
    let tx = e.ctx.command_sender();
    let n = Cell::new(0);
    let s = run(&mut e, Limits { steps: Some(1000), seconds: None }, None, false, &|| {
        n.set(n.get() + 1);
        if n.get() == 5 {
            tx.post(|ctx| ctx.control.state = RunState::Quitting);
        }
        false
    })
    .unwrap();
    assert_eq!(s.reason, "quit requested");
    assert_eq!(
        s.steps, 5,
        "the reset happened first, then 5 steps, then the quit command ran at the next drain"
    );
    assert!((e.sim_time() - 5.0 * 0.002).abs() < 1e-12, "t = {}", e.sim_time());
}
