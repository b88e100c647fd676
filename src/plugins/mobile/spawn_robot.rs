//! `spawn_robot`: attach a robot MJCF into the world, own its base spawn pose, build its vendor
//! frames and register the robot entity.
//!
//! The model's `<model>.manifest.yaml` components (drive, sensors, mounts) are injected under
//! this entry at load time by [`crate::world::expand::expand_manifest`] (off with
//! `default_plugins: false`).

use std::path::PathBuf;

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::{Entity, EntityKind, FrameKeys, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::math::compose;
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, ValidateConfig};
use crate::spawn::import::{
    check_name_collisions, prefix_colliding_assets, KeyframeMap, StatedOptions, ROOTS_META,
};
use crate::spawn::{
    frame_transforms, load_model_as_written, FrameSites, PlacedFrame, PoseConfig, StaticTfPublisher,
};
use crate::world::models::FrameSpec;

/// Default name of the free joint that places the base.
pub const DEFAULT_BASE_JOINT: &str = "base_free";

/// Config keys the manifest expansion reads (a late override of one is refused).
pub const EXPANSION_KEYS: &[&str] = &["model", "prefix", "default_plugins"];

/// Config of `spawn_robot`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpawnRobotConfig {
    /// Model: a bundled short name (`turtlebot4`), `<package>:<model>`, or an MJCF path
    /// (absolute or relative to the world file). REQUIRED.
    pub model: String,
    /// Transport scope of the robot's endpoints (`robot1`); its components inherit it, and its
    /// TF frames get the prefix `<namespace>/`. Default "" (global).
    #[serde(default)]
    pub namespace: String,
    /// MJCF name prefix of everything the model brings (use distinct prefixes for more than one
    /// robot). Default "".
    #[serde(default)]
    pub prefix: String,
    /// Spawn pose of the root body, as SpawnEntity states one:
    /// `{header: {frame_id: world}, position: {x, y, z}, orientation: {yaw: ...} | {x, y, z, w}}`.
    /// Omitted: the origin, unrotated; an omitted `position.z` is the model manifest's
    /// `rest_height` (m), else 0.
    #[serde(default)]
    pub pose: PoseConfig,
    /// The free joint that places the base. Default `base_free`; a model without it is welded
    /// to the world (the entity then has no free joint, and says why).
    #[serde(default)]
    pub base_joint: Option<String>,
    /// false: compiled in, but absent until spawned (stored on the entity). Default true.
    #[serde(default = "crate::plugin::yes")]
    pub present: bool,
    /// Fixed links beyond the manifest's `frames:` (built after them): each is a site
    /// `<prefix><name>` on its parent (a body or an earlier frame), published as a static
    /// transform `parent → name` (pos m, rpy rad).
    #[serde(default)]
    pub frames: Vec<FrameSpec>,
    /// Inject the model manifest's components (drive, sensors). Default true.
    #[serde(default = "crate::plugin::yes")]
    pub default_plugins: bool,
    /// The law the robot's joints run under and their gains (`control`, `p`/`d`,
    /// `stiffness`/`damping`, `effort_limit`, `ctrlrange`, `each:` by actuator name); see
    /// `crate::spawn::actuators`. When given, bodies held up by a position/impedance joint also get
    /// gravity compensation. Default: the model's own actuators, untouched.
    #[serde(default)]
    #[schemars(with = "Option<crate::spawn::actuators::ActuatorsSchema>")]
    pub actuators: Option<serde_norway::Value>,
}

impl ValidateConfig for SpawnRobotConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if self.model.trim().is_empty() {
            e.push(ConfigError::new(
                "model",
                "is empty; name a model (e.g. turtlebot4) or an MJCF path",
            ));
        }
        e.extend(self.pose.validate("pose"));
        e.extend(crate::spawn::check_names(&self.namespace, &self.prefix));
        if let Some(Err(es)) =
            self.actuators.as_ref().map(|a| crate::spawn::actuators::parse(a, "actuators"))
        {
            e.extend(es);
        }
        if let Some(j) = &self.base_joint {
            if j.is_empty() {
                e.push(ConfigError::new(
                    "base_joint",
                    "is empty; omit it for the default `base_free`",
                ));
            }
        }
        for (i, f) in self.frames.iter().enumerate() {
            if f.pos.iter().chain(f.rpy.iter()).any(|v| !v.is_finite()) {
                e.push(ConfigError::new(
                    format!("frames[{i}]"),
                    "pos and rpy must be finite numbers",
                ));
            }
        }
        e
    }
}

/// The `spawn_robot` plugin.
pub struct SpawnRobot {
    cfg: SpawnRobotConfig,
    address: String,
    base_dir: PathBuf,
    /// Root body, unprefixed (set in build).
    root: String,
    frames: Vec<PlacedFrame>,
    tf: StaticTfPublisher,
    /// `robot_description` (the URDF export), published latched.
    description: crate::export::urdf::DescriptionPublisher,
    /// The model's keyframes, renamed for lookup after compile (the default home).
    keys: KeyframeMap,
    /// Resolved at configure from the home keyframe: (qpos address, value).
    home_qpos: Vec<(usize, f64)>,
    /// The `<option>`s the model file states, checked against the world's at configure.
    options: Option<StatedOptions>,
}

impl SpawnRobot {
    /// Construct from config.
    pub fn new(cfg: SpawnRobotConfig, args: &PluginArgs) -> Self {
        SpawnRobot {
            cfg,
            address: args.address.clone(),
            base_dir: args.base_dir.clone(),
            root: String::new(),
            frames: Vec::new(),
            tf: StaticTfPublisher::default(),
            description: Default::default(),
            keys: KeyframeMap::default(),
            home_qpos: Vec::new(),
            options: None,
        }
    }
}

impl Plugin for SpawnRobot {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD | Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        let cfg = &self.cfg;
        let mut m =
            load_model_as_written(&cfg.model, &self.base_dir).map_err(|e| format!("model: {e}"))?;
        self.options = Some(StatedOptions::of(&m.spec, &cfg.model));
        if let Some(src) = &m.urdf {
            // A URDF's root link has no joint to the world (its floating base is implicit): it
            // rides the free joint a mobile base needs, unless the file joins it to a `world` link.
            let joined = src.joints.iter().any(|j| j.child == m.root);
            if cfg.base_joint.is_none() && !joined && m.spec.joint(DEFAULT_BASE_JOINT).is_none() {
                let body = m.spec.body_mut(&m.root).expect("root body exists");
                body.add_free_joint().with_name(DEFAULT_BASE_JOINT);
            }
            b.ctx.blackboard.set(crate::spawn::urdf::source_key(&self.address), src.text.clone());
        }
        let prefix = cfg.prefix.as_str();
        let root_name = format!("{prefix}{}", m.root);
        if spec.body(&root_name).is_some() {
            return Err(format!(
                "prefix: the world already has a body `{root_name}` (another spawn with prefix `{prefix}`?); give each robot a distinct `prefix:` (e.g. `prefix: robot2_`)"
            ));
        }
        // Vendor frames: the manifest's, then the config's.
        let mut sites = FrameSites::new();
        let mf = m.manifest.frames.clone();
        sites
            .add(&mut m.spec, &mf, &format!("{} frames", m.asset.manifest_path().display()))
            .map_err(|e| format!("model manifest: {e}"))?;
        sites.add(&mut m.spec, &cfg.frames, "frames")?;
        self.frames = sites.frames();

        // Base joint.
        let wanted = cfg.base_joint.as_deref().unwrap_or(DEFAULT_BASE_JOINT);
        let free_joints: Vec<String> = m
            .spec
            .joint_iter()
            .filter(|j| j.type_() == MjtJoint::mjJNT_FREE)
            .map(|j| j.name().to_string())
            .collect();
        let (free_joint, weld_reason) = match m.spec.joint(wanted) {
            Some(j) if j.type_() == MjtJoint::mjJNT_FREE => (Some(format!("{prefix}{wanted}")), None),
            Some(_) => {
                return Err(format!(
                    "base_joint: joint `{wanted}` of model `{}` is not a free joint; free joints: {}",
                    cfg.model,
                    if free_joints.is_empty() { "(none)".into() } else { free_joints.join(", ") }
                ))
            }
            None if cfg.base_joint.is_some() => {
                return Err(format!(
                    "base_joint: model `{}` has no joint `{wanted}`; free joints: {}",
                    cfg.model,
                    if free_joints.is_empty() { "(none)".into() } else { free_joints.join(", ") }
                ))
            }
            None => (None, Some(format!("model `{}` has no free joint `{DEFAULT_BASE_JOINT}`: its base is welded to the world", cfg.model))),
        };

        // The spawn pose is the frame the model is attached in, so it composes with the file's
        // own root frames. A stated `position.z` (else the manifest's `rest_height`) is the root
        // body's height: the frame is lowered by the height the file already gives the root.
        let rest_height = m.manifest.rest_height.unwrap_or(m.root_pose.pos[2]);
        let mut frame = cfg.pose.resolve(0.0);
        let file_root_z = (frame.iso().rotation * crate::math::vec3(&m.root_pose.pos)).z;
        if cfg.pose.has_z() || m.manifest.rest_height.is_some() {
            frame.pos[2] = cfg.pose.resolve(rest_height).pos[2] - file_root_z;
        }
        let pose = compose(&frame, &m.root_pose);
        // `actuators:` (crate::actuators): rewrite, then gravity compensation, before the attach.
        // Gravity compensation follows the same rule as spawn_arm's (bodies a position or
        // impedance joint holds up, not the load path to the ground), with or without a block.
        let rows = match &cfg.actuators {
            Some(v) => {
                let mut block = crate::spawn::actuators::parse(v, "actuators").map_err(|es| {
                    es.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; ")
                })?;
                if let Some(src) = &m.urdf {
                    block = crate::spawn::urdf::with_limits(&block, src);
                }
                crate::spawn::actuators::apply(&mut m.spec, &block, "actuators", &cfg.model)?
            }
            None => {
                if m.urdf.is_some() && m.spec.actuator_iter().next().is_none() {
                    tracing::info!(
                        "spawn_robot `{}`: model `{}` is a URDF and declares no actuators; to drive its joints state `actuators: {{add: [<joints>], control: position | velocity | effort, ...}}`",
                        self.address,
                        cfg.model
                    );
                }
                crate::spawn::actuators::describe(&m.spec)
            }
        };
        let gravcomp_bodies = crate::spawn::actuators::apply_gravcomp(
            &mut m.spec,
            crate::spawn::actuators::GravComp::Auto,
        );
        let table = crate::spawn::actuators::ActuatorTable {
            entity: self.address.clone(),
            rows,
            gravcomp_bodies,
        };
        check_name_collisions(
            spec,
            &m.spec,
            prefix,
            "prefix",
            &format!("the robot `{}`", cfg.model),
            "robot2_",
        )?;
        prefix_colliding_assets(spec, &mut m.spec, prefix, &self.address)?;
        self.keys = KeyframeMap::rename(&mut m.spec, &self.address)?;
        b.ctx.blackboard.set(
            crate::spawn::import::keyframes_key(&self.address),
            (prefix.to_string(), self.keys.clone()),
        );
        crate::spawn::mjcf::attach(spec, None, &mut m.spec, frame.pos, frame.quat, prefix)
            .map_err(|e| {
                format!("model `{}`: {e}; give this robot a distinct `prefix`", cfg.model)
            })?;
        b.ctx.blackboard.set(crate::spawn::actuators::table_key(&self.address), table);

        let mut ent = Entity::new(&self.address, EntityKind::Robot, &root_name);
        ent.prefix = prefix.to_string();
        ent.namespace = cfg.namespace.trim_matches('/').to_string();
        ent.model = cfg.model.clone();
        ent.free_joint = free_joint;
        ent.weld_reason = weld_reason;
        ent.initial_pose = pose;
        ent.declared_present = cfg.present;
        ent.present = cfg.present;
        ent.meta.insert("rest_height".into(), rest_height.to_string());
        ent.meta.insert("model_path".into(), m.asset.path.display().to_string());
        ent.meta.insert("root".into(), m.root.clone());
        ent.meta.insert(
            ROOTS_META.into(),
            m.roots.iter().map(|r| format!("{prefix}{r}")).collect::<Vec<_>>().join(","),
        );
        ent.meta.insert(
            "frames".into(),
            self.frames.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(","),
        );
        b.ctx.entities.add(ent)?;
        self.root = m.root;
        Ok(())
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        // Default home: the model's `home` keyframe (else its first), on the robot's hinges and
        // slides; an arm_controller of this robot seeds its targets from it.
        let model = ctx.model();
        if let Some(entity) = ctx.entities.get(&self.address) {
            let roots = crate::plugins::shared::entity_roots(model, entity)?;
            let nj = model.ffi().njnt as usize;
            let joints: Vec<usize> = (0..nj)
                .filter(|&j| {
                    crate::plugins::shared::in_entity(model, model.jnt_bodyid()[j] as usize, &roots)
                })
                .collect();
            if let Some((name, qs)) = self.keys.home(model, &self.cfg.prefix, &joints) {
                let named: Vec<(String, f64)> = qs
                    .iter()
                    .filter_map(|(adr, q)| {
                        joints.iter().find(|&&j| model.jnt_qposadr()[j] as usize == *adr).map(
                            |&j| {
                                let n = model.id_to_name(MjtObjBase::mjOBJ_JOINT, j).unwrap_or("");
                                (
                                    crate::plugins::shared::unprefixed(n, &self.cfg.prefix)
                                        .to_string(),
                                    *q,
                                )
                            },
                        )
                    })
                    .collect();
                let msg = format!(
                    "spawn_robot `{}`: home is the model's keyframe `{}` ({} joints)",
                    self.address,
                    if name.is_empty() { "(unnamed, the first)" } else { name.as_str() },
                    qs.len()
                );
                self.home_qpos = qs;
                ctx.blackboard.set(crate::spawn::import::home_key(&self.address), named);
                crate::spawn::import::note(ctx, false, msg);
            }
        }
        if let Some(o) = self.options.take() {
            o.warn_differences(ctx);
        }
        let transforms = frame_transforms(ctx.model(), &self.cfg.prefix, &self.root, &self.frames)
            .map_err(|e| format!("frames: {e}"))?;
        let ns = self.cfg.namespace.trim_matches('/').to_string();
        let keys = FrameKeys::new("namespace", "Give each robot its own `namespace:` (its frames then take the prefix `<namespace>/`), or rename the frame in the model's `frames:`.");
        self.tf =
            StaticTfPublisher::register(ctx, "spawn_robot", &self.address, &ns, transforms, &keys)?;
        self.description = crate::export::urdf::DescriptionPublisher::register(ctx, &self.address);
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        crate::spawn::latched::reset(ctx, &self.home_qpos, &self.tf, &mut self.description);
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        crate::spawn::latched::reannounce(ctx, &self.tf, &mut self.description);
        Ok(())
    }
}

/// The registry entry of `spawn_robot`.
pub fn descriptor() -> crate::plugin::PluginDescriptor {
    crate::plugin_descriptor!(
        "spawn_robot",
        "Attach a robot model at a spawn pose, build its vendor frames, register the robot entity and bring its manifest's plugins.",
        SpawnRobotConfig,
        SpawnRobot
    )
    .expands(EXPANSION_KEYS, crate::world::expand::expand_manifest)
}
