//! Camera plugins (issue 15): measured depth, point cloud geometry, CameraInfo vs pixels,
//! presence, laziness (render counts), noise determinism, device models and their frames, and
//! every load-time refusal. Needs EGL (Mesa's software device; scripts/setup.sh installs it).

mod common;

use common::{assert_refused_ending, endpoint, engine_of, scene_world, setup_error_of, SceneWorld};
use mujoco_rs::prelude::*;
use roqsim::context::payload::{CameraInfo, CompressedImage, Image, PointCloud2, Transform};
use roqsim::context::Payload;
use roqsim::render::view::{optical_from_mujoco, Pose};
use roqsim::Engine;

/// Camera `cam` at (0, 0, 0.5) looking along +x (fovy 45); a wall whose near face is at
/// x = 1.500 (1 m tall: the top rows see over it); a table-top box whose near top-left corner is at (1.0, 0.2, 0.3).
const SCENE: &str = r#"<mujoco model="camera_scene">
  <option timestep="0.002"/>
  <worldbody>
    <light pos="0 0 4" dir="0 0 -1" directional="true"/>
    <geom name="floor" type="plane" size="20 20 0.1" rgba="0.5 0.5 0.5 1"/>
    <camera name="cam" pos="0 0 0.5" xyaxes="0 -1 0 0 0 1" fovy="45"/>
    <site name="eye" pos="0 0 0.5"/>
    <geom name="wall" type="box" pos="1.55 0 0.5" size="0.05 3 0.5" rgba="0.9 0.9 0.9 1"/>
    <geom name="block" type="box" pos="1.1 0.3 0.2" size="0.1 0.1 0.1" rgba="0.1 0.2 0.9 1"/>
  </worldbody>
</mujoco>
"#;

/// The world `components:` over [`SCENE`], as loaded.
fn world(components: &str) -> SceneWorld {
    scene_world(SCENE, components)
}

/// An engine of [`world`] with `seed`; panics on a refusal or setup error.
fn engine(components: &str, seed: u64) -> Engine {
    engine_of(world(components), Some(seed)).unwrap_or_else(|e| panic!("{e}"))
}

#[track_caller]
fn refused(components: &str, path: &str, message: &str) {
    // the loader appends the plugin ref to a plugin's own message
    let plugin = components.trim_start_matches([' ', '-']).split(':').next().unwrap_or_default();
    assert_refused_ending(world(components).1, path, &format!("{message} ({plugin})"));
}

/// The payload `name` published at the current tick, if any.
fn now(e: &Engine, name: &str) -> Option<Payload> {
    let (p, t) = e.ctx.interface.get(endpoint(e, name)).latest()?;
    (t == e.ctx.tick).then(|| p.clone())
}

fn image(e: &Engine, name: &str) -> Image {
    match now(e, name) {
        Some(Payload::Image(i)) => i,
        other => panic!("no image on `{name}`: {other:?}"),
    }
}

fn info(e: &Engine, name: &str) -> CameraInfo {
    match now(e, name) {
        Some(Payload::CameraInfo(i)) => i,
        other => panic!("no camera_info on `{name}`: {other:?}"),
    }
}

fn f32_at(img: &Image, u: u32, v: u32) -> f32 {
    let i = (v * img.step + 4 * u) as usize;
    f32::from_le_bytes(img.data[i..i + 4].try_into().unwrap())
}

fn u16_at(img: &Image, u: u32, v: u32) -> u16 {
    let i = (v * img.step + 2 * u) as usize;
    u16::from_le_bytes(img.data[i..i + 2].try_into().unwrap())
}

/// The optical frame of MJCF camera `name` now.
fn optical(e: &Engine, name: &str) -> Pose {
    let d = e.ctx.data();
    let id = d.model().name_to_id(MjtObjBase::mjOBJ_CAMERA, name).expect("camera exists");
    optical_from_mujoco(&Pose { pos: d.cam_xpos()[id], mat: d.cam_xmat()[id] })
}

const CAM: &str =
    "  - camera: {camera: cam, width: 160, height: 120, rate_hz: 10, depth: true, points: true}\n";

#[test]
fn wall_depth_reads_one_and_a_half_metres() {
    let mut e = engine(CAM, 1);
    e.step_n(50).unwrap();
    let d = image(&e, "depth");
    assert_eq!((d.width, d.height, d.encoding.as_str(), d.step), (160, 120, "32FC1", 640));
    assert_eq!(d.frame_id, "camera_optical_frame");
    for (u, v) in [(79, 59), (80, 59), (79, 60), (80, 60), (70, 40), (90, 50)] {
        let z = f32_at(&d, u, v);
        assert!((z - 1.5).abs() <= 1e-3, "pixel ({u}, {v}) reads {z} m, the wall is at 1.500 m");
    }
    // straight up the image the camera sees the sky: nothing measured is +inf (REP 118)
    assert_eq!(f32_at(&d, 80, 0), f32::INFINITY);
    let c = image(&e, "image");
    assert_eq!((c.encoding.as_str(), c.step, c.data.len()), ("rgb8", 480, 160 * 120 * 3));
    let i = (60 * c.step + 3 * 80) as usize;
    let px = &c.data[i..i + 3];
    assert!(px[0] == px[1] && px[1] == px[2] && px[0] > 100, "the white wall: {px:?}");

    // 16UC1: millimetres
    let mut e = engine(&CAM.replace("points: true", "depth_encoding: 16UC1"), 1);
    e.step_n(50).unwrap();
    let d = image(&e, "depth");
    assert_eq!((d.encoding.as_str(), d.step), ("16UC1", 320));
    assert_eq!(u16_at(&d, 80, 60), 1500);
    assert_eq!(u16_at(&d, 80, 0), 0, "invalid depth is 0 in 16UC1");
}

#[test]
fn too_close_and_too_far_follow_the_band() {
    let mut e = engine(&CAM.replace("points: true", "clip_near: 1.6, clip_far: 5.0"), 1);
    e.step_n(50).unwrap();
    assert_eq!(f32_at(&image(&e, "depth"), 80, 60), f32::NEG_INFINITY, "wall nearer than min-Z");
    let mut e = engine(&CAM.replace("points: true", "clip_near: 0.2, clip_far: 1.4"), 1);
    e.step_n(50).unwrap();
    assert_eq!(f32_at(&image(&e, "depth"), 80, 60), f32::INFINITY, "wall beyond the range");
}

#[test]
fn camera_info_is_the_render_projection_and_the_cloud_corner_is_within_2mm() {
    let mut e = engine(&CAM.replace("width: 160, height: 120", "width: 640, height: 480"), 1);
    e.step_n(50).unwrap();
    let ci = info(&e, "camera_info");
    let fy = 240.0 / (22.5f64).to_radians().tan();
    assert_eq!((ci.width, ci.height, ci.distortion_model.as_str()), (640, 480, "plumb_bob"));
    assert_eq!(ci.k, [fy, 0.0, 319.5, 0.0, fy, 239.5, 0.0, 0.0, 1.0]);
    assert_eq!(ci.p, [fy, 0.0, 319.5, 0.0, 0.0, fy, 239.5, 0.0, 0.0, 0.0, 1.0, 0.0]);
    assert_eq!(ci.d, vec![0.0; 5]);
    assert_eq!(info(&e, "depth_info").k, ci.k);

    let Some(Payload::PointCloud2(pc)) = now(&e, "points") else { panic!("no cloud") };
    assert_eq!((pc.width, pc.height, pc.point_step, pc.row_step), (640, 480, 16, 10240));
    let names: Vec<&str> = pc.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["x", "y", "z", "rgb"]);
    assert!(!pc.is_dense, "the sky is NaN points");
    let o = optical(&e, "cam");
    // the block's top-left near corner (camera's view: x toward -y world is right)
    let corner = [1.0, 0.4, 0.3];
    let (best, at) = nearest(&pc, &o, corner);
    println!("nearest cloud point to the block corner: {:.2} mm at pixel {at:?}", best * 1e3);
    assert!(best < 2e-3, "corner within 2 mm, got {:.2} mm", best * 1e3);
    // the cloud point at the image centre is on the wall, 1.5 m ahead in the optical frame
    let p = point(&pc, 320, 240);
    assert!((p[2] - 1.5).abs() < 1e-3 && (p[0] as f64 - 0.5 * 1.5 / fy).abs() < 1e-4, "{p:?}");
}

fn point(pc: &PointCloud2, u: u32, v: u32) -> [f32; 3] {
    let i = (v * pc.row_step + u * pc.point_step) as usize;
    let f = |o: usize| f32::from_le_bytes(pc.data[i + o..i + o + 4].try_into().unwrap());
    [f(0), f(4), f(8)]
}

fn nearest(pc: &PointCloud2, o: &Pose, world: [f64; 3]) -> (f64, (u32, u32)) {
    let mut best = (f64::INFINITY, (0, 0));
    for v in 0..pc.height {
        for u in 0..pc.width {
            let p = point(pc, u, v);
            if !p[0].is_finite() {
                continue;
            }
            let w = o.apply([p[0] as f64, p[1] as f64, p[2] as f64]);
            let d =
                ((w[0] - world[0]).powi(2) + (w[1] - world[1]).powi(2) + (w[2] - world[2]).powi(2))
                    .sqrt();
            if d < best.0 {
                best = (d, (u, v));
            }
        }
    }
    best
}

#[test]
fn lazy_renders_only_for_subscribers() {
    let mut e = engine(CAM, 1);
    let streams = ["image", "image_compressed", "depth", "points"];
    for s in streams {
        let id = endpoint(&e, s);
        e.ctx.interface.get_mut(id).has_subscribers = Some(false);
    }
    e.step_n(200).unwrap();
    assert_eq!(e.ctx.renderer.frames(), 0, "nobody listens: nothing renders");
    assert!(!e.ctx.renderer.is_open(), "and GL is never opened");
    assert!(now(&e, "camera_info").is_some(), "camera_info still describes the lens");
    assert!(now(&e, "image").is_none());

    // a depth subscriber alone: one render per frame, no colour, no JPEG, no cloud
    let id = endpoint(&e, "depth");
    e.ctx.interface.get_mut(id).has_subscribers = Some(true);
    e.step_n(100).unwrap();
    assert_eq!(e.ctx.renderer.frames(), 2, "10 Hz for 0.2 s");
    assert!(now(&e, "depth").is_some());
    for s in ["image", "image_compressed", "points"] {
        assert!(now(&e, s).is_none(), "`{s}` has no subscriber and is not produced");
    }
    // a compressed subscriber alone gets JPEG frames; the raw image is not published
    e.ctx.interface.get_mut(id).has_subscribers = Some(false);
    let jid = endpoint(&e, "image_compressed");
    e.ctx.interface.get_mut(jid).has_subscribers = Some(true);
    e.step_n(50).unwrap();
    assert_eq!(e.ctx.renderer.frames(), 3);
    let Some(Payload::CompressedImage(CompressedImage { format, data, .. })) =
        now(&e, "image_compressed")
    else {
        panic!("no JPEG")
    };
    assert_eq!(format, "rgb8; jpeg compressed bgr8");
    assert_eq!(&data[..2], &[0xFF, 0xD8], "JPEG SOI");
    assert_eq!(&data[data.len() - 2..], &[0xFF, 0xD9], "JPEG EOI");
    assert!(now(&e, "image").is_none() && now(&e, "depth").is_none());
}

#[test]
fn a_world_without_a_consumed_camera_never_touches_gl() {
    let mut e = engine("  - lidar: {site: eye}\n", 1);
    e.step_n(100).unwrap();
    assert!(!e.ctx.renderer.is_open());
}

#[test]
fn a_deleted_object_disappears_and_comes_back() {
    let comps = format!(
        "{CAM}  - box: {{pose: {{position: {{x: 0.8, y: 0.0, z: 0.5}}}}, size: [0.2, 0.2, 0.2], color: [1, 0, 0, 1]}}\n    name: crate\n"
    );
    let mut e = engine(&comps, 1);
    e.step_n(50).unwrap();
    let at = |e: &Engine| {
        (f32_at(&image(e, "depth"), 80, 60), image(e, "image").data[(60 * 480 + 240) as usize])
    };
    let (z, r) = at(&e);
    assert!((z - 0.7).abs() < 1e-3 && r > 150, "the crate's near face at 0.7 m, red: {z} {r}");
    roqsim::engine::presence::set_present(&mut e.ctx, "crate", false).unwrap();
    e.step_n(50).unwrap();
    let (z, r) = at(&e);
    assert!((z - 1.5).abs() < 1e-3, "deleted: depth sees the wall, got {z}");
    let p = point_at_centre(&e);
    assert!((p - 1.5).abs() < 1e-3, "and so does the cloud: {p}");
    assert!(
        r < 250 && image(&e, "image").data[(60 * 480 + 241) as usize] == r,
        "and colour the white wall"
    );
    roqsim::engine::presence::set_present(&mut e.ctx, "crate", true).unwrap();
    e.step_n(50).unwrap();
    let (z, _) = at(&e);
    assert!((z - 0.7).abs() < 2e-3, "spawned again: back, {z}");
}

fn point_at_centre(e: &Engine) -> f32 {
    let Some(Payload::PointCloud2(pc)) = now(e, "points") else { panic!("no cloud") };
    point(&pc, 80, 60)[2]
}

#[test]
fn stereo_noise_is_seeded_and_shaped_like_the_datasheet() {
    let comps = CAM.replace("points: true", "depth_noise: true, depth_baseline: 0.05");
    let run = |seed| {
        let mut e = engine(&comps, seed);
        e.step_n(50).unwrap();
        image(&e, "depth")
    };
    let (a, b, c) = (run(7), run(7), run(8));
    assert!(a.data == b.data, "same seed, same noise");
    assert!(a.data != c.data, "another seed, other noise");
    // sigma(1.5 m) = 1.5^2 * 0.08 / (fx * 0.05) with fx = 60 / tan(22.5 deg) = 144.85 px
    let sigma = 2.25 * 0.08 / (60.0 / 22.5f64.to_radians().tan() * 0.05);
    // rows 15..55 see only the wall (the block is below the horizon, the sky above row 11)
    let wall: Vec<f64> = (15..55)
        .flat_map(|v| (20..140).map(move |u| (u, v)))
        .map(|(u, v)| f32_at(&a, u, v) as f64 - 1.5)
        .collect();
    let n = wall.len() as f64;
    let mean = wall.iter().sum::<f64>() / n;
    let sd = (wall.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
    println!(
        "stereo noise at 1.5 m: mean {mean:.5} m, sd {sd:.5} m (model {sigma:.5} m) over {n} px"
    );
    assert!(mean.abs() < 4.0 * sigma / n.sqrt(), "zero-mean: {mean}");
    assert!((sd / sigma - 1.0).abs() < 0.05, "sd {sd} vs the model's {sigma}");
}

#[test]
fn a_site_camera_renders_like_the_mjcf_camera() {
    let mut a = engine(CAM, 1);
    let mut b = engine(&CAM.replace("camera: cam", "site: eye, fovy: 45"), 1);
    a.step_n(50).unwrap();
    b.step_n(50).unwrap();
    assert!(image(&a, "depth").data == image(&b, "depth").data, "site and camera: same depth");
    assert_eq!(info(&a, "camera_info").k, info(&b, "camera_info").k);
}

#[test]
fn device_models_publish_realsense_names_and_the_tf_optical_frame_matches_the_render() {
    let comps = "  - spawn_sensor: {model: realsense_d435, pos: [0.0, 0.0, 0.5]}\n    name: camera\n    components:\n      - realsense_d435: {width: 160, height: 120, rate_hz: 10, points: true}\n";
    let mut e = engine(comps, 1);
    let topics: Vec<(String, String)> = e
        .ctx
        .interface
        .all()
        .iter()
        .filter_map(|x| Some((x.name.clone(), x.get_hint("ros2", "topic")?.to_string())))
        .collect();
    for (role, topic) in [
        ("image", "camera/color/image_raw"),
        ("image_compressed", "camera/color/image_raw/compressed"),
        ("camera_info", "camera/color/camera_info"),
        ("depth", "camera/depth/image_rect_raw"),
        ("depth_info", "camera/depth/camera_info"),
        ("points", "camera/depth/color/points"),
    ] {
        assert!(
            topics.contains(&(role.to_string(), topic.to_string())),
            "{role} on {topic}: {topics:?}"
        );
    }
    e.step_n(50).unwrap();
    let d = image(&e, "depth");
    assert_eq!(d.frame_id, "camera_color_optical_frame");
    // the wall is 1.5 m from the world origin; the colour imager sits 4.3 mm ahead of the mount
    let z = f32_at(&d, 80, 60);
    assert!((z - (1.5 - 0.0043)).abs() < 1e-3, "wall at {z}");
    // the static TF chain names the realsense-ros frames, and composing it from the mount gives
    // exactly the pose the frame was rendered from
    let Some(Payload::Transforms(tfs)) = e
        .ctx
        .interface
        .all()
        .iter()
        .find(|x| x.name == "tf_static")
        .and_then(|x| x.latest().map(|(p, _)| p.clone()))
    else {
        panic!("no tf_static")
    };
    let chain = ["world", "camera_link", "camera_color_frame", "camera_color_optical_frame"];
    let mut pose = Pose { pos: [0.0; 3], mat: [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0] };
    for w in chain.windows(2) {
        let t: &Transform = tfs
            .iter()
            .find(|t| t.parent == w[0] && t.child == w[1])
            .unwrap_or_else(|| panic!("no {} -> {} in {tfs:?}", w[0], w[1]));
        pose = compose(&pose, t);
    }
    let o = optical(&e, "camera_color");
    for i in 0..3 {
        assert!((pose.pos[i] - o.pos[i]).abs() < 1e-9, "{:?} vs {:?}", pose.pos, o.pos);
    }
    for i in 0..9 {
        assert!((pose.mat[i] - o.mat[i]).abs() < 1e-9, "{:?} vs {:?}", pose.mat, o.mat);
    }
}

#[test]
fn the_oakd_publishes_aligned_16uc1_depth_on_depthai_ros_topics_by_default() {
    // depthai-ros's default RGBD pipeline: /oak/stereo/image_raw in 16UC1 millimetres, aligned
    // to the colour camera (i_align_depth), so stamped in oak_rgb_camera_optical_frame.
    let comps = "  - spawn_sensor: {model: oakd_pro, pos: [0.0, 0.0, 0.5]}\n    name: oak\n    components:\n      - oakd_camera: {width: 160, height: 120, rate_hz: 10}\n";
    let mut e = engine(comps, 1);
    let topic = |role: &str| {
        e.ctx.interface.get(endpoint(&e, role)).get_hint("ros2", "topic").map(str::to_string)
    };
    assert_eq!(topic("image").as_deref(), Some("oak/rgb/image_raw"));
    assert_eq!(topic("camera_info").as_deref(), Some("oak/rgb/camera_info"));
    assert_eq!(topic("depth").as_deref(), Some("oak/stereo/image_raw"));
    assert_eq!(topic("depth_info").as_deref(), Some("oak/stereo/camera_info"));
    e.step_n(50).unwrap();
    let d = image(&e, "depth");
    assert_eq!(d.encoding, "16UC1");
    assert_eq!(d.frame_id, "oak_rgb_camera_optical_frame");
    assert_eq!(info(&e, "depth_info").frame_id, "oak_rgb_camera_optical_frame");
    assert_eq!(d.step, 160 * 2);
    // the colour imager sits on the mount's x = 0: the wall 1.500 m ahead reads 1500 mm
    assert_eq!(u16_at(&d, 80, 60), 1500);
}

#[test]
fn a_site_on_a_device_replaces_its_camera() {
    // `site:` on a device whose camera is the plugin's default renders from that site with the
    // device's lens: the vendor frame camera_color_frame is where the `color` camera sits, +x
    // forward, so the two agree.
    let mount = "  - spawn_sensor: {model: realsense_d435, pos: [0.0, 0.0, 0.5]}\n    name: camera\n    components:\n";
    let mut a = engine(
        &format!("{mount}      - realsense_d435: {{width: 160, height: 120, rate_hz: 10}}\n"),
        1,
    );
    let mut b = engine(
        &format!("{mount}      - realsense_d435: {{site: camera_color_frame, width: 160, height: 120, rate_hz: 10}}\n"),
        1,
    );
    a.step_n(50).unwrap();
    b.step_n(50).unwrap();
    let (za, zb) = (f32_at(&image(&a, "depth"), 80, 60), f32_at(&image(&b, "depth"), 80, 60));
    assert!((za - (1.5 - 0.0043)).abs() < 1e-3, "camera: wall at {za}");
    assert!((za - zb).abs() < 1e-4, "site {zb} vs camera {za}");
    assert_eq!(info(&a, "camera_info").k, info(&b, "camera_info").k);
}

#[test]
fn two_cameras_on_one_topic_or_one_frame_are_refused_naming_both() {
    let cam = |name: &str, extra: &str| {
        format!("  - camera: {{width: 32, height: 24, {extra}}}\n    name: {name}\n")
    };
    assert_eq!(
        setup_error_of(world(&format!("{}{}", cam("front", "camera: cam"), cam("rear", "site: eye, fovy: 60")))),
        "[rear] configure: topics.image: `/camera/image_raw` is already published by `front` (camera, its `image`); two cameras on one topic interleave their frames: give this one another `camera_name:` (or rename it with `topics:`)"
    );
    assert_eq!(
        setup_error_of(world(&format!(
            "{}{}",
            cam("front", "camera: cam"),
            cam("rear", "site: eye, fovy: 60, camera_name: rear, frame_id: camera_optical_frame")
        ))),
        "[rear] configure: frame_id: `camera_optical_frame` is already the optical frame of `front` (camera, its `frame_id`), which renders from another view; one frame names one pose: give this one another `frame_id:` (or `camera_name:`)"
    );
    // a depth frame is named by its own key, on either side
    assert_eq!(
        setup_error_of(world(&format!(
            "{}{}",
            cam("front", "camera: cam, depth: true, depth_frame_id: front_depth"),
            cam("rear", "site: eye, fovy: 60, camera_name: rear, frame_id: front_depth")
        ))),
        "[rear] configure: frame_id: `front_depth` is already the optical frame of `front` (camera, its `depth_frame_id`), which renders from another view; one frame names one pose: give this one another `frame_id:` (or `camera_name:`)"
    );
    assert_eq!(
        setup_error_of(world(&format!(
            "{}{}",
            cam("front", "camera: cam"),
            cam("rear", "site: eye, fovy: 60, camera_name: rear, depth: true, depth_frame_id: camera_optical_frame")
        ))),
        "[rear] configure: depth_frame_id: `camera_optical_frame` is already the optical frame of `front` (camera, its `frame_id`), which renders from another view; one frame names one pose: give this one another `depth_frame_id:` (or `camera_name:`)"
    );
    // One view, one frame: a second camera through the same MJCF camera may share it.
    let mut e = engine(
        &format!(
            "{}{}",
            cam("front", "camera: cam"),
            cam("front_hd", "camera: cam, camera_name: hd, frame_id: camera_optical_frame")
        ),
        1,
    );
    e.step_n(5).unwrap();
}

fn compose(a: &Pose, t: &Transform) -> Pose {
    let [x, y, z, w] = t.rotation;
    let r = [
        1.0 - 2.0 * (y * y + z * z),
        2.0 * (x * y - z * w),
        2.0 * (x * z + y * w),
        2.0 * (x * y + z * w),
        1.0 - 2.0 * (x * x + z * z),
        2.0 * (y * z - x * w),
        2.0 * (x * z - y * w),
        2.0 * (y * z + x * w),
        1.0 - 2.0 * (x * x + y * y),
    ];
    let m = &a.mat;
    let mut out = [0.0; 9];
    for i in 0..3 {
        for j in 0..3 {
            out[3 * i + j] = (0..3).map(|k| m[3 * i + k] * r[3 * k + j]).sum();
        }
    }
    Pose { pos: a.apply(t.translation), mat: out }
}

#[test]
fn every_device_is_registered_and_loads() {
    for (model, plugin) in [
        ("realsense_d435", "realsense_d435"),
        ("realsense_d415", "realsense_d415"),
        ("realsense_d455", "realsense_d455"),
        ("oakd_pro", "oakd_camera"),
    ] {
        let comps = format!("  - spawn_sensor: {{model: {model}, pos: [0.0, 0.0, 0.5]}}\n    name: cam1\n    components:\n      - {plugin}: {{width: 64, height: 48, rate_hz: 50}}\n");
        let mut e = engine(&comps, 1);
        e.step_n(20).unwrap();
        let img = image(&e, "image");
        assert_eq!((img.width, img.height), (64, 48), "{model}");
        assert!(e.ctx.renderer.frames() >= 1);
    }
}

#[test]
fn load_time_refusals_name_the_key() {
    let c = |extra: &str| format!("  - camera: {{camera: cam, {extra}}}\n");
    refused(&c("width: 0"), "width", "must be 1..=8192 px, got 0");
    refused(&c("height: 9000"), "height", "must be 1..=8192 px, got 9000");
    let fov = "degrees (a lens MuJoCo's perspective projection renders), got";
    refused(&c("fovy: 0"), "fovy", &format!("must be within [0.1, 179] {fov} 0"));
    refused(&c("fovy: 180"), "fovy", &format!("must be within [0.1, 179] {fov} 180"));
    refused(
        &c("fovy: 179.9999999"),
        "fovy",
        &format!("must be within [0.1, 179] {fov} 179.9999999"),
    );
    refused(
        &c("intrinsics: {fx: 1.0e-300, fy: 100, cx: 80, cy: 60, width: 160, height: 120}"),
        "intrinsics.fx",
        "1e-300 px on a 160 px side is a horizontal field of view of 180.0000 degrees; a lens MuJoCo renders spans [0.1, 179] degrees",
    );
    refused(
        &c("intrinsics: {fx: 100, fy: 1.0e300, cx: 80, cy: 60, width: 160, height: 120}"),
        "intrinsics.fy",
        "1e300 px on a 120 px side is a vertical field of view of 0.0000 degrees; a lens MuJoCo renders spans [0.1, 179] degrees",
    );
    refused(
        &c("clip_near: 2.0, clip_far: 1.0"),
        "clip_near",
        "clip_near (2) must be below clip_far (1): they bound the depth measured (m)",
    );
    // MuJoCo's renderer stops with a fatal error on a near plane of 1e-300 m, and a far plane of
    // 1e300 m leaves every depth pixel at +inf: both refused at load.
    refused(&c("clip_near: 1.0e-300"), "clip_near", "must be >= 0.0001 m, got 1e-300");
    refused(&c("clip_far: 1.0e300"), "clip_far", "must be within (0, 100000] m, got 1e300");
    // An error model that divides by almost nothing wipes every depth pixel to ±inf.
    refused(
        &c("depth: true, depth_noise: true, depth_subpixel: 1.0e300"),
        "depth_subpixel",
        "must be within [0, 10] px, got 1e300",
    );
    refused(
        &c("depth: true, depth_noise: true, depth_baseline: 1.0e-300"),
        "depth_baseline",
        "must be within [0.001, 10000] m, got 1e-300",
    );
    refused(
        &c("depth: true, depth_encoding: 16UC1, clip_far: 70"),
        "depth_encoding",
        "16UC1 carries millimetres up to 65.535 m, but clip_far is 70 m; lower clip_far to the depth the world needs (or keep 32FC1) rather than saturate",
    );
    refused(
        "  - oakd_camera: {camera: cam, depth: true, clip_far: 100}\n",
        "clip_far",
        "oakd_camera publishes depth as 16UC1 millimetres, which carry up to 65.535 m, but clip_far is 100 m; lower clip_far to the depth the world needs, or set `depth_encoding: 32FC1`",
    );
    // a bad lens: each value at its key, in plain words
    refused(
        &c("intrinsics: {fx: 0, fy: 100, cx: 80, cy: 60, width: 160, height: 120}"),
        "intrinsics.fx",
        "a focal length must be > 0 px, got 0",
    );
    refused(
        &c("intrinsics: {fx: 100, fy: -1, cx: 80, cy: 60, width: 160, height: 120}"),
        "intrinsics.fy",
        "a focal length must be > 0 px, got -1",
    );
    refused(
        &c("intrinsics: {fx: 100, fy: 100, cx: 80, cy: 60, width: 0, height: 9000}"),
        "intrinsics.height",
        "the size of the image the lens was measured on must be 1..=8192 px, got 9000",
    );
    refused(
        &c("intrinsics: {fx: 100, fy: 100, cx: 80, cy: 60, width: 0, height: 120}"),
        "intrinsics.width",
        "the size of the image the lens was measured on must be 1..=8192 px, got 0",
    );
    // a principal point off the image it was measured on
    refused(
        &c("intrinsics: {fx: 100, fy: 100, cx: 1.0e300, cy: 60, width: 160, height: 120}"),
        "intrinsics.cx",
        "the principal point must lie on the image it was measured on: within [-0.5, 159.5] px for width 160 (the first pixel's centre is 0), got 1e300",
    );
    refused(
        &c("intrinsics: {fx: 100, fy: 100, cx: 80, cy: -1, width: 160, height: 120}"),
        "intrinsics.cy",
        "the principal point must lie on the image it was measured on: within [-0.5, 119.5] px for height 120 (the first pixel's centre is 0), got -1",
    );
    // both given by the user: the text says what was given
    refused(
        "  - realsense_d435: {camera: cam, site: eye}\n",
        "site",
        "`camera` and `site` are mutually exclusive: render through an MJCF camera OR from a site",
    );
    refused(&c("topics: {scan: x}"), "topics.scan", "no endpoint role `scan` here; the roles are: image, image_compressed, camera_info, depth, depth_info, points");
    refused(
        "  - camera: {site: eye}\n",
        "fovy",
        "a site has no lens: give `fovy` (deg) or `intrinsics`",
    );
    refused(
        "  - camera: {width: 64}\n",
        "camera",
        "required: name the MJCF <camera> camera renders through (or a `site:` with `fovy`)",
    );
    refused(
        &c("site: eye"),
        "site",
        "`camera` and `site` are mutually exclusive: render through an MJCF camera OR from a site",
    );
    refused(
        &c("color: false"),
        "color",
        "every stream is off (color, depth, points): the camera would publish nothing",
    );
    refused(&c("bogus: 1"), "bogus", "unknown field `bogus`, expected one of `namespace`, `camera`, `site`, `width`, `height`, `fovy`, `intrinsics`, `rate_hz`, `color`, `depth`, `points`, `points_rgb`, `compressed`, `jpeg_quality`, `clip_near`, `clip_far`, `depth_encoding`, `frame_id`, `depth_frame_id`, `depth_noise`, `depth_subpixel`, `depth_baseline`, `shadows`, `camera_name`, `topics`");
    assert_eq!(
        setup_error_of(world("  - camera: {camera: nope}\n")),
        "[camera] configure: camera: no camera `nope` in the model; its cameras: [cam]"
    );
}

/// `roqsim` with an environment, on a camera world written to a temp dir.
fn roqsim(args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("scene.xml"), SCENE).unwrap();
    let yaml = format!("sim:\n  world: scene.xml\n  seed: 1\ncomponents:\n{CAM}");
    std::fs::write(dir.path().join("w.yaml"), yaml).unwrap();
    let world = dir.path().join("w.yaml").display().to_string();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_roqsim"));
    cmd.args(args.iter().map(|a| if *a == "W" { world.clone() } else { a.to_string() }));
    cmd.env_remove("MUJOCO_GL").env_remove("MUJOCO_EGL_DEVICE_ID");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("roqsim runs");
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_machine_that_cannot_render_gets_one_error_at_the_first_render() {
    let (ok, err) = roqsim(&["sim", "W", "--steps", "100"], &[("MUJOCO_GL", "osmesa")]);
    assert!(!ok, "the run fails");
    assert!(
        err.contains("camera: MUJOCO_GL=osmesa: this build renders offscreen through EGL only (OSMesa and GLFW are not built in); unset MUJOCO_GL or set MUJOCO_GL=egl, and pick a device with MUJOCO_EGL_DEVICE_ID=N"),
        "{err}"
    );
    let (ok, err) = roqsim(&["sim", "W", "--steps", "100"], &[("MUJOCO_EGL_DEVICE_ID", "99")]);
    assert!(!ok);
    assert!(
        err.contains("MUJOCO_EGL_DEVICE_ID=99: there is no EGL device 99 (devices: 0: "),
        "{err}"
    );
    // checking a camera world needs no GL at all
    let (ok, err) = roqsim(&["check", "W"], &[("MUJOCO_GL", "osmesa")]);
    assert!(ok, "{err}");
    // and the default backend renders
    let (ok, err) = roqsim(&["sim", "W", "--steps", "100"], &[]);
    assert!(ok, "{err}");
}
