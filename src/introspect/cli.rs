//! The introspection verbs of the `roqsim` command line (`scenes`, `catalog`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use crate::cli::stdout::emit_json;
use crate::error::ConfigErrors;
use crate::introspect::{catalog, describe, inputs};
use crate::world::overrides::{load_override_file, parse_set};
use crate::world::LoadOptions;

/// `roqsim scenes ...`
#[derive(Subcommand, Debug, Clone)]
pub enum ScenesCmd {
    /// Every file the world is made of (YAML chain, MJCF, meshes, textures, data files): one JSON line.
    Inputs {
        /// World YAML file, bundled world name, or `<package>:<world>`.
        world: String,
        /// Fail (exit 1, nothing on stdout) naming every part the walk gave up on.
        #[arg(long)]
        require_complete: bool,
    },
    /// What the world provides (plugins, addresses, entities, overridable fields): one JSON line.
    Describe {
        /// World YAML file, bundled world name, or `<package>:<world>`.
        world: String,
        /// Also compile the world and list its entities.
        #[arg(long)]
        entities: bool,
        /// Also compile the world and list the named geoms/bodies/actuators matching GLOB.
        #[arg(long, value_name = "GLOB")]
        overridable: Option<String>,
        /// Apply an override file first (repeatable; composes in order), as `roqsim sim --override`.
        #[arg(long = "override", value_name = "FILE")]
        overrides: Vec<PathBuf>,
        /// Override one value first: `path=value` (repeatable; after the files).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
    },
}

/// `roqsim catalog ...`
#[derive(Subcommand, Debug, Clone)]
pub enum CatalogCmd {
    /// Every installed model: provider, file, headline sentence, licence.
    Models,
    /// One model: actuators with the joint each drives, bodies, sites, sensors, frames, components.
    Model {
        /// Short name, `<package>:<model>`, or a path to an MJCF file.
        name: String,
    },
    /// Every bundled and installed world, with the `<package>:<world>` ref `extends:` takes.
    Worlds,
    /// Every plugin this binary registers, with where it comes from.
    Plugins,
}

fn resolve(world: &str) -> Result<PathBuf, ExitCode> {
    crate::runner::resolve_world(world).map_err(|e| {
        crate::cli::stderr::say!("error: {e}");
        ExitCode::from(2)
    })
}

/// Run a `scenes` verb.
pub fn scenes(cmd: ScenesCmd) -> ExitCode {
    match cmd {
        ScenesCmd::Inputs { world, require_complete } => {
            let path = match resolve(&world) {
                Ok(p) => p,
                Err(c) => return c,
            };
            let i = inputs::world_inputs(&path, &LoadOptions::default());
            if require_complete && !i.gave_up.is_empty() {
                crate::cli::stderr::say!(
                    "error: the inputs of `{}` are incomplete; gave up on:",
                    path.display()
                );
                for g in &i.gave_up {
                    crate::cli::stderr::say!("  - {g}");
                }
                return ExitCode::from(1);
            }
            match emit_json(&inputs::to_json(&i)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(c) => c,
            }
        }
        ScenesCmd::Describe { world, entities, overridable, overrides, set } => {
            let path = match resolve(&world) {
                Ok(p) => p,
                Err(c) => return c,
            };
            if let Some(g) = &overridable {
                if let Err(e) = describe::check_glob(g) {
                    crate::cli::stderr::say!("error: {e}");
                    return ExitCode::from(2);
                }
            }
            let mut assignments = Vec::new();
            let mut errors = ConfigErrors::default();
            for f in &overrides {
                match load_override_file(f) {
                    Ok(a) => assignments.extend(a),
                    Err(e) => errors.0.push(e),
                }
            }
            for s in &set {
                match parse_set(s) {
                    Ok(a) => assignments.push(a),
                    Err(e) => errors.0.push(e),
                }
            }
            if !errors.is_empty() {
                crate::cli::stderr::say_text!("error: {errors}");
                return ExitCode::from(2);
            }
            let opts = describe::DescribeOptions {
                entities,
                overridable,
                load: LoadOptions { assignments, ..Default::default() },
            };
            match describe::describe(&path, &opts) {
                Ok(d) => {
                    for n in &d.notes {
                        crate::cli::stderr::say!("{n}");
                    }
                    if let Err(c) = emit_json(&d.json) {
                        return c;
                    }
                    if d.complete {
                        ExitCode::SUCCESS
                    } else {
                        crate::cli::stderr::say!(
                            "error: the build failed: {}",
                            d.json["errors"]["build"].as_str().unwrap_or("")
                        );
                        ExitCode::from(1)
                    }
                }
                Err(e) => {
                    crate::cli::stderr::say_text!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}

/// Run a `catalog` verb.
pub fn catalog(cmd: CatalogCmd) -> ExitCode {
    let v = match cmd {
        CatalogCmd::Models => {
            let v = catalog::models();
            for m in v["models"].as_array().into_iter().flatten() {
                for e in m["errors"].as_array().into_iter().flatten() {
                    crate::cli::stderr::say!(
                        "warning: model `{}`: {}",
                        m["ref"].as_str().unwrap_or(""),
                        e.as_str().unwrap_or("")
                    );
                }
            }
            v
        }
        CatalogCmd::Model { name } => match catalog::model(&name) {
            Ok(v) => v,
            Err(e) => {
                crate::cli::stderr::say!("error: {e}");
                return ExitCode::from(2);
            }
        },
        CatalogCmd::Worlds => catalog::worlds(),
        CatalogCmd::Plugins => catalog::plugins(),
    };
    match emit_json(&v) {
        Ok(()) => ExitCode::SUCCESS,
        Err(c) => c,
    }
}
