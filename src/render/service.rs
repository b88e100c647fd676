//! The render service: one offscreen GL context and one MuJoCo render context for the whole
//! engine, opened lazily by the first render and shared by every consumer.
//!
//! It lives in [`crate::context::SimContext`] (`ctx.render(..)`) and therefore on the physics
//! thread, the only thread that holds `MjData`: a render reads the state the step left, with no
//! copy and no lock. Nothing here runs until something asks for a frame, so a world without a
//! consumed camera never loads GL (and `roqsim check` of a camera world needs none).
//!
//! One request renders up to two GL passes through one view: colour and depth together, then,
//! if asked, a segmentation pass (MuJoCo's id-colour mode) decoded into per-pixel geom ids.
//! Every pass masks [`ABSENT_GEOM_GROUP`] explicitly (and draws no sites or sensor rays), so an
//! absent entity is absent from pixels, depth and labels alike, by our own option rather than by
//! MuJoCo's default geom groups. Rendering has no randomness: the same state and request give
//! the same bytes on the same machine.

use std::thread::{self, ThreadId};

use mujoco_rs::mujoco_c::{mjtFont, mjtGridPos, mjtObj, mjtRndFlag_, mjtVisFlag_};
use mujoco_rs::prelude::*;

use super::gl::{Backend, GlContext, RenderError};
use super::view::{optical_from_mujoco, Intrinsics, Pose, View};
use crate::context::Data;
use crate::mujoco::raycast::VISIBLE_GROUPS;

pub use crate::mujoco::raycast::ABSENT_GEOM_GROUP;

/// Largest image side a request may ask for (px).
pub const MAX_SIDE: u32 = 8192;

/// Extra scene slots beyond the model's geoms (tendons and other decor MuJoCo adds).
const EXTRA_GEOMS: usize = 512;

/// What to render.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderRequest {
    /// Where from.
    pub view: View,
    /// Image width (px), used when `intrinsics` is `None`.
    pub width: u32,
    /// Image height (px), used when `intrinsics` is `None`.
    pub height: u32,
    /// The lens; `None` = the MJCF camera's own (or the model's free-camera fovy).
    pub intrinsics: Option<Intrinsics>,
    /// Produce the colour image.
    pub rgb: bool,
    /// Produce the depth image.
    pub depth: bool,
    /// Produce per-pixel geom ids.
    pub segmentation: bool,
    /// GL near/far clip planes (m); `None` = the model's `visual/map` znear/zfar × extent.
    pub clip: Option<(f64, f64)>,
    /// Render shadows (MuJoCo's shadow map: the dearest part of a software-rendered frame).
    pub shadows: bool,
    /// Multisample anti-aliasing at the model's `visual/quality/offsamples`; off, every pixel is
    /// one sample at its centre (exactly what the projection says, and cheaper).
    pub antialias: bool,
    /// Text MuJoCo's own overlay draws in the top-right corner over the colour image, as two
    /// columns (labels, values; lines separated by `\n`): the window's run panel.
    pub text: Option<(String, String)>,
}

impl RenderRequest {
    /// A colour render of `view` at `width`×`height` with the view's own lens.
    pub fn new(view: View, width: u32, height: u32) -> Self {
        RenderRequest {
            view,
            width,
            height,
            intrinsics: None,
            rgb: true,
            depth: false,
            segmentation: false,
            clip: None,
            shadows: true,
            antialias: false,
            text: None,
        }
    }
    /// Set the lens (its size is the image size).
    pub fn intrinsics(mut self, k: Intrinsics) -> Self {
        self.width = k.width;
        self.height = k.height;
        self.intrinsics = Some(k);
        self
    }
    /// Choose the outputs.
    pub fn outputs(mut self, rgb: bool, depth: bool, segmentation: bool) -> Self {
        self.rgb = rgb;
        self.depth = depth;
        self.segmentation = segmentation;
        self
    }
    /// Set the GL clip planes (m).
    pub fn clip(mut self, near: f64, far: f64) -> Self {
        self.clip = Some((near, far));
        self
    }
    /// Shadows on or off.
    pub fn shadows(mut self, on: bool) -> Self {
        self.shadows = on;
        self
    }
    /// Multisampling on or off.
    pub fn antialias(mut self, on: bool) -> Self {
        self.antialias = on;
        self
    }
    /// Draw `labels` and `values` (two columns) in the top-right corner of the colour image.
    pub fn text(mut self, labels: String, values: String) -> Self {
        self.text = Some((labels, values));
        self
    }
}

/// One rendered frame. Images are row-major, top row first.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// The projection the frame was rendered with (its CameraInfo).
    pub intrinsics: Intrinsics,
    /// The REP 103 optical frame (x right, y down, z forward) in the world at render time.
    pub optical: Pose,
    /// GL near/far clip planes used (m).
    pub clip: (f64, f64),
    /// RGB, 3 bytes per pixel.
    pub rgb: Option<Vec<u8>>,
    /// Depth along the optical axis (m); `+inf` where nothing was drawn within the far plane.
    pub depth: Option<Vec<f32>>,
    /// Geom id per pixel; -1 where no model geom was drawn.
    pub segmentation: Option<Vec<i32>>,
}

impl Frame {
    /// Width (px).
    pub fn width(&self) -> u32 {
        self.intrinsics.width
    }
    /// Height (px).
    pub fn height(&self) -> u32 {
        self.intrinsics.height
    }
    /// The RGB triple at column `u`, row `v`.
    pub fn rgb_at(&self, u: u32, v: u32) -> Option<[u8; 3]> {
        let i = 3 * (v as usize * self.width() as usize + u as usize);
        self.rgb.as_ref().map(|p| [p[i], p[i + 1], p[i + 2]])
    }
    /// The depth at column `u`, row `v` (m).
    pub fn depth_at(&self, u: u32, v: u32) -> Option<f32> {
        self.depth.as_ref().map(|d| d[v as usize * self.width() as usize + u as usize])
    }
    /// The geom id at column `u`, row `v`.
    pub fn geom_at(&self, u: u32, v: u32) -> Option<i32> {
        self.segmentation.as_ref().map(|s| s[v as usize * self.width() as usize + u as usize])
    }
}

/// MuJoCo's render context and scene for one compiled model.
struct ModelState {
    scene: MjvScene,
    con: MjrContext,
}

/// The open GL context and what was made for the current model.
struct GlState {
    owner: ThreadId,
    model: Option<ModelState>,
    gl: GlContext,
}

impl Drop for GlState {
    fn drop(&mut self) {
        // MuJoCo frees its GL objects with the context current; from another thread (or with a
        // context that will not become current) leaking them is the only safe answer.
        let model = self.model.take();
        if thread::current().id() == self.owner && self.gl.make_current().is_ok() {
            drop(model);
        } else {
            std::mem::forget(model);
        }
    }
}

/// The engine's one renderer (see the module docs).
#[derive(Default)]
pub struct RenderService {
    state: Option<GlState>,
    failed: Option<RenderError>,
    passes: u64,
    frames: u64,
}

impl std::fmt::Debug for RenderService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderService")
            .field("open", &self.state.is_some())
            .field("passes", &self.passes)
            .field("frames", &self.frames)
            .finish()
    }
}

impl RenderService {
    /// True once a GL context has been opened.
    pub fn is_open(&self) -> bool {
        self.state.is_some()
    }
    /// GL passes rendered so far (colour+depth is one pass, segmentation one more).
    pub fn passes(&self) -> u64 {
        self.passes
    }
    /// Frames rendered so far (successful [`RenderService::render`] calls).
    pub fn frames(&self) -> u64 {
        self.frames
    }
    /// `(device, GL_RENDERER)` of the open context.
    pub fn device(&self) -> Option<(&str, &str)> {
        self.state.as_ref().map(|s| (s.gl.device.as_str(), s.gl.renderer.as_str()))
    }

    /// Render `req` from the state in `data`. The first call opens the GL context; a machine
    /// that cannot render answers [`RenderError::Unavailable`] on this and every later call.
    pub fn render(&mut self, data: &mut Data, req: &RenderRequest) -> Result<Frame, RenderError> {
        let (w, h) = match req.intrinsics {
            Some(k) => (k.width, k.height),
            None => (req.width, req.height),
        };
        if w == 0 || h == 0 || w > MAX_SIDE || h > MAX_SIDE {
            return Err(RenderError::Request(format!(
                "render size {w}x{h}: width and height must be 1..={MAX_SIDE}"
            )));
        }
        if !(req.rgb || req.depth || req.segmentation) {
            return Err(RenderError::Request("render request asks for no output".into()));
        }
        let model = data.model().clone();
        let (cam_pose, k) = resolve_view(&model, data, req, w, h)?;
        let (near, far) = match req.clip {
            Some(c) => c,
            None => {
                let (map, extent) = (&model.vis().map, model.stat().extent);
                (map.znear as f64 * extent, map.zfar as f64 * extent)
            }
        };
        if !(near > 0.0 && far > near && far.is_finite()) {
            return Err(RenderError::Request(format!(
                "render clip planes near {near} m, far {far} m: need 0 < near < far"
            )));
        }

        let state = self.open()?;
        state.gl.make_current()?;
        let compatible =
            state.model.as_ref().is_some_and(|m| m.scene.is_compatible_with_model(&model));
        if !compatible {
            // free the old model's GL objects (context current) before making new ones
            state.model = None;
            // SAFETY: the context was made current on this thread just above and stays
            // current on it (the state is owned by the thread that opened it).
            let mut con = unsafe { MjrContext::new(&model) };
            con.offscreen();
            let scene = MjvScene::new(&model, model.ffi().ngeom as usize + EXTRA_GEOMS);
            state.model = Some(ModelState { scene, con });
        }
        let ms = state.model.as_mut().expect("made above");
        let (off_w, off_h) = (ms.con.ffi().offWidth as u32, ms.con.ffi().offHeight as u32);
        let samples = if req.antialias { model.vis().quality.offsamples.max(0) } else { 0 };
        if w > off_w || h > off_h || ms.con.ffi().offSamples != samples {
            let (tw, th) = (w.max(off_w), h.max(off_h));
            // SAFETY: a plain field MuJoCo reads when it (re)allocates the offscreen buffers.
            unsafe { ms.con.ffi_mut().offSamples = samples };
            if (tw, th) == (off_w, off_h) {
                // mjr_resizeOffscreen keeps buffers of an unchanged size: step off it once so the
                // buffers are made again with the new sample count
                ms.con.resize_offscreen(tw + 1, th);
            }
            ms.con.resize_offscreen(tw, th);
            ms.con.offscreen();
        }

        set_camera(&mut ms.scene, &cam_pose, &k, near, far);
        // every geom group but the absent one, no sites, no sensor rays
        let mut opt =
            MjvOption { geomgroup: VISIBLE_GROUPS, sitegroup: [0; 6], ..MjvOption::default() };
        opt.flags[mjtVisFlag_::mjVIS_RANGEFINDER as usize] = 0;
        let mut cam = MjvCamera::new_user();
        ms.scene.update(data, &opt, &MjvPerturb::default(), &mut cam);
        let vp = MjrRectangle::new(0, 0, w as i32, h as i32);
        let npx = (w * h) as usize;

        let (mut rgb, mut depth) = (None, None);
        let mut passes = 0;
        if req.rgb || req.depth {
            set_flags(&mut ms.scene, req.shadows, false);
            ms.scene.render(&vp, &ms.con);
            if let (Some((labels, values)), true) = (&req.text, req.rgb) {
                // MuJoCo's fonts cover printable ASCII only
                let ascii = |s: &str| -> String {
                    s.chars()
                        .map(
                            |c| if c.is_ascii_graphic() || c == ' ' || c == '\n' { c } else { '?' },
                        )
                        .collect()
                };
                ms.con.overlay(
                    mjtFont::mjFONT_NORMAL,
                    mjtGridPos::mjGRID_TOPRIGHT,
                    vp,
                    &ascii(labels),
                    Some(&ascii(values)),
                );
            }
            let mut c = req.rgb.then(|| vec![0u8; 3 * npx]);
            let mut z = req.depth.then(|| vec![0f32; npx]);
            ms.con
                .read_pixels(c.as_deref_mut(), z.as_deref_mut(), &vp)
                .map_err(|e| RenderError::Request(format!("reading the frame failed: {e}")))?;
            passes += 1;
            if let Some(c) = c.as_mut() {
                flip_rows(c, 3 * w as usize);
            }
            if let Some(z) = z.as_mut() {
                flip_rows(z, w as usize);
                linearise(z, near, far);
            }
            rgb = c;
            depth = z;
        }
        let mut segmentation = None;
        if req.segmentation {
            set_flags(&mut ms.scene, false, true);
            ms.scene.render(&vp, &ms.con);
            let mut ids = vec![0u8; 3 * npx];
            let read = ms.con.read_pixels(Some(&mut ids), None, &vp);
            set_flags(&mut ms.scene, req.shadows, false);
            read.map_err(|e| RenderError::Request(format!("reading the labels failed: {e}")))?;
            passes += 1;
            flip_rows(&mut ids, 3 * w as usize);
            segmentation = Some(decode_ids(&ms.scene, &ids));
        }
        self.passes += passes;
        self.frames += 1;
        Ok(Frame {
            intrinsics: k,
            optical: optical_from_mujoco(&cam_pose),
            clip: (near, far),
            rgb,
            depth,
            segmentation,
        })
    }

    /// The open state, opening it on first use (once: a failure is remembered).
    fn open(&mut self) -> Result<&mut GlState, RenderError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.state.is_none() {
            let opened = Backend::from_env().and_then(GlContext::open);
            match opened {
                Ok(gl) => {
                    tracing::info!(
                        "offscreen rendering: EGL device {} ({}, OpenGL {})",
                        gl.device,
                        gl.renderer,
                        gl.version
                    );
                    self.state = Some(GlState { owner: thread::current().id(), model: None, gl });
                }
                Err(e) => {
                    self.failed = Some(e.clone());
                    return Err(e);
                }
            }
        }
        let state = self.state.as_mut().expect("opened above");
        if state.owner != thread::current().id() {
            return Err(RenderError::Request(
                "the render service is owned by the physics thread that opened it; render from \
                 that thread (post a command)"
                    .into(),
            ));
        }
        Ok(state)
    }
}

/// The MuJoCo-convention camera pose and the intrinsics of a request.
fn resolve_view(
    model: &MjModel,
    data: &Data,
    req: &RenderRequest,
    w: u32,
    h: u32,
) -> Result<(Pose, Intrinsics), RenderError> {
    let global_fovy = model.vis().global.fovy as f64;
    match req.view {
        View::Camera(id) => {
            let k = match req.intrinsics {
                Some(k) => k,
                None => {
                    Intrinsics::of_model_camera(model, id, w, h).map_err(RenderError::Request)?
                }
            };
            let ncam = model.ffi().ncam as usize;
            if id >= ncam {
                return Err(RenderError::Request(format!(
                    "camera id {id} is out of range (the model has {ncam} cameras)"
                )));
            }
            let (xpos, xmat) = (data.cam_xpos(), data.cam_xmat());
            let pos = xpos[id];
            let m = xmat[id];
            Ok((Pose { pos, mat: m }, k))
        }
        View::Pose(p) => {
            Ok((p, req.intrinsics.unwrap_or(Intrinsics::from_fovy(w, h, global_fovy))))
        }
        View::Free { lookat, distance, azimuth, elevation } => Ok((
            View::free_pose(lookat, distance, azimuth, elevation),
            req.intrinsics.unwrap_or(Intrinsics::from_fovy(w, h, global_fovy)),
        )),
    }
}

/// Point both scene cameras (mono) along `pose` with the frustum of `k`.
fn set_camera(scene: &mut MjvScene, pose: &Pose, k: &Intrinsics, near: f64, far: f64) {
    let [center, half_width, bottom, top] = k.frustum(near);
    let (y, z) = (pose.axis(1), pose.axis(2));
    let gl = MjvGLCamera {
        pos: pose.pos.map(|v| v as f32),
        forward: z.map(|v| -v as f32),
        up: y.map(|v| v as f32),
        frustum_center: center as f32,
        frustum_width: half_width as f32,
        frustum_bottom: bottom as f32,
        frustum_top: top as f32,
        frustum_near: near as f32,
        frustum_far: far as f32,
        orthographic: 0,
    };
    // SAFETY: plain-data fields of the scene; no wrapper invariant depends on the cameras.
    unsafe {
        let s = scene.ffi_mut();
        s.camera = [gl.clone(), gl];
        s.enabletransform = 0;
    }
}

/// Set the render flags of a colour/depth pass or a segmentation pass.
fn set_flags(scene: &mut MjvScene, shadows: bool, segment: bool) {
    // SAFETY: plain-data flags of the scene.
    let f = unsafe { &mut scene.ffi_mut().flags };
    f[mjtRndFlag_::mjRND_SHADOW as usize] = shadows as u8;
    f[mjtRndFlag_::mjRND_SEGMENT as usize] = segment as u8;
    f[mjtRndFlag_::mjRND_IDCOLOR as usize] = segment as u8;
}

/// OpenGL reads bottom-up; images are top-down.
fn flip_rows<T: Copy>(buf: &mut [T], row: usize) {
    let rows = buf.len() / row;
    for r in 0..rows / 2 {
        let (top, bottom) = buf.split_at_mut((rows - 1 - r) * row);
        top[r * row..(r + 1) * row].swap_with_slice(&mut bottom[..row]);
    }
}

/// Depth-buffer values → metres along the optical axis. MuJoCo renders reversed-Z but
/// `mjr_readPixels` hands back the conventional window depth (near → 0, far → 1), so a value `z`
/// is at `n·f / (f − z·(f − n))` (measured: a face 1.5 m away reads 1.5000 m); the cleared value
/// 1 (nothing drawn nearer than the far plane) reads `+inf`.
fn linearise(z: &mut [f32], near: f64, far: f64) {
    for v in z {
        *v = if *v >= 1.0 {
            f32::INFINITY
        } else {
            (near * far / (far - *v as f64 * (far - near))) as f32
        };
    }
}

/// Id-colour pixels → model geom ids (-1: background or a non-geom decoration).
fn decode_ids(scene: &MjvScene, px: &[u8]) -> Vec<i32> {
    let geoms = scene.geoms();
    px.chunks_exact(3)
        .map(|c| {
            let seg = c[0] as i32 | (c[1] as i32) << 8 | (c[2] as i32) << 16;
            match geoms.get((seg - 1) as usize) {
                Some(g) if seg > 0 && g.objtype == mjtObj::mjOBJ_GEOM as i32 => g.objid,
                _ => -1,
            }
        })
        .collect()
}
