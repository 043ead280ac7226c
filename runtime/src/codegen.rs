//! Code generation: a fused kernel plan becomes OpenCL C. Only runs on a cache miss.
//!
//! Where OpenCL C and Rust differ, the generated code follows Rust where that is cheap:
//! signed `+ - *` wrap (computed in unsigned arithmetic), integer division and remainder
//! by zero give 0 instead of trapping (Rust panics; a trap would kill a CPU device),
//! `i32::MIN / -1` wraps, float-to-int casts saturate with NaN giving 0 (Rust's `as`),
//! `%` on floats is `fmod` (Rust's `%`), `min`/`max` ignore a NaN operand, `signum`
//! and `clamp` keep NaN.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::dtype::DType;
use crate::fuse::{KernelPlan, OpCode, Value};
use crate::graph::{BinaryOp, TernaryOp, UnaryOp};

/// The name of every generated fused kernel.
pub(crate) const FUSED_KERNEL_NAME: &str = "lazycl_fused";

/// The OpenCL C type of a value held in a kernel (bools are `uchar` 0/1).
fn vt(d: DType) -> &'static str {
    d.cl_name()
}

/// The OpenCL C type of a by-value scalar argument (kernel args cannot be `bool`).
fn scalar_arg_type(d: DType) -> &'static str {
    match d {
        DType::Bool => "uint",
        other => other.cl_name(),
    }
}

fn unsigned_of(d: DType) -> &'static str {
    match d {
        DType::I32 | DType::U32 => "uint",
        DType::I64 | DType::U64 => "ulong",
        DType::Bool => "uchar",
        _ => "",
    }
}

/// Helper functions a kernel needs, emitted once each before it.
#[derive(Default)]
struct Helpers(BTreeSet<String>);

impl Helpers {
    fn int_div(&mut self, d: DType) -> String {
        let t = vt(d);
        let name = format!("lz_div_{t}");
        let body = if d.is_signed() {
            format!(
                "static inline {t} {name}({t} a, {t} b) {{ return b == 0 ? ({t})0 : (b == ({t})-1 ? ({t})(({u})0 - ({u})a) : a / b); }}",
                u = unsigned_of(d)
            )
        } else {
            format!("static inline {t} {name}({t} a, {t} b) {{ return b == 0 ? ({t})0 : a / b; }}")
        };
        self.0.insert(body);
        name
    }

    fn int_rem(&mut self, d: DType) -> String {
        let t = vt(d);
        let name = format!("lz_rem_{t}");
        let body = if d.is_signed() {
            format!("static inline {t} {name}({t} a, {t} b) {{ return (b == 0 || b == ({t})-1) ? ({t})0 : a % b; }}")
        } else {
            format!("static inline {t} {name}({t} a, {t} b) {{ return b == 0 ? ({t})0 : a % b; }}")
        };
        self.0.insert(body);
        name
    }

    fn int_pow(&mut self, d: DType) -> String {
        let t = vt(d);
        let u = unsigned_of(d);
        let name = format!("lz_pow_{t}");
        self.0.insert(format!(
            "static inline {t} {name}({t} a, uint e) {{ {u} r = 1, b = ({u})a; while (e) {{ if (e & 1u) r *= b; b *= b; e >>= 1; }} return ({t})r; }}"
        ));
        name
    }
}

/// Expression text for one value.
fn value_expr(plan: &KernelPlan, idx: usize, helpers: &mut Helpers) -> String {
    let (value, dtype) = plan.values[idx];
    let t = vt(dtype);
    match value {
        Value::Load { slot } => {
            let mask = plan.inputs[slot].1;
            format!("in{slot}[{}]", load_index(mask, plan.dims.len()))
        }
        Value::Scalar { slot } => match dtype {
            DType::Bool => format!("(uchar)(s{slot} != 0u)"),
            _ => format!("s{slot}"),
        },
        Value::Op { code, args, .. } => {
            let a = format!("v{}", args[0]);
            let b = format!("v{}", args[1]);
            let c = format!("v{}", args[2]);
            let ad = plan.values[args[0]].1;
            match code {
                OpCode::Unary(u) => unary_expr(u, dtype, ad, &a),
                OpCode::Binary(op) => binary_expr(op, dtype, ad, &a, &b, helpers),
                OpCode::Ternary(TernaryOp::Select) => format!("({a} ? {b} : {c})"),
                OpCode::Ternary(TernaryOp::MulAdd) if dtype.is_float() => format!("fma({a}, {b}, {c})"),
                OpCode::Ternary(TernaryOp::MulAdd) => {
                    let u = unsigned_of(dtype);
                    format!("({t})(({u}){a} * ({u}){b} + ({u}){c})")
                }
                OpCode::Ternary(TernaryOp::Clamp) => format!("({a} < {b} ? {b} : ({a} > {c} ? {c} : {a}))"),
            }
        }
    }
}

fn unary_expr(op: UnaryOp, dtype: DType, from: DType, a: &str) -> String {
    let t = vt(dtype);
    let float = dtype.is_float();
    match op {
        UnaryOp::Neg if float => format!("(-{a})"),
        UnaryOp::Neg => format!("({t})(({u})0 - ({u}){a})", u = unsigned_of(dtype)),
        UnaryOp::Not if dtype == DType::Bool => format!("(uchar)(!{a})"),
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
        UnaryOp::Abs if float => format!("fabs({a})"),
        UnaryOp::Abs if dtype.is_signed() => format!("({t})abs({a})"),
        UnaryOp::Abs => a.to_string(),
        UnaryOp::Floor if float => format!("floor({a})"),
        UnaryOp::Ceil if float => format!("ceil({a})"),
        UnaryOp::Round if float => format!("round({a})"),
        UnaryOp::Trunc if float => format!("trunc({a})"),
        UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round | UnaryOp::Trunc => a.to_string(),
        UnaryOp::Signum if float => format!("(isnan({a}) ? {a} : copysign(({t})1, {a}))"),
        UnaryOp::Signum if dtype.is_signed() => format!("({t})(({a} > 0) - ({a} < 0))"),
        UnaryOp::Signum => format!("({t})({a} > 0)"),
        UnaryOp::Cast => cast_expr(from, dtype, a),
    }
}

/// Rust `as` semantics.
fn cast_expr(from: DType, to: DType, a: &str) -> String {
    let t = vt(to);
    if from == to {
        a.to_string()
    } else if to == DType::Bool {
        format!("(uchar)({a} != 0)")
    } else if from.is_float() && to.is_int() {
        format!("convert_{t}_sat({a})")
    } else {
        format!("({t}){a}")
    }
}

fn binary_expr(op: BinaryOp, dtype: DType, ad: DType, a: &str, b: &str, helpers: &mut Helpers) -> String {
    let t = vt(dtype);
    let float = dtype.is_float();
    let wrapping = |sym: &str| {
        if dtype.is_signed() && !float {
            let u = unsigned_of(dtype);
            format!("({t})(({u}){a} {sym} ({u}){b})")
        } else {
            format!("({a} {sym} {b})")
        }
    };
    match op {
        BinaryOp::Add => wrapping("+"),
        BinaryOp::Sub => wrapping("-"),
        BinaryOp::Mul => wrapping("*"),
        BinaryOp::Div if float => format!("({a} / {b})"),
        BinaryOp::Div => format!("{}({a}, {b})", helpers.int_div(dtype)),
        BinaryOp::Rem if float => format!("fmod({a}, {b})"),
        BinaryOp::Rem => format!("{}({a}, {b})", helpers.int_rem(dtype)),
        BinaryOp::Min if float => format!("fmin({a}, {b})"),
        BinaryOp::Max if float => format!("fmax({a}, {b})"),
        BinaryOp::Min => format!("min({a}, {b})"),
        BinaryOp::Max => format!("max({a}, {b})"),
        BinaryOp::Pow if float => format!("pow({a}, {b})"),
        BinaryOp::Pow => format!("{}({a}, (uint){b})", helpers.int_pow(dtype)),
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
        BinaryOp::Ne => {
            let _ = ad;
            format!("(uchar)({a} != {b})")
        }
    }
}

/// The linear index of a load with broadcast `mask` over `rank` collapsed dims.
fn load_index(mask: u32, rank: usize) -> String {
    if mask == 0 {
        return "gid".into();
    }
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

/// Generates the complete OpenCL C program of a fused kernel.
pub(crate) fn fused_source(plan: &KernelPlan) -> String {
    let mut helpers = Helpers::default();
    let mut body = String::new();
    let rank = plan.dims.len();
    if plan.inputs.iter().any(|i| i.1 != 0) && rank > 1 {
        let _ = writeln!(body, "        ulong r = gid;");
        for k in (1..rank).rev() {
            let _ = writeln!(body, "        ulong i{k} = r % d{k}; r /= d{k};");
        }
        let _ = writeln!(body, "        ulong i0 = r;");
    } else if plan.inputs.iter().any(|i| i.1 != 0) {
        let _ = writeln!(body, "        ulong i0 = gid;");
    }
    for i in 0..plan.values.len() {
        let e = value_expr(plan, i, &mut helpers);
        let _ = writeln!(body, "        const {} v{i} = {e};", vt(plan.values[i].1));
    }
    for (k, (v, _, _)) in plan.outputs.iter().enumerate() {
        let _ = writeln!(body, "        out{k}[gid] = v{v};");
    }

    let mut params: Vec<String> = Vec::new();
    for (k, (d, _, _)) in plan.inputs.iter().enumerate() {
        params.push(format!("__global const {}* in{k}", vt(*d)));
    }
    for (k, (d, _)) in plan.scalars.iter().enumerate() {
        params.push(format!("const {} s{k}", scalar_arg_type(*d)));
    }
    for (k, (_, d, _)) in plan.outputs.iter().enumerate() {
        params.push(format!("__global {}* out{k}", vt(*d)));
    }
    params.push("const ulong n".into());
    for k in 0..rank {
        params.push(format!("const ulong d{k}"));
    }

    // Rust never contracts `a * b + c` into an fma; neither do we (mul_add does, explicitly).
    let mut src = String::from("#pragma OPENCL FP_CONTRACT OFF\n");
    if plan.values.iter().any(|(_, d)| *d == DType::F64) {
        src.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    }
    for h in &helpers.0 {
        src.push_str(h);
        src.push('\n');
    }
    let _ = write!(
        src,
        "__kernel void {FUSED_KERNEL_NAME}({}) {{\n    for (ulong gid = get_global_id(0); gid < n; gid += get_global_size(0)) {{\n{body}    }}\n}}\n",
        params.join(", ")
    );
    src
}
