//! The standalone driver: owns the loop, paces it, bounds it, reports progress and a summary.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::context::RunState;
use crate::engine::pacing::Pacer;
use crate::engine::Engine;
use crate::error::SimError;

/// Where the run stops.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    /// Stop after this many steps.
    pub steps: Option<u64>,
    /// Stop after this much simulated time (s).
    pub seconds: Option<f64>,
}

/// What a finished run reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Physics steps taken.
    pub steps: u64,
    /// Simulated time at the end (s).
    pub sim_time: f64,
    /// Wall time of the loop (s).
    pub wall_s: f64,
    /// Why it ended (`steps`, `seconds`, a plugin's stop reason, `interrupted`).
    pub reason: String,
}

impl Summary {
    /// Real-time factor (sim seconds per wall second).
    pub fn rtf(&self) -> f64 {
        if self.wall_s > 0.0 {
            self.sim_time / self.wall_s
        } else {
            f64::INFINITY
        }
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "run finished ({}): {} steps, sim time {:.3} s, wall {:.3} s, real-time factor {:.2}x",
            self.reason,
            self.steps,
            self.sim_time,
            self.wall_s,
            self.rtf()
        )
    }
}

/// Run `engine` until a limit, a plugin's stop request, or `stop` returns true. `factor` is the
/// pacing (`None` = asap). `progress` prints a line on stderr at most once a second.
pub fn run(
    engine: &mut Engine,
    limits: Limits,
    factor: Option<f64>,
    progress: bool,
    stop: &dyn Fn() -> bool,
) -> Result<Summary, SimError> {
    run_with(engine, limits, factor, progress, stop, &mut |_| {})
}

/// [`run`] with `between` called on the physics thread after every batch of steps and every
/// paused idle (the window's sync point).
pub fn run_with(
    engine: &mut Engine,
    limits: Limits,
    factor: Option<f64>,
    progress: bool,
    stop: &dyn Fn() -> bool,
    between: &mut dyn FnMut(&mut Engine),
) -> Result<Summary, SimError> {
    let dt = engine.dt();
    let max_steps = limits.steps.or(limits.seconds.map(|s| (s / dt).round() as u64));
    let sync = engine.sim.sync.clone();
    let mut lock = crate::engine::lockstep::Lockstep::new(engine, sync.as_ref())?;
    // Lockstep paces itself on the controller: no wall-clock pacing.
    let factor = if lock.is_some() { None } else { factor };
    let mut pacer = Pacer::new(dt, factor);
    let start = Instant::now();
    let mut last_report = start;
    let mut steps: u64 = 0;
    let reason;
    'outer: loop {
        // Commands first, so a pause/quit/reset posted since the last step takes effect now.
        engine.ctx.drain_commands();
        if let Some(scope) = engine.ctx.control.reset.take() {
            engine.reset_scoped(scope)?;
            pacer.resync();
        }
        match engine.ctx.control.state {
            RunState::Quitting => {
                reason = "quit requested".to_string();
                break;
            }
            RunState::Paused | RunState::Stopped if engine.ctx.control.pending_steps == 0 => {
                // Pause freezes; it does not de-energize: no step, targets held, transport alive.
                engine.idle()?;
                between(engine);
                std::thread::sleep(Duration::from_millis(10));
                pacer.resync();
                if stop() {
                    reason = "interrupted".to_string();
                    break;
                }
                continue;
            }
            _ => {}
        }
        let stepping_paused = engine.ctx.control.state != RunState::Playing;
        let n = if stepping_paused { 1 } else { pacer.due_steps() };
        for _ in 0..n {
            if let Some(m) = max_steps {
                if steps >= m {
                    reason = if limits.steps.is_some() {
                        "steps".to_string()
                    } else {
                        "seconds".to_string()
                    };
                    break 'outer;
                }
            }
            if let Some(l) = lock.as_mut() {
                l.before_step(engine, stop)?;
            }
            engine.step()?;
            steps += 1;
            if let Some(l) = lock.as_mut() {
                l.after_step(engine, stop)?;
            }
            if stepping_paused {
                engine.ctx.control.pending_steps =
                    engine.ctx.control.pending_steps.saturating_sub(1);
            }
            if let Some(r) = engine.ctx.stop_requested() {
                reason = format!("stop requested: {r}");
                break 'outer;
            }
        }
        between(engine);
        if stop() {
            reason = "interrupted".to_string();
            break;
        }
        if progress && last_report.elapsed() >= Duration::from_secs(1) {
            last_report = Instant::now();
            let wall = start.elapsed().as_secs_f64();
            crate::cli::stderr::say!(
                "t = {:.2} s sim, {:.1} s wall, real-time factor {:.2}x",
                engine.sim_time(),
                wall,
                engine.sim_time() / wall
            );
        }
    }
    Ok(Summary {
        steps,
        sim_time: engine.sim_time(),
        wall_s: start.elapsed().as_secs_f64(),
        reason,
    })
}

/// Directories searched for a world given by bare name: `$ROQSIM_WORLD_PATH`, an installed
/// `share/roqsim/worlds`, and the source tree's `worlds/`.
pub fn world_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Ok(p) = std::env::var("ROQSIM_WORLD_PATH") {
        roots.extend(p.split(':').filter(|s| !s.is_empty()).map(PathBuf::from));
    }
    roots.extend(crate::world::prefixes::binary_prefix().map(|p| p.join("share/roqsim/worlds")));
    roots.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("worlds"));
    roots.retain(|r| r.is_dir());
    // One root once, even when the install tree is the source tree (a symlinked share/).
    let mut seen = Vec::new();
    roots.retain(|r| {
        let c = r.canonicalize().unwrap_or_else(|_| r.clone());
        if seen.contains(&c) {
            false
        } else {
            seen.push(c);
            true
        }
    });
    roots
}

/// Resolve a world argument: an existing file, else `<name>` or `<name>.yaml` in [`world_roots`].
pub fn resolve_world(arg: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(arg);
    if p.is_file() {
        return Ok(p);
    }
    if let Some((pkg, _)) = crate::world::compose::split_package_ref(arg) {
        if pkg != "roqsim" {
            return crate::world::compose::resolve_world_ref(arg, Path::new("."))
                .map(|r| r.path)
                .map_err(|e| e.replacen("parent world", "world", 1));
        }
    }
    let written = arg;
    let arg = match arg.strip_prefix("roqsim:") {
        Some("") => {
            return Err(format!(
                "world `{written}` names no world: write `roqsim:<world>` (bundled: {})",
                bundled_worlds().join(", ")
            ))
        }
        Some(rest) => {
            crate::world::compose::inside_package("roqsim", rest)
                .map_err(|e| format!("world {e}"))?;
            rest
        }
        None => arg,
    };
    for root in world_roots() {
        for cand in [root.join(arg), root.join(format!("{arg}.yaml"))] {
            if cand.is_file() {
                return Ok(cand);
            }
        }
    }
    if p.exists() && !p.is_dir() {
        return Err(format!(
            "world `{written}` is not a regular file (a device, pipe or socket): name a world YAML file"
        ));
    }
    if p.is_dir() {
        return Err(format!(
            "world `{written}` is a directory: name a world YAML file in it, or a bundled world ({})",
            bundled_worlds().join(", ")
        ));
    }
    Err(format!(
        "world `{written}` not found: not a file, and no bundled world of that name (bundled: {})",
        bundled_worlds().join(", ")
    ))
}

/// Names of the bundled worlds, sorted, each once (an installed binary sees the install tree
/// and the source tree; a name in both is one world, the first root's, as resolution picks it).
pub fn bundled_worlds() -> Vec<String> {
    let mut known = Vec::new();
    for root in world_roots() {
        if let Ok(rd) = std::fs::read_dir(root) {
            for e in rd.flatten() {
                if let Some(n) = e.file_name().to_str().and_then(|n| n.strip_suffix(".yaml")) {
                    known.push(n.to_string());
                }
            }
        }
    }
    known.sort();
    known.dedup();
    known
}
