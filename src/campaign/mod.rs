//! Campaigns ([docs/campaigns.md](../../docs/campaigns.md)): one document sweeping worlds,
//! override values and seeds; every trial a separate `roqsim sim` process of this binary; one
//! results table.
//!
//! - `document`: the campaign document, read strictly;
//! - `expand`: worlds × factor levels × repetitions → trials with overrides and seeds;
//! - `validate`: every trial's world built and every collected address looked up, up front;
//! - `folder`: the output folder's lock, the refusal of a folder that is not a campaign's, and
//!   `resolved.json` (the inputs' content hashes and the binary a resume must match);
//! - `run`: a trial's folder, its process under a wall timeout, the pool of N at a time, resume;
//! - `table`: `results.csv` / `results.jsonl`;
//! - `summary`: `roqsim sim --summary`, the end-of-run JSON a trial hands back;
//! - `cli`: `roqsim campaign run` and `roqsim campaign trial`;
//! - `ray`: `--ray`, the pending trials handed to the `campaign/roqsim_ray` Python package.

pub mod cli;
pub mod document;
pub mod expand;
pub mod folder;
pub mod ray;
pub mod run;
pub mod summary;
pub mod table;
pub mod validate;

pub use document::{load_campaign, parse_campaign, Campaign};
pub use expand::{expand, Trial};
