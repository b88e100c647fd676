//! `spawn_arm`'s config: where the arm goes (`pos`/`rpy`, `mount:`, `rail:`), its end effector,
//! home, actuators and gravity compensation, and every refusal of a bad value.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_norway::Value;

use crate::error::ConfigError;
use crate::plugin::ValidateConfig;
use crate::spawn::actuators;
use crate::world::bounds::MAX_JOINT_VALUE;

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
