//! Launching a scan kernel: one work-item per column (serial layout), or one work-group
//! per tile with the buffers the tiles publish in (tiled layout).

use crate::backend::submit::Command;
use crate::error::Result;
use crate::plan::ScanPlan;

use super::bind::{Bindings, Launch};
use super::memory::ScanBuffers;
use super::zero;

/// Launches scan `s`: tiled where its memory has tile words to publish in (`scratch`,
/// which `memory` allocates for the tiled layout only), else serial.
pub(crate) fn launch_scan(mut l: Launch<'_>, s: &ScanPlan, scratch: Option<&ScanBuffers>) -> Result<()> {
    let (ctx, queue, plan, io) = (l.ctx, l.queue, l.plan, l.io);
    let Some(scratch) = scratch else {
        let writes = io.writes();
        l.bind(Bindings::default())?;
        let cols = s.outer * s.inner;
        let (global, local) = ctx.profile.grid(cols.min(ctx.profile.work_items_cap()));
        return l.enqueue(
            Command::new(io.inputs, &writes),
            &[global],
            local.as_ref().map(std::slice::from_ref),
        );
    };
    let group = plan.group_size as usize;
    let tiles = s.tiles(plan.group_size);
    // Every tile state and word starts at zero.
    zero(ctx, queue, &scratch.status, scratch.status_bytes)?;
    zero(ctx, queue, &scratch.totals, scratch.words_bytes)?;
    zero(ctx, queue, &scratch.prefixes, scratch.words_bytes)?;
    l.bind(Bindings {
        scan: Some(scratch),
        ..Bindings::default()
    })?;
    let mut writes = io.writes();
    writes.extend([&*scratch.status, &*scratch.totals, &*scratch.prefixes]);
    l.enqueue(Command::new(io.inputs, &writes), &[tiles * group], Some(&[group]))
}
