//! `#[kernel]` and `#[device_fn]`: a function translated to OpenCL C, and the Rust code
//! around it. The expansion first fetches the signatures of the device functions the
//! body calls (through their hidden macros, see `resolve`), then translates
//! (`translate`: signature, lowering, emission; a generic function once per instance,
//! see `generics`) and generates the kernel's module with its typed launcher (`kernel`)
//! or the device function's hidden macro and `map` (`device_fn`). On an error the
//! generated items are still emitted, with the errors beside them, so that editors keep
//! working (a generic function whose type parameters say no types emits its errors only).

mod device_fn;
mod generic_kernel;
mod kernel;
#[cfg(test)]
mod snapshot;
mod translate;

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::diag::Errors;
use crate::generics;
use crate::ir::Scalar;
use crate::kernel_struct::struct_macro;
use crate::lower::calls::{called_functions, named_structs};
use crate::resolve::{devfn_macro, resolve_chain, Deps};
use crate::signature::{struct_type_name, FnKind};
use device_fn::expand_device_fn;
use generic_kernel::expand_generic_kernel;
use kernel::expand_kernel;
use translate::{translate_fn, Translation};

/// Entry point of `#[kernel]` and `#[device_fn]`.
pub fn entry(kind: FnKind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut pre_errors = Errors::default();
    let listed = generics::listed_types(kind, attr.clone(), &mut pre_errors);
    let f: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            let e = e.to_compile_error();
            let msg = format!("{} applies to a function: `fn name(...) {{ ... }}`", kind.attr());
            return quote! { ::core::compile_error!(#msg); #e #item };
        }
    };
    // Device functions called by the body: fetch their signatures first, by a chain of
    // their hidden macros that ends in `__lazycl_resolved!`.
    let callees = called_functions(&f.block);
    if pre_errors.is_empty() {
        // Kernel structs taken by value first: parameters whose type is a name that is
        // no scalar and no type parameter.
        let type_params: Vec<&Ident> = f.sig.generics.type_params().map(|t| &t.ident).collect();
        let mut structs: Vec<Ident> = Vec::new();
        let params = f.sig.inputs.iter().filter_map(|input| match input {
            syn::FnArg::Typed(pt) => struct_type_name(&pt.ty).cloned(),
            syn::FnArg::Receiver(_) => None,
        });
        for id in params.chain(named_structs(&f.block)) {
            if !type_params.contains(&&id) && !structs.contains(&id) {
                structs.push(id);
            }
        }
        let macros = structs
            .iter()
            .map(|id| struct_macro(&id.to_string(), id.span()))
            .chain(callees.iter().map(|id| devfn_macro(&id.to_string(), id.span())))
            .collect();
        let k = Ident::new(
            if kind == FnKind::Kernel {
                "kernel"
            } else {
                "device_fn"
            },
            Span::call_site(),
        );
        if let Some(chain) = resolve_chain(macros, quote! { #k [#attr] #f }) {
            return chain;
        }
    }
    translate(kind, &f, listed, &Deps::default(), pre_errors)
}

/// `__lazycl_resolved!` for a function: the translation once the signatures of the
/// device functions it calls are known.
pub fn resolved(kind: FnKind, attr: TokenStream, f: &syn::ItemFn, deps: &Deps) -> TokenStream {
    let mut errors = Errors::default();
    let listed = generics::listed_types(kind, attr, &mut errors);
    translate(kind, f, listed, deps, errors)
}

fn translate(
    kind: FnKind,
    f: &syn::ItemFn,
    listed: generics::Listed,
    deps: &Deps,
    mut errors: Errors,
) -> TokenStream {
    let params = generics::type_params(f, kind, &listed, &mut errors);
    let consts = generics::const_params(f, kind, &mut errors);
    let type_params = f.sig.generics.type_params().count();
    if type_params == 0 {
        let mut t = translate_fn(kind, f, &consts, deps, errors);
        return match kind {
            FnKind::Kernel => expand_kernel(f, &t, &consts),
            FnKind::DeviceFn => {
                let errors = t.errors.take();
                expand_device_fn(f, &[(String::new(), t)], errors)
            }
        };
    }
    if params.len() < type_params || f.sig.generics.params.len() > type_params + consts.len() {
        // A parameter without types (its error says why): nothing to instantiate.
        let e = errors.into_error().map(|e| e.to_compile_error());
        return quote! { #e };
    }
    let instances: Vec<(Vec<Scalar>, Translation)> = generics::instances(f, &params)
        .into_iter()
        .map(|mut i| {
            if kind == FnKind::DeviceFn {
                // Each instance is an OpenCL C function of its own name.
                let name = format!("{}__{}", i.f.sig.ident, generics::instance_name(&i.types));
                i.f.sig.ident = Ident::new(&name, i.f.sig.ident.span());
            }
            let t = translate_fn(kind, &i.f, &consts, deps, Errors::default());
            (i.types, t)
        })
        .collect();
    // Each error once: those of the first instance as they are, those found only in a
    // later one saying which instance it is.
    let mut seen: Vec<(String, String)> = Vec::new();
    for (k, (types, t)) in instances.iter().enumerate() {
        for e in t.errors.iter().flat_map(|e| e.clone().into_iter()) {
            let id = (format!("{:?}", e.span()), e.to_string());
            if seen.contains(&id) {
                continue;
            }
            seen.push(id);
            if k == 0 {
                errors.push(e);
            } else {
                let note = generics::instance_note(&params, types);
                errors.push(syn::Error::new(e.span(), format!("{e}{note}")));
            }
        }
    }
    match kind {
        FnKind::Kernel => expand_generic_kernel(f, &params, &consts, &instances, errors.into_error()),
        FnKind::DeviceFn => {
            let named: Vec<(String, Translation)> = instances
                .into_iter()
                .map(|(types, t)| (generics::instance_name(&types), t))
                .collect();
            expand_device_fn(f, &named, errors.into_error())
        }
    }
}
