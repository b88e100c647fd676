//! `segmentation_camera`: per-pixel class and instance labels through an MJCF camera (or a site),
//! and the 2D boxes that fall out of them, all from one render.
//!
//! Endpoints (under `<camera_name>/`, default `segmentation`): `labels` (sensor_msgs/Image mono8,
//! the class image: each pixel the `class_id` of the class owning the geom it hit, 0 where nothing
//! labelled was hit), `instances` (16UC1, the body id of that geom; off unless `instances: true`),
//! `detections` (vision_msgs/Detection2DArray: one tight box per visible instance with at least
//! `min_pixels` pixels, class id in `results[0].hypothesis.class_id`, body id in `id`), and
//! `camera_info`, which describes all of them. The colour stream (`image_raw`, `compressed`) is
//! off by default: a label camera usually shares its optics with the RGB sensor that already
//! publishes those pixels; `color: true` gives a pixel-aligned image/label pair off one render.
//!
//! Lazy like every camera: the render gate ORs over the image and label endpoints, each of which
//! publishes only for a subscriber. Absent entities are masked in the label pass (see
//! `crate::render::service`). Vocabulary and matching: `crate::camera::labels`.

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::camera::config::{CameraConfig, DepthEncoding, Device, GENERIC};
use crate::camera::labels::{self, ClassConfig, LabelTable};
use crate::camera::Capture;
use crate::context::payload::Image;
use crate::context::{EndpointId, Payload, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::plugin::{typed_config, Hooks, Plugin, PluginArgs, PluginDescriptor};

/// The label camera's defaults (a generic camera layout under `segmentation/`).
pub const SEGMENTATION: Device = Device {
    plugin: "segmentation_camera",
    camera: None,
    width: 640,
    height: 480,
    fovy: None,
    rate_hz: 10.0,
    color: false,
    depth: false,
    points: false,
    clip_near: 0.05,
    clip_far: 10.0,
    baseline: 0.05,
    depth_encoding: DepthEncoding::F32,
    camera_name: "segmentation",
    layout: GENERIC,
    frame_suffix: "_optical_frame",
};

/// Endpoint roles a `topics:` key may rename.
pub const ROLES: [&str; 6] =
    ["image", "image_compressed", "camera_info", "labels", "instances", "detections"];

fn d_min_pixels() -> u32 {
    16
}

crate::camera_keys! {
    {
        /// Config of `segmentation_camera`: its own keys, then the camera keys it shares with
        /// `camera` (defined once in `crate::camera::keys`). Defaults: 640×480 at 10 Hz, topics
        /// under `segmentation/`, frame `camera_optical_frame` (the frame of the camera whose
        /// optics it shares).
        #[derive(Debug, Clone, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct SegmentationConfig
    }
    /// The vocabulary, in priority order (the first class that matches a geom wins). Required.
    #[serde(default)]
    pub classes: Vec<ClassConfig>,
    /// Also publish the instance-id image (16UC1, body ids).
    #[serde(default)]
    pub instances: bool,
    /// Publish the 2D boxes derived from the mask (vision_msgs/Detection2DArray).
    #[serde(default = "crate::plugin::yes")]
    pub detections: bool,
    /// An instance with fewer visible pixels is not reported (>= 1).
    #[serde(default = "d_min_pixels")]
    pub min_pixels: u32,
    /// Publish the colour stream too (off by default).
    #[serde(default)]
    pub color: bool,
    @camera, @site, @width, @height, @fovy, @intrinsics, @rate_hz, @compressed, @jpeg_quality,
    @frame_id, @camera_name, @namespace, @topics,
}

/// The `segmentation_camera` plugin.
pub struct SegmentationCamera {
    cfg: SegmentationConfig,
    capture: Capture,
    topics: BTreeMap<&'static str, String>,
    table: Option<LabelTable>,
    labels: Option<EndpointId>,
    instances: Option<EndpointId>,
    detections: Option<EndpointId>,
}

fn create(
    value: &serde_norway::Value,
    args: &PluginArgs,
) -> Result<Box<dyn Plugin>, Vec<ConfigError>> {
    let cfg: SegmentationConfig = typed_config(value)?;
    let mut e = labels::check_classes(&cfg.classes);
    if cfg.min_pixels == 0 {
        e.push(ConfigError::new("min_pixels", "must be >= 1 (px)"));
    }
    let prefix = cfg.camera_name.clone().unwrap_or(SEGMENTATION.camera_name.into());
    let prefix = prefix.trim_matches('/');
    let join =
        |rel: &str| if prefix.is_empty() { rel.to_string() } else { format!("{prefix}/{rel}") };
    let mut topics: BTreeMap<&'static str, String> = BTreeMap::new();
    for r in ["labels", "instances", "detections"] {
        topics.insert(r, join(r));
    }
    // The camera's own roles are checked by the camera config they are handed to; the rest
    // (this plugin's roles and unknown ones) here, with every role named in the refusal.
    let (camera_topics, own): (BTreeMap<String, String>, BTreeMap<String, String>) = cfg
        .topics
        .clone()
        .into_iter()
        .partition(|(k, _)| ROLES.contains(&k.as_str()) && !topics.contains_key(k.as_str()));
    e.extend(crate::plugins::shared::check_topics(&own, &ROLES));
    for (k, v) in &own {
        if let Some(&r) = ROLES.iter().find(|r| **r == k.as_str()) {
            topics.insert(r, v.clone());
        }
    }
    let cam = CameraConfig {
        namespace: cfg.namespace.clone(),
        camera: cfg.camera.clone(),
        site: cfg.site.clone(),
        width: cfg.width,
        height: cfg.height,
        fovy: cfg.fovy,
        intrinsics: cfg.intrinsics,
        rate_hz: cfg.rate_hz,
        color: Some(true), // the colour switch is this plugin's; camera_info is published anyway
        compressed: cfg.compressed,
        jpeg_quality: cfg.jpeg_quality,
        frame_id: Some(cfg.frame_id.clone().unwrap_or("camera_optical_frame".into())),
        camera_name: cfg.camera_name.clone(),
        topics: camera_topics,
        ..CameraConfig::default()
    };
    let mut s = match cam.resolve(&SEGMENTATION) {
        Ok(s) => s,
        Err(more) => {
            e.extend(more);
            return Err(e);
        }
    };
    if !e.is_empty() {
        return Err(e);
    }
    s.color = cfg.color;
    s.camera_info = true;
    Ok(Box::new(SegmentationCamera {
        capture: Capture::new(s, args),
        cfg,
        topics,
        table: None,
        labels: None,
        instances: None,
        detections: None,
    }))
}

/// The registry entry.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "segmentation_camera",
        "Per-pixel class (mono8) and instance (16UC1 body ids) labels and vision_msgs/Detection2DArray boxes from one render; classes matched in declaration order.",
        SegmentationConfig;
        create
    )
}

fn mono(data: Vec<u8>, enc: &str, bpp: u32, k: (u32, u32), stamp: f64, frame: &str) -> Image {
    Image {
        stamp,
        frame_id: frame.to_string(),
        height: k.1,
        width: k.0,
        encoding: enc.to_string(),
        step: k.0 * bpp,
        data: Arc::new(data),
    }
}

impl Plugin for SegmentationCamera {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        self.capture.configure(ctx)?;
        self.table = Some(LabelTable::build(ctx.model(), &ctx.entities, &self.cfg.classes)?);
        let t = &self.topics;
        self.labels = Some(self.capture.add_endpoint(
            ctx,
            "labels",
            "sensor_msgs/msg/Image",
            &t["labels"],
        )?);
        if self.cfg.instances {
            self.instances = Some(self.capture.add_endpoint(
                ctx,
                "instances",
                "sensor_msgs/msg/Image",
                &t["instances"],
            )?);
        }
        if self.cfg.detections {
            self.detections = Some(self.capture.add_endpoint(
                ctx,
                "detections",
                "vision_msgs/msg/Detection2DArray",
                &t["detections"],
            )?);
        }
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let tick = ctx.tick;
        if !self.capture.due_tick(tick) {
            return Ok(());
        }
        let wants = |id: Option<EndpointId>| id.is_some_and(|i| ctx.interface.is_due(i, tick));
        let (w_lab, w_inst, w_det) =
            (wants(self.labels), wants(self.instances), wants(self.detections));
        let colour = self.capture.colour_wanted(ctx, tick);
        let need_rgb = colour.0 || colour.1;
        let need_seg = w_lab || w_inst || w_det;
        let stamp = ctx.sim_time();
        if need_rgb || need_seg {
            let mut f = self.capture.render_passes(ctx, need_rgb, false, need_seg)?;
            if let Some(rgb) = f.rgb.take() {
                self.capture.publish_colour(ctx, Arc::new(rgb), stamp, colour)?;
            }
            if let Some(ids) = f.segmentation.take() {
                let size = (f.width(), f.height());
                let table = self.table.as_ref().expect("configured");
                let l = table.label(&ids, size.0, self.cfg.min_pixels);
                let frame = self.capture.settings().frame_id.clone();
                if w_lab {
                    let img = mono(l.classes, "mono8", 1, size, stamp, &frame);
                    ctx.interface.publish(self.labels.expect("wanted"), tick, Payload::Image(img));
                }
                if w_inst {
                    let data = l.instances.iter().flat_map(|v| v.to_le_bytes()).collect();
                    let img = mono(data, "16UC1", 2, size, stamp, &frame);
                    let id = self.instances.expect("wanted");
                    ctx.interface.publish(id, tick, Payload::Image(img));
                }
                if w_det {
                    let d = labels::detections(&l.boxes, stamp, &frame);
                    let id = self.detections.expect("wanted");
                    ctx.interface.publish(id, tick, Payload::Detections2D(d));
                }
            }
        }
        self.capture.publish_info(ctx, stamp);
        Ok(())
    }
}
