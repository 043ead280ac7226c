//! Blocks in an `expr!`: `let` bindings (names that are no operands) ending in a value,
//! and `if`/`else`, which becomes a select.

use std::collections::HashSet;

use super::{element_type, Checker};
use crate::diag::Spanned;
use crate::lower::ops::compound_op;
use crate::lower::{is_statement, strip_parens};

impl Checker {
    /// `if` needs an `else`: it becomes a select.
    pub(super) fn if_expr(&mut self, i: &syn::ExprIf) {
        if let syn::Expr::Let(l) = &*i.cond {
            self.errors.add(
                l.span(),
                "`if let` is not supported in expr!; use a condition: `if x > 0.0 { .. } else { .. }`",
            );
        } else {
            self.expr(&i.cond);
        }
        self.block(&i.then_branch);
        match &i.else_branch {
            Some((_, els)) => self.expr(els),
            None => self.errors.add(
                i.span(),
                "`if` without `else` has no value; in expr! every `if` needs an `else` branch \
                 (it becomes a select `c ? a : b`)",
            ),
        }
    }

    pub(super) fn block(&mut self, b: &syn::Block) {
        self.scopes.push(HashSet::new());
        let n = b.stmts.len();
        for (i, s) in b.stmts.iter().enumerate() {
            match s {
                syn::Stmt::Local(l) => self.local(l),
                syn::Stmt::Expr(e, None) if i + 1 == n => self.expr(e),
                syn::Stmt::Expr(e, _) => match strip_parens(e) {
                    // Statements that are not supported anyway: say why.
                    x if is_statement(x) || matches!(x, syn::Expr::Macro(_)) => self.expr(e),
                    syn::Expr::Binary(b) if compound_op(&b.op).is_some() => self.expr(e),
                    _ => self.errors.add(
                        s.span(),
                        "statements are not supported in expr!: a block holds `let` bindings and ends in \
                         its value (no `;` after it)",
                    ),
                },
                syn::Stmt::Item(item) => self.errors.add(
                    item.span(),
                    "items (`fn`, `const`, `use`, ...) are not supported inside expr!; define helpers as \
                     `#[device_fn]` functions before it",
                ),
                syn::Stmt::Macro(m) => self.errors.add(
                    m.span(),
                    "macros are not supported inside expr!: the expression is translated to OpenCL C at \
                     compile time",
                ),
            }
        }
        match b.stmts.last() {
            Some(syn::Stmt::Expr(_, None)) => {}
            _ => self.errors.add(
                b.span(),
                "this block has no value; in expr! a block ends in an expression (without `;`)",
            ),
        }
        self.scopes.pop();
    }

    fn local(&mut self, l: &syn::Local) {
        let (pat, ty) = match &l.pat {
            syn::Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            p => (p, None),
        };
        if let Some(ty) = ty {
            if let Err(e) = element_type(ty, "`let` bindings") {
                self.errors.push(e);
            }
        }
        match &l.init {
            Some(init) => {
                if let Some((_, d)) = &init.diverge {
                    self.errors
                        .add(d.span(), "`let ... else` is not supported in expr!");
                }
                self.expr(&init.expr);
            }
            None => self.errors.add(
                l.span(),
                "`let` without a value is not supported in expr! (there are no assignments): `let t = x * 2.0;`",
            ),
        }
        match pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                if let Some(m) = &pi.mutability {
                    self.errors.add(
                        m.span(),
                        "`let mut` is not supported in expr! (there are no assignments); bind a new name instead",
                    );
                }
                if let Some(scope) = self.scopes.last_mut() {
                    scope.insert(pi.ident.to_string());
                }
            }
            syn::Pat::Wild(_) => {}
            other => self.errors.add(
                other.span(),
                "unsupported pattern; `let` in expr! binds a plain name: `let t = ...;`",
            ),
        }
    }
}
