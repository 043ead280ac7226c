//! [`Context`]: one device, its queues, its caches and its counters.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use cl3::types::cl_context;
use opencl3::device::Device;

use crate::buffer::BufferPool;
use crate::cache::{CacheDir, DiskCache};
use crate::device::{devices, DeviceInfo, DeviceSelector};
use crate::dtype::DType;
use crate::error::{ClResultExt, Error, Result};
use crate::kernel::CompiledKernel;
use crate::queue::{Queue, QueueInner};
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
    pub(crate) counters: Arc<Counters>,
    pub(crate) pool: BufferPool,
    /// Kernels of `#[kernel]` functions, keyed by their static source's address and name.
    pub(crate) static_kernels: Mutex<HashMap<(usize, &'static str), Arc<CompiledKernel>>>,
    /// Fused kernels of the lazy graph, keyed by structure.
    pub(crate) fused_kernels: Mutex<rustc_hash::FxHashMap<Vec<u32>, Arc<crate::fuse::FusedKernel>>>,
    pub(crate) show_kernels: bool,
    /// Build `float` division and `sqrt` correctly rounded (asked for, and supported).
    pub(crate) precise_div_sqrt: bool,
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
        let q = Arc::new(QueueInner::new(u32::MAX, raw, self.counters.clone()));
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
    /// (default: the `LAZYCL_SHOW_KERNELS=1` environment variable).
    pub fn show_kernels(mut self, on: bool) -> Self {
        self.show_kernels = Some(on);
        self
    }

    /// Correctly rounded `f32` division and `sqrt`, as in Rust, on devices that support it
    /// (`-cl-fp32-correctly-rounded-divide-sqrt`; NVIDIA's and PoCL's do). Off by default:
    /// OpenCL then allows 2.5 ulp for `/` and 3 ulp for `sqrt`, and on the H200 a fused
    /// chain with one of each ran 8 % slower with it on.
    pub fn correctly_rounded_div_sqrt(mut self, on: bool) -> Self {
        self.precise_div_sqrt = on;
        self
    }

    /// Where built programs are cached on disk (default: [`CacheDir::FromEnv`]).
    pub fn program_cache(mut self, cache: CacheDir) -> Self {
        self.cache = cache;
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
            None => match std::env::var("LAZYCL_DEVICE") {
                Ok(text) => (
                    DeviceSelector::parse(&text).map_err(|_| no_match(&text, &list))?,
                    format!("LAZYCL_DEVICE={text}"),
                ),
                Err(_) => (DeviceSelector::Default, "the default device".to_string()),
            },
        };
        let info = selector.choose(&list, &request)?.clone();
        let show_kernels = self
            .show_kernels
            .unwrap_or_else(|| std::env::var("LAZYCL_SHOW_KERNELS").is_ok_and(|v| v == "1" || v == "true"));
        let precise_div_sqrt = self.precise_div_sqrt && info.correctly_rounded_div_sqrt;
        Context::open(info, show_kernels, precise_div_sqrt, &self.cache)
    }
}

fn no_match(request: &str, list: &[DeviceInfo]) -> Error {
    Error::NoMatchingDevice {
        request: format!("LAZYCL_DEVICE={request}"),
        available: crate::device::device_table(list),
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
        }
    }

    fn open(
        device: DeviceInfo,
        show_kernels: bool,
        precise_div_sqrt: bool,
        cache: &CacheDir,
    ) -> Result<Context> {
        let dev = Device::new(device.id);
        let cl_context = opencl3::context::Context::from_device(&dev).cl("clCreateContext")?;
        let counters = Arc::new(Counters::default());
        let default_queue = Arc::new(QueueInner::new(
            0,
            create_queue(&cl_context, &device)?,
            counters.clone(),
        ));
        let pool = BufferPool::new(device.global_mem_bytes);
        let disk_cache = DiskCache::new(cache, &device);
        Ok(Context {
            inner: Arc::new(ContextInner {
                device,
                counters,
                pool,
                static_kernels: Mutex::default(),
                fused_kernels: Mutex::default(),
                show_kernels,
                precise_div_sqrt,
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
