//! Row kernels ([`RowsPlan`]): `per_row` work-items take a row of `len` elements, work-item
//! `t` its runs of `width` elements from `width * (t + e * per_row)` for `e` in `0..items`
//! (neighbouring work-items read neighbouring runs), and the kernel runs its phases over
//! them: per reduction, the operand's values and a tree over the row's work-items in
//! local memory, whose result the row's first work-item writes out and every later phase
//! reads (once, into a register); then the epilogue, stored run by run. The loop over `e`
//! is unrolled, and each input slot's elements are loaded once, at their first phase,
//! into a private array the later phases read (registers: a row is read from memory
//! once).
//!
//! A run of `width` > 1 is a vector step: each value is computed per lane (`v{i}_{l}`,
//! lane `l` the run's element `l`), an input whose lanes are neighbours in memory is read
//! as one vector `L{slot}`, an output stored as one vector.

use super::abi::{fused_signature, narrow_dims};
use super::ops::{combine, identity, vt};
use super::values::Values;
use super::writer::Src;
use crate::graph::ReduceOp;
use crate::plan::row_kernel::{Hold, RowsPlan};
use crate::plan::{KernelPlan, Value};
use lazycl_clc::VectorAt;
use reuse::{How, Reuse};

mod online;
mod reuse;

/// Partials each step of a row's combining tree takes (the row's work-items, a power of
/// two, are combined in `log_RADIX(per_row)` steps, a barrier each).
const RADIX: u32 = 8;

/// The program of a row kernel.
pub(super) fn rows_source(plan: &KernelPlan, r: &RowsPlan) -> String {
    let mut v = Values::new(plan);
    let ix = v.ix;
    let group = r.layout.group;
    let rank = plan.dims.len();
    let outer = rank - r.inner;
    let mut src = Src::at(0);
    src.text(&v.prelude());
    src.open(fused_signature(
        plan,
        &format!(" __attribute__((reqd_work_group_size({group}, 1, 1)))"),
    ));
    narrow_dims(rank, ix, &mut src);
    row_of_work_item(r, rank, ix, &mut src);
    // A reduction's result, read by later phases from local memory.
    let reduced: Vec<Option<usize>> = (0..plan.inputs.len())
        .map(|slot| {
            r.reductions
                .iter()
                .position(|red| plan.outputs[red.output].node == plan.inputs[slot].node)
        })
        .collect();
    let online = online::find(plan, r, &reduced);
    let unheld: Vec<usize> = online.iter().map(|o| o.diff).collect();
    let k = Kernel {
        plan,
        r,
        steps: match r.layout.hold {
            Hold::Registers { items } => (0..items).map(Step::Held).collect(),
            Hold::Reread => vec![Step::Loop],
        },
        outer,
        reuse: Reuse::of(plan, r, &reduced, &unheld),
        reduced,
    };
    let held = k.steps.len() * r.layout.width as usize;
    for (i, _) in k.reuse.kept.iter().enumerate().filter(|k| *k.1) {
        src.line(format_args!("{} k{i}[{held}];", vt(plan.values[i].dtype)));
    }
    for (q, red) in r.reductions.iter().enumerate() {
        src.line(format_args!(
            "__local {} red{q}[{group}];",
            vt(plan.values[red.value].dtype)
        ));
    }
    let mut q = 0;
    while q < r.reductions.len() {
        k.phase(&mut v, q, &mut src);
        match online.iter().find(|o| o.max == q) {
            Some(o) => {
                k.online(&mut v, o, &mut src);
                q += 2;
            }
            None => {
                k.tree(q, &mut src);
                q += 1;
            }
        }
    }
    k.epilogue(&mut v, &mut src);
    src.close();
    src.into_string()
}

/// The row a work-item takes (`row`, with `live`: the row exists), its place among the
/// row's work-items (`t`, from `base`), the row's length `len`, and the row's outer
/// coordinates, once.
fn row_of_work_item(r: &RowsPlan, rank: usize, ix: &str, src: &mut Src) {
    let (per_row, group) = (r.layout.per_row, r.layout.group);
    let outer = rank - r.inner;
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
    if outer > 0 {
        src.line(format_args!("{ix} qr = row;"));
        for d in (0..outer).rev() {
            match d {
                0 => src.line(format_args!("const {ix} i0 = qr;")),
                _ => src.line(format_args!("const {ix} i{d} = qr % d{d}; qr /= d{d};")),
            }
        }
    }
}

/// What the phases of a row kernel's program share.
struct Kernel<'a> {
    plan: &'a KernelPlan,
    r: &'a RowsPlan,
    /// The element steps of each phase: unrolled over the held elements, or a loop.
    steps: Vec<Step>,
    /// Dims of the kernel's space outside a row.
    outer: usize,
    reuse: Reuse,
    /// Per input slot, the reduction whose result it reads (from local memory), if any.
    reduced: Vec<Option<usize>>,
}

impl Kernel<'_> {
    /// The epilogue: its values over the work-item's elements, each output that is no
    /// reduction's stored.
    fn epilogue(&self, v: &mut Values, src: &mut Src) {
        let (plan, r) = (self.plan, self.r);
        let stores: Vec<usize> = (0..plan.outputs.len())
            .filter(|&o| !r.reductions.iter().any(|red| red.output == o))
            .collect();
        if stores.is_empty() {
            return;
        }
        for &step in &self.steps {
            self.element(v, step, src, |v, src| {
                self.values(v, r.epilogue..plan.values.len(), step, src);
                for &o in &stores {
                    self.store(o, src);
                }
            });
        }
    }

    /// Reduction `q`'s operand over the work-item's elements, combined into `acc{q}`.
    fn phase(&self, v: &mut Values, q: usize, src: &mut Src) {
        let red = &self.r.reductions[q];
        let d = self.plan.values[red.value].dtype;
        let end = self.r.phase_ends()[q];
        src.line(format_args!("{} acc{q} = {};", vt(d), identity(red.op, d)));
        for &step in &self.steps {
            self.element(v, step, src, |v, src| {
                self.values(v, red.start..end, step, src);
                for lane in self.lanes() {
                    let value = format!("v{}{}", red.value, suffix(lane));
                    src.line(format_args!(
                        "acc{q} = {};",
                        combine(red.op, d, &format!("acc{q}"), &value)
                    ));
                }
            });
        }
    }

    /// The partials `acc{q}` of a row's work-items combined in local memory, in a tree of
    /// up to [`RADIX`] per step (few barriers); the row's first work-item writes the
    /// result out and leaves it in `red{q}[base]` for later phases.
    fn tree(&self, q: usize, src: &mut Src) {
        let red = &self.r.reductions[q];
        let d = self.plan.values[red.value].dtype;
        let t = vt(d);
        let last = self.steps_of_tree(src, &[q], |src, parts, next, last| {
            let sum = (1..parts).fold(format!("red{q}[lid]"), |acc, p| {
                combine(red.op, d, &acc, &format!("red{q}[lid + {}u]", p * next))
            });
            match last {
                true => src.line(format_args!("const {t} r{q} = {sum};")),
                false => src.line(format_args!("red{q}[lid] = {sum};")),
            }
        });
        if !last {
            src.open("if (t == 0u) {");
            src.line(format_args!("const {t} r{q} = acc{q};"));
        }
        let result = match red.op {
            ReduceOp::Mean => format!("r{q} / ({t})len"),
            _ => format!("r{q}"),
        };
        src.line(format_args!("red{q}[lid] = {result};"));
        let result = format!("({})red{q}[lid]", vt(red.dtype));
        let store = super::views::store(self.plan, red.output, "row", &result);
        src.line(format_args!("if (live) {store}"));
        src.close();
        src.line("barrier(CLK_LOCAL_MEM_FENCE);");
        src.line(format_args!("const {t} rr{q} = red{q}[base];"));
    }

    /// The steps of a combining tree over the partials `acc{q}`, through `red{q}`, for each
    /// `q` of `reds`: `step(src, parts, next, last)` prints how the work-items below
    /// `next` combine `parts` partials `next` apart. The last step (`last`) is the row's
    /// first work-item's alone, in an `if (t == 0u)` block left open for the caller;
    /// `false` where the row has one work-item and there is no step (nor block).
    fn steps_of_tree(
        &self,
        src: &mut Src,
        reds: &[usize],
        mut step: impl FnMut(&mut Src, u32, u32, bool),
    ) -> bool {
        let per_row = self.r.layout.per_row;
        if per_row == 1 {
            return false;
        }
        for q in reds {
            src.line(format_args!("red{q}[lid] = acc{q};"));
        }
        src.line("barrier(CLK_LOCAL_MEM_FENCE);");
        let mut s = per_row;
        while s > 1 {
            let next = s / s.min(RADIX);
            if next == 1 {
                src.open("if (t == 0u) {");
                step(src, s, next, true);
                return true;
            }
            src.open(format_args!("if (t < {next}u) {{"));
            step(src, s / next, next, false);
            src.close();
            src.line("barrier(CLK_LOCAL_MEM_FENCE);");
            s = next;
        }
        true
    }

    /// The lanes of a step: `None` where a work-item takes one element at a time.
    fn lanes(&self) -> Vec<Option<usize>> {
        match self.r.layout.width {
            1 => vec![None],
            w => (0..w as usize).map(Some).collect(),
        }
    }

    /// `body` at the run of `step` where it is in the row, with the coordinates of its
    /// first element along the row (`i{d}`; lane `l` adds `l` to the innermost) and its
    /// flat index `gid` in scope. (A row's length is a multiple of the run's width, so a
    /// run is in the row whole or not at all.)
    fn element(&self, v: &mut Values, step: Step, src: &mut Src, body: impl FnOnce(&mut Values, &mut Src)) {
        let ix = v.ix;
        let rank = v.plan.dims.len();
        let (per_row, width) = (self.r.layout.per_row, self.r.layout.width);
        let outer = self.outer;
        let first = match width {
            1 => "t".to_string(),
            w => format!("{w}u * t"),
        };
        match step {
            Step::Held(e) => {
                src.open(format_args!(
                    "{{ const {ix} j = {first} + {}u;",
                    e * per_row * width
                ));
                src.open("if (live && j < len) {");
            }
            Step::Loop => {
                src.open("{");
                src.open(format_args!(
                    "for ({ix} j = {first}; live && j < len; j += {}u) {{",
                    per_row * width
                ));
            }
        }
        if self.r.inner == 1 {
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

    /// The values `range` at the run of `step` as `v{i}` (per lane `v{i}_{l}`), as `reuse`
    /// says: a value an earlier phase computed and holds is read from `k{i}`, one its own
    /// phase computed is that value, a value a later phase reads again is kept in `k{i}`,
    /// a load of a reduction's result is its register `rr{q}`, and a value nothing reads
    /// is left out. Inputs whose lanes are neighbours are loaded first, as one vector
    /// each, and values computed from the kernel's own index share their Philox calls
    /// among the lanes.
    fn values(&self, v: &mut Values, range: impl IntoIterator<Item = usize>, step: Step, src: &mut Src) {
        let plan = self.plan;
        let held = match step {
            Step::Held(e) => Some(e),
            Step::Loop => None,
        };
        let range: Vec<usize> = range.into_iter().collect();
        let width = self.r.layout.width as usize;
        if width > 1 {
            // What the lanes compute here: values neither left out nor read back, and
            // those printed only inside a branch (the compiler drops what no lane reads).
            let computed = |i: usize| match (self.reuse.how[i], held) {
                _ if plan.values[i].in_branch => true,
                (How::Unused | How::Alias(_), _) | (How::Held(_), Some(_)) => false,
                (How::Held(_) | How::Compute, _) => true,
            };
            let mut loaded = vec![false; plan.inputs.len()];
            for &i in range.iter().filter(|&&i| computed(i)) {
                if let Value::Load { slot } = plan.values[i].value {
                    if self.reduced[slot].is_some() || std::mem::replace(&mut loaded[slot], true) {
                        continue;
                    }
                    if let Some(load) = vector_load(plan, slot) {
                        let t = vt(plan.inputs[slot].dtype);
                        src.line(format_args!("const {t}{width} L{slot} = {load};"));
                    }
                }
            }
            let w = crate::layout::VECTOR_WIDTH;
            super::from_index::blocks(plan, "gid", w, |i| range.contains(&i) && computed(i), src);
        }
        for &i in range.iter().filter(|&&i| !plan.values[i].in_branch) {
            let t = vt(plan.values[i].dtype);
            for (l, lane) in self.lanes().into_iter().enumerate() {
                let sfx = suffix(lane);
                let at = |e: u32| e as usize * width + l;
                match (self.reuse.how[i], &plan.values[i].value, held) {
                    (How::Unused, ..) => continue,
                    (How::Alias(f), ..) => src.line(format_args!("const {t} v{i}{sfx} = v{f}{sfx};")),
                    (How::Held(f), _, Some(e)) => {
                        src.line(format_args!("const {t} v{i}{sfx} = k{f}[{}];", at(e)))
                    }
                    (_, Value::Load { slot }, _) if self.reduced[*slot].is_some() => {
                        let k = self.reduced[*slot].unwrap_or_default();
                        src.line(format_args!("const {t} v{i}{sfx} = ({t})rr{k};"));
                    }
                    _ => {
                        let e = v.expr(i, "gid", lane);
                        src.line(format_args!("const {t} v{i}{sfx} = {e};"));
                    }
                }
                if let (Some(e), true) = (held, self.reuse.kept[i]) {
                    src.line(format_args!("k{i}[{}] = v{i}{sfx};", at(e)));
                }
            }
        }
    }

    /// The store of output `o` at the run in scope: one vector where the run is a vector
    /// step into an output of its own, else lane by lane.
    fn store(&self, o: usize, src: &mut Src) {
        let plan = self.plan;
        let output = &plan.outputs[o];
        let lanes = self.lanes();
        match (&output.store, lanes.len()) {
            (Some(a), _) => {
                for lane in lanes {
                    let at = super::views::store_offset(plan, o, a, lane);
                    let v = format!("v{}{}", output.value, suffix(lane));
                    src.line(super::views::store(plan, o, &at, &v));
                }
            }
            (None, 1) => src.line(super::views::store(plan, o, "gid", &format!("v{}", output.value))),
            (None, w) => {
                let parts: Vec<String> = lanes
                    .iter()
                    .map(|&lane| format!("v{}{}", output.value, suffix(lane)))
                    .collect();
                let value = format!("({})({})", output.dtype.vector(w), parts.join(", "));
                let at = format!("gid / {w}u");
                src.line(super::views::vector_store(
                    plan,
                    o,
                    w,
                    VectorAt::Vector(&at),
                    &value,
                ));
            }
        }
    }
}

/// The name suffix of a value in `lane` (none outside vector steps).
fn suffix(lane: Option<usize>) -> String {
    lane.map_or(String::new(), |l| format!("_{l}"))
}

/// The vector `L{slot}` of a vector step's lanes of input `slot`, where they are
/// neighbours in memory (a unit innermost stride, no guard). Row kernels load every
/// input through explicit coordinates (`plan::phase`), so every input is strided here.
fn vector_load(plan: &KernelPlan, slot: usize) -> Option<String> {
    let a = plan.inputs[slot].strided.as_ref()?;
    a.vectorizable()
        .then(|| super::views::vector_load(plan, slot, a, crate::layout::VECTOR_WIDTH))
}

/// One step of a phase over a work-item's elements of its row.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Run `e`, from element `width * (t + e * per_row)`, held in registers as elements
    /// `width * e ..` of the private arrays.
    Held(u32),
    /// Every run of the work-item in the row, in a loop, held nowhere.
    Loop,
}
