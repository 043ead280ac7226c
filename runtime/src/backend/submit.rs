//! Submitting one command to a queue: its buffers and events are checked against the
//! queue's context, its dependencies on other queues become its wait list, the enqueue
//! runs under the queue's lock (so positions follow the queue's real order), and the
//! command is recorded in the buffers it touches.

use std::sync::Arc;

use cl3::types::{cl_command_queue, cl_event};
use smallvec::SmallVec;

use crate::backend::access::{Deps, Mark};
use crate::backend::buffer::DeviceBuffer;
use crate::backend::queue::{Event, QueueInner};
use crate::error::Result;

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
        // This thread's `eval()`s handed to the dispatch thread go first.
        self.jobs.settle()?;
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
        let wait: SmallVec<[cl_event; 4]> = keep.iter().map(Event::raw).collect();
        let (seq, event, overdue) = self.enqueue_numbered(&wait, cmd.want_event, enqueue)?;
        let mark = Mark {
            queue: self.clone(),
            seq,
            event: event.clone(),
        };
        for b in cmd.reads {
            b.access().record_read(&mark);
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
