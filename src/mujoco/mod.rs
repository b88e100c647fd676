//! Seams into MuJoCo: the one place each kind of low-level call goes through, so its invariants
//! (masks, buffer lengths, bounds, single-threaded use) are kept in one file.
//!
//! - [`raycast`]: every ray sensor casts through `RayBatch::cast` (`mj_multiRay`), with `ray_bins`
//!   (a planar scan's angular bins, its cull) and `ray_culls` (the per-ray cull tests, pure
//!   geometry);
//! - [`model_write`]: every run-time write into the compiled model goes through a `ModelWriter`;
//! - [`frames`]: frames of the compiled model (a body or a site), resolved by name, and the
//!   transforms between them;
//! - [`jacobian`]: a site's Jacobian over the dofs a controller commands (`mj_jacSite`) and the
//!   damped-least-squares step through it.

pub mod frames;
pub mod jacobian;
pub mod model_write;
mod ray_bins;
mod ray_culls;
pub mod raycast;
