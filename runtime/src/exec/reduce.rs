//! Launching a reduction plan: its partials (or results), the one or two passes, and
//! the combine pass of a split reduction that nothing else finishes.

use std::sync::Arc;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::ContextInner;
use crate::backend::kernel::KernelArg;
use crate::backend::queue::QueueInner;
use crate::backend::submit::Command;
use crate::codegen::abi::{self, CombineParam};
use crate::error::Result;
use crate::plan::{Finish, Layout, ReducePlan};

use super::bind::{Bindings, Launch, Partials};
use super::build::combine_kernel;
use super::memory::{PartialBuffers, RowTotalBuffers};

/// Enqueues reduction `r`: one pass, or two when split into segments (unless the kernel
/// finishes itself, or its consumer does: then the partials are returned, for it).
/// `partials`: its partials (its output with one segment); `row_out` and `total`: the
/// buffers of the reductions joined into it.
pub(crate) fn launch_reduce(
    mut l: Launch<'_>,
    r: &ReducePlan,
    partials: &PartialBuffers,
    row_out: Option<&DeviceBuffer>,
    total: Option<&RowTotalBuffers>,
) -> Result<Option<Arc<DeviceBuffer>>> {
    let (ctx, queue, plan, io) = (l.ctx, l.queue, l.plan, l.io);
    let out = &io.outputs[0];
    let group = plan.group_size;
    let s = r.segments;
    let (pv, pi) = (&partials.values, &partials.indices);
    let counters =
        if r.finish == Finish::InKernel || total.is_some() {
            Some(queue.finish_counters(|bytes| {
                DeviceBuffer::create(&ctx.cl, bytes, "a reduction's finish counters")
            })?)
        } else {
            None
        };
    l.bind(Bindings {
        row_out,
        partials: Some(Partials {
            values: pv,
            indices: pi,
        }),
        counters,
        total,
        ..Bindings::default()
    })?;
    let mut writes: smallvec::SmallVec<[&DeviceBuffer; 4]> = smallvec::smallvec![&**pv];
    if !Arc::ptr_eq(pv, pi) {
        writes.push(pi);
    }
    // The combine pass reads the partials only, not the row reduction's results.
    let partials_end = writes.len();
    writes.extend(row_out);
    // One work-group per block of outputs (lanes) or tile (columns; one wherever a row
    // reduction is inside) and segment; else one work-item per output and segment.
    let (global, local) = match &r.layout {
        Layout::Lanes { lanes, .. } => (
            r.n_out.div_ceil((group / lanes) as usize) * s * group as usize,
            Some(group as usize),
        ),
        Layout::Columns(c) => {
            let (_, _, tiles) = c.geometry(r.n_out, group as usize);
            (tiles * s * group as usize, Some(group as usize))
        }
        Layout::Serial => ctx.profile.grid(r.n_out * s),
    };
    let local = local.as_ref().map(std::slice::from_ref);
    if r.finish == Finish::InKernel {
        // The last work-group of each block writes the result; partials stay private.
        writes.push(out);
    }
    if let Some(t) = total {
        // A reduction over the rows beside: its parts and its result.
        writes.push(&t.result);
        if !Arc::ptr_eq(&t.parts, &t.result) {
            writes.push(&t.parts);
        }
    }
    l.enqueue(Command::new(io.inputs, &writes), &[global], local)?;
    match r.finish {
        Finish::Single | Finish::InKernel => Ok(None),
        Finish::ByConsumer => Ok(Some(pv.clone())),
        Finish::CombinePass => {
            let partials = Partials {
                values: pv,
                indices: pi,
            };
            launch_combine(ctx, queue, r, partials, &writes[..partials_end], out)?;
            Ok(None)
        }
    }
}

/// Enqueues the combine pass of a reduction in segments: reads `partials` (written by the
/// commands of `written`), writes the results into `out`.
fn launch_combine(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    r: &ReducePlan,
    partials: Partials,
    written: &[&DeviceBuffer],
    out: &DeviceBuffer,
) -> Result<()> {
    let s = r.segments;
    // Lanes per output in the combine pass: the next power of two of S, within a group
    // (of the reductions' usual size: the kernel's own may be the row's).
    let group = ctx.profile.reduce_group_size();
    let lanes = (s.next_power_of_two() as u32).clamp(1, group);
    let combine = combine_kernel(ctx, r.op, r.in_dtype, group, lanes)?;
    let params = abi::combine_params(r.op);
    let mut cargs = Vec::with_capacity(params.len());
    abi::bind(params.iter().copied(), &mut cargs, |p| {
        Ok(match p {
            CombineParam::Partials => KernelArg::Mem(partials.values.mem()),
            CombineParam::PartialIndices => KernelArg::Mem(partials.indices.mem()),
            CombineParam::Results | CombineParam::ResultIndices => KernelArg::Mem(out.mem()),
            CombineParam::Segments => KernelArg::ulong(s as u64),
            CombineParam::NRed => KernelArg::ulong(r.n_red as u64),
            CombineParam::NOut => KernelArg::ulong(r.n_out as u64),
        })
    })?;
    let groups = r.n_out.div_ceil((group / lanes) as usize);
    combine.launch(
        ctx,
        queue,
        Command::new(written, &[out]),
        &[groups * group as usize],
        Some(&[group as usize]),
        &cargs,
    )?;
    Ok(())
}
