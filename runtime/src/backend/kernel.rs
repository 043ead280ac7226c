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
use crate::backend::context::{Context, ContextInner};
use crate::backend::program::{build_options, obtain, rebuild, Obtained, Origin};
use crate::backend::queue::{Command, Event, Queue, QueueInner};
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

/// One kernel argument.
#[derive(Debug, Clone, Copy)]
pub enum KernelArg {
    /// A scalar passed by value.
    Scalar(ScalarBits),
    /// A device buffer.
    Mem(cl_mem),
    /// `bytes` of `__local` memory allocated per work-group.
    Local(usize),
}

impl KernelArg {
    /// A `ulong` argument (lengths, sizes).
    #[inline]
    pub fn ulong(v: u64) -> Self {
        KernelArg::Scalar(ScalarBits { bits: v, size: 8 })
    }

    /// The cache identity of this argument: (kind, bits, size).
    #[inline]
    fn identity(&self) -> (u8, u64, usize) {
        match *self {
            KernelArg::Scalar(s) => (0, s.bits, s.size as usize),
            KernelArg::Mem(m) => (1, m as usize as u64, std::mem::size_of::<cl_mem>()),
            KernelArg::Local(b) => (2, b as u64, b),
        }
    }
}

/// Up to three work sizes (global or local).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    sizes: [usize; 3],
    len: u8,
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
    last_args: Vec<Option<(u8, u64, usize)>>,
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
        ctx: &ContextInner,
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
    fn num_args(&self) -> Result<u32> {
        self.lock().kernel.num_args().cl("clGetKernelInfo")
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
        ctx: &ContextInner,
        queue: &Arc<QueueInner>,
        cmd: Command<'_>,
        global: &[usize],
        local: Option<&[usize]>,
        args: &[KernelArg],
    ) -> Result<Option<Event>> {
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
            if last[i] == Some(id) {
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
            }
            .map_err(|e| explain(name, e, i))?;
            last[i] = Some(id);
        }
        queue.submit(cmd, |q, wait, want_event| {
            cl::enqueue_kernel(q, raw, global, local, wait, want_event)
        })
    }

    /// Replaces a kernel of a cached binary by one built from source.
    #[cold]
    fn rebuild_from_source(&mut self, ctx: &ContextInner, name: &str) -> Result<()> {
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

/// Where and how to launch a kernel: the work sizes, the queue, and events to wait for.
#[derive(Debug, Clone, Copy)]
pub struct LaunchOptions<'a> {
    /// Work-items per dimension.
    pub global: Dims,
    /// Work-group size (`None`: the driver chooses).
    pub local: Option<Dims>,
    /// The queue (`None`: the context's default queue).
    pub queue: Option<&'a Queue>,
    /// Events the launch must wait for, besides the dependencies tracked automatically.
    pub after: &'a [Event],
}

impl LaunchOptions<'_> {
    /// A launch over `global` work-items on the default queue.
    pub fn new(global: Dims) -> Self {
        LaunchOptions {
            global,
            local: None,
            queue: None,
            after: &[],
        }
    }
}

/// A kernel bound to a context: program built once, `cl_kernel` created once.
///
/// Cloning is cheap. `#[kernel]` wraps this in a typed launcher; most users never touch
/// it directly.
#[derive(Clone)]
pub struct Kernel {
    compiled: Arc<CompiledKernel>,
    ctx: Arc<ContextInner>,
    num_args: u32,
}

impl Kernel {
    /// Builds (once per context) and binds the kernel described by `source`.
    pub fn bind(ctx: &Context, source: &'static KernelSource) -> Result<Kernel> {
        let inner = &ctx.inner;
        for &d in source.dtypes {
            inner.check_dtype(d)?;
        }
        let key = (source.source.as_ptr() as usize, source.name);
        let mut cache = inner.static_kernels.lock().unwrap_or_else(|e| e.into_inner());
        let compiled = match cache.get(&key) {
            Some(k) => k.clone(),
            None => {
                let options = build_options(inner, false);
                let program = obtain(inner, source.name, source.source, options)?;
                let k = Arc::new(CompiledKernel::create(
                    inner,
                    program,
                    source.name,
                    source.source,
                    options,
                )?);
                let declared = k.num_args()?;
                if declared != source.num_args {
                    return Err(Error::InvalidLaunch {
                        kernel: source.name.to_string(),
                        reason: format!(
                            "the program declares {declared} arguments, the launcher passes {}",
                            source.num_args
                        ),
                    });
                }
                cache.insert(key, k.clone());
                k
            }
        };
        Ok(Kernel {
            compiled,
            ctx: inner.clone(),
            num_args: source.num_args,
        })
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.compiled.name
    }

    /// The context it is bound to.
    pub fn context(&self) -> Context {
        Context::from_inner(self.ctx.clone())
    }

    /// Enqueues the kernel on the default queue with raw `args` over `global` work-items
    /// (grouped by `local` if given) and returns without waiting. A global size with a
    /// zero dimension is a no-op.
    ///
    /// Buffers passed as raw [`KernelArg::Mem`] are not tracked: the launch is ordered
    /// after earlier work of the default queue only. Prefer [`Kernel::submit`] (what
    /// `#[kernel]` launchers call), which tracks the arrays it is given.
    #[inline]
    pub fn launch(&self, global: Dims, local: Option<Dims>, args: &[KernelArg]) -> Result<()> {
        let opts = LaunchOptions {
            local,
            ..LaunchOptions::new(global)
        };
        self.submit(&opts, args, &[], false).map(drop)
    }

    /// Enqueues the kernel as `opts` says, with `args` (every argument, in order) and the
    /// `arrays` among them (read-only or writable, as obtained), whose dependencies are
    /// tracked. Returns the launch's event if `want_event`, and never waits.
    #[inline]
    pub fn submit(
        &self,
        opts: &LaunchOptions<'_>,
        args: &[KernelArg],
        arrays: &[&ArrayArg],
        want_event: bool,
    ) -> Result<Option<Event>> {
        let (global, local) = (opts.global, opts.local);
        if args.len() != self.num_args as usize {
            return Err(self.invalid(format!(
                "{} arguments given, {} expected",
                args.len(),
                self.num_args
            )));
        }
        if let Some(l) = local {
            if l.len != global.len {
                return Err(self.invalid(format!(
                    "global size {:?} and local size {:?} have different dimensions",
                    global.as_slice(),
                    l.as_slice()
                )));
            }
            if let Some((g, l)) = global
                .as_slice()
                .iter()
                .zip(l.as_slice())
                .find(|(g, l)| **l == 0 || **g % **l != 0)
            {
                return Err(self.invalid(format!(
                    "each global size must be a multiple of the local size (OpenCL 1.2), got global {:?} local {:?} ({g} vs {l})",
                    global.as_slice(),
                    local.map(|l| l.as_slice().to_vec()).unwrap_or_default()
                )));
            }
            let per_dim = &self.ctx.device.max_work_item_sizes;
            if let Some((d, (l, max))) = l
                .as_slice()
                .iter()
                .zip(per_dim)
                .enumerate()
                .find(|(_, (l, max))| l > max)
            {
                return Err(self.invalid(format!(
                    "local size {l} in dimension {d} exceeds the device's CL_DEVICE_MAX_WORK_ITEM_SIZES {per_dim:?} ({max} there)"
                )));
            }
            if l.count() > self.ctx.device.max_work_group_size {
                return Err(self.invalid(format!(
                    "local size {:?} has {} work-items, the device allows at most {}",
                    l.as_slice(),
                    l.count(),
                    self.ctx.device.max_work_group_size
                )));
            }
        }
        // The work-item count must fit the device's size_t (`count` saturates at MAX).
        let bits = self.ctx.device.address_bits;
        let limit = if bits >= usize::BITS {
            usize::MAX
        } else {
            1usize << bits
        };
        if global.count() >= limit {
            return Err(self.invalid(format!(
                "global size {:?} has more work-items than the device's {bits}-bit size_t can count",
                global.as_slice()
            )));
        }
        let queue = match opts.queue {
            Some(q) => {
                q.check_context(&self.ctx, || self.op())?;
                &q.inner
            }
            None => self.ctx.queue(),
        };
        for (i, a) in arrays.iter().enumerate() {
            self.ctx.tag.check(
                &a.buffer.ctx.tag,
                || self.op(),
                || format!("array argument {} of {}", i + 1, arrays.len()),
            )?;
        }
        for e in opts.after {
            queue.check_event(e, || self.op())?;
        }
        let mut reads: smallvec::SmallVec<[&DeviceBuffer; 4]> = smallvec::SmallVec::new();
        let mut writes: smallvec::SmallVec<[&DeviceBuffer; 4]> = smallvec::SmallVec::new();
        for a in arrays {
            if a.writable {
                writes.push(&a.buffer);
            } else {
                reads.push(&a.buffer);
            }
        }
        let cmd = Command {
            reads: &reads,
            writes: &writes,
            after: opts.after,
            want_event,
        };
        if global.count() == 0 {
            // Nothing runs; a wanted event still means "after what the launch depends on".
            return queue.submit(cmd, |q, wait, want| {
                if want {
                    cl::enqueue_marker_after(q, wait).map(Some)
                } else if !wait.is_empty() {
                    cl::enqueue_barrier(q, wait).map(|_| None)
                } else {
                    Ok(None)
                }
            });
        }
        self.compiled.launch(
            &self.ctx,
            queue,
            cmd,
            global.as_slice(),
            local.as_ref().map(|l| l.as_slice()),
            args,
        )
    }

    /// The user's operation, as errors name it.
    fn op(&self) -> String {
        format!("launch of kernel {:?}", self.compiled.name)
    }

    fn invalid(&self, reason: String) -> Error {
        Error::InvalidLaunch {
            kernel: self.compiled.name.clone(),
            reason,
        }
    }
}
