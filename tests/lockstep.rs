//! Lockstep (`sim.sync`), ROS-free: an in-process controller on another thread answers every
//! odometry publication through the command queue (as the ROS bridge delivers a message); two runs
//! give bitwise-identical trajectories however the threads are scheduled; a silent controller ends
//! the run with the gate diagnostic; unknown gate endpoints are refused.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use roqsim::context::payload::{Payload, Twist};
use roqsim::runner::{self, Limits};
use roqsim::Engine;

fn world(sync: &str) -> String {
    format!(
        "sim:
  timestep: 0.002
  seed: 4
  sync: {sync}
components:
  - spawn_robot: {{model: turtlebot4}}
    name: robot
"
    )
}

const SYNC: &str = "{enabled: true, timeout_s: 2.0, sensors: [odom], control: [cmd_vel]}";

fn id_of(e: &Engine, name: &str) -> usize {
    e.ctx.interface.all().iter().position(|ep| ep.name == name).unwrap()
}

/// One closed-loop run of `steps`: returns (qpos after every step the controller answered, replies).
fn closed_loop(steps: u64) -> (Vec<Vec<f64>>, u64) {
    let mut e = common::engine_at(&world(SYNC), common::root(), 4);
    let cmd = id_of(&e, "cmd_vel");
    let every = e.ctx.interface.get(id_of(&e, "odom")).snapped.unwrap().every_steps;
    let snap = e.ctx.enable_snapshot();
    let tx = e.ctx.command_sender();
    let done = Arc::new(AtomicBool::new(false));
    let stop = done.clone();
    let controller = std::thread::spawn(move || {
        let mut seen = Vec::new();
        // announce, then answer each odometry tick with a command computed from that state only
        tx.post(move |ctx| ctx.interface.deliver(cmd, Payload::Twist(Twist::default())));
        let mut last = 0;
        while !stop.load(Ordering::SeqCst) {
            let s = snap.load_full();
            if s.tick != last && s.tick % every == 0 {
                last = s.tick;
                let (y, qw, qz) = (s.qpos[1], s.qpos[3], s.qpos[6]);
                let yaw = 2.0 * qz.atan2(qw);
                let t = Twist {
                    linear: [0.25, 0.0, 0.0],
                    angular: [0.0, 0.0, 0.8 * (s.time * 2.0).sin() - 1.5 * y - yaw],
                };
                seen.push(s.qpos.clone());
                tx.post(move |ctx| ctx.interface.deliver(cmd, Payload::Twist(t)));
            }
            std::thread::yield_now();
        }
        seen
    });
    let summary = runner::run(
        &mut e,
        Limits { steps: Some(steps), seconds: None },
        Some(1.0),
        false,
        &|| false,
    )
    .unwrap();
    assert_eq!(summary.steps, steps);
    done.store(true, Ordering::SeqCst);
    let seen = controller.join().unwrap();
    let replies = e.ctx.interface.get(cmd).delivered();
    (seen, replies)
}

#[test]
fn closed_loop_is_bitwise_across_two_runs() {
    let (a, na) = closed_loop(1500);
    let (b, nb) = closed_loop(1500);
    // 3 s of odometry at 50 Hz: 150 publications, each answered, plus the announcement
    assert_eq!((na, nb), (151, 151));
    assert_eq!(a.len(), 150);
    assert_eq!(a, b, "the trajectories differ");
    let last = a.last().unwrap();
    assert!(last[0] > 0.5, "the robot drove: x = {}", last[0]);
    assert!(a.iter().any(|q| q[1].abs() > 0.01), "the controller steered");
}

#[test]
fn a_silent_controller_ends_the_run_with_the_gate_diagnostic() {
    let mut e = common::engine_at(
        &world("{enabled: true, timeout_s: 0.3, control: [cmd_vel]}"),
        common::root(),
        4,
    );
    let t0 = Instant::now();
    let err =
        runner::run(&mut e, Limits { steps: Some(100), seconds: None }, None, false, &|| false)
            .unwrap_err()
            .to_string();
    let waited = t0.elapsed().as_secs_f64();
    assert!(
        err.contains(
            "sim.sync: lockstep gate `cmd_vel` never fired: no message within timeout_s = 0.3 s before the first step \
             (tick 0, sim time 0.000 s); `cmd_vel` never received a message. Is the controller running and publishing?"
        ),
        "{err}"
    );
    assert!((0.3..2.0).contains(&waited), "{waited}");

    // a controller that answers once and then dies: the gate names the tick of its last message
    let mut e = common::engine_at(
        &world("{enabled: true, timeout_s: 0.3, sensors: [odom], control: [cmd_vel]}"),
        common::root(),
        4,
    );
    let cmd = id_of(&e, "cmd_vel");
    e.ctx.post(move |ctx| ctx.interface.deliver(cmd, Payload::Twist(Twist::default())));
    let err =
        runner::run(&mut e, Limits { steps: Some(100), seconds: None }, None, false, &|| false)
            .unwrap_err()
            .to_string();
    assert!(
        err.contains("never fired: no message within timeout_s = 0.3 s after the publication (tick 10, sim time 0.020 s); `cmd_vel` last received a message at tick 0."),
        "{err}"
    );
}

#[test]
fn unknown_gate_endpoints_are_refused() {
    let mut e = common::engine_at(&world("{enabled: true, control: [cmd_vl]}"), common::root(), 4);
    let err =
        runner::run(&mut e, Limits { steps: Some(10), seconds: None }, None, false, &|| false)
            .unwrap_err()
            .to_string();
    assert!(err.starts_with("sim.sync.control: no inbound endpoint `cmd_vl` in this world; inbound endpoints: cmd_vel"), "{err}");
    let mut e = common::engine_at(
        &world("{enabled: true, sensors: [odm], control: [cmd_vel]}"),
        common::root(),
        4,
    );
    let err =
        runner::run(&mut e, Limits { steps: Some(10), seconds: None }, None, false, &|| false)
            .unwrap_err()
            .to_string();
    assert!(
        err.starts_with(
            "sim.sync.sensors: no outbound endpoint `odm` in this world; outbound endpoints: "
        ),
        "{err}"
    );
}
