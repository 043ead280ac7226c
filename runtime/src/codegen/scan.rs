//! Scan kernels: the running sum or product along one axis of the kernel's value (its
//! operand, with the operand's producers evaluated in the loads), in two layouts
//! ([`ScanLayout`]).
//!
//! The tiled layout is one pass over the data (a decoupled look-back, as in Merrill and
//! Garland's single-pass scan): each work-group takes the next tile number from a counter
//! (so a tile waits only for tiles whose groups are already running, which is what lets
//! it spin), scans its tile in local memory, publishes its total, then looks back over
//! the tiles before it in its row, a window of them at a time, adding their totals up to
//! the nearest that has published its inclusive prefix; then it publishes its own prefix
//! and writes its elements. A published number is 64-bit words, each a flag over 32 bits
//! of it, written and read atomically ([`publish`]).

use super::abi::{fused_signature, narrow_dims};
use super::element_at::{store_at, value_at};
use super::ops::{combine, identity, vt};
use super::values::Values;
use super::writer::Src;
use crate::plan::{KernelPlan, ScanLayout, ScanPlan};

/// The program of a scan plan.
pub(super) fn scan_source(plan: &KernelPlan, s: &ScanPlan) -> String {
    let mut v = Values::new(plan);
    let mut src = Src::at(0);
    src.text(&v.prelude());
    src.open(fused_signature(plan, ""));
    narrow_dims(plan.dims.len(), v.ix, &mut src);
    match s.layout {
        ScanLayout::Serial => serial(&mut v, s, &mut src),
        ScanLayout::Tiles { items, per_row } => tiles(&mut v, s, items, per_row, &mut src),
    }
    src.close();
    src.into_string()
}

/// One work-item per column `(o, c)`, walking its elements in order.
fn serial(v: &mut Values, s: &ScanPlan, src: &mut Src) {
    let (ix, t) = (v.ix, vt(s.dtype));
    let (id, step) = (identity(s.op, s.dtype), combine(s.op, s.dtype, "acc", "x"));
    src.line(format_args!(
        "const {ix} len = ({ix})len_, inner = ({ix})inner_, cols = ({ix})cols_;"
    ));
    src.open(format_args!(
        "for ({ix} col = get_global_id(0); col < cols; col += get_global_size(0)) {{"
    ));
    src.line(format_args!("const {ix} o = col / inner, c = col - o * inner;"));
    src.line(format_args!("const {ix} base = o * len * inner + c;"));
    src.line(format_args!("{t} acc = {id};"));
    src.open(format_args!("for ({ix} l = 0; l < len; l++) {{"));
    src.line(format_args!("const {ix} at = base + l * inner;"));
    src.line(format_args!("{t} x;"));
    value_at(v, s.value, s.epilogue, "at", "x", src);
    if s.exclusive {
        store_at(v, s.dtype, s.epilogue, "at", "acc", src);
        src.line(format_args!("acc = {step};"));
    } else {
        src.line(format_args!("acc = {step};"));
        store_at(v, s.dtype, s.epilogue, "at", "acc", src);
    }
    src.close();
    src.close();
}

/// Tiles of `items` elements per work-item: `per_row` work-items take a row's part of a
/// tile (a power of two; rows shorter than a tile share one, a row each per `per_row`
/// work-items), and a row longer than a tile spans several, joined by the look-back.
// Long: one kernel body read top to bottom (loads, the runs' scans, their totals across
// the row, the look-back, stores in the loads' order), whose phases share their names.
fn tiles(v: &mut Values, s: &ScanPlan, items: u32, per_row: u32, src: &mut Src) {
    let group = v.plan.group_size;
    let tile = group * items;
    let part = per_row * items;
    let rows = group / per_row;
    let (ix, t) = (v.ix, vt(s.dtype));
    let id = identity(s.op, s.dtype);
    let op = |a: &str, b: &str| combine(s.op, s.dtype, a, b);
    // Element `e` of the tile lives at `P(e)`: a word of padding after every 32, so that
    // the work-items' runs of `items` neighbours fall in different banks.
    src.line(format_args!("__local {t} tile[{}];", tile + tile / 32));
    src.line("#define P(e) ((e) + ((e) >> 5))");
    src.line(format_args!("__local {t} sums[{group}];"));
    src.line(format_args!("__local {t} prefix;"));
    src.line("__local uint number;");
    src.line("const uint lid = get_local_id(0);");
    src.line("if (lid == 0) number = atomic_inc(&status[0]);");
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    // Tile `tn`: part `tr` of rows `row0 ..` (one row when a row spans tiles).
    src.line("const ulong tn = number, tiles = (ulong)tiles_;");
    src.line(format_args!(
        "const ulong row0 = tn / tiles * {rows}u, tr = tn % tiles;"
    ));
    src.line(format_args!("const {ix} len = ({ix})len_, rows = ({ix})(cols_);"));
    src.line(format_args!("const {ix} from = ({ix})(tr * {part}u);"));
    // Loads: neighbouring work-items read neighbouring elements.
    src.open(format_args!("for (uint k = 0; k < {items}u; k++) {{"));
    src.line(format_args!(
        "const uint e = k * {group}u + lid, r = e / {part}u, c = e % {part}u;"
    ));
    src.line(format_args!("{t} x = {id};"));
    src.open("if (row0 + r < rows && from + c < len) {");
    value_at(
        v,
        s.value,
        s.epilogue,
        &format!("({ix})(row0 + r) * len + from + c"),
        "x",
        src,
    );
    src.close();
    src.line("tile[P(e)] = x;");
    src.close();
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    // Each work-item scans its own run of `items` elements (leaving each element's
    // prefix within the run: inclusive, or exclusive), then the runs' totals are scanned
    // across the work-items of each row.
    src.line(format_args!("{t} run = {id};"));
    src.open(format_args!("for (uint k = 0; k < {items}u; k++) {{"));
    src.line(format_args!("const uint e = lid * {items}u + k;"));
    src.line(format_args!("const {t} x = tile[P(e)];"));
    if s.exclusive {
        src.line("tile[P(e)] = run;");
        src.line(format_args!("run = {};", op("run", "x")));
    } else {
        src.line(format_args!("run = {};", op("run", "x")));
        src.line("tile[P(e)] = run;");
    }
    src.close();
    src.line("sums[lid] = run;");
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.open(format_args!("for (uint off = 1; off < {per_row}u; off <<= 1) {{"));
    src.line(format_args!(
        "const {t} y = lid % {per_row}u >= off ? sums[lid - off] : {id};"
    ));
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.line(format_args!("sums[lid] = {};", op("y", "sums[lid]")));
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.close();
    if rows == 1 {
        look_back(s, group, src);
    } else {
        src.line(format_args!("if (lid == 0) prefix = {id};"));
        src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    }
    // Stores, in the loads' order: the tiles before, the runs before, the run's own.
    src.open(format_args!("for (uint k = 0; k < {items}u; k++) {{"));
    src.line(format_args!(
        "const uint e = k * {group}u + lid, r = e / {part}u, c = e % {part}u, owner = e / {items}u;"
    ));
    src.open("if (row0 + r < rows && from + c < len) {");
    src.line(format_args!(
        "const {t} before = owner % {per_row}u > 0 ? {} : prefix;",
        op("prefix", "sums[owner - 1]")
    ));
    store_at(
        v,
        s.dtype,
        s.epilogue,
        &format!("({ix})(row0 + r) * len + from + c"),
        &op("before", "tile[P(e)]"),
        src,
    );
    src.close();
    src.close();
}

/// How many tiles back one step of the look-back reads, one per work-item.
const WINDOW: u32 = 32;

/// The look-back of a row spanning several tiles. Work-item 0 publishes the tile's
/// total; then, a window of [`WINDOW`] tiles at a time (one per work-item, read in
/// parallel: waiting on the tiles one by one made each tile wait on the chain of tiles
/// still running), the totals of the tiles before this one in its row are added up to the
/// nearest tile that has published its inclusive prefix. Work-item 0 then publishes this
/// tile's inclusive prefix; `prefix` holds the tiles before it. (A window of the whole
/// group, summed by a tree, was slower on the H200: RESULTS.md#rule-scan-window.)
fn look_back(s: &ScanPlan, group: u32, src: &mut Src) {
    let t = vt(s.dtype);
    let id = identity(s.op, s.dtype);
    let op = |a: &str, b: &str| combine(s.op, s.dtype, a, b);
    let w = WINDOW.min(group);
    src.line(format_args!("__local {t} winv[{w}];"));
    src.line(format_args!("__local uint wins[{w}];"));
    src.line("__local uint more;");
    src.line(format_args!("const {t} total = sums[{}u];", group - 1));
    src.open("if (lid == 0) {");
    src.line(format_args!("prefix = {id};"));
    src.line("more = tr > 0;");
    src.open("if (tr > 0) {");
    publish(s, "agg", "total", src);
    src.close();
    src.close();
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    // `top`: the window reads tiles `top - 1 - lid`; the row's first tile is `tn - tr`.
    src.line("ulong top = tn;");
    src.open("while (more) {");
    src.open(format_args!("if (lid < {w}u) {{"));
    src.line("uint state = 2u;");
    src.line(format_args!("{t} v = {id};"));
    src.open("if (top - (tn - tr) > lid) {");
    src.line("const ulong j = top - 1 - lid;");
    src.open("for (;;) {");
    src.line("int ready;");
    read_published(s, "incl", "v", src);
    src.line("if (ready) { state = 2u; break; }");
    read_published(s, "agg", "v", src);
    src.line("if (ready) { state = 1u; break; }");
    src.close();
    src.close();
    src.line("winv[lid] = v;");
    src.line("wins[lid] = state;");
    src.close();
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.open("if (lid == 0) {");
    src.line(format_args!("{t} acc = prefix;"));
    src.line("uint found = 0u;");
    src.open(format_args!("for (uint k = 0; k < {w}u && !found; k++) {{"));
    src.line(format_args!("acc = {};", op("winv[k]", "acc")));
    src.line("found = wins[k] == 2u;");
    src.close();
    src.line("prefix = acc;");
    src.line("more = !found;");
    src.close();
    src.line(format_args!("top -= {w}u;"));
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.close();
    src.open("if (lid == 0) {");
    src.line(format_args!("const {t} inclusive = {};", op("prefix", "total")));
    publish(s, "incl", "inclusive", src);
    src.close();
}

/// How many 64-bit words publish one of a tile's numbers (`agg`: its total, `incl`: its
/// inclusive prefix): each word is a flag in the high half over 32 bits of the number,
/// written atomically, so a reader that sees every word flagged has the number, with no
/// fence to order a number and a separate flag (which NVIDIA's OpenCL did not honour
/// across work-groups).
fn words(s: &ScanPlan) -> usize {
    s.dtype.size().div_ceil(4)
}

/// Publishes `value` into tile `tn`'s words of `array`.
fn publish(s: &ScanPlan, array: &str, value: &str, src: &mut Src) {
    let w = words(s);
    if w == 1 {
        let bits = if s.dtype == crate::dtype::DType::U32 {
            format!("(uint)({value})")
        } else {
            format!("as_uint({value})")
        };
        src.line(format_args!("atom_xchg(&{array}[tn], (1UL << 32) | {bits});"));
    } else {
        src.line(format_args!("const uint2 b = as_uint2({value});"));
        src.line(format_args!("atom_xchg(&{array}[2 * tn], (1UL << 32) | b.x);"));
        src.line(format_args!(
            "atom_xchg(&{array}[2 * tn + 1], (1UL << 32) | b.y);"
        ));
    }
}

/// Reads tile `j`'s words of `array`: `ready` says whether all are published, and then
/// `dest` holds the number.
fn read_published(s: &ScanPlan, array: &str, dest: &str, src: &mut Src) {
    let t = vt(s.dtype);
    src.open("{");
    if words(s) == 1 {
        src.line(format_args!("ulong a0 = atom_or(&{array}[j], 0UL);"));
        src.line("ready = (a0 >> 32) != 0;");
        let from = if s.dtype == crate::dtype::DType::U32 {
            "(uint)a0".to_string()
        } else {
            format!("as_{t}((uint)a0)")
        };
        src.line(format_args!("if (ready) {dest} = {from};"));
    } else {
        src.line(format_args!("ulong a0 = atom_or(&{array}[2 * j], 0UL);"));
        src.line(format_args!("ulong a1 = atom_or(&{array}[2 * j + 1], 0UL);"));
        src.line("ready = (a0 >> 32) != 0 && (a1 >> 32) != 0;");
        src.line(format_args!(
            "if (ready) {dest} = as_{t}((uint2)((uint)a0, (uint)a1));"
        ));
    }
    src.close();
}
