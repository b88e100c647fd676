//! What an observer (the recorder) is shown of the commands that reach the physics thread: every
//! payload delivered to an inbound endpoint, every action cancel, every world command
//! (SpawnEntity, DeleteEntity, SetEntityState) and every controller manager request that changes
//! a robot's controllers — each in the order it acted, so a replay can apply them again before
//! the same step.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::context::payload::Payload;
use crate::context::EndpointId;
use crate::handles::controllers::command::ControllerCommand;

/// A pose: position (m) and quaternion `[x, y, z, w]`.
pub type PoseSpec = ([f64; 3], [f64; 4]);
/// A twist: linear (m/s) and angular (rad/s), world frame.
pub type TwistSpec = ([f64; 3], [f64; 3]);

/// A command that changes the world without an endpoint delivery (simulation_interfaces' entity
/// services, transport-neutral): the arguments [`crate::engine::sim_control`] was called with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorldCommand {
    /// [`crate::engine::sim_control::spawn`].
    Spawn {
        /// Requested name (may be empty).
        name: String,
        /// Resource uri (the entity's name).
        uri: String,
        /// Resource string (always refused; kept so the refusal replays too).
        resource_string: String,
        /// Requested namespace.
        namespace: String,
        /// Initial pose, when one was given.
        pose: Option<PoseSpec>,
    },
    /// [`crate::engine::sim_control::delete`].
    Delete {
        /// Entity.
        name: String,
    },
    /// [`crate::engine::sim_control::set_entity_state`].
    SetEntityState {
        /// Entity.
        name: String,
        /// Pose to set.
        pose: Option<PoseSpec>,
        /// Twist to set.
        twist: Option<TwistSpec>,
    },
}

/// One tapped command.
// Built only while a recorder taps, one per delivery, and moved straight into its log: boxing the
// payload would add an allocation per message for no saving (as for `Payload` itself).
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Tapped {
    /// A payload delivered to an inbound endpoint.
    Deliver(EndpointId, Payload),
    /// A cancel of an action goal delivered earlier to `endpoint` (its flag identifies it).
    Cancel {
        /// The goal's endpoint.
        endpoint: EndpointId,
        /// The goal's cancel flag (shared with the goal's payload).
        flag: Arc<AtomicBool>,
    },
    /// A world command.
    World(WorldCommand),
    /// A controller manager request that changes a robot's controllers
    /// ([`crate::handles::controllers::command::apply`]).
    Controller {
        /// The robot (entity) whose manager it was sent to.
        entity: String,
        /// The request.
        command: ControllerCommand,
    },
}

/// Cancel an action goal: raise its flag (the consumer sees it at its next step). Physics thread
/// only, so every consumer sees a cancel at a step boundary and a replay can raise it again
/// before the same step.
pub fn raise(flag: &AtomicBool) {
    flag.store(true, Ordering::SeqCst);
}
