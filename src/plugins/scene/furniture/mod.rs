//! Furniture and fittings as parametric MJCF written here: `shelf`, `workbench`,
//! `ceiling_panels`, `strip_light`, `window`, `duct`, `palm_tree` (each a welded piece built from
//! primitives at build time) and `ceiling` (which removes a world's ceiling geometry instead).
//! `parts.rs` holds what they share: the MJCF part writer, the placement and size checks, and
//! the build step that attaches a piece and registers its entity.

pub mod ceiling;
pub mod ceiling_panels;
pub mod duct;
pub mod palm_tree;
pub mod parts;
pub mod shelf;
pub mod strip_light;
pub mod window;
pub mod workbench;

/// This family's plugins, in catalogue order.
pub fn descriptors() -> Vec<crate::plugin::PluginDescriptor> {
    vec![
        shelf::descriptor(),
        workbench::descriptor(),
        ceiling::descriptor(),
        ceiling_panels::descriptor(),
        strip_light::descriptor(),
        window::descriptor(),
        duct::descriptor(),
        palm_tree::descriptor(),
    ]
}
