//! Calls across macro invocations. A proc macro sees only its own input, so a caller of a
//! `#[device_fn]` (a kernel, another device function, an `expr!`) cannot read the
//! callee's signature. Instead each `#[device_fn]` defines a hidden `macro_rules!` that
//! knows its signature and source:
//!
//! - `name!(@resolve [next ...] [sigs ...] item)` appends its encoded signature to `sigs`
//!   and hands on to the next callee's macro; the last one expands to
//!   `__lazycl_resolved! { [sigs ...] item }`, where the translation runs with every
//!   callee's signature known;
//! - `name!(@source)` expands to the callee's OpenCL C source, which the caller's source
//!   concatenates at compile time; `name!(@grad_source)` to its partial derivatives'
//!   (see `grad`), which a caller's derivative calls.
//!
//! A `#[derive(KernelStruct)]` struct joins the same chain: its macro appends its
//! definition (`struct|Name|a:f32,...`), from which a kernel writes the `typedef`.
//!
//! This module names those macros, starts the chain, writes the `@source` references and
//! parses the input of `__lazycl_resolved!` into [`Deps`]. The macros themselves are
//! generated with the device function (`function::device_fn`) and the struct
//! (`kernel_struct`).

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;
use syn::parse::{Parse, ParseStream};

use crate::grad::partial_base;
use crate::ir::{DevSig, StructDef};
use crate::signature::FnKind;

/// The name of the hidden macro a `#[device_fn]` called `name` defines. A call of a
/// function that is not a device function (or is defined below its caller: these macros
/// are seen below their definition, like any `macro_rules!`) fails as rustc's "cannot find
/// macro": the name is what that message shows, so it says what to do. (A fallback macro
/// with our own `compile_error!` is not possible: rustc reports any second definition
/// that a caller could see as ambiguous.)
pub fn devfn_macro(name: &str, span: Span) -> Ident {
    Ident::new(&format!("{name}_needs_device_fn_defined_above"), span)
}

/// `first! { @resolve [rest ...] [] item }`: the chain through the callees' macros (in
/// call order) that ends in `__lazycl_resolved! { [sigs ...] item }`; `None` without
/// callees.
pub fn resolve_chain(macros: Vec<Ident>, item: TokenStream) -> Option<TokenStream> {
    let mut macros = macros.into_iter();
    let first = macros.next()?;
    let rest: Vec<Ident> = macros.collect();
    Some(quote! { #first! { @resolve [#(#rest)*] [] #item } })
}

/// `m!(@source)` for each callee's macro `m` (`m!(@source f32)` for an instance of a
/// generic one: its types, as in [`DevSig::instance`]): the callees' OpenCL C sources, to
/// concatenate before the caller's own. A partial derivative (`f__grad0`, see `grad`) is
/// in its function's `m!(@grad_source)`.
pub fn callee_sources<'a>(callees: impl Iterator<Item = &'a DevSig>) -> Vec<TokenStream> {
    callees
        .map(|c| {
            let types: Vec<Ident> = c
                .instance
                .split('_')
                .filter(|t| !t.is_empty())
                .map(|t| Ident::new(t, Span::call_site()))
                .collect();
            match partial_base(&c.name) {
                Some(base) => {
                    let m = devfn_macro(base, Span::call_site());
                    quote! { #m!(@grad_source #(#types)*) }
                }
                None => {
                    let m = devfn_macro(&c.name, Span::call_site());
                    quote! { #m!(@source #(#types)*) }
                }
            }
        })
        .collect()
}

/// Input of `__lazycl_resolved!`: `["sig" ...] kernel|device_fn [attribute] fn ...` or
/// `["sig" ...] expr <expr! input>`.
pub struct Resolved {
    sigs: Vec<syn::LitStr>,
    pub item: ResolvedItem,
}

/// What is translated once the signatures are known.
pub enum ResolvedItem {
    /// The function and its attribute's arguments.
    Fn(FnKind, TokenStream, Box<syn::ItemFn>),
    Expr(TokenStream),
}

impl Parse for Resolved {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let content;
        syn::bracketed!(content in input);
        let mut sigs = Vec::new();
        while !content.is_empty() {
            sigs.push(content.parse::<syn::LitStr>()?);
        }
        let k: Ident = input.parse()?;
        let item = if k == "expr" {
            ResolvedItem::Expr(input.parse()?)
        } else {
            let kind = if k == "kernel" {
                FnKind::Kernel
            } else {
                FnKind::DeviceFn
            };
            let attr;
            syn::bracketed!(attr in input);
            ResolvedItem::Fn(kind, attr.parse()?, Box::new(input.parse()?))
        };
        Ok(Resolved { sigs, item })
    }
}

/// What a translation knows from other macros: the signatures of the device functions
/// called and the definitions of the kernel structs taken.
#[derive(Default)]
pub struct Deps {
    pub sigs: Vec<DevSig>,
    pub structs: Vec<StructDef>,
}

impl Resolved {
    /// The signatures and struct definitions passed along by the chain.
    pub fn deps(&self) -> syn::Result<Deps> {
        let mut deps = Deps::default();
        for l in &self.sigs {
            let v = l.value();
            if let Some(s) = StructDef::decode(&v) {
                deps.structs.push(s);
            } else if let Some(sig) = DevSig::decode(&v) {
                deps.sigs.push(sig);
            } else {
                return Err(syn::Error::new(
                    l.span(),
                    "lazycl internal error: malformed device function signature",
                ));
            }
        }
        Ok(deps)
    }
}
