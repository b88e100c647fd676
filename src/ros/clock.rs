//! When /clock goes out: one decision, shared by the ROS 2 bridge and the recording, so the
//! recorded /clock is the message sequence a live subscriber receives. ROS-free.
//!
//! /clock carries the sim time. It goes out
//! - after a physics step on its rate grid (`tick % every_steps == 0`, the bridge's
//!   `clock_rate_hz`: [`crate::ros::BridgeConfig::clock_hz`]);
//! - after the last step a request asked for while paused (StepSimulation, SimulateSteps, the
//!   viewer's step), gate or not: a client that steps sees the time it stepped to;
//! - at every reset that resets the state, the first one (at start) included, with the time the
//!   reset leaves (0, or the standing time of a state-only reset);
//! - on pause: at the first idle after a step, at the time the run stands at, unless that time
//!   went out already (the last step of a request, or the step the pause took effect at). The bridge also
//!   re-sends it every 100 ms of wall time while paused, with the same stamp; a recording keeps
//!   the first only (the re-sends follow the wall clock, not the simulation);
//! - at the end: the final sim time, unless it went out already.

use crate::context::{RunState, SimContext};

/// The /clock decision for one publisher (the bridge's, or the recording's).
#[derive(Debug, Clone)]
pub struct ClockGate {
    every: u64,
    /// The stamp (ns) of the last /clock sent.
    last_ns: Option<i64>,
    /// Whether the pause's /clock went out since the last step.
    paused: bool,
}

impl ClockGate {
    /// A gate on every `every_steps`-th step (at least 1).
    pub fn new(every_steps: u64) -> ClockGate {
        ClockGate { every: every_steps.max(1), last_ns: None, paused: false }
    }

    /// After a physics step: on the rate grid, or the last step a request asked for while paused.
    pub fn after_step(&mut self, ctx: &SimContext) -> bool {
        self.paused = false;
        let requested_last =
            ctx.control.state != RunState::Playing && ctx.control.pending_steps <= 1;
        ctx.tick % self.every == 0 || requested_last
    }

    /// After a reset that reset the state (its plugins' `on_reset` ran): always.
    pub fn at_reset(&self) -> bool {
        true
    }

    /// At an idle while paused, sim time `now`: the first one after a step, unless a /clock with
    /// that time went out last.
    pub fn on_pause(&mut self, now: f64) -> bool {
        !std::mem::replace(&mut self.paused, true) && self.last_ns != Some(nanos(now))
    }

    /// At the end of the run, sim time `now`: unless a /clock with that time went out last.
    pub fn at_end(&self, now: f64) -> bool {
        self.last_ns != Some(nanos(now))
    }

    /// Note a /clock sent with sim time `now`.
    pub fn sent(&mut self, now: f64) {
        self.last_ns = Some(nanos(now));
    }
}

/// Sim time (s) to the nanosecond a /clock stamp carries.
fn nanos(t: f64) -> i64 {
    (t * 1e9).round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_once_per_stop_and_end_unless_sent() {
        let mut g = ClockGate::new(5);
        assert!(g.at_reset());
        assert!(g.on_pause(1.0) && !g.on_pause(1.0), "one /clock per pause");
        g.sent(1.25);
        g.paused = false; // a step
        assert!(!g.on_pause(1.25), "not again when that time went out already");
        assert!(!g.at_end(1.25) && g.at_end(1.252));
    }
}
