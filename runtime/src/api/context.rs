//! What a user asks of a [`Context`]: opening one with the defaults, its device,
//! counters, queues, memory, and waiting for all of its work. Choosing the device and
//! options is the builder's (`api/builder.rs`).

use std::fmt;
use std::sync::Arc;

use crate::api::queue::Queue;
use crate::backend::context::{Context, ContextInner};
use crate::backend::device::{DeviceInfo, DeviceSelector};
use crate::backend::dispatch_mode::Dispatch;
use crate::error::Result;
use crate::stats::{MemoryStats, Stats, WaitReason};

impl Context {
    /// Opens the device named by `LAZYCL_DEVICE`, else the first GPU, else the first device.
    pub fn new() -> Result<Context> {
        Context::builder().build()
    }

    /// Opens a context over several devices (`LAZYCL_DEVICE` accepts the same
    /// selections: `gpu:*`, `1:0,1:1`). Every array of it is split by rows (along axis
    /// 0) across the devices, in proportion to [`ContextBuilder::weights`](crate::ContextBuilder::weights); each device
    /// computes its rows of every expression (one fused kernel per device, each on its
    /// own queue), a full or axis-0 reduction combines the devices' partial results on
    /// the first device, and a view that reads rows of another device (a shifted slice's
    /// halo, a transpose) copies just those rows across. Reading an array gathers its
    /// parts. A matrix product reads the rows of its left operand and all of its right
    /// one on each device; a captured step runs its closure each time. Operations that
    /// need an array in one device's memory (`#[kernel]` arguments, sorts, compactions,
    /// queues, `explain`) are an [`Error::MultiDevice`](crate::Error::MultiDevice). ARCHITECTURE.md, "Several
    /// devices", has the details.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// // Every device of the first device's platform (one on most test machines: a
    /// // one-device multi context runs like a plain one).
    /// let one = Context::new()?;
    /// let ctx = Context::multi(DeviceSelector::Platform(one.device().platform_index))?;
    /// let x = ctx.from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0])?;
    /// let y = (&x * 2.0 + 1.0).sum(); // each device sums its rows; one combine
    /// assert_eq!(y.item()?, 35.0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn multi(selector: DeviceSelector) -> Result<Context> {
        Context::builder().device(selector).multi(true).build()
    }

    /// How many devices the context runs on (1 for a plain context).
    pub fn device_count(&self) -> usize {
        self.inner.multi.as_ref().map_or(1, |m| m.parts.len())
    }

    /// The devices the context runs on, in order (one for a plain context).
    pub fn devices(&self) -> Vec<DeviceInfo> {
        match &self.inner.multi {
            Some(m) => m.parts.iter().map(|p| p.device.clone()).collect(),
            None => vec![self.inner.device.clone()],
        }
    }

    /// Each device's counters, in device order (one entry for a plain context);
    /// [`stats`](Context::stats) adds them up.
    pub fn device_stats(&self) -> Vec<Stats> {
        match &self.inner.multi {
            Some(m) => m.parts.iter().map(|p| p.counters.snapshot()).collect(),
            None => vec![self.inner.counters.snapshot()],
        }
    }

    /// The device this context runs on (the first of a multi-device context's:
    /// [`devices`](Context::devices) lists them all).
    pub fn device(&self) -> &DeviceInfo {
        &self.inner.device
    }

    /// The file of the disk cache's table of GEMM tiles for this device, and the line it
    /// starts with (naming the device); `None` without a disk cache. For tests that write
    /// one.
    #[doc(hidden)]
    pub fn tile_table_file(&self) -> Option<(std::path::PathBuf, String)> {
        self.inner.tile_table_file()
    }

    /// Where this context's `eval()`s flush: the mode it was built with, with
    /// [`Dispatch::Auto`] resolved for its device (`Inline` on a multi-device context,
    /// which always flushes on the caller).
    pub fn dispatch(&self) -> Dispatch {
        match self.inner.multi {
            Some(_) => Dispatch::Inline,
            None => self.inner.dispatch,
        }
    }

    /// A snapshot of the counters (programs built, launches, host waits, bytes moved, ...);
    /// a multi-device context's are its devices' added up ([`device_stats`](Context::device_stats)).
    pub fn stats(&self) -> Stats {
        // Including what this thread's `eval()`s handed to the dispatch thread did.
        self.inner.jobs().wait();
        let own = self.inner.counters.snapshot();
        match &self.inner.multi {
            None => own,
            Some(m) => m.parts.iter().fold(own, |sum, p| sum + p.counters.snapshot()),
        }
    }

    /// The context's device memory now: bytes live (arrays, scratch of queued commands,
    /// memory released whose commands have not completed), bytes the pool keeps for
    /// reuse, the limit ([`ContextBuilder::memory_limit`](crate::ContextBuilder::memory_limit)) and the peak; a multi-device
    /// context's are its devices' added up.
    pub fn memory_stats(&self) -> MemoryStats {
        // Including what this thread's `eval()`s handed to the dispatch thread did.
        self.inner.jobs().wait();
        let parts = match &self.inner.multi {
            None => return self.inner.cl.memory_stats(),
            Some(m) => m.parts.iter().map(|p| p.cl.memory_stats()),
        };
        // (The recording context's own memory counts; its limit is its first device's,
        // counted with that device.)
        let own = MemoryStats {
            bytes_limit: 0,
            ..self.inner.cl.memory_stats()
        };
        parts.fold(own, |sum, p| MemoryStats {
            bytes_live: sum.bytes_live + p.bytes_live,
            bytes_pooled: sum.bytes_pooled + p.bytes_pooled,
            bytes_limit: sum.bytes_limit + p.bytes_limit,
            peak_bytes_in_use: sum.peak_bytes_in_use + p.peak_bytes_in_use,
        })
    }

    /// Returns once the `eval()`s this thread handed to the context's dispatch thread
    /// ([`Dispatch`]) have been planned and enqueued (those the dispatch thread had not
    /// started, here), and returns the first error one of them ran into
    /// ([`Error::Deferred`](crate::Error::Deferred)). Does not wait for the device.
    ///
    /// Rarely needed: every call that submits work or reads an array does this first. Use
    /// it to have a flush's errors at a point of your choosing, or to time the host's
    /// side of a loop of `eval()`s.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::builder().dispatch(lazycl::Dispatch::Background).build()?;
    /// let y = ctx.from_slice(&[1.0f32, 2.0])? * 3.0;
    /// y.eval()?; // handed over
    /// ctx.wait_dispatched()?; // enqueued by now, maybe still running on the device
    /// assert_eq!(ctx.stats().kernels_launched, 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn wait_dispatched(&self) -> Result<()> {
        self.inner.jobs().settle()
    }

    /// Waits for every command queued so far on every queue that is alive (counted as an
    /// explicit wait per queue).
    ///
    /// Rarely needed: reading an array waits for what it needs, and dropping the context
    /// waits for everything. Use it to time the device from the host.
    pub fn synchronize(&self) -> Result<()> {
        self.inner.jobs().settle()?;
        let parts = self.inner.multi.iter().flat_map(|m| m.parts.iter());
        for ctx in std::iter::once(&self.inner).chain(parts) {
            for q in ctx.all_queues() {
                q.finish(WaitReason::Explicit)?;
            }
        }
        Ok(())
    }

    /// The default queue, where `eval()`, `to_vec()`, fills and launches without `.on(..)`
    /// go.
    pub fn queue(&self) -> Queue {
        Queue {
            inner: self.inner.queue().clone(),
            ctx: self.inner.clone(),
        }
    }

    /// Creates another in-order queue on this context's device. Work on different queues
    /// may overlap; dependencies between them are added automatically.
    ///
    /// A queue lives while something names it: a [`Queue`] handle, an
    /// [`Event`](crate::Event) of it, or an array whose last write or read was one of its
    /// commands (until another command writes that array, or the array's memory is
    /// reused); the context does not keep it. So a queue made per task and dropped is
    /// freed once its arrays are, or once a host wait (a read, `finish`, `synchronize`)
    /// has shown its work done. Dropping a queue never waits: OpenCL finishes its queued
    /// commands, and dropping the context waits for the queues still alive
    /// (`queues_created - queues_released` in [`stats`](Context::stats) are alive now).
    /// Making a queue costs a driver object, so reuse a few where you can.
    ///
    /// ```
    /// # use lazycl::prelude::*;
    /// # fn main() -> lazycl::Result<()> {
    /// let ctx = Context::new()?;
    /// let side = ctx.new_queue()?;
    /// let x = ctx.from_slice(&[1.0f32, 2.0, 3.0])?;
    /// let y = &x * 2.0;
    /// y.eval_on(&side)?; // enqueued on `side`, not waited for
    /// let z = &y + 1.0; // on the default queue, after `side`'s kernel: no host wait
    /// assert_eq!(z.to_vec()?, [3.0, 5.0, 7.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn new_queue(&self) -> Result<Queue> {
        crate::api::array::one_device(&self.inner, "Context::new_queue")?;
        let inner = self.inner.new_queue()?;
        Ok(Queue {
            inner,
            ctx: self.inner.clone(),
        })
    }

    /// Whether two handles refer to the same context.
    pub fn same(&self, other: &Context) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    pub(crate) fn from_inner(inner: Arc<ContextInner>) -> Context {
        Context { inner }
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("device", &self.inner.device.name)
            .field("platform", &self.inner.device.platform_name)
            .finish()
    }
}
