//! An output flag naming an input: `sim --record/--summary`, `render --out/--video` and
//! `export -o` pointing at a file the run reads would overwrite it — the world, a parent it
//! `extends:`, an `--override` file, or an MJCF, mesh, texture or manifest it loads. Such an output
//! is refused before anything is written; the inputs are those `roqsim scenes inputs` lists (the
//! same walk), plus the `--override` files.

use std::path::{Path, PathBuf};

use super::{assignments, WorldArgs};
use crate::runner;

/// The files the command line's `--ros-args` section names (`--params-file`, ...): rcl reads them
/// when the node starts, so they are inputs of every command.
static ROS_ARG_FILES: std::sync::OnceLock<Vec<(&'static str, PathBuf)>> =
    std::sync::OnceLock::new();

/// Keep the files `--ros-args` names (set once, from the command line).
pub(super) fn set_ros_arg_files(files: Vec<(&'static str, PathBuf)>) {
    let _ = ROS_ARG_FILES.set(files);
}

/// The files a command reads, each with how a refusal names it.
pub(super) struct Inputs(Vec<(String, PathBuf)>);

impl Inputs {
    /// The `--ros-args` files, first in every list.
    fn ros_arg_files() -> Vec<(String, PathBuf)> {
        ROS_ARG_FILES
            .get()
            .map(|v| {
                v.iter()
                    .map(|(flag, p)| (format!("the --ros-args {flag} file"), p.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The files a world reads: the world file, its `--override` files and everything its inputs
    /// walk finds (parents, model files, their meshes and textures).
    pub(super) fn of_world(w: &WorldArgs) -> Inputs {
        let mut list = Self::ros_arg_files();
        list.extend(w.overrides.iter().map(|p| ("the --override file".to_string(), p.clone())));
        if let Ok(path) = runner::resolve_world(&w.world) {
            list.push(("the world file".to_string(), path.clone()));
            let opts = crate::LoadOptions {
                assignments: assignments(w).unwrap_or_default(),
                ..Default::default()
            };
            for f in crate::introspect::inputs::world_inputs(&path, &opts).inputs {
                list.push((
                    "a file the world reads (`roqsim scenes inputs` lists it)".to_string(),
                    f,
                ));
            }
        }
        Inputs(list)
    }

    /// A recording and the files its world was built from (its provenance's `input_hashes`: a
    /// render rebuilds the world and reads the model files from disk). An unreadable recording
    /// gives itself alone; opening it refuses it later with the reason.
    pub(super) fn of_recording(p: &Path) -> Inputs {
        let mut v = Self::ros_arg_files();
        v.push(("the recording".to_string(), p.to_path_buf()));
        if let Ok(rec) = crate::record::open(p) {
            let hashes: std::collections::BTreeMap<String, String> = rec
                .provenance
                .get("input_hashes")
                .and_then(|h| serde_json::from_str(h).ok())
                .unwrap_or_default();
            for key in hashes.keys().filter(|k| !k.starts_with("package://")) {
                v.push(("a file the recorded world reads".to_string(), key.into()));
            }
        }
        Inputs(v)
    }

    /// The first output (flag, path) that names one of the inputs, or that cannot be written
    /// ([`unwritable_kind`]), as a refusal.
    pub(super) fn clash(&self, outputs: &[(&str, &Path)]) -> Option<String> {
        for (flag, out) in outputs {
            if let Some(m) = unwritable_kind(flag, out) {
                return Some(m);
            }
            if let Some((what, _)) = self.0.iter().find(|(_, i)| same(out, i)) {
                return Some(format!(
                    "{flag} {} is {what}: writing it would overwrite it; name another file",
                    out.display()
                ));
            }
        }
        None
    }
}

/// Two paths naming one file: the same device and inode when both exist (through symlinks, `..`
/// and hard links), else the same absolute path.
pub(super) fn same(x: &Path, y: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    match (std::fs::metadata(x), std::fs::metadata(y)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => abs(x) == abs(y),
    }
}

/// An output that exists but is no file to write: a FIFO that nothing reads (opening it to write
/// would wait for a reader forever), a socket, or — for `--record`, which seeks back into its file
/// to finish it — anything but a regular file (`/dev/null` made the MCAP writer panic). A FIFO
/// something reads, or a device such as `/dev/stdout`, stays a valid output for the others.
fn unwritable_kind(flag: &str, out: &Path) -> Option<String> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let meta = std::fs::metadata(out).ok()?;
    let t = meta.file_type();
    let shown = out.display();
    if t.is_dir() || t.is_file() {
        return None; // a folder is refused by each writer, saying what it wanted
    }
    let kind = if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else {
        "a block device"
    };
    if flag == "--record" {
        return Some(format!(
            "{flag} {shown} is not a regular file ({kind}): a recording is finished by seeking back into its file; name a file"
        ));
    }
    if t.is_socket() {
        return Some(format!(
            "{flag} {shown} is {kind}, which cannot be opened to write; name a file"
        ));
    }
    if t.is_fifo() {
        // Without a reader a non-blocking open fails (ENXIO) where a plain one would wait forever.
        let probe =
            std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(out);
        match probe {
            // Held open until the process ends: closing it now would hand the reader an early
            // end of file before the output is written.
            Ok(f) => std::mem::forget(f),
            Err(_) => {
                return Some(format!(
                    "{flag} {shown} is a FIFO that nothing reads: writing it would wait for a reader forever; name a file"
                ))
            }
        }
    }
    None
}
