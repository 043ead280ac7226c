//! Method calls on scalars: `x.sqrt()`, `x.max(y)`, `x.mul_add(a, b)`, `n.pow(e)`,
//! `n.wrapping_add(m)`, ... (also written `f32::sqrt(x)`), lowered to the builtins of the
//! IR (or to plain operators where Rust's method is one), and `.len()` on arrays.

use super::names::{FLOAT_METHODS, FLOAT_METHOD_LIST, INT_METHOD_LIST};
use super::{err_expr, strip_parens, ArrLen, Binding, Lowerer};
use crate::diag::{Sp, Spanned};
use crate::ir::*;

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
                            ArrLen::Local(n) => ExprKind::Int(n as i128),
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
        if self.infer.is_float(t) {
            return self.float_method(t, recv, name, name_span, args, span);
        }
        if self.infer.is_int(t) {
            return self.int_method(t, recv, name, name_span, args, span);
        }
        let d = self.infer.describe(t);
        self.errors
            .add(name_span, format!("unsupported method `{name}` on `{d}`"));
        err_expr(span)
    }

    /// Whether a method got its `n` arguments (`given`), else says so.
    fn arity(&mut self, name: &str, n: usize, given: usize, span: Sp) -> bool {
        if given != n {
            let plural = if n == 1 { "" } else { "s" };
            self.errors.add(
                span,
                format!("`{name}` takes {n} argument{plural}, {given} given"),
            );
            false
        } else {
            true
        }
    }

    /// A method of a float receiver of type `t`.
    fn float_method(
        &mut self,
        t: Ty,
        recv: Expr,
        name: &str,
        name_span: Sp,
        args: Vec<Expr>,
        span: Sp,
    ) -> Expr {
        if let Some(&(_, cl, n)) = FLOAT_METHODS.iter().find(|(r, _, _)| *r == name) {
            if !self.arity(name, n, args.len(), span) {
                return err_expr(span);
            }
            for a in &args {
                self.unify(t, a.ty, a.span, &format!(" in argument of `{name}`"));
            }
            let mut all = vec![recv];
            all.extend(args);
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
                let d = self.infer.describe(t);
                self.errors.add(
                    name_span,
                    format!("unsupported method `{name}` on `{d}`; float methods: {FLOAT_METHOD_LIST}"),
                );
                return err_expr(span);
            }
        };
        if !self.arity(name, n, args.len(), span) {
            return err_expr(span);
        }
        for a in &args {
            let want = if b == Builtin::Powi { Ty::S(Scalar::I32) } else { t };
            self.unify(want, a.ty, a.span, &format!(" in argument of `{name}`"));
        }
        let mut all = vec![recv];
        all.extend(args);
        Expr {
            kind: ExprKind::Builtin(b, all),
            ty: ret,
            span,
        }
    }

    /// A method of an integer receiver of type `t`.
    fn int_method(
        &mut self,
        t: Ty,
        recv: Expr,
        name: &str,
        name_span: Sp,
        args: Vec<Expr>,
        span: Sp,
    ) -> Expr {
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
                let d = self.infer.describe(t);
                self.errors.add(
                    name_span,
                    format!("unsupported method `{name}` on `{d}`; integer methods: {INT_METHOD_LIST}"),
                );
                return err_expr(span);
            }
        };
        if !self.arity(name, n, args.len(), span) {
            return err_expr(span);
        }
        for a in &args {
            let want = if name == "pow" { Ty::S(Scalar::U32) } else { t };
            self.unify(want, a.ty, a.span, &format!(" in argument of `{name}`"));
        }
        let mut all = vec![recv];
        all.extend(args);
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
