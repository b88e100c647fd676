//! simulation_interfaces semantics, transport-neutral: spawning is activation of a
//! compiled entity, not creation, and moving one needs a free joint.
//!
//! Every function runs on the physics thread against a [`SimContext`] and answers with the
//! result codes of `simulation_interfaces` 1.5.1 (as ROS 2 Jazzy distributes it), so the ROS
//! layer only converts messages. Spawning selects an entity the world declared absent; deleting
//! makes it absent; nothing is ever compiled at run time.

use mujoco_rs::mujoco_c::mj_objectVelocity;
use mujoco_rs::prelude::*;

use crate::context::tap::WorldCommand;
use crate::context::{EntityKind, ResetScope, RunState, SimContext};
use crate::error::{clip, num};
use crate::math::{arr3, quat, vec3};
pub use crate::world::bounds::{
    MAX_ANGULAR_SPEED, MAX_LINEAR_SPEED, MAX_POSITION_M, QUAT_NORM_RANGE,
};

/// simulation_interfaces/msg/Result codes and per-service constants.
pub mod codes {
    /// Result.RESULT_FEATURE_UNSUPPORTED.
    pub const FEATURE_UNSUPPORTED: u8 = 0;
    /// Result.RESULT_OK.
    pub const OK: u8 = 1;
    /// Result.RESULT_NOT_FOUND.
    pub const NOT_FOUND: u8 = 2;
    /// Result.RESULT_INCORRECT_STATE.
    pub const INCORRECT_STATE: u8 = 3;
    /// Result.RESULT_OPERATION_FAILED.
    pub const OPERATION_FAILED: u8 = 4;
    /// SetSimulationState.ALREADY_IN_TARGET_STATE.
    pub const ALREADY_IN_TARGET_STATE: u8 = 101;
    /// SetSimulationState.STATE_TRANSITION_ERROR.
    pub const STATE_TRANSITION_ERROR: u8 = 102;
    /// SetSimulationState.INCORRECT_TRANSITION.
    pub const INCORRECT_TRANSITION: u8 = 103;
    /// SpawnEntity.NAME_NOT_UNIQUE.
    pub const NAME_NOT_UNIQUE: u8 = 101;
    /// SpawnEntity.NAME_INVALID.
    pub const NAME_INVALID: u8 = 102;
    /// SpawnEntity.UNSUPPORTED_FORMAT.
    pub const UNSUPPORTED_FORMAT: u8 = 103;
    /// SpawnEntity.NO_RESOURCE.
    pub const NO_RESOURCE: u8 = 104;
    /// SpawnEntity.NAMESPACE_INVALID.
    pub const NAMESPACE_INVALID: u8 = 105;
    /// SpawnEntity.INVALID_POSE.
    pub const SPAWN_INVALID_POSE: u8 = 109;
    /// SetEntityState.INVALID_POSE.
    pub const SET_INVALID_POSE: u8 = 101;
}

/// simulation_interfaces/msg/SimulationState values.
pub mod state {
    /// STATE_STOPPED.
    pub const STOPPED: u8 = 0;
    /// STATE_PLAYING.
    pub const PLAYING: u8 = 1;
    /// STATE_PAUSED.
    pub const PAUSED: u8 = 2;
    /// STATE_QUITTING.
    pub const QUITTING: u8 = 3;
    /// STATE_NO_WORLD.
    pub const NO_WORLD: u8 = 4;
    /// STATE_LOADING_WORLD.
    pub const LOADING_WORLD: u8 = 5;
}

/// simulation_interfaces/msg/EntityCategory values.
pub mod category {
    /// CATEGORY_OBJECT.
    pub const OBJECT: u8 = 0;
    /// CATEGORY_ROBOT.
    pub const ROBOT: u8 = 1;
    /// CATEGORY_HUMAN.
    pub const HUMAN: u8 = 2;
    /// CATEGORY_DYNAMIC_OBJECT.
    pub const DYNAMIC_OBJECT: u8 = 4;
    /// CATEGORY_STATIC_OBJECT.
    pub const STATIC_OBJECT: u8 = 5;
}

/// SimulatorFeatures this simulator implements, exactly (simulation_interfaces/msg/SimulatorFeatures).
pub const FEATURES: [u16; 17] = [
    0,  // SPAWNING
    1,  // DELETING
    8,  // ENTITY_CATEGORIES
    10, // ENTITY_STATE_GETTING
    11, // ENTITY_STATE_SETTING
    12, // ENTITY_INFO_GETTING
    14, // SPAWNABLES
    20, // SIMULATION_RESET
    21, // SIMULATION_RESET_TIME
    22, // SIMULATION_RESET_STATE
    23, // SIMULATION_RESET_SPAWNED
    24, // SIMULATION_STATE_GETTING
    25, // SIMULATION_STATE_SETTING
    26, // SIMULATION_STATE_PAUSE
    31, // STEP_SIMULATION_SINGLE
    32, // STEP_SIMULATION_MULTIPLE
    33, // STEP_SIMULATION_ACTION
];

/// GetSimulatorFeatures' `custom_info`. simulation_interfaces 1.5 has no feature constant for
/// lockstep, so a run in lockstep (`sim.sync.enabled`) says so here, in words a client can match:
/// `lockstep: true`.
pub fn custom_info(lockstep: bool) -> String {
    let spawn = "roqsim: SpawnEntity activates an entity the world declares with `present: false` (uri = its name, \
                 as GetSpawnables lists it); nothing is compiled at run time, so spawn_formats is empty";
    if lockstep {
        format!("{spawn}. lockstep: true (sim.sync is enabled: each step that publishes a sync sensor waits for the \
                 controller's reply on the sim.sync.control endpoints; /clock advances only with steps)")
    } else {
        format!("{spawn}. lockstep: false")
    }
}

/// A refused request: the result code and the message for `Result.error_message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// A [`codes`] value.
    pub code: u8,
    /// What went wrong and what to do instead.
    pub message: String,
}

fn refuse<T>(code: u8, message: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal { code, message: message.into() })
}

/// An entity's state (simulation_interfaces/msg/EntityState), world frame.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EntityState {
    /// Position (m).
    pub position: [f64; 3],
    /// Orientation [x, y, z, w].
    pub orientation: [f64; 4],
    /// Linear velocity (m/s), world frame.
    pub linear: [f64; 3],
    /// Angular velocity (rad/s), world frame.
    pub angular: [f64; 3],
}

/// The category of an entity: robots and arms are robots; a prop with a free joint (or a mocap
/// body) is dynamic, a welded one static; a person is human; doors and sensors are objects.
pub fn category_of(ctx: &SimContext, name: &str) -> Option<u8> {
    let e = ctx.entities.get(name)?;
    Some(match e.kind {
        EntityKind::Robot | EntityKind::Arm => category::ROBOT,
        EntityKind::Object if e.free_joint.is_some() || is_mocap(ctx, &e.body) => {
            category::DYNAMIC_OBJECT
        }
        EntityKind::Object => category::STATIC_OBJECT,
        EntityKind::Person => category::HUMAN,
        EntityKind::Door | EntityKind::Sensor | EntityKind::Other => category::OBJECT,
    })
}

fn is_mocap(ctx: &SimContext, body: &str) -> bool {
    let m = ctx.model();
    m.name_to_id(MjtObjBase::mjOBJ_BODY, body).is_some_and(|b| m.body_mocapid()[b] >= 0)
}

/// Entity filters (simulation_interfaces/msg/EntityFilters): a regular expression on names
/// (empty = all), categories (empty = all). Tags and bounds are not supported (no entity has
/// tags or bounds here): a non-empty tag list or a bounds filter is refused as unsupported.
pub fn filter_names(
    ctx: &SimContext,
    present: bool,
    filter: &str,
    categories: &[u8],
    tags: &[String],
    bounds_type: u8,
) -> Result<Vec<String>, Refusal> {
    if !tags.is_empty() {
        return refuse(
            codes::FEATURE_UNSUPPORTED,
            "entity tags are not supported (ENTITY_TAGS is not among the simulator features)",
        );
    }
    if bounds_type != 0 {
        return refuse(
            codes::FEATURE_UNSUPPORTED,
            "bounds filters are not supported (ENTITY_BOUNDS is not among the simulator features)",
        );
    }
    let re = if filter.is_empty() {
        None
    } else {
        Some(regex::Regex::new(filter).map_err(|e| Refusal {
            code: codes::OPERATION_FAILED,
            message: format!("filter `{filter}` is not a valid regular expression: {e}"),
        })?)
    };
    Ok(ctx
        .entities
        .all()
        .iter()
        .filter(|e| e.present == present)
        .filter(|e| re.as_ref().is_none_or(|r| r.is_match(&e.name)))
        .filter(|e| {
            categories.is_empty()
                || category_of(ctx, &e.name).is_some_and(|c| categories.contains(&c))
        })
        .map(|e| e.name.clone())
        .collect())
}

fn body_id(ctx: &SimContext, name: &str) -> Result<usize, Refusal> {
    let e = ctx.entities.get(name).ok_or_else(|| Refusal {
        code: codes::NOT_FOUND,
        message: format!(
            "no entity `{}`; entities: {}",
            clip(name),
            ctx.entities.names().join(", ")
        ),
    })?;
    ctx.model().name_to_id(MjtObjBase::mjOBJ_BODY, &e.body).ok_or_else(|| Refusal {
        code: codes::OPERATION_FAILED,
        message: format!("entity `{name}`: body `{}` not in the model", e.body),
    })
}

/// The world-frame state of an entity's root body.
pub fn entity_state(ctx: &SimContext, name: &str) -> Result<EntityState, Refusal> {
    let b = body_id(ctx, name)?;
    let d = ctx.data();
    let q = d.xquat()[b];
    let mut v = [0.0f64; 6];
    // SAFETY: valid model/data and body id; mj_objectVelocity writes 6 numbers.
    unsafe {
        mj_objectVelocity(
            d.model().ffi(),
            d.ffi(),
            MjtObj::mjOBJ_BODY as i32,
            b as i32,
            v.as_mut_ptr() as *mut [f64; 6],
            0,
        );
    }
    // mj_objectVelocity reports the linear velocity at the body's centre of mass; the entity's
    // frame is the body origin: v_origin = v_com + w x (origin - com).
    let w = vec3(&[v[0], v[1], v[2]]);
    let (o, c) = (d.xpos()[b], d.xipos()[b]);
    let linear = vec3(&[v[3], v[4], v[5]]) + w.cross(&(vec3(&o) - vec3(&c)));
    let (angular, linear) = (arr3(&w), arr3(&linear));
    Ok(EntityState { position: o, orientation: [q[1], q[2], q[3], q[0]], angular, linear })
}

/// Check a requested pose: every value finite, the position within [`MAX_POSITION_M`], the
/// quaternion [x, y, z, w] of a norm within [`QUAT_NORM_RANGE`]. Returns MuJoCo's unit [w, x, y, z].
pub fn check_pose(p: [f64; 3], q: [f64; 4]) -> Result<([f64; 3], [f64; 4]), String> {
    let axes = ["x", "y", "z"];
    for (i, v) in p.iter().enumerate() {
        if !v.is_finite() || v.abs() > MAX_POSITION_M {
            return Err(format!(
                "pose.position.{} = {}: must be finite and within ±{MAX_POSITION_M} m",
                axes[i],
                num(*v)
            ));
        }
    }
    let names = ["x", "y", "z", "w"];
    if let Some(i) = q.iter().position(|v| !v.is_finite()) {
        return Err(format!("pose.orientation.{} = {}: must be finite", names[i], num(q[i])));
    }
    // Scale before squaring so a huge component does not overflow to inf.
    let big = q.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let n =
        if big > 0.0 { big * q.iter().map(|v| (v / big).powi(2)).sum::<f64>().sqrt() } else { 0.0 };
    let (lo, hi) = QUAT_NORM_RANGE;
    if !(lo..=hi).contains(&n) {
        return Err(format!(
            "pose.orientation has norm {n:e}: a rotation needs a quaternion of norm within [{lo}, {hi}] (it is normalised); send (0, 0, 0, 1) for no rotation"
        ));
    }
    Ok((p, [q[3] / n, q[0] / n, q[1] / n, q[2] / n]))
}

/// Check a requested twist (linear m/s, angular rad/s, world frame): finite and within
/// [`MAX_LINEAR_SPEED`] / [`MAX_ANGULAR_SPEED`].
pub fn check_twist(lin: [f64; 3], ang: [f64; 3]) -> Result<(), String> {
    let axes = ["x", "y", "z"];
    for (part, v, max, unit) in
        [("linear", lin, MAX_LINEAR_SPEED, "m/s"), ("angular", ang, MAX_ANGULAR_SPEED, "rad/s")]
    {
        for (i, x) in v.iter().enumerate() {
            if !x.is_finite() || x.abs() > max {
                return Err(format!(
                    "twist.{part}.{} = {}: must be finite and within ±{max} {unit}",
                    axes[i],
                    num(*x)
                ));
            }
        }
    }
    Ok(())
}

/// Teleport an entity: writes its free joint (pose and/or twist), or its mocap pose. A welded
/// entity refuses a move, naming the weld and its plugin's way out; a "move" to the pose it already
/// holds succeeds. `orientation` is [x, y, z, w], normalised here; a non-finite or out-of-bounds
/// value ([`check_pose`], [`check_twist`]) is refused before anything is written.
pub fn set_entity_state(
    ctx: &mut SimContext,
    name: &str,
    pose: Option<([f64; 3], [f64; 4])>,
    twist: Option<([f64; 3], [f64; 3])>,
) -> Result<(), Refusal> {
    ctx.interface.tap_world(|| WorldCommand::SetEntityState { name: name.into(), pose, twist });
    move_entity(ctx, name, pose, twist)
}

fn move_entity(
    ctx: &mut SimContext,
    name: &str,
    pose: Option<([f64; 3], [f64; 4])>,
    twist: Option<([f64; 3], [f64; 3])>,
) -> Result<(), Refusal> {
    let b = body_id(ctx, name)?;
    let e = ctx.entities.get(name).cloned().expect("checked");
    let pose = match pose {
        Some((p, q)) => match check_pose(p, q) {
            Ok(x) => Some(x),
            Err(m) => {
                return refuse(codes::SET_INVALID_POSE, format!("invalid state for `{name}`: {m}"))
            }
        },
        None => None,
    };
    if let Some((l, a)) = twist {
        if let Err(m) = check_twist(l, a) {
            return refuse(codes::INCORRECT_STATE, format!("invalid state for `{name}`: {m}"));
        }
    }
    let m = ctx.model();
    let joint = e.free_joint.as_deref().and_then(|j| m.name_to_id(MjtObjBase::mjOBJ_JOINT, j));
    let mocap = m.body_mocapid()[b];
    if let Some(j) = joint {
        let (qadr, dadr) = (m.jnt_qposadr()[j] as usize, m.jnt_dofadr()[j] as usize);
        let d = ctx.data_mut();
        if let Some((p, q)) = pose {
            let qpos = d.qpos_mut();
            qpos[qadr..qadr + 3].copy_from_slice(&p);
            qpos[qadr + 3..qadr + 7].copy_from_slice(&q);
        }
        if let Some((lin, ang)) = twist {
            // free joint: linear velocity in the world frame, angular in the body frame
            let q = &d.qpos()[qadr + 3..qadr + 7];
            let ang_local = arr3(&(quat(&[q[0], q[1], q[2], q[3]]).inverse() * vec3(&ang)));
            let qvel = d.qvel_mut();
            qvel[dadr..dadr + 3].copy_from_slice(&lin);
            qvel[dadr + 3..dadr + 6].copy_from_slice(&ang_local);
        }
        d.forward();
        return Ok(());
    }
    if mocap >= 0 {
        if let Some((p, q)) = pose {
            let d = ctx.data_mut();
            d.mocap_pos_mut()[mocap as usize] = p;
            d.mocap_quat_mut()[mocap as usize] = q;
            d.forward();
        }
        if twist.is_some_and(|(l, a)| l.iter().chain(a.iter()).any(|x| *x != 0.0)) {
            return refuse(
                codes::OPERATION_FAILED,
                format!("`{name}` is a driven (mocap) body: it takes a pose, not a velocity"),
            );
        }
        return Ok(());
    }
    // Welded scenery: only its current pose is acceptable.
    let cur = entity_state(ctx, name)?;
    let same_pose = pose.is_none_or(|(p, q)| {
        let cq = [cur.orientation[3], cur.orientation[0], cur.orientation[1], cur.orientation[2]];
        let dot: f64 = q.iter().zip(cq.iter()).map(|(a, b)| a * b).sum();
        p.iter().zip(cur.position.iter()).all(|(a, b)| (a - b).abs() < 1e-9)
            && dot.abs() > 1.0 - 1e-12
    });
    let still = twist.is_none_or(|(l, a)| l.iter().chain(a.iter()).all(|x| *x == 0.0));
    if same_pose && still {
        return Ok(());
    }
    // Each plugin's reason carries its own way out (a `motion:` key only where the plugin takes one).
    let why = e.weld_reason.clone().unwrap_or_else(|| "it has no free joint".to_string());
    refuse(codes::OPERATION_FAILED, format!("`{name}` is welded and cannot be moved: {why}"))
}

/// Spawnables: the absent entities, by uri (= their name).
pub fn spawnables(ctx: &SimContext) -> Vec<String> {
    ctx.entities.all().iter().filter(|e| !e.present).map(|e| e.name.clone()).collect()
}

/// SpawnEntity: select an absent entity by `uri` (or by `name` when the uri is empty), make it
/// present, optionally at `pose`. A different name is a refused rename; an unknown uri refused;
/// a resource string (geometry) refused: nothing is compiled at run time.
pub fn spawn(
    ctx: &mut SimContext,
    name: &str,
    uri: &str,
    resource_string: &str,
    namespace: &str,
    pose: Option<([f64; 3], [f64; 4])>,
) -> Result<String, Refusal> {
    ctx.interface.tap_world(|| WorldCommand::Spawn {
        name: name.into(),
        uri: uri.into(),
        resource_string: resource_string.into(),
        namespace: namespace.into(),
        pose,
    });
    if !resource_string.is_empty() {
        return refuse(codes::UNSUPPORTED_FORMAT, "resource strings are not supported (spawn_formats is empty): the world declares everything a trial may bring in; spawn one of GetSpawnables by uri");
    }
    let target = if !uri.is_empty() { uri } else { name };
    if target.is_empty() {
        return refuse(
            codes::NO_RESOURCE,
            "both uri and name are empty: give the uri of one of GetSpawnables",
        );
    }
    let Some(e) = ctx.entities.get(target).cloned() else {
        let spare = spawnables(ctx);
        return refuse(
            codes::NOT_FOUND,
            format!("the world declares no entity `{}`; spawnable: [{}] (declare one with `present: false`)", clip(target), spare.join(", ")),
        );
    };
    if !name.is_empty() && name != target {
        return refuse(codes::NAME_INVALID, format!("`{target}` cannot be renamed to `{}`: a compiled entity keeps its name (leave name empty or equal to the uri)", clip(name)));
    }
    if !namespace.is_empty() && namespace.trim_matches('/') != e.namespace {
        return refuse(
            codes::NAMESPACE_INVALID,
            format!("`{target}` lives in namespace `{}`, not `{}`", e.namespace, clip(namespace)),
        );
    }
    if e.present {
        return refuse(
            codes::NAME_NOT_UNIQUE,
            format!("`{target}` is already present (GetSpawnables lists the absent entities)"),
        );
    }
    if let Some((p, q)) = pose {
        if let Err(m) = check_pose(p, q) {
            return refuse(codes::SPAWN_INVALID_POSE, format!("invalid pose for `{target}`: {m}"));
        }
    }
    crate::engine::presence::set_present(ctx, target, true)
        .map_err(|m| Refusal { code: codes::OPERATION_FAILED, message: m })?;
    if pose.is_some() {
        if let Err(r) = move_entity(ctx, target, pose, None) {
            // Roll back: the spawn did not happen.
            let _ = crate::engine::presence::set_present(ctx, target, false);
            return Err(Refusal {
                code: if r.code == codes::SET_INVALID_POSE {
                    codes::SPAWN_INVALID_POSE
                } else {
                    r.code
                },
                message: r.message,
            });
        }
    }
    Ok(target.to_string())
}

/// DeleteEntity: make a present entity absent (its pose does not move).
pub fn delete(ctx: &mut SimContext, name: &str) -> Result<(), Refusal> {
    ctx.interface.tap_world(|| WorldCommand::Delete { name: name.into() });
    let Some(e) = ctx.entities.get(name) else {
        return refuse(
            codes::NOT_FOUND,
            format!("no entity `{}`; entities: {}", clip(name), ctx.entities.names().join(", ")),
        );
    };
    if !e.present {
        return refuse(
            codes::NOT_FOUND,
            format!("`{name}` is already absent (it is among GetSpawnables)"),
        );
    }
    crate::engine::presence::set_present(ctx, name, false)
        .map_err(|m| Refusal { code: codes::OPERATION_FAILED, message: m })
}

/// Apply a recorded world command again (a replay): the same call, the same outcome.
pub fn apply(ctx: &mut SimContext, cmd: &WorldCommand) -> Result<(), Refusal> {
    match cmd {
        WorldCommand::Spawn { name, uri, resource_string, namespace, pose } => {
            spawn(ctx, name, uri, resource_string, namespace, *pose).map(|_| ())
        }
        WorldCommand::Delete { name } => delete(ctx, name),
        WorldCommand::SetEntityState { name, pose, twist } => {
            set_entity_state(ctx, name, *pose, *twist)
        }
    }
}

/// The current SimulationState value.
pub fn get_state(ctx: &SimContext) -> u8 {
    match ctx.control.state {
        RunState::Stopped => state::STOPPED,
        RunState::Playing => state::PLAYING,
        RunState::Paused => state::PAUSED,
        RunState::Quitting => state::QUITTING,
    }
}

/// SetSimulationState with the standard transitions: playing ↔ paused; stop (a reset to the
/// initial state, then held) from playing or paused; quitting from anywhere; stopped → paused is
/// an incorrect transition; world states are unsupported.
pub fn set_state(ctx: &mut SimContext, target: u8) -> Result<(), Refusal> {
    let cur = get_state(ctx);
    if target == cur {
        return refuse(
            codes::ALREADY_IN_TARGET_STATE,
            format!("the simulation is already in state {target}"),
        );
    }
    match (cur, target) {
        (_, state::QUITTING) => ctx.control.state = RunState::Quitting,
        (state::QUITTING, _) => {
            return refuse(codes::INCORRECT_TRANSITION, "the simulation is quitting")
        }
        (_, state::PLAYING) => {
            // Leaving PAUSED ends a step request: its remaining steps are cancelled (the request
            // answers how many it took), never taken later at full speed.
            ctx.control.state = RunState::Playing;
            ctx.control.pending_steps = 0;
        }
        (state::PLAYING, state::PAUSED) => ctx.control.state = RunState::Paused,
        (state::STOPPED, state::PAUSED) => {
            return refuse(
                codes::INCORRECT_TRANSITION,
                "STOPPED -> PAUSED is not a transition: play first (STOPPED -> PLAYING -> PAUSED)",
            )
        }
        (_, state::STOPPED) => {
            ctx.control.state = RunState::Stopped;
            ctx.control.pending_steps = 0;
            ctx.control.reset = Some(ResetScope::ALL);
        }
        (_, state::NO_WORLD | state::LOADING_WORLD) => {
            return refuse(
                codes::FEATURE_UNSUPPORTED,
                "world loading is not supported: a roqsim run has exactly one world",
            )
        }
        (_, other) => {
            return refuse(codes::INCORRECT_TRANSITION, format!("unknown target state {other}"))
        }
    }
    Ok(())
}

/// StepSimulation: only while paused; queues exactly `steps` physics steps (the driver takes
/// them; /clock advances by steps·dt).
pub fn step(ctx: &mut SimContext, steps: u64) -> Result<(), Refusal> {
    if ctx.control.state != RunState::Paused {
        return refuse(
            codes::INCORRECT_STATE,
            format!("StepSimulation works only while paused (the state is {}); call SetSimulationState(STATE_PAUSED) first", get_state(ctx)),
        );
    }
    if ctx.control.pending_steps > 0 {
        return refuse(
            codes::INCORRECT_STATE,
            format!(
                "{} steps of an earlier request are still being taken",
                ctx.control.pending_steps
            ),
        );
    }
    ctx.control.pending_steps = steps;
    Ok(())
}

/// ResetSimulation scope bits → what the engine resets. `0` (SCOPE_DEFAULT) and 255 (SCOPE_ALL)
/// reset everything; TIME = 1, STATE = 2, SPAWNED = 4. Any other bit is refused (its message
/// names the bits): a reset that silently resets nothing is a lie.
pub fn reset_scope(bits: u8) -> Result<ResetScope, Refusal> {
    if bits == 0 || bits == 255 {
        return Ok(ResetScope::ALL);
    }
    if bits & !7 != 0 {
        return refuse(
            codes::OPERATION_FAILED,
            format!(
                "unknown ResetSimulation scope {bits} (bits {:#010b} are not defined): use SCOPE_DEFAULT 0, SCOPE_ALL 255, or a sum of SCOPE_TIME 1, SCOPE_STATE 2, SCOPE_SPAWNED 4",
                bits & !7
            ),
        );
    }
    Ok(ResetScope { time: bits & 1 != 0, state: bits & 2 != 0, spawned: bits & 4 != 0 })
}

/// ResetSimulation: queue a reset of `scope` for the driver (taken before the next step).
pub fn request_reset(ctx: &mut SimContext, bits: u8) -> Result<(), Refusal> {
    if ctx.control.state == RunState::Quitting {
        return refuse(codes::INCORRECT_STATE, "the simulation is quitting");
    }
    ctx.control.reset = Some(reset_scope(bits)?);
    Ok(())
}
