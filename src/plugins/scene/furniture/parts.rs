//! What every furniture plugin shares (no plugin lives here): the checks of the placement and
//! size keys, an MJCF writer for the primitive parts a piece is made of ([`Parts`]), and the
//! build step that attaches a piece at its world pose under its prefix and registers it as a
//! welded scenery entity ([`Placement::build`]).
//!
//! Names: a piece's body is `<prefix><stem>` and each part `<prefix><stem>_<part>`, where the
//! stem is the entry's address with dots as `_` (the entry's label at the top of a document).

use std::fmt::Write as _;

use mujoco_rs::prelude::*;

use crate::context::{Entity, EntityKind, Pose, SimContext};
use crate::error::{num, ConfigError, HookResult};
use crate::math::quat_from_rpy;
use crate::spawn::mjcf::{attach, child_spec_from_str};
use crate::world::bounds::{MAX_POSITION_M, MAX_SIZE_M};

/// Whether a part takes part in contacts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contact {
    /// Collides (contype/conaffinity 1, MuJoCo's default).
    Solid,
    /// Seen by cameras and rays, touched by nothing (contype/conaffinity 0).
    Visual,
}

/// How a part looks: a plain colour, or a material written with [`Parts::material`].
#[derive(Debug, Clone, Copy)]
pub enum Look<'a> {
    /// RGBA in 0..1.
    Rgba([f64; 4]),
    /// A material of this piece, by the name [`Parts::material`] returned.
    Mat(&'a str),
}

/// The MJCF of one piece of furniture: one body (the piece) holding primitive geoms, plus the
/// materials and lights they use. Positions and orientations are in the piece's own frame.
#[derive(Debug, Clone)]
pub struct Parts {
    stem: String,
    assets: String,
    geoms: String,
    count: usize,
}

fn v3(v: [f64; 3]) -> String {
    format!("{} {} {}", v[0], v[1], v[2])
}

fn v4(v: [f64; 4]) -> String {
    format!("{} {} {} {}", v[0], v[1], v[2], v[3])
}

impl Parts {
    /// An empty piece whose body is named `stem`.
    pub fn new(stem: &str) -> Self {
        Parts { stem: stem.to_string(), assets: String::new(), geoms: String::new(), count: 0 }
    }

    /// The full (unprefixed) name of part `part`: `<stem>_<part>`.
    pub fn name(&self, part: &str) -> String {
        format!("{}_{part}", self.stem)
    }

    /// How many geoms the piece has so far.
    pub fn geom_count(&self) -> usize {
        self.count
    }

    /// A material `<stem>_<name>` of colour `rgba` glowing with `emission` (0..1); returns its name.
    pub fn material(&mut self, name: &str, rgba: [f64; 4], emission: f64) -> String {
        let n = self.name(name);
        let _ = writeln!(
            self.assets,
            r#"    <material name="{n}" rgba="{}" emission="{emission}"/>"#,
            v4(rgba)
        );
        n
    }

    fn geom(&mut self, part: &str, shape: String, look: Look, contact: Contact) {
        let name = self.name(part);
        let look = match look {
            Look::Rgba(c) => format!(r#"rgba="{}""#, v4(c)),
            Look::Mat(m) => format!(r#"material="{m}""#),
        };
        let contact = match contact {
            Contact::Solid => "",
            Contact::Visual => r#" contype="0" conaffinity="0""#,
        };
        let _ = writeln!(self.geoms, r#"      <geom name="{name}" {shape} {look}{contact}/>"#);
        self.count += 1;
    }

    /// A box of half-extents `half` centred at `pos`, turned by `quat` ([w, x, y, z]).
    pub fn cuboid(
        &mut self,
        part: &str,
        half: [f64; 3],
        pos: [f64; 3],
        quat: [f64; 4],
        look: Look,
        contact: Contact,
    ) {
        let shape =
            format!(r#"type="box" size="{}" pos="{}" quat="{}""#, v3(half), v3(pos), v4(quat));
        self.geom(part, shape, look, contact);
    }

    /// An axis-aligned box given by its two opposite corners.
    pub fn slab(&mut self, part: &str, lo: [f64; 3], hi: [f64; 3], look: Look, contact: Contact) {
        let half = [(hi[0] - lo[0]) / 2.0, (hi[1] - lo[1]) / 2.0, (hi[2] - lo[2]) / 2.0];
        let pos = [(hi[0] + lo[0]) / 2.0, (hi[1] + lo[1]) / 2.0, (hi[2] + lo[2]) / 2.0];
        self.cuboid(part, half, pos, [1.0, 0.0, 0.0, 0.0], look, contact);
    }

    /// A cylinder of `radius` whose axis runs from `from` to `to`.
    pub fn cylinder(
        &mut self,
        part: &str,
        radius: f64,
        from: [f64; 3],
        to: [f64; 3],
        look: Look,
        contact: Contact,
    ) {
        let shape = format!(r#"type="cylinder" size="{radius}" fromto="{} {}""#, v3(from), v3(to));
        self.geom(part, shape, look, contact);
    }

    /// A sphere of `radius` centred at `pos`.
    pub fn sphere(&mut self, part: &str, radius: f64, pos: [f64; 3], look: Look, contact: Contact) {
        let shape = format!(r#"type="sphere" size="{radius}" pos="{}""#, v3(pos));
        self.geom(part, shape, look, contact);
    }

    /// A spot light `<stem>_<part>` at `pos` shining along `dir`.
    pub fn light(
        &mut self,
        part: &str,
        pos: [f64; 3],
        dir: [f64; 3],
        diffuse: [f64; 3],
        cutoff: f64,
    ) {
        let name = self.name(part);
        let _ = writeln!(
            self.geoms,
            r#"      <light name="{name}" pos="{}" dir="{}" diffuse="{}" cutoff="{cutoff}"/>"#,
            v3(pos),
            v3(dir),
            v3(diffuse)
        );
    }

    /// The piece as an MJCF document (model name `model`).
    pub fn xml(&self, model: &str) -> String {
        format!(
            "<mujoco model=\"{model}\">\n  <asset>\n{}  </asset>\n  <worldbody>\n    <body name=\"{}\">\n{}    </body>\n  </worldbody>\n</mujoco>\n",
            self.assets, self.stem, self.geoms
        )
    }
}

/// Where and how a built piece goes into the world.
#[derive(Debug, Clone)]
pub struct Placement<'a> {
    /// The entry's address (the entity's name).
    pub address: &'a str,
    /// MJCF name prefix.
    pub prefix: &'a str,
    /// The plugin name (the entity's model).
    pub model: &'a str,
    /// World position of the piece's frame (m).
    pub pos: [f64; 3],
    /// World orientation [w, x, y, z].
    pub quat: [f64; 4],
}

/// The stem of an entry's names: its address with dots as `_`.
pub fn stem_of(address: &str) -> String {
    address.replace('.', "_")
}

impl Placement<'_> {
    /// The placement at world position `pos` (m) and orientation `rpy` (roll, pitch, yaw; rad).
    pub fn at_rpy<'a>(
        address: &'a str,
        prefix: &'a str,
        model: &'a str,
        pos: [f64; 3],
        rpy: [f64; 3],
    ) -> Placement<'a> {
        Placement { address, prefix, model, pos, quat: quat_from_rpy(rpy[0], rpy[1], rpy[2]) }
    }

    /// The build tail every furniture plugin shares: make the piece's parts under the entry's
    /// stem (`parts(stem)`), attach them here and register the piece as a static Object entity.
    pub fn build(
        &self,
        spec: &mut MjSpec,
        ctx: &mut SimContext,
        parts: impl FnOnce(&str) -> Parts,
    ) -> HookResult {
        let parts = parts(&stem_of(self.address));
        let body = format!("{}{}", self.prefix, parts.stem);
        if spec.body(&body).is_some() {
            return Err(format!(
                "prefix: the world already has a body `{body}`; give this {} a distinct prefix or name",
                self.model
            ));
        }
        let mut child = child_spec_from_str(&parts.xml(self.model))?;
        attach(spec, None, &mut child, self.pos, self.quat, self.prefix)?;
        let mut e = Entity::new(self.address, EntityKind::Object, &body);
        e.prefix = self.prefix.to_string();
        e.model = self.model.to_string();
        e.initial_pose = Pose { pos: self.pos, quat: self.quat };
        e.weld_reason = Some(format!("a {} is welded scenery", self.model));
        e.meta.insert("motion".into(), "static".into());
        ctx.entities.add(e)
    }
}

/// A computed length for a message: rounded to the micrometre, so a float sum reads as written.
pub fn um(v: f64) -> String {
    num((v * 1e6).round() / 1e6)
}

/// `[x, y]` or `[x, y, z]` (z defaults to 0) as a point.
pub fn point3(v: &[f64]) -> [f64; 3] {
    [v[0], v[1], v.get(2).copied().unwrap_or(0.0)]
}

/// `[r, g, b]` / `[r, g, b, a]` (alpha 1 when omitted), or `default` when not given.
pub fn rgba_or(c: &Option<Vec<f64>>, default: [f64; 4]) -> [f64; 4] {
    match c {
        Some(c) => [c[0], c[1], c[2], c.get(3).copied().unwrap_or(1.0)],
        None => default,
    }
}

/// A world placement (m) of one of the lengths `lens` (`[2, 3]`: `[x, y]` or `[x, y, z]`).
pub fn check_pos(key: &str, v: &[f64], lens: &[usize]) -> Option<ConfigError> {
    let shape = match lens {
        [2] => "[x, y]",
        [3] => "[x, y, z]",
        _ => "[x, y] or [x, y, z]",
    };
    if !lens.contains(&v.len()) || v.iter().any(|x| !x.is_finite() || x.abs() > MAX_POSITION_M) {
        return Some(ConfigError::new(
            key,
            format!(
                "a world placement {shape} (m, within ±1e6), got [{}]",
                v.iter().map(|x| num(*x)).collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    None
}

/// An orientation [roll, pitch, yaw] (rad), finite.
pub fn check_rpy(key: &str, v: &[f64; 3]) -> Option<ConfigError> {
    v.iter().any(|x| !x.is_finite()).then(|| {
        ConfigError::new(key, format!("must be finite (rad), got [{}]", v.map(num).join(", ")))
    })
}

/// A length in (0, 1e4] m.
pub fn check_len(key: &str, v: f64) -> Option<ConfigError> {
    (!(v > 0.0 && v <= MAX_SIZE_M))
        .then(|| ConfigError::new(key, format!("must be in (0, 10000] m, got {}", num(v))))
}

/// A length in [0, 1e4] m.
pub fn check_len0(key: &str, v: f64) -> Option<ConfigError> {
    (!(0.0..=MAX_SIZE_M).contains(&v))
        .then(|| ConfigError::new(key, format!("must be in [0, 10000] m, got {}", num(v))))
}

/// A fraction in 0..1.
pub fn check_unit(key: &str, v: f64) -> Option<ConfigError> {
    (!(0.0..=1.0).contains(&v))
        .then(|| ConfigError::new(key, format!("must be within 0..1, got {}", num(v))))
}

/// An optional colour.
pub fn check_color(key: &str, c: &Option<Vec<f64>>) -> Vec<ConfigError> {
    c.as_deref().map(|c| crate::spawn::check_rgba(c, key)).unwrap_or_default()
}
