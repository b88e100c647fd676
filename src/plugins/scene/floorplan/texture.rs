//! The floorplan's PNG textures: where a `texture:` reference points and the surface properties a
//! texture folder's `manifest.yaml` declares.
//!
//! A reference is one of: a PNG path (absolute, or relative to the world file's folder, as every
//! file a world names); `package://<package>/<path>.png`; or `<package>:<name>`, the texture
//! folder `share/<package>/textures/<name>/` holding `<name>.png` (no search across packages).
//! MuJoCo loads PNG only, so any other file is refused. A `manifest.yaml` beside the PNG may state
//! `reflectance` (0..1) and `physical_size` (metres one tile spans: a number or [x, y]), used where
//! the world does not state the key; `license` and `source` are free text; other keys are refused.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The surface properties a texture folder's `manifest.yaml` may state.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextureManifest {
    /// 0..1.
    #[serde(default)]
    pub reflectance: Option<f64>,
    /// Metres one tile spans, [x, y].
    #[serde(default)]
    pub physical_size: Option<super::TileSize>,
    /// Licence of the image (free text).
    #[serde(default)]
    pub license: Option<String>,
    /// Where the image comes from (free text).
    #[serde(default)]
    pub source: Option<String>,
}

/// A resolved texture: its PNG and its folder's manifest (empty when there is none).
#[derive(Debug, Clone, PartialEq)]
pub struct Texture {
    /// The PNG file.
    pub png: PathBuf,
    /// The folder's `manifest.yaml`.
    pub manifest: TextureManifest,
}

/// Resolve a `texture:` reference (see the module doc); `base_dir` is the world file's folder.
pub fn resolve(reference: &str, base_dir: &Path) -> Result<Texture, String> {
    let r = reference.trim();
    let png = if r.starts_with("package://") {
        crate::world::models::resolve_package_uri(r)?
    } else if let Some((pkg, name)) =
        r.split_once(':').filter(|(p, n)| !p.is_empty() && !n.is_empty() && !r.contains('/'))
    {
        let dirs = crate::world::models::package_dirs(pkg);
        let tried: Vec<PathBuf> = dirs
            .iter()
            .map(|d| d.join("textures").join(name).join(format!("{name}.png")))
            .collect();
        match tried.iter().find(|p| p.is_file()) {
            Some(p) => p.clone(),
            None if dirs.is_empty() => {
                return Err(format!(
                    "`{r}`: package `{pkg}` not found on AMENT_PREFIX_PATH or ROS_PACKAGE_PATH; source the workspace that installs it, or give a PNG path"
                ))
            }
            None => {
                return Err(format!(
                    "`{r}`: package `{pkg}` has no texture `{name}`; searched {}",
                    tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
                ))
            }
        }
    } else {
        let p = if Path::new(r).is_absolute() { PathBuf::from(r) } else { base_dir.join(r) };
        if let Some(kind) = crate::input_file::not_a_file(&p) {
            return Err(format!("`{r}`: `{}` {kind}: name a .png file", p.display()));
        }
        if !p.is_file() {
            return Err(format!("`{r}`: no file `{}`", p.display()));
        }
        p
    };
    let is_png =
        png.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if !is_png {
        return Err(format!(
            "`{r}` is `{}`: MuJoCo loads PNG textures only; convert it to a .png",
            png.display()
        ));
    }
    let manifest = read_manifest(&png)?;
    Ok(Texture { png, manifest })
}

/// The files a texture reference reads: its PNG and, when there is one, its folder's manifest
/// (what `scenes inputs` lists); empty when it does not resolve.
pub fn files(reference: &str, base_dir: &Path) -> Vec<PathBuf> {
    let Ok(t) = resolve(reference, base_dir) else { return Vec::new() };
    let m = t.png.with_file_name("manifest.yaml");
    let mut out = vec![t.png];
    if m.is_file() {
        out.push(m);
    }
    out
}

/// The `manifest.yaml` beside `png`, or the empty manifest.
fn read_manifest(png: &Path) -> Result<TextureManifest, String> {
    let path = png.with_file_name("manifest.yaml");
    if let Some(kind) = crate::input_file::not_a_file(&path) {
        return Err(format!("texture manifest `{}` {kind}: name a YAML file", path.display()));
    }
    if !path.is_file() {
        return Ok(TextureManifest::default());
    }
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let m: TextureManifest = serde_norway::from_str(&text).map_err(|e| {
        format!(
            "`{}`: {} (a texture manifest states reflectance, physical_size, license, source)",
            path.display(),
            crate::error::plain_serde(&e.to_string())
        )
    })?;
    if let Some(r) = m.reflectance {
        if !(0.0..=1.0).contains(&r) {
            return Err(format!("`{}`: reflectance is in 0..1, got {r}", path.display()));
        }
    }
    if let Some(p) = m.physical_size {
        if p.xy().iter().any(|v| !(*v > 0.0 && v.is_finite())) {
            return Err(format!(
                "`{}`: physical_size (metres per tile) must be > 0, got {:?}",
                path.display(),
                p.xy()
            ));
        }
    }
    Ok(m)
}
