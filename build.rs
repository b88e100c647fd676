//! Link settings that every target of this package needs (binaries, tests, examples, benches).
//!
//! * An rpath to the MuJoCo library directory, so `roqsim` and the test binaries find
//!   `libmujoco.so.3.17.0` with nothing set at run time. The directory is
//!   `MUJOCO_DYNAMIC_LINK_DIR` (scripts/env.sh or .cargo/config.toml set it), else
//!   `<manifest dir>/.deps/mujoco/lib` where scripts/setup.sh puts it.
//! * With the `ros` feature: `libpython3.11` linked with `--no-as-needed`. The ROS 2 Jazzy wheels'
//!   `librcl*` are over-linked against Python message libraries, and a process without libpython
//!   dies at start with `undefined symbol: PyExc_RuntimeError`. The plain `rustc-link-arg` form
//!   is deliberate: `-bins` misses test binaries, `-tests` misses the lib's unit tests and doctests.

use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=MUJOCO_DYNAMIC_LINK_DIR");
    println!("cargo:rerun-if-env-changed=ROQSIM_LIBPYTHON");

    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let mujoco_dir = match env::var_os("MUJOCO_DYNAMIC_LINK_DIR") {
        Some(dir) if !dir.is_empty() => manifest_dir.join(dir), // join keeps an absolute path as is
        _ => manifest_dir.join(".deps").join("mujoco").join("lib"),
    };
    let mujoco_dir = mujoco_dir.canonicalize().unwrap_or(mujoco_dir);
    if !mujoco_dir.join("libmujoco.so").exists() {
        println!(
            "cargo:warning=no libmujoco.so in {} (run scripts/setup.sh)",
            mujoco_dir.display()
        );
    }
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", mujoco_dir.display());

    if env::var_os("CARGO_FEATURE_ROS").is_some() {
        let libpython =
            env::var("ROQSIM_LIBPYTHON").unwrap_or_else(|_| "libpython3.11.so.1.0".to_string());
        println!("cargo:rustc-link-arg=-Wl,--no-as-needed");
        println!("cargo:rustc-link-arg=-l:{libpython}");
        println!("cargo:rustc-link-arg=-Wl,--as-needed");
    }
}
