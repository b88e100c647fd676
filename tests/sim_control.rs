//! simulation_interfaces semantics (ROS-free): entities, spawn/delete as activation, state,
//! transitions and every refusal's code and message.

mod common;

use common::{assert_sc_refused, engine};
use roqsim::context::RunState;
use roqsim::engine::sim_control::{self as sc, category, codes, state};

const WORLD: &str = "sim: {timestep: 0.002, seed: 1}
components:
  - spawn_robot: {model: turtlebot4, default_plugins: false, pose: {position: {x: 0.0, y: 0.0}}}
    name: robot
  - box: {pose: {position: {x: 1.0, y: 0.0}}, size: [0.3, 0.3, 0.3], motion: physics, present: false}
    name: obstacle
  - box: {pose: {position: {x: -1.5, y: 1.0}}, size: [0.2, 0.2, 1.0]}
    name: pillar
";

#[test]
fn features_are_exactly_what_is_implemented() {
    assert!(sc::FEATURES.contains(&0) && sc::FEATURES.contains(&33));
    for unsupported in [2u16, 3, 4, 5, 9, 13, 40, 50] {
        assert!(!sc::FEATURES.contains(&unsupported), "{unsupported}");
    }
}

#[test]
fn entities_spawnables_and_categories() {
    let e = engine(WORLD);
    let c = &e.ctx;
    assert_eq!(sc::filter_names(c, true, "", &[], &[], 0).unwrap(), vec!["robot", "pillar"]);
    assert_eq!(sc::spawnables(c), vec!["obstacle"]);
    assert_eq!(sc::filter_names(c, true, "^rob", &[], &[], 0).unwrap(), vec!["robot"]);
    assert_eq!(
        sc::filter_names(c, true, "", &[category::STATIC_OBJECT], &[], 0).unwrap(),
        vec!["pillar"]
    );
    assert_eq!(sc::category_of(c, "robot"), Some(category::ROBOT));
    assert_eq!(sc::category_of(c, "obstacle"), Some(category::DYNAMIC_OBJECT));
    assert_sc_refused(
        sc::filter_names(c, true, "([", &[], &[], 0),
        codes::OPERATION_FAILED,
        "not a valid regular expression",
    );
    assert_sc_refused(
        sc::filter_names(c, true, "", &[], &["red".into()], 0),
        codes::FEATURE_UNSUPPORTED,
        "entity tags are not supported",
    );
}

#[test]
fn spawn_and_delete_move_an_entity_between_the_lists() {
    let mut e = engine(WORLD);
    assert_sc_refused(
        sc::spawn(&mut e.ctx, "", "", "", "", None),
        codes::NO_RESOURCE,
        "both uri and name are empty",
    );
    assert_sc_refused(
        sc::spawn(&mut e.ctx, "", "crate", "", "", None),
        codes::NOT_FOUND,
        "the world declares no entity `crate`; spawnable: [obstacle]",
    );
    assert_sc_refused(
        sc::spawn(&mut e.ctx, "other", "obstacle", "", "", None),
        codes::NAME_INVALID,
        "cannot be renamed to `other`",
    );
    assert_sc_refused(
        sc::spawn(&mut e.ctx, "", "obstacle", "<mujoco/>", "", None),
        codes::UNSUPPORTED_FORMAT,
        "spawn_formats is empty",
    );
    assert_sc_refused(
        sc::spawn(&mut e.ctx, "", "obstacle", "", "elsewhere", None),
        codes::NAMESPACE_INVALID,
        "not `elsewhere`",
    );
    assert_sc_refused(
        sc::spawn(&mut e.ctx, "", "robot", "", "", None),
        codes::NAME_NOT_UNIQUE,
        "already present",
    );
    let pose = Some(([1.2, 0.1, 0.15], [0.0, 0.0, 0.0, 1.0]));
    assert_eq!(sc::spawn(&mut e.ctx, "obstacle", "obstacle", "", "", pose).unwrap(), "obstacle");
    assert_eq!(sc::spawnables(&e.ctx), Vec::<String>::new(), "spawning consumes the spawnable");
    assert!(sc::filter_names(&e.ctx, true, "", &[], &[], 0)
        .unwrap()
        .contains(&"obstacle".to_string()));
    let s = sc::entity_state(&e.ctx, "obstacle").unwrap();
    assert!((s.position[0] - 1.2).abs() < 1e-9 && (s.position[1] - 0.1).abs() < 1e-9);
    sc::delete(&mut e.ctx, "obstacle").unwrap();
    assert_eq!(sc::spawnables(&e.ctx), vec!["obstacle"]);
    assert_sc_refused(sc::delete(&mut e.ctx, "obstacle"), codes::NOT_FOUND, "already absent");
    assert_sc_refused(sc::delete(&mut e.ctx, "ghost"), codes::NOT_FOUND, "no entity `ghost`");
    // spawn by name when the uri is empty, then a reset restores `present: false`
    sc::spawn(&mut e.ctx, "obstacle", "", "", "", None).unwrap();
    e.reset().unwrap();
    assert_eq!(sc::spawnables(&e.ctx), vec!["obstacle"]);
}

#[test]
fn set_entity_state_teleports_free_bodies_and_refuses_welded_moves() {
    let mut e = engine(WORLD);
    let q = [0.0, 0.0, (0.5f64).sin(), (0.5f64).cos()]; // yaw 1 rad
    sc::set_entity_state(&mut e.ctx, "robot", Some(([2.0, -1.0, 0.0], q)), None).unwrap();
    let s = sc::entity_state(&e.ctx, "robot").unwrap();
    assert!((s.position[0] - 2.0).abs() < 1e-12 && (s.position[1] + 1.0).abs() < 1e-12);
    assert!((2.0 * s.orientation[2].atan2(s.orientation[3]) - 1.0).abs() < 1e-9);
    // a twist: world-frame angular velocity comes back as written
    sc::set_entity_state(&mut e.ctx, "robot", None, Some(([0.1, 0.0, 0.0], [0.0, 0.0, 0.5])))
        .unwrap();
    let s = sc::entity_state(&e.ctx, "robot").unwrap();
    assert!((s.angular[2] - 0.5).abs() < 1e-9 && (s.linear[0] - 0.1).abs() < 1e-9, "{s:?}");
    // welded pillar: a move is refused naming the weld and the fix; its own pose succeeds
    assert_sc_refused(sc::set_entity_state(&mut e.ctx, "pillar", Some(([0.0, 0.0, 0.5], [0.0, 0.0, 0.0, 1.0])), None), codes::OPERATION_FAILED, "`pillar` is welded and cannot be moved: motion: static (welded scenery; give `motion: physics` to move it)");
    let cur = sc::entity_state(&e.ctx, "pillar").unwrap();
    sc::set_entity_state(&mut e.ctx, "pillar", Some((cur.position, cur.orientation)), None)
        .unwrap();
    assert_sc_refused(
        sc::set_entity_state(&mut e.ctx, "robot", Some(([0.0; 3], [0.0; 4])), None),
        codes::SET_INVALID_POSE,
        "pose.orientation has norm 0e0: a rotation needs a quaternion of norm within [0.001, 1000]",
    );
    assert_sc_refused(
        sc::entity_state(&e.ctx, "ghost"),
        codes::NOT_FOUND,
        "no entity `ghost`; entities: robot, obstacle, pillar",
    );
}

#[test]
fn simulation_state_transitions_and_stepping() {
    let mut e = engine(WORLD);
    let c = &mut e.ctx;
    assert_eq!(sc::get_state(c), state::PLAYING);
    assert_sc_refused(sc::step(c, 10), codes::INCORRECT_STATE, "works only while paused");
    assert_sc_refused(
        sc::set_state(c, state::PLAYING),
        codes::ALREADY_IN_TARGET_STATE,
        "already in state 1",
    );
    sc::set_state(c, state::PAUSED).unwrap();
    sc::step(c, 10).unwrap();
    assert_eq!(c.control.pending_steps, 10);
    assert_sc_refused(sc::step(c, 5), codes::INCORRECT_STATE, "still being taken");
    c.control.pending_steps = 0;
    sc::set_state(c, state::STOPPED).unwrap();
    assert_eq!(c.control.state, RunState::Stopped);
    assert!(c.control.reset.is_some(), "stop resets to the initial state");
    assert_sc_refused(
        sc::set_state(c, state::PAUSED),
        codes::INCORRECT_TRANSITION,
        "STOPPED -> PAUSED",
    );
    assert_sc_refused(
        sc::set_state(c, state::NO_WORLD),
        codes::FEATURE_UNSUPPORTED,
        "exactly one world",
    );
    sc::set_state(c, state::PLAYING).unwrap();
    sc::set_state(c, state::QUITTING).unwrap();
    assert_sc_refused(sc::set_state(c, state::PLAYING), codes::INCORRECT_TRANSITION, "quitting");
    assert_eq!(
        sc::reset_scope(2).unwrap(),
        roqsim::context::ResetScope { time: false, state: true, spawned: false }
    );
    assert_eq!(sc::reset_scope(0).unwrap(), roqsim::context::ResetScope::ALL);
}
