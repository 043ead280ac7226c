//! lazycl-macros: `#[kernel]`, `#[device_fn]` and `expr!`, which translate a subset of
//! Rust into OpenCL C at compile time (see `docs/KERNEL_SUBSET.md` and `docs/EXPR.md`).
//! Use them through the `lazycl` crate, whose `__private` module the generated code
//! refers to.
//!
//! Pipeline, bottom to top (each module imports only those before it):
//!
//! - `diag`: spans and the collected errors;
//! - `ir`: the typed IR (scalar types, whose facts come from the element-type table of
//!   `lazycl-clc`, literal inference, expressions, statements, the signatures of device
//!   functions);
//! - `signature`: syn types and function headers → IR parameter types;
//! - `generics`: a generic kernel's type parameters, the element types each admits, and
//!   its instances (the function with each parameter replaced by a type); its const
//!   parameters;
//! - `lower`: a body from syn to the IR, with the subset's type rules;
//! - `emit`: the IR as OpenCL C, with Rust's semantics (`lazycl-clc`'s snippets and
//!   helper functions, which the runtime's kernels share);
//! - `resolve`: how a caller gets the signatures and sources of the device functions it
//!   calls and the definitions of the kernel structs it takes, through their hidden
//!   macros;
//! - `kernel_struct`: `#[derive(KernelStruct)]` (checks, layout assertions, the hidden
//!   macro);
//! - `expr`: `expr!` (one expression lowered and emitted per element-type combination);
//! - `function`: `#[kernel]` and `#[device_fn]` (translation and the Rust around it; a
//!   device function's `map` is an `expr!`-like node);
//! - this file: the macros' entry points.
//!
//! `lower/` and `emit/` mirror each other: a construct lowered in `lower/x.rs` is emitted
//! in `emit/x.rs`.

mod diag;
mod emit;
mod expr;
mod function;
mod generics;
mod ir;
mod kernel_struct;
mod lower;
mod resolve;
mod signature;

use proc_macro::TokenStream;

use resolve::{Resolved, ResolvedItem};
use signature::FnKind;

/// Translates a function into an OpenCL C kernel and generates a typed launcher.
///
/// ```ignore
/// #[kernel]
/// fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
///     let i = global_id(0);
///     if i < y.len() {
///         y[i] = a * x[i] + y[i];
///     }
/// }
///
/// let k = saxpy::bind(&ctx)?;                  // build once per context
/// k.global([n]).local([64]).launch(2.0, &x, &mut y)?;   // asynchronous
/// ```
///
/// `fn name` becomes `mod name` with `NAME`, `SOURCE`, `bind(&Context) -> Result<Bound>`,
/// `Bound::global(dims) -> Launch` and `Launch::{local, launch}`; `launch` takes the
/// kernel's parameters with `&[T]` as `&Array<T>` and `&mut [T]` as `&mut Array<T>`.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    function::entry(FnKind::Kernel, attr.into(), item.into()).into()
}

/// Translates a helper function callable from `#[kernel]`s and other device functions.
///
/// It must be defined before its callers, in the same module or a parent module (it
/// defines a hidden `macro_rules!` that callers expand). Parameters are scalars and
/// slices; the return type is a scalar or nothing. Recursion is not supported.
#[proc_macro_attribute]
pub fn device_fn(attr: TokenStream, item: TokenStream) -> TokenStream {
    function::entry(FnKind::DeviceFn, attr.into(), item.into()).into()
}

/// An elementwise expression over arrays and scalars in scope, translated to OpenCL C at
/// compile time and recorded as one lazy node that fuses with the nodes around it; or a
/// closure with typed parameters, giving a value with `.apply(...)`.
///
/// ```ignore
/// let z = expr!(if x > 0.0 { a * x } else { (x * 0.5).exp() } + y);   // Array<f32>
/// let f = expr!(|x: f32, y: f32| x.mul_add(2.0, y));
/// let w = f.apply(&x, 1.5);                                           // Array<f32>
/// ```
///
/// See `docs/EXPR.md` for the accepted subset and the typing rules.
#[proc_macro]
pub fn expr(input: TokenStream) -> TokenStream {
    expr::entry(input.into()).into()
}

/// A `#[repr(C)]` struct of scalar fields (`f32 f64 i32 u32 i64 u64`) that `#[kernel]`s
/// take by value and read fields of (`p.dt`). Rust's layout is checked against OpenCL C's
/// at compile time. Like a `#[device_fn]`, it must be defined before the kernels that take
/// it, in the same module or a parent module (it defines a hidden `macro_rules!`).
///
/// ```ignore
/// #[derive(Clone, Copy, KernelStruct)]
/// #[repr(C)]
/// struct Params { dt: f32, steps: u32 }
///
/// #[kernel]
/// fn step(p: Params, x: &mut [f32]) { let i = global_id(0); x[i] += p.dt * p.steps as f32; }
/// ```
#[proc_macro_derive(KernelStruct)]
pub fn kernel_struct(input: TokenStream) -> TokenStream {
    kernel_struct::derive(input.into()).into()
}

/// Implementation detail of `#[kernel]`, `#[device_fn]` and `expr!`: the translation once
/// the signatures of the called device functions are known (the end of the chain of
/// their hidden macros, see `resolve`).
#[doc(hidden)]
#[proc_macro]
pub fn __lazycl_resolved(input: TokenStream) -> TokenStream {
    let r = match syn::parse::<Resolved>(input) {
        Ok(r) => r,
        Err(e) => return e.to_compile_error().into(),
    };
    let deps = match r.deps() {
        Ok(deps) => deps,
        Err(e) => return e.to_compile_error().into(),
    };
    match r.item {
        ResolvedItem::Fn(kind, attr, item) => function::resolved(kind, attr, &item, &deps),
        ResolvedItem::Expr(input) => expr::resolved(input, &deps.sigs),
    }
    .into()
}
