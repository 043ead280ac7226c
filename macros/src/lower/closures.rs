//! Closures bound to a local, `let sq = |v: f32| v * v;`, inlined where they are called:
//! `sq(x)` becomes the block `{ let v = x; v * v }`. Only non-capturing closures with
//! typed scalar parameters: the body sees its parameters and nothing else of the function
//! (so that a name means the same at every call as where the closure was written), and
//! `return`, `break` and `continue` cannot reach out of it. There is no emitter twin: the
//! result is an ordinary block.

use std::collections::{HashMap, HashSet};

use super::{err_expr, given, pattern_idents, Binding, Lowerer};
use crate::diag::Spanned;
use crate::ir::*;
use crate::signature::scalar_type;

impl Lowerer<'_> {
    /// `let name = |a: T, ..| body;`: checks the closure and binds `name` to it.
    pub(super) fn let_closure(&mut self, pi: &syn::PatIdent, c: &syn::ExprClosure) {
        let name = pi.ident.to_string();
        let mut ok = true;
        if let Some(a) = &c.asyncness {
            self.errors
                .add(a.span(), "async closures are not supported in kernels");
            ok = false;
        }
        if c.lifetimes.is_some() || c.constness.is_some() || c.movability.is_some() {
            self.errors
                .add(c.span(), "closures in kernels are plain: `|v: f32| v * v`");
            ok = false;
        }
        let mut params = HashSet::new();
        for input in &c.inputs {
            match input {
                syn::Pat::Type(pt) if matches!(&*pt.pat, syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none()) =>
                {
                    if let Err(e) = scalar_type(&pt.ty) {
                        self.errors.push(e);
                        ok = false;
                    }
                    params.extend(pattern_idents(&pt.pat));
                }
                other => {
                    self.errors.add(
                        other.span(),
                        "a closure's parameters in kernels are typed names: `|v: f32, n: u32| ..`",
                    );
                    ok = false;
                }
            }
        }
        if let syn::ReturnType::Type(_, t) = &c.output {
            if let Err(e) = scalar_type(t) {
                self.errors.push(e);
                ok = false;
            }
        }
        // Captures: a name of the function the body reads (it would be read where the
        // closure is called, where it may mean something else).
        for id in free_names(&c.body, &params) {
            if self.lookup(&id.to_string()).is_some() {
                self.errors.add(
                    id.span(),
                    format!(
                        "closures in kernels cannot capture `{id}`; pass it as a parameter \
                         (`|.., {id}: T| ..`) or write a `#[device_fn]`"
                    ),
                );
                ok = false;
            }
        }
        let binding = if ok {
            Binding::Closure(Box::new(c.clone()))
        } else {
            Binding::Poison
        };
        self.bind(&name, binding);
    }

    /// A call of the closure bound to a local: its arguments into temporaries (in the
    /// caller's scope), then its body over them, alone in scope.
    pub(super) fn closure_call(&mut self, c: &syn::ExprClosure, call: &syn::ExprCall) -> Expr {
        let span = call.span();
        let name = quote::ToTokens::to_token_stream(&*call.func).to_string();
        if call.args.len() != c.inputs.len() {
            self.errors.add(
                span,
                format!(
                    "the closure `{name}` takes {} arguments, but {} given",
                    c.inputs.len(),
                    given(call.args.len())
                ),
            );
            return err_expr(span);
        }
        let Some((stmts, params)) = self.closure_args(c, call, &name) else {
            return err_expr(span);
        };
        let body = self.closure_body(&c.body, params);
        if let syn::ReturnType::Type(_, t) = &c.output {
            if let Ok(s) = scalar_type(t) {
                self.unify(
                    Ty::S(s),
                    body.ty,
                    body.span,
                    &format!(" in the value of the closure `{name}`"),
                );
            }
        }
        let ty = body.ty;
        Expr {
            kind: ExprKind::Block(Block {
                stmts,
                tail: Some(Box::new(body)),
            }),
            ty,
            span,
        }
    }

    /// The arguments of a call of the closure `name`, each in a temporary `let` of its
    /// parameter's type, and the parameters bound to them; `None` for a closure whose
    /// parameters were rejected where it was bound.
    fn closure_args(
        &mut self,
        c: &syn::ExprClosure,
        call: &syn::ExprCall,
        name: &str,
    ) -> Option<(Vec<Stmt>, Vec<ClosureParam>)> {
        let mut stmts = Vec::new();
        let mut params = Vec::new();
        for (input, arg) in c.inputs.iter().zip(&call.args) {
            let syn::Pat::Type(pt) = input else {
                return None;
            };
            let syn::Pat::Ident(pid) = &*pt.pat else {
                return None;
            };
            let Ok(s) = scalar_type(&pt.ty) else {
                return None;
            };
            let v = self.expr(arg);
            self.unify(
                Ty::S(s),
                v.ty,
                v.span,
                &format!(" in argument of the closure `{name}`"),
            );
            let cname = self.fresh(&pid.ident.to_string());
            stmts.push(Stmt::Let {
                name: cname.clone(),
                ty: Ty::S(s),
                init: Some(v),
            });
            params.push(ClosureParam {
                rust: pid.ident.to_string(),
                cname,
                ty: s,
                mutable: pid.mutability.is_some(),
            });
        }
        Some((stmts, params))
    }

    /// A closure's body, lowered with its parameters alone in scope: no loop to leave,
    /// no function to return from.
    fn closure_body(&mut self, body: &syn::Expr, params: Vec<ClosureParam>) -> Expr {
        let scopes = std::mem::replace(&mut self.scopes, vec![HashMap::new()]);
        let loops = (
            std::mem::take(&mut self.loop_depth),
            std::mem::take(&mut self.labels),
        );
        let in_closure = std::mem::replace(&mut self.in_closure, true);
        for p in params {
            self.bind(
                &p.rust,
                Binding::Scalar {
                    cname: p.cname,
                    ty: Ty::S(p.ty),
                    mutable: p.mutable,
                    param: false,
                },
            );
        }
        let body = self.expr(body);
        self.scopes = scopes;
        (self.loop_depth, self.labels) = loops;
        self.in_closure = in_closure;
        body
    }
}

/// A parameter of a closure being called: its Rust name, bound to the temporary `cname`
/// that holds its argument.
struct ClosureParam {
    rust: String,
    cname: String,
    ty: Scalar,
    mutable: bool,
}

/// The single-segment names `body` reads that it does not bind itself (by `let` or a
/// closure parameter, in `params`), in order, without repeats; called names are not
/// read (device functions and intrinsics are found by name at the call).
fn free_names(body: &syn::Expr, params: &HashSet<String>) -> Vec<syn::Ident> {
    use syn::visit::Visit;
    struct V<'a> {
        bound: HashSet<String>,
        params: &'a HashSet<String>,
        found: Vec<syn::Ident>,
    }
    impl<'ast> Visit<'ast> for V<'_> {
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if !matches!(&*c.func, syn::Expr::Path(_)) {
                self.visit_expr(&c.func);
            }
            for a in &c.args {
                self.visit_expr(a);
            }
        }
        fn visit_local(&mut self, l: &'ast syn::Local) {
            if let Some(init) = &l.init {
                self.visit_expr(&init.expr);
            }
            self.bound.extend(pattern_idents(&l.pat));
        }
        fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
            if let Some(id) = p.path.get_ident() {
                let n = id.to_string();
                if !self.bound.contains(&n)
                    && !self.params.contains(&n)
                    && !self.found.iter().any(|f| *f == n)
                {
                    self.found.push(id.clone());
                }
            }
        }
    }
    let mut v = V {
        bound: HashSet::new(),
        params,
        found: Vec::new(),
    };
    v.visit_expr(body);
    v.found
}
