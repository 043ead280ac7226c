//! What a `#[device_fn]` expands to: the hidden `macro_rules!` through which its callers
//! get its signature and OpenCL C source (see `resolve`), and, for a function of scalars
//! returning a scalar, `mod name { pub fn map(..) }`, which applies it elementwise to
//! arrays as a lazy `expr!`-like node.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use super::partials::grad_source;
use super::translate::{Partials, Translation};
use crate::emit::{guarded, FP64_PRAGMA};
use crate::expr::has_array_bound;
use crate::grad::partial_name;
use crate::ir::{device_fn_cl_name, DevSig, ParamTy, Scalar};
use crate::resolve::devfn_macro;

/// One instance of a device function: its types' name (`f32_i64`; empty for a function
/// that is not generic), its translation and its partial derivatives.
pub(super) struct DeviceFnInstance {
    pub name: String,
    pub translation: Translation,
    pub partials: Partials,
}

/// A device function's expansion: `instances` holds its one translation (instance `""`)
/// or, for a generic one, a translation per instance (named by its types, `f32_i64`), each
/// an OpenCL C function of its own (`lzc_fn_name_f32_i64`) that callers pick by their
/// arguments' types and include alone (`name!(@source f32 i64)`, and its partial
/// derivatives `name!(@grad_source f32 i64)`).
pub(super) fn expand_device_fn(
    f: &syn::ItemFn,
    instances: &[DeviceFnInstance],
    errors: Option<syn::Error>,
) -> TokenStream {
    let name = f.sig.ident.to_string();
    let mac = devfn_macro(&name, f.sig.ident.span());
    let errors = errors.map(|e| e.to_compile_error());
    let mut sig_lits = Vec::new();
    let mut arms = Vec::new();
    let mut sources = Vec::new();
    let mut grad_sources = Vec::new();
    for DeviceFnInstance {
        name: instance,
        translation: t,
        partials,
    } in instances
    {
        let sig = DevSig {
            name: name.clone(),
            params: t.params.iter().map(|p| p.ty).collect(),
            ret: t.ret,
            uses_f64: t.uses_f64(),
            instance: instance.clone(),
            no_derivative: partials.as_ref().err().map(|w| w.0.clone()),
        };
        let source = match &t.text {
            Some(text) => {
                let pragma = if sig.uses_f64 { FP64_PRAGMA } else { "" };
                let guard = match instance.as_str() {
                    "" => format!("LZC_DEVICE_FN_{name}"),
                    i => format!("LZC_DEVICE_FN_{name}__{i}"),
                };
                let own = format!("{}{}", text.helpers, guarded(&guard, &text.text));
                let callees = t.callee_sources();
                quote! { ::core::concat!(#pragma, #(#callees,)* #own) }
            }
            None => quote! { "" },
        };
        let types: Vec<Ident> = instance
            .split('_')
            .filter(|t| !t.is_empty())
            .map(|t| Ident::new(t, Span::call_site()))
            .collect();
        let grad = grad_source(partials);
        arms.push(quote! { (@source #(#types)*) => { #source }; });
        arms.push(quote! { (@grad_source #(#types)*) => { #grad }; });
        sources.push(source);
        grad_sources.push(grad);
        sig_lits.push(sig.encode());
    }
    let doc = format!("Hidden: the OpenCL C source and signature of the `#[device_fn]` `{name}`.");
    let map = match instances {
        [one] if one.name.is_empty() => map_module(f, one, &sources[0], &grad_sources[0]),
        _ => quote! {},
    };
    quote! {
        #errors
        #map
        #[doc = #doc]
        #[allow(unused_macros)]
        macro_rules! #mac {
            #(#arms)*
            (@resolve [$next:ident $($rest:ident)*] [$($sigs:tt)*] $($item:tt)*) => {
                $next! { @resolve [$($rest)*] [$($sigs)* #(#sig_lits)*] $($item)* }
            };
            (@resolve [] [$($sigs:tt)*] $($item:tt)*) => {
                ::lazycl::__lazycl_resolved! { [$($sigs)* #(#sig_lits)*] $($item)* }
            };
        }
    }
}

/// `mod name { pub fn map(..) }` for a device function of scalars returning a scalar: it
/// applies the function elementwise to arrays and scalars, as a lazy node (an `expr!`
/// template that calls the function, whose derivatives call its partials).
fn map_module(
    f: &syn::ItemFn,
    one: &DeviceFnInstance,
    source: &TokenStream,
    grad: &TokenStream,
) -> TokenStream {
    let t = &one.translation;
    let Some((scalars, ret)) = map_types(t) else {
        return quote! {};
    };
    let name = &f.sig.ident;
    let vis = &f.vis;
    let p = quote! { ::lazycl::__private };
    let n = t.params.len();
    let text = format!(
        "{}({})",
        device_fn_cl_name(&name.to_string()),
        (0..n).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ")
    );
    let pnames: Vec<Ident> = t
        .params
        .iter()
        .map(|p| {
            let mut n = p.name.clone();
            n.set_span(Span::mixed_site());
            n
        })
        .collect();
    let gens: Vec<Ident> = (0..n).map(|i| format_ident!("A{}", i)).collect();
    let elems: Vec<TokenStream> = scalars.iter().map(|s| s.rust_type(Span::call_site())).collect();
    let r = ret.rust_type(Span::call_site());
    let rust = format!(
        "{name}({})",
        t.params
            .iter()
            .map(|p| p.name.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let (mod_doc, map_doc) = map_docs(name, t, &scalars, ret);
    let derivatives = map_derivatives(&one.partials, &name.to_string(), n, [source, grad], &rust);
    let has_array = has_array_bound(
        gens.iter()
            .zip(&elems)
            .map(|(g, e)| quote! { <#g as #p::ExprInput<#e>>::Kind }),
    );
    quote! {
        #[doc = #mod_doc]
        #[allow(non_snake_case, dead_code)]
        #vis mod #name {
            static TEMPLATE: #p::ExprTemplate = #p::ExprTemplate {
                text: #text,
                helpers: #source,
                rust: #rust,
                derivatives: &[#(#derivatives),*],
            };

            #[doc = #map_doc]
            #[inline]
            #[allow(clippy::too_many_arguments)]
            pub fn map<#(#gens: #p::ExprInput<#elems>),*>(#(#pnames: #gens),*) -> #p::Array<#r>
            where
                #has_array
            {
                #p::expr_node::<#r>(&TEMPLATE, &[#(#p::ExprInput::operand(&#pnames)),*])
            }
        }
    }
}

/// The derivatives of `map`'s template with respect to each of its `n` operands: `g` times
/// the partial, for a float parameter.
fn map_derivatives(
    partials: &Partials,
    name: &str,
    n: usize,
    [source, grad]: [&TokenStream; 2],
    rust: &str,
) -> Vec<TokenStream> {
    let p = quote! { ::lazycl::__private };
    let args = (0..n).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
    let partials = match partials {
        Ok(list) => list,
        Err(why) => {
            let why = &why.0;
            return (0..n).map(|_| quote! { #p::Derivative::Missing(#why) }).collect();
        }
    };
    (0..n)
        .map(|k| {
            let partial = partial_name(name, k);
            match partials.iter().find(|q| q.name == partial) {
                Some(q) => {
                    let text = format!("(${n} * {}({args}))", device_fn_cl_name(&q.name));
                    let rust = format!("d({rust})/d{k}");
                    quote! {
                        #p::Derivative::Template(&#p::ExprTemplate {
                            text: #text,
                            helpers: ::core::concat!(#source, #grad),
                            rust: #rust,
                            derivatives: &[],
                        })
                    }
                }
                None => quote! { #p::Derivative::Zero },
            }
        })
        .collect()
}

/// The parameters' element types and the result type of a device function that `map`
/// applies to arrays: one of element-type scalars (at least one) returning one,
/// translated without errors.
fn map_types(t: &Translation) -> Option<(Vec<Scalar>, Scalar)> {
    let scalars: Option<Vec<Scalar>> = t
        .params
        .iter()
        .map(|p| match p.ty {
            ParamTy::Scalar(s) if s != Scalar::Usize => Some(s),
            _ => None,
        })
        .collect();
    let (Some(scalars), Some(ret)) = (scalars, t.ret) else {
        return None;
    };
    if t.params.is_empty() || ret == Scalar::Usize || t.errors.is_some() {
        return None;
    }
    Some((scalars, ret))
}

/// The docs of the `map` module and of `map`.
fn map_docs(name: &Ident, t: &Translation, scalars: &[Scalar], ret: Scalar) -> (String, String) {
    let signature = t
        .params
        .iter()
        .zip(scalars)
        .map(|(p, s)| format!("{}: {}", p.name, s.rust()))
        .collect::<Vec<_>>()
        .join(", ");
    let mod_doc = format!(
        "The `#[device_fn]` `{name}({signature}) -> {}` applied to arrays: [`map`].",
        ret.rust()
    );
    let map_doc = format!(
        "Applies `{name}` elementwise: each argument is an `&Array` or a scalar of the parameter's type \
         (at least one an array; arrays broadcast by numpy's rules). The result is a lazy \
         `Array<{}>` that fuses with the nodes around it.",
        ret.rust()
    );
    (mod_doc, map_doc)
}
