//! Places: the targets of `=` and `op=` (a `let mut` variable, a `mut` parameter, an
//! element of a `&mut [T]` or local array) and the indexing `a[i]` that reads and
//! atomics share.

use super::ops::compound_op;
use super::{strip_parens, ArrLen, Binding, Lowerer};
use crate::diag::Spanned;
use crate::ir::*;

impl Lowerer<'_> {
    /// `place = value`.
    pub(super) fn assign(&mut self, a: &syn::ExprAssign, out: &mut Vec<Stmt>) {
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

    /// `place op= value`, typed like `place op value`.
    pub(super) fn compound_assign(&mut self, b: &syn::ExprBinary, out: &mut Vec<Stmt>) {
        let op = compound_op(&b.op).unwrap_or(BinOp::Add);
        let value = self.expr(&b.right);
        if let Some(place) = self.place(&b.left) {
            let t = place_ty(&place);
            // (`z *= x` scales a complex `z` by a real `x`; the result has the place's type.)
            let result = self.check_binary(op, t, value.ty, b.op.span(), value.span);
            let sym = format!(" in `{}=`", op.c());
            self.unify(t, result, value.span, &sym);
            out.push(Stmt::Assign {
                place,
                op: Some(op),
                value,
            });
        }
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
                    Some(Binding::Closure(_)) => {
                        self.errors
                            .add(id.span(), format!("cannot assign to the closure `{name}`"));
                        None
                    }
                    Some(Binding::Struct { .. }) => {
                        self.errors.add(
                            id.span(),
                            format!("cannot assign to `{name}`: a struct parameter is read-only"),
                        );
                        None
                    }
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
            syn::Expr::Field(f) => self.field_place(f),
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
    pub(super) fn index_parts(&mut self, ix: &syn::ExprIndex, write: bool) -> Option<(ArrayRef, Expr)> {
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
            Some(Binding::Closure(_)) => {
                self.errors
                    .add(id.span(), format!("cannot index into the closure `{name}`"));
                return None;
            }
            Some(Binding::Struct { .. }) => {
                self.errors.add(
                    id.span(),
                    format!("cannot index into the struct `{name}`; read its fields"),
                );
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
                ArrLen::Const(_) => format!("cannot assign to `{name}[..]`: it is a `const`"),
            };
            self.errors.add(id.span(), msg);
        }
        Some((aref, idx))
    }
}

fn place_ty(p: &Place) -> Ty {
    match p {
        Place::Var(_, t) => *t,
        Place::Index(a, _) => Ty::S(a.elem),
    }
}
