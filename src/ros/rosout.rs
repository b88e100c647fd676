//! roqsim's log lines on `/rosout` (rcl_interfaces/Log), so a tool's failure reason (a refused
//! `load_controller`, a bad service request) is visible on the graph (`ros2 topic echo /rosout`,
//! rqt_console), not only on stderr.
//!
//! A `tracing` layer ([`RosoutLayer`], installed by the binary next to its stderr formatter)
//! forwards every INFO/WARN/ERROR event to a `/rosout` publisher of the bridge node once the
//! bridge [`attach`]es one; the logger name is the node's, as rcl names it (`/sim/roqsim` →
//! `sim.roqsim`). Publishing straight from the layer (an r2r publisher may be used from any
//! thread) keeps stderr as it was: routing through rcutils would print every line twice.

use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use r2r::builtin_interfaces::msg::Time;
use r2r::rcl_interfaces::msg::Log;
use r2r::QosProfile;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

static SINK: Mutex<Option<(r2r::Publisher<Log>, String)>> = Mutex::new(None);

/// rcl's logger name of a node: its fully qualified name without the leading `/`, `/` → `.`.
pub fn logger_name(fq: &str) -> String {
    fq.trim_start_matches('/').replace('/', ".")
}

/// Start forwarding to `/rosout` from `node` (rcl's rosout QoS: reliable, transient local,
/// keep last 1000).
pub fn attach(node: &mut r2r::Node, fq: &str) -> Result<(), String> {
    let qos = QosProfile::default().keep_last(1000).reliable().transient_local();
    let p = node
        .create_publisher::<Log>("/rosout", qos)
        .map_err(|e| format!("cannot create /rosout for {fq}: {e}"))?;
    if let Ok(mut s) = SINK.lock() {
        *s = Some((p, logger_name(fq)));
    }
    Ok(())
}

/// Stop forwarding (the node is going away).
pub fn detach() {
    if let Ok(mut s) = SINK.lock() {
        *s = None;
    }
}

/// The layer the binary installs; inert until [`attach`].
pub struct RosoutLayer;

struct Message(String);

impl Visit for Message {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl<S: Subscriber> Layer<S> for RosoutLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let level = match *event.metadata().level() {
            Level::ERROR => Log::ERROR as u8,
            Level::WARN => Log::WARN as u8,
            Level::INFO => Log::INFO as u8,
            _ => return,
        };
        let Ok(sink) = SINK.try_lock() else { return };
        let Some((publisher, name)) = sink.as_ref() else { return };
        let mut m = Message(String::new());
        event.record(&mut m);
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let meta = event.metadata();
        let log = Log {
            stamp: Time { sec: now.as_secs() as i32, nanosec: now.subsec_nanos() },
            level,
            name: name.clone(),
            msg: m.0,
            file: meta.file().unwrap_or("").to_string(),
            function: meta.module_path().unwrap_or("").to_string(),
            line: meta.line().unwrap_or(0),
        };
        let _ = publisher.publish(&log);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn logger_names_follow_rcl() {
        assert_eq!(super::logger_name("/sim/roqsim"), "sim.roqsim");
        assert_eq!(super::logger_name("/roqsim"), "roqsim");
    }
}
