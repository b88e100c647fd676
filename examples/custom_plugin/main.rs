//! Template: your own crate adds plugins to roqsim and gets the full `roqsim` command line.
//!
//! Copy this folder into a crate of your own (its Cargo.toml depends on `roqsim`, with the `ros`
//! feature when the binary should carry the ROS 2 node), write your plugins beside `main.rs`,
//! and hand their descriptors to `roqsim::cli::main_with`. Every verb works as in `roqsim`
//! itself — `sim` (with and without `--ros`), `check`, `scenes`, `catalog`, `plugins` — and a
//! world names your plugins by their short names.
//!
//! The plugin here, `height_probe`, reads the height of a named body and publishes it as a
//! `std_msgs/msg/Float64` on `/<name>/height` at `rate_hz`; at shutdown it logs the last value.
//! In this repository it builds as the example `custom_plugin` (`cargo build --example
//! custom_plugin`), which is how CI builds and runs it.

use std::process::ExitCode;

use mujoco_rs::prelude::MjtObjBase;
use roqsim::context::payload::Payload;
use roqsim::context::{Endpoint, EndpointId};
use roqsim::error::{ConfigError, HookResult};
use roqsim::plugin::{Hooks, Plugin, PluginArgs, ValidateConfig};
use roqsim::SimContext;
use schemars::JsonSchema;
use serde::Deserialize;

/// `height_probe`'s config.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeightProbeConfig {
    /// Body whose world-frame height is read (its MJCF name, as compiled).
    pub body: String,
    /// Publish rate (Hz). Default 10.
    #[serde(default = "default_rate")]
    pub rate_hz: f64,
}

fn default_rate() -> f64 {
    10.0
}

impl ValidateConfig for HeightProbeConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if !(self.rate_hz > 0.0 && self.rate_hz.is_finite()) {
            e.push(ConfigError::new("rate_hz", format!("must be > 0 (Hz), got {}", self.rate_hz)));
        }
        if self.body.is_empty() {
            e.push(ConfigError::new("body", "must name a body"));
        }
        e
    }
}

/// Reads a body's height after every step; publishes it on its endpoint when due.
pub struct HeightProbe {
    cfg: HeightProbeConfig,
    label: String,
    body: usize,
    endpoint: EndpointId,
    last_z: f64,
}

impl HeightProbe {
    /// Construct from the validated config.
    pub fn new(cfg: HeightProbeConfig, args: &PluginArgs) -> Self {
        HeightProbe { cfg, label: args.label.clone(), body: 0, endpoint: 0, last_z: f64::NAN }
    }
}

impl Plugin for HeightProbe {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::POST_STEP | Hooks::SHUTDOWN
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        self.body = ctx
            .model()
            .name_to_id(MjtObjBase::mjOBJ_BODY, &self.cfg.body)
            .ok_or_else(|| format!("body: the world has no body `{}`", self.cfg.body))?;
        self.endpoint = ctx.interface.add(
            Endpoint::out("height")
                .namespace(&self.label)
                .rate(self.cfg.rate_hz)
                .hint("ros2", "type", "std_msgs/msg/Float64")
                .hint("ros2", "qos", "reliable"),
        );
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        self.last_z = ctx.data().xpos()[self.body][2];
        if ctx.interface.is_due(self.endpoint, ctx.tick) {
            let tick = ctx.tick;
            ctx.interface.publish(self.endpoint, tick, Payload::Float64(self.last_z));
        }
        Ok(())
    }

    fn shutdown(&mut self, _ctx: &mut SimContext) -> HookResult {
        eprintln!("height_probe `{}`: {} at z = {:.4} m", self.label, self.cfg.body, self.last_z);
        Ok(())
    }
}

fn main() -> ExitCode {
    roqsim::cli::main_with(
        "custom_plugin",
        vec![roqsim::plugin_descriptor!(
            "height_probe",
            "Publish a body's height (std_msgs/Float64 on /<name>/height); an out-of-tree plugin template.",
            HeightProbeConfig,
            HeightProbe
        )],
    )
}
