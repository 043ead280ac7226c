//! Scan kernels: the running sum or product along one axis of the kernel's value (its
//! operand, with the operand's producers evaluated in the loads), in two layouts
//! ([`ScanLayout`]).
//!
//! The tiled layout is one pass over the data (a decoupled look-back, as in Merrill and
//! Garland's single-pass scan): each work-group takes the next tile number from a counter
//! (so a tile waits only for tiles whose groups are already running, which is what lets
//! it spin), scans its tile in local memory, publishes its total, then walks back over the
//! tiles before it in its row, adding their totals until one has published its inclusive
//! prefix; then it publishes its own prefix and writes its elements. A tile's value is
//! written, then a global fence, then its state; a reader reads the state atomically,
//! fences, then reads the value through a volatile pointer.

use super::abi::{fused_signature, narrow_dims};
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
        ScanLayout::Tiles { items } => tiles(&mut v, s, items, &mut src),
    }
    src.close();
    src.into_string()
}

/// `dest = ` the kernel's value at flat element `at` (in a block of its own).
fn value_at(v: &mut Values, at: &str, dest: &str, src: &mut Src) {
    src.open("{");
    src.line(format_args!("const {} gid = {at};", v.ix));
    v.element_indices(src);
    v.all("gid", src);
    src.line(format_args!("{dest} = v{};", v.plan.outputs[0].value));
    src.close();
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
    value_at(v, "at", "x", src);
    if s.exclusive {
        src.line("out0[at] = acc;");
        src.line(format_args!("acc = {step};"));
    } else {
        src.line(format_args!("acc = {step};"));
        src.line("out0[at] = acc;");
    }
    src.close();
    src.close();
}

/// Tiles of `items` elements per work-item along rows, with a decoupled look-back.
fn tiles(v: &mut Values, s: &ScanPlan, items: u32, src: &mut Src) {
    let group = v.plan.group_size;
    let tile = group * items;
    let (ix, t) = (v.ix, vt(s.dtype));
    let id = identity(s.op, s.dtype);
    let op = |a: &str, b: &str| combine(s.op, s.dtype, a, b);
    src.line(format_args!("__local {t} tile[{tile}];"));
    src.line(format_args!("__local {t} sums[{group}];"));
    src.line(format_args!("__local {t} prefix;"));
    src.line("__local uint number;");
    src.line("const uint lid = get_local_id(0);");
    src.line("if (lid == 0) number = atomic_inc(&status[0]);");
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.line("const ulong tn = number, tiles = (ulong)tiles_;");
    src.line("const ulong row = tn / tiles, tr = tn - row * tiles;");
    src.line(format_args!("const {ix} len = ({ix})len_;"));
    src.line(format_args!(
        "const {ix} start = ({ix})(row * len + tr * {tile}u);"
    ));
    src.line(format_args!(
        "const {ix} count = min(({ix}){tile}u, len - ({ix})(tr * {tile}u));"
    ));
    // Loads: neighbouring work-items read neighbouring elements.
    src.open(format_args!("for (uint k = 0; k < {items}u; k++) {{"));
    src.line(format_args!("const uint e = k * {group}u + lid;"));
    src.line(format_args!("{t} x = {id};"));
    src.open("if (e < count) {");
    value_at(v, "start + e", "x", src);
    src.close();
    src.line("tile[e] = x;");
    src.close();
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    // Each work-item scans its own run of `items` elements (leaving each element's
    // prefix within the run: inclusive, or exclusive), then the runs' totals are scanned
    // across the group.
    src.line(format_args!("{t} run = {id};"));
    src.open(format_args!("for (uint k = 0; k < {items}u; k++) {{"));
    src.line(format_args!("const {t} x = tile[lid * {items}u + k];"));
    if s.exclusive {
        src.line(format_args!("tile[lid * {items}u + k] = run;"));
        src.line(format_args!("run = {};", op("run", "x")));
    } else {
        src.line(format_args!("run = {};", op("run", "x")));
        src.line(format_args!("tile[lid * {items}u + k] = run;"));
    }
    src.close();
    src.line("sums[lid] = run;");
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.open(format_args!("for (uint off = 1; off < {group}u; off <<= 1) {{"));
    src.line(format_args!("const {t} y = lid >= off ? sums[lid - off] : {id};"));
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.line(format_args!("sums[lid] = {};", op("y", "sums[lid]")));
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    src.close();
    look_back(s, group, src);
    src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    // Stores, in the loads' order: the tiles before, the runs before, the run's own.
    src.open(format_args!("for (uint k = 0; k < {items}u; k++) {{"));
    src.line(format_args!(
        "const uint e = k * {group}u + lid, owner = e / {items}u;"
    ));
    src.open("if (e < count) {");
    src.line(format_args!(
        "const {t} before = owner > 0 ? {} : prefix;",
        op("prefix", "sums[owner - 1]")
    ));
    src.line(format_args!("out0[start + e] = {};", op("before", "tile[e]")));
    src.close();
    src.close();
}

/// Work-item 0 publishes the tile's total, finds the prefix of the tiles before it in
/// its row (`prefix`), and publishes its own inclusive prefix.
fn look_back(s: &ScanPlan, group: u32, src: &mut Src) {
    let t = vt(s.dtype);
    let id = identity(s.op, s.dtype);
    let op = |a: &str, b: &str| combine(s.op, s.dtype, a, b);
    src.open("if (lid == 0) {");
    src.line(format_args!("const {t} total = sums[{}u];", group - 1));
    src.line(format_args!("{t} before = {id};"));
    src.open("if (tr > 0) {");
    src.line("agg[tn] = total;");
    src.line("mem_fence(CLK_GLOBAL_MEM_FENCE);");
    src.line("atomic_xchg(&status[1 + tn], 1u);");
    src.line("ulong j = tn - 1;");
    src.open("for (;;) {");
    src.line("uint state;");
    src.line("do { state = atomic_or(&status[1 + j], 0u); } while (state == 0u);");
    src.line("mem_fence(CLK_GLOBAL_MEM_FENCE);");
    src.open("if (state == 2u) {");
    src.line(format_args!("before = {};", op("incl[j]", "before")));
    src.line("break;");
    src.close();
    src.line(format_args!("before = {};", op("agg[j]", "before")));
    src.line("j--;");
    src.close();
    src.close();
    src.line(format_args!("incl[tn] = {};", op("before", "total")));
    src.line("mem_fence(CLK_GLOBAL_MEM_FENCE);");
    src.line("atomic_xchg(&status[1 + tn], 2u);");
    src.line("prefix = before;");
    src.close();
}
