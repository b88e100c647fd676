//! The campaign document (`campaign.yaml`): which worlds, which factors, how many repetitions,
//! what seeds, what limits each trial runs under and what is collected from it.
//!
//! Read strictly: an unknown key, a factor that is not an override path, an empty level list, a
//! trial without an end are refused naming the key path and the fix, before any trial is built.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_norway::Value;

use crate::error::{ConfigError, ConfigErrors};
use crate::world::overrides::{load_override_file, Assignment};

/// The document as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDoc {
    /// One world (a file, relative to the campaign document, or a bundled world's name).
    #[serde(default)]
    world: Option<String>,
    /// Several worlds: the world becomes a factor (column `world`).
    #[serde(default)]
    worlds: Option<Vec<String>>,
    /// Factors in order: `path: [values]` or `name: {files: [override.yaml, ...]}`.
    #[serde(default)]
    factors: serde_norway::Mapping,
    /// Repetitions of every cell (>= 1).
    #[serde(default = "one")]
    repetitions: u64,
    /// The base seed trial seeds derive from.
    #[serde(default)]
    seed: u64,
    /// `trial` (default): seed = base + trial index; `repetition`: seed = base + repetition, so
    /// every cell's repetition r draws the same noise (common random numbers).
    #[serde(default)]
    seed_by: SeedBy,
    /// Per-trial limits.
    limits: RawLimits,
    /// What each trial reports.
    #[serde(default)]
    collect: Collect,
    /// Record each trial into `record.mcap` (its provenance).
    #[serde(default)]
    record: bool,
}

fn one() -> u64 {
    1
}

/// How trial seeds derive from the base seed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeedBy {
    /// `seed + trial index`.
    #[default]
    Trial,
    /// `seed + repetition index`.
    Repetition,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    #[serde(default)]
    seconds: Option<f64>,
    #[serde(default)]
    steps: Option<u64>,
    #[serde(default = "default_timeout")]
    wall_timeout_s: f64,
}

fn default_timeout() -> f64 {
    600.0
}

/// What a trial reports beyond its stop reason, steps and sim time.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Collect {
    /// Entities whose final ground-truth pose goes in the table (`x`, `y`, `z`, `yaw`).
    #[serde(default)]
    pub poses: Vec<String>,
    /// Every monitor's last report (contact, clearance, upright, energy) in the table.
    #[serde(default = "crate::plugin::yes")]
    pub monitors: bool,
    /// Endpoints by topic (`/scan`, `/robot1/odom`) whose last value is kept in results.json; their scalar
    /// members go in the table.
    #[serde(default)]
    pub endpoints: Vec<String>,
}

impl Default for Collect {
    fn default() -> Self {
        Collect { poses: Vec::new(), monitors: true, endpoints: Vec::new() }
    }
}

/// Where every trial stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrialLimits {
    /// Simulated seconds.
    pub seconds: Option<f64>,
    /// Physics steps.
    pub steps: Option<u64>,
    /// Wall seconds after which the trial's process is killed and the trial marked `timeout`.
    pub wall_timeout_s: f64,
}

/// One factor's levels.
#[derive(Debug, Clone, PartialEq)]
pub enum Levels {
    /// Values of one override path.
    Values(Vec<Value>),
    /// Override files (each level: the file's path as written, and its assignments).
    Files(Vec<(String, Vec<Assignment>)>),
}

/// One factor.
#[derive(Debug, Clone, PartialEq)]
pub struct Factor {
    /// The column name: the override path, or the files factor's name.
    pub name: String,
    /// Its levels.
    pub levels: Levels,
}

impl Factor {
    /// Number of levels.
    pub fn len(&self) -> usize {
        match &self.levels {
            Levels::Values(v) => v.len(),
            Levels::Files(f) => f.len(),
        }
    }
    /// True when there are no levels (refused at parse).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A world of the campaign: as written, and resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct WorldRef {
    /// As written (the `world` column).
    pub written: String,
    /// The file.
    pub path: PathBuf,
}

/// A parsed, checked campaign.
#[derive(Debug, Clone, PartialEq)]
pub struct Campaign {
    /// The worlds (one, or the world factor's levels).
    pub worlds: Vec<WorldRef>,
    /// True when the document listed `worlds:` (the table gets a `world` column).
    pub world_is_factor: bool,
    /// The factors, in document order.
    pub factors: Vec<Factor>,
    /// Repetitions per cell.
    pub repetitions: u64,
    /// Base seed.
    pub seed: u64,
    /// Seed derivation.
    pub seed_by: SeedBy,
    /// Per-trial limits.
    pub limits: TrialLimits,
    /// What to collect.
    pub collect: Collect,
    /// Record every trial.
    pub record: bool,
    /// The folder the document's relative paths resolved against (absolute when it exists).
    pub dir: PathBuf,
}

impl Campaign {
    /// What the document's names resolved to here: the document's folder, every world file and
    /// every override file of a files factor (absolute). The same document in another folder can
    /// mean other files; resume compares these.
    pub fn resolved(&self) -> serde_json::Value {
        let files: Vec<String> = self
            .factors
            .iter()
            .filter_map(|f| match &f.levels {
                Levels::Files(l) => Some(l),
                Levels::Values(_) => None,
            })
            .flatten()
            .map(|(w, _)| {
                let p = self.dir.join(w);
                std::fs::canonicalize(&p).unwrap_or(p).display().to_string()
            })
            .collect();
        serde_json::json!({
            "document_dir": self.dir.display().to_string(),
            "worlds": self.worlds.iter().map(|w| w.path.display().to_string()).collect::<Vec<_>>(),
            "override_files": files,
        })
    }
}

/// The most trials one campaign may expand to (a typo in a level list should not fill a disk).
pub const MAX_TRIALS: u64 = 100_000;

/// The longest wall timeout a trial may have (s): a day, as `sim.sync.timeout_s`
/// ([docs/bounds.md](../../docs/bounds.md)); longer is a trial nobody waits for.
pub const MAX_WALL_TIMEOUT_S: f64 = 86_400.0;

/// The results table's own columns: a factor named like one would overwrite it.
pub const RESERVED_COLUMNS: [&str; 13] = [
    "trial",
    "world",
    "repetition",
    "seed",
    "status",
    "exit_code",
    "attempts",
    "wall_s",
    "reason",
    "stop_reason",
    "error",
    "steps",
    "sim_time",
];

/// The prefixes of the table's metric columns.
pub const RESERVED_PREFIXES: [&str; 3] = ["pose.", "monitor.", "endpoint."];

/// Refuse a campaign of more than [`MAX_TRIALS`] trials, with checked products (64 factors of
/// two levels must not wrap to 0 trials).
fn check_trial_count(
    factors: &[Factor],
    worlds: usize,
    repetitions: u64,
    errors: &mut ConfigErrors,
) {
    let cells = factors.iter().try_fold(worlds as u64, |a, f| a.checked_mul(f.len() as u64));
    match cells {
        Some(c) if c <= MAX_TRIALS => {
            if let Some(t) = c.checked_mul(repetitions).filter(|&t| t > MAX_TRIALS) {
                errors.push(
                    "repetitions",
                    format!(
                        "{repetitions} repetitions of {c} cells expand to {t} trials, more than \
                         {MAX_TRIALS}: lower `repetitions` or split the campaign"
                    ),
                );
            } else if c.checked_mul(repetitions).is_none() {
                errors.push(
                    "repetitions",
                    format!(
                        "{repetitions} repetitions of {c} cells expand to more than {} trials, \
                         more than {MAX_TRIALS}: lower `repetitions` or split the campaign",
                        u64::MAX
                    ),
                );
            }
        }
        Some(c) => errors.push(
            "factors",
            format!("expand to {c} cells, more than {MAX_TRIALS} trials: split the campaign"),
        ),
        None => errors.push(
            "factors",
            format!(
                "expand to more than {} cells ({} factors), more than {MAX_TRIALS} trials: split \
                 the campaign",
                u64::MAX,
                factors.len()
            ),
        ),
    }
}

/// Refuse a base seed whose largest trial seed (`seed + the last trial index`, or `seed + the
/// last repetition` with `seed_by: repetition`) would pass the largest seed, 2^64 − 1: the
/// derivation never wraps (a wrapped seed would repeat another trial's noise).
fn check_seed(raw: &RawDoc, factors: &[Factor], worlds: usize, errors: &mut ConfigErrors) {
    let trials = factors
        .iter()
        .try_fold(worlds as u64, |a, f| a.checked_mul(f.len() as u64))
        .and_then(|c| c.checked_mul(raw.repetitions));
    let (last, what) = match raw.seed_by {
        SeedBy::Trial => (trials.map(|t| t.saturating_sub(1)), "trial index"),
        SeedBy::Repetition => (Some(raw.repetitions.saturating_sub(1)), "repetition"),
    };
    // A trial count past the limit is refused on its own (check_trial_count).
    let Some(last) = last.filter(|&l| l < MAX_TRIALS) else { return };
    if raw.seed.checked_add(last).is_none() {
        errors.push(
            "seed",
            format!(
                "{} + the last {what} ({last}) passes the largest seed, {}: trial seeds are \
                 `seed + {what}` and never wrap; lower `seed` to at most {}",
                raw.seed,
                u64::MAX,
                u64::MAX - last
            ),
        );
    }
}

/// Every override path a factor sets in any of its levels, each with where it is set (`None` for
/// a value factor, the file as written for a files factor), in document order.
fn factor_paths(f: &Factor) -> Vec<(Vec<String>, Option<&str>)> {
    match &f.levels {
        Levels::Values(_) => vec![(f.name.split('.').map(str::to_string).collect(), None)],
        Levels::Files(files) => files
            .iter()
            .flat_map(|(w, a)| a.iter().map(move |x| (x.path.clone(), Some(w.as_str()))))
            .collect(),
    }
}

/// A path as a message names it: `` `a.b` `` or `` `a.b` (in `f.yaml`) ``.
fn where_set(path: &[String], file: Option<&str>) -> String {
    match file {
        Some(f) => format!("`{}` (in `{f}`)", path.join(".")),
        None => format!("`{}`", path.join(".")),
    }
}

/// Refuse two factors that set one key (the same override path, or one inside the other): in
/// every trial one of them would silently win over the other, and rows that differ in the
/// loser's column would run the same world. Named at the later factor, with both paths.
fn check_overlap(factors: &[Factor], errors: &mut ConfigErrors) {
    let paths: Vec<_> = factors.iter().map(factor_paths).collect();
    for (j, later) in factors.iter().enumerate() {
        let clash = (0..j).find_map(|i| {
            paths[j].iter().find_map(|(q, qf)| {
                paths[i]
                    .iter()
                    .find(|(p, _)| p.starts_with(q) || q.starts_with(p))
                    .map(|(p, pf)| (i, where_set(p, *pf), where_set(q, *qf)))
            })
        });
        if let Some((i, first, second)) = clash {
            errors.push(
                format!("factors.{}", later.name),
                format!(
                    "sets {second}, and factor `{}` sets {first}: two factors must not set one \
                     key (in every trial one would silently win, and rows that differ only in \
                     the other's level would run the same world); vary the key in one factor, or \
                     remove it from one of them",
                    factors[i].name
                ),
            );
        }
    }
}

/// The first number in `v` that is not finite (NaN or ±infinity), as YAML writes it.
fn non_finite(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => n.as_f64().filter(|x| !x.is_finite()).map(|x| {
            if x.is_nan() {
                ".nan".to_string()
            } else if x > 0.0 {
                ".inf".to_string()
            } else {
                "-.inf".to_string()
            }
        }),
        Value::Sequence(s) => s.iter().find_map(non_finite),
        Value::Mapping(m) => m.values().find_map(non_finite),
        Value::Tagged(t) => non_finite(&t.value),
        _ => None,
    }
}

/// Read and check `path`.
pub fn load_campaign(path: &Path) -> Result<Campaign, ConfigErrors> {
    let text = crate::world::yaml::read_document(path, "campaign")
        .map_err(|m| ConfigErrors::from(ConfigError::new("", m)))?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    parse_campaign(&text, &dir)
}

/// Parse campaign text; relative paths resolve against `dir`.
pub fn parse_campaign(text: &str, dir: &Path) -> Result<Campaign, ConfigErrors> {
    let v: Value = crate::world::yaml::parse_yaml(text)
        .map_err(|e| ConfigErrors::from(ConfigError::new("", e.message)))?;
    if !matches!(v, Value::Mapping(_)) {
        return Err(ConfigError::new(
            "",
            "a campaign is a mapping with world (or worlds), factors, repetitions, seed, limits, collect",
        )
        .into());
    }
    let raw: RawDoc = crate::plugin::typed_config(&v).map_err(ConfigErrors)?;
    let mut errors = ConfigErrors::default();
    let written: Vec<String> = match (&raw.world, &raw.worlds) {
        (Some(w), None) => vec![w.clone()],
        (None, Some(ws)) if !ws.is_empty() => ws.clone(),
        (None, Some(_)) => {
            errors.push("worlds", "is empty: list at least one world file");
            Vec::new()
        }
        (Some(_), Some(_)) => {
            errors.push("world", "and `worlds` are both given: keep `world` for one world, `worlds` for the world as a factor");
            Vec::new()
        }
        (None, None) => {
            errors.push("world", "missing: name the world file (or `worlds: [a.yaml, b.yaml]`)");
            Vec::new()
        }
    };
    let mut worlds = Vec::new();
    for (i, w) in written.iter().enumerate() {
        let key = if raw.worlds.is_some() { format!("worlds[{i}]") } else { "world".into() };
        match resolve_in(w, dir) {
            Ok(path) => {
                if worlds.iter().any(|x: &WorldRef| x.path == path) {
                    errors.push(key, format!("`{w}` is listed twice: list each world once"));
                } else {
                    worlds.push(WorldRef { written: w.clone(), path });
                }
            }
            Err(m) => errors.push(key, m),
        }
    }
    let mut factors = Vec::new();
    for (k, val) in &raw.factors {
        let Some(name) = k.as_str() else {
            errors.push("factors", "factor keys are override paths or names (strings)");
            continue;
        };
        match parse_factor(name, val, dir) {
            Ok(f) => {
                if factors.iter().any(|x: &Factor| x.name == f.name) {
                    errors.push(format!("factors.{name}"), "is given twice");
                }
                factors.push(f);
            }
            Err(e) => errors.0.push(e),
        }
    }
    if raw.repetitions == 0 {
        errors.push("repetitions", "must be at least 1");
    }
    let l = &raw.limits;
    match (l.seconds, l.steps) {
        (None, None) => errors.push(
            "limits",
            "give `seconds` or `steps`: a trial must end on its own (wall_timeout_s only kills a hung one)",
        ),
        (Some(_), Some(_)) => {
            errors.push("limits.steps", "and `limits.seconds` are both given: keep one")
        }
        (Some(s), None) if !(s.is_finite() && s > 0.0) => {
            errors.push("limits.seconds", format!("must be a finite number > 0, got {s}"))
        }
        (None, Some(0)) => errors.push("limits.steps", "must be at least 1"),
        _ => {}
    }
    if !(l.wall_timeout_s.is_finite()
        && l.wall_timeout_s > 0.0
        && l.wall_timeout_s <= MAX_WALL_TIMEOUT_S)
    {
        errors.push(
            "limits.wall_timeout_s",
            format!(
                "must be a number of seconds in (0, {MAX_WALL_TIMEOUT_S}] (at most a day), got {:?}",
                l.wall_timeout_s
            ),
        );
    }
    for (i, e) in raw.collect.endpoints.iter().enumerate() {
        if e.trim().is_empty() {
            errors.push(
                format!("collect.endpoints[{i}]"),
                "is empty: name the endpoint by its topic, e.g. `/scan`",
            );
        }
    }
    check_overlap(&factors, &mut errors);
    check_trial_count(&factors, worlds.len().max(1), raw.repetitions, &mut errors);
    check_seed(&raw, &factors, worlds.len().max(1), &mut errors);
    errors.into_result()?;
    Ok(Campaign {
        worlds,
        world_is_factor: raw.worlds.is_some(),
        factors,
        repetitions: raw.repetitions,
        seed: raw.seed,
        seed_by: raw.seed_by,
        limits: TrialLimits {
            seconds: l.seconds,
            steps: l.steps,
            wall_timeout_s: l.wall_timeout_s,
        },
        collect: raw.collect,
        record: raw.record,
        dir: {
            let d = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
            std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf())
        },
    })
}

/// A world named in a campaign: a file relative to the document's folder, else a path or a
/// bundled world's name as `roqsim sim` resolves it. Absolute, so a trial runs from anywhere.
fn resolve_in(w: &str, dir: &Path) -> Result<PathBuf, String> {
    let rel = dir.join(w);
    let p = if rel.is_file() { rel } else { crate::runner::resolve_world(w)? };
    Ok(std::fs::canonicalize(&p).unwrap_or(p))
}

/// The fix for a factor that would set the seed: trial seeds come from `seed:` / `seed_by:`.
const SEED_FIX: &str = "a trial's seed comes from `seed:` and `seed_by:` (its `--seed` wins over \
                        `sim.seed`): set `seed:` / `seed_by:` instead";

fn parse_factor(name: &str, val: &Value, dir: &Path) -> Result<Factor, ConfigError> {
    let key = format!("factors.{name}");
    if RESERVED_COLUMNS.contains(&name) || RESERVED_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return Err(ConfigError::new(
            key,
            format!(
                "is a column of the results table: rename the factor (reserved: {}, and names \
                 starting with {})",
                RESERVED_COLUMNS.join(", "),
                RESERVED_PREFIXES.map(|p| format!("`{p}`")).join(", ")
            ),
        ));
    }
    if name == "sim.seed" {
        return Err(ConfigError::new(key, SEED_FIX));
    }
    match val {
        Value::Sequence(s) => {
            if !(name.starts_with("sim.") || name.starts_with("components.")) {
                return Err(ConfigError::new(
                    key,
                    "a factor with a list of values is an override path: start it with `sim.` or \
                     `components.<address>.` (or give `{files: [override.yaml, ...]}` to vary override files)",
                ));
            }
            if name.split('.').any(str::is_empty) {
                return Err(ConfigError::new(key, "the path has an empty segment"));
            }
            if s.is_empty() {
                return Err(ConfigError::new(key, "has no values: list at least one"));
            }
            for (i, v) in s.iter().enumerate() {
                crate::world::yaml::check_strings(v, &format!("{key}[{i}]"))?;
                if let Some(x) = non_finite(v) {
                    return Err(ConfigError::new(
                        format!("{key}[{i}]"),
                        format!(
                            "is {x}, not a finite number: a factor level must be finite (a trial \
                             cannot be told apart by it, and the table would show it as null); \
                             give a finite value"
                        ),
                    ));
                }
            }
            Ok(Factor { name: name.to_string(), levels: Levels::Values(s.clone()) })
        }
        Value::Mapping(m) => {
            let files = m.get("files");
            if m.len() != 1 || files.is_none() {
                return Err(ConfigError::new(
                    key,
                    "a factor mapping takes one key, `files: [override.yaml, ...]`",
                ));
            }
            let Some(Value::Sequence(list)) = files else {
                return Err(ConfigError::new(
                    format!("{key}.files"),
                    "is a list of override files",
                ));
            };
            if list.is_empty() {
                return Err(ConfigError::new(
                    format!("{key}.files"),
                    "has no files: list at least one",
                ));
            }
            let mut levels = Vec::new();
            for (i, f) in list.iter().enumerate() {
                let k = format!("{key}.files[{i}]");
                let Some(f) = f.as_str() else {
                    return Err(ConfigError::new(k, "is an override file's path"));
                };
                let p = dir.join(f);
                let a = load_override_file(&p).map_err(|e| ConfigError::new(&k, e.message))?;
                if a.iter().any(|x| x.path == ["sim", "seed"]) {
                    return Err(ConfigError::new(k, format!("`{f}` sets sim.seed: {SEED_FIX}")));
                }
                levels.push((f.to_string(), a));
            }
            Ok(Factor { name: name.to_string(), levels: Levels::Files(levels) })
        }
        _ => Err(ConfigError::new(
            key,
            "takes a list of values (`[0, 0.01]`) or `{files: [override.yaml, ...]}`",
        )),
    }
}
