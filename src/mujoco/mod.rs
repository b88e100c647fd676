//! Seams into MuJoCo: the one place each kind of low-level call goes through, so its invariants
//! (masks, buffer lengths, single-threaded use) are kept in one file.
//!
//! - [`raycast`]: every ray sensor casts through `RayBatch::cast` (`mj_multiRay`).

pub mod raycast;
