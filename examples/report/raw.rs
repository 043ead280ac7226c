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
        Ok(self.kernels(src, &[name])?.remove(0))
    }

    /// The named kernels of one program, built once.
    pub fn kernels(&self, src: &str, names: &[&str]) -> R<Vec<Kernel>> {
        let mut p = Program::create_from_source(&self.ctx, src).map_err(e("program"))?;
        if p.build(&[self.device.id()], "-cl-std=CL1.2").is_err() {
            return Err(p.get_build_log(self.device.id()).unwrap_or_default());
        }
        let ks = names
            .iter()
            .map(|name| Kernel::create(&p, name).map_err(e("kernel")))
            .collect::<R<Vec<Kernel>>>()?;
        std::mem::forget(p); // the kernels keep the program alive; keep it simple here
        Ok(ks)
    }

    pub fn buffer_f32(&self, data: &[f32]) -> R<Buffer<cl_float>> {
        self.buffer(data)
    }

    pub fn buffer_i32(&self, data: &[i32]) -> R<Buffer<i32>> {
        self.buffer(data)
    }

    /// A buffer holding a copy of `data`.
    pub fn buffer<T: Copy>(&self, data: &[T]) -> R<Buffer<T>> {
        unsafe {
            Buffer::<T>::create(
                &self.ctx,
                CL_MEM_READ_WRITE | opencl3::memory::CL_MEM_COPY_HOST_PTR,
                data.len().max(1),
                data.as_ptr() as *mut c_void,
            )
        }
        .map_err(e("buffer"))
    }

    /// An uninitialized buffer of `len` elements.
    pub fn empty<T>(&self, len: usize) -> R<Buffer<T>> {
        unsafe { Buffer::<T>::create(&self.ctx, CL_MEM_READ_WRITE, len.max(1), ptr::null_mut()) }
            .map_err(e("buffer"))
    }

    /// A blocking read of a whole `i32` buffer.
    pub fn read_i32(&self, b: &Buffer<i32>, out: &mut [i32]) -> R<()> {
        self.read(b, out)
    }

    /// A blocking read of the first `out.len()` elements of a buffer.
    pub fn read<T>(&self, b: &Buffer<T>, out: &mut [T]) -> R<()> {
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

/// One read-only pass over `n4` float4s (grid-stride, nothing written unless the sum is a
/// value no test data gives): the fastest way to touch the bytes of a matrix once.
pub const READ4: &str = "__kernel void read4(__global const float4* a, __global float* out, const uint n4) {
    float4 acc = (float4)(0.0f);
    for (uint i = get_global_id(0); i < n4; i += get_global_size(0)) acc += a[i];
    float s = acc.x + acc.y + acc.z + acc.w;
    if (s == 1234567.0f) out[0] = s;
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

/// `out = 2 * x`: what lazycl's `2.0 * &x` computes, written by hand.
pub const SCALE2: &str = "__kernel void scale2(__global const float* x, __global float* out, const uint n) {
    uint i = get_global_id(0); if (i < n) out[i] = 2.0f * x[i];
}";

pub const SPIN: &str = "__kernel void spin(__global float* x, const uint iters) {
    float v = x[get_global_id(0)];
    for (uint i = 0; i < iters; i++) v = v * 0.9999f + 0.0001f;
    x[get_global_id(0)] = v;
}";

/// `#define REAL` (and the fp64 pragma) for a kernel source in `float` or `double`.
pub fn real_defines(dtype: lazycl::DType) -> &'static str {
    match dtype {
        lazycl::DType::F64 => "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#define REAL double\n",
        _ => "#define REAL float\n",
    }
}

/// One logistic-regression step (`REAL`, `LANES` defined before) on `n x d` features with
/// a weight vector of `d + 1` elements whose last is the bias: the residual
/// `r = sigmoid(X w[..d] + w[d]) - y` (`LANES` work-items per row, `256 / LANES` rows per
/// work-group, a local-memory tree reduction per row), the gradient `[X^T r, sum r]` (one
/// work-item per column and segment of rows, looping over the rows, column `d` being the
/// bias's, whose feature is 1; the `d + 1` columns of a segment padded to `dpad` so that
/// a work-group stays in one segment and neighbouring work-items read neighbouring
/// addresses), and the update `w -= lr (g / n + reg w)` (`reg` is 0 for the bias; one
/// work-group of 64 per weight, which first adds the segments' partial gradients in a
/// tree).
pub const LOGREG: &str = "
__kernel void logreg_residual(__global const REAL* x, __global const REAL* w,
                              __global const REAL* y, __global REAL* r,
                              const uint n, const uint d) {
    __local REAL part[256];
    const uint lid = get_local_id(0), lane = lid % LANES;
    const uint row = get_group_id(0) * (256 / LANES) + lid / LANES;
    REAL acc = 0;
    if (row < n) {
        __global const REAL* xr = x + (size_t)row * d;
        for (uint j = lane; j < d; j += LANES) acc += xr[j] * w[j];
    }
    part[lid] = acc;
    for (uint h = LANES / 2; h > 0; h >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lane < h) part[lid] += part[lid + h];
    }
    if (lane == 0 && row < n) {
        const REAL z = part[lid] + w[d];
        r[row] = (REAL)1 / ((REAL)1 + exp(-z)) - y[row];
    }
}

__kernel void logreg_grad(__global const REAL* x, __global const REAL* r, __global REAL* partial,
                          const uint n, const uint d, const uint dpad, const uint seg_rows,
                          const uint segs) {
    const uint s = get_global_id(0) / dpad, j = get_global_id(0) % dpad;
    const uint lo = s * seg_rows, hi = min(n, lo + seg_rows);
    REAL acc = 0;
    if (j < d) {
        for (uint i = lo; i < hi; i++) acc += x[(size_t)i * d + j] * r[i];
    } else if (j == d) {
        for (uint i = lo; i < hi; i++) acc += r[i];
    }
    if (j <= d) partial[j * segs + s] = acc;
}

__kernel void logreg_update(__global REAL* w, __global const REAL* partial,
                            __global const REAL* reg, const uint segs,
                            const REAL inv_n, const REAL lr) {
    __local REAL part[64];
    const uint j = get_group_id(0), lid = get_local_id(0);
    REAL g = 0;
    for (uint s = lid; s < segs; s += 64) g += partial[j * segs + s];
    part[lid] = g;
    for (uint h = 32; h > 0; h >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < h) part[lid] += part[lid + h];
    }
    if (lid == 0) w[j] = w[j] - (part[0] * inv_n + w[j] * reg[j]) * lr;
}
";

/// One Lloyd iteration on `D`-dimensional float points (`D`, `LANES` defined before):
/// the nearest centroid of each point (one work-item per point), per-centroid coordinate
/// sums and counts over segments of the points (one work-group of `LANES` per centroid and
/// segment, private accumulators, then a local-memory tree reduction per coordinate), and
/// the new centroids (one work-item per coordinate, summing the segments).
pub const KMEANS: &str = "
__kernel void km_assign(__global const float* x, __global const float* c,
                        __global uint* label, const uint n, const uint k) {
    const uint i = get_global_id(0);
    if (i >= n) return;
    float p[D];
    for (uint t = 0; t < D; t++) p[t] = x[(size_t)i * D + t];
    float best = INFINITY;
    uint arg = 0;
    for (uint j = 0; j < k; j++) {
        float s = 0.0f;
        for (uint t = 0; t < D; t++) {
            float diff = p[t] - c[j * D + t];
            s += diff * diff;
        }
        if (s < best) { best = s; arg = j; }
    }
    label[i] = arg;
}

__kernel void km_partial(__global const float* x, __global const uint* label,
                         __global float* partial, const uint n, const uint k, const uint seg_len) {
    __local float part[LANES];
    const uint j = get_group_id(0) % k, s = get_group_id(0) / k, lid = get_local_id(0);
    const uint lo = s * seg_len, hi = min(n, lo + seg_len);
    float acc[D + 1];
    for (uint t = 0; t <= D; t++) acc[t] = 0.0f;
    for (uint i = lo + lid; i < hi; i += LANES) {
        if (label[i] == j) {
            for (uint t = 0; t < D; t++) acc[t] += x[(size_t)i * D + t];
            acc[D] += 1.0f;
        }
    }
    for (uint t = 0; t <= D; t++) {
        part[lid] = acc[t];
        for (uint h = LANES / 2; h > 0; h >>= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid < h) part[lid] += part[lid + h];
        }
        if (lid == 0) partial[(s * k + j) * (D + 1) + t] = part[0];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

__kernel void km_update(__global float* c, __global const float* partial,
                        const uint k, const uint segs) {
    const uint g = get_global_id(0);
    if (g >= k * D) return;
    const uint j = g / D, t = g % D;
    float sum = 0.0f, count = 0.0f;
    for (uint s = 0; s < segs; s++) {
        sum += partial[(s * k + j) * (D + 1) + t];
        count += partial[(s * k + j) * (D + 1) + D];
    }
    if (count > 0.0f) c[g] = sum / count;
}
";

/// The normal log-likelihood and its gradient (`REAL`, `LANES` defined before): per
/// work-group sums of `x - mu` and `(x - mu)^2` (a grid-stride loop, then a local-memory
/// tree reduction), and one work-group that adds the partial sums and writes
/// `[logp, d/dmu, d/dsigma]`.
pub const GAUSSIAN: &str = "
__kernel void gauss_partial(__global const REAL* x, __global REAL* partial,
                            const uint n, const REAL mu) {
    __local REAL p1[LANES], p2[LANES];
    const uint lid = get_local_id(0), g = get_group_id(0), groups = get_num_groups(0);
    REAL a1 = 0, a2 = 0;
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) {
        REAL v = x[i] - mu;
        a1 += v;
        a2 += v * v;
    }
    p1[lid] = a1;
    p2[lid] = a2;
    for (uint h = LANES / 2; h > 0; h >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < h) { p1[lid] += p1[lid + h]; p2[lid] += p2[lid + h]; }
    }
    if (lid == 0) { partial[g] = p1[0]; partial[groups + g] = p2[0]; }
}

__kernel void gauss_finish(__global const REAL* partial, __global REAL* out, const uint groups,
                           const REAL c0, const REAL inv_var, const REAL inv_sigma3,
                           const REAL n_over_sigma) {
    __local REAL p1[LANES], p2[LANES];
    const uint lid = get_local_id(0);
    REAL a1 = 0, a2 = 0;
    for (uint g = lid; g < groups; g += LANES) { a1 += partial[g]; a2 += partial[groups + g]; }
    p1[lid] = a1;
    p2[lid] = a2;
    for (uint h = LANES / 2; h > 0; h >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < h) { p1[lid] += p1[lid + h]; p2[lid] += p2[lid + h]; }
    }
    if (lid == 0) {
        const REAL s1 = p1[0], s2 = p2[0];
        out[0] = s2 * (REAL)(-0.5) * inv_var + c0;
        out[1] = s1 * inv_var;
        out[2] = s2 * inv_sigma3 - n_over_sigma;
    }
}
";
