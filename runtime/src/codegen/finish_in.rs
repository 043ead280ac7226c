//! An elementwise kernel that finishes the split reduction it reads
//! ([`FinishIn`](crate::plan::FinishIn)): the combine pass and the consumer in one launch.

use super::abi::{fused_signature, narrow_dims};
use super::accumulators::lanes_of_outputs;
use super::elementwise::element_step;
use super::ops::{combine, identity, vt};
use super::values::Values;
use super::writer::Src;
use crate::graph::ReduceOp;
use crate::plan::{FinishIn, KernelPlan};

/// The program: a work-group takes `group / lanes` outputs; each output's lanes combine
/// its partials `pv[o * S + s]` and a tree in local memory combines the lanes (as the
/// combine pass does); the first lane writes the result to the reduction's array (input
/// `slot`, written here, so not `const`), then evaluates the consumer at `o`, reading the
/// result back like any input (a work-item sees its own writes).
pub(super) fn finish_in_source(plan: &KernelPlan, f: &FinishIn) -> String {
    let mut v = Values::new(plan);
    let ix = v.ix;
    let t = vt(f.dtype);
    let (g, lanes, op, d) = (f.group, f.lanes, f.op, f.dtype);
    let result = if op == ReduceOp::Mean {
        format!("acc / ({t})n_total")
    } else {
        "acc".to_string()
    };
    // (The result is one of the plan's values: an `f64` one enables the extension.)
    let mut src = Src::at(0);
    src.text(&v.prelude());
    src.open(fused_signature(plan, ""));
    narrow_dims(plan.dims.len(), ix, &mut src);
    src.line(format_args!("__local {t} sv[{g}];"));
    lanes_of_outputs(&mut src, g, lanes);
    src.line(format_args!("{t} acc = {};", identity(op, d)));
    src.open("if (o < n) {");
    src.line(format_args!(
        "for (ulong s = lane; s < S; s += {lanes}u) acc = {};",
        combine(op, d, "acc", "pv[o * S + s]")
    ));
    src.close();
    src.line("sv[lid] = acc;");
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.open(format_args!(
        "for (uint st = {lanes}u / 2u; st > 0u; st >>= 1) {{"
    ));
    src.line(format_args!(
        "if (lane < st) sv[lid] = {};",
        combine(op, d, "sv[lid]", "sv[lid + st]")
    ));
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.close();
    src.open("if (lane == 0u && o < n) {");
    src.line("acc = sv[lid];");
    src.line(format_args!("in{}[o] = {result};", f.slot));
    src.line(format_args!("const {ix} gid = ({ix})o;"));
    element_step(&mut v, &mut src);
    src.close();
    src.close();
    src.into_string()
}
