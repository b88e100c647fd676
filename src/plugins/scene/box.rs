//! `box`: a parametric rectangular box obstacle placed from the world YAML, and `boxes`, a
//! population of them (each instance takes every `box` key, plus `name:`).
//! It builds through the shared primitive builder ([`build_primitive`], in `crate::spawn::primitive`).
//!
//! Sizes are full extents (not MuJoCo half-extents). An omitted `pose.position.z` seats the box
//! on the floor (its lowest point at z = 0, rotation included). By default the box is welded
//! scenery (`motion: static`); `physics` gives it a free joint (teleportable, re-seated on reset
//! by MuJoCo's own `qpos0`), `driven` makes it a mocap body (re-seated at its spawn pose by
//! `mj_resetData`).

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_norway::Value;

use crate::error::{ConfigError, HookResult};
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::spawn::population::{parse_instances, Population, PopulationConfig};
pub use crate::spawn::primitive::{
    build_primitive, validate_common, PrimitiveShape, PrimitiveSpec, DEFAULT_PROP_RGBA,
};
use crate::spawn::{body_name_for, Friction, Motion, PoseConfig};
use crate::world::bounds::MAX_SIZE_M;

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

/// The primitive a box config describes, registered as entity `entity`.
fn spec_of(entity: String, c: BoxConfig) -> PrimitiveSpec {
    PrimitiveSpec {
        body: body_name_for(&c.prefix, &entity),
        entity,
        prefix: c.prefix,
        shape: PrimitiveShape::Box(c.size),
        pose: c.pose,
        color: c.color,
        collide: c.collide,
        friction: c.friction,
        motion: c.motion,
        mass: c.mass,
        present: c.present,
    }
}

/// The `box` plugin.
pub struct BoxProp {
    spec: PrimitiveSpec,
}

impl BoxProp {
    /// Construct from config.
    pub fn new(cfg: BoxConfig, args: &PluginArgs) -> Self {
        BoxProp { spec: spec_of(args.address.clone(), cfg) }
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

fn create_population(
    value: &Value,
    args: &PluginArgs,
) -> Result<Box<dyn Plugin>, Vec<ConfigError>> {
    let list = parse_instances::<BoxConfig>(value, &args.address)?;
    let props = list.into_iter().map(|(name, c)| spec_of(name, c)).collect();
    Ok(Box::new(Population::from_specs(props)))
}

/// The registry entry of `boxes`.
pub fn boxes_descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "boxes",
        "Many parametric boxes from one config value (each instance takes every `box` key, plus `name:`).",
        PopulationConfig;
        create_population
    )
}
