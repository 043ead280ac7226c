//! The end of a kernel with a reduction over the rows beside its row reduction
//! ([`KernelPlan::row_total`]).

use crate::codegen::accumulators::count_finished_group;
use crate::codegen::ops::{combine, identity, vt};
use crate::codegen::writer::Src;
use crate::graph::ReduceOp;
use crate::plan::{JoinedReduction, KernelPlan};

/// After every work-item has added its rows' values into `tacc`: a tree over the group;
/// with one segment the first work-item writes the result, else each group writes its
/// part `totv[s]` and counts itself, and the last group to finish combines the parts (as
/// a reduction finished in its kernel does: plain loads see them, written before the
/// fence and the count) and sets the counter back to zero. Barriers are reached by every
/// work-item (`S` and `tlast` are the same for the whole group).
pub(in crate::codegen) fn row_total_end(plan: &KernelPlan, total: &JoinedReduction, ix: &str, src: &mut Src) {
    let g = plan.group_size;
    let (op, d, t) = (total.op, total.dtype, vt(total.dtype));
    let result = if op == ReduceOp::Mean {
        format!("tsv[0] / ({t})n_red")
    } else {
        "tsv[0]".to_string()
    };
    let counter = crate::layout::ROW_TOTAL_COUNTER;
    src.line(format_args!("__local {t} tsv[{g}];"));
    src.line("__local uint tlast;");
    src.line("tsv[lid] = tacc;");
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    tree(src, g, total);
    src.open("if (S == 1u) {");
    src.line(format_args!("if (lid == 0u) totout[0] = {result};"));
    src.reopen("} else {");
    src.line("if (lid == 0u) totv[s] = tsv[0];");
    count_finished_group(src, "tlast", &format!("tdone[{counter}u]"));
    src.open("if (tlast) {");
    src.line(format_args!("{t} part = {};", identity(op, d)));
    src.line(format_args!(
        "for ({ix} k = lid; k < S; k += {g}u) part = {};",
        combine(op, d, "part", "totv[k]")
    ));
    src.line("tsv[lid] = part;");
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    // The tree and the store after it stand a level out of their block.
    src.shifted(-1, |src| {
        tree(src, g, total);
        src.line("if (lid == 0u) {");
    });
    src.shifted(1, |src| {
        src.line(format_args!("totout[0] = {result};"));
        src.line(format_args!("tdone[{counter}u] = 0u;"));
    });
    src.line("}");
    src.close();
    src.close();
}

/// The tree over the group's `tsv`.
fn tree(src: &mut Src, g: u32, total: &JoinedReduction) {
    src.open(format_args!("for (uint st = {g}u / 2u; st > 0u; st >>= 1) {{"));
    src.line(format_args!(
        "if (lid < st) tsv[lid] = {};",
        combine(total.op, total.dtype, "tsv[lid]", "tsv[lid + st]")
    ));
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.close();
}
