//! The `--left-ui` / `--manual-control` window: MuJoCo's interactive viewer as mujoco-rs ships it
//! (winit + glutin + egui), for its left panel (the Actuator sliders, Joint, Equality and Group
//! windows) and its body dragging. The default window is roqsim's own
//! ([`super::scene_window`]); this one is chosen only when its panel is asked for.
//!
//! The viewer draws its own copy of the state, which the physics thread refreshes between steps
//! ([`MjLink::frame`], at most 60 times a wall second). What a person does in it reaches the
//! simulation only there, on the physics thread:
//! - edits the viewer makes to its copy (actuator sliders, joint edits, a dragged body's
//!   perturbation force) are merged into MjData by that same sync, between two steps;
//! - pause (Space), one step (Right arrow) and reset (Backspace, or the panel's buttons) are
//!   posted as commands on the run control SetSimulationState uses. The viewer resets its own
//!   copy on Backspace; the sync after it absorbs that and the engine then performs a real reset
//!   (on_reset hooks: controllers hold the pose).
//!
//! mujoco-rs 7.0.0 keeps this viewer's camera private: `sim.view` only sets its start camera
//! (through the model copy it is given, [`window_model`]) and a tracked entity is not followed.

use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

use mujoco_rs::prelude::MjModel;
use mujoco_rs::viewer::{egui, MjViewer, ViewerSharedState};

use super::camera::CameraPose;
use super::window::{post_step, post_toggle, state_name, WindowOptions, FRAME, KEYS};
use crate::context::{CommandSender, ResetScope, RunState};
use crate::engine::Engine;

/// What the physics thread sends the main thread to open the viewer.
pub(super) struct Opening {
    pub model: MjModel,
    pub commands: CommandSender,
    pub reply: mpsc::Sender<Result<Arc<Mutex<ViewerSharedState>>, String>>,
}

/// The physics thread's end of the viewer.
pub(super) struct MjLink {
    pub state: Arc<Mutex<ViewerSharedState>>,
    pub last_sync: Option<Instant>,
    pub last_time: f64,
}

impl MjLink {
    /// Between steps, on the physics thread: merge the viewer's edits into MjData and refresh its
    /// copy (at most every 16 ms of wall time, and always right after a reset).
    pub fn frame(&mut self, engine: &mut Engine) {
        let due = self.last_sync.is_none_or(|t| t.elapsed() >= FRAME);
        let t_before = engine.ctx.data().time();
        let reset_since = t_before < self.last_time;
        if !due && !reset_since {
            return;
        }
        self.last_sync = Some(Instant::now());
        let mut lock = self.state.lock().unwrap_or_else(|p| p.into_inner());
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
pub(super) fn window_model(model: &MjModel, c: CameraPose) -> MjModel {
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

/// On the main thread: run the viewer until it closes or `done` says the run ended.
pub(super) fn run(opts: &WindowOptions, opening: Opening, done: &std::sync::atomic::AtomicBool) {
    use std::sync::atomic::Ordering;
    // mujoco-rs panics on a GL display without a usable configuration: an error here, so the
    // physics thread still shuts down cleanly.
    let opened =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| open_viewer(opts, &opening)))
            .unwrap_or_else(|_| {
                Err("cannot open the window: the GL display has no usable configuration".into())
            });
    let mut viewer = match opened {
        Err(e) => {
            let _ = opening.reply.send(Err(e));
            return;
        }
        Ok(v) => v,
    };
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

impl Panel {
    fn draw(&self, ui: &mut egui::Ui, _state: &Arc<Mutex<ViewerSharedState>>) {
        let (space, right) =
            ui.input(|i| (i.key_pressed(egui::Key::Space), i.key_pressed(egui::Key::ArrowRight)));
        if space {
            post_toggle(&self.commands);
        }
        if right {
            post_step(&self.commands);
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
                        post_toggle(&self.commands);
                    }
                    if ui.button("Step").clicked() {
                        post_step(&self.commands);
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
