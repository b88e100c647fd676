//! `realsense_d455`: the Intel RealSense D455 as realsense-ros publishes it.
//!
//! Datasheet (Intel RealSense D400 Series Product Family Datasheet, rev. 015): global-shutter
//! colour sensor OV9782, FOV 90° × 65° (H × V); depth FOV 87° × 58°; baseline 95 mm; min-Z
//! ~0.52 m at 1280×720; ideal range 0.6–6 m. Topics and frames as `realsense_d435`.

use crate::camera::config::{Device, REALSENSE};
use crate::camera::{CameraConfig, DepthEncoding};
use crate::plugin::PluginDescriptor;

/// The D455's defaults.
pub const D455: Device = Device {
    plugin: "realsense_d455",
    camera: Some("color"),
    width: 640,
    height: 480,
    fovy: Some(65.0),
    rate_hz: 30.0,
    color: true,
    depth: false,
    points: false,
    clip_near: 0.52,
    clip_far: 6.0,
    baseline: 0.095,
    depth_encoding: DepthEncoding::F32,
    camera_name: "camera",
    layout: REALSENSE,
    frame_suffix: "_color_optical_frame",
};

/// The registry entry.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "realsense_d455",
        "Intel RealSense D455 colour + depth + point cloud on realsense-ros topics (65 deg colour FOV, min-Z 0.52 m, 6 m range, 95 mm baseline).",
        CameraConfig;
        |v, a| crate::camera::create(v, a, &D455)
    )
}
