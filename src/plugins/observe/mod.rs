//! Observation plugins: `contact_monitor` (did it touch), `contact_impulse` (how hard, integrated),
//! `contact_location` (where), `bumper` (which zone is pressed),
//! `clearance_monitor` (how close did it come), `energy_monitor` (what did it cost) and
//! `upright_monitor` (did it stay in the plane). Each watches the entity it is nested under
//! (`requires_owner`), publishes a structured report on an out endpoint (plus the primitive member
//! the catalog names, through the `("ros2", "field", <member>)` hint) and puts a reader on the
//! blackboard for in-process consumers. None of them ever ends a trial: a threshold is the
//! experiment's, stated in the experiment.
//!
//! What the geometry watchers share (the watched geom set, the `ignore` filter, the per-step
//! contact pass, the report endpoint) lives in [`crate::plugins::shared::contact_watch`] and
//! [`crate::plugins::shared::report`].

pub mod bumper;
pub mod clearance_monitor;
pub mod contact_impulse;
pub mod contact_location;
pub mod contact_monitor;
pub mod energy_monitor;
pub mod upright_monitor;

/// This family's plugins, in catalogue order.
pub fn descriptors() -> Vec<crate::plugin::PluginDescriptor> {
    vec![
        contact_monitor::descriptor(),
        contact_impulse::descriptor(),
        contact_location::descriptor(),
        bumper::descriptor(),
        clearance_monitor::descriptor(),
        energy_monitor::descriptor(),
        upright_monitor::descriptor(),
    ]
}
