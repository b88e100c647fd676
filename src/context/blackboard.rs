//! The typed blackboard: cross-plugin cooperation by `<kind>:<name>` keys.
//!
//! A controller puts a handle under `robot:<name>`; a consumer resolves it by key and type. A
//! missing key or a value of another type is an error naming both, never a silent default.

use std::any::{type_name, Any};
use std::collections::BTreeMap;

struct Entry {
    value: Box<dyn Any>,
    type_name: &'static str,
}

/// Key → typed value store. Lives on the physics thread (values need not be `Send`).
#[derive(Default)]
pub struct Blackboard {
    entries: BTreeMap<String, Entry>,
}

impl std::fmt::Debug for Blackboard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.entries.iter().map(|(k, e)| (k, e.type_name))).finish()
    }
}

impl Blackboard {
    /// Store `value` under `key` (replacing any previous value).
    pub fn set<T: Any>(&mut self, key: impl Into<String>, value: T) {
        self.entries
            .insert(key.into(), Entry { value: Box::new(value), type_name: type_name::<T>() });
    }

    /// The value under `key` as a `T`; an error names the key, and the stored and wanted types.
    pub fn get<T: Any>(&self, key: &str) -> Result<&T, String> {
        let e = self.entries.get(key).ok_or_else(|| {
            let keys: Vec<&str> = self.entries.keys().map(String::as_str).collect();
            format!(
                "blackboard has no `{key}` (wanted a {}); keys present: [{}]",
                type_name::<T>(),
                keys.join(", ")
            )
        })?;
        e.value.downcast_ref::<T>().ok_or_else(|| {
            format!("blackboard `{key}` holds a {}, not a {}", e.type_name, type_name::<T>())
        })
    }

    /// Mutable access, with the same errors as [`Blackboard::get`].
    pub fn get_mut<T: Any>(&mut self, key: &str) -> Result<&mut T, String> {
        let e = self
            .entries
            .get_mut(key)
            .ok_or_else(|| format!("blackboard has no `{key}` (wanted a {})", type_name::<T>()))?;
        let tn = e.type_name;
        e.value
            .downcast_mut::<T>()
            .ok_or_else(|| format!("blackboard `{key}` holds a {tn}, not a {}", type_name::<T>()))
    }

    /// True when `key` is present.
    pub fn contains(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// Remove `key`, returning whether it was present.
    pub fn remove(&mut self, key: &str) -> bool {
        self.entries.remove(key).is_some()
    }

    /// Keys in sorted order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_key_and_types() {
        let mut b = Blackboard::default();
        b.set("robot:a", 3.5f64);
        assert_eq!(*b.get::<f64>("robot:a").unwrap(), 3.5);
        let e = b.get::<u32>("robot:a").unwrap_err();
        assert!(e.contains("robot:a") && e.contains("f64") && e.contains("u32"), "{e}");
        let e = b.get::<f64>("robot:b").unwrap_err();
        assert!(e.contains("robot:b") && e.contains("robot:a"), "{e}");
    }
}
