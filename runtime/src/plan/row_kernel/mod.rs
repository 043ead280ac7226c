//! What a *row kernel*'s plan adds to a kernel plan ([`RowsPlan`]), and the rule that
//! says whether a row fits on chip ([`rows_layout`]). Plain data, like `kernel_plan`;
//! `build` plans it.
//!
//! A row kernel computes reductions along the innermost axes of one space `[rows, len]`
//! (the reduced axes, merged, are a row) together with the elementwise work that reads
//! them back per row — softmax's maximum, then its sum of exponentials, then the
//! quotient; layer norm's mean, then its variance, then the normalized row — in one
//! launch: a work-group (or part of one) per row, each work-item holding its elements of
//! the row in registers across the phases.

mod build;

pub(crate) use build::{layout_of, plan_rows, row_kernel, RowSpace};

use crate::dtype::DType;
use crate::graph::ReduceOp;
use crate::layout::VECTOR_WIDTH;
use crate::profile::DeviceProfile;

/// A row kernel: phases over the rows of `[rows, len]`, one per reduction (its operand,
/// combined along the row), then the epilogue (the elementwise members).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RowsPlan {
    /// The trailing dims of the kernel's space that make a row (the reduced ones).
    pub(crate) inner: usize,
    /// Elements per row, and rows.
    pub(crate) len: usize,
    pub(crate) rows: usize,
    /// The reductions, in phase order.
    pub(crate) reductions: Vec<RowReduction>,
    /// Where the epilogue's values start in [`KernelPlan::values`](crate::plan::KernelPlan::values).
    pub(crate) epilogue: usize,
    pub(crate) layout: RowsLayout,
}

/// One reduction of a row kernel: the value of its operand, combined along each row and
/// written, one element per row, to output `output` (which later phases read back as an
/// input, after a barrier).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RowReduction {
    /// Never an arg reduction.
    pub(crate) op: ReduceOp,
    pub(crate) dtype: DType,
    /// Where its phase's values start in the plan's values, and the operand's value
    /// (the phase's values end where the next phase's start).
    pub(crate) start: usize,
    pub(crate) value: usize,
    /// Index in the plan's outputs.
    pub(crate) output: usize,
    /// Graph index of the reduction's node.
    pub(crate) node: usize,
}

/// How the work-items of a row kernel share its rows: `per_row` work-items (a power of
/// two) take a row, neighbouring work-items neighbouring runs of `width` elements (one
/// vector load each where `width` > 1); a work-group of `group` takes `group / per_row`
/// rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RowsLayout {
    pub(crate) per_row: u32,
    pub(crate) group: u32,
    /// 1, or [`VECTOR_WIDTH`] where the row's innermost dim is a multiple of it (so a
    /// run never crosses into the next coordinate of an outer dim, and starts aligned).
    pub(crate) width: u32,
    pub(crate) hold: Hold,
    /// Whether a maximum and a sum of exponentials shifted by it (softmax's two
    /// reductions) may run as one pass and one combining tree (`codegen::row_kernel::online`);
    /// on only by [`Tuning::rows_online`](crate::profile::Tuning::rows_online): measured
    /// slower on the H200 than two phases.
    pub(crate) online: bool,
}

/// Where a row kernel's work-items keep their elements of a row between phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hold {
    /// In registers: work-item `t` takes the runs of `width` elements from `width * (t +
    /// e * per_row)` for `e` in `0..items`, loaded once; the elementwise readers run in
    /// the kernel's epilogue.
    Registers { items: u32 },
    /// Nowhere: a row longer than registers hold is read again by each phase, the
    /// epilogue too, looping over it (from the caches where the rows in flight fit them:
    /// never more bytes than the reductions as kernels of their own and a second pass
    /// for their readers, and one launch).
    Reread,
}

/// Elements of a row a work-item takes before more work-items share it, on GPUs: enough
/// loads in flight per work-item to cover memory latency, and few work-items per row, so
/// that the tree combining them is short (RESULTS.md#rule-row-kernels).
const GPU_ITEMS: usize = 16;
/// The fewest work-items of a row kernel's work-group on GPUs: a group takes one row
/// where a row has that many work-items (groups that wait at their barriers for one row
/// only), else as many rows as make it up.
const GPU_MIN_GROUP: usize = 64;
/// The same on CPUs, whose work-groups run as SIMD loops over their work-items.
const CPU_ITEMS: usize = 4;
/// Elements a work-item takes at once on GPUs (one 16-byte load of `f32`s): on the H200
/// softmax of 4096×32768 (rows read again per phase) ran 27 % faster with them than with
/// one element per load, 65536×1024 (held) 1 % (RESULTS.md#rule-row-width). CPUs take
/// one: PoCL vectorizes across work-items.
const GPU_WIDTH: usize = VECTOR_WIDTH;
/// The most work-items that share a row.
const MAX_PER_ROW: usize = 1024;
/// The most bytes of each value a work-item holds per row (32 `f32`s, 16 `f64`s): with
/// the values of a phase or two in flight, registers still hold them on GPUs.
const MAX_ITEM_BYTES: usize = 128;
/// On GPUs, a work-item holds its elements of a row only in a quarter of its share of
/// the register file its group shares (64 K 32-bit registers: an NVIDIA SM; an AMD CU has
/// more): 64 bytes in a group of 1024 work-items, the whole [`MAX_ITEM_BYTES`] in groups of
/// 512 or fewer. Rows of more, when there are rows enough to fill the device, are read
/// again per phase, from the caches: on the H200 softmax of 4096×32768 (32 `f32`s a
/// work-item in groups of 1024) moved 3.06 TB/s read again, 2.50–2.57 held
/// (RESULTS.md#rule-row-registers).
const REGISTER_FILE_BYTES: usize = 256 * 1024;
/// Rows that do not fit registers are read again per phase only when there are at least
/// this many per compute unit: fewer work-groups than that would leave the device idle
/// where a reduction alone is split across work-groups.
const REREAD_ROWS_PER_UNIT: usize = 2;

/// The shape of a row kernel's space: `rows` rows of `len` elements, the innermost dim of
/// a row `innermost` long (`len` itself where a row is one dim).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RowShape {
    pub(crate) rows: usize,
    pub(crate) len: usize,
    pub(crate) innermost: usize,
}

/// The layout of a row kernel over rows of `shape` of `dtype` on a device of `profile`,
/// or `None` where no row kernel serves (empty rows; rows too long for registers and
/// too few to fill the device; no rows at all): then the reductions and their readers
/// stay kernels of their own.
pub(crate) fn rows_layout(shape: RowShape, dtype: DType, profile: &DeviceProfile) -> Option<RowsLayout> {
    let RowShape { rows, len, innermost } = shape;
    let width = match profile.tuning.row_width {
        Some(w) => w as usize,
        None if profile.gpu => GPU_WIDTH,
        None => 1,
    };
    let width = if width == VECTOR_WIDTH && innermost.is_multiple_of(width) {
        width
    } else {
        1
    };
    let cap = profile.tuning.row_work_items.map_or(MAX_PER_ROW, |c| c as usize);
    let max_group = profile.max_group.clamp(1, cap.clamp(1, MAX_PER_ROW));
    let max_group = 1usize << (usize::BITS - 1 - max_group.leading_zeros());
    let goal = match profile.tuning.row_items {
        Some(items) => (items as usize).max(1),
        None if profile.gpu => GPU_ITEMS,
        None => CPU_ITEMS,
    };
    let per_row = len.div_ceil(goal).next_power_of_two().clamp(1, max_group);
    // (Runs of `width` per work-item; the register rule counts their elements.)
    let items = len.div_ceil(per_row * width);
    let group = match profile.tuning.rows_per_group {
        Some(r) => per_row * (r.max(1) as usize).next_power_of_two(),
        None if profile.gpu => per_row.max(GPU_MIN_GROUP),
        None => per_row.max(profile.reduce_group_size() as usize),
    }
    .min(max_group);
    let bytes = items * width * dtype.value_size().max(1);
    let registers = match profile.gpu {
        true => MAX_ITEM_BYTES.min(REGISTER_FILE_BYTES / group / 4),
        false => MAX_ITEM_BYTES,
    };
    let fills = rows >= REREAD_ROWS_PER_UNIT * profile.compute_units.max(1) as usize;
    let hold = if len == 0 || rows == 0 {
        return None;
    } else if bytes <= registers {
        Hold::Registers { items: items as u32 }
    } else if fills {
        Hold::Reread
    } else if bytes <= MAX_ITEM_BYTES {
        // (Rows too few to fill the device if read again: held past the budget, as before
        // there was one, rather than split into kernels of their own; not measured.)
        Hold::Registers { items: items as u32 }
    } else {
        return None;
    };
    Some(RowsLayout {
        per_row: per_row as u32,
        group: group as u32,
        width: width as u32,
        hold,
        online: profile.tuning.rows_online,
    })
}

impl RowsLayout {
    /// Rows a work-group takes.
    pub(crate) fn rows_per_group(&self) -> usize {
        (self.group / self.per_row.max(1)).max(1) as usize
    }
}

impl RowsPlan {
    /// Where each phase ends in the plan's values: each reduction's phase where the next
    /// one's starts, the last one where the epilogue starts.
    pub(crate) fn phase_ends(&self) -> Vec<usize> {
        self.reductions
            .iter()
            .skip(1)
            .map(|red| red.start)
            .chain([self.epilogue])
            .collect()
    }

    /// Work-groups to launch.
    pub(crate) fn groups(&self) -> usize {
        self.rows.div_ceil(self.layout.rows_per_group())
    }
}
