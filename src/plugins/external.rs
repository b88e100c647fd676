//! Plugins from outside the tree: a user's own crate hands its descriptors to
//! [`register_external`] (or to `roqsim::cli::main_with`, which calls it) before anything reads
//! the registry, and its plugins then resolve by short name exactly like the built-in ones.

use std::sync::OnceLock;

use crate::plugin::PluginDescriptor;

/// Plugins registered from outside roqsim, with the crate that provides them.
struct External {
    provider: String,
    descriptors: Vec<PluginDescriptor>,
}

static EXTERNAL: OnceLock<External> = OnceLock::new();

/// Register plugins from another crate (`provider` names it, e.g. `env!("CARGO_PKG_NAME")`).
/// Call once, before the first world is loaded. Refused when called twice, after the registry
/// was first read, or when a name is already taken (by a built-in or by another of `plugins`).
pub fn register_external(provider: &str, plugins: Vec<PluginDescriptor>) -> Result<(), String> {
    if super::registry_initialized() {
        return Err(
            "register_external must be called before the plugin registry is first read (before loading a world)"
                .into(),
        );
    }
    let builtin: Vec<&str> = super::builtin().iter().map(|d| d.name).collect();
    check_names(provider, &builtin, &plugins.iter().map(|d| d.name).collect::<Vec<_>>())?;
    EXTERNAL.set(External { provider: provider.to_string(), descriptors: plugins }).map_err(|_| {
        "register_external was already called; pass every plugin in one call".to_string()
    })
}

/// Refuse a name a built-in already has, or one registered twice.
fn check_names(provider: &str, builtin: &[&str], names: &[&str]) -> Result<(), String> {
    for (i, n) in names.iter().enumerate() {
        if builtin.contains(n) {
            return Err(format!(
                "plugin `{n}` of `{provider}` clashes with roqsim's built-in `{n}`; give it another short name"
            ));
        }
        if names[..i].contains(n) {
            return Err(format!("plugin `{n}` is registered twice by `{provider}`"));
        }
    }
    Ok(())
}

/// Take the registered external descriptors (once, when the registry is built).
pub(super) fn take() -> Vec<PluginDescriptor> {
    EXTERNAL
        .get()
        .map(|e| {
            e.descriptors
                .iter()
                .map(|d| PluginDescriptor {
                    name: d.name,
                    summary: d.summary,
                    flags: d.flags,
                    expansion_keys: d.expansion_keys,
                    schema: d.schema,
                    create: d.create,
                    expand: d.expand,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The crate that provides an external plugin, if `name` is one.
pub fn provider(name: &str) -> Option<&'static str> {
    let e = EXTERNAL.get()?;
    e.descriptors.iter().any(|d| d.name == name).then_some(e.provider.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clashing_and_repeated_names_are_refused() {
        assert_eq!(
            check_names("my_crate", &["lidar", "imu"], &["probe", "lidar"]),
            Err("plugin `lidar` of `my_crate` clashes with roqsim's built-in `lidar`; give it another short name".into())
        );
        assert_eq!(
            check_names("my_crate", &["lidar"], &["probe", "probe"]),
            Err("plugin `probe` is registered twice by `my_crate`".into())
        );
        assert_eq!(check_names("my_crate", &["lidar"], &["probe"]), Ok(()));
    }

    #[test]
    fn registering_after_the_registry_was_read_is_refused() {
        let _ = crate::plugins::registry();
        assert_eq!(
            register_external("late", Vec::new()),
            Err("register_external must be called before the plugin registry is first read (before loading a world)".into())
        );
    }
}
