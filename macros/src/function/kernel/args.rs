//! What one translation of a kernel gives the runtime: its OpenCL C program (concatenated
//! at compile time with the device functions it calls) and its OpenCL arguments (a slice
//! is two: the buffer and its length), the element types the device must support, and
//! the constants `bind` builds the program with.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use super::super::translate::Translation;
use crate::emit::pragmas;
use crate::generics::ConstParam;
use crate::ir::{DType, ParamTy, Scalar, StructDef};

/// The OpenCL side of a launch: how `launch`'s parameters become kernel arguments.
#[derive(Default)]
pub(super) struct LaunchArgs {
    /// The number of OpenCL arguments.
    pub(super) num_args: u32,
    /// The element types the device must support (sorted, without repeats).
    pub(super) dtypes: Vec<Ident>,
    /// Statements that take each array's buffer on the launch's queue.
    pub(super) prepare: Vec<TokenStream>,
    /// The OpenCL arguments, in order.
    pub(super) kargs: Vec<TokenStream>,
    /// The buffers whose dependencies the launch tracks.
    pub(super) tracked: Vec<TokenStream>,
}

pub(super) fn launch_args(t: &Translation) -> LaunchArgs {
    let mut a = LaunchArgs::default();
    let mut dtypes: Vec<DType> = Vec::new();
    let p = quote! { ::lazycl::__private };
    for param in &t.params {
        let id = &param.name;
        match param.ty {
            ParamTy::Scalar(s) => {
                a.num_args += 1;
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
                a.num_args += 1;
                a.kargs.push(tuple_bytes(id, &t.structs[k]));
            }
            ParamTy::Struct(_) => {
                a.num_args += 1;
                a.kargs
                    .push(quote! { #p::KernelArg::Struct(#p::KernelStruct::struct_bytes(&#id)) });
            }
            ParamTy::Slice { elem, mutable } => {
                a.num_args += 2;
                let arg = format_ident!("__lazycl_arg_{}", id);
                if mutable {
                    a.prepare
                        .push(quote! { let #arg = #id.kernel_arg_mut_on(self.opts.queue)?; });
                } else {
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

/// A tuple argument: its bytes written here, field by field at C's offsets.
fn tuple_bytes(id: &Ident, def: &StructDef) -> TokenStream {
    let p = quote! { ::lazycl::__private };
    let layout = def.layout();
    let size = layout.size;
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
    quote! {
        #p::KernelArg::Struct({
            let mut b = [0u8; #size];
            #(#writes)*
            #p::StructBytes::from_array(b)
        })
    }
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
