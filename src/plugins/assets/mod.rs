//! Asset plugins: a velocity-driven belt `conveyor` and a hinged `door` with a force-limited
//! position actuator. Both build their geometry from primitives in `build` (no conveyor or door
//! model is bundled), register an entity, and expose a transport-neutral command endpoint plus a
//! blackboard handle.

pub mod conveyor;
pub mod door;

/// This family's plugins, in catalogue order.
pub fn descriptors() -> Vec<crate::plugin::PluginDescriptor> {
    vec![conveyor::descriptor(), door::descriptor()]
}
