//! `navigator`'s config: the route, how it is tracked, what the mover does about what the plan did
//! not contain, and the planner grid's terms. Every refusal names its key.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::{num, ConfigError};
use crate::plugin::{check_rate, ValidateConfig};
use crate::world::bounds::{
    MAX_ANGULAR_SPEED, MAX_LINEAR_SPEED, MAX_NAV_DISTANCE_M as MAX_D, MAX_POSITION_M,
};

pub use crate::world::bounds::MAX_DWELL_S;
/// Largest heading gain (1/s): a thousandth of a second to turn out a radian.
pub const MAX_HEADING_GAIN: f64 = 1e3;

/// Endpoint roles (keys of `topics:`).
pub const ROLES: [&str; 7] =
    ["navigate_to_pose", "navigate_through_poses", "start", "stop", "goal", "reached", "stuck"];

/// Config of `navigator`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NavigatorConfig {
    /// `auto` (a base controller's `robot:<entity>` handle when there is one, else the entity's
    /// mocap body), `drive` (through the handle: diff, omni and Ackermann bases) or `mocap`
    /// (writes the entity's mocap pose: a driven prop).
    #[serde(default)]
    pub output: Output,
    /// Speed the route is followed at (m/s; REQUIRED, > 0).
    pub speed: f64,
    /// The route, world metres: `[x, y]` or `[x, y, yaw]` each. Empty: hold until a goal arrives
    /// (the goal endpoints or the blackboard handle).
    #[serde(default)]
    pub goals: Vec<Vec<f64>>,
    /// Seconds to stand still on reaching a point: one number, `[lo, hi]` for a seeded random
    /// pause, or a list of either with one entry per route point, the mover's start first. Default 0.
    #[serde(default)]
    pub dwell: Option<Dwell>,
    /// `plan` (A* between the points, around the static geometry) or `exact` (the points are the path).
    #[serde(default)]
    pub route_mode: RouteMode,
    /// `waypoint` (steer at the next point) or `pure_pursuit` (steer at a carrot `lookahead` along
    /// the route).
    #[serde(default)]
    pub tracker: Tracker,
    /// Carrot distance of `pure_pursuit` (m). Default 0.6.
    #[serde(default = "d_lookahead")]
    pub lookahead: f64,
    /// false: hold at the start until started (the `start` service or the handle). Default true.
    #[serde(default = "crate::plugin::yes")]
    pub autostart: bool,
    /// Cycle the route forever instead of stopping at the last point. Default false.
    #[serde(default, rename = "loop")]
    pub loop_route: bool,
    /// Distance (m) at which a goal counts as reached. Default 0.25.
    #[serde(default = "d_arrival")]
    pub arrival_radius: f64,
    /// What the mover does about what the plan did not contain.
    #[serde(default)]
    pub avoidance: Avoidance,
    /// `auto` (asks the base controller: diff → unicycle, omni → holonomic, Ackermann →
    /// ackermann), `unicycle`, `holonomic` or `ackermann`. Drive output only.
    #[serde(default)]
    pub kinematics: Kinematics,
    /// Yaw-rate command per radian of heading error (1/s). Default 2.0.
    #[serde(default = "d_heading_gain")]
    pub heading_gain: f64,
    /// Cap on the commanded yaw rate before the base's own clip (rad/s). Default 1.5.
    #[serde(default = "d_max_angular")]
    pub max_angular_vel: f64,
    /// A goal's yaw counts as reached when the heading is within this of it (rad; nav2's goal
    /// checker's name). Drive output only: a mocap mover turns to the yaw exactly. Default 0.02.
    #[serde(default = "d_yaw_goal_tolerance")]
    pub yaw_goal_tolerance: f64,
    /// Heading error (rad) above which a unicycle base pivots in place. Default 0.8.
    #[serde(default = "d_turn_in_place")]
    pub turn_in_place: f64,
    /// Slowest forward speed an Ackermann base is commanded (m/s; it cannot pivot). Default 0.15.
    #[serde(default = "d_min_speed")]
    pub min_speed: f64,
    /// Holonomic bases: `travel` (face the direction of travel) or `hold` (keep the start heading).
    #[serde(default)]
    pub face: Face,
    /// Mocap output: rate the body is turned to face its travel (rad/s; 0 = at once). Default 3.0.
    #[serde(default = "d_yaw_rate")]
    pub yaw_rate: f64,
    /// Height band `[lo, hi]` (m) a static geom must overlap to be a wall for this mover. Default [0.05, 0.6].
    #[serde(default = "d_band")]
    pub obstacle_height: [f64; 2],
    /// Planner grid cell (m). Default 0.05.
    #[serde(default = "d_resolution")]
    pub resolution: f64,
    /// Planner terms.
    #[serde(default)]
    pub planner: Planner,
    /// Getting unstuck.
    #[serde(default)]
    pub recovery: Recovery,
    /// Rate the navigation pipeline runs at (Hz; physics steps faster). Default 20.
    #[serde(default = "d_update_hz")]
    pub update_hz: f64,
    /// Rename endpoints by role (`navigate_to_pose`, `navigate_through_poses`, `start`, `stop`,
    /// `goal`, `reached`, `stuck`): a relative name is placed in the entity's namespace, `/name`
    /// is absolute. Two navigators in one namespace (two driven props) need this.
    #[serde(default)]
    pub topics: std::collections::BTreeMap<String, String>,
}

fn d_lookahead() -> f64 {
    0.6
}
fn d_arrival() -> f64 {
    0.25
}
fn d_heading_gain() -> f64 {
    2.0
}
fn d_max_angular() -> f64 {
    1.5
}
/// Default `yaw_goal_tolerance` (rad): about 1.1°, which a base turning at `heading_gain` × the
/// error closes within a second of reaching 0.05 rad.
pub const DEFAULT_YAW_GOAL_TOLERANCE: f64 = 0.02;
fn d_yaw_goal_tolerance() -> f64 {
    DEFAULT_YAW_GOAL_TOLERANCE
}
fn d_turn_in_place() -> f64 {
    0.8
}
fn d_min_speed() -> f64 {
    0.15
}
fn d_yaw_rate() -> f64 {
    3.0
}
fn d_band() -> [f64; 2] {
    [0.05, 0.6]
}
fn d_resolution() -> f64 {
    0.05
}
fn d_update_hz() -> f64 {
    20.0
}

/// What moves the entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Output {
    /// The base controller's handle when the entity has one, else its mocap body.
    #[default]
    Auto,
    /// Twists through the `robot:<entity>` handle.
    Drive,
    /// The entity's mocap pose.
    Mocap,
}

/// How the route between points is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RouteMode {
    /// A* on the planner grid between consecutive points.
    #[default]
    Plan,
    /// The points are the path.
    Exact,
}

/// How the mover steers along the route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Tracker {
    /// Steer at the next point; advance within the arrival (goals) or waypoint (path points) radius.
    #[default]
    Waypoint,
    /// Steer at a carrot `lookahead` along the route; advance on crossing a goal.
    PurePursuit,
}

/// The drive kinematics commands are shaped for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kinematics {
    /// Ask the base controller.
    #[default]
    Auto,
    /// Forward speed + yaw rate; pivots in place above `turn_in_place`.
    Unicycle,
    /// Any planar velocity.
    Holonomic,
    /// Forward speed (at least `min_speed`) + yaw rate; never pivots.
    Ackermann,
}

/// Heading of a holonomic base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Face {
    /// Face the direction of travel.
    #[default]
    Travel,
    /// Keep the start heading.
    Hold,
}

/// Which model gives way (`avoidance.steer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Steer {
    /// Nothing steers around: the probe stops, `reroute` plans around.
    #[default]
    None,
    /// ORCA velocity obstacles in which this mover takes all of the avoidance against everything
    /// that moves (it yields; the others need not react).
    GiveWay,
    /// Reciprocal ORCA: half the avoidance against another navigator that also steers with
    /// `orca`, all of it against everything else that moves.
    Orca,
}

/// `avoidance.params`: the steering model's per-agent keys.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SteerParams {
    /// Movers whose centres are within this distance are considered (m). Default 3.0.
    #[serde(default)]
    pub neighbor_dist: Option<f64>,
    /// How far ahead collisions are avoided (s). Default 2.0.
    #[serde(default)]
    pub time_horizon: Option<f64>,
    /// Radius of the mover's disc (m): its body plus the clearance it keeps. Default: half of
    /// `avoidance.width`.
    #[serde(default)]
    pub radius: Option<f64>,
}

/// Default `avoidance.params.neighbor_dist` (m).
pub const DEFAULT_STEER_NEIGHBOR_DIST: f64 = 3.0;
/// Default `avoidance.params.time_horizon` (s).
pub const DEFAULT_STEER_TIME_HORIZON: f64 = 2.0;

/// One dwell: a fixed time or a seeded random one.
#[derive(Debug, Clone, Copy, PartialEq, JsonSchema)]
#[serde(untagged)]
pub enum DwellPoint {
    /// Seconds.
    Fixed(f64),
    /// `[lo, hi]`: uniform in the range (s), drawn from the run's seed.
    Range([f64; 2]),
}

/// `dwell:`: one value for every point, or one per route point (the start first).
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[serde(untagged)]
pub enum Dwell {
    /// The same dwell at every point.
    All(DwellPoint),
    /// One per route point, the mover's start first.
    Each(Vec<DwellPoint>),
}

/// By hand, so a wrong shape is told what the key takes: a number, `[lo, hi]`, or a list of
/// either (a list of exactly two numbers reads as `[lo, hi]`).
impl<'de> Deserialize<'de> for Dwell {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Elem {
            N(f64),
            L(Vec<f64>),
        }
        const TAKES: &str = "dwell takes seconds (2.0), a random range [lo, hi], or a list of either with one entry per route point (the start first)";
        let v = serde_norway::Value::deserialize(d)?;
        let err = |m: String| serde::de::Error::custom(m);
        let point = |e: Elem| match e {
            Elem::N(x) => Ok(DwellPoint::Fixed(x)),
            Elem::L(l) if l.len() == 2 => Ok(DwellPoint::Range([l[0], l[1]])),
            Elem::L(l) => Err(format!("{TAKES}; an entry held a list of {} numbers", l.len())),
        };
        match v {
            serde_norway::Value::Number(n) => {
                Ok(Dwell::All(DwellPoint::Fixed(n.as_f64().unwrap_or(f64::NAN))))
            }
            serde_norway::Value::Sequence(s) => {
                let elems: Vec<Elem> = s
                    .into_iter()
                    .map(|x| {
                        serde_norway::from_value(x)
                            .map_err(|_| format!("{TAKES}; an entry is not a number or a list"))
                    })
                    .collect::<Result<_, _>>()
                    .map_err(err)?;
                if elems.len() == 2 && elems.iter().all(|e| matches!(e, Elem::N(_))) {
                    let x: Vec<f64> =
                        elems.iter().map(|e| if let Elem::N(x) = e { *x } else { 0.0 }).collect();
                    return Ok(Dwell::All(DwellPoint::Range([x[0], x[1]])));
                }
                Ok(Dwell::Each(
                    elems.into_iter().map(point).collect::<Result<_, _>>().map_err(err)?,
                ))
            }
            _ => Err(err(TAKES.to_string())),
        }
    }
}

impl Dwell {
    /// The dwell of route point `k` (0 = the start).
    pub fn at(&self, k: usize) -> DwellPoint {
        match self {
            Dwell::All(p) => *p,
            Dwell::Each(v) => v.get(k).copied().unwrap_or(DwellPoint::Fixed(0.0)),
        }
    }
}

/// `avoidance:` — three independent capabilities and the forward probe's tuning.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Avoidance {
    /// Look ahead and hold until the way is clear. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub stop: bool,
    /// Which model gives way: `none`, `give_way` or `orca`.
    #[serde(default)]
    pub steer: Steer,
    /// The steering model's keys (`neighbor_dist`, `time_horizon`, `radius`); needs a `steer` model.
    #[serde(default)]
    pub params: SteerParams,
    /// Remember what stopped the mover and plan around it (needs `stop` and `route_mode: plan`). Default false.
    #[serde(default)]
    pub reroute: bool,
    /// Clear corridor needed ahead of the mover's FRONT (m). Default 1.2.
    #[serde(default = "d_probe_lookahead")]
    pub lookahead: f64,
    /// Corridor width swept (m): the body plus the clearance it keeps. Default 0.6.
    #[serde(default = "d_probe_width")]
    pub width: f64,
    /// Rays across the width. Default 5.
    #[serde(default = "d_probe_rays")]
    pub rays: u32,
    /// Height above the floor the probe scans at (m); 0 = just above `obstacle_height`'s floor.
    #[serde(default)]
    pub height: f64,
    /// Seconds the way must stay open before setting off again. Default 0.5.
    #[serde(default = "d_clear_time")]
    pub clear_time: f64,
    /// Seconds a blockage reads as traffic before `reroute` plans around it. Default 3.0.
    #[serde(default = "d_yield_time")]
    pub yield_time: f64,
    /// Seconds a remembered blockage keeps steering the planner (`reroute`). Default 5.0.
    #[serde(default = "d_forget_after")]
    pub forget_after: f64,
    /// Radius of the disc a blockage marks (m); 0 = half the corridor width.
    #[serde(default)]
    pub blockage_radius: f64,
    /// Entities this mover never stops for.
    #[serde(default)]
    pub ignore: Vec<String>,
}

impl Default for Avoidance {
    fn default() -> Self {
        Avoidance {
            stop: true,
            steer: Steer::None,
            params: SteerParams::default(),
            reroute: false,
            lookahead: d_probe_lookahead(),
            width: d_probe_width(),
            rays: d_probe_rays(),
            height: 0.0,
            clear_time: d_clear_time(),
            yield_time: d_yield_time(),
            forget_after: d_forget_after(),
            blockage_radius: 0.0,
            ignore: Vec::new(),
        }
    }
}

fn d_probe_lookahead() -> f64 {
    1.2
}
fn d_probe_width() -> f64 {
    0.6
}
fn d_probe_rays() -> u32 {
    5
}
fn d_clear_time() -> f64 {
    0.5
}
fn d_yield_time() -> f64 {
    3.0
}
fn d_forget_after() -> f64 {
    5.0
}

/// `planner:`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Planner {
    /// Clearance kept from walls (m): the grid is inflated by it. Default 0.35.
    #[serde(default = "d_inflation")]
    pub inflation_radius: f64,
    /// Distance (m) at which an intermediate point of a planned path counts as passed (waypoint
    /// tracker). Default 0.3.
    #[serde(default = "d_waypoint_radius")]
    pub waypoint_radius: f64,
}

impl Default for Planner {
    fn default() -> Self {
        Planner { inflation_radius: d_inflation(), waypoint_radius: d_waypoint_radius() }
    }
}

fn d_inflation() -> f64 {
    0.35
}
fn d_waypoint_radius() -> f64 {
    0.3
}

/// `recovery:`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Recovery {
    /// false: a mover that stops making progress gives up at once. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub enabled: bool,
    /// Seconds without progress (under 5 cm) that count as stuck. Default 1.5.
    #[serde(default = "d_stuck_time")]
    pub stuck_time: f64,
    /// Seconds a recovery backs up before planning again. Default 0.5.
    #[serde(default = "d_backup_time")]
    pub backup_time: f64,
    /// Recoveries per goal before giving up. Default 4.
    #[serde(default = "d_max_recovery")]
    pub max_recovery: u32,
}

impl Default for Recovery {
    fn default() -> Self {
        Recovery {
            enabled: true,
            stuck_time: d_stuck_time(),
            backup_time: d_backup_time(),
            max_recovery: d_max_recovery(),
        }
    }
}

fn d_stuck_time() -> f64 {
    1.5
}
fn d_backup_time() -> f64 {
    0.5
}
fn d_max_recovery() -> u32 {
    4
}

/// Keys that shape the twist a `drive` output sends (meaningless for a mocap body).
pub const DRIVE_ONLY: &[&str] = &[
    "kinematics",
    "heading_gain",
    "max_angular_vel",
    "yaw_goal_tolerance",
    "turn_in_place",
    "min_speed",
    "face",
    "recovery",
];
/// Keys that shape a mocap body's motion (meaningless for a driven base).
pub const MOCAP_ONLY: &[&str] = &["yaw_rate"];

/// The top-level keys written in the entry (a key left out takes its default).
pub fn given_keys(v: &serde_norway::Value) -> Vec<String> {
    v.as_mapping()
        .map(|m| m.keys().filter_map(|k| k.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

/// Keys written for the other output than the one that moves the entity: `mocap` true when the
/// navigator writes a mocap body. `why` says how the output was chosen.
pub fn output_key_errors(
    cfg: &NavigatorConfig,
    given: &[String],
    mocap: bool,
    why: &str,
) -> Vec<ConfigError> {
    let mut e = Vec::new();
    if mocap {
        for k in DRIVE_ONLY.iter().filter(|k| given.iter().any(|g| g == *k)) {
            e.push(ConfigError::new(
                *k,
                format!("shapes the twist a drive output sends through a base controller, and this navigator writes a mocap body ({why}), which follows its path exactly: drop the key"),
            ));
        }
        if cfg.avoidance.steer != Steer::None {
            e.push(ConfigError::new(
                "avoidance.steer",
                format!("steers a base through its controller, and this navigator writes a mocap body ({why}), which follows its path exactly: use `output: drive`, or a `walker` with `avoidance: true` for a person that gives way"),
            ));
        }
    } else {
        for k in MOCAP_ONLY.iter().filter(|k| given.iter().any(|g| g == *k)) {
            e.push(ConfigError::new(
                *k,
                format!("turns a mocap body, and this navigator drives a base through its controller ({why}), whose turn rate is `max_angular_vel`: drop the key"),
            ));
        }
    }
    e
}

/// A positive, finite value up to `max` at `key`.
fn positive(e: &mut Vec<ConfigError>, key: &str, v: f64, max: f64, unit: &str) {
    if !(v > 0.0 && v <= max) {
        e.push(ConfigError::new(key, format!("must be in (0, {max}] {unit}, got {}", num(v))));
    }
}

/// A non-negative, finite value up to `max` at `key`.
fn non_negative(e: &mut Vec<ConfigError>, key: &str, v: f64, max: f64, unit: &str) {
    if !(v >= 0.0 && v <= max) {
        e.push(ConfigError::new(key, format!("must be in [0, {max}] {unit}, got {}", num(v))));
    }
}

fn check_dwell_point(e: &mut Vec<ConfigError>, key: &str, p: DwellPoint) {
    match p {
        DwellPoint::Fixed(x) => non_negative(e, key, x, MAX_DWELL_S, "s"),
        DwellPoint::Range([lo, hi]) => {
            if !(lo >= 0.0 && lo <= hi && hi <= MAX_DWELL_S) {
                e.push(ConfigError::new(
                    key,
                    format!("a random dwell [lo, hi] needs 0 <= lo <= hi <= {MAX_DWELL_S} s, got [{}, {}]", num(lo), num(hi)),
                ));
            }
        }
    }
}

impl ValidateConfig for NavigatorConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        e.extend(crate::plugins::shared::check_topics(&self.topics, &ROLES));
        positive(&mut e, "speed", self.speed, MAX_LINEAR_SPEED, "m/s");
        for (k, g) in self.goals.iter().enumerate() {
            let key = format!("goals[{k}]");
            if !(g.len() == 2 || g.len() == 3) {
                e.push(ConfigError::new(
                    &key,
                    format!("a goal is [x, y] or [x, y, yaw] (world metres, yaw in rad), got {} numbers", g.len()),
                ));
            } else if g[..2].iter().any(|v| !v.is_finite() || v.abs() > MAX_POSITION_M) {
                e.push(ConfigError::new(
                    &key,
                    format!(
                        "x and y must be finite and within {MAX_POSITION_M} m, got [{}]",
                        g.iter().map(|v| num(*v)).collect::<Vec<_>>().join(", ")
                    ),
                ));
            } else if g.len() == 3 && !g[2].is_finite() {
                e.push(ConfigError::new(
                    &key,
                    format!("yaw must be finite (rad), got {}", num(g[2])),
                ));
            }
        }
        match &self.dwell {
            Some(Dwell::All(p)) => check_dwell_point(&mut e, "dwell", *p),
            Some(Dwell::Each(v)) => {
                if v.len() != self.goals.len() + 1 {
                    e.push(ConfigError::new(
                        "dwell",
                        format!(
                            "a per-point dwell list has one entry per route point, the mover's start first: {} goals need {} entries, got {}",
                            self.goals.len(),
                            self.goals.len() + 1,
                            v.len()
                        ),
                    ));
                }
                for (k, p) in v.iter().enumerate() {
                    check_dwell_point(&mut e, &format!("dwell[{k}]"), *p);
                }
            }
            None => {}
        }
        if self.loop_route && self.goals.len() == 1 {
            e.push(ConfigError::new(
                "loop",
                "a looping route needs at least two goals (one goal is reached once and held)",
            ));
        }
        positive(&mut e, "lookahead", self.lookahead, MAX_D, "m");
        positive(&mut e, "arrival_radius", self.arrival_radius, MAX_D, "m");
        positive(&mut e, "heading_gain", self.heading_gain, MAX_HEADING_GAIN, "1/s");
        positive(&mut e, "max_angular_vel", self.max_angular_vel, MAX_ANGULAR_SPEED, "rad/s");
        positive(&mut e, "turn_in_place", self.turn_in_place, std::f64::consts::PI, "rad");
        positive(
            &mut e,
            "yaw_goal_tolerance",
            self.yaw_goal_tolerance,
            std::f64::consts::PI,
            "rad",
        );
        non_negative(&mut e, "min_speed", self.min_speed, MAX_LINEAR_SPEED, "m/s");
        non_negative(&mut e, "yaw_rate", self.yaw_rate, MAX_ANGULAR_SPEED, "rad/s");
        let [lo, hi] = self.obstacle_height;
        if !(lo.is_finite() && hi.is_finite() && lo < hi && lo.abs() <= MAX_D && hi.abs() <= MAX_D)
        {
            e.push(ConfigError::new(
                "obstacle_height",
                format!(
                    "a band [lo, hi] with lo < hi (m above the floor), got [{}, {}]",
                    num(lo),
                    num(hi)
                ),
            ));
        }
        positive(&mut e, "resolution", self.resolution, 10.0, "m");
        non_negative(&mut e, "planner.inflation_radius", self.planner.inflation_radius, MAX_D, "m");
        positive(&mut e, "planner.waypoint_radius", self.planner.waypoint_radius, MAX_D, "m");
        positive(&mut e, "recovery.stuck_time", self.recovery.stuck_time, MAX_DWELL_S, "s");
        non_negative(&mut e, "recovery.backup_time", self.recovery.backup_time, 60.0, "s");
        if let Some(x) = check_rate("update_hz", self.update_hz) {
            e.push(x);
        }
        let a = &self.avoidance;
        positive(&mut e, "avoidance.lookahead", a.lookahead, MAX_D, "m");
        positive(&mut e, "avoidance.width", a.width, MAX_D, "m");
        if !(1..=1000).contains(&a.rays) {
            e.push(ConfigError::new(
                "avoidance.rays",
                format!("must be in 1..=1000, got {}", a.rays),
            ));
        }
        non_negative(&mut e, "avoidance.height", a.height, MAX_D, "m");
        non_negative(&mut e, "avoidance.clear_time", a.clear_time, MAX_DWELL_S, "s");
        non_negative(&mut e, "avoidance.yield_time", a.yield_time, MAX_DWELL_S, "s");
        non_negative(&mut e, "avoidance.forget_after", a.forget_after, MAX_DWELL_S, "s");
        non_negative(&mut e, "avoidance.blockage_radius", a.blockage_radius, MAX_D, "m");
        if a.reroute && !a.stop {
            e.push(ConfigError::new(
                "avoidance.reroute",
                "reroute plans around what the probe stopped for, so it needs `avoidance.stop: true`",
            ));
        }
        let sp = &a.params;
        if let Some(x) = sp.neighbor_dist {
            positive(&mut e, "avoidance.params.neighbor_dist", x, MAX_D, "m");
        }
        if let Some(x) = sp.time_horizon {
            positive(&mut e, "avoidance.params.time_horizon", x, MAX_DWELL_S, "s");
        }
        if let Some(x) = sp.radius {
            positive(&mut e, "avoidance.params.radius", x, MAX_D, "m");
        }
        if a.steer == Steer::None {
            for (k, set) in [
                ("neighbor_dist", sp.neighbor_dist.is_some()),
                ("time_horizon", sp.time_horizon.is_some()),
                ("radius", sp.radius.is_some()),
            ] {
                if set {
                    e.push(ConfigError::new(
                        format!("avoidance.params.{k}"),
                        "tunes the steering model, and `avoidance.steer` is `none`: set `steer: give_way` or `steer: orca`, or drop the key",
                    ));
                }
            }
        }
        if a.reroute && self.route_mode == RouteMode::Exact {
            e.push(ConfigError::new(
                "avoidance.reroute",
                "reroute plans a new path, and `route_mode: exact` follows the given points as they are; use `route_mode: plan`",
            ));
        }
        e
    }
}
