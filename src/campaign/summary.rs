//! `roqsim sim --summary FILE.json`: a machine-readable end-of-run summary, the one thing a
//! campaign reads back from a trial.
//!
//! One JSON object, written after the run loop ends (also when the run failed):
//! - `reason`: why the loop ended (`steps`, `seconds`, `stop requested: ...`, `interrupted`), or
//!   null when the run failed; `stop_reason`: a plugin's `request_stop` reason, else null;
//!   `error`: the run's error text, else null;
//! - `steps`, `sim_time` (s), `seed`, `episode`;
//! - `poses`: every entity's world pose (`position` m, `orientation` `[x, y, z, w]`);
//! - `monitors`: the last report of every monitor endpoint (contact, clearance, upright, energy)
//!   by endpoint address;
//! - `endpoints`: the last value of each endpoint named with `--summary-endpoint`.
//!
//! An endpoint's address is its topic as a ROS 2 bridge without a namespace of its own publishes
//! it (`/scan`, `/robot1/odom`); the first endpoint of a topic answers for it.
//! Values are the neutral payloads as JSON (a non-finite number is `null`); an endpoint that never
//! published has `null`. Wall time is not in it: the file is a function of world, seed and
//! inputs, bitwise.

use std::path::Path;

use serde_json::{json, Map, Value as Json};

use crate::context::interface::{Direction, Endpoint};
use crate::context::payload::Payload;
use crate::context::SimContext;
use crate::runner::Summary;

/// The address a campaign and `--summary-endpoint` name an endpoint by: the topic a ROS 2
/// bridge without a namespace of its own would publish it on (`/scan`, `/robot1/odom`).
pub fn endpoint_address(ep: &Endpoint) -> String {
    crate::ros::names::resolve_topic("", &ep.namespace, &ep.name, ep.get_hint("ros2", "topic"))
}

/// Every outbound endpoint's address, in registration order, each once.
pub fn out_addresses(ctx: &SimContext) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for ep in ctx.interface.all().iter().filter(|e| e.direction == Direction::Out) {
        let a = endpoint_address(ep);
        if !out.contains(&a) {
            out.push(a);
        }
    }
    out
}

/// Refuse an endpoint address that names no outbound endpoint, listing those that exist.
pub fn check_endpoints(ctx: &SimContext, wanted: &[String]) -> Result<(), String> {
    let have = out_addresses(ctx);
    for w in wanted {
        if !have.contains(w) {
            return Err(format!(
                "endpoint `{}` is not an outbound endpoint of this world; the addresses that exist are: {}",
                crate::error::clip(w),
                have.join(", ")
            ));
        }
    }
    Ok(())
}

fn is_monitor(p: &Payload) -> bool {
    matches!(
        p,
        Payload::ContactReport(_)
            | Payload::ClearanceReport(_)
            | Payload::ContactImpulseReport(_)
            | Payload::ContactLocation(_)
            | Payload::EnergyReport(_)
            | Payload::UprightReport(_)
            | Payload::LimitReport(_)
    )
}

/// A payload as JSON without its variant tag, with the variant beside it.
fn payload_json(p: &Payload) -> Json {
    let v = serde_json::to_value(p).unwrap_or(Json::Null);
    let inner = match v {
        Json::Object(m) if m.len() == 1 => m.into_iter().next().map(|(_, v)| v).unwrap_or_default(),
        other => other,
    };
    json!({"kind": p.kind(), "value": inner})
}

/// The summary of a run that ended with `run` (its error text on failure).
pub fn summary_json(ctx: &SimContext, run: Result<&Summary, String>, endpoints: &[String]) -> Json {
    let mut poses = Map::new();
    for name in ctx.entities.names() {
        if let Ok(s) = crate::engine::sim_control::entity_state(ctx, &name) {
            poses.insert(name, json!({"position": s.position, "orientation": s.orientation}));
        }
    }
    let mut monitors = Map::new();
    let mut chosen = Map::new();
    for w in endpoints {
        chosen.insert(w.clone(), Json::Null);
    }
    for ep in ctx.interface.all().iter().filter(|e| e.direction == Direction::Out) {
        let addr = endpoint_address(ep);
        let latest = ep.latest().map(|(p, _)| p);
        if let Some(p) = latest.filter(|p| is_monitor(p)) {
            monitors.insert(addr.clone(), payload_json(p));
        }
        if let (Some(slot @ Json::Null), Some(p)) = (chosen.get_mut(&addr), latest) {
            *slot = payload_json(p);
        }
    }
    let (reason, error, steps) = match &run {
        Ok(s) => (Json::from(s.reason.clone()), Json::Null, Json::from(s.steps)),
        Err(e) => (Json::Null, Json::from(e.clone()), Json::from(ctx.tick)),
    };
    json!({
        "reason": reason,
        "stop_reason": ctx.stop_requested(),
        "error": error,
        "steps": steps,
        "sim_time": ctx.data().time(),
        "seed": ctx.seed(),
        "episode": ctx.episode,
        "poses": poses,
        "monitors": monitors,
        "endpoints": chosen,
    })
}

/// Refuse a `--summary` path the run could not write at its end, before the run starts: a
/// folder, a file that cannot be opened for writing, or a new file that cannot be created
/// (the probe is removed again; an existing file is left as it is until the run ends).
pub fn check_writable(path: &Path) -> Result<(), String> {
    let refuse = |why: String| {
        Err(format!(
            "--summary {}: cannot write the summary there ({why}): name a file in a folder that \
             exists and is writable",
            path.display()
        ))
    };
    if path.is_dir() {
        return refuse("it is a folder".into());
    }
    if path.exists() {
        return match std::fs::OpenOptions::new().write(true).open(path) {
            Ok(_) => Ok(()),
            Err(e) => refuse(e.to_string()),
        };
    }
    match std::fs::OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(_) => {
            let _ = std::fs::remove_file(path);
            Ok(())
        }
        Err(e) => refuse(e.to_string()),
    }
}

/// Write the summary to `path` (pretty JSON, one trailing newline).
pub fn write_summary(path: &Path, summary: &Json) -> Result<(), String> {
    let text = serde_json::to_string_pretty(summary).map_err(|e| e.to_string())?;
    std::fs::write(path, text + "\n").map_err(|e| format!("--summary {}: {e}", path.display()))
}
