//! The plugin API: six lifecycle hooks, a declared set of implemented hooks, and the descriptor
//! the registry (`crate::plugins::registry`) maps a short name (`diff_drive`) to: constructor,
//! config schema and flags.
//!
//! A plugin's config is a typed serde struct with `deny_unknown_fields`; the registry turns a
//! YAML mapping into it with [`typed_config`], which names the key path of every problem.

use std::path::{Path, PathBuf};

use mujoco_rs::prelude::MjSpec;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_norway::{Mapping, Value};

use crate::context::SimContext;
use crate::error::{ConfigError, HookResult};

/// Bit set of the hooks a plugin implements. Only these are called and timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hooks(pub u8);

impl Hooks {
    /// `build(spec, ctx)`: once, before compile; edits the MjSpec only.
    pub const BUILD: Hooks = Hooks(1);
    /// `configure(ctx)`: once, after compile; resolves ids, registers entities and endpoints.
    pub const CONFIGURE: Hooks = Hooks(2);
    /// `on_reset(ctx)`: every reset, after `mj_resetData` + `mj_forward`.
    pub const ON_RESET: Hooks = Hooks(4);
    /// `pre_step(ctx)`: each tick before `mj_step`; the only place to write actuation.
    pub const PRE_STEP: Hooks = Hooks(8);
    /// `post_step(ctx)`: each tick after `mj_step`; read, publish, record.
    pub const POST_STEP: Hooks = Hooks(16);
    /// `shutdown(ctx)`: once at teardown, in reverse order.
    pub const SHUTDOWN: Hooks = Hooks(32);
    /// Every hook.
    pub const ALL: Hooks = Hooks(63);

    /// True when all of `other` is in `self`.
    pub const fn contains(self, other: Hooks) -> bool {
        self.0 & other.0 == other.0
    }
    /// Hook names in lifecycle order, for timing tables.
    pub const NAMES: [&'static str; 6] =
        ["build", "configure", "on_reset", "pre_step", "post_step", "shutdown"];
}

impl std::ops::BitOr for Hooks {
    type Output = Hooks;
    fn bitor(self, rhs: Hooks) -> Hooks {
        Hooks(self.0 | rhs.0)
    }
}

/// Context of the build phase: the compiled model does not exist yet.
pub struct BuildContext<'a> {
    /// The simulation context (no model/data yet: `ctx.has_data()` is false).
    pub ctx: &'a mut SimContext,
    /// Physics timestep the world will run at (s).
    pub timestep: f64,
}

/// A simulation plugin. Implement the hooks you need and declare them in [`Plugin::hooks`];
/// the engine calls only those. Hooks return `Err(message)` to fail; the engine names the plugin
/// and the hook.
pub trait Plugin {
    /// The hooks this plugin implements.
    fn hooks(&self) -> Hooks;
    /// Once, before compile: add bodies, geoms, sensors, actuators to `spec`.
    fn build(&mut self, _spec: &mut MjSpec, _b: &mut BuildContext) -> HookResult {
        Ok(())
    }
    /// Once, after compile: resolve ids, register entities and endpoints.
    fn configure(&mut self, _ctx: &mut SimContext) -> HookResult {
        Ok(())
    }
    /// After every `mj_resetData` (+ `mj_forward`).
    fn on_reset(&mut self, _ctx: &mut SimContext) -> HookResult {
        Ok(())
    }
    /// Each tick, before `mj_step`: write `ctrl`, applied forces.
    fn pre_step(&mut self, _ctx: &mut SimContext) -> HookResult {
        Ok(())
    }
    /// Each tick, after `mj_step`: read state, publish.
    fn post_step(&mut self, _ctx: &mut SimContext) -> HookResult {
        Ok(())
    }
    /// Once at teardown (reverse order); a failure is logged and the others still run.
    fn shutdown(&mut self, _ctx: &mut SimContext) -> HookResult {
        Ok(())
    }
}

/// What a plugin is told about its place in the world when it is constructed.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginArgs {
    /// Its label: the entry's `name:`, else the plugin ref.
    pub label: String,
    /// Its full address (`robot.rplidar.lidar`): the labels from the top of the document.
    pub address: String,
    /// Address of the entry it is nested under (the entity it belongs to), if any.
    pub owner: Option<String>,
    /// Plugin ref of that entry (`spawn_robot`, `box`, ...), if any: what kind of entity it is.
    pub owner_plugin: Option<String>,
    /// Directory of the world file (relative paths in configs resolve against it).
    pub base_dir: PathBuf,
}

/// Result of a spawn plugin's manifest expansion.
#[derive(Debug, Clone, Default)]
pub struct Expansion {
    /// The resolved model file (used for cycle detection: a chain reaching one file twice is refused).
    pub model_path: PathBuf,
    /// Components the model's manifest contributes, as parsed entries.
    pub components: Vec<crate::world::document::Component>,
}

/// Arguments of an `expand` call.
pub struct ExpandArgs<'a> {
    /// The component being expanded (its config after overrides and merges).
    pub config: &'a Mapping,
    /// Its address.
    pub address: &'a str,
    /// Directory of the world file.
    pub base_dir: &'a Path,
    /// Config of the entry this one is nested under, if any (a carrier's prefix and namespace).
    pub carrier: Option<&'a Mapping>,
}

/// Plugin traits the registry records; the loader and the engine act on each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PluginFlags {
    /// Builds its own ground + light: the engine then skips the world definition.
    pub provides_world: bool,
    /// Builds no geometry and holds no state (a bridge): dropped by `--no-communication`.
    pub transport_only: bool,
    /// Reads the entity it is nested under: at the top of a document it is refused at load
    /// ([`PluginDescriptor::instantiate`]) with a message saying where it goes.
    pub requires_owner: bool,
}

/// Constructor signature: typed config from a YAML value, or every problem found (paths relative
/// to the config root, e.g. `odom_noise.linear_stddev`).
pub type CreateFn = fn(&Value, &PluginArgs) -> Result<Box<dyn Plugin>, Vec<ConfigError>>;
/// Expansion signature (spawn plugins).
pub type ExpandFn = fn(&ExpandArgs) -> Result<Option<Expansion>, String>;

/// A registered plugin: short name, summary, flags, schema and constructor.
pub struct PluginDescriptor {
    /// Short name used as the plugin ref in a world (`diff_drive`).
    pub name: &'static str,
    /// One-line summary for `roqsim plugins list`.
    pub summary: &'static str,
    /// Class-level traits.
    pub flags: PluginFlags,
    /// Config keys `expand` reads: a late override of one is refused.
    pub expansion_keys: &'static [&'static str],
    /// JSON schema of the config struct (`roqsim plugins describe`).
    pub schema: fn() -> schemars::Schema,
    /// Constructor.
    pub create: CreateFn,
    /// Manifest expansion, for spawn plugins.
    pub expand: Option<ExpandFn>,
}

impl PluginDescriptor {
    /// Mark it `requires_owner` (see [`PluginFlags::requires_owner`]).
    pub fn requires_owner(mut self) -> Self {
        self.flags.requires_owner = true;
        self
    }
    /// Mark it `provides_world` (see [`PluginFlags::provides_world`]).
    pub fn provides_world(mut self) -> Self {
        self.flags.provides_world = true;
        self
    }
    /// Mark it `transport_only` (see [`PluginFlags::transport_only`]).
    pub fn transport_only(mut self) -> Self {
        self.flags.transport_only = true;
        self
    }
    /// Give it a manifest expansion (spawn plugins) and the config keys that expansion reads.
    pub fn expands(mut self, keys: &'static [&'static str], expand: ExpandFn) -> Self {
        self.expansion_keys = keys;
        self.expand = Some(expand);
        self
    }
    /// Construct the plugin for one world entry: the flags' load-time refusals first, then the
    /// plugin's own constructor (typed config, validation).
    pub fn instantiate(
        &self,
        config: &Value,
        args: &PluginArgs,
    ) -> Result<Box<dyn Plugin>, Vec<ConfigError>> {
        if self.flags.requires_owner && args.owner.is_none() {
            return Err(vec![requires_owner_refusal(self.name)]);
        }
        (self.create)(config, args)
    }
}

/// The load-time `requires_owner` refusal: `plugin` reads the entity it is nested under, so at the
/// top of a document (no owner) it is refused with a message saying where it goes.
pub fn requires_owner_refusal(plugin: &str) -> ConfigError {
    ConfigError::new(
        "",
        format!(
            "`{plugin}` belongs to a robot and must be nested under it (requires_owner): move this entry into the \
             `components:` of the spawn entry of the robot it serves, e.g. `- spawn_robot: {{model: turtlebot4}}` / \
             `  name: robot` / `  components: [{{{plugin}: {{...}}}}]`; ownership is position, there is no key naming the robot"
        ),
    )
}

impl std::fmt::Debug for PluginDescriptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginDescriptor").field("name", &self.name).finish()
    }
}

/// Deserialize a plugin config, naming the key path of a bad key or type. `null` reads as `{}`.
pub fn typed_config<C: DeserializeOwned>(value: &Value) -> Result<C, Vec<ConfigError>> {
    let owned;
    let v = if value.is_null() {
        owned = Value::Mapping(Mapping::new());
        &owned
    } else {
        value
    };
    let to_err = |e: serde_path_to_error::Error<serde_norway::Error>| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        ConfigError::new(path, crate::error::plain_serde(&e.into_inner().to_string()))
    };
    let first = match serde_path_to_error::deserialize::<_, C>(v.clone()) {
        Ok(c) => return Ok(c),
        Err(e) => to_err(e),
    };
    // serde stops at the first problem; report every key's problem at once by checking each
    // key on its own, and each key of a block (`recovery: {..}`) on its own inside it (a lone key
    // cannot tell whether others are missing, so those are skipped).
    let mut errs = Vec::new();
    // true when `e` is a problem of its own (not a field the lone key leaves missing)
    let mut push = |e: serde_path_to_error::Error<serde_norway::Error>| {
        let e = to_err(e);
        let real = !e.message.starts_with("missing field");
        if real && !errs.contains(&e) {
            errs.push(e);
        }
        real
    };
    if let Value::Mapping(m) = v {
        for (k, val) in m {
            let lone = |val: Value| {
                let mut single = Mapping::new();
                single.insert(k.clone(), val);
                serde_path_to_error::deserialize::<_, C>(Value::Mapping(single))
            };
            let Err(e) = lone(val.clone()) else { continue };
            match val {
                Value::Mapping(block) if block.len() > 1 => {
                    let mut found = false;
                    for (sk, sv) in block {
                        let mut inner = Mapping::new();
                        inner.insert(sk.clone(), sv.clone());
                        if let Err(e) = lone(Value::Mapping(inner)) {
                            found |= push(e);
                        }
                    }
                    if !found {
                        push(e);
                    }
                }
                _ => {
                    push(e);
                }
            }
        }
    }
    if !errs.contains(&first) && (errs.is_empty() || first.message.starts_with("missing field")) {
        errs.insert(0, first);
    }
    Err(errs)
}

/// [`typed_config`], then [`ValidateConfig::validate`]. When some keys do not deserialize, the rest
/// are still validated (the failing keys dropped, so they take their defaults), so one refusal
/// lists every problem — a wrong type in one key of a block and a bad value in another; a
/// validation finding on a dropped key is left out (that key's own error stands).
pub fn typed_validated<C: DeserializeOwned + ValidateConfig>(
    value: &Value,
) -> Result<C, Vec<ConfigError>> {
    match typed_validated_partial::<C>(value) {
        (Some(c), e) if e.is_empty() => Ok(c),
        (_, e) => Err(e),
    }
}

/// [`typed_validated`] that also hands back the config it validated: every problem, and the
/// config with each key that did not deserialize dropped (taking its default), or `None` when
/// even that does not deserialize. For a plugin that checks keys against each other after
/// validation, so a wrong type in one key does not hide those refusals.
pub fn typed_validated_partial<C: DeserializeOwned + ValidateConfig>(
    value: &Value,
) -> (Option<C>, Vec<ConfigError>) {
    let mut errs = match typed_config::<C>(value) {
        Ok(c) => {
            let e = c.validate();
            return (Some(c), e);
        }
        Err(e) => crate::key_ranges::key_ranges::<C>(value, e),
    };
    let mut pruned = value.clone();
    for e in &errs {
        remove_key_path(&mut pruned, &e.path);
    }
    let cfg = serde_norway::from_value::<C>(pruned).ok();
    if let Some(c) = &cfg {
        let dropped: Vec<String> = errs.iter().map(|e| e.path.clone()).collect();
        for e in c.validate() {
            let under = |d: &String| {
                !d.is_empty()
                    && (e.path == *d
                        || e.path.starts_with(&format!("{d}."))
                        || e.path.starts_with(&format!("{d}[")))
            };
            if !dropped.iter().any(under) && !errs.contains(&e) {
                errs.push(e);
            }
        }
    }
    (cfg, errs)
}

/// Remove the key at dotted `path` (`recovery.max_recovery`; an index `goals[0]` removes the
/// whole list) from a mapping; an empty path removes nothing.
fn remove_key_path(v: &mut Value, path: &str) {
    let mut keys: Vec<&str> = path.split('.').collect();
    if let Some(k) = keys.iter().position(|k| k.contains('[')) {
        keys.truncate(k + 1);
        let last = keys[k];
        keys[k] = &last[..last.find('[').unwrap_or(last.len())];
    }
    let Some((last, parents)) = keys.split_last() else { return };
    if last.is_empty() {
        return;
    }
    let mut cur = v;
    for k in parents {
        match cur {
            Value::Mapping(m) => match m.get_mut(*k) {
                Some(next) => cur = next,
                None => return,
            },
            _ => return,
        }
    }
    if let Value::Mapping(m) = cur {
        m.remove(*last);
    }
}

/// Schema of a config type, for the registry.
pub fn schema_of<C: JsonSchema>() -> schemars::Schema {
    schemars::schema_for!(C)
}

/// Config validation beyond types: return `(subpath, message)` problems.
pub trait ValidateConfig {
    /// Checks values serde cannot (ranges, exclusive keys). Paths are relative to the config root.
    fn validate(&self) -> Vec<ConfigError> {
        Vec::new()
    }
}

/// `#[serde(default = "crate::plugin::yes")]`: a boolean key that defaults to `true`.
pub fn yes() -> bool {
    true
}

/// The check every rate key gets: finite and strictly positive (Hz); `key` names it.
pub fn check_rate(key: &str, hz: f64) -> Option<ConfigError> {
    (!(hz > 0.0 && hz.is_finite()))
        .then(|| ConfigError::new(key, format!("must be > 0 (Hz), got {hz}")))
}

/// The check a rate key gets when the run must hold that rate: finite and at least
/// [`crate::engine::rates::MIN_RATE_HZ`]; `note` follows the bound in the message.
pub fn check_run_rate(key: &str, hz: f64, note: &str) -> Option<ConfigError> {
    let min = crate::engine::rates::MIN_RATE_HZ;
    (!(hz.is_finite() && hz >= min)).then(|| {
        ConfigError::new(
            key,
            format!("must be a rate of at least {min} Hz{note}, got {}", crate::error::num(hz)),
        )
    })
}

/// Typed-config constructor helper: deserialize, validate, then build the plugin.
pub fn construct<C, P>(
    value: &Value,
    args: &PluginArgs,
    make: impl FnOnce(C, &PluginArgs) -> P,
) -> Result<Box<dyn Plugin>, Vec<ConfigError>>
where
    C: DeserializeOwned + ValidateConfig,
    P: Plugin + 'static,
{
    let cfg: C = typed_validated(value)?;
    Ok(Box::new(make(cfg, args)))
}

/// The one way to declare a plugin's registry entry: its name, summary and config type, and either
/// its plugin type (constructed by `construct` with `<$plugin>::new(cfg, args)`) or, after `;`, a
/// constructor of [`CreateFn`] shape for a plugin that builds itself from the raw value (a
/// population of instances, a check needing the entry's place). Flags and expansion are added with
/// [`PluginDescriptor::requires_owner`], [`PluginDescriptor::provides_world`],
/// [`PluginDescriptor::transport_only`] and [`PluginDescriptor::expands`].
#[macro_export]
macro_rules! plugin_descriptor {
    ($name:expr, $summary:expr, $cfg:ty, $plugin:ty) => {
        $crate::plugin_descriptor!($name, $summary, $cfg; |v, a| {
            $crate::plugin::construct::<$cfg, $plugin>(v, a, <$plugin>::new)
        })
    };
    ($name:expr, $summary:expr, $cfg:ty; $create:expr) => {
        $crate::plugin::PluginDescriptor {
            name: $name,
            summary: $summary,
            flags: $crate::plugin::PluginFlags {
                provides_world: false,
                transport_only: false,
                requires_owner: false,
            },
            expansion_keys: &[],
            schema: $crate::plugin::schema_of::<$cfg>,
            create: $create,
            expand: None,
        }
    };
}

/// Read a whole-number config key as any integer a YAML document can hold (`-2^63 ..= 2^64 - 1`),
/// for `#[serde(default, deserialize_with = "crate::plugin::whole_key")]` on an `Option<i128>`
/// field: a value past the Rust type the key ends up in (`width: 4294967296` for a `u32`, or
/// `-1`) then reaches the key's own range check, which names the key's range — not serde's
/// "expected u32", which would say the type's. Anything but a whole number is refused as one.
pub fn whole_key<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i128>, D::Error> {
    struct Whole;
    impl serde::de::Visitor<'_> for Whole {
        type Value = Option<i128>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a whole number")
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok(Some(i128::from(v)))
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok(Some(i128::from(v)))
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    }
    d.deserialize_any(Whole)
}
