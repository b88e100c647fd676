//! Campaigns ([docs/campaigns.md](../../docs/campaigns.md)): one document sweeping worlds,
//! override values and seeds; every trial a separate `roqsim sim` process of this binary; one
//! results table.
//!
//! - `document`: the campaign document, read strictly;
//! - `expand`: worlds × factor levels × repetitions → trials with overrides and seeds;
//! - `validate`: every trial's world built and every collected address looked up, up front;
//! - `run`: a trial's folder, its process under a wall timeout, the pool of N at a time, resume;
//! - `table`: `results.csv` / `results.jsonl`;
//! - `summary`: `roqsim sim --summary`, the end-of-run JSON a trial hands back;
//! - `cli`: `roqsim campaign run` and `roqsim campaign trial` (and `--ray`, handed to the
//!   `campaign/roqsim_ray` Python package).

pub mod cli;
pub mod document;
pub mod expand;
pub mod run;
pub mod summary;
pub mod table;
pub mod validate;

pub use document::{load_campaign, parse_campaign, Campaign};
pub use expand::{expand, Trial};
