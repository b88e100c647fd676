//! A population plugin's shared parts (`boxes`, `cylinders`): the `instances:` list parsed into
//! typed configs with every problem named by its path (`instances[2].size`), and the plugin that
//! builds the resolved props. A `present:` beside `instances:` is forwarded to every instance that
//! states none (an instance's own `present:` wins).

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_norway::Value;

use crate::error::{ConfigError, HookResult};
use crate::plugin::{typed_config, BuildContext, Hooks, Plugin, ValidateConfig};
use crate::spawn::primitive::{build_primitive, PrimitiveSpec};

/// Config of a population plugin (`boxes`, `cylinders`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PopulationConfig {
    /// The instances: each a mapping with every key of the single-prop plugin, plus an optional
    /// `name:` for its entity (default `<address>_<i>`). REQUIRED, at least one.
    #[schemars(with = "Vec<serde_json::Value>")]
    pub instances: Vec<Value>,
    /// false: every instance is compiled in but absent until spawned (true: all present). An
    /// instance's own `present:` wins over this. Default: each instance's own (true).
    #[serde(default)]
    pub present: Option<bool>,
}

/// Parse `instances:` into typed configs, every problem named by its path
/// (`instances[2].size`). Returns `(entity name, config)` pairs.
pub fn parse_instances<C: DeserializeOwned + ValidateConfig>(
    value: &Value,
    address: &str,
) -> Result<Vec<(String, C)>, Vec<ConfigError>> {
    let pop: PopulationConfig = typed_config(value)?;
    if pop.instances.is_empty() {
        return Err(vec![ConfigError::new("instances", "is empty; list at least one instance")]);
    }
    let mut out = Vec::new();
    let mut errs = Vec::new();
    for (i, inst) in pop.instances.iter().enumerate() {
        let at = format!("instances[{i}]");
        let Value::Mapping(m) = inst else {
            errs.push(ConfigError::new(
                &at,
                "each instance is a mapping of the single prop's keys",
            ));
            continue;
        };
        let mut m = m.clone();
        if let Some(p) = pop.present {
            // The population's `present:` is each instance's default; its own wins.
            m.entry(Value::from("present")).or_insert(Value::Bool(p));
        }
        let name = match m.remove("name") {
            None => format!("{address}_{i}"),
            Some(Value::String(s)) if !s.is_empty() && !s.contains('.') => s,
            Some(other) => {
                errs.push(ConfigError::new(
                    format!("{at}.name"),
                    format!("must be a non-empty string without dots, got {other:?}"),
                ));
                continue;
            }
        };
        if out.iter().any(|(n, _): &(String, C)| *n == name) {
            errs.push(ConfigError::new(
                format!("{at}.name"),
                format!("`{name}` names two instances; names must be distinct"),
            ));
            continue;
        }
        match crate::key_ranges::typed_valid::<C>(&Value::Mapping(m)) {
            Ok(c) => out.push((name, c)),
            Err(es) => {
                errs.extend(es.into_iter().map(|e| ConfigError::new(join(&at, &e.path), e.message)))
            }
        }
    }
    if errs.is_empty() {
        Ok(out)
    } else {
        Err(errs)
    }
}

fn join(at: &str, path: &str) -> String {
    if path.is_empty() {
        at.to_string()
    } else {
        format!("{at}.{path}")
    }
}

/// A plugin building a list of primitive props.
pub struct Population {
    props: Vec<PrimitiveSpec>,
}

impl Population {
    /// A population of already-resolved props.
    pub fn from_specs(props: Vec<PrimitiveSpec>) -> Self {
        Population { props }
    }
}

impl Plugin for Population {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD
    }
    fn build(&mut self, spec: &mut MjSpec, b: &mut BuildContext) -> HookResult {
        for p in &self.props {
            build_primitive(spec, b.ctx, p).map_err(|e| format!("instance `{}`: {e}", p.entity))?;
        }
        Ok(())
    }
}
