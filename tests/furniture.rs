//! Furniture (ROS-free): every piece compiles with the dimensions its keys state, rays meet it
//! where the geometry says, its contact class is the stated one, and every refusal reads as
//! written. `ceiling` removes exactly the geometry above its height.

mod common;

use common::{assert_has, components_world, engine, engine_in, refusal, refusal_in};
use mujoco_rs::prelude::MjtObjBase;
use roqsim::mujoco::raycast::RayBatch;
use roqsim::Engine;

fn geom(e: &Engine, name: &str) -> usize {
    e.ctx
        .model()
        .name_to_id(MjtObjBase::mjOBJ_GEOM, name)
        .unwrap_or_else(|| panic!("no geom `{name}`"))
}

/// (world centre, MuJoCo size, contype) of geom `name`.
fn g(e: &Engine, name: &str) -> ([f64; 3], [f64; 3], i32) {
    let id = geom(e, name);
    let m = e.ctx.model();
    (e.ctx.data().geom_xpos()[id], m.geom_size()[id], m.geom_contype()[id])
}

fn close(a: [f64; 3], b: [f64; 3]) -> bool {
    (0..3).all(|i| (a[i] - b[i]).abs() < 1e-9)
}

/// Distance from `origin` along `dir` to the first visible geom (-1 for none), and that geom's name.
fn ray(e: &mut Engine, origin: [f64; 3], dir: [f64; 3]) -> (f64, String) {
    let mut r = RayBatch::new(1);
    r.dirs_mut().copy_from_slice(&dir);
    r.cast(e.ctx.data_mut(), origin, None, None, true, 50.0);
    let id = r.geom()[0];
    let name = if id < 0 {
        String::new()
    } else {
        e.ctx.model().id_to_name(MjtObjBase::mjOBJ_GEOM, id as usize).unwrap_or("").to_string()
    };
    (r.dist()[0], name)
}

fn geoms_of(e: &Engine, stem: &str) -> Vec<String> {
    let m = e.ctx.model();
    (0..m.ffi().ngeom as usize)
        .filter_map(|i| m.id_to_name(MjtObjBase::mjOBJ_GEOM, i))
        .filter(|n| n.starts_with(stem))
        .map(str::to_string)
        .collect()
}

// ------------------------------------------------------------------------------------------ shelf

#[test]
fn shelf_boards_stand_where_the_keys_put_them_and_a_lidar_ray_meets_one() {
    let mut e = engine(&components_world("  - shelf: {pos: [2.0, 0.0], layers: 3, height: 1.2}\n"));
    let boards: Vec<String> = geoms_of(&e, "shelf_board_");
    assert_eq!(boards, ["shelf_board_0", "shelf_board_1", "shelf_board_2"]);
    assert_eq!(geoms_of(&e, "shelf_leg_").len(), 4);
    // board k's centre: thickness/2 + k (height - thickness) / (layers - 1)
    for (k, z) in [0.01, 0.6, 1.19].iter().enumerate() {
        let (c, size, contype) = g(&e, &format!("shelf_board_{k}"));
        assert!(close(c, [2.0, 0.0, *z]), "board {k} at {c:?}");
        assert!(close(size, [0.4, 0.755, 0.01]), "board {k} size {size:?}");
        assert_eq!(contype, 1, "boards collide");
    }
    let (c, size, _) = g(&e, "shelf_leg_2");
    assert!(close(c, [2.0 + 0.38, 0.735, 0.6]), "leg at {c:?}");
    assert!(close(size, [0.02, 0.02, 0.6]));
    // a horizontal ray at the middle board's height meets its front edge at 2.0 - 0.40 m
    let (d, hit) = ray(&mut e, [0.0, 0.0, 0.6], [1.0, 0.0, 0.0]);
    assert_eq!(hit, "shelf_board_1");
    assert!((d - 1.6).abs() < 1e-9, "d = {d}");
    // between two boards it passes under the shelf's middle board to the room's east wall (x = 5)
    let (d, hit) = ray(&mut e, [0.0, 0.0, 0.3], [1.0, 0.0, 0.0]);
    assert_eq!(hit, "wall_east");
    assert!((d - 5.0).abs() < 1e-9, "d = {d}");
    let ent = e.ctx.entities.get("shelf").unwrap();
    assert_eq!((ent.body.as_str(), ent.model.as_str()), ("shelf", "shelf"));
}

#[test]
fn shelf_defaults_are_the_five_board_chipboard_shelf() {
    let e = engine(&components_world(
        "  - shelf: {rpy: [0.0, 0.0, 1.5707963267948966]}\n    name: rack\n",
    ));
    assert_eq!(geoms_of(&e, "rack_board_").len(), 5);
    let (c, size, _) = g(&e, "rack_board_4");
    assert!(close(size, [0.4, 0.755, 0.01]));
    assert!((c[2] - 1.99).abs() < 1e-9, "top board at {c:?}");
    // turned a quarter: the 0.80 m depth now runs along y, so a +y ray meets it at 0.40 m
    let mut e = e;
    let (d, hit) = ray(&mut e, [0.0, -1.0, 0.5], [0.0, 1.0, 0.0]);
    assert_eq!(hit, "rack_board_1");
    assert!((d - 0.6).abs() < 1e-9, "d = {d}");
}

#[test]
fn shelf_refusals() {
    let t = refusal(&components_world("  - shelf: {layers: 1}\n"));
    assert_has(&t, &["layers: the number of boards is an integer in 2..=200 (a bottom and a top board at least), got 1"]);
    let t = refusal(&components_world("  - shelf: {layers: 20, thickness: 0.1, height: 1.0}\n"));
    assert_has(&t, &["layers: 20 boards of thickness 0.1 m do not fit in height 1 m: fewer layers, thinner boards or a taller shelf"]);
    let t = refusal(&components_world("  - shelf: {leg: 0.5}\n"));
    assert_has(&t, &["leg: two uprights of 0.5 m do not fit across the shelf's 0.8 m: a leg must be under half the smaller of width and depth"]);
    let t = refusal(&components_world("  - shelf: {pos: [1.0]}\n"));
    assert_has(&t, &["pos: a world placement [x, y] or [x, y, z] (m, within ±1e6), got [1]"]);
    let t = refusal(&components_world("  - shelf: {width: 0.0}\n"));
    assert_has(&t, &["width: must be in (0, 10000] m, got 0"]);
    let t = refusal(&components_world(
        "  - shelf: {prefix: a_}\n    name: x\n  - shelf: {}\n    name: a_x\n",
    ));
    assert_has(
        &t,
        &["prefix: the world already has a body `a_x`; give this shelf a distinct prefix or name"],
    );
}

// -------------------------------------------------------------------------------------- workbench

#[test]
fn workbench_worktop_is_at_its_height_and_its_trim_is_visual() {
    let e = engine(&components_world("  - workbench: {pos: [1.0, 2.0], height: 0.9}\n"));
    let (c, size, contype) = g(&e, "workbench_worktop");
    assert!(close(size, [1.0, 0.35, 0.015]), "{size:?}");
    assert!(close(c, [1.0, 2.0, 0.9 - 0.015]), "{c:?}");
    assert_eq!(contype, 1);
    for solid in ["column_l", "column_r", "cabinet", "upright_l", "tool_panel", "overhead_beam"] {
        assert_eq!(g(&e, &format!("workbench_{solid}")).2, 1, "{solid} collides");
    }
    for trim in ["drawer_0", "handle_0", "foot_l_front", "power_strip", "monitor_arm", "light_bar"]
    {
        assert_eq!(g(&e, &format!("workbench_{trim}")).2, 0, "{trim} is visual");
    }
    // the cabinet is on the left (−x) by default
    assert!(g(&e, "workbench_cabinet").0[0] < 1.0);
    let e = engine(&components_world("  - workbench: {cabinet: none, superstructure: false}\n"));
    assert!(geoms_of(&e, "workbench_cabinet").is_empty());
    assert!(geoms_of(&e, "workbench_upright").is_empty());
    let e = engine(&components_world("  - workbench: {cabinet: right}\n"));
    assert!(g(&e, "workbench_cabinet").0[0] > 0.0);
}

#[test]
fn workbench_refusals() {
    let t = refusal(&components_world("  - workbench: {height: 1.2}\n"));
    assert_has(&t, &["height: the worktop height is within the lift columns' stroke 0.695 .. 0.995 m, got 1.2"]);
    let t = refusal(&components_world("  - workbench: {cabinet: middle}\n"));
    assert_has(&t, &["cabinet: `left`, `right` or `none`, got `middle`"]);
    let t = refusal(&components_world("  - workbench: {width: 0.5}\n"));
    assert_has(&t, &["width: a bench narrower than 0.81 m leaves no room between its columns for the cabinet, got 0.5"]);
}

// --------------------------------------------------------------------------------- ceiling panels

#[test]
fn ceiling_panels_fill_the_area_are_visual_and_rays_see_them() {
    let mut e = engine(&components_world("  - ceiling_panels: {area: [0.0, 0.0, 6.0, 4.0]}\n"));
    // (6 - 1.8) / 2.6 -> 2 along x, (4 - 0.6) / 1.6 -> 3 along y
    assert_eq!(geoms_of(&e, "ceiling_panels_panel_").len(), 6);
    let (c, size, contype) = g(&e, "ceiling_panels_panel_0_0");
    assert!(close(size, [0.9, 0.3, 0.02]), "{size:?}");
    assert!(close(c, [3.0 - 1.3, 2.0 - 1.6, 3.5 - 0.04 - 0.02]), "{c:?}");
    assert_eq!(contype, 0);
    let id = geom(&e, "ceiling_panels_panel_0_0");
    let m = e.ctx.model();
    let mat = m.geom_matid()[id] as usize;
    assert!((m.mat_emission()[mat] - 0.35).abs() < 1e-6);
    // straight up from 1 m under panel (0, 0): its underside at 3.42 m
    let (d, hit) = ray(&mut e, [1.7, 0.4, 1.0], [0.0, 0.0, 1.0]);
    assert_eq!(hit, "ceiling_panels_panel_0_0");
    assert!((d - 2.42).abs() < 1e-9, "d = {d}");
    // between panels there is nothing above
    assert_eq!(ray(&mut e, [3.0, 2.8, 1.0], [0.0, 0.0, 1.0]).0, -1.0);
}

#[test]
fn ceiling_panels_refusals() {
    let t = refusal(&components_world(
        "  - ceiling_panels: {area: [0.0, 0.0, 6.0, 4.0], pitch: [1.0, 1.6]}\n",
    ));
    assert_has(&t, &["pitch[0]: the grid spacing along x (1 m) is less than the panel's 1.8 m: the panels would overlap"]);
    let t = refusal(&components_world("  - ceiling_panels: {area: [0.0, 0.0, 1.0, 4.0]}\n"));
    assert_has(
        &t,
        &["area: a 1 × 4 m area holds no 1.8 × 0.6 m panel: enlarge the area or shrink `panel`"],
    );
    let t = refusal(&components_world("  - ceiling_panels: {area: [2.0, 0.0, 1.0, 4.0]}\n"));
    assert_has(&t, &["area: a world rectangle [x0, y0, x1, y1] with x1 > x0 and y1 > y0 (m), got [2, 0, 1, 4]"]);
    let t = refusal(&components_world("  - ceiling_panels: {}\n"));
    assert_has(&t, &["area"]);
}

// ------------------------------------------------------------------------------------ strip light

#[test]
fn strip_light_hangs_below_its_ceiling_and_emit_adds_one_light() {
    let e = engine(&components_world("  - strip_light: {pos: [1.0, 1.0, 3.0]}\n"));
    let lights = e.ctx.model().ffi().nlight;
    let (c, size, contype) = g(&e, "strip_light_fixture");
    assert!(close(c, [1.0, 1.0, 2.97]), "{c:?}");
    assert!(close(size, [1.2, 0.045, 0.03]));
    assert_eq!(contype, 0);
    let e2 = engine(&components_world("  - strip_light: {pos: [1.0, 1.0, 3.0], yaw: 1.5707963267948966, emit: true, cutoff: 60.0}\n"));
    let m = e2.ctx.model();
    assert_eq!(m.ffi().nlight, lights + 1);
    let l = m.name_to_id(MjtObjBase::mjOBJ_LIGHT, "strip_light_light").unwrap();
    let p = e2.ctx.data().light_xpos()[l];
    assert!(close(p, [1.0, 1.0, 3.0 - 0.06 - 0.01]), "{p:?}");
    assert!((m.light_cutoff()[l] - 60.0).abs() < 1e-6);
    // turned along y: the 2.4 m run now spans y
    let id = geom(&e2, "strip_light_fixture");
    let aabb_y = e2.ctx.data().geom_xmat()[id][3].abs();
    assert!((aabb_y - 1.0).abs() < 1e-9, "x axis along y: {aabb_y}");
}

#[test]
fn strip_light_refusals() {
    let t = refusal(&components_world("  - strip_light: {pos: [1.0, 1.0, 3.0], cutoff: 60.0}\n"));
    assert_has(&t, &["emit: `diffuse` and `cutoff` describe the light `emit: true` adds; with emit false there is none: set emit: true or drop them"]);
    let t = refusal(&components_world("  - strip_light: {pos: [1.0, 1.0]}\n"));
    assert_has(&t, &["pos: a world placement [x, y, z] (m, within ±1e6), got [1, 1]"]);
    let t = refusal(&components_world("  - strip_light: {pos: [1.0, 1.0, 3.0], emission: 2.0}\n"));
    assert_has(&t, &["emission: must be within 0..1, got 2"]);
}

// ----------------------------------------------------------------------------------------- window

#[test]
fn window_glass_fills_its_frame_and_stops_a_ray() {
    let mut e = engine(&components_world("  - window: {pos: [0.0, 2.0]}\n"));
    let (c, size, contype) = g(&e, "window_glass");
    assert!(close(c, [0.0, 2.0, 1.03]), "{c:?}");
    assert!(close(size, [0.42, 0.006, 0.98]), "{size:?}");
    assert_eq!(contype, 1, "the glass collides");
    for part in ["jamb_l", "jamb_r", "sill", "head"] {
        assert_eq!(g(&e, &format!("window_{part}")).2, 1);
    }
    let id = geom(&e, "window_glass");
    assert!((e.ctx.model().geom_rgba()[id][3] - 0.3).abs() < 1e-6);
    let (d, hit) = ray(&mut e, [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]);
    assert_eq!(hit, "window_glass");
    assert!((d - (2.0 - 0.006)).abs() < 1e-9, "d = {d}");
}

#[test]
fn window_refusals() {
    let t = refusal(&components_world("  - window: {frame: 0.5}\n"));
    assert_has(&t, &["frame: a 0.5 m border on both sides leaves no glass in a 0.94 × 2.06 m window: a frame must be under half the smaller of width and height"]);
    let t = refusal(&components_world("  - window: {glass: 0.2}\n"));
    assert_has(&t, &["glass: glass 0.2 m thick does not fit in a 0.1 m deep frame"]);
    let t = refusal(&components_world("  - window: {glass_color: [0.5, 0.5]}\n"));
    assert_has(&t, &["glass_color: a colour is [r, g, b] or [r, g, b, a] in 0..1, got 2 values"]);
}

// ------------------------------------------------------------------------------------------- duct

#[test]
fn duct_runs_between_its_ends_with_a_drop_at_each_branch() {
    let mut e = engine(&components_world(
        "  - duct: {start: [0.0, 1.0], end: [4.0, 1.0], branches: [1.0, 3.0]}\n",
    ));
    assert_eq!(
        geoms_of(&e, "duct_"),
        ["duct_main", "duct_drop_0", "duct_diffuser_0", "duct_drop_1", "duct_diffuser_1"]
    );
    let (c, size, contype) = g(&e, "duct_main");
    assert!(close(c, [2.0, 1.0, 3.2]), "{c:?}");
    assert!((size[0] - 0.14).abs() < 1e-12 && (size[1] - 2.0).abs() < 1e-12, "{size:?}");
    assert_eq!(contype, 0, "visual only");
    let (c, size, _) = g(&e, "duct_drop_1");
    assert!(close(c, [3.0, 1.0, 3.2 - 0.14 - 0.2]), "{c:?}");
    assert!((size[0] - 0.08).abs() < 1e-12 && (size[1] - 0.2).abs() < 1e-12);
    let (c, size, _) = g(&e, "duct_diffuser_0");
    assert!(close(c, [1.0, 1.0, 3.2 - 0.14 - 0.4 - 0.01]), "{c:?}");
    assert!((size[0] - 0.16).abs() < 1e-12);
    // a ray up under the diffuser meets its underside
    let (d, hit) = ray(&mut e, [1.0, 1.0, 1.0], [0.0, 0.0, 1.0]);
    assert_eq!(hit, "duct_diffuser_0");
    assert!((d - (3.2 - 0.14 - 0.4 - 0.02 - 1.0)).abs() < 1e-9, "d = {d}");
    let e = engine(&components_world(
        "  - duct: {start: [0.0, 0.0], end: [2.0, 0.0], branches: [1.0], diffuser_radius: 0.0}\n",
    ));
    assert_eq!(geoms_of(&e, "duct_"), ["duct_main", "duct_drop_0"]);
}

#[test]
fn duct_refusals() {
    let t = refusal(&components_world(
        "  - duct: {start: [0.0, 0.0], end: [4.0, 0.0], branches: [1.0, 5.0]}\n",
    ));
    assert_has(&t, &["branches[1]: a distance along the run within 0 .. 4 m (its length), got 5"]);
    let t = refusal(&components_world(
        "  - duct: {start: [0.0, 0.0], end: [4.0, 0.0], branch_radius: 0.2}\n",
    ));
    assert_has(&t, &["branch_radius: a drop of radius 0.2 m is wider than the main tube it hangs from (0.14 m)"]);
    let t = refusal(&components_world("  - duct: {start: [0.0, 0.0, 0.0], end: [4.0, 0.0]}\n"));
    assert_has(&t, &["start: a world placement [x, y] (m, within ±1e6), got [0, 0, 0]"]);
    let t = refusal(&components_world("  - duct: {start: [1.0, 1.0], end: [1.0, 1.1]}\n"));
    assert_has(&t, &["end: the run from start to end is 0.1 m, shorter than the tube's diameter 0.28 m: a duct needs a run"]);
    let t = refusal(&components_world("  - duct: {start: [0.0, 0.0], end: [4.0, 0.0], z: 0.5}\n"));
    assert_has(&t, &["branch_length: a drop 0.4 m long under a run at 0.5 m reaches the floor"]);
}

// -------------------------------------------------------------------------------------- palm tree

#[test]
fn palm_tree_has_its_trunk_fronds_and_fruit_all_colliding() {
    let e = engine(&components_world("  - palm_tree: {pos: [1.0, -1.0]}\n"));
    let all = geoms_of(&e, "palm_tree_");
    assert_eq!(all.len(), 1 + 1 + 2 * 8 + 9, "{all:?}");
    for n in &all {
        assert_eq!(g(&e, n).2, 1, "{n} collides");
    }
    let (c, size, _) = g(&e, "palm_tree_trunk");
    assert!(close(c, [1.0, -1.0, 0.8]), "{c:?}");
    assert!((size[0] - 0.03).abs() < 1e-12 && (size[1] - 0.8).abs() < 1e-12);
    let (c, size, _) = g(&e, "palm_tree_pot");
    assert!(close(c, [1.0, -1.0, 0.08]) && (size[0] - 0.085).abs() < 1e-12);
    // frond 0 points along +x, its inner half rising 35 deg from (0, 0, 0.95)
    let p = 35f64.to_radians();
    let seg = 0.225;
    let (c, size, _) = g(&e, "palm_tree_frond_0_inner");
    assert!(close(c, [1.0 + p.cos() * seg / 2.0, -1.0, 0.95 + p.sin() * seg / 2.0]), "{c:?}");
    assert!(close(size, [seg / 2.0, 0.05, 0.004]));
    // its outer half starts at the inner tip, turned down by 45 deg more (−10 deg)
    let o = (35f64 - 45.0).to_radians();
    let tip = [1.0 + p.cos() * seg, 0.95 + p.sin() * seg];
    let (c, _, _) = g(&e, "palm_tree_frond_0_outer");
    assert!(close(c, [tip[0] + o.cos() * seg / 2.0, -1.0, tip[1] + o.sin() * seg / 2.0]), "{c:?}");
    // frond 1 (odd) is a tier higher, at 45 deg azimuth
    let (c, _, _) = g(&e, "palm_tree_frond_1_inner");
    assert!((c[2] - (1.05 + p.sin() * seg / 2.0)).abs() < 1e-9, "{c:?}");
    // the fruits of the bunch lie within its 0.075 m ball around [-0.13, 0.02, 0.88]
    for i in 0..9 {
        let (c, size, _) = g(&e, &format!("palm_tree_bunch_0_fruit_{i}"));
        let r = ((c[0] - 0.87).powi(2) + (c[1] + 0.98).powi(2) + (c[2] - 0.88).powi(2)).sqrt();
        assert!((r - 0.045).abs() < 1e-9 && (size[0] - 0.03).abs() < 1e-12, "fruit {i}: {r}");
    }
    let e = engine(&components_world("  - palm_tree: {pot_height: 0.0, fronds: 5, bunches: []}\n"));
    assert_eq!(geoms_of(&e, "palm_tree_").len(), 1 + 2 * 5);
}

#[test]
fn palm_tree_refusals() {
    let t = refusal(&components_world("  - palm_tree: {crown_height: 1.8}\n"));
    assert_has(&t, &["crown_height: the fronds spring from the trunk, above the pot (0.16 m) and at most at its top (1.6 m), got 1.8"]);
    let t = refusal(&components_world("  - palm_tree: {fronds: 0}\n"));
    assert_has(&t, &["fronds: the blades in the crown are an integer in 1..=64, got 0"]);
    let t = refusal(&components_world("  - palm_tree: {pot_radius: 0.02}\n"));
    assert_has(&t, &["pot_radius: a pot of radius 0.02 m cannot hold a trunk of radius 0.03 m"]);
    let t =
        refusal(&components_world("  - palm_tree: {bunches: [{pos: [0.0, 0.0], fruits: 0}]}\n"));
    assert_has(
        &t,
        &[
            "bunches[0].pos: a world placement [x, y, z] (m, within ±1e6), got [0, 0]",
            "bunches[0].fruits: an integer in 1..=200, got 0",
        ],
    );
}

// ---------------------------------------------------------------------------------------- ceiling

fn roof_world(ceiling: &str) -> String {
    components_world(&format!(
        "  - box: {{pose: {{position: {{x: 0.0, y: 0.0, z: 3.0}}}}, size: [4.0, 4.0, 0.1]}}\n    name: roof\n  - box: {{pose: {{position: {{x: 2.0, y: 0.0}}}}, size: [0.5, 0.5, 0.5]}}\n    name: crate\n{ceiling}"
    ))
}

#[test]
fn ceiling_keep_false_removes_what_lies_above_and_nothing_else() {
    let mut kept = engine(&roof_world("  - ceiling: {}\n"));
    assert_eq!(ray(&mut kept, [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]).1, "roof");
    let n = kept.ctx.model().ffi().ngeom;
    let mut open = engine(&roof_world("  - ceiling: {keep: false}\n"));
    let m = open.ctx.model();
    assert_eq!(m.ffi().ngeom, n - 1);
    assert!(m.name_to_id(MjtObjBase::mjOBJ_GEOM, "roof").is_none());
    assert!(m.name_to_id(MjtObjBase::mjOBJ_GEOM, "crate").is_some());
    assert_eq!(ray(&mut open, [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]).0, -1.0, "the roof is open");
    // the roof's bottom is at 2.95 m: above_z 3.0 keeps it, so nothing is left to remove
    let t = refusal(&roof_world("  - ceiling: {keep: false, above_z: 3.0}\n"));
    assert_has(&t, &["keep: false found no static geom wholly above above_z = 3 m: there is no ceiling to remove"]);
}

#[test]
fn ceiling_removes_unnamed_geoms_of_a_world_file_and_keeps_the_others_unnamed() {
    let dir = std::env::temp_dir().join(format!("roqsim_ceiling_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("hall.xml"),
        r#"<mujoco><worldbody>
  <geom name="floor" type="plane" size="10 10 0.1"/>
  <geom type="box" pos="0 0 4" size="5 5 0.05"/>
  <geom type="box" pos="3 0 0.5" size="0.5 0.5 0.5"/>
  <light pos="0 0 3"/>
</worldbody></mujoco>"#,
    )
    .unwrap();
    let yaml = "sim: {timestep: 0.002, world: hall.xml}\ncomponents:\n  - ceiling: {keep: false}\n";
    let mut e = engine_in(yaml, &dir);
    let m = e.ctx.model();
    assert_eq!(m.ffi().ngeom, 2);
    assert_eq!(m.id_to_name(MjtObjBase::mjOBJ_GEOM, 1), None, "the other geom keeps no name");
    assert_eq!(ray(&mut e, [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]).0, -1.0);
    let (d, _) = ray(&mut e, [0.0, 0.0, 0.5], [1.0, 0.0, 0.0]);
    assert!((d - 2.5).abs() < 1e-9, "the low box stays: {d}");
    let t = refusal_in(
        "sim: {timestep: 0.002, world: hall.xml}\ncomponents:\n  - ceiling: {enabled: false}\n",
        &dir,
    );
    assert_has(&t, &["enabled: is refused here: this plugin removes the ceiling, so `enabled` would read backwards; write `keep: false` to open the roof, or `keep: true` (the default) to leave it"]);
    std::fs::remove_dir_all(&dir).ok();
}
