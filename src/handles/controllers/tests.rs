//! Unit tests of the controller registry: lifecycle, switch strictness, hardware states,
//! parameters.

use super::*;

fn spec(name: &str, ifaces: &[&str], initial: State) -> ControllerSpec {
    ControllerSpec {
        name: name.into(),
        type_name: "t/T".into(),
        command_interfaces: ifaces.iter().map(|s| s.to_string()).collect(),
        state_interfaces: vec![],
        update_rate: 500,
        initial_state: initial,
        owner: format!("plugin_{name}"),
        parameters: vec![],
    }
}

#[test]
fn lifecycle_and_switch() {
    let r = Registry::new("arm");
    r.declare(spec("jtc", &["j1/position", "j2/position"], State::Active), 0.0).unwrap();
    r.declare(spec("cart", &["j1/position", "j2/position"], State::Inactive), 0.0).unwrap();
    r.declare(spec("jsb", &[], State::Active), 0.0).unwrap();
    let e = r.declare(spec("other", &["j2/position"], State::Active), 0.0).unwrap_err();
    assert!(
        e.contains("plugin_jtc") && e.contains("plugin_other") && e.contains("j2/position"),
        "{e}"
    );
    // STRICT without naming the holder: refused, nothing changes.
    let e = r.switch(&["cart".into()], &[], STRICT, 1.0).unwrap_err();
    assert!(e.contains("claimed by `jtc`"), "{e}");
    assert!(r.is_active("jtc") && !r.is_active("cart"));
    // BEST_EFFORT never deactivates what was not named.
    let rep = r.switch(&["cart".into()], &[], 0, 1.0).unwrap();
    assert!(rep.activated.is_empty() && rep.skipped.len() == 1 && r.is_active("jtc"));
    // STRICT naming both sides hands over in one call.
    let rep = r.switch(&["cart".into()], &["jtc".into()], STRICT, 2.0).unwrap();
    assert_eq!(
        (rep.activated, rep.deactivated),
        (vec!["cart".to_string()], vec!["jtc".to_string()])
    );
    // FORCE_AUTO arbitrates.
    let rep = r.switch(&["jtc".into()], &[], FORCE_AUTO, 3.0).unwrap();
    assert_eq!(rep.deactivated, vec!["cart".to_string()]);
    assert!(r.is_active("jtc"));
    let e = r.unload("jtc", 4.0).unwrap_err();
    assert!(e.contains("is active and cannot be unloaded"), "{e}");
    r.unload("cart", 4.0).unwrap();
    assert!(r.list().iter().all(|c| c.name != "cart"));
    r.load("cart", 5.0).unwrap();
    assert_eq!(r.state("cart"), Some(State::Unconfigured));
    assert!(r
        .switch(&["cart".into()], &["jtc".into()], STRICT, 5.0)
        .unwrap_err()
        .contains("configure it first"));
    r.configure("cart", 5.0).unwrap();
    assert!(r.load("nope", 5.0).unwrap_err().contains("not declared"));
    assert!(Strictness::from_code(9).is_err());
    let hw = r.hardware_interfaces();
    assert!(hw.is_empty());
}

#[test]
fn hardware_states_gate_activations() {
    let r = Registry::new("arm");
    r.declare(spec("jtc", &["j1/position"], State::Inactive), 0.0).unwrap();
    r.declare(spec("jsb", &[], State::Inactive), 0.0).unwrap();
    r.add_hardware(&["j1/position".into()], &["j1/position".into()]);
    assert_eq!(r.hardware_state(), State::Active);
    // inactive: read, not written; a broadcaster may start, a commanding controller not
    assert_eq!(r.set_hardware_state(State::Inactive), Ok(State::Inactive));
    assert!(r.hardware_reads() && !r.hardware_writes());
    let e = r.switch(&["jtc".into()], &[], STRICT, 1.0).unwrap_err();
    assert!(e.contains("hardware component `arm` is inactive"), "{e}");
    assert_eq!(r.switch(&["jsb".into()], &[], STRICT, 1.0).unwrap().activated, vec!["jsb"]);
    // unconfigured: nothing available, nothing read
    assert_eq!(r.set_hardware_state(State::Unconfigured), Ok(State::Unconfigured));
    assert!(!r.hardware_reads() && r.hardware_interfaces().iter().all(|h| !h.is_available));
    assert!(r.is_active("jsb"), "controllers keep their states, as upstream");
    let e = r.switch(&["jtc".into()], &[], STRICT, 2.0).unwrap_err();
    assert!(e.contains("is unconfigured, so its interfaces are not available"), "{e}");
    // active again: everything works
    assert_eq!(r.set_hardware_state(State::Active), Ok(State::Active));
    assert!(r.switch(&["jtc".into()], &[], STRICT, 3.0).is_ok() && r.is_active("jtc"));
    // finalized: only destroyed
    assert_eq!(r.set_hardware_state(State::Finalized), Ok(State::Finalized));
    let e = r.set_hardware_state(State::Active).unwrap_err();
    assert!(e.contains("is finalized and can only be destroyed"), "{e}");
    assert_eq!(r.set_hardware_state(State::Finalized), Ok(State::Finalized));
}

#[test]
fn parameters_follow_load_and_sets() {
    let r = Registry::new("arm");
    let mut s = spec("jtc", &["j1/position"], State::Unloaded);
    s.parameters = vec![
        ParamSpec::applied("constraints.goal_time", ParamValue::Double(1.0), false, "s").min(0.0),
        ParamSpec::fixed("joints", ParamValue::Strings(vec!["j1".into()]), true, "world"),
    ];
    r.declare(s, 0.0).unwrap();
    let names: Vec<String> =
        r.declared_parameters("jtc").unwrap().into_iter().map(|p| p.name).collect();
    assert_eq!(
        names,
        ["update_rate", "is_async", "thread_priority", "constraints.goal_time", "joints"]
    );
    assert_eq!(r.parameters("jtc"), None, "not loaded: no node, no values");
    let g0 = r.parameter_generation();
    r.load_with("jtc", &[("constraints.goal_time".into(), ParamValue::Double(2.5))], 0.0).unwrap();
    assert_eq!(r.value("jtc", "constraints.goal_time"), Some(ParamValue::Double(2.5)));
    assert!(r.parameter_generation() > g0);
    assert_eq!(
        r.set_parameter("jtc", "constraints.goal_time", ParamValue::Int(3)).unwrap_err(),
        "Wrong parameter type, parameter {constraints.goal_time} is of type {double}, setting it to {integer} is not allowed."
    );
    r.set_parameter("jtc", "constraints.goal_time", ParamValue::Double(3.0)).unwrap();
    assert_eq!(r.value("jtc", "constraints.goal_time"), Some(ParamValue::Double(3.0)));
    assert_eq!(
        r.set_parameter("jtc", "joints", ParamValue::Strings(vec![])).unwrap_err(),
        "Trying to set a read-only parameter: joints."
    );
    r.unload("jtc", 1.0).unwrap();
    assert_eq!(r.value("jtc", "constraints.goal_time"), None);
    r.load("jtc", 2.0).unwrap();
    assert_eq!(
        r.value("jtc", "constraints.goal_time"),
        Some(ParamValue::Double(1.0)),
        "a new load starts from the world's values"
    );
}
