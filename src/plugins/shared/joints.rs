//! The joints a `joint_states` message carries and the payload built from them.

use mujoco_rs::prelude::*;

use crate::context::{Entity, SimContext};

use super::unprefixed;

/// One hinge or slide joint a joint_states message carries: its id, addresses and published name.
#[derive(Debug, Clone, PartialEq)]
pub struct JointRef {
    /// Joint id.
    pub id: usize,
    /// Name in the message: the model's own, without the spawn prefix.
    pub name: String,
    /// qpos address.
    pub qpos: usize,
    /// qvel (dof) address.
    pub dof: usize,
}

impl JointRef {
    /// Describe joint `id` of `entity`.
    pub fn new(model: &MjModel, entity: &Entity, id: usize) -> JointRef {
        let name = model
            .id_to_name(MjtObjBase::mjOBJ_JOINT, id)
            .map(|s| unprefixed(s, &entity.prefix).to_string())
            .unwrap_or_default();
        JointRef {
            id,
            name,
            qpos: model.jnt_qposadr()[id] as usize,
            dof: model.jnt_dofadr()[id] as usize,
        }
    }
}

/// A `JointState` payload of `joints` at the current sim time: positions (rad | m), velocities
/// (rad/s | m/s) and the actuator effort on each dof (`qfrc_actuator`, N·m | N).
pub fn joint_state(ctx: &SimContext, joints: &[JointRef]) -> crate::context::payload::JointState {
    let d = ctx.data();
    let (qpos, qvel, qfrc) = (d.qpos(), d.qvel(), d.qfrc_actuator());
    crate::context::payload::JointState {
        stamp: ctx.sim_time(),
        name: joints.iter().map(|j| j.name.clone()).collect(),
        position: joints.iter().map(|j| qpos[j.qpos]).collect(),
        velocity: joints.iter().map(|j| qvel[j.dof]).collect(),
        effort: joints.iter().map(|j| qfrc[j.dof]).collect(),
    }
}
