//! Seeing the simulation (docs/view.md): the camera vocabulary shared by the `--view` window and
//! `roqsim render` (`camera`), the window itself (`window`, cargo feature `viewer`), and what
//! `roqsim render` paints on its frames (`overlays`).

pub mod camera;
pub mod overlays;
#[cfg(feature = "viewer")]
pub mod window;
