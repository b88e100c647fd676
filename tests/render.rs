//! The shared render service against plain MuJoCo models: pixels, depth, labels, projection,
//! presence masking, determinism and the refusals. Needs EGL (Mesa's software device is enough;
//! scripts/setup.sh installs it).

use mujoco_rs::prelude::*;
use roqsim::render::gl::{Backend, RenderError};
use roqsim::render::view::{mujoco_from_optical, optical_from_mujoco};
use roqsim::render::{Intrinsics, Pose, RenderRequest, RenderService, View};

use roqsim::context::Data;

/// A camera at the origin looking along +x (its image x = world -y, image up = world +z), a red
/// box whose near face is 1.5 m away, a white wall behind it at 4 m, and a light.
const SCENE: &str = r#"
<mujoco>
  <visual><quality shadowsize="0"/></visual>
  <worldbody>
    <light pos="0 0 3" dir="0 0 -1" directional="true"/>
    <camera name="cam" pos="0 0 1" xyaxes="0 -1 0 0 0 1" fovy="45"/>
    <geom name="box" type="box" pos="1.6 0 1" size="0.1 0.2 0.2" rgba="1 0 0 1"/>
    <geom name="wall" type="box" pos="4.05 0 1" size="0.05 5 5" rgba="1 1 1 1"/>
    <body name="marker" pos="1.5 0.3 1.2">
      <geom name="dot" type="sphere" size="0.015" rgba="0 1 0 1"/>
    </body>
  </worldbody>
</mujoco>"#;

fn load(xml: &str) -> Data {
    let model = Box::new(MjModel::from_xml_string(xml).expect("model compiles"));
    let mut data = MjData::new(model);
    data.forward();
    data
}

fn geom_id(d: &Data, name: &str) -> i32 {
    d.model().name_to_id(MjtObjBase::mjOBJ_GEOM, name).expect("geom exists") as i32
}

#[test]
fn red_box_pixels_depth_and_labels() {
    let mut d = load(SCENE);
    let mut r = RenderService::default();
    assert!(!r.is_open(), "nothing opens GL before the first render");
    let req =
        RenderRequest::new(View::Camera(0), 64, 48).outputs(true, true, true).clip(0.05, 20.0);
    let f = r.render(&mut d, &req).expect("renders");
    assert!(r.is_open());
    assert_eq!(r.passes(), 2, "colour+depth is one pass, segmentation another");
    let (cu, cv) = (32, 24);
    let c = f.rgb_at(cu, cv).unwrap();
    println!("centre rgb {c:?}, depth {:?}", f.depth_at(cu, cv));
    // red diffuse under a white light, plus MuJoCo's default grey specular/ambient on G and B
    assert!(c[0] > 150 && c[0] > 2 * c[1] && c[1] == c[2], "the box is red at the centre: {c:?}");
    let depth = f.depth_at(cu, cv).unwrap();
    assert!((depth - 1.5).abs() < 1e-3, "near face at 1.5 m, read {depth}");
    assert_eq!(f.geom_at(cu, cv), Some(geom_id(&d, "box")));
    // the corner sees the wall at 4 m straight ahead (depth is along the axis, not the ray)
    let wall = f.depth_at(0, 0).unwrap();
    assert!((wall - 4.0).abs() < 2e-3, "wall plane at 4.0 m, read {wall}");
    assert_eq!(f.geom_at(0, 0), Some(geom_id(&d, "wall")));
    let w = f.rgb_at(0, 0).unwrap();
    assert!(w[0] > 100 && w[0] == w[1] && w[1] == w[2], "the wall is grey-white: {w:?}");
}

#[test]
fn nothing_drawn_reads_infinity_and_background() {
    let mut d = load(
        r#"<mujoco><worldbody><camera pos="0 0 0" xyaxes="0 -1 0 0 0 1"/>
           <geom type="sphere" size="0.1" pos="-3 0 0"/></worldbody></mujoco>"#,
    );
    let mut r = RenderService::default();
    let f = r
        .render(&mut d, &RenderRequest::new(View::Camera(0), 8, 8).outputs(false, true, true))
        .unwrap();
    assert!(f.depth.as_ref().unwrap().iter().all(|z| z.is_infinite()));
    assert!(f.segmentation.as_ref().unwrap().iter().all(|&g| g == -1));
    assert!(f.rgb.is_none());
}

#[test]
fn absent_group_is_masked_in_every_pass() {
    let mut d = load(SCENE);
    let b = geom_id(&d, "box") as usize;
    // SAFETY: one value of an existing element (geom_group), as presence writes it through the
    // model-write seam; no size or address changes.
    unsafe { d.model_mut() }.geom_group_mut()[b] =
        roqsim::render::service::ABSENT_GEOM_GROUP as i32;
    let mut r = RenderService::default();
    let req =
        RenderRequest::new(View::Camera(0), 64, 48).outputs(true, true, true).clip(0.05, 20.0);
    let f = r.render(&mut d, &req).unwrap();
    assert_eq!(f.geom_at(32, 24), Some(geom_id(&d, "wall")), "the label sees through");
    assert!((f.depth_at(32, 24).unwrap() - 4.0).abs() < 2e-3, "depth sees through");
    let c = f.rgb_at(32, 24).unwrap();
    assert!(c[0] == c[1] && c[1] == c[2], "colour sees the wall: {c:?}");
}

#[test]
fn marker_lands_on_the_pixel_the_intrinsics_project_it_to() {
    let mut d = load(SCENE);
    let mut r = RenderService::default();
    // an off-centre principal point and non-square pixels, as a calibrated lens has
    let k = Intrinsics { width: 320, height: 240, fx: 300.0, fy: 310.0, cx: 171.3, cy: 112.6 };
    let req = RenderRequest::new(View::Camera(0), 0, 0)
        .intrinsics(k)
        .outputs(false, false, true)
        .clip(0.05, 20.0);
    let f = r.render(&mut d, &req).unwrap();
    let dot = geom_id(&d, "dot");
    let seg = f.segmentation.as_ref().unwrap();
    let (mut su, mut sv, mut n) = (0.0, 0.0, 0.0);
    for (i, &g) in seg.iter().enumerate() {
        if g == dot {
            su += (i % 320) as f64;
            sv += (i / 320) as f64;
            n += 1.0;
        }
    }
    assert!(n >= 20.0, "the marker covers pixels: {n}");
    let world = [1.5, 0.3, 1.2];
    let (u, v) = k.project(f.optical.inverse_apply(world)).unwrap();
    let (mu, mv) = (su / n, sv / n);
    println!("marker centroid ({mu:.3}, {mv:.3}) over {n} px, projected ({u:.3}, {v:.3})");
    assert!((mu - u).abs() < 0.5 && (mv - v).abs() < 0.5);
}

#[test]
fn pose_and_free_views_match_the_mjcf_camera() {
    let mut d = load(SCENE);
    let mut r = RenderService::default();
    let a = r
        .render(&mut d, &RenderRequest::new(View::Camera(0), 40, 30).outputs(true, true, false))
        .unwrap();
    let pose = Pose { pos: [0.0, 0.0, 1.0], mat: [0.0, 0.0, -1.0, -1.0, 0.0, 0.0, 0.0, 1.0, 0.0] };
    let k = Intrinsics::from_fovy(40, 30, 45.0);
    let b = r
        .render(
            &mut d,
            &RenderRequest::new(View::Pose(pose), 0, 0).intrinsics(k).outputs(true, true, false),
        )
        .unwrap();
    assert_eq!(a.intrinsics, b.intrinsics);
    assert_eq!(a.rgb, b.rgb, "same pose and lens, same pixels");
    assert_eq!(a.depth, b.depth);
    // a free camera at azimuth 0, elevation 0 looks along +x from lookat - distance·x
    let fr = View::free_pose([2.0, 0.0, 1.0], 2.0, 0.0, 0.0);
    for (x, y) in fr.pos.iter().zip(pose.pos) {
        assert!((x - y).abs() < 1e-12);
    }
    for (x, y) in fr.mat.iter().zip(pose.mat) {
        assert!((x - y).abs() < 1e-12, "{:?} vs {:?}", fr.mat, pose.mat);
    }
    // optical frame: z forward (+x world), y down (-z world)
    let o = optical_from_mujoco(&pose);
    assert_eq!(o.axis(2), [1.0, 0.0, 0.0]);
    assert_eq!(o.axis(1), [0.0, 0.0, -1.0]);
    assert_eq!(mujoco_from_optical(&o), pose);
}

#[test]
fn rendering_is_deterministic_and_resizes() {
    let mut d = load(SCENE);
    let mut r = RenderService::default();
    let req = RenderRequest::new(View::Camera(0), 1280, 720).outputs(true, true, true);
    let a = r.render(&mut d, &req).unwrap();
    let b = r.render(&mut d, &req).unwrap();
    assert_eq!(a, b, "same state, same request: same bytes");
    assert_eq!(
        a.rgb.as_ref().unwrap().len(),
        1280 * 720 * 3,
        "beyond the 640x480 offscreen default"
    );
    let small = r.render(&mut d, &RenderRequest::new(View::Camera(0), 64, 48)).unwrap();
    assert_eq!(small.rgb.unwrap().len(), 64 * 48 * 3);
}

#[test]
fn antialiasing_switches_both_ways_on_one_context() {
    let mut d = load(SCENE);
    let mut r = RenderService::default();
    let req =
        RenderRequest::new(View::Camera(0), 64, 48).outputs(true, true, false).clip(0.05, 20.0);
    let plain = r.render(&mut d, &req).unwrap();
    let smooth = r.render(&mut d, &req.clone().antialias(true)).unwrap();
    let again = r.render(&mut d, &req).unwrap();
    assert_eq!(plain, again, "back to one sample per pixel: the same bytes");
    for f in [&plain, &smooth] {
        assert!((f.depth_at(32, 24).unwrap() - 1.5).abs() < 1e-3);
        assert_eq!(f.rgb_at(32, 24), Some([191, 63, 63]));
    }
    assert_ne!(plain.rgb, smooth.rgb, "multisampling blends the box's edges");
}

#[test]
fn mjcf_lens_intrinsics_follow_mujoco() {
    // sensorsize + focal + principal: MuJoCo's own frustum, inverted to pixels
    let d = load(
        r#"<mujoco><worldbody><camera pos="0 0 0" resolution="640 480" sensorsize="0.004 0.003"
            focal="0.0035 0.0036" principal="0.0002 -0.0001"/></worldbody></mujoco>"#,
    );
    let k = Intrinsics::of_model_camera(d.model(), 0, 640, 480).unwrap();
    assert!((k.fx - 560.0).abs() < 1e-3 && (k.fy - 576.0).abs() < 1e-3, "{k:?}");
    let fovy = Intrinsics::of_model_camera(&MjModel::from_xml_string(SCENE).unwrap(), 0, 64, 48);
    let f = fovy.unwrap();
    assert!((f.fovy_deg() - 45.0).abs() < 1e-9 && f.fx == f.fy && f.cx == 31.5 && f.cy == 23.5);
    assert_eq!(
        Intrinsics::of_model_camera(d.model(), 3, 64, 48).unwrap_err(),
        "camera id 3 is out of range (the model has 1 cameras)"
    );
    let s = k.scaled(320, 240);
    assert!((s.fx - 280.0).abs() < 1e-3 && (s.cx - ((k.cx + 0.5) / 2.0 - 0.5)).abs() < 1e-9);
}

#[test]
fn refusals_name_the_fix() {
    let mut d = load(SCENE);
    let mut r = RenderService::default();
    let e = r.render(&mut d, &RenderRequest::new(View::Camera(0), 0, 48)).unwrap_err();
    assert_eq!(e.to_string(), "render size 0x48: width and height must be 1..=8192");
    let e = r.render(&mut d, &RenderRequest::new(View::Camera(0), 9000, 48)).unwrap_err();
    assert_eq!(e.to_string(), "render size 9000x48: width and height must be 1..=8192");
    let e = r.render(&mut d, &RenderRequest::new(View::Camera(7), 8, 8)).unwrap_err();
    assert_eq!(e.to_string(), "camera id 7 is out of range (the model has 1 cameras)");
    let e = r
        .render(&mut d, &RenderRequest::new(View::Camera(0), 8, 8).outputs(false, false, false))
        .unwrap_err();
    assert_eq!(e.to_string(), "render request asks for no output");
    let e =
        r.render(&mut d, &RenderRequest::new(View::Camera(0), 8, 8).clip(1.0, 0.5)).unwrap_err();
    assert_eq!(e.to_string(), "render clip planes near 1 m, far 0.5 m: need 0 < near < far");
    assert!(!r.is_open(), "bad requests are refused before GL is touched");

    let e = Backend::from_env_values(Some("osmesa"), None).unwrap_err();
    assert!(matches!(e, RenderError::Unavailable(_)));
    assert_eq!(
        e.to_string(),
        "MUJOCO_GL=osmesa: this build renders offscreen through EGL only (OSMesa and GLFW are not \
         built in); unset MUJOCO_GL or set MUJOCO_GL=egl, and pick a device with \
         MUJOCO_EGL_DEVICE_ID=N"
    );
    assert_eq!(
        Backend::from_env_values(None, Some("x")).unwrap_err().to_string(),
        "MUJOCO_EGL_DEVICE_ID=x: expected a device index (0, 1, ...)"
    );
    assert_eq!(
        Backend::from_env_values(Some("egl"), Some("1")),
        Ok(Backend::Egl { device: Some(1) })
    );
    assert_eq!(Backend::from_env_values(None, None), Ok(Backend::Egl { device: None }));
    assert_eq!(
        roqsim::render::gl::unavailable("no EGL library or device (libEGL.so.1 not found)")
            .to_string(),
        "offscreen rendering is unavailable: no EGL library or device (libEGL.so.1 not found). A \
         camera needs EGL: install the Debian packages libegl1 libegl-mesa0 libgl1-mesa-dri \
         (scripts/setup.sh does), or choose a device with MUJOCO_GL=egl MUJOCO_EGL_DEVICE_ID=N"
    );
}
