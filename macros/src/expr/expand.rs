//! The Rust code an `expr!` expands to. The expression form defines a local trait,
//! implemented for the tuple of the operands' element types of every variant (its
//! associated type is the result type, its function the template), so that the Rust type
//! checker picks the template, and a wrong combination is a compile error whose message
//! lists what the expression accepts. The closure form has one variant: a value with
//! `.apply(...)`.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;

use super::input::{Checked, Input, Param};
use super::kinds::{generic_impl, ClassType, GenericImpl, ResultType};
use super::variants::{variants, Variant};
use crate::diag::Spanned;
use crate::emit::FP64_PRAGMA;
use crate::ir::{DevSig, Scalar};
use crate::resolve::{callee_sources, devfn_macro};

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
    let templates = Templates { rust: &rust };
    match &input.params {
        Some(params) => match variants.first() {
            Some(v) => closure_form(params, v, &templates, &gens),
            None => quote! {},
        },
        None => expression_form(input, operands, &checked.types, &variants, &templates, &gens),
    }
}

/// What the templates of one `expr!` share: the Rust text (for messages).
struct Templates<'a> {
    rust: &'a str,
}

impl Templates<'_> {
    /// The `ExprTemplate` of a variant.
    fn template(&self, v: &Variant) -> TokenStream {
        let p = quote! { ::lazycl::__private };
        let rust = self.rust;
        // The sources of the device functions (instances) this variant calls.
        let callee_sources = callee_sources(
            v.callees
                .iter()
                .map(|c| (devfn_macro(&c.name, Span::call_site()), c.instance.clone())),
        );
        let text = &v.text;
        let own = format!("{}{}", if v.uses_f64 { FP64_PRAGMA } else { "" }, v.helpers);
        quote! {
            #p::ExprTemplate {
                text: #text,
                helpers: ::core::concat!(#(#callee_sources,)* #own),
                rust: #rust,
            }
        }
    }
}

/// The closure form: a value with `.apply(...)`, of the closure's one variant.
fn closure_form(params: &[Param], v: &Variant, templates: &Templates, gens: &[Ident]) -> TokenStream {
    let p = quote! { ::lazycl::__private };
    let rust = templates.rust;
    let t = templates.template(v);
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
/// type parameters' it names, `names`, given to the call explicitly).
fn expression_form(
    input: &Input,
    operands: &[Ident],
    names: &[Ident],
    variants: &[Variant],
    templates: &Templates,
    gens: &[Ident],
) -> TokenStream {
    let p = quote! { ::lazycl::__private };
    let rust = templates.rust;
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
    // A name per expression, so that rustc does not point at other `expr!`s' traits as
    // "similarly named".
    let trait_name = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        rust.hash(&mut h);
        format_ident!("__LazyclExprTypes{:08x}", h.finish() as u32)
    };
    let impls: Vec<TokenStream> = match generic_impl(variants) {
        Some(g) => vec![generic_impl_tokens(&g, names, variants, templates, &trait_name)],
        None => variants
            .iter()
            .map(|v| {
                let tys: Vec<Ident> = v.types.iter().map(|s| format_ident!("{}", s.rust())).collect();
                let r = format_ident!("{}", v.result.rust());
                let t = templates.template(v);
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
            .collect(),
    };
    let slots: Vec<String> = operands.iter().chain(names).map(|o| o.to_string()).collect();
    let (message, notes) = type_message(&slots, variants);
    let vars: Vec<Ident> = (0..n).map(|i| format_ident!("a{}", i)).collect();
    let span = input.body.span().start;
    let call = Ident::new("__lazycl_expr", span);
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
            fn __lazycl_expr<#(#gens: #p::ExprArg<#marks>,)* #(#marks,)* #(#tgens: #p::Element),*>(#(#vars: &#gens),*) -> #p::Array<<#tuple as #trait_name>::R>
            where
                #tuple: #trait_name,
                #has_array
            {
                #p::expr_node::<<#tuple as #trait_name>::R>(
                    <#tuple as #trait_name>::template(),
                    &[#(#p::ExprArg::<#marks>::operand(#vars)),*],
                )
            }
            #call #turbofish(#(#args),*)
        }
    }
}

/// One impl of the expression's trait for all its variants, generic over a type per
/// class of slots bounded by the class's kind; the template is picked by the types'
/// `DTYPE`s. A class's parameter takes the name of a type parameter in it (`names`: the
/// expression's, slots after the operands), else `T` (`T0`, `T1`, ... for several), which
/// messages show (`implemented for (T, T)`).
fn generic_impl_tokens(
    g: &GenericImpl,
    names: &[Ident],
    variants: &[Variant],
    templates: &Templates,
    trait_name: &Ident,
) -> TokenStream {
    let p = quote! { ::lazycl::__private };
    let operands = g.class_of.len() - names.len();
    let unnamed = g.classes.len() > 1;
    let param = |c: usize| {
        let named = (operands..g.class_of.len()).find(|&i| g.class_of[i] == c);
        let mut name = match (named, unnamed) {
            (Some(i), _) => names[i - operands].to_string(),
            (None, false) => "T".to_string(),
            (None, true) => format!("T{c}"),
        };
        while named.is_none() && names.iter().any(|n| *n == name) {
            name.push('_');
        }
        format_ident!("{}", name)
    };
    let class_type = |c: usize| match g.classes[c] {
        ClassType::Fixed(s) => {
            let t = format_ident!("{}", s.rust());
            quote! { #t }
        }
        ClassType::Kind(_) => {
            let t = param(c);
            quote! { #t }
        }
    };
    let generic: Vec<(usize, &'static str)> = (g.classes.iter().enumerate())
        .filter_map(|(c, t)| match t {
            ClassType::Kind(k) => Some((c, k.name())),
            ClassType::Fixed(_) => None,
        })
        .collect();
    let bounds = generic.iter().map(|&(c, k)| {
        let (t, k) = (param(c), format_ident!("{}", k));
        quote! { #t: #p::#k }
    });
    let tys = g.class_of.iter().map(|&c| class_type(c));
    let r = match g.result {
        ResultType::Fixed(s) => {
            let t = format_ident!("{}", s.rust());
            quote! { #t }
        }
        ResultType::Class(c) => class_type(c),
    };
    // Each generic class's type in a variant: the type of its first slot.
    let first_slot = |c: usize| g.class_of.iter().position(|&k| k == c).unwrap_or_default();
    let dtypes = generic.iter().map(|&(c, _)| {
        let t = param(c);
        quote! { <#t as #p::Element>::DTYPE }
    });
    let arms = variants.iter().enumerate().map(|(i, v)| {
        let pats = generic.iter().map(|&(c, _)| {
            let d = v.types[first_slot(c)]
                .dtype()
                .map(|d| format!("{d:?}"))
                .unwrap_or_default();
            let d = format_ident!("{}", d);
            quote! { #p::DType::#d }
        });
        quote! { (#(#pats,)*) => #i, }
    });
    let all = variants.iter().map(|v| templates.template(v));
    let count = variants.len();
    quote! {
        impl<#(#bounds),*> #trait_name for (#(#tys,)*) {
            type R = #r;
            #[inline]
            fn template() -> &'static #p::ExprTemplate {
                static TEMPLATES: [#p::ExprTemplate; #count] = [#(#all),*];
                // (Every combination the bounds admit is listed: the last arm is never
                // taken.)
                #[allow(unreachable_patterns)]
                let variant = match (#(#dtypes,)*) {
                    #(#arms)*
                    _ => 0,
                };
                &TEMPLATES[variant]
            }
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
