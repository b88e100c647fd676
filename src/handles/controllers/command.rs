//! The controller manager's requests that change the simulation, transport-neutral: load (with
//! the parameter values the load resolved), configure, cleanup, unload, switch, reload the
//! controller libraries, set the hardware component's state, and set a loaded controller's
//! parameter. The ROS 2 controller manager ([`crate::ros::controller_manager`]) and the controller
//! nodes turn each request into a [`ControllerCommand`] and call [`apply`] on the physics thread;
//! [`apply`] notes the command for an observer ([`crate::context::Interface::tap_controller`]) and
//! runs it against the robot's [`Registry`], so a replay makes the same call at the same step and
//! gets the same outcome, refusals included. Read-only requests (list_controllers, ...) change
//! nothing and are not commands.

use serde::{Deserialize, Serialize};

use crate::context::SimContext;
use crate::handles::controller_params::ParamValue;
use crate::handles::controllers::{ControllerInfo, Registry, State, SwitchReport, STRICT};

/// One request, with what the transport resolved before the registry is called.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ControllerCommand {
    /// load_controller, with the parameter values its parameter files gave (checked already):
    /// [`Registry::load_with`].
    Load {
        /// Controller name.
        name: String,
        /// `(parameter, value)` overrides of the declared values.
        overrides: Vec<(String, ParamValue)>,
    },
    /// configure_controller: [`Registry::configure`].
    Configure {
        /// Controller name.
        name: String,
    },
    /// cleanup_controller: [`Registry::cleanup`].
    Cleanup {
        /// Controller name.
        name: String,
    },
    /// unload_controller: [`Registry::unload`].
    Unload {
        /// Controller name.
        name: String,
    },
    /// switch_controller: [`Registry::switch`]. `activate_asap` is kept as the request gave it;
    /// the switch happens before the next step either way.
    Switch {
        /// Controllers to activate.
        activate: Vec<String>,
        /// Controllers to deactivate.
        deactivate: Vec<String>,
        /// The request's strictness (0 reads as best effort).
        strictness: i32,
        /// The request's `activate_asap`.
        activate_asap: bool,
    },
    /// reload_controller_libraries: nothing to reload (controllers are built in); refused while
    /// controllers are loaded unless `force_kill`, which deactivates and unloads them first.
    ReloadLibraries {
        /// The request's `force_kill`.
        force_kill: bool,
    },
    /// set_hardware_component_state: the component (the robot's entity) to the target state,
    /// given by id (1..4), or by label when the id is 0.
    SetHardwareState {
        /// Component name.
        component: String,
        /// lifecycle_msgs/State id of the target.
        id: u8,
        /// Its label.
        label: String,
    },
    /// A parameter set on a loaded controller's node: [`Registry::set_parameter`].
    SetParameter {
        /// Controller name.
        controller: String,
        /// Parameter name.
        param: String,
        /// The value.
        value: ParamValue,
    },
}

/// What a command did.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Done (load, configure, cleanup, unload, reload, set parameter).
    Done,
    /// A switch, with what it did.
    Switched(SwitchReport),
    /// The hardware component moved from one state to another.
    Hardware {
        /// State before.
        from: State,
        /// State reached.
        to: State,
    },
}

/// The lifecycle state a set_hardware_component_state target names: by id (1..4), or by label
/// when the id is 0, as ros2_control's resource manager reads it; `None`: no primary state it
/// moves components to.
pub fn target_state(id: u8, label: &str) -> Option<State> {
    match id {
        0 => match label {
            "unconfigured" => Some(State::Unconfigured),
            "inactive" => Some(State::Inactive),
            "active" => Some(State::Active),
            "finalized" => Some(State::Finalized),
            _ => None,
        },
        1 => Some(State::Unconfigured),
        2 => Some(State::Inactive),
        3 => Some(State::Active),
        4 => Some(State::Finalized),
        _ => None,
    }
}

/// Run `cmd` against `entity`'s registry (physics thread), stamped with the current sim time,
/// after noting it for an observer. Refused: a robot with no controllers, and whatever the
/// registry refuses (the reason).
pub fn apply(
    ctx: &mut SimContext,
    entity: &str,
    cmd: &ControllerCommand,
) -> Result<Outcome, String> {
    ctx.interface.tap_controller(|| (entity.to_string(), cmd.clone()));
    let r = Registry::get(ctx, entity)
        .ok_or_else(|| format!("robot `{entity}` has no controllers (no controller registry)"))?;
    let t = ctx.sim_time();
    let done = match cmd {
        ControllerCommand::Load { name, overrides } => r.load_with(name, overrides, t),
        ControllerCommand::Configure { name } => r.configure(name, t),
        ControllerCommand::Cleanup { name } => r.cleanup(name, t),
        ControllerCommand::Unload { name } => r.unload(name, t),
        ControllerCommand::Switch { activate, deactivate, strictness, .. } => {
            return r.switch(activate, deactivate, *strictness, t).map(Outcome::Switched)
        }
        ControllerCommand::ReloadLibraries { force_kill } => reload(&r, *force_kill, t),
        ControllerCommand::SetHardwareState { component, id, label } => {
            return set_hardware_state(&r, component, *id, label)
        }
        ControllerCommand::SetParameter { controller, param, value } => {
            r.set_parameter(controller, param, value.clone())
        }
    };
    done.map(|()| Outcome::Done)
}

fn reload(r: &Registry, force_kill: bool, t: f64) -> Result<(), String> {
    let loaded: Vec<ControllerInfo> = r.list();
    if loaded.is_empty() {
        return Ok(());
    }
    if !force_kill {
        return Err(format!(
            "{} controllers are loaded ([{}]); controller libraries are reloaded only with none loaded, or with force_kill: true (which deactivates and unloads them)",
            loaded.len(),
            loaded.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    let active: Vec<String> =
        loaded.iter().filter(|c| c.state == State::Active).map(|c| c.name.clone()).collect();
    r.switch(&[], &active, STRICT, t)?;
    for c in &loaded {
        r.unload(&c.name, t)?;
    }
    Ok(())
}

fn set_hardware_state(r: &Registry, name: &str, id: u8, label: &str) -> Result<Outcome, String> {
    let entity = r.entity();
    if name != entity {
        return Err(format!("hardware component `{name}` does not exist (components: [{entity}])"));
    }
    let from = r.hardware_state();
    let to = target_state(id, label).ok_or_else(|| {
        format!(
            "target state {id} `{label}` is not one of unconfigured (1), inactive (2), active (3), finalized (4)"
        )
    })?;
    r.set_hardware_state(to).map(|to| Outcome::Hardware { from, to })
}
