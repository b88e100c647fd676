//! The recording's writer thread: the physics thread encodes a step's messages and hands the bytes
//! over; this thread owns the MCAP writer (records, chunking, message indexes, CRCs) and the
//! file. Messages travel in batches of about [`HANDOFF`] bytes (many steps each: one hand over,
//! and one wake-up of this thread, per batch rather than per step); batches come back emptied
//! for reuse, so a steady run allocates no batch buffers.
//!
//! Order is kept: schemas, channels, metadata and messages go through one queue in the order the
//! recorder issued them, so the file is byte for byte what a writer on the physics thread wrote.
//! The queue is bounded: a disk slower than the run holds the physics thread back instead of
//! growing memory. A write that fails is kept and reported to the physics thread at its next hand
//! over (the run ends with it); later messages are dropped.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use mcap::records::{MessageHeader, Metadata};
use mcap::Writer;

/// The writer the thread owns.
pub type McapWriter = Writer<BufWriter<File>>;

/// Batches in flight at most.
const QUEUE: usize = 16;

/// A batch is handed over once it holds this many bytes of message data (or when the recorder
/// needs the writer: a schema, a channel, metadata, the end). A hand over per step cost more than
/// the writing itself: the send, and waking the writer thread from its wait, every ~20 µs.
pub const HANDOFF: usize = 64 * 1024;

/// Messages: headers with the byte range of each message's data in `bytes`.
#[derive(Default)]
pub struct Batch {
    msgs: Vec<(MessageHeader, u32, u32)>,
    bytes: Vec<u8>,
}

impl Batch {
    /// Append a message.
    pub fn push(&mut self, header: MessageHeader, data: &[u8]) {
        let start = self.bytes.len() as u32;
        self.bytes.extend_from_slice(data);
        self.msgs.push((header, start, self.bytes.len() as u32));
    }

    fn is_empty(&self) -> bool {
        self.msgs.is_empty()
    }

    fn clear(&mut self) {
        self.msgs.clear();
        self.bytes.clear();
    }
}

type Reply<T> = Sender<Result<T, String>>;

enum Op {
    Schema { name: String, data: Vec<u8>, reply: Reply<u16> },
    Channel { schema: u16, topic: String, encoding: String, reply: Reply<u16> },
    Metadata(Metadata),
    Messages(Batch),
    Finish { summary: Metadata, reply: Reply<BufWriter<File>> },
}

fn io(e: mcap::McapError) -> String {
    // The OS's reason (`No space left on device`) is the I/O error's, not the mcap wrapper's.
    let os = match &e {
        mcap::McapError::Io(io) => format!(": {io}"),
        _ => String::new(),
    };
    format!("recording: write failed: {e}{os}; the file ends at its last complete chunk (no footer: `mcap recover` reads it)")
}

/// The physics thread's end of the writer thread.
pub struct Sink {
    tx: Option<Sender<Op>>,
    free: Receiver<Batch>,
    batch: Batch,
    failed: Arc<Mutex<Option<String>>>,
    thread: Option<JoinHandle<()>>,
}

impl Sink {
    /// Start the writer thread on `writer`.
    pub fn start(writer: McapWriter) -> Result<Sink, String> {
        let (tx, rx) = crossbeam_channel::bounded(QUEUE);
        let (free_tx, free) = crossbeam_channel::bounded(QUEUE + 2);
        let failed = Arc::new(Mutex::new(None));
        let f = failed.clone();
        let thread = std::thread::Builder::new()
            .name("roqsim-record".into())
            .spawn(move || run(writer, rx, free_tx, f))
            .map_err(|e| format!("recording: cannot start the writer thread: {e}"))?;
        Ok(Sink { tx: Some(tx), free, batch: Batch::default(), failed, thread: Some(thread) })
    }

    fn send(&mut self, op: Op) -> Result<(), String> {
        let tx = self.tx.as_ref().ok_or("recording already finalised")?;
        if tx.send(op).is_err() {
            return Err(self.failure().unwrap_or_else(|| "recording: the writer stopped".into()));
        }
        Ok(())
    }

    fn ask<T>(&mut self, make: impl FnOnce(Reply<T>) -> Op) -> Result<T, String> {
        self.flush()?;
        let (reply, answer) = crossbeam_channel::bounded(1);
        self.send(make(reply))?;
        answer
            .recv()
            .map_err(|_| self.failure().unwrap_or_else(|| "recording: the writer stopped".into()))?
    }

    fn failure(&self) -> Option<String> {
        self.failed.lock().ok().and_then(|f| f.clone())
    }

    /// Register a schema (waits for the writer: its id).
    pub fn add_schema(&mut self, name: &str, data: &[u8]) -> Result<u16, String> {
        let (name, data) = (name.to_string(), data.to_vec());
        self.ask(|reply| Op::Schema { name, data, reply })
    }

    /// Register a channel (waits for the writer: its id).
    pub fn add_channel(&mut self, schema: u16, topic: &str, encoding: &str) -> Result<u16, String> {
        let (topic, encoding) = (topic.to_string(), encoding.to_string());
        self.ask(|reply| Op::Channel { schema, topic, encoding, reply })
    }

    /// Write a metadata record (after the messages queued before it).
    pub fn write_metadata(&mut self, m: Metadata) -> Result<(), String> {
        self.flush()?;
        self.send(Op::Metadata(m))
    }

    /// Queue a message; it is handed over once the batch is full ([`Sink::end_step`]) or at the
    /// next [`Sink::flush`].
    pub fn write(&mut self, header: MessageHeader, data: &[u8]) {
        self.batch.push(header, data);
    }

    /// The end of a step: hand the queued messages over if they fill a batch.
    pub fn end_step(&mut self) -> Result<(), String> {
        if self.batch.bytes.len() < HANDOFF {
            return Ok(());
        }
        self.flush()
    }

    /// Hand the queued messages to the writer thread now; reports a write that failed since.
    pub fn flush(&mut self) -> Result<(), String> {
        if let Some(e) = self.failure() {
            return Err(e);
        }
        if self.batch.is_empty() {
            return Ok(());
        }
        let next = self.free.try_recv().unwrap_or_default();
        let full = std::mem::replace(&mut self.batch, next);
        self.send(Op::Messages(full))
    }

    /// Write the summary metadata, finish the file (index, footer) and stop the thread; returns
    /// the file's buffered writer, flushed by the caller.
    pub fn finish(&mut self, summary: Metadata) -> Result<BufWriter<File>, String> {
        let out = self.ask(|reply| Op::Finish { summary, reply });
        self.stop();
        out
    }

    /// Whether the file is still open.
    pub fn is_open(&self) -> bool {
        self.tx.is_some()
    }

    fn stop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Sink {
    /// Not finished (a panic, an early error): the thread closes what was written.
    fn drop(&mut self) {
        let _ = self.flush();
        self.stop();
    }
}

fn run(
    mut w: McapWriter,
    rx: Receiver<Op>,
    free: Sender<Batch>,
    failed: Arc<Mutex<Option<String>>>,
) {
    let fail = |e: String| {
        if let Ok(mut f) = failed.lock() {
            f.get_or_insert(e);
        }
    };
    let mut ok = true;
    let mut finish = None;
    for op in rx.iter() {
        match op {
            Op::Messages(mut b) => {
                if ok {
                    for &(h, s, e) in &b.msgs {
                        let data = &b.bytes[s as usize..e as usize];
                        if let Err(e) = w.write_to_known_channel(&h, data) {
                            fail(io(e));
                            ok = false;
                            break;
                        }
                    }
                }
                b.clear();
                let _ = free.try_send(b);
            }
            Op::Schema { name, data, reply } => {
                let _ = reply.send(w.add_schema(&name, "ros2msg", &data).map_err(io));
            }
            Op::Channel { schema, topic, encoding, reply } => {
                let r = w.add_channel(schema, &topic, &encoding, &BTreeMap::new()).map_err(io);
                let _ = reply.send(r);
            }
            Op::Metadata(m) => {
                if let Err(e) = w.write_metadata(&m) {
                    fail(io(e));
                    ok = false;
                }
            }
            Op::Finish { summary, reply } => {
                finish = Some((summary, reply));
                break;
            }
        }
    }
    let Some((summary, reply)) = finish else {
        // The recorder went away without finishing (a panic, an early error): close what was
        // written.
        let _ = w.finish();
        return;
    };
    let r = if ok {
        w.write_metadata(&summary).and_then(|_| w.finish()).map(|_| w.into_inner()).map_err(io)
    } else {
        Err(failed.lock().ok().and_then(|f| f.clone()).unwrap_or_default())
    };
    let _ = reply.send(r);
}
