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
/// Nearest clip plane a camera may state (m): MuJoCo's renderer stops with a fatal error on a
/// frustum near plane much below this, and no camera resolves depth nearer.
pub const MIN_CLIP_NEAR_M: f64 = 1e-4;
/// Farthest clip plane a camera may state (m): beyond it the depth buffer cannot tell a crate from
/// the far plane and every depth pixel reads the far plane (+inf).
pub const MAX_CLIP_FAR_M: f64 = 1e5;
/// Largest stereo matching error a depth camera may state (px): a real matcher errs by a tenth of
/// a pixel; at 10 px the depth of anything past a metre is already noise, and larger values make
/// every depth pixel ±inf.
pub const MAX_DEPTH_SUBPIXEL_PX: f64 = 10.0;
/// Shortest stereo baseline a depth camera may state (m): a millimetre; shorter, the error model
/// divides by almost nothing and every depth pixel reads ±inf.
pub const MIN_DEPTH_BASELINE_M: f64 = 1e-3;
/// Largest position noise or bias a ground-truth object detector may state (m): a detector 100 m
/// off is no detector; beyond it the published covariance (stddev squared) overflows to inf.
pub const MAX_DETECTOR_POSITION_ERROR_M: f64 = 100.0;
/// Largest orientation noise a ground-truth object detector may state (rad): half a turn already
/// makes the orientation random; beyond it the covariance overflows.
pub const MAX_DETECTOR_ORIENTATION_STDDEV_RAD: f64 = std::f64::consts::PI;
/// Heaviest mass a prop may state (kg): a loaded container ship; beyond it the inertia swamps
/// every contact of the world.
pub const MAX_MASS_KG: f64 = 1e9;

// -- the `sim:` block -------------------------------------------------------------------------

/// Longest physics timestep accepted (s).
pub const MAX_TIMESTEP: f64 = 0.1;
/// Shortest physics timestep accepted (s): below it sim time stops advancing in f64 once a run is
/// a few seconds old (1 µs is already 1e6 steps per simulated second).
pub const MIN_TIMESTEP: f64 = 1e-6;
/// Real-time factors a pacing accepts: slower than 1/1000 real time is a stall, faster than
/// 10⁴ × is `asap` (and a wall step of < 1 ns).
pub const PACING_FACTOR_RANGE: (f64, f64) = (1e-3, 1e4);
/// Most solver / line-search / no-slip iterations accepted (MuJoCo stores them as `int`).
pub const MAX_ITERATIONS: u32 = 10_000;
/// Longest lockstep barrier timeout accepted (s): a day.
pub const MAX_SYNC_TIMEOUT_S: f64 = 86_400.0;
/// MuJoCo's impedance bounds (mjMINIMP, mjMAXIMP): solimp's dmin, dmax and midpoint beyond them are
/// clamped by MuJoCo without a word, so they are refused here.
pub const MJ_IMP_RANGE: (f64, f64) = (0.0001, 0.9999);
/// Largest friction coefficient accepted (sliding, torsional or rolling): real ones are below 2.
pub const MAX_FRICTION: f64 = 1e3;
/// Accepted solimp `power` (MuJoCo's default 2): a steeper transition is a step function.
pub const SOLIMP_POWER_RANGE: (f64, f64) = (1.0, 100.0);
/// Largest `impratio` accepted: MuJoCo divides the friction impedance by it.
pub const MAX_IMPRATIO: f64 = 1e3;
/// Largest medium `density` (kg/m³) or `viscosity` (Pa·s) accepted: beyond mercury and honey by far.
pub const MAX_MEDIUM: f64 = 1e5;

// -- plugins and flags ------------------------------------------------------------------------

/// Largest joint value a home pose may state (rad or m).
pub const MAX_JOINT_VALUE: f64 = 100.0;
/// Fastest belt speed a conveyor may run at (m/s).
pub const MAX_BELT_SPEED: f64 = 100.0;
/// Fastest a person may walk or run (m/s): the top speed ever measured in a sprint is about
/// 12.4 m/s; a faster "pedestrian" is a vehicle and belongs on a drive.
pub const MAX_PERSON_SPEED: f64 = 12.5;
/// Largest `spawn_model.scale`.
pub const MAX_MODEL_SCALE: f64 = 1e3;
/// Fastest recording sample rate (Hz).
pub const MAX_RECORD_RATE_HZ: f64 = 1e6;
/// Longest span of sim time a flag may ask for (`sim --seconds`, `render --at` and a video's
/// `--seconds`), in s: a year. At the default 2 ms step that is 1.6e10 steps, days of wall time
/// even asap; `1e308` would run until interrupted. A longer run counts `--steps`.
pub const MAX_RUN_SECONDS: f64 = 31_536_000.0;
/// Smallest frame rate a rendered video may state (fps): one frame per 1000 s of sim time. An
/// MP4 cannot hold much longer frames (ffmpeg refuses a 1e6 s frame duration when it writes it).
pub const MIN_VIDEO_FPS: f64 = 0.001;
/// Largest frame rate a rendered video may state (fps).
pub const MAX_VIDEO_FPS: f64 = 1000.0;
/// Longest distance a navigation tuning key (lookahead, radii, corridor) may state (m).
pub const MAX_NAV_DISTANCE_M: f64 = 1e3;
/// Longest dwell a route point may state (s): a day.
pub const MAX_DWELL_S: f64 = 86_400.0;

// -- composition ------------------------------------------------------------------------------

/// Most parent worlds one `extends:` chain may hold: a hand-written chain is a handful of levels
/// (site → cell → scenario → test), and 64 leaves room for generated ones while bounding what a
/// load reads (one file per level) and how long a refusal's chain listing gets.
pub const MAX_EXTENDS_DEPTH: usize = 64;
