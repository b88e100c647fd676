//! `heightfield`: outdoor ground as a MuJoCo height field, generated (seeded fractal value noise)
//! or read from a `.npy` array or a grayscale `.png` (8- or 16-bit). Flag `provides_world`: it
//! builds the ground and a light itself, so `sim.world` is skipped.
//!
//! Geometry. The field is centred on the world origin and spans `size` = (x, y) m. Samples run
//! row by row from −y to +y, each row from −x to +x (MuJoCo's layout; a `.png` is read top row =
//! +y, as an image is viewed from above with north up, and a `.npy` row 0 = −y). Elevations are
//! normalised so the lowest sample sits at z = 0 and the highest at `height`; `base` metres of
//! solid lie below z = 0. Contact is against the field's triangles, so the sample spacing is the
//! resolution of every wheel interaction. [`Terrain::height_at`] gives the surface height
//! (the same triangles MuJoCo collides with) for placing things on it.
//!
//! Generated terrain: `octaves` layers of value noise on lattices of 2, 4, 8, ... cells per side,
//! layer k weighted `roughness^k`, bilinear within a cell, drawn from a Philox stream keyed by
//! `seed` alone (the terrain is part of the world, reproducible from its config, not from the
//! run's seed).

use std::path::{Path, PathBuf};

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_norway::Value;

use crate::error::{ConfigError, HookResult};
use crate::plugin::{
    typed_config, BuildContext, Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig,
};

fn d_source() -> String {
    "generated".into()
}
fn d_size() -> [f64; 2] {
    [20.0, 20.0]
}
fn d_height() -> f64 {
    1.5
}
fn d_base() -> f64 {
    1.0
}
fn d_res() -> u32 {
    96
}
fn d_rough() -> f64 {
    0.55
}
fn d_oct() -> u32 {
    4
}
fn d_friction() -> [f64; 3] {
    [1.0, 0.005, 0.0001]
}
fn d_rgba() -> [f64; 4] {
    [0.42, 0.38, 0.30, 1.0]
}
/// Most samples per side (a 4096² field is 16.7 M triangles pairs: no contact solver wants it).
pub const MAX_RESOLUTION: u32 = 4096;

/// Config of `heightfield`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeightfieldConfig {
    /// `generated`, or a path to a `.npy` array or a grayscale `.png` (relative to the world file).
    #[serde(default = "d_source")]
    pub source: String,
    /// Ground extent (m) in x and y, centred on the origin. Default [20, 20].
    #[serde(default = "d_size")]
    pub size: [f64; 2],
    /// Metres from the lowest sample to the highest. Default 1.5.
    #[serde(default = "d_height")]
    pub height: f64,
    /// Metres of solid below the lowest sample (a wall, not a shell). Default 1.0.
    #[serde(default = "d_base")]
    pub base: f64,
    /// Samples per side when generated (a file keeps its own). Default 96.
    #[serde(default = "d_res")]
    pub resolution: u32,
    /// Generated terrain is reproducible from this. Default 0.
    #[serde(default)]
    pub seed: u64,
    /// 0..1: how much each finer octave contributes. Default 0.55.
    #[serde(default = "d_rough")]
    pub roughness: f64,
    /// How many scales of detail (1..=10). Default 4.
    #[serde(default = "d_oct")]
    pub octaves: u32,
    /// Ground friction: MuJoCo's sliding, torsional, rolling coefficients.
    #[serde(default = "d_friction")]
    pub friction: [f64; 3],
    /// Ground colour. Default [0.42, 0.38, 0.30, 1].
    #[serde(default = "d_rgba")]
    pub rgba: [f64; 4],
    /// Add an overhead light. Default true.
    #[serde(default = "crate::plugin::yes")]
    pub light: bool,
}

impl ValidateConfig for HeightfieldConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        if self.source.trim().is_empty() {
            e.push(ConfigError::new("source", "must be `generated` or a path to a .npy or .png"));
        } else if self.source != "generated" {
            let ext = Path::new(&self.source)
                .extension()
                .and_then(|x| x.to_str())
                .map(|x| x.to_ascii_lowercase())
                .unwrap_or_default();
            if ext == "tif" || ext == "tiff" {
                e.push(ConfigError::new("source", format!("`{}`: GeoTIFF is not read here; convert the DEM to a .npy array (e.g. numpy.save) or a 16-bit grayscale .png", self.source)));
            } else if ext != "npy" && ext != "png" {
                e.push(ConfigError::new(
                    "source",
                    format!("`{}`: use `generated`, a .npy array or a grayscale .png", self.source),
                ));
            }
        }
        for (i, s) in self.size.iter().enumerate() {
            if !(s.is_finite() && *s > 0.0) {
                e.push(ConfigError::new(format!("size[{i}]"), format!("must be > 0 (m), got {s}")));
            }
        }
        if !(self.height.is_finite() && self.height > 0.0) {
            e.push(ConfigError::new(
                "height",
                format!(
                    "must be > 0 (m), got {}: a flat ground is a plane (omit the heightfield)",
                    self.height
                ),
            ));
        }
        if !(self.base.is_finite() && self.base > 0.0) {
            e.push(ConfigError::new(
                "base",
                format!("must be > 0 (m), got {}: the solid below the lowest sample", self.base),
            ));
        }
        if !(2..=MAX_RESOLUTION).contains(&self.resolution) {
            e.push(ConfigError::new(
                "resolution",
                format!(
                    "must be within 2..={MAX_RESOLUTION} samples per side, got {}",
                    self.resolution
                ),
            ));
        }
        if !(self.roughness.is_finite() && (0.0..=1.0).contains(&self.roughness)) {
            e.push(ConfigError::new(
                "roughness",
                format!("must be within 0..1, got {}", self.roughness),
            ));
        }
        if !(1..=10).contains(&self.octaves) {
            e.push(ConfigError::new(
                "octaves",
                format!("must be within 1..=10, got {}", self.octaves),
            ));
        }
        if self.friction.iter().any(|f| !(f.is_finite() && *f >= 0.0)) {
            e.push(ConfigError::new("friction", "every coefficient must be a finite number >= 0"));
        }
        if self.rgba.iter().any(|c| !(0.0..=1.0).contains(c)) {
            e.push(ConfigError::new("rgba", "every component must be within 0..1"));
        }
        e
    }
}

/// A height grid: `nrow` rows (−y → +y) of `ncol` samples (−x → +x), normalised to 0..1.
#[derive(Debug, Clone, PartialEq)]
pub struct Terrain {
    /// Rows (y samples).
    pub nrow: usize,
    /// Columns (x samples).
    pub ncol: usize,
    /// Row-major samples in 0..1.
    pub data: Vec<f32>,
    /// Extent (m) in x and y.
    pub size: [f64; 2],
    /// Height of a sample of 1 (m).
    pub height: f64,
}

impl Terrain {
    /// The seeded fractal value-noise terrain of a config.
    pub fn generate(cfg: &HeightfieldConfig) -> Terrain {
        let n = cfg.resolution as usize;
        let mut acc = vec![0.0f64; n * n];
        let mut rng = crate::context::SimRng::new(cfg.seed, 0, 0, "heightfield");
        let mut amp = 1.0;
        for k in 0..cfg.octaves {
            let cells = 2usize << k; // 2, 4, 8, ...
            let m = cells + 1;
            let lattice: Vec<f64> = (0..m * m).map(|_| rng.uniform()).collect();
            for r in 0..n {
                let v = r as f64 / (n - 1) as f64 * cells as f64;
                let j = (v.floor() as usize).min(cells - 1);
                let fv = v - j as f64;
                for c in 0..n {
                    let u = c as f64 / (n - 1) as f64 * cells as f64;
                    let i = (u.floor() as usize).min(cells - 1);
                    let fu = u - i as f64;
                    let l = |a: usize, b: usize| lattice[a * m + b];
                    let s = l(j, i) * (1.0 - fu) * (1.0 - fv)
                        + l(j, i + 1) * fu * (1.0 - fv)
                        + l(j + 1, i) * (1.0 - fu) * fv
                        + l(j + 1, i + 1) * fu * fv;
                    acc[r * n + c] += amp * s;
                }
            }
            amp *= cfg.roughness;
        }
        Terrain::normalised(n, n, acc, cfg)
    }

    fn normalised(nrow: usize, ncol: usize, v: Vec<f64>, cfg: &HeightfieldConfig) -> Terrain {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let span = if hi > lo { hi - lo } else { 1.0 };
        Terrain {
            nrow,
            ncol,
            data: v.iter().map(|x| ((x - lo) / span) as f32).collect(),
            size: cfg.size,
            height: cfg.height,
        }
    }

    /// Read a `.npy` (2-D, any real dtype; row 0 = −y) or a grayscale `.png` (top row = +y).
    pub fn load(path: &Path, cfg: &HeightfieldConfig) -> Result<Terrain, String> {
        let ext = path.extension().and_then(|x| x.to_str()).unwrap_or("").to_ascii_lowercase();
        let (nrow, ncol, v) = if ext == "npy" { read_npy(path)? } else { read_png(path)? };
        if nrow < 2 || ncol < 2 {
            return Err(format!(
                "{}: {nrow} x {ncol} samples; a height field needs at least 2 x 2",
                path.display()
            ));
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(format!(
                "{}: contains NaN or infinite samples; fill the holes first",
                path.display()
            ));
        }
        Ok(Terrain::normalised(nrow, ncol, v, cfg))
    }

    /// Sample (row, col), in metres above the lowest sample.
    pub fn sample(&self, r: usize, c: usize) -> f64 {
        self.data[r * self.ncol + c] as f64 * self.height
    }

    /// Surface height (m) at world (x, y) on the field's triangles (MuJoCo splits each cell along
    /// the diagonal from (i, j) to (i+1, j+1)); `None` outside the field.
    pub fn height_at(&self, x: f64, y: f64) -> Option<f64> {
        let u = (x / self.size[0] + 0.5) * (self.ncol - 1) as f64;
        let v = (y / self.size[1] + 0.5) * (self.nrow - 1) as f64;
        if !(0.0..=(self.ncol - 1) as f64).contains(&u)
            || !(0.0..=(self.nrow - 1) as f64).contains(&v)
        {
            return None;
        }
        let i = (u.floor() as usize).min(self.ncol - 2);
        let j = (v.floor() as usize).min(self.nrow - 2);
        let (fu, fv) = (u - i as f64, v - j as f64);
        let h00 = self.sample(j, i);
        let h11 = self.sample(j + 1, i + 1);
        Some(if fu >= fv {
            // triangle (j,i) (j,i+1) (j+1,i+1)
            h00 + fu * (self.sample(j, i + 1) - h00) + fv * (h11 - self.sample(j, i + 1))
        } else {
            // triangle (j,i) (j+1,i) (j+1,i+1)
            h00 + fv * (self.sample(j + 1, i) - h00) + fu * (h11 - self.sample(j + 1, i))
        })
    }
}

/// What a height field `source:` file must be: an elevation image or array of at most 1 GiB
/// (a 16k × 16k float32 array; a FIFO or a device is refused before it is opened).
const IMAGE: crate::input_file::Expect =
    crate::input_file::Expect { file: "a PNG or .npy elevation image", cap: 1 << 30 };

/// An elevation file's rows and columns within [`MAX_RESOLUTION`] each, checked from its header
/// before its samples are decoded.
fn check_sides(path: &Path, nrow: usize, ncol: usize) -> Result<(), String> {
    let max = MAX_RESOLUTION as usize;
    if nrow > max || ncol > max {
        return Err(format!(
            "height field `{}` is {nrow} x {ncol} samples; a height field may have at most {max} per side: downsample it",
            path.display()
        ));
    }
    Ok(())
}

fn read_npy(path: &Path) -> Result<(usize, usize, Vec<f64>), String> {
    let bytes = crate::input_file::read(path, "height field", IMAGE)?;
    let npy = npyz::NpyFile::new(&bytes[..])
        .map_err(|e| format!("{}: not a .npy file: {e}", path.display()))?;
    let shape = npy.shape().to_vec();
    let fortran = npy.header().order() == npyz::Order::Fortran;
    if shape.len() != 2 {
        return Err(format!(
            "{}: a {}-D array; a height field is 2-D (rows = y, columns = x)",
            path.display(),
            shape.len()
        ));
    }
    let side = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let (nrow, ncol) = (side(shape[0]), side(shape[1]));
    check_sides(path, nrow, ncol)?;
    let descr = npy.header().dtype().descr();
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    let v: Vec<f64> = match descr.trim_matches(['\'', '"']).trim_start_matches(['<', '>', '|', '=']) {
        "f8" => npy.into_vec::<f64>().map_err(err)?,
        "f4" => npy.into_vec::<f32>().map_err(err)?.into_iter().map(f64::from).collect(),
        "u1" => npy.into_vec::<u8>().map_err(err)?.into_iter().map(f64::from).collect(),
        "u2" => npy.into_vec::<u16>().map_err(err)?.into_iter().map(f64::from).collect(),
        "i2" => npy.into_vec::<i16>().map_err(err)?.into_iter().map(f64::from).collect(),
        "i4" => npy.into_vec::<i32>().map_err(err)?.into_iter().map(f64::from).collect(),
        "i8" => npy.into_vec::<i64>().map_err(err)?.into_iter().map(|x| x as f64).collect(),
        other => {
            return Err(format!("{}: dtype `{other}` is not a real number type (use float32/float64 or an integer type)", path.display()))
        }
    };
    let v = if fortran {
        (0..nrow)
            .flat_map(|r| (0..ncol).map(move |c| (r, c)))
            .map(|(r, c)| v[c * nrow + r])
            .collect()
    } else {
        v
    };
    Ok((nrow, ncol, v))
}

fn read_png(path: &Path) -> Result<(usize, usize, Vec<f64>), String> {
    let f = crate::input_file::open(path, "height field", IMAGE)?;
    let mut dec = png::Decoder::new(std::io::BufReader::new(f));
    dec.set_transformations(png::Transformations::EXPAND);
    let mut reader = dec.read_info().map_err(|e| format!("{}: not a PNG: {e}", path.display()))?;
    // Before the pixels are decoded: a 200-byte PNG may declare 60000 x 60000 (a 7 GB buffer).
    let (w, h) = (reader.info().width, reader.info().height);
    check_sides(path, h as usize, w as usize)?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| format!("{}: the image is too large to decode", path.display()))?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(|e| format!("{}: {e}", path.display()))?;
    let (w, h) = (info.width as usize, info.height as usize);
    let ch = match info.color_type {
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        other => {
            return Err(format!(
                "{}: a {other:?} image; an elevation image is grayscale (8- or 16-bit)",
                path.display()
            ))
        }
    };
    let deep = info.bit_depth == png::BitDepth::Sixteen;
    let px = |r: usize, c: usize| -> f64 {
        let k = (r * w + c) * ch * if deep { 2 } else { 1 };
        if deep {
            u16::from_be_bytes([buf[k], buf[k + 1]]) as f64
        } else {
            buf[k] as f64
        }
    };
    // image row 0 is the top (+y); the field's row 0 is -y
    let v = (0..h).rev().flat_map(|r| (0..w).map(move |c| (r, c))).map(|(r, c)| px(r, c)).collect();
    Ok((h, w, v))
}

/// The registry entry.
pub fn descriptor() -> PluginDescriptor {
    crate::plugin_descriptor!(
        "heightfield",
        "Outdoor ground as a height field: generated (seeded fractal value noise: octaves, roughness) or from a .npy / grayscale .png; provides the world.",
        HeightfieldConfig;
        create
    )
    .provides_world()
}

/// Typed config → validated → terrain made or read (a bad file is refused before anything is
/// built) → plugin.
pub fn create(v: &Value, args: &PluginArgs) -> Result<Box<dyn Plugin>, Vec<ConfigError>> {
    let cfg: HeightfieldConfig =
        typed_config(v).map_err(|e| crate::key_ranges::key_ranges::<HeightfieldConfig>(v, e))?;
    let e = cfg.validate();
    if !e.is_empty() {
        return Err(e);
    }
    let terrain = if cfg.source == "generated" {
        Terrain::generate(&cfg)
    } else {
        let p = PathBuf::from(&cfg.source);
        let p = if p.is_absolute() { p } else { args.base_dir.join(p) };
        Terrain::load(&p, &cfg).map_err(|m| vec![ConfigError::new("source", m)])?
    };
    Ok(Box::new(Heightfield { cfg, terrain }))
}

/// The `heightfield` plugin.
pub struct Heightfield {
    cfg: HeightfieldConfig,
    terrain: Terrain,
}

impl Heightfield {
    /// The terrain it builds.
    pub fn terrain(&self) -> &Terrain {
        &self.terrain
    }
}

impl Plugin for Heightfield {
    fn hooks(&self) -> Hooks {
        Hooks::BUILD
    }

    fn build(&mut self, spec: &mut MjSpec, _b: &mut BuildContext) -> HookResult {
        let c = &self.cfg;
        let t = &self.terrain;
        let hf = spec
            .add_hfield()
            .with_name("terrain")
            .with_size([c.size[0] / 2.0, c.size[1] / 2.0, c.height, c.base])
            .with_nrow(t.nrow as i32)
            .with_ncol(t.ncol as i32);
        hf.set_userdata(&t.data);
        let mat = spec.add_material().with_name("terrain_mat");
        *mat.rgba_mut() = c.rgba.map(|x| x as f32);
        let world = spec.world_body_mut();
        let g = world
            .add_geom()
            .with_name("terrain")
            .with_type(MjtGeomBase::mjGEOM_HFIELD)
            .with_hfieldname("terrain")
            .with_material("terrain_mat");
        *g.friction_mut() = c.friction;
        if c.light {
            world
                .add_light()
                .with_name("terrain_light")
                .with_pos([0.0, 0.0, c.height + 5.0])
                .with_dir([0.0, 0.0, -1.0]);
        }
        Ok(())
    }
}
