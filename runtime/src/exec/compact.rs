//! Launching a compaction ([`CompactPlan`]): the tiles' state zeroed, then one kernel.
//! Nothing waits.

use std::sync::Arc;

use crate::backend::buffer::DeviceBuffer;
use crate::backend::context::ContextInner;
use crate::backend::kernel::KernelArg;
use crate::backend::queue::QueueInner;
use crate::backend::submit::Command;
use crate::codegen::abi;
use crate::codegen::abi::compact::{compact_params, CompactParam, COMPACT_KERNEL_NAME};
use crate::codegen::compact::compact_source;
use crate::error::{Error, Result};
use crate::plan::compact::{CompactPlan, COMPACT_GROUP};
use crate::plan::key;

use super::build::cached_kernel;
use super::zero;

/// Writes the elements of `values` (or the positions, for a plan of positions) where
/// `mask` is nonzero into `out`, in order (positions as `u32`), and their number into
/// `count` (a `u64`).
pub(crate) fn compact(
    ctx: &Arc<ContextInner>,
    queue: &Arc<QueueInner>,
    plan: &CompactPlan,
    mask: &DeviceBuffer,
    values: Option<&DeviceBuffer>,
    out: &DeviceBuffer,
    count: &DeviceBuffer,
) -> Result<()> {
    if plan.n == 0 {
        return zero(ctx, queue, count, 8);
    }
    let tiles = plan.tiles();
    // The tile counter, then each tile's state, all zero.
    let status = DeviceBuffer::uninit(&ctx.cl, (tiles + 1) * 8, queue, "a compaction's tile counts")?;
    zero(ctx, queue, &status, (tiles + 1) * 8)?;
    let kernel = cached_kernel(ctx, &key::compact(plan), COMPACT_KERNEL_NAME, || {
        Ok(compact_source(plan))
    })?;
    let missing = || Error::Internal("a compaction of elements launched without them".into());
    let mut args = Vec::new();
    abi::bind(compact_params(plan.picked), &mut args, |p| {
        Ok(match p {
            CompactParam::Mask => KernelArg::Mem(mask.mem()),
            CompactParam::ValuesIn => KernelArg::Mem(values.ok_or_else(missing)?.mem()),
            CompactParam::ValuesOut => KernelArg::Mem(out.mem()),
            CompactParam::Count => KernelArg::Mem(count.mem()),
            CompactParam::State => KernelArg::Mem(status.mem()),
            CompactParam::Len => KernelArg::ulong(plan.n as u64),
        })
    })?;
    let mut reads: smallvec::SmallVec<[&DeviceBuffer; 2]> = smallvec::smallvec![mask];
    reads.extend(values);
    let writes = [out, count, &*status];
    let group = COMPACT_GROUP as usize;
    kernel.launch(
        ctx,
        queue,
        Command::new(&reads, &writes),
        &[tiles * group],
        Some(&[group]),
        &args,
    )?;
    Ok(())
}
