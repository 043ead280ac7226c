//! What each device buffer remembers about the commands that use it (the last write and,
//! per queue, the last read), and the dependencies of a new command derived from it.

use std::sync::Arc;

use smallvec::SmallVec;

use crate::backend::queue::{Event, Mark, QueueInner};
use crate::error::Result;
use crate::stats::Counters;

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
}

/// The dependencies of one command on other queues: the latest mark per queue.
#[derive(Default)]
pub(crate) struct Deps {
    marks: SmallVec<[Mark; 2]>,
}

impl Deps {
    pub(crate) fn add(&mut self, own: u32, mark: &Mark) {
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
    pub(crate) fn events(self, keep: &mut SmallVec<[Event; 4]>) -> Result<()> {
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
