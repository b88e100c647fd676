//! Bounds every position, size and speed a world or a request may state: beyond them MuJoCo's
//! state overflows or loses meaning at the first step, so they are refused up front, naming the key
//! (docs/bounds.md lists them with the `sim:` block's own).

/// Farthest position a request may place an entity at (m from the world origin): beyond it f64
/// positions lose sub-millimetre resolution and contacts stop being meaningful.
pub const MAX_POSITION_M: f64 = 1e6;
/// Accepted quaternion norms (a request's orientation is normalised within it): a zero, tiny or
/// overflowing quaternion names no rotation.
pub const QUAT_NORM_RANGE: (f64, f64) = (1e-3, 1e3);
/// Fastest linear velocity a request may set (m/s): faster, one step moves a body through metres
/// of scenery.
pub const MAX_LINEAR_SPEED: f64 = 1e3;
/// Fastest angular velocity a request may set (rad/s).
pub const MAX_ANGULAR_SPEED: f64 = 1e4;

/// Largest extent a primitive's size may state (m): a 10 km box is already a floor; beyond it
/// contact and inertia computations overflow.
pub const MAX_SIZE_M: f64 = 1e4;
/// Heaviest mass a prop may state (kg): a loaded container ship; beyond it the inertia swamps
/// every contact of the world.
pub const MAX_MASS_KG: f64 = 1e9;
/// Fastest a person may walk or run (m/s): the top speed ever measured in a sprint is about
/// 12.4 m/s; a faster "pedestrian" is a vehicle and belongs on a drive.
pub const MAX_PERSON_SPEED: f64 = 12.5;
