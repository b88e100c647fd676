//! Model discovery and model manifests.
//!
//! A spawn plugin's `model:` string is one of:
//! - a short name (`turtlebot4`): searched in this package's model roots;
//! - `<package>:<model>` (`my_robots:rover`): `share/<package>/models` of a ROS package found on
//!   `AMENT_PREFIX_PATH` (`roqsim:` means this package's own roots);
//! - a file path (absolute, or relative to the world file's directory), recognised by a `/` or
//!   an `.xml`, `.urdf` or `.xacro` suffix;
//! - a `package://<pkg>/<path>` URI (a URDF from a description package), resolved through
//!   `AMENT_PREFIX_PATH` and `ROS_PACKAGE_PATH` ([`resolve_package_uri`]).
//!
//! A provider ships a model either one folder per model (`models/<name>/<name>.xml`) or flat
//! (`models/<name>.xml`). The manifest `<name>.manifest.yaml` sits beside the MJCF.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_norway::Value;

use crate::error::ConfigErrors;
use crate::world::document::{parse_list, Component, Origin};
use crate::world::prefixes::{ament_prefixes, binary_prefix};

/// A resolved model file and the directories its assets are searched in (its own dir first).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelAsset {
    /// Absolute path of the MJCF file.
    pub path: PathBuf,
    /// Asset search dirs, in order: the model's own dir first.
    pub asset_dirs: Vec<PathBuf>,
}

impl ModelAsset {
    /// `<dir>/<stem>.manifest.yaml` (the stem of `rover.urdf.xacro` is `rover`).
    pub fn manifest_path(&self) -> PathBuf {
        let name = self.path.file_name().and_then(|s| s.to_str()).unwrap_or("model");
        let stem = [".urdf.xacro", ".xacro", ".urdf", ".xml", ".mjcf"]
            .iter()
            .find_map(|ext| name.strip_suffix(ext))
            .unwrap_or_else(|| self.path.file_stem().and_then(|s| s.to_str()).unwrap_or("model"));
        self.path.with_file_name(format!("{stem}.manifest.yaml"))
    }
}

/// The package's own model roots, in search order: `$ROQSIM_MODEL_PATH` (colon-separated),
/// `share/roqsim/models` next to an installed binary, `share/roqsim/models` in every
/// `AMENT_PREFIX_PATH` prefix, and the source tree's `models/` (compile-time path).
pub fn model_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Ok(p) = std::env::var("ROQSIM_MODEL_PATH") {
        roots.extend(p.split(':').filter(|s| !s.is_empty()).map(PathBuf::from));
    }
    // install/<pkg>/lib/roqsim/roqsim -> install/<pkg>/share/roqsim/models
    roots.extend(binary_prefix().map(|p| p.join("share/roqsim/models")));
    roots.extend(ament_prefixes().into_iter().map(|p| p.join("share/roqsim/models")));
    roots.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("models"));
    roots.retain(|r| r.is_dir());
    roots.dedup();
    roots
}

/// Where a ROS package's files are: `<prefix>/share/<pkg>` for every `AMENT_PREFIX_PATH` prefix
/// (ROS 2, how `ament_index` finds an installed package), then `<dir>/<pkg>` (or `<dir>` itself
/// when it is the package's folder) for every `ROS_PACKAGE_PATH` entry (a source tree, as ROS 1
/// tools and RViz resolve `package://`). Only folders that exist, in that order.
pub fn package_dirs(pkg: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> =
        ament_prefixes().into_iter().map(|p| p.join("share").join(pkg)).collect();
    if let Ok(p) = std::env::var("ROS_PACKAGE_PATH") {
        for d in p.split(':').filter(|s| !s.is_empty()).map(PathBuf::from) {
            if d.file_name().and_then(|n| n.to_str()) == Some(pkg) {
                out.push(d.clone());
            }
            out.push(d.join(pkg));
        }
    }
    out.retain(|d| d.is_dir());
    out.dedup();
    out
}

/// Resolve a `package://<pkg>/<path>` URI to a file (see [`package_dirs`]). Refused, naming the
/// variables searched: a package found in none of them; a package whose folders lack the file.
pub fn resolve_package_uri(uri: &str) -> Result<PathBuf, String> {
    let rest = uri.strip_prefix("package://").unwrap_or(uri);
    let Some((pkg, rel)) = rest.split_once('/').filter(|(p, r)| !p.is_empty() && !r.is_empty())
    else {
        return Err(format!("`{uri}` is not a package URI; write `package://<package>/<path>`"));
    };
    let dirs = package_dirs(pkg);
    if dirs.is_empty() {
        let show = |var: &str| match std::env::var(var) {
            Ok(v) if !v.is_empty() => format!("{var}={v}"),
            _ => format!("{var} (unset)"),
        };
        return Err(format!(
            "`{uri}`: package `{pkg}` not found: searched {} (as <prefix>/share/{pkg}) and {} (as <dir>/{pkg}); source the workspace that installs it (`source install/setup.bash`) or add the folder holding it to ROS_PACKAGE_PATH",
            show("AMENT_PREFIX_PATH"),
            show("ROS_PACKAGE_PATH")
        ));
    }
    let tried: Vec<PathBuf> = dirs.iter().map(|d| d.join(rel)).collect();
    tried.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        format!(
            "`{uri}`: package `{pkg}` has no file `{rel}`; searched {}",
            tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        )
    })
}

fn find_in(root: &Path, name: &str) -> Option<PathBuf> {
    [root.join(name).join(format!("{name}.xml")), root.join(format!("{name}.xml"))]
        .into_iter()
        .find(|cand| cand.is_file())
}

/// Every short model name this package ships (for error messages and `plugins describe`).
pub fn known_models() -> Vec<String> {
    let mut names = Vec::new();
    for root in model_roots() {
        if let Ok(rd) = std::fs::read_dir(&root) {
            for e in rd.flatten() {
                let p = e.path();
                if let Some(n) = p.file_name().and_then(|n| n.to_str()) {
                    if p.is_dir() && p.join(format!("{n}.xml")).is_file() {
                        names.push(n.to_string());
                    } else if let Some(stem) = n.strip_suffix(".xml") {
                        names.push(stem.to_string());
                    }
                }
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Resolve a model reference. Errors name what was tried and what exists.
pub fn resolve_model(reference: &str, base_dir: &Path) -> Result<ModelAsset, String> {
    let looks_like_path = reference.contains('/')
        || reference.ends_with(".xml")
        || reference.ends_with(".mjcf")
        || reference.ends_with(".urdf")
        || reference.ends_with(".xacro");
    let path = if reference.starts_with("package://") {
        resolve_package_uri(reference)?
    } else if looks_like_path {
        let p = if Path::new(reference).is_absolute() {
            PathBuf::from(reference)
        } else {
            base_dir.join(reference)
        };
        if p.is_dir() {
            let at = if Path::new(reference) == p {
                String::new()
            } else {
                format!(" (`{}`)", p.display())
            };
            return Err(format!(
                "model `{reference}` is a directory{at}: name the model's MJCF or URDF file in it"
            ));
        }
        crate::input_file::check_regular(&p, "model", crate::input_file::MODEL)?;
        if !p.is_file() {
            return Err(format!("model file `{}` not found", p.display()));
        }
        p
    } else if let Some((pkg, name)) = reference.split_once(':') {
        let roots: Vec<PathBuf> = if pkg == "roqsim" {
            model_roots()
        } else {
            ament_prefixes()
                .into_iter()
                .map(|p| p.join("share").join(pkg).join("models"))
                .filter(|p| p.is_dir())
                .collect()
        };
        if roots.is_empty() {
            return Err(format!(
                "model `{reference}`: package `{pkg}` has no share/{pkg}/models on AMENT_PREFIX_PATH (is the package built and sourced?)"
            ));
        }
        roots.iter().find_map(|r| find_in(r, name)).ok_or_else(|| {
            format!("model `{reference}`: package `{pkg}` ships no model `{name}`")
        })?
    } else {
        match model_roots().iter().find_map(|r| find_in(r, reference)) {
            Some(p) => p,
            None => {
                return Err(format!(
                    "unknown model `{reference}`; bundled models: {}; or give a file path or <package>:<model>",
                    known_models().join(", ")
                ))
            }
        }
    };
    let path = path.canonicalize().unwrap_or(path);
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut asset_dirs = vec![dir.clone()];
    if let Some(parent) = dir.parent() {
        asset_dirs.push(parent.to_path_buf());
    }
    Ok(ModelAsset { path, asset_dirs })
}

/// A vendor fixed link the model flattened: built as a site and published as a static TF.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct FrameSpec {
    /// Frame (and site) name, unprefixed.
    pub name: String,
    /// Parent body or frame, unprefixed.
    pub parent: String,
    /// Offset in the parent frame [x, y, z] (m).
    #[serde(default)]
    pub pos: [f64; 3],
    /// Rotation [roll, pitch, yaw] (rad, REP 103 fixed-axis XYZ).
    #[serde(default)]
    pub rpy: [f64; 3],
}

/// `<model>.manifest.yaml`: the plugins intrinsic to a model, plus facts about it.
#[derive(Debug, Clone, Default)]
pub struct Manifest {
    /// Licence of anything derived from a published design.
    pub license: Option<String>,
    /// Source of the model's numbers (datasheet).
    pub source: Option<String>,
    /// Height of the root body's origin above a floor at z = 0 when resting (m).
    pub rest_height: Option<f64>,
    /// Vendor's default frame name (device models); may use `{camera_name}`.
    pub frame_id: Option<String>,
    /// A camera device's default name (realsense-ros's `camera_name`, depthai-ros's `name`):
    /// every frame of the device and its camera's topics derive from it (`{camera_name}`), and a
    /// mount's `camera_name:` replaces it.
    pub camera_name: Option<String>,
    /// Vendor fixed links.
    pub frames: Vec<FrameSpec>,
    /// Components the model brings.
    pub components: Vec<Component>,
    /// Providers whose asset folders this model borrows (`assets:`), in search order.
    pub assets: Vec<String>,
    /// Those providers' asset folders, searched after the model's own declared meshdir.
    pub borrowed_dirs: Vec<PathBuf>,
    /// Keys a spawn plugin of this model reads (`home`: spawn_arm's rest pose).
    pub extra: serde_norway::Mapping,
}

/// Every key a manifest may carry: anything else is refused, since a key roqsim does not act on
/// would otherwise be accepted and ignored.
pub const MANIFEST_KEYS: [&str; 9] = [
    "license",
    "source",
    "rest_height",
    "frame_id",
    "camera_name",
    "frames",
    "components",
    "assets",
    "home",
];

/// The model roots of a provider: `roqsim` is this package's own; any other name is
/// `share/<name>/models` under each `AMENT_PREFIX_PATH` prefix.
pub fn provider_roots(provider: &str) -> Vec<PathBuf> {
    if provider == "roqsim" {
        return model_roots();
    }
    ament_prefixes()
        .into_iter()
        .map(|p| p.join("share").join(provider).join("models"))
        .filter(|p| p.is_dir())
        .collect()
}

/// The asset folders a borrowed provider contributes, in search order: each root's `meshes/`
/// and `textures/` (when present), then the root itself (so `ur5e/meshes/base.stl` resolves).
pub fn provider_asset_dirs(provider: &str) -> Result<Vec<PathBuf>, String> {
    let roots = provider_roots(provider);
    if roots.is_empty() {
        return Err(format!(
            "`assets:` borrows from `{provider}`, which is no installed model provider: use `roqsim` or a package \
             with share/{provider}/models on AMENT_PREFIX_PATH"
        ));
    }
    let mut out = Vec::new();
    for r in roots {
        for sub in ["meshes", "textures"] {
            if r.join(sub).is_dir() {
                out.push(r.join(sub));
            }
        }
        out.push(r);
    }
    Ok(out)
}

/// Read a manifest; a model with none has an empty one.
pub fn load_manifest(asset: &ModelAsset) -> Result<Manifest, String> {
    let p = asset.manifest_path();
    if !p.is_file() {
        return Ok(Manifest::default());
    }
    let text = crate::world::yaml::read_document(&p, "model manifest")?;
    let v: Value = crate::world::yaml::parse_yaml(&text)
        .map_err(|e| format!("{}: {}", p.display(), e.message))?;
    let Value::Mapping(m) = v else { return Ok(Manifest::default()) };
    let mut out = Manifest::default();
    let mut errors = ConfigErrors::default();
    for (k, v) in m {
        let key = k.as_str().unwrap_or_default().to_string();
        match key.as_str() {
            "license" => out.license = v.as_str().map(str::to_string),
            "source" => out.source = v.as_str().map(str::to_string),
            "rest_height" => out.rest_height = v.as_f64(),
            "frame_id" => out.frame_id = v.as_str().map(str::to_string),
            "camera_name" => out.camera_name = v.as_str().map(str::to_string),
            "frames" => {
                out.frames = serde_norway::from_value(v)
                    .map_err(|e| {
                        format!(
                            "{}: frames: {}",
                            p.display(),
                            crate::error::plain_serde(&e.to_string())
                        )
                    })?;
            }
            "components" => {
                out.components = parse_list(&v, "components", &mut errors);
            }
            "assets" => {
                let names: Vec<String> = match &v {
                    Value::String(s) => vec![s.clone()],
                    Value::Sequence(items) if items.iter().all(|i| i.as_str().is_some()) => {
                        items.iter().filter_map(|i| i.as_str().map(str::to_string)).collect()
                    }
                    _ => {
                        errors.push("assets", "must be a provider name or a list of provider names");
                        Vec::new()
                    }
                };
                for n in &names {
                    match provider_asset_dirs(n) {
                        Ok(d) => out.borrowed_dirs.extend(d),
                        Err(e) => errors.push("assets", e),
                    }
                }
                out.assets = names;
            }
            "home" => {
                out.extra.insert(Value::String(key), v);
            }
            other => errors.push(
                other,
                format!(
                    "unknown manifest key; roqsim acts on {} and nothing else (a key that is not acted on would be \
                     silently ignored)",
                    MANIFEST_KEYS.join(", ")
                ),
            ),
        }
    }
    if !errors.is_empty() {
        return Err(format!(
            "{}: {}",
            p.display(),
            errors.0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; ")
        ));
    }
    mark_manifest(&mut out.components);
    Ok(out)
}

fn mark_manifest(list: &mut [Component]) {
    for c in list {
        c.origin = Origin::Manifest;
        mark_manifest(&mut c.components);
    }
}
