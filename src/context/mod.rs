//! `SimContext`: what every hook receives.
//!
//! It owns the MuJoCo state (only the physics thread holds it), the blackboard, the entity and
//! endpoint registries, the command queue other threads post into, the immutable snapshot they
//! read, the run's seed and episode (for [`SimContext::rng_for`]) and the stop request.

pub mod blackboard;
pub mod claims;
pub mod control;
pub mod entities;
pub mod interface;
pub mod payload;
pub mod rng;
pub mod tap;

use std::path::PathBuf;
use std::sync::Arc;

use arc_swap::ArcSwap;
use crossbeam_channel::{Receiver, Sender};
use mujoco_rs::prelude::{MjData, MjModel};

pub use blackboard::Blackboard;
pub use claims::{Claimant, Claims, FrameKeys, TfEdge, TfRoute};
pub use control::{ResetScope, RunControl, RunState};
pub use entities::{Entity, EntityKind, EntityRegistry, Pose};
pub use interface::{Direction, Endpoint, EndpointId, Interface};
pub use payload::Payload;
pub use rng::SimRng;

use crate::error::SimError;

/// MuJoCo state as the engine holds it: the data owns its model (nothing else shares it), so the
/// one model-write seam can borrow it mutably ([`SimContext::model_writer`]).
pub type Data = MjData<Box<MjModel>>;

/// A command posted from another thread, run on the physics thread at the next drain.
pub type Command = Box<dyn FnOnce(&mut SimContext) + Send>;

/// A cloneable, thread-safe handle for posting commands to the physics thread.
#[derive(Clone)]
pub struct CommandSender(Sender<Command>);

impl CommandSender {
    /// Queue `cmd`; it runs on the physics thread at the start of the next step (or reset), in
    /// FIFO order. Returns false when the engine is gone.
    pub fn post(&self, cmd: impl FnOnce(&mut SimContext) + Send + 'static) -> bool {
        self.0.send(Box::new(cmd)).is_ok()
    }
}

/// Immutable state published after each step for readers on other threads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// Sim time (s).
    pub time: f64,
    /// Steps since the last reset.
    pub tick: u64,
    /// Episode (advanced by reset).
    pub episode: u32,
    /// Generalized positions.
    pub qpos: Vec<f64>,
    /// Generalized velocities.
    pub qvel: Vec<f64>,
}

/// Run-level facts plugins may read.
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    /// Directory of the world file.
    pub base_dir: PathBuf,
    /// Physics timestep (s).
    pub timestep: f64,
    /// State a controller without its own `initial_state` starts in (`sim.controllers`).
    pub controller_initial_state: crate::handles::controllers::State,
    /// `--manual-control`: a person owns `data.ctrl` for the run (the window's actuator sliders).
    /// Every controller then returns from `pre_step` without writing ctrl; it still writes the
    /// holding pose in `on_reset`, so the sliders open at the home pose.
    pub manual_control: bool,
    /// `sim.sync.enabled`: the run steps in lockstep with its controller (GetSimulatorFeatures
    /// reports it).
    pub lockstep: bool,
    /// Why the run ended (set by the driver before shutdown): the reason every service call
    /// still waiting for an answer is refused with ([`Interface::refuse_pending_calls`]).
    pub end_reason: Option<String>,
}

/// The context every hook receives.
pub struct SimContext {
    data: Option<Data>,
    /// Physics timestep (s).
    pub dt: f64,
    /// Steps since the last reset (0 right after reset; the first step makes it 1).
    pub tick: u64,
    /// Episode counter: 0 for the first, advanced by every reset after it.
    pub episode: u32,
    /// Cross-plugin store.
    pub blackboard: Blackboard,
    /// Entities.
    pub entities: EntityRegistry,
    /// Endpoints.
    pub interface: Interface,
    /// Run-level facts.
    pub run: RunInfo,
    /// Saved model values for making entities absent and present again (`crate::engine::presence`).
    pub presence: crate::engine::presence::PresenceTable,
    /// Play / pause / step / reset requests the driver honours between steps.
    pub control: RunControl,
    /// Time offset (s) added to MuJoCo's time so a state-only reset keeps sim time monotonic.
    pub time_offset: f64,
    /// True while the driver is idling in pause (transport plugins' post_step runs then).
    pub paused: bool,
    /// The engine's one offscreen renderer (opened by the first render; see `crate::render`).
    pub renderer: crate::render::RenderService,
    /// What the plugins claimed while the world was set up: TF frames, stamped optical frames,
    /// camera topics (two claimants of one are refused; `claims`).
    pub claims: Claims,
    seed: Option<u64>,
    stop: Option<String>,
    fatal: Option<String>,
    tx: Sender<Command>,
    rx: Receiver<Command>,
    snapshot: Arc<ArcSwap<Snapshot>>,
    snapshot_enabled: bool,
}

impl SimContext {
    /// A context for a world stepping at `dt` with the given seed.
    pub fn new(dt: f64, seed: Option<u64>, run: RunInfo) -> Self {
        let (tx, rx) = crossbeam_channel::unbounded();
        SimContext {
            data: None,
            dt,
            tick: 0,
            episode: 0,
            blackboard: Blackboard::default(),
            entities: EntityRegistry::default(),
            interface: Interface::new(1.0 / dt),
            run,
            presence: Default::default(),
            control: RunControl::default(),
            time_offset: 0.0,
            paused: false,
            renderer: Default::default(),
            claims: Claims::default(),
            seed,
            stop: None,
            fatal: None,
            tx,
            rx,
            snapshot: Arc::new(ArcSwap::from_pointee(Snapshot::default())),
            snapshot_enabled: false,
        }
    }

    /// Install the compiled state (engine only).
    pub(crate) fn set_data(&mut self, data: Data) {
        self.data = Some(data);
    }

    /// True after compile (false during `build`).
    pub fn has_data(&self) -> bool {
        self.data.is_some()
    }

    /// The MuJoCo state. Panics during `build`, where no model exists yet.
    pub fn data(&self) -> &Data {
        self.data.as_ref().expect("MjData does not exist during build(): use configure() or later")
    }

    /// The MuJoCo state, mutably (physics thread only — which is the only thread holding it).
    pub fn data_mut(&mut self) -> &mut Data {
        self.data.as_mut().expect("MjData does not exist during build(): use configure() or later")
    }

    /// The compiled model.
    pub fn model(&self) -> &MjModel {
        self.data().model()
    }

    /// The one seam for writes into the compiled model ([`crate::mujoco::model_write`]): typed,
    /// bounds-checked value writes. Physics thread (the only one holding the model).
    pub fn model_writer(&mut self) -> crate::mujoco::model_write::ModelWriter<'_> {
        let data = self.data_mut();
        // SAFETY: `model_mut` is unsafe because a model whose sizes or address tables changed
        // would no longer fit this data's buffers. The writer only writes values of existing
        // elements of per-step fields (group, contact masks, friction, mass, gravcomp, force
        // range) through bounds-checked slices; it never changes a size, an address or an id.
        crate::mujoco::model_write::ModelWriter::new(unsafe { data.model_mut() })
    }

    /// Simulation time (s): MuJoCo's `data.time` plus the offset a state-only reset keeps, so it
    /// is monotonic across such resets. Stamps and /clock use it.
    pub fn sim_time(&self) -> f64 {
        self.data.as_ref().map(|d| d.time()).unwrap_or(0.0) + self.time_offset
    }

    /// Render a frame of the current state through the shared render service (physics thread
    /// only; the first call opens the GL context).
    pub fn render(
        &mut self,
        req: &crate::render::RenderRequest,
    ) -> Result<crate::render::Frame, crate::render::RenderError> {
        let data = self.data.as_mut().ok_or_else(|| {
            crate::render::RenderError::Request("nothing to render before compile".into())
        })?;
        self.renderer.render(data, req)
    }

    /// The run's seed, if resolved.
    pub fn seed(&self) -> Option<u64> {
        self.seed
    }

    /// Set the run's seed (a driver resolving it late).
    pub fn set_seed(&mut self, seed: u64) {
        self.seed = Some(seed);
    }

    /// A counter-based generator for `name` at the current (episode, sim time). Two calls in the
    /// same step with the same name return identical streams. Errors when no seed was resolved
    /// (`--seed`, `sim.seed`): an unseeded noisy run is missing a required input.
    pub fn rng_for(&self, name: &str) -> Result<SimRng, SimError> {
        let seed = self.seed.ok_or_else(|| {
            SimError::Seed(format!(
                "`{name}` draws noise but the run has no seed: pass --seed N or set sim.seed (a run without one is missing a required input)"
            ))
        })?;
        let ticks = (self.sim_time() / self.dt).round() as u64;
        Ok(SimRng::new(seed, self.episode, ticks, name))
    }

    /// Ask the driver to end the run (the first reason wins). Physics thread only.
    pub fn request_stop(&mut self, reason: impl Into<String>) {
        if self.stop.is_none() {
            self.stop = Some(reason.into());
        }
    }

    /// The stop reason, if a stop was requested.
    pub fn stop_requested(&self) -> Option<&str> {
        self.stop.as_deref()
    }

    /// End the run with an error (the first reason wins): the next `Engine::step` returns
    /// `SimError::Other(reason)`. For conditions that make the run meaningless — a peer of
    /// another message type on one of our topics, say. Callable from a posted command.
    pub fn fail(&mut self, reason: impl Into<String>) {
        if self.fatal.is_none() {
            self.fatal = Some(reason.into());
        }
    }

    /// The failure reason, if [`SimContext::fail`] was called.
    pub fn failure(&self) -> Option<&str> {
        self.fatal.as_deref()
    }

    /// Clear a stop request (a driver that keeps stepping).
    pub fn clear_stop(&mut self) {
        self.stop = None;
    }

    /// Queue a command (from the physics thread itself).
    pub fn post(&self, cmd: impl FnOnce(&mut SimContext) + Send + 'static) {
        let _ = self.tx.send(Box::new(cmd));
    }

    /// A handle other threads post commands with.
    pub fn command_sender(&self) -> CommandSender {
        CommandSender(self.tx.clone())
    }

    /// Run every queued command, in FIFO order. Returns how many ran.
    pub fn drain_commands(&mut self) -> usize {
        let mut n = 0;
        while let Ok(cmd) = self.rx.try_recv() {
            cmd(self);
            n += 1;
        }
        n
    }

    /// Wait up to `timeout` for a command, then run it and every other queued one (the lockstep
    /// barrier waits on the queue this way). Returns how many ran.
    pub fn drain_commands_for(&mut self, timeout: std::time::Duration) -> usize {
        match self.rx.recv_timeout(timeout) {
            Ok(cmd) => {
                cmd(self);
                1 + self.drain_commands()
            }
            Err(_) => 0,
        }
    }

    /// Turn on snapshot publication after each step (a cross-thread reader asks for it).
    pub fn enable_snapshot(&mut self) -> Arc<ArcSwap<Snapshot>> {
        self.snapshot_enabled = true;
        self.snapshot.clone()
    }

    /// The latest snapshot.
    pub fn read_snapshot(&self) -> Arc<Snapshot> {
        self.snapshot.load_full()
    }

    /// Publish the current state as the snapshot (if enabled).
    pub(crate) fn publish_snapshot(&mut self) {
        if !self.snapshot_enabled {
            return;
        }
        let d = self.data();
        let snap = Snapshot {
            time: d.time(),
            tick: self.tick,
            episode: self.episode,
            qpos: d.qpos().to_vec(),
            qvel: d.qvel().to_vec(),
        };
        self.snapshot.store(Arc::new(snap));
    }
}
