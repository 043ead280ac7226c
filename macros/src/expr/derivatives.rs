//! The derivatives of one variant of an `expr!`, written at compile time: for each float
//! operand, `g * ∂e/∂operand` (see `grad`) lowered and emitted like the expression itself,
//! over the same operands and, after them, the cotangent `g`. The runtime's gradient rule
//! records it as one more fused node.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use super::input::Input;
use super::lowering::lower;
use crate::emit;
use crate::grad::{derivative, partial_sigs};
use crate::ir::{DevSig, Scalar, Ty};
use crate::resolve::callee_sources;

/// The derivative of a variant with respect to one operand.
#[derive(Debug)]
pub(super) enum Adjoint {
    /// `g * ∂e/∂operand` as OpenCL C (operands `$0..`, then `g`).
    Written {
        text: String,
        helpers: String,
        uses_f64: bool,
        callees: Vec<DevSig>,
    },
    /// Zero: an integer or bool operand (or one the value does not depend on).
    Zero,
    /// None, and why (a complex operand or result: lazycl differentiates real values).
    Missing(String),
}

/// The name the cotangent takes in the derivative's Rust.
const COTANGENT: &str = "__lazycl_g";

/// The derivative of `body` (a variant of `input`: operands of `types`, of float or other
/// type `result`) with respect to each operand.
pub(super) fn adjoints(
    input: &Input,
    body: &syn::Expr,
    operands: &[Ident],
    types: &[Scalar],
    result: Scalar,
    sigs: &[DevSig],
) -> Vec<Adjoint> {
    let names: Vec<(String, Scalar)> = operands
        .iter()
        .map(|o| o.to_string())
        .zip(types.iter().copied())
        .collect();
    let mut callable = sigs.to_vec();
    callable.extend(partial_sigs(sigs));
    (0..operands.len())
        .map(|i| {
            if types[i].is_complex() || result.is_complex() {
                return Adjoint::Missing(
                    "complex numbers have no derivative in lazycl (a gradient is of real values)".into(),
                );
            }
            if !types[i].is_float() || !result.is_float() {
                return Adjoint::Zero;
            }
            match derivative(body, &names, i, result, sigs) {
                Ok(Some(d)) => written(input, &d, operands, types, result, &callable),
                Ok(None) => Adjoint::Zero,
                Err(why) => Adjoint::Missing(why.0),
            }
        })
        .collect()
}

/// `g * d` lowered and emitted, with `g` the operand after the others.
fn written(
    input: &Input,
    d: &syn::Expr,
    operands: &[Ident],
    types: &[Scalar],
    result: Scalar,
    sigs: &[DevSig],
) -> Adjoint {
    let g = Ident::new(COTANGENT, Span::call_site());
    let body: syn::Expr = syn::parse_quote!(#g * (#d));
    let mut names = operands.to_vec();
    names.push(g);
    let mut tys: Vec<Ty> = types.iter().map(|s| Ty::S(*s)).collect();
    tys.push(Ty::S(result));
    let lowered = lower(input, &body, &names, &tys, sigs);
    if let Some(e) = lowered.errors.into_error() {
        return Adjoint::Missing(format!("lazycl could not write its derivative: {e}"));
    }
    match emit::expression(&lowered.e, &lowered.infer) {
        Ok(t) => Adjoint::Written {
            text: t.text,
            helpers: t.helpers,
            uses_f64: t.uses_f64,
            callees: lowered.callees,
        },
        Err(m) => Adjoint::Missing(format!("lazycl could not write its derivative: {m}")),
    }
}

impl Adjoint {
    /// The runtime's `Derivative`; `rust`: the expression's Rust text, `operand` the
    /// operand's name.
    pub(super) fn tokens(&self, rust: &str, operand: &str) -> TokenStream {
        let p = quote! { ::lazycl::__private };
        match self {
            Adjoint::Written {
                text,
                helpers,
                uses_f64,
                callees,
            } => {
                let sources = callee_sources(callees.iter());
                let own = format!("{}{helpers}", if *uses_f64 { emit::FP64_PRAGMA } else { "" });
                let rust = format!("d({rust})/d{operand}");
                quote! {
                    #p::Derivative::Template(&#p::ExprTemplate {
                        text: #text,
                        helpers: ::core::concat!(#(#sources,)* #own),
                        rust: #rust,
                        derivatives: &[],
                    })
                }
            }
            Adjoint::Zero => quote! { #p::Derivative::Zero },
            Adjoint::Missing(why) => quote! { #p::Derivative::Missing(#why) },
        }
    }
}
