//! Planning a row kernel ([`RowsPlan`](super::RowsPlan)): the reductions along the innermost axes of one
//! space and the elementwise points that read them back per row, as `group` gathered
//! them, in phases over explicit coordinates (`phase`): each reduction's operand, then
//! the epilogue. A later phase reads an earlier reduction's result from its output, as
//! an input (one element per row); every phase reads the same row, so the phases share
//! their input slots and the kernel keeps each slot's elements in registers.

use crate::plan::collect::{GKind, GNode, OpCode};
use crate::plan::kernel_plan::{KernelKind, KernelPlan, Output};
use crate::plan::phase::Phase;
use crate::plan::row_kernel::{rows_layout, RowReduction, RowShape, RowsLayout, RowsPlan};
use crate::plan::{key, values, Store};
use crate::profile::DeviceProfile;

/// The space of a row kernel: the operand of its first reduction (whose shape it is),
/// and how many of its trailing dims make a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RowSpace {
    pub(crate) operand: usize,
    pub(crate) inner: usize,
}

/// The row kernel reduction `r` may start: it reduces a nonempty run of its operand's
/// trailing dims (no arg reduction), and its rows fit on chip ([`rows_layout`]).
pub(crate) fn row_kernel(graph: &[GNode], r: usize, profile: &DeviceProfile) -> Option<RowSpace> {
    let GKind::Op(OpCode::Reduce(spec), inputs) = &graph[r].kind else {
        return None;
    };
    let operand = inputs[0];
    let shape = &graph[operand].node.shape;
    let rank = shape.len();
    let inner = spec.axes.count_ones() as usize;
    let suffix = (rank - inner.min(rank)..rank).fold(0u64, |m, d| m | 1 << d);
    if spec.op.is_arg() || inner == 0 || inner > rank || spec.axes != suffix {
        return None;
    }
    layout_of(graph, operand, inner, profile)?;
    Some(RowSpace { operand, inner })
}

/// The layout of a row kernel over the rows of the `inner` trailing dims of `operand`.
pub(crate) fn layout_of(
    graph: &[GNode],
    operand: usize,
    inner: usize,
    profile: &DeviceProfile,
) -> Option<RowsLayout> {
    let shape = &graph[operand].node.shape;
    let len: usize = shape[shape.len() - inner..].iter().product();
    let rows = shape.iter().product::<usize>().checked_div(len).unwrap_or(0);
    let innermost = shape.last().copied().unwrap_or(1);
    rows_layout(
        RowShape { rows, len, innermost },
        graph[operand].node.dtype,
        profile,
    )
}

/// Plans the row kernel of `members` (reductions of the innermost `inner` dims of one
/// space and elementwise points of that space, in graph order; the first is a
/// reduction) with `layout`. `store`: the member stored into a region of an array.
pub(crate) fn plan_rows(
    graph: &[GNode],
    mat: &[bool],
    members: &[usize],
    inner: usize,
    layout: RowsLayout,
    store: Option<&Store>,
) -> KernelPlan {
    let first = members[0];
    let space: Vec<usize> = match &graph[first].kind {
        GKind::Op(OpCode::Reduce(_), inputs) => graph[inputs[0]].node.shape.to_vec(),
        _ => graph[first].node.shape.to_vec(),
    };
    let rank = space.len();
    let numel: usize = space.iter().product();
    let len: usize = space[rank - inner..].iter().product();
    let rows = numel.checked_div(len).unwrap_or(0);
    let mut plan = KernelPlan::empty(space.clone(), numel, layout.group);
    key::dims(&mut plan.key, rank, plan.narrow_index);
    key::rows(&mut plan.key, inner, &layout);
    let reductions = reductions(graph, mat, members, &space, &mut plan);
    let epilogue = plan.values.len();
    key::rows_epilogue(&mut plan.key, epilogue);
    let targets: Vec<usize> = members
        .iter()
        .copied()
        .filter(|&m| !matches!(graph[m].kind, GKind::Op(OpCode::Reduce(_), _)))
        .collect();
    if !targets.is_empty() {
        Phase {
            targets: &targets,
            extra: None,
            space,
            product: None,
            store,
            share_slots: true,
        }
        .bind(graph, mat, &mut plan);
    }
    // (Loads over explicit coordinates: offsets stay `long`.)
    key::offsets(&mut plan.key, false);
    values::mark_branch_loads(&mut plan);
    plan.kind = KernelKind::Rows(RowsPlan {
        inner,
        len,
        rows,
        reductions,
        epilogue,
        layout,
    });
    plan
}

/// Binds the phase of each reduction among `members` (in order) over `space` into
/// `plan`: its operand's values, and its result as an output.
fn reductions(
    graph: &[GNode],
    mat: &[bool],
    members: &[usize],
    space: &[usize],
    plan: &mut KernelPlan,
) -> Vec<RowReduction> {
    let mut reductions = Vec::new();
    for &m in members {
        let GKind::Op(OpCode::Reduce(spec), inputs) = &graph[m].kind else {
            continue;
        };
        let operand = Phase {
            targets: &[],
            extra: Some(inputs[0]),
            space: space.to_vec(),
            product: None,
            store: None,
            share_slots: true,
        };
        let start = plan.values.len();
        let value = operand.bind(graph, mat, plan).value;
        let dtype = graph[m].node.dtype;
        plan.outputs.push(Output {
            value,
            dtype,
            node: m,
            store: None,
            scatter: None,
        });
        key::row_reduction(&mut plan.key, spec.op, dtype, value);
        reductions.push(RowReduction {
            op: spec.op,
            dtype,
            start,
            value,
            output: plan.outputs.len() - 1,
            node: m,
        });
    }
    reductions
}
