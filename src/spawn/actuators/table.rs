//! The resolved table: every actuator of a spawned model, its final law and gains, and whether
//! each value came from the model or the world (`describe` reads it off a spec).

use mujoco_rs::mujoco_c::{mjtBias, mjtGain, mjtLimited, mjtTrn};
use mujoco_rs::prelude::*;

use super::block::*;

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

pub(super) fn limited(flag: mjtLimited, range: &[f64; 2]) -> bool {
    flag == mjtLimited::mjLIMITED_TRUE
        || (flag == mjtLimited::mjLIMITED_AUTO && range[0] < range[1])
}

/// Classify an actuator's law from its parameters (`gainprm`, `biasprm`).
pub(super) fn classify(gaintype: mjtGain, biastype: mjtBias, gain: &[f64], bias: &[f64]) -> Law {
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

pub(super) fn target_of(a: &mujoco_rs::wrappers::mj_editing::MjsActuator) -> String {
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
