//! `joint_state_publisher`: every hinge and slide joint of an entity as one `joint_states`
//! message, the way ros2_control's
//! joint_state_broadcaster does.
//!
//! The entity read is the one this entry is nested under (`requires_owner`). Names are published
//! without the spawn prefix, so a description published alongside matches them. Ball and free
//! joints are skipped (a JointState carries one scalar per joint). A named joint that is not in the
//! model, not on this entity, or not a hinge/slide is refused: a state nobody publishes is a
//! consumer reading zeros as a fact.

use std::collections::BTreeMap;

use mujoco_rs::mujoco_c::mjtJoint;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::payload::Payload;
use crate::context::{Endpoint, EndpointId, SimContext};
use crate::error::{ConfigError, HookResult};
use crate::plugin::{Hooks, Plugin, PluginArgs, PluginDescriptor, ValidateConfig};
use crate::plugin_descriptor;
use crate::plugins::shared::{self as common, JointRef, Scope};

/// Endpoint roles (keys of `topics:`).
pub const ROLES: [&str; 1] = ["joint_states"];

fn d_rate() -> f64 {
    50.0
}

/// Config of `joint_state_publisher`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JointStatePublisherConfig {
    /// Transport scope of the endpoint; default (omitted or empty): the owning entity's namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Joint names to publish (the model's own, before any spawn prefix), in this order;
    /// default (empty): every hinge and slide joint of the entity's subtree, in model order.
    #[serde(default)]
    pub joints: Vec<String>,
    /// Publish rate (Hz). Default 50.
    #[serde(default = "d_rate")]
    pub rate_hz: f64,
    /// Topic per endpoint role (`joint_states`): absolute hardwires, relative renames.
    #[serde(default)]
    pub topics: BTreeMap<String, String>,
}

impl ValidateConfig for JointStatePublisherConfig {
    fn validate(&self) -> Vec<ConfigError> {
        let mut e = Vec::new();
        e.extend(crate::plugin::check_rate("rate_hz", self.rate_hz));
        for (i, j) in self.joints.iter().enumerate() {
            if j.trim().is_empty() {
                e.push(ConfigError::new(format!("joints[{i}]"), "empty joint name"));
            } else if self.joints[..i].contains(j) {
                e.push(ConfigError::new(format!("joints[{i}]"), format!("`{j}` is listed twice")));
            }
        }
        e.extend(common::check_topics(&self.topics, &ROLES));
        e
    }
}

/// The `joint_state_publisher` plugin.
pub struct JointStatePublisher {
    cfg: JointStatePublisherConfig,
    owner: Option<String>,
    joints: Vec<JointRef>,
    id: EndpointId,
}

impl JointStatePublisher {
    /// Construct from config.
    pub fn new(cfg: JointStatePublisherConfig, args: &PluginArgs) -> Self {
        JointStatePublisher { cfg, owner: args.owner.clone(), joints: Vec::new(), id: 0 }
    }

    /// Published joint names, in message order.
    pub fn joint_names(&self) -> Vec<String> {
        self.joints.iter().map(|j| j.name.clone()).collect()
    }
}

/// The descriptor (refused at the top of a document: `requires_owner`).
pub fn descriptor() -> PluginDescriptor {
    plugin_descriptor!(
        "joint_state_publisher",
        "Every hinge and slide joint of the entity it is nested under, as one joint_states message.",
        JointStatePublisherConfig,
        JointStatePublisher
    )
    .requires_owner()
}

fn scalar(t: mjtJoint) -> bool {
    t == mjtJoint::mjJNT_HINGE || t == mjtJoint::mjJNT_SLIDE
}

impl Plugin for JointStatePublisher {
    fn hooks(&self) -> Hooks {
        Hooks::CONFIGURE | Hooks::POST_STEP
    }

    fn configure(&mut self, ctx: &mut SimContext) -> HookResult {
        let entity = common::owner_entity(ctx, "joint_state_publisher", self.owner.as_deref())?;
        let model = ctx.model();
        let root = common::entity_body(model, &entity)?;
        if self.cfg.joints.is_empty() {
            let nj = model.ffi().njnt as usize;
            for j in 0..nj {
                if scalar(model.jnt_type()[j])
                    && common::in_subtree(model, model.jnt_bodyid()[j] as usize, root)
                {
                    self.joints.push(JointRef::new(model, &entity, j));
                }
            }
            if self.joints.is_empty() {
                return Err(format!(
                    "entity `{}` has no hinge or slide joint to publish",
                    entity.name
                ));
            }
        } else {
            for (i, name) in self.cfg.joints.iter().enumerate() {
                let j = common::resolve_joint(model, &entity, &format!("joints[{i}]"), name)?;
                if !scalar(model.jnt_type()[j]) {
                    return Err(format!(
                        "joints[{i}]: `{name}` is a {:?} joint; a JointState carries one scalar per joint, so only hinge and slide joints are published",
                        model.jnt_type()[j]
                    ));
                }
                self.joints.push(JointRef::new(model, &entity, j));
            }
        }
        let scope = Scope::new(&entity, self.cfg.namespace.as_deref());
        self.id = ctx.interface.add(
            scope.apply(
                Endpoint::out("joint_states")
                    .rate(self.cfg.rate_hz)
                    .hint("ros2", "type", "sensor_msgs/msg/JointState")
                    .hint("ros2", "qos", "reliable"),
                &self.cfg.topics,
            ),
        );
        Ok(())
    }

    fn post_step(&mut self, ctx: &mut SimContext) -> HookResult {
        if ctx.interface.is_due(self.id, ctx.tick) {
            let msg = common::joint_state(ctx, &self.joints);
            let tick = ctx.tick;
            ctx.interface.publish(self.id, tick, Payload::JointState(msg));
        }
        Ok(())
    }
}
