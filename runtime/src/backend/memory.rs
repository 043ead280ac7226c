//! A context's device memory, counted against its limit ([`DeviceMemory`]): every buffer
//! lazycl creates counts from its `clCreateBuffer` until OpenCL frees it. A released
//! buffer stays allocated until the last command using it completes, so what comes back is
//! counted by a destructor callback OpenCL runs then, not at the release.
//!
//! Creating is two steps: [`reserve`](DeviceMemory::reserve) the bytes (one atomic
//! compare-and-swap; fails past the limit), then [`create`](DeviceMemory::create) the
//! buffer. What to free when a reservation fails (the pool) is the caller's business
//! (`buffer`); here is only the waiting for memory already released.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use cl3::types::{cl_context, cl_mem};

use crate::backend::cl;

/// How long [`DeviceMemory::wait_for_room`] waits without a byte coming back before it
/// gives up: the commands still using released memory were submitted, so this only
/// bounds a driver that never reports them done.
const PATIENCE: Duration = Duration::from_secs(30);

/// How often a wait looks again (a missed wake-up costs at most this).
const LOOK_AGAIN: Duration = Duration::from_millis(50);

/// The device memory of one context: its limit and what it holds.
pub(crate) struct DeviceMemory {
    limit: u64,
    /// Bytes of every buffer created and not yet freed by OpenCL: live, pooled, and
    /// released but still used by queued commands.
    held: AtomicU64,
    /// Of `held`, bytes released and not yet freed.
    releasing: AtomicU64,
    /// The most `held` has been.
    peak: AtomicU64,
    /// Signalled whenever OpenCL frees a buffer.
    freed: (Mutex<()>, Condvar),
}

impl DeviceMemory {
    pub(crate) fn new(limit: u64) -> Arc<DeviceMemory> {
        Arc::new(DeviceMemory {
            limit,
            held: AtomicU64::new(0),
            releasing: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            freed: (Mutex::new(()), Condvar::new()),
        })
    }

    /// The most this context may hold, in bytes.
    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    /// Bytes held now (live, pooled and released-but-busy) and the most ever held.
    pub(crate) fn held(&self) -> (u64, u64) {
        (self.held.load(Relaxed), self.peak.load(Relaxed))
    }

    /// Counts `bytes` more as held, unless that would pass the limit.
    pub(crate) fn reserve(&self, bytes: u64) -> bool {
        let mut held = self.held.load(Relaxed);
        loop {
            let Some(next) = held.checked_add(bytes).filter(|&n| n <= self.limit) else {
                return false;
            };
            match self.held.compare_exchange_weak(held, next, Relaxed, Relaxed) {
                Ok(_) => {
                    self.peak.fetch_max(next, Relaxed);
                    return true;
                }
                Err(now) => held = now,
            }
        }
    }

    /// Gives back a reservation no buffer was made for.
    fn unreserve(&self, bytes: u64) {
        self.held.fetch_sub(bytes, Relaxed);
    }

    /// A new buffer of `bytes` bytes, already [reserved](Self::reserve); on failure (the
    /// driver's error code) the reservation is given back. Its bytes stop counting once
    /// OpenCL frees it after [`release`](Self::release).
    pub(crate) fn create(self: &Arc<Self>, context: cl_context, bytes: usize) -> Result<cl_mem, i32> {
        let mem = match cl::create_buffer(context, bytes) {
            Ok(mem) => mem,
            Err(code) => {
                self.unreserve(bytes as u64);
                return Err(code);
            }
        };
        let ticket = Box::into_raw(Box::new(Freed {
            memory: self.clone(),
            bytes: bytes as u64,
        }));
        if let Err(code) = cl::set_destructor_callback(mem, freed, ticket as *mut c_void) {
            // SAFETY: the callback was not registered, so nothing else owns the ticket.
            drop(unsafe { Box::from_raw(ticket) });
            cl::release_mem(mem);
            self.unreserve(bytes as u64);
            return Err(code);
        }
        Ok(mem)
    }

    /// Releases a buffer of `bytes` bytes made by [`create`](Self::create). Its commands
    /// must have been submitted (flushed): its memory comes back once they complete.
    pub(crate) fn release(&self, mem: cl_mem, bytes: usize) {
        // Counted before the release: OpenCL may free it (and call back) within it.
        self.releasing.fetch_add(bytes as u64, Relaxed);
        cl::release_mem(mem);
    }

    /// Waits until `bytes` more can be [reserved](Self::reserve) (and reserves them), as
    /// long as memory released but still used by commands would make room: `false` at
    /// once when it would not, or when nothing came back for [`PATIENCE`].
    pub(crate) fn wait_for_room(&self, bytes: u64) -> bool {
        let (lock, signal) = &self.freed;
        let mut guard = lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut last = (self.releasing.load(Relaxed), Instant::now());
        loop {
            if self.reserve(bytes) {
                return true;
            }
            let releasing = self.releasing.load(Relaxed);
            let settled = self.held.load(Relaxed).saturating_sub(releasing);
            if settled.saturating_add(bytes) > self.limit {
                return false;
            }
            if releasing < last.0 {
                last = (releasing, Instant::now());
            } else if last.1.elapsed() > PATIENCE {
                return false;
            }
            guard = signal
                .wait_timeout(guard, LOOK_AGAIN)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Waits until no released memory is still in use (at most [`PATIENCE`] without a
    /// byte coming back): before asking a driver that refused a buffer once more.
    pub(crate) fn wait_released(&self) {
        let (lock, signal) = &self.freed;
        let mut guard = lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut last = (self.releasing.load(Relaxed), Instant::now());
        loop {
            let releasing = self.releasing.load(Relaxed);
            if releasing == 0 {
                return;
            }
            if releasing < last.0 {
                last = (releasing, Instant::now());
            } else if last.1.elapsed() > PATIENCE {
                return;
            }
            guard = signal
                .wait_timeout(guard, LOOK_AGAIN)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// What a buffer's destructor callback gives back.
struct Freed {
    memory: Arc<DeviceMemory>,
    bytes: u64,
}

/// OpenCL's destructor callback: the buffer's memory is free.
extern "C" fn freed(_mem: cl_mem, user_data: *mut c_void) {
    // SAFETY: `user_data` is the ticket `create` leaked for this buffer; OpenCL calls
    // this once per buffer.
    let ticket = unsafe { Box::from_raw(user_data as *mut Freed) };
    let memory = &ticket.memory;
    memory.held.fetch_sub(ticket.bytes, Relaxed);
    memory.releasing.fetch_sub(ticket.bytes, Relaxed);
    // Under the lock, so that a waiter between its check and its wait cannot miss it.
    let _guard = memory.freed.0.lock().unwrap_or_else(|e| e.into_inner());
    memory.freed.1.notify_all();
}
