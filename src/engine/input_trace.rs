//! The inputs the plugins wrote into mjData before every `mj_step`, recorded so a bare loop can
//! step exactly the same physics without the plugins (bench/README.md, "Same physics").
//!
//! Recorded per step, just before `mj_step`:
//! - the user inputs (`mjSTATE_USER`: ctrl, qfrc_applied, xfrc_applied, eq_active, mocap_pos,
//!   mocap_quat, userdata), stored as the entries that changed since the previous step;
//! - the physics state (`mjSTATE_FULLPHYSICS | mjSTATE_WARMSTART`: time, qpos, qvel, act,
//!   history, plugin state, qacc_warmstart) in full, but only on a step where something other
//!   than the previous `mj_step` changed it (a teleport, a presence change, a reset);
//! - after `mj_step`, a digest of each physics field, so a replay that diverges can say which
//!   field diverged first and after which step.
//!
//! [`InputTrace::replay_step`] applies step `k`'s inputs to another mjData of the same compiled
//! model; [`InputTrace::check_final`] compares the replay's final state bitwise with the recorded
//! one. A model written at run time (a fault, a presence change of geom groups that touches
//! contacts) is not part of the trace: the replay then diverges and the check says where.

use std::io::{self, Read, Write};

use mujoco_rs::mujoco_c::{mjData, mjModel, mj_getState, mj_setState, mj_stateSize, mjtState};

/// The user inputs a plugin may write before a step.
const SIG_USER: i32 = mjtState::mjSTATE_USER as i32;
/// The physics state `mj_step` advances (and a plugin might overwrite).
const SIG_PHYS: i32 = mjtState::mjSTATE_FULLPHYSICS as i32 | mjtState::mjSTATE_WARMSTART as i32;
/// Everything `mj_step` reads from mjData.
const SIG_ALL: i32 = mjtState::mjSTATE_INTEGRATION as i32;

/// Fields compared after every step, in the order of [`StepRecord::digest`].
pub const FIELDS: [&str; 5] = ["time", "qpos", "qvel", "act", "qacc_warmstart"];

const MAGIC: &[u8; 8] = b"RQTRACE1";

/// One step's inputs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepRecord {
    /// (index into the `mjSTATE_USER` vector, new value) for every entry that changed.
    pub user_changes: Vec<(u32, f64)>,
    /// The whole physics state, when something other than `mj_step` changed it before this step.
    pub physics: Option<Vec<f64>>,
    /// FNV-1a digest of each of [`FIELDS`] after this step's `mj_step`.
    pub digest: [u64; 5],
}

/// Where a replay left the recorded physics.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// 1-based step after which the field first differed (0 = the final state only).
    pub step: u64,
    /// The field ([`FIELDS`]).
    pub field: &'static str,
    /// First differing index and (recorded, replayed) values, when the full state is known.
    pub detail: Option<(usize, f64, f64)>,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} diverged after step {}", self.field, self.step)?;
        if let Some((i, a, b)) = self.detail {
            write!(f, " ({}[{i}]: recorded {a:e}, replayed {b:e})", self.field)?;
        }
        Ok(())
    }
}

/// The recorded inputs of a run, from the state it started in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputTrace {
    /// `mj_getState(mjSTATE_INTEGRATION)` when recording began.
    pub initial: Vec<f64>,
    /// `mj_getState(mjSTATE_USER)` when recording began.
    pub initial_user: Vec<f64>,
    /// One record per `mj_step`.
    pub steps: Vec<StepRecord>,
    /// `mj_getState(mjSTATE_INTEGRATION)` after the last step.
    pub last: Vec<f64>,
    prev_user: Vec<f64>,
    expect_phys: Vec<f64>,
    scratch: Vec<f64>,
}

fn get(m: *const mjModel, d: *const mjData, sig: i32) -> Vec<f64> {
    // SAFETY: the buffer holds mj_stateSize(m, sig) numbers; model and data are live.
    unsafe {
        let mut v = vec![0.0; mj_stateSize(m, sig) as usize];
        mj_getState(m, d, v.as_mut_ptr(), sig);
        v
    }
}

fn get_into(m: *const mjModel, d: *const mjData, sig: i32, v: &mut Vec<f64>) {
    // SAFETY: as `get`; the buffer is resized to the state size first.
    unsafe {
        v.resize(mj_stateSize(m, sig) as usize, 0.0);
        mj_getState(m, d, v.as_mut_ptr(), sig);
    }
}

fn fnv(xs: &[f64]) -> u64 {
    xs.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, x| (h ^ x.to_bits()).wrapping_mul(0x100_0000_01b3))
}

/// The physics fields of [`FIELDS`] as slices of mjData.
fn fields<'a>(m: &mjModel, d: &'a mjData) -> [&'a [f64]; 5] {
    // SAFETY: mjData's arrays have the lengths the model gives them; `time` is one number.
    unsafe {
        [
            std::slice::from_ref(&d.time),
            std::slice::from_raw_parts(d.qpos, m.nq as usize),
            std::slice::from_raw_parts(d.qvel, m.nv as usize),
            std::slice::from_raw_parts(d.act, m.na as usize),
            std::slice::from_raw_parts(d.qacc_warmstart, m.nv as usize),
        ]
    }
}

fn digest(m: &mjModel, d: &mjData) -> [u64; 5] {
    fields(m, d).map(fnv)
}

/// FNV-1a digest of a state vector's bits.
pub fn digest_of(state: &[f64]) -> u64 {
    fnv(state)
}

/// FNV-1a digest of `mj_getState(mjSTATE_INTEGRATION)`: equal digests of two runs' final states
/// mean (up to a 64-bit collision) the same physics.
pub fn state_digest(m: &mjModel, d: &mjData) -> u64 {
    fnv(&get(m, d, SIG_ALL))
}

impl InputTrace {
    /// Start recording from the current state of `d`.
    pub fn start(m: &mjModel, d: &mjData) -> Self {
        InputTrace {
            initial: get(m, d, SIG_ALL),
            initial_user: get(m, d, SIG_USER),
            steps: Vec::new(),
            last: Vec::new(),
            prev_user: get(m, d, SIG_USER),
            expect_phys: get(m, d, SIG_PHYS),
            scratch: Vec::new(),
        }
    }

    /// Call just before `mj_step`: records what changed since the previous step.
    pub fn before_step(&mut self, m: &mjModel, d: &mjData) {
        get_into(m, d, SIG_USER, &mut self.scratch);
        let user_changes = self
            .scratch
            .iter()
            .zip(&self.prev_user)
            .enumerate()
            .filter(|(_, (a, b))| a.to_bits() != b.to_bits())
            .map(|(i, (a, _))| (i as u32, *a))
            .collect();
        std::mem::swap(&mut self.prev_user, &mut self.scratch);
        get_into(m, d, SIG_PHYS, &mut self.scratch);
        let same = self.scratch.len() == self.expect_phys.len()
            && self.scratch.iter().zip(&self.expect_phys).all(|(a, b)| a.to_bits() == b.to_bits());
        let physics = (!same).then(|| self.scratch.clone());
        self.steps.push(StepRecord { user_changes, physics, digest: [0; 5] });
    }

    /// Call just after `mj_step`.
    pub fn after_step(&mut self, m: &mjModel, d: &mjData) {
        if let Some(s) = self.steps.last_mut() {
            s.digest = digest(m, d);
        }
        get_into(m, d, SIG_PHYS, &mut self.expect_phys);
    }

    /// Call when recording ends: keeps the final state for [`InputTrace::check_final`].
    pub fn finish(&mut self, m: &mjModel, d: &mjData) {
        self.last = get(m, d, SIG_ALL);
    }

    /// Length of the `mjSTATE_USER` vector.
    pub fn user_len(&self) -> usize {
        self.initial_user.len()
    }

    /// The trace as dense arrays for readers of another language: every step's `mjSTATE_USER`
    /// vector (steps × user length), and for each step whose physics was overwritten its 0-based
    /// index followed by the `mjSTATE_FULLPHYSICS | mjSTATE_WARMSTART` vector.
    pub fn dense(&self) -> (Vec<f64>, Vec<f64>) {
        let n = self.user_len();
        let mut user = self.initial_user.clone();
        let (mut all, mut phys) = (Vec::with_capacity(n * self.steps.len()), Vec::new());
        for (k, s) in self.steps.iter().enumerate() {
            for &(i, v) in &s.user_changes {
                user[i as usize] = v;
            }
            all.extend_from_slice(&user);
            if let Some(p) = &s.physics {
                phys.push(k as f64);
                phys.extend_from_slice(p);
            }
        }
        (all, phys)
    }

    /// Number of recorded steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// True when no step was recorded.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Put `d` in the state the trace started from. Returns the user-input vector that
    /// [`InputTrace::replay_step`] updates step by step.
    pub fn set_initial(&self, m: &mjModel, d: &mut mjData) -> Vec<f64> {
        // SAFETY: `initial` came from mj_getState(SIG_ALL) on the same compiled model.
        unsafe {
            assert_eq!(
                mj_stateSize(m, SIG_ALL) as usize,
                self.initial.len(),
                "the trace was recorded on another model"
            );
            mj_setState(m, d, self.initial.as_ptr(), SIG_ALL);
        }
        self.initial_user.clone()
    }

    /// Apply step `k`'s inputs (0-based) to `d`; `user` is the vector [`InputTrace::set_initial`]
    /// returned. Call `mj_step` after it.
    pub fn replay_step(&self, k: usize, m: &mjModel, d: &mut mjData, user: &mut [f64]) {
        let s = &self.steps[k];
        if let Some(p) = &s.physics {
            // SAFETY: recorded with the same signature on the same model.
            unsafe { mj_setState(m, d, p.as_ptr(), SIG_PHYS) };
        }
        if !s.user_changes.is_empty() {
            for &(i, v) in &s.user_changes {
                user[i as usize] = v;
            }
            // SAFETY: `user` has mj_stateSize(m, SIG_USER) entries (from `set_initial`).
            unsafe { mj_setState(m, d, user.as_ptr(), SIG_USER) };
        }
    }

    /// Compare the final state of a replay with the recorded one, bitwise. On a difference, the
    /// field and first index (steps are not known here: see [`InputTrace::locate`]).
    pub fn check_final(&self, m: &mjModel, d: &mjData) -> Result<(), Divergence> {
        let now = get(m, d, SIG_ALL);
        if now.len() == self.last.len()
            && now.iter().zip(&self.last).all(|(a, b)| a.to_bits() == b.to_bits())
        {
            return Ok(());
        }
        // Name the field by its digest, then the index by the final vectors' layout:
        // SIG_ALL's vector starts with time, qpos, qvel, act (MuJoCo's state order).
        let d_now = digest(m, d);
        let recorded = self.steps.last().map(|s| s.digest).unwrap_or_default();
        let fi = (0..5).find(|&i| d_now[i] != recorded[i]).unwrap_or(0);
        let offsets = [0, 1, 1 + m.nq as usize, 1 + (m.nq + m.nv) as usize];
        let detail = (fi < 4)
            .then(|| {
                let live = fields(m, d)[fi];
                (0..live.len())
                    .find(|&j| live[j].to_bits() != self.last[offsets[fi] + j].to_bits())
                    .map(|j| (j, self.last[offsets[fi] + j], live[j]))
            })
            .flatten();
        Err(Divergence { step: 0, field: FIELDS[fi], detail })
    }

    /// Replay the whole trace on `d` (untimed), checking every step's digests: the first step
    /// and field that differ, or `None` when every step matched.
    pub fn locate(&self, m: &mjModel, d: &mut mjData) -> Option<Divergence> {
        let mut user = self.set_initial(m, d);
        for k in 0..self.steps.len() {
            self.replay_step(k, m, d, &mut user);
            // SAFETY: model and data are live and belong together.
            unsafe { mujoco_rs::mujoco_c::mj_step(m, d) };
            let now = digest(m, d);
            if let Some(fi) = (0..5).find(|&i| now[i] != self.steps[k].digest[i]) {
                return Some(Divergence { step: k as u64 + 1, field: FIELDS[fi], detail: None });
            }
        }
        None
    }

    /// Write the trace (little-endian binary).
    pub fn write_to(&self, w: &mut impl Write) -> io::Result<()> {
        let vec = |w: &mut dyn Write, v: &[f64]| -> io::Result<()> {
            w.write_all(&(v.len() as u64).to_le_bytes())?;
            for x in v {
                w.write_all(&x.to_le_bytes())?;
            }
            Ok(())
        };
        w.write_all(MAGIC)?;
        vec(w, &self.initial)?;
        vec(w, &self.initial_user)?;
        vec(w, &self.last)?;
        w.write_all(&(self.steps.len() as u64).to_le_bytes())?;
        for s in &self.steps {
            w.write_all(&(s.user_changes.len() as u32).to_le_bytes())?;
            for (i, v) in &s.user_changes {
                w.write_all(&i.to_le_bytes())?;
                w.write_all(&v.to_le_bytes())?;
            }
            match &s.physics {
                Some(p) => {
                    w.write_all(&[1])?;
                    vec(w, p)?;
                }
                None => w.write_all(&[0])?,
            }
            for x in s.digest {
                w.write_all(&x.to_le_bytes())?;
            }
        }
        Ok(())
    }

    /// Read a trace [`InputTrace::write_to`] wrote.
    pub fn read_from(r: &mut impl Read) -> io::Result<Self> {
        fn u64_(r: &mut dyn Read) -> io::Result<u64> {
            let mut b = [0u8; 8];
            r.read_exact(&mut b)?;
            Ok(u64::from_le_bytes(b))
        }
        fn vec(r: &mut dyn Read) -> io::Result<Vec<f64>> {
            let n = u64_(r)? as usize;
            (0..n).map(|_| u64_(r).map(f64::from_bits)).collect()
        }
        let mut magic = [0u8; 8];
        r.read_exact(&mut magic)?;
        if &magic != MAGIC {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "not a roqsim input trace"));
        }
        let initial = vec(r)?;
        let initial_user = vec(r)?;
        let last = vec(r)?;
        let n = u64_(r)? as usize;
        let mut steps = Vec::with_capacity(n);
        for _ in 0..n {
            let mut b4 = [0u8; 4];
            r.read_exact(&mut b4)?;
            let k = u32::from_le_bytes(b4) as usize;
            let mut user_changes = Vec::with_capacity(k);
            for _ in 0..k {
                r.read_exact(&mut b4)?;
                user_changes.push((u32::from_le_bytes(b4), f64::from_bits(u64_(r)?)));
            }
            let mut flag = [0u8; 1];
            r.read_exact(&mut flag)?;
            let physics = if flag[0] == 1 { Some(vec(r)?) } else { None };
            let mut digest = [0u64; 5];
            for x in &mut digest {
                *x = u64_(r)?;
            }
            steps.push(StepRecord { user_changes, physics, digest });
        }
        Ok(InputTrace { initial, initial_user, steps, last, ..Default::default() })
    }
}
