//! Camera payloads: images (raw and compressed), camera intrinsics and point clouds in the
//! sensor_msgs/PointCloud2 layout.

use serde::{Deserialize, Serialize};

/// sensor_msgs/Image shape. `data` is shared, so handing a frame to several consumers copies no
/// pixels.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Image {
    /// Sim time (s) of the render.
    pub stamp: f64,
    /// Optical frame (REP 103: x right, y down, z forward).
    pub frame_id: String,
    /// Rows (px).
    pub height: u32,
    /// Columns (px).
    pub width: u32,
    /// `rgb8`, `32FC1`, `16UC1`, `mono8` (sensor_msgs/image_encodings names).
    pub encoding: String,
    /// Bytes per row.
    pub step: u32,
    /// Row-major pixels, top row first, little-endian.
    pub data: std::sync::Arc<Vec<u8>>,
}

/// sensor_msgs/CompressedImage shape.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CompressedImage {
    /// Sim time (s) of the render.
    pub stamp: f64,
    /// Optical frame.
    pub frame_id: String,
    /// `jpeg` (image_transport's compressed format names: `rgb8; jpeg compressed bgr8`).
    pub format: String,
    /// The encoded bytes.
    pub data: std::sync::Arc<Vec<u8>>,
}

/// sensor_msgs/CameraInfo shape (plumb_bob, monocular).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CameraInfo {
    /// Sim time (s) of the render it describes.
    pub stamp: f64,
    /// Optical frame.
    pub frame_id: String,
    /// Rows (px).
    pub height: u32,
    /// Columns (px).
    pub width: u32,
    /// `plumb_bob`.
    pub distortion_model: String,
    /// Distortion coefficients (k1, k2, t1, t2, k3): zero for a rendered pinhole.
    pub d: Vec<f64>,
    /// Row-major 3×3 camera matrix.
    pub k: [f64; 9],
    /// Row-major 3×3 rectification (identity for a monocular camera).
    pub r: [f64; 9],
    /// Row-major 3×4 projection.
    pub p: [f64; 12],
}

/// One field of a point cloud (sensor_msgs/PointField shape).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PointField {
    /// `x`, `y`, `z`, `rgb`.
    pub name: String,
    /// Byte offset in a point.
    pub offset: u32,
    /// sensor_msgs/PointField datatype (7 = FLOAT32).
    pub datatype: u8,
    /// Elements.
    pub count: u32,
}

/// sensor_msgs/PointCloud2 shape.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PointCloud2 {
    /// Sim time (s).
    pub stamp: f64,
    /// Frame the points are in.
    pub frame_id: String,
    /// Rows (1 for an unorganised cloud).
    pub height: u32,
    /// Points per row.
    pub width: u32,
    /// Field layout of a point.
    pub fields: Vec<PointField>,
    /// Bytes per point.
    pub point_step: u32,
    /// Bytes per row.
    pub row_step: u32,
    /// Points, little-endian.
    pub data: std::sync::Arc<Vec<u8>>,
    /// False when some points are invalid (NaN).
    pub is_dense: bool,
}
