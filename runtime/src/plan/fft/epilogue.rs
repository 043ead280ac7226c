//! Planning a transform pass's kernel with the elementwise consumers that joined its
//! group, as a scan's is (`plan::scan::epilogue`): two phases over the pass's shape, the
//! operand evaluated where the kernel loads its points, and the epilogue, whose product
//! is the transformed element, read only at its own coordinates.

use super::fft_plan;
use crate::plan::collect::{GKind, GNode, OpCode};
use crate::plan::kernel_plan::{KernelKind, KernelPlan};
use crate::plan::phase::axis_phases;
use crate::plan::{key, Store};

/// Plans the kernel of pass `members[0]` and the elementwise points `members[1..]` that
/// joined it. `stored`: the pass itself is an output (a root, or read by another kernel).
/// `store`: the member stored into a region of an array.
pub(crate) fn plan_fft(
    graph: &[GNode],
    mat: &[bool],
    members: &[usize],
    stored: bool,
    store: Option<&Store>,
) -> KernelPlan {
    let pass = members[0];
    let space: Vec<usize> = graph[pass].node.shape.to_vec();
    let numel: usize = space.iter().product();
    let GKind::Op(OpCode::Fft(spec), inputs) = &graph[pass].kind else {
        let mut plan = KernelPlan::empty(space, numel, 0);
        plan.broken = Some(format!("node {pass} planned as a transform pass is none"));
        return plan;
    };
    let operand = inputs[0];
    let mut f = fft_plan(*spec, graph[operand].node.dtype, &space);
    let mut plan = KernelPlan::empty(space.clone(), numel, f.group_size());
    key::dims(&mut plan.key, space.len(), plan.narrow_index);
    key::fft(&mut plan.key, &f);
    let at = axis_phases(
        graph,
        mat,
        &mut plan,
        members,
        operand,
        stored,
        store,
        "transform pass",
    );
    (f.value, f.epilogue) = (at.value, Some(at.epilogue));
    plan.kind = KernelKind::Fft(f);
    plan
}
