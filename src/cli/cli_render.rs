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

/// A video to write: its path, length in sim seconds (`None`: to a recording's end) and the
/// ffmpeg program.
type Video = Option<(PathBuf, Option<f64>, String)>;

pub fn render(a: RenderArgs) -> ExitCode {
    if a.overlays.iter().any(|o| o == "list") {
        return list_overlays();
    }
    let fps = a.fps.unwrap_or(DEFAULT_FPS);
    // A recording (`roqsim render run.mcap`) is drawn from its state samples.
    let recording = a.world.world.ends_with(".mcap");
    // Every flag is checked before anything is built.
    let (size, ovs, video) = match check_flags(&a, fps, recording) {
        Ok(x) => x,
        Err(e) => return refuse(e),
    };
    let assigns = match a.view.as_deref().map(cli_view::view_assignments).transpose() {
        Ok(v) => v.unwrap_or_default(),
        Err(e) => return fail_config(&e),
    };
    if recording {
        let r =
            super::cli_render_recording::Request { at: a.at, out: a.out.clone(), size, video, fps };
        return super::cli_render_recording::render(&a.world, a.seed, r, assigns, ovs);
    }
    let opts = LoadOptions { assignments: assigns, no_communication: true, ..Default::default() };
    let world = match load(&a.world, opts) {
        Ok(x) => x,
        Err(e) => return fail_config(&e),
    };
    let seed = a.seed.or(world.sim.seed).unwrap_or(0);
    let engine = match Engine::new(world, EngineOptions { profile: false, seed: Some(seed) }) {
        Ok(e) => e,
        Err(e) => return refuse(e),
    };
    match shoot(engine, &a, seed, size, ovs, video, fps) {
        Ok(line) => crate::cli::stdout::emit_then(&line.to_string(), ExitCode::SUCCESS),
        Err(e) => refuse(e),
    }
}

/// `--overlay list`: the overlays there are, one a line.
fn list_overlays() -> ExitCode {
    let rows: Vec<String> = overlays::registry()
        .iter()
        .map(|d| format!("{:<12} {} (built in)", d.name, d.summary))
        .collect();
    crate::cli::stdout::emit_then(&rows.join("\n"), ExitCode::SUCCESS)
}

/// Every flag checked, in the order a user reads them: the size, `--at`, the overlays, the
/// video's flags, then the file written (writable, and none the render reads).
#[allow(clippy::type_complexity)]
fn check_flags(
    a: &RenderArgs,
    fps: f64,
    recording: bool,
) -> Result<((u32, u32), Vec<Box<dyn Overlay>>, Video), String> {
    let (w, h) = shot::parse_size(&a.size)?;
    super::check_span("--at", a.at)?;
    let ovs = a.overlays.iter().map(|spec| overlays::parse(spec)).collect::<Result<Vec<_>, _>>()?;
    let video = check_video(a, fps, recording, (w, h))?;
    if video.is_none() {
        shot::check_writable(&a.out, "--out")?;
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
        return Err(m);
    }
    Ok(((w, h), ovs, video))
}

/// The video flags: `--seconds`/`--fps` only with `--video`; a video's length, frame rate and
/// even sides, ffmpeg found, its file writable.
fn check_video(
    a: &RenderArgs,
    fps: f64,
    recording: bool,
    (w, h): (u32, u32),
) -> Result<Video, String> {
    let Some(path) = &a.video else {
        if a.seconds.is_some() {
            return Err("--seconds is the length of a --video; give --video FILE too".into());
        }
        if a.fps.is_some() {
            return Err("--fps is the frame rate of a --video; give --video FILE too".into());
        }
        return Ok(None);
    };
    let secs = match a.seconds {
        Some(secs) => match super::check_span("--seconds", secs)? {
            s if s > 0.0 => Some(s),
            _ => return Err("--seconds is the length of the --video: give more than 0".into()),
        },
        // a recording's video runs to its end unless told otherwise
        None if recording => None,
        None => return Err("--video needs --seconds S (its length in sim seconds)".into()),
    };
    let (min, max) = (crate::world::bounds::MIN_VIDEO_FPS, crate::world::bounds::MAX_VIDEO_FPS);
    if !(fps >= min && fps <= max) {
        return Err(format!(
            "--fps must be a frame rate within [{min}, {max}] frames per sim second (an MP4 cannot hold a frame longer than {} s), got {}: give one in that range",
            1.0 / min,
            crate::error::num(fps)
        ));
    }
    if w % 2 == 1 || h % 2 == 1 {
        return Err(format!(
            "--size {}: a --video needs even sides (H.264 yuv420p), e.g. {}x{}",
            a.size,
            w + w % 2,
            h + h % 2
        ));
    }
    let prog = shot::ffmpeg()?;
    shot::check_writable(path, "--video")?;
    Ok(Some((path.clone(), secs, prog)))
}

/// Run the built world to `--at` and write the still or the video; the stdout line.
fn shoot(
    mut engine: Engine,
    a: &RenderArgs,
    seed: u64,
    (w, h): (u32, u32),
    mut ovs: Vec<Box<dyn Overlay>>,
    video: Video,
    fps: f64,
) -> Result<serde_json::Value, String> {
    let view = engine.sim.view.clone().unwrap_or_default();
    let camera = ViewCamera::resolve(&view, &engine.ctx)?;
    for o in ovs.iter_mut() {
        o.prepare(w, h).map_err(|e| format!("--overlay {}: {e}", o.name()))?;
    }
    shot::advance_to(&mut engine, a.at, "--at")?;
    Ok(match video {
        None => {
            still(&mut engine, &camera, w, h, &mut ovs, &a.out)?;
            serde_json::json!({
                "out": a.out.display().to_string(),
                "time": engine.sim_time(),
                "size": [w, h],
                "seed": seed,
                "camera": camera.to_json(),
                "view": camera.to_view_arg(),
            })
        }
        Some((path, secs, prog)) => {
            let start = engine.sim_time();
            let secs = secs.unwrap_or(0.0);
            let frames = clip(&mut engine, &camera, w, h, &mut ovs, &path, secs, fps, &prog)?;
            serde_json::json!({
                "video": path.display().to_string(),
                "frames": frames,
                "fps": fps,
                "from": start,
                "to": engine.sim_time(),
                "size": [w, h],
                "seed": seed,
                "camera": camera.to_json(),
                "view": camera.to_view_arg(),
            })
        }
    })
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
