//! The controllers' lifecycle as ROS sees it: each registry transition published as the pair of
//! lifecycle_msgs/TransitionEvent rclcpp_lifecycle sends (into the intermediate state, then out).

use super::*;
use crate::context::payload::TransitionEvent;

impl ArmController {
    /// Publish the transitions the registry made since the last call.
    pub(super) fn publish_transitions(&mut self, ctx: &mut SimContext) {
        let tick = ctx.tick;
        for (name, cursor, ep) in &mut self.controllers {
            let ts = self.registry.transitions_since(name, cursor);
            if !ts.is_empty() {
                let ev = ts.iter().flat_map(lifecycle_events).collect();
                ctx.interface.publish(*ep, tick, Payload::TransitionEvents(ev));
            }
        }
    }
}

/// The two `TransitionEvent`s rclcpp_lifecycle publishes for one transition: into its transition
/// state (`configure`: unconfigured → configuring), then out of it on success
/// (`transition_success`: configuring → inactive), with lifecycle_msgs' ids.
pub(super) fn lifecycle_events(
    t: &crate::handles::controllers::Transition,
) -> [TransitionEvent; 2] {
    // (transition state id, label, on-success transition id)
    let (mid_id, mid, success) = match t.id {
        1 => (10, "configuring", 10),
        2 => (11, "cleaningup", 20),
        3 => (13, "activating", 30),
        4 => (14, "deactivating", 40),
        _ => (12, "shuttingdown", 50),
    };
    [
        TransitionEvent {
            stamp: t.stamp,
            transition_id: t.id,
            transition_label: t.label.to_string(),
            start_id: t.start.id(),
            start_label: t.start.label().to_string(),
            goal_id: mid_id,
            goal_label: mid.to_string(),
        },
        TransitionEvent {
            stamp: t.stamp,
            transition_id: success,
            transition_label: "transition_success".to_string(),
            start_id: mid_id,
            start_label: mid.to_string(),
            goal_id: t.goal.id(),
            goal_label: t.goal.label().to_string(),
        },
    ]
}
