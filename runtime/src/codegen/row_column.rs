//! A column reduction that computes a row reduction of the same rows inside
//! ([`RowPart`](crate::fuse::RowPart)): `g = (x * f((x * w).sum_axis(1))).sum_axis(0)`
//! reads `x` once. Three layouts, by the width of the rows:
//!
//! [`row_loop`](crate::codegen::row_column::row_loop) (rows shared by a row of work-items; GPUs): a work-group covers whole
//! rows (one tile: `per_row` work-items a row, `P` rows at a time). Per step of `4 P`
//! rows, every work-item:
//! 1. evaluates the row reduction's operand on its own elements of four rows and combines
//!    them into one value per row (`rs` in local memory);
//! 2. takes part in a tree over the `per_row` work-items of each row (barriers, so every
//!    work-item runs every step, also those past the rows); with a total over the rows
//!    ([`RowTotal`](crate::fuse::RowTotal)), the first work-item of each row then adds the
//!    row's value to it and computes the per-row values once, shared in local memory;
//! 3. reads its rows' results, writes them out (the first work-item of a row), and
//!    evaluates the column reduction's operand with them, accumulating as the plain loop
//!    does. The elements are loaded again here: they were read a moment before, so the
//!    second load hits the cache, not device memory.
//!
//! [`group_rows`](crate::codegen::row_column::group_rows) (rows of 128 to 1,024 vectors; GPUs): a whole work-group shares
//! each row, every work-item holding one or two vectors of it, four rows per step; values
//! that depend on the row only are computed once per row (`per_row_values`).
//!
//! [`rows_per_item`](crate::codegen::row_column::rows_per_item) (short rows; every device): one work-item reads whole rows, with no
//! barrier until the group combines its accumulators at the end.
//!
//! A total over the rows beside the row reduction ends each layout's kernel
//! ([`row_total_end`](crate::codegen::row_column::row_total_end)).

use std::fmt::Write;

use super::{
    combine, emit_values_upto, identity, reduce_indices, value_expr, vector_values_upto, vt, Helpers,
};
use crate::fuse::{KernelPlan, ReducePlan, RowPart, RowTotal, Value};
use crate::graph::ReduceOp;
use crate::layout::{ROWS_PER_STEP, VECTOR_WIDTH};

/// Elements of a row combined at once at the end of [`rows_per_item`].
const TREE_ELEMENTS: usize = 8;

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
    let operand = row_operand(plan, row);
    let d = plan.values[operand].1;
    let t = vt(d);
    let op = row.op;
    let ind = "                ";
    // This work-item's share of row `k`: its `column_width` elements, combined.
    let share = values_upto(plan, r, row.value, &[], ix, ind, helpers);
    let value = if r.column_width == VECTOR_WIDTH {
        combine_lanes(op, d, operand)
    } else {
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
    // A total over the rows, and with it the per-row values: computed once per row, by
    // the row's first work-item right after the tree, the values shared in local memory
    // (slot `u G + row`).
    let hoisted = row_loop_hoisted(plan, r, row);
    let per_row: Vec<usize> = hoisted
        .iter()
        .copied()
        .chain(plan.row_total.map(|t| t.value))
        .collect();
    let mut src = String::new();
    for &i in &hoisted {
        let _ = writeln!(
            src,
            "    __local {} hs{i}[{n} * {g}];",
            vt(plan.values[i].1),
            n = ROWS_PER_STEP
        );
    }
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
    if !per_row.is_empty() {
        src.push_str("        if (active && col == 0u) {\n");
        for u in 0..ROWS_PER_STEP {
            let _ = write!(
                src,
                "            {{\n            const {ix} k = kb + {u}u * P + row;\n            if (k < k1) {{\n{ind}const {rt} rowv = {res};\n",
                res = result(u),
            );
            src.push_str(&per_row_text(plan, r, row, &per_row, ix, ind, helpers));
            for &i in &hoisted {
                let _ = writeln!(src, "{ind}hs{i}[{u}u * G + row] = v{i};");
            }
            if let Some(total) = &plan.row_total {
                src.push_str(&total_step(total, ind));
            }
            src.push_str("            }\n            }\n");
        }
        src.push_str("        }\n");
    }
    // Nobody overwrites `rs` in the next step before every work-item has read it.
    src.push_str("        barrier(CLK_LOCAL_MEM_FENCE);\n");
    for u in 0..ROWS_PER_STEP {
        let _ = write!(
            src,
            "        {{\n            const {ix} k = kb + {u}u * P + row;\n            if (active && k < k1) {{\n                const {rt} rowv = {res};\n{given}                if (col == 0u) rowout[k] = rowv;\n{column_body}            }}\n        }}\n",
            res = result(u),
            given = hoisted
                .iter()
                .map(|&i| format!("{ind}const {} h{i} = hs{i}[{u}u * G + row];\n", vt(plan.values[i].1)))
                .collect::<String>(),
        );
    }
    src.push_str("    }\n");
    src
}

/// The body of a column reduction with a row reduction inside whose rows are short
/// ([`ReducePlan::row_vectors`] vectors): each work-item takes whole rows, every `G`-th
/// of its group's segment. Per row it evaluates the row reduction's operand on all the
/// row's vectors, combines them, evaluates the column operand with the result into one
/// accumulator per element of the row, and writes the row result out. No barrier until
/// the end, where the group's accumulators are combined in local memory (a tree over the
/// work-items, up to [`TREE_ELEMENTS`] elements of the row at a time) and written as
/// partials `[o * S + s]` (or the results, with one segment).
pub(super) fn rows_per_item(
    plan: &KernelPlan,
    r: &ReducePlan,
    row: &RowPart,
    ix: &str,
    helpers: &mut Helpers,
) -> String {
    let g = plan.group_size;
    let operand = row_operand(plan, row);
    let rd = plan.values[operand].1;
    let rt = vt(row.dtype);
    let d = r.in_dtype;
    let t = vt(d);
    let out = plan.outputs[0].0;
    let (vectors, w) = (r.row_vectors, r.column_width);
    let width = vectors * w;
    let ind = "            ";
    let vector = w == VECTOR_WIDTH;
    // The values of vector `v` of row `k` (all of them, or those of the row operand).
    let values = |v: usize, upto: usize, helpers: &mut Helpers| -> String {
        let mut text = format!("{ind}const {ix} o = {v}u * {w}u;\n");
        text.push_str(&values_upto(plan, r, upto, &[], ix, ind, helpers));
        text
    };
    let mut src = String::new();
    let _ = writeln!(src, "    __local {t} sv[{g} * {}];", width.min(TREE_ELEMENTS));
    let _ = writeln!(
        src,
        "    const {ix} G = {g}u, lid = get_local_id(0), s = get_group_id(0);\n    const {ix} chunk = (n_red + S - 1) / S;\n    const {ix} k0 = min(n_red, s * chunk), k1 = min(n_red, k0 + chunk);"
    );
    for e in 0..width {
        let _ = writeln!(src, "    {t} a{e} = {};", identity(r.op, d));
    }
    let _ = writeln!(src, "    for ({ix} k = k0 + lid; k < k1; k += G) {{");
    // The row result.
    let _ = writeln!(src, "        {rt} rowv;\n        {{");
    let _ = writeln!(src, "        {} rp = {};", vt(rd), identity(row.op, rd));
    for v in 0..vectors {
        let _ = write!(src, "        {{\n{}", values(v, row.value, helpers));
        let e = if vector {
            combine_lanes(row.op, rd, operand)
        } else {
            format!("v{operand}")
        };
        let _ = writeln!(src, "{ind}rp = {};\n        }}", combine(row.op, rd, "rp", &e));
    }
    let result = if row.op == ReduceOp::Mean {
        format!("({rt})(rp / ({})n_out)", vt(rd))
    } else {
        format!("({rt})rp")
    };
    let _ = writeln!(src, "        rowv = {result};\n        }}");
    if let Some(total) = &plan.row_total {
        src.push_str("        {\n");
        src.push_str(&per_row_text(plan, r, row, &[total.value], ix, ind, helpers));
        src.push_str(&total_step(total, ind));
        src.push_str("        }\n");
    }
    // The column operand with it, one accumulator per element of the row.
    for v in 0..vectors {
        let _ = write!(src, "        {{\n{}", values(v, plan.values.len(), helpers));
        for j in 0..w {
            let value = if vector {
                format!("v{out}_{j}")
            } else {
                format!("v{out}")
            };
            let a = format!("a{}", v * w + j);
            let _ = writeln!(src, "{ind}{a} = {};", combine(r.op, d, &a, &value));
        }
        src.push_str("        }\n");
    }
    // After the loads (a store to another buffer would make the compiler load them again).
    src.push_str("        rowout[k] = rowv;\n    }\n");
    // Combine the group's accumulators: a tree over the work-items, for up to
    // `TREE_ELEMENTS` elements of the row at a time (bounded local memory).
    for first in (0..width).step_by(TREE_ELEMENTS) {
        let part = (width - first).min(TREE_ELEMENTS);
        for e in 0..part {
            let _ = writeln!(src, "    sv[lid * {part}u + {e}u] = a{};", first + e);
        }
        src.push_str("    barrier(CLK_LOCAL_MEM_FENCE);\n");
        let _ = writeln!(
            src,
            "    for ({ix} st = G / 2u; st > 0u; st >>= 1) {{\n        if (lid < st) {{"
        );
        for e in 0..part {
            let (a, b) = (
                format!("sv[lid * {part}u + {e}u]"),
                format!("sv[(lid + st) * {part}u + {e}u]"),
            );
            let _ = writeln!(src, "            {a} = {};", combine(r.op, d, &a, &b));
        }
        src.push_str("        }\n        barrier(CLK_LOCAL_MEM_FENCE);\n    }\n");
        let _ = writeln!(
            src,
            "    if (lid < {part}u) {{\n        const {t} acc = sv[lid];\n        const {ix} e = {first}u + lid;"
        );
        if r.op == ReduceOp::Mean {
            let _ = writeln!(src, "        outv[e * S + s] = fin ? acc / ({t})n_red : acc;");
        } else {
            src.push_str("        outv[e * S + s] = acc;\n");
        }
        // The next chunk overwrites `sv` only after everyone has read this one.
        src.push_str("    }\n    barrier(CLK_LOCAL_MEM_FENCE);\n");
    }
    src.push_str("}\n");
    src
}

/// The body of a column reduction with a row reduction inside whose rows a whole
/// work-group shares ([`ReducePlan::group_rows`]): work-item `lid` holds vectors
/// `m G + lid` (`m < M`) of every row, with an accumulator per element. The group takes
/// its segment's rows [`ROWS_PER_STEP`] at a time: every work-item evaluates the row
/// reduction's operand on its elements of each row, the group combines the row values in
/// local memory (one tree for all of them; the work-items of its last level also compute
/// the row's `per_row_values` and share them), then every work-item evaluates the
/// column reduction's operand with each row's result, loading its elements again (they
/// were read a moment before: the cache, not device memory), and accumulates. Partials
/// `[o * S + s]` at the end (or the results, with one segment). Rows wider than a group
/// are fused this way; the tree's barriers make it a GPU layout.
pub(super) fn group_rows(
    plan: &KernelPlan,
    r: &ReducePlan,
    row: &RowPart,
    ix: &str,
    helpers: &mut Helpers,
) -> String {
    let g = plan.group_size;
    let operand = row_operand(plan, row);
    let rd = plan.values[operand].1;
    let (rdt, rt) = (vt(rd), vt(row.dtype));
    let d = r.in_dtype;
    let t = vt(d);
    let out = plan.outputs[0].0;
    let (per_item, w) = (r.group_rows, r.column_width);
    let steps = ROWS_PER_STEP;
    let vector = w == VECTOR_WIDTH;
    let ind = "                ";
    let hoisted = per_row_values(plan, r, row);
    // Per row, by the work-items of the tree's last level: the hoisted values and the
    // value of a reduction over the rows beside.
    let per_row: Vec<usize> = hoisted
        .iter()
        .copied()
        .chain(plan.row_total.map(|t| t.value))
        .collect();
    let result = |rp: &str| {
        if row.op == ReduceOp::Mean {
            format!("({rt})({rp} / ({rdt})n_out)")
        } else {
            format!("({rt}){rp}")
        }
    };
    // Vector `m` of this work-item in row `k` (its first output `o`), and the values of
    // the plan up to `upto` there; the body runs only inside the row.
    let at = |m: usize, upto: usize, body: &str, helpers: &mut Helpers| -> String {
        let mut text = format!(
            "            {{
            const {ix} o = ({m}u * G + lid) * {w}u;
            if (o < n_out) {{
"
        );
        text.push_str(&values_upto(plan, r, upto, &hoisted, ix, ind, helpers));
        text.push_str(body);
        text.push_str(
            "            }
            }
",
        );
        text
    };
    let mut src = String::new();
    let _ = writeln!(
        src,
        "    __local {rdt} rs[2u * {steps}u * {g}u];
    const {ix} G = {g}u, lid = get_local_id(0), s = get_group_id(0);
    const {ix} chunk = (n_red + S - 1) / S;
    const {ix} k0 = min(n_red, s * chunk), k1 = min(n_red, k0 + chunk);
    {ix} flip = 0u;"
    );
    for &i in &hoisted {
        let _ = writeln!(src, "    __local {} hs{i}[{steps}u];", vt(plan.values[i].1));
    }
    for m in 0..per_item {
        for j in 0..w {
            let _ = writeln!(src, "    {t} a{m}_{j} = {};", identity(r.op, d));
        }
    }
    // Every work-item runs every step (barriers): the bounds are the group's.
    let _ = writeln!(src, "    for ({ix} kb = k0; kb < k1; kb += {steps}u) {{");
    let _ = writeln!(
        src,
        "        __local {rdt}* part = rs + flip * ({steps}u * G);
        flip ^= 1u;"
    );
    let part_value = if vector {
        combine_lanes(row.op, rd, operand)
    } else {
        format!("v{operand}")
    };
    for u in 0..steps {
        let _ = writeln!(
            src,
            "        {{
            const {ix} k = kb + {u}u;
            {rdt} rp = {};
            if (k < k1) {{",
            identity(row.op, rd)
        );
        for m in 0..per_item {
            let body = format!(
                "{ind}rp = {};
",
                combine(row.op, rd, "rp", &part_value)
            );
            src.push_str(&at(m, row.value, &body, helpers));
        }
        let _ = writeln!(
            src,
            "            }}
            part[{u}u * G + lid] = rp;
        }}"
        );
    }
    // One tree for every row of the step. (`part` alternates between two halves of `rs`,
    // so the next step writes its values while slow work-items may still read these.)
    src.push_str(
        "        barrier(CLK_LOCAL_MEM_FENCE);
",
    );
    // With per-row values, the tree's last level goes to the work-items that compute them
    // (one per row), before the same barrier.
    let last = if per_row.is_empty() { 0 } else { 1 };
    let _ = writeln!(
        src,
        "        for ({ix} st = G / 2u; st > {last}u; st >>= 1) {{
            if (lid < st) {{"
    );
    for u in 0..steps {
        let (a, b) = (
            format!("part[{u}u * G + lid]"),
            format!("part[{u}u * G + lid + st]"),
        );
        let _ = writeln!(src, "                {a} = {};", combine(row.op, rd, &a, &b));
    }
    src.push_str(
        "            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
",
    );
    if !per_row.is_empty() {
        let pair = if g >= 2 {
            combine(row.op, rd, "rp", "part[u * G + 1u]")
        } else {
            "rp".to_string()
        };
        let _ = writeln!(
            src,
            "        for ({ix} u = lid; u < {steps}u; u += G) {{
            const {ix} k = kb + u;
            {rdt} rp = part[u * G];
            rp = {pair};
            part[u * G] = rp;
            if (k < k1) {{
            const {rt} rowv = {};",
            result("rp")
        );
        src.push_str(&per_row_text(plan, r, row, &per_row, ix, ind, helpers));
        for &i in &hoisted {
            let _ = writeln!(src, "{ind}hs{i}[u] = v{i};");
        }
        if let Some(total) = &plan.row_total {
            src.push_str(&total_step(total, ind));
        }
        src.push_str(
            "            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
",
        );
    }
    for u in 0..steps {
        let _ = writeln!(
            src,
            "        {{
            const {ix} k = kb + {u}u;
            if (k < k1) {{
            const {rt} rowv = {};",
            result(&format!("part[{u}u * G]"))
        );
        for &i in &hoisted {
            let _ = writeln!(
                src,
                "            const {} h{i} = hs{i}[{u}u];",
                vt(plan.values[i].1)
            );
        }
        for m in 0..per_item {
            let mut body = String::new();
            for j in 0..w {
                let value = if vector {
                    format!("v{out}_{j}")
                } else {
                    format!("v{out}")
                };
                let a = format!("a{m}_{j}");
                let _ = writeln!(body, "{ind}{a} = {};", combine(r.op, d, &a, &value));
            }
            src.push_str(&at(m, plan.values.len(), &body, helpers));
        }
        // After the loads (a store to another buffer would make the compiler load them again).
        let _ = writeln!(
            src,
            "            if (lid == 0u) rowout[k] = rowv;
            }}
        }}"
        );
    }
    src.push_str(
        "    }
",
    );
    for m in 0..per_item {
        let _ = writeln!(
            src,
            "    {{
        const {ix} o = ({m}u * G + lid) * {w}u;
        if (o < n_out) {{"
        );
        for j in 0..w {
            let a = format!("a{m}_{j}");
            if r.op == ReduceOp::Mean {
                let _ = writeln!(
                    src,
                    "            outv[(o + {j}u) * S + s] = fin ? {a} / ({t})n_red : {a};"
                );
            } else {
                let _ = writeln!(src, "            outv[(o + {j}u) * S + s] = {a};");
            }
        }
        src.push_str(
            "        }
    }
",
        );
    }
    src.push_str(
        "}
",
    );
    src
}

/// The values of the plan before index `upto` at output `o` of row `k` (variables in
/// scope): per lane (`v{i}_{lane}`, one vector load per input) in the vector layout, else
/// single (`v{i}`).
fn values_upto(
    plan: &KernelPlan,
    r: &ReducePlan,
    upto: usize,
    given: &[usize],
    ix: &str,
    ind: &str,
    helpers: &mut Helpers,
) -> String {
    if r.column_width == VECTOR_WIDTH {
        vector_values_upto(plan, upto, given, r, ix, ind, true, helpers)
    } else {
        let mut text = reduce_indices(plan, r, ix, ind);
        emit_values_upto(plan, upto, given, "fidx", helpers, &mut text, ind);
        text
    }
}

/// The values of the column operand that depend on the row's result and on nothing that
/// varies along the row (the residual `sigmoid(z) - y` of a gradient, say), where
/// something varying along the row reads them (or the operand is one): [`group_rows`]
/// computes these once per row, not in every work-item of the group.
fn per_row_values(plan: &KernelPlan, r: &ReducePlan, row: &RowPart) -> Vec<usize> {
    let kept = ((1u32 << plan.dims.len()) - 1) & !r.red_mask;
    let n = plan.values.len();
    // (varies with the row at most, depends on the row's result)
    let mut kind = vec![(false, false); n];
    for (i, (v, _)) in plan.values.iter().enumerate() {
        kind[i] = match v {
            _ if i == row.value => (true, true),
            Value::Load { slot } => (plan.inputs[*slot].1 & kept == kept, false),
            Value::Scalar { .. } => (true, false),
            Value::Op { args, .. } => (args.iter().all(|&a| kind[a].0), args.iter().any(|&a| kind[a].1)),
        };
    }
    let read_along_row = |i: usize| {
        i == plan.outputs[0].0
            || plan
                .values
                .iter()
                .enumerate()
                .any(|(j, (v, _))| !kind[j].0 && matches!(v, Value::Op { args, .. } if args.contains(&i)))
    };
    (0..n)
        .filter(|&i| i != row.value && kind[i] == (true, true) && read_along_row(i))
        .collect()
}

/// The per-row values [`row_loop`] computes once per row: with a total over the rows
/// only (that kernel then has a per-row step after the tree anyway; alone, the values
/// shared in local memory made the H200 step no faster).
pub(super) fn row_loop_hoisted(plan: &KernelPlan, r: &ReducePlan, row: &RowPart) -> Vec<usize> {
    if plan.row_total.is_some() {
        per_row_values(plan, r, row)
    } else {
        Vec::new()
    }
}

/// The per-row `values` of row `k` (`rowv` in scope) as `v{i}`: those values and what
/// they read, short of the row's result.
fn per_row_text(
    plan: &KernelPlan,
    r: &ReducePlan,
    row: &RowPart,
    values: &[usize],
    ix: &str,
    ind: &str,
    helpers: &mut Helpers,
) -> String {
    let mut needed = vec![false; plan.values.len()];
    let mut stack = values.to_vec();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut needed[i], true) || i == row.value {
            continue;
        }
        if let Value::Op { args, .. } = &plan.values[i].0 {
            stack.extend(args.iter().copied());
        }
    }
    let mut text = format!("{ind}const {ix} o = 0u;\n");
    text.push_str(&reduce_indices(plan, r, ix, ind));
    for i in (0..plan.values.len()).filter(|&i| needed[i]) {
        let e = value_expr(plan, i, "fidx", None, helpers);
        let _ = writeln!(text, "{ind}const {} v{i} = {e};", vt(plan.values[i].1));
    }
    text
}

/// The end of a kernel with a reduction over the rows beside its row reduction
/// ([`RowTotal`]), after every work-item has added its rows' values into `tacc`: a tree
/// over the group; with one segment the first work-item writes the result, else each
/// group writes its part `totv[s]` and counts itself, and the last group to finish
/// combines the parts (as a reduction finished in its kernel does: plain loads see them,
/// written before the fence and the count) and sets the counter back to zero. Barriers
/// are reached by every work-item (`S` and `tlast` are the same for the whole group).
pub(super) fn row_total_end(plan: &KernelPlan, total: &RowTotal, ix: &str) -> String {
    let g = plan.group_size;
    let t = vt(total.dtype);
    let (op, d) = (total.op, total.dtype);
    let tree = format!(
        "    for (uint st = {g}u / 2u; st > 0u; st >>= 1) {{
        if (lid < st) tsv[lid] = {};
        barrier(CLK_LOCAL_MEM_FENCE);
    }}
",
        combine(op, d, "tsv[lid]", "tsv[lid + st]")
    );
    let result = if op == ReduceOp::Mean {
        format!("tsv[0] / ({t})n_red")
    } else {
        "tsv[0]".to_string()
    };
    let counter = crate::queue::ROW_TOTAL_COUNTER;
    format!(
        "    __local {t} tsv[{g}];
    __local uint tlast;
    tsv[lid] = tacc;
    barrier(CLK_LOCAL_MEM_FENCE);
{tree}    if (S == 1u) {{
        if (lid == 0u) totout[0] = {result};
    }} else {{
        if (lid == 0u) totv[s] = tsv[0];
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (lid == 0u) tlast = (atomic_inc(&tdone[{counter}u]) == (uint)(S - 1u));
        barrier(CLK_LOCAL_MEM_FENCE);
        if (tlast) {{
            {t} part = {id};
            for ({ix} k = lid; k < S; k += {g}u) part = {step};
            tsv[lid] = part;
            barrier(CLK_LOCAL_MEM_FENCE);
    {tree_in}        if (lid == 0u) {{
                totout[0] = {result};
                tdone[{counter}u] = 0u;
            }}
        }}
    }}
",
        id = identity(op, d),
        step = combine(op, d, "part", "totv[k]"),
        tree_in = tree.replace("\n    ", "\n        "),
    )
}

/// Adds this row's value of the reduction over the rows beside (`v{value}` in scope).
fn total_step(total: &RowTotal, ind: &str) -> String {
    format!(
        "{ind}tacc = {};\n",
        combine(total.op, total.dtype, "tacc", &format!("v{}", total.value))
    )
}

/// The value the row reduction reduces (its operand in the plan).
fn row_operand(plan: &KernelPlan, row: &RowPart) -> usize {
    match &plan.values[row.value].0 {
        Value::Op { args, .. } => args[0],
        _ => row.value,
    }
}

/// The four lanes `v{value}_0..3` of a vector step combined pairwise.
fn combine_lanes(op: ReduceOp, d: crate::dtype::DType, value: usize) -> String {
    let lane = |l: usize| format!("v{value}_{l}");
    combine(
        op,
        d,
        &combine(op, d, &lane(0), &lane(1)),
        &combine(op, d, &lane(2), &lane(3)),
    )
}
