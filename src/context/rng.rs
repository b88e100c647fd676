//! Counter-based noise: `rng_for(name)`.
//!
//! Philox4x32-10 keyed by the run seed; the 128-bit counter holds (episode, name hash,
//! sim-time tick, draw index) from high to low words. A value drawn at one sim time is therefore
//! a pure function of (seed, episode, time, name): reproducible without replaying the run,
//! different across episodes, and independent of how many other draws happened.

use rand_philox::{u32_to_unit_f64, Philox};

/// FNV-1a 32-bit hash of a sensor name (stable across builds and platforms).
pub fn name_hash(name: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// A generator for one (seed, episode, tick, name).
#[derive(Debug, Clone)]
pub struct SimRng {
    inner: Philox,
    spare: Option<f64>,
}

impl SimRng {
    /// Key = `seed`, counter = (episode, hash(name), tick, 0).
    pub fn new(seed: u64, episode: u32, tick: u64, name: &str) -> Self {
        let key = [seed as u32, (seed >> 32) as u32];
        let counter: u128 = ((episode as u128) << 96)
            | ((name_hash(name) as u128) << 64)
            | (((tick & 0xffff_ffff) as u128) << 32);
        SimRng { inner: Philox::new(key, counter), spare: None }
    }
    /// Raw 32 bits.
    pub fn next_u32(&mut self) -> u32 {
        self.inner.next_u32()
    }
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        u32_to_unit_f64(self.inner.next_u32())
    }
    /// Standard normal (Box–Muller, both halves used).
    pub fn standard_normal(&mut self) -> f64 {
        if let Some(s) = self.spare.take() {
            return s;
        }
        let u1 = (1.0 - self.uniform()).max(f64::MIN_POSITIVE);
        let u2 = self.uniform();
        let r = (-2.0 * u1.ln()).sqrt();
        let t = std::f64::consts::TAU * u2;
        self.spare = Some(r * t.sin());
        r * t.cos()
    }
    /// Normal with mean 0 and standard deviation `sigma` (0 draws nothing and returns 0).
    pub fn normal(&mut self, sigma: f64) -> f64 {
        if sigma == 0.0 {
            0.0
        } else {
            sigma * self.standard_normal()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproducible_and_episode_dependent() {
        let a: Vec<u32> = (0..8)
            .map({
                let mut r = SimRng::new(7, 0, 100, "lidar");
                move |_| r.next_u32()
            })
            .collect();
        let b: Vec<u32> = (0..8)
            .map({
                let mut r = SimRng::new(7, 0, 100, "lidar");
                move |_| r.next_u32()
            })
            .collect();
        let c: Vec<u32> = (0..8)
            .map({
                let mut r = SimRng::new(7, 1, 100, "lidar");
                move |_| r.next_u32()
            })
            .collect();
        let d: Vec<u32> = (0..8)
            .map({
                let mut r = SimRng::new(7, 0, 100, "imu");
                move |_| r.next_u32()
            })
            .collect();
        let e: Vec<u32> = (0..8)
            .map({
                let mut r = SimRng::new(7, 0, 101, "lidar");
                move |_| r.next_u32()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
        assert_ne!(a, e);
    }

    #[test]
    fn normal_moments() {
        let mut r = SimRng::new(1, 0, 0, "x");
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| r.normal(2.0)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.02, "{mean}");
        assert!((var.sqrt() - 2.0).abs() < 0.02, "{}", var.sqrt());
    }
}
