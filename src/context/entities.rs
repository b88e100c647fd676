//! The entity registry: the robots, props, doors and people a world contains. It backs
//! simulation_interfaces discovery (GetEntities, SpawnEntity selects among them).

use std::collections::BTreeMap;

/// What an entity is (maps onto simulation_interfaces EntityCategory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntityKind {
    /// A mobile base or mobile manipulator.
    Robot,
    /// A fixed or mounted arm.
    Arm,
    /// A prop (box, cylinder, model).
    Object,
    /// A door.
    Door,
    /// A person (a `walker` pedestrian).
    Person,
    /// A mounted sensor device.
    Sensor,
    /// Anything else.
    Other,
}

/// A world's 6-DoF pose: position (m) and quaternion `[w, x, y, z]` (MuJoCo order).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    /// Position (m), world frame.
    pub pos: [f64; 3],
    /// Orientation quaternion [w, x, y, z].
    pub quat: [f64; 4],
}

impl Default for Pose {
    fn default() -> Self {
        Pose { pos: [0.0; 3], quat: [1.0, 0.0, 0.0, 0.0] }
    }
}

/// One entity.
#[derive(Debug, Clone, PartialEq)]
pub struct Entity {
    /// Name (the address of the entry that registered it).
    pub name: String,
    /// Category.
    pub kind: EntityKind,
    /// Root body name in the compiled model (prefixed).
    pub body: String,
    /// MJCF name prefix of everything the entity brought.
    pub prefix: String,
    /// Transport namespace of its endpoints.
    pub namespace: String,
    /// Model reference it was spawned from.
    pub model: String,
    /// Free joint placing it, if any (prefixed); `None` = welded scenery.
    pub free_joint: Option<String>,
    /// The pose it was declared at.
    pub initial_pose: Pose,
    /// Declared presence (`present:`), re-applied on every reset.
    pub declared_present: bool,
    /// Current presence.
    pub present: bool,
    /// Why it cannot be moved, when welded (e.g. `motion: static`).
    pub weld_reason: Option<String>,
    /// Free-form facts (`rest_height`, ...).
    pub meta: BTreeMap<String, String>,
}

impl Entity {
    /// A present entity of `kind` rooted at `body`.
    pub fn new(name: &str, kind: EntityKind, body: &str) -> Self {
        Entity {
            name: name.to_string(),
            kind,
            body: body.to_string(),
            prefix: String::new(),
            namespace: String::new(),
            model: String::new(),
            free_joint: None,
            initial_pose: Pose::default(),
            declared_present: true,
            present: true,
            weld_reason: None,
            meta: BTreeMap::new(),
        }
    }
}

/// Entities by name, in registration order.
#[derive(Debug, Default)]
pub struct EntityRegistry {
    list: Vec<Entity>,
}

impl EntityRegistry {
    /// Register; a duplicate name is an error naming it.
    pub fn add(&mut self, e: Entity) -> Result<(), String> {
        if self.list.iter().any(|x| x.name == e.name) {
            return Err(format!(
                "entity `{}` is already registered; give the entry a distinct name:",
                e.name
            ));
        }
        self.list.push(e);
        Ok(())
    }
    /// Remove by name.
    pub fn remove(&mut self, name: &str) -> Option<Entity> {
        let i = self.list.iter().position(|e| e.name == name)?;
        Some(self.list.remove(i))
    }
    /// Look up by name.
    pub fn get(&self, name: &str) -> Option<&Entity> {
        self.list.iter().find(|e| e.name == name)
    }
    /// Look up by name, mutably.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Entity> {
        self.list.iter_mut().find(|e| e.name == name)
    }
    /// Names in registration order.
    pub fn names(&self) -> Vec<String> {
        self.list.iter().map(|e| e.name.clone()).collect()
    }
    /// All entities.
    pub fn all(&self) -> &[Entity] {
        &self.list
    }
    /// The entity `owner` names, walking up the address (`robot.rplidar.lidar` → `robot.rplidar`
    /// → `robot`) until one is registered.
    pub fn resolve_owner(&self, owner: Option<&str>) -> Option<&Entity> {
        let mut cur = owner?;
        loop {
            if let Some(e) = self.get(cur) {
                return Some(e);
            }
            cur = &cur[..cur.rfind('.')?];
        }
    }
}
