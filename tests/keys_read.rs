//! Every accepted key does something: each field of every registered plugin's config schema and
//! of the `sim:` block must be read by code. A field that is deserialised and never read is a key
//! a world can set to no effect — the silent no-op this test exists to catch.
//!
//! The check is on the source: for each config type (the schema's root and every `$defs` entry
//! with properties) and each of its fields, some file under src/ that names the type must read
//! the field (`.field` not followed by `(`, a `Type { field, .. }` destructuring, or the invocation
//! of a `macro_rules!` macro whose body reads `$arg.field`), outside comments and outside the
//! type's own definition.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;

/// Keys whose reading is being implemented right now by other work, as `Type.field` (or
/// `Type.*`) with who owns it. Each entry must still match an unread field, so that it is removed
/// the day the work lands.
const PENDING: &[(&str, &str)] = &[];

fn pending(ty: &str, prop: &str) -> Option<&'static (&'static str, &'static str)> {
    PENDING.iter().find(|(pat, _)| {
        let (t, f) = pat.split_once('.').unwrap();
        t == ty.trim_start_matches('~') && (f == "*" || f == prop)
    })
}

struct Sources {
    files: Vec<(PathBuf, String)>,
    /// serde `rename = "prop"` → the Rust field it names.
    renames: BTreeMap<String, String>,
    /// Per type: the field names read where it is named.
    reads: RefCell<BTreeMap<String, BTreeSet<String>>>,
    /// Per `macro_rules!` macro: the fields its body reads from an argument (`$cfg.f`), which
    /// count as read in every file that invokes it (`ray_keys_of!(self)`).
    macro_reads: BTreeMap<String, BTreeSet<String>>,
}

/// The body of the brace-delimited item whose opening brace ends at `open_end`.
fn braced(text: &str, open_end: usize) -> &str {
    let mut depth = 0usize;
    for (i, ch) in text[open_end - 1..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &text[open_end..open_end - 1 + i];
                }
            }
            _ => {}
        }
    }
    &text[open_end..]
}

fn strip_comments(text: &str) -> String {
    text.lines()
        .map(|l| {
            let t = l.trim_start();
            if t.starts_with("//") {
                ""
            } else {
                match l.find(" //") {
                    Some(i) if !l[..i].contains('"') => &l[..i],
                    _ => l,
                }
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn collect(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push((p.clone(), strip_comments(&std::fs::read_to_string(&p).unwrap())));
        }
    }
}

/// Remove `struct T { ... }` / `enum T { ... }` bodies (the definition is not a read).
fn without_definition(text: &str, ty: &str) -> String {
    let re = Regex::new(&format!(r"(struct|enum)\s+{ty}\b[^{{;]*\{{")).unwrap();
    let Some(m) = re.find(text) else { return text.to_string() };
    let mut depth = 0usize;
    let mut end = text.len();
    for (i, ch) in text[m.end() - 1..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    end = m.end() - 1 + i + 1;
                    break;
                }
            }
            _ => {}
        }
    }
    format!("{}{}", &text[..m.start()], &text[end..])
}

impl Sources {
    fn load() -> Sources {
        let mut files = Vec::new();
        collect(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
        let rename = Regex::new(
            r#"rename\s*=\s*"([A-Za-z0-9_]+)"\s*\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub\s+)?(?:r#)?([a-z_0-9]+)\s*:"#,
        )
        .unwrap();
        let mut renames = BTreeMap::new();
        for (_, t) in &files {
            for c in rename.captures_iter(t) {
                renames.insert(c[1].to_string(), c[2].to_string());
            }
        }
        let def = Regex::new(r"macro_rules!\s+([a-z_][a-z0-9_]*)\s*\{").unwrap();
        let arg_access = Regex::new(r"\$[a-z_][a-z0-9_]*\.([a-z_][a-z0-9_]*)\b").unwrap();
        let mut macro_reads: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (_, t) in &files {
            for c in def.captures_iter(t) {
                let body = braced(t, c.get(0).unwrap().end());
                let set = macro_reads.entry(c[1].to_string()).or_default();
                for a in arg_access.captures_iter(body) {
                    if !body[a.get(0).unwrap().end()..].trim_start().starts_with('(') {
                        set.insert(a[1].to_string());
                    }
                }
            }
        }
        Sources { files, renames, reads: Default::default(), macro_reads }
    }

    /// Every field name read in the files naming `ty` (its own definition excluded): `.f` not
    /// followed by `(`, a `get("f")` of a raw config mapping, a `ty { f, .. }` destructuring.
    fn reads_of(&self, ty: &str) -> std::cell::Ref<'_, BTreeSet<String>> {
        if !self.reads.borrow().contains_key(ty) {
            let names = Regex::new(&format!(r"\b{ty}\b")).unwrap();
            let access = Regex::new(r"\.([a-z_][a-z0-9_]*)\b").unwrap();
            let get = Regex::new(r#"\.get\("([a-z_][a-z0-9_]*)"\)"#).unwrap();
            let destructure = Regex::new(&format!(r"\b{ty}\s*\{{([^}}]*)\.\.\s*\}}")).unwrap();
            // A raw config mapping read by key (`config.get("default_plugins")`, in a shared
            // expansion helper) counts wherever it is.
            let mut set: BTreeSet<String> = self
                .files
                .iter()
                .flat_map(|(_, t)| {
                    get.captures_iter(t).map(|c| c[1].to_string()).collect::<Vec<_>>()
                })
                .collect();
            // A nested config type is often reached through its owner's field without being
            // named (`sim.controllers.as_ref().and_then(|c| c.initial_state)`): search every file.
            let nested = ty.starts_with('~');
            let bare = ty.trim_start_matches('~');
            for (_, t) in self.files.iter().filter(|(_, t)| nested || names.is_match(t)) {
                let t = without_definition(t, bare);
                for c in access.captures_iter(&t) {
                    let m = c.get(0).unwrap();
                    if !t[m.end()..].trim_start().starts_with('(') {
                        set.insert(c[1].to_string());
                    }
                }
                for (name, fields) in &self.macro_reads {
                    if t.contains(&format!("{name}!(")) {
                        set.extend(fields.iter().cloned());
                    }
                }
                for c in destructure.captures_iter(&t) {
                    for f in c[1].split(',') {
                        let f = f.split(':').next().unwrap_or("").trim();
                        if !f.is_empty() {
                            set.insert(f.to_string());
                        }
                    }
                }
            }
            self.reads.borrow_mut().insert(ty.to_string(), set);
        }
        std::cell::Ref::map(self.reads.borrow(), |m| &m[ty])
    }

    /// True when some file naming `ty` reads `field` (Rust field name).
    fn is_read(&self, ty: &str, field: &str) -> bool {
        self.reads_of(ty).contains(field)
    }

    /// The Rust field of a schema property (serde `rename`).
    fn rust_field(&self, prop: &str) -> String {
        self.renames.get(prop).cloned().unwrap_or_else(|| prop.to_string())
    }
}

/// (type, property) pairs of a schema: the root and every `$defs` entry with properties.
fn fields(schema: &serde_json::Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut push = |ty: &str, v: &serde_json::Value| {
        if let Some(props) = v.get("properties").and_then(|p| p.as_object()) {
            for k in props.keys() {
                out.push((ty.to_string(), k.clone()));
            }
        }
    };
    let root = schema.get("title").and_then(|t| t.as_str()).unwrap_or_default().to_string();
    push(&root, schema);
    if let Some(defs) = schema.get("$defs").and_then(|d| d.as_object()) {
        for (name, d) in defs {
            push(&format!("~{name}"), d);
        }
    }
    out
}

fn every_schema() -> BTreeMap<String, serde_json::Value> {
    let mut m = BTreeMap::new();
    for d in roqsim::plugins::registry() {
        m.insert(d.name.to_string(), (d.schema)().as_value().clone());
    }
    m.insert(
        "sim".to_string(),
        roqsim::plugin::schema_of::<roqsim::world::sim::SimBlock>().as_value().clone(),
    );
    m
}

#[test]
fn every_config_field_is_read_by_code() {
    let src = Sources::load();
    let mut unread = Vec::new();
    let mut checked = 0;
    let mut pending_hit = BTreeSet::new();
    for (owner, schema) in every_schema() {
        for (ty, prop) in fields(&schema) {
            let field = src.rust_field(&prop);
            checked += 1;
            let read = src.is_read(&ty, &field);
            match (read, pending(&ty, &prop)) {
                (false, None) => unread.push(format!("{owner}: {ty}.{prop}")),
                (false, Some((pat, _))) => {
                    pending_hit.insert(*pat);
                }
                (true, _) => {}
            }
        }
    }
    assert!(checked > 150, "only {checked} fields found: the schema walk is broken");
    assert!(
        unread.is_empty(),
        "config fields no code reads (a key accepted and then ignored); read them, or refuse the key:\n  {}",
        unread.join("\n  ")
    );
    for (pat, who) in PENDING {
        assert!(
            pending_hit.contains(pat),
            "`{pat}` is read now ({who} landed): remove it from PENDING in tests/keys_read.rs"
        );
    }
}

#[test]
fn the_check_detects_an_unread_field() {
    let src = Sources::load();
    assert!(!src.is_read("SimBlock", "no_such_field_anywhere"));
    assert!(src.is_read("SimBlock", "noslip_iterations"));
    // A field named only in its own definition does not count as read.
    let t = "pub struct Foo {\n    pub bar: f64,\n}\nfn f(x: &Foo) -> f64 { 0.0 }\n";
    assert!(!without_definition(t, "Foo").contains("bar"));
    assert_eq!(strip_comments("let a = 1; // x.bar\n// y.baz"), "let a = 1;\n");
    // A macro's reads of its argument count where it is invoked, and only those.
    assert_eq!(braced("m { a { b } c } d", 3), " a { b } c ");
    assert!(src.macro_reads["ray_keys_of"].contains("dropout_percent"));
    assert!(!src.macro_reads["watch_keys_of"].contains("rate_hz"));
    assert!(src.is_read("LidarConfig", "dropout_percent"));
}
