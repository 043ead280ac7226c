//! Launching a GEMM kernel: the buffer of its row reduction's results, its grid, and a
//! split product's second kernel.

use crate::backend::buffer::DeviceBuffer;
use crate::backend::submit::Command;
use crate::codegen::{gemm_combine_source, GEMM_COMBINE_KERNEL_NAME};
use crate::error::{Error, Result};
use crate::plan::{key, GemmPlan};

use super::bind::{Bindings, Launch};
use super::build::cached_kernel;
use super::memory::GemmBuffers;

/// Launches a GEMM kernel: a work-group per block of each matrix of the product (and
/// segment of `k`); a split product's partial products then go through its second kernel,
/// which adds them up and applies the epilogue. `buffers`: its row results and partial
/// products.
pub(crate) fn launch_gemm(mut l: Launch<'_>, g: &GemmPlan, buffers: &GemmBuffers) -> Result<()> {
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
    let (rows, partials) = (buffers.rows.as_deref(), &buffers.partials);
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
