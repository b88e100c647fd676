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

use schemars::JsonSchema;

use crate::plugin::PluginDescriptor;
pub use crate::plugins::shared::cloud::{CloudReader, Unmeasured};
use crate::plugins::shared::cloud_lidar::{CloudConfig, CloudDevice, CloudLidar};

/// The seyond_robin_w1g defaults table.
#[derive(Debug, Clone, Copy, PartialEq, Default, JsonSchema)]
pub struct RobinW1g;

impl CloudDevice for RobinW1g {
    const NAME: &'static str = "seyond_robin_w1g";
    const TOPIC: &'static str = "iv_points";
    fn frame_id() -> Option<String> {
        Some("seyond".into())
    }
    fn horizontal_rays() -> u32 {
        240
    }
    fn vertical_rays() -> u32 {
        70
    }
    fn h_fov_min() -> f64 {
        -60f64.to_radians()
    }
    fn h_fov_max() -> f64 {
        60f64.to_radians()
    }
    fn v_fov_min() -> f64 {
        -35f64.to_radians()
    }
    fn v_fov_max() -> f64 {
        35f64.to_radians()
    }
    fn range_min() -> f64 {
        0.4
    }
    fn max_range() -> f64 {
        150.0
    }
}

/// Config of `seyond_robin_w1g` (the 3D lidars' keys with this device's defaults).
pub type SeyondRobinW1gConfig = CloudConfig<RobinW1g>;

/// The `seyond_robin_w1g` plugin.
pub type SeyondRobinW1g = CloudLidar<RobinW1g>;

/// Blackboard key of a seyond_robin_w1g's reader.
pub fn reader_key(address: &str) -> String {
    crate::plugins::shared::cloud_lidar::reader_key::<RobinW1g>(address)
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
