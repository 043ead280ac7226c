//! What a kernel plan is: its values, inputs, scalars and outputs, the iteration space,
//! and its kind (a reduction's layout and joined reductions: `reduce_plan`). Plain
//! data: the passes and `fit` fill it in, codegen prints it, exec binds it.

use crate::dtype::{DType, ScalarBits};
use crate::graph::{IndexFn, SearchSide};
pub(crate) use crate::layout::REDUCE_GROUP;

use super::access::{Affine, Bound};
use super::collect::{Inputs, Leaves, OpCode};
use super::fft::FftPlan;
use super::gemm::GemmPlan;
pub(crate) use super::reduce_plan::{
    ColumnRows, Columns, Finish, FinishIn, JoinedReduction, Layout, ReducePlan, VectorLoads,
};
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
    /// One pass of a Fourier transform along an axis, its operand's producers in its
    /// loads and its consumers in its stores ([`FftPlan`]).
    Fft(FftPlan),
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
