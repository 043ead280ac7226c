//! The Rust side of a kernel's launch: `launch`'s parameters (`&[T]` as `&Array<T>`,
//! `&mut [T]` as `&mut Array<T>`), the `Launch` being configured (`local`, `on`,
//! `after`) and its typed `launch` and `launch_event`.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};

use super::super::translate::Translation;
use super::args::LaunchArgs;
use crate::generics::TypeParam;
use crate::ir::ParamTy;
use crate::signature::struct_type_name;

/// A parameter of `launch`: as Rust (`x: &Array<f32>`) and as the docs show its type.
pub(super) struct LaunchParam {
    pub(super) tokens: TokenStream,
    pub(super) doc: String,
}

/// The translated parameters with their Rust types, each spanned at its name (a kernel
/// that is not generic: rustc's notes on a wrong argument point at the parameter).
pub(super) fn translated_params(t: &Translation) -> Vec<LaunchParam> {
    let p = quote! { ::lazycl::__private };
    t.params
        .iter()
        .map(|param| {
            let id = &param.name;
            let span = id.span();
            let (tokens, ty) = match param.ty {
                ParamTy::Scalar(s) => {
                    let ty = s.rust_type(span);
                    (quote_spanned! {span=> #id: #ty }, s.rust().to_string())
                }
                ParamTy::Struct(k) if t.structs[k].is_tuple() => {
                    let fields = &t.structs[k].fields;
                    let elems = fields.iter().map(|f| format_ident!("{}", f.ty.rust()));
                    let text: Vec<&str> = fields.iter().map(|f| f.ty.rust()).collect();
                    let tokens = quote_spanned! {span=> #id: (#(#elems,)*) };
                    (tokens, format!("({})", text.join(", ")))
                }
                ParamTy::Struct(k) => {
                    // (The launcher lives in the kernel's module, inside the struct's.)
                    let name = &t.structs[k].name;
                    let ty = format_ident!("{}", name, span = span);
                    (quote_spanned! {span=> #id: super::#ty }, name.clone())
                }
                ParamTy::Slice { elem, mutable } => {
                    let ty = elem.rust_type(span);
                    match mutable {
                        true => (
                            quote_spanned! {span=> #id: &mut #p::Array<#ty> },
                            format!("&mut Array<{}>", elem.rust()),
                        ),
                        false => (
                            quote_spanned! {span=> #id: &#p::Array<#ty> },
                            format!("&Array<{}>", elem.rust()),
                        ),
                    }
                }
            };
            let doc = format!("{}: {ty}", param.name);
            LaunchParam { tokens, doc }
        })
        .collect()
}

/// The parameters as the function writes them, slices as arrays (`a: T`,
/// `x: &Array<T>`): a generic kernel's, so that one `launch` serves every instance and
/// generic host code can launch any instance it is given.
pub(super) fn written_params(f: &syn::ItemFn, tparams: &[TypeParam]) -> Vec<LaunchParam> {
    let p = quote! { ::lazycl::__private };
    let typed = f.sig.inputs.iter().filter_map(|input| match input {
        syn::FnArg::Typed(pt) => Some(pt),
        syn::FnArg::Receiver(_) => None,
    });
    typed
        .map(|pt| {
            let pat = &pt.pat;
            let (ty, doc) = match &*pt.ty {
                syn::Type::Reference(r) => match &*r.elem {
                    syn::Type::Slice(sl) => {
                        let elem = &sl.elem;
                        let text = text(elem);
                        match r.mutability {
                            Some(_) => (quote! { &mut #p::Array<#elem> }, format!("&mut Array<{text}>")),
                            None => (quote! { &#p::Array<#elem> }, format!("&Array<{text}>")),
                        }
                    }
                    other => (other.to_token_stream(), text(other)),
                },
                // A kernel struct, from the kernel's module: its parent's.
                other => match struct_type_name(other) {
                    Some(id) if !tparams.iter().any(|t| t.ident == *id) => {
                        (quote! { super::#id }, text(other))
                    }
                    _ => (other.to_token_stream(), text(other)),
                },
            };
            let doc = format!("{}: {doc}", text(pat));
            LaunchParam {
                tokens: quote! { #pat: #ty },
                doc,
            }
        })
        .collect()
}

/// Written Rust as the docs show it: `(f32, u32)`, `mut x`.
fn text(t: &impl ToTokens) -> String {
    t.to_token_stream().to_string().replace(" ,", ",")
}

/// The kernel module's `Launch`, a launch being configured, over the module's type
/// parameters `tparams` (none for a kernel that is not generic), and its settings.
pub(super) fn launch_config(tparams: &[TokenStream], phantom: &TokenStream) -> TokenStream {
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

/// The docs of `launch` and of `launch_event`.
pub(super) struct LaunchDocs {
    pub(super) launch: String,
    pub(super) launch_event: String,
}

/// The typed `launch` and `launch_event` of `Launch<'a, types>` (`header`, the impl's),
/// whose parameters are `params`; `t` is a translation, whose parameters' names they pass.
pub(super) fn launch_typed(
    name: &Ident,
    t: &Translation,
    args: &LaunchArgs,
    params: &[LaunchParam],
    header: TokenStream,
    docs: &LaunchDocs,
) -> TokenStream {
    let LaunchArgs {
        prepare,
        kargs,
        tracked,
        ..
    } = args;
    let launch_params: Vec<&TokenStream> = params.iter().map(|p| &p.tokens).collect();
    let (launch_doc, launch_event_doc) = (&docs.launch, &docs.launch_event);
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
