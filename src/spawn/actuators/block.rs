//! The `actuators:` block's shape: the laws (`Control`), the gains a law reads (`Gains`), the
//! per-actuator `each:` and `add:` levels, and [`parse`], which refuses a bad shape at config
//! validation (MuJoCo spellings named with their replacement).

use std::collections::BTreeMap;

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
    pub(super) fn unit(self) -> Unit {
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
pub(super) enum Unit {
    Position,
    Velocity,
    Effort,
}

impl Unit {
    pub(super) fn name(self) -> &'static str {
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
    pub(super) fn gain(&self, key: &str) -> Option<f64> {
        match key {
            "p" => self.p,
            "d" => self.d,
            "stiffness" => self.stiffness,
            "damping" => self.damping,
            _ => None,
        }
    }
    pub(super) fn stated_gains(&self) -> Vec<&'static str> {
        ["p", "d", "stiffness", "damping"].into_iter().filter(|k| self.gain(k).is_some()).collect()
    }
    pub(super) fn is_empty(&self) -> bool {
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

pub(super) fn mujoco_spelling(key: &str) -> Option<&'static str> {
    Some(match key {
        "kp" => "is MuJoCo's spelling; write `p` (the position law's gain) or `stiffness` (impedance)",
        "kv" => "is MuJoCo's spelling; write `d` (position / velocity damping gain) or `damping` (impedance)",
        "kd" => "is MuJoCo's spelling; write `d` (position / velocity damping gain) or `damping` (impedance)",
        "forcerange" => "is MuJoCo's spelling; write `effort_limit: <N·m>` (URDF's <limit effort=>), which sets the range to ±effort_limit",
        "gainprm" | "biasprm" | "gaintype" | "biastype" => "is a MuJoCo actuator field; state the law with `control:` and its gains (p/d, stiffness/damping)",
        _ => return None,
    })
}

pub(super) fn num(v: &Value, path: &str, e: &mut Vec<ConfigError>) -> Option<f64> {
    match v.as_f64() {
        Some(x) if x.is_finite() => Some(x),
        _ => {
            e.push(ConfigError::new(path, format!("must be a finite number, got {}", short(v))));
            None
        }
    }
}

pub(super) fn short(v: &Value) -> String {
    serde_norway::to_string(v).map(|s| s.trim().to_string()).unwrap_or_else(|_| "?".into())
}

pub(super) fn parse_level<'a>(
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
pub(super) fn check_law(g: &Gains, control: Option<Control>, path: &str, e: &mut Vec<ConfigError>) {
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
