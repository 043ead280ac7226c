//! Complex numbers (`c32` is `float2`, `c64` is `double2`, real part in `.x`): their
//! operators and functions with `num-complex`'s formulas, through `lazycl-clc`'s
//! `complex` helpers (the runtime's too): a product or quotient of two complex numbers is
//! never OpenCL C's componentwise `*` or `/`, and a real beside a complex number adds to
//! or subtracts from its real part only. What reads an operand twice is a helper call,
//! so that each operand is evaluated once.

use lazycl_clc::complex as cx;

use super::Emitter;
use crate::ir::*;

impl Emitter<'_> {
    /// `a op b` where `a` (of type `t`) or `b` (of type `rt`) is complex, the other of the
    /// same type or a real of its parts' type.
    pub(super) fn complex_binary(
        &mut self,
        op: BinOp,
        t: Scalar,
        rt: Scalar,
        a: String,
        b: String,
    ) -> String {
        let c = if t.is_complex() { t } else { rt }.elem();
        let (a, b) = (a.as_str(), b.as_str());
        match (op, t.is_complex(), rt.is_complex()) {
            (BinOp::Add | BinOp::Sub, true, true) => format!("({a} {} {b})", op.c()),
            (BinOp::Add, true, false) => self.call_helper(cx::add_real(c), &[a, b]),
            // (`x + z` is `z + x`: a float sum does not depend on the order.)
            (BinOp::Add, false, true) => self.call_helper(cx::add_real(c), &[b, a]),
            (BinOp::Sub, true, false) => self.call_helper(cx::sub_real(c), &[a, b]),
            (BinOp::Sub, false, true) => self.call_helper(cx::real_sub(c), &[a, b]),
            (BinOp::Mul, true, true) => self.call_helper(cx::mul(c), &[a, b]),
            // (A vector and a scalar: both parts times the real, as `Complex<T> * T`.)
            (BinOp::Mul, _, _) => format!("({a} * {b})"),
            (BinOp::Div, true, true) => self.call_helper(cx::div(c), &[a, b]),
            (BinOp::Div, true, false) => format!("({a} / {b})"),
            (BinOp::Div, false, true) => self.call_helper(cx::real_div(c), &[a, b]),
            (BinOp::Eq, _, _) => self.call_helper(cx::eq(c), &[a, b]),
            (BinOp::Ne, _, _) => format!("(!{})", self.call_helper(cx::eq(c), &[a, b])),
            // (Lowering rejects the other operators; were one emitted, the build fails on
            // the undefined name instead of computing something else.)
            _ => format!("lzc_no_complex_{op:?}({a}, {b})"),
        }
    }

    /// A complex number's function `f` of type `ty` over `vals` (the receiver first, of
    /// type `arg`).
    pub(super) fn complex_fn(&mut self, f: ComplexFn, ty: Scalar, arg: Scalar, vals: &[String]) -> String {
        let refs: Vec<&str> = vals.iter().map(String::as_str).collect();
        // The complex type: the result's for a constructor, else the receiver's.
        let c = match f {
            ComplexFn::New | ComplexFn::FromPolar => ty,
            _ => arg,
        };
        let d = c.elem();
        match f {
            ComplexFn::New => format!("(({})({}))", c.cl(), vals.join(", ")),
            ComplexFn::FromPolar => self.call_helper(cx::from_polar(d), &refs),
            ComplexFn::Re => format!("{}.x", component_base(&vals[0])),
            ComplexFn::Im => format!("{}.y", component_base(&vals[0])),
            ComplexFn::Conj => self.call_helper(cx::conj(d), &refs),
            ComplexFn::Norm => self.call_helper(cx::norm(d), &refs),
            ComplexFn::NormSqr => self.call_helper(cx::norm_sqr(d), &refs),
            ComplexFn::Arg => self.call_helper(cx::arg(d), &refs),
            ComplexFn::Exp => self.call_helper(cx::exp(d), &refs),
            ComplexFn::Ln => self.call_helper(cx::ln(d), &refs),
            ComplexFn::Sqrt => self.call_helper(cx::sqrt(d), &refs),
            ComplexFn::Powf => self.call_helper(cx::powf(d), &refs),
            ComplexFn::Powc => self.call_helper(cx::powc(d), &refs),
            ComplexFn::Inv => self.call_helper(cx::inv(d), &refs),
            ComplexFn::Scale => format!("({} * {})", vals[0], vals[1]),
            ComplexFn::Unscale => format!("({} / {})", vals[0], vals[1]),
            ComplexFn::IsNan => self.call_helper(cx::is_nan(d), &refs),
            ComplexFn::IsFinite => self.call_helper(cx::is_finite(d), &refs),
            ComplexFn::IsInfinite => self.call_helper(cx::is_infinite(d), &refs),
        }
    }
}

/// A vector value as the base of a component access: a name as it is, anything else (an
/// `expr!` operand's `$0`, a call) in parentheses.
fn component_base(v: &str) -> String {
    let name = !v.is_empty()
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !v.as_bytes()[0].is_ascii_digit();
    match name {
        true => v.to_string(),
        false => format!("({v})"),
    }
}

#[cfg(test)]
mod tests {
    use super::component_base;

    #[test]
    fn components_of_names_and_expressions() {
        assert_eq!(component_base("z"), "z");
        assert_eq!(component_base("$0"), "($0)");
        assert_eq!(component_base("a[i]"), "(a[i])");
    }
}
