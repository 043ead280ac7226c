//! The local trait of an `expr!` in the expression form: its declaration, whose message
//! for element types it does not accept lists what it does, and its impls, one per
//! variant (for the tuple of its slots' element types) or one generic over the element
//! kinds (`kinds`), whose associated type is the result type and whose function is the
//! template (none for types a generic impl admits but no variant has: see `kinds`).

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use super::kinds::{generic_impl, ClassType, GenericImpl, ResultType};
use super::variants::Variant;
use crate::ir::Scalar;

/// The trait's declaration; `slots`: the operands, then the type parameters named.
pub(super) fn declaration(trait_name: &Ident, slots: &[String], variants: &[Variant]) -> TokenStream {
    let p = quote! { ::lazycl::__private };
    let (message, notes) = type_message(slots, variants);
    quote! {
        #[allow(non_camel_case_types)]
        #[diagnostic::on_unimplemented(message = #message, label = "element types not accepted by this expr!", #(note = #notes),*)]
        trait #trait_name {
            type R: #p::Element;
            fn template() -> ::core::option::Option<&'static #p::ExprTemplate>;
        }
    }
}

/// The variants' templates, each distinct one once (`f16`'s text is often `f32`'s): the
/// static array `__LAZYCL_TEMPLATES` the impls index, and each variant's index in it.
fn shared_templates(variants: &[Variant], rust: &str) -> (TokenStream, Vec<usize>) {
    let p = quote! { ::lazycl::__private };
    let mut distinct: Vec<TokenStream> = Vec::new();
    let mut texts: Vec<String> = Vec::new();
    let mut index = Vec::with_capacity(variants.len());
    for v in variants {
        let t = v.template(rust);
        let text = t.to_string();
        index.push(texts.iter().position(|s| *s == text).unwrap_or_else(|| {
            texts.push(text);
            distinct.push(t);
            distinct.len() - 1
        }));
    }
    let count = distinct.len();
    let array = quote! {
        static __LAZYCL_TEMPLATES: [#p::ExprTemplate; #count] = [#(#distinct),*];
    };
    (array, index)
}

/// The trait's impls (after the array of their templates); `names`: the type
/// parameters the expression names, `rust` its text.
pub(super) fn impls(
    variants: &[Variant],
    names: &[Ident],
    rust: &str,
    trait_name: &Ident,
) -> Vec<TokenStream> {
    let p = quote! { ::lazycl::__private };
    let (array, index) = shared_templates(variants, rust);
    let generic = generic_impl(variants);
    let mut out = vec![array];
    if let Some(g) = &generic {
        out.push(generic_impl_tokens(g, names, variants, &index, trait_name));
    }
    // An impl of its own for each variant the generic impl (if any) does not cover.
    let own = (variants.iter().zip(index).enumerate())
        .filter(|(i, _)| !generic.as_ref().is_some_and(|g| g.covers[*i]))
        .map(|(_, vk)| vk);
    let each = own.map(|(v, k)| {
        let tys: Vec<TokenStream> = v.types.iter().map(|s| s.rust_type(Span::call_site())).collect();
        let r = v.result.rust_type(Span::call_site());
        quote! {
            impl #trait_name for (#(#tys,)*) {
                type R = #r;
                #[inline]
                fn template() -> ::core::option::Option<&'static #p::ExprTemplate> {
                    ::core::option::Option::Some(&__LAZYCL_TEMPLATES[#k])
                }
            }
        }
    });
    out.extend(each);
    out
}

/// One impl of the expression's trait for the variants it covers, generic over a type per
/// class of slots bounded by the class's kind; the template is picked by the types'
/// `DTYPE`s. A class's parameter takes the name of a type parameter in it (`names`: the
/// expression's, slots after the operands), else `T` (`T0`, `T1`, ... for several), which
/// messages show (`implemented for (T, T)`).
fn generic_impl_tokens(
    g: &GenericImpl,
    names: &[Ident],
    variants: &[Variant],
    index: &[usize],
    trait_name: &Ident,
) -> TokenStream {
    let p = quote! { ::lazycl::__private };
    let generic: Vec<(usize, &'static str)> = (g.classes.iter().enumerate())
        .filter_map(|(c, t)| match t {
            ClassType::Kind(k) => Some((c, k.name())),
            ClassType::Fixed(_) => None,
        })
        .collect();
    let bounds = generic.iter().map(|&(c, k)| {
        let (t, k) = (class_param(g, names, c), format_ident!("{}", k));
        quote! { #t: #p::#k }
    });
    let tys = g.class_of.iter().map(|&c| class_type(g, names, c));
    let r = match g.result {
        ResultType::Fixed(s) => s.rust_type(Span::call_site()),
        ResultType::Class(c) => class_type(g, names, c),
    };
    let dtypes = generic.iter().map(|&(c, _)| {
        let t = class_param(g, names, c);
        quote! { <#t as #p::Element>::DTYPE }
    });
    let arms = dispatch_arms(g, &generic, variants, index);
    quote! {
        impl<#(#bounds),*> #trait_name for (#(#tys,)*) {
            type R = #r;
            #[inline]
            fn template() -> ::core::option::Option<&'static #p::ExprTemplate> {
                // (The last arm: a type the bounds admit that has no variant, a complex
                // one where the expression is valid for the real types only.)
                #[allow(unreachable_patterns)]
                let variant = match (#(#dtypes,)*) {
                    #(#arms)*
                    _ => return ::core::option::Option::None,
                };
                ::core::option::Option::Some(&__LAZYCL_TEMPLATES[variant])
            }
        }
    }
}

/// The type parameter of class `c` of a generic impl.
fn class_param(g: &GenericImpl, names: &[Ident], c: usize) -> Ident {
    let operands = g.class_of.len() - names.len();
    let named = (operands..g.class_of.len()).find(|&i| g.class_of[i] == c);
    let mut name = match (named, g.classes.len() > 1) {
        (Some(i), _) => names[i - operands].to_string(),
        (None, false) => "T".to_string(),
        (None, true) => format!("T{c}"),
    };
    while named.is_none() && names.iter().any(|n| *n == name) {
        name.push('_');
    }
    format_ident!("{}", name)
}

/// The type of class `c` in a generic impl: its one type, or its parameter.
fn class_type(g: &GenericImpl, names: &[Ident], c: usize) -> TokenStream {
    match g.classes[c] {
        ClassType::Fixed(s) => s.rust_type(Span::call_site()),
        ClassType::Kind(_) => {
            let t = class_param(g, names, c);
            quote! { #t }
        }
    }
}

/// `(DType::F32, ..) => k,`: the template `k` (`index`: each variant's) of the variant
/// for the `DTYPE`s of the generic classes (`generic`) that it has.
fn dispatch_arms(
    g: &GenericImpl,
    generic: &[(usize, &str)],
    variants: &[Variant],
    index: &[usize],
) -> Vec<TokenStream> {
    let p = quote! { ::lazycl::__private };
    // Each generic class's type in a variant: the type of its first slot.
    let first_slot = |c: usize| g.class_of.iter().position(|&k| k == c).unwrap_or_default();
    let arm = |(i, v): (usize, &Variant)| {
        if !g.covers[i] {
            return quote! {};
        }
        let pats = generic.iter().map(|&(c, _)| {
            let d = v.types[first_slot(c)]
                .dtype()
                .map(|d| format!("{d:?}"))
                .unwrap_or_default();
            let d = format_ident!("{}", d);
            quote! { #p::DType::#d }
        });
        let k = index[i];
        quote! { (#(#pats,)*) => #k, }
    };
    variants.iter().enumerate().map(arm).collect()
}

/// The message and notes of the error for operands whose element types the expression
/// does not accept.
fn type_message(slots: &[String], variants: &[Variant]) -> (String, Vec<String>) {
    let names: Vec<String> = slots.iter().map(|o| format!("`{o}`")).collect();
    let message = format!(
        "expr! cannot be applied to operands {} with element types `{{Self}}`",
        names.join(", ")
    );
    let list = |set: &[Scalar]| set.iter().map(|s| s.rust()).collect::<Vec<_>>().join(", ");
    // Operands that always have equal types, and the types each group may have.
    let mut groups: Vec<(Vec<usize>, Vec<Scalar>)> = Vec::new();
    for i in 0..slots.len() {
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
            _ if set.iter().any(|s| s.is_complex()) => format!(
                "{} must have the same element type, one of {} (expr! does no implicit conversions; use \
                 `as`, or for a complex number beside a real the closure form: `expr!(|z: c32, x: f32| z * x)`)",
                who.join(" and "),
                list(set)
            ),
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
