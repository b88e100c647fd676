//! The shared builder of primitive props (a box or an upright cylinder as one body and one geom,
//! static, driven or physics): [`build_primitive`] builds it and registers its entity, and
//! [`validate_common`] holds the checks every primitive's config shares. `box`, `boxes`,
//! `cylinder`, `cylinders` and `moving_box` build through it.

use mujoco_rs::prelude::*;

use crate::context::{Entity, EntityKind, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::spawn::{
    box_floor_offset, check_rgba, cylinder_floor_offset, rgba4, Friction, Motion, PoseConfig,
};
use crate::world::bounds::MAX_MASS_KG;

/// Default prop colour: a light warehouse grey.
pub const DEFAULT_PROP_RGBA: [f64; 4] = [0.72, 0.72, 0.70, 1.0];

/// Checks shared by primitive props.
pub fn validate_common(
    pose: &PoseConfig,
    color: &Option<Vec<f64>>,
    friction: &Option<Friction>,
    mass: Option<f64>,
) -> Vec<ConfigError> {
    let mut e = pose.validate("pose");
    if let Some(c) = color {
        e.extend(check_rgba(c, "color"));
    }
    if let Some(f) = friction {
        e.extend(f.validate("friction"));
    }
    if let Some(m) = mass {
        if !(m > 0.0 && m <= MAX_MASS_KG) {
            e.push(ConfigError::new(
                "mass",
                format!("must be in (0, {MAX_MASS_KG}] kg, got {}", crate::error::num(m)),
            ));
        }
    }
    e
}

/// The shape of a primitive prop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PrimitiveShape {
    /// A box of full extents (m).
    Box([f64; 3]),
    /// An upright cylinder: radius and full height (m).
    Cylinder {
        /// Radius (m).
        radius: f64,
        /// Full height (m).
        height: f64,
    },
}

/// Everything a primitive prop needs to be built.
#[derive(Debug, Clone)]
pub struct PrimitiveSpec {
    /// Entity name (the entry's address, or an instance's name).
    pub entity: String,
    /// Body (and geom) name in the compiled model.
    pub body: String,
    /// MJCF prefix recorded on the entity.
    pub prefix: String,
    /// Shape.
    pub shape: PrimitiveShape,
    /// Pose.
    pub pose: PoseConfig,
    /// Colour.
    pub color: Option<Vec<f64>>,
    /// Collidable.
    pub collide: bool,
    /// Friction.
    pub friction: Option<Friction>,
    /// Motion.
    pub motion: Motion,
    /// Mass (kg).
    pub mass: Option<f64>,
    /// Declared presence.
    pub present: bool,
}

/// Build one primitive prop into `spec` and register its entity (kind Object).
pub fn build_primitive(spec: &mut MjSpec, ctx: &mut SimContext, p: &PrimitiveSpec) -> HookResult {
    if spec.body(&p.body).is_some() {
        return Err(format!(
            "the world already has a body `{}`; give this prop a distinct prefix or name",
            p.body
        ));
    }
    let quat = p.pose.resolve(0.0).quat;
    let (geom_type, size, floor) = match p.shape {
        PrimitiveShape::Box(full) => {
            let half = [full[0] / 2.0, full[1] / 2.0, full[2] / 2.0];
            (MjtGeomBase::mjGEOM_BOX, half, box_floor_offset(half, &quat))
        }
        PrimitiveShape::Cylinder { radius, height } => (
            MjtGeomBase::mjGEOM_CYLINDER,
            [radius, height / 2.0, 0.0],
            cylinder_floor_offset(radius, height / 2.0, &quat),
        ),
    };
    let pose = p.pose.resolve(floor);
    let body =
        spec.world_body_mut().add_body().with_name(&p.body).with_pos(pose.pos).with_quat(pose.quat);
    let mut free_joint = None;
    match p.motion {
        Motion::Static => {}
        Motion::Driven => body.set_mocap(true),
        Motion::Physics => {
            let j = format!("{}_free", p.body);
            body.add_free_joint().with_name(&j);
            free_joint = Some(j);
        }
    }
    let rgba = p.color.as_deref().map(rgba4).unwrap_or(rgba4(&DEFAULT_PROP_RGBA));
    let g = body.add_geom().with_name(&p.body).with_type(geom_type).with_size(size).with_rgba(rgba);
    if let Some(f) = p.friction {
        *g.friction_mut() = f.triple();
    }
    if !p.collide {
        g.set_contype(0);
        g.set_conaffinity(0);
    }
    if let Some(m) = p.mass {
        g.set_mass(m);
    }
    let mut ent = Entity::new(&p.entity, EntityKind::Object, &p.body);
    ent.prefix = p.prefix.clone();
    ent.model = match p.shape {
        PrimitiveShape::Box(_) => "box".into(),
        PrimitiveShape::Cylinder { .. } => "cylinder".into(),
    };
    ent.free_joint = free_joint;
    ent.weld_reason = (p.motion == Motion::Static)
        .then(|| "motion: static (welded scenery; give `motion: physics` to move it)".to_string());
    ent.initial_pose = pose;
    ent.declared_present = p.present;
    ent.present = p.present;
    ent.meta.insert("motion".into(), p.motion.as_str().into());
    ctx.entities.add(ent)
}
