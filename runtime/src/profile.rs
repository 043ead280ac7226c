//! The facts about a device that planning depends on, as a plain value below every
//! layer: the backend makes one per context (`DeviceInfo::profile`), the planner reads it
//! and never sees a context, a queue or an OpenCL call, so every heuristic can be tested
//! with any profile and no device.

use crate::layout::REDUCE_GROUP;

/// Switches that change which plans are chosen, so that tests cover every layout on any
/// device (`ContextBuilder::tuning`). All off by default.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tuning {
    /// Split reductions always take a combine pass, never finish in their own kernel.
    pub combine_pass_only: bool,
    /// Row reductions go inside column reductions with shared rows on any device (by
    /// default on GPUs only).
    pub shared_rows_anywhere: bool,
    /// Elementwise kernels that read a transposed view stage it through local memory in
    /// tiles on any device (by default on GPUs only).
    pub tiles_anywhere: bool,
    /// Every GEMM kernel takes this tile (where it fits the device), with no search: so
    /// that tests cover each tile a search may choose.
    pub gemm_tile: Option<crate::layout::GemmTile>,
    /// How long the trial of a tile read from the disk cache's table may take before the
    /// tile is discarded (by default `exec::tune`'s limit): so that tests can make a
    /// trial fail.
    pub tile_trial_limit: Option<std::time::Duration>,
    /// Every row kernel's work-items take about this many elements of a row each (at
    /// most what registers hold): so that a sweep measures the rule's choice.
    pub row_items: Option<u32>,
    /// Row kernels give a row at most this many work-items (rows longer than they hold
    /// in registers are then read again per phase).
    pub row_work_items: Option<u32>,
    /// Row kernels' work-groups take this many rows (by default as many as make a
    /// group of the reduction group size).
    pub rows_per_group: Option<u32>,
    /// Row kernels' work-items take runs of this many neighbouring elements, one vector
    /// load each: 1, or 4 where a row's innermost dim is a multiple of 4 (by default 4
    /// on GPUs, 1 on CPUs).
    pub row_width: Option<u32>,
    /// Row kernels compute a maximum and the sum of exponentials shifted by it (softmax)
    /// in one pass with one combining tree (`codegen::row_kernel::online`), not in two phases.
    /// Off by default: on the H200 it was slower (RESULTS.md#rule-rows-online).
    pub rows_online: bool,
    /// A flush builds its new programs one after another, not together: the baseline
    /// the report measures parallel builds against.
    pub serial_builds: bool,
    /// `topk` and `bottomk` sort the whole axis at every `k`, never select (by default
    /// a `k` up to `plan::select::max_select_k` is selected): the baseline a
    /// benchmark measures the selection against.
    pub topk_by_sort: bool,
}

/// What planning knows of a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DeviceProfile {
    /// A GPU (else a CPU or accelerator, planned like PoCL on a CPU).
    pub(crate) gpu: bool,
    /// `CL_DEVICE_MAX_COMPUTE_UNITS`.
    pub(crate) compute_units: u32,
    /// The largest work-group of a one-dimensional launch: `CL_DEVICE_MAX_WORK_GROUP_SIZE`,
    /// or the first of `CL_DEVICE_MAX_WORK_ITEM_SIZES` if that is smaller.
    pub(crate) max_group: usize,
    /// `CL_DEVICE_LOCAL_MEM_SIZE`.
    pub(crate) local_mem_bytes: u64,
    /// The most bytes of values a work-group's work-items may keep live together (in
    /// registers on a GPU, in the work-group function's stack frame on PoCL): the
    /// registers of a work-group where the device says (NVIDIA's
    /// `CL_DEVICE_REGISTERS_PER_BLOCK_NV`, 4 bytes each), else [`GROUP_PRIVATE_BYTES`].
    pub(crate) private_bytes: u64,
    /// `CL_DEVICE_MAX_PARAMETER_SIZE`.
    pub(crate) parameter_bytes: usize,
    pub(crate) tuning: Tuning,
}

/// The private bytes of a work-group on a device that does not say
/// ([`DeviceProfile::private_bytes`]): on PoCL (CPU) a GEMM tile whose work-group kept
/// 2 MiB of accumulators ran and one of 4 MiB crashed the process.
pub(crate) const GROUP_PRIVATE_BYTES: u64 = 1 << 20;

/// Fixed kernel arguments besides inputs, scalars and outputs: `n` and up to this many dims.
const MAX_ARGS_CEILING: usize = 96;

impl DeviceProfile {
    /// Work-group size of reduction kernels: 256, or the largest power of two the device
    /// allows.
    pub(crate) fn reduce_group_size(&self) -> u32 {
        let max = self.max_group.clamp(1, REDUCE_GROUP as usize) as u32;
        1 << (31 - max.leading_zeros())
    }

    /// The most buffer and scalar arguments a kernel may take: every argument takes at
    /// most 8 bytes; room is left for outputs, `n` and dims.
    pub(crate) fn max_args(&self) -> usize {
        (self.parameter_bytes / 8)
            .saturating_sub(40)
            .clamp(8, MAX_ARGS_CEILING)
    }

    /// The most work-items to launch for a grid-stride kernel on this device.
    pub(crate) fn work_items_cap(&self) -> usize {
        if self.gpu {
            // Enough work-items to fill every compute unit; each loops over the rest.
            self.compute_units.max(1) as usize * 2048
        } else {
            // PoCL: one loop iteration per work-item, which the work-group vectorizer turns
            // into SIMD code; a grid-stride loop would defeat it.
            1 << 30
        }
    }

    /// Global and local size for `work` independent work-items. GPUs get explicit
    /// work-groups of the reduction group size (a driver's own choice for an odd global
    /// size can be tiny, which halves occupancy); CPUs choose their own.
    pub(crate) fn grid(&self, work: usize) -> (usize, Option<usize>) {
        if self.gpu {
            let local = self.reduce_group_size() as usize;
            (work.max(1).div_ceil(local) * local, Some(local))
        } else {
            (work.max(1).div_ceil(64) * 64, None)
        }
    }
}
