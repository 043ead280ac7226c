//! The partial derivatives of a device function (see `grad`): a device function per float
//! parameter, translated like the function itself, whose OpenCL C the function's hidden
//! macro gives as `@grad_source` to a caller's derivative.

use proc_macro2::TokenStream;
use quote::quote;

use super::translate::{translate_fn, Partial, Partials, Translation};
use crate::diag::Errors;
use crate::emit::{guarded, FP64_PRAGMA};
use crate::generics::ConstParam;
use crate::grad::{partial_fn, partial_name, partial_sigs, Why};
use crate::ir::ParamTy;
use crate::resolve::Deps;
use crate::signature::FnKind;

/// The partials of `f` (one instance, `t` its translation) of the device function `base`;
/// `instance`: the instance's types (`f32_i64`, empty for a function that is not generic).
pub(super) fn partials(
    f: &syn::ItemFn,
    base: &str,
    instance: &str,
    t: &Translation,
    consts: &[ConstParam],
    deps: &Deps,
) -> Partials {
    if t.errors.is_some() || t.text.is_none() {
        return Err(Why::new("it does not translate".into()));
    }
    let Some(ret) = t.ret.filter(|r| r.is_float()) else {
        return Err(Why::new("it returns no float".into()));
    };
    if t.params.iter().any(|p| !matches!(p.ty, ParamTy::Scalar(_))) {
        return Err(Why::new("it takes slices".into()));
    }
    let mut callable = deps.sigs.clone();
    callable.extend(partial_sigs(&deps.sigs));
    let deps = Deps {
        sigs: callable,
        structs: deps.structs.clone(),
    };
    let mut out = Vec::new();
    for (k, p) in t.params.iter().enumerate() {
        if !matches!(p.ty, ParamTy::Scalar(s) if s.is_float()) {
            continue;
        }
        let name = match instance {
            "" => partial_name(base, k),
            i => format!("{}__{i}", partial_name(base, k)),
        };
        let pf = partial_fn(f, &name, k, ret, &deps.sigs)?;
        let pt = translate_fn(FnKind::DeviceFn, &pf, consts, &deps, Errors::default());
        if let Some(e) = &pt.errors {
            return Err(Why::new(format!("lazycl could not write its derivative: {e}")));
        }
        out.push(Partial {
            name,
            translation: pt,
        });
    }
    Ok(out)
}

/// The OpenCL C of the partials (and of what they call), as the `@grad_source` arm gives
/// it; empty without partials.
pub(super) fn grad_source(partials: &Partials) -> TokenStream {
    let Ok(partials) = partials else {
        return quote! { "" };
    };
    let pieces = partials.iter().filter_map(|p| {
        let t = &p.translation;
        let text = t.text.as_ref()?;
        let pragma = if t.uses_f64() { FP64_PRAGMA } else { "" };
        let guard = format!("LZC_DEVICE_FN_{}", p.name);
        let own = format!("{}{}", text.helpers, guarded(&guard, &text.text));
        let callees = t.callee_sources();
        Some(quote! { #pragma, #(#callees,)* #own })
    });
    quote! { ::core::concat!(#(#pieces,)*) }
}
