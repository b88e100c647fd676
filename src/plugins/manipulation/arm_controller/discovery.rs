//! Discovery at configure: which joints, actuators and gripper an arm controller commands, read
//! from the compiled model and the entity (by `joints:` / `actuators:`, else every arm actuator).

use super::*;

/// The compiled model seen from one entity: its root bodies and its name prefix.
struct Scan<'a> {
    model: &'a MjModel,
    entity: &'a Entity,
    roots: Vec<usize>,
}

impl<'a> Scan<'a> {
    fn new(model: &'a MjModel, entity: &'a Entity) -> Result<Self, String> {
        Ok(Scan { model, entity, roots: common::entity_roots(model, entity)? })
    }

    fn prefix(&self) -> &str {
        &self.entity.prefix
    }

    fn nu(&self) -> usize {
        self.model.ffi().nu as usize
    }

    /// Whether actuator `a` belongs to the entity: by name prefix, else by the body its joint or
    /// tendon moves.
    fn on_entity(&self, a: usize) -> bool {
        let model = self.model;
        if self.prefix().is_empty() {
            match common::actuator_joint(model, a) {
                Some(j) => common::in_entity(model, model.jnt_bodyid()[j] as usize, &self.roots),
                None => {
                    model.actuator_trntype()[a] == mjtTrn::mjTRN_TENDON
                        && tendon_on(model, model.actuator_trnid()[a][0] as usize, &self.roots)
                }
            }
        } else {
            model
                .id_to_name(MjtObjBase::mjOBJ_ACTUATOR, a)
                .is_some_and(|n| n.starts_with(self.prefix()))
        }
    }

    /// An object's name without the entity prefix (`missing` when it has none).
    fn name(&self, kind: MjtObjBase, id: usize, missing: &str) -> String {
        common::unprefixed(self.model.id_to_name(kind, id).unwrap_or(missing), self.prefix())
            .to_string()
    }

    fn actuator(&self, a: usize) -> String {
        self.name(MjtObjBase::mjOBJ_ACTUATOR, a, "?")
    }
}

impl ArmController {
    /// Resolve the commanded joints, their actuators and the gripper on `entity`.
    pub(super) fn resolve(&mut self, ctx: &mut SimContext, entity: &Entity) -> Result<(), String> {
        let scan = Scan::new(ctx.model(), entity)?;
        let grip_act = self.gripper_actuator(&scan)?;
        let pairs = self.arm_pairs(&scan, grip_act)?;
        self.check_position_servos(&scan, &pairs)?;
        let mut acts: Vec<usize> = pairs.iter().map(|p| p.1).collect();
        acts.extend(grip_act);
        self.claim_writers(ctx, entity, &acts)?;
        let scan = Scan::new(ctx.model(), entity)?;
        self.joints = self.joint_table(&scan, &pairs);
        match grip_act {
            Some(g) => {
                let (gripper, map) = self.gripper_details(&scan, g)?;
                self.gripper_map = Some(map);
                self.gripper = Some(gripper);
            }
            None => self.check_no_gripper_keys(entity)?,
        }
        self.resolve_rest(&scan, &pairs)?;
        self.check_test_target()
    }

    /// The gripper's actuator: `gripper_actuator:`, else (without `joints:`) the entity's one
    /// non-joint actuator.
    fn gripper_actuator(&self, scan: &Scan) -> Result<Option<usize>, String> {
        let (model, entity) = (scan.model, scan.entity);
        let cfg: &ArmControllerConfig = &self.cfg;
        match (&cfg.gripper_actuator, &cfg.joints) {
            (Some(g), _) => {
                Ok(Some(common::resolve_actuator(model, entity, "gripper_actuator", g)?))
            }
            (None, Some(_)) => Ok(None),
            (None, None) => {
                let cands: Vec<usize> = (0..scan.nu())
                    .filter(|&a| scan.on_entity(a) && !is_joint_trn(model.actuator_trntype()[a]))
                    .collect();
                match cands.len() {
                    0 => Ok(None),
                    1 => Ok(Some(cands[0])),
                    _ => Err(format!(
                        "gripper_actuator: entity `{}` has several non-joint actuators ([{}]); name the gripper's",
                        entity.name,
                        cands.iter().map(|&a| scan.actuator(a)).collect::<Vec<_>>().join(", ")
                    )),
                }
            }
        }
    }

    /// The arm's (joint, actuator) pairs: the named `joints:` in order, else every hinge or slide
    /// actuator on the entity by joint id.
    fn arm_pairs(
        &self,
        scan: &Scan,
        grip_act: Option<usize>,
    ) -> Result<Vec<(usize, usize)>, String> {
        let (model, entity) = (scan.model, scan.entity);
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        match &self.cfg.joints {
            Some(names) => {
                for (i, n) in names.iter().enumerate() {
                    let key = format!("joints[{i}]");
                    let j = common::resolve_joint(model, entity, &key, n)?;
                    let a = (0..scan.nu()).find(|&a| common::actuator_joint(model, a) == Some(j) && Some(a) != grip_act).ok_or_else(|| {
                        format!("{key}: no actuator drives joint `{n}`, so this controller cannot hold it; list only actuated joints")
                    })?;
                    pairs.push((j, a));
                }
            }
            None => {
                for a in 0..scan.nu() {
                    if Some(a) == grip_act || !scan.on_entity(a) {
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
                    return Err(format!("entity `{}` has no joint actuator sharing its prefix `{}`; name the `joints:`", entity.name, scan.prefix()));
                }
            }
        }
        Ok(pairs)
    }

    /// Every arm actuator must be a position servo: the controller writes position targets.
    fn check_position_servos(&self, scan: &Scan, pairs: &[(usize, usize)]) -> Result<(), String> {
        for &(j, a) in pairs {
            if !common::is_position_servo(scan.model, a) {
                let an = scan.actuator(a);
                let jn = scan.name(MjtObjBase::mjOBJ_JOINT, j, "?");
                return Err(format!(
                    "actuator `{an}` (joint `{jn}`) is not a position servo, so the position targets this controller writes would not mean positions there; \
                     {} (an arm under `control: effort` or `velocity` is commanded by another controller)",
                    if self.cfg.joints.is_none() { "name this arm's `joints:` so the prefix scan does not claim it" } else { "drop it from `joints:`" }
                ));
            }
        }
        Ok(())
    }

    /// One writer per actuator: claim `acts` on the entity's writers table, or name the writer
    /// that already holds one.
    fn claim_writers(
        &self,
        ctx: &mut SimContext,
        entity: &Entity,
        acts: &[usize],
    ) -> Result<(), String> {
        let wk = writers_key(&entity.name);
        let mut writers: BTreeMap<usize, String> =
            ctx.blackboard.get::<BTreeMap<usize, String>>(&wk).cloned().unwrap_or_default();
        for a in acts {
            if let Some(w) = writers.get(a) {
                let an = common::unprefixed(
                    ctx.model().id_to_name(MjtObjBase::mjOBJ_ACTUATOR, *a).unwrap_or("?"),
                    &entity.prefix,
                )
                .to_string();
                return Err(format!(
                    "actuator `{an}` of `{}` is already written by `{w}`; `{}` would be a second command source for it — one writer per arm: keep one controller (give yours the manifest's label to override it), or give them disjoint `joints:`",
                    entity.name, self.address
                ));
            }
        }
        for a in acts {
            writers.insert(*a, self.address.clone());
        }
        ctx.blackboard.set(wk, writers);
        Ok(())
    }

    /// The commanded joints' addresses, named as reported (`joint_prefix` + model name).
    fn joint_table(&self, scan: &Scan, pairs: &[(usize, usize)]) -> Vec<Joint> {
        let model = scan.model;
        pairs
            .iter()
            .map(|&(j, a)| Joint {
                name: format!(
                    "{}{}",
                    self.cfg.joint_prefix,
                    scan.name(MjtObjBase::mjOBJ_JOINT, j, "")
                ),
                qpos: model.jnt_qposadr()[j] as usize,
                dof: model.jnt_dofadr()[j] as usize,
                ctrl: model.actuator_ctrladr()[a] as usize,
                range: model.jnt_limited()[j].then(|| model.jnt_range()[j]),
            })
            .collect()
    }

    /// The gripper on actuator `g`: its reported joint, and the open/close joint positions its
    /// ctrlrange maps onto; with the mapping's row for the actuator table.
    fn gripper_details(
        &self,
        scan: &Scan,
        g: usize,
    ) -> Result<(Gripper, (String, String, crate::spawn::actuators::Origin)), String> {
        use crate::spawn::actuators::Origin;
        let (model, entity) = (scan.model, scan.entity);
        let cfg: &ArmControllerConfig = &self.cfg;
        let gname = scan.actuator(g);
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
        let derived =
            servo_joint_position(model, g, jid, lo).zip(servo_joint_position(model, g, jid, hi));
        let (open, close, origin) = match (cfg.gripper_open, cfg.gripper_close, derived) {
            (Some(o), Some(c), _) => (o, c, Origin::World),
            (o, c, Some((dl, dh))) => (
                o.unwrap_or(dl),
                c.unwrap_or(dh),
                if o.is_some() || c.is_some() { Origin::World } else { Origin::Model },
            ),
            (o, c, None) => {
                if o.is_none() || c.is_none() {
                    return Err(format!(
                        "gripper_open: `{gname}` is not a position servo on a joint or fixed tendon, so its ctrl cannot be mapped onto the gripper joint's position from the model; state gripper_open and gripper_close (the joint positions at ctrl {lo} and {hi})"
                    ));
                }
                (o.unwrap_or(lo), c.unwrap_or(hi), Origin::World)
            }
        };
        let unit = if model.jnt_type()[jid] == mjtJoint::mjJNT_SLIDE { "m" } else { "rad" };
        let map_text = format!(
            "gripper position {open:.6} .. {close:.6} {unit} ({}) -> ctrl {lo} .. {hi}",
            jr.name
        );
        let gripper = Gripper {
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
        };
        Ok((gripper, (gname, map_text, origin)))
    }

    /// Gripper keys with no gripper actuator would do nothing: refused.
    fn check_no_gripper_keys(&self, entity: &Entity) -> Result<(), String> {
        let cfg = &self.cfg;
        if cfg.gripper_joint.is_none() && cfg.gripper_open.is_none() && cfg.gripper_close.is_none()
        {
            return Ok(());
        }
        Err(if cfg.joints.is_some() {
            "gripper_joint: gripper keys are set but no gripper_actuator is named; with `joints:` the gripper is declared only by `gripper_actuator:`".to_string()
        } else {
            format!("gripper_joint: gripper keys are set but entity `{}` has no gripper (non-joint) actuator; name the `gripper_actuator:`", entity.name)
        })
    }

    /// `rest:` by joint name, each one of this controller's joints.
    fn resolve_rest(&mut self, scan: &Scan, pairs: &[(usize, usize)]) -> Result<(), String> {
        let Some(rest) = &self.cfg.rest else { return Ok(()) };
        for (n, &q) in rest {
            let key = format!("rest.{n}");
            let j = common::resolve_joint(scan.model, scan.entity, &key, n)?;
            let idx = pairs.iter().position(|p| p.0 == j).ok_or_else(|| {
                format!(
                    "{key}: joint `{n}` is not one of this controller's joints [{}]",
                    self.joints.iter().map(|j| j.name.as_str()).collect::<Vec<_>>().join(", ")
                )
            })?;
            self.rest.push((idx, scan.model.jnt_qposadr()[j] as usize, q));
        }
        Ok(())
    }

    /// `test_target:` has one value per joint.
    fn check_test_target(&self) -> Result<(), String> {
        match &self.cfg.test_target {
            Some(t) if t.len() != self.joints.len() => Err(format!(
                "test_target: {} values for {} joints ({})",
                t.len(),
                self.joints.len(),
                self.joint_names().join(", ")
            )),
            _ => Ok(()),
        }
    }
}
