//! `#[kernel]` and `#[device_fn]`: a function translated to OpenCL C, and the Rust code
//! around it. The expansion first fetches the signatures of the device functions the
//! body calls (through their hidden macros, see `resolve`), then translates
//! (`translate`: signature, lowering, emission) and generates the kernel's module with
//! its typed launcher (`kernel`) or the device function's hidden macro and `map`
//! (`device_fn`). On an error the generated items are still emitted, with the errors
//! beside them, so that editors keep working.

mod device_fn;
mod kernel;
mod translate;

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use crate::diag::{Errors, Spanned};
use crate::ir::DevSig;
use crate::lower::calls::called_functions;
use crate::resolve::{devfn_macro, resolve_chain};
use crate::signature::FnKind;
use device_fn::expand_device_fn;
use kernel::expand_kernel;
use translate::translate_fn;

/// Entry point of `#[kernel]` and `#[device_fn]`.
pub fn entry(kind: FnKind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut pre_errors = Errors::default();
    if !attr.is_empty() {
        pre_errors.add(attr.span(), format!("{} takes no arguments", kind.attr()));
    }
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
        let macros = callees
            .iter()
            .map(|id| devfn_macro(&id.to_string(), id.span()))
            .collect();
        let k = Ident::new(
            if kind == FnKind::Kernel {
                "kernel"
            } else {
                "device_fn"
            },
            Span::call_site(),
        );
        if let Some(chain) = resolve_chain(macros, quote! { #k #f }) {
            return chain;
        }
    }
    translate(kind, &f, &[], pre_errors)
}

/// `__lazycl_resolved!` for a function: the translation once the signatures of the
/// device functions it calls are known.
pub fn resolved(kind: FnKind, f: &syn::ItemFn, sigs: &[DevSig]) -> TokenStream {
    translate(kind, f, sigs, Errors::default())
}

fn translate(kind: FnKind, f: &syn::ItemFn, sigs: &[DevSig], errors: Errors) -> TokenStream {
    let t = translate_fn(kind, f, sigs, errors);
    match kind {
        FnKind::Kernel => expand_kernel(f, &t, sigs),
        FnKind::DeviceFn => expand_device_fn(f, &t, sigs),
    }
}
