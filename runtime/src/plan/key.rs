//! The structural cache key of a kernel, written in this one place: every word of every
//! key is pushed by a function here. Equal keys give identical source; scalar values and
//! sizes are kernel arguments and never part of a key. A key is a `Vec<u32>` of tagged
//! records, in the order the planner meets them: the iteration space, the reduction's
//! layout, each value (load, scalar, op) and output, a total beside the rows, the
//! device-dependent choices (`fit`), and the split reduction a kernel finishes. Combine
//! kernels have keys of their own, which begin with a tag no fused key begins with.

use crate::dtype::DType;
use crate::graph::{FftReal, IndexFn, ReduceOp};

use super::access::{Affine, Bound};
use super::collect::OpCode;
use super::compact::{CompactPlan, Picked};
use super::fft::FftPlan;
use super::gemm::tiles::{Along, GemmTile};
use super::kernel_plan::{ColumnRows, Finish, FinishIn, JoinedReduction, Layout, ReducePlan, VectorLoads};
use super::row_kernel::{Hold, RowsLayout};
use super::scan::{ScanLayout, ScanPlan};
use super::select::{SelectPlan, SELECT_ITEMS};
use super::sort::{SortKernel, SortLayout, SortPlan};

const TAG_LOAD: u32 = 1;
const TAG_SCALAR: u32 = 2;
const TAG_OP: u32 = 3;
const TAG_OUT: u32 = 4;
const TAG_DIMS: u32 = 5;
const TAG_REDUCE: u32 = 6;
/// A reduction's device-dependent choices (then a word of flags, the column tile, the
/// row layout and the group size).
const TAG_FIT: u32 = 7;
/// A kernel that finishes a split reduction ([`FinishIn`]).
const TAG_FINISH_IN: u32 = 8;
/// A reduction over the rows computed beside a row reduction
/// ([`KernelPlan::row_total`](super::KernelPlan::row_total)).
const TAG_ROW_TOTAL: u32 = 9;
/// A load through a view ([`LoadKind::Strided`]): then the dims it moves along and those
/// it is guarded on.
const TAG_STRIDED_LOAD: u32 = 10;
/// A box test of a region ([`Value::Inside`](super::Value::Inside)): its slot and the
/// dims it bounds.
const TAG_INSIDE: u32 = 11;
/// An output stored into a region of an array: its index and the dims it moves along.
const TAG_STORE: u32 = 12;
/// An elementwise kernel over tiles ([`KernelPlan::tiled`](super::KernelPlan::tiled)).
const TAG_TILES: u32 = 13;
/// A kernel whose views' offsets are `int`s
/// ([`KernelPlan::narrow_offsets`](super::KernelPlan::narrow_offsets)).
const TAG_NARROW_OFFSETS: u32 = 14;
/// A GEMM kernel (`plan::gemm`): then its element type.
const TAG_GEMM: u32 = 15;
/// The start of a GEMM kernel's phase (left operand, right operand, epilogue).
const TAG_GEMM_PHASE: u32 = 16;
/// How a GEMM kernel loads its operands' tiles.
const TAG_GEMM_OPERANDS: u32 = 17;
/// A GEMM kernel's tiles.
const TAG_GEMM_TILE: u32 = 18;
/// The second kernel of a split GEMM (after its GEMM kernel's key).
const TAG_GEMM_COMBINE: u32 = 19;
/// A reduction along the rows of a GEMM kernel's epilogue.
const TAG_GEMM_ROW: u32 = 20;
/// A scan ([`ScanPlan`]): its operation, whether exclusive, its layout.
const TAG_SCAN: u32 = 21;
/// A load through an index ([`Value::Gather`](super::Value::Gather)).
const TAG_GATHER: u32 = 22;
/// An output added through an index ([`ScatterStore`](super::kernel_plan::ScatterStore)).
const TAG_SCATTER: u32 = 23;
/// The start of a scan's epilogue: then where its values start.
const TAG_SCAN_EPILOGUE: u32 = 24;
/// A row kernel ([`RowsPlan`](super::row_kernel::RowsPlan)): then the dims a row
/// merges and its layout.
const TAG_ROWS: u32 = 25;
/// A reduction of a row kernel: its operation, type and operand's value.
const TAG_ROW_REDUCTION: u32 = 26;
/// The start of a row kernel's epilogue: then where its values start.
const TAG_ROWS_EPILOGUE: u32 = 27;
/// Values computed from their index ([`Value::FromIndex`](super::Value::FromIndex)): what
/// they compute, their type, operands and how their index is computed.
const TAG_FROM_INDEX: u32 = 28;
/// Combine kernels (fused keys start with [`TAG_DIMS`]).
const TAG_COMBINE: u32 = 0xc0b1;
/// Sort kernels ([`SortPlan`]).
const TAG_SORT: u32 = 0x5027;
/// Compaction kernels ([`CompactPlan`]).
const TAG_COMPACT: u32 = 0xc0c7;
/// Selection kernels ([`SelectPlan`]).
const TAG_SELECT: u32 = 0x5e1e;
/// A transform pass: its direction, type, shape, radix, stages and vectors per group.
const TAG_FFT: u32 = 0xff7;

fn dtype_code(d: DType) -> u32 {
    d as u32
}

/// What a value computed from its index computes: its draw, or the position.
fn index_fn(f: IndexFn) -> u32 {
    match f {
        IndexFn::Random(draw) => draw as u32,
        IndexFn::Position => 0xff,
    }
}

fn op_code(c: OpCode) -> u32 {
    match c {
        OpCode::Unary(u) => 0x100 | u as u32,
        OpCode::Binary(b) => 0x200 | b as u32,
        OpCode::Ternary(t) => 0x300 | t as u32,
        OpCode::Reduce(r) => 0x400 | r.op as u32,
        OpCode::Expr(id) => 0x1_0000 + id,
        // Views, reshapes and regions are never values of their own (never keyed).
        OpCode::View => 0x500,
        OpCode::Reshape => 0x501,
        OpCode::Region => 0x502,
        // A GEMM epilogue's product (its accumulators).
        OpCode::MatMul => 0x503,
        // A scan is never a value inside a kernel.
        OpCode::Scan(_) => 0x504,
        // (A transform pass neither.)
        OpCode::Fft(_) => 0x505,
        OpCode::Take(t) => {
            0x8000_0000 | u32::from(t.search_code()) << 24 | u32::from(t.along) << 16 | t.axis as u32
        }
        OpCode::FromIndex(f) => 0x600 | index_fn(f),
    }
}

/// The collapsed iteration space: its rank and whether indices fit 32 bits.
pub(crate) fn dims(key: &mut Vec<u32>, rank: usize, narrow_index: bool) {
    key.extend([TAG_DIMS, rank as u32, u32::from(narrow_index)]);
}

/// An output combined through an index (`scatter_add`, `scatter`'s positions): the
/// output, the index's value, the size of a private copy (0: none) and how elements
/// combine (`ScatterCombine` as a number).
pub(crate) fn scatter(key: &mut Vec<u32>, output: usize, index: usize, private: Option<u32>, combine: u32) {
    key.extend([
        TAG_SCATTER,
        output as u32,
        index as u32,
        private.unwrap_or(0),
        combine,
    ]);
}

/// A load through an index (`take`), or a search for a value (`searchsorted`): the
/// input slot, the index's (or value's) value, and the search (0: none).
pub(crate) fn gather(key: &mut Vec<u32>, slot: usize, index: usize, search: u8) {
    key.extend([TAG_GATHER, slot as u32, index as u32, u32::from(search)]);
}

/// A scan: its operation, type, whether exclusive, and its layout.
pub(crate) fn scan(key: &mut Vec<u32>, s: &ScanPlan, group_size: u32) {
    let (items, per_row) = match s.layout {
        ScanLayout::Serial => (0, 0),
        ScanLayout::Tiles { items, per_row } => (items, per_row),
    };
    key.extend([
        TAG_SCAN,
        s.op as u32,
        dtype_code(s.dtype),
        u32::from(s.exclusive),
        items,
        per_row,
        group_size,
    ]);
}

/// A transform pass: everything its source spells out (its lengths are constants of the
/// program, as a plan's are: the twiddles are computed from them).
pub(crate) fn fft(key: &mut Vec<u32>, f: &FftPlan) {
    key.extend([
        TAG_FFT,
        u32::from(f.spec.inverse),
        dtype_code(f.dtype),
        f.spec.radix,
        f.spec.done,
        f.vectors,
        match f.spec.real {
            FftReal::No => 0,
            FftReal::Forward => 1,
            FftReal::Inverse => 2,
        },
    ]);
    for n in [f.outer, f.len, f.inner] {
        key.extend([n as u32, (n >> 32) as u32]);
    }
    key.push(f.stages.len() as u32);
    key.extend(&f.stages);
}

/// A reduction's layout as planned before the device is known.
pub(crate) fn reduce(key: &mut Vec<u32>, r: &ReducePlan, group_size: u32) {
    // (Lanes, vector loads, aligned ones, the column layout, outputs per work-item.)
    let [lanes, vector, aligned, columns, width] = match r.layout {
        Layout::Lanes { lanes, vector } => [
            lanes,
            u32::from(vector.is_some()),
            u32::from(vector.is_some_and(|v| v.aligned)),
            0,
            1,
        ],
        Layout::Serial => [0, 0, 0, 0, 1],
        Layout::Columns(c) => [0, 0, 0, 1, c.width as u32],
    };
    key.extend([
        TAG_REDUCE,
        r.op as u32,
        r.red_mask,
        lanes,
        group_size,
        vector,
        aligned,
        columns,
        width,
    ]);
}

/// A load from input `slot` with broadcast mask `mask`.
pub(crate) fn load(key: &mut Vec<u32>, dtype: DType, slot: usize, mask: u32) {
    key.extend([TAG_LOAD, dtype_code(dtype), slot as u32, mask]);
}

/// A load from input `slot` through a view: `mask` the dims it does not move along,
/// which dims its guard bounds, and whether its innermost stride is 1. (Its offset, other
/// strides and bounds are kernel arguments.)
pub(crate) fn strided_load(key: &mut Vec<u32>, dtype: DType, slot: usize, mask: u32, a: &Affine) {
    key.extend([
        TAG_STRIDED_LOAD,
        dtype_code(dtype),
        slot as u32,
        mask,
        bounded(&a.bounds),
        u32::from(a.unit_innermost()),
    ]);
}

/// Box test `slot` over the dims its bounds name.
pub(crate) fn inside(key: &mut Vec<u32>, slot: usize, bounds: &[Bound]) {
    key.extend([TAG_INSIDE, slot as u32, bounded(bounds)]);
}

/// Output `k` stored into a region with offsets `a`.
pub(crate) fn store(key: &mut Vec<u32>, k: usize, a: &Affine) {
    let moves = a
        .stride
        .iter()
        .enumerate()
        .fold(0u32, |m, (d, &s)| if s != 0 { m | 1 << d } else { m });
    key.extend([TAG_STORE, k as u32, moves, u32::from(a.unit_innermost())]);
}

/// The dims bounds name, as a bit mask.
fn bounded(bounds: &[Bound]) -> u32 {
    bounds.iter().fold(0, |m, b| m | 1 << b.axis)
}

/// A value computed from its index as `of` says (random numbers as their draw, the
/// position) in `dtype` from the scalars `args` (values), at the index of read `slot`: the kernel's own (`None`), or an offset over the coordinates
/// (`Some`) — the dims it moves along and whether its innermost stride is 1 (the offset
/// and strides are kernel arguments, never the seed, stream or range either).
pub(crate) fn from_index(
    key: &mut Vec<u32>,
    of: IndexFn,
    dtype: DType,
    slot: usize,
    index: Option<&Affine>,
    args: &[usize],
) {
    let (strided, moves, unit) = match index {
        None => (0, 0, 0),
        Some(a) => (
            1,
            a.stride
                .iter()
                .enumerate()
                .fold(0u32, |m, (d, &s)| if s != 0 { m | 1 << d } else { m }),
            u32::from(a.unit_innermost()),
        ),
    };
    key.extend([
        TAG_FROM_INDEX,
        index_fn(of),
        dtype_code(dtype),
        slot as u32,
        strided,
        moves,
        unit,
        args.len() as u32,
    ]);
    key.extend(args.iter().map(|&a| a as u32));
}

/// A scalar kernel argument.
pub(crate) fn scalar(key: &mut Vec<u32>, dtype: DType) {
    key.extend([TAG_SCALAR, dtype_code(dtype)]);
}

/// An operation over the values `args` (their indices).
pub(crate) fn op(key: &mut Vec<u32>, code: OpCode, dtype: DType, args: &[usize]) {
    key.extend([TAG_OP, op_code(code), dtype_code(dtype), args.len() as u32]);
    key.extend(args.iter().map(|&a| a as u32));
}

/// Value `value` is an output of element type `dtype`.
pub(crate) fn output(key: &mut Vec<u32>, value: usize, dtype: DType) {
    key.extend([TAG_OUT, value as u32, dtype_code(dtype)]);
}

/// A reduction over the rows computed beside the row reduction.
pub(crate) fn row_total(key: &mut Vec<u32>, t: &JoinedReduction) {
    key.extend([TAG_ROW_TOTAL, t.op as u32, t.value as u32, dtype_code(t.dtype)]);
}

/// The device-dependent choices `fit` made for a reduction.
pub(crate) fn fit(key: &mut Vec<u32>, r: &ReducePlan, group_size: u32) {
    let contiguous = matches!(
        r.layout,
        Layout::Lanes {
            vector: Some(VectorLoads { contiguous: true, .. }),
            ..
        }
    );
    let flags =
        u32::from(r.finish == Finish::InKernel) | u32::from(contiguous) << 1 | u32::from(r.compensated) << 2;
    // (The vector loads' width and alignment: `fit` widens them for narrow inputs.)
    if let Layout::Lanes { vector: Some(v), .. } = r.layout {
        key.extend([v.width as u32, u32::from(v.aligned)]);
    }
    // (The tile, vectors a row read whole, vectors a work-item holds of rows a group
    // shares.) Layouts without tiles write the group size as the tile.
    let [tile, whole_rows, group_rows] = match r.layout {
        Layout::Columns(c) => match c.rows {
            ColumnRows::RowsPerItem { vectors } => [c.tile, vectors, 0],
            ColumnRows::GroupRows { vectors_per_item } => [c.tile, 0, vectors_per_item],
            ColumnRows::Plain | ColumnRows::RowLoop => [c.tile, 0, 0],
        },
        Layout::Lanes { .. } | Layout::Serial => [group_size as usize, 0, 0],
    };
    key.extend([
        TAG_FIT,
        flags,
        tile as u32,
        whole_rows as u32,
        group_rows as u32,
        group_size,
    ]);
}

/// The elementwise kernel runs over tiles, staging the inputs `staged` marks.
pub(crate) fn tiles(key: &mut Vec<u32>, staged: &[bool]) {
    key.push(TAG_TILES);
    key.push(
        staged
            .iter()
            .enumerate()
            .fold(0u32, |m, (s, &on)| if on { m | 1 << s } else { m }),
    );
}

/// Whether a kernel with views computes their offsets in `int` (nothing without views).
pub(crate) fn offsets(key: &mut Vec<u32>, narrow: bool) {
    if narrow {
        key.push(TAG_NARROW_OFFSETS);
    }
}

/// The split reduction this elementwise kernel finishes.
pub(crate) fn finish_in(key: &mut Vec<u32>, f: &FinishIn) {
    key.extend([
        TAG_FINISH_IN,
        f.slot as u32,
        f.op as u32,
        dtype_code(f.dtype),
        f.lanes,
        f.group,
    ]);
}

/// A GEMM kernel multiplying elements of `dtype`.
pub(crate) fn gemm(key: &mut Vec<u32>, dtype: DType) {
    key.extend([TAG_GEMM, dtype_code(dtype)]);
}

/// The values that follow (from `start`) are a scan's epilogue.
pub(crate) fn scan_epilogue(key: &mut Vec<u32>, start: usize) {
    key.extend([TAG_SCAN_EPILOGUE, start as u32]);
}

/// A row kernel over rows of the innermost `inner` dims, laid out as `layout` says.
pub(crate) fn rows(key: &mut Vec<u32>, inner: usize, layout: &RowsLayout) {
    let items = match layout.hold {
        Hold::Registers { items } => items,
        Hold::Reread => 0,
    };
    key.extend([
        TAG_ROWS,
        inner as u32,
        layout.per_row,
        items,
        layout.group,
        layout.width,
        layout.online as u32,
    ]);
}

/// A reduction of a row kernel, of the operand's value `value`.
pub(crate) fn row_reduction(key: &mut Vec<u32>, op: ReduceOp, dtype: DType, value: usize) {
    key.extend([TAG_ROW_REDUCTION, op as u32, dtype_code(dtype), value as u32]);
}

/// The start of a row kernel's epilogue (its values from `start` on).
pub(crate) fn rows_epilogue(key: &mut Vec<u32>, start: usize) {
    key.extend([TAG_ROWS_EPILOGUE, start as u32]);
}

/// The values that follow belong to the next phase of a GEMM kernel.
pub(crate) fn gemm_phase(key: &mut Vec<u32>) {
    key.push(TAG_GEMM_PHASE);
}

/// How a GEMM kernel loads each operand's tiles.
pub(crate) fn gemm_operands(key: &mut Vec<u32>, left: Along, right: Along) {
    key.extend([TAG_GEMM_OPERANDS, left as u32, right as u32]);
}

/// A reduction along the rows of a GEMM kernel's epilogue value `value`.
pub(crate) fn gemm_row(key: &mut Vec<u32>, op: ReduceOp, value: usize, dtype: DType) {
    key.extend([TAG_GEMM_ROW, op as u32, value as u32, dtype_code(dtype)]);
}

/// The tiles of a GEMM kernel, whether each operand's vector loads are aligned, and
/// whether it is split along `k`.
pub(crate) fn gemm_tile(key: &mut Vec<u32>, t: &GemmTile, aligned: [bool; 2], split: bool) {
    key.extend([
        TAG_GEMM_TILE,
        u32::from(split),
        u32::from(aligned[0]),
        u32::from(aligned[1]),
        u32::from(t.unroll),
        u32::from(t.bm),
        u32::from(t.bn),
        u32::from(t.bk),
        u32::from(t.tm),
        u32::from(t.tn),
        u32::from(t.vector),
    ]);
}

/// The key of the second kernel of a split GEMM whose key is `gemm`.
pub(crate) fn gemm_combine(gemm: &[u32]) -> Vec<u32> {
    let mut key = gemm.to_vec();
    key.push(TAG_GEMM_COMBINE);
    key
}

/// The key of a combine kernel.
pub(crate) fn combine(op: ReduceOp, dtype: DType, group: u32, lanes: u32) -> [u32; 5] {
    [TAG_COMBINE, op as u32, dtype as u32, group, lanes]
}

/// The key of one of a sort's kernels: the sizes its source is written for. The key
/// type's kind, the order and what is stored are arguments (`sort::flags`), so that
/// one program serves every key type of a size; the rows and their length are too.
pub(crate) fn sort(kernel: SortKernel, p: &SortPlan) -> [u32; 7] {
    let (layout, group, items) = match p.layout {
        SortLayout::Local { group, items } => (0, group, items),
        SortLayout::Radix { items, hist_items } => (1, items, hist_items),
    };
    let payload = if kernel == SortKernel::Hist {
        0
    } else {
        p.payload.bytes()
    };
    [
        TAG_SORT,
        kernel as u32,
        p.dtype.size() as u32,
        payload,
        layout,
        group,
        items,
    ]
}

/// The key of a selection kernel of `group` work-items: the sizes its source is written
/// for. The key type's kind, the order, `k` and the row length are arguments, so that
/// one program serves every selection of keys of a size with that group and buffer.
pub(crate) fn select(p: &SelectPlan, group: u32) -> [u32; 5] {
    [TAG_SELECT, p.dtype.size() as u32, group, SELECT_ITEMS, p.cap]
}

/// The key of a compaction kernel: what it picks and its tile (never the length).
pub(crate) fn compact(p: &CompactPlan) -> [u32; 4] {
    let positions = u32::from(p.picked == Picked::Positions);
    [TAG_COMPACT, positions, p.picked.bytes(), p.items]
}
