//! Presence (ROS-free): an absent entity is compiled in, invisible to rays, out of contact and
//! frozen; making it present restores exactly what was saved; reset re-applies the declared value.

mod common;

use common::engine;
use mujoco_rs::prelude::MjtObjBase;
use roqsim::engine::presence::{set_present, ABSENT_GEOM_GROUP};
use roqsim::mujoco::raycast::RayBatch;
use roqsim::Engine;

/// A 0.1 m dummy box `a`, present or not.
fn world(present: bool) -> String {
    format!("sim: {{timestep: 0.002}}\ncomponents:\n  - dummy: {{size: 0.1, present: {present}}}\n    name: a\n")
}

/// Distance from 2 m above the box's start (x, y) straight down.
fn ray_down(e: &mut Engine) -> f64 {
    let m = e.ctx.model();
    let b = m.name_to_id(MjtObjBase::mjOBJ_BODY, "a_box").unwrap();
    let p = e.ctx.data().xpos()[b];
    let mut r = RayBatch::new(1);
    r.dirs_mut().copy_from_slice(&[0.0, 0.0, -1.0]);
    r.cast(e.ctx.data_mut(), [p[0], p[1], 2.0], None, None, true, 10.0);
    r.dist()[0]
}

fn box_z(e: &Engine) -> f64 {
    let b = e.ctx.model().name_to_id(MjtObjBase::mjOBJ_BODY, "a_box").unwrap();
    e.ctx.data().xpos()[b][2]
}

fn geom_fields(e: &Engine) -> (i32, i32, i32, f64) {
    let m = e.ctx.model();
    let b = m.name_to_id(MjtObjBase::mjOBJ_BODY, "a_box").unwrap();
    let g = (0..m.ffi().ngeom as usize).find(|&g| m.geom_bodyid()[g] as usize == b).unwrap();
    (m.geom_group()[g], m.geom_contype()[g], m.geom_conaffinity()[g], m.body_gravcomp()[b])
}

#[test]
fn gravity_compensation_is_armed_once_per_world() {
    let e = engine(&world(true));
    assert!(e.ctx.model().ffi().ngravcomp > 0);
}

#[test]
fn absent_from_the_start_is_invisible_untouchable_and_frozen() {
    let mut e = engine(&world(false));
    assert_eq!(geom_fields(&e), (ABSENT_GEOM_GROUP as i32, 0, 0, 1.0));
    e.step_n(500).unwrap();
    // frozen where it was declared: z = 0.5, not fallen
    assert!((box_z(&e) - 0.5).abs() < 1e-9, "z = {}", box_z(&e));
    // the ray passes through it to the floor 2 m below
    assert!((ray_down(&mut e) - 2.0).abs() < 1e-9);
    assert!(!e.ctx.entities.get("a").unwrap().present);
}

#[test]
fn spawning_restores_exactly_and_delete_hides_again() {
    let mut e = engine(&world(true));
    let nominal = geom_fields(&e);
    assert_eq!(nominal, (0, 1, 1, 0.0));
    e.step_n(500).unwrap();
    // present: fell to the floor and rests on it (box half-extent 0.1)
    assert!((box_z(&e) - 0.1).abs() < 2e-3, "z = {}", box_z(&e));
    assert!((ray_down(&mut e) - 1.8).abs() < 2e-3);
    set_present(&mut e.ctx, "a", false).unwrap();
    assert_eq!(geom_fields(&e), (ABSENT_GEOM_GROUP as i32, 0, 0, 1.0));
    assert!((ray_down(&mut e) - 2.0).abs() < 1e-9, "absent: the ray reaches the floor");
    set_present(&mut e.ctx, "a", true).unwrap();
    assert_eq!(geom_fields(&e), nominal, "restored bit for bit");
    assert!((ray_down(&mut e) - 1.8).abs() < 2e-3);
    let err = set_present(&mut e.ctx, "ghost", true).unwrap_err();
    assert_eq!(err, "no entity `ghost`; entities: a");
}

#[test]
fn reset_reapplies_the_declared_presence() {
    let mut e = engine(&world(false));
    set_present(&mut e.ctx, "a", true).unwrap();
    e.step_n(100).unwrap();
    assert!(box_z(&e) < 0.5, "spawned: falling");
    e.reset().unwrap();
    assert_eq!(geom_fields(&e), (ABSENT_GEOM_GROUP as i32, 0, 0, 1.0));
    assert!(!e.ctx.entities.get("a").unwrap().present);
    e.step_n(100).unwrap();
    assert!((box_z(&e) - 0.5).abs() < 1e-9);
}
