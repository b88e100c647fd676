//! The bridge's `configure`, step by step: a publisher per out endpoint, the TF publishers, the
//! merged joint_states and /clock publishers, and a subscription or server per in endpoint, each
//! recorded for the type watchdog, the latency trace's topic names and the forwarding set.

use std::sync::Arc;

use r2r::rosgraph_msgs::msg::Clock;
use r2r::sensor_msgs::msg::JointState;
use r2r::tf2_msgs::msg::TFMessage;

use super::{MergedSlot, OutSlot, TfSlot};
use crate::context::payload::Payload;
use crate::context::{EndpointId, SimContext};
use crate::ros::clock::ClockGate;
use crate::ros::config::BridgeConfig;
use crate::ros::convert::{self, Frames, Sink, Task};
use crate::ros::graph::{Side, Watched};
use crate::ros::handlers;
use crate::ros::plan::{self, InKind, Qos};

/// The physical robot of an owner: an arm `mount:`ed on a base belongs to the base's.
pub(super) fn physical_robot(ctx: &SimContext, owner: &str) -> String {
    let mut cur = owner.to_string();
    for _ in 0..8 {
        let next = ctx
            .entities
            .get(&cur)
            .and_then(|e| e.meta.get("mount"))
            .and_then(|m| m.split(':').next())
            .map(str::to_string);
        match next {
            Some(n) if n != cur => cur = n,
            _ => break,
        }
    }
    cur
}

/// The node being wired during `configure`, with what every step records: the topics by index
/// (the latency trace names them), what the type watchdog watches, the endpoints forwarded.
pub(super) struct Wiring<'a> {
    pub(super) node: r2r::Node,
    pub(super) address: &'a str,
    pub(super) topics: Vec<String>,
    pub(super) watched: Vec<Watched>,
    pub(super) tracked: Vec<EndpointId>,
}

impl Wiring<'_> {
    /// The index of topic `t`, added on first use.
    pub(super) fn topic_idx(&mut self, t: &str) -> usize {
        if let Some(i) = self.topics.iter().position(|x| x == t) {
            i
        } else {
            self.topics.push(t.to_string());
            self.topics.len() - 1
        }
    }

    fn watch(&mut self, topic: &str, msg_type: &str, side: Side, endpoint: &str) {
        self.watched.push(Watched {
            topic: topic.into(),
            msg_type: msg_type.into(),
            side,
            endpoint: endpoint.into(),
        });
    }

    /// A publisher per out endpoint with a converter, on its gate when `rates:` overrides it.
    pub(super) fn outputs(
        &mut self,
        ctx: &mut SimContext,
        plan: &plan::Plan,
    ) -> Result<Vec<OutSlot>, String> {
        let physics_hz = ctx.interface.physics_hz();
        let mut outs = Vec::new();
        for o in &plan.outputs {
            if !convert::OUT_TYPES.contains(&o.msg_type.as_str()) {
                tracing::warn!(
                    "[{}] endpoint {}: no converter for `{}` (converters: {}); {} is not published",
                    self.address,
                    o.label,
                    o.msg_type,
                    convert::OUT_TYPES.join(", "),
                    o.topic
                );
                continue;
            }
            let out = convert::make_outbound(&mut self.node, &o.msg_type, &o.topic, o.qos)
                .map_err(|e| format!("endpoint {}: {e}", o.label))?;
            let every = o.rate_override.map(|hz| {
                let producer = ctx.interface.get(o.id).snapped.map(|s| s.every_steps).unwrap_or(1);
                let s = plan::snap_override(hz, physics_hz, producer);
                ctx.interface
                    .record_rate(&format!("ros2 {} (rates override of {})", o.topic, o.label), s);
                s.every_steps
            });
            self.watch(&o.topic, &o.msg_type, Side::Publishes, &o.label);
            self.tracked.push(o.id);
            outs.push(OutSlot {
                id: o.id,
                label: o.label.clone(),
                topic: self.topic_idx(&o.topic),
                out,
                frames: Frames { prefix: o.frame_prefix.clone(), hint: o.frame_id_hint.clone() },
                field: o.field.clone(),
                every,
                failed: false,
            });
        }
        Ok(outs)
    }

    /// The /tf and latched /tf_static publishers and the endpoints routed onto them.
    #[allow(clippy::type_complexity)]
    pub(super) fn tf(
        &mut self,
        plan: &plan::Plan,
    ) -> Result<(r2r::Publisher<TFMessage>, r2r::Publisher<TFMessage>, Vec<TfSlot>), String> {
        let tf_pub = self
            .node
            .create_publisher::<TFMessage>(&plan.tf_topic, convert::qos_profile(Qos::Tf))
            .map_err(|e| format!("cannot create the TF publisher on {}: {e}", plan.tf_topic))?;
        let tf_static_pub = self
            .node
            .create_publisher::<TFMessage>(
                &plan.tf_static_topic,
                convert::qos_profile(Qos::TransientLocal),
            )
            .map_err(|e| {
                format!("cannot create the static TF publisher on {}: {e}", plan.tf_static_topic)
            })?;
        for t in [&plan.tf_topic, &plan.tf_static_topic] {
            self.watch(t, plan::TF_MESSAGE, Side::Publishes, "(bridge TF)");
        }
        let tfs: Vec<TfSlot> = plan
            .tf
            .iter()
            .map(|t| TfSlot {
                id: t.id,
                route: t.route,
                frames: Frames { prefix: t.frame_prefix.clone(), hint: None },
            })
            .collect();
        self.tracked.extend(tfs.iter().map(|t| t.id));
        Ok((tf_pub, tf_static_pub, tfs))
    }

    /// A merged joint_states publisher per robot, on its own gate.
    pub(super) fn merged(
        &mut self,
        ctx: &mut SimContext,
        plan: &plan::Plan,
    ) -> Result<Vec<MergedSlot>, String> {
        let mut merged = Vec::new();
        for m in &plan.merged {
            let publisher = self
                .node
                .create_publisher::<JointState>(&m.topic, convert::qos_profile(Qos::Reliable))
                .map_err(|e| {
                    format!("cannot create the merged joint_states publisher on {}: {e}", m.topic)
                })?;
            let s = ctx
                .interface
                .bind_rate(&format!("ros2 merged joint_states {}", m.topic), m.requested_hz);
            self.watch(&m.topic, plan::JOINT_STATE, Side::Publishes, "(merged joint_states)");
            self.tracked.extend(m.members.iter().copied());
            merged.push(MergedSlot {
                topic: self.topic_idx(&m.topic),
                members: m.members.clone(),
                latest: vec![None; m.members.len()],
                publisher,
                msg: JointState::default(),
                every: s.every_steps,
                fresh: false,
            });
            tracing::info!(
                "[{}] merged joint_states on {} from {} endpoints",
                self.address,
                m.topic,
                m.members.len()
            );
        }
        Ok(merged)
    }

    /// The /clock publisher on its gate.
    pub(super) fn clock(
        &mut self,
        ctx: &mut SimContext,
        cfg: &BridgeConfig,
    ) -> Result<(r2r::Publisher<Clock>, Clock, ClockGate), String> {
        let publisher = self
            .node
            .create_publisher::<Clock>("/clock", convert::qos_profile(Qos::Reliable))
            .map_err(|e| format!("cannot create the /clock publisher: {e}"))?;
        let s = ctx.interface.bind_rate("ros2 /clock", cfg.clock_hz(ctx.interface.physics_hz()));
        self.watch("/clock", "rosgraph_msgs/msg/Clock", Side::Publishes, "(clock)");
        Ok((publisher, Clock::default(), ClockGate::new(s.every_steps)))
    }

    /// A subscription per in topic with a decoder, a server per service and action with a
    /// handler; each delivers to its endpoint through a command posted to the physics thread.
    pub(super) fn inputs(
        &mut self,
        plan: &plan::Plan,
        commands: &crate::context::CommandSender,
    ) -> Result<Vec<Task>, String> {
        let mut tasks: Vec<Task> = Vec::new();
        for i in &plan.inputs {
            let id = i.id;
            match &i.kind {
                InKind::Topic { msg_type, .. } if !convert::IN_TYPES.contains(&msg_type.as_str()) => tracing::warn!(
                    "[{}] endpoint {}: no decoder for `{msg_type}` (decoders: {}); {} is not subscribed",
                    self.address,
                    i.label,
                    convert::IN_TYPES.join(", "),
                    i.name
                ),
                InKind::Topic { msg_type, qos } => {
                    let cmds = commands.clone();
                    let sink: Sink = Arc::new(move |p: Payload| {
                        cmds.post(move |ctx: &mut SimContext| ctx.interface.deliver(id, p));
                    });
                    let fr = Frames { prefix: i.frame_prefix.clone(), hint: None };
                    let task = convert::make_inbound(&mut self.node, msg_type, &i.name, *qos, fr, sink).map_err(|e| format!("endpoint {}: {e}", i.label))?;
                    tasks.push(task);
                    self.watch(&i.name, msg_type, Side::Subscribes, &i.label);
                }
                InKind::Service { srv_type } => match handlers::service(srv_type) {
                    Some(f) => tasks.push(f(handlers::ServeArgs { node: &mut self.node, name: &i.name, endpoint: id, commands: commands.clone() })?),
                    None => tracing::warn!(
                        "[{}] endpoint {}: no service handler for `{srv_type}` (handlers: {}); {} is not served",
                        self.address,
                        i.label,
                        handlers::known(handlers::SERVICES),
                        i.name
                    ),
                },
                InKind::Action { action_type } => match handlers::action(action_type) {
                    Some(f) => tasks.push(f(handlers::ServeArgs { node: &mut self.node, name: &i.name, endpoint: id, commands: commands.clone() })?),
                    None => tracing::warn!(
                        "[{}] endpoint {}: no action handler for `{action_type}` (handlers: {}); {} is not served",
                        self.address,
                        i.label,
                        handlers::known(handlers::ACTIONS),
                        i.name
                    ),
                },
            }
        }
        Ok(tasks)
    }
}
