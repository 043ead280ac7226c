//! Method calls on scalars: `x.sqrt()`, `x.max(y)`, `x.mul_add(a, b)`, `n.pow(e)`,
//! `n.wrapping_add(m)`, ... (also written `f32::sqrt(x)`), lowered to the builtins of the
//! IR (or to plain operators where Rust's method is one), and `.len()` on arrays. Complex
//! numbers' methods are in `complex`.

use super::names::{FLOAT_METHODS, FLOAT_METHOD_LIST, INT_METHOD_LIST};
use super::{err_expr, strip_parens, ArrLen, Binding, Lowerer};
use crate::diag::{Sp, Spanned};
use crate::ir::*;

/// A method call of a scalar receiver, with the receiver and the arguments lowered.
pub(super) struct MethodCall<'n> {
    pub(super) recv: Expr,
    pub(super) name: &'n str,
    /// The method name's span, for an unsupported method.
    pub(super) name_span: Sp,
    pub(super) args: Vec<Expr>,
    /// The whole call's span.
    pub(super) span: Sp,
}

impl Lowerer<'_> {
    pub(super) fn method_call(&mut self, m: &syn::ExprMethodCall) -> Expr {
        let span = m.span();
        if let Some(t) = &m.turbofish {
            self.errors.add(
                t.span(),
                "generic arguments (turbofish) are not supported in kernels",
            );
        }
        let name = m.method.to_string();
        // `.len()` on arrays.
        if let syn::Expr::Path(p) = strip_parens(&m.receiver) {
            if let Some(id) = p.path.get_ident() {
                if let Some(Binding::Array { len, .. }) = self.lookup(&id.to_string()).cloned() {
                    if name == "len" && m.args.is_empty() {
                        let kind = match len {
                            ArrLen::Param(n) => ExprKind::Len(n),
                            ArrLen::Local(n) | ArrLen::Const(n) => ExprKind::Int(n as i128),
                        };
                        return Expr {
                            kind,
                            ty: Ty::S(Scalar::Usize),
                            span,
                        };
                    }
                    self.errors.add(
                        m.method.span(),
                        format!(
                            "unsupported method `{name}` on an array; arrays support `.len()` and indexing"
                        ),
                    );
                    return err_expr(span);
                }
            }
        }
        let recv = self.expr(&m.receiver);
        let args: Vec<Expr> = m.args.iter().map(|a| self.expr(a)).collect();
        self.scalar_method(recv, &name, m.method.span().into(), args, span)
    }

    /// A method of a scalar receiver, with its arguments lowered.
    pub(super) fn scalar_method(
        &mut self,
        recv: Expr,
        name: &str,
        name_span: Sp,
        args: Vec<Expr>,
        span: Sp,
    ) -> Expr {
        let t = self.infer.shallow(recv.ty);
        if t == Ty::Never {
            return err_expr(span);
        }
        let call = MethodCall {
            recv,
            name,
            name_span,
            args,
            span,
        };
        if self.infer.is_complex(t) {
            return self.complex_method(t, call);
        }
        if self.infer.is_float(t) {
            return self.float_method(t, call);
        }
        if self.infer.is_int(t) {
            return self.int_method(t, call);
        }
        self.unknown_method(t, name, name_span, "");
        err_expr(span)
    }

    /// The receiver followed by the arguments of a method that takes `n` arguments of
    /// type `want`; `None` (the error said) for another number of arguments.
    pub(super) fn method_args(&mut self, call: MethodCall, n: usize, want: Ty) -> Option<Vec<Expr>> {
        let MethodCall {
            recv,
            name,
            args,
            span,
            ..
        } = call;
        if args.len() != n {
            let plural = if n == 1 { "" } else { "s" };
            self.errors.add(
                span,
                format!("`{name}` takes {n} argument{plural}, {} given", args.len()),
            );
            return None;
        }
        for a in &args {
            self.unify(want, a.ty, a.span, &format!(" in argument of `{name}`"));
        }
        let mut all = vec![recv];
        all.extend(args);
        Some(all)
    }

    /// Reports a method that the receiver's type `t` does not have; `list` names those
    /// it has.
    pub(super) fn unknown_method(&mut self, t: Ty, name: &str, name_span: Sp, list: &str) {
        let d = self.infer.describe(t);
        self.errors
            .add(name_span, format!("unsupported method `{name}` on `{d}`{list}"));
    }

    /// A method of a float receiver of type `t`.
    fn float_method(&mut self, t: Ty, call: MethodCall) -> Expr {
        let (name, name_span, span) = (call.name, call.name_span, call.span);
        // `x.to_f32()` of a 16-bit float (its value, exactly).
        let narrow = matches!(t, Ty::S(s) if s.is_narrow_float());
        if let ("to_f32" | "to_f64", true) = (name, narrow) {
            let to = if name == "to_f32" {
                Scalar::F32
            } else {
                Scalar::F64
            };
            let Some(mut all) = self.method_args(call, 0, t) else {
                return err_expr(span);
            };
            return Expr {
                kind: ExprKind::Cast(Box::new(all.remove(0))),
                ty: Ty::S(to),
                span,
            };
        }
        if let Some(&(_, cl, n)) = FLOAT_METHODS.iter().find(|(r, _, _)| *r == name) {
            let Some(all) = self.method_args(call, n, t) else {
                return err_expr(span);
            };
            return Expr {
                kind: ExprKind::Builtin(Builtin::FloatFn(cl), all),
                ty: t,
                span,
            };
        }
        let (b, n, ret) = match name {
            "signum" => (Builtin::Signum, 0, t),
            "clamp" => (Builtin::Clamp, 2, t),
            "powi" => (Builtin::Powi, 1, t),
            "is_nan" => (Builtin::FloatTest("isnan"), 0, Ty::S(Scalar::Bool)),
            "is_finite" => (Builtin::FloatTest("isfinite"), 0, Ty::S(Scalar::Bool)),
            "is_infinite" => (Builtin::FloatTest("isinf"), 0, Ty::S(Scalar::Bool)),
            _ => {
                self.unknown_method(
                    t,
                    name,
                    name_span,
                    &format!(
                        "; float methods: {FLOAT_METHOD_LIST}{}",
                        if narrow { "; and to_f32 to_f64" } else { "" }
                    ),
                );
                return err_expr(span);
            }
        };
        let want = if b == Builtin::Powi { Ty::S(Scalar::I32) } else { t };
        let Some(all) = self.method_args(call, n, want) else {
            return err_expr(span);
        };
        Expr {
            kind: ExprKind::Builtin(b, all),
            ty: ret,
            span,
        }
    }

    /// A method of an integer receiver of type `t`.
    fn int_method(&mut self, t: Ty, call: MethodCall) -> Expr {
        let (name, name_span, span) = (call.name, call.name_span, call.span);
        let signed = match t {
            Ty::S(s) => s.is_signed_int(),
            _ => true,
        };
        let (n, kind) = match name {
            "min" | "max" => (1, None),
            "clamp" => (2, None),
            "abs" if signed => (0, None),
            "pow" => (1, None),
            "wrapping_add" => (1, Some(BinOp::Add)),
            "wrapping_sub" => (1, Some(BinOp::Sub)),
            "wrapping_mul" => (1, Some(BinOp::Mul)),
            "wrapping_neg" => (0, None),
            _ => {
                self.unknown_method(
                    t,
                    name,
                    name_span,
                    &format!("; integer methods: {INT_METHOD_LIST}"),
                );
                return err_expr(span);
            }
        };
        let want = if name == "pow" { Ty::S(Scalar::U32) } else { t };
        let Some(all) = self.method_args(call, n, want) else {
            return err_expr(span);
        };
        if let Some(op) = kind {
            let mut it = all.into_iter();
            let (Some(a), Some(b)) = (it.next(), it.next()) else {
                return err_expr(span);
            };
            return Expr {
                kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
                ty: t,
                span,
            };
        }
        let b = match name {
            "min" => Builtin::IntMinMax("min"),
            "max" => Builtin::IntMinMax("max"),
            "clamp" => Builtin::Clamp,
            "abs" => Builtin::IntAbs,
            "pow" => Builtin::IntPow,
            _ => {
                // wrapping_neg
                let Some(a) = all.into_iter().next() else {
                    return err_expr(span);
                };
                return Expr {
                    kind: ExprKind::Unary(UnOp::Neg, Box::new(a)),
                    ty: t,
                    span,
                };
            }
        };
        Expr {
            kind: ExprKind::Builtin(b, all),
            ty: t,
            span,
        }
    }
}
