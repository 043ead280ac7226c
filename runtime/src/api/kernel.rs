//! [`Kernel`]: a `#[kernel]` bound to a context (program built once, `cl_kernel` created
//! once), and its launches: sizes and arguments checked, arrays tracked, then the
//! backend's hot path.

use std::sync::Arc;

use crate::api::queue::Queue;
use crate::backend::buffer::DeviceBuffer;
use crate::backend::cl;
use crate::backend::context::{Context, ContextInner, StaticKernelKey};
use crate::backend::kernel::{ArrayArg, CompiledKernel, Dims, KernelArg, KernelConstant, KernelSource};
use crate::backend::program::{build_options, obtain};
use crate::backend::queue::Event;
use crate::backend::submit::Command;
use crate::error::{Error, Result};

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
        Kernel::bind_with_constants(ctx, source, &[])
    }

    /// Like [`Kernel::bind`], with compile-time `constants` defined before the source
    /// (`#define name ((type)value)`): one program per set of values, each built once per
    /// context (`#[kernel]`'s `const N: usize` parameters).
    pub fn bind_with_constants(
        ctx: &Context,
        source: &'static KernelSource,
        constants: &[KernelConstant],
    ) -> Result<Kernel> {
        let inner = &ctx.inner;
        for &d in source.dtypes {
            inner.check_dtype(d)?;
        }
        let defines: String = constants.iter().map(KernelConstant::define).collect();
        let key = StaticKernelKey {
            source: source.source.as_ptr() as usize,
            name: source.name,
            defines,
        };
        let mut cache = inner.static_kernels.lock().unwrap_or_else(|e| e.into_inner());
        let compiled = match cache.get(&key) {
            Some(k) => k.clone(),
            None => {
                inner.check_extensions(source.name, source.source)?;
                let options = build_options(inner, false);
                let text = format!("{}{}", key.defines, source.source);
                let program = obtain(inner, source.name, &text, options)?;
                let k = Arc::new(CompiledKernel::create(
                    inner,
                    program,
                    source.name,
                    &text,
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
        self.check_sizes(global, local)?;
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

    /// `Ok` if the device can run `global` work-items in groups of `local`: equal ranks,
    /// whole groups (OpenCL 1.2), the device's per-dimension and total group limits, and a
    /// work-item count its `size_t` can hold.
    fn check_sizes(&self, global: Dims, local: Option<Dims>) -> Result<()> {
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
        Ok(())
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
