//! `lidar`: a 2D laser scanner by batched ray casting through the one raycast seam
//! ([`crate::mujoco::raycast::RayBatch::cast`], no GL)
//!
//! Geometry. Rays are cast from a site, in the site's xy plane (the scan plane), ray `i` at
//! bearing `angle_min + i * angle_increment` counter-clockwise from the site's +x, with
//! `angle_increment = (angle_max - angle_min) / (rays - 1)`: the first ray at `angle_min`, the last
//! exactly at `angle_max` (the layout every 2D scanner driver publishes). The directions are
//! rotated by the site's world orientation on every scan, so a scanner on a moving or tilting
//! body scans in its own plane. Static geoms (walls) are included; the geoms of `exclude_body`
//! (the device's own housing) and of absent entities (the seam's default mask) are not.
//!
//! What a ray publishes (REP 117 unless the device says otherwise): a hit nearer than
//! `detection_min` is `too_close` (-inf), no hit within `detection_max` is `no_return` (+inf), a
//! hit in between is its distance. Noise (`range_stddev`, `range_stddev_relative`) is drawn on the
//! true distance of measured and raw too-close returns, floored at 0 and quantised to
//! `range_resolution`; it never re-classifies a ray. `dropout_percent` turns that share of rays per
//! scan into `no_return`. Draws come from `ctx.rng_for("lidar:<address>")`.
//!
//! Endpoints: `scan` (out, `sensor_msgs/msg/LaserScan`, QoS `sensor_data`) at `rate_hz` snapped
//! to the physics grid, and — with `emit_static_tf` — `tf_static` (a `Transforms` payload with the
//! `tf: static` hint) carrying `tf_parent -> frame_id` measured from the compiled model, published
//! at every reset. Blackboard: `lidar:<address>` holds a [`LidarReader`] of the latest scan.

use mujoco_rs::prelude::*;

use crate::context::payload::LaserScan;
use crate::context::{Endpoint, EndpointId, Payload, SimContext};
use crate::engine::rates::snap_rate;
use crate::error::HookResult;
use crate::handles::sensor_fault::{self, FaultSwitch};
use crate::mujoco::frames::resolve_name;
use crate::mujoco::raycast::RayBatch;
use crate::plugin::{Hooks, Plugin, PluginArgs};
use crate::plugins::shared::ray_mount::{site_plane_dirs, MountSpec, MountTf};
use crate::plugins::shared::scan::{ScanParams, Special};
use crate::spawn::frame_prefix;

pub use super::lidar_config::{LidarConfig, FAULT_ALLOWLIST, MAX_RAYS};

/// In-process access to a lidar's latest scan (blackboard `lidar:<address>`).
pub type LidarReader = crate::plugins::shared::latest::Latest<LaserScan>;

/// Blackboard key of a lidar's reader.
pub fn reader_key(address: &str) -> String {
    format!("lidar:{address}")
}

/// The `lidar` plugin.
pub struct Lidar {
    cfg: LidarConfig,
    address: String,
    owner: Option<String>,
    nominal: ScanParams,
    degraded: Option<ScanParams>,
    /// Degraded gate spacing (steps) when the fault changes the rate.
    degraded_every: Option<u64>,
    fault: FaultSwitch,
    /// The fault switch's SetBool endpoint (with a `fault:` block).
    fault_service: Option<sensor_fault::FaultService>,
    rng_name: String,
    // resolved at configure
    site_id: usize,
    exclude_id: Option<usize>,
    frame_id: String,
    cos_sin: Vec<(f64, f64)>,
    batch: RayBatch,
    scan_ep: EndpointId,
    mount: Option<MountTf>,
    scan_time: f32,
    reader: LidarReader,
}

impl Lidar {
    /// Construct from a validated config.
    pub fn new(cfg: LidarConfig, args: &PluginArgs) -> Self {
        let nominal = cfg.params().expect("validated");
        let degraded = cfg.fault_params().expect("validated");
        let n = cfg.rays as usize;
        Lidar {
            address: args.address.clone(),
            owner: args.owner.clone(),
            nominal,
            degraded,
            degraded_every: None,
            fault: FaultSwitch::default(),
            fault_service: None,
            rng_name: format!("lidar:{}", args.address),
            site_id: 0,
            exclude_id: None,
            frame_id: String::new(),
            cos_sin: Vec::new(),
            batch: RayBatch::new(n),
            scan_ep: 0,
            mount: None,
            scan_time: 0.0,
            reader: LidarReader::default(),
            cfg,
        }
    }

    /// The per-frame values in force (degraded while the fault switch is on).
    pub fn active(&self) -> &ScanParams {
        match (&self.degraded, self.fault.is_on()) {
            (Some(d), true) => d,
            _ => &self.nominal,
        }
    }

    fn due(&self, ctx: &SimContext) -> bool {
        match (self.degraded_every, self.fault.is_on()) {
            (Some(k), true) => {
                let ep = ctx.interface.get(self.scan_ep);
                !(ep.lazy && ep.has_subscribers == Some(false)) && ctx.tick % k == 0
            }
            _ => ctx.interface.is_due(self.scan_ep, ctx.tick),
        }
    }

    /// Cast one scan now and return it (also what post_step publishes on due steps).
    pub fn scan(&mut self, ctx: &mut SimContext) -> Result<LaserScan, String> {
        let p = self.active().clone();
        let (origin, m) = {
            let d = ctx.data();
            (d.site_xpos()[self.site_id], d.site_xmat()[self.site_id])
        };
        site_plane_dirs(&mut self.batch, &m, &self.cos_sin);
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
        let n = self.batch.len();
        let mut ranges = Vec::with_capacity(n);
        for i in 0..n {
            if p.dropout > 0.0 {
                if let Some(r) = rng.as_mut() {
                    if r.uniform() < p.dropout {
                        ranges.push(p.no_return);
                        continue;
                    }
                }
            }
            let d = self.batch.dist()[i];
            let v = if d < 0.0 || d > p.detection_max {
                p.no_return
            } else if d < p.detection_min {
                match p.too_close {
                    Special::Value(v) => v,
                    Special::Raw => p.noisy(d, rng.as_mut()),
                }
            } else {
                p.noisy(d, rng.as_mut())
            };
            ranges.push(v);
        }
        let scan_time = match (self.degraded_every, self.fault.is_on()) {
            (Some(k), true) => (k as f64 * ctx.dt) as f32,
            _ => self.scan_time,
        };
        Ok(LaserScan {
            stamp: ctx.sim_time(),
            frame_id: self.frame_id.clone(),
            angle_min: self.cfg.angle_min as f32,
            angle_max: self.cfg.angle_max() as f32,
            angle_increment: self.cfg.angle_increment() as f32,
            time_increment: 0.0,
            scan_time,
            range_min: p.range_min as f32,
            range_max: p.max_range as f32,
            ranges,
            intensities: Vec::new(),
        })
    }

    /// Geom ids the last scan hit within `detection_max` (-1 = none), ray by ray: for tests and
    /// diagnostics.
    pub fn last_hit_geoms(&self) -> &[i32] {
        self.batch.geom()
    }
}

impl Plugin for Lidar {
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

        let inc = self.cfg.angle_increment();
        self.cos_sin = (0..self.cfg.rays)
            .map(|i| (self.cfg.angle_min + inc * i as f64).sin_cos())
            .map(|(s, c)| (c, s))
            .collect();

        let ns = self
            .cfg
            .namespace
            .clone()
            .or_else(|| ent.as_ref().map(|e| e.namespace.clone()))
            .unwrap_or_default();
        let owner = ent.as_ref().map(|e| e.name.as_str()).or(self.owner.as_deref());
        let mut ep = Endpoint::out("scan")
            .owner(owner)
            .namespace(&ns)
            .frame_prefix(&frame_prefix(&ns))
            .rate(self.nominal.rate_hz)
            .lazy(self.cfg.lazy)
            .hint("ros2", "type", "sensor_msgs/msg/LaserScan")
            .hint("ros2", "qos", "sensor_data")
            .hint("ros2", "frame_id", self.frame_id.clone());
        if let Some(t) = self.cfg.topics.get("scan") {
            ep = ep.hint("ros2", "topic", t.clone());
        }
        self.scan_ep = ctx.interface.add(ep);
        let snapped = ctx.interface.get(self.scan_ep).snapped.expect("rate set");
        self.scan_time = (snapped.every_steps as f64 * ctx.dt) as f32;
        if let Some(d) = &self.degraded {
            if d.rate_hz != self.nominal.rate_hz {
                self.degraded_every =
                    Some(snap_rate(d.rate_hz, ctx.interface.physics_hz()).every_steps);
            }
        }

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
                    claimant: crate::context::Claimant::new(&self.address, "lidar"),
                },
            )?);
        }

        if self.degraded.is_some() {
            ctx.blackboard.set(sensor_fault::switch_key(&self.address), self.fault.clone());
            let same = self.degraded.as_ref() == Some(&self.nominal);
            self.fault_service = Some(sensor_fault::FaultService::register(
                ctx,
                &self.address,
                owner,
                self.fault.clone(),
                same,
            ));
        }
        ctx.blackboard.set(reader_key(&self.address), self.reader.clone());
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        // A fault does not survive reset: the next trial starts nominal.
        self.fault.set(false);
        if let Some(f) = &mut self.fault_service {
            f.reset();
        }
        self.reader.clear();
        if let Some(m) = &self.mount {
            m.announce(ctx);
        }
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if let Some(f) = &mut self.fault_service {
            f.poll(ctx);
        }
        if !self.due(ctx) {
            return Ok(());
        }
        let scan = self.scan(ctx)?;
        self.reader.set(scan.clone());
        ctx.interface.publish(self.scan_ep, ctx.tick, Payload::LaserScan(scan));
        Ok(())
    }
}

/// The registry entry of `lidar`.
pub fn descriptor() -> crate::plugin::PluginDescriptor {
    crate::plugin_descriptor!(
        "lidar",
        "2D lidar by batched ray casting (REP 117 specials, seeded range noise, dropout, static mount TF).",
        LidarConfig,
        Lidar
    )
}
