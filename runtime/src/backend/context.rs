//! [`Context`]: one device, its queues, its caches and its counters.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use cl3::types::cl_context;
use opencl3::device::Device;

use crate::backend::buffer::BufferPool;
use crate::backend::cache::{CacheDir, DiskCache};
use crate::backend::device::{devices, DeviceInfo, DeviceSelector};
use crate::backend::kernel::CompiledKernel;
use crate::backend::queue::{Queue, QueueInner};
use crate::dtype::DType;
use crate::error::{ClResultExt, Error, Result};
use crate::stats::{Counters, Stats, WaitReason};

/// A handle to one OpenCL device: cheap to clone (an `Arc` inside), `Send + Sync`.
///
/// Dropping the last handle (and the last array and queue made from it) waits for all
/// queued work.
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<ContextInner>,
}

pub(crate) struct ContextInner {
    pub(crate) device: DeviceInfo,
    /// This context's identity, which its queues (and their events) carry too.
    pub(crate) tag: ContextTag,
    /// What planning knows of the device (and the tuning switches of tests).
    pub(crate) profile: crate::profile::DeviceProfile,
    pub(crate) counters: Arc<Counters>,
    pub(crate) pool: BufferPool,
    /// Kernels of `#[kernel]` functions, keyed by their static source's address and name.
    pub(crate) static_kernels: Mutex<HashMap<(usize, &'static str), Arc<CompiledKernel>>>,
    /// Fused kernels of the lazy graph, keyed by structure.
    pub(crate) fused_kernels: Mutex<rustc_hash::FxHashMap<Vec<u32>, Arc<CompiledKernel>>>,
    pub(crate) show_kernels: bool,
    /// Build `float` division and `sqrt` correctly rounded (asked for, and supported).
    pub(crate) precise_div_sqrt: bool,
    /// Back-pressure bound of every queue ([`ContextBuilder::max_queued_commands`]).
    max_queued_commands: usize,
    pub(crate) disk_cache: DiskCache,
    /// The default queue (id 0).
    default_queue: Arc<QueueInner>,
    /// Every queue ever created, the default one first; each lives as long as the context.
    queues: Mutex<Vec<Arc<QueueInner>>>,
    /// A queue for uploads and for blocking reads of buffers no command has written
    /// (fresh uploads), so that they wait for nothing; created on first use.
    transfer_queue: std::sync::OnceLock<Arc<QueueInner>>,
    pub(crate) cl_context: opencl3::context::Context,
}

/// Which context an object belongs to: a number unique in the process (never reused, so
/// a freed context's number cannot match a new one) and a description for errors.
#[derive(Clone)]
pub(crate) struct ContextTag {
    id: u64,
    label: Arc<str>,
}

impl ContextTag {
    fn new(device: &DeviceInfo) -> ContextTag {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let label = format!(
            "context {id} (device {:?}, platform {:?})",
            device.name, device.platform_name
        );
        ContextTag {
            id,
            label: label.into(),
        }
    }

    /// Whether both belong to one context.
    #[inline]
    pub(crate) fn same(&self, other: &ContextTag) -> bool {
        self.id == other.id
    }

    /// `Ok` if `other` belongs to this context, else [`Error::ContextMismatch`] for the
    /// user's operation `op`, naming `what` (the object of the other context) and both
    /// contexts. Nothing is formatted unless the check fails.
    #[inline]
    pub(crate) fn check(
        &self,
        other: &ContextTag,
        op: impl FnOnce() -> String,
        what: impl FnOnce() -> String,
    ) -> Result<()> {
        if self.same(other) {
            return Ok(());
        }
        Err(Error::ContextMismatch {
            op: op(),
            expected: self.label.to_string(),
            found: format!("{} of {}", what(), other.label),
        })
    }
}

impl ContextInner {
    /// The default queue.
    pub(crate) fn queue(&self) -> &Arc<QueueInner> {
        &self.default_queue
    }
    /// The queue for uploads and for reading buffers that no command has written (see
    /// `transfer_queue`).
    pub(crate) fn transfer_queue(&self) -> Result<&Arc<QueueInner>> {
        if let Some(q) = self.transfer_queue.get() {
            return Ok(q);
        }
        let raw = create_queue(&self.cl_context, &self.device)?;
        let q = Arc::new(QueueInner::new(
            u32::MAX,
            raw,
            self.counters.clone(),
            self.tag.clone(),
            self.max_queued_commands,
        ));
        // Another thread may have won the race; its queue is kept and ours released.
        Ok(self.transfer_queue.get_or_init(|| q))
    }

    fn all_queues(&self) -> Vec<Arc<QueueInner>> {
        self.queues.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
    pub(crate) fn cl_context_handle(&self) -> cl_context {
        self.cl_context.get()
    }
    /// Errors unless the device can hold elements of `dtype`.
    pub(crate) fn check_dtype(&self, dtype: DType) -> Result<()> {
        if dtype == DType::F64 && !self.device.fp64 {
            return Err(Error::UnsupportedDtype {
                dtype,
                device: self.device.name.clone(),
            });
        }
        Ok(())
    }
}

impl Drop for ContextInner {
    fn drop(&mut self) {
        // Outstanding work may still use pooled buffers and kernels: wait for it first.
        for q in self.all_queues() {
            let _ = q.finish(WaitReason::Drop);
            q.forget_marker();
        }
        self.pool.clear();
    }
}

/// Creates an in-order command queue without profiling (the cheapest launches).
fn create_queue(
    ctx: &opencl3::context::Context,
    device: &DeviceInfo,
) -> Result<cl3::types::cl_command_queue> {
    #[allow(deprecated)]
    // SAFETY: the context and device are valid; properties 0 is an in-order queue.
    unsafe { cl3::command_queue::create_command_queue(ctx.get(), device.id, 0) }
        .map_err(|code| Error::cl("clCreateCommandQueue", code))
}

/// Chooses a device and options for a new [`Context`].
#[derive(Debug, Clone)]
pub struct ContextBuilder {
    selector: Option<DeviceSelector>,
    show_kernels: Option<bool>,
    precise_div_sqrt: bool,
    cache: CacheDir,
    max_queued_commands: usize,
    tuning: crate::profile::Tuning,
}

/// The default of [`ContextBuilder::max_queued_commands`]: enough that a launch loop never
/// waits for a device that keeps up (a GPU runs a few thousand small kernels in
/// milliseconds), few enough that a read after a long enqueue-only loop waits for
/// seconds of backlog at most, not minutes.
pub const DEFAULT_MAX_QUEUED_COMMANDS: usize = 4096;

/// The options a context is opened with, decided before it is.
struct Options {
    show_kernels: bool,
    precise_div_sqrt: bool,
    max_queued_commands: usize,
    tuning: crate::profile::Tuning,
}

impl ContextBuilder {
    /// Use this device instead of `LAZYCL_DEVICE` / the default choice.
    pub fn device(mut self, selector: DeviceSelector) -> Self {
        self.selector = Some(selector);
        self
    }

    /// Parse a selection in the `LAZYCL_DEVICE` syntax (`gpu`, `cpu`, `1:0`, `nvidia`).
    pub fn device_str(self, text: &str) -> Result<Self> {
        Ok(self.device(DeviceSelector::parse(text)?))
    }

    /// Print every generated kernel's source to stderr as it is built
    /// (default: the `LAZYCL_SHOW_KERNELS` switch, off when unset).
    pub fn show_kernels(mut self, on: bool) -> Self {
        self.show_kernels = Some(on);
        self
    }

    /// Correctly rounded `f32` division and `sqrt`, as in Rust, on devices that support it
    /// (`-cl-fp32-correctly-rounded-divide-sqrt`; NVIDIA's and PoCL's do). Off by default:
    /// OpenCL then allows 2.5 ulp for `/` and 3 ulp for `sqrt`, and the extra precision
    /// costs a fused chain with one of each measurable bandwidth on GPUs (BENCHMARKS.md).
    pub fn correctly_rounded_div_sqrt(mut self, on: bool) -> Self {
        self.precise_div_sqrt = on;
        self
    }

    /// Where built programs are cached on disk (default: [`CacheDir::FromEnv`]).
    pub fn program_cache(mut self, cache: CacheDir) -> Self {
        self.cache = cache;
        self
    }

    /// Back-pressure: the most commands one queue may hold that the device has not
    /// finished (default [`DEFAULT_MAX_QUEUED_COMMANDS`]; at least 1). Submitting past it
    /// waits for the oldest of them first (counted as `waits_backpressure`), so a loop that
    /// only enqueues cannot run arbitrarily far ahead of the device.
    pub fn max_queued_commands(mut self, commands: usize) -> Self {
        self.max_queued_commands = commands.max(1);
        self
    }

    /// Planning switches for tests that cover every kernel layout on any device.
    #[doc(hidden)]
    pub fn tuning(mut self, tuning: crate::profile::Tuning) -> Self {
        self.tuning = tuning;
        self
    }

    /// Opens the device.
    pub fn build(self) -> Result<Context> {
        let list = devices()?;
        let (selector, request) = match self.selector {
            Some(s) => {
                let r = format!("{s:?}");
                (s, r)
            }
            None => match crate::env::text("LAZYCL_DEVICE") {
                Ok(Some(text)) => (
                    DeviceSelector::parse(&text)
                        .map_err(|_| no_match(&format!("LAZYCL_DEVICE={text}"), &list))?,
                    format!("LAZYCL_DEVICE={text}"),
                ),
                Ok(None) => (DeviceSelector::Default, "the default device".to_string()),
                Err(Error::InvalidEnvironment { value, reason, .. }) => {
                    return Err(no_match(
                        &format!("LAZYCL_DEVICE={value:?}, which {reason}"),
                        &list,
                    ))
                }
                Err(e) => return Err(e),
            },
        };
        let info = selector.choose(&list, &request)?.clone();
        let show_kernels = match self.show_kernels {
            Some(on) => on,
            None => crate::env::switch("LAZYCL_SHOW_KERNELS")?.unwrap_or(false),
        };
        let options = Options {
            show_kernels,
            precise_div_sqrt: self.precise_div_sqrt && info.correctly_rounded_div_sqrt,
            max_queued_commands: self.max_queued_commands,
            tuning: self.tuning,
        };
        Context::open(info, options, &self.cache)
    }
}

fn no_match(request: &str, list: &[DeviceInfo]) -> Error {
    Error::NoMatchingDevice {
        request: request.to_string(),
        available: crate::backend::device::device_table(list),
    }
}

impl Context {
    /// Opens the device named by `LAZYCL_DEVICE`, else the first GPU, else the first device.
    pub fn new() -> Result<Context> {
        Context::builder().build()
    }

    /// A builder to choose the device in code.
    pub fn builder() -> ContextBuilder {
        ContextBuilder {
            selector: None,
            show_kernels: None,
            precise_div_sqrt: false,
            cache: CacheDir::FromEnv,
            max_queued_commands: DEFAULT_MAX_QUEUED_COMMANDS,
            tuning: Default::default(),
        }
    }

    fn open(device: DeviceInfo, options: Options, cache: &CacheDir) -> Result<Context> {
        let disk_cache = DiskCache::new(cache, &device)?;
        let dev = Device::new(device.id);
        let cl_context = opencl3::context::Context::from_device(&dev).cl("clCreateContext")?;
        let counters = Arc::new(Counters::default());
        let tag = ContextTag::new(&device);
        let default_queue = Arc::new(QueueInner::new(
            0,
            create_queue(&cl_context, &device)?,
            counters.clone(),
            tag.clone(),
            options.max_queued_commands,
        ));
        let pool = BufferPool::new(device.global_mem_bytes);
        Ok(Context {
            inner: Arc::new(ContextInner {
                profile: device.profile(options.tuning),
                device,
                tag,
                counters,
                pool,
                static_kernels: Mutex::default(),
                fused_kernels: Mutex::default(),
                show_kernels: options.show_kernels,
                precise_div_sqrt: options.precise_div_sqrt,
                max_queued_commands: options.max_queued_commands,
                disk_cache,
                queues: Mutex::new(vec![default_queue.clone()]),
                transfer_queue: std::sync::OnceLock::new(),
                default_queue,
                cl_context,
            }),
        })
    }

    /// The device this context runs on.
    pub fn device(&self) -> &DeviceInfo {
        &self.inner.device
    }

    /// A snapshot of the counters (programs built, launches, host waits, bytes moved, ...).
    pub fn stats(&self) -> Stats {
        self.inner.counters.snapshot()
    }

    /// Waits for every command queued so far on every queue (counted as an explicit wait).
    pub fn synchronize(&self) -> Result<()> {
        for q in self.inner.all_queues() {
            q.finish(WaitReason::Explicit)?;
        }
        Ok(())
    }

    /// The default queue, where `eval()`, `to_vec()`, fills and launches without `.on(..)`
    /// go.
    pub fn queue(&self) -> Queue {
        Queue {
            inner: self.inner.default_queue.clone(),
            ctx: self.inner.clone(),
        }
    }

    /// Creates another in-order queue on this context's device. Work on different queues
    /// may overlap; dependencies between them are added automatically. A queue lives as
    /// long as its context, so create the few you need once and reuse them.
    pub fn new_queue(&self) -> Result<Queue> {
        let raw = create_queue(&self.inner.cl_context, &self.inner.device)?;
        let mut queues = self.inner.queues.lock().unwrap_or_else(|e| e.into_inner());
        let inner = Arc::new(QueueInner::new(
            queues.len() as u32,
            raw,
            self.inner.counters.clone(),
            self.inner.tag.clone(),
            self.inner.max_queued_commands,
        ));
        queues.push(inner.clone());
        Ok(Queue {
            inner,
            ctx: self.inner.clone(),
        })
    }

    /// Whether two handles refer to the same context.
    pub fn same(&self, other: &Context) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    pub(crate) fn from_inner(inner: Arc<ContextInner>) -> Context {
        Context { inner }
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("device", &self.inner.device.name)
            .field("platform", &self.inner.device.platform_name)
            .finish()
    }
}
