//! Device memory: [`DeviceBuffer`] (one `cl_mem`), taken from the per-context pool that
//! recycles buffers by size (so iterative code does not call `clCreateBuffer` every step)
//! or created within the context's memory limit, emptying the pool when that makes room.

use std::ffi::c_void;
use std::sync::{Arc, Mutex, MutexGuard};

use cl3::types::cl_mem;

use crate::backend::access::Access;
use crate::backend::cl;
use crate::backend::cl_context::ClContext;
use crate::backend::queue::QueueInner;
use crate::error::{Error, Result};
use crate::stats::Counters;

/// Allocation granularity: sizes are rounded up to this many bytes so that arrays of
/// nearly equal size share pooled buffers.
const GRANULE: usize = 256;

/// Rounds a request up to the pool's size classes (never 0: OpenCL rejects empty buffers).
fn size_class(bytes: usize) -> usize {
    bytes.max(1).div_ceil(GRANULE) * GRANULE
}

/// One device allocation. When the last owner drops it, it returns to its context's pool.
///
/// Dropping it while queued commands still use it is safe: the buffer keeps its record of
/// those commands ([`Access`]) in the pool, so the next owner's first command on another
/// queue waits for them on the device (on the same queue, in-order execution does it),
/// and OpenCL keeps a released `cl_mem` alive until the commands that use it complete.
pub struct DeviceBuffer {
    mem: cl_mem,
    capacity: usize,
    access: Mutex<Access>,
    pub(crate) ctx: Arc<ClContext>,
}

// SAFETY: cl_mem handles may be used from any thread; all mutation goes through the queue.
unsafe impl Send for DeviceBuffer {}
unsafe impl Sync for DeviceBuffer {}

impl DeviceBuffer {
    /// The raw `cl_mem` handle.
    pub fn mem(&self) -> cl_mem {
        self.mem
    }

    /// The commands that last wrote and read this buffer.
    pub(crate) fn access(&self) -> MutexGuard<'_, Access> {
        self.access.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A buffer of at least `bytes` bytes of `what` (named by an out-of-memory error, e.g.
    /// `"a kernel's output"`) for commands on `queue`: from the pool (which prefers a
    /// buffer that needs no wait there), else new if the memory limit and the driver
    /// allow, else a pooled one still in use (with a wait), else new after the pool is
    /// emptied ([`create`](Self::create)). Contents undefined.
    pub(crate) fn uninit(
        ctx: &Arc<ClContext>,
        bytes: usize,
        queue: &QueueInner,
        what: &'static str,
    ) -> Result<Arc<DeviceBuffer>> {
        let capacity = size_class(bytes);
        Self::check_size(ctx, capacity, what)?;
        let mut taken = ctx.pool.take(capacity, queue);
        if taken.is_none() {
            if let Some(mem) = Self::create_within_limit(ctx, capacity) {
                return Ok(Self::wrap_new(ctx, mem, capacity));
            }
            // No room for a new one: a free one still in use, with a wait.
            taken = ctx.pool.take_any(capacity);
        }
        if let Some((mem, access)) = taken {
            Counters::add(&ctx.counters.buffers_reused, 1);
            return Ok(Self::wrap(ctx, mem, capacity, access));
        }
        Ok(Self::wrap_new(ctx, Self::create(ctx, capacity, what)?, capacity))
    }

    /// A buffer just created, counted as allocated.
    fn wrap_new(ctx: &Arc<ClContext>, mem: cl_mem, capacity: usize) -> Arc<DeviceBuffer> {
        Counters::add(&ctx.counters.buffers_allocated, 1);
        Counters::add(&ctx.counters.bytes_allocated, capacity as u64);
        Self::wrap(ctx, mem, capacity, Access::default())
    }

    fn wrap(ctx: &Arc<ClContext>, mem: cl_mem, capacity: usize, access: Access) -> Arc<DeviceBuffer> {
        Arc::new(DeviceBuffer {
            mem,
            capacity,
            access: Mutex::new(access),
            ctx: ctx.clone(),
        })
    }

    /// A new buffer holding a copy of `data`: a blocking write on `queue` (the context's
    /// transfer queue), which runs nothing else, so the upload waits for no other work. (Copying at
    /// creation with `CL_MEM_COPY_HOST_PTR` waits for nothing at creation, but NVIDIA's
    /// driver moves such a buffer to the device at its first use and waits there for
    /// every kernel running in the context, so a read of a fresh upload waited for a
    /// long kernel on another queue: RESULTS.md#rule-uploads.) Nothing is written past
    /// `data` in the size class; no kernel reads there.
    pub(crate) fn from_bytes(
        ctx: &Arc<ClContext>,
        queue: &QueueInner,
        data: &[u8],
    ) -> Result<Arc<DeviceBuffer>> {
        if data.is_empty() {
            return Self::uninit(ctx, 0, queue, "an upload");
        }
        let capacity = size_class(data.len());
        let buffer = Self::wrap_new(ctx, Self::create(ctx, capacity, "an upload")?, capacity);
        let mem = buffer.mem;
        cl::write_buffer_blocking(queue.raw(), mem, data.len(), data.as_ptr() as *const c_void)?;
        Counters::add(&ctx.counters.bytes_uploaded, data.len() as u64);
        Ok(buffer)
    }

    /// A new buffer of `capacity` bytes of `what`. When it would pass the context's
    /// memory limit, or the driver has no memory for it, the pool's free buffers are
    /// released first; memory released but still used by queued commands is waited for
    /// when it makes room. `OutOfMemory` otherwise, naming the request and what is held.
    /// The caller wraps it (a `DeviceBuffer` returns it to the pool) or releases it
    /// through the context's memory
    /// ([`DeviceMemory::release`](crate::backend::memory::DeviceMemory::release)).
    pub(crate) fn create(ctx: &Arc<ClContext>, capacity: usize, what: &'static str) -> Result<cl_mem> {
        Self::check_size(ctx, capacity, what)?;
        if let Some(mem) = Self::create_within_limit(ctx, capacity) {
            return Ok(mem);
        }
        if ctx.pool.clear() > 0 {
            Counters::add(&ctx.counters.pool_trims, 1);
        }
        let mut refused = false;
        loop {
            let reserved = ctx.memory.reserve(capacity as u64) || ctx.memory.wait_for_room(capacity as u64);
            if !reserved {
                return Err(ctx.out_of_memory(
                    what,
                    capacity,
                    "it would pass the context's memory limit (ContextBuilder::memory_limit), \
                     with the pool's free buffers released"
                        .into(),
                ));
            }
            match ctx.memory.create(ctx.cl_context_handle(), capacity) {
                Ok(mem) => return Ok(mem),
                // The driver refused below the limit: memory released by this context
                // comes back when the commands still using it complete; then once more.
                Err(code) if Error::is_alloc_failure(code) && !refused => {
                    refused = true;
                    ctx.memory.wait_released();
                }
                Err(code) if Error::is_alloc_failure(code) => {
                    let reason = format!(
                        "the driver has no memory for it ({}) although the context's limit \
                         allows it: other contexts or processes use the device",
                        cl3::error_codes::error_text(code)
                    );
                    return Err(ctx.out_of_memory(what, capacity, reason));
                }
                Err(code) => return Err(Error::cl("clCreateBuffer", code)),
            }
        }
    }

    /// A new buffer of `capacity` bytes if it fits under the memory limit and the driver
    /// has the memory, freeing nothing.
    fn create_within_limit(ctx: &Arc<ClContext>, capacity: usize) -> Option<cl_mem> {
        if !ctx.memory.reserve(capacity as u64) {
            return None;
        }
        ctx.memory.create(ctx.cl_context_handle(), capacity).ok()
    }

    /// `Ok` if a buffer of `capacity` bytes of `what` may be created on the context's
    /// device: no larger than its largest buffer, nor than the context's memory limit.
    pub(crate) fn check_size(ctx: &ClContext, capacity: usize, what: &'static str) -> Result<()> {
        let max = ctx.device.max_alloc_bytes;
        if capacity as u64 > max {
            let reason =
                format!("over the device's largest buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE, {max} bytes)");
            return Err(ctx.out_of_memory(what, capacity, reason));
        }
        if capacity as u64 > ctx.memory.limit() {
            let reason = "over the context's whole memory limit (ContextBuilder::memory_limit)".into();
            return Err(ctx.out_of_memory(what, capacity, reason));
        }
        Ok(())
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        let access = std::mem::take(self.access.get_mut().unwrap_or_else(|e| e.into_inner()));
        self.ctx.pool.give_back(self.mem, self.capacity, access);
    }
}
