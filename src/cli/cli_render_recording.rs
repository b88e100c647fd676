//! `roqsim render run.mcap`: a picture or a video of a recording. The world is rebuilt from the
//! recording's provenance alone (as `roqsim replay` does), each state sample is put back into it
//! (`crate::record::restore`) and drawn through the engine's one offscreen render service, with
//! the camera of the recorded `sim.view` (layered with `--view`). Nothing is stepped: the picture
//! is the recorded state. Stdout is exactly one line of JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::engine::Engine;
use crate::error::num;
use crate::record::replay::secs as shown;
use crate::record::replay::{rebuild_with, state_at, Recording};
use crate::record::restore::restore;
use crate::record::state::StateSample;
use crate::view::camera::ViewCamera;
use crate::view::overlays::Overlay;
use crate::view::shot;
use crate::world::overrides::Assignment;

use super::WorldArgs;

/// What to draw (flags `roqsim render` checked already).
pub(super) struct Request {
    /// `--at`: the sample nearest this sim time is the picture, or the video's first frame.
    pub at: f64,
    /// `--out` (a picture).
    pub out: PathBuf,
    /// `--size`.
    pub size: (u32, u32),
    /// `--video`: (file, `--seconds` or to the end, ffmpeg).
    pub video: Option<(PathBuf, Option<f64>, String)>,
    /// `--fps`.
    pub fps: f64,
}

fn refuse(msg: impl std::fmt::Display) -> ExitCode {
    crate::cli::stderr::say!("error: {msg}");
    ExitCode::from(2)
}

pub(super) fn render(
    world: &WorldArgs,
    seed: Option<u64>,
    r: Request,
    view: Vec<Assignment>,
    mut ovs: Vec<Box<dyn Overlay>>,
) -> ExitCode {
    let file = PathBuf::from(&world.world);
    // A recording draws what ran: only the camera may change.
    if !world.set.is_empty() || !world.overrides.is_empty() {
        return refuse(format!(
            "{}: --set and --override do not apply to a recording (it renders the world it recorded); --view changes the camera",
            file.display()
        ));
    }
    if seed.is_some() {
        return refuse(format!(
            "{}: --seed does not apply to a recording (its seed is the recorded one)",
            file.display()
        ));
    }
    let rec = match crate::record::open(&file) {
        Ok(x) => x,
        Err(e) => return refuse(e),
    };
    let (mut engine, notes) = match rebuild_with(&rec, view) {
        Ok(x) => x,
        Err(e) => return refuse(format!("{}: {e}", file.display())),
    };
    for n in notes {
        crate::cli::stderr::say!("note: {n}");
    }
    let v = engine.sim.view.clone().unwrap_or_default();
    let camera = match ViewCamera::resolve(&v, &engine.ctx) {
        Ok(c) => c,
        Err(e) => return refuse(e),
    };
    let (w, h) = r.size;
    for o in ovs.iter_mut() {
        if let Err(e) = o.prepare(w, h) {
            return refuse(format!("--overlay {}: {e}", o.name()));
        }
    }
    let first = match state_at(&rec, r.at) {
        Ok(s) => s.clone(),
        Err(e) => return refuse(format!("{}: {e}", file.display())),
    };
    let line = match &r.video {
        None => match still(&mut engine, &camera, &first, w, h, &mut ovs, &r.out) {
            Ok(()) => serde_json::json!({
                "recording": file.display().to_string(),
                "out": r.out.display().to_string(),
                "time": first.time,
                "step": first.step,
                "size": [w, h],
                "camera": camera.to_json(),
                "view": camera.to_view_arg(),
            }),
            Err(e) => return refuse(e),
        },
        Some((path, secs, prog)) => {
            match clip(&mut engine, &rec, &camera, &first, &r, *secs, path, prog, &mut ovs) {
                Ok((frames, last)) => serde_json::json!({
                    "recording": file.display().to_string(),
                    "video": path.display().to_string(),
                    "frames": frames,
                    "fps": r.fps,
                    "from": first.time,
                    "to": last.time,
                    "from_step": first.step,
                    "to_step": last.step,
                    "size": [w, h],
                    "camera": camera.to_json(),
                    "view": camera.to_view_arg(),
                }),
                Err(e) => return refuse(e),
            }
        }
    };
    engine.shutdown();
    crate::cli::stdout::emit_then(&line.to_string(), ExitCode::SUCCESS)
}

fn draw(
    engine: &mut Engine,
    camera: &ViewCamera,
    s: &StateSample,
    w: u32,
    h: u32,
    ovs: &mut [Box<dyn Overlay>],
) -> Result<Vec<u8>, String> {
    restore(engine, s)?;
    let mut rgb = shot::render_rgb(engine, camera, w, h)?;
    shot::paint(ovs, &mut rgb, w, h, s.time)?;
    Ok(rgb)
}

fn still(
    engine: &mut Engine,
    camera: &ViewCamera,
    s: &StateSample,
    w: u32,
    h: u32,
    ovs: &mut [Box<dyn Overlay>],
    out: &std::path::Path,
) -> Result<(), String> {
    let rgb = draw(engine, camera, s, w, h, ovs)?;
    shot::write_png(out, w, h, &rgb)
}

/// Frames every 1/fps s of run time (steps × timestep) from `first`, each the sample nearest that
/// run time, for `secs` seconds or to the last sample. Returns (frames, the last frame's sample).
#[allow(clippy::too_many_arguments)]
fn clip(
    engine: &mut Engine,
    rec: &Recording,
    camera: &ViewCamera,
    first: &StateSample,
    r: &Request,
    secs: Option<f64>,
    path: &std::path::Path,
    prog: &str,
    ovs: &mut [Box<dyn Overlay>],
) -> Result<(u64, StateSample), String> {
    let dt = engine.dt();
    let (w, h) = r.size;
    // samples from the first frame's on, in run order
    let samples: Vec<&StateSample> = rec.states.iter().filter(|s| s.step >= first.step).collect();
    let last_step = samples.last().map(|s| s.step).unwrap_or(first.step);
    let avail = (last_step - first.step) as f64 * dt;
    // Past the last sample there is nothing to draw (the last frame would only repeat).
    if let Some(s) = secs.filter(|&s| s > avail + 1e-9) {
        let (lo, hi) = crate::record::replay::time_range(rec).unwrap_or((first.time, first.time));
        return Err(format!(
            "--seconds {}: the recording ends {} s after the sample at {} s (it holds sim times {} s to {} s): give --seconds at most {}, or leave it out to draw to the end",
            num(s),
            shown(avail),
            shown(first.time),
            shown(lo),
            shown(hi),
            shown(avail)
        ));
    }
    let span = secs.unwrap_or(avail);
    // (a hair of slack: 500 steps of 0.002 s are 1 s, not 0.9999999 s, for the frame count)
    let n = (span * r.fps + 1e-9).floor() as u64 + 1;
    let mut video = shot::VideoWriter::start(prog, path, w, h, r.fps)?;
    let mut bar = shot::Progress::new(n);
    let mut i = 0;
    let mut last = first.clone();
    for k in 0..n {
        let want = first.step as f64 + k as f64 / r.fps / dt;
        while i + 1 < samples.len()
            && (samples[i + 1].step as f64 - want).abs() < (samples[i].step as f64 - want).abs()
        {
            i += 1;
        }
        let s = samples.get(i).copied().unwrap_or(first);
        let rgb = draw(engine, camera, s, w, h, ovs)?;
        video.push(&rgb)?;
        last = s.clone();
        bar.update(k + 1);
    }
    let frames = video.finish()?;
    Ok((frames, last))
}
