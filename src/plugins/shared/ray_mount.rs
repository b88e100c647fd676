//! How a ray sensor sits on its site: the static mount transform every ray sensor publishes
//! (`tf_parent -> frame_id`), measured from the compiled model — one rule for `lidar`,
//! `range_sensor` and the 3D lidars — and its ray directions rotated from the site frame to the
//! world ([`site_dirs`], [`site_plane_dirs`]).
//!
//! `tf_parent` defaults to the root body of the entity carrying the sensor, else the resolved
//! `exclude_body` (the housing), else `world` for a sensor nothing carries.

use mujoco_rs::prelude::*;

use crate::context::payload::Transform;
use crate::context::{Claimant, Entity, FrameKeys, SimContext, TfRoute};
use crate::context::{Endpoint, EndpointId, Payload};
use crate::mujoco::frames::{relative_transform, FrameRef};
use crate::mujoco::raycast::RayBatch;
use crate::plugins::shared::unprefixed;
use crate::spawn::{claim_tf, frame_prefix};

/// Set `batch`'s ray `i` to `local[i]` (site frame) rotated to the world by the site's row-major
/// `site_xmat` `m`.
pub fn site_dirs(batch: &mut RayBatch, m: &[f64; 9], local: &[[f64; 3]]) {
    for (i, v) in local.iter().enumerate() {
        let w = |r: usize| m[3 * r] * v[0] + m[3 * r + 1] * v[1] + m[3 * r + 2] * v[2];
        batch.set_dir(i, [w(0), w(1), w(2)]);
    }
}

/// [`site_dirs`] for rays in the site's xy plane, given as (cos, sin) of their bearing: ray `i`
/// along the site-frame direction (c, s, 0). (Its own function: the z term is left out rather
/// than multiplied by 0, so a component can stay -0.0, as a scan always computed it.)
pub fn site_plane_dirs(batch: &mut RayBatch, m: &[f64; 9], cos_sin: &[(f64, f64)]) {
    for (i, &(c, s)) in cos_sin.iter().enumerate() {
        batch.set_dir(i, [m[0] * c + m[1] * s, m[3] * c + m[4] * s, m[6] * c + m[7] * s]);
    }
}

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

/// A ray sensor's static mount transform and the `tf_static` endpoint it is announced on (at
/// configure and again after every reset, so a late TF listener still gets it).
pub struct MountTf {
    ep: EndpointId,
    tf: Transform,
}

/// Where a mount transform is measured and announced.
pub struct MountSpec<'a> {
    /// The config's `tf_parent`, if set.
    pub tf_parent: Option<&'a str>,
    /// The resolved `exclude_body` (id, name as written), if any.
    pub exclude: Option<(usize, &'a str)>,
    /// The entity carrying the sensor.
    pub ent: Option<&'a Entity>,
    /// That entity's MJCF name prefix.
    pub prefix: &'a str,
    /// The sensor's site.
    pub site_id: usize,
    /// The sensor's frame id.
    pub frame_id: &'a str,
    /// The endpoint owner (the carrier's address).
    pub owner: Option<&'a str>,
    /// The transport namespace.
    pub namespace: &'a str,
    /// The sensor plugin entry (its address and plugin name), for the TF claim.
    pub claimant: Claimant,
}

impl MountTf {
    /// Measure the mount transform and register its `tf_static` endpoint.
    pub fn register(ctx: &mut SimContext, s: &MountSpec) -> Result<MountTf, String> {
        let tf =
            static_mount_tf(ctx, s.tf_parent, s.exclude, s.ent, s.prefix, s.site_id, s.frame_id)?;
        let keys = FrameKeys::new(
            "frame_id",
            "Give each sensor its own `frame_id:` (or its carrier a `namespace:`), or set `emit_static_tf: false` on the one whose frame something else publishes.",
        );
        claim_tf(
            ctx,
            &s.claimant,
            TfRoute::Static,
            &frame_prefix(s.namespace),
            std::slice::from_ref(&tf),
            &keys,
        )?;
        let ep = ctx.interface.add(
            Endpoint::out("tf_static")
                .owner(s.owner)
                .namespace(s.namespace)
                .frame_prefix(&frame_prefix(s.namespace))
                .hint("ros2", "tf", "static"),
        );
        Ok(MountTf { ep, tf })
    }

    /// Publish the transform (on reset).
    pub fn announce(&self, ctx: &mut SimContext) {
        ctx.interface.publish(self.ep, ctx.tick, Payload::Transforms(vec![self.tf.clone()]));
    }
}
