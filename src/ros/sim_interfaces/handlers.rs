//! The request handlers: each turns one simulation_interfaces request into calls of
//! [`crate::engine::sim_control`] on the physics thread and answers through its reply (at once,
//! or later from post_step for steps and resets).

use std::sync::atomic::Ordering;

use r2r::geometry_msgs::msg as geo;
use r2r::simulation_interfaces::msg as si;
use r2r::simulation_interfaces::srv;

use super::jobs::*;
use super::WORLD_FRAME;
use crate::context::{Entity, EntityKind, SimContext};
use crate::engine::sim_control::{self as sc, codes, Refusal};
use crate::ros::convert;

pub(super) fn entity_state_msg(s: &sc::EntityState, t: f64) -> si::EntityState {
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

pub(super) fn check_frame(frame: &str, what: &str) -> Result<(), String> {
    if frame.is_empty() || frame == WORLD_FRAME {
        Ok(())
    } else {
        Err(format!("{what} `{frame}`: only the world frame is supported (leave it empty or give `{WORLD_FRAME}`)"))
    }
}

/// A present entity, or NOT_FOUND naming what exists (absent ones are spawnables).
pub(super) fn present_entity<'a>(ctx: &'a SimContext, name: &str) -> Result<&'a Entity, Refusal> {
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
pub(super) fn describe(e: &Entity) -> String {
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

pub(super) fn h_features(
    _: srv::GetSimulatorFeatures::Request,
    r: Reply<srv::GetSimulatorFeatures::Response>,
    ctx: &mut SimContext,
    _: &mut Shared,
) {
    r.send(srv::GetSimulatorFeatures::Response {
        features: si::SimulatorFeatures {
            features: sc::FEATURES.to_vec(),
            spawn_formats: Vec::new(),
            custom_info: sc::custom_info(ctx.run.lockstep),
        },
    });
}

pub(super) fn filtered(ctx: &SimContext, f: &si::EntityFilters) -> Result<Vec<String>, Refusal> {
    let cats: Vec<u8> = f.categories.iter().map(|c| c.category).collect();
    sc::filter_names(ctx, true, &f.filter, &cats, &f.tags.tags, f.bounds.type_)
}

pub(super) fn h_entities(
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

pub(super) fn h_entities_states(
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

pub(super) fn h_entity_state(
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

pub(super) fn h_set_entity_state(
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

pub(super) fn h_entity_info(
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

pub(super) fn h_spawnables(
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
pub(super) type PoseSpec = ([f64; 3], [f64; 4]);

/// SpawnEntity.initial_pose: `None` when left at its default (origin with an identity or zero
/// quaternion): the entity then keeps its declared pose.
pub(super) fn initial_pose(p: &geo::PoseStamped) -> Result<Option<PoseSpec>, Refusal> {
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

pub(super) fn h_spawn(
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

pub(super) fn h_delete(
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

pub(super) fn h_get_state(
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

pub(super) fn h_set_state(
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

pub(super) fn h_step(
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

pub(super) fn h_reset(
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
