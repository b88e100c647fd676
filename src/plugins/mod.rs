//! The built-in plugin registry: short name → descriptor (constructor, schema, flags).

pub mod assets;
pub mod dummy;
pub mod external;
pub mod faults;
pub mod manipulation;
pub mod mobile;
pub mod nav;
pub mod observe;
pub mod scene;
pub mod sensors;
pub mod shared;

use crate::plugin::PluginDescriptor;

static REGISTRY: std::sync::OnceLock<Vec<PluginDescriptor>> = std::sync::OnceLock::new();

/// Every registered plugin: the built-in ones in catalogue order (each family's list, its
/// `descriptors()`, then the transport's, `crate::ros::descriptors`, present with the `ros`
/// feature), then those registered from outside the tree ([`external::register_external`]).
pub fn registry() -> &'static [PluginDescriptor] {
    REGISTRY.get_or_init(|| {
        let mut v = builtin();
        v.extend(external::take());
        v
    })
}

fn registry_initialized() -> bool {
    REGISTRY.get().is_some()
}

/// Where a registered plugin comes from: `roqsim` for the built-in ones, else the crate that
/// registered it.
pub fn provider_of(name: &str) -> &'static str {
    external::provider(name).unwrap_or("roqsim")
}

/// Plugins other roqsim binaries provide, with where each comes from (a world naming one here
/// is told which binary to run).
const PROVIDED_ELSEWHERE: [(&str, &str); 2] = [
    (
        "ros2_bridge",
        "the ROS 2 build of roqsim (cargo build --features ros, or scripts/setup.sh --ros)",
    ),
    (
        "sim_interfaces",
        "the ROS 2 build of roqsim (cargo build --features ros, or scripts/setup.sh --ros)",
    ),
];

/// Edit distance (Levenshtein) between two short names.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push((prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Registered names close to `name` (edit distance ≤ 3, or one containing the other), nearest first.
pub fn close_names(name: &str) -> Vec<&'static str> {
    let mut v: Vec<(usize, &'static str)> = registry()
        .iter()
        .map(|d| (distance(name, d.name), d.name))
        .filter(|(dist, n)| *dist <= 3 || n.contains(name) || (name.len() > 3 && name.contains(*n)))
        .collect();
    v.sort();
    v.into_iter().map(|(_, n)| n).collect()
}

/// The refusal for a plugin ref this binary does not register: who provides it, if known, and
/// the close names.
pub fn unknown_plugin_message(name: &str) -> String {
    let mut msg = format!("unknown plugin `{name}`");
    if let Some((_, who)) = PROVIDED_ELSEWHERE.iter().find(|(n, _)| *n == name) {
        msg += &format!(": it is provided by {who}, not by this binary");
    } else if name.contains("::") || name.contains(':') {
        msg += ": plugins from another crate are registered by that crate's binary (roqsim::cli::main_with), not named by path";
    }
    let close = close_names(name);
    if !close.is_empty() {
        msg += &format!("; close names: {}", close.join(", "));
    }
    msg + "; `roqsim plugins list` shows the registered ones"
}

/// The built-in plugins, in catalogue order.
fn builtin() -> Vec<PluginDescriptor> {
    let families = [
        vec![dummy::descriptor()],
        mobile::descriptors(),
        sensors::descriptors(),
        scene::descriptors(),
        manipulation::descriptors(),
        observe::descriptors(),
        faults::descriptors(),
        assets::descriptors(),
        nav::descriptors(),
        crate::ros::descriptors(),
    ];
    let all: Vec<PluginDescriptor> = families.into_iter().flatten().collect();
    for (i, d) in all.iter().enumerate() {
        assert!(
            all[..i].iter().all(|o| o.name != d.name),
            "two plugins registered as `{}`",
            d.name
        );
    }
    all
}

/// Look up a plugin by its short name.
pub fn lookup(name: &str) -> Option<&'static PluginDescriptor> {
    registry().iter().find(|d| d.name == name)
}

/// Human-readable description of a plugin's config (keys, types, defaults, docs with units),
/// generated from the config struct's schema.
pub fn describe(d: &PluginDescriptor) -> String {
    let schema = (d.schema)();
    let v = schema.as_value();
    let mut out = format!("{} — {}\n", d.name, d.summary);
    let flags = d.flags;
    let fl: Vec<&str> = [
        (flags.provides_world, "provides_world"),
        (flags.transport_only, "transport_only"),
        (flags.requires_owner, "requires_owner"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    if !fl.is_empty() {
        out += &format!("flags: {}\n", fl.join(", "));
    }
    out += "config keys:\n";
    let defs = v.get("$defs").cloned().unwrap_or_default();
    describe_props(v, &defs, "  ", &mut out);
    out
}

fn type_of(p: &serde_json::Value, defs: &serde_json::Value) -> String {
    if let Some(r) = p.get("$ref").and_then(|r| r.as_str()) {
        let name = r.rsplit('/').next().unwrap_or(r);
        if let Some(d) = defs.get(name) {
            if let Some(e) = d.get("enum") {
                return e
                    .as_array()
                    .map(|a| a.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join(" | "))
                    .unwrap_or_default();
            }
            if let Some(one) = d.get("oneOf").or(d.get("anyOf")) {
                return one
                    .as_array()
                    .map(|a| a.iter().map(|x| type_of(x, defs)).collect::<Vec<_>>().join(" | "))
                    .unwrap_or_default();
            }
        }
        return name.to_string();
    }
    if let Some(e) = p.get("enum") {
        return e
            .as_array()
            .map(|a| a.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" | "))
            .unwrap_or_default();
    }
    if let Some(one) = p.get("anyOf").or(p.get("oneOf")) {
        let parts: Vec<String> = one
            .as_array()
            .map(|a| a.iter().map(|x| type_of(x, defs)).filter(|t| t != "null").collect())
            .unwrap_or_default();
        return parts.join(" | ");
    }
    match p.get("type") {
        Some(serde_json::Value::String(t)) if t == "array" => {
            let item = p.get("items").map(|i| type_of(i, defs)).unwrap_or_else(|| "any".into());
            match (p.get("minItems"), p.get("maxItems")) {
                (Some(a), Some(b)) if a == b => format!("[{item}; {a}]"),
                _ => format!("list of {item}"),
            }
        }
        Some(serde_json::Value::String(t)) => t.clone(),
        Some(serde_json::Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str())
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join(" | "),
        _ => "any".into(),
    }
}

fn describe_props(v: &serde_json::Value, defs: &serde_json::Value, indent: &str, out: &mut String) {
    let Some(props) = v.get("properties").and_then(|p| p.as_object()) else {
        out.push_str(&format!("{indent}(none)\n"));
        return;
    };
    let required: Vec<&str> = v
        .get("required")
        .and_then(|r| r.as_array())
        .map(|a| a.iter().filter_map(|x| x.as_str()).collect())
        .unwrap_or_default();
    for (k, p) in props {
        let ty = type_of(p, defs);
        let default = p.get("default").map(|d| format!(" = {d}")).unwrap_or_default();
        let req = if required.contains(&k.as_str()) && p.get("default").is_none() {
            " (required)"
        } else {
            ""
        };
        out.push_str(&format!("{indent}{k}: {ty}{default}{req}\n"));
        if let Some(desc) = p.get("description").and_then(|d| d.as_str()) {
            for line in desc.lines() {
                out.push_str(&format!("{indent}    {line}\n"));
            }
        }
        // nested struct
        if let Some(r) = p.get("$ref").and_then(|r| r.as_str()) {
            let name = r.rsplit('/').next().unwrap_or(r);
            if let Some(d) = defs.get(name) {
                if d.get("properties").is_some() {
                    describe_props(d, defs, &format!("{indent}    "), out);
                }
            }
        }
    }
}
