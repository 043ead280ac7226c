//! Planning a scan kernel with the elementwise consumers that joined its group
//! (`group`): they run where the scan stores each element, so `x.cumsum(0) * 2.0 - y`
//! is one kernel and the scan itself is stored only if something else reads it.
//!
//! Two phases over the scan's shape (`phase`, with explicit coordinates): the operand,
//! evaluated where the kernel loads its tiles, and the epilogue, whose product is the
//! scanned element, read only at its own coordinates (`group` admits nothing else).

use crate::plan::collect::{GKind, GNode, OpCode};
use crate::plan::kernel_plan::{KernelKind, KernelPlan};
use crate::plan::phase::axis_phases;
use crate::plan::scan::scan_plan;
use crate::plan::{key, Store};

/// Plans the kernel of scan `members[0]` and the elementwise points `members[1..]` that
/// joined it. `stored`: the scan itself is an output (a root, or read by another
/// kernel). `store`: the member stored into a region of an array.
pub(crate) fn plan_scan(
    graph: &[GNode],
    mat: &[bool],
    members: &[usize],
    stored: bool,
    store: Option<&Store>,
    group_size: u32,
) -> KernelPlan {
    let scan = members[0];
    let space: Vec<usize> = graph[scan].node.shape.to_vec();
    let numel: usize = space.iter().product();
    let mut plan = KernelPlan::empty(space.clone(), numel, group_size);
    let GKind::Op(OpCode::Scan(spec), inputs) = &graph[scan].kind else {
        plan.broken = Some(format!("node {scan} planned as a scan is none"));
        return plan;
    };
    let operand = inputs[0];
    key::dims(&mut plan.key, space.len(), plan.narrow_index);
    let mut s = scan_plan(*spec, graph[operand].node.dtype, &space, group_size);
    key::scan(&mut plan.key, &s, group_size);
    let at = axis_phases(graph, mat, &mut plan, members, operand, stored, store, "scan");
    (s.value, s.epilogue) = (at.value, Some(at.epilogue));
    plan.kind = KernelKind::Scan(s);
    plan
}
