//! Literals and constants: integer, float and `bool` literals with their inference
//! variables, the constants of the scalar types (`f32::consts::PI`, `i32::MAX`,
//! `c32::I`, ...), and the final check that every integer literal fits the type it was
//! inferred to have.

use super::{err_expr, Lowerer};
use crate::diag::Sp;
use crate::ir::*;

/// The suffixes a literal may have, for messages: the real scalar types.
const SUFFIXES: &str = "f32, f64, i32, u32, i64, u64, i8, u8, i16, u16, f16, bf16, bool or usize";

impl Lowerer<'_> {
    /// Checks that integer literals fit their final types (known only once the whole
    /// body is lowered, as in Rust).
    pub fn finish(&mut self) {
        for (v, ty, span) in std::mem::take(&mut self.int_lits) {
            if let Some(s) = self.infer.scalar(ty) {
                if s.is_int() {
                    let (lo, hi) = s.int_range();
                    if v < lo || v > hi {
                        if v < 0 && lo == 0 {
                            self.errors.add(
                                span,
                                format!("cannot apply unary operator `-` to type `{}`", s.rust()),
                            );
                        } else {
                            self.errors
                                .add(span, format!("literal out of range for `{}`", s.rust()));
                        }
                    }
                }
            }
        }
    }

    /// A literal, negated if `neg` (`-1` is one literal, as in Rust).
    pub(super) fn lit(&mut self, l: &syn::Lit, span: Sp, neg: bool) -> Expr {
        match l {
            syn::Lit::Int(i) => self.int_lit(i, span, neg),
            syn::Lit::Float(f) => self.float_lit(f, span, neg),
            syn::Lit::Bool(b) => {
                if neg {
                    self.errors
                        .add(span, "cannot apply unary operator `-` to type `bool`");
                }
                Expr {
                    kind: ExprKind::Bool(b.value),
                    ty: Ty::S(Scalar::Bool),
                    span,
                }
            }
            _ => {
                self.errors.add(
                    span,
                    "unsupported literal; kernels support integer, float and `bool` literals",
                );
                err_expr(span)
            }
        }
    }

    /// An integer literal: of its suffix's type (a float suffix makes it a float), else
    /// of an integer inference variable; its value is checked against the final type by
    /// `finish`.
    fn int_lit(&mut self, i: &syn::LitInt, span: Sp, neg: bool) -> Expr {
        let ty = match i.suffix() {
            "" => self.infer.fresh(VarKind::Int),
            s => match Scalar::from_rust(s) {
                Some(t) if t.is_int() => Ty::S(t),
                Some(t) if t.is_float() => Ty::S(t),
                _ => {
                    self.errors.add(
                        span,
                        format!("unsupported literal suffix `{s}`; use one of {SUFFIXES}"),
                    );
                    Ty::Never
                }
            },
        };
        if self.infer.is_float(ty) {
            let v = i.base10_parse::<f64>().unwrap_or(0.0);
            return Expr {
                kind: ExprKind::Float(if neg { -v } else { v }),
                ty,
                span,
            };
        }
        // Literal patterns carry their sign in the token (`-1 => ...`).
        let digits = i.base10_digits();
        let (neg, digits) = match digits.strip_prefix('-') {
            Some(d) => (!neg, d),
            None => (neg, digits),
        };
        let v = match digits.parse::<u128>() {
            Ok(v) if v <= u64::MAX as u128 => v as i128,
            _ => {
                self.errors
                    .add(span, "integer literal is too large (at most 64 bits)");
                0
            }
        };
        let v = if neg { -v } else { v };
        self.int_lits.push((v, ty, span));
        Expr {
            kind: ExprKind::Int(v),
            ty,
            span,
        }
    }

    /// A float literal: of its suffix's type, else of a float inference variable.
    fn float_lit(&mut self, f: &syn::LitFloat, span: Sp, neg: bool) -> Expr {
        let ty = match f.suffix() {
            "" => self.infer.fresh(VarKind::Float),
            "f32" => Ty::S(Scalar::F32),
            "f64" => Ty::S(Scalar::F64),
            s => {
                self.errors.add(
                    span,
                    format!("unsupported float literal suffix `{s}`; use `f32` or `f64`"),
                );
                Ty::Never
            }
        };
        let v = f.base10_parse::<f64>().unwrap_or(0.0);
        Expr {
            kind: ExprKind::Float(if neg { -v } else { v }),
            ty,
            span,
        }
    }

    pub(super) fn constant(&mut self, segs: &[&str], span: Sp) -> Option<Expr> {
        let (ty, name) = match segs {
            [t, "consts", c] => (Scalar::from_rust(t).filter(|t| t.is_float())?, *c),
            [t, c] => (Scalar::from_rust(t).filter(|t| *t != Scalar::Bool)?, *c),
            _ => return None,
        };
        if ty.is_complex() {
            return complex_constant(ty, name, span);
        }
        use std::f64::consts as k;
        if ty.is_float() {
            let is32 = ty == Scalar::F32;
            if let Some(v) = narrow_float_constant(ty, name) {
                return Some(Expr {
                    kind: ExprKind::Float(v),
                    ty: Ty::S(ty),
                    span,
                });
            }
            let v = match name {
                "PI" => k::PI,
                "TAU" => k::TAU,
                "E" => k::E,
                "SQRT_2" => k::SQRT_2,
                "FRAC_1_SQRT_2" => k::FRAC_1_SQRT_2,
                "LN_2" => k::LN_2,
                "LN_10" => k::LN_10,
                "LOG2_E" => k::LOG2_E,
                "LOG10_E" => k::LOG10_E,
                "LOG2_10" => k::LOG2_10,
                "LOG10_2" => k::LOG10_2,
                "FRAC_PI_2" => k::FRAC_PI_2,
                "FRAC_PI_3" => k::FRAC_PI_3,
                "FRAC_PI_4" => k::FRAC_PI_4,
                "FRAC_PI_6" => k::FRAC_PI_6,
                "FRAC_PI_8" => k::FRAC_PI_8,
                "FRAC_1_PI" => k::FRAC_1_PI,
                "FRAC_2_PI" => k::FRAC_2_PI,
                "FRAC_2_SQRT_PI" => k::FRAC_2_SQRT_PI,
                "MAX" if is32 => f32::MAX as f64,
                "MIN" if is32 => f32::MIN as f64,
                "MIN_POSITIVE" if is32 => f32::MIN_POSITIVE as f64,
                "EPSILON" if is32 => f32::EPSILON as f64,
                "MAX" => f64::MAX,
                "MIN" => f64::MIN,
                "MIN_POSITIVE" => f64::MIN_POSITIVE,
                "EPSILON" => f64::EPSILON,
                "INFINITY" => f64::INFINITY,
                "NEG_INFINITY" => f64::NEG_INFINITY,
                "NAN" => f64::NAN,
                // (num-traits' names, for code generic over the element type.)
                "ZERO" => 0.0,
                "ONE" => 1.0,
                _ => return None,
            };
            return Some(Expr {
                kind: ExprKind::Float(v),
                ty: Ty::S(ty),
                span,
            });
        }
        let (lo, hi) = ty.int_range();
        let v = match name {
            "MAX" => hi,
            "MIN" => lo,
            "ZERO" => 0,
            "ONE" => 1,
            "BITS" => {
                return Some(Expr {
                    kind: ExprKind::Int(ty.bits() as i128),
                    ty: Ty::S(Scalar::U32),
                    span,
                });
            }
            _ => return None,
        };
        Some(Expr {
            kind: ExprKind::Int(v),
            ty: Ty::S(ty),
            span,
        })
    }
}

/// `num-complex`'s constants `ZERO`, `ONE` and `I` of complex type `ty`.
fn complex_constant(ty: Scalar, name: &str, span: Sp) -> Option<Expr> {
    let (re, im) = match name {
        "ZERO" => (0.0, 0.0),
        "ONE" => (1.0, 0.0),
        "I" => (0.0, 1.0),
        _ => return None,
    };
    let part = |v: f64| Expr {
        kind: ExprKind::Float(v),
        ty: Ty::S(ty.real()),
        span,
    };
    Some(Expr {
        kind: ExprKind::Builtin(Builtin::Complex(ComplexFn::New), vec![part(re), part(im)]),
        ty: Ty::S(ty),
        span,
    })
}

/// The constants of the 16-bit floats that differ from `f32`'s (`half::f16::MAX`,
/// `EPSILON`, ...), and `NEG_ONE`; the others (`PI`, `ZERO`, ...) are rounded to the type
/// where emitted.
fn narrow_float_constant(ty: Scalar, name: &str) -> Option<f64> {
    use half::{bf16, f16};
    let v = match (ty, name) {
        (Scalar::F16 | Scalar::BF16, "NEG_ONE") => -1.0,
        (Scalar::F16, "MAX") => f16::MAX.to_f64(),
        (Scalar::F16, "MIN") => f16::MIN.to_f64(),
        (Scalar::F16, "MIN_POSITIVE") => f16::MIN_POSITIVE.to_f64(),
        (Scalar::F16, "EPSILON") => f16::EPSILON.to_f64(),
        (Scalar::F16, "MIN_POSITIVE_SUBNORMAL") => f16::MIN_POSITIVE_SUBNORMAL.to_f64(),
        (Scalar::BF16, "MAX") => bf16::MAX.to_f64(),
        (Scalar::BF16, "MIN") => bf16::MIN.to_f64(),
        (Scalar::BF16, "MIN_POSITIVE") => bf16::MIN_POSITIVE.to_f64(),
        (Scalar::BF16, "EPSILON") => bf16::EPSILON.to_f64(),
        (Scalar::BF16, "MIN_POSITIVE_SUBNORMAL") => bf16::MIN_POSITIVE_SUBNORMAL.to_f64(),
        _ => return None,
    };
    Some(v)
}
