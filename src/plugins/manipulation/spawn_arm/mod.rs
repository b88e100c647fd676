//! `spawn_arm`: attach a manipulator MJCF into the world — to the ground, onto a mobile base, or
//! onto a linear axis — with an optional end effector, actuator overrides and gravity compensation.
//!
//! Build order inside this plugin (each step on the arm's own, unprefixed spec, before it is
//! attached, so the file on disk is never touched):
//! 1. load the model and its manifest (vendor `frames:` become sites, published as static TF
//!    `parent → frame`);
//! 2. the `actuators:` rewrite ([`crate::spawn::actuators::apply`]) — BEFORE the graft, so a shared
//!    `control:` never lands on the gripper's tendon actuator;
//! 3. `end_effector:` — `replaces` deletes superseded arm bodies, then the gripper model is
//!    attached at the arm's site (MuJoCo site attachment: the site's frame is the tool frame,
//!    `pos`/`rpy` are offsets within it) under the end effector's prefix;
//! 4. gravity compensation ([`crate::spawn::actuators::apply_gravcomp`]) — AFTER the graft, so the tool
//!    is held up too;
//! 5. the attach: to the world at `pos`/`rpy` (optionally on a `pedestal`), to a spawned robot's
//!    body (`mount:`, the robot declared earlier), or to a `rail:` carriage this plugin adds (its
//!    slide joint and servo are declared before the arm's, so `[rail, arm joints...]` is model
//!    order).
//!
//! The entity (kind `Arm`) is registered under this entry's address. `home:` (the arm's joint
//! vector, or `{joint: angle}`) is written into qpos on every reset; `rail.home` seeds the
//! carriage. The resolved actuator table is stored on the blackboard under
//! `actuator_table:<entity>`.
//!
//! The model manifest's components (an `arm_controller`) are injected at load time by
//! [`expand`]; the end effector's manifest supplies the gripper half of that controller's config
//! (`gripper_actuator`, `gripper_joint`, ...), merged under the arm's (the arm's keys win) with the
//! end effector's prefix applied to its names.

use std::path::PathBuf;

use mujoco_rs::mujoco_c::mjtJoint;
use mujoco_rs::prelude::*;

use crate::context::{Entity, EntityKind, FrameKeys, SimContext};
use crate::error::HookResult;
use crate::math::{compose, quat_from_rpy};
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs};
use crate::spawn::actuators::{self, ActuatorTable, GravComp};
use crate::spawn::import::{
    check_name_collisions, home_key, prefix_colliding_assets, KeyframeMap, StatedOptions,
    ROOTS_META,
};
use crate::spawn::model::LoadedModel;
use crate::spawn::{
    body_names, load_model_as_written, static_transform, FrameRef, FrameSites, PlacedFrame, Pose,
    StaticTfPublisher,
};

mod config;
mod end_effector;
mod expand;
mod rail;

pub use config::{EndEffectorConfig, Home, MountConfig, RailConfig, SpawnArmConfig};
pub use expand::{expand, EXPANSION_KEYS};

/// The `spawn_arm` plugin.
pub struct SpawnArm {
    cfg: SpawnArmConfig,
    address: String,
    base_dir: PathBuf,
    /// Home by joint name (unprefixed), or by index (list), from config or manifest.
    home: Option<Home>,
    /// Resolved at configure: (qpos address, value).
    home_qpos: Vec<(usize, f64)>,
    frames: Vec<PlacedFrame>,
    tf: StaticTfPublisher,
    /// `robot_description` (the URDF export), published latched.
    description: crate::export::urdf::DescriptionPublisher,
    root: String,
    /// The model's keyframes, renamed for lookup after compile (the default home).
    keys: KeyframeMap,
    /// The `<option>`s the arm's (and its tool's) files state, checked against the world's.
    options: Vec<StatedOptions>,
}

impl SpawnArm {
    /// Construct from config.
    pub fn new(cfg: SpawnArmConfig, args: &PluginArgs) -> Self {
        SpawnArm {
            cfg,
            address: args.address.clone(),
            base_dir: args.base_dir.clone(),
            home: None,
            home_qpos: Vec::new(),
            frames: Vec::new(),
            tf: StaticTfPublisher::default(),
            description: Default::default(),
            root: String::new(),
            keys: KeyframeMap::default(),
            options: Vec::new(),
        }
    }
}

/// Where the arm goes: the world, or a body of a robot declared before it (`mount:`). Returns the
/// parent body, its pose, and the reason the arm's base does not move by itself.
fn mount_parent(
    cfg: &SpawnArmConfig,
    spec: &MjSpec,
    b: &BuildContext,
) -> Result<(Option<String>, Pose, String), String> {
    let Some(m) = &cfg.mount else {
        let weld_reason = format!(
            "spawn_arm welds `{}` to the world (an arm's base is fixed: command its joints, or put it on a `rail:` or a robot with `mount:`)",
            cfg.model
        );
        return Ok((None, Pose::default(), weld_reason));
    };
    let Some(robot) = b.ctx.entities.get(&m.robot).cloned() else {
        return Err(format!(
            "mount.robot: no robot `{}` has been spawned before this arm; the base must be declared BEFORE the arm in the components list (build runs in declaration order), and `robot:` names its entry's `name:`. Entities so far: [{}]",
            m.robot,
            b.ctx.entities.names().join(", ")
        ));
    };
    let full = format!("{}{}", robot.prefix, m.body);
    if spec.body(&full).is_none() {
        let bodies: Vec<String> = body_names(spec)
            .into_iter()
            .filter(|n| n.starts_with(&robot.prefix))
            .map(|n| n[robot.prefix.len()..].to_string())
            .collect();
        return Err(format!(
            "mount.body: robot `{}` has no body `{}` (looked up as `{full}`); its bodies: [{}]",
            m.robot,
            m.body,
            bodies.join(", ")
        ));
    }
    let weld_reason = format!(
        "mounted on robot `{}` (body `{}`): move the robot, and the arm comes with it",
        m.robot, m.body
    );
    Ok((Some(full), robot.initial_pose, weld_reason))
}

impl SpawnArm {
    /// Load the arm's model: its stated options, its base body, its home (config, else the
    /// manifest's `home:`) and its vendor frames (as sites). Returns the model and the base body.
    fn load_arm(&mut self, spec: &MjSpec) -> Result<(LoadedModel, String), String> {
        let cfg = &self.cfg;
        let prefix = cfg.prefix.as_str();
        let mut m =
            load_model_as_written(&cfg.model, &self.base_dir).map_err(|e| format!("model: {e}"))?;
        self.options.push(StatedOptions::of(&m.spec, &cfg.model));
        let root_full = format!("{prefix}{}", m.root);
        if spec.body(&root_full).is_some() {
            return Err(format!("prefix: the world already has a body `{root_full}` (another arm with prefix `{prefix}`?); give each arm a distinct prefix"));
        }
        let base_body = match &cfg.base_body {
            Some(bb) => {
                if m.spec.body(bb).is_none() {
                    return Err(format!(
                        "base_body: model `{}` has no body `{bb}`; its bodies: [{}]",
                        cfg.model,
                        body_names(&m.spec).join(", ")
                    ));
                }
                bb.clone()
            }
            None => m.root.clone(),
        };
        self.home = match &cfg.home {
            Some(h) => Some(h.clone()),
            None => match m.manifest.extra.get("home") {
                Some(v) => Some(serde_norway::from_value::<Home>(v.clone()).map_err(|e| {
                    format!("model manifest `home:`: {}", crate::error::plain_serde(&e.to_string()))
                })?),
                None => None,
            },
        };
        let mut sites = FrameSites::new();
        let mf = m.manifest.frames.clone();
        sites
            .add(&mut m.spec, &mf, &format!("{} frames", m.asset.manifest_path().display()))
            .map_err(|e| format!("model manifest: {e}"))?;
        self.frames = sites.frames();
        Ok((m, base_body))
    }

    /// The `actuators:` rewrite (a URDF's joint limits folded in); returns the actuator rows.
    fn rewrite_actuators(
        &self,
        m: &mut LoadedModel,
        b: &mut BuildContext,
    ) -> Result<Vec<actuators::ActuatorRow>, String> {
        let cfg = &self.cfg;
        let mut block = match &cfg.actuators {
            Some(v) => actuators::parse(v, "actuators")
                .map_err(|es| es.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; "))?,
            None => Default::default(),
        };
        if let Some(src) = &m.urdf {
            block = crate::spawn::urdf::with_limits(&block, src);
            if cfg.actuators.is_none() && m.spec.actuator_iter().next().is_none() {
                tracing::info!(
                    "spawn_arm `{}`: model `{}` is a URDF and declares no actuators; to drive its joints state `actuators: {{add: [<joints>], control: position | velocity | effort, ...}}`",
                    self.address,
                    cfg.model
                );
            }
            b.ctx.blackboard.set(crate::spawn::urdf::source_key(&self.address), src.text.clone());
        }
        actuators::apply(&mut m.spec, &block, "actuators", &cfg.model)
    }

    /// Attach the arm: assets that would collide with the world's get this arm's tag; keyframes
    /// get unique names so the home keyframe is found after compile; then onto the parent (or a
    /// `rail:` carriage), with an optional pedestal. Returns the entity's body and world pose.
    fn attach(
        &mut self,
        spec: &mut MjSpec,
        b: &mut BuildContext,
        m: &mut LoadedModel,
        parent_body: Option<&str>,
        parent_pose: &Pose,
        base_body: &str,
    ) -> Result<(String, Pose), String> {
        let cfg = &self.cfg;
        let prefix = cfg.prefix.as_str();
        check_name_collisions(
            spec,
            &m.spec,
            prefix,
            "prefix",
            &format!("the arm `{}`", cfg.model),
            "arm2_",
        )?;
        prefix_colliding_assets(spec, &mut m.spec, prefix, &self.address)?;
        self.keys = KeyframeMap::rename(&mut m.spec, &self.address)?;
        b.ctx.blackboard.set(
            crate::spawn::import::keyframes_key(&self.address),
            (prefix.to_string(), self.keys.clone()),
        );
        let mount_q = quat_from_rpy(cfg.rpy[0], cfg.rpy[1], cfg.rpy[2]);
        let mut entity_body = format!("{prefix}{base_body}");
        let mut world_pose =
            compose(&compose(parent_pose, &Pose { pos: cfg.pos, quat: mount_q }), &m.root_pose);
        if let Some(r) = &cfg.rail {
            (entity_body, world_pose) =
                rail::mount(spec, parent_body, parent_pose, mount_q, cfg, r, m)?;
        } else {
            crate::spawn::mjcf::attach(spec, parent_body, &mut m.spec, cfg.pos, mount_q, prefix)
                .map_err(|e| {
                    format!("model `{}`: {e}; give this arm a distinct `prefix`", cfg.model)
                })?;
        }
        if cfg.pedestal && cfg.mount.is_none() && cfg.pos[2] > 0.0 {
            let h = cfg.pos[2] * 0.5;
            let hw = cfg.pedestal_half_width;
            spec.world_body_mut()
                .add_geom()
                .with_name(&format!("{prefix}pedestal"))
                .with_type(MjtGeomBase::mjGEOM_BOX)
                .with_size([hw, hw, h])
                .with_pos([cfg.pos[0], cfg.pos[1], h])
                .with_rgba([0.3, 0.3, 0.32, 1.0]);
        }
        Ok((entity_body, world_pose))
    }

    /// Register the arm's entity (kind `Arm`) with what it was built from.
    fn register(
        &self,
        b: &mut BuildContext,
        m: &LoadedModel,
        entity_body: String,
        world_pose: Pose,
        weld_reason: String,
        base_body: &str,
    ) -> Result<(), String> {
        let cfg = &self.cfg;
        let prefix = cfg.prefix.as_str();
        let mut ent = Entity::new(&self.address, EntityKind::Arm, &entity_body);
        ent.prefix = prefix.to_string();
        ent.namespace = cfg.namespace.trim_matches('/').to_string();
        ent.model = cfg.model.clone();
        ent.initial_pose = world_pose;
        ent.declared_present = cfg.present;
        ent.present = cfg.present;
        ent.weld_reason = Some(weld_reason);
        ent.meta.insert("model_path".into(), m.asset.path.display().to_string());
        ent.meta.insert("root".into(), m.root.clone());
        ent.meta.insert(
            ROOTS_META.into(),
            m.roots.iter().map(|r| format!("{prefix}{r}")).collect::<Vec<_>>().join(","),
        );
        ent.meta.insert("base_body".into(), base_body.to_string());
        if let Some(mt) = &cfg.mount {
            ent.meta.insert("mount".into(), format!("{}:{}", mt.robot, mt.body));
        }
        if let Some(ee) = &cfg.end_effector {
            ent.meta.insert("end_effector".into(), ee.model.clone());
            ent.meta.insert("end_effector_prefix".into(), ee.prefix.clone());
        }
        if let Some(r) = &cfg.rail {
            ent.meta.insert("rail_joint".into(), r.joint.clone());
        }
        b.ctx.entities.add(ent)?;
        Ok(())
    }
}

impl Plugin for SpawnArm {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD | Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        let cfg = self.cfg.clone();
        let (parent_body, parent_pose, weld_reason) = mount_parent(&cfg, spec, b)?;
        let (mut m, base_body) = self.load_arm(spec)?;
        // 1. actuator rewrite (before the graft).
        let mut rows = self.rewrite_actuators(&mut m, b)?;
        // 2. end effector.
        if let Some(ee) = &cfg.end_effector {
            end_effector::graft(
                &mut m,
                ee,
                &cfg.model,
                &self.base_dir,
                &self.address,
                &mut self.options,
                &mut rows,
            )?;
        }
        // 3. gravity compensation (after the graft).
        let mode = match cfg.gravity_compensation {
            None => GravComp::Auto,
            Some(true) => GravComp::All,
            Some(false) => GravComp::Off,
        };
        let gravcomp_bodies = actuators::apply_gravcomp(&mut m.spec, mode);
        // 4. attach.
        let (entity_body, world_pose) =
            self.attach(spec, b, &mut m, parent_body.as_deref(), &parent_pose, &base_body)?;
        self.register(b, &m, entity_body, world_pose, weld_reason, &base_body)?;
        b.ctx.blackboard.set(
            actuators::table_key(&self.address),
            ActuatorTable { entity: self.address.clone(), rows, gravcomp_bodies },
        );
        self.root = m.root;
        Ok(())
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let model = ctx.model();
        let prefix = self.cfg.prefix.clone();
        // Home → qpos addresses.
        let entity = ctx
            .entities
            .get(&self.address)
            .cloned()
            .ok_or_else(|| format!("entity `{}` missing after build", self.address))?;
        let roots = crate::plugins::shared::entity_roots(model, &entity)?;
        let rail_joint = self.cfg.rail.as_ref().map(|r| format!("{prefix}{}", r.joint));
        let nj = model.ffi().njnt as usize;
        let arm_joints: Vec<usize> = (0..nj)
            .filter(|&j| {
                matches!(model.jnt_type()[j], mjtJoint::mjJNT_HINGE | mjtJoint::mjJNT_SLIDE)
            })
            .filter(|&j| {
                crate::plugins::shared::in_entity(model, model.jnt_bodyid()[j] as usize, &roots)
            })
            .filter(|&j| rail_joint.as_deref() != model.id_to_name(MjtObjBase::mjOBJ_JOINT, j))
            .collect();
        let jname =
            |j: usize| model.id_to_name(MjtObjBase::mjOBJ_JOINT, j).unwrap_or("").to_string();
        let mut home = Vec::new();
        let mut note = None;
        let mut warn = false;
        match &self.home {
            None => match self.keys.home(model, prefix.as_str(), &arm_joints) {
                Some((name, qs)) => {
                    note = Some(format!(
                        "spawn_arm `{}`: no `home:` given; home is the model's keyframe `{}` ({} joints)",
                        self.address,
                        if name.is_empty() { "(unnamed, the first)" } else { name.as_str() },
                        qs.len()
                    ));
                    home = qs;
                }
                None => {
                    note = Some(format!(
                        "spawn_arm `{}`: no `home:` given and the model has no keyframe: the arm starts at the model's qpos0",
                        self.address
                    ));
                }
            },
            Some(Home::List(v)) => {
                if v.len() > arm_joints.len() {
                    return Err(format!(
                        "home: {} values for {} arm joints ({})",
                        v.len(),
                        arm_joints.len(),
                        arm_joints
                            .iter()
                            .map(|&j| crate::plugins::shared::unprefixed(&jname(j), &prefix)
                                .to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                for (k, &q) in v.iter().enumerate() {
                    home.push((model.jnt_qposadr()[arm_joints[k]] as usize, q));
                }
                if v.len() < arm_joints.len() {
                    warn = true;
                    note = Some(format!(
                        "spawn_arm `{}`: home: {} values for {} joints; [{}] keep the model's qpos0 (use the map form to set joints by name)",
                        self.address,
                        v.len(),
                        arm_joints.len(),
                        arm_joints[v.len()..]
                            .iter()
                            .map(|&j| crate::plugins::shared::unprefixed(&jname(j), &prefix)
                                .to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
            Some(Home::Map(m)) => {
                for (name, &q) in m {
                    let full = format!("{prefix}{name}");
                    match model.name_to_id(MjtObjBase::mjOBJ_JOINT, &full) {
                        Some(j) if arm_joints.contains(&j) => {
                            home.push((model.jnt_qposadr()[j] as usize, q))
                        }
                        _ => {
                            return Err(format!(
                                "home.{name}: arm `{}` has no joint `{name}`; its joints: [{}]",
                                self.address,
                                arm_joints
                                    .iter()
                                    .map(|&j| crate::plugins::shared::unprefixed(
                                        &jname(j),
                                        &prefix
                                    )
                                    .to_string())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ))
                        }
                    }
                }
            }
        }
        if let (Some(r), Some(rj)) = (&self.cfg.rail, &rail_joint) {
            let j = model
                .name_to_id(MjtObjBase::mjOBJ_JOINT, rj)
                .ok_or_else(|| format!("rail joint `{rj}` missing after compile"))?;
            home.push((model.jnt_qposadr()[j] as usize, r.home));
        }
        // The home vector by joint name, for arm_controller.
        let named: Vec<(String, f64)> = home
            .iter()
            .filter_map(|(adr, q)| {
                (0..nj).find(|&j| model.jnt_qposadr()[j] as usize == *adr).map(|j| {
                    (crate::plugins::shared::unprefixed(&jname(j), &prefix).to_string(), *q)
                })
            })
            .collect();
        self.home_qpos = home;
        // Static TF of the vendor frames: parent → frame (the parent may move; robot_state_publisher owns the chain).
        let mut transforms = Vec::new();
        for f in &self.frames {
            let p = FrameRef::lookup(model, &format!("{prefix}{}", f.parent))
                .ok_or_else(|| format!("frame parent `{}` missing after compile", f.parent))?;
            let c = FrameRef::lookup(model, &format!("{prefix}{}", f.name))
                .ok_or_else(|| format!("frame `{}` missing after compile", f.name))?;
            transforms.push(static_transform(model, p, c, &f.parent, &f.name)?);
        }
        ctx.blackboard.set(home_key(&self.address), named);
        if let Some(n) = note {
            crate::spawn::import::note(ctx, warn, n);
        }
        for o in std::mem::take(&mut self.options) {
            o.warn_differences(ctx);
        }
        let ns = self.cfg.namespace.trim_matches('/').to_string();
        let keys = FrameKeys::new("namespace", "Give each arm its own `namespace:` (its frames then take the prefix `<namespace>/`), or rename the frame in the model's `frames:`.");
        self.tf =
            StaticTfPublisher::register(ctx, "spawn_arm", &self.address, &ns, transforms, &keys)?;
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

/// The registry entry of `spawn_arm`.
pub fn descriptor() -> crate::plugin::PluginDescriptor {
    crate::plugin_descriptor!(
        "spawn_arm",
        "Attach an arm (ground, pedestal, mount on a robot, or rail), graft an end effector, restate its actuators (actuators:), compensate gravity, register the Arm entity and bring its manifest's controller.",
        SpawnArmConfig,
        SpawnArm
    )
    .expands(EXPANSION_KEYS, expand)
}
