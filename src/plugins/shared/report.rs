//! An observer's report: the out endpoint it publishes on (a structured payload whose primitive
//! member the ROS 2 side publishes, named by the `("ros2", "field", <member>)` hint) and the
//! publish when that endpoint is due.

use std::collections::BTreeMap;

use crate::context::{Endpoint, EndpointId, Payload, SimContext};
use crate::plugins::shared::Scope;

/// The shape of an observer's report endpoint.
#[derive(Debug, Clone, Copy)]
pub struct ReportEndpoint<'a> {
    /// Endpoint role (the key of `topics:`).
    pub role: &'a str,
    /// ROS 2 message type (`pkg/msg/Type`).
    pub ros_type: &'a str,
    /// The payload member published as the primitive message, if any.
    pub field: Option<&'a str>,
    /// Reliable QoS (a latched verdict must not be lost) instead of the default.
    pub reliable: bool,
    /// Topic when `topics:` does not rename the role.
    pub topic: &'a str,
}

impl ReportEndpoint<'_> {
    /// Register the endpoint under `scope` at `rate_hz`, renamed by `topics`.
    pub fn add(
        &self,
        ctx: &mut SimContext,
        scope: &Scope,
        rate_hz: f64,
        topics: &BTreeMap<String, String>,
    ) -> EndpointId {
        let mut ep = Endpoint::out(self.role).rate(rate_hz).hint("ros2", "type", self.ros_type);
        if let Some(field) = self.field {
            ep = ep.hint("ros2", "field", field);
        }
        if self.reliable {
            ep = ep.hint("ros2", "qos", "reliable");
        }
        if !topics.contains_key(self.role) {
            ep = ep.hint("ros2", "topic", self.topic);
        }
        ctx.interface.add(scope.apply(ep, topics))
    }
}

/// Publish `report()` on `id` when the endpoint is due this tick (the report is built only then).
pub fn publish_due(ctx: &mut SimContext, id: EndpointId, report: impl FnOnce() -> Payload) {
    if ctx.interface.is_due(id, ctx.tick) {
        let tick = ctx.tick;
        ctx.interface.publish(id, tick, report());
    }
}
