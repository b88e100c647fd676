//! Names of placed things: MJCF prefixes, transport namespaces and TF frame prefixes.

use crate::error::ConfigError;

/// The TF frame prefix of a namespace: `robot1` → `robot1/`, `""` → `""`.
pub fn frame_prefix(namespace: &str) -> String {
    crate::ros::names::normalize_prefix(namespace)
}

/// Default MJCF prefix of a device mounted on a carrier: `<attach_prefix><label>_`.
pub fn device_prefix(attach_prefix: &str, label: &str) -> String {
    format!("{attach_prefix}{label}_")
}

/// An MJCF-safe name for an address (`room.box_1` → `room_box_1`), with `prefix` before it.
pub fn body_name_for(prefix: &str, address: &str) -> String {
    format!("{prefix}{}", address.replace('.', "_"))
}

/// The label of an address (its last segment).
pub fn label_of(address: &str) -> &str {
    address.rsplit('.').next().unwrap_or(address)
}

/// Refuse a `namespace:` that is not a valid ROS namespace (the transport's rule,
/// `crate::ros::names::check_namespace`) and a `prefix:` holding whitespace or `/`.
pub fn check_names(namespace: &str, prefix: &str) -> Vec<ConfigError> {
    let mut e = Vec::new();
    if let Err(m) = crate::ros::names::check_namespace(namespace) {
        e.push(ConfigError::new("namespace", m));
    }
    if prefix.chars().any(|c| c.is_whitespace() || c == '/') {
        e.push(ConfigError::new("prefix", format!("`{prefix}` contains whitespace or `/`; an MJCF name prefix is a plain word such as `robot1_`")));
    }
    e
}
