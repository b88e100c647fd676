//! World composition (`extends:` / `disable:`), manifest keys, and the refusals that keep an
//! accepted key from doing nothing. Every refusal is asserted by its message.

mod common;

use common::{assert_refused_at, assert_refused_exactly, root};
use std::path::{Path, PathBuf};

use roqsim::error::ConfigErrors;
use roqsim::world::document::Origin;
use roqsim::world::WorldDef;
use roqsim::{load_world, load_world_str, Engine, EngineOptions, LoadOptions, LoadedWorld};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, text).unwrap();
    p
}

fn load(p: &Path) -> Result<LoadedWorld, ConfigErrors> {
    load_world(p, &LoadOptions::default())
}

fn addresses(w: &LoadedWorld) -> Vec<&str> {
    w.components.iter().map(|c| c.args.address.as_str()).collect()
}

// ------------------------------------------------------------------------------- extends

/// The issue's example: a child extends a bundled world, sets sim.timestep, disables an inherited
/// prop and adds a robot.
#[test]
fn child_extends_bundled_world_sets_timestep_disables_prop_adds_robot() {
    let dir = tempfile::tempdir().unwrap();
    let child = write(
        dir.path(),
        "child.yaml",
        "extends: roqsim:ur_pick\n\
         sim:\n  timestep: 0.001\n\
         disable:\n  - pick_box\n\
         components:\n\
         \x20 - spawn_robot: {model: turtlebot4, pose: {position: {x: 2.0, y: 1.0}}}\n\
         \x20   name: robot\n",
    );
    let w = load(&child).unwrap();
    // sim deep-merged: the child's timestep, the parent's noslip_iterations.
    assert_eq!(w.timestep, 0.001);
    assert_eq!(w.sim.noslip_iterations, Some(10));
    // Kept parent components first (pick_box dropped), the child's appended after them.
    let addr = addresses(&w);
    assert_eq!(
        addr,
        [
            "table",
            "ur",
            "ur.arm_controller",
            "ur.ft",
            "robot",
            "robot.diff_drive",
            "robot.rplidar",
            "robot.rplidar.lidar",
            "robot.imu",
            "robot.cliff_side_left",
            "robot.cliff_side_right",
            "robot.cliff_front_left",
            "robot.cliff_front_right",
            "robot.ir_intensity_side_left",
            "robot.ir_intensity_left",
            "robot.ir_intensity_front_left",
            "robot.ir_intensity_front_center_left",
            "robot.ir_intensity_front_center_right",
            "robot.ir_intensity_front_right",
            "robot.ir_intensity_right",
        ]
    );
    // The chain records the parent file.
    assert_eq!(w.doc.chain, [root().join("worlds/ur_pick.yaml").canonicalize().unwrap()]);
    // It builds: the arm, the table and the robot, no pick box.
    let e = Engine::new(w, EngineOptions { profile: false, seed: Some(0) }).unwrap();
    let mut names = e.ctx.entities.names();
    names.sort();
    assert_eq!(names, ["robot", "robot.rplidar", "table", "ur"]);
    assert_eq!(e.dt(), 0.001);
}

#[test]
fn parents_extend_in_turn_and_deep_merge_sim() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.yaml",
        "sim: {timestep: 0.004, seed: 3, gravity: [0, 0, -9.81]}\n\
         components:\n  - dummy: {size: 0.1}\n    name: a\n  - dummy: {size: 0.2}\n    name: b\n",
    );
    write(
        dir.path(),
        "mid/b.yaml",
        "extends: ../a.yaml\nsim: {seed: 4}\ncomponents:\n  - dummy: {size: 0.3}\n    name: c\n",
    );
    let c = write(
        dir.path(),
        "c.yaml",
        "extends: mid/b.yaml\nsim: {gravity: [0, 0, 0]}\ndisable: [a]\n\
         components:\n  - dummy: {size: 0.4}\n    name: d\n",
    );
    let w = load(&c).unwrap();
    assert_eq!(addresses(&w), ["b", "c", "d"]);
    assert_eq!(w.timestep, 0.004);
    assert_eq!(w.sim.seed, Some(4));
    assert_eq!(w.sim.gravity, Some([0.0, 0.0, 0.0]));
    let chain: Vec<String> =
        w.doc.chain.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(chain, ["a.yaml", "b.yaml"]);
}

#[test]
fn disable_drops_an_inherited_entry_with_everything_nested_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let c = write(
        dir.path(),
        "c.yaml",
        "extends: roqsim:turtlebot_empty\ndisable: [robot]\n\
         components:\n  - spawn_robot: {model: husky_a200}\n    name: husky\n",
    );
    let w = load(&c).unwrap();
    assert!(addresses(&w).iter().all(|a| !a.starts_with("robot")), "{:?}", addresses(&w));
    assert_eq!(addresses(&w)[0], "husky");
}

#[test]
fn a_parents_relative_sim_world_resolves_from_the_parent() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "cell/scene.xml",
        "<mujoco><option timestep=\"0.003\"/><worldbody><geom name=\"floor\" type=\"plane\" size=\"2 2 0.1\"/></worldbody></mujoco>",
    );
    write(dir.path(), "cell/cell.yaml", "sim: {world: scene.xml}\ncomponents:\n  - dummy: {}\n");
    let child = write(dir.path(), "runs/child.yaml", "extends: ../cell/cell.yaml\n");
    let w = load(&child).unwrap();
    let want = dir.path().join("cell/scene.xml").canonicalize().unwrap();
    assert_eq!(w.world, WorldDef::Mjcf(want.clone()));
    // The effective document names the parent's file by absolute path.
    assert_eq!(w.sim.world.as_deref().map(PathBuf::from), Some(dir.path().join("cell/scene.xml")));
    // The MJCF's own timestep is used.
    assert_eq!(w.timestep, 0.003);
}

#[test]
fn an_inherited_component_reads_its_files_from_the_parents_folder() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "site/plan.json",
        r#"{"lines": [{"id": 0, "x0_m": 0.0, "y0_m": 0.0, "x1_m": 4.0, "y1_m": 0.0}], "doors": []}"#,
    );
    write(dir.path(), "site/site.yaml", "components:\n  - floorplan: {floorplan: plan.json}\n");
    let child = write(dir.path(), "elsewhere/child.yaml", "extends: ../site/site.yaml\n");
    let w = load(&child).unwrap();
    assert_eq!(addresses(&w), ["floorplan"]);
    assert_eq!(w.components[0].args.base_dir, dir.path().join("site"));
    let e = Engine::new(w, EngineOptions { profile: false, seed: Some(0) }).unwrap();
    let m = e.ctx.model();
    assert!(m.name_to_id(mujoco_rs::prelude::MjtObjBase::mjOBJ_GEOM, "wall_0_0").is_some());
}

#[test]
fn refusal_extends_cycle_names_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.yaml", "extends: b.yaml\ncomponents: []\n");
    write(dir.path(), "b.yaml", "extends: a.yaml\ncomponents: []\n");
    assert_refused_exactly(load(&a), "extends", "in parent world `PARENT`: extends cycle: a.yaml -> b.yaml -> a.yaml; a world cannot inherit from itself"
            .replace("PARENT", &dir.path().join("b.yaml").canonicalize().unwrap().display().to_string())
            .as_str());
    let selfref = write(dir.path(), "s.yaml", "extends: s.yaml\n");
    assert_refused_exactly(
        load(&selfref),
        "extends",
        "extends cycle: s.yaml -> s.yaml; a world cannot inherit from itself",
    );
}

#[test]
fn refusal_extends_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let c = write(dir.path(), "c.yaml", "extends: nowhere.yaml\n");
    assert_refused_exactly(load(&c), "extends", &format!(
            "parent world `nowhere.yaml` not found: `{}` is not a file (a path resolves against this world's folder; a bundled world is `roqsim:<name>`)",
            dir.path().join("nowhere.yaml").display()
        ));
    let c = write(dir.path(), "d.yaml", "extends: roqsim:no_such_world\n");
    assert_refused_at(load(&c), "extends", "parent world `roqsim:no_such_world` not found: package `roqsim` has no `no_such_world.yaml` in ");
    assert_refused_at(
        load(&c),
        "extends",
        "`roqsim` ships: demo, first_run, four_bases, mobile_manipulator",
    );
    let c = write(dir.path(), "e.yaml", "extends: not_a_pkg_here:w\n");
    assert_refused_exactly(load(&c), "extends", "parent world `not_a_pkg_here:w` not found: package `not_a_pkg_here` has no share/not_a_pkg_here/worlds folder on AMENT_PREFIX_PATH (is the package built and its install sourced?)");
    let c = write(dir.path(), "f.yaml", "extends: [a, b]\n");
    assert_refused_exactly(load(&c), "extends", "must name one parent world: a path relative to this file or `<package>:<world>`, got a list");
}

#[test]
fn refusal_disable_without_extends() {
    let r = load_world_str(
        "disable: [a]\ncomponents:\n  - dummy: {}\n    name: a\n",
        root(),
        &LoadOptions::default(),
    );
    assert_refused_exactly(r, "disable", "`disable:` drops components inherited from a parent world and needs `extends:` naming that parent; \
         this world extends nothing, so remove the entries from `components:` instead");
}

#[test]
fn refusal_disable_matching_nothing_lists_the_inherited() {
    let dir = tempfile::tempdir().unwrap();
    let c = write(
        dir.path(),
        "c.yaml",
        "extends: roqsim:ur_pick\ndisable: [pick_box, graspable_box]\n",
    );
    assert_refused_exactly(load(&c), "disable[1]", "`graspable_box` matches no component inherited from `ur_pick.yaml`; inherited: table, ur, pick_box");
    let c = write(dir.path(), "d.yaml", "extends: roqsim:ur_pick\ndisable: pick_box\n");
    assert_refused_exactly(
        load(&c),
        "disable",
        "must be a list of names: write `disable: [pick_box]`",
    );
}

#[test]
fn refusal_redeclaring_an_inherited_label() {
    let dir = tempfile::tempdir().unwrap();
    let c = write(
        dir.path(),
        "c.yaml",
        "extends: roqsim:ur_pick\ncomponents:\n  - box: {size: [0.2, 0.2, 0.2]}\n    name: table\n",
    );
    assert_refused_exactly(load(&c), "components.table", "`table` is already a component inherited from `ur_pick.yaml`; to change it, list it under `disable:` and \
         re-add the changed copy here, or give this one a distinct `name:`");
    // The fix the message names works.
    let c = write(
        dir.path(),
        "d.yaml",
        "extends: roqsim:ur_pick\ndisable: [table]\ncomponents:\n  - box: {size: [0.2, 0.2, 0.2], pose: {position: {x: 2.0}}}\n    name: table\n",
    );
    let w = load(&c).unwrap();
    assert_eq!(addresses(&w)[..2], ["ur", "ur.arm_controller"]);
    assert_eq!(*addresses(&w).last().unwrap(), "table");
}

#[test]
fn a_parents_own_problem_names_the_parent() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "bad.yaml", "sim: {timestep: 0.002}\nfloorplan: {}\n");
    let c = write(dir.path(), "c.yaml", "extends: bad.yaml\n");
    assert_refused_exactly(load(&c), "floorplan", &format!(
            "in parent world `{}`: unknown top-level key; a world has `sim:`, `components:`, `extends:` and `disable:`",
            dir.path().join("bad.yaml").canonicalize().unwrap().display()
        ));
}

#[test]
fn world_argument_takes_a_package_ref() {
    let p = roqsim::runner::resolve_world("roqsim:demo").unwrap();
    assert_eq!(p.canonicalize().unwrap(), root().join("worlds/demo.yaml").canonicalize().unwrap());
}

// ------------------------------------------------------------------- accepted keys act

#[test]
fn refusal_dedup_assets() {
    let r = load_world_str(
        "sim: {dedup_assets: true}\ncomponents:\n  - dummy: {}\n",
        root(),
        &LoadOptions::default(),
    );
    assert_refused_exactly(r, "sim.dedup_assets", "`dedup_assets: true` is refused: roqsim does not merge identical attached assets before compile, so the key \
         would do nothing. Remove it (every attached copy of a model keeps its own meshes and materials)");
}

#[test]
fn unknown_plugin_lists_close_names_and_who_provides_it() {
    let r = load_world_str("components:\n  - diff_driv: {}\n", root(), &LoadOptions::default());
    assert_refused_exactly(r, "components.diff_driv", "unknown plugin `diff_driv`; close names: diff_drive; `roqsim plugins list` shows the registered ones");
    let r = load_world_str(
        "components:\n  - \"my_crate::Rover\": {}\n",
        root(),
        &LoadOptions::default(),
    );
    assert_refused_exactly(r, "components.my_crate::Rover", "unknown plugin `my_crate::Rover`: plugins from another crate are registered by that crate's binary \
         (roqsim::cli::main_with), not named by path; `roqsim plugins list` shows the registered ones");
}

// ------------------------------------------------------------------------ manifests

fn model_dir(dir: &Path, manifest: &str) -> PathBuf {
    write(
        dir,
        "rover/rover.xml",
        "<!-- A test rover. -->\n<mujoco model=\"rover\"><worldbody><body name=\"base_link\"><freejoint/>\
         <geom type=\"box\" size=\"0.1 0.1 0.05\" mass=\"1\"/></body></worldbody></mujoco>",
    );
    write(dir, "rover/rover.manifest.yaml", manifest);
    dir.join("rover/rover.xml")
}

#[test]
fn refusal_unknown_manifest_key() {
    let dir = tempfile::tempdir().unwrap();
    let m = model_dir(dir.path(), "license: original\ncolour: red\ncomponents: []\n");
    let yaml =
        format!("components:\n  - spawn_robot: {{model: {}}}\n    name: rover\n", m.display());
    let r = load_world_str(&yaml, dir.path(), &LoadOptions::default());
    assert_refused_exactly(r, "components.rover.model", &format!(
            "{}: colour: unknown manifest key; roqsim acts on license, source, rest_height, frame_id, camera_name, frames, components, \
             assets, home and nothing else (a key that is not acted on would be silently ignored)",
            dir.path().join("rover/rover.manifest.yaml").canonicalize().unwrap().display()
        ));
}

#[test]
fn manifest_components_have_origin_manifest() {
    let w = load(&root().join("worlds/turtlebot_empty.yaml")).unwrap();
    let origins: Vec<(&str, Origin)> =
        w.components.iter().map(|c| (c.args.address.as_str(), c.origin)).collect();
    assert_eq!(
        origins,
        [
            ("robot", Origin::Document),
            ("robot.diff_drive", Origin::Manifest),
            ("robot.rplidar", Origin::Manifest),
            ("robot.rplidar.lidar", Origin::Manifest),
            ("robot.imu", Origin::Manifest),
            ("robot.cliff_side_left", Origin::Manifest),
            ("robot.cliff_side_right", Origin::Manifest),
            ("robot.cliff_front_left", Origin::Manifest),
            ("robot.cliff_front_right", Origin::Manifest),
            ("robot.ir_intensity_side_left", Origin::Manifest),
            ("robot.ir_intensity_left", Origin::Manifest),
            ("robot.ir_intensity_front_left", Origin::Manifest),
            ("robot.ir_intensity_front_center_left", Origin::Manifest),
            ("robot.ir_intensity_front_center_right", Origin::Manifest),
            ("robot.ir_intensity_front_right", Origin::Manifest),
            ("robot.ir_intensity_right", Origin::Manifest),
        ]
    );
}

// ------------------------------------------------------------- chains, attribution, refusals

/// A chain of `n` files eK.yaml, each extending e(K-1).yaml; e0.yaml holds `bottom`.
fn chain(dir: &Path, n: usize, bottom: &str) -> PathBuf {
    write(dir, "e0.yaml", bottom);
    for k in 1..=n {
        write(dir, &format!("e{k}.yaml"), &format!("extends: e{}.yaml\n", k - 1));
    }
    dir.join(format!("e{n}.yaml"))
}

/// A 7000-level chain (which overflowed the stack) is refused at the bound, naming the chain's
/// first files and the bound; the test thread's 2 MiB stack is enough, so nothing recurses.
#[test]
fn refusal_extends_chain_deeper_than_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let top = chain(dir.path(), 7000, "sim: {timestep: 0.002}\n");
    assert_refused_exactly(load(&top), "extends", "the extends chain is deeper than 64 parent worlds (e7000.yaml -> e6999.yaml -> e6998.yaml -> e6997.yaml -> …); \
         a chain may hold at most 64 (the bound is in docs/bounds.md): fold some of its worlds into one");
    assert_eq!(roqsim::world::bounds::MAX_EXTENDS_DEPTH, 64);
    // 64 parents load; an error at the bottom carries one prefix naming its own file.
    let dir = tempfile::tempdir().unwrap();
    let top = chain(dir.path(), 64, "sim: {timestep: 0.002, bogus: 1}\n");
    let e = load(&top).unwrap_err();
    let bottom = dir.path().join("e0.yaml").canonicalize().unwrap();
    assert_eq!(e.0.len(), 1, "{e}");
    assert_eq!(e.0[0].path, "sim.bogus");
    let want =
        format!("in parent world `{}`: unknown field `bogus`, expected one of ", bottom.display());
    assert!(e.0[0].message.starts_with(&want), "{e}");
    assert_eq!(e.0[0].message.matches("in parent world").count(), 1);
    let dir = tempfile::tempdir().unwrap();
    let top = chain(dir.path(), 64, "sim: {timestep: 0.004}\n");
    assert_eq!(load(&top).unwrap().timestep, 0.004);
}

/// Every problem in an inherited part — a `sim:` key, a component's config, an unknown plugin —
/// names the file it sits in, at any depth; the child's own and a `--set`'s are not attributed.
#[test]
fn errors_in_inherited_parts_name_their_parent_file() {
    let dir = tempfile::tempdir().unwrap();
    let gp = write(
        dir.path(),
        "gp.yaml",
        "sim: {timestep: -1, bogus_key: 2}\ncomponents:\n  - box: {size: [0.1, 0.1, 0.1], bogus: 1}\n    name: b1\n\
         \x20 - nosuchplug: {}\n",
    );
    write(dir.path(), "p.yaml", "extends: gp.yaml\n");
    let c = write(dir.path(), "c.yaml", "extends: p.yaml\n");
    let gp = gp.canonicalize().unwrap().display().to_string();
    assert_refused_exactly(
        load(&c),
        "sim.timestep",
        &format!("in parent world `{gp}`: must be a positive number of seconds, got -1"),
    );
    assert_refused_at(
        load(&c),
        "sim.bogus_key",
        &format!("in parent world `{gp}`: unknown field `bogus_key`"),
    );
    assert_refused_at(
        load(&c),
        "components.b1.bogus",
        &format!("in parent world `{gp}`: unknown field `bogus`"),
    );
    assert_refused_exactly(load(&c), "components.nosuchplug", &format!("in parent world `{gp}`: unknown plugin `nosuchplug`; `roqsim plugins list` shows the registered ones"));
    // The child's own value is the child's.
    let c2 = write(dir.path(), "c2.yaml", "extends: p.yaml\nsim: {timestep: -2}\n");
    assert_refused_exactly(
        load(&c2),
        "sim.timestep",
        "must be a positive number of seconds, got -2",
    );
    // A --set value is the assignment's.
    let opts = LoadOptions {
        assignments: vec![roqsim::world::overrides::parse_set("components.b1.bogus=2").unwrap()],
        ..Default::default()
    };
    let e = load_world(&c, &opts).unwrap_err();
    let set: Vec<_> = e.0.iter().filter(|x| x.path == "components.b1.bogus").collect();
    assert!(set.len() == 1 && set[0].message.starts_with("unknown field `bogus`"), "{e}");
}

/// A prop's manifest is read at load, like a robot's: an `assets:` provider that is not installed
/// and an unknown key are refused before anything is built, also with `default_plugins: false`.
#[test]
fn refusal_a_props_broken_manifest_at_load() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "m/prop.xml",
        "<mujoco model=\"prop\"><worldbody><body name=\"prop_base\"><geom type=\"box\" size=\"0.1 0.1 0.1\"/></body></worldbody></mujoco>",
    );
    let man = write(dir.path(), "m/prop.manifest.yaml", "license: MIT\nassets: nosuchprovider\n");
    let man = man.canonicalize().unwrap().display().to_string();
    let w = write(
        dir.path(),
        "w.yaml",
        "components:\n  - spawn_model: {model: m/prop.xml}\n    name: prop\n",
    );
    assert_refused_exactly(load(&w), "components.prop.model", &format!(
            "{man}: assets: `assets:` borrows from `nosuchprovider`, which is no installed model provider: use `roqsim` \
             or a package with share/nosuchprovider/models on AMENT_PREFIX_PATH"
        ));
    write(dir.path(), "m/prop.manifest.yaml", "license: MIT\ncolour: blue\n");
    let unknown = format!(
        "{man}: colour: unknown manifest key; roqsim acts on license, source, rest_height, frame_id, camera_name, frames, \
         components, assets, home and nothing else (a key that is not acted on would be silently ignored)"
    );
    assert_refused_exactly(load(&w), "components.prop.model", &unknown);
    let r = write(
        dir.path(),
        "r.yaml",
        "components:\n  - spawn_robot: {model: m/prop.xml, default_plugins: false}\n    name: r\n",
    );
    assert_refused_exactly(load(&r), "components.r.model", &unknown);
    let a = write(
        dir.path(),
        "a.yaml",
        "components:\n  - spawn_arm: {model: ur5e, prefix: ur_, default_plugins: false, \
         end_effector: {model: m/prop.xml, prefix: g_}}\n    name: arm\n",
    );
    assert_refused_exactly(
        load(&a),
        "components.arm.model",
        &format!("end_effector.model: {unknown}"),
    );
    // Inherited, it names the parent too.
    let c = write(dir.path(), "c.yaml", "extends: w.yaml\n");
    let parent = w.canonicalize().unwrap().display().to_string();
    assert_refused_exactly(
        load(&c),
        "components.prop.model",
        &format!("in parent world `{parent}`: {unknown}"),
    );
}

#[test]
fn refusal_package_ref_reaching_outside_the_package() {
    let dir = tempfile::tempdir().unwrap();
    let c = write(dir.path(), "c.yaml", "extends: roqsim:/tmp/x\n");
    assert_refused_exactly(load(&c), "extends", "parent world `roqsim:/tmp/x` reaches outside package `roqsim`'s worlds folder: after `roqsim:` write a path \
         inside it (no leading `/`, no `..`); a file elsewhere is named by its own path, without `roqsim:`");
    let c = write(dir.path(), "d.yaml", "extends: roqsim:../worlds/demo\n");
    assert_refused_at(
        load(&c),
        "extends",
        "parent world `roqsim:../worlds/demo` reaches outside package `roqsim`'s worlds folder",
    );
    let c = write(dir.path(), "e.yaml", "sim: {world: \"roqsim:../../etc/x.xml\"}\n");
    assert_refused_at(
        load(&c),
        "sim.world",
        "`roqsim:../../etc/x.xml` reaches outside package `roqsim`'s worlds folder",
    );
    let e = roqsim::runner::resolve_world("roqsim:/tmp/x").unwrap_err();
    assert!(
        e.starts_with("world `roqsim:/tmp/x` reaches outside package `roqsim`'s worlds folder"),
        "{e}"
    );
    let e = roqsim::runner::resolve_world("roqsim:").unwrap_err();
    assert!(
        e.starts_with("world `roqsim:` names no world: write `roqsim:<world>` (bundled: demo, "),
        "{e}"
    );
}

#[test]
fn refusal_empty_extends_and_disable_entries_and_a_parents_syntax_error_keeps_its_hint() {
    let dir = tempfile::tempdir().unwrap();
    let c = write(dir.path(), "c.yaml", "extends: \"\"\n");
    assert_refused_exactly(load(&c), "extends", "is empty: name one parent world, a path relative to this file or `<package>:<world>` (or remove `extends:`)");
    let c = write(dir.path(), "d.yaml", "extends: roqsim:ur_pick\ndisable: [\"\"]\n");
    assert_refused_exactly(
        load(&c),
        "disable[0]",
        "is empty: name an inherited component by its label (its `name:`, else its plugin)",
    );
    let p = write(dir.path(), "p.yaml", "sim:\n  timestep: [1, 2\ncomponents: []\n");
    let c = write(dir.path(), "e.yaml", "extends: p.yaml\n");
    assert_refused_exactly(load(&c), "", &format!(
            "in parent world `{}`: YAML syntax error at line 3, column 11: did not find expected ',' or ']' at line 3 \
             column 11, while parsing a flow sequence at line 2 column 13; check the indentation of line 3: the keys \
             of one mapping line up, and a list item's keys line up after its `- `",
            p.canonicalize().unwrap().display()
        ));
}

#[test]
fn refusal_disable_longer_than_components_may_be_and_duplicates_named() {
    let dir = tempfile::tempdir().unwrap();
    let list = vec!["x"; 2001].join(", ");
    let c = write(dir.path(), "c.yaml", &format!("extends: roqsim:ur_pick\ndisable: [{list}]\n"));
    assert_refused_exactly(
        load(&c),
        "disable",
        "lists 2001 entries; a world may disable at most 2000 (as many as it may hold)",
    );
    // 2000 copies of one inherited label: the first drops it, every other is named as listed twice.
    let list = vec!["pick_box"; 2000].join(", ");
    let c = write(dir.path(), "d.yaml", &format!("extends: roqsim:ur_pick\ndisable: [{list}]\n"));
    let e = load(&c).unwrap_err();
    assert_eq!(e.0.len(), 1999);
    assert_eq!(e.0[1998].path, "disable[1999]");
    assert_eq!(
        e.0[0].message,
        "`pick_box` matches no component inherited from `ur_pick.yaml` (it is listed twice); inherited: table, ur, pick_box"
    );
    // The inherited list is given once; the other misses point at it.
    assert_eq!(
        e.0[1998].message,
        "`pick_box` matches no component inherited from `ur_pick.yaml` (it is listed twice) (the inherited components are listed at disable[1])"
    );
}
