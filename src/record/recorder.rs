//! The recorder: an engine [`Observer`] writing one MCAP file per run.
//!
//! * `/roqsim/state` — a [`StateSample`] every `every_steps` physics steps (an exact decimation);
//! * every endpoint output on the topic, with the type, frames and stamps the ROS 2 bridge would
//!   publish (the bridge's ROS-free wiring plan decides them), CDR-encoded, plus `/tf`,
//!   `/tf_static` and `/clock` — whether or not `--ros` is on;
//! * `/roqsim/inbound` — every payload delivered to an inbound endpoint and every reset, with the
//!   step it was applied before (JSON), and a CDR copy of each inbound topic message on its topic;
//! * metadata `roqsim.provenance` at the start and `roqsim.summary` when finalised.
//!
//! Log times are run time (steps × timestep, monotonic across resets); message stamps are sim time.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use mcap::records::{MessageHeader, Metadata};
use mcap::WriteOptions;
use serde_json::json;
use serde_norway::Value;

use crate::context::payload::Payload;
use crate::context::tap::Tapped;
use crate::context::{EndpointId, ResetScope, SimContext};
use crate::engine::rates::snap_rate;
use crate::engine::{Engine, Observer};
use crate::record::msgs::{self, Frames};
use crate::record::provenance::{self, RunInputs, PROVENANCE, SUMMARY};
use crate::record::sink::Sink;
use crate::record::state::StateSample;
pub use crate::record::topic_filter::TopicFilter;
use crate::ros::clock::ClockGate;
use crate::ros::plan::{self, InKind, TfRoute};
use crate::ros::BridgeConfig;
use crate::world::LoadedWorld;

/// Topic of the state samples.
pub const STATE_TOPIC: &str = "/roqsim/state";
/// Topic of the inbound log.
pub const INBOUND_TOPIC: &str = "/roqsim/inbound";
/// The inbound log's message type: one event's JSON in `data`. A standard type, so rosbag2
/// (which needs a schema for every channel) and the ROS 2 MCAP readers open it as they are.
pub const INBOUND_TYPE: &str = "std_msgs/msg/String";
/// The type of /tf and /tf_static.
const TF_TYPE: &str = "tf2_msgs/msg/TFMessage";
/// Default state sample rate (Hz).
pub const DEFAULT_RATE_HZ: f64 = 50.0;

/// `--record` options.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// Output file.
    pub path: PathBuf,
    /// State sample rate (Hz), snapped to the physics grid.
    pub rate_hz: f64,
    /// ROS topics kept.
    pub topics: TopicFilter,
}

/// A merged joint_states topic, recorded as the bridge publishes it: every member's latest
/// joint states in one message, when one of them changed, on the group's rate grid.
struct MergedSlot {
    channel: u16,
    topic: String,
    members: Vec<EndpointId>,
    latest: Vec<Option<crate::context::payload::JointState>>,
    fresh: bool,
    every: u64,
}

struct OutSlot {
    id: EndpointId,
    channel: u16,
    topic: String,
    msg_type: String,
    frames: Frames,
    field: Option<String>,
    every: Option<u64>,
}

/// An inbound endpoint: its label, and (topic, type, frames) when its messages are kept as CDR.
type InSlot = (String, Option<(String, String, Frames)>);

/// A recording being written.
pub struct Recorder {
    opts: RecordOptions,
    /// Where the file is written until the recording is attached to a built engine: a hidden
    /// sibling of the output, renamed over it then, so a run that fails to build leaves an
    /// existing file at the output path as it was (`None` once renamed).
    partial: Option<PathBuf>,
    sink: Sink,
    meta: BTreeMap<String, String>,
    bridge_cfg: BridgeConfig,
    schemas: BTreeMap<String, u16>,
    channels: BTreeMap<String, u16>,
    /// Per channel id: its topic and the messages written on it.
    counts: Vec<(String, u64)>,
    /// The /tf, /tf_static and /clock channels, once created.
    tf_channel: Option<u16>,
    tf_static_channel: Option<u16>,
    clock_channel: Option<u16>,
    state_channel: u16,
    inbound_channel: u16,
    outs: Vec<OutSlot>,
    tfs: Vec<(EndpointId, TfRoute, Frames)>,
    merged: Vec<MergedSlot>,
    ins: BTreeMap<EndpointId, InSlot>,
    statics: BTreeMap<String, (crate::context::payload::Transform, f64, Frames)>,
    tf_topic: String,
    /// Whether /tf is kept (the topic filter, decided once).
    keep_tf: bool,
    tf_static_topic: String,
    /// When /clock is recorded: the bridge's decision ([`ClockGate`]), so the recorded /clock is
    /// what a live subscriber receives (`None`: /clock not recorded).
    clock: Option<ClockGate>,
    /// Cancel flags of the goals logged, in order (a cancel names its goal by this index).
    goals: Vec<Arc<AtomicBool>>,
    every: u64,
    step: u64,
    seq: u32,
    dt: f64,
}

impl Recorder {
    /// Open the output file now, so an unwritable path is refused before anything is built.
    pub fn create(opts: RecordOptions) -> Result<Recorder, String> {
        let min = crate::engine::rates::MIN_RATE_HZ;
        let max = crate::world::bounds::MAX_RECORD_RATE_HZ;
        if !(opts.rate_hz >= min && opts.rate_hz <= max) {
            return Err(format!(
                "--record-rate must be a rate in [{min}, {max}] Hz (above the physics rate every step is recorded), got {}",
                crate::error::num(opts.rate_hz)
            ));
        }
        let partial = partial_path(&opts.path);
        let file = File::create(&partial).map_err(|e| {
            format!("--record {}: cannot create the file: {e}", opts.path.display())
        })?;
        let writer = WriteOptions::new()
            .compression(None)
            .profile("ros2")
            .library(format!("roqsim {}", env!("CARGO_PKG_VERSION")))
            .chunk_size(Some(256 * 1024))
            .create(BufWriter::new(file))
            .map_err(|e| format!("--record {}: {e}", opts.path.display()))?;
        let sink = match Sink::start(writer) {
            Ok(x) => x,
            Err(e) => {
                let _ = std::fs::remove_file(&partial);
                return Err(e);
            }
        };
        Ok(Recorder {
            opts,
            partial: Some(partial),
            sink,
            meta: BTreeMap::new(),
            bridge_cfg: BridgeConfig::default(),
            schemas: BTreeMap::new(),
            channels: BTreeMap::new(),
            counts: Vec::new(),
            tf_channel: None,
            tf_static_channel: None,
            clock_channel: None,
            state_channel: 0,
            inbound_channel: 0,
            outs: Vec::new(),
            tfs: Vec::new(),
            merged: Vec::new(),
            ins: BTreeMap::new(),
            statics: BTreeMap::new(),
            tf_topic: "/tf".into(),
            keep_tf: false,
            tf_static_topic: "/tf_static".into(),
            clock: None,
            goals: Vec::new(),
            every: 1,
            step: 0,
            seq: 0,
            dt: 0.0,
        })
    }

    /// The output path.
    pub fn path(&self) -> &Path {
        &self.opts.path
    }

    /// Gather the provenance of a loaded world (before it is built: the engine consumes it).
    pub fn prepare(&mut self, inputs: &RunInputs, world: &LoadedWorld) -> Result<(), String> {
        self.meta = provenance::before_build(inputs, world);
        if let Some(c) = world.components.iter().find(|c| c.plugin == "ros2_bridge") {
            self.bridge_cfg =
                crate::plugin::typed_config::<BridgeConfig>(&Value::Mapping(c.config.clone()))
                    .map_err(|es| {
                        es.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; ")
                    })?;
        }
        Ok(())
    }

    /// The channel of `topic` (CDR messages of type `ty`), created with its schema on first use.
    fn channel(&mut self, topic: &str, ty: &str) -> Result<u16, String> {
        if let Some(&c) = self.channels.get(topic) {
            return Ok(c);
        }
        let schema = match self.schemas.get(ty) {
            Some(&s) => s,
            None => {
                let text =
                    msgs::schema(ty).ok_or_else(|| format!("no definition embedded for `{ty}`"))?;
                let s = self.sink.add_schema(ty, text.as_bytes())?;
                self.schemas.insert(ty.to_string(), s);
                s
            }
        };
        let c = self.sink.add_channel(schema, topic, "cdr")?;
        self.channels.insert(topic.to_string(), c);
        let i = c as usize;
        if self.counts.len() <= i {
            self.counts.resize(i + 1, (String::new(), 0));
        }
        self.counts[i].0 = topic.to_string();
        Ok(c)
    }

    /// A channel created on first use, its id kept in `slot`.
    fn cached(
        &mut self,
        slot: fn(&mut Self) -> &mut Option<u16>,
        topic: &str,
        ty: &str,
    ) -> Result<u16, String> {
        if let Some(c) = *slot(self) {
            return Ok(c);
        }
        let c = self.channel(topic, ty)?;
        *slot(self) = Some(c);
        Ok(c)
    }

    /// Queue one message on `channel` (handed to the writer thread at the end of the step).
    fn write(&mut self, channel: u16, stamp: f64, data: &[u8]) -> Result<(), String> {
        let log_time = (self.step as f64 * self.dt * 1e9).round() as u64;
        let header = MessageHeader {
            channel_id: channel,
            sequence: self.seq,
            log_time,
            publish_time: msgs::nanos(stamp).max(0) as u64,
        };
        self.seq = self.seq.wrapping_add(1);
        self.sink.write(header, data);
        self.counts[channel as usize].1 += 1;
        Ok(())
    }

    /// Wire the recording to a built engine: topics from the bridge's wiring plan, the
    /// provenance metadata (with the rate and actuator tables), then observe every step.
    pub fn attach(mut self, engine: &mut Engine) -> Result<(), String> {
        let ctx = &mut engine.ctx;
        let physics_hz = ctx.interface.physics_hz();
        self.dt = ctx.dt;
        let state = snap_rate(self.opts.rate_hz, physics_hz);
        self.every = state.every_steps;
        let plan = plan::build(&ctx.interface, &self.bridge_cfg).map_err(|e| e.join("; "))?;
        let unmatched = self.opts.topics.unmatched(&self.run_topics(&plan));
        let not_recorded = self.add_outputs(ctx, &plan, physics_hz)?;
        self.add_tf_and_inputs(ctx, &plan);
        let mut rates = self.add_merged(&plan, physics_hz)?;
        rates.extend(self.add_clock(physics_hz));
        rates.push(
            json!({"name": format!("record {STATE_TOPIC}"), "topic": STATE_TOPIC, "requested_hz": state.requested_hz,
            "realised_hz": state.realised_hz, "every_steps": state.every_steps}),
        );
        rates.extend(endpoint_rate_rows(ctx, &plan));
        self.mark_recorded(ctx);
        let mut meta = std::mem::take(&mut self.meta);
        meta.insert("actuators".into(), compiled_actuators(ctx.model()).to_string());
        meta.insert("physics_hz".into(), format!("{physics_hz:e}"));
        meta.insert("endpoint_rates".into(), serde_json::Value::Array(rates).to_string());
        let topics = self.topics_table(ctx, physics_hz);
        meta.insert("topics".into(), serde_json::to_string(&topics).unwrap_or_default());
        meta.insert(
            "not_recorded".into(),
            serde_json::to_string(&not_recorded).unwrap_or_default(),
        );
        let tables = actuator_tables(ctx);
        meta.insert("actuator_tables".into(), serde_json::to_string(&tables).unwrap_or_default());
        meta.insert(
            "record".into(),
            json!({"state_topic": STATE_TOPIC, "inbound_topic": INBOUND_TOPIC,
                "state_every_steps": state.every_steps, "state_requested_hz": state.requested_hz,
                "state_realised_hz": state.realised_hz,
                "topics": self.opts.topics.describe(),
                "unmatched_topic_globs": unmatched})
            .to_string(),
        );
        self.sink.write_metadata(Metadata { name: PROVENANCE.into(), metadata: meta })?;
        self.state_channel = self.channel(STATE_TOPIC, msgs::STATE_SAMPLE_TYPE)?;
        self.inbound_channel = self.channel(INBOUND_TOPIC, INBOUND_TYPE)?;
        for n in &not_recorded {
            tracing::warn!("--record: {n}");
        }
        for u in &unmatched {
            tracing::warn!("{u}");
        }
        self.start(engine)
    }

    /// Every topic the run has (for the globs that keep none of them).
    fn run_topics(&self, plan: &plan::Plan) -> std::collections::BTreeSet<String> {
        let mut run_topics: std::collections::BTreeSet<String> = Default::default();
        run_topics.extend(plan.outputs.iter().map(|o| o.topic.clone()));
        for i in &plan.inputs {
            if let InKind::Topic { .. } = &i.kind {
                run_topics.insert(i.name.clone());
            }
        }
        run_topics.extend(plan.merged.iter().map(|m| m.topic.clone()));
        if !plan.tf.is_empty() {
            run_topics.insert(plan.tf_topic.clone());
            run_topics.insert(plan.tf_static_topic.clone());
        }
        if self.bridge_cfg.publish_clock {
            run_topics.insert("/clock".to_string());
        }
        run_topics
    }

    /// A channel per kept output endpoint with a recording encoder; returns the kept ones left
    /// out (no encoder), with why.
    fn add_outputs(
        &mut self,
        ctx: &SimContext,
        plan: &plan::Plan,
        physics_hz: f64,
    ) -> Result<Vec<String>, String> {
        let mut not_recorded = Vec::new();
        for o in &plan.outputs {
            if !self.opts.topics.keeps(&o.topic) {
                continue;
            }
            if !msgs::ENCODED_TYPES.contains(&o.msg_type.as_str()) {
                not_recorded.push(format!("{} ({}): no recording encoder", o.topic, o.msg_type));
                continue;
            }
            let channel = self.channel(&o.topic, &o.msg_type)?;
            let every = o.rate_override.map(|hz| {
                let producer = ctx.interface.get(o.id).snapped.map(|s| s.every_steps).unwrap_or(1);
                plan::snap_override(hz, physics_hz, producer).every_steps
            });
            self.outs.push(OutSlot {
                id: o.id,
                channel,
                topic: o.topic.clone(),
                msg_type: o.msg_type.clone(),
                frames: Frames { prefix: o.frame_prefix.clone(), hint: o.frame_id_hint.clone() },
                field: o.field.clone(),
                every,
            });
        }
        Ok(not_recorded)
    }

    /// The TF routes and topics, and every inbound endpoint's label (with its topic, type and
    /// frames when its messages are kept as CDR).
    fn add_tf_and_inputs(&mut self, ctx: &SimContext, plan: &plan::Plan) {
        let keep = &self.opts.topics;
        for t in &plan.tf {
            self.tfs.push((t.id, t.route, Frames { prefix: t.frame_prefix.clone(), hint: None }));
        }
        self.tf_topic = plan.tf_topic.clone();
        self.keep_tf = keep.keeps(&self.tf_topic);
        self.tf_static_topic = plan.tf_static_topic.clone();
        for i in &plan.inputs {
            let typed = match &i.kind {
                InKind::Topic { msg_type, .. }
                    if keep.keeps(&i.name) && msgs::ENCODED_TYPES.contains(&msg_type.as_str()) =>
                {
                    let fr = Frames { prefix: i.frame_prefix.clone(), hint: None };
                    Some((i.name.clone(), msg_type.clone(), fr))
                }
                _ => None,
            };
            self.ins.insert(i.id, (i.label.clone(), typed));
        }
        for ep in ctx.interface.all().iter().enumerate() {
            if ep.1.direction == crate::context::Direction::In && !self.ins.contains_key(&ep.0) {
                self.ins.insert(ep.0, (plan::label(ep.1), None));
            }
        }
    }

    /// A channel per kept merged joint_states topic; returns their rate rows.
    fn add_merged(
        &mut self,
        plan: &plan::Plan,
        physics_hz: f64,
    ) -> Result<Vec<serde_json::Value>, String> {
        let mut rates = Vec::new();
        for m in &plan.merged {
            if !self.opts.topics.keeps(&m.topic) {
                continue;
            }
            let channel = self.channel(&m.topic, "sensor_msgs/msg/JointState")?;
            let s = snap_rate(m.requested_hz, physics_hz);
            rates.push(json!({"name": format!("record merged joint_states {}", m.topic),
                "topic": m.topic, "requested_hz": s.requested_hz, "realised_hz": s.realised_hz,
                "every_steps": s.every_steps}));
            self.merged.push(MergedSlot {
                channel,
                topic: m.topic.clone(),
                members: m.members.clone(),
                latest: vec![None; m.members.len()],
                fresh: false,
                every: s.every_steps,
            });
        }
        Ok(rates)
    }

    /// The /clock gate, when the bridge publishes /clock and the recording keeps it; its rate row.
    fn add_clock(&mut self, physics_hz: f64) -> Option<serde_json::Value> {
        if !self.bridge_cfg.publish_clock || !self.opts.topics.keeps("/clock") {
            return None;
        }
        let s = snap_rate(self.bridge_cfg.clock_hz(physics_hz), physics_hz);
        self.clock = Some(ClockGate::new(s.every_steps));
        Some(json!({"name": "record /clock", "topic": "/clock", "requested_hz": s.requested_hz,
            "realised_hz": s.realised_hz, "every_steps": s.every_steps}))
    }

    /// What the recording keeps is produced whether or not a ROS peer subscribes.
    fn mark_recorded(&self, ctx: &mut SimContext) {
        let kept_tf = self.tfs.iter().filter(|_| self.keep_tf).map(|t| t.0);
        let kept_merged = self.merged.iter().flat_map(|m| m.members.iter().copied());
        let kept: Vec<usize> =
            self.outs.iter().map(|o| o.id).chain(kept_tf).chain(kept_merged).collect();
        for id in kept {
            ctx.interface.get_mut(id).recorded = true;
        }
    }

    /// The `topics` metadata: recorded topic → type, endpoint, rate.
    fn topics_table(
        &self,
        ctx: &SimContext,
        physics_hz: f64,
    ) -> BTreeMap<String, serde_json::Value> {
        let mut topics = BTreeMap::new();
        for o in &self.outs {
            let ep = ctx.interface.get(o.id);
            let every = o.every.or(ep.snapped.map(|s| s.every_steps)).unwrap_or(1);
            topics.insert(
                o.topic.clone(),
                json!({"type": o.msg_type, "endpoint": plan::label(ep), "every_steps": every,
                    "realised_hz": physics_hz / every as f64, "lazy": ep.lazy}),
            );
        }
        for m in &self.merged {
            let members: Vec<String> =
                m.members.iter().map(|&id| plan::label(ctx.interface.get(id))).collect();
            topics.insert(
                m.topic.clone(),
                json!({"type": "sensor_msgs/msg/JointState", "endpoint": "(merged joint_states)",
                    "members": members, "every_steps": m.every,
                    "realised_hz": physics_hz / m.every as f64, "lazy": false}),
            );
        }
        topics
    }

    /// Start observing: tap the inbound side, write the state right after the initial reset
    /// (step 0) and the /clock the bridge publishes at that reset, move the file into place.
    fn start(mut self, engine: &mut Engine) -> Result<(), String> {
        let ctx = &mut engine.ctx;
        ctx.interface.enable_tap();
        let s0 = StateSample::capture(ctx, 0);
        self.write(self.state_channel, s0.time, &s0.encode())?;
        if self.clock.as_ref().is_some_and(ClockGate::at_reset) {
            self.write_clock(ctx.sim_time())?;
        }
        self.sink.flush()?;
        if let Some(tmp) = self.partial.take() {
            std::fs::rename(&tmp, &self.opts.path).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!("cannot move the recording into place: {e}")
            })?;
        }
        engine.set_observer(Box::new(self));
        Ok(())
    }

    fn log_inbound(&mut self, ctx: &mut SimContext) -> Result<(), String> {
        let applied_before = self.step;
        for t in ctx.interface.take_tapped() {
            let head = json!({"step": applied_before, "tick": ctx.tick, "episode": ctx.episode});
            let (id, p) = match t {
                Tapped::Deliver(id, p) => (id, p),
                Tapped::Cancel { endpoint, flag } => {
                    // A cancel of a goal this recording never delivered (none acted) is not logged.
                    let Some(n) = self.goals.iter().position(|g| Arc::ptr_eq(g, &flag)) else {
                        continue;
                    };
                    let label = self.label(endpoint);
                    let mut ev = head;
                    ev["endpoint"] = json!(label);
                    ev["endpoint_id"] = json!(endpoint);
                    ev["cancel"] = json!(n);
                    self.write_event(ctx, &ev)?;
                    continue;
                }
                Tapped::World(cmd) => {
                    let mut ev = head;
                    ev["world"] = serde_json::to_value(&cmd).map_err(|e| e.to_string())?;
                    self.write_event(ctx, &ev)?;
                    continue;
                }
                Tapped::Controller { entity, command } => {
                    let mut ev = head;
                    ev["entity"] = json!(entity);
                    ev["controller"] = serde_json::to_value(&command).map_err(|e| e.to_string())?;
                    self.write_event(ctx, &ev)?;
                    continue;
                }
            };
            let (label, typed) = self.ins.get(&id).cloned().unwrap_or((format!("#{id}"), None));
            let mut ev = head;
            ev["endpoint"] = json!(label);
            ev["endpoint_id"] = json!(id);
            if let Payload::Goal(call) = &p {
                ev["goal"] = json!(self.goals.len());
                self.goals.push(call.cancel.clone());
            }
            ev["payload"] =
                serde_json::to_value(&p).map_err(|e| format!("inbound {label}: {e}"))?;
            self.write_event(ctx, &ev)?;
            if let Some((topic, ty, fr)) = typed {
                if let Ok(bytes) = msgs::encode(&ty, &p, &fr, ctx.sim_time()) {
                    let c = self.channel(&topic, &ty)?;
                    self.write(c, ctx.sim_time(), &bytes)?;
                }
            }
        }
        Ok(())
    }

    fn label(&self, id: EndpointId) -> String {
        self.ins.get(&id).map(|x| x.0.clone()).unwrap_or_else(|| format!("#{id}"))
    }

    fn write_event(&mut self, ctx: &SimContext, ev: &serde_json::Value) -> Result<(), String> {
        let mut w = crate::record::cdr::CdrWriter::new();
        w.string(&ev.to_string());
        self.write(self.inbound_channel, ctx.sim_time(), &w.finish())
    }

    fn write_clock(&mut self, now: f64) -> Result<(), String> {
        let c = self.cached(|r| &mut r.clock_channel, "/clock", "rosgraph_msgs/msg/Clock")?;
        if let Some(g) = self.clock.as_mut() {
            g.sent(now);
        }
        self.write(c, now, &msgs::encode_clock(now))
    }

    fn finish_file(&mut self, ctx: &mut SimContext) -> Result<(), String> {
        if !self.sink.is_open() {
            return Ok(());
        }
        // Requests applied after the last step (while paused, before the end): logged at the
        // final step, where a replay applies them after its last step.
        self.log_inbound(ctx)?;
        if self.clock.as_ref().is_some_and(|g| g.at_end(ctx.sim_time())) {
            self.write_clock(ctx.sim_time())?;
        }
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        // Topics with messages only (a channel nobody wrote to, such as an unused inbound log,
        // is not counted).
        for (topic, n) in self.counts.iter().filter(|(t, n)| !t.is_empty() && *n > 0) {
            *counts.entry(topic.clone()).or_insert(0) += n;
        }
        let total: u64 = counts.values().sum();
        let meta = BTreeMap::from([
            ("finished".to_string(), "true".to_string()),
            ("steps".to_string(), self.step.to_string()),
            ("episode".to_string(), ctx.episode.to_string()),
            ("end_time".to_string(), format!("{:e}", ctx.sim_time())),
            ("message_counts".to_string(), serde_json::to_string(&counts).unwrap_or_default()),
        ]);
        let mut inner = self.sink.finish(Metadata { name: SUMMARY.into(), metadata: meta })?;
        std::io::Write::flush(&mut inner).map_err(|e| format!("recording: {e}"))?;
        tracing::info!(
            "recording {} finalised: {} steps, {} messages",
            self.opts.path.display(),
            self.step,
            total
        );
        Ok(())
    }
}

impl Observer for Recorder {
    fn after_step(&mut self, ctx: &mut SimContext) -> Result<(), String> {
        self.log_inbound(ctx)?;
        self.step += 1;
        let tick = ctx.tick;
        let now = ctx.sim_time();
        let mut tf = Vec::new();
        for i in 0..self.outs.len() {
            let o = &self.outs[i];
            let Some((p, t)) = ctx.interface.get(o.id).latest() else { continue };
            if t != tick || o.every.is_some_and(|k| t % k != 0) {
                continue;
            }
            let projected;
            let msg = match &o.field {
                Some(f) => {
                    projected = crate::ros::field::project(p, f)?;
                    &projected
                }
                None => p,
            };
            let all = msgs::encode_all(&o.msg_type, msg, &o.frames, now)
                .map_err(|e| format!("recording {}: {e}", o.topic))?;
            if let Payload::Odometry(od) = p {
                if od.publish_tf {
                    for (tr, at) in msgs::transforms_of(p, now).unwrap_or_default() {
                        tf.push((tr, at, o.frames.clone()));
                    }
                }
            }
            let c = o.channel;
            let stamp = payload_stamp(p).unwrap_or(now);
            for bytes in all {
                self.write(c, stamp, &bytes)?;
            }
        }
        for i in 0..self.merged.len() {
            let m = &mut self.merged[i];
            for (k, &id) in m.members.iter().enumerate() {
                if let Some((Payload::JointState(js), t)) = ctx.interface.get(id).latest() {
                    if t == tick {
                        m.latest[k] = Some(js.clone());
                        m.fresh = true;
                    }
                }
            }
            if m.fresh && tick % m.every == 0 {
                m.fresh = false;
                let bytes = msgs::encode_merged_joint_states(&m.latest, now);
                let c = m.channel;
                self.write(c, now, &bytes)?;
            }
        }
        let mut static_changed = false;
        for (id, route, fr) in &self.tfs {
            let Some((p, t)) = ctx.interface.get(*id).latest() else { continue };
            if t != tick {
                continue;
            }
            for (tr, at) in msgs::transforms_of(p, now).unwrap_or_default() {
                match route {
                    TfRoute::Dynamic => tf.push((tr, at, fr.clone())),
                    TfRoute::Static => {
                        let child = fr.name(&tr.child);
                        let same = self.statics.get(&child).is_some_and(|(o, _, _)| *o == tr);
                        if !same {
                            self.statics.insert(child, (tr, at, fr.clone()));
                            static_changed = true;
                        }
                    }
                }
            }
        }
        if !tf.is_empty() && self.keep_tf {
            let topic = self.tf_topic.clone();
            let c = self.cached(|r| &mut r.tf_channel, &topic, TF_TYPE)?;
            self.write(c, now, &msgs::encode_tf(&tf))?;
        }
        if static_changed && self.opts.topics.keeps(&self.tf_static_topic) {
            let topic = self.tf_static_topic.clone();
            let all: Vec<_> = self.statics.values().cloned().collect();
            let c = self.cached(|r| &mut r.tf_static_channel, &topic, TF_TYPE)?;
            self.write(c, now, &msgs::encode_tf(&all))?;
        }
        if self.clock.as_mut().is_some_and(|g| g.after_step(ctx)) {
            self.write_clock(now)?;
        }
        if self.step % self.every == 0 {
            let s = StateSample::capture(ctx, self.step);
            self.write(self.state_channel, s.time, &s.encode())?;
        }
        self.sink.end_step()
    }

    fn before_reset(
        &mut self,
        ctx: &mut SimContext,
        scope: Option<ResetScope>,
    ) -> Result<(), String> {
        self.log_inbound(ctx)?;
        // The bridge forgets the merged members' states at a reset.
        for m in &mut self.merged {
            m.latest.iter_mut().for_each(|l| *l = None);
            m.fresh = false;
        }
        let reset = scope.map(|s| json!({"time": s.time, "state": s.state, "spawned": s.spawned}));
        let ev = json!({"step": self.step, "tick": ctx.tick, "episode": ctx.episode,
            "reset": reset.unwrap_or(json!("full"))});
        self.write_event(ctx, &ev)?;
        self.sink.end_step()
    }

    fn finish(&mut self, ctx: &mut SimContext) -> Result<(), String> {
        self.finish_file(ctx)
    }

    fn after_reset(&mut self, ctx: &mut SimContext) -> Result<(), String> {
        if self.clock.as_ref().is_some_and(ClockGate::at_reset) {
            self.write_clock(ctx.sim_time())?;
        }
        self.sink.end_step()
    }

    fn idle(&mut self, ctx: &mut SimContext) -> Result<(), String> {
        if self.clock.as_mut().is_some_and(|g| g.on_pause(ctx.sim_time())) {
            self.write_clock(ctx.sim_time())?;
            self.sink.end_step()?;
        }
        Ok(())
    }
}

/// The endpoints' rate rows, each with the ROS topic it publishes on (several endpoints may
/// share a name).
fn endpoint_rate_rows(ctx: &SimContext, plan: &plan::Plan) -> Vec<serde_json::Value> {
    let out_topic: BTreeMap<usize, &String> =
        plan.outputs.iter().map(|o| (o.id, &o.topic)).collect();
    ctx.interface
        .rate_table()
        .into_iter()
        .map(|r| {
            let topic = r.endpoint.and_then(|id| out_topic.get(&id));
            json!({"name": r.name, "topic": topic, "requested_hz": r.requested_hz,
                "realised_hz": r.realised_hz, "every_steps": r.every_steps})
        })
        .collect()
}

/// Every robot's resolved actuator table, rendered (`actuator_tables`).
fn actuator_tables(ctx: &SimContext) -> BTreeMap<String, String> {
    let mut tables = BTreeMap::new();
    for k in ctx.blackboard.keys().filter(|k| k.starts_with("actuator_table:")) {
        if let Ok(t) = ctx.blackboard.get::<crate::spawn::actuators::ActuatorTable>(k) {
            tables.insert(t.entity.clone(), t.render());
        }
    }
    tables
}

/// Every actuator of the compiled model as it ran: name, gain and bias laws with their first
/// three parameters, ctrl and force ranges (limited or not).
fn compiled_actuators(m: &mujoco_rs::prelude::MjModel) -> serde_json::Value {
    use mujoco_rs::prelude::MjtObjBase;
    let n = m.ffi().nu as usize;
    let rows: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            json!({
                "name": m.id_to_name(MjtObjBase::mjOBJ_ACTUATOR, i).unwrap_or(""),
                "gaintype": m.actuator_gaintype()[i] as i32,
                "gainprm": &m.actuator_gainprm()[i][..3],
                "biastype": m.actuator_biastype()[i] as i32,
                "biasprm": &m.actuator_biasprm()[i][..3],
                "ctrlrange": m.actuator_ctrlrange()[i],
                "ctrllimited": m.actuator_ctrllimited()[i],
                "forcerange": m.actuator_forcerange()[i],
                "forcelimited": m.actuator_forcelimited()[i],
            })
        })
        .collect();
    serde_json::Value::Array(rows)
}

fn payload_stamp(p: &Payload) -> Option<f64> {
    Some(match p {
        Payload::Odometry(o) => o.stamp,
        Payload::LaserScan(s) => s.stamp,
        Payload::Imu(s) => s.stamp,
        Payload::JointState(s) => s.stamp,
        Payload::PoseTwist(s) => s.stamp,
        Payload::Wrench(s) => s.stamp,
        Payload::EnergyReport(s) => s.stamp,
        Payload::Range(s) => s.stamp,
        Payload::NavSatFix(s) => s.stamp,
        Payload::TwistCov(s) => s.stamp,
        Payload::ContactLocation(s) => s.time,
        _ => return None,
    })
}

/// The hidden sibling a recording is written to until its engine is built
/// (`dir/.name.partial-PID`).
fn partial_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.partial-{}", std::process::id()))
}

impl Drop for Recorder {
    /// Never attached (the world failed to build): the partial file goes, the output stays.
    fn drop(&mut self) {
        if let Some(tmp) = self.partial.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}
