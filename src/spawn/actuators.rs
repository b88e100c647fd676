//! `actuators:` — stating the law a model's joints run under, and its gains, from the world.
//!
//! A spawn plugin (`spawn_arm`, `spawn_robot`) carries an optional block
//!
//! ```yaml
//! actuators:
//!   control: impedance       # position | velocity | effort | impedance; the model's own if unset
//!   stiffness: 2.0           # N·m/rad (impedance)
//!   damping: 0.02            # N·m·s/rad (impedance)
//!   effort_limit: 150        # N·m (URDF <limit effort=>): forcerange ±effort_limit
//!   ctrlrange: [-1, 1]       # the command range, in the law's unit
//!   each:                    # per ACTUATOR name, on top of the shared keys
//!     wrist_3: {control: position, p: 2000, d: 500}
//! ```
//!
//! and this module rewrites the model's own actuators in the child `MjSpec` before it is attached
//! (the file on disk is never touched; a world that declares nothing compiles the model as is). The
//! four laws compile as this table says (force = gain·ctrl + bias):
//!
//! | control | commands | gains | gaintype / gainprm | biastype / biasprm |
//! | --- | --- | --- | --- | --- |
//! | position | joint position (rad, m) | p, d | fixed, [p] | affine, [0, −p, −d] |
//! | velocity | joint velocity (rad/s, m/s) | d | fixed, [d] | affine, [0, 0, −d] |
//! | effort | joint torque (N·m, N) | — | fixed, [1] | none |
//! | impedance | joint position (rad, m) | stiffness, damping | fixed, [stiffness] | affine, [0, −stiffness, −damping] |
//!
//! Two halves, applied at different moments by the spawn plugin:
//! 1. [`apply`] — the actuator rewrite, on the model's own spec right after it is loaded and
//!    BEFORE an end effector is grafted on, so a shared `control:` never falls on a gripper's
//!    tendon actuator;
//! 2. [`apply_gravcomp`] — `body_gravcomp = 1` on every body the chain from the world down to it
//!    holds up through a position/impedance joint, AFTER the graft (gravcomp is per body and does
//!    not cascade: compensating before the tool is attached would leave the arm sagging by exactly
//!    the tool's weight).
//!
//! Errors are split so the fix is clear: a SHAPE error (an unknown key, a MuJoCo spelling, a gain
//! the stated law does not read, a bad number) is found by [`parse`] at config validation; anything
//! that needs the model (an unknown actuator, a joint or tendon name under `each:`, a missing
//! `ctrlrange`) is returned by [`apply`] at build. MuJoCo's own spellings (`kp`, `kv`, `kd`,
//! `forcerange`) and actuator types (`motor`, `pd`) are refused naming the replacement rather than
//! translated.
//!
//! The resolved table ([`ActuatorTable`]: every actuator, its final law and gains and whether each
//! came from the model or the world) is stored on the blackboard under
//! `actuator_table:<entity>` for the run record.

use std::collections::BTreeMap;

use mujoco_rs::mujoco_c::{mjtBias, mjtGain, mjtLimited, mjtTrn};
use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_norway::Value;

use crate::error::ConfigError;

/// Blackboard key of an entity's resolved actuator table.
pub fn table_key(entity: &str) -> String {
    format!("actuator_table:{entity}")
}

/// A ros2_control command interface, as `control:` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Control {
    /// Joint position servo: gains `p` (N·m/rad), `d` (N·m·s/rad).
    Position,
    /// Joint velocity servo: gain `d` (N·m·s/rad).
    Velocity,
    /// Joint torque: no gains; ctrl is N·m (or N).
    Effort,
    /// Joint impedance (a compliance controller's statement of a position law): `stiffness`,
    /// `damping`.
    Impedance,
}

impl Control {
    /// The YAML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Control::Position => "position",
            Control::Velocity => "velocity",
            Control::Effort => "effort",
            Control::Impedance => "impedance",
        }
    }
    /// Gain keys this law reads.
    pub fn gains(self) -> &'static [&'static str] {
        match self {
            Control::Position => &["p", "d"],
            Control::Velocity => &["d"],
            Control::Effort => &[],
            Control::Impedance => &["stiffness", "damping"],
        }
    }
    /// Unit family of the command (position and impedance share one).
    fn unit(self) -> Unit {
        match self {
            Control::Position | Control::Impedance => Unit::Position,
            Control::Velocity => Unit::Velocity,
            Control::Effort => Unit::Effort,
        }
    }
    /// True for the laws whose drive carries the weight below it (position, impedance).
    pub fn holds_pose(self) -> bool {
        matches!(self, Control::Position | Control::Impedance)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Position,
    Velocity,
    Effort,
}

impl Unit {
    fn name(self) -> &'static str {
        match self {
            Unit::Position => "a position (rad or m)",
            Unit::Velocity => "a velocity (rad/s or m/s)",
            Unit::Effort => "an effort (N·m or N)",
        }
    }
}

/// The keys of one level of the block (shared or per actuator). Every field is optional: what is
/// not stated keeps the model's own value.
#[derive(Debug, Clone, Default, PartialEq, JsonSchema)]
pub struct Gains {
    /// `position | velocity | effort | impedance`; the model's own law when unset.
    pub control: Option<Control>,
    /// Position gain (N·m/rad or N/m) of `position`.
    pub p: Option<f64>,
    /// Damping gain (N·m·s/rad or N·s/m) of `position` and `velocity`.
    pub d: Option<f64>,
    /// Stiffness (N·m/rad or N/m) of `impedance`.
    pub stiffness: Option<f64>,
    /// Damping (N·m·s/rad or N·s/m) of `impedance`.
    pub damping: Option<f64>,
    /// URDF `<limit effort=>` (N·m or N, > 0): the actuator's force range becomes ±effort_limit.
    pub effort_limit: Option<f64>,
    /// Command range `[lo, hi]` in the law's unit. Required when `control` changes the command's
    /// unit (rad ↔ rad/s ↔ N·m) of a control-limited actuator.
    pub ctrlrange: Option<[f64; 2]>,
}

impl Gains {
    fn gain(&self, key: &str) -> Option<f64> {
        match key {
            "p" => self.p,
            "d" => self.d,
            "stiffness" => self.stiffness,
            "damping" => self.damping,
            _ => None,
        }
    }
    fn stated_gains(&self) -> Vec<&'static str> {
        ["p", "d", "stiffness", "damping"].into_iter().filter(|k| self.gain(k).is_some()).collect()
    }
    fn is_empty(&self) -> bool {
        *self == Gains::default()
    }
}

/// Schema of the `actuators:` block (for `roqsim plugins describe`; the block itself is parsed by
/// [`parse`], which names a MuJoCo spelling's replacement).
#[derive(Debug, Clone, Default, PartialEq, JsonSchema)]
pub struct ActuatorsSchema {
    /// Shared keys, applied to every actuator the model declares.
    #[serde(flatten)]
    pub shared: Gains,
    /// Per ACTUATOR name (not joint name), on top of the shared keys.
    pub each: BTreeMap<String, Gains>,
    /// Joints of the model that no actuator drives: each gets an actuator of its own name, under
    /// the block's law (`control:` required) and gains.
    pub add: Vec<String>,
}

/// A parsed `actuators:` block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActuatorsBlock {
    /// Shared keys.
    pub shared: Gains,
    /// Per-actuator keys, in document order.
    pub each: Vec<(String, Gains)>,
    /// Joints to create an actuator for (named as the joint), in document order.
    pub add: Vec<String>,
}

impl ActuatorsBlock {
    /// True when the block states nothing.
    pub fn is_empty(&self) -> bool {
        self.shared.is_empty() && self.each.iter().all(|(_, g)| g.is_empty()) && self.add.is_empty()
    }
    /// The law the block states for every actuator (shared `control:`), if any.
    pub fn shared_control(&self) -> Option<Control> {
        self.shared.control
    }
}

const KEYS: [&str; 9] =
    ["control", "p", "d", "stiffness", "damping", "effort_limit", "ctrlrange", "each", "add"];

fn mujoco_spelling(key: &str) -> Option<&'static str> {
    Some(match key {
        "kp" => "is MuJoCo's spelling; write `p` (the position law's gain) or `stiffness` (impedance)",
        "kv" => "is MuJoCo's spelling; write `d` (position / velocity damping gain) or `damping` (impedance)",
        "kd" => "is MuJoCo's spelling; write `d` (position / velocity damping gain) or `damping` (impedance)",
        "forcerange" => "is MuJoCo's spelling; write `effort_limit: <N·m>` (URDF's <limit effort=>), which sets the range to ±effort_limit",
        "gainprm" | "biasprm" | "gaintype" | "biastype" => "is a MuJoCo actuator field; state the law with `control:` and its gains (p/d, stiffness/damping)",
        _ => return None,
    })
}

fn num(v: &Value, path: &str, e: &mut Vec<ConfigError>) -> Option<f64> {
    match v.as_f64() {
        Some(x) if x.is_finite() => Some(x),
        _ => {
            e.push(ConfigError::new(path, format!("must be a finite number, got {}", short(v))));
            None
        }
    }
}

fn short(v: &Value) -> String {
    serde_norway::to_string(v).map(|s| s.trim().to_string()).unwrap_or_else(|_| "?".into())
}

fn parse_level<'a>(
    v: &'a Value,
    path: &str,
    allow_each: bool,
    e: &mut Vec<ConfigError>,
    add: &mut Vec<String>,
) -> (Gains, Option<&'a serde_norway::Mapping>) {
    let mut g = Gains::default();
    let mut each = None;
    let Some(m) = v.as_mapping() else {
        e.push(ConfigError::new(
            path,
            format!("must be a mapping of {}, got {}", KEYS[..7].join(", "), short(v)),
        ));
        return (g, None);
    };
    for (k, val) in m {
        let Some(key) = k.as_str() else {
            e.push(ConfigError::new(path, format!("keys must be strings, got {}", short(k))));
            continue;
        };
        let kp = format!("{path}.{key}");
        match key {
            "control" => match val.as_str() {
                Some("position") => g.control = Some(Control::Position),
                Some("velocity") => g.control = Some(Control::Velocity),
                Some("effort") => g.control = Some(Control::Effort),
                Some("impedance") => g.control = Some(Control::Impedance),
                Some("motor") => e.push(ConfigError::new(
                    &kp,
                    "`motor` is MuJoCo's actuator type; the ros2_control command interface is `effort` (write `control: effort`)",
                )),
                Some("pd") => e.push(ConfigError::new(
                    &kp,
                    "`pd` is MuJoCo's actuator type; write `control: position` with gains `p` and `d`",
                )),
                _ => e.push(ConfigError::new(&kp, format!("unknown law {}; one of position, velocity, effort, impedance", short(val)))),
            },
            "p" | "d" | "stiffness" | "damping" => {
                if let Some(x) = num(val, &kp, e) {
                    if x < 0.0 {
                        e.push(ConfigError::new(&kp, format!("a gain is >= 0, got {x}")));
                    }
                    match key {
                        "p" => g.p = Some(x),
                        "d" => g.d = Some(x),
                        "stiffness" => g.stiffness = Some(x),
                        _ => g.damping = Some(x),
                    }
                }
            }
            "effort_limit" => {
                if let Some(x) = num(val, &kp, e) {
                    if x <= 0.0 {
                        e.push(ConfigError::new(&kp, format!("must be > 0 (N·m or N), got {x}")));
                    }
                    g.effort_limit = Some(x);
                }
            }
            "ctrlrange" => match val.as_sequence() {
                Some(s) if s.len() == 2 => {
                    let lo = num(&s[0], &format!("{kp}[0]"), e);
                    let hi = num(&s[1], &format!("{kp}[1]"), e);
                    if let (Some(lo), Some(hi)) = (lo, hi) {
                        if lo >= hi {
                            e.push(ConfigError::new(&kp, format!("must be [lo, hi] with lo < hi, got [{lo}, {hi}]")));
                        }
                        g.ctrlrange = Some([lo, hi]);
                    }
                }
                _ => e.push(ConfigError::new(&kp, format!("must be [lo, hi], got {}", short(val)))),
            },
            "each" if allow_each => match val.as_mapping() {
                Some(m) => each = Some(m),
                None if val.is_null() => {}
                None => e.push(ConfigError::new(&kp, format!("must map ACTUATOR names to their keys, got {}", short(val)))),
            },
            "each" => e.push(ConfigError::new(&kp, "`each:` is not nested; it sits at the top of the actuators block")),
            "add" if allow_each => match val.as_sequence() {
                Some(seq) => {
                    for (i, j) in seq.iter().enumerate() {
                        match j.as_str() {
                            Some(n) if !n.is_empty() => {
                                if add.iter().any(|a| a == n) {
                                    e.push(ConfigError::new(format!("{kp}[{i}]"), format!("joint `{n}` is listed twice")));
                                } else {
                                    add.push(n.to_string());
                                }
                            }
                            _ => e.push(ConfigError::new(format!("{kp}[{i}]"), format!("must be a joint name, got {}", short(j)))),
                        }
                    }
                }
                None => e.push(ConfigError::new(&kp, format!("must list the JOINT names to create actuators for, got {}", short(val)))),
            },
            "add" => e.push(ConfigError::new(&kp, "`add:` is not nested; it sits at the top of the actuators block")),
            other => {
                if let Some(fix) = mujoco_spelling(other) {
                    e.push(ConfigError::new(&kp, format!("`{other}` {fix}")));
                } else {
                    let keys = if allow_each { &KEYS[..] } else { &KEYS[..7] };
                    e.push(ConfigError::new(&kp, format!("unknown key `{other}`; the keys are {}", keys.join(", "))));
                }
            }
        }
    }
    (g, each)
}

/// Check that the gains stated at one level are read by the law in force there.
fn check_law(g: &Gains, control: Option<Control>, path: &str, e: &mut Vec<ConfigError>) {
    let Some(c) = control else { return };
    for k in g.stated_gains() {
        if !c.gains().contains(&k) {
            let reads = if c.gains().is_empty() {
                "no gain (the command is the torque)".to_string()
            } else {
                c.gains().join(", ")
            };
            let hint = match (c, k) {
                (Control::Position, "stiffness") => " (write `p`, or `control: impedance`)",
                (Control::Position, "damping") => " (write `d`, or `control: impedance`)",
                (Control::Impedance, "p") => " (write `stiffness`, or `control: position`)",
                (Control::Impedance, "d") => " (write `damping`, or `control: position`)",
                _ => "",
            };
            e.push(ConfigError::new(
                format!("{path}.{k}"),
                format!("the `{}` law does not read `{k}`; it reads {reads}{hint}", c.as_str()),
            ));
        }
    }
}

/// Parse and shape-check an `actuators:` block at key path `path` (e.g. `actuators`). Every problem
/// is returned, each at its own key path.
pub fn parse(v: &Value, path: &str) -> Result<ActuatorsBlock, Vec<ConfigError>> {
    let mut e = Vec::new();
    if v.is_null() {
        return Ok(ActuatorsBlock::default());
    }
    let mut add = Vec::new();
    let (shared, each_map) = parse_level(v, path, true, &mut e, &mut add);
    check_law(&shared, shared.control, path, &mut e);
    if !add.is_empty() && shared.control.is_none() {
        e.push(ConfigError::new(
            format!("{path}.add"),
            "creating actuators needs the law they run: state `control:` (position, velocity, effort or impedance) beside `add:`",
        ));
    }
    let mut each = Vec::new();
    if let Some(m) = each_map {
        for (k, val) in m {
            let Some(name) = k.as_str() else {
                e.push(ConfigError::new(
                    format!("{path}.each"),
                    format!("actuator names are strings, got {}", short(k)),
                ));
                continue;
            };
            let p = format!("{path}.each.{name}");
            let (g, _) = parse_level(val, &p, false, &mut e, &mut Vec::new());
            check_law(&g, g.control.or(shared.control), &p, &mut e);
            each.push((name.to_string(), g));
        }
    }
    if e.is_empty() {
        Ok(ActuatorsBlock { shared, each, add })
    } else {
        Err(e)
    }
}

// ------------------------------------------------------------------------------------------
// the resolved table
// ------------------------------------------------------------------------------------------

/// Where a resolved value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The model file's own value.
    Model,
    /// Stated in the world's `actuators:` block.
    World,
    /// Neither states it: the law's default (0 damping when the model's own law has none).
    Default,
}

impl Origin {
    /// `model` | `world` | `default`.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Model => "model",
            Origin::World => "world",
            Origin::Default => "default",
        }
    }
}

/// The law an actuator ended up with (its own law is classified from its parameters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Law {
    /// One of the four `control:` laws.
    Control(Control),
    /// A MuJoCo actuator that is none of them (muscle, adhesion, a general one) — kept as is.
    Other,
}

impl Law {
    /// `position` | ... | `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            Law::Control(c) => c.as_str(),
            Law::Other => "other",
        }
    }
}

/// One row of the resolved table: an actuator, its final law and gains, and their origins.
#[derive(Debug, Clone, PartialEq)]
pub struct ActuatorRow {
    /// Actuator name, unprefixed (the model's own).
    pub actuator: String,
    /// What it drives: `joint <name>`, `tendon <name>`, ...
    pub target: String,
    /// Final law.
    pub law: Law,
    /// Where the law came from.
    pub law_origin: Origin,
    /// Gains by key (`p`, `d` / `stiffness`, `damping` / `d` for velocity), with their origins.
    /// A model position servo written with MuJoCo's `dampratio` reports `d` as minus that ratio.
    pub gains: Vec<(&'static str, f64, Origin)>,
    /// Force range `[lo, hi]` (N·m or N) when force-limited.
    pub forcerange: Option<[f64; 2]>,
    /// Origin of the force range.
    pub forcerange_origin: Origin,
    /// Command range `[lo, hi]` when control-limited.
    pub ctrlrange: Option<[f64; 2]>,
    /// Origin of the command range.
    pub ctrlrange_origin: Origin,
    /// How a controller's command maps onto this actuator's ctrl, when a controller states one
    /// (a GripperCommand's position in the gripper joint's unit): `(text, origin)`.
    pub command_map: Option<(String, Origin)>,
}

/// Every actuator of one entity, as it ran, plus the bodies gravity compensation holds up.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActuatorTable {
    /// Entity name.
    pub entity: String,
    /// One row per actuator, in model order.
    pub rows: Vec<ActuatorRow>,
    /// Bodies given `gravcomp = 1` (unprefixed), in model order.
    pub gravcomp_bodies: Vec<String>,
}

impl ActuatorTable {
    /// The row of an actuator.
    pub fn row(&self, actuator: &str) -> Option<&ActuatorRow> {
        self.rows.iter().find(|r| r.actuator == actuator)
    }
    /// A compact text rendering (one line per actuator) for logs and the run record.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for r in &self.rows {
            let gains: Vec<String> =
                r.gains.iter().map(|(k, v, o)| format!("{k}={v} ({})", o.as_str())).collect();
            s += &format!(
                "{} [{}]: {} ({}); {}; forcerange {:?} ({}); ctrlrange {:?} ({})\n",
                r.actuator,
                r.target,
                r.law.as_str(),
                r.law_origin.as_str(),
                if gains.is_empty() { "no gains".to_string() } else { gains.join(", ") },
                r.forcerange,
                r.forcerange_origin.as_str(),
                r.ctrlrange,
                r.ctrlrange_origin.as_str()
            );
            if let Some((m, o)) = &r.command_map {
                s.pop();
                s += &format!("; command {m} ({})\n", o.as_str());
            }
        }
        s
    }
}

// ------------------------------------------------------------------------------------------
// the rewrite
// ------------------------------------------------------------------------------------------

fn limited(flag: mjtLimited, range: &[f64; 2]) -> bool {
    flag == mjtLimited::mjLIMITED_TRUE
        || (flag == mjtLimited::mjLIMITED_AUTO && range[0] < range[1])
}

/// Classify an actuator's law from its parameters (`gainprm`, `biasprm`).
fn classify(gaintype: mjtGain, biastype: mjtBias, gain: &[f64], bias: &[f64]) -> Law {
    if gaintype != mjtGain::mjGAIN_FIXED {
        return Law::Other;
    }
    let g = gain[0];
    match biastype {
        mjtBias::mjBIAS_NONE => Law::Control(Control::Effort),
        mjtBias::mjBIAS_AFFINE => {
            let tol = 1e-9 * g.abs().max(1.0);
            if bias[0] == 0.0 && bias[1] < 0.0 && (g + bias[1]).abs() <= tol {
                Law::Control(Control::Position)
            } else if bias[0] == 0.0
                && bias[1] == 0.0
                && bias[2] < 0.0
                && (g + bias[2]).abs() <= tol
            {
                Law::Control(Control::Velocity)
            } else {
                Law::Other
            }
        }
        _ => Law::Other,
    }
}

fn target_of(a: &mujoco_rs::wrappers::mj_editing::MjsActuator) -> String {
    let kind = match a.trntype() {
        mjtTrn::mjTRN_JOINT | mjtTrn::mjTRN_JOINTINPARENT => "joint",
        mjtTrn::mjTRN_TENDON => "tendon",
        mjtTrn::mjTRN_SITE => "site",
        mjtTrn::mjTRN_BODY => "body",
        mjtTrn::mjTRN_SLIDERCRANK => "slider-crank",
        _ => "transmission",
    };
    format!("{kind} {}", a.target())
}

/// Describe every actuator of `spec` as it stands (all values from the model), for the table.
pub fn describe(spec: &MjSpec) -> Vec<ActuatorRow> {
    spec.actuator_iter()
        .map(|a| {
            let law = classify(a.gaintype(), a.biastype(), a.gainprm(), a.biasprm());
            let gains = match law {
                Law::Control(Control::Position) | Law::Control(Control::Impedance) => vec![
                    ("p", a.gainprm()[0], Origin::Model),
                    ("d", 0.0 - a.biasprm()[2], Origin::Model),
                ],
                Law::Control(Control::Velocity) => vec![("d", a.gainprm()[0], Origin::Model)],
                _ => Vec::new(),
            };
            ActuatorRow {
                actuator: a.name().to_string(),
                target: target_of(a),
                law,
                law_origin: Origin::Model,
                gains,
                forcerange: limited(a.forcelimited(), a.forcerange()).then(|| *a.forcerange()),
                forcerange_origin: Origin::Model,
                ctrlrange: limited(a.ctrllimited(), a.ctrlrange()).then(|| *a.ctrlrange()),
                ctrlrange_origin: Origin::Model,
                command_map: None,
            }
        })
        .collect()
}

/// Create an actuator for each joint in `joints` (the block's `add:`): named as the joint, a joint
/// transmission, gear 1, starting as a bare effort drive that the rewrite then gives the block's
/// law and gains. Refused: a joint the model lacks (listing its hinges and slides), a joint an
/// actuator already drives (naming it: restate that one under `each:`), a free or ball joint, a
/// name an actuator already has.
fn add_actuators(
    spec: &mut MjSpec,
    joints: &[String],
    key: &str,
    model: &str,
) -> Result<(), String> {
    use mujoco_rs::mujoco_c::mjtJoint;
    for (i, j) in joints.iter().enumerate() {
        let path = format!("{key}.add[{i}]");
        let Some(jt) = spec.joint(j).map(|x| x.type_()) else {
            let have: Vec<String> = spec
                .joint_iter()
                .filter(|x| matches!(x.type_(), mjtJoint::mjJNT_HINGE | mjtJoint::mjJNT_SLIDE))
                .map(|x| x.name().to_string())
                .collect();
            return Err(format!(
                "{path}: model `{model}` has no joint `{j}`; its hinge and slide joints are [{}]",
                have.join(", ")
            ));
        };
        if !matches!(jt, mjtJoint::mjJNT_HINGE | mjtJoint::mjJNT_SLIDE) {
            return Err(format!(
                "{path}: joint `{j}` is a {} joint; an actuator drives one hinge or slide joint",
                if jt == mjtJoint::mjJNT_FREE { "free" } else { "ball" }
            ));
        }
        if let Some(a) = spec.actuator_iter().find(|a| {
            matches!(a.trntype(), mjtTrn::mjTRN_JOINT | mjtTrn::mjTRN_JOINTINPARENT)
                && a.target() == j
        }) {
            return Err(format!(
                "{path}: joint `{j}` is already driven by actuator `{}`; restate that one under `each: {{{}: ...}}` instead",
                a.name(),
                a.name()
            ));
        }
        if spec.actuator_iter().any(|a| a.name() == j) {
            return Err(format!("{path}: model `{model}` already has an actuator named `{j}`"));
        }
        let a = spec.add_actuator().with_name(j).with_trntype(mjtTrn::mjTRN_JOINT);
        a.set_target(j);
        a.set_gaintype(mjtGain::mjGAIN_FIXED);
        a.set_biastype(mjtBias::mjBIAS_NONE);
        a.gainprm_mut()[0] = 1.0;
    }
    Ok(())
}

/// Rewrite the actuators of a model's own (unprefixed, not yet attached) spec as `block` states,
/// and return the resolved rows of every actuator it declares. `key` is the block's key path for
/// messages (`actuators`); `model` names the model. Errors name the key and what exists.
pub fn apply(
    spec: &mut MjSpec,
    block: &ActuatorsBlock,
    key: &str,
    model: &str,
) -> Result<Vec<ActuatorRow>, String> {
    add_actuators(spec, &block.add, key, model)?;
    let actuators: Vec<(String, mjtTrn, String)> = spec
        .actuator_iter()
        .map(|a| (a.name().to_string(), a.trntype(), a.target().to_string()))
        .collect();
    let names: Vec<&str> = actuators.iter().map(|(n, _, _)| n.as_str()).collect();
    // each: keys are actuator names.
    for (name, _) in &block.each {
        if names.contains(&name.as_str()) {
            continue;
        }
        let drivers: Vec<&str> =
            actuators.iter().filter(|(_, _, t)| t == name).map(|(n, _, _)| n.as_str()).collect();
        let is_joint = spec.joint(name).is_some();
        let is_tendon = spec.tendon_iter().any(|t| t.name() == name);
        if is_joint || is_tendon {
            let what = if is_joint { "joint" } else { "tendon" };
            return Err(if drivers.is_empty() {
                format!(
                    "{key}.each.{name}: `{name}` is a {what} of model `{model}`, not an actuator, and no actuator drives it; `each:` is keyed by actuator names: [{}]",
                    names.join(", ")
                )
            } else {
                format!(
                    "{key}.each.{name}: `{name}` is a {what}, not an actuator; the actuator driving it is `{}` (write `each: {{{}: ...}}`)",
                    drivers.join("`, `"),
                    drivers[0]
                )
            });
        }
        return Err(format!(
            "{key}.each.{name}: model `{model}` has no actuator `{name}`; its actuators are [{}]",
            names.join(", ")
        ));
    }
    let mut rows = describe(spec);
    if block.is_empty() {
        return Ok(rows);
    }
    for (i, (name, trn, _)) in actuators.iter().enumerate() {
        let own =
            block.each.iter().find(|(n, _)| n == name).map(|(_, g)| g.clone()).unwrap_or_default();
        let stated_here = block.each.iter().any(|(n, _)| n == name);
        let here = |k: &str| {
            format!(
                "{key}{}.{k}",
                if stated_here && own_has(&own, k) {
                    format!(".each.{name}")
                } else {
                    String::new()
                }
            )
        };
        let control = own.control.or(block.shared.control);
        let shared_applies = own.control.is_none() || own.control == block.shared.control;
        // Gains in force: the entry's own, else the shared ones when the entry keeps the shared law.
        let pick = |k: &str| -> Option<f64> {
            own.gain(k).or_else(|| if shared_applies { block.shared.gain(k) } else { None })
        };
        let effort_limit = own.effort_limit.or(block.shared.effort_limit);
        let ctrlrange = own.ctrlrange.or(block.shared.ctrlrange);
        if control.is_none()
            && ["p", "d", "stiffness", "damping"].iter().all(|k| pick(k).is_none())
            && effort_limit.is_none()
            && ctrlrange.is_none()
        {
            continue;
        }
        let a = spec.actuator_iter_mut().nth(i).expect("actuator index");
        let own_law = classify(a.gaintype(), a.biastype(), a.gainprm(), a.biasprm());
        let law = match (control, own_law) {
            (Some(c), _) => c,
            (None, Law::Control(c)) => c,
            (None, Law::Other) => {
                let stated: Vec<&str> = ["p", "d", "stiffness", "damping"]
                    .into_iter()
                    .filter(|k| pick(k).is_some())
                    .collect();
                if !stated.is_empty() {
                    return Err(format!(
                        "{}: actuator `{name}` of model `{model}` runs none of the four laws (it is a custom MuJoCo actuator), so its gains cannot be restated; state `control:` for it",
                        here(stated[0])
                    ));
                }
                // effort_limit / ctrlrange only: keep the law.
                Control::Effort
            }
        };
        // Gains the law reads that were not stated: refuse ones the model cannot supply.
        if control.is_none() {
            if let Law::Control(c) = own_law {
                for k in ["p", "d", "stiffness", "damping"] {
                    if pick(k).is_some() && !c.gains().contains(&k) {
                        return Err(format!(
                            "{}: actuator `{name}` runs the model's own `{}` law, which does not read `{k}`; it reads {} (or state `control:`)",
                            here(k),
                            c.as_str(),
                            if c.gains().is_empty() { "no gain".into() } else { c.gains().join(", ") }
                        ));
                    }
                }
            }
        }
        if law == Control::Impedance
            && !matches!(trn, mjtTrn::mjTRN_JOINT | mjtTrn::mjTRN_JOINTINPARENT)
        {
            return Err(format!(
                "{}: actuator `{name}` drives {} — `impedance` states a joint's stiffness, which a {} has not; give it `position` (or leave it out of the block)",
                here("control"),
                target_of(a),
                target_of(a).split(' ').next().unwrap_or("transmission")
            ));
        }
        let (own_p, own_d) = (a.gainprm()[0], a.biasprm()[2]);
        let mut gains: Vec<(&'static str, f64, Origin)> = Vec::new();
        let mut resolve = |k: &'static str,
                           model_value: Option<f64>,
                           required: bool|
         -> Result<f64, String> {
            if let Some(v) = pick(k) {
                gains.push((k, v, Origin::World));
                return Ok(v);
            }
            if let Some(v) = model_value {
                gains.push((k, v, Origin::Model));
                return Ok(v);
            }
            if required {
                return Err(format!(
                    "{}.{k}: actuator `{name}` changes law from the model's own `{}` to `{}`, and the model has no `{k}` to keep; state `{k}:`",
                    if stated_here { format!("{key}.each.{name}") } else { key.to_string() },
                    own_law.as_str(),
                    law.as_str()
                ));
            }
            gains.push((k, 0.0, Origin::Default));
            Ok(0.0)
        };
        let pos_model = matches!(own_law, Law::Control(c) if c.holds_pose());
        let vel_model = own_law == Law::Control(Control::Velocity);
        let (gain, bias, biastype): (f64, [f64; 3], mjtBias) = match law {
            Control::Position | Control::Impedance => {
                let (kp, kd) =
                    if law == Control::Position { ("p", "d") } else { ("stiffness", "damping") };
                let p = resolve(kp, pos_model.then_some(own_p), true)?;
                // A model `dampratio` (biasprm[2] > 0) is kept as is when no damping is stated.
                let d = resolve(kd, pos_model.then_some(-own_d), false)?;
                (p, [0.0, -p, -d], mjtBias::mjBIAS_AFFINE)
            }
            Control::Velocity => {
                let d = resolve("d", vel_model.then_some(own_p), true)?;
                (d, [0.0, 0.0, -d], mjtBias::mjBIAS_AFFINE)
            }
            Control::Effort => (1.0, [0.0; 3], mjtBias::mjBIAS_NONE),
        };
        // ctrlrange: required when the unit changes on a control-limited actuator.
        let own_unit = match own_law {
            Law::Control(c) => Some(c.unit()),
            Law::Other => None,
        };
        let was_limited = limited(a.ctrllimited(), a.ctrlrange());
        let (ctrl, ctrl_origin) = match ctrlrange {
            Some(r) => (Some(r), Origin::World),
            None => {
                if was_limited && own_unit.is_some_and(|u| u != law.unit()) {
                    return Err(format!(
                        "{}: actuator `{name}` changes its command from {} to {}, so the model's ctrlrange {:?} no longer means anything; state `ctrlrange: [lo, hi]` in the new unit",
                        if stated_here && own.control.is_some() { format!("{key}.each.{name}.ctrlrange") } else { format!("{key}.ctrlrange") },
                        own_unit.expect("checked").name(),
                        law.unit().name(),
                        a.ctrlrange()
                    ));
                }
                (was_limited.then(|| *a.ctrlrange()), Origin::Model)
            }
        };
        let (force, force_origin) = match effort_limit {
            Some(e) => (Some([-e, e]), Origin::World),
            None => {
                (limited(a.forcelimited(), a.forcerange()).then(|| *a.forcerange()), Origin::Model)
            }
        };
        // Write the law (the model's own parameters are kept when it already runs it and nothing changed).
        let keep_dampratio = law.holds_pose()
            && pos_model
            && own_d > 0.0
            && gains.iter().any(|(k, _, o)| (*k == "d" || *k == "damping") && *o == Origin::Model);
        a.set_gaintype(mjtGain::mjGAIN_FIXED);
        a.set_biastype(biastype);
        {
            let g = a.gainprm_mut();
            g.iter_mut().for_each(|x| *x = 0.0);
            g[0] = gain;
        }
        {
            let b = a.biasprm_mut();
            b.iter_mut().for_each(|x| *x = 0.0);
            b[..3].copy_from_slice(&bias);
            if keep_dampratio {
                b[2] = own_d;
            }
        }
        if let Some(r) = ctrlrange {
            *a.ctrlrange_mut() = r;
            a.set_ctrllimited(mjtLimited::mjLIMITED_TRUE);
        }
        if let Some(e) = effort_limit {
            *a.forcerange_mut() = [-e, e];
            a.set_forcelimited(mjtLimited::mjLIMITED_TRUE);
        }
        rows[i] = ActuatorRow {
            actuator: name.clone(),
            target: target_of(a),
            law: Law::Control(law),
            law_origin: if control.is_some() { Origin::World } else { Origin::Model },
            gains,
            forcerange: force,
            forcerange_origin: force_origin,
            ctrlrange: ctrl,
            ctrlrange_origin: ctrl_origin,
            command_map: None,
        };
    }
    Ok(rows)
}

fn own_has(g: &Gains, k: &str) -> bool {
    match k {
        "control" => g.control.is_some(),
        "effort_limit" => g.effort_limit.is_some(),
        "ctrlrange" => g.ctrlrange.is_some(),
        other => g.gain(other).is_some(),
    }
}

// ------------------------------------------------------------------------------------------
// gravity compensation
// ------------------------------------------------------------------------------------------

/// `gravity_compensation:` of a spawn plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GravComp {
    /// The rule: every body the chain from the world down to it holds up through a joint
    /// driven by a position or impedance actuator (not the load path to the ground).
    #[default]
    Auto,
    /// Every body of the mechanism (a controller handed its own gravity term).
    All,
    /// None (a drive with no gravity term; supplying it is the controller's job).
    Off,
}

/// Apply gravity compensation to a model's own spec (after any end effector is grafted), returning
/// the names of the bodies compensated, in tree order. `Auto` compensates every body at or below a
/// joint driven (joint transmission) by a position/impedance-law actuator, except a body whose
/// subtree holds a wheel (an unlimited hinge no pose-holding actuator drives: a steering knuckle
/// carries its wheel on the load path to the ground, which must keep pressing on the floor).
pub fn apply_gravcomp(spec: &mut MjSpec, mode: GravComp) -> Vec<String> {
    // Joints held by a pose-holding actuator.
    let held: Vec<String> = spec
        .actuator_iter()
        .filter(|a| matches!(a.trntype(), mjtTrn::mjTRN_JOINT | mjtTrn::mjTRN_JOINTINPARENT))
        .filter(|a| matches!(classify(a.gaintype(), a.biastype(), a.gainprm(), a.biasprm()), Law::Control(c) if c.holds_pose()))
        .map(|a| a.target().to_string())
        .collect();
    let wheels: Vec<String> = spec
        .joint_iter()
        .filter(|j| j.type_() == mujoco_rs::mujoco_c::mjtJoint::mjJNT_HINGE)
        .filter(|j| !held.contains(&j.name().to_string()))
        .filter(|j| {
            let r = j.range();
            let limited = match j.limited() {
                mjtLimited::mjLIMITED_TRUE => true,
                mjtLimited::mjLIMITED_FALSE => false,
                _ => r[0] < r[1],
            };
            !limited
        })
        .map(|j| j.name().to_string())
        .collect();
    fn has_wheel(b: &mujoco_rs::wrappers::mj_editing::MjsBody, wheels: &[String]) -> bool {
        b.joint_iter(false).any(|j| wheels.contains(&j.name().to_string()))
            || b.body_iter(false).any(|c| has_wheel(c, wheels))
    }
    // Walk the tree: (body name, held above or here).
    let mut out = Vec::new();
    fn walk(
        b: &mujoco_rs::wrappers::mj_editing::MjsBody,
        held_above: bool,
        held: &[String],
        wheels: &[String],
        mode: GravComp,
        out: &mut Vec<String>,
    ) {
        for c in b.body_iter(false) {
            let here = c.joint_iter(false).any(|j| held.contains(&j.name().to_string()));
            let h = held_above || here;
            let comp = match mode {
                GravComp::Auto => h && !has_wheel(c, wheels),
                GravComp::All => true,
                GravComp::Off => false,
            };
            if comp && !c.name().is_empty() {
                out.push(c.name().to_string());
            }
            walk(c, h, held, wheels, mode, out);
        }
    }
    walk(spec.world_body(), false, &held, &wheels, mode, &mut out);
    for n in &out {
        if let Some(b) = spec.body_mut(n) {
            b.set_gravcomp(1.0);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(y: &str) -> Result<ActuatorsBlock, Vec<ConfigError>> {
        let v: Value = serde_norway::from_str(y).unwrap();
        parse(&v, "actuators")
    }

    #[test]
    fn shapes_and_spellings() {
        let b = p("{control: impedance, stiffness: 2.0, damping: 0.02, each: {wrist_3: {control: position, p: 2000, d: 500}}}").unwrap();
        assert_eq!(b.shared.control, Some(Control::Impedance));
        assert_eq!(b.each[0].1.p, Some(2000.0));
        let e = p("{kp: 10}").unwrap_err();
        assert!(e[0].path == "actuators.kp" && e[0].message.contains("write `p`"), "{e:?}");
        let e = p("{each: {wrist_3: {forcerange: [-1, 1]}}}").unwrap_err();
        assert!(
            e[0].path == "actuators.each.wrist_3.forcerange"
                && e[0].message.contains("effort_limit"),
            "{e:?}"
        );
        let e = p("{control: motor}").unwrap_err();
        assert!(e[0].message.contains("control: effort"), "{e:?}");
        let e = p("{control: pd}").unwrap_err();
        assert!(e[0].message.contains("control: position"), "{e:?}");
        let e = p("{control: position, stiffness: 3}").unwrap_err();
        assert!(e[0].path == "actuators.stiffness" && e[0].message.contains("reads p, d"), "{e:?}");
        let e = p("{control: effort, each: {a: {d: 1}}}").unwrap_err();
        assert!(e[0].path == "actuators.each.a.d" && e[0].message.contains("no gain"), "{e:?}");
        let e = p("{bogus: 1}").unwrap_err();
        assert!(e[0].message.contains("unknown key `bogus`"), "{e:?}");
        let e = p("{ctrlrange: [1, -1]}").unwrap_err();
        assert!(e[0].message.contains("lo < hi"), "{e:?}");
    }
}
