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

/// A non-blocking `clEnqueueFillBuffer` of a 1, 4 or 8-byte pattern.
pub(crate) fn fill_buffer(queue: cl_command_queue, mem: cl_mem, pattern: &[u8], bytes: usize) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    let rt = runtime()?;
    // OpenCL copies the pattern at enqueue time; bytes is a multiple of its size.
    let status = {
        rt.clEnqueueFillBuffer(
            queue,
            mem,
            pattern.as_ptr() as *const c_void,
            pattern.len(),
            0,
            bytes,
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    };
    check("clEnqueueFillBuffer", status)
}

/// A non-blocking `clEnqueueCopyBuffer`.
pub(crate) fn copy_buffer(queue: cl_command_queue, src: cl_mem, dst: cl_mem, bytes: usize) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    let rt = runtime()?;
    // both buffers hold at least `bytes` bytes.
    let status = rt.clEnqueueCopyBuffer(queue, src, dst, 0, 0, bytes, 0, ptr::null(), ptr::null_mut());
    check("clEnqueueCopyBuffer", status)
}

/// `clFinish`.
pub(crate) fn finish(queue: cl_command_queue) -> Result<()> {
    let rt = runtime()?;
    // the queue handle is valid.
    check("clFinish", rt.clFinish(queue))
}

/// `clCreateBuffer`, optionally copying `host` at creation (which needs no queue and no wait).
pub(crate) fn create_buffer(
    context: cl3::types::cl_context,
    bytes: usize,
    host: Option<*const c_void>,
) -> std::result::Result<cl_mem, i32> {
    let flags = cl3::memory::CL_MEM_READ_WRITE
        | if host.is_some() {
            cl3::memory::CL_MEM_COPY_HOST_PTR
        } else {
            0
        };
    // `host`, when given, points to `bytes` readable bytes that OpenCL copies now.
    unsafe { cl3::memory::create_buffer(context, flags, bytes, host.unwrap_or(ptr::null()) as *mut c_void) }
}

/// `clReleaseMemObject`.
pub(crate) fn release_mem(mem: cl_mem) {
    // called once per created buffer, when its last owner lets go.
    unsafe {
        let _ = cl3::memory::release_mem_object(mem);
    }
}
