//! A fused kernel's memory, in one place: before a kernel of a flush is launched, the
//! launch loop asks [`allocate`] for every buffer it writes — its outputs (the flush's
//! targets where it has some) and what its kind needs beside them: a reduction's
//! partials and the results of the reductions joined into it, a matrix product's row
//! results and partial products, a tiled scan's published tile words. Each comes from the
//! context's pool (`DeviceBuffer::uninit`), which gives back the memory of arrays no
//! longer referenced. The launchers allocate nothing; the device algorithms (sorts,
//! selection, compaction) size their scratch from their own plans in their launchers.

use std::sync::Arc;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::ContextInner;
use crate::backend::queue::QueueInner;
use crate::error::Result;
use crate::plan::{GemmPlan, KernelKind, KernelPlan, ReducePlan, ScanLayout, ScanPlan};

/// The flush's buffers for given graph nodes (its targets).
pub(super) type Targets<'a> = &'a [(usize, Arc<DeviceBuffer>)];

/// Every buffer one kernel writes.
pub(super) struct KernelMemory {
    /// Its outputs, in order.
    pub(super) outputs: smallvec::SmallVec<[Arc<DeviceBuffer>; 4]>,
    /// What its kind writes beside them.
    pub(super) beside: Beside,
}

/// What a kernel's kind writes beside its outputs.
pub(super) enum Beside {
    /// Nothing (elementwise kernels, row kernels, serial scans).
    Nothing,
    /// A reduction's partials (its output itself with one segment) and the results of
    /// the reductions joined into it.
    Reduction {
        partials: PartialBuffers,
        row: Option<Arc<DeviceBuffer>>,
        total: Option<RowTotalBuffers>,
    },
    /// A matrix product's row results and partial products (split along `k`).
    Gemm(GemmBuffers),
    /// A tiled scan's tile states and words.
    Scan(ScanBuffers),
}

/// A reduction's partials and their indices (one buffer for both where the reduction
/// is not an arg one; the output itself with one segment).
pub(crate) struct PartialBuffers {
    pub(crate) values: Arc<DeviceBuffer>,
    pub(crate) indices: Arc<DeviceBuffer>,
}

/// The buffers of a reduction over the rows computed beside a row reduction
/// ([`ReducePlan::row_total`]): one part per work-group (the result itself with one
/// segment) and the one-element result.
pub(crate) struct RowTotalBuffers {
    pub(crate) parts: Arc<DeviceBuffer>,
    pub(crate) result: Arc<DeviceBuffer>,
}

/// A matrix product's row results (where a row reduction is computed in its store) and
/// partial products (where it is split along `k`).
#[derive(Default)]
pub(crate) struct GemmBuffers {
    pub(crate) rows: Option<Arc<DeviceBuffer>>,
    pub(crate) partials: Option<Arc<DeviceBuffer>>,
}

/// The buffers a tiled scan's work-groups publish their tiles in (zeroed before its
/// launch).
pub(crate) struct ScanBuffers {
    pub(crate) status: Arc<DeviceBuffer>,
    pub(crate) totals: Arc<DeviceBuffer>,
    pub(crate) prefixes: Arc<DeviceBuffer>,
    /// Bytes of `status`, and of `totals` and `prefixes` each.
    pub(crate) status_bytes: usize,
    pub(crate) words_bytes: usize,
}

/// The memory of kernel `plan`: the flush's target for a node that has one, else a
/// buffer of the pool. A kernel that is not `launched` (an empty one) gets its outputs
/// only.
pub(super) fn allocate(
    ctx: &Arc<ContextInner>,
    queue: &QueueInner,
    plan: &KernelPlan,
    targets: Targets<'_>,
    launched: bool,
) -> Result<KernelMemory> {
    let mut outputs = smallvec::SmallVec::new();
    for (k, o) in plan.outputs.iter().enumerate() {
        // (A reduction has one element per output; a row kernel's reductions one per row.)
        let len = match &plan.kind {
            KernelKind::Reduction(r) => r.n_out,
            KernelKind::Rows(r) if r.reductions.iter().any(|red| red.output == k) => r.rows,
            _ => plan.numel,
        };
        outputs.push(target_or_new(
            ctx,
            queue,
            targets,
            o.node,
            len * o.dtype.size(),
            "a kernel's output",
        )?);
    }
    let beside = match &plan.kind {
        _ if !launched => Beside::Nothing,
        KernelKind::Reduction(r) if r.n_out == 0 => Beside::Nothing,
        KernelKind::Reduction(r) => reduction(ctx, queue, r, &outputs[0], targets)?,
        KernelKind::Gemm(g) => Beside::Gemm(gemm(ctx, queue, plan, g, targets)?),
        KernelKind::Scan(s) if s.layout != ScanLayout::Serial => Beside::Scan(scan(ctx, queue, plan, s)?),
        KernelKind::Scan(_)
        | KernelKind::Fft(_)
        | KernelKind::Elementwise
        | KernelKind::Tiled
        | KernelKind::Finishing(_)
        | KernelKind::Rows(_) => Beside::Nothing,
    };
    Ok(KernelMemory { outputs, beside })
}

/// The flush's buffer for graph node `node`, or a new one of `bytes`.
fn target_or_new(
    ctx: &ContextInner,
    queue: &QueueInner,
    targets: Targets<'_>,
    node: usize,
    bytes: usize,
    what: &'static str,
) -> Result<Arc<DeviceBuffer>> {
    match targets.iter().find(|(t, _)| *t == node) {
        Some((_, b)) => Ok(b.clone()),
        None => DeviceBuffer::uninit(&ctx.cl, bytes, queue, what),
    }
}

/// A reduction's partials (its output `out` with one segment), the results of a row
/// reduction computed inside, and the parts and result of a total beside.
fn reduction(
    ctx: &ContextInner,
    queue: &QueueInner,
    r: &ReducePlan,
    out: &Arc<DeviceBuffer>,
    targets: Targets<'_>,
) -> Result<Beside> {
    let s = r.segments;
    let partials = if s > 1 {
        let n_parts = r.n_out * s;
        let values = DeviceBuffer::uninit(
            &ctx.cl,
            n_parts * r.in_dtype.value_size(),
            queue,
            "a reduction's partial results",
        )?;
        let indices = match r.op.is_arg() {
            true => DeviceBuffer::uninit(&ctx.cl, n_parts * 4, queue, "a reduction's partial indices")?,
            false => values.clone(),
        };
        PartialBuffers { values, indices }
    } else {
        PartialBuffers {
            values: out.clone(),
            indices: out.clone(),
        }
    };
    let row = match &r.row {
        Some(row) => Some(target_or_new(
            ctx,
            queue,
            targets,
            row.node,
            r.n_red * row.dtype.size(),
            "a row kernel's row results",
        )?),
        None => None,
    };
    let total = match &r.row_total {
        Some(t) => {
            let result = target_or_new(ctx, queue, targets, t.node, t.dtype.size(), "a reduction's total")?;
            let parts = if s > 1 {
                DeviceBuffer::uninit(
                    &ctx.cl,
                    s * t.dtype.value_size(),
                    queue,
                    "a total's partial results",
                )?
            } else {
                result.clone()
            };
            Some(RowTotalBuffers { parts, result })
        }
        None => None,
    };
    Ok(Beside::Reduction { partials, row, total })
}

/// A matrix product's row results and partial products.
pub(super) fn gemm(
    ctx: &ContextInner,
    queue: &QueueInner,
    plan: &KernelPlan,
    g: &GemmPlan,
    targets: Targets<'_>,
) -> Result<GemmBuffers> {
    let rows = match g.row {
        Some(row) => Some(target_or_new(
            ctx,
            queue,
            targets,
            row.node,
            g.matrices() * g.m * row.dtype.size(),
            "a matrix product's row results",
        )?),
        None => None,
    };
    let partials = match g.split {
        0 | 1 => None,
        s => Some(DeviceBuffer::uninit(
            &ctx.cl,
            s * plan.numel * g.dtype.value_size(),
            queue,
            "a split matrix product's partial products",
        )?),
    };
    Ok(GemmBuffers { rows, partials })
}

/// A tiled scan's tile states (a counter) and each tile's total and prefix (a 64-bit
/// word per 32 bits).
fn scan(ctx: &ContextInner, queue: &QueueInner, plan: &KernelPlan, s: &ScanPlan) -> Result<ScanBuffers> {
    let tiles = s.tiles(plan.group_size);
    let status_bytes = 4;
    let words_bytes = tiles * s.dtype.size().div_ceil(4) * 8;
    Ok(ScanBuffers {
        status: DeviceBuffer::uninit(&ctx.cl, status_bytes, queue, "a scan's tile states")?,
        totals: DeviceBuffer::uninit(&ctx.cl, words_bytes, queue, "a scan's tile sums")?,
        prefixes: DeviceBuffer::uninit(&ctx.cl, words_bytes, queue, "a scan's tile sums")?,
        status_bytes,
        words_bytes,
    })
}
