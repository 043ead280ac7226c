//! An elementwise kernel that finishes the split reduction it reads
//! ([`FinishIn`](crate::fuse::FinishIn)): the combine pass and the consumer in one launch.

use std::fmt::Write;

use super::{
    combine, element_indices, emit_values, identity, input_params, narrow_dims, prelude, vt, Helpers,
    FUSED_KERNEL_NAME,
};
use crate::fuse::{FinishIn, KernelPlan};
use crate::graph::ReduceOp;

/// The program: a work-group takes `group / lanes` outputs; each output's lanes combine
/// its partials `pv[o * S + s]` and a tree in local memory combines the lanes (as the
/// combine pass does); the first lane writes the result to the reduction's array (input
/// `slot`, written here, so not `const`), then evaluates the consumer at `o`, reading the
/// result back like any input (a work-item sees its own writes).
pub(super) fn finish_in_source(plan: &KernelPlan, f: &FinishIn) -> String {
    let mut helpers = Helpers::default();
    let ix = if plan.narrow_index { "uint" } else { "ulong" };
    let t = vt(f.dtype);
    let (g, lanes) = (f.group, f.lanes);
    let mut body = String::new();
    let _ = writeln!(body, "        const {ix} gid = ({ix})o;");
    body.push_str(&element_indices(plan, ix));
    emit_values(plan, "gid", &mut helpers, &mut body, "        ");
    for (k, (v, _, _)) in plan.outputs.iter().enumerate() {
        let _ = writeln!(body, "        out{k}[gid] = v{v};");
    }
    let mut params = input_params(plan);
    params[f.slot] = format!("__global {t}* in{}", f.slot);
    for (k, (_, d, _)) in plan.outputs.iter().enumerate() {
        params.push(format!("__global {}* out{k}", vt(*d)));
    }
    params.push("const ulong n".into());
    for k in 0..plan.dims.len() {
        params.push(format!("const ulong d{k}_"));
    }
    params.extend([
        format!("__global const {t}* pv"),
        "const ulong S".into(),
        "const ulong n_total".into(),
    ]);
    let result = if f.op == ReduceOp::Mean {
        format!("acc / ({t})n_total")
    } else {
        "acc".to_string()
    };
    // (The result is one of the plan's values: an `f64` one enables the extension.)
    let mut src = prelude(plan, &helpers);
    let _ = write!(
        src,
        "__kernel void {FUSED_KERNEL_NAME}({params}) {{\n{dims}    __local {t} sv[{g}];\n    const uint lid = get_local_id(0), lane = lid % {lanes}u, row = lid / {lanes}u;\n    const ulong o = get_group_id(0) * ({g}u / {lanes}u) + row;\n    {t} acc = {id};\n    if (o < n) {{\n        for (ulong s = lane; s < S; s += {lanes}u) acc = {step};\n    }}\n    sv[lid] = acc;\n    barrier(CLK_LOCAL_MEM_FENCE);\n    for (uint st = {lanes}u / 2u; st > 0u; st >>= 1) {{\n        if (lane < st) sv[lid] = {tree};\n        barrier(CLK_LOCAL_MEM_FENCE);\n    }}\n    if (lane == 0u && o < n) {{\n        acc = sv[lid];\n        in{slot}[o] = {result};\n{body}    }}\n}}\n",
        params = params.join(", "),
        dims = narrow_dims(plan.dims.len(), ix),
        id = identity(f.op, f.dtype),
        step = combine(f.op, f.dtype, "acc", "pv[o * S + s]"),
        tree = combine(f.op, f.dtype, "sv[lid]", "sv[lid + st]"),
        slot = f.slot,
    );
    src
}
