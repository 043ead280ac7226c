//! The pass that computes a row reduction inside the column reduction that reads it per
//! row (`X^T f(X w)`): one read of the rows instead of two.

use crate::plan::build::plan_kernel;
use crate::plan::collect::GNode;
use crate::plan::kernel_plan::KernelPlan;

/// Plans each column reduction whose operand reads, per row, a row reduction of the
/// same `[n, d]` space computed earlier in this flush as one kernel with it
/// ([`KernelPlan::row`]): one read of the rows instead of two (`X^T f(X w)`, a linear
/// model's gradient). The row reduction's own kernel is dropped. The pair runs where the
/// row reduction ran when the column reduction reads nothing produced in between (so that
/// kernels in between that read the row results still find them), else where the column
/// reduction ran when nothing in between reads them; else they stay apart. Neither
/// reduction may be an arg one. Rows one work-item reads whole
/// ([`ReducePlan::rows_fit_one_item`](crate::plan::ReducePlan::rows_fit_one_item)) are
/// always fused; rows that work-items share only up to `widest_shared_row` vectors (0
/// where their barriers are slow).
pub(crate) fn fuse_rows_into_columns(
    graph: &[GNode],
    mat: &[bool],
    plans: Vec<KernelPlan>,
    group_size: u32,
    widest_shared_row: usize,
) -> Vec<KernelPlan> {
    let mut plans: Vec<Option<KernelPlan>> = plans.into_iter().map(Some).collect();
    let allowed = |cp: &KernelPlan| {
        cp.as_reduction().is_some_and(|r| {
            r.columns()
                .is_some_and(|c| r.rows_fit_one_item() || r.n_out / c.width <= widest_shared_row)
        })
    };
    for c in 0..plans.len() {
        let Some(found) = plans[c]
            .as_ref()
            .filter(|cp| allowed(cp))
            .and_then(|cp| row_partner(&plans, c, cp))
        else {
            continue;
        };
        let (r, row_node, at) = found;
        let Some(c_node) = plans[c].as_ref().map(|p| p.outputs[0].node) else {
            continue;
        };
        let fused = plan_kernel(graph, mat, &[c_node], group_size, Some(row_node), None, None);
        // (Kernels that read views keep their own kernels: the row layouts read plain
        // rows.)
        let same_layout = fused
            .as_reduction()
            .is_some_and(|fr| fr.row.is_some() && fr.columns().is_some())
            && !fused.reads_views()
            && plans[c].as_ref().is_some_and(|cp| cp.dims == fused.dims);
        if !same_layout {
            continue;
        }
        plans[r] = None;
        plans[c] = None;
        plans[at] = Some(fused);
    }
    plans.into_iter().flatten().collect()
}

/// For the column reduction `cp` (plan `c`): the plan of a row reduction it can compute
/// inside, the row reduction's graph index, and where the pair runs.
fn row_partner(plans: &[Option<KernelPlan>], c: usize, cp: &KernelPlan) -> Option<(usize, usize, usize)> {
    let cr = *cp.as_reduction()?;
    let fits = cr.columns().is_some()
        && !cr.op.is_arg()
        && cp.dims.len() == 2
        && cr.red_mask == 0b01
        && cr.n_out > 0
        && cr.n_red > 0;
    if !fits {
        return None;
    }
    let produced_by = |g: usize| {
        (0..plans.len()).find(|&k| {
            plans[k]
                .as_ref()
                .is_some_and(|p| p.outputs.iter().any(|o| o.node == g) || super::row_totals::joins_row(p, g))
        })
    };
    // An input broadcast along the columns (read once per row) made by a row reduction.
    cp.inputs.iter().find_map(|input| {
        let g = input.node;
        if input.broadcast_mask != 0b10 {
            return None;
        }
        let r = produced_by(g).filter(|&r| r < c)?;
        let rp = plans[r].as_ref()?;
        let rr = rp.as_reduction()?;
        if rr.op.is_arg() || rr.red_mask != 0b10 || rp.dims != cp.dims || rr.row.is_some() {
            return None;
        }
        let reads_between = cp
            .inputs
            .iter()
            .any(|i| i.node != g && produced_by(i.node).is_some_and(|k| k > r && k < c));
        let between_read_rows = (r + 1..c).any(|k| {
            plans[k]
                .as_ref()
                .is_some_and(|p| p.inputs.iter().any(|i| i.node == g))
        });
        let at = if !reads_between {
            r
        } else if !between_read_rows {
            c
        } else {
            return None;
        };
        Some((r, g, at))
    })
}
