//! The generated kernels' parameters, as data: the one list each kernel's signature is
//! declared from, and that exec binds the arguments of a launch by ([`bind`]).

use super::ops::{scalar_arg_type, vt};
use super::writer::Src;
use crate::dtype::DType;
use crate::plan::{Finish, KernelPlan};

/// The name of every generated fused kernel.
pub(crate) const FUSED_KERNEL_NAME: &str = "lazycl_fused";

/// The name of the combine kernel.
pub(crate) const COMBINE_KERNEL_NAME: &str = "lazycl_combine";

/// One parameter of a fused kernel (its name in the kernel after the colon).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Param {
    /// Input buffer `slot` (`in{slot}`): read only, except the result of the reduction a
    /// kernel finishes, which it writes ([`FinishIn`](crate::plan::FinishIn)).
    Input(usize),
    /// Scalar argument `slot` by value (`s{slot}`).
    Scalar(usize),
    /// Output `k` of an elementwise kernel (`out{k}`).
    Output(usize),
    /// An elementwise kernel's element count (`n`).
    Numel,
    /// Collapsed dim `k` (`d{k}_`).
    Dim(usize),
    /// The results of the row reduction computed inside a column reduction (`rowout`).
    RowResult,
    /// A reduction's values: the results with one segment, else the partials
    /// `[o * S + s]` (`outv`).
    Partials,
    /// An arg reduction's indices, like [`Param::Partials`] (`outi`).
    PartialIndices,
    /// A reduction's output count (`n_out_`).
    NOut,
    /// The elements reduced into each output (`n_red_`).
    NRed,
    /// Segments per output (`S_`).
    Segments,
    /// 1 with one segment: the kernel writes the final results (`fin`).
    OneSegment,
    /// The results of a reduction that finishes itself in its last work-group (`finv`).
    Results,
    /// Their indices, for an arg reduction (`fini`).
    ResultIndices,
    /// The queue's counters of finished work-groups per block of outputs (`done`).
    FinishCounters,
    /// The parts of a total over the rows beside a row reduction, one per work-group
    /// (the result itself with one segment; `totv`).
    TotalParts,
    /// That total (`totout`).
    TotalResult,
    /// The queue's counters the total's work-groups count themselves in (`tdone`).
    TotalCounters,
    /// The partials of the split reduction an elementwise kernel finishes (`pv`).
    FinishedPartials,
    /// Its segments per output (`S`).
    FinishedSegments,
    /// Its elements reduced into each output (`n_total`).
    FinishedLength,
}

/// The parameters of the fused kernel of `plan`, in order. Every kernel starts with its
/// inputs and scalars. An elementwise kernel then takes its outputs, its length and the
/// dims (and one finishing a split reduction, that reduction's partials and sizes); a
/// reduction kernel takes its results or partials, sizes and the dims, then the
/// buffers of what it finishes or computes beside.
pub(crate) fn params(plan: &KernelPlan) -> impl Iterator<Item = Param> + '_ {
    use Param::*;
    let reduce = plan.reduce.is_some();
    let outputs = if reduce { 0 } else { plan.outputs.len() };
    let finish_in_kernel = plan.reduce.is_some_and(|r| r.finish == Finish::InKernel);
    (0..plan.inputs.len())
        .map(Input)
        .chain((0..plan.scalars.len()).map(Scalar))
        .chain((0..outputs).map(Output))
        .chain(when(!reduce, [Numel]))
        .chain(when(reduce && plan.row.is_some(), [RowResult]))
        .chain(when(
            reduce,
            [Partials, PartialIndices, NOut, NRed, Segments, OneSegment],
        ))
        .chain((0..plan.dims.len()).map(Dim))
        .chain(when(finish_in_kernel, [Results, ResultIndices, FinishCounters]))
        .chain(when(
            reduce && plan.row_total.is_some(),
            [TotalParts, TotalResult, TotalCounters],
        ))
        .chain(when(
            !reduce && plan.finishes.is_some(),
            [FinishedPartials, FinishedSegments, FinishedLength],
        ))
}

/// `params` where `on`, else none.
fn when<const N: usize>(on: bool, params: [Param; N]) -> impl Iterator<Item = Param> {
    on.then_some(params).into_iter().flatten()
}

/// One parameter of the combine kernel, the second pass of a split reduction (its name
/// in the kernel after the colon).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CombineParam {
    /// The reduction's partials `[o * S + s]` (`pv`).
    Partials,
    /// Their indices, for an arg reduction (`pi`).
    PartialIndices,
    /// The results (`outv`).
    Results,
    /// Their indices (`outi`).
    ResultIndices,
    /// Segments per output (`S`).
    Segments,
    /// The elements reduced into each output (`n_total`).
    NRed,
    /// The output count (`n_out`).
    NOut,
}

/// The parameters of the combine kernel, in order.
pub(crate) const COMBINE_PARAMS: [CombineParam; 7] = [
    CombineParam::Partials,
    CombineParam::PartialIndices,
    CombineParam::Results,
    CombineParam::ResultIndices,
    CombineParam::Segments,
    CombineParam::NRed,
    CombineParam::NOut,
];

/// Sets `args` to the arguments of a launch: one per parameter of `params` ([`params`]
/// of the plan, or [`COMBINE_PARAMS`]), in order, each the one `arg` gives for it (a
/// `KernelArg` in exec). The first error `arg` returns ends
/// the binding and is returned.
pub(crate) fn bind<P, A, E>(
    params: impl IntoIterator<Item = P>,
    args: &mut Vec<A>,
    mut arg: impl FnMut(P) -> Result<A, E>,
) -> Result<(), E> {
    args.clear();
    for p in params {
        args.push(arg(p)?);
    }
    Ok(())
}

/// The declaration of parameter `p` in the kernel of `plan`.
fn declaration(plan: &KernelPlan, p: Param) -> String {
    // The element type of a reduction's values.
    let reduced = || plan.reduce.map_or("", |r| vt(r.in_dtype));
    match p {
        Param::Input(k) => match plan.finishes {
            Some(f) if f.slot == k => format!("__global {}* in{k}", vt(f.dtype)),
            _ => format!("__global const {}* in{k}", vt(plan.inputs[k].dtype)),
        },
        Param::Scalar(k) => format!("const {} s{k}", scalar_arg_type(plan.scalars[k].dtype)),
        Param::Output(k) => format!("__global {}* out{k}", vt(plan.outputs[k].dtype)),
        Param::Numel => "const ulong n".into(),
        Param::Dim(k) => format!("const ulong d{k}_"),
        Param::RowResult => format!("__global {}* rowout", plan.row.map_or("", |row| vt(row.dtype))),
        Param::Partials => format!("__global {}* outv", reduced()),
        Param::PartialIndices => "__global ulong* outi".into(),
        Param::NOut => "const ulong n_out_".into(),
        Param::NRed => "const ulong n_red_".into(),
        Param::Segments => "const ulong S_".into(),
        Param::OneSegment => "const uint fin".into(),
        Param::Results => format!("__global {}* finv", reduced()),
        Param::ResultIndices => "__global ulong* fini".into(),
        Param::FinishCounters => "volatile __global uint* done".into(),
        Param::TotalParts => format!("__global {}* totv", total_type(plan)),
        Param::TotalResult => format!("__global {}* totout", total_type(plan)),
        Param::TotalCounters => "volatile __global uint* tdone".into(),
        Param::FinishedPartials => {
            format!("__global const {}* pv", plan.finishes.map_or("", |f| vt(f.dtype)))
        }
        Param::FinishedSegments => "const ulong S".into(),
        Param::FinishedLength => "const ulong n_total".into(),
    }
}

/// The element type of a total over the rows beside a row reduction.
fn total_type(plan: &KernelPlan) -> &'static str {
    plan.row_total.map_or("", |t| vt(t.dtype))
}

/// The declaration of combine parameter `p` for element type `d`.
fn combine_declaration(p: CombineParam, d: DType) -> String {
    let t = vt(d);
    match p {
        CombineParam::Partials => format!("__global const {t}* pv"),
        CombineParam::PartialIndices => "__global const ulong* pi".into(),
        CombineParam::Results => format!("__global {t}* outv"),
        CombineParam::ResultIndices => "__global ulong* outi".into(),
        CombineParam::Segments => "const ulong S".into(),
        CombineParam::NRed => "const ulong n_total".into(),
        CombineParam::NOut => "const ulong n_out".into(),
    }
}

/// The first line of the fused kernel of `plan`, its parameters declared, after
/// `attributes` (empty, or ` __attribute__((...))`).
pub(super) fn fused_signature(plan: &KernelPlan, attributes: &str) -> String {
    let params: Vec<String> = params(plan).map(|p| declaration(plan, p)).collect();
    format!(
        "__kernel{attributes} void {FUSED_KERNEL_NAME}({}) {{",
        params.join(", ")
    )
}

/// The first line of the combine kernel for element type `d`.
pub(super) fn combine_signature(d: DType) -> String {
    let params: Vec<String> = COMBINE_PARAMS
        .iter()
        .map(|&p| combine_declaration(p, d))
        .collect();
    format!("__kernel void {COMBINE_KERNEL_NAME}({}) {{", params.join(", "))
}

/// The dims as locals of the index type `ix` (`uint` when indices fit in 32 bits), so that
/// index arithmetic in the loops stays 32-bit.
pub(super) fn narrow_dims(rank: usize, ix: &str, src: &mut Src) {
    for k in 0..rank {
        src.line(format_args!("const {ix} d{k} = ({ix})d{k}_;"));
    }
}

#[cfg(test)]
mod tests {
    use super::{bind, params, COMBINE_PARAMS};
    use crate::codegen::{combine_source, fused_source};
    use crate::dtype::{DType, ScalarBits};
    use crate::graph::{BinaryOp, ReduceOp, ReduceSpec};
    use crate::plan::kernel_plan::{Input, Output, PlannedValue, ScalarArg};
    use crate::plan::{
        ColumnRows, Columns, Finish, FinishIn, JoinedReduction, KernelPlan, Layout, OpCode, ReducePlan,
        Value, VectorLoads,
    };

    /// The parameters the kernel of a generated program declares.
    fn declared(source: &str) -> Vec<String> {
        let line = source
            .lines()
            .find(|l| l.starts_with("__kernel"))
            .expect("a kernel");
        let (_, rest) = line.split_once(" void ").expect("a kernel's name");
        let (_, rest) = rest.split_once('(').expect("a parameter list");
        let (list, _) = rest.rsplit_once(") {").expect("the end of the parameter list");
        list.split(", ").map(str::to_string).collect()
    }

    fn op(code: OpCode, args: &[usize]) -> Value {
        Value::Op {
            code,
            args: args.iter().copied().collect(),
        }
    }

    /// `values`, each of element type `dtype`.
    fn typed(dtype: DType, values: Vec<Value>) -> Vec<PlannedValue> {
        values
            .into_iter()
            .map(|value| PlannedValue { value, dtype })
            .collect()
    }

    fn input(dtype: DType, broadcast_mask: u32, node: usize) -> Input {
        Input {
            dtype,
            broadcast_mask,
            node,
        }
    }

    fn output(value: usize, dtype: DType, node: usize) -> Output {
        Output { value, dtype, node }
    }

    /// `out = in0 * in1 + s0` over `[rows, cols]`, `in1` broadcast along the rows.
    fn elementwise() -> KernelPlan {
        let f = DType::F32;
        KernelPlan {
            key: Vec::new(),
            values: typed(
                f,
                vec![
                    Value::Load { slot: 0 },
                    Value::Load { slot: 1 },
                    Value::Scalar { slot: 0 },
                    op(OpCode::Binary(BinaryOp::Mul), &[0, 1]),
                    op(OpCode::Binary(BinaryOp::Add), &[3, 2]),
                ],
            ),
            inputs: vec![input(f, 0, 0), input(f, 1, 1)],
            scalars: vec![ScalarArg {
                dtype: f,
                bits: ScalarBits { bits: 0, size: 4 },
            }],
            outputs: vec![output(4, f, 2)],
            dims: vec![30, 20],
            numel: 600,
            reduce: None,
            group_size: 256,
            narrow_index: true,
            row: None,
            row_total: None,
            finishes: None,
        }
    }

    /// A reduction of `in0 * s0` over the innermost of two dims: lanes, vector loads.
    fn lanes_reduction(finish_in_kernel: bool) -> KernelPlan {
        let f = DType::F32;
        let mut plan = elementwise();
        plan.values = typed(
            f,
            vec![
                Value::Load { slot: 0 },
                Value::Scalar { slot: 0 },
                op(OpCode::Binary(BinaryOp::Mul), &[0, 1]),
            ],
        );
        plan.inputs.truncate(1);
        plan.outputs = vec![output(2, f, 2)];
        plan.reduce = Some(ReducePlan {
            op: ReduceOp::Sum,
            red_mask: 0b10,
            n_out: 30,
            n_red: 20,
            in_dtype: f,
            layout: Layout::Lanes {
                lanes: 32,
                vector: Some(VectorLoads {
                    aligned: true,
                    contiguous: false,
                }),
            },
            segments: 2,
            finish: Finish::of(2, finish_in_kernel),
            compensated: false,
        });
        plan
    }

    /// `(x * x.sum_axis(1)).sum_axis(0)` over `[30, 8]` with the total of the row sums
    /// beside, in `rows`, one of the three layouts of a row reduction inside a column
    /// reduction.
    fn row_column(rows: ColumnRows) -> KernelPlan {
        let f = DType::F32;
        let mut plan = lanes_reduction(false);
        plan.values = typed(
            f,
            vec![
                Value::Load { slot: 0 },
                op(
                    OpCode::Reduce(ReduceSpec {
                        op: ReduceOp::Sum,
                        axes: 0b10,
                    }),
                    &[0],
                ),
                op(OpCode::Binary(BinaryOp::Mul), &[0, 1]),
            ],
        );
        plan.scalars.clear();
        plan.outputs = vec![output(2, f, 2)];
        plan.dims = vec![30, 8];
        if let Some(r) = &mut plan.reduce {
            *r = ReducePlan {
                red_mask: 0b01,
                n_out: 8,
                n_red: 30,
                layout: Layout::Columns(Columns {
                    width: 4,
                    tile: 2,
                    rows,
                }),
                ..*r
            };
        }
        plan.row = Some(JoinedReduction {
            op: ReduceOp::Sum,
            value: 1,
            dtype: f,
            node: 3,
        });
        plan.row_total = Some(JoinedReduction {
            op: ReduceOp::Sum,
            value: 1,
            dtype: f,
            node: 4,
        });
        plan
    }

    /// `in0 + in1` where `in0` is the result of a split reduction finished here.
    fn finishing() -> KernelPlan {
        let f = DType::F32;
        let mut plan = elementwise();
        plan.values = typed(
            f,
            vec![
                Value::Load { slot: 0 },
                Value::Load { slot: 1 },
                op(OpCode::Binary(BinaryOp::Add), &[0, 1]),
            ],
        );
        plan.inputs[1].broadcast_mask = 0;
        plan.scalars.clear();
        plan.outputs = vec![output(2, f, 2)];
        plan.dims = vec![600];
        plan.finishes = Some(FinishIn {
            slot: 0,
            op: ReduceOp::Mean,
            dtype: f,
            lanes: 4,
            group: 256,
        });
        plan
    }

    /// Every kernel declares exactly the parameters [`params`] lists, which [`bind`] binds
    /// one argument each.
    #[test]
    fn kernels_declare_the_listed_parameters() {
        let plans = [
            elementwise(),
            finishing(),
            lanes_reduction(false),
            lanes_reduction(true),
            row_column(ColumnRows::RowLoop),
            row_column(ColumnRows::RowsPerItem { vectors: 2 }),
            row_column(ColumnRows::GroupRows { vectors_per_item: 1 }),
        ];
        let mut args = Vec::new();
        for plan in &plans {
            let source = fused_source(plan);
            let declared = declared(&source);
            assert_eq!(declared.len(), params(plan).count(), "{source}");
            bind(params(plan), &mut args, Ok::<_, ()>).unwrap();
            assert_eq!(args, params(plan).collect::<Vec<_>>());
        }
        // The plans take the layouts they are for.
        let sources: Vec<String> = plans.iter().map(fused_source).collect();
        assert!(sources[4].contains("while (p2 < per_row)"), "the row loop");
        assert!(sources[5].contains("float rowv;"), "rows per work-item");
        assert!(sources[6].contains("reqd_work_group_size"), "rows per work-group");
        // The reduction kernels end with what they finish or compute beside.
        let finished = declared(&fused_source(&plans[3]));
        assert!(finished.ends_with(&[
            "__global float* finv".into(),
            "__global ulong* fini".into(),
            "volatile __global uint* done".into()
        ]));
        let total = declared(&fused_source(&plans[4]));
        assert!(total.last().is_some_and(|p| p.ends_with("tdone")));
        assert!(declared(&fused_source(&plans[1])).contains(&"__global float* in0".into()));
        let combine = combine_source(ReduceOp::ArgMax, DType::F64, 256, 8);
        assert_eq!(declared(&combine).len(), COMBINE_PARAMS.len());
    }
}
