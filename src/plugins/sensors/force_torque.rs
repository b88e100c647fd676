//! `force_torque`: a six-axis force/torque sensor at a site.
//!
//! Measurement. In `build` the plugin adds MuJoCo `force` and `torque` sensors on the site. MuJoCo
//! reports the interaction force and torque the PARENT body exerts on the site's body subtree,
//! in the site frame (for a wrist sensor: what holds the tool up — `+m·g` along the world up axis
//! for a hanging tool). `invert: true` (the default) negates it: the force the tool and its load
//! apply to the flange, the convention a real wrist F/T sensor and its users assume (a hanging
//! 1 kg payload reads −9.81 N along world z). Body gravity compensation does not enter: the
//! reading is the wrench the joint carries.
//!
//! Frames (`frame:`): `sensor` = the site frame (raw), `base` = the owning entity's base body
//! frame, `world`. Taring is done in the raw sensor frame, as a real sensor's zero button: the
//! offset is the reading (before noise) at the moment of the tare, subtracted from every later
//! raw reading before it is rotated; it is valid at the pose it was captured at.
//!
//! Three doors onto one tare: the `tare` endpoint (std_srvs/Trigger service: `Payload::Call` with
//! an `Empty` request, answered `Ack`), [`WrenchReader::tare`] for in-process controllers, and
//! `tare_at_s` (captured on the first read at or after that sim time, once per episode). All three
//! re-arm on reset.
//!
//! Noise: additive Gaussian per channel from `ctx.rng_for("ft:<address>")`, a pure function of
//! (seed, episode, sim time, sensor), so the endpoint and the blackboard reader see the same
//! wrench in one step.
//!
//! Endpoints: `wrench` (out, geometry_msgs/msg/WrenchStamped at `rate_hz`), `tare` (in, service).
//! Blackboard: `ft:<label>` holds a [`WrenchReader`].

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use mujoco_rs::mujoco_c::mjtSensor;
use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::Payload;
use crate::context::{Endpoint, EndpointId, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared as common;

use crate::handles::wrench::Shared;
pub use crate::handles::wrench::{reader_key, FtFrame, WrenchReader};

/// Endpoint roles (keys of `topics:`).
pub const ROLES: [&str; 2] = ["wrench", "tare"];

fn d_frame() -> FtFrame {
    FtFrame::Sensor
}
fn d_rate() -> f64 {
    100.0
}
/// Config of `force_torque` (a component of the entry whose prefix and namespace it inherits).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForceTorqueConfig {
    /// Site to measure at (the model's own name; the entity's prefix is applied). REQUIRED.
    pub site: String,
    /// Frame the wrench is reported in: `sensor` (default) | `base` | `world`.
    #[serde(default = "d_frame")]
    pub frame: FtFrame,
    /// Negate the reading: report what the tool applies to the sensor (the environment's
    /// convention), not what holds the tool. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub invert: bool,
    /// Sim time (s) at which to capture the zero offset, once per episode. Default: never.
    #[serde(default)]
    pub tare_at_s: Option<f64>,
    /// Gaussian white noise on each force channel (N, 1σ). Default 0.
    #[serde(default)]
    pub noise_force_stddev: f64,
    /// Gaussian white noise on each torque channel (N·m, 1σ). Default 0.
    #[serde(default)]
    pub noise_torque_stddev: f64,
    /// `wrench` publish rate (Hz). Default 100.
    #[serde(default = "d_rate")]
    pub rate_hz: f64,
    /// Frame id stamped on the wrench. Default: the site name (unprefixed), or `world`.
    #[serde(default)]
    pub frame_id: Option<String>,
    /// Transport scope. Default: the owning entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Topic per role (`wrench: /ft`).
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

impl ValidateConfig for ForceTorqueConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if self.site.trim().is_empty() {
            e.push(ConfigError::new(
                "site",
                "is required: the site the sensor measures at (e.g. fts_site)",
            ));
        }
        if let Some(t) = self.tare_at_s {
            if !(t.is_finite() && t >= 0.0) {
                e.push(ConfigError::new(
                    "tare_at_s",
                    format!("must be a sim time >= 0 (s), got {t}"),
                ));
            }
        }
        for (k, v) in [
            ("noise_force_stddev", self.noise_force_stddev),
            ("noise_torque_stddev", self.noise_torque_stddev),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                e.push(ConfigError::new(k, format!("must be >= 0, got {v}")));
            }
        }
        e.extend(crate::plugin::check_rate("rate_hz", self.rate_hz));
        e.extend(common::check_topics(&self.topics, &ROLES));
        e
    }
}

/// The `force_torque` plugin.
pub struct ForceTorque {
    cfg: ForceTorqueConfig,
    label: String,
    address: String,
    owner: Option<String>,
    site_name: String,
    sensor_base: String,
    reader: Option<WrenchReader>,
    ep: EndpointId,
    ep_tare: EndpointId,
}

impl ForceTorque {
    /// Construct from config.
    pub fn new(cfg: ForceTorqueConfig, args: &PluginArgs) -> Self {
        ForceTorque {
            cfg,
            label: args.label.clone(),
            address: args.address.clone(),
            owner: args.owner.clone(),
            site_name: String::new(),
            sensor_base: format!("roqsim_ft_{}", args.address.replace(['.', '/', ' '], "_")),
            reader: None,
            ep: 0,
            ep_tare: 0,
        }
    }
}

/// The descriptor (refused at the top of a document: `requires_owner`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "force_torque",
        "Six-axis force/torque sensor at a site: sensor/base/world frame, invert, tare (service, reader, tare_at_s), seeded noise.",
        ForceTorqueConfig,
        ForceTorque
    )
    .requires_owner()
}

impl Plugin for ForceTorque {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD | Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::PRE_STEP | Hooks::POST_STEP
    }

    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        let ent = b.ctx.entities.resolve_owner(self.owner.as_deref()).cloned();
        let prefix = ent.as_ref().map(|e| e.prefix.clone()).unwrap_or_default();
        let full = format!("{prefix}{}", self.cfg.site);
        if spec.site(&full).is_none() {
            let sites: Vec<String> = spec
                .site_iter()
                .map(|s| s.name().to_string())
                .filter(|n| n.starts_with(&prefix) && !n.is_empty())
                .map(|n| n[prefix.len()..].to_string())
                .collect();
            return Err(format!(
                "site: no site `{}` (looked up as `{full}`) on {}; its sites: [{}]",
                self.cfg.site,
                ent.as_ref()
                    .map(|e| format!("entity `{}`", e.name))
                    .unwrap_or_else(|| "the model".into()),
                sites.join(", ")
            ));
        }
        self.site_name = full;
        for (suffix, ty) in
            [("force", mjtSensor::mjSENS_FORCE), ("torque", mjtSensor::mjSENS_TORQUE)]
        {
            spec.add_sensor()
                .with_name(&format!("{}_{suffix}", self.sensor_base))
                .with_type(ty)
                .with_objtype(MjtObjBase::mjOBJ_SITE)
                .with_objname(&self.site_name);
        }
        Ok(())
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let entity = common::owner_entity(ctx, "force_torque", self.owner.as_deref())?;
        let m = ctx.model();
        let adr = |suffix: &str| -> Result<usize, String> {
            let name = format!("{}_{suffix}", self.sensor_base);
            let id = m
                .name_to_id(MjtObjBase::mjOBJ_SENSOR, &name)
                .ok_or_else(|| format!("sensor `{name}` missing after compile"))?;
            Ok(m.sensor_adr()[id] as usize)
        };
        let (force_adr, torque_adr) = (adr("force")?, adr("torque")?);
        let site = m
            .name_to_id(MjtObjBase::mjOBJ_SITE, &self.site_name)
            .ok_or_else(|| format!("site `{}` missing after compile", self.site_name))?;
        let base_body = common::entity_body(m, &entity)?;
        let frame_id = self.cfg.frame_id.clone().unwrap_or_else(|| match self.cfg.frame {
            FtFrame::World => "world".into(),
            FtFrame::Base => common::unprefixed(&entity.body, &entity.prefix).to_string(),
            FtFrame::Sensor => self.cfg.site.clone(),
        });
        let reader = WrenchReader {
            force_adr,
            torque_adr,
            site,
            base_body,
            frame: self.cfg.frame,
            frame_id,
            invert: self.cfg.invert,
            noise: (self.cfg.noise_force_stddev, self.cfg.noise_torque_stddev),
            rng_name: reader_key(&self.address),
            tare_at: self.cfg.tare_at_s,
            shared: Rc::new(RefCell::new(Shared::default())),
        };
        let scope = common::Scope::new(&entity, self.cfg.namespace.as_deref());
        self.ep = ctx.interface.add(
            scope.apply(
                Endpoint::out("wrench")
                    .rate(self.cfg.rate_hz)
                    .hint("ros2", "type", "geometry_msgs/msg/WrenchStamped")
                    .hint("ros2", "qos", "sensor_data"),
                &self.cfg.topics,
            ),
        );
        let tare_topic =
            self.cfg.topics.get("tare").cloned().unwrap_or_else(|| format!("{}/tare", self.label));
        self.ep_tare = ctx.interface.add(
            scope
                .apply(
                    Endpoint::input("tare").hint("ros2", "service", "std_srvs/srv/Trigger"),
                    &BTreeMap::new(),
                )
                .hint("ros2", "topic", tare_topic),
        );
        ctx.blackboard.set(reader_key(&self.label), reader.clone());
        self.reader = Some(reader);
        Ok(())
    }

    fn on_reset(&mut self, _ctx: &mut SimContext) -> HookResult {
        if let Some(r) = &self.reader {
            r.rearm();
        }
        Ok(())
    }

    fn pre_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let Some(r) = self.reader.clone() else { return Ok(()) };
        for p in ctx.interface.drain(self.ep_tare) {
            match p {
                Payload::Call(call) => {
                    r.tare_now(ctx);
                    let _ = call.reply.send(Payload::Ack {
                        success: true,
                        message: format!(
                            "tared at t = {:.4} s (offset valid at this pose only)",
                            ctx.sim_time()
                        ),
                    });
                }
                other => tracing::warn!(
                    "[{}] tare: ignored a {} payload (expected a service Call)",
                    self.address,
                    other.kind()
                ),
            }
        }
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if !ctx.interface.is_due(self.ep, ctx.tick) {
            return Ok(());
        }
        let w =
            self.reader.as_ref().ok_or("force_torque: post_step before configure")?.read(ctx)?;
        let tick = ctx.tick;
        ctx.interface.publish(self.ep, tick, Payload::Wrench(w));
        Ok(())
    }
}
