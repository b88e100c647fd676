//! `realsense_d415`: the Intel RealSense D415's colour stream, as realsense-ros publishes it.
//!
//! Datasheet (Intel RealSense D400 Series Product Family Datasheet, rev. 015): colour sensor
//! OV2740, FOV 69.4° × 42.5° (H × V); depth FOV 65° × 40°; baseline 55 mm; min-Z ~0.45 m at
//! 1280×720; ideal range ~0.5–3 m. Colour only by default (`depth: true` renders depth through
//! the colour optics). Topics and frames as `realsense_d435`.

use crate::camera::config::{Device, REALSENSE};
use crate::camera::{CameraConfig, DepthEncoding};
use crate::plugin::PluginDescriptor;

/// The D415's defaults.
pub const D415: Device = Device {
    plugin: "realsense_d415",
    camera: Some("color"),
    width: 640,
    height: 480,
    fovy: Some(42.5),
    rate_hz: 30.0,
    color: true,
    depth: false,
    points: false,
    clip_near: 0.45,
    clip_far: 3.0,
    baseline: 0.055,
    depth_encoding: DepthEncoding::F32,
    camera_name: "camera",
    layout: REALSENSE,
    frame_suffix: "_color_optical_frame",
};

/// The registry entry.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "realsense_d415",
        "Intel RealSense D415 colour stream on realsense-ros topics (42.5 deg colour FOV; depth optional: min-Z 0.45 m, 55 mm baseline).",
        CameraConfig;
        |v, a| crate::camera::create(v, a, &D415)
    )
}
