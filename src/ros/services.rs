//! Service handlers for `in` endpoints with a `service` hint, and the plumbing every server of the
//! bridge shares (a service is a command whose outcome the caller needs).
//!
//! * `std_srvs/srv/SetBool` — `model_override`'s `override` and a sensor's
//!   `<address>/override` fault switch: the request's `data` is delivered as
//!   [`ServiceCall`]`{request: Payload::Bool(data)}`; the consumer answers `Payload::Ack {success,
//!   message}` (after the physics step that verifies it), which becomes the response.
//! * `std_srvs/srv/Trigger` — `force_torque`'s `tare`: `ServiceCall{request: Payload::Empty}` →
//!   `Payload::Ack`.
//!
//! **Threads.** The ROS thread receives the request and posts a command that delivers the call to
//! the endpoint on the physics thread; the consumer answers on a crossbeam channel whenever it is
//! ready (possibly steps later). A crossbeam receiver cannot wake an async task, so one short-lived
//! helper thread per pending reply blocks on it and hands the answer to the task through a
//! oneshot ([`recv_async`]); requests are rare (a fault switch, a tare), so a thread each is cheap
//! and keeps the ROS thread free. Every request is answered within a bounded time: a reply that
//! never comes (nothing drains the endpoint, the run is paused) is answered `success: false` after
//! [`REPLY_TIMEOUT`] with the reason; when the run ends, the engine refuses the calls still in an
//! inbox with why it ended, [`end_run`] makes every waiting or later request answer the same at
//! once, and the bridge keeps its node spinning until those answers are out ([`wait_answered`])
//! before it stops: a run that ends (a failed step, `--seconds`) never leaves a caller without
//! an answer while the node is still on the graph.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use futures::stream::{FuturesUnordered, Stream, StreamExt};
use r2r::std_srvs::srv::{SetBool, Trigger};

use crate::context::payload::{CallClaim, Payload, ServiceCall};
use crate::context::{CommandSender, EndpointId, SimContext};
use crate::ros::convert::Task;
use crate::ros::handlers::ServeArgs;

/// A boxed future the ROS thread drives (one request or one goal).
pub type BoxFut = Pin<Box<dyn Future<Output = ()> + Send>>;

/// How long (wall) a service waits for the simulation's answer before replying that none came.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// Sim time (s) of the latest physics step the bridge forwarded, as f64 bits: the stamp of
/// messages the ROS thread builds itself (action feedback). Written by the bridge on the physics
/// thread, read on the ROS thread.
static SIM_TIME_BITS: AtomicU64 = AtomicU64::new(0);

/// Record the current sim time (s) (the bridge calls it every forwarded tick).
pub fn set_sim_time(t: f64) {
    SIM_TIME_BITS.store(t.to_bits(), Ordering::Relaxed);
}

/// The sim time (s) the bridge last recorded.
pub fn sim_time() -> f64 {
    f64::from_bits(SIM_TIME_BITS.load(Ordering::Relaxed))
}

/// Why the run ended, once it has (process-wide: one run per process); see [`end_run`].
static RUN_END: Mutex<Option<String>> = Mutex::new(None);

/// Service requests received and not yet answered (every server of the process).
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// How often a waiting reply thread looks whether the run ended.
const END_POLL: Duration = Duration::from_millis(20);

/// The run ended (the bridge's shutdown, on the physics thread): every request still waiting for
/// the simulation's answer, and every later one, is answered `success: false` with `why`.
pub fn end_run(why: &str) {
    if let Ok(mut e) = RUN_END.lock() {
        e.get_or_insert_with(|| why.to_string());
    }
}

/// A run starts (the bridge's configure): requests wait for the simulation's answer again.
pub fn begin_run() {
    if let Ok(mut e) = RUN_END.lock() {
        *e = None;
    }
}

fn run_end() -> Option<String> {
    RUN_END.lock().ok().and_then(|e| e.clone())
}

/// Wait (at most `limit`) until every service request received so far has been answered; true
/// when none is left. The bridge calls it after [`end_run`], before it stops its ROS thread.
pub fn wait_answered(limit: Duration) -> bool {
    let end = Instant::now() + limit;
    while IN_FLIGHT.load(Ordering::SeqCst) > 0 {
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

/// Counts one service request as in flight until it is dropped (after its response was sent).
pub struct InFlight(());

impl InFlight {
    /// A request just arrived.
    pub fn start() -> InFlight {
        IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
        InFlight(())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Why no answer came: the reason a failed response carries.
#[derive(Debug, Clone, PartialEq)]
pub enum NoAnswer {
    /// [`REPLY_TIMEOUT`] passed (the run is paused, or nothing drains the endpoint).
    TimedOut(Duration),
    /// The run ended before the request was served (its reason).
    Ended(String),
    /// The consumer dropped the request without answering while the run went on.
    Dropped,
}

impl NoAnswer {
    /// The reason, for a response's message or a log line.
    pub fn reason(&self) -> String {
        match self {
            NoAnswer::TimedOut(t) => format!(
                "no answer from the simulation within {} s (the run is paused, or nothing consumes this endpoint); the request is withdrawn and will not be applied",
                t.as_secs()
            ),
            NoAnswer::Ended(why) => format!("the run ended before this request was served: {why}"),
            NoAnswer::Dropped => {
                "the simulation dropped the request without answering (a consumer bug)".into()
            }
        }
    }
}

/// Block (at most `timeout`) for the next value of `rx`; gives up as soon as the run has ended
/// ([`end_run`]) and nothing is left to receive.
pub fn recv_bounded<T>(rx: &Receiver<T>, timeout: Duration) -> Result<T, NoAnswer> {
    let end = Instant::now() + timeout;
    loop {
        let now = Instant::now();
        if now >= end {
            return Err(NoAnswer::TimedOut(timeout));
        }
        match rx.recv_timeout(END_POLL.min(end - now)) {
            Ok(v) => return Ok(v),
            Err(RecvTimeoutError::Disconnected) => {
                return Err(run_end().map(NoAnswer::Ended).unwrap_or(NoAnswer::Dropped))
            }
            Err(RecvTimeoutError::Timeout) => {
                if let Some(why) = run_end() {
                    return rx.try_recv().map_err(|_| NoAnswer::Ended(why));
                }
            }
        }
    }
}

/// The next value of a crossbeam receiver as a future: a helper thread blocks on it
/// ([`recv_bounded`]) and passes it on.
pub fn recv_async<T: Send + 'static>(
    rx: Receiver<T>,
    timeout: Duration,
) -> impl Future<Output = Result<T, NoAnswer>> + Send {
    on_reply_thread(move || recv_bounded(&rx, timeout))
}

/// Run the blocking `wait` on a `roqsim-reply` thread of its own and hand its result to the
/// returned future (an async task must not block its executor).
fn on_reply_thread<T: Send + 'static>(
    wait: impl FnOnce() -> Result<T, NoAnswer> + Send + 'static,
) -> impl Future<Output = Result<T, NoAnswer>> + Send {
    let (tx, frx) = futures::channel::oneshot::channel();
    // If the thread cannot start, `tx` is dropped with the closure and the future says so.
    let spawned = std::thread::Builder::new().name("roqsim-reply".into()).spawn(move || {
        let _ = tx.send(wait());
    });
    if let Err(e) = &spawned {
        tracing::error!("cannot start a reply thread: {e}");
    }
    async move { frx.await.unwrap_or(Err(NoAnswer::Dropped)) }
}

/// Serve a request stream: every request becomes a future from `handle`, and all of them run
/// concurrently (a slow reply never holds up the next request).
pub fn serve_loop<R, S, H>(requests: S, handle: H) -> Task
where
    R: Send + 'static,
    S: Stream<Item = R> + Unpin + Send + 'static,
    H: Fn(R) -> BoxFut + Send + 'static,
{
    Box::pin(async move {
        let mut requests = requests.fuse();
        let mut pending: FuturesUnordered<BoxFut> = FuturesUnordered::new();
        loop {
            futures::select! {
                r = requests.next() => match r {
                    Some(r) => pending.push(handle(r)),
                    None => break,
                },
                () = pending.select_next_some() => {}
            }
        }
        while pending.next().await.is_some() {}
    })
}

/// Deliver `request` to endpoint `id` as a [`ServiceCall`] (on the physics thread, at the start of
/// the next step); returns where the answer will arrive.
pub fn call(commands: &CommandSender, id: EndpointId, request: Payload) -> PendingCall {
    let (tx, rx) = crossbeam_channel::bounded(1);
    let claim = CallClaim::default();
    let call = ServiceCall { request: Box::new(request), reply: tx, claim: claim.clone() };
    commands.post(move |ctx: &mut SimContext| ctx.interface.deliver(id, Payload::Call(call)));
    PendingCall { rx, claim }
}

/// A call on its way: where its answer arrives, and the claim its caller withdraws it by.
pub struct PendingCall {
    rx: Receiver<Payload>,
    claim: CallClaim,
}

/// The answer to `call` as a future (see [`recv_async`]). When `timeout` passes, the call is
/// withdrawn, so a consumer that drains it later never applies it; if the consumer took it first,
/// its answer is awaited (it comes within the step that took it).
pub fn answer_async(
    call: PendingCall,
    timeout: Duration,
) -> impl Future<Output = Result<Payload, NoAnswer>> + Send {
    on_reply_thread(move || match recv_bounded(&call.rx, timeout) {
        Err(NoAnswer::TimedOut(t)) if !call.claim.withdraw() => {
            recv_bounded(&call.rx, timeout).map_err(|_| NoAnswer::TimedOut(t))
        }
        other => other,
    })
}

/// The (success, message) of an answer to a SetBool/Trigger-shaped call.
pub fn ack_of(answer: Result<Payload, NoAnswer>, service: &str) -> (bool, String) {
    match answer {
        Ok(Payload::Ack { success, message }) => (success, message),
        Ok(other) => (
            false,
            format!(
                "{service}: the simulation answered a {} payload, not an Ack (a consumer bug)",
                other.kind()
            ),
        ),
        Err(e) => (false, format!("{service}: {}", e.reason())),
    }
}

/// std_srvs/srv/SetBool → `ServiceCall{request: Bool(data)}` → `Ack` → response.
pub fn serve_set_bool(a: ServeArgs) -> Result<Task, String> {
    let stream = a
        .node
        .create_service::<SetBool::Service>(a.name, crate::ros::convert::server_qos())
        .map_err(|e| format!("cannot create the std_srvs/srv/SetBool service {}: {e}", a.name))?;
    let (commands, id, name) = (a.commands, a.endpoint, a.name.to_string());
    Ok(serve_loop(stream, move |req: r2r::ServiceRequest<SetBool::Service>| {
        let pending = call(&commands, id, Payload::Bool(req.message.data));
        let (name, busy) = (name.clone(), InFlight::start());
        Box::pin(async move {
            let (success, message) = ack_of(answer_async(pending, REPLY_TIMEOUT).await, &name);
            let _busy = busy;
            if let Err(e) = req.respond(SetBool::Response { success, message }) {
                tracing::warn!("{name}: cannot send the SetBool response: {e}");
            }
        })
    }))
}

/// std_srvs/srv/Trigger → `ServiceCall{request: Empty}` → `Ack` → response.
pub fn serve_trigger(a: ServeArgs) -> Result<Task, String> {
    let stream = a
        .node
        .create_service::<Trigger::Service>(a.name, crate::ros::convert::server_qos())
        .map_err(|e| format!("cannot create the std_srvs/srv/Trigger service {}: {e}", a.name))?;
    let (commands, id, name) = (a.commands, a.endpoint, a.name.to_string());
    Ok(serve_loop(stream, move |req: r2r::ServiceRequest<Trigger::Service>| {
        let pending = call(&commands, id, Payload::Empty);
        let (name, busy) = (name.clone(), InFlight::start());
        Box::pin(async move {
            let (success, message) = ack_of(answer_async(pending, REPLY_TIMEOUT).await, &name);
            let _busy = busy;
            if let Err(e) = req.respond(Trigger::Response { success, message }) {
                tracing::warn!("{name}: cannot send the Trigger response: {e}");
            }
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_map_to_success_and_message() {
        let (ok, m) =
            ack_of(Ok(Payload::Ack { success: true, message: "landed".into() }), "/x/override");
        assert!(ok);
        assert_eq!(m, "landed");
        let (ok, m) = ack_of(Ok(Payload::Bool(true)), "/x/override");
        assert!(!ok && m.contains("a Bool payload, not an Ack"), "{m}");
        let (ok, m) = ack_of(Err(NoAnswer::TimedOut(REPLY_TIMEOUT)), "/x/override");
        assert!(!ok);
        assert_eq!(m, "/x/override: no answer from the simulation within 30 s (the run is paused, or nothing consumes this endpoint); the request is withdrawn and will not be applied");
        let (ok, m) = ack_of(Err(NoAnswer::Ended("the run failed: boom".into())), "/x/override");
        assert!(!ok);
        assert_eq!(
            m,
            "/x/override: the run ended before this request was served: the run failed: boom"
        );
    }

    // One test for everything that touches the process-wide end flag (tests run in parallel).
    #[test]
    fn recv_passes_the_value_or_says_why_not() {
        let (tx, rx) = crossbeam_channel::bounded(1);
        tx.send(7).unwrap();
        assert_eq!(futures::executor::block_on(recv_async(rx, Duration::from_secs(1))), Ok(7));
        let (tx, rx) = crossbeam_channel::bounded::<i32>(1);
        drop(tx);
        assert_eq!(
            futures::executor::block_on(recv_async(rx, Duration::from_secs(5))),
            Err(NoAnswer::Dropped)
        );
        let (_tx, rx) = crossbeam_channel::bounded::<i32>(1);
        assert_eq!(
            futures::executor::block_on(recv_async(rx, Duration::from_millis(20))),
            Err(NoAnswer::TimedOut(Duration::from_millis(20)))
        );
        // The run ends while a request waits: it is answered with why, long before the timeout;
        // an answer already sent still wins; a dropped request then says the run ended.
        let (_tx, rx) = crossbeam_channel::bounded::<i32>(1);
        let waiting = std::thread::spawn(move || recv_bounded(&rx, Duration::from_secs(600)));
        let busy = InFlight::start();
        end_run("the run failed: non-finite state");
        assert!(!wait_answered(Duration::from_millis(30)));
        drop(busy);
        assert!(wait_answered(Duration::from_secs(1)));
        assert_eq!(
            waiting.join().unwrap(),
            Err(NoAnswer::Ended("the run failed: non-finite state".into()))
        );
        let (tx, rx) = crossbeam_channel::bounded(1);
        tx.send(3).unwrap();
        assert_eq!(recv_bounded(&rx, Duration::from_secs(1)), Ok(3));
        let (tx, rx) = crossbeam_channel::bounded::<i32>(1);
        drop(tx);
        assert_eq!(
            recv_bounded(&rx, Duration::from_secs(1)),
            Err(NoAnswer::Ended("the run failed: non-finite state".into()))
        );
    }

    #[test]
    fn sim_time_round_trips() {
        set_sim_time(12.346);
        assert_eq!(sim_time(), 12.346);
    }
}
