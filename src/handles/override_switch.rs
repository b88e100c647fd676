//! The on/off switch a fault is driven by, the same for a sensor's `fault:` block
//! ([`super::sensor_fault`]) and a `model_override` instance: an inbound `override` endpoint (ROS 2
//! service std_srvs/SetBool: a [`Payload::Call`] whose request is `Payload::Bool(on)`, answered
//! with `Payload::Ack { success, message }`), `override_state` (std_msgs/Bool) and
//! `override_verified` (std_msgs/String of the [`Verdict`] word) published at a rate, and the
//! in-process [`OverrideHandle`] a ROS-free run switches it with.
//!
//! The owner decides what a switch does and what it verifies; this module takes the requests
//! ([`OverrideSwitch::take_request`]: service calls in order, then the handle's, the last one
//! wins), answers them with a verdict ([`OverrideSwitch::answer`]: a request superseded by a later
//! one in the same step fails, naming the state that won) and publishes the state on due ticks.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use crossbeam_channel::Sender;

use crate::context::payload::Payload;
use crate::context::{Endpoint, EndpointId, SimContext};

/// What one step after a change says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Nothing the change touches could be read (nothing in contact, a limit not binding, a
    /// restore): not a failure.
    Untested,
    /// The applied value is what the contact (or the dynamics, or the next frame) now carries.
    Landed,
    /// The change is in force and changed nothing (the other side owns the contact, the fault
    /// values equal the nominal ones, ...): a failed service reply and a warning.
    NoEffect,
}

impl Verdict {
    /// The word published on `override_verified` and leading the service reply's message.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Untested => "untested",
            Verdict::Landed => "landed",
            Verdict::NoEffect => "no_effect",
        }
    }
    /// The SetBool reply's `success`: false only for `no_effect`.
    pub fn success(self) -> bool {
        self != Verdict::NoEffect
    }
}

/// Whether a fault is in force: one bit shared by the switch, its handle and whatever reads the
/// fault values (a sensor checks it every frame). Clones share the bit.
#[derive(Debug, Clone, Default)]
pub struct FaultSwitch(Rc<Cell<bool>>);

impl FaultSwitch {
    /// Apply (`true`) or restore (`false`) the fault values.
    pub fn set(&self, on: bool) {
        self.0.set(on);
    }
    /// Whether the fault values are in force.
    pub fn is_on(&self) -> bool {
        self.0.get()
    }
}

#[derive(Debug, Default)]
struct Shared {
    verified: String,
    message: String,
    requests: VecDeque<bool>,
}

/// The in-process side of an override switch (on the blackboard under the owner's key):
/// `set_active` takes effect when the owner next takes its requests (the next step), like a
/// service call; read `verified()` after that step. Clones share the state.
#[derive(Debug, Clone)]
pub struct OverrideHandle {
    active: FaultSwitch,
    shared: Rc<RefCell<Shared>>,
}

impl OverrideHandle {
    /// Apply (`true`) or restore (`false`) the fault at the next step.
    pub fn set_active(&self, on: bool) {
        self.shared.borrow_mut().requests.push_back(on);
    }
    /// Whether the fault is in force.
    pub fn active(&self) -> bool {
        self.active.is_on()
    }
    /// The latest verdict word: `landed`, `no_effect`, `untested` (or `pending` for the one step
    /// between a change and its reading, where the owner verifies a step later).
    pub fn verified(&self) -> String {
        self.shared.borrow().verified.clone()
    }
    /// The latest verdict's full message (what the service replied).
    pub fn message(&self) -> String {
        self.shared.borrow().message.clone()
    }
}

/// Where a switch's three endpoints go: `<path>override`, `<path>override_state` and
/// `<path>override_verified` (`path` empty or ending in `/`), owned by `owner`, under `namespace`
/// when given, the outbound two at `rate_hz`.
pub struct SwitchEndpoints<'a> {
    /// Prefix of the three names (`""` or ending in `/`).
    pub path: &'a str,
    /// Owning entity.
    pub owner: Option<&'a str>,
    /// Endpoint namespace, if any.
    pub namespace: Option<&'a str>,
    /// Publish rate (Hz) of `override_state` and `override_verified`.
    pub rate_hz: f64,
}

/// The switch of one fault: its endpoints, the handle's shared state and the service calls
/// waiting for their answer.
pub struct OverrideSwitch {
    /// Who the warnings name (e.g. "model_override `grip_fault`", "`robot.imu`").
    who: String,
    active: FaultSwitch,
    shared: Rc<RefCell<Shared>>,
    ep_in: EndpointId,
    ep_state: EndpointId,
    ep_verified: EndpointId,
    replies: Vec<(bool, Sender<Payload>)>,
}

impl OverrideSwitch {
    /// Register the endpoints (in `configure`) and put the handle on the blackboard under `key`.
    /// `active` is the bit the switch sets (shared with whatever reads the fault values).
    pub fn register(
        ctx: &mut SimContext,
        at: SwitchEndpoints<'_>,
        key: String,
        who: String,
        active: FaultSwitch,
    ) -> OverrideSwitch {
        let place = |e: Endpoint| {
            let e = e.owner(at.owner);
            match at.namespace {
                Some(ns) => e.namespace(ns),
                None => e,
            }
        };
        let path = at.path;
        let ep_in = ctx.interface.add(place(Endpoint::input(&format!("{path}override"))).hint(
            "ros2",
            "service",
            "std_srvs/srv/SetBool",
        ));
        let ep_state = ctx.interface.add(
            place(Endpoint::out(&format!("{path}override_state")))
                .rate(at.rate_hz)
                .hint("ros2", "type", "std_msgs/msg/Bool")
                .hint("ros2", "qos", "reliable"),
        );
        let ep_verified = ctx.interface.add(
            place(Endpoint::out(&format!("{path}override_verified")))
                .rate(at.rate_hz)
                .hint("ros2", "type", "std_msgs/msg/String")
                .hint("ros2", "qos", "reliable"),
        );
        let shared = Rc::new(RefCell::new(Shared {
            verified: Verdict::Untested.as_str().into(),
            ..Default::default()
        }));
        let switch = OverrideSwitch {
            who,
            active,
            shared,
            ep_in,
            ep_state,
            ep_verified,
            replies: Vec::new(),
        };
        ctx.blackboard.set(key, switch.handle());
        switch
    }

    /// The in-process handle (also on the blackboard).
    pub fn handle(&self) -> OverrideHandle {
        OverrideHandle { active: self.active.clone(), shared: self.shared.clone() }
    }

    /// Whether the fault is in force.
    pub fn is_on(&self) -> bool {
        self.active.is_on()
    }

    /// Take the requests delivered since the last call — service calls (kept for
    /// [`OverrideSwitch::answer`]), then the handle's — and return the state the last one asks
    /// for. A call whose request is not a Bool is answered at once with a failure.
    pub fn take_request(&mut self, ctx: &mut SimContext) -> Option<bool> {
        let mut wanted = None;
        for p in ctx.interface.drain(self.ep_in) {
            match p {
                Payload::Call(call) => match *call.request {
                    Payload::Bool(on) => {
                        wanted = Some(on);
                        self.replies.push((on, call.reply));
                    }
                    other => {
                        let _ = call.reply.send(Payload::Ack { success: false, message: format!("`override` is a std_srvs/SetBool service: the request must be a Bool, got {}", other.kind()) });
                    }
                },
                Payload::Bool(on) => wanted = Some(on),
                other => tracing::warn!(
                    "{}: ignored a {} delivered to `override` (expects a SetBool call)",
                    self.who,
                    other.kind()
                ),
            }
        }
        let queued: Vec<bool> = self.shared.borrow_mut().requests.drain(..).collect();
        if let Some(&last) = queued.last() {
            wanted = Some(last);
        }
        wanted
    }

    /// Put the fault in force (`true`) or take it out; `verified` reads `pending` until
    /// [`OverrideSwitch::answer`] when `pending` is set (the owner verifies a step later).
    pub fn set(&self, on: bool, pending: bool) {
        self.active.set(on);
        if pending {
            self.shared.borrow_mut().verified = "pending".into();
        }
    }

    /// Record the verdict of switching to `on` and answer every waiting call with it: a call that
    /// asked for `on` gets `(verdict.success(), message)`, one superseded by a later request in
    /// the same step fails, naming the state that won.
    pub fn answer(&mut self, on: bool, verdict: Verdict, message: &str) {
        {
            let mut s = self.shared.borrow_mut();
            s.verified = verdict.as_str().into();
            s.message = message.to_string();
        }
        for (asked, tx) in self.replies.drain(..) {
            let (success, msg) = if asked == on {
                (verdict.success(), message.to_string())
            } else {
                (
                    false,
                    format!(
                        "superseded: a later request in the same step set active = {on}; {message}"
                    ),
                )
            };
            let _ = tx.send(Payload::Ack { success, message: msg });
        }
    }

    /// Publish `override_state` and `override_verified` on their due ticks.
    pub fn publish(&self, ctx: &mut SimContext) {
        let tick = ctx.tick;
        if ctx.interface.is_due(self.ep_state, tick) {
            ctx.interface.publish(self.ep_state, tick, Payload::Bool(self.active.is_on()));
        }
        if ctx.interface.is_due(self.ep_verified, tick) {
            let v = self.shared.borrow().verified.clone();
            ctx.interface.publish(self.ep_verified, tick, Payload::String(v));
        }
    }

    /// Back to nominal (reset): the fault out of force, the verdict `untested`, the handle's
    /// requests dropped, and a call still waiting for its verdict answered with a failure (the
    /// reset came first).
    pub fn reset(&mut self) {
        for (_, tx) in self.replies.drain(..) {
            let _ = tx.send(Payload::Ack { success: false, message: "untested: the world was reset before the change could be verified; the reset restored the configured state".into() });
        }
        self.active.set(false);
        let mut s = self.shared.borrow_mut();
        s.verified = Verdict::Untested.as_str().into();
        s.message.clear();
        s.requests.clear();
    }
}
