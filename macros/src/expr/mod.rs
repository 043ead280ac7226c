//! `expr!`: one Rust expression over arrays and scalars in scope (or a closure with typed
//! parameters), translated to an OpenCL C expression at compile time and recorded at run
//! time as one lazy node (`lazycl::expr_node`) that fuses with the nodes around it.
//!
//! The macro cannot see the Rust types of the captured names, so it works in three steps:
//!
//! 1. `input` parses the input and `check` walks the syntax, rejects what `expr!` does
//!    not support (with messages that say what is supported), and lists the operands
//!    (free names, in order of first use) and the device functions called.
//! 2. `variants`: a probe lowering with an unknown type per operand finds which operands
//!    must share an element type (classes) and which kind each class has (`{float}`,
//!    `{integer}`, a fixed type, anything); then every assignment of element types to the
//!    classes is lowered with the `#[kernel]` translator (`lower` + `emit`), each into its
//!    own template with exact, type-specific OpenCL C (wrapping, division guards, ...).
//! 3. `expand`: the generated Rust code implements a local trait (`traits`) for the
//!    tuple of the operands' element types of every valid assignment (its associated type
//!    is the result type, its function the template), so the Rust type checker picks the
//!    template, and a wrong combination is a compile error whose message lists what the
//!    expression accepts.
//!
//! Device functions called are fetched first, like a kernel's (see `resolve`).

mod check;
mod derivatives;
mod expand;
mod input;
mod kinds;
mod lowering;
mod traits;
mod variants;

use proc_macro2::TokenStream;
use quote::quote;

use crate::diag::Errors;
use crate::ir::DevSig;
use crate::resolve::resolve_chain;
use expand::{callee_macro, translate};

pub use expand::has_array_bound;

/// Entry point of `expr!`.
pub fn entry(input: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let Some((parsed, checked)) = input::read(input.clone(), &mut errors) else {
        return compile_errors(errors);
    };
    if !errors.is_empty() {
        return compile_errors(errors);
    }
    // Device functions called: fetch their signatures first through their hidden macros
    // (like a kernel does), ending in `__lazycl_resolved! { [sigs] expr ... }`.
    let macros = checked.callees.iter().map(callee_macro).collect();
    if let Some(chain) = resolve_chain(macros, quote! { expr #input }) {
        return chain;
    }
    translate(&parsed, &checked, &[])
}

/// `__lazycl_resolved! { [sigs] expr ... }`: the translation once the device functions'
/// signatures are known.
pub fn resolved(input: TokenStream, sigs: &[DevSig]) -> TokenStream {
    let mut errors = Errors::default();
    match input::read(input, &mut errors) {
        Some((parsed, checked)) if errors.is_empty() => translate(&parsed, &checked, sigs),
        _ => compile_errors(errors),
    }
}

/// Errors in expression position: `compile_error!`s in a block (several are not an
/// expression by themselves).
fn compile_errors(errors: Errors) -> TokenStream {
    match errors.into_error() {
        Some(e) => {
            let e = e.to_compile_error();
            quote! {{ #e }}
        }
        None => quote! { ::core::compile_error!("lazycl internal error: expr! failed without a message") },
    }
}
