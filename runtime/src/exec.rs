//! Materialization: plans a flush (collect → cut → group → per-kernel plan), finds each
//! kernel in the structural cache (generating and building it only on a miss), allocates
//! outputs from the pool, launches, and marks the outputs as materialized.

use std::fmt::Write;
use std::sync::Arc;

use crate::array::Array;
use crate::buffer::DeviceBuffer;
use crate::codegen::{combine_source, fused_source, COMBINE_KERNEL_NAME, FUSED_KERNEL_NAME};
use crate::context::ContextInner;
use crate::dtype::Element;
use crate::dtype::{DType, ScalarBits};
use crate::error::{Error, Result};
use crate::fit::{fit_group_rows, fit_reduction, wants_group_rows, widest_shared_row, work_items_cap};
use crate::fuse::{
    collect, finish_in_consumers, fuse_row_totals, fuse_rows_into_columns, group_kernels,
    materialization_points, plan_kernel, FusedKernel, GKind, GNode, KernelPlan, ReducePlan, REDUCE_GROUP,
    TAG_FIT,
};
use crate::graph::NodeRef;
use crate::graph::ReduceOp;
use crate::kernel::{CompiledKernel, KernelArg};
use crate::layout::VECTOR_WIDTH;
use crate::program::{build_options, obtain};
use crate::queue::{Command, Queue, QueueInner};
use crate::stats::Counters;

/// Fixed kernel arguments besides inputs, scalars and outputs: `n` and up to this many dims.
const MAX_ARGS_CEILING: usize = 96;

/// Global and local size for `work` independent work-items. GPUs get explicit 256-item
/// work-groups (a driver's own choice for an odd global size can be tiny, which halves
/// occupancy); CPUs choose their own.
fn grid(ctx: &ContextInner, work: usize) -> (usize, Option<usize>) {
    match ctx.device.device_type {
        crate::device::DeviceType::Gpu => {
            let local = reduce_group_size(ctx) as usize;
            (work.max(1).div_ceil(local) * local, Some(local))
        }
        _ => (work.max(1).div_ceil(64) * 64, None),
    }
}

/// Work-group size of reduction kernels: 256, or the largest power of two the device allows.
fn reduce_group_size(ctx: &ContextInner) -> u32 {
    let max = ctx.device.max_work_group_size.clamp(1, REDUCE_GROUP as usize) as u32;
    1 << (31 - max.leading_zeros())
}

fn max_args(ctx: &ContextInner) -> usize {
    // Every argument takes at most 8 bytes; leave room for outputs, n and dims.
    (ctx.device.max_parameter_bytes / 8)
        .saturating_sub(40)
        .clamp(8, MAX_ARGS_CEILING)
}

/// The most elements a computed array (and so a kernel's iteration space) may have.
/// 2^48 elements is more than a thousand times what the largest device holds, and takes
/// a GPU minutes even for a kernel that only counts; an array beyond it is a mistake
/// (a broadcast to the wrong shape), and an error beats a kernel that never finishes.
pub(crate) const MAX_ELEMENTS: u64 = 1 << 48;

/// `Ok` if an array of `shape` can be computed (see [`MAX_ELEMENTS`]).
fn check_iteration_space(shape: &[usize]) -> Result<()> {
    let n = shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d as u64));
    match n {
        Some(n) if n <= MAX_ELEMENTS => Ok(()),
        _ => Err(Error::TooLarge {
            op: "materializing an array".into(),
            shape: shape.to_vec(),
            reason: format!(
                "{} elements; a computed array may have at most 2^48 = {MAX_ELEMENTS}",
                n.map_or("more than 2^64".to_string(), |n| n.to_string())
            ),
        }),
    }
}

/// A planned flush.
struct Flush {
    ctx: Arc<ContextInner>,
    graph: Vec<GNode>,
    kernels: Vec<KernelPlan>,
}

fn plan(roots: &[NodeRef]) -> Result<Option<Flush>> {
    let Some(first) = roots.first() else {
        return Ok(None);
    };
    let ctx = first.ctx.clone();
    for (i, r) in roots.iter().enumerate() {
        ctx.tag.check(
            &r.ctx.tag,
            || "eval".into(),
            || format!("array {} of {} (shape {:?})", i + 1, roots.len(), r.shape),
        )?;
    }
    let graph = collect(roots)?;
    for g in &graph {
        if let GKind::Op(..) = g.kind {
            check_iteration_space(&g.node.shape)?;
        }
    }
    let root_idx: Vec<usize> = roots
        .iter()
        .filter_map(|r| graph.iter().position(|g| Arc::ptr_eq(&g.node, r)))
        .collect();
    let mat = materialization_points(&graph, &root_idx, max_args(&ctx));
    let mut cut = mat.clone();
    for &r in &root_idx {
        cut[r] = false;
    }
    let groups = group_kernels(&graph, &mat, &cut);
    let group_size = reduce_group_size(&ctx);
    let plans = groups
        .iter()
        .map(|members| plan_kernel(&graph, &mat, members, group_size, None, None))
        .collect();
    let plans = fuse_rows_into_columns(&graph, &mat, plans, group_size, widest_shared_row(&ctx));
    let mut kernels: Vec<KernelPlan> = fuse_row_totals(&graph, &mat, plans, group_size, max_args(&ctx))
        .into_iter()
        .map(|mut plan| {
            let one_tile = plan.row.is_some();
            if let Some(r) = &mut plan.reduce {
                if one_tile && wants_group_rows(r, plan.group_size) {
                    plan.group_size = fit_group_rows(&ctx, r);
                } else {
                    fit_reduction(&ctx, r, plan.group_size, one_tile);
                }
                plan.key.extend([
                    TAG_FIT,
                    u32::from(r.finish_in_kernel)
                        | u32::from(r.contiguous_lanes) << 1
                        | u32::from(r.compensated) << 2,
                    r.column_tile as u32,
                    r.row_vectors as u32,
                    r.group_rows as u32,
                    plan.group_size,
                ]);
            }
            plan
        })
        .collect();
    finish_in_consumers(&mut kernels, group_size);
    Ok(Some(Flush { ctx, graph, kernels }))
}

/// Finds or builds the kernel for a plan. A hit builds no string and no program.
fn kernel_for(ctx: &ContextInner, plan: &KernelPlan) -> Result<Arc<FusedKernel>> {
    cached_kernel(ctx, &plan.key, FUSED_KERNEL_NAME, || {
        for (_, d) in &plan.values {
            ctx.check_dtype(*d)?;
        }
        Ok(fused_source(plan))
    })
}

/// The second-pass kernel of a split reduction.
fn combine_kernel(
    ctx: &ContextInner,
    op: ReduceOp,
    dtype: DType,
    group: u32,
    lanes: u32,
) -> Result<Arc<FusedKernel>> {
    let key = [TAG_COMBINE, op as u32, dtype as u32, group, lanes];
    cached_kernel(ctx, &key, COMBINE_KERNEL_NAME, || {
        Ok(combine_source(op, dtype, group, lanes))
    })
}

/// Cache-key tag of combine kernels (fused keys start with a small tag instead).
const TAG_COMBINE: u32 = 0xc0b1;

fn cached_kernel(
    ctx: &ContextInner,
    key: &[u32],
    name: &str,
    source: impl FnOnce() -> Result<String>,
) -> Result<Arc<FusedKernel>> {
    if let Some(k) = ctx
        .fused_kernels
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(key)
    {
        Counters::add(&ctx.counters.kernel_cache_hits, 1);
        return Ok(k.clone());
    }
    Counters::add(&ctx.counters.kernel_cache_misses, 1);
    let source = source()?;
    // Built outside the cache lock: launches of cached kernels on other threads go on.
    let options = build_options(ctx, true);
    let program = obtain(ctx, name, &source, options)?;
    let kernel = CompiledKernel::create(ctx, program, name, &source, options)?;
    let fused = Arc::new(FusedKernel { kernel });
    let mut cache = ctx.fused_kernels.lock().unwrap_or_else(|e| e.into_inner());
    Ok(cache.entry(key.to_vec()).or_insert(fused).clone())
}

/// The buffers of a reduction over the rows computed beside a row reduction
/// ([`RowTotal`](crate::fuse::RowTotal)): one part per work-group (the result itself
/// with one segment) and the one-element result.
struct RowTotalBuffers {
    parts: Arc<DeviceBuffer>,
    result: Arc<DeviceBuffer>,
}

/// Enqueues a reduction plan: one pass, or two when split into segments (unless the
/// kernel finishes itself, or its consumer does: then the partials are returned, for it).
#[allow(clippy::too_many_arguments)]
fn launch_reduce(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    kernel: &FusedKernel,
    plan: &KernelPlan,
    r: &ReducePlan,
    args: &mut Vec<KernelArg>,
    reads: &[&DeviceBuffer],
    out: &Arc<DeviceBuffer>,
    row_out: Option<&DeviceBuffer>,
    total: Option<&RowTotalBuffers>,
) -> Result<Option<Arc<DeviceBuffer>>> {
    let group = plan.group_size;
    let s = r.segments;
    let n_parts = r.n_out * s;
    let (pv, pi) = if s > 1 {
        let pv = DeviceBuffer::uninit(ctx, n_parts * r.in_dtype.size())?;
        let pi = if r.op.is_arg() {
            DeviceBuffer::uninit(ctx, n_parts * 8)?
        } else {
            pv.clone()
        };
        (pv, pi)
    } else {
        (out.clone(), out.clone())
    };
    args.push(KernelArg::Mem(pv.mem()));
    args.push(KernelArg::Mem(pi.mem()));
    args.push(KernelArg::ulong(r.n_out as u64));
    args.push(KernelArg::ulong(r.n_red as u64));
    args.push(KernelArg::ulong(s as u64));
    args.push(KernelArg::Scalar(ScalarBits {
        bits: u64::from(s == 1),
        size: 4,
    }));
    for &d in &plan.dims {
        args.push(KernelArg::ulong(d as u64));
    }
    let mut writes: smallvec::SmallVec<[&DeviceBuffer; 4]> = smallvec::smallvec![&*pv];
    if !Arc::ptr_eq(&pv, &pi) {
        writes.push(&pi);
    }
    // The combine pass reads the partials only, not the row reduction's results.
    let partials = writes.len();
    writes.extend(row_out);
    // One work-group per block of outputs (lanes) or tile (columns) and segment; else one
    // work-item per output and segment.
    let (global, local) = match group.checked_div(r.lanes) {
        None if r.group_rows > 0 => (s * group as usize, Some(group as usize)),
        Some(rows) => (
            r.n_out.div_ceil(rows as usize) * s * group as usize,
            Some(group as usize),
        ),
        None if r.columns => {
            let (_, _, tiles) = r.column_geometry(group as usize);
            (tiles * s * group as usize, Some(group as usize))
        }
        None => grid(ctx, r.n_out * s),
    };
    let local = local.as_ref().map(std::slice::from_ref);
    if r.finish_in_kernel {
        // The last work-group of each block writes the result; partials stay private.
        args.push(KernelArg::Mem(out.mem()));
        args.push(KernelArg::Mem(out.mem()));
        args.push(KernelArg::Mem(queue.finish_counters(ctx.cl_context_handle())?));
        writes.push(out);
    }
    if let Some(t) = total {
        // A reduction over the rows beside: its parts, its result, the counters.
        args.push(KernelArg::Mem(t.parts.mem()));
        args.push(KernelArg::Mem(t.result.mem()));
        args.push(KernelArg::Mem(queue.finish_counters(ctx.cl_context_handle())?));
        writes.push(&t.result);
        if !Arc::ptr_eq(&t.parts, &t.result) {
            writes.push(&t.parts);
        }
    }
    kernel
        .kernel
        .launch(ctx, queue, Command::new(reads, &writes), &[global], local, args)?;
    if r.finish_in_kernel {
        return Ok(None);
    }
    if s > 1 && r.finished_by_consumer {
        return Ok(Some(pv.clone()));
    }
    if s > 1 {
        // Lanes per output in the combine pass: the next power of two of S, within a group
        // (of the reductions' usual size: the kernel's own may be the row's).
        let group = reduce_group_size(ctx);
        let lanes = (s.next_power_of_two() as u32).clamp(1, group);
        let combine = combine_kernel(ctx, r.op, r.in_dtype, group, lanes)?;
        let cargs = [
            KernelArg::Mem(pv.mem()),
            KernelArg::Mem(pi.mem()),
            KernelArg::Mem(out.mem()),
            KernelArg::Mem(out.mem()),
            KernelArg::ulong(s as u64),
            KernelArg::ulong(r.n_red as u64),
            KernelArg::ulong(r.n_out as u64),
        ];
        let groups = r.n_out.div_ceil((group / lanes) as usize);
        let out: &DeviceBuffer = out;
        combine.kernel.launch(
            ctx,
            queue,
            Command::new(&writes[..partials], &[out]),
            &[groups * group as usize],
            Some(&[group as usize]),
            &cargs,
        )?;
    }
    Ok(None)
}

fn run(queue: &Arc<QueueInner>, flush: Flush, targets: &[(usize, Arc<DeviceBuffer>)]) -> Result<()> {
    let Flush { ctx, graph, kernels } = flush;
    queue
        .context
        .check(&ctx.tag, || "evaluating arrays".into(), || "the arrays".into())?;
    // Buffers of nodes materialized by this flush, by graph index.
    let mut produced: Vec<Option<Arc<DeviceBuffer>>> = vec![None; graph.len()];
    // Partials of split reductions that their consumer finishes, with their segments and
    // reduced lengths, by graph index of the reduction.
    let mut partials: Vec<(usize, Arc<DeviceBuffer>, usize, usize)> = Vec::new();
    let mut args: Vec<KernelArg> = Vec::new();
    for plan in &kernels {
        let has_work = match &plan.reduce {
            Some(r) => r.n_out > 0,
            None => plan.numel > 0,
        };
        let kernel = if has_work {
            Some(kernel_for(&ctx, plan)?)
        } else {
            None
        };
        let mut outputs = Vec::with_capacity(plan.outputs.len());
        for &(_, dtype, gi) in &plan.outputs {
            let buffer = match targets.iter().find(|(t, _)| *t == gi) {
                Some((_, b)) => b.clone(),
                None => {
                    let n = plan.reduce.map_or(plan.numel, |r| r.n_out);
                    DeviceBuffer::uninit(&ctx, n * dtype.size())?
                }
            };
            outputs.push(buffer);
        }
        args.clear();
        // The partials this kernel finishes, if it does (before `reads`, which borrows them).
        let finishing = plan.finishes.and_then(|f| {
            let node = plan.inputs[f.slot].2;
            let k = partials.iter().position(|p| p.0 == node)?;
            Some(partials.swap_remove(k))
        });
        let mut reads: smallvec::SmallVec<[&DeviceBuffer; 8]> = smallvec::SmallVec::new();
        for &(_, _, gi) in &plan.inputs {
            let buffer: &DeviceBuffer = match (&graph[gi].kind, &produced[gi]) {
                (GKind::Ready(b), _) => b,
                (_, Some(b)) => b,
                _ => {
                    return Err(Error::InvalidShape(
                        "internal: kernel input was not produced".into(),
                    ))
                }
            };
            args.push(KernelArg::Mem(buffer.mem()));
            reads.push(buffer);
        }
        for &(_, bits) in &plan.scalars {
            args.push(KernelArg::Scalar(bits));
        }
        for b in &outputs {
            args.push(KernelArg::Mem(b.mem()));
        }
        args.push(KernelArg::ulong(plan.numel as u64));
        for &d in &plan.dims {
            args.push(KernelArg::ulong(d as u64));
        }
        // The row reduction computed inside a column reduction, with its results.
        let mut row_result: Option<(usize, Arc<DeviceBuffer>)> = None;
        // A reduction over the rows computed beside it, with its result.
        let mut total_result: Option<(usize, Arc<DeviceBuffer>)> = None;
        match (kernel, &plan.reduce) {
            (Some(kernel), Some(r)) if r.n_out > 0 => {
                // Reduction args: inputs and scalars are pushed; outputs follow inside.
                args.truncate(plan.inputs.len() + plan.scalars.len());
                let row_out = match &plan.row {
                    Some(row) => {
                        let buffer = match targets.iter().find(|(t, _)| *t == row.node) {
                            Some((_, b)) => b.clone(),
                            None => DeviceBuffer::uninit(&ctx, r.n_red * row.dtype.size())?,
                        };
                        args.push(KernelArg::Mem(buffer.mem()));
                        Some(buffer)
                    }
                    None => None,
                };
                let total = match &plan.row_total {
                    Some(t) => {
                        let result = match targets.iter().find(|(n, _)| *n == t.node) {
                            Some((_, b)) => b.clone(),
                            None => DeviceBuffer::uninit(&ctx, t.dtype.size())?,
                        };
                        let parts = if r.segments > 1 {
                            DeviceBuffer::uninit(&ctx, r.segments * t.dtype.size())?
                        } else {
                            result.clone()
                        };
                        Some(RowTotalBuffers { parts, result })
                    }
                    None => None,
                };
                let left = launch_reduce(
                    &ctx,
                    queue,
                    &kernel,
                    plan,
                    r,
                    &mut args,
                    &reads,
                    &outputs[0],
                    row_out.as_deref(),
                    total.as_ref(),
                )?;
                if let Some(pv) = left {
                    partials.push((plan.outputs[0].2, pv, r.segments, r.n_red));
                }
                row_result = plan.row.map(|row| row.node).zip(row_out);
                total_result = plan.row_total.map(|t| t.node).zip(total.map(|t| t.result));
            }
            (Some(kernel), None) if plan.finishes.is_some() => {
                let (Some(f), Some((_, pv, segments, n_red))) = (plan.finishes, &finishing) else {
                    return Err(Error::InvalidShape(
                        "internal: a kernel finishing a reduction found no partials".into(),
                    ));
                };
                args.push(KernelArg::Mem(pv.mem()));
                args.push(KernelArg::ulong(*segments as u64));
                args.push(KernelArg::ulong(*n_red as u64));
                // The reduction's array is written here, not read.
                let result = reads.remove(f.slot);
                reads.push(pv);
                let mut writes: smallvec::SmallVec<[&DeviceBuffer; 4]> =
                    outputs.iter().map(|b| &**b).collect();
                writes.push(result);
                let per_group = (f.group / f.lanes) as usize;
                let global = plan.numel.div_ceil(per_group) * f.group as usize;
                kernel.kernel.launch(
                    &ctx,
                    queue,
                    Command::new(&reads, &writes),
                    &[global],
                    Some(&[f.group as usize]),
                    &args,
                )?;
            }
            (Some(kernel), None) => {
                let cap = work_items_cap(&ctx);
                let work = if plan.dims.len() == 1 {
                    let nv = plan.numel / VECTOR_WIDTH;
                    nv.max(plan.numel - nv * VECTOR_WIDTH)
                } else {
                    plan.numel
                };
                let (global, local) = grid(&ctx, work.min(cap));
                let writes: smallvec::SmallVec<[&DeviceBuffer; 4]> = outputs.iter().map(|b| &**b).collect();
                kernel.kernel.launch(
                    &ctx,
                    queue,
                    Command::new(&reads, &writes),
                    &[global],
                    local.as_ref().map(std::slice::from_ref),
                    &args,
                )?;
            }
            _ => {}
        }
        drop(reads);
        for (&(_, _, gi), b) in plan.outputs.iter().zip(outputs) {
            produced[gi] = Some(b);
        }
        for (gi, b) in row_result.into_iter().chain(total_result) {
            produced[gi] = Some(b);
        }
    }
    for (gi, b) in produced.into_iter().enumerate() {
        if let Some(b) = b {
            graph[gi].node.set_ready(b);
        }
    }
    Ok(())
}

/// Enqueues everything `roots` need on the default queue; returns without waiting.
pub(crate) fn materialize(roots: &[NodeRef]) -> Result<()> {
    match plan(roots)? {
        Some(flush) => {
            let queue = flush.ctx.queue().clone();
            run(&queue, flush, &[])
        }
        None => Ok(()),
    }
}

/// Enqueues everything `roots` need on `queue`; returns without waiting.
pub(crate) fn materialize_on(queue: &Arc<QueueInner>, roots: &[NodeRef]) -> Result<()> {
    match plan(roots)? {
        Some(flush) => run(queue, flush, &[]),
        None => Ok(()),
    }
}

/// Evaluates `value` into `target`'s buffer, on `queue`.
fn materialize_into(queue: &Arc<QueueInner>, value: &NodeRef, target: Arc<DeviceBuffer>) -> Result<()> {
    let Some(flush) = plan(std::slice::from_ref(value))? else {
        return Ok(());
    };
    let Some(gi) = flush.graph.iter().position(|g| Arc::ptr_eq(&g.node, value)) else {
        return Ok(());
    };
    run(queue, flush, &[(gi, target)])
}

/// Describes the kernels that materializing `roots` would launch, with their sources.
pub(crate) fn explain(roots: &[NodeRef]) -> Result<String> {
    let mut s = String::new();
    let Some(flush) = plan(roots)? else { return Ok(s) };
    if flush.kernels.is_empty() {
        s.push_str("nothing to compute: every array is already materialized\n");
    }
    for (k, p) in flush.kernels.iter().enumerate() {
        let cached = flush
            .ctx
            .fused_kernels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(&p.key);
        let _ = writeln!(
            s,
            "kernel {k}: {} elements over dims {:?}; {} inputs, {} scalar args, {} outputs, {} ops{}",
            p.numel,
            p.dims,
            p.inputs.len(),
            p.scalars.len(),
            p.outputs.len(),
            p.values.len(),
            if cached { " (cached)" } else { "" }
        );
        if let Some(r) = &p.reduce {
            let layout = match r.lanes {
                0 if r.columns => format!(
                    "work-groups stream whole rows, {} neighbouring outputs per work-item{}",
                    r.column_width,
                    if r.column_width > 1 { ", vector loads" } else { "" }
                ),
                0 => "one work-item per output and segment".to_string(),
                l => format!(
                    "{l} lanes per output{}",
                    if r.vector { ", vector loads" } else { "" }
                ),
            };
            let split = match r.segments {
                1 => "one segment".to_string(),
                n if r.finish_in_kernel => {
                    format!("{n} segments finished by the last work-group (no combine pass)")
                }
                n if r.finished_by_consumer => {
                    format!("{n} segments combined by the kernel that reads the result (no combine pass)")
                }
                n => format!("{n} segments plus a combine pass"),
            };
            let _ = writeln!(
                s,
                "  {:?} reduction: {} outputs of {} elements each, {layout}; {split}",
                r.op, r.n_out, r.n_red
            );
            if let Some(row) = &p.row {
                let _ = writeln!(
                    s,
                    "  with a {:?} reduction of each of the {} rows computed inside (one read of the rows for both){}",
                    row.op,
                    r.n_red,
                    if r.row_vectors > 0 {
                        "; each work-item reads whole rows".to_string()
                    } else if r.group_rows > 0 {
                        format!(
                            "; a work-group of {} shares each row, {} vectors per work-item",
                            p.group_size, r.group_rows
                        )
                    } else {
                        String::new()
                    }
                );
            }
        }
        if let Some(t) = &p.row_total {
            let _ = writeln!(
                s,
                "  and beside it a {:?} reduction of one value per row over the rows to one element (each work-group adds its rows; the last to finish combines the groups' parts)",
                t.op
            );
        }
        if let Some(f) = &p.finishes {
            let _ = writeln!(
                s,
                "  finishes the split reduction it reads as input {}: combines its partials, {} lanes per output, then computes its elements there",
                f.slot, f.lanes
            );
        }
        s.push_str(&fused_source(p));
    }
    Ok(s)
}

/// Several arrays that can be materialized together (they share kernels where possible).
pub trait EvalList {
    /// The graph nodes of the arrays.
    #[doc(hidden)]
    fn nodes(&self) -> Vec<NodeHandle>;
}

/// An array of any element type, as seen by [`eval`]. Opaque.
#[doc(hidden)]
pub struct NodeHandle(pub(crate) NodeRef);

impl<T: Element> EvalList for &Array<T> {
    fn nodes(&self) -> Vec<NodeHandle> {
        vec![NodeHandle(self.node.clone())]
    }
}
impl<T: Element> EvalList for [&Array<T>] {
    fn nodes(&self) -> Vec<NodeHandle> {
        self.iter().map(|a| NodeHandle(a.node.clone())).collect()
    }
}
impl<T: Element> EvalList for Vec<&Array<T>> {
    fn nodes(&self) -> Vec<NodeHandle> {
        self.iter().map(|a| NodeHandle(a.node.clone())).collect()
    }
}
impl<T: Element> EvalList for Vec<Array<T>> {
    fn nodes(&self) -> Vec<NodeHandle> {
        self.iter().map(|a| NodeHandle(a.node.clone())).collect()
    }
}

macro_rules! eval_tuple {
    ($($t:ident $i:tt),*) => {
        impl<'a, $($t: Element),*> EvalList for ($(&'a Array<$t>,)*) {
            fn nodes(&self) -> Vec<NodeHandle> {
                vec![$(NodeHandle(self.$i.node.clone())),*]
            }
        }
    };
}
eval_tuple!(A 0);
eval_tuple!(A 0, B 1);
eval_tuple!(A 0, B 1, C 2);
eval_tuple!(A 0, B 1, C 2, D 3);
eval_tuple!(A 0, B 1, C 2, D 3, E 4);
eval_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);
eval_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
eval_tuple!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

/// Materializes several arrays in one flush on the default queue: arrays of one shape
/// computed from a common graph share one kernel. Returns without waiting.
/// [`Queue::eval`] does the same on a chosen queue.
pub fn eval<L: EvalList + ?Sized>(arrays: &L) -> Result<()> {
    let nodes: Vec<NodeRef> = arrays.nodes().into_iter().map(|h| h.0).collect();
    materialize(&nodes)
}

impl<T: Element> Array<T> {
    /// The fused plan and generated OpenCL C that materializing this array would run.
    pub fn explain(&self) -> Result<String> {
        explain(std::slice::from_ref(&self.node))
    }

    /// Sets this array to `value` (broadcast to this array's shape), evaluated now on the
    /// default queue (enqueued, not waited for). Writes into this array's own device
    /// memory when no other handle can observe it and `value` does not read it; otherwise
    /// into a pooled buffer. Either way a loop of `assign`s allocates nothing after its
    /// first steps.
    pub fn assign(&mut self, value: impl crate::ops::Operand<T>) -> Result<()> {
        let queue = self.node.ctx.queue().clone();
        self.assign_impl(&queue, value)
    }

    /// Like [`assign`](Array::assign), evaluated on `queue`.
    pub fn assign_on(&mut self, queue: &Queue, value: impl crate::ops::Operand<T>) -> Result<()> {
        queue.check_context(&self.node.ctx, || "Array::assign_on".into())?;
        self.assign_impl(&queue.inner, value)
    }

    fn assign_impl(&mut self, queue: &Arc<QueueInner>, value: impl crate::ops::Operand<T>) -> Result<()> {
        let ctx = self.node.ctx.clone();
        let v = value.into_array(crate::ops::CtxRef(&ctx));
        ctx.tag.check(
            &v.node.ctx.tag,
            || "Array::assign".into(),
            || format!("the value (shape {:?})", v.shape()),
        )?;
        let target_shape = self.shape().to_vec();
        let v = if v.shape() == target_shape.as_slice() {
            v
        } else {
            v.broadcast_to(&target_shape)
        };
        if v.shape() != target_shape.as_slice() {
            return Err(Error::ShapeMismatch {
                op: "assign".into(),
                left: target_shape,
                right: v.shape().to_vec(),
            });
        }
        let unique = Arc::strong_count(&self.node) == 1;
        if unique {
            if let Some(buffer) = self.node.buffer() {
                let reads_self = collect(std::slice::from_ref(&v.node))?.iter().any(|g| {
                    Arc::ptr_eq(&g.node, &self.node)
                        || matches!(&g.kind, GKind::Ready(b) if Arc::ptr_eq(b, &buffer))
                });
                if !reads_self && Arc::strong_count(&buffer) == 2 {
                    materialize_into(queue, &v.node, buffer)?;
                    *self = Array::from_node(v.node);
                    return Ok(());
                }
            }
        }
        materialize_on(queue, std::slice::from_ref(&v.node))?;
        *self = v;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::array::Array;
    use crate::context::Context;
    use crate::fit::{COMBINE_PASS_ONLY, SHARED_ROWS_ANYWHERE};

    /// Split reductions give the same results whether their last work-group or a combine
    /// pass finishes them: column and lanes layouts, sums, means and arg reductions.
    #[test]
    fn both_ways_of_finishing_a_split_reduction_agree() {
        let ctx = Context::new().expect("an OpenCL device");
        SHARED_ROWS_ANYWHERE.with(|c| c.set(true));
        for (rows, cols) in [(100_000usize, 4usize), (3000, 100)] {
            let data: Vec<i32> = (0..rows * cols)
                .map(|i| ((i * 7919) % 201) as i32 - 100)
                .collect();
            let m = ctx.from_shape_slice([rows, cols], &data).unwrap();
            let mut results = Vec::new();
            for combine_only in [false, true] {
                COMBINE_PASS_ONLY.with(|c| c.set(combine_only));
                let col_sum = m.sum_axis(0);
                let col_arg = m.argmax_axis(0);
                let col_mean = m.cast::<f32>().mean_axis(0);
                let total = m.sum();
                // A row reduction inside a column reduction (`RowPart`): rows read whole
                // by one work-item (4 columns) or shared by a row of work-items (100).
                let fused = (&m * &m.sum_axes(&[1], true)).sum_axis(0);
                let below_max = (&m - &m.amax_axes(&[1], true)).sum_axis(0);
                assert!(fused.explain().unwrap().contains("computed inside"));
                assert!(below_max.explain().unwrap().contains("computed inside"));
                if cols == 4 {
                    // Few partials per work-item: both layouts finish in the kernel.
                    let text = col_sum.explain().unwrap() + &total.explain().unwrap();
                    let finished = text.matches("finished by the last work-group").count();
                    let combined = text.matches("plus a combine pass").count();
                    let want = if combine_only { (0, 2) } else { (2, 0) };
                    assert_eq!((finished, combined), want, "{text}");
                }
                results.push((
                    col_sum.to_vec().unwrap(),
                    col_arg.to_vec().unwrap(),
                    col_mean.to_vec().unwrap(),
                    total.item().unwrap(),
                    fused.to_vec().unwrap(),
                    below_max.to_vec().unwrap(),
                ));
            }
            COMBINE_PASS_ONLY.with(|c| c.set(false));
            let want_sum: Vec<i32> = (0..cols)
                .map(|j| (0..rows).map(|i| data[i * cols + j]).sum())
                .collect();
            let want_arg: Vec<u64> = (0..cols)
                .map(|j| {
                    let mut best = 0;
                    for i in 1..rows {
                        if data[i * cols + j] > data[best * cols + j] {
                            best = i;
                        }
                    }
                    best as u64
                })
                .collect();
            let row_sum = |i: usize| (0..cols).fold(0i32, |a, k| a.wrapping_add(data[i * cols + k]));
            let want_fused: Vec<i32> = (0..cols)
                .map(|j| {
                    (0..rows).fold(0i32, |a, i| {
                        a.wrapping_add(data[i * cols + j].wrapping_mul(row_sum(i)))
                    })
                })
                .collect();
            let row_max = |i: usize| (0..cols).map(|k| data[i * cols + k]).max().unwrap_or(0);
            let want_below: Vec<i32> = (0..cols)
                .map(|j| (0..rows).map(|i| data[i * cols + j] - row_max(i)).sum())
                .collect();
            for (sum, arg, mean, total, fused, below) in &results {
                assert_eq!(fused, &want_fused, "{rows}x{cols}");
                assert_eq!(below, &want_below, "{rows}x{cols}");
                assert_eq!(sum, &want_sum, "{rows}x{cols}");
                assert_eq!(arg, &want_arg, "{rows}x{cols}");
                for (m, s) in mean.iter().zip(&want_sum) {
                    assert!((m - *s as f32 / rows as f32).abs() < 1e-4, "{rows}x{cols}");
                }
                assert_eq!(*total, data.iter().sum::<i32>(), "{rows}x{cols}");
            }
        }
        SHARED_ROWS_ANYWHERE.with(|c| c.set(false));
    }

    /// Reductions over the rows of one value per row, in a flush with a column reduction
    /// `g` that computes their row reduction `z` inside (`make` records a fresh pair):
    /// beside it, they launch no more kernels than `g` alone. A mean with a
    /// single-element input, a sum, the largest and the smallest (the row result itself);
    /// the same as on the host, and `g` unchanged.
    fn check_row_totals(
        ctx: &Context,
        make: impl Fn() -> (Array<f64>, Array<f64>),
        ya: &Array<f64>,
        hz: &[f64],
        y: &[f64],
    ) {
        let n = hz.len() as f64;
        let b = ctx.from_slice(&[0.25]).unwrap();
        type Total<'a> = &'a dyn Fn(&Array<f64>) -> Array<f64>;
        let totals: [Total; 4] = [
            &|z| (&b - &((&z.tanh() - ya) * 0.2)).mean_axis(0),
            &|z| (z * ya).sum_axis(0),
            &|z| (&(z * 0.5).exp() - ya).amax_axis(0),
            &|z| z.amin_axis(0),
        ];
        let host = [
            hz.iter()
                .zip(y)
                .map(|(z, y)| 0.25 - (z.tanh() - y) * 0.2)
                .sum::<f64>()
                / n,
            hz.iter().zip(y).map(|(z, y)| z * y).sum::<f64>(),
            hz.iter()
                .zip(y)
                .map(|(z, y)| (z * 0.5).exp() - y)
                .fold(f64::MIN, f64::max),
            hz.iter().cloned().fold(f64::MAX, f64::min),
        ];
        for (total, h) in totals.iter().zip(host) {
            let (alone, _) = make();
            let before = ctx.stats().kernels_launched;
            alone.eval().unwrap();
            let launches = ctx.stats().kernels_launched - before;
            let (g, z) = make();
            let t = total(&z);
            let before = ctx.stats().kernels_launched;
            crate::eval(&(&g, &t)).unwrap();
            assert_eq!(
                ctx.stats().kernels_launched - before,
                launches,
                "a kernel of its own"
            );
            let got = t.item().unwrap();
            assert!((got - h).abs() < 1e-9 * h.abs().max(1.0), "total: {got} vs {h}");
            assert_eq!(g.to_vec().unwrap(), alone.to_vec().unwrap());
        }
    }

    /// The shared-row kernel (a row of work-items per row, a tree per step) on any
    /// device: a linear model's gradient in f64 against the host, rows of 40 (vectors)
    /// and 126 (single elements), a mean row reduction, several segments; totals over
    /// the rows beside (with the per-row values computed once per row).
    #[test]
    fn shared_rows_give_the_host_gradient() {
        let ctx = Context::new().expect("an OpenCL device");
        SHARED_ROWS_ANYWHERE.with(|c| c.set(true));
        for (n, d) in [(3000usize, 40usize), (3000, 126), (37, 36)] {
            let x: Vec<f64> = (0..n * d)
                .map(|i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0)
                .collect();
            let w: Vec<f64> = (0..d).map(|j| ((j * 31) % 17) as f64 / 17.0 - 0.5).collect();
            let y: Vec<f64> = (0..n).map(|i| (i % 2) as f64).collect();
            let xa = ctx.from_shape_slice([n, d], &x).unwrap();
            let wa = ctx.from_slice(&w).unwrap();
            let ya = ctx.from_shape_slice([n, 1], &y).unwrap();
            let z = (&xa * &wa).sum_axes(&[1], true);
            let g = (&xa * &(z.tanh() - &ya)).sum_axis(0);
            let m = (&xa * &xa.mean_axes(&[1], true)).sum_axis(0);
            let text = g.explain().unwrap();
            assert!(
                text.contains("computed inside") && !text.contains("each work-item reads whole rows"),
                "{text}"
            );
            let make = || {
                let z = (&xa * &wa).sum_axes(&[1], true);
                ((&xa * &(z.tanh() - &ya)).sum_axis(0), z)
            };
            crate::eval(&(&g, &m, &z)).unwrap();
            let row = |i: usize| &x[i * d..(i + 1) * d];
            let hz: Vec<f64> = (0..n)
                .map(|i| row(i).iter().zip(&w).map(|(a, b)| a * b).sum())
                .collect();
            for (a, b) in z.to_vec().unwrap().iter().zip(&hz) {
                assert!((a - b).abs() < 1e-12 * d as f64, "{n}x{d} z: {a} vs {b}");
            }
            check_row_totals(&ctx, make, &ya, &hz, &y);
            let gv = g.to_vec().unwrap();
            let mv = m.to_vec().unwrap();
            for j in 0..d {
                let hg: f64 = (0..n).map(|i| x[i * d + j] * (hz[i].tanh() - y[i])).sum();
                let hm: f64 = (0..n)
                    .map(|i| x[i * d + j] * row(i).iter().sum::<f64>() / d as f64)
                    .sum();
                assert!(
                    (gv[j] - hg).abs() < 1e-9 * n as f64,
                    "{n}x{d} g[{j}]: {} vs {hg}",
                    gv[j]
                );
                assert!(
                    (mv[j] - hm).abs() < 1e-9 * n as f64,
                    "{n}x{d} m[{j}]: {} vs {hm}",
                    mv[j]
                );
            }
        }
        SHARED_ROWS_ANYWHERE.with(|c| c.set(false));
    }

    /// The group-rows kernel (a whole work-group per row, several vectors per work-item)
    /// on any device: rows of 275 and 1,023 vectors (f32) and of 1,019 single elements
    /// (f64: not a multiple of the vector width), one or two per work-item, with sum,
    /// mean and max row reductions, one segment (5 rows) and several; per-row values
    /// computed once per row (shared in local memory) and totals over the rows beside;
    /// rows wider than the layout holds stay two kernels.
    #[test]
    fn group_rows_give_the_host_gradient() {
        let ctx = Context::new().expect("an OpenCL device");
        SHARED_ROWS_ANYWHERE.with(|c| c.set(true));
        for (n, d, f32_data) in [(300usize, 1100usize, true), (37, 1019, false), (5, 4092, true)] {
            let x: Vec<f64> = (0..n * d)
                .map(|i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0)
                .collect();
            let w: Vec<f64> = (0..d).map(|j| ((j * 31) % 17) as f64 / 17.0 - 0.5).collect();
            let y: Vec<f64> = (0..n).map(|i| (i % 2) as f64).collect();
            let xa = ctx.from_shape_slice([n, d], &x).unwrap();
            let wa = ctx.from_slice(&w).unwrap();
            let ya = ctx.from_shape_slice([n, 1], &y).unwrap();
            // f32 data: the same values rounded (the host reference rounds them too).
            let (x, xa) = if f32_data {
                let x32: Vec<f64> = x.iter().map(|&v| f64::from(v as f32)).collect();
                (x32, xa.cast::<f32>().cast::<f64>())
            } else {
                (x, xa)
            };
            let xs = xa.cast::<f32>();
            let z = (&xa * &wa).sum_axes(&[1], true);
            let g = (&xa * &(z.tanh() - &ya)).sum_axis(0);
            let m = (&xa * &xa.mean_axes(&[1], true)).sum_axis(0);
            let below = (&xs - &xs.amax_axes(&[1], true)).sum_axis(0);
            // Column means and maxima (with a row sum inside).
            let cmean = (&xa * &z).mean_axis(0);
            let cmax = (&xa * &z).amax_axis(0);
            // Per-row values computed once per row: a select, one read twice, the whole
            // operand.
            let sel = (&xa * &z.gt(0.0).select(&ya, &(&z * 0.5))).sum_axis(0);
            let q = (&z * 0.01).exp();
            let twice = (&(&xa * &q) + &q).sum_axis(0);
            let whole = (z.tanh() * &ya).broadcast_to(&[n, d]).sum_axis(0);
            // A boolean per-row value (local memory of another type).
            let above = (&xa * &z.gt(&ya).cast::<f64>()).sum_axis(0);
            // Each computes its per-row values once per row (local `hs*`).
            for a in [&g, &sel, &twice, &whole, &above] {
                let text = a.explain().unwrap();
                assert!(text.contains("__local double hs"), "{n}x{d}: {text}");
            }
            for a in [&g, &m, &cmean, &cmax, &sel, &twice, &whole, &above] {
                let text = a.explain().unwrap();
                assert!(text.contains("shares each row"), "{n}x{d}: {text}");
            }
            assert!(below.explain().unwrap().contains("shares each row"));
            crate::eval(&(&g, &m, &z)).unwrap();
            let (cmean, cmax) = (cmean.to_vec().unwrap(), cmax.to_vec().unwrap());
            crate::eval(&(&sel, &twice, &whole, &above)).unwrap();
            let above = above.to_vec().unwrap();
            let (sel, twice, whole) = (
                sel.to_vec().unwrap(),
                twice.to_vec().unwrap(),
                whole.to_vec().unwrap(),
            );
            let row = |i: usize| &x[i * d..(i + 1) * d];
            let hz: Vec<f64> = (0..n)
                .map(|i| row(i).iter().zip(&w).map(|(a, b)| a * b).sum())
                .collect();
            for (a, b) in z.to_vec().unwrap().iter().zip(&hz) {
                assert!((a - b).abs() < 1e-12 * d as f64, "{n}x{d} z: {a} vs {b}");
            }
            let make = || {
                let z = (&xa * &wa).sum_axes(&[1], true);
                ((&xa * &(z.tanh() - &ya)).sum_axis(0), z)
            };
            check_row_totals(&ctx, make, &ya, &hz, &y);
            let (gv, mv, bv) = (g.to_vec().unwrap(), m.to_vec().unwrap(), below.to_vec().unwrap());
            for j in 0..d {
                let hg: f64 = (0..n).map(|i| x[i * d + j] * (hz[i].tanh() - y[i])).sum();
                let hm: f64 = (0..n)
                    .map(|i| x[i * d + j] * row(i).iter().sum::<f64>() / d as f64)
                    .sum();
                let hb: f64 = (0..n)
                    .map(|i| x[i * d + j] - row(i).iter().cloned().fold(f64::MIN, f64::max))
                    .sum();
                let hmean = (0..n).map(|i| x[i * d + j] * hz[i]).sum::<f64>() / n as f64;
                let hsel: f64 = (0..n)
                    .map(|i| x[i * d + j] * if hz[i] > 0.0 { y[i] } else { hz[i] * 0.5 })
                    .sum();
                let htwice: f64 = (0..n).map(|i| (x[i * d + j] + 1.0) * (hz[i] * 0.01).exp()).sum();
                let hwhole: f64 = (0..n).map(|i| hz[i].tanh() * y[i]).sum();
                let habove: f64 = (0..n).filter(|&i| hz[i] > y[i]).map(|i| x[i * d + j]).sum();
                assert!(
                    (above[j] - habove).abs() < 1e-9 * n as f64,
                    "{n}x{d} above[{j}]: {} vs {habove}",
                    above[j]
                );
                for (name, got, want) in [
                    ("sel", sel[j], hsel),
                    ("twice", twice[j], htwice),
                    ("whole", whole[j], hwhole),
                ] {
                    assert!(
                        (got - want).abs() < 1e-9 * n as f64,
                        "{n}x{d} {name}[{j}]: {got} vs {want}"
                    );
                }
                let hmax = (0..n).map(|i| x[i * d + j] * hz[i]).fold(f64::MIN, f64::max);
                assert!(
                    (cmean[j] - hmean).abs() < 1e-9,
                    "{n}x{d} mean[{j}]: {} vs {hmean}",
                    cmean[j]
                );
                assert!(
                    (cmax[j] - hmax).abs() < 1e-9,
                    "{n}x{d} max[{j}]: {} vs {hmax}",
                    cmax[j]
                );
                assert!(
                    (gv[j] - hg).abs() < 1e-9 * n as f64,
                    "{n}x{d} g[{j}]: {} vs {hg}",
                    gv[j]
                );
                assert!(
                    (mv[j] - hm).abs() < 1e-9 * n as f64,
                    "{n}x{d} m[{j}]: {} vs {hm}",
                    mv[j]
                );
                assert!(
                    (f64::from(bv[j]) - hb).abs() < 1e-5 * n as f64,
                    "{n}x{d} below[{j}]: {} vs {hb}",
                    bv[j]
                );
            }
        }
        // Rows wider than the largest group times the most vectors one work-item holds.
        let wide = ctx.from_shape_slice([2, 4100], &vec![1.0f32; 8200]).unwrap();
        let text = (&wide * &wide.sum_axes(&[1], true))
            .sum_axis(0)
            .explain()
            .unwrap();
        assert!(!text.contains("computed inside"), "{text}");
        SHARED_ROWS_ANYWHERE.with(|c| c.set(false));
    }
}
