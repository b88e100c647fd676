//! Helpers every entity-owned plugin shares (no plugin lives here), one concept per file:
//! [`owner`] (the owning entity, endpoint scope, presence, the base-controller claim),
//! [`resolve`] (the entity's actuators, joints, bodies and sites by model name) and [`joints`]
//! (joint_states). Their items are re-exported here.

pub mod joints;
pub mod latest;
pub mod owner;
pub mod resolve;

pub use joints::*;
pub use owner::*;
pub use resolve::*;
