//! roqsim: a plugin-driven MuJoCo simulator for mobile robots, arms, mobile manipulators and
//! conveyors. This library is the ROS-free core: world loading, the engine, the plugin API and
//! the built-in plugins. The ROS 2 node lives behind the `ros` cargo feature.
//!
//! See ARCHITECTURE.md for the tick pipeline, the threads and how to add a plugin.

#![warn(missing_docs)]

pub mod camera;
pub mod campaign;
pub mod cli;
pub mod context;
pub mod engine;
pub mod error;
pub mod export;
pub mod handles;
pub mod input_file;
pub mod introspect;
pub mod key_ranges;
pub mod math;
pub mod mujoco;
pub mod nav;
pub mod plugin;
pub mod plugins;
pub mod record;
pub mod render;
pub mod ros;
pub mod runner;
pub mod spawn;
pub mod view;
pub mod world;

pub use context::SimContext;
pub use engine::{Engine, EngineOptions};
pub use error::{ConfigError, ConfigErrors, SimError};
pub use plugin::{Hooks, Plugin};
pub use world::{load_world, load_world_str, LoadOptions, LoadedWorld};
