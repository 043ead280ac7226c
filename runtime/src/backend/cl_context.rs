//! [`ClContext`]: a device's OpenCL context and what every object created in it needs
//! (the device, counters, its device memory and the buffer pool, the disk cache and build
//! settings). Buffers,
//! programs and kernels hold this, not the whole context, so that the context (which
//! owns their caches and its queues) sits above them.

use std::sync::Arc;

use cl3::types::cl_context;

use crate::backend::cache::DiskCache;
use crate::backend::device::DeviceInfo;
use crate::backend::memory::DeviceMemory;
use crate::backend::pool::BufferPool;
use crate::backend::tag::ContextTag;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::stats::{Counters, MemoryStats};

pub(crate) struct ClContext {
    pub(crate) device: DeviceInfo,
    /// This context's identity, which its queues (and their events) carry too.
    pub(crate) tag: ContextTag,
    pub(crate) counters: Arc<Counters>,
    /// What the context's buffers hold, against its limit.
    pub(crate) memory: Arc<DeviceMemory>,
    pub(crate) pool: BufferPool,
    pub(crate) show_kernels: bool,
    /// Build `float` division and `sqrt` correctly rounded (asked for, and supported).
    pub(crate) precise_div_sqrt: bool,
    pub(crate) disk_cache: DiskCache,
    pub(crate) cl_context: opencl3::context::Context,
}

impl ClContext {
    pub(crate) fn cl_context_handle(&self) -> cl_context {
        self.cl_context.get()
    }
    /// The context's device memory now.
    pub(crate) fn memory_stats(&self) -> MemoryStats {
        // (Two reads: a buffer another thread takes or gives back meanwhile may be
        // counted on the wrong side.)
        let pooled = self.pool.bytes();
        let (held, peak) = self.memory.held();
        MemoryStats {
            bytes_live: held.saturating_sub(pooled),
            bytes_pooled: pooled,
            bytes_limit: self.memory.limit(),
            peak_bytes_in_use: peak,
        }
    }

    /// [`Error::OutOfMemory`] for `bytes` bytes of `what`, which could not be had
    /// because of `reason`, with the memory in use now.
    pub(crate) fn out_of_memory(&self, what: &'static str, bytes: usize, reason: String) -> Error {
        Error::OutOfMemory {
            what,
            bytes,
            reason,
            memory: self.memory_stats(),
        }
    }

    /// Errors unless the device can hold elements of `dtype`.
    pub(crate) fn check_dtype(&self, dtype: DType) -> Result<()> {
        if dtype.real() == DType::F64 && !self.device.fp64 {
            return Err(Error::UnsupportedDtype {
                dtype,
                device: self.device.name.clone(),
            });
        }
        Ok(())
    }

    /// Errors unless the device has every OpenCL extension the program `source` of
    /// kernel `kernel` enables (`#pragma OPENCL EXTENSION name : enable`).
    pub(crate) fn check_extensions(&self, kernel: &str, source: &str) -> Result<()> {
        for line in source.lines() {
            let mut words = line.split_whitespace();
            let pragma = [words.next(), words.next()] == [Some("#pragma"), Some("OPENCL")]
                && words.next() == Some("EXTENSION");
            let Some(extension) = words.next().filter(|_| pragma) else {
                continue;
            };
            // (`double` may be a core feature without the extension's name: `fp64` knows.)
            let fp64 = extension == "cl_khr_fp64" && self.device.fp64;
            if fp64 || extension == "all" || self.device.extensions.iter().any(|e| e == extension) {
                continue;
            }
            let why = match extension {
                "cl_khr_int64_base_atomics" | "cl_khr_int64_extended_atomics" => {
                    ": 64-bit atomics (on `i64`, `u64` or `f64` elements)"
                }
                "cl_khr_fp64" => ": `f64` elements",
                _ => "",
            };
            return Err(Error::UnsupportedExtension {
                kernel: kernel.to_string(),
                extension: extension.to_string(),
                device: self.device.name.clone(),
                why: why.to_string(),
            });
        }
        Ok(())
    }
}
