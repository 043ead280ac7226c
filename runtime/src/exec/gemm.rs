//! Launching a GEMM kernel: the buffer of its row reduction's results, its grid, and a
//! split product's second kernel.

use std::sync::Arc;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::ContextInner;
use crate::backend::queue::QueueInner;
use crate::backend::submit::Command;
use crate::codegen::{gemm_combine_source, GEMM_COMBINE_KERNEL_NAME};
use crate::error::{Error, Result};
use crate::plan::{key, GemmPlan};

use super::bind::{Bindings, Launch};
use super::build::cached_kernel;

/// The buffer of GEMM kernel `g`'s row reduction's results (the flush's target where
/// there is one).
pub(super) fn gemm_row_results(
    ctx: &Arc<ContextInner>,
    queue: &QueueInner,
    g: &GemmPlan,
    targets: &[(usize, Arc<DeviceBuffer>)],
) -> Result<Option<Arc<DeviceBuffer>>> {
    let Some(row) = g.row else {
        return Ok(None);
    };
    Ok(Some(match targets.iter().find(|(t, _)| *t == row.node) {
        Some((_, b)) => b.clone(),
        None => DeviceBuffer::uninit(
            &ctx.cl,
            g.matrices() * g.m * row.dtype.size(),
            queue,
            "a matrix product's row results",
        )?,
    }))
}

/// Launches a GEMM kernel: a work-group per block of each matrix of the product (and
/// segment of `k`); a split product's partial products then go through its second kernel,
/// which adds them up and applies the epilogue. `rows`: the results of its row reduction.
pub(crate) fn launch_gemm(mut l: Launch<'_>, g: &GemmPlan, rows: Option<&DeviceBuffer>) -> Result<()> {
    let (ctx, queue, plan, io) = (l.ctx, l.queue, l.plan, l.io);
    // (`tune` chose it before the flush's kernels were built.)
    let Some(t) = g.tile else {
        return Err(Error::Internal("a GEMM kernel launched without its tile".into()));
    };
    let local = t.group();
    let global = g.groups() * local;
    if global == 0 {
        return Ok(());
    }
    let partials = match g.split {
        0 | 1 => None,
        s => Some(DeviceBuffer::uninit(
            &ctx.cl,
            s * plan.numel * g.dtype.size(),
            queue,
            "a split matrix product's partial products",
        )?),
    };
    l.bind(Bindings {
        gemm_partials: partials.as_deref(),
        gemm_rows: rows,
        ..Bindings::default()
    })?;
    let reads = io.inputs;
    let mut writes = io.writes();
    writes.extend(rows);
    let Some(partials) = &partials else {
        return l.enqueue(Command::new(reads, &writes), &[global], Some(&[local]));
    };
    l.enqueue(Command::new(reads, &[partials]), &[global], Some(&[local]))?;
    let combine = cached_kernel(
        ctx,
        &key::gemm_combine(&plan.key),
        GEMM_COMBINE_KERNEL_NAME,
        || {
            gemm_combine_source(plan)
                .ok_or_else(|| Error::Internal("a split GEMM without its second kernel".into()))
        },
    )?;
    let mut with_partials: smallvec::SmallVec<[&DeviceBuffer; 8]> = reads.iter().copied().collect();
    with_partials.push(partials);
    let (global, local) = ctx.profile.grid(plan.numel.min(ctx.profile.work_items_cap()));
    combine.launch(
        ctx,
        queue,
        Command::new(&with_partials, &writes),
        &[global],
        local.as_ref().map(std::slice::from_ref),
        l.args,
    )?;
    Ok(())
}
