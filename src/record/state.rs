//! State samples: the physics state after a step, as the recording keeps it
//! (`roqsim_msgs/msg/StateSample`, CDR) and as replay compares it, field by field, bitwise.

use crate::context::SimContext;
use crate::record::cdr::{CdrReader, CdrWriter};

/// One state sample.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StateSample {
    /// Sim time (s).
    pub time: f64,
    /// Steps since the run started.
    pub step: u64,
    /// Steps since the last reset.
    pub tick: u64,
    /// Episode.
    pub episode: u32,
    /// mjData.qpos.
    pub qpos: Vec<f64>,
    /// mjData.qvel.
    pub qvel: Vec<f64>,
    /// mjData.act.
    pub act: Vec<f64>,
    /// mjData.ctrl.
    pub ctrl: Vec<f64>,
    /// mjData.mocap_pos (flattened).
    pub mocap_pos: Vec<f64>,
    /// mjData.mocap_quat (flattened, w x y z).
    pub mocap_quat: Vec<f64>,
    /// Entity names.
    pub entities: Vec<String>,
    /// Presence per entity.
    pub present: Vec<bool>,
}

/// Where two samples first differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// Field name (`qpos`, `time`, ...).
    pub field: &'static str,
    /// Index in the field (0 for scalars).
    pub index: usize,
    /// Recorded value.
    pub recorded: String,
    /// Replayed value.
    pub replayed: String,
}

impl StateSample {
    /// The state of `ctx` now, `step` steps into the run.
    pub fn capture(ctx: &SimContext, step: u64) -> Self {
        let d = ctx.data();
        let ents = ctx.entities.all();
        StateSample {
            time: ctx.sim_time(),
            step,
            tick: ctx.tick,
            episode: ctx.episode,
            qpos: d.qpos().to_vec(),
            qvel: d.qvel().to_vec(),
            act: d.act().to_vec(),
            ctrl: d.ctrl().to_vec(),
            mocap_pos: d.mocap_pos().iter().flatten().copied().collect(),
            mocap_quat: d.mocap_quat().iter().flatten().copied().collect(),
            entities: ents.iter().map(|e| e.name.clone()).collect(),
            present: ents.iter().map(|e| e.present).collect(),
        }
    }

    /// CDR bytes of the sample.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = CdrWriter::new();
        w.f64(self.time);
        w.u64(self.step);
        w.u64(self.tick);
        w.u32(self.episode);
        for v in [&self.qpos, &self.qvel, &self.act, &self.ctrl, &self.mocap_pos, &self.mocap_quat]
        {
            w.f64_seq(v);
        }
        w.string_seq(&self.entities);
        w.bool_seq(&self.present);
        w.finish()
    }

    /// Decode a sample.
    pub fn decode(b: &[u8]) -> Result<Self, String> {
        let mut r = CdrReader::new(b)?;
        let mut s = StateSample {
            time: r.f64()?,
            step: r.u64()?,
            tick: r.u64()?,
            episode: r.u32()?,
            ..Default::default()
        };
        s.qpos = r.f64_seq()?;
        s.qvel = r.f64_seq()?;
        s.act = r.f64_seq()?;
        s.ctrl = r.f64_seq()?;
        s.mocap_pos = r.f64_seq()?;
        s.mocap_quat = r.f64_seq()?;
        let n = r.u32()? as usize;
        s.entities = (0..n).map(|_| r.string()).collect::<Result<_, _>>()?;
        s.present = r.bool_seq()?;
        Ok(s)
    }

    /// The first field and index where `other` differs bitwise, or `None` when identical.
    pub fn first_divergence(&self, other: &StateSample) -> Option<Divergence> {
        let scalar =
            |field, a: String, b: String| Divergence { field, index: 0, recorded: a, replayed: b };
        if self.time.to_bits() != other.time.to_bits() {
            return Some(scalar("time", self.time.to_string(), other.time.to_string()));
        }
        if self.tick != other.tick {
            return Some(scalar("tick", self.tick.to_string(), other.tick.to_string()));
        }
        if self.episode != other.episode {
            return Some(scalar("episode", self.episode.to_string(), other.episode.to_string()));
        }
        for (field, a, b) in [
            ("qpos", &self.qpos, &other.qpos),
            ("qvel", &self.qvel, &other.qvel),
            ("act", &self.act, &other.act),
            ("ctrl", &self.ctrl, &other.ctrl),
            ("mocap_pos", &self.mocap_pos, &other.mocap_pos),
            ("mocap_quat", &self.mocap_quat, &other.mocap_quat),
        ] {
            if a.len() != b.len() {
                return Some(Divergence {
                    field,
                    index: a.len().min(b.len()),
                    recorded: format!("{} values", a.len()),
                    replayed: format!("{} values", b.len()),
                });
            }
            if let Some(i) = (0..a.len()).find(|&i| a[i].to_bits() != b[i].to_bits()) {
                return Some(Divergence {
                    field,
                    index: i,
                    recorded: format!("{:e}", a[i]),
                    replayed: format!("{:e}", b[i]),
                });
            }
        }
        if let Some(i) = (0..self.present.len().max(other.present.len()))
            .find(|&i| self.present.get(i) != other.present.get(i))
        {
            return Some(Divergence {
                field: "present",
                index: i,
                recorded: format!("{:?}", self.present.get(i)),
                replayed: format!("{:?}", other.present.get(i)),
            });
        }
        None
    }

    /// One line of JSON (what `roqsim state` prints).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "time": self.time,
            "step": self.step,
            "tick": self.tick,
            "episode": self.episode,
            "qpos": self.qpos,
            "qvel": self.qvel,
            "act": self.act,
            "ctrl": self.ctrl,
            "mocap_pos": self.mocap_pos,
            "mocap_quat": self.mocap_quat,
            "entities": self.entities,
            "present": self.present,
        })
    }
}
