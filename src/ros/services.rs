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
//! and keeps the ROS thread free. A reply that never comes (the run ended, or nothing drains the
//! endpoint) is answered `success: false` after [`REPLY_TIMEOUT`] with the reason.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crossbeam_channel::Receiver;
use futures::stream::{FuturesUnordered, Stream, StreamExt};
use r2r::std_srvs::srv::{SetBool, Trigger};

use crate::context::payload::{Payload, ServiceCall};
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

/// The next value of a crossbeam receiver as a future: a helper thread blocks on it (at most
/// `timeout`) and passes it on. `None` when every sender is gone or the time ran out.
pub fn recv_async<T: Send + 'static>(
    rx: Receiver<T>,
    timeout: Duration,
) -> impl Future<Output = Option<T>> + Send {
    let (tx, frx) = futures::channel::oneshot::channel();
    // If the thread cannot start, `tx` is dropped with the closure and the future yields None.
    let _ = std::thread::Builder::new().name("roqsim-reply".into()).spawn(move || {
        let _ = tx.send(rx.recv_timeout(timeout).ok());
    });
    async move { frx.await.ok().flatten() }
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
pub fn call(commands: &CommandSender, id: EndpointId, request: Payload) -> Receiver<Payload> {
    let (tx, rx) = crossbeam_channel::bounded(1);
    commands.post(move |ctx: &mut SimContext| {
        ctx.interface
            .deliver(id, Payload::Call(ServiceCall { request: Box::new(request), reply: tx }))
    });
    rx
}

/// The (success, message) of an answer to a SetBool/Trigger-shaped call.
pub fn ack_of(answer: Option<Payload>, service: &str) -> (bool, String) {
    match answer {
        Some(Payload::Ack { success, message }) => (success, message),
        Some(other) => (false, format!("{service}: the simulation answered a {} payload, not an Ack (a consumer bug)", other.kind())),
        None => (
            false,
            format!(
                "{service}: no answer from the simulation within {} s (the run ended, is paused, or nothing consumes this endpoint)",
                REPLY_TIMEOUT.as_secs()
            ),
        ),
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
        let rx = call(&commands, id, Payload::Bool(req.message.data));
        let name = name.clone();
        Box::pin(async move {
            let (success, message) = ack_of(recv_async(rx, REPLY_TIMEOUT).await, &name);
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
        let rx = call(&commands, id, Payload::Empty);
        let name = name.clone();
        Box::pin(async move {
            let (success, message) = ack_of(recv_async(rx, REPLY_TIMEOUT).await, &name);
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
            ack_of(Some(Payload::Ack { success: true, message: "landed".into() }), "/x/override");
        assert!(ok);
        assert_eq!(m, "landed");
        let (ok, m) = ack_of(Some(Payload::Bool(true)), "/x/override");
        assert!(!ok && m.contains("a Bool payload, not an Ack"), "{m}");
        let (ok, m) = ack_of(None, "/x/override");
        assert!(!ok && m.contains("/x/override: no answer from the simulation within 30 s"), "{m}");
    }

    #[test]
    fn recv_async_passes_the_value_or_none() {
        let (tx, rx) = crossbeam_channel::bounded(1);
        tx.send(7).unwrap();
        assert_eq!(futures::executor::block_on(recv_async(rx, Duration::from_secs(1))), Some(7));
        let (tx, rx) = crossbeam_channel::bounded::<i32>(1);
        drop(tx);
        assert_eq!(futures::executor::block_on(recv_async(rx, Duration::from_secs(5))), None);
        let (_tx, rx) = crossbeam_channel::bounded::<i32>(1);
        assert_eq!(futures::executor::block_on(recv_async(rx, Duration::from_millis(20))), None);
    }

    #[test]
    fn sim_time_round_trips() {
        set_sim_time(12.346);
        assert_eq!(sim_time(), 12.346);
    }
}
