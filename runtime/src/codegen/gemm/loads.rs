//! A GEMM kernel's tile loads: which elements of an operand's tile each work-item
//! loads (runs of a vector along contiguous rows where it can), evaluating the operand's
//! phase into registers, and staging them into local memory (the left tile transposed).

use super::super::ops::vt;
use super::super::values::Values;
use super::super::writer::Src;
use super::{Kernel, Operand};
use crate::plan::gemm::tiles::Along;

impl Kernel<'_> {
    /// Elements each work-item loads together along the operand's rows: a vector where
    /// the operand loads along its columns (neighbouring elements are neighbours in
    /// memory for its plain loads) and the tile's rows split into whole vectors; else 1.
    pub(super) fn run(&self, which: Operand) -> usize {
        let t = &self.t;
        let v = t.vector as usize;
        let (_, cols) = self.tile_shape(which);
        let along = match which {
            Operand::Left => self.g.left.along,
            Operand::Right => self.g.right.along,
        };
        let fits = v == crate::layout::VECTOR_WIDTH
            && along == Along::Columns
            && (cols as usize).is_multiple_of(v)
            && self.per_item(which).is_multiple_of(v);
        if fits {
            v
        } else {
            1
        }
    }

    /// `r` and `c`, the row and first column of the run of `w` elements a work-item
    /// loads, from the run's number `e` among the tile's runs in the order neighbouring
    /// work-items load them.
    pub(super) fn element(&self, which: Operand, w: usize, src: &mut Src) {
        let (rows, cols) = self.tile_shape(which);
        let along = match which {
            Operand::Left => self.g.left.along,
            Operand::Right => self.g.right.along,
        };
        match along {
            Along::Columns if w > 1 => {
                let runs = cols as usize / w;
                src.line(format_args!("const int r = e / {runs}, c = (e % {runs}) * {w};"));
            }
            Along::Columns => src.line(format_args!("const int r = e / {cols}, c = e % {cols};")),
            Along::Rows => src.line(format_args!("const int r = e % {rows}, c = e / {rows};")),
        }
    }

    /// Loads the operand's share of the tile at `k0` into registers (`ra`, `rb`),
    /// evaluating its phase; 0 outside the matrix. Runs of a vector read their plain
    /// loads as one vector where the whole run is inside the matrix.
    pub(super) fn load(&self, values: &mut Values, which: Operand, k0: &str, src: &mut Src) {
        let (op, reg, rows_of, cols_of, lim_r, lim_c) = match which {
            Operand::Left => (
                &self.g.left,
                "ra",
                "bm0 + r".to_string(),
                format!("{k0} + c"),
                "M_",
                "K_",
            ),
            Operand::Right => (
                &self.g.right,
                "rb",
                format!("{k0} + r"),
                "bn0 + c".to_string(),
                "K_",
                "N_",
            ),
        };
        let group = self.t.group();
        let w = self.run(which);
        src.line("#pragma unroll");
        src.open(format_args!(
            "for (int l = 0; l < {}; l++) {{",
            self.per_item(which) / w
        ));
        src.line(format_args!("const int e = tid + l * {group};"));
        self.element(which, w, src);
        src.line(format_args!("const int gr = {rows_of}, gc = {cols_of};"));
        if w > 1 {
            src.open(format_args!("if (gr < {lim_r} && gc + {w} <= {lim_c}) {{"));
            self.coordinates("gr", "gc", src);
            self.vector_loads(op, src);
            for lane in 0..w {
                for i in op.values.clone().filter(|&i| !self.plan.values[i].in_branch) {
                    let e = values.expr(i, "", Some(lane));
                    src.line(format_args!(
                        "const {} v{i}_{lane} = {e};",
                        vt(self.plan.values[i].dtype)
                    ));
                }
                src.line(format_args!("{reg}[l * {w} + {lane}] = v{}_{lane};", op.value));
            }
            src.reopen("} else {");
        }
        for lane in 0..w {
            let gc = if w > 1 {
                format!("gc + {lane}")
            } else {
                "gc".to_string()
            };
            src.open("{");
            src.line(format_args!("{} x = 0;", self.et));
            src.open(format_args!("if (gr < {lim_r} && {gc} < {lim_c}) {{"));
            self.coordinates("gr", &gc, src);
            self.values(values, op.values.clone(), src);
            src.line(format_args!("x = v{};", op.value));
            src.close();
            src.line(format_args!("{reg}[l * {w} + {lane}] = x;"));
            src.close();
        }
        if w > 1 {
            src.close();
        }
        src.close();
    }

    /// The vector loads of a run of the operand's phase: one per input it reads with a
    /// unit innermost stride and no guard (`L{slot}`, whose lanes the values take). An
    /// aligned one (every offset it takes a multiple of the vector) is one wide load.
    pub(super) fn vector_loads(&self, op: &crate::plan::GemmOperand, src: &mut Src) {
        let plan = self.plan;
        let mut done: Vec<usize> = Vec::new();
        for i in op.values.clone() {
            let crate::plan::Value::Load { slot } = plan.values[i].value else {
                continue;
            };
            let Some(a) = plan.inputs[slot].strided.as_ref().filter(|a| a.vectorizable()) else {
                continue;
            };
            if done.contains(&slot) {
                continue;
            }
            done.push(slot);
            let w = crate::layout::VECTOR_WIDTH;
            let t = plan.inputs[slot].dtype.vector(w);
            // (16-bit floats load with `vload` even where aligned: a `bf16` product read
            // through `ushort4` pointers ran at 22 TFLOP/s on an H100, with `vload4` at 34.)
            let load = if op.aligned && !plan.inputs[slot].dtype.is_stored_narrow() {
                let at = super::super::views::offset_text(plan, slot, a);
                let q = format!("({at}) / {w}");
                super::super::views::input_vector(plan, slot, w, lazycl_clc::VectorAt::Vector(&q))
            } else {
                super::super::views::vector_load(plan, slot, a, w)
            };
            src.line(format_args!("const {t} L{slot} = {load};"));
        }
    }

    /// Stores the registers loaded for an operand into local buffer `buf`.
    pub(super) fn stage(&self, which: Operand, buf: &str, src: &mut Src) {
        let t = &self.t;
        let v = t.vector as usize;
        let (name, reg, row) = match which {
            Operand::Left => ("las", "ra", t.bm as usize + v),
            Operand::Right => ("lbs", "rb", t.bn as usize + v),
        };
        let bk = t.bk;
        let w = self.run(which);
        src.line("#pragma unroll");
        src.open(format_args!(
            "for (int l = 0; l < {}; l++) {{",
            self.per_item(which) / w
        ));
        src.line(format_args!("const int e = tid + l * {};", t.group()));
        self.element(which, w, src);
        match which {
            // The left tile is staged transposed: `k` (its column) outermost.
            Operand::Left => {
                for lane in 0..w {
                    src.line(format_args!(
                        "{name}[(({buf}) * {bk} + c + {lane}) * {row} + r] = {reg}[l * {w} + {lane}];"
                    ));
                }
            }
            // A run of the right tile is a vector of its row.
            Operand::Right if w > 1 => {
                let lanes: Vec<String> = (0..w).map(|lane| format!("{reg}[l * {w} + {lane}]")).collect();
                src.line(format_args!(
                    "lb[((({buf}) * {bk} + r) * {row} + c) / {w}] = ({}{w})({});",
                    self.et,
                    lanes.join(", ")
                ));
            }
            Operand::Right => {
                src.line(format_args!(
                    "{name}[(({buf}) * {bk} + r) * {row} + c] = {reg}[l];"
                ));
            }
        }
        src.close();
    }
}
