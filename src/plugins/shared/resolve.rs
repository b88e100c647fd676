//! Resolving an entity's actuators, joints, bodies and sites by their unprefixed model names, and
//! the facts about them plugins check (servo kind, control limits, rest poses).

use mujoco_rs::mujoco_c::mjtTrn;
use mujoco_rs::prelude::*;

use crate::context::entities::Pose;
use crate::context::Entity;

/// `name` with the entity prefix removed (names in payloads are the model's own).
pub fn unprefixed<'a>(name: &'a str, prefix: &str) -> &'a str {
    name.strip_prefix(prefix).unwrap_or(name)
}

/// Id of the entity's root body (its registered `body`).
pub fn entity_body(model: &MjModel, entity: &Entity) -> Result<usize, String> {
    model.name_to_id(MjtObjBase::mjOBJ_BODY, &entity.body).ok_or_else(|| {
        format!(
            "entity `{}` names root body `{}`, which is not in the compiled model",
            entity.name, entity.body
        )
    })
}

/// Ids of every top-level body the entity's model file brought: its registered root body first,
/// then the others the spawn recorded (entity meta `roots`, see `crate::model_import`). A name
/// addressed through the entity resolves when it lies under any of them.
pub fn entity_roots(model: &MjModel, entity: &Entity) -> Result<Vec<usize>, String> {
    let root = entity_body(model, entity)?;
    let mut v = vec![root];
    if let Some(list) = entity.meta.get(crate::spawn::import::ROOTS_META) {
        for n in list.split(',').filter(|n| !n.is_empty()) {
            if let Some(b) = model.name_to_id(MjtObjBase::mjOBJ_BODY, n) {
                if !v.contains(&b) {
                    v.push(b);
                }
            }
        }
    }
    Ok(v)
}

/// True when `body` lies under any of `roots` (see [`entity_roots`]).
pub fn in_entity(model: &MjModel, body: usize, roots: &[usize]) -> bool {
    roots.iter().any(|&r| in_subtree(model, body, r))
}

/// True when `body` is `root` or one of its descendants.
pub fn in_subtree(model: &MjModel, mut body: usize, root: usize) -> bool {
    let parent = model.body_parentid();
    loop {
        if body == root {
            return true;
        }
        if body == 0 {
            return false;
        }
        body = parent[body] as usize;
    }
}

fn names_where(
    model: &MjModel,
    obj: MjtObjBase,
    n: usize,
    prefix: &str,
    keep: impl Fn(usize) -> bool,
) -> Vec<String> {
    (0..n)
        .filter(|&i| keep(i))
        .filter_map(|i| model.id_to_name(obj, i).map(|s| unprefixed(s, prefix).to_string()))
        .collect()
}

/// Joint an actuator drives, when its transmission is a joint.
pub fn actuator_joint(model: &MjModel, act: usize) -> Option<usize> {
    let t = model.actuator_trntype()[act];
    (t == mjtTrn::mjTRN_JOINT || t == mjtTrn::mjTRN_JOINTINPARENT)
        .then(|| model.actuator_trnid()[act][0] as usize)
}

/// Actuators of the entity (transmission on a joint of its subtree), unprefixed names.
pub fn entity_actuators(model: &MjModel, entity: &Entity) -> Vec<String> {
    let Ok(roots) = entity_roots(model, entity) else { return Vec::new() };
    let nu = model.ffi().nu as usize;
    names_where(model, MjtObjBase::mjOBJ_ACTUATOR, nu, &entity.prefix, |a| {
        actuator_joint(model, a)
            .is_some_and(|j| in_entity(model, model.jnt_bodyid()[j] as usize, &roots))
            || model
                .id_to_name(MjtObjBase::mjOBJ_ACTUATOR, a)
                .is_some_and(|n| !entity.prefix.is_empty() && n.starts_with(&entity.prefix))
    })
}

/// Joints of the entity (on bodies of its subtree), unprefixed names.
pub fn entity_joints(model: &MjModel, entity: &Entity) -> Vec<String> {
    let Ok(roots) = entity_roots(model, entity) else { return Vec::new() };
    let nj = model.ffi().njnt as usize;
    names_where(model, MjtObjBase::mjOBJ_JOINT, nj, &entity.prefix, |j| {
        in_entity(model, model.jnt_bodyid()[j] as usize, &roots)
    })
}

/// Resolve an actuator the config names by its model name (`key` is the config key, for the
/// message). A joint name given instead is refused naming the actuator that drives it; an unknown
/// name is refused listing the entity's actuators.
pub fn resolve_actuator(
    model: &MjModel,
    entity: &Entity,
    key: &str,
    name: &str,
) -> Result<usize, String> {
    let full = format!("{}{name}", entity.prefix);
    if let Some(a) = model.name_to_id(MjtObjBase::mjOBJ_ACTUATOR, &full) {
        return Ok(a);
    }
    if let Some(j) = model.name_to_id(MjtObjBase::mjOBJ_JOINT, &full) {
        let nu = model.ffi().nu as usize;
        let drivers: Vec<String> = (0..nu)
            .filter(|&a| actuator_joint(model, a) == Some(j))
            .filter_map(|a| {
                model
                    .id_to_name(MjtObjBase::mjOBJ_ACTUATOR, a)
                    .map(|s| unprefixed(s, &entity.prefix).to_string())
            })
            .collect();
        return Err(if drivers.is_empty() {
            format!("{key}: `{name}` is a joint of `{}`, not an actuator, and no actuator drives it; its actuators are [{}]", entity.name, entity_actuators(model, entity).join(", "))
        } else {
            format!(
                "{key}: `{name}` is a joint, not an actuator; the actuator driving it is `{}` (write `{key}: {}`)",
                drivers.join("`, `"),
                drivers[0]
            )
        });
    }
    Err(format!(
        "{key}: entity `{}` has no actuator `{name}` (looked up as `{full}`); its actuators are [{}]",
        entity.name,
        entity_actuators(model, entity).join(", ")
    ))
}

/// Resolve a joint of the entity by its model name; an unknown name (or one on another entity) is
/// refused listing the entity's joints; an actuator name given instead names its joint.
pub fn resolve_joint(
    model: &MjModel,
    entity: &Entity,
    key: &str,
    name: &str,
) -> Result<usize, String> {
    let full = format!("{}{name}", entity.prefix);
    if let Some(j) = model.name_to_id(MjtObjBase::mjOBJ_JOINT, &full) {
        let roots = entity_roots(model, entity)?;
        if in_entity(model, model.jnt_bodyid()[j] as usize, &roots) {
            return Ok(j);
        }
    }
    if let Some(a) = model.name_to_id(MjtObjBase::mjOBJ_ACTUATOR, &full) {
        if let Some(j) = actuator_joint(model, a) {
            let jn = model.id_to_name(MjtObjBase::mjOBJ_JOINT, j).unwrap_or("?");
            return Err(format!(
                "{key}: `{name}` is an actuator, not a joint; the joint it drives is `{}`",
                unprefixed(jn, &entity.prefix)
            ));
        }
    }
    Err(format!(
        "{key}: entity `{}` has no joint `{name}` (looked up as `{full}`); its joints are [{}]",
        entity.name,
        entity_joints(model, entity).join(", ")
    ))
}

/// Resolve a body of the entity by its model name (an empty name = the entity's root body).
pub fn resolve_body(
    model: &MjModel,
    entity: &Entity,
    key: &str,
    name: &str,
) -> Result<usize, String> {
    let roots = entity_roots(model, entity)?;
    if name.is_empty() {
        return Ok(roots[0]);
    }
    let full = format!("{}{name}", entity.prefix);
    if let Some(b) = model.name_to_id(MjtObjBase::mjOBJ_BODY, &full) {
        if in_entity(model, b, &roots) {
            return Ok(b);
        }
    }
    let nb = model.ffi().nbody as usize;
    let bodies = names_where(model, MjtObjBase::mjOBJ_BODY, nb, &entity.prefix, |b| {
        b != 0 && in_entity(model, b, &roots)
    });
    Err(format!(
        "{key}: entity `{}` has no body `{name}` (looked up as `{full}`); its bodies are [{}]",
        entity.name,
        bodies.join(", ")
    ))
}

/// Resolve a site of the entity by its model name.
pub fn resolve_site(
    model: &MjModel,
    entity: &Entity,
    key: &str,
    name: &str,
) -> Result<usize, String> {
    let roots = entity_roots(model, entity)?;
    let full = format!("{}{name}", entity.prefix);
    if let Some(s) = model.name_to_id(MjtObjBase::mjOBJ_SITE, &full) {
        if in_entity(model, model.site_bodyid()[s] as usize, &roots) {
            return Ok(s);
        }
    }
    let ns = model.ffi().nsite as usize;
    let sites = names_where(model, MjtObjBase::mjOBJ_SITE, ns, &entity.prefix, |s| {
        in_entity(model, model.site_bodyid()[s] as usize, &roots)
    });
    Err(format!(
        "{key}: entity `{}` has no site `{name}` (looked up as `{full}`); its sites are [{}]",
        entity.name,
        sites.join(", ")
    ))
}

/// Every actuator's control range (`[-inf, inf]` when not control-limited), read once in
/// `configure` so a per-step clamp needs no model access.
pub fn ctrl_limits(model: &MjModel) -> Vec<[f64; 2]> {
    let nu = model.ffi().nu as usize;
    (0..nu)
        .map(|a| {
            if model.actuator_ctrllimited()[a] {
                model.actuator_ctrlrange()[a]
            } else {
                [f64::NEG_INFINITY, f64::INFINITY]
            }
        })
        .collect()
}

/// Clamp a control value to the actuator's `ctrlrange` when it is control-limited.
pub fn clamp_ctrl(model: &MjModel, act: usize, value: f64) -> f64 {
    if model.actuator_ctrllimited()[act] {
        let [lo, hi] = model.actuator_ctrlrange()[act];
        value.clamp(lo, hi)
    } else {
        value
    }
}

/// True when actuator `act` is a velocity servo (`<velocity>`: force = kv·(ctrl − qvel), i.e.
/// gain kv, bias [0, 0, −kv]): its ctrl is a joint velocity (rad/s | m/s).
pub fn is_velocity_servo(model: &MjModel, act: usize) -> bool {
    let g = model.actuator_gainprm()[act][0];
    let b = model.actuator_biasprm()[act];
    b[0] == 0.0 && b[1] == 0.0 && b[2] < 0.0 && (g + b[2]).abs() <= 1e-9 * g.abs().max(1.0)
}

/// True when actuator `act` is a position servo (`<position>`: force = kp·(ctrl − qpos) − kv·qvel,
/// i.e. gain kp, bias [0, −kp, −kv]): its ctrl is a joint position (rad | m).
pub fn is_position_servo(model: &MjModel, act: usize) -> bool {
    let g = model.actuator_gainprm()[act][0];
    let b = model.actuator_biasprm()[act];
    b[0] == 0.0 && b[1] < 0.0 && (g + b[1]).abs() <= 1e-9 * g.abs().max(1.0)
}

/// Resolve `name` as an actuator of the entity that must be a velocity servo (ctrl in rad/s or m/s).
pub fn resolve_velocity_actuator(
    model: &MjModel,
    entity: &Entity,
    key: &str,
    name: &str,
) -> Result<usize, String> {
    let id = resolve_actuator(model, entity, key, name)?;
    if !is_velocity_servo(model, id) {
        return Err(format!(
            "{key}: `{name}` is not a velocity servo (gain kv, bias −kv·qvel), so a speed written to its ctrl would not \
             mean one; give the joint's <velocity> actuator"
        ));
    }
    Ok(id)
}

/// Resolve `name` as an actuator of the entity that must be a position servo (ctrl in rad or m).
pub fn resolve_position_actuator(
    model: &MjModel,
    entity: &Entity,
    key: &str,
    name: &str,
) -> Result<usize, String> {
    let id = resolve_actuator(model, entity, key, name)?;
    if !is_position_servo(model, id) {
        return Err(format!(
            "{key}: `{name}` is not a position servo (gain kp, bias −kp·qpos − kv·qvel), so an angle written to its ctrl \
             would not mean one; give the joint's <position> actuator"
        ));
    }
    Ok(id)
}

/// Pose `(pos, quat [w, x, y, z])` of `body` in the frame of its ancestor `ancestor`, from the
/// model's rest configuration (`body_pos` / `body_quat`; joints at qpos0). Usable in `configure`
/// before any `mj_forward`.
pub fn rest_pose_in(model: &MjModel, body: usize, ancestor: usize) -> ([f64; 3], [f64; 4]) {
    let (bpos, bquat, parent) = (model.body_pos(), model.body_quat(), model.body_parentid());
    let mut t = crate::math::Isometry3::identity();
    let mut b = body;
    while b != ancestor && b != 0 {
        // child-in-b → child-in-parent(b)
        t = Pose { pos: bpos[b], quat: bquat[b] }.iso() * t;
        b = parent[b] as usize;
    }
    let p = Pose::from_iso(&t);
    (p.pos, p.quat)
}

/// Name of geom `g` in the compiled model ("" if unnamed: then `geom#<id>`).
pub fn geom_name(m: &MjModel, g: usize) -> String {
    match m.id_to_name(MjtObjBase::mjOBJ_GEOM, g) {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => format!("geom#{g}"),
    }
}
