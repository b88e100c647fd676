//! Where installed packages are, for every lookup of a package's files (models, worlds, meshes,
//! the `package://` keys of recordings and campaign hashes): the `AMENT_PREFIX_PATH` prefixes
//! (how ament_index finds an installed ROS 2 package) and the prefix the running binary is
//! installed in (`<prefix>/lib/roqsim/roqsim`, colcon's layout).

use std::path::{Path, PathBuf};

/// Every non-empty `AMENT_PREFIX_PATH` entry, in order.
pub fn ament_prefixes() -> Vec<PathBuf> {
    std::env::var("AMENT_PREFIX_PATH")
        .map(|p| p.split(':').filter(|s| !s.is_empty()).map(PathBuf::from).collect())
        .unwrap_or_default()
}

/// The install prefix of the running binary when it sits where colcon installs it
/// (`<prefix>/lib/<package>/<binary>`); `None` for a binary elsewhere (`target/release/roqsim`).
pub fn binary_prefix() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let lib = exe.parent()?.parent()?;
    if lib.file_name() != Some(std::ffi::OsStr::new("lib")) {
        return None;
    }
    lib.parent().map(Path::to_path_buf)
}

/// The ament prefixes, then the binary's own prefix: every place an installed package's
/// `share/<package>` can be.
pub fn install_prefixes() -> Vec<PathBuf> {
    let mut v = ament_prefixes();
    v.extend(binary_prefix());
    v
}
