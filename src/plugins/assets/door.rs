//! `door`: a hinged (swing) door with a commandable opening.
//!
//! Geometry, in the door frame (`pos` = the opening's CENTRE on the floor, `rpy` yaw aligning the
//! closed leaf along its wall; x along the wall, y across it, z up): the opening spans x ∈
//! [−width/2, width/2]. The leaf (a box of `width` × `thickness` × `height`, 10 mm above the
//! floor) hangs on the swing side (+y for `swing: 1`), its wall-side face `mount_offset` + 5 mm
//! from the wall's centre plane, so it clears a wall of thickness up to 2·`mount_offset` and can
//! open past 90°. The hinge is the opening's `hinge_side` edge (`left` = −x); a positive hinge
//! angle swings the leaf toward the swing side, from 0 (closed) to `max_angle` (deg). The leaf is
//! a 25 kg body (an interior door's mass) on a hinge joint with 20 N·m·s/rad damping (a
//! hydraulic closer: ζ ≈ 0.85 with the default gains).
//!
//! Actuation: a POSITION actuator on the hinge (`kp` N·m/rad, `kv` N·m·s/rad), force-limited to
//! ±`max_torque` N·m. The target is an openness fraction 0..1 (`open` at reset; the `cmd`
//! endpoint after), held until commanded. Stall: when the actuator saturates (≥ 95 % of
//! `max_torque`) with the leaf still (< 0.05 rad/s) short of its target for 0.5 s, the door
//! BACKS OFF — it holds 0.1 rad back from where it stalled, toward where it came from, and reports
//! `stalled` — instead of grinding against what blocks it. A new command clears the stall.
//!
//! Casing (`frame: true`): `frame_model: door_frame` (the default) is a built-in visual-only
//! jamb/lintel casing around the opening (the wall already collides, so it never narrows the
//! doorway); another `frame_model` is loaded as a model and welded at the opening (a missing one
//! is a warning: a bare opening). `leaf: false` hangs no leaf (a cased opening: no hinge, no
//! actuator, no endpoints) but still registers the door entity; with `frame: false` too it would
//! place nothing and is refused. `model:` (a leaf model whose origin is its hinge edge at floor
//! level, extending along +x) replaces the box leaf. `color` repaints the leaf (and the casing
//! unless `frame_color`).
//!
//! Endpoints (`controllable: true`; namespace `namespace:`, default the entry's label so two doors
//! never share a topic; each renamed by `topics:`): `cmd` (in, std_msgs/Float64 openness 0..1),
//! `state` (out, std_msgs/Float64 measured openness, 10 Hz) and `door` (in, a
//! control_msgs/GripperCommand action, the gripper's ROS handler): `command.position` is the target
//! openness 0..1, `command.max_effort` clamps the hinge torque (N·m; 0 = `max_torque`, above it
//! saturates there). The goal succeeds with `reached_goal` once the openness is within
//! [`GOAL_TOLERANCE`] of the target, and aborts with `stalled` when the door backs off from an
//! obstruction (ros2_controllers' gripper action controller without `allow_stalling`); feedback
//! (position = openness, effort = hinge torque) at the `state` rate. A newer goal or a `cmd`
//! preempts a running goal (CANCELED); a cancel holds the measured angle. A position outside 0..1
//! or a negative/non-finite max_effort is aborted naming the field. Every result — succeeded,
//! aborted, canceled or refused — carries the measured openness and hinge torque of that step.
//!
//! Presence (`present: false`, DeleteEntity): the casing and leaf are hidden and contact-free (the
//! engine's presence); the leaf holds its measured angle, a `cmd` is ignored with a warning and a
//! goal is aborted until SpawnEntity. A goal running when the door is deleted is aborted at the
//! next step (and its target dropped: a later SpawnEntity holds the measured angle). Blackboard `door:<address>` holds a [`DoorHandle`].
//! Registers an entity (kind Door) on the casing body, named by the entry's address. Names:
//! `<prefix><stem>` (casing body), `<stem>_leaf`, `<stem>_hinge`, `<stem>_actuator`, `<stem>` =
//! the address with dots as `_`.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::Ordering;

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::{ActionCall, ActionOutcome, GoalStatus, GripperGoal};
use crate::context::{Endpoint, EndpointId, Entity, EntityKind, Payload, Pose, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::math::quat_from_rpy;
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, ValidateConfig};
use crate::plugins::shared::owner::{check_topics, entity_present, Scope};
use crate::spawn::mjcf::{attach, child_spec_from_str};
use crate::spawn::{check_rgba, load_model};

/// Leaf mass (kg): a typical interior door.
pub const LEAF_MASS: f64 = 25.0;
/// Hinge damping (N·m·s/rad): a hydraulic closer. With the default kp 40 / kv 8 and the 25 kg,
/// 0.9 m leaf (6.75 kg·m² about the hinge) the leaf is damped at ζ ≈ 0.85, so it settles on its
/// target instead of swinging past it (kv alone gives ζ ≈ 0.24).
pub const HINGE_DAMPING: f64 = 20.0;
/// Clearance (m) between the leaf's wall-side face and the plane `mount_offset` from the wall's centre.
pub const LEAF_GAP: f64 = 0.005;
/// Leaf clearance above the floor (m).
pub const FLOOR_GAP: f64 = 0.01;
/// Stall: saturated, still and short of target for this long (s).
pub const STALL_S: f64 = 0.5;
/// Back-off (rad) from the stall angle.
pub const BACKOFF_RAD: f64 = 0.1;
/// Publish rate of `state` (Hz).
pub const STATE_RATE_HZ: f64 = 10.0;
/// A door action goal succeeds when the openness is this close to its target (a fraction of
/// `max_angle`: 1.2 deg with the default 120).
pub const GOAL_TOLERANCE: f64 = 0.01;
/// Endpoint roles (keys of `topics:`).
pub const ROLES: [&str; 3] = ["cmd", "state", "door"];
/// Default leaf colour (light wood).
pub const LEAF_RGBA: [f64; 4] = [0.76, 0.6, 0.42, 1.0];
/// Default casing colour (off-white trim).
pub const FRAME_RGBA: [f64; 4] = [0.92, 0.92, 0.9, 1.0];

fn d_width() -> f64 {
    0.9
}
fn d_height() -> f64 {
    2.0
}
fn d_thickness() -> f64 {
    0.04
}
fn d_frame_model() -> String {
    "door_frame".into()
}
fn d_mount() -> f64 {
    0.06
}
fn d_hinge() -> String {
    "left".into()
}
fn d_swing() -> i32 {
    1
}
fn d_max_angle() -> f64 {
    120.0
}
fn d_kp() -> f64 {
    40.0
}
fn d_kv() -> f64 {
    8.0
}
fn d_max_torque() -> f64 {
    30.0
}

/// Config of `door`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoorConfig {
    /// MJCF name prefix (distinct per door). Default "".
    #[serde(default)]
    pub prefix: String,
    /// Opening CENTRE on the floor: [x, y] or [x, y, z] (m, world). REQUIRED.
    pub pos: Vec<f64>,
    /// Orientation [roll, pitch, yaw] (rad); yaw aligns the closed leaf along its wall. Default 0.
    #[serde(default)]
    pub rpy: [f64; 3],
    /// Opening / leaf width (m). Default 0.9.
    #[serde(default = "d_width")]
    pub width: f64,
    /// Leaf height (m). Default 2.0.
    #[serde(default = "d_height")]
    pub height: f64,
    /// Leaf thickness (m; box leaf only). Default 0.04.
    #[serde(default = "d_thickness")]
    pub thickness: f64,
    /// false: a cased opening, no leaf hung. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub leaf: bool,
    /// Optional leaf model (origin = hinge edge at floor level, leaf along +x); omit for a box leaf.
    #[serde(default)]
    pub model: Option<String>,
    /// Leaf colour [r, g, b] or [r, g, b, a]. Default light wood.
    #[serde(default)]
    pub color: Option<Vec<f64>>,
    /// Weld a static, visual-only jamb/lintel casing around the opening. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub frame: bool,
    /// Casing model; `door_frame` (default) is the built-in primitive casing.
    #[serde(default = "d_frame_model")]
    pub frame_model: String,
    /// Casing colour (default: follows `color`, else off-white).
    #[serde(default)]
    pub frame_color: Option<Vec<f64>>,
    /// Hang the leaf this far proud of the wall's centre plane, on the swing side (m). Default 0.06.
    #[serde(default = "d_mount")]
    pub mount_offset: f64,
    /// `left` | `right`: which edge of the opening is the hinge (left = −x of the door frame).
    #[serde(default = "d_hinge")]
    pub hinge_side: String,
    /// +1 / −1: which side (±y of the door frame) the leaf hangs on and opens toward.
    #[serde(default = "d_swing")]
    pub swing: i32,
    /// Fully-open hinge angle (deg). Default 120.
    #[serde(default = "d_max_angle")]
    pub max_angle: f64,
    /// Initial openness fraction 0..1, held until commanded. Default 0.
    #[serde(default)]
    pub open: f64,
    /// Expose the cmd/state endpoints; false = passive, held at `open`. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub controllable: bool,
    /// Transport scope (`/<ns>/cmd`, `/<ns>/state`). Default (omitted or ""): the entry's label.
    #[serde(default)]
    pub namespace: String,
    /// Position-actuator stiffness (N·m/rad). Default 40.
    #[serde(default = "d_kp")]
    pub kp: f64,
    /// Position-actuator damping (N·m·s/rad). Default 8.
    #[serde(default = "d_kv")]
    pub kv: f64,
    /// Actuator torque limit (N·m): what the door pushes an obstacle with before it stalls. Default 30.
    #[serde(default = "d_max_torque")]
    pub max_torque: f64,
    /// false: compiled in, but absent until spawned (SpawnEntity). Default true.
    #[serde(default = "crate::plugin::yes")]
    pub present: bool,
    /// Endpoint topic renames by role (`cmd`, `state`, `door`): a relative name renames inside
    /// the namespace, an absolute `/name` hardwires it.
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

impl ValidateConfig for DoorConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if !(self.pos.len() == 2 || self.pos.len() == 3)
            || self
                .pos
                .iter()
                .any(|v| !v.is_finite() || v.abs() > crate::world::bounds::MAX_POSITION_M)
        {
            e.push(ConfigError::new(
                "pos",
                format!(
                    "the opening centre is [x, y] or [x, y, z] (m, within ±1e6), got {:?}",
                    self.pos
                ),
            ));
        }
        if self.rpy.iter().any(|v| !v.is_finite()) {
            e.push(ConfigError::new("rpy", format!("must be finite (rad), got {:?}", self.rpy)));
        }
        for (k, v) in [
            ("width", self.width),
            ("height", self.height),
            ("thickness", self.thickness),
            ("kp", self.kp),
            ("max_torque", self.max_torque),
        ] {
            if !(v > 0.0 && v <= crate::world::bounds::MAX_SIZE_M) {
                e.push(ConfigError::new(
                    k,
                    format!("must be in (0, 10000] m, got {}", crate::error::num(v)),
                ));
            }
        }
        if !(self.kv >= 0.0 && self.kv.is_finite()) {
            e.push(ConfigError::new("kv", format!("must be >= 0 (N·m·s/rad), got {}", self.kv)));
        }
        if !(self.mount_offset >= 0.0 && self.mount_offset <= crate::world::bounds::MAX_SIZE_M) {
            e.push(ConfigError::new(
                "mount_offset",
                format!("must be >= 0 (m), got {}", self.mount_offset),
            ));
        }
        if self.hinge_side != "left" && self.hinge_side != "right" {
            e.push(ConfigError::new(
                "hinge_side",
                format!("`left` or `right`, got `{}`", self.hinge_side),
            ));
        }
        if self.swing != 1 && self.swing != -1 {
            e.push(ConfigError::new(
                "swing",
                format!("+1 or -1 (which way the leaf opens about +z), got {}", self.swing),
            ));
        }
        if !(self.max_angle > 0.0 && self.max_angle <= 180.0) {
            e.push(ConfigError::new(
                "max_angle",
                format!("must be within (0, 180] (deg), got {}", self.max_angle),
            ));
        }
        if !(0.0..=1.0).contains(&self.open) {
            e.push(ConfigError::new(
                "open",
                format!("an openness fraction within 0..1, got {}", self.open),
            ));
        }
        if let Some(c) = &self.color {
            e.extend(check_rgba(c, "color"));
        }
        if let Some(c) = &self.frame_color {
            e.extend(check_rgba(c, "frame_color"));
        }
        e.extend(check_topics(&self.topics, &ROLES));
        let serves_none = !(self.leaf && self.controllable);
        if serves_none && !self.topics.is_empty() {
            e.push(ConfigError::new(
                "topics",
                "renames endpoints this door does not have: a passive door (`controllable: false`) or a cased opening (`leaf: false`) serves none; remove `topics:`",
            ));
        }
        if !self.leaf && !self.frame {
            e.push(ConfigError::new("leaf", "`leaf: false` with `frame: false` would place nothing at all: keep the casing (frame: true) or hang a leaf"));
        }
        e
    }
}

/// Door state shared with the blackboard handle.
#[derive(Debug, Clone, Default)]
struct DoorState {
    /// Commanded openness (0..1).
    target: f64,
    /// A command not yet taken by pre_step.
    request: Option<f64>,
    /// Measured openness (0..1).
    openness: f64,
    /// Backed off after a stall (cleared by a new command).
    stalled: bool,
}

/// In-process door control (blackboard `door:<address>`).
#[derive(Debug, Clone)]
pub struct DoorHandle(Rc<RefCell<DoorState>>);

impl DoorHandle {
    /// Command an openness fraction (clamped to 0..1), from the next step.
    pub fn set_open(&self, f: f64) {
        if f.is_finite() {
            self.0.borrow_mut().request = Some(f.clamp(0.0, 1.0));
        }
    }
    /// Measured openness (0 closed .. 1 at `max_angle`).
    pub fn openness(&self) -> f64 {
        self.0.borrow().openness
    }
    /// The commanded openness.
    pub fn target(&self) -> f64 {
        self.0.borrow().target
    }
    /// True after the door backed off from an obstruction (until the next command).
    pub fn stalled(&self) -> bool {
        self.0.borrow().stalled
    }
}

/// Blackboard key of the door at `address`.
pub fn handle_key(address: &str) -> String {
    format!("door:{address}")
}

/// A running GripperCommand goal.
struct DoorGoal {
    call: ActionCall,
    /// Target openness 0..1.
    target: f64,
}

fn outcome(status: GoalStatus, msg: impl Into<String>, result: Option<Payload>) -> ActionOutcome {
    ActionOutcome { status, error_code: 0, error_string: msg.into(), result: result.map(Box::new) }
}

/// The `door` plugin.
pub struct Door {
    cfg: DoorConfig,
    address: String,
    label: String,
    stem: String,
    base_dir: std::path::PathBuf,
    state: Rc<RefCell<DoorState>>,
    max_rad: f64,
    qpos: usize,
    dof: usize,
    act: usize,
    /// Hold angle (rad) while backed off.
    hold: Option<f64>,
    stall_time: f64,
    cmd: Option<EndpointId>,
    out: Option<EndpointId>,
    action: Option<EndpointId>,
    goal: Option<DoorGoal>,
    /// The hinge torque limit in force (N·m): `max_torque`, or a goal's smaller `max_effort`.
    torque: f64,
    /// An ignored `cmd` while absent was warned about.
    warned_absent: bool,
}

impl Door {
    /// Construct from config.
    pub fn new(cfg: DoorConfig, args: &PluginArgs) -> Self {
        let max_rad = cfg.max_angle.to_radians();
        Door {
            stem: args.address.replace('.', "_"),
            address: args.address.clone(),
            label: args.label.clone(),
            base_dir: args.base_dir.clone(),
            state: Rc::new(RefCell::new(DoorState { target: cfg.open, ..Default::default() })),
            max_rad,
            qpos: 0,
            dof: 0,
            act: 0,
            hold: None,
            stall_time: 0.0,
            cmd: None,
            out: None,
            action: None,
            goal: None,
            torque: cfg.max_torque,
            warned_absent: false,
            cfg,
        }
    }

    fn sx(&self) -> f64 {
        if self.cfg.hinge_side == "left" {
            1.0
        } else {
            -1.0
        }
    }

    fn rgba(c: &Option<Vec<f64>>, fallback: &[f64; 4]) -> String {
        let c = c.clone().unwrap_or_else(|| fallback.to_vec());
        format!("{} {} {} {}", c[0], c[1], c[2], c.get(3).copied().unwrap_or(1.0))
    }

    fn xml(&self, builtin_casing: bool) -> String {
        let c = &self.cfg;
        let s = &self.stem;
        let (hw, h) = (c.width / 2.0, c.height);
        let frame_rgba = Self::rgba(
            if c.frame_color.is_some() { &c.frame_color } else { &c.color },
            &FRAME_RGBA,
        );
        let casing = if builtin_casing {
            let (jt, jd) = (0.025, c.mount_offset.max(0.03) + 0.01); // jamb half-width, half-depth (m)
            format!(
                r#"<geom name="{s}_jamb_l" type="box" size="{jt} {jd} {hz}" pos="{xl} 0 {hz}" contype="0" conaffinity="0" group="1" rgba="{frame_rgba}"/>
      <geom name="{s}_jamb_r" type="box" size="{jt} {jd} {hz}" pos="{xr} 0 {hz}" contype="0" conaffinity="0" group="1" rgba="{frame_rgba}"/>
      <geom name="{s}_lintel" type="box" size="{lw} {jd} {jt}" pos="0 0 {lz}" contype="0" conaffinity="0" group="1" rgba="{frame_rgba}"/>"#,
                hz = h / 2.0,
                xl = -hw - jt,
                xr = hw + jt,
                lw = hw + 2.0 * jt,
                lz = h + jt,
            )
        } else {
            String::new()
        };
        let (leaf, actuator) = if c.leaf {
            let sx = self.sx();
            let sw = c.swing as f64;
            let hinge_y = sw * (c.mount_offset + LEAF_GAP + c.thickness / 2.0);
            let axis = sw * sx;
            let leaf_geom = if c.model.is_some() {
                String::new()
            } else {
                let hz = (h - FLOOR_GAP) / 2.0;
                format!(
                    r#"<geom name="{s}_leaf" type="box" size="{hw} {ht} {hz}" pos="{px} 0 {pz}" mass="{LEAF_MASS}" rgba="{rgba}"/>"#,
                    ht = c.thickness / 2.0,
                    px = sx * hw,
                    pz = FLOOR_GAP + hz,
                    rgba = Self::rgba(&c.color, &LEAF_RGBA)
                )
            };
            (
                format!(
                    r#"<body name="{s}_leaf" pos="{hx} {hinge_y} 0">
        <joint name="{s}_hinge" type="hinge" axis="0 0 {axis}" damping="{HINGE_DAMPING}"/>
        {leaf_geom}
      </body>"#,
                    hx = -sx * hw,
                ),
                format!(
                    r#"<actuator><position name="{s}_actuator" joint="{s}_hinge" kp="{kp}" kv="{kv}" forcelimited="true" forcerange="{lo} {hi}"/></actuator>"#,
                    kp = c.kp,
                    kv = c.kv,
                    lo = -c.max_torque,
                    hi = c.max_torque
                ),
            )
        } else {
            (String::new(), String::new())
        };
        format!(
            r#"<mujoco model="door">
  <worldbody>
    <body name="{s}">
      {casing}
      {leaf}
    </body>
  </worldbody>
  {actuator}
</mujoco>"#
        )
    }

    fn target_angle(&self) -> f64 {
        self.hold.unwrap_or(self.state.borrow().target * self.max_rad)
    }
}

impl Plugin for Door {
    fn hooks(&self) -> Hooks {
        if self.cfg.leaf {
            Hooks::BUILD | Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::PRE_STEP | Hooks::POST_STEP
        } else {
            Hooks::BUILD
        }
    }

    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        let body = format!("{}{}", self.cfg.prefix, self.stem);
        if spec.body(&body).is_some() {
            return Err(format!("prefix: the world already has a body `{body}`; give this door a distinct prefix or name"));
        }
        let builtin_casing = self.cfg.frame && self.cfg.frame_model == "door_frame";
        let mut child = child_spec_from_str(&self.xml(builtin_casing))?;
        let p = &self.cfg.pos;
        let pos = [p[0], p[1], p.get(2).copied().unwrap_or(0.0)];
        let [r, pi, y] = self.cfg.rpy;
        let quat = quat_from_rpy(r, pi, y);
        // a leaf model hangs on the hinge (its origin is the hinge edge; a right hinge turns it about z)
        if let (true, Some(mref)) = (self.cfg.leaf, &self.cfg.model) {
            let mut m = load_model(mref, &self.base_dir).map_err(|e| format!("model: {e}"))?;
            let q = if self.sx() > 0.0 { [1.0, 0.0, 0.0, 0.0] } else { [0.0, 0.0, 0.0, 1.0] };
            let leaf_body = format!("{}_leaf", self.stem);
            attach(
                &mut child,
                Some(&leaf_body),
                &mut m.spec,
                [0.0; 3],
                q,
                &format!("{}_leafmodel_", self.stem),
            )?;
        }
        if self.cfg.frame && !builtin_casing {
            match load_model(&self.cfg.frame_model, &self.base_dir) {
                Ok(mut m) => attach(
                    &mut child,
                    Some(&self.stem),
                    &mut m.spec,
                    [0.0; 3],
                    [1.0, 0.0, 0.0, 0.0],
                    &format!("{}_frame_", self.stem),
                )?,
                Err(e) => tracing::warn!(
                    "door `{}`: frame_model `{}` not found ({e}); the opening is left bare",
                    self.address,
                    self.cfg.frame_model
                ),
            }
        }
        attach(spec, None, &mut child, pos, quat, &self.cfg.prefix)?;
        let mut e = Entity::new(&self.address, EntityKind::Door, &body);
        e.prefix = self.cfg.prefix.clone();
        e.namespace = self.namespace();
        e.model = self.cfg.model.clone().unwrap_or_else(|| "door".into());
        e.initial_pose = Pose { pos, quat };
        e.declared_present = self.cfg.present;
        e.present = self.cfg.present;
        e.weld_reason =
            Some("a door's casing is welded; its leaf swings on the hinge (command `cmd`)".into());
        b.ctx.entities.add(e)
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let m = ctx.model();
        let j = format!("{}{}_hinge", self.cfg.prefix, self.stem);
        let jid = m
            .name_to_id(MjtObjBase::mjOBJ_JOINT, &j)
            .ok_or_else(|| format!("hinge `{j}` missing after compile"))?;
        self.qpos = m.jnt_qposadr()[jid] as usize;
        self.dof = m.jnt_dofadr()[jid] as usize;
        let a = format!("{}{}_actuator", self.cfg.prefix, self.stem);
        self.act = m
            .name_to_id(MjtObjBase::mjOBJ_ACTUATOR, &a)
            .ok_or_else(|| format!("actuator `{a}` missing after compile"))?;
        if self.cfg.controllable {
            let scope = Scope {
                owner: self.address.clone(),
                namespace: self.namespace(),
                frame_prefix: String::new(),
            };
            let topics = &self.cfg.topics;
            self.cmd = Some(
                ctx.interface.add(
                    scope.apply(
                        Endpoint::input("cmd")
                            .hint("ros2", "type", "std_msgs/msg/Float64")
                            .hint("ros2", "qos", "reliable"),
                        topics,
                    ),
                ),
            );
            self.out = Some(
                ctx.interface.add(
                    scope.apply(
                        Endpoint::out("state")
                            .rate(STATE_RATE_HZ)
                            .hint("ros2", "type", "std_msgs/msg/Float64")
                            .hint("ros2", "qos", "reliable"),
                        topics,
                    ),
                ),
            );
            self.action = Some(ctx.interface.add(scope.apply(
                Endpoint::input("door").hint(
                    "ros2",
                    "action",
                    "control_msgs/action/GripperCommand",
                ),
                topics,
            )));
        }
        ctx.blackboard.set(handle_key(&self.address), DoorHandle(self.state.clone()));
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        {
            let mut s = self.state.borrow_mut();
            s.target = self.cfg.open;
            s.request = None;
            s.stalled = false;
            s.openness = self.cfg.open;
        }
        self.hold = None;
        self.stall_time = 0.0;
        self.warned_absent = false;
        self.set_torque(ctx, self.cfg.max_torque);
        let q0 = self.cfg.open * self.max_rad;
        let (qa, act) = (self.qpos, self.act);
        let d = ctx.data_mut();
        d.qpos_mut()[qa] = q0;
        d.ctrl_mut()[act] = q0;
        let now = self.now(ctx, false, false);
        self.finish(GoalStatus::Aborted, "the simulation was reset".into(), now);
        Ok(())
    }

    fn pre_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let present = entity_present(ctx, &self.address);
        if let Some(id) = self.cmd {
            match ctx.interface.take_latest(id) {
                Some(Payload::Float64(f)) if f.is_finite() && !present && !self.warned_absent => {
                    self.warned_absent = true;
                    tracing::warn!(
                        "door `{}`: ignored `cmd` {f} while the door is absent (SpawnEntity it first)",
                        self.address
                    );
                }
                Some(Payload::Float64(f)) if f.is_finite() && !present => {}
                Some(Payload::Float64(f)) if f.is_finite() => {
                    self.state.borrow_mut().request = Some(f.clamp(0.0, 1.0));
                    let now = self.now(ctx, false, false);
                    self.finish(
                        GoalStatus::Canceled,
                        "preempted by a command on `cmd`".into(),
                        now,
                    );
                    self.set_torque(ctx, self.cfg.max_torque);
                }
                Some(other) => tracing::warn!(
                    "door `{}`: ignored a {} on `cmd` (expects an openness Float64 0..1)",
                    self.address,
                    other.kind()
                ),
                None => {}
            }
        }
        if let Some(id) = self.action {
            for p in ctx.interface.drain(id) {
                if let Payload::Goal(call) = p {
                    self.take_goal(ctx, call, present);
                }
            }
        }
        if self.goal.as_ref().is_some_and(|g| g.call.cancel.load(Ordering::SeqCst)) {
            let q = ctx.data().qpos()[self.qpos];
            self.state.borrow_mut().target = (q / self.max_rad).clamp(0.0, 1.0);
            self.hold = None;
            let now = self.now(ctx, false, false);
            self.finish(
                GoalStatus::Canceled,
                "canceled by the caller; holding the measured angle".into(),
                now,
            );
        }
        if !present {
            // absent: frozen by the engine's presence; hold the measured angle, no stall watch
            let q = ctx.data().qpos()[self.qpos];
            self.stall_time = 0.0;
            if self.goal.is_some() {
                // Deleted while a goal ran: end it, and forget its target so a later SpawnEntity
                // does not resume an aborted goal.
                self.state.borrow_mut().target = (q / self.max_rad).clamp(0.0, 1.0);
                self.hold = None;
                self.set_torque(ctx, self.cfg.max_torque);
                let now = self.now(ctx, false, false);
                let msg = format!(
                    "door `{}` was deleted (DeleteEntity) while the goal ran: aborted at openness {:.3}; SpawnEntity it before commanding it again",
                    self.address,
                    q / self.max_rad
                );
                self.finish(GoalStatus::Aborted, msg, now);
            }
            if !ctx.run.manual_control {
                ctx.data_mut().ctrl_mut()[self.act] = q;
            }
            return Ok(());
        }
        self.warned_absent = false;
        let req = self.state.borrow_mut().request.take();
        if let Some(f) = req {
            let mut s = self.state.borrow_mut();
            s.target = f;
            s.stalled = false;
            self.hold = None;
            self.stall_time = 0.0;
        }
        let (q, v, force) = {
            let d = ctx.data();
            (d.qpos()[self.qpos], d.qvel()[self.dof], d.actuator_force()[self.act])
        };
        let target = self.target_angle();
        if self.hold.is_none() {
            let saturated = force.abs() >= 0.95 * self.torque;
            let still = v.abs() < 0.05;
            let short = (target - q).abs() > 0.05;
            if saturated && still && short {
                self.stall_time += ctx.dt;
            } else {
                self.stall_time = 0.0;
            }
            if self.stall_time >= STALL_S {
                let dir = (target - q).signum();
                let back = (q - dir * BACKOFF_RAD).clamp(0.0, self.max_rad);
                self.hold = Some(back);
                self.state.borrow_mut().stalled = true;
                tracing::info!(
                    "door `{}`: stalled at {:.1} deg short of {:.1} deg; backing off to {:.1} deg",
                    self.address,
                    q.to_degrees(),
                    target.to_degrees(),
                    back.to_degrees()
                );
            }
        }
        let ctrl = self.target_angle().clamp(0.0, self.max_rad);
        if !ctx.run.manual_control {
            ctx.data_mut().ctrl_mut()[self.act] = ctrl;
        }
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let q = ctx.data().qpos()[self.qpos];
        let effort = ctx.data().actuator_force()[self.act];
        let openness = q / self.max_rad;
        let stalled = {
            let mut s = self.state.borrow_mut();
            s.openness = openness;
            s.stalled
        };
        let result = |stalled: bool, reached: bool| Payload::GripperResult {
            position: openness,
            effort,
            stalled,
            reached_goal: reached,
        };
        let mut due = false;
        if let Some(id) = self.out {
            if ctx.interface.is_due(id, ctx.tick) {
                due = true;
                let tick = ctx.tick;
                ctx.interface.publish(id, tick, Payload::Float64(openness));
            }
        }
        if let Some(g) = &self.goal {
            if stalled {
                let msg = format!(
                    "stalled at openness {openness:.3}, {:.3} short of {:.3} (blocked?): the door backed off",
                    (g.target - openness).abs(),
                    g.target
                );
                self.finish(GoalStatus::Aborted, msg, result(true, false));
            } else if (openness - g.target).abs() <= GOAL_TOLERANCE {
                self.finish(
                    GoalStatus::Succeeded,
                    "reached the goal openness".into(),
                    result(false, true),
                );
            } else if due {
                let _ = g.call.feedback.send(result(false, false));
            }
        }
        Ok(())
    }
}

impl Door {
    /// End the running goal, if any, with `status` and `result` (the door as it is).
    fn finish(&mut self, status: GoalStatus, msg: String, result: Payload) {
        if let Some(g) = self.goal.take() {
            let _ = g.call.outcome.send(outcome(status, msg, Some(result)));
        }
    }

    /// A GripperCommand result of the door as it is now: the measured openness and hinge torque.
    fn now(&self, ctx: &SimContext, stalled: bool, reached_goal: bool) -> Payload {
        let d = ctx.data();
        Payload::GripperResult {
            position: d.qpos()[self.qpos] / self.max_rad,
            effort: d.actuator_force()[self.act],
            stalled,
            reached_goal,
        }
    }

    /// Put the hinge torque limit at `limit` (N·m) through the model-write seam.
    fn set_torque(&mut self, ctx: &mut SimContext, limit: f64) {
        if limit != self.torque {
            self.torque = limit;
            ctx.model_writer().actuator_force_limit(self.act, [-limit, limit], true);
        }
    }

    /// Check a GripperCommand goal and make it the running one (preempting the last).
    fn take_goal(&mut self, ctx: &mut SimContext, call: ActionCall, present: bool) {
        // A refused goal's result still reports the door as it is.
        let now = self.now(ctx, self.state.borrow().stalled, false);
        let refuse = |call: ActionCall, msg: String| {
            let _ = call.outcome.send(outcome(GoalStatus::Aborted, msg, Some(now)));
        };
        let Payload::Gripper(GripperGoal { position, max_effort }) = *call.goal.as_ref() else {
            let kind = call.goal.kind();
            return refuse(
                call,
                format!("the door action takes a GripperCommand goal, not {kind}"),
            );
        };
        if !present {
            return refuse(
                call,
                format!(
                    "door `{}` is absent (present: false or DeleteEntity): SpawnEntity it before commanding it",
                    self.address
                ),
            );
        }
        if !(0.0..=1.0).contains(&position) {
            return refuse(
                call,
                format!(
                    "command.position = {}: a door's target is its openness, a fraction 0..1 (0 closed, 1 open at max_angle {} deg)",
                    crate::error::num(position),
                    self.cfg.max_angle
                ),
            );
        }
        if !(max_effort >= 0.0 && max_effort.is_finite()) {
            return refuse(
                call,
                format!(
                    "command.max_effort = {}: must be a finite hinge torque >= 0 (N·m; 0 = the door's max_torque {})",
                    crate::error::num(max_effort),
                    self.cfg.max_torque
                ),
            );
        }
        let now = self.now(ctx, false, false);
        self.finish(GoalStatus::Canceled, "preempted by a newer door goal".into(), now);
        let limit = if max_effort > 0.0 {
            max_effort.min(self.cfg.max_torque)
        } else {
            self.cfg.max_torque
        };
        self.set_torque(ctx, limit);
        self.state.borrow_mut().request = Some(position);
        self.goal = Some(DoorGoal { call, target: position });
    }

    fn namespace(&self) -> String {
        let ns = self.cfg.namespace.trim_matches('/');
        if ns.is_empty() {
            self.label.clone()
        } else {
            ns.to_string()
        }
    }
}

/// The registry entry of `door`.
pub fn descriptor() -> crate::plugin::PluginDescriptor {
    crate::plugin_descriptor!(
        "door",
        "A hinged swing door: force-limited position actuator, openness 0..1 on cmd/state, backs off when stalled.",
        DoorConfig,
        Door
    )
    // A leaf `model:` resolves and its manifest reads at load.
    .expands(&[], crate::world::expand::check_model)
}
