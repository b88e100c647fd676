//! Reopening a recording: refusals (not MCAP, truncated, not a roqsim recording, a newer
//! format), the world rebuilt from the provenance alone, the recorded inbound commands applied
//! again before the steps they were applied before, and a bitwise comparison of every state
//! sample (`roqsim replay --verify`), or the sample nearest a time (`roqsim state`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mcap::records::Record;
use serde_json::Value as Json;

use crate::context::payload::Payload;
use crate::context::tap::WorldCommand;
use crate::context::{Direction, ResetScope};
use crate::engine::{Engine, EngineOptions};
use crate::handles::controllers::command::ControllerCommand;
use crate::record::provenance::{self, FORMAT_VERSION, PROVENANCE, SUMMARY};
use crate::record::recorder::{INBOUND_TOPIC, STATE_TOPIC};
use crate::record::state::{Divergence, StateSample};
use crate::world::LoadOptions;

const MAGIC: &[u8] = b"\x89MCAP0\r\n";

/// One recorded inbound event.
#[derive(Debug, Clone)]
pub enum Event {
    /// A payload delivered to an inbound endpoint.
    Deliver {
        /// Endpoint label (`namespace/name`).
        endpoint: String,
        /// Its index at record time.
        endpoint_id: usize,
        /// What was delivered.
        payload: Box<Payload>,
    },
    /// A cancel of the `goal`-th action goal of the recording (delivered to `endpoint`).
    Cancel {
        /// Endpoint label (`namespace/name`).
        endpoint: String,
        /// The goal's index among the recording's goals.
        goal: usize,
    },
    /// A world command (SpawnEntity, DeleteEntity, SetEntityState).
    World(WorldCommand),
    /// A controller manager request to the robot `entity`'s manager.
    Controller {
        /// The robot (entity).
        entity: String,
        /// The request.
        command: ControllerCommand,
    },
    /// A reset (`None` = a full `Engine::reset`).
    Reset(Option<ResetScope>),
}

/// A recording read into memory.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The provenance metadata.
    pub provenance: BTreeMap<String, String>,
    /// The summary metadata (present when the file was finalised by the recorder).
    pub summary: Option<BTreeMap<String, String>>,
    /// State samples in file order.
    pub states: Vec<StateSample>,
    /// Inbound events: (steps completed before it applied, event), in order.
    pub events: Vec<(u64, Event)>,
    /// Messages per topic.
    pub counts: BTreeMap<String, u64>,
}

fn err(path: &Path, m: impl std::fmt::Display) -> String {
    format!("{}: {m}", path.display())
}

/// Read and check a recording.
pub fn open(path: &Path) -> Result<Recording, String> {
    // A FIFO or a device named `x.mcap` is refused, not read (it would never end).
    let mcap = crate::input_file::Expect { file: "an MCAP recording", cap: u64::MAX };
    let buf = crate::input_file::read(path, "recording", mcap)?;
    if buf.len() < MAGIC.len() || &buf[..MAGIC.len()] != MAGIC {
        return Err(err(path, "not an MCAP file (it does not start with the MCAP magic bytes)"));
    }
    if mcap::read::footer(&buf).is_err() || &buf[buf.len() - MAGIC.len()..] != MAGIC {
        if let Some(end) = data_end(&buf) {
            return Err(err(
                path,
                format!(
                    "{} bytes follow the end of the MCAP data (its closing magic ends at byte {end}): \
                     something was appended to the file after it was written. The recording itself \
                     is intact: cut the file to {end} bytes (`truncate -s {end} FILE`) to read it",
                    buf.len() - end
                ),
            ));
        }
        return Err(err(
            path,
            "truncated: the MCAP file has no footer (the recording was not finalised: the process \
             was killed or the disk filled). Its chunks up to the cut are readable by MCAP tools in \
             recovery mode, but a replay needs the whole run",
        ));
    }
    crate::record::integrity::check(&buf).map_err(|e| err(path, e))?;
    let mut provenance = None;
    let mut summary = None;
    for rec in mcap::read::LinearReader::new(&buf).map_err(|e| err(path, e))? {
        if let Record::Metadata(m) = rec.map_err(|e| err(path, format!("corrupt record: {e}")))? {
            match m.name.as_str() {
                PROVENANCE => provenance = Some(m.metadata),
                SUMMARY => summary = Some(m.metadata),
                _ => {}
            }
        }
    }
    let provenance = provenance.ok_or_else(|| {
        err(path, format!("an MCAP file without `{PROVENANCE}` metadata: not a roqsim recording"))
    })?;
    let version: u32 = provenance
        .get("format_version")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| err(path, "provenance without a readable format_version"))?;
    if version > FORMAT_VERSION {
        return Err(err(
            path,
            format!(
                "recorded with format_version {version}; this roqsim reads format_version {FORMAT_VERSION} \
                 and older: replay it with a newer roqsim"
            ),
        ));
    }
    let mut states = Vec::new();
    let mut events = Vec::new();
    let mut counts = BTreeMap::new();
    for m in mcap::MessageStream::new(&buf).map_err(|e| err(path, e))? {
        let m = m.map_err(|e| err(path, format!("corrupt message: {e}")))?;
        let topic = m.channel.topic.as_str();
        *counts.entry(topic.to_string()).or_insert(0) += 1;
        match topic {
            STATE_TOPIC => states.push(StateSample::decode(&m.data).map_err(|e| err(path, e))?),
            INBOUND_TOPIC => {
                let n = events.len() + 1;
                let what = |e: String| err(path, format!("inbound event {n}: {e}"));
                let v = inbound_json(&m.channel.message_encoding, &m.data).map_err(what)?;
                let (step, ev) = parse_event(&v).map_err(what)?;
                if let Some((before, _)) = events.last() {
                    if step < *before {
                        return Err(what(format!(
                            "logged at step {step}, after an event of step {before}: the inbound \
                             log is out of order (edited?)"
                        )));
                    }
                }
                events.push((step, ev));
            }
            _ => {}
        }
    }
    Ok(Recording { provenance, summary, states, events, counts })
}

/// One inbound event's JSON: the `data` of a `std_msgs/msg/String` in CDR (format_version 2 on),
/// or the message itself (`json`, format_version 1).
fn inbound_json(encoding: &str, data: &[u8]) -> Result<Json, String> {
    let text = match encoding {
        "json" => std::borrow::Cow::Borrowed(data),
        "cdr" => {
            let s = crate::record::cdr::CdrReader::new(data)?.string()?;
            std::borrow::Cow::Owned(s.into_bytes())
        }
        other => return Err(format!("message encoding `{other}` (expected cdr)")),
    };
    serde_json::from_slice(&text).map_err(|e| e.to_string())
}

/// Where a complete MCAP file ends inside `buf`, when bytes follow it: the last closing magic
/// whose footer reads, past the opening magic. `None` when there is none (a truncated file).
fn data_end(buf: &[u8]) -> Option<usize> {
    let mut end = buf.len();
    while end > 2 * MAGIC.len() {
        let at = buf[MAGIC.len()..end].windows(MAGIC.len()).rposition(|w| w == MAGIC)?;
        let stop = MAGIC.len() + at + MAGIC.len();
        if stop < buf.len() && mcap::read::footer(&buf[..stop]).is_ok() {
            return Some(stop);
        }
        end = MAGIC.len() + at + MAGIC.len() - 1;
    }
    None
}

fn parse_event(v: &Json) -> Result<(u64, Event), String> {
    let step = v.get("step").and_then(Json::as_u64).ok_or("no step")?;
    if let Some(r) = v.get("reset") {
        let scope = match r {
            Json::String(s) if s == "full" => None,
            Json::Object(_) => {
                let b = |k: &str| r.get(k).and_then(Json::as_bool).unwrap_or(false);
                Some(ResetScope { time: b("time"), state: b("state"), spawned: b("spawned") })
            }
            other => return Err(format!("unknown reset {other}")),
        };
        return Ok((step, Event::Reset(scope)));
    }
    if let Some(w) = v.get("world") {
        let cmd: WorldCommand =
            serde_json::from_value(w.clone()).map_err(|e| format!("world command: {e}"))?;
        return Ok((step, Event::World(cmd)));
    }
    if let Some(c) = v.get("controller") {
        let entity =
            v.get("entity").and_then(Json::as_str).ok_or("controller request without entity")?;
        let command: ControllerCommand =
            serde_json::from_value(c.clone()).map_err(|e| format!("controller request: {e}"))?;
        return Ok((step, Event::Controller { entity: entity.to_string(), command }));
    }
    let endpoint = v.get("endpoint").and_then(Json::as_str).ok_or("no endpoint")?.to_string();
    if let Some(g) = v.get("cancel") {
        let goal = g.as_u64().ok_or("cancel is not a goal index")? as usize;
        return Ok((step, Event::Cancel { endpoint, goal }));
    }
    let endpoint_id = v.get("endpoint_id").and_then(Json::as_u64).ok_or("no endpoint_id")? as usize;
    let payload: Payload = serde_json::from_value(v.get("payload").cloned().unwrap_or(Json::Null))
        .map_err(|e| format!("payload of {endpoint}: {e}"))?;
    Ok((step, Event::Deliver { endpoint, endpoint_id, payload: Box::new(payload) }))
}

/// Rebuild the recorded world from the provenance alone (the world YAML text and the text of
/// every parent world it extends as recorded, the override assignments, the seed); transport
/// plugins are dropped (a replay talks to nobody).
/// Returns the engine and notes on inputs that changed on disk since the recording.
pub fn rebuild(rec: &Recording) -> Result<(Engine, Vec<String>), String> {
    rebuild_with(rec, Vec::new())
}

/// [`rebuild`] with `extra` assignments after the recorded ones (`roqsim render FILE --view`:
/// the camera only, never the physics).
pub fn rebuild_with(
    rec: &Recording,
    extra: Vec<crate::world::overrides::Assignment>,
) -> Result<(Engine, Vec<String>), String> {
    let p = &rec.provenance;
    let get = |k: &str| p.get(k).ok_or_else(|| format!("provenance lacks `{k}`"));
    let yaml = get("world_yaml")?;
    let base_dir = PathBuf::from(get("base_dir")?);
    let mut assignments = provenance::assignments_from_yaml(get("overrides")?)?;
    assignments.extend(extra);
    let seed: u64 = get("seed")?.parse().map_err(|e| format!("provenance seed: {e}"))?;
    let opts = LoadOptions { assignments, no_communication: true, ..Default::default() };
    // Recordings before `world_chain` read their parents from disk.
    let chain = match p.get("world_chain") {
        Some(c) => Some(provenance::chain_from_json(c)?),
        None => None,
    };
    let loaded = match &chain {
        Some(c) => {
            let parents: Vec<_> = c.iter().map(|(_, t)| t.clone()).collect();
            crate::world::load_world_recorded(yaml, &base_dir, &parents, &opts)
        }
        None => crate::world::load_world_str(yaml, &base_dir, &opts),
    };
    let mut world = loaded.map_err(|e| format!("the recorded world no longer loads:\n{e}"))?;
    world.warnings.clear();
    let mut notes = Vec::new();
    let recorded: BTreeMap<String, String> =
        serde_json::from_str(get("input_hashes")?).map_err(|e| format!("input_hashes: {e}"))?;
    let world_path = get("world_path")?.clone();
    // The world file's key among the hashes (recordings before it had only `world_path`), and
    // the keys of the parent worlds whose text the recording holds.
    let world_input = p.get("world_input").cloned().unwrap_or_default();
    let parent_inputs: Vec<&str> = chain.iter().flatten().map(|(k, _)| k.as_str()).collect();
    // The override files' keys (recordings before `override_inputs`: the files the recorded
    // assignments name as their source).
    let override_inputs: Vec<String> = match p.get("override_inputs") {
        Some(o) => serde_json::from_str(o).map_err(|e| format!("override_inputs: {e}"))?,
        None => opts
            .assignments
            .iter()
            .filter_map(|a| a.source.strip_prefix("--override "))
            .map(|f| Path::new(f).canonicalize().map_or(f.to_string(), |c| c.display().to_string()))
            .collect(),
    };
    // A recording lists the files the world was read from; one that is now a directory or a
    // device (a provenance edited by hand to name /dev/zero) would be read forever or fail.
    for file in recorded.keys().filter(|f| !f.starts_with("package://")) {
        provenance::not_a_file(Path::new(file))
            .map_err(|e| format!("provenance `input_hashes` names {file}: {e}"))?;
    }
    for (file, h) in &recorded {
        let now = provenance::hash_input(file);
        if &now != h {
            let is_world = *file == world_input
                || Path::new(file) == Path::new(&world_path)
                || Path::new(&world_path).canonicalize().ok().as_deref() == Some(Path::new(file));
            // A file that is no longer there (a packaged key is looked up, not tested here).
            let gone = !file.starts_with("package://") && !Path::new(file).exists();
            let what = if gone {
                "is gone since the recording"
            } else {
                "changed on disk since the recording"
            };
            notes.push(if is_world || parent_inputs.contains(&file.as_str()) {
                format!("{file} {what}; the recorded text is used")
            } else if override_inputs.contains(file) {
                format!("{file} {what}; the file is not read: the assignments recorded from it (provenance `overrides`) are applied")
            } else {
                format!("{file} changed on disk since the recording ({h} then, {now} now): the replay builds from the file as it is now")
            });
        }
    }
    let engine = Engine::new(world, EngineOptions { profile: false, seed: Some(seed) })
        .map_err(|e| format!("the recorded world does not build: {e}"))?;
    Ok((engine, notes))
}

/// What a replay found.
#[derive(Debug, Clone)]
pub struct ReplayReport {
    /// Steps re-run.
    pub steps: u64,
    /// State samples compared (with verify).
    pub compared: usize,
    /// Inbound events applied.
    pub events: usize,
    /// The first divergence: (step, tick, episode, time, where).
    pub divergence: Option<(u64, u64, u32, f64, Divergence)>,
    /// Notes on changed inputs.
    pub notes: Vec<String>,
    /// Whether the state samples were compared (`--verify`).
    pub verified: bool,
}

impl std::fmt::Display for ReplayReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.divergence {
            Some((step, tick, ep, t, d)) => write!(
                f,
                "replay diverged at step {step} (tick {tick}, episode {ep}, time {} s): {}[{}] recorded {}, replayed {}",
                secs(*t), d.field, d.index, d.recorded, d.replayed
            ),
            None if !self.verified => write!(
                f,
                "replay ok: {} steps, {} inbound events applied (states not compared: --verify compares them bitwise)",
                self.steps, self.events
            ),
            None => write!(
                f,
                "replay ok: {} steps, {} inbound events applied, {} state samples bitwise identical",
                self.steps, self.events, self.compared
            ),
        }
    }
}

fn resolve_endpoint(engine: &Engine, label: &str, id: usize) -> Result<usize, String> {
    let all = engine.ctx.interface.all();
    let matches = |i: usize| {
        all.get(i)
            .is_some_and(|e| e.direction == Direction::In && crate::ros::plan::label(e) == label)
    };
    if matches(id) {
        return Ok(id);
    }
    (0..all.len())
        .find(|&i| matches(i))
        .ok_or_else(|| format!("the rebuilt world has no inbound endpoint `{label}`"))
}

/// Re-run a recording. With `verify`, compare every state sample bitwise and stop at the first
/// divergence. `until` bounds the run time (s, steps × timestep since the start).
pub fn replay(rec: &Recording, verify: bool, until: Option<f64>) -> Result<ReplayReport, String> {
    if rec.states.is_empty() {
        return Err(format!(
            "the recording holds no state samples (no message on `{STATE_TOPIC}`): there is \
             nothing to re-run against or compare (a roqsim recording holds at least the sample \
             of step 0)"
        ));
    }
    let (mut engine, notes) = rebuild(rec)?;
    let dt = engine.dt();
    let last = rec.states.last().map(|s| s.step).unwrap_or(0);
    let recorded_steps = rec
        .summary
        .as_ref()
        .and_then(|s| s.get("steps"))
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(last);
    let steps = match until {
        Some(t) => recorded_steps.min((t / dt).round() as u64),
        None => recorded_steps,
    };
    let mut samples = rec.states.iter().peekable();
    let mut report = ReplayReport {
        steps: 0,
        compared: 0,
        events: 0,
        divergence: None,
        notes,
        verified: verify,
    };
    let mut events = rec.events.iter().peekable();
    // Cancel flags of the goals delivered so far, in order (a cancel names its goal's index).
    let mut goals: Vec<std::sync::Arc<std::sync::atomic::AtomicBool>> = Vec::new();
    let mut compare = |engine: &Engine, step: u64, report: &mut ReplayReport| {
        while let Some(s) = samples.peek() {
            if s.step < step {
                samples.next();
                continue;
            }
            if s.step == step {
                let now = StateSample::capture(&engine.ctx, step);
                report.compared += 1;
                if let Some(d) = s.first_divergence(&now) {
                    report.divergence = Some((step, s.tick, s.episode, s.time, d));
                }
                samples.next();
            }
            break;
        }
    };
    if verify {
        compare(&engine, 0, &mut report);
    }
    for step in 0..steps {
        if report.divergence.is_some() {
            break;
        }
        while let Some((at, ev)) = events.next_if(|(at, _)| *at == step) {
            apply_event(&mut engine, *at, ev, &mut goals)?;
            report.events += 1;
        }
        engine.step().map_err(|e| format!("replay step {}: {e}", step + 1))?;
        report.steps += 1;
        if verify {
            compare(&engine, step + 1, &mut report);
        }
    }
    if until.is_none() && report.divergence.is_none() {
        // Requests applied after the last step (while paused, before the end) change no
        // recorded sample; they are applied all the same, and nothing may be left over.
        while let Some((at, ev)) = events.next_if(|(at, _)| *at == steps) {
            apply_event(&mut engine, *at, ev, &mut goals)?;
            report.events += 1;
        }
        // (A file cut short by a killed run has no summary; its log may run past its last sample.)
        if let Some((at, _)) = events.peek().filter(|_| rec.summary.is_some()) {
            let left = events.len();
            engine.shutdown();
            let were = if left == 1 { "event was" } else { "events were" };
            return Err(format!(
                "{left} inbound {were} not applied: the first is logged at step {at}, past the \
                 recording's {steps} steps (edited log?)"
            ));
        }
    }
    engine.shutdown();
    Ok(report)
}

/// Apply one recorded event to the rebuilt engine, as the run applied it before step `at + 1`.
fn apply_event(
    engine: &mut Engine,
    at: u64,
    ev: &Event,
    goals: &mut Vec<std::sync::Arc<std::sync::atomic::AtomicBool>>,
) -> Result<(), String> {
    match ev {
        Event::Deliver { endpoint, endpoint_id, payload } => {
            let id = resolve_endpoint(engine, endpoint, *endpoint_id)?;
            let p = payload.as_ref().clone();
            if let Payload::Goal(call) = &p {
                goals.push(call.cancel.clone());
            }
            engine.ctx.interface.deliver(id, p);
        }
        Event::Cancel { endpoint, goal } => {
            let flag = goals.get(*goal).ok_or_else(|| {
                format!("a cancel of goal {goal} on `{endpoint}`, but only {} goals were delivered before it", goals.len())
            })?;
            crate::context::tap::raise(flag);
        }
        Event::World(cmd) => {
            // Refused commands replay as refused: the same call, the same outcome.
            let _ = crate::engine::sim_control::apply(&mut engine.ctx, cmd);
        }
        Event::Controller { entity, command } => {
            // A request reaches the log only for a robot with a controller registry.
            if crate::handles::controllers::Registry::get(&engine.ctx, entity).is_none() {
                return Err(format!(
                    "a controller_manager request at step {at} for robot `{entity}`, \
                     which has no controllers in the rebuilt world (edited log?)"
                ));
            }
            // Refused requests replay as refused, as world commands do.
            let _ = crate::handles::controllers::command::apply(&mut engine.ctx, entity, command);
        }
        Event::Reset(None) => engine.reset().map_err(|e| e.to_string())?,
        Event::Reset(Some(scope)) => engine.reset_scoped(*scope).map_err(|e| e.to_string())?,
    }
    Ok(())
}

/// The recording's sim time range, (earliest, latest) sample time (s); resets restart the clock,
/// so these are the extremes, not the first and last sample.
pub fn time_range(rec: &Recording) -> Option<(f64, f64)> {
    let mut it = rec.states.iter().map(|s| s.time);
    let first = it.next()?;
    Some(it.fold((first, first), |(lo, hi), t| (lo.min(t), hi.max(t))))
}

/// Half the spacing of the state samples (s): a time that close past either end of the range
/// still has its nearest sample (the sample times add up the timestep, so the last one of a 1 s
/// run can be a hair off 1 s).
fn half_sample(rec: &Recording) -> f64 {
    let p = &rec.provenance;
    let every = p
        .get("record")
        .and_then(|r| serde_json::from_str::<Json>(r).ok())
        .and_then(|r| r.get("state_every_steps").and_then(Json::as_u64))
        .unwrap_or(1);
    let dt = p.get("timestep").and_then(|t| t.parse::<f64>().ok()).unwrap_or(0.0);
    every as f64 * dt / 2.0
}

/// A time as a message shows it: rounded to the nanosecond.
pub fn secs(t: f64) -> String {
    crate::error::num((t * 1e9).round() / 1e9)
}

/// The state sample nearest sim time `t` (the first of equally near ones). A time that is not a
/// number, or outside the recording's time range, is refused with the range.
pub fn state_at(rec: &Recording, t: f64) -> Result<&StateSample, String> {
    let (lo, hi) =
        time_range(rec).ok_or_else(|| "the recording holds no state samples".to_string())?;
    let slack = half_sample(rec);
    if !(t >= lo - slack && t <= hi + slack) {
        return Err(format!(
            "--at {}: the recording holds sim times {} s to {} s ({} state samples): give a time in that range",
            crate::error::num(t),
            secs(lo),
            secs(hi),
            rec.states.len()
        ));
    }
    let mut best: Option<&StateSample> = None;
    for s in &rec.states {
        if best.is_none_or(|b| (s.time - t).abs() < (b.time - t).abs()) {
            best = Some(s);
        }
    }
    best.ok_or_else(|| "the recording holds no state samples".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inbound_events_read_in_both_formats() {
        let ev = r#"{"step":3,"tick":3,"episode":0,"reset":"full"}"#;
        // format_version 2: std_msgs/String in CDR
        let mut w = crate::record::cdr::CdrWriter::new();
        w.string(ev);
        let v2 = inbound_json("cdr", &w.finish()).unwrap();
        // format_version 1: the JSON itself
        let v1 = inbound_json("json", ev.as_bytes()).unwrap();
        assert_eq!(v1, v2);
        assert!(matches!(parse_event(&v2), Ok((3, Event::Reset(None)))));
        assert_eq!(
            inbound_json("protobuf", ev.as_bytes()).unwrap_err(),
            "message encoding `protobuf` (expected cdr)"
        );
    }
}
