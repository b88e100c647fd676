//! `imu`: a strap-down IMU — angular rate, proper acceleration and attitude at a site.
//!
//! Measurement. In `build` the plugin adds three MuJoCo sensors on the IMU site — `gyro`
//! (angular velocity, site frame), `accelerometer` (specific force, site frame: a resting IMU
//! reads +9.81 m/s² on the axis pointing up, because MuJoCo runs `mj_rnePostConstraint` when an
//! accelerometer exists) and `framequat` (site orientation in the world frame) — and reads
//! `sensordata`. The site is an existing one (`site:`), or one the plugin creates on `body` (default:
//! the entity's base body) at `pos` / `rpy` (fixed-axis XYZ) or `quat` ([w, x, y, z]). Like every
//! MuJoCo sensor the values are those of the state at the start of the last step.
//!
//! Noise (all from `ctx.rng_for("imu:<address>")`, so the endpoint and the blackboard reader draw
//! identical values in one step): per axis `accel + accel_bias + N(0, accel_stddev)` and likewise
//! for the gyro; attitude gets a small-angle rotation N(0, orientation_stddev) about each sensor
//! axis plus an extra N(0, yaw_stddev) about the world vertical. Covariances are the declared
//! stddev² on the diagonals and nothing else (a bias is systematic and is not folded in);
//! `orientation: false` publishes orientation_covariance[0] = -1 (sensor_msgs/Imu: no attitude).
//!
//! Endpoints: `imu` (out, `sensor_msgs/msg/Imu` on the relative topic `topic`, default
//! `imu/data`; QoS `sensor_data`; lazy by default: nothing is computed while nothing listens) and
//! `tf_static` (the mount transform `body -> frame_id`, published at every reset). Blackboard:
//! `imu:<address>` holds an [`ImuReader`] that assembles a reading on demand, ungated by lazy.

use std::collections::BTreeMap;

use mujoco_rs::mujoco_c::mjtSensor;
use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_norway::Value;

use crate::context::payload::{Imu, Transform};
use crate::context::{Endpoint, EndpointId, Payload, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::handles::sensor_fault::{self, FaultAllowlist, FaultBlock, FaultSwitch, Refusal};
use crate::math::{quat, vec3, wxyz, xyzw, UnitQuaternion, Vector3};
use crate::plugin::{
    typed_config, BuildContext, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig,
};
use crate::plugin_descriptor;
use crate::plugins::shared::sensor_keys::{fault_params, finite_nonneg, overlay};
use crate::plugins::shared::unprefixed;
use crate::spawn::frame_prefix;

/// Keys an imu's `fault:` block may write: the noise, the biases and `orientation`, so a trial can
/// drop the attitude channel or triple the rate noise partway through.
pub const FAULT_ALLOWLIST: FaultAllowlist = FaultAllowlist {
    sensor: "imu",
    per_frame: &[
        "accel_stddev",
        "gyro_stddev",
        "accel_bias",
        "gyro_bias",
        "orientation_stddev",
        "yaw_stddev",
        "orientation",
    ],
    refused: &[
        ("site", Refusal::ConfiguredOnce),
        ("body", Refusal::ConfiguredOnce),
        ("pos", Refusal::ConfiguredOnce),
        ("rpy", Refusal::ConfiguredOnce),
        ("quat", Refusal::ConfiguredOnce),
        ("frame_id", Refusal::ConfiguredOnce),
        ("topic", Refusal::ConfiguredOnce),
        ("topics", Refusal::ConfiguredOnce),
        ("namespace", Refusal::ConfiguredOnce),
        ("rate_hz", Refusal::ConfiguredOnce),
        ("lazy", Refusal::ConfiguredOnce),
    ],
};

fn default_topic() -> String {
    "imu/data".into()
}
fn default_rate() -> f64 {
    100.0
}
/// Config of `imu`. Names resolve under the prefix of the entity the entry is nested under; at the
/// top of a document (no entity) `body` or `site` is required.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImuConfig {
    /// Transport scope of the endpoints. Default: the owning entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Body the IMU is bolted to. Default: the entity's registered base body.
    #[serde(default)]
    pub body: Option<String>,
    /// Measure at an EXISTING site instead (then `body`/`pos`/`rpy`/`quat` are refused).
    #[serde(default)]
    pub site: Option<String>,
    /// Mount offset in the body frame (m). Default [0, 0, 0].
    #[serde(default)]
    pub pos: Option<[f64; 3]>,
    /// Mount orientation, fixed-axis XYZ roll/pitch/yaw (rad). Default [0, 0, 0]. Exclusive with `quat`.
    #[serde(default)]
    pub rpy: Option<[f64; 3]>,
    /// Mount orientation as a quaternion [w, x, y, z] (normalised). Exclusive with `rpy`.
    #[serde(default)]
    pub quat: Option<[f64; 4]>,
    /// Frame the reading is stamped in. Default `<label>_link` (`imu_link`).
    #[serde(default)]
    pub frame_id: Option<String>,
    /// The endpoint's RELATIVE topic (inside the namespace). Default `imu/data`; `topics: {imu: /abs}`
    /// hardwires an absolute one and wins.
    #[serde(default = "default_topic")]
    pub topic: String,
    /// Topic hardwire by endpoint role: `{imu: /imu}`.
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
    /// Publish rate (Hz), snapped to the physics grid. Default 100.
    #[serde(default = "default_rate")]
    pub rate_hz: f64,
    /// Publish attitude. false → orientation_covariance[0] = -1. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub orientation: bool,
    /// Accelerometer white noise (m/s², 1σ per axis). Default 0.
    #[serde(default)]
    pub accel_stddev: f64,
    /// Gyro white noise (rad/s, 1σ per axis). Default 0.
    #[serde(default)]
    pub gyro_stddev: f64,
    /// Accelerometer bias (m/s², sensor frame). Default 0.
    #[serde(default)]
    pub accel_bias: [f64; 3],
    /// Gyro bias (rad/s, sensor frame): what makes integrated yaw drift. Default 0.
    #[serde(default)]
    pub gyro_bias: [f64; 3],
    /// Small-angle attitude noise about each axis (rad, 1σ). Default 0.
    #[serde(default)]
    pub orientation_stddev: f64,
    /// EXTRA attitude noise about the world vertical only (rad, 1σ). Default 0.
    #[serde(default)]
    pub yaw_stddev: f64,
    /// Skip producing while the transport reports no subscriber. Default true (the reading is
    /// pure; in-process consumers use the blackboard reader, which is not gated).
    #[serde(default = "crate::plugin::yes")]
    pub lazy: bool,
    /// Optional: the values it takes while degraded (noise, biases, orientation only).
    #[serde(default)]
    pub fault: Option<FaultBlock>,
}

/// The fault block, typed.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ImuFault {
    accel_stddev: Option<f64>,
    gyro_stddev: Option<f64>,
    accel_bias: Option<[f64; 3]>,
    gyro_bias: Option<[f64; 3]>,
    orientation_stddev: Option<f64>,
    yaw_stddev: Option<f64>,
    orientation: Option<bool>,
}

/// The values a reading uses every frame.
#[derive(Debug, Clone, PartialEq)]
pub struct ImuParams {
    /// Publish attitude.
    pub orientation: bool,
    /// m/s².
    pub accel_stddev: f64,
    /// rad/s.
    pub gyro_stddev: f64,
    /// m/s².
    pub accel_bias: [f64; 3],
    /// rad/s.
    pub gyro_bias: [f64; 3],
    /// rad.
    pub orientation_stddev: f64,
    /// rad.
    pub yaw_stddev: f64,
}

impl ImuConfig {
    /// Resolve and check the per-frame values.
    pub fn params(&self) -> Result<ImuParams, Vec<ConfigError>> {
        let mut e = Vec::new();
        finite_nonneg(&mut e, "accel_stddev", self.accel_stddev, "m/s²");
        finite_nonneg(&mut e, "gyro_stddev", self.gyro_stddev, "rad/s");
        finite_nonneg(&mut e, "orientation_stddev", self.orientation_stddev, "rad");
        finite_nonneg(&mut e, "yaw_stddev", self.yaw_stddev, "rad");
        for (k, b) in [("accel_bias", self.accel_bias), ("gyro_bias", self.gyro_bias)] {
            if b.iter().any(|x| !x.is_finite()) {
                e.push(ConfigError::new(k, format!("must be finite, got {b:?}")));
            }
        }
        if !e.is_empty() {
            return Err(e);
        }
        Ok(ImuParams {
            orientation: self.orientation,
            accel_stddev: self.accel_stddev,
            gyro_stddev: self.gyro_stddev,
            accel_bias: self.accel_bias,
            gyro_bias: self.gyro_bias,
            orientation_stddev: self.orientation_stddev,
            yaw_stddev: self.yaw_stddev,
        })
    }

    /// The degraded per-frame values, checked (errors at `fault.<key>`).
    pub fn fault_params(&self) -> Result<Option<ImuParams>, Vec<ConfigError>> {
        let overlay = |c: &mut ImuConfig, f: ImuFault| {
            overlay!(
                c,
                f;
                accel_stddev,
                gyro_stddev,
                accel_bias,
                gyro_bias,
                orientation_stddev,
                yaw_stddev,
                orientation
            );
        };
        fault_params(self, self.fault.as_ref(), &FAULT_ALLOWLIST, overlay, ImuConfig::params)
    }

    /// Mount orientation [w, x, y, z] from `quat` or `rpy` (identity when neither).
    pub fn mount_quat(&self) -> [f64; 4] {
        match (self.quat, self.rpy) {
            (Some(q), _) => wxyz(&quat(&q)),
            (None, Some([r, p, y])) => crate::math::quat_from_rpy(r, p, y),
            (None, None) => [1.0, 0.0, 0.0, 0.0],
        }
    }
}

impl ValidateConfig for ImuConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if self.site.is_some() {
            for (k, set) in [
                ("body", self.body.is_some()),
                ("pos", self.pos.is_some()),
                ("rpy", self.rpy.is_some()),
                ("quat", self.quat.is_some()),
            ] {
                if set {
                    e.push(ConfigError::new(
                        k,
                        format!("`{k}` and `site` are exclusive: an existing site already fixes where the IMU measures; drop `{k}`, or drop `site` to mount on a body"),
                    ));
                }
            }
            if self.site.as_deref().is_some_and(|s| s.trim().is_empty()) {
                e.push(ConfigError::new("site", "must name a site of the model"));
            }
        }
        if self.rpy.is_some() && self.quat.is_some() {
            e.push(ConfigError::new(
                "quat",
                "`rpy` and `quat` are exclusive: give the mount orientation one way",
            ));
        }
        if let Some(q) = self.quat {
            let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
            if !(n.is_finite() && n > 1e-9) {
                e.push(ConfigError::new(
                    "quat",
                    format!("must be a non-zero quaternion [w, x, y, z], got {q:?}"),
                ));
            }
        }
        for (k, v) in [("pos", self.pos.map(|p| p.to_vec())), ("rpy", self.rpy.map(|p| p.to_vec()))]
        {
            if v.as_ref().is_some_and(|v| v.iter().any(|x| !x.is_finite())) {
                e.push(ConfigError::new(k, "must be finite"));
            }
        }
        e.extend(crate::plugin::check_rate("rate_hz", self.rate_hz));
        if self.frame_id.as_deref().is_some_and(|f| f.trim().is_empty()) {
            e.push(ConfigError::new("frame_id", "must not be empty (omit it for `<label>_link`)"));
        }
        if self.topic.trim().is_empty() {
            e.push(ConfigError::new(
                "topic",
                "must be a topic name (relative to the namespace, e.g. `imu/data`)",
            ));
        }
        e.extend(crate::plugins::shared::check_topics(&self.topics, &["imu"]));
        if let Err(es) = self.params() {
            e.extend(es);
        } else if let Err(es) = self.fault_params() {
            e.extend(es);
        }
        e
    }
}

/// Reads an IMU sample on demand (blackboard `imu:<address>`; the endpoint uses the same one).
/// Two reads in one step return identical values: the noise is keyed by sim time.
#[derive(Debug, Clone)]
pub struct ImuReader {
    frame_id: String,
    rng_name: String,
    gyro_adr: usize,
    accel_adr: usize,
    quat_adr: usize,
    /// Site id, and `Some(gravity)` when the site sits on a static body (see [`ImuReader::read`]).
    site_id: usize,
    static_gravity: Option<[f64; 3]>,
    nominal: ImuParams,
    degraded: Option<ImuParams>,
    fault: FaultSwitch,
}

impl ImuReader {
    /// The per-frame values in force.
    pub fn active(&self) -> &ImuParams {
        match (&self.degraded, self.fault.is_on()) {
            (Some(d), true) => d,
            _ => &self.nominal,
        }
    }

    /// Frame the reading is stamped in.
    pub fn frame_id(&self) -> &str {
        &self.frame_id
    }

    /// Assemble a reading from the current state (and draw its noise).
    pub fn read(&self, ctx: &SimContext) -> Result<Imu, String> {
        let p = self.active();
        let sd = ctx.data().sensordata();
        let gyro = [sd[self.gyro_adr], sd[self.gyro_adr + 1], sd[self.gyro_adr + 2]];
        // Measured: MuJoCo 3.17's accelerometer reads 0 on a site of a body welded to the world
        // (or of the world body itself). Such a mount does not accelerate, so its specific force
        // is -gravity in the site frame: R^T (-g).
        let acc = match self.static_gravity {
            Some(g) => {
                let r = ctx.data().site_xmat()[self.site_id];
                [0, 1, 2].map(|i| -(r[i] * g[0] + r[3 + i] * g[1] + r[6 + i] * g[2]))
            }
            None => [sd[self.accel_adr], sd[self.accel_adr + 1], sd[self.accel_adr + 2]],
        };
        let a = self.quat_adr;
        let q = quat(&[sd[a], sd[a + 1], sd[a + 2], sd[a + 3]]);
        let draws = p.gyro_stddev > 0.0
            || p.accel_stddev > 0.0
            || (p.orientation && (p.orientation_stddev > 0.0 || p.yaw_stddev > 0.0));
        let mut rng = if draws {
            Some(ctx.rng_for(&self.rng_name).map_err(|e| e.to_string())?)
        } else {
            None
        };
        let mut n = |s: f64| rng.as_mut().map(|r| r.normal(s)).unwrap_or(0.0);
        let mut angular = [0.0; 3];
        let mut linear = [0.0; 3];
        for i in 0..3 {
            angular[i] = gyro[i] + p.gyro_bias[i] + n(p.gyro_stddev);
        }
        for i in 0..3 {
            linear[i] = acc[i] + p.accel_bias[i] + n(p.accel_stddev);
        }
        let mut out = Imu {
            stamp: ctx.sim_time(),
            frame_id: self.frame_id.clone(),
            angular_velocity: angular,
            linear_acceleration: linear,
            ..Default::default()
        };
        let so2 = p.orientation_stddev * p.orientation_stddev;
        if p.orientation {
            let small = [n(p.orientation_stddev), n(p.orientation_stddev), n(p.orientation_stddev)];
            let yaw = n(p.yaw_stddev);
            // A world-frame yaw error, then a small body-frame tilt error (a rotation vector).
            let qn = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), yaw)
                * q
                * UnitQuaternion::from_scaled_axis(vec3(&small));
            out.orientation = xyzw(&qn);
            out.orientation_covariance = diag(so2, so2, so2 + p.yaw_stddev * p.yaw_stddev);
        } else {
            out.orientation = [0.0, 0.0, 0.0, 1.0];
            out.orientation_covariance[0] = -1.0;
        }
        let g2 = p.gyro_stddev * p.gyro_stddev;
        let a2 = p.accel_stddev * p.accel_stddev;
        out.angular_velocity_covariance = diag(g2, g2, g2);
        out.linear_acceleration_covariance = diag(a2, a2, a2);
        Ok(out)
    }
}

fn diag(a: f64, b: f64, c: f64) -> [f64; 9] {
    [a, 0.0, 0.0, 0.0, b, 0.0, 0.0, 0.0, c]
}

/// Blackboard key of an imu's reader.
pub fn reader_key(address: &str) -> String {
    format!("imu:{address}")
}

/// The `imu` plugin.
pub struct ImuPlugin {
    cfg: ImuConfig,
    label: String,
    address: String,
    owner: Option<String>,
    /// Site name in the spec/model (prefixed), fixed in build.
    site_name: String,
    sensor_base: String,
    nominal: ImuParams,
    degraded: Option<ImuParams>,
    fault: FaultSwitch,
    /// The fault switch's SetBool endpoint (with a `fault:` block).
    fault_service: Option<sensor_fault::FaultService>,
    reader: Option<ImuReader>,
    ep: EndpointId,
    tf_ep: EndpointId,
    tf: Transform,
}

/// Registry entry: a custom constructor, because a top-level imu without `body`/`site` is refused
/// at load (its refusal depends on where the entry sits, not only on its config).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "imu",
        "Strap-down IMU at a site: angular rate, specific force (gravity included) and attitude, with seeded noise and bias.",
        ImuConfig;
        create
    )
}

/// Typed config → validated → top-level check → plugin.
pub fn create(v: &Value, args: &PluginArgs) -> Result<Box<dyn Plugin>, Vec<ConfigError>> {
    let cfg: ImuConfig =
        typed_config(v).map_err(|e| crate::key_ranges::key_ranges::<ImuConfig>(v, e))?;
    let mut e = cfg.validate();
    if args.owner.is_none() && cfg.body.is_none() && cfg.site.is_none() {
        e.push(ConfigError::new(
            "",
            "an imu at the top of a document has nothing to measure (requires_owner): nest it under the entity it is bolted to, or name the `body` (or `site`) it measures",
        ));
    }
    if !e.is_empty() {
        return Err(e);
    }
    Ok(Box::new(ImuPlugin::new(cfg, args)))
}

impl ImuPlugin {
    /// Construct from a validated config.
    pub fn new(cfg: ImuConfig, args: &PluginArgs) -> Self {
        let nominal = cfg.params().expect("validated");
        let degraded = cfg.fault_params().expect("validated");
        let sensor_base = format!("roqsim_imu_{}", args.address.replace(['.', '/', ' '], "_"));
        ImuPlugin {
            label: args.label.clone(),
            address: args.address.clone(),
            owner: args.owner.clone(),
            site_name: String::new(),
            sensor_base,
            nominal,
            degraded,
            fault: FaultSwitch::default(),
            fault_service: None,
            reader: None,
            ep: 0,
            tf_ep: 0,
            tf: Transform::default(),
            cfg,
        }
    }

    /// The reader (after configure).
    pub fn reader(&self) -> Option<&ImuReader> {
        self.reader.as_ref()
    }
}

fn spec_site_names(spec: &MjSpec, prefix: &str) -> Vec<String> {
    spec.site_iter()
        .map(|s| s.name().to_string())
        .filter(|n| !n.is_empty() && n.starts_with(prefix))
        .map(|n| n[prefix.len()..].to_string())
        .collect()
}

fn spec_body_names(spec: &MjSpec, prefix: &str) -> Vec<String> {
    spec.body_iter()
        .map(|b| b.name().to_string())
        .filter(|n| !n.is_empty() && n != "world" && n.starts_with(prefix))
        .map(|n| n[prefix.len()..].to_string())
        .collect()
}

impl Plugin for ImuPlugin {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD | Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        let ent = b.ctx.entities.resolve_owner(self.owner.as_deref()).cloned();
        let prefix = ent.as_ref().map(|e| e.prefix.clone()).unwrap_or_default();
        let whose = match &ent {
            Some(e) => format!("entity `{}` (prefix `{}`)", e.name, e.prefix),
            None => "the model".into(),
        };
        if let Some(site) = &self.cfg.site {
            let full = format!("{prefix}{site}");
            if spec.site(&full).is_none() {
                return Err(format!(
                    "site: no site `{site}` in {whose}; its sites: [{}]",
                    spec_site_names(spec, &prefix).join(", ")
                ));
            }
            self.site_name = full;
        } else {
            let body = match (&self.cfg.body, &ent) {
                (Some(bn), _) => format!("{prefix}{bn}"),
                (None, Some(e)) => e.body.clone(),
                (None, None) => {
                    return Err(
                        "body: an imu at the top of a document needs `body` or `site`".into()
                    )
                }
            };
            let name = format!("{}_site", self.sensor_base);
            let pos = self.cfg.pos.unwrap_or([0.0; 3]);
            let quat = self.cfg.mount_quat();
            let Some(bd) = spec.body_mut(&body) else {
                let shown = self.cfg.body.clone().unwrap_or_else(|| body.clone());
                return Err(format!(
                    "body: no body `{shown}` in {whose}; its bodies: [{}]",
                    spec_body_names(spec, &prefix).join(", ")
                ));
            };
            bd.add_site()
                .with_name(&name)
                .with_pos(pos)
                .with_quat(quat)
                .with_size([0.005, 0.005, 0.005])
                .with_group(4);
            self.site_name = name;
        }
        for (suffix, ty) in [
            ("gyro", mjtSensor::mjSENS_GYRO),
            ("accel", mjtSensor::mjSENS_ACCELEROMETER),
            ("quat", mjtSensor::mjSENS_FRAMEQUAT),
        ] {
            spec.add_sensor()
                .with_name(&format!("{}_{suffix}", self.sensor_base))
                .with_type(ty)
                .with_objtype(MjtObjBase::mjOBJ_SITE)
                .with_objname(&self.site_name);
        }
        Ok(())
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let ent = ctx.entities.resolve_owner(self.owner.as_deref()).cloned();
        let prefix = ent.as_ref().map(|e| e.prefix.clone()).unwrap_or_default();
        let m = ctx.model();
        let adr = |suffix: &str| -> Result<usize, String> {
            let name = format!("{}_{suffix}", self.sensor_base);
            let id = m
                .name_to_id(MjtObjBase::mjOBJ_SENSOR, &name)
                .ok_or_else(|| format!("sensor `{name}` missing after compile"))?;
            Ok(m.sensor_adr()[id] as usize)
        };
        let (gyro_adr, accel_adr, quat_adr) = (adr("gyro")?, adr("accel")?, adr("quat")?);
        let site_id = m
            .name_to_id(MjtObjBase::mjOBJ_SITE, &self.site_name)
            .ok_or_else(|| format!("site `{}` missing after compile", self.site_name))?;
        let frame_id = self.cfg.frame_id.clone().unwrap_or_else(|| format!("{}_link", self.label));

        // Static mount transform: the site's body -> frame_id, from the model (site_pos/site_quat).
        let body_id = m.site_bodyid()[site_id] as usize;
        let parent = if body_id == 0 {
            "world".to_string()
        } else {
            unprefixed(m.id_to_name(MjtObjBase::mjOBJ_BODY, body_id).unwrap_or(""), &prefix)
                .to_string()
        };
        let q = m.site_quat()[site_id];
        self.tf = Transform {
            parent,
            child: frame_id.clone(),
            translation: m.site_pos()[site_id],
            rotation: xyzw(&quat(&q)),
        };

        let reader = ImuReader {
            frame_id: frame_id.clone(),
            rng_name: reader_key(&self.address),
            gyro_adr,
            accel_adr,
            quat_adr,
            site_id,
            static_gravity: (m.body_weldid()[body_id] == 0).then(|| m.ffi().opt.gravity),
            nominal: self.nominal.clone(),
            degraded: self.degraded.clone(),
            fault: self.fault.clone(),
        };

        let ns = self
            .cfg
            .namespace
            .clone()
            .or_else(|| ent.as_ref().map(|e| e.namespace.clone()))
            .unwrap_or_default();
        let owner = ent.as_ref().map(|e| e.name.clone()).or(self.owner.clone());
        let topic = self.cfg.topics.get("imu").cloned().unwrap_or_else(|| self.cfg.topic.clone());
        let ep = Endpoint::out("imu")
            .owner(owner.as_deref())
            .namespace(&ns)
            .frame_prefix(&frame_prefix(&ns))
            .rate(self.cfg.rate_hz)
            .lazy(self.cfg.lazy)
            .hint("ros2", "type", "sensor_msgs/msg/Imu")
            .hint("ros2", "qos", "sensor_data")
            .hint("ros2", "topic", topic)
            .hint("ros2", "frame_id", frame_id);
        self.ep = ctx.interface.add(ep);
        let keys = crate::context::FrameKeys::new(
            "frame_id",
            "Give each IMU its own `frame_id:` (or its carrier a `namespace:`).",
        );
        crate::spawn::claim_tf(
            ctx,
            &crate::context::Claimant::new(&self.address, "imu"),
            crate::context::TfRoute::Static,
            &frame_prefix(&ns),
            std::slice::from_ref(&self.tf),
            &keys,
        )?;
        let tf_ep = Endpoint::out("tf_static")
            .owner(owner.as_deref())
            .namespace(&ns)
            .frame_prefix(&frame_prefix(&ns))
            .hint("ros2", "tf", "static");
        self.tf_ep = ctx.interface.add(tf_ep);

        if self.degraded.is_some() {
            ctx.blackboard.set(sensor_fault::switch_key(&self.address), self.fault.clone());
            let same = self.degraded.as_ref() == Some(&self.nominal);
            self.fault_service = Some(sensor_fault::FaultService::register(
                ctx,
                &self.address,
                owner.as_deref(),
                self.fault.clone(),
                same,
            ));
        }
        ctx.blackboard.set(reader_key(&self.address), reader.clone());
        self.reader = Some(reader);
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.fault.set(false);
        if let Some(f) = &mut self.fault_service {
            f.reset();
        }
        ctx.interface.publish(self.tf_ep, ctx.tick, Payload::Transforms(vec![self.tf.clone()]));
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if let Some(f) = &mut self.fault_service {
            f.poll(ctx);
        }
        if !ctx.interface.is_due(self.ep, ctx.tick) {
            return Ok(());
        }
        let r = self.reader.as_ref().ok_or("imu: post_step before configure")?.read(ctx)?;
        ctx.interface.publish(self.ep, ctx.tick, Payload::Imu(r));
        Ok(())
    }
}
