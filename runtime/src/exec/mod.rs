//! Materialization, the only place where plan, codegen and backend meet: plans a flush
//! (`plan::plan`), finds each kernel in the structural cache (generating and building it
//! only on a miss), allocates outputs from the pool, launches, and marks the outputs as
//! materialized.

use std::sync::Arc;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::ContextInner;
use crate::backend::kernel::{CompiledKernel, KernelArg};
use crate::backend::program::{build_options, obtain};
use crate::backend::queue::QueueInner;
use crate::backend::submit::Command;
use cl3::types::cl_mem;

use crate::codegen::abi::{self, CombineParam, Param};
use crate::codegen::{combine_source, fused_source, COMBINE_KERNEL_NAME, FUSED_KERNEL_NAME};
use crate::dtype::{DType, ScalarBits};
use crate::error::{Error, Result};
use crate::graph::NodeRef;
use crate::graph::ReduceOp;
use crate::layout::VECTOR_WIDTH;
use crate::plan::{key, GKind, GNode, KernelPlan, ReducePlan};
use crate::stats::Counters;

/// A planned flush and the context it runs on.
pub(crate) struct Flush {
    pub(crate) ctx: Arc<ContextInner>,
    pub(crate) graph: Vec<GNode>,
    pub(crate) kernels: Vec<KernelPlan>,
}

/// Plans the flush that materializes `roots`, which must all belong to one context.
pub(crate) fn plan(roots: &[NodeRef]) -> Result<Option<Flush>> {
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
    Ok(crate::plan::plan(roots, &ctx.profile)?.map(|p| Flush {
        ctx,
        graph: p.graph,
        kernels: p.kernels,
    }))
}

/// Finds or builds the kernel for a plan. A hit builds no string and no program.
fn kernel_for(ctx: &ContextInner, plan: &KernelPlan) -> Result<Arc<CompiledKernel>> {
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
) -> Result<Arc<CompiledKernel>> {
    let key = key::combine(op, dtype, group, lanes);
    cached_kernel(ctx, &key, COMBINE_KERNEL_NAME, || {
        Ok(combine_source(op, dtype, group, lanes))
    })
}

fn cached_kernel(
    ctx: &ContextInner,
    key: &[u32],
    name: &str,
    source: impl FnOnce() -> Result<String>,
) -> Result<Arc<CompiledKernel>> {
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
    let fused = Arc::new(kernel);
    let mut cache = ctx.fused_kernels.lock().unwrap_or_else(|e| e.into_inner());
    Ok(cache.entry(key.to_vec()).or_insert(fused).clone())
}

/// The buffers of a reduction over the rows computed beside a row reduction
/// ([`RowTotal`](crate::plan::RowTotal)): one part per work-group (the result itself
/// with one segment) and the one-element result.
struct RowTotalBuffers {
    parts: Arc<DeviceBuffer>,
    result: Arc<DeviceBuffer>,
}

/// The buffers and sizes of one launch, from which its arguments are bound in the order
/// of the kernel's parameter list ([`abi::params`], the only such list).
#[derive(Default)]
struct Bindings<'a> {
    inputs: &'a [&'a DeviceBuffer],
    outputs: &'a [Arc<DeviceBuffer>],
    row_out: Option<&'a DeviceBuffer>,
    /// A reduction's partials and their indices (its results with one segment).
    partials: Option<(&'a DeviceBuffer, &'a DeviceBuffer)>,
    /// The queue's counters of finished work-groups.
    counters: Option<cl_mem>,
    total: Option<&'a RowTotalBuffers>,
    /// The split reduction an elementwise kernel finishes: partials, segments, length.
    finished: Option<(&'a DeviceBuffer, usize, usize)>,
}

impl Bindings<'_> {
    /// The argument for parameter `p` of the kernel of `plan`.
    fn arg(&self, plan: &KernelPlan, p: Param) -> Result<KernelArg> {
        let missing = || Error::InvalidShape(format!("internal: no argument for kernel parameter {p:?}"));
        let mem = |b: Option<&DeviceBuffer>| b.map(|b| KernelArg::Mem(b.mem())).ok_or_else(missing);
        let r = plan.reduce.as_ref();
        let reduce =
            |f: fn(&ReducePlan) -> usize| r.map(|r| KernelArg::ulong(f(r) as u64)).ok_or_else(missing);
        match p {
            Param::Input(slot) => mem(self.inputs.get(slot).copied()),
            Param::Scalar(slot) => plan
                .scalars
                .get(slot)
                .map(|s| KernelArg::Scalar(s.1))
                .ok_or_else(missing),
            Param::Output(k) => mem(self.outputs.get(k).map(|b| &**b)),
            Param::Numel => Ok(KernelArg::ulong(plan.numel as u64)),
            Param::Dim(k) => Ok(KernelArg::ulong(plan.dims[k] as u64)),
            Param::RowResult => mem(self.row_out),
            Param::Partials => mem(self.partials.map(|p| p.0)),
            Param::PartialIndices => mem(self.partials.map(|p| p.1)),
            Param::NOut => reduce(|r| r.n_out),
            Param::NRed => reduce(|r| r.n_red),
            Param::Segments => reduce(|r| r.segments),
            Param::OneSegment => r
                .map(|r| {
                    KernelArg::Scalar(ScalarBits {
                        bits: u64::from(r.segments == 1),
                        size: 4,
                    })
                })
                .ok_or_else(missing),
            Param::Results | Param::ResultIndices => mem(self.outputs.first().map(|b| &**b)),
            Param::FinishCounters | Param::TotalCounters => {
                self.counters.map(KernelArg::Mem).ok_or_else(missing)
            }
            Param::TotalParts => mem(self.total.map(|t| &*t.parts)),
            Param::TotalResult => mem(self.total.map(|t| &*t.result)),
            Param::FinishedPartials => mem(self.finished.map(|f| f.0)),
            Param::FinishedSegments => self
                .finished
                .map(|f| KernelArg::ulong(f.1 as u64))
                .ok_or_else(missing),
            Param::FinishedLength => self
                .finished
                .map(|f| KernelArg::ulong(f.2 as u64))
                .ok_or_else(missing),
        }
    }

    /// Sets `args` to the arguments of a launch of the kernel of `plan`.
    fn bind(&self, plan: &KernelPlan, args: &mut Vec<KernelArg>) -> Result<()> {
        abi::bind(abi::params(plan), args, |p| self.arg(plan, p))
    }
}

/// Enqueues a reduction plan: one pass, or two when split into segments (unless the
/// kernel finishes itself, or its consumer does: then the partials are returned, for it).
#[allow(clippy::too_many_arguments)]
fn launch_reduce(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    kernel: &CompiledKernel,
    plan: &KernelPlan,
    r: &ReducePlan,
    args: &mut Vec<KernelArg>,
    reads: &[&DeviceBuffer],
    outputs: &[Arc<DeviceBuffer>],
    row_out: Option<&DeviceBuffer>,
    total: Option<&RowTotalBuffers>,
) -> Result<Option<Arc<DeviceBuffer>>> {
    let out = &outputs[0];
    let group = plan.group_size;
    let s = r.segments;
    let n_parts = r.n_out * s;
    let (pv, pi) = if s > 1 {
        let pv = DeviceBuffer::uninit(&ctx.cl, n_parts * r.in_dtype.size())?;
        let pi = if r.op.is_arg() {
            DeviceBuffer::uninit(&ctx.cl, n_parts * 8)?
        } else {
            pv.clone()
        };
        (pv, pi)
    } else {
        (out.clone(), out.clone())
    };
    let counters = if r.finish_in_kernel || total.is_some() {
        Some(queue.finish_counters(ctx.cl_context_handle())?)
    } else {
        None
    };
    Bindings {
        inputs: reads,
        outputs,
        row_out,
        partials: Some((&pv, &pi)),
        counters,
        total,
        finished: None,
    }
    .bind(plan, args)?;
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
        None => ctx.profile.grid(r.n_out * s),
    };
    let local = local.as_ref().map(std::slice::from_ref);
    if r.finish_in_kernel {
        // The last work-group of each block writes the result; partials stay private.
        writes.push(out);
    }
    if let Some(t) = total {
        // A reduction over the rows beside: its parts and its result.
        writes.push(&t.result);
        if !Arc::ptr_eq(&t.parts, &t.result) {
            writes.push(&t.parts);
        }
    }
    kernel.launch(ctx, queue, Command::new(reads, &writes), &[global], local, args)?;
    if r.finish_in_kernel {
        return Ok(None);
    }
    if s > 1 && r.finished_by_consumer {
        return Ok(Some(pv.clone()));
    }
    if s > 1 {
        // Lanes per output in the combine pass: the next power of two of S, within a group
        // (of the reductions' usual size: the kernel's own may be the row's).
        let group = ctx.profile.reduce_group_size();
        let lanes = (s.next_power_of_two() as u32).clamp(1, group);
        let combine = combine_kernel(ctx, r.op, r.in_dtype, group, lanes)?;
        let mut cargs = Vec::with_capacity(abi::COMBINE_PARAMS.len());
        abi::bind(abi::COMBINE_PARAMS, &mut cargs, |p| {
            Ok(match p {
                CombineParam::Partials => KernelArg::Mem(pv.mem()),
                CombineParam::PartialIndices => KernelArg::Mem(pi.mem()),
                CombineParam::Results | CombineParam::ResultIndices => KernelArg::Mem(out.mem()),
                CombineParam::Segments => KernelArg::ulong(s as u64),
                CombineParam::NRed => KernelArg::ulong(r.n_red as u64),
                CombineParam::NOut => KernelArg::ulong(r.n_out as u64),
            })
        })?;
        let groups = r.n_out.div_ceil((group / lanes) as usize);
        let out: &DeviceBuffer = out;
        combine.launch(
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
                    DeviceBuffer::uninit(&ctx.cl, n * dtype.size())?
                }
            };
            outputs.push(buffer);
        }
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
            reads.push(buffer);
        }
        // The row reduction computed inside a column reduction, with its results.
        let mut row_result: Option<(usize, Arc<DeviceBuffer>)> = None;
        // A reduction over the rows computed beside it, with its result.
        let mut total_result: Option<(usize, Arc<DeviceBuffer>)> = None;
        match (kernel, &plan.reduce) {
            (Some(kernel), Some(r)) if r.n_out > 0 => {
                let row_out = match &plan.row {
                    Some(row) => {
                        let buffer = match targets.iter().find(|(t, _)| *t == row.node) {
                            Some((_, b)) => b.clone(),
                            None => DeviceBuffer::uninit(&ctx.cl, r.n_red * row.dtype.size())?,
                        };
                        Some(buffer)
                    }
                    None => None,
                };
                let total = match &plan.row_total {
                    Some(t) => {
                        let result = match targets.iter().find(|(n, _)| *n == t.node) {
                            Some((_, b)) => b.clone(),
                            None => DeviceBuffer::uninit(&ctx.cl, t.dtype.size())?,
                        };
                        let parts = if r.segments > 1 {
                            DeviceBuffer::uninit(&ctx.cl, r.segments * t.dtype.size())?
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
                    &outputs,
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
                Bindings {
                    inputs: &reads,
                    outputs: &outputs,
                    finished: Some((pv, *segments, *n_red)),
                    ..Bindings::default()
                }
                .bind(plan, &mut args)?;
                // The reduction's array is written here, not read.
                let result = reads.remove(f.slot);
                reads.push(pv);
                let mut writes: smallvec::SmallVec<[&DeviceBuffer; 4]> =
                    outputs.iter().map(|b| &**b).collect();
                writes.push(result);
                let per_group = (f.group / f.lanes) as usize;
                let global = plan.numel.div_ceil(per_group) * f.group as usize;
                kernel.launch(
                    &ctx,
                    queue,
                    Command::new(&reads, &writes),
                    &[global],
                    Some(&[f.group as usize]),
                    &args,
                )?;
            }
            (Some(kernel), None) => {
                let cap = ctx.profile.work_items_cap();
                let work = if plan.dims.len() == 1 {
                    let nv = plan.numel / VECTOR_WIDTH;
                    nv.max(plan.numel - nv * VECTOR_WIDTH)
                } else {
                    plan.numel
                };
                let (global, local) = ctx.profile.grid(work.min(cap));
                Bindings {
                    inputs: &reads,
                    outputs: &outputs,
                    ..Bindings::default()
                }
                .bind(plan, &mut args)?;
                let writes: smallvec::SmallVec<[&DeviceBuffer; 4]> = outputs.iter().map(|b| &**b).collect();
                kernel.launch(
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
pub(crate) fn materialize_into(
    queue: &Arc<QueueInner>,
    value: &NodeRef,
    target: Arc<DeviceBuffer>,
) -> Result<()> {
    let Some(flush) = plan(std::slice::from_ref(value))? else {
        return Ok(());
    };
    let Some(gi) = flush.graph.iter().position(|g| Arc::ptr_eq(&g.node, value)) else {
        return Ok(());
    };
    run(queue, flush, &[(gi, target)])
}
