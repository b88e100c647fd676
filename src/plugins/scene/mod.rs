//! Scene plugins: the floorplan and heightfield worlds and props (box, boxes, cylinder, cylinders, spawn_model).

#[path = "box.rs"]
pub mod box_prop;
pub mod cylinder;
pub mod floorplan;
pub mod heightfield;
pub mod spawn_model;

/// This family's plugins, in catalogue order.
pub fn descriptors() -> Vec<crate::plugin::PluginDescriptor> {
    vec![
        box_prop::descriptor(),
        box_prop::boxes_descriptor(),
        cylinder::descriptor(),
        cylinder::cylinders_descriptor(),
        spawn_model::descriptor(),
        floorplan::descriptor(),
        heightfield::descriptor(),
    ]
}
