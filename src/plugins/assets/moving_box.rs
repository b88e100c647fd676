//! `moving_box`: a box obstacle that moves by itself — a forklift-like box on a fixed route
//! (mode A, `waypoints`) or a seeded random walk (mode B, `random_walk`).
//!
//! The box is a mocap body (`motion: driven`): collidable, immovable by contact, seen by every
//! ray. Its pose is written to `mocap_pos` in every `pre_step`, so it moves smoothly at the
//! physics rate at `speed` (m/s) and never turns (its orientation stays the `pose`'s).
//!
//! - Mode A: the route is `pose` → `waypoints[0]` → … → `waypoints[n-1]`. `loop: true` (default)
//!   cycles it, driving the closing leg from the last waypoint back to `pose` (never jumping: a
//!   teleporting obstacle would pass through whatever stands in between); `ping_pong: true`
//!   reverses at each end instead; `loop: false` stops at the last waypoint (with `ping_pong`,
//!   after one out-and-back, at `pose`).
//! - Mode B: straight legs, the first along the `pose`'s yaw. The box probes ahead (rays from its
//!   centre and both edges of its footprint, at its centre height and near its bottom, through the
//!   raycast seam) on the first step of every heading and then every [`PROBE_PERIOD_S`], and
//!   travels only what the probe found free beyond `clearance`; when that is used up, or its
//!   centre would leave `bounds`, it stands and turns by an angle drawn uniformly from
//!   `turn_deg`. The draws come from a counter-based generator keyed on
//!   `random_walk.seed` and the run's episode, re-seeded by every reset: episode N of two runs
//!   sees the same motion however many episodes ran before it.
//!
//! Every reset puts the box back at `pose` (and mode A at its first leg). A SetEntityState
//! teleport is adopted: the box continues from where it was put (mode A toward the waypoint it
//! was heading for). While absent (`present: false`, DeleteEntity) it stands still, like every
//! absent entity.

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::rng::SimRng;
use crate::context::SimContext;
use crate::error::{num, ConfigError, HookResult};
use crate::mujoco::raycast::RayBatch;
use crate::plugin::{BuildContext, Hooks, Plugin, PluginArgs, ValidateConfig};
use crate::spawn::primitive::{build_primitive, validate_common, PrimitiveShape, PrimitiveSpec};
use crate::spawn::{body_name_for, Friction, Motion, PoseConfig};
use crate::world::bounds::{MAX_LINEAR_SPEED, MAX_POSITION_M, MAX_SIZE_M};

fn d_prefix() -> String {
    "cube1_".into()
}
fn d_clearance() -> f64 {
    0.5
}
fn d_turn() -> [f64; 2] {
    [60.0, 300.0]
}

/// `random_walk:` of `moving_box` (mode B).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RandomWalkConfig {
    /// The walk's own seed (REQUIRED: an unseeded random obstacle is not an experiment); mixed
    /// with the run's episode.
    pub seed: u64,
    /// Free space required ahead (m); below it a new heading is drawn. Default 0.5.
    #[serde(default = "d_clearance")]
    pub clearance: f64,
    /// Optional axis-aligned box `[x0, y0, x1, y1]` (m, world) the centre stays inside.
    #[serde(default)]
    pub bounds: Option<[f64; 4]>,
    /// Heading change range `[lo, hi]` (degrees), drawn uniformly. Default [60, 300].
    #[serde(default = "d_turn")]
    pub turn_deg: [f64; 2],
}

/// Config of `moving_box`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MovingBoxConfig {
    /// MJCF name prefix (distinct prefixes for more than one mover). Default `cube1_`.
    #[serde(default = "d_prefix")]
    pub prefix: String,
    /// Full extents [x, y, z] (m) (REQUIRED).
    pub size: [f64; 3],
    /// Start pose, where every reset puts it; omit `position.z` to sit it on the floor. The
    /// orientation is constant (the box travels without turning). Default: the origin.
    #[serde(default)]
    pub pose: PoseConfig,
    /// Speed along the route or walk (m/s, REQUIRED, > 0).
    pub speed: f64,
    /// [r, g, b] or [r, g, b, a] in 0..1. Default a light warehouse grey.
    #[serde(default)]
    pub color: Option<Vec<f64>>,
    /// false: nothing bumps into it (rays still see it). Default true.
    #[serde(default = "crate::plugin::yes")]
    pub collide: bool,
    /// Sliding friction, or the full [sliding, torsional, rolling] triple. Default 1.0.
    #[serde(default)]
    pub friction: Option<Friction>,
    /// Mode A: waypoints [[x, y], ...] (m, world); the route starts at `pose`.
    #[serde(default)]
    pub waypoints: Option<Vec<[f64; 2]>>,
    /// Mode A: cycle the route (true, default) or stop at the last waypoint (false).
    #[serde(default, rename = "loop")]
    pub loop_route: Option<bool>,
    /// Mode A: reverse at the ends instead of driving back to the start. Default false.
    #[serde(default)]
    pub ping_pong: Option<bool>,
    /// Mode B: a seeded random walk.
    #[serde(default)]
    pub random_walk: Option<RandomWalkConfig>,
    /// false: compiled in, but absent until spawned. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub present: bool,
}

fn finite_xy(p: &[f64; 2]) -> bool {
    p.iter().all(|v| v.is_finite() && v.abs() <= MAX_POSITION_M)
}

fn start_xy(pose: &PoseConfig) -> [f64; 2] {
    let p = pose.resolve(0.0).pos;
    [p[0], p[1]]
}

impl ValidateConfig for MovingBoxConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if self.size.iter().any(|s| !(*s > 0.0 && *s <= MAX_SIZE_M)) {
            e.push(ConfigError::new(
                "size",
                format!(
                    "full extents [x, y, z] must all be in (0, {MAX_SIZE_M}] m, got [{}]",
                    self.size.map(num).join(", ")
                ),
            ));
        }
        e.extend(validate_common(&self.pose, &self.color, &self.friction, None));
        if !(self.speed > 0.0 && self.speed <= MAX_LINEAR_SPEED) {
            e.push(ConfigError::new(
                "speed",
                format!("must be in (0, {MAX_LINEAR_SPEED}] m/s, got {}", num(self.speed)),
            ));
        }
        match (&self.waypoints, &self.random_walk) {
            (None, None) => e.push(ConfigError::new(
                "",
                "give exactly one motion: `waypoints` (mode A, a fixed route) or `random_walk` (mode B, a seeded random walk)",
            )),
            (Some(_), Some(_)) => e.push(ConfigError::new(
                "random_walk",
                "`waypoints` (a fixed route) and `random_walk` are two motions; give exactly one",
            )),
            (Some(w), None) => {
                if w.is_empty() {
                    e.push(ConfigError::new(
                        "waypoints",
                        "is empty: give at least one [x, y] point (m) after the start `pose`",
                    ));
                }
                for (i, p) in w.iter().enumerate() {
                    if !finite_xy(p) {
                        e.push(ConfigError::new(
                            format!("waypoints[{i}]"),
                            format!(
                                "[x, y] must be finite and within ±{MAX_POSITION_M} m, got [{}, {}]",
                                num(p[0]),
                                num(p[1])
                            ),
                        ));
                    }
                }
                let s = start_xy(&self.pose);
                if !w.is_empty() && w.iter().all(|p| *p == s) {
                    e.push(ConfigError::new(
                        "waypoints",
                        "every waypoint is the start `pose`: the route has no length to travel",
                    ));
                }
            }
            (None, Some(rw)) => {
                for (key, set) in [("loop", self.loop_route.is_some()), ("ping_pong", self.ping_pong.is_some())] {
                    if set {
                        e.push(ConfigError::new(
                            key,
                            "belongs to a fixed route (`waypoints`); a random walk has no route to repeat — remove it",
                        ));
                    }
                }
                if !(rw.clearance >= 0.0 && rw.clearance <= MAX_SIZE_M) {
                    e.push(ConfigError::new(
                        "random_walk.clearance",
                        format!("must be in [0, {MAX_SIZE_M}] m, got {}", num(rw.clearance)),
                    ));
                }
                let [lo, hi] = rw.turn_deg;
                if !(lo >= 0.0 && hi <= 360.0 && lo <= hi) {
                    e.push(ConfigError::new(
                        "random_walk.turn_deg",
                        format!("must be [lo, hi] with 0 <= lo <= hi <= 360 (degrees), got [{}, {}]", num(lo), num(hi)),
                    ));
                }
                if let Some(b) = rw.bounds {
                    let [x0, y0, x1, y1] = b;
                    if !(finite_xy(&[x0, y0]) && finite_xy(&[x1, y1]) && x0 < x1 && y0 < y1) {
                        e.push(ConfigError::new(
                            "random_walk.bounds",
                            format!("must be [x0, y0, x1, y1] (m) with x0 < x1 and y0 < y1, got [{}]", b.map(num).join(", ")),
                        ));
                    } else {
                        let [x, y] = start_xy(&self.pose);
                        if !(x0..=x1).contains(&x) || !(y0..=y1).contains(&y) {
                            e.push(ConfigError::new(
                                "random_walk.bounds",
                                format!("the start `pose` ({}, {}) is outside [{}]: put the start inside the bounds", num(x), num(y), b.map(num).join(", ")),
                            ));
                        }
                    }
                }
            }
        }
        e
    }
}

/// How a mode A route repeats.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Repeat {
    /// Cycle: the closing leg back to the start is driven.
    Loop,
    /// Reverse at each end forever.
    PingPong,
    /// Stop at the last waypoint.
    Once,
    /// One out-and-back, then stop at the start.
    PingPongOnce,
}

/// Mode A state: the route's points (start first) and the leg being driven.
#[derive(Debug, Clone)]
struct Route {
    points: Vec<[f64; 2]>,
    repeat: Repeat,
    /// Index of the point being driven toward.
    target: usize,
    /// +1 outward, -1 on the way back (ping-pong).
    dir: isize,
    /// The route is over (loop false at its end).
    done: bool,
}

impl Route {
    fn restart(&mut self) {
        self.target = 1;
        self.dir = 1;
        self.done = false;
    }

    /// Advance `p` by `dist` along the route (crossing as many waypoints as the distance covers).
    fn advance(&mut self, p: &mut [f64; 2], mut dist: f64) {
        let n = self.points.len();
        // A bounded walk over legs: even a step longer than the whole route ends.
        for _ in 0..(4 * n + 8) {
            if self.done || dist <= 0.0 {
                return;
            }
            let t = self.points[self.target];
            let (dx, dy) = (t[0] - p[0], t[1] - p[1]);
            let len = dx.hypot(dy);
            if dist < len {
                p[0] += dx / len * dist;
                p[1] += dy / len * dist;
                return;
            }
            *p = t;
            dist -= len;
            self.next_target();
        }
    }

    fn next_target(&mut self) {
        let last = self.points.len() - 1;
        match self.repeat {
            Repeat::Loop => self.target = (self.target + 1) % (last + 1),
            Repeat::Once => {
                if self.target == last {
                    self.done = true;
                } else {
                    self.target += 1;
                }
            }
            Repeat::PingPong | Repeat::PingPongOnce => {
                if self.dir > 0 && self.target == last {
                    self.dir = -1;
                } else if self.dir < 0 && self.target == 0 {
                    if self.repeat == Repeat::PingPongOnce {
                        self.done = true;
                        return;
                    }
                    self.dir = 1;
                }
                self.target = (self.target as isize + self.dir) as usize;
            }
        }
    }
}

/// Mode B state.
#[derive(Debug, Clone)]
struct Walk {
    cfg: RandomWalkConfig,
    heading: f64,
    /// Draws made this episode (the generator's counter).
    draws: u64,
    /// The clearance probe's ray (cast from six origins in turn).
    ray: RayBatch,
    /// The generator's name (the entity's).
    name: String,
    /// Distance (m) the box may still travel on this heading before it probes again.
    budget: f64,
    /// Physics steps between probes while the way is clear.
    probe_every: u32,
}

/// Longest time (s) between two clearance probes while the way ahead is clear: between probes
/// the box travels only what the last probe found free beyond `clearance`, so a static obstacle
/// is never approached closer than `clearance`, and a moving one is seen within this period.
pub const PROBE_PERIOD_S: f64 = 0.02;

/// What the probe needs to know about the box.
#[derive(Debug, Clone, Copy, Default)]
struct Shape {
    /// Half-extents of its world-axis-aligned footprint (x, y).
    footprint: [f64; 2],
    /// Half its height (m).
    half_height: f64,
    /// Its body id (the probe ignores its own geom).
    body: usize,
}

impl Walk {
    fn restart(&mut self, heading: f64) {
        self.draws = 0;
        self.heading = heading;
        self.budget = 0.0;
    }

    /// The next uniform draw of this episode, in [0, 1).
    fn draw(&mut self, episode: u32) -> f64 {
        let mut r = SimRng::new(self.cfg.seed, episode, self.draws, &self.name);
        self.draws += 1;
        r.uniform()
    }

    /// Free distance ahead of the box's face along `heading` (m; +inf when nothing is within
    /// `reach`).
    fn probe(&mut self, ctx: &mut SimContext, shape: &Shape, p: [f64; 3], reach: f64) -> f64 {
        let (c, s) = (self.heading.cos(), self.heading.sin());
        let [ax, ay] = shape.footprint;
        // the footprint's extent ahead and across the heading
        let ahead = c.abs() * ax + s.abs() * ay;
        let across = s.abs() * ax + c.abs() * ay;
        self.ray.set_dir(0, [c, s, 0.0]);
        let mut free = f64::INFINITY;
        // three origins across the footprint (both edges and the centre), at the centre height
        // and near the bottom: a low obstacle is seen too
        for z in [p[2], p[2] - 0.9 * shape.half_height] {
            for side in [-1.0, 0.0, 1.0] {
                let o = [p[0] - s * across * side, p[1] + c * across * side, z];
                self.ray.cast(ctx.data_mut(), o, Some(shape.body), None, true, ahead + reach);
                let d = self.ray.dist()[0];
                if d >= 0.0 {
                    free = free.min(d - ahead);
                }
            }
        }
        free
    }

    /// One step of `dist` from `p`: go on straight, or stand and turn. The way ahead is probed
    /// when the distance the last probe cleared is used up (at most every `probe_every` steps,
    /// and on the first step of every new heading).
    fn step(&mut self, ctx: &mut SimContext, shape: &Shape, p: &mut [f64; 3], dist: f64) {
        let next = [p[0] + self.heading.cos() * dist, p[1] + self.heading.sin() * dist];
        let inside = self.cfg.bounds.is_none_or(|[x0, y0, x1, y1]| {
            (x0..=x1).contains(&next[0]) && (y0..=y1).contains(&next[1])
        });
        let clearance = self.cfg.clearance;
        if inside && self.budget < dist {
            let lookahead = dist * self.probe_every as f64;
            let free = self.probe(ctx, shape, *p, clearance + lookahead) - clearance;
            self.budget = free.min(lookahead);
        }
        if inside && self.budget >= dist {
            p[0] = next[0];
            p[1] = next[1];
            self.budget -= dist;
            return;
        }
        let [lo, hi] = self.cfg.turn_deg;
        let turn = (lo + (hi - lo) * self.draw(ctx.episode)).to_radians();
        self.heading = (self.heading + turn).rem_euclid(std::f64::consts::TAU);
        self.budget = 0.0;
    }
}

/// The motion: exactly one of the two modes.
#[derive(Debug, Clone)]
enum Mode {
    Route(Route),
    Walk(Walk),
}

/// The `moving_box` plugin.
pub struct MovingBox {
    spec: PrimitiveSpec,
    size: [f64; 3],
    speed: f64,
    mode: Mode,
    /// Start position (the resolved `pose`, floor offset included).
    start: [f64; 3],
    /// Yaw of the start pose: the walk's first heading (rad).
    yaw: f64,
    shape: Shape,
    mocap: usize,
    /// Where the box is (x, y, z), as last written to mocap_pos.
    pos: [f64; 3],
}

impl MovingBox {
    /// Construct from config (validation guarantees exactly one mode).
    pub fn new(cfg: MovingBoxConfig, args: &PluginArgs) -> Self {
        let start = start_xy(&cfg.pose);
        let mode = match (&cfg.waypoints, &cfg.random_walk) {
            (Some(w), _) => {
                let mut points = vec![start];
                points.extend(w.iter().copied());
                let repeat = match (cfg.loop_route.unwrap_or(true), cfg.ping_pong.unwrap_or(false))
                {
                    (true, false) => Repeat::Loop,
                    (true, true) => Repeat::PingPong,
                    (false, false) => Repeat::Once,
                    (false, true) => Repeat::PingPongOnce,
                };
                Mode::Route(Route { points, repeat, target: 1, dir: 1, done: false })
            }
            (None, rw) => Mode::Walk(Walk {
                cfg: rw.clone().expect("validated: exactly one mode"),
                heading: 0.0,
                draws: 0,
                ray: RayBatch::new(1),
                name: args.address.clone(),
                budget: 0.0,
                probe_every: 1,
            }),
        };
        MovingBox {
            spec: PrimitiveSpec {
                entity: args.address.clone(),
                body: body_name_for(&cfg.prefix, &args.address),
                prefix: cfg.prefix,
                shape: PrimitiveShape::Box(cfg.size),
                pose: cfg.pose,
                color: cfg.color,
                collide: cfg.collide,
                friction: cfg.friction,
                motion: Motion::Driven,
                mass: None,
                present: cfg.present,
            },
            size: cfg.size,
            speed: cfg.speed,
            mode,
            start: [0.0; 3],
            yaw: 0.0,
            shape: Shape::default(),
            mocap: 0,
            pos: [0.0; 3],
        }
    }
}

impl Plugin for MovingBox {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD | Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::PRE_STEP
    }

    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        build_primitive(spec, b.ctx, &self.spec)?;
        let pose = b.ctx.entities.get(&self.spec.entity).expect("just registered").initial_pose;
        self.start = pose.pos;
        self.yaw = crate::math::yaw_of(&pose.quat);
        let half = self.size.map(|s| s / 2.0);
        // Column j of the rotation is the box's axis j in the world.
        let r = crate::math::quat(&pose.quat).to_rotation_matrix();
        self.shape.footprint = [0, 1].map(|k| (0..3).map(|j| r[(k, j)].abs() * half[j]).sum());
        self.shape.half_height = (0..3).map(|j| r[(2, j)].abs() * half[j]).sum();
        Ok(())
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let m = ctx.model();
        let b = m
            .name_to_id(MjtObjBase::mjOBJ_BODY, &self.spec.body)
            .ok_or_else(|| format!("body `{}` missing after compile", self.spec.body))?;
        let mocap = m.body_mocapid()[b];
        if mocap < 0 {
            return Err(format!("body `{}` is not a mocap body after compile", self.spec.body));
        }
        self.shape.body = b;
        self.mocap = mocap as usize;
        crate::plugins::shared::owner::claim_mover(
            ctx,
            &format!("`moving_box` at `{}`", self.spec.entity),
            &self.spec.entity,
        )?;
        if let Mode::Walk(w) = &mut self.mode {
            w.probe_every = ((PROBE_PERIOD_S / ctx.dt).round() as u32).max(1);
        }
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.pos = self.start;
        match &mut self.mode {
            Mode::Route(r) => r.restart(),
            Mode::Walk(w) => w.restart(self.yaw),
        }
        let (id, p) = (self.mocap, self.pos);
        ctx.data_mut().mocap_pos_mut()[id] = p;
        Ok(())
    }

    fn pre_step(&mut self, ctx: &mut SimContext) -> HookResult {
        // A teleport (SetEntityState, a spawn at a pose) is adopted: continue from there.
        let cur = ctx.data().mocap_pos()[self.mocap];
        if cur.map(f64::to_bits) != self.pos.map(f64::to_bits) {
            self.pos = cur;
            if let Mode::Walk(w) = &mut self.mode {
                w.budget = 0.0; // a new place: look before moving
            }
        }
        if !ctx.entities.get(&self.spec.entity).is_some_and(|e| e.present) {
            return Ok(());
        }
        let dist = self.speed * ctx.dt;
        match &mut self.mode {
            Mode::Route(r) => {
                let mut xy = [self.pos[0], self.pos[1]];
                r.advance(&mut xy, dist);
                self.pos[0] = xy[0];
                self.pos[1] = xy[1];
            }
            Mode::Walk(w) => w.step(ctx, &self.shape, &mut self.pos, dist),
        }
        let (id, p) = (self.mocap, self.pos);
        ctx.data_mut().mocap_pos_mut()[id] = p;
        Ok(())
    }
}

/// The registry entry of `moving_box`.
pub fn descriptor() -> crate::plugin::PluginDescriptor {
    crate::plugin_descriptor!(
        "moving_box",
        "A driven (mocap) box obstacle on a fixed route (waypoints; loop, ping_pong) or a seeded random walk (clearance probe, bounds, turn_deg).",
        MovingBoxConfig,
        MovingBox
    )
}
