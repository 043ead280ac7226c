//! Launching a scan kernel: one work-item per column (serial layout), or one work-group
//! per tile with the buffers the tiles publish in (tiled layout).

use std::sync::Arc;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::ContextInner;
use crate::backend::kernel::{CompiledKernel, KernelArg};
use crate::backend::queue::QueueInner;
use crate::backend::submit::Command;
use crate::error::{Error, Result};
use crate::plan::{KernelPlan, ScanLayout};

use super::bind::{Bindings, Io, ScanScratch};
use super::zero;

pub(crate) fn launch_scan(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    kernel: &CompiledKernel,
    plan: &KernelPlan,
    args: &mut Vec<KernelArg>,
    io: Io<'_>,
) -> Result<()> {
    let Some(s) = plan.scan else {
        return Err(Error::Internal("a scan launched without its plan".into()));
    };
    if s.layout == ScanLayout::Serial {
        let writes = io.writes();
        Bindings {
            io,
            ..Bindings::default()
        }
        .bind(plan, args)?;
        let cols = s.outer * s.inner;
        let (global, local) = ctx.profile.grid(cols.min(ctx.profile.work_items_cap()));
        kernel.launch(
            ctx,
            queue,
            Command::new(io.inputs, &writes),
            &[global],
            local.as_ref().map(std::slice::from_ref),
            args,
        )?;
        return Ok(());
    }
    let group = plan.group_size as usize;
    let tiles = s.tiles(plan.group_size);
    // The tile counter starts at zero.
    let status_bytes = 4;
    // Each tile's total and prefix: a 64-bit word per 32 bits, zero until published.
    let words_bytes = tiles * s.dtype.size().div_ceil(4) * 8;
    let status = DeviceBuffer::uninit(&ctx.cl, status_bytes, queue, "a scan's tile states")?;
    let totals = DeviceBuffer::uninit(&ctx.cl, words_bytes, queue, "a scan's tile sums")?;
    let prefixes = DeviceBuffer::uninit(&ctx.cl, words_bytes, queue, "a scan's tile sums")?;
    for (buffer, bytes) in [
        (&status, status_bytes),
        (&totals, words_bytes),
        (&prefixes, words_bytes),
    ] {
        zero(ctx, queue, buffer, bytes)?;
    }
    Bindings {
        io,
        scan: Some(ScanScratch {
            status: &status,
            totals: &totals,
            prefixes: &prefixes,
        }),
        ..Bindings::default()
    }
    .bind(plan, args)?;
    let mut writes = io.writes();
    writes.extend([&*status, &*totals, &*prefixes]);
    kernel.launch(
        ctx,
        queue,
        Command::new(io.inputs, &writes),
        &[tiles * group],
        Some(&[group]),
        args,
    )?;
    Ok(())
}
