//! The tangent of one value: how it changes with the input being differentiated against,
//! as a Rust expression of the primal values, with zero and one kept symbolic so that the
//! derivative of `a * x + b` with respect to `x` is `a`, not `0.0 * x + a * 1.0 + 0.0`.

use syn::parse_quote;

use crate::ir::Scalar;

/// A value's tangent, of the value's (float) type.
#[derive(Clone, Debug)]
pub enum Tangent {
    /// The value does not change with the input (a constant, an integer, a comparison).
    Zero,
    /// The value is the input itself (or a conversion of it).
    One(Scalar),
    /// Any other derivative, of this type.
    Expr(syn::Expr, Scalar),
}

impl Tangent {
    /// The derivative's type; `None` for zero, which takes any.
    pub fn ty(&self) -> Option<Scalar> {
        match self {
            Tangent::Zero => None,
            Tangent::One(t) | Tangent::Expr(_, t) => Some(*t),
        }
    }

    pub fn is_zero(&self) -> bool {
        matches!(self, Tangent::Zero)
    }

    /// The derivative as an expression of type `ty` (zero and one as literals).
    pub fn expr(&self, ty: Scalar) -> syn::Expr {
        match self {
            Tangent::Zero => literal(0.0, ty),
            Tangent::One(t) => literal(1.0, *t),
            Tangent::Expr(e, _) => e.clone(),
        }
    }

    pub fn neg(self) -> Tangent {
        match self {
            Tangent::Zero => Tangent::Zero,
            Tangent::One(t) => Tangent::Expr(literal(-1.0, t), t),
            Tangent::Expr(e, t) => Tangent::Expr(parse_quote!((-(#e))), t),
        }
    }

    pub fn add(self, other: Tangent) -> Tangent {
        match (self, other) {
            (Tangent::Zero, b) => b,
            (a, Tangent::Zero) => a,
            (a, b) => {
                let t = a.ty().or(b.ty()).unwrap_or(Scalar::F32);
                let (a, b) = (a.expr(t), b.expr(t));
                Tangent::Expr(parse_quote!((#a + #b)), t)
            }
        }
    }

    pub fn sub(self, other: Tangent) -> Tangent {
        self.add(other.neg())
    }

    /// The tangent times `e`, a primal value of its type.
    pub fn times(self, e: syn::Expr) -> Tangent {
        match self {
            Tangent::Zero => Tangent::Zero,
            Tangent::One(t) => Tangent::Expr(parse_quote!((#e)), t),
            Tangent::Expr(d, t) => Tangent::Expr(parse_quote!((#d * (#e))), t),
        }
    }

    /// The tangent divided by `e`, a primal value of its type.
    pub fn over(self, e: syn::Expr) -> Tangent {
        match self {
            Tangent::Zero => Tangent::Zero,
            Tangent::One(t) => {
                let one = literal(1.0, t);
                Tangent::Expr(parse_quote!((#one / (#e))), t)
            }
            Tangent::Expr(d, t) => Tangent::Expr(parse_quote!((#d / (#e))), t),
        }
    }

    /// The tangent through a conversion to the float type `to`: `convert` applied to the
    /// derivative (a conversion is linear), one staying one.
    pub fn converted(self, to: Scalar, convert: impl FnOnce(syn::Expr) -> syn::Expr) -> Tangent {
        match self {
            Tangent::Zero => Tangent::Zero,
            Tangent::One(_) => Tangent::One(to),
            Tangent::Expr(d, _) => Tangent::Expr(convert(d), to),
        }
    }
}

/// `d`, a value of the float type `from`, as one of the float type `to` (`as` between
/// `f32` and `f64`, through `f32` to and from the 16-bit types).
pub fn convert(d: syn::Expr, from: Scalar, to: Scalar) -> syn::Expr {
    if from == to {
        return d;
    }
    let as_f32: syn::Expr = match from {
        Scalar::F32 => d,
        f if f.is_narrow_float() => parse_quote!((#d).to_f32()),
        _ => parse_quote!(((#d) as f32)),
    };
    match to {
        Scalar::F32 => as_f32,
        Scalar::F64 => parse_quote!(((#as_f32) as f64)),
        t => {
            let name = syn::Ident::new(t.rust(), proc_macro2::Span::call_site());
            parse_quote!(#name::from_f32(#as_f32))
        }
    }
}

/// The float literal `v` of type `ty`: suffixed (`1.0f32`), or through `from_f32` for the
/// 16-bit types, which have no literal. (`v` is one of the rules' constants, finite.)
pub fn literal(v: f64, ty: Scalar) -> syn::Expr {
    let suffix = if ty == Scalar::F64 { "f64" } else { "f32" };
    // (The `Debug` text of a finite float, `1.0` or `1e-7`, is a float literal's.)
    let lit = syn::LitFloat::new(&format!("{:?}{suffix}", v.abs()), proc_macro2::Span::call_site());
    let magnitude: syn::Expr = match ty {
        t if t.is_narrow_float() => {
            let name = syn::Ident::new(t.rust(), proc_macro2::Span::call_site());
            parse_quote!(#name::from_f32(#lit))
        }
        _ => parse_quote!(#lit),
    };
    match v < 0.0 {
        true => parse_quote!(-#magnitude),
        false => magnitude,
    }
}

/// `(n as T)`: the integer `n` as a value of the float type `ty`.
pub fn int_as(n: &syn::Expr, ty: Scalar) -> syn::Expr {
    match ty {
        Scalar::F64 => parse_quote!(((#n) as f64)),
        t if t.is_narrow_float() => {
            let name = syn::Ident::new(t.rust(), proc_macro2::Span::call_site());
            parse_quote!(#name::from_f32((#n) as f32))
        }
        _ => parse_quote!(((#n) as f32)),
    }
}
