//! An arm's command port: how a command source other than `arm_controller`'s own trajectory
//! controller (a Cartesian controller) drives the arm without writing its actuators.
//!
//! `arm_controller` stays the only writer of the arm's actuators — that write is the hardware
//! holding the joints, and it never stops. In its `configure` it puts a [`CommandPort`] on the
//! blackboard (`arm_command:<entity>`) listing the joints it commands. Another controller plugin
//! attaches a [`JointSource`] there and declares its own controller in the robot's
//! [`Registry`](crate::handles::controllers::Registry), claiming the same `<joint>/position`
//! interfaces, so the registry's one-command-source rule decides who drives: a second active
//! source is refused naming both, and a hand-over is a `switch_controller` naming both sides.
//!
//! Every `pre_step`, `arm_controller` [`CommandPort::pull`]s: the source whose controller is
//! active supplies the joint targets. A source computes them at most once per tick, whichever
//! asks first (its own plugin's `pre_step` or the arm's pull), so the order the two plugins are
//! declared in cannot decide whether a command lands this step or the next. A source whose
//! controller was just activated starts from the measured joints; one just deactivated releases
//! the arm, which then holds the measured position (as a deactivated trajectory controller does).

use std::cell::RefCell;
use std::rc::Rc;

use crate::context::SimContext;
use crate::handles::controllers::Registry;

/// Blackboard key of an arm's command port.
pub fn port_key(entity: &str) -> String {
    format!("arm_command:{entity}")
}

/// One joint the arm's controller commands, as a source needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct PortJoint {
    /// Reported name (the controller's `joint_prefix` + model name): the registry's interface
    /// prefix (`<name>/position`).
    pub name: String,
    /// `qpos` address.
    pub qpos: usize,
    /// dof address.
    pub dof: usize,
    /// Joint range, when limited.
    pub range: Option<[f64; 2]>,
}

/// A command source for an arm's joint position targets.
pub trait JointSource: std::fmt::Debug {
    /// The registry controller whose `active` state gates this source.
    fn controller(&self) -> String;
    /// The joint position targets for this tick, in port order, while the controller is active;
    /// computed at most once per tick. The first call after [`JointSource::idle`] starts from the
    /// measured joints.
    fn targets(&mut self, ctx: &mut SimContext) -> Result<Vec<f64>, String>;
    /// The controller is not active this tick (the next activation starts afresh).
    fn idle(&mut self);
}

/// A source shared between its plugin and the port.
pub type SharedSource = Rc<RefCell<dyn JointSource>>;

/// What the arm does this step.
#[derive(Debug, Clone, PartialEq)]
pub enum Pull {
    /// No source is active (and none was released this step): the arm's own controller drives.
    Idle,
    /// An active source's targets (port order).
    Targets(Vec<f64>),
    /// A source's controller was deactivated since the last step: hold the measured position.
    Released,
}

#[derive(Debug, Default)]
struct Inner {
    entity: String,
    owner: String,
    joints: Vec<PortJoint>,
    /// (source, active at the last pull).
    sources: Vec<(SharedSource, bool)>,
}

/// The port (blackboard `arm_command:<entity>`); cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct CommandPort(Rc<RefCell<Inner>>);

impl CommandPort {
    /// The port of `entity`'s arm controller at `owner` (its address), commanding `joints`.
    pub fn new(entity: &str, owner: &str, joints: Vec<PortJoint>) -> CommandPort {
        CommandPort(Rc::new(RefCell::new(Inner {
            entity: entity.to_string(),
            owner: owner.to_string(),
            joints,
            sources: Vec::new(),
        })))
    }

    /// The port of `entity`, if an arm controller registered one.
    pub fn of(ctx: &SimContext, entity: &str) -> Option<CommandPort> {
        ctx.blackboard.get::<CommandPort>(&port_key(entity)).ok().cloned()
    }

    /// The arm's joints, in the order targets are given.
    pub fn joints(&self) -> Vec<PortJoint> {
        self.0.borrow().joints.clone()
    }

    /// The arm controller serving the port (its address).
    pub fn owner(&self) -> String {
        self.0.borrow().owner.clone()
    }

    /// The entity.
    pub fn entity(&self) -> String {
        self.0.borrow().entity.clone()
    }

    /// Attach a source (its plugin's `configure`).
    pub fn attach(&self, source: SharedSource) {
        self.0.borrow_mut().sources.push((source, false));
    }

    /// True when a source is attached.
    pub fn has_sources(&self) -> bool {
        !self.0.borrow().sources.is_empty()
    }

    /// Forget which sources were active (a reset: an active source starts again from the
    /// measured joints).
    pub fn reset(&self) {
        for s in &mut self.0.borrow_mut().sources {
            s.1 = false;
        }
    }

    /// The arm controller's per-step pull.
    pub fn pull(&self, ctx: &mut SimContext, registry: &Registry) -> Result<Pull, String> {
        let n = self.0.borrow().joints.len();
        let sources: Vec<(SharedSource, bool)> = self.0.borrow().sources.clone();
        let mut out = Pull::Idle;
        for (i, (s, was)) in sources.iter().enumerate() {
            let name = s.borrow().controller();
            let active = registry.is_active(&name);
            self.0.borrow_mut().sources[i].1 = active;
            if active {
                let t = s.borrow_mut().targets(ctx)?;
                if t.len() != n {
                    return Err(format!(
                        "controller `{name}` gave {} joint targets for {n} joints",
                        t.len()
                    ));
                }
                out = Pull::Targets(t);
            } else {
                s.borrow_mut().idle();
                if *was && out == Pull::Idle {
                    out = Pull::Released;
                }
            }
        }
        Ok(out)
    }
}
