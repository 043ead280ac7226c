//! The few raw OpenCL calls on the hot path, made directly through the loaded ICD
//! library so that no wrapper adds queries, allocations or events we did not ask for.

use std::ffi::c_void;
use std::ptr;

use cl3::types::{cl_command_queue, cl_event, cl_kernel, cl_mem, cl_uint};

use crate::error::{Error, Result};

fn runtime() -> Result<&'static cl3::OpenClRuntime> {
    cl3::load_library().as_ref().map_err(|_| Error::NoLoader)
}

fn check(call: &'static str, status: Option<i32>) -> Result<()> {
    match status {
        Some(0) => Ok(()),
        Some(code) => Err(Error::cl(call, code)),
        None => Err(Error::cl(call, cl3::error_codes::DLOPEN_FUNCTION_NOT_AVAILABLE)),
    }
}

/// `clSetKernelArg` with raw bytes.
#[inline]
pub(crate) fn set_kernel_arg(kernel: cl_kernel, index: u32, size: usize, value: *const c_void) -> Result<()> {
    let rt = runtime()?;
    // The kernel handle is valid for the lifetime of its owner; value points to `size`
    // readable bytes (or is null for a local-memory argument).
    check("clSetKernelArg", rt.clSetKernelArg(kernel, index, size, value))
}

/// `clEnqueueNDRangeKernel`; asks for an event only when `want_event` is set.
#[inline]
pub(crate) fn enqueue_kernel(
    queue: cl_command_queue,
    kernel: cl_kernel,
    global: &[usize],
    local: Option<&[usize]>,
    wait: &[cl_event],
    want_event: bool,
) -> Result<Option<cl_event>> {
    let rt = runtime()?;
    let mut event: cl_event = ptr::null_mut();
    let event_ptr = if want_event {
        &mut event as *mut cl_event
    } else {
        ptr::null_mut()
    };
    // the size arrays hold `global.len()` entries; the wait list holds valid events.
    let status = {
        rt.clEnqueueNDRangeKernel(
            queue,
            kernel,
            global.len() as cl_uint,
            ptr::null(),
            global.as_ptr(),
            local.map_or(ptr::null(), |l| l.as_ptr()),
            wait.len() as cl_uint,
            if wait.is_empty() {
                ptr::null()
            } else {
                wait.as_ptr()
            },
            event_ptr,
        )
    };
    check("clEnqueueNDRangeKernel", status)?;
    Ok(want_event.then_some(event))
}

/// A blocking `clEnqueueReadBuffer` of `bytes` bytes at `offset` into `dst`.
pub(crate) fn read_buffer_blocking(
    queue: cl_command_queue,
    mem: cl_mem,
    offset: usize,
    bytes: usize,
    dst: *mut c_void,
) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    let rt = runtime()?;
    // dst points to at least `bytes` writable bytes; the call blocks until done.
    let status =
        { rt.clEnqueueReadBuffer(queue, mem, 1, offset, bytes, dst, 0, ptr::null(), ptr::null_mut()) };
    check("clEnqueueReadBuffer", status)
}

/// A blocking `clEnqueueWriteBuffer` of `bytes` from `src`.
pub(crate) fn write_buffer_blocking(
    queue: cl_command_queue,
    mem: cl_mem,
    bytes: usize,
    src: *const c_void,
) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    let rt = runtime()?;
    // src points to at least `bytes` readable bytes; the call blocks until they are copied.
    let status = { rt.clEnqueueWriteBuffer(queue, mem, 1, 0, bytes, src, 0, ptr::null(), ptr::null_mut()) };
    check("clEnqueueWriteBuffer", status)
}

/// The pointer OpenCL expects for a wait list (null when empty).
fn wait_ptr(wait: &[cl_event]) -> *const cl_event {
    if wait.is_empty() {
        ptr::null()
    } else {
        wait.as_ptr()
    }
}

/// Where to store the command's event, if one is wanted.
fn event_out(want_event: bool, event: &mut cl_event) -> *mut cl_event {
    if want_event {
        event as *mut cl_event
    } else {
        ptr::null_mut()
    }
}

/// A non-blocking `clEnqueueFillBuffer` of a 1, 4 or 8-byte pattern.
pub(crate) fn fill_buffer(
    queue: cl_command_queue,
    mem: cl_mem,
    pattern: &[u8],
    bytes: usize,
    wait: &[cl_event],
    want_event: bool,
) -> Result<Option<cl_event>> {
    let rt = runtime()?;
    let mut event: cl_event = ptr::null_mut();
    // OpenCL copies the pattern at enqueue time; bytes is a multiple of its size.
    let status = rt.clEnqueueFillBuffer(
        queue,
        mem,
        pattern.as_ptr() as *const c_void,
        pattern.len(),
        0,
        bytes,
        wait.len() as cl_uint,
        wait_ptr(wait),
        event_out(want_event, &mut event),
    );
    check("clEnqueueFillBuffer", status)?;
    Ok(want_event.then_some(event))
}

/// A non-blocking `clEnqueueCopyBuffer`.
pub(crate) fn copy_buffer(
    queue: cl_command_queue,
    src: cl_mem,
    dst: cl_mem,
    bytes: usize,
    wait: &[cl_event],
    want_event: bool,
) -> Result<Option<cl_event>> {
    let rt = runtime()?;
    let mut event: cl_event = ptr::null_mut();
    // both buffers hold at least `bytes` bytes.
    let status = rt.clEnqueueCopyBuffer(
        queue,
        src,
        dst,
        0,
        0,
        bytes,
        wait.len() as cl_uint,
        wait_ptr(wait),
        event_out(want_event, &mut event),
    );
    check("clEnqueueCopyBuffer", status)?;
    Ok(want_event.then_some(event))
}

/// `clEnqueueMarkerWithWaitList` without a wait list: an event that completes when every
/// command queued before it on this (in-order) queue has completed.
pub(crate) fn enqueue_marker(queue: cl_command_queue) -> Result<cl_event> {
    enqueue_marker_after(queue, &[])
}

/// `clEnqueueMarkerWithWaitList`: an event that completes after the earlier commands of
/// this in-order queue and the events of `wait`.
pub(crate) fn enqueue_marker_after(queue: cl_command_queue, wait: &[cl_event]) -> Result<cl_event> {
    let rt = runtime()?;
    let mut event: cl_event = ptr::null_mut();
    check(
        "clEnqueueMarkerWithWaitList",
        rt.clEnqueueMarkerWithWaitList(queue, wait.len() as cl_uint, wait_ptr(wait), &mut event),
    )?;
    Ok(event)
}

/// `clEnqueueBarrierWithWaitList`: later commands on `queue` wait for `wait`.
pub(crate) fn enqueue_barrier(queue: cl_command_queue, wait: &[cl_event]) -> Result<()> {
    let rt = runtime()?;
    check(
        "clEnqueueBarrierWithWaitList",
        rt.clEnqueueBarrierWithWaitList(queue, wait.len() as cl_uint, wait_ptr(wait), ptr::null_mut()),
    )
}

/// `clFlush`: submits the queue's commands to the device (needed before another queue
/// waits for one of its events).
pub(crate) fn flush(queue: cl_command_queue) -> Result<()> {
    let rt = runtime()?;
    check("clFlush", rt.clFlush(queue))
}

/// `clWaitForEvents` on one event.
pub(crate) fn wait_for_event(event: cl_event) -> Result<()> {
    let rt = runtime()?;
    check("clWaitForEvents", rt.clWaitForEvents(1, &event))
}

/// The event's `CL_EVENT_COMMAND_EXECUTION_STATUS` (`CL_COMPLETE` = 0, negative = error).
pub(crate) fn event_status(event: cl_event) -> Result<i32> {
    let rt = runtime()?;
    let mut status: i32 = 1;
    check(
        "clGetEventInfo",
        rt.clGetEventInfo(
            event,
            cl3::event::CL_EVENT_COMMAND_EXECUTION_STATUS,
            std::mem::size_of::<i32>(),
            (&mut status as *mut i32).cast(),
            ptr::null_mut(),
        ),
    )?;
    Ok(status)
}

/// `clRetainEvent`.
pub(crate) fn retain_event(event: cl_event) {
    if let Ok(rt) = runtime() {
        // the event is valid: its owner holds a reference.
        let _ = rt.clRetainEvent(event);
    }
}

/// `clReleaseEvent`.
pub(crate) fn release_event(event: cl_event) {
    if let Ok(rt) = runtime() {
        // called once per reference taken.
        let _ = rt.clReleaseEvent(event);
    }
}

/// `clReleaseCommandQueue`.
pub(crate) fn release_queue(queue: cl_command_queue) {
    if let Ok(rt) = runtime() {
        // called once, by the queue's owner.
        let _ = rt.clReleaseCommandQueue(queue);
    }
}

/// `clFinish`.
pub(crate) fn finish(queue: cl_command_queue) -> Result<()> {
    let rt = runtime()?;
    // the queue handle is valid.
    check("clFinish", rt.clFinish(queue))
}

/// `clCreateBuffer` of `bytes` uninitialized read-write bytes.
pub(crate) fn create_buffer(
    context: cl3::types::cl_context,
    bytes: usize,
) -> std::result::Result<cl_mem, i32> {
    // No host pointer: OpenCL allocates and nothing is read.
    unsafe { cl3::memory::create_buffer(context, cl3::memory::CL_MEM_READ_WRITE, bytes, ptr::null_mut()) }
}

/// `clSetMemObjectDestructorCallback`: `notify(mem, user_data)` runs (on a driver
/// thread, or within the release) once OpenCL has freed `mem`, after the last command
/// using it completed.
pub(crate) fn set_destructor_callback(
    mem: cl_mem,
    notify: extern "C" fn(cl_mem, *mut c_void),
    user_data: *mut c_void,
) -> std::result::Result<(), i32> {
    // The buffer is valid; `notify` and what `user_data` points to live until it runs.
    unsafe { cl3::memory::set_mem_object_destructor_callback(mem, notify, user_data) }
}

/// `clReleaseMemObject`.
pub(crate) fn release_mem(mem: cl_mem) {
    // called once per created buffer, when its last owner lets go.
    unsafe {
        let _ = cl3::memory::release_mem_object(mem);
    }
}

/// A non-blocking `clEnqueueReadBuffer` of `bytes` bytes at `offset` into `dst`, which
/// must stay valid until the command completes.
pub(crate) fn read_buffer_async(
    queue: cl_command_queue,
    mem: cl_mem,
    offset: usize,
    bytes: usize,
    dst: *mut c_void,
    wait: &[cl_event],
    want_event: bool,
) -> Result<Option<cl_event>> {
    let rt = runtime()?;
    let mut event: cl_event = ptr::null_mut();
    let status = rt.clEnqueueReadBuffer(
        queue,
        mem,
        0,
        offset,
        bytes,
        dst,
        wait.len() as cl_uint,
        wait_ptr(wait),
        event_out(want_event, &mut event),
    );
    check("clEnqueueReadBuffer", status)?;
    Ok(want_event.then_some(event))
}

/// A non-blocking `clEnqueueWriteBuffer` of `bytes` bytes from `src` to the start of
/// `mem`; `src` must stay valid until the command completes.
pub(crate) fn write_buffer_async(
    queue: cl_command_queue,
    mem: cl_mem,
    bytes: usize,
    src: *const c_void,
    wait: &[cl_event],
    want_event: bool,
) -> Result<Option<cl_event>> {
    let rt = runtime()?;
    let mut event: cl_event = ptr::null_mut();
    let status = rt.clEnqueueWriteBuffer(
        queue,
        mem,
        0,
        0,
        bytes,
        src,
        wait.len() as cl_uint,
        wait_ptr(wait),
        event_out(want_event, &mut event),
    );
    check("clEnqueueWriteBuffer", status)?;
    Ok(want_event.then_some(event))
}

/// `clCreateUserEvent`: an event of `context` that completes when
/// [`set_user_event_status`] says so.
pub(crate) fn create_user_event(context: cl3::types::cl_context) -> Result<cl_event> {
    let rt = runtime()?;
    let mut status: i32 = 0;
    let event = rt.clCreateUserEvent(context, &mut status).ok_or_else(|| {
        Error::cl(
            "clCreateUserEvent",
            cl3::error_codes::DLOPEN_FUNCTION_NOT_AVAILABLE,
        )
    })?;
    check("clCreateUserEvent", Some(status))?;
    Ok(event)
}

/// `clSetUserEventStatus`: `CL_COMPLETE` (0) or a negative error code.
pub(crate) fn set_user_event_status(event: cl_event, status: i32) -> Result<()> {
    let rt = runtime()?;
    check("clSetUserEventStatus", rt.clSetUserEventStatus(event, status))
}

/// What a completion callback is called with: the event, its status, the user data.
pub(crate) type EventCallback = unsafe extern "C" fn(cl_event, i32, *mut c_void);

/// `clSetEventCallback` for `CL_COMPLETE`: `callback(event, status, data)` runs on a
/// driver thread once the command has completed or failed (status < 0).
pub(crate) fn set_complete_callback(
    event: cl_event,
    callback: EventCallback,
    data: *mut c_void,
) -> Result<()> {
    let rt = runtime()?;
    check(
        "clSetEventCallback",
        rt.clSetEventCallback(event, 0, Some(callback), data),
    )
}
