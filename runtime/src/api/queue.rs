//! [`Queue`]: the user's handle on a command queue of a context.

use std::fmt;
use std::sync::Arc;

use cl3::types::cl_event;
use smallvec::SmallVec;

use crate::backend::context::{Context, ContextInner};
use crate::backend::queue::{Event, QueueInner};
use crate::error::Result;
use crate::stats::WaitReason;

/// A command queue of a [`Context`]: commands on one queue run in submission order;
/// commands on different queues may overlap on the device. Cheap to clone.
///
/// Get the default queue with [`Context::queue`] and more with [`Context::new_queue`].
/// Dependencies between queues (one queue's kernel reading an array another queue
/// wrote) are added automatically; [`Event`]s let you add your own.
///
/// ```
/// use lazycl::prelude::*;
///
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let (q1, q2) = (ctx.new_queue()?, ctx.new_queue()?);
/// let x = ctx.from_slice(&[1.0f32, 2.0, 3.0, 4.0])?;
/// let (a, b) = (&x * 2.0, &x * &x);
/// a.eval_on(&q1)?; // the two kernels may run at the same time
/// b.eval_on(&q2)?;
///
/// // Reading `a` (written on q1) from q2 adds the dependency by itself.
/// let mut c = ctx.zeros::<f32>(4)?;
/// c.assign_on(&q2, &a + &b)?;
/// // Or order a queue after another's work so far with an event.
/// q1.wait_for(&[q2.marker()?])?;
/// q1.eval(&(&c,))?;
/// q1.finish()?; // a host wait, rarely needed: reads wait for their writers
/// assert_eq!(c.to_vec()?, [3.0, 8.0, 15.0, 24.0]);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Queue {
    pub(crate) inner: Arc<QueueInner>,
    pub(crate) ctx: Arc<ContextInner>,
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
        self.inner.jobs.settle()?;
        self.inner.marker()
    }

    /// Makes every command queued on this queue from now on wait for `events` (which may
    /// come from other queues). Returns at once.
    pub fn wait_for(&self, events: &[Event]) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        // This thread's `eval()`s handed over before go first, and do not wait.
        self.inner.jobs.settle()?;
        for e in events {
            self.inner.check_event(e, || "Queue::wait_for".into())?;
        }
        for e in events {
            if !Arc::ptr_eq(&e.queue, &self.inner) {
                e.queue.flush_through(e.seq)?;
            }
        }
        let wait: SmallVec<[cl_event; 4]> = events.iter().map(Event::raw).collect();
        self.inner.barrier(&wait)
    }

    /// Blocks until every command queued on this queue so far has completed (counted as an
    /// explicit host wait).
    pub fn finish(&self) -> Result<()> {
        self.inner.jobs.settle()?;
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

    /// A queue's cached markers (its back-pressure checkpoints among them) do not keep it
    /// alive, and a context does not keep queues nothing else names.
    #[test]
    fn queues_are_freed_when_nothing_names_them() {
        let ctx = Context::builder().max_queued_commands(2).build().unwrap();
        let idle = ctx.new_queue().unwrap();
        let weak = Arc::downgrade(&idle.inner);
        drop(idle);
        assert!(weak.upgrade().is_none(), "an idle queue is freed with its handle");
        let q = ctx.new_queue().unwrap();
        let weak = Arc::downgrade(&q.inner);
        let x = ctx.full(16, 1.0f32).unwrap();
        let mut y = x.clone();
        for _ in 0..8 {
            y = &y + 1.0;
            y.eval_on(&q).unwrap();
        }
        assert_eq!(y.to_vec().unwrap(), vec![9.0; 16]);
        assert!(ctx.stats().events_created >= 4, "{}", ctx.stats());
        drop((x, y, q));
        assert!(weak.upgrade().is_some(), "pooled buffers' records name it");
        drop(ctx);
        assert!(weak.upgrade().is_none(), "its checkpoints do not keep it");
    }
}
