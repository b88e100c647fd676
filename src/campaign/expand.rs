//! Trial expansion: worlds × factor levels × repetitions, in a fixed order, each trial with its
//! override assignments and its seed.
//!
//! Order: the world outermost, then the factors in document order (the first varies slowest),
//! then the repetition. A trial's index is its position in that order; its seed is
//! `seed + index` (or `seed + repetition` with `seed_by: repetition`), so the same document
//! always gives the same trials, and two campaigns of the same shape give trial i the same seed.

use std::path::PathBuf;

use serde_json::Value as Json;
use serde_norway::{Mapping, Value};

use crate::campaign::document::{Campaign, Levels, SeedBy, WorldRef};
use crate::world::overrides::{set_in, Assignment};

/// One trial.
#[derive(Debug, Clone, PartialEq)]
pub struct Trial {
    /// Position in the expansion (0-based).
    pub index: usize,
    /// Its world.
    pub world: WorldRef,
    /// (factor name, the level as a table cell), in factor order.
    pub levels: Vec<(String, Json)>,
    /// Repetition (0-based).
    pub repetition: u64,
    /// The trial's seed.
    pub seed: u64,
    /// The override assignments, in order (later wins).
    pub assignments: Vec<Assignment>,
    /// The override files of its files-factor levels (absolute when they exist).
    pub files: Vec<PathBuf>,
}

impl Trial {
    /// The override document the trial runs with, shaped like the world (what a harness writes
    /// beside its results).
    pub fn override_document(&self) -> Result<Mapping, String> {
        let mut m = Mapping::new();
        for a in &self.assignments {
            set_in(&mut m, &a.path, a.value.clone())
                .map_err(|e| format!("{} ({}): {e}", a.dotted(), a.source))?;
        }
        Ok(m)
    }
}

/// A YAML value as a table cell (a scalar stays a scalar; anything else is its JSON).
pub fn cell(v: &Value) -> Json {
    serde_json::to_value(v).unwrap_or(Json::Null)
}

/// Every trial of `c`, in index order.
pub fn expand(c: &Campaign) -> Vec<Trial> {
    let mut out = Vec::new();
    let sizes: Vec<usize> = c.factors.iter().map(|f| f.len()).collect();
    let cells: usize = sizes.iter().product();
    for w in &c.worlds {
        for cell_i in 0..cells {
            // Mixed-radix digits of cell_i, the last factor varying fastest.
            let mut digits = vec![0usize; sizes.len()];
            let mut rest = cell_i;
            for (d, n) in digits.iter_mut().zip(&sizes).rev() {
                *d = rest % n;
                rest /= n;
            }
            let mut levels = Vec::new();
            let mut assignments = Vec::new();
            let mut files_of = Vec::new();
            for (f, &d) in c.factors.iter().zip(&digits) {
                match &f.levels {
                    Levels::Values(vals) => {
                        levels.push((f.name.clone(), cell(&vals[d])));
                        assignments.push(Assignment {
                            path: f.name.split('.').map(str::to_string).collect(),
                            value: vals[d].clone(),
                            source: format!("campaign factor {}", f.name),
                        });
                    }
                    Levels::Files(files) => {
                        let (written, a) = &files[d];
                        levels.push((f.name.clone(), Json::from(written.clone())));
                        assignments.extend(a.iter().cloned());
                        let p = c.dir.join(written);
                        files_of.push(std::fs::canonicalize(&p).unwrap_or(p));
                    }
                }
            }
            for r in 0..c.repetitions {
                let index = out.len();
                let k = match c.seed_by {
                    SeedBy::Trial => index as u64,
                    SeedBy::Repetition => r,
                };
                out.push(Trial {
                    index,
                    world: w.clone(),
                    levels: levels.clone(),
                    repetition: r,
                    // In range: parse_campaign refuses a base seed whose largest trial seed
                    // would pass u64::MAX.
                    seed: c.seed.saturating_add(k),
                    assignments: assignments.clone(),
                    files: files_of.clone(),
                });
            }
        }
    }
    out
}
