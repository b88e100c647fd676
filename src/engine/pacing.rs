//! Wall-clock pacing of the standalone runner: a fixed-step accumulator converts elapsed wall time
//! into whole physics steps; catch-up debt is capped at [`MAX_DEBT_S`], beyond which excess time is
//! dropped rather than spiralling into ever-larger step batches.

use std::time::{Duration, Instant};

/// Cap on accumulated catch-up debt (s of wall time).
pub const MAX_DEBT_S: f64 = 0.25;

/// Paces steps of `dt` at `factor` × real time; `None` = as fast as possible.
#[derive(Debug)]
pub struct Pacer {
    dt: f64,
    factor: Option<f64>,
    last: Instant,
    debt: f64,
    /// Wall time dropped because the debt cap was hit (s).
    pub dropped_s: f64,
}

impl Pacer {
    /// A pacer for steps of `dt` (s) at `factor` × real time (`None` = asap).
    pub fn new(dt: f64, factor: Option<f64>) -> Self {
        Pacer { dt, factor, last: Instant::now(), debt: 0.0, dropped_s: 0.0 }
    }

    /// How many steps to take now. Sleeps until at least one is due (never for asap, which
    /// always answers 1).
    pub fn due_steps(&mut self) -> u64 {
        let Some(factor) = self.factor else { return 1 };
        let step_wall = self.dt / factor;
        loop {
            let now = Instant::now();
            self.debt += now.duration_since(self.last).as_secs_f64();
            self.last = now;
            if self.debt > MAX_DEBT_S {
                self.dropped_s += self.debt - MAX_DEBT_S;
                self.debt = MAX_DEBT_S;
            }
            if self.debt >= step_wall {
                let n = (self.debt / step_wall).floor();
                self.debt -= n * step_wall;
                return n as u64;
            }
            let wait = step_wall - self.debt;
            std::thread::sleep(Duration::from_secs_f64(wait));
        }
    }

    /// Forget accumulated time (after a pause).
    pub fn resync(&mut self) {
        self.last = Instant::now();
        self.debt = 0.0;
    }
}
