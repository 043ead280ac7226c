//! `const` items inside a function: `const W: [f32; 5] = [0.1, 0.2, 0.4, 0.2, 0.1];` (a
//! read-only array of the function, indexed like a slice: `W[k]`, `W.len()`) and
//! `const K: f32 = 2.5;` (a name for a value). Their values are constant expressions:
//! literals, constants (`f32::consts::PI`, an earlier `const`) and operators over them,
//! never a variable of the function.

use super::{Binding, Lowerer};
use crate::diag::Spanned;
use crate::ir::*;
use crate::signature::scalar_type;

impl Lowerer<'_> {
    pub(super) fn const_item(&mut self, c: &syn::ItemConst, out: &mut Vec<Stmt>) {
        let name = c.ident.to_string();
        if !c.generics.params.is_empty() {
            self.errors.add(
                c.generics.span(),
                "a `const` in a kernel has no generic parameters",
            );
            self.bind(&name, Binding::Poison);
            return;
        }
        self.constant_only(&c.expr);
        match &*c.ty {
            syn::Type::Array(ta) => self.const_array(c, ta, out),
            ty => {
                let s = match scalar_type(ty) {
                    Ok(s) => s,
                    Err(_) => {
                        self.errors.add(
                            ty.span(),
                            "a `const` in a kernel is a scalar (`const K: f32 = 2.5;`) or an array of scalars \
                             (`const W: [f32; 3] = [0.25, 0.5, 0.25];`)",
                        );
                        self.bind(&name, Binding::Poison);
                        return;
                    }
                };
                let v = self.expr(&c.expr);
                self.unify(Ty::S(s), v.ty, v.span, &format!(" in the value of `{name}`"));
                let cname = self.fresh(&name);
                self.consts.insert(cname.clone());
                out.push(Stmt::Let {
                    name: cname.clone(),
                    ty: Ty::S(s),
                    init: Some(v),
                });
                self.bind(
                    &name,
                    Binding::Scalar {
                        cname,
                        ty: Ty::S(s),
                        mutable: false,
                        param: false,
                    },
                );
            }
        }
    }

    /// `const W: [T; N] = [a, b, ..];` or `= [v; N];`.
    fn const_array(&mut self, c: &syn::ItemConst, ta: &syn::TypeArray, out: &mut Vec<Stmt>) {
        let name = c.ident.to_string();
        let Some((elem, elements)) = self.const_array_parts(c, ta, &name) else {
            self.bind(&name, Binding::Poison);
            return;
        };
        let len = elements.len() as u64;
        let mut values = Vec::new();
        for e in elements {
            let v = self.expr(e);
            self.unify(Ty::S(elem), v.ty, v.span, &format!(" in an element of `{name}`"));
            values.push(v);
        }
        let cname = self.fresh(&name);
        out.push(Stmt::ConstArray {
            name: cname.clone(),
            elem,
            values,
        });
        self.bind(
            &name,
            Binding::Array {
                aref: ArrayRef {
                    name: cname,
                    elem,
                    global: false,
                },
                mutable: false,
                len: super::ArrLen::Const(len),
            },
        );
    }

    /// The element type and the elements of the `const` array `name`, as many as its type
    /// says; `None` after an error.
    fn const_array_parts<'e>(
        &mut self,
        c: &'e syn::ItemConst,
        ta: &syn::TypeArray,
        name: &str,
    ) -> Option<(Scalar, Vec<&'e syn::Expr>)> {
        let elem = match scalar_type(&ta.elem) {
            Ok(s) => s,
            Err(e) => {
                self.errors.push(e);
                return None;
            }
        };
        let Some(len) = int_literal(&ta.len).filter(|&n| n > 0) else {
            self.errors.add(
                ta.len.span(),
                "the length of a `const` array is a positive integer literal: `[f32; 5]`",
            );
            return None;
        };
        let elements = self.written_elements(&c.expr, len)?;
        if elements.len() as u64 != len {
            self.errors.add(
                c.expr.span(),
                format!(
                    "`{name}` is declared with {len} elements, and its value has {}",
                    elements.len()
                ),
            );
            return None;
        }
        Some((elem, elements))
    }

    /// The elements a `const` array's value writes out: `[a, b, ..]`, or `[v; len]`.
    fn written_elements<'e>(&mut self, value: &'e syn::Expr, len: u64) -> Option<Vec<&'e syn::Expr>> {
        match super::strip_parens(value) {
            syn::Expr::Array(a) => Some(a.elems.iter().collect()),
            syn::Expr::Repeat(r) => match int_literal(&r.len) {
                Some(n) if n == len => Some((0..n).map(|_| &*r.expr).collect()),
                _ => {
                    self.errors.add(
                        r.len.span(),
                        format!("the value repeats its element as many times as the type says: `[v; {len}]`"),
                    );
                    None
                }
            },
            other => {
                self.errors.add(
                    other.span(),
                    format!("the value of a `const` array is written out: `[a, b, ..]` ({len} elements) or `[v; {len}]`"),
                );
                None
            }
        }
    }

    /// Reports each variable of the function a `const`'s value reads: it must be known
    /// before the function runs.
    fn constant_only(&mut self, e: &syn::Expr) {
        use syn::visit::Visit;
        struct V<'l, 'a> {
            low: &'l Lowerer<'a>,
            found: Vec<syn::Ident>,
        }
        impl<'ast> Visit<'ast> for V<'_, '_> {
            fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
                if let Some(id) = p.path.get_ident() {
                    let variable = match self.low.lookup(&id.to_string()) {
                        Some(Binding::Scalar { cname, .. }) => !self.low.consts.contains(cname),
                        Some(Binding::Array { len, .. }) => !matches!(len, super::ArrLen::Const(_)),
                        _ => false,
                    };
                    if variable {
                        self.found.push(id.clone());
                    }
                }
            }
        }
        let mut v = V {
            low: self,
            found: Vec::new(),
        };
        v.visit_expr(e);
        for id in v.found {
            self.errors.add(
                id.span(),
                format!(
                    "a `const`'s value is known before the kernel runs: it cannot read `{id}`; use `let`"
                ),
            );
        }
    }
}

/// The value of an integer literal (`5`), if `e` is one.
fn int_literal(e: &syn::Expr) -> Option<u64> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n),
            ..
        }) => n.base10_parse::<u64>().ok(),
        _ => None,
    }
}
