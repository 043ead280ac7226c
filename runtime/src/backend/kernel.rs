//! Bound kernels and the launch hot path shared by `#[kernel]` and the lazy graph.
//!
//! A launch is: lock the kernel (`clSetKernelArg` on one `cl_kernel` is not thread-safe),
//! set the arguments whose bytes changed since the last launch, `clEnqueueNDRangeKernel`
//! (without an event unless one is asked for or another queue must wait), unlock. No
//! kernel creation, no info queries, no allocation.

use std::sync::{Arc, Mutex};

use cl3::types::{cl_kernel, cl_mem};
use opencl3::kernel::Kernel as ClKernel;
use opencl3::program::Program;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::cl;
use crate::backend::cl_context::ClContext;
use crate::backend::program::{rebuild, Obtained, Origin};
use crate::backend::queue::{Event, QueueInner};
use crate::backend::submit::Command;
use crate::dtype::{DType, ScalarBits};
use crate::error::{ClResultExt, Error, Result};
use crate::stats::Counters;

/// The OpenCL C source and name of a kernel, as `#[kernel]` generates them at compile time.
#[derive(Debug)]
pub struct KernelSource {
    /// The kernel function's name in the source.
    pub name: &'static str,
    /// The complete OpenCL C program.
    pub source: &'static str,
    /// Number of OpenCL arguments (a slice parameter counts two: pointer and length).
    pub num_args: u32,
    /// Element types the kernel uses (checked against the device at bind time).
    pub dtypes: &'static [DType],
}

/// A compile-time constant of a kernel's program (a `#[kernel]`'s `const N: usize`
/// parameter): `#define name ((cl_type)value)` before the source, one program per value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelConstant {
    /// The macro's name in the source.
    pub name: &'static str,
    /// Its OpenCL C type (`ulong`, `uint`, `int`, `long`).
    pub cl_type: &'static str,
    /// The value (an integer).
    pub value: i128,
}

impl KernelConstant {
    /// The `#define` line.
    pub(crate) fn define(&self) -> String {
        format!("#define {} (({}){})\n", self.name, self.cl_type, self.value)
    }
}

/// One kernel argument.
#[derive(Debug, Clone, Copy)]
pub enum KernelArg {
    /// A scalar passed by value.
    Scalar(ScalarBits),
    /// A device buffer.
    Mem(cl_mem),
    /// `bytes` of `__local` memory allocated per work-group.
    Local(usize),
    /// A plain-data struct passed by value (`#[derive(KernelStruct)]`).
    Struct(StructBytes),
}

/// The most bytes of a struct passed by value to a kernel.
pub const MAX_STRUCT_BYTES: usize = 64;

/// The bytes of a plain-data struct passed by value to a kernel, laid out as OpenCL C lays
/// out its `typedef` (`#[derive(KernelStruct)]` writes them field by field; padding is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StructBytes {
    bytes: [u8; MAX_STRUCT_BYTES],
    len: u8,
}

impl StructBytes {
    /// The bytes of a struct of `N` bytes (at most [`MAX_STRUCT_BYTES`]: a compile-time
    /// check).
    pub const fn from_array<const N: usize>(b: [u8; N]) -> StructBytes {
        const { assert!(N <= MAX_STRUCT_BYTES, "a kernel struct has at most 64 bytes") };
        let mut bytes = [0u8; MAX_STRUCT_BYTES];
        let mut i = 0;
        while i < N {
            bytes[i] = b[i];
            i += 1;
        }
        StructBytes { bytes, len: N as u8 }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

/// A plain-data struct that kernels take by value: `#[derive(lazycl::KernelStruct)]` on a
/// `#[repr(C)]` struct of scalar fields implements it (and checks at compile time that
/// Rust's layout is OpenCL C's).
pub trait KernelStruct: Copy {
    /// The struct's OpenCL C `typedef`.
    const CL_SOURCE: &'static str;
    /// Its bytes as a kernel argument.
    fn struct_bytes(&self) -> StructBytes;
}

impl KernelArg {
    /// A `ulong` argument (lengths, sizes).
    #[inline]
    pub fn ulong(v: u64) -> Self {
        KernelArg::Scalar(ScalarBits {
            bits: v.into(),
            size: 8,
        })
    }

    /// The cache identity of this argument: (kind, bits, size); none for a struct, which
    /// is set at every launch.
    #[inline]
    fn identity(&self) -> Option<(u8, u128, usize)> {
        match *self {
            KernelArg::Scalar(s) => Some((0, s.bits, s.size as usize)),
            KernelArg::Mem(m) => Some((1, m as usize as u128, std::mem::size_of::<cl_mem>())),
            KernelArg::Local(b) => Some((2, b as u128, b)),
            KernelArg::Struct(_) => None,
        }
    }
}

/// Up to three work sizes (global or local).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    sizes: [usize; 3],
    pub(crate) len: u8,
}

impl Dims {
    /// The sizes, one per dimension.
    pub fn as_slice(&self) -> &[usize] {
        &self.sizes[..self.len as usize]
    }
    /// Number of work-items (product of the sizes; `usize::MAX` if that overflows).
    pub fn count(&self) -> usize {
        self.as_slice()
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .unwrap_or(usize::MAX)
    }
}

impl From<usize> for Dims {
    fn from(n: usize) -> Self {
        Dims {
            sizes: [n, 1, 1],
            len: 1,
        }
    }
}
impl From<[usize; 1]> for Dims {
    fn from(d: [usize; 1]) -> Self {
        Dims {
            sizes: [d[0], 1, 1],
            len: 1,
        }
    }
}
impl From<[usize; 2]> for Dims {
    fn from(d: [usize; 2]) -> Self {
        Dims {
            sizes: [d[0], d[1], 1],
            len: 2,
        }
    }
}
impl From<[usize; 3]> for Dims {
    fn from(d: [usize; 3]) -> Self {
        Dims { sizes: d, len: 3 }
    }
}
impl From<(usize, usize)> for Dims {
    fn from(d: (usize, usize)) -> Self {
        Dims {
            sizes: [d.0, d.1, 1],
            len: 2,
        }
    }
}
impl From<(usize, usize, usize)> for Dims {
    fn from(d: (usize, usize, usize)) -> Self {
        Dims {
            sizes: [d.0, d.1, d.2],
            len: 3,
        }
    }
}

/// A `cl_kernel` created once, with the bytes of the arguments it was last given.
pub(crate) struct CompiledKernel {
    pub(crate) name: String,
    /// Locked for a whole launch: `clSetKernelArg` on one `cl_kernel` is not thread-safe.
    state: Mutex<KernelState>,
}

struct KernelState {
    kernel: ClKernel,
    // Keeps the program alive as long as the kernel.
    _program: Arc<Program>,
    last_args: Vec<Option<(u8, u128, usize)>>,
    /// For a kernel of a cached binary: what rebuilding it from source takes, should the
    /// driver refuse a launch (see [`crate::backend::program::rebuild`]).
    rebuild: Option<Rebuild>,
}

/// The source and options of a kernel loaded from a cached binary.
struct Rebuild {
    source: Box<str>,
    options: &'static str,
}

// SAFETY: the cl_kernel is only mutated (clSetKernelArg) under `state`'s lock.
unsafe impl Send for CompiledKernel {}
unsafe impl Sync for CompiledKernel {}

impl CompiledKernel {
    /// Creates kernel `name` of the program obtained for `source` with `options`.
    pub(crate) fn create(
        ctx: &ClContext,
        obtained: Obtained,
        name: &str,
        source: &str,
        options: &'static str,
    ) -> Result<Self> {
        let kernel = ClKernel::create(&obtained.program, name).cl("clCreateKernel")?;
        Counters::add(&ctx.counters.kernels_created, 1);
        let rebuild = (obtained.origin == Origin::Binary).then(|| Rebuild {
            source: source.into(),
            options,
        });
        Ok(CompiledKernel {
            name: name.to_string(),
            state: Mutex::new(KernelState {
                kernel,
                _program: Arc::new(obtained.program),
                last_args: Vec::new(),
                rebuild,
            }),
        })
    }

    /// `CL_KERNEL_NUM_ARGS`.
    pub(crate) fn num_args(&self) -> Result<u32> {
        self.lock().kernel.num_args().cl("clGetKernelInfo")
    }

    /// `CL_KERNEL_WORK_GROUP_SIZE` on `ctx`'s device: the largest work-group this kernel
    /// can be launched with (smaller than the device's where it needs many registers).
    pub(crate) fn max_group(&self, ctx: &ClContext) -> Result<usize> {
        self.lock()
            .kernel
            .get_work_group_size(ctx.device.id)
            .cl("clGetKernelWorkGroupInfo")
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, KernelState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets changed arguments and submits `cmd` to `queue`; the hot path. A kernel of a
    /// cached binary that the driver refuses is rebuilt from source once and launched
    /// again (the binary is deleted and counted as `programs_rejected`).
    #[inline]
    pub(crate) fn launch(
        &self,
        ctx: &ClContext,
        queue: &Arc<QueueInner>,
        cmd: Command<'_>,
        global: &[usize],
        local: Option<&[usize]>,
        args: &[KernelArg],
    ) -> Result<Option<Event>> {
        // Before the kernel's lock: a job of this thread may launch this kernel too
        // (`backend::dispatch`; then `submit`'s settle finds nothing left to wait for).
        queue.jobs.settle()?;
        let mut st = self.lock();
        let event = match st.launch(&self.name, queue, cmd, global, local, args) {
            Err(e) if st.rebuild.is_some() && refused_kernel(&e) => {
                st.rebuild_from_source(ctx, &self.name)?;
                st.launch(&self.name, queue, cmd, global, local, args)?
            }
            other => other?,
        };
        drop(st);
        Counters::add(&queue.counters.kernels_launched, 1);
        Ok(event)
    }
}

impl KernelState {
    fn launch(
        &mut self,
        name: &str,
        queue: &Arc<QueueInner>,
        cmd: Command<'_>,
        global: &[usize],
        local: Option<&[usize]>,
        args: &[KernelArg],
    ) -> Result<Option<Event>> {
        let raw: cl_kernel = self.kernel.get();
        let last = &mut self.last_args;
        if last.len() < args.len() {
            last.resize(args.len(), None);
        }
        for (i, arg) in args.iter().enumerate() {
            let id = arg.identity();
            if id.is_some() && last[i] == id {
                continue;
            }
            // Forget the cached value first: if the call fails the argument is unknown.
            last[i] = None;
            match *arg {
                KernelArg::Scalar(s) => {
                    let bytes = s.bytes();
                    cl::set_kernel_arg(raw, i as u32, s.size as usize, bytes.as_ptr().cast())
                }
                KernelArg::Mem(m) => cl::set_kernel_arg(
                    raw,
                    i as u32,
                    std::mem::size_of::<cl_mem>(),
                    (&m as *const cl_mem).cast(),
                ),
                KernelArg::Local(bytes) => cl::set_kernel_arg(raw, i as u32, bytes, std::ptr::null()),
                KernelArg::Struct(s) => {
                    let bytes = s.as_slice();
                    cl::set_kernel_arg(raw, i as u32, bytes.len(), bytes.as_ptr().cast())
                }
            }
            .map_err(|e| explain(name, e, i))?;
            last[i] = id;
        }
        queue.submit(cmd, |q, wait, want_event| {
            cl::enqueue_kernel(q, raw, global, local, wait, want_event)
        })
    }

    /// Replaces a kernel of a cached binary by one built from source.
    #[cold]
    fn rebuild_from_source(&mut self, ctx: &ClContext, name: &str) -> Result<()> {
        let Some(r) = self.rebuild.take() else {
            return Ok(());
        };
        let program = rebuild(ctx, name, &r.source, r.options)?;
        self.kernel = ClKernel::create(&program, name).cl("clCreateKernel")?;
        Counters::add(&ctx.counters.kernels_created, 1);
        self._program = Arc::new(program);
        self.last_args.clear();
        Ok(())
    }
}

/// Whether the driver refused the kernel itself: its arguments (`clSetKernelArg`) or the
/// launch (`clEnqueueNDRangeKernel`). Only then did nothing run, and a rebuilt kernel may
/// be launched again; any other error (a dependency, back-pressure) comes after the
/// enqueue or has nothing to do with the binary.
fn refused_kernel(e: &Error) -> bool {
    matches!(
        e,
        Error::InvalidLaunch { .. }
            | Error::Cl {
                call: "clEnqueueNDRangeKernel",
                ..
            }
    )
}

fn explain(name: &str, e: Error, index: usize) -> Error {
    match e {
        Error::Cl { name: code, .. } => Error::InvalidLaunch {
            kernel: name.to_string(),
            reason: format!("clSetKernelArg for argument {index} failed with {code}"),
        },
        other => other,
    }
}

/// A materialized array's buffer and length, ready to be passed to a kernel, and whether
/// the kernel may write it.
pub struct ArrayArg {
    pub(crate) buffer: Arc<DeviceBuffer>,
    pub(crate) len: usize,
    pub(crate) writable: bool,
}

impl ArrayArg {
    /// The buffer argument (`__global T*`).
    #[inline]
    pub fn mem(&self) -> KernelArg {
        KernelArg::Mem(self.buffer.mem())
    }
    /// The length argument (`ulong`).
    #[inline]
    pub fn len(&self) -> KernelArg {
        KernelArg::ulong(self.len as u64)
    }
    /// Whether the array is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
