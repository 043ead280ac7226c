//! What a kernel plan is: its values, inputs, scalars and outputs, the iteration space,
//! and for reductions the layout (`ReducePlan`) and the reductions joined into it. Plain
//! data: the passes and `fit` fill it in, codegen prints it, exec binds it.

use crate::dtype::{DType, ScalarBits};
use crate::graph::ReduceOp;
pub(crate) use crate::layout::REDUCE_GROUP;

use super::collect::{Inputs, OpCode};

/// One value inside a fused kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// Load from input buffer `slot`.
    Load { slot: usize },
    /// Scalar kernel argument `slot`.
    Scalar { slot: usize },
    /// An operation over earlier values.
    Op { code: OpCode, args: Inputs },
}

/// A value of a kernel and its element type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlannedValue {
    pub(crate) value: Value,
    pub(crate) dtype: DType,
}

/// An input buffer of a kernel (slot `k` is the kernel's `in{k}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Input {
    pub(crate) dtype: DType,
    /// Bit `k` set: the load broadcasts along collapsed dim `k` (0: a full-size load).
    pub(crate) broadcast_mask: u32,
    /// Graph index of the node read.
    pub(crate) node: usize,
}

/// A scalar kernel argument (slot `k` is the kernel's `s{k}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScalarArg {
    pub(crate) dtype: DType,
    /// Its bytes, bound at each launch (never part of the key).
    pub(crate) bits: ScalarBits,
}

/// An output of a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Output {
    /// Index of the value written, in [`KernelPlan::values`] (a reduction's: the value
    /// reduced).
    pub(crate) value: usize,
    /// Element type of the output array.
    pub(crate) dtype: DType,
    /// Graph index of the node materialized.
    pub(crate) node: usize,
}

/// A kernel's structure and the run-time bindings of its arguments.
pub(crate) struct KernelPlan {
    /// Structural cache key: equal keys give identical source.
    pub(crate) key: Vec<u32>,
    /// Values in evaluation order with their element types.
    pub(crate) values: Vec<PlannedValue>,
    /// Input buffers, by slot.
    pub(crate) inputs: Vec<Input>,
    /// Scalar arguments, by slot.
    pub(crate) scalars: Vec<ScalarArg>,
    /// Outputs (an elementwise kernel's, in order; a reduction kernel's one result).
    pub(crate) outputs: Vec<Output>,
    /// The collapsed iteration dims (outermost first; never empty).
    pub(crate) dims: Vec<usize>,
    /// Total work (product of dims).
    pub(crate) numel: usize,
    /// Set for a reduction kernel.
    pub(crate) reduce: Option<ReducePlan>,
    /// Work-group size of a reduction kernel.
    pub(crate) group_size: u32,
    /// Element indices fit in 32 bits (cheaper index arithmetic).
    pub(crate) narrow_index: bool,
    /// A row reduction computed inside this column reduction (see [`JoinedReduction`]).
    pub(crate) row: Option<JoinedReduction>,
    /// A reduction over the rows computed beside the row reduction (see
    /// [`JoinedReduction`]).
    pub(crate) row_total: Option<JoinedReduction>,
    /// An elementwise kernel that finishes a split reduction it reads (see
    /// [`FinishIn`]).
    pub(crate) finishes: Option<FinishIn>,
}

/// A split reduction finished by the elementwise kernel that reads its result, instead
/// of by a combine pass (`w - lr * g` after `g = x.sum_axis(0)` in segments: one launch
/// fewer). The consumer runs over the reduction's outputs; a work-group takes
/// `group / lanes` of them, its lanes combine each output's partials in local memory,
/// and the first lane writes the result to the reduction's array (input `slot`) and then
/// evaluates the consumer there, reading it back like any input.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FinishIn {
    /// The consumer's input slot of the reduction's result.
    pub(crate) slot: usize,
    /// The reduction's operation (never an arg one) and element type.
    pub(crate) op: ReduceOp,
    pub(crate) dtype: DType,
    /// Lanes per output: the next power of two of the segments, within the group.
    pub(crate) lanes: u32,
    /// The work-group size.
    pub(crate) group: u32,
}

/// A reduction computed in the kernel of a column reduction instead of in a kernel of
/// its own, so that the rows are read once for both. Two kinds, each a field of
/// [`KernelPlan`]:
///
/// - [`KernelPlan::row`]: a reduction along rows (`sum_axis(1)` of the same `[n, d]`
///   space) whose result the column reduction reads per row. The cone of
///   `x.sum_axis(0)`'s operand holds a value `Op(Reduce)` for it (`value`), which the
///   kernel evaluates per row (the work-items of a row combine their elements in local
///   memory) and also writes out, one element per row, to the row reduction's own array.
/// - [`KernelPlan::row_total`]: a reduction of one value per row to a single element,
///   computed beside the row reduction: `mean(b - lr * (sigmoid(z) - y))` over the rows
///   of `z = x w`, where the kernel has each row's `z` at hand. Its operand (`value`)
///   depends on the row only (the row's result, per-row inputs, single elements,
///   scalars); the kernel combines it over its rows, each work-group writes its part, and
///   the last work-group to finish combines the parts (one launch fewer than a reduction
///   kernel of its own).
#[derive(Debug, Clone, Copy)]
pub(crate) struct JoinedReduction {
    /// The reduction's operation (never an arg one).
    pub(crate) op: ReduceOp,
    /// Index in [`KernelPlan::values`] of the row reduction's own value, or of the total's
    /// operand (see above).
    pub(crate) value: usize,
    /// Element type of its result (a total's operand has the same).
    pub(crate) dtype: DType,
    /// Graph index of the reduction's node (its output).
    pub(crate) node: usize,
}

/// How a reduction kernel is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReducePlan {
    pub(crate) op: ReduceOp,
    /// Bit `k` set: collapsed dim `k` is reduced.
    pub(crate) red_mask: u32,
    /// Work-items cooperating on one output (tree in local memory); 0 = one work-item per
    /// output segment, looping serially (used when the innermost dim is kept, so that
    /// neighbouring work-items read neighbouring addresses).
    pub(crate) lanes: u32,
    /// Number of outputs.
    pub(crate) n_out: usize,
    /// Elements reduced into each output.
    pub(crate) n_red: usize,
    /// Element type of the reduced values.
    pub(crate) in_dtype: DType,
    /// Lanes take neighbouring elements with vector loads (the only reduced dim is the
    /// innermost one).
    pub(crate) vector: bool,
    /// The innermost extent is a multiple of the vector width, so every vector load starts
    /// at an aligned index (and can be one wide load).
    pub(crate) aligned: bool,
    /// Column layout (`lanes == 0`, the only kept dim is the innermost one, as in
    /// `m.sum_axis(0)`): a work-group streams whole rows, each work-item owns
    /// [`column_width`](ReducePlan::column_width) neighbouring outputs, and the rows a
    /// work-group read are combined in local memory. Otherwise `lanes == 0` means one
    /// work-item per output.
    pub(crate) columns: bool,
    /// Outputs per work-item of the column layout: the vector width when the row length
    /// allows aligned vector loads (and the op is not an arg one), else 1.
    pub(crate) column_width: usize,
    /// The most vectors of a row one work-group of the column layout covers (a tile;
    /// longer rows are split into tiles of equal width), chosen with the segments.
    pub(crate) column_tile: usize,
    /// Segments per output (`S`), chosen for the device when the flush is planned.
    pub(crate) segments: usize,
    /// Each lane of the vector loop reads one contiguous run of its segment instead of
    /// every `lanes`-th vector (CPU devices).
    pub(crate) contiguous_lanes: bool,
    /// With `S > 1`, the last work-group of each block of outputs combines the partials
    /// itself (an atomic count of finished groups per block) instead of a combine pass:
    /// one launch instead of two. Lanes and column layouts, at most
    /// [`FINISH_COUNTERS`](crate::backend::queue::FINISH_COUNTERS) blocks (column tiles).
    pub(crate) finish_in_kernel: bool,
    /// Float sums carry a Kahan compensation in each work-item's loop. Chosen with the
    /// segments: only where a work-item adds many steps serially (short runs are already
    /// accurate, and the compensation's dependent adds cost bandwidth on GPUs).
    pub(crate) compensated: bool,
    /// A column reduction with a row reduction inside whose rows are short: each
    /// work-item reads whole rows of this many vectors (its accumulators cover the whole
    /// row, no barrier per row). 0: the work-items of a row share it.
    pub(crate) row_vectors: usize,
    /// A column reduction with a row reduction inside whose rows a whole work-group
    /// shares, one row at a time: each work-item holds this many vectors of every row
    /// (its accumulators), and the group size is chosen for the row
    /// ([`KernelPlan::group_size`]). 0: another layout.
    pub(crate) group_rows: usize,
    /// A split reduction whose partials the elementwise kernel reading its result
    /// combines ([`FinishIn`]): no combine pass.
    pub(crate) finished_by_consumer: bool,
}

/// Rows of at most this many vectors, and of at most [`ROW_PER_ITEM_BYTES`], are read
/// whole by one work-item in a column reduction with a row reduction inside.
const ROW_PER_ITEM_VECTORS: usize = 8;
/// See [`ROW_PER_ITEM_VECTORS`]: a work-item holds a row's accumulators and elements.
const ROW_PER_ITEM_BYTES: usize = 160;

impl ReducePlan {
    /// A column reduction's rows are short enough for one work-item to hold a whole row
    /// (when a row reduction goes inside it).
    pub(crate) fn rows_fit_one_item(&self) -> bool {
        self.n_out / self.column_width.max(1) <= ROW_PER_ITEM_VECTORS
            && self.n_out * self.in_dtype.size() <= ROW_PER_ITEM_BYTES
    }

    /// The column layout's geometry for work-groups of `group` items: (work-items per
    /// row, rows read at once by a group, column tiles).
    pub(crate) fn column_geometry(&self, group: usize) -> (usize, usize, usize) {
        let vectors = (self.n_out / self.column_width).max(1);
        let tiles = vectors.div_ceil(self.column_tile.max(1));
        let per_row = vectors.div_ceil(tiles);
        (per_row, group / per_row, tiles)
    }
}
