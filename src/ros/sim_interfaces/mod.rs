//! `sim_interfaces`: the ROS 2 `simulation_interfaces` standard (1.5.1, as Jazzy distributes it)
//! served natively, so a scenario or test harness drives roqsim with `ros2 service call` exactly as
//! it drives Gazebo or Isaac Sim: spawning is activation, not creation;
//! moving one needs a free joint; a reset restores the determinism anchor.
//!
//! The semantics and every result code live in [`crate::engine::sim_control`] (ROS-free, tested there);
//! this plugin only converts messages and decides *when* to answer:
//!
//! * Its own r2r node (`node_name`, default `roqsim_sim_interfaces`; it shares the process's rcl
//!   context with the `ros2_bridge` node, so `--ros-args -r __ns:=/sim` moves both) serves the
//!   services below under `namespace` (default: the node's, i.e. `/get_entities` for an
//!   unremapped node, the way Gazebo's ros_gz serves them under its node; `/` or `/sim` for an
//!   absolute place, the way Isaac Sim serves them under `/`).
//! * A request arrives on the `roqsim-sim-ifaces` thread, which posts a command
//!   ([`crate::context::CommandSender`]) carrying a reply channel; the command calls
//!   `sim_control` on the physics thread and replies; the thread awaits the reply and responds.
//!   Nothing off the physics thread touches MjData.
//! * StepSimulation answers after its N steps were taken *and* the driver came round once more
//!   (so the bridge has published /clock of the last step). SimulateSteps publishes one feedback
//!   per step (completed, remaining), at most [`FEEDBACK_WINDOW`] steps ahead of the published
//!   feedback (an rclpy/rclcpp action client keeps 10), and is cancelable (the remaining steps are
//!   dropped). ResetSimulation and SetSimulationState(STOPPED) answer once the driver took the
//!   reset, so a GetEntities right after sees the reset world.
//!
//! | service / action (type) | name |
//! | --- | --- |
//! | GetSimulatorFeatures | `get_simulator_features` |
//! | GetEntities, GetEntitiesStates | `get_entities`, `get_entities_states` |
//! | GetEntityState, SetEntityState | `get_entity_state`, `set_entity_state` |
//! | GetEntityInfo | `get_entity_info` |
//! | GetSpawnables, SpawnEntity, DeleteEntity | `get_spawnables`, `spawn_entity`, `delete_entity` |
//! | GetSimulationState, SetSimulationState | `get_simulation_state`, `set_simulation_state` |
//! | StepSimulation, ResetSimulation | `step_simulation`, `reset_simulation` |
//! | SimulateSteps (action) | `simulate_steps` |
//!
//! The package's other services (GetEntityBounds, GetNamedPoses, GetNamedPoseBounds,
//! SetEntityInfo, SpawnEntities, LoadWorld, UnloadWorld, GetAvailableWorlds, GetCurrentWorld) are
//! served too and answer `RESULT_FEATURE_UNSUPPORTED` naming the missing feature, so a caller
//! never waits for a service that is not there; GetSimulatorFeatures does not list them.
//!
//! Conventions this layer adds on top of `sim_control` (docs/sim_interfaces.md has the table):
//! entity states are in the `world` frame (header stamped with sim time); a request's frame must be
//! empty or `world`; an absent entity is not found by GetEntityState / SetEntityState /
//! GetEntityInfo (it is a spawnable, not an entity, until spawned); SpawnEntity's `initial_pose`
//! left at its default (origin, identity or zero quaternion) keeps the declared pose;
//! `allow_renaming: true` lets a differing `name` fall back to the compiled name (reported in
//! `entity_name`); `set_acceleration` is refused (accelerations come from forces).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use futures::executor::LocalSpawner;
use r2r::simulation_interfaces::srv;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::{RunState, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::ros::names;

/// SimulateSteps: steps taken at most ahead of the feedback the ROS thread has published. rcl
/// action clients subscribe to feedback with keep-last 10 (rclpy `feedback_sub_qos_profile`,
/// rcl_action's default), so a burst of 5 is never overwritten before it is read.
pub const FEEDBACK_WINDOW: u64 = 5;
/// How long one `spin_once` of the service thread may block: the latency a reply from the physics
/// thread waits before it is sent (a request itself wakes the thread at once).
const SPIN_TIMEOUT: Duration = Duration::from_millis(2);
/// At shutdown: time left to the service thread to send the last answers (a QUITTING reply).
const LINGER: Duration = Duration::from_millis(200);
/// The frame entity states are expressed in (MuJoCo's world frame).
pub const WORLD_FRAME: &str = "world";

fn default_node_name() -> String {
    "roqsim_sim_interfaces".to_string()
}

/// Config of `sim_interfaces` (appended by `roqsim sim --sim-control`).
#[derive(Debug, Clone, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SimInterfacesConfig {
    /// Where the services and the action live. Default "" = the node's namespace
    /// (`/get_entities` for a node left in the root namespace, `/sim/get_entities` once launched
    /// with `namespace:=sim`, as Gazebo's ros_gz serves them). A relative `sim` goes under the node's
    /// namespace (`<node ns>/sim/get_entities`); an absolute `/` or `/sim` is used as given (Isaac
    /// Sim serves them under `/`).
    #[serde(default)]
    pub namespace: String,
    /// ROS node name of the services. Default `roqsim_sim_interfaces` (the bridge's node is
    /// `roqsim`; two nodes of one name would confuse `ros2 node` tools).
    #[serde(default = "default_node_name")]
    pub node_name: String,
    /// Start in STATE_PAUSED instead of STATE_PLAYING (Gazebo's default): nothing steps until
    /// SetSimulationState(PLAYING), StepSimulation or SimulateSteps. Default false.
    #[serde(default)]
    pub start_paused: bool,
}

impl Default for SimInterfacesConfig {
    fn default() -> Self {
        SimInterfacesConfig {
            namespace: String::new(),
            node_name: default_node_name(),
            start_paused: false,
        }
    }
}

impl ValidateConfig for SimInterfacesConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if let Err(m) = names::check_namespace(&self.namespace) {
            e.push(ConfigError::new("namespace", m));
        }
        if self.node_name.is_empty()
            || !self.node_name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || self.node_name.starts_with(|c: char| c.is_ascii_digit())
        {
            e.push(ConfigError::new(
                "node_name",
                format!(
                    "`{}` is not a ROS node name (letters, digits, `_`; not starting with a digit)",
                    self.node_name
                ),
            ));
        }
        e
    }
}

/// The full name of service `name` under the configured namespace: relative names resolve
/// against the node's namespace, absolute ones are used as given.
pub fn service_name(namespace: &str, name: &str) -> String {
    let ns = namespace.trim_end_matches('/');
    if ns.is_empty() {
        if namespace.starts_with('/') {
            format!("/{name}")
        } else {
            name.to_string()
        }
    } else {
        format!("{ns}/{name}")
    }
}

/// The registry entry (`transport_only`: dropped by `--no-communication`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "sim_interfaces",
        "ROS 2 simulation_interfaces (1.5.1): entities, spawn/delete as activation, entity state, play/pause/stop, StepSimulation, SimulateSteps, ResetSimulation.",
        SimInterfacesConfig,
        SimInterfaces
    )
    .transport_only()
}

mod handlers;
mod jobs;
mod server;

use handlers::*;
use jobs::{progress, Link, Shared};
use server::{ros_thread, serve, serve_action, spawn, unsupported};

// ------------------------------------------------------------------------------ the plugin

/// The plugin.
pub struct SimInterfaces {
    cfg: SimInterfacesConfig,
    address: String,
    shared: Arc<Mutex<Shared>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl SimInterfaces {
    /// A plugin from its config.
    pub fn new(cfg: SimInterfacesConfig, args: &PluginArgs) -> Self {
        SimInterfaces {
            cfg,
            address: args.address.clone(),
            shared: Default::default(),
            stop: Arc::new(AtomicBool::new(false)),
            thread: None,
        }
    }
}

impl Plugin for SimInterfaces {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::POST_STEP | Hooks::SHUTDOWN
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let rctx = r2r::Context::create().map_err(|e| {
            format!("cannot start ROS 2 (rcl init failed: {e}); source scripts/env.sh (ROS libraries, RMW_IMPLEMENTATION, HOME) before running with --sim-control")
        })?;
        // A process-wide node-name remap names the bridge's node; this one derives its name from
        // it (one name per node), and takes the remapped namespace (crate::ros::remap).
        let node_name = match std::env::var(crate::ros::remap::NODE_NAME_ENV) {
            Ok(main) if !main.is_empty() && self.cfg.node_name == default_node_name() => {
                format!("{main}_sim_interfaces")
            }
            _ => self.cfg.node_name.clone(),
        };
        let mut node = r2r::Node::create(rctx, &node_name, &crate::ros::remap::namespace())
            .map_err(|e| format!("cannot create the ROS node `{node_name}`: {e}"))?;
        let fq = node.fully_qualified_name().unwrap_or_else(|_| format!("/{node_name}"));
        let mut table = crate::ros::params::Table::new(false);
        let ust = crate::ros::params::override_of(&node, "use_sim_time")
            .unwrap_or(crate::ros::params::bool_value(true));
        table.declare("use_sim_time", ust, true, "roqsim's time is the simulation's");
        table.declare(
            "namespace",
            crate::ros::params::string_value(&self.cfg.namespace),
            true,
            "where the simulation_interfaces services are served (\"\" = the node's namespace)",
        );
        table.declare(
            "start_paused",
            crate::ros::params::bool_value(self.cfg.start_paused),
            true,
            "the run started PAUSED",
        );
        let param_tasks = crate::ros::params::serve(&mut node, &fq, Arc::new(Mutex::new(table)))?;
        let link = Link { commands: ctx.command_sender(), shared: self.shared.clone() };
        let ns = self.cfg.namespace.clone();
        let n = |s: &str| service_name(&ns, s);
        let starters = vec![
            serve::<srv::GetSimulatorFeatures::Service>(&mut node, &n("get_simulator_features"), &link, h_features)?,
            serve::<srv::GetEntities::Service>(&mut node, &n("get_entities"), &link, h_entities)?,
            serve::<srv::GetEntitiesStates::Service>(&mut node, &n("get_entities_states"), &link, h_entities_states)?,
            serve::<srv::GetEntityState::Service>(&mut node, &n("get_entity_state"), &link, h_entity_state)?,
            serve::<srv::SetEntityState::Service>(&mut node, &n("set_entity_state"), &link, h_set_entity_state)?,
            serve::<srv::GetEntityInfo::Service>(&mut node, &n("get_entity_info"), &link, h_entity_info)?,
            serve::<srv::GetSpawnables::Service>(&mut node, &n("get_spawnables"), &link, h_spawnables)?,
            serve::<srv::SpawnEntity::Service>(&mut node, &n("spawn_entity"), &link, h_spawn)?,
            serve::<srv::DeleteEntity::Service>(&mut node, &n("delete_entity"), &link, h_delete)?,
            serve::<srv::GetSimulationState::Service>(&mut node, &n("get_simulation_state"), &link, h_get_state)?,
            serve::<srv::SetSimulationState::Service>(&mut node, &n("set_simulation_state"), &link, h_set_state)?,
            serve::<srv::StepSimulation::Service>(&mut node, &n("step_simulation"), &link, h_step)?,
            serve::<srv::ResetSimulation::Service>(&mut node, &n("reset_simulation"), &link, h_reset)?,
            serve_action(&mut node, &n("simulate_steps"), &link)?,
            unsupported::<srv::GetEntityBounds::Service>(&mut node, &n("get_entity_bounds"), "GetEntityBounds is not supported (ENTITY_BOUNDS is not among the simulator features)")?,
            unsupported::<srv::GetNamedPoses::Service>(&mut node, &n("get_named_poses"), "GetNamedPoses is not supported (NAMED_POSES is not among the simulator features)")?,
            unsupported::<srv::GetNamedPoseBounds::Service>(&mut node, &n("get_named_pose_bounds"), "GetNamedPoseBounds is not supported (POSE_BOUNDS is not among the simulator features)")?,
            unsupported::<srv::SetEntityInfo::Service>(&mut node, &n("set_entity_info"), "SetEntityInfo is not supported (ENTITY_INFO_SETTING is not among the simulator features): an entity's category comes from its kind")?,
            unsupported::<srv::SpawnEntities::Service>(&mut node, &n("spawn_entities"), "SpawnEntities is not supported (SPAWNING_ENTITIES is not among the simulator features): call SpawnEntity once per entity")?,
            unsupported::<srv::LoadWorld::Service>(&mut node, &n("load_world"), "LoadWorld is not supported (WORLD_LOADING is not among the simulator features): a roqsim run has exactly one world, given on its command line")?,
            unsupported::<srv::UnloadWorld::Service>(&mut node, &n("unload_world"), "UnloadWorld is not supported (WORLD_UNLOADING is not among the simulator features): a roqsim run has exactly one world")?,
            unsupported::<srv::GetAvailableWorlds::Service>(&mut node, &n("get_available_worlds"), "GetAvailableWorlds is not supported (AVAILABLE_WORLDS is not among the simulator features): `roqsim sim <name>` lists the bundled worlds when given an unknown one")?,
            unsupported::<srv::GetCurrentWorld::Service>(&mut node, &n("get_current_world"), "GetCurrentWorld is not supported (WORLD_INFO_GETTING is not among the simulator features)")?,
        ];
        let mut starters = starters;
        starters.push(Box::new(move |sp: &LocalSpawner| {
            for t in param_tasks {
                spawn(sp, t);
            }
        }));
        if self.cfg.start_paused {
            ctx.control.state = RunState::Paused;
        }
        let stop = self.stop.clone();
        let thread = std::thread::Builder::new()
            .name("roqsim-sim-ifaces".into())
            .spawn(move || ros_thread(node, starters, stop))
            .map_err(|e| format!("cannot start the simulation_interfaces thread: {e}"))?;
        self.thread = Some(thread);
        tracing::info!(
            "[{}] simulation_interfaces on node {fq}: services under `{}`{}",
            self.address,
            if ns.is_empty() { "the node's namespace" } else { ns.as_str() },
            if self.cfg.start_paused { ", starting PAUSED" } else { "" }
        );
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let mut sh = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        if ctx.control.reset.is_none() && !sh.after_reset.is_empty() {
            for reply in std::mem::take(&mut sh.after_reset) {
                reply(ctx);
            }
        }
        progress(ctx, &mut sh);
        Ok(())
    }

    fn shutdown(&mut self, _ctx: &mut SimContext) -> HookResult {
        // Pending answers are dropped: their requests are told the simulation ended.
        {
            let mut sh = self.shared.lock().unwrap_or_else(|p| p.into_inner());
            sh.after_reset.clear();
            sh.job = None;
        }
        if let Some(t) = self.thread.take() {
            std::thread::sleep(LINGER);
            self.stop.store(true, Ordering::SeqCst);
            let _ = t.join();
        }
        tracing::debug!("[{}] simulation_interfaces stopped", self.address);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::jobs::Reply;
    use super::*;
    use crate::context::{Entity, EntityKind};
    use crate::engine::sim_control as sc;

    #[test]
    fn service_names_follow_the_namespace() {
        assert_eq!(
            service_name("", "get_entities"),
            "get_entities",
            "relative: the node's namespace"
        );
        assert_eq!(service_name("/", "get_entities"), "/get_entities");
        assert_eq!(service_name("/sim", "get_entities"), "/sim/get_entities");
        assert_eq!(service_name("/sim/", "step_simulation"), "/sim/step_simulation");
        assert_eq!(service_name("sim", "get_entities"), "sim/get_entities");
    }

    #[test]
    fn config_defaults_and_refusals() {
        let c: SimInterfacesConfig =
            crate::plugin::typed_config(&serde_norway::from_str("{}").unwrap()).unwrap();
        assert_eq!(c, SimInterfacesConfig::default());
        assert_eq!(
            (c.namespace.as_str(), c.node_name.as_str(), c.start_paused),
            ("", "roqsim_sim_interfaces", false)
        );
        let bad = SimInterfacesConfig {
            namespace: "a//b".into(),
            node_name: "9x".into(),
            start_paused: false,
        };
        let e = bad.validate();
        assert_eq!(
            e.iter().map(|e| e.path.as_str()).collect::<Vec<_>>(),
            ["namespace", "node_name"],
            "{e:?}"
        );
        assert!(e[1].message.contains("`9x` is not a ROS node name"));
        let unknown = crate::plugin::typed_config::<SimInterfacesConfig>(
            &serde_norway::from_str("{namespce: sim}").unwrap(),
        )
        .unwrap_err();
        assert!(unknown.iter().any(|e| e.message.contains("namespce")), "{unknown:?}");
    }

    #[test]
    fn features_report_lockstep_exactly_when_sim_sync_is_enabled() {
        for lockstep in [false, true] {
            let run = crate::context::RunInfo { lockstep, ..Default::default() };
            let mut ctx = SimContext::new(0.002, Some(1), run);
            let (tx, mut rx) = futures::channel::oneshot::channel();
            let req = r2r::simulation_interfaces::srv::GetSimulatorFeatures::Request::default();
            h_features(req, Reply(tx), &mut ctx, &mut Shared::default());
            let f = rx.try_recv().unwrap().expect("answered at once").features;
            // no lockstep constant exists in simulation_interfaces 1.5: the standard list is
            // unchanged, custom_info says it
            assert_eq!(f.features, sc::FEATURES.to_vec());
            assert!(f.spawn_formats.is_empty());
            let want = if lockstep {
                ". lockstep: true (sim.sync is enabled"
            } else {
                ". lockstep: false"
            };
            assert!(f.custom_info.contains(want), "{lockstep}: {}", f.custom_info);
            assert!(f.custom_info.starts_with("roqsim: SpawnEntity activates an entity"));
        }
    }

    #[test]
    fn descriptions_name_kind_model_motion_and_presence() {
        let mut e = Entity::new("box", EntityKind::Object, "box_body");
        e.model = "box".into();
        e.weld_reason =
            Some("motion: static (welded scenery; give `motion: physics` to move it)".into());
        assert_eq!(describe(&e), "object `box`, welded: motion: static (welded scenery; give `motion: physics` to move it), declared present");
        e.free_joint = Some("box_free".into());
        e.declared_present = false;
        assert_eq!(
            describe(&e),
            "object `box`, movable (free joint), declared absent (present: false)"
        );
    }
}
