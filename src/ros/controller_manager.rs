//! `/<namespace>/controller_manager`: ros2_control's controller manager as its own node, served
//! from each robot's [`Registry`] with `controller_manager_msgs` (Jazzy) — semantics in
//! [`crate::handles::controllers`], the standard bringup in docs/ros.md.
//!
//! A robot that registers controllers is served a controller manager; nothing in a world asks
//! for it, and a robot with no controllers is served none. The bridge discovers the registries on
//! the blackboard (`controllers:<entity>`) in its `configure` (so the controller plugins, which
//! declare in their own `configure`, must come before the bridge — `--ros` appends it last), and
//! honours its `owners` filter and outer `namespace`.
//!
//! Each manager is an r2r node named `controller_manager` in the robot's namespace (sharing the
//! process's rcl context), so tools that treat the manager as a node work: `spawner` sets
//! `<controller>.params_file` / `<controller>.type` through its parameter services before
//! loading, `ros2 param get /ur/controller_manager update_rate` answers. It serves:
//!
//! | service | from the registry |
//! | --- | --- |
//! | `list_controllers` | [`Registry::list`]: name, state label, type, update rate, claimed / required interfaces |
//! | `list_controller_types` | [`Registry::types`] (base class `controller_interface::ControllerInterface`) |
//! | `switch_controller` | [`Registry::switch`] (strictness 0 = best effort; `activate_asap`, `timeout` have nothing to wait for: it switches before the next step) |
//! | `load_controller` | [`Registry::load`], after checking `<name>.type` and the `<name>.params_file` files ([`crate::ros::param_files`]) |
//! | `configure_controller` / `cleanup_controller` | [`Registry::configure`] / [`Registry::cleanup`] |
//! | `unload_controller` | [`Registry::unload`] (refused while active) |
//! | `reload_controller_libraries` | nothing to reload (controllers are built in); refused while controllers are loaded unless `force_kill`, which deactivates and unloads them first, as upstream |
//! | `list_hardware_interfaces` | [`Registry::hardware_interfaces`] (`data_type` `double`) |
//! | `list_hardware_components` | one component per robot, named after the entity, in its lifecycle state, with its interfaces |
//! | `set_hardware_component_state` | [`Registry::set_hardware_state`]: `unconfigured`, `inactive`, `active`, `finalized` (by id, or by label with id 0), as ros2_control's resource manager moves a component |
//!
//! Parameters (`ros2 param list /<ns>/controller_manager`): `update_rate` (read-only: the physics
//! rate), `use_sim_time`, and each declared controller's `<name>.type`; undeclared names are
//! accepted, as ros2_control's manager allows undeclared parameters. `~/activity`
//! (ControllerManagerActivity, reliable + transient local, depth 1) carries every loaded
//! controller's and the hardware component's lifecycle state, published at start and after every
//! change.
//!
//! Every loaded controller is a node of its own, `/<ns>/<controller>`, with its parameters
//! ([`crate::ros::controller_nodes`]); the manager creates it on load and drops it on unload,
//! before answering.
//!
//! The registry is `Rc` (physics-thread only), so every request is a command posted to the
//! physics thread that runs the call there — a request that changes the controllers as a
//! transport-neutral [`ControllerCommand`] through [`command::apply`], which a recording logs and
//! a replay applies again — stamped with the sim time it happens at (the
//! controller's plugin then publishes `<controller>/transition_event` with that stamp); the
//! answer comes back on a channel. Services that answer only `ok` log a refusal's reason
//! (warning, also on /rosout) with the service's name, as upstream's controller manager logs it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use r2r::controller_manager_msgs::msg::{
    ControllerManagerActivity, ControllerState, HardwareComponentState, HardwareInterface as HwMsg,
    NamedLifecycleState,
};
use r2r::controller_manager_msgs::srv::{
    CleanupController, ConfigureController, ListControllerTypes, ListControllers,
    ListHardwareComponents, ListHardwareInterfaces, LoadController, ReloadControllerLibraries,
    SetHardwareComponentState, SwitchController, UnloadController,
};
use r2r::lifecycle_msgs::msg::State as LcState;
use r2r::{QosProfile, WrappedServiceTypeSupport};

use crate::context::{CommandSender, SimContext};
use crate::handles::controller_params::ParamValue;
use crate::handles::controllers::command::{self, ControllerCommand, Outcome};
use crate::handles::controllers::{
    registry_key, ControllerInfo, HardwareInterface, Registry, State,
};
use crate::ros::config::BridgeConfig;
use crate::ros::controller_nodes::{self, ControllerNodes, Loaded};
use crate::ros::convert::{self, Task};
use crate::ros::services::{recv_async, serve_loop, InFlight, REPLY_TIMEOUT};
use crate::ros::{names, param_files, params};

/// The services under `<namespace>/controller_manager/` (every controller_manager_msgs service
/// of the Jazzy release).
pub const SERVICES: [&str; 11] = [
    "list_controllers",
    "list_controller_types",
    "switch_controller",
    "load_controller",
    "configure_controller",
    "cleanup_controller",
    "unload_controller",
    "reload_controller_libraries",
    "list_hardware_interfaces",
    "list_hardware_components",
    "set_hardware_component_state",
];

/// Base class `list_controller_types` reports for every type (none here is chainable).
pub const BASE_CLASS: &str = "controller_interface::ControllerInterface";
/// Plugin name the hardware component reports.
pub const HARDWARE_PLUGIN: &str = "roqsim/MujocoSystem";

/// One robot's controller manager: the entity and its absolute base name.
#[derive(Debug, Clone, PartialEq)]
pub struct Manager {
    /// The entity whose registry it serves.
    pub entity: String,
    /// `/<bridge ns>/<robot ns>/controller_manager`.
    pub base: String,
}

impl Manager {
    /// The node's namespace (`/ur`, or `/` for a robot without one).
    pub fn namespace(&self) -> String {
        match self.base.rfind('/') {
            Some(0) | None => "/".to_string(),
            Some(i) => self.base[..i].to_string(),
        }
    }
}
/// Every controller manager the bridge serves: one per registry with a declared controller whose
/// entity passes the owner filter. The namespace is the one the robot's controllers publish their
/// `transition_event` in (an endpoint with a `controller` hint naming one of them), else the
/// entity's. Two robots with controllers in one namespace are refused (one controller manager per
/// namespace, as on a real robot), naming both and the fix.
pub fn managers(ctx: &SimContext, cfg: &BridgeConfig) -> Result<Vec<Manager>, String> {
    let prefix = registry_key("");
    let mut out = Vec::new();
    for key in ctx.blackboard.keys() {
        let Some(entity) = key.strip_prefix(&prefix) else { continue };
        let Some(reg) = Registry::get(ctx, entity) else { continue };
        let declared = reg.declared();
        if declared.is_empty() || !names::owner_matches(cfg.owners.as_deref(), Some(entity)) {
            continue;
        }
        let ns = ctx
            .interface
            .all()
            .iter()
            .find(|ep| {
                ep.owner.as_deref() == Some(entity)
                    && ep
                        .get_hint("ros2", "controller")
                        .is_some_and(|c| declared.iter().any(|d| d == c))
            })
            .map(|ep| ep.namespace.clone())
            .or_else(|| ctx.entities.get(entity).map(|e| e.namespace.clone()))
            .unwrap_or_default();
        let base = names::join_absolute(&[&cfg.namespace, &ns, "controller_manager"]);
        if let Some(other) = out.iter().find(|m: &&Manager| m.base == base) {
            return Err(format!(
                "robots `{}` and `{entity}` both have controllers and would both be served at {base}: one controller_manager per namespace. \
                 Give one of them its own `namespace:` (on its spawn entry, or on its controller plugin)",
                other.entity
            ));
        }
        out.push(Manager { entity: entity.to_string(), base });
    }
    Ok(out)
}

/// One manager: its node, the tasks serving it (its services, parameter services and
/// activity) and its controllers' nodes; the bridge spins each on a thread of its own
/// ([`controller_nodes::spin`]).
pub struct ManagerNode {
    /// The `/<ns>/controller_manager` node.
    pub node: r2r::Node,
    /// Its tasks.
    pub tasks: Vec<Task>,
    /// The loaded controllers' nodes.
    pub controllers: controller_nodes::Shared,
    /// Run after every wait of its thread: the periodic sync ([`refresher`]).
    pub refresh: Box<dyn FnMut() + Send>,
}

/// The manager nodes.
pub struct Served {
    /// One entry per manager.
    pub managers: Vec<ManagerNode>,
}

/// The loaded controllers' names and states, and the hardware component's state
/// (ControllerManagerActivity content).
type Activity = (Vec<(String, State)>, State);

fn activity_of(r: &Registry) -> Activity {
    (r.list().into_iter().map(|c| (c.name, c.state)).collect(), r.hardware_state())
}

fn loaded_of(r: &Registry) -> Loaded {
    r.list()
        .into_iter()
        .map(|c| {
            let p = r.parameters(&c.name).unwrap_or_default();
            (c.name, p)
        })
        .collect()
}

fn lc(s: State) -> LcState {
    LcState { id: s.id(), label: s.label().to_string() }
}

fn activity_msg(entity: &str, a: &Activity, t: f64) -> ControllerManagerActivity {
    let mut m = ControllerManagerActivity::default();
    m.header.stamp = convert::stamp(t);
    m.controllers =
        a.0.iter().map(|(n, s)| NamedLifecycleState { name: n.clone(), state: lc(*s) }).collect();
    m.hardware_components = vec![NamedLifecycleState { name: entity.to_string(), state: lc(a.1) }];
    m
}

/// Publishes `~/activity` when the loaded controllers' states changed.
#[derive(Clone)]
struct ActivityPub {
    publisher: r2r::Publisher<ControllerManagerActivity>,
    last: Arc<Mutex<Option<Activity>>>,
    entity: String,
}

impl ActivityPub {
    fn publish(&self, a: Activity, t: f64) {
        let mut last = self.last.lock().expect("activity");
        if last.as_ref() == Some(&a) {
            return;
        }
        if let Err(e) = self.publisher.publish(&activity_msg(&self.entity, &a, t)) {
            tracing::warn!("controller_manager activity publish failed: {e}");
        }
        *last = Some(a);
    }
}

/// Create every manager's node with its services, parameters and activity topic.
pub fn serve_all(
    rctx: &r2r::Context,
    ctx: &SimContext,
    cfg: &BridgeConfig,
    commands: &CommandSender,
    use_sim_time: bool,
) -> Result<Served, String> {
    let mut out = Served { managers: Vec::new() };
    for m in managers(ctx, cfg)? {
        out.managers.push(serve_one(rctx, ctx, &m, commands, use_sim_time)?);
    }
    Ok(out)
}

/// One manager: its node, parameters, activity topic, controller nodes and services.
fn serve_one(
    rctx: &r2r::Context,
    ctx: &SimContext,
    m: &Manager,
    commands: &CommandSender,
    use_sim_time: bool,
) -> Result<ManagerNode, String> {
    let reg = Registry::get(ctx, &m.entity).expect("a manager has a registry");
    let ns = m.namespace();
    let (mut node, fq) = manager_node(rctx, m, &ns)?;
    let table = parameter_table(&node, &reg, use_sim_time);
    let mut served = params::serve(&mut node, &fq, table.clone())?;
    let act = activity_publisher(&mut node, &fq, m)?;
    act.publish(activity_of(&reg), ctx.sim_time());
    let mut controllers = ControllerNodes::new(rctx, &ns, &m.entity, commands, use_sim_time);
    let seq = Arc::new(AtomicU64::new(1));
    controllers.sync(0, &loaded_of(&reg));
    let controllers = Arc::new(Mutex::new(controllers));
    let refresh = refresher(commands, &m.entity, &act, &controllers, &seq);
    let mut k = Ctx { node: &mut node, m, commands, act: &act, nodes: &controllers, seq: &seq };
    served.extend(controller_services(&mut k, &table, &ns)?);
    served.extend(hardware_services(&mut k)?);
    tracing::info!(
        "controller_manager for robot `{}`: node {fq} ({} services, parameters, activity)",
        m.entity,
        SERVICES.len()
    );
    Ok(ManagerNode { node, tasks: served, controllers, refresh })
}

/// The `controller_manager` node in `ns`, and its fully qualified name, refused when a remap
/// renamed it away from the manager's base name.
fn manager_node(rctx: &r2r::Context, m: &Manager, ns: &str) -> Result<(r2r::Node, String), String> {
    let node = r2r::Node::create(rctx.clone(), "controller_manager", ns)
        .map_err(|e| format!("cannot create the controller_manager node in {ns}: {e}"))?;
    let fq = node.fully_qualified_name().map_err(|e| e.to_string())?;
    if fq != m.base {
        return Err(format!(
            "the controller manager of robot `{}` came up as {fq}, not {}: a node-name or namespace remap (`-r __node:=`, `-r __ns:=`) renamed it",
            m.entity, m.base
        ));
    }
    Ok((node, fq))
}

/// The manager's parameters: `use_sim_time`, the read-only `update_rate` and each declared
/// controller's read-only `<name>.type`.
fn parameter_table(node: &r2r::Node, reg: &Registry, use_sim_time: bool) -> params::Shared {
    let table: params::Shared = Arc::new(Mutex::new(params::Table::new(true)));
    {
        let mut t = table.lock().expect("fresh table");
        let ust = params::override_of(node, "use_sim_time")
            .unwrap_or_else(|| params::bool_value(use_sim_time));
        t.declare("use_sim_time", ust, true, "roqsim's controllers run on simulation time");
        t.declare(
            "update_rate",
            params::int_value(reg.update_rate() as i64),
            true,
            "Hz; the controllers run every physics step (set by the world's sim.timestep)",
        );
        for c in reg.declared() {
            let ty = reg.type_of(&c).unwrap_or_default();
            t.declare(
                &format!("{c}.type"),
                params::string_value(&ty),
                false,
                "the type the world declares; load_controller refuses another",
            );
        }
    }
    table
}

/// `~/activity`: reliable, transient local, depth 1.
fn activity_publisher(node: &mut r2r::Node, fq: &str, m: &Manager) -> Result<ActivityPub, String> {
    let publisher = node
        .create_publisher::<ControllerManagerActivity>(
            &format!("{fq}/activity"),
            QosProfile::default().keep_last(1).reliable().transient_local(),
        )
        .map_err(|e| format!("cannot create {fq}/activity: {e}"))?;
    Ok(ActivityPub { publisher, last: Arc::new(Mutex::new(None)), entity: m.entity.clone() })
}

/// The services that list, switch and move the controllers through their lifecycle.
fn controller_services(k: &mut Ctx, table: &params::Shared, ns: &str) -> Result<Vec<Task>, String> {
    let mut tasks = vec![
        k.service::<ListControllers::Service>(
            "list_controllers",
            Arc::new(|_, r, _, _, _| ListControllers::Response {
                controller: r.list().iter().map(controller_state).collect(),
            }),
        )?,
        k.service::<ListControllerTypes::Service>(
            "list_controller_types",
            Arc::new(|_, r, _, _, _| {
                let types = r.types();
                ListControllerTypes::Response {
                    base_classes: vec![BASE_CLASS.to_string(); types.len()],
                    types,
                }
            }),
        )?,
        k.service::<SwitchController::Service>("switch_controller", Arc::new(switch))?,
    ];
    let (tbl, mns) = (table.clone(), ns.to_string());
    tasks.push(k.service::<LoadController::Service>(
        "load_controller",
        Arc::new(move |ctx, r, q, _, n| LoadController::Response {
            ok: logged(n, &q.name, load(ctx, r, &tbl, &mns, &q.name)),
        }),
    )?);
    tasks.push(k.service::<ConfigureController::Service>(
        "configure_controller",
        Arc::new(|ctx, r, q, _, n| ConfigureController::Response {
            ok: logged(
                n,
                &q.name,
                done(ctx, r, ControllerCommand::Configure { name: q.name.clone() }),
            ),
        }),
    )?);
    tasks.push(k.service::<CleanupController::Service>(
        "cleanup_controller",
        Arc::new(|ctx, r, q, _, n| CleanupController::Response {
            ok: logged(
                n,
                &q.name,
                done(ctx, r, ControllerCommand::Cleanup { name: q.name.clone() }),
            ),
        }),
    )?);
    tasks.push(k.service::<UnloadController::Service>(
        "unload_controller",
        Arc::new(|ctx, r, q, _, n| UnloadController::Response {
            ok: logged(
                n,
                &q.name,
                done(ctx, r, ControllerCommand::Unload { name: q.name.clone() }),
            ),
        }),
    )?);
    tasks.push(k.service::<ReloadControllerLibraries::Service>(
        "reload_controller_libraries",
        Arc::new(|ctx, r, q, _, n| ReloadControllerLibraries::Response {
            ok: logged(
                n,
                "(all)",
                done(ctx, r, ControllerCommand::ReloadLibraries { force_kill: q.force_kill }),
            ),
        }),
    )?);
    Ok(tasks)
}

/// The services that list the hardware and move its component through its lifecycle.
fn hardware_services(k: &mut Ctx) -> Result<Vec<Task>, String> {
    Ok(vec![
        k.service::<ListHardwareInterfaces::Service>(
            "list_hardware_interfaces",
            Arc::new(|_, r, _, _, _| {
                let hw = r.hardware_interfaces();
                ListHardwareInterfaces::Response {
                    command_interfaces: hw
                        .iter()
                        .filter(|h| h.is_command)
                        .map(hardware_interface)
                        .collect(),
                    state_interfaces: hw
                        .iter()
                        .filter(|h| !h.is_command)
                        .map(hardware_interface)
                        .collect(),
                }
            }),
        )?,
        k.service::<ListHardwareComponents::Service>(
            "list_hardware_components",
            Arc::new(|_, r, _, _, _| ListHardwareComponents::Response {
                component: vec![hardware_component(r)],
            }),
        )?,
        k.service::<SetHardwareComponentState::Service>(
            "set_hardware_component_state",
            Arc::new(set_hardware_state),
        )?,
    ])
}

/// load_controller: the `<name>.type` and `<name>.params_file` parameters the spawner set on the
/// manager's node are checked and the files read here (the transport's part); the load itself,
/// with the parameter values the files gave, is a [`ControllerCommand::Load`].
fn load(
    ctx: &mut SimContext,
    r: &Registry,
    table: &params::Shared,
    ns: &str,
    name: &str,
) -> Result<(), String> {
    let load = |ctx: &mut SimContext, overrides: Vec<(String, ParamValue)>| {
        done(ctx, r, ControllerCommand::Load { name: name.to_string(), overrides })
    };
    let Some(declared) = r.type_of(name) else { return load(ctx, Vec::new()) };
    let (ty, files, extra) = {
        let tb = table.lock().map_err(|_| "parameter table poisoned".to_string())?;
        let ty = tb.get(&format!("{name}.type")).map(|p| p.value.string_value.clone());
        let files = tb.get(&format!("{name}.params_file")).map(|p| params::strings_of(&p.value));
        // What the spawner hands the manager besides the files: refused when not empty, since
        // the simulator has no fallback controllers and no per-controller node arguments.
        let extra: Vec<(String, Vec<String>)> = ["fallback_controllers", "node_options_args"]
            .iter()
            .filter_map(|k| {
                let v = params::strings_of(&tb.get(&format!("{name}.{k}"))?.value);
                (!v.is_empty()).then(|| (k.to_string(), v))
            })
            .collect();
        (ty, files.unwrap_or_default(), extra)
    };
    if let Some((k, v)) = extra.first() {
        return Err(format!(
            "`{name}.{k}` is [{}]: roqsim has no {}; load `{name}` without it (spawner without {})",
            v.join(", "),
            if k == "fallback_controllers" {
                "fallback controllers"
            } else {
                "per-controller node arguments (remaps, --ros-args)"
            },
            if k == "fallback_controllers" {
                "--fallback_controllers"
            } else {
                "--controller-ros-args"
            }
        ));
    }
    match ty.as_deref() {
        Some("") | None => {
            return Err(format!(
                "The 'type' param was not defined for '{name}'; the world declares it as `{declared}`"
            ))
        }
        Some(ty) if ty != declared => {
            return Err(format!(
                "`{name}.type` is `{ty}`, but the world declares `{name}` as `{declared}`: the world is the parameter file here"
            ))
        }
        Some(_) => {}
    }
    let params = r.declared_parameters(name).unwrap_or_default();
    let checked = param_files::check(&files, name, ns, &declared, &params)?;
    for note in &checked.notes {
        tracing::warn!("load_controller `{name}`: {note}");
    }
    if !checked.overrides.is_empty() {
        let set: Vec<String> =
            checked.overrides.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        tracing::info!("load_controller `{name}`: from the parameter files: {}", set.join(", "));
    }
    load(ctx, checked.overrides)
}

/// Run a request through the transport-neutral core (which notes it for a recording).
fn done(ctx: &mut SimContext, r: &Registry, cmd: ControllerCommand) -> Result<(), String> {
    command::apply(ctx, &r.entity(), &cmd).map(|_| ())
}

fn hardware_component(r: &Registry) -> HardwareComponentState {
    let hw = r.hardware_interfaces();
    HardwareComponentState {
        name: r.entity(),
        type_: "system".into(),
        is_async: false,
        rw_rate: r.update_rate().min(u16::MAX as u32) as u16,
        class_type: HARDWARE_PLUGIN.into(),
        plugin_name: HARDWARE_PLUGIN.into(),
        state: lc(r.hardware_state()),
        command_interfaces: hw.iter().filter(|h| h.is_command).map(hardware_interface).collect(),
        state_interfaces: hw.iter().filter(|h| !h.is_command).map(hardware_interface).collect(),
    }
}

fn set_hardware_state(
    ctx: &mut SimContext,
    r: &Registry,
    q: SetHardwareComponentState::Request,
    t: f64,
    service: &str,
) -> SetHardwareComponentState::Response {
    let name = q.name.clone();
    let cmd = ControllerCommand::SetHardwareState {
        component: q.name,
        id: q.target_state.id,
        label: q.target_state.label,
    };
    let (from, to) = match command::apply(ctx, &r.entity(), &cmd) {
        Ok(Outcome::Hardware { from, to }) => (from, to),
        other => {
            let e = match other {
                Err(e) => e,
                Ok(o) => format!("unexpected outcome {o:?}"),
            };
            tracing::warn!("{service} refused: {e}");
            // A component that does not exist has no state to report.
            let state =
                if name == r.entity() { lc(r.hardware_state()) } else { LcState::default() };
            return SetHardwareComponentState::Response { ok: false, state };
        }
    };
    tracing::info!(
        "{service} at t = {t:.3} s: `{name}` {} -> {}{}",
        from.label(),
        to.label(),
        match to {
            State::Active => "",
            State::Inactive => " (its actuators hold their last command; broadcasters can still be activated)",
            _ => " (its interfaces are unavailable: actuators hold their last command, joint_states repeat the last reading)",
        }
    );
    SetHardwareComponentState::Response { ok: true, state: lc(to) }
}

/// The registry as the manager's nodes mirror it, taken on the physics thread (`seq`: its order
/// there).
struct Snapshot {
    seq: u64,
    activity: Activity,
    loaded: Loaded,
    t: f64,
}

impl Snapshot {
    fn of(r: &Registry, seq: u64, t: f64) -> Snapshot {
        Snapshot { seq, activity: activity_of(r), loaded: loaded_of(r), t }
    }
    /// Sync the controllers' nodes and publish the activity, unless a newer snapshot was applied.
    fn apply(self, nodes: &controller_nodes::Shared, act: &ActivityPub) {
        let fresh = nodes.lock().map(|mut n| n.sync(self.seq, &self.loaded)).unwrap_or(false);
        if fresh {
            act.publish(self.activity, self.t);
        }
    }
}

/// About once a second, a snapshot of the registry is asked for and applied: a reset (which
/// restores the world's declared controllers) or a task plugin changes the registry without a
/// service call, and the controllers' nodes and `~/activity` follow.
fn refresher(
    commands: &CommandSender,
    entity: &str,
    act: &ActivityPub,
    nodes: &controller_nodes::Shared,
    seq: &Arc<AtomicU64>,
) -> Box<dyn FnMut() + Send> {
    let (commands, entity, act, nodes, seq) =
        (commands.clone(), entity.to_string(), act.clone(), nodes.clone(), seq.clone());
    let mut pending: Option<crossbeam_channel::Receiver<Snapshot>> = None;
    let mut last = Instant::now();
    Box::new(move || {
        if let Some(rx) = &pending {
            match rx.try_recv() {
                Ok(snap) => {
                    snap.apply(&nodes, &act);
                    pending = None;
                }
                Err(crossbeam_channel::TryRecvError::Empty) => return,
                Err(crossbeam_channel::TryRecvError::Disconnected) => pending = None,
            }
        }
        if last.elapsed() >= REFRESH_PERIOD {
            last = Instant::now();
            let (tx, rx) = crossbeam_channel::bounded(1);
            let (entity, seq) = (entity.clone(), seq.clone());
            commands.post(move |ctx: &mut SimContext| {
                if let Some(r) = Registry::get(ctx, &entity) {
                    let _ = tx.send(Snapshot::of(
                        &r,
                        seq.fetch_add(1, Ordering::SeqCst),
                        ctx.sim_time(),
                    ));
                }
            });
            pending = Some(rx);
        }
    })
}

/// How often [`refresher`] asks for a snapshot.
const REFRESH_PERIOD: Duration = Duration::from_secs(1);

/// controller_manager_msgs/ControllerState of a registry row.
pub fn controller_state(c: &ControllerInfo) -> ControllerState {
    ControllerState {
        name: c.name.clone(),
        state: c.state.label().to_string(),
        type_: c.type_name.clone(),
        is_async: false,
        update_rate: c.update_rate.min(u16::MAX as u32) as u16,
        claimed_interfaces: c.claimed_interfaces.clone(),
        required_command_interfaces: c.required_command_interfaces.clone(),
        required_state_interfaces: c.required_state_interfaces.clone(),
        ..Default::default()
    }
}

/// controller_manager_msgs/HardwareInterface of a registry row.
pub fn hardware_interface(h: &HardwareInterface) -> HwMsg {
    HwMsg {
        name: h.name.clone(),
        data_type: "double".into(),
        is_available: h.is_available,
        is_claimed: h.is_claimed,
    }
}

fn switch(
    ctx: &mut SimContext,
    r: &Registry,
    q: SwitchController::Request,
    t: f64,
    service: &str,
) -> SwitchController::Response {
    let cmd = ControllerCommand::Switch {
        activate: q.activate_controllers,
        deactivate: q.deactivate_controllers,
        strictness: q.strictness,
        activate_asap: q.activate_asap,
    };
    match command::apply(ctx, &r.entity(), &cmd) {
        Ok(Outcome::Switched(rep)) => {
            let message = rep.message();
            tracing::info!("{service} at t = {t:.3} s: {message}");
            SwitchController::Response { ok: true, message }
        }
        Ok(other) => {
            let message = format!("unexpected outcome {other:?}");
            tracing::warn!("{service} refused: {message}");
            SwitchController::Response { ok: false, message }
        }
        Err(message) => {
            tracing::warn!("{service} refused: {message}");
            SwitchController::Response { ok: false, message }
        }
    }
}

fn logged(service: &str, controller: &str, r: Result<(), String>) -> bool {
    match r {
        Ok(()) => {
            tracing::info!("{service}: `{controller}` done");
            true
        }
        Err(e) => {
            tracing::warn!("{service} refused: {e}");
            false
        }
    }
}

/// What runs on the physics thread for one request: (context, registry, request, sim time,
/// service name). A request that changes the controllers goes through
/// [`command::apply`] with the context.
type OnPhysics<S> = Arc<
    dyn Fn(
            &mut SimContext,
            &Registry,
            <S as WrappedServiceTypeSupport>::Request,
            f64,
            &str,
        ) -> <S as WrappedServiceTypeSupport>::Response
        + Send
        + Sync,
>;

struct Ctx<'a> {
    node: &'a mut r2r::Node,
    m: &'a Manager,
    commands: &'a CommandSender,
    act: &'a ActivityPub,
    nodes: &'a controller_nodes::Shared,
    seq: &'a Arc<AtomicU64>,
}

impl Ctx<'_> {
    fn service<S>(&mut self, srv: &str, f: OnPhysics<S>) -> Result<Task, String>
    where
        S: WrappedServiceTypeSupport + 'static,
        S::Request: Send + 'static,
        S::Response: Send + 'static,
    {
        let name = format!("{}/{srv}", self.m.base);
        let stream = self
            .node
            .create_service::<S>(&name, crate::ros::convert::server_qos())
            .map_err(|e| format!("cannot create the controller_manager service {name}: {e}"))?;
        let (commands, entity, act, nodes, seq) = (
            self.commands.clone(),
            self.m.entity.clone(),
            self.act.clone(),
            self.nodes.clone(),
            self.seq.clone(),
        );
        Ok(serve_loop(stream, move |req: r2r::ServiceRequest<S>| {
            let (tx, rx) = crossbeam_channel::bounded(1);
            let (entity, n, msg, f, seq) =
                (entity.clone(), name.clone(), req.message.clone(), f.clone(), seq.clone());
            commands.post(move |ctx: &mut SimContext| {
                let t = ctx.sim_time();
                let resp = Registry::get(ctx, &entity).map(|r| {
                    let resp = f(ctx, &r, msg, t, &n);
                    (resp, Snapshot::of(&r, seq.fetch_add(1, Ordering::SeqCst), t))
                });
                let _ = tx.send(resp);
            });
            let (name, act, nodes) = (name.clone(), act.clone(), nodes.clone());
            let busy = InFlight::start();
            Box::pin(async move {
                let _busy = busy;
                let resp = match recv_async(rx, REPLY_TIMEOUT).await {
                    Ok(Some((r, snap))) => {
                        // The controllers' nodes come and go before the answer, as upstream's.
                        snap.apply(&nodes, &act);
                        r
                    }
                    Ok(None) => {
                        tracing::warn!("{name}: the robot has no controller registry; replying with a default (failed) response");
                        S::Response::default()
                    }
                    Err(e) => {
                        tracing::warn!(
                            "{name}: {}; replying with a default (failed) response",
                            e.reason()
                        );
                        S::Response::default()
                    }
                };
                if let Err(e) = req.respond(resp) {
                    tracing::warn!("{name}: cannot send the response: {e}");
                }
            })
        }))
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::handles::controllers::State;
    use crate::{load_world_str, Engine, EngineOptions, LoadOptions};

    fn engine(yaml: &str) -> Engine {
        let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("worlds");
        let w = load_world_str(yaml, &base, &LoadOptions::default())
            .unwrap_or_else(|e| panic!("load failed: {e}"));
        Engine::new(w, EngineOptions { profile: false, seed: Some(1) })
            .unwrap_or_else(|e| panic!("engine failed: {e}"))
    }

    #[test]
    fn one_manager_per_robot_with_controllers_in_its_namespace() {
        let two = "sim: {timestep: 0.002}
components:
  - spawn_arm: {model: ur5e, namespace: left, prefix: l_, pos: [0.0, 0.0, 0.5], pedestal: true}
    name: arm_l
  - spawn_arm: {model: ur5e, namespace: right, prefix: r_, pos: [1.0, 0.0, 0.5], pedestal: true}
    name: arm_r
  - box: {pose: {position: {x: 3.0, y: 0.0}}, size: [0.2, 0.2, 0.2]}
    name: crate
";
        let e = engine(two);
        let all = managers(&e.ctx, &BridgeConfig::default()).unwrap();
        assert_eq!(
            all,
            vec![
                Manager { entity: "arm_l".into(), base: "/left/controller_manager".into() },
                Manager { entity: "arm_r".into(), base: "/right/controller_manager".into() },
            ],
            "the crate has no controllers: no manager"
        );
        let cfg = BridgeConfig {
            namespace: "sim".into(),
            owners: Some(vec!["arm_r".into()]),
            ..Default::default()
        };
        assert_eq!(
            managers(&e.ctx, &cfg).unwrap(),
            vec![Manager { entity: "arm_r".into(), base: "/sim/right/controller_manager".into() }]
        );
        // Two robots with controllers in one namespace: refused, naming both and the fix.
        let e = engine(&two.replace("namespace: right", "namespace: left"));
        let err = managers(&e.ctx, &BridgeConfig::default()).unwrap_err();
        assert!(err.contains("robots `arm_l` and `arm_r` both have controllers and would both be served at /left/controller_manager"), "{err}");
        assert!(err.contains("Give one of them its own `namespace:`"), "{err}");
        // A world with no controllers is served none.
        let none = engine("sim: {timestep: 0.002}\ncomponents:\n  - box: {pose: {position: {x: 1.0, y: 0.0}}, size: [0.2, 0.2, 0.2]}\n    name: crate\n");
        assert!(managers(&none.ctx, &BridgeConfig::default()).unwrap().is_empty());
    }

    #[test]
    fn rows_map_to_controller_manager_msgs() {
        let e = engine(
            &std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("worlds/ur_pick.yaml"),
            )
            .unwrap(),
        );
        let reg = Registry::get(&e.ctx, "ur").expect("registry");
        let rows = reg.list();
        let jtc = controller_state(&rows[0]);
        assert_eq!(
            (jtc.name.as_str(), jtc.state.as_str(), jtc.type_.as_str()),
            (
                "scaled_joint_trajectory_controller",
                "active",
                "joint_trajectory_controller/JointTrajectoryController"
            )
        );
        assert_eq!(jtc.update_rate, 500);
        assert_eq!(jtc.claimed_interfaces.len(), 6);
        assert!(!jtc.is_chainable && !jtc.is_chained && jtc.chain_connections.is_empty());
        reg.switch(
            &[],
            &["scaled_joint_trajectory_controller".into()],
            crate::handles::controllers::STRICT,
            1.0,
        )
        .unwrap();
        let jtc = controller_state(&reg.list()[0]);
        assert_eq!(jtc.state, State::Inactive.label());
        assert!(jtc.claimed_interfaces.is_empty() && jtc.required_command_interfaces.len() == 6);
        let hw: Vec<HwMsg> = reg.hardware_interfaces().iter().map(hardware_interface).collect();
        assert!(hw.iter().all(|h| h.data_type == "double" && h.is_available));
        assert_eq!(
            hw.iter().filter(|h| h.is_claimed).count(),
            1,
            "only the gripper's command interface is held now"
        );
    }
}
