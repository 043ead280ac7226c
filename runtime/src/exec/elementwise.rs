//! Launching elementwise kernels: a grid-stride loop, tiles of a transposed read, or
//! first finishing the split reduction the kernel reads.

use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::ContextInner;
use crate::backend::submit::Command;
use crate::error::{Error, Result};
use crate::plan::{FinishIn, KernelPlan, TILE, TILE_ROWS};

use super::bind::{Bindings, Launch, LeftPartials};

/// Launches an elementwise kernel that first finishes the split reduction `f` it reads
/// (`finishing`: the partials it left).
pub(super) fn launch_finishing(
    mut l: Launch<'_>,
    f: &FinishIn,
    finishing: Option<&LeftPartials>,
) -> Result<()> {
    // (The reduction's launch left them: found unless a plan broke its invariant.)
    let Some(left) = finishing else {
        return Err(Error::Internal(
            "a kernel finishing a reduction found no partials".into(),
        ));
    };
    let io = l.io;
    l.bind(Bindings {
        finished: Some(left),
        ..Bindings::default()
    })?;
    // The reduction's array is written here, not read.
    let mut reads: smallvec::SmallVec<[&DeviceBuffer; 8]> = io.inputs.iter().copied().collect();
    let result = reads.remove(f.slot);
    reads.push(&left.partials);
    let mut writes = io.writes();
    writes.push(result);
    let per_group = (f.group / f.lanes) as usize;
    let global = l.plan.numel.div_ceil(per_group) * f.group as usize;
    l.enqueue(
        Command::new(&reads, &writes),
        &[global],
        Some(&[f.group as usize]),
    )
}

/// Launches an elementwise kernel over its iteration space (a grid-stride loop on GPUs),
/// or a tiled one over its tiles ([`tiled_grid`]).
pub(super) fn launch_elementwise(mut l: Launch<'_>, tiled: bool) -> Result<()> {
    let (ctx, plan, io) = (l.ctx, l.plan, l.io);
    let private = plan
        .outputs
        .iter()
        .any(|o| o.scatter.is_some_and(|s| s.private.is_some()));
    let (global, local) = if tiled {
        tiled_grid(ctx, plan)
    } else if private {
        // Each group flushes its private copies once: few groups, each looping long.
        let group = ctx.profile.reduce_group_size() as usize;
        let groups = plan
            .numel
            .div_ceil(group)
            .min(2 * ctx.profile.compute_units.max(1) as usize);
        (
            smallvec::smallvec![groups * group],
            Some(smallvec::smallvec![group]),
        )
    } else {
        let cap = ctx.profile.work_items_cap();
        let work = if plan.dims.len() == 1 {
            let w = plan.vector_width();
            let nv = plan.numel / w;
            nv.max(plan.numel - nv * w)
        } else {
            plan.numel
        };
        let (global, local) = ctx.profile.grid(work.min(cap));
        (smallvec::smallvec![global], local.map(|l| smallvec::smallvec![l]))
    };
    l.bind(Bindings::default())?;
    l.enqueue(Command::new(io.inputs, &io.writes()), &global, local.as_deref())
}

/// The grid of a tiled elementwise kernel: a work-group per tile of the two innermost
/// dims, and along the third grid dim enough groups for the outer dims (each loops over
/// the rest).
fn tiled_grid(ctx: &ContextInner, plan: &KernelPlan) -> (Grid, Option<Grid>) {
    let rank = plan.dims.len();
    let (rows, cols) = (plan.dims[rank - 2], plan.dims[rank - 1]);
    let outer: usize = plan.dims[..rank - 2].iter().product();
    let tiles = rows.div_ceil(TILE) * cols.div_ceil(TILE);
    let layers = outer
        .min(ctx.profile.work_items_cap().div_ceil(tiles * TILE * TILE_ROWS))
        .max(1);
    let global = smallvec::smallvec![
        cols.div_ceil(TILE) * TILE,
        rows.div_ceil(TILE) * TILE_ROWS,
        layers
    ];
    (global, Some(smallvec::smallvec![TILE, TILE_ROWS, 1]))
}

/// A launch's global or local size (up to three dims).
type Grid = smallvec::SmallVec<[usize; 3]>;
