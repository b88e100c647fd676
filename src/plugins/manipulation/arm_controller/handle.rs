//! The in-process handles an arm controller puts on the blackboard: the arm (`arm:<entity>`)
//! and the gripper reader (`gripper:<entity>`).

use super::*;

#[derive(Debug, Default)]
pub(super) struct ArmShared {
    pub(super) names: Vec<String>,
    pub(super) positions: Vec<f64>,
    pub(super) velocities: Vec<f64>,
    pub(super) efforts: Vec<f64>,
    pub(super) targets: Vec<f64>,
    pub(super) pending_targets: Option<Vec<(String, f64)>>,
    pub(super) pending_velocities: Option<Vec<(String, f64)>>,
}

/// Handle to one arm's controller (blackboard `arm:<entity>`): in-process consumers read the
/// joints and command targets or velocities (taken at the next step; a running goal is canceled).
#[derive(Debug, Clone, Default)]
pub struct ArmHandle(pub(super) Rc<RefCell<ArmShared>>);

impl ArmHandle {
    /// Joint names (as reported, with `joint_prefix`), in controller order.
    pub fn names(&self) -> Vec<String> {
        self.0.borrow().names.clone()
    }
    /// Measured positions (rad | m) after the last step.
    pub fn positions(&self) -> Vec<f64> {
        self.0.borrow().positions.clone()
    }
    /// Measured velocities.
    pub fn velocities(&self) -> Vec<f64> {
        self.0.borrow().velocities.clone()
    }
    /// Joint efforts (qfrc_actuator + qfrc_gravcomp).
    pub fn efforts(&self) -> Vec<f64> {
        self.0.borrow().efforts.clone()
    }
    /// Held targets.
    pub fn targets(&self) -> Vec<f64> {
        self.0.borrow().targets.clone()
    }
    /// Hold `positions` for the named joints from the next step.
    pub fn set_targets(&self, names: &[&str], positions: &[f64]) {
        self.0.borrow_mut().pending_targets =
            Some(names.iter().map(|s| s.to_string()).zip(positions.iter().copied()).collect());
    }
    /// Integrate `velocities` (rad/s) into the named joints' targets (subject to the watchdog).
    pub fn set_velocities(&self, names: &[&str], velocities: &[f64]) {
        self.0.borrow_mut().pending_velocities =
            Some(names.iter().map(|s| s.to_string()).zip(velocities.iter().copied()).collect());
    }
}

/// The gripper as a reader sees it (blackboard `gripper:<entity>`): `(position, velocity)` of the
/// gripper joint; `gripper_effort:<entity>` holds its effort (joint unit: N for a slide jaw).
#[derive(Debug, Clone, Default)]
pub struct GripperReader(pub(super) Rc<RefCell<(f64, f64, f64)>>);

impl GripperReader {
    /// `(position, velocity)` of the gripper joint.
    pub fn read(&self) -> (f64, f64) {
        let s = self.0.borrow();
        (s.0, s.1)
    }
    /// The gripper joint's effort (its own unit).
    pub fn effort(&self) -> f64 {
        self.0.borrow().2
    }
}
