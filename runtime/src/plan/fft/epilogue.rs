//! Planning a transform pass's kernel with the elementwise consumers that joined its
//! group, as a scan's is (`plan::scan::epilogue`): two phases over the pass's shape, the
//! operand evaluated where the kernel loads its points, and the epilogue, whose product
//! is the transformed element, read only at its own coordinates.

use super::fft_plan;
use crate::plan::collect::{GKind, GNode, OpCode};
use crate::plan::kernel_plan::{KernelKind, KernelPlan};
use crate::plan::phase::Phase;
use crate::plan::{key, values, Store};

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
    let loads = Phase {
        targets: &[],
        extra: Some(operand),
        space: space.clone(),
        product: None,
        store: None,
        share_slots: false,
    };
    f.value = loads.bind(graph, mat, &mut plan).value;
    let start = plan.values.len();
    key::scan_epilogue(&mut plan.key, start);
    let mut targets = members[1..].to_vec();
    if stored {
        targets.insert(0, pass);
    }
    let epilogue = Phase {
        targets: &targets,
        extra: None,
        space,
        product: Some(pass),
        store,
        share_slots: false,
    };
    if !epilogue.bind(graph, mat, &mut plan).product_plain {
        plan.broken.get_or_insert_with(|| {
            format!("the epilogue of transform pass {pass} reads it elsewhere than at its own coordinates")
        });
    }
    f.epilogue = Some(start);
    // (Loads over explicit coordinates: offsets stay `long`.)
    key::offsets(&mut plan.key, false);
    values::mark_branch_loads(&mut plan);
    plan.kind = KernelKind::Fft(f);
    plan
}
