//! Vendor frames ([`FrameSites`]) and their static transforms read from the compiled model
//! ([`static_transform`], [`StaticTfPublisher`]).

use mujoco_rs::prelude::*;

use crate::context::payload::{Payload, Transform};
use crate::context::{Claimant, Endpoint, EndpointId, FrameKeys, SimContext, TfEdge, TfRoute};
use crate::math::{compose, quat, quat_from_rpy, relative};
use crate::world::models::FrameSpec;

pub use crate::mujoco::frames::FrameRef;

use super::{body_names, find_site, frame_prefix, Pose};

/// A vendor frame built as a site.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacedFrame {
    /// Frame name (unprefixed; the site is `<prefix><name>` after attach).
    pub name: String,
    /// Declared parent (a body or an earlier frame), unprefixed.
    pub parent: String,
    /// True when the parent is another frame rather than a body.
    pub parent_is_frame: bool,
    /// Body the site sits on (unprefixed).
    pub body: String,
}

/// Builder of vendor frames as sites in an (unprefixed) model spec. Frames are added list by
/// list (a model manifest's, then a spawn config's); a later list may hang from an earlier one.
#[derive(Debug, Clone, Default)]
pub struct FrameSites {
    placed: Vec<(PlacedFrame, Pose)>,
}

impl FrameSites {
    /// No frames yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The frames placed so far, in order.
    pub fn frames(&self) -> Vec<PlacedFrame> {
        self.placed.iter().map(|(p, _)| p.clone()).collect()
    }

    /// Add each frame as a site on its parent's body, in order. A parent that is itself an
    /// earlier frame puts the site on that frame's body with the composed pose. `key` names the
    /// list in messages (`frames`). Refused: a parent that is neither a body nor an earlier frame
    /// (the message lists both), a name that collides with a body, or with a site at another pose
    /// (a site of that name at the same pose is reused), a duplicate.
    pub fn add(
        &mut self,
        spec: &mut MjSpec,
        frames: &[FrameSpec],
        key: &str,
    ) -> Result<(), String> {
        for (i, f) in frames.iter().enumerate() {
            if f.name.is_empty() {
                return Err(format!("{key}[{i}].name: a frame needs a name"));
            }
            if self.placed.iter().any(|(p, _)| p.name == f.name) {
                return Err(format!("{key}[{i}]: frame `{}` is declared twice", f.name));
            }
            if spec.body(&f.name).is_some() {
                return Err(format!(
                    "{key}[{i}]: frame `{}` collides with a body of the model of the same name; name the frame differently",
                    f.name
                ));
            }
            let existing_site = find_site(spec, &f.name);
            let local = Pose { pos: f.pos, quat: quat_from_rpy(f.rpy[0], f.rpy[1], f.rpy[2]) };
            let (body, pose, parent_is_frame) = if let Some((pf, ppose)) =
                self.placed.iter().find(|(p, _)| p.name == f.parent)
            {
                (pf.body.clone(), compose(ppose, &local), true)
            } else if !f.parent.is_empty() && spec.body(&f.parent).is_some() {
                (f.parent.clone(), local, false)
            } else if frames.iter().skip(i + 1).any(|g| g.name == f.parent) {
                return Err(format!(
                    "{key}[{i}].parent: frame `{}` is declared after `{}`; declare a parent frame before its children",
                    f.parent, f.name
                ));
            } else {
                let so_far: Vec<&str> = self.placed.iter().map(|(p, _)| p.name.as_str()).collect();
                return Err(format!(
                    "{key}[{i}].parent: `{}` is neither a body of the model nor a frame declared before it; bodies: {}; frames: {}",
                    f.parent,
                    body_names(spec).join(", "),
                    if so_far.is_empty() { "(none)".to_string() } else { so_far.join(", ") }
                ));
            };
            if let Some((sbody, spose)) = existing_site {
                // The model already has this site (a device whose scan site IS its default
                // frame): reuse it when it is the same frame, refuse when it is not.
                let same = sbody == body
                    && (0..3).all(|k| (spose.pos[k] - pose.pos[k]).abs() < 1e-9)
                    && ((quat(&spose.quat).inverse() * quat(&pose.quat)).w.abs() - 1.0).abs()
                        < 1e-9;
                if !same {
                    return Err(format!(
                        "{key}[{i}]: frame `{}` collides with a site of the model of the same name at a different pose; name the frame differently",
                        f.name
                    ));
                }
                self.placed.push((
                    PlacedFrame {
                        name: f.name.clone(),
                        parent: f.parent.clone(),
                        parent_is_frame,
                        body,
                    },
                    pose,
                ));
                continue;
            }
            let b = spec.body_mut(&body).expect("resolved body exists");
            b.add_site()
                .with_name(&f.name)
                .with_pos(pose.pos)
                .with_quat(pose.quat)
                .with_size([0.005, 0.005, 0.005])
                .with_rgba([0.0, 0.0, 0.0, 0.0]);
            self.placed.push((
                PlacedFrame {
                    name: f.name.clone(),
                    parent: f.parent.clone(),
                    parent_is_frame,
                    body,
                },
                pose,
            ));
        }
        Ok(())
    }
}

fn body_chain(model: &MjModel, mut b: usize) -> Vec<usize> {
    let mut v = vec![b];
    while b != 0 {
        b = model.body_parentid()[b] as usize;
        v.push(b);
    }
    v
}

/// The pose of `child` in `parent`'s frame, read from the compiled model. Both must be welded
/// to each other: no body between either one and their common ancestor may carry a joint
/// (otherwise the transform is not static and the error names the joint's body).
pub fn static_relative_pose(
    model: &MjModel,
    parent: FrameRef,
    child: FrameRef,
) -> Result<Pose, String> {
    let (pb, plocal) = parent.in_body(model);
    let (cb, clocal) = child.in_body(model);
    let pchain = body_chain(model, pb);
    let cchain = body_chain(model, cb);
    let lca = *pchain.iter().find(|b| cchain.contains(b)).expect("world is a common ancestor");
    let to_lca = |chain: &[usize], local: Pose| -> Result<Pose, String> {
        let mut pose = local;
        for &b in chain.iter().take_while(|&&b| b != lca) {
            if model.body_jntnum()[b] > 0 {
                let name = model.id_to_name(MjtObjBase::mjOBJ_BODY, b).unwrap_or("?");
                return Err(format!(
                    "body `{name}` has a joint, so the transform through it is not static"
                ));
            }
            pose = compose(&Pose { pos: model.body_pos()[b], quat: model.body_quat()[b] }, &pose);
        }
        Ok(pose)
    };
    let p = to_lca(&pchain, plocal)?;
    let c = to_lca(&cchain, clocal)?;
    Ok(relative(&p, &c))
}

/// A static transform `parent_name → child_name` between two compiled frames (names in the
/// payload are unprefixed; the endpoint's frame prefix is applied by the transport).
pub fn static_transform(
    model: &MjModel,
    parent: FrameRef,
    child: FrameRef,
    parent_name: &str,
    child_name: &str,
) -> Result<Transform, String> {
    let p = static_relative_pose(model, parent, child)
        .map_err(|e| format!("frame `{child_name}` is not welded to `{parent_name}`: {e}"))?;
    Ok(Transform {
        parent: parent_name.to_string(),
        child: child_name.to_string(),
        translation: p.pos,
        rotation: crate::math::wxyz_to_xyzw(&p.quat),
    })
}

/// The robot-side transforms of a set of placed frames: each `parent → name` from the compiled
/// model (sites `<prefix><name>`, parents `<prefix><parent>`), preceded by `root → body` for a
/// chain that starts at a body other than the root (that body must be welded to the root).
pub fn frame_transforms(
    model: &MjModel,
    prefix: &str,
    root: &str,
    frames: &[PlacedFrame],
) -> Result<Vec<Transform>, String> {
    let mut out: Vec<Transform> = Vec::new();
    let lookup = |n: &str| {
        FrameRef::lookup(model, &format!("{prefix}{n}"))
            .ok_or_else(|| format!("frame `{n}` (`{prefix}{n}`) missing after compile"))
    };
    for f in frames {
        if !f.parent_is_frame && f.parent != root && !out.iter().any(|t| t.child == f.parent) {
            out.push(static_transform(model, lookup(root)?, lookup(&f.parent)?, root, &f.parent)?);
        }
        out.push(static_transform(
            model,
            lookup(&f.parent)?,
            lookup(&f.name)?,
            &f.parent,
            &f.name,
        )?);
    }
    Ok(out)
}

/// A `tf_static` out endpoint carrying [`Payload::Transforms`] (hint `ros2.tf = static`), in an
/// entity's namespace with its frame prefix. Register in `configure`; [`StaticTfPublisher::publish`]
/// in `on_reset` (the engine clears endpoints at every reset, after configure) — a bridge latches it.
#[derive(Debug, Clone, Default)]
pub struct StaticTfPublisher {
    /// The endpoint, once registered (none when there is nothing to publish).
    pub endpoint: Option<EndpointId>,
    /// The transforms it carries.
    pub transforms: Vec<Transform>,
}

impl StaticTfPublisher {
    /// Register the endpoint for `transforms` (nothing when empty) after claiming their edges
    /// for `plugin` at `owner` ([`claim_tf`]). `owner` is the entity's name, `namespace` its
    /// transport scope (frame prefix `<namespace>/`); `keys` say how its frames are renamed.
    pub fn register(
        ctx: &mut SimContext,
        plugin: &str,
        owner: &str,
        namespace: &str,
        transforms: Vec<Transform>,
        keys: &FrameKeys,
    ) -> Result<Self, String> {
        if transforms.is_empty() {
            return Ok(StaticTfPublisher::default());
        }
        let by = Claimant::new(owner, plugin);
        claim_tf(ctx, &by, TfRoute::Static, &frame_prefix(namespace), &transforms, keys)?;
        let ep = Endpoint::out("tf_static")
            .owner(Some(owner))
            .namespace(namespace)
            .frame_prefix(&frame_prefix(namespace))
            .hint("ros2", "tf", "static")
            .hint("ros2", "type", "tf2_msgs/msg/TFMessage");
        let id = ctx.interface.add(ep);
        Ok(StaticTfPublisher { endpoint: Some(id), transforms })
    }

    /// Publish the transforms at the current tick.
    pub fn publish(&self, ctx: &mut SimContext) {
        if let Some(id) = self.endpoint {
            let tick = ctx.tick;
            ctx.interface.publish(id, tick, Payload::Transforms(self.transforms.clone()));
        }
    }
}

/// Claim the TF edges of `transforms` (frames as the payload names them; `frame_prefix`, the
/// endpoint's, is applied as the transport applies it) for `by` on `route`: a child frame
/// another plugin already publishes is refused naming both ([`crate::context::claims`]).
pub fn claim_tf(
    ctx: &mut SimContext,
    by: &Claimant,
    route: TfRoute,
    frame_prefix: &str,
    transforms: &[Transform],
    keys: &FrameKeys,
) -> Result<(), String> {
    let name = |f: &str| crate::ros::names::frame("", frame_prefix, f);
    let edges: Vec<TfEdge> = transforms
        .iter()
        .map(|t| {
            let (p, q) = (t.translation, t.rotation);
            let value =
                (route == TfRoute::Static).then_some([p[0], p[1], p[2], q[0], q[1], q[2], q[3]]);
            TfEdge { parent: name(&t.parent), child: name(&t.child), route, value }
        })
        .collect();
    ctx.claims.tf(by, &edges, keys)
}
