//! The main loop of a column reduction that computes a row reduction of the same rows
//! inside ([`RowPart`]): `g = (x * f((x * w).sum_axis(1))).sum_axis(0)` reads `x` once.
//!
//! A work-group covers whole rows (one tile: `per_row` work-items a row, `P` rows at a
//! time). Per step of `4 P` rows, every work-item:
//! 1. evaluates the row reduction's operand on its own elements of four rows and combines
//!    them into one value per row (`rs` in local memory);
//! 2. takes part in a tree over the `per_row` work-items of each row (barriers, so every
//!    work-item runs every step, also those past the rows);
//! 3. reads its rows' results, writes them out (the first work-item of a row), and
//!    evaluates the column reduction's operand with them, accumulating as the plain loop
//!    does. The elements are loaded again here: they were read a moment before, so the
//!    second load hits the cache, not device memory.

use std::fmt::Write;

use super::{
    combine, emit_values_upto, identity, reduce_indices, vector_values_upto, vt, Helpers, VECTOR_WIDTH,
};
use crate::fuse::{KernelPlan, ReducePlan, RowPart, Value};
use crate::graph::ReduceOp;

/// Rows each work-item takes per step (their loads are in flight together).
const ROWS_PER_STEP: usize = 4;

/// The loop text, at kernel scope (it declares the local buffer of row results), in the
/// variables of [`super::column_layout`]; `column_body` accumulates row `k` with `rowv`
/// in scope.
pub(super) fn row_loop(
    plan: &KernelPlan,
    r: &ReducePlan,
    row: &RowPart,
    ix: &str,
    column_body: &str,
    helpers: &mut Helpers,
) -> String {
    let g = plan.group_size;
    let operand = match &plan.values[row.value].0 {
        Value::Op { args, .. } => args[0],
        _ => row.value,
    };
    let d = plan.values[operand].1;
    let t = vt(d);
    let op = row.op;
    let ind = "                ";
    // This work-item's share of row `k`: its `column_width` elements, combined.
    let mut share = String::new();
    let value = if r.column_width == VECTOR_WIDTH {
        share.push_str(&vector_values_upto(plan, row.value, r, ix, ind, true, helpers));
        let lane = |l: usize| format!("v{operand}_{l}");
        combine(
            op,
            d,
            &combine(op, d, &lane(0), &lane(1)),
            &combine(op, d, &lane(2), &lane(3)),
        )
    } else {
        share.push_str(&reduce_indices(plan, r, ix, ind));
        emit_values_upto(plan, row.value, "fidx", helpers, &mut share, ind);
        format!("v{operand}")
    };
    let rt = vt(row.dtype);
    let result = |u: usize| {
        if op == ReduceOp::Mean {
            format!("({rt})(rv{u} / ({t})n_out)")
        } else {
            format!("({rt})rv{u}")
        }
    };
    let mut src = String::new();
    let _ = write!(
        src,
        "    __local {t} rs[{n} * {g}];\n    const {ix} chunk = (n_red + S - 1) / S;\n    const {ix} k0 = min(n_red, s * chunk), k1 = min(n_red, k0 + chunk);\n    const {ix} col = lid % per_row;\n    {ix} p2 = 1u;\n    while (p2 < per_row) p2 <<= 1;\n    for ({ix} kb = k0; kb < k1; kb += {n}u * P) {{\n",
        n = ROWS_PER_STEP
    );
    for u in 0..ROWS_PER_STEP {
        let _ = write!(
            src,
            "        {{\n            const {ix} k = kb + {u}u * P + row;\n            {t} part = {id};\n            if (active && k < k1) {{\n{share}{ind}part = {value};\n            }}\n            rs[{u}u * G + lid] = part;\n        }}\n",
            id = identity(op, d),
        );
    }
    src.push_str("        barrier(CLK_LOCAL_MEM_FENCE);\n        for (");
    let _ = write!(
        src,
        "{ix} st = p2 / 2u; st > 0u; st >>= 1) {{\n            if (row < P && col < st && col + st < per_row) {{\n"
    );
    for u in 0..ROWS_PER_STEP {
        let (a, b) = (format!("rs[{u}u * G + lid]"), format!("rs[{u}u * G + lid + st]"));
        let _ = writeln!(src, "                {a} = {};", combine(op, d, &a, &b));
    }
    src.push_str("            }\n            barrier(CLK_LOCAL_MEM_FENCE);\n        }\n");
    for u in 0..ROWS_PER_STEP {
        let _ = writeln!(src, "        const {t} rv{u} = rs[{u}u * G + row * per_row];");
    }
    // Nobody overwrites `rs` in the next step before every work-item has read it.
    src.push_str("        barrier(CLK_LOCAL_MEM_FENCE);\n");
    for u in 0..ROWS_PER_STEP {
        let _ = write!(
            src,
            "        {{\n            const {ix} k = kb + {u}u * P + row;\n            if (active && k < k1) {{\n                const {rt} rowv = {res};\n                if (col == 0u) rowout[k] = rowv;\n{column_body}            }}\n        }}\n",
            res = result(u),
        );
    }
    src.push_str("    }\n");
    src
}
