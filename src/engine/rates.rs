//! Publish rates on the physics grid.
//!
//! A gate is tested once per physics step, so the rates a world can hold are exactly
//! `physics_rate / k` for integer k ≥ 1. A requested rate is snapped to the NEAREST of those
//! (so it may come out slightly faster), and the move is announced in proportion to its size:
//! silent below [`SNAP_QUIET`], a note below [`SNAP_NOTABLE`], a warning naming the neighbouring
//! achievable rates above it.

/// Relative moves below this are silent (0.1 %).
pub const SNAP_QUIET: f64 = 0.001;
/// Relative moves below this are a note; above, a warning (1 %).
pub const SNAP_NOTABLE: f64 = 0.01;
/// Slowest rate a stream may ask for (Hz): once every 1000 s of sim time. Slower is "never", and
/// its step spacing overflows.
pub const MIN_RATE_HZ: f64 = 1e-3;

/// A rate bound to the physics grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SnappedRate {
    /// What was asked (Hz).
    pub requested_hz: f64,
    /// What the run publishes at (Hz) = physics_rate / every_steps.
    pub realised_hz: f64,
    /// Publish every this many physics steps (≥ 1).
    pub every_steps: u64,
}

/// How loudly a snap is announced.
#[derive(Debug, Clone, PartialEq)]
pub enum SnapNote {
    /// Below 0.1 %: nothing said.
    Quiet,
    /// Below 1 %: an info line.
    Note(String),
    /// Above 1 %: a warning naming the nearby achievable rates.
    Warn(String),
    /// Not a rate a run can hold (below [`MIN_RATE_HZ`], or not finite): the engine refuses it.
    Refuse(String),
}

/// Snap `requested_hz` to the nearest `physics_hz / k`. Rates above the physics rate become the
/// physics rate (k = 1). `requested_hz` must be > 0.
pub fn snap_rate(requested_hz: f64, physics_hz: f64) -> SnappedRate {
    let ratio = physics_hz / requested_hz;
    let lo = ratio.floor().max(1.0);
    let hi = ratio.ceil().max(1.0);
    let k = if (physics_hz / lo - requested_hz).abs() <= (physics_hz / hi - requested_hz).abs() {
        lo
    } else {
        hi
    };
    let k = k as u64;
    SnappedRate { requested_hz, realised_hz: physics_hz / k as f64, every_steps: k }
}

/// The announcement for a snap of the rate of `what`.
pub fn snap_note(what: &str, s: &SnappedRate, physics_hz: f64) -> SnapNote {
    if !(s.requested_hz >= MIN_RATE_HZ && s.requested_hz.is_finite()) {
        return SnapNote::Refuse(format!(
            "{what}: a rate of {} Hz is not one a run can hold: give at least {MIN_RATE_HZ} Hz (once every 1000 s; a rate above the physics rate {physics_hz} Hz publishes every step)",
            crate::error::num(s.requested_hz)
        ));
    }
    let rel = (s.realised_hz - s.requested_hz).abs() / s.requested_hz;
    if rel < SNAP_QUIET {
        SnapNote::Quiet
    } else if rel < SNAP_NOTABLE {
        SnapNote::Note(format!(
            "{what}: {} Hz lands on the physics grid at {:.4} Hz (every {} steps)",
            s.requested_hz, s.realised_hz, s.every_steps
        ))
    } else {
        let k = s.every_steps;
        let mut near: Vec<String> = [k.saturating_sub(1), k, k.saturating_add(1)]
            .iter()
            .filter(|&&j| j >= 1)
            .map(|&j| format!("{:.4} Hz", physics_hz / j as f64))
            .collect();
        near.dedup();
        SnapNote::Warn(format!(
            "{what}: {} Hz is not on the physics grid ({} Hz / k); publishing at {:.4} Hz (every {} steps, {:+.1} %). \
             Achievable nearby: {}. Ask for one of those, or choose a timestep that is a whole multiple of the rate",
            crate::error::num(s.requested_hz),
            physics_hz,
            s.realised_hz,
            s.every_steps,
            100.0 * (s.realised_hz / s.requested_hz - 1.0),
            near.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirty_hz_at_500() {
        let s = snap_rate(30.0, 500.0);
        assert_eq!(s.every_steps, 17);
        assert_eq!(s.realised_hz, 500.0 / 17.0);
        assert!(matches!(snap_note("x", &s, 500.0), SnapNote::Warn(m) if m.contains("29.4118 Hz")));
    }

    #[test]
    fn exact_and_nearest() {
        assert_eq!(snap_rate(10.0, 500.0).every_steps, 50);
        assert_eq!(snap_rate(25.0, 500.0).every_steps, 20);
        assert_eq!(snap_rate(1000.0, 500.0).every_steps, 1);
        // 45 Hz at 500: k=11 -> 45.45 (0.45 away), k=12 -> 41.67: nearest is faster
        let s = snap_rate(45.0, 500.0);
        assert_eq!(s.every_steps, 11);
        assert!(s.realised_hz > 45.0);
        assert_eq!(snap_note("x", &snap_rate(50.0, 500.0), 500.0), SnapNote::Quiet);
        // 0.5 % off -> note
        let s = snap_rate(100.5, 500.0);
        assert!(matches!(snap_note("x", &s, 500.0), SnapNote::Note(_)));
    }
}
