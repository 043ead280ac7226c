//! The raw-opencl3 baseline: the same device, its own context and queue, programs built
//! from hand-written OpenCL C, arguments set and kernels enqueued directly.

use std::ffi::c_void;
use std::ptr;

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context as ClContext;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use opencl3::types::{cl_event, cl_float, cl_mem};

pub struct Raw {
    pub ctx: ClContext,
    pub queue: CommandQueue,
    pub device: Device,
}

pub type R<T> = Result<T, String>;

fn e<E: std::fmt::Debug>(what: &'static str) -> impl Fn(E) -> String {
    move |err| format!("{what}: {err:?}")
}

impl Raw {
    /// Opens the device lazycl chose (same platform and device index).
    pub fn open(info: &lazycl::DeviceInfo) -> R<Raw> {
        let platforms = get_platforms().map_err(e("platforms"))?;
        let platform = platforms.get(info.platform_index).ok_or("platform index")?;
        let ids = platform.get_devices(CL_DEVICE_TYPE_ALL).map_err(e("devices"))?;
        let device = Device::new(*ids.get(info.device_index).ok_or("device index")?);
        let ctx = ClContext::from_device(&device).map_err(e("context"))?;
        #[allow(deprecated)]
        let queue = unsafe { CommandQueue::create(&ctx, device.id(), 0) }.map_err(e("queue"))?;
        Ok(Raw { ctx, queue, device })
    }

    pub fn kernel(&self, src: &str, name: &str) -> R<Kernel> {
        let mut p = Program::create_from_source(&self.ctx, src).map_err(e("program"))?;
        if p.build(&[self.device.id()], "-cl-std=CL1.2").is_err() {
            return Err(p.get_build_log(self.device.id()).unwrap_or_default());
        }
        let k = Kernel::create(&p, name).map_err(e("kernel"))?;
        std::mem::forget(p); // the kernel keeps the program alive; keep it simple here
        Ok(k)
    }

    pub fn buffer_f32(&self, data: &[f32]) -> R<Buffer<cl_float>> {
        let b = unsafe {
            Buffer::<cl_float>::create(
                &self.ctx,
                CL_MEM_READ_WRITE | opencl3::memory::CL_MEM_COPY_HOST_PTR,
                data.len().max(1),
                data.as_ptr() as *mut c_void,
            )
        }
        .map_err(e("buffer"))?;
        Ok(b)
    }

    pub fn buffer_i32(&self, data: &[i32]) -> R<Buffer<i32>> {
        unsafe {
            Buffer::<i32>::create(
                &self.ctx,
                CL_MEM_READ_WRITE | opencl3::memory::CL_MEM_COPY_HOST_PTR,
                data.len().max(1),
                data.as_ptr() as *mut c_void,
            )
        }
        .map_err(e("buffer"))
    }

    /// A blocking read of a whole `i32` buffer.
    pub fn read_i32(&self, b: &Buffer<i32>, out: &mut [i32]) -> R<()> {
        unsafe {
            self.queue
                .enqueue_read_buffer(b, opencl3::types::CL_BLOCKING, 0, out, &[])
        }
        .map(drop)
        .map_err(e("read"))
    }

    pub fn finish(&self) -> R<()> {
        self.queue.finish().map_err(e("finish"))
    }

    /// `clSetKernelArg` the opencl3 way.
    pub fn set_mem(&self, k: &Kernel, i: u32, m: cl_mem) -> R<()> {
        unsafe { k.set_arg(i, &m) }.map_err(e("set_arg"))
    }
    pub fn set<T>(&self, k: &Kernel, i: u32, v: &T) -> R<()> {
        unsafe { k.set_arg(i, v) }.map_err(e("set_arg"))
    }

    /// The raw enqueue without an event: `clEnqueueNDRangeKernel(..., NULL)`.
    pub fn enqueue_no_event(&self, k: &Kernel, global: usize, local: Option<usize>) -> R<()> {
        let rt = cl3::load_library()
            .as_ref()
            .map_err(|_| "no OpenCL loader".to_string())?;
        let g = [global];
        let l = local.map(|l| [l]);
        let status = rt.clEnqueueNDRangeKernel(
            self.queue.get(),
            k.get(),
            1,
            ptr::null(),
            g.as_ptr(),
            l.as_ref().map_or(ptr::null(), |l| l.as_ptr()),
            0,
            ptr::null(),
            ptr::null_mut::<cl_event>(),
        );
        match status {
            Some(0) => Ok(()),
            other => Err(format!("clEnqueueNDRangeKernel: {other:?}")),
        }
    }

    /// opencl3's usual path, which creates (and here releases) a `cl_event` per launch.
    pub fn enqueue_with_event(&self, k: &Kernel, global: usize) -> R<()> {
        let g = [global];
        let ev = unsafe {
            self.queue
                .enqueue_nd_range_kernel(k.get(), 1, ptr::null(), g.as_ptr(), ptr::null(), &[])
        }
        .map_err(e("enqueue"))?;
        drop(ev);
        Ok(())
    }
}

pub const COPY1: &str = "__kernel void copy1(__global const float* a, __global float* b, const uint n) {
    uint i = get_global_id(0); if (i < n) b[i] = a[i];
}";

pub const COPY4: &str = "__kernel void copy4(__global const float4* a, __global float4* b, const uint n4) {
    for (uint i = get_global_id(0); i < n4; i += get_global_size(0)) b[i] = a[i];
}";

/// The tour's 8-op chain written by hand: `tanh(((sqrt(|(x*1.5+2)*x - 0.25| + 1) * 3) / 7) - x)`.
pub const CHAIN8: &str = "__kernel void chain8(__global const float4* a, __global float4* b, const uint n4) {
    for (uint i = get_global_id(0); i < n4; i += get_global_size(0)) {
        float4 x = a[i];
        b[i] = tanh(((sqrt(fabs((x * 1.5f + 2.0f) * x - 0.25f) + 1.0f) * 3.0f) / 7.0f) - x);
    }
}";

pub const ADD_ONE: &str = "__kernel void add_one(__global float* x, const ulong n) {
    size_t i = get_global_id(0); if (i < n) x[i] += 1.0f;
}";

pub const SPIN: &str = "__kernel void spin(__global float* x, const uint iters) {
    float v = x[get_global_id(0)];
    for (uint i = 0; i < iters; i++) v = v * 0.9999f + 0.0001f;
    x[get_global_id(0)] = v;
}";
