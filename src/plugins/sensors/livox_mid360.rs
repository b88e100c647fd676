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

use std::f64::consts::TAU;

use schemars::JsonSchema;

use crate::plugin::PluginDescriptor;
pub use crate::plugins::shared::cloud::{CloudReader, Unmeasured, MAX_SCAN_RAYS};
use crate::plugins::shared::cloud_lidar::{CloudConfig, CloudDevice, CloudLidar};

/// The livox_mid360 defaults table.
#[derive(Debug, Clone, Copy, PartialEq, Default, JsonSchema)]
pub struct Mid360;

impl CloudDevice for Mid360 {
    const NAME: &'static str = "livox_mid360";
    const TOPIC: &'static str = "livox/lidar";
    fn frame_id() -> Option<String> {
        Some("livox_frame".into())
    }
    fn horizontal_rays() -> u32 {
        360
    }
    fn vertical_rays() -> u32 {
        56
    }
    fn h_fov_min() -> f64 {
        0.0
    }
    fn h_fov_max() -> f64 {
        TAU
    }
    fn v_fov_min() -> f64 {
        -7f64.to_radians()
    }
    fn v_fov_max() -> f64 {
        52f64.to_radians()
    }
    fn range_min() -> f64 {
        0.1
    }
    fn max_range() -> f64 {
        40.0
    }
}

/// Config of `livox_mid360` (the 3D lidars' keys with this device's defaults).
pub type LivoxMid360Config = CloudConfig<Mid360>;

/// The `livox_mid360` plugin.
pub type LivoxMid360 = CloudLidar<Mid360>;

/// Blackboard key of a livox_mid360's reader.
pub fn reader_key(address: &str) -> String {
    crate::plugins::shared::cloud_lidar::reader_key::<Mid360>(address)
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
