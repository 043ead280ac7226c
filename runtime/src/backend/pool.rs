//! The per-context pool of free device buffers, by size class, each with the record of
//! the commands that last used it, so that iterative code does not call
//! `clCreateBuffer` every step and a buffer's next owner orders its commands after them.
//!
//! A command on queue `Q` gets a free buffer that needs no wait there (last used only on
//! `Q`, or known complete) if the class has one. Otherwise every free buffer of the class
//! is still used by other queues' commands, as far as anyone knows: while there are at
//! most `spare` of them the pool makes a new buffer rather than order `Q` after that
//! work (independent queues each settle on buffers of their own); beyond that, or when
//! the device has no memory for a new one, it hands out the oldest of them, and the new
//! owner's first command waits for its old commands on the device.
//!
//! Pooled buffers count as held against the context's memory limit (`memory`); an
//! allocation that would pass it empties the pool first ([`BufferPool::clear`]).

use rustc_hash::FxHashMap as HashMap;
use std::sync::{Arc, Mutex};

use cl3::types::cl_mem;

use crate::backend::access::Access;
use crate::backend::memory::DeviceMemory;
use crate::backend::queue::QueueInner;
use crate::stats::Counters;

/// Pooled memory beyond this fraction of the context's memory limit is released.
const POOL_FRACTION: u64 = 4;

/// How many of a size class's free buffers, newest first, `take` looks at for one that
/// needs no wait: a bound on the work under the pool's lock.
const LOOK_AT: usize = 64;

/// Free device buffers by size class, each with the record of the commands that last used
/// it (so its next owner orders its commands after them).
pub(crate) struct BufferPool {
    free: Mutex<PoolState>,
    limit_bytes: u64,
    /// How many free buffers of one class that other queues still use the pool passes
    /// over (making a new buffer instead) before it hands one out with a wait.
    spare: usize,
    memory: Arc<DeviceMemory>,
    counters: Arc<Counters>,
}

#[derive(Default)]
struct PoolState {
    by_size: HashMap<usize, Vec<(cl_mem, Access)>>,
    bytes: u64,
}

// SAFETY: the pool only stores opaque handles, behind a mutex.
unsafe impl Send for BufferPool {}
unsafe impl Sync for BufferPool {}

impl BufferPool {
    pub(crate) fn new(memory: Arc<DeviceMemory>, spare: usize, counters: Arc<Counters>) -> Self {
        BufferPool {
            free: Mutex::default(),
            limit_bytes: memory.limit() / POOL_FRACTION,
            spare,
            memory,
            counters,
        }
    }

    /// Bytes of the free buffers held now.
    pub(crate) fn bytes(&self) -> u64 {
        self.free.lock().unwrap_or_else(|e| e.into_inner()).bytes
    }

    /// A free buffer of `capacity` bytes for a command on `queue`: the newest whose record
    /// needs no wait there (last used only on `queue`, or known complete); else, when the
    /// class holds more than `spare` buffers, the oldest (its first command on `queue`
    /// then waits for its old ones on the device); else none, to make a new one.
    pub(crate) fn take(&self, capacity: usize, queue: &QueueInner) -> Option<(cl_mem, Access)> {
        let mut st = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let free = st.by_size.get_mut(&capacity)?;
        let newest = free.len().checked_sub(1)?;
        let ready = (0..=newest)
            .rev()
            .take(LOOK_AT)
            .find(|&i| free[i].1.free_for(queue.id));
        let at = match ready {
            Some(i) => i,
            None if free.len() > self.spare => 0,
            None => return None,
        };
        let entry = free.remove(at);
        st.bytes -= capacity as u64;
        Some(entry)
    }

    /// The oldest free buffer of `capacity` bytes, whatever uses it still (for when the
    /// device has no memory for a new one).
    pub(crate) fn take_any(&self, capacity: usize) -> Option<(cl_mem, Access)> {
        let mut st = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let free = st.by_size.get_mut(&capacity)?;
        let entry = (!free.is_empty()).then(|| free.remove(0))?;
        st.bytes -= capacity as u64;
        Some(entry)
    }

    pub(crate) fn give_back(&self, mem: cl_mem, capacity: usize, access: Access) {
        let mut st = self.free.lock().unwrap_or_else(|e| e.into_inner());
        if st.bytes + capacity as u64 > self.limit_bytes {
            drop(st);
            self.release(mem, capacity, access);
            return;
        }
        st.bytes += capacity as u64;
        st.by_size.entry(capacity).or_default().push((mem, access));
    }

    /// Releases every pooled buffer; returns how many there were.
    pub(crate) fn clear(&self) -> usize {
        let drained: Vec<_> = {
            let mut st = self.free.lock().unwrap_or_else(|e| e.into_inner());
            st.bytes = 0;
            st.by_size
                .drain()
                .flat_map(|(size, v)| v.into_iter().map(move |e| (size, e)))
                .collect()
        };
        let count = drained.len();
        for (capacity, (mem, access)) in drained {
            self.release(mem, capacity, access);
        }
        count
    }

    /// Releases a buffer: OpenCL frees its memory once the commands using it have
    /// completed, which are submitted now so that they do.
    fn release(&self, mem: cl_mem, capacity: usize, access: Access) {
        access.submit_pending();
        self.memory.release(mem, capacity);
        Counters::add(&self.counters.buffers_released, 1);
    }
}
