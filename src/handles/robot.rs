//! `RobotHandle`: the uniform way a base controller exposes a robot to in-process consumers
//! (teleop, the standalone driver, a test).
//!
//! A controller plugin (`diff_drive`, `omni_drive`, `ackermann_drive`) puts one on the blackboard
//! under `robot:<entity name>` in `configure`; a consumer clones it out and calls
//! [`RobotHandle::drive`] / [`RobotHandle::read_odom`]. Everything runs on the physics thread, so
//! the shared state is an `Rc<RefCell<..>>`: cloning a handle shares it.

use std::cell::RefCell;
use std::rc::Rc;

/// Blackboard key of a robot's handle: `robot:<entity name>`.
pub fn robot_key(entity: &str) -> String {
    format!("robot:{entity}")
}

/// The odometry a controller last integrated, in its `odom` frame (REP 105: the frame the robot
/// started in, x forward, y left) — what the controller's `odom` endpoint publishes, noise
/// included when its `odom_noise` block is set.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct OdomState {
    /// Sim time (s) of the integration step.
    pub stamp: f64,
    /// Position x (m), odom frame.
    pub x: f64,
    /// Position y (m), odom frame.
    pub y: f64,
    /// Heading (rad), odom frame, unwrapped (it keeps counting past ±π, so total turn is readable).
    pub yaw: f64,
    /// Forward velocity (m/s), body frame.
    pub vx: f64,
    /// Lateral velocity (m/s), body frame (0 for a diff or Ackermann base).
    pub vy: f64,
    /// Yaw rate (rad/s).
    pub wz: f64,
}

#[derive(Debug, Default)]
struct Shared {
    controller: &'static str,
    command: Option<[f64; 3]>,
    commands: u64,
    odom: OdomState,
}

/// Handle to one robot's base controller (blackboard `robot:<entity name>`).
///
/// `drive` queues a body-frame twist the controller takes at its next `pre_step` (it then holds,
/// subject to the controller's `cmd_vel_timeout` watchdog, like a command arriving on `cmd_vel`);
/// `read_odom` returns the controller's integrated wheel odometry.
#[derive(Debug, Clone)]
pub struct RobotHandle {
    name: Rc<str>,
    inner: Rc<RefCell<Shared>>,
}

impl RobotHandle {
    /// A handle for entity `name`, served by the controller plugin `controller` (`diff_drive`).
    pub fn new(name: &str, controller: &'static str) -> Self {
        RobotHandle {
            name: Rc::from(name),
            inner: Rc::new(RefCell::new(Shared { controller, ..Default::default() })),
        }
    }

    /// The entity name (the spawn entry's address).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The plugin serving it (`diff_drive`, `omni_drive`, `ackermann_drive`).
    pub fn controller(&self) -> &'static str {
        self.inner.borrow().controller
    }

    /// Command a body-frame twist: `vx` forward (m/s), `vy` left (m/s; ignored by a diff or
    /// Ackermann base), `wz` yaw rate (rad/s, counter-clockwise). The controller clamps it to its
    /// limits and ramps to it; it is taken at the next step and counts as a command arrival for the
    /// watchdog.
    pub fn drive(&self, vx: f64, vy: f64, wz: f64) {
        let mut s = self.inner.borrow_mut();
        s.command = Some([vx, vy, wz]);
        s.commands += 1;
    }

    /// The odometry as `(x, y, yaw, vx, vy, wz)`: pose in the `odom` frame (m, m, rad), twist in the
    /// body frame (m/s, m/s, rad/s).
    pub fn read_odom(&self) -> (f64, f64, f64, f64, f64, f64) {
        let o = self.inner.borrow().odom;
        (o.x, o.y, o.yaw, o.vx, o.vy, o.wz)
    }

    /// The odometry with its stamp.
    pub fn odom(&self) -> OdomState {
        self.inner.borrow().odom
    }

    /// How many `drive` calls were made since the handle was created.
    pub fn commands_sent(&self) -> u64 {
        self.inner.borrow().commands
    }

    /// Controller side: take the pending `drive` command, if one arrived since the last take.
    pub fn take_command(&self) -> Option<[f64; 3]> {
        self.inner.borrow_mut().command.take()
    }

    /// Controller side: store the latest odometry.
    pub fn set_odom(&self, o: OdomState) {
        self.inner.borrow_mut().odom = o;
    }

    /// Controller side: forget pending commands and zero the odometry (reset).
    pub fn reset(&self) {
        let mut s = self.inner.borrow_mut();
        s.command = None;
        s.odom = OdomState::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handle_shares_state() {
        let h = RobotHandle::new("robot", "diff_drive");
        let h2 = h.clone();
        h2.drive(0.2, 0.0, 0.5);
        assert_eq!(h.take_command(), Some([0.2, 0.0, 0.5]));
        assert_eq!(h.take_command(), None);
        h.set_odom(OdomState { x: 1.0, yaw: 0.5, ..Default::default() });
        assert_eq!(h2.read_odom(), (1.0, 0.0, 0.5, 0.0, 0.0, 0.0));
    }
}
