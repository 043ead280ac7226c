//! Choosing each GEMM kernel's tiles before it is generated: the tile a test forces
//! (`Tuning::gemm_tile`), else the one a search chose for its shape class on this device
//! (kept by the context and in the disk cache's table, so a second process searches
//! nothing), else — for a product large enough to be worth it, unless `LAZYCL_TUNE=off` —
//! a search now, else the fixed default (`plan::tiles`).
//!
//! A search times the kernel itself, on buffers of the right sizes filled with zeros:
//! each candidate tile is built (through the kernel cache, so the winner is built once),
//! launched once to warm up, then timed over enough launches to fill a few milliseconds.
//! A candidate that fails to build or launch is passed over.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::backend::buffer::DeviceBuffer;
use crate::backend::cl;
use crate::backend::context::ContextInner;
use crate::backend::kernel::KernelArg;
use crate::backend::queue::QueueInner;
use crate::dtype::ScalarBits;
use crate::error::Result;
use crate::layout::GemmTile;
use crate::plan::access::Affine;
use crate::plan::gemm::set_tile;
use crate::plan::tiles::{self, GemmClass, SEARCH_FROM};
use crate::plan::{GNode, KernelPlan};
use crate::stats::{Counters, WaitReason};

use super::bind::Io;
use super::build::kernel_for;
use super::scalars_of;

/// How long a search times each candidate, at least (one launch when that takes longer).
const TIMED: Duration = Duration::from_millis(10);

/// Chooses the tile of every GEMM kernel of a flush that has none, searching where a
/// search is due (on `queue`, before the flush's kernels are enqueued).
pub(crate) fn choose_tiles(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    graph: &[GNode],
    plans: &mut [KernelPlan],
) -> Result<()> {
    for plan in plans.iter_mut() {
        if plan.gemm.as_ref().is_some_and(|g| g.tile.is_none()) {
            let tile = choose(ctx, Some(OnDevice { queue, graph }), plan)?;
            set_tile(plan, tile, &ctx.profile);
        }
    }
    Ok(())
}

/// Where a search may time its candidates: the flush's queue, and its graph (whose
/// scalars the launches bind).
#[derive(Clone, Copy)]
pub(crate) struct OnDevice<'a> {
    queue: &'a Arc<QueueInner>,
    graph: &'a [GNode],
}

/// The tile for GEMM plan `plan` (see the module's rules); with no `device`, never a new
/// search (`explain` shows what a launch would use, short of one).
pub(crate) fn choose(
    ctx: &Arc<ContextInner>,
    device: Option<OnDevice<'_>>,
    plan: &KernelPlan,
) -> Result<GemmTile> {
    let Some(g) = &plan.gemm else {
        return Err(crate::error::Error::Internal(
            "a tile for a kernel that is no GEMM".into(),
        ));
    };
    let profile = &ctx.profile;
    let class = GemmClass::of(g);
    // A kernel that reduces its rows needs a tile that covers them (those of any
    // length of its class, so that the class's remembered tile serves all of them).
    let rows = class.rows as usize;
    let usable = |t: &GemmTile| match rows {
        0 => tiles::fits(t, profile, g.dtype),
        n => tiles::covers_rows(t, profile, g.dtype, n),
    };
    if let Some(t) = profile.tuning.gemm_tile.filter(usable) {
        return Ok(t);
    }
    let words = class.words();
    if let Some(t) = ctx.searched_tile(&words).filter(usable) {
        return Ok(t);
    }
    match device {
        Some(device) if g.work() >= SEARCH_FROM && searching()? => {
            let t = search(ctx, device, plan, &class)?;
            ctx.remember_tile(&words, t);
            Ok(t)
        }
        _ => Ok(fallback(profile, &class)),
    }
}

/// The tile without a search: the default table's, or for a kernel that reduces its rows
/// the narrowest that covers them.
fn fallback(profile: &crate::plan::DeviceProfile, class: &GemmClass) -> GemmTile {
    match class.rows {
        0 => tiles::default_tile(profile, class),
        n => tiles::covering(profile, class.dtype, n as usize),
    }
}

/// Whether searches are on (`LAZYCL_TUNE`, on unless `off`).
fn searching() -> Result<bool> {
    Ok(crate::env::switch("LAZYCL_TUNE")? != Some(false))
}

/// Times every candidate tile for `plan` and returns the fastest.
fn search(
    ctx: &Arc<ContextInner>,
    device: OnDevice<'_>,
    plan: &KernelPlan,
    class: &GemmClass,
) -> Result<GemmTile> {
    let queue = device.queue;
    let scalars = scalars_of(plan, device.graph)?;
    let candidates = tiles::candidates(&ctx.profile, class);
    if let [only] = candidates[..] {
        return Ok(only);
    }
    Counters::add(&ctx.counters.gemm_searches, 1);
    let buffers = Buffers::for_plan(ctx, queue, plan)?;
    let mut best: Option<(Duration, GemmTile)> = None;
    for tile in candidates {
        let mut trial = plan.clone();
        set_tile(&mut trial, tile, &ctx.profile);
        let Ok(time) = time(ctx, queue, &trial, &buffers, &scalars) else {
            continue;
        };
        Counters::add(&ctx.counters.gemm_candidates, 1);
        if best.is_none_or(|(b, _)| time < b) {
            best = Some((time, tile));
        }
    }
    Ok(best.map_or_else(|| fallback(&ctx.profile, class), |(_, t)| t))
}

/// The time of one launch of `plan`'s kernel.
fn time(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    plan: &KernelPlan,
    buffers: &Buffers,
    scalars: &[ScalarBits],
) -> Result<Duration> {
    let kernel = kernel_for(ctx, plan)?;
    let reads: Vec<&DeviceBuffer> = buffers.inputs.iter().map(|b| &**b).collect();
    let io = Io {
        inputs: &reads,
        outputs: &buffers.outputs,
        scalars,
        params: None,
    };
    let mut args: Vec<KernelArg> = Vec::new();
    let mut launch =
        || super::gemm::launch_gemm(ctx, queue, &kernel, plan, &mut args, io, buffers.rows.as_deref());
    launch()?;
    queue.finish(WaitReason::Search)?;
    let start = Instant::now();
    launch()?;
    queue.finish(WaitReason::Search)?;
    let once = start.elapsed();
    let reps = (TIMED.as_secs_f64() / once.as_secs_f64().max(1e-6)).clamp(1.0, 50.0) as u32;
    let start = Instant::now();
    for _ in 0..reps {
        launch()?;
    }
    queue.finish(WaitReason::Search)?;
    Ok(start.elapsed() / reps)
}

/// Zeroed buffers as large as a GEMM plan's inputs and outputs read and write.
struct Buffers {
    inputs: Vec<Arc<DeviceBuffer>>,
    outputs: Vec<Arc<DeviceBuffer>>,
    rows: Option<Arc<DeviceBuffer>>,
}

impl Buffers {
    fn for_plan(ctx: &Arc<ContextInner>, queue: &Arc<QueueInner>, plan: &KernelPlan) -> Result<Buffers> {
        let Some(g) = &plan.gemm else {
            return Ok(Buffers {
                inputs: Vec::new(),
                outputs: Vec::new(),
                rows: None,
            });
        };
        let spaces = g.spaces();
        let zeroed = |elements: usize, size: usize| -> Result<Arc<DeviceBuffer>> {
            let bytes = (elements.max(1) * size).next_multiple_of(8);
            let b = DeviceBuffer::uninit(&ctx.cl, bytes, queue, "a tile search's test data")?;
            cl::fill_buffer(queue.raw(), b.mem(), &[0u8; 4], bytes, &[], false)?;
            Ok(b)
        };
        let inputs = (0..plan.inputs.len())
            .map(|slot| {
                let input = &plan.inputs[slot];
                // The phase of the first value that loads it.
                let phase = plan
                    .values
                    .iter()
                    .position(|v| v.value == crate::plan::Value::Load { slot })
                    .map_or(2, |v| g.phase_of(v));
                let elements = input
                    .strided
                    .as_ref()
                    .map_or(plan.numel, |a| extent(a, &spaces[phase]));
                zeroed(elements, input.dtype.size())
            })
            .collect::<Result<Vec<_>>>()?;
        let outputs = plan
            .outputs
            .iter()
            .map(|o| {
                let elements = o.store.as_ref().map_or(plan.numel, |a| extent(a, &spaces[2]));
                zeroed(elements, o.dtype.size())
            })
            .collect::<Result<Vec<_>>>()?;
        let rows = g
            .row
            .map(|r| zeroed(g.matrices() * g.m, r.dtype.size()))
            .transpose()?;
        Ok(Buffers {
            inputs,
            outputs,
            rows,
        })
    }
}

/// One past the largest element offset `a` reaches over `dims` (0 when it reaches
/// nothing: offsets are non-negative where they are read).
fn extent(a: &Affine, dims: &[usize]) -> usize {
    let most = a
        .stride
        .iter()
        .zip(dims)
        .fold(a.base, |acc, (&s, &d)| acc + (s * (d as i64 - 1).max(0)).max(0));
    usize::try_from(most + 1).unwrap_or(0)
}
