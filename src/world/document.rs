//! The world document: a `sim:` block and a tree of `components:`.
//!
//! Each component entry is a mapping with exactly one plugin-ref key (its value is the plugin's
//! config map) plus the reserved siblings `name:` (the entry's label, default the ref),
//! `enabled:` (default true; `false` removes the entry and everything nested in it) and
//! `components:` (entries owned by this one). Parsing collects every problem with its key path.

use std::path::PathBuf;

use serde_norway::{Mapping, Value};

use crate::error::ConfigErrors;

/// Where a component came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Written in the world document (or an override).
    Document,
    /// Contributed by a model manifest during expansion.
    Manifest,
}

/// One entry of a `components:` list.
#[derive(Debug, Clone, PartialEq)]
pub struct Component {
    /// The plugin ref (the entry's one non-reserved key).
    pub plugin: String,
    /// The reserved `name:` sibling, if given.
    pub name: Option<String>,
    /// The `enabled:` sibling if stated (`None` = not stated = enabled).
    pub enabled: Option<bool>,
    /// The plugin's config map.
    pub config: Mapping,
    /// Entries nested under this one (owned by it).
    pub components: Vec<Component>,
    /// Document or manifest.
    pub origin: Origin,
    /// True once this entry's manifest has been expanded.
    pub expanded: bool,
    /// Directory its relative paths resolve against, when it is not the world file's own (an
    /// entry inherited through `extends:` keeps resolving from its parent world's folder).
    pub base_dir: Option<PathBuf>,
    /// The parent world file the entry was inherited from through `extends:` (`None`: declared
    /// by the world itself); its errors name that file.
    pub from_world: Option<PathBuf>,
}

impl Component {
    /// The entry's label: its `name:`, else its plugin ref.
    pub fn label(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.plugin)
    }
    /// Whether the entry runs (an unstated `enabled:` means yes).
    pub fn is_enabled(&self) -> bool {
        self.enabled.unwrap_or(true)
    }
    /// A new document entry.
    pub fn new(plugin: &str, name: Option<&str>, config: Mapping) -> Self {
        Component {
            plugin: plugin.to_string(),
            name: name.map(str::to_string),
            enabled: None,
            config,
            components: Vec::new(),
            origin: Origin::Document,
            expanded: false,
            base_dir: None,
            from_world: None,
        }
    }
}

/// Reserved sibling keys of a component entry.
pub const RESERVED: [&str; 3] = ["name", "enabled", "components"];

/// A parsed world document (before overrides, expansion and typing).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorldDoc {
    /// The raw `sim:` mapping (typed later, after overrides).
    pub sim: Mapping,
    /// Top-level components, in execution order.
    pub components: Vec<Component>,
    /// `extends:`: the parent world (a path relative to this file, or `<package>:<world>`).
    pub extends: Option<String>,
    /// `disable:`: inherited components to drop, by label or config `name`.
    pub disable: Vec<String>,
    /// The world files this document was composed from, parent first (filled by composition).
    pub chain: Vec<PathBuf>,
    /// Each parent world's own `sim:` block with its file, nearest parent first (filled by
    /// composition): an error in a merged `sim:` key names the file that set it.
    pub sim_sources: Vec<(PathBuf, Mapping)>,
    /// Each parent world's file and text as read, nearest parent first (filled by composition;
    /// a recording keeps them).
    pub parents: Vec<crate::world::compose::ParentText>,
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

/// Key of a mapping entry as a string, if it is one.
pub fn key_str(k: &Value) -> Option<&str> {
    k.as_str()
}

impl WorldDoc {
    /// Parse a document value. Every problem is collected into `errors`.
    pub fn parse(root: &Value, errors: &mut ConfigErrors) -> WorldDoc {
        let mut doc = WorldDoc::default();
        let map = match root {
            Value::Mapping(m) => m,
            Value::Null => {
                errors.push("", "the world document is empty; it needs at least `components:`");
                return doc;
            }
            other => {
                errors.push("", format!("the world document must be a mapping with `sim:` and `components:`, got {}", type_name(other)));
                return doc;
            }
        };
        for (k, v) in map {
            match key_str(k) {
                Some("sim") => match v {
                    Value::Mapping(m) => doc.sim = m.clone(),
                    Value::Null => {}
                    other => {
                        errors.push("sim", format!("must be a mapping, got {}", type_name(other)))
                    }
                },
                Some("components") => doc.components = parse_list(v, "components", errors),
                Some("extends") => match v {
                    Value::String(s) if !s.trim().is_empty() => doc.extends = Some(s.clone()),
                    Value::String(_) => errors.push(
                        "extends",
                        "is empty: name one parent world, a path relative to this file or `<package>:<world>` \
                         (or remove `extends:`)",
                    ),
                    other => errors.push(
                        "extends",
                        format!(
                            "must name one parent world: a path relative to this file or `<package>:<world>`, got {}",
                            type_name(other)
                        ),
                    ),
                },
                Some("disable") => match v {
                    Value::Sequence(items) if items.len() > MAX_COMPONENTS => errors.push(
                        "disable",
                        format!(
                            "lists {} entries; a world may disable at most {MAX_COMPONENTS} (as many as it may hold)",
                            items.len()
                        ),
                    ),
                    Value::Sequence(items) => {
                        for (i, it) in items.iter().enumerate() {
                            match it {
                                Value::String(s) if !s.trim().is_empty() => doc.disable.push(s.clone()),
                                Value::String(_) => errors.push(
                                    format!("disable[{i}]"),
                                    "is empty: name an inherited component by its label (its `name:`, else its plugin)",
                                ),
                                other => errors.push(
                                    format!("disable[{i}]"),
                                    format!(
                                        "must be the name of an inherited component, got {}",
                                        type_name(other)
                                    ),
                                ),
                            }
                        }
                    }
                    Value::String(s) => errors.push(
                        "disable",
                        format!("must be a list of names: write `disable: [{s}]`"),
                    ),
                    other => errors.push(
                        "disable",
                        format!("must be a list of inherited component names, got {}", type_name(other)),
                    ),
                },
                Some("plugins") => errors.push(
                    "plugins",
                    "unknown top-level key; the plugin list is spelled `components:`",
                ),
                Some(other) => errors.push(
                    other,
                    "unknown top-level key; a world has `sim:`, `components:`, `extends:` and `disable:`",
                ),
                None => {
                    errors.push("", format!("top-level keys must be strings, got {}", type_name(k)))
                }
            }
        }
        doc
    }
}

/// Most entries one `components:` list may hold: ten robots with their sensors are ~100; the cap
/// bounds a refusal's cost (each entry is checked and may be matched against every plugin name).
pub const MAX_COMPONENTS: usize = 2_000;

/// Parse a `components:` list found at `path`.
pub fn parse_list(v: &Value, path: &str, errors: &mut ConfigErrors) -> Vec<Component> {
    let seq = match v {
        Value::Sequence(s) => s,
        Value::Null => return Vec::new(),
        other => {
            errors.push(
                path,
                format!(
                    "must be a list of entries (`- plugin: {{...}}`), got {}",
                    type_name(other)
                ),
            );
            return Vec::new();
        }
    };
    if seq.len() > MAX_COMPONENTS {
        errors.push(
            path,
            format!(
                "has {} entries; a components list may hold at most {MAX_COMPONENTS} (ten robots with \
                 their sensors are about 100): trim the generated list",
                seq.len()
            ),
        );
        return Vec::new();
    }
    let mut out: Vec<Component> = Vec::new();
    // label -> index in `out`: the duplicate check stays linear in the list's length.
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (i, item) in seq.iter().enumerate() {
        let item_path = format!("{path}[{i}]");
        if let Some(c) = parse_entry(item, &item_path, path, errors) {
            if let Some(prev) = seen.get(c.label()).map(|&k| &out[k]) {
                errors.push(
                    format!("{path}.{}", c.label()),
                    format!(
                        "two entries labelled `{}` ({} and {}); give one a distinct `name:` sibling",
                        c.label(),
                        prev.plugin,
                        c.plugin
                    ),
                );
                continue;
            }
            seen.insert(c.label().to_string(), out.len());
            out.push(c);
        }
    }
    out
}

fn parse_entry(
    item: &Value,
    item_path: &str,
    list_path: &str,
    errors: &mut ConfigErrors,
) -> Option<Component> {
    let m = match item {
        Value::Mapping(m) => m,
        Value::String(s) => {
            errors.push(item_path, format!("entry `{s}` must be a mapping: write `- {s}: {{}}`"));
            return None;
        }
        other => {
            errors.push(
                item_path,
                format!("entry must be a mapping with one plugin ref, got {}", type_name(other)),
            );
            return None;
        }
    };
    let mut refs: Vec<(&str, &Value)> = Vec::new();
    let mut name = None;
    let mut enabled = None;
    let mut nested: Option<&Value> = None;
    let n_errors = errors.len();
    for (k, v) in m {
        let Some(key) = key_str(k) else {
            errors.push(item_path, format!("keys must be strings, got {}", type_name(k)));
            continue;
        };
        match key {
            "name" => match v {
                Value::String(s) if !s.is_empty() && !s.contains('.') => name = Some(s.clone()),
                Value::String(s) if s.contains('.') => errors.push(
                    format!("{item_path}.name"),
                    format!("`{s}` contains a dot; dots separate address segments, choose a name without one"),
                ),
                Value::String(_) => errors.push(format!("{item_path}.name"), "must not be empty: omit `name:` to use the plugin ref"),
                other => errors.push(format!("{item_path}.name"), format!("must be a non-empty string, got {}", type_name(other))),
            },
            "enabled" => match v {
                Value::Bool(b) => enabled = Some(*b),
                other => errors.push(format!("{item_path}.enabled"), format!("must be true or false, got {}", type_name(other))),
            },
            "components" => nested = Some(v),
            _ => refs.push((key, v)),
        }
    }
    let (plugin, cfg_v) = match refs.len() {
        1 => refs[0],
        0 => {
            errors.push(item_path, "entry has no plugin ref: write `- <plugin>: {<config>}`");
            return None;
        }
        _ => {
            let names: Vec<&str> = refs.iter().map(|r| r.0).collect();
            let known: Vec<&str> =
                names.iter().copied().filter(|n| crate::plugins::lookup(n).is_some()).collect();
            if known.len() == 1 {
                // One plugin and stray keys beside it: those are mistaken entry keys, not plugins.
                for stray in names.iter().filter(|n| **n != known[0]) {
                    let hint = if matches!(*stray, "label" | "id" | "alias" | "title") {
                        " (an entry is named with `name:`)"
                    } else {
                        ""
                    };
                    errors.push(
                        format!("{item_path}.{stray}"),
                        format!(
                            "`{stray}` beside the plugin `{}` is not an entry key: an entry takes `name:`, `enabled:` and `components:` beside its plugin, and the plugin's settings go inside its mapping{hint}",
                            known[0]
                        ),
                    );
                }
                return None;
            }
            errors.push(
                item_path,
                format!(
                    "entry has {} plugin refs ({}); each entry holds exactly one: split it into {} entries",
                    names.len(),
                    names.join(", "),
                    names.len()
                ),
            );
            return None;
        }
    };
    let label = name.clone().unwrap_or_else(|| plugin.to_string());
    let addr_path = format!("{list_path}.{label}");
    let config = match cfg_v {
        Value::Mapping(c) => c.clone(),
        Value::Null => Mapping::new(),
        other => {
            errors.push(
                &addr_path,
                format!("the config of `{plugin}` must be a mapping, got {}", type_name(other)),
            );
            Mapping::new()
        }
    };
    for reserved in ["name", "components"] {
        if let Some(v) = config.get(reserved) {
            let shown = match v {
                Value::String(s) => s.clone(),
                _ => "...".into(),
            };
            errors.push(
                format!("{addr_path}.{reserved}"),
                format!(
                    "`{reserved}:` inside the config map of `{plugin}` is not read by any plugin; write it as a \
                     sibling of the plugin ref:\n      - {plugin}: {{...}}\n        {reserved}: {shown}"
                ),
            );
        }
    }
    let components = match nested {
        Some(v) => parse_list(v, &format!("{addr_path}.components"), errors),
        None => Vec::new(),
    };
    if errors.len() > n_errors && refs.len() != 1 {
        return None;
    }
    Some(Component {
        plugin: plugin.to_string(),
        name,
        enabled,
        config,
        components,
        origin: Origin::Document,
        expanded: false,
        base_dir: None,
        from_world: None,
    })
}

/// Depth-first (pre-order) walk with addresses: `(address, owner address, component)`.
pub fn walk<'a>(
    list: &'a [Component],
    parent: Option<&str>,
    out: &mut Vec<(String, Option<String>, &'a Component)>,
) {
    for c in list {
        let addr = match parent {
            Some(p) => format!("{p}.{}", c.label()),
            None => c.label().to_string(),
        };
        out.push((addr.clone(), parent.map(str::to_string), c));
        walk(&c.components, Some(&addr), out);
    }
}

/// Every address in the tree, in build order.
pub fn addresses(list: &[Component]) -> Vec<String> {
    let mut v = Vec::new();
    walk(list, None, &mut v);
    v.into_iter().map(|(a, _, _)| a).collect()
}
