//! Device memory: [`DeviceBuffer`] (one `cl_mem`) and the per-context pool that recycles
//! buffers by size, so iterative code does not call `clCreateBuffer` every step.

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

    /// A buffer of at least `bytes` bytes from the pool, or newly created, for commands on
    /// `queue` (the pool prefers a buffer that needs no wait there). Contents undefined.
    pub(crate) fn uninit(
        ctx: &Arc<ClContext>,
        bytes: usize,
        queue: &QueueInner,
    ) -> Result<Arc<DeviceBuffer>> {
        let capacity = size_class(bytes);
        Self::check_size(ctx, capacity)?;
        let mut taken = ctx.pool.take(capacity, queue);
        if taken.is_none() {
            match Self::create_once(ctx, capacity) {
                Ok(mem) => return Ok(Self::wrap(ctx, mem, capacity, Access::default())),
                // No memory for a new one: a free one still in use, with a wait.
                Err(_) => taken = ctx.pool.take_any(capacity),
            }
        }
        if let Some((mem, access)) = taken {
            Counters::add(&ctx.counters.buffers_reused, 1);
            return Ok(Self::wrap(ctx, mem, capacity, access));
        }
        Ok(Self::wrap(
            ctx,
            Self::create(ctx, capacity)?,
            capacity,
            Access::default(),
        ))
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
    /// long kernel on another queue: BENCHMARKS.md.) Nothing is written past
    /// `data` in the size class; no kernel reads there.
    pub(crate) fn from_bytes(
        ctx: &Arc<ClContext>,
        queue: &QueueInner,
        data: &[u8],
    ) -> Result<Arc<DeviceBuffer>> {
        if data.is_empty() {
            return Self::uninit(ctx, 0, queue);
        }
        let capacity = size_class(data.len());
        let mem = Self::create(ctx, capacity)?;
        let buffer = Arc::new(DeviceBuffer {
            mem,
            capacity,
            access: Mutex::default(),
            ctx: ctx.clone(),
        });
        cl::write_buffer_blocking(queue.raw(), mem, data.len(), data.as_ptr() as *const c_void)?;
        Counters::add(&ctx.counters.bytes_uploaded, data.len() as u64);
        Ok(buffer)
    }

    /// A new buffer; if the device has no memory for it, the pool's buffers are released
    /// and it is tried once more.
    fn create(ctx: &Arc<ClContext>, capacity: usize) -> Result<cl_mem> {
        Self::check_size(ctx, capacity)?;
        Self::create_once(ctx, capacity).or_else(|_| {
            ctx.pool.clear();
            Self::create_once(ctx, capacity)
        })
    }

    /// `Ok` if a buffer of `capacity` bytes may be created on the context's device.
    pub(crate) fn check_size(ctx: &ClContext, capacity: usize) -> Result<()> {
        if capacity as u64 > ctx.device.max_alloc_bytes {
            return Err(Error::OutOfMemory {
                what: "allocating a device buffer (over CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                bytes: capacity,
            });
        }
        Ok(())
    }

    fn create_once(ctx: &Arc<ClContext>, capacity: usize) -> Result<cl_mem> {
        let mem = cl::create_buffer(ctx.cl_context_handle(), capacity)
            .map_err(|code| Error::alloc("clCreateBuffer", code, "allocating a device buffer", capacity))?;
        Counters::add(&ctx.counters.buffers_allocated, 1);
        Counters::add(&ctx.counters.bytes_allocated, capacity as u64);
        Ok(mem)
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        let access = std::mem::take(self.access.get_mut().unwrap_or_else(|e| e.into_inner()));
        self.ctx.pool.give_back(self.mem, self.capacity, access);
    }
}
