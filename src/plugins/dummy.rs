//! `dummy`: a trivial plugin that implements every hook, used to validate the framework end to
//! end without assets.

use std::cell::RefCell;
use std::rc::Rc;

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::{Entity, EntityKind, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, ValidateConfig};

/// Blackboard key of the shared call log (`Rc<RefCell<Vec<String>>>`), filled when `record: true`.
pub const CALL_LOG_KEY: &str = "dummy:calls";

/// Config of `dummy`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DummyConfig {
    /// Half-extent (m) of the free-floating box this plugin adds; must be > 0.
    #[serde(default = "default_size")]
    pub size: f64,
    /// Append `<address>:<hook>` to the blackboard's `dummy:calls` log on every call (tests).
    #[serde(default)]
    pub record: bool,
    /// Make this hook fail (`build`, `configure`, `on_reset`, `pre_step`, `post_step`,
    /// `shutdown`), to exercise the engine's error handling.
    #[serde(default)]
    pub fail_on: Option<String>,
    /// Request the end of the run (`ctx.request_stop`) once sim time reaches this (s).
    #[serde(default)]
    pub stop_at_s: Option<f64>,
    /// Register the box as an entity (named by this entry's address) that starts present or absent.
    #[serde(default = "crate::plugin::yes")]
    pub present: bool,
}

fn default_size() -> f64 {
    0.1
}

impl ValidateConfig for DummyConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if !(self.size > 0.0 && self.size <= crate::world::bounds::MAX_SIZE_M) {
            e.push(ConfigError::new(
                "size",
                format!(
                    "must be in (0, {}] m, got {}",
                    crate::world::bounds::MAX_SIZE_M,
                    crate::error::num(self.size)
                ),
            ));
        }
        if let Some(t) = self.stop_at_s {
            if !(t >= 0.0 && t.is_finite()) {
                e.push(ConfigError::new(
                    "stop_at_s",
                    format!("must be a finite sim time >= 0 s, got {t}; omit it to run on"),
                ));
            }
        }
        if let Some(h) = &self.fail_on {
            if !Hooks::NAMES.contains(&h.as_str()) {
                e.push(ConfigError::new(
                    "fail_on",
                    format!("unknown hook `{h}`; one of {}", Hooks::NAMES.join(", ")),
                ));
            }
        }
        e
    }
}

/// The dummy plugin: adds a free box in build, reads its height in post_step.
pub struct Dummy {
    cfg: DummyConfig,
    address: String,
    body: String,
    body_id: usize,
    log: Option<Rc<RefCell<Vec<String>>>>,
    /// Height of the box (m) after the last step.
    pub last_z: f64,
}

impl Dummy {
    /// Construct from config.
    pub fn new(cfg: DummyConfig, args: &PluginArgs) -> Self {
        let body = format!("{}_box", args.address.replace('.', "_"));
        Dummy { cfg, address: args.address.clone(), body, body_id: 0, log: None, last_z: 0.0 }
    }

    fn record(&mut self, ctx: &mut SimContext, hook: &str) -> HookResult {
        if self.cfg.record {
            if self.log.is_none() {
                if !ctx.blackboard.contains(CALL_LOG_KEY) {
                    ctx.blackboard.set(CALL_LOG_KEY, Rc::new(RefCell::new(Vec::<String>::new())));
                }
                self.log =
                    Some(ctx.blackboard.get::<Rc<RefCell<Vec<String>>>>(CALL_LOG_KEY)?.clone());
            }
            if let Some(l) = &self.log {
                l.borrow_mut().push(format!("{}:{hook}", self.address));
            }
        }
        if self.cfg.fail_on.as_deref() == Some(hook) {
            return Err(format!("failing on purpose (fail_on: {hook})"));
        }
        Ok(())
    }
}

impl Plugin for Dummy {
    fn hooks(&self) -> Hooks {
        Hooks::ALL
    }
    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        self.record(b.ctx, "build")?;
        let k = (self.body.len() % 7) as f64;
        let body = spec.world_body_mut().add_body().with_name(&self.body).with_pos([
            -2.0 + 0.5 * k,
            -2.0,
            0.5,
        ]);
        body.add_free_joint();
        body.add_geom()
            .with_type(MjtGeomBase::mjGEOM_BOX)
            .with_size([self.cfg.size; 3])
            .with_rgba([0.8, 0.3, 0.2, 1.0]);
        let mut e = Entity::new(&self.address, EntityKind::Object, &self.body);
        e.declared_present = self.cfg.present;
        e.present = self.cfg.present;
        b.ctx.entities.add(e)?;
        Ok(())
    }
    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        self.record(ctx, "configure")?;
        self.body_id = ctx
            .model()
            .name_to_id(MjtObjBase::mjOBJ_BODY, &self.body)
            .ok_or_else(|| format!("body `{}` missing after compile", self.body))?;
        Ok(())
    }
    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.record(ctx, "on_reset")
    }
    fn pre_step(&mut self, ctx: &mut SimContext) -> HookResult {
        self.record(ctx, "pre_step")
    }
    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        self.record(ctx, "post_step")?;
        self.last_z = ctx.data().xpos()[self.body_id][2];
        if let Some(t) = self.cfg.stop_at_s {
            if ctx.sim_time() >= t - 0.5 * ctx.dt {
                ctx.request_stop(format!("{} reached stop_at_s = {t} s", self.address));
            }
        }
        Ok(())
    }
    fn shutdown(&mut self, ctx: &mut SimContext) -> HookResult {
        self.record(ctx, "shutdown")
    }
}

/// The registry entry of `dummy`.
pub fn descriptor() -> crate::plugin::PluginDescriptor {
    crate::plugin_descriptor!(
        "dummy",
        "Trivial plugin implementing every hook; adds one free box (framework validation).",
        DummyConfig,
        Dummy
    )
}
