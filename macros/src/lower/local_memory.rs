//! Local memory: `let tile = Local::<[T; N]>::new();` declares a `__local` array of the
//! work-group. OpenCL C 1.2 allows such variables only at kernel scope, so the declaration
//! is accepted only at the top level of a `#[kernel]` body, with a constant length.

use super::{strip_parens, ArrLen, Binding, Lowerer};
use crate::diag::{Sp, Spanned};
use crate::ir::*;
use crate::signature::{scalar_type, FnKind, ELEMENTS};

impl Lowerer<'_> {
    /// Declares the local array that `pat` names; `decl` is what `local_memory_decl`
    /// recognized in `init`.
    pub(super) fn local_memory(
        &mut self,
        pat: &syn::Pat,
        init: &syn::Expr,
        decl: syn::Result<(Scalar, u64)>,
        out: &mut Vec<Stmt>,
        top: bool,
    ) {
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
                        init.span(),
                        "local memory can only be declared in a #[kernel] (OpenCL C 1.2 allows `__local` \
                         variables only at kernel scope)",
                    );
                } else if !top {
                    self.errors.add(
                        init.span(),
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
                        aref: ArrayRef {
                            name: cname,
                            elem,
                            global: false,
                        },
                        mutable,
                        len: ArrLen::Local(len),
                    },
                );
            }
        }
    }
}

/// Recognizes `Local::<[T; N]>::new()` (or `Local::new()` with `let x: Local<[T; N]>`):
/// `None` if the expression is something else.
pub(super) fn local_memory_decl(
    init: &syn::Expr,
    ann: Option<&syn::Type>,
) -> Option<syn::Result<(Scalar, u64)>> {
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
