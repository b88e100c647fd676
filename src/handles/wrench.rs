//! A force/torque sensor's reader: the wrench a `force_torque` plugin measures, read on demand by
//! whoever needs it in-process (a force limit, a Cartesian force controller, a task plugin) from
//! the blackboard (`ft:<label>`). The sensor plugin builds it in `configure`; its endpoint
//! publishes through the same reader, so both see the same wrench in one step.

use std::cell::RefCell;
use std::rc::Rc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::Wrench;
use crate::context::SimContext;

/// Blackboard key of a sensor's reader: `ft:<label>`.
pub fn reader_key(label: &str) -> String {
    format!("ft:{label}")
}

/// The frame a wrench is reported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FtFrame {
    /// The site frame (MuJoCo's raw reading).
    Sensor,
    /// The owning entity's base body frame.
    Base,
    /// The world frame.
    World,
}

#[derive(Debug, Default)]
pub(crate) struct Shared {
    offset: Option<[f64; 6]>,
    tare_pending: bool,
    tared_at: Option<f64>,
    auto_done: bool,
}

/// Reads the wrench on demand (blackboard `ft:<label>`); the endpoint uses the same reader.
#[derive(Debug, Clone)]
pub struct WrenchReader {
    pub(crate) force_adr: usize,
    pub(crate) torque_adr: usize,
    pub(crate) site: usize,
    pub(crate) base_body: usize,
    pub(crate) frame: FtFrame,
    pub(crate) frame_id: String,
    pub(crate) invert: bool,
    pub(crate) noise: (f64, f64),
    pub(crate) rng_name: String,
    pub(crate) tare_at: Option<f64>,
    pub(crate) shared: Rc<RefCell<Shared>>,
}

impl WrenchReader {
    /// The frame the wrench is reported in.
    pub fn frame(&self) -> FtFrame {
        self.frame
    }
    /// True when the reading is inverted (`invert: true`): the force the tool applies to the
    /// sensor, the opposite of what the tool applies to its environment in a static contact.
    pub fn inverted(&self) -> bool {
        self.invert
    }
    /// What the reading measures: `"force applied BY the tool on the sensor"` (inverted) or
    /// `"force applied ON the tool by its parent"` (raw), so a consumer never has to assume.
    pub fn measures(&self) -> &'static str {
        if self.invert {
            "force the tool and its load apply to the sensor (inverted)"
        } else {
            "force the sensor's parent applies to the tool subtree (MuJoCo raw)"
        }
    }
    /// Zero the sensor at the next read (in-process door onto the tare).
    pub fn tare(&self) {
        self.shared.borrow_mut().tare_pending = true;
    }
    /// Sim time of the last tare, if any this episode.
    pub fn tared_at(&self) -> Option<f64> {
        self.shared.borrow().tared_at
    }
    fn raw(&self, ctx: &SimContext) -> [f64; 6] {
        let sd = ctx.data().sensordata();
        let s = if self.invert { -1.0 } else { 1.0 };
        let f = &sd[self.force_adr..self.force_adr + 3];
        let t = &sd[self.torque_adr..self.torque_adr + 3];
        [s * f[0], s * f[1], s * f[2], s * t[0], s * t[1], s * t[2]]
    }
    fn capture(&self, ctx: &SimContext) {
        let raw = self.raw(ctx);
        let mut sh = self.shared.borrow_mut();
        sh.offset = Some(raw);
        sh.tare_pending = false;
        sh.tared_at = Some(ctx.sim_time());
    }
    /// Tare now (the service's implementation): capture the current raw reading as the offset.
    pub fn tare_now(&self, ctx: &SimContext) {
        self.capture(ctx);
    }
    /// Forget the offset and re-arm `tare_at_s` (reset).
    pub fn rearm(&self) {
        *self.shared.borrow_mut() = Shared::default();
    }
    /// The wrench now: (force N, torque N·m) in the configured frame, tared, with noise.
    pub fn read(&self, ctx: &SimContext) -> Result<Wrench, String> {
        self.read_in(ctx, self.frame)
    }
    /// The same wrench expressed in `frame` (a controller working in the world frame reads
    /// [`FtFrame::World`] whatever the sensor reports in); `frame_id` stays the configured one.
    pub fn read_in(&self, ctx: &SimContext, frame: FtFrame) -> Result<Wrench, String> {
        let now = ctx.sim_time();
        let (pending, auto) = {
            let sh = self.shared.borrow();
            (sh.tare_pending, !sh.auto_done && self.tare_at.is_some_and(|t| now >= t - 1e-9))
        };
        if pending || auto {
            self.capture(ctx);
            if auto {
                self.shared.borrow_mut().auto_done = true;
            }
        }
        let mut w = self.raw(ctx);
        if let Some(o) = self.shared.borrow().offset {
            for i in 0..6 {
                w[i] -= o[i];
            }
        }
        if self.noise.0 > 0.0 || self.noise.1 > 0.0 {
            let mut rng = ctx.rng_for(&self.rng_name).map_err(|e| e.to_string())?;
            for (i, x) in w.iter_mut().enumerate() {
                *x += rng.normal(if i < 3 { self.noise.0 } else { self.noise.1 });
            }
        }
        let d = ctx.data();
        let r = d.site_xmat()[self.site]; // site → world, row-major
        let to_world = |v: [f64; 3]| {
            [0, 1, 2].map(|i| r[3 * i] * v[0] + r[3 * i + 1] * v[1] + r[3 * i + 2] * v[2])
        };
        let (mut f, mut t) = ([w[0], w[1], w[2]], [w[3], w[4], w[5]]);
        match frame {
            FtFrame::Sensor => {}
            FtFrame::World => {
                f = to_world(f);
                t = to_world(t);
            }
            FtFrame::Base => {
                let b = d.xmat()[self.base_body];
                let to_base = |v: [f64; 3]| {
                    [0, 1, 2].map(|i| b[i] * v[0] + b[3 + i] * v[1] + b[6 + i] * v[2])
                };
                f = to_base(to_world(f));
                t = to_base(to_world(t));
            }
        }
        Ok(Wrench { stamp: now, frame_id: self.frame_id.clone(), force: f, torque: t })
    }
}
