//! A position on a queue ([`Mark`]), what each device buffer remembers about the commands
//! that use it (the last write and, per queue, the last read), and the dependencies of a
//! new command derived from it.
//! A command known complete is no dependency: it adds no event and no wait.

use std::sync::Arc;

use smallvec::SmallVec;

use crate::backend::queue::{Event, QueueInner};
use crate::error::Result;
use crate::stats::Counters;

/// A position on a queue: "the command at `seq` of `queue`" (with its event, if it has one).
#[derive(Clone)]
pub(crate) struct Mark {
    pub(crate) queue: Arc<QueueInner>,
    pub(crate) seq: u64,
    pub(crate) event: Option<Event>,
}

impl Mark {
    /// An event that completes once this command (and those before it on its queue) has.
    pub(crate) fn event(&self) -> Result<Event> {
        match &self.event {
            Some(e) => Ok(e.clone()),
            None => self.queue.covering_event(self.seq),
        }
    }

    /// Whether this command is known complete (no driver call).
    #[inline]
    pub(crate) fn known_done(&self) -> bool {
        self.queue.known_done(self.seq)
    }

    /// Whether this command has completed, as far as existing events tell
    /// ([`QueueInner::check_done`]).
    pub(crate) fn check_done(&self) -> bool {
        self.queue.check_done(self.seq, self.event.as_ref())
    }
}

/// What a device buffer remembers about the commands that use it.
#[derive(Default)]
pub(crate) struct Access {
    pub(crate) write: Option<Mark>,
    /// At most one read per queue: the latest (in-order execution covers earlier ones).
    pub(crate) reads: SmallVec<[Mark; 2]>,
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

    /// Whether a command on queue `own` that writes this buffer needs no wait: every
    /// command recorded here ran on `own` or is known complete (no driver call).
    pub(crate) fn free_for(&self, own: u32) -> bool {
        let clear = |m: &Mark| m.queue.id == own || m.known_done();
        self.write.as_ref().is_none_or(clear) && self.reads.iter().all(clear)
    }

    /// Submits the recorded commands not known complete to the device (`clFlush`), so
    /// that memory released after them comes back once they run.
    pub(crate) fn submit_pending(&self) {
        for m in self.write.iter().chain(&self.reads) {
            if !m.known_done() {
                // A queue that cannot flush reports it on its next command.
                let _ = m.queue.flush_through(m.seq);
            }
        }
    }

    /// Records a read by `mark`: the latest per queue. Reads known complete are forgotten
    /// when another queue's read is added, so a buffer that many short-lived queues read
    /// does not keep those queues alive once they are known to be done.
    pub(crate) fn record_read(&mut self, mark: &Mark) {
        match self.reads.iter_mut().find(|m| m.queue.id == mark.queue.id) {
            // Two threads may record reads of one queue out of order: keep the later.
            Some(m) if m.seq < mark.seq => *m = mark.clone(),
            Some(_) => {}
            None => {
                self.reads.retain(|m| !m.known_done());
                self.reads.push(mark.clone());
            }
        }
    }
}

/// The dependencies of one command on other queues: the latest mark per queue.
#[derive(Default)]
pub(crate) struct Deps {
    marks: SmallVec<[Mark; 2]>,
}

impl Deps {
    pub(crate) fn add(&mut self, own: u32, mark: &Mark) {
        if mark.queue.id == own || mark.known_done() {
            return;
        }
        match self.marks.iter_mut().find(|m| m.queue.id == mark.queue.id) {
            Some(m) if m.seq >= mark.seq => {}
            Some(m) => *m = mark.clone(),
            None => self.marks.push(mark.clone()),
        }
    }

    /// The events to wait for (each kept alive by `keep`): none for a command that
    /// existing events show complete (keep-alive stays safe: any other becomes a wait).
    pub(crate) fn events(self, keep: &mut SmallVec<[Event; 4]>) -> Result<()> {
        for m in self.marks {
            if m.check_done() {
                continue;
            }
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
