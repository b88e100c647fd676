//! `roqsim render`'s library side: run a built engine asap to a sim time, render a frame of it
//! through the engine's one render service (`crate::render`, on the physics thread), paint the
//! overlays, and write a PNG, or pipe a run of frames to ffmpeg for a video.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use super::camera::ViewCamera;
use super::overlays::{Overlay, RgbFrame};
use crate::engine::Engine;
use crate::render::{RenderRequest, View};

/// Largest image side `--size` accepts (px).
pub const MAX_SIDE: u32 = crate::render::service::MAX_SIDE;

/// Parse `--size WxH` (also `W×H`); both sides 1..=8192.
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let norm = s.replace('×', "x");
    let parsed = norm
        .split_once(['x', 'X'])
        .and_then(|(w, h)| Some((w.trim().parse::<u32>().ok()?, h.trim().parse::<u32>().ok()?)));
    match parsed {
        Some((w, h)) if (1..=MAX_SIDE).contains(&w) && (1..=MAX_SIDE).contains(&h) => Ok((w, h)),
        Some((w, h)) => Err(format!(
            "--size {}: width and height must be 1..={MAX_SIDE} px, got {w}x{h}",
            crate::error::clip(s)
        )),
        None => Err(format!(
            "--size {}: give WIDTHxHEIGHT in pixels, e.g. --size 1280x720",
            crate::error::clip(s)
        )),
    }
}

/// Step `engine` as fast as it goes until its sim time reaches `t` (to the nearest step).
/// A run that ends first (a plugin's stop request) is refused naming `--at`/`--seconds`.
pub fn advance_to(engine: &mut Engine, t: f64, flag: &str) -> Result<(), String> {
    let dt = engine.dt();
    while engine.sim_time() + 0.5 * dt < t {
        if let Some(r) = engine.ctx.stop_requested() {
            return Err(format!(
                "{flag}: {t} s is beyond the run: it ended at {:.3} s ({r})",
                engine.sim_time()
            ));
        }
        engine.step().map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Render the engine's current state from `camera` at `width`×`height`: RGB, top row first.
pub fn render_rgb(
    engine: &mut Engine,
    camera: &ViewCamera,
    width: u32,
    height: u32,
) -> Result<Vec<u8>, String> {
    let p = camera.pose(engine.ctx.data());
    let view = View::Free {
        lookat: p.lookat,
        distance: p.distance,
        azimuth: p.azimuth,
        elevation: p.elevation,
    };
    let frame =
        engine.ctx.render(&RenderRequest::new(view, width, height)).map_err(|e| e.to_string())?;
    frame.rgb.ok_or_else(|| "the render returned no colour image".to_string())
}

/// Paint every overlay on `rgb` (sim time `t`).
pub fn paint(
    overlays: &mut [Box<dyn Overlay>],
    rgb: &mut [u8],
    width: u32,
    height: u32,
    t: f64,
) -> Result<(), String> {
    for o in overlays.iter_mut() {
        let mut f = RgbFrame { width, height, pixels: rgb };
        o.draw(&mut f, t).map_err(|e| format!("overlay `{}`: {e}", o.name()))?;
    }
    Ok(())
}

/// Write an RGB image as PNG.
pub fn write_png(path: &Path, width: u32, height: u32, rgb: &[u8]) -> Result<(), String> {
    let file = std::fs::File::create(path)
        .map_err(|e| format!("--out {}: cannot write: {e}", path.display()))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().map_err(|e| format!("--out {}: {e}", path.display()))?;
    w.write_image_data(rgb).map_err(|e| format!("--out {}: {e}", path.display()))?;
    w.finish().map_err(|e| format!("--out {}: {e}", path.display()))
}

/// Refuse an output path whose folder does not exist or cannot be written, before any work.
pub fn check_writable(path: &Path, flag: &str) -> Result<(), String> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(format!(
            "{flag} {}: the folder {} does not exist",
            path.display(),
            dir.display()
        ));
    }
    let probe = dir.join(format!(".roqsim-write-probe-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(format!("{flag} {}: cannot write in {}: {e}", path.display(), dir.display())),
    }
}

/// The ffmpeg program (`$ROQSIM_FFMPEG`, else `ffmpeg` on PATH), or the install hint.
pub fn ffmpeg() -> Result<String, String> {
    let prog = std::env::var("ROQSIM_FFMPEG").unwrap_or_else(|_| "ffmpeg".to_string());
    match Command::new(&prog).arg("-version").stdout(Stdio::null()).stderr(Stdio::null()).status() {
        Ok(s) if s.success() => Ok(prog),
        _ => Err(format!(
            "--video needs ffmpeg, and `{prog}` is not installed: `apt-get install ffmpeg` \
             (scripts/setup.sh installs it)"
        )),
    }
}

/// A video being written: raw RGB frames piped into ffmpeg (H.264, yuv420p).
pub struct VideoWriter {
    child: Child,
    frames: u64,
}

impl VideoWriter {
    /// Start ffmpeg writing `path` at `fps`. yuv420p needs even sides.
    pub fn start(
        prog: &str,
        path: &Path,
        width: u32,
        height: u32,
        fps: f64,
    ) -> Result<VideoWriter, String> {
        let child = Command::new(prog)
            .args(["-hide_banner", "-loglevel", "error", "-y", "-f", "rawvideo"])
            .args(["-pix_fmt", "rgb24", "-s", &format!("{width}x{height}")])
            .args(["-framerate", &format!("{fps}"), "-i", "-"])
            .args(["-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-pix_fmt", "yuv420p"])
            .arg(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("--video: cannot start {prog}: {e}"))?;
        Ok(VideoWriter { child, frames: 0 })
    }

    /// Append one frame.
    pub fn push(&mut self, rgb: &[u8]) -> Result<(), String> {
        let stdin = self.child.stdin.as_mut().expect("piped");
        stdin.write_all(rgb).map_err(|e| format!("--video: ffmpeg stopped taking frames: {e}"))?;
        self.frames += 1;
        Ok(())
    }

    /// Close the stream and wait for ffmpeg; returns the frames written.
    pub fn finish(mut self) -> Result<u64, String> {
        drop(self.child.stdin.take());
        let out = self.child.wait_with_output().map_err(|e| format!("--video: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "--video: ffmpeg failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(self.frames)
    }
}

/// A progress bar on stderr: redrawn in place on a terminal, a line per 10 % otherwise.
pub struct Progress {
    total: u64,
    tty: bool,
    last_decile: u64,
}

impl Progress {
    /// A bar for `total` frames.
    pub fn new(total: u64) -> Progress {
        Progress {
            total,
            tty: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            last_decile: 0,
        }
    }

    /// `done` frames are written.
    pub fn update(&mut self, done: u64) {
        let frac = if self.total == 0 { 1.0 } else { done as f64 / self.total as f64 };
        if self.tty {
            let n = (frac * 30.0).round() as usize;
            crate::cli::stderr::say_text!(
                "\rrender [{}{}] {done}/{} frames",
                "#".repeat(n),
                ".".repeat(30 - n),
                self.total
            );
            if done == self.total {
                crate::cli::stderr::say!();
            }
        } else {
            let decile = (frac * 10.0).floor() as u64;
            if decile > self.last_decile || done == self.total {
                self.last_decile = decile;
                crate::cli::stderr::say!(
                    "render: {done}/{} frames ({:.0} %)",
                    self.total,
                    frac * 100.0
                );
            }
        }
    }
}
