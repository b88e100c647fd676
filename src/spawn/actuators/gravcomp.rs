//! Gravity compensation of the bodies a position or impedance joint holds up (`apply_gravcomp`),
//! applied after an end effector is grafted on.

use mujoco_rs::mujoco_c::{mjtLimited, mjtTrn};
use mujoco_rs::prelude::*;

use super::table::*;

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
