//! Scene plugins: the floorplan world and props (box, boxes, cylinder, cylinders, spawn_model).

#[path = "box.rs"]
pub mod box_prop;
pub mod boxes;
pub mod cylinder;
pub mod floorplan;
pub mod heightfield;
pub mod spawn_model;
