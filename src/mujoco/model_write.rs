//! The one seam for writes into the compiled model: every run-time change to `MjModel` (presence,
//! `model_override`, `payload`, the gripper's force limit) goes through a [`ModelWriter`].
//!
//! - It writes **values** of fields MuJoCo reads per step (a geom's group, contact masks and
//!   friction and condim; a body's mass and gravity compensation; an actuator's force range), never a size,
//!   an address table or an id, so the model stays consistent with its `MjData`.
//! - Every write indexes a typed slice of the right length (`geom_friction_mut()[geom]`), so an
//!   id out of range panics like any slice index instead of writing past an array.
//! - A write that changes a derived constant (`body_mass`) is followed by [`ModelWriter::set_const`],
//!   which re-derives them on a scratch `MjData`, leaving the live state as it was.
//!
//! The writer borrows the model mutably from [`crate::SimContext::model_writer`], the only place
//! that takes `&mut MjModel` out of the engine's `MjData`; like every model access it runs on the
//! physics thread.

use mujoco_rs::prelude::*;

/// Typed, bounds-checked writes into the compiled model (see the module docs).
pub struct ModelWriter<'a> {
    model: &'a mut MjModel,
}

impl<'a> ModelWriter<'a> {
    /// Wrap the engine's model (only [`crate::SimContext::model_writer`] calls this).
    pub(crate) fn new(model: &'a mut MjModel) -> Self {
        ModelWriter { model }
    }

    /// The model as it is now (read back what was written).
    pub fn model(&self) -> &MjModel {
        self.model
    }

    /// `geom_group[geom] = group` (visibility group 0..=5; the raycast seam's mask reads it).
    pub fn geom_group(&mut self, geom: usize, group: i32) {
        self.model.geom_group_mut()[geom] = group;
    }

    /// `geom_contype[geom]` and `geom_conaffinity[geom]` (contact bitmasks).
    pub fn geom_contact(&mut self, geom: usize, contype: i32, conaffinity: i32) {
        self.model.geom_contype_mut()[geom] = contype;
        self.model.geom_conaffinity_mut()[geom] = conaffinity;
    }

    /// `geom_contype[geom]` alone.
    pub fn geom_contype(&mut self, geom: usize, contype: i32) {
        self.model.geom_contype_mut()[geom] = contype;
    }

    /// `geom_conaffinity[geom]` alone.
    pub fn geom_conaffinity(&mut self, geom: usize, conaffinity: i32) {
        self.model.geom_conaffinity_mut()[geom] = conaffinity;
    }

    /// `geom_friction[geom] = [slide, spin, roll]`.
    pub fn geom_friction(&mut self, geom: usize, friction: [f64; 3]) {
        self.model.geom_friction_mut()[geom] = friction;
    }

    /// `geom_condim[geom]` (contact dimensionality 1, 3, 4 or 6; read per contact, each step).
    /// Panics on any other value.
    pub fn geom_condim(&mut self, geom: usize, condim: i32) {
        assert!(matches!(condim, 1 | 3 | 4 | 6), "condim must be 1, 3, 4 or 6, got {condim}");
        // SAFETY: mujoco-rs marks geom_condim unsafe because MuJoCo trusts it to be one of
        // 1/3/4/6 (it sizes a contact's constraint rows from it); that is asserted above, and the
        // constraint arrays are sized per step from the contacts, not at compile.
        unsafe { self.model.geom_condim_mut()[geom] = condim };
    }

    /// `body_gravcomp[body]` (fraction of the body's weight compensated).
    pub fn body_gravcomp(&mut self, body: usize, gravcomp: f64) {
        self.model.body_gravcomp_mut()[body] = gravcomp;
    }

    /// `body_mass[body] = mass` (kg). Call [`ModelWriter::set_const`] after the last one.
    pub fn body_mass(&mut self, body: usize, mass: f64) {
        self.model.body_mass_mut()[body] = mass;
    }

    /// `actuator_forcerange[act] = range` (N | N·m) and whether it is enforced.
    pub fn actuator_force_limit(&mut self, act: usize, range: [f64; 2], limited: bool) {
        self.model.actuator_forcerange_mut()[act] = range;
        self.model.actuator_forcelimited_mut()[act] = limited;
    }

    /// `actuator_forcerange[act] = range` alone.
    pub fn actuator_forcerange(&mut self, act: usize, range: [f64; 2]) {
        self.model.actuator_forcerange_mut()[act] = range;
    }

    /// Re-derive the model's cached constants (`body_subtreemass`, `dof_invweight0`,
    /// `body_invweight0`, ...) after a `body_mass` write (`mj_setConst`), on a scratch `MjData`:
    /// the live state (qpos, qvel, warm start) is left exactly as it was.
    pub fn set_const(&mut self) {
        let mut scratch = MjData::new(&mut *self.model);
        scratch.set_const();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const XML: &str = r#"<mujoco>
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom name="link" type="capsule" fromto="0 0 0 0.5 0 0" size="0.05" mass="2"/>
    </body>
  </worldbody>
  <actuator><motor name="m" joint="hinge" ctrlrange="-1 1"/></actuator>
</mujoco>"#;

    #[test]
    fn writes_values_and_rederives_constants_on_a_scratch_data() {
        let mut data = MjData::new(Box::new(MjModel::from_xml_string(XML).unwrap()));
        data.qpos_mut()[0] = 0.3;
        let (body, geom) = (1, 0);
        assert_eq!(data.model().body_subtreemass()[body], 2.0);
        {
            // SAFETY (test): only values of existing elements are written, as in the seam's use.
            let mut w = ModelWriter::new(unsafe { data.model_mut() });
            w.geom_friction(geom, [0.2, 0.01, 0.001]);
            w.geom_condim(geom, 1);
            w.geom_contact(geom, 0, 0);
            w.geom_group(geom, 5);
            w.body_gravcomp(body, 1.0);
            w.actuator_force_limit(0, [-3.0, 3.0], true);
            w.body_mass(body, 5.0);
            w.set_const();
            assert_eq!(w.model().body_mass()[body], 5.0);
        }
        let m = data.model();
        assert_eq!(m.geom_friction()[geom], [0.2, 0.01, 0.001]);
        assert_eq!(m.geom_condim()[geom], 1);
        assert_eq!(
            (m.geom_contype()[geom], m.geom_conaffinity()[geom], m.geom_group()[geom]),
            (0, 0, 5)
        );
        assert_eq!(m.body_gravcomp()[body], 1.0);
        assert_eq!((m.actuator_forcerange()[0], m.actuator_forcelimited()[0]), ([-3.0, 3.0], true));
        // mj_setConst re-derived the subtree mass; the live state was not touched.
        assert_eq!(m.body_subtreemass()[body], 5.0);
        assert_eq!(data.qpos()[0], 0.3);
    }

    #[test]
    #[should_panic(expected = "index out of bounds")]
    fn an_id_out_of_range_panics_instead_of_writing_past_the_array() {
        let mut data = MjData::new(Box::new(MjModel::from_xml_string(XML).unwrap()));
        // SAFETY (test): the write below is refused by the bounds check before touching memory.
        let mut w = ModelWriter::new(unsafe { data.model_mut() });
        w.geom_friction(1, [1.0, 0.0, 0.0]);
    }
}
