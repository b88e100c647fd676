//! What the 3D lidars (`livox_mid360`, `seyond_robin_w1g`) share: the azimuth × elevation ray
//! pattern and its checks ([`CloudPattern`]), what an unmeasured ray publishes ([`Unmeasured`]),
//! and the scanner ([`CloudScanner`]): resolved at configure (site, housing, frame, the `points`
//! PointCloud2 endpoint, the static mount transform), casting one scan through the raycast seam
//! and turning it into a [`PointCloud`] in the sensor frame.
//!
//! Pattern. `horizontal_rays` azimuths × `vertical_rays` elevations from the site (its +x is
//! azimuth 0, its +z up). Azimuths span `h_fov_min..h_fov_max`; a full turn wraps (no sample at
//! 2π, none repeated), a partial span includes both ends. Elevations span `v_fov_min..v_fov_max`
//! with both ends included. Ray order is azimuth-major (a column of elevations per azimuth).
//! Directions are rotated by the site's world orientation every scan.
//!
//! A ray's contribution: a hit at or beyond `range_min` (the blind zone) and within `max_range`
//! is a point at its (noisy) distance along the ray; a nearer hit (`too_close`) and a ray with
//! nothing within `max_range` (`no_return`) are dropped (`drop`) or put at the sensor origin
//! (`origin`). Noise is the 2D lidar's ([`ScanParams`]), drawn from `ctx.rng_for(<rng name>)`.

use std::collections::BTreeMap;
use std::f64::consts::TAU;

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::PointCloud;
use crate::context::{Endpoint, EndpointId, Payload, SimContext};
use crate::error::ConfigError;
use crate::mujoco::frames::resolve_name;
use crate::mujoco::raycast::RayBatch;
use crate::plugins::shared::latest::Latest;
use crate::plugins::shared::ray_mount::{site_dirs, MountSpec, MountTf};
use crate::plugins::shared::scan::ScanParams;
use crate::spawn::frame_prefix;

/// Most rays one scan may cast (a 0.1° × 0.1° full-dome pattern is ~2 M; that is no real device).
pub const MAX_SCAN_RAYS: u64 = 1_000_000;

/// In-process access to a 3D lidar's latest cloud.
pub type CloudReader = Latest<PointCloud>;

/// What a ray without a measured return publishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Unmeasured {
    /// Left out of the cloud.
    Drop,
    /// A point at (0, 0, 0) of the sensor frame.
    Origin,
}

/// The ray pattern of a 3D lidar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CloudPattern {
    /// Azimuth samples.
    pub horizontal_rays: u32,
    /// Elevation samples (both ends included).
    pub vertical_rays: u32,
    /// First azimuth (rad).
    pub h_fov_min: f64,
    /// Last azimuth (rad).
    pub h_fov_max: f64,
    /// Lowest elevation (rad).
    pub v_fov_min: f64,
    /// Highest elevation (rad).
    pub v_fov_max: f64,
}

impl CloudPattern {
    /// True when the azimuth span is a full turn (then it wraps).
    pub fn full_turn(&self) -> bool {
        (self.h_fov_max - self.h_fov_min - TAU).abs() < 1e-6
    }

    /// Unit ray directions in the site frame, azimuth-major.
    pub fn directions(&self) -> Vec<[f64; 3]> {
        let h = self.horizontal_rays as usize;
        let v = self.vertical_rays as usize;
        let span = self.h_fov_max - self.h_fov_min;
        let az_step = if self.full_turn() {
            span / h as f64
        } else if h > 1 {
            span / (h - 1) as f64
        } else {
            0.0
        };
        let el_step = if v > 1 { (self.v_fov_max - self.v_fov_min) / (v - 1) as f64 } else { 0.0 };
        let mut out = Vec::with_capacity(h * v);
        for i in 0..h {
            let (sa, ca) = (self.h_fov_min + az_step * i as f64).sin_cos();
            for j in 0..v {
                let (se, ce) = (self.v_fov_min + el_step * j as f64).sin_cos();
                out.push([ce * ca, ce * sa, se]);
            }
        }
        out
    }

    /// The pattern keys' checks.
    pub fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if self.horizontal_rays < 1 {
            e.push(ConfigError::new("horizontal_rays", "must be >= 1, got 0"));
        }
        if self.vertical_rays < 2 {
            e.push(ConfigError::new(
                "vertical_rays",
                format!(
                    "must be >= 2, got {}: one elevation is a 2D scan (declare a `lidar`)",
                    self.vertical_rays
                ),
            ));
        }
        let n = self.horizontal_rays as u64 * self.vertical_rays as u64;
        if n > MAX_SCAN_RAYS {
            e.push(ConfigError::new(
                "horizontal_rays",
                format!("horizontal_rays x vertical_rays = {n} exceeds {MAX_SCAN_RAYS} rays per scan: no real device casts that many"),
            ));
        }
        for (k, v) in [
            ("h_fov_min", self.h_fov_min),
            ("h_fov_max", self.h_fov_max),
            ("v_fov_min", self.v_fov_min),
            ("v_fov_max", self.v_fov_max),
        ] {
            if !v.is_finite() {
                e.push(ConfigError::new(k, format!("must be finite (rad), got {v}")));
            }
        }
        let span = self.h_fov_max - self.h_fov_min;
        if span <= 0.0 {
            e.push(ConfigError::new(
                "h_fov_max",
                format!(
                    "h_fov_max ({}) must be greater than h_fov_min ({})",
                    self.h_fov_max, self.h_fov_min
                ),
            ));
        } else if span > TAU + 1e-6 {
            e.push(ConfigError::new(
                "h_fov_max",
                format!("h_fov_max - h_fov_min = {span} rad spans more than a full turn (2π); azimuths would repeat"),
            ));
        }
        let half = std::f64::consts::FRAC_PI_2;
        if self.v_fov_min >= self.v_fov_max {
            e.push(ConfigError::new(
                "v_fov_max",
                format!(
                    "v_fov_max ({}) must be greater than v_fov_min ({})",
                    self.v_fov_max, self.v_fov_min
                ),
            ));
        } else if self.v_fov_min < -half || self.v_fov_max > half {
            e.push(ConfigError::new(
                "v_fov_min",
                format!(
                    "elevations must lie within [-π/2, π/2], got {}..{}",
                    self.v_fov_min, self.v_fov_max
                ),
            ));
        }
        e
    }
}

/// What a 3D lidar's configure resolves from its keys.
#[derive(Debug, Clone)]
pub struct CloudKeys<'a> {
    /// Site the rays are cast from (model name).
    pub site: &'a str,
    /// Frame id of the cloud (default: the site's name).
    pub frame_id: Option<&'a str>,
    /// Housing body the rays ignore.
    pub exclude_body: Option<&'a str>,
    /// Transport scope override.
    pub namespace: Option<&'a str>,
    /// The `points` topic when not renamed.
    pub default_topic: &'a str,
    /// `topics:` renames.
    pub topics: &'a BTreeMap<String, String>,
    /// Skip casting while nobody subscribes.
    pub lazy: bool,
    /// Publish the static mount transform.
    pub emit_static_tf: bool,
    /// Its parent.
    pub tf_parent: Option<&'a str>,
    /// The plugin entry (address, plugin name), for the TF claim.
    pub claimant: crate::context::Claimant,
}

/// One 3D lidar's scanning state.
pub struct CloudScanner {
    params: ScanParams,
    rng_name: String,
    pattern: Vec<[f64; 3]>,
    too_close: Unmeasured,
    no_return: Unmeasured,
    site_id: usize,
    exclude_id: Option<usize>,
    frame_id: String,
    batch: RayBatch,
    /// The `points` endpoint.
    pub ep: EndpointId,
    mount: Option<MountTf>,
}

impl CloudScanner {
    /// A scanner of `pattern` with the checked per-ray values, drawing noise from `rng_name`.
    pub fn new(
        pattern: &CloudPattern,
        params: ScanParams,
        rng_name: String,
        too_close: Unmeasured,
        no_return: Unmeasured,
    ) -> Self {
        let dirs = pattern.directions();
        CloudScanner {
            params,
            rng_name,
            batch: RayBatch::new(dirs.len()),
            pattern: dirs,
            too_close,
            no_return,
            site_id: 0,
            exclude_id: None,
            frame_id: String::new(),
            ep: 0,
            mount: None,
        }
    }

    /// Rays per scan.
    pub fn rays(&self) -> usize {
        self.pattern.len()
    }

    /// Resolve the site, housing and frame under the owning entity, add the `points` endpoint
    /// (sensor_msgs/PointCloud2, sensor-data QoS) and, with `emit_static_tf`, the mount transform.
    pub fn configure(
        &mut self,
        ctx: &mut SimContext,
        owner: Option<&str>,
        k: &CloudKeys,
    ) -> Result<(), String> {
        let ent = ctx.entities.resolve_owner(owner).cloned();
        let prefix = ent.as_ref().map(|e| e.prefix.clone()).unwrap_or_default();
        self.site_id = resolve_name(
            ctx.model(),
            MjtObjBase::mjOBJ_SITE,
            "site",
            k.site,
            &prefix,
            ent.as_ref(),
        )?;
        if let Some(b) = k.exclude_body {
            self.exclude_id = Some(resolve_name(
                ctx.model(),
                MjtObjBase::mjOBJ_BODY,
                "exclude_body",
                b,
                &prefix,
                ent.as_ref(),
            )?);
        }
        self.frame_id = k.frame_id.unwrap_or(k.site).to_string();
        let ns = k
            .namespace
            .map(str::to_string)
            .or_else(|| ent.as_ref().map(|e| e.namespace.clone()))
            .unwrap_or_default();
        let owner = ent.as_ref().map(|e| e.name.as_str()).or(owner);
        let topic = k.topics.get("points").cloned().unwrap_or_else(|| k.default_topic.to_string());
        let ep = Endpoint::out("points")
            .owner(owner)
            .namespace(&ns)
            .frame_prefix(&frame_prefix(&ns))
            .rate(self.params.rate_hz)
            .lazy(k.lazy)
            .hint("ros2", "type", "sensor_msgs/msg/PointCloud2")
            .hint("ros2", "qos", "sensor_data")
            .hint("ros2", "frame_id", self.frame_id.clone())
            .hint("ros2", "topic", topic);
        self.ep = ctx.interface.add(ep);
        if k.emit_static_tf {
            self.mount = Some(MountTf::register(
                ctx,
                &MountSpec {
                    tf_parent: k.tf_parent,
                    exclude: self.exclude_id.zip(k.exclude_body),
                    ent: ent.as_ref(),
                    prefix: &prefix,
                    site_id: self.site_id,
                    frame_id: &self.frame_id,
                    owner,
                    namespace: &ns,
                    claimant: k.claimant.clone(),
                },
            )?);
        }
        Ok(())
    }

    /// Announce the mount transform (at reset).
    pub fn announce(&self, ctx: &mut SimContext) {
        if let Some(m) = &self.mount {
            m.announce(ctx);
        }
    }

    /// Cast one scan now and return its cloud.
    pub fn scan(&mut self, ctx: &mut SimContext) -> Result<PointCloud, String> {
        let p = &self.params;
        let (origin, m) = {
            let d = ctx.data();
            (d.site_xpos()[self.site_id], d.site_xmat()[self.site_id])
        };
        site_dirs(&mut self.batch, &m, &self.pattern);
        self.batch.cast_within(ctx.data_mut(), origin, self.exclude_id, None, true, p.max_range);
        let mut rng = if p.draws() {
            Some(ctx.rng_for(&self.rng_name).map_err(|e| e.to_string())?)
        } else {
            None
        };
        let mut points = Vec::with_capacity(self.pattern.len());
        for (i, v) in self.pattern.iter().enumerate() {
            let dropped = p.dropout > 0.0 && rng.as_mut().is_some_and(|r| r.uniform() < p.dropout);
            let d = self.batch.dist()[i];
            let unmeasured = if dropped || d < 0.0 || d > p.max_range {
                Some(self.no_return)
            } else if d < p.range_min {
                Some(self.too_close)
            } else {
                None
            };
            match unmeasured {
                Some(Unmeasured::Drop) => {}
                Some(Unmeasured::Origin) => points.push([0.0; 3]),
                None => {
                    let r = p.noisy(d, rng.as_mut()) as f64;
                    points.push([(v[0] * r) as f32, (v[1] * r) as f32, (v[2] * r) as f32]);
                }
            }
        }
        Ok(PointCloud { stamp: ctx.sim_time(), frame_id: self.frame_id.clone(), points })
    }

    /// The post_step every 3D lidar runs: when due, scan, keep it in `reader` and publish it.
    pub fn post_step(&mut self, ctx: &mut SimContext, reader: &CloudReader) -> Result<(), String> {
        if !ctx.interface.is_due(self.ep, ctx.tick) {
            return Ok(());
        }
        let cloud = self.scan(ctx)?;
        reader.set(cloud.clone());
        ctx.interface.publish(self.ep, ctx.tick, Payload::PointCloud(cloud));
        Ok(())
    }
}
