//! Counters of everything the runtime does, cheap enough to leave on (relaxed atomics).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

macro_rules! counters {
    ($( $(#[$doc:meta])* $name:ident ),* $(,)?) => {
        /// Live counters of one context.
        #[derive(Debug, Default)]
        pub(crate) struct Counters {
            $( pub(crate) $name: AtomicU64, )*
        }

        /// A snapshot of a context's counters, returned by `Context::stats()`. Two
        /// snapshots subtract (`after - before`); `Display` prints them as a table.
        ///
        /// ```
        /// # use lazycl::prelude::*;
        /// # fn main() -> lazycl::Result<()> {
        /// let ctx = Context::new()?;
        /// let x = ctx.from_slice(&[1.0f32, 4.0, 9.0])?;
        /// let step = |a: f32| (&x * a + 1.0).sqrt() - &x;
        /// step(2.0).to_vec()?;
        ///
        /// let before = ctx.stats();
        /// let y = step(3.0); // recording runs nothing
        /// assert_eq!(ctx.stats(), before);
        /// y.to_vec()?;
        /// let d = ctx.stats() - before;
        /// assert_eq!(d.kernels_launched, 1); // four operations, one fused kernel
        /// assert_eq!(d.programs_built, 0); // a new scalar is a kernel argument
        /// assert_eq!(d.plans_reused, 1); // the same structure: not even planned again
        /// assert_eq!(d.host_waits, 1); // the read
        /// println!("{d}");
        /// # Ok(())
        /// # }
        /// ```
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct Stats {
            $( $(#[$doc])* pub $name: u64, )*
        }

        impl Counters {
            pub(crate) fn snapshot(&self) -> Stats {
                Stats { $( $name: self.$name.load(Relaxed), )* }
            }
        }

        impl Stats {
            /// The counters as (name, value) pairs, in declaration order.
            pub fn entries(&self) -> Vec<(&'static str, u64)> {
                vec![ $( (stringify!($name), self.$name), )* ]
            }
        }

        impl std::ops::Add for Stats {
            type Output = Stats;
            /// Two contexts' counters together (a multi-device context's are its
            /// devices' added up).
            fn add(self, rhs: Stats) -> Stats {
                Stats { $( $name: self.$name.wrapping_add(rhs.$name), )* }
            }
        }

        impl std::ops::Sub for Stats {
            type Output = Stats;
            /// The change between two snapshots (`after - before`).
            fn sub(self, rhs: Stats) -> Stats {
                Stats { $( $name: self.$name.wrapping_sub(rhs.$name), )* }
            }
        }
    };
}

counters! {
    /// OpenCL programs compiled from source.
    programs_built,
    /// OpenCL programs created from cached device binaries.
    programs_loaded,
    /// Cached device binaries that loaded but did not fit their program (another kernel
    /// name or parameter list, or a launch the driver refused): deleted and rebuilt.
    programs_rejected,
    /// Host time spent obtaining programs (building, or loading from the disk cache), µs,
    /// summed over the threads that build a flush's programs together.
    program_time_us,
    /// Wall time of the build phases of flushes that needed new kernels, µs (less than
    /// their share of `program_time_us` where programs were built concurrently).
    build_wall_us,
    /// One-line notices printed on stderr that a flush is building programs (at most one
    /// per context; see `ContextBuilder::build_notice_after`).
    build_notices,
    /// `cl_kernel` objects created.
    kernels_created,
    /// Kernels enqueued (`clEnqueueNDRangeKernel`).
    kernels_launched,
    /// Kernels of sorts of whole rows enqueued (counted in `kernels_launched` too): a
    /// row sorted in local memory, a radix histogram or pass. `sort`, `argsort`,
    /// `sort_by_key`, and `topk`/`bottomk` of a `k` above the selection's.
    sort_kernels_launched,
    /// Kernels of selections enqueued (counted in `kernels_launched` too): `topk` and
    /// `bottomk` of a small `k`, which never sort a whole row.
    select_kernels_launched,
    /// Lazy flushes planned (their graph's structure was new to the context).
    flushes_planned,
    /// Lazy flushes that ran the plans of an earlier flush of the same structure (same
    /// operations, types, shapes, views and roots; new buffers and scalars) without
    /// planning.
    plans_reused,
    /// Runs of a captured step (`Context::capture`) that launched its kernels without
    /// recording or planning (its first run, which traces, counts as a flush).
    steps_replayed,
    /// Lazy flushes that found their fused kernel in the cache.
    kernel_cache_hits,
    /// Lazy flushes that had to generate a new fused kernel.
    kernel_cache_misses,
    /// `eval()`s handed to the context's dispatch thread (`Dispatch`), which flushes them
    /// while the caller goes on (those taken back included).
    evals_dispatched,
    /// Times a thread waited for the dispatch thread to run the `eval()`s it handed over:
    /// before it submitted more work or read an array, or because
    /// `MAX_PENDING_JOBS` were pending. Not a host wait on the device.
    dispatch_waits,
    /// `eval()`s handed over that their thread ran itself, the dispatch thread not having
    /// started them when the thread next submitted or read.
    evals_taken_back,
    /// Blocking calls that waited on the device (all reasons: the next five added up).
    host_waits,
    /// Host waits to read an array (`to_vec`, `to_ndarray`, `item`).
    waits_read,
    /// Host waits the user asked for (`Event::wait`, `Queue::finish`, `Context::synchronize`).
    waits_explicit,
    /// Host waits because a context was dropped with work outstanding.
    waits_drop,
    /// Host waits because a queue held as many unfinished commands as
    /// `ContextBuilder::max_queued_commands` allows (back-pressure).
    waits_backpressure,
    /// Host waits to time the candidate tiles of a GEMM search, or to try a tile of the
    /// disk cache's table.
    waits_search,
    /// Searches for a GEMM kernel's tiles (once per shape class and device: the result
    /// is kept beside the program cache).
    gemm_searches,
    /// Candidate tiles a search built and timed.
    gemm_candidates,
    /// Trials of GEMM tiles read from the disk cache's table and not known to run on the
    /// device: each built, launched once and waited for before it is used.
    gemm_tile_trials,
    /// Entries of the disk cache's table of GEMM tiles found unusable (outside the
    /// device's limits, or their trial failed) and marked bad: never used or tried again.
    gemm_tiles_discarded,
    /// Bytes copied host to device.
    bytes_uploaded,
    /// Bytes copied device to host.
    bytes_downloaded,
    /// Device buffers created with `clCreateBuffer`.
    buffers_allocated,
    /// Bytes of device memory created with `clCreateBuffer`.
    bytes_allocated,
    /// Device buffers released: pooled memory beyond the pool's share of the memory
    /// limit, the pool emptied to make room under the limit, the context dropped.
    buffers_released,
    /// Allocations that would have passed the context's memory limit
    /// (`ContextBuilder::memory_limit`) and released the pool's free buffers first.
    pool_trims,
    /// Device buffers taken from the pool instead of `clCreateBuffer`.
    buffers_reused,
    /// Fills and device-to-device copies enqueued.
    transfers_enqueued,
    /// `cl_event` objects requested from the driver (markers for dependencies between
    /// queues, and events a user asked for).
    events_created,
    /// Dependencies on commands of other queues added to a command's wait list (one not
    /// known to have completed).
    cross_queue_waits,
    /// Command queues created (the default one, `Context::new_queue`'s, the transfer
    /// queue of uploads); `queues_created - queues_released` are alive now.
    queues_created,
    /// Command queues released: nothing named them any more (handle, event, or a buffer's
    /// record of one of their commands).
    queues_released,
    /// Copies between the devices of a multi-device context (halo rows, partial results,
    /// operands a device needs whole), counted on the receiving device.
    device_copies,
    /// Bytes those copies moved (through host memory).
    device_copy_bytes,
    /// Partial results of several devices combined into one (a full or axis-0 reduction
    /// of an array split across devices), counted on the device that combines them.
    device_combines,
}

/// A context's device memory at one moment, returned by `Context::memory_stats()` (and
/// carried by [`Error::OutOfMemory`](crate::Error::OutOfMemory)): every buffer lazycl
/// holds counts from its `clCreateBuffer` until OpenCL frees it, which is after the last
/// command using it has completed.
///
/// ```
/// # use lazycl::prelude::*;
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::builder().memory_limit(64 << 20).build()?;
/// let x = ctx.zeros::<f32>(1 << 20)?;
/// let m = ctx.memory_stats();
/// assert!(m.bytes_live >= 4 << 20);
/// assert_eq!(m.bytes_limit, 64 << 20);
/// drop(x); // its buffer goes to the pool: still held, ready for the next array
/// assert!(ctx.memory_stats().bytes_pooled >= 4 << 20);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Bytes of buffers in use: arrays' memory, scratch of queued commands, and memory
    /// released whose commands have not completed yet.
    pub bytes_live: u64,
    /// Bytes of free buffers the pool keeps for reuse (released first when an
    /// allocation would pass the limit).
    pub bytes_pooled: u64,
    /// The most this context may hold (`ContextBuilder::memory_limit`).
    pub bytes_limit: u64,
    /// The most it held at once (live and pooled) since it was opened.
    pub peak_bytes_in_use: u64,
}

impl MemoryStats {
    /// Bytes held now, live and pooled: what counts against the limit.
    pub fn bytes_in_use(&self) -> u64 {
        self.bytes_live.saturating_add(self.bytes_pooled)
    }
}

impl fmt::Display for MemoryStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} bytes live, {} bytes pooled, limit {} bytes",
            self.bytes_live, self.bytes_pooled, self.bytes_limit
        )
    }
}

/// Why the host waited for the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitReason {
    Read,
    Explicit,
    Drop,
    Backpressure,
    Search,
}

impl Counters {
    #[inline]
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Relaxed);
    }

    /// Counts one host wait and its reason.
    pub(crate) fn count_wait(&self, reason: WaitReason) {
        Self::add(&self.host_waits, 1);
        Self::add(
            match reason {
                WaitReason::Read => &self.waits_read,
                WaitReason::Explicit => &self.waits_explicit,
                WaitReason::Drop => &self.waits_drop,
                WaitReason::Backpressure => &self.waits_backpressure,
                WaitReason::Search => &self.waits_search,
            },
            1,
        );
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entries = self.entries();
        let width = entries.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
        writeln!(f, "{:<width$}  value", "counter")?;
        for (name, value) in entries {
            writeln!(f, "{name:<width$}  {value}")?;
        }
        Ok(())
    }
}
