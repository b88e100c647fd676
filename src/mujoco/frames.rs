//! Frames of the compiled model: [`FrameRef`] (a body or a site), resolving one by its model
//! name under an entity's prefix (errors list what exists), its pose at the reference
//! configuration, and the transform between two of them.

use mujoco_rs::prelude::*;

use crate::context::payload::Transform;
use crate::context::{entities::Pose, Entity};
use crate::math::{arr3, wxyz, xyzw, Isometry3};

/// A frame of the compiled model: a body or a site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameRef {
    /// A body's frame (id).
    Body(usize),
    /// A site's frame (id).
    Site(usize),
}

impl FrameRef {
    /// Resolve a compiled name: a body first, then a site.
    pub fn lookup(model: &MjModel, name: &str) -> Option<FrameRef> {
        if let Some(b) = model.name_to_id(MjtObjBase::mjOBJ_BODY, name) {
            return Some(FrameRef::Body(b));
        }
        model.name_to_id(MjtObjBase::mjOBJ_SITE, name).map(FrameRef::Site)
    }

    /// The body it sits on and its pose in that body's frame (from the compiled model).
    pub fn in_body(self, model: &MjModel) -> (usize, Pose) {
        match self {
            FrameRef::Body(b) => (b, Pose::default()),
            FrameRef::Site(s) => {
                let b = model.site_bodyid()[s] as usize;
                (b, Pose { pos: model.site_pos()[s], quat: model.site_quat()[s] })
            }
        }
    }
}

fn obj_word(t: MjtObjBase) -> &'static str {
    match t {
        MjtObjBase::mjOBJ_SITE => "site",
        MjtObjBase::mjOBJ_BODY => "body",
        _ => "object",
    }
}

fn obj_count(m: &MjModel, t: MjtObjBase) -> usize {
    match t {
        MjtObjBase::mjOBJ_SITE => m.ffi().nsite as usize,
        MjtObjBase::mjOBJ_BODY => m.ffi().nbody as usize,
        _ => 0,
    }
}

/// Names of every object of type `t` under `prefix` (stripped), for error messages.
pub fn names_under(m: &MjModel, t: MjtObjBase, prefix: &str) -> Vec<String> {
    (0..obj_count(m, t))
        .filter_map(|i| m.id_to_name(t, i))
        .filter(|n| !n.is_empty() && n.starts_with(prefix))
        .map(|n| n[prefix.len()..].to_string())
        .collect()
}

/// Resolve `name` (unprefixed, as the model names it) under the entity's `prefix` to an id, or an
/// error naming the key, what was looked for and what exists.
pub fn resolve_name(
    m: &MjModel,
    t: MjtObjBase,
    key: &str,
    name: &str,
    prefix: &str,
    ent: Option<&Entity>,
) -> Result<usize, String> {
    let full = format!("{prefix}{name}");
    if let Some(id) = m.name_to_id(t, &full) {
        return Ok(id);
    }
    let word = obj_word(t);
    let mut have = names_under(m, t, prefix);
    if t == MjtObjBase::mjOBJ_BODY {
        have.retain(|n| n != "world");
    }
    let shown = if have.len() > 40 {
        format!("{}, ... ({} in all)", have[..40].join(", "), have.len())
    } else {
        have.join(", ")
    };
    let whose = match ent {
        Some(e) => format!("entity `{}` (prefix `{}`)", e.name, e.prefix),
        None => "the model".to_string(),
    };
    let looked = if prefix.is_empty() { String::new() } else { format!(" (looked for `{full}`)") };
    Err(format!("{key}: no {word} `{name}` in {whose}{looked}; its {word}s: [{shown}]"))
}

impl FrameRef {
    /// A body of that name under `prefix`, else a site; `world` is the world body.
    pub fn resolve(
        m: &MjModel,
        key: &str,
        name: &str,
        prefix: &str,
        ent: Option<&Entity>,
    ) -> Result<FrameRef, String> {
        if name == "world" {
            return Ok(FrameRef::Body(0));
        }
        let full = format!("{prefix}{name}");
        if let Some(id) = m.name_to_id(MjtObjBase::mjOBJ_BODY, &full) {
            return Ok(FrameRef::Body(id));
        }
        if let Some(id) = m.name_to_id(MjtObjBase::mjOBJ_SITE, &full) {
            return Ok(FrameRef::Site(id));
        }
        resolve_name(m, MjtObjBase::mjOBJ_BODY, key, name, prefix, ent).map(FrameRef::Body)
    }
}

/// World pose (position m, quaternion [w, x, y, z]) of a frame at the model's reference
/// configuration (`qpos0`), composed from `body_pos`/`body_quat` (and `site_pos`/`site_quat`).
pub fn model_pose(m: &MjModel, f: FrameRef) -> ([f64; 3], [f64; 4]) {
    let local = |pos: &[f64; 3], q: &[f64; 4]| Pose { pos: *pos, quat: *q }.iso();
    let body_pose = |mut b: usize| {
        let mut chain = Vec::new();
        while b != 0 {
            chain.push(b);
            b = m.body_parentid()[b] as usize;
        }
        chain
            .iter()
            .rev()
            .fold(Isometry3::identity(), |t, &b| t * local(&m.body_pos()[b], &m.body_quat()[b]))
    };
    let t = match f {
        FrameRef::Body(b) => body_pose(b),
        FrameRef::Site(s) => {
            body_pose(m.site_bodyid()[s] as usize) * local(&m.site_pos()[s], &m.site_quat()[s])
        }
    };
    (arr3(&t.translation.vector), wxyz(&t.rotation))
}

/// The transform `parent -> child` measured from the compiled model (reference configuration),
/// with the given (unprefixed) frame names.
pub fn relative_transform(
    m: &MjModel,
    parent: FrameRef,
    child: FrameRef,
    parent_name: &str,
    child_name: &str,
) -> Transform {
    let pose = |f| {
        let (pos, quat) = model_pose(m, f);
        Pose { pos, quat }.iso()
    };
    let rel = pose(parent).inv_mul(&pose(child));
    Transform {
        parent: parent_name.to_string(),
        child: child_name.to_string(),
        translation: arr3(&rel.translation.vector),
        rotation: xyzw(&rel.rotation),
    }
}
