//! World composition: `extends:` a parent world and `disable:` inherited components.
//!
//! A world names one parent, by a path relative to its own file or by `<package>:<world>` (a
//! world shipped in an installed package's `share/<package>/worlds/`; `roqsim:` is this
//! package's bundled worlds). Parents may extend in turn; a chain that comes back to a file it
//! already holds is refused, naming the chain. Composition rules:
//!
//! - `sim:` deep-merges the child over the parent (mappings merge per key; scalars and lists
//!   replace);
//! - the parent's components are kept in order, minus the ones `disable:` names (by
//!   the component's label: its `name:`, else its plugin ref), and the child's components are
//!   appended after them;
//! - a parent's relative `sim.world` keeps resolving from the parent's folder: it becomes an
//!   absolute path for a file parent and a `<package>:<path>` reference for a package parent, so a
//!   run's provenance names the package rather than where this machine installed it;
//! - an inherited component keeps resolving its own relative files from its parent's folder.

use std::path::{Component as PathPart, Path, PathBuf};

use serde_norway::{Mapping, Value};

use crate::error::ConfigErrors;
use crate::world::document::{Component, WorldDoc};

/// Where a world reference led.
#[derive(Debug, Clone, PartialEq)]
pub struct WorldRef {
    /// The world file (absolute when it exists).
    pub path: PathBuf,
    /// The package it came from and that package's worlds folder, for a `<package>:<world>` ref.
    pub package: Option<(String, PathBuf)>,
}

/// True for `<package>:<rest>` where the package part is a ROS package name.
pub fn split_package_ref(reference: &str) -> Option<(&str, &str)> {
    let (pkg, rest) = reference.split_once(':')?;
    let valid = !pkg.is_empty()
        && pkg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !rest.is_empty();
    valid.then_some((pkg, rest))
}

/// The worlds folders of a package, in search order: `roqsim` is this package's own bundled
/// worlds; any other package is `share/<package>/worlds` under each `AMENT_PREFIX_PATH` prefix.
pub fn package_world_roots(pkg: &str) -> Vec<PathBuf> {
    if pkg == "roqsim" {
        return crate::runner::world_roots();
    }
    std::env::var("AMENT_PREFIX_PATH")
        .map(|p| {
            p.split(':')
                .filter(|s| !s.is_empty())
                .map(|s| Path::new(s).join("share").join(pkg).join("worlds"))
                .filter(|d| d.is_dir())
                .collect()
        })
        .unwrap_or_default()
}

/// Resolve `<package>:<relative path>` to a file in one of the package's worlds folders, with the
/// root it was found under.
pub fn resolve_package_file(pkg: &str, rel: &str) -> Result<(PathBuf, PathBuf), String> {
    let roots = package_world_roots(pkg);
    if roots.is_empty() {
        return Err(format!(
            "package `{pkg}` has no share/{pkg}/worlds folder on AMENT_PREFIX_PATH (is the package built and its install sourced?)"
        ));
    }
    for r in &roots {
        let p = r.join(rel);
        if p.is_file() {
            return Ok((p.canonicalize().unwrap_or(p), r.clone()));
        }
    }
    Err(format!(
        "package `{pkg}` has no `{rel}` in {}",
        roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ")
    ))
}

/// The worlds a package ships (names without `.yaml`), sorted.
pub fn package_worlds(root: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| {
                    e.file_name().to_str().and_then(|n| n.strip_suffix(".yaml")).map(String::from)
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Resolve an `extends:` value: `<package>:<world>` (the `.yaml` may be left off), else a path
/// relative to `base_dir`.
pub fn resolve_world_ref(reference: &str, base_dir: &Path) -> Result<WorldRef, String> {
    let as_path = if Path::new(reference).is_absolute() {
        reference.into()
    } else {
        base_dir.join(reference)
    };
    if let Some((pkg, world)) = split_package_ref(reference) {
        if !as_path.is_file() {
            let file =
                if world.ends_with(".yaml") { world.to_string() } else { format!("{world}.yaml") };
            return match resolve_package_file(pkg, &file) {
                Ok((path, root)) => Ok(WorldRef { path, package: Some((pkg.to_string(), root)) }),
                Err(e) => {
                    let known: Vec<String> =
                        package_world_roots(pkg).iter().flat_map(|r| package_worlds(r)).collect();
                    let known = if known.is_empty() {
                        String::new()
                    } else {
                        format!("; `{pkg}` ships: {}", known.join(", "))
                    };
                    Err(format!("parent world `{reference}` not found: {e}{known}"))
                }
            };
        }
    }
    if as_path.is_file() {
        return Ok(WorldRef { path: as_path.canonicalize().unwrap_or(as_path), package: None });
    }
    if as_path.is_dir() {
        return Err(format!(
            "parent world `{reference}` is a directory: name a world YAML file in it"
        ));
    }
    if as_path.exists() {
        return Err(format!(
            "parent world `{reference}` is not a regular file (a device, pipe or socket): name a world YAML file"
        ));
    }
    Err(format!(
        "parent world `{reference}` not found: `{}` is not a file (a path resolves against this world's folder; a bundled world is `roqsim:<name>`)",
        as_path.display()
    ))
}

/// Join without touching the file system, folding `.` and `..`.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in p.components() {
        match part {
            PathPart::CurDir => {}
            PathPart::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// True for a `sim.world` value that names a file relative to its world (not the built-in room,
/// not absolute, not a package reference).
fn is_relative_world_file(w: &str) -> bool {
    (w.ends_with(".xml") || w.ends_with(".mjcf") || w.contains('/'))
        && !Path::new(w).is_absolute()
        && split_package_ref(w).is_none()
}

/// Deep-merge `over` into `base`: mappings merge per key, anything else replaces.
pub fn deep_merge(base: &mut Mapping, over: &Mapping) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(Value::Mapping(b)), Value::Mapping(o)) => deep_merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

fn set_base_dir(list: &mut [Component], dir: &Path) {
    for c in list {
        if c.base_dir.is_none() {
            c.base_dir = Some(dir.to_path_buf());
        }
        set_base_dir(&mut c.components, dir);
    }
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Compose `doc` with its `extends:` chain. `self_path` is the document's own file (for cycle
/// detection), `base_dir` its folder. Problems are collected into `errors` under `extends` /
/// `disable` / `components`; a parent's own problems are reported with its file named.
pub fn compose(
    doc: WorldDoc,
    base_dir: &Path,
    self_path: Option<&Path>,
    errors: &mut ConfigErrors,
) -> WorldDoc {
    let mut stack: Vec<PathBuf> = self_path
        .map(|p| p.canonicalize().unwrap_or_else(|_| p.to_path_buf()))
        .into_iter()
        .collect();
    compose_inner(doc, base_dir, &mut stack, errors)
}

fn compose_inner(
    mut doc: WorldDoc,
    base_dir: &Path,
    stack: &mut Vec<PathBuf>,
    errors: &mut ConfigErrors,
) -> WorldDoc {
    let Some(ext) = doc.extends.clone() else {
        if !doc.disable.is_empty() {
            errors.push(
                "disable",
                "`disable:` drops components inherited from a parent world and needs `extends:` naming that parent; \
                 this world extends nothing, so remove the entries from `components:` instead",
            );
        }
        return doc;
    };
    let parent = match resolve_world_ref(&ext, base_dir) {
        Ok(p) => p,
        Err(e) => {
            errors.push("extends", e);
            return doc;
        }
    };
    if stack.contains(&parent.path) {
        let start = stack.iter().position(|p| p == &parent.path).unwrap_or(0);
        let names: Vec<String> = stack[start..]
            .iter()
            .chain(std::iter::once(&parent.path))
            .map(|p| file_name(p))
            .collect();
        errors.push(
            "extends",
            format!("extends cycle: {}; a world cannot inherit from itself", names.join(" -> ")),
        );
        return doc;
    }
    let shown = parent.path.display().to_string();
    let text = match crate::world::yaml::read_document(&parent.path, "parent world") {
        Ok(t) => t,
        Err(m) => {
            errors.push("extends", m);
            return doc;
        }
    };
    let mut perrs = ConfigErrors::default();
    let parent_doc = match crate::world::parse_yaml(&text) {
        Ok(root) => WorldDoc::parse(&root, &mut perrs),
        Err(e) => {
            perrs.0.push(e);
            WorldDoc::default()
        }
    };
    let parent_dir = parent.path.parent().map(Path::to_path_buf).unwrap_or_default();
    stack.push(parent.path.clone());
    let mut pdoc = compose_inner(parent_doc, &parent_dir, stack, &mut perrs);
    stack.pop();
    for e in perrs.0 {
        let msg = format!("in parent world `{shown}`: {}", e.message);
        errors.push(e.path, msg);
    }

    // The parent's relative sim.world keeps resolving from the parent's folder.
    if let Some(Value::String(w)) = pdoc.sim.get("world").cloned() {
        if is_relative_world_file(&w) {
            let abs = normalize(&parent_dir.join(&w));
            let rebased = match &parent.package {
                Some((pkg, root)) => match abs.strip_prefix(normalize(root)) {
                    Ok(rel) => format!("{pkg}:{}", rel.display()),
                    Err(_) => abs.display().to_string(),
                },
                None => abs.display().to_string(),
            };
            pdoc.sim.insert(Value::String("world".into()), Value::String(rebased));
        }
    }
    set_base_dir(&mut pdoc.components, &parent_dir);

    // disable: drop inherited components by label (a `name:` can only be the reserved sibling:
    // the document refuses one inside a config map).
    let inherited: Vec<String> = pdoc.components.iter().map(|c| c.label().to_string()).collect();
    for (i, sel) in doc.disable.iter().enumerate() {
        let matches = |c: &Component| c.label() == sel;
        if pdoc.components.iter().any(matches) {
            pdoc.components.retain(|c| !matches(c));
        } else {
            let dropped_already = doc.disable[..i].contains(sel);
            let why = if dropped_already { " (it is listed twice)" } else { "" };
            errors.push(
                format!("disable[{i}]"),
                format!(
                    "`{sel}` matches no component inherited from `{}`{why}; inherited: {}",
                    file_name(&parent.path),
                    if inherited.is_empty() { "(none)".to_string() } else { inherited.join(", ") }
                ),
            );
        }
    }

    // sim: child over parent.
    let mut sim = pdoc.sim;
    deep_merge(&mut sim, &doc.sim);

    // components: kept parent entries, then the child's (at most MAX_COMPONENTS in all; the
    // label checks below are set lookups, linear in the lists' lengths).
    let max = crate::world::document::MAX_COMPONENTS;
    if pdoc.components.len() + doc.components.len() > max {
        errors.push(
            "components",
            format!(
                "with the {} inherited from `{}` the world has {} entries; a world may hold at most {max}",
                pdoc.components.len(),
                file_name(&parent.path),
                pdoc.components.len() + doc.components.len()
            ),
        );
        return doc;
    }
    let inherited_labels: std::collections::HashSet<String> =
        pdoc.components.iter().map(|p| p.label().to_string()).collect();
    let child_labels: std::collections::HashSet<String> =
        doc.components.iter().map(|c| c.label().to_string()).collect();
    for c in &doc.components {
        if inherited_labels.contains(c.label()) {
            errors.push(
                format!("components.{}", c.label()),
                format!(
                    "`{}` is already a component inherited from `{}`; to change it, list it under `disable:` and \
                     re-add the changed copy here, or give this one a distinct `name:`",
                    c.label(),
                    file_name(&parent.path)
                ),
            );
        }
    }
    let mut components = pdoc.components;
    components.retain(|p| !child_labels.contains(p.label()));
    components.append(&mut doc.components);

    let mut chain = pdoc.chain;
    chain.push(parent.path);
    WorldDoc { sim, components, extends: doc.extends, disable: doc.disable, chain }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_refs() {
        assert_eq!(split_package_ref("roqsim:demo"), Some(("roqsim", "demo")));
        assert_eq!(split_package_ref("./a.yaml"), None);
        assert_eq!(split_package_ref("my-pkg:x"), None);
        assert_eq!(split_package_ref("/abs/a:b.yaml"), None);
    }

    #[test]
    fn deep_merge_child_wins() {
        let mut a: Mapping = serde_norway::from_str(
            "{timestep: 0.002, sync: {enabled: false, timeout_s: 1.0}, gravity: [0, 0, -9.81]}",
        )
        .unwrap();
        let b: Mapping =
            serde_norway::from_str("{timestep: 0.001, sync: {timeout_s: 2.0}, gravity: [0, 0, 0]}")
                .unwrap();
        deep_merge(&mut a, &b);
        let want: Mapping = serde_norway::from_str(
            "{timestep: 0.001, sync: {enabled: false, timeout_s: 2.0}, gravity: [0, 0, 0]}",
        )
        .unwrap();
        assert_eq!(a, want);
    }

    #[test]
    fn normalize_folds_dots() {
        assert_eq!(normalize(Path::new("/a/b/../c/./d.xml")), PathBuf::from("/a/c/d.xml"));
    }
}
