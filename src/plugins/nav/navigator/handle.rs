//! `NavHandle`: a navigator's in-process door (blackboard `nav:<entity>`): give it a route, start
//! and stop it, read what it is doing. Physics thread only, like every handle.

use std::cell::RefCell;
use std::rc::Rc;

/// Blackboard key of an entity's navigator handle.
pub fn nav_key(entity: &str) -> String {
    format!("nav:{entity}")
}

/// What the navigator is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NavPhase {
    /// No route, or not started.
    #[default]
    Idle,
    /// Standing at a point for its dwell.
    Dwelling,
    /// Following the route.
    Moving,
    /// Held by the forward probe.
    Blocked,
    /// Backing up after getting stuck.
    Recovering,
    /// Turning to a goal's yaw.
    Aligning,
    /// Reached the last goal.
    Arrived,
    /// Gave up (unreachable goal, stuck after every recovery).
    Failed,
}

/// The navigator's state as a consumer reads it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NavState {
    /// Phase.
    pub phase: NavPhase,
    /// Index of the goal being approached (into the current route).
    pub goal_index: usize,
    /// The goal being approached, world (x, y).
    pub goal: Option<[f64; 2]>,
    /// Goals reached since the route was set.
    pub reached: u32,
    /// Stuck: recoveries ran out, or recovery is disabled.
    pub stuck: bool,
    /// Recoveries run for the current goal.
    pub recoveries: u32,
    /// Times the route was re-planned around a blockage.
    pub reroutes: u32,
    /// The current leg's path (world x, y), start first.
    pub path: Vec<[f64; 2]>,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// The entity the probe is holding for, when blocked by one that can move.
    pub blocked_by: Option<String>,
    /// Giving way to this entity out of a deadlock (both held for each other).
    pub yielding_to: Option<String>,
    /// It drives a base (output `drive`), so it can steer aside.
    pub drives: bool,
}

#[derive(Debug, Default)]
pub(super) struct Shared {
    pub(super) state: NavState,
    pub(super) route: Option<Vec<Vec<f64>>>,
    pub(super) run: Option<bool>,
}

/// Handle to one entity's navigator.
#[derive(Debug, Clone, Default)]
pub struct NavHandle(pub(super) Rc<RefCell<Shared>>);

impl NavHandle {
    /// Replace the route with `goals` (`[x, y]` or `[x, y, yaw]`, world metres); taken at the next
    /// update, and started.
    pub fn set_goals(&self, goals: Vec<Vec<f64>>) {
        self.0.borrow_mut().route = Some(goals);
    }
    /// Start (or resume) following the route.
    pub fn start(&self) {
        self.0.borrow_mut().run = Some(true);
    }
    /// Stop where it is (the route is kept; `start` resumes it).
    pub fn stop(&self) {
        self.0.borrow_mut().run = Some(false);
    }
    /// The latest state.
    pub fn state(&self) -> NavState {
        self.0.borrow().state.clone()
    }
}
