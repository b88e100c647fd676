//! The native subscriber of bench row 4: one r2r node in its own process with one subscription
//! per topic the simulator publishes, counting what arrives — the stand-in for a C++ consumer
//! (Nav2, MoveIt) in another process, so row 4 measures the simulator's transport and not a
//! Python interpreter competing for the same cores.
//!
//! ```text
//! bench_subscriber TOPICS.json
//! ```
//!
//! TOPICS.json is what `bench/ros_run.py discover` writes (`{"publishes": [{topic, type,
//! reliability, durability}, ...]}`). Every subscription takes the serialized message
//! (`subscribe_raw`: the rmw's CDR bytes, no conversion), with the publisher's reliability and
//! durability and depth 10. Prints `ready` once every subscription exists, spins until SIGINT or
//! SIGTERM, then prints one JSON object `{"received": {topic: count}, "unsubscribed": {topic:
//! why}}`.
//!
//! Counted as bench/ros_run.py's rclpy peer counts: a latched (transient local) message always;
//! otherwise a message whose sim-time stamp is not zero (the bridge re-publishes the t = 0
//! /clock while it waits for subscribers). The stamp is read from the CDR bytes at the offset
//! where the first message of the topic, deserialized once, says it is (a `Header` or `clock`
//! first: byte 4; a `transforms` sequence: byte 8); a message type with no stamp there is counted
//! whole.
//!
//! Needs the `ros` feature and a sourced ROS 2 environment; asserts nothing.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;
use futures::StreamExt;
use r2r::qos::{DurabilityPolicy, ReliabilityPolicy};
use r2r::QosProfile;

#[derive(serde::Deserialize)]
struct Topics {
    publishes: Vec<Topic>,
}

#[derive(serde::Deserialize)]
struct Topic {
    topic: String,
    #[serde(rename = "type")]
    type_name: String,
    reliability: String,
    durability: String,
}

/// Where a topic's sim-time stamp sits in its CDR bytes, learnt from its first message.
#[derive(Clone, Copy)]
enum Stamp {
    Unknown,
    At(usize),
    None,
}

/// (sec, nanosec) at byte `at` of a CDR buffer (4-byte encapsulation header first; byte 1 says
/// the endianness).
fn stamp_at(bytes: &[u8], at: usize) -> Option<(i32, u32)> {
    let b = bytes.get(at..at + 8)?;
    let little = bytes.get(1) == Some(&1);
    let w = |s: &[u8]| -> [u8; 4] { [s[0], s[1], s[2], s[3]] };
    Some(if little {
        (i32::from_le_bytes(w(&b[..4])), u32::from_le_bytes(w(&b[4..])))
    } else {
        (i32::from_be_bytes(w(&b[..4])), u32::from_be_bytes(w(&b[4..])))
    })
}

/// The stamp of a deserialized message, as the rclpy peer finds it.
fn json_stamp(v: &serde_json::Value) -> Option<((i32, u32), usize)> {
    let time = |t: &serde_json::Value| -> Option<(i32, u32)> {
        Some((t.get("sec")?.as_i64()? as i32, t.get("nanosec")?.as_u64()? as u32))
    };
    if let Some(c) = v.get("clock") {
        return Some((time(c)?, 4));
    }
    if let Some(h) = v.get("header") {
        return Some((time(h.get("stamp")?)?, 4));
    }
    let first = v.get("transforms")?.as_array()?.first()?;
    Some((time(first.get("header")?.get("stamp")?)?, 8))
}

/// Learn where `type_name`'s stamp sits from one message: the offset is kept only when the bytes
/// there equal the stamp the deserialized message carries.
fn learn(type_name: &str, bytes: &[u8]) -> Stamp {
    let Ok(mut msg) = r2r::WrappedNativeMsgUntyped::new_from(type_name) else {
        return Stamp::None;
    };
    if msg.from_serialized_bytes(bytes).is_err() {
        return Stamp::None;
    }
    let Ok(json) = msg.to_json() else {
        return Stamp::None;
    };
    match json_stamp(&json) {
        Some((st, at)) if stamp_at(bytes, at) == Some(st) => Stamp::At(at),
        _ => Stamp::None,
    }
}

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        eprintln!("usage: bench_subscriber TOPICS.json");
        std::process::exit(2)
    });
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let topics: Topics = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst)).expect("signal handler");
    }
    let ctx = r2r::Context::create().expect("r2r context");
    let mut node = r2r::Node::create(ctx, "bench_native_peer", "").expect("r2r node");
    let mut pool = LocalPool::new();
    let spawner = pool.spawner();
    let mut counts: Vec<(String, Rc<Cell<u64>>)> = Vec::new();
    let unsubscribed: Rc<RefCell<Vec<(String, String)>>> = Rc::default();
    for t in topics.publishes {
        let latched = t.durability == "transient_local";
        let qos = QosProfile::default()
            .keep_last(10)
            .reliability(if t.reliability == "best_effort" {
                ReliabilityPolicy::BestEffort
            } else {
                ReliabilityPolicy::Reliable
            })
            .durability(if latched {
                DurabilityPolicy::TransientLocal
            } else {
                DurabilityPolicy::Volatile
            });
        let mut stream = match node.subscribe_raw(&t.topic, &t.type_name, qos) {
            Ok(s) => s,
            Err(e) => {
                unsubscribed.borrow_mut().push((t.topic, format!("{e}")));
                continue;
            }
        };
        let n = Rc::new(Cell::new(0u64));
        counts.push((t.topic.clone(), n.clone()));
        let type_name = t.type_name;
        spawner
            .spawn_local(async move {
                let mut stamp = Stamp::Unknown;
                while let Some(bytes) = stream.next().await {
                    if let Stamp::Unknown = stamp {
                        stamp = learn(&type_name, &bytes);
                    }
                    let counted = match stamp {
                        _ if latched => true,
                        Stamp::At(at) => stamp_at(&bytes, at) != Some((0, 0)),
                        _ => true,
                    };
                    if counted {
                        n.set(n.get() + 1);
                    }
                }
            })
            .expect("spawn");
    }
    println!("ready");
    while !stop.load(Ordering::SeqCst) {
        node.spin_once(Duration::from_millis(20));
        pool.run_until_stalled();
    }
    let received: serde_json::Map<String, serde_json::Value> =
        counts.iter().map(|(t, n)| (t.clone(), n.get().into())).collect();
    let unsub: serde_json::Map<String, serde_json::Value> =
        unsubscribed.borrow().iter().map(|(t, e)| (t.clone(), e.clone().into())).collect();
    println!("{}", serde_json::json!({"received": received, "unsubscribed": unsub}));
}
