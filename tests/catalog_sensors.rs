//! Catalog sensors (issue 19): `range_sensor` (and the TurtleBot 4 / Create 3 cliff and IR
//! sensors it backs) and `gnss`. Measured values from small MJCF scenes, endpoint metadata, and
//! every refusal's message.

mod common;

use common::{assert_refused_at, scene_engine, scene_world};
use roqsim::context::payload::Range;
use roqsim::context::Payload;
use roqsim::plugins::sensors::range_sensor::{RangeReader, RangeReading};
use roqsim::Engine;

/// Two floor slabs (top at z = 0) with a 0.4 m gap between x = 1.0 and x = 1.4, nothing below it.
/// `cliff_floor` and `cliff_hole` are 0.0192 m above the floor line, pitched 80° down (a Create 3
/// cliff sensor); `ir` faces a wall whose near face is 0.100 m away; `ir_close` one 0.010 m away.
const SCENE: &str = r#"<mujoco model="range_scene">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="slab_a" type="box" pos="-4.5 0 -0.05" size="5.5 5 0.05"/>
    <geom name="slab_b" type="box" pos="6.4 0 -0.05" size="5 5 0.05"/>
    <body name="probe" pos="0 0 0.0192">
      <geom name="probe_shell" type="sphere" size="0.01"/>
      <site name="cliff_floor" euler="0 80 0"/>
    </body>
    <site name="cliff_hole" pos="1.2 0 0.0192" euler="0 80 0"/>
    <site name="ir" pos="0 3 0.3"/>
    <geom name="wall" type="box" pos="0.15 3 0.3" size="0.05 0.5 0.5"/>
    <site name="ir_close" pos="0 -3 0.3"/>
    <geom name="wall_close" type="box" pos="0.06 -3 0.3" size="0.05 0.5 0.5"/>
    <site name="ir_absent" pos="0 -2 0.3"/>
    <geom name="ghost" type="box" pos="0.15 -2 0.3" size="0.05 0.3 0.3" group="5"/>
  </worldbody>
</mujoco>
"#;

fn engine(components: &str, seed: u64) -> Engine {
    scene_engine(SCENE, components, Some(seed)).unwrap_or_else(|e| panic!("{e}"))
}

#[track_caller]
fn refused(components: &str, path: &str, needle: &str) {
    assert_refused_at(scene_world(SCENE, components).1, path, needle);
}

fn reading(e: &Engine, address: &str) -> RangeReading {
    e.ctx
        .blackboard
        .get::<RangeReader>(&format!("range_sensor:{address}"))
        .expect("reader")
        .latest()
        .expect("a reading")
}

fn range(e: &Engine, address: &str) -> Range {
    reading(e, address).range
}

/// The floor along an 80°-pitched boresight from 0.0192 m: 0.0192 / sin 80°.
fn standoff() -> f64 {
    0.0192 / 80f64.to_radians().sin()
}

// ------------------------------------------------------------------------------ range_sensor

#[test]
fn range_cliff_reads_the_standoff_over_floor_and_inf_over_a_hole() {
    let mut e = engine(
        "  - range_sensor: {site: cliff_floor, exclude_body: probe}\n    name: floor\n  - range_sensor: {site: cliff_hole}\n    name: hole\n",
        1,
    );
    e.step_n(10).unwrap();
    let f = range(&e, "floor");
    assert!((f.range as f64 - standoff()).abs() < 1e-6, "{} vs {}", f.range, standoff());
    assert!((f.range as f64 - 0.019496).abs() < 1e-5, "{}", f.range);
    // the seed's defaults: 0.0001..0.15 m, 5 degrees, infrared, noiseless -> variance 0
    assert_eq!((f.min_range, f.max_range), (0.0001, 0.15));
    assert_eq!(f.field_of_view, 0.0873);
    assert_eq!(f.radiation_type, 1);
    assert_eq!(f.variance, 0.0);
    assert_eq!(f.frame_id, "cliff_floor");
    let h = range(&e, "hole");
    assert_eq!(h.range, f32::INFINITY, "a hole reads no return (+inf by REP 117)");
    assert_eq!(reading(&e, "hole").rays, vec![f32::INFINITY]);
}

#[test]
fn range_housing_is_a_return_unless_excluded() {
    // the ray starts inside the probe's shell sphere: without exclude_body it reads the shell
    let mut e = engine("  - range_sensor: {site: cliff_floor}\n", 1);
    e.step_n(10).unwrap();
    let r = range(&e, "range_sensor").range as f64;
    assert!((r - 0.01).abs() < 1e-6, "the shell's inner wall, 0.01 m: {r}");
}

#[test]
fn range_grid_layout_nearest_return_and_rows() {
    let mut e = engine(
        "  - range_sensor: {site: ir, h_rays: 5, v_rays: 5, h_fov: 0.1745, v_fov: 0.1745, range_min: 0.025, max_range: 0.2}\n",
        1,
    );
    e.step_n(10).unwrap();
    let r = reading(&e, "range_sensor");
    assert_eq!(r.rays.len(), 25);
    // the centre ray is the perpendicular: exactly the wall's 0.100 m, and the nearest return
    assert!((r.rays[12] as f64 - 0.1).abs() < 1e-6, "{}", r.rays[12]);
    assert!((r.range.range as f64 - 0.1).abs() < 1e-6, "{}", r.range.range);
    // the corner ray (first row, first column) at azimuth and elevation -fov/2
    let h = 0.1745f64 / 2.0;
    let corner = 0.1 / (h.cos() * h.cos());
    assert!((r.rays[0] as f64 - corner).abs() < 1e-6, "{} vs {corner}", r.rays[0]);
    assert!((r.rays[24] as f64 - corner).abs() < 1e-6);
    // one row: the middle of row 0 has elevation -fov/2, azimuth 0
    assert!((r.rays[2] as f64 - 0.1 / h.cos()).abs() < 1e-6, "{}", r.rays[2]);
    assert_eq!(r.range.field_of_view, 0.1745);
    assert_eq!((r.range.min_range, r.range.max_range), (0.025, 0.2));
}

#[test]
fn range_too_close_absent_and_specials() {
    let mut e = engine(
        "  - range_sensor: {site: ir_close, range_min: 0.025, max_range: 0.2}\n    name: close\n  - range_sensor: {site: ir_close, range_min: 0.025, max_range: 0.2, too_close: raw}\n    name: raw\n  - range_sensor: {site: ir_absent, max_range: 0.2, no_return: 0.2}\n    name: absent\n  - range_sensor: {site: ir_absent, max_range: 0.2, detection_max: 0.1}\n    name: short\n",
        1,
    );
    e.step_n(10).unwrap();
    assert_eq!(range(&e, "close").range, f32::NEG_INFINITY, "0.010 m < range_min 0.025: -inf");
    assert!((range(&e, "raw").range as f64 - 0.01).abs() < 1e-6, "raw: the true distance");
    // a geom in the absent group is not there; no_return: a number is published as is
    assert_eq!(range(&e, "absent").range, 0.2);
    assert_eq!(range(&e, "short").range, f32::INFINITY);
}

#[test]
fn range_noise_sigma_variance_dropout_and_seed() {
    let cfg = "  - range_sensor: {site: cliff_floor, exclude_body: probe, range_stddev: 0.002, rate_hz: 500}\n";
    let mut e = engine(cfg, 7);
    let mut xs = Vec::new();
    for _ in 0..2000 {
        e.step().unwrap();
        xs.push(range(&e, "range_sensor").range as f64);
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    assert!((mean - standoff()).abs() < 2e-4, "mean {mean}");
    assert!((sd - 0.002).abs() < 0.0002, "sd {sd}");
    assert!((range(&e, "range_sensor").variance as f64 - 4e-6).abs() < 1e-10);
    // same seed: bitwise-identical readings; another seed: different
    let mut a = engine(cfg, 7);
    let mut b = engine(cfg, 8);
    a.step_n(5).unwrap();
    b.step_n(5).unwrap();
    let mut again = engine(cfg, 7);
    again.step_n(5).unwrap();
    assert_eq!(range(&a, "range_sensor"), range(&again, "range_sensor"));
    assert_ne!(range(&a, "range_sensor").range, range(&b, "range_sensor").range);
    // dropout 100 %: every ray is a no return
    let mut d = engine(
        "  - range_sensor: {site: cliff_floor, exclude_body: probe, dropout_percent: 100}\n",
        3,
    );
    d.step_n(10).unwrap();
    assert_eq!(range(&d, "range_sensor").range, f32::INFINITY);
}

#[test]
fn range_endpoint_hints_rate_and_static_tf() {
    let mut e = engine(
        "  - range_sensor: {site: cliff_floor, exclude_body: probe, frame_id: cliff_link, namespace: bot, topics: {range: cliff_front_left}}\n",
        1,
    );
    let eps = e.ctx.interface.all();
    let ep = eps.iter().find(|ep| ep.name == "range").expect("the `range` endpoint");
    assert_eq!(ep.get_hint("ros2", "type"), Some("sensor_msgs/msg/Range"));
    assert_eq!(ep.get_hint("ros2", "qos"), Some("sensor_data"));
    assert_eq!(ep.get_hint("ros2", "topic"), Some("cliff_front_left"));
    assert_eq!(ep.namespace, "bot");
    // 62 Hz at 500 Hz physics snaps to every 8 steps (62.5 Hz)
    assert_eq!(ep.snapped.unwrap().every_steps, 8);
    let tf = eps.iter().find(|ep| ep.name == "tf_static").unwrap();
    let Some((Payload::Transforms(t), _)) = tf.latest() else { panic!("no static TF") };
    assert_eq!((t[0].parent.as_str(), t[0].child.as_str()), ("probe", "cliff_link"));
    // pitched 80 degrees about y: quaternion (x, y, z, w) = (0, sin 40, 0, cos 40)
    let (s, c) = 40f64.to_radians().sin_cos();
    assert!((t[0].rotation[1] - s).abs() < 1e-9 && (t[0].rotation[3] - c).abs() < 1e-9);
    e.step_n(8).unwrap();
    let id = e.ctx.interface.all().iter().position(|ep| ep.name == "range").unwrap();
    let (p, _) = e.ctx.interface.get(id).latest().expect("published on the 8th step");
    let Payload::Range(r) = p else { panic!("{p:?}") };
    assert_eq!(r.frame_id, "cliff_link");
    assert!((r.stamp - 0.016).abs() < 1e-12, "{}", r.stamp);
}

#[test]
fn refuse_range_sensor_bad_config() {
    refused("  - range_sensor: {site: ir, rays: 5}\n", "components.range_sensor.rays", "is a fan's layout key and is refused here: a range sensor's layout is its grid (h_rays, v_rays, h_fov, v_fov about the site's +x); a world that wants a fan declares a `lidar`");
    refused(
        "  - range_sensor: {site: ir, angle_min: 0}\n",
        "components.range_sensor.angle_min",
        "a world that wants a fan declares a `lidar`",
    );
    refused(
        "  - range_sensor: {site: ir, angle_max: 1}\n",
        "components.range_sensor.angle_max",
        "is a fan's layout key",
    );
    refused(
        "  - range_sensor: {}\n",
        "components.range_sensor.site",
        "required: the site the rays are cast from (its +x is the boresight)",
    );
    refused(
        "  - range_sensor: {site: ir, h_rays: 0}\n",
        "components.range_sensor.h_rays",
        "must be >= 1, got 0",
    );
    refused(
        "  - range_sensor: {site: ir, v_rays: 3}\n",
        "components.range_sensor.v_fov",
        "is 0 with 3 rays: every ray would share the boresight",
    );
    refused(
        "  - range_sensor: {site: ir, h_rays: 40, v_rays: 40, v_fov: 0.1}\n",
        "components.range_sensor.h_rays",
        "h_rays x v_rays = 1600 exceeds 1024",
    );
    refused(
        "  - range_sensor: {site: ir, h_fov: 3.5}\n",
        "components.range_sensor.h_fov",
        "must be within [0, π) (rad), got 3.5",
    );
    refused(
        "  - range_sensor: {site: ir, topics: {scan: x}}\n",
        "components.range_sensor.topics.scan",
        "no endpoint role `scan` here; the roles are: range",
    );
    refused(
        "  - range_sensor: {site: ir, range_min: 0.3}\n",
        "components.range_sensor.range_min",
        "range_min (0.3) must be below max_range (0.15)",
    );
    refused(
        "  - range_sensor: {site: ir, no_return: raw}\n",
        "components.range_sensor.no_return",
        "`raw` is not a range value: use +inf, nan or a number (m)",
    );
    refused(
        "  - range_sensor: {site: ir, radiation_type: laser}\n",
        "components.range_sensor.radiation_type",
        "unknown variant `laser`, expected `infrared` or `ultrasound`",
    );
    refused(
        "  - range_sensor: {site: ir, fault: {range_stddev: 1}}\n",
        "components.range_sensor.fault",
        "unknown field",
    );
}

#[test]
fn refuse_range_sensor_unknown_site_at_setup() {
    let err = match scene_engine(SCENE, "  - range_sensor: {site: nowhere}\n", Some(1)) {
        Ok(_) => panic!("expected a setup error"),
        Err(e) => e,
    };
    assert!(err.contains("site: no site `nowhere` in the model; its sites: [cliff_hole, ir, ir_close, ir_absent, cliff_floor]"), "{err}");
}

// ------------------------------------------------------------------ TurtleBot 4 cliff and IR

fn turtlebot(extra_components: &str, z: f64) -> Engine {
    let yaml = format!(
        "sim: {{timestep: 0.002}}
components:
{extra_components}  - spawn_robot: {{model: turtlebot4, pose: {{position: {{z: {z}}}}}}}
    name: robot
"
    );
    common::engine(&yaml)
}

const CLIFFS: [&str; 4] = ["side_left", "side_right", "front_left", "front_right"];
const IRS: [&str; 7] = [
    "side_left",
    "left",
    "front_left",
    "front_center_left",
    "front_center_right",
    "front_right",
    "right",
];

#[test]
fn turtlebot4_cliff_sensors_read_the_floor_and_a_ledge() {
    // The floor is the built-in world's plane, whose origin is farther from every cliff sensor
    // than their 0.15 m range: mj_multiRay alone culls it (its bounding radius is 0), the seam
    // intersects planes itself.
    let mut e = turtlebot("", 0.0);
    e.step_n(250).unwrap();
    for c in CLIFFS {
        let r = range(&e, &format!("robot.cliff_{c}"));
        // 0.0192 m above the floor, 80 degrees down: ~0.0195 m (the base sinks ~0.2 mm into contact)
        assert!((r.range as f64 - standoff()).abs() < 1e-3, "cliff_{c}: {}", r.range);
        assert_eq!(r.frame_id, format!("cliff_{c}"));
        assert_eq!(r.max_range, 0.15);
    }
    // the IR sensors look out at nothing within 0.2 m
    for i in IRS {
        assert_eq!(range(&e, &format!("robot.ir_intensity_{i}")).range, f32::INFINITY, "{i}");
    }
    // the topics are the frame names, inside the robot's namespace
    let topics: Vec<String> = e
        .ctx
        .interface
        .all()
        .iter()
        .filter(|ep| ep.get_hint("ros2", "type") == Some("sensor_msgs/msg/Range"))
        .map(|ep| ep.get_hint("ros2", "topic").unwrap_or_default().to_string())
        .collect();
    assert_eq!(topics.len(), 11);
    assert!(topics.contains(&"cliff_front_left".to_string()));
    assert!(topics.contains(&"ir_intensity_front_center_left".to_string()));

    // On a 0.3 m platform whose edge is 0.15 m ahead of base_link: both front cliff sensors look
    // over the edge (+inf), the side ones still read the platform.
    let platform = "  - box: {size: [2.0, 2.0, 0.3], pose: {position: {x: -0.85}}}\n";
    let mut e = turtlebot(platform, 0.3);
    e.step_n(250).unwrap();
    for c in ["front_left", "front_right"] {
        assert_eq!(range(&e, &format!("robot.cliff_{c}")).range, f32::INFINITY, "{c}");
    }
    for c in ["side_left", "side_right"] {
        let r = range(&e, &format!("robot.cliff_{c}")).range as f64;
        assert!((r - standoff()).abs() < 1e-3, "{c}: {r}");
    }
}

#[test]
fn turtlebot4_ir_sees_a_wall_ahead() {
    // a wall 0.10 m ahead of the front-centre sensor (at x = 0.154 m from base_link)
    let wall = "  - box: {size: [0.1, 2.0, 0.5], pose: {position: {x: 0.304}}}\n";
    let mut e = turtlebot(wall, 0.0);
    e.step_n(250).unwrap();
    let r = range(&e, "robot.ir_intensity_front_center_left");
    assert!((r.range as f64 - 0.1).abs() < 2e-3, "{}", r.range);
    assert_eq!((r.min_range, r.max_range, r.field_of_view), (0.025, 0.2, 0.1745));
    // front_left is yawed 0.436 rad and 0.0144 m further back: it reads farther
    let fl = range(&e, "robot.ir_intensity_front_left").range as f64;
    assert!(fl > 0.1 && fl < 0.2, "{fl}");
    // the side sensors see nothing
    assert_eq!(range(&e, "robot.ir_intensity_side_left").range, f32::INFINITY);
}

// ------------------------------------------------------------------------------------- gnss

use roqsim::plugins::sensors::gnss::{GnssReader, GnssReading};

/// A mast at ENU (100, 200, 3) m and a frictionless cart on an x slide at the origin; 100 Hz physics.
const GNSS_SCENE: &str = r#"<mujoco model="gnss_scene">
  <option timestep="0.01" gravity="0 0 0"/>
  <worldbody>
    <body name="mast" pos="100 200 3">
      <geom type="box" size="0.1 0.1 0.1"/>
    </body>
    <body name="cart" pos="0 0 0.5">
      <joint name="slide" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.2 0.2 0.1" mass="5"/>
    </body>
  </worldbody>
</mujoco>
"#;

const DATUM: &str = "datum: {lat: 47.397742, lon: 8.545594, alt: 488.0}";

fn gnss_engine(components: &str, seed: Option<u64>) -> Result<Engine, String> {
    scene_engine(GNSS_SCENE, components, seed)
}

fn fix(e: &Engine, address: &str) -> GnssReading {
    e.ctx
        .blackboard
        .get::<GnssReader>(&format!("gnss:{address}"))
        .expect("reader")
        .latest()
        .expect("a fix")
}

/// ENU (east, north, up) of a fix about the test datum, by the same equirectangular projection.
fn enu_of(f: &roqsim::context::payload::NavSatFix) -> [f64; 3] {
    let r = 6_378_137.0;
    let lat0 = 47.397742f64;
    [
        (f.longitude - 8.545594).to_radians() * r * lat0.to_radians().cos(),
        (f.latitude - lat0).to_radians() * r,
        f.altitude - 488.0,
    ]
}

#[test]
fn gnss_noiseless_fix_is_the_equirectangular_projection() {
    let mut e = gnss_engine(
        &format!("  - gnss: {{{DATUM}, body: mast, horizontal_noise: 0, vertical_noise: 0, velocity_noise: 0}}\n"),
        None,
    )
    .unwrap();
    e.step_n(10).unwrap();
    let r = fix(&e, "gnss");
    // lat0 + north/R, lon0 + east/(R cos lat0), alt0 + up (computed independently)
    assert!((r.fix.latitude - 47.39953863056824).abs() < 1e-12, "{}", r.fix.latitude);
    assert!((r.fix.longitude - 8.54692109215146).abs() < 1e-12, "{}", r.fix.longitude);
    assert!((r.fix.altitude - 491.0).abs() < 1e-9);
    assert_eq!((r.fix.status, r.fix.service), (0, 1));
    assert_eq!(r.fix.frame_id, "mast");
    assert_eq!(r.satellites, 12);
    // covariance: eph/epv default to the declared noise (0 here), diagonal known
    assert_eq!(r.fix.position_covariance_type, 2);
    assert_eq!(r.fix.position_covariance, [0.0; 9]);
    assert!((r.fix.stamp - 0.1).abs() < 1e-12, "10 Hz at 100 Hz: first fix on step 10");
    let v = r.velocity.expect("velocity");
    assert_eq!(v.linear, [0.0; 3]);
}

#[test]
fn gnss_moving_body_velocity_and_east_drift() {
    let mut e = gnss_engine(
        &format!("  - gnss: {{{DATUM}, body: cart, horizontal_noise: 0, vertical_noise: 0, velocity_noise: 0}}\n"),
        None,
    )
    .unwrap();
    e.ctx.data_mut().qvel_mut()[0] = 1.5;
    e.step_n(100).unwrap();
    let r = fix(&e, "gnss");
    let v = r.velocity.unwrap();
    assert!((v.linear[0] - 1.5).abs() < 1e-9, "{:?}", v.linear);
    assert!(v.linear[1].abs() < 1e-12 && v.linear[2].abs() < 1e-12);
    let enu = enu_of(&r.fix);
    assert!((enu[0] - r.truth[0]).abs() < 1e-6, "{enu:?} vs {:?}", r.truth);
    assert!((enu[0] - 1.5).abs() < 0.02, "east after 1 s at 1.5 m/s: {}", enu[0]);
    assert!(enu[1].abs() < 1e-6);
}

#[test]
fn gnss_fix_is_held_between_updates_and_seeded() {
    let cfg = format!("  - gnss: {{{DATUM}, body: mast, rate: 5}}\n");
    let mut e = gnss_engine(&cfg, Some(3)).unwrap();
    e.step_n(20).unwrap();
    let first = fix(&e, "gnss");
    assert!((first.fix.stamp - 0.2).abs() < 1e-12);
    for _ in 0..19 {
        e.step().unwrap();
        assert_eq!(fix(&e, "gnss"), first, "held between updates");
    }
    e.step().unwrap();
    let second = fix(&e, "gnss");
    assert!((second.fix.stamp - 0.4).abs() < 1e-12);
    assert_ne!(second.fix.latitude, first.fix.latitude, "a new fix, new noise");
    // the published cadence: the endpoint holds the update's message
    let id = e.ctx.interface.all().iter().position(|ep| ep.name == "fix").unwrap();
    let (p, _) = e.ctx.interface.get(id).latest().unwrap();
    let Payload::NavSatFix(published) = p else { panic!("{p:?}") };
    assert_eq!(published, &second.fix);
    // same seed: bitwise-identical; another seed: not
    let mut a = gnss_engine(&cfg, Some(3)).unwrap();
    a.step_n(40).unwrap();
    assert_eq!(fix(&a, "gnss"), second);
    let mut b = gnss_engine(&cfg, Some(4)).unwrap();
    b.step_n(40).unwrap();
    assert_ne!(fix(&b, "gnss").fix.latitude, second.fix.latitude);
    // noise without a seed is refused with the reason
    let err = gnss_engine(&cfg, None).err().expect("needs a seed");
    assert!(
        err.contains(
            "`gnss:gnss:bias0` draws noise but the run has no seed: pass --seed N or set sim.seed"
        ),
        "{err}"
    );
}

/// Sample autocorrelation of `x` at `lag` (mean removed).
fn autocorr(x: &[f64], lag: usize) -> f64 {
    let n = x.len();
    let m = x.iter().sum::<f64>() / n as f64;
    let c0: f64 = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n as f64;
    let ck: f64 = (0..n - lag).map(|i| (x[i] - m) * (x[i + lag] - m)).sum::<f64>() / n as f64;
    ck / c0
}

#[test]
fn gnss_error_has_the_declared_sigma_and_drifts_with_the_correlation_time() {
    // 8 receivers on the mast, 1000 s at 10 Hz: 10,000 fixes each, 500 correlation times of 2 s
    let mut comps = String::new();
    for i in 0..8 {
        comps += &format!("  - gnss: {{{DATUM}, body: mast, horizontal_noise: 0.5, vertical_noise: 1.0, bias_time: 2.0}}\n    name: rx{i}\n");
    }
    let mut e = gnss_engine(&comps, Some(11)).unwrap();
    let mut err: Vec<Vec<f64>> = vec![Vec::new(); 16];
    let mut bias: Vec<Vec<f64>> = vec![Vec::new(); 16];
    let mut up = Vec::new();
    for _ in 0..10_000 {
        e.step_n(10).unwrap();
        for i in 0..8 {
            let r = fix(&e, &format!("rx{i}"));
            let enu = enu_of(&r.fix);
            for k in 0..2 {
                err[2 * i + k].push(enu[k] - r.truth[k]);
                bias[2 * i + k].push(r.bias[k]);
            }
            up.push(enu[2] - r.truth[2]);
        }
    }
    let all: Vec<f64> = err.iter().flatten().copied().collect();
    let sd = |x: &[f64]| {
        let m = x.iter().sum::<f64>() / x.len() as f64;
        (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / x.len() as f64).sqrt()
    };
    let (h, v) = (sd(&all), sd(&up));
    assert!((h - 0.5).abs() < 0.05, "horizontal 1-sigma {h}");
    assert!((v - 1.0).abs() < 0.1, "vertical 1-sigma {v}");
    // bias autocorrelation at lag tau (20 fixes) is e^-1; the fix error carries half of it
    let rho_b = bias.iter().map(|x| autocorr(x, 20)).sum::<f64>() / 16.0;
    let rho_e = err.iter().map(|x| autocorr(x, 20)).sum::<f64>() / 16.0;
    let tau = -2.0 / rho_b.ln();
    eprintln!("bias rho(2 s) {rho_b:.4}, error rho(2 s) {rho_e:.4}, tau {tau:.3} s, sigma h {h:.4} v {v:.4}");
    assert!((rho_b - (-1f64).exp()).abs() < 0.05, "bias rho(tau) {rho_b}");
    assert!((tau - 2.0).abs() < 0.3, "estimated correlation time {tau}");
    assert!((rho_e - 0.5 * (-1f64).exp()).abs() < 0.04, "error rho(tau) {rho_e}");
    // white on top: the lag-1 autocorrelation of the error is about half, not ~1
    let rho1 = err.iter().map(|x| autocorr(x, 1)).sum::<f64>() / 16.0;
    assert!((rho1 - 0.5 * (-0.05f64).exp()).abs() < 0.04, "error rho(0.1 s) {rho1}");
}

#[test]
fn gnss_denied_fix_type_accuracy_and_endpoints() {
    let mut e = gnss_engine(
        &format!("  - gnss: {{{DATUM}, body: mast, denied: true}}\n    name: dark\n  - gnss: {{{DATUM}, body: mast, fix_type: 4, eph: 2.0, epv: 3.0, namespace: rover, topics: {{fix: gps/fix}}}}\n    name: sbas\n"),
        Some(1),
    )
    .unwrap();
    e.step_n(10).unwrap();
    let d = fix(&e, "dark");
    assert_eq!(d.fix.status, -1);
    assert!(d.fix.latitude.is_nan() && d.fix.longitude.is_nan() && d.fix.altitude.is_nan());
    assert_eq!(d.fix.position_covariance_type, 0);
    assert!(d.velocity.is_none());
    let s = fix(&e, "sbas");
    assert_eq!(s.fix.status, 1);
    assert_eq!(s.fix.position_covariance, [4.0, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 9.0]);
    let eps = e.ctx.interface.all();
    let fixes: Vec<_> = eps.iter().filter(|ep| ep.name == "fix").collect();
    assert_eq!(fixes.len(), 2);
    assert_eq!(fixes[1].get_hint("ros2", "type"), Some("sensor_msgs/msg/NavSatFix"));
    assert_eq!(fixes[1].get_hint("ros2", "topic"), Some("gps/fix"));
    assert_eq!(fixes[1].namespace, "rover");
    assert_eq!(fixes[1].snapped.unwrap().every_steps, 10);
    let vel: Vec<_> = eps.iter().filter(|ep| ep.name == "fix_velocity").collect();
    assert_eq!(
        vel[0].get_hint("ros2", "type"),
        Some("geometry_msgs/msg/TwistWithCovarianceStamped")
    );
    // the denied receiver publishes a no-fix NavSatFix and no velocity
    assert!(vel[0].latest().is_none());
    assert!(fixes[0].latest().is_some());
}

#[track_caller]
fn gnss_refused(components: &str, path: &str, needle: &str) {
    assert_refused_at(scene_world(GNSS_SCENE, components).1, path, needle);
}

#[test]
fn refuse_gnss_bad_config() {
    gnss_refused(
        "  - gnss: {body: mast}\n",
        "components.gnss.datum",
        "required: the world origin on Earth, {lat, lon, alt} (deg, deg, m)",
    );
    gnss_refused("  - gnss: {body: mast, datum: {lat: 90, lon: 0}}\n", "components.gnss.datum.lat", "must be within (-90, 90) deg, got 90: the projection's east scale 1/cos(lat) diverges at a pole");
    gnss_refused(
        "  - gnss: {body: mast, datum: {lat: 0, lon: 181}}\n",
        "components.gnss.datum.lon",
        "must be within [-180, 180] deg, got 181",
    );
    gnss_refused(
        &format!("  - gnss: {{{DATUM}, body: mast, rate: 0}}\n"),
        "components.gnss.rate",
        "must be > 0 (Hz), got 0",
    );
    gnss_refused(
        &format!("  - gnss: {{{DATUM}, body: mast, bias_time: 0}}\n"),
        "components.gnss.bias_time",
        "must be > 0 (s), got 0: the bias's correlation time",
    );
    gnss_refused(
        &format!("  - gnss: {{{DATUM}, body: mast, horizontal_noise: -1}}\n"),
        "components.gnss.horizontal_noise",
        "must be a finite number >= 0, got -1",
    );
    gnss_refused(
        &format!("  - gnss: {{{DATUM}, body: mast, fix_type: 7}}\n"),
        "components.gnss.fix_type",
        "must be 0..6 (0-1 no fix, 2 2D, 3 3D, 4 DGPS, 5 RTK float, 6 RTK fixed), got 7",
    );
    gnss_refused(
        &format!("  - gnss: {{{DATUM}, body: mast, topics: {{scan: x}}}}\n"),
        "components.gnss.topics.scan",
        "no endpoint role `scan` here; the roles are: fix, fix_velocity",
    );
    gnss_refused(
        &format!("  - gnss: {{{DATUM}, body: mast, topics: {{fix: gps, fix_velocity: gps}}}}\n"),
        "components.gnss.topics.fix_velocity",
        "renamed to `gps`, as is `topics.fix`: one topic would carry two roles' messages (a state read back as a command); give each role its own topic",
    );
    gnss_refused(
        &format!("  - gnss: {{{DATUM}}}\n"),
        "components.gnss",
        "a gnss at the top of a document has nothing to measure (requires_owner)",
    );
    gnss_refused(
        &format!("  - gnss: {{{DATUM}, body: mast, seed: 3}}\n"),
        "components.gnss.seed",
        "unknown field",
    );
    let err =
        gnss_engine(&format!("  - gnss: {{{DATUM}, body: nowhere}}\n"), Some(1)).err().unwrap();
    assert!(err.contains("body: no body `nowhere` in the model; its bodys: [mast, cart]"), "{err}");
}

// ------------------------------------------------------------------------------ livox_mid360

use roqsim::context::payload::PointCloud;
use roqsim::plugins::sensors::livox_mid360::CloudReader;

/// `room`: the centre of a closed 6 m x 6 m x 3 m room (inner faces 3.000 m away in x and y, the
/// floor 1.5 m below, the ceiling 1.5 m above). `open`: 0.5 m above an unbounded plane, 100 m
/// away. `boxed`: inside an open-topped well whose walls are 0.04 m away (at most
/// 0.04·√2 / cos 52° = 0.092 m along any ray).
const CLOUD_SCENE: &str = r#"<mujoco model="cloud_scene">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="ground" type="plane" size="0 0 0.1"/>
    <site name="room" pos="0 0 1.5"/>
    <geom type="box" pos="3.05 0 1.5" size="0.05 3.1 1.6"/>
    <geom type="box" pos="-3.05 0 1.5" size="0.05 3.1 1.6"/>
    <geom type="box" pos="0 3.05 1.5" size="3.1 0.05 1.6"/>
    <geom type="box" pos="0 -3.05 1.5" size="3.1 0.05 1.6"/>
    <geom type="box" pos="0 0 3.05" size="3.1 3.1 0.05"/>
    <site name="open" pos="100 0 0.5"/>
    <site name="boxed" pos="-100 0 0.5"/>
    <geom type="box" pos="-99.91 0 0.5" size="0.05 0.1 0.2"/>
    <geom type="box" pos="-100.09 0 0.5" size="0.05 0.1 0.2"/>
    <geom type="box" pos="-100 0.09 0.5" size="0.1 0.05 0.2"/>
    <geom type="box" pos="-100 -0.09 0.5" size="0.1 0.05 0.2"/>
  </worldbody>
</mujoco>
"#;

fn cloud_engine(components: &str, seed: u64) -> Engine {
    scene_engine(CLOUD_SCENE, components, Some(seed)).unwrap_or_else(|e| panic!("{e}"))
}

fn cloud(e: &Engine, address: &str) -> PointCloud {
    e.ctx
        .blackboard
        .get::<CloudReader>(&format!("livox_mid360:{address}"))
        .expect("reader")
        .latest()
        .expect("a cloud")
}

#[test]
fn livox_walls_at_three_metres_in_a_closed_room() {
    let mut e = cloud_engine("  - livox_mid360: {site: room}\n", 1);
    e.step_n(50).unwrap();
    let c = cloud(&e, "livox_mid360");
    assert_eq!(c.frame_id, "livox_frame");
    // closed room: every ray returns, one point per ray
    assert_eq!(c.points.len(), 360 * 56);
    let on_wall: Vec<_> =
        c.points.iter().filter(|p| p[0] > 2.9 && p[1].abs() < 2.9 && p[2].abs() < 1.4).collect();
    assert!(on_wall.len() > 1000, "{}", on_wall.len());
    for p in &on_wall {
        assert!((p[0] - 3.0).abs() < 1e-5, "{p:?}");
    }
    // the first ray: azimuth 0, elevation -7 deg: on the +x wall at z = -3 tan 7deg
    let z0 = -3.0 * 7f64.to_radians().tan();
    assert!(
        (c.points[0][0] - 3.0).abs() < 1e-5 && (c.points[0][2] as f64 - z0).abs() < 1e-5,
        "{:?}",
        c.points[0]
    );
    // the last elevation of the first column: +52 deg, on the ceiling 1.5 m up
    assert!((c.points[55][2] - 1.5).abs() < 1e-5, "{:?}", c.points[55]);
    // azimuth wraps: column 90 is at 90 deg, on the +y wall
    assert!((c.points[90 * 56][1] - 3.0).abs() < 1e-5, "{:?}", c.points[90 * 56]);
}

#[test]
fn livox_open_sky_drops_no_returns_and_origin_keeps_them() {
    let mut e = cloud_engine(
        "  - livox_mid360: {site: open}\n    name: drop\n  - livox_mid360: {site: open, no_return: origin}\n    name: origin\n",
        1,
    );
    e.step_n(50).unwrap();
    // elevations -7 + j * 59/55 deg: rows j = 0..5 meet the ground within 40 m (row 5 at
    // -1.64 deg, 17.5 m); row 6 (-0.56 deg) would meet it at 50.8 m, beyond max_range
    let c = cloud(&e, "drop");
    assert_eq!(c.points.len(), 6 * 360);
    for p in &c.points {
        assert!((p[2] + 0.5).abs() < 1e-5, "every return is on the ground 0.5 m below: {p:?}");
    }
    let o = cloud(&e, "origin");
    assert_eq!(o.points.len(), 360 * 56, "origin keeps one point per ray, in ray order");
    assert_eq!(o.points[6], [0.0; 3], "column 0, row 6 (no return within 40 m) is at the origin");
    assert!((o.points[5][2] + 0.5).abs() < 1e-5);
}

#[test]
fn livox_blind_zone_too_close_is_dropped_or_at_the_origin() {
    let mut e = cloud_engine(
        "  - livox_mid360: {site: boxed}\n    name: drop\n  - livox_mid360: {site: boxed, too_close: origin}\n    name: origin\n  - livox_mid360: {site: boxed, range_min: 0.01}\n    name: near\n",
        1,
    );
    e.step_n(50).unwrap();
    // every ray meets a wall of the well within the 0.1 m blind zone: nothing is measured
    assert_eq!(cloud(&e, "drop").points.len(), 0);
    let o = cloud(&e, "origin");
    assert!(!o.points.is_empty() && o.points.iter().all(|p| *p == [0.0; 3]));
    // with a 0.01 m blind zone the same rays are points on the walls, every one within 0.1 m
    let n = cloud(&e, "near");
    assert_eq!(n.points.len(), o.points.len());
    assert_eq!(n.points.len(), 360 * 56);
    for p in &n.points {
        assert!((p[0].abs().max(p[1].abs()) - 0.04).abs() < 1e-5, "on a wall 0.04 m away: {p:?}");
    }
}

#[test]
fn livox_noise_endpoint_and_static_tf() {
    let mut e = cloud_engine(
        "  - livox_mid360: {site: room, range_stddev: 0.02, namespace: bot, tf_parent: world}\n",
        5,
    );
    e.step_n(50).unwrap();
    let c = cloud(&e, "livox_mid360");
    let errs: Vec<f64> = c
        .points
        .iter()
        .filter(|p| p[0] > 2.5 && p[1].abs() < 2.5 && p[2].abs() < 1.2)
        .map(|p| {
            let r = ((p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) as f64).sqrt();
            r - 3.0 / (p[0] as f64 / r)
        })
        .collect();
    let n = errs.len() as f64;
    let m = errs.iter().sum::<f64>() / n;
    let sd = (errs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n).sqrt();
    assert!(n > 1000.0);
    assert!(m.abs() < 0.003 && (sd - 0.02).abs() < 0.002, "mean {m} sd {sd} over {n}");
    let eps = e.ctx.interface.all();
    let ep = eps.iter().find(|ep| ep.name == "points").unwrap();
    assert_eq!(ep.get_hint("ros2", "type"), Some("sensor_msgs/msg/PointCloud2"));
    assert_eq!(ep.get_hint("ros2", "topic"), Some("livox/lidar"));
    assert_eq!(ep.namespace, "bot");
    assert_eq!(ep.snapped.unwrap().every_steps, 50);
    let tf = eps.iter().find(|ep| ep.name == "tf_static").unwrap();
    let Some((Payload::Transforms(t), _)) = tf.latest() else { panic!() };
    assert_eq!((t[0].parent.as_str(), t[0].child.as_str()), ("world", "livox_frame"));
    assert_eq!(t[0].translation, [0.0, 0.0, 1.5]);
}

#[test]
fn refuse_livox_bad_config() {
    let r = |c: &str, path: &str, needle: &str| refused(c, path, needle);
    r(
        "  - livox_mid360: {vertical_rays: 1}\n",
        "components.livox_mid360.vertical_rays",
        "must be >= 2, got 1: one elevation is a 2D scan (declare a `lidar`)",
    );
    r(
        "  - livox_mid360: {h_fov_max: 7.0}\n",
        "components.livox_mid360.h_fov_max",
        "spans more than a full turn (2π); azimuths would repeat",
    );
    r(
        "  - livox_mid360: {v_fov_min: 0.5, v_fov_max: 0.1}\n",
        "components.livox_mid360.v_fov_max",
        "v_fov_max (0.1) must be greater than v_fov_min (0.5)",
    );
    r(
        "  - livox_mid360: {v_fov_max: 2.0}\n",
        "components.livox_mid360.v_fov_min",
        "elevations must lie within [-π/2, π/2]",
    );
    r(
        "  - livox_mid360: {too_close: raw}\n",
        "components.livox_mid360.too_close",
        "unknown variant `raw`, expected `drop` or `origin`",
    );
    r(
        "  - livox_mid360: {range_min: 50}\n",
        "components.livox_mid360.range_min",
        "range_min (50) must be below max_range (40)",
    );
    r(
        "  - livox_mid360: {topics: {scan: x}}\n",
        "components.livox_mid360.topics.scan",
        "no endpoint role `scan` here; the roles are: points",
    );
    r(
        "  - livox_mid360: {horizontal_rays: 2000, vertical_rays: 1000}\n",
        "components.livox_mid360.horizontal_rays",
        "= 2000000 exceeds 1000000 rays per scan",
    );
    r("  - livox_mid360: {rays: 5}\n", "components.livox_mid360.rays", "unknown field");
}
