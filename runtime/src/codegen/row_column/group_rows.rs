//! The group-rows layout: a whole work-group shares each row (see the [module
//! doc](super)).

use super::RowColumn;
use crate::codegen::accumulators::store_partial;
use crate::codegen::ops::{combine, identity, vt};
use crate::codegen::values::Values;
use crate::codegen::writer::Src;
use crate::layout::ROWS_PER_STEP;

/// The body of a column reduction with a row reduction inside whose rows a whole
/// work-group shares ([`ColumnRows::GroupRows`](crate::plan::ColumnRows::GroupRows)):
/// work-item `lid` holds vectors `m G + lid` (`m < M`) of every row, with an accumulator
/// per element. The group takes its segment's rows [`ROWS_PER_STEP`] at a time: every
/// work-item evaluates the row reduction's operand on its elements of each row, the group
/// combines the row values in local memory (one tree for all of them; the work-items of
/// its last level also compute the row's per-row values and share them), then every
/// work-item evaluates the column reduction's operand with each row's result, loading its
/// elements again (they were read a moment before: the cache, not device memory), and
/// accumulates. Partials `[o * S + s]` at the end (or the results, with one segment).
/// Rows wider than a group are fused this way; the tree's barriers make it a GPU layout.
pub(in crate::codegen) fn group_rows(rc: &RowColumn, v: &mut Values, src: &mut Src) {
    let (ix, g, steps) = (v.ix, rc.plan.group_size, ROWS_PER_STEP);
    let (rdt, t) = (vt(rc.rd), vt(rc.d));
    src.line(format_args!("__local {rdt} rs[2u * {steps}u * {g}u];"));
    src.line(format_args!(
        "const {ix} G = {g}u, lid = get_local_id(0), s = get_group_id(0);"
    ));
    src.line(format_args!("const {ix} chunk = (n_red + S - 1) / S;"));
    src.line(format_args!(
        "const {ix} k0 = min(n_red, s * chunk), k1 = min(n_red, k0 + chunk);"
    ));
    src.line(format_args!("{ix} flip = 0u;"));
    rc.declare_shared(&format!("{steps}u"), src);
    for m in 0..rc.vectors {
        for j in 0..rc.w {
            src.line(format_args!("{t} a{m}_{j} = {};", identity(rc.r.op, rc.d)));
        }
    }
    // Every work-item runs every step (barriers): the bounds are the group's.
    src.open(format_args!("for ({ix} kb = k0; kb < k1; kb += {steps}u) {{"));
    src.line(format_args!("__local {rdt}* part = rs + flip * ({steps}u * G);"));
    src.line("flip ^= 1u;");
    for u in 0..steps {
        share_row(rc, v, u, src);
    }
    // One tree for every row of the step. (`part` alternates between two halves of `rs`,
    // so the next step writes its values while slow work-items may still read these.)
    tree(rc, ix, src);
    if !rc.per_row.is_empty() {
        per_row_step(rc, v, src);
    }
    for u in 0..steps {
        accumulate_row(rc, v, u, src);
    }
    src.close();
    for m in 0..rc.vectors {
        src.open("{");
        src.line(format_args!("const {ix} o = ({m}u * G + lid) * {}u;", rc.w));
        src.open("if (o < n_out) {");
        for j in 0..rc.w {
            src.line(store_partial(
                rc.r.op,
                t,
                &format!("a{m}_{j}"),
                &format!("(o + {j}u) * S + s"),
            ));
        }
        src.close();
        src.close();
    }
}

/// This work-item's vector `m` of row `k` (its first output `o`), the values of the plan
/// before `upto` there, then `body`; all inside the row only. The blocks stand at the
/// depth of the `if` around them.
fn at_vector(rc: &RowColumn, v: &mut Values, m: usize, upto: usize, body: &[String], src: &mut Src) {
    src.line("{");
    src.line(format_args!("const {} o = ({m}u * G + lid) * {}u;", v.ix, rc.w));
    src.line("if (o < n_out) {");
    src.shifted(1, |src| {
        rc.values(v, upto, &rc.hoisted, src);
        for line in body {
            src.line(line);
        }
    });
    src.line("}");
    src.line("}");
}

/// The row reduction's value of this work-item's vectors of row `u` of the step, into
/// `part`.
fn share_row(rc: &RowColumn, v: &mut Values, u: usize, src: &mut Src) {
    let rdt = vt(rc.rd);
    src.open("{");
    src.line(format_args!("const {} k = kb + {u}u;", v.ix));
    src.line(format_args!("{rdt} rp = {};", identity(rc.row.op, rc.rd)));
    src.line("if (k < k1) {");
    let step = [format!(
        "rp = {};",
        combine(rc.row.op, rc.rd, "rp", &rc.row_share())
    )];
    for m in 0..rc.vectors {
        at_vector(rc, v, m, rc.row.value, &step, src);
    }
    src.line("}");
    src.line(format_args!("part[{u}u * G + lid] = rp;"));
    src.close();
}

/// The tree over the group for the step's rows at once. With per-row values, its last
/// level goes to the work-items that compute them (one per row), before the same barrier.
fn tree(rc: &RowColumn, ix: &str, src: &mut Src) {
    let last = if rc.per_row.is_empty() { 0 } else { 1 };
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.open(format_args!("for ({ix} st = G / 2u; st > {last}u; st >>= 1) {{"));
    src.open("if (lid < st) {");
    for u in 0..ROWS_PER_STEP {
        let (a, b) = (
            format!("part[{u}u * G + lid]"),
            format!("part[{u}u * G + lid + st]"),
        );
        src.line(format_args!("{a} = {};", combine(rc.row.op, rc.rd, &a, &b)));
    }
    src.close();
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.close();
}

/// The tree's last level, the per-row values and the total's step, by one work-item per
/// row: the values shared in local memory (`hs{i}[u]`).
fn per_row_step(rc: &RowColumn, v: &mut Values, src: &mut Src) {
    let (ix, rdt) = (v.ix, vt(rc.rd));
    let pair = if rc.plan.group_size >= 2 {
        combine(rc.row.op, rc.rd, "rp", "part[u * G + 1u]")
    } else {
        "rp".to_string()
    };
    src.open(format_args!(
        "for ({ix} u = lid; u < {ROWS_PER_STEP}u; u += G) {{"
    ));
    src.line(format_args!("const {ix} k = kb + u;"));
    src.line(format_args!("{rdt} rp = part[u * G];"));
    src.line(format_args!("rp = {pair};"));
    src.line("part[u * G] = rp;");
    src.line("if (k < k1) {");
    rc.declare_row_result("rp", src);
    src.shifted(1, |src| {
        rc.per_row_text(v, &rc.per_row, src);
        rc.share("u", src);
        rc.total_step(src);
    });
    src.line("}");
    src.close();
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
}

/// Row `u` of the step into this work-item's accumulators, with the row's result (and
/// the shared per-row values) in scope; then the row's result stored (after the loads: a
/// store to another buffer would make the compiler load them again).
fn accumulate_row(rc: &RowColumn, v: &mut Values, u: usize, src: &mut Src) {
    src.open("{");
    src.line(format_args!("const {} k = kb + {u}u;", v.ix));
    src.line("if (k < k1) {");
    rc.declare_row_result(&format!("part[{u}u * G]"), src);
    rc.read_shared(&format!("{u}u"), src);
    for m in 0..rc.vectors {
        let body: Vec<String> = (0..rc.w)
            .map(|j| rc.accumulate(&format!("a{m}_{j}"), j))
            .collect();
        at_vector(rc, v, m, rc.plan.values.len(), &body, src);
    }
    src.line("if (lid == 0u) rowout[k] = rowv;");
    src.line("}");
    src.close();
}
