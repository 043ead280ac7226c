//! The module a generic `#[kernel] fn name<T: Float>` becomes: per instance (a
//! combination of element types) a `KernelSource` written at compile time and an impl of
//! the module's `Types` trait that names it; `bind::<T>` picks the instance, and one
//! `launch`, typed by the parameters as written (`a: T`, `x: &Array<T>`), serves every
//! instance.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, ToTokens};

use super::kernel::{
    bind_constants, forwarded_attrs, launch_args, launch_config, launch_typed, module_doc, phantom,
    program_source, BindConstants,
};
use super::translate::{kernel_cl_name, Translation};
use crate::generics::{ConstParam, TypeParam};
use crate::ir::Scalar;
use crate::signature::struct_type_name;

/// The module of a generic kernel: a program per instance and one `launch` typed by the
/// parameters as written; `bind` picks the instance of the types given
/// (`name::bind::<f32>(&ctx)`, or inferred from `launch`'s arguments), and types outside
/// the bound are a type error there.
pub(super) fn expand_generic_kernel(
    f: &syn::ItemFn,
    params: &[TypeParam],
    consts: &[ConstParam],
    instances: &[(Vec<Scalar>, Translation)],
    errors: Option<syn::Error>,
) -> TokenStream {
    let name = &f.sig.ident;
    let vis = &f.vis;
    let attrs = forwarded_attrs(f);
    let cl_name = kernel_cl_name(&name.to_string());
    let errors = errors.map(|e| e.to_compile_error());
    let tparams: Vec<TokenStream> = params.iter().map(|p| p.ident.to_token_stream()).collect();
    let all = phantom(&tparams);
    let listing = instances
        .iter()
        .map(|(types, _)| match types[..] {
            [one] => one.rust().to_string(),
            _ => format!(
                "({})",
                types.iter().map(|t| t.rust()).collect::<Vec<_>>().join(", ")
            ),
        })
        .collect::<Vec<_>>()
        .join(", ");
    let unimplemented = format!("`{name}` is generated for {listing} only");
    let mut items = Vec::new();
    for (k, (types, t)) in instances.iter().enumerate() {
        let concrete: Vec<TokenStream> = types
            .iter()
            .map(|s| Ident::new(s.rust(), Span::call_site()).to_token_stream())
            .collect();
        let key = phantom(&concrete);
        let source = program_source(t);
        let args = launch_args(t);
        let (num_args, dtypes) = (args.num_args, &args.dtypes);
        let kernel_static = format_ident!("KERNEL_{}", k);
        items.push(quote! {
            static #kernel_static: ::lazycl::__private::KernelSource = ::lazycl::__private::KernelSource {
                name: NAME,
                source: #source,
                num_args: #num_args,
                dtypes: &[#(::lazycl::__private::DType::#dtypes),*],
            };
            impl Types for #key {
                fn kernel() -> &'static ::lazycl::__private::KernelSource {
                    &#kernel_static
                }
            }
        });
    }
    let tparams_names: Vec<String> = params.iter().map(|p| p.ident.to_string()).collect();
    // One `launch` for every instance, typed by the parameters as written (`a: T`,
    // `x: &Array<T>`): so that generic host code can launch any instance it is given.
    let generic_params: Vec<TokenStream> = f
        .sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            syn::FnArg::Typed(pt) => Some(pt),
            syn::FnArg::Receiver(_) => None,
        })
        .map(|pt| {
            let pat = &pt.pat;
            let ty = match &*pt.ty {
                syn::Type::Reference(r) => match &*r.elem {
                    syn::Type::Slice(sl) => {
                        let elem = &sl.elem;
                        match r.mutability {
                            Some(_) => quote! { &mut ::lazycl::__private::Array<#elem> },
                            None => quote! { &::lazycl::__private::Array<#elem> },
                        }
                    }
                    other => other.to_token_stream(),
                },
                // A kernel struct, from the kernel's module: its parent's.
                other => match struct_type_name(other) {
                    Some(id) if !tparams_names.contains(&id.to_string()) => quote! { super::#id },
                    _ => other.to_token_stream(),
                },
            };
            quote! { #pat: #ty }
        })
        .collect();
    if let Some((_, t)) = instances.first() {
        let mut args = launch_args(t);
        args.params = generic_params.clone();
        let signature = generic_params
            .iter()
            .map(|p| {
                p.to_string()
                    .replace(" :", ":")
                    .replace("& ", "&")
                    .replace(" <", "<")
                    .replace(" >", ">")
            })
            .collect::<Vec<_>>()
            .join(", ");
        let launch_doc = format!(
            "Enqueues `{name}({signature})` on the instance of these types and returns without waiting for it to run."
        );
        let launch_event_doc = format!(
            "Like [`Launch::launch`], and returns the launch's [`Event`](::lazycl::Event). `{name}({signature})`."
        );
        let header = quote! {
            impl<'a, #(#tparams: ::lazycl::__private::Element),*> Launch<'a, #(#tparams),*> where #all: Types
        };
        items.push(launch_typed(
            name,
            t,
            &args,
            header,
            &launch_doc,
            &launch_event_doc,
        ));
    }
    let params_list = params
        .iter()
        .map(|p| p.ident.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let mod_doc = format!(
        "The generic `#[kernel]` `{name}<{params_list}>`, generated for {listing}: `{name}::bind::<..>(&ctx)?.global(n).launch(..)` picks the instance; [`source`] is its OpenCL C."
    );
    let mod_doc = module_doc(&attrs, &mod_doc);
    let config = launch_config(&tparams);
    let BindConstants {
        params: const_params,
        constants,
    } = bind_constants(consts);
    quote! {
        #errors
        #(#attrs)*
        #mod_doc
        #[allow(non_snake_case, dead_code)]
        #vis mod #name {
            /// The kernel's name in the OpenCL C source.
            pub const NAME: &str = #cl_name;

            /// The element types this kernel is generated for.
            #[diagnostic::on_unimplemented(message = #unimplemented)]
            pub trait Types: 'static {
                #[doc(hidden)]
                fn kernel() -> &'static ::lazycl::__private::KernelSource;
            }

            /// The OpenCL C program of the instance for these types (with the device
            /// functions it calls).
            pub fn source<#(#tparams),*>() -> &'static str where #all: Types {
                <#all as Types>::kernel().source
            }

            /// Builds the program of the instance for these types (once per context,
            /// then cached) and creates the kernel.
            pub fn bind<#(#tparams,)* #(#const_params),*>(ctx: &::lazycl::__private::Context) -> ::lazycl::__private::Result<Bound<#(#tparams),*>>
            where #all: Types {
                ::lazycl::__private::Kernel::bind_with_constants(ctx, <#all as Types>::kernel(), #constants)
                    .map(|kernel| Bound { kernel, _types: ::core::marker::PhantomData })
            }

            /// The kernel bound to a context. Cloning is cheap; a `Bound` can be shared
            /// by several threads.
            pub struct Bound<#(#tparams),*> {
                kernel: ::lazycl::__private::Kernel,
                _types: ::core::marker::PhantomData<fn() -> #all>,
            }

            impl<#(#tparams),*> ::core::clone::Clone for Bound<#(#tparams),*> {
                fn clone(&self) -> Self {
                    Bound { kernel: self.kernel.clone(), _types: ::core::marker::PhantomData }
                }
            }

            impl<#(#tparams),*> Bound<#(#tparams),*> {
                /// Starts a launch over `global` work-items: `n`, `[n]`, `[w, h]` or
                /// `[w, h, d]`.
                #[inline]
                pub fn global(&self, global: impl ::core::convert::Into<::lazycl::__private::Dims>) -> Launch<'_, #(#tparams),*> {
                    Launch {
                        kernel: &self.kernel,
                        opts: ::lazycl::__private::LaunchOptions::new(global.into()),
                        _types: ::core::marker::PhantomData,
                    }
                }

                /// The untyped kernel.
                pub fn kernel(&self) -> &::lazycl::__private::Kernel {
                    &self.kernel
                }
            }

            #config
            #(#items)*
        }
    }
}
