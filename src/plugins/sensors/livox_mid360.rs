//! `livox_mid360`: the Livox Mid-360 3D lidar by batched ray casting through the one raycast seam
//! ([`crate::mujoco::raycast::RayBatch::cast`], no GL), published as `sensor_msgs/PointCloud2`.
//!
//! Pattern. `horizontal_rays` azimuths × `vertical_rays` elevations from the site (its +x is
//! azimuth 0, its +z up). Azimuths span `h_fov_min..h_fov_max`; a full turn wraps (no sample at
//! 2π, none repeated), a partial span includes both ends. Elevations span
//! `v_fov_min..v_fov_max` with both ends included (the Mid-360: −7° to +52°). Ray order is
//! azimuth-major (a column of elevations per azimuth, as a spinning head sweeps). Directions are
//! rotated by the site's world orientation every scan.
//!
//! What a ray contributes follows the device. A hit at or beyond `range_min` (the blind zone)
//! and within `max_range` is a point at its (noisy) distance along the ray, in the sensor frame.
//! A nearer hit (`too_close`) and a ray with nothing within `max_range` (`no_return`) are
//! dropped from the cloud (`drop`) or put at the sensor origin (`origin`), which is what the
//! Mid-360 and livox_ros_driver2 publish. Noise (`range_stddev`, relative sigma, resolution,
//! dropout → no return) is the 2D lidar's, drawn from `ctx.rng_for("livox_mid360:<address>")`.
//!
//! Endpoints: `points` (out, `sensor_msgs/msg/PointCloud2`, x/y/z float32, on `livox/lidar` —
//! livox_ros_driver2's topic — renamed with `topics: {points: ...}`), and with `emit_static_tf`
//! `tf_static` (`tf_parent -> frame_id`, published at reset). `lazy` skips the cast while
//! nobody subscribes. Blackboard: `livox_mid360:<address>` holds a [`CloudReader`].
//!
//! Cost: one `mj_multiRay` of `horizontal_rays × vertical_rays` rays per scan on the physics
//! thread (20,160 by default); bench numbers are in docs/sensors.md.

use std::collections::BTreeMap;
use std::f64::consts::TAU;

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::PointCloud;
use crate::context::{Endpoint, EndpointId, Payload, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::mujoco::frames::resolve_name;
use crate::mujoco::raycast::RayBatch;
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugins::shared::ray_mount::{MountSpec, MountTf};
use crate::plugins::shared::scan::{RangeValue, RayKeys, ScanParams};
use crate::spawn::frame_prefix;

/// What a ray without a measured return publishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Unmeasured {
    /// Left out of the cloud.
    Drop,
    /// A point at (0, 0, 0) of the sensor frame.
    Origin,
}

fn d_site() -> Option<String> {
    Some("lidar".into())
}
fn d_frame() -> Option<String> {
    Some("livox_frame".into())
}
fn d_rate() -> f64 {
    10.0
}
fn d_h() -> u32 {
    360
}
fn d_v() -> u32 {
    56
}
fn d_hmax() -> f64 {
    TAU
}
fn d_vmin() -> f64 {
    -7f64.to_radians()
}
fn d_vmax() -> f64 {
    52f64.to_radians()
}
fn d_rmin() -> f64 {
    0.1
}
fn d_rmax() -> f64 {
    40.0
}
fn d_drop() -> Unmeasured {
    Unmeasured::Drop
}
fn d_true() -> bool {
    true
}

/// Most rays one scan may cast (a 0.1° × 0.1° full-dome pattern is ~2 M; that is no real device).
pub const MAX_SCAN_RAYS: u64 = 1_000_000;

/// Config of `livox_mid360`. Names (`site`, `exclude_body`, `tf_parent`) are the model's own,
/// unprefixed: they resolve under the prefix of the entity the entry is nested under.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LivoxMid360Config {
    /// Transport scope. Default: the owning entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// The site the rays are cast from (+x azimuth 0, +z up). Default `lidar`.
    #[serde(default = "d_site")]
    pub site: Option<String>,
    /// Frame the cloud is stamped in. Default `livox_frame` (Livox's driver's frame).
    #[serde(default = "d_frame")]
    pub frame_id: Option<String>,
    /// Scan rate (Hz), snapped to the physics grid. Default 10 (the Mid-360's).
    #[serde(default = "d_rate")]
    pub rate_hz: f64,
    /// Body whose geoms the rays ignore: the device's housing. Default: none.
    #[serde(default)]
    pub exclude_body: Option<String>,
    /// Percentage of rays (per ray, per scan) dropped to no return, 0..100. Default 0.
    #[serde(default)]
    pub dropout_percent: f64,
    /// Publish the static mount transform `tf_parent -> frame_id`. Default true.
    #[serde(default = "d_true")]
    pub emit_static_tf: bool,
    /// Parent of the static transform. Default: the carrying entity's root body, else the
    /// resolved `exclude_body`, else `world`.
    #[serde(default)]
    pub tf_parent: Option<String>,
    /// Skip casting while the transport reports no subscriber. Default false.
    #[serde(default)]
    pub lazy: bool,
    /// Topic rename by endpoint role: `{points: /livox/lidar}`. Default topic `livox/lidar`.
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
    /// Azimuth samples across the horizontal field of view (a full turn wraps). Default 360.
    #[serde(default = "d_h")]
    pub horizontal_rays: u32,
    /// Elevation samples across the vertical field of view, both ends included. Default 56.
    #[serde(default = "d_v")]
    pub vertical_rays: u32,
    /// First azimuth (rad). Default 0.
    #[serde(default)]
    pub h_fov_min: f64,
    /// Last azimuth (rad). Default 2π (a full turn).
    #[serde(default = "d_hmax")]
    pub h_fov_max: f64,
    /// Lowest elevation (rad). Default −7° (−0.122173048).
    #[serde(default = "d_vmin")]
    pub v_fov_min: f64,
    /// Highest elevation (rad). Default +52° (0.907571211).
    #[serde(default = "d_vmax")]
    pub v_fov_max: f64,
    /// Blind zone (m): a nearer hit is too close. Default 0.1.
    #[serde(default = "d_rmin")]
    pub range_min: f64,
    /// Farthest return (m). Default 40.
    #[serde(default = "d_rmax")]
    pub max_range: f64,
    /// A hit nearer than `range_min`: `drop` (default) or `origin`.
    #[serde(default = "d_drop")]
    pub too_close: Unmeasured,
    /// Nothing within `max_range`: `drop` (default) or `origin`.
    #[serde(default = "d_drop")]
    pub no_return: Unmeasured,
    /// Gaussian range sigma (m). Default 0.
    #[serde(default)]
    pub range_stddev: f64,
    /// Sigma as a fraction of the distance at and beyond `range_stddev_relative_from`. Default 0.
    #[serde(default)]
    pub range_stddev_relative: f64,
    /// Distance (m) from which the relative sigma applies. Default 0.
    #[serde(default)]
    pub range_stddev_relative_from: f64,
    /// Quantisation step of a distance (m); 0 = continuous.
    #[serde(default)]
    pub range_resolution: f64,
}

impl LivoxMid360Config {
    fn ray_keys(&self) -> RayKeys {
        RayKeys {
            rate_hz: self.rate_hz,
            dropout_percent: self.dropout_percent,
            range_min: self.range_min,
            max_range: self.max_range,
            detection_min: None,
            detection_max: None,
            too_close: RangeValue::Word("-inf".into()),
            no_return: RangeValue::Word("+inf".into()),
            range_stddev: self.range_stddev,
            range_stddev_relative: self.range_stddev_relative,
            range_stddev_relative_from: self.range_stddev_relative_from,
            range_resolution: self.range_resolution,
        }
    }

    /// The checked per-ray values (the 2D lidar's rules).
    pub fn params(&self) -> Result<ScanParams, Vec<ConfigError>> {
        self.ray_keys().params()
    }

    /// True when the azimuth span is a full turn (then it wraps).
    pub fn full_turn(&self) -> bool {
        (self.h_fov_max - self.h_fov_min - TAU).abs() < 1e-6
    }

    /// Unit ray directions in the site frame, azimuth-major.
    pub fn pattern(&self) -> Vec<[f64; 3]> {
        let h = self.horizontal_rays as usize;
        let v = self.vertical_rays as usize;
        let span = self.h_fov_max - self.h_fov_min;
        let az_step = if self.full_turn() {
            span / h as f64
        } else if h > 1 {
            span / (h - 1) as f64
        } else {
            0.0
        };
        let el_step = if v > 1 { (self.v_fov_max - self.v_fov_min) / (v - 1) as f64 } else { 0.0 };
        let mut out = Vec::with_capacity(h * v);
        for i in 0..h {
            let (sa, ca) = (self.h_fov_min + az_step * i as f64).sin_cos();
            for j in 0..v {
                let (se, ce) = (self.v_fov_min + el_step * j as f64).sin_cos();
                out.push([ce * ca, ce * sa, se]);
            }
        }
        out
    }
}

impl ValidateConfig for LivoxMid360Config {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        match &self.site {
            Some(s) if s.trim().is_empty() => {
                e.push(ConfigError::new("site", "must name a site of the model"))
            }
            None => e.push(ConfigError::new("site", "must name a site of the model")),
            _ => {}
        }
        if let Some(f) = &self.frame_id {
            if f.trim().is_empty() {
                e.push(ConfigError::new("frame_id", "must not be empty"));
            }
        }
        if self.horizontal_rays < 1 {
            e.push(ConfigError::new("horizontal_rays", "must be >= 1, got 0"));
        }
        if self.vertical_rays < 2 {
            e.push(ConfigError::new(
                "vertical_rays",
                format!(
                    "must be >= 2, got {}: one elevation is a 2D scan (declare a `lidar`)",
                    self.vertical_rays
                ),
            ));
        }
        let n = self.horizontal_rays as u64 * self.vertical_rays as u64;
        if n > MAX_SCAN_RAYS {
            e.push(ConfigError::new(
                "horizontal_rays",
                format!("horizontal_rays x vertical_rays = {n} exceeds {MAX_SCAN_RAYS} rays per scan: no real device casts that many"),
            ));
        }
        for (k, v) in [
            ("h_fov_min", self.h_fov_min),
            ("h_fov_max", self.h_fov_max),
            ("v_fov_min", self.v_fov_min),
            ("v_fov_max", self.v_fov_max),
        ] {
            if !v.is_finite() {
                e.push(ConfigError::new(k, format!("must be finite (rad), got {v}")));
            }
        }
        let span = self.h_fov_max - self.h_fov_min;
        if span <= 0.0 {
            e.push(ConfigError::new(
                "h_fov_max",
                format!(
                    "h_fov_max ({}) must be greater than h_fov_min ({})",
                    self.h_fov_max, self.h_fov_min
                ),
            ));
        } else if span > TAU + 1e-6 {
            e.push(ConfigError::new(
                "h_fov_max",
                format!("h_fov_max - h_fov_min = {span} rad spans more than a full turn (2π); azimuths would repeat"),
            ));
        }
        let half = std::f64::consts::FRAC_PI_2;
        if self.v_fov_min >= self.v_fov_max {
            e.push(ConfigError::new(
                "v_fov_max",
                format!(
                    "v_fov_max ({}) must be greater than v_fov_min ({})",
                    self.v_fov_max, self.v_fov_min
                ),
            ));
        } else if self.v_fov_min < -half || self.v_fov_max > half {
            e.push(ConfigError::new(
                "v_fov_min",
                format!(
                    "elevations must lie within [-π/2, π/2], got {}..{}",
                    self.v_fov_min, self.v_fov_max
                ),
            ));
        }
        for (k, v) in &self.topics {
            if k != "points" {
                e.push(ConfigError::new(
                    format!("topics.{k}"),
                    "unknown endpoint role; a livox_mid360 has one: `points`",
                ));
            } else if v.trim().is_empty() || v.trim() == "/" {
                e.push(ConfigError::new("topics.points", "must be a topic name (relative renames inside the namespace, absolute `/x` hardwires)"));
            }
        }
        if let Err(es) = self.params() {
            e.extend(es);
        }
        e
    }
}

/// In-process access to the latest cloud (blackboard `livox_mid360:<address>`).
pub type CloudReader = crate::plugins::shared::latest::Latest<PointCloud>;

/// Blackboard key of a Mid-360's reader.
pub fn reader_key(address: &str) -> String {
    format!("livox_mid360:{address}")
}

/// The registry entry.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "livox_mid360",
        "Livox Mid-360 3D lidar by batched ray casting: a 360 x 56 azimuth/elevation pattern (-7..+52 deg), 0.1 m blind zone, drop/origin for unmeasured rays, PointCloud2 in livox_frame.",
        LivoxMid360Config,
        LivoxMid360
    )
}

/// The `livox_mid360` plugin.
pub struct LivoxMid360 {
    cfg: LivoxMid360Config,
    address: String,
    owner: Option<String>,
    params: ScanParams,
    rng_name: String,
    pattern: Vec<[f64; 3]>,
    site_id: usize,
    exclude_id: Option<usize>,
    frame_id: String,
    batch: RayBatch,
    ep: EndpointId,
    mount: Option<MountTf>,
    reader: CloudReader,
}

impl LivoxMid360 {
    /// Construct from a validated config.
    pub fn new(cfg: LivoxMid360Config, args: &PluginArgs) -> Self {
        let pattern = cfg.pattern();
        LivoxMid360 {
            address: args.address.clone(),
            owner: args.owner.clone(),
            params: cfg.params().expect("validated"),
            rng_name: format!("livox_mid360:{}", args.address),
            batch: RayBatch::new(pattern.len()),
            pattern,
            site_id: 0,
            exclude_id: None,
            frame_id: String::new(),
            ep: 0,
            mount: None,
            reader: CloudReader::default(),
            cfg,
        }
    }

    /// Cast one scan now and return its cloud.
    pub fn scan(&mut self, ctx: &mut SimContext) -> Result<PointCloud, String> {
        let p = &self.params;
        let (origin, m) = {
            let d = ctx.data();
            (d.site_xpos()[self.site_id], d.site_xmat()[self.site_id])
        };
        for (i, v) in self.pattern.iter().enumerate() {
            let w = |r: usize| m[3 * r] * v[0] + m[3 * r + 1] * v[1] + m[3 * r + 2] * v[2];
            self.batch.set_dir(i, [w(0), w(1), w(2)]);
        }
        self.batch.cast(ctx.data_mut(), origin, self.exclude_id, None, true, p.max_range);
        let mut rng = if p.draws() {
            Some(ctx.rng_for(&self.rng_name).map_err(|e| e.to_string())?)
        } else {
            None
        };
        let mut points = Vec::with_capacity(self.pattern.len());
        for (i, v) in self.pattern.iter().enumerate() {
            let dropped = p.dropout > 0.0 && rng.as_mut().is_some_and(|r| r.uniform() < p.dropout);
            let d = self.batch.dist()[i];
            let unmeasured = if dropped || d < 0.0 || d > p.max_range {
                Some(self.cfg.no_return)
            } else if d < p.range_min {
                Some(self.cfg.too_close)
            } else {
                None
            };
            match unmeasured {
                Some(Unmeasured::Drop) => {}
                Some(Unmeasured::Origin) => points.push([0.0; 3]),
                None => {
                    let r = p.noisy(d, rng.as_mut()) as f64;
                    points.push([(v[0] * r) as f32, (v[1] * r) as f32, (v[2] * r) as f32]);
                }
            }
        }
        Ok(PointCloud { stamp: ctx.sim_time(), frame_id: self.frame_id.clone(), points })
    }
}

impl Plugin for LivoxMid360 {
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
        let ns = self
            .cfg
            .namespace
            .clone()
            .or_else(|| ent.as_ref().map(|e| e.namespace.clone()))
            .unwrap_or_default();
        let owner = ent.as_ref().map(|e| e.name.as_str()).or(self.owner.as_deref());
        let topic = self.cfg.topics.get("points").cloned().unwrap_or_else(|| "livox/lidar".into());
        let ep = Endpoint::out("points")
            .owner(owner)
            .namespace(&ns)
            .frame_prefix(&frame_prefix(&ns))
            .rate(self.params.rate_hz)
            .lazy(self.cfg.lazy)
            .hint("ros2", "type", "sensor_msgs/msg/PointCloud2")
            .hint("ros2", "qos", "sensor_data")
            .hint("ros2", "frame_id", self.frame_id.clone())
            .hint("ros2", "topic", topic);
        self.ep = ctx.interface.add(ep);
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
                },
            )?);
        }
        ctx.blackboard.set(reader_key(&self.address), self.reader.clone());
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.reader.clear();
        if let Some(m) = &self.mount {
            m.announce(ctx);
        }
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if !ctx.interface.is_due(self.ep, ctx.tick) {
            return Ok(());
        }
        let cloud = self.scan(ctx)?;
        self.reader.set(cloud.clone());
        ctx.interface.publish(self.ep, ctx.tick, Payload::PointCloud(cloud));
        Ok(())
    }
}
