//! The intrinsics of `#[kernel]` bodies: work-item indices (`global_id(d)`, ...),
//! atomics on an element (`atomic_add(&mut a[i], v)`, ...) and work-group collectives
//! (`work_group_reduce_add(v)`, ...). `calls` dispatches to them by name.

use super::{err_expr, given, strip_parens, ArrLen, Binding, Lowerer};
use crate::diag::{Sp, Spanned};
use crate::ir::*;
use crate::signature::FnKind;

impl Lowerer<'_> {
    /// A work-item intrinsic `name(d)`, the OpenCL builtin `cl`: a `usize`.
    pub(super) fn work_item(&mut self, name: &str, cl: &'static str, c: &syn::ExprCall, span: Sp) -> Expr {
        if c.args.len() != 1 {
            self.errors.add(
                span,
                format!(
                    "`{name}` takes 1 argument, the dimension (0, 1 or 2), but {} given",
                    given(c.args.len())
                ),
            );
            return err_expr(span);
        }
        let d = self.expr(&c.args[0]);
        self.unify(
            Ty::S(Scalar::U32),
            d.ty,
            d.span,
            &format!(" in the dimension of `{name}` (a `u32`)"),
        );
        if let ExprKind::Int(v) = d.kind {
            if !(0..=2).contains(&v) {
                self.errors
                    .add(d.span, format!("the dimension of `{name}` must be 0, 1 or 2"));
            }
        }
        Expr {
            kind: ExprKind::Builtin(Builtin::WorkItem(cl), vec![d]),
            ty: Ty::S(Scalar::Usize),
            span,
        }
    }

    /// An atomic on an element, `atomic_add(&mut a[i], v)` (`cmpxchg`: an expected and a
    /// new value): typed as the element.
    pub(super) fn atomic(&mut self, op: AtomicOp, name: &str, c: &syn::ExprCall) -> Expr {
        let span = c.span();
        let n = if op == AtomicOp::Cmpxchg { 3 } else { 2 };
        if c.args.len() != n {
            let what = if n == 3 {
                "(&mut a[i], expected, new)"
            } else {
                "(&mut a[i], value)"
            };
            self.errors.add(
                span,
                format!(
                    "`{name}` takes {n} arguments {what}, but {} given",
                    given(c.args.len())
                ),
            );
            return err_expr(span);
        }
        let target = strip_parens(&c.args[0]);
        let ix = match target {
            syn::Expr::Reference(r) if r.mutability.is_some() => match strip_parens(&r.expr) {
                syn::Expr::Index(ix) => Some(ix),
                _ => None,
            },
            _ => None,
        };
        let Some(ix) = ix else {
            self.errors.add(
                target.span(),
                format!("the first argument of `{name}` must be `&mut a[i]`"),
            );
            return err_expr(span);
        };
        let Some((aref, idx)) = self.index_parts(ix, true) else {
            return err_expr(span);
        };
        self.check_atomic_element(op, name, aref.elem, target.span());
        let local = self.is_local_array(&ix.expr);
        let ty = Ty::S(aref.elem);
        let vals: Vec<Expr> = c.args.iter().skip(1).map(|a| self.expr(a)).collect();
        for v in &vals {
            self.unify(ty, v.ty, v.span, &format!(" in argument of `{name}`"));
        }
        Expr {
            kind: ExprKind::Atomic {
                op,
                array: aref,
                local,
                idx: Box::new(idx),
                vals,
            },
            ty,
            span,
        }
    }

    /// The element types atomics work on: the integers, and floats for `atomic_add` and
    /// `atomic_sub`.
    fn check_atomic_element(&mut self, op: AtomicOp, name: &str, elem: Scalar, span: Sp) {
        let float = matches!(elem, Scalar::F32 | Scalar::F64);
        let supported = match elem {
            Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64 => true,
            Scalar::F32 | Scalar::F64 => matches!(op, AtomicOp::Add | AtomicOp::Sub),
            _ => false,
        };
        if supported {
            return;
        }
        let msg = match float {
            true => format!(
                "`{name}` on `{}` elements is not supported; `atomic_add` and `atomic_sub` are",
                elem.rust()
            ),
            false => format!(
                "atomics work on `i32`, `u32`, `i64` and `u64` elements, and `atomic_add`/`atomic_sub` on `f32` and `f64`, not `{}`",
                elem.rust()
            ),
        };
        self.errors.add(span, msg);
    }

    /// Whether the array `a` names is a `__local` one (else a slice parameter, in global
    /// memory).
    fn is_local_array(&self, a: &syn::Expr) -> bool {
        match strip_parens(a) {
            syn::Expr::Path(p) => p.path.get_ident().is_some_and(|id| {
                matches!(
                    self.lookup(&id.to_string()),
                    Some(Binding::Array {
                        len: ArrLen::Local(_),
                        ..
                    })
                )
            }),
            _ => false,
        }
    }

    /// A work-group collective: `work_group_reduce_add(v)` (and `_min`, `_max`) of a number,
    /// `work_group_broadcast(v, from)`; in `#[kernel]` bodies only (they take the
    /// kernel's local memory), typed as their value.
    pub(super) fn collective(&mut self, op: Collective, c: &syn::ExprCall) -> Expr {
        let span = c.span();
        let name = op.name();
        let arity = if op == Collective::Broadcast { 2 } else { 1 };
        if c.args.len() != arity {
            let what = match op {
                Collective::Broadcast => "a value and the linear local id of the work-item to take it from",
                _ => "one value",
            };
            self.errors.add(
                span,
                format!("`{name}` takes {what}, but {} given", given(c.args.len())),
            );
            return err_expr(span);
        }
        if self.kind != FnKind::Kernel {
            self.errors.add(
                span,
                format!(
                    "`{name}` works in #[kernel] bodies only: every work-item of the group calls it, \
                     and it takes local memory, which OpenCL C allows at kernel scope only"
                ),
            );
            return err_expr(span);
        }
        let args: Vec<Expr> = c.args.iter().map(|a| self.expr(a)).collect();
        let ty = args[0].ty;
        let elem = self.infer.scalar(ty);
        if ty == Ty::Unit || elem.is_some_and(|s| s == Scalar::Bool || s.is_complex() || s.dtype().is_none())
        {
            let found = self.infer.describe(ty);
            self.errors.add(
                args[0].span,
                format!(
                    "`{name}` works on `i32`, `u32`, `i64`, `u64`, `f32` and `f64` values, not `{found}`"
                ),
            );
        }
        if let Some(from) = args.get(1) {
            self.unify(
                Ty::S(Scalar::Usize),
                from.ty,
                from.span,
                &format!(" in the local id of `{name}`"),
            );
        }
        Expr {
            kind: ExprKind::Collective(op, args),
            ty,
            span,
        }
    }
}
