//! Rendering: the one offscreen renderer every camera shares.
//!
//! - [`service`]: [`RenderService`], lazily opened on the physics thread, rendering colour,
//!   depth (metres) and segmentation (geom ids) through a [`View`] at any size.
//! - [`view`]: views, poses, pinhole [`Intrinsics`] (the CameraInfo K/P a frame was rendered
//!   with) and the MuJoCo ↔ REP 103 optical frame conversion.
//! - [`gl`]: the headless EGL context and the backend choice (`MUJOCO_GL`,
//!   `MUJOCO_EGL_DEVICE_ID`), with the one error a machine without GL gets.
//!
//! Use it through the context: `ctx.render(&RenderRequest::new(View::Camera(id), 640, 480))`.

pub mod gl;
pub mod service;
pub mod view;

pub use gl::{Backend, RenderError};
pub use service::{Frame, RenderRequest, RenderService};
pub use view::{Intrinsics, Pose, View};
