//! `range_sensor`: the ray-grid range sensor (ToF, IR proximity, ultrasonic, cliff) by batched
//! ray casting through the one raycast seam ([`crate::mujoco::raycast::RayBatch::cast`]).
//!
//! Geometry. The site's +x is the boresight. `h_rays` × `v_rays` rays span `h_fov` × `v_fov`
//! symmetrically about it (inclusive ends; one ray along the boresight where a count is 1): ray
//! `(row j, column i)` has azimuth `-h_fov/2 + i·h_fov/(h_rays−1)` about the site's z and elevation
//! `-v_fov/2 + j·v_fov/(v_rays−1)` towards the site's +z. Directions are rotated by the site's
//! world orientation on every reading, so the sensor looks where its body is.
//!
//! Each ray is classified exactly as the 2D lidar does it (the same detection limits, REP 117
//! specials, noise, resolution and dropout; the config checks are the lidar's), and the published
//! `sensor_msgs/Range.range` is the nearest measured return of the grid — the nearest object in
//! the cone, which is what the message means. With no measured ray it is `too_close` where any ray
//! was too close, else `no_return` (+inf by REP 117: what a cliff sensor over a hole reads).
//! `variance` is the range sigma squared at the published distance (0 for a noiseless sensor,
//! which the message reads as "unknown"). Every ray's value, in row order, stays readable
//! in-process on the blackboard (`range_sensor:<address>`, a [`RangeReader`]).
//!
//! Endpoints: `range` (out, `sensor_msgs/msg/Range`, QoS `sensor_data`) at `rate_hz`, renamed with
//! `topics: {range: ...}`; with `emit_static_tf`, `tf_static` (`tf_parent -> frame_id` measured
//! from the compiled model, published at every reset). Noise draws come from
//! `ctx.rng_for("range_sensor:<address>")`.

use std::collections::BTreeMap;

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::Range;
use crate::context::{Endpoint, EndpointId, Payload, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::mujoco::frames::resolve_name;
use crate::mujoco::raycast::RayBatch;
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugins::shared::ray_mount::{site_dirs, MountSpec, MountTf};
use crate::plugins::shared::scan::{ray_keys_of, RangeValue, RayKeys, ScanParams, Special};
use crate::plugins::shared::sensor_keys::{check_frame_and_topics, check_site};
use crate::spawn::frame_prefix;

fn default_rate() -> f64 {
    62.0
}
fn default_range_min() -> f64 {
    0.0001
}
fn default_max_range() -> f64 {
    0.15
}
fn default_h_fov() -> f64 {
    0.0873
}
fn default_one() -> u32 {
    1
}
fn default_too_close() -> RangeValue {
    RangeValue::Word("-inf".into())
}
fn default_no_return() -> RangeValue {
    RangeValue::Word("+inf".into())
}

/// Most rays one range sensor's grid may have (a 32 × 32 grid is already a depth camera's job).
pub const MAX_GRID_RAYS: u32 = 1024;

/// What the sensor emits (sensor_msgs/Range's `radiation_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
pub enum Radiation {
    /// Infrared (IR proximity, ToF, cliff sensors): `1`.
    #[default]
    Infrared,
    /// Ultrasound (sonar): `0`.
    Ultrasound,
}

/// Config of `range_sensor`. Names (`site`, `exclude_body`, `tf_parent`) are the model's own,
/// unprefixed: they resolve under the prefix of the entity the entry is nested under.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RangeSensorConfig {
    /// Transport scope of the endpoints. Default: the owning entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// REQUIRED: the site the rays are cast from; its +x is the boresight.
    #[serde(default)]
    pub site: Option<String>,
    /// Frame the reading is stamped in. Default: the site's name.
    #[serde(default)]
    pub frame_id: Option<String>,
    /// Reading rate (Hz), snapped to the physics grid. Default 62 (the Create 3's).
    #[serde(default = "default_rate")]
    pub rate_hz: f64,
    /// Body whose geoms the rays ignore: the housing or shell the sensor looks out through.
    #[serde(default)]
    pub exclude_body: Option<String>,
    /// Percentage of rays (per ray, per reading) dropped to no return, 0..100. Default 0.
    #[serde(default)]
    pub dropout_percent: f64,
    /// Publish the static mount transform `tf_parent -> frame_id`. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub emit_static_tf: bool,
    /// Parent frame of the static transform (a body or site of the entity). Default: the root
    /// body of the carrying entity, else the resolved `exclude_body`, else `world`.
    #[serde(default)]
    pub tf_parent: Option<String>,
    /// Skip casting while the transport reports no subscriber. Default false.
    #[serde(default)]
    pub lazy: bool,
    /// Topic rename by endpoint role: `{range: cliff_front_left}` (relative) or `{range: /x}`.
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
    /// Rays across the horizontal field of view (≥ 1). Default 1.
    #[serde(default = "default_one")]
    pub h_rays: u32,
    /// Rays down the vertical field of view (≥ 1). Default 1.
    #[serde(default = "default_one")]
    pub v_rays: u32,
    /// Horizontal field of view (rad), published as the message's `field_of_view`. Default 0.0873
    /// (5°). With `h_rays: 1` the one ray runs along the boresight.
    #[serde(default = "default_h_fov")]
    pub h_fov: f64,
    /// Vertical field of view (rad). Default 0; must be > 0 when `v_rays` > 1.
    #[serde(default)]
    pub v_fov: f64,
    /// Header `min_range` (m). Default 0.0001.
    #[serde(default = "default_range_min")]
    pub range_min: f64,
    /// Header `max_range` (m). Default 0.15.
    #[serde(default = "default_max_range")]
    pub max_range: f64,
    /// Nearest distance measured (m). Default: `range_min`.
    #[serde(default)]
    pub detection_min: Option<f64>,
    /// Farthest distance measured (m). Default: `max_range`.
    #[serde(default)]
    pub detection_max: Option<f64>,
    /// Published for a too-close hit: `-inf` (default), `+inf`, `nan`, `raw` or a number (m).
    #[serde(default = "default_too_close")]
    pub too_close: RangeValue,
    /// Published where nothing is measured: `+inf` (default), `nan` or a number (m).
    #[serde(default = "default_no_return")]
    pub no_return: RangeValue,
    /// Gaussian range sigma (m). Default 0.
    #[serde(default)]
    pub range_stddev: f64,
    /// Sigma as a fraction of the distance at and beyond `range_stddev_relative_from`. Default 0.
    #[serde(default)]
    pub range_stddev_relative: f64,
    /// Distance (m) from which the relative sigma applies. Default 0.
    #[serde(default)]
    pub range_stddev_relative_from: f64,
    /// Quantisation step of a published distance (m); 0 = continuous.
    #[serde(default)]
    pub range_resolution: f64,
    /// `infrared` (default) or `ultrasound`: the message's `radiation_type`.
    #[serde(default)]
    pub radiation_type: Radiation,
    /// Refused: a fan's layout key; the layout is the grid's (declare a `lidar` for a fan).
    #[serde(default)]
    #[schemars(skip)]
    pub rays: Option<serde_norway::Value>,
    /// Refused (a fan's layout key).
    #[serde(default)]
    #[schemars(skip)]
    pub angle_min: Option<serde_norway::Value>,
    /// Refused (a fan's layout key).
    #[serde(default)]
    #[schemars(skip)]
    pub angle_max: Option<serde_norway::Value>,
}

impl RangeSensorConfig {
    /// The lidar config carrying the shared per-ray keys, so both sensors check and apply them
    /// identically.
    fn ray_keys(&self) -> RayKeys {
        ray_keys_of!(self)
    }

    /// The resolved per-ray values.
    pub fn params(&self) -> Result<ScanParams, Vec<ConfigError>> {
        self.ray_keys().params()
    }

    /// Ray directions in the site frame, row by row (elevation outer, azimuth inner).
    pub fn grid(&self) -> Vec<[f64; 3]> {
        let steps = |n: u32, fov: f64| -> Vec<f64> {
            if n <= 1 {
                vec![0.0]
            } else {
                (0..n).map(|i| -fov / 2.0 + fov * i as f64 / (n - 1) as f64).collect()
            }
        };
        let az = steps(self.h_rays, self.h_fov);
        let el = steps(self.v_rays, self.v_fov);
        let mut out = Vec::with_capacity(az.len() * el.len());
        for e in &el {
            let (se, ce) = e.sin_cos();
            for a in &az {
                let (sa, ca) = a.sin_cos();
                out.push([ce * ca, ce * sa, se]);
            }
        }
        out
    }
}

impl ValidateConfig for RangeSensorConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        for (k, v) in
            [("rays", &self.rays), ("angle_min", &self.angle_min), ("angle_max", &self.angle_max)]
        {
            if v.is_some() {
                e.push(ConfigError::new(
                    k,
                    "is a fan's layout key and is refused here: a range sensor's layout is its grid (h_rays, v_rays, h_fov, v_fov about the site's +x); a world that wants a fan declares a `lidar`",
                ));
            }
        }
        e.extend(check_site(
            &self.site,
            "required: the site the rays are cast from (its +x is the boresight)",
        ));
        for (k, n) in [("h_rays", self.h_rays), ("v_rays", self.v_rays)] {
            if n < 1 {
                e.push(ConfigError::new(k, format!("must be >= 1, got {n}")));
            }
        }
        if self.h_rays.saturating_mul(self.v_rays) > MAX_GRID_RAYS {
            e.push(ConfigError::new(
                "h_rays",
                format!("h_rays x v_rays = {} exceeds {MAX_GRID_RAYS}: a grid that dense is a depth camera, not a range sensor", self.h_rays.saturating_mul(self.v_rays)),
            ));
        }
        for (k, fov, n) in [("h_fov", self.h_fov, self.h_rays), ("v_fov", self.v_fov, self.v_rays)]
        {
            if !(fov.is_finite() && (0.0..std::f64::consts::PI).contains(&fov)) {
                e.push(ConfigError::new(k, format!("must be within [0, π) (rad), got {fov}")));
            } else if n > 1 && fov == 0.0 {
                e.push(ConfigError::new(
                    k,
                    format!("is 0 with {n} rays: every ray would share the boresight; give the field of view (rad) or set the ray count to 1"),
                ));
            }
        }
        e.extend(check_frame_and_topics(
            &self.frame_id,
            "omit it to use the site's name",
            &self.topics,
            &["range"],
        ));
        if let Err(es) = self.params() {
            e.extend(es);
        }
        e
    }
}

/// One reading: the published message and every ray's value (row order).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RangeReading {
    /// What the `range` endpoint published.
    pub range: Range,
    /// Each ray's value (m or a REP 117 special), elevation rows concatenated.
    pub rays: Vec<f32>,
}

/// In-process access to a range sensor's latest reading (blackboard `range_sensor:<address>`).
pub type RangeReader = crate::plugins::shared::latest::Latest<RangeReading>;

/// Blackboard key of a range sensor's reader.
pub fn reader_key(address: &str) -> String {
    format!("range_sensor:{address}")
}

/// The registry entry.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "range_sensor",
        "Ray-grid range sensor (ToF / IR proximity / ultrasonic / cliff): the nearest return of an h_rays x v_rays grid about a site's +x as sensor_msgs/Range (REP 117 specials, the lidar's noise).",
        RangeSensorConfig,
        RangeSensor
    )
}

/// The `range_sensor` plugin.
pub struct RangeSensor {
    cfg: RangeSensorConfig,
    address: String,
    owner: Option<String>,
    params: ScanParams,
    rng_name: String,
    grid: Vec<[f64; 3]>,
    site_id: usize,
    exclude_id: Option<usize>,
    frame_id: String,
    batch: RayBatch,
    ep: EndpointId,
    mount: Option<MountTf>,
    reader: RangeReader,
}

impl RangeSensor {
    /// Construct from a validated config.
    pub fn new(cfg: RangeSensorConfig, args: &PluginArgs) -> Self {
        let params = cfg.params().expect("validated");
        let grid = cfg.grid();
        RangeSensor {
            address: args.address.clone(),
            owner: args.owner.clone(),
            params,
            rng_name: format!("range_sensor:{}", args.address),
            batch: RayBatch::new(grid.len()),
            grid,
            site_id: 0,
            exclude_id: None,
            frame_id: String::new(),
            ep: 0,
            mount: None,
            reader: RangeReader::default(),
            cfg,
        }
    }

    /// Cast the grid now and return the reading.
    pub fn read(&mut self, ctx: &mut SimContext) -> Result<RangeReading, String> {
        let p = &self.params;
        let (origin, m) = {
            let d = ctx.data();
            (d.site_xpos()[self.site_id], d.site_xmat()[self.site_id])
        };
        site_dirs(&mut self.batch, &m, &self.grid);
        self.batch.cast_within(
            ctx.data_mut(),
            origin,
            self.exclude_id,
            None,
            true,
            p.detection_max,
        );
        let mut rng = if p.draws() {
            Some(ctx.rng_for(&self.rng_name).map_err(|e| e.to_string())?)
        } else {
            None
        };
        let mut rays = Vec::with_capacity(self.batch.len());
        // (published value, true distance) of the nearest measured ray; and of the nearest too-close
        let mut nearest: Option<(f32, f64)> = None;
        let mut close: Option<(f32, f64)> = None;
        for i in 0..self.batch.len() {
            if p.dropout > 0.0 {
                if let Some(r) = rng.as_mut() {
                    if r.uniform() < p.dropout {
                        rays.push(p.no_return);
                        continue;
                    }
                }
            }
            let d = self.batch.dist()[i];
            let v = if d < 0.0 || d > p.detection_max {
                p.no_return
            } else if d < p.detection_min {
                let v = match p.too_close {
                    Special::Value(v) => v,
                    Special::Raw => p.noisy(d, rng.as_mut()),
                };
                if close.is_none_or(|(_, cd)| d < cd) {
                    close = Some((v, d));
                }
                v
            } else {
                let v = p.noisy(d, rng.as_mut());
                if nearest.is_none_or(|(nv, _)| v < nv) {
                    nearest = Some((v, d));
                }
                v
            };
            rays.push(v);
        }
        let (range, sigma) = match (nearest, close) {
            (Some((v, d)), _) => (v, p.sigma_at(d)),
            (None, Some((v, d))) => {
                (v, if matches!(p.too_close, Special::Raw) { p.sigma_at(d) } else { 0.0 })
            }
            (None, None) => (p.no_return, 0.0),
        };
        Ok(RangeReading {
            range: Range {
                stamp: ctx.sim_time(),
                frame_id: self.frame_id.clone(),
                radiation_type: match self.cfg.radiation_type {
                    Radiation::Ultrasound => 0,
                    Radiation::Infrared => 1,
                },
                field_of_view: self.cfg.h_fov.max(self.cfg.v_fov) as f32,
                min_range: p.range_min as f32,
                max_range: p.max_range as f32,
                range,
                variance: (sigma * sigma) as f32,
            },
            rays,
        })
    }
}

impl Plugin for RangeSensor {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let ent = ctx.entities.resolve_owner(self.owner.as_deref()).cloned();
        let prefix = ent.as_ref().map(|e| e.prefix.clone()).unwrap_or_default();
        let site = self.cfg.site.clone().unwrap_or_default();
        self.site_id = resolve_name(
            ctx.model(),
            MjtObjBase::mjOBJ_SITE,
            "site",
            &site,
            &prefix,
            ent.as_ref(),
        )?;
        if let Some(b) = &self.cfg.exclude_body {
            self.exclude_id = Some(resolve_name(
                ctx.model(),
                MjtObjBase::mjOBJ_BODY,
                "exclude_body",
                b,
                &prefix,
                ent.as_ref(),
            )?);
        }
        self.frame_id = self.cfg.frame_id.clone().unwrap_or_else(|| site.clone());
        let ns = self
            .cfg
            .namespace
            .clone()
            .or_else(|| ent.as_ref().map(|e| e.namespace.clone()))
            .unwrap_or_default();
        let owner = ent.as_ref().map(|e| e.name.as_str()).or(self.owner.as_deref());
        let mut ep = Endpoint::out("range")
            .owner(owner)
            .namespace(&ns)
            .frame_prefix(&frame_prefix(&ns))
            .rate(self.params.rate_hz)
            .lazy(self.cfg.lazy)
            .hint("ros2", "type", "sensor_msgs/msg/Range")
            .hint("ros2", "qos", "sensor_data")
            .hint("ros2", "frame_id", self.frame_id.clone());
        if let Some(t) = self.cfg.topics.get("range") {
            ep = ep.hint("ros2", "topic", t.clone());
        }
        self.ep = ctx.interface.add(ep);

        if self.cfg.emit_static_tf {
            self.mount = Some(MountTf::register(
                ctx,
                &MountSpec {
                    tf_parent: self.cfg.tf_parent.as_deref(),
                    exclude: self.exclude_id.zip(self.cfg.exclude_body.as_deref()),
                    ent: ent.as_ref(),
                    prefix: &prefix,
                    site_id: self.site_id,
                    frame_id: &self.frame_id,
                    owner,
                    namespace: &ns,
                    claimant: crate::context::Claimant::new(&self.address, "range_sensor"),
                },
            )?);
        }
        ctx.blackboard.set(reader_key(&self.address), self.reader.clone());
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.reader.clear();
        if let Some(m) = &self.mount {
            m.announce(ctx);
        }
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if !ctx.interface.is_due(self.ep, ctx.tick) {
            return Ok(());
        }
        let r = self.read(ctx)?;
        ctx.interface.publish(self.ep, ctx.tick, Payload::Range(r.range.clone()));
        self.reader.set(r);
        Ok(())
    }
}
