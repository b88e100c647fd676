//! `camera`: a generic camera on an MJCF `<camera>` (its own lens unless `fovy`/`intrinsics`
//! say otherwise) or on a site (+x boresight), rendering through the shared render service.
//! Colour by default; `depth: true` and `points: true` add a depth image and an organised cloud.
//! Topics follow image_pipeline: `<camera_name>/image_raw`, `/camera_info`, `/image_raw/compressed`,
//! `/depth/image_raw`, `/depth/camera_info`, `/points`. Keys and the capture core: `crate::camera`.

use crate::camera::config::GENERIC_CAMERA;
use crate::camera::CameraConfig;
use crate::plugin::PluginDescriptor;

/// The registry entry.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "camera",
        "A generic camera (MJCF camera or site): rgb8, depth 32FC1/16UC1, CameraInfo, organised PointCloud2, JPEG; rendered only for subscribers.",
        CameraConfig;
        |v, a| crate::camera::create(v, a, &GENERIC_CAMERA)
    )
}
