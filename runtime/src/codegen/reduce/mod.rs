//! Reduction kernels: the fused elementwise cone is evaluated per element and combined.
//! What a kernel's text follows is decided first ([`Reduction`], with its [`Body`]);
//! then the header, the layout's body, and what the layout finishes or computes beside
//! are printed, in that order.

mod column;
mod combine;
mod finish;
mod lanes;
mod serial;

pub(crate) use combine::combine_source;

use super::abi::{fused_signature, narrow_dims};
use super::accumulators::{store_arg_partial, store_partial, take};
use super::ops::{combine_pairwise, identity, vt};
use super::row_column::{self, RowColumn};
use super::values::Values;
use super::writer::Src;
use crate::dtype::DType;
use crate::plan::{ColumnRows, Columns, Finish, KernelPlan, Layout, ReducePlan, VectorLoads};

/// The body a reduction kernel's layout ([`Layout`]) prints, with what it prints from.
enum Body<'a> {
    /// A column reduction with a row reduction inside whose rows are short: one work-item
    /// reads whole rows ([`row_column::rows_per_item`]).
    RowsPerItem(RowColumn<'a>),
    /// A column reduction with a row reduction inside whose rows a whole work-group
    /// shares ([`row_column::group_rows`]).
    GroupRows(RowColumn<'a>),
    /// Work-groups stream whole rows ([`column::column_layout`]), with a row reduction
    /// inside computed by a row of work-items per row ([`row_column::row_loop`]).
    Columns(Columns, Option<RowColumn<'a>>),
    /// The innermost dim is kept: one work-item per (output, segment) pair, looping
    /// serially ([`serial::serial_layout`]).
    Serial,
    /// Lanes of a work-group cooperate on each output ([`lanes::lanes_layout`]).
    Lanes { lanes: u32, vector: Option<VectorLoads> },
}

/// The choices a reduction kernel's text follows, made before any of it is printed.
struct Reduction<'a> {
    plan: &'a KernelPlan,
    r: &'a ReducePlan,
    /// The index type.
    ix: &'static str,
    /// The reduced values' element type, and its name.
    d: DType,
    t: &'static str,
    /// The value reduced (the plan's output).
    out: usize,
    /// An arg reduction: each accumulator tracks the index of its best value.
    arg: bool,
    /// Float sums carry a Kahan compensation ([`ReducePlan::compensated`]).
    kahan: bool,
    /// The last work-group finishes the reduction ([`Finish::InKernel`]).
    finishes_itself: bool,
    body: Body<'a>,
}

impl<'a> Reduction<'a> {
    fn new(plan: &'a KernelPlan, r: &'a ReducePlan, ix: &'static str) -> Self {
        let body = match r.layout {
            Layout::Lanes { lanes, vector } => Body::Lanes { lanes, vector },
            Layout::Serial => Body::Serial,
            Layout::Columns(c) => {
                let rows = r.row.map(|row| RowColumn::new(plan, r, &c, row));
                match (c.rows, rows) {
                    (ColumnRows::RowsPerItem { .. }, Some(rows)) => Body::RowsPerItem(rows),
                    (ColumnRows::GroupRows { .. }, Some(rows)) => Body::GroupRows(rows),
                    (_, rows) => Body::Columns(c, rows),
                }
            }
        };
        Reduction {
            plan,
            r,
            ix,
            d: r.in_dtype,
            t: vt(r.in_dtype),
            out: plan.outputs[0].value,
            arg: r.op.is_arg(),
            kahan: r.compensated,
            finishes_itself: r.finish == Finish::InKernel,
            body,
        }
    }

    /// One accumulation step of value `v` found at reduced index `k` into accumulator
    /// `acc{x}` (with its compensation `comp{x}` and arg index `acci{x}`).
    fn step_into(&self, v: &str, k: &str, x: &str) -> String {
        let (a, c, ai) = (format!("acc{x}"), format!("comp{x}"), format!("acci{x}"));
        if self.kahan && !self.arg {
            let t = self.t;
            format!("{{ const {t} y = {v} - {c}; const {t} tt = {a} + y; {c} = (tt - {a}) - y; {a} = tt; }}")
        } else {
            take(self.r.op, self.d, (&a, &ai), (v, k))
        }
    }

    /// [`Reduction::step_into`] the work-item's one accumulator `acc`.
    fn step(&self, v: &str, k: &str) -> String {
        self.step_into(v, k, "")
    }

    /// Accumulator `acc{x}` stored as the result or partial `[at]`.
    fn store(&self, x: &str, at: &str) -> String {
        if self.arg {
            store_arg_partial(&format!("acc{x}"), &format!("acci{x}"), at)
        } else {
            store_partial(self.r.op, self.t, &format!("acc{x}"), at)
        }
    }

    /// Reduced element `k`: its values, and the step that takes the reduced one.
    fn element_step(&self, v: &mut Values, src: &mut Src) {
        v.at_element(self.r, self.plan.values.len(), &[], src);
        src.line(self.step(&format!("v{}", self.out), "k"));
    }

    /// Reduced elements `k .. k + w` (see [`Values::lanes`]), and the steps that take
    /// them: one per lane for an arg reduction; else the `w` values combined pairwise
    /// first, one accumulation step (and one compensation) per vector, and a shorter
    /// dependency chain.
    fn vector_step(&self, v: &mut Values, w: usize, aligned: bool, src: &mut Src) {
        let out = self.out;
        v.lanes(self.r, self.plan.values.len(), &[], w, aligned, src);
        if self.arg {
            for lane in 0..w {
                src.line(self.step(&format!("v{out}_{lane}"), &format!("(k + {lane})")));
            }
        } else {
            let lanes: Vec<String> = (0..w).map(|l| format!("v{out}_{l}")).collect();
            let quad = combine_pairwise(self.r.op, self.d, &lanes);
            src.line(format_args!("const {} quad = {quad};", self.t));
            src.line(self.step("quad", "k"));
        }
    }

    /// The kernel's first line and the locals every layout starts from: the sizes and
    /// dims in the index type, the accumulator (with compensation and arg index), and
    /// that of a total over the rows beside.
    fn header(&self, src: &mut Src) {
        let (plan, ix, t) = (self.plan, self.ix, self.t);
        // A group size the layout's source is written for is declared, so that the
        // compiler fits its registers to it (NVIDIA would otherwise refuse a large group).
        let required = if matches!(self.body, Body::GroupRows(_)) {
            format!(
                " __attribute__((reqd_work_group_size({}, 1, 1)))",
                plan.group_size
            )
        } else {
            String::new()
        };
        src.open(fused_signature(plan, &required));
        src.line(format_args!(
            "const {ix} n_out = ({ix})n_out_, n_red = ({ix})n_red_, S = ({ix})S_;"
        ));
        narrow_dims(plan.dims.len(), ix, src);
        src.line(format_args!(
            "{t} acc = {}; {t} comp = ({t})0; uint acci = NONE;",
            identity(self.r.op, self.d)
        ));
        src.line("(void)comp; (void)acci;");
        if let Some(total) = &self.r.row_total {
            src.line(format_args!(
                "{} tacc = {};",
                vt(total.dtype),
                identity(total.op, total.dtype)
            ));
        }
    }
}

/// The program of a reduction plan.
///
/// In the lanes layout a work-group of `G` work-items handles `G / lanes` outputs; the
/// lanes of one output stride over its segment and combine in local memory. When the only
/// reduced dim is the innermost one, each lane takes [`VectorLoads::width`] neighbouring
/// elements per step with vector loads. In the others the innermost dim is kept: when it
/// is the only kept dim, the column layout streams whole rows; otherwise each work-item
/// owns one (output, segment) pair and loops serially, so neighbouring work-items read
/// neighbouring addresses (four reduced elements per step, so that several loads are in
/// flight per work-item). Each output's elements are split into `S` segments (a run-time
/// argument); with `S > 1` this kernel writes partial results, which the combine kernel
/// (or the kernel reading the result) finishes, or ([`Finish::InKernel`]) the last
/// work-group of each block ([`finish`]). Float sums are compensated (Kahan) in the
/// per-work-item loops when those are long ([`ReducePlan::compensated`]).
pub(super) fn reduce_source(plan: &KernelPlan, r: &ReducePlan) -> String {
    let mut v = Values::new(plan);
    let red = Reduction::new(plan, r, v.ix);
    let mut src = Src::at(0);
    src.text(&v.prelude());
    src.line("#define NONE UINT_MAX");
    red.header(&mut src);
    match &red.body {
        Body::RowsPerItem(rows) => row_column::rows_per_item(rows, &mut v, &mut src),
        Body::GroupRows(rows) => row_column::group_rows(rows, &mut v, &mut src),
        Body::Columns(c, rows) => column::column_layout(&red, c, rows.as_ref(), &mut v, &mut src),
        Body::Serial => serial::serial_layout(&red, &mut v, &mut src),
        &Body::Lanes { lanes, vector } => lanes::lanes_layout(&red, lanes, vector, &mut v, &mut src),
    }
    // (`fit` finishes only these two layouts in their kernels.)
    match &red.body {
        &Body::Lanes { lanes, .. } if red.finishes_itself => finish::lanes_finish(&red, lanes, &mut src),
        Body::Columns(c, _) if red.finishes_itself => finish::column_finish(&red, c.width, &mut src),
        _ => {}
    }
    // The layouts that take a reduction over the rows beside their row reduction end
    // with that reduction's end.
    if let (Some(total), Body::RowsPerItem(_) | Body::GroupRows(_) | Body::Columns(..)) =
        (&red.r.row_total, &red.body)
    {
        row_column::row_total_end(plan, total, red.ix, &mut src);
    }
    src.close();
    src.into_string()
}
