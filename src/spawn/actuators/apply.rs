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
    check_each_keys(spec, block, &actuators, key, model)?;
    let mut rows = describe(spec);
    if block.is_empty() {
        return Ok(rows);
    }
    for (i, (name, trn, _)) in actuators.iter().enumerate() {
        let stated = Stated::of(block, key, name);
        if stated.is_empty() {
            continue;
        }
        let a = spec.actuator_iter_mut().nth(i).expect("actuator index");
        rows[i] = restate(a, &stated, *trn, model)?;
    }
    Ok(rows)
}

/// `each:` is keyed by actuator names: a key naming a joint or tendon is refused naming the
/// actuator that drives it, any other unknown key listing the actuators.
fn check_each_keys(
    spec: &MjSpec,
    block: &ActuatorsBlock,
    actuators: &[(String, mjtTrn, String)],
    key: &str,
    model: &str,
) -> Result<(), String> {
    let names: Vec<&str> = actuators.iter().map(|(n, _, _)| n.as_str()).collect();
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
    Ok(())
}

/// What the block states for one actuator: its own `each:` entry over the shared keys.
struct Stated<'b> {
    key: &'b str,
    name: &'b str,
    own: Gains,
    shared: &'b Gains,
    /// The actuator has an `each:` entry.
    stated_here: bool,
    control: Option<Control>,
    /// The entry keeps the shared law, so the shared gains apply to it.
    shared_applies: bool,
    effort_limit: Option<f64>,
    ctrlrange: Option<[f64; 2]>,
}

impl<'b> Stated<'b> {
    fn of(block: &'b ActuatorsBlock, key: &'b str, name: &'b str) -> Self {
        let entry = block.each.iter().find(|(n, _)| n == name);
        let own = entry.map(|(_, g)| g.clone()).unwrap_or_default();
        let shared = &block.shared;
        Stated {
            key,
            name,
            stated_here: entry.is_some(),
            control: own.control.or(shared.control),
            shared_applies: own.control.is_none() || own.control == shared.control,
            effort_limit: own.effort_limit.or(shared.effort_limit),
            ctrlrange: own.ctrlrange.or(shared.ctrlrange),
            own,
            shared,
        }
    }

    /// The key path of `k` as written: under `each.<name>` when the entry states it.
    fn here(&self, k: &str) -> String {
        if self.stated_here && own_has(&self.own, k) {
            format!("{}.each.{}.{k}", self.key, self.name)
        } else {
            format!("{}.{k}", self.key)
        }
    }

    /// The gain `k` in force: the entry's own, else the shared one when the entry keeps the
    /// shared law.
    fn pick(&self, k: &str) -> Option<f64> {
        self.own.gain(k).or_else(|| if self.shared_applies { self.shared.gain(k) } else { None })
    }

    /// Nothing is stated for this actuator (it keeps what the model says).
    fn is_empty(&self) -> bool {
        self.control.is_none()
            && GAIN_KEYS.iter().all(|k| self.pick(k).is_none())
            && self.effort_limit.is_none()
            && self.ctrlrange.is_none()
    }
}

const GAIN_KEYS: [&str; 4] = ["p", "d", "stiffness", "damping"];

type Actuator = mujoco_rs::wrappers::mj_editing::MjsActuator;

/// Restate one actuator as `st` says and return its row.
fn restate(
    a: &mut Actuator,
    st: &Stated<'_>,
    trn: mjtTrn,
    model: &str,
) -> Result<ActuatorRow, String> {
    let own_law = classify(a.gaintype(), a.biastype(), a.gainprm(), a.biasprm());
    let law = choose_law(st, own_law, model)?;
    check_gains_read(st, own_law)?;
    if law == Control::Impedance
        && !matches!(trn, mjtTrn::mjTRN_JOINT | mjtTrn::mjTRN_JOINTINPARENT)
    {
        return Err(format!(
            "{}: actuator `{}` drives {} — `impedance` states a joint's stiffness, which a {} has not; give it `position` (or leave it out of the block)",
            st.here("control"),
            st.name,
            target_of(a),
            target_of(a).split(' ').next().unwrap_or("transmission")
        ));
    }
    let (own_p, own_d) = (a.gainprm()[0], a.biasprm()[2]);
    let mut gains = GainsInForce { st, own_law, law, gains: Vec::new() };
    let pos_model = matches!(own_law, Law::Control(c) if c.holds_pose());
    let (gain, bias, biastype) = match law {
        Control::Position | Control::Impedance => {
            gains.holding(pos_model.then_some(own_p), pos_model.then_some(-own_d))?
        }
        Control::Velocity => {
            gains.velocity((own_law == Law::Control(Control::Velocity)).then_some(own_p))?
        }
        Control::Effort => (1.0, [0.0; 3], mjtBias::mjBIAS_NONE),
    };
    let gains = gains.gains;
    let (ctrl, ctrl_origin) = ctrl_range(a, st, own_law, law)?;
    let (force, force_origin) = match st.effort_limit {
        Some(e) => (Some([-e, e]), Origin::World),
        None => (limited(a.forcelimited(), a.forcerange()).then(|| *a.forcerange()), Origin::Model),
    };
    // The model's own dampratio is kept when it already holds a pose and no damping is stated.
    let keep_dampratio = law.holds_pose()
        && pos_model
        && own_d > 0.0
        && gains.iter().any(|(k, _, o)| (*k == "d" || *k == "damping") && *o == Origin::Model);
    write_law(a, gain, bias, biastype, keep_dampratio.then_some(own_d));
    if let Some(r) = st.ctrlrange {
        *a.ctrlrange_mut() = r;
        a.set_ctrllimited(mjtLimited::mjLIMITED_TRUE);
    }
    if let Some(e) = st.effort_limit {
        *a.forcerange_mut() = [-e, e];
        a.set_forcelimited(mjtLimited::mjLIMITED_TRUE);
    }
    Ok(ActuatorRow {
        actuator: st.name.to_string(),
        target: target_of(a),
        law: Law::Control(law),
        law_origin: if st.control.is_some() { Origin::World } else { Origin::Model },
        gains,
        forcerange: force,
        forcerange_origin: force_origin,
        ctrlrange: ctrl,
        ctrlrange_origin: ctrl_origin,
        command_map: None,
    })
}

/// The law the actuator runs: the stated one, else the model's own; a custom MuJoCo actuator
/// keeps its law only when no gain is stated for it (effort_limit / ctrlrange alone).
fn choose_law(st: &Stated<'_>, own_law: Law, model: &str) -> Result<Control, String> {
    match (st.control, own_law) {
        (Some(c), _) => Ok(c),
        (None, Law::Control(c)) => Ok(c),
        (None, Law::Other) => {
            let stated: Vec<&str> =
                GAIN_KEYS.into_iter().filter(|k| st.pick(k).is_some()).collect();
            if !stated.is_empty() {
                return Err(format!(
                    "{}: actuator `{}` of model `{model}` runs none of the four laws (it is a custom MuJoCo actuator), so its gains cannot be restated; state `control:` for it",
                    st.here(stated[0]),
                    st.name
                ));
            }
            Ok(Control::Effort)
        }
    }
}

/// Without a stated `control:`, a gain the model's own law does not read is refused.
fn check_gains_read(st: &Stated<'_>, own_law: Law) -> Result<(), String> {
    let (None, Law::Control(c)) = (st.control, own_law) else { return Ok(()) };
    for k in GAIN_KEYS {
        if st.pick(k).is_some() && !c.gains().contains(&k) {
            return Err(format!(
                "{}: actuator `{}` runs the model's own `{}` law, which does not read `{k}`; it reads {} (or state `control:`)",
                st.here(k),
                st.name,
                c.as_str(),
                if c.gains().is_empty() { "no gain".into() } else { c.gains().join(", ") }
            ));
        }
    }
    Ok(())
}

/// The gains a law reads, each with where its value came from.
struct GainsInForce<'s, 'b> {
    st: &'s Stated<'b>,
    own_law: Law,
    law: Control,
    gains: Vec<(&'static str, f64, Origin)>,
}

impl GainsInForce<'_, '_> {
    /// Gain `k`: stated, else the model's value (when its law has one), else refused when
    /// `required`, else 0.
    fn resolve(
        &mut self,
        k: &'static str,
        model_value: Option<f64>,
        required: bool,
    ) -> Result<f64, String> {
        if let Some(v) = self.st.pick(k) {
            self.gains.push((k, v, Origin::World));
            return Ok(v);
        }
        if let Some(v) = model_value {
            self.gains.push((k, v, Origin::Model));
            return Ok(v);
        }
        if required {
            return Err(format!(
                "{}.{k}: actuator `{}` changes law from the model's own `{}` to `{}`, and the model has no `{k}` to keep; state `{k}:`",
                if self.st.stated_here {
                    format!("{}.each.{}", self.st.key, self.st.name)
                } else {
                    self.st.key.to_string()
                },
                self.st.name,
                self.own_law.as_str(),
                self.law.as_str()
            ));
        }
        self.gains.push((k, 0.0, Origin::Default));
        Ok(0.0)
    }

    /// `position` (p, d) or `impedance` (stiffness, damping): gain p, bias [0, -p, -d]. A model
    /// `dampratio` (biasprm[2] > 0) is kept as is when no damping is stated.
    fn holding(
        &mut self,
        model_p: Option<f64>,
        model_d: Option<f64>,
    ) -> Result<(f64, [f64; 3], mjtBias), String> {
        let (kp, kd) =
            if self.law == Control::Position { ("p", "d") } else { ("stiffness", "damping") };
        let p = self.resolve(kp, model_p, true)?;
        let d = self.resolve(kd, model_d, false)?;
        Ok((p, [0.0, -p, -d], mjtBias::mjBIAS_AFFINE))
    }

    /// `velocity` (d): gain d, bias [0, 0, -d].
    fn velocity(&mut self, model_d: Option<f64>) -> Result<(f64, [f64; 3], mjtBias), String> {
        let d = self.resolve("d", model_d, true)?;
        Ok((d, [0.0, 0.0, -d], mjtBias::mjBIAS_AFFINE))
    }
}

/// The ctrlrange in force: stated, else the model's; refused when the command's unit changes on
/// a control-limited actuator and no new range is stated.
fn ctrl_range(
    a: &Actuator,
    st: &Stated<'_>,
    own_law: Law,
    law: Control,
) -> Result<(Option<[f64; 2]>, Origin), String> {
    if let Some(r) = st.ctrlrange {
        return Ok((Some(r), Origin::World));
    }
    let own_unit = match own_law {
        Law::Control(c) => Some(c.unit()),
        Law::Other => None,
    };
    let was_limited = limited(a.ctrllimited(), a.ctrlrange());
    if was_limited && own_unit.is_some_and(|u| u != law.unit()) {
        return Err(format!(
            "{}: actuator `{}` changes its command from {} to {}, so the model's ctrlrange {:?} no longer means anything; state `ctrlrange: [lo, hi]` in the new unit",
            if st.stated_here && st.own.control.is_some() {
                format!("{}.each.{}.ctrlrange", st.key, st.name)
            } else {
                format!("{}.ctrlrange", st.key)
            },
            st.name,
            own_unit.expect("checked").name(),
            law.unit().name(),
            a.ctrlrange()
        ));
    }
    Ok((was_limited.then(|| *a.ctrlrange()), Origin::Model))
}

/// Write a law: fixed gain `gain`, bias `bias` of `biastype` (every other parameter zeroed),
/// with the model's dampratio `keep_dampratio` kept in biasprm[2] when given.
fn write_law(
    a: &mut Actuator,
    gain: f64,
    bias: [f64; 3],
    biastype: mjtBias,
    keep_dampratio: Option<f64>,
) {
    a.set_gaintype(mjtGain::mjGAIN_FIXED);
    a.set_biastype(biastype);
    let g = a.gainprm_mut();
    g.iter_mut().for_each(|x| *x = 0.0);
    g[0] = gain;
    let b = a.biasprm_mut();
    b.iter_mut().for_each(|x| *x = 0.0);
    b[..3].copy_from_slice(&bias);
    if let Some(d) = keep_dampratio {
        b[2] = d;
    }
}

pub(super) fn own_has(g: &Gains, k: &str) -> bool {
    match k {
        "control" => g.control.is_some(),
        "effort_limit" => g.effort_limit.is_some(),
        "ctrlrange" => g.ctrlrange.is_some(),
        other => g.gain(other).is_some(),
    }
}
