//! The per-ray model every ray sensor shares (`lidar`, `range_sensor`, `livox_mid360`): the keys
//! (`RayKeys`: rate, detection limits, REP 117 special values, noise, quantisation, dropout), their
//! checks, and the resolved values a scan applies per ray (`ScanParams`). One set of rules, so the
//! three sensors refuse and publish alike.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::ConfigError;
use crate::plugins::shared::sensor_keys::finite_nonneg;

/// A published range value for a special case: a number (`-.inf`, `.nan`, `0.004`) or a word
/// (`-inf`, `+inf`, `inf`, `nan`, and for `too_close` also `raw` = the true distance).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RangeValue {
    /// A number published as is (m), including YAML `.inf`, `-.inf`, `.nan`.
    Number(f64),
    /// `-inf`, `+inf`, `inf`, `nan`, or `raw` (too_close only).
    Word(String),
}

impl RangeValue {
    /// Resolve to a published value; `raw` only where `allow_raw`.
    pub fn resolve(&self, allow_raw: bool) -> Result<Special, String> {
        match self {
            RangeValue::Number(x) => Ok(Special::Value(*x as f32)),
            RangeValue::Word(w) => match w.trim().to_ascii_lowercase().as_str() {
                "-inf" | "-.inf" => Ok(Special::Value(f32::NEG_INFINITY)),
                "+inf" | "inf" | ".inf" | "+.inf" => Ok(Special::Value(f32::INFINITY)),
                "nan" | ".nan" => Ok(Special::Value(f32::NAN)),
                "raw" if allow_raw => Ok(Special::Raw),
                other => {
                    let n: Result<f64, _> = other.parse();
                    match n {
                        Ok(x) => Ok(Special::Value(x as f32)),
                        Err(_) if allow_raw => Err(format!("`{w}` is not a range value: use -inf, +inf, nan, raw (the true distance) or a number (m)")),
                        Err(_) => Err(format!("`{w}` is not a range value: use +inf, nan or a number (m)")),
                    }
                }
            },
        }
    }
}

/// A resolved special range: a constant, or the (noisy) true distance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Special {
    /// Publish this value (no noise).
    Value(f32),
    /// Publish the measured distance with noise (too_close only).
    Raw,
}

/// The per-ray keys of a ray sensor, before they are checked.
#[derive(Debug, Clone, PartialEq)]
pub struct RayKeys {
    /// Scan rate (Hz).
    pub rate_hz: f64,
    /// Percentage of rays dropped to `no_return`, 0..100.
    pub dropout_percent: f64,
    /// Header range_min (m).
    pub range_min: f64,
    /// Header range_max (m).
    pub max_range: f64,
    /// Nearest measured distance (m); default `range_min`.
    pub detection_min: Option<f64>,
    /// Farthest measured distance (m); default `max_range`.
    pub detection_max: Option<f64>,
    /// Published for a too-close hit.
    pub too_close: RangeValue,
    /// Published where nothing is measured.
    pub no_return: RangeValue,
    /// Constant sigma (m).
    pub range_stddev: f64,
    /// Relative sigma (fraction of the distance).
    pub range_stddev_relative: f64,
    /// Where the relative sigma starts (m).
    pub range_stddev_relative_from: f64,
    /// Quantisation step (m).
    pub range_resolution: f64,
}

/// [`RayKeys`] read from a ray sensor's config whose per-ray keys carry the same names (the
/// `lidar` and `range_sensor` configs): one body for both.
macro_rules! ray_keys_of {
    ($cfg:expr) => {
        $crate::plugins::shared::scan::RayKeys {
            rate_hz: $cfg.rate_hz,
            dropout_percent: $cfg.dropout_percent,
            range_min: $cfg.range_min,
            max_range: $cfg.max_range,
            detection_min: $cfg.detection_min,
            detection_max: $cfg.detection_max,
            too_close: $cfg.too_close.clone(),
            no_return: $cfg.no_return.clone(),
            range_stddev: $cfg.range_stddev,
            range_stddev_relative: $cfg.range_stddev_relative,
            range_stddev_relative_from: $cfg.range_stddev_relative_from,
            range_resolution: $cfg.range_resolution,
        }
    };
}
pub(crate) use ray_keys_of;

impl RayKeys {
    /// Resolve and check the per-frame values (errors at the keys' own names).
    pub fn params(&self) -> Result<ScanParams, Vec<ConfigError>> {
        let mut e = Vec::new();
        e.extend(crate::plugin::check_rate("rate_hz", self.rate_hz));
        if !(self.dropout_percent.is_finite() && (0.0..=100.0).contains(&self.dropout_percent)) {
            e.push(ConfigError::new(
                "dropout_percent",
                format!("must be within 0..100 (% of rays per scan), got {}", self.dropout_percent),
            ));
        }
        finite_nonneg(&mut e, "range_min", self.range_min, "m");
        if !(self.max_range.is_finite() && self.max_range > 0.0) {
            e.push(ConfigError::new(
                "max_range",
                format!("must be > 0 (m), got {}", self.max_range),
            ));
        } else if self.range_min.is_finite() && self.range_min >= self.max_range {
            e.push(ConfigError::new(
                "range_min",
                format!(
                    "range_min ({}) must be below max_range ({}): they are the header's limits (m)",
                    self.range_min, self.max_range
                ),
            ));
        }
        let dmin = self.detection_min.unwrap_or(self.range_min);
        let dmax = self.detection_max.unwrap_or(self.max_range);
        if self.detection_min.is_some() {
            finite_nonneg(&mut e, "detection_min", dmin, "m");
        }
        if self.detection_max.is_some() && !(dmax.is_finite() && dmax > 0.0) {
            e.push(ConfigError::new("detection_max", format!("must be > 0 (m), got {dmax}")));
        }
        if dmin > dmax {
            let key = if self.detection_min.is_some() { "detection_min" } else { "detection_max" };
            e.push(ConfigError::new(
                key,
                format!(
                    "detection_min ({dmin}) > detection_max ({dmax}): no distance could be measured; detection_min defaults to range_min and detection_max to max_range"
                ),
            ));
        }
        finite_nonneg(&mut e, "range_stddev", self.range_stddev, "m");
        finite_nonneg(
            &mut e,
            "range_stddev_relative",
            self.range_stddev_relative,
            "fraction of the distance",
        );
        finite_nonneg(&mut e, "range_stddev_relative_from", self.range_stddev_relative_from, "m");
        finite_nonneg(&mut e, "range_resolution", self.range_resolution, "m");
        let too_close =
            self.too_close.resolve(true).map_err(|m| e.push(ConfigError::new("too_close", m))).ok();
        let no_return = match self.no_return.resolve(false) {
            Ok(Special::Value(v)) => Some(v),
            Ok(Special::Raw) => None,
            Err(m) => {
                e.push(ConfigError::new("no_return", m));
                None
            }
        };
        if !e.is_empty() {
            return Err(e);
        }
        Ok(ScanParams {
            range_min: self.range_min,
            max_range: self.max_range,
            detection_min: dmin,
            detection_max: dmax,
            too_close: too_close.unwrap_or(Special::Value(f32::NEG_INFINITY)),
            no_return: no_return.unwrap_or(f32::INFINITY),
            range_stddev: self.range_stddev,
            range_stddev_relative: self.range_stddev_relative,
            range_stddev_relative_from: self.range_stddev_relative_from,
            range_resolution: self.range_resolution,
            dropout: self.dropout_percent / 100.0,
            rate_hz: self.rate_hz,
        })
    }
}

/// The values a scan reads every frame, resolved and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanParams {
    /// Header range_min (m).
    pub range_min: f64,
    /// Header range_max (m).
    pub max_range: f64,
    /// Nearest measured distance (m).
    pub detection_min: f64,
    /// Farthest measured distance (m).
    pub detection_max: f64,
    /// Too-close value.
    pub too_close: Special,
    /// No-return value.
    pub no_return: f32,
    /// Constant sigma (m).
    pub range_stddev: f64,
    /// Relative sigma (fraction of distance).
    pub range_stddev_relative: f64,
    /// Where the relative sigma starts (m).
    pub range_stddev_relative_from: f64,
    /// Quantisation step (m).
    pub range_resolution: f64,
    /// Dropout probability per ray (0..1).
    pub dropout: f64,
    /// Scan rate (Hz, requested).
    pub rate_hz: f64,
}

impl ScanParams {
    /// True when a scan draws random numbers.
    pub fn draws(&self) -> bool {
        self.dropout > 0.0 || self.range_stddev > 0.0 || self.range_stddev_relative > 0.0
    }

    /// Sigma (m) at true distance `d` (m).
    pub fn sigma_at(&self, d: f64) -> f64 {
        if self.range_stddev_relative > 0.0 && d >= self.range_stddev_relative_from {
            self.range_stddev_relative * d
        } else {
            self.range_stddev
        }
    }

    /// A noisy distance: `d + N(0, sigma(d))`, floored at 0, quantised to the resolution.
    pub fn noisy(&self, d: f64, rng: Option<&mut crate::context::SimRng>) -> f32 {
        let mut r = d;
        if let Some(rng) = rng {
            r += rng.normal(self.sigma_at(d));
        }
        r = r.max(0.0);
        if self.range_resolution > 0.0 {
            r = (r / self.range_resolution).round() * self.range_resolution;
        }
        r as f32
    }
}
