//! The rewrite: the block applied to a model's own spec before it is attached (`apply`), creating
//! the `add:` actuators first.

use mujoco_rs::mujoco_c::{mjtBias, mjtGain, mjtLimited, mjtTrn};
use mujoco_rs::prelude::*;

use super::block::*;
use super::table::*;

/// Create an actuator for each joint in `joints` (the block's `add:`): named as the joint, a joint
/// transmission, gear 1, starting as a bare effort drive that the rewrite then gives the block's
/// law and gains. Refused: a joint the model lacks (listing its hinges and slides), a joint an
/// actuator already drives (naming it: restate that one under `each:`), a free or ball joint, a
/// name an actuator already has.
pub(super) fn add_actuators(
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

pub(super) fn own_has(g: &Gains, k: &str) -> bool {
    match k {
        "control" => g.control.is_some(),
        "effort_limit" => g.effort_limit.is_some(),
        "ctrlrange" => g.ctrlrange.is_some(),
        other => g.gain(other).is_some(),
    }
}
