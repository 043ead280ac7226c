//! Places: assignments to variables and array elements (`op=` evaluates a complex index
//! once), and array reads (`bool` elements are stored as `uchar`).

use super::expr::is_simple;
use super::Emitter;
use crate::ir::*;

impl Emitter<'_> {
    /// `place = value` or `place op= value` (the operation with Rust's semantics).
    pub(super) fn assign(&mut self, place: &Place, op: Option<BinOp>, value: &Expr, lines: &mut Vec<String>) {
        let v = self.expr(value, lines);
        match place {
            Place::Var(n, ty) => match op {
                None => lines.push(format!("{n} = {v};")),
                Some(op) => {
                    let t = self.scalar(*ty);
                    let rhs_t = self.scalar(value.ty);
                    let e = self.binary(op, t, rhs_t, n.clone(), v);
                    lines.push(format!("{n} = {e};"));
                }
            },
            Place::Index(a, idx) => {
                let mut i = self.expr(idx, lines);
                if op.is_some() && !is_simple(idx) {
                    let t = self.temp();
                    lines.push(format!("ulong {t} = {i};"));
                    i = t;
                }
                let cur = self.read(a, &i);
                let v = match op {
                    None => v,
                    Some(op) => {
                        let rhs_t = self.scalar(value.ty);
                        self.binary(op, a.elem, rhs_t, cur, v)
                    }
                };
                if a.elem == Scalar::Bool {
                    lines.push(format!("{}[{i}] = (uchar)({v});", a.name));
                } else {
                    lines.push(format!("{}[{i}] = {v};", a.name));
                }
            }
        }
    }

    pub(super) fn read(&self, a: &ArrayRef, i: &str) -> String {
        if a.elem == Scalar::Bool {
            format!("({}[{i}] != 0)", a.name)
        } else {
            format!("{}[{i}]", a.name)
        }
    }
}
