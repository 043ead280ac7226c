//! `#[kernel]` and `#[device_fn]`: a function translated to OpenCL C, and the Rust code
//! around it. The expansion first fetches the signatures of the device functions the
//! body calls (through their hidden macros, see `resolve`), then translates
//! (`translate`: signature, lowering, emission) once per instance (see `generics`; a
//! function that is not generic is one instance of no types) and generates the kernel's
//! module with its typed launcher (`kernel`) or the device function's hidden macro and
//! `map` (`device_fn`). On an error the
//! generated items are still emitted, with the errors beside them, so that editors keep
//! working (a generic function whose type parameters say no types emits its errors only).

#[cfg(test)]
mod complex_tests;
mod device_fn;
mod kernel;
mod partials;
#[cfg(test)]
mod snapshot;
mod translate;

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::diag::Errors;
use crate::generics::{self, ConstParam, TypeParam};
use crate::grad;
use crate::ir::Scalar;
use crate::kernel_struct::struct_macro;
use crate::lower::scan::{called_functions, named_structs};
use crate::resolve::{devfn_macro, resolve_chain, Deps};
use crate::signature::{struct_type_name, FnKind};
use device_fn::{expand_device_fn, DeviceFnInstance};
use kernel::{expand_kernel, KernelDef};
use translate::{translate_fn, Translated};

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

/// The translation and expansion of a parsed function: its generic parameters read, a
/// translation per instance (one, of no types, for a function that is not generic), the
/// errors of them all gathered, and the kernel's module or the device function's macro
/// written.
fn translate(
    kind: FnKind,
    f: &syn::ItemFn,
    listed: generics::Listed,
    deps: &Deps,
    mut errors: Errors,
) -> TokenStream {
    let params = generics::type_params(f, kind, &listed, &mut errors);
    let consts = generics::const_params(f, kind, &mut errors);
    let Some(mut instances) = translate_instances(kind, f, &params, &consts, deps) else {
        let e = errors.into_error().map(|e| e.to_compile_error());
        return quote! { #e };
    };
    let left_out = leave_out_optional(&params, &mut instances);
    gather_errors(&mut errors, &params, &mut instances);
    let errors = errors.into_error();
    match kind {
        FnKind::Kernel => expand_kernel(&KernelDef {
            f,
            params: &params,
            consts: &consts,
            instances: &instances,
            left_out: &left_out,
            errors,
        }),
        FnKind::DeviceFn => {
            let named: Vec<DeviceFnInstance> = instances
                .into_iter()
                .map(|i| DeviceFnInstance {
                    name: generics::instance_name(&i.types),
                    translation: i.translation,
                    partials: i
                        .partials
                        .unwrap_or_else(|| Err(grad::Why::new("a kernel".into()))),
                })
                .collect();
            expand_device_fn(f, &named, errors)
        }
    }
}

/// A translation of each instance of `f`: of each combination of its type parameters'
/// types, or of `f` itself when it has none. `None` for a generic function with a
/// parameter that was rejected (a type parameter without types, a lifetime, a const
/// parameter that is no integer; its error says why): nothing to instantiate.
fn translate_instances(
    kind: FnKind,
    f: &syn::ItemFn,
    params: &[TypeParam],
    consts: &[ConstParam],
    deps: &Deps,
) -> Option<Vec<Translated>> {
    let generic = f.sig.generics.type_params().next().is_some();
    if generic && f.sig.generics.params.len() > params.len() + consts.len() {
        return None;
    }
    let base = f.sig.ident.to_string();
    let each = generics::instances(f, params).into_iter().map(|mut i| {
        let instance = generics::instance_name(&i.types);
        if kind == FnKind::DeviceFn && generic {
            // Each instance is an OpenCL C function of its own name.
            let name = format!("{}__{instance}", i.f.sig.ident);
            i.f.sig.ident = Ident::new(&name, i.f.sig.ident.span());
        }
        let translation = translate_fn(kind, &i.f, consts, deps, Errors::default());
        let partials = (kind == FnKind::DeviceFn)
            .then(|| partials::partials(&i.f, &base, &instance, &translation, consts, deps));
        Translated {
            types: i.types,
            translation,
            partials,
        }
    });
    Some(each.collect())
}

/// An optional instance that was left out: its types and why (its first error).
pub(super) struct LeftOut {
    pub types: Vec<Scalar>,
    pub reason: String,
}

/// Removes the optional instances (a type narrower than 32 bits that a bound admitted,
/// see `TypeParam::optional`) that do not translate, unless none would be left: a
/// generic function over `T: Float` whose body the 16-bit floats cannot have (atomics)
/// still compiles, for `f32` and `f64`; what was left out, and why.
fn leave_out_optional(params: &[TypeParam], instances: &mut Vec<Translated>) -> Vec<LeftOut> {
    let optional = |i: &Translated| {
        i.translation.errors.is_some() && params.iter().zip(&i.types).any(|(p, &t)| p.optional(t))
    };
    if instances.iter().all(optional) {
        return Vec::new();
    }
    let mut left_out = Vec::new();
    instances.retain_mut(|i| {
        if !optional(i) {
            return true;
        }
        let first = i.translation.errors.take().and_then(|e| e.into_iter().next());
        left_out.push(LeftOut {
            types: i.types.clone(),
            reason: first.map(|e| e.to_string()).unwrap_or_default(),
        });
        false
    });
    left_out
}

/// The instances' errors, after those in `errors` (the attribute's and the generic
/// parameters'), each once: those of the first instance as they are, those found only in
/// a later one saying which instance it is.
fn gather_errors(errors: &mut Errors, params: &[TypeParam], instances: &mut [Translated]) {
    let mut seen: Vec<(String, String)> = Vec::new();
    for (k, instance) in instances.iter_mut().enumerate() {
        let found = instance.translation.errors.take();
        for e in found.into_iter().flat_map(|e| e.into_iter()) {
            let id = (format!("{:?}", e.span()), e.to_string());
            if seen.contains(&id) {
                continue;
            }
            seen.push(id);
            if k == 0 {
                errors.push(e);
            } else {
                let note = generics::instance_note(params, &instance.types);
                errors.push(syn::Error::new(e.span(), format!("{e}{note}")));
            }
        }
    }
}
