//! `realsense_d435`: the Intel RealSense D435/D435i as realsense-ros publishes it.
//!
//! Datasheet (Intel RealSense D400 Series Product Family Datasheet, rev. 015): colour sensor
//! OV2740, FOV 69.4° × 42.5° (H × V); depth FOV 87° × 58°; baseline 50 mm; min-Z ~0.28 m at
//! 848×480; ideal range ~0.3–3 m. One MuJoCo camera has one lens: colour and depth render through
//! the colour optics in one pass, so depth is registered to colour and stamped in the colour
//! optical frame (as realsense-ros's aligned depth is). Topics (realsense-ros 4.x under
//! `<camera_name>/`): `color/image_raw`, `color/camera_info`, `color/image_raw/compressed`,
//! `depth/image_rect_raw`, `depth/camera_info`, `depth/color/points`; frame
//! `camera_color_optical_frame`. Defaults: 640×480 at 30 Hz, colour on, depth and points off
//! (the device model's manifest turns depth on).

use crate::camera::config::{Device, REALSENSE};
use crate::camera::{CameraConfig, DepthEncoding};
use crate::plugin::PluginDescriptor;

/// The D435's defaults.
pub const D435: Device = Device {
    plugin: "realsense_d435",
    camera: Some("color"),
    width: 640,
    height: 480,
    fovy: Some(42.5),
    rate_hz: 30.0,
    color: true,
    depth: false,
    points: false,
    clip_near: 0.28,
    clip_far: 3.0,
    baseline: 0.050,
    depth_encoding: DepthEncoding::F32,
    camera_name: "camera",
    layout: REALSENSE,
    frame_suffix: "_color_optical_frame",
};

/// The registry entry.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "realsense_d435",
        "Intel RealSense D435(i) colour + depth + point cloud on realsense-ros topics (42.5 deg colour FOV, min-Z 0.28 m, 3 m range, 50 mm baseline).",
        CameraConfig;
        |v, a| crate::camera::create(v, a, &D435)
    )
}
