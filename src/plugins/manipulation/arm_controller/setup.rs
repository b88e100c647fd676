//! The `configure` hook's steps: resolve the arm, declare its controllers to the entity's
//! controller registry, add its endpoints, publish its handles.

use super::*;

impl ArmController {
    /// `configure`: resolve the joints and gripper, then declare, add endpoints, publish handles.
    pub(super) fn setup(&mut self, ctx: &mut SimContext) -> HookResult {
        let entity = common::owner_entity(ctx, "arm_controller", self.owner.as_deref())?;
        self.entity = entity.name.clone();
        self.resolve(ctx, &entity)?;
        self.record_gripper_map(ctx, &entity);
        self.monitor_dt = 1.0 / self.cfg.action_monitor_rate;
        let ctl_names = self.declare_controllers(ctx, &entity)?;
        self.apply_parameters();
        self.add_endpoints(ctx, &entity, ctl_names);
        self.publish_handles(ctx, &entity);
        Ok(())
    }

    /// The gripper's command mapping goes into the entity's resolved actuator table.
    fn record_gripper_map(&mut self, ctx: &mut SimContext, entity: &Entity) {
        if let Some((act, text, origin)) = self.gripper_map.take() {
            let key = crate::spawn::actuators::table_key(&entity.name);
            if let Ok(t) = ctx.blackboard.get_mut::<crate::spawn::actuators::ActuatorTable>(&key) {
                if let Some(r) = t.rows.iter_mut().find(|r| r.actuator == act) {
                    r.command_map = Some((text, origin));
                }
            }
        }
    }

    /// Reported names of every joint this plugin serves: the arm's, then the gripper's.
    fn all_joint_names(&self) -> Vec<String> {
        let mut names = self.joint_names();
        names.extend(self.gripper.as_ref().map(|g| g.name.clone()));
        names
    }

    /// Register the hardware interfaces and declare the trajectory controller, the gripper
    /// controller (with a gripper) and the joint_state_broadcaster (once per entity) to the
    /// entity's registry. Returns the names of the controllers this plugin declared.
    fn declare_controllers(
        &mut self,
        ctx: &mut SimContext,
        entity: &Entity,
    ) -> Result<Vec<String>, String> {
        let cfg: &ArmControllerConfig = &self.cfg;
        let reg = Registry::of(ctx, &entity.name);
        if !cfg.joint_prefix.is_empty() {
            // The robot's description names these joints as /joint_states reports them.
            let p = cfg.joint_prefix.as_str();
            let pairs: Vec<(String, String)> = self
                .all_joint_names()
                .into_iter()
                .map(|n| (n.strip_prefix(p).unwrap_or(&n).to_string(), n.clone()))
                .collect();
            reg.name_joints(&pairs);
        }
        let now = ctx.sim_time();
        let rate = (1.0 / ctx.dt).round() as u32;
        let cmd: Vec<String> = self.joints.iter().map(|j| format!("{}/position", j.name)).collect();
        let state_ifaces: Vec<String> = self
            .all_joint_names()
            .iter()
            .flat_map(|n| ["position", "velocity", "effort"].map(|k| format!("{n}/{k}")))
            .collect();
        let mut hw_cmd = cmd.clone();
        if let Some(g) = &self.gripper {
            hw_cmd.push(format!("{}/position", g.name));
        }
        reg.add_hardware(&hw_cmd, &state_ifaces);
        let world_default = ctx.run.controller_initial_state;
        let initial_of =
            |v: &Option<String>| v.as_deref().and_then(State::parse).unwrap_or(world_default);
        let jtc_state: Vec<String> = self
            .joint_names()
            .iter()
            .flat_map(|n| [format!("{n}/position"), format!("{n}/velocity")])
            .collect();
        reg.declare(
            ControllerSpec {
                name: cfg.controller_name.clone(),
                type_name: JTC_TYPE.into(),
                command_interfaces: cmd,
                state_interfaces: jtc_state,
                update_rate: rate,
                initial_state: initial_of(&cfg.initial_state),
                owner: self.address.clone(),
                parameters: self.jtc_parameters(),
            },
            now,
        )?;
        let mut ctl_names = vec![cfg.controller_name.clone()];
        if let Some(g) = &self.gripper {
            reg.declare(
                ControllerSpec {
                    name: cfg.gripper_controller_name.clone(),
                    type_name: GRIPPER_TYPE.into(),
                    command_interfaces: vec![format!("{}/position", g.name)],
                    state_interfaces: vec![
                        format!("{}/position", g.name),
                        format!("{}/velocity", g.name),
                    ],
                    update_rate: rate,
                    initial_state: initial_of(&cfg.gripper_initial_state),
                    owner: self.address.clone(),
                    parameters: self.gripper_parameters(),
                },
                now,
            )?;
            ctl_names.push(cfg.gripper_controller_name.clone());
        }
        if reg.state(JSB_NAME).is_none() && !reg.declared().iter().any(|n| n == JSB_NAME) {
            reg.declare(
                ControllerSpec {
                    name: JSB_NAME.into(),
                    type_name: JSB_TYPE.into(),
                    command_interfaces: vec![],
                    state_interfaces: state_ifaces,
                    update_rate: rate,
                    initial_state: initial_of(&cfg.broadcaster_initial_state),
                    owner: self.address.clone(),
                    parameters: Self::jsb_parameters(),
                },
                now,
            )?;
            ctl_names.push(JSB_NAME.into());
        }
        self.registry = reg;
        Ok(ctl_names)
    }

    /// The endpoints: joint_states, the trajectory action, the optional streamed and velocity
    /// commands, the gripper action, and one transition_event per declared controller.
    fn add_endpoints(&mut self, ctx: &mut SimContext, entity: &Entity, ctl_names: Vec<String>) {
        let cfg: &ArmControllerConfig = &self.cfg;
        let scope = Scope::new(entity, cfg.namespace.as_deref());
        let topics = &cfg.topics;
        let cn = cfg.controller_name.clone();
        let topic = |role: &str, default: String| topics.get(role).cloned().unwrap_or(default);
        let mk = |ep: Endpoint| {
            ep.owner(Some(&scope.owner))
                .namespace(&scope.namespace)
                .frame_prefix(&scope.frame_prefix)
        };
        self.ep_states = ctx.interface.add(mk(Endpoint::out("joint_states")
            .rate(cfg.rate_hz)
            .hint("ros2", "type", "sensor_msgs/msg/JointState")
            .hint("ros2", "qos", "reliable")
            .hint("ros2", "topic", topic("joint_states", "joint_states".into()))));
        self.ep_follow = ctx.interface.add(mk(Endpoint::input("follow_joint_trajectory")
            .hint("ros2", "action", "control_msgs/action/FollowJointTrajectory")
            .hint(
                "ros2",
                "topic",
                topic("follow_joint_trajectory", format!("{cn}/follow_joint_trajectory")),
            )
            .hint("ros2", "controller", cn.clone())));
        if cfg.stream_commands {
            self.ep_stream = Some(
                ctx.interface.add(mk(Endpoint::input("joint_trajectory")
                    .hint("ros2", "type", "trajectory_msgs/msg/JointTrajectory")
                    .hint(
                        "ros2",
                        "topic",
                        topic("joint_trajectory", format!("{cn}/joint_trajectory")),
                    ))),
            );
        }
        if cfg.velocity_commands {
            self.ep_vel = Some(
                ctx.interface.add(mk(Endpoint::input("joint_velocity")
                    .hint("ros2", "type", "sensor_msgs/msg/JointState")
                    .hint("ros2", "field", "velocity")
                    .hint(
                        "ros2",
                        "topic",
                        topic("joint_velocity", format!("{cn}/joint_velocity")),
                    ))),
            );
        }
        if self.gripper.is_some() {
            let gn = cfg.gripper_controller_name.clone();
            self.ep_grip = Some(
                ctx.interface.add(mk(Endpoint::input("gripper_cmd")
                    .hint("ros2", "action", "control_msgs/action/GripperCommand")
                    .hint("ros2", "topic", topic("gripper_cmd", format!("{gn}/gripper_cmd")))
                    .hint("ros2", "state_key", gripper_key(&entity.name))
                    .hint("ros2", "effort_key", gripper_effort_key(&entity.name))
                    .hint("ros2", "controller", gn))),
            );
        }
        for n in ctl_names {
            let ep = ctx.interface.add(mk(Endpoint::out("transition_event")
                .hint("ros2", "type", "lifecycle_msgs/msg/TransitionEvent")
                .hint("ros2", "qos", "reliable")
                .hint("ros2", "topic", format!("{n}/transition_event"))
                .hint("ros2", "controller", n.clone())));
            self.controllers.push((n, 0, ep));
        }
    }

    /// The blackboard handles: the arm's, the command port, and the gripper reader.
    fn publish_handles(&mut self, ctx: &mut SimContext, entity: &Entity) {
        self.handle.0.borrow_mut().names = self.joint_names();
        ctx.blackboard.set(arm_key(&entity.name), self.handle.clone());
        let port_joints = self
            .joints
            .iter()
            .map(|j| PortJoint { name: j.name.clone(), qpos: j.qpos, dof: j.dof, range: j.range })
            .collect();
        self.port = CommandPort::new(&entity.name, &self.address, port_joints);
        ctx.blackboard.set(port_key(&entity.name), self.port.clone());
        if self.gripper.is_some() {
            ctx.blackboard.set(gripper_key(&entity.name), self.reader.clone());
            ctx.blackboard.set(gripper_effort_key(&entity.name), self.reader.clone());
        }
    }
}
