//! Each loaded controller's own node, as ros2_control makes every controller a (lifecycle) node
//! `/<manager namespace>/<controller>`: it appears when the controller is loaded and goes when it
//! is unloaded, so `ros2 node list` shows the loaded controllers and `ros2 param list/get/set
//! /<ns>/<controller>` reaches their parameters ([`crate::handles::controller_params`]).
//!
//! A node serves the six parameter services and `/parameter_events` ([`crate::ros::params`])
//! over the controller's parameters with their current values (a `spawner --param-file` file's
//! values were applied at load), plus `use_sim_time`. A set is checked the way the simulator
//! can honour it (read-only, type, bound, a fixed value) and, once accepted, handed to the
//! physics thread (a [`ControllerCommand::SetParameter`], which a recording logs and a replay
//! applies again), where the controller's plugin re-reads it.
//! Like ros2_control's controller nodes, they have no lifecycle services (the manager drives the
//! lifecycle); `<controller>/transition_event` is published by the bridge.
//!
//! The nodes are spun on their manager's `roqsim-ros-cm` thread ([`spin`]): the manager's node
//! blocks in its wait for up to `timeout` (10 ms); every [`POLL_PERIOD`] (50 ms) the controller
//! nodes are then polled without waiting, so a controller adds no thread and no wake-ups of its
//! own, and a request to a controller node waits at most about 60 ms. (Polling them after every
//! wait cost the thread 4x its CPU with three controllers: a zero-timeout `spin_once` builds and
//! tears down a wait set.)

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;
use r2r::rcl_interfaces::msg::ParameterValue;

use crate::context::{CommandSender, SimContext};
use crate::handles::controller_params::ParamSpec;
use crate::handles::controllers::command::{self, ControllerCommand};
use crate::ros::convert::Task;
use crate::ros::params;

/// How often the controller nodes are polled.
pub const POLL_PERIOD: Duration = Duration::from_millis(50);

/// One loaded controller's name and parameters with their current values.
pub type Loaded = Vec<(String, Vec<ParamSpec>)>;

/// The controller nodes of one manager.
pub struct ControllerNodes {
    rctx: r2r::Context,
    ns: String,
    entity: String,
    commands: CommandSender,
    use_sim_time: bool,
    nodes: Vec<(String, r2r::Node)>,
    pending: Vec<Task>,
    /// Physics-thread order of the newest snapshot synced (answers can arrive out of order).
    seq: u64,
}

/// Shared between the manager's service tasks (which create and drop nodes before answering)
/// and the thread spinning them.
pub type Shared = Arc<Mutex<ControllerNodes>>;

impl ControllerNodes {
    /// No nodes yet, for the manager of `entity` in namespace `ns`.
    pub fn new(
        rctx: &r2r::Context,
        ns: &str,
        entity: &str,
        commands: &CommandSender,
        use_sim_time: bool,
    ) -> ControllerNodes {
        ControllerNodes {
            rctx: rctx.clone(),
            ns: ns.to_string(),
            entity: entity.to_string(),
            commands: commands.clone(),
            use_sim_time,
            nodes: Vec::new(),
            pending: Vec::new(),
            seq: 0,
        }
    }

    /// The names of the controllers with a node, in load order.
    pub fn names(&self) -> Vec<String> {
        self.nodes.iter().map(|(n, _)| n.clone()).collect()
    }

    /// Make the nodes match the loaded controllers of the snapshot taken `seq`-th on the physics
    /// thread: a node for each newly loaded one (with its parameters' current values), none for a
    /// controller no longer loaded. An older snapshot than one already synced is ignored
    /// (returns false).
    pub fn sync(&mut self, seq: u64, loaded: &Loaded) -> bool {
        if seq < self.seq {
            return false;
        }
        self.seq = seq;
        self.nodes.retain(|(n, _)| loaded.iter().any(|(l, _)| l == n));
        for (name, specs) in loaded {
            if self.nodes.iter().any(|(n, _)| n == name) {
                continue;
            }
            match self.create(name, specs) {
                Ok((node, tasks)) => {
                    self.nodes.push((name.clone(), node));
                    self.pending.extend(tasks);
                }
                Err(e) => tracing::error!("controller `{name}`: no node of its own: {e}"),
            }
        }
        true
    }

    fn create(&self, name: &str, specs: &[ParamSpec]) -> Result<(r2r::Node, Vec<Task>), String> {
        let mut node = r2r::Node::create(self.rctx.clone(), name, &self.ns)
            .map_err(|e| format!("cannot create the node {name} in {}: {e}", self.ns))?;
        let fq = node.fully_qualified_name().map_err(|e| e.to_string())?;
        let mut table = params::Table::new(false);
        let ust = params::override_of(&node, "use_sim_time")
            .unwrap_or_else(|| params::bool_value(self.use_sim_time));
        table.declare("use_sim_time", ust, true, "roqsim's controllers run on simulation time");
        for p in specs {
            table.declare(&p.name, params::to_ros(&p.value), p.read_only, &p.description);
        }
        let checks: Vec<ParamSpec> = specs.to_vec();
        let validate: params::Validator = Arc::new(move |k: &str, v: &ParameterValue| {
            let spec = checks.iter().find(|p| p.name == k)?;
            let value = params::from_ros(v)?;
            spec.accept(value).err()
        });
        let (commands, entity, controller) =
            (self.commands.clone(), self.entity.clone(), name.to_string());
        let on_set: params::OnSet = Arc::new(move |k: &str, v: &ParameterValue| {
            let Some(value) = params::from_ros(v) else { return };
            let (entity, controller, k) = (entity.clone(), controller.clone(), k.to_string());
            commands.post(move |ctx: &mut SimContext| {
                let cmd = ControllerCommand::SetParameter {
                    controller: controller.clone(),
                    param: k.clone(),
                    value,
                };
                match command::apply(ctx, &entity, &cmd) {
                    Ok(_) => tracing::info!("controller `{controller}`: `{k}` set"),
                    Err(e) => tracing::warn!("controller `{controller}`: `{k}` not set: {e}"),
                }
            });
        });
        table.hooks(validate, on_set);
        let tasks = params::serve(&mut node, &fq, Arc::new(Mutex::new(table)))?;
        tracing::info!("controller `{name}`: node {fq} ({} parameters)", specs.len() + 1);
        Ok((node, tasks))
    }
}

/// Spin a manager's node and its controllers' nodes, polling their tasks, until `stop`;
/// `refresh` runs after every wait (the manager's periodic sync with the registry).
pub fn spin(
    mut node: r2r::Node,
    tasks: Vec<Task>,
    controllers: Shared,
    mut refresh: Box<dyn FnMut() + Send>,
    timeout: Duration,
    stop: &AtomicBool,
    address: &str,
) {
    let mut pool = LocalPool::new();
    let spawner = pool.spawner();
    let start = |t: Task| {
        if let Err(e) = spawner.spawn_local(t) {
            tracing::error!("[{address}] cannot start a controller_manager task: {e}");
        }
    };
    tasks.into_iter().for_each(start);
    let mut polled = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        node.spin_once(timeout);
        pool.run_until_stalled();
        let poll = polled.elapsed() >= POLL_PERIOD;
        let fresh = {
            let Ok(mut c) = controllers.lock() else { break };
            if poll {
                polled = Instant::now();
                for (_, n) in c.nodes.iter_mut() {
                    n.spin_once(Duration::ZERO);
                }
            }
            std::mem::take(&mut c.pending)
        };
        fresh.into_iter().for_each(start);
        pool.run_until_stalled();
        refresh();
    }
}
