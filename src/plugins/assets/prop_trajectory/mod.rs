//! `prop_trajectory`: a carrier plate that moves along a prescribed planar path at a constant speed
//! and carries what lies on it by friction — a stepper-driven x-y stage.
//!
//! The path file (resolved relative to the world file's directory; format in [`path`]) holds
//! either `x,y` points, followed at `speed` along their arc length, or timed poses `t,x,y` /
//! `t,x,y,yaw`, the pose at each time (s), interpolated linearly in between (yaw the short way
//! round), held before the first row and after the last. x and y are in `units` (`mm` by default,
//! or `m`); a file whose every coordinate read as millimetres stays within ±2 mm, with `units`
//! left out, is warned about (it most likely holds metres). File point (0, 0) sits at `origin`
//! (world, m; z is the plate's TOP surface). Every point is clamped into ±`travel` (m per axis,
//! about `origin`): the stage's soft limits; a path that leaves them is warned about once, at load.
//!
//! The plate (half-extents `plate`) rides two slide joints (x, then y; and a hinge about z when the
//! file gives a yaw) with no actuator. Every `pre_step` forces the joints' velocities so that the
//! step lands the plate exactly on the path pose one step further along (`speed` m/s of arc
//! length, or one timestep of path time) — the stage is infinitely stiff, so
//! its motion is the commanded path whatever it carries, and a carried object sees the plate's
//! true velocity in its friction contact. A mocap body could not do this: it has no velocity in
//! MuJoCo's dynamics, so friction against it carries nothing. The joints carry a large armature,
//! so a load's contact force cannot bend the step in between.
//!
//! While the entity is absent (DeleteEntity) the plate stands still and its path time does not run;
//! SpawnEntity resumes it where it stopped. `start_index` begins at that row; `loop: true` drives the
//! closing leg from the last point back to the first and goes round again (never a jump, which
//! would fling the load; a timed path must therefore end at its first pose), `loop: false` stops
//! at the last point. Every reset re-seats the plate at the start. The plate geom
//! owns every contact on it (`priority 1`), so `friction` is the plate ↔ load friction whatever
//! the load declares. Carried props need their own free joint (`motion: physics`) and are placed
//! just above the plate's top surface.
//!
//! Names: body and geom `<prefix><stem>`, joints `<prefix><stem>_x` / `_y` (/ `_yaw`), where
//! `<stem>` is the entry's address with dots as `_`. Registers an entity (kind Other) and the
//! blackboard handle `prop_trajectory:<address>` ([`PropTrajectoryHandle`]).

use std::cell::Cell;
use std::path::PathBuf;
use std::rc::Rc;

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_norway::Value;

use crate::context::{Entity, EntityKind, Pose, SimContext};
use crate::error::{num, ConfigError, HookResult};
use crate::nav::path::Polyline;
use crate::plugin::{typed_config, BuildContext, Hooks, Plugin, PluginArgs, ValidateConfig};
use crate::spawn::mjcf::{attach, child_spec_from_str};
use crate::world::bounds::{MAX_LINEAR_SPEED, MAX_POSITION_M, MAX_SIZE_M};

pub mod path;
pub use path::{read_path, PathData, TimedPath, MAX_PATH_FILE_BYTES};

/// A file whose every coordinate read as millimetres is within this many millimetres of its origin
/// most likely holds metres (`units: m` forgotten): warned about at load.
pub const METRES_AS_MM_BELOW: f64 = 2.0;

/// A looping timed path's last row closes on its first when they are within this distance (m):
/// a micrometre, so a file whose closing row repeats the first is accepted however it was printed,
/// and the jump at the loop is too small for a load to feel.
pub const LOOP_CLOSE_M: f64 = 1e-6;
/// ... and within this yaw (rad), whole turns apart: 1e-4 rad covers a yaw printed to four
/// decimals (π as 3.1416 at one end and −3.1416 at the other).
pub const LOOP_CLOSE_YAW: f64 = 1e-4;

/// Armature of the stage's slide joints (kg): a load's contact force barely accelerates them.
pub const STAGE_ARMATURE: f64 = 1.0e4;
/// Mass of the plate (kg).
pub const PLATE_MASS: f64 = 1.0;

/// Units of the path file.
#[derive(Debug, Clone, Copy, PartialEq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PathUnits {
    /// Millimetres (default).
    #[default]
    Mm,
    /// Metres.
    M,
}

impl PathUnits {
    /// Metres per file unit.
    pub fn scale(self) -> f64 {
        match self {
            PathUnits::Mm => 1e-3,
            PathUnits::M => 1.0,
        }
    }
}

/// Default `speed` of an `x,y` path (m/s).
pub const DEFAULT_SPEED: f64 = 0.03;
fn d_plate() -> [f64; 3] {
    [0.07, 0.07, 0.006]
}
fn d_friction() -> f64 {
    1.0
}
fn d_travel() -> [f64; 2] {
    [0.15, 0.15]
}

/// Config of `prop_trajectory`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PropTrajectoryConfig {
    /// MJCF name prefix (distinct prefixes for more than one stage). Default "".
    #[serde(default)]
    pub prefix: String,
    /// The path file, resolved relative to the world file (REQUIRED): a CSV (or a YAML list of
    /// rows) of `x,y` points followed at `speed`, or of timed poses `t,x,y` / `t,x,y,yaw`.
    pub path: String,
    /// Units of the file's x and y: `mm` (default) or `m`. Left out, a file whose every
    /// coordinate is within ±2 (mm) is warned about: it most likely holds metres.
    #[serde(default)]
    pub units: Option<PathUnits>,
    /// Speed along an `x,y` path's arc length (m/s), constant. Default 0.03. A timed path sets
    /// its own pace and takes no speed.
    #[serde(default)]
    pub speed: Option<f64>,
    /// World position [x, y, z] (m) of CSV point (0, 0); z is the plate's top surface (REQUIRED).
    pub origin: [f64; 3],
    /// Plate half-extents [x, y, z] (m). Default [0.07, 0.07, 0.006].
    #[serde(default = "d_plate")]
    pub plate: [f64; 3],
    /// Plate ↔ load sliding friction (the plate owns its contacts). Default 1.0.
    #[serde(default = "d_friction")]
    pub friction: f64,
    /// Drive back to the first point and go round again at the end. Default false.
    #[serde(default, rename = "loop")]
    pub loop_route: bool,
    /// Begin at this CSV row (0-based, among the points). Default 0.
    #[serde(default)]
    pub start_index: usize,
    /// ± soft limits on each axis about `origin` (m); the path is clamped into them. Default
    /// [0.15, 0.15].
    #[serde(default = "d_travel")]
    pub travel: [f64; 2],
}

impl ValidateConfig for PropTrajectoryConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if let Some(v) = self.speed {
            if !(v > 0.0 && v <= MAX_LINEAR_SPEED) {
                e.push(ConfigError::new(
                    "speed",
                    format!("must be in (0, {MAX_LINEAR_SPEED}] m/s, got {}", num(v)),
                ));
            }
        }
        if self.origin.iter().any(|v| !(v.is_finite() && v.abs() <= MAX_POSITION_M)) {
            e.push(ConfigError::new(
                "origin",
                format!(
                    "[x, y, z] must be finite and within ±{MAX_POSITION_M} m, got [{}]",
                    self.origin.map(num).join(", ")
                ),
            ));
        }
        if self.plate.iter().any(|v| !(*v > 0.0 && *v <= MAX_SIZE_M)) {
            e.push(ConfigError::new(
                "plate",
                format!(
                    "half-extents [x, y, z] must all be in (0, {MAX_SIZE_M}] m, got [{}]",
                    self.plate.map(num).join(", ")
                ),
            ));
        }
        if !(self.friction >= 0.0 && self.friction.is_finite()) {
            e.push(ConfigError::new(
                "friction",
                format!("must be finite and >= 0, got {}", num(self.friction)),
            ));
        }
        if self.travel.iter().any(|v| !(*v > 0.0 && *v <= MAX_SIZE_M)) {
            e.push(ConfigError::new(
                "travel",
                format!(
                    "± limits [x, y] must both be in (0, {MAX_SIZE_M}] m, got [{}]",
                    self.travel.map(num).join(", ")
                ),
            ));
        }
        e
    }
}

/// A timed path's rows must be at least one physics timestep apart: the stage moves once per
/// step, so two rows closer than that would be passed within one step — the plate would jump
/// between their poses at once (and fling what it carries), not move between them in the time the
/// file gives. Refused naming the first such pair of rows (0-based among the data rows).
pub fn check_row_spacing(tp: &TimedPath, path: &str, timestep: f64) -> Result<(), String> {
    // Rows written at the physics rate (`0.016,…` then `0.018,…` at 2 ms) are 1.9999999999999983e-3
    // apart in binary: a spacing within rounding of the timestep is one timestep.
    match tp.t.windows(2).position(|w| w[1] - w[0] < timestep * (1.0 - 1e-9)) {
        None => Ok(()),
        Some(k) => {
            let (a, b) = (tp.t[k], tp.t[k + 1]);
            Err(format!(
                "path: rows {} and {} of `{path}` (t = {} s and {} s) are {} s apart, less than the physics timestep {} s: the stage moves once a step, so it would jump between their poses at once; space timed rows at least one timestep apart (a step in the path is the time it should take; resample a denser recording)",
                k + 1,
                k + 2,
                num(a),
                num(b),
                num(b - a),
                num(timestep)
            ))
        }
    }
}

/// Clamp every point into ±`travel`; returns how many points were clamped.
pub fn clamp_to_travel(points: &mut [[f64; 2]], travel: [f64; 2]) -> usize {
    let mut n = 0;
    for p in points.iter_mut() {
        let c = [p[0].clamp(-travel[0], travel[0]), p[1].clamp(-travel[1], travel[1])];
        if c != *p {
            n += 1;
            *p = c;
        }
    }
    n
}

/// What the plate follows.
#[derive(Debug, Clone)]
pub enum Track {
    /// An `x,y` path at `speed` along its arc length (closing leg included when looping).
    Along {
        /// The path, relative to `origin` (m).
        path: Polyline,
        /// m/s.
        speed: f64,
    },
    /// Timed poses, relative to `origin`.
    Timed(TimedPath),
}

impl Track {
    /// The pose `[x, y, yaw]` (relative to `origin`) at path parameter `p`: arc length (m) along
    /// an `x,y` path, time (s) along a timed one; looping wraps it.
    pub fn at(&self, p: f64, looped: bool) -> [f64; 3] {
        match self {
            Track::Along { path, .. } => {
                let s = if looped { p.rem_euclid(path.length()) } else { p };
                let q = path.at(s);
                [q[0], q[1], 0.0]
            }
            Track::Timed(tp) if looped => {
                // the last pose is the first (checked at load) up to whole turns of yaw
                let t0 = tp.t[0];
                let cycles = ((p - t0) / tp.duration()).floor();
                let mut q = tp.at(t0 + (p - t0).rem_euclid(tp.duration()));
                let turn = tp.pose[tp.pose.len() - 1][2] - tp.pose[0][2];
                q[2] += cycles * turn;
                q
            }
            Track::Timed(tp) => tp.at(p),
        }
    }

    /// How far the parameter runs per second: the speed, or 1 for time.
    fn rate(&self) -> f64 {
        match self {
            Track::Along { speed, .. } => *speed,
            Track::Timed(_) => 1.0,
        }
    }
}

/// In-process view of a stage (blackboard `prop_trajectory:<address>`).
#[derive(Debug, Clone)]
pub struct PropTrajectoryHandle {
    s: Rc<Cell<f64>>,
    /// Total arc length of the (clamped) path through the file's points (m), closing leg included
    /// when looping.
    pub length: f64,
    /// How many points the travel limits clamped.
    pub clamped: usize,
    /// The path file holds timed poses.
    pub timed: bool,
    /// What was warned about the path at load.
    pub warnings: Vec<String>,
    track: Rc<Track>,
    origin: [f64; 2],
    looped: bool,
}

impl PropTrajectoryHandle {
    /// The path parameter commanded for the end of the current step: arc length (m) along an
    /// `x,y` path, time (s) along a timed one (unwrapped: grows past the end when looping).
    pub fn arc_length(&self) -> f64 {
        self.s.get()
    }
    /// The commanded world (x, y) of the plate centre at path parameter `s`.
    pub fn point_at(&self, s: f64) -> [f64; 2] {
        let p = self.track.at(s, self.looped);
        [self.origin[0] + p[0], self.origin[1] + p[1]]
    }
    /// The commanded world pose `[x, y, yaw]` of the plate at path parameter `s` (yaw 0 unless
    /// the file gives one).
    pub fn pose_at(&self, s: f64) -> [f64; 3] {
        let p = self.track.at(s, self.looped);
        [self.origin[0] + p[0], self.origin[1] + p[1], p[2]]
    }
}

/// Blackboard key of the stage at `address`.
pub fn handle_key(address: &str) -> String {
    format!("prop_trajectory:{address}")
}

/// The `prop_trajectory` plugin.
pub struct PropTrajectory {
    cfg: PropTrajectoryConfig,
    address: String,
    stem: String,
    track: Rc<Track>,
    /// The file gave a yaw column: the plate has a yaw joint.
    yaw: bool,
    length: f64,
    s0: f64,
    clamped: usize,
    warnings: Vec<String>,
    /// Steps taken this episode.
    steps: u64,
    s: Rc<Cell<f64>>,
    qpos: [usize; 3],
    dof: [usize; 3],
}

/// Typed config → validated → path read and clamped (a bad file is refused before anything is
/// built) → plugin.
pub fn create(v: &Value, args: &PluginArgs) -> Result<Box<dyn Plugin>, Vec<ConfigError>> {
    let cfg: PropTrajectoryConfig =
        typed_config(v).map_err(|e| crate::key_ranges::key_ranges::<PropTrajectoryConfig>(v, e))?;
    let e = cfg.validate();
    if !e.is_empty() {
        return Err(e);
    }
    let units = cfg.units.unwrap_or_default();
    let file = PathBuf::from(&cfg.path);
    let file = if file.is_absolute() { file } else { args.base_dir.join(file) };
    let data = read_path(&file, &cfg.path, units).map_err(|m| vec![ConfigError::new("path", m)])?;
    if cfg.start_index >= data.len() {
        return Err(vec![ConfigError::new(
            "start_index",
            format!(
                "{} is past the last row of `{}` ({} points: 0..={})",
                cfg.start_index,
                cfg.path,
                data.len(),
                data.len() - 1
            ),
        )]);
    }
    let mut warnings = Vec::new();
    let largest = data.largest_coordinate(units);
    if cfg.units.is_none() && largest > 0.0 && largest <= METRES_AS_MM_BELOW {
        warnings.push(format!(
            "prop_trajectory `{}`: every x and y in `{}` is within ±{} of the origin, so read as millimetres (the default `units`) the whole path stays within {} mm; if the file is in metres, set `units: m` (`units: mm` keeps millimetres and silences this)",
            args.address,
            cfg.path,
            num(METRES_AS_MM_BELOW),
            num(largest)
        ));
    }
    let (mut points, timed) = match data {
        PathData::Points(p) => (p, None),
        PathData::Timed { t, pose, yaw } => {
            if cfg.speed.is_some() {
                return Err(vec![ConfigError::new(
                    "speed",
                    format!("`{}` holds timed poses (t, x, y rows), which set their own pace: drop `speed`", cfg.path),
                )]);
            }
            (pose.iter().map(|p| [p[0], p[1]]).collect(), Some((t, pose, yaw)))
        }
    };
    let clamped = clamp_to_travel(&mut points, cfg.travel);
    if clamped > 0 {
        warnings.push(format!(
            "prop_trajectory `{}`: {clamped} of {} points of `{}` lie outside the travel limits ±[{}, {}] m and were clamped into them",
            args.address,
            points.len(),
            cfg.path,
            num(cfg.travel[0]),
            num(cfg.travel[1])
        ));
    }
    for w in &warnings {
        tracing::warn!("{w}");
    }
    let mut ring = points.clone();
    if cfg.loop_route {
        ring.push(points[0]);
    }
    let poly = Polyline::new(ring);
    let (track, yaw, s0) = match timed {
        None => {
            if poly.length() <= 0.0 {
                return Err(vec![ConfigError::new(
                    "path",
                    format!("every point of `{}` is the same (after clamping into travel): the path has no length", cfg.path),
                )]);
            }
            let s0 = poly.vertex_s(cfg.start_index);
            (
                Track::Along { path: poly.clone(), speed: cfg.speed.unwrap_or(DEFAULT_SPEED) },
                false,
                s0,
            )
        }
        Some((t, pose, yaw)) => {
            let pose: Vec<[f64; 3]> =
                pose.iter().zip(&points).map(|(p, xy)| [xy[0], xy[1], p[2]]).collect();
            let (a, b) = (pose[0], pose[pose.len() - 1]);
            let full_turns = ((b[2] - a[2]) / std::f64::consts::TAU).round();
            let same_yaw =
                (b[2] - a[2] - full_turns * std::f64::consts::TAU).abs() <= LOOP_CLOSE_YAW;
            if cfg.loop_route && ((a[0] - b[0]).hypot(a[1] - b[1]) > LOOP_CLOSE_M || !same_yaw) {
                return Err(vec![ConfigError::new(
                    "loop",
                    format!("a looping timed path goes from its last row straight back to its first, so the last pose must be the first: `{}` ends at ({}, {}, yaw {}) and starts at ({}, {}, yaw {}); add a closing row at the time the loop should take", cfg.path, num(b[0]), num(b[1]), num(b[2]), num(a[0]), num(a[1]), num(a[2])),
                )]);
            }
            let s0 = t[cfg.start_index];
            (Track::Timed(TimedPath { t, pose }), yaw, s0)
        }
    };
    Ok(Box::new(PropTrajectory {
        stem: args.address.replace('.', "_"),
        address: args.address.clone(),
        cfg,
        track: Rc::new(track),
        yaw,
        length: poly.length(),
        s0,
        clamped,
        warnings,
        steps: 0,
        s: Rc::new(Cell::new(s0)),
        qpos: [0; 3],
        dof: [0; 3],
    }))
}

impl PropTrajectory {
    /// Path pose (relative to `origin`) at parameter `s`.
    fn pose(&self, s: f64) -> [f64; 3] {
        self.track.at(s, self.cfg.loop_route)
    }

    /// The stage's joints: x and y, and yaw when the path turns the plate.
    fn axes(&self) -> usize {
        if self.yaw {
            3
        } else {
            2
        }
    }

    fn xml(&self) -> String {
        let s = &self.stem;
        let [hx, hy, hz] = self.cfg.plate;
        let yaw = if self.yaw {
            format!(
                r#"<joint name="{s}_yaw" type="hinge" axis="0 0 1" armature="{STAGE_ARMATURE}" damping="0"/>"#
            )
        } else {
            String::new()
        };
        format!(
            r#"<mujoco model="prop_trajectory">
  <worldbody>
    <body name="{s}">
      <joint name="{s}_x" type="slide" axis="1 0 0" armature="{STAGE_ARMATURE}" damping="0"/>
      <joint name="{s}_y" type="slide" axis="0 1 0" armature="{STAGE_ARMATURE}" damping="0"/>
      {yaw}
      <geom name="{s}" type="box" size="{hx} {hy} {hz}" friction="{f} 0.005 0.0001" priority="1" mass="{PLATE_MASS}" rgba="0.55 0.57 0.6 1"/>
    </body>
  </worldbody>
</mujoco>"#,
            f = self.cfg.friction,
        )
    }
}

impl Plugin for PropTrajectory {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD | Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::PRE_STEP
    }

    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        if let Track::Timed(tp) = &*self.track {
            check_row_spacing(tp, &self.cfg.path, b.timestep)?;
        }
        let body = format!("{}{}", self.cfg.prefix, self.stem);
        if spec.body(&body).is_some() {
            return Err(format!("prefix: the world already has a body `{body}`; give this prop_trajectory a distinct prefix or name"));
        }
        let mut child = child_spec_from_str(&self.xml())?;
        let [x, y, z] = self.cfg.origin;
        let pos = [x, y, z - self.cfg.plate[2]];
        attach(spec, None, &mut child, pos, [1.0, 0.0, 0.0, 0.0], &self.cfg.prefix)?;
        let mut e = Entity::new(&self.address, EntityKind::Other, &body);
        e.prefix = self.cfg.prefix.clone();
        e.model = "prop_trajectory".into();
        e.initial_pose = Pose { pos, quat: [1.0, 0.0, 0.0, 0.0] };
        e.weld_reason = Some("a prop_trajectory plate follows its path (change `path`/`origin` in the world file; what it carries is moved by friction)".into());
        b.ctx.entities.add(e)
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let m = ctx.model();
        for (k, axis) in ["x", "y", "yaw"].iter().enumerate().take(self.axes()) {
            let j = format!("{}{}_{axis}", self.cfg.prefix, self.stem);
            let jid = m
                .name_to_id(MjtObjBase::mjOBJ_JOINT, &j)
                .ok_or_else(|| format!("stage joint `{j}` missing after compile"))?;
            self.qpos[k] = m.jnt_qposadr()[jid] as usize;
            self.dof[k] = m.jnt_dofadr()[jid] as usize;
        }
        ctx.blackboard.set(
            handle_key(&self.address),
            PropTrajectoryHandle {
                s: self.s.clone(),
                length: self.length,
                clamped: self.clamped,
                timed: matches!(*self.track, Track::Timed(_)),
                warnings: self.warnings.clone(),
                track: self.track.clone(),
                origin: [self.cfg.origin[0], self.cfg.origin[1]],
                looped: self.cfg.loop_route,
            },
        );
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.steps = 0;
        self.s.set(self.s0);
        let p = self.pose(self.s0);
        let (q, v, n) = (self.qpos, self.dof, self.axes());
        let d = ctx.data_mut();
        for k in 0..n {
            d.qpos_mut()[q[k]] = p[k];
            d.qvel_mut()[v[k]] = 0.0;
        }
        Ok(())
    }

    fn pre_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let n = self.axes();
        if !ctx.entities.get(&self.address).is_some_and(|e| e.present) {
            // absent (DeleteEntity): the stage stands where it is, like every absent entity
            let d = ctx.data_mut();
            for k in 0..n {
                d.qvel_mut()[self.dof[k]] = 0.0;
            }
            return Ok(());
        }
        self.steps += 1;
        let mut s = self.s0 + self.track.rate() * ctx.dt * self.steps as f64;
        if let (false, Track::Along { path, .. }) = (self.cfg.loop_route, &*self.track) {
            s = s.min(path.length());
        }
        self.s.set(s);
        let target = self.pose(s);
        let (q, v, dt) = (self.qpos, self.dof, ctx.dt);
        let d = ctx.data_mut();
        for k in 0..n {
            let vel = (target[k] - d.qpos()[q[k]]) / dt;
            d.qvel_mut()[v[k]] = vel;
        }
        Ok(())
    }
}

/// The registry entry of `prop_trajectory`.
pub fn descriptor() -> crate::plugin::PluginDescriptor {
    crate::plugin_descriptor!(
        "prop_trajectory",
        "A carrier plate on velocity-forced x/y slide joints following a CSV path at constant speed along its arc length (carries props by friction).",
        PropTrajectoryConfig;
        create
    )
}
