//! Complex numbers (`c32`, `c64`: `num_complex::Complex32`/`Complex64`): the type rules of
//! their operators (`+ - * /` with a complex number of the same type or a real of its
//! parts' type, as `num-complex`'s `Complex<T> * T` and `T * Complex<T>`; `==` and `!=`;
//! no order, remainder or bits), their constructors (`c32::new`, `Complex::new`,
//! `Complex32::from_polar`, `c32::from`), their fields `re` and `im`, and their methods.
//! A `{float}` literal beside a complex number is a real of its parts' type (`z * 2.0`),
//! as Rust infers it.

use super::methods::MethodCall;
use super::names::COMPLEX_METHOD_LIST;
use super::{err_expr, given, strip_parens, Binding, Lowerer};
use crate::diag::{Sp, Spanned};
use crate::ir::*;

impl Lowerer<'_> {
    /// The type of `l op r` when an operand is complex (`None` when neither is): the
    /// complex type, `bool` for `==`/`!=`; the operators complex numbers lack are errors.
    pub(super) fn complex_operands(
        &mut self,
        op: BinOp,
        l: Ty,
        r: Ty,
        op_span: Sp,
        r_span: Sp,
    ) -> Option<Ty> {
        let (lc, rc) = (self.infer.is_complex(l), self.infer.is_complex(r));
        if !lc && !rc {
            return None;
        }
        let sym = op.c();
        let c = if lc { l } else { r };
        let d = self.infer.describe(c);
        match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => {
                if lc && rc {
                    if let Err(m) = self.infer.unify(l, r) {
                        self.errors.add(
                            r_span,
                            format!("mismatched types in `{sym}`: {m} (kernels do no implicit conversions)"),
                        );
                    }
                    return Some(c);
                }
                let (other, span) = if lc { (r, r_span) } else { (l, op_span) };
                // (An `expr!` operand whose type is still being found may be either a
                // complex number or a real: it stays open.)
                if self.infer.kind(other) == Some(VarKind::Any) {
                    return Some(c);
                }
                let part = self.infer.part(c).unwrap_or(Ty::Never);
                if let Err(m) = self.infer.unify(part, other) {
                    let p = self.infer.describe(part);
                    self.errors.add(
                        span,
                        format!(
                            "mismatched types in `{sym}`: {m}; a complex number `{d}` takes `{sym}` with a `{d}` \
                             or with a real number of its parts' type `{p}` (kernels do no implicit conversions)"
                        ),
                    );
                }
                Some(c)
            }
            BinOp::Eq | BinOp::Ne => {
                if let Err(m) = self.infer.unify(l, r) {
                    self.errors.add(
                        r_span,
                        format!(
                            "mismatched types in `{sym}`: {m}; a complex number compares with a complex number \
                             of its type (`z == c32::new(x, 0.0)`)"
                        ),
                    );
                }
                Some(Ty::S(Scalar::Bool))
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                self.errors.add(
                    op_span,
                    format!(
                        "`{sym}` cannot be applied to `{d}`: complex numbers have no order; compare their \
                         magnitudes (`z.norm()`) or parts (`z.re`)"
                    ),
                );
                Some(Ty::S(Scalar::Bool))
            }
            // (`&&` and `||` report a non-`bool` operand themselves.)
            BinOp::And | BinOp::Or => None,
            BinOp::Rem | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
                self.errors.add(
                    op_span,
                    format!("`{sym}` cannot be applied to `{d}`: complex numbers have `+ - * /` and `==`"),
                );
                Some(Ty::Never)
            }
        }
    }

    /// The error of an `as` cast from or to a complex type (Rust has none).
    pub(super) fn complex_cast_error(&mut self, from: Ty, to: Scalar, span: Sp) {
        let d = self.infer.describe(from);
        let msg = if to.is_complex() {
            let part = to.real().rust();
            format!(
                "casting `{d}` as `{t}` is invalid: `as` makes no complex numbers; write `{t}::new(x, 0.0)` \
                 for a real `x: {part}` (convert it to `{part}` with `as` first)",
                t = to.rust()
            )
        } else {
            format!(
                "casting `{d}` as `{}` is invalid: a complex number has no real value of its own; take a \
                 part (`z.re`, `z.im`) or the magnitude (`z.norm()`)",
                to.rust()
            )
        };
        self.errors.add(span, msg);
    }

    /// `T::name(args)` of a complex type `t` (`c32::new`, `Complex32::from_polar`,
    /// `c64::from`), or of the type its arguments' parts say (`t` is `None`:
    /// `Complex::new`).
    pub(super) fn complex_constructor(
        &mut self,
        t: Option<Scalar>,
        name: &str,
        c: &syn::ExprCall,
        span: Sp,
    ) -> Expr {
        let written = match t {
            Some(t) => t.rust().to_string(),
            None => "Complex".to_string(),
        };
        let (f, n) = match name {
            "new" => (ComplexFn::New, 2),
            "from_polar" => (ComplexFn::FromPolar, 2),
            "from" => (ComplexFn::New, 1),
            _ => {
                let path = strip_parens(&c.func);
                self.errors.add(
                    path.span(),
                    format!(
                        "unsupported function `{written}::{name}`; kernels make complex numbers with \
                         `{written}::new(re, im)`, `{written}::from_polar(r, theta)` and `{written}::from(re)`"
                    ),
                );
                return err_expr(span);
            }
        };
        if c.args.len() != n {
            let what = if n == 1 { "one value" } else { "two values" };
            self.errors.add(
                span,
                format!(
                    "`{written}::{name}` takes {what}, but {} given",
                    given(c.args.len())
                ),
            );
            return err_expr(span);
        }
        let mut args: Vec<Expr> = c.args.iter().map(|a| self.expr(a)).collect();
        // `c32::from(z)` of a `c32` is `z` (Rust's reflexive `From`).
        if let (1, Some(t)) = (n, t) {
            if self.infer.shallow(args[0].ty) == Ty::S(t) {
                return args.remove(0);
            }
        }
        let part = match t {
            Some(t) => Ty::S(t.real()),
            None => args[0].ty,
        };
        for a in &args {
            self.unify(part, a.ty, a.span, &format!(" in `{written}::{name}`"));
        }
        let p = self.infer.shallow(part);
        let float = matches!(p, Ty::S(Scalar::F32 | Scalar::F64) | Ty::Never)
            || matches!(self.infer.kind(p), Some(VarKind::Float | VarKind::Any));
        if !float {
            let d = self.infer.describe(p);
            self.errors.add(
                args[0].span,
                format!("complex numbers in kernels have `f32` or `f64` parts (`c32`, `c64`), not `{d}`"),
            );
            return err_expr(span);
        }
        if n == 1 {
            // `from(re)`: the imaginary part is zero.
            args.push(Expr {
                kind: ExprKind::Float(0.0),
                ty: part,
                span,
            });
        }
        let ty = match t {
            Some(t) => Ty::S(t),
            None => self.infer.complex_of(part),
        };
        Expr {
            kind: ExprKind::Builtin(Builtin::Complex(f), args),
            ty,
            span,
        }
    }

    /// `z.re` / `z.im` of a complex value (`None`: not a part of a complex number, which
    /// the field access of kernel structs reads instead).
    pub(super) fn complex_field(&mut self, f: &syn::ExprField) -> Option<Expr> {
        let member = match &f.member {
            syn::Member::Named(id) if id == "re" || id == "im" => id.to_string(),
            _ => return None,
        };
        if let syn::Expr::Path(p) = strip_parens(&f.base) {
            let binding = p.path.get_ident().and_then(|id| self.lookup(&id.to_string()));
            if matches!(binding, Some(Binding::Struct { .. })) {
                return None;
            }
        }
        let span = f.span();
        let base = self.expr(&f.base);
        let t = self.infer.shallow(base.ty);
        if t == Ty::Never {
            return Some(err_expr(span));
        }
        let Some(part) = self.infer.part(t) else {
            let d = self.infer.describe(t);
            self.errors.add(
                f.member.span(),
                format!("no field `{member}` on type `{d}`; complex numbers (`c32`, `c64`) have the fields `re` and `im`"),
            );
            return Some(err_expr(span));
        };
        let which = if member == "re" {
            ComplexFn::Re
        } else {
            ComplexFn::Im
        };
        Some(Expr {
            kind: ExprKind::Builtin(Builtin::Complex(which), vec![base]),
            ty: part,
            span,
        })
    }

    /// `z.re = v` / `z.im += v` of a complex variable `name` (`cname` in OpenCL C, of type
    /// `ty`): its part as a place.
    pub(super) fn complex_part_place(&mut self, f: &syn::ExprField, cname: &str, ty: Ty) -> Option<Place> {
        let (syn::Member::Named(m), Some(part)) = (&f.member, self.infer.part(ty)) else {
            return None;
        };
        let c = match m.to_string().as_str() {
            "re" => "x",
            "im" => "y",
            other => {
                self.errors.add(
                    m.span(),
                    format!("no field `{other}` on a complex number; its fields are `re` and `im`"),
                );
                return None;
            }
        };
        Some(Place::Var(format!("{cname}.{c}"), part))
    }

    /// A method of a complex receiver of type `t`.
    pub(super) fn complex_method(&mut self, t: Ty, call: MethodCall) -> Expr {
        let (name, name_span, span) = (call.name, call.name_span, call.span);
        let part = self.infer.part(t).unwrap_or(Ty::Never);
        let (f, n, want, ret) = match name {
            "conj" => (ComplexFn::Conj, 0, t, t),
            "norm" => (ComplexFn::Norm, 0, t, part),
            "norm_sqr" => (ComplexFn::NormSqr, 0, t, part),
            "arg" => (ComplexFn::Arg, 0, t, part),
            "exp" => (ComplexFn::Exp, 0, t, t),
            "ln" => (ComplexFn::Ln, 0, t, t),
            "sqrt" => (ComplexFn::Sqrt, 0, t, t),
            "inv" => (ComplexFn::Inv, 0, t, t),
            "powf" => (ComplexFn::Powf, 1, part, t),
            "powc" => (ComplexFn::Powc, 1, t, t),
            "scale" => (ComplexFn::Scale, 1, part, t),
            "unscale" => (ComplexFn::Unscale, 1, part, t),
            "is_nan" => (ComplexFn::IsNan, 0, t, Ty::S(Scalar::Bool)),
            "is_finite" => (ComplexFn::IsFinite, 0, t, Ty::S(Scalar::Bool)),
            "is_infinite" => (ComplexFn::IsInfinite, 0, t, Ty::S(Scalar::Bool)),
            _ => {
                let hint = match name {
                    "abs" => "; the magnitude of a complex number is `norm()` (`num-complex`'s name)",
                    "re" | "im" => "; the parts are fields: `z.re`, `z.im`",
                    _ => "",
                };
                self.unknown_method(
                    t,
                    name,
                    name_span,
                    &format!("{hint}; complex methods: {COMPLEX_METHOD_LIST}"),
                );
                return err_expr(span);
            }
        };
        let Some(all) = self.method_args(call, n, want) else {
            return err_expr(span);
        };
        Expr {
            kind: ExprKind::Builtin(Builtin::Complex(f), all),
            ty: ret,
            span,
        }
    }
}
