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

        /// A snapshot of a context's counters, returned by `Context::stats()`.
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
    /// `cl_kernel` objects created.
    kernels_created,
    /// Kernels enqueued (`clEnqueueNDRangeKernel`).
    kernels_launched,
    /// Lazy flushes that found their fused kernel in the cache.
    kernel_cache_hits,
    /// Lazy flushes that had to generate a new fused kernel.
    kernel_cache_misses,
    /// Blocking calls that waited on the device.
    host_waits,
    /// Bytes copied host to device.
    bytes_uploaded,
    /// Bytes copied device to host.
    bytes_downloaded,
    /// Device buffers created with `clCreateBuffer`.
    buffers_allocated,
    /// Bytes of device memory created with `clCreateBuffer`.
    bytes_allocated,
    /// Device buffers taken from the pool instead of `clCreateBuffer`.
    buffers_reused,
    /// Fills and device-to-device copies enqueued.
    transfers_enqueued,
    /// `cl_event` objects requested from the driver.
    events_created,
}

impl Counters {
    #[inline]
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Relaxed);
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
