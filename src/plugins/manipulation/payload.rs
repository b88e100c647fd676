//! `payload`: a carried payload, as added mass on one body of a robot.
//!
//! A point mass at the body's centre of mass: the body's mass grows by `mass` (kg) and its inertia
//! does not change (a point mass has no inertia about its own centre). The write happens in
//! `configure`, after compile, on `model.body_mass`, and the derived constants
//! (`body_subtreemass`, `dof_invweight0`, `body_invweight0`, ...) are re-derived with
//! `mj_setConst` through the model-write seam (`crate::mujoco::model_write`), which runs it on a
//! scratch `mjData`, so the live state is not touched. `mass: 0` writes nothing: the unloaded
//! cell of a sweep compiles to exactly the model of a world that never declared a payload.
//!
//! An `offset` key is refused rather than approximated: an offset payload shifts the centre of
//! mass and adds a parallel-axis inertia term — a different body, not a heavier one — and
//! representing it means adding a child body before compile. `body:` (the model's own name; the
//! entity's spawn prefix is applied) loads a body other than the entity's root.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::SimContext;
use crate::error::{ConfigError, HookResult};
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared as common;

/// Config of `payload`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PayloadConfig {
    /// Added mass (kg), REQUIRED, ≥ 0: added to the body's own mass at its centre of mass.
    pub mass: f64,
    /// Body to load (the model's own name). Default "": the entity's root body.
    #[serde(default)]
    pub body: String,
    /// Refused: an offset payload is a different body (it moves the centre of mass and adds a
    /// parallel-axis inertia), not a heavier one.
    #[serde(default)]
    #[schemars(skip)]
    pub offset: Option<serde_norway::Value>,
}

impl ValidateConfig for PayloadConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if !(self.mass >= 0.0 && self.mass <= crate::world::bounds::MAX_MASS_KG) {
            e.push(ConfigError::new(
                "mass",
                format!("must be in [0, 1e9] kg, got {}", crate::error::num(self.mass)),
            ));
        }
        if self.offset.is_some() {
            e.push(ConfigError::new(
                "offset",
                "an offset payload is refused rather than approximated: it shifts the centre of mass and adds a parallel-axis \
                 inertia term, which is a different body, not a heavier one; the payload is a point mass at the body's centre \
                 of mass. Model an offset load as a child body in the robot's MJCF (before compile)",
            ));
        }
        e
    }
}

/// The `payload` plugin.
pub struct PayloadPlugin {
    cfg: PayloadConfig,
    owner: Option<String>,
    /// Loaded body id (after configure).
    pub body: usize,
}

impl PayloadPlugin {
    /// Construct from config.
    pub fn new(cfg: PayloadConfig, args: &PluginArgs) -> Self {
        PayloadPlugin { cfg, owner: args.owner.clone(), body: 0 }
    }
}

/// The descriptor (refused at the top of a document: `requires_owner`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "payload",
        "A carried payload: a point mass (kg) added to one body of the entity it is nested under (offset refused).",
        PayloadConfig,
        PayloadPlugin
    )
    .requires_owner()
}

impl Plugin for PayloadPlugin {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let entity = common::owner_entity(ctx, "payload", self.owner.as_deref())?;
        self.body = common::resolve_body(ctx.model(), &entity, "body", &self.cfg.body)?;
        if self.cfg.mass == 0.0 {
            return Ok(());
        }
        let current = ctx.model().body_mass()[self.body];
        let mut w = ctx.model_writer();
        w.body_mass(self.body, current + self.cfg.mass);
        w.set_const();
        Ok(())
    }
}
