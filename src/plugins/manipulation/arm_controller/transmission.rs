//! How an actuator's ctrl maps onto the joint it drives (joint, tendon and servo transmissions),
//! derived from the compiled model.

use super::*;

pub(super) fn tendon_on(model: &MjModel, t: usize, roots: &[usize]) -> bool {
    first_tendon_joint(model, t)
        .is_some_and(|j| common::in_entity(model, model.jnt_bodyid()[j] as usize, roots))
}

pub(super) fn first_tendon_joint(model: &MjModel, t: usize) -> Option<usize> {
    let adr = model.tendon_adr()[t] as usize;
    let num = model.tendon_num()[t] as usize;
    (adr..adr + num)
        .find(|&w| model.wrap_type()[w] == mjtWrap::mjWRAP_JOINT)
        .map(|w| model.wrap_objid()[w] as usize)
}

/// Joint force on `joint` per unit actuator force, when the transmission makes it constant: a joint
/// transmission on that joint (gear), or a fixed tendon (gear × the joint's coefficient).
/// The position `joint` settles at when the gripper actuator `act` (a position-like servo: fixed
/// gain, affine bias with a stiffness term) holds `ctrl`: the actuator length where
/// `gain·ctrl + b0 + b1·length = 0`, divided by the transmission's moment summed over the joints
/// a fixed tendon couples (they move together: a parallel gripper's jaws, a linkage's drivers).
/// `None` for any other actuator or transmission.
pub(super) fn servo_joint_position(
    model: &MjModel,
    act: usize,
    joint: usize,
    ctrl: f64,
) -> Option<f64> {
    use mujoco_rs::mujoco_c::{mjtBias, mjtGain};
    if model.actuator_gaintype()[act] != mjtGain::mjGAIN_FIXED
        || model.actuator_biastype()[act] != mjtBias::mjBIAS_AFFINE
    {
        return None;
    }
    let g = model.actuator_gainprm()[act];
    let b = model.actuator_biasprm()[act];
    if b[1] == 0.0 || g[0] == 0.0 {
        return None;
    }
    let length = -(g[0] * ctrl + b[0]) / b[1];
    let gear = model.actuator_gear()[model.actuator_outadr()[act] as usize][0];
    let t = model.actuator_trntype()[act];
    let per_unit = if is_joint_trn(t) {
        (model.actuator_trnid()[act][0] as usize == joint).then_some(gear)?
    } else if t == mjtTrn::mjTRN_TENDON {
        let ten = model.actuator_trnid()[act][0] as usize;
        let adr = model.tendon_adr()[ten] as usize;
        let num = model.tendon_num()[ten] as usize;
        if (adr..adr + num).any(|w| model.wrap_type()[w] != mjtWrap::mjWRAP_JOINT)
            || !(adr..adr + num).any(|w| model.wrap_objid()[w] as usize == joint)
        {
            return None;
        }
        gear * (adr..adr + num).map(|w| model.wrap_prm()[w]).sum::<f64>()
    } else {
        return None;
    };
    (per_unit != 0.0).then(|| length / per_unit)
}

pub(super) fn transmission_moment(model: &MjModel, act: usize, joint: usize) -> Option<f64> {
    let gear = model.actuator_gear()[model.actuator_outadr()[act] as usize][0];
    let t = model.actuator_trntype()[act];
    if is_joint_trn(t) {
        return (model.actuator_trnid()[act][0] as usize == joint).then_some(gear);
    }
    if t == mjtTrn::mjTRN_TENDON {
        let ten = model.actuator_trnid()[act][0] as usize;
        let adr = model.tendon_adr()[ten] as usize;
        let num = model.tendon_num()[ten] as usize;
        if (adr..adr + num).any(|w| model.wrap_type()[w] != mjtWrap::mjWRAP_JOINT) {
            return None; // spatial tendon: the moment varies with the pose
        }
        return (adr..adr + num)
            .find(|&w| model.wrap_objid()[w] as usize == joint)
            .map(|w| gear * model.wrap_prm()[w]);
    }
    None
}
