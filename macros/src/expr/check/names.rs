//! The names an `expr!` uses: operands (free names, in order of first use), type
//! parameters (`T::EPSILON`, `as T`), the device functions it calls, and the methods
//! called on operands, which are the arrays' when the elements have none of that name.

use quote::ToTokens;
use syn::ext::IdentExt;

use super::Checker;
use crate::diag::Spanned;
use crate::ir::Scalar;
use crate::lower::names::{is_intrinsic, is_scalar_method, suggest};
use crate::lower::strip_parens;
use crate::signature::is_complex_name;

impl Checker {
    /// A name: bound by `let` (or a closure parameter), else an operand (closure form:
    /// an error, closures capture nothing); a longer path may name a type parameter.
    pub(super) fn path(&mut self, p: &syn::ExprPath) {
        if p.qself.is_none() {
            self.type_name(&p.path);
        }
        if let (Some(id), None) = (p.path.get_ident(), &p.qself) {
            let name = id.to_string();
            if !self.bound(&name) {
                if self.closed {
                    self.errors.add(
                        id.span(),
                        format!(
                            "expr! closures cannot capture `{name}`: the body sees only its parameters; \
                             add a parameter (`|.., {name}: f32|`) and pass `{name}` to `.apply(...)`, or \
                             write `expr!(...)` without a closure to capture names in scope"
                        ),
                    );
                } else if !self.operands.iter().any(|o| *o == name) {
                    self.operands.push(id.clone());
                }
            }
        }
    }

    /// Notes the first segment of `path` (`T` of `T::EPSILON`) as a type parameter where
    /// it names no element type and the path is longer.
    pub(super) fn type_name(&mut self, path: &syn::Path) {
        let Some(first) = path.segments.first() else {
            return;
        };
        let name = first.ident.to_string();
        // (Types are named in upper camel case; `module::f` names no type; `Complex32` and
        // `Complex` are the complex types.)
        let known = Scalar::from_rust(&name).is_some()
            || is_complex_name(&name)
            || !name.starts_with(|c: char| c.is_ascii_uppercase());
        if path.segments.len() < 2 || known || !first.arguments.is_none() {
            return;
        }
        if self.closed {
            self.errors.add(
                first.ident.span(),
                format!(
                    "type parameters (`{name}`) work in the expression form of expr!; a closure's \
                     parameters have element types: `|x: f32| ...`"
                ),
            );
        } else if !self.types.contains(&first.ident) {
            self.types.push(first.ident.clone());
        }
    }

    /// A call: of a device function (noted, to be fetched), or an error for what exists
    /// only in kernels or is not a function.
    pub(super) fn call(&mut self, c: &syn::ExprCall) {
        match strip_parens(&c.func) {
            syn::Expr::Path(p) if p.qself.is_none() => {
                if let Some(id) = p.path.get_ident() {
                    let name = id.to_string();
                    if is_intrinsic(&name) || name == "Local" {
                        self.errors.add(
                            id.span(),
                            format!(
                                "`{name}` is only available in #[kernel]s: expr! is applied elementwise and \
                                 has no work-items, barriers, atomics or local memory"
                            ),
                        );
                    } else if self.bound(&name) || self.operands.iter().any(|o| *o == name) {
                        self.errors
                            .add(id.span(), format!("`{name}` is a variable, not a function"));
                    } else if let Some(hint) = suggest(&name) {
                        self.errors
                            .add(id.span(), format!("cannot find function `{name}`: {hint}"));
                    } else if !self.callees.iter().any(|c| *c == name) {
                        self.callees.push(id.clone());
                    }
                }
                // Longer paths (`f32::sqrt(x)`) are checked by the translator; `T::from(v)`
                // names a type parameter.
                self.type_name(&p.path);
            }
            other => {
                self.errors.add(
                    other.span(),
                    "only named functions can be called in expr!: math methods (`f32::sqrt(x)`) and \
                     `#[device_fn]` functions",
                );
            }
        }
        for a in &c.args {
            self.expr(a);
        }
    }

    /// A method call: math methods of the elements are the translator's to check; a method
    /// the elements do not have, called on an operand, is the operand's (an array's): it
    /// must run before the expression.
    pub(super) fn method_call(&mut self, m: &syn::ExprMethodCall) {
        self.expr(&m.receiver);
        for a in &m.args {
            self.expr(a);
        }
        let name = m.method.unraw().to_string();
        let recv = match strip_parens(&m.receiver) {
            syn::Expr::Path(p) if p.qself.is_none() => p.path.get_ident().map(|id| id.to_string()),
            _ => None,
        };
        if name == "cast" {
            let to = match &m.turbofish {
                Some(t) => t.args.to_token_stream().to_string(),
                None => "f32".to_string(),
            };
            let x = recv.unwrap_or_else(|| "x".to_string());
            self.errors.add(
                m.method.span(),
                format!(
                    "`.cast()` converts a whole array and is not supported in expr!: inside it `{x}` stands \
                     for one element; convert the element with `as`: `{x} as {to}`"
                ),
            );
            return;
        }
        // Only a name can be an operand (a `let` binding is an element too).
        let Some(recv) = recv.filter(|r| !self.bound(r)) else {
            return;
        };
        let reduction = matches!(name.as_str(), "min" | "max") && m.args.is_empty();
        if is_scalar_method(&name) && !reduction {
            return;
        }
        let args = if m.args.is_empty() { "" } else { ".." };
        self.errors.add(
            m.method.span(),
            format!(
                "`{recv}.{name}({args})` is no element method that expr! supports: inside it `{recv}` stands for one element \
                 (the expression is applied elementwise); call it before the expression and use its result: \
                 `let r = {recv}.{name}({args});`, then write `r` (an array broadcasts, a scalar is a kernel \
                 argument); the element methods expr! supports are math methods such as `{recv}.sqrt()`, `{recv}.max(y)`, `{recv}.wrapping_add(y)`, ..."
            ),
        );
    }
}
