//! Op rendering: the OpenCL C expression of each value of a plan (unary, binary and
//! ternary ops, casts, `expr!` templates), the helper functions some of them call, and the
//! algebra of the reductions (neutral elements, combining, arg comparisons).
//!
//! Where OpenCL C and Rust differ, the generated code follows Rust where that is cheap:
//! signed `+ - *` wrap (computed in unsigned arithmetic), integer division and remainder
//! by zero give 0 instead of trapping (Rust panics; a trap would kill a CPU device),
//! `i32::MIN / -1` wraps, float-to-int casts saturate with NaN giving 0 (Rust's `as`),
//! `%` on floats is `fmod` (Rust's `%`), `min`/`max` ignore a NaN operand, `signum`
//! and `clamp` keep NaN. The snippets and helper functions for these (`lzc_div_int`, ...)
//! come from `lazycl-clc`, which the macros use too: an `expr!` template inside a kernel
//! calls the same helpers, defined once.

use lazycl_clc as clc;

pub(super) use super::helpers::{vt, Helpers};
use crate::dtype::DType;
use crate::graph::{BinaryOp, ReduceOp, TernaryOp, UnaryOp};
use crate::plan::{KernelPlan, OpCode, Value};

/// Every helper the values of `plan` call: a program declares all of them, whichever of
/// the values its layout prints.
pub(super) fn helpers_of(plan: &KernelPlan) -> Helpers {
    let mut helpers = Helpers::default();
    // The complex product that reductions combine with (`combine`).
    for d in [DType::C32, DType::C64] {
        if plan.values.iter().any(|v| v.dtype == d) {
            helpers.call(clc::complex::mul(d), &[]);
        }
    }
    for i in 0..plan.values.len() {
        value_expr(plan, i, "", None, &mut helpers);
    }
    // What the outputs' stores call (rounding to `bf16`), one element or a vector.
    for o in plan.outputs.iter().filter(|o| o.dtype.is_stored_narrow()) {
        clc::store(o.dtype, "out", "0", "0", &mut helpers);
        for w in [crate::layout::VECTOR_WIDTH, plan.vector_width()] {
            clc::vector_store(o.dtype, w, "out", clc::VectorAt::Element("0"), "0", &mut helpers);
        }
    }
    helpers
}

/// Expression text for one value; `full` is the linear index of a load with no broadcast.
///
/// With `lane = Some(l)` the value is lane `l` of a vectorized iteration: operands are
/// `v{i}_{l}` and full loads read component `l` of the vector `L{slot}` loaded before.
// Long: one arm per kind of value, and per operation within `Value::Op`; splitting it
// would scatter the one list of what each value prints as.
pub(super) fn value_expr(
    plan: &KernelPlan,
    idx: usize,
    full: &str,
    lane: Option<usize>,
    helpers: &mut Helpers,
) -> String {
    let (value, dtype) = (&plan.values[idx].value, plan.values[idx].dtype);
    let t = vt(dtype);
    let sfx = lane.map_or(String::new(), |l| format!("_{l}"));
    match value {
        Value::Load { slot } => {
            let slot = *slot;
            let mask = plan.inputs[slot].broadcast_mask;
            if let Some(a) = &plan.inputs[slot].strided {
                super::views::load(plan, slot, a, t, lane)
            } else if mask == 0 {
                match lane {
                    Some(l) => dtype.lane(&format!("L{slot}"), l),
                    None => clc::load(dtype, &format!("in{slot}"), full),
                }
            } else {
                clc::load(dtype, &format!("in{slot}"), &load_index(mask, plan.dims.len()))
            }
        }
        Value::Inside { slot } => super::views::inside(plan, *slot, lane),
        // (A vector step's lanes at the kernel's own index share the blocks of
        // `from_index::blocks`, printed before them.)
        Value::FromIndex { slot, .. } => match (&plan.index_reads[*slot].index, lane) {
            (Some(a), _) => {
                let at = super::views::read_index(plan, *slot, a, lane);
                super::from_index::at_index(plan, idx, &at, &sfx, helpers)
            }
            (None, None) => super::from_index::at_index(plan, idx, full, &sfx, helpers),
            (None, Some(l)) => super::from_index::from_block(plan, idx, l, helpers),
        },
        Value::Gather {
            slot, index, search, ..
        } => {
            let index_type = plan.values[*index].dtype;
            let index = match plan.values[*index].in_branch {
                true => format!("({})", value_expr(plan, *index, full, lane, helpers)),
                false => format!("v{index}{sfx}"),
            };
            match (&plan.inputs[*slot].strided, search) {
                (Some(a), Some(side)) => super::views::search(plan, *slot, a, lane, &index, *side, helpers),
                (Some(a), None) => super::views::gather(plan, *slot, a, t, lane, &index, index_type),
                (None, _) => format!("/* a gather without its offset */ ({t})0"),
            }
        }
        Value::Scalar { slot } => match dtype {
            DType::Bool => format!("(uchar)(s{slot} != 0u)"),
            _ => format!("s{slot}"),
        },
        // A GEMM epilogue's product: the accumulator of the element at hand; a scan
        // epilogue's: the scanned element.
        Value::Op {
            code: OpCode::MatMul, ..
        } => "prod".to_string(),
        Value::Op {
            code: OpCode::Scan(_) | OpCode::Fft(_),
            ..
        } => "scanned".to_string(),
        Value::Op { code, args, .. } => {
            // (A load read only in a branch is printed there: see `PlannedValue::in_branch`.)
            let operands: Vec<String> = args
                .iter()
                .map(|&v| match plan.values[v].in_branch {
                    true => format!("({})", value_expr(plan, v, full, lane, helpers)),
                    false => format!("v{v}{sfx}"),
                })
                .collect();
            let operand = |k: usize| operands.get(k).cloned().unwrap_or_default();
            let (a, b, c) = (operand(0), operand(1), operand(2));
            let ad = plan.values[args[0]].dtype;
            let bd = args.get(1).map_or(ad, |&v| plan.values[v].dtype);
            match *code {
                // A row reduction computed inside a column reduction: this row's result.
                OpCode::Reduce(_) => "rowv".to_string(),
                OpCode::Expr(id) => expr_text(plan, id, args, &sfx, dtype, helpers),
                OpCode::Unary(u) if ad.is_complex() => super::complex::unary(u, dtype, ad, &a, helpers),
                OpCode::Binary(op) if ad.is_complex() || bd.is_complex() || dtype.is_complex() => {
                    super::complex::binary(op, [ad, bd], dtype, [&a, &b], helpers)
                }
                OpCode::Unary(u) => unary_expr(u, dtype, ad, &a, helpers),
                OpCode::Binary(op) => binary_expr(op, dtype, &a, &b, helpers),
                OpCode::Ternary(TernaryOp::Select) => format!("({a} ? {b} : {c})"),
                OpCode::Ternary(TernaryOp::MulAdd) if dtype.is_float() => format!("fma({a}, {b}, {c})"),
                OpCode::Ternary(TernaryOp::MulAdd) => {
                    let u = dtype.cl_unsigned();
                    clc::from_unsigned(dtype, &format!("(({u}){a} * ({u}){b} + ({u}){c})"))
                }
                OpCode::Ternary(TernaryOp::Clamp) => helpers.call(clc::clamp(dtype), &[&a, &b, &c]),
                // Views, reshapes and regions are no values of their own (planning folds
                // them into loads and box tests).
                OpCode::View
                | OpCode::Reshape
                | OpCode::Region
                | OpCode::MatMul
                | OpCode::Scan(_)
                | OpCode::Fft(_)
                | OpCode::Take(_)
                | OpCode::FromIndex(_) => {
                    format!("/* {code:?} */ {a}")
                }
            }
        }
    }
}

fn unary_expr(op: UnaryOp, dtype: DType, from: DType, a: &str, helpers: &mut Helpers) -> String {
    let float = dtype.is_float();
    match op {
        UnaryOp::Neg if float => format!("(-{a})"),
        UnaryOp::Neg => clc::wrapping_neg(dtype, a),
        UnaryOp::Not if dtype == DType::Bool => format!("(uchar)(!{a})"),
        UnaryOp::Not if dtype.size() < 4 => format!("(({})~{a})", vt(dtype)),
        UnaryOp::Not => format!("(~{a})"),
        UnaryOp::Sqrt => format!("sqrt({a})"),
        UnaryOp::Exp => format!("exp({a})"),
        UnaryOp::Exp2 => format!("exp2({a})"),
        UnaryOp::Ln => format!("log({a})"),
        UnaryOp::Log2 => format!("log2({a})"),
        UnaryOp::Log10 => format!("log10({a})"),
        UnaryOp::Sin => format!("sin({a})"),
        UnaryOp::Cos => format!("cos({a})"),
        UnaryOp::Tan => format!("tan({a})"),
        UnaryOp::Tanh => format!("tanh({a})"),
        UnaryOp::Asin => format!("asin({a})"),
        UnaryOp::Acos => format!("acos({a})"),
        UnaryOp::Atan => format!("atan({a})"),
        UnaryOp::Sinh => format!("sinh({a})"),
        UnaryOp::Cosh => format!("cosh({a})"),
        UnaryOp::Asinh => format!("asinh({a})"),
        UnaryOp::Acosh => format!("acosh({a})"),
        UnaryOp::Atanh => format!("atanh({a})"),
        UnaryOp::Cbrt => format!("cbrt({a})"),
        UnaryOp::Erf => format!("erf({a})"),
        UnaryOp::Erfc => format!("erfc({a})"),
        UnaryOp::Ln1p => format!("log1p({a})"),
        UnaryOp::ExpM1 => format!("expm1({a})"),
        UnaryOp::Lgamma => format!("lgamma({a})"),
        UnaryOp::Tgamma => format!("tgamma({a})"),
        UnaryOp::Abs if float => format!("fabs({a})"),
        UnaryOp::Abs if dtype.is_signed() => clc::wrapping_abs(dtype, a),
        UnaryOp::Abs => a.to_string(),
        UnaryOp::Floor if float => format!("floor({a})"),
        UnaryOp::Ceil if float => format!("ceil({a})"),
        UnaryOp::Round if float => format!("round({a})"),
        UnaryOp::Trunc if float => format!("trunc({a})"),
        UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round | UnaryOp::Trunc => a.to_string(),
        UnaryOp::Signum => helpers.call(clc::signum(dtype), &[a]),
        UnaryOp::Cast => cast_expr(from, dtype, a, helpers),
        // (Only complex operands have parts: `complex::unary`.)
        UnaryOp::Conj | UnaryOp::Re => a.to_string(),
        UnaryOp::Im | UnaryOp::Arg => format!("(({})0)", vt(dtype)),
        UnaryOp::NormSqr => format!("({a} * {a})"),
    }
}

/// Rust `as` semantics: a float to an integer saturates (NaN to 0), an integer to a
/// narrower one keeps the low bits, and anything to a 16-bit float rounds once to the
/// nearest (ties to even).
pub(super) fn cast_expr(from: DType, to: DType, a: &str, helpers: &mut Helpers) -> String {
    let t = vt(to);
    if from == to {
        a.to_string()
    } else if to.is_complex() {
        super::complex::cast(from, to, a)
    } else if to == DType::Bool {
        format!("(uchar)({a} != 0)")
    } else if let Some(rounded) = clc::cast_to_narrow(from, to, a, helpers) {
        rounded
    } else if from.is_float() && to.is_int() {
        helpers.call(clc::int_from_float(to, from), &[a])
    } else if to.is_signed_int() && to.size() < 4 && from.size() >= to.size() && from != DType::Bool {
        // (C's conversion of an out-of-range value to a signed type is the
        // implementation's: narrowed unsigned, then reinterpreted.)
        clc::from_unsigned(to, a)
    } else {
        format!("({t}){a}")
    }
}

fn binary_expr(op: BinaryOp, dtype: DType, a: &str, b: &str, helpers: &mut Helpers) -> String {
    let float = dtype.is_float();
    let wrapping = |sym: &str| {
        if dtype.is_signed_int() || (dtype.is_int() && dtype.size() < 4) {
            clc::wrapping(dtype, sym, a, b)
        } else {
            format!("({a} {sym} {b})")
        }
    };
    match op {
        BinaryOp::Add => wrapping("+"),
        BinaryOp::Sub => wrapping("-"),
        BinaryOp::Mul => wrapping("*"),
        BinaryOp::Div if float => format!("({a} / {b})"),
        BinaryOp::Div => helpers.call(clc::div(dtype), &[a, b]),
        BinaryOp::Rem if float => format!("fmod({a}, {b})"),
        BinaryOp::Rem => helpers.call(clc::rem(dtype), &[a, b]),
        BinaryOp::Min if float => format!("fmin({a}, {b})"),
        BinaryOp::Max if float => format!("fmax({a}, {b})"),
        BinaryOp::Min => format!("min({a}, {b})"),
        BinaryOp::Max => format!("max({a}, {b})"),
        BinaryOp::Pow if float => format!("pow({a}, {b})"),
        BinaryOp::Pow => helpers.call(clc::pow(dtype), &[a, &format!("(uint){b}")]),
        BinaryOp::PowI => format!("pown({a}, (int){b})"),
        BinaryOp::Atan2 => format!("atan2({a}, {b})"),
        BinaryOp::Hypot => format!("hypot({a}, {b})"),
        BinaryOp::BitAnd => format!("({a} & {b})"),
        BinaryOp::BitOr => format!("({a} | {b})"),
        BinaryOp::BitXor => format!("({a} ^ {b})"),
        BinaryOp::Lt => format!("(uchar)({a} < {b})"),
        BinaryOp::Le => format!("(uchar)({a} <= {b})"),
        BinaryOp::Gt => format!("(uchar)({a} > {b})"),
        BinaryOp::Ge => format!("(uchar)({a} >= {b})"),
        BinaryOp::Eq => format!("(uchar)({a} == {b})"),
        BinaryOp::Ne => format!("(uchar)({a} != {b})"),
        // (Complex results are `complex::binary`'s.)
        BinaryOp::Complex => a.to_string(),
    }
}

/// The text of an `expr!` node: its template with operands, their types and the result
/// type filled in.
fn expr_text(
    plan: &KernelPlan,
    id: u32,
    args: &[usize],
    sfx: &str,
    dtype: DType,
    helpers: &mut Helpers,
) -> String {
    let Some(t) = crate::graph::template::template(id) else {
        return "/* unknown expr! template */ 0".into();
    };
    helpers.include(t.helpers);
    let values: Vec<String> = args.iter().map(|a| format!("v{a}{sfx}")).collect();
    let types: Vec<&str> = args.iter().map(|&a| vt(plan.values[a].dtype)).collect();
    match crate::graph::template::instantiate(t.text, &values, &types, vt(dtype)) {
        Ok(text) => format!("(({})({text}))", vt(dtype)),
        Err(e) => format!("/* {e} */ 0"),
    }
}

/// The linear index of a load with broadcast `mask` over `rank` collapsed dims.
pub(super) fn load_index(mask: u32, rank: usize) -> String {
    let mut idx = String::new();
    for k in (0..rank).filter(|k| mask & (1 << k) == 0) {
        idx = if idx.is_empty() {
            format!("i{k}")
        } else {
            format!("({idx}) * d{k} + i{k}")
        };
    }
    if idx.is_empty() {
        "0".into()
    } else {
        idx
    }
}

/// The neutral element of a reduction in type `d`.
pub(super) fn identity(op: ReduceOp, d: DType) -> String {
    let t = vt(d);
    let (lo, hi) = match d {
        DType::F32 | DType::F64 | DType::F16 | DType::BF16 => {
            (format!("(({t})-INFINITY)"), format!("(({t})INFINITY)"))
        }
        DType::I8 => ("(char)CHAR_MIN".into(), "(char)CHAR_MAX".into()),
        DType::U8 => ("(uchar)0".into(), "(uchar)UCHAR_MAX".into()),
        DType::I16 => ("(short)SHRT_MIN".into(), "(short)SHRT_MAX".into()),
        DType::U16 => ("(ushort)0".into(), "(ushort)USHRT_MAX".into()),
        DType::I32 => ("INT_MIN".into(), "INT_MAX".into()),
        DType::U32 => ("0u".into(), "UINT_MAX".into()),
        DType::I64 => ("LONG_MIN".into(), "LONG_MAX".into()),
        DType::U64 => ("0ul".into(), "ULONG_MAX".into()),
        DType::Bool => ("(uchar)0".into(), "(uchar)1".into()),
        // (No order: only sums and products reduce complex numbers.)
        DType::C32 | DType::C64 => (format!("(({t})NAN)"), format!("(({t})NAN)")),
    };
    match op {
        ReduceOp::Sum | ReduceOp::Mean => format!("({t})0"),
        ReduceOp::Prod if d.is_complex() => format!("(({t})(1, 0))"),
        ReduceOp::Prod => format!("({t})1"),
        // NaN, not ±INFINITY: `fmin`/`fmax` ignore a NaN operand, so NaN is neutral for
        // them, and a minimum or maximum of nothing but NaN stays NaN, as numpy's
        // `nanmin`/`nanmax` give, instead of a finite-looking ±inf.
        ReduceOp::Min | ReduceOp::Max if d.is_float() => format!("(({t})NAN)"),
        ReduceOp::Min | ReduceOp::ArgMin => hi,
        ReduceOp::Max | ReduceOp::ArgMax => lo,
    }
}

/// `a ⊕ b` for the reduction's combining operation (not for the arg reductions).
pub(super) fn combine(op: ReduceOp, d: DType, a: &str, b: &str) -> String {
    let wrap = |sym: &str| {
        if d.is_float() || d.is_complex() {
            format!("({a} {sym} {b})")
        } else {
            clc::wrapping(d, sym, a, b)
        }
    };
    match op {
        ReduceOp::Sum | ReduceOp::Mean => wrap("+"),
        // (Its definition is in every program with complex values: `helpers_of`.)
        ReduceOp::Prod if d.is_complex() => clc::complex::mul(d).call(&[a, b]),
        ReduceOp::Prod => wrap("*"),
        ReduceOp::Min if d.is_float() => format!("fmin({a}, {b})"),
        ReduceOp::Max if d.is_float() => format!("fmax({a}, {b})"),
        ReduceOp::Min => format!("min({a}, {b})"),
        ReduceOp::Max => format!("max({a}, {b})"),
        ReduceOp::ArgMin | ReduceOp::ArgMax => a.to_string(),
    }
}

/// Four values combined pairwise: `(a ⊕ b) ⊕ (c ⊕ d)`, a shorter dependency chain than
/// one after the other.
pub(super) fn combine_four(op: ReduceOp, d: DType, four: [&str; 4]) -> String {
    combine_pairwise(op, d, &four)
}

/// `values` (a power of two of them) combined pairwise: neighbours first, as a tree.
pub(super) fn combine_pairwise(op: ReduceOp, d: DType, values: &[impl AsRef<str>]) -> String {
    match values {
        [one] => one.as_ref().to_string(),
        _ => {
            let (a, b) = values.split_at(values.len() / 2);
            combine(op, d, &combine_pairwise(op, d, a), &combine_pairwise(op, d, b))
        }
    }
}

/// Whether candidate `(b, bi)` replaces the current best `(a, ai)` of an arg reduction:
/// a strictly better value, an equal value at a lower index, or anything over "none yet"
/// or over a NaN.
pub(super) fn arg_better(op: ReduceOp, d: DType, a: &str, ai: &str, b: &str, bi: &str) -> String {
    let cmp = if op == ReduceOp::ArgMin { "<" } else { ">" };
    let nan = if d.is_float() {
        format!(" || (isnan({a}) && !isnan({b}))")
    } else {
        String::new()
    };
    format!("({bi} != NONE && ({ai} == NONE || {b} {cmp} {a} || ({b} == {a} && {bi} < {ai}){nan}))")
}
