//! `oakd_camera`: the Luxonis OAK-D Pro RGB-D camera as depthai-ros (depthai_ros_driver)
//! publishes it.
//!
//! Datasheet (Luxonis OAK-D Pro, DM9098): colour IMX378, FOV 69° × 55° (H × V); stereo pair
//! OV9282, baseline 75 mm; ideal depth range 0.7–12 m, min-Z ~0.3 m (seed default kept). Its
//! default `clip_far` is 100 m, beyond what 16UC1 millimetres carry: opting into 16UC1 means
//! lowering `clip_far` too, and the plugin says so at load. Topics (under `<camera_name>/`,
//! default `oak`): `rgb/image_raw`, `rgb/camera_info`, `rgb/image_raw/compressed`,
//! `stereo/image_raw`, `stereo/camera_info`, `points`; frame `oak_rgb_camera_optical_frame`.

use crate::camera::config::{Device, DEPTHAI};
use crate::camera::CameraConfig;
use crate::plugin::{PluginDescriptor, PluginFlags};

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
    clip_far: 100.0,
    baseline: 0.075,
    camera_name: "oak",
    layout: DEPTHAI,
    frame_suffix: "_rgb_camera_optical_frame",
};

/// The registry entry.
pub fn descriptor() -> PluginDescriptor {
    PluginDescriptor {
        name: "oakd_camera",
        summary: "Luxonis OAK-D Pro RGB-D camera on depthai-ros topics (55 deg colour VFOV, 75 mm baseline, depth 0.3-100 m).",
        flags: PluginFlags::default(),
        expansion_keys: &[],
        schema: crate::plugin::schema_of::<CameraConfig>,
        create: |v, a| crate::camera::create(v, a, &OAKD),
        expand: None,
    }
}
