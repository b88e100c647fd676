//! `end_effector:` — the tool grafted at the arm's site before the arm is attached: `replaces`
//! deletes the bodies it supersedes, the gripper model is attached at the site (the site's frame
//! is the tool frame; `pos`/`rpy` offset it) under the end effector's prefix, and its actuators
//! join the arm's actuator table with their model values.

use std::path::Path;

use mujoco_rs::prelude::*;
use mujoco_rs::wrappers::mj_editing::{Attach, SpecObject};

use super::EndEffectorConfig;
use crate::math::quat_from_rpy;
use crate::spawn::actuators::{self, ActuatorRow};
use crate::spawn::import::{
    check_name_collisions, prefix_colliding_assets, KeyframeMap, StatedOptions,
};
use crate::spawn::model::LoadedModel;
use crate::spawn::{body_names, compose_top_level, find_site, load_model_as_written, Pose};

/// Graft `ee` onto the arm `m` (model reference `arm_model`) of the entry at `address`; the
/// tool's stated options go to `options`, its actuator rows to `rows`.
pub(super) fn graft(
    m: &mut LoadedModel,
    ee: &EndEffectorConfig,
    arm_model: &str,
    base_dir: &Path,
    address: &str,
    options: &mut Vec<StatedOptions>,
    rows: &mut Vec<ActuatorRow>,
) -> Result<(), String> {
    for r in &ee.replaces {
        if r == &m.root {
            return Err(format!("end_effector.replaces: `{r}` is the arm's root body; list only bodies the tool supersedes"));
        }
        let Some(body) = m.spec.body_mut(r) else {
            return Err(format!(
                "end_effector.replaces: model `{}` has no body `{r}`; its bodies: [{}]",
                arm_model,
                body_names(&m.spec).join(", ")
            ));
        };
        // SAFETY: the body is a live element of the arm's spec, deleted once; no handle
        // into it is used afterwards.
        unsafe { body.delete() }
            .map_err(|e| format!("end_effector.replaces: cannot delete `{r}`: {e}"))?;
    }
    if find_site(&m.spec, &ee.site).is_none() {
        let sites: Vec<String> = m.spec.site_iter().map(|s| s.name().to_string()).collect();
        return Err(format!(
            "end_effector.site: model `{}` has no site `{}`; its sites: [{}]",
            arm_model,
            ee.site,
            sites.join(", ")
        ));
    }
    let mut g = load_model_as_written(&ee.model, base_dir)
        .map_err(|e| format!("end_effector.model: {e}"))?;
    options.push(StatedOptions::of(&g.spec, &ee.model));
    // The offset composes with the gripper's own root frames (a root body the file
    // places above its origin keeps that offset at the flange).
    let offset = Pose { pos: ee.pos, quat: quat_from_rpy(ee.rpy[0], ee.rpy[1], ee.rpy[2]) };
    compose_top_level(&mut g.spec, &offset);
    let stem = g.asset.path.file_stem().and_then(|s| s.to_str()).unwrap_or("tool");
    let tag = format!("{}_{stem}", address);
    check_name_collisions(
        &m.spec,
        &g.spec,
        &ee.prefix,
        "end_effector.prefix",
        &format!("the tool `{}`", ee.model),
        "gripper_",
    )?;
    prefix_colliding_assets(&m.spec, &mut g.spec, &ee.prefix, &tag)
        .map_err(|e| format!("end_effector: {e}"))?;
    KeyframeMap::rename(&mut g.spec, &tag).map_err(|e| format!("end_effector: {e}"))?;
    let before: Vec<String> = m.spec.actuator_iter().map(|a| a.name().to_string()).collect();
    m.spec
            .site_mut(&ee.site)
            .expect("checked")
            .attach_by_deep_copy(&mut g.spec, &ee.prefix, "")
            .map_err(|e| {
                format!(
                    "end_effector: attaching `{}` at site `{}` failed: {e}; give the gripper's names their own prefix with `end_effector.prefix` (e.g. `gripper_`)",
                    ee.model, ee.site
                )
            })?;
    // Rows for the grafted actuators (model values; the arm's block never reaches them).
    for row in actuators::describe(&m.spec) {
        if !before.contains(&row.actuator) {
            rows.push(row);
        }
    }
    Ok(())
}
