//! The input of `expr!`: a plain expression over names in scope, or a closure with
//! typed parameters (and optionally a return type), parsed and checked (`check`) into
//! what the variants are lowered from.

use std::collections::HashSet;

use proc_macro2::{Ident, Span, TokenStream};

use super::check::{element_type, Checker};
use crate::diag::{Errors, Sp, Spanned};
use crate::ir::Scalar;
use crate::signature::ELEMENTS;

/// A closure parameter: its name and element type.
pub(super) type Param = (Ident, Scalar);
/// A closure's declared return type and where it is written.
type Ret = (Scalar, Sp);

/// An `expr!` input: a plain expression, or a closure with typed parameters.
pub(super) struct Input {
    pub body: syn::Expr,
    /// Closure form: the parameters' names and types.
    pub params: Option<Vec<Param>>,
    /// Closure form: the declared return type.
    pub ret: Option<Ret>,
}

/// The result of the syntactic check.
pub(super) struct Checked {
    /// Operands: free names in order of first use (closure form: the parameters).
    pub operands: Vec<Ident>,
    /// Device functions called, in order of first call.
    pub callees: Vec<Ident>,
    /// Type parameters the expression names (`T::EPSILON`, `as T`), in order of first
    /// use: the expression is generic over them.
    pub types: Vec<Ident>,
}

/// Parses and checks the input; `None` if it is no expression at all.
pub(super) fn read(input: TokenStream, errors: &mut Errors) -> Option<(Input, Checked)> {
    if input.is_empty() {
        errors.add(
            Span::call_site(),
            "expr! takes an expression, e.g. `expr!(a * x + y)`, or a closure, e.g. `expr!(|x: f32| x * 2.0)`",
        );
        return None;
    }
    let e: syn::Expr = match syn::parse2(input) {
        Ok(e) => e,
        Err(e) => {
            errors.push(e);
            return None;
        }
    };
    let mut ck = Checker::new();
    let input = match e {
        syn::Expr::Closure(c) => {
            let (params, ret) = closure_header(&c, &mut ck.errors);
            ck.close_over(params.iter().map(|(n, _)| n.to_string()));
            ck.expr(&c.body);
            Input {
                body: (*c.body).clone(),
                params: Some(params),
                ret,
            }
        }
        e => {
            ck.expr(&e);
            if ck.operands.is_empty() && ck.errors.is_empty() {
                ck.errors.add(
                    e.span(),
                    "expr! needs at least one array operand, but this expression uses no variables; \
                     name an array in scope (`expr!(x * 2.0)`) or write a closure (`expr!(|x: f32| x * 2.0)`)",
                );
            }
            Input {
                body: e,
                params: None,
                ret: None,
            }
        }
    };
    let operands = match &input.params {
        Some(p) => p.iter().map(|(n, _)| n.clone()).collect(),
        None => ck.operands,
    };
    if let Some(e) = ck.errors.into_error() {
        errors.push(e);
    }
    Some((
        input,
        Checked {
            operands,
            callees: ck.callees,
            types: ck.types,
        },
    ))
}

/// The parameters and return type of a closure form.
fn closure_header(c: &syn::ExprClosure, errors: &mut Errors) -> (Vec<Param>, Option<Ret>) {
    if let Some(m) = &c.capture {
        errors.add(
            m.span(),
            "expr! closures cannot capture by `move`: they capture nothing (the body sees only its parameters); \
             remove `move` and pass values as parameters to `.apply(...)`",
        );
    }
    if let Some(a) = &c.asyncness {
        errors.add(a.span(), "expr! closures cannot be `async`");
    }
    if let Some(s) = &c.constness {
        errors.add(s.span(), "expr! closures cannot be `const`");
    }
    if let Some(s) = &c.movability {
        errors.add(s.span(), "expr! closures cannot be `static`");
    }
    if let Some(l) = &c.lifetimes {
        errors.add(l.span(), "expr! closures cannot have `for<...>` lifetimes");
    }
    let mut params = Vec::new();
    let mut seen = HashSet::new();
    for p in &c.inputs {
        let (pat, ty) = match p {
            syn::Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            other => (other, None),
        };
        let name = match pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() && pi.mutability.is_none() => {
                pi.ident.clone()
            }
            other => {
                errors.add(
                    other.span(),
                    "unsupported closure parameter; expr! closure parameters are plain names with a scalar type: `|x: f32|`",
                );
                continue;
            }
        };
        if !seen.insert(name.to_string()) {
            errors.add(name.span(), format!("parameter `{name}` is declared twice"));
            continue;
        }
        let Some(ty) = ty else {
            errors.add(
                pat.span(),
                format!(
                    "expr! closure parameters need a type: `|{name}: f32|` (one of {})",
                    ELEMENTS
                ),
            );
            continue;
        };
        match element_type(ty, "closure parameters") {
            Ok(s) => params.push((name, s)),
            Err(e) => errors.push(e),
        }
    }
    if params.is_empty() && c.inputs.is_empty() {
        errors.add(
            c.or1_token.span(),
            "an expr! closure needs at least one parameter: `|x: f32| ...`",
        );
    }
    let ret = match &c.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, ty) => match element_type(ty, "the return type") {
            Ok(s) => Some((s, ty.span())),
            Err(e) => {
                errors.push(e);
                None
            }
        },
    };
    (params, ret)
}
