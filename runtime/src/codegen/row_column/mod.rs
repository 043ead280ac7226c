//! A column reduction that computes a row reduction of the same rows inside
//! ([`KernelPlan::row`]): `g = (x * f((x * w).sum_axis(1))).sum_axis(0)` reads `x` once. What
//! the layouts share is computed once ([`RowColumn`]); then one file per layout, by the
//! width of the rows:
//!
//! [`row_loop()`] (rows shared by a row of work-items; GPUs): a work-group covers whole
//! rows (one tile: `per_row` work-items a row, `P` rows at a time). Per step of `4 P`
//! rows, every work-item:
//! 1. evaluates the row reduction's operand on its own elements of four rows and combines
//!    them into one value per row (`rs` in local memory);
//! 2. takes part in a tree over the `per_row` work-items of each row (barriers, so every
//!    work-item runs every step, also those past the rows); with a total over the rows
//!    ([`KernelPlan::row_total`]), the first work-item of each row then adds the
//!    row's value to it and computes the per-row values once, shared in local memory;
//! 3. reads its rows' results, writes them out (the first work-item of a row), and
//!    evaluates the column reduction's operand with them, accumulating as the plain loop
//!    does. The elements are loaded again here: they were read a moment before, so the
//!    second load hits the cache, not device memory.
//!
//! [`group_rows()`] (rows of 128 to 1,024 vectors; GPUs): a whole work-group shares each
//! row, every work-item holding one or two vectors of it, four rows per step; values that
//! depend on the row only are computed once per row (`per_row_values`).
//!
//! [`rows_per_item()`] (short rows; every device): one work-item reads whole rows, with no
//! barrier until the group combines its accumulators at the end.
//!
//! A total over the rows beside the row reduction ends each layout's kernel
//! ([`row_total_end`]).

mod group_rows;
mod row_loop;
mod rows_per_item;
mod total;

pub(super) use group_rows::group_rows;
pub(super) use row_loop::row_loop;
pub(super) use rows_per_item::rows_per_item;
pub(super) use total::row_total_end;

use super::ops::{combine, combine_four, vt};
use super::values::Values;
use super::writer::Src;
use crate::dtype::DType;
use crate::graph::ReduceOp;
use crate::layout::VECTOR_WIDTH;
use crate::plan::{ColumnRows, Columns, JoinedReduction, KernelPlan, ReducePlan, Value};

/// What the layouts of a column reduction with a row reduction inside print from,
/// computed once before any of it is printed.
pub(super) struct RowColumn<'a> {
    plan: &'a KernelPlan,
    r: &'a ReducePlan,
    row: JoinedReduction,
    /// The value the row reduction reduces (its operand), and its type.
    operand: usize,
    rd: DType,
    /// The row result's type.
    rt: &'static str,
    /// The column reduction's reduced values' type, and the value reduced.
    d: DType,
    out: usize,
    /// Outputs per work-item, and whether they are one vector.
    w: usize,
    vector: bool,
    /// The vectors of each row a work-item holds: the whole row's in [`rows_per_item()`],
    /// its share in [`group_rows()`] (1 in [`row_loop()`]: one vector of `P` rows).
    vectors: usize,
    /// The per-row values the layout computes once per row and shares (`h{i}` where they
    /// are read).
    pub(super) hoisted: Vec<usize>,
    /// The values computed once per row: the hoisted ones, and the operand of a total over
    /// the rows beside.
    per_row: Vec<usize>,
}

impl<'a> RowColumn<'a> {
    /// For the layout of `c.rows` with the row reduction `row` inside.
    pub(super) fn new(plan: &'a KernelPlan, r: &'a ReducePlan, c: &Columns, row: JoinedReduction) -> Self {
        let (vectors, hoisted) = match c.rows {
            // [`rows_per_item()`]: a work-item holds its rows whole, so nothing is shared.
            ColumnRows::RowsPerItem { vectors } => (vectors, Vec::new()),
            // [`group_rows()`]: the per-row values ([`per_row_values`]).
            ColumnRows::GroupRows { vectors_per_item } => (vectors_per_item, per_row_values(plan, r, &row)),
            // [`row_loop()`]: the per-row values with a total over the rows only (that
            // kernel then has a per-row step after the tree anyway; alone, sharing the
            // values in local memory made the step no faster).
            ColumnRows::RowLoop | ColumnRows::Plain => match r.row_total {
                Some(_) => (1, per_row_values(plan, r, &row)),
                None => (1, Vec::new()),
            },
        };
        let operand = match &plan.values[row.value].value {
            Value::Op { args, .. } => args[0],
            _ => row.value,
        };
        let per_row = hoisted
            .iter()
            .copied()
            .chain(r.row_total.map(|t| t.value))
            .collect();
        RowColumn {
            plan,
            r,
            row,
            operand,
            rd: plan.values[operand].dtype,
            rt: vt(row.dtype),
            d: r.in_dtype,
            out: plan.outputs[0].value,
            w: c.width,
            vector: c.width == VECTOR_WIDTH,
            vectors,
            hoisted,
            per_row,
        }
    }

    /// The values of the plan before index `upto` at output `o` of row `k` (variables in
    /// scope): per lane (`v{i}_{lane}`, one vector load per input) in the vector layout,
    /// else single (`v{i}`). Those in `given` are in scope as `h{i}`.
    fn values(&self, v: &mut Values, upto: usize, given: &[usize], src: &mut Src) {
        if self.vector {
            v.lanes(self.r, upto, given, VECTOR_WIDTH, true, src);
        } else {
            v.at_element(self.r, upto, given, src);
        }
    }

    /// This work-item's share of the row reduction after [`RowColumn::values`]: its
    /// elements' values of the operand, combined.
    fn row_share(&self) -> String {
        let value = self.operand;
        if self.vector {
            let lanes: Vec<String> = (0..VECTOR_WIDTH).map(|l| format!("v{value}_{l}")).collect();
            combine_four(self.row.op, self.rd, [&lanes[0], &lanes[1], &lanes[2], &lanes[3]])
        } else {
            format!("v{value}")
        }
    }

    /// The row's result from its combined value `x` (a mean divided by the row length).
    fn row_result(&self, x: &str) -> String {
        let rt = self.rt;
        if self.row.op == ReduceOp::Mean {
            format!("({rt})({x} / ({})n_out)", vt(self.rd))
        } else {
            format!("({rt}){x}")
        }
    }

    /// `rowv`, the row's result from its combined value `x`.
    fn declare_row_result(&self, x: &str, src: &mut Src) {
        src.line(format_args!("const {} rowv = {};", self.rt, self.row_result(x)));
    }

    /// The local buffers of the hoisted values, `slots` each (`hs{i}`).
    fn declare_shared(&self, slots: &str, src: &mut Src) {
        for &i in &self.hoisted {
            src.line(format_args!(
                "__local {} hs{i}[{slots}];",
                vt(self.plan.values[i].dtype)
            ));
        }
    }

    /// The hoisted values `v{i}` of this row stored in slot `at` of their buffers.
    fn share(&self, at: &str, src: &mut Src) {
        for &i in &self.hoisted {
            src.line(format_args!("hs{i}[{at}] = v{i};"));
        }
    }

    /// The hoisted values of slot `at` in scope as `h{i}`.
    fn read_shared(&self, at: &str, src: &mut Src) {
        for &i in &self.hoisted {
            src.line(format_args!(
                "const {} h{i} = hs{i}[{at}];",
                vt(self.plan.values[i].dtype)
            ));
        }
    }

    /// Accumulator `a` takes the column operand's value of output `j` of the vector.
    fn accumulate(&self, a: &str, j: usize) -> String {
        let value = if self.vector {
            format!("v{}_{j}", self.out)
        } else {
            format!("v{}", self.out)
        };
        format!("{a} = {};", combine(self.r.op, self.d, a, &value))
    }

    /// The per-row `values` of row `k` (`rowv` in scope) as `v{i}`: those values and what
    /// they read, short of the row's result.
    fn per_row_text(&self, v: &mut Values, values: &[usize], src: &mut Src) {
        let plan = self.plan;
        let mut needed = vec![false; plan.values.len()];
        let mut stack = values.to_vec();
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut needed[i], true) || i == self.row.value {
                continue;
            }
            if let Value::Op { args, .. } = &plan.values[i].value {
                stack.extend(args.iter().copied());
            }
        }
        src.line(format_args!("const {} o = 0u;", v.ix));
        v.reduce_indices(self.r, src);
        for i in (0..plan.values.len()).filter(|&i| needed[i]) {
            let e = v.expr(i, "fidx", None);
            src.line(format_args!("const {} v{i} = {e};", vt(plan.values[i].dtype)));
        }
    }

    /// Adds this row's value of the reduction over the rows beside (`v{value}` in scope),
    /// where there is one.
    fn total_step(&self, src: &mut Src) {
        if let Some(total) = &self.r.row_total {
            src.line(format_args!(
                "tacc = {};",
                combine(total.op, total.dtype, "tacc", &format!("v{}", total.value))
            ));
        }
    }
}

/// The values of the column operand that depend on the row's result and on nothing that
/// varies along the row (the residual `sigmoid(z) - y` of a gradient, say), where
/// something varying along the row reads them (or the operand is one): computed once per
/// row, not in every work-item of the group.
fn per_row_values(plan: &KernelPlan, r: &ReducePlan, row: &JoinedReduction) -> Vec<usize> {
    let kept = ((1u32 << plan.dims.len()) - 1) & !r.red_mask;
    let n = plan.values.len();
    // (varies with the row at most, depends on the row's result)
    let mut kind = vec![(false, false); n];
    for (i, v) in plan.values.iter().enumerate() {
        kind[i] = match &v.value {
            _ if i == row.value => (true, true),
            Value::Load { slot } => (plan.inputs[*slot].broadcast_mask & kept == kept, false),
            Value::Scalar { .. } => (true, false),
            // (Kernels with views never take a row layout.)
            // (Values computed from their index vary with the element.)
            Value::Inside { .. } | Value::Gather { .. } | Value::FromIndex { .. } => (false, false),
            Value::Op { args, .. } => (args.iter().all(|&a| kind[a].0), args.iter().any(|&a| kind[a].1)),
        };
    }
    let read_along_row =
        |i: usize| {
            i == plan.outputs[0].value
                || plan.values.iter().enumerate().any(|(j, v)| {
                    !kind[j].0 && matches!(&v.value, Value::Op { args, .. } if args.contains(&i))
                })
        };
    (0..n)
        .filter(|&i| i != row.value && kind[i] == (true, true) && read_along_row(i))
        .collect()
}
