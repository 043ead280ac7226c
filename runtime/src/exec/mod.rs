//! Materialization, the only place where plan, codegen and backend meet: plans a flush
//! (`plan::plan`), finds each kernel in the structural cache, building a new flush's
//! missing kernels together first (`build`), launches them (`launch`: outputs from the
//! pool, arguments bound, the layout's launcher), and marks the outputs as materialized.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::cl;
use crate::backend::context::ContextInner;
use crate::backend::queue::QueueInner;
use crate::backend::submit::Command;
use crate::error::{Error, Result};
use crate::graph::view::ViewMap;
use crate::graph::{FlushOrigin, NodeRef, Origin};
use crate::plan::{GNode, KernelPlan, ScatterCombine, ScatterTarget, Target};
use crate::stats::Counters;

mod bind;
mod build;
pub(crate) mod compact;
pub(crate) mod dot;
mod dump_dot;
mod elementwise;
mod fft;
mod gemm;
mod launch;
mod memory;
mod reduce;
mod replay;
mod row_kernel;
mod scan;
pub(crate) mod select;
pub(crate) mod sort;
pub(crate) mod step;
mod tile_runs;
pub(crate) mod tune;

use build::{has_work, kernel_for};
use launch::launch_kernels;
pub(crate) use launch::scalars_of;
use replay::Replay;

/// A planned flush and the context it runs on.
pub(crate) struct Flush {
    pub(crate) ctx: Arc<ContextInner>,
    pub(crate) graph: Vec<GNode>,
    /// Graph indices of the roots, in the caller's order.
    pub(crate) roots: Vec<usize>,
    plans: Plans,
}

/// Flushes run so far in this process, by every context: each flush's number
/// (`graph::FlushOrigin`, the names of `LAZYCL_DUMP_DOT`'s files).
static FLUSHES: AtomicU64 = AtomicU64::new(0);

/// A flush's plans: new, or those of an earlier flush of the same signature.
enum Plans {
    /// Planned now; kept for replay under `signature` once their tiles are chosen.
    Fresh {
        kernels: Vec<KernelPlan>,
        signature: Vec<u64>,
    },
    Replayed(Arc<Replay>),
}

impl Flush {
    /// Its kernels' plans, in launch order.
    pub(crate) fn kernels(&self) -> &[KernelPlan] {
        match &self.plans {
            Plans::Fresh { kernels, .. } => kernels,
            Plans::Replayed(r) => &r.kernels,
        }
    }
}

/// Plans the flush that materializes `roots`, which must all belong to one context.
pub(crate) fn plan(roots: &[NodeRef]) -> Result<Option<Flush>> {
    plan_with(roots, None)
}

/// `Ok` if every root belongs to the first one's context (`ContextMismatch` naming the
/// one that does not): a flush, on one device or several, never mixes contexts.
pub(crate) fn same_context(roots: &[NodeRef]) -> Result<()> {
    let Some(first) = roots.first() else {
        return Ok(());
    };
    for (i, r) in roots.iter().enumerate() {
        first.ctx.tag.check(
            &r.ctx.tag,
            || "eval".into(),
            || format!("array {} of {} (shape {:?})", i + 1, roots.len(), r.shape),
        )?;
    }
    Ok(())
}

/// [`plan`], the first root stored (or added) into `target`.
fn plan_with(roots: &[NodeRef], target: Option<Target>) -> Result<Option<Flush>> {
    let Some(first) = roots.first() else {
        return Ok(None);
    };
    let ctx = first.ctx.clone();
    // This thread's `eval()`s handed to the dispatch thread go first (a no-op there).
    ctx.jobs().settle()?;
    same_context(roots)?;
    let Some(collected) = crate::plan::collect(roots, target)? else {
        return Ok(None);
    };
    let mut signature = SIGNATURE.with(Cell::take);
    crate::plan::signature::write(&collected, &mut signature);
    let plans = match replay::find(&ctx, &signature) {
        Some(r) => {
            // (Kept up to a few thousand nodes' words: one long chain does not pin its own.)
            if signature.capacity() <= SIGNATURE_KEPT {
                SIGNATURE.with(|s| s.set(signature));
            }
            Plans::Replayed(r)
        }
        None => {
            let kernels = crate::plan::plan(&collected, &ctx.profile);
            if let Some(e) = kernels.iter().find_map(|k| k.broken.as_ref()) {
                return Err(Error::Internal(format!("planning a kernel: {e}")));
            }
            Plans::Fresh { kernels, signature }
        }
    };
    Ok(Some(Flush {
        ctx,
        graph: collected.graph,
        roots: collected.roots,
        plans,
    }))
}

/// Whether the kernel of `plan` (its GEMM tile chosen) is in the context's kernel cache.
pub(crate) fn is_cached(ctx: &ContextInner, plan: &KernelPlan) -> bool {
    ctx.fused_kernels
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains_key(&plan.key)
}

/// Launches `flush` on `queue` and marks what it materialized; returns its plans.
fn run(queue: &Arc<QueueInner>, flush: Flush, targets: &[(usize, Arc<DeviceBuffer>)]) -> Result<Arc<Replay>> {
    let Flush {
        ctx,
        graph,
        roots,
        plans,
    } = flush;
    queue
        .context
        .check(&ctx.tag, || "evaluating arrays".into(), || "the arrays".into())?;
    // (Counted here, not when planned: `explain` plans without running.)
    let (replay, fresh) = match plans {
        Plans::Replayed(r) => {
            Counters::add(&ctx.counters.plans_reused, 1);
            (r, false)
        }
        Plans::Fresh {
            mut kernels,
            signature,
        } => {
            Counters::add(&ctx.counters.flushes_planned, 1);
            tune::choose_tiles(&ctx, queue, &graph, &mut kernels)?;
            let r = Arc::new(Replay::new(kernels));
            replay::keep(&ctx, signature, r.clone());
            (r, true)
        }
    };
    let number = FLUSHES.fetch_add(1, Ordering::Relaxed);
    // (Before building: the picture tells the kernels it builds from those cached.)
    if let Some(dir) = &ctx.dump_dot {
        dump_dot::dump(dir, number, &ctx, &graph, &roots, &replay.kernels, &replay.kinds);
    }
    // A new flush builds the kernels it lacks together; a replayed one built them when
    // it was first planned (and `kernel_for` finds any evicted since).
    let mut prebuilt = if fresh {
        build::build_missing(&ctx, &replay.kernels)?
    } else {
        build::Prebuilt::none()
    };
    let find = |ki: usize, plan: &KernelPlan| match prebuilt.take(ki) {
        Some(k) => Ok(Some(k)),
        None if has_work(plan) => Ok(Some(kernel_for(&ctx, plan)?)),
        None => Ok(None),
    };
    let produced = launch_kernels(&ctx, queue, &*graph, &replay, find, targets)?;
    for (gi, b) in produced.into_iter().enumerate() {
        if let Some((b, kernel)) = b {
            graph[gi].node.set_ready(b, flush_origin(number, kernel, &replay));
        }
    }
    crate::plan::collect::recycle(graph);
    Ok(replay)
}

/// What wrote an array that kernel `kernel` of flush `number` materialized.
fn flush_origin(number: u64, kernel: u32, replay: &Replay) -> Origin {
    Origin::Flush(FlushOrigin {
        flush: number,
        kernel,
        kernels: replay.kinds.clone(),
    })
}

/// Signature words a thread keeps between flushes (about 4,096 nodes' worth).
const SIGNATURE_KEPT: usize = 8 * 4096;

thread_local! {
    /// A thread's signature words, reused by its flushes' lookups (a planned flush keeps
    /// its own as the key of its plans).
    static SIGNATURE: Cell<Vec<u64>> = const { Cell::new(Vec::new()) };
}

/// Enqueues everything `roots` need on the default queue; returns without waiting.
pub(crate) fn materialize(roots: &[NodeRef]) -> Result<()> {
    match plan(roots)? {
        Some(flush) => {
            let queue = flush.ctx.queue().clone();
            run(&queue, flush, &[]).map(drop)
        }
        None => Ok(()),
    }
}

/// Enqueues everything `roots` need on `queue`; returns without waiting.
pub(crate) fn materialize_on(queue: &Arc<QueueInner>, roots: &[NodeRef]) -> Result<()> {
    match plan(roots)? {
        Some(flush) => run(queue, flush, &[]).map(drop),
        None => Ok(()),
    }
}

/// Evaluates `value` into `target`'s buffer, on `queue`.
pub(crate) fn materialize_into(
    queue: &Arc<QueueInner>,
    value: &NodeRef,
    target: Arc<DeviceBuffer>,
) -> Result<()> {
    store_into(queue, value, target, None)
}

/// Evaluates `value` into a region of `target`, the memory of an array of shape `shape`:
/// the kernel stores each element through `map` (the region as a view of that array).
/// `value` itself stays lazy.
pub(crate) fn materialize_into_region(
    queue: &Arc<QueueInner>,
    value: &NodeRef,
    target: Arc<DeviceBuffer>,
    map: &Arc<ViewMap>,
    shape: &[usize],
) -> Result<()> {
    let region = Target {
        map: map.clone(),
        shape: shape.iter().copied().collect(),
        scatter: None,
    };
    store_into(queue, value, target, Some(region))
}

/// Combines each element of `value` into `target`, the memory of an array of shape
/// `shape`, at the position `map` gives with axis `axis` taken from `index` (an index
/// array viewed in `value`'s shape), atomically as `combine` says; an element whose
/// index is outside the axis is dropped (`scatter_add`, `scatter`'s positions).
#[allow(clippy::too_many_arguments)]
pub(crate) fn materialize_scatter(
    queue: &Arc<QueueInner>,
    value: &NodeRef,
    index: &NodeRef,
    axis: usize,
    combine: ScatterCombine,
    target: Arc<DeviceBuffer>,
    map: &Arc<ViewMap>,
    shape: &[usize],
) -> Result<()> {
    let scatter = Target {
        map: map.clone(),
        shape: shape.iter().copied().collect(),
        scatter: Some(ScatterTarget {
            index: index.clone(),
            axis,
            combine,
        }),
    };
    store_into(queue, value, target, Some(scatter))
}

/// Computes `value` into `target`'s memory: the whole buffer, or as `how` says.
fn store_into(
    queue: &Arc<QueueInner>,
    value: &NodeRef,
    target: Arc<DeviceBuffer>,
    how: Option<Target>,
) -> Result<()> {
    let Some(flush) = plan_with(std::slice::from_ref(value), how)? else {
        return Ok(());
    };
    let Some(gi) = flush.graph.iter().position(|g| Arc::ptr_eq(&g.node, value)) else {
        return Ok(());
    };
    run(queue, flush, &[(gi, target)]).map(drop)
}

/// Zeroes the first `bytes` of `buffer`.
pub(super) fn zero(
    ctx: &ContextInner,
    queue: &Arc<QueueInner>,
    buffer: &DeviceBuffer,
    bytes: usize,
) -> Result<()> {
    queue.submit(Command::new(&[], &[buffer]), |q, wait, want| {
        cl::fill_buffer(q, buffer.mem(), &[0u8; 4], bytes, wait, want)
    })?;
    Counters::add(&ctx.counters.transfers_enqueued, 1);
    Ok(())
}
