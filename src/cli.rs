//! The `roqsim` command line. It lives in the library so that a user's own crate can add
//! plugins and still get every verb: its `main` calls [`main_with`] with its plugin descriptors
//! (examples/custom_plugin is the template).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};

use crate::error::{ConfigError, ConfigErrors};
use crate::plugin::PluginDescriptor;
use crate::runner::{self, Limits};
use crate::world::overrides::{load_override_file, parse_set, Assignment};
use crate::{load_world, Engine, EngineOptions, LoadOptions};

mod cli_render;
mod cli_render_recording;
mod cli_view;
mod outputs;
mod ros_args;
#[cfg(feature = "ros")]
use ros_args::lift_node_remaps;
pub use ros_args::strip_ros_args;
pub mod stderr;
pub mod stdout;

/// Plugin-driven MuJoCo simulator for mobile robots, arms, mobile manipulators and conveyors.
#[derive(Parser)]
#[command(name = "roqsim", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a world headless (deterministic for a given seed).
    Sim(SimArgs),
    /// Validate a world and compile it; reports every error at once.
    Check(WorldArgs),
    /// A picture (PNG) or a video (MP4) of a world or a recording (FILE.mcap), without a window;
    /// one line of JSON.
    Render(cli_render::RenderArgs),
    /// Re-run a recording from its provenance alone (`--verify`: bitwise, first divergence).
    Replay(crate::record::cli::ReplayArgs),
    /// Print a recording's state sample nearest a time as one line of JSON (`--sensor`: re-run a
    /// sensor on it).
    State(crate::record::cli::StateArgs),
    /// List or describe the built-in plugins.
    Plugins {
        #[command(subcommand)]
        what: PluginsCmd,
    },
    /// Ask a world what it is made of (`inputs`) and what it provides (`describe`), as JSON.
    Scenes {
        #[command(subcommand)]
        what: crate::introspect::cli::ScenesCmd,
    },
    /// What is installed: models, one model's names, worlds, plugins, as JSON.
    Catalog {
        #[command(subcommand)]
        what: crate::introspect::cli::CatalogCmd,
    },
    /// Sweep worlds, override values and seeds: one `roqsim sim` process per trial, one table.
    Campaign {
        #[command(subcommand)]
        what: crate::campaign::cli::CampaignCmd,
    },
    /// Export a spawned robot's description.
    Export {
        #[command(subcommand)]
        what: ExportCmd,
    },
}

#[derive(Subcommand)]
enum ExportCmd {
    /// The robot's URDF, read off the compiled model (links = bodies, joints = its joints).
    Urdf {
        #[command(flatten)]
        world: WorldArgs,
        /// The entity to export (its entry's `name:`).
        #[arg(long)]
        robot: String,
        /// Write here instead of standard output.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// The robot's SRDF: a planning group per arm controller, grippers as end effectors, home and
    /// keyframes as group states, the collision matrix sampled as MoveIt's setup assistant does.
    Srdf {
        #[command(flatten)]
        world: WorldArgs,
        /// The entity to export (its entry's `name:`).
        #[arg(long)]
        robot: String,
        /// Write here instead of standard output.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// Random configurations sampled for the collision matrix.
        #[arg(long, default_value_t = crate::export::srdf::DEFAULT_SAMPLES, allow_hyphen_values = true, value_parser = srdf_samples)]
        samples: usize,
        /// End the arm chain at this site's frame (a grasp point) instead of its last link.
        #[arg(long, value_name = "SITE")]
        tip_site: Option<String>,
    },
    /// A MoveIt 2 configuration folder (URDF, SRDF, joint limits, kinematics, controllers, a
    /// move_group launch file) naming the actions roqsim serves.
    Moveit {
        #[command(flatten)]
        world: WorldArgs,
        /// The entity to export (its entry's `name:`).
        #[arg(long)]
        robot: String,
        /// The folder to write (created when missing).
        #[arg(short = 'o', long = "output", value_name = "DIR")]
        output: PathBuf,
        /// Random configurations sampled for the SRDF's collision matrix.
        #[arg(long, default_value_t = crate::export::srdf::DEFAULT_SAMPLES, allow_hyphen_values = true, value_parser = srdf_samples)]
        samples: usize,
        /// End the arm chain at this site's frame (a grasp point) instead of its last link.
        #[arg(long, value_name = "SITE")]
        tip_site: Option<String>,
    },
}

#[derive(Subcommand)]
enum PluginsCmd {
    /// Every registered plugin with its summary.
    List,
    /// A plugin's config keys: types, defaults, units.
    Describe {
        /// Plugin short name.
        name: String,
    },
}

#[derive(Args, Clone)]
struct WorldArgs {
    /// World YAML file, or the name of a bundled world (e.g. `demo`).
    world: String,
    /// Override one value: `path=value` (repeatable; later wins), e.g. `sim.timestep=0.001`.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    set: Vec<String>,
    /// Override from a YAML file shaped like the world (repeatable; composes in order).
    #[arg(long = "override", value_name = "FILE")]
    overrides: Vec<PathBuf>,
}

/// A count or seed flag's value: a whole number in 0 ..= 2^64 - 1, said so when it is not (clap's
/// own text for `-1` is "invalid digit", or a tip to write `-- -1`).
pub(crate) fn whole_number(s: &str) -> Result<u64, String> {
    s.parse::<u64>().map_err(|_| {
        format!("takes a whole number from 0 to {}, got `{}`", u64::MAX, crate::error::clip(s))
    })
}

/// A count flag that must be at least 1 (`sim --steps`, `campaign run --jobs`): a whole number in
/// 1 ..= 2^64 - 1, said so when it is not (0 would run nothing).
pub(crate) fn count_from_1(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "takes a whole number from 1 to {}, got `{}`",
            u64::MAX,
            crate::error::clip(s)
        )),
    }
}

/// `export srdf|moveit --samples`: a whole number of random configurations within
/// [`MAX_SRDF_SAMPLES`](crate::export::srdf::MAX_SRDF_SAMPLES) (a larger count would run for days).
fn srdf_samples(s: &str) -> Result<usize, String> {
    let max = crate::export::srdf::MAX_SRDF_SAMPLES;
    match s.parse::<usize>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(format!(
            "takes a whole number of random configurations from 0 to {max} (default {}), got `{}`",
            crate::export::srdf::DEFAULT_SAMPLES,
            crate::error::clip(s)
        )),
    }
}

#[derive(Args)]
struct SimArgs {
    #[command(flatten)]
    world: WorldArgs,
    /// Stop after N physics steps (at least 1).
    #[arg(long, conflicts_with = "seconds", allow_hyphen_values = true, value_parser = count_from_1)]
    steps: Option<u64>,
    /// Stop after S seconds of simulated time.
    #[arg(long, allow_hyphen_values = true)]
    seconds: Option<f64>,
    /// The run's seed for every noise draw (wins over sim.seed).
    #[arg(long, allow_hyphen_values = true, value_parser = whole_number)]
    seed: Option<u64>,
    /// Pacing: `realtime`, `asap`, or a real-time factor like `4` (wins over sim.pacing).
    #[arg(long, allow_hyphen_values = true)]
    pacing: Option<String>,
    /// Print per-plugin, per-hook timing and the load phases.
    #[arg(long)]
    profile: bool,
    /// Append the ROS 2 bridge (publish every endpoint, /clock and TF).
    #[arg(long)]
    ros: bool,
    /// Publish TF on /NS/tf and /NS/tf_static (implies --ros).
    #[arg(long, value_name = "NS")]
    tf_namespace: Option<String>,
    /// Also serve simulation_interfaces (implies --ros).
    #[arg(long)]
    sim_control: bool,
    /// Drop transport plugins: nothing is published or received.
    #[arg(long)]
    no_communication: bool,
    /// No progress lines on stderr.
    #[arg(long, short)]
    quiet: bool,
    /// Open the interactive window; optionally set its camera: `--view azimuth=90,distance=3`
    /// (keys of sim.view, layered over the world's like --set). Put WORLD before it.
    #[arg(long, value_name = "KEY=VALUE,...", num_args = 0..=1, default_missing_value = "")]
    view: Option<String>,
    /// With --view: show roqsim's run panel (state, sim time, play/pause/step/reset, keys).
    #[arg(long)]
    right_ui: bool,
    /// With --view: open MuJoCo's viewer with its left panel (toggles, actuator sliders, joints)
    /// instead of roqsim's window; its camera does not follow sim.view.track (docs/view.md).
    #[arg(long)]
    left_ui: bool,
    /// Controllers stop writing ctrl each tick (they still hold the pose on reset): the window's
    /// actuator sliders drive the actuators, world-wide (with --view: MuJoCo's viewer, as --left-ui).
    #[arg(long)]
    manual_control: bool,
    #[command(flatten)]
    record: crate::record::cli::RecordArgs,
    /// Write a JSON end-of-run summary here (stop reason, steps, sim time, seed, entity poses,
    /// monitor reports; docs/campaigns.md).
    #[arg(long, value_name = "FILE.json")]
    summary: Option<PathBuf>,
    /// With --summary: also keep this endpoint's last value, by topic (`/scan`, `/robot1/odom`; repeatable).
    #[arg(long = "summary-endpoint", value_name = "ADDRESS", requires = "summary")]
    summary_endpoints: Vec<String>,
}

fn assignments(w: &WorldArgs) -> Result<Vec<Assignment>, ConfigErrors> {
    // --override files first, then --set: a saved set plus an ad-hoc tweak, the tweak winning.
    let mut out = Vec::new();
    let mut errors = ConfigErrors::default();
    for f in &w.overrides {
        match load_override_file(f) {
            Ok(a) => out.extend(a),
            Err(e) => errors.0.push(e),
        }
    }
    for s in &w.set {
        match parse_set(s) {
            Ok(a) => out.push(a),
            Err(e) => errors.0.push(e),
        }
    }
    errors.into_result().map(|_| out)
}

fn fail_config(e: &ConfigErrors) -> ExitCode {
    crate::cli::stderr::say_text!("error: {e}");
    ExitCode::from(2)
}

/// The `roqsim` command line of the roqsim binary itself.
pub fn main() -> ExitCode {
    main_with("roqsim", Vec::new())
}

/// The full `roqsim` command line with extra plugins: `provider` names the crate they come from
/// (shown by `roqsim catalog plugins`), `plugins` are their descriptors (built with
/// [`crate::plugin_descriptor!`]). They resolve by short name in every world, exactly like the
/// built-in ones; a name that clashes with a built-in is refused.
pub fn main_with(provider: &str, plugins: Vec<PluginDescriptor>) -> ExitCode {
    if !plugins.is_empty() {
        if let Err(e) = crate::plugins::external::register_external(provider, plugins) {
            crate::cli::stderr::say!("error: {e}");
            return ExitCode::from(2);
        }
    }
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter =
        tracing_subscriber::EnvFilter::try_from_env("ROQSIM_LOG").unwrap_or_else(|_| "info".into());
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(|| stderr::TidyLog)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .without_time();
    let logs = tracing_subscriber::registry().with(filter).with(stderr);
    // With ROS: the same lines on /rosout once the bridge node exists (crate::ros::rosout).
    #[cfg(feature = "ros")]
    let logs = logs.with(crate::ros::rosout::RosoutLayer);
    logs.init();
    #[cfg(feature = "ros")]
    lift_node_remaps();
    let args = match strip_ros_args(std::env::args_os()) {
        Ok((a, files)) => {
            // rcl reads them when the node starts: a FIFO or a device would hang it there.
            for (flag, f) in &files {
                let what = format!("--ros-args {flag}");
                let expect = match *flag {
                    "--params-file" => crate::input_file::YAML,
                    _ => {
                        crate::input_file::Expect { file: "a log configuration file", cap: 8 << 20 }
                    }
                };
                if let Err(m) = crate::input_file::check_regular(f, &what, expect) {
                    crate::cli::stderr::say!("error: {m}");
                    return ExitCode::from(2);
                }
            }
            outputs::set_ros_arg_files(files);
            a
        }
        Err(m) => {
            crate::cli::stderr::say!("error: {m}");
            return ExitCode::from(2);
        }
    };
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => return clap_answer(&clip_clap_values(e)),
    };
    match cli.command {
        Command::Plugins { what } => plugins_cmd(what),
        Command::Check(w) => check(w),
        Command::Sim(a) => sim(a),
        Command::Render(a) => cli_render::render(a),
        Command::Export { what } => export_cmd(what),
        Command::Replay(a) => crate::record::cli::replay(&a),
        Command::State(a) => crate::record::cli::state(&a),
        Command::Scenes { what } => crate::introspect::cli::scenes(what),
        Command::Catalog { what } => crate::introspect::cli::catalog(what),
        Command::Campaign { what } => crate::campaign::cli::campaign(what),
    }
}

/// clap's usage error with the user's values it quotes clipped ([`crate::error::clip`]): a
/// 100,000-character value or argument is not echoed back whole.
fn clip_clap_values(mut e: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue};
    for kind in [ContextKind::InvalidValue, ContextKind::InvalidArg, ContextKind::SuggestedArg] {
        let clipped = match e.get(kind) {
            Some(ContextValue::String(s)) => ContextValue::String(crate::error::clip(s)),
            Some(ContextValue::Strings(v)) => {
                ContextValue::Strings(v.iter().map(|s| crate::error::clip(s)).collect())
            }
            _ => continue,
        };
        e.insert(kind, clipped);
    }
    e
}

/// What clap answers instead of a run: `--help` and `--version` on stdout (exit 0), a usage error
/// on stderr (exit 2). Like coreutils (`ls --help >/dev/full`), help that cannot be written is a
/// write error, exit 2: clap's own `exit()` drops the failure and exits 0.
fn clap_answer(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    use std::io::Write;
    let to_stdout = matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
    let written = e.print().and_then(|()| {
        if to_stdout {
            std::io::stdout().flush()
        } else {
            std::io::stderr().flush()
        }
    });
    match written {
        Err(err) if to_stdout && err.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::from(stdout::BROKEN_PIPE_EXIT)
        }
        Err(err) if to_stdout => {
            stderr::say!("error: write error: cannot write to stdout: {err}");
            ExitCode::from(2)
        }
        _ => ExitCode::from(e.exit_code() as u8),
    }
}

fn plugins_cmd(what: PluginsCmd) -> ExitCode {
    match what {
        PluginsCmd::List => {
            let rows: Vec<String> = crate::plugins::registry()
                .iter()
                .map(|d| format!("{:<24} {}", d.name, d.summary))
                .collect();
            stdout::emit_then(&rows.join("\n"), ExitCode::SUCCESS)
        }
        PluginsCmd::Describe { name } => match crate::plugins::lookup(&name) {
            Some(d) => match stdout::emit_text(&crate::plugins::describe(d)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(code) => code,
            },
            None => {
                let names: Vec<&str> = crate::plugins::registry().iter().map(|d| d.name).collect();
                crate::cli::stderr::say!(
                    "error: unknown plugin `{}`; registered: {}",
                    crate::error::clip(&name),
                    names.join(", ")
                );
                ExitCode::from(2)
            }
        },
    }
}

fn load(w: &WorldArgs, opts: LoadOptions) -> Result<crate::LoadedWorld, ConfigErrors> {
    let path =
        runner::resolve_world(&w.world).map_err(|m| ConfigErrors::from(ConfigError::new("", m)))?;
    let mut opts = opts;
    // The caller's own assignments (--view) come after --override and --set.
    let mut all = assignments(w)?;
    all.append(&mut opts.assignments);
    opts.assignments = all;
    load_world(&path, &opts)
}

fn check(w: WorldArgs) -> ExitCode {
    let world = match load(&w, LoadOptions::default()) {
        Ok(x) => x,
        Err(e) => return fail_config(&e),
    };
    for warn in &world.warnings {
        crate::cli::stderr::say!("warning: {warn}");
    }
    let n = world.components.len();
    // A preview seed: checking a world is not a measurement.
    match Engine::new(world, EngineOptions { profile: false, seed: Some(0) }) {
        Ok(mut e) => {
            if let Err(err) = e.topic_clashes() {
                crate::cli::stderr::say!("error: {err}");
                return ExitCode::from(2);
            }
            // One step reveals what compiling cannot (a state that goes non-finite at once).
            if let Err(err) = e.step() {
                crate::cli::stderr::say!(
                    "error: the world compiles, but its first step fails: {err}"
                );
                return ExitCode::from(2);
            }
            let m = e.ctx.model().ffi();
            let line = format!(
                "ok: {} components; compiled model: {} bodies, {} joints, {} actuators, {} geoms; timestep {} s",
                n, m.nbody, m.njnt, m.nu, m.ngeom, e.dt()
            );
            stdout::emit_then(&line, ExitCode::SUCCESS)
        }
        Err(e) => {
            crate::cli::stderr::say!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn sim(a: SimArgs) -> ExitCode {
    if let Some(why) = cli_view::panel_flag_refusal(a.left_ui, a.right_ui, a.view.is_some()) {
        crate::cli::stderr::say!("error: {why}");
        return ExitCode::from(2);
    }
    if a.view.is_some() {
        return cli_view::sim_windowed(a);
    }
    let (mut engine, limits, factor) = match prepare(&a) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    }
    let result =
        runner::run(&mut engine, limits, factor, !a.quiet, &|| interrupted.load(Ordering::SeqCst));
    if let Some(code) = write_summary(&a, &mut engine, &result) {
        return code;
    }
    finish(&mut engine, result, a.profile)
}

/// `--summary FILE`: write the end-of-run summary (windowed runs too); `Some(exit code)` when it
/// could not be written (the engine is then shut down).
fn write_summary(
    a: &SimArgs,
    engine: &mut Engine,
    result: &Result<runner::Summary, crate::error::SimError>,
) -> Option<ExitCode> {
    let path = a.summary.as_ref()?;
    let run = result.as_ref().map_err(|e| e.to_string());
    let json = crate::campaign::summary::summary_json(&engine.ctx, run, &a.summary_endpoints);
    if let Err(m) = crate::campaign::summary::write_summary(path, &json) {
        crate::cli::stderr::say!("error: {m}");
        engine.shutdown();
        return Some(ExitCode::from(1));
    }
    None
}

/// `--record` or `--summary` naming a file the run reads ([`outputs::Inputs`]), or each other.
fn output_clash(a: &SimArgs) -> Option<String> {
    let outputs: Vec<(&str, &std::path::Path)> =
        [("--record", a.record.record.as_ref()), ("--summary", a.summary.as_ref())]
            .into_iter()
            .filter_map(|(f, o)| o.map(|o| (f, o.as_path())))
            .collect();
    if outputs.is_empty() {
        return None;
    }
    if let Some(m) = outputs::Inputs::of_world(&a.world).clash(&outputs) {
        return Some(m);
    }
    if let (Some(r), Some(s)) = (&a.record.record, &a.summary) {
        if outputs::same(r, s) {
            return Some(format!(
                "--record and --summary both name {}: name two files",
                r.display()
            ));
        }
    }
    None
}

/// A span of sim time a flag asks for (`sim --seconds`, `render --at`, a video's `--seconds`):
/// finite, >= 0 and at most [`MAX_RUN_SECONDS`](crate::world::bounds::MAX_RUN_SECONDS).
pub(crate) fn check_span(flag: &str, s: f64) -> Result<f64, String> {
    let max = crate::world::bounds::MAX_RUN_SECONDS;
    if (0.0..=max).contains(&s) {
        Ok(s)
    } else {
        Err(format!(
            "{flag} must be a sim time within [0, {max}] s (a year; count a longer run with --steps), got {}",
            crate::error::num(s)
        ))
    }
}

/// Load the world and build the engine as `sim` does: (engine, limits, pacing factor).
fn prepare(a: &SimArgs) -> Result<(Engine, Limits, Option<f64>), ExitCode> {
    // The output files first: an unwritable path is refused before anything is built or run,
    // and so is one that names an input (writing it would destroy the world being run).
    if let Some(m) = output_clash(a) {
        crate::cli::stderr::say!("error: {m}");
        return Err(ExitCode::from(2));
    }
    if let Some(s) = a.seconds {
        if let Err(m) = check_span("--seconds", s) {
            crate::cli::stderr::say!("error: {m}");
            return Err(ExitCode::from(2));
        }
        if s == 0.0 {
            crate::cli::stderr::say!(
                "error: --seconds 0 runs no step: give a sim time of at least one physics step (sim.timestep)"
            );
            return Err(ExitCode::from(2));
        }
    }
    if let Some(p) = &a.summary {
        if let Err(m) = crate::campaign::summary::check_writable(p) {
            crate::cli::stderr::say!("error: {m}");
            return Err(ExitCode::from(2));
        }
    }
    let mut view_assigns = Vec::new();
    if let Some(spec) = &a.view {
        match cli_view::view_assignments(spec) {
            Ok(v) => view_assigns = v,
            Err(e) => return Err(fail_config(&e)),
        }
    }
    let opts = LoadOptions {
        assignments: view_assigns,
        ros: a.ros,
        tf_namespace: a.tf_namespace.clone(),
        sim_control: a.sim_control,
        no_communication: a.no_communication,
    };
    let world = match load(&a.world, opts) {
        Ok(x) => x,
        Err(e) => return Err(fail_config(&e)),
    };
    for warn in &world.warnings {
        crate::cli::stderr::say!("warning: {warn}");
    }
    // The recording is opened (created, truncated) only now that the world has loaded: a world
    // that fails to load leaves every file as it was, even one its broken text hid from the
    // output check above (a parent named by a world with a syntax error).
    let mut recorder = match a.record.create() {
        Ok(r) => r,
        Err(e) => {
            crate::cli::stderr::say!("error: {e}");
            return Err(ExitCode::from(2));
        }
    };
    let factor = match a.pacing.as_deref() {
        None => world.sim.pacing.map(|p| p.factor()).unwrap_or(Some(1.0)),
        Some("asap") => None,
        Some("realtime") => Some(1.0),
        Some(x) => {
            match x
                .parse::<f64>()
                .map_err(|_| String::new())
                .and_then(crate::world::sim::check_pacing_factor)
            {
                Ok(f) => Some(f),
                Err(m) => {
                    let why = if m.is_empty() { String::new() } else { format!(": {m}") };
                    crate::cli::stderr::say!("error: --pacing takes realtime, asap or a real-time factor, got `{x}`{why}");
                    return Err(ExitCode::from(2));
                }
            }
        }
    };
    let seed = match a.seed.or(world.sim.seed) {
        Some(s) => s,
        None => {
            let s = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
                ^ std::process::id() as u64;
            let s = s % 1_000_000_000;
            crate::cli::stderr::say!("seed: {s} (drawn; pass --seed {s} to repeat this run)");
            s
        }
    };
    if let Some(s) = a.seconds {
        if (s / world.timestep).round() < 1.0 {
            crate::cli::stderr::say!(
                "error: --seconds {s} is shorter than one physics step ({} s): a run takes at least one step",
                world.timestep
            );
            return Err(ExitCode::from(2));
        }
    }
    if let Some(r) = recorder.as_mut() {
        if let Err(e) = r.prepare(&run_inputs(a, seed), &world) {
            crate::cli::stderr::say!("error: --record: {e}");
            return Err(ExitCode::from(2));
        }
    }
    let mut engine =
        match Engine::new(world, EngineOptions { profile: a.profile, seed: Some(seed) }) {
            Ok(e) => e,
            Err(e) => {
                crate::cli::stderr::say!("error: {e}");
                return Err(ExitCode::from(2));
            }
        };
    if let Err(e) = engine.topic_clashes() {
        crate::cli::stderr::say!("error: {e}");
        return Err(ExitCode::from(2));
    }
    if let Some(r) = recorder {
        let path = r.path().to_path_buf();
        if let Err(e) = r.attach(&mut engine) {
            crate::cli::stderr::say!("error: --record {}: {e}", path.display());
            return Err(ExitCode::from(2));
        }
    }
    if a.profile {
        crate::cli::stderr::say!("load phases:");
        for (name, secs) in engine.load_report() {
            crate::cli::stderr::say!("  {:<12} {:>9.2} ms", name, secs * 1e3);
        }
    }
    engine.ctx.run.manual_control = a.manual_control;
    if let Err(m) = crate::campaign::summary::check_endpoints(&engine.ctx, &a.summary_endpoints) {
        crate::cli::stderr::say!("error: --summary-endpoint: {m}");
        return Err(ExitCode::from(2));
    }
    Ok((engine, Limits { steps: a.steps, seconds: a.seconds }, factor))
}

/// What the recording's provenance keeps of this command line.
fn run_inputs(a: &SimArgs, seed: u64) -> crate::record::RunInputs {
    let world_path = runner::resolve_world(&a.world.world).unwrap_or_default();
    crate::record::RunInputs {
        world_ref: a.world.world.clone(),
        world_yaml: std::fs::read_to_string(&world_path).unwrap_or_default(),
        world_path,
        assignments: assignments(&a.world).unwrap_or_default(),
        override_files: a.world.overrides.clone(),
        ros: a.ros,
        tf_namespace: a.tf_namespace.clone(),
        sim_control: a.sim_control,
        no_communication: a.no_communication,
        seed,
    }
}

/// Shut the engine down (every shutdown hook runs) and report the run: the exit code.
fn finish(
    engine: &mut Engine,
    result: Result<runner::Summary, crate::SimError>,
    profile: bool,
) -> ExitCode {
    engine.ctx.run.end_reason = Some(match &result {
        Ok(summary) => format!("the run finished ({})", summary.reason),
        Err(e) => format!("the run failed: {e}"),
    });
    let shutdown_errors = engine.shutdown();
    match result {
        Ok(summary) => {
            // The run is done either way; a reader that left early changes only the exit code.
            let written = stdout::emit(&summary.to_string());
            if profile {
                crate::cli::stderr::say_text!("{}", engine.format_timing());
            }
            if let Err(code) = written {
                code
            } else if shutdown_errors.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            crate::cli::stderr::say!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn export_cmd(what: ExportCmd) -> ExitCode {
    let (world, robot) = match &what {
        ExportCmd::Urdf { world, robot, .. }
        | ExportCmd::Srdf { world, robot, .. }
        | ExportCmd::Moveit { world, robot, .. } => (world.clone(), robot.clone()),
    };
    // -o must not name a file the export reads (refused before anything is built).
    let inputs = outputs::Inputs::of_world(&world);
    if let ExportCmd::Urdf { output: Some(p), .. } | ExportCmd::Srdf { output: Some(p), .. } = &what
    {
        if let Some(m) = inputs.clash(&[("-o", p)]) {
            stderr::say!("error: {m}");
            return ExitCode::from(2);
        }
    }
    let w = match load(&world, LoadOptions::default()) {
        Ok(x) => x,
        Err(e) => return fail_config(&e),
    };
    // The bridge settings the world states (its `namespace:` moves the served actions).
    let bridge = match w.components.iter().find(|c| c.plugin == "ros2_bridge") {
        Some(c) => match crate::plugin::typed_config::<crate::ros::config::BridgeConfig>(
            &serde_norway::Value::Mapping(c.config.clone()),
        ) {
            Ok(b) => b,
            Err(es) => {
                for e in es {
                    crate::cli::stderr::say!("error: {e}");
                }
                return ExitCode::from(2);
            }
        },
        None => crate::ros::config::BridgeConfig::default(),
    };
    let mut e = match Engine::new(w, EngineOptions { profile: false, seed: Some(0) }) {
        Ok(e) => e,
        Err(e) => {
            crate::cli::stderr::say!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let Some(ent) = e.ctx.entities.get(&robot).cloned() else {
        crate::cli::stderr::say!(
            "error: --robot: no entity `{robot}` in this world; entities: [{}]",
            e.ctx.entities.names().join(", ")
        );
        return ExitCode::from(2);
    };
    let (text, output, what_name) = match what {
        ExportCmd::Urdf { output, .. } => {
            let u = crate::export::urdf::export_for(&e.ctx, &ent)
                .map(|u| crate::export::urdf::with_static_frames(&e.ctx, &ent, &u));
            (u, output, "urdf")
        }
        ExportCmd::Srdf { output, samples, tip_site, .. } => (
            crate::export::srdf::export_srdf(&mut e.ctx, &ent, samples, 0, tip_site.as_deref())
                .map(|s| s.text),
            output,
            "srdf",
        ),
        ExportCmd::Moveit { output, samples, tip_site, .. } => {
            let opts = crate::export::moveit::MoveitOptions { samples, seed: 0, tip_site, bridge };
            let files = match crate::export::moveit::export_moveit(&mut e.ctx, &ent, &opts) {
                Ok(f) => f,
                Err(m) => {
                    crate::cli::stderr::say!("error: export moveit `{robot}`: {m}");
                    return ExitCode::from(2);
                }
            };
            let paths: Vec<PathBuf> = files.iter().map(|(name, _)| output.join(name)).collect();
            let flagged: Vec<(&str, &std::path::Path)> =
                paths.iter().map(|p| ("-o", p.as_path())).collect();
            if let Some(m) = inputs.clash(&flagged) {
                stderr::say!("error: {m}");
                return ExitCode::from(2);
            }
            if let Err(err) = std::fs::create_dir_all(&output) {
                crate::cli::stderr::say!("error: -o {}: {err}", output.display());
                return ExitCode::from(2);
            }
            for (name, text) in files {
                let p = output.join(&name);
                if let Err(err) = std::fs::write(&p, text) {
                    crate::cli::stderr::say!("error: -o {}: {err}", p.display());
                    return ExitCode::from(2);
                }
                if let Err(c) = stdout::emit(&p.display().to_string()) {
                    return c;
                }
            }
            return ExitCode::SUCCESS;
        }
    };
    let text = match text {
        Ok(u) => u,
        Err(m) => {
            crate::cli::stderr::say!("error: export {what_name} `{robot}`: {m}");
            return ExitCode::from(2);
        }
    };
    match output {
        None => match stdout::emit_text(&text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(code) => code,
        },
        Some(p) => match std::fs::write(&p, text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                crate::cli::stderr::say!("error: -o {}: {err}", p.display());
                ExitCode::from(2)
            }
        },
    }
}
