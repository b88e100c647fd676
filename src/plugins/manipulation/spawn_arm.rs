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

use std::collections::BTreeMap;
use std::path::PathBuf;

use mujoco_rs::mujoco_c::{mjtBias, mjtGain, mjtJoint, mjtLimited, mjtTrn};
use mujoco_rs::prelude::*;
use mujoco_rs::wrappers::mj_editing::{Attach, SpecObject};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_norway::Value;

use crate::context::{Entity, EntityKind, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::math::{compose, quat_from_rpy};
use crate::plugin::{
    BuildContext, ExpandArgs, Expansion, Hooks, Plugin, PluginArgs, ValidateConfig,
};
use crate::spawn::actuators::{self, ActuatorTable, GravComp};
use crate::spawn::import::{
    check_name_collisions, prefix_colliding_assets, KeyframeMap, StatedOptions, ROOTS_META,
};
use crate::spawn::{
    body_names, compose_top_level, find_site, load_model_as_written, static_transform, FrameRef,
    FrameSites, PlacedFrame, Pose, StaticTfPublisher,
};
use crate::world::bounds::MAX_JOINT_VALUE;
use crate::world::expand::{expand_manifest, merge_under};
use crate::world::models::{load_manifest, resolve_model};

/// Config keys [`expand`] reads (a late override of one is refused).
pub const EXPANSION_KEYS: &[&str] = &["model", "prefix", "default_plugins", "end_effector", "rail"];

pub use crate::spawn::import::home_key;

/// `home:` — the arm's joint vector in model order (rail excluded), or `{joint: angle}`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Home {
    /// `{shoulder_pan_joint: 0.0, ...}` (rad | m), by the model's own joint names.
    Map(BTreeMap<String, f64>),
    /// `[q1, q2, ...]` (rad | m): the arm's hinge/slide joints in model order.
    List(Vec<f64>),
}

/// `mount:` — weld the arm onto another entity's body instead of the world.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MountConfig {
    /// Entity name of a robot spawned EARLIER in the document (its entry's `name:`). REQUIRED.
    pub robot: String,
    /// That robot's body to weld to (its model's own name). Default `base_link`.
    #[serde(default = "d_base_link")]
    pub body: String,
}

fn d_base_link() -> String {
    "base_link".into()
}

/// `end_effector:` — a gripper welded onto the arm's tool flange.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EndEffectorConfig {
    /// Gripper model (short name, `<package>:<model>`, or path). REQUIRED.
    pub model: String,
    /// Arm site to weld it to. Default `attachment_site`.
    #[serde(default = "d_site")]
    pub site: String,
    /// MJCF name prefix of the gripper's own names, inside the arm's prefix. Default "".
    #[serde(default)]
    pub prefix: String,
    /// Offset in the SITE's frame (m), e.g. a tool adapter's thickness. Default [0, 0, 0].
    #[serde(default)]
    pub pos: [f64; 3],
    /// Extra rotation in the site's frame, roll/pitch/yaw (rad). Default [0, 0, 0].
    #[serde(default)]
    pub rpy: [f64; 3],
    /// Bodies of the ARM model this tool supersedes, deleted (with their subtrees) before the
    /// attach. Default none.
    #[serde(default)]
    pub replaces: Vec<String>,
}

fn d_site() -> String {
    "attachment_site".into()
}

/// `rail:` — carry the arm on a linear axis (a carriage with a slide joint and a position servo).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RailConfig {
    /// Travel direction in the MOUNT frame (after `rpy`), normalised. Default [1, 0, 0].
    #[serde(default = "d_axis")]
    pub axis: [f64; 3],
    /// Travel limits (m) about `pos`. Default [-1.5, 1.5].
    #[serde(default = "d_range")]
    pub range: [f64; 2],
    /// Carriage position at spawn and on every reset (m). Default 0.
    #[serde(default)]
    pub home: f64,
    /// Slide joint name, under the arm's prefix. Default `rail_joint`.
    #[serde(default = "d_rail_joint")]
    pub joint: String,
    /// Position-servo gain of the carriage drive (N/m). Default 20000.
    #[serde(default = "d_rail_kp")]
    pub kp: f64,
    /// Carriage joint damping (N·s/m). Default 200.
    #[serde(default = "d_rail_damping")]
    pub damping: f64,
    /// Carriage mass (kg): a real body needs one. Default 5.
    #[serde(default = "d_rail_mass")]
    pub mass: f64,
}

fn d_axis() -> [f64; 3] {
    [1.0, 0.0, 0.0]
}
fn d_range() -> [f64; 2] {
    [-1.5, 1.5]
}
fn d_rail_joint() -> String {
    "rail_joint".into()
}
fn d_rail_kp() -> f64 {
    20000.0
}
fn d_rail_damping() -> f64 {
    200.0
}
fn d_rail_mass() -> f64 {
    5.0
}
fn d_half_width() -> f64 {
    0.1
}
/// Config of `spawn_arm`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpawnArmConfig {
    /// Arm model: a bundled short name (`ur5e`), `<package>:<model>`, or an MJCF path. REQUIRED.
    pub model: String,
    /// Transport scope of the arm's endpoints (its components inherit it). Default "".
    #[serde(default)]
    pub namespace: String,
    /// MJCF name prefix of everything the arm brings (distinct per arm; REQUIRED non-empty when
    /// `mount:`ed, or a prefix scan would claim the base's wheels). Default "".
    #[serde(default)]
    pub prefix: String,
    /// The arm's root body (the model's own name). Default: the model's first body.
    #[serde(default)]
    pub base_body: Option<String>,
    /// Mount position [x, y, z] (m): in the world, or in the `mount.body` frame when mounted.
    #[serde(default)]
    pub pos: [f64; 3],
    /// Mount orientation roll/pitch/yaw (rad, fixed-axis XYZ), in the same frame as `pos`.
    #[serde(default)]
    pub rpy: [f64; 3],
    /// Joint home pose written on every reset: the arm's joint vector (model order, rail
    /// excluded) or `{joint: angle}` (rad | m). Default: the model manifest's `home:`, if any.
    #[serde(default)]
    pub home: Option<Home>,
    /// Add a static support box from the floor to the mount height (only when `pos[2] > 0` and
    /// not mounted). Default false (an arm on a table that is already there).
    #[serde(default)]
    pub pedestal: bool,
    /// Pedestal half-width (m) of its square footprint. Default 0.1.
    #[serde(default = "d_half_width")]
    pub pedestal_half_width: f64,
    /// Carry the arm on a linear axis (see [`RailConfig`]).
    #[serde(default)]
    pub rail: Option<RailConfig>,
    /// Weld the arm onto a robot spawned earlier (see [`MountConfig`]).
    #[serde(default)]
    pub mount: Option<MountConfig>,
    /// Weld a gripper onto the tool flange (see [`EndEffectorConfig`]).
    #[serde(default)]
    pub end_effector: Option<EndEffectorConfig>,
    /// The law the arm's joints run under and their gains (`control`, `p`/`d`,
    /// `stiffness`/`damping`, `effort_limit`, `ctrlrange`, `each:` by actuator name); see
    /// `crate::spawn::actuators`. Default: the model's own actuators.
    #[serde(default)]
    #[schemars(with = "Option<actuators::ActuatorsSchema>")]
    pub actuators: Option<Value>,
    /// Whether the arm's bodies carry their own weight. Unset: every body held up by a
    /// position/impedance joint (not under effort). true: the whole mechanism (a controller
    /// handed its own gravity term). false: none.
    #[serde(default)]
    pub gravity_compensation: Option<bool>,
    /// false: compiled in, but absent until spawned. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub present: bool,
    /// Inject the model manifest's components (its arm_controller). Default true.
    #[serde(default = "crate::plugin::yes")]
    pub default_plugins: bool,
}

impl ValidateConfig for SpawnArmConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if self.model.trim().is_empty() {
            e.push(ConfigError::new(
                "model",
                "is empty; name an arm model (e.g. ur5e) or an MJCF path",
            ));
        }
        e.extend(crate::spawn::check_names(&self.namespace, &self.prefix));
        if self
            .pos
            .iter()
            .chain(self.rpy.iter())
            .any(|v| !v.is_finite() || v.abs() > crate::world::bounds::MAX_POSITION_M)
        {
            e.push(ConfigError::new(
                "pos",
                "pos and rpy must be finite numbers, pos within ±1e6 m",
            ));
        }
        if let Some(m) = &self.mount {
            if self.prefix.is_empty() {
                e.push(ConfigError::new(
                    "prefix",
                    format!(
                        "an arm mounted on `{}` needs a non-empty prefix (e.g. `arm_`): the arm's joints are selected by prefix scan, and an empty prefix also claims the base's wheel joints",
                        m.robot
                    ),
                ));
            }
            if m.robot.trim().is_empty() {
                e.push(ConfigError::new(
                    "mount.robot",
                    "is empty; name the robot entity (the `name:` of its spawn_robot entry)",
                ));
            }
            if self.pedestal {
                e.push(ConfigError::new(
                    "pedestal",
                    "a mounted arm stands on its robot: drop `pedestal`",
                ));
            }
        }
        if !(self.pedestal_half_width > 0.0 && self.pedestal_half_width.is_finite()) {
            e.push(ConfigError::new(
                "pedestal_half_width",
                format!("must be > 0 (m), got {}", self.pedestal_half_width),
            ));
        }
        if let Some(r) = &self.rail {
            let n = r.axis.iter().map(|v| v * v).sum::<f64>().sqrt();
            if !(n > 1e-9 && n.is_finite()) {
                e.push(ConfigError::new(
                    "rail.axis",
                    format!("must be a non-zero direction, got {:?}", r.axis),
                ));
            }
            if r.range.iter().any(|v| !v.is_finite()) || r.range[0] >= r.range[1] {
                e.push(ConfigError::new(
                    "rail.range",
                    format!("must be [lo, hi] with lo < hi (m), got {:?}", r.range),
                ));
            } else if !(r.range[0]..=r.range[1]).contains(&r.home) {
                e.push(ConfigError::new(
                    "rail.home",
                    format!("{} m is outside rail.range {:?}", r.home, r.range),
                ));
            }
            if r.joint.trim().is_empty() {
                e.push(ConfigError::new("rail.joint", "is empty"));
            }
            for (k, v) in [("rail.kp", r.kp), ("rail.damping", r.damping), ("rail.mass", r.mass)] {
                if !(v > 0.0 && v.is_finite()) {
                    e.push(ConfigError::new(k, format!("must be > 0, got {v}")));
                }
            }
        }
        if let Some(ee) = &self.end_effector {
            if ee.model.trim().is_empty() {
                e.push(ConfigError::new(
                    "end_effector.model",
                    "is empty; name a gripper model (e.g. parallel_gripper)",
                ));
            }
            if ee.pos.iter().chain(ee.rpy.iter()).any(|v| !v.is_finite()) {
                e.push(ConfigError::new("end_effector.pos", "pos and rpy must be finite numbers"));
            }
            crate::spawn::check_names("", &ee.prefix)
                .into_iter()
                .for_each(|x| e.push(ConfigError::new("end_effector.prefix", x.message)));
        }
        if let Some(Home::List(v)) = &self.home {
            for (i, q) in v.iter().enumerate() {
                if !(q.is_finite() && q.abs() <= MAX_JOINT_VALUE) {
                    e.push(ConfigError::new(
                        format!("home[{i}]"),
                        format!(
                            "must be a finite angle (rad) or position (m) within ±{MAX_JOINT_VALUE}, got {}",
                            crate::error::num(*q)
                        ),
                    ));
                }
            }
        }
        if let Some(Home::Map(m)) = &self.home {
            for (k, v) in m {
                if !(v.is_finite() && v.abs() <= MAX_JOINT_VALUE) {
                    e.push(ConfigError::new(
                        format!("home.{k}"),
                        format!(
                            "must be a finite angle (rad) or position (m) within ±{MAX_JOINT_VALUE}, got {}",
                            crate::error::num(*v)
                        ),
                    ));
                }
            }
        }
        if let Some(a) = &self.actuators {
            if let Err(es) = actuators::parse(a, "actuators") {
                e.extend(es);
            }
        }
        e
    }
}

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

/// `spawn_arm`'s manifest expansion: the arm manifest's components, with the end effector's
/// manifest merged UNDER them (the arm's keys win; the gripper fills `gripper_*`), its actuator
/// and joint names given the end effector's prefix.
pub fn expand(args: &ExpandArgs) -> Result<Option<Expansion>, String> {
    let Some(mut exp) = expand_manifest(args)? else { return Ok(None) };
    // A rail's joint leads an explicit joint list: [rail, arm joints...] is model order.
    if let Some(rail) = args.config.get("rail").and_then(Value::as_mapping) {
        let joint = rail.get("joint").and_then(Value::as_str).unwrap_or("rail_joint").to_string();
        for c in &mut exp.components {
            if c.plugin == "arm_controller" {
                if let Some(Value::Sequence(js)) = c.config.get_mut("joints") {
                    if !js.iter().any(|j| j.as_str() == Some(joint.as_str())) {
                        js.insert(0, Value::String(joint.clone()));
                    }
                }
            }
        }
    }
    let ee = args.config.get("end_effector").and_then(Value::as_mapping);
    if let Some(ee) = ee {
        if let Some(model) = ee.get("model").and_then(Value::as_str) {
            let asset = resolve_model(model, args.base_dir)
                .map_err(|e| format!("end_effector.model: {e}"))?;
            let manifest = load_manifest(&asset).map_err(|e| format!("end_effector.model: {e}"))?;
            let pre = ee.get("prefix").and_then(Value::as_str).unwrap_or("").to_string();
            let mut comps = manifest.components;
            for c in &mut comps {
                if c.plugin == "arm_controller" && !pre.is_empty() {
                    for k in ["gripper_actuator", "gripper_joint"] {
                        if let Some(Value::String(s)) = c.config.get_mut(k) {
                            *s = format!("{pre}{s}");
                        }
                    }
                }
            }
            merge_under(&mut exp.components, comps);
        }
    }
    Ok(Some(exp))
}

fn rot_axis(q: &[f64; 4], a: [f64; 3]) -> [f64; 3] {
    crate::math::quat_rotate(q, &a)
}

impl Plugin for SpawnArm {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD | Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        let cfg = self.cfg.clone();
        let prefix = cfg.prefix.as_str();
        // Where the arm goes: the world, or a body of a robot declared before it.
        let mut parent_body: Option<String> = None;
        let mut parent_pose = Pose::default();
        let mut weld_reason = format!(
            "spawn_arm welds `{}` to the world (an arm's base is fixed: command its joints, or put it on a `rail:` or a robot with `mount:`)",
            cfg.model
        );
        if let Some(m) = &cfg.mount {
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
                return Err(format!("mount.body: robot `{}` has no body `{}` (looked up as `{full}`); its bodies: [{}]", m.robot, m.body, bodies.join(", ")));
            }
            parent_body = Some(full);
            parent_pose = robot.initial_pose;
            weld_reason = format!(
                "mounted on robot `{}` (body `{}`): move the robot, and the arm comes with it",
                m.robot, m.body
            );
        }

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
        // Home: config, else the manifest's `home:`.
        self.home = match &cfg.home {
            Some(h) => Some(h.clone()),
            None => match m.manifest.extra.get("home") {
                Some(v) => Some(
                    serde_norway::from_value::<Home>(v.clone())
                        .map_err(|e| format!("model manifest `home:`: {e}"))?,
                ),
                None => None,
            },
        };
        // Vendor frames (as sites).
        let mut sites = FrameSites::new();
        let mf = m.manifest.frames.clone();
        sites
            .add(&mut m.spec, &mf, &format!("{} frames", m.asset.manifest_path().display()))
            .map_err(|e| format!("model manifest: {e}"))?;
        self.frames = sites.frames();

        // 1. actuator rewrite (before the graft).
        let block = match &cfg.actuators {
            Some(v) => actuators::parse(v, "actuators")
                .map_err(|es| es.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; "))?,
            None => Default::default(),
        };
        let mut rows = actuators::apply(&mut m.spec, &block, "actuators", &cfg.model)?;

        // 2. end effector.
        if let Some(ee) = &cfg.end_effector {
            for r in &ee.replaces {
                if r == &m.root {
                    return Err(format!("end_effector.replaces: `{r}` is the arm's root body; list only bodies the tool supersedes"));
                }
                let Some(body) = m.spec.body_mut(r) else {
                    return Err(format!(
                        "end_effector.replaces: model `{}` has no body `{r}`; its bodies: [{}]",
                        cfg.model,
                        body_names(&m.spec).join(", ")
                    ));
                };
                // SAFETY: the body is a live element of the arm's spec, deleted once; no handle
                // into it is used afterwards.
                unsafe { body.delete() }
                    .map_err(|e| format!("end_effector.replaces: cannot delete `{r}`: {e}"))?;
            }
            if find_site(&m.spec, &ee.site).is_none() {
                let sites: Vec<String> = m.spec.site_iter().map(|s| s.name().to_string()).collect();
                return Err(format!(
                    "end_effector.site: model `{}` has no site `{}`; its sites: [{}]",
                    cfg.model,
                    ee.site,
                    sites.join(", ")
                ));
            }
            let mut g = load_model_as_written(&ee.model, &self.base_dir)
                .map_err(|e| format!("end_effector.model: {e}"))?;
            self.options.push(StatedOptions::of(&g.spec, &ee.model));
            // The offset composes with the gripper's own root frames (a root body the file
            // places above its origin keeps that offset at the flange).
            let offset = Pose { pos: ee.pos, quat: quat_from_rpy(ee.rpy[0], ee.rpy[1], ee.rpy[2]) };
            compose_top_level(&mut g.spec, &offset);
            let stem = g.asset.path.file_stem().and_then(|s| s.to_str()).unwrap_or("tool");
            let tag = format!("{}_{stem}", self.address);
            check_name_collisions(
                &m.spec,
                &g.spec,
                &ee.prefix,
                "end_effector.prefix",
                &format!("the tool `{}`", ee.model),
                "gripper_",
            )?;
            prefix_colliding_assets(&m.spec, &mut g.spec, &ee.prefix, &tag)
                .map_err(|e| format!("end_effector: {e}"))?;
            KeyframeMap::rename(&mut g.spec, &tag).map_err(|e| format!("end_effector: {e}"))?;
            let before: Vec<String> =
                m.spec.actuator_iter().map(|a| a.name().to_string()).collect();
            m.spec
                .site_mut(&ee.site)
                .expect("checked")
                .attach_by_deep_copy(&mut g.spec, &ee.prefix, "")
                .map_err(|e| {
                    format!(
                        "end_effector: attaching `{}` at site `{}` failed: {e}; give the gripper's names their own prefix with `end_effector.prefix` (e.g. `gripper_`)",
                        ee.model, ee.site
                    )
                })?;
            // Rows for the grafted actuators (model values; the arm's block never reaches them).
            for row in actuators::describe(&m.spec) {
                if !before.contains(&row.actuator) {
                    rows.push(row);
                }
            }
        }

        // 3. gravity compensation (after the graft).
        let mode = match cfg.gravity_compensation {
            None => GravComp::Auto,
            Some(true) => GravComp::All,
            Some(false) => GravComp::Off,
        };
        let gravcomp_bodies = actuators::apply_gravcomp(&mut m.spec, mode);

        // 4. attach: assets that would collide with the world's get this arm's tag; keyframes
        // get unique names so the home keyframe is found after compile.
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
        let mount_q = quat_from_rpy(cfg.rpy[0], cfg.rpy[1], cfg.rpy[2]);
        let mut entity_body = format!("{prefix}{base_body}");
        let mut world_pose =
            compose(&compose(&parent_pose, &Pose { pos: cfg.pos, quat: mount_q }), &m.root_pose);
        if let Some(r) = &cfg.rail {
            let n = r.axis.iter().map(|v| v * v).sum::<f64>().sqrt();
            let axis = [r.axis[0] / n, r.axis[1] / n, r.axis[2] / n];
            let carriage = format!("{prefix}rail_carriage");
            let joint = format!("{prefix}{}", r.joint);
            let parent: &mut mujoco_rs::wrappers::mj_editing::MjsBody = match &parent_body {
                None => spec.world_body_mut(),
                Some(p) => spec.body_mut(p).expect("checked"),
            };
            // The beam spanning the travel: visual only, on the mount's parent.
            let mid = (r.range[0] + r.range[1]) * 0.5;
            let half = (r.range[1] - r.range[0]) * 0.5 + 0.1;
            let axis_w = rot_axis(&mount_q, axis);
            let beam_c = [
                cfg.pos[0] + axis_w[0] * mid,
                cfg.pos[1] + axis_w[1] * mid,
                cfg.pos[2] + axis_w[2] * mid,
            ];
            let beam_q = quat_between([1.0, 0.0, 0.0], axis_w);
            let bg = parent
                .add_geom()
                .with_name(&format!("{prefix}rail_beam"))
                .with_type(MjtGeomBase::mjGEOM_BOX)
                .with_size([half, 0.04, 0.02])
                .with_pos(beam_c)
                .with_quat(beam_q)
                .with_rgba([0.5, 0.5, 0.55, 1.0]);
            bg.set_contype(0);
            bg.set_conaffinity(0);
            bg.set_mass(0.0);
            let body = parent.add_body().with_name(&carriage).with_pos(cfg.pos).with_quat(mount_q);
            body.set_gravcomp(1.0);
            let j = body
                .add_joint()
                .with_name(&joint)
                .with_type(MjtJoint::mjJNT_SLIDE)
                .with_axis(axis)
                .with_range(r.range);
            j.set_limited(mjtLimited::mjLIMITED_TRUE);
            j.damping_mut()[0] = r.damping;
            let g = body
                .add_geom()
                .with_name(&format!("{prefix}rail_carriage"))
                .with_type(MjtGeomBase::mjGEOM_BOX)
                .with_size([0.12, 0.12, 0.02])
                .with_pos([0.0, 0.0, -0.02])
                .with_rgba([0.35, 0.35, 0.4, 1.0]);
            g.set_contype(0);
            g.set_conaffinity(0);
            g.set_mass(r.mass);
            let a = spec
                .add_actuator()
                .with_name(&format!("{prefix}rail_servo"))
                .with_trntype(mjtTrn::mjTRN_JOINT);
            a.set_target(&joint);
            a.set_gaintype(mjtGain::mjGAIN_FIXED);
            a.set_biastype(mjtBias::mjBIAS_AFFINE);
            a.gainprm_mut()[0] = r.kp;
            {
                let bp = a.biasprm_mut();
                bp[1] = -r.kp;
                bp[2] = 0.0;
            }
            *a.ctrlrange_mut() = r.range;
            a.set_ctrllimited(mjtLimited::mjLIMITED_TRUE);
            crate::spawn::mjcf::attach(
                spec,
                Some(&carriage),
                &mut m.spec,
                [0.0; 3],
                [1.0, 0.0, 0.0, 0.0],
                prefix,
            )
            .map_err(|e| format!("model `{}`: {e}", cfg.model))?;
            entity_body = carriage;
            world_pose = compose(
                &parent_pose,
                &Pose {
                    pos: [
                        cfg.pos[0] + axis_w[0] * r.home,
                        cfg.pos[1] + axis_w[1] * r.home,
                        cfg.pos[2] + axis_w[2] * r.home,
                    ],
                    quat: mount_q,
                },
            );
            world_pose = compose(&world_pose, &m.root_pose);
        } else {
            crate::spawn::mjcf::attach(
                spec,
                parent_body.as_deref(),
                &mut m.spec,
                cfg.pos,
                mount_q,
                prefix,
            )
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
        ent.meta.insert("base_body".into(), base_body.clone());
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
        self.tf = StaticTfPublisher::register(ctx, &self.address, &ns, transforms);
        self.description = crate::export::urdf::DescriptionPublisher::register(ctx, &self.address);
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        let d = ctx.data_mut();
        for &(adr, q) in &self.home_qpos {
            d.qpos_mut()[adr] = q;
        }
        self.tf.publish(ctx);
        self.description.publish(ctx);
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if ctx.tick == 1 {
            self.tf.publish(ctx);
            self.description.publish(ctx);
        }
        Ok(())
    }
}

/// Shortest-arc rotation taking unit vector `a` to unit vector `b` ([w, x, y, z]).
fn quat_between(a: [f64; 3], b: [f64; 3]) -> [f64; 4] {
    let c = crate::math::cross(&a, &b);
    let d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    if d < -1.0 + 1e-12 {
        return [0.0, 0.0, 0.0, 1.0]; // 180° about z (a is x here)
    }
    let q = [1.0 + d, c[0], c[1], c[2]];
    let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    [q[0] / n, q[1] / n, q[2] / n, q[3] / n]
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
