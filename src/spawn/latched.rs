//! What a spawned entity latches (its static transforms and its `robot_description`), published
//! on every reset and again on the first step of every episode, for a bridge that forwards only
//! what was published at the current tick. `spawn_robot` and `spawn_arm` call these from their
//! `on_reset` and `post_step`.

use crate::context::SimContext;
use crate::export::urdf::DescriptionPublisher;
use crate::spawn::frames::StaticTfPublisher;

/// Publish the latched outputs now (`on_reset`).
pub fn announce(
    ctx: &mut SimContext,
    tf: &StaticTfPublisher,
    description: &mut DescriptionPublisher,
) {
    tf.publish(ctx);
    description.publish(ctx);
}

/// Publish them again on the first step of the episode (`post_step`; nothing on other steps).
pub fn reannounce(
    ctx: &mut SimContext,
    tf: &StaticTfPublisher,
    description: &mut DescriptionPublisher,
) {
    if ctx.tick == 1 {
        announce(ctx, tf, description);
    }
}
