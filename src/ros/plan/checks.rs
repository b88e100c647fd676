//! The plan's cross-row rules: joint_states groups merged into one topic, and two rows that
//! would collide on one ROS name (or share a topic with different types or QoS) refused.

use std::collections::BTreeMap;

use super::*;

pub(super) fn merge_joint_states(
    iface: &Interface,
    cfg: &BridgeConfig,
    robot_of: &dyn Fn(&str) -> String,
    plan: &mut Plan,
    errors: &mut Vec<String>,
) {
    let js: Vec<OutPlan> = plan
        .outputs
        .iter()
        .filter(|o| o.msg_type == JOINT_STATE && o.field.is_none())
        .cloned()
        .collect();
    let topic_of = |id: EndpointId| {
        js.iter().find(|o| o.id == id).map(|o| o.topic.clone()).unwrap_or_default()
    };
    let mut groups: Vec<(String, Vec<EndpointId>)> = Vec::new();
    match &cfg.merged_joint_states {
        MergedJointStates::Off => {}
        MergedJointStates::Auto => {
            let mut by_owner: BTreeMap<String, Vec<EndpointId>> = BTreeMap::new();
            let mut order: Vec<String> = Vec::new();
            for o in &js {
                let owner = iface.get(o.id).owner.as_deref().map(robot_of).unwrap_or_default();
                if !by_owner.contains_key(&owner) {
                    order.push(owner.clone());
                }
                by_owner.entry(owner).or_default().push(o.id);
            }
            if order.len() > 1 {
                plan.warnings.push(format!(
                    "merged_joint_states auto: {} robots publish joint states ({}) and auto keeps them apart (one robot per \
                     entity, an arm mounted on a base counting as the base's); if they share one robot_description, set merged_joint_states: true or list a group",
                    order.len(),
                    order.iter().map(|o| if o.is_empty() { "(no owner)" } else { o.as_str() }).collect::<Vec<_>>().join(", ")
                ));
            }
            for owner in order {
                let members = by_owner.remove(&owner).unwrap_or_default();
                if members.len() < 2 {
                    continue;
                }
                let nss: Vec<&str> =
                    members.iter().map(|&id| iface.get(id).namespace.as_str()).collect();
                let scope = common_scope(&nss);
                groups.push((
                    names::resolve_topic(&cfg.namespace, &scope, "joint_states", None),
                    members,
                ));
            }
        }
        MergedJointStates::All => {
            if js.len() >= 2 {
                groups.push((
                    names::resolve_global(&cfg.namespace, "joint_states"),
                    js.iter().map(|o| o.id).collect(),
                ));
            }
        }
        MergedJointStates::Groups(gs) => {
            for (i, g) in gs.iter().enumerate() {
                let mut members = Vec::new();
                for owner in &g.owners {
                    for o in &js {
                        if names::owner_matches(
                            Some(std::slice::from_ref(owner)),
                            iface.get(o.id).owner.as_deref(),
                        ) && !members.contains(&o.id)
                        {
                            members.push(o.id);
                        }
                    }
                }
                if members.is_empty() {
                    let have: Vec<String> =
                        js.iter().filter_map(|o| iface.get(o.id).owner.clone()).collect();
                    errors.push(format!(
                        "merged_joint_states[{i}]: no joint_states endpoint is owned by [{}]; entities publishing joint states: [{}]",
                        g.owners.join(", "),
                        have.join(", ")
                    ));
                    continue;
                }
                groups.push((names::resolve_global(&cfg.namespace, &g.topic), members));
            }
        }
    }
    let stated = matches!(cfg.merged_joint_states, MergedJointStates::Groups(_));
    for (mut topic, members) in groups {
        // Controllers already sharing one topic would send partial messages on it: the merged
        // publisher takes that topic over (one complete message per tick), unless a group states
        // its own topic.
        let first = topic_of(members[0]);
        if members.iter().all(|&m| topic_of(m) == first) && !stated {
            let who: Vec<String> = members.iter().map(|&m| label(iface.get(m))).collect();
            plan.notes.push(format!(
                "joint_states of [{}] share {first}: one merged publisher carries them all there",
                who.join(", ")
            ));
            topic = first;
        }
        let requested_hz = members.iter().map(|&m| realised_hz(iface, m)).fold(0.0, f64::max);
        // A member whose own topic IS the merged topic is carried by the merged publisher only
        // (one publisher per topic; the merged message is a superset of it).
        plan.outputs.retain(|o| !(members.contains(&o.id) && o.topic == topic));
        plan.merged.push(MergedPlan { topic, members, requested_hz });
    }
}

pub(super) fn check_collisions(plan: &Plan, errors: &mut Vec<String>) {
    let mut seen: BTreeMap<&str, (&str, String)> = BTreeMap::new();
    for o in &plan.outputs {
        if let Some((t, who)) = seen.get(o.topic.as_str()) {
            if *t != o.msg_type {
                errors.push(format!(
                    "topic {}: endpoint {} publishes {} but endpoint {} publishes {} there; a ROS topic has one type: rename one with its `topics:` map",
                    o.topic, who, t, o.label, o.msg_type
                ));
            }
        } else {
            seen.insert(o.topic.as_str(), (o.msg_type.as_str(), o.label.clone()));
        }
    }
    for i in &plan.inputs {
        if let InKind::Topic { msg_type, .. } = &i.kind {
            if let Some((t, who)) = seen.get(i.name.as_str()) {
                if *t != msg_type {
                    errors.push(format!(
                        "topic {}: endpoint {} publishes {} but endpoint {} subscribes {} there; rename one with its `topics:` map",
                        i.name, who, t, i.label, msg_type
                    ));
                }
            }
        }
    }
}

/// Two robots on one topic: a command topic two robots subscribe would drive both, and a state
/// topic two robots publish (odometry, scans) would interleave them. Both come from two robots in
/// one namespace; refuse naming the topic and both endpoints. Joint states are merged on a shared
/// topic (`merged_joint_states`), and many publishers on /diagnostics is ROS's convention.
pub(super) fn check_shared_topics(
    iface: &Interface,
    robot_of: &dyn Fn(&str) -> String,
    plan: &Plan,
    errors: &mut Vec<String>,
) {
    let robot = |id: EndpointId| iface.get(id).owner.as_deref().map(robot_of);
    let mut seen: BTreeMap<String, (String, String)> = BTreeMap::new();
    let outs = plan
        .outputs
        .iter()
        .filter(|o| {
            o.msg_type != "diagnostic_msgs/msg/DiagnosticArray" && o.msg_type != JOINT_STATE
        })
        .map(|o| (&o.topic, o.id, &o.label, "publish"));
    let ins = plan.inputs.iter().map(|i| (&i.name, i.id, &i.label, "serve"));
    for (topic, id, label, verb) in outs.chain(ins) {
        let Some(r) = robot(id) else { continue };
        let key = format!("{verb} {topic}");
        match seen.get(&key) {
            Some((other, who)) if *other != r => errors.push(format!(
                "topic {topic}: robots `{other}` (endpoint {who}) and `{r}` (endpoint {label}) would both {verb} it; \
                 give each robot its own namespace (`namespace:` on its spawn entry) or rename one with `topics:`"
            )),
            Some(_) => {}
            None => {
                seen.insert(key, (r, label.clone()));
            }
        }
    }
}
