//! `cylinder`: a parametric upright cylindrical obstacle, and `cylinders`, a population of them
//! (`cylinders`).
//!
//! `height` is the full height and `radius` a true radius (MuJoCo wants [radius, half-height];
//! the conversion happens here). An omitted `pose.position.z` stands it on the floor. `mass`
//! sets the geom's total mass, MuJoCo deriving a solid cylinder's inertia from it.

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_norway::Value;

use crate::error::{ConfigError, HookResult};
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::spawn::population::{parse_instances, Population, PopulationConfig};
use crate::spawn::primitive::{build_primitive, validate_common, PrimitiveShape, PrimitiveSpec};
use crate::spawn::{body_name_for, Friction, Motion, PoseConfig};
use crate::world::bounds::MAX_SIZE_M;

/// Config of `cylinder`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CylinderConfig {
    /// MJCF name prefix (the body is `<prefix><address>`, dots as `_`). Default "".
    #[serde(default)]
    pub prefix: String,
    /// World placement (REQUIRED). Omit `position.z` to stand it on the floor; a given z places
    /// its CENTRE.
    pub pose: PoseConfig,
    /// Radius (m). REQUIRED.
    pub radius: f64,
    /// Full height (m). REQUIRED.
    pub height: f64,
    /// [r, g, b] or [r, g, b, a] in 0..1. Default a light warehouse grey.
    #[serde(default)]
    pub color: Option<Vec<f64>>,
    /// false: visual only (rays still see it; nothing collides with it). Default true.
    #[serde(default = "crate::plugin::yes")]
    pub collide: bool,
    /// Sliding friction, or the full [sliding, torsional, rolling] triple. Default 1.0.
    #[serde(default)]
    pub friction: Option<Friction>,
    /// `static` (welded; default) | `driven` (mocap) | `physics` (free joint).
    #[serde(default)]
    pub motion: Motion,
    /// Total mass (kg). Default: MuJoCo's density 1000 kg/m³ × volume (several times too heavy
    /// for a hollow container).
    #[serde(default)]
    pub mass: Option<f64>,
    /// false: compiled in, but absent until spawned (stored on the entity). Default true.
    #[serde(default = "crate::plugin::yes")]
    pub present: bool,
}

impl ValidateConfig for CylinderConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if !(self.radius > 0.0 && self.radius <= MAX_SIZE_M) {
            e.push(ConfigError::new(
                "radius",
                format!("must be in (0, {MAX_SIZE_M}] m, got {}", crate::error::num(self.radius)),
            ));
        }
        if !(self.height > 0.0 && self.height <= MAX_SIZE_M) {
            e.push(ConfigError::new(
                "height",
                format!(
                    "the full height must be in (0, {MAX_SIZE_M}] m, got {}",
                    crate::error::num(self.height)
                ),
            ));
        }
        e.extend(validate_common(&self.pose, &self.color, &self.friction, self.mass));
        e
    }
}

fn spec_of(entity: String, c: CylinderConfig) -> PrimitiveSpec {
    PrimitiveSpec {
        body: body_name_for(&c.prefix, &entity),
        entity,
        prefix: c.prefix,
        shape: PrimitiveShape::Cylinder { radius: c.radius, height: c.height },
        pose: c.pose,
        color: c.color,
        collide: c.collide,
        friction: c.friction,
        motion: c.motion,
        mass: c.mass,
        present: c.present,
    }
}

/// The `cylinder` plugin.
pub struct CylinderProp {
    spec: PrimitiveSpec,
}

impl CylinderProp {
    /// Construct from config.
    pub fn new(cfg: CylinderConfig, args: &PluginArgs) -> Self {
        CylinderProp { spec: spec_of(args.address.clone(), cfg) }
    }
}

impl Plugin for CylinderProp {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD
    }
    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        build_primitive(spec, b.ctx, &self.spec)
    }
}

fn create_population(
    value: &Value,
    args: &PluginArgs,
) -> Result<Box<dyn Plugin>, Vec<ConfigError>> {
    let list = parse_instances::<CylinderConfig>(value, &args.address)?;
    Ok(Box::new(Population::from_specs(list.into_iter().map(|(n, c)| spec_of(n, c)).collect())))
}

/// The registry entry of `cylinders`.
pub fn cylinders_descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "cylinders",
        "Many parametric cylinders from one config value (each instance takes every `cylinder` key, plus `name:`).",
        PopulationConfig;
        create_population
    )
}

/// The registry entry of `cylinder`.
pub fn descriptor() -> crate::plugin::PluginDescriptor {
    crate::plugin_descriptor!(
        "cylinder",
        "A parametric upright cylinder obstacle (radius, full height; static | driven | physics; mass).",
        CylinderConfig,
        CylinderProp
    )
}
