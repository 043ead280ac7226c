//! Queues and events: a queue's position counter, its covering markers, its
//! back-pressure checkpoints, and the events of its commands. `access` and `submit`
//! build on it: the per-buffer record of commands, and submitting a command with
//! exactly the dependencies it needs.
//!
//! Every queue is in order. Each device buffer remembers the last command that wrote it
//! and, per queue, the last command that read it (a `Mark`, in `access`: queue and position). A new
//! command on queue `Q` depends on the marks of *other* queues only (in-order execution
//! covers its own): a read waits for the last write, a write for the last write and every
//! read. Such a dependency becomes an event: the command's own event if it asked for one,
//! else a marker enqueued on the other queue (which completes once everything queued there
//! so far has), reused until that queue gets more work. So one-queue programs create no
//! events at all, and the launch hot path stays what it was.
//!
//! A queue also knows how far its commands are *known complete* (`done`): every host wait
//! that proves it raises it, and so does a completed event the queue already has (its
//! covering marker, a checkpoint, a command's own event; no event is ever made to ask).
//! A dependency on a command known complete is no dependency at all.

use std::collections::VecDeque;
use std::ffi::c_void;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use cl3::types::{cl_command_queue, cl_event, cl_mem};

use crate::backend::cl;
use crate::backend::dispatch::Jobs;
use crate::backend::memory::DeviceMemory;
use crate::backend::tag::ContextTag;
use crate::error::{Error, Result};
use crate::layout::FINISH_COUNTERS;
use crate::stats::{Counters, WaitReason};

/// The bytes of a queue's finish counters ([`QueueInner::finish_counters`]).
const FINISH_COUNTER_BYTES: usize = FINISH_COUNTERS * 4;

/// The shared part of a queue. Lives while a `Queue` handle, an `Event` or a buffer's
/// record of a command names it (the default queue also while its context lives);
/// OpenCL finishes the commands of a released queue.
pub(crate) struct QueueInner {
    /// 0 for the context's default queue, then 1, 2, ... in creation order.
    pub(crate) id: u32,
    raw: cl_command_queue,
    pub(crate) counters: Arc<Counters>,
    /// The context the queue belongs to; every buffer and event a command uses must too.
    pub(crate) context: ContextTag,
    /// The context's jobs handed to its dispatch thread: a thread settles them before it
    /// submits here or reads (`backend::dispatch`).
    pub(crate) jobs: Jobs,
    /// Back-pressure: the most commands that may be queued and not finished.
    max_queued: u64,
    /// Commands between two back-pressure checkpoints.
    checkpoint_stride: u64,
    /// Commands up to this position are known to have completed.
    done: AtomicU64,
    state: Mutex<QueueState>,
    /// The context's device memory, which the queue's finish counters count in.
    memory: Arc<DeviceMemory>,
}

#[derive(Default)]
struct QueueState {
    /// Position of the last command submitted (commands are numbered from 1).
    seq: u64,
    /// The most recent marker and the position it covers. Kept as a bare event, not an
    /// [`Event`] (which holds its queue), so that a queue never keeps itself alive.
    marker: Option<(u64, RawEvent)>,
    /// Commands up to this position have been flushed to the device.
    flushed: u64,
    /// This queue's counters of finished work-groups for reductions finished in their own
    /// kernel (see [`QueueInner::finish_counters`]).
    finish_counters: Option<cl3::types::cl_mem>,
    /// Back-pressure checkpoints: markers enqueued every `checkpoint_stride` commands,
    /// oldest first, each with the position it covers.
    checkpoints: VecDeque<(u64, RawEvent)>,
    /// Commands submitted since the last checkpoint.
    since_checkpoint: u64,
}

/// Checkpoints per back-pressure bound: a submission waits for a checkpoint at least the
/// bound behind it, so up to a quarter more commands than the bound may be in flight,
/// and one marker is created per quarter of the bound.
const CHECKPOINTS_PER_BOUND: u64 = 4;

// SAFETY: OpenCL command queues may be used from any thread (OpenCL 1.2 §A.2, all API
// calls are thread-safe except clSetKernelArg on one kernel); state is behind a mutex.
unsafe impl Send for QueueInner {}
unsafe impl Sync for QueueInner {}

impl QueueInner {
    pub(crate) fn new(
        id: u32,
        raw: cl_command_queue,
        counters: Arc<Counters>,
        context: ContextTag,
        jobs: Jobs,
        max_queued: usize,
        memory: Arc<DeviceMemory>,
    ) -> Self {
        Counters::add(&counters.queues_created, 1);
        QueueInner {
            id,
            raw,
            counters,
            context,
            jobs,
            max_queued: max_queued.max(1) as u64,
            checkpoint_stride: (max_queued as u64 / CHECKPOINTS_PER_BOUND).max(1),
            done: AtomicU64::new(0),
            state: Mutex::default(),
            memory,
        }
    }

    /// After command `st.seq` was enqueued: every `checkpoint_stride` commands a marker
    /// (which also serves as the queue's covering marker); returns the oldest checkpoint
    /// that is now `max_queued` or more commands behind, for the caller to wait for once
    /// the queue's lock is released.
    fn checkpoint(&self, st: &mut QueueState) -> Result<Option<Checkpoint>> {
        st.since_checkpoint += 1;
        if st.since_checkpoint == self.checkpoint_stride {
            st.since_checkpoint = 0;
            let event = RawEvent(cl::enqueue_marker(self.raw)?);
            Counters::add(&self.counters.events_created, 1);
            st.marker = Some((st.seq, event.clone()));
            st.checkpoints.push_back((st.seq, event));
        }
        match st.checkpoints.front() {
            Some(&(covered, _)) if covered + self.max_queued <= st.seq => Ok(st
                .checkpoints
                .pop_front()
                .map(|(seq, event)| Checkpoint { seq, event })),
            _ => Ok(None),
        }
    }

    /// Blocks until `checkpoint` has completed, unless it already has (counted as a
    /// `waits_backpressure` host wait only when it had not).
    pub(crate) fn hold_back(&self, checkpoint: Checkpoint) -> Result<()> {
        let raw = checkpoint.event.0;
        if cl::event_status(raw)? > 0 {
            self.counters.count_wait(WaitReason::Backpressure);
            self.flush_through(checkpoint.seq)?;
            cl::wait_for_event(raw)?;
        }
        failed(raw)?;
        self.note_done(checkpoint.seq);
        Ok(())
    }

    /// Records that the commands up to `seq` have completed (a host wait proved it).
    pub(crate) fn note_done(&self, seq: u64) {
        self.done.fetch_max(seq, Ordering::AcqRel);
    }

    /// Whether the command at `seq` is known to have completed, without asking the driver.
    #[inline]
    pub(crate) fn known_done(&self, seq: u64) -> bool {
        self.done.load(Ordering::Acquire) >= seq
    }

    /// Whether the command at `seq` has completed, as far as events that exist already
    /// tell: `own` (the command's event, if it has one), else the earliest of this
    /// queue's marker and checkpoints that covers it (one status query; a later one can
    /// only be complete if that one is). Never creates an event, never waits.
    pub(crate) fn check_done(&self, seq: u64, own: Option<&Event>) -> bool {
        if self.known_done(seq) {
            return true;
        }
        let complete = |raw: cl_event| matches!(cl::event_status(raw), Ok(0));
        if let Some(e) = own.filter(|e| complete(e.raw)) {
            self.note_done(e.seq);
            return true;
        }
        let covered = {
            let st = self.lock();
            let first = st.checkpoints.iter().find(|(c, _)| *c >= seq);
            let cover = first.or(st.marker.as_ref().filter(|(c, _)| *c >= seq));
            cover.filter(|(_, e)| complete(e.0)).map(|(c, _)| *c)
        };
        covered.inspect(|&c| self.note_done(c)).is_some()
    }

    /// A blocking read of `bytes` bytes of `mem` into `dst`, queued behind every command
    /// of this queue: when it returns, they are known complete.
    pub(crate) fn read_blocking(&self, mem: cl_mem, bytes: usize, dst: *mut c_void) -> Result<()> {
        self.jobs.settle()?;
        let seq = self.lock().seq;
        cl::read_buffer_blocking(self.raw, mem, 0, bytes, dst)?;
        self.note_done(seq);
        Ok(())
    }

    pub(crate) fn raw(&self) -> cl_command_queue {
        self.raw
    }

    /// [`FINISH_COUNTERS`] zeroed `uint`s on the device for reductions that finish in
    /// their own kernel: each block of outputs counts its finished work-groups in one, and
    /// the last group sets it back to zero. One set per queue is enough: commands on a
    /// queue run one after another. Created (and zeroed by a fill queued here) on first
    /// use, by `create` (given the bytes: a buffer of the context's
    /// [`DeviceMemory`]); released with the queue.
    pub(crate) fn finish_counters(
        &self,
        create: impl FnOnce(usize) -> Result<cl3::types::cl_mem>,
    ) -> Result<cl3::types::cl_mem> {
        if let Some(mem) = self.lock().finish_counters {
            return Ok(mem);
        }
        // Made without the queue's lock: making room may flush this queue.
        let bytes = FINISH_COUNTER_BYTES;
        let mem = create(bytes)?;
        let mut st = self.lock();
        if let Some(made) = st.finish_counters {
            // Another thread's came first.
            drop(st);
            self.memory.release(mem, bytes);
            return Ok(made);
        }
        if let Err(e) = cl::fill_buffer(self.raw, mem, &[0u8; 4], bytes, &[], false) {
            self.memory.release(mem, bytes);
            return Err(e);
        }
        st.finish_counters = Some(mem);
        Ok(mem)
    }

    /// Runs `enqueue` (given the queue, the wait list and whether an event is wanted)
    /// under the queue's lock, so that positions follow the queue's real order (markers
    /// rely on it; the driver serializes enqueues on one queue anyway). Returns the
    /// command's position, its event if one came back, and a back-pressure checkpoint now
    /// overdue (for [`hold_back`](QueueInner::hold_back) once the lock is released).
    pub(crate) fn enqueue_numbered(
        self: &Arc<Self>,
        wait: &[cl_event],
        want_event: bool,
        enqueue: impl FnOnce(cl_command_queue, &[cl_event], bool) -> Result<Option<cl_event>>,
    ) -> Result<(u64, Option<Event>, Option<Checkpoint>)> {
        let mut st = self.lock();
        let raw = enqueue(self.raw, wait, want_event)?;
        st.seq += 1;
        let event = raw.map(|raw| {
            Counters::add(&self.counters.events_created, 1);
            Event::adopt(raw, self.clone(), st.seq)
        });
        let overdue = self.checkpoint(&mut st)?;
        Ok((st.seq, event, overdue))
    }

    /// An event that completes once every command queued here so far has.
    pub(crate) fn marker(self: &Arc<Self>) -> Result<Event> {
        let seq = self.lock().seq;
        self.covering_event(seq)
    }

    /// Makes every later command of this queue wait for `wait`. A barrier is not a
    /// command on any buffer: it does not move the queue's position.
    pub(crate) fn barrier(&self, wait: &[cl_event]) -> Result<()> {
        let _st = self.lock();
        cl::enqueue_barrier(self.raw, wait)
    }

    fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Blocks until every command of this queue has completed.
    pub(crate) fn finish(&self, reason: WaitReason) -> Result<()> {
        let seq = self.lock().seq;
        self.counters.count_wait(reason);
        cl::finish(self.raw)?;
        self.note_done(seq);
        Ok(())
    }

    /// An event that completes once the command at `seq` (and all before it) has.
    pub(crate) fn covering_event(self: &Arc<Self>, seq: u64) -> Result<Event> {
        let mut st = self.lock();
        if let Some((covered, event)) = &st.marker {
            if *covered >= seq {
                return Ok(event.share(self.clone(), *covered));
            }
        }
        let event = RawEvent(cl::enqueue_marker(self.raw)?);
        Counters::add(&self.counters.events_created, 1);
        let shared = event.share(self.clone(), st.seq);
        st.marker = Some((st.seq, event));
        // Another queue will wait for the marker itself: submit it (and what precedes it)
        // to the device now; `flush_through` only knows the numbered commands.
        cl::flush(self.raw)?;
        st.flushed = st.seq;
        Ok(shared)
    }

    /// Makes sure the commands up to `seq` have been submitted to the device, so that a
    /// command on another queue can wait for them.
    pub(crate) fn flush_through(&self, seq: u64) -> Result<()> {
        let mut st = self.lock();
        if st.flushed >= seq {
            return Ok(());
        }
        cl::flush(self.raw)?;
        st.flushed = st.seq;
        Ok(())
    }
}

impl Drop for QueueInner {
    fn drop(&mut self) {
        // Nothing names it any more, so nothing more can be queued on it; OpenCL keeps
        // a released queue (and memory its commands use) until those commands complete.
        Counters::add(&self.counters.queues_released, 1);
        if let Some(mem) = self
            .state
            .get_mut()
            .map(|s| s.finish_counters.take())
            .unwrap_or(None)
        {
            // Released before the queue, whose release submits what still uses it.
            self.memory.release(mem, FINISH_COUNTER_BYTES);
        }
        cl::release_queue(self.raw);
    }
}

/// A back-pressure checkpoint taken off its queue to be waited for.
pub(crate) struct Checkpoint {
    seq: u64,
    event: RawEvent,
}

/// One owned reference to a `cl_event` that does not hold its queue (see
/// [`QueueState::marker`]); [`share`](RawEvent::share) makes an [`Event`] of it.
struct RawEvent(cl_event);

impl RawEvent {
    fn share(&self, queue: Arc<QueueInner>, seq: u64) -> Event {
        cl::retain_event(self.0);
        Event {
            raw: self.0,
            queue,
            seq,
        }
    }
}

impl Clone for RawEvent {
    fn clone(&self) -> Self {
        cl::retain_event(self.0);
        RawEvent(self.0)
    }
}

impl Drop for RawEvent {
    fn drop(&mut self) {
        cl::release_event(self.0);
    }
}

/// `Err` if the command of event `raw` failed.
fn failed(raw: cl_event) -> Result<()> {
    match cl::event_status(raw)? {
        code if code < 0 => Err(Error::cl("command execution", code)),
        _ => Ok(()),
    }
}

/// A command that was submitted to a queue: wait for it, ask whether it is done, or pass
/// it to [`Queue::wait_for`](crate::Queue::wait_for) or a launch's `.after(..)` to order
/// later work after it. Cheap to clone (an OpenCL reference count).
///
/// Events come from `launch_event` (a `#[kernel]` launch), [`Queue::marker`](crate::Queue::marker)
/// and [`Array::ready_event`](crate::Array::ready_event).
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let x = ctx.from_slice(&[3.0f32, 4.0])?;
/// let y = &x * 2.0;
/// let ready = y.ready_event()?; // enqueues y's kernel, does not wait
/// ready.wait()?; // an explicit host wait
/// assert!(ready.is_complete()?);
/// assert_eq!(y.to_vec()?, [6.0, 8.0]);
/// # Ok(())
/// # }
/// ```
pub struct Event {
    raw: cl_event,
    pub(crate) queue: Arc<QueueInner>,
    /// The queue position the event covers.
    pub(crate) seq: u64,
}

// SAFETY: cl_event handles may be used from any thread; the reference is owned.
unsafe impl Send for Event {}
unsafe impl Sync for Event {}
unsafe impl Send for RawEvent {}
unsafe impl Sync for RawEvent {}

impl Event {
    /// The `cl_event` (owned by this value).
    pub(crate) fn raw(&self) -> cl_event {
        self.raw
    }

    /// Takes ownership of one reference to `raw`.
    fn adopt(raw: cl_event, queue: Arc<QueueInner>, seq: u64) -> Event {
        Event { raw, queue, seq }
    }

    /// Blocks until the command has completed (counted as an explicit host wait).
    pub fn wait(&self) -> Result<()> {
        self.queue.counters.count_wait(WaitReason::Explicit);
        self.queue.flush_through(self.seq)?;
        cl::wait_for_event(self.raw)?;
        self.failed()?;
        self.queue.note_done(self.seq);
        Ok(())
    }

    /// Whether the command has completed, without waiting.
    pub fn is_complete(&self) -> Result<bool> {
        self.failed()?;
        let complete = cl::event_status(self.raw)? == 0;
        if complete {
            self.queue.note_done(self.seq);
        }
        Ok(complete)
    }

    /// The event a submission returned when one was asked for (used by generated code).
    #[doc(hidden)]
    pub fn required(event: Option<Event>) -> Result<Event> {
        event.ok_or_else(|| Error::Internal("a launch that asked for an event returned none".into()))
    }

    /// The id of the queue the command was submitted to.
    pub fn queue_id(&self) -> u32 {
        self.queue.id
    }

    pub(crate) fn failed(&self) -> Result<()> {
        failed(self.raw)
    }
}

impl Clone for Event {
    fn clone(&self) -> Self {
        cl::retain_event(self.raw);
        Event {
            raw: self.raw,
            queue: self.queue.clone(),
            seq: self.seq,
        }
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        cl::release_event(self.raw);
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Event(queue {}, command {})", self.queue.id, self.seq)
    }
}
