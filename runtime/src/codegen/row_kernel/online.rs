//! A row's maximum and its sum of exponentials shifted by it in one pass ([`OnlineSum`]):
//! softmax, `log_softmax` and `logsumexp` reduce `m = max(x)` and then `s = sum(exp(x -
//! c(m)))`, where the shift `c` reads the row's maximum alone (`m` itself, or `m` where
//! it is finite and 0 elsewhere, as the library writes it). As two phases that is two
//! combining trees and their barriers. Computed online it is one: each work-item takes
//! its own maximum `m_t`, sums `exp(x - d(m_t))` with `d(m) = m` where finite and 0
//! elsewhere, and the tree combines the pairs `(m, s)` (a partial sum shifted by `d(m)`
//! is rescaled by `exp(d(m) - d(M))` where the larger maximum `M` joins it). At the end
//! the row's first work-item rescales the sum to the shift the user wrote, `c(M)`, and
//! each work-item its held exponentials (the epilogue's `exp(x - c(m))` read back).
//!
//! The rule is algebraic, `exp(x - c(M)) = exp(x - d(m_t)) * exp(d(m_t) - c(M))`, and
//! holds for any `c` that reads no element of the row; where `c(M) = d(M)` (every finite
//! row) the rescaling multiplies by exactly 1.
//!
//! Opt-in (`Tuning::rows_online`): on the H200 the one-pass kernel was slower than the
//! two phases it replaces (RESULTS.md#rule-rows-online), so the planner does not choose
//! it; it stays, tested, for the devices and sweeps that measure it again.

use super::reuse::first_equal;
use super::{suffix, Kernel, Step};
use crate::codegen::ops::{combine, vt};
use crate::codegen::values::Values;
use crate::codegen::writer::Src;
use crate::graph::{BinaryOp, ReduceOp, UnaryOp};
use crate::plan::row_kernel::RowsPlan;
use crate::plan::{KernelPlan, OpCode, Value};

/// Reductions `max` and `max + 1` of a row kernel, a maximum and a sum of
/// `exp(x - c)`, computed in one pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct OnlineSum {
    /// The maximum's reduction (index in [`RowsPlan::reductions`]); the sum's is next.
    pub(super) max: usize,
    /// The sum's operand `exp(x - c)`, and the difference `x - c` it takes.
    pub(super) exp: usize,
    pub(super) diff: usize,
    /// The shift `c`, and the values it is computed from (itself included, in order),
    /// none of which reads an element of the row.
    pub(super) shift: usize,
    pub(super) chain: Vec<usize>,
    /// The values of the sum's phase that compute `x`, in order.
    pub(super) x: Vec<usize>,
}

/// The maximum-and-sum pairs of the row kernel `r`, where its layout allows them.
/// `reduced[slot]`: the reduction whose result input `slot` reads, if any.
pub(super) fn find(plan: &KernelPlan, r: &RowsPlan, reduced: &[Option<usize>]) -> Vec<OnlineSum> {
    if !r.layout.online {
        return Vec::new();
    }
    let first = first_equal(plan);
    let ends = r.phase_ends();
    (0..r.reductions.len().saturating_sub(1))
        .filter_map(|k| {
            pair(
                plan,
                r,
                reduced,
                &first,
                k,
                r.reductions[k + 1].start..ends[k + 1],
            )
        })
        .collect()
}

/// Reductions `k` and `k + 1` as an [`OnlineSum`], where they are a float maximum and a
/// sum of exactly `exp(x - c)` (phase values `phase`), `x` equal to the maximum's operand
/// and `c` reading no element of the row.
fn pair(
    plan: &KernelPlan,
    r: &RowsPlan,
    reduced: &[Option<usize>],
    first: &[usize],
    k: usize,
    phase: std::ops::Range<usize>,
) -> Option<OnlineSum> {
    let (max, sum) = (&r.reductions[k], &r.reductions[k + 1]);
    let d = plan.values[max.value].dtype;
    let same = [max.dtype, sum.dtype, plan.values[sum.value].dtype]
        .iter()
        .all(|&t| t == d);
    if max.op != ReduceOp::Max || sum.op != ReduceOp::Sum || !d.is_float() || !same {
        return None;
    }
    let exp = sum.value;
    let diff = match &plan.values[exp].value {
        Value::Op {
            code: OpCode::Unary(UnaryOp::Exp),
            args,
        } => args[0],
        _ => return None,
    };
    let (x, shift) = match &plan.values[diff].value {
        Value::Op {
            code: OpCode::Binary(BinaryOp::Sub),
            args,
        } => (args[0], args[1]),
        _ => return None,
    };
    if first[x] != first[max.value] {
        return None;
    }
    let chain = closure(plan, shift);
    let xs = closure(plan, x);
    // The chain reads the results of this or earlier reductions, scalars and operations
    // over them: nothing that varies along the row.
    let still = chain.iter().all(|&i| match &plan.values[i].value {
        Value::Load { slot } => reduced[*slot].is_some_and(|j| j <= k),
        Value::Scalar { .. } | Value::Op { .. } => !plan.values[i].in_branch,
        Value::Inside { .. } | Value::Gather { .. } | Value::FromIndex { .. } => false,
    });
    // The phase is those values, each once, and nothing else.
    let parts = [&chain[..], &xs[..], &[diff, exp][..]];
    let once = phase
        .clone()
        .all(|i| parts.iter().filter(|p| p.contains(&i)).count() == 1);
    let inside = parts.iter().flat_map(|p| p.iter()).all(|i| phase.contains(i));
    let plain = !plan.values[diff].in_branch && !plan.values[exp].in_branch;
    (still && once && inside && plain).then_some(OnlineSum {
        max: k,
        exp,
        diff,
        shift,
        chain,
        x: xs,
    })
}

/// Value `i` and every value it reads, in order.
fn closure(plan: &KernelPlan, i: usize) -> Vec<usize> {
    let mut read = vec![false; i + 1];
    read[i] = true;
    for j in (0..=i).rev() {
        if !read[j] {
            continue;
        }
        match &plan.values[j].value {
            Value::Op { args, .. } | Value::FromIndex { args, .. } => {
                args.iter().for_each(|&a| read[a] = true)
            }
            Value::Gather { index, .. } => read[*index] = true,
            Value::Load { .. } | Value::Scalar { .. } | Value::Inside { .. } => {}
        }
    }
    (0..=i).filter(|&j| read[j]).collect()
}

/// `d(m)`: `m` where finite, else 0 (a work-item with no element, or only `-inf`, sums
/// `exp(-inf - 0) = 0`, not `exp(-inf + inf)`), in type `t`.
fn finite_shift(m: &str, t: &str) -> String {
    format!("(isfinite({m}) ? {m} : ({t})0)")
}

/// A partial sum `s` shifted by `d(m)`, rescaled to the shift `big` of a maximum `top`
/// of at least `m`: unchanged where `m` is that maximum (or `s` is 0, which a factor that
/// overflows must not turn into NaN).
fn rescaled(m: &str, s: &str, top: &str, big: &str, t: &str) -> String {
    format!(
        "(({m} == {top} || {s} == ({t})0) ? {s} : {s} * exp({} - {big}))",
        finite_shift(m, t)
    )
}

impl Kernel<'_> {
    /// Reductions `o.max` and `o.max + 1` as one pass (`online`): the maximum's partial
    /// `acc{q}` is taken, then each element's `exp(x - d(acc{q}))` (`sh{q}`) summed into
    /// `acc{q+1}` (and held where the epilogue reads it again), the pairs combined in one
    /// tree, and the held exponentials rescaled to the shift the user wrote.
    pub(super) fn online(&self, v: &mut Values, o: &OnlineSum, src: &mut Src) {
        self.shifted_sums(v, o, src);
        let last = self.pairs_tree(o, src);
        let (q, s) = (o.max, o.max + 1);
        let t = vt(self.plan.values[self.r.reductions[q].value].dtype);
        if !last {
            src.open("if (t == 0u) {");
            src.line(format_args!("const {t} r{q} = acc{q}, r{s} = acc{s};"));
        }
        self.results(v, o, src);
        src.close();
        src.line("barrier(CLK_LOCAL_MEM_FENCE);");
        src.line(format_args!(
            "const {t} rr{q} = red{q}[base], rr{s} = red{s}[base];"
        ));
        if self.reuse.kept[o.exp] {
            src.open("{");
            self.chain(v, o, &format!("rr{q}"), src);
            src.line(format_args!("const {t} f = exp(sh{q} - v{});", o.shift));
            for e in 0..self.steps.len() * self.r.layout.width as usize {
                let k = format!("k{}[{e}]", o.exp);
                src.line(format_args!("{k} = {k} == ({t})0 ? {k} : {k} * f;"));
            }
            src.close();
        }
    }

    /// Each work-item's sum `acc{q+1}` of its elements' `exp(x - d(acc{q}))`, its own
    /// maximum `acc{q}` taken: the exponentials the epilogue reads again are held.
    fn shifted_sums(&self, v: &mut Values, o: &OnlineSum, src: &mut Src) {
        let (q, s) = (o.max, o.max + 1);
        let t = vt(self.plan.values[self.r.reductions[q].value].dtype);
        src.line(format_args!(
            "const {t} sh{q} = {};",
            finite_shift(&format!("acc{q}"), t)
        ));
        src.line(format_args!("{t} acc{s} = ({t})0;"));
        let width = self.r.layout.width;
        for &step in &self.steps {
            self.element(v, step, src, |v, src| {
                self.values(v, o.x.iter().copied(), step, src);
                for (l, lane) in self.lanes().into_iter().enumerate() {
                    let sfx = suffix(lane);
                    src.line(format_args!("const {t} v{}{sfx} = sh{q};", o.shift));
                    for i in [o.diff, o.exp] {
                        let e = v.expr(i, "gid", lane);
                        src.line(format_args!("const {t} v{i}{sfx} = {e};"));
                    }
                    src.line(format_args!("acc{s} += v{}{sfx};", o.exp));
                    if let (Step::Held(e), true) = (step, self.reuse.kept[o.exp]) {
                        src.line(format_args!(
                            "k{}[{}] = v{}{sfx};",
                            o.exp,
                            e * width + l as u32,
                            o.exp
                        ));
                    }
                }
            });
        }
    }

    /// The tree over the row's work-items that combines their (maximum, sum) pairs;
    /// whether it has a last step ([`Kernel::steps_of_tree`]), which leaves the pair in
    /// `r{q}`, `r{q+1}`.
    fn pairs_tree(&self, o: &OnlineSum, src: &mut Src) -> bool {
        let (q, s) = (o.max, o.max + 1);
        let d = self.plan.values[self.r.reductions[q].value].dtype;
        let t = vt(d);
        // Pairs joined one at a time into a running pair (few registers: the held
        // exponentials stay live across the tree).
        self.steps_of_tree(src, &[q, s], |src, parts, next, last| {
            src.line(format_args!("{t} top = red{q}[lid], tot = red{s}[lid];"));
            for p in 1..parts {
                src.open("{");
                src.line(format_args!(
                    "const {t} pm = red{q}[lid + {at}u], ps = red{s}[lid + {at}u];",
                    at = p * next
                ));
                src.line(format_args!(
                    "const {t} nt = {};",
                    combine(ReduceOp::Max, d, "top", "pm")
                ));
                src.line(format_args!("const {t} nb = {};", finite_shift("nt", t)));
                src.line(format_args!(
                    "tot = {} + {};",
                    rescaled("top", "tot", "nt", "nb", t),
                    rescaled("pm", "ps", "nt", "nb", t)
                ));
                src.line("top = nt;");
                src.close();
            }
            match last {
                true => src.line(format_args!("const {t} r{q} = top, r{s} = tot;")),
                false => {
                    src.line(format_args!("red{q}[lid] = top;"));
                    src.line(format_args!("red{s}[lid] = tot;"));
                }
            }
        })
    }

    /// The row's results, by its first work-item from the pair `r{q}`, `r{q+1}`: the sum,
    /// shifted by `d(M)`, rescaled to `c(M)`, both into local memory for the later phases
    /// and out to the outputs.
    fn results(&self, v: &mut Values, o: &OnlineSum, src: &mut Src) {
        let (q, s) = (o.max, o.max + 1);
        let (max, sum) = (&self.r.reductions[q], &self.r.reductions[s]);
        let t = vt(self.plan.values[max.value].dtype);
        src.line(format_args!("const {t} mr = r{q};"));
        self.chain(v, o, "mr", src);
        src.line(format_args!(
            "red{s}[lid] = r{s} == ({t})0 ? r{s} : r{s} * exp({} - v{});",
            finite_shift("mr", t),
            o.shift
        ));
        src.line(format_args!("red{q}[lid] = mr;"));
        for (k, red) in [(q, max), (s, sum)] {
            let result = format!("({})red{k}[lid]", vt(red.dtype));
            let store = super::super::views::store(self.plan, red.output, "row", &result);
            src.line(format_args!("if (live) {store}"));
        }
    }

    /// The values of `o`'s shift, each read of the maximum's result as `top`.
    fn chain(&self, v: &mut Values, o: &OnlineSum, top: &str, src: &mut Src) {
        for &i in &o.chain {
            let t = vt(self.plan.values[i].dtype);
            let e = match &self.plan.values[i].value {
                Value::Load { slot } => match self.reduced[*slot] {
                    Some(k) if k == o.max => format!("({t})({top})"),
                    k => format!("({t})rr{}", k.unwrap_or_default()),
                },
                _ => v.expr(i, "gid", None),
            };
            src.line(format_args!("const {t} v{i} = {e};"));
        }
    }
}
