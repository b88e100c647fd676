//! The ROS side of `sim_interfaces`: the service thread (`roqsim-sim-ifaces`) with one task per
//! server, each posting its request to the physics thread and awaiting the reply; the
//! SimulateSteps action server publishing one feedback per step.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use futures::channel::{mpsc, oneshot};
use futures::executor::{LocalPool, LocalSpawner};
use futures::task::LocalSpawnExt;
use futures::StreamExt;
use r2r::simulation_interfaces::action::SimulateSteps;
use r2r::WrappedServiceTypeSupport;

use super::jobs::*;
use super::SPIN_TIMEOUT;
use crate::engine::sim_control::{self as sc, codes, Refusal};

/// Starts one server's task on the service thread.
pub(super) type Starter = Box<dyn FnOnce(&LocalSpawner) + Send>;

pub(super) fn spawn(sp: &LocalSpawner, f: impl std::future::Future<Output = ()> + 'static) {
    if let Err(e) = sp.spawn_local(f) {
        tracing::error!("sim_interfaces: cannot start a task: {e}");
    }
}

/// A service answered on the physics thread by `handler`.
pub(super) fn serve<S>(
    node: &mut r2r::Node,
    name: &str,
    link: &Link,
    handler: Handler<S>,
) -> Result<Starter, String>
where
    S: WrappedServiceTypeSupport + 'static,
    S::Request: Send + 'static,
    S::Response: Answer + Send + 'static,
{
    let mut requests = node
        .create_service::<S>(name, crate::ros::convert::server_qos())
        .map_err(|e| format!("cannot create the service {name}: {e}"))?;
    let link = link.clone();
    let name = name.to_string();
    Ok(Box::new(move |sp: &LocalSpawner| {
        let sp2 = sp.clone();
        spawn(sp, async move {
            while let Some(req) = requests.next().await {
                let link = link.clone();
                let name = name.clone();
                spawn(&sp2, async move {
                    let (tx, rx) = oneshot::channel();
                    let msg = req.message.clone();
                    link.post(move |ctx, sh| handler(msg, Reply(tx), ctx, sh));
                    let resp = rx.await.unwrap_or_else(|_| {
                        S::Response::failed(
                            codes::OPERATION_FAILED,
                            "the simulation ended before answering".into(),
                        )
                    });
                    if let Err(e) = req.respond(resp) {
                        tracing::warn!("sim_interfaces: cannot answer {name}: {e}");
                    }
                });
            }
        });
    }))
}

/// A service of the package this simulator does not implement: answered at once with
/// RESULT_FEATURE_UNSUPPORTED and `why`.
pub(super) fn unsupported<S>(
    node: &mut r2r::Node,
    name: &str,
    why: &'static str,
) -> Result<Starter, String>
where
    S: WrappedServiceTypeSupport + 'static,
    S::Response: Answer + Send + 'static,
{
    let mut requests = node
        .create_service::<S>(name, crate::ros::convert::server_qos())
        .map_err(|e| format!("cannot create the service {name}: {e}"))?;
    Ok(Box::new(move |sp: &LocalSpawner| {
        spawn(sp, async move {
            while let Some(req) = requests.next().await {
                let _ =
                    req.respond(S::Response::failed(codes::FEATURE_UNSUPPORTED, why.to_string()));
            }
        });
    }))
}

pub(super) fn action_result(code: u8, message: impl Into<String>) -> SimulateSteps::Result {
    SimulateSteps::Result { result: res(code, message) }
}

/// One SimulateSteps goal: accepted, stepped on the physics thread window by window, one
/// feedback per step, canceled on request.
pub(super) async fn run_goal(req: r2r::ActionServerGoalRequest<SimulateSteps::Action>, link: Link) {
    let n = req.goal.steps;
    let (mut goal, cancel) = match req.accept() {
        Ok(g) => g,
        Err(e) => return tracing::warn!("sim_interfaces: cannot accept a SimulateSteps goal: {e}"),
    };
    let id = NEXT_JOB.fetch_add(1, Ordering::SeqCst);
    let (fb_tx, mut feedback) = mpsc::unbounded::<u64>();
    let (done_tx, mut done) = oneshot::channel::<Outcome>();
    let acked = Arc::new(AtomicU64::new(0));
    let a = acked.clone();
    link.post(move |ctx, sh| {
        if n == 0 {
            let _ = done_tx.send(match sc::step(ctx, 0) {
                Ok(()) => Outcome::Succeeded,
                Err(f) => Outcome::Failed(f),
            });
        } else {
            start_job(
                ctx,
                sh,
                id,
                n,
                StepSink::Action { feedback: fb_tx, acked: a, done: done_tx },
            );
        }
    });
    let publish = |k: u64| {
        let _ = goal.publish_feedback(SimulateSteps::Feedback {
            completed_steps: k,
            remaining_steps: n.saturating_sub(k),
        });
        acked.store(k, Ordering::SeqCst);
    };
    let mut cancel = cancel.fuse();
    let outcome = loop {
        futures::select! {
            k = feedback.next() => if let Some(k) = k { publish(k) },
            c = cancel.next() => if let Some(c) = c {
                c.accept();
                link.post(move |ctx, sh| {
                    if sh.job.as_ref().is_some_and(|j| j.id == id) {
                        let job = sh.job.take().expect("checked");
                        ctx.control.pending_steps = 0;
                        let k = job.taken;
                        job.finish(Outcome::Canceled(k));
                    }
                });
            },
            o = done => break o.unwrap_or(Outcome::Failed(Refusal { code: codes::OPERATION_FAILED, message: "the simulation ended before the goal finished".into() })),
        }
    };
    while let Ok(k) = feedback.try_recv() {
        publish(k);
    }
    let sent = match outcome {
        Outcome::Succeeded => goal.succeed(action_result(codes::OK, "")),
        Outcome::Canceled(k) => {
            goal.cancel(action_result(codes::OK, format!("canceled after {k} of {n} steps")))
        }
        Outcome::Failed(f) => goal.abort(action_result(f.code, f.message)),
    };
    if sent.is_err() {
        // A cancel accepted meanwhile removed the goal's handle: report it canceled.
        let k = acked.load(Ordering::SeqCst);
        let _ = goal.cancel(action_result(codes::OK, format!("canceled after {k} of {n} steps")));
    }
}

pub(super) fn serve_action(
    node: &mut r2r::Node,
    name: &str,
    link: &Link,
) -> Result<Starter, String> {
    let mut goals = node
        .create_action_server::<SimulateSteps::Action>(name)
        .map_err(|e| format!("cannot create the action server {name}: {e}"))?;
    let link = link.clone();
    Ok(Box::new(move |sp: &LocalSpawner| {
        let sp2 = sp.clone();
        spawn(sp, async move {
            while let Some(req) = goals.next().await {
                spawn(&sp2, run_goal(req, link.clone()));
            }
        });
    }))
}

pub(super) fn ros_thread(mut node: r2r::Node, starters: Vec<Starter>, stop: Arc<AtomicBool>) {
    let mut pool = LocalPool::new();
    let spawner = pool.spawner();
    for s in starters {
        s(&spawner);
    }
    while !stop.load(Ordering::SeqCst) {
        node.spin_once(SPIN_TIMEOUT);
        pool.run_until_stalled();
    }
}
