//! Host time per launch: a bound `#[kernel]` against raw opencl3 on a kernel created once
//! (`clSetKernelArg` + `clEnqueueNDRangeKernel`, with and without an event), on the
//! default device. `cargo bench --bench launch`; figures in RESULTS.md.
//!
//! Each iteration enqueues one launch; the queue is drained outside the timed region every
//! 1,000 launches so that it never fills.

use std::ffi::c_void;
use std::ptr;

use criterion::{criterion_group, criterion_main, Criterion};
use lazycl::prelude::*;
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context as ClContext;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::platform::get_platforms;
use opencl3::program::Program;

#[kernel]
fn add_one(x: &mut [f32]) {
    let i = global_id(0);
    if i < x.len() {
        x[i] += 1.0;
    }
}

const N: usize = 1024;

struct Raw {
    queue: CommandQueue,
    kernel: Kernel,
    _buffer: Buffer<f32>,
    _ctx: ClContext,
}

fn raw(info: &lazycl::DeviceInfo) -> Raw {
    let platform = get_platforms().expect("platforms")[info.platform_index];
    let id = platform.get_devices(CL_DEVICE_TYPE_ALL).expect("devices")[info.device_index];
    let device = Device::new(id);
    let ctx = ClContext::from_device(&device).expect("context");
    #[allow(deprecated)]
    let queue = unsafe { CommandQueue::create(&ctx, id, 0) }.expect("queue");
    let mut program = Program::create_from_source(&ctx, add_one::SOURCE).expect("program");
    program.build(&[id], "-cl-std=CL1.2").expect("build");
    let kernel = Kernel::create(&program, "add_one").expect("kernel");
    let data = vec![0.0f32; N];
    let buffer = unsafe {
        Buffer::<f32>::create(
            &ctx,
            CL_MEM_READ_WRITE | opencl3::memory::CL_MEM_COPY_HOST_PTR,
            N,
            data.as_ptr() as *mut c_void,
        )
    }
    .expect("buffer");
    unsafe {
        kernel.set_arg(0, &buffer.get()).expect("arg");
        kernel.set_arg(1, &(N as u64)).expect("arg");
    }
    Raw {
        queue,
        kernel,
        _buffer: buffer,
        _ctx: ctx,
    }
}

fn launches(c: &mut Criterion) {
    let ctx = Context::new().expect("an OpenCL device");
    let mut x = ctx.zeros::<f32>(N).expect("zeros");
    let k = add_one::bind(&ctx).expect("bind");
    let r = raw(ctx.device());
    let rt = cl3::load_library().as_ref().expect("loader");
    let mut group = c.benchmark_group(format!("launch on {}", ctx.device().name));
    let mut count = 0u32;
    group.bench_function("lazycl bound #[kernel]", |b| {
        b.iter(|| {
            k.global(N).launch(&mut x).expect("launch");
            count += 1;
            if count.is_multiple_of(1000) {
                ctx.synchronize().expect("sync");
            }
        })
    });
    let g = [N];
    group.bench_function("raw opencl3, no event", |b| {
        b.iter(|| {
            unsafe { r.kernel.set_arg(0, &r._buffer.get()) }.expect("arg");
            let status = rt.clEnqueueNDRangeKernel(
                r.queue.get(),
                r.kernel.get(),
                1,
                ptr::null(),
                g.as_ptr(),
                ptr::null(),
                0,
                ptr::null(),
                ptr::null_mut(),
            );
            assert_eq!(status, Some(0));
            count += 1;
            if count.is_multiple_of(1000) {
                r.queue.finish().expect("finish");
            }
        })
    });
    group.bench_function("raw opencl3, with event (its usual path)", |b| {
        b.iter(|| {
            unsafe { r.kernel.set_arg(0, &r._buffer.get()) }.expect("arg");
            let ev = unsafe {
                r.queue
                    .enqueue_nd_range_kernel(r.kernel.get(), 1, ptr::null(), g.as_ptr(), ptr::null(), &[])
            }
            .expect("enqueue");
            drop(ev);
            count += 1;
            if count.is_multiple_of(1000) {
                r.queue.finish().expect("finish");
            }
        })
    });
    group.finish();
    // The counters of a fresh context for 10,000 launches of one kernel.
    let fresh = Context::new().expect("an OpenCL device");
    let before = fresh.stats();
    let mut y = fresh.zeros::<f32>(N).expect("zeros");
    let k = add_one::bind(&fresh).expect("bind");
    for _ in 0..10_000 {
        k.global(N).launch(&mut y).expect("launch");
    }
    let d = fresh.stats() - before;
    let v = y.to_vec().expect("read");
    assert_eq!(v[0], 10_000.0);
    eprintln!(
        "10,000 launches: {} program built (+{} loaded from the disk cache), {} kernel created, {} launched, \
         {} host waits before the final read",
        d.programs_built, d.programs_loaded, d.kernels_created, d.kernels_launched, d.host_waits
    );
}

criterion_group!(benches, launches);
criterion_main!(benches);
