//! `rail:` — a linear axis under the arm: a carriage body on a slide joint with a position servo
//! (declared before the arm's joints and actuators, so `[rail, arm joints...]` is model order),
//! a visual beam spanning the travel, and the arm attached to the carriage.

use mujoco_rs::mujoco_c::{mjtBias, mjtGain, mjtLimited, mjtTrn};
use mujoco_rs::prelude::*;

use super::{RailConfig, SpawnArmConfig};
use crate::math::{arr3, compose, quat, quat_between, vec3, wxyz, Vector3};
use crate::spawn::model::LoadedModel;
use crate::spawn::Pose;

/// Add the rail of `cfg` under `parent_body` (None: the world) and attach the arm `m` to its
/// carriage; returns the entity body (the carriage) and its world pose at `rail.home`.
pub(super) fn mount(
    spec: &mut MjSpec,
    parent_body: Option<&str>,
    parent_pose: &Pose,
    mount_q: [f64; 4],
    cfg: &SpawnArmConfig,
    r: &RailConfig,
    m: &mut LoadedModel,
) -> Result<(String, Pose), String> {
    let prefix = cfg.prefix.as_str();
    let axis = vec3(&r.axis).normalize();
    let carriage = format!("{prefix}rail_carriage");
    let joint = format!("{prefix}{}", r.joint);
    let parent: &mut mujoco_rs::wrappers::mj_editing::MjsBody = match parent_body {
        None => spec.world_body_mut(),
        Some(p) => spec.body_mut(p).expect("checked"),
    };
    // The beam spanning the travel: visual only, on the mount's parent.
    let mid = (r.range[0] + r.range[1]) * 0.5;
    let half = (r.range[1] - r.range[0]) * 0.5 + 0.1;
    let axis_w = quat(&mount_q) * axis;
    let beam_c = arr3(&(vec3(&cfg.pos) + axis_w * mid));
    let beam_q = wxyz(&quat_between(&Vector3::x(), &axis_w));
    let bg = parent
        .add_geom()
        .with_name(&format!("{prefix}rail_beam"))
        .with_type(MjtGeomBase::mjGEOM_BOX)
        .with_size([half, 0.04, 0.02])
        .with_pos(beam_c)
        .with_quat(beam_q)
        .with_rgba([0.5, 0.5, 0.55, 1.0]);
    bg.set_contype(0);
    bg.set_conaffinity(0);
    bg.set_mass(0.0);
    let body = parent.add_body().with_name(&carriage).with_pos(cfg.pos).with_quat(mount_q);
    body.set_gravcomp(1.0);
    let j = body
        .add_joint()
        .with_name(&joint)
        .with_type(MjtJoint::mjJNT_SLIDE)
        .with_axis(arr3(&axis))
        .with_range(r.range);
    j.set_limited(mjtLimited::mjLIMITED_TRUE);
    j.damping_mut()[0] = r.damping;
    let g = body
        .add_geom()
        .with_name(&format!("{prefix}rail_carriage"))
        .with_type(MjtGeomBase::mjGEOM_BOX)
        .with_size([0.12, 0.12, 0.02])
        .with_pos([0.0, 0.0, -0.02])
        .with_rgba([0.35, 0.35, 0.4, 1.0]);
    g.set_contype(0);
    g.set_conaffinity(0);
    g.set_mass(r.mass);
    let a = spec
        .add_actuator()
        .with_name(&format!("{prefix}rail_servo"))
        .with_trntype(mjtTrn::mjTRN_JOINT);
    a.set_target(&joint);
    a.set_gaintype(mjtGain::mjGAIN_FIXED);
    a.set_biastype(mjtBias::mjBIAS_AFFINE);
    a.gainprm_mut()[0] = r.kp;
    {
        let bp = a.biasprm_mut();
        bp[1] = -r.kp;
        bp[2] = 0.0;
    }
    *a.ctrlrange_mut() = r.range;
    a.set_ctrllimited(mjtLimited::mjLIMITED_TRUE);
    crate::spawn::mjcf::attach(
        spec,
        Some(&carriage),
        &mut m.spec,
        [0.0; 3],
        [1.0, 0.0, 0.0, 0.0],
        prefix,
    )
    .map_err(|e| format!("model `{}`: {e}", cfg.model))?;
    let world_pose = compose(
        parent_pose,
        &Pose { pos: arr3(&(vec3(&cfg.pos) + axis_w * r.home)), quat: mount_q },
    );
    Ok((carriage, compose(&world_pose, &m.root_pose)))
}
