//! How a placed body behaves and looks: who owns its pose ([`Motion`]: welded, mocap-driven or a
//! free body), contact friction as a scalar or a triple ([`Friction`]), colours ([`check_rgba`])
//! and the height a rotated primitive's centre sits at to rest on the floor.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::ConfigError;

/// Who owns a placed thing's pose (`box`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Motion {
    /// Welded scenery: no degrees of freedom, nothing can move it (the default).
    #[default]
    Static,
    /// A mocap body: a plugin writes its pose; collidable, immovable by contact.
    Driven,
    /// A free joint: physics moves it; teleportable; re-seated at its spawn pose on reset.
    Physics,
}

impl Motion {
    /// The YAML spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Motion::Static => "static",
            Motion::Driven => "driven",
            Motion::Physics => "physics",
        }
    }
}

/// Contact friction: a sliding coefficient alone (torsional 0.005 and rolling 0.0001 stay at
/// MuJoCo's defaults) or the full `[sliding, torsional, rolling]` triple.
#[derive(Debug, Clone, Copy, PartialEq, JsonSchema)]
#[serde(untagged)]
pub enum Friction {
    /// Sliding coefficient only.
    Sliding(f64),
    /// `[sliding, torsional, rolling]`.
    Full([f64; 3]),
}

/// By hand, so a wrong shape is told what the key takes (serde's untagged enums only say that
/// nothing matched).
impl<'de> Deserialize<'de> for Friction {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        const TAKES: &str =
            "friction takes a sliding coefficient (e.g. 0.8) or the triple [sliding, torsional, rolling]";
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Friction;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(TAKES)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Friction, E> {
                Ok(Friction::Sliding(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Friction, E> {
                Ok(Friction::Sliding(v as f64))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Friction, E> {
                Ok(Friction::Sliding(v as f64))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Friction, A::Error> {
                let mut v: Vec<f64> = Vec::new();
                while let Some(x) = a.next_element::<f64>()? {
                    v.push(x);
                }
                match <[f64; 3]>::try_from(v.as_slice()) {
                    Ok(t) => Ok(Friction::Full(t)),
                    Err(_) => Err(serde::de::Error::custom(format!(
                        "{TAKES}; got a list of {} number{} (a single sliding value is written without brackets)",
                        v.len(),
                        if v.len() == 1 { "" } else { "s" }
                    ))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// MuJoCo's default geom friction `[sliding, torsional, rolling]`.
pub const MJ_DEFAULT_FRICTION: [f64; 3] = [1.0, 0.005, 0.0001];

impl Friction {
    /// The triple (a scalar keeps MuJoCo's torsional/rolling defaults).
    pub fn triple(self) -> [f64; 3] {
        match self {
            Friction::Sliding(s) => [s, MJ_DEFAULT_FRICTION[1], MJ_DEFAULT_FRICTION[2]],
            Friction::Full(t) => t,
        }
    }
    /// Refuse negative or non-finite coefficients at `path`.
    pub fn validate(self, path: &str) -> Vec<ConfigError> {
        let t = self.triple();
        let max = crate::world::bounds::MAX_FRICTION;
        if t.iter().any(|v| !(*v >= 0.0 && *v <= max)) {
            vec![ConfigError::new(
                path,
                format!(
                    "friction coefficients must be in [0, {max}], got [{}]",
                    t.map(crate::error::num).join(", ")
                ),
            )]
        } else {
            Vec::new()
        }
    }
}

/// Check a colour `[r, g, b]` or `[r, g, b, a]` in 0..1 at `path`.
pub fn check_rgba(c: &[f64], path: &str) -> Vec<ConfigError> {
    if !(c.len() == 3 || c.len() == 4) {
        return vec![ConfigError::new(
            path,
            format!("a colour is [r, g, b] or [r, g, b, a] in 0..1, got {} values", c.len()),
        )];
    }
    if c.iter().any(|v| !(0.0..=1.0).contains(v)) {
        return vec![ConfigError::new(path, format!("colour components are in 0..1, got {c:?}"))];
    }
    Vec::new()
}

/// `[r, g, b]` / `[r, g, b, a]` → rgba (alpha 1 when omitted).
pub fn rgba4(c: &[f64]) -> [f32; 4] {
    [c[0] as f32, c[1] as f32, c[2] as f32, c.get(3).copied().unwrap_or(1.0) as f32]
}

/// Height of the lowest point of a box with half-extents `half` rotated by `quat`, below its
/// centre (m): how high its centre must sit for it to rest on a floor at z = 0.
pub fn box_floor_offset(half: [f64; 3], quat: &[f64; 4]) -> f64 {
    let r = crate::math::quat(quat).to_rotation_matrix();
    // Row z of the rotation: the z component of each rotated box axis.
    (0..3).map(|i| r[(2, i)].abs() * half[i]).sum()
}

/// Same for an upright-axis cylinder of `radius` and half-height `half_h` rotated by `quat`.
pub fn cylinder_floor_offset(radius: f64, half_h: f64, quat: &[f64; 4]) -> f64 {
    let c = (crate::math::quat(quat) * crate::math::Vector3::z()).z.abs().min(1.0);
    radius * (1.0 - c * c).sqrt() + half_h * c
}
