//! Complex values' operations (`c32` is `float2`, `c64` is `double2`, real part in `.x`):
//! what `ops` prints for a unary operation of a complex operand, a binary operation with
//! a complex operand or result, and a cast to a complex type. The arithmetic follows the
//! `num-complex` crate (`lazycl-clc`'s `complex` helpers): a real operand beside a complex
//! one scales or shifts it part by part, as `Complex<T> * T` does, instead of being made
//! complex first (which would turn `inf * 0` into a NaN the host never sees).

use lazycl_clc as clc;

use super::helpers::{vt, Helpers};
use crate::dtype::DType;
use crate::graph::{BinaryOp, UnaryOp};

/// `op` of complex operand `a` (of type `from`), giving `to`.
pub(super) fn unary(op: UnaryOp, to: DType, from: DType, a: &str, helpers: &mut Helpers) -> String {
    let c = vt(from);
    match op {
        UnaryOp::Neg => format!("(-{a})"),
        UnaryOp::Conj => format!("(({c})({a}.x, -{a}.y))"),
        UnaryOp::Re => format!("{a}.x"),
        UnaryOp::Im => format!("{a}.y"),
        UnaryOp::Abs => format!("hypot({a}.x, {a}.y)"),
        UnaryOp::Arg => format!("atan2({a}.y, {a}.x)"),
        UnaryOp::NormSqr => format!("({a}.x * {a}.x + {a}.y * {a}.y)"),
        UnaryOp::Exp => helpers.call(clc::complex::exp(from), &[a]),
        UnaryOp::Ln => helpers.call(clc::complex::ln(from), &[a]),
        UnaryOp::Sqrt => helpers.call(clc::complex::sqrt(from), &[a]),
        UnaryOp::Cast => cast(from, to, a),
        // (The API offers no other operation on complex numbers; were one recorded, the
        // build fails on the undefined name instead of computing something else.)
        _ => format!("lzc_no_complex_{op:?}({a})"),
    }
}

/// `a` of type `from` as complex type `to`: a complex number converted part by part, a
/// real one with a zero imaginary part.
pub(super) fn cast(from: DType, to: DType, a: &str) -> String {
    let c = vt(to);
    if from == to {
        a.to_string()
    } else if from.is_complex() {
        format!("convert_{c}({a})")
    } else {
        let r = vt(to.real());
        format!("(({c})(({r}){a}, 0))")
    }
}

/// `op` over `a` and `b` of types `[ad, bd]`, at least one of them complex or the result
/// `to` complex.
pub(super) fn binary(
    op: BinaryOp,
    [ad, bd]: [DType; 2],
    to: DType,
    [a, b]: [&str; 2],
    helpers: &mut Helpers,
) -> String {
    let t = if ad.is_complex() { ad } else { bd };
    let c = vt(t);
    // A real operand as a complex number (for the operations with no part-wise form).
    let lift = |x: &str, d: DType| cast(d, t, x);
    match (op, ad.is_complex(), bd.is_complex()) {
        (BinaryOp::Complex, _, _) => format!("(({})({a}, {b}))", vt(to)),
        (BinaryOp::Add | BinaryOp::Sub, true, true) => {
            format!("({a} {} {b})", if op == BinaryOp::Add { "+" } else { "-" })
        }
        (BinaryOp::Add, true, false) => format!("(({c})({a}.x + {b}, {a}.y))"),
        (BinaryOp::Sub, true, false) => format!("(({c})({a}.x - {b}, {a}.y))"),
        (BinaryOp::Add, false, true) => format!("(({c})({a} + {b}.x, {b}.y))"),
        (BinaryOp::Sub, false, true) => format!("(({c})({a} - {b}.x, -{b}.y))"),
        (BinaryOp::Mul, true, true) => helpers.call(clc::complex::mul(t), &[a, b]),
        // (A vector times a scalar: part by part.)
        (BinaryOp::Mul, _, _) => format!("({a} * {b})"),
        (BinaryOp::Div, true, true) => helpers.call(clc::complex::div(t), &[a, b]),
        (BinaryOp::Div, true, false) => format!("({a} / {b})"),
        (BinaryOp::Div, false, true) => helpers.call(clc::complex::div(t), &[&lift(a, ad), b]),
        (BinaryOp::Pow, true, false) => helpers.call(clc::complex::powf(t), &[a, b]),
        (BinaryOp::Pow, true, true) => helpers.call(clc::complex::powc(t), &[a, b]),
        (BinaryOp::Pow, false, true) => helpers.call(clc::complex::powc(t), &[&lift(a, ad), b]),
        (BinaryOp::Eq, _, _) => format!("(uchar)({a}.x == {b}.x && {a}.y == {b}.y)"),
        (BinaryOp::Ne, _, _) => format!("(uchar)({a}.x != {b}.x || {a}.y != {b}.y)"),
        // (As in `unary`: a build error, never another value.)
        _ => format!("lzc_no_complex_{op:?}({a}, {b})"),
    }
}
