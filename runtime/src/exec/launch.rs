//! The launch loop of a flush: its kernels in order, each kernel's outputs taken from the
//! pool (or the flush's targets), its inputs read from the flush's leaves or from what
//! earlier kernels of the flush produced, its arguments bound from `abi` and launched by
//! the layout's launcher. Shared by an implicit flush (`run`) and a captured step's runs
//! (`step::replay`).

use std::cell::Cell;
use std::sync::Arc;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::ContextInner;
use crate::backend::kernel::{CompiledKernel, KernelArg};
use crate::backend::queue::QueueInner;
use crate::dtype::ScalarBits;
use crate::error::{Error, Result};
use crate::plan::{KernelKind, KernelPlan, Leaves};

use super::bind::{Io, Launch, LeftPartials};
use super::elementwise::{launch_elementwise, launch_finishing};
use super::gemm::launch_gemm;
use super::memory::{self, Beside, GemmBuffers, KernelMemory};
use super::reduce::launch_reduce;
use super::replay::Replay;
use super::row_kernel::launch_rows;
use super::{fft, scan};

/// The buffers a flush materialized, by graph index, with the kernel that wrote each
/// (inline up to a small graph's size: a captured run allocates none).
pub(super) type Produced = smallvec::SmallVec<[Option<(Arc<DeviceBuffer>, u32)>; 16]>;

/// Launches `replay`'s kernels on `queue`, in order, reading the flush's leaves from
/// `leaves` (a graph of `leaves.len()` nodes) and each kernel from `find` (`None`: an
/// empty kernel, launched by nobody); outputs come from the pool, or from `targets`.
pub(super) fn launch_kernels<L: Leaves + ?Sized>(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    leaves: &L,
    replay: &Replay,
    find: impl FnMut(usize, &KernelPlan) -> Result<Option<Arc<CompiledKernel>>>,
    targets: &[(usize, Arc<DeviceBuffer>)],
) -> Result<Produced> {
    let mut args = ARGS.with(Cell::take);
    let launched = launch_with(ctx, queue, leaves, replay, find, targets, &mut args);
    args.clear();
    ARGS.with(|a| a.set(args));
    launched
}

thread_local! {
    /// A thread's argument list, reused by its flushes: a reduction kernel has a few
    /// dozen 72-byte arguments, a list past what the allocator serves from its per-thread
    /// caches, and allocating it anew cost more than binding it
    /// (RESULTS.md#rule-reused-flush-vectors).
    static ARGS: Cell<Vec<KernelArg>> = const { Cell::new(Vec::new()) };
}

/// [`launch_kernels`], binding each kernel's arguments in `args`.
fn launch_with<L: Leaves + ?Sized>(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    leaves: &L,
    replay: &Replay,
    mut find: impl FnMut(usize, &KernelPlan) -> Result<Option<Arc<CompiledKernel>>>,
    targets: &[(usize, Arc<DeviceBuffer>)],
    args: &mut Vec<KernelArg>,
) -> Result<Produced> {
    let mut produced: Produced = smallvec::smallvec![None; leaves.len()];
    // Partials of split reductions that their consumer finishes.
    let mut partials: Vec<LeftPartials> = Vec::new();
    for (ki, plan) in replay.kernels.iter().enumerate() {
        let kernel = find(ki, plan)?;
        let ki = ki as u32;
        let KernelMemory { outputs, beside } = memory::allocate(ctx, queue, plan, targets, kernel.is_some())?;
        // (A row kernel's later phases read its reductions' results as an input, from
        // local memory in fact.)
        if let KernelKind::Rows(r) = &plan.kind {
            for red in &r.reductions {
                produced[plan.outputs[red.output].node] = Some((outputs[red.output].clone(), ki));
            }
        }
        // The partials this kernel finishes, if it does (before `reads`, which borrows them).
        let finishing = finished_here(plan, &mut partials);
        let reads = inputs_of(plan, leaves, &produced)?;
        let scalars = scalars_of(plan, leaves)?;
        let io = Io {
            inputs: &reads,
            outputs: &outputs,
            scalars: &scalars,
            params: Some(&replay.params[ki as usize]),
        };
        // (No kernel: an empty one, nothing to launch.)
        let joined = match &kernel {
            Some(kernel) => {
                let launch = Launch {
                    ctx,
                    queue,
                    kernel,
                    plan,
                    args: &mut *args,
                    io,
                };
                launch_kind(launch, beside, finishing.as_ref(), &mut partials)?
            }
            None => Joined::default(),
        };
        drop(reads);
        // (A value stored into a region of another array stays lazy: that memory is the
        // other array's.)
        for (o, b) in plan
            .outputs
            .iter()
            .zip(outputs)
            .filter(|(o, _)| o.store.is_none())
        {
            produced[o.node] = Some((b, ki));
        }
        for (gi, b) in joined.row.into_iter().chain(joined.total) {
            produced[gi] = Some((b, ki));
        }
    }
    Ok(produced)
}

/// The results of the reductions computed inside a kernel beside its outputs, each with
/// its graph index.
#[derive(Default)]
struct Joined {
    /// A row reduction's (inside a column reduction, or a GEMM kernel).
    row: Option<(usize, Arc<DeviceBuffer>)>,
    /// A reduction over the rows computed beside a row reduction.
    total: Option<(usize, Arc<DeviceBuffer>)>,
}

/// Launches `launch` by its plan's kind with the memory `beside` its outputs; a
/// finishing kernel finishes `finishing`, and a split reduction leaves its partials in
/// `partials` for the kernel that finishes them.
fn launch_kind(
    launch: Launch<'_>,
    beside: Beside,
    finishing: Option<&LeftPartials>,
    partials: &mut Vec<LeftPartials>,
) -> Result<Joined> {
    let plan = launch.plan;
    let mut joined = Joined::default();
    match (&plan.kind, beside) {
        (
            KernelKind::Reduction(r),
            Beside::Reduction {
                partials: p,
                row,
                total,
            },
        ) => {
            let left = launch_reduce(launch, r, &p, row.as_deref(), total.as_ref())?;
            if let Some(pv) = left {
                partials.push(LeftPartials {
                    node: plan.outputs[0].node,
                    partials: pv,
                    segments: r.segments,
                    n_red: r.n_red,
                });
            }
            joined.row = r.row.map(|row| row.node).zip(row);
            joined.total = r.row_total.map(|t| t.node).zip(total.map(|t| t.result));
        }
        // (No reduction memory: an empty result, nothing to reduce.)
        (KernelKind::Reduction(_), _) => {}
        (KernelKind::Finishing(f), _) => launch_finishing(launch, f, finishing)?,
        (KernelKind::Rows(r), _) => launch_rows(launch, r)?,
        (KernelKind::Scan(s), Beside::Scan(scratch)) => scan::launch_scan(launch, s, Some(&scratch))?,
        (KernelKind::Scan(s), _) => scan::launch_scan(launch, s, None)?,
        (KernelKind::Fft(f), _) => fft::launch_fft(launch, f)?,
        (KernelKind::Gemm(g), beside) => {
            let buffers = match beside {
                Beside::Gemm(b) => b,
                _ => GemmBuffers::default(),
            };
            launch_gemm(launch, g, &buffers)?;
            joined.row = g.row.map(|r| r.node).zip(buffers.rows);
        }
        (KernelKind::Elementwise, _) => launch_elementwise(launch, false)?,
        (KernelKind::Tiled, _) => launch_elementwise(launch, true)?,
    }
    Ok(joined)
}

/// The partials of `partials` that `plan` finishes (a finishing kernel's), taken out.
fn finished_here(plan: &KernelPlan, partials: &mut Vec<LeftPartials>) -> Option<LeftPartials> {
    let KernelKind::Finishing(f) = &plan.kind else {
        return None;
    };
    let node = plan.inputs[f.slot].node;
    partials
        .iter()
        .position(|p| p.node == node)
        .map(|k| partials.swap_remove(k))
}

/// The memory of each of `plan`'s inputs: a leaf of the flush, or what an earlier kernel
/// `produced`.
fn inputs_of<'a, L: Leaves + ?Sized>(
    plan: &KernelPlan,
    leaves: &'a L,
    produced: &'a Produced,
) -> Result<smallvec::SmallVec<[&'a DeviceBuffer; 8]>> {
    let mut reads = smallvec::SmallVec::new();
    for input in &plan.inputs {
        let buffer: &DeviceBuffer = match (leaves.buffer(input.node), &produced[input.node]) {
            (Some(b), _) => b,
            (None, Some((b, _))) => b,
            (None, None) => return Err(Error::Internal("kernel input was not produced".into())),
        };
        reads.push(buffer);
    }
    Ok(reads)
}

/// The bytes of `plan`'s scalar arguments in the flush of `leaves`.
pub(crate) fn scalars_of<L: Leaves + ?Sized>(
    plan: &KernelPlan,
    leaves: &L,
) -> Result<smallvec::SmallVec<[ScalarBits; 4]>> {
    let mut bits = smallvec::SmallVec::with_capacity(plan.scalars.len());
    for s in &plan.scalars {
        let Some(b) = s.bits(leaves) else {
            return Err(Error::Internal("a plan's scalar argument names no scalar".into()));
        };
        bits.push(b);
    }
    Ok(bits)
}
