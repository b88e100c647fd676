//! Provenance: what a recording keeps so the run can be traced and rebuilt without the files it
//! was loaded from (the keys are listed in docs/recording.md).
//!
//! The world is rebuilt from the world YAML text as it was read, the text of every parent world it
//! extends, the override assignments in their order, and the load flags; files the world points
//! at (the MJCF world, the models, their meshes) are named with a SHA-256 each, so a replay states
//! exactly which input changed since.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};
use serde_norway::{Mapping, Value};
use sha2::{Digest, Sha256};

use crate::world::compose::ParentText;
use crate::world::overrides::Assignment;
use crate::world::{LoadOptions, LoadedWorld};

/// The recording format this build writes; a newer one is refused on read, older ones are read.
/// 2: the inbound log is `std_msgs/msg/String` in CDR (its `data` the event's JSON), so rosbag2
/// and the ROS 2 MCAP readers open every channel; 1 wrote it as schema-less JSON.
pub const FORMAT_VERSION: u32 = 2;
/// Metadata record holding the provenance.
pub const PROVENANCE: &str = "roqsim.provenance";
/// Metadata record written when the file is finalised.
pub const SUMMARY: &str = "roqsim.summary";

/// What a run was loaded from (gathered by the CLI before the world is built).
#[derive(Debug, Clone, Default)]
pub struct RunInputs {
    /// The world argument as given (`demo`, `worlds/x.yaml`).
    pub world_ref: String,
    /// The resolved world file.
    pub world_path: PathBuf,
    /// Its text as read.
    pub world_yaml: String,
    /// Override assignments in command-line order.
    pub assignments: Vec<Assignment>,
    /// `--override` files, for their hashes.
    pub override_files: Vec<PathBuf>,
    /// The load flags.
    pub ros: bool,
    /// `--tf-namespace`.
    pub tf_namespace: Option<String>,
    /// `--sim-control`.
    pub sim_control: bool,
    /// `--no-communication`.
    pub no_communication: bool,
    /// The run's seed.
    pub seed: u64,
}

impl RunInputs {
    /// The load options these inputs stand for.
    pub fn load_options(&self) -> LoadOptions {
        LoadOptions {
            assignments: self.assignments.clone(),
            ros: self.ros,
            tf_namespace: self.tf_namespace.clone(),
            sim_control: self.sim_control,
            no_communication: self.no_communication,
        }
    }
}

/// SHA-256 of a file as `sha256:<hex>`.
pub fn hash_file(p: &Path) -> Result<String, String> {
    not_a_file(p)?;
    let bytes = std::fs::read(p).map_err(|e| format!("cannot read `{}`: {e}", p.display()))?;
    Ok(hash_bytes(&bytes))
}

/// Refuses a path that is there but is no regular file (a directory, a device such as /dev/zero,
/// a FIFO): reading one would fail, never end, or block. A path that is not there passes (the
/// read that follows says so).
pub fn not_a_file(p: &Path) -> Result<(), String> {
    let Ok(m) = std::fs::metadata(p) else { return Ok(()) };
    if m.is_file() {
        return Ok(());
    }
    let ft = m.file_type();
    use std::os::unix::fs::FileTypeExt;
    let what = if ft.is_dir() {
        "a directory"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(format!("`{}` is {what}, not a regular file: a world input is a file", p.display()))
}

/// SHA-256 of bytes as `sha256:<hex>`.
pub fn hash_bytes(b: &[u8]) -> String {
    let d = Sha256::digest(b);
    let mut s = String::from("sha256:");
    for x in d.iter() {
        s += &format!("{x:02x}");
    }
    s
}

/// Every file the world was built from, with its content hash: the files `roqsim scenes inputs`
/// lists for it (the world YAML and every parent it extends, the MJCF world, each model's MJCF,
/// manifest, meshes, textures and includes, files a component's config names), then the
/// override files.
pub fn input_hashes(inputs: &RunInputs, _world: &LoadedWorld) -> BTreeMap<String, String> {
    let walked =
        crate::introspect::inputs::world_inputs(&inputs.world_path, &inputs.load_options());
    let mut files = walked.inputs;
    files.extend(inputs.override_files.iter().cloned());
    let mut out = BTreeMap::new();
    let shares = package_shares();
    for f in files {
        let key = input_key(&f, &shares);
        let h = hash_file(&f).unwrap_or_else(|e| format!("unreadable: {e}"));
        out.insert(key, h);
    }
    out
}

/// The parent worlds as read, nearest first, as the `world_chain` JSON: each with its key among
/// `input_hashes` (`input`), its path, its package and that package's worlds folder, its text.
pub fn chain_json(parents: &[ParentText]) -> String {
    let shares = package_shares();
    let list: Vec<Json> = parents
        .iter()
        .map(|p| {
            json!({
                "input": input_key(&p.path, &shares),
                "path": p.path.display().to_string(),
                "package": p.package.as_ref().map(|(pkg, _)| pkg),
                "package_worlds": p.package.as_ref().map(|(_, root)| root.display().to_string()),
                "text": p.text,
            })
        })
        .collect();
    Json::Array(list).to_string()
}

/// Parse [`chain_json`] back: the parents and their `input_hashes` keys.
pub fn chain_from_json(text: &str) -> Result<Vec<(String, ParentText)>, String> {
    let v: Json = serde_json::from_str(text).map_err(|e| format!("world_chain: {e}"))?;
    let items = v.as_array().ok_or("world_chain: not a list")?;
    items
        .iter()
        .enumerate()
        .map(|(i, it)| {
            let s = |k: &str| it.get(k).and_then(Json::as_str);
            let need = |k: &str| s(k).ok_or_else(|| format!("world_chain[{i}]: no `{k}`"));
            let package = match (s("package"), s("package_worlds")) {
                (Some(p), Some(r)) => Some((p.to_string(), PathBuf::from(r))),
                _ => None,
            };
            let parent = ParentText {
                path: PathBuf::from(need("path")?),
                package,
                text: need("text")?.to_string(),
            };
            Ok((need("input")?.to_string(), parent))
        })
        .collect()
}

/// Every `<prefix>/share` of `AMENT_PREFIX_PATH`, resolved: where [`input_key`] finds packages
/// (recordings and campaign input hashes key packaged files by it).
pub fn package_shares() -> Vec<PathBuf> {
    crate::world::prefixes::ament_prefixes()
        .into_iter()
        .filter_map(|p| p.join("share").canonicalize().ok())
        .collect()
}

/// The key an input's hash is stored under: `package://<pkg>/<path>` for a file an installed
/// package ships (so a replay finds it wherever the package is installed then), else its
/// absolute path.
pub fn input_key(f: &Path, shares: &[PathBuf]) -> String {
    let abs = f.canonicalize().unwrap_or_else(|_| f.to_path_buf());
    for s in shares {
        if let Ok(rel) = abs.strip_prefix(s) {
            let mut parts = rel.components();
            if let (Some(pkg), rest) = (parts.next(), parts.as_path()) {
                if !rest.as_os_str().is_empty() {
                    return format!(
                        "package://{}/{}",
                        pkg.as_os_str().to_string_lossy(),
                        rest.display()
                    );
                }
            }
        }
    }
    abs.display().to_string()
}

/// The hash an input has now: a `package://` key is resolved through the packages installed now,
/// a path (older recordings stored only paths) is read where it was.
pub fn hash_input(key: &str) -> String {
    let path = if key.starts_with("package://") {
        match crate::world::models::resolve_package_uri(key) {
            Ok(p) => p,
            Err(e) => return format!("unreadable: {e}"),
        }
    } else {
        PathBuf::from(key)
    };
    hash_file(&path).unwrap_or_else(|e| e)
}

fn yaml_to_json(v: &Value) -> Json {
    serde_json::to_value(v).unwrap_or(Json::Null)
}

/// The override assignments as a YAML list of `{path, value, source}`, in order.
pub fn assignments_yaml(a: &[Assignment]) -> String {
    let list: Vec<Value> = a
        .iter()
        .map(|x| {
            let mut m = Mapping::new();
            m.insert("path".into(), x.dotted().into());
            m.insert("value".into(), x.value.clone());
            m.insert("source".into(), x.source.clone().into());
            Value::Mapping(m)
        })
        .collect();
    serde_norway::to_string(&Value::Sequence(list)).unwrap_or_default()
}

/// Parse [`assignments_yaml`] back.
pub fn assignments_from_yaml(text: &str) -> Result<Vec<Assignment>, String> {
    let v: Value =
        serde_norway::from_str(text).map_err(|e| format!("overrides: YAML syntax error: {e}"))?;
    let Value::Sequence(items) = v else {
        return Ok(Vec::new());
    };
    items
        .iter()
        .map(|it| {
            let path =
                it.get("path").and_then(Value::as_str).ok_or("overrides: entry without path")?;
            Ok(Assignment {
                path: path.split('.').map(str::to_string).collect(),
                value: it.get("value").cloned().unwrap_or(Value::Null),
                source: it.get("source").and_then(Value::as_str).unwrap_or("").to_string(),
            })
        })
        .collect()
}

/// The provenance entries known before the world is built.
pub fn before_build(inputs: &RunInputs, world: &LoadedWorld) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let mut put = |k: &str, v: String| {
        m.insert(k.to_string(), v);
    };
    put("format_version", FORMAT_VERSION.to_string());
    put("roqsim_version", env!("CARGO_PKG_VERSION").to_string());
    put("roqsim_source_commit", source_commit());
    put("mujoco_version", mujoco_version());
    put("world_ref", inputs.world_ref.clone());
    put("world_path", inputs.world_path.display().to_string());
    put("world_input", input_key(&inputs.world_path, &package_shares()));
    put("world_yaml", inputs.world_yaml.clone());
    put("world_chain", chain_json(&world.doc.parents));
    put("base_dir", world.base_dir.display().to_string());
    put("overrides", assignments_yaml(&inputs.assignments));
    let shares = package_shares();
    let override_inputs: Vec<String> =
        inputs.override_files.iter().map(|f| input_key(f, &shares)).collect();
    put("override_inputs", json!(override_inputs).to_string());
    put(
        "load_options",
        json!({
            "ros": inputs.ros,
            "tf_namespace": inputs.tf_namespace,
            "sim_control": inputs.sim_control,
            "no_communication": inputs.no_communication,
        })
        .to_string(),
    );
    put("seed", inputs.seed.to_string());
    put("episode", "0".to_string());
    put("timestep", format!("{:e}", world.timestep));
    put("sim", serde_json::to_string(&world.sim).unwrap_or_default());
    let components: Vec<Json> = world
        .components
        .iter()
        .map(|c| {
            json!({
                "address": c.args.address,
                "plugin": c.plugin,
                "owner": c.args.owner,
                "origin": format!("{:?}", c.origin).to_lowercase(),
                "config": yaml_to_json(&Value::Mapping(c.config.clone())),
            })
        })
        .collect();
    put("components", Json::Array(components).to_string());
    put("input_hashes", serde_json::to_string(&input_hashes(inputs, world)).unwrap_or_default());
    m
}

fn source_commit() -> String {
    let dir = env!("CARGO_MANIFEST_DIR");
    std::process::Command::new("git")
        .args(["-C", dir, "rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".to_string())
}

/// MuJoCo's own version string.
pub fn mujoco_version() -> String {
    // SAFETY: mj_versionString returns a pointer to a static NUL-terminated string.
    unsafe {
        std::ffi::CStr::from_ptr(mujoco_rs::mujoco_c::mj_versionString())
            .to_string_lossy()
            .into_owned()
    }
}
