//! The Rust code an `expr!` expands to. The expression form defines a local trait,
//! implemented for the tuple of the operands' element types of every variant (its
//! associated type is the result type, its function the template; see `traits`), so that
//! the Rust type checker picks the template, and a wrong combination is a compile error
//! whose message lists what the expression accepts. The closure form has one variant: a
//! value with `.apply(...)`.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;

use super::input::{Checked, Input, Param};
use super::traits::{declaration, impls};
use super::variants::{variants, Variant};
use crate::diag::Spanned;
use crate::ir::DevSig;
use crate::resolve::devfn_macro;

/// The hidden macro of the device function `id` calls (spanned at the call).
pub(super) fn callee_macro(id: &Ident) -> Ident {
    devfn_macro(&id.unraw().to_string(), id.span())
}

/// The generated Rust code.
pub(super) fn translate(input: &Input, checked: &Checked, sigs: &[DevSig]) -> TokenStream {
    let operands = &checked.operands;
    let variants = match variants(input, operands, &checked.types, sigs) {
        Ok(v) => v,
        Err(e) => {
            let e = e.to_compile_error();
            return quote! {{ #e }};
        }
    };
    let rust = match &input.params {
        Some(_) => {
            let names: Vec<String> = operands.iter().map(|o| o.to_string()).collect();
            format!("|{}| {}", names.join(", "), input.body.to_token_stream())
        }
        None => input.body.to_token_stream().to_string(),
    };
    let n = operands.len();
    let gens: Vec<Ident> = (0..n).map(|i| format_ident!("A{}", i)).collect();
    match &input.params {
        Some(params) => match variants.first() {
            Some(v) => closure_form(params, v, &rust, &gens),
            None => quote! {},
        },
        None => expression_form(input, operands, &checked.types, &variants, &rust, &gens),
    }
}

/// The closure form: a value with `.apply(...)`, of the closure's one variant.
fn closure_form(params: &[Param], v: &Variant, rust: &str, gens: &[Ident]) -> TokenStream {
    let p = quote! { ::lazycl::__private };
    let t = v.template(rust);
    let r = v.result.rust_type(Span::call_site());
    let elem: Vec<TokenStream> = params
        .iter()
        .map(|(_, s)| s.rust_type(Span::call_site()))
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
    quote! {
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
    }
}

/// The expression form: the template is chosen by the operands' element types (and the
/// type parameters' it names, `names`, given to the call explicitly), through a local
/// trait implemented for the types of every variant.
fn expression_form(
    input: &Input,
    operands: &[Ident],
    names: &[Ident],
    variants: &[Variant],
    rust: &str,
    gens: &[Ident],
) -> TokenStream {
    let trait_name = trait_name(rust);
    let slots: Vec<String> = operands.iter().chain(names).map(|o| o.to_string()).collect();
    let declaration = declaration(&trait_name, &slots, variants);
    let impls = impls(variants, names, rust, &trait_name);
    let accepted: Vec<String> = variants
        .iter()
        .map(|v| {
            let types: Vec<&str> = v.types.iter().map(|t| t.rust()).collect();
            format!("({})", types.join(", "))
        })
        .collect();
    let refused = Refused {
        rust,
        accepted: &accepted.join(", "),
    };
    let call = typed_call(input, operands, names, gens, &trait_name, &refused);
    quote! {
        {
            #declaration
            #(#impls)*
            #call
        }
    }
}

/// A name per expression, so that rustc does not point at other `expr!`s' traits as
/// "similarly named".
fn trait_name(rust: &str) -> Ident {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    rust.hash(&mut h);
    format_ident!("__LazyclExprTypes{:08x}", h.finish() as u32)
}

/// What the error of an expression without a variant for its operands' element types
/// says: the expression, and the element types it accepts.
struct Refused<'a> {
    rust: &'a str,
    accepted: &'a str,
}

/// `__lazycl_expr`, generic over the operands (their `ExprArg` markers inferred) and the
/// type parameters named, and its call: the node of the variant the trait picks for
/// their element types (or, for types a generic impl admits without a variant, an array
/// that fails with `refused`'s error).
fn typed_call(
    input: &Input,
    operands: &[Ident],
    names: &[Ident],
    gens: &[Ident],
    trait_name: &Ident,
    refused: &Refused,
) -> TokenStream {
    let p = quote! { ::lazycl::__private };
    let n = operands.len();
    let tgens: Vec<Ident> = (0..names.len()).map(|k| format_ident!("T{}", k)).collect();
    // Each operand's `ExprArg` marker (array, scalar, reference), inferred.
    let marks: Vec<Ident> = (0..n).map(|i| format_ident!("M{}", i)).collect();
    let elems: Vec<TokenStream> = gens
        .iter()
        .zip(&marks)
        .map(|(g, m)| quote! { <#g as #p::ExprArg<#m>>::Elem })
        .chain(tgens.iter().map(|t| quote! { #t }))
        .collect();
    let tuple = quote! { (#(#elems,)*) };
    let has_array = has_array_bound(
        gens.iter()
            .zip(&marks)
            .map(|(g, m)| quote! { <#g as #p::ExprArg<#m>>::Kind }),
    );
    let vars: Vec<Ident> = (0..n).map(|i| format_ident!("a{}", i)).collect();
    let (rust, accepted) = (refused.rust, refused.accepted);
    let call = Ident::new("__lazycl_expr", input.body.span().start);
    let args: Vec<TokenStream> = operands
        .iter()
        .map(|o| quote_spanned! {o.span()=> &#o })
        .collect();
    // The type parameters are the caller's: given explicitly, the operands' inferred.
    let turbofish = match names.is_empty() {
        true => quote! {},
        false => {
            let infer = gens.iter().chain(&marks).map(|_| quote! { _ });
            quote! { ::<#(#infer,)* #(#names),*> }
        }
    };
    quote! {
        #[inline]
        #[allow(clippy::too_many_arguments)]
        fn __lazycl_expr<#(#gens: #p::ExprArg<#marks>,)* #(#marks,)* #(#tgens: #p::Element),*>(#(#vars: &#gens),*) -> #p::Array<<#tuple as #trait_name>::R>
        where
            #tuple: #trait_name,
            #has_array
        {
            let operands = [#(#p::ExprArg::<#marks>::operand(#vars)),*];
            match <#tuple as #trait_name>::template() {
                ::core::option::Option::Some(t) => #p::expr_node::<<#tuple as #trait_name>::R>(t, &operands),
                ::core::option::Option::None => #p::ExprOperand::without_variant::<<#tuple as #trait_name>::R>(
                    #rust, #accepted, &operands,
                ),
            }
        }
        #call #turbofish(#(#args),*)
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
