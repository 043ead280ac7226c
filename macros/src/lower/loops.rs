//! Loops: `while`, `loop`, `for` over an integer range (with `step_by`), labels, and the
//! jumps `break` and `continue`. A labelled loop gets an OpenCL C name for the `goto`
//! targets that `emit` writes around it (C has no labelled `break`).

use std::collections::HashMap;

use super::{strip_parens, Binding, Lowerer};
use crate::diag::Spanned;
use crate::ir::*;

impl Lowerer<'_> {
    pub(super) fn while_loop(&mut self, w: &syn::ExprWhile, out: &mut Vec<Stmt>) {
        if let syn::Expr::Let(l) = &*w.cond {
            self.errors.add(
                l.span(),
                "`while let` is not supported in kernels; use `while cond`",
            );
            return;
        }
        let cond = self.expr(&w.cond);
        self.unify(Ty::S(Scalar::Bool), cond.ty, cond.span, " in `while` condition");
        let label = self.enter_loop(w.label.as_ref());
        let body = self.block(&w.body, false);
        self.leave_loop();
        self.unit_block(&body);
        out.push(Stmt::While { cond, body, label });
    }

    /// `loop { .. }`.
    pub(super) fn loop_loop(&mut self, l: &syn::ExprLoop, out: &mut Vec<Stmt>) {
        let label = self.enter_loop(l.label.as_ref());
        let body = self.block(&l.body, false);
        self.leave_loop();
        self.unit_block(&body);
        out.push(Stmt::Loop { body, label });
    }

    /// `for i in a..b`, `a..=b` or `(a..b).step_by(s)`: `i` has the bounds' integer type,
    /// the step is a `usize`.
    pub(super) fn for_loop(&mut self, f: &syn::ExprForLoop, out: &mut Vec<Stmt>) {
        let Some((name, mutable)) = self.for_pattern(&f.pat) else {
            return;
        };
        let Some((r, step)) = self.for_range(&f.expr) else {
            return;
        };
        let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
        let (Some(start), Some(end)) = (&r.start, &r.end) else {
            self.errors.add(r.span(), "`for` ranges need both bounds: `a..b`");
            return;
        };
        let start = self.expr(start);
        let end = self.expr(end);
        self.unify(start.ty, end.ty, end.span, " in range");
        let ty = start.ty;
        if !self.infer.is_int(ty) && self.infer.shallow(ty) != Ty::Never {
            self.errors.add(
                r.span(),
                format!(
                    "`for` ranges must be of an integer type, found `{}`",
                    self.infer.describe(ty)
                ),
            );
        }
        let step = step.map(|s| {
            let s = self.expr(s);
            self.unify(
                Ty::S(Scalar::Usize),
                s.ty,
                s.span,
                " in `step_by` (it takes a `usize`)",
            );
            s
        });
        self.scopes.push(HashMap::new());
        let cname = match name.as_deref() {
            Some(n) => self.fresh(n),
            None => self.fresh_internal("i"),
        };
        if let Some(n) = &name {
            self.bind(
                n,
                Binding::Scalar {
                    cname: cname.clone(),
                    ty,
                    mutable,
                    param: false,
                },
            );
        }
        let label = self.enter_loop(f.label.as_ref());
        let body = self.block(&f.body, false);
        self.leave_loop();
        self.scopes.pop();
        self.unit_block(&body);
        out.push(Stmt::For(ForLoop {
            var: cname,
            ty,
            start,
            end,
            inclusive,
            step,
            body,
            label,
        }));
    }

    /// The variable a `for` loop binds (`None` for `_`) and whether it is `mut`.
    fn for_pattern(&mut self, pat: &syn::Pat) -> Option<(Option<String>, bool)> {
        match pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                Some((Some(pi.ident.to_string()), pi.mutability.is_some()))
            }
            syn::Pat::Wild(_) => Some((None, false)),
            other => {
                self.errors.add(
                    other.span(),
                    "unsupported pattern; `for` loops bind a plain name: `for i in a..b`",
                );
                None
            }
        }
    }

    /// The range a `for` loop iterates over and its `step_by` argument.
    fn for_range<'e>(&mut self, iter: &'e syn::Expr) -> Option<(&'e syn::ExprRange, Option<&'e syn::Expr>)> {
        let (range, step) = match strip_parens(iter) {
            syn::Expr::MethodCall(m) if m.method == "step_by" => {
                if m.args.len() != 1 {
                    self.errors.add(m.span(), "`step_by` takes one argument");
                    return None;
                }
                (strip_parens(&m.receiver), Some(&m.args[0]))
            }
            e => (e, None),
        };
        let syn::Expr::Range(r) = range else {
            let hint = match range {
                syn::Expr::Path(p) => p
                    .path
                    .get_ident()
                    .filter(|id| matches!(self.lookup(&id.to_string()), Some(Binding::Array { .. })))
                    .map(|id| format!("; iterate over the indices: `for i in 0..{id}.len()`"))
                    .unwrap_or_default(),
                _ => String::new(),
            };
            self.errors.add(
                iter.span(),
                format!(
                    "unsupported iterator; `for` loops iterate over an integer range `a..b`, `a..=b` or \
                     `(a..b).step_by(s)`{hint}"
                ),
            );
            return None;
        };
        Some((r, step))
    }

    /// Loop bodies are statements: a tail value is an error.
    fn unit_block(&mut self, b: &Block) {
        if let Some(t) = &b.tail {
            if !matches!(self.infer.shallow(t.ty), Ty::Unit | Ty::Never) {
                self.errors
                    .add(t.span, "loop bodies cannot end in a value; add `;`");
            }
        }
    }

    /// Enters a loop; a labelled loop gets an OpenCL C name for its `goto` targets.
    fn enter_loop(&mut self, label: Option<&syn::Label>) -> Option<String> {
        self.loop_depth += 1;
        let l = label.map(|l| {
            let rust = l.name.ident.to_string();
            let cname = self.fresh_internal(&rust);
            (rust, cname)
        });
        let cname = l.as_ref().map(|(_, c)| c.clone());
        self.labels.push(l);
        cname
    }

    fn leave_loop(&mut self) {
        self.loop_depth -= 1;
        self.labels.pop();
    }

    pub(super) fn break_stmt(&mut self, b: &syn::ExprBreak, out: &mut Vec<Stmt>) {
        let label = self.jump_label(b.label.as_ref());
        if let Some(v) = &b.expr {
            self.errors
                .add(v.span(), "`break` with a value is not supported in kernels");
        }
        if self.loop_depth == 0 {
            self.errors.add(b.span(), "`break` outside of a loop");
        }
        out.push(Stmt::Break(label));
    }

    pub(super) fn continue_stmt(&mut self, c: &syn::ExprContinue, out: &mut Vec<Stmt>) {
        let label = self.jump_label(c.label.as_ref());
        if self.loop_depth == 0 {
            self.errors.add(c.span(), "`continue` outside of a loop");
        }
        out.push(Stmt::Continue(label));
    }

    /// The OpenCL C name of the loop a `break 'l` / `continue 'l` refers to.
    fn jump_label(&mut self, label: Option<&syn::Lifetime>) -> Option<String> {
        let l = label?;
        let rust = l.ident.to_string();
        let found = self
            .labels
            .iter()
            .rev()
            .flatten()
            .find(|(r, _)| *r == rust)
            .map(|(_, c)| c.clone());
        if found.is_none() {
            self.errors
                .add(l.span(), format!("use of undeclared label `{l}`"));
        }
        found
    }
}
