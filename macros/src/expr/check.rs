//! The syntactic check of `expr!`: what it accepts (one expression: operands, literals,
//! operators, casts, `if`/`else`, blocks of `let` bindings, math methods, device-function
//! calls), with messages that say what is supported, and what it finds on the way: the
//! operands (free names, in order of first use) and the device functions called. The
//! type rules are the kernel translator's; this check only rules out what `expr!` cannot
//! be (statements, loops, indexing, ...), which the translator would accept.

use std::collections::HashSet;

use proc_macro2::Ident;
use quote::ToTokens;
use syn::ext::IdentExt;

use crate::diag::{Errors, Sp, Spanned};
use crate::ir::Scalar;
use crate::lower::names::{is_intrinsic, is_scalar_method, suggest};
use crate::lower::ops::compound_op;
use crate::lower::{is_statement, strip_parens};
use crate::signature::{scalar_type, ELEMENTS};

/// What `expr!` supports, for error messages.
const SUPPORTED: &str =
    "expr! supports operands (arrays and scalars in scope), literals, arithmetic, comparisons, \
     `&&` `||` `!`, `as` casts, `if c { a } else { b }`, blocks with `let` bindings, math methods \
     (`x.sqrt()`, `x.max(y)`, `x.mul_add(a, b)`, ...), constants (`f32::consts::PI`) and calls of \
     `#[device_fn]` functions";

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
        self.errors
            .add(span, format!("{what} not supported in expr!; {SUPPORTED}"));
    }

    pub(super) fn expr(&mut self, e: &syn::Expr) {
        match e {
            syn::Expr::Lit(l) => self.lit(l),
            syn::Expr::Path(p) => self.path(p),
            syn::Expr::Paren(p) => self.expr(&p.expr),
            syn::Expr::Group(g) => self.expr(&g.expr),
            syn::Expr::Unary(u) => match u.op {
                syn::UnOp::Deref(_) => self.errors.add(
                    u.span(),
                    "dereferencing (`*x`) is not supported in expr!: operands are used by value; write `x`",
                ),
                _ => self.expr(&u.expr),
            },
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
            syn::Expr::Closure(c) => self.errors.add(
                c.span(),
                "closures inside expr! are not supported; a closure can only be the whole argument: \
                 `expr!(|x: f32| x * 2.0)`; for a reusable helper write a `#[device_fn]`",
            ),
            syn::Expr::Macro(m) => self.mac(m),
            syn::Expr::While(_) | syn::Expr::Loop(_) | syn::Expr::ForLoop(_) => self.errors.add(
                loop_keyword_span(e),
                "loops are not supported in expr!: it is one elementwise expression; put the loop in a \
                 `#[device_fn]` and call it, or write a `#[kernel]`",
            ),
            syn::Expr::Assign(a) => self.errors.add(
                a.span(),
                "assignments are not supported in expr!: it is one expression; name intermediate values \
                 with `let` in a block: `{ let t = x * 2.0; t + 1.0 }`",
            ),
            syn::Expr::Return(_) | syn::Expr::Break(_) | syn::Expr::Continue(_) => self.errors.add(
                e.span(),
                "`return`, `break` and `continue` are not supported in expr!; choose values with \
                 `if c { a } else { b }`",
            ),
            syn::Expr::Match(m) => self.errors.add(
                m.match_token.span(),
                "`match` is not supported in expr!; use `if c { a } else if d { b } else { c }`",
            ),
            syn::Expr::Index(ix) => self.errors.add(
                ix.span(),
                "indexing is not supported in expr!: an operand stands for one element (the expression is \
                 applied elementwise, with broadcasting); write `x`, not `x[i]`, or use a `#[kernel]`",
            ),
            syn::Expr::Reference(r) => self.errors.add(
                r.span(),
                "references are not supported in expr!: name operands directly (`x`, not `&x`); expr! \
                 takes arrays by reference itself",
            ),
            syn::Expr::Range(_) => self.unsupported(e.span(), "ranges are"),
            syn::Expr::Tuple(_) => self.errors.add(
                e.span(),
                "tuples are not supported in expr!: an expr! computes one value per element; write one \
                 expr! per result",
            ),
            syn::Expr::Array(_) | syn::Expr::Repeat(_) => self.unsupported(e.span(), "array expressions are"),
            syn::Expr::Struct(_) => self.unsupported(e.span(), "struct expressions are"),
            syn::Expr::Field(f) => self.field(f),
            syn::Expr::Try(t) => {
                let inner = t.expr.to_token_stream().to_string();
                self.errors.add(
                    t.span(),
                    format!(
                        "the `?` operator is not supported in expr!: operands are arrays and scalars, not \
                         `Result`s; apply it before the expression: `let v = {inner}?;`, then write `v`"
                    ),
                );
            }
            syn::Expr::Async(_) | syn::Expr::Await(_) => self.unsupported(e.span(), "async code is"),
            syn::Expr::Unsafe(u) => self.errors.add(
                u.unsafe_token.span(),
                "`unsafe` is not supported in expr! (nothing in it is unsafe): remove `unsafe { }` and \
                 write the expression",
            ),
            syn::Expr::Let(_) => self.unsupported(e.span(), "`let` expressions are"),
            _ => self.unsupported(e.span(), "this expression is"),
        }
    }

    /// Field access: `expr!` captures plain names, so the fix is to bind the field first.
    fn field(&mut self, f: &syn::ExprField) {
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
        self.errors.add(
            f.span(),
            format!(
                "field access (`{whole}`) is not supported in expr!: its operands are plain names in scope; \
                 bind the field to a local first: `let {local} = &{whole};`, then write `{local}` in the expression"
            ),
        );
    }

    /// A method call: math methods of the elements are the translator's to check; a method
    /// the elements do not have, called on an operand, is the operand's (an array's): it
    /// must run before the expression.
    fn method_call(&mut self, m: &syn::ExprMethodCall) {
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

    /// Notes the first segment of `path` (`T` of `T::EPSILON`) as a type parameter where
    /// it names no element type and the path is longer.
    fn type_name(&mut self, path: &syn::Path) {
        let Some(first) = path.segments.first() else {
            return;
        };
        let name = first.ident.to_string();
        // (Types are named in upper camel case; `module::f` names no type.)
        let known = Scalar::from_rust(&name).is_some() || !name.starts_with(|c: char| c.is_ascii_uppercase());
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

    /// A name: bound by `let` (or a closure parameter), else an operand (closure form:
    /// an error, closures capture nothing); a longer path may name a type parameter.
    fn path(&mut self, p: &syn::ExprPath) {
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

    /// `if` needs an `else`: it becomes a select.
    fn if_expr(&mut self, i: &syn::ExprIf) {
        if let syn::Expr::Let(l) = &*i.cond {
            self.errors.add(
                l.span(),
                "`if let` is not supported in expr!; use a condition: `if x > 0.0 { .. } else { .. }`",
            );
        } else {
            self.expr(&i.cond);
        }
        self.block(&i.then_branch);
        match &i.else_branch {
            Some((_, els)) => self.expr(els),
            None => self.errors.add(
                i.span(),
                "`if` without `else` has no value; in expr! every `if` needs an `else` branch \
                 (it becomes a select `c ? a : b`)",
            ),
        }
    }

    /// A call: of a device function (noted, to be fetched), or an error for what exists
    /// only in kernels or is not a function.
    fn call(&mut self, c: &syn::ExprCall) {
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

    fn mac(&mut self, m: &syn::ExprMacro) {
        let name = m
            .mac
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        self.errors.add(
            m.span(),
            format!(
                "macros are not supported inside expr! (`{name}!`): the expression is translated to \
                 OpenCL C at compile time; write the expression itself"
            ),
        );
    }

    fn block(&mut self, b: &syn::Block) {
        self.scopes.push(HashSet::new());
        let n = b.stmts.len();
        for (i, s) in b.stmts.iter().enumerate() {
            match s {
                syn::Stmt::Local(l) => self.local(l),
                syn::Stmt::Expr(e, None) if i + 1 == n => self.expr(e),
                syn::Stmt::Expr(e, _) => match strip_parens(e) {
                    // Statements that are not supported anyway: say why.
                    x if is_statement(x) || matches!(x, syn::Expr::Macro(_)) => self.expr(e),
                    syn::Expr::Binary(b) if compound_op(&b.op).is_some() => self.expr(e),
                    _ => self.errors.add(
                        s.span(),
                        "statements are not supported in expr!: a block holds `let` bindings and ends in \
                         its value (no `;` after it)",
                    ),
                },
                syn::Stmt::Item(item) => self.errors.add(
                    item.span(),
                    "items (`fn`, `const`, `use`, ...) are not supported inside expr!; define helpers as \
                     `#[device_fn]` functions before it",
                ),
                syn::Stmt::Macro(m) => self.errors.add(
                    m.span(),
                    "macros are not supported inside expr!: the expression is translated to OpenCL C at \
                     compile time",
                ),
            }
        }
        match b.stmts.last() {
            Some(syn::Stmt::Expr(_, None)) => {}
            _ => self.errors.add(
                b.span(),
                "this block has no value; in expr! a block ends in an expression (without `;`)",
            ),
        }
        self.scopes.pop();
    }

    fn local(&mut self, l: &syn::Local) {
        let (pat, ty) = match &l.pat {
            syn::Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            p => (p, None),
        };
        if let Some(ty) = ty {
            if let Err(e) = element_type(ty, "`let` bindings") {
                self.errors.push(e);
            }
        }
        match &l.init {
            Some(init) => {
                if let Some((_, d)) = &init.diverge {
                    self.errors
                        .add(d.span(), "`let ... else` is not supported in expr!");
                }
                self.expr(&init.expr);
            }
            None => self.errors.add(
                l.span(),
                "`let` without a value is not supported in expr! (there are no assignments): `let t = x * 2.0;`",
            ),
        }
        match pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                if let Some(m) = &pi.mutability {
                    self.errors.add(
                        m.span(),
                        "`let mut` is not supported in expr! (there are no assignments); bind a new name instead",
                    );
                }
                if let Some(scope) = self.scopes.last_mut() {
                    scope.insert(pi.ident.to_string());
                }
            }
            syn::Pat::Wild(_) => {}
            other => self.errors.add(
                other.span(),
                "unsupported pattern; `let` in expr! binds a plain name: `let t = ...;`",
            ),
        }
    }
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
