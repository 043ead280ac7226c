//! The end of a kernel that finishes its split reduction itself, in the last of the
//! work-groups of each block of outputs: instead of a combine pass, one launch instead of
//! two. Each work-group counts itself done for its block; the last one to finish reads
//! the block's partials, combines them like the combine pass, writes the results and
//! sets the counter back to zero for the queue's next reduction. Every barrier is reached
//! by every work-item: only loads and stores depend on being last.

use super::column::{four_rows, gather, spill};
use super::combine::{combine_lanes, combine_partials};
use super::Reduction;
use crate::codegen::accumulators::{count_finished_group, take, IN_KERNEL};
use crate::codegen::ops::identity;
use crate::codegen::writer::Src;

/// The end of a lanes-layout kernel, one counter per block of `G / lanes` outputs. The
/// partials are read as volatile: never from a stale cache.
pub(super) fn lanes_finish(red: &Reduction, lanes: u32, src: &mut Src) {
    let (op, d, t, ix) = (red.r.op, red.d, red.t, red.ix);
    count_finished_group(src, "last_group", "done[grp / S]");
    src.line("const uint last = last_group;");
    src.line(format_args!("acc = {}; acci = NONE;", identity(op, d)));
    src.open("if (last && o < n_out) {");
    src.line(format_args!("volatile __global const {t}* pvv = outv;"));
    if op.is_arg() {
        src.line("volatile __global const uint* piv = outi;");
    }
    combine_partials(src, op, d, ix, lanes, ("pvv", "piv"));
    src.close();
    combine_lanes(src, op, d, lanes, "last && ", &IN_KERNEL.store(op, t, "", "o"));
    src.line("if (last && lid == 0u) done[grp / S] = 0u;");
}

/// The end of a column-layout kernel, one counter per tile. The last work-group of a tile
/// reads the tile's partials `[s * n_out + o]` the way the kernel read rows: each
/// work-item owns the same `w` outputs as before (one vector load per partial), its
/// row of work-items takes every `P`-th segment, four at a time with their loads in flight
/// together, and the first row combines the others' accumulators from local memory (as
/// the main loop's end does). Plain loads see the other groups' partials: they are written
/// before the fence and the count, and no work-item of this kernel read them earlier (so
/// no cache holds a stale copy).
pub(super) fn column_finish(red: &Reduction, w: usize, src: &mut Src) {
    let (op, d, t, ix) = (red.r.op, red.d, red.t, red.ix);
    let mut load = Src::at(3);
    if w > 1 {
        // Partials of a tile start at a multiple of the width (n_out is one).
        load.line(format_args!(
            "const {v} q = ((__global const {v}*)outv)[(k * n_out + o) / {w}u];",
            v = d.vector(w)
        ));
    }
    for j in 0..w {
        let v = if w > 1 {
            d.lane("q", j)
        } else {
            "outv[k * n_out + o]".to_string()
        };
        let (acc, acci) = (format!("acc{j}"), format!("acci{j}"));
        load.line(take(op, d, (&acc, &acci), (&v, "outi[k * n_out + o]")));
    }
    let load = load.into_string();
    count_finished_group(src, "last_group", "done[tile]");
    src.line("const uint last = last_group;");
    for j in 0..w {
        src.line(format_args!(
            "acc{j} = {}; comp{j} = ({t})0; acci{j} = NONE;",
            identity(op, d)
        ));
    }
    src.open("if (last && active) {");
    src.line(format_args!("{ix} kb = row;"));
    four_rows(src, ix, "S", &load);
    src.close();
    spill(red, w, src);
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.open("if (last && row == 0 && active) {");
    gather(red, w, src);
    for j in 0..w {
        src.line(IN_KERNEL.store(op, t, &j.to_string(), &format!("o + {j}u")));
    }
    src.close();
    src.line("if (last && lid == 0u) done[tile] = 0u;");
}
