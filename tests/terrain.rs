//! `heightfield` (issue 19): generated and file terrain, the surface MuJoCo collides with matching
//! `Terrain::height_at`, a TurtleBot 4 whose base height follows the terrain it drives over, and
//! every refusal's message.

mod common;

use std::path::Path;

use mujoco_rs::prelude::MjtObjBase;
use roqsim::context::payload::{Payload, Twist};
use roqsim::mujoco::raycast::RayBatch;
use roqsim::plugins::scene::heightfield::{HeightfieldConfig, Terrain};
use roqsim::Engine;

fn cfg(yaml: &str) -> HeightfieldConfig {
    serde_norway::from_str(yaml).unwrap()
}

/// The surface z under (x, y) in the compiled world, by a ray straight down from 10 m.
fn surface_z(e: &mut Engine, x: f64, y: f64) -> f64 {
    let mut b = RayBatch::new(1);
    b.set_dir(0, [0.0, 0.0, -1.0]);
    b.cast(e.ctx.data_mut(), [x, y, 10.0], None, None, true, 100.0);
    assert!(b.dist()[0] >= 0.0, "no ground under ({x}, {y})");
    10.0 - b.dist()[0]
}

/// A 2-D little-endian float64 .npy, row-major.
fn write_npy(path: &Path, rows: usize, cols: usize, f: impl Fn(usize, usize) -> f64) {
    let mut header =
        format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for r in 0..rows {
        for c in 0..cols {
            out.extend_from_slice(&f(r, c).to_le_bytes());
        }
    }
    std::fs::write(path, out).unwrap();
}

#[test]
fn generated_terrain_is_seeded_normalised_and_is_what_mujoco_collides_with() {
    let c = "{seed: 7, resolution: 64, size: [16.0, 12.0], height: 1.2}";
    let t = Terrain::generate(&cfg(c));
    assert_eq!((t.nrow, t.ncol, t.data.len()), (64, 64, 4096));
    let lo = t.data.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = t.data.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    assert_eq!((lo, hi), (0.0, 1.0));
    assert_eq!(Terrain::generate(&cfg(c)), t, "same seed, same terrain");
    assert_ne!(
        Terrain::generate(&cfg("{seed: 8, resolution: 64, size: [16.0, 12.0], height: 1.2}")).data,
        t.data
    );
    // rougher terrain has more sample-to-sample variation
    let step = |t: &Terrain| {
        t.data.windows(2).map(|w| (w[1] - w[0]).abs() as f64).sum::<f64>() / t.data.len() as f64
    };
    let smooth = Terrain::generate(&cfg("{seed: 7, resolution: 64, roughness: 0.1}"));
    let rough = Terrain::generate(&cfg("{seed: 7, resolution: 64, roughness: 0.9, octaves: 6}"));
    assert!(step(&rough) > 1.5 * step(&smooth), "{} vs {}", step(&rough), step(&smooth));

    let dir = tempfile::tempdir().unwrap();
    let mut e = common::engine_in(
        &format!("sim: {{world: empty_room}}\ncomponents:\n  - heightfield: {c}\n"),
        dir.path(),
    );
    // the world's floor was replaced: no plane named floor, one height field
    assert!(e.ctx.model().name_to_id(MjtObjBase::mjOBJ_GEOM, "floor").is_none());
    assert!(e.ctx.model().name_to_id(MjtObjBase::mjOBJ_GEOM, "terrain").is_some());
    for (x, y) in [(0.0, 0.0), (3.3, -2.1), (-7.9, 5.9), (6.1, 4.4), (-2.05, -5.5)] {
        let z = surface_z(&mut e, x, y);
        let h = t.height_at(x, y).unwrap();
        assert!((z - h).abs() < 1e-6, "at ({x}, {y}): MuJoCo {z}, height_at {h}");
    }
    assert!(t.height_at(8.01, 0.0).is_none());
}

#[test]
fn npy_and_png_sources_keep_their_orientation() {
    let dir = tempfile::tempdir().unwrap();
    // .npy: row 0 is -y; a ramp rising towards +x (columns) and a bump in the last row (+y)
    write_npy(&dir.path().join("ramp.npy"), 11, 21, |r, c| {
        c as f64 + if r == 10 { 100.0 } else { 0.0 }
    });
    let mut e = common::engine_in(
        "components:\n  - heightfield: {source: ramp.npy, size: [20.0, 10.0], height: 2.0}\n",
        dir.path(),
    );
    // columns 0..20 -> x -10..10; rows 0..9 span 0..20 of 120, row 10 is 120
    let z0 = surface_z(&mut e, -10.0 + 1e-9, -3.0);
    let z1 = surface_z(&mut e, 5.0, -3.0);
    assert!(z0.abs() < 1e-6, "{z0}");
    assert!((z1 - 2.0 * 15.0 / 120.0).abs() < 1e-6, "{z1}");
    assert!((surface_z(&mut e, 0.0, 5.0) - 2.0 * 110.0 / 120.0).abs() < 1e-6, "the bump row is +y");

    // .png, 16-bit grayscale: the TOP image row is +y
    let (w, h) = (8u32, 6u32);
    let mut px = Vec::new();
    for r in 0..h {
        for _ in 0..w {
            let v: u16 = if r == 0 { 65535 } else { 0 };
            px.extend_from_slice(&v.to_be_bytes());
        }
    }
    {
        let f = std::fs::File::create(dir.path().join("top.png")).unwrap();
        let mut enc = png::Encoder::new(std::io::BufWriter::new(f), w, h);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::Sixteen);
        enc.write_header().unwrap().write_image_data(&px).unwrap();
    }
    let mut e = common::engine_in(
        "components:\n  - heightfield: {source: top.png, size: [7.0, 5.0], height: 0.5}\n",
        dir.path(),
    );
    assert!((surface_z(&mut e, 0.0, 2.5 - 1e-9) - 0.5).abs() < 1e-6, "+y edge is the top row");
    assert!(surface_z(&mut e, 0.0, -2.0).abs() < 1e-6, "-y is low");
}

/// Drive a TurtleBot 4 straight at 0.3 m/s over the terrain and return (x, y, base z, terrain z)
/// samples every 0.5 s.
fn drive_over(
    dir: &Path,
    terrain: &str,
    t: &Terrain,
    start: (f64, f64),
    secs: f64,
) -> Vec<[f64; 4]> {
    let z = t.height_at(start.0, start.1).unwrap() + 0.01;
    let yaml = format!(
        "sim: {{timestep: 0.002}}\ncomponents:\n  - heightfield: {terrain}\n  - spawn_robot: {{model: turtlebot4, pose: {{position: {{x: {}, y: {}, z: {z}}}}}}}\n    name: robot\n",
        start.0, start.1
    );
    let mut e = common::engine_in(&yaml, dir);
    let cmd = e.ctx.interface.all().iter().position(|ep| ep.name == "cmd_vel").unwrap();
    let base = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_BODY, "base_link").unwrap();
    let steps = (secs / e.dt()).round() as u64;
    let mut out = Vec::new();
    for i in 0..steps {
        if i % 10 == 0 && i > 250 {
            let tw = Twist { linear: [0.3, 0.0, 0.0], angular: [0.0; 3] };
            e.ctx.interface.deliver(cmd, Payload::Twist(tw));
        }
        e.step().unwrap();
        if i > 250 && i % 250 == 0 {
            let p = e.ctx.data().xpos()[base];
            out.push([p[0], p[1], p[2], t.height_at(p[0], p[1]).unwrap()]);
        }
    }
    out
}

#[test]
fn turtlebot_base_height_follows_a_ramp_read_from_npy() {
    let dir = tempfile::tempdir().unwrap();
    // 1.0 m over 20 m along x: a 2.9 degree ramp
    write_npy(&dir.path().join("ramp.npy"), 21, 41, |_, c| c as f64);
    let terrain = "{source: ramp.npy, size: [20.0, 20.0], height: 1.0}";
    let t = Terrain::load(&dir.path().join("ramp.npy"), &cfg(terrain)).unwrap();
    let s = drive_over(dir.path(), terrain, &t, (-5.0, 0.0), 10.0);
    let (first, last) = (s[0], s[s.len() - 1]);
    assert!(last[0] - first[0] > 2.0, "it drove up the ramp: {first:?} -> {last:?}");
    assert!(last[2] - first[2] > 0.1, "and rose: {first:?} -> {last:?}");
    for p in &s {
        // base_link sits on the floor between the wheels: on the ramp, within 5 mm of the surface
        assert!((p[2] - p[3]).abs() < 0.005, "{p:?}");
    }
}

#[test]
fn turtlebot_base_height_follows_generated_terrain() {
    let dir = tempfile::tempdir().unwrap();
    let terrain =
        "{seed: 3, resolution: 96, size: [20.0, 20.0], height: 1.0, roughness: 0.5, octaves: 4}";
    let t = Terrain::generate(&cfg(terrain));
    let s = drive_over(dir.path(), terrain, &t, (-4.0, 1.0), 12.0);
    let zs: Vec<f64> = s.iter().map(|p| p[3]).collect();
    let span = zs.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        - zs.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(span > 0.03, "the path is not flat: terrain varies {span} m under it: {s:?}");
    let worst = s.iter().map(|p| (p[2] - p[3]).abs()).fold(0.0, f64::max);
    eprintln!("generated terrain: {} samples, terrain span {span:.3} m, worst |base z - terrain| {worst:.4} m", s.len());
    assert!(worst < 0.02, "{s:?}");
}

#[test]
fn refuse_heightfield_bad_config() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("rgb.png"), []).unwrap();
    write_npy(&dir.path().join("line.npy"), 1, 5, |_, c| c as f64);
    let cases: &[(&str, &str)] = &[
        ("{source: dem.tif}", "components.heightfield.source: `dem.tif`: GeoTIFF is not read here; convert the DEM to a .npy array (e.g. numpy.save) or a 16-bit grayscale .png"),
        ("{source: dem.obj}", "components.heightfield.source: `dem.obj`: use `generated`, a .npy array or a grayscale .png"),
        ("{source: missing.npy}", "components.heightfield.source:"),
        ("{source: line.npy}", "line.npy: 1 x 5 samples; a height field needs at least 2 x 2"),
        ("{source: rgb.png}", "rgb.png: not a PNG"),
        ("{height: 0}", "components.heightfield.height: must be > 0 (m), got 0: a flat ground is a plane (omit the heightfield)"),
        ("{base: 0}", "components.heightfield.base: must be > 0 (m), got 0: the solid below the lowest sample"),
        ("{resolution: 1}", "components.heightfield.resolution: must be within 2..=4096 samples per side, got 1"),
        ("{roughness: 1.5}", "components.heightfield.roughness: must be within 0..1, got 1.5"),
        ("{octaves: 0}", "components.heightfield.octaves: must be within 1..=10, got 0"),
        ("{size: [0, 5]}", "components.heightfield.size[0]: must be > 0 (m), got 0"),
        ("{friction: [-1, 0, 0]}", "components.heightfield.friction: every coefficient must be a finite number >= 0"),
        ("{seeds: 1}", "unknown field `seeds`"),
    ];
    for (c, needle) in cases {
        let e = common::refusal_in(&format!("components:\n  - heightfield: {c}\n"), dir.path());
        assert!(e.contains(needle), "{c}: missing `{needle}` in:\n{e}");
    }
    let e = common::refusal_in("components:\n  - heightfield: {}\n  - floorplan: {lines: [{id: 0, x0_m: 0, y0_m: 0, x1_m: 1, y1_m: 0}]}\n", dir.path());
    assert!(
        e.contains("two plugins build a ground and light (heightfield, floorplan); keep one"),
        "{e}"
    );
}
