//! Lowering of a function body from syn to the typed IR: name resolution, the subset's
//! type rules (no implicit conversions, like Rust) and literal inference (an unsuffixed
//! literal takes the type of what it meets, else `i32` / `f64`).

use std::collections::{HashMap, HashSet};

use crate::diag::{Errors, Sp, Spanned};
use crate::ir::*;
use crate::signature::{scalar_type, FnKind, ELEMENTS};

mod calls;
mod names;
mod patterns;

pub use names::*;

/// What a name in scope refers to.
#[derive(Clone, Debug)]
enum Binding {
    Scalar {
        cname: String,
        ty: Ty,
        mutable: bool,
        param: bool,
    },
    Array {
        aref: ArrayRef,
        mutable: bool,
        len: ArrLen,
    },
    /// A name whose declaration was rejected: uses report nothing more.
    Poison,
}

#[derive(Clone, Debug)]
enum ArrLen {
    /// A slice parameter: its length is the parameter `cname`.
    Param(String),
    /// A `__local` array of a fixed length.
    Local(u64),
}

/// Lowers one function body.
pub struct Lowerer<'a> {
    pub infer: Infer,
    pub errors: Errors,
    scopes: Vec<HashMap<String, Binding>>,
    used: HashSet<String>,
    sigs: &'a [DevSig],
    /// Device functions this body calls (by Rust name), in first-call order.
    pub callees: Vec<String>,
    kind: FnKind,
    ret: Option<Scalar>,
    loop_depth: u32,
    /// Enclosing loops, innermost last: (Rust label, OpenCL C name) for labelled ones.
    labels: Vec<Option<(String, String)>>,
    int_lits: Vec<(i128, Ty, Sp)>,
}

fn err_expr(span: Sp) -> Expr {
    Expr {
        kind: ExprKind::Int(0),
        ty: Ty::Never,
        span,
    }
}

impl<'a> Lowerer<'a> {
    pub fn new(kind: FnKind, ret: Option<Scalar>, sigs: &'a [DevSig]) -> Self {
        Lowerer {
            infer: Infer::default(),
            errors: Errors::default(),
            scopes: vec![HashMap::new()],
            used: HashSet::new(),
            sigs,
            callees: Vec::new(),
            kind,
            ret,
            loop_depth: 0,
            labels: Vec::new(),
            int_lits: Vec::new(),
        }
    }

    /// A fresh OpenCL C identifier for a Rust name.
    fn fresh(&mut self, name: &str) -> String {
        let mut base = name.trim_start_matches("r#").to_string();
        if is_reserved(&base) {
            base.push('_');
        }
        self.unique(base)
    }

    /// A fresh name for generated code (`lzc_...`), which user names never take.
    fn fresh_internal(&mut self, base: &str) -> String {
        self.unique(format!("lzc_{base}"))
    }

    fn unique(&mut self, base: String) -> String {
        let mut cand = base.clone();
        let mut k = 1;
        while self.used.contains(&cand) {
            cand = format!("{base}_{k}");
            k += 1;
        }
        self.used.insert(cand.clone());
        cand
    }

    fn bind(&mut self, name: &str, b: Binding) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), b);
        }
    }

    fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    /// Declares an operand of `expr!`: a scalar named `name` in the Rust code, written
    /// `cname` in the OpenCL C text (a `$i` placeholder), of type `ty`.
    pub fn declare_operand(&mut self, name: &str, ty: Ty, cname: String) {
        self.used.insert(cname.clone());
        self.bind(
            name,
            Binding::Scalar {
                cname,
                ty,
                mutable: false,
                param: true,
            },
        );
    }

    /// Declares the parameters; returns their OpenCL C names (slices: pointer, length).
    pub fn params(&mut self, params: &[Param], rejected: &[syn::Ident]) -> Vec<(String, Option<String>)> {
        for r in rejected {
            self.bind(&r.to_string(), Binding::Poison);
        }
        let mut out = Vec::new();
        for p in params {
            let name = p.name.to_string();
            match p.ty {
                ParamTy::Scalar(s) => {
                    let cname = self.fresh(&name);
                    self.bind(
                        &name,
                        Binding::Scalar {
                            cname: cname.clone(),
                            ty: Ty::S(s),
                            mutable: p.mutable,
                            param: true,
                        },
                    );
                    out.push((cname, None));
                }
                ParamTy::Slice { elem, mutable } => {
                    let cname = self.fresh(&name);
                    let len = self.fresh(&format!("{cname}_len"));
                    self.bind(
                        &name,
                        Binding::Array {
                            aref: ArrayRef {
                                name: cname.clone(),
                                elem,
                            },
                            mutable,
                            len: ArrLen::Param(len.clone()),
                        },
                    );
                    out.push((cname, Some(len)));
                }
            }
        }
        out
    }

    fn unify(&mut self, expected: Ty, found: Ty, span: Sp, context: &str) {
        if let Err(m) = self.infer.unify(expected, found) {
            self.errors.add(span, format!("mismatched types{context}: {m}"));
        }
    }

    /// Checks that integer literals fit their final types.
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

    fn block(&mut self, b: &syn::Block, top: bool) -> Block {
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

    fn block_ty(&self, b: &Block) -> Ty {
        match &b.tail {
            Some(t) => t.ty,
            None if block_diverges(b) => Ty::Never,
            None => Ty::Unit,
        }
    }

    /// A block's last expression: a value, or a statement written without `;`.
    fn tail(&mut self, e: &syn::Expr, out: &mut Vec<Stmt>) -> Option<Expr> {
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
            syn::Expr::Assign(_)
            | syn::Expr::While(_)
            | syn::Expr::Loop(_)
            | syn::Expr::ForLoop(_)
            | syn::Expr::Return(_)
            | syn::Expr::Break(_)
            | syn::Expr::Continue(_)
            | syn::Expr::Macro(_) => {
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
            syn::Stmt::Item(item) => {
                self.errors.add(
                    item.span(),
                    "items (`fn`, `const`, `use`, `struct`, ...) are not supported inside kernels; \
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
        // Local memory: `let tile = Local::<[f32; 256]>::new();`
        if let Some(init) = &l.init {
            if let Some(decl) = local_memory_decl(&init.expr, ann) {
                let (name, mutable) = match pat {
                    syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                        (pi.ident.to_string(), pi.mutability.is_some())
                    }
                    other => {
                        self.errors.add(
                            other.span(),
                            "local memory must be bound to a plain name: `let tile = ...`",
                        );
                        return;
                    }
                };
                match decl {
                    Err(e) => self.errors.push(e),
                    Ok((elem, len)) => {
                        if self.kind != FnKind::Kernel {
                            self.errors.add(
                                init.expr.span(),
                                "local memory can only be declared in a #[kernel] (OpenCL C 1.2 allows `__local` \
                                 variables only at kernel scope)",
                            );
                        } else if !top {
                            self.errors.add(
                                init.expr.span(),
                                "local memory must be declared at the top level of the kernel body, not inside \
                                 a block, loop or `if` (OpenCL C allows `__local` variables only at kernel scope)",
                            );
                        }
                        let cname = self.fresh(&name);
                        out.push(Stmt::LocalArray {
                            name: cname.clone(),
                            elem,
                            len,
                        });
                        self.bind(
                            &name,
                            Binding::Array {
                                aref: ArrayRef { name: cname, elem },
                                mutable,
                                len: ArrLen::Local(len),
                            },
                        );
                    }
                }
                return;
            }
        }
        let ann_ty = match ann {
            Some(t) => match scalar_type(t) {
                Ok(s) => Some(Ty::S(s)),
                Err(e) => {
                    self.errors.push(e);
                    Some(Ty::Never)
                }
            },
            None => None,
        };
        let valid = match pat {
            syn::Pat::Wild(_) => true,
            syn::Pat::Ident(pi) => pi.by_ref.is_none() && pi.subpat.is_none(),
            _ => false,
        };
        let closure = l
            .init
            .as_ref()
            .is_some_and(|i| matches!(strip_parens(&i.expr), syn::Expr::Closure(_)));
        if !valid || closure {
            if !valid {
                self.errors.add(
                    pat.span(),
                    "unsupported pattern; `let` supports `let x`, `let mut x`, `let x: T` and `let _`",
                );
            } else if let Some(i) = &l.init {
                self.errors.add(
                    i.expr.span(),
                    "closures are not supported in kernels; write a `#[device_fn]` function",
                );
            }
            for id in pattern_idents(pat) {
                self.bind(&id, Binding::Poison);
            }
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
            other => self.errors.add(
                other.span(),
                "unsupported pattern; `let` supports `let x`, `let mut x`, `let x: T` and `let _`",
            ),
        }
    }

    /// An expression in statement position.
    fn stmt_expr(&mut self, e: &syn::Expr, out: &mut Vec<Stmt>) {
        match e {
            syn::Expr::Assign(a) => {
                let value = self.expr(&a.right);
                if let Some(place) = self.place(&a.left) {
                    let t = place_ty(&place);
                    self.unify(t, value.ty, value.span, " in assignment");
                    out.push(Stmt::Assign {
                        place,
                        op: None,
                        value,
                    });
                }
            }
            syn::Expr::Binary(b) if compound_op(&b.op).is_some() => {
                let op = compound_op(&b.op).unwrap_or(BinOp::Add);
                let value = self.expr(&b.right);
                if let Some(place) = self.place(&b.left) {
                    let t = place_ty(&place);
                    self.check_binary(op, t, value.ty, b.op.span(), value.span);
                    out.push(Stmt::Assign {
                        place,
                        op: Some(op),
                        value,
                    });
                }
            }
            syn::Expr::While(w) => {
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
            syn::Expr::Loop(l) => {
                let label = self.enter_loop(l.label.as_ref());
                let body = self.block(&l.body, false);
                self.leave_loop();
                self.unit_block(&body);
                out.push(Stmt::Loop { body, label });
            }
            syn::Expr::ForLoop(f) => self.for_loop(f, out),
            syn::Expr::Return(r) => {
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
            syn::Expr::Break(b) => {
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
            syn::Expr::Continue(c) => {
                let label = self.jump_label(c.label.as_ref());
                if self.loop_depth == 0 {
                    self.errors.add(c.span(), "`continue` outside of a loop");
                }
                out.push(Stmt::Continue(label));
            }
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

    fn for_loop(&mut self, f: &syn::ExprForLoop, out: &mut Vec<Stmt>) {
        let (name, mutable) = match &*f.pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                (Some(pi.ident.to_string()), pi.mutability.is_some())
            }
            syn::Pat::Wild(_) => (None, false),
            other => {
                self.errors.add(
                    other.span(),
                    "unsupported pattern; `for` loops bind a plain name: `for i in a..b`",
                );
                return;
            }
        };
        let (range, step) = match strip_parens(&f.expr) {
            syn::Expr::MethodCall(m) if m.method == "step_by" => {
                if m.args.len() != 1 {
                    self.errors.add(m.span(), "`step_by` takes one argument");
                    return;
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
                f.expr.span(),
                format!(
                    "unsupported iterator; `for` loops iterate over an integer range `a..b`, `a..=b` or \
                     `(a..b).step_by(s)`{hint}"
                ),
            );
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

    /// An assignable place: a `let mut` variable, a `mut` parameter or an element of a
    /// `&mut [T]` / `let mut` local array.
    fn place(&mut self, e: &syn::Expr) -> Option<Place> {
        match strip_parens(e) {
            syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                let id = p.path.get_ident()?;
                let name = id.to_string();
                match self.lookup(&name).cloned() {
                    Some(Binding::Scalar {
                        cname,
                        ty,
                        mutable,
                        param,
                    }) => {
                        if !mutable {
                            let fix = if param {
                                format!("cannot assign to parameter `{name}`; declare it `mut {name}`")
                            } else {
                                format!("cannot assign twice to immutable variable `{name}`; declare it `let mut {name}`")
                            };
                            self.errors.add(id.span(), fix);
                        }
                        Some(Place::Var(cname, ty))
                    }
                    Some(Binding::Poison) => None,
                    Some(Binding::Array { .. }) => {
                        self.errors.add(
                            id.span(),
                            format!("cannot assign to the array `{name}`; assign to an element `{name}[i]`"),
                        );
                        None
                    }
                    None => {
                        self.errors
                            .add(id.span(), format!("cannot find value `{name}` in this kernel"));
                        None
                    }
                }
            }
            syn::Expr::Index(ix) => {
                let (aref, idx) = self.index_parts(ix, true)?;
                Some(Place::Index(aref, idx))
            }
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                self.errors.add(
                    u.span(),
                    "dereferencing is not supported in kernels; assign to `x` or `a[i]`",
                );
                None
            }
            other => {
                self.errors.add(
                    other.span(),
                    "invalid left-hand side of assignment; assign to a variable or `a[i]`",
                );
                None
            }
        }
    }

    /// Resolves `a[i]`: the array and the (usize) index.
    fn index_parts(&mut self, ix: &syn::ExprIndex, write: bool) -> Option<(ArrayRef, Expr)> {
        let base = strip_parens(&ix.expr);
        let syn::Expr::Path(p) = base else {
            self.errors.add(
                base.span(),
                "only slice parameters and local arrays can be indexed: `x[i]`",
            );
            return None;
        };
        let Some(id) = p.path.get_ident() else {
            self.errors.add(
                base.span(),
                "only slice parameters and local arrays can be indexed: `x[i]`",
            );
            return None;
        };
        let name = id.to_string();
        let (aref, mutable, len) = match self.lookup(&name).cloned() {
            Some(Binding::Array { aref, mutable, len }) => (aref, mutable, len),
            Some(Binding::Poison) => {
                let _ = self.expr(&ix.index);
                return None;
            }
            Some(Binding::Scalar { ty, .. }) => {
                let t = self.infer.describe(ty);
                self.errors
                    .add(id.span(), format!("cannot index into a value of type `{t}`"));
                return None;
            }
            None => {
                self.errors
                    .add(id.span(), format!("cannot find value `{name}` in this kernel"));
                return None;
            }
        };
        if let syn::Expr::Range(r) = strip_parens(&ix.index) {
            self.errors.add(
                r.span(),
                "sub-slicing (`x[a..b]`) is not supported in kernels; index elements `x[i]`",
            );
            return None;
        }
        let idx = self.expr(&ix.index);
        self.unify(
            Ty::S(Scalar::Usize),
            idx.ty,
            idx.span,
            " in index (slices are indexed by `usize`)",
        );
        if write && !mutable {
            let msg = match len {
                ArrLen::Param(_) => format!(
                    "cannot assign to `{name}[..]`, which is behind a `&` reference; declare the parameter `{name}: &mut [{}]`",
                    aref.elem.rust()
                ),
                ArrLen::Local(_) => format!("cannot assign to `{name}[..]`; declare the local array `let mut {name}`"),
            };
            self.errors.add(id.span(), msg);
        }
        Some((aref, idx))
    }

    fn check_binary(&mut self, op: BinOp, l: Ty, r: Ty, op_span: Sp, r_span: Sp) -> Ty {
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

    fn lit(&mut self, l: &syn::Lit, span: Sp, neg: bool) -> Expr {
        match l {
            syn::Lit::Int(i) => {
                let ty = match i.suffix() {
                    "" => self.infer.fresh(VarKind::Int),
                    s => match Scalar::from_rust(s) {
                        Some(t) if t.is_int() => Ty::S(t),
                        Some(t) if t.is_float() => Ty::S(t),
                        _ => {
                            self.errors.add(
                                span,
                                format!(
                                    "unsupported literal suffix `{s}`; use one of {}",
                                    crate::signature::SCALARS
                                ),
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
            syn::Lit::Float(f) => {
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

    /// An expression used as a value.
    pub fn expr(&mut self, e: &syn::Expr) -> Expr {
        let span = e.span();
        match e {
            syn::Expr::Lit(l) => self.lit(&l.lit, span, false),
            syn::Expr::Paren(p) => self.expr(&p.expr),
            syn::Expr::Group(g) => self.expr(&g.expr),
            syn::Expr::Path(p) => self.path(p),
            syn::Expr::Unary(u) => match u.op {
                syn::UnOp::Neg(_) => {
                    if let syn::Expr::Lit(l) = strip_parens(&u.expr) {
                        return self.lit(&l.lit, span, true);
                    }
                    let v = self.expr(&u.expr);
                    let t = self.infer.shallow(v.ty);
                    let ok = match t {
                        Ty::S(s) => s.is_signed_int() || s.is_float(),
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
            },
            syn::Expr::Binary(b) => {
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
            syn::Expr::Cast(c) => {
                let v = self.expr(&c.expr);
                let target = match scalar_type(&c.ty) {
                    Ok(t) => t,
                    Err(e) => {
                        self.errors.push(e);
                        return err_expr(span);
                    }
                };
                let from = self.infer.shallow(v.ty);
                let bad = match from {
                    Ty::Unit => true,
                    Ty::Never => false,
                    _ => {
                        let from_bool = from == Ty::S(Scalar::Bool);
                        (target == Scalar::Bool && from != Ty::S(Scalar::Bool))
                            || (from_bool && target.is_float())
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
            syn::Expr::If(i) => {
                let (cond, then, els) = self.if_parts(i);
                let tt = self.block_ty(&then);
                let et = els.as_ref().map(|b| self.block_ty(b)).unwrap_or(Ty::Unit);
                let ty = match self.infer.unify(tt, et) {
                    Ok(t) => t,
                    Err(m) => {
                        let m = if els.is_none() {
                            "`if` without `else` has type `()`; add an `else` branch to use it as a value"
                                .into()
                        } else {
                            format!("`if` and `else` have incompatible types: {m}")
                        };
                        self.errors.add(span, m);
                        Ty::Never
                    }
                };
                match els {
                    Some(els) if !matches!(self.infer.shallow(ty), Ty::Unit) => Expr {
                        kind: ExprKind::If(Box::new(cond), then, els),
                        ty,
                        span,
                    },
                    els => {
                        // A statement-like `if`; wrapped as a unit block.
                        let stmt = Stmt::If { cond, then, els };
                        let ty = if matches!(self.infer.shallow(ty), Ty::Never) {
                            Ty::Never
                        } else {
                            Ty::Unit
                        };
                        Expr {
                            kind: ExprKind::Block(Block {
                                stmts: vec![stmt],
                                tail: None,
                            }),
                            ty,
                            span,
                        }
                    }
                }
            }
            syn::Expr::Block(b) => {
                if let Some(l) = &b.label {
                    self.errors
                        .add(l.span(), "block labels are not supported in kernels");
                }
                let block = self.block(&b.block, false);
                let ty = self.block_ty(&block);
                Expr {
                    kind: ExprKind::Block(block),
                    ty,
                    span,
                }
            }
            syn::Expr::Index(ix) => match self.index_parts(ix, false) {
                Some((aref, idx)) => {
                    let ty = Ty::S(aref.elem);
                    Expr {
                        kind: ExprKind::Index(aref, Box::new(idx)),
                        ty,
                        span,
                    }
                }
                None => err_expr(span),
            },
            syn::Expr::MethodCall(m) => self.method_call(m),
            syn::Expr::Call(c) => self.call(c),
            syn::Expr::Reference(r) => {
                self.errors.add(
                    r.span(),
                    "references are only supported as the first argument of atomics: `atomic_add(&mut a[i], v)`",
                );
                err_expr(span)
            }
            syn::Expr::Closure(c) => {
                self.errors.add(
                    c.span(),
                    "closures are not supported in kernels; write a `#[device_fn]` function",
                );
                err_expr(span)
            }
            syn::Expr::Match(m) => self.match_expr(m),
            syn::Expr::Macro(m) => {
                self.errors
                    .add(m.span(), "macros are not supported inside kernels");
                err_expr(span)
            }
            syn::Expr::Range(r) => {
                self.errors.add(
                    r.span(),
                    "ranges are only supported as the iterator of a `for` loop",
                );
                err_expr(span)
            }
            syn::Expr::Assign(_)
            | syn::Expr::While(_)
            | syn::Expr::Loop(_)
            | syn::Expr::ForLoop(_)
            | syn::Expr::Return(_)
            | syn::Expr::Break(_)
            | syn::Expr::Continue(_) => {
                // Valid as statements; in value position only if they are unit/never.
                let mut stmts = Vec::new();
                self.stmt_expr(e, &mut stmts);
                let ty = if matches!(
                    e,
                    syn::Expr::Return(_) | syn::Expr::Break(_) | syn::Expr::Continue(_)
                ) {
                    Ty::Never
                } else {
                    Ty::Unit
                };
                Expr {
                    kind: ExprKind::Block(Block { stmts, tail: None }),
                    ty,
                    span,
                }
            }
            other => {
                let what = match other {
                    syn::Expr::Tuple(_) => "tuples are",
                    syn::Expr::Array(_) | syn::Expr::Repeat(_) => "array expressions are",
                    syn::Expr::Struct(_) => "struct expressions are",
                    syn::Expr::Field(_) => "field access is",
                    syn::Expr::Try(_) => "the `?` operator is",
                    syn::Expr::Async(_) | syn::Expr::Await(_) => "async code is",
                    syn::Expr::Unsafe(_) => "`unsafe` blocks are",
                    syn::Expr::Let(_) => "`let` expressions (`if let`) are",
                    _ => "this expression is",
                };
                self.errors.add(
                    other.span(),
                    format!(
                        "{what} not supported in kernels; supported: scalar arithmetic, comparisons, `as` casts, \
                         indexing, `if`/`else`, blocks, math methods and intrinsics (see docs/KERNEL_SUBSET.md)"
                    ),
                );
                err_expr(span)
            }
        }
    }

    fn if_parts(&mut self, i: &syn::ExprIf) -> (Expr, Block, Option<Block>) {
        if let syn::Expr::Let(l) = &*i.cond {
            self.errors.add(
                l.span(),
                "`if let` is not supported in kernels; use a condition `if c`",
            );
        }
        let cond = self.expr(&i.cond);
        self.unify(Ty::S(Scalar::Bool), cond.ty, cond.span, " in `if` condition");
        let then = self.block(&i.then_branch, false);
        let els = i.else_branch.as_ref().map(|(_, e)| match &**e {
            syn::Expr::Block(b) if b.label.is_none() => self.block(&b.block, false),
            other => {
                let v = self.expr(other);
                Block {
                    stmts: Vec::new(),
                    tail: Some(Box::new(v)),
                }
            }
        });
        (cond, then, els)
    }

    fn path(&mut self, p: &syn::ExprPath) -> Expr {
        let span = p.span();
        if p.qself.is_some() {
            self.errors
                .add(span, "qualified paths are not supported in kernels");
            return err_expr(span);
        }
        if let Some(id) = p.path.get_ident() {
            let name = id.to_string();
            return match self.lookup(&name).cloned() {
                Some(Binding::Scalar { cname, ty, .. }) => Expr {
                    kind: ExprKind::Var(cname),
                    ty,
                    span,
                },
                Some(Binding::Poison) => err_expr(span),
                Some(Binding::Array { .. }) => {
                    self.errors.add(
                        span,
                        format!("`{name}` is an array; index it (`{name}[i]`) or take its length (`{name}.len()`)"),
                    );
                    err_expr(span)
                }
                None => {
                    self.errors
                        .add(span, format!("cannot find value `{name}` in this kernel"));
                    err_expr(span)
                }
            };
        }
        let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        let segs: Vec<&str> = segs.iter().map(|s| s.as_str()).collect();
        let rest: &[&str] = match segs.as_slice() {
            ["std" | "core", rest @ ..] => rest,
            rest => rest,
        };
        if let Some(e) = self.constant(rest, span) {
            return e;
        }
        self.errors.add(
            span,
            "unsupported path; kernels support local names and constants such as `f32::consts::PI`, \
             `std::f64::consts::E`, `f32::MAX`, `f32::INFINITY`, `f32::NAN`, `f32::EPSILON`, `i32::MAX`, `u32::MIN`",
        );
        err_expr(span)
    }

    fn constant(&mut self, segs: &[&str], span: Sp) -> Option<Expr> {
        let (ty, name) = match segs {
            [t, "consts", c] => (Scalar::from_rust(t).filter(|t| t.is_float())?, *c),
            [t, c] => (Scalar::from_rust(t).filter(|t| *t != Scalar::Bool)?, *c),
            _ => return None,
        };
        use std::f64::consts as k;
        if ty.is_float() {
            let is32 = ty == Scalar::F32;
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

/// "1 was" / "2 were".
fn given(n: usize) -> String {
    if n == 1 {
        "1 was".into()
    } else {
        format!("{n} were")
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

pub fn block_diverges(b: &Block) -> bool {
    match b.stmts.last() {
        Some(Stmt::Return(_)) | Some(Stmt::Break(_)) | Some(Stmt::Continue(_)) => true,
        Some(Stmt::If {
            then, els: Some(els), ..
        }) => block_diverges(then) && block_diverges(els),
        Some(Stmt::Block(b)) => block_diverges(b),
        _ => false,
    }
}

fn place_ty(p: &Place) -> Ty {
    match p {
        Place::Var(_, t) => *t,
        Place::Index(a, _) => Ty::S(a.elem),
    }
}

pub fn strip_parens(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip_parens(&p.expr),
        syn::Expr::Group(g) => strip_parens(&g.expr),
        e => e,
    }
}

fn is_barrier_call(c: &syn::ExprCall) -> bool {
    matches!(strip_parens(&c.func), syn::Expr::Path(p) if p.path.is_ident("barrier"))
}

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

/// Recognizes `Local::<[T; N]>::new()` (or `Local::new()` with `let x: Local<[T; N]>`):
/// `None` if the expression is something else.
fn local_memory_decl(init: &syn::Expr, ann: Option<&syn::Type>) -> Option<syn::Result<(Scalar, u64)>> {
    let syn::Expr::Call(c) = strip_parens(init) else {
        return None;
    };
    let syn::Expr::Path(p) = &*c.func else { return None };
    let segs: Vec<&syn::PathSegment> = p.path.segments.iter().collect();
    let [local, new] = segs.as_slice() else {
        return None;
    };
    if local.ident != "Local" || new.ident != "new" {
        return None;
    }
    let err = |span: Sp| {
        span.error(format!("local memory is declared as `Local::<[T; N]>::new()` with T one of {ELEMENTS} and N an integer literal"))
    };
    if !c.args.is_empty() {
        return Some(Err(c.args.span().error("`Local::new()` takes no arguments")));
    }
    let from_generics = match &local.arguments {
        syn::PathArguments::AngleBracketed(a) => match a.args.first() {
            Some(syn::GenericArgument::Type(t)) if a.args.len() == 1 => Some(t.clone()),
            _ => return Some(Err(err(a.span()))),
        },
        syn::PathArguments::None => None,
        other => return Some(Err(err(other.span()))),
    };
    let from_ann = ann.and_then(|t| match t {
        syn::Type::Path(tp) => tp.path.segments.last().and_then(|s| match &s.arguments {
            syn::PathArguments::AngleBracketed(a) if s.ident == "Local" => match a.args.first() {
                Some(syn::GenericArgument::Type(t)) => Some(t.clone()),
                _ => None,
            },
            _ => None,
        }),
        _ => None,
    });
    let Some(arr) = from_generics.or(from_ann) else {
        return Some(Err(err(init.span())));
    };
    let syn::Type::Array(a) = &arr else {
        return Some(Err(err(arr.span())));
    };
    let elem = match scalar_type(&a.elem) {
        Ok(e) => e,
        Err(_) => return Some(Err(err(a.elem.span()))),
    };
    let len = match const_eval(&a.len) {
        Some(n) if n > 0 => n as u64,
        Some(_) => {
            return Some(Err(a
                .len
                .span()
                .error("the length of local memory must be positive")))
        }
        None => {
            return Some(Err(a.len.span().error(
                "the length of local memory must be a constant: integer literals combined with \
                 `+ - * / %` (it is fixed when the kernel is compiled)",
            )))
        }
    };
    Some(Ok((elem, len)))
}

/// Evaluates an integer constant expression: literals, parentheses and `+ - * / %`.
fn const_eval(e: &syn::Expr) -> Option<i128> {
    match strip_parens(e) {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<u64>().ok().map(i128::from),
        syn::Expr::Binary(b) => {
            let (l, r) = (const_eval(&b.left)?, const_eval(&b.right)?);
            let v = match b.op {
                syn::BinOp::Add(_) => l.checked_add(r),
                syn::BinOp::Sub(_) => l.checked_sub(r),
                syn::BinOp::Mul(_) => l.checked_mul(r),
                syn::BinOp::Div(_) => l.checked_div(r),
                syn::BinOp::Rem(_) => l.checked_rem(r),
                _ => None,
            }?;
            (0..=u32::MAX as i128).contains(&v).then_some(v)
        }
        _ => None,
    }
}

/// Device functions a body calls that are not intrinsics (found syntactically, before
/// type checking, so that their signatures can be fetched first).
pub fn called_functions(body: &syn::Block) -> Vec<syn::Ident> {
    use syn::visit::Visit;
    #[derive(Default)]
    struct V {
        calls: Vec<syn::Ident>,
        locals: HashSet<String>,
    }
    impl<'ast> Visit<'ast> for V {
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if let syn::Expr::Path(p) = strip_parens(&c.func) {
                if let Some(id) = p.path.get_ident() {
                    let n = id.to_string();
                    if !is_intrinsic(&n) && suggest(&n).is_none() && !self.calls.iter().any(|i| *i == n) {
                        self.calls.push(id.clone());
                    }
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_local(&mut self, l: &'ast syn::Local) {
            self.locals.extend(pattern_idents(&l.pat));
            syn::visit::visit_local(self, l);
        }
        fn visit_item(&mut self, i: &'ast syn::Item) {
            if let syn::Item::Fn(f) = i {
                self.locals.insert(f.sig.ident.to_string());
            }
        }
    }
    let mut v = V::default();
    v.visit_block(body);
    let locals = v.locals;
    v.calls
        .into_iter()
        .filter(|c| !locals.contains(&c.to_string()))
        .collect()
}

/// The names a pattern binds.
fn pattern_idents(p: &syn::Pat) -> Vec<String> {
    use syn::visit::Visit;
    struct V(Vec<String>);
    impl<'ast> Visit<'ast> for V {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.0.push(p.ident.to_string());
            syn::visit::visit_pat_ident(self, p);
        }
    }
    let mut v = V(Vec::new());
    v.visit_pat(p);
    v.0
}
