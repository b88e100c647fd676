//! Wall-clock pacing of the standalone runner: a fixed-step accumulator converts elapsed wall time
//! into whole physics steps; catch-up debt is capped at [`MAX_DEBT_S`], beyond which excess time is
//! dropped rather than spiralling into ever-larger step batches.
//!
//! The wait for the next step is precise without burning a core: the pacing thread's timer slack
//! is 1 ns (Linux's default 50 µs is added to every sleep), it sleeps to an absolute monotonic
//! deadline [`SPIN_S`] before the step is due (`clock_nanosleep(TIMER_ABSTIME)`, so a signal or
//! a late wake-up does not push the deadline), and spins the rest.

use std::time::{Duration, Instant};

/// Cap on accumulated catch-up debt (s of wall time).
pub const MAX_DEBT_S: f64 = 0.25;
/// The end of a wait spent spinning instead of asleep (s): covers the kernel's wake-up latency
/// on an idle core; at most this much CPU per paced step.
pub const SPIN_S: f64 = 50e-6;

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
    /// Call it on the thread that paces: a paced one gets a 1 ns timer slack.
    pub fn new(dt: f64, factor: Option<f64>) -> Self {
        if factor.is_some() {
            fine_timer_slack();
        }
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
            if wait > SPIN_S {
                sleep_for(wait - SPIN_S);
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Forget accumulated time (after a pause).
    pub fn resync(&mut self) {
        self.last = Instant::now();
        self.debt = 0.0;
    }
}

/// Timer slack of the calling thread to 1 ns (Linux; elsewhere nothing to do).
fn fine_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and touches only this thread's state.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Sleep `s` seconds to an absolute CLOCK_MONOTONIC deadline (Linux), resuming after a signal.
#[cfg(target_os = "linux")]
fn sleep_for(s: f64) {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec we own.
    if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) } != 0 {
        return std::thread::sleep(Duration::from_secs_f64(s));
    }
    let ns = t.tv_nsec + (s * 1e9) as libc::c_long;
    t.tv_sec += (ns / 1_000_000_000) as libc::time_t;
    t.tv_nsec = (ns % 1_000_000_000) as _;
    // SAFETY: an absolute sleep on a valid timespec; the remainder pointer may be null.
    while unsafe {
        libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &t, std::ptr::null_mut())
    } == libc::EINTR
    {}
}

#[cfg(not(target_os = "linux"))]
fn sleep_for(s: f64) {
    std::thread::sleep(Duration::from_secs_f64(s));
}
