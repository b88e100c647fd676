//! `<package>:<name>` and `package://` floorplan textures from an installed package's layout
//! (`share/<package>/textures/<name>/<name>.png` beside its `manifest.yaml`, found on
//! AMENT_PREFIX_PATH), loaded, tiled by the manifest and drawn. One test in its own binary,
//! because it sets AMENT_PREFIX_PATH for the process.

use mujoco_rs::prelude::MjtObjBase;

mod common;
use common::*;

/// A solid `w`×`h` RGB PNG at `path`.
fn png(path: &std::path::Path, rgb: [u8; 3], w: u32, h: u32) {
    write_png(path, w, h, |_, _| rgb);
}

const ROOM: &str = "lines: [{id: 0, x0_m: 0, y0_m: 0, x1_m: 6, y1_m: 0}, {id: 1, x0_m: 6, y0_m: 0, x1_m: 6, y1_m: 4}]";

#[test]
fn package_textures_resolve_from_an_installed_package() {
    // an installed package: <prefix>/share/acme_textures/{package.xml, textures/<name>/...}
    let prefix = tempfile::tempdir().unwrap();
    let pkg = prefix.path().join("share/acme_textures");
    write(
        &pkg,
        "package.xml",
        "<?xml version=\"1.0\"?>\n<package format=\"3\"><name>acme_textures</name><version>0.1.0</version>\
         <description>test textures</description><maintainer email=\"a@b.c\">t</maintainer>\
         <license>CC0</license></package>\n",
    );
    png(&pkg.join("textures/Bluebrick/Bluebrick.png"), [50, 60, 200], 8, 8);
    write(
        &pkg.join("textures/Bluebrick"),
        "manifest.yaml",
        "reflectance: 0.4\nphysical_size: [2.0, 1.0]\nlicense: CC0\nsource: drawn for this test\n",
    );
    png(&pkg.join("textures/Grass/Grass.png"), [40, 190, 60], 4, 4);
    let old = std::env::var("AMENT_PREFIX_PATH").unwrap_or_default();
    std::env::set_var("AMENT_PREFIX_PATH", format!("{}:{old}", prefix.path().display()));

    let dir = tempfile::tempdir().unwrap();
    let world = format!(
        "components:\n  - floorplan: {{{ROOM}, floor: {{texture: acme_textures:Grass}}, wall: {{texture: acme_textures:Bluebrick}}}}\n"
    );
    let mut e = engine_in(&world, dir.path());
    let m = e.ctx.model();
    let mat = |n: &str| m.name_to_id(MjtObjBase::mjOBJ_MATERIAL, n).unwrap();
    let tex = |n: &str| m.name_to_id(MjtObjBase::mjOBJ_TEXTURE, n).unwrap();
    let (fm, wm) = (mat("floorplan_floor_mat"), mat("floorplan_wall_mat"));
    // the wall takes the package folder's manifest; the floor (no manifest) the defaults
    assert_eq!(m.mat_reflectance()[wm], 0.4);
    assert_eq!(m.mat_texrepeat()[wm], [0.5, 1.0]);
    assert_eq!(m.mat_reflectance()[fm], 0.2);
    assert_eq!(m.mat_texrepeat()[fm], [1.0, 1.0]);
    for (t, size, rgb) in
        [("floorplan_floor_tex", 4, [40, 190, 60]), ("floorplan_wall_tex", 8, [50, 60, 200])]
    {
        let id = tex(t);
        let (adr, w, h) = (m.tex_adr()[id] as usize, m.tex_width()[id], m.tex_height()[id]);
        assert_eq!((w, h, m.tex_nchannel()[id]), (size, size, 3), "{t}");
        let n = (3 * w * h) as usize;
        assert!(m.tex_data()[adr..adr + n].chunks(3).all(|c| c == rgb), "{t}: the PNG's pixels");
    }
    // drawn: a green floor from above, a blue wall from the side
    let mut r = roqsim::render::RenderService::default();
    let view = |lookat: [f64; 3], distance: f64, elevation: f64| {
        roqsim::render::RenderRequest::new(
            roqsim::render::View::Free { lookat, distance, azimuth: 90.0, elevation },
            32,
            24,
        )
    };
    let c = r.render(e.ctx.data_mut(), &view([3.0, 2.0, 0.0], 2.0, -89.0)).unwrap().rgb_at(16, 12);
    let w = r.render(e.ctx.data_mut(), &view([3.0, 0.0, 1.2], 1.5, 0.0)).unwrap().rgb_at(16, 12);
    let (c, w) = (c.unwrap(), w.unwrap());
    eprintln!("package textures: floor pixel {c:?}, wall pixel {w:?}");
    assert!(c[1] > 2 * c[0] && c[1] > 2 * c[2], "the floor is green: {c:?}");
    assert!(w[2] > 2 * w[0] && w[2] > 2 * w[1], "the wall is blue: {w:?}");

    // the same PNG by package URI; the manifest beside it applies too
    let world = format!(
        "components:\n  - floorplan: {{{ROOM}, wall: {{texture: \"package://acme_textures/textures/Bluebrick/Bluebrick.png\"}}}}\n"
    );
    let e = engine_in(&world, dir.path());
    let wm = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_MATERIAL, "floorplan_wall_mat").unwrap();
    assert_eq!(e.ctx.model().mat_texrepeat()[wm], [0.5, 1.0]);

    // a name the package does not have: refused naming where it looked
    let r = refusal_in(
        &format!(
            "components:\n  - floorplan: {{{ROOM}, floor: {{texture: acme_textures:Marble}}}}\n"
        ),
        dir.path(),
    );
    assert_contains(
        &r,
        &format!(
            "floor.texture: `acme_textures:Marble`: package `acme_textures` has no texture `Marble`; searched {}",
            pkg.join("textures/Marble/Marble.png").display()
        ),
    );
    std::env::set_var("AMENT_PREFIX_PATH", &old);
}
