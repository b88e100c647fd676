//! The capture core of every camera plugin: resolve the view once, declare the endpoints, and on
//! each due tick render what somebody listens to and publish it.
//!
//! Laziness, twice. The render gate is an OR over the endpoints one render feeds (`image`,
//! `image_compressed`, `depth`, `points`): one subscriber to any of them pays for the GL pass,
//! none pays nothing. The publish gate is per endpoint (all four are `lazy`): a raw-image
//! subscriber does not make the camera encode a JPEG, and a depth subscriber alone renders no
//! colour readback it would not use. Without a bridge (`has_subscribers` unknown) every enabled
//! stream is produced. `camera_info`/`depth/camera_info` are cheap and describe the lens, so they
//! publish on every due tick whether or not a frame was rendered.

use mujoco_rs::prelude::*;

use crate::context::claims::absolute_topic;
use crate::context::{Claimant, Endpoint, EndpointId, Entity, Payload, SimContext};
use crate::error::HookResult;
use crate::plugin::PluginArgs;
use crate::render::{Frame, Intrinsics, Pose, RenderRequest, View};
use crate::spawn::frame_prefix;

use super::config::CameraSettings;
use super::encode::{self, DepthModel};

/// Where the camera looks from, resolved at configure.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Source {
    Camera(usize),
    Site(usize),
}

/// Endpoint ids (`None` = stream off).
#[derive(Debug, Clone, Copy, Default)]
struct Eps {
    image: Option<EndpointId>,
    image_compressed: Option<EndpointId>,
    camera_info: Option<EndpointId>,
    depth: Option<EndpointId>,
    depth_info: Option<EndpointId>,
    points: Option<EndpointId>,
}

/// A camera's capture state.
pub struct Capture {
    s: CameraSettings,
    owner: Option<String>,
    rng_name: String,
    source: Source,
    k: Intrinsics,
    depth_model: DepthModel,
    gl_clip: (f64, f64),
    every: u64,
    eps: Eps,
    scope: Option<(Option<String>, String)>,
    claimant: Claimant,
    renders: u64,
}

impl Capture {
    /// A capture from checked settings.
    pub fn new(s: CameraSettings, args: &PluginArgs) -> Self {
        Capture {
            claimant: Claimant::new(&args.address, s.plugin),
            rng_name: format!("{}:{}", s.plugin, args.address),
            owner: args.owner.clone(),
            s,
            source: Source::Camera(0),
            k: Intrinsics::from_fovy(1, 1, 45.0),
            depth_model: DepthModel { clip_near: 0.0, clip_far: 0.0, sigma_k: 0.0 },
            gl_clip: (0.01, 100.0),
            every: 1,
            eps: Eps::default(),
            scope: None,
            renders: 0,
        }
    }

    /// The lens every frame is rendered and published with.
    pub fn intrinsics(&self) -> Intrinsics {
        self.k
    }

    /// Frames this camera rendered.
    pub fn renders(&self) -> u64 {
        self.renders
    }

    /// Resolve the camera or site, the lens, and declare the endpoints.
    pub fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let ent = ctx.entities.resolve_owner(self.owner.as_deref()).cloned();
        let prefix = ent.as_ref().map(|e| e.prefix.clone()).unwrap_or_default();
        let (w, h) = (self.s.width, self.s.height);
        self.source = match (&self.s.camera, &self.s.site) {
            (Some(c), _) => Source::Camera(resolve(
                ctx.model(),
                MjtObjBase::mjOBJ_CAMERA,
                "camera",
                c,
                &prefix,
                ent.as_ref(),
            )?),
            (None, Some(s)) => Source::Site(resolve(
                ctx.model(),
                MjtObjBase::mjOBJ_SITE,
                "site",
                s,
                &prefix,
                ent.as_ref(),
            )?),
            (None, None) => unreachable!("resolve() requires camera or site"),
        };
        self.k = match (self.s.intrinsics, self.s.fovy, self.source) {
            (Some(k), _, _) => k,
            (None, Some(f), _) => Intrinsics::from_fovy(w, h, f),
            (None, None, Source::Camera(id)) => Intrinsics::of_model_camera(ctx.model(), id, w, h)?,
            (None, None, Source::Site(_)) => unreachable!("resolve() requires a lens for a site"),
        };
        let sigma_k = if self.s.depth_noise {
            self.s.depth_subpixel / (self.k.fx * self.s.depth_baseline)
        } else {
            0.0
        };
        self.depth_model =
            DepthModel { clip_near: self.s.clip_near, clip_far: self.s.clip_far, sigma_k };
        // GL planes outside the measured band: nearer geometry must still occlude (it reads "too
        // close", not see-through), and colour sees as far as the model's own far plane.
        let m = ctx.model();
        let model_far = m.vis().map.zfar as f64 * m.stat().extent;
        self.gl_clip = ((self.s.clip_near * 0.5).min(0.01), model_far.max(self.s.clip_far * 1.5));

        let ns = self
            .s
            .namespace
            .clone()
            .or_else(|| ent.as_ref().map(|e| e.namespace.clone()))
            .unwrap_or_default();
        let owner = ent.as_ref().map(|e| e.name.clone()).or(self.owner.clone());
        let add = |ctx: &mut SimContext, role: &'static str, ty: &str, frame: &str, lazy| {
            let ep = Endpoint::out(role)
                .owner(owner.as_deref())
                .namespace(&ns)
                .frame_prefix(&frame_prefix(&ns))
                .rate(self.s.rate_hz)
                .lazy(lazy)
                .hint("ros2", "type", ty)
                .hint("ros2", "qos", "sensor_data")
                .hint("ros2", "frame_id", frame)
                .hint("ros2", "topic", self.s.topics[role].clone());
            Some(ctx.interface.add(ep))
        };
        let (cf, df) = (self.s.frame_id.clone(), self.s.depth_frame_id.clone());
        let mut eps = Eps::default();
        if self.s.color {
            eps.image = add(ctx, "image", "sensor_msgs/msg/Image", &cf, true);
            if self.s.compressed {
                eps.image_compressed =
                    add(ctx, "image_compressed", "sensor_msgs/msg/CompressedImage", &cf, true);
            }
        }
        if self.s.camera_info {
            eps.camera_info = add(ctx, "camera_info", "sensor_msgs/msg/CameraInfo", &cf, false);
        }
        if self.s.depth {
            eps.depth = add(ctx, "depth", "sensor_msgs/msg/Image", &df, true);
            eps.depth_info = add(ctx, "depth_info", "sensor_msgs/msg/CameraInfo", &df, false);
        }
        if self.s.points {
            eps.points = add(ctx, "points", "sensor_msgs/msg/PointCloud2", &df, true);
        }
        self.eps = eps;
        let on = [
            ("image", eps.image),
            ("image_compressed", eps.image_compressed),
            ("camera_info", eps.camera_info),
            ("depth", eps.depth),
            ("depth_info", eps.depth_info),
            ("points", eps.points),
        ];
        for (role, id) in on {
            if id.is_some() {
                ctx.claims.topic(
                    &self.claimant,
                    role,
                    &absolute_topic(&ns, &self.s.topics[role]),
                )?;
            }
        }
        let view = match self.source {
            Source::Camera(id) => format!("camera {id}"),
            Source::Site(id) => format!("site {id}"),
        };
        let fp = frame_prefix(&ns);
        ctx.claims.stamp(&self.claimant, &view, "frame_id", &format!("{fp}{cf}"))?;
        if (self.s.depth || self.s.points) && df != cf {
            ctx.claims.stamp(&self.claimant, &view, "depth_frame_id", &format!("{fp}{df}"))?;
        }
        if let Some(e) = ent.as_ref() {
            check_mount_frames(e, &self.s, self.s.depth || self.s.points)?;
        }
        self.scope = Some((owner, ns));
        let first = [eps.camera_info, eps.depth_info, eps.points].into_iter().flatten().next();
        self.every =
            first.and_then(|id| ctx.interface.get(id).snapped).map(|s| s.every_steps).unwrap_or(1);
        Ok(())
    }

    /// The MuJoCo-convention pose the camera renders from now.
    fn view(&self, ctx: &SimContext) -> View {
        match self.source {
            Source::Camera(id) => View::Camera(id),
            Source::Site(id) => {
                let d = ctx.data();
                let (p, m) = (d.site_xpos()[id], d.site_xmat()[id]);
                // camera x = −site y (right), camera y = site z (up), camera z = −site x (back)
                let mut mat = [0.0; 9];
                for r in 0..3 {
                    mat[3 * r] = -m[3 * r + 1];
                    mat[3 * r + 1] = m[3 * r + 2];
                    mat[3 * r + 2] = -m[3 * r];
                }
                View::Pose(Pose { pos: p, mat })
            }
        }
    }

    /// Render one frame now with the given outputs (what post_step does on a due tick).
    pub fn render(
        &mut self,
        ctx: &mut SimContext,
        rgb: bool,
        depth: bool,
    ) -> Result<Frame, String> {
        self.render_passes(ctx, rgb, depth, false)
    }

    /// Render one frame now, with per-pixel geom ids when `labels` is set.
    pub fn render_passes(
        &mut self,
        ctx: &mut SimContext,
        rgb: bool,
        depth: bool,
        labels: bool,
    ) -> Result<Frame, String> {
        let req = RenderRequest::new(self.view(ctx), 0, 0)
            .intrinsics(self.k)
            .outputs(rgb, depth, labels)
            .clip(self.gl_clip.0, self.gl_clip.1)
            .shadows(self.s.shadows);
        let f = ctx.render(&req).map_err(|e| format!("{}: {e}", self.s.plugin))?;
        self.renders += 1;
        Ok(f)
    }

    /// Depth as the device measures it (band, noise) from a frame with depth.
    pub fn measured_depth(&self, ctx: &SimContext, f: &Frame) -> Result<Vec<f32>, String> {
        let mut rng = if self.depth_model.sigma_k > 0.0 {
            Some(ctx.rng_for(&self.rng_name).map_err(|e| e.to_string())?)
        } else {
            None
        };
        Ok(encode::measured_depth(f, &self.depth_model, rng.as_mut()))
    }

    /// Declare one more lazy output endpoint in this camera's scope (owner, namespace, frame
    /// prefix, rate, sensor-data QoS), on topic `topic`, stamped in the colour optical frame.
    /// Call after [`Capture::configure`].
    /// The topic joins this camera's claim: a collision with another camera is an error.
    pub fn add_endpoint(
        &mut self,
        ctx: &mut SimContext,
        role: &'static str,
        ty: &str,
        topic: &str,
    ) -> Result<EndpointId, String> {
        let (owner, ns) = self.scope.clone().expect("configure() ran");
        ctx.claims.topic(&self.claimant, role, &absolute_topic(&ns, topic))?;
        let ep = Endpoint::out(role)
            .owner(owner.as_deref())
            .namespace(&ns)
            .frame_prefix(&frame_prefix(&ns))
            .rate(self.s.rate_hz)
            .lazy(true)
            .hint("ros2", "type", ty)
            .hint("ros2", "qos", "sensor_data")
            .hint("ros2", "frame_id", self.s.frame_id.as_str())
            .hint("ros2", "topic", topic);
        Ok(ctx.interface.add(ep))
    }

    /// True on the ticks this camera's rate falls on.
    pub fn due_tick(&self, tick: u64) -> bool {
        tick % self.every == 0
    }

    /// Whether the colour endpoints (`image`, `image_compressed`) are wanted at `tick`.
    pub fn colour_wanted(&self, ctx: &SimContext, tick: u64) -> (bool, bool) {
        let wants = |id: Option<EndpointId>| id.is_some_and(|i| ctx.interface.is_due(i, tick));
        (wants(self.eps.image), wants(self.eps.image_compressed))
    }

    /// Publish a rendered colour buffer on the wanted colour endpoints.
    pub fn publish_colour(
        &self,
        ctx: &mut SimContext,
        rgb: std::sync::Arc<Vec<u8>>,
        stamp: f64,
        (w_img, w_jpg): (bool, bool),
    ) -> HookResult {
        let tick = ctx.tick;
        let img = encode::color_image(rgb, &self.k, stamp, &self.s.frame_id);
        if w_jpg {
            let c = encode::jpeg(&img, self.s.jpeg_quality)?;
            let id = self.eps.image_compressed.expect("wanted");
            ctx.interface.publish(id, tick, Payload::CompressedImage(c));
        }
        if w_img {
            let id = self.eps.image.expect("wanted");
            ctx.interface.publish(id, tick, Payload::Image(img));
        }
        Ok(())
    }

    /// Publish `camera_info` (and `depth/camera_info`) for a due tick.
    pub fn publish_info(&self, ctx: &mut SimContext, stamp: f64) {
        let tick = ctx.tick;
        if let Some(id) = self.eps.camera_info {
            let ci = encode::camera_info(&self.k, stamp, &self.s.frame_id);
            ctx.interface.publish(id, tick, Payload::CameraInfo(ci));
        }
        if let Some(id) = self.eps.depth_info {
            let ci = encode::camera_info(&self.k, stamp, &self.s.depth_frame_id);
            ctx.interface.publish(id, tick, Payload::CameraInfo(ci));
        }
    }

    /// The checked settings.
    pub fn settings(&self) -> &CameraSettings {
        &self.s
    }

    /// On a due tick: render if anyone listens, publish what each listener wants.
    pub fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if ctx.tick % self.every != 0 {
            return Ok(());
        }
        let tick = ctx.tick;
        let wants = |id: Option<EndpointId>| id.is_some_and(|i| ctx.interface.is_due(i, tick));
        let (w_img, w_jpg, w_depth, w_pts) = (
            wants(self.eps.image),
            wants(self.eps.image_compressed),
            wants(self.eps.depth),
            wants(self.eps.points),
        );
        let stamp = ctx.sim_time();
        let need_rgb = w_img || w_jpg || (w_pts && self.s.points_rgb);
        let need_depth = w_depth || w_pts;
        if need_rgb || need_depth {
            let mut f = self.render(ctx, need_rgb, need_depth)?;
            let k = f.intrinsics;
            let rgb = f.rgb.take().map(std::sync::Arc::new);
            let measured = if need_depth { Some(self.measured_depth(ctx, &f)?) } else { None };
            if let Some(rgb) = &rgb {
                self.publish_colour(ctx, rgb.clone(), stamp, (w_img, w_jpg))?;
            }
            if let Some(z) = &measured {
                if w_depth {
                    let img = encode::depth_image(
                        z,
                        &k,
                        self.s.depth_encoding,
                        stamp,
                        &self.s.depth_frame_id,
                    );
                    ctx.interface.publish(
                        self.eps.depth.expect("wanted"),
                        tick,
                        Payload::Image(img),
                    );
                }
                if w_pts {
                    let colours =
                        if self.s.points_rgb { rgb.as_deref().map(|v| v.as_slice()) } else { None };
                    let pc = encode::point_cloud(z, colours, &k, stamp, &self.s.depth_frame_id);
                    ctx.interface.publish(
                        self.eps.points.expect("wanted"),
                        tick,
                        Payload::PointCloud2(pc),
                    );
                }
            }
        }
        self.publish_info(ctx, stamp);
        Ok(())
    }
}

/// Resolve an unprefixed camera or site name under the entity's prefix, or an error naming the
/// key, what was looked for and what exists.
fn resolve(
    m: &MjModel,
    t: MjtObjBase,
    key: &str,
    name: &str,
    prefix: &str,
    ent: Option<&Entity>,
) -> Result<usize, String> {
    let full = format!("{prefix}{name}");
    if let Some(id) = m.name_to_id(t, &full) {
        return Ok(id);
    }
    let n = match t {
        MjtObjBase::mjOBJ_CAMERA => m.ffi().ncam,
        _ => m.ffi().nsite,
    } as usize;
    let have: Vec<String> = (0..n)
        .filter_map(|i| m.id_to_name(t, i))
        .filter(|s| !s.is_empty() && s.starts_with(prefix))
        .map(|s| s[prefix.len()..].to_string())
        .collect();
    let whose = match ent {
        Some(e) => format!("entity `{}` (prefix `{}`)", e.name, e.prefix),
        None => "the model".to_string(),
    };
    let looked = if prefix.is_empty() { String::new() } else { format!(" (looked for `{full}`)") };
    Err(format!("{key}: no {key} `{name}` in {whose}{looked}; its {key}s: [{}]", have.join(", ")))
}

/// A camera nested under a device mount (`spawn_sensor`) stamps its images in frames the mount
/// publishes: a frame nobody publishes (a `camera_name:` or `frame_id:` set on the camera entry
/// rather than on the mount) leaves every consumer's TF lookup failing.
fn check_mount_frames(mount: &Entity, s: &CameraSettings, depth: bool) -> Result<(), String> {
    let Some(frames) = mount.meta.get("device_frames") else { return Ok(()) };
    let frames: Vec<&str> = frames.split(',').collect();
    let mut keys = vec![("frame_id", s.frame_id.as_str())];
    if depth {
        keys.push(("depth_frame_id", s.depth_frame_id.as_str()));
    }
    for (key, f) in keys {
        if !frames.contains(&f) {
            return Err(format!(
                "{key}: `{f}` is not a frame of the device `{}` this camera is nested under (it publishes {}), so nothing would publish the frame its images are stamped in; name the device on its spawn_sensor entry (`camera_name:` there names the device's frames and this camera's topics and frames together), or set `{key}:` to one of its frames",
                mount.name,
                frames.join(", ")
            ));
        }
    }
    Ok(())
}
