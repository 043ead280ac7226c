//! Statements: the function body, blocks and their tail values, `let`, expressions in
//! statement position, `return` and `barrier()`. Loops, assignments and local memory are
//! lowered in their own files; this one dispatches to them.

use std::collections::HashMap;

use super::local_memory::local_memory_decl;
use super::ops::compound_op;
use super::{is_statement, pattern_idents, strip_parens, Binding, Lowerer};
use crate::diag::Spanned;
use crate::ir::*;
use crate::signature::{scalar_type, FnKind};

impl Lowerer<'_> {
    /// The function body: statements, and (device functions) a tail value.
    pub fn body(&mut self, b: &syn::Block) -> Block {
        let block = self.block(b, true);
        if let Some(tail) = &block.tail {
            match self.ret {
                Some(r) => self.unify(Ty::S(r), tail.ty, tail.span, " in the returned value"),
                None => {
                    if self.infer.shallow(tail.ty) != Ty::Unit && self.infer.shallow(tail.ty) != Ty::Never {
                        let what = if self.kind == FnKind::Kernel {
                            "kernels"
                        } else {
                            "this device function"
                        };
                        self.errors.add(
                            tail.span,
                            format!("{what} return nothing, but this block ends in a value; add `;`"),
                        );
                    }
                }
            }
        } else if let Some(r) = self.ret {
            if !block_diverges(&block) {
                self.errors.add(
                    b.brace_token.span.close(),
                    format!(
                        "this device function must return `{}`: end it with a value",
                        r.rust()
                    ),
                );
            }
        }
        block
    }

    /// A block in its own scope; `top` is the kernel body itself (where local memory may
    /// be declared).
    pub(super) fn block(&mut self, b: &syn::Block, top: bool) -> Block {
        self.scopes.push(HashMap::new());
        let mut out = Block::default();
        let n = b.stmts.len();
        for (i, s) in b.stmts.iter().enumerate() {
            if i + 1 == n {
                if let syn::Stmt::Expr(e, None) = s {
                    if let Some(tail) = self.tail(e, &mut out.stmts) {
                        out.tail = Some(Box::new(tail));
                    }
                    continue;
                }
            }
            self.stmt(s, &mut out.stmts, top);
        }
        self.scopes.pop();
        out
    }

    pub(super) fn block_ty(&self, b: &Block) -> Ty {
        match &b.tail {
            Some(t) => t.ty,
            None if block_diverges(b) => Ty::Never,
            None => Ty::Unit,
        }
    }

    /// A block's last expression: a value, or a statement written without `;`.
    pub(super) fn tail(&mut self, e: &syn::Expr, out: &mut Vec<Stmt>) -> Option<Expr> {
        match e {
            syn::Expr::If(_) | syn::Expr::Block(_) => {
                let v = self.expr(e);
                match self.infer.shallow(v.ty) {
                    Ty::Unit | Ty::Never => {
                        out.push(into_stmt(v));
                        None
                    }
                    _ => Some(v),
                }
            }
            _ if is_statement(e) || matches!(e, syn::Expr::Macro(_)) => {
                self.stmt_expr(e, out);
                None
            }
            syn::Expr::Binary(b) if compound_op(&b.op).is_some() => {
                self.stmt_expr(e, out);
                None
            }
            _ => {
                let v = self.expr(e);
                if self.infer.shallow(v.ty) == Ty::Unit {
                    out.push(Stmt::Expr(v));
                    None
                } else {
                    Some(v)
                }
            }
        }
    }

    fn stmt(&mut self, s: &syn::Stmt, out: &mut Vec<Stmt>, top: bool) {
        match s {
            syn::Stmt::Local(l) => self.local(l, out, top),
            syn::Stmt::Item(syn::Item::Const(c)) => self.const_item(c, out),
            syn::Stmt::Item(item) => {
                self.errors.add(
                    item.span(),
                    "items (`fn`, `use`, `struct`, ...) are not supported inside kernels (a `const` is); \
                     define helpers as `#[device_fn]` functions next to the kernel",
                );
                match item {
                    syn::Item::Fn(f) => self.bind(&f.sig.ident.to_string(), Binding::Poison),
                    syn::Item::Const(c) => self.bind(&c.ident.to_string(), Binding::Poison),
                    syn::Item::Static(c) => self.bind(&c.ident.to_string(), Binding::Poison),
                    _ => {}
                }
            }
            syn::Stmt::Expr(e, _) => self.stmt_expr(e, out),
            syn::Stmt::Macro(m) => self.errors.add(
                m.span(),
                "macros are not supported inside kernels (there is no `println!` on the device)",
            ),
        }
    }

    /// `let`: local memory (`let tile = Local::<[f32; 256]>::new();`), a variable, or
    /// `let _ = e`.
    fn local(&mut self, l: &syn::Local, out: &mut Vec<Stmt>, top: bool) {
        if let Some(init) = &l.init {
            if let Some((_, d)) = &init.diverge {
                self.errors
                    .add(d.span(), "`let ... else` is not supported in kernels");
            }
        }
        let (pat, ann) = match &l.pat {
            syn::Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            p => (p, None),
        };
        if let Some(init) = &l.init {
            if let Some(decl) = local_memory_decl(&init.expr, ann) {
                self.local_memory(pat, &init.expr, decl, out, top);
                return;
            }
        }
        if let syn::Pat::Tuple(_) = pat {
            self.let_tuple(l, pat, ann, out);
            return;
        }
        let ann_ty = ann
            .filter(|t| !self.names_struct(t))
            .map(|t| match scalar_type(t) {
                Ok(s) => Ty::S(s),
                Err(e) => {
                    self.errors.push(e);
                    Ty::Never
                }
            });
        if let (syn::Pat::Ident(pi), Some(init)) = (pat, &l.init) {
            if self.let_struct(pi, ann, &init.expr, out) {
                return;
            }
            if let syn::Expr::Closure(c) = strip_parens(&init.expr) {
                if ann.is_none() && pi.by_ref.is_none() && pi.subpat.is_none() {
                    self.let_closure(pi, c);
                    return;
                }
            }
        }
        if !self.let_pattern_supported(l, pat) {
            return;
        }
        let init = l.init.as_ref().map(|i| self.expr(&i.expr));
        match pat {
            syn::Pat::Wild(_) => {
                if let Some(init) = init {
                    if let Some(t) = ann_ty {
                        self.unify(t, init.ty, init.span, "");
                    }
                    out.push(Stmt::Expr(init));
                }
            }
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                self.let_variable(l, pi, init, ann_ty, out)
            }
            other => self.errors.add(
                other.span(),
                "unsupported pattern; `let` supports `let x`, `let mut x`, `let x: T` and `let _`",
            ),
        }
    }

    /// `let (a, (b, _)) = (x, (y, z));`, optionally typed `: (f32, (i32, f32))`: each value
    /// is computed into a temporary first, in order, then each name is bound to its own
    /// (so `let (a, b) = (b, a);` swaps, as in Rust).
    fn let_tuple(&mut self, l: &syn::Local, pat: &syn::Pat, ann: Option<&syn::Type>, out: &mut Vec<Stmt>) {
        let Some(init) = &l.init else {
            self.errors.add(
                pat.span(),
                "a tuple pattern needs a value: `let (a, b) = (x, y);`",
            );
            self.poison(pat);
            return;
        };
        let mut leaves = Vec::new();
        if !self.tuple_leaves(pat, &init.expr, ann, &mut leaves) {
            self.poison(pat);
            return;
        }
        // The values, in order, into temporaries.
        let mut temps = Vec::new();
        for (_, e, ann) in &leaves {
            let v = self.expr(e);
            let ty = match ann.map(scalar_type) {
                Some(Ok(s)) => {
                    self.unify(Ty::S(s), v.ty, v.span, "");
                    Ty::S(s)
                }
                Some(Err(err)) => {
                    self.errors.push(err);
                    Ty::Never
                }
                None => v.ty,
            };
            let span = v.span;
            let name = self.fresh_internal("tuple");
            out.push(Stmt::Let {
                name: name.clone(),
                ty,
                init: Some(v),
            });
            temps.push((name, ty, span));
        }
        // Then the names.
        for ((p, _, _), (temp, ty, span)) in leaves.iter().zip(temps) {
            match p {
                syn::Pat::Wild(_) => {}
                syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                    let value = Expr {
                        kind: ExprKind::Var(temp),
                        ty,
                        span,
                    };
                    self.let_variable(l, pi, Some(value), None, out);
                }
                other => {
                    self.errors.add(
                        other.span(),
                        "unsupported pattern in a tuple; each element is a name, `mut name`, `_` or a tuple",
                    );
                    self.poison(other);
                }
            }
        }
    }

    /// Pairs each name (or `_`) of tuple pattern `pat` with the element of tuple `value`
    /// at its place, and the element's annotated type; `false` after an error.
    fn tuple_leaves<'p>(
        &mut self,
        pat: &'p syn::Pat,
        value: &'p syn::Expr,
        ann: Option<&'p syn::Type>,
        leaves: &mut Vec<(&'p syn::Pat, &'p syn::Expr, Option<&'p syn::Type>)>,
    ) -> bool {
        let syn::Pat::Tuple(tuple) = pat else {
            leaves.push((pat, value, ann));
            return true;
        };
        let syn::Expr::Tuple(values) = strip_parens(value) else {
            self.errors.add(
                value.span(),
                "a tuple pattern takes a tuple of values, written out: `let (s, c) = (x.sin(), x.cos());`",
            );
            return false;
        };
        if values.elems.len() != tuple.elems.len() {
            self.errors.add(
                value.span(),
                format!(
                    "mismatched tuple: the pattern has {} elements, the value {}",
                    tuple.elems.len(),
                    values.elems.len()
                ),
            );
            return false;
        }
        let anns: Vec<Option<&syn::Type>> = match ann {
            None => vec![None; tuple.elems.len()],
            Some(syn::Type::Tuple(t)) if t.elems.len() == tuple.elems.len() => {
                t.elems.iter().map(Some).collect()
            }
            Some(other) => {
                self.errors.add(
                    other.span(),
                    format!(
                        "the type of a tuple of {} elements is a tuple of as many types: `(f32, i32)`",
                        tuple.elems.len()
                    ),
                );
                return false;
            }
        };
        let mut ok = true;
        for ((p, v), a) in tuple.elems.iter().zip(&values.elems).zip(anns) {
            ok &= self.tuple_leaves(p, v, a, leaves);
        }
        ok
    }

    /// Binds every name of `pat` to nothing usable, after an error.
    fn poison(&mut self, pat: &syn::Pat) {
        for id in pattern_idents(pat) {
            self.bind(&id, Binding::Poison);
        }
    }

    /// Whether a `let` binds a plain name (or `_`) to something other than a closure; if
    /// not, says why and poisons the names it binds.
    fn let_pattern_supported(&mut self, l: &syn::Local, pat: &syn::Pat) -> bool {
        let valid = match pat {
            syn::Pat::Wild(_) => true,
            syn::Pat::Ident(pi) => pi.by_ref.is_none() && pi.subpat.is_none(),
            _ => false,
        };
        let closure = l
            .init
            .as_ref()
            .is_some_and(|i| matches!(strip_parens(&i.expr), syn::Expr::Closure(_)));
        if valid && !closure {
            return true;
        }
        if !valid {
            self.errors.add(
                pat.span(),
                "unsupported pattern; `let` supports `let x`, `let mut x`, `let x: T` and `let _`",
            );
        } else if let Some(i) = &l.init {
            self.errors.add(
                i.expr.span(),
                "this closure is not supported in kernels: bind a closure without a type annotation to a name (`let sq = |v: f32| v * v;`), or write a `#[device_fn]`",
            );
        }
        for id in pattern_idents(pat) {
            self.bind(&id, Binding::Poison);
        }
        false
    }

    /// `let x = e;`, `let mut x: T;`, ...: the variable's type is the annotation's, or
    /// the value's. A variable declared without a value is assignable (once, in Rust).
    fn let_variable(
        &mut self,
        l: &syn::Local,
        pi: &syn::PatIdent,
        init: Option<Expr>,
        ann_ty: Option<Ty>,
        out: &mut Vec<Stmt>,
    ) {
        let name = pi.ident.to_string();
        let ty = match (&init, ann_ty) {
            (Some(i), Some(t)) => {
                self.unify(t, i.ty, i.span, "");
                t
            }
            (Some(i), None) => i.ty,
            (None, Some(t)) => t,
            (None, None) => {
                self.errors.add(
                    pi.ident.span(),
                    "a `let` without a value needs a type annotation: `let x: f32;`",
                );
                Ty::Never
            }
        };
        if matches!(self.infer.shallow(ty), Ty::Unit) {
            self.errors
                .add(l.span(), "variables of type `()` are not supported");
        }
        let cname = self.fresh(&name);
        let mutable = pi.mutability.is_some() || init.is_none();
        out.push(Stmt::Let {
            name: cname.clone(),
            ty,
            init,
        });
        self.bind(
            &name,
            Binding::Scalar {
                cname,
                ty,
                mutable,
                param: false,
            },
        );
    }

    /// An expression in statement position.
    pub(super) fn stmt_expr(&mut self, e: &syn::Expr, out: &mut Vec<Stmt>) {
        match e {
            syn::Expr::Assign(a) => self.assign(a, out),
            syn::Expr::Binary(b) if compound_op(&b.op).is_some() => self.compound_assign(b, out),
            syn::Expr::While(w) => self.while_loop(w, out),
            syn::Expr::Loop(l) => self.loop_loop(l, out),
            syn::Expr::ForLoop(f) => self.for_loop(f, out),
            syn::Expr::Return(r) => self.return_stmt(r, out),
            syn::Expr::Break(b) => self.break_stmt(b, out),
            syn::Expr::Continue(c) => self.continue_stmt(c, out),
            syn::Expr::Call(c) if is_barrier_call(c) => {
                if !c.args.is_empty() {
                    self.errors.add(
                        c.args.span(),
                        "`barrier()` takes no arguments (it fences local and global memory)",
                    );
                }
                out.push(Stmt::Barrier);
            }
            syn::Expr::Macro(m) => self.errors.add(
                m.span(),
                "macros are not supported inside kernels (there is no `println!` on the device)",
            ),
            _ => {
                let v = self.expr(e);
                out.push(into_stmt(v));
            }
        }
    }

    /// `return` / `return v`: a value exactly when the function returns one.
    fn return_stmt(&mut self, r: &syn::ExprReturn, out: &mut Vec<Stmt>) {
        if self.in_closure {
            self.errors.add(
                r.span(),
                "`return` inside a closure is not supported in kernels (the closure is inlined); make its value the body's last expression",
            );
            return;
        }
        let v = r.expr.as_ref().map(|e| self.expr(e));
        match (self.ret, &v) {
            (None, Some(v)) if self.infer.shallow(v.ty) != Ty::Unit => self.errors.add(
                v.span,
                if self.kind == FnKind::Kernel {
                    "kernels cannot return a value; write results into a `&mut [T]` parameter"
                } else {
                    "this device function returns nothing; declare a return type `-> T`"
                },
            ),
            (Some(t), Some(v)) => self.unify(Ty::S(t), v.ty, v.span, " in the returned value"),
            (Some(t), None) => self.errors.add(
                r.span(),
                format!("this device function must return `{}`", t.rust()),
            ),
            _ => {}
        }
        out.push(Stmt::Return(v.filter(|_| self.ret.is_some())));
    }
}

/// Turns an expression in statement position into a statement.
fn into_stmt(v: Expr) -> Stmt {
    match v.kind {
        ExprKind::Block(b) if b.tail.is_none() && b.stmts.len() == 1 => {
            let mut b = b;
            match b.stmts.pop() {
                Some(s) => s,
                None => Stmt::Block(Block::default()),
            }
        }
        ExprKind::Block(b) => Stmt::Block(b),
        _ => Stmt::Expr(v),
    }
}

/// Whether a block never reaches its end (it ends in `return`, `break`, `continue`, or an
/// `if`/`else` both of whose branches do).
fn block_diverges(b: &Block) -> bool {
    match b.stmts.last() {
        Some(Stmt::Return(_)) | Some(Stmt::Break(_)) | Some(Stmt::Continue(_)) => true,
        Some(Stmt::If {
            then, els: Some(els), ..
        }) => block_diverges(then) && block_diverges(els),
        Some(Stmt::Block(b)) => block_diverges(b),
        _ => false,
    }
}

fn is_barrier_call(c: &syn::ExprCall) -> bool {
    matches!(strip_parens(&c.func), syn::Expr::Path(p) if p.path.is_ident("barrier"))
}
