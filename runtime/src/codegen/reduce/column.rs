//! The column layout of reductions over rows (`sum_axis(0)`, vectorᵀ·matrix): a
//! work-group streams whole rows of its tile, and the first row of its work-items
//! combines the others' accumulators.

use super::Reduction;
use crate::codegen::ops::identity;
use crate::codegen::row_column::{self, RowColumn};
use crate::codegen::values::Values;
use crate::codegen::writer::Src;
use crate::layout::VECTOR_WIDTH;
use crate::plan::Columns;

/// The depth the accumulation of a row stands at, in the plain loop and in the row loop.
const BODY_DEPTH: usize = 3;

/// The kernel's body after the header, around the accumulation of row `k` of outputs
/// `o ..` into `acc{j}`.
///
/// The `n_out / width` vectors of a row are split into tiles of equal width, at most
/// [`Columns::tile`] (an eighth or a quarter of the group); a work-group takes one tile of
/// one segment of the rows, `P = G / per_row` rows at a time, so that its work-items read
/// neighbouring addresses (whole rows when they fit). Each work-item then accumulates its own outputs over every
/// `P`-th row, and the first row of work-items combines the others' accumulators from
/// local memory.
///
/// With `rows` (a row reduction computed inside, [`row_column::row_loop`]), that loop
/// replaces the plain one: every work-item runs it, because it has barriers.
pub(super) fn column_layout(
    red: &Reduction,
    c: &Columns,
    rows: Option<&RowColumn>,
    v: &mut Values,
    src: &mut Src,
) {
    let (r, ix, t) = (red.r, red.ix, red.t);
    let (g, w, tile) = (red.plan.group_size, c.width, c.tile);
    let body = accumulate_row(red, w, rows, v);
    src.line(format_args!("__local {t} sv[{g} * {w}];"));
    src.line(format_args!("__local uint si[{g}];"));
    src.line("__local uint last_group;");
    src.line("(void)si; (void)last_group;");
    src.line(format_args!(
        "const {ix} G = {g}u, lid = get_local_id(0), grp = get_group_id(0);"
    ));
    src.line(format_args!(
        "const {ix} vectors = max(n_out / {w}u, ({ix})1), tiles = (vectors + {tile}u - 1) / {tile}u;"
    ));
    src.line(format_args!(
        "const {ix} per_row = (vectors + tiles - 1) / tiles, P = G / per_row;"
    ));
    src.line(format_args!("const {ix} s = grp % S, tile = grp / S;"));
    src.line(format_args!(
        "const {ix} row = lid / per_row, o = (tile * per_row + lid % per_row) * {w}u;"
    ));
    src.line("const int active = row < P && o < n_out;");
    for j in 0..w {
        src.line(format_args!(
            "{t} acc{j} = {}; {t} comp{j} = ({t})0; uint acci{j} = NONE; (void)comp{j}; (void)acci{j};",
            identity(r.op, red.d)
        ));
    }
    match rows {
        Some(rows) => row_column::row_loop(rows, v, &body, src),
        None => {
            src.open("if (active) {");
            src.line(format_args!("const {ix} chunk = (n_red + S - 1) / S;"));
            src.line(format_args!(
                "const {ix} k0 = min(n_red, s * chunk), k1 = min(n_red, k0 + chunk);"
            ));
            src.line(format_args!("{ix} kb = k0 + row;"));
            four_rows(src, ix, "k1", &body);
            src.close();
        }
    }
    src.line("// Every work-item reaches the barrier (no branch around it, even when P == 1).");
    spill(red, w, src);
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.open("if (row == 0 && active) {");
    gather(red, w, src);
    src.close();
    src.open("if (row == 0 && active) {");
    for j in 0..w {
        // Partials: [o * S + s] for the combine pass; [s * n_out + o] when the last
        // work-group combines them (neighbouring work-items write and read neighbouring
        // addresses).
        let part = if red.finishes_itself {
            format!("s * n_out + o + {j}u")
        } else {
            format!("(o + {j}u) * S + s")
        };
        src.line(red.store(&j.to_string(), &part));
    }
    src.close();
}

/// The accumulation of row `k` into `acc{j}`, at [`BODY_DEPTH`]: `w` neighbouring
/// outputs per work-item, one vector load per input and row when that is 4
/// (inputs broadcast along the innermost dim: one scalar load), an accumulator per
/// output. With a row reduction inside, the per-row values its loop computes once per row
/// are in scope as `h{i}`.
fn accumulate_row(red: &Reduction, w: usize, rows: Option<&RowColumn>, v: &mut Values) -> String {
    let (r, out) = (red.r, red.out);
    let given = rows.map_or(&[][..], |rows| &rows.hoisted[..]);
    let len = red.plan.values.len();
    let mut src = Src::at(BODY_DEPTH);
    if w == VECTOR_WIDTH {
        v.lanes(r, len, given, VECTOR_WIDTH, true, &mut src);
        for lane in 0..VECTOR_WIDTH {
            src.line(red.step_into(&format!("v{out}_{lane}"), "k", &lane.to_string()));
        }
    } else {
        v.at_element(r, len, given, &mut src);
        src.line(red.step_into(&format!("v{out}"), "k", "0"));
    }
    src.into_string()
}

/// Rows `kb, kb + P, ...` below `bound`, each taken by `body`: four per step, in blocks
/// of their own (the loads of all four are independent of the accumulators, so they are
/// in flight together), then the rest one at a time. The loops and blocks stand at the
/// depth of what is around them, `body` one level in.
pub(super) fn four_rows(src: &mut Src, ix: &str, bound: &str, body: &str) {
    src.line(format_args!("for (; kb + 3u * P < {bound}; kb += 4u * P) {{"));
    for u in 0..4 {
        src.line("{");
        src.line(format_args!("const {ix} k = kb + {u}u * P;"));
        src.text(body);
        src.line("}");
    }
    src.line("}");
    src.line(format_args!("for ({ix} k = kb; k < {bound}; k += P) {{"));
    src.text(body);
    src.line("}");
}

/// Every work-item's `w` accumulators into local memory (`sv[lid * w + j]`, the arg
/// index of the first in `si[lid]`), for the first row of work-items to combine.
pub(super) fn spill(red: &Reduction, w: usize, src: &mut Src) {
    for j in 0..w {
        src.line(format_args!("sv[lid * {w}u + {j}u] = acc{j};"));
    }
    if red.arg {
        src.line("si[lid] = acci0;");
    }
}

/// The first row of work-items takes the other rows' spilled accumulators (`w` each) into
/// its own.
pub(super) fn gather(red: &Reduction, w: usize, src: &mut Src) {
    src.open(format_args!("for ({} rr = 1; rr < P; rr++) {{", red.ix));
    for j in 0..w {
        let v = format!("sv[(rr * per_row + lid) * {w}u + {j}u]");
        src.line(red.step_into(&v, "si[rr * per_row + lid]", &j.to_string()));
    }
    src.close();
}
