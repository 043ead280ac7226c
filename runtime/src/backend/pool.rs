//! The per-context pool of free device buffers, by size class, each with the record of
//! the commands that last used it, so that iterative code does not call
//! `clCreateBuffer` every step and a buffer's next owner orders its commands after them.

use rustc_hash::FxHashMap as HashMap;
use std::sync::Mutex;

use cl3::types::cl_mem;

use crate::backend::access::Access;
use crate::backend::cl;

/// Pooled memory beyond this fraction of the device's global memory is released.
const POOL_FRACTION: u64 = 4;

/// Free device buffers by size class, each with the record of the commands that last used
/// it (so its next owner orders its commands after them).
#[derive(Default)]
pub(crate) struct BufferPool {
    free: Mutex<PoolState>,
    limit_bytes: u64,
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
    pub(crate) fn new(global_mem_bytes: u64) -> Self {
        BufferPool {
            free: Mutex::default(),
            limit_bytes: global_mem_bytes / POOL_FRACTION,
        }
    }

    pub(crate) fn take(&self, capacity: usize) -> Option<(cl_mem, Access)> {
        let mut st = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let entry = st.by_size.get_mut(&capacity)?.pop()?;
        st.bytes -= capacity as u64;
        Some(entry)
    }

    pub(crate) fn give_back(&self, mem: cl_mem, capacity: usize, access: Access) {
        let mut st = self.free.lock().unwrap_or_else(|e| e.into_inner());
        if st.bytes + capacity as u64 > self.limit_bytes {
            drop(st);
            // OpenCL frees the memory once the commands using it have completed.
            cl::release_mem(mem);
            drop(access);
            return;
        }
        st.bytes += capacity as u64;
        st.by_size.entry(capacity).or_default().push((mem, access));
    }

    /// Releases every pooled buffer.
    pub(crate) fn clear(&self) {
        let drained: Vec<_> = {
            let mut st = self.free.lock().unwrap_or_else(|e| e.into_inner());
            st.bytes = 0;
            st.by_size.drain().flat_map(|(_, v)| v).collect()
        };
        for (mem, _access) in drained {
            cl::release_mem(mem);
        }
    }
}
