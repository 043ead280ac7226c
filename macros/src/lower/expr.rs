//! Expressions used as values: the dispatch over syn's expression kinds, `if`/`else` and
//! blocks as values, names and paths, and the errors for what the subset lacks. Operators,
//! literals, calls, methods and `match` are lowered in their own files.

use super::{err_expr, is_statement, strip_parens, Binding, Lowerer};
use crate::diag::{Sp, Spanned};
use crate::ir::*;

impl Lowerer<'_> {
    /// An expression used as a value.
    pub fn expr(&mut self, e: &syn::Expr) -> Expr {
        let span = e.span();
        match e {
            syn::Expr::Lit(l) => self.lit(&l.lit, span, false),
            syn::Expr::Paren(p) => self.expr(&p.expr),
            syn::Expr::Group(g) => self.expr(&g.expr),
            syn::Expr::Path(p) => self.path(p),
            syn::Expr::Unary(u) => self.unary(u, span),
            syn::Expr::Binary(b) => self.binary(b, span),
            syn::Expr::Cast(c) => self.cast(c, span),
            syn::Expr::If(i) => self.if_expr(i, span),
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
            syn::Expr::Field(f) => self.field(f),
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
                    "closures in kernels are bound to a name and called: `let sq = |v: f32| v * v; sq(x)`; or write a `#[device_fn]`",
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
            _ if is_statement(e) => self.stmt_as_value(e, span),
            other => {
                self.unsupported(other);
                err_expr(span)
            }
        }
    }

    /// A statement in value position: valid as a block of type unit (assignments, loops)
    /// or never (`return`, `break`, `continue`).
    fn stmt_as_value(&mut self, e: &syn::Expr, span: Sp) -> Expr {
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

    /// `p.field` of a `KernelStruct` parameter: the field, read as `cname.field`; `z.re`
    /// and `z.im` of a complex number.
    fn field(&mut self, f: &syn::ExprField) -> Expr {
        if let Some(part) = self.complex_field(f) {
            return part;
        }
        let span = f.span();
        let base = match strip_parens(&f.base) {
            syn::Expr::Path(p) => p
                .path
                .get_ident()
                .map(|id| (id.to_string(), self.lookup(&id.to_string()).cloned())),
            _ => None,
        };
        let (name, binding) = match base {
            Some((name, Some(b))) => (name, b),
            Some((name, None)) => {
                self.errors.add(
                    f.base.span(),
                    format!("cannot find value `{name}` in this kernel"),
                );
                return err_expr(span);
            }
            None => {
                self.errors.add(
                    span,
                    "field access reads a field of a KernelStruct parameter: `p.dt`",
                );
                return err_expr(span);
            }
        };
        let (cname, def) = match binding {
            Binding::Struct { cname, def, .. } => (cname, def),
            Binding::Poison => return err_expr(span),
            _ => {
                self.errors.add(
                    f.base.span(),
                    format!("`{name}` has no fields; field access reads a KernelStruct parameter's fields"),
                );
                return err_expr(span);
            }
        };
        let member = match &f.member {
            syn::Member::Named(id) => id.to_string(),
            syn::Member::Unnamed(i) => format!("_{}", i.index),
        };
        match def.field(&member) {
            Some(field) => Expr {
                kind: ExprKind::Var(format!("{cname}.{member}")),
                ty: Ty::S(field.ty),
                span,
            },
            None => {
                let fields: Vec<String> = (def.fields.iter())
                    .map(|f| format!("`{}`", def.rust_field(&name, &f.name)))
                    .collect();
                self.errors.add(
                    f.member.span(),
                    format!(
                        "`{name}` has no field `{}`; its fields are {}",
                        def.rust_field("", &member).trim_start_matches('.'),
                        fields.join(", ")
                    ),
                );
                err_expr(span)
            }
        }
    }

    /// Reports an expression kind the subset does not have.
    fn unsupported(&mut self, other: &syn::Expr) {
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
    }

    /// `if c { a } else { b }`: a value when both branches have one; otherwise a
    /// statement, wrapped as a block of type unit (or never).
    fn if_expr(&mut self, i: &syn::ExprIf, span: Sp) -> Expr {
        let (cond, then, els) = self.if_parts(i);
        let tt = self.block_ty(&then);
        let et = els.as_ref().map(|b| self.block_ty(b)).unwrap_or(Ty::Unit);
        let ty = match self.infer.unify(tt, et) {
            Ok(t) => t,
            Err(m) => {
                let m = if els.is_none() {
                    "`if` without `else` has type `()`; add an `else` branch to use it as a value".into()
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

    /// A name in scope, or a constant (`f32::consts::PI`, `std::f64::consts::E`, ...).
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
                Some(Binding::Closure(_)) => {
                    self.errors.add(
                        span,
                        format!("`{name}` is a closure; in kernels a closure is only called: `{name}(..)`"),
                    );
                    err_expr(span)
                }
                Some(Binding::Struct { def, .. }) => {
                    let fields: Vec<String> = (def.fields.iter())
                        .map(|f| format!("`{}`", def.rust_field(&name, &f.name)))
                        .collect();
                    let what = if def.is_tuple() { "a tuple" } else { "a struct" };
                    self.errors.add(
                        span,
                        format!(
                            "`{name}` is {what}; kernels read its fields: {}",
                            fields.join(", ")
                        ),
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
            // `half::f16::MAX`, `lazycl::bf16::EPSILON`.
            ["half" | "lazycl", rest @ ..] if matches!(rest.first(), Some(&"f16" | &"bf16")) => rest,
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
}
