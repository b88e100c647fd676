//! Asset plugins: a velocity-driven belt `conveyor`, a hinged `door` with a force-limited
//! position actuator, and the props that move by themselves: `moving_box` (a driven box on a
//! route or a seeded random walk) and `prop_trajectory` (a velocity-forced carrier plate on a CSV
//! path). They build their geometry from primitives in `build` (no model is bundled for them) and
//! register an entity.

pub mod conveyor;
pub mod door;
pub mod moving_box;
pub mod prop_trajectory;

/// This family's plugins, in catalogue order.
pub fn descriptors() -> Vec<crate::plugin::PluginDescriptor> {
    vec![
        conveyor::descriptor(),
        door::descriptor(),
        moving_box::descriptor(),
        prop_trajectory::descriptor(),
    ]
}
