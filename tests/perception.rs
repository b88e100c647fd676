//! Perception ground truth (issue 15): segmentation_camera (class and instance images, the 2D box
//! of a known object against the projection of its corners, declaration-order matching,
//! min_pixels, presence, laziness) and object_detector (noise off = ground truth, the error
//! model, presence, range), with every load-time refusal. Needs EGL like tests/cameras.rs.

mod common;

use common::{assert_refused_ending, engine_of, scene_files_world, setup_error_of, SceneWorld};
use mujoco_rs::prelude::*;
use roqsim::context::payload::{CameraInfo, Detection2DArray, Detection3DArray, Image};
use roqsim::context::Payload;
use roqsim::Engine;

/// Camera `cam` at (0, 0, 0.5) looking along +x (fovy 45). `graspable_a`: a 0.2 m cube centred at
/// (1.0, 0.25, 0.3); `graspable_b`: a 0.1 m cube at (1.0, -0.05, 0.6); `rack`: one body carrying
/// two boards (`board_1`, `board_2`) 1.6 m ahead; a wall behind everything.
const SCENE: &str = r#"<mujoco model="perception_scene">
  <option timestep="0.002"/>
  <worldbody>
    <light pos="0 0 4" dir="0 0 -1" directional="true"/>
    <geom name="floor" type="plane" size="20 20 0.1" rgba="0.5 0.5 0.5 1"/>
    <camera name="cam" pos="0 0 0.5" xyaxes="0 -1 0 0 0 1" fovy="45"/>
    <geom name="wall" type="box" pos="2.55 0 0.5" size="0.05 3 0.5" rgba="0.9 0.9 0.9 1"/>
    <body name="graspable_a" pos="1.0 0.25 0.3">
      <geom name="a_box" type="box" size="0.1 0.1 0.1" rgba="0.1 0.2 0.9 1"/>
    </body>
    <body name="graspable_b" pos="1.0 -0.05 0.6">
      <geom name="b_box" type="box" size="0.05 0.05 0.05" rgba="0.1 0.9 0.2 1"/>
    </body>
    <body name="rack" pos="1.6 0 0">
      <geom name="board_1" type="box" pos="0 0 0.2" size="0.05 0.15 0.01" rgba="0.6 0.4 0.2 1"/>
      <geom name="board_2" type="box" pos="0 0 0.35" size="0.05 0.15 0.01" rgba="0.6 0.4 0.2 1"/>
    </body>
  </worldbody>
</mujoco>
"#;

/// The smallest robot: one 0.2 m cube body `robot` and no joint (spawn_robot welds it).
const ROBOT: &str = r#"<mujoco model="robot">
  <worldbody>
    <body name="robot"><geom type="box" size="0.1 0.1 0.1" rgba="0.3 0.3 0.3 1"/></body>
  </worldbody>
</mujoco>
"#;

/// A crate entity (a static `box`) at (1.0, -0.35, 0.3), 0.2 m wide.
const CRATE: &str = "  - box: {pose: {position: {x: 1.0, y: -0.35, z: 0.3}}, size: [0.2, 0.2, 0.2], color: [1, 0, 0, 1]}\n    name: crate\n";

const SEG: &str = "  - segmentation_camera:\n      camera: cam\n      width: 320\n      height: 240\n      rate_hz: 10\n      instances: true\n      classes:\n        - {class_id: 5, name: special, bodies: [graspable_b]}\n        - {class_id: 1, name: parcel, bodies: [\"graspable_*\"]}\n        - {class_id: 2, name: crate, entities: [crate]}\n        - {class_id: 3, name: shelf_board, geoms: [\"board_*\"]}\n";

/// The world `components:` over [`SCENE`] (with [`ROBOT`] beside it), as loaded.
fn world(components: &str) -> SceneWorld {
    scene_files_world(&[("scene.xml", SCENE), ("robot.xml", ROBOT)], "", components)
}

/// An engine of [`world`] with `seed`; panics on a refusal or setup error.
fn engine(components: &str, seed: u64) -> Engine {
    engine_of(world(components), Some(seed)).unwrap_or_else(|e| panic!("{e}"))
}

#[track_caller]
fn refused(components: &str, plugin: &str, path: &str, message: &str) {
    assert_refused_ending(world(components).1, path, &format!("{message} ({plugin})"));
}

fn ep(e: &Engine, name: &str) -> Option<usize> {
    e.ctx.interface.all().iter().position(|x| x.name == name)
}

fn now(e: &Engine, name: &str) -> Option<Payload> {
    let (p, t) = e.ctx.interface.get(ep(e, name)?).latest()?;
    (t == e.ctx.tick).then(|| p.clone())
}

fn image(e: &Engine, name: &str) -> Image {
    match now(e, name) {
        Some(Payload::Image(i)) => i,
        other => panic!("no image on `{name}`: {other:?}"),
    }
}

fn boxes(e: &Engine) -> Detection2DArray {
    match now(e, "detections") {
        Some(Payload::Detections2D(d)) => d,
        other => panic!("no 2D detections: {other:?}"),
    }
}

fn dets3(e: &Engine) -> Detection3DArray {
    match now(e, "detections") {
        Some(Payload::Detections3D(d)) => d,
        other => panic!("no 3D detections: {other:?}"),
    }
}

fn body(e: &Engine, name: &str) -> usize {
    e.ctx.data().model().name_to_id(MjtObjBase::mjOBJ_BODY, name).expect("body exists")
}

fn class_at(img: &Image, u: u32, v: u32) -> u8 {
    img.data[(v * img.step + u) as usize]
}

fn instance_at(img: &Image, u: u32, v: u32) -> u16 {
    let i = (v * img.step + 2 * u) as usize;
    u16::from_le_bytes(img.data[i..i + 2].try_into().unwrap())
}

#[test]
fn classes_instances_and_declaration_order() {
    let mut e = engine(&format!("{SEG}{CRATE}"), 1);
    e.step_n(50).unwrap();
    let l = image(&e, "labels");
    assert_eq!((l.width, l.height, l.encoding.as_str(), l.step), (320, 240, "mono8", 320));
    assert_eq!(l.frame_id, "camera_optical_frame");
    let i = image(&e, "instances");
    assert_eq!((i.encoding.as_str(), i.step), ("16UC1", 640));
    let (a, b, rack) = (body(&e, "graspable_a"), body(&e, "graspable_b"), body(&e, "rack"));
    let crate_body = body(&e, "crate");
    // pixels the projection puts on each object's near face (fx = fy = 120 / tan 22.5° = 289.7)
    for (what, (u, v), class, inst) in [
        ("graspable_a: the glob's class", (79, 184), 1, a),
        ("graspable_b: declared first, so `special` wins over the glob", (175, 89), 5, b),
        ("the crate entity", (272, 184), 2, crate_body),
        ("board_1: the geoms selector", (160, 175), 3, rack),
        ("board_2: the same rack, the same instance", (160, 147), 3, rack),
        ("the wall: unlabelled", (160, 20), 0, 0),
    ] {
        assert_eq!(class_at(&l, u, v), class, "class of {what} at ({u}, {v})");
        assert_eq!(instance_at(&i, u, v) as usize, inst, "instance of {what} at ({u}, {v})");
    }
    assert!(ep(&e, "image").is_none(), "the colour stream is off by default");
    assert!(matches!(now(&e, "camera_info"), Some(Payload::CameraInfo(_))));

    let d = boxes(&e);
    assert_eq!(d.frame_id, "camera_optical_frame");
    let got: Vec<(String, String)> =
        d.detections.iter().map(|x| (x.id.clone(), x.class_id.clone())).collect();
    let mut want = vec![
        (a.to_string(), "1".to_string()),
        (b.to_string(), "5".to_string()),
        (rack.to_string(), "3".to_string()),
        (crate_body.to_string(), "2".to_string()),
    ];
    want.sort_by_key(|(id, _)| id.parse::<usize>().unwrap());
    assert_eq!(got, want, "one detection per visible instance, by body id");
    assert!(d.detections.iter().all(|x| x.score == 1.0));
}

#[test]
fn the_box_of_a_known_object_is_the_projection_of_its_corners() {
    let mut e = engine(&format!("{SEG}{CRATE}"), 1);
    e.step_n(50).unwrap();
    let Some(Payload::CameraInfo(CameraInfo { p, .. })) = now(&e, "camera_info") else {
        panic!("no camera_info")
    };
    let a = body(&e, "graspable_a");
    let det = boxes(&e).detections.into_iter().find(|x| x.id == a.to_string()).expect("a's box");
    // corners in the optical frame: x right = -y world, y down = -(z - 0.5), z forward = x world
    let (mut umin, mut umax, mut vmin, mut vmax) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for x in [0.9, 1.1] {
        for y in [0.15, 0.35] {
            for z in [0.2, 0.4] {
                let (ox, oy, oz) = (-y, -(z - 0.5), x);
                let u = (p[0] * ox + p[2] * oz) / oz;
                let v = (p[5] * oy + p[6] * oz) / oz;
                (umin, umax, vmin, vmax) = (umin.min(u), umax.max(u), vmin.min(v), vmax.max(v));
            }
        }
    }
    let (cu, cv, su, sv) = (det.center[0], det.center[1], det.size[0], det.size[1]);
    let edges = [cu - su / 2.0, cu + su / 2.0, cv - sv / 2.0, cv + sv / 2.0];
    println!(
        "box edges {edges:?}; projected corners u [{umin:.2}, {umax:.2}] v [{vmin:.2}, {vmax:.2}]"
    );
    for (got, want) in edges.iter().zip([umin, umax, vmin, vmax]) {
        assert!((got - want).abs() <= 1.0, "box edge {got} vs projected {want}: {edges:?}");
    }
}

#[test]
fn min_pixels_drops_small_instances() {
    let mut e = engine(&format!("{}      min_pixels: 1000\n{CRATE}", SEG), 1);
    e.step_n(50).unwrap();
    let ids: Vec<String> = boxes(&e).detections.into_iter().map(|x| x.id).collect();
    let b = body(&e, "graspable_b").to_string();
    assert!(!ids.contains(&b), "graspable_b (~900 px) is below 1000: {ids:?}");
    assert!(ids.contains(&body(&e, "graspable_a").to_string()), "graspable_a (~5000 px) stays");
}

#[test]
fn a_deleted_object_leaves_labels_and_detections_and_comes_back() {
    let mut e = engine(&format!("{SEG}{CRATE}"), 1);
    let crate_body = body(&e, "crate").to_string();
    e.step_n(50).unwrap();
    assert_eq!(class_at(&image(&e, "labels"), 272, 184), 2);
    roqsim::engine::presence::set_present(&mut e.ctx, "crate", false).unwrap();
    e.step_n(50).unwrap();
    assert_eq!(class_at(&image(&e, "labels"), 272, 184), 0, "deleted: no label pixels");
    assert_eq!(instance_at(&image(&e, "instances"), 272, 184), 0);
    assert!(boxes(&e).detections.iter().all(|x| x.id != crate_body), "and no box");
    roqsim::engine::presence::set_present(&mut e.ctx, "crate", true).unwrap();
    e.step_n(50).unwrap();
    assert_eq!(class_at(&image(&e, "labels"), 272, 184), 2, "spawned again: back");
    assert!(boxes(&e).detections.iter().any(|x| x.id == crate_body));
}

#[test]
fn lazy_and_the_colour_switch() {
    let mut e = engine(&format!("{SEG}{CRATE}"), 1);
    for s in ["labels", "instances", "detections"] {
        let id = ep(&e, s).unwrap();
        e.ctx.interface.get_mut(id).has_subscribers = Some(false);
    }
    e.step_n(100).unwrap();
    assert_eq!(e.ctx.renderer.frames(), 0, "nobody listens: nothing renders");
    assert!(now(&e, "camera_info").is_some(), "camera_info still describes the lens");
    let id = ep(&e, "detections").unwrap();
    e.ctx.interface.get_mut(id).has_subscribers = Some(true);
    e.step_n(50).unwrap();
    assert_eq!(e.ctx.renderer.frames(), 1);
    assert_eq!(e.ctx.renderer.passes(), 1, "a label pass only, no colour pass");
    assert!(now(&e, "labels").is_none() && now(&e, "detections").is_some());

    let mut e = engine(&format!("{}      color: true\n{CRATE}", SEG), 1);
    e.step_n(50).unwrap();
    let c = image(&e, "image");
    assert_eq!((c.width, c.height, c.encoding.as_str()), (320, 240, "rgb8"));
    let i = (184 * c.step + 3 * 272) as usize;
    let px = &c.data[i..i + 3];
    assert!(
        px[0] > 2 * px[1].max(px[2]) && px[0] > 40,
        "the red crate where its labels are: {px:?}"
    );
    assert_eq!(e.ctx.renderer.frames(), 1, "colour and labels: one frame");
}

#[test]
fn segmentation_refusals_name_the_key() {
    let p = "segmentation_camera";
    let c = |classes: &str| {
        format!("  - segmentation_camera: {{camera: cam, classes: [{classes}]}}\n{CRATE}")
    };
    refused(
        &c("{class_id: 0, name: bg, bodies: [rack]}"),
        p,
        "classes[0].class_id",
        "0 is reserved for \"nothing labelled here\" (a background class would be indistinguishable from an unlabelled geom); use 1..=255",
    );
    refused(
        &c("{class_id: 300, name: x, bodies: [rack]}"),
        p,
        "classes[0].class_id",
        "must be 1..=255 (the class image is mono8), got 300",
    );
    refused(
        &c("{class_id: 1, name: a, bodies: [rack]}, {class_id: 1, name: b, geoms: [board_1]}"),
        p,
        "classes[1].class_id",
        "1 is already the id of classes[0] (`a`)",
    );
    refused(
        &c("{class_id: 1, name: a}"),
        p,
        "classes[0]",
        "selects nothing: give `bodies`, `entities` or `geoms`",
    );
    refused(
        "  - segmentation_camera: {camera: cam}\n",
        p,
        "classes",
        "required: the vocabulary, e.g. `- {class_id: 1, name: parcel, bodies: [\"graspable_*\"]}`",
    );
    refused(
        "  - segmentation_camera: {camera: cam, min_pixels: 0, classes: [{class_id: 1, name: a, bodies: [rack]}]}\n",
        p,
        "min_pixels",
        "must be >= 1 (px)",
    );
    refused(
        "  - segmentation_camera: {camera: cam, topics: {depth: x}, classes: [{class_id: 1, name: a, bodies: [rack]}]}\n",
        p,
        "topics.depth",
        "no endpoint role `depth` here; the roles are: image, image_compressed, camera_info, labels, instances, detections",
    );
    refused(
        "  - segmentation_camera: {classes: [{class_id: 1, name: a, bodies: [rack]}]}\n",
        p,
        "camera",
        "required: name the MJCF <camera> segmentation_camera renders through (or a `site:` with `fovy`)",
    );
    assert_eq!(
        setup_error_of(world(&c("{class_id: 1, name: walker, entities: [walker_1]}"))),
        "[segmentation_camera] configure: classes[0].entities: no entity `walker_1`; entities: [crate]"
    );
    assert_eq!(
        setup_error_of(world(&c("{class_id: 1, name: shelf, geoms: [\"shelf_*\"]}"))),
        "[segmentation_camera] configure: classes[0] (`shelf`): its selectors match no geom of the model"
    );
}

/// A robot (`robot.xml`: one body `robot`, no joint, so welded) at (0.2, 0.1, 0.3) turned 0.5 rad,
/// carrying an object_detector.
fn detector(extra: &str) -> String {
    format!(
        "  - spawn_robot: {{model: robot.xml, pose: {{position: {{x: 0.2, y: 0.1, z: 0.3}}, orientation: {{yaw: 0.5}}}}}}\n    name: robot\n    components:\n      - object_detector:\n          objects:\n            - {{body: graspable_a, class_id: parcel, size: [0.2, 0.2, 0.2]}}\n            - {{body: crate, class_id: crate, size: [0.2, 0.2, 0.2]}}\n{extra}{CRATE}"
    )
}

/// Ground truth computed from the rotation matrix (not the plugin's quaternion path).
fn truth(e: &Engine, object: &str) -> [f64; 3] {
    let d = e.ctx.data();
    let (f, o) = (body(e, "robot"), body(e, object));
    let (pf, r, po) = (d.xpos()[f], d.xmat()[f], d.xpos()[o]);
    let dp = [po[0] - pf[0], po[1] - pf[1], po[2] - pf[2]];
    [0, 1, 2].map(|i| (0..3).map(|k| r[3 * k + i] * dp[k]).sum())
}

#[test]
fn detections_with_noise_off_are_the_ground_truth() {
    let mut e = engine(&detector(""), 1);
    e.step_n(100).unwrap();
    let d = dets3(&e);
    assert_eq!(d.frame_id, "robot", "the robot's own body frame, never map");
    assert_eq!(d.detections.len(), 2);
    let (s, c) = (0.25f64.sin(), 0.25f64.cos());
    for (det, (name, class)) in
        d.detections.iter().zip([("graspable_a", "parcel"), ("crate", "crate")])
    {
        let t = truth(&e, name);
        println!("{name}: detected {:?}, truth {t:?}", det.position);
        for i in 0..3 {
            assert!((det.position[i] - t[i]).abs() <= 1e-12, "{name}: {:?} vs {t:?}", det.position);
        }
        let q = det.orientation;
        let want = [0.0, 0.0, -s, c];
        assert!(q.iter().zip(want).all(|(a, b)| (a - b).abs() <= 1e-12), "{name}: {q:?}");
        assert_eq!((det.class_id.as_str(), det.id.as_str(), det.score), (class, name, 1.0));
        assert_eq!(det.size, [0.2, 0.2, 0.2]);
        assert!(det.covariance.iter().all(|v| *v == 0.0));
    }
    // a's truth in numbers: (0.8, 0.15, 0) from the robot, seen from a frame turned by 0.5 rad
    let t = truth(&e, "graspable_a");
    let (s5, c5) = (0.5f64.sin(), 0.5f64.cos());
    let want = [c5 * 0.8 + s5 * 0.15, -s5 * 0.8 + c5 * 0.15, 0.0];
    assert!(t.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-9), "{t:?} vs {want:?}");
}

#[test]
fn the_error_model_is_seeded_biased_and_shaped() {
    let cfg = "          position_stddev: 0.01\n          orientation_stddev: 0.02\n          position_bias: [0.05, 0.0, -0.02]\n";
    let run = |seed| {
        let mut e = engine(&detector(cfg), seed);
        let mut errs = Vec::new();
        for _ in 0..200 {
            e.step_n(50).unwrap();
            let d = dets3(&e);
            let t = truth(&e, "graspable_a");
            let p = d.detections[0].position;
            errs.push([p[0] - t[0], p[1] - t[1], p[2] - t[2]]);
            assert_eq!(d.detections[0].covariance[0], 1e-4);
            assert_eq!(d.detections[0].covariance[21], 4e-4);
        }
        errs
    };
    let (a, b, c) = (run(7), run(7), run(8));
    assert_eq!(a, b, "same seed, same noise");
    assert_ne!(a, c, "another seed, other noise");
    for (k, bias) in [0.05, 0.0, -0.02].into_iter().enumerate() {
        let n = a.len() as f64;
        let mean = a.iter().map(|x| x[k]).sum::<f64>() / n;
        let sd = (a.iter().map(|x| (x[k] - mean).powi(2)).sum::<f64>() / n).sqrt();
        println!("axis {k}: mean error {mean:.5} m (bias {bias}), sd {sd:.5} m (model 0.01)");
        assert!((mean - bias).abs() < 4.0 * 0.01 / n.sqrt(), "axis {k}: mean {mean}");
        assert!((sd / 0.01 - 1.0).abs() < 0.15, "axis {k}: sd {sd}");
    }
    // a bias alone draws nothing and is exact
    let mut e = engine(&detector("          position_bias: [0.05, 0.0, -0.02]\n"), 1);
    e.step_n(100).unwrap();
    let (p, t) = (dets3(&e).detections[0].position, truth(&e, "graspable_a"));
    assert!((p[0] - t[0] - 0.05).abs() < 1e-12 && (p[2] - t[2] + 0.02).abs() < 1e-12);
}

#[test]
fn dropout_range_and_presence() {
    let mut e = engine(&detector("          dropout_percent: 100\n"), 1);
    e.step_n(100).unwrap();
    assert!(dets3(&e).detections.is_empty(), "100 % dropout: nothing detected");
    let mut e = engine(&detector("          dropout_percent: 50\n"), 1);
    let mut seen = 0;
    for _ in 0..100 {
        e.step_n(50).unwrap();
        seen += dets3(&e).detections.len();
    }
    println!("50 % dropout: {seen} of 200 detections");
    assert!((70..=130).contains(&seen), "about half: {seen}");
    // the crate is 0.918 m from the robot, graspable_a 0.814 m
    let mut e = engine(&detector("          max_range: 0.85\n          confidence: 0.7\n"), 1);
    e.step_n(100).unwrap();
    let d = dets3(&e);
    let ids: Vec<&str> = d.detections.iter().map(|x| x.id.as_str()).collect();
    assert_eq!(ids, ["graspable_a"], "only what is within 0.85 m");
    assert_eq!(d.detections[0].score, 0.7);

    let mut e = engine(&detector(""), 1);
    e.step_n(100).unwrap();
    roqsim::engine::presence::set_present(&mut e.ctx, "crate", false).unwrap();
    e.step_n(50).unwrap();
    let ids: Vec<String> = dets3(&e).detections.into_iter().map(|x| x.id).collect();
    assert_eq!(ids, ["graspable_a"], "a deleted object is not detected");
    roqsim::engine::presence::set_present(&mut e.ctx, "crate", true).unwrap();
    e.step_n(50).unwrap();
    let ids: Vec<String> = dets3(&e).detections.into_iter().map(|x| x.id).collect();
    assert_eq!(ids, ["graspable_a", "crate"], "spawned again: detected again");
}

#[test]
fn two_objects_naming_one_body_are_refused_naming_both() {
    // the entity `crate` is its root body `crate`: a third entry naming it again would report it
    // twice under two classes
    let extra = "            - {body: crate, class_id: box, size: [0.1, 0.1, 0.1]}\n";
    assert_eq!(
        setup_error_of(world(&detector(extra))),
        "[robot.object_detector] configure: objects[2].body: `crate` is the body `crate` that objects[1] (`crate`) already names; one body is one detection (two would report it twice under two classes): keep one entry, or name another body"
    );
}

#[test]
fn detector_refusals_name_the_key() {
    let p = "object_detector";
    refused(
        &detector("          dropout_percent: 150\n"),
        p,
        "dropout_percent",
        "must be within 0..=100 (%), got 150",
    );
    refused(
        &detector("          confidence: 2\n"),
        p,
        "confidence",
        "must be within 0..=1 (a hypothesis score), got 2",
    );
    refused(
        &detector("          position_stddev: -1\n"),
        p,
        "position_stddev",
        "must be within [0, 100] m, got -1",
    );
    refused(
        &detector("          max_range: -0.5\n"),
        p,
        "max_range",
        "must be within [0, 1000000] m, got -0.5",
    );
    // 1e300 would publish a covariance of inf (stddev squared): bounded.
    refused(
        &detector("          position_stddev: 1.0e300\n"),
        p,
        "position_stddev",
        "must be within [0, 100] m, got 1e300",
    );
    refused(
        &detector("          orientation_stddev: 1.0e300\n"),
        p,
        "orientation_stddev",
        "must be within [0, 3.141592653589793] rad, got 1e300",
    );
    refused(
        &detector("          position_bias: [0.0, 1.0e300, 0.0]\n"),
        p,
        "position_bias",
        "each axis must be within ±100 m, got [0.0, 1e300, 0.0]",
    );
    // Nested under a prop, not a robot: refused at load, naming the entry and where it goes.
    refused(
        "  - box: {pose: {position: {x: 0.2, y: 0.1, z: 0.3}}, size: [0.2, 0.2, 0.2]}\n    name: crate2\n    components:\n      - object_detector: {objects: [{body: rack, class_id: r, size: [0.1, 0.1, 0.1]}]}\n",
        p,
        "components.crate2.object_detector",
        "`object_detector` reports poses in a link of the robot it is nested under, but `crate2` is a `box`, not a robot; move this entry into the `components:` of a spawn_robot or spawn_arm entry",
    );
    refused(
        "  - spawn_robot: {model: robot.xml, pose: {position: {x: 0.2, y: 0.1, z: 0.3}}}\n    name: robot\n    components:\n      - object_detector: {objects: []}\n",
        p,
        "objects",
        "required: the objects to detect, e.g. `- {body: graspable_carton, class_id: parcel, size: [0.04, 0.024, 0.09]}`",
    );
    refused(
        "  - spawn_robot: {model: robot.xml, pose: {position: {x: 0.2, y: 0.1, z: 0.3}}}\n    name: robot\n    components:\n      - object_detector: {objects: [{body: rack, class_id: r, size: [0.1, 0, 0.1]}]}\n",
        p,
        "objects[0].size",
        "each side must be > 0 (m), got [0.1, 0.0, 0.1]",
    );
    assert_eq!(
        setup_error_of(world("  - spawn_robot: {model: robot.xml, pose: {position: {x: 0.2, y: 0.1, z: 0.3}}}\n    name: robot\n    components:\n      - object_detector: {objects: [{body: parcel_9, class_id: p, size: [0.1, 0.1, 0.1]}]}\n")),
        "[robot.object_detector] configure: objects[0].body: no body or entity `parcel_9` in the model; entities: [robot]"
    );
    assert_eq!(
        setup_error_of(world("  - spawn_robot: {model: robot.xml, pose: {position: {x: 0.2, y: 0.1, z: 0.3}}}\n    name: robot\n    components:\n      - object_detector: {frame: base_footprint, objects: [{body: rack, class_id: r, size: [0.1, 0.1, 0.1]}]}\n")),
        "[robot.object_detector] configure: frame: entity `robot` has no body `base_footprint` (looked up as `base_footprint`); its bodies are [robot]"
    );
}
