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

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use futures::channel::{mpsc, oneshot};
use futures::executor::{LocalPool, LocalSpawner};
use futures::task::LocalSpawnExt;
use futures::StreamExt;
use r2r::geometry_msgs::msg as geo;
use r2r::simulation_interfaces::action::SimulateSteps;
use r2r::simulation_interfaces::msg as si;
use r2r::simulation_interfaces::srv;
use r2r::WrappedServiceTypeSupport;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::{CommandSender, Entity, EntityKind, RunState, SimContext};
use crate::engine::sim_control::{self as sc, codes, Refusal};
use crate::error::{ConfigError, HookResult};
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::ros::{convert, names};

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

// ------------------------------------------------------------------------------ physics side

/// A reply channel to the service thread.
struct Reply<T>(oneshot::Sender<T>);

impl<T> Reply<T> {
    fn send(self, v: T) {
        let _ = self.0.send(v);
    }
}

/// How a step request ended.
enum Outcome {
    Succeeded,
    Canceled(u64),
    Failed(Refusal),
}

enum StepSink {
    Service(Reply<srv::StepSimulation::Response>),
    Action {
        feedback: mpsc::UnboundedSender<u64>,
        acked: Arc<AtomicU64>,
        done: oneshot::Sender<Outcome>,
    },
}

/// The one StepSimulation / SimulateSteps request being taken.
struct StepJob {
    id: u64,
    n: u64,
    taken: u64,
    /// The N-th step was seen; the answer goes out at the next call (the driver came round).
    complete_seen: bool,
    sink: StepSink,
}

impl StepJob {
    fn acked(&self) -> u64 {
        match &self.sink {
            StepSink::Service(_) => u64::MAX,
            StepSink::Action { acked, .. } => acked.load(Ordering::SeqCst),
        }
    }

    fn finish(self, o: Outcome) {
        match self.sink {
            StepSink::Service(r) => r.send(srv::StepSimulation::Response {
                result: match o {
                    Outcome::Succeeded => ok(),
                    Outcome::Canceled(k) => res(
                        codes::OPERATION_FAILED,
                        format!("canceled after {k} of {} steps", self.n),
                    ),
                    Outcome::Failed(f) => res(f.code, f.message),
                },
            }),
            StepSink::Action { done, .. } => {
                let _ = done.send(o);
            }
        }
    }
}

/// State shared by the plugin's post_step and the commands it posts (physics thread only; the
/// mutex only makes it `Send`).
/// An answer sent from the physics thread once the queued reset has run.
type AfterReset = Box<dyn FnOnce(&SimContext) + Send>;

#[derive(Default)]
struct Shared {
    /// Answers due once the driver has taken the queued reset.
    after_reset: Vec<AfterReset>,
    job: Option<StepJob>,
}

/// What a request handler gets: the command queue and the shared state.
#[derive(Clone)]
struct Link {
    commands: CommandSender,
    shared: Arc<Mutex<Shared>>,
}

impl Link {
    fn post(&self, f: impl FnOnce(&mut SimContext, &mut Shared) + Send + 'static) -> bool {
        let shared = self.shared.clone();
        self.commands.post(move |ctx: &mut SimContext| {
            let mut sh = shared.lock().unwrap_or_else(|p| p.into_inner());
            f(ctx, &mut sh)
        })
    }
}

fn res(code: u8, message: impl Into<String>) -> si::Result {
    si::Result { result: code, error_message: message.into() }
}

fn ok() -> si::Result {
    res(codes::OK, "")
}

/// A response carrying a failure (the physics thread never answered, or a feature is missing).
trait Answer: Sized {
    fn failed(code: u8, message: String) -> Self;
}

macro_rules! answer_with_result {
    ($($t:ty),* $(,)?) => {$(
        impl Answer for $t {
            // some responses carry only `result`: the update is then a no-op, kept for the others
            #[allow(clippy::needless_update)]
            fn failed(code: u8, message: String) -> Self {
                Self { result: res(code, message), ..Default::default() }
            }
        }
    )*};
}

answer_with_result!(
    srv::GetEntities::Response,
    srv::GetEntitiesStates::Response,
    srv::GetEntityState::Response,
    srv::SetEntityState::Response,
    srv::GetEntityInfo::Response,
    srv::GetSpawnables::Response,
    srv::SpawnEntity::Response,
    srv::DeleteEntity::Response,
    srv::GetSimulationState::Response,
    srv::SetSimulationState::Response,
    srv::StepSimulation::Response,
    srv::ResetSimulation::Response,
    srv::GetEntityBounds::Response,
    srv::GetNamedPoses::Response,
    srv::GetNamedPoseBounds::Response,
    srv::SetEntityInfo::Response,
    srv::SpawnEntities::Response,
    srv::LoadWorld::Response,
    srv::UnloadWorld::Response,
    srv::GetAvailableWorlds::Response,
    srv::GetCurrentWorld::Response,
);

impl Answer for srv::GetSimulatorFeatures::Response {
    fn failed(_code: u8, message: String) -> Self {
        Self { features: si::SimulatorFeatures { custom_info: message, ..Default::default() } }
    }
}

/// A handler: runs on the physics thread, answers through the reply (now, or later from
/// post_step).
type Handler<S> = fn(
    <S as WrappedServiceTypeSupport>::Request,
    Reply<<S as WrappedServiceTypeSupport>::Response>,
    &mut SimContext,
    &mut Shared,
);

fn entity_state_msg(s: &sc::EntityState, t: f64) -> si::EntityState {
    let mut m = si::EntityState::default();
    m.header.stamp = convert::stamp(t);
    m.header.frame_id = WORLD_FRAME.to_string();
    m.pose.position = geo::Point { x: s.position[0], y: s.position[1], z: s.position[2] };
    m.pose.orientation = geo::Quaternion {
        x: s.orientation[0],
        y: s.orientation[1],
        z: s.orientation[2],
        w: s.orientation[3],
    };
    m.twist.linear = geo::Vector3 { x: s.linear[0], y: s.linear[1], z: s.linear[2] };
    m.twist.angular = geo::Vector3 { x: s.angular[0], y: s.angular[1], z: s.angular[2] };
    m
}

fn check_frame(frame: &str, what: &str) -> Result<(), String> {
    if frame.is_empty() || frame == WORLD_FRAME {
        Ok(())
    } else {
        Err(format!("{what} `{frame}`: only the world frame is supported (leave it empty or give `{WORLD_FRAME}`)"))
    }
}

/// A present entity, or NOT_FOUND naming what exists (absent ones are spawnables).
fn present_entity<'a>(ctx: &'a SimContext, name: &str) -> Result<&'a Entity, Refusal> {
    match ctx.entities.get(name) {
        Some(e) if e.present => Ok(e),
        Some(_) => Err(Refusal {
            code: codes::NOT_FOUND,
            message: format!("`{name}` is absent (it is among GetSpawnables): spawn it first"),
        }),
        None => Err(Refusal {
            code: codes::NOT_FOUND,
            message: format!("no entity `{name}`; entities: {}", ctx.entities.names().join(", ")),
        }),
    }
}

/// One line about an entity (EntityInfo.description, Spawnable.description).
pub fn describe(e: &Entity) -> String {
    let kind = match e.kind {
        EntityKind::Robot => "robot",
        EntityKind::Arm => "arm",
        EntityKind::Object => "object",
        EntityKind::Door => "door",
        EntityKind::Person => "person",
        EntityKind::Sensor => "sensor",
        EntityKind::Other => "entity",
    };
    let model = if e.model.is_empty() { String::new() } else { format!(" `{}`", e.model) };
    let motion = match (&e.free_joint, &e.weld_reason) {
        (Some(_), _) => "movable (free joint)".to_string(),
        (None, Some(w)) => format!("welded: {w}"),
        (None, None) => "no free joint".to_string(),
    };
    let declared =
        if e.declared_present { "declared present" } else { "declared absent (present: false)" };
    format!("{kind}{model}, {motion}, {declared}")
}

fn h_features(
    _: srv::GetSimulatorFeatures::Request,
    r: Reply<srv::GetSimulatorFeatures::Response>,
    _: &mut SimContext,
    _: &mut Shared,
) {
    r.send(srv::GetSimulatorFeatures::Response {
        features: si::SimulatorFeatures {
            features: sc::FEATURES.to_vec(),
            spawn_formats: Vec::new(),
            custom_info: "roqsim: SpawnEntity activates an entity the world declares with `present: false` (uri = its name, \
                          as GetSpawnables lists it); nothing is compiled at run time, so spawn_formats is empty"
                .to_string(),
        },
    });
}

fn filtered(ctx: &SimContext, f: &si::EntityFilters) -> Result<Vec<String>, Refusal> {
    let cats: Vec<u8> = f.categories.iter().map(|c| c.category).collect();
    sc::filter_names(ctx, true, &f.filter, &cats, &f.tags.tags, f.bounds.type_)
}

fn h_entities(
    q: srv::GetEntities::Request,
    r: Reply<srv::GetEntities::Response>,
    ctx: &mut SimContext,
    _: &mut Shared,
) {
    r.send(match filtered(ctx, &q.filters) {
        Ok(entities) => srv::GetEntities::Response { result: ok(), entities },
        Err(f) => Answer::failed(f.code, f.message),
    });
}

fn h_entities_states(
    q: srv::GetEntitiesStates::Request,
    r: Reply<srv::GetEntitiesStates::Response>,
    ctx: &mut SimContext,
    _: &mut Shared,
) {
    let t = ctx.sim_time();
    let out = filtered(ctx, &q.filters).and_then(|names| {
        let states = names
            .iter()
            .map(|n| sc::entity_state(ctx, n).map(|s| entity_state_msg(&s, t)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((names, states))
    });
    r.send(match out {
        Ok((entities, states)) => {
            srv::GetEntitiesStates::Response { result: ok(), entities, states }
        }
        Err(f) => Answer::failed(f.code, f.message),
    });
}

fn h_entity_state(
    q: srv::GetEntityState::Request,
    r: Reply<srv::GetEntityState::Response>,
    ctx: &mut SimContext,
    _: &mut Shared,
) {
    let t = ctx.sim_time();
    let out = present_entity(ctx, &q.entity).and_then(|_| sc::entity_state(ctx, &q.entity));
    r.send(match out {
        Ok(s) => srv::GetEntityState::Response { result: ok(), state: entity_state_msg(&s, t) },
        Err(f) => Answer::failed(f.code, f.message),
    });
}

fn h_set_entity_state(
    q: srv::SetEntityState::Request,
    r: Reply<srv::SetEntityState::Response>,
    ctx: &mut SimContext,
    _: &mut Shared,
) {
    let mut run = || -> Result<(), Refusal> {
        present_entity(ctx, &q.entity)?;
        if q.set_acceleration {
            return Err(Refusal {
                code: codes::FEATURE_UNSUPPORTED,
                message: "set_acceleration: accelerations cannot be set (MuJoCo computes them from forces); set a pose and/or a twist".into(),
            });
        }
        check_frame(&q.state.header.frame_id, "state.header.frame_id")
            .map_err(|m| Refusal { code: codes::OPERATION_FAILED, message: m })?;
        let s = &q.state;
        let pose = q.set_pose.then(|| {
            let (p, o) = (&s.pose.position, &s.pose.orientation);
            ([p.x, p.y, p.z], [o.x, o.y, o.z, o.w])
        });
        let twist = q.set_twist.then(|| {
            let (l, a) = (&s.twist.linear, &s.twist.angular);
            ([l.x, l.y, l.z], [a.x, a.y, a.z])
        });
        sc::set_entity_state(ctx, &q.entity, pose, twist)
    };
    r.send(match run() {
        Ok(()) => srv::SetEntityState::Response { result: ok() },
        Err(f) => Answer::failed(f.code, f.message),
    });
}

fn h_entity_info(
    q: srv::GetEntityInfo::Request,
    r: Reply<srv::GetEntityInfo::Response>,
    ctx: &mut SimContext,
    _: &mut Shared,
) {
    r.send(match present_entity(ctx, &q.entity) {
        Ok(e) => srv::GetEntityInfo::Response {
            result: ok(),
            info: si::EntityInfo {
                category: si::EntityCategory {
                    category: sc::category_of(ctx, &q.entity).unwrap_or(sc::category::OBJECT),
                },
                description: describe(e),
                tags: Vec::new(),
            },
        },
        Err(f) => Answer::failed(f.code, f.message),
    });
}

fn h_spawnables(
    _: srv::GetSpawnables::Request,
    r: Reply<srv::GetSpawnables::Response>,
    ctx: &mut SimContext,
    _: &mut Shared,
) {
    let spawnables = sc::spawnables(ctx)
        .into_iter()
        .map(|name| si::Spawnable {
            description: ctx.entities.get(&name).map(describe).unwrap_or_default(),
            entity_resource: si::Resource { uri: name, resource_string: String::new() },
            spawn_bounds: si::Bounds::default(),
        })
        .collect();
    r.send(srv::GetSpawnables::Response { result: ok(), spawnables });
}

/// A requested pose: position (m) and quaternion `[x, y, z, w]`.
type PoseSpec = ([f64; 3], [f64; 4]);

/// SpawnEntity.initial_pose: `None` when left at its default (origin with an identity or zero
/// quaternion): the entity then keeps its declared pose.
fn initial_pose(p: &geo::PoseStamped) -> Result<Option<PoseSpec>, Refusal> {
    let (x, o) = (&p.pose.position, &p.pose.orientation);
    let pos = [x.x, x.y, x.z];
    let q = [o.x, o.y, o.z, o.w];
    if pos == [0.0; 3] && (q == [0.0, 0.0, 0.0, 1.0] || q == [0.0; 4]) {
        return Ok(None);
    }
    check_frame(&p.header.frame_id, "initial_pose.header.frame_id")
        .map_err(|m| Refusal { code: codes::SPAWN_INVALID_POSE, message: m })?;
    Ok(Some((pos, q)))
}

fn h_spawn(
    q: srv::SpawnEntity::Request,
    r: Reply<srv::SpawnEntity::Response>,
    ctx: &mut SimContext,
    _: &mut Shared,
) {
    let mut run = || -> Result<String, Refusal> {
        let pose = initial_pose(&q.initial_pose)?;
        let uri = q.entity_resource.uri.as_str();
        // allow_renaming: the simulator may pick another name, and a compiled entity's is fixed.
        let name =
            if q.allow_renaming && !uri.is_empty() && q.name != uri { "" } else { q.name.as_str() };
        sc::spawn(ctx, name, uri, &q.entity_resource.resource_string, &q.entity_namespace, pose)
    };
    r.send(match run() {
        Ok(entity_name) => srv::SpawnEntity::Response { result: ok(), entity_name },
        Err(f) => Answer::failed(f.code, f.message),
    });
}

fn h_delete(
    q: srv::DeleteEntity::Request,
    r: Reply<srv::DeleteEntity::Response>,
    ctx: &mut SimContext,
    _: &mut Shared,
) {
    r.send(srv::DeleteEntity::Response {
        result: match sc::delete(ctx, &q.entity) {
            Ok(()) => ok(),
            Err(f) => res(f.code, f.message),
        },
    });
}

fn h_get_state(
    _: srv::GetSimulationState::Request,
    r: Reply<srv::GetSimulationState::Response>,
    ctx: &mut SimContext,
    _: &mut Shared,
) {
    r.send(srv::GetSimulationState::Response {
        state: si::SimulationState { state: sc::get_state(ctx) },
        result: ok(),
    });
}

fn h_set_state(
    q: srv::SetSimulationState::Request,
    r: Reply<srv::SetSimulationState::Response>,
    ctx: &mut SimContext,
    sh: &mut Shared,
) {
    match sc::set_state(ctx, q.state.state) {
        // STOPPED resets the world: answer once the driver has done it.
        Ok(()) if ctx.control.reset.is_some() => {
            sh.after_reset.push(Box::new(move |_| {
                r.send(srv::SetSimulationState::Response { result: ok() })
            }));
        }
        Ok(()) => r.send(srv::SetSimulationState::Response { result: ok() }),
        Err(f) => r.send(Answer::failed(f.code, f.message)),
    }
}

/// Start a step job of `n` steps (the caller checked n > 0), or refuse.
fn start_job(ctx: &mut SimContext, sh: &mut Shared, id: u64, n: u64, sink: StepSink) {
    let job = StepJob { id, n, taken: 0, complete_seen: false, sink };
    if let Some(j) = &sh.job {
        let what = match j.sink {
            StepSink::Service(_) => "StepSimulation",
            StepSink::Action { .. } => "SimulateSteps goal",
        };
        let m = format!("a {what} is still running ({} of {} steps taken)", j.taken, j.n);
        return job.finish(Outcome::Failed(Refusal { code: codes::INCORRECT_STATE, message: m }));
    }
    let first = match job.sink {
        StepSink::Service(_) => n,
        StepSink::Action { .. } => n.min(FEEDBACK_WINDOW),
    };
    match sc::step(ctx, first) {
        Ok(()) => sh.job = Some(job),
        Err(f) => job.finish(Outcome::Failed(f)),
    }
}

static NEXT_JOB: AtomicU64 = AtomicU64::new(1);

fn h_step(
    q: srv::StepSimulation::Request,
    r: Reply<srv::StepSimulation::Response>,
    ctx: &mut SimContext,
    sh: &mut Shared,
) {
    if q.steps == 0 {
        // Nothing to take; the state rule still applies.
        return r.send(srv::StepSimulation::Response {
            result: match sc::step(ctx, 0) {
                Ok(()) => ok(),
                Err(f) => res(f.code, f.message),
            },
        });
    }
    start_job(ctx, sh, NEXT_JOB.fetch_add(1, Ordering::SeqCst), q.steps, StepSink::Service(r));
}

fn h_reset(
    q: srv::ResetSimulation::Request,
    r: Reply<srv::ResetSimulation::Response>,
    ctx: &mut SimContext,
    sh: &mut Shared,
) {
    match sc::request_reset(ctx, q.scope) {
        Ok(()) => sh
            .after_reset
            .push(Box::new(move |_| r.send(srv::ResetSimulation::Response { result: ok() }))),
        Err(f) => r.send(Answer::failed(f.code, f.message)),
    }
}

/// Advance the running step job by what this post_step call saw; finish it when done.
fn progress(ctx: &mut SimContext, sh: &mut Shared) {
    let Some(job) = sh.job.as_mut() else { return };
    if !ctx.paused && job.taken < job.n {
        job.taken += 1;
        if let StepSink::Action { feedback, .. } = &job.sink {
            let _ = feedback.unbounded_send(job.taken);
        }
    }
    let outcome = if job.taken >= job.n {
        // Answer one call after the last step (its /clock is out) and, for the action, once
        // every feedback went out.
        if job.complete_seen && job.acked() >= job.n {
            Some(Outcome::Succeeded)
        } else {
            job.complete_seen = true;
            None
        }
    } else if ctx.control.state != RunState::Paused {
        let m = format!(
            "the simulation left PAUSED (state is now {}) after {} of {} steps",
            sc::get_state(ctx),
            job.taken,
            job.n
        );
        Some(Outcome::Failed(Refusal { code: codes::INCORRECT_STATE, message: m }))
    } else if ctx.paused && ctx.control.pending_steps == 0 {
        match job.sink {
            StepSink::Service(_) => {
                let m = format!("stepping was interrupted after {} of {} steps", job.taken, job.n);
                Some(Outcome::Failed(Refusal { code: codes::OPERATION_FAILED, message: m }))
            }
            StepSink::Action { .. } => {
                if job.acked() >= job.taken {
                    ctx.control.pending_steps = (job.n - job.taken).min(FEEDBACK_WINDOW);
                }
                None
            }
        }
    } else {
        None
    };
    if let Some(o) = outcome {
        if let Some(job) = sh.job.take() {
            job.finish(o);
        }
    }
}

// ------------------------------------------------------------------------------ ROS side

/// Starts one server's task on the service thread.
type Starter = Box<dyn FnOnce(&LocalSpawner) + Send>;

fn spawn(sp: &LocalSpawner, f: impl std::future::Future<Output = ()> + 'static) {
    if let Err(e) = sp.spawn_local(f) {
        tracing::error!("sim_interfaces: cannot start a task: {e}");
    }
}

/// A service answered on the physics thread by `handler`.
fn serve<S>(
    node: &mut r2r::Node,
    name: &str,
    link: &Link,
    handler: Handler<S>,
) -> Result<Starter, String>
where
    S: WrappedServiceTypeSupport + 'static,
    S::Request: Send + 'static,
    S::Response: Answer + Send + 'static,
{
    let mut requests = node
        .create_service::<S>(name, crate::ros::convert::server_qos())
        .map_err(|e| format!("cannot create the service {name}: {e}"))?;
    let link = link.clone();
    let name = name.to_string();
    Ok(Box::new(move |sp: &LocalSpawner| {
        let sp2 = sp.clone();
        spawn(sp, async move {
            while let Some(req) = requests.next().await {
                let link = link.clone();
                let name = name.clone();
                spawn(&sp2, async move {
                    let (tx, rx) = oneshot::channel();
                    let msg = req.message.clone();
                    link.post(move |ctx, sh| handler(msg, Reply(tx), ctx, sh));
                    let resp = rx.await.unwrap_or_else(|_| {
                        S::Response::failed(
                            codes::OPERATION_FAILED,
                            "the simulation ended before answering".into(),
                        )
                    });
                    if let Err(e) = req.respond(resp) {
                        tracing::warn!("sim_interfaces: cannot answer {name}: {e}");
                    }
                });
            }
        });
    }))
}

/// A service of the package this simulator does not implement: answered at once with
/// RESULT_FEATURE_UNSUPPORTED and `why`.
fn unsupported<S>(node: &mut r2r::Node, name: &str, why: &'static str) -> Result<Starter, String>
where
    S: WrappedServiceTypeSupport + 'static,
    S::Response: Answer + Send + 'static,
{
    let mut requests = node
        .create_service::<S>(name, crate::ros::convert::server_qos())
        .map_err(|e| format!("cannot create the service {name}: {e}"))?;
    Ok(Box::new(move |sp: &LocalSpawner| {
        spawn(sp, async move {
            while let Some(req) = requests.next().await {
                let _ =
                    req.respond(S::Response::failed(codes::FEATURE_UNSUPPORTED, why.to_string()));
            }
        });
    }))
}

fn action_result(code: u8, message: impl Into<String>) -> SimulateSteps::Result {
    SimulateSteps::Result { result: res(code, message) }
}

/// One SimulateSteps goal: accepted, stepped on the physics thread window by window, one
/// feedback per step, canceled on request.
async fn run_goal(req: r2r::ActionServerGoalRequest<SimulateSteps::Action>, link: Link) {
    let n = req.goal.steps;
    let (mut goal, cancel) = match req.accept() {
        Ok(g) => g,
        Err(e) => return tracing::warn!("sim_interfaces: cannot accept a SimulateSteps goal: {e}"),
    };
    let id = NEXT_JOB.fetch_add(1, Ordering::SeqCst);
    let (fb_tx, mut feedback) = mpsc::unbounded::<u64>();
    let (done_tx, mut done) = oneshot::channel::<Outcome>();
    let acked = Arc::new(AtomicU64::new(0));
    let a = acked.clone();
    link.post(move |ctx, sh| {
        if n == 0 {
            let _ = done_tx.send(match sc::step(ctx, 0) {
                Ok(()) => Outcome::Succeeded,
                Err(f) => Outcome::Failed(f),
            });
        } else {
            start_job(
                ctx,
                sh,
                id,
                n,
                StepSink::Action { feedback: fb_tx, acked: a, done: done_tx },
            );
        }
    });
    let publish = |k: u64| {
        let _ = goal.publish_feedback(SimulateSteps::Feedback {
            completed_steps: k,
            remaining_steps: n.saturating_sub(k),
        });
        acked.store(k, Ordering::SeqCst);
    };
    let mut cancel = cancel.fuse();
    let outcome = loop {
        futures::select! {
            k = feedback.next() => if let Some(k) = k { publish(k) },
            c = cancel.next() => if let Some(c) = c {
                c.accept();
                link.post(move |ctx, sh| {
                    if sh.job.as_ref().is_some_and(|j| j.id == id) {
                        let job = sh.job.take().expect("checked");
                        ctx.control.pending_steps = 0;
                        let k = job.taken;
                        job.finish(Outcome::Canceled(k));
                    }
                });
            },
            o = done => break o.unwrap_or(Outcome::Failed(Refusal { code: codes::OPERATION_FAILED, message: "the simulation ended before the goal finished".into() })),
        }
    };
    while let Ok(k) = feedback.try_recv() {
        publish(k);
    }
    let sent = match outcome {
        Outcome::Succeeded => goal.succeed(action_result(codes::OK, "")),
        Outcome::Canceled(k) => {
            goal.cancel(action_result(codes::OK, format!("canceled after {k} of {n} steps")))
        }
        Outcome::Failed(f) => goal.abort(action_result(f.code, f.message)),
    };
    if sent.is_err() {
        // A cancel accepted meanwhile removed the goal's handle: report it canceled.
        let k = acked.load(Ordering::SeqCst);
        let _ = goal.cancel(action_result(codes::OK, format!("canceled after {k} of {n} steps")));
    }
}

fn serve_action(node: &mut r2r::Node, name: &str, link: &Link) -> Result<Starter, String> {
    let mut goals = node
        .create_action_server::<SimulateSteps::Action>(name)
        .map_err(|e| format!("cannot create the action server {name}: {e}"))?;
    let link = link.clone();
    Ok(Box::new(move |sp: &LocalSpawner| {
        let sp2 = sp.clone();
        spawn(sp, async move {
            while let Some(req) = goals.next().await {
                spawn(&sp2, run_goal(req, link.clone()));
            }
        });
    }))
}

fn ros_thread(mut node: r2r::Node, starters: Vec<Starter>, stop: Arc<AtomicBool>) {
    let mut pool = LocalPool::new();
    let spawner = pool.spawner();
    for s in starters {
        s(&spawner);
    }
    while !stop.load(Ordering::SeqCst) {
        node.spin_once(SPIN_TIMEOUT);
        pool.run_until_stalled();
    }
}

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
    use super::*;

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
