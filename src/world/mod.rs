//! Loading a world: YAML → document → overrides (pass 1) → manifest expansion → overrides
//! (pass 2) → typed `sim:` block → plugin instances. Every problem in the document is collected
//! with its key path and reported at once, before anything is built.

pub mod bounds;
pub mod compose;
pub mod document;
pub mod expand;
pub mod models;
pub mod overrides;
pub mod prefixes;
pub mod sim;
pub mod yaml;

use std::path::{Path, PathBuf};

use serde_norway::{Mapping, Value};

use crate::error::{ConfigError, ConfigErrors};
use crate::plugin::{Plugin, PluginArgs, PluginDescriptor};
use crate::plugins::lookup;
use document::{walk, Component, Origin, WorldDoc};
use overrides::Assignment;
use sim::{SimBlock, MJ_DEFAULT_TIMESTEP};

/// Plugin refs that are transport: appended by `--ros`/`--sim-control`, dropped by
/// `--no-communication`.
pub const BRIDGE_REFS: [&str; 2] = ["ros2_bridge", "sim_interfaces"];

/// How the world is asked to be loaded (the CLI's flags).
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// `--set` / `--override` assignments, in command-line order (later wins).
    pub assignments: Vec<Assignment>,
    /// `--ros`: append the ROS 2 bridge (idempotent).
    pub ros: bool,
    /// `--tf-namespace NS`: publish TF on /NS/tf (implies `ros`).
    pub tf_namespace: Option<String>,
    /// `--sim-control`: also serve simulation_interfaces (implies `ros`).
    pub sim_control: bool,
    /// `--no-communication`: drop transport plugins, warn that nothing is published.
    pub no_communication: bool,
}

/// The static environment the robots stand in.
#[derive(Debug, Clone, PartialEq)]
pub enum WorldDef {
    /// The built-in room: checker floor `floor`, a light, four walls.
    EmptyRoom,
    /// An MJCF scene file (absolute path).
    Mjcf(PathBuf),
    /// A plugin (`provides_world`) builds ground and light itself; the address names it.
    Plugin(String),
}

/// One component that will run, in build order.
#[derive(Debug, Clone)]
pub struct LoadedComponent {
    /// Label, address, owner, base dir.
    pub args: PluginArgs,
    /// The plugin ref.
    pub plugin: String,
    /// Document or manifest.
    pub origin: Origin,
    /// Its registry entry.
    pub descriptor: &'static PluginDescriptor,
    /// Its config after overrides and merges.
    pub config: Mapping,
}

/// A loaded, validated world, ready for the engine.
pub struct LoadedWorld {
    /// The world file, if loaded from one.
    pub path: Option<PathBuf>,
    /// Directory relative paths resolve against.
    pub base_dir: PathBuf,
    /// The effective document (overrides applied, manifests expanded).
    pub doc: WorldDoc,
    /// The typed `sim:` block.
    pub sim: SimBlock,
    /// The world definition.
    pub world: WorldDef,
    /// Physics timestep the run uses (s): `sim.timestep`, else the world MJCF's, else 0.002.
    pub timestep: f64,
    /// Components that run, in build order.
    pub components: Vec<LoadedComponent>,
    /// Their plugin instances (same order).
    pub plugins: Vec<Box<dyn Plugin>>,
    /// Non-fatal notes for the user (printed on stderr by the CLI).
    pub warnings: Vec<String>,
    /// Load phases measured so far: (phase, seconds) — `parse`, `expand`, `instantiate`.
    pub load_times: Vec<(String, f64)>,
}

impl std::fmt::Debug for LoadedWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedWorld")
            .field("path", &self.path)
            .field("components", &self.components)
            .finish()
    }
}

/// Load a world file.
pub fn load_world(path: &Path, opts: &LoadOptions) -> Result<LoadedWorld, ConfigErrors> {
    let text = yaml::read_document(path, "world").map_err(|m| ConfigError::new("", m))?;
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    let base_dir = if base_dir.as_os_str().is_empty() { PathBuf::from(".") } else { base_dir };
    let mut w = load_inner(&text, &base_dir, Some(path), None, opts)?;
    w.path = Some(path.to_path_buf());
    Ok(w)
}

pub use yaml::parse_yaml;

/// Load a world from YAML text; relative paths resolve against `base_dir`.
pub fn load_world_str(
    text: &str,
    base_dir: &Path,
    opts: &LoadOptions,
) -> Result<LoadedWorld, ConfigErrors> {
    load_inner(text, base_dir, None, None, opts)
}

/// [`load_world_str`] composing the `extends:` chain from `parents` (nearest parent first, as a
/// recording kept them) rather than from the files on disk.
pub fn load_world_recorded(
    text: &str,
    base_dir: &Path,
    parents: &[compose::ParentText],
    opts: &LoadOptions,
) -> Result<LoadedWorld, ConfigErrors> {
    load_inner(text, base_dir, None, Some(parents), opts)
}

fn load_inner(
    text: &str,
    base_dir: &Path,
    self_path: Option<&Path>,
    parents: Option<&[compose::ParentText]>,
    opts: &LoadOptions,
) -> Result<LoadedWorld, ConfigErrors> {
    let t0 = std::time::Instant::now();
    let mut load_times = Vec::new();
    let root = parse_yaml(text)?;
    let mut errors = ConfigErrors::default();
    let mut warnings = Vec::new();
    let doc = WorldDoc::parse(&root, &mut errors);
    let own_sim = doc.sim.clone();
    let mut doc = compose::compose_from(doc, base_dir, self_path, parents, &mut errors);
    let inherited = compose::Provenance::of(&doc, &own_sim);
    let dropped = apply_transport_flags(&mut doc, opts, &mut errors, &mut warnings);
    load_times.push(("parse".to_string(), t0.elapsed().as_secs_f64()));

    let t0 = std::time::Instant::now();
    let assignments = without_dropped(&opts.assignments, &dropped, &mut warnings);
    expand_with_overrides(&mut doc, base_dir, &assignments, &mut errors);
    load_times.push(("expand".to_string(), t0.elapsed().as_secs_f64()));

    let t0 = std::time::Instant::now();
    let sim = typed_sim(&doc.sim, &mut errors);
    let mut world = world_def(sim.world.as_deref(), base_dir, &mut errors);
    let timestep = sim.timestep.unwrap_or_else(|| match &world {
        WorldDef::Mjcf(p) => mjcf_timestep(p).unwrap_or(MJ_DEFAULT_TIMESTEP),
        _ => MJ_DEFAULT_TIMESTEP,
    });
    sim.validate(timestep, &mut errors);
    let (components, plugins) = instantiate(&doc, base_dir, &mut errors);
    if let Some(w) = one_world_slot(&components, sim.world.is_some(), &mut errors, &mut warnings) {
        world = w;
    }

    // Every problem in an inherited part names the parent file it sits in.
    let assigned: Vec<String> = opts.assignments.iter().map(|a| a.dotted()).collect();
    inherited.attribute(&mut errors, &assigned);
    errors.into_result()?;
    load_times.push(("instantiate".to_string(), t0.elapsed().as_secs_f64()));
    Ok(LoadedWorld {
        path: None,
        base_dir: base_dir.to_path_buf(),
        doc,
        sim,
        world,
        timestep,
        components,
        plugins,
        warnings,
        load_times,
    })
}

/// The assignments, less those addressing a component `--no-communication` dropped (`dropped`:
/// their labels, and the bridges' plugin names, which `--ros`/`--sim-control` add under): a
/// recording of a `--ros` run with `--set components.ros2_bridge.clock_rate_hz=500` replays
/// without its bridge, so that setting has nothing left to set and nothing to change.
fn without_dropped(
    assignments: &[Assignment],
    dropped: &[String],
    warnings: &mut Vec<String>,
) -> Vec<Assignment> {
    if dropped.is_empty() {
        return assignments.to_vec();
    }
    let mut kept = Vec::with_capacity(assignments.len());
    for a in assignments {
        let target = match a.path.as_slice() {
            [c, name, _, ..] if c == "components" => Some(name.as_str()),
            _ => None,
        };
        if target.is_some_and(|t| dropped.iter().any(|d| d == t)) {
            warnings.push(format!(
                "--no-communication: {} sets `{}` of a dropped transport component: ignored",
                crate::error::clip(&a.source),
                crate::error::clip(&a.dotted())
            ));
        } else {
            kept.push(a.clone());
        }
    }
    kept
}

/// The transport flags: `--no-communication` drops the transport plugins (and warns that nothing
/// is published or received); `--ros`, `--tf-namespace` and `--sim-control` append the bridge
/// and the simulation_interfaces server once each. Returns the names an assignment could address
/// a dropped component by (empty unless `--no-communication`).
fn apply_transport_flags(
    doc: &mut WorldDoc,
    opts: &LoadOptions,
    errors: &mut ConfigErrors,
    warnings: &mut Vec<String>,
) -> Vec<String> {
    let wants_ros = opts.ros || opts.tf_namespace.is_some() || opts.sim_control;
    if wants_ros && opts.no_communication {
        errors.push("", "--no-communication and --ros/--tf-namespace/--sim-control are refused together: choose one");
    }
    if opts.no_communication {
        let before = doc.components.len();
        let mut dropped = Vec::new();
        doc.components.retain(|c| {
            let transport = BRIDGE_REFS.contains(&c.plugin.as_str())
                || lookup(&c.plugin).is_some_and(|d| d.flags.transport_only);
            if transport {
                dropped.push(c.label().to_string());
            }
            !transport
        });
        let what = if before != doc.components.len() {
            format!(" (dropped {})", dropped.join(", "))
        } else {
            String::new()
        };
        warnings.push(format!(
            "--no-communication: this run communicates with nothing{what}: nothing is published (no /clock, no TF, \
             no sensor topics, no odometry) and nothing is received (no cmd_vel, no goals, no services)"
        ));
        dropped.extend(BRIDGE_REFS.iter().map(|s| s.to_string()));
        return dropped;
    } else if wants_ros {
        if !doc.components.iter().any(|c| c.plugin == "ros2_bridge") {
            doc.components.push(Component::new("ros2_bridge", None, Mapping::new()));
        }
        if let Some(ns) = &opts.tf_namespace {
            for c in doc.components.iter_mut().filter(|c| c.plugin == "ros2_bridge") {
                c.config.insert(Value::String("tf_namespace".into()), Value::String(ns.clone()));
            }
        }
        if opts.sim_control && !doc.components.iter().any(|c| c.plugin == "sim_interfaces") {
            doc.components.push(Component::new("sim_interfaces", None, Mapping::new()));
        }
    }
    Vec::new()
}

/// Overrides against what the document declares, manifest expansion, then the overrides that
/// only a manifest's entries can match; an assignment that matches nothing is refused.
fn expand_with_overrides(
    doc: &mut WorldDoc,
    base_dir: &Path,
    assignments: &[Assignment],
    errors: &mut ConfigErrors,
) {
    let deferred = overrides::apply(doc, assignments, None, errors);
    let lookup_fn = |name: &str| lookup(name);
    expand::expand_tree(
        &mut doc.components,
        &lookup_fn,
        base_dir,
        None,
        None,
        &mut Vec::new(),
        errors,
    );
    let keys = |plugin: &str| lookup(plugin).map(|d| d.expansion_keys).unwrap_or(&[]);
    let unmatched = overrides::apply(doc, &deferred, Some(&keys), errors);
    overrides::refuse_unmatched(doc, &unmatched, errors);
}

/// The typed `sim:` block. When it is refused, the keys that are fine on their own are kept, so
/// their values are still checked.
fn typed_sim(sim: &Mapping, errors: &mut ConfigErrors) -> SimBlock {
    let typed = |m: Mapping| crate::plugin::typed_config::<SimBlock>(&Value::Mapping(m));
    match typed(sim.clone()) {
        Ok(s) => s,
        Err(es) => {
            for e in es {
                let p =
                    if e.path.is_empty() { "sim".to_string() } else { format!("sim.{}", e.path) };
                errors.push(p, e.message);
            }
            let good: Mapping = sim
                .iter()
                .filter(|(k, v)| {
                    let mut one = Mapping::new();
                    one.insert((*k).clone(), (*v).clone());
                    typed(one).is_ok()
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            typed(good).unwrap_or_default()
        }
    }
}

/// The world `sim.world` names: the built-in room, a package-relative or file MJCF scene; a name
/// or file that cannot be found is refused (and the room stands in, so the rest is still
/// checked).
fn world_def(world: Option<&str>, base_dir: &Path, errors: &mut ConfigErrors) -> WorldDef {
    match world {
        None | Some("empty_room") => WorldDef::EmptyRoom,
        Some(w) if compose::split_package_ref(w).is_some() && !Path::new(w).is_absolute() => {
            let (pkg, rel) = compose::split_package_ref(w).unwrap_or_default();
            match compose::resolve_package_file(pkg, rel) {
                Ok((p, _)) => mjcf_world(p, errors),
                Err(e) => {
                    errors.push("sim.world", format!("MJCF world `{w}` not found: {e}"));
                    WorldDef::EmptyRoom
                }
            }
        }
        Some(w) if w.ends_with(".xml") || w.ends_with(".mjcf") || w.contains('/') => {
            let p = if Path::new(w).is_absolute() { PathBuf::from(w) } else { base_dir.join(w) };
            if p.exists() {
                mjcf_world(p.canonicalize().unwrap_or(p), errors)
            } else {
                errors.push("sim.world", format!("MJCF world `{}` not found (relative paths resolve against the world file's directory)", p.display()));
                WorldDef::EmptyRoom
            }
        }
        Some(other) => {
            errors.push(
                "sim.world",
                format!("unknown world `{other}`: use the built-in `empty_room`, or a path to an MJCF file (ending in .xml)"),
            );
            WorldDef::EmptyRoom
        }
    }
}

/// Every enabled component's plugin instance, in build order (a disabled entry disables the
/// entries it carries). An entry resolves its relative files from its own folder (inherited
/// through `extends:`), else from its carrier's, else from the world file's. Config refusals are
/// collected under the entry's address; unknown plugins are refused after the walk.
fn instantiate(
    doc: &WorldDoc,
    base_dir: &Path,
    errors: &mut ConfigErrors,
) -> (Vec<LoadedComponent>, Vec<Box<dyn Plugin>>) {
    let mut flat = Vec::new();
    walk(&doc.components, None, &mut flat);
    let mut components = Vec::new();
    let mut plugins: Vec<Box<dyn Plugin>> = Vec::new();
    let mut unknown = Vec::new();
    let mut disabled_prefixes: Vec<String> = Vec::new();
    let mut dirs: std::collections::HashMap<String, PathBuf> = std::collections::HashMap::new();
    let plugin_at: std::collections::HashMap<String, String> =
        flat.iter().map(|(a, _, c)| (a.clone(), c.plugin.clone())).collect();
    for (addr, owner, c) in flat {
        let dir = c
            .base_dir
            .clone()
            .or_else(|| owner.as_ref().and_then(|o| dirs.get(o).cloned()))
            .unwrap_or_else(|| base_dir.to_path_buf());
        dirs.insert(addr.clone(), dir.clone());
        if disabled_prefixes.iter().any(|p| addr.starts_with(&format!("{p}."))) {
            continue;
        }
        if !c.is_enabled() {
            disabled_prefixes.push(addr);
            continue;
        }
        let Some(desc) = lookup(&c.plugin) else {
            unknown.push((addr, c.plugin.clone()));
            continue;
        };
        let args = PluginArgs {
            label: c.label().to_string(),
            address: addr.clone(),
            owner_plugin: owner.as_ref().and_then(|o| plugin_at.get(o).cloned()),
            owner,
            base_dir: dir,
        };
        match desc.instantiate(&Value::Mapping(c.config.clone()), &args) {
            Ok(p) => {
                plugins.push(p);
                components.push(LoadedComponent {
                    args,
                    plugin: c.plugin.clone(),
                    origin: c.origin,
                    descriptor: desc,
                    config: c.config.clone(),
                });
            }
            Err(es) => {
                for e in es {
                    let p = if e.path.is_empty() {
                        format!("components.{addr}")
                    } else {
                        format!("components.{addr}.{}", e.path)
                    };
                    errors.push(p, format!("{} ({})", e.message, c.plugin));
                }
            }
        }
    }
    refuse_unknown(&unknown, errors);
    (components, plugins)
}

/// Refuse each `(address, plugin)` no plugin is registered for. When every one is a transport
/// plugin, the message says this roqsim was built without ROS and how to get one.
fn refuse_unknown(unknown: &[(String, String)], errors: &mut ConfigErrors) {
    let only_bridges = unknown.iter().all(|(_, r)| BRIDGE_REFS.contains(&r.as_str()));
    for (addr, r) in unknown {
        let msg = if only_bridges {
            format!(
                "`{r}` is a ROS 2 transport plugin and this roqsim was built without ROS. Either build the ROS node \
                 (scripts/setup.sh --ros, or cargo build --features ros) and source scripts/env.sh, or run with \
                 --no-communication to drop the transport"
            )
        } else {
            crate::plugins::unknown_plugin_message(r)
        };
        errors.push(format!("components.{addr}"), msg);
    }
}

/// One world slot: two plugins that build a ground and light are refused; one that does takes
/// the slot (with a warning when `sim.world` is set too) and is returned.
fn one_world_slot(
    components: &[LoadedComponent],
    sim_world_set: bool,
    errors: &mut ConfigErrors,
    warnings: &mut Vec<String>,
) -> Option<WorldDef> {
    let providers: Vec<&LoadedComponent> =
        components.iter().filter(|c| c.descriptor.flags.provides_world).collect();
    if providers.len() > 1 {
        let names: Vec<&str> = providers.iter().map(|c| c.args.address.as_str()).collect();
        errors.push(
            format!("components.{}", names[1]),
            format!("two plugins build a ground and light ({}); keep one", names.join(", ")),
        );
        None
    } else {
        let p = providers.first()?;
        if sim_world_set {
            warnings.push(format!(
                "sim.world is set but `{}` builds its own world; the plugin wins",
                p.args.address
            ));
        }
        Some(WorldDef::Plugin(p.args.address.clone()))
    }
}

/// `sim.world` as an MJCF file, once it and every file it names can be read without blocking
/// (MuJoCo opens them itself: a FIFO among them would hang the load).
fn mjcf_world(p: PathBuf, errors: &mut ConfigErrors) -> WorldDef {
    match crate::introspect::inputs::check_mjcf_files(&p, &[]) {
        Ok(()) => WorldDef::Mjcf(p),
        Err(m) => {
            errors.push("sim.world", m);
            WorldDef::EmptyRoom
        }
    }
}

/// The `timestep="..."` of an MJCF file's `<option>`, read without compiling.
fn mjcf_timestep(p: &Path) -> Option<f64> {
    let text = crate::input_file::read_text(p, "MJCF world", crate::input_file::MODEL).ok()?;
    let re = regex::Regex::new(r#"<option[^>]*\btimestep\s*=\s*"([^"]+)""#).ok()?;
    re.captures(&text)?.get(1)?.as_str().trim().parse().ok()
}
