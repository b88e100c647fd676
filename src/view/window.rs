//! The `--view` window, on the main thread, with the engine on its own physics thread.
//!
//! winit creates its event loop on the main thread only, so the window lives there and the whole
//! simulation (load, build, steps, transport, shutdown) runs on a `roqsim-physics` thread. The
//! window never touches MjData. Two windows exist, chosen per run:
//! - roqsim's own ([`super::scene_window`], the default): frames come from the engine's one
//!   offscreen renderer on the physics thread, through a camera roqsim owns, so `sim.view`'s
//!   `track` and `follow_heading` follow the entity; no left panel;
//! - MuJoCo's viewer as mujoco-rs ships it ([`super::mj_viewer`]), when `--left-ui` or
//!   `--manual-control` asks for its panel (the actuator sliders, body dragging).
//!
//! In both, pause (Space), one step (Right arrow) and reset (Backspace) are posted as commands on
//! the run control SetSimulationState uses, so the window and ROS drive one state machine.
//! Closing the window (or Ctrl+Q) ends the run like an interrupt: the physics thread leaves its
//! loop, runs every shutdown hook and returns its summary; the process exits 0.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use super::camera::ViewCamera;
use super::{mj_viewer, scene_window};
use crate::context::{CommandSender, RunState};
use crate::engine::Engine;

/// Longest wait between two refreshes of the window (wall time).
pub(super) const FRAME: Duration = Duration::from_millis(16);

/// Run-level window options (not part of the world: they describe one interactive session).
#[derive(Debug, Clone, Default)]
pub struct WindowOptions {
    /// Window title.
    pub title: String,
    /// Show roqsim's run panel (state, sim time, play/pause/step/reset, the keys).
    pub right_ui: bool,
    /// Show MuJoCo's left panel (opens mujoco-rs's viewer instead of roqsim's window).
    pub left_ui: bool,
    /// `--manual-control` is on (opens mujoco-rs's viewer for its actuator sliders).
    pub manual_control: bool,
}

impl WindowOptions {
    /// True when this run needs mujoco-rs's viewer (its left panel: sliders, body dragging).
    pub fn mujoco_viewer(&self) -> bool {
        self.left_ui || self.manual_control
    }
}

/// Why `--view` cannot open a window here, if it cannot (no display server to talk to).
pub fn display_refusal() -> Option<String> {
    let set = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    if set("DISPLAY") || set("WAYLAND_DISPLAY") {
        None
    } else {
        Some(
            "--view needs a display, and DISPLAY is not set (nor WAYLAND_DISPLAY): run it in a \
             desktop session, under `xvfb-run`, or drop --view for a headless run"
                .to_string(),
        )
    }
}

/// What the physics thread asks the main thread to open.
enum Opening {
    Scene(scene_window::Opening),
    Mj(mj_viewer::Opening),
}

enum Link {
    None,
    Scene(Box<scene_window::SceneLink>),
    Mj(mj_viewer::MjLink),
}

/// The physics thread's end of the window.
pub struct PhysicsLink {
    opts: WindowOptions,
    open_tx: Option<mpsc::Sender<Opening>>,
    link: Link,
    closed: Arc<AtomicBool>,
}

impl PhysicsLink {
    /// Open the window on `engine`'s model with `camera`. Blocks until the main thread has
    /// created it; an error names why the window could not open.
    pub fn open(&mut self, engine: &mut Engine, camera: ViewCamera) -> Result<(), String> {
        let tx = self.open_tx.take().ok_or("the window is already open")?;
        const GONE: &str = "the window's thread is gone";
        if self.opts.mujoco_viewer() {
            if let Some(t) = &camera.track {
                tracing::warn!(
                    "sim.view.track: --left-ui/--manual-control open mujoco-rs 7.0.0's viewer, \
                     whose camera is private: it starts on `{}` but does not follow it; track it \
                     by hand with Ctrl+Alt+double-click on its body (the default window, without \
                     --left-ui and --manual-control, follows it)",
                    t.entity
                );
            }
            let (reply, rx) = mpsc::channel();
            let model = mj_viewer::window_model(engine.ctx.model(), camera.pose(engine.ctx.data()));
            tx.send(Opening::Mj(mj_viewer::Opening {
                model,
                commands: engine.ctx.command_sender(),
                reply,
            }))
            .map_err(|_| GONE.to_string())?;
            let state = rx.recv().map_err(|_| GONE.to_string())??;
            self.link = Link::Mj(mj_viewer::MjLink {
                state,
                last_sync: None,
                last_time: engine.ctx.data().time(),
            });
        } else {
            // A machine that cannot render offscreen is refused before a window opens.
            let mut link = scene_window::SceneLink::new(engine, camera, &self.opts);
            link.render(engine, (64, 48)).map_err(|e| format!("cannot draw the window: {e}"))?;
            let (reply, rx) = mpsc::channel();
            tx.send(Opening::Scene(scene_window::Opening {
                shared: link.shared(),
                commands: engine.ctx.command_sender(),
                reply,
            }))
            .map_err(|_| GONE.to_string())?;
            rx.recv().map_err(|_| GONE.to_string())??;
            self.link = Link::Scene(Box::new(link));
        }
        Ok(())
    }

    /// True once the person closed the window (the run should end).
    pub fn closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// The flag [`PhysicsLink::closed`] reads, for a stop condition.
    pub fn closed_flag(&self) -> Arc<AtomicBool> {
        self.closed.clone()
    }

    /// Between steps, on the physics thread: refresh the window (at most every 16 ms of wall
    /// time) and take in what the person did.
    pub fn frame(&mut self, engine: &mut Engine) {
        match &mut self.link {
            Link::None => {}
            Link::Scene(l) => l.frame(engine),
            Link::Mj(l) => l.frame(engine),
        }
    }
}

/// Run `physics` on its own thread and the window on this (the main) thread. `physics` gets a
/// [`PhysicsLink`]; it opens the window once its engine exists (a world that fails to load never
/// opens one) and returns when the run ends. Returns what `physics` returned.
pub fn run_windowed<T: Send + 'static>(
    opts: WindowOptions,
    physics: impl FnOnce(PhysicsLink) -> T + Send + 'static,
) -> T {
    let (open_tx, open_rx) = mpsc::channel::<Opening>();
    let closed = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let link = PhysicsLink {
        opts: opts.clone(),
        open_tx: Some(open_tx),
        link: Link::None,
        closed: closed.clone(),
    };
    let done_flag = done.clone();
    let handle = std::thread::Builder::new()
        .name("roqsim-physics".into())
        .spawn(move || {
            let out = physics(link);
            done_flag.store(true, Ordering::SeqCst);
            out
        })
        .expect("spawn the physics thread");
    // Wait for the engine (or for the thread to end without one: a load error).
    match open_rx.recv() {
        Ok(Opening::Mj(o)) => {
            mj_viewer::run(&opts, o, &done);
            closed.store(true, Ordering::SeqCst);
        }
        Ok(Opening::Scene(o)) => {
            scene_window::run(&opts, o, &done);
            closed.store(true, Ordering::SeqCst);
        }
        Err(_) => {}
    }
    match handle.join() {
        Ok(out) => out,
        Err(p) => std::panic::resume_unwind(p),
    }
}

/// The keys roqsim adds (to MuJoCo's viewer: F1 lists its own).
pub const KEYS: &[(&str, &str)] = &[
    ("Space", "pause / play (the run control SetSimulationState uses)"),
    ("Right", "one physics step while paused"),
    ("Backspace", "reset (on_reset hooks run; controllers hold their pose)"),
    ("Ctrl+Q or close", "end the run (shutdown hooks run)"),
];

/// Post pause/play on the run control.
pub(super) fn post_toggle(commands: &CommandSender) {
    commands.post(|ctx| {
        ctx.control.state = match ctx.control.state {
            RunState::Playing => RunState::Paused,
            RunState::Quitting => RunState::Quitting,
            _ => RunState::Playing,
        }
    });
}

/// Post one step (while paused) on the run control.
pub(super) fn post_step(commands: &CommandSender) {
    commands.post(|ctx| {
        if ctx.control.state != RunState::Playing {
            ctx.control.pending_steps += 1;
        }
    });
}

/// How the run panel names a run state.
pub(super) fn state_name(s: Option<RunState>) -> &'static str {
    match s {
        None => "starting",
        Some(RunState::Playing) => "playing",
        Some(RunState::Paused) => "paused",
        Some(RunState::Stopped) => "stopped",
        Some(RunState::Quitting) => "quitting",
    }
}

/// Time since `t`, or forever when never.
pub(super) fn since(t: Option<Instant>) -> Duration {
    t.map_or(Duration::MAX, |t| t.elapsed())
}
