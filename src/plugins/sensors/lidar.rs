//! `lidar`: a 2D laser scanner by batched ray casting through the one raycast seam
//! ([`crate::mujoco::raycast::RayBatch::cast`], no GL)
//!
//! Geometry. Rays are cast from a site, in the site's xy plane (the scan plane), ray `i` at
//! bearing `angle_min + i * angle_increment` counter-clockwise from the site's +x, with
//! `angle_increment = (angle_max - angle_min) / (rays - 1)`: the first ray at `angle_min`, the last
//! exactly at `angle_max` (the layout every 2D scanner driver publishes). The directions are
//! rotated by the site's world orientation on every scan, so a scanner on a moving or tilting
//! body scans in its own plane. Static geoms (walls) are included; the geoms of `exclude_body`
//! (the device's own housing) and of absent entities (the seam's default mask) are not.
//!
//! What a ray publishes (REP 117 unless the device says otherwise): a hit nearer than
//! `detection_min` is `too_close` (-inf), no hit within `detection_max` is `no_return` (+inf), a
//! hit in between is its distance. Noise (`range_stddev`, `range_stddev_relative`) is drawn on the
//! true distance of measured and raw too-close returns, floored at 0 and quantised to
//! `range_resolution`; it never re-classifies a ray. `dropout_percent` turns that share of rays per
//! scan into `no_return`. Draws come from `ctx.rng_for("lidar:<address>")`.
//!
//! Endpoints: `scan` (out, `sensor_msgs/msg/LaserScan`, QoS `sensor_data`) at `rate_hz` snapped
//! to the physics grid, and — with `emit_static_tf` — `tf_static` (a `Transforms` payload with the
//! `tf: static` hint) carrying `tf_parent -> frame_id` measured from the compiled model, published
//! at every reset. Blackboard: `lidar:<address>` holds a [`LidarReader`] of the latest scan.

use std::collections::BTreeMap;
use std::f64::consts::TAU;

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::LaserScan;
use crate::context::{Endpoint, EndpointId, Payload, SimContext};
use crate::engine::rates::snap_rate;
use crate::error::{ConfigError, HookResult};
use crate::handles::sensor_fault::{self, FaultAllowlist, FaultBlock, FaultSwitch, Refusal};
use crate::mujoco::frames::resolve_name;
use crate::mujoco::raycast::RayBatch;
use crate::plugin::{Hooks, Plugin, PluginArgs, ValidateConfig};
use crate::plugins::shared::ray_mount::{site_plane_dirs, MountSpec, MountTf};
use crate::plugins::shared::scan::{RangeValue, RayKeys, ScanParams, Special};
use crate::spawn::frame_prefix;

/// Keys a lidar's `fault:` block may write: the ones read on every scan (plus
/// `too_close`/`no_return`, which are substituted per ray per scan). Everything else is refused by
/// name, with the reason.
pub const FAULT_ALLOWLIST: FaultAllowlist = FaultAllowlist {
    sensor: "lidar",
    per_frame: &[
        "range_stddev",
        "range_stddev_relative",
        "range_stddev_relative_from",
        "range_resolution",
        "dropout_percent",
        "too_close",
        "no_return",
        "detection_min",
        "detection_max",
        "range_min",
        "max_range",
        "rate_hz",
    ],
    refused: &[
        ("rays", Refusal::Layout("it sets a LaserScan's length")),
        ("angle_min", Refusal::Layout("it sets the bearing a LaserScan's indices mean")),
        ("angle_max", Refusal::Layout("it sets the bearing a LaserScan's indices mean")),
        ("site", Refusal::ConfiguredOnce),
        ("frame_id", Refusal::ConfiguredOnce),
        ("exclude_body", Refusal::ConfiguredOnce),
        ("namespace", Refusal::ConfiguredOnce),
        ("emit_static_tf", Refusal::ConfiguredOnce),
        ("tf_parent", Refusal::ConfiguredOnce),
        ("lazy", Refusal::ConfiguredOnce),
        ("topics", Refusal::ConfiguredOnce),
    ],
};

fn default_rays() -> u32 {
    360
}
fn default_rate() -> f64 {
    10.0
}
fn default_range_min() -> f64 {
    0.164
}
fn default_max_range() -> f64 {
    20.0
}
fn default_too_close() -> RangeValue {
    RangeValue::Word("-inf".into())
}
fn default_no_return() -> RangeValue {
    RangeValue::Word("+inf".into())
}

/// Most rays a 2D scan may have (a 0.01° scanner has 36,000).
pub const MAX_RAYS: u32 = 100_000;

/// Config of `lidar`. Names (`site`, `exclude_body`,
/// `tf_parent`) are the model's own, unprefixed: they resolve under the prefix of the entity the
/// entry is nested under (none at the top of a document).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LidarConfig {
    /// Transport scope of the endpoints. Default: the owning entity's namespace ("" at top level).
    #[serde(default)]
    pub namespace: Option<String>,
    /// REQUIRED: the site the rays are cast from; its xy plane is the scan plane, its +x bearing 0.
    #[serde(default)]
    pub site: Option<String>,
    /// Frame the scan is stamped in. Default: the site's name.
    #[serde(default)]
    pub frame_id: Option<String>,
    /// Scan rate (Hz), snapped to the physics grid (10 Hz at 0.002 s = every 50 steps). Default 10.
    #[serde(default = "default_rate")]
    pub rate_hz: f64,
    /// Body whose geoms the rays ignore: the scanner's own housing (default: none — any other
    /// robot geometry in the scan plane is a real return).
    #[serde(default)]
    pub exclude_body: Option<String>,
    /// Percentage of rays (per ray, per scan) dropped to `no_return`, 0..100. Default 0.
    #[serde(default)]
    pub dropout_percent: f64,
    /// Publish the static mount transform `tf_parent -> frame_id`. Default true; a device mounted
    /// by spawn_sensor sets false (the mount publishes the chain).
    #[serde(default = "crate::plugin::yes")]
    pub emit_static_tf: bool,
    /// Parent frame of the static transform: a body (or site) of the entity. Default: the root
    /// body of the carrying entity, else the resolved `exclude_body`, else `world`.
    #[serde(default)]
    pub tf_parent: Option<String>,
    /// Skip scanning while the transport reports no subscriber. Default false.
    #[serde(default)]
    pub lazy: bool,
    /// Topic renames by endpoint role: `{scan: scan2}` (relative, inside the namespace) or
    /// `{scan: /front/scan}` (absolute, hardwired).
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
    /// Number of rays (≥ 2). Default 360.
    #[serde(default = "default_rays")]
    pub rays: u32,
    /// Bearing of the first ray (rad). Default 0.
    #[serde(default)]
    pub angle_min: f64,
    /// Bearing of the last ray (rad), inclusive. Default: `angle_min + 2π (rays − 1) / rays`, a
    /// full turn with no bearing published twice.
    #[serde(default)]
    pub angle_max: Option<f64>,
    /// Header `range_min` (m). Default 0.164.
    #[serde(default = "default_range_min")]
    pub range_min: f64,
    /// Header `range_max` (m). Default 20.
    #[serde(default = "default_max_range")]
    pub max_range: f64,
    /// Nearest distance measured (m); a nearer hit is `too_close`. Default: `range_min`.
    #[serde(default)]
    pub detection_min: Option<f64>,
    /// Farthest distance measured (m); nothing within it is `no_return`. Default: `max_range`.
    #[serde(default)]
    pub detection_max: Option<f64>,
    /// Published for a too-close hit: `-inf` (default, REP 117), `+inf`, `nan`, `raw` (the true
    /// distance, with noise) or a number (m).
    #[serde(default = "default_too_close")]
    pub too_close: RangeValue,
    /// Published where nothing is measured: `+inf` (default, REP 117), `nan` or a number (m).
    #[serde(default = "default_no_return")]
    pub no_return: RangeValue,
    /// Gaussian range sigma (m). Default 0.
    #[serde(default)]
    pub range_stddev: f64,
    /// Sigma as a fraction of the true distance at and beyond `range_stddev_relative_from`
    /// (0 = constant sigma). Default 0.
    #[serde(default)]
    pub range_stddev_relative: f64,
    /// Distance (m) from which the relative sigma applies; nearer, the sigma is `range_stddev`.
    #[serde(default)]
    pub range_stddev_relative_from: f64,
    /// Quantisation step of a published distance (m), applied after flooring at 0; 0 = continuous.
    #[serde(default)]
    pub range_resolution: f64,
    /// Optional: the per-frame values this lidar takes while degraded (switched by a scenario;
    /// module `sensor_fault`). Only per-frame keys are accepted: range_stddev,
    /// range_stddev_relative(_from), range_resolution, dropout_percent, too_close, no_return,
    /// detection_min/max, range_min, max_range, rate_hz.
    #[serde(default)]
    pub fault: Option<FaultBlock>,
}

/// The fault block, typed: every per-frame key, all optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LidarFault {
    range_stddev: Option<f64>,
    range_stddev_relative: Option<f64>,
    range_stddev_relative_from: Option<f64>,
    range_resolution: Option<f64>,
    dropout_percent: Option<f64>,
    too_close: Option<RangeValue>,
    no_return: Option<RangeValue>,
    detection_min: Option<f64>,
    detection_max: Option<f64>,
    range_min: Option<f64>,
    max_range: Option<f64>,
    rate_hz: Option<f64>,
}

impl LidarConfig {
    /// The bearing of the last ray (rad): `angle_max`, else a full turn with no repeated bearing.
    pub fn angle_max(&self) -> f64 {
        self.angle_max.unwrap_or(
            self.angle_min + TAU * (self.rays.max(1) as f64 - 1.0) / self.rays.max(1) as f64,
        )
    }

    /// Angle between rays (rad).
    pub fn angle_increment(&self) -> f64 {
        (self.angle_max() - self.angle_min) / (self.rays as f64 - 1.0)
    }

    /// The per-ray keys, as every ray sensor checks and applies them.
    pub fn ray_keys(&self) -> RayKeys {
        RayKeys {
            rate_hz: self.rate_hz,
            dropout_percent: self.dropout_percent,
            range_min: self.range_min,
            max_range: self.max_range,
            detection_min: self.detection_min,
            detection_max: self.detection_max,
            too_close: self.too_close.clone(),
            no_return: self.no_return.clone(),
            range_stddev: self.range_stddev,
            range_stddev_relative: self.range_stddev_relative,
            range_stddev_relative_from: self.range_stddev_relative_from,
            range_resolution: self.range_resolution,
        }
    }

    /// Resolve and check the per-frame values.
    pub fn params(&self) -> Result<ScanParams, Vec<ConfigError>> {
        self.ray_keys().params()
    }

    /// The config with the fault block's values written over it (`None` without a block).
    fn degraded(&self) -> Result<Option<LidarConfig>, Vec<ConfigError>> {
        let Some(block) = &self.fault else { return Ok(None) };
        let f: LidarFault = sensor_fault::parse(block, &FAULT_ALLOWLIST)?;
        let mut c = self.clone();
        c.fault = None;
        macro_rules! over {
            ($($k:ident),*) => {$(
                if let Some(v) = f.$k.clone() { c.$k = v; }
            )*};
        }
        over!(
            range_stddev,
            range_stddev_relative,
            range_stddev_relative_from,
            range_resolution,
            dropout_percent,
            too_close,
            no_return,
            range_min,
            max_range,
            rate_hz
        );
        if f.detection_min.is_some() {
            c.detection_min = f.detection_min;
        }
        if f.detection_max.is_some() {
            c.detection_max = f.detection_max;
        }
        Ok(Some(c))
    }

    /// The degraded per-frame values, checked (errors at `fault.<key>`).
    pub fn fault_params(&self) -> Result<Option<ScanParams>, Vec<ConfigError>> {
        match self.degraded()? {
            None => Ok(None),
            Some(c) => c.params().map(Some).map_err(|es| {
                es.into_iter()
                    .map(|x| {
                        ConfigError::new(
                            sensor_fault::prefix_path(&x.path),
                            format!("in the fault block: {}", x.message),
                        )
                    })
                    .collect()
            }),
        }
    }
}

impl ValidateConfig for LidarConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        match &self.site {
            None => e.push(ConfigError::new("site", "required: the site the rays are cast from (its xy plane is the scan plane, +x is bearing 0)")),
            Some(s) if s.trim().is_empty() => e.push(ConfigError::new("site", "must name a site of the model")),
            _ => {}
        }
        if self.rays < 2 {
            e.push(ConfigError::new(
                "rays",
                format!("must be >= 2, got {}: the layout puts the first ray at angle_min and the last at angle_max", self.rays),
            ));
        } else if self.rays > MAX_RAYS {
            e.push(ConfigError::new(
                "rays",
                format!("must be <= {MAX_RAYS}, got {}: a 2D scan of more rays than that is no real device (and the buffers would not fit)", self.rays),
            ));
        }
        if !self.angle_min.is_finite() {
            e.push(ConfigError::new(
                "angle_min",
                format!("must be finite (rad), got {}", self.angle_min),
            ));
        }
        if let Some(a) = self.angle_max {
            if !a.is_finite() {
                e.push(ConfigError::new("angle_max", format!("must be finite (rad), got {a}")));
            } else if a <= self.angle_min {
                e.push(ConfigError::new(
                    "angle_max",
                    format!("angle_max ({a}) must be greater than angle_min ({}): rays run counter-clockwise from angle_min to angle_max inclusive", self.angle_min),
                ));
            } else if a - self.angle_min > TAU + 1e-9 {
                e.push(ConfigError::new(
                    "angle_max",
                    format!("angle_max - angle_min = {} rad spans more than a full turn (2π); bearings would repeat", a - self.angle_min),
                ));
            }
        }
        if let Some(f) = &self.frame_id {
            if f.trim().is_empty() {
                e.push(ConfigError::new(
                    "frame_id",
                    "must not be empty (omit it to use the site's name)",
                ));
            }
        }
        for (k, v) in &self.topics {
            if k != "scan" {
                e.push(ConfigError::new(
                    format!("topics.{k}"),
                    "unknown endpoint role; a lidar has one: `scan`",
                ));
            } else if v.trim().is_empty() || v.trim() == "/" {
                e.push(ConfigError::new("topics.scan", "must be a topic name (relative renames inside the namespace, absolute `/x` hardwires)"));
            }
        }
        if let Err(es) = self.params() {
            e.extend(es);
        } else if let Err(es) = self.fault_params() {
            e.extend(es);
        }
        e
    }
}

/// In-process access to a lidar's latest scan (blackboard `lidar:<address>`).
pub type LidarReader = crate::plugins::shared::latest::Latest<LaserScan>;

/// Blackboard key of a lidar's reader.
pub fn reader_key(address: &str) -> String {
    format!("lidar:{address}")
}

/// The `lidar` plugin.
pub struct Lidar {
    cfg: LidarConfig,
    address: String,
    owner: Option<String>,
    nominal: ScanParams,
    degraded: Option<ScanParams>,
    /// Degraded gate spacing (steps) when the fault changes the rate.
    degraded_every: Option<u64>,
    fault: FaultSwitch,
    /// The fault switch's SetBool endpoint (with a `fault:` block).
    fault_service: Option<sensor_fault::FaultService>,
    rng_name: String,
    // resolved at configure
    site_id: usize,
    exclude_id: Option<usize>,
    frame_id: String,
    cos_sin: Vec<(f64, f64)>,
    batch: RayBatch,
    scan_ep: EndpointId,
    mount: Option<MountTf>,
    scan_time: f32,
    reader: LidarReader,
}

impl Lidar {
    /// Construct from a validated config.
    pub fn new(cfg: LidarConfig, args: &PluginArgs) -> Self {
        let nominal = cfg.params().expect("validated");
        let degraded = cfg.fault_params().expect("validated");
        let n = cfg.rays as usize;
        Lidar {
            address: args.address.clone(),
            owner: args.owner.clone(),
            nominal,
            degraded,
            degraded_every: None,
            fault: FaultSwitch::default(),
            fault_service: None,
            rng_name: format!("lidar:{}", args.address),
            site_id: 0,
            exclude_id: None,
            frame_id: String::new(),
            cos_sin: Vec::new(),
            batch: RayBatch::new(n),
            scan_ep: 0,
            mount: None,
            scan_time: 0.0,
            reader: LidarReader::default(),
            cfg,
        }
    }

    /// The per-frame values in force (degraded while the fault switch is on).
    pub fn active(&self) -> &ScanParams {
        match (&self.degraded, self.fault.is_on()) {
            (Some(d), true) => d,
            _ => &self.nominal,
        }
    }

    fn due(&self, ctx: &SimContext) -> bool {
        match (self.degraded_every, self.fault.is_on()) {
            (Some(k), true) => {
                let ep = ctx.interface.get(self.scan_ep);
                !(ep.lazy && ep.has_subscribers == Some(false)) && ctx.tick % k == 0
            }
            _ => ctx.interface.is_due(self.scan_ep, ctx.tick),
        }
    }

    /// Cast one scan now and return it (also what post_step publishes on due steps).
    pub fn scan(&mut self, ctx: &mut SimContext) -> Result<LaserScan, String> {
        let p = self.active().clone();
        let (origin, m) = {
            let d = ctx.data();
            (d.site_xpos()[self.site_id], d.site_xmat()[self.site_id])
        };
        site_plane_dirs(&mut self.batch, &m, &self.cos_sin);
        self.batch.cast_within(
            ctx.data_mut(),
            origin,
            self.exclude_id,
            None,
            true,
            p.detection_max,
        );
        let mut rng = if p.draws() {
            Some(ctx.rng_for(&self.rng_name).map_err(|e| e.to_string())?)
        } else {
            None
        };
        let n = self.batch.len();
        let mut ranges = Vec::with_capacity(n);
        for i in 0..n {
            if p.dropout > 0.0 {
                if let Some(r) = rng.as_mut() {
                    if r.uniform() < p.dropout {
                        ranges.push(p.no_return);
                        continue;
                    }
                }
            }
            let d = self.batch.dist()[i];
            let v = if d < 0.0 || d > p.detection_max {
                p.no_return
            } else if d < p.detection_min {
                match p.too_close {
                    Special::Value(v) => v,
                    Special::Raw => p.noisy(d, rng.as_mut()),
                }
            } else {
                p.noisy(d, rng.as_mut())
            };
            ranges.push(v);
        }
        let scan_time = match (self.degraded_every, self.fault.is_on()) {
            (Some(k), true) => (k as f64 * ctx.dt) as f32,
            _ => self.scan_time,
        };
        Ok(LaserScan {
            stamp: ctx.sim_time(),
            frame_id: self.frame_id.clone(),
            angle_min: self.cfg.angle_min as f32,
            angle_max: self.cfg.angle_max() as f32,
            angle_increment: self.cfg.angle_increment() as f32,
            time_increment: 0.0,
            scan_time,
            range_min: p.range_min as f32,
            range_max: p.max_range as f32,
            ranges,
            intensities: Vec::new(),
        })
    }

    /// Geom ids the last scan hit within `detection_max` (-1 = none), ray by ray: for tests and
    /// diagnostics.
    pub fn last_hit_geoms(&self) -> &[i32] {
        self.batch.geom()
    }
}

impl Plugin for Lidar {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let ent = ctx.entities.resolve_owner(self.owner.as_deref()).cloned();
        let prefix = ent.as_ref().map(|e| e.prefix.clone()).unwrap_or_default();
        let site = self.cfg.site.clone().unwrap_or_default();
        self.site_id = resolve_name(
            ctx.model(),
            MjtObjBase::mjOBJ_SITE,
            "site",
            &site,
            &prefix,
            ent.as_ref(),
        )?;
        if let Some(b) = &self.cfg.exclude_body {
            self.exclude_id = Some(resolve_name(
                ctx.model(),
                MjtObjBase::mjOBJ_BODY,
                "exclude_body",
                b,
                &prefix,
                ent.as_ref(),
            )?);
        }
        self.frame_id = self.cfg.frame_id.clone().unwrap_or_else(|| site.clone());

        let inc = self.cfg.angle_increment();
        self.cos_sin = (0..self.cfg.rays)
            .map(|i| (self.cfg.angle_min + inc * i as f64).sin_cos())
            .map(|(s, c)| (c, s))
            .collect();

        let ns = self
            .cfg
            .namespace
            .clone()
            .or_else(|| ent.as_ref().map(|e| e.namespace.clone()))
            .unwrap_or_default();
        let owner = ent.as_ref().map(|e| e.name.as_str()).or(self.owner.as_deref());
        let mut ep = Endpoint::out("scan")
            .owner(owner)
            .namespace(&ns)
            .frame_prefix(&frame_prefix(&ns))
            .rate(self.nominal.rate_hz)
            .lazy(self.cfg.lazy)
            .hint("ros2", "type", "sensor_msgs/msg/LaserScan")
            .hint("ros2", "qos", "sensor_data")
            .hint("ros2", "frame_id", self.frame_id.clone());
        if let Some(t) = self.cfg.topics.get("scan") {
            ep = ep.hint("ros2", "topic", t.clone());
        }
        self.scan_ep = ctx.interface.add(ep);
        let snapped = ctx.interface.get(self.scan_ep).snapped.expect("rate set");
        self.scan_time = (snapped.every_steps as f64 * ctx.dt) as f32;
        if let Some(d) = &self.degraded {
            if d.rate_hz != self.nominal.rate_hz {
                self.degraded_every =
                    Some(snap_rate(d.rate_hz, ctx.interface.physics_hz()).every_steps);
            }
        }

        if self.cfg.emit_static_tf {
            self.mount = Some(MountTf::register(
                ctx,
                &MountSpec {
                    tf_parent: self.cfg.tf_parent.as_deref(),
                    exclude: self.exclude_id.zip(self.cfg.exclude_body.as_deref()),
                    ent: ent.as_ref(),
                    prefix: &prefix,
                    site_id: self.site_id,
                    frame_id: &self.frame_id,
                    owner,
                    namespace: &ns,
                    claimant: crate::context::Claimant::new(&self.address, "lidar"),
                },
            )?);
        }

        if self.degraded.is_some() {
            ctx.blackboard.set(sensor_fault::switch_key(&self.address), self.fault.clone());
            let same = self.degraded.as_ref() == Some(&self.nominal);
            self.fault_service = Some(sensor_fault::FaultService::register(
                ctx,
                &self.address,
                owner,
                self.fault.clone(),
                same,
            ));
        }
        ctx.blackboard.set(reader_key(&self.address), self.reader.clone());
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        // A fault does not survive reset: the next trial starts nominal.
        self.fault.set(false);
        if let Some(f) = &mut self.fault_service {
            f.reset();
        }
        self.reader.clear();
        if let Some(m) = &self.mount {
            m.announce(ctx);
        }
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if let Some(f) = &mut self.fault_service {
            f.poll(ctx);
        }
        if !self.due(ctx) {
            return Ok(());
        }
        let scan = self.scan(ctx)?;
        self.reader.set(scan.clone());
        ctx.interface.publish(self.scan_ep, ctx.tick, Payload::LaserScan(scan));
        Ok(())
    }
}

/// The registry entry of `lidar`.
pub fn descriptor() -> crate::plugin::PluginDescriptor {
    crate::plugin_descriptor!(
        "lidar",
        "2D lidar by batched ray casting (REP 117 specials, seeded range noise, dropout, static mount TF).",
        LidarConfig,
        Lidar
    )
}
