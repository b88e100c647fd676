//! What every plugin that places something in the world shares, one concept per file:
//! - [`pose`]: the `pose:` shape ([`PoseConfig`]);
//! - [`props`]: who owns a placed thing's pose ([`Motion`]), contact friction ([`Friction`]),
//!   colours ([`check_rgba`]) and floor offsets of rotated primitives;
//! - [`names`]: MJCF prefixes, transport namespaces and TF frame prefixes ([`frame_prefix`],
//!   [`device_prefix`], [`body_name_for`]);
//! - [`model`]: loading a model for attaching ([`load_model`]);
//! - [`mjcf`]: the built-in world definition and attaching a child spec at a pose under a prefix;
//! - [`frames`]: vendor frames ([`FrameSites`]) and their static transforms read from the compiled
//!   model ([`static_transform`], [`StaticTfPublisher`]);
//! - [`latched`]: a spawned entity's static transforms and `robot_description`, announced on
//!   every reset and again on the first step;
//! - [`placeholders`]: `{frame_id}`-style placeholders in manifest component configs;
//! - [`import`]: third-party model files as plain MuJoCo compiles them (top-level bodies,
//!   keyframes, asset names, `<option>` differences; see docs/models.md);
//! - [`urdf`]: URDF in (`.urdf`, `package://`, `.urdf.xacro` models compiled by MuJoCo's URDF
//!   reader with the URDF's link and joint names kept, mesh paths resolved; see docs/models.md);
//! - [`actuators`]: the `actuators:` block (stating a model's control law and gains) and gravity
//!   compensation;
//! - [`primitive`]: the builder of one-body primitive props (box, cylinder; static, driven or
//!   physics) and the checks their configs share;
//! - [`population`]: a population of primitive props (`boxes`, `cylinders`): `instances:` parsed
//!   with per-instance paths, and the plugin building them.
//!
//! The items of `pose`, `props`, `names`, `model`, `frames` and `placeholders` are re-exported
//! here, so a spawn plugin imports `crate::spawn::{PoseConfig, Motion, load_model, ..}`.
//!
//! Conventions: positions in metres, angles in radians, quaternions `[w, x, y, z]` (MuJoCo order)
//! unless a payload says otherwise (payload quaternions are ROS `[x, y, z, w]`).

pub mod actuators;
pub mod frames;
pub mod import;
pub mod latched;
pub mod mjcf;
pub mod model;
pub mod names;
pub mod placeholders;
pub mod population;
pub mod pose;
pub mod primitive;
pub mod props;
pub mod urdf;

pub use frames::*;
pub use model::*;
pub use names::*;
pub use placeholders::*;
pub use pose::*;
pub use props::*;
