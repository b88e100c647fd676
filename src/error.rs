//! Error types shared by the loader, the engine and the CLI.
//!
//! Configuration problems are collected, never thrown one at a time: a world document is checked
//! whole and every problem is reported at once, each naming the key path it sits at
//! (`components.robot.diff_drive.wheel_radius`) and, where there is one, the fix.

use std::fmt;

/// One problem in a world document (or an override), located by its key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// Dotted key path into the document, e.g. `sim.contact_override.solref` or
    /// `components.robot.lidar.rays`. Empty for document-level problems (a YAML syntax error).
    pub path: String,
    /// What is wrong, and where there is one, how to fix it.
    pub message: String,
}

impl ConfigError {
    /// A problem at `path`. The message is made readable whatever a plugin formatted into it: a
    /// number of 21 or more digits (beyond u64's 20) (`1e308` printed with `{}`) is shown in scientific form, and a
    /// backquoted value longer than 200 characters is clipped ([`tidy`]).
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self { path: clip(&path.into()), message: tidy(&message.into()) }
    }
}

/// A message with its huge numbers in scientific form and its long backquoted values clipped.
pub fn tidy(message: &str) -> String {
    use std::sync::OnceLock;
    static LONG_NUM: OnceLock<regex::Regex> = OnceLock::new();
    let long_num = LONG_NUM.get_or_init(|| {
        // A number standing alone: not part of a path, a file or an identifier (`robot_1234…
        // 56.xml`, `/tmp/1111…/x` are echoed as given).
        regex::Regex::new(r"(^|[^\w./])(-?(?:\d{21,}(?:\.\d*)?|0\.0{8,}\d+))([\w./]?)")
            .expect("valid pattern")
    });
    let m = long_num.replace_all(message, |c: &regex::Captures| {
        if !c[3].is_empty() {
            return c[0].to_string();
        }
        match c[2].parse::<f64>() {
            Ok(v) => format!("{}{}", &c[1], num(v)),
            Err(_) => c[0].to_string(),
        }
    });
    // An unquoted run of 200+ characters without a space is no prose but a value echoed bare (a
    // path, a flag's value): clipped too.
    static LONG_WORD: OnceLock<regex::Regex> = OnceLock::new();
    let long_word =
        LONG_WORD.get_or_init(|| regex::Regex::new(r"[^\s`]{201,}").expect("valid pattern"));
    let bare = |p: &str| -> String {
        long_word.replace_all(p, |c: &regex::Captures| clip(&c[0])).into_owned()
    };
    // Backquotes pair up from the left: the odd pieces between them are quoted values. (Text
    // *between* two quoted values is prose and never clipped, however long.)
    let pieces: Vec<&str> = m.split('`').collect();
    if pieces.len() < 3 {
        return bare(&m);
    }
    let last_quoted = if pieces.len() % 2 == 1 { pieces.len() - 2 } else { pieces.len() - 3 };
    let mut out = String::with_capacity(m.len());
    for (i, p) in pieces.iter().enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 && i <= last_quoted {
            if p.chars().nth(200).is_some() {
                out.push_str(&clip(p));
            } else {
                out.push_str(p);
            }
        } else {
            out.push_str(&bare(p));
        }
    }
    out
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// Every problem found in one document, reported together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl ConfigErrors {
    /// Record one more problem.
    pub fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(ConfigError::new(path, message));
    }
    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Number of problems.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// Append all of `other`.
    pub fn extend(&mut self, other: ConfigErrors) {
        self.0.extend(other.0);
    }
    /// `Ok(())` when empty, else `Err(self)`.
    pub fn into_result(self) -> Result<(), ConfigErrors> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self)
        }
    }
    /// True when some problem's path or message contains `needle` (test helper).
    pub fn mentions(&self, needle: &str) -> bool {
        self.0.iter().any(|e| e.path.contains(needle) || e.message.contains(needle))
    }
}

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        writeln!(f, "{} problem{} in the world:", n, if n == 1 { "" } else { "s" })?;
        for e in &self.0 {
            writeln!(f, "  - {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

impl From<ConfigError> for ConfigErrors {
    fn from(e: ConfigError) -> Self {
        ConfigErrors(vec![e])
    }
}

/// A failure while building or running a simulation (after the document was accepted).
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The document was refused; every problem is listed.
    #[error("{0}")]
    Config(#[from] ConfigErrors),
    /// A plugin hook failed. `plugin` is its address, `hook` the hook name.
    #[error("[{plugin}] {hook}: {message}")]
    Plugin {
        /// The plugin's address.
        plugin: String,
        /// The hook that failed.
        hook: &'static str,
        /// The hook's message.
        message: String,
    },
    /// MuJoCo refused to load or compile the model.
    #[error("MuJoCo: {0}")]
    Mujoco(String),
    /// The state became non-finite: the run ends naming the time and the first bad field.
    #[error("non-finite state at t={time:.6} s: {field}")]
    NonFinite {
        /// Sim time (s) the step was meant to reach.
        time: f64,
        /// The first non-finite field (`qpos[3] = NaN (joint ...)`) or MuJoCo's warning.
        field: String,
    },
    /// The run's seed was needed (a plugin drew noise) and none was given.
    #[error("{0}")]
    Seed(String),
    /// Anything else, with context.
    #[error("{0}")]
    Other(String),
}

/// Result alias for plugin hooks: a failing hook returns a message; the engine adds the plugin
/// address and the hook name.
pub type HookResult = Result<(), String>;

/// A user's number as a message quotes it: plain for everyday magnitudes, scientific beyond them,
/// so `1e300` is echoed as `1e300`, not as 301 digits.
pub fn num(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && a.is_finite() && !(1e-4..1e7).contains(&a) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A user's string as a message quotes it: at most 80 characters, the rest elided with its length,
/// so a 1 MiB name is not echoed back whole.
pub fn clip(s: &str) -> String {
    const MAX: usize = 80;
    match s.char_indices().nth(MAX) {
        None => s.to_string(),
        Some((i, _)) => format!("{}… ({} bytes in all)", &s[..i], s.len()),
    }
}

/// serde's type and shape errors in the words the other refusals use: "invalid type: integer `3`,
/// expected a sequence" reads "must be a list ([a, b, ...]), got the integer 3". Every config
/// deserialisation maps its serde errors through here (`crate::plugin::typed_config`); a
/// message of another form is returned as is.
pub fn plain_serde(message: &str) -> String {
    use std::sync::OnceLock;
    static FORMS: OnceLock<[regex::Regex; 3]> = OnceLock::new();
    let [invalid_type, invalid_value, invalid_length] = FORMS.get_or_init(|| {
        [
            regex::Regex::new(r"(?s)^invalid type: (.*), expected (.*)$").expect("valid pattern"),
            regex::Regex::new(r"(?s)^invalid value: (.*), expected (.*)$").expect("valid pattern"),
            regex::Regex::new(r"(?s)^invalid length (\d+), expected (.*)$").expect("valid pattern"),
        ]
    });
    if let Some(c) = invalid_type.captures(message).or_else(|| invalid_value.captures(message)) {
        return format!("must be {}, got {}", serde_expected(&c[2]), serde_unexpected(&c[1]));
    }
    if let Some(c) = invalid_length.captures(message) {
        let n = &c[1];
        let items = if n == "1" { "item" } else { "items" };
        return format!("must be {}, got a list of {n} {items}", serde_expected(&c[2]));
    }
    if let Some(form) = message.strip_prefix("data did not match any variant of untagged enum ") {
        return match untagged_forms(form.trim()) {
            (forms, true) => format!(
                "has none of the forms this key takes ({forms}; `roqsim plugins describe` shows them)"
            ),
            (forms, false) => format!("has none of the forms this key takes ({forms})"),
        };
    }
    message.to_string()
}

/// The forms an untagged enum of the configs takes, by its Rust name, in the docs' words, and
/// whether `roqsim plugins describe` lists them (a plugin key; the `sim:` keys are no plugin's).
fn untagged_forms(name: &str) -> (&'static str, bool) {
    match name {
        "Home" => ("a list of joint positions in model order, or a mapping joint: position", true),
        "Tolerance" => ("one number for every joint, or a mapping joint: number", true),
        "RangeValue" => {
            ("a number, or one of the words -inf, +inf, inf, nan (raw for too_close)", true)
        }
        "PublishTf" => ("true or false, or one of the words static, dynamic", true),
        "PairFriction" => ("one number, or a list of 3 or 5 numbers", true),
        "Resistive" => ("one number for every actuator, or a mapping actuator: number", true),
        "Pacing" => ("`realtime`, `asap` or `{factor: x}` with x > 0", false),
        _ => ("see the plugin's keys", true),
    }
}

/// serde's "expected" phrase in plain words.
fn serde_expected(e: &str) -> String {
    use std::sync::OnceLock;
    static SIZED: OnceLock<regex::Regex> = OnceLock::new();
    let sized = SIZED.get_or_init(|| {
        regex::Regex::new(
            r"^(?:an array of length|a tuple of size|(?:a )?tuple of|tuple struct \w+ with) (\d+)(?: elements?)?$",
        )
        .expect("valid pattern")
    });
    if let Some(c) = sized.captures(e) {
        let n = &c[1];
        return format!("a list of {n} {}", if n == "1" { "item" } else { "items" });
    }
    match e {
        "f64" | "f32" => "a number".into(),
        // The whole range the key's type holds (a key with a narrower range checks it itself).
        "u8" => format!("a whole number from 0 to {}", u8::MAX),
        "u16" => format!("a whole number from 0 to {}", u16::MAX),
        "u32" => format!("a whole number from 0 to {}", u32::MAX),
        "u64" => format!("a whole number from 0 to {}", u64::MAX),
        "usize" => format!("a whole number from 0 to {}", usize::MAX),
        "u128" => "a whole number >= 0".into(),
        "i8" => format!("a whole number from {} to {}", i8::MIN, i8::MAX),
        "i16" => format!("a whole number from {} to {}", i16::MIN, i16::MAX),
        "i32" => format!("a whole number from {} to {}", i32::MIN, i32::MAX),
        "i64" => format!("a whole number from {} to {}", i64::MIN, i64::MAX),
        "isize" => format!("a whole number from {} to {}", isize::MIN, isize::MAX),
        "i128" => "a whole number".into(),
        "a string" | "a borrowed string" | "string" => "text (a string)".into(),
        "a boolean" => "true or false".into(),
        "a character" | "char" => "a single character".into(),
        "a sequence" => "a list ([a, b, ...])".into(),
        "a map" => "a mapping ({key: value, ...})".into(),
        "unit" => "null".into(),
        _ if e.starts_with("struct ") => "a mapping ({key: value, ...})".into(),
        // serde_yaml's words for an enum: its names are text (`roqsim plugins describe` lists them).
        "a Value::Tagged enum" | "enum" => "one of its names (text)".into(),
        _ => e.into(),
    }
}

/// serde's "invalid type" phrase for the value found, in plain words.
fn serde_unexpected(u: &str) -> String {
    let quoted = |p: &str| u.strip_prefix(p).and_then(|r| r.strip_prefix('`')?.strip_suffix('`'));
    if let Some(v) = quoted("integer ") {
        format!("the integer {v}")
    } else if let Some(v) = quoted("floating point ") {
        format!("the number {v}")
    } else if let Some(v) = quoted("boolean ") {
        v.to_string()
    } else if let Some(v) = u.strip_prefix("string ") {
        format!("the string {}", clip(v))
    } else {
        match u {
            "sequence" => "a list".into(),
            "map" => "a mapping".into(),
            "unit value" => "null (an empty value)".into(),
            "enum" => "a tagged value (`!tag`)".into(),
            _ => u.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidy_shortens_huge_numbers_and_long_quotes_but_keeps_u64_max() {
        let m = format!("must be > 0, got {} and {}", 1e308, 1e-300);
        assert_eq!(tidy(&m), "must be > 0, got 1e308 and 1e-300");
        assert_eq!(tidy("at most 18446744073709551615"), "at most 18446744073709551615");
        let q = format!("unknown world `{}`", "x".repeat(300));
        assert_eq!(tidy(&q), format!("unknown world `{}… (300 bytes in all)`", "x".repeat(80)));
        // Prose between two quoted values is never clipped, however long.
        let prose = format!("in `p.yaml`: {} its `- `", "y ".repeat(150));
        assert_eq!(tidy(&prose), prose);
        let e = ConfigError::new("a", m);
        assert_eq!(e.message, "must be > 0, got 1e308 and 1e-300");
    }

    #[test]
    fn tidy_leaves_digits_inside_paths_and_names_alone() {
        let digits = "1".repeat(21);
        for m in [
            format!("world `/tmp/x/{digits}.yaml` not found"),
            format!("model file `robot_{digits}.xml` not found"),
            format!("--summary /tmp/{digits}/x"),
        ] {
            assert_eq!(tidy(&m), m);
        }
        assert_eq!(
            tidy(&format!("got {digits}, (`{digits}`)")),
            "got 1.1111111111111111e20, (`1.1111111111111111e20`)"
        );
    }
}
