//! The messages of `expr!` for what it never accepts: each construct that is no
//! expression over elements (loops, assignments, indexing, references, field access,
//! macros, ...), with what to write instead.

use quote::ToTokens;
use syn::ext::IdentExt;

use super::unsupported;
use crate::diag::{Sp, Spanned};

/// The error for an expression `expr!` does not accept: where, and what to write instead.
// (One flat match over the syntax nodes `Checker::expr` does not walk, a message each.)
pub(super) fn rejection(e: &syn::Expr) -> (Sp, String) {
    let (span, message): (Sp, &str) = match e {
        syn::Expr::Unary(u) => (
            u.span(),
            "dereferencing (`*x`) is not supported in expr!: operands are used by value; write `x`",
        ),
        syn::Expr::Closure(c) => (
            c.span(),
            "closures inside expr! are not supported; a closure can only be the whole argument: \
             `expr!(|x: f32| x * 2.0)`; for a reusable helper write a `#[device_fn]`",
        ),
        syn::Expr::Macro(m) => return (m.span(), macro_message(m)),
        syn::Expr::While(_) | syn::Expr::Loop(_) | syn::Expr::ForLoop(_) => (
            loop_keyword_span(e),
            "loops are not supported in expr!: it is one elementwise expression; put the loop in a \
             `#[device_fn]` and call it, or write a `#[kernel]`",
        ),
        syn::Expr::Assign(a) => (
            a.span(),
            "assignments are not supported in expr!: it is one expression; name intermediate values \
             with `let` in a block: `{ let t = x * 2.0; t + 1.0 }`",
        ),
        syn::Expr::Return(_) | syn::Expr::Break(_) | syn::Expr::Continue(_) => (
            e.span(),
            "`return`, `break` and `continue` are not supported in expr!; choose values with \
             `if c { a } else { b }`",
        ),
        syn::Expr::Match(m) => (
            m.match_token.span(),
            "`match` is not supported in expr!; use `if c { a } else if d { b } else { c }`",
        ),
        syn::Expr::Index(ix) => (
            ix.span(),
            "indexing is not supported in expr!: an operand stands for one element (the expression is \
             applied elementwise, with broadcasting); write `x`, not `x[i]`, or use a `#[kernel]`",
        ),
        syn::Expr::Reference(r) => (
            r.span(),
            "references are not supported in expr!: name operands directly (`x`, not `&x`); expr! \
             takes arrays by reference itself",
        ),
        syn::Expr::Range(_) => return (e.span(), unsupported("ranges are")),
        syn::Expr::Tuple(_) => (
            e.span(),
            "tuples are not supported in expr!: an expr! computes one value per element; write one \
             expr! per result",
        ),
        syn::Expr::Array(_) | syn::Expr::Repeat(_) => {
            return (e.span(), unsupported("array expressions are"))
        }
        syn::Expr::Struct(_) => return (e.span(), unsupported("struct expressions are")),
        syn::Expr::Field(f) => return (f.span(), field_message(f)),
        syn::Expr::Try(t) => {
            let inner = t.expr.to_token_stream().to_string();
            let message = format!(
                "the `?` operator is not supported in expr!: operands are arrays and scalars, not \
                 `Result`s; apply it before the expression: `let v = {inner}?;`, then write `v`"
            );
            return (t.span(), message);
        }
        syn::Expr::Async(_) | syn::Expr::Await(_) => return (e.span(), unsupported("async code is")),
        syn::Expr::Unsafe(u) => (
            u.unsafe_token.span(),
            "`unsafe` is not supported in expr! (nothing in it is unsafe): remove `unsafe { }` and \
             write the expression",
        ),
        syn::Expr::Let(_) => return (e.span(), unsupported("`let` expressions are")),
        _ => return (e.span(), unsupported("this expression is")),
    };
    (span, message.to_string())
}

/// Field access: `expr!` captures plain names, so the fix is to bind the field first.
fn field_message(f: &syn::ExprField) -> String {
    let whole = f.to_token_stream().to_string().replace(' ', "");
    let local = match &f.member {
        syn::Member::Named(id) => id.unraw().to_string(),
        syn::Member::Unnamed(i) => {
            let base = f.base.to_token_stream().to_string().replace(' ', "");
            let base: String = base
                .chars()
                .map(|c| if c.is_alphanumeric() { c } else { '_' })
                .collect();
            format!("{base}_{}", i.index)
        }
    };
    format!(
        "field access (`{whole}`) is not supported in expr!: its operands are plain names in scope; \
         bind the field to a local first: `let {local} = &{whole};`, then write `{local}` in the expression"
    )
}

/// A macro call in the expression.
fn macro_message(m: &syn::ExprMacro) -> String {
    let name = m
        .mac
        .path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default();
    format!(
        "macros are not supported inside expr! (`{name}!`): the expression is translated to \
         OpenCL C at compile time; write the expression itself"
    )
}

/// The keyword of a loop (`for`, `while`, `loop`), to underline it rather than the body.
fn loop_keyword_span(e: &syn::Expr) -> Sp {
    match e {
        syn::Expr::While(w) => w.while_token.span(),
        syn::Expr::Loop(l) => l.loop_token.span(),
        syn::Expr::ForLoop(f) => f.for_token.span(),
        other => other.span(),
    }
}
