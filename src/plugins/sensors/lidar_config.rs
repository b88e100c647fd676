//! `lidar`'s config: its keys, their defaults and checks, and the fault block written over them.

use std::collections::BTreeMap;
use std::f64::consts::TAU;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::ConfigError;
use crate::handles::sensor_fault::{FaultAllowlist, FaultBlock, Refusal};
use crate::plugin::ValidateConfig;
use crate::plugins::shared::scan::{ray_keys_of, RangeValue, RayKeys, ScanParams};
use crate::plugins::shared::sensor_keys::{
    check_frame_and_topics, check_site, fault_params, overlay,
};

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
        ray_keys_of!(self)
    }

    /// Resolve and check the per-frame values.
    pub fn params(&self) -> Result<ScanParams, Vec<ConfigError>> {
        self.ray_keys().params()
    }

    /// The degraded per-frame values, checked (errors at `fault.<key>`).
    pub fn fault_params(&self) -> Result<Option<ScanParams>, Vec<ConfigError>> {
        let overlay = |c: &mut LidarConfig, f: LidarFault| {
            overlay!(
                c,
                f;
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
        };
        fault_params(self, self.fault.as_ref(), &FAULT_ALLOWLIST, overlay, LidarConfig::params)
    }
}

impl ValidateConfig for LidarConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        e.extend(check_site(
            &self.site,
            "required: the site the rays are cast from (its xy plane is the scan plane, +x is bearing 0)",
        ));
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
        e.extend(check_frame_and_topics(
            &self.frame_id,
            "omit it to use the site's name",
            &self.topics,
            &["scan"],
        ));
        if let Err(es) = self.params() {
            e.extend(es);
        } else if let Err(es) = self.fault_params() {
            e.extend(es);
        }
        e
    }
}
