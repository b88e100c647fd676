//! `spawn_model`: place a model as a prop from the world YAML, at a fixed pose.
//!
//! Unlike `spawn_robot`/`spawn_sensor` it brings no manifest: a prop is inert geometry. Its root
//! body is placed at `pose` (an omitted z is the floor: the model's origin at z = 0). `motion`
//! chooses welded scenery (default), a mocap body (`driven`) or a free body (`physics`, which
//! registers the free joint so it can be teleported; MuJoCo's `qpos0` re-seats it on reset).
//! `mass` rescales the root body's geom masses in proportion, `friction` overrides its geoms'
//! friction; `scale` resizes the geometry (not mass or inertia) through the attach frame.

use std::path::PathBuf;

use mujoco_rs::prelude::*;
use mujoco_rs::wrappers::mj_editing::MjtScaling;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::{Payload, Transform};
use crate::context::{
    Claimant, Endpoint, EndpointId, Entity, EntityKind, FrameKeys, SimContext, TfRoute,
};
use crate::error::{ConfigError, HookResult};
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, ValidateConfig};
use crate::spawn::{
    claim_tf, frame_prefix, load_model, Friction, Motion, PoseConfig, StaticTfPublisher,
};

/// `publish_tf`: whether (and how) the root body's world pose goes on TF.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PublishTf {
    /// `false`: nothing (default); `true`: the same as `dynamic`.
    Flag(bool),
    /// `static` (once, on the latched tf_static) or `dynamic` (streamed at `tf_rate`).
    Mode(String),
}

impl Default for PublishTf {
    fn default() -> Self {
        PublishTf::Flag(false)
    }
}

/// Config of `spawn_model`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpawnModelConfig {
    /// Model: a bundled short name, `<package>:<model>`, or an MJCF path. REQUIRED.
    pub model: String,
    /// MJCF name prefix (distinct prefixes for more than one of the model). Default "".
    #[serde(default)]
    pub prefix: String,
    /// Mount pose as SpawnEntity states one. Omitted: the origin, unrotated; an omitted
    /// `position.z` is the floor (z = 0).
    #[serde(default)]
    pub pose: PoseConfig,
    /// Uniform geometric scale factor (> 0), applied to the whole geometry (positions, sizes,
    /// meshes); mass and inertia are not scaled. Default 1.0.
    #[serde(default = "one")]
    pub scale: f64,
    /// `static` (welded scenery; default) | `driven` (mocap) | `physics` (free joint).
    #[serde(default)]
    pub motion: Option<Motion>,
    /// Make it a mocap body (the same as `motion: driven`). Default false.
    #[serde(default)]
    pub mocap: bool,
    /// false: compiled in, but absent until spawned (stored on the entity). Default true.
    #[serde(default = "crate::plugin::yes")]
    pub present: bool,
    /// Total mass of the root body's geoms (kg), rescaling each in proportion.
    #[serde(default)]
    pub mass: Option<f64>,
    /// Friction of the root body's geoms: sliding, or [sliding, torsional, rolling].
    #[serde(default)]
    pub friction: Option<Friction>,
    /// Publish the root body's world pose on TF: `false` (default) | `static` | `dynamic` (= `true`).
    #[serde(default)]
    pub publish_tf: PublishTf,
    /// `publish_tf: dynamic` stream rate (Hz). Default 30.
    #[serde(default = "thirty")]
    pub tf_rate: f64,
}

fn one() -> f64 {
    1.0
}
fn thirty() -> f64 {
    30.0
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum TfMode {
    Off,
    Static,
    Dynamic,
}

impl SpawnModelConfig {
    fn tf_mode(&self) -> Option<TfMode> {
        match &self.publish_tf {
            PublishTf::Flag(false) => Some(TfMode::Off),
            PublishTf::Flag(true) => Some(TfMode::Dynamic),
            PublishTf::Mode(s) if s == "dynamic" => Some(TfMode::Dynamic),
            PublishTf::Mode(s) if s == "static" => Some(TfMode::Static),
            PublishTf::Mode(s) if s == "false" || s == "off" => Some(TfMode::Off),
            _ => None,
        }
    }
    fn motion(&self) -> Motion {
        if self.mocap {
            Motion::Driven
        } else {
            self.motion.unwrap_or_default()
        }
    }
}

impl ValidateConfig for SpawnModelConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if self.model.trim().is_empty() {
            e.push(ConfigError::new("model", "is empty; name a model or an MJCF path"));
        }
        e.extend(self.pose.validate("pose"));
        if !(self.scale > 0.0 && self.scale <= crate::world::bounds::MAX_MODEL_SCALE) {
            e.push(ConfigError::new(
                "scale",
                format!(
                    "a uniform scale factor must be in (0, {}], got {}",
                    crate::world::bounds::MAX_MODEL_SCALE,
                    crate::error::num(self.scale)
                ),
            ));
        }
        if self.mocap && self.motion.is_some_and(|m| m != Motion::Driven) {
            e.push(ConfigError::new(
                "mocap",
                format!(
                    "`mocap: true` is `motion: driven`, which contradicts `motion: {}`; keep one",
                    self.motion.unwrap_or_default().as_str()
                ),
            ));
        }
        if let Some(m) = self.mass {
            if !(m > 0.0 && m <= crate::world::bounds::MAX_MASS_KG) {
                e.push(ConfigError::new("mass", format!("must be > 0 (kg), got {m}")));
            }
        }
        if let Some(f) = self.friction {
            e.extend(f.validate("friction"));
        }
        if self.tf_mode().is_none() {
            e.push(ConfigError::new(
                "publish_tf",
                format!("one of false, static, dynamic (or true), got {:?}", self.publish_tf),
            ));
        }
        e.extend(crate::plugin::check_rate("tf_rate", self.tf_rate));
        e.extend(crate::spawn::check_names("", &self.prefix));
        e
    }
}

/// How a prop's TF frame (its root body's compiled name) is renamed.
fn keys() -> FrameKeys {
    FrameKeys::new(
        "prefix",
        "Give each spawn of the model a distinct `prefix:` (its frame is its root body's name), or publish only one with `publish_tf:`.",
    )
}

/// The `spawn_model` plugin.
pub struct SpawnModel {
    cfg: SpawnModelConfig,
    address: String,
    base_dir: PathBuf,
    body: String,
    body_id: usize,
    tf_static: StaticTfPublisher,
    tf_dynamic: Option<EndpointId>,
}

impl SpawnModel {
    /// Construct from config.
    pub fn new(cfg: SpawnModelConfig, args: &PluginArgs) -> Self {
        SpawnModel {
            cfg,
            address: args.address.clone(),
            base_dir: args.base_dir.clone(),
            body: String::new(),
            body_id: 0,
            tf_static: StaticTfPublisher::default(),
            tf_dynamic: None,
        }
    }

    fn world_tf(&self, ctx: &SimContext) -> Transform {
        let d = ctx.data();
        Transform {
            parent: "world".into(),
            child: self.body.clone(),
            translation: d.xpos()[self.body_id],
            rotation: crate::math::wxyz_to_xyzw(&d.xquat()[self.body_id]),
        }
    }
}

impl Plugin for SpawnModel {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD | Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        let cfg = self.cfg.clone();
        let motion = cfg.motion();
        let mut m = load_model(&cfg.model, &self.base_dir).map_err(|e| format!("model: {e}"))?;
        self.body = format!("{}{}", cfg.prefix, m.root);
        if spec.body(&self.body).is_some() {
            return Err(format!("prefix: the world already has a body `{}`; give each spawn of `{}` a distinct `prefix:` (e.g. `prefix: {}2_`)", self.body, cfg.model, cfg.model));
        }
        let root_free: Option<String> = m.spec.body(&m.root).and_then(|b| {
            b.joint_iter(false)
                .find(|j| j.type_() == MjtJoint::mjJNT_FREE)
                .map(|j| j.name().to_string())
        });

        // mass: rescale the root body's geoms in proportion (their masses read from a compile of
        // the model alone).
        if let Some(mass) = cfg.mass {
            let mut probe = m.spec.clone();
            let compiled = probe.compile().map_err(|e| format!("model `{}`: {e}", cfg.model))?;
            let rid =
                compiled.name_to_id(MjtObjBase::mjOBJ_BODY, &m.root).expect("root body compiled");
            let current = compiled.body_mass()[rid];
            if current <= 0.0 || !current.is_finite() {
                return Err(format!(
                    "mass: the root body `{}` of `{}` has no mass to rescale (its geoms are massless, e.g. density=\"0\")",
                    m.root, cfg.model
                ));
            }
            let f = mass / current;
            let root = m.spec.body_mut(&m.root).expect("root");
            for g in root.geom_iter_mut(false) {
                if g.mass().is_finite() && g.mass() > 0.0 {
                    let v = g.mass() * f;
                    g.set_mass(v);
                } else {
                    let v = g.density() * f;
                    g.set_density(v);
                }
            }
        }
        if let Some(fr) = cfg.friction {
            let root = m.spec.body_mut(&m.root).expect("root");
            let mut n = 0;
            for g in root.geom_iter_mut(false) {
                *g.friction_mut() = fr.triple();
                n += 1;
            }
            if n == 0 {
                return Err(format!(
                    "friction: the root body `{}` of `{}` has no geoms to set it on",
                    m.root, cfg.model
                ));
            }
        }

        let mut free_joint = None;
        match motion {
            Motion::Static | Motion::Driven => {
                if let Some(j) = &root_free {
                    return Err(format!(
                        "motion: the root body `{}` of `{}` has a free joint `{j}`, so it cannot be `{}`; use `motion: physics`",
                        m.root,
                        cfg.model,
                        motion.as_str()
                    ));
                }
                if motion == Motion::Driven {
                    m.spec.body_mut(&m.root).expect("root").set_mocap(true);
                }
            }
            Motion::Physics => {
                let j = match root_free {
                    Some(j) => j,
                    None => {
                        let j = format!("{}_free", m.root);
                        m.spec.body_mut(&m.root).expect("root").add_free_joint().with_name(&j);
                        j
                    }
                };
                free_joint = Some(format!("{}{j}", cfg.prefix));
            }
        }

        let pose = cfg.pose.resolve(0.0);
        let frame = spec.world_body_mut().add_frame().with_pos(pose.pos).with_quat(pose.quat);
        if cfg.scale != 1.0 {
            *frame.scale_mut() = [cfg.scale; 3];
            frame.set_scaling(MjtScaling::mjSCALING_GEOMETRY);
        }
        frame.attach_by_deep_copy(&mut m.spec, &cfg.prefix, "").map_err(|e| {
            format!("model `{}`: attach failed (prefix `{}`): {e}", cfg.model, cfg.prefix)
        })?;

        let mut ent = Entity::new(&self.address, EntityKind::Object, &self.body);
        ent.prefix = cfg.prefix.clone();
        ent.model = cfg.model.clone();
        ent.free_joint = free_joint;
        ent.weld_reason = (motion == Motion::Static).then(|| {
            "motion: static (welded scenery; give `motion: physics` to move it)".to_string()
        });
        ent.initial_pose = pose;
        ent.declared_present = cfg.present;
        ent.present = cfg.present;
        ent.meta.insert("motion".into(), motion.as_str().into());
        ent.meta.insert("scale".into(), cfg.scale.to_string());
        ent.meta.insert("model_path".into(), m.asset.path.display().to_string());
        b.ctx.entities.add(ent)
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        self.body_id = ctx
            .model()
            .name_to_id(MjtObjBase::mjOBJ_BODY, &self.body)
            .ok_or_else(|| format!("body `{}` missing after compile", self.body))?;
        match self.cfg.tf_mode() {
            Some(TfMode::Static) => {
                // The welded pose is model-fixed: the transform is published at every reset.
                let t = Transform {
                    parent: "world".into(),
                    child: self.body.clone(),
                    ..Default::default()
                };
                self.tf_static = StaticTfPublisher::register(
                    ctx,
                    "spawn_model",
                    &self.address,
                    "",
                    vec![t],
                    &keys(),
                )?;
            }
            Some(TfMode::Dynamic) => {
                let t = Transform {
                    parent: "world".into(),
                    child: self.body.clone(),
                    ..Default::default()
                };
                let by = Claimant::new(&self.address, "spawn_model");
                claim_tf(ctx, &by, TfRoute::Dynamic, "", &[t], &keys())?;
                let ep = Endpoint::out("tf")
                    .owner(Some(&self.address))
                    .frame_prefix(&frame_prefix(""))
                    .rate(self.cfg.tf_rate)
                    .hint("ros2", "type", "tf2_msgs/msg/TFMessage")
                    .hint("ros2", "tf", "dynamic");
                self.tf_dynamic = Some(ctx.interface.add(ep));
            }
            _ => {}
        }
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        if self.tf_static.endpoint.is_some() {
            self.tf_static.transforms = vec![self.world_tf(ctx)];
            self.tf_static.publish(ctx);
        }
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if ctx.tick == 1 && self.tf_static.endpoint.is_some() {
            self.tf_static.publish(ctx);
        }
        if let Some(id) = self.tf_dynamic {
            if ctx.interface.is_due(id, ctx.tick) {
                let t = self.world_tf(ctx);
                let tick = ctx.tick;
                ctx.interface.publish(id, tick, Payload::Transforms(vec![t]));
            }
        }
        Ok(())
    }
}

/// The registry entry of `spawn_model`.
pub fn descriptor() -> crate::plugin::PluginDescriptor {
    crate::plugin_descriptor!(
        "spawn_model",
        "Place a model as a prop at a pose (static | driven | physics; scale, mass, friction, publish_tf).",
        SpawnModelConfig,
        SpawnModel
    )
    // The model resolves and its manifest reads at load (a prop takes no components from it).
    .expands(&[], crate::world::expand::check_model)
}
