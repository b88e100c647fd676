//! Manipulation (ROS-free), force: force_torque (tare, frames, noise), force_limit and
//! cartesian_admittance pressing a tool onto a block. Every assertion is on a measured value or a
//! message's text.

use crossbeam_channel::unbounded;
use mujoco_rs::prelude::MjtObjBase;
use roqsim::context::payload::{GoalStatus, Payload, ServiceCall};
use roqsim::handles::controllers::{Registry, State, STRICT};
use roqsim::plugins::sensors::force_torque::WrenchReader;
use roqsim::Engine;

mod common;
use common::arm::*;
use common::*;

// ------------------------------------------------------------------------------------------
// force/torque
// ------------------------------------------------------------------------------------------

#[test]
fn ft_reads_a_1kg_payload_as_9_81_n_along_world_z_after_tare() {
    let yaml = world_file("ur_pick.yaml").replace("mass: 0.5", "mass: 1.0");
    let mut e = engine(&yaml);
    e.step_n(50).unwrap();
    let reader = e.ctx.blackboard.get::<WrenchReader>("ft:ft").unwrap().clone();
    let before = reader.read(&e.ctx).unwrap();
    // Tare through the service endpoint (std_srvs/Trigger).
    let (tx, rx) = unbounded();
    let tare = endpoint(&e, "tare");
    e.ctx.interface.deliver(
        tare,
        Payload::Call(ServiceCall {
            request: Box::new(Payload::Empty),
            reply: tx,
            claim: Default::default(),
        }),
    );
    e.step().unwrap();
    let Ok(Payload::Ack { success: true, message }) = rx.try_recv() else {
        panic!("no tare reply")
    };
    let tared = reader.read(&e.ctx).unwrap();
    descend_and_close(&mut e, 0.0);
    lift(&mut e, 0.1);
    e.step_n(500).unwrap();
    let ep = endpoint(&e, "wrench");
    while e.ctx.interface.get(ep).latest().map(|(_, t)| t) != Some(e.ctx.tick) {
        e.step().unwrap();
    }
    let w = reader.read(&e.ctx).unwrap();
    let Some((Payload::Wrench(pw), _)) =
        e.ctx.interface.get(ep).latest().map(|(p, t)| (p.clone(), t))
    else {
        panic!()
    };
    println!(
        "F/T world frame: before tare Fz {:.3} N (the gripper), after tare {:.2e}; holding 1 kg: F = {:?} N ({message})",
        before.force[2], tared.force[2], w.force
    );
    assert!(
        (before.force[2] + 0.925 * 9.81).abs() < 0.1,
        "untared: the gripper's weight, inverted: {:?}",
        before.force
    );
    assert!(tared.force.iter().all(|f| f.abs() < 1e-6));
    assert!((w.force[2] + 9.81).abs() < 0.1, "1 kg payload: {:?}", w.force);
    assert!(w.force[0].abs() < 0.1 && w.force[1].abs() < 0.1);
    assert_eq!(w.frame_id, "world");
    assert_eq!(pw.force, w.force, "the endpoint and the reader agree");
    // A reset re-arms the tare: the reading is the gripper's weight again.
    e.reset().unwrap();
    e.step().unwrap();
    assert!((reader.read(&e.ctx).unwrap().force[2] + 0.925 * 9.81).abs() < 0.1);
    assert!(reader.tared_at().is_none());
}

#[test]
fn ft_frames_invert_tare_at_and_noise() {
    let yaml = |extra: &str| {
        format!(
            "sim: {{timestep: 0.002, controllers: {{initial_state: active}}}}
components:
  - spawn_arm: {{model: ur5e, prefix: ur_, pos: [0, 0, 0.5], pedestal: true, end_effector: {{model: parallel_gripper}}}}
    name: ur
    components:
      - force_torque: {{site: fts_site{extra}}}
        name: ft
"
        )
    };
    // Raw sensor frame, not inverted: what holds the tool up, along the site's z (pointing down).
    let mut e = engine(&yaml(", frame: sensor, invert: false"));
    e.step_n(20).unwrap();
    let r = e.ctx.blackboard.get::<WrenchReader>("ft:ft").unwrap().clone();
    let w = r.read(&e.ctx).unwrap();
    assert!((w.force[2] + 0.925 * 9.81).abs() < 0.1, "{:?}", w.force);
    assert_eq!(w.frame_id, "fts_site");
    // Base frame (the arm's base_link, upright): inverted reads the weight downwards.
    let mut e = engine(&yaml(", frame: base, tare_at_s: 0.1"));
    e.step_n(20).unwrap();
    let r = e.ctx.blackboard.get::<WrenchReader>("ft:ft").unwrap().clone();
    assert!((r.read(&e.ctx).unwrap().force[2] + 0.925 * 9.81).abs() < 0.1);
    e.step_n(100).unwrap();
    assert!(r.tared_at().is_some_and(|t| (t - 0.1).abs() < 0.011), "tared at {:?}", r.tared_at());
    assert!(r.read(&e.ctx).unwrap().force[2].abs() < 1e-6);
    // Noise: seeded, identical for two reads in one step, zero-mean with the stated sigma.
    let mut e = engine(&yaml(", frame: world, noise_force_stddev: 0.5, noise_torque_stddev: 0.05"));
    let r = e.ctx.blackboard.get::<WrenchReader>("ft:ft").unwrap().clone();
    let mut xs = Vec::new();
    for _ in 0..400 {
        e.step().unwrap();
        let a = r.read(&e.ctx).unwrap();
        assert_eq!(a, r.read(&e.ctx).unwrap());
        xs.push(a.force[0]);
    }
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64).sqrt();
    assert!(mean.abs() < 0.1 && (sd - 0.5).abs() < 0.08, "mean {mean}, sd {sd}");
}

// ------------------------------------------------------------------------------------------
// force_limit and cartesian_admittance: a tool pressed onto a block
// ------------------------------------------------------------------------------------------

/// The ur5e with the parallel gripper on the table of ur_pick, a fixed 0.1 × 0.1 × 0.3 m block
/// under the pinch (top at z = 1.05 m, 15 mm under the fingertips at rest) and a raw
/// (`invert: false`) world-frame F/T at the flange tared at 0.05 s: pressing down reads a
/// negative z force, the sign of the wrench the tool applies. `components` goes under the arm,
/// `controllers` is the world's `sim.controllers.initial_state`.
fn press_world(controllers: &str, components: &str) -> String {
    format!(
        "sim: {{timestep: 0.002, controllers: {{initial_state: {controllers}}}}}
components:
  - box: {{pose: {{position: {{x: 0.35, y: 0.0}}}}, size: [1.0, 1.2, 0.75]}}
    name: table
  - spawn_arm: {{model: ur5e, prefix: ur_, pos: [0.0, 0.0, 0.75], end_effector: {{model: parallel_gripper}}}}
    name: ur
    components:
      - force_torque: {{site: fts_site, frame: world, invert: false, tare_at_s: 0.05}}
        name: ft
{components}
  - box: {{pose: {{position: {{x: 0.4919, y: 0.1333, z: 0.90}}}}, size: [0.1, 0.1, 0.3]}}
    name: block
"
    )
}

fn wrench_reader(e: &Engine) -> WrenchReader {
    e.ctx.blackboard.get::<WrenchReader>("ft:ft").unwrap().clone()
}

fn norm3(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

fn arm_ctrl(e: &Engine) -> Vec<f64> {
    let m = e.ctx.model();
    JOINTS
        .iter()
        .map(|j| {
            let a = m.name_to_id(MjtObjBase::mjOBJ_ACTUATOR, &format!("ur_{}", &j[..j.len() - 6]));
            e.ctx.data().ctrl()[a.unwrap_or_else(|| panic!("no actuator for {j}"))]
        })
        .collect()
}

#[test]
fn force_limit_trips_when_the_pressed_force_first_exceeds_the_limit_and_releases_the_arm() {
    let mut e = engine(&press_world(
        "active",
        "      - force_limit: {ft: ft, max_force: 30.0, settle_s: 0.1}\n        name: limit",
    ));
    e.step_n(100).unwrap();
    let reader = wrench_reader(&e);
    // A straight descent of the pinch 40 mm over 4 s (10 mm/s): the fingertips meet the block
    // after 15 mm, then the servo presses harder every step.
    let goal = vertical_path(&e, -0.04, 4.0, 40);
    let ep = endpoint_topic(&e, "scaled_joint_trajectory_controller/follow_joint_trajectory");
    let g = send(&mut e, ep, Payload::Trajectory(goal));
    let limit = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::manipulation::force_limit::LimitReader>("force_limit:ur.limit")
        .unwrap()
        .clone();
    let mut prev = norm3(reader.read(&e.ctx).unwrap().force);
    let mut trip_step = None;
    for i in 0..2500 {
        e.step().unwrap();
        let f = norm3(reader.read(&e.ctx).unwrap().force);
        if limit.get().tripped {
            trip_step = Some(i);
            let r = limit.get();
            println!(
                "force_limit tripped at t = {:.3} s: |F| {:.3} N (previous step {prev:.3} N), |T| {:.3} N·m; {}",
                r.at_time, r.force, r.torque, r.reason
            );
            assert!(r.force > 30.0 && prev < 30.0, "trip {} after {prev}", r.force);
            assert_eq!(r.force, f, "the report names the magnitude measured at the trip");
            assert!((r.at_time - e.ctx.sim_time()).abs() < 1e-9);
            assert!(r.at_time > 0.2 + 1.5, "not before contact: {}", r.at_time);
            assert_has(&r.reason, &["protective_stop: force", "> 30 N"]);
            break;
        }
        prev = f;
    }
    assert!(trip_step.is_some(), "the limit never tripped (last |F| {prev})");
    let at = limit.get().at_time;
    // The run is asked to stop, naming the stop.
    assert_has(e.ctx.stop_requested().unwrap(), &["ur.limit", "protective_stop: force"]);
    // The trajectory controller was deactivated at the trip time; its goal aborts.
    let reg = Registry::get(&e.ctx, "ur").unwrap();
    assert_eq!(reg.state("scaled_joint_trajectory_controller"), Some(State::Inactive));
    let released: Vec<(String, f64)> = reg
        .log()
        .into_iter()
        .filter(|t| t.label == "deactivate")
        .map(|t| (t.controller, t.stamp))
        .collect();
    assert_eq!(
        released,
        vec![
            ("scaled_joint_trajectory_controller".to_string(), at),
            ("gripper_controller".to_string(), at)
        ],
        "every controller commanding the arm, at the trip time"
    );
    assert!(reg.is_active("joint_state_broadcaster"), "a broadcaster commands nothing");
    let (o, _) = wait(&mut e, &g, 5);
    assert_eq!(o.status, GoalStatus::Aborted);
    assert_has(&o.error_string, &["was deactivated mid-goal; holding the measured position"]);
    // From then on ctrl holds where the joints were; the trajectory would have gone 20 mm deeper.
    let held = arm_ctrl(&e);
    e.step_n(500).unwrap();
    assert_eq!(arm_ctrl(&e), held, "ctrl no longer follows the trajectory");
    assert!(limit.get().tripped, "latched");
    // A reset clears the report.
    e.reset().unwrap();
    e.step().unwrap();
    assert!(!limit.get().tripped && limit.get().at_time == -1.0);
}

#[test]
fn force_limit_refusals() {
    let w = |cfg: &str| press_world("active", &format!("      - force_limit: {cfg}"));
    assert_has(
        &refusal(&w("{max_force: 0.0}")),
        &["max_force and max_torque are both 0, so nothing is watched"],
    );
    assert_has(
        &refusal(&w("{max_force: -1.0}")),
        &["max_force", "must be a finite number >= 0 (N; 0 disables), got -1"],
    );
    assert_has(
        &refusal(&w("{ft: wrist}")),
        &["ft: no force_torque sensor labelled `wrist` is configured before this force_limit (blackboard `ft:wrist`)", "Sensors configured so far: [ft]"],
    );
    assert_has(
        &refusal("components:\n  - force_limit: {}\n"),
        &["`force_limit` belongs to a robot and must be nested under it"],
    );
}

fn target_pose(frame: &str, p: [f64; 3], xyzw: [f64; 4]) -> Payload {
    Payload::PoseTwist(roqsim::context::payload::PoseTwist {
        stamp: 0.0,
        frame_id: frame.into(),
        child_frame_id: String::new(),
        position: p,
        orientation: xyzw,
        linear: [0.0; 3],
        angular: [0.0; 3],
    })
}

/// The pinch's world orientation [x, y, z, w].
fn site_xyzw(e: &Engine, name: &str) -> [f64; 4] {
    let id = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_SITE, name).unwrap();
    let q = roqsim::math::quat_from_mat(&e.ctx.data().site_xmat()[id]);
    [q[1], q[2], q[3], q[0]]
}

#[test]
fn cartesian_motion_takes_over_from_the_trajectory_controller_and_tracks_a_target_frame() {
    let mut e = engine(&press_world(
        "active",
        "      - cartesian_admittance: {controller_type: cartesian_motion_controller, site: pinch, initial_state: inactive}",
    ));
    e.step_n(50).unwrap();
    let reg = Registry::get(&e.ctx, "ur").unwrap();
    let info = reg.list().into_iter().find(|c| c.name == "cartesian_motion_controller").unwrap();
    assert_eq!(info.type_name, "cartesian_motion_controller/CartesianMotionController");
    assert_eq!(info.update_rate, 100);
    assert_eq!(info.state, State::Inactive);
    assert_eq!(info.required_command_interfaces[0], "shoulder_pan_joint/position");
    // One command source per arm: activating it beside the active trajectory controller is
    // refused naming both; a hand-over names both sides.
    let err = reg.switch(&["cartesian_motion_controller".into()], &[], STRICT, 0.1).unwrap_err();
    assert_has(
        &err,
        &[
            "cannot activate `cartesian_motion_controller`",
            "is claimed by `scaled_joint_trajectory_controller`",
        ],
    );
    reg.switch(
        &["cartesian_motion_controller".into()],
        &["scaled_joint_trajectory_controller".into()],
        STRICT,
        0.1,
    )
    .unwrap();
    let p0 = site(&e, "ur_pinch");
    let q0 = site_xyzw(&e, "ur_pinch");
    let goal = [p0[0] + 0.05, p0[1] - 0.03, p0[2] + 0.04];
    let ep = endpoint_topic(&e, "cartesian_motion_controller/target_frame");
    e.ctx.interface.deliver(ep, target_pose("world", goal, q0));
    let mut settled = None;
    for i in 0..3000 {
        e.step().unwrap();
        let d = dist3(site(&e, "ur_pinch"), goal);
        if d < 1e-3 && settled.is_none() {
            settled = Some((i + 1) as f64 * 0.002);
        } else if d >= 1e-3 {
            settled = None;
        }
    }
    let p = site(&e, "ur_pinch");
    let q = site_xyzw(&e, "ur_pinch");
    let dq: f64 = (0..4).map(|i| (q[i] - q0[i]).abs()).sum();
    println!(
        "motion: target 50/-30/40 mm away reached within 1 mm after {settled:?} s; final error {:.3e} m, orientation drift {dq:.2e}",
        dist3(p, goal)
    );
    assert!(dist3(p, goal) < 1e-3, "steady-state error {}", dist3(p, goal));
    assert!(settled.is_some_and(|t| t < 5.0), "settled {settled:?}");
    assert!(dq < 1e-3, "orientation held: {q:?} vs {q0:?}");
    // current_pose: the pinch in the arm's base frame (base_link at z = 0.75, unrotated).
    let cp = endpoint_topic(&e, "cartesian_motion_controller/current_pose");
    let Some((Payload::PoseTwist(c), _)) =
        e.ctx.interface.get(cp).latest().map(|(p, t)| (p.clone(), t))
    else {
        panic!("no current_pose")
    };
    assert_eq!(c.frame_id, "base_link");
    assert!(dist3(c.position, [p[0], p[1], p[2] - 0.75]) < 2e-3, "{:?} vs {p:?}", c.position);
    // A target in the base frame means the same place.
    e.ctx.interface.deliver(ep, target_pose("base_link", [p0[0], p0[1], p0[2] - 0.75], q0));
    e.step_n(2500).unwrap();
    assert!(dist3(site(&e, "ur_pinch"), p0) < 1e-3, "{:?} vs {p0:?}", site(&e, "ur_pinch"));
    // Handing back: the trajectory controller holds where the arm is.
    reg.switch(
        &["scaled_joint_trajectory_controller".into()],
        &["cartesian_motion_controller".into()],
        STRICT,
        e.ctx.sim_time(),
    )
    .unwrap();
    e.step().unwrap();
    let held = arm_ctrl(&e);
    e.ctx.interface.deliver(ep, target_pose("world", goal, q0));
    e.step_n(250).unwrap();
    assert_eq!(arm_ctrl(&e), held, "an inactive Cartesian controller moves nothing");
}

/// Let the arm stand 0.2 s (the F/T tares at rest at 0.05 s), then activate `controller`.
fn activate_after_tare(e: &mut Engine, controller: &str) {
    secs(e, 0.2);
    assert!(wrench_reader(e).tared_at().is_some());
    let reg = Registry::get(&e.ctx, "ur").unwrap();
    reg.switch(&[controller.to_string()], &[], STRICT, e.ctx.sim_time()).unwrap();
}

/// Mean and extreme deviation from `want` of the F/T z force over `n` steps.
fn fz_band(e: &mut Engine, r: &WrenchReader, n: u64, want: f64) -> (f64, f64) {
    let (mut sum, mut worst) = (0.0, 0.0f64);
    for _ in 0..n {
        e.step().unwrap();
        let f = r.read(&e.ctx).unwrap().force[2];
        sum += f;
        worst = worst.max((f - want).abs());
    }
    (sum / n as f64, worst)
}

#[test]
fn cartesian_force_presses_the_tool_down_with_the_commanded_10_n() {
    let mut e = engine(&press_world(
        "inactive",
        "      - cartesian_admittance: {controller_type: cartesian_force_controller, site: pinch, ft: ft, target_wrench: [0, 0, -5, 0, 0, 0], initial_state: inactive}",
    ));
    let r = wrench_reader(&e);
    activate_after_tare(&mut e, "cartesian_force_controller");
    // The configured 5 N first, then the commanded 10 N (what the tool applies: -z presses down).
    secs(&mut e, 2.0);
    let (m5, w5) = fz_band(&mut e, &r, 500, -5.0);
    let ep = endpoint_topic(&e, "cartesian_force_controller/target_wrench");
    e.ctx.interface.deliver(
        ep,
        Payload::Wrench(roqsim::context::payload::Wrench {
            stamp: 0.0,
            frame_id: "world".into(),
            force: [0.0, 0.0, -10.0],
            torque: [0.0; 3],
        }),
    );
    let mut settle = None;
    for i in 0..1500 {
        e.step().unwrap();
        let f = r.read(&e.ctx).unwrap().force[2];
        if (f + 10.0).abs() < 0.5 {
            settle.get_or_insert((i + 1) as f64 * 0.002);
        } else {
            settle = None;
        }
    }
    let (m10, w10) = fz_band(&mut e, &r, 500, -10.0);
    println!("force: 5 N -> mean Fz {m5:.3} N (worst {w5:.3}); 10 N -> mean {m10:.3} N (worst deviation {w10:.3} N over 1 s), within 0.5 N from {settle:?} s after the command");
    assert!((m5 + 5.0).abs() < 0.5 && w5 < 0.5, "{m5} {w5}");
    assert!((m10 + 10.0).abs() < 0.1, "mean {m10}");
    assert!(w10 < 0.5, "every sample within 10 ± 0.5 N: worst {w10}");
    assert!(settle.is_some(), "never settled");
}

#[test]
fn cartesian_compliance_offsets_the_pose_by_force_over_stiffness() {
    // Free space (the block far below), z stiffness 500 N/m and a 10 N push down: the tool
    // settles 10 / 500 = 20 mm below its target, x and y on it.
    let mut e = engine(&press_world(
        "inactive",
        "      - cartesian_admittance: {site: pinch, stiffness: [500, 500, 500, 50, 50, 50], damping: [100, 100, 100, 20, 20, 20], initial_state: inactive}",
    ).replace("z: 0.90}}, size: [0.1, 0.1, 0.3]", "z: 0.80}}, size: [0.1, 0.1, 0.1]"));
    let reg = Registry::get(&e.ctx, "ur").unwrap();
    assert_eq!(
        reg.type_of("cartesian_compliance_controller").as_deref(),
        Some("cartesian_compliance_controller/CartesianComplianceController")
    );
    activate_after_tare(&mut e, "cartesian_compliance_controller");
    let p0 = site(&e, "ur_pinch");
    let h = e
        .ctx
        .blackboard
        .get::<roqsim::plugins::manipulation::cartesian_admittance::CartesianHandle>("cartesian:ur")
        .unwrap()
        .clone();
    secs(&mut e, 4.0);
    let p = site(&e, "ur_pinch");
    println!("compliance: offset from target {:?} mm", [0, 1, 2].map(|i| (p[i] - p0[i]) * 1e3));
    assert!((p[2] - p0[2] + 0.020).abs() < 5e-4, "z offset {}", p[2] - p0[2]);
    assert!((p[0] - p0[0]).abs() < 5e-4 && (p[1] - p0[1]).abs() < 5e-4, "{p:?} vs {p0:?}");
    // The in-process handle moves the target 30 mm along x; the offset stays.
    let q = roqsim::math::quat_from_mat(&{
        let id = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_SITE, "ur_pinch").unwrap();
        e.ctx.data().site_xmat()[id]
    });
    h.set_target_frame([p0[0] + 0.03, p0[1], p0[2]], q);
    secs(&mut e, 4.0);
    let p = site(&e, "ur_pinch");
    assert!((p[0] - p0[0] - 0.03).abs() < 5e-4 && (p[2] - p0[2] + 0.020).abs() < 5e-4, "{p:?}");
    assert!(h.current_pose().is_some());
}

#[test]
fn cartesian_admittance_refusals() {
    let w = |cfg: &str| press_world("inactive", &format!("      - cartesian_admittance: {cfg}"));
    // Two active command sources on one arm, named both.
    assert_has(
        &refusal(&press_world("active", "      - cartesian_admittance: {controller_type: cartesian_motion_controller}")),
        &[
            "`ur.cartesian_admittance` (controller `cartesian_motion_controller`) would command `shoulder_pan_joint/position`",
            "which `ur.arm_controller` (controller `scaled_joint_trajectory_controller`) already commands on robot `ur`: one command source per joint",
        ],
    );
    // No arm to drive.
    assert_has(
        &refusal(&bare_arm(", default_plugins: false").replace(
            "default_plugins: false}",
            "default_plugins: false}\n    components:\n      - cartesian_admittance: {controller_type: cartesian_motion_controller}",
        )),
        &["entity `ur` has no arm_controller configured before this cartesian_admittance (blackboard `arm_command:ur`), so there is no arm to drive"],
    );
    assert_has(
        &refusal("components:\n  - cartesian_admittance: {}\n"),
        &["`cartesian_admittance` belongs to a robot and must be nested under it"],
    );
    // Unknown site, unknown sensor.
    assert_has(
        &refusal(&w("{site: tcp}")),
        &[
            "site: entity `ur` has no site `tcp` (looked up as `ur_tcp`); its sites are [",
            "pinch",
            "tool_site",
        ],
    );
    assert_has(
        &refusal(&w("{ft: wrist}")),
        &["ft: no force_torque sensor labelled `wrist` is configured before this cartesian_compliance_controller (blackboard `ft:wrist`)"],
    );
    // Config shapes.
    assert_has(
        &refusal(&w("{controller_type: cartesian_force_controller, law: admittance}")),
        &["law", "is the older spelling of controller_type, which is set too (`cartesian_force_controller`)"],
    );
    assert_has(
        &refusal(&w(
            "{controller_type: cartesian_force_controller, stiffness: [100, 0, 0, 0, 0, 0]}",
        )),
        &["cartesian_force_controller has no stiffness"],
    );
    assert_has(
        &refusal(&w("{axes: [1, 1, 2, 1, 1, 1], mass: [1, 1, 0, 1, 1, 1], initial_state: on}")),
        &[
            "axes[2]",
            "must be 0 (held) or 1 (controlled), got 2",
            "mass[2]",
            "`on`: one of active, inactive, unloaded",
        ],
    );
    // `law:` still works and derives the type.
    let e = engine(&w("{law: position, site: pinch}"));
    let reg = Registry::get(&e.ctx, "ur").unwrap();
    assert_eq!(
        reg.type_of("cartesian_motion_controller").as_deref(),
        Some("cartesian_motion_controller/CartesianMotionController")
    );
}
