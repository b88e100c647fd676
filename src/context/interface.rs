//! Endpoints: a robot's transport-neutral I/O.
//!
//! A plugin declares endpoints in `configure`. An `out` endpoint is published by its producer on
//! the steps its rate gate is due ([`Interface::is_due`] then [`Interface::publish`]); a bridge
//! reads what was published this step. An `in` endpoint receives payloads delivered on the physics
//! thread (by a command the bridge posted) and its consumer takes them in `pre_step`.
//! Per-backend hints (`backend["ros2"]` = `{type, topic, service, action, frame_id, ...}`) are
//! inert data the backend interprets; the producer imports nothing transport-specific.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::context::payload::Payload;
use crate::context::tap::{self, Tapped, WorldCommand};
use crate::engine::rates::{snap_note, snap_rate, SnapNote, SnappedRate};

/// Direction of an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Simulation → world (publisher).
    Out,
    /// World → simulation (subscription, service or action).
    In,
}

/// Index of an endpoint in the registry.
pub type EndpointId = usize;

/// A transport-neutral port.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Role name (`odom`, `scan`, `cmd_vel`); the default topic.
    pub name: String,
    /// In or out.
    pub direction: Direction,
    /// Entity the port belongs to (the owner filter of a bridge).
    pub owner: Option<String>,
    /// Transport scope (`robot1`): a backend prefixes topics, frames and action names with it.
    pub namespace: String,
    /// Frame prefix applied to frame ids this endpoint names (usually = namespace).
    pub frame_prefix: String,
    /// Requested publish rate (Hz); `None` = every step an out endpoint is published.
    pub rate_hz: Option<f64>,
    /// The rate bound to the physics grid (set when added).
    pub snapped: Option<SnappedRate>,
    /// Inert per-backend hints: backend name → key → value.
    pub backend: BTreeMap<String, BTreeMap<String, String>>,
    /// Skip producing while `has_subscribers == Some(false)`.
    pub lazy: bool,
    /// Set by a bridge after wiring; `None` = unknown (assume yes).
    pub has_subscribers: Option<bool>,
    /// A recording keeps it: a bridge reports it subscribed whatever its ROS peers do, so a lazy
    /// endpoint is recorded at its rate with or without `--ros` subscribers.
    pub recorded: bool,
    /// Address of the plugin entry that added it, when added in its `configure` (topic claims
    /// name the entry).
    pub added_by: Option<String>,
    /// Last published payload (out).
    latest: Option<Payload>,
    /// Tick the latest payload was published at.
    published_tick: Option<u64>,
    /// Delivered, not yet taken (in).
    inbox: VecDeque<Payload>,
    /// Payloads delivered since the run started (in; never reset): the lockstep gate counts them.
    delivered: u64,
}

impl Endpoint {
    /// A new outbound endpoint.
    pub fn out(name: &str) -> Self {
        Self::new(name, Direction::Out)
    }
    /// A new inbound endpoint.
    pub fn input(name: &str) -> Self {
        Self::new(name, Direction::In)
    }
    fn new(name: &str, direction: Direction) -> Self {
        Endpoint {
            name: name.to_string(),
            direction,
            owner: None,
            namespace: String::new(),
            frame_prefix: String::new(),
            rate_hz: None,
            snapped: None,
            backend: BTreeMap::new(),
            lazy: false,
            has_subscribers: None,
            recorded: false,
            added_by: None,
            latest: None,
            published_tick: None,
            inbox: VecDeque::new(),
            delivered: 0,
        }
    }
    /// Set the owner entity.
    pub fn owner(mut self, owner: Option<&str>) -> Self {
        self.owner = owner.map(str::to_string);
        self
    }
    /// Set the namespace (and the frame prefix to match, unless set later).
    pub fn namespace(mut self, ns: &str) -> Self {
        self.namespace = ns.trim_matches('/').to_string();
        self
    }
    /// Set the frame prefix.
    pub fn frame_prefix(mut self, p: &str) -> Self {
        self.frame_prefix = p.to_string();
        self
    }
    /// Set the requested rate (Hz).
    pub fn rate(mut self, hz: f64) -> Self {
        self.rate_hz = Some(hz);
        self
    }
    /// Mark lazy.
    pub fn lazy(mut self, lazy: bool) -> Self {
        self.lazy = lazy;
        self
    }
    /// Add a hint for `backend` (e.g. `hint("ros2", "type", "nav_msgs/msg/Odometry")`).
    pub fn hint(mut self, backend: &str, key: &str, value: impl Into<String>) -> Self {
        self.backend.entry(backend.to_string()).or_default().insert(key.to_string(), value.into());
        self
    }
    /// A hint value, if set.
    pub fn get_hint(&self, backend: &str, key: &str) -> Option<&str> {
        self.backend.get(backend)?.get(key).map(String::as_str)
    }
    /// Payloads delivered to this endpoint since the run started.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }
    /// The latest published payload and the tick it was published at.
    pub fn latest(&self) -> Option<(&Payload, u64)> {
        Some((self.latest.as_ref()?, self.published_tick?))
    }
}

/// One row of the run record's `endpoint_rates`.
#[derive(Debug, Clone, PartialEq)]
pub struct RateRow {
    /// Endpoint (or stream) name with its namespace.
    pub name: String,
    /// Requested rate (Hz).
    pub requested_hz: f64,
    /// Realised rate (Hz).
    pub realised_hz: f64,
    /// Gate spacing in physics steps.
    pub every_steps: u64,
    /// The endpoint the row is of (`None` for a stream a plugin gates itself).
    pub endpoint: Option<EndpointId>,
}

/// The endpoint registry of one world.
#[derive(Debug, Default)]
pub struct Interface {
    endpoints: Vec<Endpoint>,
    physics_hz: f64,
    extra_rates: Vec<RateRow>,
    /// Copies of delivered inbound payloads, cancels and world commands, kept while an observer
    /// (the recorder) asks.
    tap: Option<Vec<Tapped>>,
    /// Log lines produced by rate snapping (drained by the engine into the log).
    pub notes: Vec<SnapNote>,
    /// The plugin entry whose `configure` is running (set by the engine): endpoints added then
    /// record it as [`Endpoint::added_by`].
    pub configuring: Option<String>,
}

impl Interface {
    /// A registry for a world stepping at `physics_hz`.
    pub fn new(physics_hz: f64) -> Self {
        Interface { physics_hz, ..Default::default() }
    }

    /// Physics rate (Hz).
    pub fn physics_hz(&self) -> f64 {
        self.physics_hz
    }

    /// Snap a rate for a stream the caller gates itself (a bridge's /clock, a merged
    /// joint_states), recording it among the run's rates and announcing the move.
    pub fn bind_rate(&mut self, what: &str, hz: f64) -> SnappedRate {
        let s = snap_rate(hz, self.physics_hz);
        let note = snap_note(what, &s, self.physics_hz);
        if note != SnapNote::Quiet {
            self.notes.push(note);
        }
        self.extra_rates.push(RateRow {
            name: what.to_string(),
            requested_hz: hz,
            realised_hz: s.realised_hz,
            every_steps: s.every_steps,
            endpoint: None,
        });
        s
    }

    /// Record a gated stream whose spacing the caller snapped itself (a bridge forwarding every
    /// k-th publication of a producer, on the producer's own grid), announcing the move.
    pub fn record_rate(&mut self, what: &str, s: SnappedRate) {
        let note = snap_note(what, &s, self.physics_hz);
        if note != SnapNote::Quiet {
            self.notes.push(note);
        }
        self.extra_rates.push(RateRow {
            name: what.to_string(),
            requested_hz: s.requested_hz,
            realised_hz: s.realised_hz,
            every_steps: s.every_steps,
            endpoint: None,
        });
    }

    /// Register an endpoint; its rate (if any) is snapped to the physics grid here.
    pub fn add(&mut self, mut ep: Endpoint) -> EndpointId {
        if ep.added_by.is_none() {
            ep.added_by.clone_from(&self.configuring);
        }
        if let Some(hz) = ep.rate_hz {
            let what = if ep.namespace.is_empty() {
                ep.name.clone()
            } else {
                format!("{}/{}", ep.namespace, ep.name)
            };
            let s = snap_rate(hz, self.physics_hz);
            let note = snap_note(&what, &s, self.physics_hz);
            if note != SnapNote::Quiet {
                self.notes.push(note);
            }
            ep.snapped = Some(s);
        }
        self.endpoints.push(ep);
        self.endpoints.len() - 1
    }

    /// All endpoints.
    pub fn all(&self) -> &[Endpoint] {
        &self.endpoints
    }

    /// One endpoint.
    pub fn get(&self, id: EndpointId) -> &Endpoint {
        &self.endpoints[id]
    }

    /// One endpoint, mutably (a bridge sets `has_subscribers`).
    pub fn get_mut(&mut self, id: EndpointId) -> &mut Endpoint {
        &mut self.endpoints[id]
    }

    /// Whether an out endpoint should be produced at `tick` (steps since reset, first step = 1):
    /// its gate is due and, if lazy, somebody listens.
    pub fn is_due(&self, id: EndpointId, tick: u64) -> bool {
        let ep = &self.endpoints[id];
        if ep.lazy && ep.has_subscribers == Some(false) {
            return false;
        }
        match ep.snapped {
            Some(s) => tick % s.every_steps == 0,
            None => true,
        }
    }

    /// Hand a payload to an out endpoint at `tick`.
    pub fn publish(&mut self, id: EndpointId, tick: u64, payload: Payload) {
        let ep = &mut self.endpoints[id];
        ep.latest = Some(payload);
        ep.published_tick = Some(tick);
    }

    /// Ids of out endpoints published at exactly `tick`.
    pub fn published_at(&self, tick: u64) -> impl Iterator<Item = EndpointId> + '_ {
        self.endpoints
            .iter()
            .enumerate()
            .filter(move |(_, e)| e.direction == Direction::Out && e.published_tick == Some(tick))
            .map(|(i, _)| i)
    }

    /// Deliver an inbound payload (physics thread).
    pub fn deliver(&mut self, id: EndpointId, payload: Payload) {
        if let Some(tap) = &mut self.tap {
            tap.push(Tapped::Deliver(id, payload.clone()));
        }
        let ep = &mut self.endpoints[id];
        ep.delivered += 1;
        ep.inbox.push_back(payload);
    }

    /// Cancel the action goal delivered to `id` whose cancel flag is `flag` (physics thread: the
    /// transport posts this, so a consumer sees the cancel at a step boundary).
    pub fn cancel_goal(&mut self, id: EndpointId, flag: &Arc<AtomicBool>) {
        if let Some(tap) = &mut self.tap {
            tap.push(Tapped::Cancel { endpoint: id, flag: flag.clone() });
        }
        tap::raise(flag);
    }

    /// Note a world command about to act (a no-op unless an observer taps).
    pub fn tap_world(&mut self, cmd: impl FnOnce() -> WorldCommand) {
        if let Some(tap) = &mut self.tap {
            tap.push(Tapped::World(cmd()));
        }
    }

    /// Note a controller manager request about to act on `(entity, command)` (a no-op unless an
    /// observer taps).
    pub fn tap_controller(
        &mut self,
        cmd: impl FnOnce() -> (String, crate::handles::controllers::command::ControllerCommand),
    ) {
        if let Some(tap) = &mut self.tap {
            let (entity, command) = cmd();
            tap.push(Tapped::Controller { entity, command });
        }
    }

    /// Keep a copy of every payload delivered, cancel, world command and controller request from
    /// now on (the
    /// recorder's inbound log).
    pub fn enable_tap(&mut self) {
        self.tap.get_or_insert_with(Vec::new);
    }

    /// What was tapped since the last call, in the order it acted.
    pub fn take_tapped(&mut self) -> Vec<Tapped> {
        self.tap.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Forget the payloads delivered since the last take (a reset clears their inboxes); cancels,
    /// world commands and controller requests acted and are kept.
    pub fn discard_tapped(&mut self) {
        if let Some(t) = &mut self.tap {
            t.retain(|x| !matches!(x, Tapped::Deliver(..)));
        }
    }

    /// Take the newest delivered payload, dropping older ones.
    pub fn take_latest(&mut self, id: EndpointId) -> Option<Payload> {
        let inbox = &mut self.endpoints[id].inbox;
        let last = inbox.drain(..).rev().find(taken);
        inbox.clear();
        last
    }

    /// True when something was delivered to `id` and not yet taken (a cheap test before
    /// [`Interface::drain`] for a hook that runs every step).
    pub fn has_input(&self, id: EndpointId) -> bool {
        !self.endpoints[id].inbox.is_empty()
    }

    /// Take every delivered payload in arrival order.
    pub fn drain(&mut self, id: EndpointId) -> Vec<Payload> {
        self.endpoints[id].inbox.drain(..).filter(taken).collect()
    }

    /// Answer every service call still waiting in an inbox with `success: false` and `why` (the
    /// run ended before a hook drained it: a caller gets a reason, not silence). Returns how many.
    pub fn refuse_pending_calls(&mut self, why: &str) -> usize {
        self.refuse_calls(&format!("the run ended before this request was served: {why}"))
    }

    /// Answer every service call in an inbox `success: false` with `message`; how many.
    fn refuse_calls(&mut self, message: &str) -> usize {
        let mut n = 0;
        for e in &mut self.endpoints {
            e.inbox.retain(|p| match p {
                Payload::Call(call) => {
                    let _ = call
                        .reply
                        .send(Payload::Ack { success: false, message: message.to_string() });
                    n += 1;
                    false
                }
                _ => true,
            });
        }
        n
    }

    /// Clear inboxes and published state (reset). A service call still in an inbox is answered
    /// `success: false` saying the reset came first (dropping it would leave its caller silent).
    pub fn clear(&mut self) {
        self.refuse_calls("the world was reset before this request was served; send it again");
        for e in &mut self.endpoints {
            e.inbox.clear();
            e.latest = None;
            e.published_tick = None;
        }
    }

    /// Requested and realised rate of every gated publication, for the run record.
    pub fn rate_table(&self) -> Vec<RateRow> {
        let mut rows: Vec<RateRow> = self
            .endpoints
            .iter()
            .enumerate()
            .filter_map(|(id, e)| {
                let s = e.snapped?;
                let name = if e.namespace.is_empty() {
                    e.name.clone()
                } else {
                    format!("{}/{}", e.namespace, e.name)
                };
                Some(RateRow {
                    name,
                    requested_hz: s.requested_hz,
                    realised_hz: s.realised_hz,
                    every_steps: s.every_steps,
                    endpoint: Some(id),
                })
            })
            .collect();
        rows.extend(self.extra_rates.iter().cloned());
        rows
    }
}

/// A payload an inbox hands over: anything but a service call its caller has withdrawn (the call
/// is taken by the consumer as it is handed over).
fn taken(p: &Payload) -> bool {
    match p {
        Payload::Call(call) => call.claim.take(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::payload::ServiceCall;

    /// A call its caller withdrew (it stopped waiting: a paused run) is never handed to the
    /// consumer; a call handed over can no longer be withdrawn (its answer is awaited).
    #[test]
    fn a_withdrawn_call_is_not_handed_over_and_a_taken_one_stays_taken() {
        use crate::context::payload::CallClaim;
        let mut i = Interface::new(500.0);
        let id = i.add(Endpoint::input("grip_fault/override"));
        let call = |on: bool, claim: &CallClaim| {
            Payload::Call(ServiceCall {
                request: Box::new(Payload::Bool(on)),
                reply: crossbeam_channel::bounded(1).0,
                claim: claim.clone(),
            })
        };
        let (gave_up, waiting) = (CallClaim::default(), CallClaim::default());
        i.deliver(id, call(true, &gave_up));
        i.deliver(id, call(false, &waiting));
        assert!(gave_up.withdraw());
        let got = i.drain(id);
        assert!(
            matches!(got.as_slice(), [Payload::Call(c)] if *c.request == Payload::Bool(false)),
            "{got:?}"
        );
        assert!(!waiting.withdraw(), "taken by the drain");
        // take_latest skips a withdrawn newest call for the one before it.
        let (older, newest) = (CallClaim::default(), CallClaim::default());
        i.deliver(id, call(true, &older));
        i.deliver(id, call(false, &newest));
        assert!(newest.withdraw());
        assert!(
            matches!(i.take_latest(id), Some(Payload::Call(c)) if *c.request == Payload::Bool(true))
        );
        assert!(!older.withdraw());
    }

    #[test]
    fn calls_left_in_an_inbox_are_refused_with_the_reason() {
        let mut i = Interface::new(500.0);
        let id = i.add(Endpoint::input("lidar/override"));
        let (tx, rx) = crossbeam_channel::bounded(1);
        i.deliver(
            id,
            Payload::Call(ServiceCall {
                request: Box::new(Payload::Bool(true)),
                reply: tx,
                claim: Default::default(),
            }),
        );
        i.deliver(id, Payload::Bool(false));
        assert_eq!(i.refuse_pending_calls("the run failed: non-finite state"), 1);
        match rx.try_recv() {
            Ok(Payload::Ack { success, message }) => {
                assert!(!success);
                assert_eq!(message, "the run ended before this request was served: the run failed: non-finite state");
            }
            other => panic!("{other:?}"),
        }
        // Plain payloads stay for their consumer.
        assert!(matches!(i.drain(id).as_slice(), [Payload::Bool(false)]));
        // A reset answers the calls it clears.
        let (tx, rx) = crossbeam_channel::bounded(1);
        i.deliver(
            id,
            Payload::Call(ServiceCall {
                request: Box::new(Payload::Bool(true)),
                reply: tx,
                claim: Default::default(),
            }),
        );
        i.clear();
        assert!(matches!(rx.try_recv(), Ok(Payload::Ack { success: false, message })
            if message == "the world was reset before this request was served; send it again"));
    }
}
