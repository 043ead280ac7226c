//! The walk: the tangent of each Rust expression of the subset, given the tangents of the
//! names in scope. Blocks keep their `let`s (the derivative reads the primal values) and
//! put each binding's tangent before it, `if` keeps its condition, casts and conversions
//! carry the tangent to the new type, and calls of device functions multiply each
//! argument's tangent by the function's partial derivative (see [`super::partial_name`]).
//! Methods are in `rules`.

use std::collections::HashMap;

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse_quote;

use super::rules;
use super::tangent::{convert, Tangent};
use super::{partial_name, Why};
use crate::ir::{DevSig, ParamTy, Scalar};
use crate::lower::strip_parens;
use crate::signature::is_complex_name;

/// The tangents of the names in scope, and the device functions callable.
pub(super) struct Forward<'a> {
    scopes: Vec<HashMap<String, Tangent>>,
    sigs: &'a [DevSig],
}

impl<'a> Forward<'a> {
    /// A walk where `names` have these tangents.
    pub fn new(names: Vec<(String, Tangent)>, sigs: &'a [DevSig]) -> Self {
        Forward {
            scopes: vec![names.into_iter().collect()],
            sigs,
        }
    }

    pub fn expr(&mut self, e: &syn::Expr) -> Result<Tangent, Why> {
        match strip_parens(e) {
            syn::Expr::Field(f) if is_complex_part(&f.member) => match self.expr(&f.base)? {
                Tangent::Zero => Ok(Tangent::Zero),
                _ => Err(complex_why()),
            },
            // (A field of a kernel struct: structs are not differentiated.)
            syn::Expr::Lit(_) | syn::Expr::Field(_) => Ok(Tangent::Zero),
            syn::Expr::Path(p) => Ok(match p.path.get_ident() {
                Some(id) => self.lookup(&id.to_string()),
                // (`f32::consts::PI`, `f32::EPSILON`: constants.)
                None => Tangent::Zero,
            }),
            syn::Expr::Unary(u) => match u.op {
                syn::UnOp::Neg(_) => Ok(self.expr(&u.expr)?.neg()),
                // (`!` of a bool or an integer.)
                _ => Ok(Tangent::Zero),
            },
            syn::Expr::Binary(b) => self.binary(b),
            syn::Expr::Cast(c) => self.cast(c),
            syn::Expr::MethodCall(m) => {
                let args: Vec<&syn::Expr> = m.args.iter().collect();
                self.method(&m.receiver, &m.method.to_string(), &args)
            }
            syn::Expr::Call(c) => self.call(c),
            syn::Expr::If(i) => self.if_expr(i),
            syn::Expr::Block(b) => self.block(&b.block),
            other => Err(Why::new(format!(
                "`{}` has no derivative rule",
                quote::quote!(#other)
            ))),
        }
    }

    fn lookup(&self, name: &str) -> Tangent {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name).cloned())
            .unwrap_or(Tangent::Zero)
    }

    /// `a op b`: sums and products by the usual rules; comparisons, logic and bit
    /// operations have integer or bool values (no tangent).
    fn binary(&mut self, b: &syn::ExprBinary) -> Result<Tangent, Why> {
        use syn::BinOp;
        let (x, y) = (&*b.left, &*b.right);
        let linear = matches!(
            b.op,
            BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_) | BinOp::Rem(_)
        );
        if !linear {
            return Ok(Tangent::Zero);
        }
        let (dx, dy) = (self.expr(x)?, self.expr(y)?);
        Ok(match b.op {
            BinOp::Add(_) => dx.add(dy),
            BinOp::Sub(_) => dx.sub(dy),
            BinOp::Mul(_) => dx.times(y.clone()).add(dy.times(x.clone())),
            BinOp::Div(_) => dx
                .over(y.clone())
                .sub(dy.times(parse_quote!((#x) / ((#y) * (#y))))),
            // `x % y` is `x - y * trunc(x / y)`.
            _ => dx.sub(dy.times(parse_quote!(((#x) / (#y)).trunc()))),
        })
    }

    /// `e as T`: the tangent in `T` for a float `T`; none for an integer or bool.
    fn cast(&mut self, c: &syn::ExprCast) -> Result<Tangent, Why> {
        let to = match &*c.ty {
            syn::Type::Path(p) => p.path.get_ident().and_then(|i| Scalar::from_rust(&i.to_string())),
            _ => None,
        };
        match to {
            Some(to) if to.is_float() => {
                let ty = &c.ty;
                Ok(self.expr(&c.expr)?.converted(to, |d| parse_quote!(((#d) as #ty))))
            }
            _ => Ok(Tangent::Zero),
        }
    }

    /// A call: `f32::sqrt(x)`-style methods, conversions (`f16::from_f32(x)`,
    /// `f64::from(x)`), device functions.
    fn call(&mut self, c: &syn::ExprCall) -> Result<Tangent, Why> {
        let syn::Expr::Path(p) = strip_parens(&c.func) else {
            return Err(Why::new("only named functions are differentiated".into()));
        };
        let mut segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segs.len() == 3 && ["half", "lazycl"].contains(&&*segs[0]) {
            segs.remove(0);
        }
        let args: Vec<&syn::Expr> = c.args.iter().collect();
        // A complex number made of values that change: no derivative.
        if segs.len() == 3 && ["num_complex", "lazycl"].contains(&&*segs[0]) {
            segs.remove(0);
        }
        if segs.first().is_some_and(|s| is_complex_name(s)) {
            return match self.args(&args)?.iter().all(Tangent::is_zero) {
                true => Ok(Tangent::Zero),
                false => Err(complex_why()),
            };
        }
        if let ([_, f], Some(t)) = (&segs[..], segs.first().and_then(|s| Scalar::from_rust(s))) {
            if ["from", "from_f32", "from_f64"].contains(&f.as_str()) {
                let d = self.args(&args)?.pop().unwrap_or(Tangent::Zero);
                if !t.is_float() {
                    return Ok(Tangent::Zero);
                }
                let path = &p.path;
                return Ok(d.converted(t, |d| parse_quote!(#path(#d))));
            }
            // `f32::max(a, b)` is `a.max(b)`.
            let Some((recv, rest)) = args.split_first() else {
                return Ok(Tangent::Zero);
            };
            return self.method(recv, f, rest);
        }
        let tangents = self.args(&args)?;
        if tangents.iter().all(Tangent::is_zero) {
            return Ok(Tangent::Zero);
        }
        let name = match p.path.get_ident() {
            Some(id) => id.to_string(),
            None => return Err(Why::new(format!("`{}` has no derivative", segs.join("::")))),
        };
        self.device_call(&name, &args, tangents)
    }

    /// The tangents of `args`.
    fn args(&mut self, args: &[&syn::Expr]) -> Result<Vec<Tangent>, Why> {
        args.iter().map(|a| self.expr(a)).collect()
    }

    /// `x.name(args)`: the method's rule given the tangents of `x` and the arguments.
    fn method(&mut self, x: &syn::Expr, name: &str, args: &[&syn::Expr]) -> Result<Tangent, Why> {
        let dx = self.expr(x)?;
        let d = self.args(args)?;
        rules::method(x, name, args, dx, d)
    }

    /// `f(args)` of a device function: `Σ ∂f/∂arg_k · d arg_k` over the arguments whose
    /// tangents are not zero, each partial a device function of its own.
    fn device_call(
        &mut self,
        name: &str,
        args: &[&syn::Expr],
        tangents: Vec<Tangent>,
    ) -> Result<Tangent, Why> {
        let instances: Vec<&DevSig> = self.sigs.iter().filter(|s| s.name == name).collect();
        // The instance of the arguments' types where the tangents tell them.
        let fits = |s: &&DevSig| {
            s.params.iter().zip(&tangents).all(|(p, t)| match (p, t.ty()) {
                (ParamTy::Scalar(s), Some(t)) => *s == t,
                _ => true,
            })
        };
        let Some(sig) = instances
            .iter()
            .copied()
            .find(fits)
            .or(instances.first().copied())
        else {
            return Err(Why::new(format!("`{name}` is no device function")));
        };
        let ret = match sig.ret {
            Some(r) if r.is_float() => r,
            Some(r) if r.is_complex() => return Err(complex_why()),
            _ => return Ok(Tangent::Zero),
        };
        if let Some(why) = &sig.no_derivative {
            return Err(Why::new(format!(
                "the device function `{name}` has no derivative: {why}"
            )));
        }
        let mut sum = Tangent::Zero;
        for (k, t) in tangents.into_iter().enumerate() {
            if t.is_zero() {
                continue;
            }
            if matches!(sig.params.get(k), Some(ParamTy::Scalar(s)) if s.is_complex()) {
                return Err(complex_why());
            }
            let partial = syn::Ident::new(&partial_name(name, k), Span::call_site());
            let call: syn::Expr = parse_quote!(#partial(#(#args),*));
            let from = t.ty().unwrap_or(ret);
            sum = sum.add(t.converted(ret, |d| convert(d, from, ret)).times(call));
        }
        Ok(sum)
    }

    /// `if c { a } else { b }`: the condition kept, each branch's tangent.
    fn if_expr(&mut self, i: &syn::ExprIf) -> Result<Tangent, Why> {
        let then = self.block(&i.then_branch)?;
        let other = match &i.else_branch {
            Some((_, e)) => self.expr(e)?,
            None => Tangent::Zero,
        };
        let Some(ty) = then.ty().or(other.ty()) else {
            return Ok(Tangent::Zero);
        };
        let (a, b, cond) = (then.expr(ty), other.expr(ty), &i.cond);
        Ok(Tangent::Expr(parse_quote!((if #cond { #a } else { #b })), ty))
    }

    /// A block of `let`s ending in its value (or `return value;`): each binding's tangent
    /// bound before it (`__lazycl_d_name`), from the names as they were.
    pub fn block(&mut self, b: &syn::Block) -> Result<Tangent, Why> {
        self.scopes.push(HashMap::new());
        let out = self.block_inner(b);
        self.scopes.pop();
        out
    }

    fn block_inner(&mut self, b: &syn::Block) -> Result<Tangent, Why> {
        let mut stmts: Vec<syn::Stmt> = Vec::new();
        let n = b.stmts.len();
        let mut value = None;
        for (i, s) in b.stmts.iter().enumerate() {
            let last = i + 1 == n;
            match s {
                syn::Stmt::Local(l) => self.local(l, &mut stmts)?,
                syn::Stmt::Expr(e, None) if last => value = Some(self.expr(e)?),
                syn::Stmt::Expr(syn::Expr::Return(r), _) if last => match &r.expr {
                    Some(e) => value = Some(self.expr(e)?),
                    None => return Err(Why::new("a function without a value has no derivative".into())),
                },
                _ => {
                    return Err(Why::new(
                        "its body is not `let` bindings ending in a value (assignments, loops and early \
                         returns are not differentiated)"
                            .into(),
                    ))
                }
            }
        }
        let Some(value) = value else {
            return Err(Why::new("a block without a value has no derivative".into()));
        };
        Ok(match value {
            Tangent::Expr(d, t) if !stmts.is_empty() => Tangent::Expr(parse_quote!({ #(#stmts)* #d }), t),
            v => v,
        })
    }

    /// `let name = init;`: the tangent of `init` bound first (it reads the names before
    /// this binding shadows one), then the binding itself.
    fn local(&mut self, l: &syn::Local, out: &mut Vec<syn::Stmt>) -> Result<(), Why> {
        let pat = match &l.pat {
            syn::Pat::Type(pt) => &*pt.pat,
            p => p,
        };
        let (syn::Pat::Ident(id), Some(init)) = (pat, &l.init) else {
            return Err(Why::new(
                "`let` with a pattern or without a value is not differentiated".into(),
            ));
        };
        if init.diverge.is_some() || id.subpat.is_some() {
            return Err(Why::new("`let ... else` is not differentiated".into()));
        }
        let name = id.ident.to_string();
        let bound = match self.expr(&init.expr)? {
            Tangent::Expr(d, t) => {
                let dname = syn::Ident::new(&format!("__lazycl_d_{}", id.ident.unraw()), id.ident.span());
                out.push(parse_quote!(let #dname = #d;));
                Tangent::Expr(parse_quote!(#dname), t)
            }
            other => other,
        };
        out.push(syn::Stmt::Local(l.clone()));
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name, bound);
        }
        Ok(())
    }
}

/// `re` or `im`: a part of a complex number.
fn is_complex_part(m: &syn::Member) -> bool {
    matches!(m, syn::Member::Named(id) if id == "re" || id == "im")
}

/// Why a value computed through complex numbers has no derivative.
fn complex_why() -> Why {
    Why::new("it computes with complex numbers, which lazycl does not differentiate".into())
}
