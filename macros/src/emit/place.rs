//! Places: assignments to variables and array elements (`op=` evaluates a complex index
//! once), and array reads (`bool` elements are stored as `uchar`; 16-bit floats are
//! `half`/`ushort` in global memory, read with `lazycl_clc::load` and written rounded to
//! the nearest with `lazycl_clc::store`, and `float` values in local and constant arrays,
//! rounded where written).

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
                // (An element of the same 16-bit type is its value already.)
                let exact = op.is_none() && matches!(&value.kind, ExprKind::Index(b, _) if b.elem == a.elem);
                let store = self.write(a, &i, &v, exact);
                lines.push(store);
            }
        }
    }

    /// The statement that writes value `v` as element `i` of `a`.
    fn write(&mut self, a: &ArrayRef, i: &str, v: &str, exact: bool) -> String {
        let t = a.elem.elem();
        if a.elem == Scalar::Bool {
            format!("{}[{i}] = (uchar)({v});", a.name)
        } else if a.global {
            lazycl_clc::store(t, &a.name, i, v, self)
        } else if exact {
            format!("{}[{i}] = {v};", a.name)
        } else {
            let v = lazycl_clc::cast_to_narrow(DType::F32, t, v, self).unwrap_or_else(|| v.to_string());
            format!("{}[{i}] = {v};", a.name)
        }
    }

    pub(super) fn read(&self, a: &ArrayRef, i: &str) -> String {
        if a.elem == Scalar::Bool {
            format!("({}[{i}] != 0)", a.name)
        } else if a.global {
            lazycl_clc::load(a.elem.elem(), &a.name, i)
        } else {
            format!("{}[{i}]", a.name)
        }
    }
}
