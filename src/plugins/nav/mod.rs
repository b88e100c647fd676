//! Navigation plugins: `navigator` moves the entity it is nested under along a route inside the
//! simulator (planning, tracking and avoidance come from `crate::nav`).

pub mod navigator;

/// This family's plugins, in catalogue order.
pub fn descriptors() -> Vec<crate::plugin::PluginDescriptor> {
    vec![navigator::descriptor()]
}
