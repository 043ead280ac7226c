//! A GEMM kernel's end: the epilogue per accumulator and its stores, a row reduction's
//! results, or a split product's partial products.

use super::super::accumulators::take;
use super::super::ops::{identity, vt};
use super::super::values::Values;
use super::super::writer::Src;
use super::Kernel;
use crate::plan::gemm::tiles;

impl Kernel<'_> {
    /// Per accumulator, the epilogue at the product's coordinates, and the stores.
    pub(super) fn epilogue(&self, values: &mut Values, src: &mut Src) {
        let t = &self.t;
        let v = t.vector as usize;
        let (wm, wn) = ((t.bm / t.tm) as usize, t.across());
        src.line("const ulong zbase = z * (ulong)M_ * (ulong)N_;");
        let epilogue = self.g.epilogue()..self.plan.values.len();
        if let Some(r) = &self.g.row {
            let it = vt(self.plan.values[r.value].dtype);
            for i in 0..t.tm as usize {
                src.line(format_args!(
                    "{it} r{i} = {}; uint ri{i} = NONE;",
                    identity(r.op, self.plan.values[r.value].dtype)
                ));
            }
        }
        for i in 0..t.tm as usize {
            for j in 0..t.tn as usize {
                let row = (i / v) * wm * v + i % v;
                let col = (j / v) * wn * v + j % v;
                src.open("{");
                src.line(format_args!("const int row = bm0 + ty * {v} + {row};"));
                src.line(format_args!("const int col = bn0 + tx * {v} + {col};"));
                src.open("if (row < M_ && col < N_) {");
                self.coordinates("row", "col", src);
                src.line(format_args!("const {} prod = c{i}_{j};", self.et));
                self.values(values, epilogue.clone(), src);
                self.stores(src);
                if let Some(r) = &self.g.row {
                    let d = self.plan.values[r.value].dtype;
                    let (acc, acci) = (format!("r{i}"), format!("ri{i}"));
                    src.line(take(
                        r.op,
                        d,
                        (&acc, &acci),
                        (&format!("v{}", r.value), "(uint)col"),
                    ));
                }
                src.close();
                src.close();
            }
        }
        self.row_results(src);
    }

    /// A row reduction's results: each work-item's partial of each of its rows into
    /// local memory (the staged tiles' buffers are free by now), then one work-item per
    /// row of the block combines the partials of the work-items along it, in column
    /// order, and stores the row's result.
    pub(super) fn row_results(&self, src: &mut Src) {
        let Some(r) = &self.g.row else { return };
        let t = &self.t;
        let v = t.vector as usize;
        let (wm, across) = ((t.bm / t.tm) as usize, t.across());
        let d = self.plan.values[r.value].dtype;
        let it = vt(d);
        src.line(format_args!("__local {it} rl[{}];", tiles::row_scratch(t)));
        src.line(format_args!("__local uint rli[{}];", tiles::row_scratch(t)));
        for i in 0..t.tm as usize {
            let row = (i / v) * wm * v + i % v;
            src.line(format_args!(
                "rl[(ty * {v} + {row}) * {across} + tx] = r{i}; rli[(ty * {v} + {row}) * {across} + tx] = ri{i};"
            ));
        }
        src.line("barrier(CLK_LOCAL_MEM_FENCE);");
        src.open(format_args!(
            "for (int rr = tid; rr < {}; rr += {}) {{",
            t.bm,
            t.group()
        ));
        src.line(format_args!(
            "{it} acc = {}; uint acci = NONE;",
            identity(r.op, d)
        ));
        src.open(format_args!("for (int x = 0; x < {across}; x++) {{"));
        src.line(take(
            r.op,
            d,
            ("acc", "acci"),
            (
                &format!("rl[rr * {across} + x]"),
                &format!("rli[rr * {across} + x]"),
            ),
        ));
        src.close();
        src.line("const int row = bm0 + rr;");
        let result = if r.op.is_arg() {
            "(acci == NONE ? 0 : acci)".to_string()
        } else if r.op == crate::graph::ReduceOp::Mean {
            format!("acc / ({it})N_")
        } else {
            "acc".to_string()
        };
        src.line(format_args!(
            "if (row < M_) rout[z * (ulong)M_ + (ulong)row] = {result};"
        ));
        src.close();
    }

    /// The outputs' stores of the element at `row`, `col` of matrix `z`.
    pub(super) fn stores(&self, src: &mut Src) {
        for (k, o) in self.plan.outputs.iter().enumerate() {
            let at = match &o.store {
                Some(a) => super::super::views::store_offset(self.plan, k, a, None),
                None => "zbase + (ulong)row * (ulong)N_ + (ulong)col".to_string(),
            };
            src.line(super::super::views::store(
                self.plan,
                k,
                &at,
                &format!("v{}", o.value),
            ));
        }
    }

    /// A split product's segment: the accumulators as partial products, in
    /// `[segment, .., m, n]` order (the combine kernel adds them up).
    pub(super) fn partials(&self, src: &mut Src) {
        let t = &self.t;
        let v = t.vector as usize;
        let (wm, wn) = ((t.bm / t.tm) as usize, t.across());
        src.line("const ulong at = ((ulong)s * (ulong)batch_ + z) * (ulong)M_ * (ulong)N_;");
        for i in 0..t.tm as usize {
            for j in 0..t.tn as usize {
                let row = (i / v) * wm * v + i % v;
                let col = (j / v) * wn * v + j % v;
                src.open("{");
                src.line(format_args!("const int row = bm0 + ty * {v} + {row};"));
                src.line(format_args!("const int col = bn0 + tx * {v} + {col};"));
                src.line(format_args!(
                    "if (row < M_ && col < N_) part[at + (ulong)row * (ulong)N_ + (ulong)col] = c{i}_{j};"
                ));
                src.close();
            }
        }
    }
}
