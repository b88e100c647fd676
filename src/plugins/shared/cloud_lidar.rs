//! The 3D lidar plugin every device file instantiates: one config type ([`CloudConfig`]) and one
//! plugin ([`CloudLidar`]), parameterised by the device's defaults table ([`CloudDevice`]: its
//! plugin name, frame, topic, ray pattern and ranges). `livox_mid360` and `seyond_robin_w1g` are
//! such tables; their keys, checks and refusals are the same, only the defaults differ.

use std::collections::BTreeMap;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::PointCloud;
use crate::context::SimContext;
use crate::error::{ConfigError, HookResult};
use crate::plugin::{Hooks, Plugin, PluginArgs, ValidateConfig};
use crate::plugins::shared::cloud::{
    CloudKeys, CloudPattern, CloudReader, CloudScanner, Unmeasured,
};
use crate::plugins::shared::scan::{RangeValue, RayKeys, ScanParams};
use crate::plugins::shared::sensor_keys::{check_frame_and_topics, check_site};

/// A 3D lidar's defaults table: what its config keys default to and how it names itself.
pub trait CloudDevice:
    std::fmt::Debug + Clone + Copy + PartialEq + Default + JsonSchema + 'static
{
    /// The plugin name (error texts, the blackboard key, the noise stream's name).
    const NAME: &'static str;
    /// Default topic of the `points` endpoint.
    const TOPIC: &'static str;
    /// Default `frame_id`.
    fn frame_id() -> Option<String>;
    /// Default `horizontal_rays`.
    fn horizontal_rays() -> u32;
    /// Default `vertical_rays`.
    fn vertical_rays() -> u32;
    /// Default `h_fov_min` (rad).
    fn h_fov_min() -> f64;
    /// Default `h_fov_max` (rad).
    fn h_fov_max() -> f64;
    /// Default `v_fov_min` (rad).
    fn v_fov_min() -> f64;
    /// Default `v_fov_max` (rad).
    fn v_fov_max() -> f64;
    /// Default `range_min` (m).
    fn range_min() -> f64;
    /// Default `max_range` (m).
    fn max_range() -> f64;
}

fn d_site() -> Option<String> {
    Some("lidar".into())
}
fn d_rate() -> f64 {
    10.0
}
fn d_drop() -> Unmeasured {
    Unmeasured::Drop
}

/// Config of a 3D lidar (defaults from its device table `D`). Names (`site`, `exclude_body`,
/// `tf_parent`) are the model's own, unprefixed: they resolve under the prefix of the entity the
/// entry is nested under.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, bound = "")]
pub struct CloudConfig<D: CloudDevice> {
    /// Transport scope. Default: the owning entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// The site the rays are cast from (+x azimuth 0, +z up). Default `lidar`.
    #[serde(default = "d_site")]
    pub site: Option<String>,
    /// Frame the cloud is stamped in. Default: the frame the device's driver names.
    #[serde(default = "D::frame_id")]
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
    #[serde(default = "crate::plugin::yes")]
    pub emit_static_tf: bool,
    /// Parent of the static transform. Default: the carrying entity's root body, else the
    /// resolved `exclude_body`, else `world`.
    #[serde(default)]
    pub tf_parent: Option<String>,
    /// Skip casting while the transport reports no subscriber. Default false.
    #[serde(default)]
    pub lazy: bool,
    /// Topic rename by endpoint role: `{points: /front/points}`. Default topic: the device
    /// driver's point-cloud topic.
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
    /// Azimuth samples across the horizontal field of view (a full turn wraps, a partial span
    /// includes both ends).
    #[serde(default = "D::horizontal_rays")]
    pub horizontal_rays: u32,
    /// Elevation samples across the vertical field of view, both ends included.
    #[serde(default = "D::vertical_rays")]
    pub vertical_rays: u32,
    /// First azimuth (rad).
    #[serde(default = "D::h_fov_min")]
    pub h_fov_min: f64,
    /// Last azimuth (rad).
    #[serde(default = "D::h_fov_max")]
    pub h_fov_max: f64,
    /// Lowest elevation (rad).
    #[serde(default = "D::v_fov_min")]
    pub v_fov_min: f64,
    /// Highest elevation (rad).
    #[serde(default = "D::v_fov_max")]
    pub v_fov_max: f64,
    /// Blind zone (m): a nearer hit is too close.
    #[serde(default = "D::range_min")]
    pub range_min: f64,
    /// Farthest return (m).
    #[serde(default = "D::max_range")]
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
    /// The device table (no key).
    #[serde(skip)]
    #[schemars(skip)]
    pub device: PhantomData<D>,
}

impl<D: CloudDevice> CloudConfig<D> {
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

impl<D: CloudDevice> ValidateConfig for CloudConfig<D> {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e: Vec<ConfigError> =
            check_site(&self.site, "must name a site of the model").into_iter().collect();
        e.extend(check_frame_and_topics(
            &self.frame_id,
            "omit it for the frame the device's driver names",
            &self.topics,
            &["points"],
        ));
        e.extend(self.cloud_pattern().validate());
        if let Err(es) = self.params() {
            e.extend(es);
        }
        e
    }
}

/// Blackboard key of the reader of the device `D` at `address` (`<name>:<address>`).
pub fn reader_key<D: CloudDevice>(address: &str) -> String {
    format!("{}:{address}", D::NAME)
}

/// A 3D lidar plugin of device `D`.
pub struct CloudLidar<D: CloudDevice> {
    cfg: CloudConfig<D>,
    address: String,
    owner: Option<String>,
    scanner: CloudScanner,
    reader: CloudReader,
}

impl<D: CloudDevice> CloudLidar<D> {
    /// Construct from a validated config.
    pub fn new(cfg: CloudConfig<D>, args: &PluginArgs) -> Self {
        let scanner = CloudScanner::new(
            &cfg.cloud_pattern(),
            cfg.params().expect("validated"),
            reader_key::<D>(&args.address),
            cfg.too_close,
            cfg.no_return,
        );
        CloudLidar {
            address: args.address.clone(),
            owner: args.owner.clone(),
            scanner,
            reader: CloudReader::default(),
            cfg,
        }
    }

    /// Cast one scan now and return its cloud.
    pub fn scan(&mut self, ctx: &mut SimContext) -> Result<PointCloud, String> {
        self.scanner.scan(ctx)
    }
}

impl<D: CloudDevice> Plugin for CloudLidar<D> {
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
            default_topic: D::TOPIC,
            topics: &c.topics,
            lazy: c.lazy,
            emit_static_tf: c.emit_static_tf,
            tf_parent: c.tf_parent.as_deref(),
            claimant: crate::context::Claimant::new(&self.address, D::NAME),
        };
        self.scanner.configure(ctx, self.owner.as_deref(), &keys)?;
        ctx.blackboard.set(reader_key::<D>(&self.address), self.reader.clone());
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
