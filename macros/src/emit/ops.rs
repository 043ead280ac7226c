//! Operators and casts with Rust's semantics where OpenCL C differs: signed `+ - *` and
//! negation wrap (computed unsigned: signed overflow is undefined in C), integer `/` and
//! `%` by zero (and `MIN / -1`) give 0 through helper functions instead of trapping or
//! undefined behaviour, shift amounts are masked to the width, float `%` is `fmod`,
//! `&&`/`||` short-circuit even when the right side needs statements, and float→int
//! casts saturate with NaN → 0. Integers narrower than 32 bits (which C promotes to
//! `int`) wrap in their own width, unsigned ones too; a 16-bit float is a `float` value
//! (excess precision) and a conversion to it rounds to the nearest (`from_f32`, `as T`
//! in a generic function).

use lazycl_clc as clc;

use super::{indent, Emitter};
use crate::ir::*;

impl Emitter<'_> {
    /// `-x` / `!x` on an operand of type `ty`.
    pub(super) fn unary(&mut self, op: UnOp, v: &Expr, ty: Ty, pre: &mut Vec<String>) -> String {
        let t = self.scalar(ty);
        let x = self.expr(v, pre);
        match op {
            UnOp::Neg if t.is_int() => format!("({})", clc::wrapping_neg(t.elem(), &format!("({x})"))),
            UnOp::Neg => format!("(-{x})"),
            UnOp::Not if t == Scalar::Bool => format!("(!{x})"),
            UnOp::Not if t.bits() < 32 => format!("(({})~{x})", t.cl()),
            UnOp::Not => format!("(~{x})"),
        }
    }

    /// `a && b` / `a || b`: `b` is evaluated only when needed, also when it needs
    /// statements (then into a temporary under an `if`).
    pub(super) fn short_circuit(&mut self, op: BinOp, a: &Expr, b: &Expr, pre: &mut Vec<String>) -> String {
        let x = self.expr(a, pre);
        let mut rpre = Vec::new();
        let y = self.expr(b, &mut rpre);
        if rpre.is_empty() {
            return format!("({x} {} {y})", op.c());
        }
        let t = self.temp();
        pre.push(format!("bool {t} = {x};"));
        pre.push(format!("if ({}{t}) {{", if op == BinOp::And { "" } else { "!" }));
        rpre.push(format!("{t} = {y};"));
        indent(pre, rpre);
        pre.push("}".into());
        t
    }

    /// A binary operation on operands of type `t` (the right one of type `rt` for shifts,
    /// and beside a complex number, a real of its parts' type).
    pub(super) fn binary(&mut self, op: BinOp, t: Scalar, rt: Scalar, a: String, b: String) -> String {
        if t.is_complex() || rt.is_complex() {
            return self.complex_binary(op, t, rt, a, b);
        }
        let cl = t.cl();
        match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul if t.is_signed_int() || (t.is_int() && t.bits() < 32) => {
                let (a, b) = (format!("({a})"), format!("({b})"));
                format!("({})", clc::wrapping(t.elem(), op.c(), &a, &b))
            }
            BinOp::Div if t.is_int() => self.call_helper(clc::div(t.elem()), &[&a, &b]),
            BinOp::Rem if t.is_int() => self.call_helper(clc::rem(t.elem()), &[&a, &b]),
            BinOp::Rem if t.is_float() => format!("fmod({a}, {b})"),
            BinOp::Shl | BinOp::Shr => {
                let mask = t.bits() - 1;
                let sh = if rt.is_int() {
                    format!("(({b}) & {mask})")
                } else {
                    b
                };
                if op == BinOp::Shl && t.is_signed_int() {
                    let ut = t.cl_unsigned();
                    let shifted = format!("(({ut})({a}) << {sh})");
                    format!("({})", clc::from_unsigned(t.elem(), &shifted))
                } else if op == BinOp::Shl && t.bits() < 32 {
                    format!("(({cl})(({a}) << {sh}))")
                } else {
                    format!("(({a}) {} {sh})", op.c())
                }
            }
            _ => format!("({a} {} {b})", op.c()),
        }
    }

    /// `v as T`, `T` being `ty`.
    pub(super) fn cast(&mut self, v: &Expr, ty: Ty, pre: &mut Vec<String>) -> String {
        let from = self.scalar(v.ty);
        let to = self.scalar(ty);
        let x = self.expr(v, pre);
        if from == to {
            x
        } else if let (true, ExprKind::Float(f)) = (to.is_narrow_float(), &v.kind) {
            // A literal rounded once, here (`1.5 as T`).
            super::literal::float_literal(*f, to)
        } else if let (true, ExprKind::Int(n)) = (to.is_narrow_float(), &v.kind) {
            super::literal::float_literal(*n as f64, to)
        } else if let Some(rounded) = clc::cast_to_narrow(from.elem(), to.elem(), &format!("({x})"), self) {
            rounded
        } else if from.cl() == to.cl() && from != Scalar::Bool {
            x
        } else if from.is_float() && to.is_int() {
            // Saturating, NaN → 0 (some drivers' convert_*_sat map NaN elsewhere).
            self.call_helper(clc::int_from_float(to.elem(), from.elem()), &[&x])
        } else if to.is_signed_int() && to.bits() < 32 && from.bits() >= to.bits() && from != Scalar::Bool {
            // (C's conversion of an out-of-range value to a signed type is the
            // implementation's: narrowed unsigned, then reinterpreted.)
            format!("({})", clc::from_unsigned(to.elem(), &format!("({x})")))
        } else {
            format!("(({})({x}))", to.cl())
        }
    }
}
