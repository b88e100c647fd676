//! `actuators:` — stating the law a model's joints run under, and its gains, from the world.
//!
//! A spawn plugin (`spawn_arm`, `spawn_robot`) carries an optional block
//!
//! ```yaml
//! actuators:
//!   control: impedance       # position | velocity | effort | impedance; the model's own if unset
//!   stiffness: 2.0           # N·m/rad (impedance)
//!   damping: 0.02            # N·m·s/rad (impedance)
//!   effort_limit: 150        # N·m (URDF <limit effort=>): forcerange ±effort_limit
//!   ctrlrange: [-1, 1]       # the command range, in the law's unit
//!   each:                    # per ACTUATOR name, on top of the shared keys
//!     wrist_3: {control: position, p: 2000, d: 500}
//! ```
//!
//! and this module rewrites the model's own actuators in the child `MjSpec` before it is attached
//! (the file on disk is never touched; a world that declares nothing compiles the model as is). The
//! four laws compile as this table says (force = gain·ctrl + bias):
//!
//! | control | commands | gains | gaintype / gainprm | biastype / biasprm |
//! | --- | --- | --- | --- | --- |
//! | position | joint position (rad, m) | p, d | fixed, [p] | affine, [0, −p, −d] |
//! | velocity | joint velocity (rad/s, m/s) | d | fixed, [d] | affine, [0, 0, −d] |
//! | effort | joint torque (N·m, N) | — | fixed, [1] | none |
//! | impedance | joint position (rad, m) | stiffness, damping | fixed, [stiffness] | affine, [0, −stiffness, −damping] |
//!
//! Two halves, applied at different moments by the spawn plugin:
//! 1. [`apply`] — the actuator rewrite, on the model's own spec right after it is loaded and
//!    BEFORE an end effector is grafted on, so a shared `control:` never falls on a gripper's
//!    tendon actuator;
//! 2. [`apply_gravcomp`] — `body_gravcomp = 1` on every body the chain from the world down to it
//!    holds up through a position/impedance joint, AFTER the graft (gravcomp is per body and does
//!    not cascade: compensating before the tool is attached would leave the arm sagging by exactly
//!    the tool's weight).
//!
//! Errors are split so the fix is clear: a SHAPE error (an unknown key, a MuJoCo spelling, a gain
//! the stated law does not read, a bad number) is found by [`parse`] at config validation; anything
//! that needs the model (an unknown actuator, a joint or tendon name under `each:`, a missing
//! `ctrlrange`) is returned by [`apply`] at build. MuJoCo's own spellings (`kp`, `kv`, `kd`,
//! `forcerange`) and actuator types (`motor`, `pd`) are refused naming the replacement rather than
//! translated.
//!
//! The resolved table ([`ActuatorTable`]: every actuator, its final law and gains and whether each
//! came from the model or the world) is stored on the blackboard under
//! `actuator_table:<entity>` for the run record.

mod apply;
mod block;
mod gravcomp;
mod table;

pub use apply::*;
pub use block::*;
pub use gravcomp::*;
pub use table::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ConfigError;
    use serde_norway::Value;

    fn p(y: &str) -> Result<ActuatorsBlock, Vec<ConfigError>> {
        let v: Value = serde_norway::from_str(y).unwrap();
        parse(&v, "actuators")
    }

    #[test]
    fn shapes_and_spellings() {
        let b = p("{control: impedance, stiffness: 2.0, damping: 0.02, each: {wrist_3: {control: position, p: 2000, d: 500}}}").unwrap();
        assert_eq!(b.shared.control, Some(Control::Impedance));
        assert_eq!(b.each[0].1.p, Some(2000.0));
        let e = p("{kp: 10}").unwrap_err();
        assert!(e[0].path == "actuators.kp" && e[0].message.contains("write `p`"), "{e:?}");
        let e = p("{each: {wrist_3: {forcerange: [-1, 1]}}}").unwrap_err();
        assert!(
            e[0].path == "actuators.each.wrist_3.forcerange"
                && e[0].message.contains("effort_limit"),
            "{e:?}"
        );
        let e = p("{control: motor}").unwrap_err();
        assert!(e[0].message.contains("control: effort"), "{e:?}");
        let e = p("{control: pd}").unwrap_err();
        assert!(e[0].message.contains("control: position"), "{e:?}");
        let e = p("{control: position, stiffness: 3}").unwrap_err();
        assert!(e[0].path == "actuators.stiffness" && e[0].message.contains("reads p, d"), "{e:?}");
        let e = p("{control: effort, each: {a: {d: 1}}}").unwrap_err();
        assert!(e[0].path == "actuators.each.a.d" && e[0].message.contains("no gain"), "{e:?}");
        let e = p("{bogus: 1}").unwrap_err();
        assert!(e[0].message.contains("unknown key `bogus`"), "{e:?}");
        let e = p("{ctrlrange: [1, -1]}").unwrap_err();
        assert!(e[0].message.contains("lo < hi"), "{e:?}");
    }
}
