//! The `cartesian_admittance` config: which of the three controllers, its site and sensor, the
//! admittance gains, the clamps.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::ConfigError;
use crate::plugin::{check_rate, ValidateConfig};
use crate::plugins::shared as common;

/// Endpoint roles (keys of `topics:`).
pub const ROLES: [&str; 3] = ["target_frame", "target_wrench", "current_pose"];

/// Which controller runs, named as the FZI cartesian_controllers packages name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ControllerType {
    /// Pose tracking only, blind to contact: twist = kp ⊙ pose error.
    CartesianMotionController,
    /// The wrench loop alone, no stiffness and so no equilibrium: M a + D v = w_d − w.
    CartesianForceController,
    /// Both: M a + D v = w_d − w + C ⊙ pose error, per-axis stiffness.
    CartesianComplianceController,
}

impl ControllerType {
    /// The config spelling (and the default controller name).
    pub fn key(self) -> &'static str {
        match self {
            ControllerType::CartesianMotionController => "cartesian_motion_controller",
            ControllerType::CartesianForceController => "cartesian_force_controller",
            ControllerType::CartesianComplianceController => "cartesian_compliance_controller",
        }
    }
    /// The ros2_control type name `list_controllers` reports.
    pub fn type_name(self) -> &'static str {
        match self {
            ControllerType::CartesianMotionController => {
                "cartesian_motion_controller/CartesianMotionController"
            }
            ControllerType::CartesianForceController => {
                "cartesian_force_controller/CartesianForceController"
            }
            ControllerType::CartesianComplianceController => {
                "cartesian_compliance_controller/CartesianComplianceController"
            }
        }
    }
    /// Takes `target_frame` (motion, compliance).
    pub fn tracks_pose(self) -> bool {
        self != ControllerType::CartesianForceController
    }
    /// Closes the wrench loop (force, compliance): needs the F/T sensor, takes `target_wrench`.
    pub fn uses_wrench(self) -> bool {
        self != ControllerType::CartesianMotionController
    }
}

/// The older `law:` spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Law {
    /// The force controller, or the compliance controller where a stiffness is non-zero.
    Admittance,
    /// The motion controller.
    Position,
}

fn d_initial() -> String {
    "active".into()
}
fn d_site() -> String {
    "tool_site".into()
}
fn d_ft() -> String {
    "ft".into()
}
fn d_rate() -> f64 {
    100.0
}
fn d_wrench() -> [f64; 6] {
    [0.0, 0.0, -10.0, 0.0, 0.0, 0.0]
}
fn d_mass() -> [f64; 6] {
    [1.0, 1.0, 1.0, 0.6, 0.6, 0.6]
}
fn d_damping() -> [f64; 6] {
    [80.0, 80.0, 80.0, 160.0, 160.0, 160.0]
}
fn d_axes() -> [u8; 6] {
    [1; 6]
}
fn d_kp() -> [f64; 6] {
    [2.0; 6]
}
fn d_lin() -> f64 {
    0.1
}
fn d_ang() -> f64 {
    1.0
}
fn d_ik() -> f64 {
    0.01
}

/// Config of `cartesian_admittance` (a component of the entry that spawns the arm it drives).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CartesianAdmittanceConfig {
    /// `cartesian_motion_controller` | `cartesian_force_controller` |
    /// `cartesian_compliance_controller` (default; see `law`).
    #[serde(default)]
    pub controller_type: Option<ControllerType>,
    /// Controller name: its topics sit under it and the controller_manager lists it so.
    /// Default: the controller type's name.
    #[serde(default)]
    pub controller_name: String,
    /// `active` (default), `inactive` (as after `spawner --inactive`) or `unloaded` (left to
    /// `spawner`).
    #[serde(default = "d_initial")]
    pub initial_state: String,
    /// Site whose pose is controlled (the model's own name; the arm's prefix is applied).
    /// Default `tool_site`.
    #[serde(default = "d_site")]
    pub site: String,
    /// Label of the force_torque sensor (blackboard `ft:<label>`); required by the force and
    /// compliance types, unused by motion. Default `ft`.
    #[serde(default = "d_ft")]
    pub ft: String,
    /// Control rate (Hz), snapped to the physics grid: the loop runs at this. Default 100.
    #[serde(default = "d_rate")]
    pub rate_hz: f64,
    /// w_d [fx, fy, fz, tx, ty, tz] (N, N·m, world frame): what the TOOL applies, so −10 on z
    /// presses down. Stands until a `target_wrench` command arrives. Default [0, 0, −10, 0, 0, 0].
    #[serde(default = "d_wrench")]
    pub target_wrench: [f64; 6],
    /// M, diagonal (kg, kg·m²). Default [1, 1, 1, 0.6, 0.6, 0.6].
    #[serde(default = "d_mass")]
    pub mass: [f64; 6],
    /// D, diagonal (N·s/m, N·m·s/rad). Default [80, 80, 80, 160, 160, 160].
    #[serde(default = "d_damping")]
    pub damping: [f64; 6],
    /// C, diagonal (N/m, N·m/rad); a zero axis is pure force control. Default all 0.
    #[serde(default)]
    pub stiffness: [f64; 6],
    /// Per-axis enable mask (1 controlled, 0 held). Default all 1.
    #[serde(default = "d_axes")]
    pub axes: [u8; 6],
    /// Motion type only: proportional gain on the pose error (1/s). Default 2.
    #[serde(default = "d_kp")]
    pub kp: [f64; 6],
    /// m/s: clamp on the commanded linear twist's magnitude. Default 0.1.
    #[serde(default = "d_lin")]
    pub max_linear_vel: f64,
    /// rad/s: clamp on the commanded angular twist's magnitude. Default 1.0.
    #[serde(default = "d_ang")]
    pub max_angular_vel: f64,
    /// Damped-least-squares λ. Default 0.01.
    #[serde(default = "d_ik")]
    pub ik_damping: f64,
    /// Older spelling: `position` (the motion controller) or `admittance` (the force
    /// controller, or the compliance controller where a stiffness is non-zero).
    #[serde(default)]
    pub law: Option<Law>,
    /// Transport scope. Default: the arm's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Topic per endpoint role (`target_frame`, `target_wrench`, `current_pose`).
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

impl CartesianAdmittanceConfig {
    /// The controller type, from `controller_type` or derived from `law`.
    pub fn kind(&self) -> ControllerType {
        match (self.controller_type, self.law) {
            (Some(t), _) => t,
            (None, Some(Law::Position)) => ControllerType::CartesianMotionController,
            (None, Some(Law::Admittance)) if self.stiffness.iter().any(|c| *c != 0.0) => {
                ControllerType::CartesianComplianceController
            }
            (None, Some(Law::Admittance)) => ControllerType::CartesianForceController,
            (None, None) => ControllerType::CartesianComplianceController,
        }
    }
    /// The controller name.
    pub fn name(&self) -> String {
        if self.controller_name.trim().is_empty() {
            self.kind().key().to_string()
        } else {
            self.controller_name.trim().to_string()
        }
    }
}

impl ValidateConfig for CartesianAdmittanceConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if let (Some(t), Some(_)) = (self.controller_type, self.law) {
            e.push(ConfigError::new(
                "law",
                format!(
                    "is the older spelling of controller_type, which is set too (`{}`); give only controller_type",
                    t.key()
                ),
            ));
        }
        if !matches!(self.initial_state.as_str(), "active" | "inactive" | "unloaded") {
            e.push(ConfigError::new(
                "initial_state",
                format!("`{}`: one of active, inactive, unloaded", self.initial_state),
            ));
        }
        if self.site.trim().is_empty() {
            e.push(ConfigError::new("site", "is empty: name the site whose pose is controlled"));
        }
        let kind = self.kind();
        if kind.uses_wrench() && self.ft.trim().is_empty() {
            e.push(ConfigError::new(
                "ft",
                format!(
                    "is empty: {} closes a wrench loop and needs a force_torque sensor's label",
                    kind.key()
                ),
            ));
        }
        if kind == ControllerType::CartesianForceController
            && self.stiffness.iter().any(|c| *c != 0.0)
        {
            e.push(ConfigError::new(
                "stiffness",
                "cartesian_force_controller has no stiffness (it is the wrench loop alone); use cartesian_compliance_controller for a stiffness",
            ));
        }
        e.extend(check_rate("rate_hz", self.rate_hz));
        let vec_check = |e: &mut Vec<ConfigError>, key: &str, v: &[f64; 6], strict: bool| {
            for (i, x) in v.iter().enumerate() {
                let ok = x.is_finite() && (*x > 0.0 || (!strict && *x >= 0.0));
                if !ok {
                    e.push(ConfigError::new(
                        format!("{key}[{i}]"),
                        format!(
                            "must be a finite number {} 0, got {}",
                            if strict { ">" } else { ">=" },
                            crate::error::num(*x)
                        ),
                    ));
                }
            }
        };
        vec_check(&mut e, "mass", &self.mass, true);
        vec_check(&mut e, "damping", &self.damping, false);
        vec_check(&mut e, "stiffness", &self.stiffness, false);
        vec_check(&mut e, "kp", &self.kp, false);
        for (i, x) in self.target_wrench.iter().enumerate() {
            if !x.is_finite() {
                e.push(ConfigError::new(format!("target_wrench[{i}]"), "must be finite"));
            }
        }
        for (i, a) in self.axes.iter().enumerate() {
            if *a > 1 {
                e.push(ConfigError::new(
                    format!("axes[{i}]"),
                    format!("must be 0 (held) or 1 (controlled), got {a}"),
                ));
            }
        }
        for (k, v) in
            [("max_linear_vel", self.max_linear_vel), ("max_angular_vel", self.max_angular_vel)]
        {
            if !(v.is_finite() && v > 0.0) {
                e.push(ConfigError::new(
                    k,
                    format!("must be a finite number > 0, got {}", crate::error::num(v)),
                ));
            }
        }
        if !(self.ik_damping.is_finite() && self.ik_damping >= 0.0) {
            e.push(ConfigError::new(
                "ik_damping",
                format!("must be a finite number >= 0, got {}", crate::error::num(self.ik_damping)),
            ));
        }
        e.extend(common::check_topics(&self.topics, &ROLES));
        e
    }
}
