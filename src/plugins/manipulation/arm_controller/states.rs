//! joint_states as ros2_control's joint_state_broadcaster publishes them: only while the
//! broadcaster is active, from the hardware's last read (a component that is unconfigured or
//! finalized is not read, so the values repeat, stamped now).

use super::*;

impl ArmController {
    /// Publish joint_states when due, from this step's measured `q`, `v` and efforts
    /// (`fa` actuator + `fg` gravity compensation) or the last read.
    pub(super) fn publish_joint_states(
        &mut self,
        ctx: &mut SimContext,
        q: &[f64],
        v: &[f64],
        fa: &[f64],
        fg: &[f64],
    ) {
        if ctx.interface.is_due(self.ep_states, ctx.tick) && self.registry.is_active(JSB_NAME) {
            let mut js = match (&self.last_read, self.registry.hardware_reads()) {
                (Some(last), false) => last.clone(),
                _ => {
                    let mut js = JointState::default();
                    for j in &self.joints {
                        js.name.push(j.name.clone());
                        js.position.push(q[j.qpos]);
                        js.velocity.push(v[j.dof]);
                        js.effort.push(fa[j.dof] + fg[j.dof]);
                    }
                    if let Some(g) = &self.gripper {
                        js.name.push(g.name.clone());
                        js.position.push(q[g.joint.qpos]);
                        js.velocity.push(v[g.joint.dof]);
                        js.effort.push(fa[g.joint.dof] + fg[g.joint.dof]);
                    }
                    js
                }
            };
            if self.registry.hardware_reads() {
                self.last_read = Some(js.clone());
            }
            js.stamp = ctx.sim_time();
            let tick = ctx.tick;
            ctx.interface.publish(self.ep_states, tick, Payload::JointState(js));
        }
    }
}
