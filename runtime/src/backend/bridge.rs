//! Copies between the devices of a multi-device context (`Context::multi`). Each device
//! has an OpenCL context of its own, and an event of one context cannot be in the wait
//! list of a command of another. So a copy reads the bytes on the source device's queue
//! into host memory; a callback on that read's completion (run on a driver thread) sets
//! a user event of the destination's context; the write into the destination waits for
//! that user event. No thread of the caller's waits, and each queue goes on with its
//! work; the destination queue's later commands come after the write, in order (the
//! multi-device flush gives each device a queue of its own for these).
//!
//! The host memory lives until both the read and the write have completed (a callback
//! on each holds it).
//! A failed read fails the user event, and so the write and whatever reads its result.

use std::cell::UnsafeCell;
use std::ffi::c_void;
use std::sync::Arc;

use cl3::types::cl_event;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::cl;
use crate::backend::cl_context::ClContext;
use crate::backend::queue::QueueInner;
use crate::backend::submit::Command;
use crate::error::{Error, Result};
use crate::stats::Counters;

/// Host memory between a read and a write, written by the device (through the read) and
/// read by the device (through the write) while no Rust code touches it.
struct Staging(UnsafeCell<Box<[u8]>>);

// SAFETY: only the two commands access the bytes, the write strictly after the read
// (it waits for the user event the read's callback completes).
unsafe impl Send for Staging {}
unsafe impl Sync for Staging {}

/// Where a copy's bytes are and where they go.
pub(crate) struct Crossing<'a> {
    /// The buffer read, and the queue the read is enqueued on (it waits for the buffer's
    /// last writer through the buffer's record).
    pub(crate) src: &'a DeviceBuffer,
    pub(crate) src_queue: &'a Arc<QueueInner>,
    /// Bytes from the start of `src`.
    pub(crate) offset: usize,
    pub(crate) bytes: usize,
    /// The destination device's context and the queue whose commands will read the copy.
    pub(crate) dst: &'a Arc<ClContext>,
    pub(crate) dst_queue: &'a Arc<QueueInner>,
}

/// Copies `c.bytes` bytes of `c.src` at `c.offset` into a new buffer of the destination
/// context; returns without waiting.
pub(crate) fn copy_across(c: Crossing<'_>) -> Result<Arc<DeviceBuffer>> {
    let out = DeviceBuffer::uninit(c.dst, c.bytes, c.dst_queue, "a copy from another device")?;
    if c.bytes == 0 {
        return Ok(out);
    }
    let staging = Arc::new(Staging(UnsafeCell::new(vec![0u8; c.bytes].into_boxed_slice())));
    let host: *mut u8 = unsafe { (*staging.0.get()).as_mut_ptr() };
    let read = c
        .src_queue
        .submit(
            Command {
                reads: &[c.src],
                writes: &[],
                after: &[],
                want_event: true,
            },
            |q, wait, want| cl::read_buffer_async(q, c.src.mem(), c.offset, c.bytes, host.cast(), wait, want),
        )?
        .ok_or_else(|| Error::Internal("a read that asked for an event returned none".into()))?;
    // From here on the read may be writing into the host memory: every path keeps it.
    hold(read.raw(), &staging)?;
    cl::flush(c.src_queue.raw())?;

    let user = cl::create_user_event(c.dst.cl_context_handle())?;
    Counters::add(&c.dst.counters.events_created, 1);
    // The callback owns one reference to the user event, released once it is set.
    cl::retain_event(user);
    let relay = Box::into_raw(Box::new(Relay(user)));
    if let Err(e) = cl::set_complete_callback(read.raw(), relay_status, relay.cast()) {
        // SAFETY: the callback was not registered, so `relay` is still ours.
        let relay = unsafe { Box::from_raw(relay) };
        let _ = cl::set_user_event_status(relay.0, -1);
        cl::release_event(relay.0);
        cl::release_event(user);
        return Err(e);
    }

    let o: &DeviceBuffer = &out;
    let written = c.dst_queue.submit(
        Command {
            reads: &[],
            writes: &[o],
            after: &[],
            want_event: true,
        },
        |q, wait, want| {
            let mut list: smallvec::SmallVec<[cl_event; 4]> = wait.iter().copied().collect();
            list.push(user);
            cl::write_buffer_async(q, o.mem(), c.bytes, host as *const c_void, &list, want)
        },
    );
    cl::release_event(user);
    let written =
        written?.ok_or_else(|| Error::Internal("a write that asked for an event returned none".into()))?;
    hold(written.raw(), &staging)?;
    cl::flush(c.dst_queue.raw())?;
    Counters::add(&c.dst.counters.device_copies, 1);
    Counters::add(&c.dst.counters.device_copy_bytes, c.bytes as u64);
    Ok(out)
}

/// Keeps `staging` alive until the command of `event` has completed. Where no callback
/// can be registered the memory is leaked: never freed under a command that may use it.
fn hold(event: cl_event, staging: &Arc<Staging>) -> Result<()> {
    let keep = Box::into_raw(Box::new(staging.clone()));
    cl::set_complete_callback(event, free_staging, keep.cast()).inspect_err(|_| {
        // SAFETY: not registered, so `keep` is still ours; forgetting it leaks the memory.
        std::mem::forget(unsafe { Box::from_raw(keep) });
    })
}

/// A user event the read's callback completes.
struct Relay(cl_event);

/// Completes the user event with the read's status (0 or an error code).
unsafe extern "C" fn relay_status(_event: cl_event, status: i32, data: *mut c_void) {
    // SAFETY: `data` is the `Relay` boxed for this callback, which runs once.
    let relay = unsafe { Box::from_raw(data.cast::<Relay>()) };
    let _ = cl::set_user_event_status(relay.0, if status < 0 { status } else { 0 });
    cl::release_event(relay.0);
}

/// Lets go of a copy's host memory once a command that uses it has completed (freed
/// with the last of the read's and the write's).
unsafe extern "C" fn free_staging(_event: cl_event, _status: i32, data: *mut c_void) {
    // SAFETY: `data` is the `Arc<Staging>` boxed for this callback, which runs once.
    drop(unsafe { Box::from_raw(data.cast::<Arc<Staging>>()) });
}
