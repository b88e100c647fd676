//! `conveyor`: a velocity-driven belt conveyor.
//!
//! Built from primitives (no conveyor model is bundled, so `model: conveyor` names this built-in
//! belt): a welded bed (box, `length` × `width`, top at `height − 0.02`), two visual-only end
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
//! Endpoint `speed` (in, std_msgs/Float64, scoped by `namespace`: `/<ns>/speed`) sets the belt
//! speed (m/s). Blackboard `conveyor:<address>` holds a [`ConveyorHandle`]. Registers an entity
//! (kind Other) named by the entry's address. `on_reset` restores the configured `speed`.

use std::cell::Cell;
use std::rc::Rc;

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::{Endpoint, EndpointId, Entity, EntityKind, Payload, Pose, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::math::quat_from_rpy;
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, ValidateConfig};
use crate::spawn::mjcf::{attach, child_spec_from_str};

/// Belt slab thickness (m).
pub const BELT_THICKNESS: f64 = 0.02;
/// Belt slab mass (kg): heavy, so a load barely perturbs the forced velocity within a step.
pub const BELT_MASS: f64 = 200.0;
/// Edge of the `package_pose` carton (m) and its mass (kg).
pub const PACKAGE_SIZE: f64 = 0.2;
/// Mass of the `package_pose` carton (kg).
pub const PACKAGE_MASS: f64 = 2.0;

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
    /// Belt model: only the built-in primitive belt, `conveyor`, exists. Default `conveyor`.
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
        if self.model != "conveyor" {
            e.push(ConfigError::new(
                "model",
                format!("`{}`: no conveyor model is bundled; the belt is built from primitives (`model: conveyor`, the default) — size it with length/width/height", self.model),
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

/// The `conveyor` plugin.
pub struct Conveyor {
    cfg: ConveyorConfig,
    address: String,
    stem: String,
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

    fn xml(&self) -> String {
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
        let mut child = child_spec_from_str(&self.xml())?;
        let [r, p, y] = self.cfg.rpy;
        let quat = quat_from_rpy(r, p, y);
        attach(spec, None, &mut child, self.cfg.pos, quat, &self.cfg.prefix)?;
        let mut e = Entity::new(&self.address, EntityKind::Other, &body);
        e.prefix = self.cfg.prefix.clone();
        e.namespace = self.cfg.namespace.trim_matches('/').to_string();
        e.model = "conveyor".into();
        e.initial_pose = Pose { pos: self.cfg.pos, quat };
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
        self.ep = ctx.interface.add(
            Endpoint::input("speed")
                .owner(Some(&self.address))
                .namespace(&self.cfg.namespace)
                .hint("ros2", "type", "std_msgs/msg/Float64")
                .hint("ros2", "qos", "reliable"),
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
        let (q, v, s) = (self.qpos, self.dof, self.speed.get());
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

/// The registry entry of `conveyor`.
pub fn descriptor() -> crate::plugin::PluginDescriptor {
    crate::plugin_descriptor!(
        "conveyor",
        "A velocity-driven belt conveyor (slide-joint belt, forced speed with position wrap; speed commandable as Float64).",
        ConveyorConfig,
        Conveyor
    )
}
