//! [`Context`]: one device, its queues, its caches and its counters.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use opencl3::device::Device;

use crate::backend::cache::{CacheDir, DiskCache};
use crate::backend::cl_context::ClContext;
use crate::backend::device::{DeviceInfo, DeviceType};
use crate::backend::dispatch::{Dispatcher, Jobs, Waits};
use crate::backend::dispatch_mode::Dispatch;
use crate::backend::kernel::CompiledKernel;
use crate::backend::memory::DeviceMemory;
use crate::backend::pool::BufferPool;
use crate::backend::queue::QueueInner;
use crate::backend::tag::ContextTag;
use crate::backend::tile_table::{TileEntry, TileState, TileTable};
use crate::error::{ClResultExt, Error, Result};
use crate::layout::GemmTile;
use crate::stats::{Counters, WaitReason};

/// The name of the disk cache's table of GEMM tiles.
const TILE_TABLE: &str = "gemm-tiles";

/// A handle to one OpenCL device: cheap to clone (an `Arc` inside), `Send + Sync`.
///
/// Every array, queue and kernel belongs to one context, and the context creates them:
/// uploads ([`array`](Context::array), [`from_slice`](Context::from_slice)), fills
/// ([`zeros`](Context::zeros), [`full`](Context::full)), random arrays, queues. Dropping
/// the last handle (and the last array and queue made from it) waits for all queued work.
///
/// ```
/// use lazycl::prelude::*;
///
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?; // LAZYCL_DEVICE, else the first GPU, else the first device
/// println!("running on {} ({})", ctx.device().name, ctx.device().platform_name);
///
/// let x = ctx.from_slice(&[1.0f32, 2.0, 3.0])?; // an upload
/// let y = ctx.full(3, 0.5f32)?; // a fill on the device
/// assert_eq!((&x * &y).to_vec()?, [0.5, 1.0, 1.5]);
/// assert!(ctx.stats().kernels_launched >= 1); // what the context did so far
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Context {
    pub(crate) inner: Arc<ContextInner>,
}

/// A `#[kernel]` built in a context: its source's address and name, and the `#define`s of
/// the constants it was bound with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct StaticKernelKey {
    pub(crate) source: usize,
    pub(crate) name: &'static str,
    pub(crate) defines: String,
}

/// The context proper: the device's OpenCL context and what every object made in it
/// needs (`cl`, which buffers, programs and kernels hold), its queues, and the caches of
/// bound kernels. Reads through to `cl` (`ctx.device`, `ctx.counters`, ...).
pub(crate) struct ContextInner {
    pub(crate) cl: Arc<ClContext>,
    /// What planning knows of the device (and the tuning switches of tests).
    pub(crate) profile: crate::profile::DeviceProfile,
    /// Kernels of `#[kernel]` functions, keyed by their static source's address and name
    /// and the constants they were bound with.
    pub(crate) static_kernels: Mutex<HashMap<StaticKernelKey, Arc<CompiledKernel>>>,
    /// Fused kernels of the lazy graph, keyed by structure.
    pub(crate) fused_kernels: Mutex<rustc_hash::FxHashMap<Vec<u32>, Arc<CompiledKernel>>>,
    /// Planned flushes, by their graph's signature: kept and read by `exec::replay`, and
    /// opaque here (the backend sits below planning).
    pub(crate) replays: Mutex<Replays>,
    /// The GEMM tiles chosen on this device, by shape class (its words), and what is
    /// known of each: read from the disk cache on first use (`None` until then).
    gemm_tiles: Mutex<Option<TileTable>>,
    /// Back-pressure bound of every queue ([`ContextBuilder::max_queued_commands`]).
    max_queued_commands: usize,
    /// The default queue (id 0).
    default_queue: Arc<QueueInner>,
    /// The queues made so far that are still alive, and the next queue's id.
    queues: Mutex<Queues>,
    /// A queue for uploads and for blocking reads of buffers no command has written
    /// (fresh uploads), so that they wait for nothing; created on first use.
    transfer_queue: std::sync::OnceLock<Arc<QueueInner>>,
    /// When building programs says so on stderr.
    pub(crate) build_notice: BuildNotice,
    /// Where each flush that builds a kernel writes its picture (`LAZYCL_DUMP_DOT`,
    /// `ContextBuilder::dump_dot`; written by exec).
    pub(crate) dump_dot: Option<std::path::PathBuf>,
    /// A multi-device context's devices (`Context::multi`): this context only records
    /// (its own device is the first one's, opened once more), and every array it makes
    /// lives in parts on these contexts. `None` for a plain context.
    pub(crate) multi: Option<Multi>,
    /// Where `eval()` flushes ([`ContextBuilder::dispatch`](crate::ContextBuilder::dispatch)),
    /// resolved for the device: never `Auto`.
    pub(crate) dispatch: Dispatch,
    /// The dispatch thread and the jobs handed to it (`backend::dispatch`).
    dispatcher: Dispatcher,
    /// How many gradient recordings (`value_and_grad`) are running on this context: while
    /// any is, materialized nodes keep their operation ([`ContextInner::keeps_recipes`]).
    recordings: std::sync::atomic::AtomicUsize,
}

/// A gradient recording on a context, while it lives: nodes materialized meanwhile keep
/// their operations ([`ContextInner::keeps_recipes`]).
pub(crate) struct Recording(Arc<ContextInner>);

impl Recording {
    /// Starts one on `ctx` (and on a multi-device context's devices).
    pub(crate) fn start(ctx: &Arc<ContextInner>) -> Recording {
        ctx.recordings.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Recording(ctx.clone())
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.0
            .recordings
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The devices of a multi-device context and how its arrays' rows are shared among them.
pub(crate) struct Multi {
    /// One plain context per device, in the order the selection named them.
    pub(crate) parts: Vec<Arc<ContextInner>>,
    /// Each device's share of an array's rows (positive; they need not add up to 1).
    pub(crate) weights: Vec<f64>,
    /// Per device, a queue of its own for the work that waits for another device: the
    /// two halves of a copy between devices and the combine of partial results. So a
    /// device's default queue never stalls behind another device's latency; what reads
    /// the copies there waits for them through their buffers' records.
    pub(crate) bridges: Vec<Arc<QueueInner>>,
}

/// A context's queues, held weakly: a queue lives while its user's handles, events or
/// buffers' records name it (the default queue also while the context lives), not for
/// as long as the context does. Dead entries are dropped whenever a queue is made.
struct Queues {
    live: Vec<Weak<QueueInner>>,
    /// Ids are never reused: buffers' records tell queues apart by id.
    next_id: u32,
}

/// When a context says that building programs is taking a while: once the build phase of
/// a flush has run for `after` (`None`: never, the context is quiet), and only the first
/// time (`given`).
pub(crate) struct BuildNotice {
    pub(crate) after: Option<std::time::Duration>,
    pub(crate) given: std::sync::atomic::AtomicBool,
}

impl std::ops::Deref for ContextInner {
    type Target = ClContext;
    fn deref(&self) -> &ClContext {
        &self.cl
    }
}

/// Values kept by the words of a signature, bounded: when a new one would pass
/// [`Replays::MAX_ENTRIES`] entries or [`Replays::MAX_WORDS`] words of signatures, all
/// are forgotten (a program that keeps making new structures gains nothing from them).
#[derive(Default)]
pub(crate) struct Replays {
    entries: rustc_hash::FxHashMap<Vec<u64>, Arc<dyn std::any::Any + Send + Sync>>,
    words: usize,
}

impl Replays {
    pub(crate) const MAX_ENTRIES: usize = 512;
    pub(crate) const MAX_WORDS: usize = 1 << 22;

    pub(crate) fn get(&self, signature: &[u64]) -> Option<Arc<dyn std::any::Any + Send + Sync>> {
        self.entries.get(signature).cloned()
    }

    pub(crate) fn insert(&mut self, signature: Vec<u64>, value: Arc<dyn std::any::Any + Send + Sync>) {
        if signature.len() > Self::MAX_WORDS {
            return;
        }
        if self.entries.len() >= Self::MAX_ENTRIES || self.words + signature.len() > Self::MAX_WORDS {
            self.entries.clear();
            self.words = 0;
        }
        let len = signature.len();
        if self.entries.insert(signature, value).is_none() {
            self.words += len;
        }
    }
}

/// The options a context is opened with, decided before it is.
pub(crate) struct Options {
    pub(crate) show_kernels: bool,
    /// How long a build phase runs before the context says so (`None`: never).
    pub(crate) build_notice_after: Option<std::time::Duration>,
    pub(crate) precise_div_sqrt: bool,
    pub(crate) max_queued_commands: usize,
    /// [`ContextBuilder::spare_buffers`](crate::ContextBuilder::spare_buffers).
    pub(crate) spare_buffers: usize,
    /// [`ContextBuilder::memory_limit`](crate::ContextBuilder::memory_limit) (`None`: the
    /// default for the device, [`default_memory_limit`]).
    pub(crate) memory_limit: Option<u64>,
    pub(crate) tuning: crate::profile::Tuning,
    pub(crate) dump_dot: Option<std::path::PathBuf>,
    pub(crate) dispatch: Dispatch,
}

impl ContextInner {
    /// Opens `device` with `options`: its OpenCL context, default queue, pool and caches.
    /// A multi-device context also gets its devices' contexts (`multi`).
    pub(crate) fn open(
        device: DeviceInfo,
        options: &Options,
        cache: &CacheDir,
        multi: Option<Multi>,
    ) -> Result<Arc<ContextInner>> {
        let disk_cache = DiskCache::new(cache, &device)?;
        let dev = Device::new(device.id);
        let cl_context = opencl3::context::Context::from_device(&dev).cl("clCreateContext")?;
        let counters = Arc::new(Counters::default());
        let tag = ContextTag::new(&device);
        let device_type = device.device_type;
        let waits = match device_type {
            DeviceType::Cpu => Waits::Sleep,
            _ => Waits::Poll,
        };
        let dispatcher = Dispatcher::new(counters.clone(), waits);
        let memory = DeviceMemory::new(
            options
                .memory_limit
                .unwrap_or_else(|| default_memory_limit(device.global_mem_bytes)),
        );
        let default_queue = Arc::new(QueueInner::new(
            0,
            create_queue(&cl_context, &device)?,
            counters.clone(),
            tag.clone(),
            dispatcher.jobs.clone(),
            options.max_queued_commands,
            memory.clone(),
        ));
        let pool = BufferPool::new(memory.clone(), options.spare_buffers, counters.clone());
        Ok(Arc::new(ContextInner {
            profile: device.profile(options.tuning),
            cl: Arc::new(ClContext {
                device,
                tag,
                counters,
                memory,
                pool,
                show_kernels: options.show_kernels,
                precise_div_sqrt: options.precise_div_sqrt,
                disk_cache,
                cl_context,
            }),
            static_kernels: Mutex::default(),
            fused_kernels: Mutex::default(),
            replays: Mutex::default(),
            gemm_tiles: Mutex::default(),
            max_queued_commands: options.max_queued_commands,
            queues: Mutex::new(Queues {
                live: vec![Arc::downgrade(&default_queue)],
                next_id: 1,
            }),
            transfer_queue: std::sync::OnceLock::new(),
            default_queue,
            build_notice: BuildNotice {
                after: options.build_notice_after,
                given: Default::default(),
            },
            dump_dot: options.dump_dot.clone(),
            multi,
            dispatch: options.dispatch.resolve(device_type),
            dispatcher,
            recordings: Default::default(),
        }))
    }

    /// Whether a node materialized now keeps its operation, for a gradient to reach
    /// through it: while a gradient recording runs ([`Recording`]).
    pub(crate) fn keeps_recipes(&self) -> bool {
        self.recordings.load(std::sync::atomic::Ordering::Relaxed) > 0
    }

    /// The entry of GEMM shape class `class` in this device's table of tiles (chosen in
    /// this process, or read from the disk cache's table, which another process wrote).
    pub(crate) fn tile_entry(&self, class: &str) -> Option<TileEntry> {
        let mut tiles = self.gemm_tiles.lock().unwrap_or_else(|e| e.into_inner());
        tiles.get_or_insert_with(|| self.read_tiles()).get(class)
    }

    /// Records `tile` for shape class `class` with what is known of it, in memory and in
    /// the disk cache's table (merged with what other processes wrote there meanwhile).
    pub(crate) fn set_tile(&self, class: &str, tile: GemmTile, state: TileState) {
        let mut tiles = self.gemm_tiles.lock().unwrap_or_else(|e| e.into_inner());
        let table = tiles.get_or_insert_with(|| self.read_tiles());
        table.merge(self.read_tiles(), class);
        table.set(class, TileEntry { tile, state });
        self.cl.disk_cache.write_table(TILE_TABLE, &table.render());
    }

    /// The tiles table of the disk cache (empty without one; lines that are not entries
    /// skipped).
    fn read_tiles(&self) -> TileTable {
        TileTable::parse(&self.cl.disk_cache.read_table(TILE_TABLE).unwrap_or_default())
    }

    /// The file of the disk cache's table of GEMM tiles and the line it starts with.
    pub(crate) fn tile_table_file(&self) -> Option<(std::path::PathBuf, String)> {
        self.cl.disk_cache.table_file(TILE_TABLE)
    }

    /// The jobs this context's `eval()`s handed to its dispatch thread.
    pub(crate) fn jobs(&self) -> &Jobs {
        &self.dispatcher.jobs
    }

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
            self.jobs().clone(),
            self.max_queued_commands,
            self.memory.clone(),
        ));
        // Another thread may have won the race; its queue is kept and ours released.
        Ok(self.transfer_queue.get_or_init(|| q))
    }

    /// Creates another in-order queue, alive while something names it (see [`Queues`]).
    pub(crate) fn new_queue(&self) -> Result<Arc<QueueInner>> {
        let mut queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        let id = queues.next_id;
        // u32::MAX is the transfer queue's; a context that made all the others has run
        // out of queue ids.
        if id == u32::MAX {
            return Err(Error::cl(
                "clCreateCommandQueue",
                cl3::error_codes::CL_OUT_OF_RESOURCES,
            ));
        }
        let raw = create_queue(&self.cl_context, &self.device)?;
        let inner = Arc::new(QueueInner::new(
            id,
            raw,
            self.counters.clone(),
            self.tag.clone(),
            self.jobs().clone(),
            self.max_queued_commands,
            self.memory.clone(),
        ));
        queues.next_id += 1;
        queues.live.retain(|q| q.strong_count() > 0);
        queues.live.push(Arc::downgrade(&inner));
        Ok(inner)
    }

    /// The queues alive now, the default one first.
    pub(crate) fn all_queues(&self) -> Vec<Arc<QueueInner>> {
        let queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        queues.live.iter().filter_map(Weak::upgrade).collect()
    }
}

impl Drop for ContextInner {
    fn drop(&mut self) {
        // Outstanding work may still use pooled buffers and kernels: wait for it first.
        // (A queue nothing names any more had no command recorded in a buffer still in
        // use: OpenCL finishes it on its own.)
        for q in self.all_queues() {
            let _ = q.finish(WaitReason::Drop);
        }
        self.pool.clear();
    }
}

/// The memory limit of a context on a device that reports `global_mem_bytes`
/// (`CL_DEVICE_GLOBAL_MEM_SIZE`) when none is set: all of it but a sixteenth, which the
/// driver's own allocations take from the same memory without lazycl seeing them.
pub(crate) fn default_memory_limit(global_mem_bytes: u64) -> u64 {
    global_mem_bytes - global_mem_bytes / 16
}

/// Creates an in-order command queue without profiling (the cheapest launches).
pub(crate) fn create_queue(
    ctx: &opencl3::context::Context,
    device: &DeviceInfo,
) -> Result<cl3::types::cl_command_queue> {
    #[allow(deprecated)]
    // SAFETY: the context and device are valid; properties 0 is an in-order queue.
    unsafe { cl3::command_queue::create_command_queue(ctx.get(), device.id, 0) }
        .map_err(|code| Error::cl("clCreateCommandQueue", code))
}
