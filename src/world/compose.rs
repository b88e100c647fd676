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
    crate::world::prefixes::ament_prefixes()
        .into_iter()
        .map(|p| p.join("share").join(pkg).join("worlds"))
        .filter(|d| d.is_dir())
        .collect()
}

/// Resolve `<package>:<relative path>` to a file in one of the package's worlds folders, with the
/// root it was found under.
pub fn resolve_package_file(pkg: &str, rel: &str) -> Result<(PathBuf, PathBuf), String> {
    inside_package(pkg, rel)?;
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

/// Refuse a `<package>:<path>` whose path is absolute or climbs with `..`: it would name a file
/// outside the package's worlds folder.
pub fn inside_package(pkg: &str, rel: &str) -> Result<(), String> {
    let p = Path::new(rel);
    if p.has_root()
        || p.components().any(|c| matches!(c, PathPart::ParentDir | PathPart::Prefix(_)))
    {
        return Err(format!(
            "`{pkg}:{rel}` reaches outside package `{pkg}`'s worlds folder: after `{pkg}:` write a path inside it \
             (no leading `/`, no `..`); a file elsewhere is named by its own path, without `{pkg}:`"
        ));
    }
    Ok(())
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
            inside_package(pkg, world).map_err(|e| format!("parent world {e}"))?;
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

/// Mark an inherited list: its entries resolve relative files from `dir` and their errors name
/// `file` (entries already marked came from a farther parent and keep theirs).
fn mark_inherited(list: &mut [Component], dir: &Path, file: &Path) {
    for c in list {
        if c.base_dir.is_none() {
            c.base_dir = Some(dir.to_path_buf());
        }
        if c.from_world.is_none() {
            c.from_world = Some(file.to_path_buf());
        }
        mark_inherited(&mut c.components, dir, file);
    }
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The prefix an error from a parent world's part carries: one prefix naming the file the part
/// came from, however deep in the chain it sits.
pub fn parent_prefix(file: &Path) -> String {
    format!("in parent world `{}`: ", file.display())
}

/// Record a problem found in `file` (`None`: the world itself).
fn push_at(errors: &mut ConfigErrors, file: Option<&Path>, path: impl Into<String>, msg: String) {
    match file {
        Some(f) => errors.push(path, format!("{}{msg}", parent_prefix(f))),
        None => errors.push(path, msg),
    }
}

/// One parent world of a chain, read and parsed.
struct Level {
    doc: WorldDoc,
    path: PathBuf,
    package: Option<(String, PathBuf)>,
    dir: PathBuf,
    text: String,
}

/// A parent world as composition read it: its file, the package (and that package's worlds
/// folder) it came from, and its text. A recording keeps these so a replay composes the same
/// chain without the files.
#[derive(Debug, Clone, PartialEq)]
pub struct ParentText {
    /// The parent world file (absolute).
    pub path: PathBuf,
    /// `(package, worlds folder)` for a `<package>:<world>` parent.
    pub package: Option<(String, PathBuf)>,
    /// Its YAML text as read.
    pub text: String,
}

/// Compose `doc` with its `extends:` chain. `self_path` is the document's own file (for cycle
/// detection), `base_dir` its folder. Problems are collected into `errors` under `extends` /
/// `disable` / `components`; a parent's own problems carry one prefix naming its file.
///
/// The chain is read in a loop (never by recursion) and holds at most
/// [`MAX_EXTENDS_DEPTH`](crate::world::bounds::MAX_EXTENDS_DEPTH) parents, so no input can
/// exhaust the stack or make a refusal grow with the chain's depth.
pub fn compose(
    doc: WorldDoc,
    base_dir: &Path,
    self_path: Option<&Path>,
    errors: &mut ConfigErrors,
) -> WorldDoc {
    compose_from(doc, base_dir, self_path, None, errors)
}

/// [`compose`] reading the parents from `recorded` (nearest parent first, as
/// [`WorldDoc::parents`] lists them) instead of the file system: the chain a recording kept.
pub fn compose_from(
    doc: WorldDoc,
    base_dir: &Path,
    self_path: Option<&Path>,
    recorded: Option<&[ParentText]>,
    errors: &mut ConfigErrors,
) -> WorldDoc {
    let max = crate::world::bounds::MAX_EXTENDS_DEPTH;
    let mut stack: Vec<PathBuf> = self_path
        .map(|p| p.canonicalize().unwrap_or_else(|_| p.to_path_buf()))
        .into_iter()
        .collect();
    // Read the chain, nearest parent first.
    let mut levels: Vec<Level> = Vec::new();
    let mut next = doc.extends.clone();
    let mut dir = base_dir.to_path_buf();
    while let Some(ext) = next.take() {
        let here = levels.last().map(|l| l.path.clone());
        let here = here.as_deref();
        if levels.len() == max {
            let names: Vec<String> = stack.iter().take(4).map(|p| file_name(p)).collect();
            errors.push(
                "extends",
                format!(
                    "the extends chain is deeper than {max} parent worlds ({} -> …); a chain may hold at most {max} \
                     (the bound is in docs/bounds.md): fold some of its worlds into one",
                    names.join(" -> ")
                ),
            );
            break;
        }
        let parent = match recorded {
            Some(rec) => match rec.get(levels.len()) {
                Some(p) => WorldRef { path: p.path.clone(), package: p.package.clone() },
                None => {
                    push_at(
                        errors,
                        here,
                        "extends",
                        format!(
                            "extends `{ext}`, but the recording holds only {} parent worlds",
                            rec.len()
                        ),
                    );
                    break;
                }
            },
            None => match resolve_world_ref(&ext, &dir) {
                Ok(p) => p,
                Err(e) => {
                    push_at(errors, here, "extends", e);
                    break;
                }
            },
        };
        if stack.contains(&parent.path) {
            let start = stack.iter().position(|p| p == &parent.path).unwrap_or(0);
            let names: Vec<String> = stack[start..]
                .iter()
                .chain(std::iter::once(&parent.path))
                .map(|p| file_name(p))
                .collect();
            push_at(
                errors,
                here,
                "extends",
                format!(
                    "extends cycle: {}; a world cannot inherit from itself",
                    names.join(" -> ")
                ),
            );
            break;
        }
        let read = match recorded.and_then(|rec| rec.get(levels.len())) {
            Some(p) => Ok(p.text.clone()),
            None => crate::world::yaml::read_document(&parent.path, "parent world"),
        };
        let text = match read {
            Ok(t) => t,
            Err(m) => {
                push_at(errors, here, "extends", m);
                break;
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
        for e in perrs.0 {
            push_at(errors, Some(&parent.path), e.path, e.message);
        }
        dir = parent.path.parent().map(Path::to_path_buf).unwrap_or_default();
        next = parent_doc.extends.clone();
        stack.push(parent.path.clone());
        levels.push(Level {
            doc: parent_doc,
            path: parent.path,
            package: parent.package,
            dir: dir.clone(),
            text,
        });
    }
    let sim_sources: Vec<(PathBuf, Mapping)> =
        levels.iter().map(|l| (l.path.clone(), l.doc.sim.clone())).collect();
    let parents: Vec<ParentText> = levels
        .iter_mut()
        .map(|l| ParentText {
            path: l.path.clone(),
            package: l.package.clone(),
            text: std::mem::take(&mut l.text),
        })
        .collect();

    // Fold from the farthest parent down: each level composes over the one above it.
    let mut above: Option<(WorldDoc, PathBuf)> = None;
    for Level { doc: ldoc, path, package, dir, .. } in levels.into_iter().rev() {
        let mut composed = match above.take() {
            Some((pdoc, ppath)) => merge(ldoc, pdoc, &ppath, Some(&path), errors),
            None => {
                check_disable_alone(&ldoc, Some(&path), errors);
                ldoc
            }
        };
        rebase(&mut composed, &dir, package.as_ref(), &path);
        above = Some((composed, path));
    }
    let mut out = match above {
        Some((pdoc, ppath)) => merge(doc, pdoc, &ppath, None, errors),
        None => {
            check_disable_alone(&doc, None, errors);
            doc
        }
    };
    out.sim_sources = sim_sources;
    out.parents = parents;
    out
}

/// `disable:` in a world whose `extends:` names nothing (a failed `extends:` is reported alone).
fn check_disable_alone(doc: &WorldDoc, file: Option<&Path>, errors: &mut ConfigErrors) {
    if doc.extends.is_none() && !doc.disable.is_empty() {
        push_at(
            errors,
            file,
            "disable",
            "`disable:` drops components inherited from a parent world and needs `extends:` naming that parent; \
             this world extends nothing, so remove the entries from `components:` instead"
                .to_string(),
        );
    }
}

/// A parent world's own parts keep resolving from its folder: its relative `sim.world` becomes
/// absolute (a `<package>:<path>` ref for a package parent), its components remember the folder
/// and the file.
fn rebase(
    pdoc: &mut WorldDoc,
    parent_dir: &Path,
    package: Option<&(String, PathBuf)>,
    file: &Path,
) {
    if let Some(Value::String(w)) = pdoc.sim.get("world").cloned() {
        if is_relative_world_file(&w) {
            let abs = normalize(&parent_dir.join(&w));
            let rebased = match package {
                Some((pkg, root)) => match abs.strip_prefix(normalize(root)) {
                    Ok(rel) => format!("{pkg}:{}", rel.display()),
                    Err(_) => abs.display().to_string(),
                },
                None => abs.display().to_string(),
            };
            pdoc.sim.insert(Value::String("world".into()), Value::String(rebased));
        }
    }
    mark_inherited(&mut pdoc.components, parent_dir, file);
}

/// Compose `doc` (from `file`; `None`: the world itself) over its composed parent `pdoc` (from
/// `parent_path`).
fn merge(
    mut doc: WorldDoc,
    mut pdoc: WorldDoc,
    parent_path: &Path,
    file: Option<&Path>,
    errors: &mut ConfigErrors,
) -> WorldDoc {
    // disable: drop inherited components by label (a `name:` can only be the reserved sibling:
    // the document refuses one inside a config map). Set lookups keep it linear in the lists.
    let inherited: Vec<String> = pdoc.components.iter().map(|c| c.label().to_string()).collect();
    let present: std::collections::HashSet<&str> = inherited.iter().map(String::as_str).collect();
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut drop: std::collections::HashSet<String> = std::collections::HashSet::new();
    // The inherited list is given once, with the first miss; later misses point at it (2000
    // misses against 2000 inherited entries used to print the list 2000 times, 144 MB).
    let mut listed_at: Option<usize> = None;
    for (i, sel) in doc.disable.iter().enumerate() {
        let first = seen.insert(sel.as_str());
        if present.contains(sel.as_str()) && first {
            drop.insert(sel.clone());
        } else {
            let why = if first { "" } else { " (it is listed twice)" };
            let list = match listed_at {
                Some(at) => format!(" (the inherited components are listed at disable[{at}])"),
                None => {
                    listed_at = Some(i);
                    let names = if inherited.is_empty() {
                        "(none)".to_string()
                    } else {
                        inherited.join(", ")
                    };
                    format!("; inherited: {names}")
                }
            };
            push_at(
                errors,
                file,
                format!("disable[{i}]"),
                format!(
                    "`{sel}` matches no component inherited from `{}`{why}{list}",
                    file_name(parent_path),
                ),
            );
        }
    }
    pdoc.components.retain(|c| !drop.contains(c.label()));

    // sim: child over parent.
    let mut sim = pdoc.sim;
    deep_merge(&mut sim, &doc.sim);

    // components: kept parent entries, then the child's (at most MAX_COMPONENTS in all).
    let max = crate::world::document::MAX_COMPONENTS;
    if pdoc.components.len() + doc.components.len() > max {
        push_at(
            errors,
            file,
            "components",
            format!(
                "with the {} inherited from `{}` the world has {} entries; a world may hold at most {max}",
                pdoc.components.len(),
                file_name(parent_path),
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
            push_at(
                errors,
                file,
                format!("components.{}", c.label()),
                format!(
                    "`{}` is already a component inherited from `{}`; to change it, list it under `disable:` and \
                     re-add the changed copy here, or give this one a distinct `name:`",
                    c.label(),
                    file_name(parent_path)
                ),
            );
        }
    }
    let mut components = pdoc.components;
    components.retain(|p| !child_labels.contains(p.label()));
    components.append(&mut doc.components);

    let mut chain = pdoc.chain;
    chain.push(parent_path.to_path_buf());
    WorldDoc {
        sim,
        components,
        extends: doc.extends,
        disable: doc.disable,
        chain,
        sim_sources: Vec::new(),
        parents: Vec::new(),
    }
}

/// Where the problems of a composed world came from, so each one from an inherited part names
/// the parent file it sits in (taken right after composition, before overrides change the
/// document).
#[derive(Debug, Clone, Default)]
pub struct Provenance {
    /// Inherited top-level and nested component addresses, with their file.
    components: Vec<(String, PathBuf)>,
    /// The world's own `sim:` block, then each parent's with its file, nearest first.
    own_sim: Mapping,
    parents_sim: Vec<(PathBuf, Mapping)>,
}

impl Provenance {
    /// Record where `doc`'s parts came from; `own` is the world's own document (before composing).
    pub fn of(doc: &WorldDoc, own_sim: &Mapping) -> Self {
        let mut flat = Vec::new();
        crate::world::document::walk(&doc.components, None, &mut flat);
        let components = flat
            .into_iter()
            .filter_map(|(addr, _, c)| c.from_world.clone().map(|f| (addr, f)))
            .collect();
        Provenance { components, own_sim: own_sim.clone(), parents_sim: doc.sim_sources.clone() }
    }

    /// The parent file an error at `path` sits in, if it sits in one.
    fn file_of(&self, path: &str) -> Option<&Path> {
        if let Some(rest) = path.strip_prefix("components.") {
            // The longest inherited address the error's path starts with.
            return self
                .components
                .iter()
                .filter(|(a, _)| {
                    rest == a
                        || rest.strip_prefix(a.as_str()).is_some_and(|r| r.starts_with(['.', '[']))
                })
                .max_by_key(|(a, _)| a.len())
                .map(|(_, f)| f.as_path());
        }
        let keys: Vec<&str> = path.strip_prefix("sim.")?.split(['.', '[']).collect();
        // The nearest document that states the key (or a scalar above it) set its value.
        let states = |m: &Mapping| {
            let mut cur = m;
            for k in &keys {
                match cur.get(*k) {
                    Some(Value::Mapping(inner)) => cur = inner,
                    Some(_) => return true,
                    None => return false,
                }
            }
            true
        };
        if states(&self.own_sim) {
            return None;
        }
        self.parents_sim.iter().find(|(_, m)| states(m)).map(|(f, _)| f.as_path())
    }

    /// Prefix every error from an inherited part with its parent file, once. An error at a path a
    /// command-line assignment set is the assignment's, not the parent's.
    pub fn attribute(&self, errors: &mut ConfigErrors, assigned: &[String]) {
        if self.components.is_empty() && self.parents_sim.is_empty() {
            return;
        }
        for e in &mut errors.0 {
            if e.message.starts_with("in parent world `") {
                continue;
            }
            let overridden = assigned.iter().any(|a| {
                e.path == *a
                    || e.path.strip_prefix(a.as_str()).is_some_and(|r| r.starts_with('.'))
                    || a.strip_prefix(e.path.as_str()).is_some_and(|r| r.starts_with('.'))
            });
            if overridden {
                continue;
            }
            if let Some(f) = self.file_of(&e.path) {
                e.message = format!("{}{}", parent_prefix(f), e.message);
            }
        }
    }
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
