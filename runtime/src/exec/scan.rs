//! Launching a scan kernel: one work-item per column (serial layout), or one work-group
//! per tile with the buffers the tiles publish in (tiled layout).

use crate::backend::buffer::DeviceBuffer;
use crate::backend::submit::Command;
use crate::error::Result;
use crate::plan::{ScanLayout, ScanPlan};

use super::bind::{Bindings, Launch, ScanScratch};
use super::zero;

/// Launches scan `s`.
pub(crate) fn launch_scan(mut l: Launch<'_>, s: &ScanPlan) -> Result<()> {
    let (ctx, queue, plan, io) = (l.ctx, l.queue, l.plan, l.io);
    if s.layout == ScanLayout::Serial {
        let writes = io.writes();
        l.bind(Bindings::default())?;
        let cols = s.outer * s.inner;
        let (global, local) = ctx.profile.grid(cols.min(ctx.profile.work_items_cap()));
        return l.enqueue(
            Command::new(io.inputs, &writes),
            &[global],
            local.as_ref().map(std::slice::from_ref),
        );
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
    l.bind(Bindings {
        scan: Some(ScanScratch {
            status: &status,
            totals: &totals,
            prefixes: &prefixes,
        }),
        ..Bindings::default()
    })?;
    let mut writes = io.writes();
    writes.extend([&*status, &*totals, &*prefixes]);
    l.enqueue(Command::new(io.inputs, &writes), &[tiles * group], Some(&[group]))
}
