//! `roqsim render WORLD`: a picture or a video of a world without a window. The world is built
//! as `sim` builds it (plugins run, so scripted commands and controllers move things), transport
//! plugins dropped (a render needs no ROS), stepped asap to `--at`, and rendered through the
//! engine's one offscreen render service. Stdout is exactly one line of JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::view::camera::ViewCamera;
use crate::view::overlays::{self, Overlay};
use crate::view::shot;
use crate::{Engine, EngineOptions, LoadOptions};
use clap::Args;

use super::{cli_view, fail_config, load, WorldArgs};

#[derive(Args)]
pub struct RenderArgs {
    #[command(flatten)]
    world: WorldArgs,
    /// Sim time of the picture (s), or the start of the video; the world runs asap up to it.
    #[arg(long, default_value_t = 0.0, value_name = "SECONDS", allow_hyphen_values = true)]
    at: f64,
    /// The PNG to write.
    #[arg(long, default_value = "shot.png", value_name = "FILE")]
    out: PathBuf,
    /// Image size in pixels, WIDTHxHEIGHT (1..=8192 each).
    #[arg(long, default_value = "1280x720", value_name = "WxH", allow_hyphen_values = true)]
    size: String,
    /// The camera: keys of sim.view, layered over the world's (`azimuth=90,distance=3`).
    #[arg(long, value_name = "KEY=VALUE,...")]
    view: Option<String>,
    /// The run's seed (wins over sim.seed; default 0).
    #[arg(long, allow_hyphen_values = true, value_parser = super::whole_number)]
    seed: Option<u64>,
    /// Write a video (H.264 MP4 through ffmpeg) instead of a picture.
    #[arg(long, value_name = "FILE")]
    video: Option<PathBuf>,
    /// With --video: its length in sim seconds.
    #[arg(long, allow_hyphen_values = true)]
    seconds: Option<f64>,
    /// With --video: frames per sim second (default 30).
    #[arg(long, allow_hyphen_values = true)]
    fps: Option<f64>,
    /// Paint an overlay (`clock`, `clock:anchor=bottom-right`); repeatable; `list` lists them.
    #[arg(long = "overlay", value_name = "NAME[:KEY=VALUE,...]")]
    overlays: Vec<String>,
}

/// A video's frame rate when `--fps` is not given (frames per sim second).
const DEFAULT_FPS: f64 = 30.0;

fn refuse(msg: impl std::fmt::Display) -> ExitCode {
    crate::cli::stderr::say!("error: {msg}");
    ExitCode::from(2)
}

pub fn render(a: RenderArgs) -> ExitCode {
    if a.overlays.iter().any(|o| o == "list") {
        let rows: Vec<String> = overlays::registry()
            .iter()
            .map(|d| format!("{:<12} {} (built in)", d.name, d.summary))
            .collect();
        return crate::cli::stdout::emit_then(&rows.join("\n"), ExitCode::SUCCESS);
    }
    let fps = a.fps.unwrap_or(DEFAULT_FPS);
    // Every flag is checked before anything is built.
    let (w, h) = match shot::parse_size(&a.size) {
        Ok(s) => s,
        Err(e) => return refuse(e),
    };
    if let Err(m) = super::check_span("--at", a.at) {
        return refuse(m);
    }
    let mut ovs: Vec<Box<dyn Overlay>> = Vec::new();
    for spec in &a.overlays {
        match overlays::parse(spec) {
            Ok(o) => ovs.push(o),
            Err(e) => return refuse(e),
        }
    }
    // A recording (`roqsim render run.mcap`) is drawn from its state samples.
    let recording = a.world.world.ends_with(".mcap");
    let video = match &a.video {
        None => {
            if a.seconds.is_some() {
                return refuse("--seconds is the length of a --video; give --video FILE too");
            }
            if a.fps.is_some() {
                return refuse("--fps is the frame rate of a --video; give --video FILE too");
            }
            None
        }
        Some(path) => {
            let secs = match a.seconds {
                Some(secs) => match super::check_span("--seconds", secs) {
                    Ok(s) if s > 0.0 => Some(s),
                    Ok(_) => {
                        return refuse("--seconds is the length of the --video: give more than 0")
                    }
                    Err(m) => return refuse(m),
                },
                // a recording's video runs to its end unless told otherwise
                None if recording => None,
                None => return refuse("--video needs --seconds S (its length in sim seconds)"),
            };
            let (min, max) =
                (crate::world::bounds::MIN_VIDEO_FPS, crate::world::bounds::MAX_VIDEO_FPS);
            if !(fps >= min && fps <= max) {
                return refuse(format!(
                    "--fps must be a frame rate within [{min}, {max}] frames per sim second (an MP4 cannot hold a frame longer than {} s), got {}: give one in that range",
                    1.0 / min,
                    crate::error::num(fps)
                ));
            }
            if w % 2 == 1 || h % 2 == 1 {
                return refuse(format!(
                    "--size {}: a --video needs even sides (H.264 yuv420p), e.g. {}x{}",
                    a.size,
                    w + w % 2,
                    h + h % 2
                ));
            }
            let prog = match shot::ffmpeg() {
                Ok(p) => p,
                Err(e) => return refuse(e),
            };
            if let Err(e) = shot::check_writable(path, "--video") {
                return refuse(e);
            }
            Some((path.clone(), secs, prog))
        }
    };
    if video.is_none() {
        if let Err(e) = shot::check_writable(&a.out, "--out") {
            return refuse(e);
        }
    }
    // The file written must not be one the render reads (the recording, the world, its parents,
    // its model files).
    let written = match &video {
        Some((p, ..)) => ("--video", p.as_path()),
        None => ("--out", a.out.as_path()),
    };
    let inputs = if recording {
        super::outputs::Inputs::of_recording(std::path::Path::new(&a.world.world))
    } else {
        super::outputs::Inputs::of_world(&a.world)
    };
    if let Some(m) = inputs.clash(&[written]) {
        return refuse(m);
    }
    let assigns = match a.view.as_deref().map(cli_view::view_assignments).transpose() {
        Ok(v) => v.unwrap_or_default(),
        Err(e) => return fail_config(&e),
    };
    if recording {
        let r = super::cli_render_recording::Request {
            at: a.at,
            out: a.out.clone(),
            size: (w, h),
            video,
            fps,
        };
        return super::cli_render_recording::render(&a.world, a.seed, r, assigns, ovs);
    }
    let opts = LoadOptions { assignments: assigns, no_communication: true, ..Default::default() };
    let world = match load(&a.world, opts) {
        Ok(x) => x,
        Err(e) => return fail_config(&e),
    };
    let seed = a.seed.or(world.sim.seed).unwrap_or(0);
    let mut engine = match Engine::new(world, EngineOptions { profile: false, seed: Some(seed) }) {
        Ok(e) => e,
        Err(e) => return refuse(e),
    };
    let view = engine.sim.view.clone().unwrap_or_default();
    let camera = match ViewCamera::resolve(&view, &engine.ctx) {
        Ok(c) => c,
        Err(e) => return refuse(e),
    };
    for o in ovs.iter_mut() {
        if let Err(e) = o.prepare(w, h) {
            return refuse(format!("--overlay {}: {e}", o.name()));
        }
    }
    if let Err(e) = shot::advance_to(&mut engine, a.at, "--at") {
        return refuse(e);
    }
    let line = match video {
        None => match still(&mut engine, &camera, w, h, &mut ovs, &a.out) {
            Ok(()) => serde_json::json!({
                "out": a.out.display().to_string(),
                "time": engine.sim_time(),
                "size": [w, h],
                "seed": seed,
                "camera": camera.to_json(),
                "view": camera.to_view_arg(),
            }),
            Err(e) => return refuse(e),
        },
        Some((path, secs, prog)) => {
            let start = engine.sim_time();
            let secs = secs.unwrap_or(0.0);
            match clip(&mut engine, &camera, w, h, &mut ovs, &path, secs, fps, &prog) {
                Ok(frames) => serde_json::json!({
                    "video": path.display().to_string(),
                    "frames": frames,
                    "fps": fps,
                    "from": start,
                    "to": engine.sim_time(),
                    "size": [w, h],
                    "seed": seed,
                    "camera": camera.to_json(),
                    "view": camera.to_view_arg(),
                }),
                Err(e) => return refuse(e),
            }
        }
    };
    crate::cli::stdout::emit_then(&line.to_string(), ExitCode::SUCCESS)
}

fn still(
    engine: &mut Engine,
    camera: &ViewCamera,
    w: u32,
    h: u32,
    ovs: &mut [Box<dyn Overlay>],
    out: &std::path::Path,
) -> Result<(), String> {
    let mut rgb = shot::render_rgb(engine, camera, w, h)?;
    shot::paint(ovs, &mut rgb, w, h, engine.sim_time())?;
    shot::write_png(out, w, h, &rgb)
}

#[allow(clippy::too_many_arguments)]
fn clip(
    engine: &mut Engine,
    camera: &ViewCamera,
    w: u32,
    h: u32,
    ovs: &mut [Box<dyn Overlay>],
    path: &std::path::Path,
    secs: f64,
    fps: f64,
    prog: &str,
) -> Result<u64, String> {
    let n = (secs * fps).round().max(1.0) as u64;
    let start = engine.sim_time();
    let mut video = shot::VideoWriter::start(prog, path, w, h, fps)?;
    let mut bar = shot::Progress::new(n);
    for k in 0..n {
        shot::advance_to(engine, start + k as f64 / fps, "--seconds")?;
        let mut rgb = shot::render_rgb(engine, camera, w, h)?;
        shot::paint(ovs, &mut rgb, w, h, engine.sim_time())?;
        video.push(&rgb)?;
        bar.update(k + 1);
    }
    video.finish()
}
