//! `ground_truth_pose`: the exact pose of an entity's body or site as a TF frame.
//! What a grader compares odometry and localisation against;
//! never noisy.
//!
//! The entity is the one this entry is nested under (`requires_owner`). The pose is read from the
//! kinematics MuJoCo computed during the step (`xpos`/`xquat`, `site_xpos`/`site_xmat`), like every
//! MuJoCo sensor. Out endpoint `pose` (role name; default topic the relative `tf`, hint
//! `("ros2", "tf", "dynamic")`) carries a one-transform `Transforms` payload at `rate_hz`; an
//! in-process [`GroundTruthReader`] on the blackboard under `ground_truth:<address>` is refreshed
//! every step.
//!
//! Frames: with `relative_to: world` the transform is `map` → `<model>_base_link_gt` (the Gazebo
//! convention, global frames), so the endpoint carries no frame prefix; with `relative_to: base`
//! it is a link of the robot (`base_link` → child) and carries the entity's frame prefix.

use std::collections::BTreeMap;

use mujoco_rs::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::{Payload, PoseTwist, Transform};
use crate::context::{Endpoint, EndpointId, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::math::{arr3, quat, rot_of_xmat, vec3, xyzw};
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared::{self as common, Scope};

/// Endpoint roles (keys of `topics:`).
pub const ROLES: [&str; 1] = ["pose"];

/// Which frame the pose is expressed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum RelativeTo {
    /// The true world pose (default).
    #[default]
    World,
    /// The pose in the entity's base-body frame (a link of the model).
    Base,
}

fn d_rate() -> f64 {
    30.0
}

/// Config of `ground_truth_pose`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroundTruthPoseConfig {
    /// Body to report (model name, without the spawn prefix); default: the entity's base body.
    #[serde(default)]
    pub body: String,
    /// A SITE of the entity instead of a body (a sensor mount, an emitter); `body` then must be empty.
    #[serde(default)]
    pub site: String,
    /// `world` (default): the true world pose. `base`: the pose in the entity's base-body frame.
    #[serde(default)]
    pub relative_to: RelativeTo,
    /// Parent frame of the transform; default `map` (world) or the base body's name (base).
    #[serde(default)]
    pub frame_id: Option<String>,
    /// Child frame; default `<model>_base_link_gt` for the base body (Gazebo-compatible),
    /// `<model>_<body>_gt` for another body, the site's own name for a site.
    #[serde(default)]
    pub child_frame: Option<String>,
    /// TF publish rate (Hz). Default 30.
    #[serde(default = "d_rate")]
    pub rate_hz: f64,
    /// Publish only while something subscribes (for a frame only the robot's own stack reads).
    #[serde(default)]
    pub lazy: bool,
    /// Topic per endpoint role (`pose`; default the relative `tf`): an absolute name hardwires it.
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

impl ValidateConfig for GroundTruthPoseConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        e.extend(crate::plugin::check_rate("rate_hz", self.rate_hz));
        if !self.body.is_empty() && !self.site.is_empty() {
            e.push(ConfigError::new(
                "site",
                "give `body` or `site`, not both (with a site the body is unused)",
            ));
        }
        for (k, v) in [("frame_id", &self.frame_id), ("child_frame", &self.child_frame)] {
            if v.as_deref().is_some_and(|s| s.trim().is_empty()) {
                e.push(ConfigError::new(k, "empty frame name: omit the key for the default"));
            }
        }
        e.extend(common::check_topics(&self.topics, &ROLES));
        e
    }
}

/// In-process access to the latest ground truth (blackboard `ground_truth:<address>`), refreshed
/// every physics step. Clone it out of the blackboard; clones share the value.
/// `get()` is the latest pose and twist: position (m) and orientation `[x, y, z, w]` in
/// `frame_id`, linear (m/s) and angular (rad/s) velocity expressed in `frame_id`.
pub type GroundTruthReader = crate::plugins::shared::latest::Reader<PoseTwist>;

/// Blackboard key of a ground-truth reader.
pub fn reader_key(address: &str) -> String {
    format!("ground_truth:{address}")
}

#[derive(Debug, Clone, Copy)]
enum Target {
    Body(usize),
    Site(usize),
}

/// The `ground_truth_pose` plugin.
pub struct GroundTruthPose {
    cfg: GroundTruthPoseConfig,
    address: String,
    owner: Option<String>,
    target: Target,
    base: usize,
    frame_id: String,
    child: String,
    id: EndpointId,
    reader: GroundTruthReader,
}

impl GroundTruthPose {
    /// Construct from config.
    pub fn new(cfg: GroundTruthPoseConfig, args: &PluginArgs) -> Self {
        GroundTruthPose {
            cfg,
            address: args.address.clone(),
            owner: args.owner.clone(),
            target: Target::Body(0),
            base: 0,
            frame_id: String::new(),
            child: String::new(),
            id: 0,
            reader: GroundTruthReader::default(),
        }
    }

    /// Parent and child frame ids of the published transform.
    pub fn frames(&self) -> (&str, &str) {
        (&self.frame_id, &self.child)
    }

    fn measure(&self, ctx: &SimContext) -> PoseTwist {
        let d = ctx.data();
        let (pos, rot, vel) = match self.target {
            Target::Body(b) => (
                d.xpos()[b],
                quat(&d.xquat()[b]),
                d.object_velocity(MjtObjBase::mjOBJ_XBODY, b, false),
            ),
            Target::Site(s) => (
                d.site_xpos()[s],
                rot_of_xmat(&d.site_xmat()[s]),
                d.object_velocity(MjtObjBase::mjOBJ_SITE, s, false),
            ),
        };
        let (mut p, mut q) = (vec3(&pos), rot);
        let (mut w, mut v) = (vec3(&[vel[0], vel[1], vel[2]]), vec3(&[vel[3], vel[4], vel[5]]));
        if self.cfg.relative_to == RelativeTo::Base {
            let (bp, bq) = (vec3(&d.xpos()[self.base]), quat(&d.xquat()[self.base]));
            let bv = d.object_velocity(MjtObjBase::mjOBJ_XBODY, self.base, false); // XBODY: at the body frame origin (BODY = the COM)
            let inv = bq.inverse();
            let dp = p - bp;
            let bw = vec3(&[bv[0], bv[1], bv[2]]);
            let dv = v - vec3(&[bv[3], bv[4], bv[5]]) - bw.cross(&dp);
            p = inv * dp;
            q = inv * q;
            v = inv * dv;
            w = inv * (w - bw);
        }
        PoseTwist {
            stamp: ctx.sim_time(),
            frame_id: self.frame_id.clone(),
            child_frame_id: self.child.clone(),
            position: arr3(&p),
            orientation: xyzw(&q),
            linear: arr3(&v),
            angular: arr3(&w),
        }
    }
}

/// Short model name of a model reference (`turtlebot4`, `pkg:car`, `/x/y/car.xml` → `car`).
pub fn model_stem(model: &str) -> &str {
    let s = model.rsplit(['/', ':']).next().unwrap_or(model);
    s.strip_suffix(".xml").or_else(|| s.strip_suffix(".mjcf")).unwrap_or(s)
}

/// The descriptor (refused at the top of a document: `requires_owner`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "ground_truth_pose",
        "Ground-truth pose of the entity's base body (or a body / site) as a TF frame, plus a blackboard reader.",
        GroundTruthPoseConfig,
        GroundTruthPose
    )
    .requires_owner()
}

impl Plugin for GroundTruthPose {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::ON_RESET | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let entity = common::owner_entity(ctx, "ground_truth_pose", self.owner.as_deref())?;
        let model = ctx.model();
        self.base = common::entity_body(model, &entity)?;
        let base_name = common::unprefixed(
            model.id_to_name(MjtObjBase::mjOBJ_BODY, self.base).unwrap_or("base_link"),
            &entity.prefix,
        )
        .to_string();
        let stem = model_stem(&entity.model);
        let stem = if stem.is_empty() { common::unprefixed(&entity.name, "") } else { stem };
        let default_child;
        if !self.cfg.site.is_empty() {
            let s = common::resolve_site(model, &entity, "site", &self.cfg.site)?;
            self.target = Target::Site(s);
            default_child = self.cfg.site.clone();
        } else {
            let b = common::resolve_body(model, &entity, "body", &self.cfg.body)?;
            self.target = Target::Body(b);
            default_child = if b == self.base {
                format!("{stem}_base_link_gt")
            } else {
                format!("{stem}_{}_gt", self.cfg.body)
            };
        }
        self.child = self.cfg.child_frame.clone().unwrap_or(default_child);
        self.frame_id = self.cfg.frame_id.clone().unwrap_or_else(|| match self.cfg.relative_to {
            RelativeTo::World => "map".to_string(),
            RelativeTo::Base => base_name,
        });
        let scope = Scope::new(&entity, None);
        let mut ep = Endpoint::out("pose")
            .rate(self.cfg.rate_hz)
            .lazy(self.cfg.lazy)
            .hint("ros2", "type", "tf2_msgs/msg/TFMessage")
            .hint("ros2", "tf", "dynamic");
        if !self.cfg.topics.contains_key("pose") {
            ep = ep.hint("ros2", "topic", "tf");
        }
        let mut ep = scope.apply(ep, &self.cfg.topics);
        if self.cfg.relative_to == RelativeTo::World {
            ep.frame_prefix = String::new(); // `map` and `<model>_base_link_gt` are global frames
        }
        if !self.cfg.topics.contains_key("pose") {
            // On /tf itself: its edge is claimed like every TF publisher's.
            let t = Transform {
                parent: self.frame_id.clone(),
                child: self.child.clone(),
                ..Default::default()
            };
            let keys = crate::context::FrameKeys::new(
                "child_frame",
                "Give each ground_truth_pose its own `child_frame:` (a world-relative frame takes no namespace prefix).",
            );
            let by = crate::context::Claimant::new(&self.address, "ground_truth_pose");
            let route = crate::context::TfRoute::Dynamic;
            crate::spawn::claim_tf(ctx, &by, route, &ep.frame_prefix, &[t], &keys)?;
        }
        self.id = ctx.interface.add(ep);
        ctx.blackboard.set(reader_key(&self.address), self.reader.clone());
        Ok(())
    }

    fn on_reset(&mut self, ctx: &mut SimContext) -> HookResult {
        self.reader.set(self.measure(ctx));
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        let pt = self.measure(ctx);
        let tick = ctx.tick;
        if ctx.interface.is_due(self.id, tick) {
            let tf = Transform {
                parent: pt.frame_id.clone(),
                child: pt.child_frame_id.clone(),
                translation: pt.position,
                rotation: pt.orientation,
            };
            ctx.interface.publish(self.id, tick, Payload::Transforms(vec![tf]));
        }
        self.reader.set(pt);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mat_quat_and_stem() {
        let q = crate::math::quat_from_rpy(0.3, -0.2, 2.5);
        // Row-major (MuJoCo's xmat): the column-major storage of the transpose.
        let rt = crate::math::quat(&q).to_rotation_matrix().matrix().transpose();
        let m: [f64; 9] = rt.as_slice().try_into().unwrap();
        let r = crate::math::quat_from_mat(&m);
        let sgn = if q[0] < 0.0 { -1.0 } else { 1.0 };
        for i in 0..4 {
            assert!((r[i] - sgn * q[i]).abs() < 1e-12, "{r:?} vs {q:?}");
        }
        assert_eq!(model_stem("turtlebot4"), "turtlebot4");
        assert_eq!(model_stem("/a/b/car.xml"), "car");
        assert_eq!(model_stem("pkg:car"), "car");
    }
}
