//! The physics side of `sim_interfaces`: the reply channel a request carries, the one step job
//! (StepSimulation / SimulateSteps) being taken, and the state the plugin's post_step shares with
//! the commands the service thread posts. Everything here runs on the physics thread.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::channel::{mpsc, oneshot};
use r2r::simulation_interfaces::msg as si;
use r2r::simulation_interfaces::srv;
use r2r::WrappedServiceTypeSupport;

use super::FEEDBACK_WINDOW;
use crate::context::{CommandSender, RunState, SimContext};
use crate::engine::sim_control::{self as sc, codes, Refusal};

/// A reply channel to the service thread.
pub(super) struct Reply<T>(pub(super) oneshot::Sender<T>);

impl<T> Reply<T> {
    pub(super) fn send(self, v: T) {
        let _ = self.0.send(v);
    }
}

/// How a step request ended.
pub(super) enum Outcome {
    Succeeded,
    Canceled(u64),
    Failed(Refusal),
}

pub(super) enum StepSink {
    Service(Reply<srv::StepSimulation::Response>),
    Action {
        feedback: mpsc::UnboundedSender<u64>,
        acked: Arc<AtomicU64>,
        done: oneshot::Sender<Outcome>,
    },
}

/// The one StepSimulation / SimulateSteps request being taken.
pub(super) struct StepJob {
    pub(super) id: u64,
    pub(super) n: u64,
    pub(super) taken: u64,
    /// The N-th step was seen; the answer goes out at the next call (the driver came round).
    pub(super) complete_seen: bool,
    pub(super) sink: StepSink,
}

impl StepJob {
    pub(super) fn acked(&self) -> u64 {
        match &self.sink {
            StepSink::Service(_) => u64::MAX,
            StepSink::Action { acked, .. } => acked.load(Ordering::SeqCst),
        }
    }

    pub(super) fn finish(self, o: Outcome) {
        match self.sink {
            StepSink::Service(r) => r.send(srv::StepSimulation::Response {
                result: match o {
                    Outcome::Succeeded => ok(),
                    Outcome::Canceled(k) => res(
                        codes::OPERATION_FAILED,
                        format!("canceled after {k} of {} steps", self.n),
                    ),
                    Outcome::Failed(f) => res(f.code, f.message),
                },
            }),
            StepSink::Action { done, .. } => {
                let _ = done.send(o);
            }
        }
    }
}

/// State shared by the plugin's post_step and the commands it posts (physics thread only; the
/// mutex only makes it `Send`).
/// An answer sent from the physics thread once the queued reset has run.
pub(super) type AfterReset = Box<dyn FnOnce(&SimContext) + Send>;

#[derive(Default)]
pub(super) struct Shared {
    /// Answers due once the driver has taken the queued reset.
    pub(super) after_reset: Vec<AfterReset>,
    pub(super) job: Option<StepJob>,
}

/// What a request handler gets: the command queue and the shared state.
#[derive(Clone)]
pub(super) struct Link {
    pub(super) commands: CommandSender,
    pub(super) shared: Arc<Mutex<Shared>>,
}

impl Link {
    pub(super) fn post(
        &self,
        f: impl FnOnce(&mut SimContext, &mut Shared) + Send + 'static,
    ) -> bool {
        let shared = self.shared.clone();
        self.commands.post(move |ctx: &mut SimContext| {
            let mut sh = shared.lock().unwrap_or_else(|p| p.into_inner());
            f(ctx, &mut sh)
        })
    }
}

pub(super) fn res(code: u8, message: impl Into<String>) -> si::Result {
    si::Result { result: code, error_message: message.into() }
}

pub(super) fn ok() -> si::Result {
    res(codes::OK, "")
}

/// A response carrying a failure (the physics thread never answered, or a feature is missing).
pub(super) trait Answer: Sized {
    fn failed(code: u8, message: String) -> Self;
}

macro_rules! answer_with_result {
    ($($t:ty),* $(,)?) => {$(
        impl Answer for $t {
            // some responses carry only `result`: the update is then a no-op, kept for the others
            #[allow(clippy::needless_update)]
            fn failed(code: u8, message: String) -> Self {
                Self { result: res(code, message), ..Default::default() }
            }
        }
    )*};
}

answer_with_result!(
    srv::GetEntities::Response,
    srv::GetEntitiesStates::Response,
    srv::GetEntityState::Response,
    srv::SetEntityState::Response,
    srv::GetEntityInfo::Response,
    srv::GetSpawnables::Response,
    srv::SpawnEntity::Response,
    srv::DeleteEntity::Response,
    srv::GetSimulationState::Response,
    srv::SetSimulationState::Response,
    srv::StepSimulation::Response,
    srv::ResetSimulation::Response,
    srv::GetEntityBounds::Response,
    srv::GetNamedPoses::Response,
    srv::GetNamedPoseBounds::Response,
    srv::SetEntityInfo::Response,
    srv::SpawnEntities::Response,
    srv::LoadWorld::Response,
    srv::UnloadWorld::Response,
    srv::GetAvailableWorlds::Response,
    srv::GetCurrentWorld::Response,
);

impl Answer for srv::GetSimulatorFeatures::Response {
    fn failed(_code: u8, message: String) -> Self {
        Self { features: si::SimulatorFeatures { custom_info: message, ..Default::default() } }
    }
}

/// A handler: runs on the physics thread, answers through the reply (now, or later from
/// post_step).
pub(super) type Handler<S> = fn(
    <S as WrappedServiceTypeSupport>::Request,
    Reply<<S as WrappedServiceTypeSupport>::Response>,
    &mut SimContext,
    &mut Shared,
);

/// Start a step job of `n` steps (the caller checked n > 0), or refuse.
pub(super) fn start_job(ctx: &mut SimContext, sh: &mut Shared, id: u64, n: u64, sink: StepSink) {
    let job = StepJob { id, n, taken: 0, complete_seen: false, sink };
    if let Some(j) = &sh.job {
        let what = match j.sink {
            StepSink::Service(_) => "StepSimulation",
            StepSink::Action { .. } => "SimulateSteps goal",
        };
        let m = format!("a {what} is still running ({} of {} steps taken)", j.taken, j.n);
        return job.finish(Outcome::Failed(Refusal { code: codes::INCORRECT_STATE, message: m }));
    }
    let first = match job.sink {
        StepSink::Service(_) => n,
        StepSink::Action { .. } => n.min(FEEDBACK_WINDOW),
    };
    match sc::step(ctx, first) {
        Ok(()) => sh.job = Some(job),
        Err(f) => job.finish(Outcome::Failed(f)),
    }
}

pub(super) static NEXT_JOB: AtomicU64 = AtomicU64::new(1);

/// Advance the running step job by what this post_step call saw; finish it when done.
pub(super) fn progress(ctx: &mut SimContext, sh: &mut Shared) {
    let Some(job) = sh.job.as_mut() else { return };
    if !ctx.paused && job.taken < job.n {
        job.taken += 1;
        if let StepSink::Action { feedback, .. } = &job.sink {
            let _ = feedback.unbounded_send(job.taken);
        }
    }
    let outcome = if job.taken >= job.n {
        // Answer one call after the last step (its /clock is out) and, for the action, once
        // every feedback went out.
        if job.complete_seen && job.acked() >= job.n {
            Some(Outcome::Succeeded)
        } else {
            job.complete_seen = true;
            None
        }
    } else if ctx.control.state != RunState::Paused {
        let m = format!(
            "the simulation left PAUSED (state is now {}) after {} of {} steps",
            sc::get_state(ctx),
            job.taken,
            job.n
        );
        Some(Outcome::Failed(Refusal { code: codes::INCORRECT_STATE, message: m }))
    } else if ctx.paused && ctx.control.pending_steps == 0 {
        match job.sink {
            StepSink::Service(_) => {
                let m = format!("stepping was interrupted after {} of {} steps", job.taken, job.n);
                Some(Outcome::Failed(Refusal { code: codes::OPERATION_FAILED, message: m }))
            }
            StepSink::Action { .. } => {
                if job.acked() >= job.taken {
                    ctx.control.pending_steps = (job.n - job.taken).min(FEEDBACK_WINDOW);
                }
                None
            }
        }
    } else {
        None
    };
    if let Some(o) = outcome {
        if let Some(job) = sh.job.take() {
            job.finish(o);
        }
    }
}
