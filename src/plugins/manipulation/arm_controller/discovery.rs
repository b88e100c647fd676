//! Discovery at configure: which joints, actuators and gripper an arm controller commands, read
//! from the compiled model and the entity (by `joints:` / `actuators:`, else every arm actuator).

use super::*;

impl ArmController {
    /// Resolve the commanded joints, their actuators and the gripper on `entity`.
    pub(super) fn resolve(&mut self, ctx: &mut SimContext, entity: &Entity) -> Result<(), String> {
        let cfg: &ArmControllerConfig = &self.cfg;
        let model = ctx.model();
        let roots = common::entity_roots(model, entity)?;
        let nu = model.ffi().nu as usize;
        let prefix = &entity.prefix;
        let on_entity = |a: usize| -> bool {
            if prefix.is_empty() {
                match common::actuator_joint(model, a) {
                    Some(j) => common::in_entity(model, model.jnt_bodyid()[j] as usize, &roots),
                    None => {
                        model.actuator_trntype()[a] == mjtTrn::mjTRN_TENDON
                            && tendon_on(model, model.actuator_trnid()[a][0] as usize, &roots)
                    }
                }
            } else {
                model
                    .id_to_name(MjtObjBase::mjOBJ_ACTUATOR, a)
                    .is_some_and(|n| n.starts_with(prefix.as_str()))
            }
        };
        // Gripper.
        let grip_act = match (&cfg.gripper_actuator, &cfg.joints) {
            (Some(g), _) => Some(common::resolve_actuator(model, entity, "gripper_actuator", g)?),
            (None, Some(_)) => None,
            (None, None) => {
                let cands: Vec<usize> = (0..nu)
                    .filter(|&a| on_entity(a) && !is_joint_trn(model.actuator_trntype()[a]))
                    .collect();
                match cands.len() {
                    0 => None,
                    1 => Some(cands[0]),
                    _ => {
                        return Err(format!(
                            "gripper_actuator: entity `{}` has several non-joint actuators ([{}]); name the gripper's",
                            entity.name,
                            cands.iter().map(|&a| common::unprefixed(model.id_to_name(MjtObjBase::mjOBJ_ACTUATOR, a).unwrap_or("?"), prefix).to_string()).collect::<Vec<_>>().join(", ")
                        ))
                    }
                }
            }
        };
        // Arm joints and their actuators.
        let mut pairs: Vec<(usize, usize)> = Vec::new(); // (joint, actuator)
        match &cfg.joints {
            Some(names) => {
                for (i, n) in names.iter().enumerate() {
                    let key = format!("joints[{i}]");
                    let j = common::resolve_joint(model, entity, &key, n)?;
                    let a = (0..nu).find(|&a| common::actuator_joint(model, a) == Some(j) && Some(a) != grip_act).ok_or_else(|| {
                        format!("{key}: no actuator drives joint `{n}`, so this controller cannot hold it; list only actuated joints")
                    })?;
                    pairs.push((j, a));
                }
            }
            None => {
                for a in 0..nu {
                    if Some(a) == grip_act || !on_entity(a) {
                        continue;
                    }
                    if let Some(j) = common::actuator_joint(model, a) {
                        if matches!(
                            model.jnt_type()[j],
                            mjtJoint::mjJNT_HINGE | mjtJoint::mjJNT_SLIDE
                        ) {
                            pairs.push((j, a));
                        }
                    }
                }
                pairs.sort_by_key(|(j, _)| *j);
                if pairs.is_empty() {
                    return Err(format!("entity `{}` has no joint actuator sharing its prefix `{prefix}`; name the `joints:`", entity.name));
                }
            }
        }
        for &(j, a) in &pairs {
            if !common::is_position_servo(model, a) {
                let an = common::unprefixed(
                    model.id_to_name(MjtObjBase::mjOBJ_ACTUATOR, a).unwrap_or("?"),
                    prefix,
                )
                .to_string();
                let jn = common::unprefixed(
                    model.id_to_name(MjtObjBase::mjOBJ_JOINT, j).unwrap_or("?"),
                    prefix,
                )
                .to_string();
                return Err(format!(
                    "actuator `{an}` (joint `{jn}`) is not a position servo, so the position targets this controller writes would not mean positions there; \
                     {} (an arm under `control: effort` or `velocity` is commanded by another controller)",
                    if cfg.joints.is_none() { "name this arm's `joints:` so the prefix scan does not claim it" } else { "drop it from `joints:`" }
                ));
            }
        }
        // One writer per actuator.
        let mut acts: Vec<usize> = pairs.iter().map(|p| p.1).collect();
        if let Some(g) = grip_act {
            acts.push(g);
        }
        let wk = writers_key(&entity.name);
        let mut writers: BTreeMap<usize, String> =
            ctx.blackboard.get::<BTreeMap<usize, String>>(&wk).cloned().unwrap_or_default();
        for a in &acts {
            if let Some(w) = writers.get(a) {
                let an = common::unprefixed(
                    ctx.model().id_to_name(MjtObjBase::mjOBJ_ACTUATOR, *a).unwrap_or("?"),
                    prefix,
                )
                .to_string();
                return Err(format!(
                    "actuator `{an}` of `{}` is already written by `{w}`; `{}` would be a second command source for it — one writer per arm: keep one controller (give yours the manifest's label to override it), or give them disjoint `joints:`",
                    entity.name, self.address
                ));
            }
        }
        for a in &acts {
            writers.insert(*a, self.address.clone());
        }
        ctx.blackboard.set(wk, writers);
        let model = ctx.model();
        self.joints = pairs
            .iter()
            .map(|&(j, a)| {
                let n = common::unprefixed(
                    model.id_to_name(MjtObjBase::mjOBJ_JOINT, j).unwrap_or(""),
                    prefix,
                )
                .to_string();
                Joint {
                    name: format!("{}{n}", cfg.joint_prefix),
                    qpos: model.jnt_qposadr()[j] as usize,
                    dof: model.jnt_dofadr()[j] as usize,
                    ctrl: model.actuator_ctrladr()[a] as usize,
                    range: model.jnt_limited()[j].then(|| model.jnt_range()[j]),
                }
            })
            .collect();
        // Gripper details.
        if let Some(g) = grip_act {
            let gname = common::unprefixed(
                model.id_to_name(MjtObjBase::mjOBJ_ACTUATOR, g).unwrap_or("?"),
                prefix,
            )
            .to_string();
            let ctrl = model.actuator_ctrladr()[g] as usize;
            if !model.actuator_ctrllimited()[ctrl] {
                return Err(format!("gripper_actuator: `{gname}` has no ctrlrange, so there is nothing to map gripper_open/gripper_close onto; give the actuator a ctrlrange"));
            }
            let [lo, hi] = model.actuator_ctrlrange()[ctrl];
            let jid = match &cfg.gripper_joint {
                Some(n) => common::resolve_joint(model, entity, "gripper_joint", n)?,
                None => match model.actuator_trntype()[g] {
                    t if is_joint_trn(t) => model.actuator_trnid()[g][0] as usize,
                    mjtTrn::mjTRN_TENDON => first_tendon_joint(model, model.actuator_trnid()[g][0] as usize)
                        .ok_or_else(|| format!("gripper_joint: `{gname}`'s tendon has no joint to report; name the gripper_joint"))?,
                    _ => return Err(format!("gripper_joint: cannot infer the joint `{gname}` moves; name the gripper_joint")),
                },
            };
            let moment = transmission_moment(model, g, jid);
            let jr = common::JointRef::new(model, entity, jid);
            let name = format!("{}{}", cfg.joint_prefix, jr.name);
            // GripperCommand positions are the gripper JOINT's (control_msgs): the ends of the
            // ctrlrange map onto the joint positions the servo settles at, derived from the model
            // unless the config states them.
            let derived = servo_joint_position(model, g, jid, lo)
                .zip(servo_joint_position(model, g, jid, hi));
            let (open, close, origin) = match (cfg.gripper_open, cfg.gripper_close, derived) {
                (Some(o), Some(c), _) => (o, c, crate::spawn::actuators::Origin::World),
                (o, c, Some((dl, dh))) => (
                    o.unwrap_or(dl),
                    c.unwrap_or(dh),
                    if o.is_some() || c.is_some() {
                        crate::spawn::actuators::Origin::World
                    } else {
                        crate::spawn::actuators::Origin::Model
                    },
                ),
                (o, c, None) => {
                    if o.is_none() || c.is_none() {
                        return Err(format!(
                            "gripper_open: `{gname}` is not a position servo on a joint or fixed tendon, so its ctrl cannot be mapped onto the gripper joint's position from the model; state gripper_open and gripper_close (the joint positions at ctrl {lo} and {hi})"
                        ));
                    }
                    (o.unwrap_or(lo), c.unwrap_or(hi), crate::spawn::actuators::Origin::World)
                }
            };
            let unit = if model.jnt_type()[jid] == mjtJoint::mjJNT_SLIDE { "m" } else { "rad" };
            let map_text = format!(
                "gripper position {open:.6} .. {close:.6} {unit} ({}) -> ctrl {lo} .. {hi}",
                jr.name
            );
            self.gripper_map = Some((gname.clone(), map_text, origin));
            self.gripper = Some(Gripper {
                act: g,
                ctrl,
                lo,
                hi,
                open,
                close,
                joint: jr,
                name,
                moment,
                own_force: model.actuator_forcerange()[g],
                own_limited: model.actuator_forcelimited()[g],
                exec: None,
                target_ctrl: cfg.gripper_ctrl.clamp(lo, hi),
            });
        } else if cfg.gripper_joint.is_some()
            || cfg.gripper_open.is_some()
            || cfg.gripper_close.is_some()
        {
            return Err(if cfg.joints.is_some() {
                "gripper_joint: gripper keys are set but no gripper_actuator is named; with `joints:` the gripper is declared only by `gripper_actuator:`".to_string()
            } else {
                format!("gripper_joint: gripper keys are set but entity `{}` has no gripper (non-joint) actuator; name the `gripper_actuator:`", entity.name)
            });
        }
        // rest: by joint name (of this controller's joints or the gripper joint).
        if let Some(rest) = &cfg.rest {
            for (n, &q) in rest {
                let key = format!("rest.{n}");
                let j = common::resolve_joint(model, entity, &key, n)?;
                let idx = pairs.iter().position(|p| p.0 == j).ok_or_else(|| {
                    format!(
                        "{key}: joint `{n}` is not one of this controller's joints [{}]",
                        self.joints.iter().map(|j| j.name.as_str()).collect::<Vec<_>>().join(", ")
                    )
                })?;
                self.rest.push((idx, model.jnt_qposadr()[j] as usize, q));
            }
        }
        if let Some(t) = &cfg.test_target {
            if t.len() != self.joints.len() {
                return Err(format!(
                    "test_target: {} values for {} joints ({})",
                    t.len(),
                    self.joints.len(),
                    self.joint_names().join(", ")
                ));
            }
        }
        Ok(())
    }
}
