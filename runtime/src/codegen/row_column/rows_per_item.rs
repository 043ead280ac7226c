//! The rows-per-item layout: one work-item reads whole short rows (see the [module
//! doc](super)).

use super::RowColumn;
use crate::codegen::accumulators::store_partial;
use crate::codegen::ops::{combine, identity, vt};
use crate::codegen::values::Values;
use crate::codegen::writer::Src;

/// Elements of a row combined at once at the end of [`rows_per_item`].
const TREE_ELEMENTS: usize = 8;

/// The body of a column reduction with a row reduction inside whose rows are short
/// ([`ColumnRows::RowsPerItem`](crate::plan::ColumnRows::RowsPerItem)): each
/// work-item takes whole rows, every `G`-th of its group's segment. Per row it evaluates
/// the row reduction's operand on all the row's vectors, combines them, evaluates the
/// column operand with the result into one accumulator per element of the row, and
/// writes the row result out. No barrier until the end, where the group's accumulators
/// are combined in local memory ([`combine_group`]).
pub(in crate::codegen) fn rows_per_item(rc: &RowColumn, v: &mut Values, src: &mut Src) {
    let (ix, g, t) = (v.ix, rc.plan.group_size, vt(rc.d));
    let width = rc.vectors * rc.w;
    src.line(format_args!(
        "__local {t} sv[{g} * {}];",
        width.min(TREE_ELEMENTS)
    ));
    src.line(format_args!(
        "const {ix} G = {g}u, lid = get_local_id(0), s = get_group_id(0);"
    ));
    src.line(format_args!("const {ix} chunk = (n_red + S - 1) / S;"));
    src.line(format_args!(
        "const {ix} k0 = min(n_red, s * chunk), k1 = min(n_red, k0 + chunk);"
    ));
    for e in 0..width {
        src.line(format_args!("{t} a{e} = {};", identity(rc.r.op, rc.d)));
    }
    src.open(format_args!("for ({ix} k = k0 + lid; k < k1; k += G) {{"));
    row_result(rc, v, src);
    if rc.r.row_total.is_some() {
        src.open("{");
        rc.per_row_text(v, &rc.per_row, src);
        rc.total_step(src);
        src.close();
    }
    // The column operand with it, one accumulator per element of the row.
    for vector in 0..rc.vectors {
        src.open("{");
        at_vector(rc, v, vector, rc.plan.values.len(), src);
        for j in 0..rc.w {
            src.line(rc.accumulate(&format!("a{}", vector * rc.w + j), j));
        }
        src.close();
    }
    // After the loads (a store to another buffer would make the compiler load them again).
    src.line("rowout[k] = rowv;");
    src.close();
    combine_group(rc, ix, width, src);
}

/// The values of vector `vector` of row `k` before `upto`.
fn at_vector(rc: &RowColumn, v: &mut Values, vector: usize, upto: usize, src: &mut Src) {
    src.line(format_args!("const {} o = {vector}u * {}u;", v.ix, rc.w));
    rc.values(v, upto, &[], src);
}

/// Row `k`'s result `rowv`: the row reduction's operand on each of the row's vectors,
/// combined. Its block's lines stand at the depth of its braces.
fn row_result(rc: &RowColumn, v: &mut Values, src: &mut Src) {
    let (op, rd) = (rc.row.op, rc.rd);
    src.line(format_args!("{} rowv;", rc.rt));
    src.line("{");
    src.line(format_args!("{} rp = {};", vt(rd), identity(op, rd)));
    for vector in 0..rc.vectors {
        src.open("{");
        at_vector(rc, v, vector, rc.row.value, src);
        src.line(format_args!("rp = {};", combine(op, rd, "rp", &rc.row_share())));
        src.close();
    }
    src.line(format_args!("rowv = {};", rc.row_result("rp")));
    src.line("}");
}

/// The group's accumulators combined: a tree over the work-items, for up to
/// [`TREE_ELEMENTS`] elements of the row at a time (bounded local memory), each element
/// written as partials `[o * S + s]` (or the results, with one segment).
fn combine_group(rc: &RowColumn, ix: &str, width: usize, src: &mut Src) {
    let t = vt(rc.d);
    for first in (0..width).step_by(TREE_ELEMENTS) {
        let part = (width - first).min(TREE_ELEMENTS);
        for e in 0..part {
            src.line(format_args!("sv[lid * {part}u + {e}u] = a{};", first + e));
        }
        src.line("barrier(CLK_LOCAL_MEM_FENCE);");
        src.open(format_args!("for ({ix} st = G / 2u; st > 0u; st >>= 1) {{"));
        src.open("if (lid < st) {");
        for e in 0..part {
            let (a, b) = (
                format!("sv[lid * {part}u + {e}u]"),
                format!("sv[(lid + st) * {part}u + {e}u]"),
            );
            src.line(format_args!("{a} = {};", combine(rc.r.op, rc.d, &a, &b)));
        }
        src.close();
        src.line("barrier(CLK_LOCAL_MEM_FENCE);");
        src.close();
        src.open(format_args!("if (lid < {part}u) {{"));
        src.line(format_args!("const {t} acc = sv[lid];"));
        src.line(format_args!("const {ix} e = {first}u + lid;"));
        src.line(store_partial(rc.r.op, t, "acc", "e * S + s"));
        // The next chunk overwrites `sv` only after everyone has read this one.
        src.close();
        src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    }
}
