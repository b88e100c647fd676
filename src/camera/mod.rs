//! Cameras: what every camera plugin shares (one home, so the plugins import no plugin).
//!
//! - [`config`]: [`CameraConfig`] (every key optional) and the device defaults ([`Device`])
//!   that fill it; [`CameraConfig::resolve`] applies and checks them at load.
//! - [`capture`]: [`Capture`], the configure/post_step core: view and lens resolution, the
//!   endpoints, the two lazy gates, rendering through the shared render service.
//!   Its topics and stamped frames are claimed in `ctx.claims` ([`crate::context::claims`]:
//!   collisions refused at setup, naming both cameras).
//! - [`keys`]: the camera keys shared by every camera-like config, defined once
//!   ([`crate::camera_keys!`]).
//! - [`encode`]: frame → sensor_msgs payloads (rgb8, 32FC1/16UC1 depth, CameraInfo, organised
//!   PointCloud2, JPEG) and the stereo depth error model.
//!
//! A device plugin (`realsense_d435`, ...) is a [`Device`] constant and three lines of glue.

pub mod capture;
pub mod config;
pub mod encode;
pub mod keys;
pub mod labels;

pub use capture::Capture;
pub use config::{CameraConfig, CameraSettings, DepthEncoding, Device};

use serde_norway::Value;

use crate::context::SimContext;
use crate::error::{ConfigError, HookResult};
use crate::plugin::{typed_config, Hooks, Plugin, PluginArgs};

/// A camera plugin: a [`Capture`] with a device's defaults.
pub struct CameraPlugin(pub Capture);

impl Plugin for CameraPlugin {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::POST_STEP
    }
    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        self.0.configure(ctx)
    }
    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        self.0.post_step(ctx)
    }
}

/// Registry constructor for a device: parse, apply `dev`'s defaults, check, build.
pub fn create(
    value: &Value,
    args: &PluginArgs,
    dev: &Device,
) -> Result<Box<dyn Plugin>, Vec<ConfigError>> {
    let cfg: CameraConfig = typed_config(value)?;
    let s = cfg.resolve(dev)?;
    Ok(Box::new(CameraPlugin(Capture::new(s, args))))
}
