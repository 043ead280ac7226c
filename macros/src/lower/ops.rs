//! Operators and casts: the type rules of unary and binary operators (no implicit
//! conversions: both operands of an arithmetic operator have one type, but for a complex
//! number beside a real of its parts' type, see `complex`) and of `as`, and the mapping
//! of syn's operators to the IR's.

use super::{err_expr, strip_parens, Lowerer};
use crate::diag::{Sp, Spanned};
use crate::ir::*;
use crate::signature::{scalar_type, spelled_narrow_float};

impl Lowerer<'_> {
    /// `-x`, `!x`; `-literal` is a negative literal.
    pub(super) fn unary(&mut self, u: &syn::ExprUnary, span: Sp) -> Expr {
        match u.op {
            syn::UnOp::Neg(_) => {
                if let syn::Expr::Lit(l) = strip_parens(&u.expr) {
                    return self.lit(&l.lit, span, true);
                }
                let v = self.expr(&u.expr);
                let t = self.infer.shallow(v.ty);
                let ok = match t {
                    Ty::S(s) => s.is_signed_int() || s.is_float() || s.is_complex(),
                    Ty::Var(_) => true,
                    Ty::Never => true,
                    Ty::Unit => false,
                };
                if !ok {
                    let d = self.infer.describe(t);
                    self.errors
                        .add(span, format!("cannot apply unary operator `-` to type `{d}`"));
                }
                Expr {
                    kind: ExprKind::Unary(UnOp::Neg, Box::new(v)),
                    ty: t,
                    span,
                }
            }
            syn::UnOp::Not(_) => {
                let v = self.expr(&u.expr);
                let t = self.infer.shallow(v.ty);
                if !(self.infer.is_int(t) || t == Ty::S(Scalar::Bool) || t == Ty::Never) {
                    let d = self.infer.describe(t);
                    self.errors
                        .add(span, format!("cannot apply unary operator `!` to type `{d}`"));
                }
                Expr {
                    kind: ExprKind::Unary(UnOp::Not, Box::new(v)),
                    ty: t,
                    span,
                }
            }
            syn::UnOp::Deref(_) => {
                self.errors
                    .add(span, "dereferencing (`*x`) is not supported in kernels");
                err_expr(span)
            }
            _ => {
                self.errors.add(span, "unsupported unary operator");
                err_expr(span)
            }
        }
    }

    /// `a op b`; a compound assignment is a statement, not a value.
    pub(super) fn binary(&mut self, b: &syn::ExprBinary, span: Sp) -> Expr {
        if compound_op(&b.op).is_some() {
            self.errors.add(
                span,
                "compound assignments are statements in kernels; they cannot be used as values",
            );
            return err_expr(span);
        }
        let Some(op) = bin_op(&b.op) else {
            self.errors.add(b.op.span(), "unsupported binary operator");
            return err_expr(span);
        };
        let l = self.expr(&b.left);
        let r = self.expr(&b.right);
        let ty = self.check_binary(op, l.ty, r.ty, b.op.span(), r.span);
        Expr {
            kind: ExprKind::Binary(op, Box::new(l), Box::new(r)),
            ty,
            span,
        }
    }

    /// `e as T`: between scalar types, except to `bool` and from `bool` to a float.
    pub(super) fn cast(&mut self, c: &syn::ExprCast, span: Sp) -> Expr {
        let v = self.expr(&c.expr);
        let target = match scalar_type(&c.ty) {
            Ok(t) => t,
            Err(e) => {
                self.errors.push(e);
                return err_expr(span);
            }
        };
        if spelled_narrow_float(&c.ty) {
            let t = target.rust();
            self.errors.add(
                c.ty.span(),
                format!(
                    "Rust has no `as {t}` (`half::{t}` is no primitive type); write `{t}::from_f32(x)` \
                     (or `{t}::from_f64(x)`), which rounds to the nearest `{t}`, or `{t}::from(x)` for a \
                     lossless conversion"
                ),
            );
            return err_expr(span);
        }
        let from = self.infer.shallow(v.ty);
        if target.is_complex() || self.infer.is_complex(from) {
            self.complex_cast_error(from, target, span);
            return Expr {
                kind: ExprKind::Cast(Box::new(v)),
                ty: Ty::S(target),
                span,
            };
        }
        let bad = match from {
            Ty::Unit => true,
            Ty::Never => false,
            _ => {
                let from_bool = from == Ty::S(Scalar::Bool);
                (target == Scalar::Bool && from != Ty::S(Scalar::Bool)) || (from_bool && target.is_float())
            }
        };
        if bad {
            let d = self.infer.describe(from);
            let hint = if target == Scalar::Bool {
                "; compare instead: `x != 0`"
            } else {
                ""
            };
            self.errors.add(
                span,
                format!("casting `{d}` as `{}` is invalid{hint}", target.rust()),
            );
        }
        Expr {
            kind: ExprKind::Cast(Box::new(v)),
            ty: Ty::S(target),
            span,
        }
    }

    /// The type of `l op r`, reporting operands the operator does not accept.
    pub(super) fn check_binary(&mut self, op: BinOp, l: Ty, r: Ty, op_span: Sp, r_span: Sp) -> Ty {
        if let Some(t) = self.complex_operands(op, l, r, op_span, r_span) {
            return t;
        }
        let sym = op.c();
        match op {
            BinOp::And | BinOp::Or => {
                self.unify(Ty::S(Scalar::Bool), l, op_span, &format!(" in `{sym}`"));
                self.unify(Ty::S(Scalar::Bool), r, r_span, &format!(" in `{sym}`"));
                Ty::S(Scalar::Bool)
            }
            BinOp::Shl | BinOp::Shr => {
                for t in [l, r] {
                    if !self.infer.is_int(t) && self.infer.shallow(t) != Ty::Never {
                        let d = self.infer.describe(t);
                        self.errors
                            .add(op_span, format!("`{sym}` needs integer operands, found `{d}`"));
                    }
                }
                l
            }
            _ => {
                if let Err(m) = self.infer.unify(l, r) {
                    self.errors.add(
                        r_span,
                        format!(
                            "mismatched types in `{sym}`: {m} (kernels do no implicit conversions; use `as`)"
                        ),
                    );
                    return if op.is_comparison() {
                        Ty::S(Scalar::Bool)
                    } else {
                        Ty::Never
                    };
                }
                let t = self.infer.shallow(l);
                let ok = match op {
                    BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => true,
                    BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                        self.infer.is_int(t) || t == Ty::S(Scalar::Bool) || t == Ty::Never
                    }
                    _ => self.infer.is_int(t) || self.infer.is_float(t) || t == Ty::Never,
                };
                if !ok {
                    let d = self.infer.describe(t);
                    self.errors
                        .add(op_span, format!("`{sym}` cannot be applied to `{d}`"));
                }
                if op.is_comparison() {
                    Ty::S(Scalar::Bool)
                } else {
                    t
                }
            }
        }
    }
}

/// A binary operator of the subset (compound assignments are not).
fn bin_op(op: &syn::BinOp) -> Option<BinOp> {
    Some(match op {
        syn::BinOp::Add(_) => BinOp::Add,
        syn::BinOp::Sub(_) => BinOp::Sub,
        syn::BinOp::Mul(_) => BinOp::Mul,
        syn::BinOp::Div(_) => BinOp::Div,
        syn::BinOp::Rem(_) => BinOp::Rem,
        syn::BinOp::And(_) => BinOp::And,
        syn::BinOp::Or(_) => BinOp::Or,
        syn::BinOp::BitXor(_) => BinOp::BitXor,
        syn::BinOp::BitAnd(_) => BinOp::BitAnd,
        syn::BinOp::BitOr(_) => BinOp::BitOr,
        syn::BinOp::Shl(_) => BinOp::Shl,
        syn::BinOp::Shr(_) => BinOp::Shr,
        syn::BinOp::Eq(_) => BinOp::Eq,
        syn::BinOp::Lt(_) => BinOp::Lt,
        syn::BinOp::Le(_) => BinOp::Le,
        syn::BinOp::Ne(_) => BinOp::Ne,
        syn::BinOp::Ge(_) => BinOp::Ge,
        syn::BinOp::Gt(_) => BinOp::Gt,
        _ => return None,
    })
}

/// The operator of a compound assignment (`+=` → `+`).
pub fn compound_op(op: &syn::BinOp) -> Option<BinOp> {
    Some(match op {
        syn::BinOp::AddAssign(_) => BinOp::Add,
        syn::BinOp::SubAssign(_) => BinOp::Sub,
        syn::BinOp::MulAssign(_) => BinOp::Mul,
        syn::BinOp::DivAssign(_) => BinOp::Div,
        syn::BinOp::RemAssign(_) => BinOp::Rem,
        syn::BinOp::BitXorAssign(_) => BinOp::BitXor,
        syn::BinOp::BitAndAssign(_) => BinOp::BitAnd,
        syn::BinOp::BitOrAssign(_) => BinOp::BitOr,
        syn::BinOp::ShlAssign(_) => BinOp::Shl,
        syn::BinOp::ShrAssign(_) => BinOp::Shr,
        _ => return None,
    })
}
