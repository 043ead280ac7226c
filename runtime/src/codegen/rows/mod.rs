//! Row kernels ([`RowsPlan`]): `per_row` work-items take a row of `len` elements, work-item
//! `t` its elements `t + e * per_row` for `e` in `0..items` (neighbouring work-items read
//! neighbouring elements), and the kernel runs its phases over them: per reduction, the
//! operand's values and a tree over the row's work-items in local memory, whose result
//! the row's first work-item writes out and every later phase reads from local memory;
//! then the epilogue, stored element by element. The loop over `e` is unrolled, and each
//! input slot's elements are loaded once, at their first phase, into a private array
//! the later phases read (registers: a row is read from memory once).

use super::abi::{fused_signature, narrow_dims};
use super::ops::{combine, identity, vt};
use super::values::Values;
use super::writer::Src;
use crate::graph::ReduceOp;
use crate::plan::rows_plan::{Hold, RowsPlan};
use crate::plan::{KernelPlan, Value};
use reuse::{How, Reuse};

mod reuse;

/// Partials each step of a row's combining tree takes (the row's work-items, a power of
/// two, are combined in `log_RADIX(per_row)` steps, a barrier each).
const RADIX: u32 = 8;

/// The program of a row kernel.
pub(super) fn rows_source(plan: &KernelPlan, r: &RowsPlan) -> String {
    let mut v = Values::new(plan);
    let ix = v.ix;
    let (per_row, group) = (r.layout.per_row, r.layout.group);
    // The element steps of each phase: unrolled over the held elements, or a loop.
    let steps: Vec<Step> = match r.layout.hold {
        Hold::Registers { items } => (0..items).map(Step::Held).collect(),
        Hold::Reread => vec![Step::Loop],
    };
    let items = steps.len();
    let rank = plan.dims.len();
    let outer = rank - r.inner;
    let mut src = Src::at(0);
    src.text(&v.prelude());
    src.open(fused_signature(
        plan,
        &format!(" __attribute__((reqd_work_group_size({group}, 1, 1)))"),
    ));
    narrow_dims(rank, ix, &mut src);
    let len = (outer..rank)
        .map(|d| format!("d{d}"))
        .collect::<Vec<_>>()
        .join(" * ");
    src.line(format_args!("const {ix} len = {len};"));
    src.line(format_args!("const {ix} rows = len == 0 ? 0 : ({ix})n / len;"));
    src.line("const uint lid = get_local_id(0);");
    src.line(format_args!("const uint t = lid % {per_row}u, base = lid - t;"));
    src.line(format_args!(
        "const {ix} row = ({ix})get_group_id(0) * {}u + lid / {per_row}u;",
        group / per_row
    ));
    src.line("const int live = row < rows;");
    // The row's outer coordinates, once.
    if outer > 0 {
        src.line(format_args!("{ix} qr = row;"));
        for d in (0..outer).rev() {
            match d {
                0 => src.line(format_args!("const {ix} i0 = qr;")),
                _ => src.line(format_args!("const {ix} i{d} = qr % d{d}; qr /= d{d};")),
            }
        }
    }
    // A reduction's result, read by later phases from local memory.
    let reduced = |slot: usize| {
        r.reductions
            .iter()
            .position(|red| plan.outputs[red.output].node == plan.inputs[slot].node)
    };
    let reuse = Reuse::of(plan, r, &reduced);
    for (i, _) in reuse.kept.iter().enumerate().filter(|k| *k.1) {
        src.line(format_args!("{} k{i}[{items}];", vt(plan.values[i].dtype)));
    }
    for (k, red) in r.reductions.iter().enumerate() {
        src.line(format_args!(
            "__local {} red{k}[{group}];",
            vt(plan.values[red.value].dtype)
        ));
    }
    let ends = r.phase_ends();
    for (k, red) in r.reductions.iter().enumerate() {
        let d = plan.values[red.value].dtype;
        let t = vt(d);
        src.line(format_args!("{t} acc{k} = {};", identity(red.op, d)));
        for &step in &steps {
            element(&mut v, r, step, outer, &mut src, |v, src| {
                values(v, red.start..ends[k], step, &reuse, &reduced, src);
                src.line(format_args!(
                    "acc{k} = {};",
                    combine(red.op, d, &format!("acc{k}"), &format!("v{}", red.value))
                ));
            });
        }
        src.line(format_args!("red{k}[lid] = acc{k};"));
        src.line("barrier(CLK_LOCAL_MEM_FENCE);");
        // A tree of up to RADIX partials per step: few barriers.
        let mut s = per_row;
        while s > 1 {
            let next = s / s.min(RADIX);
            let sum = (1..s / next).fold(format!("red{k}[lid]"), |acc, q| {
                combine(red.op, d, &acc, &format!("red{k}[lid + {}u]", q * next))
            });
            src.line(format_args!("if (t < {next}u) red{k}[lid] = {sum};"));
            src.line("barrier(CLK_LOCAL_MEM_FENCE);");
            s = next;
        }
        let result = match red.op {
            ReduceOp::Mean => format!("red{k}[lid] / ({t})len"),
            _ => format!("red{k}[lid]"),
        };
        let out_t = vt(red.dtype);
        src.open("if (t == 0u) {");
        src.line(format_args!("red{k}[lid] = {result};"));
        src.line(format_args!(
            "if (live) out{}[row] = ({out_t})red{k}[lid];",
            red.output
        ));
        src.close();
        src.line("barrier(CLK_LOCAL_MEM_FENCE);");
    }
    let stores: Vec<usize> = (0..plan.outputs.len())
        .filter(|&o| !r.reductions.iter().any(|red| red.output == o))
        .collect();
    if !stores.is_empty() {
        for &step in &steps {
            element(&mut v, r, step, outer, &mut src, |v, src| {
                values(v, r.epilogue..plan.values.len(), step, &reuse, &reduced, src);
                for &o in &stores {
                    let output = &plan.outputs[o];
                    match &output.store {
                        Some(a) => src.line(format_args!(
                            "{} = v{};",
                            super::views::store_target(plan, o, a, None),
                            output.value
                        )),
                        None => src.line(format_args!("out{o}[gid] = v{};", output.value)),
                    }
                }
            });
        }
    }
    src.close();
    src.into_string()
}

/// One step of a phase over a work-item's elements of its row.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Element `t + e * per_row`, held in registers as element `e`.
    Held(u32),
    /// Every element `t + e * per_row` of the row, in a loop, held nowhere.
    Loop,
}

/// `body` at the elements of `step` that are in the row, with their coordinates along the
/// row (`i{d}`) and flat index `gid` in scope.
fn element(
    v: &mut Values,
    r: &RowsPlan,
    step: Step,
    outer: usize,
    src: &mut Src,
    body: impl FnOnce(&mut Values, &mut Src),
) {
    let ix = v.ix;
    let rank = v.plan.dims.len();
    let per_row = r.layout.per_row;
    match step {
        Step::Held(e) => {
            src.open(format_args!("{{ const {ix} j = t + {}u;", e * per_row));
            src.open("if (live && j < len) {");
        }
        Step::Loop => {
            src.open("{");
            src.open(format_args!(
                "for ({ix} j = t; live && j < len; j += {per_row}u) {{"
            ));
        }
    }
    if r.inner == 1 {
        src.line(format_args!("const {ix} i{} = j;", rank - 1));
    } else {
        src.line(format_args!("{ix} qj = j;"));
        for d in (outer..rank).rev() {
            match d == outer {
                true => src.line(format_args!("const {ix} i{d} = qj;")),
                false => src.line(format_args!("const {ix} i{d} = qj % d{d}; qj /= d{d};")),
            }
        }
    }
    src.line(format_args!("const {ix} gid = row * len + j;"));
    body(v, src);
    src.close();
    src.close();
}

/// The values of `range` at element `e` of the work-item as `v{i}`, as `reuse` says: a
/// value an earlier phase computed and holds is read from `k{i}[e]`, one its own phase
/// computed is that value, a value a later phase reads again is kept in `k{i}[e]`, a
/// load of a reduction's result reads local memory, and a value nothing reads is left
/// out.
fn values(
    v: &mut Values,
    range: std::ops::Range<usize>,
    step: Step,
    reuse: &Reuse,
    reduced: &impl Fn(usize) -> Option<usize>,
    src: &mut Src,
) {
    let plan = v.plan;
    let held = match step {
        Step::Held(e) => Some(e),
        Step::Loop => None,
    };
    for i in range.filter(|&i| !plan.values[i].in_branch) {
        let t = vt(plan.values[i].dtype);
        match (reuse.how[i], &plan.values[i].value, held) {
            (How::Unused, ..) => continue,
            (How::Alias(f), ..) => src.line(format_args!("const {t} v{i} = v{f};")),
            (How::Held(f), _, Some(e)) => src.line(format_args!("const {t} v{i} = k{f}[{e}];")),
            (_, Value::Load { slot }, _) if reduced(*slot).is_some() => {
                let k = reduced(*slot).unwrap_or_default();
                src.line(format_args!("const {t} v{i} = ({t})red{k}[base];"));
            }
            _ => {
                let e = v.expr(i, "gid", None);
                src.line(format_args!("const {t} v{i} = {e};"));
            }
        }
        if let (Some(e), true) = (held, reuse.kept[i]) {
            src.line(format_args!("k{i}[{e}] = v{i};"));
        }
    }
}
