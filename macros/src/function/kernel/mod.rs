//! The Rust module a `#[kernel] fn name` becomes: `NAME`, a program per instance (one for
//! a kernel that is not generic, one per combination of element types for a generic
//! one, all written at compile time), `bind(&Context)` and the typed launcher
//! `Bound::global(..).local(..).launch(args)`.
//!
//! A kernel that is not generic is the case of one instance of no types: its program is
//! `SOURCE` and `bind` builds it. A generic kernel's module has a `Types` trait that
//! names each instance's program, `bind::<T>` and `source::<T>()` pick one, and one
//! `launch`, typed by the parameters as written (`a: T`, `x: &Array<T>`), serves every
//! instance; types outside the bound are a type error at `bind`.
//!
//! The OpenCL side of each program (its text, arguments and element types) is in `args`;
//! `launch`'s parameters and the `Launch` type in `launch`.

mod args;
mod launch;

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, ToTokens};

use super::translate::{kernel_cl_name, Translated};
use super::LeftOut;
use crate::generics::{ConstParam, TypeParam};
use args::{bind_constants, launch_args, program_source, BindConstants};
use launch::{launch_config, launch_typed, translated_params, written_params, LaunchDocs, LaunchParam};

/// A translated `#[kernel]`: the function, its type parameters (none for a kernel that is
/// not generic) and const parameters, a translation per instance, and the errors.
pub(super) struct KernelDef<'a> {
    pub(super) f: &'a syn::ItemFn,
    pub(super) params: &'a [TypeParam],
    pub(super) consts: &'a [ConstParam],
    /// At least one: a kernel that is not generic has one, of no types.
    pub(super) instances: &'a [Translated],
    /// The optional instances left out, and why.
    pub(super) left_out: &'a [LeftOut],
    pub(super) errors: Option<syn::Error>,
}

impl KernelDef<'_> {
    fn is_generic(&self) -> bool {
        !self.params.is_empty()
    }
}

/// The kernel's type parameters as the module's items write them (all empty for a
/// kernel that is not generic).
struct TypeArgs {
    /// `T`, `U`.
    names: Vec<TokenStream>,
    /// `T` for one, `(T, U)` for several, `()` for none: the key of the `Types` impls.
    all: TokenStream,
    /// `<T, U>`, or nothing.
    list: TokenStream,
    /// `where (T, U): Types`, or nothing.
    bound: TokenStream,
    /// The phantom field of `Bound` and `Launch` and its value, or nothing.
    field: TokenStream,
    init: TokenStream,
}

impl TypeArgs {
    fn new(params: &[TypeParam]) -> TypeArgs {
        let names: Vec<TokenStream> = params.iter().map(|p| p.ident.to_token_stream()).collect();
        let all = key(&names);
        if names.is_empty() {
            return TypeArgs {
                names,
                all,
                list: quote! {},
                bound: quote! {},
                field: quote! {},
                init: quote! {},
            };
        }
        TypeArgs {
            list: quote! { <#(#names),*> },
            bound: quote! { where #all: Types },
            field: quote! { _types: ::core::marker::PhantomData<fn() -> #all>, },
            init: quote! { _types: ::core::marker::PhantomData, },
            names,
            all,
        }
    }
}

/// `T` for one type, `(T, U)` for several, `()` for none.
fn key(types: &[TokenStream]) -> TokenStream {
    match types {
        [one] => one.clone(),
        _ => quote! { (#(#types),*) },
    }
}

/// The module of a kernel.
pub(super) fn expand_kernel(k: &KernelDef) -> TokenStream {
    let name = &k.f.sig.ident;
    let vis = &k.f.vis;
    let attrs = forwarded_attrs(k.f);
    let cl_name = kernel_cl_name(&name.to_string());
    let errors = k.errors.as_ref().map(|e| e.to_compile_error());
    let types = TypeArgs::new(k.params);
    let params = match k.is_generic() {
        true => written_params(k.f, k.params),
        false => translated_params(&k.instances[0].translation),
    };
    let docs = Docs::new(k, &params);
    let (programs, pick) = programs(k, &types);
    let bind = bind(k, &types, &pick, &docs.bind);
    let bound = bound(&types);
    let launch = launch(k, &types, &params, &docs.launch);
    let mod_doc = module_doc(&attrs, &docs.module);
    quote! {
        #errors
        #(#attrs)*
        #mod_doc
        #[allow(non_snake_case, dead_code)]
        #vis mod #name {
            /// The kernel's name in the OpenCL C source.
            pub const NAME: &str = #cl_name;
            #programs
            #bind
            #bound
            #launch
        }
    }
}

/// A `KernelSource` per instance (`KERNEL_0`, ...), and the expression `bind` picks the
/// instance's by: `SOURCE` and `&KERNEL_0` for a kernel that is not generic; for a
/// generic one the `Types` trait, implemented for each instance's types, and
/// `source::<T>()`.
fn programs(k: &KernelDef, types: &TypeArgs) -> (TokenStream, TokenStream) {
    let mut items = Vec::new();
    for (n, instance) in k.instances.iter().enumerate() {
        let t = &instance.translation;
        let mut source = program_source(t);
        if !k.is_generic() {
            items.push(quote! {
                /// The OpenCL C program of this kernel (with the device functions it calls).
                pub const SOURCE: &str = #source;
            });
            source = quote! { SOURCE };
        }
        let args = launch_args(t);
        let (num_args, dtypes) = (args.num_args, &args.dtypes);
        let kernel_static = format_ident!("KERNEL_{}", n);
        items.push(quote! {
            static #kernel_static: ::lazycl::__private::KernelSource = ::lazycl::__private::KernelSource {
                name: NAME,
                source: #source,
                num_args: #num_args,
                dtypes: &[#(::lazycl::__private::DType::#dtypes),*],
            };
        });
        if k.is_generic() {
            let concrete: Vec<TokenStream> = instance
                .types
                .iter()
                .map(|s| s.rust_type(Span::call_site()))
                .collect();
            let key = key(&concrete);
            items.push(quote! {
                impl Types for #key {
                    fn kernel() -> &'static ::lazycl::__private::KernelSource {
                        &#kernel_static
                    }
                }
            });
        }
    }
    if !k.is_generic() {
        return (quote! { #(#items)* }, quote! { &KERNEL_0 });
    }
    let (names, all, bound) = (&types.names, &types.all, &types.bound);
    let unimplemented = format!(
        "`{}` is generated for {} only{}",
        k.f.sig.ident,
        listing(k),
        left_out_reasons(k)
    );
    let programs = quote! {
        /// The element types this kernel is generated for.
        #[diagnostic::on_unimplemented(message = #unimplemented)]
        pub trait Types: 'static {
            #[doc(hidden)]
            fn kernel() -> &'static ::lazycl::__private::KernelSource;
        }

        /// The OpenCL C program of the instance for these types (with the device
        /// functions it calls).
        pub fn source<#(#names),*>() -> &'static str #bound {
            <#all as Types>::kernel().source
        }

        #(#items)*
    };
    (programs, quote! { <#all as Types>::kernel() })
}

/// The instances' types: `f32, f64`, `(f32, i32), (f64, i32)`.
fn listing(k: &KernelDef) -> String {
    let each = k.instances.iter().map(|i| match &i.types[..] {
        [one] => one.rust().to_string(),
        types => format!(
            "({})",
            types.iter().map(|t| t.rust()).collect::<Vec<_>>().join(", ")
        ),
    });
    each.collect::<Vec<_>>().join(", ")
}

/// `; not for f16: <why>; not for bf16: <why>`: the optional instances left out (see
/// `function::leave_out_optional`), or nothing.
fn left_out_reasons(k: &KernelDef) -> String {
    // Instances left out for the same reason, together.
    let mut reasons: Vec<(&str, Vec<String>)> = Vec::new();
    for l in k.left_out {
        let types: Vec<&str> = l.types.iter().map(|t| t.rust()).collect();
        let types = match &types[..] {
            [one] => one.to_string(),
            _ => format!("({})", types.join(", ")),
        };
        match reasons.iter_mut().find(|(r, _)| *r == l.reason) {
            Some((_, all)) => all.push(types),
            None => reasons.push((&l.reason, vec![types])),
        }
    }
    let each = reasons
        .iter()
        .map(|(reason, types)| format!("; not for {}: {reason}", types.join(", ")));
    each.collect()
}

/// `bind`, over the type parameters and the const parameters: builds the program the
/// expression `pick` names, with the constants.
fn bind(k: &KernelDef, types: &TypeArgs, pick: &TokenStream, doc: &str) -> TokenStream {
    let BindConstants {
        params: const_params,
        constants,
    } = bind_constants(k.consts);
    let (names, list, bound, init) = (&types.names, &types.list, &types.bound, &types.init);
    quote! {
        #[doc = #doc]
        pub fn bind<#(#names,)* #(#const_params),*>(ctx: &::lazycl::__private::Context) -> ::lazycl::__private::Result<Bound #list>
        #bound {
            ::lazycl::__private::Kernel::bind_with_constants(ctx, #pick, #constants)
                .map(|kernel| Bound { kernel, #init })
        }
    }
}

/// `Bound`, the kernel bound to a context, which starts launches.
fn bound(types: &TypeArgs) -> TokenStream {
    let (names, list, field, init) = (&types.names, &types.list, &types.field, &types.init);
    quote! {
        /// The kernel bound to a context. Cloning is cheap; a `Bound` can be shared
        /// by several threads.
        pub struct Bound #list {
            kernel: ::lazycl::__private::Kernel,
            #field
        }

        impl #list ::core::clone::Clone for Bound #list {
            fn clone(&self) -> Self {
                Bound { kernel: self.kernel.clone(), #init }
            }
        }

        impl #list Bound #list {
            /// Starts a launch over `global` work-items: `n`, `[n]`, `[w, h]` or
            /// `[w, h, d]`.
            #[inline]
            pub fn global(&self, global: impl ::core::convert::Into<::lazycl::__private::Dims>) -> Launch<'_, #(#names),*> {
                Launch {
                    kernel: &self.kernel,
                    opts: ::lazycl::__private::LaunchOptions::new(global.into()),
                    #init
                }
            }

            /// The untyped kernel.
            pub fn kernel(&self) -> &::lazycl::__private::Kernel {
                &self.kernel
            }
        }
    }
}

/// `Launch` and its typed `launch`, whose OpenCL arguments are the same for every
/// instance (those of the first).
fn launch(k: &KernelDef, types: &TypeArgs, params: &[LaunchParam], docs: &LaunchDocs) -> TokenStream {
    let t = &k.instances[0].translation;
    let names = &types.names;
    let bound = &types.bound;
    let config = launch_config(names, &types.all);
    let header = quote! {
        impl<'a, #(#names: ::lazycl::__private::Element),*> Launch<'a, #(#names),*> #bound
    };
    let typed = launch_typed(&k.f.sig.ident, t, &launch_args(t), params, header, docs);
    quote! { #config #typed }
}

/// The docs of the module, of `bind`, and of `launch` and `launch_event`.
struct Docs {
    module: String,
    bind: String,
    launch: LaunchDocs,
}

impl Docs {
    fn new(k: &KernelDef, params: &[LaunchParam]) -> Docs {
        let name = &k.f.sig.ident;
        let signature = params
            .iter()
            .map(|p| p.doc.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let instance = if k.is_generic() {
            " on the instance of these types"
        } else {
            ""
        };
        let launch = format!(
            "Enqueues `{name}({signature})`{instance} and returns without waiting for it to run. \
             Slices are passed as arrays (`&[T]` → `&Array<T>`, `&mut [T]` → `&mut Array<T>`), with their \
             length as `x.len()`."
        );
        let launch_event = format!(
            "Like [`Launch::launch`], and returns the launch's [`Event`](::lazycl::Event) (an \
             OpenCL event: ask for one only when you need it). `{name}({signature})`."
        );
        let module = if k.is_generic() {
            let params: Vec<String> = k.params.iter().map(|p| p.ident.to_string()).collect();
            format!(
                "The generic `#[kernel]` `{name}<{}>`, generated for {}: `{name}::bind::<..>(&ctx)?.global(n).launch(..)` picks the instance; [`source`] is its OpenCL C.",
                params.join(", "),
                listing(k)
            )
        } else {
            let names: Vec<String> = k.instances[0]
                .translation
                .params
                .iter()
                .map(|p| p.name.to_string())
                .collect();
            format!(
                "The `#[kernel]` `{name}`: [`bind`] it to a context, then \
                 `{name}::bind(&ctx)?.global(n).launch({})`. The OpenCL C source is [`SOURCE`].",
                names.join(", ")
            )
        };
        Docs {
            module,
            bind: bind_doc(k),
            launch: LaunchDocs { launch, launch_event },
        }
    }
}

/// `bind`'s doc: what it builds, once per context (and values of the const parameters).
fn bind_doc(k: &KernelDef) -> String {
    let values: Vec<String> = k.consts.iter().map(|c| format!("`{}`", c.ident)).collect();
    let values = format!("these values of {}", values.join(", "));
    let (program, once) = match (k.is_generic(), k.consts.is_empty()) {
        (false, true) => ("the program".to_string(), "once per context"),
        (false, false) => (format!("the program for {values}"), "once per context and values"),
        (true, true) => (
            "the program of the instance for these types".to_string(),
            "once per context",
        ),
        (true, false) => (
            format!("the program of the instance for these types and {values}"),
            "once per context and values",
        ),
    };
    format!("Builds {program} ({once}, then cached) and creates the kernel.")
}

/// The module's doc attribute: `doc`, unless the user documented the function.
fn module_doc(attrs: &[&syn::Attribute], doc: &str) -> TokenStream {
    if attrs.iter().any(|a| a.path().is_ident("doc")) {
        quote! {}
    } else {
        quote! { #[doc = #doc] }
    }
}

/// The attributes the kernel's module keeps.
fn forwarded_attrs(f: &syn::ItemFn) -> Vec<&syn::Attribute> {
    f.attrs
        .iter()
        .filter(|a| a.path().is_ident("doc") || a.path().is_ident("cfg"))
        .collect()
}
