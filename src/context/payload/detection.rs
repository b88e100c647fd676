//! Perception ground truth: 2D detections off a label mask and 3D detections off the state, in
//! the shape of vision_msgs/Detection2DArray and Detection3DArray (one hypothesis each).

use serde::{Deserialize, Serialize};

/// One 2D detection (vision_msgs/Detection2D with one hypothesis, axis-aligned box).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Detection2D {
    /// `results[0].hypothesis.class_id`.
    pub class_id: String,
    /// `results[0].hypothesis.score`.
    pub score: f64,
    /// Box centre (px, image convention: x right, y down, the first pixel's centre is 0).
    pub center: [f64; 2],
    /// Box size (px).
    pub size: [f64; 2],
    /// `id`: the tracked instance.
    pub id: String,
}

/// vision_msgs/Detection2DArray shape.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Detection2DArray {
    /// Sim time (s) of the render the boxes come from.
    pub stamp: f64,
    /// Optical frame of the image.
    pub frame_id: String,
    /// One entry per visible instance.
    pub detections: Vec<Detection2D>,
}

/// One 3D detection (vision_msgs/Detection3D with one hypothesis).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Detection3D {
    /// `results[0].hypothesis.class_id`.
    pub class_id: String,
    /// `results[0].hypothesis.score`.
    pub score: f64,
    /// Object position (m) in the array's frame (`results[0].pose` and `bbox.center`).
    pub position: [f64; 3],
    /// Object orientation `[x, y, z, w]` in the array's frame.
    pub orientation: [f64; 4],
    /// Row-major 6×6 pose covariance (x, y, z, rot x, rot y, rot z).
    #[serde(with = "super::arr36")]
    pub covariance: [f64; 36],
    /// Box size (m) about its centre (`bbox.size`).
    pub size: [f64; 3],
    /// `id`: the object.
    pub id: String,
}

/// vision_msgs/Detection3DArray shape.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Detection3DArray {
    /// Sim time (s).
    pub stamp: f64,
    /// Frame the poses are expressed in (a body of the robot).
    pub frame_id: String,
    /// One entry per object detected this cycle.
    pub detections: Vec<Detection3D>,
}
