//! roqsim's own `--view` window: a winit window that shows frames of the engine's one offscreen
//! renderer (`crate::render`), seen through a camera roqsim owns.
//!
//! - On the physics thread ([`SceneLink::frame`], between steps, at most 60 times a wall second
//!   and only when something changed): the camera takes the person's mouse moves
//!   ([`super::mouse`]), follows `sim.view.track`'s root body (and its heading with
//!   `follow_heading`) through [`ViewCamera::pose`], and the render service draws the frame at the
//!   window's size — the same path `roqsim render` and the cameras use, so there is one GL scene
//!   renderer in the process. With `--right-ui` MuJoCo's text overlay draws the run panel on it.
//! - On the main thread ([`run`]): winit's event loop, a GL context on the window that only
//!   copies the latest frame to the screen (`glDrawPixels`), and the keys and the mouse. Keys
//!   post commands on the run control; mouse moves go to the physics thread as [`CameraMove`]s.
//!
//! The window never touches MjData, and there is no left panel (MuJoCo's viewer with its panel
//! is `--left-ui`, [`super::mj_viewer`]).

use std::ffi::{c_void, CString};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use glutin::config::ConfigTemplateBuilder;
use glutin::context::{
    ContextApi, ContextAttributesBuilder, GlProfile, PossiblyCurrentContext, Version,
};
use glutin::display::{Display, GetGlDisplay, GlDisplay};
use glutin::prelude::{GlSurface, NotCurrentGlContext, PossiblyCurrentGlContext};
use glutin::surface::{Surface, SurfaceAttributesBuilder, WindowSurface};
use glutin_winit::{ApiPreference, DisplayBuilder, GlWindow};
use winit::application::ApplicationHandler;
use winit::dpi::{PhysicalPosition, PhysicalSize};
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{Key, ModifiersState, NamedKey};
use winit::raw_window_handle::HasWindowHandle;
use winit::window::{Window, WindowId};

use super::camera::{CameraPose, ViewCamera};
use super::mouse::{self, CameraMove};
use super::window::{post_step, post_toggle, since, state_name, WindowOptions, FRAME};
use crate::context::{CommandSender, ResetScope};
use crate::engine::Engine;
use crate::render::{RenderRequest, View};

/// The shortest wait between two frames: at most 30 a wall second. Showing a frame costs the
/// window's thread a software copy as well as the render, so fewer frames leave the cores to
/// the simulation (a reviewer measured the copy at half a core at 60 frames a second).
const SCENE_FRAME: Duration = Duration::from_micros(33_333);

/// The longest wait between two frames however slow rendering is (at least 4 frames a second).
const MAX_WAIT: Duration = Duration::from_millis(250);

/// The window's size when it opens (px).
pub const START_SIZE: (u32, u32) = (1280, 720);

/// A rendered frame handed to the window.
struct Shown {
    width: u32,
    height: u32,
    /// RGB, top row first.
    rgb: Vec<u8>,
    seq: u64,
}

/// What the two threads share.
#[derive(Default)]
pub(super) struct Shared {
    /// The newest frame (the window takes it).
    frame: Mutex<Option<Shown>>,
    /// The window's drawable size, `width << 32 | height` (0 until it exists).
    size: AtomicU64,
    /// Camera moves not yet applied.
    moves: Mutex<Vec<CameraMove>>,
}

impl Shared {
    fn size(&self) -> (u32, u32) {
        let s = self.size.load(Ordering::SeqCst);
        ((s >> 32) as u32, s as u32)
    }
    fn set_size(&self, w: u32, h: u32) {
        self.size.store(((w as u64) << 32) | h as u64, Ordering::SeqCst);
    }
    fn push(&self, mv: CameraMove) {
        self.moves.lock().unwrap_or_else(|p| p.into_inner()).push(mv);
    }
}

/// What the physics thread sends the main thread to open the window.
pub(super) struct Opening {
    pub shared: Arc<Shared>,
    pub commands: CommandSender,
    pub reply: mpsc::Sender<Result<(), String>>,
}

/// What a frame showed; an unchanged one is not rendered again.
#[derive(Debug, Clone, PartialEq)]
struct Shot {
    time: f64,
    pose: CameraPose,
    size: (u32, u32),
    text: Option<(String, String)>,
}

/// The physics thread's end of the window: the camera and the renders.
pub(super) struct SceneLink {
    shared: Arc<Shared>,
    camera: ViewCamera,
    start: ViewCamera,
    right_ui: bool,
    extent: f64,
    fovy: f64,
    last_render: Option<Instant>,
    /// Wall time the last render took: the next waits 3× that (at most [`MAX_WAIT`]), so drawing
    /// the window takes about a quarter of the physics thread's time when software GL is slow.
    cost: Duration,
    last: Option<Shot>,
    seq: u64,
    failed: bool,
}

impl SceneLink {
    /// The link for `engine`, starting on `camera`.
    pub fn new(engine: &Engine, camera: ViewCamera, opts: &WindowOptions) -> Self {
        let m = engine.ctx.model();
        SceneLink {
            shared: Arc::new(Shared::default()),
            start: camera.clone(),
            camera,
            right_ui: opts.right_ui,
            extent: m.stat().extent,
            fovy: m.vis().global.fovy as f64,
            last_render: None,
            cost: Duration::ZERO,
            last: None,
            seq: 0,
            failed: false,
        }
    }

    /// The state the window shares.
    pub fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }

    /// Between steps: apply the mouse's camera moves and render a new frame when one is due
    /// and something changed (sim time, camera, size, panel).
    pub fn frame(&mut self, engine: &mut Engine) {
        if self.failed || since(self.last_render) < SCENE_FRAME.max((3 * self.cost).min(MAX_WAIT)) {
            return;
        }
        let moves =
            std::mem::take(&mut *self.shared.moves.lock().unwrap_or_else(|p| p.into_inner()));
        if !moves.is_empty() {
            let yaw = self.camera.track.as_ref().map_or(0.0, |t| {
                let q = &engine.ctx.data().xquat()[t.body];
                crate::math::yaw_of(&[q[0], q[1], q[2], q[3]])
            });
            for mv in moves {
                mouse::apply(&mut self.camera, &self.start, mv, self.extent, self.fovy, yaw);
            }
        }
        let size = self.shared.size();
        if size.0 == 0 || size.1 == 0 {
            return;
        }
        if let Err(e) = self.render(engine, size) {
            tracing::error!("the window cannot draw: {e}");
            self.failed = true;
        }
    }

    /// The camera the window looks through now (tracking applied).
    pub fn pose(&self, engine: &Engine) -> CameraPose {
        self.camera.pose(engine.ctx.data())
    }

    /// Render the current state at `size` for the window, unless it shows exactly that already.
    pub fn render(&mut self, engine: &mut Engine, size: (u32, u32)) -> Result<(), String> {
        let pose = self.pose(engine);
        let time = engine.ctx.data().time();
        let text = self.right_ui.then(|| self.panel(engine));
        let shot = Shot { time, pose, size, text };
        if self.last.as_ref() == Some(&shot) {
            return Ok(());
        }
        let t0 = Instant::now();
        self.last_render = Some(t0);
        let view = View::Free {
            lookat: pose.lookat,
            distance: pose.distance,
            azimuth: pose.azimuth,
            elevation: pose.elevation,
        };
        let mut req = RenderRequest::new(view, size.0, size.1);
        if let Some((labels, values)) = &shot.text {
            req = req.text(labels.clone(), values.clone());
        }
        let f = engine.ctx.render(&req).map_err(|e| e.to_string())?;
        // the first render opens the GL context: not what a frame costs
        self.cost = if self.seq == 0 { Duration::ZERO } else { t0.elapsed() };
        let rgb = f.rgb.ok_or("the render returned no colour image")?;
        self.seq += 1;
        *self.shared.frame.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(Shown { width: size.0, height: size.1, rgb, seq: self.seq });
        self.last = Some(shot);
        Ok(())
    }

    /// The run panel (`--right-ui`): labels and values, MuJoCo's two-column overlay.
    fn panel(&self, engine: &Engine) -> (String, String) {
        let state = state_name(Some(engine.ctx.control.state));
        let camera = match &self.camera.track {
            None => "free".to_string(),
            Some(t) if t.follow_heading => format!("tracking {} (heading)", t.entity),
            Some(t) => format!("tracking {}", t.entity),
        };
        let rows = [
            ("roqsim", state.to_string()),
            ("Sim time", format!("{:.3} s", engine.ctx.data().time())),
            ("Camera", camera),
            ("Space", "play / pause".into()),
            ("Right", "one step (paused)".into()),
            ("Backspace", "reset".into()),
            ("Escape", "camera to sim.view".into()),
            ("Ctrl+Q", "end the run".into()),
        ];
        let labels = rows.iter().map(|r| r.0).collect::<Vec<_>>().join("\n");
        let values = rows.iter().map(|r| r.1.as_str()).collect::<Vec<_>>().join("\n");
        (labels, values)
    }
}

/// On the main thread: run the window until it closes or `done` says the run ended. Answers
/// the opening (Ok once the window exists, else why not).
pub(super) fn run(opts: &WindowOptions, o: Opening, done: &AtomicBool) {
    let event_loop = match EventLoop::new() {
        Ok(l) => l,
        Err(e) => {
            let _ = o.reply.send(Err(format!("cannot open the window: {e}")));
            return;
        }
    };
    let mut app = App {
        title: opts.title.clone(),
        shared: o.shared,
        commands: o.commands,
        reply: Some(o.reply),
        done,
        gl: None,
        shown: None,
        mods: ModifiersState::empty(),
        buttons: [false; 3],
        cursor: None,
    };
    let ran = event_loop.run_app(&mut app);
    if let Some(reply) = app.reply.take() {
        let why = match ran {
            Err(e) => format!("cannot open the window: {e}"),
            Ok(()) => "cannot open the window: the event loop ended first".to_string(),
        };
        let _ = reply.send(Err(why));
    } else if let Err(e) = ran {
        tracing::error!("the window failed: {e}; ending the run");
    }
    // the GL context and surface go before the window they were made on
    drop(app.gl.take());
}

/// The window, its GL context and the few GL calls that copy a frame to it.
struct GlWindowState {
    context: PossiblyCurrentContext,
    surface: Surface<WindowSurface>,
    fns: Blit,
    window: Window,
}

impl Drop for GlWindowState {
    fn drop(&mut self) {
        let _ = self.context.make_not_current_in_place();
    }
}

struct App<'a> {
    title: String,
    shared: Arc<Shared>,
    commands: CommandSender,
    reply: Option<mpsc::Sender<Result<(), String>>>,
    done: &'a AtomicBool,
    gl: Option<GlWindowState>,
    shown: Option<Shown>,
    mods: ModifiersState,
    /// left, right, middle held
    buttons: [bool; 3],
    cursor: Option<PhysicalPosition<f64>>,
}

impl App<'_> {
    fn open(&self, event_loop: &ActiveEventLoop) -> Result<GlWindowState, String> {
        let attrs = Window::default_attributes()
            .with_title(&self.title)
            .with_inner_size(PhysicalSize::new(START_SIZE.0, START_SIZE.1));
        let template = ConfigTemplateBuilder::new().with_alpha_size(0);
        let (window, config) = DisplayBuilder::new()
            .with_preference(ApiPreference::FallbackEgl)
            .with_window_attributes(Some(attrs))
            .build(event_loop, template, |mut configs| {
                configs.next().expect("glutin hands the picker at least one config")
            })
            .map_err(|e| format!("no GL configuration for the window ({e})"))?;
        let window = window.ok_or("the window could not be created")?;
        let handle = window.window_handle().map_err(|e| e.to_string())?.as_raw();
        let cattrs = ContextAttributesBuilder::new()
            .with_profile(GlProfile::Compatibility)
            .with_context_api(ContextApi::OpenGl(Some(Version::new(2, 0))))
            .build(Some(handle));
        let display = config.display();
        // SAFETY: the config belongs to the display and the window handle is alive.
        let context = unsafe { display.create_context(&config, &cattrs) }
            .map_err(|e| format!("no GL context for the window ({e})"))?;
        let sattrs = window
            .build_surface_attributes(SurfaceAttributesBuilder::<WindowSurface>::new())
            .map_err(|e| e.to_string())?;
        // SAFETY: as above; the surface is dropped before the window (GlWindowState's order).
        let surface = unsafe { display.create_window_surface(&config, &sattrs) }
            .map_err(|e| format!("no GL surface for the window ({e})"))?;
        let context = context.make_current(&surface).map_err(|e| e.to_string())?;
        let fns = Blit::load(&display)?;
        let size = window.inner_size();
        self.shared.set_size(size.width, size.height);
        Ok(GlWindowState { context, surface, fns, window })
    }

    fn draw(&mut self) {
        let Some(gl) = &self.gl else { return };
        if let Some(f) = self.shared.frame.lock().unwrap_or_else(|p| p.into_inner()).take() {
            self.shown = Some(f);
        }
        let size = gl.window.inner_size();
        gl.fns.show(self.shown.as_ref(), size.width, size.height);
        let err = (gl.fns.get_error)();
        if err != 0 {
            tracing::warn!("the window's GL reported error 0x{err:x} copying a frame");
        }
        if let Err(e) = gl.surface.swap_buffers(&gl.context) {
            tracing::warn!("the window could not show a frame: {e}");
        }
    }

    fn key(&mut self, event_loop: &ActiveEventLoop, key: &Key, repeat: bool) {
        match key {
            Key::Named(NamedKey::Space) if !repeat => post_toggle(&self.commands),
            Key::Named(NamedKey::ArrowRight) => post_step(&self.commands),
            Key::Named(NamedKey::Backspace) if !repeat => {
                self.commands.post(|ctx| ctx.control.reset = Some(ResetScope::ALL));
            }
            Key::Named(NamedKey::Escape) => self.shared.push(CameraMove::Home),
            Key::Character(c) if self.mods.control_key() && c.eq_ignore_ascii_case("q") => {
                event_loop.exit()
            }
            _ => {}
        }
    }

    fn cursor_moved(&mut self, p: PhysicalPosition<f64>) {
        let last = self.cursor.replace(p);
        let (Some(last), Some(gl)) = (last, &self.gl) else { return };
        let h = gl.window.inner_size().height.max(1) as f64;
        let (dx, dy) = ((p.x - last.x) / h, (p.y - last.y) / h);
        let mv = match self.buttons {
            [true, _, _] => CameraMove::Orbit { dx, dy },
            [_, true, _] => CameraMove::Pan { dx, dy, horizontal: self.mods.shift_key() },
            [_, _, true] => CameraMove::Zoom { dy },
            _ => return,
        };
        self.shared.push(mv);
    }
}

impl ApplicationHandler for App<'_> {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.gl.is_some() {
            return;
        }
        match self.open(event_loop) {
            Ok(gl) => {
                self.gl = Some(gl);
                if let Some(r) = self.reply.take() {
                    let _ = r.send(Ok(()));
                }
            }
            Err(e) => {
                if let Some(r) = self.reply.take() {
                    let _ = r.send(Err(format!("cannot open the window: {e}")));
                }
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(size) => {
                if let (Some(gl), Some(w), Some(h)) =
                    (&self.gl, NonZeroU32::new(size.width), NonZeroU32::new(size.height))
                {
                    gl.surface.resize(&gl.context, w, h);
                    self.shared.set_size(size.width, size.height);
                    gl.window.request_redraw();
                }
            }
            WindowEvent::RedrawRequested => self.draw(),
            WindowEvent::ModifiersChanged(m) => self.mods = m.state(),
            WindowEvent::KeyboardInput { event, .. } if event.state == ElementState::Pressed => {
                self.key(event_loop, &event.logical_key, event.repeat)
            }
            WindowEvent::MouseInput { state, button, .. } => {
                let i = match button {
                    MouseButton::Left => 0,
                    MouseButton::Right => 1,
                    MouseButton::Middle => 2,
                    _ => return,
                };
                self.buttons[i] = state == ElementState::Pressed;
            }
            WindowEvent::CursorMoved { position, .. } => self.cursor_moved(position),
            WindowEvent::CursorLeft { .. } => self.cursor = None,
            WindowEvent::MouseWheel { delta, .. } => {
                let lines = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y as f64,
                    MouseScrollDelta::PixelDelta(p) => p.y / 20.0,
                };
                // MuJoCo's simulate: a scroll line zooms by −0.05 of the window height
                self.shared.push(CameraMove::Zoom { dy: -0.05 * lines });
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        if self.done.load(Ordering::SeqCst) {
            event_loop.exit();
            return;
        }
        let fresh = self
            .shared
            .frame
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|f| self.shown.as_ref().is_none_or(|s| s.seq != f.seq));
        if fresh {
            self.draw();
        }
        event_loop.set_control_flow(ControlFlow::WaitUntil(Instant::now() + FRAME / 2));
    }
}

const GL_COLOR_BUFFER_BIT: u32 = 0x4000;
const GL_UNPACK_ALIGNMENT: u32 = 0x0CF5;
const GL_RGB: u32 = 0x1907;
const GL_UNSIGNED_BYTE: u32 = 0x1401;

/// The GL 1.4 calls that copy an RGB image to the window (no scene is drawn here).
struct Blit {
    viewport: extern "system" fn(i32, i32, i32, i32),
    clear_color: extern "system" fn(f32, f32, f32, f32),
    clear: extern "system" fn(u32),
    pixel_store: extern "system" fn(u32, i32),
    window_pos: extern "system" fn(i32, i32),
    pixel_zoom: extern "system" fn(f32, f32),
    draw_pixels: extern "system" fn(i32, i32, u32, u32, *const c_void),
    get_error: extern "system" fn() -> u32,
}

impl Blit {
    fn load(display: &Display) -> Result<Self, String> {
        let get = |name: &str| -> Result<*const c_void, String> {
            let c = CString::new(name).expect("no NUL");
            let p = display.get_proc_address(&c);
            if p.is_null() {
                Err(format!("the window's GL has no {name}"))
            } else {
                Ok(p)
            }
        };
        // SAFETY: each pointer is the named GL entry point of the current context, transmuted to
        // that function's C signature.
        unsafe {
            Ok(Blit {
                viewport: std::mem::transmute::<
                    *const c_void,
                    extern "system" fn(i32, i32, i32, i32),
                >(get("glViewport")?),
                clear_color: std::mem::transmute::<
                    *const c_void,
                    extern "system" fn(f32, f32, f32, f32),
                >(get("glClearColor")?),
                clear: std::mem::transmute::<*const c_void, extern "system" fn(u32)>(get(
                    "glClear",
                )?),
                pixel_store: std::mem::transmute::<*const c_void, extern "system" fn(u32, i32)>(
                    get("glPixelStorei")?,
                ),
                window_pos: std::mem::transmute::<*const c_void, extern "system" fn(i32, i32)>(
                    get("glWindowPos2i")?,
                ),
                pixel_zoom: std::mem::transmute::<*const c_void, extern "system" fn(f32, f32)>(
                    get("glPixelZoom")?,
                ),
                draw_pixels: std::mem::transmute::<
                    *const c_void,
                    extern "system" fn(i32, i32, u32, u32, *const c_void),
                >(get("glDrawPixels")?),
                get_error: std::mem::transmute::<*const c_void, extern "system" fn() -> u32>(get(
                    "glGetError",
                )?),
            })
        }
    }

    /// Clear the window and copy `frame` to it, its top row at the window's top.
    fn show(&self, frame: Option<&Shown>, width: u32, height: u32) {
        (self.viewport)(0, 0, width as i32, height as i32);
        (self.clear_color)(0.1, 0.1, 0.1, 1.0);
        (self.clear)(GL_COLOR_BUFFER_BIT);
        let Some(f) = frame else { return };
        if f.rgb.len() != (f.width as usize) * (f.height as usize) * 3 {
            return;
        }
        (self.pixel_store)(GL_UNPACK_ALIGNMENT, 1);
        // rows go down from the window's top edge (GL counts rows from the bottom)
        (self.window_pos)(0, height as i32);
        (self.pixel_zoom)(1.0, -1.0);
        (self.draw_pixels)(
            f.width as i32,
            f.height as i32,
            GL_RGB,
            GL_UNSIGNED_BYTE,
            f.rgb.as_ptr().cast(),
        );
    }
}
