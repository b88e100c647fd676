//! `oakd_camera`: the Luxonis OAK-D Pro RGB-D camera as depthai-ros (depthai_ros_driver)
//! publishes it.
//!
//! Datasheet (Luxonis OAK-D Pro, DM9098): colour IMX378, FOV 69° × 55° (H × V); stereo pair
//! OV9282, baseline 75 mm; ideal depth range 0.7–12 m, min-Z ~0.3 m. `clip_far` 35 m: beyond
//! about fx·B / 1 px ≈ 441 px × 0.075 m ≈ 33 m (800P) the pair resolves less than one disparity
//! step. Depth goes out as depthai-ros's default RGBD pipeline publishes it: `16UC1` millimetres
//! (0 invalid), aligned to the colour camera (`i_align_depth` true) and so stamped in
//! `oak_rgb_camera_optical_frame`. Topics (under `<camera_name>/`, default `oak`, the driver
//! node's name): `rgb/image_raw`, `rgb/camera_info`, `rgb/image_raw/compressed`,
//! `stereo/image_raw`, `stereo/camera_info`, `points`. The device model's manifest turns depth on.

use crate::camera::config::{Device, DEPTHAI};
use crate::camera::{CameraConfig, DepthEncoding};
use crate::plugin::PluginDescriptor;

/// The OAK-D Pro's defaults.
pub const OAKD: Device = Device {
    plugin: "oakd_camera",
    camera: Some("oakd_rgb"),
    width: 640,
    height: 480,
    fovy: Some(55.0),
    rate_hz: 30.0,
    color: true,
    depth: false,
    points: false,
    clip_near: 0.3,
    clip_far: 35.0,
    baseline: 0.075,
    depth_encoding: DepthEncoding::U16,
    camera_name: "oak",
    layout: DEPTHAI,
    frame_suffix: "_rgb_camera_optical_frame",
};

/// The registry entry.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "oakd_camera",
        "Luxonis OAK-D Pro RGB-D camera on depthai-ros topics (55 deg colour VFOV, 75 mm baseline, depth 0.3-35 m as 16UC1 mm).",
        CameraConfig;
        |v, a| crate::camera::create(v, a, &OAKD)
    )
}
