//! `prop_trajectory`: a carrier plate that moves along a prescribed planar path at a constant speed
//! and carries what lies on it by friction — a stepper-driven x-y stage.
//!
//! The path is a 2-column `x,y` CSV (`units: mm` by default, or `m`), resolved relative to the
//! world file's directory; blank lines and `#` comments are skipped, and a first row that holds no
//! numbers (`x,y`) is read as a header. CSV point (0, 0) sits at `origin` (world, m; z is the
//! plate's TOP surface). Every point is clamped into ±`travel` (m per axis, about `origin`): the
//! stage's soft limits; a path that leaves them is warned about once, at load.
//!
//! The plate (half-extents `plate`) rides two slide joints (x, then y) with no actuator. Every
//! `pre_step` forces the joints' velocities so that the step lands the plate exactly on the path
//! point one step further along the arc length (`speed` m/s) — the stage is infinitely stiff, so
//! its motion is the commanded path whatever it carries, and a carried object sees the plate's
//! true velocity in its friction contact. A mocap body could not do this: it has no velocity in
//! MuJoCo's dynamics, so friction against it carries nothing. The joints carry a large armature,
//! so a load's contact force cannot bend the step in between.
//!
//! While the entity is absent (DeleteEntity) the plate stands still and its path time does not run;
//! SpawnEntity resumes it where it stopped. `start_index` begins at that CSV row; `loop: true` drives the closing leg from the last point
//! back to the first and goes round again (never a jump, which would fling the load), `loop:
//! false` stops at the last point. Every reset re-seats the plate at the start. The plate geom
//! owns every contact on it (`priority 1`), so `friction` is the plate ↔ load friction whatever
//! the load declares. Carried props need their own free joint (`motion: physics`) and are placed
//! just above the plate's top surface.
//!
//! Names: body and geom `<prefix><stem>`, joints `<prefix><stem>_x` / `<prefix><stem>_y`, where
//! `<stem>` is the entry's address with dots as `_`. Registers an entity (kind Other) and the
//! blackboard handle `prop_trajectory:<address>` ([`PropTrajectoryHandle`]).

use std::cell::Cell;
use std::path::{Path, PathBuf};
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

/// Armature of the stage's slide joints (kg): a load's contact force barely accelerates them.
pub const STAGE_ARMATURE: f64 = 1.0e4;
/// Mass of the plate (kg).
pub const PLATE_MASS: f64 = 1.0;
/// Largest path file read (bytes): the file is read whole at load.
pub const MAX_PATH_FILE_BYTES: u64 = 16 << 20;

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
    fn scale(self) -> f64 {
        match self {
            PathUnits::Mm => 1e-3,
            PathUnits::M => 1.0,
        }
    }
}

fn d_speed() -> f64 {
    0.03
}
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
    /// 2-column `x,y` CSV, resolved relative to the world file (REQUIRED).
    pub path: String,
    /// Units of the CSV: `mm` (default) or `m`.
    #[serde(default)]
    pub units: PathUnits,
    /// Speed along the path's arc length (m/s), constant. Default 0.03.
    #[serde(default = "d_speed")]
    pub speed: f64,
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
        if !(self.speed > 0.0 && self.speed <= MAX_LINEAR_SPEED) {
            e.push(ConfigError::new(
                "speed",
                format!("must be in (0, {MAX_LINEAR_SPEED}] m/s, got {}", num(self.speed)),
            ));
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

/// Read a path file: `x,y` rows in `units`, converted to metres. Errors name `file:line`.
pub fn read_path(file: &Path, shown: &str, units: PathUnits) -> Result<Vec<[f64; 2]>, String> {
    let where_ = if Path::new(shown).is_absolute() {
        String::new()
    } else {
        format!(
            "; a relative path is resolved against the world file's directory ({})",
            file.display()
        )
    };
    let m = std::fs::metadata(file)
        .map_err(|e| format!("`{shown}`: cannot read the path file ({e}){where_}"))?;
    if m.is_dir() {
        return Err(format!("`{shown}` is a directory; name a CSV file of `x,y` rows{where_}"));
    }
    if !m.is_file() {
        // a device or a pipe reports no size and may never end (/dev/zero, a FIFO)
        return Err(format!(
            "`{shown}` is not a regular file (a device, pipe or socket); name a CSV file of `x,y` rows"
        ));
    }
    if m.len() > MAX_PATH_FILE_BYTES {
        return Err(format!(
            "`{shown}` is {} bytes; a path file is read whole and may hold at most {MAX_PATH_FILE_BYTES} bytes (16 MiB)",
            m.len()
        ));
    }
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("`{shown}`: cannot read the path file ({e}){where_}"))?;
    let mut points = Vec::new();
    let mut first = true;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let parsed: Vec<Option<f64>> =
            cells.iter().map(|c| c.parse::<f64>().ok().filter(|v| v.is_finite())).collect();
        let header = first && cells.len() == 2 && parsed.iter().all(Option::is_none);
        first = false;
        if header {
            continue;
        }
        match parsed.as_slice() {
            [Some(x), Some(y)] => points.push([x * units.scale(), y * units.scale()]),
            _ => {
                let row: String = line.chars().take(80).collect();
                return Err(format!(
                    "{shown}:{}: expected two finite numbers `x,y`, got `{row}`",
                    i + 1
                ));
            }
        }
    }
    if points.len() < 2 {
        return Err(format!("`{shown}` holds {} point(s); a path needs at least 2", points.len()));
    }
    Ok(points)
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

/// In-process view of a stage (blackboard `prop_trajectory:<address>`).
#[derive(Debug, Clone)]
pub struct PropTrajectoryHandle {
    s: Rc<Cell<f64>>,
    /// Total arc length of the (clamped) path (m), closing leg included when looping.
    pub length: f64,
    /// How many CSV points the travel limits clamped.
    pub clamped: usize,
    path: Rc<Polyline>,
    origin: [f64; 2],
    looped: bool,
}

impl PropTrajectoryHandle {
    /// Arc length commanded for the end of the current step (m, unwrapped: grows past `length`
    /// when looping).
    pub fn arc_length(&self) -> f64 {
        self.s.get()
    }
    /// The commanded world (x, y) of the plate centre at arc length `s` (m).
    pub fn point_at(&self, s: f64) -> [f64; 2] {
        let s = if self.looped { s.rem_euclid(self.length) } else { s };
        let p = self.path.at(s);
        [self.origin[0] + p[0], self.origin[1] + p[1]]
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
    path: Rc<Polyline>,
    s0: f64,
    clamped: usize,
    /// Steps taken this episode.
    steps: u64,
    s: Rc<Cell<f64>>,
    qpos: [usize; 2],
    dof: [usize; 2],
}

/// Typed config → validated → path read and clamped (a bad file is refused before anything is
/// built) → plugin.
pub fn create(v: &Value, args: &PluginArgs) -> Result<Box<dyn Plugin>, Vec<ConfigError>> {
    let cfg: PropTrajectoryConfig = typed_config(v)?;
    let e = cfg.validate();
    if !e.is_empty() {
        return Err(e);
    }
    let file = PathBuf::from(&cfg.path);
    let file = if file.is_absolute() { file } else { args.base_dir.join(file) };
    let mut points =
        read_path(&file, &cfg.path, cfg.units).map_err(|m| vec![ConfigError::new("path", m)])?;
    if cfg.start_index >= points.len() {
        return Err(vec![ConfigError::new(
            "start_index",
            format!(
                "{} is past the last row of `{}` ({} points: 0..={})",
                cfg.start_index,
                cfg.path,
                points.len(),
                points.len() - 1
            ),
        )]);
    }
    let clamped = clamp_to_travel(&mut points, cfg.travel);
    if clamped > 0 {
        tracing::warn!(
            "prop_trajectory `{}`: {clamped} of {} points of `{}` lie outside the travel limits ±[{}, {}] m and were clamped into them",
            args.address,
            points.len(),
            cfg.path,
            num(cfg.travel[0]),
            num(cfg.travel[1])
        );
    }
    if cfg.loop_route {
        points.push(points[0]);
    }
    let path = Polyline::new(points);
    if path.length() <= 0.0 {
        return Err(vec![ConfigError::new(
            "path",
            format!("every point of `{}` is the same (after clamping into travel): the path has no length", cfg.path),
        )]);
    }
    let s0 = path.vertex_s(cfg.start_index);
    Ok(Box::new(PropTrajectory {
        stem: args.address.replace('.', "_"),
        address: args.address.clone(),
        cfg,
        path: Rc::new(path),
        s0,
        clamped,
        steps: 0,
        s: Rc::new(Cell::new(s0)),
        qpos: [0; 2],
        dof: [0; 2],
    }))
}

impl PropTrajectory {
    /// Path point (relative to `origin`) at arc length `s`.
    fn point(&self, s: f64) -> [f64; 2] {
        let s = if self.cfg.loop_route { s.rem_euclid(self.path.length()) } else { s };
        self.path.at(s)
    }

    fn xml(&self) -> String {
        let s = &self.stem;
        let [hx, hy, hz] = self.cfg.plate;
        format!(
            r#"<mujoco model="prop_trajectory">
  <worldbody>
    <body name="{s}">
      <joint name="{s}_x" type="slide" axis="1 0 0" armature="{STAGE_ARMATURE}" damping="0"/>
      <joint name="{s}_y" type="slide" axis="0 1 0" armature="{STAGE_ARMATURE}" damping="0"/>
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
        for (k, axis) in ["x", "y"].iter().enumerate() {
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
                length: self.path.length(),
                clamped: self.clamped,
                path: self.path.clone(),
                origin: [self.cfg.origin[0], self.cfg.origin[1]],
                looped: self.cfg.loop_route,
            },
        );
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.steps = 0;
        self.s.set(self.s0);
        let p = self.point(self.s0);
        let (q, v) = (self.qpos, self.dof);
        let d = ctx.data_mut();
        for k in 0..2 {
            d.qpos_mut()[q[k]] = p[k];
            d.qvel_mut()[v[k]] = 0.0;
        }
        Ok(())
    }

    fn pre_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if !ctx.entities.get(&self.address).is_some_and(|e| e.present) {
            // absent (DeleteEntity): the stage stands where it is, like every absent entity
            let d = ctx.data_mut();
            for k in 0..2 {
                d.qvel_mut()[self.dof[k]] = 0.0;
            }
            return Ok(());
        }
        self.steps += 1;
        let mut s = self.s0 + self.cfg.speed * ctx.dt * self.steps as f64;
        if !self.cfg.loop_route {
            s = s.min(self.path.length());
        }
        self.s.set(s);
        let target = self.point(s);
        let (q, v, dt) = (self.qpos, self.dof, ctx.dt);
        let d = ctx.data_mut();
        for k in 0..2 {
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
