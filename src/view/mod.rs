//! Seeing the simulation (docs/view.md): the camera vocabulary shared by the `--view` window and
//! `roqsim render` (`camera`, `mouse`), the window itself (`window`: roqsim's own `scene_window`
//! or MuJoCo's viewer `mj_viewer` for `--left-ui`; cargo feature `viewer`), and what
//! `roqsim render` paints on its frames (`overlays`), and its stills and videos (`shot`, through
//! the shared render service).

pub mod camera;
#[cfg(feature = "viewer")]
mod mj_viewer;
pub mod mouse;
pub mod overlays;
#[cfg(feature = "viewer")]
mod scene_window;
pub mod shot;
#[cfg(feature = "viewer")]
pub mod window;
