//! Statements: blocks (a function body returns its tail value), `let` (inlined in
//! expression mode), local memory, expression statements, `if`, nested blocks, `return`
//! and `barrier()`. Loops and assignments are emitted in their own files.

use super::expr::{is_simple, strip_outer};
use super::{indent, Emitter};
use crate::ir::*;

impl Emitter<'_> {
    /// A function body: its statements, and its tail value returned (or evaluated).
    pub(super) fn block(&mut self, b: &Block, lines: &mut Vec<String>) {
        for s in &b.stmts {
            self.stmt(s, lines);
        }
        if let Some(t) = &b.tail {
            let mut pre = Vec::new();
            let v = self.expr(t, &mut pre);
            lines.extend(pre);
            if self.ret_is_value && !matches!(self.infer.shallow(t.ty), Ty::Unit | Ty::Never) {
                lines.push(format!("return {v};"));
            } else if !v.is_empty() {
                lines.push(format!("{v};"));
            }
        }
    }

    /// A block's statements and its tail value (not returned).
    pub(super) fn value_block(&mut self, b: &Block, lines: &mut Vec<String>) -> Option<String> {
        for s in &b.stmts {
            self.stmt(s, lines);
        }
        b.tail.as_ref().map(|t| self.expr(t, lines))
    }

    /// A nested block's lines (its tail value evaluated for its effects).
    pub(super) fn sub_block(&mut self, b: &Block) -> Vec<String> {
        let mut inner = Vec::new();
        for s in &b.stmts {
            self.stmt(s, &mut inner);
        }
        if let Some(t) = &b.tail {
            let v = self.expr(t, &mut inner);
            if !v.is_empty() {
                inner.push(format!("{v};"));
            }
        }
        inner
    }

    pub(super) fn stmt(&mut self, s: &Stmt, lines: &mut Vec<String>) {
        match s {
            Stmt::Let { name, ty, init } => self.let_stmt(name, *ty, init.as_ref(), lines),
            Stmt::StructLocal { name, cl_type, init } => {
                let value = match init {
                    StructInit::Fields(values) => {
                        let vals: Vec<String> = values.iter().map(|v| self.expr(v, lines)).collect();
                        format!("{{{}}}", vals.join(", "))
                    }
                    StructInit::Copy(other) => other.clone(),
                };
                lines.push(format!("{cl_type} {name} = {value};"));
            }
            Stmt::LocalArray { name, elem, len } => {
                // (A 16-bit float's values: `half` arrays need `cl_khr_fp16`.)
                let cl = self.array_value(*elem);
                lines.push(format!("__local {cl} {name}[{len}];"));
            }
            Stmt::ConstArray { name, elem, values } => self.const_array(name, *elem, values, lines),
            Stmt::Assign { place, op, value } => self.assign(place, *op, value, lines),
            Stmt::Expr(e) => {
                let v = self.expr(e, lines);
                if !v.is_empty() && !is_simple(e) {
                    lines.push(format!("{v};"));
                }
            }
            Stmt::If { cond, then, els } => self.if_stmt(cond, then, els.as_ref(), lines),
            Stmt::While { cond, body, label } => self.while_loop(cond, body, label, lines),
            Stmt::Loop { body, label } => self.loop_loop(body, label, lines),
            Stmt::Block(b) => {
                lines.push("{".into());
                let inner = self.sub_block(b);
                indent(lines, inner);
                lines.push("}".into());
            }
            Stmt::For(f) => self.for_loop(f, lines),
            // A labelled loop's targets are written by `loops`.
            Stmt::Break(None) => lines.push("break;".into()),
            Stmt::Continue(None) => lines.push("continue;".into()),
            Stmt::Break(Some(l)) => lines.push(format!("goto {l}_break;")),
            Stmt::Continue(Some(l)) => lines.push(format!("goto {l}_continue;")),
            Stmt::Return(v) => match v {
                Some(v) => {
                    let v = self.expr(v, lines);
                    lines.push(format!("return {v};"));
                }
                None => lines.push("return;".into()),
            },
            Stmt::Barrier => lines.push("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);".into()),
        }
    }

    /// `T name = v;`, or, in expression mode (`expr!`), `v` inlined at the name's uses.
    fn let_stmt(&mut self, name: &str, ty: Ty, init: Option<&Expr>, lines: &mut Vec<String>) {
        if let (Some(e), true) = (init, self.inline.is_some()) {
            let v = self.expr(e, lines);
            if let Some(map) = &mut self.inline {
                map.insert(name.to_string(), format!("({v})"));
            }
            return;
        }
        let t = self.scalar(ty);
        let cl = t.cl();
        match init {
            Some(e) => {
                let v = self.expr(e, lines);
                lines.push(format!("{cl} {name} = {v};"));
            }
            None => lines.push(format!("{cl} {name};")),
        }
    }

    /// `const T name[n] = {a, b, ..};`
    fn const_array(&mut self, name: &str, elem: Scalar, values: &[Expr], lines: &mut Vec<String>) {
        let cl = self.array_value(elem);
        let vals: Vec<String> = values.iter().map(|v| self.expr(v, lines)).collect();
        lines.push(format!(
            "const {cl} {name}[{}] = {{{}}};",
            values.len(),
            vals.join(", ")
        ));
    }

    fn if_stmt(&mut self, cond: &Expr, then: &Block, els: Option<&Block>, lines: &mut Vec<String>) {
        let c = strip_outer(self.expr(cond, lines));
        lines.push(format!("if ({c}) {{"));
        let inner = self.sub_block(then);
        indent(lines, inner);
        if let Some(els) = els {
            lines.push("} else {".into());
            let inner = self.sub_block(els);
            indent(lines, inner);
        }
        lines.push("}".into());
    }
}
