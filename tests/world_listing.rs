//! A world given by an unknown name is refused listing the bundled worlds, each once, however
//! many search roots hold it (an installed binary sees the install tree and the source tree; here
//! `ROQSIM_WORLD_PATH` names the source tree's worlds again, through a symlink too). Its own test
//! binary: it sets a process-wide environment variable.

use std::path::Path;

#[test]
fn bundled_worlds_are_listed_once() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("worlds");
    let tmp = std::env::temp_dir().join(format!("roqsim_worlds_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let link = tmp.join("worlds");
    std::os::unix::fs::symlink(&src, &link).unwrap();
    // This test binary has one test: nothing reads the environment concurrently.
    std::env::set_var("ROQSIM_WORLD_PATH", format!("{}:{}", src.display(), link.display()));
    let err = roqsim::runner::resolve_world("no_such_world").unwrap_err();
    let listed = err.split("(bundled: ").nth(1).unwrap().trim_end_matches(')');
    let names: Vec<&str> = listed.split(", ").collect();
    let mut unique = names.clone();
    unique.dedup();
    assert_eq!(names, unique, "{err}");
    for w in ["demo", "ur_pick", "mobile_manipulator", "turtlebot_floorplan"] {
        assert_eq!(names.iter().filter(|n| **n == w).count(), 1, "{w} once: {err}");
    }
    assert_eq!(roqsim::runner::bundled_worlds(), names);
    // A bare name still resolves (to the first root's file).
    assert_eq!(roqsim::runner::resolve_world("demo").unwrap(), src.join("demo.yaml"));
    let _ = std::fs::remove_dir_all(&tmp);
}
