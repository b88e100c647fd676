//! Composition and asset borrowing across installed packages (`share/<package>/worlds`,
//! `share/<package>/models` on AMENT_PREFIX_PATH). One test in its own binary, because it sets
//! AMENT_PREFIX_PATH for the process.

use std::path::{Path, PathBuf};

use roqsim::world::WorldDef;
use roqsim::{load_world, load_world_str, Engine, EngineOptions, LoadOptions};

mod common;
use common::write;

const TETRA_OBJ: &str =
    "v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";

fn meshed_model(dir: &Path, manifest: &str) -> PathBuf {
    write(
        dir,
        "wedge/wedge.xml",
        "<!-- A meshed test prop. -->\n<mujoco model=\"wedge\"><asset><mesh name=\"wedge\" file=\"wedge.obj\"/></asset>\
         <worldbody><body name=\"wedge\"><geom type=\"mesh\" mesh=\"wedge\" mass=\"0.2\"/></body></worldbody></mujoco>",
    );
    write(dir, "wedge/wedge.manifest.yaml", manifest);
    dir.join("wedge/wedge.xml")
}

#[test]
fn package_parents_and_borrowed_assets() {
    let prefix = tempfile::tempdir().unwrap();
    let share = prefix.path().join("share");
    write(
        &share,
        "acme_worlds/worlds/depot.yaml",
        "# A depot cell for tests.\nsim: {world: depot/depot.xml, timestep: 0.004}\n\
         components:\n  - dummy: {size: 0.1}\n    name: a\n  - dummy: {size: 0.2}\n    name: graspable_box\n",
    );
    write(
        &share,
        "acme_worlds/worlds/depot/depot.xml",
        "<mujoco><worldbody><geom name=\"floor\" type=\"plane\" size=\"5 5 0.1\"/></worldbody></mujoco>",
    );
    write(&share, "acme_meshes/models/meshes/wedge.obj", TETRA_OBJ);
    let old = std::env::var("AMENT_PREFIX_PATH").unwrap_or_default();
    std::env::set_var("AMENT_PREFIX_PATH", format!("{}:{old}", prefix.path().display()));

    // extends a package world: its relative sim.world becomes a package reference.
    let dir = tempfile::tempdir().unwrap();
    let child = write(
        dir.path(),
        "child.yaml",
        "extends: acme_worlds:depot\ndisable: [graspable_box]\nsim: {timestep: 0.001}\n",
    );
    let w = load_world(&child, &LoadOptions::default()).unwrap();
    assert_eq!(w.sim.world.as_deref(), Some("acme_worlds:depot/depot.xml"));
    let scene = share.join("acme_worlds/worlds/depot/depot.xml").canonicalize().unwrap();
    assert_eq!(w.world, WorldDef::Mjcf(scene.clone()));
    assert_eq!(w.timestep, 0.001);
    assert_eq!(w.components.iter().map(|c| c.args.address.as_str()).collect::<Vec<_>>(), ["a"]);
    // The positional world argument takes the same ref.
    assert_eq!(
        roqsim::runner::resolve_world("acme_worlds:depot").unwrap(),
        share.join("acme_worlds/worlds/depot.yaml").canonicalize().unwrap()
    );
    let e = roqsim::runner::resolve_world("acme_worlds:nope").unwrap_err();
    assert!(
        e.starts_with(
            "world `acme_worlds:nope` not found: package `acme_worlds` has no `nope.yaml` in "
        ),
        "{e}"
    );
    assert!(e.ends_with("; `acme_worlds` ships: depot"), "{e}");

    // A model that borrows its mesh from another provider's share/<pkg>/models/meshes.
    let models = tempfile::tempdir().unwrap();
    let m = meshed_model(models.path(), "license: original\nassets: acme_meshes\n");
    let yaml = format!("components:\n  - spawn_model: {{model: {}}}\n    name: w1\n", m.display());
    let w = load_world_str(&yaml, models.path(), &LoadOptions::default()).unwrap();
    let e = Engine::new(w, EngineOptions { profile: false, seed: Some(0) }).unwrap();
    assert_eq!(e.ctx.model().ffi().nmesh, 1);
    assert_eq!(e.ctx.model().mesh_vertnum()[0], 4);

    // Without the borrow the mesh is not found, naming the folders searched.
    let m2 = tempfile::tempdir().unwrap();
    let m = meshed_model(m2.path(), "license: original\n");
    let yaml = format!("components:\n  - spawn_model: {{model: {}}}\n    name: w1\n", m.display());
    let w = load_world_str(&yaml, m2.path(), &LoadOptions::default()).unwrap();
    let err = match Engine::new(w, EngineOptions { profile: false, seed: Some(0) }) {
        Ok(_) => panic!("the mesh resolved without the borrow"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("mesh file `wedge.obj` of model"), "{err}");

    // Borrowing from a provider that is not installed is refused at load.
    let m3 = tempfile::tempdir().unwrap();
    let m = meshed_model(m3.path(), "assets: [acme_meshes, no_such_pkg]\n");
    let yaml = format!("components:\n  - spawn_robot: {{model: {}}}\n    name: w1\n", m.display());
    let err = load_world_str(&yaml, m3.path(), &LoadOptions::default()).unwrap_err();
    let want = format!(
        "{}: assets: `assets:` borrows from `no_such_pkg`, which is no installed model provider: use `roqsim` or a \
         package with share/no_such_pkg/models on AMENT_PREFIX_PATH",
        m3.path().join("wedge/wedge.manifest.yaml").canonicalize().unwrap().display()
    );
    assert!(
        err.0.iter().any(|e| e.path == "components.w1.model" && e.message == want),
        "want {want}\ngot {err}"
    );

    // A recording keys a packaged input by `package://`, so a replay finds it after the package
    // moved prefixes (and reads an older recording's absolute keys as before).
    use roqsim::record::provenance::{
        chain_from_json, chain_json, hash_file, hash_input, input_hashes, RunInputs,
    };
    use roqsim::world::load_world_recorded;
    let w = load_world(&child, &LoadOptions::default()).unwrap();
    let inputs = RunInputs { world_path: child.clone(), ..Default::default() };
    let hashes = input_hashes(&inputs, &w);
    let child_key = child.canonicalize().unwrap().display().to_string();
    let keys: Vec<&str> = hashes.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            child_key.as_str(),
            "package://acme_worlds/worlds/depot.yaml",
            "package://acme_worlds/worlds/depot/depot.xml"
        ]
    );
    let depot_hash = hash_file(&scene).unwrap();
    assert_eq!(hashes["package://acme_worlds/worlds/depot/depot.xml"], depot_hash);
    // The package parent is kept by its package key, with its package and text.
    let chain = chain_from_json(&chain_json(&w.doc.parents)).unwrap();
    assert_eq!(chain.len(), 1);
    assert_eq!(chain[0].0, "package://acme_worlds/worlds/depot.yaml");
    assert_eq!(chain[0].1.package.as_ref().map(|(p, _)| p.as_str()), Some("acme_worlds"));
    assert!(chain[0].1.text.starts_with("# A depot cell for tests."));
    let moved = tempfile::tempdir().unwrap();
    std::fs::rename(&share, moved.path().join("share")).unwrap();
    std::env::set_var("AMENT_PREFIX_PATH", format!("{}:{old}", moved.path().display()));
    for (k, h) in &hashes {
        assert_eq!(&hash_input(k), h, "{k}");
    }
    // Composed from the kept text after the package moved: the scene resolves in its new place.
    let parents: Vec<_> = chain.into_iter().map(|(_, p)| p).collect();
    let text = std::fs::read_to_string(&child).unwrap();
    let again = load_world_recorded(&text, dir.path(), &parents, &LoadOptions::default()).unwrap();
    let moved_scene =
        moved.path().join("share/acme_worlds/worlds/depot/depot.xml").canonicalize().unwrap();
    assert_eq!(again.world, WorldDef::Mjcf(moved_scene));
    assert_eq!(again.components.len(), w.components.len());
    std::env::set_var("AMENT_PREFIX_PATH", &old);
    assert!(hash_input("package://acme_worlds/worlds/depot/depot.xml").starts_with("unreadable: "));
}
