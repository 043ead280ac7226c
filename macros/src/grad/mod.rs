//! Derivatives at compile time: the macros see the Rust of an `expr!` body and of a
//! `#[device_fn]`, so they write its derivatives in Rust, which the same translator
//! (`lower` + `emit`) turns into OpenCL C beside the function itself.
//!
//! The method is forward mode on the syntax (`forward`): for one input, the tangent of
//! every value (how it changes with that input) as a Rust expression of the primal values
//! (`tangent`), by a rule per construct and per float method (`rules`). The reverse-mode
//! rule of an elementwise function needs exactly this: the cotangent of operand `i` is
//! `g * ∂f/∂x_i`, the tangent with `x_i`'s seeded with one. So an `expr!` node's adjoint
//! is one more fused node per operand, not a chain of primitive adjoints.
//!
//! A device function `f` gets a partial derivative per float parameter `k`, itself a
//! device function named [`partial_name`] `(f, k)` (`f__grad0`) of the same parameters;
//! a derivative that meets a call of `f` multiplies each argument's tangent by the
//! partial. What has no derivative (a loop, an assignment, `lgamma`, a device function
//! without one) is a [`Why`], said at run time when a gradient reaches it.

mod forward;
mod rules;
mod tangent;

use proc_macro2::Span;
use syn::parse_quote;

use crate::ir::{DevSig, ParamTy, Scalar};
use forward::Forward;
use tangent::Tangent;

/// Why a function has no derivative: said when a gradient reaches it.
#[derive(Clone, Debug, PartialEq)]
pub struct Why(pub String);

impl Why {
    pub(crate) fn new(s: String) -> Self {
        Why(s)
    }
}

/// The name of the partial derivative of the device function `name` with respect to its
/// parameter `k`: a device function of the same parameters. (Two underscores, which the
/// snake-case names of device functions do not take.)
pub fn partial_name(name: &str, k: usize) -> String {
    format!("{name}__grad{k}")
}

/// The device function whose partial derivative `name` is, if it is one.
pub fn partial_base(name: &str) -> Option<&str> {
    let (base, k) = name.rsplit_once("__grad")?;
    k.parse::<usize>().ok().map(|_| base)
}

/// The signatures of the partials of the device functions in `sigs` that have them (one
/// per float parameter of a function returning a float): what a derivative may call.
pub fn partial_sigs(sigs: &[DevSig]) -> Vec<DevSig> {
    let mut out = Vec::new();
    for s in sigs {
        if s.no_derivative.is_some() || !s.ret.is_some_and(Scalar::is_float) {
            continue;
        }
        for (k, p) in s.params.iter().enumerate() {
            if matches!(p, ParamTy::Scalar(t) if t.is_float()) {
                out.push(DevSig {
                    name: partial_name(&s.name, k),
                    ..s.clone()
                });
            }
        }
    }
    out
}

/// `∂body/∂names[wrt]` as a Rust expression of the names (and of the partials of the
/// device functions called), of the body's type `ret`; `None` where it is zero.
pub fn derivative(
    body: &syn::Expr,
    names: &[(String, Scalar)],
    wrt: usize,
    ret: Scalar,
    sigs: &[DevSig],
) -> Result<Option<syn::Expr>, Why> {
    let (name, ty) = &names[wrt];
    let mut fw = Forward::new(vec![(name.clone(), Tangent::One(*ty))], sigs);
    // (Names of the body that shadow others are bound in its own scopes.)
    let t = fw.expr(body)?;
    Ok((!t.is_zero()).then(|| t.expr(ret)))
}

/// The partial derivative of the device function `f` (of float result `ret`) with
/// respect to its parameter `k`: a function named `name` of the same parameters.
pub fn partial_fn(
    f: &syn::ItemFn,
    name: &str,
    k: usize,
    ret: Scalar,
    sigs: &[DevSig],
) -> Result<syn::ItemFn, Why> {
    let mut seeds = Vec::new();
    for (i, input) in f.sig.inputs.iter().enumerate() {
        let syn::FnArg::Typed(pt) = input else {
            return Err(Why::new("a method has no derivative".into()));
        };
        let syn::Pat::Ident(id) = &*pt.pat else {
            return Err(Why::new("a parameter pattern is not differentiated".into()));
        };
        let seed = match (i == k, param_scalar(&pt.ty)) {
            (true, Some(t)) => Tangent::One(t),
            _ => Tangent::Zero,
        };
        seeds.push((id.ident.to_string(), seed));
    }
    let mut fw = Forward::new(seeds, sigs);
    let value = fw.block(&f.block)?.expr(ret);
    let mut out = f.clone();
    out.attrs.clear();
    out.sig.ident = syn::Ident::new(name, Span::call_site());
    out.block = Box::new(parse_quote!({ #value }));
    Ok(out)
}

/// The scalar type a parameter is written with (`f32`), if it is one.
fn param_scalar(ty: &syn::Type) -> Option<Scalar> {
    match ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .and_then(|s| Scalar::from_rust(&s.ident.to_string())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `∂body/∂x` (x: f32, y: f32) as text.
    fn d(body: &str) -> String {
        let e: syn::Expr = syn::parse_str(body).unwrap();
        let names = [("x".to_string(), Scalar::F32), ("y".to_string(), Scalar::F32)];
        match derivative(&e, &names, 0, Scalar::F32, &[]) {
            Ok(Some(e)) => quote::quote!(#e).to_string(),
            Ok(None) => "0".into(),
            Err(w) => format!("error: {}", w.0),
        }
    }

    #[test]
    fn sums_and_products_simplify() {
        assert_eq!(d("x * y + 2.0"), "(y)");
        assert_eq!(d("y * 3.0"), "0");
        assert_eq!(d("x"), "1.0f32");
        assert_eq!(d("-x"), "- 1.0f32");
        assert_eq!(d("x * x"), "((x) + (x))");
        assert_eq!(d("(x as i32) as f32"), "0");
        assert_eq!(d("x.floor() + y"), "0");
    }

    #[test]
    fn lets_bind_tangents_before_shadowing() {
        let t = d("{ let t = x * 2.0; let t = t * t; t }");
        assert_eq!(
            t,
            "{ let __lazycl_d_t = (2.0) ; let t = x * 2.0 ; let __lazycl_d_t = ((__lazycl_d_t * (t)) + (__lazycl_d_t * (t))) ; let t = t * t ; __lazycl_d_t }"
        );
    }

    #[test]
    fn branches_keep_their_condition() {
        assert_eq!(
            d("if x > y { x * 3.0 } else { y }"),
            "(if x > y { (3.0) } else { 0.0f32 })"
        );
        assert_eq!(d("if y > 0.0 { 1.0 } else { y }"), "0");
    }

    #[test]
    fn methods_and_calls() {
        assert!(d("x.exp()").contains("exp"));
        assert!(d("x.lgamma()").contains("needs digamma"), "{}", d("x.lgamma()"));
        assert!(
            d("x.powi(3)").contains("(((3)) as f32) * (x) . powi ((3) - 1)"),
            "{}",
            d("x.powi(3)")
        );
        assert_eq!(d("f32::max(y, 1.0)"), "0");
        let sig = DevSig {
            name: "sq".into(),
            params: vec![ParamTy::Scalar(Scalar::F32)],
            ret: Some(Scalar::F32),
            uses_f64: false,
            instance: String::new(),
            no_derivative: None,
        };
        let e: syn::Expr = syn::parse_str("sq(x * 2.0)").unwrap();
        let names = [("x".to_string(), Scalar::F32)];
        let got = derivative(&e, &names, 0, Scalar::F32, std::slice::from_ref(&sig))
            .unwrap()
            .unwrap();
        assert_eq!(quote::quote!(#got).to_string(), "((2.0) * (sq__grad0 (x * 2.0)))");
        let none = DevSig {
            no_derivative: Some("it has a loop".into()),
            ..sig
        };
        let err = derivative(&e, &names, 0, Scalar::F32, &[none]).unwrap_err();
        assert!(err.0.contains("`sq` has no derivative: it has a loop"), "{err:?}");
        assert_eq!(partial_base("sq__grad0"), Some("sq"));
        assert_eq!(partial_base("sq__f32"), None);
    }

    #[test]
    fn device_function_partials() {
        let f: syn::ItemFn = syn::parse_str(
            "fn f(x: f32, n: i32, y: f32) -> f32 { let t = x * y; if n > 0 { t } else { y } }",
        )
        .unwrap();
        let p = partial_fn(&f, "f__grad2", 2, Scalar::F32, &[]).unwrap();
        let text = quote::quote!(#p).to_string();
        assert!(
            text.starts_with("fn f__grad2 (x : f32 , n : i32 , y : f32) -> f32"),
            "{text}"
        );
        assert!(text.contains("let __lazycl_d_t = (x) ;"), "{text}");
        let looped: syn::ItemFn =
            syn::parse_str("fn g(x: f32) -> f32 { let mut s = 0.0; for i in 0..3 { s += x; } s }").unwrap();
        assert!(partial_fn(&looped, "g__grad0", 0, Scalar::F32, &[]).is_err());
    }
}
