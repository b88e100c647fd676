//! `roqsim scenes inputs`: every file a world is made of — its YAML and the worlds it extends,
//! the MJCF its `sim.world` and its models settle on, those models' manifests, and the meshes,
//! textures, height fields and includes those MJCF files name, plus any other file a component's
//! config names (a floorplan JSON, a trajectory CSV).
//!
//! The walk is best-effort: what does not resolve is left out and recorded as a part it gave up
//! on (an `extends` that does not resolve, a YAML it cannot read, a world that does not load, a
//! plugin this binary does not have). A referenced file that is simply absent is dropped without
//! being one of those.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_norway::{Mapping, Value};

use crate::error::ConfigErrors;
use crate::plugins::lookup;
use crate::plugins::scene::floorplan::texture;
use crate::world::compose::{compose, split_package_ref};
use crate::world::document::{walk, Component, WorldDoc};
use crate::world::models::{load_manifest, resolve_model};
use crate::world::{load_world, parse_yaml, LoadOptions, LoadedWorld, BRIDGE_REFS};

/// The answer of an inputs walk.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inputs {
    /// The world file (absolute).
    pub world: PathBuf,
    /// True when every input lies inside an installed package's `share/` folder.
    pub packaged: bool,
    /// Every file, each once, in discovery order.
    pub inputs: Vec<PathBuf>,
    /// The parts the walk gave up on (`--require-complete` fails on any).
    pub gave_up: Vec<String>,
}

/// Ordered set of existing files.
#[derive(Default)]
struct Files {
    seen: BTreeSet<PathBuf>,
    list: Vec<PathBuf>,
}

impl Files {
    fn add(&mut self, p: &Path) -> bool {
        if !p.is_file() {
            return false;
        }
        let p = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        if self.seen.insert(p.clone()) {
            self.list.push(p);
            true
        } else {
            false
        }
    }
}

/// Install prefixes whose `share/` holds packaged files: every `AMENT_PREFIX_PATH` entry and the
/// prefix of the running binary when it is installed (`<prefix>/lib/roqsim/roqsim`).
fn package_shares() -> Vec<PathBuf> {
    crate::world::prefixes::install_prefixes()
        .into_iter()
        .filter_map(|p| p.join("share").canonicalize().ok())
        .collect()
}

/// The worlds a world is made of, parent first then itself, and the composed document.
pub fn yaml_chain(path: &Path, gave_up: &mut Vec<String>) -> Option<(WorldDoc, Vec<PathBuf>)> {
    let text = match crate::world::yaml::read_document(path, "world") {
        Ok(t) => t,
        Err(m) => {
            gave_up.push(m);
            return None;
        }
    };
    let root = match parse_yaml(&text) {
        Ok(r) => r,
        Err(e) => {
            gave_up.push(format!("world `{}`: {e}", path.display()));
            return None;
        }
    };
    let mut errors = ConfigErrors::default();
    let doc = WorldDoc::parse(&root, &mut errors);
    let base = path.parent().unwrap_or(Path::new("."));
    let doc = compose(doc, base, Some(path), &mut errors);
    for e in errors.0.iter().filter(|e| e.path == "extends" || e.message.contains("parent world")) {
        gave_up.push(format!("extends: {}", e.message));
    }
    let mut chain = doc.chain.clone();
    chain.push(path.to_path_buf());
    Some((doc, chain))
}

/// Files an MJCF names (includes, meshes, textures, height fields, skins), searched in the
/// model's `meshdir`/`texturedir`/`assetdir` (relative to the main file), then `extra_dirs`, then
/// the main file's folder. A `<compiler>` setting holds for the whole model, as in MuJoCo: one
/// declared in the main file also places the meshes of the files it `<include>`s.
pub fn mjcf_files(path: &Path, extra_dirs: &[PathBuf], out: &mut Vec<PathBuf>) {
    let _ = mjcf_walk(path, extra_dirs, out);
}

/// Refuse an MJCF (or URDF) that is, or names, a file MuJoCo could not read without blocking or
/// swelling — a FIFO, a device, a folder ([`crate::input_file`]): MuJoCo opens its includes,
/// meshes and textures itself, and a FIFO among them would hang the load. An ASCII STL mesh is
/// refused too ([`crate::input_file::check_stl`]: MuJoCo reads binary STL only). The refusal names the
/// element, the file and the model that names it.
pub fn check_mjcf_files(path: &Path, extra_dirs: &[PathBuf]) -> Result<(), String> {
    crate::input_file::check_regular(path, "model", crate::input_file::MODEL)?;
    match mjcf_walk(path, extra_dirs, &mut Vec::new()).into_iter().next() {
        Some(m) => Err(m),
        None => Ok(()),
    }
}

/// [`mjcf_files`]'s walk; its answer is the refusals of files named that cannot be read (see
/// [`check_mjcf_files`]), each left out of `out`.
fn mjcf_walk(path: &Path, extra_dirs: &[PathBuf], out: &mut Vec<PathBuf>) -> Vec<String> {
    use crate::input_file::{check_regular, read_text, Expect, MODEL};
    let mut refused = Vec::new();
    let mut stack = vec![(path.to_path_buf(), String::from("model"))];
    let mut visited = BTreeSet::new();
    let model_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    // XML allows either quote around an attribute value (MuJoCo reads `file='a.obj'` too).
    let attr =
        regex::Regex::new(r#"\b([a-z]+)\s*=\s*(?:"([^"]*)"|'([^']*)')"#).expect("valid regex");
    let value = |a: &regex::Captures| {
        a.get(2).or(a.get(3)).map_or(String::new(), |m| m.as_str().to_string())
    };
    let tag = regex::Regex::new(r"<([a-z]+)\b([^>]*)>").expect("valid regex");
    let comments = regex::Regex::new(r"(?s)<!--.*?-->").expect("valid regex");
    let (mut meshdir, mut texturedir) = (None::<String>, None::<String>);
    while let Some((f, what)) = stack.pop() {
        if !visited.insert(f.clone()) {
            continue;
        }
        let text = match read_text(&f, &what, MODEL) {
            Ok(t) => t,
            Err(m) => {
                if f.exists() {
                    refused.push(m);
                }
                continue;
            }
        };
        out.push(f.clone());
        let text = comments.replace_all(&text, "");
        for t in tag.captures_iter(&text) {
            if &t[1] == "compiler" {
                for a in attr.captures_iter(&t[2]) {
                    match &a[1] {
                        "meshdir" => meshdir = Some(value(&a)),
                        "texturedir" => texturedir = Some(value(&a)),
                        "assetdir" => {
                            meshdir.get_or_insert(value(&a));
                            texturedir.get_or_insert(value(&a));
                        }
                        _ => {}
                    }
                }
            }
        }
        let dirs = |declared: &Option<String>| {
            let mut v = Vec::new();
            if let Some(d) = declared {
                v.push(if Path::new(d).is_absolute() {
                    PathBuf::from(d)
                } else {
                    model_dir.join(d)
                });
            }
            v.extend(extra_dirs.iter().cloned());
            v.push(model_dir.clone());
            v
        };
        for t in tag.captures_iter(&text) {
            let which = &t[1];
            let search = match which {
                // `<asset><model file=…>` (attached by `<attach>`) is an MJCF of its own.
                "include" | "model" => vec![model_dir.clone()],
                "mesh" | "hfield" | "skin" => dirs(&meshdir),
                "texture" => dirs(&texturedir),
                _ => continue,
            };
            for a in attr.captures_iter(&t[2]) {
                if !a[1].starts_with("file") {
                    continue;
                }
                let file = value(&a);
                // The first candidate that exists is the one MuJoCo opens, whatever it is.
                let found = if &a[1] == "filename" {
                    // A URDF mesh: `package://`, `file://`, absolute or relative, resolved as the
                    // URDF reader resolves it.
                    crate::spawn::urdf::resolve_mesh(&file, &search).ok()
                } else if Path::new(&file).is_absolute() {
                    Some(PathBuf::from(&file)).filter(|p| p.exists())
                } else {
                    search.iter().map(|d| d.join(&file)).find(|p| p.exists())
                };
                let Some(p) = found else { continue };
                let what = format!("<{which} {}=\"{file}\"> in `{}` names", &a[1], f.display());
                if which == "include" || which == "model" {
                    stack.push((p, what));
                } else {
                    let asset =
                        Expect { file: "a mesh, texture or height field file", cap: u64::MAX };
                    let stl = |()| match which {
                        "mesh" => crate::input_file::check_stl(&p, &what),
                        _ => Ok(()),
                    };
                    match check_regular(&p, &what, asset).and_then(stl) {
                        Ok(()) => out.push(p),
                        Err(m) => refused.push(m),
                    }
                }
            }
        }
    }
    refused
}

/// A model reference's files: MJCF (and what it names), manifest, and what the manifest's
/// components name in turn are walked by the caller.
fn model_files(reference: &str, dir: &Path, files: &mut Files, walk: &mut Walk) {
    let Ok(asset) = resolve_model(reference, dir) else { return };
    let manifest = match load_manifest(&asset) {
        Ok(m) => Some(m),
        Err(e) => {
            // Its borrowed asset folders are unknown, so the files they hold are left out.
            walk.gave_up(format!("{}: model `{reference}`: {e}", walk.at));
            None
        }
    };
    let mut extra = manifest.as_ref().map(|m| m.borrowed_dirs.clone()).unwrap_or_default();
    extra.extend(asset.asset_dirs.iter().cloned());
    let mut v = Vec::new();
    mjcf_files(&asset.path, &extra, &mut v);
    for p in v {
        files.add(&p);
    }
    files.add(&asset.manifest_path());
}

/// Every file a config value names: `model:` keys resolve as models, any other string that is
/// an existing file relative to `dir` is an input.
fn config_files(v: &Value, key: Option<&str>, dir: &Path, files: &mut Files, walk: &mut Walk) {
    match v {
        Value::Mapping(m) => {
            for (k, val) in m {
                config_files(val, k.as_str(), dir, files, walk);
            }
        }
        Value::Sequence(s) => {
            for val in s {
                config_files(val, key, dir, files, walk);
            }
        }
        Value::String(s) if key == Some("model") => model_files(s, dir, files, walk),
        // a floorplan texture: its PNG (also `package://` or `<pkg>:<name>`) and its manifest
        Value::String(s) if key == Some("texture") && texture::resolve(s, dir).is_ok() => {
            for p in texture::files(s, dir) {
                files.add(&p);
            }
        }
        Value::String(s) if !s.is_empty() && !s.contains('\n') && s.len() < 4096 => {
            let p = if Path::new(s).is_absolute() { PathBuf::from(s) } else { dir.join(s) };
            if p.is_file() {
                files.add(&p);
            }
        }
        _ => {}
    }
}

/// Where a component walk is and what it gave up on (each part once).
struct Walk<'a> {
    at: String,
    gave_up: &'a mut Vec<String>,
}

impl Walk<'_> {
    fn gave_up(&mut self, part: String) {
        if !self.gave_up.contains(&part) {
            self.gave_up.push(part);
        }
    }
}

/// The `sim.world` MJCF of a document, resolved as the loader resolves it.
fn world_mjcf(sim: &Mapping, base: &Path) -> Option<PathBuf> {
    let w = sim.get("world")?.as_str()?;
    if w == "empty_room" {
        return None;
    }
    if let Some((pkg, rel)) = split_package_ref(w).filter(|_| !Path::new(w).is_absolute()) {
        return crate::world::compose::resolve_package_file(pkg, rel).ok().map(|(p, _)| p);
    }
    let p = if Path::new(w).is_absolute() { PathBuf::from(w) } else { base.join(w) };
    p.is_file().then_some(p)
}

/// Walk a world's inputs. `loaded` is the world as a run would load it, when it loads.
pub fn world_inputs(path: &Path, opts: &LoadOptions) -> Inputs {
    let world = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mut out = Inputs { world: world.clone(), ..Default::default() };
    let mut files = Files::default();
    let n = out.gave_up.len();
    let Some((doc, chain)) = yaml_chain(&world, &mut out.gave_up) else {
        return out;
    };
    let chain_problems: Vec<String> = out.gave_up[n..]
        .iter()
        .map(|g| g.strip_prefix("extends: ").unwrap_or(g).to_string())
        .collect();
    for p in &chain {
        files.add(p);
    }
    let base = world.parent().unwrap_or(Path::new(".")).to_path_buf();
    let mut load_opts = opts.clone();
    load_opts.no_communication = true;
    load_opts.ros = false;
    load_opts.sim_control = false;
    load_opts.tf_namespace = None;
    let loaded: Option<LoadedWorld> = match load_world(&world, &load_opts) {
        Ok(w) => Some(w),
        Err(e) => {
            // The chain's problems were listed above, once.
            let msgs: Vec<String> =
                e.0.iter()
                    .filter(|e| !chain_problems.contains(&e.message))
                    .map(|e| e.to_string())
                    .collect();
            if !msgs.is_empty() {
                out.gave_up.push(format!("the world does not load: {}", msgs.join("; ")));
            }
            None
        }
    };
    let (sim, comps): (&Mapping, &[Component]) = match &loaded {
        Some(w) => (&w.doc.sim, &w.doc.components),
        None => (&doc.sim, &doc.components),
    };
    if let Some(p) = world_mjcf(sim, &base) {
        let mut v = Vec::new();
        mjcf_files(&p, &[], &mut v);
        for f in v {
            files.add(&f);
        }
    }
    let mut flat = Vec::new();
    walk(comps, None, &mut flat);
    let mut dirs: std::collections::HashMap<String, PathBuf> = Default::default();
    for (addr, owner, c) in flat {
        let dir = c
            .base_dir
            .clone()
            .or_else(|| owner.as_ref().and_then(|o| dirs.get(o).cloned()))
            .unwrap_or_else(|| base.clone());
        dirs.insert(addr.clone(), dir.clone());
        if lookup(&c.plugin).is_none() && !BRIDGE_REFS.contains(&c.plugin.as_str()) {
            out.gave_up.push(format!(
                "components.{addr}: plugin `{}` is not registered in this binary, so its files cannot be asked for",
                c.plugin
            ));
        }
        // A world that loads has had its models read already; a failing one has said why.
        let mut sink = Vec::new();
        let gave_up = if loaded.is_some() { &mut out.gave_up } else { &mut sink };
        let mut w = Walk { at: format!("components.{addr}"), gave_up };
        config_files(&Value::Mapping(c.config.clone()), None, &dir, &mut files, &mut w);
    }
    let shares = package_shares();
    out.packaged = !files.list.is_empty()
        && !shares.is_empty()
        && files.list.iter().all(|f| shares.iter().any(|s| f.starts_with(s)));
    out.inputs = files.list;
    out
}

/// The inputs answer as JSON.
pub fn to_json(i: &Inputs) -> serde_json::Value {
    serde_json::json!({
        "world": i.world.display().to_string(),
        "packaged": i.packaged,
        "inputs": i.inputs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
    })
}
