//! A reduction kernel's plan: its layout (`ReducePlan`, `Layout`, columns and vector
//! loads), the row reduction joined into a column reduction, and a split reduction
//! finished by the kernel that reads it (`FinishIn`). Plain data, as `kernel_plan`.

use crate::dtype::DType;
use crate::graph::ReduceOp;

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
/// [`ReducePlan`]:
///
/// - [`ReducePlan::row`]: a reduction along rows (`sum_axis(1)` of the same `[n, d]`
///   space) whose result the column reduction reads per row. The cone of
///   `x.sum_axis(0)`'s operand holds a value `Op(Reduce)` for it (`value`), which the
///   kernel evaluates per row (the work-items of a row combine their elements in local
///   memory) and also writes out, one element per row, to the row reduction's own array.
/// - [`ReducePlan::row_total`]: a reduction of one value per row to a single element,
///   computed beside the row reduction: `mean(b - lr * (sigmoid(z) - y))` over the rows
///   of `z = x w`, where the kernel has each row's `z` at hand. Its operand (`value`)
///   depends on the row only (the row's result, per-row inputs, single elements,
///   scalars); the kernel combines it over its rows, each work-group writes its part, and
///   the last work-group to finish combines the parts (one launch fewer than a reduction
///   kernel of its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// How a reduction kernel is laid out: what it reduces, how its work-items share the
/// elements ([`Layout`]), and what `fit` chose for the device: the segments, who finishes
/// them ([`Finish`]) and whether float sums are compensated. Each variant carries only
/// what applies to it; two rules are left to `fit`: [`Finish::Single`] exactly with one
/// segment, and [`Finish::InKernel`] only in the layouts it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReducePlan {
    pub(crate) op: ReduceOp,
    /// Bit `k` set: collapsed dim `k` is reduced.
    pub(crate) red_mask: u32,
    /// Number of outputs.
    pub(crate) n_out: usize,
    /// Elements reduced into each output.
    pub(crate) n_red: usize,
    /// Element type of the reduced values.
    pub(crate) in_dtype: DType,
    pub(crate) layout: Layout,
    /// Segments per output (`S`), chosen for the device when the flush is planned.
    pub(crate) segments: usize,
    /// Who combines the segments' partials ([`Finish::Single`] exactly when `segments` is
    /// 1).
    pub(crate) finish: Finish,
    /// Float sums carry a Kahan compensation in each work-item's loop. Chosen with the
    /// segments: only where a work-item adds many steps serially (short runs are already
    /// accurate, and the compensation's dependent adds cost bandwidth on GPUs).
    pub(crate) compensated: bool,
    /// A row reduction computed inside this column reduction (see [`JoinedReduction`]).
    pub(crate) row: Option<JoinedReduction>,
    /// A reduction over the rows computed beside the row reduction (see
    /// [`JoinedReduction`]).
    pub(crate) row_total: Option<JoinedReduction>,
}

/// How the work-items of a reduction kernel share its elements, chosen from the collapsed
/// dims when the kernel is planned (and refined by `fit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `lanes` work-items (a power of two) cooperate on each output, striding over its
    /// segment, and combine in local memory (a tree); a work-group takes `group / lanes`
    /// outputs. Used when the innermost dim is reduced. `vector`: the only reduced dim is
    /// the innermost one, and lanes take neighbouring elements with vector loads.
    Lanes { lanes: u32, vector: Option<VectorLoads> },
    /// One work-item per output (and segment), looping serially: the innermost dim is kept,
    /// and so are outer dims, so neighbouring work-items read neighbouring addresses.
    Serial,
    /// The only kept dim is the innermost one (`m.sum_axis(0)`): work-groups stream whole
    /// rows ([`Columns`]).
    Columns(Columns),
}

/// The vector loads of [`Layout::Lanes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct VectorLoads {
    /// Elements per vector load: [`crate::layout::vector_width`] of the inputs read along
    /// the innermost dim (16 bytes of the narrowest; chosen by `fit`).
    pub(crate) width: usize,
    /// The innermost extent is a multiple of the vector width, so every vector load starts
    /// at an aligned index (and can be one wide load).
    pub(crate) aligned: bool,
    /// Each lane reads one contiguous run of its segment instead of every `lanes`-th
    /// vector (CPU devices; chosen by `fit`).
    pub(crate) contiguous: bool,
}

/// The column layout ([`Layout::Columns`]): a work-group streams whole rows of its tile,
/// each work-item owns `width` neighbouring outputs, and the rows a work-group read are
/// combined in local memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Columns {
    /// Outputs per work-item: the vector width when the row length allows aligned vector
    /// loads (and the op is not an arg one), else 1.
    pub(crate) width: usize,
    /// The most vectors of a row one work-group covers (a tile; longer rows are split
    /// into tiles of equal width), chosen with the segments. A row reduction inside makes
    /// it cover whole rows (one tile).
    pub(crate) tile: usize,
    /// Whether a row reduction is computed inside ([`ReducePlan::row`]), and how its rows
    /// are shared.
    pub(crate) rows: ColumnRows,
}

/// How a column reduction with a row reduction inside shares its rows, chosen by `fit`
/// from the row's width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColumnRows {
    /// No row reduction inside (or, before `fit`, its layout not chosen yet).
    Plain,
    /// Each row shared by a row of work-items of the column layout, a tree over them per
    /// step of rows.
    RowLoop,
    /// Each row shared by a whole work-group, one row at a time: each work-item holds
    /// `vectors_per_item` vectors of every row (its accumulators), and the group size is
    /// chosen for the row ([`KernelPlan::group_size`]).
    GroupRows { vectors_per_item: usize },
    /// Short rows, each read whole by one work-item: `vectors` vectors a row (its
    /// accumulators cover the whole row, no barrier per row).
    RowsPerItem { vectors: usize },
}

/// Who combines the partials of a reduction split into segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finish {
    /// One segment: the kernel writes the results, nothing is left to combine.
    Single,
    /// A second, tiny combine kernel.
    CombinePass,
    /// The kernel itself: the last work-group of each block of outputs (lanes layout) or
    /// tile (column layout) combines the partials, found by an atomic count of finished
    /// groups per block: one launch instead of two. Only in those two layouts (in the
    /// column layout, with no row reduction inside or one of [`ColumnRows::RowLoop`]), with
    /// at most
    /// [`FINISH_COUNTERS`](crate::layout::FINISH_COUNTERS) blocks.
    InKernel,
    /// The elementwise kernel that reads the result ([`FinishIn`]): no combine pass.
    ByConsumer,
}

impl Finish {
    /// The finish of a reduction in `segments` segments: nothing for one; else the kernel
    /// itself where `in_kernel`, or a combine pass.
    pub(crate) fn of(segments: usize, in_kernel: bool) -> Finish {
        match segments {
            0 | 1 => Finish::Single,
            _ if in_kernel => Finish::InKernel,
            _ => Finish::CombinePass,
        }
    }
}

/// Rows of at most this many vectors, and of at most [`ROW_PER_ITEM_BYTES`], are read
/// whole by one work-item in a column reduction with a row reduction inside.
const ROW_PER_ITEM_VECTORS: usize = 8;
/// See [`ROW_PER_ITEM_VECTORS`]: a work-item holds a row's accumulators and elements.
const ROW_PER_ITEM_BYTES: usize = 160;

impl ReducePlan {
    /// The column layout, where the reduction takes it.
    pub(crate) fn columns(&self) -> Option<&Columns> {
        match &self.layout {
            Layout::Columns(c) => Some(c),
            _ => None,
        }
    }

    /// A column reduction whose rows are short enough for one work-item to hold a whole
    /// row (when a row reduction goes inside it).
    pub(crate) fn rows_fit_one_item(&self) -> bool {
        self.columns().is_some_and(|c| {
            self.n_out / c.width.max(1) <= ROW_PER_ITEM_VECTORS
                && self.n_out * self.in_dtype.size() <= ROW_PER_ITEM_BYTES
        })
    }
}

impl Columns {
    /// The vectors of `width` outputs in a row of `n_out` (at least 1).
    pub(crate) fn vectors(&self, n_out: usize) -> usize {
        (n_out / self.width).max(1)
    }

    /// The geometry of rows of `n_out` outputs for work-groups of `group` items:
    /// (work-items per row, rows read at once by a group, tiles).
    pub(crate) fn geometry(&self, n_out: usize, group: usize) -> (usize, usize, usize) {
        let vectors = self.vectors(n_out);
        let tiles = vectors.div_ceil(self.tile.max(1));
        let per_row = vectors.div_ceil(tiles);
        (per_row, group / per_row, tiles)
    }
}
