//! The controller registry: every controller of one robot, its type, lifecycle state and claimed
//! command interfaces — transport-free, because those are facts about the robot.
//!
//! A controller plugin (`arm_controller`, a Cartesian controller) [`Registry::declare`]s the
//! controllers it serves in `configure`; the world is ros2_control's parameter file, so only a
//! declared controller can be loaded. A plugin asks [`Registry::is_active`] every step; the ROS
//! bridge serves `controller_manager_msgs` out of [`Registry::list`], [`Registry::switch`],
//! [`Registry::load`], [`Registry::configure`], [`Registry::unload`] and
//! [`Registry::hardware_interfaces`]; a task plugin switches through the same calls.
//!
//! Semantics follow ros2_control's controller manager (Jazzy):
//! - lifecycle `unconfigured → inactive → active`; `load` puts a declared controller in
//!   `unconfigured`, `configure` moves it to `inactive`, `switch` activates/deactivates,
//!   `unload` finalizes it and is refused while it is active;
//! - only COMMAND interfaces are claimed, and only while active (`<joint>/position`); a
//!   broadcaster claims nothing;
//! - `switch` strictness: `BEST_EFFORT` (1) skips what cannot be done, `STRICT` (2) changes
//!   nothing unless everything can be done, `AUTO` (3) is `STRICT` here (no controller chains),
//!   `FORCE_AUTO` (4) deactivates whatever holds an interface a controller being activated needs;
//!   0 (a default-constructed request) is read as best effort. Neither `STRICT` nor `BEST_EFFORT`
//!   deactivates a controller the request did not name: a hand-over names both sides.
//!
//! - the robot is one hardware component with ros2_control's lifecycle
//!   ([`Registry::set_hardware_state`]): while it is not active a controller that commands it
//!   cannot be activated (while unconfigured or finalized, none can), its actuators take no
//!   commands ([`Registry::hardware_writes`]) and, unless inactive, it is not read
//!   ([`Registry::hardware_reads`]);
//! - each loaded controller has its node's parameters ([`crate::handles::controller_params`]):
//!   the declared ones at [`Registry::load_with`] (with a parameter file's overrides), changed by
//!   [`Registry::set_parameter`]; plugins re-read them when [`Registry::parameter_generation`]
//!   moves.
//!
//! Every transition is logged with the simulation time it happened at; a controller's plugin
//! publishes its own transitions on `<controller>/transition_event` ([`Registry::transitions_since`]).
//!
//! Scope is the robot (the entity): the registry lives on the blackboard under
//! `controllers:<entity>` ([`Registry::of`]). Everything runs on the physics thread (the bridge
//! posts a closure), so the shared state is an `Rc<RefCell<..>>`; cloning a `Registry` shares it.

use std::cell::RefCell;
use std::rc::Rc;

use crate::context::SimContext;
use crate::handles::controller_params::{self, ParamSpec, ParamValue};

pub mod command;

/// `SwitchController.srv` `BEST_EFFORT`.
pub const BEST_EFFORT: i32 = 1;
/// `SwitchController.srv` `STRICT`.
pub const STRICT: i32 = 2;
/// `SwitchController.srv` `AUTO`.
pub const AUTO: i32 = 3;
/// `SwitchController.srv` `FORCE_AUTO`.
pub const FORCE_AUTO: i32 = 4;

/// Blackboard key of a robot's registry.
pub fn registry_key(entity: &str) -> String {
    format!("controllers:{entity}")
}

/// How a switch treats what cannot be done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strictness {
    /// Do what can be done, skip the rest.
    BestEffort,
    /// All or nothing.
    Strict,
    /// `STRICT` here (it resolves controller chains upstream; nothing here is chained).
    Auto,
    /// Deactivate whatever blocks an activation.
    ForceAuto,
}

impl Strictness {
    /// From the service field: 1..4; 0 (a default-constructed request) reads as best effort.
    pub fn from_code(code: i32) -> Result<Strictness, String> {
        match code {
            0 | BEST_EFFORT => Ok(Strictness::BestEffort),
            STRICT => Ok(Strictness::Strict),
            AUTO => Ok(Strictness::Auto),
            FORCE_AUTO => Ok(Strictness::ForceAuto),
            other => Err(format!("strictness {other} is not one of BEST_EFFORT (1), STRICT (2), AUTO (3), FORCE_AUTO (4)")),
        }
    }
    fn strict(self) -> bool {
        matches!(self, Strictness::Strict | Strictness::Auto)
    }
}

/// A controller's lifecycle state (lifecycle_msgs/State primary states).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum State {
    /// Loaded, not configured.
    Unconfigured,
    /// Configured, not running.
    Inactive,
    /// Running (holds its claimed interfaces).
    Active,
    /// Unloaded.
    Finalized,
    /// Declared but not loaded: what a controller the world leaves to `spawner` starts as (as
    /// ros2_control's manager starts every controller of its parameter file). Only an initial
    /// state: a loaded controller is never in it, and `list_controllers` does not show it.
    #[default]
    Unloaded,
}

impl State {
    /// lifecycle_msgs/State id.
    pub fn id(self) -> u8 {
        match self {
            State::Unconfigured => 1,
            State::Inactive => 2,
            State::Active => 3,
            State::Finalized => 4,
            State::Unloaded => 0,
        }
    }
    /// lifecycle_msgs/State label (`active`, ...), as list_controllers reports it.
    pub fn label(self) -> &'static str {
        match self {
            State::Unconfigured => "unconfigured",
            State::Inactive => "inactive",
            State::Active => "active",
            State::Finalized => "finalized",
            State::Unloaded => "unloaded",
        }
    }
    /// Parse a label (`initial_state:` config).
    pub fn parse(s: &str) -> Option<State> {
        match s {
            "unloaded" => Some(State::Unloaded),
            "unconfigured" => Some(State::Unconfigured),
            "inactive" => Some(State::Inactive),
            "active" => Some(State::Active),
            _ => None,
        }
    }
}

/// What a plugin declares about a controller it serves.
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerSpec {
    /// Controller name (unique within the robot).
    pub name: String,
    /// ros2_control type name (`joint_trajectory_controller/JointTrajectoryController`).
    pub type_name: String,
    /// Command interfaces it claims while active (`shoulder_pan_joint/position`).
    pub command_interfaces: Vec<String>,
    /// State interfaces it reads (`shoulder_pan_joint/position`, `.../velocity`).
    pub state_interfaces: Vec<String>,
    /// Update rate (Hz) it reports (the physics rate for a plugin running every step).
    pub update_rate: u32,
    /// State it starts (and restarts on reset) in.
    pub initial_state: State,
    /// The plugin serving it (its address), for messages.
    pub owner: String,
    /// The parameters of its type that the controller node declares, beyond the base ones
    /// ([`controller_params::base`], added by the registry), with the world's values.
    pub parameters: Vec<ParamSpec>,
}

/// One row of `list_controllers` (controller_manager_msgs/ControllerState).
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerInfo {
    /// Name.
    pub name: String,
    /// Lifecycle state label.
    pub state: State,
    /// Type name.
    pub type_name: String,
    /// Update rate (Hz).
    pub update_rate: u32,
    /// Command interfaces held now (empty unless active).
    pub claimed_interfaces: Vec<String>,
    /// Command interfaces it would take.
    pub required_command_interfaces: Vec<String>,
    /// State interfaces it reads.
    pub required_state_interfaces: Vec<String>,
}

/// One row of `list_hardware_interfaces` (controller_manager_msgs/HardwareInterface).
#[derive(Debug, Clone, PartialEq)]
pub struct HardwareInterface {
    /// `<joint>/<interface>`.
    pub name: String,
    /// Command (true) or state (false) interface.
    pub is_command: bool,
    /// Always true here (the joints exist).
    pub is_available: bool,
    /// Held by an active controller (command interfaces only).
    pub is_claimed: bool,
}

/// A lifecycle transition, stamped with sim time (lifecycle_msgs/TransitionEvent content).
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    /// Sim time (s) it happened at.
    pub stamp: f64,
    /// Controller name.
    pub controller: String,
    /// Transition label (`configure`, `activate`, `deactivate`, `cleanup`, `shutdown`).
    pub label: &'static str,
    /// lifecycle_msgs/Transition id (configure 1, cleanup 2, activate 3, deactivate 4,
    /// unconfigured_shutdown 5, inactive_shutdown 6).
    pub id: u8,
    /// State before.
    pub start: State,
    /// State after.
    pub goal: State,
}

/// What a switch did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SwitchReport {
    /// Controllers activated, in order.
    pub activated: Vec<String>,
    /// Controllers deactivated, in order (incl. ones FORCE_AUTO chose).
    pub deactivated: Vec<String>,
    /// Best-effort skips, each with its reason.
    pub skipped: Vec<String>,
}

impl SwitchReport {
    /// A one-line summary for the service's `message`.
    pub fn message(&self) -> String {
        let mut parts = Vec::new();
        if !self.deactivated.is_empty() {
            parts.push(format!("deactivated [{}]", self.deactivated.join(", ")));
        }
        if !self.activated.is_empty() {
            parts.push(format!("activated [{}]", self.activated.join(", ")));
        }
        if !self.skipped.is_empty() {
            parts.push(format!("skipped: {}", self.skipped.join("; ")));
        }
        if parts.is_empty() {
            "nothing to switch".into()
        } else {
            parts.join("; ")
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    entity: String,
    declared: Vec<ControllerSpec>,
    /// Loaded controllers: (name, state), in load order.
    loaded: Vec<(String, State)>,
    /// Each loaded controller's parameters with their current values.
    values: Vec<(String, Vec<ParamSpec>)>,
    /// Bumped on every parameter change (plugins re-read their values when it moves).
    generation: u64,
    /// The hardware component's lifecycle state (the robot; `Unloaded` reads as active: the
    /// default, as ros2_control activates every component at start).
    hardware: Option<State>,
    log: Vec<Transition>,
    command_ifaces: Vec<String>,
    state_ifaces: Vec<String>,
    /// Model joint name (entity prefix removed) -> the name a controller reports it by.
    joint_names: std::collections::BTreeMap<String, String>,
}

impl Inner {
    fn spec(&self, name: &str) -> Option<&ControllerSpec> {
        self.declared.iter().find(|c| c.name == name)
    }
    fn state(&self, name: &str) -> Option<State> {
        self.loaded.iter().find(|(n, _)| n == name).map(|(_, s)| *s)
    }
    fn set(&mut self, name: &str, to: State, label: &'static str, id: u8, stamp: f64) {
        if let Some(e) = self.loaded.iter_mut().find(|(n, _)| n == name) {
            let from = e.1;
            e.1 = to;
            self.log.push(Transition {
                stamp,
                controller: name.to_string(),
                label,
                id,
                start: from,
                goal: to,
            });
        }
    }
    fn holder(&self, iface: &str, ignore: &[String]) -> Option<String> {
        self.loaded
            .iter()
            .filter(|(n, s)| *s == State::Active && !ignore.contains(n))
            .find(|(n, _)| {
                self.spec(n).is_some_and(|c| c.command_interfaces.iter().any(|i| i == iface))
            })
            .map(|(n, _)| n.clone())
    }
    fn names(&self) -> String {
        self.declared.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
    }
    fn hw(&self) -> State {
        self.hardware.unwrap_or(State::Active)
    }
    /// Mark `name` loaded (unconfigured) with its declared parameters, `overrides` applied.
    fn push_loaded(&mut self, name: &str, overrides: &[(String, ParamValue)]) {
        let mut values = self.declared_params(name);
        for (k, v) in overrides {
            if let Some(p) = values.iter_mut().find(|p| &p.name == k) {
                p.value = v.clone();
            }
        }
        self.loaded.push((name.to_string(), State::Unconfigured));
        self.values.retain(|(n, _)| n != name);
        self.values.push((name.to_string(), values));
        self.generation += 1;
    }
    fn declared_params(&self, name: &str) -> Vec<ParamSpec> {
        let Some(c) = self.spec(name) else { return Vec::new() };
        let mut out = controller_params::base(c.update_rate);
        out.extend(c.parameters.iter().cloned());
        out
    }
    /// Why `name` cannot be activated with the hardware component in its state (`None`: it can).
    fn hardware_blocks(&self, name: &str) -> Option<String> {
        let claims = self.spec(name).is_some_and(|c| !c.command_interfaces.is_empty());
        match self.hw() {
            State::Active => None,
            State::Inactive if !claims => None,
            State::Inactive => Some(format!(
                "cannot activate `{name}`: hardware component `{}` is inactive, so its command interfaces take no commands (activate it first: set_hardware_component_state active, or hardware_spawner {} --activate)",
                self.entity, self.entity
            )),
            s => Some(format!(
                "cannot activate `{name}`: hardware component `{}` is {}, so its interfaces are not available (configure and activate it first: hardware_spawner {} --activate)",
                self.entity,
                s.label(),
                self.entity
            )),
        }
    }
}

/// Handle to one robot's controller registry (blackboard `controllers:<entity>`).
#[derive(Debug, Clone, Default)]
pub struct Registry(Rc<RefCell<Inner>>);

impl Registry {
    /// An empty registry for `entity`.
    pub fn new(entity: &str) -> Registry {
        Registry(Rc::new(RefCell::new(Inner { entity: entity.to_string(), ..Default::default() })))
    }

    /// The registry of `entity` on the blackboard, created on first use.
    pub fn of(ctx: &mut SimContext, entity: &str) -> Registry {
        let key = registry_key(entity);
        if let Ok(r) = ctx.blackboard.get::<Registry>(&key) {
            return r.clone();
        }
        let r = Registry::new(entity);
        ctx.blackboard.set(key, r.clone());
        r
    }

    /// The registry of `entity`, if any controller was declared for it.
    pub fn get(ctx: &SimContext, entity: &str) -> Option<Registry> {
        ctx.blackboard.get::<Registry>(&registry_key(entity)).ok().cloned()
    }

    /// The robot (entity) this registry serves.
    pub fn entity(&self) -> String {
        self.0.borrow().entity.clone()
    }

    /// Declare a controller and bring it to its `initial_state` (logged at `stamp`, as spawner
    /// would: load, configure, activate); `Unloaded` leaves it declared only, for `spawner`. Refused: a name declared twice (naming both owners), and
    /// an initially active controller whose command interface another active controller already
    /// holds — two command sources on one joint — naming both.
    pub fn declare(&self, spec: ControllerSpec, stamp: f64) -> Result<(), String> {
        let mut r = self.0.borrow_mut();
        if let Some(c) = r.spec(&spec.name) {
            return Err(format!(
                "controller `{}` is declared twice on robot `{}` (by `{}` and `{}`); give one a distinct controller name",
                spec.name, r.entity, c.owner, spec.owner
            ));
        }
        if spec.initial_state == State::Active {
            for i in &spec.command_interfaces {
                if let Some(h) = r.holder(i, &[]) {
                    let owner = r.spec(&h).map(|c| c.owner.clone()).unwrap_or_default();
                    return Err(format!(
                        "`{}` (controller `{}`) would command `{i}`, which `{owner}` (controller `{h}`) already commands on robot `{}`: one command source per joint. \
                         Start one of them inactive (`initial_state: inactive`) and hand over with switch_controller, or give them disjoint joints",
                        spec.owner, spec.name, r.entity
                    ));
                }
            }
        }
        let name = spec.name.clone();
        let initial = spec.initial_state;
        r.declared.push(spec);
        if initial == State::Unloaded {
            return Ok(());
        }
        r.push_loaded(&name, &[]);
        if initial != State::Unconfigured {
            r.set(&name, State::Inactive, "configure", 1, stamp);
        }
        if initial == State::Active {
            r.set(&name, State::Active, "activate", 3, stamp);
        }
        Ok(())
    }

    /// Add hardware interfaces (`<joint>/position` ...) the robot offers; duplicates are ignored.
    pub fn add_hardware(&self, command: &[String], state: &[String]) {
        let mut r = self.0.borrow_mut();
        for c in command {
            if !r.command_ifaces.contains(c) {
                r.command_ifaces.push(c.clone());
            }
        }
        for s in state {
            if !r.state_ifaces.contains(s) {
                r.state_ifaces.push(s.clone());
            }
        }
    }

    /// Record the names a controller reports joints by, as `(model name, reported name)` pairs
    /// (an `arm_controller`'s `joint_prefix`), so a description of the robot names its joints as
    /// `/joint_states` does.
    pub fn name_joints(&self, pairs: &[(String, String)]) {
        let mut r = self.0.borrow_mut();
        for (m, n) in pairs {
            r.joint_names.insert(m.clone(), n.clone());
        }
    }

    /// Model joint name -> reported name, for the joints a controller reports under another name.
    pub fn joint_names(&self) -> std::collections::BTreeMap<String, String> {
        self.0.borrow().joint_names.clone()
    }

    /// Every LOADED controller, in load order (list_controllers).
    pub fn list(&self) -> Vec<ControllerInfo> {
        let r = self.0.borrow();
        r.loaded
            .iter()
            .filter_map(|(n, s)| {
                let c = r.spec(n)?;
                Some(ControllerInfo {
                    name: n.clone(),
                    state: *s,
                    type_name: c.type_name.clone(),
                    update_rate: c.update_rate,
                    claimed_interfaces: if *s == State::Active {
                        c.command_interfaces.clone()
                    } else {
                        Vec::new()
                    },
                    required_command_interfaces: c.command_interfaces.clone(),
                    required_state_interfaces: c.state_interfaces.clone(),
                })
            })
            .collect()
    }

    /// Names of every declared controller (loadable), in declaration order.
    pub fn declared(&self) -> Vec<String> {
        self.0.borrow().declared.iter().map(|c| c.name.clone()).collect()
    }

    /// Every declared controller's spec, declaration order (what an exporter of the robot's
    /// configuration mirrors).
    pub fn declared_specs(&self) -> Vec<ControllerSpec> {
        self.0.borrow().declared.clone()
    }

    /// Lifecycle state of a loaded controller (`None` = not loaded).
    pub fn state(&self, name: &str) -> Option<State> {
        self.0.borrow().state(name)
    }

    /// True while `name` is active.
    pub fn is_active(&self, name: &str) -> bool {
        self.state(name) == Some(State::Active)
    }

    /// load_controller: a declared, not loaded controller becomes `unconfigured`, with its
    /// declared parameters.
    pub fn load(&self, name: &str, stamp: f64) -> Result<(), String> {
        self.load_with(name, &[], stamp)
    }

    /// [`Registry::load`] with parameter overrides (a parameter file's values, already checked
    /// with [`ParamSpec::accept`] against [`Registry::declared_parameters`]).
    pub fn load_with(
        &self,
        name: &str,
        overrides: &[(String, ParamValue)],
        stamp: f64,
    ) -> Result<(), String> {
        let _ = stamp;
        let mut r = self.0.borrow_mut();
        if r.spec(name).is_none() {
            return Err(format!(
                "controller `{name}` is not declared for robot `{}`; the world is the parameter file, and it declares [{}]",
                r.entity,
                r.names()
            ));
        }
        if let Some(s) = r.state(name) {
            return Err(format!("controller `{name}` is already loaded (state {})", s.label()));
        }
        r.push_loaded(name, overrides);
        Ok(())
    }

    /// The parameters `name`'s node declares (base ones first) with the world's values
    /// (`None`: not declared).
    pub fn declared_parameters(&self, name: &str) -> Option<Vec<ParamSpec>> {
        let r = self.0.borrow();
        r.spec(name)?;
        Some(r.declared_params(name))
    }

    /// A loaded controller's parameters with their current values (`None`: not loaded).
    pub fn parameters(&self, name: &str) -> Option<Vec<ParamSpec>> {
        self.0.borrow().values.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
    }

    /// The current value of `param` of the loaded controller `name`.
    pub fn value(&self, name: &str, param: &str) -> Option<ParamValue> {
        let r = self.0.borrow();
        let (_, v) = r.values.iter().find(|(n, _)| n == name)?;
        v.iter().find(|p| p.name == param).map(|p| p.value.clone())
    }

    /// Set a parameter of a loaded controller (a set on its node): refused for an undeclared or
    /// read-only parameter and for a value [`ParamSpec::accept`] refuses.
    pub fn set_parameter(&self, name: &str, param: &str, value: ParamValue) -> Result<(), String> {
        let mut r = self.0.borrow_mut();
        let entity = r.entity.clone();
        let Some((_, values)) = r.values.iter_mut().find(|(n, _)| n == name) else {
            return Err(format!("controller `{name}` is not loaded on robot `{entity}`"));
        };
        let Some(p) = values.iter_mut().find(|p| p.name == param) else {
            return Err(format!("controller `{name}` has no parameter `{param}`"));
        };
        if p.read_only {
            return Err(format!("Trying to set a read-only parameter: {param}."));
        }
        p.value = p.accept(value)?;
        r.generation += 1;
        Ok(())
    }

    /// Moves on every parameter change of any controller of the robot (a plugin re-reads its
    /// values when it differs from the one it saw).
    pub fn parameter_generation(&self) -> u64 {
        self.0.borrow().generation
    }

    /// configure_controller: `unconfigured` (or `inactive`) → `inactive`. Refused for an active
    /// controller (deactivate it first) and for one not loaded.
    pub fn configure(&self, name: &str, stamp: f64) -> Result<(), String> {
        let mut r = self.0.borrow_mut();
        match r.state(name) {
            None => Err(format!(
                "controller `{name}` is not loaded on robot `{}`; load it first (loaded: [{}])",
                r.entity,
                loaded_names(&r)
            )),
            Some(State::Active) => {
                Err(format!("controller `{name}` is active; deactivate it before configuring it"))
            }
            Some(s) => {
                if s == State::Inactive {
                    // ros2_control cleans an inactive controller up before configuring it again.
                    r.set(name, State::Unconfigured, "cleanup", 2, stamp);
                }
                r.set(name, State::Inactive, "configure", 1, stamp);
                Ok(())
            }
        }
    }

    /// cleanup_controller: `inactive` → `unconfigured`; an unconfigured controller is already
    /// clean (nothing to do). Refused for an active controller and for one not loaded.
    pub fn cleanup(&self, name: &str, stamp: f64) -> Result<(), String> {
        let mut r = self.0.borrow_mut();
        match r.state(name) {
            None => Err(format!(
                "controller `{name}` is not loaded on robot `{}` (loaded: [{}])",
                r.entity,
                loaded_names(&r)
            )),
            Some(State::Unconfigured) => Ok(()),
            Some(State::Inactive) => {
                r.set(name, State::Unconfigured, "cleanup", 2, stamp);
                Ok(())
            }
            Some(s) => Err(format!(
                "controller `{name}` is {} and cannot be cleaned up; deactivate it first",
                s.label()
            )),
        }
    }

    /// The declared type of `name` (`None`: not declared).
    pub fn type_of(&self, name: &str) -> Option<String> {
        self.0.borrow().spec(name).map(|c| c.type_name.clone())
    }

    /// Every controller type the robot's plugins can load, sorted and deduplicated
    /// (list_controller_types).
    pub fn types(&self) -> Vec<String> {
        let mut t: Vec<String> =
            self.0.borrow().declared.iter().map(|c| c.type_name.clone()).collect();
        t.sort();
        t.dedup();
        t
    }

    /// The update rate (Hz) the robot's controllers run at (the highest declared; 0 if none).
    pub fn update_rate(&self) -> u32 {
        self.0.borrow().declared.iter().map(|c| c.update_rate).max().unwrap_or(0)
    }

    /// unload_controller: refused while the controller is active (as upstream refuses it);
    /// otherwise it is finalized and leaves the list (it stays declared, so it can be loaded again).
    pub fn unload(&self, name: &str, stamp: f64) -> Result<(), String> {
        let mut r = self.0.borrow_mut();
        match r.state(name) {
            None => Err(format!("controller `{name}` is not loaded on robot `{}` (loaded: [{}])", r.entity, loaded_names(&r))),
            Some(State::Active) => Err(format!(
                "controller `{name}` is active and cannot be unloaded; deactivate it first (switch_controller with deactivate_controllers: [{name}])"
            )),
            Some(s) => {
                let id = if s == State::Inactive { 6 } else { 5 };
                r.set(name, State::Finalized, "shutdown", id, stamp);
                r.loaded.retain(|(n, _)| n != name);
                r.values.retain(|(n, _)| n != name);
                Ok(())
            }
        }
    }

    /// switch_controller: activate and deactivate in one step. `strictness` is the service's
    /// field (0 reads as best effort). STRICT/AUTO: any problem refuses the whole request and
    /// changes nothing. BEST_EFFORT: problems are skipped (reported). FORCE_AUTO: like best effort,
    /// and a controller holding an interface an activation needs is deactivated. Deactivations run
    /// first, then activations; each is logged at `stamp`.
    pub fn switch(
        &self,
        activate: &[String],
        deactivate: &[String],
        strictness: i32,
        stamp: f64,
    ) -> Result<SwitchReport, String> {
        let s = Strictness::from_code(strictness)?;
        let mut r = self.0.borrow_mut();
        let mut rep = SwitchReport::default();
        let mut deact: Vec<String> = Vec::new();
        let mut act: Vec<String> = Vec::new();
        let problem = |msg: String, rep: &mut SwitchReport| -> Result<(), String> {
            if s.strict() {
                Err(msg)
            } else {
                rep.skipped.push(msg);
                Ok(())
            }
        };
        for n in deactivate {
            match r.state(n) {
                Some(State::Active) => {
                    if !deact.contains(n) {
                        deact.push(n.clone())
                    }
                }
                Some(st) => problem(
                    format!("cannot deactivate `{n}`: it is {}, not active", st.label()),
                    &mut rep,
                )?,
                None => problem(not_loaded(&r, n), &mut rep)?,
            }
        }
        for n in activate {
            if let Some(why) = r.hardware_blocks(n) {
                problem(why, &mut rep)?;
                continue;
            }
            match r.state(n) {
                Some(State::Inactive) => act.push(n.clone()),
                Some(State::Active) if deact.contains(n) => act.push(n.clone()), // restart
                Some(State::Active) => {
                    problem(format!("cannot activate `{n}`: it is already active"), &mut rep)?
                }
                Some(st) => problem(
                    format!("cannot activate `{n}`: it is {} (configure it first)", st.label()),
                    &mut rep,
                )?,
                None => problem(not_loaded(&r, n), &mut rep)?,
            }
        }
        // Claims: an activation needs every command interface free after the deactivations.
        let mut granted: Vec<String> = Vec::new();
        let mut claimed_here: Vec<(String, String)> = Vec::new(); // (iface, by)
        for n in act {
            let needs = r.spec(&n).map(|c| c.command_interfaces.clone()).unwrap_or_default();
            let mut blocked: Option<(String, String)> = None;
            for i in &needs {
                if let Some((_, by)) = claimed_here.iter().find(|(ci, _)| ci == i) {
                    blocked = Some((i.clone(), by.clone()));
                    break;
                }
                let mut ignore = deact.clone();
                ignore.push(n.clone());
                if let Some(h) = r.holder(i, &ignore) {
                    if s == Strictness::ForceAuto {
                        if !deact.contains(&h) {
                            deact.push(h);
                        }
                        continue;
                    }
                    blocked = Some((i.clone(), h));
                    break;
                }
            }
            if let Some((iface, by)) = blocked {
                problem(
                    format!(
                        "cannot activate `{n}`: `{iface}` is claimed by `{by}`, which this request does not deactivate (name it in deactivate_controllers, or use FORCE_AUTO)"
                    ),
                    &mut rep,
                )?;
                continue;
            }
            for i in needs {
                claimed_here.push((i, n.clone()));
            }
            granted.push(n);
        }
        for d in &deact {
            r.set(d, State::Inactive, "deactivate", 4, stamp);
            rep.deactivated.push(d.clone());
        }
        for a in &granted {
            r.set(a, State::Active, "activate", 3, stamp);
            rep.activated.push(a.clone());
        }
        Ok(rep)
    }

    /// Every command and state interface the robot offers, with claim flags
    /// (list_hardware_interfaces).
    pub fn hardware_interfaces(&self) -> Vec<HardwareInterface> {
        let r = self.0.borrow();
        // ros2_control makes a component's interfaces available when it is configured.
        let available = matches!(r.hw(), State::Inactive | State::Active);
        let mut out: Vec<HardwareInterface> = r
            .command_ifaces
            .iter()
            .map(|i| HardwareInterface {
                name: i.clone(),
                is_command: true,
                is_available: available,
                is_claimed: r.holder(i, &[]).is_some(),
            })
            .collect();
        out.extend(r.state_ifaces.iter().map(|i| HardwareInterface {
            name: i.clone(),
            is_command: false,
            is_available: available,
            is_claimed: false,
        }));
        out
    }

    /// The hardware component's (the robot's) lifecycle state: `active` unless a
    /// set_hardware_component_state moved it.
    pub fn hardware_state(&self) -> State {
        self.0.borrow().hw()
    }

    /// True while the hardware takes commands (ros2_control calls `write` only while a component
    /// is active): the arm's actuators follow the controllers; otherwise they hold the last command.
    pub fn hardware_writes(&self) -> bool {
        self.0.borrow().hw() == State::Active
    }

    /// True while the hardware is read (ros2_control calls `read` while a component is inactive
    /// or active): otherwise its state interfaces keep their last values.
    pub fn hardware_reads(&self) -> bool {
        matches!(self.0.borrow().hw(), State::Inactive | State::Active)
    }

    /// set_hardware_component_state, as ros2_control's resource manager moves a component:
    /// `unconfigured` (deactivate and clean up), `inactive` (configure, or deactivate),
    /// `active` (configure and activate), `finalized` (deactivate and shut down; a finalized
    /// component can only be destroyed, so every later target but `finalized` fails). Controllers
    /// keep their states, as upstream leaves them; only activations are refused while the
    /// component cannot serve them ([`Registry::switch`]). Returns the state reached.
    pub fn set_hardware_state(&self, target: State) -> Result<State, String> {
        let mut r = self.0.borrow_mut();
        let cur = r.hw();
        match (cur, target) {
            (State::Finalized, State::Finalized) => Ok(cur),
            (State::Finalized, _) => Err(format!(
                "hardware component `{}` is finalized and can only be destroyed (it stays finalized until the run ends)",
                r.entity
            )),
            (_, State::Unconfigured | State::Inactive | State::Active | State::Finalized) => {
                r.hardware = Some(target);
                r.generation += 1;
                Ok(target)
            }
            (_, State::Unloaded) => Err(format!(
                "hardware component `{}`: target state must be one of unconfigured (1), inactive (2), active (3), finalized (4)",
                r.entity
            )),
        }
    }

    /// The whole transition log, in order.
    pub fn log(&self) -> Vec<Transition> {
        self.0.borrow().log.clone()
    }

    /// Transitions of `controller` logged at index `>= *cursor`; advances the cursor (a producer's
    /// `transition_event` keeps one cursor per controller).
    pub fn transitions_since(&self, controller: &str, cursor: &mut usize) -> Vec<Transition> {
        let r = self.0.borrow();
        let out = r.log[(*cursor).min(r.log.len())..]
            .iter()
            .filter(|t| t.controller == controller)
            .cloned()
            .collect();
        *cursor = r.log.len();
        out
    }

    /// Put `name` back into its declared initial state (a reset: a repetition starts as the first
    /// did). A controller no longer loaded is loaded again. Transitions are logged at `stamp`.
    pub fn restore(&self, name: &str, stamp: f64) {
        let mut r = self.0.borrow_mut();
        let Some(initial) = r.spec(name).map(|c| c.initial_state) else { return };
        if initial == State::Unloaded {
            // Left to the spawner: the bringup that loaded it does not run again, so a reset
            // keeps the manager's state, as a simulator's reset leaves ros2_control alone.
            return;
        }
        if r.state(name).is_none() {
            r.push_loaded(name, &[]);
        }
        let cur = r.state(name).expect("loaded");
        if cur == initial {
            return;
        }
        if cur == State::Active {
            r.set(name, State::Inactive, "deactivate", 4, stamp);
        }
        let cur = r.state(name).expect("loaded");
        if initial == State::Unconfigured && cur == State::Inactive {
            r.set(name, State::Unconfigured, "cleanup", 2, stamp);
        }
        if initial != State::Unconfigured && cur == State::Unconfigured {
            r.set(name, State::Inactive, "configure", 1, stamp);
        }
        if initial == State::Active {
            // Another restored controller may hold the interfaces; leave it inactive then.
            let needs = r.spec(name).map(|c| c.command_interfaces.clone()).unwrap_or_default();
            if needs.iter().all(|i| r.holder(i, &[name.to_string()]).is_none())
                && r.hardware_blocks(name).is_none()
            {
                r.set(name, State::Active, "activate", 3, stamp);
            }
        }
    }
}

fn loaded_names(r: &Inner) -> String {
    r.loaded.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")
}

fn not_loaded(r: &Inner, n: &str) -> String {
    if r.spec(n).is_some() {
        format!("controller `{n}` is not loaded (load and configure it first)")
    } else {
        format!(
            "controller `{n}` does not exist on robot `{}` (declared: [{}])",
            r.entity,
            r.names()
        )
    }
}

#[cfg(test)]
mod tests;
