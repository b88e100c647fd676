//! An entity-owned plugin's place: resolving the owning entity,
//! endpoint scoping (namespace, frame prefix, `topics:` hints), presence and the one-base-controller
//! claim.

use std::collections::BTreeMap;

use crate::context::{Endpoint, Entity, SimContext};
use crate::error::ConfigError;

/// The entity a plugin nested at `owner` belongs to (walking up the address), cloned.
pub fn owner_entity(ctx: &SimContext, plugin: &str, owner: Option<&str>) -> Result<Entity, String> {
    let Some(o) = owner else {
        return Err(format!(
            "`{plugin}` must be nested under a robot's spawn entry (requires_owner)"
        ));
    };
    ctx.entities.resolve_owner(Some(o)).cloned().ok_or_else(|| {
        format!(
            "`{plugin}` is nested under `{o}`, but no entity is registered at or above that address (entities: [{}]); \
             nest it in the `components:` of a spawn entry (spawn_robot, spawn_arm, ...)",
            ctx.entities.names().join(", ")
        )
    })
}

/// Transport scope of an entity-owned plugin's endpoints.
#[derive(Debug, Clone, PartialEq)]
pub struct Scope {
    /// Owning entity name (the endpoint owner).
    pub owner: String,
    /// Namespace: the plugin's `namespace:` when set, else the entity's.
    pub namespace: String,
    /// Frame prefix: `<namespace>/` when the namespace is non-empty.
    pub frame_prefix: String,
}

impl Scope {
    /// Scope for `entity`, with an optional `namespace:` override (empty = inherit the entity's,
    /// as the `namespace: ""` default reads).
    pub fn new(entity: &Entity, namespace: Option<&str>) -> Scope {
        let ns = namespace
            .filter(|s| !s.trim_matches('/').is_empty())
            .unwrap_or(&entity.namespace)
            .trim_matches('/')
            .to_string();
        let frame_prefix = if ns.is_empty() { String::new() } else { format!("{ns}/") };
        Scope { owner: entity.name.clone(), namespace: ns, frame_prefix }
    }

    /// Apply the scope and the `topics:` override for this endpoint's role to `ep`:
    /// owner, namespace, frame prefix, and the `("ros2", "topic", ..)` hint when `topics` names it.
    pub fn apply(&self, ep: Endpoint, topics: &BTreeMap<String, String>) -> Endpoint {
        let topic = topics.get(&ep.name).cloned();
        let mut ep =
            ep.owner(Some(&self.owner)).namespace(&self.namespace).frame_prefix(&self.frame_prefix);
        if let Some(t) = topic {
            ep = ep.hint("ros2", "topic", t);
        }
        ep
    }
}

/// Validate a `topics:` map against the endpoint roles a plugin has: an unknown role or an empty
/// topic is refused, naming the roles.
pub fn check_topics(topics: &BTreeMap<String, String>, roles: &[&str]) -> Vec<ConfigError> {
    let mut e = Vec::new();
    for (k, v) in topics {
        if !roles.contains(&k.as_str()) {
            e.push(ConfigError::new(
                format!("topics.{k}"),
                format!("no endpoint role `{k}` here; the roles are: {}", roles.join(", ")),
            ));
        } else if v.trim().is_empty() || v.trim() == "/" {
            e.push(ConfigError::new(
                format!("topics.{k}"),
                "empty topic: give a relative name (renamed inside the namespace) or an absolute `/name` (hardwired)",
            ));
        }
    }
    let mut by_topic: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (k, v) in topics {
        by_topic.entry(v.trim()).or_default().push(k);
    }
    for (t, ks) in by_topic.into_iter().filter(|(_, ks)| ks.len() > 1) {
        e.push(ConfigError::new(
            format!("topics.{}", ks[1]),
            format!(
                "renamed to `{t}`, as is `topics.{}`: one topic would carry two roles' messages (a state read back as a command); give each role its own topic",
                ks[0]
            ),
        ));
    }
    e
}

/// Whether entity `name` is present (an unknown name reads as present). An absent entity is
/// frozen and contact-free (`crate::engine::presence`); a controller then must not drive it — an omni
/// base's planar actuators would push a frozen, floating base away — and holds its actuators at
/// rest instead.
pub fn entity_present(ctx: &SimContext, name: &str) -> bool {
    ctx.entities.get(name).is_none_or(|e| e.present)
}

/// Refuse a second base controller on one entity (two controllers writing one robot's actuators
/// is a config with no visible effect but a fight): the blackboard key `robot:<entity>` is taken.
pub fn claim_robot_key(ctx: &SimContext, plugin: &str, entity: &Entity) -> Result<String, String> {
    let key = crate::handles::robot::robot_key(&entity.name);
    if let Ok(h) = ctx.blackboard.get::<crate::handles::robot::RobotHandle>(&key) {
        return Err(format!(
            "entity `{}` already has a base controller (`{}` serves `{key}`); `{plugin}` would drive the same robot. \
             Keep one: override the manifest's entry by giving yours the same label, or disable one with `enabled: false`",
            entity.name,
            h.controller()
        ));
    }
    Ok(key)
}

/// Blackboard key naming the plugin that writes entity `entity`'s pose every step
/// (`mover:<entity>`): a `moving_box`, a `walker`, a `navigator` with mocap output.
pub fn mover_key(entity: &str) -> String {
    format!("mover:{entity}")
}

/// Claim the right to write entity `entity`'s pose for `who` (`moving_box` at `forklift`): two
/// plugins writing one mocap body is a config where one silently overrides the other, so the
/// second is refused, naming the first.
pub fn claim_mover(ctx: &mut SimContext, who: &str, entity: &str) -> Result<(), String> {
    let key = mover_key(entity);
    if let Ok(first) = ctx.blackboard.get::<String>(&key) {
        return Err(format!(
            "entity `{entity}` is already moved by {first}; {who} would write the same pose every step and one of them \
             would be silently ignored. Keep one mover per entity: give the navigator a driven box of its own \
             (`box: {{..., motion: driven}}`), or drop one of the two"
        ));
    }
    ctx.blackboard.set(key, who.to_string());
    Ok(())
}
