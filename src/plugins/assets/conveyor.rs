//! `conveyor`: a velocity-driven belt conveyor.
//!
//! `model: conveyor` (the default) names the built-in belt, built from primitives: a welded bed (box, `length` × `width`, top at `height − 0.02`), two visual-only end
//! rollers of `roller_radius`, and the BELT — a 0.02 m thick slab of `length` × `width` whose top
//! is at `height`, on a slide joint along the belt's +x. Every `pre_step` forces the slide's
//! velocity to `speed` (m/s; negative reverses) and wraps its position into ±`belt_wrap` (m) —
//! the slab jumps back by 2·`belt_wrap` without changing velocity, so what rides on it does not
//! notice (keep `belt_wrap` ≤ half the slab's overhang of what it carries). The slab is heavy
//! (200 kg) so a load barely perturbs the forced velocity within a step.
//!
//! Belt ↔ object friction: the belt geom carries `friction` (default 0.6) with contact
//! `priority="1"`, so EVERY contact on the belt uses the belt's friction whatever the package
//! declares. (This replaces an explicit `<pair>` per package: a pair needs the package's geom at
//! build time — other entries add packages in any order — and a pair ignores contype/conaffinity,
//! so an absent package would still ride the belt.)
//!
//! Frame: `pos`/`rpy` place the belt frame — origin on the floor under the belt's centre, +x along
//! the travel, +z up. `package_pose` (x y z qw qx qy qz, in the belt frame) adds one free 0.2 m,
//! 2 kg carton there, re-seated by every reset (MuJoCo's qpos0). Names: `<prefix><stem>` for the
//! bed body, `<prefix><stem>_belt` (body and geom), `<prefix><stem>_belt_slide`, where `<stem>` is
//! the entry's address with dots as `_`.
//!
//! A user's belt (`model:` any other model reference: a bundled name, `<package>:<model>` or an
//! MJCF path) is welded at `pos`/`rpy` in place of the primitives; it must carry one slide joint
//! named `belt_slide` (the slab's; its axis is the travel direction), which the plugin drives as
//! above. The slab body's geoms get contact `priority="1"` (the belt owns its contacts) and, when
//! `friction:` is stated, that sliding friction. It keeps its own size: `length`, `width`,
//! `height` and `roller_radius` describe the built-in belt and are refused beside a user model.
//!
//! Endpoint `speed` (in, std_msgs/Float64, scoped by `namespace`: `/<ns>/speed`; `topics: {speed:
//! ...}` renames it) sets the belt speed (m/s). Blackboard `conveyor:<address>` holds a
//! [`ConveyorHandle`]. Registers an entity (kind Other) named by the entry's address;
//! `present: false` starts it absent (hidden, contact-free, its belt standing still until
//! SpawnEntity; a `package_pose` carton is a body of its own, so the two are refused together).
//! `on_reset` restores the configured `speed`.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::{Endpoint, EndpointId, Entity, EntityKind, Payload, Pose, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::math::quat_from_rpy;
use crate::plugin::{
    construct, BuildContext, ExpandArgs, Expansion, Hooks, Plugin, PluginArgs, ValidateConfig,
};
use crate::plugins::shared::owner::{check_topics, entity_present, Scope};
use crate::spawn::load_model;
use crate::spawn::mjcf::{attach, child_spec_from_str};

/// Belt slab thickness (m).
pub const BELT_THICKNESS: f64 = 0.02;
/// Belt slab mass (kg): heavy, so a load barely perturbs the forced velocity within a step.
pub const BELT_MASS: f64 = 200.0;
/// Edge of the `package_pose` carton (m) and its mass (kg).
pub const PACKAGE_SIZE: f64 = 0.2;
/// Mass of the `package_pose` carton (kg).
pub const PACKAGE_MASS: f64 = 2.0;
/// The built-in belt's model name.
pub const BUILTIN_MODEL: &str = "conveyor";
/// The slide joint a user's belt model must carry (its slab's).
pub const BELT_JOINT: &str = "belt_slide";
/// Endpoint roles (keys of `topics:`).
pub const ROLES: [&str; 1] = ["speed"];
/// Keys that size the built-in belt (refused beside a user's `model:`).
pub const BUILTIN_SIZE_KEYS: [&str; 4] = ["length", "width", "height", "roller_radius"];

fn d_model() -> String {
    "conveyor".into()
}
fn d_length() -> f64 {
    2.442
}
fn d_width() -> f64 {
    0.58
}
fn d_height() -> f64 {
    0.9
}
fn d_speed() -> f64 {
    0.1
}
fn d_friction() -> f64 {
    0.6
}
fn d_roller() -> f64 {
    0.0275
}
fn d_wrap() -> f64 {
    0.025
}

/// Config of `conveyor`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConveyorConfig {
    /// Transport scope of the `speed` endpoint (`/<ns>/speed`). Default "".
    #[serde(default)]
    pub namespace: String,
    /// MJCF name prefix (distinct prefixes for more than one belt). Default "".
    #[serde(default)]
    pub prefix: String,
    /// Belt model: `conveyor` (default) is the built-in primitive belt; any other model reference
    /// is a user's belt MJCF with a slide joint `belt_slide`.
    #[serde(default = "d_model")]
    pub model: String,
    /// World placement [x, y, z] (m) of the belt frame (origin on the floor under the belt's centre).
    #[serde(default)]
    pub pos: [f64; 3],
    /// Orientation [roll, pitch, yaw] (rad); +x of the belt frame is the travel direction.
    #[serde(default)]
    pub rpy: [f64; 3],
    /// Full belt length along x (m). Default 2.442.
    #[serde(default = "d_length")]
    pub length: f64,
    /// Full belt width along y (m). Default 0.58.
    #[serde(default = "d_width")]
    pub width: f64,
    /// Height of the belt's top surface above the belt frame's origin (m). Default 0.9.
    #[serde(default = "d_height")]
    pub height: f64,
    /// Initial belt speed (m/s); negative reverses. Default 0.1.
    #[serde(default = "d_speed")]
    pub speed: f64,
    /// Belt ↔ package sliding friction (the belt owns every contact on it). Default 0.6.
    #[serde(default = "d_friction")]
    pub friction: f64,
    /// End roller radius (m), visual. Default 0.0275.
    #[serde(default = "d_roller")]
    pub roller_radius: f64,
    /// ± position wrap of the belt slab (m). Default 0.025.
    #[serde(default = "d_wrap")]
    pub belt_wrap: f64,
    /// Optional: add one free carton (0.2 m, 2 kg) at this pose, x y z qw qx qy qz in the BELT's
    /// frame, re-seated there by every reset.
    #[serde(default)]
    pub package_pose: Option<[f64; 7]>,
    /// false: compiled in, but absent until spawned (SpawnEntity). Default true.
    #[serde(default = "crate::plugin::yes")]
    pub present: bool,
    /// Endpoint topic renames by role (`speed`): a relative name renames inside the namespace, an
    /// absolute `/name` hardwires it.
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

impl ValidateConfig for ConveyorConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        let pos = |e: &mut Vec<ConfigError>, k: &str, v: f64| {
            if !(v > 0.0 && v <= crate::world::bounds::MAX_SIZE_M) {
                e.push(ConfigError::new(
                    k,
                    format!("must be in (0, 10000] m, got {}", crate::error::num(v)),
                ));
            }
        };
        pos(&mut e, "length", self.length);
        pos(&mut e, "width", self.width);
        pos(&mut e, "height", self.height);
        pos(&mut e, "roller_radius", self.roller_radius);
        if self.model.trim().is_empty() {
            e.push(ConfigError::new(
                "model",
                "is empty; `conveyor` (the built-in belt) or a belt model with a `belt_slide` joint",
            ));
        }
        e.extend(check_topics(&self.topics, &ROLES));
        if !self.present && self.package_pose.is_some() {
            e.push(ConfigError::new(
                "present",
                "`present: false` with `package_pose`: the carton is a free body of its own and would fall where the absent belt was; give the carton as a `box` entry with its own `present:`",
            ));
        }
        if self.height.is_finite() && self.height <= BELT_THICKNESS + 0.001 {
            e.push(ConfigError::new(
                "height",
                format!("must exceed the belt thickness ({BELT_THICKNESS} m), got {}", self.height),
            ));
        }
        if self.roller_radius.is_finite()
            && self.height.is_finite()
            && self.roller_radius * 2.0 > self.height
        {
            e.push(ConfigError::new(
                "roller_radius",
                format!(
                    "a roller of radius {} does not fit under a belt {} m high",
                    self.roller_radius, self.height
                ),
            ));
        }
        if !(self.speed.is_finite() && self.speed.abs() <= crate::world::bounds::MAX_BELT_SPEED) {
            e.push(ConfigError::new(
                "speed",
                format!(
                    "must be within ±{} m/s, got {}",
                    crate::world::bounds::MAX_BELT_SPEED,
                    crate::error::num(self.speed)
                ),
            ));
        }
        if !(self.friction >= 0.0 && self.friction.is_finite()) {
            e.push(ConfigError::new("friction", format!("must be >= 0, got {}", self.friction)));
        }
        if !(self.belt_wrap >= 0.0 && self.belt_wrap.is_finite())
            || (self.length.is_finite() && self.belt_wrap >= self.length / 2.0)
        {
            e.push(ConfigError::new(
                "belt_wrap",
                format!("must be within [0, length/2) (m), got {}", self.belt_wrap),
            ));
        }
        if self
            .pos
            .iter()
            .chain(&self.rpy)
            .any(|v| !v.is_finite() || v.abs() > crate::world::bounds::MAX_POSITION_M)
        {
            e.push(ConfigError::new("pos", "pos and rpy must be finite, pos within ±1e6 m"));
        }
        if let Some(p) = &self.package_pose {
            let n = (p[3] * p[3] + p[4] * p[4] + p[5] * p[5] + p[6] * p[6]).sqrt();
            if p.iter().any(|v| !v.is_finite()) || n < 1e-9 {
                e.push(ConfigError::new(
                    "package_pose",
                    format!("x y z qw qx qy qz with a non-zero quaternion, got {p:?}"),
                ));
            }
        }
        e
    }
}

/// In-process belt speed control (blackboard `conveyor:<address>`).
#[derive(Debug, Clone)]
pub struct ConveyorHandle(Rc<Cell<f64>>);

impl ConveyorHandle {
    /// Set the belt speed (m/s), in effect from the next step.
    pub fn set_speed(&self, v: f64) {
        if v.is_finite() {
            self.0.set(v);
        }
    }
    /// The commanded belt speed (m/s).
    pub fn speed(&self) -> f64 {
        self.0.get()
    }
}

/// Blackboard key of the conveyor at `address`.
pub fn handle_key(address: &str) -> String {
    format!("conveyor:{address}")
}

/// Registry constructor: the typed config, plus the keys that size the built-in belt refused
/// beside a user's model (it keeps its own size) and whether `friction:` was stated.
pub fn create(
    value: &serde_norway::Value,
    args: &PluginArgs,
) -> Result<Box<dyn Plugin>, Vec<ConfigError>> {
    let stated = |k: &str| value.get(k).is_some();
    let model = value.get("model").and_then(serde_norway::Value::as_str).unwrap_or(BUILTIN_MODEL);
    if model != BUILTIN_MODEL {
        let errs: Vec<ConfigError> = BUILTIN_SIZE_KEYS
            .iter()
            .filter(|k| stated(k))
            .map(|k| {
                ConfigError::new(
                    *k,
                    format!("sizes the built-in belt; a belt `model:` (`{model}`) keeps its own size: remove `{k}` (or scale the model's MJCF)"),
                )
            })
            .collect();
        if !errs.is_empty() {
            return Err(errs);
        }
    }
    let friction_stated = stated("friction");
    construct::<ConveyorConfig, Conveyor>(value, args, |cfg, args| {
        let mut c = Conveyor::new(cfg, args);
        c.friction_stated = friction_stated;
        c
    })
}

/// Load-time check: a user's belt model resolves and its manifest reads (the built-in needs none).
pub fn expand(args: &ExpandArgs) -> Result<Option<Expansion>, String> {
    match args.config.get("model").and_then(serde_norway::Value::as_str) {
        None | Some(BUILTIN_MODEL) => Ok(None),
        Some(_) => crate::world::expand::check_model(args),
    }
}

/// The `conveyor` plugin.
pub struct Conveyor {
    cfg: ConveyorConfig,
    address: String,
    stem: String,
    base_dir: std::path::PathBuf,
    /// `friction:` was stated (a user's belt then gets it).
    friction_stated: bool,
    speed: Rc<Cell<f64>>,
    qpos: usize,
    dof: usize,
    ep: EndpointId,
}

impl Conveyor {
    /// Construct from config.
    pub fn new(cfg: ConveyorConfig, args: &PluginArgs) -> Self {
        let speed = Rc::new(Cell::new(cfg.speed));
        Conveyor {
            stem: args.address.replace('.', "_"),
            address: args.address.clone(),
            base_dir: args.base_dir.clone(),
            friction_stated: true,
            cfg,
            speed,
            qpos: 0,
            dof: 0,
            ep: 0,
        }
    }

    /// Name of the belt body and geom in the compiled model.
    pub fn belt_name(&self) -> String {
        format!("{}{}_belt", self.cfg.prefix, self.stem)
    }

    fn xml(&self, builtin: bool) -> String {
        let c = &self.cfg;
        let s = &self.stem;
        let (hl, hw) = (c.length / 2.0, c.width / 2.0);
        let bed_h = (c.height - BELT_THICKNESS) / 2.0;
        let r = c.roller_radius;
        let roller_z = c.height - BELT_THICKNESS / 2.0 - r;
        let package = match &c.package_pose {
            Some(p) => format!(
                r#"<body name="{s}_package" pos="{} {} {}" quat="{} {} {} {}"><freejoint name="{s}_package_free"/><geom name="{s}_package" type="box" size="{h} {h} {h}" mass="{PACKAGE_MASS}" rgba="0.72 0.55 0.35 1"/></body>"#,
                p[0],
                p[1],
                p[2],
                p[3],
                p[4],
                p[5],
                p[6],
                h = PACKAGE_SIZE / 2.0
            ),
            None => String::new(),
        };
        if !builtin {
            return format!(
                r#"<mujoco model="conveyor">
  <worldbody>
    <body name="{s}"/>
    {package}
  </worldbody>
</mujoco>"#
            );
        }
        format!(
            r#"<mujoco model="conveyor">
  <worldbody>
    <body name="{s}">
      <geom name="{s}_bed" type="box" size="{hl} {hw} {bed_h}" pos="0 0 {bed_h}" rgba="0.45 0.47 0.5 1"/>
      <geom name="{s}_roller_in" type="cylinder" size="{r} {hw}" pos="{rin} 0 {roller_z}" quat="0.7071067811865476 0.7071067811865476 0 0" contype="0" conaffinity="0" rgba="0.6 0.6 0.62 1"/>
      <geom name="{s}_roller_out" type="cylinder" size="{r} {hw}" pos="{rout} 0 {roller_z}" quat="0.7071067811865476 0.7071067811865476 0 0" contype="0" conaffinity="0" rgba="0.6 0.6 0.62 1"/>
      <body name="{s}_belt" pos="0 0 {belt_z}">
        <joint name="{s}_belt_slide" type="slide" axis="1 0 0"/>
        <geom name="{s}_belt" type="box" size="{hl} {hw} {ht}" friction="{f} 0.005 0.0001" priority="1" mass="{BELT_MASS}" rgba="0.12 0.12 0.12 1"/>
      </body>
    </body>
    {package}
  </worldbody>
</mujoco>"#,
            rin = -hl + r,
            rout = hl - r,
            belt_z = c.height - BELT_THICKNESS / 2.0,
            ht = BELT_THICKNESS / 2.0,
            f = c.friction,
        )
    }
}

impl Plugin for Conveyor {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD | Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::PRE_STEP
    }

    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        let body = format!("{}{}", self.cfg.prefix, self.stem);
        if spec.body(&body).is_some() {
            return Err(format!("prefix: the world already has a body `{body}`; give this conveyor a distinct prefix or name"));
        }
        let builtin = self.cfg.model == BUILTIN_MODEL;
        let mut child = child_spec_from_str(&self.xml(builtin))?;
        if !builtin {
            self.attach_user_belt(&mut child)?;
        }
        let [r, p, y] = self.cfg.rpy;
        let quat = quat_from_rpy(r, p, y);
        attach(spec, None, &mut child, self.cfg.pos, quat, &self.cfg.prefix)?;
        let mut e = Entity::new(&self.address, EntityKind::Other, &body);
        e.prefix = self.cfg.prefix.clone();
        e.namespace = self.cfg.namespace.trim_matches('/').to_string();
        e.model = self.cfg.model.clone();
        e.initial_pose = Pose { pos: self.cfg.pos, quat };
        e.declared_present = self.cfg.present;
        e.present = self.cfg.present;
        e.weld_reason = Some("a conveyor is welded scenery (its belt moves what lies on it; move the conveyor itself in the world file)".into());
        b.ctx.entities.add(e)
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let m = ctx.model();
        let j = format!("{}{}_belt_slide", self.cfg.prefix, self.stem);
        let jid = m
            .name_to_id(MjtObjBase::mjOBJ_JOINT, &j)
            .ok_or_else(|| format!("belt joint `{j}` missing after compile"))?;
        self.qpos = m.jnt_qposadr()[jid] as usize;
        self.dof = m.jnt_dofadr()[jid] as usize;
        let scope = Scope {
            owner: self.address.clone(),
            namespace: self.cfg.namespace.trim_matches('/').to_string(),
            frame_prefix: String::new(),
        };
        self.ep = ctx.interface.add(
            scope.apply(
                Endpoint::input("speed")
                    .hint("ros2", "type", "std_msgs/msg/Float64")
                    .hint("ros2", "qos", "reliable"),
                &self.cfg.topics,
            ),
        );
        ctx.blackboard.set(handle_key(&self.address), ConveyorHandle(self.speed.clone()));
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.speed.set(self.cfg.speed);
        let (q, v) = (self.qpos, self.dof);
        let s = self.cfg.speed;
        let d = ctx.data_mut();
        d.qpos_mut()[q] = 0.0;
        d.qvel_mut()[v] = s;
        Ok(())
    }

    fn pre_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if let Some(p) = ctx.interface.take_latest(self.ep) {
            match p {
                Payload::Float64(v) if v.is_finite() => self.speed.set(v),
                other => tracing::warn!(
                    "conveyor `{}`: ignored a {} on `speed` (expects a finite Float64, m/s)",
                    self.address,
                    other.kind()
                ),
            }
        }
        let wrap = self.cfg.belt_wrap;
        // absent: the engine froze the belt; it stands still until SpawnEntity
        let s = if entity_present(ctx, &self.address) { self.speed.get() } else { 0.0 };
        let (q, v) = (self.qpos, self.dof);
        let d = ctx.data_mut();
        let mut x = d.qpos()[q];
        if wrap > 0.0 {
            if x > wrap {
                x -= 2.0 * wrap;
            } else if x < -wrap {
                x += 2.0 * wrap;
            }
        } else {
            x = 0.0;
        }
        d.qpos_mut()[q] = x;
        d.qvel_mut()[v] = s;
        Ok(())
    }
}

impl Conveyor {
    /// Weld a user's belt model under the conveyor body (prefix `<stem>_`, so its `belt_slide`
    /// compiles to the name the built-in belt's has); its slab owns its contacts.
    fn attach_user_belt(&self, child: &mut MjSpec) -> Result<(), String> {
        let mref = &self.cfg.model;
        let mut m = load_model(mref, &self.base_dir).map_err(|e| format!("model: {e}"))?;
        let slides: Vec<bool> = m
            .spec
            .joint_iter()
            .filter(|j| j.name() == BELT_JOINT)
            .map(|j| j.type_() == MjtJoint::mjJNT_SLIDE)
            .collect();
        if slides.len() != 1 || !slides[0] {
            let joints: Vec<String> = m.spec.joint_iter().map(|j| j.name().to_string()).collect();
            return Err(format!(
                "model: `{mref}` has no slide joint named `{BELT_JOINT}`; a belt model carries one, on the belt slab, its axis the travel direction (joints: {})",
                if joints.is_empty() { "(none)".into() } else { joints.join(", ") }
            ));
        }
        let bodies: Vec<String> = m.spec.body_iter().map(|b| b.name().to_string()).collect();
        let slab = bodies
            .into_iter()
            .find(|b| {
                m.spec.body(b).is_some_and(|b| b.joint_iter(false).any(|j| j.name() == BELT_JOINT))
            })
            .ok_or_else(|| format!("model: `{mref}`: no body carries `{BELT_JOINT}`"))?;
        let (friction, set_friction) = (self.cfg.friction, self.friction_stated);
        let mut n = 0;
        for g in m.spec.body_mut(&slab).expect("found").geom_iter_mut(false) {
            g.set_priority(1);
            if set_friction {
                g.friction_mut()[0] = friction;
            }
            n += 1;
        }
        if n == 0 {
            return Err(format!(
                "model: `{mref}`: the belt body `{slab}` (carrying `{BELT_JOINT}`) has no geom for a load to ride on"
            ));
        }
        // A belt slab rests on its frame: its contacts with the model's other (static) bodies
        // would hold it back (MuJoCo's parent filter skips a parent welded to the world).
        let others: Vec<String> = m
            .spec
            .body_iter()
            .map(|b| b.name().to_string())
            .filter(|b| !b.is_empty() && *b != slab && *b != "world")
            .collect();
        for o in others {
            m.spec.add_exclude().with_bodyname1(&slab).with_bodyname2(&o);
        }
        attach(
            child,
            Some(&self.stem),
            &mut m.spec,
            [0.0; 3],
            [1.0, 0.0, 0.0, 0.0],
            &format!("{}_", self.stem),
        )
    }
}

/// The registry entry of `conveyor`.
pub fn descriptor() -> crate::plugin::PluginDescriptor {
    crate::plugin_descriptor!(
        "conveyor",
        "A velocity-driven belt conveyor (slide-joint belt, forced speed with position wrap; speed commandable as Float64): built-in, or a user's belt model.",
        ConveyorConfig;
        create
    )
    .expands(&[], expand)
}
