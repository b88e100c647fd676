//! `seyond_robin_w1g` (ROS-free): the forward 120° × 70° pattern sees a wall at a known distance
//! in front and nothing of the wall behind it, the blind zone drops near hits, and the cloud is
//! stamped and routed as Seyond's driver does.

mod common;

use common::{engine_of, refusal_in, scene_world};
use roqsim::context::payload::PointCloud;
use roqsim::plugins::sensors::seyond_robin_w1g::CloudReader;
use roqsim::Engine;

/// `front`: a wall whose face is 4.000 m ahead (+x) and one 2 m behind, both 40 m square (no
/// floor: every ray of the 120° × 70° pattern meets a wall).
/// `near`: 0.3 m from a wall ahead, inside the 0.4 m blind zone.
const SCENE: &str = r#"<mujoco model="seyond_scene">
  <option timestep="0.002"/>
  <worldbody>
    <site name="front" pos="0 0 1"/>
    <geom name="wall_ahead" type="box" pos="4.05 0 1" size="0.05 20 20"/>
    <geom name="wall_behind" type="box" pos="-2.05 0 1" size="0.05 20 20"/>
    <site name="near" pos="99.7 0 1"/>
    <geom name="wall_near" type="box" pos="100.05 0 1" size="0.05 20 20"/>
  </worldbody>
</mujoco>
"#;

fn cloud(e: &Engine, address: &str) -> PointCloud {
    e.ctx
        .blackboard
        .get::<CloudReader>(&format!("seyond_robin_w1g:{address}"))
        .expect("reader")
        .latest()
        .expect("a cloud")
}

#[test]
fn a_wall_four_metres_ahead_fills_the_forward_field_of_view() {
    let mut e = engine_of(scene_world(SCENE, "  - seyond_robin_w1g: {site: front}\n"), Some(1))
        .unwrap_or_else(|e| panic!("{e}"));
    e.step_n(50).unwrap();
    let c = cloud(&e, "seyond_robin_w1g");
    assert_eq!(c.frame_id, "seyond");
    // every one of the 240 x 70 rays meets the wall ahead, none the one behind (forward-facing)
    assert_eq!(c.points.len(), 240 * 70);
    for p in &c.points {
        assert!((p[0] - 4.0).abs() < 1e-5, "on the wall 4 m ahead: {p:?}");
    }
    // the first ray: azimuth -60 deg, elevation -35 deg
    let (az, el) = ((-60f64).to_radians(), (-35f64).to_radians());
    let p = c.points[0];
    assert!((p[1] as f64 - 4.0 * az.tan()).abs() < 1e-4, "{p:?}");
    assert!((p[2] as f64 - 4.0 * el.tan() / az.cos()).abs() < 1e-4, "{p:?}");
    // the last ray: +60 deg, +35 deg (both ends of both spans included)
    let p = c.points[240 * 70 - 1];
    assert!(
        (p[1] as f64 + 4.0 * az.tan()).abs() < 1e-4
            && (p[2] as f64 + 4.0 * el.tan() / az.cos()).abs() < 1e-4,
        "{p:?}"
    );
    // the centre column's middle rows look straight ahead at 4 m
    let straight = c.points.iter().filter(|p| p[1].abs() < 0.02 && p[2].abs() < 0.04).count();
    assert!(straight >= 1, "a ray near boresight");
    let ep = e.ctx.interface.all().iter().find(|x| x.name == "points").unwrap();
    assert_eq!(ep.get_hint("ros2", "topic"), Some("iv_points"));
    assert_eq!(ep.get_hint("ros2", "type"), Some("sensor_msgs/msg/PointCloud2"));
    assert_eq!(ep.get_hint("ros2", "frame_id"), Some("seyond"));
}

#[test]
fn turned_round_it_sees_the_wall_behind_at_two_metres() {
    let mut e = engine_of(scene_world(SCENE, "  - seyond_robin_w1g: {site: front, h_fov_min: 2.0943951023931953, h_fov_max: 4.1887902047863905}\n"), Some(1)).unwrap_or_else(|e| panic!("{e}"));
    e.step_n(50).unwrap();
    let c = cloud(&e, "seyond_robin_w1g");
    assert_eq!(c.points.len(), 240 * 70);
    for p in &c.points {
        assert!((p[0] + 2.0).abs() < 1e-5, "{p:?}");
    }
}

#[test]
fn the_blind_zone_drops_a_wall_thirty_centimetres_away() {
    let mut e = engine_of(scene_world(SCENE, "  - seyond_robin_w1g: {site: near}\n    name: blind\n  - seyond_robin_w1g: {site: near, range_min: 0.1}\n    name: sees\n  - seyond_robin_w1g: {site: near, too_close: origin}\n    name: origin\n"), Some(1)).unwrap_or_else(|e| panic!("{e}"));
    e.step_n(50).unwrap();
    // boresight is 0.3 m away, every other ray farther: the rays within acos(0.3/0.4) of it drop
    let blind = cloud(&e, "blind");
    let sees = cloud(&e, "sees");
    assert_eq!(sees.points.len(), 240 * 70);
    let near = sees
        .points
        .iter()
        .filter(|p| ((p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) as f64).sqrt() < 0.4)
        .count();
    assert!(near > 0);
    assert_eq!(blind.points.len(), 240 * 70 - near);
    for p in &blind.points {
        assert!((p[0] - 0.3).abs() < 1e-5);
    }
    let o = cloud(&e, "origin");
    assert_eq!(o.points.len(), 240 * 70);
    assert_eq!(o.points.iter().filter(|p| **p == [0.0; 3]).count(), near);
}

#[test]
fn seyond_refusals() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("scene.xml"), SCENE).unwrap();
    let refuse = |c: &str| {
        let yaml = format!("sim:\n  world: scene.xml\ncomponents:\n{c}");
        refusal_in(&yaml, dir.path())
    };
    let t = refuse("  - seyond_robin_w1g: {site: front, vertical_rays: 1}\n");
    assert!(
        t.contains(
            "vertical_rays: must be >= 2, got 1: one elevation is a 2D scan (declare a `lidar`)"
        ),
        "{t}"
    );
    let t = refuse("  - seyond_robin_w1g: {site: front, topics: {cloud: x}}\n");
    assert!(
        t.contains("topics.cloud: no endpoint role `cloud` here; the roles are: points"),
        "{t}"
    );
    let t = refuse("  - seyond_robin_w1g: {site: nowhere}\n");
    assert!(t.contains("site"), "{t}");
}
