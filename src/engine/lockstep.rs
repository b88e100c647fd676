//! Lockstep (`sim.sync`): a step that published sensor data waits until every control gate (an
//! inbound endpoint named in `sim.sync.control`) has received a message after that publication,
//! so an external controller runs sensor-in → control-out in lockstep with the physics however
//! fast or slow the machine is. Before the first step the run waits for one message on every
//! gate (the controller announcing itself). A gate that stays silent for `timeout_s` ends the run
//! with a diagnostic naming it and the last tick each gate saw.

use std::time::{Duration, Instant};

use crate::context::{Direction, EndpointId};
use crate::engine::Engine;
use crate::error::SimError;
use crate::world::sim::SyncBlock;

/// Default barrier timeout (s).
pub const DEFAULT_TIMEOUT_S: f64 = 5.0;

#[derive(Debug, Clone)]
struct Gate {
    label: String,
    id: EndpointId,
    /// Deliveries counted when the barrier was armed.
    armed_at: u64,
    /// Tick and step of the latest message this gate received.
    last: Option<(u64, u64)>,
}

/// The barrier of one run.
#[derive(Debug, Clone)]
pub struct Lockstep {
    timeout: Duration,
    /// Out endpoints whose publication arms the gate (`None`: any).
    sensors: Option<Vec<EndpointId>>,
    gates: Vec<Gate>,
    started: bool,
    step: u64,
}

fn label(e: &crate::context::Endpoint) -> String {
    if e.namespace.is_empty() {
        e.name.clone()
    } else {
        format!("{}/{}", e.namespace, e.name)
    }
}

impl Lockstep {
    /// The barrier `sync` asks for on this engine, or `None` when lockstep is off. Errors name a
    /// control gate that is not an inbound endpoint of the world.
    pub fn new(engine: &Engine, sync: Option<&SyncBlock>) -> Result<Option<Lockstep>, SimError> {
        let Some(s) = sync.filter(|s| s.enabled == Some(true)) else { return Ok(None) };
        let waits_control = s.wait_for.as_ref().is_none_or(|w| w.iter().any(|x| x == "control"));
        let all = engine.ctx.interface.all();
        let find = |key: &str, name: &str, dir: Direction| {
            let found = all
                .iter()
                .position(|e| e.direction == dir && (label(e) == *name || e.name == *name));
            found.ok_or_else(|| {
                let have: Vec<String> =
                    all.iter().filter(|e| e.direction == dir).map(label).collect();
                let kind = if dir == Direction::In { "inbound" } else { "outbound" };
                SimError::Other(format!(
                    "sim.sync.{key}: no {kind} endpoint `{name}` in this world; {kind} endpoints: {}",
                    have.join(", ")
                ))
            })
        };
        let mut gates = Vec::new();
        if waits_control {
            for name in s.control.iter().flatten() {
                let id = find("control", name, Direction::In)?;
                gates.push(Gate { label: name.clone(), id, armed_at: 0, last: None });
            }
        }
        let sensors = match &s.sensors {
            Some(names) => Some(
                names
                    .iter()
                    .map(|n| find("sensors", n, Direction::Out))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            None => None,
        };
        Ok(Some(Lockstep {
            timeout: Duration::from_secs_f64(s.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S)),
            sensors,
            gates,
            started: false,
            step: 0,
        }))
    }

    fn arm(&mut self, engine: &Engine) {
        for g in &mut self.gates {
            g.armed_at = engine.ctx.interface.get(g.id).delivered();
        }
    }

    /// Wait until every gate received a message since it was armed; commands are drained (so
    /// deliveries land) while waiting. `stop` ends the wait early (SIGINT).
    fn wait(
        &mut self,
        engine: &mut Engine,
        after: &str,
        stop: &dyn Fn() -> bool,
    ) -> Result<(), SimError> {
        let start = Instant::now();
        loop {
            let mut open = Vec::new();
            for g in &mut self.gates {
                let n = engine.ctx.interface.get(g.id).delivered();
                if n > g.armed_at {
                    if g.last.is_none_or(|(_, s)| s != self.step) {
                        g.last = Some((engine.ctx.tick, self.step));
                    }
                } else {
                    open.push(g.label.clone());
                }
            }
            if open.is_empty() || stop() {
                return Ok(());
            }
            let left = self.timeout.saturating_sub(start.elapsed());
            if left.is_zero() {
                let seen: Vec<String> = self
                    .gates
                    .iter()
                    .map(|g| match g.last {
                        Some((tick, _)) => {
                            format!("`{}` last received a message at tick {tick}", g.label)
                        }
                        None => format!("`{}` never received a message", g.label),
                    })
                    .collect();
                return Err(SimError::Other(format!(
                    "sim.sync: lockstep gate {} never fired: no message within timeout_s = {} s {after} \
                     (tick {}, sim time {:.3} s); {}. Is the controller running and publishing?",
                    open.iter().map(|o| format!("`{o}`")).collect::<Vec<_>>().join(", "),
                    self.timeout.as_secs_f64(),
                    engine.ctx.tick,
                    engine.sim_time(),
                    seen.join("; ")
                )));
            }
            engine.ctx.drain_commands_for(left.min(Duration::from_millis(50)));
        }
    }

    /// Before a step: the first time, wait for every gate's first message.
    pub fn before_step(
        &mut self,
        engine: &mut Engine,
        stop: &dyn Fn() -> bool,
    ) -> Result<(), SimError> {
        if !self.started {
            // Not armed: a message that came before the first step (even before the run) counts.
            self.started = true;
            self.wait(engine, "before the first step", stop)?;
        }
        Ok(())
    }

    /// After a step: if it published anything, wait for every gate's reply to it.
    pub fn after_step(
        &mut self,
        engine: &mut Engine,
        stop: &dyn Fn() -> bool,
    ) -> Result<(), SimError> {
        self.step += 1;
        let tick = engine.ctx.tick;
        let armed = match &self.sensors {
            Some(ids) => ids
                .iter()
                .any(|&id| engine.ctx.interface.get(id).latest().is_some_and(|(_, t)| t == tick)),
            None => engine.ctx.interface.published_at(tick).next().is_some(),
        };
        if self.gates.is_empty() || !armed {
            return Ok(());
        }
        self.arm(engine);
        self.wait(engine, "after the publication", stop)
    }
}
