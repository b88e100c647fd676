//! The culled ray cast (src/mujoco/raycast.rs) against plain `mj_multiRay`: bitwise the same
//! distances and geom ids on a cluttered world — every primitive type, a mesh, a height field,
//! an invisible geom, a geom of another group, moving bodies, a present and an absent TurtleBot
//! — from level and tilted scanners, with and without static geometry, at several cutoffs; and
//! `cast_within` equal to it within the cutoff and empty beyond.

mod common;

use roqsim::mujoco::raycast::{RayBatch, VISIBLE_GROUPS};
use roqsim::Engine;

fn scene_xml() -> String {
    let mut g = String::new();
    for i in 0..10 {
        let (x, y) = (-4.0 + i as f64 * 0.9, if i % 2 == 0 { -1.5 } else { 1.7 });
        g += &format!(
            "    <geom type=\"box\" pos=\"{x} {y} 0.3\" size=\"0.2 0.3 0.3\" euler=\"0 0 {}\"/>\n",
            i * 17
        );
        g += &format!(
            "    <geom type=\"cylinder\" pos=\"{x} {} 0.4\" size=\"0.1 0.4\"/>\n",
            y * 0.5
        );
    }
    g += "    <geom type=\"sphere\" pos=\"2 0.6 0.25\" size=\"0.25\"/>\n";
    g += "    <geom type=\"capsule\" pos=\"-2 0.6 0.2\" size=\"0.1 0.5\" euler=\"0 90 30\"/>\n";
    g += "    <geom type=\"ellipsoid\" pos=\"0.5 -0.8 0.3\" size=\"0.3 0.1 0.2\" euler=\"10 0 45\"/>\n";
    g += "    <geom type=\"mesh\" mesh=\"octa\" pos=\"-0.8 -0.9 0.25\" euler=\"0 0 20\"/>\n";
    g += "    <geom name=\"ghost\" type=\"box\" pos=\"1.2 0 0.3\" size=\"0.2 0.2 0.3\" rgba=\"1 1 1 0\"/>\n";
    g += "    <geom name=\"grouped\" type=\"box\" pos=\"-1.4 0 0.3\" size=\"0.2 0.2 0.3\" group=\"3\"/>\n";
    g += "    <geom type=\"hfield\" hfield=\"bumps\" pos=\"3.5 -1 0\"/>\n";
    for i in 0..4 {
        g += &format!(
            "    <body pos=\"{} 0.9 0.6\" euler=\"{} {} 0\"><freejoint/><geom type=\"box\" size=\"0.12 0.08 0.1\"/><geom type=\"sphere\" pos=\"0 0 0.15\" size=\"0.05\"/></body>\n",
            -3.0 + i as f64 * 1.8,
            i * 20,
            i * 10
        );
    }
    // Two rows of people and posts on mocap bodies (a level scan meets an upright capsule or
    // cylinder only in its section by the scan plane): walker-sized capsules sunk into the
    // floor, small capsules and cylinders whose caps and ends the scanner heights cut, and
    // capsules tilted from 0.5 to 75 degrees.
    for i in 0..16 {
        let (x, y) = (-5.4 + i as f64 * 0.72, if i % 2 == 0 { -2.45 } else { 2.45 });
        let tilt = [0.5, 5.0, 25.0, 50.0, 75.0][i % 5];
        let geom = match i % 4 {
            0 => "<geom type=\"capsule\" pos=\"0 0 0.745\" size=\"0.26 0.745\"/>".to_string(),
            1 => "<geom type=\"capsule\" pos=\"0 0 0.6\" size=\"0.1 0.15\"/>".to_string(),
            2 => "<geom type=\"cylinder\" pos=\"0 0 0.3\" size=\"0.15 0.3\"/>".to_string(),
            _ => format!(
                "<geom type=\"capsule\" pos=\"0 0 0.5\" size=\"0.12 0.35\" euler=\"{tilt} 0 {}\"/>",
                i * 23
            ),
        };
        g += &format!("    <body mocap=\"true\" pos=\"{x} {y} 0\">{geom}</body>\n");
    }
    let walls = [
        (0.0, -3.0, 6.0, 0.05),
        (0.0, 3.0, 6.0, 0.05),
        (-6.0, 0.0, 0.05, 3.0),
        (6.0, 0.0, 0.05, 3.0),
    ];
    for (x, y, sx, sy) in walls {
        g += &format!("    <geom type=\"box\" pos=\"{x} {y} 1.0\" size=\"{sx} {sy} 1.0\"/>\n");
    }
    let elev: Vec<String> = (0..25).map(|k| format!("{:.2}", ((k * 7) % 5) as f64 * 0.2)).collect();
    format!(
        "<mujoco model=\"clutter\">\n  <asset>\n    <mesh name=\"octa\" vertex=\"0.2 0 0  -0.2 0 0  0 0.2 0  0 -0.2 0  0 0 0.25  0 0 -0.25\"/>\n    <hfield name=\"bumps\" nrow=\"5\" ncol=\"5\" size=\"0.8 0.8 0.3 0.05\" elevation=\"{}\"/>\n  </asset>\n  <worldbody>\n    <geom name=\"floor\" type=\"plane\" size=\"10 10 0.1\"/>\n{g}  </worldbody>\n</mujoco>\n",
        elev.join(" ")
    )
}

fn world() -> (Engine, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("clutter.xml"), scene_xml()).unwrap();
    let yaml = "sim: {world: clutter.xml}\ncomponents:\n  - spawn_robot: {model: turtlebot4, pose: {position: {x: -3.0, y: 0.2}, orientation: {yaw: 0.3}}}\n    name: robot\n  - spawn_robot: {model: turtlebot4, namespace: other, prefix: o_, present: false, pose: {position: {x: 1.0, y: 0.3}}}\n    name: other\n";
    let mut e = common::engine_in(yaml, dir.path());
    e.step_n(50).unwrap(); // the free bodies fall and tumble: moving, non-axis-aligned geoms
    (e, dir)
}

/// A small deterministic generator (no dependency on the engine's RNG).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Directions of a scanner with roll/pitch/yaw: `n` rays in its xy plane.
fn scan_dirs(b: &mut RayBatch, n: usize, roll: f64, pitch: f64, yaw: f64) {
    let (sr, cr, sp, cp, sy, cy) =
        (roll.sin(), roll.cos(), pitch.sin(), pitch.cos(), yaw.sin(), yaw.cos());
    // R = Rz(yaw) Ry(pitch) Rx(roll): columns x and y of the scanner frame.
    let ex = [cy * cp, sy * cp, -sp];
    let ey = [cy * sp * sr - sy * cr, sy * sp * sr + cy * cr, cp * sr];
    for i in 0..n {
        let a = -std::f64::consts::PI + i as f64 * std::f64::consts::TAU / n as f64;
        let (s, c) = a.sin_cos();
        b.set_dir(i, [ex[0] * c + ey[0] * s, ex[1] * c + ey[1] * s, ex[2] * c + ey[2] * s]);
    }
}

#[test]
fn culled_cast_equals_mj_multi_ray_bitwise() {
    let (mut e, _dir) = world();
    let m = e.ctx.model();
    let ngeom = m.ffi().ngeom as usize;
    let base = m.body("robot_base_link").map(|b| b.id).or_else(|| {
        (0..m.ffi().nbody as usize).find(|&b| m.body_weldid()[b] as usize == b && b > 0)
    });
    let mut all_groups = VISIBLE_GROUPS;
    all_groups[5] = 1;
    let mut rng = Lcg(7);
    let (mut a, mut b, mut c) = (RayBatch::new(360), RayBatch::new(360), RayBatch::new(360));
    let (mut rays, mut hits, mut compared) = (0usize, 0usize, 0usize);
    // cast_within: rays whose mj_multiRay answer lay beyond the cutoff, and within it
    let (mut beyond, mut within) = (0usize, 0usize);
    let mut hit_geoms = std::collections::BTreeSet::new();
    for trial in 0..120 {
        let origin = [rng.next() * 10.0 - 5.0, rng.next() * 5.0 - 2.5, 0.05 + rng.next() * 0.8];
        let tilted = trial % 3 != 0;
        let (roll, pitch) =
            if tilted { ((rng.next() - 0.5) * 1.2, (rng.next() - 0.5) * 1.2) } else { (0.0, 0.0) };
        scan_dirs(&mut a, 360, roll, pitch, rng.next() * 6.0);
        if trial % 6 == 5 {
            // a 3D pattern (no scan plane): random unit directions
            for i in 0..360 {
                let (z, phi) = (rng.next() * 2.0 - 1.0, rng.next() * std::f64::consts::TAU);
                let r = (1.0 - z * z).sqrt();
                a.set_dir(i, [r * phi.cos(), r * phi.sin(), z]);
            }
        }
        b.dirs_mut().copy_from_slice(&{ a.dirs_mut().to_vec() });
        c.dirs_mut().copy_from_slice(&{ a.dirs_mut().to_vec() });
        let cutoff = [0.3, 1.0, 3.0, 12.0, 40.0][trial % 5];
        let mask = if trial % 4 == 1 { Some(&all_groups) } else { None };
        let include_static = trial % 7 != 3;
        let exclude = if trial % 2 == 0 { base } else { None };
        a.cast(e.ctx.data_mut(), origin, exclude, mask, include_static, cutoff);
        b.cast_reference(e.ctx.data_mut(), origin, exclude, mask, include_static, cutoff);
        c.cast_within(e.ctx.data_mut(), origin, exclude, mask, include_static, cutoff);
        for i in 0..360 {
            // cast_within: mj_multiRay's answer within the cutoff, no hit beyond it
            let want = if b.dist()[i] > cutoff {
                beyond += 1;
                ((-1.0f64).to_bits(), -1)
            } else {
                within += usize::from(b.dist()[i] >= 0.0);
                (b.dist()[i].to_bits(), b.geom()[i])
            };
            assert_eq!(
                (c.dist()[i].to_bits(), c.geom()[i]),
                want,
                "trial {trial} ray {i} (cutoff {cutoff}): cast_within {} (geom {}) vs mj_multiRay {} (geom {})",
                c.dist()[i],
                c.geom()[i],
                b.dist()[i],
                b.geom()[i]
            );
            assert_eq!(
                (a.dist()[i].to_bits(), a.geom()[i]),
                (b.dist()[i].to_bits(), b.geom()[i]),
                "trial {trial} ray {i}: culled {} (geom {}) vs mj_multiRay {} (geom {})",
                a.dist()[i],
                a.geom()[i],
                b.dist()[i],
                b.geom()[i]
            );
        }
        rays += 360;
        compared += 1;
        hits += b.dist().iter().filter(|d| **d >= 0.0).count();
        hit_geoms.extend(b.geom().iter().filter(|g| **g >= 0).map(|g| m_type(&e, *g as usize)));
    }
    assert_eq!((compared, rays), (120, 43200));
    // cast_within met both cases often: returns beyond the cutoff dropped, returns within kept.
    assert!(beyond > 5000 && within > 10000, "beyond: {beyond}, within: {within}");
    // The comparison saw real returns of every kind of geom in the scene.
    assert!(hits > 20000, "hits: {hits} of {rays}");
    let kinds: Vec<&str> = hit_geoms.iter().map(|s| s.as_str()).collect();
    for k in ["box", "cylinder", "sphere", "capsule", "ellipsoid", "mesh", "hfield", "plane"] {
        assert!(kinds.contains(&k), "no ray hit a {k}: {kinds:?} ({ngeom} geoms)");
    }
}

fn m_type(e: &Engine, g: usize) -> String {
    let t = e.ctx.model().geom_type()[g] as i32;
    ["plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh", "sdf"]
        .get(t as usize)
        .unwrap_or(&"other")
        .to_string()
}

#[test]
fn absent_ghost_and_grouped_geoms_are_never_returned_by_default() {
    let (mut e, _dir) = world();
    let m = e.ctx.model();
    let ghost = m.geom("ghost").unwrap().id as i32;
    let grouped = m.geom("grouped").unwrap().id as i32;
    // From between the ghost (x = 1.2) and the absent robot (x = 1.0), looking around.
    let mut a = RayBatch::new(720);
    scan_dirs(&mut a, 720, 0.0, 0.0, 0.0);
    a.cast(e.ctx.data_mut(), [1.1, 0.0, 0.2], None, None, true, 20.0);
    let absent_group: Vec<i32> = (0..e.ctx.model().ffi().ngeom as usize)
        .filter(|&g| e.ctx.model().geom_group()[g] == 5)
        .map(|g| g as i32)
        .collect();
    assert!(!absent_group.is_empty(), "the absent robot's geoms are in group 5");
    assert!(a.geom().iter().all(|g| *g != ghost && !absent_group.contains(g)));
    // The grouped box is visible with the default mask (group 3 is not excluded) ...
    assert!(a.geom().contains(&grouped));
    // ... and gone with a mask that excludes group 3.
    let mut mask = VISIBLE_GROUPS;
    mask[3] = 0;
    a.cast(e.ctx.data_mut(), [1.1, 0.0, 0.2], None, Some(&mask), true, 20.0);
    assert!(!a.geom().contains(&grouped));
}

/// Rays the cull's margins are about: along the world axes and the diagonals (parallel to the
/// walls' and the boxes' faces: the slab test's near-zero components), straight up and down,
/// from origins on a wall's face, inside a box, inside the mesh and at a box's corner height;
/// every answer bitwise `mj_multiRay`'s, by `cast` and (within the cutoff) `cast_within`.
#[test]
fn axis_parallel_and_inside_rays_equal_mj_multi_ray_bitwise() {
    let (mut e, _dir) = world();
    let mut dirs: Vec<[f64; 3]> = Vec::new();
    for k in 0..16 {
        let a = k as f64 * std::f64::consts::FRAC_PI_8;
        dirs.push([a.cos(), a.sin(), 0.0]);
        let (s, c) = a.sin_cos();
        dirs.push([c * 0.6, s * 0.6, 0.8]);
        dirs.push([c * 0.6, s * 0.6, -0.8]);
    }
    for d in [[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -1.0, 0.0]] {
        dirs.push(d);
    }
    dirs.push([0.0, 0.0, 1.0]);
    dirs.push([0.0, 0.0, -1.0]);
    dirs.push([-0.0, -1.0, 0.0]);
    dirs.push([-1.0, -0.0, -0.0]);
    let n = dirs.len();
    let origins = [
        [0.0, 2.95, 1.0],   // on the inner face of the +y wall
        [5.95, 0.0, 0.5],   // on the inner face of the +x wall
        [-4.0, -1.5, 0.3],  // inside the first box
        [-0.8, -0.9, 0.25], // inside the mesh
        [0.0, 0.0, 0.6],    // at the boxes' top height
        [2.0, 0.6, 0.25],   // the sphere's centre
        [3.5, -1.0, 0.1],   // above the height field
        [-5.9, -2.9, 1.0],  // a room corner
    ];
    let (mut a, mut b, mut c) = (RayBatch::new(n), RayBatch::new(n), RayBatch::new(n));
    let mut hits = 0;
    for (k, origin) in origins.iter().enumerate() {
        for (i, d) in dirs.iter().enumerate() {
            a.set_dir(i, *d);
            b.set_dir(i, *d);
            c.set_dir(i, *d);
        }
        for cutoff in [0.5, 2.0, 30.0] {
            a.cast(e.ctx.data_mut(), *origin, None, None, true, cutoff);
            b.cast_reference(e.ctx.data_mut(), *origin, None, None, true, cutoff);
            c.cast_within(e.ctx.data_mut(), *origin, None, None, true, cutoff);
            for i in 0..n {
                let want = (b.dist()[i].to_bits(), b.geom()[i]);
                assert_eq!(
                    (a.dist()[i].to_bits(), a.geom()[i]),
                    want,
                    "origin {k} ray {i} cutoff {cutoff}: culled {} (geom {}) vs mj_multiRay {} (geom {})",
                    a.dist()[i],
                    a.geom()[i],
                    b.dist()[i],
                    b.geom()[i]
                );
                let want_within =
                    if b.dist()[i] > cutoff { ((-1.0f64).to_bits(), -1) } else { want };
                assert_eq!((c.dist()[i].to_bits(), c.geom()[i]), want_within, "origin {k} ray {i}");
                hits += usize::from(b.dist()[i] >= 0.0);
            }
        }
    }
    // Most of these rays hit something (the walls, the floor, the geom they start in).
    assert!(hits > 3 * origins.len() * n / 2, "hits: {hits} of {}", 3 * origins.len() * n);
}

/// Level and nearly level scans from among the rows of people and posts (the scan-plane
/// section of a capsule or cylinder): scanner heights below, through and above the small
/// capsules' caps and the cylinders' ends, pitched by 0, 1e-9, 1e-4 and 0.05 rad; every answer
/// bitwise `mj_multiRay`'s, by `cast` and (within the cutoff) `cast_within`.
#[test]
fn level_scans_among_upright_capsules_equal_mj_multi_ray_bitwise() {
    let (mut e, _dir) = world();
    let (mut a, mut b, mut c) = (RayBatch::new(720), RayBatch::new(720), RayBatch::new(720));
    let mut rng = Lcg(11);
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    let mut compared = 0;
    for trial in 0..96 {
        let row = if trial % 2 == 0 { -2.45 } else { 2.45 };
        let height = [0.05, 0.3, 0.45, 0.5, 0.6, 0.75, 0.8, 0.85, 1.2, 1.6, 0.2, 0.01][trial % 12];
        let origin = [rng.next() * 11.0 - 5.5, row + (rng.next() - 0.5) * 0.5, height];
        let pitch = [0.0, 1e-9, 1e-4, 0.05][trial % 4];
        scan_dirs(&mut a, 720, 0.0, pitch, rng.next() * 6.0);
        b.dirs_mut().copy_from_slice(&{ a.dirs_mut().to_vec() });
        c.dirs_mut().copy_from_slice(&{ a.dirs_mut().to_vec() });
        let cutoff = [0.5, 2.0, 12.0][trial % 3];
        a.cast(e.ctx.data_mut(), origin, None, None, true, cutoff);
        b.cast_reference(e.ctx.data_mut(), origin, None, None, true, cutoff);
        c.cast_within(e.ctx.data_mut(), origin, None, None, true, cutoff);
        for i in 0..720 {
            let want = (b.dist()[i].to_bits(), b.geom()[i]);
            assert_eq!(
                (a.dist()[i].to_bits(), a.geom()[i]),
                want,
                "trial {trial} ray {i}: culled {} (geom {}) vs mj_multiRay {} (geom {})",
                a.dist()[i],
                a.geom()[i],
                b.dist()[i],
                b.geom()[i]
            );
            let want_within = if b.dist()[i] > cutoff { ((-1.0f64).to_bits(), -1) } else { want };
            assert_eq!((c.dist()[i].to_bits(), c.geom()[i]), want_within, "trial {trial} ray {i}");
            if b.geom()[i] >= 0 {
                *kinds.entry(m_type(&e, b.geom()[i] as usize)).or_default() += 1;
            }
        }
        compared += 1;
    }
    assert_eq!(compared, 96);
    // The scans met the people and posts often, not only the walls and the floor.
    for (k, min) in [("capsule", 5000), ("cylinder", 1000)] {
        let n = kinds.get(k).copied().unwrap_or(0);
        assert!(n > min, "{k} returns: {n} (all: {kinds:?})");
    }
}
