//! The generated kernels' parameters, as data: the one list each kernel's signature is
//! declared from, and that exec binds the arguments of a launch by ([`bind`]). The fused
//! kernels' here; the sort kernels' in [`sort`], the compaction kernel's in [`compact`].

pub(crate) mod compact;
pub(crate) mod select;
pub(crate) mod sort;

use super::ops::vt;
use super::writer::Src;
use crate::dtype::DType;
use crate::graph::ReduceOp;
use crate::plan::access::Affine;
use crate::plan::{Finish, KernelKind, KernelPlan, ScanLayout, Value};

/// The name of every generated fused kernel.
pub(crate) const FUSED_KERNEL_NAME: &str = "lazycl_fused";

/// The name of the second kernel of a GEMM split along `k` (the segments' sum and the
/// epilogue).
pub(crate) const GEMM_COMBINE_KERNEL_NAME: &str = "lazycl_gemm_combine";

/// The name of the combine kernel.
pub(crate) const COMBINE_KERNEL_NAME: &str = "lazycl_combine";

/// One parameter of a fused kernel (its name in the kernel after the colon).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Param {
    /// Input buffer `slot` (`in{slot}`): read only, except the result of the reduction a
    /// kernel finishes, which it writes ([`FinishIn`](crate::plan::FinishIn)).
    Input(usize),
    /// Scalar argument `slot` by value (`s{slot}`).
    Scalar(usize),
    /// Output `k` of an elementwise kernel (`out{k}`).
    Output(usize),
    /// An elementwise kernel's element count (`n`).
    Numel,
    /// Collapsed dim `k` (`d{k}_`).
    Dim(usize),
    /// The results of the row reduction computed inside a column reduction (`rowout`).
    RowResult,
    /// A reduction's values: the results with one segment, else the partials
    /// `[o * S + s]` (`outv`).
    Partials,
    /// An arg reduction's indices, like [`Param::Partials`] (`outi`).
    PartialIndices,
    /// A reduction's output count (`n_out_`).
    NOut,
    /// The elements reduced into each output (`n_red_`).
    NRed,
    /// Segments per output (`S_`).
    Segments,
    /// 1 with one segment: the kernel writes the final results (`fin`).
    OneSegment,
    /// The results of a reduction that finishes itself in its last work-group (`finv`;
    /// not an arg reduction's, whose results are [`Param::ResultIndices`]).
    Results,
    /// An arg reduction's results: its indices (`fini`).
    ResultIndices,
    /// The queue's counters of finished work-groups per block of outputs (`done`).
    FinishCounters,
    /// The parts of a total over the rows beside a row reduction, one per work-group
    /// (the result itself with one segment; `totv`).
    TotalParts,
    /// That total (`totout`).
    TotalResult,
    /// The queue's counters the total's work-groups count themselves in (`tdone`).
    TotalCounters,
    /// The partials of the split reduction an elementwise kernel finishes (`pv`).
    FinishedPartials,
    /// Its segments per output (`S`).
    FinishedSegments,
    /// Its elements reduced into each output (`n_total`).
    FinishedLength,
    /// The offset of strided input `slot`'s first element (`ob{slot}`).
    LoadOffset(usize),
    /// Its stride along collapsed dim `k` (`os{slot}_{k}`), for the dims it moves along.
    LoadStride(usize, usize),
    /// Bound `b` of its guard: the lowest coordinate read (`lb{slot}_{b}`) and one past
    /// the highest (`ub{slot}_{b}`).
    LoadLow(usize, usize),
    LoadHigh(usize, usize),
    /// Bound `b` of box test `slot` (`rl{slot}_{b}`, `rh{slot}_{b}`).
    InsideLow(usize, usize),
    InsideHigh(usize, usize),
    /// The offset of the first element output `k` stores into a region (`oo{k}`).
    StoreOffset(usize),
    /// Its stride along collapsed dim `d` (`oos{k}_{d}`), for the dims it moves along.
    StoreStride(usize, usize),
    /// The row-major index random values of `KernelPlan::index_reads` `slot` read at the
    /// kernel's first coordinates, where it is not the kernel's own (`rb{slot}`), and its
    /// stride along collapsed dim `k` (`rs{slot}_{k}`), for the dims it moves along.
    IndexOffset(usize),
    IndexStride(usize, usize),
    /// A GEMM kernel's `m`, `n` and `k` (`M_`, `N_`, `K_`; its batch axes are its first
    /// dims).
    GemmM,
    GemmN,
    GemmK,
    /// The number of matrices of the product (`batch_`).
    GemmBatch,
    /// Segments of `k` (`S_`: 1 unless split, [`GemmPlan::split`](crate::plan::GemmPlan::split)).
    GemmSegments,
    /// A split product's partial products, `[segment, .., m, n]` (`part`).
    GemmPartials,
    /// The results of a GEMM kernel's row reduction, `[.., m]` (`rout`).
    GemmRowResults,
    /// The length of the axis a `take` picks from input `slot` (`gn{slot}`), and that
    /// axis's stride (`gs{slot}`).
    GatherLen(usize),
    GatherStride(usize),
    /// The length of the axis output `k` adds into through an index (`sn{k}`), and that
    /// axis's stride (`ss{k}`).
    ScatterLen(usize),
    ScatterStride(usize),
    /// A scan's length along its axis (`len_`), the elements after it (`inner_`), and
    /// its columns, `outer * inner` (`cols_`).
    ScanLen,
    ScanInner,
    ScanColumns,
    /// Tiles per row of a tiled scan (`tiles_`).
    ScanTiles,
    /// A tiled scan's zeroed tile counter: the next tile's number (`status`).
    ScanStatus,
    /// Each tile's total (`agg`) and inclusive prefix (`incl`), zeroed, published as
    /// 64-bit words of a flag over 32 bits of the number (`codegen::scan`).
    ScanTotals,
    ScanPrefixes,
}

/// The parameters of the fused kernel of `plan`, in order. Every kernel starts with its
/// inputs and scalars and what its views, gathers and scatters add; then come its
/// kind's own ([`kind_params`]).
pub(crate) fn params(plan: &KernelPlan) -> impl Iterator<Item = Param> + '_ {
    use Param::*;
    (0..plan.inputs.len())
        .map(Input)
        .chain((0..plan.scalars.len()).map(Scalar))
        .chain(view_params(plan))
        .chain(gathered_slots(plan).flat_map(|slot| [GatherLen(slot), GatherStride(slot)]))
        .chain(
            (0..plan.outputs.len())
                .filter(|&k| plan.outputs[k].scatter.is_some())
                .flat_map(|k| [ScatterLen(k), ScatterStride(k)]),
        )
        .chain(kind_params(plan))
}

/// The parameters a kernel's kind adds. An elementwise kernel takes its outputs, its
/// length and the dims (and one finishing a split reduction, that reduction's partials
/// and sizes); a scan and a row kernel the same, a scan then its sizes and its tiles'
/// state; a reduction kernel its results or partials, sizes and the dims, then the
/// buffers of what it finishes or computes beside; a matrix product its outputs, batch
/// dims, sizes, and its partials and row results.
fn kind_params(plan: &KernelPlan) -> smallvec::SmallVec<[Param; 24]> {
    use Param::*;
    let mut p = smallvec::SmallVec::new();
    let outputs = (0..plan.outputs.len()).map(Output);
    let dims = |n: usize| (0..n).map(Dim);
    match &plan.kind {
        // (A transform pass's sizes are constants of its program.)
        KernelKind::Elementwise | KernelKind::Tiled | KernelKind::Rows(_) | KernelKind::Fft(_) => {
            p.extend(outputs.chain([Numel]).chain(dims(plan.dims.len())));
        }
        KernelKind::Finishing(_) => {
            p.extend(outputs.chain([Numel]).chain(dims(plan.dims.len())));
            p.extend([FinishedPartials, FinishedSegments, FinishedLength]);
        }
        KernelKind::Scan(s) => {
            p.extend(outputs.chain([Numel]).chain(dims(plan.dims.len())));
            p.extend([ScanLen, ScanInner, ScanColumns]);
            p.extend(when(
                s.layout != ScanLayout::Serial,
                [ScanTiles, ScanStatus, ScanTotals, ScanPrefixes],
            ));
        }
        KernelKind::Reduction(r) => {
            // (Indices travel beside the values of arg reductions only, whose results
            // are their indices alone: a launch pays for every argument it passes.)
            let arg = r.op.is_arg();
            let in_kernel = r.finish == Finish::InKernel;
            p.extend(when(r.row.is_some(), [RowResult]));
            p.push(Partials);
            p.extend(when(arg, [PartialIndices]));
            p.extend([NOut, NRed, Segments, OneSegment]);
            p.extend(dims(plan.dims.len()));
            p.extend(when(in_kernel && !arg, [Results]));
            p.extend(when(in_kernel && arg, [ResultIndices]));
            p.extend(when(in_kernel, [FinishCounters]));
            p.extend(when(
                r.row_total.is_some(),
                [TotalParts, TotalResult, TotalCounters],
            ));
        }
        KernelKind::Gemm(g) => {
            // (A GEMM kernel's dims: its batch axes only.)
            p.extend(outputs.chain(dims(plan.dims.len().saturating_sub(2))));
            p.extend([GemmM, GemmN, GemmK, GemmBatch, GemmSegments]);
            p.extend(when(g.split > 1, [GemmPartials]));
            p.extend(when(g.row.is_some(), [GemmRowResults]));
        }
    }
    p
}

/// The arguments of what views add (after the scalars; none without views): each
/// strided input's offset, strides and guard, each box test's bounds, each store into
/// a region's offset and strides, and the index of each read of random numbers that is
/// not the kernel's own.
fn view_params(plan: &KernelPlan) -> impl Iterator<Item = Param> + '_ {
    let moves = |a: &Affine| a.stride_args().collect::<Vec<_>>();
    let loads = plan.inputs.iter().enumerate().flat_map(move |(slot, input)| {
        let a = input.strided.as_ref();
        let strides = a.map(moves).unwrap_or_default();
        let bounds = a.map_or(0, |a| a.bounds.len());
        a.map(|_| Param::LoadOffset(slot))
            .into_iter()
            .chain(strides.into_iter().map(move |k| Param::LoadStride(slot, k)))
            .chain((0..bounds).flat_map(move |b| [Param::LoadLow(slot, b), Param::LoadHigh(slot, b)]))
    });
    let insides = plan.insides.iter().enumerate().flat_map(|(slot, inside)| {
        (0..inside.bounds.len()).flat_map(move |b| [Param::InsideLow(slot, b), Param::InsideHigh(slot, b)])
    });
    let stores = plan.outputs.iter().enumerate().flat_map(move |(k, output)| {
        let a = output.store.as_ref();
        let strides = a.map(moves).unwrap_or_default();
        a.map(|_| Param::StoreOffset(k))
            .into_iter()
            .chain(strides.into_iter().map(move |d| Param::StoreStride(k, d)))
    });
    let index_reads = plan.index_reads.iter().enumerate().flat_map(move |(slot, r)| {
        let a = r.index.as_ref();
        let strides = a.map(moves).unwrap_or_default();
        a.map(|_| Param::IndexOffset(slot))
            .into_iter()
            .chain(strides.into_iter().map(move |k| Param::IndexStride(slot, k)))
    });
    loads.chain(insides).chain(stores).chain(index_reads)
}

/// The input slots read through an index, each once, in order.
pub(crate) fn gathered_slots(plan: &KernelPlan) -> impl Iterator<Item = usize> + '_ {
    // (Launches list every kernel's parameters: one pass over the values when no take.)
    let any = plan
        .values
        .iter()
        .any(|v| matches!(v.value, Value::Gather { .. }));
    (0..plan.inputs.len()).filter(move |&slot| {
        any && plan
            .values
            .iter()
            .any(|v| matches!(v.value, Value::Gather { slot: s, .. } if s == slot))
    })
}

/// `params` where `on`, else none.
fn when<const N: usize>(on: bool, params: [Param; N]) -> impl Iterator<Item = Param> {
    on.then_some(params).into_iter().flatten()
}

/// One parameter of the combine kernel, the second pass of a split reduction (its name
/// in the kernel after the colon).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CombineParam {
    /// The reduction's partials `[o * S + s]` (`pv`).
    Partials,
    /// Their indices, for an arg reduction (`pi`).
    PartialIndices,
    /// The results (`outv`; not an arg reduction's).
    Results,
    /// An arg reduction's results: its indices (`outi`).
    ResultIndices,
    /// Segments per output (`S`).
    Segments,
    /// The elements reduced into each output (`n_total`).
    NRed,
    /// The output count (`n_out`).
    NOut,
}

/// The parameters of the combine kernel of a reduction `op`, in order: an arg
/// reduction's partials with their indices and its results as indices, another's values
/// only.
pub(crate) fn combine_params(op: ReduceOp) -> &'static [CombineParam] {
    use CombineParam::*;
    if op.is_arg() {
        &[Partials, PartialIndices, ResultIndices, Segments, NRed, NOut]
    } else {
        &[Partials, Results, Segments, NRed, NOut]
    }
}

/// Sets `args` to the arguments of a launch: one per parameter of `params` ([`params`]
/// of the plan, or [`combine_params`]), in order, each the one `arg` gives for it (a
/// `KernelArg` in exec). The first error `arg` returns ends
/// the binding and is returned.
pub(crate) fn bind<P, A, E>(
    params: impl IntoIterator<Item = P>,
    args: &mut Vec<A>,
    mut arg: impl FnMut(P) -> Result<A, E>,
) -> Result<(), E> {
    let params = params.into_iter();
    args.clear();
    // (Grown once: a flush's argument list is new, and pushing into it one by one
    // reallocated it three times a launch.)
    args.reserve(params.size_hint().0);
    for p in params {
        args.push(arg(p)?);
    }
    Ok(())
}

/// The declaration of parameter `p` in the kernel of `plan`.
fn declaration(plan: &KernelPlan, p: Param) -> String {
    // The element type of a reduction's values.
    let reduction = plan.as_reduction();
    let reduced = || reduction.map_or("", |r| vt(r.in_dtype));
    match p {
        Param::Input(k) => match &plan.kind {
            KernelKind::Finishing(f) if f.slot == k => format!("__global {}* in{k}", vt(f.dtype)),
            _ => format!("__global const {}* in{k}", plan.inputs[k].dtype.cl_memory()),
        },
        Param::Scalar(k) => format!("const {} s{k}", plan.scalars[k].dtype.cl_arg()),
        Param::Output(k) => format!("__global {}* out{k}", plan.outputs[k].dtype.cl_memory()),
        Param::Numel => "const ulong n".into(),
        Param::Dim(k) => format!("const ulong d{k}_"),
        Param::RowResult => format!(
            "__global {}* rowout",
            reduction.and_then(|r| r.row).map_or("", |row| vt(row.dtype))
        ),
        Param::Partials => format!("__global {}* outv", reduced()),
        Param::PartialIndices => "__global uint* outi".into(),
        Param::NOut => "const ulong n_out_".into(),
        Param::NRed => "const ulong n_red_".into(),
        Param::Segments => "const ulong S_".into(),
        Param::OneSegment => "const uint fin".into(),
        Param::Results => format!("__global {}* finv", reduced()),
        Param::ResultIndices => "__global uint* fini".into(),
        Param::FinishCounters => "volatile __global uint* done".into(),
        Param::TotalParts => format!("__global {}* totv", total_type(reduction)),
        Param::TotalResult => format!("__global {}* totout", total_type(reduction)),
        Param::TotalCounters => "volatile __global uint* tdone".into(),
        Param::FinishedPartials => {
            let dtype = match &plan.kind {
                KernelKind::Finishing(f) => vt(f.dtype),
                _ => "",
            };
            format!("__global const {dtype}* pv")
        }
        Param::FinishedSegments => "const ulong S".into(),
        Param::FinishedLength => "const ulong n_total".into(),
        Param::LoadOffset(slot) => format!("const {} ob{slot}", offsets(plan)),
        Param::LoadStride(slot, k) => format!("const {} os{slot}_{k}", offsets(plan)),
        Param::LoadLow(slot, b) => format!("const {} lb{slot}_{b}", offsets(plan)),
        Param::LoadHigh(slot, b) => format!("const {} ub{slot}_{b}", offsets(plan)),
        Param::InsideLow(slot, b) => format!("const {} rl{slot}_{b}", offsets(plan)),
        Param::InsideHigh(slot, b) => format!("const {} rh{slot}_{b}", offsets(plan)),
        Param::StoreOffset(k) => format!("const {} oo{k}", offsets(plan)),
        Param::StoreStride(k, d) => format!("const {} oos{k}_{d}", offsets(plan)),
        Param::IndexOffset(slot) => format!("const {} rb{slot}", offsets(plan)),
        Param::IndexStride(slot, k) => format!("const {} rs{slot}_{k}", offsets(plan)),
        Param::GemmM => "const int M_".into(),
        Param::GemmN => "const int N_".into(),
        Param::GemmK => "const int K_".into(),
        Param::GemmBatch => "const ulong batch_".into(),
        Param::GemmSegments => "const int S_".into(),
        Param::GemmPartials => format!("__global {}* part", gemm(plan).map_or("", |g| vt(g.dtype))),
        Param::GatherLen(slot) => format!("const long gn{slot}"),
        Param::ScatterLen(k) => format!("const long sn{k}"),
        Param::ScatterStride(k) => format!("const long ss{k}"),
        Param::GatherStride(slot) => format!("const long gs{slot}"),
        Param::ScanLen => "const ulong len_".into(),
        Param::ScanInner => "const ulong inner_".into(),
        Param::ScanColumns => "const ulong cols_".into(),
        Param::ScanTiles => "const ulong tiles_".into(),
        Param::ScanStatus => "volatile __global uint* status".into(),
        Param::ScanTotals => "volatile __global ulong* agg".into(),
        Param::ScanPrefixes => "volatile __global ulong* incl".into(),
        Param::GemmRowResults => format!(
            "__global {}* rout",
            gemm(plan).and_then(|g| g.row).map_or("", |r| vt(r.dtype))
        ),
    }
}

/// The type of views' offset, stride and bound arguments.
fn offsets(plan: &KernelPlan) -> &'static str {
    super::views::offset_type(plan)
}

/// The element type of a total over the rows beside a row reduction.
fn total_type(reduction: Option<&crate::plan::ReducePlan>) -> &'static str {
    reduction.and_then(|r| r.row_total).map_or("", |t| vt(t.dtype))
}

/// The plan of a matrix product kernel.
fn gemm(plan: &KernelPlan) -> Option<&crate::plan::GemmPlan> {
    match &plan.kind {
        KernelKind::Gemm(g) => Some(g),
        _ => None,
    }
}

/// The declaration of combine parameter `p` for element type `d`.
fn combine_declaration(p: CombineParam, d: DType) -> String {
    let t = vt(d);
    match p {
        CombineParam::Partials => format!("__global const {t}* pv"),
        CombineParam::PartialIndices => "__global const uint* pi".into(),
        CombineParam::Results => format!("__global {t}* outv"),
        CombineParam::ResultIndices => "__global uint* outi".into(),
        CombineParam::Segments => "const ulong S".into(),
        CombineParam::NRed => "const ulong n_total".into(),
        CombineParam::NOut => "const ulong n_out".into(),
    }
}

/// The first line of the fused kernel of `plan`, its parameters declared, after
/// `attributes` (empty, or ` __attribute__((...))`).
pub(super) fn fused_signature(plan: &KernelPlan, attributes: &str) -> String {
    signature(plan, FUSED_KERNEL_NAME, attributes)
}

/// The first line of a kernel named `name` that takes the parameters of `plan` (the
/// fused kernel, or the second kernel of a split GEMM, which takes the same).
pub(super) fn signature(plan: &KernelPlan, name: &str, attributes: &str) -> String {
    let params: Vec<String> = params(plan).map(|p| declaration(plan, p)).collect();
    format!("__kernel{attributes} void {name}({}) {{", params.join(", "))
}

/// The first line of the combine kernel for element type `d`.
pub(super) fn combine_signature(op: ReduceOp, d: DType) -> String {
    let params: Vec<String> = combine_params(op)
        .iter()
        .map(|&p| combine_declaration(p, d))
        .collect();
    format!("__kernel void {COMBINE_KERNEL_NAME}({}) {{", params.join(", "))
}

/// The dims as locals of the index type `ix` (`uint` when indices fit in 32 bits), so that
/// index arithmetic in the loops stays 32-bit.
pub(super) fn narrow_dims(rank: usize, ix: &str, src: &mut Src) {
    for k in 0..rank {
        src.line(format_args!("const {ix} d{k} = ({ix})d{k}_;"));
    }
}

#[cfg(test)]
mod tests;
