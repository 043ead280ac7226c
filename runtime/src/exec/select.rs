//! Launching a selection ([`SelectPlan`]): one kernel with a work-group per row, or,
//! for a row split into parts, one over the parts into a scratch buffer of candidates
//! and one more over those. Nothing waits: every command is ordered after what it reads.

use std::sync::Arc;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::ContextInner;
use crate::backend::kernel::KernelArg;
use crate::backend::queue::QueueInner;
use crate::backend::submit::Command;
use crate::codegen::abi;
use crate::codegen::abi::select::{select_params, SelectParam, SELECT_KERNEL_NAME};
use crate::codegen::select::select_source;
use crate::dtype::ScalarBits;
use crate::error::Result;
use crate::plan::key;
use crate::plan::select::{SelectLayout, SelectPlan};
use crate::stats::Counters;

use super::build::cached_kernel;

/// The buffers a selection wrote: `rows * k` keys and their positions (`u32`).
pub(crate) struct Selected {
    pub(crate) keys: Arc<DeviceBuffer>,
    pub(crate) indices: Arc<DeviceBuffer>,
}

/// One launch: what it reads and writes, and how its rows are cut.
#[derive(Clone, Copy)]
struct Launch<'a> {
    keys_in: &'a DeviceBuffer,
    /// The candidates' positions (none on a first launch, which makes them).
    indices_in: Option<&'a DeviceBuffer>,
    keys_out: &'a DeviceBuffer,
    indices_out: &'a DeviceBuffer,
    group: u32,
    len: usize,
    parts: usize,
    /// Keys of a row per group.
    seg: usize,
    first: bool,
    last: bool,
}

/// Selects `plan.k` keys of each of `plan.rows` rows of `keys` on `queue`.
pub(crate) fn select_rows(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    plan: &SelectPlan,
    keys: &Arc<DeviceBuffer>,
) -> Result<Selected> {
    let new = |n: usize, bytes: usize| {
        DeviceBuffer::uninit(
            &ctx.cl,
            (n * bytes).max(1),
            queue,
            "a selection's results and scratch",
        )
    };
    let key_bytes = plan.dtype.size();
    let out = plan.rows * plan.k;
    let keys_out = new(out, key_bytes)?;
    let indices_out = new(out, 4)?;
    // A selection in one launch (its group aside): each launch below is this one but for
    // what it sets.
    let whole = Launch {
        keys_in: keys,
        indices_in: None,
        keys_out: &keys_out,
        indices_out: &indices_out,
        group: 0,
        len: plan.len,
        parts: 1,
        seg: plan.len,
        first: true,
        last: true,
    };
    match plan.layout {
        SelectLayout::Rows { group } => launch(ctx, queue, plan, Launch { group, ..whole })?,
        SelectLayout::Parts {
            parts,
            group,
            merge_group,
        } => {
            let candidates = out * parts;
            let cand_keys = new(candidates, key_bytes)?;
            let cand_indices = new(candidates, 4)?;
            let into_candidates = Launch {
                keys_out: &cand_keys,
                indices_out: &cand_indices,
                group,
                parts,
                seg: plan.part_len(),
                last: false,
                ..whole
            };
            launch(ctx, queue, plan, into_candidates)?;
            let merge = Launch {
                keys_in: &cand_keys,
                indices_in: Some(&cand_indices),
                group: merge_group,
                len: parts * plan.k,
                seg: parts * plan.k,
                first: false,
                ..whole
            };
            launch(ctx, queue, plan, merge)?;
        }
    }
    Ok(Selected {
        keys: keys_out,
        indices: indices_out,
    })
}

/// Launches a group of `l.group` work-items per part of each row.
fn launch(ctx: &Arc<ContextInner>, queue: &Arc<QueueInner>, plan: &SelectPlan, l: Launch<'_>) -> Result<()> {
    let kernel = cached_kernel(ctx, &key::select(plan, l.group), SELECT_KERNEL_NAME, || {
        Ok(select_source(plan, l.group))
    })?;
    let uint = |v: u32| {
        KernelArg::Scalar(ScalarBits {
            bits: v.into(),
            size: 4,
        })
    };
    let mut args = Vec::new();
    abi::bind(select_params(), &mut args, |p| {
        Ok::<_, crate::error::Error>(match p {
            SelectParam::KeysIn => KernelArg::Mem(l.keys_in.mem()),
            SelectParam::KeysOut => KernelArg::Mem(l.keys_out.mem()),
            // (A first launch makes the positions: its output binds as the unread input.)
            SelectParam::IndicesIn => KernelArg::Mem(l.indices_in.unwrap_or(l.indices_out).mem()),
            SelectParam::IndicesOut => KernelArg::Mem(l.indices_out.mem()),
            SelectParam::Len => KernelArg::ulong(l.len as u64),
            SelectParam::Parts => KernelArg::ulong(l.parts as u64),
            SelectParam::PartLen => KernelArg::ulong(l.seg as u64),
            SelectParam::K => uint(plan.k as u32),
            SelectParam::Flags => uint(plan.flags(l.first, l.last)),
        })
    })?;
    let mut reads: smallvec::SmallVec<[&DeviceBuffer; 2]> = smallvec::smallvec![l.keys_in];
    reads.extend(l.indices_in);
    let group = l.group as usize;
    kernel.launch(
        ctx,
        queue,
        Command::new(&reads, &[l.keys_out, l.indices_out]),
        &[plan.rows * l.parts * group],
        Some(&[group]),
        &args,
    )?;
    Counters::add(&ctx.counters.select_kernels_launched, 1);
    Ok(())
}
