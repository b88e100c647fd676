//! Camera rows of bench/run.sh. No timing is asserted anywhere; one JSON object per line.
//!
//! `camera_bench frames [--frames N]`: milliseconds per rendered frame through the shared render
//! service at 320×240, 640×480 and 1280×720 for colour, colour+depth and colour+depth+points (the
//! points built the way the camera plugins build them), and for a label camera's segmentation
//! pass alone (`labels`) and with colour (`color+labels`), on a room of boxes under one light, with
//! shadows off (the sensors' default) and on.
//!
//! `camera_bench steps WORLD STEPS MODE`: the engine's step rate (asap) on WORLD (the TurtleBot +
//! D435 world) with MODE `none` (the camera disabled), `unsubscribed` (mounted; every stream's
//! `has_subscribers` false, as the ROS bridge reports a topic nobody reads) or a rate in Hz
//! (produced every frame, as for subscribers, without transport).

use std::time::Instant;

use mujoco_rs::prelude::*;
use roqsim::render::{RenderRequest, RenderService, View};

const SCENE: &str = r#"
<mujoco>
  <worldbody>
    <light pos="0 0 4" dir="0 0 -1" castshadow="true"/>
    <geom type="plane" size="10 10 0.1" rgba="0.6 0.6 0.6 1"/>
    <camera name="cam" pos="-3 0 0.5" xyaxes="0 -1 0 0 0 1" fovy="42.5"/>
    <geom type="box" pos="0 0 0.25" size="0.25 0.25 0.25" rgba="0.8 0.2 0.2 1"/>
    <geom type="box" pos="1 1 0.4" size="0.3 0.3 0.4" rgba="0.2 0.8 0.2 1"/>
    <geom type="cylinder" pos="1 -1 0.5" size="0.2 0.5" rgba="0.2 0.2 0.8 1"/>
    <geom type="box" pos="4 0 1" size="0.1 5 1" rgba="0.9 0.9 0.9 1"/>
  </worldbody>
</mujoco>"#;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("steps") {
        return steps(&args[2], args[3].parse().expect("STEPS"), &args[4]);
    }
    let frames: usize = args
        .iter()
        .skip_while(|a| *a != "--frames")
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let model = Box::new(MjModel::from_xml_string(SCENE).expect("scene compiles"));
    let mut data = MjData::new(model);
    data.forward();
    let mut r = RenderService::default();
    for shadows in [false, true] {
        for (w, h) in [(320u32, 240u32), (640, 480), (1280, 720)] {
            for (label, rgb, depth, points, labels) in [
                ("color", true, false, false, false),
                ("color+depth", true, true, false, false),
                ("color+depth+points", true, true, true, false),
                ("labels", false, false, false, true),
                ("color+labels", true, false, false, true),
            ] {
                let req = RenderRequest::new(View::Camera(0), w, h)
                    .outputs(rgb, depth, labels)
                    .clip(0.01, 30.0)
                    .shadows(shadows);
                r.render(&mut data, &req).expect("renders"); // warm-up (and GL open)
                let t = Instant::now();
                let mut sink = 0usize;
                for _ in 0..frames {
                    let f = r.render(&mut data, &req).expect("renders");
                    if points {
                        sink += cloud_bytes(&f);
                    }
                }
                let ms = t.elapsed().as_secs_f64() * 1e3 / frames as f64;
                let (dev, gl) = r.device().unwrap_or(("?", "?"));
                println!(
                    "{{\"row\":\"camera_frame\",\"streams\":\"{label}\",\"width\":{w},\"height\":{h},\"shadows\":{shadows},\"ms_per_frame\":{ms:.3},\"frames\":{frames},\"device\":\"{dev}\",\"renderer\":\"{gl}\",\"sink\":{}}}",
                    sink.min(1)
                );
            }
        }
    }
}

/// An organised xyz+rgb cloud from a frame, as the camera plugins build it (bytes produced).
fn cloud_bytes(f: &roqsim::render::Frame) -> usize {
    let k = f.intrinsics;
    let (w, h) = (k.width as usize, k.height as usize);
    let (d, c) = (f.depth.as_ref().unwrap(), f.rgb.as_ref().unwrap());
    let mut out = Vec::with_capacity(w * h * 16);
    for v in 0..h {
        for u in 0..w {
            let z = d[v * w + u];
            let (x, y) = ((u as f64 - k.cx) / k.fx * z as f64, (v as f64 - k.cy) / k.fy * z as f64);
            out.extend_from_slice(&(x as f32).to_le_bytes());
            out.extend_from_slice(&(y as f32).to_le_bytes());
            out.extend_from_slice(&z.to_le_bytes());
            let i = 3 * (v * w + u);
            let rgb = (c[i] as u32) << 16 | (c[i + 1] as u32) << 8 | c[i + 2] as u32;
            out.extend_from_slice(&rgb.to_le_bytes());
        }
    }
    out.len()
}

fn steps(world: &str, steps: u64, mode: &str) {
    use roqsim::world::overrides::parse_set;
    use roqsim::{load_world, Engine, EngineOptions, LoadOptions};
    let mut opts = LoadOptions::default();
    let set = |a: &str| parse_set(a).expect("a --set");
    match mode {
        "none" => opts.assignments.push(set("components.robot.camera.enabled=false")),
        "unsubscribed" => {}
        hz => opts
            .assignments
            .push(set(&format!("components.robot.camera.realsense_d435.rate_hz={hz}"))),
    }
    let w = load_world(std::path::Path::new(world), &opts).expect("world loads");
    let mut e = Engine::new(w, EngineOptions { profile: false, seed: Some(1) }).expect("engine");
    if mode == "unsubscribed" {
        let ids: Vec<usize> =
            (0..e.ctx.interface.all().len()).filter(|&i| e.ctx.interface.get(i).lazy).collect();
        for i in ids {
            e.ctx.interface.get_mut(i).has_subscribers = Some(false);
        }
    }
    let t = Instant::now();
    e.step_n(steps).expect("steps");
    let s = t.elapsed().as_secs_f64();
    println!(
        "{{\"row\":\"camera_steps\",\"mode\":\"{mode}\",\"steps\":{steps},\"seconds\":{s:.3},\"steps_per_s\":{:.1},\"realtime_factor\":{:.3},\"frames\":{}}}",
        steps as f64 / s,
        steps as f64 * e.ctx.dt / s,
        e.ctx.renderer.frames()
    );
}
