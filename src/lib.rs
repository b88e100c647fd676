//! roqsim: a plugin-driven MuJoCo simulator for mobile robots, arms, mobile manipulators and
//! conveyors. This library is the ROS-free core: world loading, the engine, the plugin API and
//! the built-in plugins. The ROS 2 node lives behind the `ros` cargo feature.
//!
//! See ARCHITECTURE.md for the tick pipeline, the threads and how to add a plugin.

pub mod actuators;
pub mod context;
pub mod controllers;
pub mod engine;
pub mod error;
pub mod mjcf;
pub mod plugin;
pub mod plugins;
pub mod presence;
pub mod raycast;
pub mod record;
pub mod render;
pub mod robot;
pub mod ros;
pub mod runner;
pub mod sensor_fault;
pub mod sim_control;
pub mod spawn;
pub mod world;

pub use context::SimContext;
pub use engine::{Engine, EngineOptions};
pub use error::{ConfigError, ConfigErrors, SimError};
pub use plugin::{Hooks, Plugin};
pub use world::{load_world, load_world_str, LoadOptions, LoadedWorld};
