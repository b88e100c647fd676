//! Manifest expansion.
//!
//! While the document loads, every spawn entry's model manifest is spliced in as components of
//! that entry: recursive and depth-first (a robot manifest may mount a device whose manifest
//! brings its own plugins), nearer-wins shallow merge under a world entry with the same label,
//! `default_plugins: false` opts out, a chain reaching one model file twice or nesting deeper
//! than eight expansions is refused.

use std::path::{Path, PathBuf};

use serde_norway::{Mapping, Value};

use crate::error::ConfigErrors;
use crate::plugin::{ExpandArgs, Expansion, PluginDescriptor};
use crate::world::document::Component;
use crate::world::models::{load_manifest, resolve_model, Manifest, ModelAsset};

/// Deepest chain of nested expansions accepted.
pub const MAX_EXPANSION_DEPTH: usize = 8;

/// The shared `expand` of spawn plugins: resolve `model:`, read its manifest, return its
/// components. `default_plugins: false` yields nothing.
pub fn expand_manifest(args: &ExpandArgs) -> Result<Option<Expansion>, String> {
    let Some((asset, manifest)) = read_model(args)? else { return Ok(None) };
    if args.config.get("default_plugins").and_then(Value::as_bool) == Some(false) {
        return Ok(None);
    }
    Ok(Some(Expansion { model_path: asset.path, components: manifest.components }))
}

/// Resolve the entry's `model:` and read its manifest, so an unknown model, an unknown manifest
/// key or an `assets:` provider that is not installed is refused at load, whatever the entry
/// then does with the manifest. `None` when the entry states no model (its own validation says so).
pub fn read_model(args: &ExpandArgs) -> Result<Option<(ModelAsset, Manifest)>, String> {
    let Some(model) = args.config.get("model").and_then(Value::as_str) else {
        return Ok(None);
    };
    let asset = resolve_model(model, args.base_dir)?;
    let manifest = load_manifest(&asset)?;
    Ok(Some((asset, manifest)))
}

/// The load-time check of a plugin that places a model but takes no components from its manifest
/// (a prop, a door leaf): [`read_model`], expanding nothing.
pub fn check_model(args: &ExpandArgs) -> Result<Option<Expansion>, String> {
    read_model(args).map(|_| None)
}

/// Shallow-merge `manifest` components under the `world` ones with the same label: the world's
/// keys win, missing keys come from the manifest, nested lists merge the same way.
pub fn merge_under(world: &mut Vec<Component>, manifest: Vec<Component>) {
    let mut out = Vec::with_capacity(world.len() + manifest.len());
    for m in manifest {
        if let Some(pos) = world.iter().position(|w| w.label() == m.label()) {
            let mut w = world.remove(pos);
            if w.plugin == m.plugin {
                for (k, v) in m.config {
                    if !w.config.contains_key(&k) {
                        w.config.insert(k, v);
                    }
                }
                if w.enabled.is_none() {
                    w.enabled = m.enabled;
                }
                merge_under(&mut w.components, m.components);
            }
            out.push(w);
        } else {
            out.push(m);
        }
    }
    out.append(world);
    *world = out;
}

/// Expand every enabled spawn entry in `list`, depth-first. `chain` is the model files of the
/// expansions above this level.
pub fn expand_tree(
    list: &mut [Component],
    lookup: &dyn Fn(&str) -> Option<&'static PluginDescriptor>,
    base_dir: &Path,
    parent_addr: Option<&str>,
    carrier: Option<&Mapping>,
    chain: &mut Vec<PathBuf>,
    errors: &mut ConfigErrors,
) {
    for c in list.iter_mut() {
        if !c.is_enabled() {
            continue;
        }
        let addr = match parent_addr {
            Some(p) => format!("{p}.{}", c.label()),
            None => c.label().to_string(),
        };
        let mut pushed = false;
        let own_dir = c.base_dir.clone();
        let base_dir = own_dir.as_deref().unwrap_or(base_dir);
        if let Some(expand) = lookup(&c.plugin).and_then(|d| d.expand) {
            if !c.expanded {
                let args = ExpandArgs { config: &c.config, address: &addr, base_dir, carrier };
                match expand(&args) {
                    Ok(Some(exp)) => {
                        c.expanded = true;
                        if let Some(i) = chain.iter().position(|p| p == &exp.model_path) {
                            let names: Vec<String> = chain[i..]
                                .iter()
                                .chain(std::iter::once(&exp.model_path))
                                .map(|p| {
                                    p.file_name()
                                        .map(|f| f.to_string_lossy().into_owned())
                                        .unwrap_or_default()
                                })
                                .collect();
                            errors.push(
                                format!("components.{addr}"),
                                format!(
                                    "manifest expansion reaches the same model twice: {}",
                                    names.join(" -> ")
                                ),
                            );
                            continue;
                        }
                        if chain.len() >= MAX_EXPANSION_DEPTH {
                            errors.push(
                                format!("components.{addr}"),
                                format!("manifest expansion nests deeper than {MAX_EXPANSION_DEPTH} models"),
                            );
                            continue;
                        }
                        chain.push(exp.model_path);
                        pushed = true;
                        merge_under(&mut c.components, exp.components);
                    }
                    Ok(None) => c.expanded = true,
                    Err(e) => {
                        errors.push(format!("components.{addr}.model"), e);
                        continue;
                    }
                }
            }
        }
        let cfg = c.config.clone();
        expand_tree(&mut c.components, lookup, base_dir, Some(&addr), Some(&cfg), chain, errors);
        if pushed {
            chain.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::document::Origin;

    fn comp(plugin: &str, name: Option<&str>, cfg: &str) -> Component {
        let m: Mapping = serde_norway::from_str(cfg).unwrap();
        Component::new(plugin, name, m)
    }

    #[test]
    fn world_wins_manifest_fills() {
        let mut world = vec![comp("lidar", None, "{range_stddev: 0.05}")];
        let mut m = comp("lidar", None, "{rays: 360, range_stddev: 0.0}");
        m.origin = Origin::Manifest;
        merge_under(&mut world, vec![comp("imu", None, "{}"), m]);
        assert_eq!(world.len(), 2);
        assert_eq!(world[0].plugin, "imu");
        let l = &world[1];
        assert_eq!(l.config.get("rays").and_then(Value::as_i64), Some(360));
        assert_eq!(l.config.get("range_stddev").and_then(Value::as_f64), Some(0.05));
        assert_eq!(l.origin, Origin::Document);
    }
}
