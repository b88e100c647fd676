//! The `pose:` shape every placing plugin takes: a geometry_msgs/PoseStamped as SpawnEntity states
//! one, with a world-frame `header`, an orientation given as a quaternion or as Euler angles, and
//! an omittable `z` whose meaning the caller supplies (a robot's resting height, a prop's floor).

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::ConfigError;
use crate::math::{quat, quat_from_rpy, wxyz};
use crate::world::bounds::{MAX_POSITION_M, QUAT_NORM_RANGE};

pub use crate::context::entities::Pose;

/// `pose.header`: only the world frame is accepted (a spawn pose is a world pose).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoseHeader {
    /// Reference frame of the pose; must be `world` (default `world`; `""` reads as `world`).
    #[serde(default = "world_frame")]
    pub frame_id: String,
}

fn world_frame() -> String {
    "world".to_string()
}

/// `pose.position` (m, world frame). Omitted `x`/`y` are 0; an omitted `z` is the caller's
/// default (a robot model's `rest_height`, a prop's seat on the floor).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PositionConfig {
    /// x (m). Default 0.
    #[serde(default)]
    pub x: f64,
    /// y (m). Default 0.
    #[serde(default)]
    pub y: f64,
    /// z (m). Default: the caller's (resting height / on the floor).
    #[serde(default)]
    pub z: Option<f64>,
}

/// `pose.orientation`: a quaternion `{x, y, z, w}` (geometry_msgs order; missing components
/// read 0, normalised) OR Euler angles `{roll, pitch, yaw}` (rad, REP 103 fixed-axis XYZ;
/// missing ones 0). Mixing the two is refused. Omitted: unrotated.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrientationConfig {
    /// Quaternion x.
    #[serde(default)]
    pub x: Option<f64>,
    /// Quaternion y.
    #[serde(default)]
    pub y: Option<f64>,
    /// Quaternion z.
    #[serde(default)]
    pub z: Option<f64>,
    /// Quaternion w.
    #[serde(default)]
    pub w: Option<f64>,
    /// Roll about x (rad).
    #[serde(default)]
    pub roll: Option<f64>,
    /// Pitch about y (rad).
    #[serde(default)]
    pub pitch: Option<f64>,
    /// Yaw about z (rad).
    #[serde(default)]
    pub yaw: Option<f64>,
}

impl OrientationConfig {
    fn has_quat(&self) -> bool {
        self.x.is_some() || self.y.is_some() || self.z.is_some() || self.w.is_some()
    }
    fn has_euler(&self) -> bool {
        self.roll.is_some() || self.pitch.is_some() || self.yaw.is_some()
    }
    /// The rotation as a unit quaternion `[w, x, y, z]` (identity when empty or invalid —
    /// validation reports the invalid cases).
    pub fn quat(&self) -> [f64; 4] {
        if self.has_quat() {
            let q = [self.w, self.x, self.y, self.z].map(|c| c.unwrap_or(0.0));
            return wxyz(&quat(&q));
        }
        quat_from_rpy(self.roll.unwrap_or(0.0), self.pitch.unwrap_or(0.0), self.yaw.unwrap_or(0.0))
    }
}

/// A spawn pose in the shape SpawnEntity gives its `initial_pose` (geometry_msgs/PoseStamped):
/// `{header: {frame_id: world}, position: {x, y, z}, orientation: {x, y, z, w} | {roll, pitch, yaw}}`.
/// Every part is optional: omitted, the thing sits at the origin, unrotated, at the caller's
/// default height.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoseConfig {
    /// Reference frame (only `world`).
    #[serde(default)]
    pub header: Option<PoseHeader>,
    /// Position (m).
    #[serde(default)]
    pub position: Option<PositionConfig>,
    /// Orientation (quaternion or roll/pitch/yaw).
    #[serde(default)]
    pub orientation: Option<OrientationConfig>,
}

impl PoseConfig {
    /// Check what serde cannot: a world header, finite numbers, a non-zero quaternion, no mix of
    /// quaternion and Euler keys. `path` is the key path of the pose (`pose`).
    pub fn validate(&self, path: &str) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if let Some(h) = &self.header {
            if !(h.frame_id.is_empty() || h.frame_id == "world") {
                e.push(ConfigError::new(
                    format!("{path}.header.frame_id"),
                    format!(
                        "a spawn pose is stated in the world frame: use `world` (got `{}`)",
                        h.frame_id
                    ),
                ));
            }
        }
        if let Some(p) = &self.position {
            for (k, v) in [("x", Some(p.x)), ("y", Some(p.y)), ("z", p.z)] {
                if let Some(v) = v {
                    if !v.is_finite() || v.abs() > MAX_POSITION_M {
                        e.push(ConfigError::new(
                            format!("{path}.position.{k}"),
                            format!(
                                "must be a finite number within ±{MAX_POSITION_M} m, got {}",
                                crate::error::num(v)
                            ),
                        ));
                    }
                }
            }
        }
        if let Some(o) = &self.orientation {
            if o.has_quat() && o.has_euler() {
                e.push(ConfigError::new(
                    format!("{path}.orientation"),
                    "give either a quaternion {x, y, z, w} or Euler angles {roll, pitch, yaw}, not both",
                ));
            }
            let all = [
                ("x", o.x),
                ("y", o.y),
                ("z", o.z),
                ("w", o.w),
                ("roll", o.roll),
                ("pitch", o.pitch),
                ("yaw", o.yaw),
            ];
            for (k, v) in all {
                if let Some(v) = v {
                    if !v.is_finite() {
                        e.push(ConfigError::new(
                            format!("{path}.orientation.{k}"),
                            format!("must be a finite number, got {v}"),
                        ));
                    }
                }
            }
            if o.has_quat() && !o.has_euler() {
                let n = [o.x, o.y, o.z, o.w]
                    .iter()
                    .map(|v| v.unwrap_or(0.0).powi(2))
                    .sum::<f64>()
                    .sqrt();
                if n < QUAT_NORM_RANGE.0 || n > QUAT_NORM_RANGE.1 {
                    e.push(ConfigError::new(
                        format!("{path}.orientation"),
                        format!(
                            "the quaternion has norm {}; it must be within {QUAT_NORM_RANGE:?} (it is normalised): an unrotated pose is {{w: 1}} (or give {{yaw: ...}})",
                            crate::error::num(n)
                        ),
                    ));
                }
            }
        }
        e
    }

    /// The world pose, with `default_z` for an omitted `position.z`.
    pub fn resolve(&self, default_z: f64) -> Pose {
        let (x, y, z) = match &self.position {
            Some(p) => (p.x, p.y, p.z.unwrap_or(default_z)),
            None => (0.0, 0.0, default_z),
        };
        let quat =
            self.orientation.as_ref().map(OrientationConfig::quat).unwrap_or([1.0, 0.0, 0.0, 0.0]);
        Pose { pos: [x, y, z], quat }
    }

    /// True when `position.z` was stated.
    pub fn has_z(&self) -> bool {
        self.position.as_ref().is_some_and(|p| p.z.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pose_defaults_and_yaw() {
        let p: PoseConfig =
            serde_norway::from_str("{position: {x: 1.5, y: 2.0}, orientation: {yaw: 0.785}}")
                .unwrap();
        assert!(p.validate("pose").is_empty());
        let r = p.resolve(0.13);
        assert_eq!(r.pos, [1.5, 2.0, 0.13]);
        assert!((crate::math::yaw_of(&r.quat) - 0.785).abs() < 1e-12);
        let bad: PoseConfig = serde_norway::from_str("{orientation: {yaw: 1, w: 1}}").unwrap();
        assert!(bad.validate("pose")[0].message.contains("not both"));
    }
}
