//! `expr!`: one Rust expression over arrays and scalars in scope (or a closure with typed
//! parameters), translated to an OpenCL C expression at compile time and recorded at run
//! time as one lazy node (`lazycl::expr_node`) that fuses with the nodes around it.
//!
//! The macro cannot see the Rust types of the captured names, so it works in three steps:
//!
//! 1. `check` walks the syntax, rejects what `expr!` does not support (with messages that
//!    say what is supported), and lists the operands (free names, in order of first use)
//!    and the device functions called.
//! 2. A probe lowering with an unknown type per operand finds which operands must share
//!    an element type (classes) and which kind each class has (`{float}`, `{integer}`, a
//!    fixed type, anything); then every assignment of element types to the classes is
//!    lowered with the `#[kernel]` translator (`typeck` + `opencl`), each into its own
//!    template with exact, type-specific OpenCL C (wrapping, division guards, ...).
//! 3. The generated Rust code implements a local trait for the tuple of the operands'
//!    element types of every valid assignment (its associated type is the result type, its
//!    function the template), so the Rust type checker picks the template, and a wrong
//!    combination is a compile error whose message lists what the expression accepts.

use std::collections::HashSet;

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;

use crate::diag::{Errors, Sp, Spanned};
use crate::emit;
use crate::ir::{DevSig, Expr, Infer, Scalar, Ty, VarKind};
use crate::lower::names::{is_intrinsic, suggest};
use crate::lower::ops::compound_op;
use crate::lower::{strip_parens, Lowerer};
use crate::resolve::{callee_sources, devfn_macro, resolve_chain};
use crate::signature::{self as parse, FnKind};

/// What `expr!` supports, for error messages.
const SUPPORTED: &str =
    "expr! supports operands (arrays and scalars in scope), literals, arithmetic, comparisons, \
     `&&` `||` `!`, `as` casts, `if c { a } else { b }`, blocks with `let` bindings, math methods \
     (`x.sqrt()`, `x.max(y)`, `x.mul_add(a, b)`, ...), constants (`f32::consts::PI`) and calls of \
     `#[device_fn]` functions";

/// The element types an operand can have, in the order variants are tried.
const ELEMENTS: [Scalar; 7] = [
    Scalar::F32,
    Scalar::F64,
    Scalar::I32,
    Scalar::U32,
    Scalar::I64,
    Scalar::U64,
    Scalar::Bool,
];

/// Assignments of element types tried at most (beyond: a compile error).
const MAX_VARIANTS: usize = 4096;

/// A closure parameter: its name and element type.
type Param = (Ident, Scalar);
/// A closure's declared return type and where it is written.
type Ret = (Scalar, Sp);

/// An `expr!` input: a plain expression, or a closure with typed parameters.
struct Input {
    body: syn::Expr,
    /// Closure form: the parameters' names and types.
    params: Option<Vec<Param>>,
    /// Closure form: the declared return type.
    ret: Option<Ret>,
}

/// The result of the syntactic check.
struct Checked {
    /// Operands: free names in order of first use (closure form: the parameters).
    operands: Vec<Ident>,
    /// Device functions called, in order of first call.
    callees: Vec<Ident>,
}

/// The hidden macro of the device function `id` calls (spanned at the call).
fn callee_macro(id: &Ident) -> Ident {
    devfn_macro(&id.unraw().to_string(), id.span())
}

/// Entry point of `expr!`.
pub fn entry(input: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let Some((parsed, checked)) = front(input.clone(), &mut errors) else {
        return compile_errors(errors);
    };
    if !errors.is_empty() {
        return compile_errors(errors);
    }
    // Device functions called: fetch their signatures first through their hidden macros
    // (like a kernel does), ending in `__lazycl_resolved! { [sigs] expr ... }`.
    let macros = checked.callees.iter().map(callee_macro).collect();
    if let Some(chain) = resolve_chain(macros, quote! { expr #input }) {
        return chain;
    }
    translate(&parsed, &checked, &[])
}

/// `__lazycl_resolved! { [sigs] expr ... }`: the translation once the device functions'
/// signatures are known.
pub fn resolved(input: TokenStream, sigs: &[DevSig]) -> TokenStream {
    let mut errors = Errors::default();
    match front(input, &mut errors) {
        Some((parsed, checked)) if errors.is_empty() => translate(&parsed, &checked, sigs),
        _ => compile_errors(errors),
    }
}

/// Errors in expression position: `compile_error!`s in a block (several are not an
/// expression by themselves).
fn compile_errors(errors: Errors) -> TokenStream {
    match errors.into_error() {
        Some(e) => {
            let e = e.to_compile_error();
            quote! {{ #e }}
        }
        None => quote! { ::core::compile_error!("lazycl internal error: expr! failed without a message") },
    }
}

/// Parses and checks the input.
fn front(input: TokenStream, errors: &mut Errors) -> Option<(Input, Checked)> {
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
    let mut ck = Checker {
        errors: Errors::default(),
        scopes: vec![HashSet::new()],
        operands: Vec::new(),
        callees: Vec::new(),
        closed: false,
    };
    let input = match e {
        syn::Expr::Closure(c) => {
            let (params, ret) = closure_header(&c, &mut ck.errors);
            ck.closed = true;
            if let Some(scope) = ck.scopes.last_mut() {
                scope.extend(params.iter().map(|(n, _)| n.to_string()));
            }
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
                    parse::ELEMENTS
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

/// An element type (`f32 f64 i32 u32 i64 u64 bool`) written in a closure.
fn element_type(ty: &syn::Type, what: &str) -> syn::Result<Scalar> {
    match ty {
        syn::Type::Reference(_) => Err(ty.span().error(format!(
            "reference types are not supported in expr!: {what} are element values (`x: f32`), and \
             `.apply(...)` takes arrays (`&Array<f32>`) and scalars for them"
        ))),
        syn::Type::Slice(_) | syn::Type::Array(_) => Err(ty.span().error(format!(
            "{what} of expr! are element types ({}); the closure is applied elementwise to arrays",
            parse::ELEMENTS
        ))),
        _ => match parse::scalar_type(ty) {
            Ok(Scalar::Usize) => Err(ty.span().error(format!(
                "`usize` is not an array element type; use one of {}",
                parse::ELEMENTS
            ))),
            Ok(s) => Ok(s),
            Err(_) => Err(ty.span().error(format!(
                "unsupported type in expr!; {what} are one of {}",
                parse::ELEMENTS
            ))),
        },
    }
}

/// The syntactic check: what `expr!` accepts, the operands and the called functions.
struct Checker {
    errors: Errors,
    /// Names bound by `let` (and closure parameters), innermost last.
    scopes: Vec<HashSet<String>>,
    operands: Vec<Ident>,
    callees: Vec<Ident>,
    /// Closure form: free names are errors, not operands.
    closed: bool,
}

impl Checker {
    fn bound(&self, name: &str) -> bool {
        self.scopes.iter().any(|s| s.contains(name))
    }

    fn unsupported(&mut self, span: impl Into<Sp>, what: &str) {
        self.errors
            .add(span, format!("{what} not supported in expr!; {SUPPORTED}"));
    }

    fn expr(&mut self, e: &syn::Expr) {
        match e {
            syn::Expr::Lit(l) => match &l.lit {
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
            },
            syn::Expr::Path(p) => {
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
            syn::Expr::Paren(p) => self.expr(&p.expr),
            syn::Expr::Group(g) => self.expr(&g.expr),
            syn::Expr::Unary(u) => match u.op {
                syn::UnOp::Deref(_) => self.errors.add(
                    u.span(),
                    "dereferencing (`*x`) is not supported in expr!: operands are used by value; write `x`",
                ),
                _ => self.expr(&u.expr),
            },
            syn::Expr::Binary(b) => {
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
            syn::Expr::Cast(c) => {
                self.expr(&c.expr);
                if matches!(&*c.ty, syn::Type::Reference(_) | syn::Type::Ptr(_)) {
                    self.errors.add(
                        c.ty.span(),
                        format!(
                            "reference types are not supported in expr!; `as` casts to a scalar type ({})",
                            parse::ELEMENTS
                        ),
                    );
                }
            }
            syn::Expr::If(i) => {
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
            syn::Expr::Block(b) => {
                if let Some(l) = &b.label {
                    self.errors
                        .add(l.span(), "block labels are not supported in expr!");
                }
                self.block(&b.block);
            }
            syn::Expr::MethodCall(m) => {
                self.expr(&m.receiver);
                for a in &m.args {
                    self.expr(a);
                }
            }
            syn::Expr::Call(c) => {
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
                        // Longer paths (`f32::sqrt(x)`) are checked by the translator.
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
            syn::Expr::Closure(c) => self.errors.add(
                c.span(),
                "closures inside expr! are not supported; a closure can only be the whole argument: \
                 `expr!(|x: f32| x * 2.0)`; for a reusable helper write a `#[device_fn]`",
            ),
            syn::Expr::Macro(m) => {
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
            syn::Expr::Tuple(_) => self.unsupported(e.span(), "tuples are"),
            syn::Expr::Array(_) | syn::Expr::Repeat(_) => self.unsupported(e.span(), "array expressions are"),
            syn::Expr::Struct(_) => self.unsupported(e.span(), "struct expressions are"),
            syn::Expr::Field(_) => self.unsupported(e.span(), "field access is"),
            syn::Expr::Try(_) => self.unsupported(e.span(), "the `?` operator is"),
            syn::Expr::Async(_) | syn::Expr::Await(_) => self.unsupported(e.span(), "async code is"),
            syn::Expr::Unsafe(_) => self.unsupported(e.span(), "`unsafe` is"),
            syn::Expr::Let(_) => self.unsupported(e.span(), "`let` expressions are"),
            _ => self.unsupported(e.span(), "this expression is"),
        }
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
                    syn::Expr::While(_)
                    | syn::Expr::Loop(_)
                    | syn::Expr::ForLoop(_)
                    | syn::Expr::Assign(_)
                    | syn::Expr::Return(_)
                    | syn::Expr::Break(_)
                    | syn::Expr::Continue(_)
                    | syn::Expr::Macro(_) => self.expr(e),
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

/// One lowering of the expression with every operand's element type fixed.
#[derive(Debug)]
struct Variant {
    types: Vec<Scalar>,
    result: Scalar,
    text: String,
    helpers: String,
    uses_f64: bool,
}

/// Lowers the body with the operands declared as `types`; the typed IR, the inference
/// table and the errors.
fn lower(input: &Input, operands: &[Ident], types: &[Ty], sigs: &[DevSig]) -> (Expr, Infer, Errors) {
    let mut low = Lowerer::new(FnKind::DeviceFn, None, sigs);
    for (i, (name, ty)) in operands.iter().zip(types).enumerate() {
        low.declare_operand(&name.to_string(), *ty, format!("${i}"));
    }
    let e = low.expr(&input.body);
    if let Some((r, span)) = input.ret {
        if let Err(m) = low.infer.unify(Ty::S(r), e.ty) {
            low.errors.add(
                span,
                format!("mismatched types in the closure's return value: {m}"),
            );
        }
    }
    low.finish();
    (e, std::mem::take(&mut low.infer), std::mem::take(&mut low.errors))
}

/// The classes of operands that must share an element type, each with the element types
/// it may have, found by lowering once with an unknown type per operand.
fn classes(input: &Input, operands: &[Ident], sigs: &[DevSig]) -> Vec<(Vec<usize>, Vec<Scalar>)> {
    if let Some(params) = &input.params {
        return params
            .iter()
            .enumerate()
            .map(|(i, (_, s))| (vec![i], vec![*s]))
            .collect();
    }
    let mut infer = Infer::default();
    let vars: Vec<Ty> = operands.iter().map(|_| infer.fresh(VarKind::Any)).collect();
    let mut low = Lowerer::new(FnKind::DeviceFn, None, sigs);
    low.infer = infer;
    for (i, (name, ty)) in operands.iter().zip(&vars).enumerate() {
        low.declare_operand(&name.to_string(), *ty, format!("${i}"));
    }
    let _ = low.expr(&input.body);
    let mut out: Vec<(Ty, Vec<usize>, Vec<Scalar>)> = Vec::new();
    for (i, v) in vars.iter().enumerate() {
        let root = low.infer.shallow(*v);
        if let Some(c) = out
            .iter_mut()
            .find(|c| c.0 == root && !matches!(root, Ty::Unit | Ty::Never))
        {
            c.1.push(i);
            continue;
        }
        let domain: Vec<Scalar> = match root {
            Ty::S(s) => vec![s],
            Ty::Var(_) => match low.infer.kind(root) {
                Some(VarKind::Float) => vec![Scalar::F32, Scalar::F64],
                Some(VarKind::Int) => vec![Scalar::I32, Scalar::U32, Scalar::I64, Scalar::U64],
                _ => ELEMENTS.to_vec(),
            },
            _ => ELEMENTS.to_vec(),
        };
        out.push((root, vec![i], domain));
    }
    out.into_iter().map(|(_, m, d)| (m, d)).collect()
}

/// Every valid variant, or the errors of the most plausible invalid one.
fn variants(input: &Input, operands: &[Ident], sigs: &[DevSig]) -> Result<Vec<Variant>, syn::Error> {
    let classes = classes(input, operands, sigs);
    let total = classes
        .iter()
        .try_fold(1usize, |acc, (_, d)| acc.checked_mul(d.len().max(1)))
        .unwrap_or(usize::MAX);
    if total > MAX_VARIANTS {
        let names: Vec<String> = classes
            .iter()
            .filter_map(|(m, _)| m.first().map(|&i| format!("`{}`", operands[i])))
            .collect();
        return Err(input.body.span().error(format!(
            "expr! cannot work out the element types: the operands {} are independent of each other \
             ({total} combinations); use the closure form with typed parameters: `expr!(|x: f32, ..| ...)`",
            names.join(", ")
        )));
    }
    let mut valid = Vec::new();
    let mut best: Option<(usize, syn::Error)> = None;
    let mut pick = vec![0usize; classes.len()];
    for _ in 0..total {
        let mut types = vec![Scalar::F32; operands.len()];
        for ((members, domain), &k) in classes.iter().zip(&pick) {
            for &m in members {
                if let Some(&s) = domain.get(k) {
                    types[m] = s;
                }
            }
        }
        let tys: Vec<Ty> = types.iter().map(|s| Ty::S(*s)).collect();
        let (e, infer, mut errors) = lower(input, operands, &tys, sigs);
        let result = infer.scalar(e.ty);
        if errors.is_empty() {
            match result {
                Some(Scalar::Usize) => errors.add(
                    e.span,
                    "the value of an expr! is an array element; `usize` is not an element type: cast it \
                     (`as u64`)",
                ),
                None => errors.add(e.span, "this expression has no value; expr! needs a value"),
                Some(_) => {}
            }
        }
        if types.contains(&Scalar::Usize) && errors.is_empty() {
            errors.add(
                e.span,
                "an operand would have type `usize`, which is not an array element type; use `u64`",
            );
        }
        match (errors.into_error(), result) {
            (None, Some(result)) => match emit::expression(&e, &infer) {
                Ok(t) => valid.push(Variant {
                    types,
                    result,
                    text: t.text,
                    helpers: t.helpers,
                    uses_f64: t.uses_f64,
                }),
                Err(m) => {
                    let err = e.span.error(m);
                    if best.is_none() {
                        best = Some((1, err));
                    }
                }
            },
            (Some(err), _) => {
                let n = err.clone().into_iter().count();
                if best.as_ref().is_none_or(|(b, _)| n < *b) {
                    best = Some((n, err));
                }
            }
            (None, None) => {}
        }
        // Next assignment (the first class varies fastest).
        for (k, (_, domain)) in pick.iter_mut().zip(&classes) {
            *k += 1;
            if *k < domain.len() {
                break;
            }
            *k = 0;
        }
    }
    if valid.is_empty() {
        return Err(match best {
            Some((_, e)) => e,
            None => input
                .body
                .span()
                .error("expr! found no element types for which this expression is valid"),
        });
    }
    Ok(valid)
}

/// The generated Rust code.
fn translate(input: &Input, checked: &Checked, sigs: &[DevSig]) -> TokenStream {
    let operands = &checked.operands;
    let variants = match variants(input, operands, sigs) {
        Ok(v) => v,
        Err(e) => {
            let e = e.to_compile_error();
            return quote! {{ #e }};
        }
    };
    let p = quote! { ::lazycl::__private };
    let rust = match &input.params {
        Some(_) => {
            let names: Vec<String> = operands.iter().map(|o| o.to_string()).collect();
            format!("|{}| {}", names.join(", "), input.body.to_token_stream())
        }
        None => input.body.to_token_stream().to_string(),
    };
    let callee_sources = callee_sources(checked.callees.iter().map(callee_macro));
    let template = |v: &Variant| {
        let text = &v.text;
        let own = format!("{}{}", if v.uses_f64 { emit::FP64_PRAGMA } else { "" }, v.helpers);
        quote! {
            #p::ExprTemplate {
                text: #text,
                helpers: ::core::concat!(#(#callee_sources,)* #own),
                rust: #rust,
            }
        }
    };
    let n = operands.len();
    let gens: Vec<Ident> = (0..n).map(|i| format_ident!("A{}", i)).collect();
    if let Some(params) = &input.params {
        // The closure form: a value with `.apply(...)`.
        let Some(v) = variants.first() else {
            return quote! {};
        };
        let t = template(v);
        let r = format_ident!("{}", v.result.rust());
        let elem: Vec<Ident> = params
            .iter()
            .map(|(_, s)| format_ident!("{}", s.rust()))
            .collect();
        let has_array = has_array_bound(
            gens.iter()
                .zip(&elem)
                .map(|(g, e)| quote! { <#g as #p::ExprInput<#e>>::Kind }),
        );
        let pnames: Vec<Ident> = params
            .iter()
            .map(|(n, _)| {
                let mut n = n.clone();
                n.set_span(Span::mixed_site());
                n
            })
            .collect();
        let sig_doc = params
            .iter()
            .map(|(n, s)| format!("{n}: impl ExprInput<{}>", s.rust()))
            .collect::<Vec<_>>()
            .join(", ");
        let doc = format!(
            "Applies `{rust}` elementwise: `apply({sig_doc}) -> Array<{}>`. Each argument is an \
             `&Array` or a scalar of the parameter's type; at least one must be an array. Arrays \
             broadcast by numpy's rules; the result is a lazy array that fuses with the nodes around it.",
            v.result.rust()
        );
        return quote! {
            {
                /// The value of an `expr!` closure: apply it to arrays and scalars with `.apply(...)`.
                #[derive(Clone, Copy, Debug)]
                struct __LazyclExprFn;
                impl __LazyclExprFn {
                    #[doc = #doc]
                    #[inline]
                    #[allow(clippy::too_many_arguments, dead_code)]
                    pub fn apply<#(#gens: #p::ExprInput<#elem>),*>(&self, #(#pnames: #gens),*) -> #p::Array<#r>
                    where
                        #has_array
                    {
                        static TEMPLATE: #p::ExprTemplate = #t;
                        #p::expr_node::<#r>(&TEMPLATE, &[#(#p::ExprInput::operand(&#pnames)),*])
                    }
                }
                __LazyclExprFn
            }
        };
    }

    // The expression form: the template is chosen by the operands' element types.
    let elems: Vec<TokenStream> = gens
        .iter()
        .map(|g| quote! { <#g as #p::ExprArg>::Elem })
        .collect();
    let tuple = quote! { (#(#elems,)*) };
    let has_array = has_array_bound(gens.iter().map(|g| quote! { <#g as #p::ExprArg>::Kind }));
    // A name per expression, so that rustc does not point at other `expr!`s' traits as
    // "similarly named".
    let trait_name = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        rust.hash(&mut h);
        format_ident!("__LazyclExprTypes{:08x}", h.finish() as u32)
    };
    let impls: Vec<TokenStream> = variants
        .iter()
        .map(|v| {
            let tys: Vec<Ident> = v.types.iter().map(|s| format_ident!("{}", s.rust())).collect();
            let r = format_ident!("{}", v.result.rust());
            let t = template(v);
            quote! {
                impl #trait_name for (#(#tys,)*) {
                    type R = #r;
                    #[inline]
                    fn template() -> &'static #p::ExprTemplate {
                        static TEMPLATE: #p::ExprTemplate = #t;
                        &TEMPLATE
                    }
                }
            }
        })
        .collect();
    let (message, notes) = type_message(operands, &variants);
    let vars: Vec<Ident> = (0..n).map(|i| format_ident!("a{}", i)).collect();
    let span = input.body.span().start;
    let call = Ident::new("__lazycl_expr", span);
    let args: Vec<TokenStream> = operands
        .iter()
        .map(|o| quote_spanned! {o.span()=> &#o })
        .collect();
    quote! {
        {
            #[allow(non_camel_case_types)]
            #[diagnostic::on_unimplemented(message = #message, label = "element types not accepted by this expr!", #(note = #notes),*)]
            trait #trait_name {
                type R: #p::Element;
                fn template() -> &'static #p::ExprTemplate;
            }
            #(#impls)*
            #[inline]
            #[allow(clippy::too_many_arguments)]
            fn __lazycl_expr<#(#gens: #p::ExprArg),*>(#(#vars: &#gens),*) -> #p::Array<<#tuple as #trait_name>::R>
            where
                #tuple: #trait_name,
                #has_array
            {
                #p::expr_node::<<#tuple as #trait_name>::R>(
                    <#tuple as #trait_name>::template(),
                    &[#(#p::ExprArg::operand(#vars)),*],
                )
            }
            #call(#(#args),*)
        }
    }
}

/// The where-clause predicate "at least one of these kinds is an array".
pub fn has_array_bound(kinds: impl Iterator<Item = TokenStream>) -> TokenStream {
    let p = quote! { ::lazycl::__private::expr_kind };
    let mut kinds = kinds;
    let Some(mut acc) = kinds.next() else {
        return quote! {};
    };
    let mut bounds = Vec::new();
    for k in kinds {
        bounds.push(quote! { #acc: #p::Or<#k>, });
        acc = quote! { <#acc as #p::Or<#k>>::Out };
    }
    quote! { #(#bounds)* #acc: #p::HasArray, }
}

/// The message and notes of the error for operands whose element types the expression
/// does not accept.
fn type_message(operands: &[Ident], variants: &[Variant]) -> (String, Vec<String>) {
    let names: Vec<String> = operands.iter().map(|o| format!("`{o}`")).collect();
    let message = format!(
        "expr! cannot be applied to operands {} with element types `{{Self}}`",
        names.join(", ")
    );
    let list = |set: &[Scalar]| set.iter().map(|s| s.rust()).collect::<Vec<_>>().join(", ");
    // Operands that always have equal types, and the types each group may have.
    let mut groups: Vec<(Vec<usize>, Vec<Scalar>)> = Vec::new();
    for i in 0..operands.len() {
        if let Some(g) = groups
            .iter_mut()
            .find(|(m, _)| variants.iter().all(|v| v.types[m[0]] == v.types[i]))
        {
            g.0.push(i);
            continue;
        }
        let mut set: Vec<Scalar> = Vec::new();
        for v in variants {
            if !set.contains(&v.types[i]) {
                set.push(v.types[i]);
            }
        }
        groups.push((vec![i], set));
    }
    let mut notes = Vec::new();
    for (members, set) in &groups {
        let who: Vec<&str> = members.iter().map(|&m| names[m].as_str()).collect();
        let note = match (who.len(), set.len()) {
            (1, 1) => format!("{} must have element type {}", who[0], list(set)),
            (1, _) => format!("{} must have one of the element types {}", who[0], list(set)),
            (_, 1) => format!("{} must all have element type {}", who.join(", "), list(set)),
            _ => format!(
                "{} must have the same element type, one of {} (expr! does no implicit conversions; use `as`)",
                who.join(" and "),
                list(set)
            ),
        };
        notes.push(note);
    }
    let product: usize = groups.iter().map(|(_, s)| s.len()).product();
    if product != variants.len() && groups.len() > 1 {
        let combos: Vec<String> = variants
            .iter()
            .take(12)
            .map(|v| format!("({})", list(&v.types)))
            .collect();
        let more = if variants.len() > 12 { ", ..." } else { "" };
        notes.push(format!(
            "accepted combinations for ({}): {}{more}",
            names.join(", "),
            combos.join(", ")
        ));
    }
    (message, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The variants of an `expr!` input, or its error messages.
    fn variants_of(src: &str) -> Result<Vec<Variant>, Vec<String>> {
        let mut errors = Errors::default();
        let ts: TokenStream = src.parse().map_err(|e| vec![format!("{e}")])?;
        let (input, checked) = front(ts, &mut errors).ok_or_else(|| vec!["no parse".to_string()])?;
        if let Some(e) = errors.into_error() {
            return Err(e.into_iter().map(|e| e.to_string()).collect());
        }
        variants(&input, &checked.operands, &[]).map_err(|e| e.into_iter().map(|e| e.to_string()).collect())
    }

    #[test]
    fn a_literal_takes_its_operands_type() {
        let v = variants_of("a * x + 2.0").unwrap();
        let types: Vec<_> = v.iter().map(|v| (v.types.clone(), v.result)).collect();
        assert_eq!(
            types,
            [
                (vec![Scalar::F32, Scalar::F32], Scalar::F32),
                (vec![Scalar::F64, Scalar::F64], Scalar::F64)
            ]
        );
        assert_eq!(v[0].text, "(($0 * $1) + 2.0f)");
        assert!(v[1].uses_f64 && !v[0].uses_f64);
    }

    #[test]
    fn independent_operands_and_fixed_results() {
        let v = variants_of("(x as f32) < y").unwrap();
        // `y` is f32; `x` is anything that casts to f32 (not bool).
        assert_eq!(v.len(), 6);
        assert!(v
            .iter()
            .all(|v| v.types[1] == Scalar::F32 && v.result == Scalar::Bool));
        let v = variants_of("x.sqrt() + y").unwrap();
        assert_eq!(v.len(), 2, "x and y share a float type");
    }

    #[test]
    fn lets_are_inlined_and_branches_are_selects() {
        let v = variants_of("{ let t = x * 2.0; if t > 1.0 { t } else { -t } }").unwrap();
        assert_eq!(
            v[0].text,
            "((($0 * 2.0f)) > 1.0f ? (($0 * 2.0f)) : (-(($0 * 2.0f))))"
        );
    }

    #[test]
    fn integer_semantics_come_with_their_helpers() {
        let v = variants_of("x / y").unwrap();
        let i32v = v.iter().find(|v| v.types[0] == Scalar::I32).unwrap();
        assert!(i32v.text.contains("lzc_div_int($0, $1)"), "{}", i32v.text);
        assert!(i32v.helpers.contains("#ifndef LZC_HELPER_lzc_div_int"));
    }

    #[test]
    fn errors_say_what_is_supported() {
        let e = variants_of("x.frobnicate()").unwrap_err();
        assert!(e[0].contains("unsupported method `frobnicate` on `f32`"), "{e:?}");
        let e = variants_of("|x: f32| x * a").unwrap_err();
        assert!(e[0].contains("cannot capture `a`"), "{e:?}");
        let e = variants_of("{ x += 1.0; x }").unwrap_err();
        assert!(e[0].contains("assignments are not supported"), "{e:?}");
        let e = variants_of("1.0 + 2.0").unwrap_err();
        assert!(e[0].contains("at least one array operand"), "{e:?}");
    }
}
