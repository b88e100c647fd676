//! The campaign folder's guards: one campaign at a time in a folder (`DIR/.lock`), a folder that
//! is not a campaign's is never written into, and a resume whose inputs changed is refused.
//!
//! `DIR/resolved.json` records what the document's names resolved to when the folder was made
//! (the document's folder, the world files, the override files of a files factor) and what the
//! trials ran on: the content hash of every input file (every file `roqsim scenes inputs` lists
//! for each trial's world with its overrides — the world YAML and the worlds it `extends:`, the
//! MJCF world and what it `<include>`s, meshes, textures, the models' files and the asset folders
//! they borrow — and each override file of a files factor) and the identity of the roqsim binary
//! (its version and content hash). A resume, and
//! `campaign trial`, re-hash the same files and refuse when one differs: its results would sit in
//! one table beside results of another world.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};

use crate::introspect::inputs::world_inputs;
use crate::record::provenance::{hash_bytes, hash_input, input_key, package_shares};
use crate::world::LoadOptions;

/// `DIR/resolved.json`.
pub const RESOLVED: &str = "resolved.json";
/// `DIR/.lock`: held (flock) by the process running into the folder.
pub const LOCK: &str = ".lock";
/// The fix a refused resume names.
pub const NEW_FOLDER: &str = "choose a new folder (-o), or delete this one to start over";

/// The folder's exclusive lock; released when dropped (or when the process ends, however).
#[derive(Debug)]
pub struct FolderLock {
    _file: File,
}

/// Take `dir`'s lock without waiting; refused naming the folder and the pid holding it. The
/// caller has checked that `dir` is a campaign's (or empty) first, so a refused folder never gets
/// a `.lock`. A `.lock` that is a symbolic or hard link (or anything but a plain file) is
/// refused, never followed: the pid would be written over whatever it points to. `shown` is the folder as the user
/// named it.
pub fn lock(dir: &Path, shown: &Path) -> Result<FolderLock, String> {
    let p = dir.join(LOCK);
    let not_plain = || {
        format!(
            "{}: {} is not a plain file (a symbolic or hard link, a folder or a device): a \
             campaign's lock is a plain file it creates; remove {} and run again",
            shown.display(),
            p.display(),
            p.display()
        )
    };
    let mut f = match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&p)
    {
        Ok(f) => f,
        Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::EISDIR)) => {
            return Err(not_plain())
        }
        Err(e) => return Err(format!("{}: {e}", p.display())),
    };
    // A hard link would have the pid written over the file it shares.
    if !f.metadata().is_ok_and(|m| m.is_file() && m.nlink() == 1) {
        return Err(not_plain());
    }
    // SAFETY: flock(2) on a descriptor this function owns and keeps open.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(format!("{}: cannot lock it: {e}", p.display()));
        }
        let mut pid = String::new();
        let _ = f.read_to_string(&mut pid);
        let pid = pid.trim();
        let who = if pid.is_empty() { "pid unknown".to_string() } else { format!("pid {pid}") };
        return Err(format!(
            "{}: another roqsim campaign ({who}) is running in this folder (it holds {}): wait \
             for it to end, or name another folder",
            shown.display(),
            p.display()
        ));
    }
    let pid = std::process::id().to_string();
    let written = f
        .set_len(0)
        .and_then(|_| f.rewind())
        .and_then(|_| f.write_all(format!("{pid}\n").as_bytes()));
    written.map_err(|e| format!("{}: {e}", p.display()))?;
    Ok(FolderLock { _file: f })
}

/// Refuse an existing, non-empty folder that is not a campaign's (it has no campaign.yaml):
/// nothing in it is touched.
pub fn check_not_foreign(dir: &Path, shown: &Path) -> Result<(), String> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Ok(()) };
    let others: Vec<String> = rd
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != LOCK)
        .collect();
    if others.is_empty() || dir.join("campaign.yaml").is_file() {
        return Ok(());
    }
    Err(format!(
        "-o {}: the folder is not empty and is not a campaign's folder (it has no campaign.yaml): \
         name a new or empty folder, or a campaign's folder to resume; nothing in it was touched",
        shown.display()
    ))
}

/// The roqsim binary's identity: version and content hash.
pub fn binary_identity(exe: &Path) -> Result<Json, String> {
    let bytes = std::fs::read(exe)
        .map_err(|e| format!("cannot read the roqsim binary {}: {e}", exe.display()))?;
    Ok(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "path": exe.display().to_string(),
        "sha256": hash_bytes(&bytes),
    }))
}

/// Every input file of one trial's world with its overrides, hashed: exactly the files
/// `roqsim scenes inputs` walks ([`world_inputs`]: the world YAML and its `extends:` chain, the
/// MJCF world and its includes, meshes, textures and height fields, the models' MJCF and
/// manifests and the asset folders they borrow, files a component's config names), plus the
/// override files of its files-factor levels. A file an installed package ships is keyed
/// `package://<pkg>/<path>` (as a recording keys it), so a resume finds it wherever the package
/// is installed then.
pub fn world_input_hashes(
    world: &Path,
    opts: &LoadOptions,
    override_files: &[PathBuf],
) -> BTreeMap<String, String> {
    let walked = world_inputs(world, opts);
    let shares = package_shares();
    let keys: Vec<String> =
        walked.inputs.iter().chain(override_files).map(|f| input_key(f, &shares)).collect();
    hash_inputs(keys.iter().map(String::as_str))
}

/// `files` hashed (`key → sha256:…`; an unreadable file says so in place of a hash). A key is a
/// path or a recording's `package://<pkg>/<path>` (looked up in the packages installed now).
pub fn hash_inputs<'a>(files: impl IntoIterator<Item = &'a str>) -> BTreeMap<String, String> {
    files.into_iter().map(|f| (f.to_string(), hash_key(f))).collect()
}

/// One input's hash by its key, as [`hash_inputs`] stores it.
fn hash_key(key: &str) -> String {
    let h = hash_input(key);
    if h.starts_with("sha256:") {
        h
    } else {
        format!("unreadable: {h}")
    }
}

/// The full `resolved.json` record: `names` (`Campaign::resolved`) with the inputs' hashes and
/// the binary's identity.
pub fn record(names: &Json, inputs: &BTreeMap<String, String>, binary: &Json) -> Json {
    let mut r = names.clone();
    r["inputs"] = json!(inputs);
    r["roqsim"] = binary.clone();
    r
}

/// The first difference between two `Campaign::resolved` name records, for a person.
pub fn names_difference(then: &Json, now: &Json) -> Option<String> {
    for (key, what) in [("worlds", "the world files"), ("override_files", "the override files")] {
        if then[key] != now[key] {
            return Some(format!("{what} were {} then and are {} now", then[key], now[key]));
        }
    }
    None
}

/// Why the trials recorded in `then` cannot be resumed with these inputs: the first input file
/// whose content changed (or that is gone), or a different roqsim binary. `now_inputs` is what
/// the current document's worlds are built from (None: re-hash the recorded files only).
pub fn inputs_difference(
    then: &Json,
    now_inputs: Option<&BTreeMap<String, String>>,
    binary: &Json,
) -> Option<String> {
    let Some(recorded) = then["inputs"].as_object() else {
        return Some(
            "resolved.json records no content hashes of the inputs (the folder was made by an \
             older roqsim), so a resume cannot tell whether the worlds changed"
                .to_string(),
        );
    };
    for (file, old) in recorded {
        let now = hash_key(file);
        if Some(now.as_str()) != old.as_str() {
            return Some(if now.starts_with("unreadable") {
                format!("the input file {file} is gone or unreadable since the trials ran")
            } else {
                format!(
                    "the input file {file} changed since the trials ran (its content hash differs)"
                )
            });
        }
    }
    if let Some(now) = now_inputs {
        if let Some(extra) = now.keys().find(|k| !recorded.contains_key(k.as_str())) {
            return Some(format!(
                "the worlds are now built from {extra}, which the trials did not use"
            ));
        }
    }
    let (a, b) = (&then["roqsim"], binary);
    if a["sha256"] != b["sha256"] {
        return Some(format!(
            "the roqsim binary is not the one that ran the trials (then version {}, {}; now \
             version {}, {} at {})",
            a["version"].as_str().unwrap_or("?"),
            a["sha256"].as_str().unwrap_or("?"),
            b["version"].as_str().unwrap_or("?"),
            b["sha256"].as_str().unwrap_or("?"),
            b["path"].as_str().unwrap_or("?")
        ));
    }
    None
}

/// Read `DIR/resolved.json`.
pub fn read_resolved(dir: &Path) -> Option<Json> {
    std::fs::read_to_string(dir.join(RESOLVED)).ok().and_then(|s| serde_json::from_str(&s).ok())
}

/// Write `DIR/resolved.json`.
pub fn write_resolved(dir: &Path, r: &Json) -> Result<(), String> {
    let p = dir.join(RESOLVED);
    let text = serde_json::to_string_pretty(r).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))
}
