//! `box`: a parametric rectangular box obstacle placed from the world YAML.
//! Also the shared builder of primitive props ([`build_primitive`]) that
//! `boxes`, `cylinder` and `cylinders` use.
//!
//! Sizes are full extents (not MuJoCo half-extents). An omitted `pose.position.z` seats the box
//! on the floor (its lowest point at z = 0, rotation included). By default the box is welded
//! scenery (`motion: static`); `physics` gives it a free joint (teleportable, re-seated on reset
//! by MuJoCo's own `qpos0`), `driven` makes it a mocap body (re-seated at its spawn pose by
//! `mj_resetData`).

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::{Entity, EntityKind, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, ValidateConfig};
use crate::spawn::{
    body_name_for, box_floor_offset, check_rgba, cylinder_floor_offset, rgba4, Friction, Motion,
    PoseConfig,
};
use crate::world::bounds::{MAX_MASS_KG, MAX_SIZE_M};

/// Default prop colour: a light warehouse grey.
pub const DEFAULT_PROP_RGBA: [f64; 4] = [0.72, 0.72, 0.70, 1.0];

/// Config of `box`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BoxConfig {
    /// MJCF name prefix (the body is `<prefix><address>`, dots as `_`). Default "".
    #[serde(default)]
    pub prefix: String,
    /// World placement, as SpawnEntity states one (REQUIRED). Omit `position.z` to sit the box on
    /// the floor; a given z places its CENTRE.
    pub pose: PoseConfig,
    /// Full extents [x, y, z] (m), not half-extents (REQUIRED).
    pub size: [f64; 3],
    /// [r, g, b] or [r, g, b, a] in 0..1. Default a light warehouse grey.
    #[serde(default)]
    pub color: Option<Vec<f64>>,
    /// false: visual only (rays still see it; nothing collides with it). Default true.
    #[serde(default = "crate::plugin::yes")]
    pub collide: bool,
    /// Sliding friction, or the full [sliding, torsional, rolling] triple. Default 1.0.
    #[serde(default)]
    pub friction: Option<Friction>,
    /// Who owns the pose: `static` (welded scenery; default), `driven` (mocap: a plugin writes
    /// it), `physics` (free joint: movable and teleportable).
    #[serde(default)]
    pub motion: Motion,
    /// Total mass (kg). Default: MuJoCo's density 1000 kg/m³ × volume.
    #[serde(default)]
    pub mass: Option<f64>,
    /// false: compiled in, but absent until spawned (stored on the entity). Default true.
    #[serde(default = "crate::plugin::yes")]
    pub present: bool,
}

/// Checks shared by primitive props.
pub(crate) fn validate_common(
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

impl ValidateConfig for BoxConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if self.size.iter().any(|s| !(*s > 0.0 && *s <= MAX_SIZE_M)) {
            e.push(ConfigError::new(
                "size",
                format!(
                    "full extents [x, y, z] must all be in (0, {MAX_SIZE_M}] m, got [{}]",
                    self.size.map(crate::error::num).join(", ")
                ),
            ));
        }
        e.extend(validate_common(&self.pose, &self.color, &self.friction, self.mass));
        e
    }
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

/// The `box` plugin.
pub struct BoxProp {
    spec: PrimitiveSpec,
}

impl BoxProp {
    /// Construct from config.
    pub fn new(cfg: BoxConfig, args: &PluginArgs) -> Self {
        BoxProp {
            spec: PrimitiveSpec {
                entity: args.address.clone(),
                body: body_name_for(&cfg.prefix, &args.address),
                prefix: cfg.prefix,
                shape: PrimitiveShape::Box(cfg.size),
                pose: cfg.pose,
                color: cfg.color,
                collide: cfg.collide,
                friction: cfg.friction,
                motion: cfg.motion,
                mass: cfg.mass,
                present: cfg.present,
            },
        }
    }
}

impl Plugin for BoxProp {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD
    }
    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        build_primitive(spec, b.ctx, &self.spec)
    }
}

/// The registry entry of `box`.
pub fn descriptor() -> crate::plugin::PluginDescriptor {
    crate::plugin_descriptor!(
        "box",
        "A parametric box obstacle (full extents; on the floor unless z is given; static | driven | physics).",
        BoxConfig,
        BoxProp
    )
}
