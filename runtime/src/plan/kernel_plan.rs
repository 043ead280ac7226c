//! What a kernel plan is: its values, inputs, scalars and outputs, the iteration space,
//! and for reductions the layout (`ReducePlan`) and the reductions joined into it. Plain
//! data: the passes and `fit` fill it in, codegen prints it, exec binds it.

use crate::dtype::{DType, ScalarBits};
use crate::graph::{IndexFn, ReduceOp, SearchSide};
pub(crate) use crate::layout::REDUCE_GROUP;

use super::access::{Affine, Bound};
use super::collect::{Inputs, Leaves, OpCode};
use super::gemm::GemmPlan;
use super::row_kernel::RowsPlan;
use super::scan::ScanPlan;

/// One value inside a fused kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// Load from input buffer `slot`.
    Load { slot: usize },
    /// Scalar kernel argument `slot`.
    Scalar { slot: usize },
    /// An operation over earlier values.
    Op { code: OpCode, args: Inputs },
    /// Whether the element's coordinates lie inside the box [`KernelPlan::insides`]
    /// `slot` gives (a `bool`: which source of a `concatenate` or `pad` it reads).
    Inside { slot: usize },
    /// A load from strided input `slot` at its offset plus value `index`, clamped into
    /// `0..len`, times `stride` (`take`: the picked axis is fixed at 0 in the offset).
    /// `len` and `stride` are kernel arguments. With `search`, instead the position
    /// (`Index`) a binary search over those `len` elements finds for value `index`
    /// (`searchsorted`).
    Gather {
        slot: usize,
        index: usize,
        len: usize,
        stride: usize,
        search: Option<SearchSide>,
    },
    /// A value computed from its index as `of` says (random numbers, the position
    /// itself) with the scalars `args` (for random numbers the seed, the stream offset,
    /// and for integers the range's low end and length), at the index of
    /// [`KernelPlan::index_reads`] `slot`: no memory is read.
    FromIndex { slot: usize, of: IndexFn, args: Inputs },
}

/// Where a kernel reads values computed from their index ([`Value::FromIndex`]): the
/// row-major index, in their node's own shape, of the coordinates it reads them at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexRead {
    /// `None`: the kernel's own linear index (the node read at the kernel's coordinates,
    /// or through views that keep its order), so that a vector step's lanes share one
    /// Philox call (or one base position). Else `base + Σ stride[k] * i_k` over the collapsed dims, whose base
    /// and strides are kernel arguments (`abi::Param::IndexOffset`, `IndexStride`);
    /// never bounded: a value read outside a region's box is computed but never used.
    pub(crate) index: Option<Affine>,
}

/// A value of a kernel and its element type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlannedValue {
    pub(crate) value: Value,
    pub(crate) dtype: DType,
    /// A guarded load read only as a branch of selects (a source of a region): printed
    /// inside the branch instead of as a statement of its own, so that only the chosen
    /// source is loaded.
    pub(crate) in_branch: bool,
}

/// An input buffer of a kernel (slot `k` is the kernel's `in{k}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Input {
    pub(crate) dtype: DType,
    /// Bit `k` set: the load broadcasts along collapsed dim `k` (0: a full-size load).
    /// For a strided load, the dims it does not move along.
    pub(crate) broadcast_mask: u32,
    /// Graph index of the node whose memory is read.
    pub(crate) node: usize,
    /// A view's load: its offset, strides and guard (kernel arguments), when the load is
    /// not the buffer's row-major order (a plain or broadcast load has `None`).
    pub(crate) strided: Option<Affine>,
}

impl Input {
    /// A plain load of every element in the kernel's order (`in{k}[i]`).
    pub(crate) fn is_full(&self) -> bool {
        self.broadcast_mask == 0 && self.strided.is_none()
    }
}

/// A scalar kernel argument (slot `k` is the kernel's `s{k}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScalarArg {
    pub(crate) dtype: DType,
    /// Where its bytes come from, at each launch (never part of the key).
    pub(crate) value: ScalarValue,
}

/// Where a scalar argument's bytes come from. A plan never holds a user's scalar: it
/// names the graph node, so that a replayed plan binds the new flush's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScalarValue {
    /// The host scalar at this graph index.
    Node(usize),
    /// Fixed by planning (a zero standing for an empty region).
    Constant(ScalarBits),
}

impl ScalarArg {
    /// Its bytes in the flush of `leaves`; `None` if that node is no scalar.
    pub(crate) fn bits<L: Leaves + ?Sized>(&self, leaves: &L) -> Option<ScalarBits> {
        match self.value {
            ScalarValue::Constant(bits) => Some(bits),
            ScalarValue::Node(j) => leaves.scalar(j),
        }
    }
}

/// An output of a kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Output {
    /// Index of the value written, in [`KernelPlan::values`] (a reduction's: the value
    /// reduced).
    pub(crate) value: usize,
    /// Element type of the output array.
    pub(crate) dtype: DType,
    /// Graph index of the node materialized.
    pub(crate) node: usize,
    /// Where an elementwise kernel stores into a region of an array
    /// (`slice_mut(..).assign`): the offsets of the region's elements. `None`: every
    /// element, in order.
    pub(crate) store: Option<Affine>,
    /// Added atomically through an index instead of stored (`scatter_add`; then `store`
    /// is the offset with the indexed axis at 0).
    pub(crate) scatter: Option<ScatterStore>,
}

/// An output added through an index: at `store`'s offset plus value `index` times
/// `stride`, dropped unless the index is in `0..len` (both kernel arguments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ScatterStore {
    pub(crate) index: usize,
    pub(crate) len: usize,
    pub(crate) stride: usize,
    /// Each work-group adds into a copy of the whole array of this many elements (a
    /// power of two at least its length) in local memory, then adds the copy's nonzero
    /// elements into the array: for a small array that many elements are added into,
    /// whose atomics would otherwise wait on each other ([`private_copy`]).
    pub(crate) private: Option<u32>,
    pub(crate) combine: super::ScatterCombine,
}

/// Bytes of local memory a scatter's private copy may take (16 KiB: half what every
/// OpenCL device has).
pub(crate) const PRIVATE_COPY_BYTES: usize = 16 * 1024;

/// The private copy for a scatter of `adds` elements into an array of `len` elements of
/// `size` bytes: when the array fits [`PRIVATE_COPY_BYTES`] and gets at least twice as
/// many adds as it has elements (fewer, and a copy's flush costs what it saves).
pub(crate) fn private_copy(adds: usize, len: usize, size: usize) -> Option<u32> {
    let slots = len.max(64).next_power_of_two();
    (slots * size <= PRIVATE_COPY_BYTES && adds >= 2 * len).then_some(slots as u32)
}

/// A box of the kernel's coordinates (`lo <= i{axis} < hi` for each bound, over the
/// collapsed dims), tested by a [`Value::Inside`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Inside {
    pub(crate) bounds: smallvec::SmallVec<[Bound; 2]>,
}

/// A kernel's structure and the run-time bindings of its arguments.
#[derive(Clone)]
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
    /// The boxes that [`Value::Inside`] values test, by slot.
    pub(crate) insides: Vec<Inside>,
    /// Where [`Value::FromIndex`] values are read, by slot.
    pub(crate) index_reads: Vec<IndexRead>,
    /// The collapsed iteration dims (outermost first; never empty).
    pub(crate) dims: Vec<usize>,
    /// Total work (product of dims).
    pub(crate) numel: usize,
    /// What kind of kernel it is, with what only that kind has.
    pub(crate) kind: KernelKind,
    /// Work-group size of a reduction kernel.
    pub(crate) group_size: u32,
    /// Element indices fit in 32 bits (cheaper index arithmetic).
    pub(crate) narrow_index: bool,
    /// Every offset a view's load or store computes, and every bound, fits a 32-bit `int`
    /// (cheaper index arithmetic), wherever the kernel computes it.
    pub(crate) narrow_offsets: bool,
    /// An invariant of planning failed for this kernel (a bug in lazycl): exec refuses
    /// to run it, with this message, instead of computing something wrong.
    pub(crate) broken: Option<String>,
    /// It stores a value its readers would otherwise recompute, and why
    /// ([`recompute`](super::recompute)).
    pub(crate) stored: Option<super::recompute::Stored>,
}

/// What kind of kernel a plan is, with what only that kind has. Matched exhaustively
/// wherever the kind matters (its source, its launch, its description), so that a new
/// kind is a new variant and the compiler lists every place that must handle it.
#[derive(Clone)]
pub(crate) enum KernelKind {
    /// A work-item per element (or per vector of neighbouring elements).
    Elementwise,
    /// Elementwise over tiles of its two innermost dims, staging the inputs it reads
    /// transposed through local memory (chosen by `fit`; see [`TILE`]).
    Tiled,
    /// Elementwise, finishing the split reduction it reads ([`FinishIn`]).
    Finishing(FinishIn),
    /// A reduction ([`ReducePlan`]), with the reductions joined into it.
    Reduction(ReducePlan),
    /// The running combination of its value along an axis ([`ScanPlan`]): one output.
    Scan(ScanPlan),
    /// Reductions along its rows and the elementwise work that reads them back, in
    /// phases ([`RowsPlan`]).
    Rows(RowsPlan),
    /// A matrix product with its operands' producers and its elementwise consumers
    /// ([`GemmPlan`]).
    Gemm(GemmPlan),
}

/// The side of the square tiles of a tiled elementwise kernel ([`KernelKind::Tiled`]):
/// a work-group of `TILE x TILE_ROWS` work-items covers `TILE x TILE` elements.
pub(crate) const TILE: usize = 32;
/// The rows of work-items of a tiled kernel's work-group (staging, each covers
/// `TILE / TILE_ROWS` rows of the tile).
pub(crate) const TILE_ROWS: usize = 8;
// A tiled kernel's work-items compute its tile four neighbours at a time, a row of the
// tile per `TILE / 4` of them.
const _: () = assert!(TILE_ROWS * crate::layout::VECTOR_WIDTH == TILE);

impl KernelPlan {
    /// Elements per work-item iteration of this plan's vectorized elementwise loop
    /// ([`crate::layout::vector_width`] of the element types it moves through memory).
    pub(crate) fn vector_width(&self) -> usize {
        let sizes = self
            .inputs
            .iter()
            .filter(|i| i.is_full() || i.strided.as_ref().is_some_and(|a| a.vectorizable()))
            .map(|i| crate::layout::vector_bytes(i.dtype))
            .chain(self.outputs.iter().map(|o| crate::layout::vector_bytes(o.dtype)));
        let (narrowest, widest) = sizes.fold((usize::MAX, 0), |(n, w), s| (n.min(s), w.max(s)));
        if widest == 0 {
            return crate::layout::VECTOR_WIDTH;
        }
        crate::layout::vector_width(narrowest, widest)
    }

    /// A plan over `dims` (`numel` elements) with nothing bound yet, for work-groups of
    /// `group_size` (0: the launch chooses).
    pub(crate) fn empty(dims: Vec<usize>, numel: usize, group_size: u32) -> KernelPlan {
        KernelPlan {
            key: Vec::with_capacity(64),
            values: Vec::new(),
            inputs: Vec::new(),
            scalars: Vec::new(),
            outputs: Vec::new(),
            insides: Vec::new(),
            index_reads: Vec::new(),
            dims,
            numel,
            kind: KernelKind::Elementwise,
            group_size,
            narrow_index: numel < u32::MAX as usize,
            narrow_offsets: false,
            broken: None,
            stored: None,
        }
    }

    /// The inputs a tiled kernel stages through local memory: strided, unguarded, moving
    /// by one element along the second-innermost dim and not along the innermost (a
    /// transposed read). Empty below rank 2.
    pub(crate) fn transposed_inputs(&self) -> Vec<bool> {
        let rank = self.dims.len();
        self.inputs
            .iter()
            .map(|i| {
                i.strided.as_ref().is_some_and(|a| {
                    rank >= 2
                        && a.bounds.is_empty()
                        && a.stride[rank - 2] == 1
                        && a.stride[rank - 1].abs() != 1
                })
            })
            .collect()
    }

    /// The plan of a reduction kernel (`None` for every other kind): for the passes that
    /// join reductions.
    pub(crate) fn as_reduction(&self) -> Option<&ReducePlan> {
        match &self.kind {
            KernelKind::Reduction(r) => Some(r),
            _ => None,
        }
    }

    /// Whether the kernel reads a view in a way the plain layouts do not (strided loads,
    /// boxes of a region, random numbers at an offset of their own) or stores into a
    /// region: the fusion passes leave such kernels alone, and codegen gives every
    /// element its collapsed indices `i{k}`.
    pub(crate) fn reads_views(&self) -> bool {
        !self.insides.is_empty()
            || self.inputs.iter().any(|i| i.strided.is_some())
            || self.index_reads.iter().any(|r| r.index.is_some())
            || self.outputs.iter().any(|o| o.store.is_some())
    }
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
