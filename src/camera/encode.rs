//! Frame → wire payloads: colour, depth (32FC1 metres or 16UC1 millimetres), the stereo depth
//! error, organised point clouds in the optical frame, and the JPEG companion.
//!
//! Validity follows the device: a depth nearer than `clip_near` is "too close", beyond
//! `clip_far` (or nothing drawn) "no return". 32FC1 carries them as `-inf` / `+inf` (REP 118);
//! 16UC1 as 0, the way realsense-ros publishes invalid depth; a point cloud as NaN points in an
//! organised (`width × height`) cloud with `is_dense = false`.

use std::sync::Arc;

use crate::context::payload::{CameraInfo, CompressedImage, Image, PointCloud2, PointField};
use crate::context::SimRng;
use crate::render::{Frame, Intrinsics};

use super::config::DepthEncoding;

/// sensor_msgs/PointField FLOAT32.
pub const FLOAT32: u8 = 7;

/// The valid band and noise a depth conversion applies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DepthModel {
    /// Nearest valid depth (m).
    pub clip_near: f64,
    /// Farthest valid depth (m).
    pub clip_far: f64,
    /// `z^2 * k` is the sigma at depth z (k = subpixel / (fx * baseline)); 0 = no noise.
    pub sigma_k: f64,
}

impl DepthModel {
    /// The stereo error sigma (m) at depth `z` (m).
    pub fn sigma(&self, z: f64) -> f64 {
        self.sigma_k * z * z
    }
}

/// Measured depth in metres with the device's band applied: `-inf` too close, `+inf` no return;
/// with `rng`, Gaussian stereo error on every valid pixel (re-checked against the band).
pub fn measured_depth(frame: &Frame, m: &DepthModel, mut rng: Option<&mut SimRng>) -> Vec<f32> {
    let raw = frame.depth.as_ref().expect("a depth render");
    raw.iter()
        .map(|&z| {
            let mut z = z as f64;
            if !z.is_finite() || z > m.clip_far {
                return f32::INFINITY;
            }
            if z < m.clip_near {
                return f32::NEG_INFINITY;
            }
            if let Some(r) = rng.as_deref_mut() {
                z += r.normal(m.sigma(z));
                if z > m.clip_far {
                    return f32::INFINITY;
                }
                if z < m.clip_near {
                    return f32::NEG_INFINITY;
                }
            }
            z as f32
        })
        .collect()
}

/// A depth image on the wire.
pub fn depth_image(
    depth: &[f32],
    k: &Intrinsics,
    enc: DepthEncoding,
    stamp: f64,
    frame_id: &str,
) -> Image {
    let (w, h) = (k.width, k.height);
    let data: Vec<u8> = match enc {
        DepthEncoding::F32 => depth.iter().flat_map(|z| z.to_le_bytes()).collect(),
        DepthEncoding::U16 => depth
            .iter()
            .flat_map(|&z| {
                let mm = if z.is_finite() { (z as f64 * 1000.0).round() as u16 } else { 0 };
                mm.to_le_bytes()
            })
            .collect(),
    };
    let bpp = if enc == DepthEncoding::F32 { 4 } else { 2 };
    Image {
        stamp,
        frame_id: frame_id.to_string(),
        height: h,
        width: w,
        encoding: enc.name().to_string(),
        step: w * bpp,
        data: Arc::new(data),
    }
}

/// The colour image (rgb8).
pub fn color_image(rgb: Arc<Vec<u8>>, k: &Intrinsics, stamp: f64, frame_id: &str) -> Image {
    Image {
        stamp,
        frame_id: frame_id.to_string(),
        height: k.height,
        width: k.width,
        encoding: "rgb8".into(),
        step: 3 * k.width,
        data: rgb,
    }
}

/// CameraInfo of a frame: exactly the projection it was rendered with (no distortion).
pub fn camera_info(k: &Intrinsics, stamp: f64, frame_id: &str) -> CameraInfo {
    CameraInfo {
        stamp,
        frame_id: frame_id.to_string(),
        height: k.height,
        width: k.width,
        distortion_model: "plumb_bob".into(),
        d: vec![0.0; 5],
        k: k.k(),
        r: [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
        p: k.p(),
    }
}

/// An organised cloud (`width × height`, row-major like the image) in the optical frame: point
/// (u, v) at depth z is `((u − cx)·z/fx, (v − cy)·z/fy, z)`; invalid depth is a NaN point. With
/// `rgb`, a packed `rgb` float field (0x00RRGGBB, the PCL convention) follows x, y, z.
pub fn point_cloud(
    depth: &[f32],
    rgb: Option<&[u8]>,
    k: &Intrinsics,
    stamp: f64,
    frame_id: &str,
) -> PointCloud2 {
    let (w, h) = (k.width as usize, k.height as usize);
    let step = if rgb.is_some() { 16 } else { 12 };
    let mut data = Vec::with_capacity(w * h * step);
    let mut dense = true;
    for v in 0..h {
        let yv = (v as f64 - k.cy) / k.fy;
        for u in 0..w {
            let z = depth[v * w + u];
            let p = if z.is_finite() {
                let zf = z as f64;
                [((u as f64 - k.cx) / k.fx * zf) as f32, (yv * zf) as f32, z]
            } else {
                dense = false;
                [f32::NAN; 3]
            };
            for c in p {
                data.extend_from_slice(&c.to_le_bytes());
            }
            if let Some(c) = rgb {
                let i = 3 * (v * w + u);
                let packed = (c[i] as u32) << 16 | (c[i + 1] as u32) << 8 | c[i + 2] as u32;
                data.extend_from_slice(&packed.to_le_bytes());
            }
        }
    }
    let field =
        |name: &str, offset| PointField { name: name.into(), offset, datatype: FLOAT32, count: 1 };
    let mut fields = vec![field("x", 0), field("y", 4), field("z", 8)];
    if rgb.is_some() {
        fields.push(field("rgb", 12));
    }
    PointCloud2 {
        stamp,
        frame_id: frame_id.to_string(),
        height: h as u32,
        width: w as u32,
        fields,
        point_step: step as u32,
        row_step: (step * w) as u32,
        data: Arc::new(data),
        is_dense: dense,
    }
}

/// The JPEG companion of an rgb8 image (image_transport's `compressed` format string).
pub fn jpeg(img: &Image, quality: u8) -> Result<CompressedImage, String> {
    let mut out = Vec::new();
    let enc = jpeg_encoder::Encoder::new(&mut out, quality);
    enc.encode(&img.data, img.width as u16, img.height as u16, jpeg_encoder::ColorType::Rgb)
        .map_err(|e| format!("JPEG encoding failed: {e}"))?;
    Ok(CompressedImage {
        stamp: img.stamp,
        frame_id: img.frame_id.clone(),
        format: "rgb8; jpeg compressed bgr8".into(),
        data: Arc::new(out),
    })
}
