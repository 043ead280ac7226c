//! Expressions: the dispatch over the IR's expression kinds, names, array reads, and
//! `if`/`else` and blocks as values (a select `c ? a : b` when both branches are plain
//! values, else statements before the use and a temporary). Operators, literals and calls
//! are emitted in their own files.

use super::literal::{float_literal, int_literal};
use super::{indent, Emitter};
use crate::ir::*;

impl Emitter<'_> {
    /// An expression's value; statements it needs first go to `pre`. Unit expressions
    /// return an empty string.
    pub(super) fn expr(&mut self, e: &Expr, pre: &mut Vec<String>) -> String {
        match &e.kind {
            ExprKind::Int(v) => {
                let s = self.scalar(e.ty);
                int_literal(*v, s)
            }
            ExprKind::Float(v) => {
                let s = self.scalar(e.ty);
                float_literal(*v, s)
            }
            ExprKind::Bool(b) => (if *b { "true" } else { "false" }).into(),
            ExprKind::Var(n) => match self.inline.as_ref().and_then(|m| m.get(n)) {
                Some(v) => v.clone(),
                None => n.clone(),
            },
            ExprKind::Len(n) => n.clone(),
            ExprKind::Index(a, idx) => {
                let i = self.expr(idx, pre);
                self.read(a, &i)
            }
            ExprKind::Unary(op, v) => self.unary(*op, v, e.ty, pre),
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), a, b) => self.short_circuit(*op, a, b, pre),
            ExprKind::Binary(op, a, b) => {
                let t = self.scalar(a.ty);
                let rt = self.scalar(b.ty);
                let x = self.expr(a, pre);
                let y = self.expr(b, pre);
                self.binary(*op, t, rt, x, y)
            }
            ExprKind::Cast(v) => self.cast(v, e.ty, pre),
            ExprKind::Builtin(b, args) => self.builtin(*b, e.ty, args, pre),
            ExprKind::Call(name, args) => self.call(name, args, pre),
            ExprKind::Atomic {
                op,
                array,
                local,
                idx,
                vals,
            } => self.atomic(*op, array, *local, idx, vals, pre),
            ExprKind::Collective(op, args) => self.collective(*op, e.ty, args, pre),
            ExprKind::If(c, then, els) => self.if_expr(c, then, els, e.ty, pre),
            ExprKind::Block(b) => self.block_expr(b, e.ty, pre),
        }
    }

    /// `if c { a } else { b }` of type `ty`, as a value.
    fn if_expr(&mut self, c: &Expr, then: &Block, els: &Block, ty: Ty, pre: &mut Vec<String>) -> String {
        let cond = strip_outer(self.expr(c, pre));
        let mut tl = Vec::new();
        let tv = self.value_block(then, &mut tl);
        let mut el = Vec::new();
        let ev = self.value_block(els, &mut el);
        let shallow = self.infer.shallow(ty);
        if let (true, true, Some(tv), Some(ev)) = (tl.is_empty(), el.is_empty(), &tv, &ev) {
            return format!("({cond} ? {tv} : {ev})");
        }
        let t = self.temp();
        let unit = matches!(shallow, Ty::Unit | Ty::Never);
        if !unit {
            let s = self.scalar(ty);
            pre.push(format!("{} {t};", s.cl()));
        }
        pre.push(format!("if ({cond}) {{"));
        if let (Some(v), false) = (tv, unit) {
            tl.push(format!("{t} = {v};"));
        }
        indent(pre, tl);
        pre.push("} else {".into());
        if let (Some(v), false) = (ev, unit) {
            el.push(format!("{t} = {v};"));
        }
        indent(pre, el);
        pre.push("}".into());
        if unit {
            String::new()
        } else {
            t
        }
    }

    /// `{ stmts; tail }` of type `ty`, as a value. In expression mode (and without
    /// statements) only the tail is a value; otherwise the block's statements go to `pre`
    /// in a C block, and its value to a temporary.
    fn block_expr(&mut self, b: &Block, ty: Ty, pre: &mut Vec<String>) -> String {
        let unit = matches!(self.infer.shallow(ty), Ty::Unit | Ty::Never);
        if b.stmts.is_empty() || self.inline.is_some() {
            for s in &b.stmts {
                self.stmt(s, pre);
            }
            return match &b.tail {
                Some(t) => self.expr(t, pre),
                None => String::new(),
            };
        }
        if unit {
            let mut inner = Vec::new();
            self.block(b, &mut inner);
            pre.push("{".into());
            indent(pre, inner);
            pre.push("}".into());
            return String::new();
        }
        let s = self.scalar(ty);
        let t = self.temp();
        pre.push(format!("{} {t};", s.cl()));
        let mut inner = Vec::new();
        if let Some(v) = self.value_block(b, &mut inner) {
            inner.push(format!("{t} = {v};"));
        }
        pre.push("{".into());
        indent(pre, inner);
        pre.push("}".into());
        t
    }
}

/// `(a == b)` → `a == b`, for conditions (avoids clang's `-Wparentheses-equality`).
pub(super) fn strip_outer(s: String) -> String {
    let b = s.as_bytes();
    if b.first() != Some(&b'(') || b.last() != Some(&b')') {
        return s;
    }
    let mut depth = 0i32;
    for (i, c) in b.iter().enumerate() {
        match c {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 && i + 1 != b.len() {
                    return s;
                }
            }
            _ => {}
        }
    }
    s[1..s.len() - 1].to_string()
}

/// Whether an expression is a plain value (evaluating it twice, or not at all, changes
/// nothing).
pub(super) fn is_simple(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Var(_) | ExprKind::Len(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outer_parentheses() {
        assert_eq!(strip_outer("(a == b)".into()), "a == b");
        assert_eq!(strip_outer("(a) == (b)".into()), "(a) == (b)");
        assert_eq!(strip_outer("x".into()), "x");
    }
}
