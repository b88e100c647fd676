//! Seeing the simulation (docs/view.md): the camera vocabulary shared by the `--view` window and
//! `roqsim render` (`camera`), the window itself (`window`, cargo feature `viewer`), and what
//! `roqsim render` paints on its frames (`overlays`), and its stills and videos (`shot`, through
//! the shared render service).

pub mod camera;
pub mod overlays;
pub mod shot;
#[cfg(feature = "viewer")]
pub mod window;
