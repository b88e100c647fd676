//! The engine: setup, reset, step and shutdown in exactly the order ARCHITECTURE.md's tick
//! pipeline gives.
//!
//! ```text
//! setup:    build(p0..pN) → world definition → sim options → arm gravcomp → compile → MjData
//!           → configure(p0..pN) → presence capture → reset
//! reset:    drain → mj_resetData → declared presence → mj_forward → on_reset(p0..pN)
//!           → mj_forward → snapshot
//! step:     drain → pre_step(p0..pN) → mj_step → finite-state check → post_step(p0..pN)
//!           → snapshot
//! idle:     drain → post_step of transport plugins only (paused)
//! shutdown: shutdown(pN..p0)   (best effort: a failure is logged, the others still run)
//! ```
//! Only hooks a plugin declares are called, and (with profiling on) timed.

pub mod input_trace;
pub mod lockstep;
pub mod pacing;
pub mod presence;
pub mod rates;
pub mod sim_control;

use std::time::Instant;

use mujoco_rs::mujoco_c::{mjtCone, mjtEnableBit, mjtIntegrator, mjtSolver, mjtWarning};
use mujoco_rs::prelude::*;

use crate::context::{RunInfo, SimContext};
use crate::error::SimError;
use crate::plugin::{BuildContext, Hooks, Plugin};
use crate::spawn::mjcf;
use crate::world::sim::{Cone, Integrator, SimBlock, Solver};
use crate::world::{LoadedWorld, WorldDef};

/// Hook indices into timing tables, in lifecycle order.
const BUILD: usize = 0;
const CONFIGURE: usize = 1;
const ON_RESET: usize = 2;
const PRE_STEP: usize = 3;
const POST_STEP: usize = 4;
const SHUTDOWN: usize = 5;

/// Something that watches the run on the physics thread (the recorder): it sees every finished
/// step and every reset before it happens, and is finished at shutdown. One may be attached.
pub trait Observer {
    /// After a step's post_step hooks (the state and this step's publications are final).
    fn after_step(&mut self, ctx: &mut SimContext) -> Result<(), String>;
    /// Before a reset is applied (`None` = [`Engine::reset`], else [`Engine::reset_scoped`]).
    fn before_reset(
        &mut self,
        ctx: &mut SimContext,
        scope: Option<crate::context::ResetScope>,
    ) -> Result<(), String>;
    /// At shutdown, after the plugins' shutdown hooks.
    fn finish(&mut self, ctx: &mut SimContext) -> Result<(), String>;
    /// After a reset that reset the state (its `on_reset` hooks ran), with the time it left.
    fn after_reset(&mut self, _ctx: &mut SimContext) -> Result<(), String> {
        Ok(())
    }
    /// After an idle while paused ([`Engine::idle`]).
    fn idle(&mut self, _ctx: &mut SimContext) -> Result<(), String> {
        Ok(())
    }
}

/// Engine options from the driver.
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// Time every implemented hook and the load phases.
    pub profile: bool,
    /// The run's seed (`--seed`), winning over `sim.seed`.
    pub seed: Option<u64>,
}

struct Slot {
    transport: bool,
    address: String,
    plugin_ref: String,
    hooks: Hooks,
    plugin: Box<dyn Plugin>,
    /// (total ns, calls) per hook.
    timing: [(u128, u64); 6],
}

/// One row of the timing report.
#[derive(Debug, Clone, PartialEq)]
pub struct TimingRow {
    /// Plugin address.
    pub plugin: String,
    /// Hook name.
    pub hook: &'static str,
    /// Average wall time per call (µs).
    pub avg_us: f64,
    /// Calls.
    pub calls: u64,
}

/// The simulation engine: owns the plugins and the context (and through it MjModel/MjData).
pub struct Engine {
    /// The context hooks receive.
    pub ctx: SimContext,
    slots: Vec<Slot>,
    pre_idx: Vec<usize>,
    post_idx: Vec<usize>,
    reset_idx: Vec<usize>,
    profile: bool,
    load_report: Vec<(String, f64)>,
    resets: u64,
    shut_down: bool,
    observer: Option<Box<dyn Observer>>,
    input_trace: Option<input_trace::InputTrace>,
    /// The `sim:` block the engine was built from.
    pub sim: SimBlock,
}

fn hook_err(address: &str, hook: &'static str, message: String) -> SimError {
    SimError::Plugin { plugin: address.to_string(), hook, message }
}

/// `address` is nested under an entry in `failed` (its problem would only be repeated).
fn under_failed(failed: &[(String, SimError)], address: &str) -> bool {
    failed.iter().any(|(a, _)| address.strip_prefix(a.as_str()).is_some_and(|r| r.starts_with('.')))
}

/// The refusals of one setup stage: none is Ok, one is itself, several are listed a line each.
fn all_refusals(mut failed: Vec<(String, SimError)>) -> Result<(), SimError> {
    match failed.len() {
        0 => Ok(()),
        1 => Err(failed.remove(0).1),
        _ => Err(SimError::Other(
            failed.iter().map(|(_, e)| e.to_string()).collect::<Vec<_>>().join("\n"),
        )),
    }
}

/// The context a world's run starts from: its timestep, seed and run settings.
fn context_for(
    sim: &SimBlock,
    timestep: f64,
    seed: Option<u64>,
    base_dir: std::path::PathBuf,
) -> SimContext {
    SimContext::new(
        timestep,
        seed,
        RunInfo {
            base_dir,
            timestep,
            controller_initial_state: sim
                .controllers
                .as_ref()
                .and_then(|c| c.initial_state)
                .map(|s| s.state())
                .unwrap_or(crate::handles::controllers::State::Unloaded),
            manual_control: false,
            end_reason: None,
            lockstep: sim.sync.as_ref().is_some_and(|s| s.enabled == Some(true)),
        },
    )
}

/// The spec the entries build into: the empty room, the world's MJCF, or an empty spec for a
/// world a plugin builds.
fn base_spec(def: &WorldDef) -> Result<MjSpec, SimError> {
    match def {
        WorldDef::EmptyRoom => MjSpec::from_xml_string(&mjcf::empty_room_xml())
            .map_err(|e| SimError::Mujoco(e.to_string())),
        WorldDef::Mjcf(p) => MjSpec::from_xml(p)
            .map_err(|e| SimError::Mujoco(format!("world `{}`: {e}", p.display()))),
        WorldDef::Plugin(_) => MjSpec::from_xml_string(mjcf::empty_spec_xml())
            .map_err(|e| SimError::Mujoco(e.to_string())),
    }
}

/// Every entry's build hook, every refusal reported at once (as configure's).
fn build_all(
    slots: &mut [Slot],
    ctx: &mut SimContext,
    spec: &mut MjSpec,
    timestep: f64,
) -> Result<(), SimError> {
    let mut failed: Vec<(String, SimError)> = Vec::new();
    for s in slots.iter_mut().filter(|s| s.hooks.contains(Hooks::BUILD)) {
        if under_failed(&failed, &s.address) {
            continue;
        }
        let t = Instant::now();
        let mut b = BuildContext { ctx, timestep };
        if let Err(m) = s.plugin.build(spec, &mut b) {
            failed.push((s.address.clone(), hook_err(&s.address, "build", m)));
            continue;
        }
        s.timing[BUILD].0 += t.elapsed().as_nanos();
        s.timing[BUILD].1 += 1;
    }
    all_refusals(failed)
}

/// Compile the built spec. MuJoCo names the element and its line, not the entry or file it came
/// from: a refusal lists the entries that brought model files, so the line can be found.
fn compile(mut spec: MjSpec, ctx: &SimContext) -> Result<MjModel, SimError> {
    spec.compile().map_err(|e| {
        let from: Vec<String> = ctx
            .entities
            .all()
            .iter()
            .filter(|x| !x.model.is_empty())
            .map(|x| format!("components.{} ({}, prefix `{}`)", x.name, x.model, x.prefix))
            .collect();
        let hint = if from.is_empty() {
            String::new()
        } else {
            format!(
                "\n(the element comes from one of the model files these entries attached, the line is in that file; \
                 a named element carries its entry's prefix: {})",
                from.join(", ")
            )
        };
        SimError::Mujoco(format!("compile: {}{hint}", e.to_string().trim_end()))
    })
}

/// Every entry is configured and every refusal reported at once, except under an entry already
/// refused (its nested entries would only repeat its problem).
fn configure_all(slots: &mut [Slot], ctx: &mut SimContext) -> Result<(), SimError> {
    let mut failed: Vec<(String, SimError)> = Vec::new();
    for s in slots.iter_mut().filter(|s| s.hooks.contains(Hooks::CONFIGURE)) {
        if under_failed(&failed, &s.address) {
            continue;
        }
        let t = Instant::now();
        ctx.interface.configuring = Some(s.address.clone());
        let r = s.plugin.configure(ctx);
        ctx.interface.configuring = None;
        if let Err(m) = r {
            failed.push((s.address.clone(), hook_err(&s.address, "configure", m)));
            continue;
        }
        s.timing[CONFIGURE].0 += t.elapsed().as_nanos();
        s.timing[CONFIGURE].1 += 1;
    }
    all_refusals(failed)
}

/// The rate snapping's notes: logged, or the run refused when one is a refusal.
fn report_rate_notes(ctx: &mut SimContext) -> Result<(), SimError> {
    let mut refused = Vec::new();
    for note in ctx.interface.notes.drain(..) {
        match note {
            rates::SnapNote::Quiet => {}
            rates::SnapNote::Note(m) => tracing::info!("{m}"),
            rates::SnapNote::Warn(m) => tracing::warn!("{m}"),
            rates::SnapNote::Refuse(m) => refused.push(m),
        }
    }
    if refused.is_empty() {
        Ok(())
    } else {
        Err(SimError::Other(refused.join("; ")))
    }
}

impl Engine {
    /// Set up a loaded world: build, compile, create data, configure, reset.
    pub fn new(world: LoadedWorld, opts: EngineOptions) -> Result<Engine, SimError> {
        install_mujoco_log_handler();
        let LoadedWorld {
            sim,
            world: def,
            timestep,
            components,
            plugins,
            base_dir,
            load_times,
            ..
        } = world;
        let mut load_report: Vec<(String, f64)> = load_times;
        let mut ctx = context_for(&sim, timestep, opts.seed.or(sim.seed), base_dir);

        let t0 = Instant::now();
        let mut spec = base_spec(&def)?;
        load_report.push(("world".into(), t0.elapsed().as_secs_f64()));

        let mut slots: Vec<Slot> = components
            .iter()
            .zip(plugins)
            .map(|(c, p)| Slot {
                transport: c.descriptor.flags.transport_only,
                address: c.args.address.clone(),
                plugin_ref: c.plugin.clone(),
                hooks: p.hooks(),
                plugin: p,
                timing: [(0, 0); 6],
            })
            .collect();

        let t0 = Instant::now();
        build_all(&mut slots, &mut ctx, &mut spec, timestep)?;
        load_report.push(("build".into(), t0.elapsed().as_secs_f64()));

        apply_sim_options(&mut spec, &sim, timestep);
        if !ctx.entities.all().is_empty() {
            crate::engine::presence::arm_gravcomp(&mut spec);
        }

        let t0 = Instant::now();
        let model = compile(spec, &ctx)?;
        load_report.push(("compile".into(), t0.elapsed().as_secs_f64()));

        let t0 = Instant::now();
        let data = MjData::new(Box::new(model));
        ctx.set_data(data);
        load_report.push(("data".into(), t0.elapsed().as_secs_f64()));

        let t0 = Instant::now();
        configure_all(&mut slots, &mut ctx)?;
        crate::engine::presence::capture(&mut ctx).map_err(SimError::Other)?;
        load_report.push(("configure".into(), t0.elapsed().as_secs_f64()));
        report_rate_notes(&mut ctx)?;

        let idx = |h: Hooks| {
            slots
                .iter()
                .enumerate()
                .filter(|(_, s)| s.hooks.contains(h))
                .map(|(i, _)| i)
                .collect::<Vec<_>>()
        };
        let (pre_idx, post_idx, reset_idx) =
            (idx(Hooks::PRE_STEP), idx(Hooks::POST_STEP), idx(Hooks::ON_RESET));
        let mut engine = Engine {
            ctx,
            slots,
            pre_idx,
            post_idx,
            reset_idx,
            profile: opts.profile,
            load_report,
            resets: 0,
            shut_down: false,
            observer: None,
            input_trace: None,
            sim,
        };
        engine.reset()?;
        Ok(engine)
    }

    /// Physics timestep (s).
    pub fn dt(&self) -> f64 {
        self.ctx.dt
    }

    /// Simulation time (s).
    pub fn sim_time(&self) -> f64 {
        self.ctx.sim_time()
    }

    /// Plugin addresses, in execution order.
    pub fn plugin_addresses(&self) -> Vec<String> {
        self.slots.iter().map(|s| s.address.clone()).collect()
    }

    /// (address, plugin name) of every plugin, in execution order.
    pub fn plugins(&self) -> Vec<(String, String)> {
        self.slots.iter().map(|s| (s.address.clone(), s.plugin_ref.clone())).collect()
    }

    /// Whether the plugin at `address` has a post_step hook.
    pub fn has_post_step(&self, address: &str) -> bool {
        self.slots.iter().any(|s| s.address == address && s.hooks.contains(Hooks::POST_STEP))
    }

    /// Run the post_step hook of the plugin at `address` alone, on the state as it is now
    /// (`roqsim state --sensor`: a sensor re-run on a restored state sample). No physics step,
    /// no other plugin, no observer. Returns false when no such plugin has a post_step.
    pub fn post_step_of(&mut self, address: &str) -> Result<bool, SimError> {
        let Some(s) = self
            .slots
            .iter_mut()
            .find(|s| s.address == address && s.hooks.contains(Hooks::POST_STEP))
        else {
            return Ok(false);
        };
        s.plugin.post_step(&mut self.ctx).map_err(|m| hook_err(&s.address, "post_step", m))?;
        Ok(true)
    }

    /// Attach the run's observer (the recorder); it sees every later step and reset.
    pub fn set_observer(&mut self, observer: Box<dyn Observer>) {
        self.observer = Some(observer);
    }

    fn observe_reset(&mut self, scope: Option<crate::context::ResetScope>) -> Result<(), SimError> {
        match &mut self.observer {
            Some(o) => o.before_reset(&mut self.ctx, scope).map_err(SimError::Other),
            None => Ok(()),
        }
    }

    /// Reset: drain → mj_resetData → mj_forward → on_reset(all) → mj_forward. Every reset after
    /// the first (done by [`Engine::new`]) starts a new episode.
    pub fn reset(&mut self) -> Result<(), SimError> {
        // Commands first, so an observer logs what they did before the reset it sees.
        self.ctx.drain_commands();
        self.observe_reset(None)?;
        self.reset_now()
    }

    fn reset_now(&mut self) -> Result<(), SimError> {
        self.ctx.drain_commands();
        // Payloads delivered by that drain are cleared below with every inbox: they never act,
        // so an observer does not keep them.
        self.ctx.interface.discard_tapped();
        if self.resets > 0 {
            self.ctx.episode += 1;
        }
        self.resets += 1;
        self.ctx.tick = 0;
        self.ctx.interface.clear();
        self.ctx.data_mut().reset();
        crate::engine::presence::apply_declared(&mut self.ctx).map_err(SimError::Other)?;
        self.ctx.data_mut().forward();
        for &i in &self.reset_idx {
            let s = &mut self.slots[i];
            let t = self.profile.then(Instant::now);
            s.plugin.on_reset(&mut self.ctx).map_err(|m| hook_err(&s.address, "on_reset", m))?;
            if let Some(t) = t {
                s.timing[ON_RESET].0 += t.elapsed().as_nanos();
                s.timing[ON_RESET].1 += 1;
            }
        }
        self.ctx.data_mut().forward();
        self.ctx.publish_snapshot();
        if let Some(o) = &mut self.observer {
            o.after_reset(&mut self.ctx).map_err(SimError::Other)?;
        }
        Ok(())
    }

    /// Reset honouring a scope (simulation_interfaces ResetSimulation bits):
    /// - `state`: mj_resetData + on_reset (+ declared presence). Without `time` the sim time keeps
    ///   running on (monotonic /clock, same episode) so ROS stacks survive it;
    /// - `time` with `state`: [`Engine::reset`] — t = 0 and a new episode;
    /// - `time` alone: sim time restarts at 0 (new episode) with the physics state untouched;
    /// - `spawned` alone: every entity's declared presence is re-applied.
    pub fn reset_scoped(&mut self, scope: crate::context::ResetScope) -> Result<(), SimError> {
        self.ctx.drain_commands();
        self.observe_reset(Some(scope))?;
        if scope.state {
            if scope.time {
                self.ctx.time_offset = 0.0;
                return self.reset_now();
            }
            let now = self.ctx.sim_time();
            let (episode, tick) = (self.ctx.episode, self.ctx.tick);
            // Offset first: mj_resetData zeroes MuJoCo's time, so sim time stays `now` through the
            // on_reset hooks too (what they stamp, the /clock a bridge publishes there).
            self.ctx.time_offset = now;
            self.reset_now()?;
            self.ctx.episode = episode;
            self.ctx.tick = tick;
            return Ok(());
        }
        if scope.time {
            self.ctx.time_offset = -self.ctx.data().time();
            self.ctx.episode += 1;
            self.ctx.tick = 0;
        }
        if scope.spawned {
            crate::engine::presence::apply_declared(&mut self.ctx).map_err(SimError::Other)?;
            self.ctx.data_mut().forward();
        }
        Ok(())
    }

    /// While paused: drain commands and let transport plugins publish (their post_step runs with
    /// `ctx.paused == true`); no physics step, sim time stands still.
    pub fn idle(&mut self) -> Result<(), SimError> {
        self.ctx.drain_commands();
        if let Some(f) = self.ctx.failure() {
            return Err(SimError::Other(f.to_string()));
        }
        self.ctx.paused = true;
        for &i in &self.post_idx {
            let s = &mut self.slots[i];
            if s.transport {
                s.plugin
                    .post_step(&mut self.ctx)
                    .map_err(|m| hook_err(&s.address, "post_step", m))?;
            }
        }
        self.ctx.paused = false;
        if let Some(o) = &mut self.observer {
            o.idle(&mut self.ctx).map_err(SimError::Other)?;
        }
        Ok(())
    }

    /// One physics step: drain → pre_step(all) → mj_step → post_step(all) → snapshot.
    pub fn step(&mut self) -> Result<(), SimError> {
        self.ctx.drain_commands();
        if let Some(f) = self.ctx.failure() {
            return Err(SimError::Other(f.to_string()));
        }
        for &i in &self.pre_idx {
            let s = &mut self.slots[i];
            if self.profile {
                let t = Instant::now();
                s.plugin
                    .pre_step(&mut self.ctx)
                    .map_err(|m| hook_err(&s.address, "pre_step", m))?;
                s.timing[PRE_STEP].0 += t.elapsed().as_nanos();
                s.timing[PRE_STEP].1 += 1;
            } else {
                s.plugin
                    .pre_step(&mut self.ctx)
                    .map_err(|m| hook_err(&s.address, "pre_step", m))?;
            }
        }
        let t_expected = self.ctx.data().time() + self.ctx.dt;
        let d = self.ctx.data_mut();
        let bad_before = bad_warnings(d);
        if let Some(t) = &mut self.input_trace {
            t.before_step(d.model().ffi(), d.ffi());
        }
        d.step();
        if let Some(t) = &mut self.input_trace {
            t.after_step(d.model().ffi(), d.ffi());
        }
        self.ctx.tick += 1;
        self.check_finite(bad_before, t_expected)?;
        for &i in &self.post_idx {
            let s = &mut self.slots[i];
            if self.profile {
                let t = Instant::now();
                s.plugin
                    .post_step(&mut self.ctx)
                    .map_err(|m| hook_err(&s.address, "post_step", m))?;
                s.timing[POST_STEP].0 += t.elapsed().as_nanos();
                s.timing[POST_STEP].1 += 1;
            } else {
                s.plugin
                    .post_step(&mut self.ctx)
                    .map_err(|m| hook_err(&s.address, "post_step", m))?;
            }
        }
        if let Some(o) = &mut self.observer {
            o.after_step(&mut self.ctx).map_err(SimError::Other)?;
        }
        self.ctx.publish_snapshot();
        Ok(())
    }

    /// Start recording what the plugins write into mjData before every `mj_step`, from the
    /// current state ([`input_trace`]; the benchmark's same-physics replay).
    pub fn record_inputs(&mut self) {
        let d = self.ctx.data();
        self.input_trace = Some(input_trace::InputTrace::start(d.model().ffi(), d.ffi()));
    }

    /// Stop recording and hand over the trace (with the final state), if one was recording.
    pub fn take_input_trace(&mut self) -> Option<input_trace::InputTrace> {
        let mut t = self.input_trace.take()?;
        let d = self.ctx.data();
        t.finish(d.model().ffi(), d.ffi());
        Some(t)
    }

    /// The world's endpoint topics as a transport would publish them: two publishers of one
    /// topic, or two message types on one, refused naming both entries
    /// ([`crate::context::claims::endpoint_topics`]). `roqsim check` and `roqsim sim` ask it
    /// after setup; an in-process engine (a test comparing two sensors side by side) need not.
    pub fn topic_clashes(&self) -> Result<(), SimError> {
        crate::context::claims::endpoint_topics(&self.ctx.interface)
            .map_err(|e| SimError::Other(e.join("\n")))
    }

    /// Step `n` times.
    pub fn step_n(&mut self, n: u64) -> Result<(), SimError> {
        for _ in 0..n {
            self.step()?;
        }
        Ok(())
    }

    fn check_finite(&self, bad_before: i32, t_expected: f64) -> Result<(), SimError> {
        let d = self.ctx.data();
        // MuJoCo resets the state (time included) when it detects a bad value: report the time
        // the step was meant to reach.
        let time = t_expected + self.ctx.time_offset;
        for (name, arr) in [("qpos", d.qpos()), ("qvel", d.qvel()), ("qacc", d.qacc())] {
            if let Some(i) = arr.iter().position(|x| !x.is_finite()) {
                return Err(SimError::NonFinite {
                    time,
                    field: format!(
                        "{name}[{i}] = {} ({})",
                        arr[i],
                        dof_name(d.model(), self.ctx.entities.all(), name, i)
                    ),
                });
            }
        }
        let bad_now = bad_warnings(d);
        if bad_now > bad_before {
            return Err(SimError::NonFinite {
                time,
                field: "MuJoCo reported a bad qpos/qvel/qacc and reset the state (mjWARN_BADQPOS/BADQVEL/BADQACC)".into(),
            });
        }
        Ok(())
    }

    /// Shutdown in reverse order; failures are logged and returned, the others still run.
    pub fn shutdown(&mut self) -> Vec<SimError> {
        if self.shut_down {
            return Vec::new();
        }
        self.shut_down = true;
        self.ctx.drain_commands();
        // A call delivered but never drained (the run ended between delivery and the consumer's
        // hook, e.g. on a failed step) is answered now, with why, before the transport stops.
        let why = self.ctx.run.end_reason.get_or_insert_with(|| "the run ended".into()).clone();
        let refused = self.ctx.interface.refuse_pending_calls(&why);
        if refused > 0 {
            tracing::info!(
                "{refused} service call(s) pending at the end of the run refused: {why}"
            );
        }
        let mut errs = Vec::new();
        for s in self.slots.iter_mut().rev().filter(|s| s.hooks.contains(Hooks::SHUTDOWN)) {
            let t = Instant::now();
            if let Err(m) = s.plugin.shutdown(&mut self.ctx) {
                tracing::error!("[{}] shutdown failed: {m}", s.address);
                errs.push(hook_err(&s.address, "shutdown", m));
            }
            s.timing[SHUTDOWN].0 += t.elapsed().as_nanos();
            s.timing[SHUTDOWN].1 += 1;
        }
        if let Some(mut o) = self.observer.take() {
            if let Err(m) = o.finish(&mut self.ctx) {
                tracing::error!("{m}");
                errs.push(SimError::Other(m));
            }
        }
        errs
    }

    /// Per-plugin, per-hook average µs of every implemented hook that ran.
    pub fn timing_report(&self) -> Vec<TimingRow> {
        let mut rows = Vec::new();
        for s in &self.slots {
            for (h, name) in Hooks::NAMES.iter().enumerate() {
                let (ns, n) = s.timing[h];
                if n > 0 && s.hooks.contains(Hooks(1 << h)) {
                    rows.push(TimingRow {
                        plugin: format!("{} ({})", s.address, s.plugin_ref),
                        hook: name,
                        avg_us: ns as f64 / n as f64 / 1000.0,
                        calls: n,
                    });
                }
            }
        }
        rows
    }

    /// Load phases (name, seconds).
    pub fn load_report(&self) -> &[(String, f64)] {
        &self.load_report
    }

    /// The timing table as text.
    pub fn format_timing(&self) -> String {
        let mut s = String::from("plugin timing (average µs per call):\n");
        s += &format!("  {:<40} {:<10} {:>10} {:>10}\n", "plugin", "hook", "avg µs", "calls");
        for r in self.timing_report() {
            s += &format!("  {:<40} {:<10} {:>10.2} {:>10}\n", r.plugin, r.hook, r.avg_us, r.calls);
        }
        s += "load phases:\n";
        for (name, secs) in &self.load_report {
            s += &format!("  {:<12} {:>9.2} ms\n", name, secs * 1e3);
        }
        s
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Route MuJoCo's own log messages into `tracing` (instead of stderr and a MUJOCO_LOG.TXT file
/// in the working directory). The empty-prefix attach notice is expected here (a single robot
/// keeps its model's names) and goes to debug.
fn install_mujoco_log_handler() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    fn handler(m: &MjLogMessage) {
        let text = m.subject();
        match m.level() {
            MjtLogLevel::mjLOG_ERROR => tracing::error!("MuJoCo: {text}"),
            MjtLogLevel::mjLOG_WARNING if text.contains("empty prefix") => {
                tracing::debug!("MuJoCo: {text}")
            }
            MjtLogLevel::mjLOG_WARNING => tracing::warn!("MuJoCo: {text}"),
            _ => tracing::debug!("MuJoCo: {text}"),
        }
    }
    // SAFETY: set once, before this process's engines touch MuJoCo further.
    ONCE.call_once(|| unsafe { mujoco_rs::logging::set_log_handler(handler) });
}

fn bad_warnings(d: &crate::context::Data) -> i32 {
    let w = d.warning();
    [mjtWarning::mjWARN_BADQPOS, mjtWarning::mjWARN_BADQVEL, mjtWarning::mjWARN_BADQACC]
        .iter()
        .map(|&i| w[i as usize].number)
        .sum()
}

fn dof_name(m: &MjModel, entities: &[crate::context::Entity], field: &str, i: usize) -> String {
    // Map a qpos/qvel index to the joint that owns it, and the joint to the entity (the world
    // entry) whose root body it sits under: that entry's keys are what to look at.
    let adr = if field == "qpos" { m.jnt_qposadr() } else { m.jnt_dofadr() };
    let Some(j) = adr.iter().rposition(|&a| (a as usize) <= i) else { return "?".into() };
    let joint = m.id_to_name(MjtObjBase::mjOBJ_JOINT, j).unwrap_or("(unnamed)");
    let mut b = m.jnt_bodyid()[j] as usize;
    let entity = loop {
        let name = m.id_to_name(MjtObjBase::mjOBJ_BODY, b).unwrap_or("");
        if let Some(e) = entities.iter().find(|e| e.body == name) {
            break Some(e.name.as_str());
        }
        if b == 0 {
            break None;
        }
        b = m.body_parentid()[b] as usize;
    };
    match entity {
        Some(e) => format!(
            "joint `{joint}` of entity `{e}`, the first value to go non-finite: check the pose, sizes, masses and friction of components.{e} and of what it touches, in their keys or model files"
        ),
        None => format!("joint `{joint}`"),
    }
}

/// Write the `sim:` passthroughs into the spec's `<option>` (before compile).
fn apply_sim_options(spec: &mut MjSpec, sim: &SimBlock, timestep: f64) {
    // SAFETY: plain-old-data fields of the spec's option struct; the spec is live and unshared.
    let opt = unsafe { &mut spec.ffi_mut().option };
    opt.timestep = timestep;
    opt.integrator = match sim.integrator.unwrap_or(Integrator::Implicitfast) {
        Integrator::Euler => mjtIntegrator::mjINT_EULER,
        Integrator::Rk4 => mjtIntegrator::mjINT_RK4,
        Integrator::Implicit => mjtIntegrator::mjINT_IMPLICIT,
        Integrator::Implicitfast => mjtIntegrator::mjINT_IMPLICITFAST,
    } as i32;
    if let Some(s) = sim.solver {
        opt.solver = match s {
            Solver::Pgs => mjtSolver::mjSOL_PGS,
            Solver::Cg => mjtSolver::mjSOL_CG,
            Solver::Newton => mjtSolver::mjSOL_NEWTON,
        } as i32;
    }
    if let Some(v) = sim.iterations {
        opt.iterations = v as i32;
    }
    if let Some(v) = sim.ls_iterations {
        opt.ls_iterations = v as i32;
    }
    if let Some(v) = sim.noslip_iterations {
        opt.noslip_iterations = v as i32;
    }
    if let Some(v) = sim.impratio {
        opt.impratio = v;
    }
    if let Some(c) = sim.cone {
        opt.cone = match c {
            Cone::Pyramidal => mjtCone::mjCONE_PYRAMIDAL,
            Cone::Elliptic => mjtCone::mjCONE_ELLIPTIC,
        } as i32;
    }
    if let Some(g) = sim.gravity {
        opt.gravity = g;
    }
    if let Some(v) = sim.density {
        opt.density = v;
    }
    if let Some(v) = sim.viscosity {
        opt.viscosity = v;
    }
    if let Some(w) = sim.wind {
        opt.wind = w;
    }
    if let Some((r, i, f)) = sim.padded_override((opt.o_solref, opt.o_solimp, opt.o_friction)) {
        opt.o_solref = r;
        opt.o_solimp = i;
        opt.o_friction = f;
        opt.enableflags |= mjtEnableBit::mjENBL_OVERRIDE as i32;
    }
}
