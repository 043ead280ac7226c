//! The Rust module a `#[kernel] fn name` becomes: `NAME`, `SOURCE` (the OpenCL C program
//! with the device functions it calls, concatenated at compile time), `bind(&Context)`
//! and the typed launcher `Bound::global(..).local(..).launch(args)`, whose parameters
//! have the Rust types of the signature (`&[T]` as `&Array<T>`, `&mut [T]` as
//! `&mut Array<T>`). A slice is two OpenCL arguments: the buffer and its length. The
//! launcher's pieces serve a generic kernel's module too (`generic_kernel`).

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use super::translate::{kernel_cl_name, Translation};
use crate::emit::pragmas;
use crate::generics::ConstParam;
use crate::ir::{DType, ParamTy, Scalar};

/// The launcher's view of the parameters.
#[derive(Default)]
pub(super) struct LaunchArgs {
    /// The number of OpenCL arguments.
    pub(super) num_args: u32,
    /// The element types the device must support (sorted, without repeats).
    pub(super) dtypes: Vec<Ident>,
    /// `launch`'s parameters: `a: f32`, `x: &Array<f32>`, ...
    pub(super) params: Vec<TokenStream>,
    /// Statements that take each array's buffer on the launch's queue.
    prepare: Vec<TokenStream>,
    /// The OpenCL arguments, in order.
    kargs: Vec<TokenStream>,
    /// The buffers whose dependencies the launch tracks.
    tracked: Vec<TokenStream>,
}

pub(super) fn launch_args(t: &Translation) -> LaunchArgs {
    let mut a = LaunchArgs::default();
    let mut dtypes: Vec<DType> = Vec::new();
    let p = quote! { ::lazycl::__private };
    for param in &t.params {
        let id = &param.name;
        let span = id.span();
        match param.ty {
            ParamTy::Scalar(s) => {
                a.num_args += 1;
                let ty = format_ident!("{}", s.rust(), span = span);
                a.params.push(quote_spanned! {span=> #id: #ty });
                if s == Scalar::Usize {
                    a.kargs.push(quote! { #p::KernelArg::ulong(#id as u64) });
                    dtypes.push(DType::U64);
                } else {
                    a.kargs
                        .push(quote! { #p::KernelArg::Scalar(#p::Element::to_arg_bits(#id)) });
                    dtypes.extend(s.dtype());
                }
            }
            ParamTy::Struct(k) if t.structs[k].is_tuple() => {
                // A tuple: its bytes written here, field by field at C's offsets.
                a.num_args += 1;
                let def = &t.structs[k];
                let layout = def.layout();
                let size = layout.size;
                let elems = def.fields.iter().map(|f| format_ident!("{}", f.ty.rust()));
                a.params.push(quote_spanned! {span=> #id: (#(#elems,)*) });
                let writes = def
                    .fields
                    .iter()
                    .zip(&layout.offsets)
                    .enumerate()
                    .map(|(i, (f, &at))| {
                        let i = syn::Index::from(i);
                        let end = at + f.ty.bits() as usize / 8;
                        quote! { b[#at..#end].copy_from_slice(&#id.#i.to_le_bytes()); }
                    });
                a.kargs.push(quote! {
                    #p::KernelArg::Struct({
                        let mut b = [0u8; #size];
                        #(#writes)*
                        #p::StructBytes::from_array(b)
                    })
                });
            }
            ParamTy::Struct(k) => {
                a.num_args += 1;
                // (The launcher lives in the kernel's module, inside the struct's.)
                let ty = format_ident!("{}", t.structs[k].name, span = span);
                a.params.push(quote_spanned! {span=> #id: super::#ty });
                a.kargs
                    .push(quote! { #p::KernelArg::Struct(#p::KernelStruct::struct_bytes(&#id)) });
            }
            ParamTy::Slice { elem, mutable } => {
                a.num_args += 2;
                let ty = format_ident!("{}", elem.rust(), span = span);
                let arg = format_ident!("__lazycl_arg_{}", id);
                if mutable {
                    a.params.push(quote_spanned! {span=> #id: &mut #p::Array<#ty> });
                    a.prepare
                        .push(quote! { let #arg = #id.kernel_arg_mut_on(self.opts.queue)?; });
                } else {
                    a.params.push(quote_spanned! {span=> #id: &#p::Array<#ty> });
                    a.prepare
                        .push(quote! { let #arg = #id.kernel_arg_on(self.opts.queue)?; });
                }
                a.kargs.push(quote! { #arg.mem() });
                a.kargs.push(quote! { #arg.len() });
                a.tracked.push(quote! { &#arg });
                dtypes.extend(elem.dtype());
            }
        }
    }
    if t.uses_f64() {
        dtypes.push(DType::F64);
    }
    dtypes.sort_unstable();
    dtypes.dedup();
    // The runtime re-exports `DType`: its variants' names are the paths to write.
    a.dtypes = dtypes
        .iter()
        .map(|d| Ident::new(&format!("{d:?}"), Span::call_site()))
        .collect();
    a
}

/// The docs of the kernel's module, of `launch` and of `launch_event`.
fn docs(name: &Ident, t: &Translation) -> (String, String, String) {
    let signature = t
        .params
        .iter()
        .map(|p| {
            let ty = match p.ty {
                ParamTy::Scalar(s) => s.rust().to_string(),
                ParamTy::Slice { elem, mutable: false } => format!("&Array<{}>", elem.rust()),
                ParamTy::Slice { elem, mutable: true } => format!("&mut Array<{}>", elem.rust()),
                ParamTy::Struct(k) if t.structs[k].is_tuple() => {
                    let elems: Vec<&str> = t.structs[k].fields.iter().map(|f| f.ty.rust()).collect();
                    format!("({})", elems.join(", "))
                }
                ParamTy::Struct(k) => t.structs[k].name.clone(),
            };
            format!("{}: {ty}", p.name)
        })
        .collect::<Vec<_>>()
        .join(", ");
    let launch_doc = format!(
        "Enqueues `{name}({signature})` and returns without waiting for it to run. \
         Slices are passed as arrays (`&[T]` → `&Array<T>`, `&mut [T]` → `&mut Array<T>`), with their \
         length as `x.len()`."
    );
    let mod_doc = format!(
        "The `#[kernel]` `{name}`: [`bind`] it to a context, then \
         `{name}::bind(&ctx)?.global(n).launch({})`. The OpenCL C source is [`SOURCE`].",
        t.params
            .iter()
            .map(|p| p.name.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let launch_event_doc = format!(
        "Like [`Launch::launch`], and returns the launch's [`Event`](::lazycl::Event) (an \
         OpenCL event: ask for one only when you need it). `{name}({signature})`."
    );
    (mod_doc, launch_doc, launch_event_doc)
}

/// The OpenCL C program of a translated kernel, concatenated at compile time: pragmas, the
/// device functions it calls, its helpers and itself (empty after an error).
pub(super) fn program_source(t: &Translation) -> TokenStream {
    match &t.text {
        Some(text) => {
            let pragma = pragmas(t.uses_f64());
            let own = format!("{}{}", text.helpers, text.text);
            let structs = t.struct_sources();
            let callees = t.callee_sources();
            quote! { ::core::concat!(#pragma, #(#structs,)* #(#callees,)* #own) }
        }
        None => quote! { "" },
    }
}

/// What a kernel's const parameters add to its `bind`: the parameters (`const R: usize`)
/// and the constants it builds the program with.
pub(super) struct BindConstants {
    pub(super) params: Vec<TokenStream>,
    pub(super) constants: TokenStream,
}

pub(super) fn bind_constants(consts: &[ConstParam]) -> BindConstants {
    let p = quote! { ::lazycl::__private };
    let params = consts
        .iter()
        .map(|c| {
            let (id, ty) = (&c.ident, Ident::new(c.ty.rust(), Span::call_site()));
            quote! { const #id: #ty }
        })
        .collect();
    let each = consts.iter().map(|c| {
        let (id, name, cl) = (&c.ident, c.cl_name(), c.ty.cl());
        quote! { #p::KernelConstant { name: #name, cl_type: #cl, value: #id as i128 } }
    });
    BindConstants {
        params,
        constants: quote! { &[#(#each),*] },
    }
}

pub(super) fn expand_kernel(f: &syn::ItemFn, t: &Translation, consts: &[ConstParam]) -> TokenStream {
    let BindConstants {
        params: const_params,
        constants,
    } = bind_constants(consts);
    let bind_doc = match consts.is_empty() {
        true => "Builds the program (once per context, then cached) and creates the kernel.".to_string(),
        false => format!(
            "Builds the program for these values of {} (once per context and values, then cached) and creates the kernel.",
            consts.iter().map(|c| format!("`{}`", c.ident)).collect::<Vec<_>>().join(", ")
        ),
    };
    let name = &f.sig.ident;
    let vis = &f.vis;
    let attrs = forwarded_attrs(f);
    let cl_name = kernel_cl_name(&name.to_string());
    let errors = t.errors.as_ref().map(|e| e.to_compile_error());
    let source = program_source(t);
    let args = launch_args(t);
    let (num_args, dtypes) = (args.num_args, &args.dtypes);
    let (mod_doc, launch_doc, launch_event_doc) = docs(name, t);
    let launch = {
        let config = launch_config(&[]);
        let typed = launch_typed(
            name,
            t,
            &args,
            quote! { impl<'a> Launch<'a> },
            &launch_doc,
            &launch_event_doc,
        );
        quote! { #config #typed }
    };
    let mod_doc = module_doc(&attrs, &mod_doc);
    quote! {
        #errors
        #(#attrs)*
        #mod_doc
        #[allow(non_snake_case, dead_code)]
        #vis mod #name {
            /// The kernel's name in the OpenCL C source.
            pub const NAME: &str = #cl_name;
            /// The OpenCL C program of this kernel (with the device functions it calls).
            pub const SOURCE: &str = #source;
            static KERNEL: ::lazycl::__private::KernelSource = ::lazycl::__private::KernelSource {
                name: NAME,
                source: SOURCE,
                num_args: #num_args,
                dtypes: &[#(::lazycl::__private::DType::#dtypes),*],
            };

            #[doc = #bind_doc]
            pub fn bind<#(#const_params),*>(ctx: &::lazycl::__private::Context) -> ::lazycl::__private::Result<Bound> {
                ::lazycl::__private::Kernel::bind_with_constants(ctx, &KERNEL, #constants).map(|kernel| Bound { kernel })
            }

            /// The kernel bound to a context. Cloning is cheap; a `Bound` can be shared
            /// by several threads.
            #[derive(Clone)]
            pub struct Bound {
                kernel: ::lazycl::__private::Kernel,
            }

            impl Bound {
                /// Starts a launch over `global` work-items: `n`, `[n]`, `[w, h]` or
                /// `[w, h, d]`.
                #[inline]
                pub fn global(&self, global: impl ::core::convert::Into<::lazycl::__private::Dims>) -> Launch<'_> {
                    Launch { kernel: &self.kernel, opts: ::lazycl::__private::LaunchOptions::new(global.into()) }
                }

                /// The untyped kernel.
                pub fn kernel(&self) -> &::lazycl::__private::Kernel {
                    &self.kernel
                }
            }

            #launch
        }
    }
}

/// The kernel module's `Launch`, a launch being configured, over the module's type
/// parameters `tparams` (none for a kernel that is not generic), and its settings.
pub(super) fn launch_config(tparams: &[TokenStream]) -> TokenStream {
    let phantom = phantom(tparams);
    let types = if tparams.is_empty() {
        quote! {}
    } else {
        quote! { _types: ::core::marker::PhantomData<fn() -> #phantom>, }
    };
    quote! {
        /// A launch being configured: optionally [`Launch::local`], [`Launch::on`] and
        /// [`Launch::after`], then [`Launch::launch`] or [`Launch::launch_event`].
        #[must_use = "nothing runs until `.launch(...)` is called"]
        pub struct Launch<'a, #(#tparams),*> {
            kernel: &'a ::lazycl::__private::Kernel,
            opts: ::lazycl::__private::LaunchOptions<'a>,
            #types
        }

        impl<'a, #(#tparams),*> Launch<'a, #(#tparams),*> {
            /// Sets the work-group size (same number of dimensions as the global size,
            /// dividing it).
            #[inline]
            pub fn local(mut self, local: impl ::core::convert::Into<::lazycl::__private::Dims>) -> Self {
                self.opts.local = ::core::option::Option::Some(local.into());
                self
            }

            /// Launches on `queue` instead of the context's default queue (lazy array
            /// arguments are evaluated there too).
            #[inline]
            pub fn on(mut self, queue: &'a ::lazycl::__private::Queue) -> Self {
                self.opts.queue = ::core::option::Option::Some(queue);
                self
            }

            /// Makes the launch wait for `events` too, besides the dependencies on its
            /// array arguments, which are tracked automatically.
            #[inline]
            pub fn after(mut self, events: &'a [::lazycl::__private::Event]) -> Self {
                self.opts.after = events;
                self
            }
        }
    }
}

/// `T` for one type parameter, `(T, U)` for several, `()` for none.
pub(super) fn phantom(tparams: &[TokenStream]) -> TokenStream {
    match tparams {
        [one] => one.clone(),
        _ => quote! { (#(#tparams),*) },
    }
}

/// The typed `launch` and `launch_event` of `Launch<'a, types>`, whose parameters have
/// the Rust types of the signature.
pub(super) fn launch_typed(
    name: &Ident,
    t: &Translation,
    args: &LaunchArgs,
    header: TokenStream,
    launch_doc: &str,
    launch_event_doc: &str,
) -> TokenStream {
    let LaunchArgs {
        params: launch_params,
        prepare,
        kargs,
        tracked,
        ..
    } = args;
    let launch_ident = Ident::new("launch", name.span());
    let launch_event_ident = Ident::new("launch_event", name.span());
    let param_names: Vec<&Ident> = t.params.iter().map(|p| &p.name).collect();
    quote! {
        #header {
            #[doc = #launch_doc]
            #[inline]
            #[allow(clippy::too_many_arguments)]
            pub fn #launch_ident(self, #(#launch_params),*) -> ::lazycl::__private::Result<()> {
                self.submit(false, #(#param_names),*).map(|_| ())
            }

            #[doc = #launch_event_doc]
            #[inline]
            #[allow(clippy::too_many_arguments)]
            pub fn #launch_event_ident(self, #(#launch_params),*) -> ::lazycl::__private::Result<::lazycl::__private::Event> {
                self.submit(true, #(#param_names),*).and_then(::lazycl::__private::Event::required)
            }

            #[inline(always)]
            #[allow(clippy::too_many_arguments)]
            fn submit(self, want_event: bool, #(#launch_params),*) -> ::lazycl::__private::Result<::core::option::Option<::lazycl::__private::Event>> {
                #(#prepare)*
                self.kernel.submit(&self.opts, &[#(#kargs),*], &[#(#tracked),*], want_event)
            }
        }
    }
}

/// The module's doc attribute: `doc`, unless the user documented the function.
pub(super) fn module_doc(attrs: &[&syn::Attribute], doc: &str) -> TokenStream {
    if attrs.iter().any(|a| a.path().is_ident("doc")) {
        quote! {}
    } else {
        quote! { #[doc = #doc] }
    }
}

/// The attributes the kernel's module keeps.
pub(super) fn forwarded_attrs(f: &syn::ItemFn) -> Vec<&syn::Attribute> {
    f.attrs
        .iter()
        .filter(|a| a.path().is_ident("doc") || a.path().is_ident("cfg"))
        .collect()
}
