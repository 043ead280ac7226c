//! Queues, events, and the per-buffer tracking that gives each command exactly the
//! dependencies it needs.
//!
//! Every queue is in order. Each device buffer remembers the last command that wrote it
//! and, per queue, the last command that read it (a [`Mark`]: queue and position). A new
//! command on queue `Q` depends on the marks of *other* queues only (in-order execution
//! covers its own): a read waits for the last write, a write for the last write and every
//! read. Such a dependency becomes an event: the command's own event if it asked for one,
//! else a marker enqueued on the other queue (which completes once everything queued there
//! so far has), reused until that queue gets more work. So one-queue programs create no
//! events at all, and the launch hot path stays what it was.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use cl3::types::{cl_command_queue, cl_event};
use smallvec::SmallVec;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::cl;
use crate::backend::context::{Context, ContextInner, ContextTag};
use crate::error::{Error, Result};
use crate::layout::FINISH_COUNTERS;
use crate::stats::{Counters, WaitReason};

/// A command queue of a [`Context`]: commands on one queue run in submission order;
/// commands on different queues may overlap on the device. Cheap to clone.
///
/// Get the default queue with [`Context::queue`] and more with [`Context::new_queue`].
/// Dependencies between queues (one queue's kernel reading an array another queue
/// wrote) are added automatically; [`Event`]s let you add your own.
#[derive(Clone)]
pub struct Queue {
    pub(crate) inner: Arc<QueueInner>,
    pub(crate) ctx: Arc<ContextInner>,
}

/// The shared part of a queue. Lives as long as its context, or longer while one of its
/// `Event`s does.
pub(crate) struct QueueInner {
    /// 0 for the context's default queue, then 1, 2, ... in creation order.
    pub(crate) id: u32,
    raw: cl_command_queue,
    pub(crate) counters: Arc<Counters>,
    /// The context the queue belongs to; every buffer and event a command uses must too.
    pub(crate) context: ContextTag,
    /// Back-pressure: the most commands that may be queued and not finished.
    max_queued: u64,
    /// Commands between two back-pressure checkpoints.
    checkpoint_stride: u64,
    state: Mutex<QueueState>,
}

#[derive(Default)]
struct QueueState {
    /// Position of the last command submitted (commands are numbered from 1).
    seq: u64,
    /// The most recent marker and the position it covers.
    marker: Option<(u64, Event)>,
    /// Commands up to this position have been flushed to the device.
    flushed: u64,
    /// This queue's counters of finished work-groups for reductions finished in their own
    /// kernel (see [`QueueInner::finish_counters`]).
    finish_counters: Option<cl3::types::cl_mem>,
    /// Back-pressure checkpoints: markers enqueued every `checkpoint_stride` commands,
    /// oldest first, each with the position it covers.
    checkpoints: VecDeque<(u64, Event)>,
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
        max_queued: usize,
    ) -> Self {
        QueueInner {
            id,
            raw,
            counters,
            context,
            max_queued: max_queued.max(1) as u64,
            checkpoint_stride: (max_queued as u64 / CHECKPOINTS_PER_BOUND).max(1),
            state: Mutex::default(),
        }
    }

    /// After command `st.seq` was enqueued: every `checkpoint_stride` commands a marker
    /// (which also serves as the queue's covering marker); returns the oldest checkpoint
    /// that is now `max_queued` or more commands behind, for the caller to wait for once
    /// the queue's lock is released.
    fn checkpoint(self: &Arc<Self>, st: &mut QueueState) -> Result<Option<Event>> {
        st.since_checkpoint += 1;
        if st.since_checkpoint == self.checkpoint_stride {
            st.since_checkpoint = 0;
            let raw = cl::enqueue_marker(self.raw)?;
            Counters::add(&self.counters.events_created, 1);
            let event = Event::adopt(raw, self.clone(), st.seq);
            st.marker = Some((st.seq, event.clone()));
            st.checkpoints.push_back((st.seq, event));
        }
        match st.checkpoints.front() {
            Some(&(covered, _)) if covered + self.max_queued <= st.seq => {
                Ok(st.checkpoints.pop_front().map(|(_, e)| e))
            }
            _ => Ok(None),
        }
    }

    /// Blocks until `checkpoint` has completed, unless it already has (counted as a
    /// `waits_backpressure` host wait only when it had not).
    fn hold_back(&self, checkpoint: Event) -> Result<()> {
        if cl::event_status(checkpoint.raw)? <= 0 {
            return checkpoint.failed();
        }
        self.counters.count_wait(WaitReason::Backpressure);
        self.flush_through(checkpoint.seq)?;
        cl::wait_for_event(checkpoint.raw)?;
        checkpoint.failed()
    }

    pub(crate) fn raw(&self) -> cl_command_queue {
        self.raw
    }

    /// [`FINISH_COUNTERS`] zeroed `uint`s on the device for reductions that finish in
    /// their own kernel: each block of outputs counts its finished work-groups in one, and
    /// the last group sets it back to zero. One set per queue is enough: commands on a
    /// queue run one after another. Created (and zeroed by a fill queued here) on first
    /// use; released with the queue.
    pub(crate) fn finish_counters(&self, context: cl3::types::cl_context) -> Result<cl3::types::cl_mem> {
        let mut st = self.lock();
        if let Some(mem) = st.finish_counters {
            return Ok(mem);
        }
        let bytes = FINISH_COUNTERS * 4;
        let mem = cl::create_buffer(context, bytes)
            .map_err(|code| Error::alloc("clCreateBuffer", code, "allocating reduction counters", bytes))?;
        if let Err(e) = cl::fill_buffer(self.raw, mem, &[0u8; 4], bytes, &[], false) {
            cl::release_mem(mem);
            return Err(e);
        }
        st.finish_counters = Some(mem);
        Ok(mem)
    }

    fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Blocks until every command of this queue has completed.
    pub(crate) fn finish(&self, reason: WaitReason) -> Result<()> {
        self.counters.count_wait(reason);
        cl::finish(self.raw)
    }

    /// An event that completes once the command at `seq` (and all before it) has.
    fn covering_event(self: &Arc<Self>, seq: u64) -> Result<Event> {
        let mut st = self.lock();
        if let Some((covered, event)) = &st.marker {
            if *covered >= seq {
                return Ok(event.clone());
            }
        }
        let raw = cl::enqueue_marker(self.raw)?;
        Counters::add(&self.counters.events_created, 1);
        let event = Event::adopt(raw, self.clone(), st.seq);
        st.marker = Some((st.seq, event.clone()));
        // Another queue will wait for the marker itself: submit it (and what precedes it)
        // to the device now; `flush_through` only knows the numbered commands.
        cl::flush(self.raw)?;
        st.flushed = st.seq;
        Ok(event)
    }

    /// Drops the cached marker (whose event refers back to this queue), so that the queue
    /// can be freed once nothing else holds it. Called when the context goes away.
    pub(crate) fn forget_marker(&self) {
        let marker = self.lock().marker.take();
        drop(marker);
    }

    /// Makes sure the commands up to `seq` have been submitted to the device, so that a
    /// command on another queue can wait for them.
    fn flush_through(&self, seq: u64) -> Result<()> {
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
        // Dropped with its context (which finished it first) or, after that, with its
        // last `Event`: either way nothing more was queued on it.
        if let Some(mem) = self
            .state
            .get_mut()
            .map(|s| s.finish_counters.take())
            .unwrap_or(None)
        {
            cl::release_mem(mem);
        }
        cl::release_queue(self.raw);
    }
}

/// A position on a queue: "the command at `seq` of `queue`" (with its event, if it has one).
#[derive(Clone)]
pub(crate) struct Mark {
    queue: Arc<QueueInner>,
    seq: u64,
    event: Option<Event>,
}

/// What a device buffer remembers about the commands that use it.
#[derive(Default)]
pub(crate) struct Access {
    write: Option<Mark>,
    /// At most one read per queue: the latest (in-order execution covers earlier ones).
    reads: SmallVec<[Mark; 2]>,
}

impl Access {
    /// The queue that last wrote the buffer, if any.
    pub(crate) fn writer(&self) -> Option<&Arc<QueueInner>> {
        self.write.as_ref().map(|m| &m.queue)
    }

    /// The last write (`None`: never written by a command).
    pub(crate) fn last_write(&self) -> Option<Mark> {
        self.write.clone()
    }
}

impl Mark {
    /// An event that completes once this command (and those before it on its queue) has.
    pub(crate) fn event(&self) -> Result<Event> {
        match &self.event {
            Some(e) => Ok(e.clone()),
            None => self.queue.covering_event(self.seq),
        }
    }
}

/// The dependencies of one command on other queues: the latest mark per queue.
#[derive(Default)]
struct Deps {
    marks: SmallVec<[Mark; 2]>,
}

impl Deps {
    fn add(&mut self, own: u32, mark: &Mark) {
        if mark.queue.id == own {
            return;
        }
        match self.marks.iter_mut().find(|m| m.queue.id == mark.queue.id) {
            Some(m) if m.seq >= mark.seq => {}
            Some(m) => *m = mark.clone(),
            None => self.marks.push(mark.clone()),
        }
    }

    /// The events to wait for (each kept alive by `keep`).
    fn events(self, keep: &mut SmallVec<[Event; 4]>) -> Result<()> {
        for m in self.marks {
            let event = match m.event {
                Some(e) => e,
                None => m.queue.covering_event(m.seq)?,
            };
            m.queue.flush_through(m.seq)?;
            Counters::add(&m.queue.counters.cross_queue_waits, 1);
            keep.push(event);
        }
        Ok(())
    }
}

/// One command about to be submitted: what it reads and writes, and extra events.
#[derive(Clone, Copy)]
pub(crate) struct Command<'a> {
    pub(crate) reads: &'a [&'a DeviceBuffer],
    pub(crate) writes: &'a [&'a DeviceBuffer],
    pub(crate) after: &'a [Event],
    pub(crate) want_event: bool,
}

impl Command<'_> {
    /// A command with no extra dependencies and no event.
    pub(crate) fn new<'a>(reads: &'a [&'a DeviceBuffer], writes: &'a [&'a DeviceBuffer]) -> Command<'a> {
        Command {
            reads,
            writes,
            after: &[],
            want_event: false,
        }
    }
}

impl QueueInner {
    /// Submits one command: computes its dependencies on other queues, calls `enqueue`
    /// with the queue, the wait list and whether an event is wanted, then records the
    /// command in the buffers it touches.
    pub(crate) fn submit(
        self: &Arc<Self>,
        cmd: Command<'_>,
        enqueue: impl FnOnce(cl_command_queue, &[cl_event], bool) -> Result<Option<cl_event>>,
    ) -> Result<Option<Event>> {
        self.check_command(&cmd)?;
        let mut deps = Deps::default();
        for b in cmd.reads {
            if let Some(w) = &b.access().write {
                deps.add(self.id, w);
            }
        }
        for b in cmd.writes {
            let access = b.access();
            if let Some(w) = &access.write {
                deps.add(self.id, w);
            }
            for r in &access.reads {
                deps.add(self.id, r);
            }
        }
        let mut keep: SmallVec<[Event; 4]> = SmallVec::new();
        deps.events(&mut keep)?;
        for e in cmd.after {
            if !Arc::ptr_eq(&e.queue, self) {
                e.queue.flush_through(e.seq)?;
            }
            keep.push(e.clone());
        }
        let wait: SmallVec<[cl_event; 4]> = keep.iter().map(|e| e.raw).collect();
        let (seq, event, overdue) = {
            // Held across the enqueue so that positions follow the queue's real order
            // (markers rely on it); the driver serializes enqueues on one queue anyway.
            let mut st = self.lock();
            let raw = enqueue(self.raw, &wait, cmd.want_event)?;
            st.seq += 1;
            let event = raw.map(|raw| {
                Counters::add(&self.counters.events_created, 1);
                Event::adopt(raw, self.clone(), st.seq)
            });
            let overdue = self.checkpoint(&mut st)?;
            (st.seq, event, overdue)
        };
        let mark = Mark {
            queue: self.clone(),
            seq,
            event: event.clone(),
        };
        for b in cmd.reads {
            let mut access = b.access();
            match access.reads.iter_mut().find(|m| m.queue.id == self.id) {
                // Two threads may record reads of one queue out of order: keep the later.
                Some(m) if m.seq < seq => *m = mark.clone(),
                Some(_) => {}
                None => access.reads.push(mark.clone()),
            }
        }
        for b in cmd.writes {
            let mut access = b.access();
            access.write = Some(mark.clone());
            access.reads.clear();
        }
        if let Some(checkpoint) = overdue {
            self.hold_back(checkpoint)?;
        }
        Ok(event)
    }

    /// Every buffer and event of `cmd` must belong to this queue's context (OpenCL leaves
    /// mixing contexts undefined): one comparison of context numbers each.
    #[inline]
    fn check_command(&self, cmd: &Command<'_>) -> Result<()> {
        for b in cmd.reads.iter().chain(cmd.writes) {
            self.context
                .check(&b.ctx.tag, || "enqueuing a command".into(), || "an array".into())?;
        }
        for e in cmd.after {
            self.check_event(e, || "enqueuing a command".into())?;
        }
        Ok(())
    }

    /// `Ok` if `event` was submitted to a queue of this queue's context.
    #[inline]
    pub(crate) fn check_event(&self, event: &Event, op: impl FnOnce() -> String) -> Result<()> {
        self.context.check(&event.queue.context, op, || {
            format!("an event of queue {}", event.queue.id)
        })
    }
}

impl Queue {
    /// This queue's number: 0 for the default queue, then 1, 2, ... in creation order.
    pub fn id(&self) -> u32 {
        self.inner.id
    }

    /// The context the queue belongs to.
    pub fn context(&self) -> Context {
        Context::from_inner(self.ctx.clone())
    }

    /// An event that completes once every command queued on this queue so far has.
    pub fn marker(&self) -> Result<Event> {
        let seq = self.inner.lock().seq;
        self.inner.covering_event(seq)
    }

    /// Makes every command queued on this queue from now on wait for `events` (which may
    /// come from other queues). Returns at once.
    pub fn wait_for(&self, events: &[Event]) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        for e in events {
            self.inner.check_event(e, || "Queue::wait_for".into())?;
        }
        for e in events {
            if !Arc::ptr_eq(&e.queue, &self.inner) {
                e.queue.flush_through(e.seq)?;
            }
        }
        let wait: SmallVec<[cl_event; 4]> = events.iter().map(|e| e.raw).collect();
        // A barrier is not a command on any buffer: it does not move the queue's position,
        // but every later command of the queue runs after it.
        let _st = self.inner.lock();
        cl::enqueue_barrier(self.inner.raw, &wait)
    }

    /// Blocks until every command queued on this queue so far has completed (counted as an
    /// explicit host wait).
    pub fn finish(&self) -> Result<()> {
        self.inner.finish(WaitReason::Explicit)
    }

    /// `Ok` if this queue belongs to `ctx`, on which the user's operation `op` runs.
    #[inline]
    pub(crate) fn check_context(&self, ctx: &ContextInner, op: impl FnOnce() -> String) -> Result<()> {
        ctx.tag
            .check(&self.inner.context, op, || format!("queue {}", self.inner.id))
    }
}

impl fmt::Debug for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Queue({})", self.inner.id)
    }
}

/// A command that was submitted to a queue: wait for it, ask whether it is done, or pass
/// it to [`Queue::wait_for`] or a launch's `.after(..)` to order later work after it.
/// Cheap to clone (an OpenCL reference count).
pub struct Event {
    raw: cl_event,
    queue: Arc<QueueInner>,
    /// The queue position the event covers.
    seq: u64,
}

// SAFETY: cl_event handles may be used from any thread; the reference is owned.
unsafe impl Send for Event {}
unsafe impl Sync for Event {}

impl Event {
    /// Takes ownership of one reference to `raw`.
    fn adopt(raw: cl_event, queue: Arc<QueueInner>, seq: u64) -> Event {
        Event { raw, queue, seq }
    }

    /// Blocks until the command has completed (counted as an explicit host wait).
    pub fn wait(&self) -> Result<()> {
        self.queue.counters.count_wait(WaitReason::Explicit);
        self.queue.flush_through(self.seq)?;
        cl::wait_for_event(self.raw)?;
        self.failed()
    }

    /// Whether the command has completed, without waiting.
    pub fn is_complete(&self) -> Result<bool> {
        self.failed()?;
        Ok(cl::event_status(self.raw)? == 0)
    }

    /// The event a submission returned when one was asked for (used by generated code).
    #[doc(hidden)]
    pub fn required(event: Option<Event>) -> Result<Event> {
        event.ok_or_else(|| Error::InvalidLaunch {
            kernel: String::new(),
            reason: "internal: the launch returned no event".into(),
        })
    }

    /// The id of the queue the command was submitted to.
    pub fn queue_id(&self) -> u32 {
        self.queue.id
    }

    fn failed(&self) -> Result<()> {
        match cl::event_status(self.raw)? {
            code if code < 0 => Err(Error::cl("command execution", code)),
            _ => Ok(()),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Markers are events that refer back to their queue; dropping the context must still
    /// free every queue (and with it the OpenCL queue and context).
    #[test]
    fn queues_are_freed_with_their_context() {
        let ctx = Context::new().expect("an OpenCL device");
        let q = ctx.new_queue().unwrap();
        let weak = [Arc::downgrade(ctx.inner.queue()), Arc::downgrade(&q.inner)];
        let x = ctx.full(16, 1.0f32).unwrap(); // written on the default queue
        let y = &x * 2.0;
        y.eval_on(&q).unwrap(); // reads x on q: a marker on the default queue
        let z = &y + 1.0;
        z.eval().unwrap(); // reads y on the default queue: a marker on q
        let stats = ctx.stats();
        assert_eq!(stats.cross_queue_waits, 2, "{stats}");
        let m = q.marker().unwrap();
        assert_eq!(z.to_vec().unwrap(), vec![3.0; 16]);
        drop((x, y, z, q, ctx));
        assert!(weak[1].upgrade().is_some(), "a user's event keeps its queue");
        drop(m);
        assert!(
            weak.iter().all(|w| w.upgrade().is_none()),
            "every queue was freed"
        );
    }
}
