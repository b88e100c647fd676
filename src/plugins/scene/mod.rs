//! Scene plugins: the floorplan and heightfield worlds, props (box, boxes, cylinder, cylinders,
//! spawn_model), `contact_pair_override`, `fiducial_marker` and furniture (`furniture/`: shelf, workbench, ceiling, ceiling_panels, strip_light,
//! window, duct, palm_tree).

#[path = "box.rs"]
pub mod box_prop;
pub mod contact_pair_override;
pub mod cylinder;
pub mod fiducial_marker;
pub mod floorplan;
pub mod furniture;
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
        contact_pair_override::descriptor(),
        fiducial_marker::descriptor(),
    ]
    .into_iter()
    .chain(furniture::descriptors())
    .collect()
}
