//! `object_detector`: named objects detected relative to a robot, from ground truth plus an error
//! model: what a pose estimator feeding a manipulation stack would publish.
//!
//! A component of the robot's spawn entry (`requires_owner`): the poses are expressed in `frame`,
//! a body of that robot (default its root body), so the header's frame is reachable through the
//! robot's own kinematics, never `map`. Endpoint `detections` (vision_msgs/Detection3DArray,
//! default topic `detections` in the robot's namespace) carries, every `1/rate_hz`, one
//! Detection3D per object detected this cycle, in declaration order: the class in
//! `results[0].hypothesis.class_id`, `confidence` as its score, the (noisy) pose in
//! `results[0].pose` and `bbox.center`, `size` in `bbox.size`, the object's body name in `id`.
//! A missing object means "not detected this cycle" (latest wins); an absent entity is never
//! detected.
//!
//! Error model, applied in this order to each object within `max_range` (0 = unlimited) of the
//! frame: it is dropped with probability `dropout_percent`/100; its position gets
//! `position_bias` plus zero-mean Gaussian noise of `position_stddev` per axis; its orientation a
//! small rotation of `orientation_stddev` (rad) about each axis. The pose covariance says those
//! variances. Draws come from `ctx.rng_for("object_detector:<address>")` only (reproducible from
//! the run's seed, different per episode), and none is drawn when the model is all zero:
//! detections with noise off are the ground truth exactly.

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::entities::Pose;
use crate::context::payload::{Detection3D, Detection3DArray, Payload};
use crate::context::{Endpoint, EndpointId, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::math::{quat, relative, xyzw, UnitQuaternion};
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared::{self as common, Scope};
use crate::world::bounds::{
    MAX_DETECTOR_ORIENTATION_STDDEV_RAD, MAX_DETECTOR_POSITION_ERROR_M, MAX_POSITION_M,
};

/// Endpoint roles (keys of `topics:`).
pub const ROLES: [&str; 1] = ["detections"];

/// One object a detector would report.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObjectConfig {
    /// The object's body (compiled model name) or the name of the entity it is (its root body).
    pub body: String,
    /// What a detector would call it (`results[0].hypothesis.class_id`).
    pub class_id: String,
    /// Its box size (m) about the body frame (`bbox.size`).
    pub size: [f64; 3],
}

fn d_rate() -> f64 {
    10.0
}
fn d_one() -> f64 {
    1.0
}

/// Config of `object_detector`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObjectDetectorConfig {
    /// Body of the robot whose frame the poses are expressed in (model name without the spawn
    /// prefix). Default: the robot's root body.
    #[serde(default)]
    pub frame: String,
    /// Publish rate (Hz). Default 10.
    #[serde(default = "d_rate")]
    pub rate_hz: f64,
    /// The objects, in the order detections are listed. Required.
    #[serde(default)]
    pub objects: Vec<ObjectConfig>,
    /// Gaussian position noise (m) per axis.
    #[serde(default)]
    pub position_stddev: f64,
    /// Small-angle orientation noise (rad) about each axis.
    #[serde(default)]
    pub orientation_stddev: f64,
    /// Systematic position offset (m) in `frame` (calibration error is not zero-mean).
    #[serde(default)]
    pub position_bias: [f64; 3],
    /// This percentage of detections goes missing, 0..=100.
    #[serde(default)]
    pub dropout_percent: f64,
    /// Report only objects within this distance (m) of the frame origin; 0 = unlimited.
    #[serde(default)]
    pub max_range: f64,
    /// The hypothesis score, 0..=1.
    #[serde(default = "d_one")]
    pub confidence: f64,
    /// Transport scope. Default: the robot's namespace.
    #[serde(default)]
    pub namespace: String,
    /// Topic per role (`detections`): relative in the namespace, or absolute `/x`.
    #[serde(default)]
    pub topics: std::collections::BTreeMap<String, String>,
}

impl ValidateConfig for ObjectDetectorConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        e.extend(crate::plugin::check_rate("rate_hz", self.rate_hz));
        if self.objects.is_empty() {
            e.push(ConfigError::new(
                "objects",
                "required: the objects to detect, e.g. `- {body: graspable_carton, class_id: parcel, size: [0.04, 0.024, 0.09]}`",
            ));
        }
        for (i, o) in self.objects.iter().enumerate() {
            if o.body.trim().is_empty() {
                e.push(ConfigError::new(
                    format!("objects[{i}].body"),
                    "must name a body or an entity",
                ));
            }
            if o.class_id.trim().is_empty() {
                e.push(ConfigError::new(format!("objects[{i}].class_id"), "must name the class"));
            }
            if !o.size.iter().all(|s| s.is_finite() && *s > 0.0) {
                e.push(ConfigError::new(
                    format!("objects[{i}].size"),
                    format!("each side must be > 0 (m), got {:?}", o.size),
                ));
            }
        }
        let (max_pos, max_rot) =
            (MAX_DETECTOR_POSITION_ERROR_M, MAX_DETECTOR_ORIENTATION_STDDEV_RAD);
        for (k, v, max, unit) in [
            ("position_stddev", self.position_stddev, max_pos, "m"),
            ("orientation_stddev", self.orientation_stddev, max_rot, "rad"),
            ("max_range", self.max_range, MAX_POSITION_M, "m"),
        ] {
            if !(v.is_finite() && (0.0..=max).contains(&v)) {
                e.push(ConfigError::new(k, format!("must be within [0, {max}] {unit}, got {v}")));
            }
        }
        if !self.position_bias.iter().all(|b| b.is_finite() && b.abs() <= max_pos) {
            e.push(ConfigError::new(
                "position_bias",
                format!("each axis must be within ±{max_pos} m, got {:?}", self.position_bias),
            ));
        }
        if !(0.0..=100.0).contains(&self.dropout_percent) {
            e.push(ConfigError::new(
                "dropout_percent",
                format!("must be within 0..=100 (%), got {}", self.dropout_percent),
            ));
        }
        if !(0.0..=1.0).contains(&self.confidence) {
            e.push(ConfigError::new(
                "confidence",
                format!("must be within 0..=1 (a hypothesis score), got {}", self.confidence),
            ));
        }
        e.extend(common::check_topics(&self.topics, &ROLES));
        e
    }
}

/// A resolved object.
#[derive(Debug, Clone)]
struct Target {
    body: usize,
    entity: Option<String>,
    id: String,
}

/// The `object_detector` plugin.
pub struct ObjectDetector {
    cfg: ObjectDetectorConfig,
    owner: Option<String>,
    rng_name: String,
    frame_body: usize,
    frame_id: String,
    targets: Vec<Target>,
    ep: EndpointId,
}

impl ObjectDetector {
    /// Construct from config.
    pub fn new(cfg: ObjectDetectorConfig, args: &PluginArgs) -> Self {
        ObjectDetector {
            cfg,
            owner: args.owner.clone(),
            rng_name: format!("object_detector:{}", args.address),
            frame_body: 0,
            frame_id: String::new(),
            targets: Vec::new(),
            ep: 0,
        }
    }

    fn noisy(&self) -> bool {
        self.cfg.position_stddev > 0.0
            || self.cfg.orientation_stddev > 0.0
            || self.cfg.dropout_percent > 0.0
    }

    /// This cycle's detections.
    pub fn detect(&self, ctx: &SimContext) -> Result<Detection3DArray, String> {
        let d = ctx.data();
        let pose = |b: usize| Pose { pos: d.xpos()[b], quat: d.xquat()[b] };
        let frame = pose(self.frame_body);
        let mut rng = if self.noisy() {
            Some(ctx.rng_for(&self.rng_name).map_err(|e| e.to_string())?)
        } else {
            None
        };
        let (sp, so) = (self.cfg.position_stddev, self.cfg.orientation_stddev);
        let mut cov = [0.0; 36];
        for i in 0..3 {
            cov[7 * i] = sp * sp;
            cov[7 * (i + 3)] = so * so;
        }
        let mut out = Vec::new();
        for (t, o) in self.targets.iter().zip(&self.cfg.objects) {
            if t.entity.as_deref().is_some_and(|e| !common::entity_present(ctx, e)) {
                continue;
            }
            let rel = relative(&frame, &pose(t.body));
            let range = rel.pos.iter().map(|v| v * v).sum::<f64>().sqrt();
            if self.cfg.max_range > 0.0 && range > self.cfg.max_range {
                continue;
            }
            let (mut p, mut q) = (rel.pos, quat(&rel.quat));
            if let Some(r) = rng.as_mut() {
                if self.cfg.dropout_percent > 0.0 && r.uniform() * 100.0 < self.cfg.dropout_percent
                {
                    continue;
                }
                for (i, v) in p.iter_mut().enumerate() {
                    *v += self.cfg.position_bias[i] + r.normal(sp);
                }
                if so > 0.0 {
                    q *=
                        UnitQuaternion::from_euler_angles(r.normal(so), r.normal(so), r.normal(so));
                }
            } else {
                for (i, v) in p.iter_mut().enumerate() {
                    *v += self.cfg.position_bias[i];
                }
            }
            out.push(Detection3D {
                class_id: o.class_id.clone(),
                score: self.cfg.confidence,
                position: p,
                orientation: xyzw(&q),
                covariance: cov,
                size: o.size,
                id: t.id.clone(),
            });
        }
        Ok(Detection3DArray {
            stamp: ctx.sim_time(),
            frame_id: self.frame_id.clone(),
            detections: out,
        })
    }
}

/// The spawn plugins whose entity is a robot: the only carriers a detector may be nested under.
pub const ROBOT_SPAWNERS: [&str; 2] = ["spawn_robot", "spawn_arm"];

/// Registry constructor: the typed config, plus the carrier check (the poses are expressed in a
/// link of the robot it is nested under, so nesting it under a prop or a sensor mount is refused).
pub fn create(
    value: &serde_norway::Value,
    args: &PluginArgs,
) -> Result<Box<dyn Plugin>, Vec<ConfigError>> {
    if let (Some(owner), Some(kind)) = (&args.owner, &args.owner_plugin) {
        if !ROBOT_SPAWNERS.contains(&kind.as_str()) {
            return Err(vec![ConfigError::new(
                "",
                format!(
                    "`object_detector` reports poses in a link of the robot it is nested under, but `{owner}` is a `{kind}`, not a robot; \
                     move this entry into the `components:` of a {} entry",
                    ROBOT_SPAWNERS.join(" or ")
                ),
            )]);
        }
    }
    crate::plugin::construct::<ObjectDetectorConfig, ObjectDetector>(
        value,
        args,
        ObjectDetector::new,
    )
}

/// The descriptor (refused at the top of a document: `requires_owner`; under a non-robot: by
/// [`create`]).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "object_detector",
        "Named objects as vision_msgs/Detection3DArray in a robot frame, from ground truth plus stddev/bias/dropout/max_range/confidence.",
        ObjectDetectorConfig;
        create
    )
    .requires_owner()
}

/// The body an object names: a compiled body name, else an entity's root body.
fn resolve_object(ctx: &SimContext, i: usize, name: &str) -> Result<usize, String> {
    let m = ctx.model();
    if let Some(b) = m.name_to_id(MjtObjBase::mjOBJ_BODY, name) {
        return Ok(b);
    }
    if let Some(e) = ctx.entities.get(name) {
        return common::entity_body(m, e);
    }
    Err(format!(
        "objects[{i}].body: no body or entity `{name}` in the model; entities: [{}]",
        ctx.entities.names().join(", ")
    ))
}

/// The entity a body belongs to: the one whose root is its nearest ancestor.
fn owning_entity(ctx: &SimContext, body: usize) -> Option<String> {
    let m = ctx.model();
    let parent = m.body_parentid();
    let mut b = body;
    loop {
        for e in ctx.entities.all() {
            if common::entity_roots(m, e).is_ok_and(|r| r.contains(&b)) {
                return Some(e.name.clone());
            }
        }
        if b == 0 {
            return None;
        }
        b = parent[b] as usize;
    }
}

impl Plugin for ObjectDetector {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let entity = common::owner_entity(ctx, "object_detector", self.owner.as_deref())?;
        let m = ctx.model();
        self.frame_body = common::resolve_body(m, &entity, "frame", &self.cfg.frame)?;
        let full = m.id_to_name(MjtObjBase::mjOBJ_BODY, self.frame_body).unwrap_or("base_link");
        self.frame_id = common::unprefixed(full, &entity.prefix).to_string();
        let mut targets = Vec::new();
        for (i, o) in self.cfg.objects.iter().enumerate() {
            let body = resolve_object(ctx, i, &o.body)?;
            let id = ctx.model().id_to_name(MjtObjBase::mjOBJ_BODY, body).unwrap_or("").to_string();
            if let Some(j) = targets.iter().position(|t: &Target| t.body == body) {
                return Err(format!(
                    "objects[{i}].body: `{}` is the body `{id}` that objects[{j}] (`{}`) already names; one body is one detection (two would report it twice under two classes): keep one entry, or name another body",
                    o.body, self.cfg.objects[j].body
                ));
            }
            targets.push(Target { body, entity: owning_entity(ctx, body), id });
        }
        self.targets = targets;
        let scope = Scope::new(&entity, Some(self.cfg.namespace.as_str()));
        let mut ep = Endpoint::out("detections")
            .rate(self.cfg.rate_hz)
            .hint("ros2", "type", "vision_msgs/msg/Detection3DArray")
            .hint("ros2", "frame_id", self.frame_id.as_str());
        if !self.cfg.topics.contains_key("detections") {
            ep = ep.hint("ros2", "topic", "detections");
        }
        self.ep = ctx.interface.add(scope.apply(ep, &self.cfg.topics));
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let tick = ctx.tick;
        if ctx.interface.is_due(self.ep, tick) {
            let d = self.detect(ctx)?;
            ctx.interface.publish(self.ep, tick, Payload::Detections3D(d));
        }
        Ok(())
    }
}
