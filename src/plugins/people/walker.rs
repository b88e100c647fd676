//! `walker`: a kinematic pedestrian — a capsule person on a mocap body that patrols a route.
//!
//! The person is one capsule of the walker's `orca.radius` (default 0.26 m: half an adult's
//! shoulder breadth, about 0.23 m, plus room for the arm swing), its top [`PERSON_HEIGHT`] above
//! the floor and its lower cap sunk below it, so at every height a sensor scans from the floor to
//! the shoulders the person is a full disc of that radius — the disc ORCA and the other agents
//! avoid. It sits in geom group 0 with default contact bits: cameras and the lidar see it, contact
//! and clearance monitors measure it, a robot that drives into it is stopped by it (a mocap body
//! is not pushed). It faces the way it walks.
//!
//! Route: `waypoints` (2 or more; the walker starts at the first) are walked at `speed` in turn,
//! each reached within `arrival_radius`; at each it stands for its own dwell (a third item:
//! seconds, or `[lo, hi]` for a pause drawn uniformly from the run's seeded generator at the
//! moment of arrival) or the walker's `dwell`. `loop` (default true) heads back to the first point
//! after the last; without it the walker stays at the last. Without waypoints it stands at `pos`.
//! The legs are straight lines: route them clear of walls (a walker steers around agents, not
//! scenery).
//!
//! Avoidance: every walker of a world shares one crowd controller (`super::crowd`). A walker with
//! `avoidance: true` runs ORCA against the other walkers (half the avoidance each with another
//! avoiding walker, all of it against one that does not avoid), the robot (`robot_body`, a disc of
//! `robot_radius` moving at its measured velocity, which does not react) and every driven (mocap)
//! prop; one without walks its route and is avoided by the others. An avoiding walker re-decides
//! its velocity at `orca.update_hz` and whenever its route or presence changes, and moves every
//! physics step in between.
//!
//! Recovery (`recovery`, off unless given; avoiding walkers): a walker that giving way holds
//! without 5 cm of progress toward its target for `stuck_time` backs up for `backup_time`; after
//! `max_recovery` recoveries on one target it gives it up — a patrol heads for its next point, a
//! goal fails (nav2's FAILED_TO_MAKE_PROGRESS).
//!
//! Goals (`goal_endpoint`, default true): nav2 NavigateToPose / NavigateThroughPoses endpoints at
//! `<body>/navigate_to_pose` and `<body>/navigate_through_poses` (renamed by `action_name`); a
//! goal is planned by A* on the shared planner grid and replaces the patrol, and the walker turns
//! to the last pose's yaw on arrival (`super::goal`).
//!
//! The walker registers an entity of kind person (simulation_interfaces CATEGORY_HUMAN) named by
//! the entry's address, its body `<address with dots as _>`: SetEntityState moves it (it walks on
//! from there), DeleteEntity / `present: false` make it absent — it then stands still, invisible to
//! rays and to the other agents, until SpawnEntity brings it back.

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use super::crowd::{self, AgentSpec, Crowd, RobotRef};
use super::goal::{GoalPlanner, WalkerGoals};
use super::route::{Dwell, Route};
use crate::context::payload::GoalStatus;
use crate::context::{Entity, EntityKind, Pose, SimContext};
use crate::error::{num, ConfigError, HookResult};
use crate::plugin::{check_run_rate, BuildContext, Hooks, Plugin, PluginArgs, ValidateConfig};
use crate::plugins::shared::nav_goal::codes;
use crate::plugins::shared::nav_grid::GridSpec;
use crate::spawn::body_name_for;
use crate::world::bounds::{MAX_DWELL_S, MAX_NAV_DISTANCE_M, MAX_PERSON_SPEED, MAX_POSITION_M};

/// Standing height of the capsule person (m): an adult man's median stature.
pub const PERSON_HEIGHT: f64 = 1.75;
/// Capsule colour: a muted blue shirt.
pub const PERSON_RGBA: [f64; 4] = [0.25, 0.35, 0.55, 1.0];
/// Default walking speed (m/s): a typical adult's comfortable pace.
pub const DEFAULT_SPEED: f64 = 1.2;
/// Default `arrival_radius` (m).
pub const DEFAULT_ARRIVAL_RADIUS: f64 = 0.25;
/// Default `robot_radius` (m).
pub const DEFAULT_ROBOT_RADIUS: f64 = 0.25;
/// Default `orca.neighbor_dist` (m).
pub const DEFAULT_NEIGHBOR_DIST: f64 = 4.0;
/// Default `orca.time_horizon` (s).
pub const DEFAULT_TIME_HORIZON: f64 = 3.0;
/// Default `orca.radius` (m).
pub const DEFAULT_RADIUS: f64 = 0.26;
/// Default `orca.max_speed` (m/s).
pub const DEFAULT_MAX_SPEED: f64 = 1.6;
/// A planned path's corner counts as passed no farther than this (m) even when the planner's
/// margin leaves less.
pub const MIN_CORNER_RADIUS: f64 = 0.01;
/// Rate of a goal's feedback (Hz).
pub const FEEDBACK_HZ: f64 = 20.0;
/// Default `planner.inflation_radius` (m): a person's radius and a little room.
pub const DEFAULT_INFLATION: f64 = 0.3;
/// Default `planner.waypoint_radius` (m).
pub const DEFAULT_WAYPOINT_RADIUS: f64 = 0.3;
/// A geom is a wall for a walker when it reaches from this height (m) — above the floor, as the
/// navigator's default band starts — up to the person's height.
pub const PLANNER_FLOOR: f64 = 0.05;
/// Planner grid cell (m), the navigator's default.
pub const PLANNER_RESOLUTION: f64 = 0.05;
/// Default `recovery.stuck_time` (s).
pub const DEFAULT_STUCK_TIME: f64 = 1.5;
/// Default `recovery.backup_time` (s).
pub const DEFAULT_BACKUP_TIME: f64 = 0.5;
/// Default `recovery.max_recovery`.
pub const DEFAULT_MAX_RECOVERY: u32 = 4;
/// Default `orca.update_hz` (Hz): the navigator's pipeline rate, and a period (50 ms) in which a
/// walker covers 6 cm at its default pace.
pub const DEFAULT_UPDATE_HZ: f64 = 20.0;

fn d_speed() -> f64 {
    DEFAULT_SPEED
}

/// A number, or a `[lo, hi]` pair (a waypoint's items, a dwell).
#[derive(Debug, Clone, Copy, PartialEq, JsonSchema)]
#[serde(untagged)]
pub enum NumOrRange {
    /// One number.
    Num(f64),
    /// `[lo, hi]`.
    Range([f64; 2]),
}

/// By hand, so a wrong shape is told what the key takes (serde's untagged enums only say that
/// nothing matched).
impl<'de> Deserialize<'de> for NumOrRange {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const TAKES: &str =
            "takes a number (seconds, or a coordinate in m) or a random range [lo, hi] in seconds";
        let v = serde_norway::Value::deserialize(d)?;
        let num = |v: &serde_norway::Value| v.as_f64();
        match &v {
            serde_norway::Value::Number(_) => Ok(NumOrRange::Num(num(&v).unwrap_or(f64::NAN))),
            serde_norway::Value::Sequence(s) => match s.as_slice() {
                [a, b] if num(a).is_some() && num(b).is_some() => {
                    Ok(NumOrRange::Range([num(a).unwrap(), num(b).unwrap()]))
                }
                _ => Err(serde::de::Error::custom(format!(
                    "{TAKES}; got a list of {} item{} (a range is exactly two numbers)",
                    s.len(),
                    if s.len() == 1 { "" } else { "s" }
                ))),
            },
            other => Err(serde::de::Error::custom(format!(
                "{TAKES}; got {}",
                serde_norway::to_string(other).unwrap_or_default().trim()
            ))),
        }
    }
}

/// The `orca:` block: how an avoiding walker gives way.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrcaConfig {
    /// Agents whose centres are within this distance are considered (m). Default 4.0.
    #[serde(default)]
    pub neighbor_dist: Option<f64>,
    /// How far ahead collisions are avoided (s). Default 3.0.
    #[serde(default)]
    pub time_horizon: Option<f64>,
    /// The person's radius (m): its capsule, and the disc the others avoid. Default 0.26.
    #[serde(default)]
    pub radius: Option<f64>,
    /// Fastest the walker may go while giving way (m/s); at least `speed`. Default 1.6.
    #[serde(default)]
    pub max_speed: Option<f64>,
    /// How often the walker re-decides its velocity (Hz, on the physics grid); between updates
    /// it walks on at the velocity last chosen. Default 20.
    #[serde(default)]
    pub update_hz: Option<f64>,
}

/// `action_name`: the relative names of the goal actions.
#[derive(Debug, Clone, Default, PartialEq, JsonSchema)]
pub struct ActionNames {
    /// Name of the nav2 NavigateToPose action. Default `<body>/navigate_to_pose`.
    pub navigate_to_pose: Option<String>,
    /// Name of the nav2 NavigateThroughPoses action. Default `<body>/navigate_through_poses`.
    pub navigate_through_poses: Option<String>,
}

/// By hand: a plain name is the NavigateThroughPoses action's (a walker's multi-pose goal), a map
/// names either action.
impl<'de> Deserialize<'de> for ActionNames {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Map {
            #[serde(default)]
            navigate_to_pose: Option<String>,
            #[serde(default)]
            navigate_through_poses: Option<String>,
        }
        const TAKES: &str = "action_name takes a relative action name (the NavigateThroughPoses action's) or a map {navigate_to_pose: name, navigate_through_poses: name}";
        let v = serde_norway::Value::deserialize(d)?;
        match v {
            serde_norway::Value::String(n) => {
                Ok(ActionNames { navigate_to_pose: None, navigate_through_poses: Some(n) })
            }
            serde_norway::Value::Mapping(_) => serde_norway::from_value::<Map>(v)
                .map(|m| ActionNames {
                    navigate_to_pose: m.navigate_to_pose,
                    navigate_through_poses: m.navigate_through_poses,
                })
                .map_err(|e| serde::de::Error::custom(format!("{TAKES}; {e}"))),
            _ => Err(serde::de::Error::custom(TAKES)),
        }
    }
}

/// The `recovery:` block: how an avoiding walker gets unstuck.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WalkerRecoveryConfig {
    /// Seconds with less than 5 cm of progress toward the target that count as stuck. Default 1.5.
    #[serde(default)]
    pub stuck_time: Option<f64>,
    /// Seconds a recovery backs up (half speed, away from the target). Default 0.5.
    #[serde(default)]
    pub backup_time: Option<f64>,
    /// Recoveries per target before giving it up. Default 4.
    #[serde(default)]
    pub max_recovery: Option<u32>,
}

/// The `planner:` block of a goal-driven walker.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WalkerPlannerConfig {
    /// Walls are grown by this radius before A* (m). Default 0.3.
    #[serde(default)]
    pub inflation_radius: Option<f64>,
    /// A planned path's corners count as passed within this distance (m). Default 0.3.
    #[serde(default)]
    pub waypoint_radius: Option<f64>,
}

/// Config of `walker`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WalkerConfig {
    /// Transport scope of the entity (SpawnEntity's `namespace`, GetEntities). Default "".
    #[serde(default)]
    pub namespace: String,
    /// Walking speed (m/s). Default 1.2.
    #[serde(default = "d_speed")]
    pub speed: f64,
    /// Where a walker without waypoints stands, [x, y] (m). Default [0, 0].
    #[serde(default)]
    pub pos: Option<[f64; 2]>,
    /// The patrol route: 2 or more [x, y] points (m), each optionally with its own dwell as a
    /// third item — seconds, or [lo, hi] for a seeded random pause. The walker starts at the first.
    #[serde(default)]
    pub waypoints: Vec<Vec<NumOrRange>>,
    /// Head back to the first waypoint after the last. Default true.
    #[serde(default, rename = "loop")]
    pub loop_route: Option<bool>,
    /// Dwell at every waypoint without its own: seconds, or [lo, hi]. Default 0.
    #[serde(default)]
    pub dwell: Option<NumOrRange>,
    /// A waypoint counts as reached within this distance (m). Default 0.25.
    #[serde(default)]
    pub arrival_radius: Option<f64>,
    /// true: give way (ORCA) to the other walkers, the robot and driven props. Default false.
    #[serde(default)]
    pub avoidance: bool,
    /// Body the walker yields to, by its model name (`base_link`) or full name. Default: every
    /// robot entity's base body. Needs `avoidance: true`.
    #[serde(default)]
    pub robot_body: Option<String>,
    /// Radius of the robot's disc (m). Default 0.25. Needs `avoidance: true`.
    #[serde(default)]
    pub robot_radius: Option<f64>,
    /// ORCA tuning and the person's radius.
    #[serde(default)]
    pub orca: OrcaConfig,
    /// true: declare the goal endpoints (nav2 NavigateToPose / NavigateThroughPoses at
    /// `<body>/navigate_to_pose`, `<body>/navigate_through_poses`); a goal replaces the patrol.
    /// false: patrol only. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub goal_endpoint: bool,
    /// How a goal is planned (A* on the shared planner grid). Needs `goal_endpoint`.
    #[serde(default)]
    pub planner: WalkerPlannerConfig,
    /// Relative names of the goal actions: one name (the NavigateThroughPoses action's) or
    /// `{navigate_to_pose: .., navigate_through_poses: ..}`. Needs `goal_endpoint`.
    #[serde(default)]
    pub action_name: Option<ActionNames>,
    /// Getting unstuck when giving way holds the walker in place (off unless given). Needs
    /// `avoidance: true`.
    #[serde(default)]
    pub recovery: Option<WalkerRecoveryConfig>,
    /// false: compiled in, but absent until SpawnEntity brings it in. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub present: bool,
}

fn check_pos(e: &mut Vec<ConfigError>, key: &str, x: f64) {
    if !(x.is_finite() && x.abs() <= MAX_POSITION_M) {
        e.push(ConfigError::new(
            key,
            format!("must be finite and within ±{MAX_POSITION_M} m, got {}", num(x)),
        ));
    }
}

fn check_positive(e: &mut Vec<ConfigError>, key: &str, x: Option<f64>, max: f64, unit: &str) {
    if let Some(x) = x {
        if !(x > 0.0 && x <= max) {
            e.push(ConfigError::new(key, format!("must be in (0, {max}] {unit}, got {}", num(x))));
        }
    }
}

/// A dwell value's problems (`key` names it).
fn check_dwell(e: &mut Vec<ConfigError>, key: &str, d: &NumOrRange) {
    let ok = |s: f64| (0.0..=MAX_DWELL_S).contains(&s);
    match *d {
        NumOrRange::Num(s) if !ok(s) => e.push(ConfigError::new(
            key,
            format!("a dwell must be in [0, {MAX_DWELL_S}] s, got {}", num(s)),
        )),
        NumOrRange::Range([lo, hi]) if !(ok(lo) && ok(hi) && lo <= hi) => e.push(ConfigError::new(
            key,
            format!(
                "a random dwell [lo, hi] needs 0 <= lo <= hi <= {MAX_DWELL_S} s, got [{}, {}]",
                num(lo),
                num(hi)
            ),
        )),
        _ => {}
    }
}

fn to_dwell(d: &NumOrRange) -> Dwell {
    match *d {
        NumOrRange::Num(s) => Dwell::Fixed(s),
        NumOrRange::Range([lo, hi]) => Dwell::Random(lo, hi),
    }
}

impl WalkerConfig {
    /// `speed` against a person's pace and `orca.max_speed`.
    fn check_speed(&self, e: &mut Vec<ConfigError>) {
        let max_speed = self.orca.max_speed.unwrap_or(DEFAULT_MAX_SPEED);
        if !(self.speed > 0.0 && self.speed <= MAX_PERSON_SPEED) {
            e.push(ConfigError::new(
                "speed",
                format!(
                    "must be in (0, {MAX_PERSON_SPEED}] m/s (a person), got {}",
                    num(self.speed)
                ),
            ));
        } else if self.avoidance && max_speed.is_finite() && self.speed > max_speed {
            e.push(ConfigError::new(
            "speed",
            format!(
                "{} m/s is above orca.max_speed ({} m/s), the fastest this walker may go while giving way: raise orca.max_speed or lower speed",
                num(self.speed),
                num(max_speed)
            ),
        ));
        }
    }

    /// The patrol: `pos`, `waypoints` and their dwells, and the route keys without a route.
    fn check_route(&self, e: &mut Vec<ConfigError>) {
        if let Some([x, y]) = self.pos {
            check_pos(e, "pos", x);
            check_pos(e, "pos", y);
            if !self.waypoints.is_empty() {
                e.push(ConfigError::new("pos", "a walker with waypoints starts at waypoints[0]; `pos` places one without: drop one of the two"));
            }
        }
        if self.waypoints.len() == 1 {
            e.push(ConfigError::new("waypoints", "a route needs 2 or more points; for a walker that stands still give `pos: [x, y]` instead"));
        }
        for (i, w) in self.waypoints.iter().enumerate() {
            let key = format!("waypoints[{i}]");
            match w.as_slice() {
                [NumOrRange::Num(x), NumOrRange::Num(y)] => {
                    check_pos(e, &key, *x);
                    check_pos(e, &key, *y);
                }
                [NumOrRange::Num(x), NumOrRange::Num(y), d] => {
                    check_pos(e, &key, *x);
                    check_pos(e, &key, *y);
                    check_dwell(e, &key, d);
                }
                _ => e.push(ConfigError::new(
                    key,
                    "a waypoint is [x, y] or [x, y, dwell] (dwell: seconds, or [lo, hi])",
                )),
            }
        }
        let xy = |w: &Vec<NumOrRange>| match w.as_slice() {
            [NumOrRange::Num(x), NumOrRange::Num(y), ..] => Some([*x, *y]),
            _ => None,
        };
        let pts: Vec<[f64; 2]> = self.waypoints.iter().filter_map(xy).collect();
        let reach = self.arrival_radius.unwrap_or(DEFAULT_ARRIVAL_RADIUS);
        if pts.len() >= 2
            && pts.len() == self.waypoints.len()
            && pts.iter().all(|p| (p[0] - pts[0][0]).hypot(p[1] - pts[0][1]) <= reach)
        {
            e.push(ConfigError::new(
            "waypoints",
            format!(
                "every point lies within arrival_radius ({} m) of waypoints[0], so the walker would never leave its start: spread the route, or give `pos: [x, y]` for a walker that stands",
                num(reach)
            ),
        ));
        }
        if self.waypoints.is_empty() {
            for (k, set) in [
                ("loop", self.loop_route.is_some()),
                ("dwell", self.dwell.is_some()),
                ("arrival_radius", self.arrival_radius.is_some() && !self.goal_endpoint),
            ] {
                if set {
                    e.push(ConfigError::new(k, format!("`{k}` shapes a patrol route and this walker has no `waypoints`: give the route or drop the key")));
                }
            }
        }
        if let Some(d) = &self.dwell {
            check_dwell(e, "dwell", d);
        }
    }

    /// The radii and ORCA's tuning.
    fn check_tuning(&self, e: &mut Vec<ConfigError>) {
        check_positive(e, "arrival_radius", self.arrival_radius, MAX_NAV_DISTANCE_M, "m");
        check_positive(e, "robot_radius", self.robot_radius, MAX_NAV_DISTANCE_M, "m");
        check_positive(e, "orca.neighbor_dist", self.orca.neighbor_dist, MAX_NAV_DISTANCE_M, "m");
        check_positive(e, "orca.time_horizon", self.orca.time_horizon, MAX_DWELL_S, "s");
        check_positive(e, "orca.max_speed", self.orca.max_speed, MAX_PERSON_SPEED, "m/s");
        if let Some(hz) = self.orca.update_hz {
            e.extend(check_run_rate(
                "orca.update_hz",
                hz,
                " (above the physics rate it updates every step)",
            ));
        }
        if let Some(r) = self.orca.radius {
            if !(r > 0.0 && r < PERSON_HEIGHT / 2.0) {
                e.push(ConfigError::new(
                    "orca.radius",
                    format!(
                        "must be in (0, {}) m (a capsule {PERSON_HEIGHT} m tall), got {}",
                        PERSON_HEIGHT / 2.0,
                        num(r)
                    ),
                ));
            }
        }
    }

    /// The robot to yield to, the goal planner, recovery and the action names.
    fn check_goals_and_recovery(&self, e: &mut Vec<ConfigError>) {
        if let Some(b) = &self.robot_body {
            if b.trim().is_empty() {
                e.push(ConfigError::new("robot_body", "is empty: name the robot's body (`base_link`) or drop the key for every robot entity's base"));
            }
        }
        check_positive(
            e,
            "planner.inflation_radius",
            self.planner.inflation_radius,
            MAX_NAV_DISTANCE_M,
            "m",
        );
        check_positive(
            e,
            "planner.waypoint_radius",
            self.planner.waypoint_radius,
            MAX_NAV_DISTANCE_M,
            "m",
        );
        let radius = self.orca.radius.unwrap_or(DEFAULT_RADIUS);
        if let Some(i) = self.planner.inflation_radius {
            if self.goal_endpoint && i > 0.0 && i < radius {
                e.push(ConfigError::new(
                "planner.inflation_radius",
                format!(
                    "{} m is less than the person's radius (orca.radius {} m): a planned path would run the walker into walls; give at least {}",
                    num(i),
                    num(radius),
                    num(radius)
                ),
            ));
            }
        }
        if let Some(r) = &self.recovery {
            check_positive(e, "recovery.stuck_time", r.stuck_time, MAX_DWELL_S, "s");
            if let Some(b) = r.backup_time {
                if !(0.0..=60.0).contains(&b) {
                    e.push(ConfigError::new(
                        "recovery.backup_time",
                        format!("must be in [0, 60] s, got {}", num(b)),
                    ));
                }
            }
            if !self.avoidance {
                e.push(ConfigError::new("recovery", "gets a walker unstuck when giving way holds it in place, and this one has `avoidance: false` (nothing holds it: it walks its route): set `avoidance: true` or drop the key"));
            }
        }
        if let Some(n) = &self.action_name {
            let names = [
                ("action_name.navigate_to_pose", &n.navigate_to_pose),
                ("action_name.navigate_through_poses", &n.navigate_through_poses),
            ];
            for (k, v) in names {
                let Some(v) = v else { continue };
                if v.starts_with('/') {
                    e.push(ConfigError::new(k, format!("`{v}` is absolute; an action name here is relative (placed in the walker's namespace): drop the leading `/`")));
                } else if let Err(m) = crate::ros::names::check_topic(v) {
                    e.push(ConfigError::new(k, m));
                }
            }
            if n.navigate_to_pose.is_some() && n.navigate_to_pose == n.navigate_through_poses {
                e.push(ConfigError::new(
                "action_name",
                "navigate_to_pose and navigate_through_poses are two actions and need two names",
            ));
            }
        }
    }

    /// Keys of a capability this walker has switched off.
    fn check_unused_keys(&self, e: &mut Vec<ConfigError>) {
        if !self.goal_endpoint {
            for (k, set) in [
                ("planner.inflation_radius", self.planner.inflation_radius.is_some()),
                ("planner.waypoint_radius", self.planner.waypoint_radius.is_some()),
                ("action_name", self.action_name.is_some()),
            ] {
                if set {
                    e.push(ConfigError::new(k, format!("`{k}` plans the path to a goal, and this walker has `goal_endpoint: false` (it takes no goals): set `goal_endpoint: true` or drop the key")));
                }
            }
        }
        if !self.avoidance {
            for (k, set) in [
                ("robot_body", self.robot_body.is_some()),
                ("robot_radius", self.robot_radius.is_some()),
                ("orca.neighbor_dist", self.orca.neighbor_dist.is_some()),
                ("orca.time_horizon", self.orca.time_horizon.is_some()),
                ("orca.max_speed", self.orca.max_speed.is_some()),
                ("orca.update_hz", self.orca.update_hz.is_some()),
            ] {
                if set {
                    e.push(ConfigError::new(k, format!("`{k}` tunes how a walker gives way, and this one has `avoidance: false` (it walks its route and the others avoid it): set `avoidance: true` or drop the key")));
                }
            }
        }
    }
}

impl ValidateConfig for WalkerConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = crate::spawn::check_names(&self.namespace, "");
        self.check_speed(&mut e);
        self.check_route(&mut e);
        self.check_tuning(&mut e);
        self.check_goals_and_recovery(&mut e);
        self.check_unused_keys(&mut e);
        e
    }
}

/// The `walker` plugin.
pub struct Walker {
    cfg: WalkerConfig,
    address: String,
    body: String,
    owner: bool,
    crowd: Option<Crowd>,
    goals: Option<WalkerGoals>,
    mocap: usize,
}

impl Walker {
    /// Construct from config.
    pub fn new(cfg: WalkerConfig, args: &PluginArgs) -> Self {
        Walker {
            body: body_name_for("", &args.address),
            address: args.address.clone(),
            cfg,
            owner: false,
            crowd: None,
            goals: None,
            mocap: 0,
        }
    }

    fn start(&self) -> ([f64; 2], f64) {
        let p = |w: &Vec<NumOrRange>| match w.as_slice() {
            [NumOrRange::Num(x), NumOrRange::Num(y), ..] => [*x, *y],
            _ => [0.0, 0.0],
        };
        match self.cfg.waypoints.as_slice() {
            [a, b, ..] => {
                let (a, b) = (p(a), p(b));
                (a, (b[1] - a[1]).atan2(b[0] - a[0]))
            }
            _ => (self.cfg.pos.unwrap_or([0.0, 0.0]), 0.0),
        }
    }

    fn route(&self) -> Route {
        let default = self.cfg.dwell.as_ref().map(to_dwell).unwrap_or(Dwell::Fixed(0.0));
        let mut points = Vec::new();
        let mut dwell = Vec::new();
        for w in &self.cfg.waypoints {
            if let [NumOrRange::Num(x), NumOrRange::Num(y), rest @ ..] = w.as_slice() {
                points.push([*x, *y]);
                dwell.push(rest.first().map(to_dwell).unwrap_or(default));
            }
        }
        Route::new(
            points,
            dwell,
            self.cfg.loop_route.unwrap_or(true),
            self.cfg.arrival_radius.unwrap_or(DEFAULT_ARRIVAL_RADIUS),
        )
    }

    /// The robots this walker yields to: `robot_body` resolved against the model (its full name,
    /// else a robot entity's prefix + it), or every robot entity's base body.
    fn robots(&self, ctx: &SimContext) -> Result<Vec<RobotRef>, String> {
        if !self.cfg.avoidance {
            return Ok(Vec::new());
        }
        let radius = self.cfg.robot_radius.unwrap_or(DEFAULT_ROBOT_RADIUS);
        let m = ctx.model();
        let robots: Vec<&Entity> =
            ctx.entities.all().iter().filter(|e| e.kind == EntityKind::Robot).collect();
        let body_of = |name: &str| m.name_to_id(MjtObjBase::mjOBJ_BODY, name);
        match &self.cfg.robot_body {
            None => Ok(robots
                .iter()
                .filter_map(|e| {
                    body_of(&e.body).map(|b| RobotRef { body: b, entity: e.name.clone(), radius })
                })
                .collect()),
            Some(name) => {
                for e in &robots {
                    if let Some(b) = body_of(&format!("{}{name}", e.prefix)) {
                        return Ok(vec![RobotRef { body: b, entity: e.name.clone(), radius }]);
                    }
                }
                if let Some(b) = body_of(name) {
                    return Ok(vec![RobotRef { body: b, entity: String::new(), radius }]);
                }
                let names: Vec<String> =
                    robots.iter().map(|e| format!("{} (prefix `{}`)", e.name, e.prefix)).collect();
                Err(format!(
                    "walker `{}`: robot_body: no body `{name}` in the compiled model, nor one of that model name in a robot entity (robots: [{}]); name a body of the robot, e.g. `base_link`",
                    self.address,
                    names.join(", ")
                ))
            }
        }
    }
}

impl Plugin for Walker {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD | Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::PRE_STEP | Hooks::SHUTDOWN
    }

    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        if spec.body(&self.body).is_some() {
            return Err(format!(
                "the world already has a body `{}`; give this walker a distinct name",
                self.body
            ));
        }
        let r = self.cfg.orca.radius.unwrap_or(DEFAULT_RADIUS);
        let ([x, y], yaw) = self.start();
        let quat = crate::math::yaw_quat_wxyz(yaw);
        let body = spec
            .world_body_mut()
            .add_body()
            .with_name(&self.body)
            .with_pos([x, y, 0.0])
            .with_quat(quat);
        body.set_mocap(true);
        body.add_geom()
            .with_name(&self.body)
            .with_type(MjtGeomBase::mjGEOM_CAPSULE)
            .with_size([r, (PERSON_HEIGHT - r) / 2.0, 0.0])
            .with_pos([0.0, 0.0, (PERSON_HEIGHT - r) / 2.0])
            .with_rgba(crate::spawn::rgba4(&PERSON_RGBA));
        let mut ent = Entity::new(&self.address, EntityKind::Person, &self.body);
        ent.namespace = self.cfg.namespace.trim_matches('/').to_string();
        ent.model = "walker".into();
        ent.initial_pose = Pose { pos: [x, y, 0.0], quat };
        ent.declared_present = self.cfg.present;
        ent.present = self.cfg.present;
        ent.meta.insert("motion".into(), "driven".into());
        b.ctx.entities.add(ent)
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        crate::plugins::shared::owner::claim_mover(
            ctx,
            &format!("`walker` at `{}`", self.address),
            &self.address,
        )?;
        let m = ctx.model();
        let body = m
            .name_to_id(MjtObjBase::mjOBJ_BODY, &self.body)
            .ok_or_else(|| format!("walker body `{}` missing after compile", self.body))?;
        let mocap = m.body_mocapid()[body];
        if mocap < 0 {
            return Err(format!("walker body `{}` is not a mocap body", self.body));
        }
        let robots = self.robots(ctx)?;
        self.owner = !ctx.blackboard.contains(crowd::CROWD_KEY);
        if self.owner {
            ctx.blackboard.set(crowd::CROWD_KEY, Crowd::default());
        }
        let crowd = ctx.blackboard.get::<Crowd>(crowd::CROWD_KEY)?.clone();
        crowd.add(AgentSpec {
            entity: self.address.clone(),
            body,
            mocap: mocap as usize,
            radius: self.cfg.orca.radius.unwrap_or(DEFAULT_RADIUS),
            speed: self.cfg.speed,
            avoidance: self.cfg.avoidance,
            neighbor_dist: self.cfg.orca.neighbor_dist.unwrap_or(DEFAULT_NEIGHBOR_DIST),
            time_horizon: self.cfg.orca.time_horizon.unwrap_or(DEFAULT_TIME_HORIZON),
            max_speed: self.cfg.orca.max_speed.unwrap_or(DEFAULT_MAX_SPEED).max(self.cfg.speed),
            every: crate::engine::rates::snap_rate(
                self.cfg.orca.update_hz.unwrap_or(DEFAULT_UPDATE_HZ),
                1.0 / ctx.dt,
            )
            .every_steps,
            robots,
            route: self.route(),
            recovery: self.cfg.recovery.as_ref().map(|r| crowd::Recovery {
                stuck_time: r.stuck_time.unwrap_or(DEFAULT_STUCK_TIME),
                backup_time: r.backup_time.unwrap_or(DEFAULT_BACKUP_TIME),
                max_recovery: r.max_recovery.unwrap_or(DEFAULT_MAX_RECOVERY),
            }),
        });
        self.crowd = Some(crowd);
        self.mocap = mocap as usize;
        if self.cfg.goal_endpoint {
            let p = &self.cfg.planner;
            let radius = self.cfg.orca.radius.unwrap_or(DEFAULT_RADIUS);
            let planner = GoalPlanner {
                grid: GridSpec {
                    band: [PLANNER_FLOOR, PERSON_HEIGHT],
                    resolution: PLANNER_RESOLUTION,
                    inflation: p.inflation_radius.unwrap_or(DEFAULT_INFLATION),
                },
                // a corner cut within ρ strays at most ρ off the planned path, which keeps
                // `inflation − radius` from the walls: cut no deeper than that margin
                waypoint_radius: p
                    .waypoint_radius
                    .unwrap_or(DEFAULT_WAYPOINT_RADIUS)
                    .min(p.inflation_radius.unwrap_or(DEFAULT_INFLATION) - radius)
                    .max(MIN_CORNER_RADIUS),
                arrival_radius: self.cfg.arrival_radius.unwrap_or(DEFAULT_ARRIVAL_RADIUS),
                speed: self.cfg.speed,
            };
            let every = crate::engine::rates::snap_rate(FEEDBACK_HZ, 1.0 / ctx.dt).every_steps;
            let names = self.cfg.action_name.clone().unwrap_or_default();
            let body = &self.body;
            let names = [
                names.navigate_to_pose.unwrap_or_else(|| format!("{body}/navigate_to_pose")),
                names
                    .navigate_through_poses
                    .unwrap_or_else(|| format!("{body}/navigate_through_poses")),
            ];
            self.goals = Some(WalkerGoals::declare(
                ctx,
                &self.address,
                self.cfg.namespace.trim_matches('/'),
                names,
                planner,
                every,
            ));
        }
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        if let (Some(g), Some(c)) = (&mut self.goals, &self.crowd) {
            if g.busy() {
                g.finish(GoalStatus::Aborted, codes::NONE, "the simulation was reset");
            }
            c.set_route(&self.address, self.route());
        }
        match (&self.crowd, self.owner) {
            (Some(c), true) => c.reset(ctx),
            _ => Ok(()),
        }
    }

    fn pre_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let Some(c) = self.crowd.clone() else { return Ok(()) };
        if let Some(g) = &mut self.goals {
            g.intake(ctx, &c, self.mocap);
        }
        if self.owner {
            c.tick(ctx)?;
        }
        if let Some(g) = &mut self.goals {
            g.report(ctx, &c);
        }
        Ok(())
    }

    fn shutdown(&mut self, _ctx: &mut SimContext) -> HookResult {
        if let Some(g) = &mut self.goals {
            g.finish(GoalStatus::Aborted, codes::NONE, "the simulator is shutting down");
        }
        Ok(())
    }
}

/// The registry entry of `walker`.
pub fn descriptor() -> crate::plugin::PluginDescriptor {
    crate::plugin_descriptor!(
        "walker",
        "A kinematic pedestrian (capsule person on a mocap body): patrols waypoints with dwell; walkers share one ORCA crowd and, with avoidance, give way to each other, the robot and driven props.",
        WalkerConfig,
        Walker
    )
}
