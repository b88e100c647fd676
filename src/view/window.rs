//! The `--view` window: MuJoCo's interactive viewer (mujoco-rs's native one: winit + glutin +
//! egui) on the main thread, the engine on its own physics thread.
//!
//! winit creates its event loop on the main thread only, so the window lives there and the whole
//! simulation (load, build, steps, transport, shutdown) runs on a `roqsim-physics` thread. The
//! window never touches the engine's MjData: it draws its own copy, which the physics thread
//! refreshes between steps ([`PhysicsLink::frame`], at most 60 times a wall second). What a person
//! does in the window reaches the simulation only there, on the physics thread:
//! - edits the viewer makes to its copy (actuator sliders, joint edits, a dragged body's
//!   perturbation force) are merged into MjData by that same sync, between two steps;
//! - pause (Space), one step (Right arrow) and reset (Backspace, or the panel's buttons) are
//!   posted as commands on the run control SetSimulationState uses, so the window and ROS drive
//!   one state machine. The viewer resets its own copy on Backspace; the sync after it absorbs
//!   that and the engine then performs a real reset (on_reset hooks: controllers hold the pose).
//!
//! Closing the window (or Ctrl+Q) ends the run like an interrupt: the physics thread leaves its
//! loop, runs every shutdown hook and returns its summary; the process exits 0.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use mujoco_rs::prelude::MjModel;
use mujoco_rs::viewer::{egui, MjViewer, ViewerSharedState};

use super::camera::CameraPose;
use crate::context::{CommandSender, ResetScope, RunState};
use crate::engine::Engine;

/// Longest wait between two refreshes of the window's copy of the state (wall time).
const FRAME: Duration = Duration::from_millis(16);

/// Run-level window options (not part of the world: they describe one interactive session).
#[derive(Debug, Clone, Default)]
pub struct WindowOptions {
    /// Window title.
    pub title: String,
    /// Show roqsim's run panel (state, sim time, play/pause/step/reset, the keys).
    pub right_ui: bool,
    /// `--manual-control` is on (the panel says who owns ctrl).
    pub manual_control: bool,
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

struct Opening {
    model: MjModel,
    commands: CommandSender,
    reply: mpsc::Sender<Result<Arc<Mutex<ViewerSharedState>>, String>>,
}

/// The physics thread's end of the window.
pub struct PhysicsLink {
    open_tx: Option<mpsc::Sender<Opening>>,
    state: Option<Arc<Mutex<ViewerSharedState>>>,
    closed: Arc<AtomicBool>,
    last_sync: Option<Instant>,
    last_time: f64,
}

impl PhysicsLink {
    /// Open the window on `engine`'s model with the camera at `camera`. Blocks until the main
    /// thread has created it; an error names why the window could not open.
    pub fn open(&mut self, engine: &Engine, camera: CameraPose) -> Result<(), String> {
        let tx = self.open_tx.take().ok_or("the window is already open")?;
        let (reply, rx) = mpsc::channel();
        let model = window_model(engine.ctx.model(), camera);
        tx.send(Opening { model, commands: engine.ctx.command_sender(), reply })
            .map_err(|_| "the window's thread is gone".to_string())?;
        let state = rx.recv().map_err(|_| "the window's thread is gone".to_string())??;
        self.state = Some(state);
        self.last_time = engine.ctx.data().time();
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

    /// Between steps, on the physics thread: merge the window's edits into MjData and refresh its
    /// copy (at most every 16 ms of wall time, and always right after a reset).
    pub fn frame(&mut self, engine: &mut Engine) {
        let Some(state) = &self.state else { return };
        let due = self.last_sync.is_none_or(|t| t.elapsed() >= FRAME);
        let t_before = engine.ctx.data().time();
        let reset_since = t_before < self.last_time;
        if !due && !reset_since {
            return;
        }
        self.last_sync = Some(Instant::now());
        let mut lock = state.lock().unwrap_or_else(|p| p.into_inner());
        lock.sync_data(engine.ctx.data_mut());
        drop(lock);
        let t_after = engine.ctx.data().time();
        // The viewer's own reset (Backspace, its Reset button) zeroed its copy's time and the
        // sync carried that over: make it a real reset, on the run control.
        if t_before > 0.0 && t_after == 0.0 {
            engine.ctx.control.reset = Some(ResetScope::ALL);
        }
        self.last_time = t_after;
    }
}

/// The viewer's copy of the model, with the initial free camera written where the viewer reads
/// it. mujoco-rs 7.0.0's viewer has no camera setter: it starts from `mjv_defaultFreeCamera`,
/// which takes lookat from `stat.center`, distance from `1.5 × stat.extent` and the angles from
/// `vis.global`. The clip planes, shadow clip and fog scale with the extent, so they are scaled
/// back to keep what the scene draws unchanged. The physics model is not touched.
fn window_model(model: &MjModel, c: CameraPose) -> MjModel {
    let mut m = model.clone();
    let old_extent = m.stat().extent;
    let extent = c.distance / 1.5;
    let k = (old_extent / extent) as f32;
    {
        let s = m.stat_mut();
        s.center = c.lookat;
        s.extent = extent;
    }
    let v = m.vis_mut();
    v.global.azimuth = c.azimuth as f32;
    v.global.elevation = c.elevation as f32;
    v.map.znear *= k;
    v.map.zfar *= k;
    v.map.shadowclip *= k;
    v.map.fogstart *= k;
    v.map.fogend *= k;
    m
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
        open_tx: Some(open_tx),
        state: None,
        closed: closed.clone(),
        last_sync: None,
        last_time: 0.0,
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
    if let Ok(opening) = open_rx.recv() {
        // mujoco-rs panics on a GL display without a usable configuration: an error here, so
        // the physics thread still shuts down cleanly.
        let opened =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| open_viewer(&opts, &opening)))
                .unwrap_or_else(|_| {
                    Err("cannot open the window: the GL display has no usable configuration".into())
                });
        match opened {
            Err(e) => {
                let _ = opening.reply.send(Err(e));
            }
            Ok(mut viewer) => {
                let _ = opening.reply.send(Ok(viewer.state().clone()));
                let mut failed = None;
                while viewer.running() && !done.load(Ordering::SeqCst) {
                    let t = Instant::now();
                    if let Err(e) = viewer.render() {
                        failed = Some(e.to_string());
                        break;
                    }
                    if let Some(rest) = FRAME.checked_sub(t.elapsed()) {
                        std::thread::sleep(rest);
                    }
                }
                if let Some(e) = failed {
                    tracing::error!("the window failed: {e}; ending the run");
                }
                closed.store(true, Ordering::SeqCst);
                drop(viewer);
            }
        }
    }
    match handle.join() {
        Ok(out) => out,
        Err(p) => std::panic::resume_unwind(p),
    }
}

fn open_viewer(opts: &WindowOptions, o: &Opening) -> Result<MjViewer, String> {
    let mut viewer = MjViewer::builder()
        .window_name(opts.title.clone())
        .build_passive(&o.model)
        .map_err(|e| format!("cannot open the window: {e}"))?;
    let panel = Panel {
        commands: o.commands.clone(),
        status: Arc::new(Mutex::new(PanelStatus::default())),
        right_ui: opts.right_ui,
        manual_control: opts.manual_control,
    };
    viewer.add_ui_callback(move |ui, state| panel.draw(ui, state));
    Ok(viewer)
}

/// What the run panel shows, refreshed from the physics thread by a posted command.
#[derive(Debug, Clone, Copy, Default)]
struct PanelStatus {
    state: Option<RunState>,
    time: f64,
}

/// roqsim's keys and run panel: a UI callback of the viewer, called on the main thread each
/// frame. It only posts commands; the physics thread applies them between steps.
struct Panel {
    commands: CommandSender,
    status: Arc<Mutex<PanelStatus>>,
    right_ui: bool,
    manual_control: bool,
}

/// The keys roqsim adds to the viewer's own (F1 lists those).
pub const KEYS: &[(&str, &str)] = &[
    ("Space", "pause / play (the run control SetSimulationState uses)"),
    ("Right", "one physics step while paused"),
    ("Backspace", "reset (on_reset hooks run; controllers hold their pose)"),
    ("Ctrl+Q or close", "end the run (shutdown hooks run)"),
];

impl Panel {
    fn draw(&self, ui: &mut egui::Ui, _state: &Arc<Mutex<ViewerSharedState>>) {
        let (space, right) =
            ui.input(|i| (i.key_pressed(egui::Key::Space), i.key_pressed(egui::Key::ArrowRight)));
        if space {
            self.post_toggle();
        }
        if right {
            self.post_step();
        }
        let status = Arc::clone(&self.status);
        self.commands.post(move |ctx| {
            let mut s = status.lock().unwrap_or_else(|p| p.into_inner());
            s.state = Some(ctx.control.state);
            s.time = ctx.sim_time();
        });
        if !self.right_ui {
            return;
        }
        let PanelStatus { state: run, time } =
            *self.status.lock().unwrap_or_else(|p| p.into_inner());
        egui::Window::new("roqsim").anchor(egui::Align2::RIGHT_TOP, [-8.0, 8.0]).show(
            ui.ctx(),
            |ui| {
                ui.label(format!("{}, sim time {time:.3} s", state_name(run)));
                ui.horizontal(|ui| {
                    let label = if run == Some(RunState::Playing) { "Pause" } else { "Play" };
                    if ui.button(label).clicked() {
                        self.post_toggle();
                    }
                    if ui.button("Step").clicked() {
                        self.post_step();
                    }
                    if ui.button("Reset").clicked() {
                        self.commands.post(|ctx| ctx.control.reset = Some(ResetScope::ALL));
                    }
                });
                if self.manual_control {
                    ui.label("manual control: the Actuator sliders own ctrl");
                }
                ui.separator();
                for (k, what) in KEYS {
                    ui.label(format!("{k}: {what}"));
                }
            },
        );
    }

    fn post_toggle(&self) {
        self.commands.post(|ctx| {
            ctx.control.state = match ctx.control.state {
                RunState::Playing => RunState::Paused,
                RunState::Quitting => RunState::Quitting,
                _ => RunState::Playing,
            }
        });
    }

    fn post_step(&self) {
        self.commands.post(|ctx| {
            if ctx.control.state != RunState::Playing {
                ctx.control.pending_steps += 1;
            }
        });
    }
}

fn state_name(s: Option<RunState>) -> &'static str {
    match s {
        None => "starting",
        Some(RunState::Playing) => "playing",
        Some(RunState::Paused) => "paused",
        Some(RunState::Stopped) => "stopped",
        Some(RunState::Quitting) => "quitting",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mujoco_rs::prelude::MjvCamera;

    /// The viewer builds its start camera with `MjvCamera::new_free(model)` on the model it is
    /// given: on the window's model that is exactly `sim.view`'s camera, and the clip planes,
    /// shadow clip and fog stay where the world's model puts them, in metres.
    #[test]
    fn the_viewer_starts_on_the_view_camera_and_nothing_else_moves() {
        let m = MjModel::from_xml_string(
            "<mujoco><worldbody><geom type='box' size='1 2 0.5' pos='3 0 0'/></worldbody></mujoco>",
        )
        .unwrap();
        let pose =
            CameraPose { lookat: [0.4, 0.1, 0.8], distance: 2.2, azimuth: 150.0, elevation: -25.0 };
        let w = window_model(&m, pose);
        let cam = MjvCamera::new_free(&w);
        assert_eq!(cam.lookat, pose.lookat);
        assert!((cam.distance - 2.2).abs() < 1e-12, "{}", cam.distance);
        assert_eq!((cam.azimuth, cam.elevation), (150.0, -25.0));
        let metres = |m: &MjModel| {
            let (v, e) = (m.vis().map.clone(), m.stat().extent as f32);
            [v.znear * e, v.zfar * e, v.shadowclip * e, v.fogstart * e, v.fogend * e]
        };
        let (a, b) = (metres(&m), metres(&w));
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() <= 1e-5 * x.abs().max(1.0), "{a:?} vs {b:?}");
        }
        // the world's own model is not touched
        assert_ne!(m.stat().center, pose.lookat);
    }
}
