//! `seyond_robin_w1g`: the Seyond Robin W1G forward-facing solid-state 3D lidar by batched ray
//! casting through the one raycast seam (no GL), published as `sensor_msgs/PointCloud2`.
//!
//! It shares the Mid-360's scanner ([`crate::plugins::shared::cloud`]: pattern, blind zone,
//! drop/origin handling, noise, the `points` endpoint and the static mount transform) and differs
//! in its field of view and defaults. The Robin W family looks forward over 120° horizontally and
//! 70° vertically (Seyond's published field of view), so azimuths span −60°..+60° about the
//! site's +x with both ends included (no wrap) and elevations −35°..+35°; returns reach 150 m
//! (the published maximum detection range). The default sampling, 240 × 70 rays (0.5° × 1.01°, 16,800
//! rays a scan at 10 Hz), is this simulator's choice, not the device's resolution: a finer
//! pattern costs proportionally more on the physics thread. The blind zone defaults to 0.4 m, the
//! minimum distance Seyond's driver publishes. The cloud is stamped in `seyond` (the frame
//! Seyond's driver names) on `iv_points` (its point-cloud topic), renamed with `topics: {points: ...}`.
//!
//! Endpoints: `points` (out, x/y/z float32), and with `emit_static_tf` `tf_static`
//! (`tf_parent -> frame_id`, published at reset). `lazy` skips the cast while nobody subscribes.
//! Blackboard: `seyond_robin_w1g:<address>` holds a [`CloudReader`]. Noise is drawn from
//! `ctx.rng_for("seyond_robin_w1g:<address>")`.
//!
//! Cost: one cast of `horizontal_rays × vertical_rays` rays per scan on the physics thread;
//! measured figures are in docs/sensors.md.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::SimContext;
use crate::error::{ConfigError, HookResult};
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugins::shared::cloud::{check_names, CloudKeys, CloudPattern, CloudScanner};
pub use crate::plugins::shared::cloud::{CloudReader, Unmeasured};
use crate::plugins::shared::scan::{RangeValue, RayKeys, ScanParams};

fn d_site() -> Option<String> {
    Some("lidar".into())
}
fn d_frame() -> Option<String> {
    Some("seyond".into())
}
fn d_rate() -> f64 {
    10.0
}
fn d_h() -> u32 {
    240
}
fn d_v() -> u32 {
    70
}
fn d_hmin() -> f64 {
    -60f64.to_radians()
}
fn d_hmax() -> f64 {
    60f64.to_radians()
}
fn d_vmin() -> f64 {
    -35f64.to_radians()
}
fn d_vmax() -> f64 {
    35f64.to_radians()
}
fn d_rmin() -> f64 {
    0.4
}
fn d_rmax() -> f64 {
    150.0
}
fn d_drop() -> Unmeasured {
    Unmeasured::Drop
}
fn d_true() -> bool {
    true
}

/// Config of `seyond_robin_w1g`. Names (`site`, `exclude_body`, `tf_parent`) are the model's own,
/// unprefixed: they resolve under the prefix of the entity the entry is nested under.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SeyondRobinW1gConfig {
    /// Transport scope. Default: the owning entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// The site the rays are cast from (+x azimuth 0, +z up). Default `lidar`.
    #[serde(default = "d_site")]
    pub site: Option<String>,
    /// Frame the cloud is stamped in. Default `seyond` (Seyond's driver's frame).
    #[serde(default = "d_frame")]
    pub frame_id: Option<String>,
    /// Scan rate (Hz), snapped to the physics grid. Default 10.
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
    /// Topic rename by endpoint role: `{points: /front/points}`. Default topic `iv_points`.
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
    /// Azimuth samples across the horizontal field of view (both ends included). Default 240.
    #[serde(default = "d_h")]
    pub horizontal_rays: u32,
    /// Elevation samples across the vertical field of view, both ends included. Default 70.
    #[serde(default = "d_v")]
    pub vertical_rays: u32,
    /// First azimuth (rad). Default −60° (−1.047197551).
    #[serde(default = "d_hmin")]
    pub h_fov_min: f64,
    /// Last azimuth (rad). Default +60° (1.047197551).
    #[serde(default = "d_hmax")]
    pub h_fov_max: f64,
    /// Lowest elevation (rad). Default −35° (−0.610865238).
    #[serde(default = "d_vmin")]
    pub v_fov_min: f64,
    /// Highest elevation (rad). Default +35° (0.610865238).
    #[serde(default = "d_vmax")]
    pub v_fov_max: f64,
    /// Blind zone (m): a nearer hit is too close. Default 0.4.
    #[serde(default = "d_rmin")]
    pub range_min: f64,
    /// Farthest return (m). Default 150.
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

impl SeyondRobinW1gConfig {
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

    /// The ray pattern.
    pub fn cloud_pattern(&self) -> CloudPattern {
        CloudPattern {
            horizontal_rays: self.horizontal_rays,
            vertical_rays: self.vertical_rays,
            h_fov_min: self.h_fov_min,
            h_fov_max: self.h_fov_max,
            v_fov_min: self.v_fov_min,
            v_fov_max: self.v_fov_max,
        }
    }

    /// Unit ray directions in the site frame, azimuth-major.
    pub fn pattern(&self) -> Vec<[f64; 3]> {
        self.cloud_pattern().directions()
    }
}

impl ValidateConfig for SeyondRobinW1gConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = check_names("seyond_robin_w1g", &self.site, &self.frame_id, &self.topics);
        e.extend(self.cloud_pattern().validate());
        if let Err(es) = self.params() {
            e.extend(es);
        }
        e
    }
}

/// Blackboard key of a Robin W1G's reader.
pub fn reader_key(address: &str) -> String {
    format!("seyond_robin_w1g:{address}")
}

/// The registry entry.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "seyond_robin_w1g",
        "Seyond Robin W1G forward-facing solid-state 3D lidar by batched ray casting: 120 x 70 deg field of view (240 x 70 rays), 150 m range, 0.4 m blind zone, drop/origin for unmeasured rays, PointCloud2 in seyond on iv_points.",
        SeyondRobinW1gConfig,
        SeyondRobinW1g
    )
}

/// The `seyond_robin_w1g` plugin.
pub struct SeyondRobinW1g {
    cfg: SeyondRobinW1gConfig,
    address: String,
    owner: Option<String>,
    scanner: CloudScanner,
    reader: CloudReader,
}

impl SeyondRobinW1g {
    /// Construct from a validated config.
    pub fn new(cfg: SeyondRobinW1gConfig, args: &PluginArgs) -> Self {
        let scanner = CloudScanner::new(
            &cfg.cloud_pattern(),
            cfg.params().expect("validated"),
            format!("seyond_robin_w1g:{}", args.address),
            cfg.too_close,
            cfg.no_return,
        );
        SeyondRobinW1g {
            address: args.address.clone(),
            owner: args.owner.clone(),
            scanner,
            reader: CloudReader::default(),
            cfg,
        }
    }

    /// Cast one scan now and return its cloud.
    pub fn scan(
        &mut self,
        ctx: &mut SimContext,
    ) -> Result<crate::context::payload::PointCloud, String> {
        self.scanner.scan(ctx)
    }
}

impl Plugin for SeyondRobinW1g {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let c = &self.cfg;
        let keys = CloudKeys {
            site: c.site.as_deref().unwrap_or_default(),
            frame_id: c.frame_id.as_deref(),
            exclude_body: c.exclude_body.as_deref(),
            namespace: c.namespace.as_deref(),
            default_topic: "iv_points",
            topics: &c.topics,
            lazy: c.lazy,
            emit_static_tf: c.emit_static_tf,
            tf_parent: c.tf_parent.as_deref(),
        };
        self.scanner.configure(ctx, self.owner.as_deref(), &keys)?;
        ctx.blackboard.set(reader_key(&self.address), self.reader.clone());
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.reader.clear();
        self.scanner.announce(ctx);
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        self.scanner.post_step(ctx, &self.reader)
    }
}
