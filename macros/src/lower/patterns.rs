//! `match` on integers and `bool`: the scrutinee goes to a temporary, each arm's pattern
//! becomes a condition on it (names bound by a pattern refer to it), and the arms become
//! an `if`/`else` chain (the IR has no `match`, and OpenCL C's `switch` has no ranges or
//! guards).

use std::collections::HashMap;

use super::{err_expr, Binding, Lowerer};
use crate::diag::{Sp, Spanned};
use crate::ir::*;

/// An arm once lowered: its condition (`None`: always), its body, its pattern's span.
type Arm = (Option<Expr>, Block, Sp);

impl Lowerer<'_> {
    /// `match` on an integer or `bool`: the scrutinee goes to a temporary, the arms become
    /// an `if`/`else` chain.
    pub(super) fn match_expr(&mut self, m: &syn::ExprMatch) -> Expr {
        let span = m.span();
        let scrut = self.expr(&m.expr);
        let sty = scrut.ty;
        let st = self.infer.shallow(sty);
        if !(self.infer.is_int(st) || st == Ty::S(Scalar::Bool) || st == Ty::Never) {
            let d = self.infer.describe(st);
            self.errors.add(
                scrut.span,
                format!("`match` works on integers and `bool` in kernels, not `{d}`"),
            );
            return err_expr(span);
        }
        let tmp = self.fresh_internal("match");
        let mut stmts = vec![Stmt::Let {
            name: tmp.clone(),
            ty: sty,
            init: Some(scrut),
        }];
        let mut arms: Vec<Arm> = Vec::new();
        let (mut has_true, mut has_false) = (false, false);
        for arm in &m.arms {
            arms.push(self.match_arm(arm, &tmp, sty, &mut has_true, &mut has_false));
        }
        // The arms' common type.
        let mut ty = Ty::Never;
        for (_, b, _) in &arms {
            let bt = self.block_ty(b);
            match self.infer.unify(ty, bt) {
                Ok(t) => ty = t,
                Err(e) => {
                    self.errors
                        .add(span, format!("`match` arms have incompatible types: {e}"));
                    ty = Ty::Never;
                    break;
                }
            }
        }
        let exhaustive_bool = has_true && has_false;
        let mut block = self.if_chain(arms, ty, exhaustive_bool, span);
        stmts.append(&mut block.stmts);
        let block = Block {
            stmts,
            tail: block.tail,
        };
        Expr {
            kind: ExprKind::Block(block),
            ty,
            span,
        }
    }

    /// One arm, in its own scope: the pattern (and guard) as a condition on `tmp`, and the
    /// body. A `true` or `false` pattern without a guard is noted for exhaustiveness.
    fn match_arm(
        &mut self,
        arm: &syn::Arm,
        tmp: &str,
        sty: Ty,
        has_true: &mut bool,
        has_false: &mut bool,
    ) -> Arm {
        self.scopes.push(HashMap::new());
        let mut cond = self.pattern_cond(&arm.pat, tmp, sty);
        if arm.guard.is_none() {
            if let syn::Pat::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(b),
                ..
            }) = &arm.pat
            {
                *has_true |= b.value;
                *has_false |= !b.value;
            }
        }
        if let Some((_, g)) = &arm.guard {
            let g = self.expr(g);
            self.unify(Ty::S(Scalar::Bool), g.ty, g.span, " in match guard");
            cond = Some(match cond {
                Some(c) => Expr {
                    span: g.span,
                    ty: Ty::S(Scalar::Bool),
                    kind: ExprKind::Binary(BinOp::And, Box::new(c), Box::new(g)),
                },
                None => g,
            });
        }
        let body = match &*arm.body {
            syn::Expr::Block(b) if b.label.is_none() => self.block(&b.block, false),
            e => {
                let mut stmts = Vec::new();
                let tail = self.tail(e, &mut stmts);
                Block {
                    stmts,
                    tail: tail.map(Box::new),
                }
            }
        };
        self.scopes.pop();
        (cond, body, arm.pat.span())
    }

    /// The arms, last to first, as nested `if`/`else` blocks of type `ty`. Without a final
    /// catch-all arm the `match` must cover `true` and `false`.
    fn if_chain(&mut self, arms: Vec<Arm>, ty: Ty, exhaustive_bool: bool, span: Sp) -> Block {
        let unit = matches!(self.infer.shallow(ty), Ty::Unit | Ty::Never);
        let mut acc: Option<Block> = None;
        for (cond, body, pspan) in arms.into_iter().rev() {
            acc = Some(match (cond, acc) {
                (None, _) => body,
                (Some(_), None) if exhaustive_bool => body,
                (Some(_), None) => {
                    self.errors.add(
                        pspan,
                        "non-exhaustive `match`: add a final `_ => ...` arm (kernels check exhaustiveness \
                         only for `true`/`false`)",
                    );
                    body
                }
                (Some(c), Some(els)) => {
                    if unit {
                        Block {
                            stmts: vec![Stmt::If {
                                cond: c,
                                then: body,
                                els: Some(els),
                            }],
                            tail: None,
                        }
                    } else {
                        let e = Expr {
                            kind: ExprKind::If(Box::new(c), body, els),
                            ty,
                            span,
                        };
                        Block {
                            stmts: Vec::new(),
                            tail: Some(Box::new(e)),
                        }
                    }
                }
            });
        }
        acc.unwrap_or_default()
    }

    /// The condition under which `pat` matches the value in `tmp` (`None`: always). Names
    /// bound by the pattern refer to `tmp`.
    fn pattern_cond(&mut self, pat: &syn::Pat, tmp: &str, ty: Ty) -> Option<Expr> {
        let span = pat.span();
        match pat {
            syn::Pat::Wild(_) => None,
            syn::Pat::Paren(p) => self.pattern_cond(&p.pat, tmp, ty),
            syn::Pat::Ident(pi) if pi.by_ref.is_none() => self.binding_pattern(pi, tmp, ty),
            syn::Pat::Lit(l) => Some(self.compare(BinOp::Eq, &syn::Expr::Lit(l.clone()), tmp, ty, span)),
            syn::Pat::Path(p) => Some(self.compare(BinOp::Eq, &syn::Expr::Path(p.clone()), tmp, ty, span)),
            syn::Pat::Range(r) => {
                let lo = r
                    .start
                    .as_ref()
                    .map(|s| self.compare(BinOp::Ge, s, tmp, ty, span));
                let op = if matches!(r.limits, syn::RangeLimits::Closed(_)) {
                    BinOp::Le
                } else {
                    BinOp::Lt
                };
                let hi = r.end.as_ref().map(|e| self.compare(op, e, tmp, ty, span));
                match (lo, hi) {
                    (Some(a), Some(b)) => Some(logical(BinOp::And, a, b, span)),
                    (a, b) => a.or(b),
                }
            }
            syn::Pat::Or(o) => {
                let mut acc: Option<Expr> = None;
                for case in &o.cases {
                    let c = self.pattern_cond(case, tmp, ty)?;
                    acc = Some(match acc {
                        None => c,
                        Some(a) => logical(BinOp::Or, a, c, span),
                    });
                }
                acc
            }
            other => {
                self.errors.add(
                    other.span(),
                    "unsupported pattern; `match` arms in kernels support integer and `bool` literals, constants \
                     (`i32::MAX`), ranges (`1..=5`), alternatives (`1 | 2`), `_`, a name and `name @ pattern`",
                );
                Some(Expr {
                    kind: ExprKind::Bool(false),
                    ty: Ty::S(Scalar::Bool),
                    span,
                })
            }
        }
    }

    /// `name` or `name @ pattern`: `name` bound to the value in `tmp`; the subpattern's
    /// condition.
    fn binding_pattern(&mut self, pi: &syn::PatIdent, tmp: &str, ty: Ty) -> Option<Expr> {
        let cond = pi
            .subpat
            .as_ref()
            .and_then(|(_, p)| self.pattern_cond(p, tmp, ty));
        self.bind(
            &pi.ident.to_string(),
            Binding::Scalar {
                cname: tmp.to_string(),
                ty,
                mutable: false,
                param: false,
            },
        );
        if pi.mutability.is_some() {
            self.errors
                .add(pi.span(), "`mut` bindings in `match` patterns are not supported");
        }
        cond
    }

    /// `tmp op e`: the value in `tmp` (of type `ty`) compared with the pattern's `e`.
    fn compare(&mut self, op: BinOp, e: &syn::Expr, tmp: &str, ty: Ty, span: Sp) -> Expr {
        let v = self.expr(e);
        self.unify(ty, v.ty, v.span, " in pattern");
        let var = Expr {
            kind: ExprKind::Var(tmp.to_string()),
            ty,
            span,
        };
        Expr {
            kind: ExprKind::Binary(op, Box::new(var), Box::new(v)),
            ty: Ty::S(Scalar::Bool),
            span,
        }
    }
}

/// `a && b` or `a || b` (`op`), of two conditions.
fn logical(op: BinOp, a: Expr, b: Expr, span: Sp) -> Expr {
    Expr {
        kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
        ty: Ty::S(Scalar::Bool),
        span,
    }
}
