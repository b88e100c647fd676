//! `ros2_bridge`: every endpoint of the world on the ROS 2 graph, /clock, /tf, /tf_static,
//! merged joint_states and the type-mismatch watchdog, from an r2r node inside the engine's process.
//!
//! * `configure` (physics thread): builds the [`plan`](crate::ros::plan), creates the node and
//!   every publisher, subscription and server, binds the bridge's own gated streams (/clock,
//!   merged joint_states, `rates:` overrides) to the physics grid, then moves the node into the
//!   ROS thread.
//! * ROS thread: `spin_once` + a local executor driving the subscription and server tasks; a
//!   decoded message becomes a posted command that calls `ctx.interface.deliver(..)` on the
//!   physics thread. Once a second it checks the graph for peers of another type
//!   ([`graph`](crate::ros::graph)) and ends the run through `ctx.fail` when it finds one.
//! * `post_step` (physics thread): forwards every endpoint publication it has not forwarded yet
//!   (payload → preallocated message), adds odometry/transform payloads to one /tf message per
//!   tick, accumulates static transforms into the latched /tf_static set, publishes merged
//!   joint_states and /clock on their gates, and about once a second reports each out endpoint's
//!   `has_subscribers` (a lazy endpoint is then not produced).
//! * `shutdown`: publishes the final /clock if the gate skipped it, lingers `linger_s` when a
//!   peer listens so the last messages arrive, stops and joins the ROS thread.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;
use r2r::geometry_msgs::msg::TransformStamped;
use r2r::rosgraph_msgs::msg::Clock;
use r2r::sensor_msgs::msg::JointState;
use r2r::tf2_msgs::msg::TFMessage;

use crate::context::payload::{self as pl, Payload};
use crate::context::{EndpointId, SimContext};
use crate::error::HookResult;
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor};
use crate::plugin_descriptor;
use crate::ros::clock::ClockGate;
use crate::ros::config::BridgeConfig;
use crate::ros::convert::{self, Frames, Outbound, Task};
use crate::ros::graph::{self, Watched};
use crate::ros::plan::{self, TfRoute};
use crate::ros::{field, params};

mod wiring;
use wiring::{physical_robot, Wiring};

/// Wall period of the `has_subscribers` refresh and of the watchdog.
const GRAPH_PERIOD: Duration = Duration::from_secs(1);
/// How long one `spin_once` may block (bounds shutdown latency, not message latency: a wait
/// returns as soon as something is ready).
const SPIN_TIMEOUT: Duration = Duration::from_millis(10);
/// How long shutdown waits for the answers to service requests still in flight.
const ANSWER_GRACE: Duration = Duration::from_secs(2);
/// Wall period of the re-sends while paused (latest joint_states and TF, /clock at the time it
/// stands at): controllers and TF listeners do not starve, and nothing new is invented.
const PAUSED_PERIOD: Duration = Duration::from_millis(100);

/// The registry entry (`transport_only`: dropped by `--no-communication`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "ros2_bridge",
        "ROS 2 transport (r2r): every endpoint on the graph, /clock from sim time, /tf + latched /tf_static, merged joint_states, type-mismatch watchdog.",
        BridgeConfig,
        Ros2Bridge
    )
    .transport_only()
}

/// The bridge plugin.
pub struct Ros2Bridge {
    cfg: BridgeConfig,
    address: String,
    run: Option<Running>,
}

struct OutSlot {
    id: EndpointId,
    label: String,
    topic: usize,
    out: Box<dyn Outbound>,
    frames: Frames,
    field: Option<String>,
    every: Option<u64>,
    failed: bool,
}

struct TfSlot {
    id: EndpointId,
    route: TfRoute,
    frames: Frames,
}

struct MergedSlot {
    topic: usize,
    members: Vec<EndpointId>,
    latest: Vec<Option<pl::JointState>>,
    publisher: r2r::Publisher<JointState>,
    msg: JointState,
    every: u64,
    fresh: bool,
}

struct Running {
    outs: Vec<OutSlot>,
    tfs: Vec<TfSlot>,
    merged: Vec<MergedSlot>,
    /// Endpoint ids whose publications the bridge forwards (outs, tf, merged members).
    tracked: Vec<EndpointId>,
    /// Per endpoint: the publication tick last forwarded.
    seen: Vec<Option<u64>>,
    /// Per endpoint: published since the last forward (this tick's scratch).
    fresh: Vec<bool>,
    tf_pub: r2r::Publisher<TFMessage>,
    tf_msg: TFMessage,
    tf_topic: usize,
    tf_static_pub: r2r::Publisher<TFMessage>,
    tf_static_msg: TFMessage,
    tf_static_topic: usize,
    statics: BTreeMap<String, TransformStamped>,
    /// The /clock publisher, its message and when it goes out (shared with the recording).
    clock: Option<(r2r::Publisher<Clock>, Clock, ClockGate)>,
    clock_topic: usize,
    last_refresh: Option<Instant>,
    /// Last re-send while paused (`None` while stepping).
    last_paused: Option<Instant>,
    topics: Vec<String>,
    trace: Option<Vec<(u32, i64, i64)>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Ros2Bridge {
    /// A bridge from its config.
    pub fn new(cfg: BridgeConfig, args: &PluginArgs) -> Self {
        Ros2Bridge { cfg, address: args.address.clone(), run: None }
    }
}

fn payload_stamp(p: &Payload) -> Option<f64> {
    match p {
        Payload::Odometry(o) => Some(o.stamp),
        Payload::LaserScan(o) => Some(o.stamp),
        Payload::Range(o) => Some(o.stamp),
        Payload::PointCloud(o) => Some(o.stamp),
        Payload::NavSatFix(o) => Some(o.stamp),
        Payload::TwistCov(o) => Some(o.stamp),
        Payload::Imu(o) => Some(o.stamp),
        Payload::JointState(o) => Some(o.stamp),
        Payload::PoseTwist(o) => Some(o.stamp),
        Payload::Wrench(o) => Some(o.stamp),
        _ => None,
    }
}

fn wall_ns() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as i64).unwrap_or(0)
}

fn same_transform(a: &TransformStamped, b: &TransformStamped) -> bool {
    a.header.frame_id == b.header.frame_id
        && a.child_frame_id == b.child_frame_id
        && a.transform == b.transform
}

impl Plugin for Ros2Bridge {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP | Hooks::SHUTDOWN
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let cfg = self.cfg.clone();
        // A run starts: requests are served again (a process may run several in turn).
        crate::ros::services::begin_run();
        let plan = plan::build_with_robots(&ctx.interface, &cfg, &|owner: &str| {
            physical_robot(ctx, owner)
        })
        .map_err(|e| e.join("\n  "))?;
        for n in &plan.notes {
            tracing::debug!("[{}] {n}", self.address);
        }
        for w in &plan.warnings {
            tracing::warn!("[{}] {w}", self.address);
        }
        let rctx = ros_context()?;
        let (node_name, node_ns) = crate::ros::remap::main_node(&cfg.node_name);
        let node = r2r::Node::create(rctx.clone(), &node_name, &node_ns)
            .map_err(|e| format!("cannot create the ROS node `{node_name}`: {e}"))?;
        let mut w = Wiring {
            node,
            address: &self.address,
            topics: Vec::new(),
            watched: Vec::new(),
            tracked: Vec::new(),
        };
        let outs = w.outputs(ctx, &plan)?;
        let (tf_pub, tf_static_pub, tfs) = w.tf(&plan)?;
        let merged = w.merged(ctx, &plan)?;
        let clock = if cfg.publish_clock { Some(w.clock(ctx, &cfg)?) } else { None };
        let commands = ctx.command_sender();
        let mut tasks = w.inputs(&plan, &commands)?;

        // Parameters: use_sim_time and the run's settings (read-only); logs on /rosout.
        let fq_name = w.node.fully_qualified_name().unwrap_or_else(|_| format!("/{node_name}"));
        crate::ros::rosout::attach(&mut w.node, &fq_name)?;
        let table = run_parameters(&w.node, ctx, &cfg);
        let use_sim_time = table.get("use_sim_time").map(|p| p.value.bool_value).unwrap_or(true);
        tasks.extend(params::serve(&mut w.node, &fq_name, Arc::new(std::sync::Mutex::new(table)))?);

        // A controller_manager node for every robot with a controller registry.
        let cm =
            crate::ros::controller_manager::serve_all(&rctx, ctx, &cfg, &commands, use_sim_time)?;

        let tf_topic = w.topic_idx(&plan.tf_topic);
        let tf_static_topic = w.topic_idx(&plan.tf_static_topic);
        let clock_topic = w.topic_idx("/clock");
        let Wiring { node, topics, watched, mut tracked, .. } = w;
        tracked.sort_unstable();
        tracked.dedup();
        let n = ctx.interface.all().len();

        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            let watch = cfg.type_check;
            let address = self.address.clone();
            std::thread::Builder::new()
                .name("roqsim-ros".into())
                .spawn(move || {
                    ros_thread(node, cm.managers, tasks, watched, watch, commands, stop, address)
                })
                .map_err(|e| format!("cannot start the ROS thread: {e}"))?
        };
        tracing::info!(
            "[{}] ROS 2 node {}: {} publishers, {} subscriptions/servers, TF on {} and {}{}",
            self.address,
            fq_name,
            outs.len() + merged.len(),
            plan.inputs.len(),
            plan.tf_topic,
            plan.tf_static_topic,
            if clock.is_some() { ", /clock" } else { "" }
        );
        self.run = Some(Running {
            outs,
            tfs,
            merged,
            tracked,
            seen: vec![None; n],
            fresh: vec![false; n],
            tf_pub,
            tf_msg: TFMessage::default(),
            tf_topic,
            tf_static_pub,
            tf_static_msg: TFMessage::default(),
            tf_static_topic,
            statics: BTreeMap::new(),
            clock,
            clock_topic,
            last_refresh: None,
            last_paused: None,
            topics,
            trace: cfg.latency_trace.as_ref().map(|_| Vec::new()),
            stop,
            thread: Some(thread),
        });
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        let Some(r) = self.run.as_mut() else { return Ok(()) };
        r.seen.iter_mut().for_each(|s| *s = None);
        r.merged.iter_mut().for_each(|m| m.latest.iter_mut().for_each(|l| *l = None));
        // Forward what was published at tick 0 (static transforms) and the clock the reset
        // leaves (0, or the standing time of a state-only reset), whatever the clock's gate says.
        let clock = r.clock.as_ref().is_some_and(|c| c.2.at_reset());
        r.forward(ctx, clock)
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let Some(r) = self.run.as_mut() else { return Ok(()) };
        if ctx.paused {
            // Paused (Engine::idle): no step was taken, so nothing is new and /clock stands still;
            // re-send the latest joint states, TF and the standing clock so controllers and TF
            // listeners do not starve.
            let now = ctx.sim_time();
            let pause = r.clock.as_mut().is_some_and(|c| c.2.on_pause(now));
            if pause || r.last_paused.is_none_or(|t| t.elapsed() >= PAUSED_PERIOD) {
                r.last_paused = Some(Instant::now());
                r.republish_paused(ctx)?;
            }
        } else {
            r.last_paused = None;
            // On the gate, or the last step a StepSimulation / SimulateSteps / the viewer asked
            // for while paused (the runner counts it off after this hook).
            let clock = r.clock.as_mut().is_some_and(|c| c.2.after_step(ctx));
            r.forward(ctx, clock)?;
        }
        if r.last_refresh.is_none_or(|t| t.elapsed() >= GRAPH_PERIOD) {
            r.last_refresh = Some(Instant::now());
            r.refresh_subscribers(ctx);
        }
        Ok(())
    }

    fn shutdown(&mut self, ctx: &mut SimContext) -> HookResult {
        let Some(mut r) = self.run.take() else { return Ok(()) };
        // The final sim time, if the clock gate skipped the last step.
        let now = ctx.sim_time();
        let mut listened = false;
        if let Some((p, m, gate)) = r.clock.as_mut() {
            if gate.at_end(now) {
                m.clock = convert::stamp(now);
                let _ = p.publish(m);
            }
            listened |= p.get_inter_process_subscription_count().unwrap_or(0) > 0;
        }
        listened |= r.outs.iter().any(|o| o.out.subscribers() > 0)
            || r.tf_pub.get_inter_process_subscription_count().unwrap_or(0) > 0;
        if listened && self.cfg.linger_s > 0.0 {
            std::thread::sleep(Duration::from_secs_f64(self.cfg.linger_s));
        }
        // Every request still waiting for the simulation, and every later one, is answered
        // with why the run ended; the node spins on until those answers are out (bounded).
        let why = ctx.run.end_reason.clone().unwrap_or_else(|| "the run ended".into());
        crate::ros::services::end_run(&why);
        if !crate::ros::services::wait_answered(ANSWER_GRACE) {
            tracing::warn!(
                "[{}] service requests still unanswered {} s after the run ended",
                self.address,
                ANSWER_GRACE.as_secs()
            );
        }
        crate::ros::rosout::detach();
        r.stop.store(true, Ordering::SeqCst);
        if let Some(t) = r.thread.take() {
            let _ = t.join();
        }
        if let (Some(path), Some(trace)) = (&self.cfg.latency_trace, &r.trace) {
            let mut s = String::with_capacity(trace.len() * 40);
            for (t, st, w) in trace {
                s += &format!("{} {} {}\n", r.topics[*t as usize], st, w);
            }
            std::fs::write(path, s)
                .map_err(|e| format!("latency_trace: cannot write `{path}`: {e}"))?;
        }
        Ok(())
    }
}

impl Running {
    /// Forward every publication not forwarded yet, then the bridge's own streams.
    /// Publish what this step produced; /clock when `clock` (its [`ClockGate`] decided).
    fn forward(&mut self, ctx: &SimContext, clock: bool) -> HookResult {
        let tick = ctx.tick;
        let now = ctx.sim_time();
        crate::ros::services::set_sim_time(now); // stamps of action feedback built on the ROS thread
        let iface = &ctx.interface;
        let wall = self.trace.as_ref().map(|_| wall_ns());
        for &id in &self.tracked {
            let t = iface.get(id).latest().map(|(_, t)| t);
            let fresh = t.is_some() && t != self.seen[id];
            self.fresh[id] = fresh;
            if fresh {
                self.seen[id] = t;
            }
        }

        self.tf_msg.transforms.clear();
        for slot in &mut self.outs {
            if !self.fresh[slot.id] {
                continue;
            }
            let Some((p, t)) = iface.get(slot.id).latest() else { continue };
            if slot.every.is_some_and(|k| t % k != 0) {
                continue;
            }
            let projected;
            let msg = match &slot.field {
                Some(f) => {
                    projected = field::project(p, f)
                        .map_err(|e| format!("endpoint {}: {e}", slot.label))?;
                    &projected
                }
                None => p,
            };
            match slot.out.publish(msg, &slot.frames, now) {
                Ok(()) => {}
                Err(e) if e.starts_with("publish failed") => {
                    if !slot.failed {
                        slot.failed = true;
                        tracing::warn!("endpoint {}: {e}", slot.label);
                    }
                }
                Err(e) => return Err(format!("endpoint {}: {e}", slot.label)),
            }
            if let Payload::Odometry(o) = p {
                if o.publish_tf {
                    convert::transforms_of(p, now, &slot.frames, &mut self.tf_msg.transforms)?;
                }
            }
            if let (Some(tr), Some(w)) = (self.trace.as_mut(), wall) {
                tr.push((slot.topic as u32, convert::nanos(payload_stamp(p).unwrap_or(now)), w));
            }
        }

        let mut static_changed = false;
        for slot in &self.tfs {
            if !self.fresh[slot.id] {
                continue;
            }
            let Some((p, _)) = iface.get(slot.id).latest() else { continue };
            match slot.route {
                TfRoute::Dynamic => {
                    convert::transforms_of(p, now, &slot.frames, &mut self.tf_msg.transforms)?
                }
                TfRoute::Static => {
                    let mut ts = Vec::new();
                    convert::transforms_of(p, now, &slot.frames, &mut ts)?;
                    for t in ts {
                        let known = self
                            .statics
                            .get(&t.child_frame_id)
                            .is_some_and(|old| same_transform(old, &t));
                        if !known {
                            self.statics.insert(t.child_frame_id.clone(), t);
                            static_changed = true;
                        }
                    }
                }
            }
        }
        if !self.tf_msg.transforms.is_empty() {
            if let Err(e) = self.tf_pub.publish(&self.tf_msg) {
                tracing::warn!("/tf publish failed: {e}");
            }
            if let (Some(tr), Some(w)) = (self.trace.as_mut(), wall) {
                tr.push((self.tf_topic as u32, convert::nanos(now), w));
            }
        }
        if static_changed {
            // Latched: the whole accumulated set, re-published whenever it grows or changes.
            self.tf_static_msg.transforms.clear();
            self.tf_static_msg.transforms.extend(self.statics.values().cloned());
            if let Err(e) = self.tf_static_pub.publish(&self.tf_static_msg) {
                tracing::warn!("/tf_static publish failed: {e}");
            }
            if let (Some(tr), Some(w)) = (self.trace.as_mut(), wall) {
                tr.push((self.tf_static_topic as u32, convert::nanos(now), w));
            }
        }

        for m in &mut self.merged {
            for (i, &id) in m.members.iter().enumerate() {
                if !self.fresh[id] {
                    continue;
                }
                if let Some((Payload::JointState(js), _)) = iface.get(id).latest() {
                    match &mut m.latest[i] {
                        Some(l) => l.clone_from(js),
                        slot @ None => *slot = Some(js.clone()),
                    }
                    m.fresh = true;
                }
            }
            if m.fresh && tick % m.every == 0 {
                m.fresh = false;
                convert::fill_merged(&mut m.msg, &m.latest, now);
                if let Err(e) = m.publisher.publish(&m.msg) {
                    tracing::warn!("merged joint_states publish failed: {e}");
                }
                if let (Some(tr), Some(w)) = (self.trace.as_mut(), wall) {
                    tr.push((m.topic as u32, convert::nanos(now), w));
                }
            }
        }

        if let Some((p, m, gate)) = self.clock.as_mut() {
            if clock {
                m.clock = convert::stamp(now);
                if let Err(e) = p.publish(m) {
                    tracing::warn!("/clock publish failed: {e}");
                }
                gate.sent(now);
                if let (Some(tr), Some(w)) = (self.trace.as_mut(), wall) {
                    tr.push((self.clock_topic as u32, convert::nanos(now), w));
                }
            }
        }
        Ok(())
    }

    /// While paused: re-send the latest joint_states (endpoints and merged groups) and the latest
    /// dynamic TF with their original stamps, and /clock at the time it stands at. Only what the
    /// interface still holds is re-sent, so after a reset nothing stale goes out.
    fn republish_paused(&mut self, ctx: &SimContext) -> HookResult {
        let now = ctx.sim_time();
        // Sim time of a publication made at `tick` (the payloads' own stamps win where they have one).
        let at = |tick: u64| now - ctx.tick.saturating_sub(tick) as f64 * ctx.dt;
        let iface = &ctx.interface;
        self.tf_msg.transforms.clear();
        for slot in &mut self.outs {
            let Some((p, t)) = iface.get(slot.id).latest() else { continue };
            match p {
                Payload::JointState(_) if slot.field.is_none() => {
                    if let Err(e) = slot.out.publish(p, &slot.frames, at(t)) {
                        tracing::debug!("endpoint {}: paused re-send: {e}", slot.label);
                    }
                }
                Payload::Odometry(o) if o.publish_tf => {
                    convert::transforms_of(p, at(t), &slot.frames, &mut self.tf_msg.transforms)?
                }
                _ => {}
            }
        }
        for slot in self.tfs.iter().filter(|s| s.route == TfRoute::Dynamic) {
            if let Some((p, t)) = iface.get(slot.id).latest() {
                convert::transforms_of(p, at(t), &slot.frames, &mut self.tf_msg.transforms)?;
            }
        }
        if !self.tf_msg.transforms.is_empty() {
            if let Err(e) = self.tf_pub.publish(&self.tf_msg) {
                tracing::warn!("/tf publish failed: {e}");
            }
        }
        for m in &mut self.merged {
            if m.latest.iter().any(Option::is_some) && !m.msg.name.is_empty() {
                if let Err(e) = m.publisher.publish(&m.msg) {
                    tracing::warn!("merged joint_states publish failed: {e}");
                }
            }
        }
        if let Some((p, m, gate)) = self.clock.as_mut() {
            m.clock = convert::stamp(now);
            if let Err(e) = p.publish(m) {
                tracing::warn!("/clock publish failed: {e}");
            }
            gate.sent(now);
        }
        Ok(())
    }

    /// Report `has_subscribers` on every out endpoint the bridge serves.
    fn refresh_subscribers(&mut self, ctx: &mut SimContext) {
        let tf = self.tf_pub.get_inter_process_subscription_count().unwrap_or(0) > 0;
        let tf_static = self.tf_static_pub.get_inter_process_subscription_count().unwrap_or(0) > 0;
        let mut has: BTreeMap<EndpointId, bool> = BTreeMap::new();
        for o in &self.outs {
            let mut any = o.out.subscribers() > 0;
            if let Some((Payload::Odometry(od), _)) = ctx.interface.get(o.id).latest() {
                // Odometry also feeds /tf: a TF listener keeps it alive.
                any |= od.publish_tf && tf;
            }
            *has.entry(o.id).or_default() |= any;
        }
        for t in &self.tfs {
            *has.entry(t.id).or_default() |= match t.route {
                TfRoute::Dynamic => tf,
                TfRoute::Static => tf_static,
            };
        }
        for m in &self.merged {
            let any = m.publisher.get_inter_process_subscription_count().unwrap_or(0) > 0;
            for &id in &m.members {
                *has.entry(id).or_default() |= any;
            }
        }
        for (id, any) in has {
            let ep = ctx.interface.get_mut(id);
            ep.has_subscribers = Some(any || ep.recorded);
        }
    }
}

/// The bridge node's parameters: `use_sim_time` (as launched; roqsim stamps everything with
/// simulation time and publishes /clock itself, so it is read-only) and the run's settings,
/// read-only (they are fixed when the world is built).
fn run_parameters(node: &r2r::Node, ctx: &SimContext, cfg: &BridgeConfig) -> params::Table {
    let mut t = params::Table::new(false);
    let ust = params::override_of(node, "use_sim_time").unwrap_or(params::bool_value(true));
    if !ust.bool_value {
        tracing::warn!("use_sim_time is false for this node, but roqsim stamps everything with simulation time (it publishes /clock)");
    }
    t.declare("use_sim_time", ust, true, "roqsim's time is the simulation's; it publishes /clock");
    t.declare("timestep", params::double_value(ctx.dt), true, "s, physics step (sim.timestep)");
    t.declare(
        "physics_rate_hz",
        params::double_value(1.0 / ctx.dt),
        true,
        "Hz, physics steps per simulated second",
    );
    t.declare(
        "seed",
        params::int_value(ctx.seed().map(|s| s as i64).unwrap_or(-1)),
        true,
        "the run's seed (--seed or sim.seed; -1 = none)",
    );
    t.declare(
        "world_dir",
        params::string_value(&ctx.run.base_dir.to_string_lossy()),
        true,
        "directory of the world file",
    );
    t.declare(
        "namespace",
        params::string_value(&cfg.namespace),
        true,
        "outer namespace of relative topics",
    );
    t.declare(
        "tf_namespace",
        params::string_value(cfg.tf_namespace.as_deref().unwrap_or("")),
        true,
        "TF topics' namespace (\"\" = global /tf)",
    );
    t.declare(
        "frame_prefix",
        params::string_value(&cfg.frame_prefix),
        true,
        "prefix of every frame id",
    );
    t.declare("publish_clock", params::bool_value(cfg.publish_clock), true, "publishes /clock");
    t.declare(
        "clock_rate_hz",
        params::double_value(
            crate::engine::rates::snap_rate(cfg.clock_hz(1.0 / ctx.dt), 1.0 / ctx.dt).realised_hz,
        ),
        true,
        "Hz, /clock rate (snapped to the physics grid)",
    );
    t
}

/// The ROS thread: spins the bridge's node and polls its tasks until `stop`. Every extra node
/// (a robot's controller_manager, with its controllers' nodes) is spun, with its own tasks, on a
/// thread of its own (`roqsim-ros-cm`, [`crate::ros::controller_nodes::spin`]), joined before
/// this returns: each `spin_once` blocks until one of its own
/// entities is ready (or `SPIN_TIMEOUT`), so no node is polled on another's schedule — polling
/// them in turn with a short timeout cost the ROS thread a fifth of the simulator's CPU
/// (bench/README.md, row 4).
#[allow(clippy::too_many_arguments)]
fn ros_thread(
    mut node: r2r::Node,
    extra: Vec<crate::ros::controller_manager::ManagerNode>,
    tasks: Vec<Task>,
    watched: Vec<Watched>,
    watch: bool,
    commands: crate::context::CommandSender,
    stop: Arc<AtomicBool>,
    address: String,
) {
    let mut spinners = Vec::new();
    for m in extra {
        let (stop, addr) = (stop.clone(), address.clone());
        match std::thread::Builder::new().name("roqsim-ros-cm".into()).spawn(move || {
            crate::ros::controller_nodes::spin(
                m.node,
                m.tasks,
                m.controllers,
                m.refresh,
                SPIN_TIMEOUT,
                &stop,
                &addr,
            )
        }) {
            Ok(h) => spinners.push(h),
            Err(e) => tracing::error!("[{address}] cannot start a controller_manager thread: {e}"),
        }
    }
    let mut pool = LocalPool::new();
    let spawner = pool.spawner();
    for t in tasks {
        if let Err(e) = spawner.spawn_local(t) {
            tracing::error!("[{address}] cannot start a subscription task: {e}");
        }
    }
    let mut watching = watch && !watched.is_empty();
    let mut last_check = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        node.spin_once(SPIN_TIMEOUT);
        pool.run_until_stalled();
        if watching && last_check.elapsed() >= GRAPH_PERIOD {
            last_check = Instant::now();
            if let Some(msg) = graph::check(&node, &watched) {
                tracing::error!("[{address}] {msg}");
                commands.post(move |ctx: &mut SimContext| ctx.fail(msg));
                watching = false;
            }
        }
    }
    for h in spinners {
        if h.join().is_err() {
            tracing::error!("[{address}] a controller_manager thread panicked");
        }
    }
}

/// rcl's context. r2r panics (rather than returning an error) when rcl refuses the process's
/// ROS arguments (`--ros-args --params-file missing.yaml`, `-r foo`, `--log-level bogus`) or
/// its environment (`ROS_DOMAIN_ID=abc`): that panic becomes this entry's configure error.
fn ros_context() -> Result<r2r::Context, String> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let made = std::panic::catch_unwind(r2r::Context::create);
    std::panic::set_hook(hook);
    match made {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => Err(format!("cannot start ROS 2 (rcl init failed: {e}); source scripts/env.sh (ROS libraries, RMW_IMPLEMENTATION, HOME) before running with --ros")),
        Err(p) => {
            let why = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(format!(
                "cannot start ROS 2: rcl refused the process's ROS arguments or environment ({}); check the --ros-args section (--params-file FILE, -r from:=to, -p name:=value, --log-level LEVEL) and ROS_DOMAIN_ID (a whole number 0-232)",
                crate::error::clip(why.trim())
            ))
        }
    }
}
