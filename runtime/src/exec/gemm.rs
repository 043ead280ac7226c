//! Launching a GEMM kernel: the buffer of its row reduction's results, its grid, and a
//! split product's second kernel.

use std::sync::Arc;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::ContextInner;
use crate::backend::kernel::{CompiledKernel, KernelArg};
use crate::backend::queue::QueueInner;
use crate::backend::submit::Command;
use crate::codegen::{gemm_combine_source, GEMM_COMBINE_KERNEL_NAME};
use crate::error::{Error, Result};
use crate::plan::{key, KernelPlan};

use super::bind::{Bindings, Io};
use super::build::cached_kernel;

/// The buffer of a GEMM kernel's row reduction's results (the flush's target where
/// there is one).
pub(super) fn gemm_row_results(
    ctx: &Arc<ContextInner>,
    queue: &QueueInner,
    plan: &KernelPlan,
    targets: &[(usize, Arc<DeviceBuffer>)],
) -> Result<Option<Arc<DeviceBuffer>>> {
    let Some((g, row)) = plan.gemm.as_ref().and_then(|g| g.row.map(|r| (g, r))) else {
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
pub(crate) fn launch_gemm(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    kernel: &CompiledKernel,
    plan: &KernelPlan,
    args: &mut Vec<KernelArg>,
    io: Io<'_>,
    rows: Option<&DeviceBuffer>,
) -> Result<()> {
    let (Some(g), Some(t)) = (&plan.gemm, plan.gemm.as_ref().and_then(|g| g.tile)) else {
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
    Bindings {
        io,
        gemm_partials: partials.as_deref(),
        gemm_rows: rows,
        ..Bindings::default()
    }
    .bind(plan, args)?;
    let reads = io.inputs;
    let mut writes = io.writes();
    writes.extend(rows);
    let Some(partials) = &partials else {
        kernel.launch(
            ctx,
            queue,
            Command::new(reads, &writes),
            &[global],
            Some(&[local]),
            args,
        )?;
        return Ok(());
    };
    kernel.launch(
        ctx,
        queue,
        Command::new(reads, &[partials]),
        &[global],
        Some(&[local]),
        args,
    )?;
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
        args,
    )?;
    Ok(())
}
