//! The config every camera plugin takes, and the device defaults that fill what a world leaves
//! out. One struct for all of them (`camera`, `realsense_d435`, ...): the device decides the
//! defaults (resolution, field of view, range, topic layout, frame names), the world overrides
//! any of them, and [`CameraConfig::resolve`] checks the result before anything is built.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::ConfigError;
use crate::plugin::check_rate;
use crate::render::service::MAX_SIDE;
use crate::render::Intrinsics;
use crate::world::bounds;

/// The narrowest field of view a camera renders (degrees).
pub const MIN_FOV_DEG: f64 = 0.1;
/// The widest field of view a camera renders (degrees): MuJoCo's perspective projection
/// degenerates towards 180.
pub const MAX_FOV_DEG: f64 = 179.0;

/// How depth goes on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum DepthEncoding {
    /// float32 metres; too close `-inf`, nothing measured `+inf` (REP 118).
    #[serde(rename = "32FC1")]
    F32,
    /// uint16 millimetres; 0 for invalid, as realsense-ros publishes it.
    #[serde(rename = "16UC1")]
    U16,
}

impl DepthEncoding {
    /// The sensor_msgs/image_encodings name.
    pub fn name(self) -> &'static str {
        match self {
            DepthEncoding::F32 => "32FC1",
            DepthEncoding::U16 => "16UC1",
        }
    }
}

/// A measured lens: pixels at the resolution it was measured at (it scales with the render size).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LensConfig {
    /// Focal length x (px).
    pub fx: f64,
    /// Focal length y (px).
    pub fy: f64,
    /// Principal point x (px, ROS convention: the first pixel's centre is 0), within
    /// [-0.5, width - 0.5].
    pub cx: f64,
    /// Principal point y (px), within [-0.5, height - 0.5].
    pub cy: f64,
    /// Width the lens was measured at (px).
    pub width: u32,
    /// Height the lens was measured at (px).
    pub height: u32,
}

crate::camera_keys! {
    {
        /// Config of a camera plugin. Every key is optional; a device plugin's defaults fill the
        /// rest (see `roqsim plugins describe <device>`). Names (`camera`, `site`) are the model's
        /// own, unprefixed: they resolve under the prefix of the entity the entry is nested under.
        /// The keys it shares with the other camera-like plugins are defined in `super::keys`.
        #[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct CameraConfig
    }
    @namespace, @camera, @site, @width, @height, @fovy, @intrinsics, @rate_hz,
    /// Publish the colour stream (`image`, `image_compressed`, `camera_info`).
    #[serde(default)]
    pub color: Option<bool>,
    /// Publish the depth image and its camera_info.
    #[serde(default)]
    pub depth: Option<bool>,
    /// Publish an organised sensor_msgs/PointCloud2 in the depth optical frame (implies the
    /// depth render).
    #[serde(default)]
    pub points: Option<bool>,
    /// Points carry colour (`x y z rgb`) rather than `x y z`.
    #[serde(default)]
    pub points_rgb: Option<bool>,
    @compressed, @jpeg_quality,
    /// Nearest measured depth (m; the device's min-Z). Nearer reads "too close".
    #[serde(default)]
    pub clip_near: Option<f64>,
    /// Farthest measured depth (m). Beyond reads "no return".
    #[serde(default)]
    pub clip_far: Option<f64>,
    /// `32FC1` (metres, ±inf invalid) or `16UC1` (millimetres, 0 invalid; needs clip_far ≤ 65.535).
    /// Default: the device's driver's (`16UC1` for the OAK-D as depthai-ros, else `32FC1`).
    #[serde(default)]
    pub depth_encoding: Option<DepthEncoding>,
    @frame_id,
    /// Frame the depth image and points are stamped in. Depth is rendered through the same
    /// optics as colour, so it is registered to colour; the default is the colour optical frame.
    #[serde(default)]
    pub depth_frame_id: Option<String>,
    /// Add the stereo depth error: sigma(z) = z^2 * depth_subpixel / (fx * depth_baseline), drawn
    /// per pixel from `rng_for`. Off by default; ground truth stays clean.
    #[serde(default)]
    pub depth_noise: Option<bool>,
    /// Stereo matching error (px), the datasheet's subpixel RMS (default 0.08).
    #[serde(default)]
    pub depth_subpixel: Option<f64>,
    /// Stereo baseline (m): the device's.
    #[serde(default)]
    pub depth_baseline: Option<f64>,
    /// Render shadows (off by default on sensors: the shadow map is the dearest part of a
    /// software-rendered frame and no depth or label depends on it).
    #[serde(default)]
    pub shadows: Option<bool>,
    @camera_name, @topics,
}

/// The topic layout of a device family (relative to `camera_name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Colour image.
    pub image: &'static str,
    /// Colour camera_info.
    pub camera_info: &'static str,
    /// Depth image.
    pub depth: &'static str,
    /// Depth camera_info.
    pub depth_info: &'static str,
    /// Point cloud.
    pub points: &'static str,
}

/// realsense-ros (4.x) names under `<camera_name>/`.
pub const REALSENSE: Layout = Layout {
    image: "color/image_raw",
    camera_info: "color/camera_info",
    depth: "depth/image_rect_raw",
    depth_info: "depth/camera_info",
    points: "depth/color/points",
};

/// depthai-ros (depthai_ros_driver) names under `<camera_name>/`.
pub const DEPTHAI: Layout = Layout {
    image: "rgb/image_raw",
    camera_info: "rgb/camera_info",
    depth: "stereo/image_raw",
    depth_info: "stereo/camera_info",
    points: "points",
};

/// image_pipeline / a generic ROS camera driver under `<camera_name>/`.
pub const GENERIC: Layout = Layout {
    image: "image_raw",
    camera_info: "camera_info",
    depth: "depth/image_raw",
    depth_info: "depth/camera_info",
    points: "points",
};

/// A device's defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Device {
    /// Plugin name (`realsense_d435`).
    pub plugin: &'static str,
    /// Default MJCF camera (`None`: the world must name a camera or a site).
    pub camera: Option<&'static str>,
    /// Default resolution.
    pub width: u32,
    /// Default resolution.
    pub height: u32,
    /// Default vertical FOV (deg); `None` = the MJCF camera's own.
    pub fovy: Option<f64>,
    /// Default rate (Hz).
    pub rate_hz: f64,
    /// Colour stream on by default.
    pub color: bool,
    /// Depth stream on by default.
    pub depth: bool,
    /// Points on by default.
    pub points: bool,
    /// Default min-Z (m).
    pub clip_near: f64,
    /// Default usable range (m).
    pub clip_far: f64,
    /// Stereo baseline (m) for the noise model.
    pub baseline: f64,
    /// Default depth wire format (depthai-ros publishes 16UC1 millimetres).
    pub depth_encoding: DepthEncoding,
    /// Default topic prefix.
    pub camera_name: &'static str,
    /// Topic layout.
    pub layout: Layout,
    /// Default colour optical frame after `camera_name` (`_color_optical_frame`).
    pub frame_suffix: &'static str,
}

/// The generic `camera`: the MJCF camera's own lens, colour only, 30 Hz.
pub const GENERIC_CAMERA: Device = Device {
    plugin: "camera",
    camera: None,
    width: 640,
    height: 480,
    fovy: None,
    rate_hz: 30.0,
    color: true,
    depth: false,
    points: false,
    clip_near: 0.05,
    clip_far: 10.0,
    baseline: 0.05,
    depth_encoding: DepthEncoding::F32,
    camera_name: "camera",
    layout: GENERIC,
    frame_suffix: "_optical_frame",
};

/// Endpoint roles a `topics:` key may rename.
pub const ROLES: [&str; 6] =
    ["image", "image_compressed", "camera_info", "depth", "depth_info", "points"];

/// Everything a capture needs, defaults applied and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct CameraSettings {
    /// Plugin name (for messages and the rng stream).
    pub plugin: &'static str,
    /// Transport scope override.
    pub namespace: Option<String>,
    /// MJCF camera (unprefixed).
    pub camera: Option<String>,
    /// Site (unprefixed).
    pub site: Option<String>,
    /// Render size.
    pub width: u32,
    /// Render size.
    pub height: u32,
    /// Explicit FOV (deg).
    pub fovy: Option<f64>,
    /// Explicit lens, already scaled to width × height.
    pub intrinsics: Option<Intrinsics>,
    /// Rate (Hz).
    pub rate_hz: f64,
    /// Streams.
    pub color: bool,
    /// Depth image.
    pub depth: bool,
    /// Point cloud.
    pub points: bool,
    /// Point colour.
    pub points_rgb: bool,
    /// JPEG companion.
    pub compressed: bool,
    /// JPEG quality.
    pub jpeg_quality: u8,
    /// Valid depth band (m).
    pub clip_near: f64,
    /// Valid depth band (m).
    pub clip_far: f64,
    /// Depth wire format.
    pub depth_encoding: DepthEncoding,
    /// Colour optical frame.
    pub frame_id: String,
    /// Depth/points frame.
    pub depth_frame_id: String,
    /// Stereo noise on.
    pub depth_noise: bool,
    /// Subpixel error (px).
    pub depth_subpixel: f64,
    /// Baseline (m).
    pub depth_baseline: f64,
    /// Shadows.
    pub shadows: bool,
    /// Publish `camera_info` (with the colour stream by default; a label camera publishes it
    /// without colour, since it describes the labels too).
    pub camera_info: bool,
    /// Topic per role (relative or absolute).
    pub topics: BTreeMap<&'static str, String>,
}

fn bad(path: &str, msg: String) -> ConfigError {
    ConfigError::new(path, msg)
}

/// A render side (px): the key's value, else the device's; out of 1..=MAX_SIDE is refused.
fn side(key: &str, v: Option<i128>, default: u32, e: &mut Vec<ConfigError>) -> u32 {
    let v = v.unwrap_or(i128::from(default));
    match u32::try_from(v) {
        Ok(s) if (1..=MAX_SIDE).contains(&s) => s,
        _ => {
            e.push(bad(key, format!("must be 1..={MAX_SIDE} px, got {v}")));
            default.clamp(1, MAX_SIDE)
        }
    }
}

/// Check a measured lens: focal lengths, the image it was measured on, the field of view it
/// implies and its principal point. `true` when it is usable.
fn check_lens(l: &LensConfig, e: &mut Vec<ConfigError>) -> bool {
    let mut ok = true;
    for (key, v) in [("intrinsics.fx", l.fx), ("intrinsics.fy", l.fy)] {
        if !(v.is_finite() && v > 0.0) {
            ok = false;
            e.push(bad(key, format!("a focal length must be > 0 px, got {v}")));
        }
    }
    for (key, v) in [("intrinsics.width", l.width), ("intrinsics.height", l.height)] {
        if v == 0 || v > MAX_SIDE {
            ok = false;
            e.push(bad(
                key,
                format!("the size of the image the lens was measured on must be 1..={MAX_SIDE} px, got {v}"),
            ));
        }
    }
    // The field of view a focal length gives on its image: the projection renders only
    // within the fovy bounds (a focal length of 1e-300 px is a view of 180 degrees).
    for (key, f, side, axis) in [
        ("intrinsics.fx", l.fx, l.width, "horizontal"),
        ("intrinsics.fy", l.fy, l.height, "vertical"),
    ] {
        if !(f.is_finite() && f > 0.0) || side == 0 || side > MAX_SIDE {
            continue; // refused above
        }
        let fov = 2.0 * (side as f64 / (2.0 * f)).atan().to_degrees();
        if !(MIN_FOV_DEG..=MAX_FOV_DEG).contains(&fov) {
            ok = false;
            e.push(bad(
                key,
                format!("{f} px on a {side} px side is a {axis} field of view of {fov:.4} degrees; a lens MuJoCo renders spans [{MIN_FOV_DEG}, {MAX_FOV_DEG}] degrees"),
            ));
        }
    }
    // The principal point lies on the image it was measured on: with the first pixel's
    // centre at 0, that is [-0.5, side - 0.5] px.
    for (key, c, side, what) in
        [("intrinsics.cx", l.cx, l.width, "width"), ("intrinsics.cy", l.cy, l.height, "height")]
    {
        if side == 0 || side > MAX_SIDE {
            continue; // refused above
        }
        let hi = side as f64 - 0.5;
        if !(c.is_finite() && (-0.5..=hi).contains(&c)) {
            e.push(bad(
                key,
                format!("the principal point must lie on the image it was measured on: within [-0.5, {hi}] px for {what} {side} (the first pixel's centre is 0), got {c}"),
            ));
            ok = false;
        }
    }
    ok
}

impl CameraConfig {
    /// Apply `dev`'s defaults and check everything; every problem is reported, each at its key.
    pub fn resolve(&self, dev: &Device) -> Result<CameraSettings, Vec<ConfigError>> {
        let mut e = Vec::new();
        let camera = self.source(dev, &mut e);
        let width = side("width", self.width, dev.width, &mut e);
        let height = side("height", self.height, dev.height, &mut e);
        let (fovy, intrinsics) = self.lens(dev, width, height, &mut e);
        let rate_hz = self.rate_hz.unwrap_or(dev.rate_hz);
        e.extend(check_rate("rate_hz", rate_hz));
        let (clip_near, clip_far, depth_encoding) = self.depth_range(dev, &mut e);
        let q = self.jpeg_quality.unwrap_or(95);
        if !(1..=100).contains(&q) {
            e.push(bad("jpeg_quality", format!("must be 1..=100, got {q}")));
        }
        let q = u8::try_from(q).unwrap_or(95);
        let (subpixel, baseline) = self.depth_model(dev, &mut e);
        for (key, v) in [("frame_id", &self.frame_id), ("depth_frame_id", &self.depth_frame_id)] {
            if v.as_deref().is_some_and(|s| s.trim().is_empty() || s.contains(' ')) {
                e.push(bad(key, format!("`{}` is not a frame name", v.as_deref().unwrap_or(""))));
            }
        }
        let color = self.color.unwrap_or(dev.color);
        let points = self.points.unwrap_or(dev.points);
        let depth = self.depth.unwrap_or(dev.depth);
        if !(color || depth || points) {
            e.push(bad(
                "color",
                "every stream is off (color, depth, points): the camera would publish nothing"
                    .into(),
            ));
        }
        let camera_name = self.camera_name.clone().unwrap_or(dev.camera_name.to_string());
        let prefix = camera_name.trim_matches('/');
        let topics = self.topics(dev, prefix, &mut e);
        if !e.is_empty() {
            return Err(e);
        }
        let frame_id = self.frame_id.clone().unwrap_or(format!(
            "{}{}",
            prefix.replace('/', "_"),
            dev.frame_suffix
        ));
        Ok(CameraSettings {
            plugin: dev.plugin,
            namespace: self.namespace.clone(),
            camera,
            site: self.site.clone(),
            width,
            height,
            fovy,
            intrinsics,
            rate_hz,
            color,
            depth,
            points,
            points_rgb: self.points_rgb.unwrap_or(true),
            compressed: self.compressed.unwrap_or(true),
            jpeg_quality: q,
            clip_near,
            clip_far,
            depth_encoding,
            depth_frame_id: self.depth_frame_id.clone().unwrap_or(frame_id.clone()),
            frame_id,
            depth_noise: self.depth_noise.unwrap_or(false),
            depth_subpixel: subpixel,
            depth_baseline: baseline,
            shadows: self.shadows.unwrap_or(false),
            camera_info: color,
            topics,
        })
    }

    /// What it renders through: `camera:` (else the device's camera unless a `site:` is given);
    /// exactly one of the two.
    fn source(&self, dev: &Device, e: &mut Vec<ConfigError>) -> Option<String> {
        let camera = self.camera.clone().or_else(|| {
            if self.site.is_none() {
                dev.camera.map(str::to_string)
            } else {
                None
            }
        });
        if self.camera.is_some() && self.site.is_some() {
            e.push(bad("site", "`camera` and `site` are mutually exclusive: render through an MJCF camera OR from a site".into()));
        }
        if camera.is_none() && self.site.is_none() {
            e.push(bad("camera", format!("required: name the MJCF <camera> {} renders through (or a `site:` with `fovy`)", dev.plugin)));
        }
        for (key, v) in [("camera", &self.camera), ("site", &self.site)] {
            if v.as_deref().is_some_and(|s| s.trim().is_empty()) {
                e.push(bad(key, "must name an object of the model".into()));
            }
        }
        camera
    }

    /// The lens: a field of view (`fovy:`, else the device's unless `intrinsics:` are given) or
    /// measured intrinsics scaled to the render size; a site needs one of them.
    fn lens(
        &self,
        dev: &Device,
        width: u32,
        height: u32,
        e: &mut Vec<ConfigError>,
    ) -> (Option<f64>, Option<Intrinsics>) {
        let fovy = self.fovy.or(if self.intrinsics.is_some() { None } else { dev.fovy });
        if let Some(f) = self.fovy {
            if !(f.is_finite() && (MIN_FOV_DEG..=MAX_FOV_DEG).contains(&f)) {
                e.push(bad(
                    "fovy",
                    format!("must be within [{MIN_FOV_DEG}, {MAX_FOV_DEG}] degrees (a lens MuJoCo's perspective projection renders), got {f}"),
                ));
            }
            if self.intrinsics.is_some() {
                e.push(bad("fovy", "`fovy` and `intrinsics` are mutually exclusive: a lens is either a field of view or fx/fy/cx/cy".into()));
            }
        }
        let intrinsics = self.intrinsics.as_ref().filter(|l| check_lens(l, e)).map(|l| {
            let k = Intrinsics {
                width: l.width,
                height: l.height,
                fx: l.fx,
                fy: l.fy,
                cx: l.cx,
                cy: l.cy,
            };
            k.scaled(width.max(1), height.max(1))
        });
        if self.site.is_some() && fovy.is_none() && intrinsics.is_none() {
            e.push(bad("fovy", "a site has no lens: give `fovy` (deg) or `intrinsics`".into()));
        }
        (fovy, intrinsics)
    }

    /// The depth measured: clip planes, and an encoding that carries up to clip_far.
    fn depth_range(&self, dev: &Device, e: &mut Vec<ConfigError>) -> (f64, f64, DepthEncoding) {
        let clip_near = self.clip_near.unwrap_or(dev.clip_near);
        let clip_far = self.clip_far.unwrap_or(dev.clip_far);
        let (min_near, max_far) = (bounds::MIN_CLIP_NEAR_M, bounds::MAX_CLIP_FAR_M);
        if !(clip_near.is_finite() && clip_near >= min_near) {
            e.push(bad("clip_near", format!("must be >= {min_near} m, got {clip_near}")));
        }
        if !(clip_far.is_finite() && clip_far > 0.0 && clip_far <= max_far) {
            e.push(bad("clip_far", format!("must be within (0, {max_far}] m, got {clip_far}")));
        } else if clip_near >= clip_far {
            e.push(bad(
                if self.clip_near.is_some() { "clip_near" } else { "clip_far" },
                format!("clip_near ({clip_near}) must be below clip_far ({clip_far}): they bound the depth measured (m)"),
            ));
        }
        let depth_encoding = self.depth_encoding.unwrap_or(dev.depth_encoding);
        if depth_encoding == DepthEncoding::U16 && clip_far > 65.535 {
            e.push(if self.depth_encoding.is_some() {
                bad(
                    "depth_encoding",
                    format!("16UC1 carries millimetres up to 65.535 m, but clip_far is {clip_far} m; lower clip_far to the depth the world needs (or keep 32FC1) rather than saturate"),
                )
            } else {
                bad(
                    "clip_far",
                    format!("{} publishes depth as 16UC1 millimetres, which carry up to 65.535 m, but clip_far is {clip_far} m; lower clip_far to the depth the world needs, or set `depth_encoding: 32FC1`", dev.plugin),
                )
            });
        }
        (clip_near, clip_far, depth_encoding)
    }

    /// The stereo depth noise model: subpixel disparity error and baseline.
    fn depth_model(&self, dev: &Device, e: &mut Vec<ConfigError>) -> (f64, f64) {
        let subpixel = self.depth_subpixel.unwrap_or(0.08);
        let baseline = self.depth_baseline.unwrap_or(dev.baseline);
        let (max_sub, min_base) = (bounds::MAX_DEPTH_SUBPIXEL_PX, bounds::MIN_DEPTH_BASELINE_M);
        if !(subpixel.is_finite() && (0.0..=max_sub).contains(&subpixel)) {
            e.push(bad(
                "depth_subpixel",
                format!("must be within [0, {max_sub}] px, got {subpixel}"),
            ));
        }
        if !(baseline.is_finite() && baseline >= min_base && baseline <= bounds::MAX_SIZE_M) {
            e.push(bad(
                "depth_baseline",
                format!("must be within [{min_base}, {}] m, got {baseline}", bounds::MAX_SIZE_M),
            ));
        }
        (subpixel, baseline)
    }

    /// Topic per role: the device's layout under the camera name, renamed by `topics:`.
    fn topics(
        &self,
        dev: &Device,
        prefix: &str,
        e: &mut Vec<ConfigError>,
    ) -> BTreeMap<&'static str, String> {
        let join =
            |rel: &str| if prefix.is_empty() { rel.to_string() } else { format!("{prefix}/{rel}") };
        let mut topics: BTreeMap<&'static str, String> = BTreeMap::new();
        topics.insert("image", join(dev.layout.image));
        topics.insert("image_compressed", format!("{}/compressed", join(dev.layout.image)));
        topics.insert("camera_info", join(dev.layout.camera_info));
        topics.insert("depth", join(dev.layout.depth));
        topics.insert("depth_info", join(dev.layout.depth_info));
        topics.insert("points", join(dev.layout.points));
        e.extend(crate::plugins::shared::check_topics(&self.topics, &ROLES));
        for (k, v) in &self.topics {
            if let Some(r) = ROLES.iter().find(|r| **r == k.as_str()) {
                topics.insert(r, v.clone());
            }
        }
        topics
    }
}
