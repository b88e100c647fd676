//! The ROS arguments `ros2 run` / `ros2 launch` append to roqsim's command line: node remaps
//! lifted onto the main node, and the `--ros-args ... [--]` section set aside for rcl.

use std::path::PathBuf;

/// Apply `--ros-args -r __node:=/__ns:=` to the main node only: re-execute without them, their
/// values in the environment (`crate::ros::remap`), so each of the process's nodes keeps a
/// distinct name. Returns only when there is nothing to lift (or the exec failed).
#[cfg(feature = "ros")]
pub(super) fn lift_node_remaps() {
    use crate::ros::remap;
    use std::os::unix::process::CommandExt;
    let args: Vec<String> = std::env::args().collect();
    let Some(l) = remap::lift(&args) else { return };
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!("cannot find the roqsim executable to apply the node remaps: {e}");
            return;
        }
    };
    let mut cmd = std::process::Command::new(exe);
    cmd.arg0(&args[0]).args(&l.args[1..]);
    if let Some(n) = &l.node {
        cmd.env(remap::NODE_NAME_ENV, n);
    }
    if let Some(ns) = &l.namespace {
        cmd.env(remap::NAMESPACE_ENV, ns);
    }
    let e = cmd.exec();
    tracing::warn!("cannot re-execute roqsim to apply the node remaps: {e}; every node takes them");
}

/// Drop the ROS arguments `ros2 run` / `ros2 launch` append (`--ros-args ... [--]`): rcl reads
/// them itself (node name and namespace remaps, parameter files) when the bridge starts its
/// node; the `roqsim` command line does not take them. Inside the ROS section only rcl's own
/// flags are accepted (as rcl does: an unknown one is an error there too), so a roqsim flag written
/// after `--ros-args` is refused rather than silently swallowed. Beside the arguments kept, the
/// files the ROS section names (`--params-file`, `--log-config-file`: inputs an output flag must
/// not overwrite), each with its flag.
#[allow(clippy::type_complexity)]
pub fn strip_ros_args(
    args: impl Iterator<Item = std::ffi::OsString>,
) -> Result<(Vec<std::ffi::OsString>, Vec<(&'static str, PathBuf)>), String> {
    /// rcl's flags that take a value, then those that stand alone (rcl_arguments.h).
    const WITH_VALUE: &[&str] = &[
        "-r",
        "--remap",
        "-p",
        "--param",
        "--params-file",
        "--log-level",
        "--log-config-file",
        "-e",
        "--enclave",
        "--log-file-name",
    ];
    const ALONE: &[&str] = &[
        "--enable-rosout-logs",
        "--disable-rosout-logs",
        "--enable-stdout-logs",
        "--disable-stdout-logs",
        "--enable-external-lib-logs",
        "--disable-external-lib-logs",
    ];
    /// Those whose value is a file the run reads.
    const FILES: &[&str] = &["--params-file", "--log-config-file"];
    let mut out = Vec::new();
    let mut files = Vec::new();
    let mut in_ros = false;
    let mut takes_value: Option<&'static str> = None;
    for a in args {
        if a == "--ros-args" {
            in_ros = true;
            takes_value = None;
        } else if in_ros && a == "--" {
            in_ros = false;
        } else if !in_ros {
            out.push(a);
        } else if let Some(flag) = takes_value.take() {
            if FILES.contains(&flag) {
                files.push((flag, PathBuf::from(a)));
            }
        } else {
            let t = a.to_string_lossy();
            if let Some(flag) = WITH_VALUE.iter().find(|f| **f == t.as_ref()) {
                takes_value = Some(flag);
            } else if !ALONE.contains(&t.as_ref()) {
                return Err(format!(
                    "`{t}` comes after --ros-args, where only ROS arguments go (-r, -p, --params-file, --log-level, ...): \
                     put roqsim's own flags before --ros-args, or end the ROS arguments with `--` first"
                ));
            }
        }
    }
    Ok((out, files))
}
