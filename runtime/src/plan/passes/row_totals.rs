//! The pass that computes a reduction of one value per row to one element beside the row
//! reduction of a column-reduction kernel (a bias update beside its gradient).

use crate::dtype::DType;
use crate::plan::build::plan_kernel;
use crate::plan::collect::{GKind, GNode, OpCode};
use crate::plan::kernel_plan::KernelPlan;

/// Computes a later reduction of one value per row to a single element beside the row
/// reduction of a column-reduction kernel ([`KernelPlan::row_total`]), dropping its own kernel: the
/// reduction reads the row reduction's result (per row, as an `[n, 1]` operand), and
/// everything else it reads is per row or a single element and is ready before that
/// kernel runs. One such reduction per kernel; `max_args` bounds the grown argument list.
pub(crate) fn fuse_row_totals(
    graph: &[GNode],
    mat: &[bool],
    mut plans: Vec<KernelPlan>,
    group_size: u32,
    max_args: usize,
) -> Vec<KernelPlan> {
    // (Plans are removed as they join: `p` can pass the end, which `total_partner` skips.)
    for p in 0..plans.len() {
        let Some((q, row_node)) = total_partner(graph, &plans, p) else {
            continue;
        };
        let (c_node, q_node) = (plans[p].outputs[0].node, plans[q].outputs[0].node);
        let fused = plan_kernel(
            graph,
            mat,
            &[c_node],
            group_size,
            Some(row_node),
            Some(q_node),
            None,
        );
        let same_layout = fused
            .as_reduction()
            .is_some_and(|r| r.row.is_some() && r.row_total.is_some() && r.columns().is_some())
            && !fused.reads_views()
            && fused.dims == plans[p].dims
            && fused.inputs.len() + fused.scalars.len() <= max_args;
        if same_layout {
            plans[p] = fused;
            plans.remove(q);
        }
    }
    plans
}

/// For the column-reduction kernel `p` with a row reduction inside: a later reduction it
/// can compute beside it ([`fuse_row_totals`]), and the row reduction's graph index.
fn total_partner(graph: &[GNode], plans: &[KernelPlan], p: usize) -> Option<(usize, usize)> {
    let pp = plans.get(p)?;
    let cr = *pp.as_reduction()?;
    let row = cr.row?;
    if cr.row_total.is_some() {
        return None;
    }
    let produced_by = |g: usize| {
        plans
            .iter()
            .position(|k| k.outputs.iter().any(|o| o.node == g) || joins_row(k, g))
    };
    let operand_shape = |q_node: usize| match &graph[q_node].kind {
        GKind::Op(OpCode::Reduce(_), inputs) => Some(&graph[inputs[0]].node.shape[..]),
        _ => None,
    };
    (p + 1..plans.len())
        .find(|&q| {
            let qp = &plans[q];
            let Some(qr) = qp.as_reduction() else { return false };
            qp.inputs.iter().any(|i| i.node == row.node)
            && qr.row.is_none()
            && qp.outputs.len() == 1
            && qr.n_out == 1
            && qr.n_red == cr.n_red
            && !qr.op.is_arg()
            && qr.in_dtype != DType::Bool
            && qp.outputs[0].dtype == qr.in_dtype
            // Per row as the column kernel sees it: `[n, 1]` broadcasts along the columns
            // of an `[n, d]` operand (not of `[n, a, b]`, which it would not align with).
            && operand_shape(qp.outputs[0].node) == Some(&[cr.n_red, 1][..])
            && operand_shape(pp.outputs[0].node).is_some_and(|s| s.len() == 2)
            // Everything else it reads is there before kernel `p` runs.
            && qp.inputs.iter().all(|i| {
                i.node == row.node
                    || matches!(graph[i.node].kind, GKind::Ready(_))
                    || produced_by(i.node).is_some_and(|k| k < p)
            })
        })
        .map(|q| (q, row.node))
}

/// Whether plan `k` computes row reduction `g` inside (its results are its output too).
pub(super) fn joins_row(k: &KernelPlan, g: usize) -> bool {
    k.as_reduction().and_then(|r| r.row).is_some_and(|r| r.node == g)
}
