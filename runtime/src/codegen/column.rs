//! The column layout of reductions over rows (`sum_axis(0)`, vectorᵀ·matrix): a
//! work-group streams whole rows of its tile, and the last work-group of a tile may
//! finish the reduction itself.

use std::fmt::Write;

use super::{arg_better, combine, identity, vt};
use crate::fuse::ReducePlan;
use crate::graph::ReduceOp;

/// The body of a column-layout reduction kernel (after the parameters), around the loop
/// body `body` that accumulates row `k` of outputs `o ..` into `acc{j}`.
///
/// The `n_out / width` vectors of a row are split into tiles of equal width, at most
/// [`ReducePlan::column_tile`] (an eighth or a quarter of the group); a work-group
/// takes one tile of one segment of the rows, `P = G / per_row` rows at a time,
/// so that its work-items read neighbouring addresses (whole rows when they fit). Each
/// work-item then accumulates its own outputs over every `P`-th row, and the first row of
/// work-items combines the others' accumulators from local memory.
///
/// With `rows` (a row reduction computed inside, [`super::row_column::row_loop`]), that loop
/// replaces the plain one: every work-item runs it, because it has barriers.
pub(super) fn column_layout(r: &ReducePlan, g: u32, ix: &str, body: &str, rows: Option<&str>) -> String {
    let d = r.in_dtype;
    let t = vt(d);
    let w = r.column_width;
    let tile = r.column_tile;
    let arg = r.op.is_arg();
    let kahan = r.compensated;
    let mut decls = String::new();
    let mut spill = String::new();
    let mut gather = String::new();
    let mut fin = String::new();
    // Partials: [o * S + s] for the combine pass; [s * n_out + o] when the last work-group
    // combines them (neighbouring work-items write and read neighbouring addresses).
    let part = |j: usize| {
        if r.finish_in_kernel {
            format!("s * n_out + o + {j}u")
        } else {
            format!("(o + {j}u) * S + s")
        }
    };
    for j in 0..w {
        let _ = writeln!(
            decls,
            "    {t} acc{j} = {}; {t} comp{j} = ({t})0; ulong acci{j} = NONE; (void)comp{j}; (void)acci{j};",
            identity(r.op, d)
        );
        let _ = writeln!(spill, "    sv[lid * {w}u + {j}u] = acc{j};");
        let v = format!("sv[(rr * per_row + lid) * {w}u + {j}u]");
        let step = if arg {
            format!(
                "            if ({}) {{ acc{j} = {v}; acci{j} = si[rr * per_row + lid]; }}\n",
                arg_better(
                    r.op,
                    d,
                    &format!("acc{j}"),
                    &format!("acci{j}"),
                    &v,
                    "si[rr * per_row + lid]"
                )
            )
        } else if kahan {
            format!("            {{ const {t} y = {v} - comp{j}; const {t} tt = acc{j} + y; comp{j} = (tt - acc{j}) - y; acc{j} = tt; }}\n")
        } else {
            format!(
                "            acc{j} = {};\n",
                combine(r.op, d, &format!("acc{j}"), &v)
            )
        };
        gather.push_str(&step);
        let _ = writeln!(
            fin,
            "        {}",
            if arg {
                format!(
                    "if (fin) {{ outi[{p}] = (acci{j} == NONE ? 0 : acci{j}); }} else {{ outv[{p}] = acc{j}; outi[{p}] = acci{j}; }}",
                    p = part(j)
                )
            } else if r.op == ReduceOp::Mean {
                format!("outv[{}] = fin ? acc{j} / ({t})n_red : acc{j};", part(j))
            } else {
                format!("outv[{}] = acc{j};", part(j))
            }
        );
    }
    if arg {
        spill.push_str("    si[lid] = acci0;\n");
    }
    // Four rows per step, in blocks of their own: the loads of all four are independent
    // of the accumulators, so they are in flight together (on the H200, 0.66 against 0.53
    // of a copy for 20000 x 1000, where `#pragma unroll` did nothing).
    let mut four = String::from("        for (; kb + 3u * P < k1; kb += 4u * P) {\n");
    for u in 0..4 {
        let _ = write!(
            four,
            "        {{\n        const {ix} k = kb + {u}u * P;\n{body}        }}\n"
        );
    }
    four.push_str("        }\n");
    let main = match rows {
        Some(rows) => rows.to_string(),
        None => format!(
            "    if (active) {{\n        const {ix} chunk = (n_red + S - 1) / S;\n        const {ix} k0 = min(n_red, s * chunk), k1 = min(n_red, k0 + chunk);\n        {ix} kb = k0 + row;\n{four}        for ({ix} k = kb; k < k1; k += P) {{\n{body}        }}\n    }}\n"
        ),
    };
    let finish = if r.finish_in_kernel {
        column_finish(r, ix, &spill, &gather)
    } else {
        String::new()
    };
    format!(
        "    __local {t} sv[{g} * {w}];\n    __local ulong si[{g}];\n    __local uint last_group;\n    (void)si; (void)last_group;\n    const {ix} G = {g}u, lid = get_local_id(0), grp = get_group_id(0);\n    const {ix} vectors = max(n_out / {w}u, ({ix})1), tiles = (vectors + {tile}u - 1) / {tile}u;\n    const {ix} per_row = (vectors + tiles - 1) / tiles, P = G / per_row;\n    const {ix} s = grp % S, tile = grp / S;\n    const {ix} row = lid / per_row, o = (tile * per_row + lid % per_row) * {w}u;\n    const int active = row < P && o < n_out;\n{decls}{main}    // Every work-item reaches the barrier (no branch around it, even when P == 1).\n{spill}    barrier(CLK_LOCAL_MEM_FENCE);\n    if (row == 0 && active) {{\n        for ({ix} rr = 1; rr < P; rr++) {{\n{gather}        }}\n    }}\n    if (row == 0 && active) {{\n{fin}    }}\n{finish}}}\n"
    )
}

/// The end of a column-layout kernel that finishes its reduction itself: like
/// [`super::finish_in_kernel`], with one counter per tile. The last work-group of a tile reads
/// the tile's partials `[s * n_out + o]` the way the kernel read rows: each work-item
/// owns the same `width` outputs as before (one vector load per partial), its row of
/// work-items takes every `P`-th segment, four at a time with their loads in flight
/// together, and the first row combines the others' accumulators from local memory
/// (`spill` and `gather`, shared with the main loop). Plain loads see the other groups'
/// partials: they are written before the fence and the count, and no work-item of this
/// kernel read them earlier (so no cache holds a stale copy). Every barrier is reached by
/// every work-item: only loads and stores depend on being last.
pub(super) fn column_finish(r: &ReducePlan, ix: &str, spill: &str, gather: &str) -> String {
    let d = r.in_dtype;
    let t = vt(d);
    let w = r.column_width;
    let arg = r.op.is_arg();
    let ind = "            ";
    let mut load = String::new();
    let mut reset = String::new();
    let mut write = String::new();
    if w > 1 {
        // Partials of a tile start at a multiple of the width (n_out is one).
        let _ = writeln!(
            load,
            "{ind}const {t}{w} q = ((__global const {t}{w}*)outv)[(k * n_out + o) / {w}u];"
        );
    }
    for j in 0..w {
        let v = if w > 1 {
            format!("q.s{j}")
        } else {
            "outv[k * n_out + o]".to_string()
        };
        if arg {
            let _ = writeln!(
                load,
                "{ind}if ({}) {{ acc{j} = {v}; acci{j} = outi[k * n_out + o]; }}",
                arg_better(
                    r.op,
                    d,
                    &format!("acc{j}"),
                    &format!("acci{j}"),
                    &v,
                    "outi[k * n_out + o]"
                )
            );
        } else {
            let _ = writeln!(
                load,
                "{ind}acc{j} = {};",
                combine(r.op, d, &format!("acc{j}"), &v)
            );
        }
        let _ = writeln!(
            reset,
            "    acc{j} = {}; comp{j} = ({t})0; acci{j} = NONE;",
            identity(r.op, d)
        );
        let _ = writeln!(
            write,
            "        {}",
            if arg {
                format!("fini[o + {j}u] = (acci{j} == NONE ? 0 : acci{j});")
            } else if r.op == ReduceOp::Mean {
                format!("finv[o + {j}u] = acc{j} / ({t})n_red;")
            } else {
                format!("finv[o + {j}u] = acc{j};")
            }
        );
    }
    let mut four = String::new();
    for u in 0..4 {
        let _ = write!(
            four,
            "        {{\n        const {ix} k = kb + {u}u * P;\n{load}        }}\n"
        );
    }
    format!(
        "    mem_fence(CLK_GLOBAL_MEM_FENCE);\n    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n    if (lid == 0u) last_group = (atomic_inc(&done[tile]) == (uint)(S - 1u));\n    barrier(CLK_LOCAL_MEM_FENCE);\n    const uint last = last_group;\n{reset}    if (last && active) {{\n        {ix} kb = row;\n        for (; kb + 3u * P < S; kb += 4u * P) {{\n{four}        }}\n        for ({ix} k = kb; k < S; k += P) {{\n{load}        }}\n    }}\n{spill}    barrier(CLK_LOCAL_MEM_FENCE);\n    if (last && row == 0 && active) {{\n        for ({ix} rr = 1; rr < P; rr++) {{\n{gather}        }}\n{write}    }}\n    if (last && lid == 0u) done[tile] = 0u;\n",
    )
}
