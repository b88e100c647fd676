//! The world's `sim:` block: MuJoCo `<option>` passthroughs, pacing, seed and the world definition.
//!
//! Every key is optional. A key left out keeps MuJoCo's own value (or the world MJCF's), because
//! the right value is a property of the experiment, not of the framework.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{num, ConfigErrors};

/// The `sim:` block of a world document.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimBlock {
    /// Physics timestep (s). Default: the world MJCF's, else MuJoCo's 0.002 s.
    pub timestep: Option<f64>,
    /// Integrator: `euler | rk4 | implicit | implicitfast`. Default `implicitfast`.
    pub integrator: Option<Integrator>,
    /// Constraint solver: `newton | cg | pgs`. Default: MuJoCo's (newton).
    pub solver: Option<Solver>,
    /// Main solver iterations. Default: MuJoCo's (100).
    #[serde(default, deserialize_with = "crate::plugin::whole_key")]
    pub iterations: Option<i128>,
    /// Line-search iterations. Default: MuJoCo's (50).
    #[serde(default, deserialize_with = "crate::plugin::whole_key")]
    pub ls_iterations: Option<i128>,
    /// No-slip iterations. MuJoCo's default 0 lets a gripped object creep out of the jaws: a
    /// grasping world must set it (10 cut the creep 137×).
    #[serde(default, deserialize_with = "crate::plugin::whole_key")]
    pub noslip_iterations: Option<i128>,
    /// Ratio of frictional to normal constraint impedance. Default: MuJoCo's (1).
    pub impratio: Option<f64>,
    /// Friction cone: `pyramidal` (MuJoCo's default) | `elliptic`.
    pub cone: Option<Cone>,
    /// Gravity vector [x, y, z] in m/s² (world frame, REP 103: z up). Default [0, 0, -9.81].
    pub gravity: Option<[f64; 3]>,
    /// Global contact override (MuJoCo's o_solref / o_solimp / o_friction + the override flag).
    pub contact_override: Option<ContactOverride>,
    /// Medium density (kg/m³). MuJoCo's default 0 is a vacuum.
    pub density: Option<f64>,
    /// Medium viscosity (Pa·s). MuJoCo's default 0.
    pub viscosity: Option<f64>,
    /// Wind velocity [x, y, z] (m/s), inert without a medium.
    pub wind: Option<[f64; 3]>,
    /// The run's seed for every noise draw (`rng_for`). `--seed` wins over it.
    pub seed: Option<u64>,
    /// Pacing of the standalone runner: `realtime` (default), `asap`, or `{factor: x}`.
    pub pacing: Option<Pacing>,
    /// World definition: the built-in `empty_room` (default) or an MJCF path relative to the
    /// world file.
    pub world: Option<String>,
    /// Initial free camera of a viewer (windowed runs only; headless runs ignore it).
    pub view: Option<View>,
    /// Merging identical attached assets before compile is not implemented: the key is refused
    /// rather than accepted and ignored.
    pub dedup_assets: Option<bool>,
    /// Lockstep with external controllers (docs/recording.md "Lockstep"). Default off.
    pub sync: Option<SyncBlock>,
    /// World-level defaults of the robots' controllers (ros2_control's controller manager).
    pub controllers: Option<ControllersBlock>,
}

/// `sim.controllers`: defaults for every controller a plugin declares.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ControllersBlock {
    /// State a controller without its own `initial_state` starts (and a reset restores) in:
    /// `unloaded` (default, as ros2_control starts every controller: the standard bringup runs
    /// `spawner <name>` for each), `inactive` (as after `spawner --inactive`) or `active` (as
    /// after `spawner`: a world with no bringup comes up driving).
    pub initial_state: Option<InitialState>,
}

/// A controller's starting lifecycle state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InitialState {
    /// Declared, not loaded (load it with `spawner`).
    Unloaded,
    /// Loaded and configured, not running (`spawner --inactive`).
    Inactive,
    /// Running (`spawner`).
    Active,
}

impl InitialState {
    /// The registry state it starts in.
    pub fn state(self) -> crate::handles::controllers::State {
        use crate::handles::controllers::State;
        match self {
            InitialState::Unloaded => State::Unloaded,
            InitialState::Inactive => State::Inactive,
            InitialState::Active => State::Active,
        }
    }
}

/// MuJoCo integrators (`mjtIntegrator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)] // the variants are the spellings the key takes (a doc here would change the schema)
pub enum Integrator {
    Euler,
    Rk4,
    Implicit,
    Implicitfast,
}

/// MuJoCo constraint solvers (`mjtSolver`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)] // the variants are the spellings the key takes (a doc here would change the schema)
pub enum Solver {
    Pgs,
    Cg,
    Newton,
}

/// MuJoCo friction cones (`mjtCone`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)] // the variants are the spellings the key takes (a doc here would change the schema)
pub enum Cone {
    Pyramidal,
    Elliptic,
}

/// `sim.contact_override`: replaces every contact's parameters. A short vector is padded from
/// MuJoCo's current value, so `{solref: [0.05]}` varies only the time constant.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContactOverride {
    /// (timeconst s, dampratio); at most 2 values. A positive time constant must be ≥ 2·timestep.
    pub solref: Option<Vec<f64>>,
    /// (dmin, dmax, width m, midpoint, power); at most 5 values.
    pub solimp: Option<Vec<f64>>,
    /// (slide1, slide2, spin, roll1, roll2); at most 5 values.
    pub friction: Option<Vec<f64>>,
}

/// Pacing of the standalone runner.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Pacing {
    /// `realtime` or `asap`.
    Named(PacingName),
    /// `{factor: x}`: x times real time (x > 0).
    Factor(PacingFactor),
}

/// The `{factor: x}` pacing form.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PacingFactor {
    /// Speed-up over real time (> 0).
    pub factor: f64,
}

/// Only from a mapping: a derived struct would also take the list `[x]` (serde reads a struct
/// from a sequence of its fields), a form nothing documents.
impl<'de> Deserialize<'de> for PacingFactor {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MappingOnly;
        impl<'de> serde::de::Visitor<'de> for MappingOnly {
            type Value = PacingFactor;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mapping {factor: x}")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<PacingFactor, A::Error> {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct Fields {
                    factor: f64,
                }
                let Fields { factor } =
                    Fields::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(PacingFactor { factor })
            }
        }
        d.deserialize_map(MappingOnly)
    }
}

/// Named pacing modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)] // the variants are the spellings the key takes (a doc here would change the schema)
pub enum PacingName {
    Realtime,
    Asap,
}

impl Pacing {
    /// Real-time factor, or `None` for as-fast-as-possible.
    pub fn factor(&self) -> Option<f64> {
        match self {
            Pacing::Named(PacingName::Realtime) => Some(1.0),
            Pacing::Named(PacingName::Asap) => None,
            Pacing::Factor(PacingFactor { factor }) => Some(*factor),
        }
    }
}

/// `sim.view`: the camera of the `--view` window and of `roqsim render` (docs/view.md). Every
/// key is optional; an omitted one keeps MuJoCo's model-derived default free camera (lookat the
/// model's centre, distance 1.5 × its extent, azimuth/elevation from `<visual><global>`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct View {
    /// Point the camera looks at [x, y, z] (m, world frame). With `track`, an offset from the
    /// tracked entity's root body instead.
    pub lookat: Option<[f64; 3]>,
    /// Distance from lookat (m, > 0).
    pub distance: Option<f64>,
    /// Azimuth (deg): 0 looks along +x, 90 along +y (MuJoCo's convention).
    pub azimuth: Option<f64>,
    /// Elevation (deg): negative looks down, within (-90, 90).
    pub elevation: Option<f64>,
    /// Keep the camera on this entity (its name, e.g. `robot`): lookat follows its root body.
    pub track: Option<String>,
    /// With `track`: turn with the entity's heading, so `azimuth` is relative to its yaw.
    pub follow_heading: Option<bool>,
}

/// Largest `sim.view.azimuth` magnitude (degrees): a hundred turns; past it the angle's f64
/// reduction loses the fractions of a degree a view needs.
pub const MAX_AZIMUTH_DEG: f64 = 36_000.0;

impl View {
    /// Value checks serde cannot express (key paths under `sim.view`).
    pub fn validate(&self, errors: &mut ConfigErrors) {
        // A camera a million metres out sees nothing of any world (and prints 300 digits).
        let far = crate::world::bounds::MAX_POSITION_M;
        if let Some(l) = self.lookat {
            if l.iter().any(|x| !(-far..=far).contains(x)) {
                let shown: Vec<String> = l.iter().map(|x| num(*x)).collect();
                errors.push(
                    "sim.view.lookat",
                    format!(
                        "every component must be finite and within ±{} m, got [{}]",
                        num(far),
                        shown.join(", ")
                    ),
                );
            }
        }
        if let Some(d) = self.distance {
            if !(d > 0.0 && d <= far) {
                errors.push(
                    "sim.view.distance",
                    format!("must be a distance within (0, {}] m, got {}", num(far), num(d)),
                );
            }
        }
        if let Some(a) = self.azimuth {
            if !(-MAX_AZIMUTH_DEG..=MAX_AZIMUTH_DEG).contains(&a) {
                errors.push(
                    "sim.view.azimuth",
                    format!("must be finite degrees within ±{MAX_AZIMUTH_DEG}, got {}", num(a)),
                );
            }
        }
        if let Some(e) = self.elevation {
            if !(e > -90.0 && e < 90.0) {
                errors.push(
                    "sim.view.elevation",
                    format!("must be within (-90, 90) degrees, got {e}"),
                );
            }
        }
        if self.follow_heading == Some(true) && self.track.is_none() {
            errors.push(
                "sim.view.follow_heading",
                "follows the heading of the tracked entity; set sim.view.track too",
            );
        }
    }
}

/// `sim.sync`: lockstep with external controllers (see docs/recording.md).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncBlock {
    /// Lockstep on/off. Default false.
    pub enabled: Option<bool>,
    /// Barrier timeout (s): a gate silent this long ends the run. Default 5.
    pub timeout_s: Option<f64>,
    /// What a step waits for: `sensors` (its due publications, always synchronous here) and
    /// `control` (a message on every `control` endpoint after them). Default both.
    pub wait_for: Option<Vec<String>>,
    /// Outbound endpoint names (`odom` or `robot/odom`) whose publication arms the control gate.
    /// Default: any publication.
    pub sensors: Option<Vec<String>>,
    /// Inbound endpoint names (`cmd_vel` or `robot/cmd_vel`) the control gate waits on.
    pub control: Option<Vec<String>>,
}

/// MuJoCo's default o_solref, o_solimp and o_friction (mjOption defaults, MuJoCo 3.17 docs).
pub const MJ_DEFAULT_O_SOLREF: [f64; 2] = [0.02, 1.0];
/// See [`MJ_DEFAULT_O_SOLREF`].
pub const MJ_DEFAULT_O_SOLIMP: [f64; 5] = [0.9, 0.95, 0.001, 0.5, 2.0];
/// See [`MJ_DEFAULT_O_SOLREF`].
pub const MJ_DEFAULT_O_FRICTION: [f64; 5] = [1.0, 1.0, 0.005, 0.0001, 0.0001];
pub use crate::world::bounds::{
    MAX_FRICTION, MAX_ITERATIONS, MAX_SYNC_TIMEOUT_S, MAX_TIMESTEP, MIN_TIMESTEP, MJ_IMP_RANGE,
    PACING_FACTOR_RANGE,
};
use crate::world::bounds::{MAX_IMPRATIO, MAX_MEDIUM, SOLIMP_POWER_RANGE};

/// Check a real-time factor against [`PACING_FACTOR_RANGE`]; the error says the range and the
/// alternatives. Shared by `sim.pacing` and `--pacing`.
pub fn check_pacing_factor(factor: f64) -> Result<f64, String> {
    let (lo, hi) = PACING_FACTOR_RANGE;
    if factor.is_finite() && (lo..=hi).contains(&factor) {
        Ok(factor)
    } else {
        Err(format!(
            "a real-time factor must be within [{lo}, {hi}], got {}; use `asap` for as fast as possible",
            num(factor)
        ))
    }
}

/// Check the contact parameters of an override (solref, solimp, friction) against MuJoCo's
/// documented ranges; pushes one error per bad component under `path`.
fn check_contact_values(path: &str, co: &ContactOverride, errors: &mut ConfigErrors) {
    let (lo, hi) = MJ_IMP_RANGE;
    for (i, v) in co.solref.iter().flatten().enumerate() {
        if !v.is_finite() || *v == 0.0 {
            errors.push(
                format!("{path}.solref[{i}]"),
                format!("must be finite and non-zero, got {v}"),
            );
        }
    }
    if let Some(r) = &co.solref {
        // MuJoCo takes (timeconst, dampratio) > 0 or (-stiffness, -damping) < 0, and replaces a
        // mixed pair with its default without a word; a short vector is padded with a positive value.
        let neg = r.iter().filter(|v| **v < 0.0).count();
        if neg > 0 && (neg != r.len() || r.len() < 2) {
            errors.push(
                format!("{path}.solref"),
                format!(
                    "{r:?} mixes signs: give (timeconst, dampratio) both > 0, or (-stiffness, -damping) both < 0 (the direct form needs both values)"
                ),
            );
        }
    }
    for (i, v) in co.solimp.iter().flatten().enumerate() {
        let (ok, want) = match i {
            0 | 1 | 3 => {
                ((lo..=hi).contains(v), format!("within [{lo}, {hi}] (MuJoCo clamps to it)"))
            }
            2 => (*v > 0.0 && v.is_finite(), "a width > 0 m".to_string()),
            _ => {
                let (lo, hi) = SOLIMP_POWER_RANGE;
                (*v >= lo && *v <= hi, format!("a power in [{lo}, {hi}] (MuJoCo's default 2)"))
            }
        };
        if !ok {
            let name = ["dmin", "dmax", "width", "midpoint", "power"][i.min(4)];
            errors.push(format!("{path}.solimp[{i}]"), format!("{name} must be {want}, got {v}"));
        }
    }
    for (i, v) in co.friction.iter().flatten().enumerate() {
        if !(*v >= 0.0 && *v <= MAX_FRICTION) {
            errors.push(
                format!("{path}.friction[{i}]"),
                format!("must be a coefficient in [0, {MAX_FRICTION}], got {}", num(*v)),
            );
        }
    }
}
/// MuJoCo's default timestep (s).
pub const MJ_DEFAULT_TIMESTEP: f64 = 0.002;

impl SimBlock {
    /// Value checks serde cannot express. `timestep` is the step the world will run at (the
    /// block's own, else the world model's), used for the contact time-constant floor.
    pub fn validate(&self, timestep: f64, errors: &mut ConfigErrors) {
        self.validate_step(errors);
        self.validate_solver(errors);
        self.validate_sync(errors);
        if let Some(v) = &self.view {
            v.validate(errors);
        }
        if let Some(Pacing::Factor(PacingFactor { factor })) = self.pacing {
            if let Err(m) = check_pacing_factor(factor) {
                errors.push("sim.pacing.factor", m);
            }
        }
        self.validate_medium(errors);
        self.validate_contact_override(timestep, errors);
    }

    /// `dedup_assets` (refused: it would do nothing) and the timestep's bounds.
    fn validate_step(&self, errors: &mut ConfigErrors) {
        if let Some(v) = self.dedup_assets {
            errors.push(
                "sim.dedup_assets",
                format!(
                    "`dedup_assets: {v}` is refused: roqsim does not merge identical attached assets before compile, \
                     so the key would do nothing. Remove it (every attached copy of a model keeps its own meshes \
                     and materials)"
                ),
            );
        }
        if let Some(ts) = self.timestep {
            if !(ts > 0.0 && ts.is_finite()) {
                errors.push(
                    "sim.timestep",
                    format!("must be a positive number of seconds, got {ts}"),
                );
            }
        }
        if let Some(ts) = self.timestep {
            if ts > 0.0 && ts < MIN_TIMESTEP {
                errors.push("sim.timestep", format!("{} s is shorter than {MIN_TIMESTEP} s: sim time would stop advancing; use a step of a few ms", num(ts)));
            }
            if ts > MAX_TIMESTEP {
                errors.push("sim.timestep", format!("{} s is longer than {MAX_TIMESTEP} s: no physics step is that long; use a step of a few ms", num(ts)));
            }
        }
    }

    /// Gravity and wind finite and bounded; the solver's iteration counts in range.
    fn validate_solver(&self, errors: &mut ConfigErrors) {
        for (key, v) in [("gravity", self.gravity), ("wind", self.wind)] {
            if let Some(v) = v {
                if v.iter().any(|x| !x.is_finite() || x.abs() > 1e4) {
                    errors.push(
                        format!("sim.{key}"),
                        format!("every component must be finite and within ±1e4, got {v:?}"),
                    );
                }
            }
        }
        for (key, v) in [("iterations", self.iterations), ("ls_iterations", self.ls_iterations)] {
            if let Some(v) = v {
                if !(1..=i128::from(MAX_ITERATIONS)).contains(&v) {
                    errors.push(
                        format!("sim.{key}"),
                        format!("must be between 1 and {MAX_ITERATIONS}, got {v}"),
                    );
                }
            }
        }
        if let Some(v) = self.noslip_iterations {
            if !(0..=i128::from(MAX_ITERATIONS)).contains(&v) {
                errors.push(
                    "sim.noslip_iterations",
                    format!("must be between 0 (off) and {MAX_ITERATIONS}, got {v}"),
                );
            }
        }
    }

    /// Lockstep: its timeout, its gates, and a control gate that names what it waits for.
    fn validate_sync(&self, errors: &mut ConfigErrors) {
        if let Some(s) = &self.sync {
            if let Some(t) = s.timeout_s {
                if !(t > 0.0 && t <= MAX_SYNC_TIMEOUT_S) {
                    errors.push(
                        "sim.sync.timeout_s",
                        format!(
                            "must be a number of seconds in (0, {MAX_SYNC_TIMEOUT_S}], got {t}"
                        ),
                    );
                }
            }
            for (i, w) in s.wait_for.iter().flatten().enumerate() {
                if w != "sensors" && w != "control" {
                    errors.push(
                        format!("sim.sync.wait_for[{i}]"),
                        format!("unknown gate `{w}`: use sensors or control"),
                    );
                }
            }
            let waits_control =
                s.wait_for.as_ref().is_none_or(|w| w.iter().any(|x| x == "control"));
            if s.enabled == Some(true)
                && waits_control
                && s.control.as_ref().is_none_or(|c| c.is_empty())
            {
                errors.push(
                    "sim.sync.control",
                    "lockstep waits for control but names no inbound endpoint: list the endpoints the controller \
                     publishes to, e.g. control: [cmd_vel]",
                );
            }
        }
    }

    /// The impedance ratio and the medium's density and viscosity in range.
    fn validate_medium(&self, errors: &mut ConfigErrors) {
        if let Some(v) = self.impratio {
            if !(v > 0.0 && v <= MAX_IMPRATIO) {
                errors.push(
                    "sim.impratio",
                    format!("must be a ratio in (0, {MAX_IMPRATIO}], got {}: MuJoCo divides the friction impedance by it, so 0 makes every contact frictionless", num(v)),
                );
            }
        }
        for (key, v, unit) in [
            ("density", self.density, "kg/m³ (osmium is 22 590)"),
            ("viscosity", self.viscosity, "Pa·s"),
        ] {
            if let Some(v) = v {
                if !(0.0..=MAX_MEDIUM).contains(&v) {
                    errors.push(
                        format!("sim.{key}"),
                        format!("must be in [0, {MAX_MEDIUM}] {unit}, got {}", num(v)),
                    );
                }
            }
        }
    }

    /// The contact override's values and lengths, and its time constant above the 2*timestep
    /// floor MuJoCo would clamp it to.
    fn validate_contact_override(&self, timestep: f64, errors: &mut ConfigErrors) {
        if let Some(co) = &self.contact_override {
            check_contact_values("sim.contact_override", co, errors);
            for (key, v, max) in [
                ("solref", &co.solref, 2usize),
                ("solimp", &co.solimp, 5),
                ("friction", &co.friction, 5),
            ] {
                if let Some(v) = v {
                    if v.is_empty() {
                        errors.push(
                            format!("sim.contact_override.{key}"),
                            format!("is empty; give 1 to {max} numbers or remove the key"),
                        );
                    } else if v.len() > max {
                        errors.push(
                            format!("sim.contact_override.{key}"),
                            format!("has {} values; MuJoCo's o_{key} takes at most {max}", v.len()),
                        );
                    }
                }
            }
            if let Some(solref) = &co.solref {
                if let Some(&tc) = solref.first() {
                    let floor = 2.0 * timestep;
                    if tc > 0.0 && tc < floor {
                        errors.push(
                            "sim.contact_override.solref",
                            format!(
                                "time constant {tc} s is below the floor 2*timestep = {floor} s; MuJoCo would \
                                 silently clamp it to {floor} s. Raise it to >= {floor}, or lower sim.timestep \
                                 (halving the step halves the floor)"
                            ),
                        );
                    }
                }
            }
        }
    }

    /// The padded (solref, solimp, friction) an override resolves to, starting from `current`.
    pub fn padded_override(
        &self,
        current: ([f64; 2], [f64; 5], [f64; 5]),
    ) -> Option<([f64; 2], [f64; 5], [f64; 5])> {
        let co = self.contact_override.as_ref()?;
        let (mut r, mut i, mut f) = current;
        if let Some(v) = &co.solref {
            r[..v.len()].copy_from_slice(v);
        }
        if let Some(v) = &co.solimp {
            i[..v.len()].copy_from_slice(v);
        }
        if let Some(v) = &co.friction {
            f[..v.len()].copy_from_slice(v);
        }
        Some((r, i, f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_short_vectors_from_current() {
        let s = SimBlock {
            contact_override: Some(ContactOverride {
                solref: Some(vec![0.05]),
                ..Default::default()
            }),
            ..Default::default()
        };
        let (r, i, f) = s
            .padded_override((MJ_DEFAULT_O_SOLREF, MJ_DEFAULT_O_SOLIMP, MJ_DEFAULT_O_FRICTION))
            .unwrap();
        assert_eq!(r, [0.05, 1.0]);
        assert_eq!(i, MJ_DEFAULT_O_SOLIMP);
        assert_eq!(f, MJ_DEFAULT_O_FRICTION);
    }

    #[test]
    fn floor_named() {
        let s = SimBlock {
            contact_override: Some(ContactOverride {
                solref: Some(vec![0.001, 1.0]),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut e = ConfigErrors::default();
        s.validate(0.002, &mut e);
        assert_eq!(e.0.len(), 1);
        assert_eq!(e.0[0].path, "sim.contact_override.solref");
        assert!(e.0[0].message.contains("floor 2*timestep = 0.004 s"), "{}", e.0[0].message);
        // negative solref is the direct form: no floor
        let s = SimBlock {
            contact_override: Some(ContactOverride {
                solref: Some(vec![-1000.0, -10.0]),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut e = ConfigErrors::default();
        s.validate(0.002, &mut e);
        assert!(e.is_empty());
    }
}
