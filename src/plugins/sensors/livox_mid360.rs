//! `livox_mid360`: the Livox Mid-360 3D lidar by batched ray casting through the one raycast seam
//! ([`crate::mujoco::raycast::RayBatch::cast`], no GL), published as `sensor_msgs/PointCloud2`.
//!
//! Pattern and scan are the 3D lidars' shared ones ([`crate::plugins::shared::cloud`]):
//! `horizontal_rays` azimuths × `vertical_rays` elevations from the site, a full turn wrapping,
//! elevations both ends included (the Mid-360: −7° to +52°), azimuth-major as a spinning head
//! sweeps.
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

use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::SimContext;
use crate::error::{ConfigError, HookResult};
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugins::shared::cloud::{check_names, CloudKeys, CloudPattern, CloudScanner};
pub use crate::plugins::shared::cloud::{CloudReader, Unmeasured, MAX_SCAN_RAYS};
use crate::plugins::shared::scan::{RangeValue, RayKeys, ScanParams};

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

impl ValidateConfig for LivoxMid360Config {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = check_names("livox_mid360", &self.site, &self.frame_id, &self.topics);
        e.extend(self.cloud_pattern().validate());
        if let Err(es) = self.params() {
            e.extend(es);
        }
        e
    }
}

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
    scanner: CloudScanner,
    reader: CloudReader,
}

impl LivoxMid360 {
    /// Construct from a validated config.
    pub fn new(cfg: LivoxMid360Config, args: &PluginArgs) -> Self {
        let scanner = CloudScanner::new(
            &cfg.cloud_pattern(),
            cfg.params().expect("validated"),
            format!("livox_mid360:{}", args.address),
            cfg.too_close,
            cfg.no_return,
        );
        LivoxMid360 {
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

impl Plugin for LivoxMid360 {
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
            default_topic: "livox/lidar",
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
