//! Sensor tests (issue 3): the 2D lidar and the IMU, asserting measured values and every refusal.
//!
//! Most worlds are small MJCF files written into a temp dir and selected with `sim.world:`, with
//! the sensors at the top of the document (unprefixed names, `world` as TF parent), so the tests
//! depend on nothing but the sensors themselves.

mod common;

use std::f64::consts::PI;

use common::{assert_refused_at, engine_of, root, scene_world, setup_error_of, SceneWorld};
use mujoco_rs::prelude::*;
use roqsim::context::payload::{Imu, LaserScan, Transform};
use roqsim::context::Payload;
use roqsim::handles::sensor_fault::FaultSwitch;
use roqsim::plugins::sensors::imu::ImuReader;
use roqsim::plugins::sensors::lidar::LidarReader;
use roqsim::{load_world_str, Engine, EngineOptions, LoadOptions};

/// Scan plane at z = 0.2. A housing cylinder (r 0.04) around the `scan` site; a wall whose near
/// face is at x = 2.000; a small box whose face is 0.10 m away at +y (too close); a box in the
/// absent group 5 at -x; a group-3 box whose face is 1.45 m away at -y; far away (y = 100) a
/// closed 6 m × 6 m room (walls 3.0 to 4.24 m away) with its own site `room` at its centre; IMU bodies.
const SCENE: &str = r#"<mujoco model="sensor_scene">
  <option timestep="0.002"/>
  <worldbody>
    <light pos="0 0 5" dir="0 0 -1"/>
    <geom name="floor" type="plane" size="200 200 0.1"/>
    <body name="sensor_base" pos="0 0 0.2">
      <geom name="housing" type="cylinder" size="0.04 0.02"/>
      <site name="scan" pos="0 0 0"/>
    </body>
    <geom name="wall" type="box" pos="2.05 0 0.5" size="0.05 0.3 0.5"/>
    <geom name="near_box" type="box" pos="0 0.12 0.2" size="0.02 0.02 0.1"/>
    <geom name="ghost" type="box" pos="-1 0 0.2" size="0.05 0.3 0.3" group="5"/>
    <geom name="visible3" type="box" pos="0 -1.5 0.2" size="0.3 0.05 0.3" group="3"/>

    <site name="room" pos="0 100 0.2"/>
    <geom name="room_n" type="box" pos="0 103.05 0.5" size="3.1 0.05 0.5"/>
    <geom name="room_s" type="box" pos="0 96.95 0.5" size="3.1 0.05 0.5"/>
    <geom name="room_e" type="box" pos="3.05 100 0.5" size="0.05 3.1 0.5"/>
    <geom name="room_w" type="box" pos="-3.05 100 0.5" size="0.05 3.1 0.5"/>

    <site name="tilted" pos="50 0 1.0" euler="0 0 90"/>
    <geom name="tilted_target" type="box" pos="50 3 1.0" size="0.3 0.05 0.3"/>

    <body name="fixed_mount" pos="-50 0 1">
      <geom type="box" size="0.05 0.05 0.05"/>
    </body>
    <body name="spinner" pos="-50 10 1">
      <joint name="spin" type="hinge" axis="0 0 1"/>
      <geom type="box" size="0.3 0.05 0.05" mass="1"/>
    </body>
    <body name="crate" pos="-50 -10 0.11">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.1" mass="2"/>
    </body>
  </worldbody>
</mujoco>
"#;

fn lidar(e: &Engine, address: &str) -> LidarReader {
    e.ctx.blackboard.get::<LidarReader>(&format!("lidar:{address}")).unwrap().clone()
}

fn scan(e: &Engine, address: &str) -> LaserScan {
    lidar(e, address).latest().expect("a scan")
}

/// The world `components:` over [`SCENE`], as loaded.
fn world(components: &str) -> SceneWorld {
    scene_world(SCENE, components)
}

/// An engine of [`world`] with `seed`; panics on a refusal or setup error.
fn engine(components: &str, seed: u64) -> Engine {
    engine_of(world(components), Some(seed)).unwrap_or_else(|e| panic!("{e}"))
}

#[track_caller]
fn refused(components: &str, path: &str, needle: &str) {
    assert_refused_at(world(components).1, path, needle);
}

/// Index of the ray at bearing `a` (rad) in a scan.
fn idx(s: &LaserScan, a: f64) -> usize {
    ((a - s.angle_min as f64) / s.angle_increment as f64).round() as usize
}

const BASE: &str = "site: scan, exclude_body: sensor_base";

// ------------------------------------------------------------------------------ lidar geometry

#[test]
fn lidar_wall_at_two_metres_reads_two_exactly() {
    let mut e = engine(&format!("  - lidar: {{{BASE}}}\n"), 1);
    e.step_n(50).unwrap();
    let s = scan(&e, "lidar");
    assert_eq!(s.ranges.len(), 360);
    assert!((s.ranges[0] as f64 - 2.0).abs() < 1e-4, "bearing 0 reads {}", s.ranges[0]);
    // a ray at 5° hits the same wall at 2 / cos 5°
    let r5 = s.ranges[5] as f64;
    assert!((r5 - 2.0 / (5f64.to_radians()).cos()).abs() < 1e-4, "{r5}");
    assert_eq!(s.frame_id, "scan");
    assert!((s.stamp - 0.1).abs() < 1e-12, "stamp {}", s.stamp);
    assert_eq!(s.range_min, 0.164f32);
    assert_eq!(s.range_max, 20.0f32);
    assert!((s.scan_time - 0.1).abs() < 1e-6);
}

#[test]
fn lidar_resolution_quantises_after_flooring() {
    let mut e = engine(&format!("  - lidar: {{{BASE}, range_resolution: 0.01}}\n"), 1);
    e.step_n(50).unwrap();
    let s = scan(&e, "lidar");
    let r0 = s.ranges[0] as f64;
    assert!((r0 - 2.0).abs() <= 0.01, "{r0}");
    // every finite range is a multiple of 0.01 m
    for &r in s.ranges.iter().filter(|r| r.is_finite()) {
        let k = r as f64 / 0.01;
        assert!((k - k.round()).abs() < 1e-3, "{r} is not on the 0.01 m grid");
    }
    // 5°: true 2.00762 → 2.01
    assert!((s.ranges[5] as f64 - 2.01).abs() < 1e-6, "{}", s.ranges[5]);
}

#[test]
fn lidar_no_return_too_close_and_their_overrides() {
    let mut e = engine(
        &format!(
            "  - lidar: {{{BASE}}}\n  - lidar: {{{BASE}, too_close: raw, no_return: nan}}\n    name: raw\n  - lidar: {{{BASE}, too_close: 0.004, no_return: 65.533}}\n    name: codes\n  - lidar: {{{BASE}, too_close: +inf}}\n    name: pinf\n"
        ),
        1,
    );
    e.step_n(50).unwrap();
    let s = scan(&e, "lidar");
    let (up, diag) = (idx(&s, PI / 2.0), idx(&s, PI / 4.0));
    assert_eq!(s.ranges[up], f32::NEG_INFINITY, "too close → -inf (REP 117)");
    assert_eq!(s.ranges[diag], f32::INFINITY, "nothing there → +inf (REP 117)");
    let raw = scan(&e, "raw");
    assert!(
        (raw.ranges[up] as f64 - 0.10).abs() < 1e-4,
        "raw too-close publishes the distance: {}",
        raw.ranges[up]
    );
    assert!(raw.ranges[diag].is_nan());
    let codes = scan(&e, "codes");
    assert_eq!(codes.ranges[up], 0.004f32);
    assert_eq!(codes.ranges[diag], 65.533f32);
    assert_eq!(scan(&e, "pinf").ranges[up], f32::INFINITY);
}

#[test]
fn lidar_detection_limits_are_separate_from_header() {
    // header says 0.01..29 (the S300 driver's); physics measures 0.05..1.8: the 2 m wall is no return
    let mut e = engine(&format!("  - lidar: {{{BASE}, range_min: 0.01, max_range: 29.0, detection_min: 0.05, detection_max: 1.8}}\n"), 1);
    e.step_n(50).unwrap();
    let s = scan(&e, "lidar");
    assert_eq!((s.range_min, s.range_max), (0.01f32, 29.0f32));
    assert_eq!(s.ranges[0], f32::INFINITY);
    // the near box at 0.10 is beyond detection_min 0.05: measured, although < header range_min
    assert!((s.ranges[idx(&s, PI / 2.0)] as f64 - 0.10).abs() < 1e-4);
    // group-3 box at -y, face at 1.45 m: measured
    assert!((s.ranges[idx(&s, 1.5 * PI)] as f64 - 1.45).abs() < 1e-4);
}

#[test]
fn lidar_exclude_body_hides_the_housing() {
    // two lidars on one site whose mount transforms name different parents (world, the
    // housing): only one announces the frame, or TF would jump between the two
    let mut e = engine("  - lidar: {site: scan, too_close: raw, emit_static_tf: false}\n  - lidar: {site: scan, exclude_body: sensor_base, too_close: raw}\n    name: excl\n", 1);
    e.step_n(50).unwrap();
    // without exclusion every ray starts inside the housing and reads its wall (r = 0.04)
    let s = scan(&e, "lidar");
    let max = s.ranges.iter().cloned().fold(f32::MIN, f32::max);
    assert!((max as f64 - 0.04).abs() < 1e-4, "all rays hit the housing: max {max}");
    let x = scan(&e, "excl");
    let min = x.ranges.iter().cloned().fold(f32::MAX, f32::min);
    assert!(min as f64 > 0.09, "no ray hits the housing: min {min}");
    assert!((x.ranges[0] as f64 - 2.0).abs() < 1e-4);
}

#[test]
fn lidar_absent_group_is_invisible() {
    let mut e = engine(&format!("  - lidar: {{{BASE}}}\n"), 1);
    e.step_n(50).unwrap();
    let s = scan(&e, "lidar");
    // the group-5 box at -x (face 0.95 m away) is not a return; the group-3 box is
    assert_eq!(s.ranges[idx(&s, PI)], f32::INFINITY);
    assert!((s.ranges[idx(&s, 1.5 * PI)] as f64 - 1.45).abs() < 1e-4);
}

#[test]
fn lidar_angle_layout_is_inclusive() {
    let mut e = engine(
        &format!("  - lidar: {{{BASE}}}\n  - lidar: {{{BASE}, rays: 361, angle_min: -3.141592653589793, angle_max: 3.141592653589793}}\n    name: sym\n"),
        1,
    );
    e.step_n(50).unwrap();
    let s = scan(&e, "lidar");
    assert_eq!(s.angle_min, 0.0);
    assert!((s.angle_max as f64 - 2.0 * PI * 359.0 / 360.0).abs() < 1e-6, "{}", s.angle_max);
    assert!((s.angle_increment as f64 - 2.0 * PI / 360.0).abs() < 1e-7);
    let y = scan(&e, "sym");
    assert_eq!(y.ranges.len(), 361);
    assert!((y.angle_min as f64 + PI).abs() < 1e-6 && (y.angle_max as f64 - PI).abs() < 1e-6);
    assert!((y.angle_increment as f64 - 2.0 * PI / 360.0).abs() < 1e-7);
    // first and last share a bearing (-π and π): both see the -x side (ghost invisible → +inf);
    // the middle ray (index 180) is bearing 0 → the wall
    assert_eq!(y.ranges[0], y.ranges[360]);
    assert!((y.ranges[180] as f64 - 2.0).abs() < 1e-4);
    // the -y box at bearing -π/2 is index 90
    assert!((y.ranges[90] as f64 - 1.45).abs() < 1e-4);
}

#[test]
fn lidar_scan_plane_follows_the_site_orientation() {
    // `tilted` is yawed +90°: its bearing 0 points along world +y, at a box 2.95 m away
    let mut e = engine("  - lidar: {site: tilted, rays: 4}\n", 1);
    e.step_n(50).unwrap();
    let s = scan(&e, "lidar");
    assert!((s.ranges[0] as f64 - 2.95).abs() < 1e-4, "{:?}", s.ranges);
    assert_eq!(s.ranges[1], f32::INFINITY);
}

#[test]
fn lidar_rate_snaps_to_the_grid() {
    let mut e = engine(
        &format!("  - lidar: {{{BASE}}}\n  - lidar: {{{BASE}, rate_hz: 7.0}}\n    name: odd\n"),
        1,
    );
    let id = e.ctx.interface.all().iter().position(|ep| ep.name == "scan").unwrap();
    let snapped = e.ctx.interface.get(id).snapped.unwrap();
    assert_eq!(snapped.every_steps, 50);
    assert_eq!(snapped.realised_hz, 10.0);
    let mut ticks = Vec::new();
    for _ in 0..200 {
        e.step().unwrap();
        if let Some((_, t)) = e.ctx.interface.get(id).latest() {
            if ticks.last() != Some(&t) {
                ticks.push(t);
            }
        }
    }
    assert_eq!(ticks, vec![50, 100, 150, 200]);
    // 7 Hz at 500 Hz physics → every 71 steps (7.04 Hz), announced by the rate snapper
    let odd = e.ctx.interface.all().iter().rposition(|ep| ep.name == "scan").unwrap();
    assert_eq!(e.ctx.interface.get(odd).snapped.unwrap().every_steps, 71);
    assert!((scan(&e, "odd").scan_time as f64 - 0.142).abs() < 1e-6);
}

#[test]
fn lidar_endpoint_hints_and_static_tf() {
    let mut e = engine(&format!("  - lidar: {{{BASE}, frame_id: laser, topics: {{scan: /front/scan}}, namespace: bot}}\n"), 1);
    let eps = e.ctx.interface.all();
    let scan_ep = eps.iter().find(|ep| ep.name == "scan").unwrap();
    assert_eq!(scan_ep.get_hint("ros2", "type"), Some("sensor_msgs/msg/LaserScan"));
    assert_eq!(scan_ep.get_hint("ros2", "qos"), Some("sensor_data"));
    assert_eq!(scan_ep.get_hint("ros2", "topic"), Some("/front/scan"));
    assert_eq!(scan_ep.namespace, "bot");
    assert_eq!(scan_ep.frame_prefix, "bot/");
    let tf_ep = eps.iter().find(|ep| ep.name == "tf_static").unwrap();
    assert_eq!(tf_ep.get_hint("ros2", "tf"), Some("static"));
    // top level, nothing carries it: the parent is the resolved exclude_body (the housing)
    let (p, _) = tf_ep.latest().expect("static TF published at reset");
    let Payload::Transforms(t) = p else { panic!("{p:?}") };
    assert_eq!(t.len(), 1);
    assert_eq!((t[0].parent.as_str(), t[0].child.as_str()), ("sensor_base", "laser"));
    assert!(close3(t[0].translation, [0.0, 0.0, 0.0]), "{:?}", t[0].translation);
    e.step_n(50).unwrap();
    assert_eq!(scan(&e, "lidar").frame_id, "laser");
    // no exclude_body either: world -> site name, at the site's world pose
    let e = engine("  - lidar: {site: tilted}\n", 1);
    let tf_ep = e.ctx.interface.all().iter().find(|ep| ep.name == "tf_static").unwrap();
    let Some((Payload::Transforms(t), _)) = tf_ep.latest() else { panic!() };
    assert_eq!((t[0].parent.as_str(), t[0].child.as_str()), ("world", "tilted"));
    assert!(close3(t[0].translation, [50.0, 0.0, 1.0]), "{:?}", t[0].translation);
    let s = std::f64::consts::FRAC_1_SQRT_2;
    assert!(close4(t[0].rotation, [0.0, 0.0, s, s]), "{:?}", t[0].rotation);
}

#[test]
fn lidar_tf_parent_is_measured_from_the_model() {
    let e = engine(&format!("  - lidar: {{{BASE}, tf_parent: sensor_base}}\n  - lidar: {{site: tilted, emit_static_tf: false}}\n    name: quiet\n"), 1);
    let tfs: Vec<Transform> = e
        .ctx
        .interface
        .all()
        .iter()
        .filter(|ep| ep.name == "tf_static")
        .filter_map(|ep| match ep.latest() {
            Some((Payload::Transforms(t), _)) => Some(t[0].clone()),
            _ => None,
        })
        .collect();
    assert_eq!(tfs.len(), 1, "emit_static_tf: false adds no TF endpoint");
    assert_eq!(tfs[0].parent, "sensor_base");
    assert!(close3(tfs[0].translation, [0.0; 3]));
    assert!(close4(tfs[0].rotation, [0.0, 0.0, 0.0, 1.0]));
}

// ------------------------------------------------------------------------------ lidar noise

/// Two lidars on the `room` site (every ray hits a wall): a noiseless reference and a noisy one.
fn noise_world(noisy: &str, seed: u64) -> Engine {
    engine(&format!("  - lidar: {{site: room, rate_hz: 500}}\n    name: truth\n  - lidar: {{site: room, rate_hz: 500, {noisy}}}\n    name: noisy\n"), seed)
}

fn noise_samples(e: &mut Engine, steps: u64) -> Vec<f64> {
    let mut out = Vec::new();
    for _ in 0..steps {
        e.step().unwrap();
        let (t, n) = (scan(e, "truth"), scan(e, "noisy"));
        out.extend(t.ranges.iter().zip(&n.ranges).map(|(a, b)| *b as f64 - *a as f64));
    }
    out
}

fn std_of(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    (m, (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / n).sqrt())
}

#[test]
fn lidar_range_noise_has_the_configured_sigma_and_is_seeded() {
    let mut e = noise_world("range_stddev: 0.02", 7);
    let d = noise_samples(&mut e, 20);
    assert_eq!(d.len(), 7200);
    let (m, s) = std_of(&d);
    assert!(m.abs() < 0.001, "mean {m}");
    assert!((s - 0.02).abs() < 0.001, "std {s}");
    // same seed → identical; other seed → different; next episode → different
    let mut same = noise_world("range_stddev: 0.02", 7);
    assert_eq!(noise_samples(&mut same, 20), d);
    let mut other = noise_world("range_stddev: 0.02", 8);
    assert_ne!(noise_samples(&mut other, 20), d);
    e.reset().unwrap();
    assert_ne!(noise_samples(&mut e, 20), d);
}

#[test]
fn lidar_relative_sigma_scales_with_distance() {
    // every wall of the room is 3.0..4.24 m away: beyond `from` (0.5) sigma = 3.5 % of the distance
    let mut e = noise_world(
        "range_stddev: 0.01, range_stddev_relative: 0.035, range_stddev_relative_from: 0.5",
        3,
    );
    let mut z = Vec::new();
    for _ in 0..20 {
        e.step().unwrap();
        let (t, n) = (scan(&e, "truth"), scan(&e, "noisy"));
        z.extend(
            t.ranges
                .iter()
                .zip(&n.ranges)
                .map(|(a, b)| (*b as f64 - *a as f64) / (0.035 * *a as f64)),
        );
    }
    let (_, s) = std_of(&z);
    assert!((s - 1.0).abs() < 0.05, "normalised std {s}");
}

#[test]
fn lidar_dropout_rate_over_1000_scans() {
    let mut e = noise_world("dropout_percent: 10", 11);
    let (mut dropped, mut total) = (0usize, 0usize);
    for _ in 0..1000 {
        e.step().unwrap();
        let (t, n) = (scan(&e, "truth"), scan(&e, "noisy"));
        for (a, b) in t.ranges.iter().zip(&n.ranges) {
            assert!(a.is_finite());
            total += 1;
            if *b == f32::INFINITY {
                dropped += 1;
            } else {
                assert_eq!(a, b, "a kept ray is unchanged");
            }
        }
    }
    let rate = dropped as f64 / total as f64;
    assert_eq!(total, 360_000);
    assert!((rate - 0.10).abs() < 0.01, "dropout {rate}");
}

#[test]
fn lidar_noise_needs_a_seed_and_noiseless_does_not() {
    let w = world("  - lidar: {site: room, range_stddev: 0.01}\n");
    let mut e = engine_of(w, None).unwrap();
    let err = e.step_n(50).unwrap_err().to_string();
    assert!(err.contains("lidar:lidar") && err.contains("no seed"), "{err}");
    let w = world("  - lidar: {site: room}\n");
    let mut e = engine_of(w, None).unwrap();
    e.step_n(50).unwrap();
}

// ------------------------------------------------------------------------------ fault seam

#[test]
fn lidar_fault_block_is_parsed_and_switchable() {
    let mut e = engine(
        &format!("  - lidar: {{{BASE}, rate_hz: 500, fault: {{dropout_percent: 100}}}}\n"),
        1,
    );
    e.step().unwrap();
    assert!((scan(&e, "lidar").ranges[0] as f64 - 2.0).abs() < 1e-4, "nominal until switched");
    let sw = e.ctx.blackboard.get::<FaultSwitch>("sensor_fault:lidar").unwrap().clone();
    sw.set(true);
    e.step().unwrap();
    assert!(
        scan(&e, "lidar").ranges.iter().all(|r| *r == f32::INFINITY),
        "100 % dropout while faulted"
    );
    e.reset().unwrap();
    assert!(!sw.is_on(), "a fault does not survive reset");
}

#[test]
fn refuse_lidar_fault_with_layout_keys() {
    refused(
        &format!("  - lidar: {{{BASE}, fault: {{rays: 720}}}}\n"),
        "components.lidar.fault.rays",
        "changes the message layout (it sets a LaserScan's length)",
    );
    refused(
        &format!("  - lidar: {{{BASE}, fault: {{angle_max: 1.0}}}}\n"),
        "components.lidar.fault.angle_max",
        "changes the message layout",
    );
    refused(
        &format!("  - lidar: {{{BASE}, fault: {{site: room}}}}\n"),
        "components.lidar.fault.site",
        "consumed once at configure",
    );
    refused(
        &format!("  - lidar: {{{BASE}, fault: {{bogus: 1}}}}\n"),
        "components.lidar.fault.bogus",
        "unknown key `bogus`",
    );
    refused(
        &format!("  - lidar: {{{BASE}, fault: {{dropout_percent: 150}}}}\n"),
        "components.lidar.fault.dropout_percent",
        "in the fault block: must be within 0..100",
    );
    refused(
        &format!("  - lidar: {{{BASE}, fault: {{detection_min: 30}}}}\n"),
        "components.lidar.fault.detection_min",
        "detection_min (30) > detection_max (20)",
    );
}

// ------------------------------------------------------------------------------ lidar refusals

#[test]
fn refuse_lidar_bad_config() {
    refused(
        &format!("  - lidar: {{{BASE}, topics: {{scan: '/'}}}}\n"),
        "components.lidar.topics.scan",
        "empty topic: give a relative name (renamed inside the namespace) or an absolute `/name` (hardwired)",
    );
    refused(
        "  - lidar: {rays: 360}\n",
        "components.lidar.site",
        "required: the site the rays are cast from",
    );
    refused(
        &format!("  - lidar: {{{BASE}, rays: 1}}\n"),
        "components.lidar.rays",
        "must be >= 2, got 1",
    );
    refused(
        &format!("  - lidar: {{{BASE}, angle_min: 1.0, angle_max: 1.0}}\n"),
        "components.lidar.angle_max",
        "must be greater than angle_min",
    );
    refused(
        &format!("  - lidar: {{{BASE}, angle_min: 0.0, angle_max: 7.0}}\n"),
        "components.lidar.angle_max",
        "more than a full turn",
    );
    refused(
        &format!("  - lidar: {{{BASE}, detection_min: 2.0, detection_max: 1.0}}\n"),
        "components.lidar.detection_min",
        "detection_min (2) > detection_max (1)",
    );
    refused(
        &format!("  - lidar: {{{BASE}, range_min: 5, max_range: 4}}\n"),
        "components.lidar.range_min",
        "must be below max_range",
    );
    refused(
        &format!("  - lidar: {{{BASE}, too_close: maybe}}\n"),
        "components.lidar.too_close",
        "`maybe` is not a range value",
    );
    refused(
        &format!("  - lidar: {{{BASE}, no_return: raw}}\n"),
        "components.lidar.no_return",
        "use +inf, nan or a number",
    );
    refused(
        &format!("  - lidar: {{{BASE}, dropout_percent: -1}}\n"),
        "components.lidar.dropout_percent",
        "within 0..100",
    );
    refused(
        &format!("  - lidar: {{{BASE}, range_stddev: -0.1}}\n"),
        "components.lidar.range_stddev",
        ">= 0",
    );
    refused(
        &format!("  - lidar: {{{BASE}, rate_hz: 0}}\n"),
        "components.lidar.rate_hz",
        "must be > 0",
    );
    refused(
        &format!("  - lidar: {{{BASE}, topics: {{laser: /x}}}}\n"),
        "components.lidar.topics.laser",
        "no endpoint role `laser` here; the roles are: scan",
    );
    refused(
        &format!("  - lidar: {{{BASE}, beams: 3}}\n"),
        "components.lidar.beams",
        "unknown field `beams`",
    );
}

#[test]
fn refuse_lidar_unknown_names_at_setup() {
    let e = setup_error_of(world("  - lidar: {site: nowhere}\n"));
    assert!(
        e.contains("[lidar] configure")
            && e.contains("site: no site `nowhere` in the model")
            && e.contains("scan")
            && e.contains("room"),
        "{e}"
    );
    let e = setup_error_of(world("  - lidar: {site: scan, exclude_body: nobody}\n"));
    assert!(e.contains("exclude_body: no body `nobody`") && e.contains("sensor_base"), "{e}");
    let e = setup_error_of(world("  - lidar: {site: scan, tf_parent: nobody}\n"));
    assert!(e.contains("tf_parent: no body `nobody`"), "{e}");
}

// ------------------------------------------------------------------------------ imu

fn imu(e: &Engine, address: &str) -> Imu {
    let r = e.ctx.blackboard.get::<ImuReader>(&format!("imu:{address}")).unwrap().clone();
    r.read(&e.ctx).unwrap()
}

#[test]
fn imu_fixed_reads_gravity_and_zero_rates() {
    let mut e = engine("  - imu: {body: fixed_mount}\n", 1);
    e.step_n(10).unwrap();
    let r = imu(&e, "imu");
    assert!(close3(r.linear_acceleration, [0.0, 0.0, 9.81]), "{:?}", r.linear_acceleration);
    assert!(close3(r.angular_velocity, [0.0; 3]));
    assert!(close4(r.orientation, [0.0, 0.0, 0.0, 1.0]));
    assert_eq!(r.frame_id, "imu_link");
    assert_eq!(r.orientation_covariance, [0.0; 9], "a perfect sensor reports zero variance");
    // the endpoint publishes the same sample at 100 Hz (every 5 steps)
    let ep = e.ctx.interface.all().iter().position(|x| x.name == "imu").unwrap();
    let (p, tick) = e.ctx.interface.get(ep).latest().unwrap();
    assert_eq!(tick, 10);
    assert_eq!(p, &Payload::Imu(r));
    let epr = e.ctx.interface.get(ep);
    assert_eq!(epr.get_hint("ros2", "type"), Some("sensor_msgs/msg/Imu"));
    assert_eq!(epr.get_hint("ros2", "topic"), Some("imu/data"));
    assert!(epr.lazy, "imu is lazy by default");
    assert_eq!(epr.snapped.unwrap().every_steps, 5);
}

#[test]
fn imu_resting_free_body_reads_gravity() {
    let mut e = engine("  - imu: {body: crate, pos: [0.05, 0, 0.1]}\n", 1);
    e.step_n(250).unwrap();
    let r = imu(&e, "imu");
    let a = r.linear_acceleration;
    assert!((a[2] - 9.81).abs() < 0.01 && a[0].abs() < 0.01 && a[1].abs() < 0.01, "{a:?}");
    assert!(r.angular_velocity.iter().all(|w| w.abs() < 0.01), "{:?}", r.angular_velocity);
}

#[test]
fn imu_mount_orientation_rotates_the_reading() {
    // rolled +90° about x: the sensor's +y points up, so gravity reads on +y
    let mut e = engine(
        "  - imu: {body: fixed_mount, rpy: [1.5707963267948966, 0, 0], frame_id: rolled}\n",
        1,
    );
    e.step_n(5).unwrap();
    let r = imu(&e, "imu");
    assert!(close3(r.linear_acceleration, [0.0, 9.81, 0.0]), "{:?}", r.linear_acceleration);
    let s = std::f64::consts::FRAC_1_SQRT_2;
    assert!(close4(r.orientation, [s, 0.0, 0.0, s]), "{:?}", r.orientation);
    // static TF: fixed_mount -> rolled
    let tf = e.ctx.interface.all().iter().find(|x| x.name == "tf_static").unwrap();
    let Some((Payload::Transforms(t), _)) = tf.latest() else { panic!() };
    assert_eq!((t[0].parent.as_str(), t[0].child.as_str()), ("fixed_mount", "rolled"));
    assert!(close4(t[0].rotation, [s, 0.0, 0.0, s]));
}

#[test]
fn imu_rotating_at_known_rate() {
    // hinge about z spinning at 2 rad/s; IMU 0.2 m out on the arm: gyro z = 2, centripetal
    // acceleration ω² r = 0.8 m/s² toward the axis (-x of the sensor), gravity on z
    let mut e = engine("  - imu: {body: spinner, pos: [0.2, 0, 0]}\n", 1);
    let m = e.ctx.model();
    let dof = m.jnt_dofadr()[m.name_to_id(MjtObjBase::mjOBJ_JOINT, "spin").unwrap()] as usize;
    e.ctx.data_mut().qvel_mut()[dof] = 2.0;
    e.step_n(100).unwrap();
    let r = imu(&e, "imu");
    assert!(close3(r.angular_velocity, [0.0, 0.0, 2.0]), "{:?}", r.angular_velocity);
    let a = r.linear_acceleration;
    assert!((a[0] + 0.8).abs() < 1e-3 && a[1].abs() < 1e-3 && (a[2] - 9.81).abs() < 1e-6, "{a:?}");
}

#[test]
fn imu_noise_bias_and_covariances() {
    let cfg = "body: fixed_mount, accel_stddev: 0.05, gyro_stddev: 0.01, gyro_bias: [0, 0, 0.002], accel_bias: [0.1, 0, 0], orientation_stddev: 0.02, yaw_stddev: 0.03";
    let mut e = engine(&format!("  - imu: {{{cfg}}}\n"), 5);
    let r = imu(&e, "imu");
    let a = 0.05f64 * 0.05;
    assert_eq!(r.linear_acceleration_covariance, [a, 0.0, 0.0, 0.0, a, 0.0, 0.0, 0.0, a]);
    let g = 0.01f64 * 0.01;
    assert_eq!(r.angular_velocity_covariance, [g, 0.0, 0.0, 0.0, g, 0.0, 0.0, 0.0, g]);
    let o = 0.02f64 * 0.02;
    assert_eq!(r.orientation_covariance, [o, 0.0, 0.0, 0.0, o, 0.0, 0.0, 0.0, o + 0.03 * 0.03]);
    let (mut ax, mut gz) = (Vec::new(), Vec::new());
    for _ in 0..2000 {
        e.step().unwrap();
        let r = imu(&e, "imu");
        ax.push(r.linear_acceleration[0]);
        gz.push(r.angular_velocity[2]);
    }
    let (ma, sa) = std_of(&ax);
    let (mg, sg) = std_of(&gz);
    assert!((ma - 0.1).abs() < 0.005 && (sa - 0.05).abs() < 0.003, "accel x mean {ma} std {sa}");
    assert!((mg - 0.002).abs() < 0.001 && (sg - 0.01).abs() < 0.0006, "gyro z mean {mg} std {sg}");
    // two reads in one step are identical (endpoint and blackboard reader agree)
    assert_eq!(imu(&e, "imu"), imu(&e, "imu"));
}

#[test]
fn imu_orientation_off_and_topic_rename() {
    let mut e = engine("  - imu: {body: fixed_mount, orientation: false, topic: imu, namespace: bot}\n    name: base_imu\n", 1);
    e.step_n(5).unwrap();
    let r = imu(&e, "base_imu");
    assert_eq!(r.orientation_covariance[0], -1.0);
    assert_eq!(r.frame_id, "base_imu_link");
    let ep = e.ctx.interface.all().iter().find(|x| x.name == "imu").unwrap();
    assert_eq!(ep.get_hint("ros2", "topic"), Some("imu"));
    assert_eq!(ep.namespace, "bot");
    let e2 = engine("  - imu: {body: fixed_mount, topic: imu, topics: {imu: /abs/imu}}\n", 1);
    let ep = e2.ctx.interface.all().iter().find(|x| x.name == "imu").unwrap();
    assert_eq!(ep.get_hint("ros2", "topic"), Some("/abs/imu"), "topics: hardwire wins over topic");
}

#[test]
fn imu_at_an_existing_site() {
    let mut e = engine("  - imu: {site: tilted}\n", 1);
    e.step_n(5).unwrap();
    let r = imu(&e, "imu");
    assert!(close3(r.linear_acceleration, [0.0, 0.0, 9.81]));
    let s = std::f64::consts::FRAC_1_SQRT_2;
    assert!(close4(r.orientation, [0.0, 0.0, s, s]), "{:?}", r.orientation);
}

#[test]
fn imu_fault_switch() {
    let mut e = engine(
        "  - imu: {body: fixed_mount, fault: {gyro_bias: [0, 0, 0.5], orientation: false}}\n",
        1,
    );
    e.step_n(5).unwrap();
    assert!(imu(&e, "imu").angular_velocity[2].abs() < 1e-9);
    e.ctx.blackboard.get::<FaultSwitch>("sensor_fault:imu").unwrap().set(true);
    let r = imu(&e, "imu");
    assert!((r.angular_velocity[2] - 0.5).abs() < 1e-9);
    assert_eq!(r.orientation_covariance[0], -1.0);
}

#[test]
fn refuse_imu_bad_config() {
    refused("  - imu: {}\n", "components.imu", "requires_owner");
    refused(
        "  - imu: {body: fixed_mount, topics: {imu: ' '}}\n",
        "components.imu.topics.imu",
        "empty topic: give a relative name (renamed inside the namespace) or an absolute `/name` (hardwired)",
    );
    refused(
        "  - imu: {site: tilted, pos: [0, 0, 1]}\n",
        "components.imu.pos",
        "`pos` and `site` are exclusive",
    );
    refused(
        "  - imu: {body: fixed_mount, rpy: [0, 0, 1], quat: [1, 0, 0, 0]}\n",
        "components.imu.quat",
        "`rpy` and `quat` are exclusive",
    );
    refused(
        "  - imu: {body: fixed_mount, quat: [0, 0, 0, 0]}\n",
        "components.imu.quat",
        "non-zero quaternion",
    );
    refused(
        "  - imu: {body: fixed_mount, accel_stddev: -1}\n",
        "components.imu.accel_stddev",
        ">= 0",
    );
    refused("  - imu: {body: fixed_mount, rate_hz: -5}\n", "components.imu.rate_hz", "must be > 0");
    refused(
        "  - imu: {body: fixed_mount, fault: {rate_hz: 10}}\n",
        "components.imu.fault.rate_hz",
        "consumed once at configure",
    );
    refused(
        "  - imu: {body: fixed_mount, fault: {gyro_stddev: -1}}\n",
        "components.imu.fault.gyro_stddev",
        "in the fault block",
    );
    refused(
        "  - imu: {body: fixed_mount, topics: {gyro: /g}}\n",
        "components.imu.topics.gyro",
        "no endpoint role `gyro` here; the roles are: imu",
    );
}

#[test]
fn refuse_imu_unknown_names_at_setup() {
    let e = setup_error_of(world("  - imu: {body: nobody}\n"));
    assert!(
        e.contains("[imu] build")
            && e.contains("body: no body `nobody`")
            && e.contains("fixed_mount"),
        "{e}"
    );
    let e = setup_error_of(world("  - imu: {site: nowhere}\n"));
    assert!(e.contains("site: no site `nowhere`") && e.contains("tilted"), "{e}");
}

// ------------------------------------------------------------------------------ helpers

fn close3(a: [f64; 3], b: [f64; 3]) -> bool {
    a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-6)
}

fn close4(a: [f64; 4], b: [f64; 4]) -> bool {
    let same = a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-6);
    let neg = a.iter().zip(&b).all(|(x, y)| (x + y).abs() < 1e-6);
    same || neg
}

// ------------------------------------------------------------------------------ turtlebot4

/// The TurtleBot 4 with its manifest (diff_drive, the RPLIDAR A1 via spawn_sensor, the imu) in
/// the empty room, placed so its scanner is 2.000 m from the east wall's inner face (x = 5.0):
/// the scan frame is base + (-0.04, 0), so base x = 3.04.
fn turtlebot(sets: &[&str]) -> Engine {
    let yaml = "sim: {world: empty_room}\ncomponents:\n  - spawn_robot: {model: turtlebot4, namespace: tb, prefix: tb_, pose: {position: {x: 3.04, y: 0.0}}}\n    name: robot\n";
    let assignments =
        sets.iter().map(|s| roqsim::world::overrides::parse_set(s).unwrap()).collect();
    let loaded = load_world_str(yaml, root(), &LoadOptions { assignments, ..Default::default() })
        .unwrap_or_else(|e| panic!("{e}"));
    Engine::new(loaded, EngineOptions { profile: false, seed: Some(1) })
        .unwrap_or_else(|e| panic!("{e}"))
}

/// (index, cos of the angle to world +x) of the ray of `s` pointing closest to world +x, given
/// the scan site's world rotation.
fn ray_toward_x(e: &Engine, site: &str, s: &LaserScan) -> (usize, f64) {
    let m = e.ctx.model();
    let id = m.name_to_id(MjtObjBase::mjOBJ_SITE, site).unwrap();
    let r = e.ctx.data().site_xmat()[id];
    (0..s.ranges.len())
        .map(|i| {
            let a = s.angle_min as f64 + i as f64 * s.angle_increment as f64;
            (i, r[0] * a.cos() + r[1] * a.sin())
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap()
}

#[test]
fn turtlebot4_lidar_wall_housing_and_imu() {
    let mut e = turtlebot(&["components.robot.rplidar.lidar.too_close=raw"]);
    e.step_n(250).unwrap();
    let s = scan(&e, "robot.rplidar.lidar");
    assert_eq!(
        s.frame_id, "rplidar_link",
        "spawn_sensor filled the device manifest's {{frame_id}}"
    );
    assert_eq!((s.ranges.len(), s.range_min, s.range_max), (360, 0.15f32, 12.0f32));
    let scan_ep = e.ctx.interface.all().iter().find(|x| x.name == "scan").unwrap();
    assert_eq!(
        (scan_ep.namespace.as_str(), scan_ep.frame_prefix.as_str()),
        ("tb", "tb/"),
        "namespace inherited from the robot"
    );
    // the device manifest sets emit_static_tf: false: the mount alone publishes rplidar_link
    let scan_frames: Vec<Transform> = e
        .ctx
        .interface
        .all()
        .iter()
        .filter(|x| x.get_hint("ros2", "tf") == Some("static"))
        .filter_map(|x| match x.latest() {
            Some((Payload::Transforms(t), _)) => {
                Some(t.iter().filter(|t| t.child == "rplidar_link").cloned().collect::<Vec<_>>())
            }
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(scan_frames.len(), 1, "{scan_frames:?}");
    // distance from the scan origin to the wall along world +x, then along the nearest ray
    let m = e.ctx.model();
    let site = m.name_to_id(MjtObjBase::mjOBJ_SITE, "tb_rplidar_laser").unwrap();
    let x0 = e.ctx.data().site_xpos()[site][0];
    assert!((5.0 - x0 - 2.0).abs() < 1e-3, "scanner {} m from the wall", 5.0 - x0);
    let (i, c) = ray_toward_x(&e, "tb_rplidar_laser", &s);
    let want = (5.0 - x0) / c;
    assert!((s.ranges[i] as f64 - want).abs() < 1e-4, "ray {i}: {} vs {want}", s.ranges[i]);
    // the housing (head r = 35 mm around the scan origin) is excluded: the nearest return is a
    // tower standoff (rear ones 91.6 mm away), never the mount
    let min = s.ranges.iter().cloned().fold(f32::MAX, f32::min) as f64;
    assert!(min > 0.085 && min < 0.095, "nearest return {min}");
    // IMU on the base's `imu` site, at rest: +9.81 on z, no rotation; topic `imu` (Create 3)
    let imu_r = imu(&e, "robot.imu");
    assert_eq!(imu_r.frame_id, "imu_link");
    let a = imu_r.linear_acceleration;
    assert!((a[2] - 9.81).abs() < 0.01 && a[0].abs() < 0.02 && a[1].abs() < 0.02, "{a:?}");
    assert!(imu_r.angular_velocity.iter().all(|w| w.abs() < 0.01));
    let ep = e.ctx.interface.all().iter().find(|x| x.name == "imu").unwrap();
    assert_eq!((ep.get_hint("ros2", "topic"), ep.namespace.as_str()), (Some("imu"), "tb"));
    let tf = e
        .ctx
        .interface
        .all()
        .iter()
        .filter(|x| x.name == "tf_static" && x.owner.as_deref() == Some("robot"));
    let imu_tf = tf
        .filter_map(|x| match x.latest() {
            Some((Payload::Transforms(t), _)) => t.iter().find(|t| t.child == "imu_link").cloned(),
            _ => None,
        })
        .next()
        .expect("imu static TF");
    assert_eq!(imu_tf.parent, "base_link");
    assert!(close3(imu_tf.translation, [0.050613, 0.043673, 0.0844]), "{:?}", imu_tf.translation);
}

#[test]
fn turtlebot4_lidar_resolution_and_world_override_keeps_manifest_rays() {
    let mut e = turtlebot(&["components.robot.rplidar.lidar.range_resolution=0.01"]);
    e.step_n(250).unwrap();
    let s = scan(&e, "robot.rplidar.lidar");
    assert_eq!(s.ranges.len(), 360, "the manifest's rays survive a world override of another key");
    let (i, _) = ray_toward_x(&e, "tb_rplidar_laser", &s);
    assert!((s.ranges[i] as f64 - 2.0).abs() <= 0.01 + 1e-6, "{}", s.ranges[i]);
    assert!(((s.ranges[i] as f64) / 0.01 - ((s.ranges[i] as f64) / 0.01).round()).abs() < 1e-3);
}
