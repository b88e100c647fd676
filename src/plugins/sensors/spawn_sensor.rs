//! `spawn_sensor`: attach a sensor device model at a mount pose — on a carrier it is nested
//! under (a robot's vendor mount), on a body of an earlier spawn, or in the world.
//!
//! The device's manifest brings its capture plugin (an RPLIDAR brings `lidar`). While the world
//! loads, [`expand`] fills the manifest's `{frame_id}`, `{parent_frame}` and `{camera_name}`
//! placeholders (and refuses any other) before the components are merged under this entry; a
//! `topics:` map on the mount is forwarded to them (a capture component's own `topics:` wins).
//!
//! A camera device's manifest declares a `camera_name:` (realsense-ros's `camera`, depthai-ros's
//! `oak`) that every frame of the device and its camera's topics derive from, as the vendor
//! drivers name them; the mount's `camera_name:` replaces it, so two devices of one model are
//! two distinct frame chains.
//!
//! A mount in the world takes `present: false` (compiled in, absent until SpawnEntity: hidden
//! from rays and renders, contact-free); a mount nested under a carrier is present when its
//! carrier is, so `present:` there is refused.

use std::collections::BTreeMap;
use std::path::PathBuf;

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_norway::{Mapping, Value};

use crate::context::{Entity, EntityKind, FrameKeys, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::math::compose;
use crate::plugin::{
    construct, typed_config, BuildContext, ExpandArgs, Expansion, Hooks, Plugin, PluginArgs,
    PluginDescriptor, ValidateConfig,
};
use crate::plugin_descriptor;
use crate::spawn::{
    body_names, device_prefix, fill_placeholders, fill_placeholders_value, find_site, load_model,
    static_transform, FrameRef, FrameSites, Motion, PlacedFrame, Pose, StaticTfPublisher,
};
use crate::world::document::Component;
use crate::world::models::FrameSpec;

/// Config keys [`expand`] reads (a late override of one is refused).
pub const EXPANSION_KEYS: &[&str] =
    &["model", "default_plugins", "frame_id", "camera_name", "parent_frame", "attach_to", "topics"];

/// Config of `spawn_sensor`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpawnSensorConfig {
    /// Device model: a bundled short name (`rplidar_a1`), `<package>:<model>`, or an MJCF path.
    /// REQUIRED.
    pub model: String,
    /// Transport scope of the capture plugin's endpoints. Default: the carrier entity's
    /// namespace when nested, else "".
    #[serde(default)]
    pub namespace: Option<String>,
    /// MJCF name prefix of the device. Default `<attach_prefix><label>_` (so two identical
    /// devices on one carrier never collide).
    #[serde(default)]
    pub prefix: Option<String>,
    /// The carrier's MJCF prefix, prepended to `parent_frame` / `attach_to`. Default: the
    /// carrier entity's prefix when nested, else "".
    #[serde(default)]
    pub attach_prefix: Option<String>,
    /// A body OR a declared frame of the carrier to hang from (`shell_link`); `pos`/`rpy` are
    /// then the vendor joint origin in it. Required when nested (or `attach_to`); exclusive
    /// with `attach_to`.
    #[serde(default)]
    pub parent_frame: Option<String>,
    /// A body of an already-spawned carrier to weld the mount to; `pos`/`rpy` relative to it.
    /// Exclusive with `parent_frame` and with `motion`.
    #[serde(default)]
    pub attach_to: Option<String>,
    /// Mount position [x, y, z] (m) in the parent (the world when not attached).
    #[serde(default)]
    pub pos: [f64; 3],
    /// Mount orientation [roll, pitch, yaw] (rad, fixed-axis XYZ).
    #[serde(default)]
    pub rpy: [f64; 3],
    /// The device's scan/optical frame name, filled into its manifest's `{frame_id}`. Default:
    /// the manifest's `frame_id:` (the vendor's default name).
    #[serde(default)]
    pub frame_id: Option<String>,
    /// A camera device's name (realsense-ros's `camera_name`, depthai-ros's `name`): its frames
    /// (`<camera_name>_link`, `<camera_name>_color_optical_frame`, `<camera_name>_rgb_camera_frame`,
    /// ...) and its camera's topics (`<camera_name>/color/image_raw`) take it. Default: the
    /// manifest's `camera_name:` (`camera`, `oak`). Only for a device whose manifest has one.
    #[serde(default)]
    pub camera_name: Option<String>,
    /// Who owns the mount's pose when it is not attached: `static` (welded; default),
    /// `driven` (mocap), `physics` (free joint). A nested mount is welded: only `static`.
    #[serde(default)]
    pub motion: Option<Motion>,
    /// Inject the device manifest's components (its capture plugin). Default true.
    #[serde(default = "crate::plugin::yes")]
    pub default_plugins: bool,
    /// false: compiled in, but absent until spawned (a mount in the world only). Default true.
    #[serde(default = "crate::plugin::yes")]
    pub present: bool,
    /// Topic renames forwarded to the device's capture plugin(s) (its roles, e.g. `scan` for a
    /// lidar); a capture component's own `topics:` wins.
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

impl ValidateConfig for SpawnSensorConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if self.model.trim().is_empty() {
            e.push(ConfigError::new(
                "model",
                "is empty; name a device model (e.g. rplidar_a1) or an MJCF path",
            ));
        }
        if self.parent_frame.is_some() && self.attach_to.is_some() {
            e.push(ConfigError::new(
                "attach_to",
                "`parent_frame` and `attach_to` are mutually exclusive: hang the mount from a frame OR weld it to a body",
            ));
        }
        if self.attach_to.is_some() && self.motion.is_some() {
            e.push(ConfigError::new(
                "motion",
                "`attach_to` and `motion` are mutually exclusive: a mount that rides a body takes its pose from that body, so there is nothing for `motion:` to own; move what carries it instead",
            ));
        } else if self.parent_frame.is_some() && self.motion.is_some_and(|m| m != Motion::Static) {
            e.push(ConfigError::new("motion", "a mount hanging from `parent_frame` is welded to its carrier: only `motion: static`"));
        }
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
        if let Some(f) = &self.frame_id {
            if f.is_empty() || f.contains(['{', '}', ' ']) {
                e.push(ConfigError::new("frame_id", format!("`{f}` is not a frame name")));
            }
        }
        for (k, v) in &self.topics {
            if v.trim().is_empty() || v.trim() == "/" {
                e.push(ConfigError::new(
                    format!("topics.{k}"),
                    "empty topic: give a relative name (renamed inside the namespace) or an absolute `/name` (hardwired)",
                ));
            }
        }
        if !self.topics.is_empty() && !self.default_plugins {
            e.push(ConfigError::new(
                "topics",
                "renames the capture plugin's endpoints, but `default_plugins: false` brings none; rename them on the capture component you declare instead",
            ));
        }
        if let Some(n) = &self.camera_name {
            let ok = n.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok {
                e.push(ConfigError::new(
                    "camera_name",
                    format!("`{n}` is not a camera name: letters, digits and `_`, not starting with a digit (it names the device's ROS node, its frames and its topics)"),
                ));
            }
        }
        e.extend(crate::spawn::check_names(
            self.namespace.as_deref().unwrap_or(""),
            self.prefix.as_deref().unwrap_or(""),
        ));
        e
    }
}

/// Registry constructor: the typed config, plus the checks that depend on where the entry sits
/// (a nested mount needs `parent_frame` or `attach_to`, and is welded).
pub fn create(value: &Value, args: &PluginArgs) -> Result<Box<dyn Plugin>, Vec<ConfigError>> {
    if args.owner.is_some() {
        let cfg: SpawnSensorConfig = typed_config(value)
            .map_err(|e| crate::key_ranges::key_ranges::<SpawnSensorConfig>(value, e))?;
        let mut errs = cfg.validate();
        if cfg.parent_frame.is_none() && cfg.attach_to.is_none() {
            errs.push(ConfigError::new(
                "parent_frame",
                format!(
                    "required for a mount nested under `{}`: name a body or a declared frame of the carrier to hang from (or `attach_to:` a body)",
                    args.owner.as_deref().unwrap_or_default()
                ),
            ));
        }
        if value.get("present").is_some() {
            errs.push(ConfigError::new(
                "present",
                format!(
                    "a mount nested under `{}` is present when its carrier is: remove `present:` (declare it on the carrier's spawn entry)",
                    args.owner.as_deref().unwrap_or_default()
                ),
            ));
        }
        if cfg.motion.is_some_and(|m| m != Motion::Static) && cfg.attach_to.is_none() {
            errs.push(ConfigError::new(
                "motion",
                "a mount nested under a carrier is welded to it: only `motion: static`",
            ));
        }
        if !errs.is_empty() {
            return Err(errs);
        }
    }
    construct::<SpawnSensorConfig, SpawnSensor>(value, args, SpawnSensor::new)
}

/// The registry entry.
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "spawn_sensor",
        "Attach a sensor device model at a mount (on its carrier's frame, a body, or the world) and bring its manifest's capture plugin.",
        SpawnSensorConfig;
        create
    )
    .expands(EXPANSION_KEYS, expand)
}

fn cfg_str<'a>(m: &'a Mapping, key: &str) -> Option<&'a str> {
    m.get(key).and_then(Value::as_str)
}

/// The `{parent_frame}` value of a mount: its `parent_frame`, else `attach_to`, else `world`.
fn parent_frame_name(parent_frame: Option<&str>, attach_to: Option<&str>) -> String {
    parent_frame.or(attach_to).unwrap_or("world").to_string()
}

fn fill_components(
    list: &mut [Component],
    vars: &[(&str, Option<&str>)],
    model: &str,
) -> Result<(), String> {
    for c in list {
        let mut v = Value::Mapping(std::mem::take(&mut c.config));
        let r = fill_placeholders_value(&mut v, vars);
        if let Value::Mapping(m) = v {
            c.config = m;
        }
        r.map_err(|e| placeholder_error(&e, model, &format!("component `{}`", c.label())))?;
        fill_components(&mut c.components, vars, model)?;
    }
    Ok(())
}

fn placeholder_error(e: &str, model: &str, what: &str) -> String {
    if e.contains("`{frame_id}` has no value") {
        format!(
            "frame_id: the manifest of `{model}` uses {{frame_id}} ({what}) but neither this mount nor the manifest names one; set `frame_id:` on the mount"
        )
    } else {
        format!("manifest of `{model}`, {what}: {e}")
    }
}

/// The device's `camera_name` (the mount's, else the manifest's) and `frame_id` (the mount's,
/// else the manifest's with `{camera_name}` filled). A `camera_name:` on a mount whose manifest
/// declares none is refused (the device is not a camera: its frames take `frame_id:`).
fn device_names(
    camera_name: Option<&str>,
    frame_id: Option<&str>,
    manifest: &crate::world::models::Manifest,
    model: &str,
) -> Result<(Option<String>, Option<String>), String> {
    if camera_name.is_some() && manifest.camera_name.is_none() {
        return Err(format!(
            "camera_name: `{model}` is not a camera device (its manifest declares no `camera_name`), so nothing takes the name; name its frame with `frame_id:`"
        ));
    }
    let camera_name = camera_name.map(str::to_string).or(manifest.camera_name.clone());
    let frame_id = match frame_id {
        Some(f) => Some(f.to_string()),
        None => match &manifest.frame_id {
            Some(f) => Some(
                fill_placeholders(f, &[("camera_name", camera_name.as_deref())])
                    .map_err(|e| placeholder_error(&e, model, "frame_id"))?,
            ),
            None => None,
        },
    };
    Ok((camera_name, frame_id))
}

/// Manifest expansion of a mount: the device manifest's components with `{frame_id}` (the
/// mount's `frame_id`, else the manifest's), `{parent_frame}` (the mount's `parent_frame`,
/// else `attach_to`, else `world`) and `{camera_name}` (the mount's, else the manifest's)
/// filled into every string. Any other placeholder is refused, and so is `{frame_id}` when
/// neither names one.
pub fn expand(args: &ExpandArgs) -> Result<Option<Expansion>, String> {
    // The model and its manifest are read first: a broken one is refused at load either way.
    let Some((asset, manifest)) = crate::world::expand::read_model(args)? else {
        return Ok(None); // validation reports the missing model
    };
    if args.config.get("default_plugins").and_then(Value::as_bool) == Some(false) {
        return Ok(None);
    }
    let model = cfg_str(args.config, "model").unwrap_or_default();
    let (camera_name, frame_id) = device_names(
        cfg_str(args.config, "camera_name"),
        cfg_str(args.config, "frame_id"),
        &manifest,
        model,
    )?;
    let parent =
        parent_frame_name(cfg_str(args.config, "parent_frame"), cfg_str(args.config, "attach_to"));
    let vars = [
        ("frame_id", frame_id.as_deref()),
        ("parent_frame", Some(parent.as_str())),
        ("camera_name", camera_name.as_deref()),
    ];
    let mut components = manifest.components;
    fill_components(&mut components, &vars, model)?;
    if let Some(t @ Value::Mapping(m)) = args.config.get("topics") {
        if !m.is_empty() {
            for c in &mut components {
                if !c.config.contains_key("topics") {
                    c.config.insert(Value::from("topics"), t.clone());
                }
            }
        }
    }
    Ok(Some(Expansion { model_path: asset.path, components }))
}

/// The `spawn_sensor` plugin.
pub struct SpawnSensor {
    cfg: SpawnSensorConfig,
    address: String,
    label: String,
    owner: Option<String>,
    base_dir: PathBuf,
    // resolved in build
    prefix: String,
    namespace: String,
    /// Compiled name of the parent frame (body or site), `None` = the world.
    parent_compiled: Option<String>,
    /// TF name of the parent frame (unprefixed).
    parent_tf: String,
    welded: bool,
    root: String,
    frames: Vec<PlacedFrame>,
    camera_name: Option<String>,
    tf: StaticTfPublisher,
}

impl SpawnSensor {
    /// Construct from config.
    pub fn new(cfg: SpawnSensorConfig, args: &PluginArgs) -> Self {
        SpawnSensor {
            cfg,
            address: args.address.clone(),
            label: args.label.clone(),
            owner: args.owner.clone(),
            base_dir: args.base_dir.clone(),
            prefix: String::new(),
            namespace: String::new(),
            parent_compiled: None,
            parent_tf: "world".into(),
            welded: true,
            root: String::new(),
            frames: Vec::new(),
            camera_name: None,
            tf: StaticTfPublisher::default(),
        }
    }
}

/// Two mounts on one carrier with the same frame_id share its namespace: refused.
fn check_frame_free(
    b: &BuildContext,
    carrier: Option<&Entity>,
    frame_id: Option<&str>,
    camera_name: Option<&str>,
    cfg: &SpawnSensorConfig,
) -> Result<(), String> {
    let (Some(c), Some(fid)) = (carrier, frame_id) else { return Ok(()) };
    let Some(other) = b.ctx.entities.all().iter().find(|e| {
        e.kind == EntityKind::Sensor
            && e.meta.get("carrier") == Some(&c.name)
            && e.meta.get("frame_id").map(String::as_str) == Some(fid)
    }) else {
        return Ok(());
    };
    Err(match camera_name {
        Some(n) if cfg.frame_id.is_none() => format!(
            "camera_name: `{fid}` (from camera_name `{n}`) is already the frame of `{}` on the same carrier `{}`; two mounts on one carrier share its namespace, so give this one a distinct `camera_name:` (every frame of the device and its topics take it)",
            other.name, c.name
        ),
        _ => format!(
            "frame_id: `{fid}` is already the frame of `{}` on the same carrier `{}`; two mounts on one carrier share its namespace, so give this one a distinct `frame_id:`",
            other.name, c.name
        ),
    })
}

impl SpawnSensor {
    /// The entity this mount is nested under, if any.
    fn carrier(&self, b: &BuildContext) -> Result<Option<Entity>, String> {
        let Some(owner) = &self.owner else { return Ok(None) };
        b.ctx.entities.resolve_owner(Some(owner)).cloned().map(Some).ok_or_else(|| {
            format!("spawn_sensor is nested under `{owner}`, which registers no entity; nest it under a spawn_robot (or another spawn), or declare it at the top level")
        })
    }

    /// The device's manifest frames, placeholders filled, added as sites of its spec.
    fn add_device_frames(
        &mut self,
        m: &mut crate::spawn::model::LoadedModel,
        parent_tf: &str,
        frame_id: Option<&str>,
        camera_name: Option<&str>,
    ) -> Result<(), String> {
        let model = &self.cfg.model;
        let vars = [
            ("frame_id", frame_id),
            ("parent_frame", Some(parent_tf)),
            ("camera_name", camera_name),
        ];
        let mut frames: Vec<FrameSpec> = Vec::new();
        for (i, f) in m.manifest.frames.iter().enumerate() {
            let fill = |s: &str| {
                fill_placeholders(s, &vars)
                    .map_err(|e| placeholder_error(&e, model, &format!("frames[{i}]")))
            };
            frames.push(FrameSpec {
                name: fill(&f.name)?,
                parent: fill(&f.parent)?,
                pos: f.pos,
                rpy: f.rpy,
            });
        }
        let mut sites = FrameSites::new();
        sites
            .add(&mut m.spec, &frames, "model manifest frames")
            .map_err(|e| format!("model `{model}`: {e}"))?;
        self.frames = sites.frames();
        Ok(())
    }

    /// Where the device hangs: the parent body (`None` = the world) and the pose in it, from
    /// `parent_frame:` (a body or a declared frame of the carrier) or `attach_to:` (a body).
    fn mount_point(
        &mut self,
        spec: &MjSpec,
        attach_prefix: &str,
        carrier: Option<&Entity>,
    ) -> Result<(Option<String>, Pose), String> {
        let cfg = &self.cfg;
        let mount = Pose {
            pos: cfg.pos,
            quat: crate::math::quat_from_rpy(cfg.rpy[0], cfg.rpy[1], cfg.rpy[2]),
        };
        let (parent_body, pose, parent_compiled) = if let Some(pf) = &cfg.parent_frame {
            let name = format!("{attach_prefix}{pf}");
            if spec.body(&name).is_some() {
                (Some(name.clone()), mount, Some(name))
            } else if let Some((body, site_pose)) = find_site(spec, &name) {
                (Some(body), compose(&site_pose, &mount), Some(name))
            } else {
                let bodies: Vec<String> = body_names(spec)
                    .into_iter()
                    .filter(|n| n.starts_with(attach_prefix))
                    .map(|n| n[attach_prefix.len()..].to_string())
                    .collect();
                let frames =
                    carrier.and_then(|c| c.meta.get("frames").cloned()).unwrap_or_default();
                return Err(format!(
                    "parent_frame: `{pf}` (`{name}`) is neither a body nor a declared frame of the carrier{}; bodies: {}; frames: {}",
                    carrier.map(|c| format!(" `{}`", c.name)).unwrap_or_default(),
                    if bodies.is_empty() { "(none)".into() } else { bodies.join(", ") },
                    if frames.is_empty() { "(none)".into() } else { frames.replace(',', ", ") }
                ));
            }
        } else if let Some(at) = &cfg.attach_to {
            let name = format!("{attach_prefix}{at}");
            if spec.body(&name).is_none() {
                let bodies: Vec<String> =
                    body_names(spec).into_iter().filter(|n| n.starts_with(attach_prefix)).collect();
                return Err(format!(
                    "attach_to: no body `{name}` (attach_prefix `{attach_prefix}` + `{at}`) has been spawned before this mount; bodies: {}",
                    if bodies.is_empty() { "(none)".into() } else { bodies.join(", ") }
                ));
            }
            (Some(name.clone()), mount, Some(name))
        } else {
            (None, mount, None)
        };
        self.parent_compiled = parent_compiled;
        Ok((parent_body, pose))
    }

    /// The motion (only a mount in the world moves): a mocap root for `driven`, a free joint for
    /// `physics`, else welded. Returns it with the free joint's name and the weld reason.
    fn apply_motion(
        &mut self,
        m: &mut crate::spawn::model::LoadedModel,
        parent_body: Option<&str>,
    ) -> (Motion, Option<String>, Option<String>) {
        let motion = if parent_body.is_none() {
            self.cfg.motion.unwrap_or_default()
        } else {
            Motion::Static
        };
        let mut free_joint = None;
        let weld_reason = match motion {
            Motion::Static if parent_body.is_some() => Some(format!(
                "mounted on `{}` (welded to its carrier; it moves with it)",
                parent_body.unwrap_or_default()
            )),
            Motion::Static => Some(
                "motion: static (welded to the world; give `motion: driven` or `motion: physics` to move it)"
                    .to_string(),
            ),
            Motion::Driven => {
                m.spec.body_mut(&m.root).expect("root").set_mocap(true);
                None
            }
            Motion::Physics => {
                let jname = format!("{}_free", m.root);
                m.spec.body_mut(&m.root).expect("root").add_free_joint().with_name(&jname);
                free_joint = Some(format!("{}{jname}", self.prefix));
                None
            }
        };
        self.welded = motion == Motion::Static;
        (motion, free_joint, weld_reason)
    }
}

impl Plugin for SpawnSensor {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD | Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        let cfg = self.cfg.clone();
        let carrier = self.carrier(b)?;
        let attach_prefix = cfg
            .attach_prefix
            .clone()
            .or_else(|| carrier.as_ref().map(|c| c.prefix.clone()))
            .unwrap_or_default();
        self.prefix =
            cfg.prefix.clone().unwrap_or_else(|| device_prefix(&attach_prefix, &self.label));
        self.namespace = cfg
            .namespace
            .clone()
            .or_else(|| carrier.as_ref().map(|c| c.namespace.clone()))
            .unwrap_or_default()
            .trim_matches('/')
            .to_string();

        let mut m = load_model(&cfg.model, &self.base_dir).map_err(|e| format!("model: {e}"))?;
        let (camera_name, frame_id) = device_names(
            cfg.camera_name.as_deref(),
            cfg.frame_id.as_deref(),
            &m.manifest,
            &cfg.model,
        )?;
        self.camera_name = camera_name.clone();
        check_frame_free(b, carrier.as_ref(), frame_id.as_deref(), camera_name.as_deref(), &cfg)?;
        let parent_tf = parent_frame_name(cfg.parent_frame.as_deref(), cfg.attach_to.as_deref());
        self.add_device_frames(&mut m, &parent_tf, frame_id.as_deref(), camera_name.as_deref())?;
        let (parent_body, pose) = self.mount_point(spec, &attach_prefix, carrier.as_ref())?;
        self.parent_tf = parent_tf;
        let (motion, free_joint, weld_reason) = self.apply_motion(&mut m, parent_body.as_deref());

        if spec.body(&format!("{}{}", self.prefix, m.root)).is_some() {
            return Err(format!(
                "prefix: the world already has a body `{}{}`; give this mount a distinct `prefix:` (or `name:`)",
                self.prefix, m.root
            ));
        }
        crate::spawn::mjcf::attach(
            spec,
            parent_body.as_deref(),
            &mut m.spec,
            pose.pos,
            pose.quat,
            &self.prefix,
        )
        .map_err(|e| format!("model `{}`: {e}", cfg.model))?;

        let mut ent =
            Entity::new(&self.address, EntityKind::Sensor, &format!("{}{}", self.prefix, m.root));
        ent.prefix = self.prefix.clone();
        ent.namespace = self.namespace.clone();
        ent.model = cfg.model.clone();
        ent.free_joint = free_joint;
        ent.weld_reason = weld_reason;
        ent.initial_pose = pose;
        if let Some(c) = &carrier {
            ent.meta.insert("carrier".into(), c.name.clone());
            // A device on a carrier is part of the carrier's body: it is absent when the carrier
            // is (otherwise re-applying its own default presence would bring its housing back).
            ent.declared_present = c.declared_present;
            ent.present = c.declared_present;
        } else {
            ent.declared_present = cfg.present;
            ent.present = cfg.present;
        }
        ent.meta.insert("pose_frame".into(), parent_body.clone().unwrap_or_else(|| "world".into()));
        if let Some(f) = &frame_id {
            ent.meta.insert("frame_id".into(), f.clone());
        }
        if let Some(n) = &camera_name {
            ent.meta.insert("camera_name".into(), n.clone());
        }
        let names: Vec<&str> = self.frames.iter().map(|f| f.name.as_str()).collect();
        ent.meta.insert("device_frames".into(), names.join(","));
        ent.meta.insert("parent_frame".into(), self.parent_tf.clone());
        ent.meta.insert("attach_prefix".into(), attach_prefix);
        ent.meta.insert("motion".into(), motion.as_str().into());
        ent.meta.insert("model_path".into(), m.asset.path.display().to_string());
        b.ctx.entities.add(ent)?;
        self.root = m.root;
        Ok(())
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let model = ctx.model();
        let lookup = |n: &str| {
            FrameRef::lookup(model, n).ok_or_else(|| format!("frame `{n}` missing after compile"))
        };
        let mut out = Vec::new();
        for (i, f) in self.frames.iter().enumerate() {
            let child = lookup(&format!("{}{}", self.prefix, f.name))?;
            if i == 0 {
                // parent_frame -> first frame: only for a welded mount, whose pose that is.
                if self.welded {
                    let parent = match &self.parent_compiled {
                        Some(n) => lookup(n)?,
                        None => FrameRef::Body(0),
                    };
                    out.push(static_transform(model, parent, child, &self.parent_tf, &f.name)?);
                }
            } else if f.parent_is_frame {
                out.push(static_transform(
                    model,
                    lookup(&format!("{}{}", self.prefix, f.parent))?,
                    child,
                    &f.parent,
                    &f.name,
                )?);
            } else {
                let first = &self.frames[0].name;
                out.push(static_transform(
                    model,
                    lookup(&format!("{}{first}", self.prefix))?,
                    child,
                    first,
                    &f.name,
                )?);
            }
        }
        let ns = self.namespace.clone();
        if let (Some(_), Some(_), true, Some(first)) =
            (&self.camera_name, &self.cfg.frame_id, self.welded, out.first())
        {
            // The mount's own `frame_id:` names the first frame: a collision there is that key's.
            let keys = FrameKeys::new(
                "frame_id",
                "Give this mount another `frame_id:` (it names the device's first frame), or leave it out: the device's `camera_name:` names every frame.",
            );
            let by = crate::context::Claimant::new(&self.address, "spawn_sensor");
            let route = crate::context::TfRoute::Static;
            let fp = crate::spawn::frame_prefix(&ns);
            crate::spawn::claim_tf(ctx, &by, route, &fp, std::slice::from_ref(first), &keys)?;
        }
        let keys = match &self.camera_name {
            Some(_) => FrameKeys::new(
                "camera_name",
                "Give each device its own `camera_name:` on its spawn_sensor entry (every frame of the device and its camera's topics take it), or its carrier a `namespace:`.",
            ),
            None => FrameKeys::new(
                "frame_id",
                "Give this mount another `frame_id:` (or a `namespace:`, which prefixes its frames).",
            ),
        };
        self.tf = StaticTfPublisher::register(ctx, "spawn_sensor", &self.address, &ns, out, &keys)?;
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.tf.publish(ctx);
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if ctx.tick == 1 {
            self.tf.publish(ctx);
        }
        Ok(())
    }
}
