//! Unit tests of the kernel parameter list: every kernel declares exactly the
//! parameters `params` lists, for plans of each kind and layout. No device.
use super::{bind, combine_params, params};
use crate::codegen::combine_source;
use crate::dtype::DType;
use crate::graph::{BinaryOp, ReduceOp, ReduceSpec, TernaryOp};
use crate::plan::access::{Affine, Bound};
use crate::plan::kernel_plan::{Input, Inside, KernelKind, Output, PlannedValue, ScalarArg, ScalarValue};
use crate::plan::{
    ColumnRows, Columns, Finish, FinishIn, JoinedReduction, KernelPlan, Layout, OpCode, ReducePlan, Value,
    VectorLoads,
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
        .map(|value| PlannedValue {
            value,
            dtype,
            in_branch: false,
        })
        .collect()
}

fn input(dtype: DType, broadcast_mask: u32, node: usize) -> Input {
    Input {
        dtype,
        broadcast_mask,
        node,
        strided: None,
    }
}

fn output(value: usize, dtype: DType, node: usize) -> Output {
    Output {
        value,
        dtype,
        node,
        store: None,
        scatter: None,
    }
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
            value: ScalarValue::Node(3),
        }],
        outputs: vec![output(4, f, 2)],
        dims: vec![30, 20],
        numel: 600,
        kind: KernelKind::Elementwise,
        group_size: 256,
        narrow_index: true,
        insides: Vec::new(),
        index_reads: Vec::new(),
        narrow_offsets: false,
        broken: None,
        stored: None,
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
    plan.kind = KernelKind::Reduction(ReducePlan {
        op: ReduceOp::Sum,
        red_mask: 0b10,
        n_out: 30,
        n_red: 20,
        in_dtype: f,
        layout: Layout::Lanes {
            lanes: 32,
            vector: Some(VectorLoads {
                width: crate::layout::VECTOR_WIDTH,
                aligned: true,
                contiguous: false,
            }),
        },
        segments: 2,
        finish: Finish::of(2, finish_in_kernel),
        compensated: false,
        row: None,
        row_total: None,
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
    if let KernelKind::Reduction(r) = &mut plan.kind {
        *r = ReducePlan {
            red_mask: 0b01,
            n_out: 8,
            n_red: 30,
            layout: Layout::Columns(Columns {
                width: 4,
                tile: 2,
                rows,
            }),
            row: Some(JoinedReduction {
                op: ReduceOp::Sum,
                value: 1,
                dtype: f,
                node: 3,
            }),
            row_total: Some(JoinedReduction {
                op: ReduceOp::Sum,
                value: 1,
                dtype: f,
                node: 4,
            }),
            ..*r
        };
    }
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
    plan.kind = KernelKind::Finishing(FinishIn {
        slot: 0,
        op: ReduceOp::Mean,
        dtype: f,
        lanes: 4,
        group: 256,
    });
    plan
}

/// `elementwise` reading `in0` through a view (guarded on dim 1) and picking between
/// it and `in1` by a box test, stored into a region; `tiled` when the view is a
/// transposed read (stride 1 along dim 0) staged through local memory.
fn views(tiled: bool) -> KernelPlan {
    let f = DType::F32;
    let mut plan = elementwise();
    let bound = Bound {
        axis: 1,
        lo: 2,
        hi: 9,
    };
    let stride: smallvec::SmallVec<[i64; 4]> = if tiled {
        smallvec::smallvec![1, 30]
    } else {
        smallvec::smallvec![40, 1]
    };
    plan.inputs[0].strided = Some(Affine {
        base: 3,
        stride,
        bounds: if tiled {
            smallvec::smallvec![]
        } else {
            smallvec::smallvec![bound]
        },
    });
    plan.insides = vec![Inside {
        bounds: smallvec::smallvec![bound],
    }];
    plan.values = typed(
        f,
        vec![
            Value::Load { slot: 0 },
            Value::Load { slot: 1 },
            Value::Inside { slot: 0 },
            op(OpCode::Ternary(TernaryOp::Select), &[2, 0, 1]),
        ],
    );
    plan.values[2].dtype = DType::Bool;
    plan.scalars.clear();
    plan.outputs = vec![output(3, f, 2)];
    if tiled {
        plan.kind = KernelKind::Tiled;
    } else {
        plan.outputs[0].store = Some(Affine {
            base: 7,
            stride: smallvec::smallvec![50, 2],
            bounds: smallvec::smallvec![],
        });
    }
    plan
}

/// `views(tiled)` plus uniform random numbers read at `index` (the kernel's own where
/// `None`), from the `u64` scalars seed and offset.
fn random(tiled: bool, index: Option<Affine>) -> KernelPlan {
    let mut plan = views(tiled);
    let u = DType::U64;
    plan.scalars = vec![
        ScalarArg {
            dtype: u,
            value: ScalarValue::Node(5),
        },
        ScalarArg {
            dtype: u,
            value: ScalarValue::Node(6),
        },
    ];
    plan.values.extend(typed(
        u,
        vec![Value::Scalar { slot: 0 }, Value::Scalar { slot: 1 }],
    ));
    plan.values.extend(typed(
        DType::F32,
        vec![
            Value::FromIndex {
                slot: 0,
                of: crate::graph::IndexFn::Random(crate::dtype::Draw::Uniform),
                args: smallvec::smallvec![4, 5],
            },
            op(OpCode::Binary(BinaryOp::Add), &[3, 6]),
        ],
    ));
    plan.index_reads = vec![crate::plan::kernel_plan::IndexRead { index }];
    plan.outputs[0].value = 7;
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
        views(false),
        views(true),
        random(false, None),
        random(true, None),
        random(
            false,
            Some(Affine {
                base: 5,
                stride: smallvec::smallvec![-1, 30],
                bounds: smallvec::smallvec![],
            }),
        ),
    ];
    // (Every plan here has its source: none is a GEMM waiting for its tile.)
    let fused_source = |p: &KernelPlan| crate::codegen::fused_source(p).unwrap_or_default();
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
    // The reduction kernels end with what they finish or compute beside; indices travel
    // beside the values of arg reductions only.
    let finished = declared(&fused_source(&plans[3]));
    assert!(finished.ends_with(&[
        "__global float* finv".into(),
        "volatile __global uint* done".into()
    ]));
    assert!(
        !finished
            .iter()
            .any(|p| p.ends_with("outi") || p.ends_with("fini")),
        "{finished:?}"
    );
    let mut arg = lanes_reduction(true);
    if let KernelKind::Reduction(r) = &mut arg.kind {
        r.op = ReduceOp::ArgMax;
    }
    let arg_source = fused_source(&arg);
    let declared_arg = declared(&arg_source);
    assert_eq!(declared_arg.len(), params(&arg).count(), "{arg_source}");
    assert!(
        declared_arg.contains(&"__global uint* outi".into()),
        "{declared_arg:?}"
    );
    assert!(declared_arg.ends_with(&[
        "__global uint* fini".into(),
        "volatile __global uint* done".into()
    ]));
    let total = declared(&fused_source(&plans[4]));
    assert!(total.last().is_some_and(|p| p.ends_with("tdone")));
    assert!(declared(&fused_source(&plans[1])).contains(&"__global float* in0".into()));
    // Views add their offsets, strides and bounds after the scalars, and no stride
    // argument for a unit innermost stride.
    let view = declared(&sources[7]);
    for p in [
        "const long ob0",
        "const long os0_0",
        "const long lb0_0",
        "const long ub0_0",
    ] {
        assert!(view.contains(&p.to_string()), "{p}: {}", sources[7]);
    }
    assert!(!view.contains(&"const long os0_1".to_string()), "unit stride");
    assert!(
        sources[7].contains("oos0_0") && sources[7].contains("rl0_0"),
        "{}",
        sources[7]
    );
    assert!(sources[8].contains("__local float t0[32][33]"), "{}", sources[8]);
    // Random numbers: no argument at the kernel's own index, an offset and strides at
    // one of their own; Philox's helpers once.
    assert!(!declared(&sources[9]).iter().any(|p| p.contains("rb0")));
    let strided = declared(&sources[11]);
    for p in ["const long rb0", "const long rs0_0", "const long rs0_1"] {
        assert!(strided.contains(&p.to_string()), "{p}: {}", sources[11]);
    }
    for source in &sources[9..] {
        assert_eq!(source.matches("uint4 lzc_philox4x32_10(").count(), 1, "{source}");
    }
    for op in [ReduceOp::ArgMax, ReduceOp::Sum] {
        let combine = combine_source(op, DType::F64, 256, 8);
        assert_eq!(declared(&combine).len(), combine_params(op).len(), "{combine}");
        assert_eq!(combine.contains("uint* pi"), op.is_arg(), "{combine}");
    }
}
