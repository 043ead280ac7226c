//! The Rust code generated around the OpenCL C text: the kernel module with its typed
//! launcher, and the hidden `macro_rules!` through which a `#[device_fn]` gives other
//! macro invocations its signature and source.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use crate::diag::Errors;
use crate::emit;
use crate::ir::{device_fn_cl_name, DevSig, Param, ParamTy, Scalar};
use crate::lower::calls::called_functions;
use crate::lower::names::is_reserved;
use crate::lower::Lowerer;
use crate::resolve::{callee_sources, devfn_macro, resolve_chain};
use crate::signature::{self, FnKind};

/// Entry point of `#[kernel]` and `#[device_fn]`.
pub fn entry(kind: FnKind, attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut pre_errors = Errors::default();
    if !attr.is_empty() {
        pre_errors.add(
            crate::diag::Spanned::span(&attr),
            format!("{} takes no arguments", kind.attr()),
        );
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

/// Translated pieces of a function, or the errors that prevented it.
struct Translation {
    params: Vec<Param>,
    ret: Option<Scalar>,
    text: Option<emit::FnText>,
    callees: Vec<String>,
    errors: Option<syn::Error>,
}

fn translate_fn(kind: FnKind, f: &syn::ItemFn, sigs: &[DevSig], mut errors: Errors) -> Translation {
    for a in &f.attrs {
        let ok = ["doc", "cfg", "allow", "warn", "deny", "expect"]
            .iter()
            .any(|n| a.path().is_ident(n));
        if !ok {
            errors.add(
                crate::diag::Spanned::span(a),
                format!(
                    "unsupported attribute on a {} function (allowed: doc comments, cfg, lint levels)",
                    kind.attr()
                ),
            );
        }
    }
    let sig = signature::signature(f, kind, &mut errors);
    let mut low = Lowerer::new(kind, sig.ret, sigs);
    let cnames = low.params(&sig.params, &sig.rejected);
    let body = low.body(&f.block);
    low.finish();
    let callees = std::mem::take(&mut low.callees);
    let body_errors = std::mem::take(&mut low.errors);
    if let Some(e) = body_errors.into_error() {
        errors.push(e);
    }
    let text = if errors.is_empty() {
        let cl_name = match kind {
            FnKind::Kernel => kernel_cl_name(&f.sig.ident.to_string()),
            FnKind::DeviceFn => device_fn_cl_name(&f.sig.ident.to_string()),
        };
        Some(emit::function(
            kind == FnKind::Kernel,
            &cl_name,
            &sig.params,
            &cnames,
            sig.ret,
            &body,
            &low.infer,
        ))
    } else {
        None
    };
    Translation {
        params: sig.params,
        ret: sig.ret,
        text,
        callees,
        errors: errors.into_error(),
    }
}

/// The OpenCL C name of a kernel: its Rust name unless that is reserved in OpenCL C.
fn kernel_cl_name(name: &str) -> String {
    let name = name.trim_start_matches("r#");
    if is_reserved(name) {
        format!("{name}_kernel")
    } else {
        name.to_string()
    }
}

fn translate(kind: FnKind, f: &syn::ItemFn, sigs: &[DevSig], errors: Errors) -> TokenStream {
    let t = translate_fn(kind, f, sigs, errors);
    match kind {
        FnKind::Kernel => expand_kernel(f, &t, sigs),
        FnKind::DeviceFn => expand_device_fn(f, &t, sigs),
    }
}

fn callee_sources_of(t: &Translation) -> Vec<TokenStream> {
    callee_sources(t.callees.iter().map(|c| devfn_macro(c, Span::call_site())))
}

fn uses_f64(t: &Translation, sigs: &[DevSig]) -> bool {
    t.text.as_ref().is_some_and(|x| x.uses_f64)
        || t.callees
            .iter()
            .any(|c| sigs.iter().any(|s| &s.name == c && s.uses_f64))
}

fn forwarded_attrs(f: &syn::ItemFn) -> Vec<&syn::Attribute> {
    f.attrs
        .iter()
        .filter(|a| a.path().is_ident("doc") || a.path().is_ident("cfg"))
        .collect()
}

fn expand_kernel(f: &syn::ItemFn, t: &Translation, sigs: &[DevSig]) -> TokenStream {
    let name = &f.sig.ident;
    let vis = &f.vis;
    let attrs = forwarded_attrs(f);
    let cl_name = kernel_cl_name(&name.to_string());
    let errors = t.errors.as_ref().map(|e| e.to_compile_error());
    let source = match &t.text {
        Some(text) => {
            let fp64 = if uses_f64(t, sigs) { emit::FP64_PRAGMA } else { "" };
            let pragma = format!("{}{fp64}", emit::NO_CONTRACT_PRAGMA);
            let own = format!("{}{}", text.helpers, text.text);
            let callees = callee_sources_of(t);
            quote! { ::core::concat!(#pragma, #(#callees,)* #own) }
        }
        None => quote! { "" },
    };
    let mut num_args = 0u32;
    let mut dtypes: Vec<&'static str> = Vec::new();
    let mut launch_params = Vec::new();
    let mut prepare = Vec::new();
    let mut kargs = Vec::new();
    let mut tracked = Vec::new();
    let p = quote! { ::lazycl::__private };
    for param in &t.params {
        let id = &param.name;
        let span = id.span();
        match param.ty {
            ParamTy::Scalar(s) => {
                num_args += 1;
                let ty = format_ident!("{}", s.rust(), span = span);
                launch_params.push(quote_spanned! {span=> #id: #ty });
                if s == Scalar::Usize {
                    kargs.push(quote! { #p::KernelArg::ulong(#id as u64) });
                    dtypes.push("U64");
                } else {
                    kargs.push(quote! { #p::KernelArg::Scalar(#p::Element::to_arg_bits(#id)) });
                    dtypes.extend(s.dtype());
                }
            }
            ParamTy::Slice { elem, mutable } => {
                num_args += 2;
                let ty = format_ident!("{}", elem.rust(), span = span);
                let arg = format_ident!("__lazycl_arg_{}", id);
                if mutable {
                    launch_params.push(quote_spanned! {span=> #id: &mut #p::Array<#ty> });
                    prepare.push(quote! { let #arg = #id.kernel_arg_mut_on(self.opts.queue)?; });
                } else {
                    launch_params.push(quote_spanned! {span=> #id: &#p::Array<#ty> });
                    prepare.push(quote! { let #arg = #id.kernel_arg_on(self.opts.queue)?; });
                }
                kargs.push(quote! { #arg.mem() });
                kargs.push(quote! { #arg.len() });
                tracked.push(quote! { &#arg });
                dtypes.extend(elem.dtype());
            }
        }
    }
    if uses_f64(t, sigs) {
        dtypes.push("F64");
    }
    dtypes.sort_unstable();
    dtypes.dedup();
    let dtypes: Vec<Ident> = dtypes.iter().map(|d| Ident::new(d, Span::call_site())).collect();
    let signature = t
        .params
        .iter()
        .map(|p| {
            let ty = match p.ty {
                ParamTy::Scalar(s) => s.rust().to_string(),
                ParamTy::Slice { elem, mutable: false } => format!("&Array<{}>", elem.rust()),
                ParamTy::Slice { elem, mutable: true } => format!("&mut Array<{}>", elem.rust()),
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
    let launch_ident = Ident::new("launch", name.span());
    let launch_event_ident = Ident::new("launch_event", name.span());
    let launch_event_doc = format!(
        "Like [`Launch::launch`], and returns the launch's [`Event`](::lazycl::Event) (an \
         OpenCL event: ask for one only when you need it). `{name}({signature})`."
    );
    let param_names: Vec<&Ident> = t.params.iter().map(|p| &p.name).collect();
    let has_user_doc = attrs.iter().any(|a| a.path().is_ident("doc"));
    let mod_doc = if has_user_doc {
        quote! {}
    } else {
        quote! { #[doc = #mod_doc] }
    };
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

            /// Builds the program (once per context, then cached) and creates the kernel.
            pub fn bind(ctx: &::lazycl::__private::Context) -> ::lazycl::__private::Result<Bound> {
                ::lazycl::__private::Kernel::bind(ctx, &KERNEL).map(|kernel| Bound { kernel })
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

            /// A launch being configured: optionally [`Launch::local`], [`Launch::on`] and
            /// [`Launch::after`], then [`Launch::launch`] or [`Launch::launch_event`].
            #[must_use = "nothing runs until `.launch(...)` is called"]
            pub struct Launch<'a> {
                kernel: &'a ::lazycl::__private::Kernel,
                opts: ::lazycl::__private::LaunchOptions<'a>,
            }

            impl<'a> Launch<'a> {
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
}

fn expand_device_fn(f: &syn::ItemFn, t: &Translation, sigs: &[DevSig]) -> TokenStream {
    let name = f.sig.ident.to_string();
    let mac = devfn_macro(&name, f.sig.ident.span());
    let errors = t.errors.as_ref().map(|e| e.to_compile_error());
    let sig = DevSig {
        name: name.clone(),
        params: t.params.iter().map(|p| p.ty).collect(),
        ret: t.ret,
        uses_f64: uses_f64(t, sigs),
    };
    let sig_lit = sig.encode();
    let source = match &t.text {
        Some(text) => {
            let pragma = if sig.uses_f64 { emit::FP64_PRAGMA } else { "" };
            let own = format!(
                "{}{}",
                text.helpers,
                emit::guarded(&format!("LZC_DEVICE_FN_{name}"), &text.text)
            );
            let callees = callee_sources_of(t);
            quote! { ::core::concat!(#pragma, #(#callees,)* #own) }
        }
        None => quote! { "" },
    };
    let doc = format!("Hidden: the OpenCL C source and signature of the `#[device_fn]` `{name}`.");
    let map = map_module(f, t, &source);
    quote! {
        #errors
        #map
        #[doc = #doc]
        #[allow(unused_macros)]
        macro_rules! #mac {
            (@source) => { #source };
            (@resolve [$next:ident $($rest:ident)*] [$($sigs:tt)*] $($item:tt)*) => {
                $next! { @resolve [$($rest)*] [$($sigs)* #sig_lit] $($item)* }
            };
            (@resolve [] [$($sigs:tt)*] $($item:tt)*) => {
                ::lazycl::__lazycl_resolved! { [$($sigs)* #sig_lit] $($item)* }
            };
        }
    }
}

/// `mod name { pub fn map(..) }` for a device function of scalars returning a scalar: it
/// applies the function elementwise to arrays and scalars, as a lazy node (an `expr!`
/// template that calls the function).
fn map_module(f: &syn::ItemFn, t: &Translation, source: &TokenStream) -> TokenStream {
    let scalars: Option<Vec<Scalar>> = t
        .params
        .iter()
        .map(|p| match p.ty {
            ParamTy::Scalar(s) if s != Scalar::Usize => Some(s),
            _ => None,
        })
        .collect();
    let (Some(scalars), Some(ret)) = (scalars, t.ret) else {
        return quote! {};
    };
    if t.params.is_empty() || ret == Scalar::Usize || t.errors.is_some() {
        return quote! {};
    }
    let name = &f.sig.ident;
    let vis = &f.vis;
    let p = quote! { ::lazycl::__private };
    let n = t.params.len();
    let text = format!(
        "{}({})",
        device_fn_cl_name(&name.to_string()),
        (0..n).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ")
    );
    let pnames: Vec<Ident> = t
        .params
        .iter()
        .map(|p| {
            let mut n = p.name.clone();
            n.set_span(Span::mixed_site());
            n
        })
        .collect();
    let gens: Vec<Ident> = (0..n).map(|i| format_ident!("A{}", i)).collect();
    let elems: Vec<Ident> = scalars.iter().map(|s| format_ident!("{}", s.rust())).collect();
    let r = format_ident!("{}", ret.rust());
    let signature = t
        .params
        .iter()
        .zip(&scalars)
        .map(|(p, s)| format!("{}: {}", p.name, s.rust()))
        .collect::<Vec<_>>()
        .join(", ");
    let rust = format!(
        "{name}({})",
        t.params
            .iter()
            .map(|p| p.name.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mod_doc = format!(
        "The `#[device_fn]` `{name}({signature}) -> {}` applied to arrays: [`map`].",
        ret.rust()
    );
    let map_doc = format!(
        "Applies `{name}` elementwise: each argument is an `&Array` or a scalar of the parameter's type \
         (at least one an array; arrays broadcast by numpy's rules). The result is a lazy \
         `Array<{}>` that fuses with the nodes around it.",
        ret.rust()
    );
    let has_array = crate::expr::has_array_bound(
        gens.iter()
            .zip(&elems)
            .map(|(g, e)| quote! { <#g as #p::ExprInput<#e>>::Kind }),
    );
    quote! {
        #[doc = #mod_doc]
        #[allow(non_snake_case, dead_code)]
        #vis mod #name {
            static TEMPLATE: #p::ExprTemplate = #p::ExprTemplate {
                text: #text,
                helpers: #source,
                rust: #rust,
            };

            #[doc = #map_doc]
            #[inline]
            #[allow(clippy::too_many_arguments)]
            pub fn map<#(#gens: #p::ExprInput<#elems>),*>(#(#pnames: #gens),*) -> #p::Array<#r>
            where
                #has_array
            {
                #p::expr_node::<#r>(&TEMPLATE, &[#(#p::ExprInput::operand(&#pnames)),*])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The OpenCL C text of a kernel, or its error messages.
    pub fn cl_of(src: &str, sigs: &[DevSig]) -> Result<String, Vec<String>> {
        let f: syn::ItemFn = syn::parse_str(src).map_err(|e| vec![e.to_string()])?;
        let kind = if src.contains("-> ") {
            FnKind::DeviceFn
        } else {
            FnKind::Kernel
        };
        let t = translate_fn(kind, &f, sigs, Errors::default());
        match (t.errors, t.text) {
            (None, Some(text)) => Ok(format!("{}{}", text.helpers, text.text)),
            (Some(e), _) => Err(e.into_iter().map(|e| e.to_string()).collect()),
            (None, None) => Err(vec!["no text".into()]),
        }
    }

    #[test]
    fn saxpy() {
        let cl = cl_of(
            "fn saxpy(a: f32, x: &[f32], y: &mut [f32]) { let i = global_id(0); if i < y.len() { y[i] = a * x[i] + y[i]; } }",
            &[],
        )
        .unwrap();
        println!("{cl}");
        assert!(cl.contains("__kernel void saxpy(float a, __global const float* restrict x, ulong x_len"));
        assert!(cl.contains("y[i] = ((a * x[i]) + y[i]);"));
    }

    #[test]
    fn literal_inference_follows_use() {
        let cl = cl_of(
            "fn k(y: &mut [f32]) { let mut s = 0.0; s += y[0]; let n = 3; y[n] = s; }",
            &[],
        )
        .unwrap();
        println!("{cl}");
        assert!(cl.contains("float s = 0.0f;"), "{cl}");
        assert!(cl.contains("ulong n = 3ul;"), "{cl}");
    }

    #[test]
    fn value_if_and_blocks_lift() {
        let cl = cl_of(
            "fn k(y: &mut [i32]) { let i = global_id(0); let v = if i > 2 { let t = y[i]; t * 2 } else { 7 }; \
             let w = { let q = v + 1; q * q }; y[i] = if v > w && { let z = 3; z > v } { v } else { w / v }; \
             for j in (0..10).step_by(3) { y[j] %= 5; } while y[0] > 0 { y[0] -= 1; } loop { break; } }",
            &[],
        )
        .unwrap();
        println!("{cl}");
        assert!(cl.contains("lzc_div_int"));
    }

    #[test]
    fn errors_are_collected() {
        let e = cl_of(
            "fn k(x: &[f32], n: i32) { let a = x[0] + 1; let b: f32 = n; x[0] = 2.0; foo(1); }",
            &[],
        )
        .unwrap_err();
        println!("{e:#?}");
        assert_eq!(e.len(), 4, "{e:?}");
    }

    #[test]
    fn device_fn_call() {
        let sig = DevSig {
            name: "sq".into(),
            params: vec![ParamTy::Scalar(Scalar::F32)],
            ret: Some(Scalar::F32),
            uses_f64: false,
        };
        let cl = cl_of("fn k(x: &mut [f32]) { x[0] = sq(x[1]) + 1.0; }", &[sig]).unwrap();
        assert!(cl.contains("lzc_fn_sq(x[1ul])"), "{cl}");
        let d = cl_of("fn sq(x: f32) -> f32 { if x > 0.0 { return x * x; } -x }", &[]).unwrap();
        println!("{d}");
        assert!(d.contains("float lzc_fn_sq(float x)"));
    }

    #[test]
    fn names_are_renamed_for_shadowing_and_opencl_keywords() {
        let cl = cl_of(
            "fn k(y: &mut [f32]) { let x = 1; let x = x as f32; let float = x; let lzc_t1 = float; y[0] = lzc_t1; }",
            &[],
        )
        .unwrap();
        assert!(cl.contains("int x = 1;"), "{cl}");
        assert!(cl.contains("float x_1 = ((float)(x));"), "{cl}");
        assert!(cl.contains("float float_ = x_1;"), "{cl}");
        assert!(cl.contains("float lzc_t1_ = float_;"), "{cl}");
        assert_eq!(kernel_cl_name("dot"), "dot_kernel");
        assert_eq!(kernel_cl_name("float4"), "float4_kernel");
        assert_eq!(kernel_cl_name("saxpy"), "saxpy");
        let cl = cl_of(
            "fn k(y: &mut [f32]) { let length = 1.0; let uint2 = length; y[0] = uint2; }",
            &[],
        )
        .unwrap();
        assert!(cl.contains("float uint2_ = length_;"), "{cl}");
    }

    #[test]
    fn unsuffixed_float_defaults_to_f64() {
        let f =
            syn::parse_str::<syn::ItemFn>("fn k(y: &mut [f32]) { let a = 1.5; y[0] = a as f32; }").unwrap();
        let t = translate_fn(FnKind::Kernel, &f, &[], Errors::default());
        assert!(t.text.is_some_and(|t| t.uses_f64));
        let f = syn::parse_str::<syn::ItemFn>("fn k(y: &mut [f32]) { let a = 1.5; y[0] = a; }").unwrap();
        let t = translate_fn(FnKind::Kernel, &f, &[], Errors::default());
        assert!(t.text.is_some_and(|t| !t.uses_f64));
    }

    #[test]
    fn suggestions() {
        use crate::lower::names::suggest;
        assert_eq!(
            suggest("global_idx").as_deref(),
            Some("did you mean `global_id`?")
        );
        assert!(suggest("get_group_id").is_some_and(|s| s.contains("group_id(d)")));
        assert!(suggest("exp").is_some_and(|s| s.contains("x.exp(")));
        assert_eq!(suggest("my_helper"), None);
    }
}
