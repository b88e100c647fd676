//! The static mount transform every ray sensor publishes (`tf_parent -> frame_id`), measured from
//! the compiled model: one rule for the 2D lidar's siblings (`range_sensor`, `livox_mid360`).
//!
//! `tf_parent` defaults to the root body of the entity carrying the sensor, else the resolved
//! `exclude_body` (the housing), else `world` for a sensor nothing carries.

use mujoco_rs::prelude::*;

use crate::context::payload::Transform;
use crate::context::{Entity, SimContext};
use crate::mujoco::frames::{relative_transform, FrameRef};
use crate::plugins::shared::unprefixed;

/// The mount transform of the sensor at `site_id`, named `frame_id`.
pub fn static_mount_tf(
    ctx: &SimContext,
    tf_parent: Option<&str>,
    exclude: Option<(usize, &str)>,
    ent: Option<&Entity>,
    prefix: &str,
    site_id: usize,
    frame_id: &str,
) -> Result<Transform, String> {
    let (parent_name, parent) = match tf_parent {
        Some(p) => (p.to_string(), FrameRef::resolve(ctx.model(), "tf_parent", p, prefix, ent)?),
        None => match (ent, exclude) {
            (Some(e), _) => {
                let id =
                    ctx.model().name_to_id(MjtObjBase::mjOBJ_BODY, &e.body).ok_or_else(|| {
                        format!(
                        "tf_parent: the root body `{}` of entity `{}` is not in the compiled model",
                        e.body, e.name
                    )
                    })?;
                (unprefixed(&e.body, &e.prefix).to_string(), FrameRef::Body(id))
            }
            (None, Some((b, name))) => (name.to_string(), FrameRef::Body(b)),
            (None, None) => ("world".to_string(), FrameRef::Body(0)),
        },
    };
    Ok(relative_transform(ctx.model(), parent, FrameRef::Site(site_id), &parent_name, frame_id))
}
