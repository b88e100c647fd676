//! `energy_monitor`: what a robot's actuators cost it, integrated over the run.
//!
//! Measured, every physics step: per metered actuator, the torque a real drive supplies — the
//! actuator's own force (`actuator_force`) plus its share of the gravity-compensation force on
//! its joint's dof (`qfrc_gravcomp`, split evenly between the metered actuators on that dof;
//! MuJoCo carries a compensated arm's weight outside `actuator_force`, which would otherwise read
//! zero on a joint holding a load) — times its velocity (`actuator_velocity`). Each actuator's
//! power is sorted into DRIVING (> 0) and DRIVEN (< 0) before any sum, so one joint descending
//! under gravity cannot pay for another one lifting.
//!
//! Assumed, and only when stated (the defaults assume nothing): `efficiency` (mechanical →
//! electrical, 0 < e ≤ 1), `idle_w` (W drawn regardless), `resistive_w_per_nm2` (winding loss
//! `k·τ²`: one number, or `{actuator: k}` where an omitted actuator contributes nothing),
//! `regenerative` (credit driven power × efficiency back; default false: a non-regenerative drive
//! dissipates it). Electrical power = Σ driving / e + idle + Σ k·τ² − (regen ? e · Σ driven : 0).
//! `capacity_wh` (0 = no battery: energy is reported, charge is not — unknown, not full) and
//! `voltage` (0 = unknown: no current) are the pack's. A depleted pack latches and is published;
//! the robot keeps driving (ending the trial is the experiment's decision).
//!
//! The integral runs on the physics thread every step against elapsed sim time, never on read,
//! and pauses while the entity is absent. Which actuators count is derived: every actuator of the
//! entity (transmission on a joint of its subtree, or named under its prefix); an entity with none
//! is an error (a meter reading zero forever looks like a robot that costs nothing).
//!
//! Endpoint `battery` (out, ROS 2: sensor_msgs/BatteryState on `battery_state`) carries an
//! [`EnergyReport`]; blackboard `energy:<address>` holds an [`EnergyReader`]. `on_reset` zeroes
//! every total.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use mujoco_rs::mujoco_c::mjtTrn;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::{EnergyReport, Payload};
use crate::context::{Endpoint, EndpointId, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::plugin::check_rate;
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared::contact_watch::is_present;
use crate::plugins::shared::{self as common, Scope};

/// Endpoint roles (keys of `topics:`).
pub const ROLES: [&str; 1] = ["battery"];

fn one() -> f64 {
    1.0
}
fn d_rate() -> f64 {
    5.0
}

/// `resistive_w_per_nm2`: one coefficient for every metered actuator, or one per actuator name.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Resistive {
    /// k (W/(N·m)²) for every metered actuator.
    All(f64),
    /// k per actuator (the model's own name); an omitted actuator contributes nothing.
    Per(BTreeMap<String, f64>),
}

impl Default for Resistive {
    fn default() -> Self {
        Resistive::All(0.0)
    }
}

/// Config of `energy_monitor`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnergyMonitorConfig {
    /// Actuator names to meter (the model's own). Default: every actuator of this entity.
    #[serde(default)]
    pub actuators: Vec<String>,
    /// Mechanical → electrical efficiency, 0 < e ≤ 1. Default 1.0.
    #[serde(default = "one")]
    pub efficiency: f64,
    /// Power drawn regardless of motion (W): compute, sensors. Default 0.
    #[serde(default)]
    pub idle_w: f64,
    /// Winding loss k in k·τ² (W/(N·m)²): a number, or `{actuator_name: k}`. Default 0.
    #[serde(default)]
    pub resistive_w_per_nm2: Resistive,
    /// Credit negative mechanical power back (× efficiency). Default false.
    #[serde(default)]
    pub regenerative: bool,
    /// Battery capacity (Wh); 0 = no battery modelled (energy reported, charge not). Default 0.
    #[serde(default)]
    pub capacity_wh: f64,
    /// Nominal voltage (V); 0 = unknown, and the current is then not reported. Default 0.
    #[serde(default)]
    pub voltage: f64,
    /// Transport scope of the endpoint; default (omitted or ""): the entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Endpoint publish rate (Hz). Default 5.
    #[serde(default = "d_rate")]
    pub rate_hz: f64,
    /// Topic per endpoint role (`battery`; default topic `battery_state`).
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

fn nonneg(e: &mut Vec<ConfigError>, key: &str, v: f64, unit: &str) {
    if !(v >= 0.0 && v.is_finite()) {
        e.push(ConfigError::new(key, format!("must be a finite number >= 0 ({unit}), got {v}")));
    }
}

impl ValidateConfig for EnergyMonitorConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if !(self.efficiency > 0.0 && self.efficiency <= 1.0) {
            e.push(ConfigError::new(
                "efficiency",
                format!(
                    "must be within (0, 1] (mechanical -> electrical), got {}",
                    self.efficiency
                ),
            ));
        }
        nonneg(&mut e, "idle_w", self.idle_w, "W");
        match &self.resistive_w_per_nm2 {
            Resistive::All(k) => nonneg(&mut e, "resistive_w_per_nm2", *k, "W per (N·m)^2"),
            Resistive::Per(m) => {
                for (a, k) in m {
                    nonneg(&mut e, &format!("resistive_w_per_nm2.{a}"), *k, "W per (N·m)^2");
                }
            }
        }
        nonneg(&mut e, "capacity_wh", self.capacity_wh, "Wh; 0 = no battery");
        nonneg(&mut e, "voltage", self.voltage, "V; 0 = unknown");
        e.extend(check_rate("rate_hz", self.rate_hz));
        for (i, a) in self.actuators.iter().enumerate() {
            if a.trim().is_empty() {
                e.push(ConfigError::new(format!("actuators[{i}]"), "empty actuator name"));
            } else if self.actuators[..i].contains(a) {
                e.push(ConfigError::new(
                    format!("actuators[{i}]"),
                    format!("`{a}` is listed twice"),
                ));
            }
        }
        e.extend(common::check_topics(&self.topics, &ROLES));
        e
    }
}

/// In-process reader (blackboard `energy:<address>`); its report holds the totals since the reset.
pub type EnergyReader = crate::plugins::shared::latest::Reader<EnergyReport>;

/// Blackboard key of the reader of the monitor at `address`.
pub fn reader_key(address: &str) -> String {
    format!("energy:{address}")
}

/// One metered actuator.
#[derive(Debug, Clone)]
struct Metered {
    outadr: usize,
    outnum: usize,
    /// Dof whose gravity-compensation share this actuator supplies, and the share (1/n).
    gravcomp: Option<(usize, f64)>,
    k: f64,
}

/// The `energy_monitor` plugin.
pub struct EnergyMonitor {
    cfg: EnergyMonitorConfig,
    address: String,
    owner: Option<String>,
    entity: String,
    meters: Vec<Metered>,
    report: Rc<RefCell<EnergyReport>>,
    last_time: Option<f64>,
    id: EndpointId,
}

impl EnergyMonitor {
    /// Construct from config.
    pub fn new(cfg: EnergyMonitorConfig, args: &PluginArgs) -> Self {
        EnergyMonitor {
            cfg,
            address: args.address.clone(),
            owner: args.owner.clone(),
            entity: String::new(),
            meters: Vec::new(),
            report: Rc::default(),
            last_time: None,
            id: 0,
        }
    }

    fn zero(&self) {
        let mut r = self.report.borrow_mut();
        let n = r.actuators.len();
        r.stamp = 0.0;
        r.energy_j = 0.0;
        r.driving_j = 0.0;
        r.driven_j = 0.0;
        r.torque_integral_nms = 0.0;
        r.power_w = 0.0;
        r.actuator_driving_j = vec![0.0; n];
        r.actuator_driven_j = vec![0.0; n];
        r.depleted = false;
        r.state_of_charge = (self.cfg.capacity_wh > 0.0).then_some(1.0);
        r.current_a = (self.cfg.voltage > 0.0).then_some(0.0);
    }
}

/// The descriptor (refused at the top of a document: `requires_owner`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "energy_monitor",
        "What the entity's actuators cost: driving vs driven power per actuator, integrated every step (EnergyReport; BatteryState).",
        EnergyMonitorConfig,
        EnergyMonitor
    )
    .requires_owner()
}

impl Plugin for EnergyMonitor {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let entity = common::owner_entity(ctx, "energy_monitor", self.owner.as_deref())?;
        let m = ctx.model();
        let names: Vec<String> = if self.cfg.actuators.is_empty() {
            let all = common::entity_actuators(m, &entity);
            if all.is_empty() {
                return Err(format!(
                    "entity `{}` has no actuators to meter: a meter reading zero forever looks exactly like a robot that costs nothing to drive",
                    entity.name
                ));
            }
            all
        } else {
            self.cfg.actuators.clone()
        };
        let mut ids = Vec::new();
        for (i, n) in names.iter().enumerate() {
            ids.push(common::resolve_actuator(m, &entity, &format!("actuators[{i}]"), n)?);
        }
        if let Resistive::Per(map) = &self.cfg.resistive_w_per_nm2 {
            for k in map.keys() {
                if !names.contains(k) {
                    return Err(format!("resistive_w_per_nm2.{k}: `{k}` is not a metered actuator of `{}`; metered: [{}]", entity.name, names.join(", ")));
                }
            }
        }
        // gravity-compensation share: metered actuators per dof
        let mut per_dof: BTreeMap<usize, usize> = BTreeMap::new();
        let dof_of = |a: usize| -> Option<usize> {
            let t = m.actuator_trntype()[a];
            (t == mjtTrn::mjTRN_JOINT)
                .then(|| m.jnt_dofadr()[m.actuator_trnid()[a][0] as usize] as usize)
        };
        for &a in &ids {
            if let Some(d) = dof_of(a) {
                *per_dof.entry(d).or_default() += 1;
            }
        }
        self.meters = ids
            .iter()
            .zip(&names)
            .map(|(&a, n)| Metered {
                outadr: m.actuator_outadr()[a] as usize,
                outnum: m.actuator_outnum()[a].max(1) as usize,
                gravcomp: dof_of(a).map(|d| (d, 1.0 / per_dof[&d] as f64)),
                k: match &self.cfg.resistive_w_per_nm2 {
                    Resistive::All(k) => *k,
                    Resistive::Per(map) => map.get(n).copied().unwrap_or(0.0),
                },
            })
            .collect();
        self.entity = entity.name.clone();
        {
            let mut r = self.report.borrow_mut();
            r.actuators = names;
            r.capacity_wh = (self.cfg.capacity_wh > 0.0).then_some(self.cfg.capacity_wh);
            r.voltage = (self.cfg.voltage > 0.0).then_some(self.cfg.voltage);
        }
        self.zero();
        let scope = Scope::new(&entity, self.cfg.namespace.as_deref());
        let mut ep = Endpoint::out("battery")
            .rate(self.cfg.rate_hz)
            .hint("ros2", "type", "sensor_msgs/msg/BatteryState")
            .hint("ros2", "qos", "reliable");
        if !self.cfg.topics.contains_key("battery") {
            ep = ep.hint("ros2", "topic", "battery_state");
        }
        self.id = ctx.interface.add(scope.apply(ep, &self.cfg.topics));
        ctx.blackboard.set(reader_key(&self.address), EnergyReader::from(self.report.clone()));
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.zero();
        self.last_time = Some(ctx.sim_time());
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let now = ctx.sim_time();
        let dt = now - self.last_time.unwrap_or(now - ctx.dt);
        self.last_time = Some(now);
        if is_present(ctx, &self.entity) && dt > 0.0 {
            let d = ctx.data();
            let (force, vel, grav) = (d.actuator_force(), d.actuator_velocity(), d.qfrc_gravcomp());
            let e = self.cfg.efficiency;
            let mut r = self.report.borrow_mut();
            let (mut drive_w, mut driven_w, mut resist_w, mut tau_sum) = (0.0, 0.0, 0.0, 0.0);
            for (i, mt) in self.meters.iter().enumerate() {
                let share = mt.gravcomp.map(|(dof, s)| grav[dof] * s).unwrap_or(0.0);
                let mut p = 0.0;
                let mut tau_abs = 0.0;
                for k in 0..mt.outnum {
                    let tau = force[mt.outadr + k] + if k == 0 { share } else { 0.0 };
                    p += tau * vel[mt.outadr + k];
                    tau_abs += tau.abs();
                    resist_w += mt.k * tau * tau;
                }
                tau_sum += tau_abs;
                if p > 0.0 {
                    drive_w += p;
                    r.actuator_driving_j[i] += p * dt;
                } else {
                    driven_w -= p;
                    r.actuator_driven_j[i] -= p * dt;
                }
            }
            let regen = if self.cfg.regenerative { e * driven_w } else { 0.0 };
            let power = drive_w / e + self.cfg.idle_w + resist_w - regen;
            r.driving_j += drive_w * dt;
            r.driven_j += driven_w * dt;
            r.torque_integral_nms += tau_sum * dt;
            r.energy_j += power * dt;
            r.power_w = power;
            if self.cfg.voltage > 0.0 {
                r.current_a = Some(power / self.cfg.voltage);
            }
            if self.cfg.capacity_wh > 0.0 {
                let soc = (1.0 - r.energy_j / (self.cfg.capacity_wh * 3600.0)).clamp(0.0, 1.0);
                r.state_of_charge = Some(soc);
                if soc <= 0.0 {
                    r.depleted = true;
                }
            }
        }
        self.report.borrow_mut().stamp = now;
        if ctx.interface.is_due(self.id, ctx.tick) {
            let p = Payload::EnergyReport(self.report.borrow().clone());
            let tick = ctx.tick;
            ctx.interface.publish(self.id, tick, p);
        }
        Ok(())
    }
}
