//! The pass that lets an elementwise kernel finish the split reduction it reads, instead
//! of a combine pass (`w - lr * g`).

use crate::plan::kernel_plan::{Finish, FinishIn, KernelKind, KernelPlan};
use crate::plan::key;

/// Lets elementwise kernels finish the split reductions they read ([`FinishIn`]), once
/// the segments are known: a reduction that would need a combine pass (several segments,
/// no in-kernel finish, not an arg one) and a later elementwise kernel over exactly its
/// outputs that reads its result element by element (a load without broadcast: element
/// `o` of the kernel is output `o`), with no kernel in between reading that result.
/// `group` is the consumer's work-group size.
pub(crate) fn finish_in_consumers(plans: &mut [KernelPlan], group: u32) {
    for r in 0..plans.len() {
        let KernelKind::Reduction(rp) = plans[r].kind else {
            continue;
        };
        let node = plans[r].outputs[0].node;
        if rp.finish != Finish::CombinePass || rp.op.is_arg() || rp.n_out == 0 {
            continue;
        }
        let reads = |p: &KernelPlan| p.inputs.iter().any(|i| i.node == node);
        let Some(c) = (r + 1..plans.len()).find(|&k| reads(&plans[k])) else {
            continue;
        };
        let cp = &plans[c];
        let Some(slot) = cp.inputs.iter().position(|i| i.node == node) else {
            continue;
        };
        // (A plain elementwise kernel, read through one slot only: other work-groups
        // write the result while this kernel runs, so no work-item may read another's
        // element.)
        let fits = matches!(cp.kind, KernelKind::Elementwise)
            && !cp.reads_views()
            && cp.inputs.iter().filter(|i| i.node == node).count() == 1
            && cp.numel == rp.n_out
            && cp.inputs[slot].broadcast_mask == 0
            && cp.inputs[slot].dtype == rp.in_dtype
            && plans[r].outputs[0].dtype == rp.in_dtype;
        if !fits {
            continue;
        }
        let lanes = (rp.segments.next_power_of_two() as u32).clamp(1, group);
        let cp = &mut plans[c];
        let f = FinishIn {
            slot,
            op: rp.op,
            dtype: rp.in_dtype,
            lanes,
            group,
        };
        key::finish_in(&mut cp.key, &f);
        cp.kind = KernelKind::Finishing(f);
        if let KernelKind::Reduction(rr) = &mut plans[r].kind {
            rr.finish = Finish::ByConsumer;
        }
    }
}
