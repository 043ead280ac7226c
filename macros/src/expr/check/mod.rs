//! The syntactic check of `expr!`: what it accepts (one expression: operands, literals,
//! operators, casts, `if`/`else`, blocks of `let` bindings, math methods, device-function
//! calls), with messages that say what is supported, and what it finds on the way: the
//! operands (free names, in order of first use) and the device functions called. The
//! type rules are the kernel translator's; this check only rules out what `expr!` cannot
//! be (statements, loops, indexing, ...), which the translator would accept.
//!
//! This file walks expressions and holds what the check finds; the files beside it check
//! one concern each: `names` (operands, type parameters, calls and methods), `blocks`
//! (`let` bindings, `if`/`else`) and `rejected` (the message for each construct `expr!`
//! never accepts).

mod blocks;
mod names;
mod rejected;

use std::collections::HashSet;

use proc_macro2::Ident;

use crate::diag::{Errors, Sp, Spanned};
use crate::ir::Scalar;
use crate::lower::ops::compound_op;
use crate::signature::{scalar_type, ELEMENTS};
use rejected::rejection;

/// What `expr!` supports, for error messages.
const SUPPORTED: &str =
    "expr! supports operands (arrays and scalars in scope), literals, arithmetic, comparisons, \
     `&&` `||` `!`, `as` casts, `if c { a } else { b }`, blocks with `let` bindings, math methods \
     (`x.sqrt()`, `x.max(y)`, `x.mul_add(a, b)`, ...), complex numbers (`c32::new(a, b)`, `z.re`, \
     `z.conj()`, ...), constants (`f32::consts::PI`) and calls of `#[device_fn]` functions";

/// The message for a construct `expr!` does not support: `what` ("ranges are"), and what
/// it does.
fn unsupported(what: &str) -> String {
    format!("{what} not supported in expr!; {SUPPORTED}")
}

/// The syntactic check: what `expr!` accepts, the operands and the called functions.
pub(super) struct Checker {
    pub errors: Errors,
    /// Names bound by `let` (and closure parameters), innermost last.
    scopes: Vec<HashSet<String>>,
    pub operands: Vec<Ident>,
    pub callees: Vec<Ident>,
    /// Type parameters named (`T::EPSILON`, `T::from(v)`, `as T`), in order of first
    /// use: each is an element type the expression is generic over.
    pub types: Vec<Ident>,
    /// Closure form: free names are errors, not operands.
    closed: bool,
}

impl Checker {
    pub(super) fn new() -> Self {
        Checker {
            errors: Errors::default(),
            scopes: vec![HashSet::new()],
            operands: Vec::new(),
            callees: Vec::new(),
            types: Vec::new(),
            closed: false,
        }
    }

    /// The closure form: the body sees only the parameters `names`.
    pub(super) fn close_over(&mut self, names: impl Iterator<Item = String>) {
        self.closed = true;
        if let Some(scope) = self.scopes.last_mut() {
            scope.extend(names);
        }
    }

    fn bound(&self, name: &str) -> bool {
        self.scopes.iter().any(|s| s.contains(name))
    }

    fn unsupported(&mut self, span: impl Into<Sp>, what: &str) {
        self.errors.add(span, unsupported(what));
    }

    /// An expression: the constructs `expr!` accepts are walked; any other is an error
    /// that says what to write instead (`rejected`).
    pub(super) fn expr(&mut self, e: &syn::Expr) {
        match e {
            syn::Expr::Lit(l) => self.lit(l),
            syn::Expr::Path(p) => self.path(p),
            syn::Expr::Paren(p) => self.expr(&p.expr),
            syn::Expr::Group(g) => self.expr(&g.expr),
            syn::Expr::Unary(u) if !matches!(u.op, syn::UnOp::Deref(_)) => self.expr(&u.expr),
            syn::Expr::Binary(b) => self.binary(b),
            syn::Expr::Cast(c) => self.cast(c),
            syn::Expr::If(i) => self.if_expr(i),
            syn::Expr::Block(b) => {
                if let Some(l) = &b.label {
                    self.errors
                        .add(l.span(), "block labels are not supported in expr!");
                }
                self.block(&b.block);
            }
            syn::Expr::MethodCall(m) => self.method_call(m),
            syn::Expr::Call(c) => self.call(c),
            // A complex number's parts (`z.re`, `z.im`); the translator checks that `z` is
            // one.
            syn::Expr::Field(f) if is_complex_part(&f.member) => self.expr(&f.base),
            other => {
                let (span, message) = rejection(other);
                self.errors.add(span, message);
            }
        }
    }

    fn lit(&mut self, l: &syn::ExprLit) {
        match &l.lit {
            syn::Lit::Int(_) | syn::Lit::Float(_) | syn::Lit::Bool(_) => {}
            syn::Lit::Str(_) | syn::Lit::ByteStr(_) | syn::Lit::CStr(_) => self.errors.add(
                l.span(),
                "strings are not supported in expr!: it computes numbers and bools on the device; \
                 literals are integers, floats and `true`/`false`",
            ),
            syn::Lit::Char(_) | syn::Lit::Byte(_) => self.errors.add(
                l.span(),
                "characters are not supported in expr!; literals are integers, floats and `true`/`false`",
            ),
            _ => self.unsupported(l.span(), "this literal is"),
        }
    }

    fn binary(&mut self, b: &syn::ExprBinary) {
        if compound_op(&b.op).is_some() {
            self.errors.add(
                b.span(),
                "assignments are not supported in expr!: it is one expression; name intermediate \
                 values with `let` in a block: `{ let t = x * 2.0; t + 1.0 }`",
            );
            return;
        }
        self.expr(&b.left);
        self.expr(&b.right);
    }

    fn cast(&mut self, c: &syn::ExprCast) {
        self.expr(&c.expr);
        // `as T`: a type parameter, where `T` is no element type.
        if let syn::Type::Path(tp) = &*c.ty {
            if let (Some(id), None) = (tp.path.get_ident(), &tp.qself) {
                let mut path = tp.path.clone();
                path.segments.push(syn::PathSegment::from(id.clone()));
                self.type_name(&path);
            }
        }
        if matches!(&*c.ty, syn::Type::Reference(_) | syn::Type::Ptr(_)) {
            self.errors.add(
                c.ty.span(),
                format!(
                    "reference types are not supported in expr!; `as` casts to a scalar type ({})",
                    ELEMENTS
                ),
            );
        }
    }
}

/// `re` or `im`: the fields of a complex number.
fn is_complex_part(m: &syn::Member) -> bool {
    matches!(m, syn::Member::Named(id) if id == "re" || id == "im")
}

/// An element type (`f32 f64 i32 u32 i64 u64 bool`) written in a closure.
pub(super) fn element_type(ty: &syn::Type, what: &str) -> syn::Result<Scalar> {
    match ty {
        syn::Type::Reference(_) => Err(ty.span().error(format!(
            "reference types are not supported in expr!: {what} are element values (`x: f32`), and \
             `.apply(...)` takes arrays (`&Array<f32>`) and scalars for them"
        ))),
        syn::Type::Slice(_) | syn::Type::Array(_) => Err(ty.span().error(format!(
            "{what} of expr! are element types ({}); the closure is applied elementwise to arrays",
            ELEMENTS
        ))),
        _ => match scalar_type(ty) {
            Ok(Scalar::Usize) => Err(ty.span().error(format!(
                "`usize` is not an array element type; use one of {}",
                ELEMENTS
            ))),
            Ok(s) => Ok(s),
            Err(_) => Err(ty.span().error(format!(
                "unsupported type in expr!; {what} are one of {}",
                ELEMENTS
            ))),
        },
    }
}
