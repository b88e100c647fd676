//! `gnss`: a GNSS receiver — the local ENU position of a body converted to WGS84, with a drifting
//! bias plus white noise, held between updates.
//!
//! Projection. The world frame is ENU (REP 103: x east, y north, z up) about `datum`. The fix is
//! the cheap equirectangular tangent-plane approximation: `lat = lat0 + north / R`,
//! `lon = lon0 + east / (R cos lat0)` (radians), `alt = alt0 + up`, with R = 6378137 m (the
//! WGS84 semi-major axis). Its error grows with the square of the offset from the datum and stays
//! well under a metre over the kilometre-scale extent a MuJoCo world holds — below this
//! receiver's own noise. It ignores the ellipsoid's flattening and treats geodetic altitude as
//! MSL; continental-range experiments need a real geodesy library, not this.
//!
//! Noise. Each ENU axis carries an Ornstein–Uhlenbeck bias with correlation time `bias_time`
//! plus white noise on top; the declared `horizontal_noise` / `vertical_noise` is the total
//! 1-sigma, split evenly in variance (bias and white term each σ/√2), so the fix's error has the
//! declared sigma and an autocorrelation `½·exp(−lag / bias_time)` beyond the first sample. The
//! bias starts each episode drawn from its stationary distribution and advances by the exact
//! discretisation `b ← b·e^(−Δ/τ) + σ_b·√(1 − e^(−2Δ/τ))·N(0, 1)` at every update (Δ = the
//! snapped update period). Velocity is the body's true world velocity plus white noise
//! (`velocity_noise` per axis). Draws come from `ctx.rng_for("gnss:<address>")` — the fix is a
//! pure function of (seed, episode, sim time) — and nothing is drawn when every sigma is 0.
//!
//! Held between updates: the fix is computed on the `rate` grid and constant in between, as a
//! receiver's is. `denied: true` publishes no fix at all: status `STATUS_NO_FIX`, NaN position,
//! covariance type unknown, and no velocity.
//!
//! Not modelled: multipath, ionospheric/tropospheric delay, constellation geometry
//! (`satellites`, `eph`, `epv` are declared constants, not computed DOP), RTK, receiver clock
//! error, acquisition time (the fix is there on the first update).
//!
//! Endpoints: `fix` (out, `sensor_msgs/msg/NavSatFix`) and `fix_velocity` (out,
//! `geometry_msgs/msg/TwistWithCovarianceStamped`, ENU), both at `rate` — the names and types
//! `ublox_gps` publishes; rename with `topics: {fix: gps/fix}`. Blackboard: `gnss:<address>` holds
//! a [`GnssReader`].

use std::collections::BTreeMap;

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_norway::Value;

use crate::context::payload::{NavSatFix, TwistCov};
use crate::context::{Endpoint, EndpointId, Payload, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::mujoco::frames::resolve_name;
use crate::plugin::ValidateConfig;
use crate::plugin::{typed_config, Hooks, Plugin, PluginArgs, PluginDescriptor};
use crate::plugins::shared::unprefixed;
use crate::spawn::frame_prefix;

/// The WGS84 semi-major axis (m): the radius of the equirectangular projection.
pub const EARTH_RADIUS: f64 = 6_378_137.0;

/// The world origin on Earth.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Datum {
    /// Latitude (deg, + north), within (−90, 90).
    pub lat: f64,
    /// Longitude (deg, + east), within [−180, 180].
    pub lon: f64,
    /// Altitude (m).
    #[serde(default)]
    pub alt: f64,
}

fn default_rate() -> f64 {
    10.0
}
fn default_h() -> f64 {
    0.5
}
fn default_v() -> f64 {
    1.0
}
fn default_vel() -> f64 {
    0.1
}
fn default_bias_time() -> f64 {
    60.0
}
fn default_sats() -> u32 {
    12
}
fn default_fix_type() -> u8 {
    3
}

/// Config of `gnss`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GnssConfig {
    /// REQUIRED: the world origin on Earth, `{lat, lon, alt}` (deg, deg, m).
    #[serde(default)]
    pub datum: Option<Datum>,
    /// The body whose position is measured (the model's own name). Default: the entity's root.
    #[serde(default)]
    pub body: Option<String>,
    /// Update rate (Hz), snapped to the physics grid. Default 10 (real GNSS is slow).
    #[serde(default = "default_rate")]
    pub rate: f64,
    /// Horizontal 1-sigma error (m), per axis (bias + white). Default 0.5.
    #[serde(default = "default_h")]
    pub horizontal_noise: f64,
    /// Vertical 1-sigma error (m) (bias + white). Default 1.0.
    #[serde(default = "default_v")]
    pub vertical_noise: f64,
    /// Velocity 1-sigma white noise (m/s) per axis. Default 0.1.
    #[serde(default = "default_vel")]
    pub velocity_noise: f64,
    /// Correlation time of the drifting position bias (s). Default 60.
    #[serde(default = "default_bias_time")]
    pub bias_time: f64,
    /// Satellites in view (a declared constant; on the reader). Default 12.
    #[serde(default = "default_sats")]
    pub satellites: u32,
    /// Reported horizontal accuracy (m): the covariance's east/north sigma. Default: horizontal_noise.
    #[serde(default)]
    pub eph: Option<f64>,
    /// Reported vertical accuracy (m): the covariance's up sigma. Default: vertical_noise.
    #[serde(default)]
    pub epv: Option<f64>,
    /// Fix type: 0–1 no fix, 2 2D, 3 3D (default), 4 DGPS/SBAS, 5 RTK float, 6 RTK fixed; sets
    /// NavSatStatus (−1 no fix, 0 fix, 1 SBAS, 2 GBAS).
    #[serde(default = "default_fix_type")]
    pub fix_type: u8,
    /// True: no fix at all (status NO_FIX, NaN position, no velocity), without removing the plugin.
    #[serde(default)]
    pub denied: bool,
    /// Transport scope. Default: the owning entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Frame the fix is stamped in. Default: the measured body's (unprefixed) name.
    #[serde(default)]
    pub frame_id: Option<String>,
    /// Topic renames by endpoint role: `{fix: gps/fix, fix_velocity: gps/vel}`.
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

impl ValidateConfig for GnssConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        match &self.datum {
            None => e.push(ConfigError::new(
                "datum",
                "required: the world origin on Earth, {lat, lon, alt} (deg, deg, m); the world frame is ENU about it",
            )),
            Some(d) => {
                if !(d.lat.is_finite() && d.lat.abs() < 90.0) {
                    e.push(ConfigError::new("datum.lat", format!("must be within (-90, 90) deg, got {}: the projection's east scale 1/cos(lat) diverges at a pole", d.lat)));
                }
                if !(d.lon.is_finite() && d.lon.abs() <= 180.0) {
                    e.push(ConfigError::new(
                        "datum.lon",
                        format!("must be within [-180, 180] deg, got {}", d.lon),
                    ));
                }
                if !d.alt.is_finite() {
                    e.push(ConfigError::new(
                        "datum.alt",
                        format!("must be finite (m), got {}", d.alt),
                    ));
                }
            }
        }
        e.extend(crate::plugin::check_rate("rate", self.rate));
        for (k, v) in [
            ("horizontal_noise", self.horizontal_noise),
            ("vertical_noise", self.vertical_noise),
            ("velocity_noise", self.velocity_noise),
            ("eph", self.eph.unwrap_or(0.0)),
            ("epv", self.epv.unwrap_or(0.0)),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                e.push(ConfigError::new(k, format!("must be a finite number >= 0, got {v}")));
            }
        }
        if !(self.bias_time.is_finite() && self.bias_time > 0.0) {
            e.push(ConfigError::new(
                "bias_time",
                format!("must be > 0 (s), got {}: the bias's correlation time", self.bias_time),
            ));
        }
        if self.fix_type > 6 {
            e.push(ConfigError::new(
                "fix_type",
                format!("must be 0..6 (0-1 no fix, 2 2D, 3 3D, 4 DGPS, 5 RTK float, 6 RTK fixed), got {}", self.fix_type),
            ));
        }
        if let Some(f) = &self.frame_id {
            if f.trim().is_empty() {
                e.push(ConfigError::new(
                    "frame_id",
                    "must not be empty (omit it to use the body's name)",
                ));
            } else if let Err(m) = crate::context::claims::check_frame_id(f.trim_start_matches('/'))
            {
                e.push(ConfigError::new("frame_id", m));
            }
        }
        e.extend(crate::plugins::shared::check_topics(&self.topics, &["fix", "fix_velocity"]));
        e
    }
}

impl GnssConfig {
    /// NavSatStatus.status for the fix type.
    pub fn status(&self) -> i8 {
        match self.fix_type {
            0 | 1 => -1,
            2 | 3 => 0,
            4 => 1,
            _ => 2,
        }
    }
}

/// The latest fix, with what NavSatFix cannot carry.
#[derive(Debug, Clone, PartialEq)]
pub struct GnssReading {
    /// What `fix` published.
    pub fix: NavSatFix,
    /// What `fix_velocity` published (None while denied).
    pub velocity: Option<TwistCov>,
    /// The body's true ENU position (m) at the update.
    pub truth: [f64; 3],
    /// The drifting bias (m, ENU) at the update.
    pub bias: [f64; 3],
    /// Satellites in view (declared).
    pub satellites: u32,
}

/// In-process access to a receiver's latest fix (blackboard `gnss:<address>`).
pub type GnssReader = crate::plugins::shared::latest::Latest<GnssReading>;

/// Blackboard key of a receiver's reader.
pub fn reader_key(address: &str) -> String {
    format!("gnss:{address}")
}

/// The registry entry.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "gnss",
        "GNSS receiver: a body's ENU position as WGS84 NavSatFix (equirectangular about the datum) + velocity, Ornstein-Uhlenbeck bias plus white noise, held between updates, `denied`.",
        GnssConfig;
        create
    )
}

fn create(v: &Value, args: &PluginArgs) -> Result<Box<dyn Plugin>, Vec<ConfigError>> {
    let cfg: GnssConfig =
        typed_config(v).map_err(|e| crate::key_ranges::key_ranges::<GnssConfig>(v, e))?;
    let mut e = cfg.validate();
    if args.owner.is_none() && cfg.body.is_none() {
        e.push(ConfigError::new(
            "",
            "a gnss at the top of a document has nothing to measure (requires_owner): nest it under the entity that carries the antenna, or name the `body` it measures",
        ));
    }
    if !e.is_empty() {
        return Err(e);
    }
    Ok(Box::new(Gnss::new(cfg, args)))
}

/// The `gnss` plugin.
pub struct Gnss {
    cfg: GnssConfig,
    datum: Datum,
    address: String,
    owner: Option<String>,
    rng_name: String,
    body_id: usize,
    frame_id: String,
    fix_ep: EndpointId,
    vel_ep: EndpointId,
    /// Update period (s), snapped.
    period: f64,
    bias: [f64; 3],
    reader: GnssReader,
}

impl Gnss {
    /// Construct from a validated config.
    pub fn new(cfg: GnssConfig, args: &PluginArgs) -> Self {
        Gnss {
            datum: cfg.datum.expect("validated"),
            address: args.address.clone(),
            owner: args.owner.clone(),
            rng_name: format!("gnss:{}", args.address),
            body_id: 0,
            frame_id: String::new(),
            fix_ep: 0,
            vel_ep: 0,
            period: 0.0,
            bias: [0.0; 3],
            reader: GnssReader::default(),
            cfg,
        }
    }

    /// The per-axis (E, N, U) bias and white sigmas (m).
    fn sigmas(&self) -> [f64; 3] {
        let h = self.cfg.horizontal_noise / std::f64::consts::SQRT_2;
        let v = self.cfg.vertical_noise / std::f64::consts::SQRT_2;
        [h, h, v]
    }

    fn draws(&self) -> bool {
        self.cfg.horizontal_noise > 0.0
            || self.cfg.vertical_noise > 0.0
            || self.cfg.velocity_noise > 0.0
    }

    /// WGS84 (lat, lon, alt) of an ENU point (m) about the datum.
    pub fn to_wgs84(datum: &Datum, enu: [f64; 3]) -> (f64, f64, f64) {
        let lat0 = datum.lat.to_radians();
        let lat = datum.lat + (enu[1] / EARTH_RADIUS).to_degrees();
        let lon = datum.lon + (enu[0] / (EARTH_RADIUS * lat0.cos())).to_degrees();
        (lat, lon, datum.alt + enu[2])
    }

    fn update(&mut self, ctx: &mut SimContext) -> Result<GnssReading, String> {
        let d = ctx.data();
        let truth = d.xpos()[self.body_id];
        let v6 = d.object_velocity(MjtObjBase::mjOBJ_BODY, self.body_id, false);
        let vel = [v6[3], v6[4], v6[5]];
        let stamp = ctx.sim_time();
        let s = self.sigmas();
        let mut white = [0.0; 3];
        let mut vnoise = [0.0; 3];
        if self.draws() {
            let mut rng = ctx.rng_for(&self.rng_name).map_err(|e| e.to_string())?;
            let phi = (-self.period / self.cfg.bias_time).exp();
            let q = (1.0 - phi * phi).sqrt();
            for (b, sk) in self.bias.iter_mut().zip(s) {
                *b = *b * phi + rng.normal(sk * q);
            }
            for w in white.iter_mut().zip(s) {
                *w.0 = rng.normal(w.1);
            }
            for v in vnoise.iter_mut() {
                *v = rng.normal(self.cfg.velocity_noise);
            }
        }
        let eph = self.cfg.eph.unwrap_or(self.cfg.horizontal_noise);
        let epv = self.cfg.epv.unwrap_or(self.cfg.vertical_noise);
        let fix = if self.cfg.denied {
            NavSatFix {
                stamp,
                frame_id: self.frame_id.clone(),
                status: -1,
                service: 1,
                latitude: f64::NAN,
                longitude: f64::NAN,
                altitude: f64::NAN,
                position_covariance: [0.0; 9],
                position_covariance_type: 0,
            }
        } else {
            let enu = [0, 1, 2].map(|k| truth[k] + self.bias[k] + white[k]);
            let (lat, lon, alt) = Self::to_wgs84(&self.datum, enu);
            let mut cov = [0.0; 9];
            cov[0] = eph * eph;
            cov[4] = eph * eph;
            cov[8] = epv * epv;
            NavSatFix {
                stamp,
                frame_id: self.frame_id.clone(),
                status: self.cfg.status(),
                service: 1,
                latitude: lat,
                longitude: lon,
                altitude: alt,
                position_covariance: cov,
                position_covariance_type: 2,
            }
        };
        let velocity = (!self.cfg.denied).then(|| {
            let mut cov = [0.0; 36];
            let s2 = self.cfg.velocity_noise * self.cfg.velocity_noise;
            for k in 0..3 {
                cov[7 * k] = s2;
            }
            // angular velocity is not measured: a large variance, as GNSS drivers publish
            for k in 3..6 {
                cov[7 * k] = 1e6;
            }
            TwistCov {
                stamp,
                frame_id: self.frame_id.clone(),
                linear: [0, 1, 2].map(|k| vel[k] + vnoise[k]),
                angular: [0.0; 3],
                covariance: cov,
            }
        });
        Ok(GnssReading { fix, velocity, truth, bias: self.bias, satellites: self.cfg.satellites })
    }
}

impl Plugin for Gnss {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let ent = ctx.entities.resolve_owner(self.owner.as_deref()).cloned();
        let prefix = ent.as_ref().map(|e| e.prefix.clone()).unwrap_or_default();
        let body_name = match (&self.cfg.body, &ent) {
            (Some(b), _) => b.clone(),
            (None, Some(e)) => unprefixed(&e.body, &e.prefix).to_string(),
            (None, None) => unreachable!("refused at load: a top-level gnss names its body"),
        };
        self.body_id = resolve_name(
            ctx.model(),
            MjtObjBase::mjOBJ_BODY,
            "body",
            &body_name,
            &prefix,
            ent.as_ref(),
        )?;
        self.frame_id = self.cfg.frame_id.clone().unwrap_or(body_name);
        let ns = self
            .cfg
            .namespace
            .clone()
            .or_else(|| ent.as_ref().map(|e| e.namespace.clone()))
            .unwrap_or_default();
        let owner = ent.as_ref().map(|e| e.name.as_str()).or(self.owner.as_deref());
        let mk = |role: &str, ty: &str| {
            let mut ep = Endpoint::out(role)
                .owner(owner)
                .namespace(&ns)
                .frame_prefix(&frame_prefix(&ns))
                .rate(self.cfg.rate)
                .hint("ros2", "type", ty)
                .hint("ros2", "qos", "sensor_data");
            if let Some(t) = self.cfg.topics.get(role) {
                ep = ep.hint("ros2", "topic", t.clone());
            }
            ep
        };
        self.fix_ep = ctx.interface.add(mk("fix", "sensor_msgs/msg/NavSatFix"));
        self.vel_ep =
            ctx.interface.add(mk("fix_velocity", "geometry_msgs/msg/TwistWithCovarianceStamped"));
        let snapped = ctx.interface.get(self.fix_ep).snapped.expect("rate set");
        self.period = snapped.every_steps as f64 * ctx.dt;
        ctx.blackboard.set(reader_key(&self.address), self.reader.clone());
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.reader.clear();
        // Each episode's bias starts from its stationary distribution (distinct stream name, so
        // it never repeats the first update's draws).
        self.bias = [0.0; 3];
        if self.cfg.horizontal_noise > 0.0 || self.cfg.vertical_noise > 0.0 {
            let mut rng =
                ctx.rng_for(&format!("{}:bias0", self.rng_name)).map_err(|e| e.to_string())?;
            let s = self.sigmas();
            for (b, sk) in self.bias.iter_mut().zip(s) {
                *b = rng.normal(sk);
            }
        }
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if !ctx.interface.is_due(self.fix_ep, ctx.tick) {
            return Ok(());
        }
        let r = self.update(ctx)?;
        ctx.interface.publish(self.fix_ep, ctx.tick, Payload::NavSatFix(r.fix.clone()));
        if let Some(v) = &r.velocity {
            ctx.interface.publish(self.vel_ep, ctx.tick, Payload::TwistCov(v.clone()));
        }
        self.reader.set(r);
        Ok(())
    }
}
