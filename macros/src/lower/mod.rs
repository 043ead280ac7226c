//! Lowering of a function body from syn to the typed IR: name resolution, the subset's
//! type rules (no implicit conversions, like Rust) and literal inference (an unsuffixed
//! literal takes the type of what it meets, else `i32` / `f64`).
//!
//! This file holds the lowerer's state: the scopes of names, the OpenCL C names given
//! out, the enclosing loops. The files beside it lower one construct each, and those with
//! a twin in `emit` carry the same name: `stmt` (blocks, statements, the function body),
//! `loops`, `expr`, `ops` (operators and casts), `place` (assignment targets and
//! indexing), `literal` (literals and constants), `calls` (intrinsics, atomics, device
//! functions), `complex` (complex numbers' operators, constructors, parts and methods).
//! Without a twin: `closures` (inlined as blocks), `consts` (`const` items:
//! statements), `local_memory`, `methods` (lowered to builtins),
//! `patterns` (`match`, lowered to `if`), `names` (reserved words, intrinsics and
//! suggestions) and `scan` (the device functions and kernel structs a body names, found
//! before lowering). Every error is collected at its span, with what is supported, and the
//! lowering goes on, so that one compilation reports every problem.

mod calls;
mod closures;
pub mod complex;
mod consts;
mod expr;
mod intrinsics;
mod literal;
mod local_memory;
mod loops;
mod methods;
pub mod names;
pub mod ops;
mod patterns;
mod place;
pub mod scan;
mod stmt;
mod structs;

use std::collections::{HashMap, HashSet};

use crate::diag::{Errors, Sp};
use crate::ir::*;
use crate::signature::FnKind;
use names::is_reserved;

/// What a name in scope refers to.
#[derive(Clone, Debug)]
enum Binding {
    Scalar {
        cname: String,
        ty: Ty,
        mutable: bool,
        param: bool,
    },
    Array {
        aref: ArrayRef,
        mutable: bool,
        len: ArrLen,
    },
    /// A closure bound to a local (`let sq = |v: f32| v * v;`), inlined where called.
    Closure(Box<syn::ExprClosure>),
    /// A `KernelStruct` parameter or local: its fields are read (and, for a `let mut`
    /// local, written) as `cname.field`.
    Struct {
        cname: String,
        def: Box<StructDef>,
        mutable: bool,
    },
    /// A name whose declaration was rejected: uses report nothing more.
    Poison,
}

#[derive(Clone, Debug)]
enum ArrLen {
    /// A slice parameter: its length is the parameter `cname`.
    Param(String),
    /// A `__local` array of a fixed length.
    Local(u64),
    /// A `const` array of the function (private, read only).
    Const(u64),
}

/// Lowers one function body.
pub struct Lowerer<'a> {
    pub infer: Infer,
    pub errors: Errors,
    scopes: Vec<HashMap<String, Binding>>,
    used: HashSet<String>,
    sigs: &'a [DevSig],
    /// The device functions (instances) called, in first-call order.
    pub callees: Vec<DevSig>,
    kind: FnKind,
    ret: Option<Scalar>,
    loop_depth: u32,
    /// Enclosing loops, innermost last: (Rust label, OpenCL C name) for labelled ones.
    labels: Vec<Option<(String, String)>>,
    /// Integer literals with their types, checked against their final types by `finish`.
    int_lits: Vec<(i128, Ty, Sp)>,
    /// Inside the body of a closure being inlined: `return` would leave the kernel.
    in_closure: bool,
    /// The OpenCL C names of the function's `const` scalars (which a `const` may read).
    consts: HashSet<String>,
    /// The kernel structs the function may name (`resolve::Deps::structs`).
    structs: Vec<StructDef>,
}

/// The value of an expression that was rejected: of type never, so that it unifies with
/// anything and its uses report nothing more.
fn err_expr(span: Sp) -> Expr {
    Expr {
        kind: ExprKind::Int(0),
        ty: Ty::Never,
        span,
    }
}

/// "1 was" / "2 were".
fn given(n: usize) -> String {
    if n == 1 {
        "1 was".into()
    } else {
        format!("{n} were")
    }
}

/// `((e))` → `e`: parentheses and invisible groups do not change what an expression is.
pub fn strip_parens(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip_parens(&p.expr),
        syn::Expr::Group(g) => strip_parens(&g.expr),
        e => e,
    }
}

/// Whether `e` is an assignment, a loop or a jump: a statement in the subset, valid in
/// value position only as a value of type unit (or never).
pub fn is_statement(e: &syn::Expr) -> bool {
    matches!(
        e,
        syn::Expr::Assign(_)
            | syn::Expr::While(_)
            | syn::Expr::Loop(_)
            | syn::Expr::ForLoop(_)
            | syn::Expr::Return(_)
            | syn::Expr::Break(_)
            | syn::Expr::Continue(_)
    )
}

/// The names a pattern binds.
fn pattern_idents(p: &syn::Pat) -> Vec<String> {
    use syn::visit::Visit;
    struct V(Vec<String>);
    impl<'ast> Visit<'ast> for V {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.0.push(p.ident.to_string());
            syn::visit::visit_pat_ident(self, p);
        }
    }
    let mut v = V(Vec::new());
    v.visit_pat(p);
    v.0
}

impl<'a> Lowerer<'a> {
    pub fn new(kind: FnKind, ret: Option<Scalar>, sigs: &'a [DevSig]) -> Self {
        Lowerer {
            infer: Infer::default(),
            errors: Errors::default(),
            scopes: vec![HashMap::new()],
            used: HashSet::new(),
            sigs,
            callees: Vec::new(),
            kind,
            ret,
            loop_depth: 0,
            labels: Vec::new(),
            int_lits: Vec::new(),
            in_closure: false,
            consts: HashSet::new(),
            structs: Vec::new(),
        }
    }

    /// A fresh OpenCL C identifier for a Rust name.
    fn fresh(&mut self, name: &str) -> String {
        let mut base = name.trim_start_matches("r#").to_string();
        if is_reserved(&base) {
            base.push('_');
        }
        self.unique(base)
    }

    /// A fresh name for generated code (`lzc_...`), which user names never take.
    fn fresh_internal(&mut self, base: &str) -> String {
        self.unique(format!("lzc_{base}"))
    }

    fn unique(&mut self, base: String) -> String {
        let mut cand = base.clone();
        let mut k = 1;
        while self.used.contains(&cand) {
            cand = format!("{base}_{k}");
            k += 1;
        }
        self.used.insert(cand.clone());
        cand
    }

    fn bind(&mut self, name: &str, b: Binding) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), b);
        }
    }

    fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    /// Declares an operand of `expr!`: a scalar named `name` in the Rust code, written
    /// `cname` in the OpenCL C text (a `$i` placeholder), of type `ty`.
    pub fn declare_operand(&mut self, name: &str, ty: Ty, cname: String) {
        self.used.insert(cname.clone());
        self.bind(
            name,
            Binding::Scalar {
                cname,
                ty,
                mutable: false,
                param: true,
            },
        );
    }

    /// Declares the parameters (`structs`: the definitions `ParamTy::Struct` indexes);
    /// returns their OpenCL C names (slices: pointer, length).
    pub fn params(
        &mut self,
        params: &[Param],
        structs: &[StructDef],
        rejected: &[syn::Ident],
    ) -> Vec<(String, Option<String>)> {
        for r in rejected {
            self.bind(&r.to_string(), Binding::Poison);
        }
        let mut out = Vec::new();
        for p in params {
            let name = p.name.to_string();
            match p.ty {
                ParamTy::Scalar(s) => {
                    let cname = self.fresh(&name);
                    self.bind(
                        &name,
                        Binding::Scalar {
                            cname: cname.clone(),
                            ty: Ty::S(s),
                            mutable: p.mutable,
                            param: true,
                        },
                    );
                    out.push((cname, None));
                }
                ParamTy::Slice { elem, mutable } => {
                    let cname = self.fresh(&name);
                    let len = self.fresh(&format!("{cname}_len"));
                    self.bind(
                        &name,
                        Binding::Array {
                            aref: ArrayRef {
                                name: cname.clone(),
                                elem,
                                global: true,
                            },
                            mutable,
                            len: ArrLen::Param(len.clone()),
                        },
                    );
                    out.push((cname, Some(len)));
                }
                ParamTy::Struct(k) => {
                    let cname = self.fresh(&name);
                    let def = Box::new(structs[k].clone());
                    self.bind(
                        &name,
                        Binding::Struct {
                            cname: cname.clone(),
                            def,
                            mutable: false,
                        },
                    );
                    out.push((cname, None));
                }
            }
        }
        self.structs = structs.to_vec();
        out
    }

    fn unify(&mut self, expected: Ty, found: Ty, span: Sp, context: &str) {
        if let Err(m) = self.infer.unify(expected, found) {
            self.errors.add(span, format!("mismatched types{context}: {m}"));
        }
    }
}
