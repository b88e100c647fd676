//! Which camera publishes which topic and stamps which optical frame: two cameras on one topic
//! would interleave their frames, and one frame name stamped by two cameras that look from
//! different places would make every consumer's TF lookup wrong for one of them. Both are refused
//! while the world is set up (so `roqsim check` refuses them without a ROS transport), naming both
//! cameras. Two cameras rendering through one view may share a frame (a label camera beside the
//! colour camera whose optics it shares).

use crate::context::SimContext;

/// Blackboard key of the claims.
const KEY: &str = "camera:claims";

/// One camera's claim.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// The plugin's address (`robot.wrist_camera.realsense_d435`).
    pub address: String,
    /// The plugin (`realsense_d435`).
    pub plugin: String,
    /// What it renders from (`camera 3`, `site 7`): a frame may be shared within one view.
    pub view: String,
    /// Fully resolved topics (`/ns/camera/color/image_raw`) with their endpoint role.
    pub topics: Vec<(String, String)>,
    /// Effective frame names (namespace frame prefix applied).
    pub frames: Vec<String>,
}

/// The absolute topic `topic` (relative to namespace `ns`, or absolute `/x`) names.
pub fn absolute_topic(ns: &str, topic: &str) -> String {
    let parts: Vec<&str> = if topic.starts_with('/') {
        topic.split('/').collect()
    } else {
        ns.split('/').chain(topic.split('/')).collect()
    };
    let joined: Vec<&str> = parts.into_iter().filter(|p| !p.is_empty()).collect();
    format!("/{}", joined.join("/"))
}

/// Record `claim` (replacing an earlier claim of the same address), or say whom it collides with.
pub fn claim(ctx: &mut SimContext, claim: Claim) -> Result<(), String> {
    if !ctx.blackboard.contains(KEY) {
        ctx.blackboard.set(KEY, Vec::<Claim>::new());
    }
    let all = ctx.blackboard.get_mut::<Vec<Claim>>(KEY)?;
    all.retain(|c| c.address != claim.address);
    for other in all.iter() {
        for (role, topic) in &claim.topics {
            if let Some((other_role, _)) = other.topics.iter().find(|(_, t)| t == topic) {
                return Err(format!(
                    "topics.{role}: `{topic}` is already published by `{}` ({}, its `{other_role}`); two cameras on one topic interleave their frames: give this one another `camera_name:` (or rename it with `topics:`)",
                    other.address, other.plugin
                ));
            }
        }
        if other.view != claim.view {
            if let Some(f) = claim.frames.iter().find(|f| other.frames.contains(f)) {
                return Err(format!(
                    "frame_id: `{f}` is already the optical frame of `{}` ({}), which renders from another view; one frame names one pose: give this one another `frame_id:` (or `camera_name:`)",
                    other.address, other.plugin
                ));
            }
        }
    }
    all.push(claim);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::absolute_topic;

    #[test]
    fn topics_resolve_inside_the_namespace_unless_absolute() {
        assert_eq!(absolute_topic("", "camera/color/image_raw"), "/camera/color/image_raw");
        assert_eq!(
            absolute_topic("/robot/", "oak/stereo/image_raw"),
            "/robot/oak/stereo/image_raw"
        );
        assert_eq!(absolute_topic("robot", "/x//y"), "/x/y");
    }
}
