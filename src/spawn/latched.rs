//! What a spawned entity latches (its static transforms and its `robot_description`), published
//! on every reset and again on the first step of every episode, for a bridge that forwards only
//! what was published at the current tick. `spawn_robot` and `spawn_arm` call these from their
//! `on_reset` ([`reset`], which also puts the joints back at their home positions) and
//! `post_step`.

use crate::context::SimContext;
use crate::export::urdf::DescriptionPublisher;
use crate::spawn::frames::StaticTfPublisher;

/// A spawned entity's `on_reset`: its home joint positions (`(qpos address, value)`) written
/// back, then its latched outputs published ([`announce`]).
pub fn reset(
    ctx: &mut SimContext,
    home_qpos: &[(usize, f64)],
    tf: &StaticTfPublisher,
    description: &mut DescriptionPublisher,
) {
    let d = ctx.data_mut();
    for &(adr, q) in home_qpos {
        d.qpos_mut()[adr] = q;
    }
    announce(ctx, tf, description);
}

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
