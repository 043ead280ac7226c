//! `#[derive(KernelStruct)]`: a `#[repr(C)]` struct of scalar fields that kernels take by
//! value. The derive checks the struct (named fields of `f32 f64 i32 u32 i64 u64`, no
//! generics), asserts at compile time that Rust's layout is OpenCL C's (size and every
//! offset), writes the argument's bytes field by field (padding 0), and defines a hidden
//! `macro_rules!` through which kernels fetch the definition, like a device function's
//! signature (`resolve`): `@resolve` passes `struct|Name|a:f32,...` along the chain, from
//! which the kernel writes the `typedef` itself.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use crate::diag::{Errors, Spanned};
use crate::ir::{is_field_type, Field, Scalar, StructDef};

/// The most bytes a kernel struct has (the runtime's `MAX_STRUCT_BYTES`).
const MAX_BYTES: usize = 64;

/// The hidden macro of the kernel struct `name`.
pub fn struct_macro(name: &str, span: Span) -> Ident {
    Ident::new(&format!("__lazycl_kernel_struct_{name}"), span)
}

/// Entry point of the derive.
pub fn derive(input: TokenStream) -> TokenStream {
    let item: syn::DeriveInput = match syn::parse2(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let mut errors = Errors::default();
    let def = check(&item, &mut errors);
    if let Some(e) = errors.into_error() {
        return e.to_compile_error();
    }
    expand(&item.ident, &def)
}

/// The struct's definition, with errors for what kernels cannot take.
fn check(item: &syn::DeriveInput, errors: &mut Errors) -> StructDef {
    let name = &item.ident;
    let repr_c = item.attrs.iter().any(|a| {
        a.path().is_ident("repr")
            && a.parse_args_with(syn::punctuated::Punctuated::<Ident, syn::Token![,]>::parse_terminated)
                .is_ok_and(|r| r.iter().any(|i| i == "C"))
    });
    if !repr_c {
        errors.add(
            name.span(),
            format!("a KernelStruct needs `#[repr(C)]` on `{name}`: kernels read its fields at C's offsets"),
        );
    }
    if !item.generics.params.is_empty() {
        errors.add(item.generics.span(), "a KernelStruct cannot be generic");
    }
    let mut fields = Vec::new();
    match &item.data {
        syn::Data::Struct(s) => match &s.fields {
            syn::Fields::Named(named) => {
                for f in &named.named {
                    let ty = match &f.ty {
                        syn::Type::Path(p) => {
                            p.path.get_ident().and_then(|i| Scalar::from_rust(&i.to_string()))
                        }
                        _ => None,
                    };
                    match (ty, &f.ident) {
                        (Some(ty), Some(id)) if is_field_type(ty) => fields.push(Field {
                            name: id.to_string(),
                            ty,
                        }),
                        _ => errors.add(
                            f.ty.span(),
                            "a KernelStruct's fields are `f32`, `f64`, `i32`, `u32`, `i64` or `u64` (`bool` and \
                             `usize` have other sizes on devices; nested structs and arrays are not supported)",
                        ),
                    }
                }
            }
            _ => errors.add(
                name.span(),
                "a KernelStruct has named fields: `struct Params { dt: f32, steps: u32 }`",
            ),
        },
        _ => errors.add(name.span(), "KernelStruct derives for structs only"),
    }
    if fields.is_empty() && errors.is_empty() {
        errors.add(name.span(), "a KernelStruct needs at least one field");
    }
    let def = StructDef {
        name: name.to_string(),
        fields,
    };
    let size = def.layout().size;
    if size > MAX_BYTES && errors.is_empty() {
        errors.add(
            name.span(),
            format!("`{name}` has {size} bytes; a kernel struct has at most {MAX_BYTES} (pass more through an array)"),
        );
    }
    def
}

fn expand(name: &Ident, def: &StructDef) -> TokenStream {
    let p = quote! { ::lazycl::__private };
    let layout = def.layout();
    let size = layout.size;
    let source = def.typedef();
    let encoded = def.encode();
    let writes = def.fields.iter().zip(&layout.offsets).map(|(f, &at)| {
        let id = format_ident!("{}", f.name);
        let end = at + f.ty.bits() as usize / 8;
        quote! { b[#at..#end].copy_from_slice(&self.#id.to_le_bytes()); }
    });
    let offsets = def.fields.iter().zip(&layout.offsets).map(|(f, &at)| {
        let id = format_ident!("{}", f.name);
        let msg = format!("`{name}.{}` is not at OpenCL C's offset {at}", f.name);
        quote! { assert!(::core::mem::offset_of!(#name, #id) == #at, #msg); }
    });
    let size_msg = format!("`{name}` is not OpenCL C's {size} bytes");
    let mac = struct_macro(&def.name, name.span());
    let doc = format!("Hidden: the OpenCL C definition of the KernelStruct `{name}`.");
    quote! {
        impl #p::KernelStruct for #name {
            const CL_SOURCE: &'static str = #source;
            #[inline]
            fn struct_bytes(&self) -> #p::StructBytes {
                let mut b = [0u8; #size];
                #(#writes)*
                #p::StructBytes::from_array(b)
            }
        }
        const _: () = {
            assert!(::core::mem::size_of::<#name>() == #size, #size_msg);
            #(#offsets)*
        };
        #[doc = #doc]
        #[allow(unused_macros)]
        macro_rules! #mac {
            (@resolve [$next:ident $($rest:ident)*] [$($sigs:tt)*] $($item:tt)*) => {
                $next! { @resolve [$($rest)*] [$($sigs)* #encoded] $($item)* }
            };
            (@resolve [] [$($sigs:tt)*] $($item:tt)*) => {
                ::lazycl::__lazycl_resolved! { [$($sigs)* #encoded] $($item)* }
            };
        }
    }
}
