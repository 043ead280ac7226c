//! The row loop: rows shared by a row of work-items inside the column layout, a tree
//! over each row's work-items per step (see the [module doc](super)).

use super::RowColumn;
use crate::codegen::ops::{combine, identity, vt};
use crate::codegen::values::Values;
use crate::codegen::writer::Src;
use crate::layout::ROWS_PER_STEP;

/// The loop, at kernel scope (it declares the local buffers of row results and shared
/// per-row values), in the variables of the column layout; `column_body` accumulates
/// row `k` with `rowv` in scope, at the depth of the `if` around it.
pub(in crate::codegen) fn row_loop(rc: &RowColumn, v: &mut Values, column_body: &str, src: &mut Src) {
    let (ix, g, n) = (v.ix, rc.plan.group_size, ROWS_PER_STEP);
    let t = vt(rc.rd);
    rc.declare_shared(&format!("{n} * {g}"), src);
    src.line(format_args!("__local {t} rs[{n} * {g}];"));
    src.line(format_args!("const {ix} chunk = (n_red + S - 1) / S;"));
    src.line(format_args!(
        "const {ix} k0 = min(n_red, s * chunk), k1 = min(n_red, k0 + chunk);"
    ));
    src.line(format_args!("const {ix} col = lid % per_row;"));
    src.line(format_args!("{ix} p2 = 1u;"));
    src.line("while (p2 < per_row) p2 <<= 1;");
    src.open(format_args!("for ({ix} kb = k0; kb < k1; kb += {n}u * P) {{"));
    for u in 0..n {
        share_row(rc, v, u, src);
    }
    tree(rc, ix, src);
    for u in 0..n {
        src.line(format_args!("const {t} rv{u} = rs[{u}u * G + row * per_row];"));
    }
    if !rc.per_row.is_empty() {
        per_row_step(rc, v, src);
    }
    // Nobody overwrites `rs` in the next step before every work-item has read it.
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    for u in 0..n {
        src.open("{");
        src.line(format_args!("const {ix} k = kb + {u}u * P + row;"));
        src.open("if (active && k < k1) {");
        rc.declare_row_result(&format!("rv{u}"), src);
        rc.read_shared(&format!("{u}u * G + row"), src);
        src.line("if (col == 0u) rowout[k] = rowv;");
        src.text(column_body);
        src.close();
        src.close();
    }
    src.close();
}

/// This work-item's share of row `u` of the step, into `rs`.
fn share_row(rc: &RowColumn, v: &mut Values, u: usize, src: &mut Src) {
    let ix = v.ix;
    src.open("{");
    src.line(format_args!("const {ix} k = kb + {u}u * P + row;"));
    src.line(format_args!(
        "{} part = {};",
        vt(rc.rd),
        identity(rc.row.op, rc.rd)
    ));
    src.open("if (active && k < k1) {");
    rc.values(v, rc.row.value, &[], src);
    src.line(format_args!("part = {};", rc.row_share()));
    src.close();
    src.line(format_args!("rs[{u}u * G + lid] = part;"));
    src.close();
}

/// The tree over the `per_row` work-items of each row, for the step's rows at once.
fn tree(rc: &RowColumn, ix: &str, src: &mut Src) {
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.open(format_args!("for ({ix} st = p2 / 2u; st > 0u; st >>= 1) {{"));
    src.open("if (row < P && col < st && col + st < per_row) {");
    for u in 0..ROWS_PER_STEP {
        let (a, b) = (format!("rs[{u}u * G + lid]"), format!("rs[{u}u * G + lid + st]"));
        src.line(format_args!("{a} = {};", combine(rc.row.op, rc.rd, &a, &b)));
    }
    src.close();
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.close();
}

/// The per-row values and the total's step, by the first work-item of each row: the
/// values shared in local memory (slot `u G + row`). The rows' blocks stand at the depth
/// of the `if` around them.
fn per_row_step(rc: &RowColumn, v: &mut Values, src: &mut Src) {
    let ix = v.ix;
    src.open("if (active && col == 0u) {");
    for u in 0..ROWS_PER_STEP {
        src.line("{");
        src.line(format_args!("const {ix} k = kb + {u}u * P + row;"));
        src.open("if (k < k1) {");
        rc.declare_row_result(&format!("rv{u}"), src);
        rc.per_row_text(v, &rc.per_row, src);
        rc.share(&format!("{u}u * G + row"), src);
        rc.total_step(src);
        src.close();
        src.line("}");
    }
    src.close();
}
