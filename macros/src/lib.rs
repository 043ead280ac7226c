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
//! - `grad`: derivatives at compile time, forward mode on the syntax of a body (the Rust
//!   of each partial derivative, lowered like the body itself);
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
mod grad;
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
/// ```
/// use lazycl::prelude::*;
///
/// #[kernel]
/// fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
///     let i = global_id(0);
///     if i < y.len() {
///         y[i] = a * x[i] + y[i];
///     }
/// }
///
/// fn main() -> lazycl::Result<()> {
///     let ctx = Context::new()?;
///     let x = ctx.from_slice(&[1.0f32, 2.0, 3.0, 4.0])?;
///     let mut y = ctx.full(4, 10.0f32)?;
///
///     let k = saxpy::bind(&ctx)?; // the program is built once per context
///     k.global(4).launch(2.0, &x, &mut y)?; // asynchronous: sets arguments, enqueues
///     assert_eq!(y.to_vec()?, [12.0, 14.0, 16.0, 18.0]); // waits for the kernel
///     Ok(())
/// }
/// ```
///
/// `fn name` becomes `mod name` with `NAME`, `SOURCE`, `bind(&Context) -> Result<Bound>`,
/// `Bound::global(dims) -> Launch` and `Launch::{local, on, after, launch,
/// launch_event}`; `launch` takes the kernel's parameters with `&[T]` as `&Array<T>` and
/// `&mut [T]` as `&mut Array<T>`. A kernel may be generic over the element type (one
/// OpenCL C program per type, all written at compile time) and take `const` parameters
/// (program constants):
///
/// ```
/// use lazycl::prelude::*;
///
/// #[kernel]
/// fn scale<T: Float, const K: i32>(x: &mut [T]) {
///     let i = global_id(0);
///     if i < x.len() {
///         x[i] = x[i] * (K as T);
///     }
/// }
///
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let mut x = ctx.from_slice(&[1.0f64, -2.5])?;
/// scale::bind::<f64, 3>(&ctx)?.global(x.len()).launch(&mut x)?;
/// assert_eq!(x.to_vec()?, [3.0, -7.5]);
/// # Ok(())
/// # }
/// ```
///
/// The accepted Rust (types, intrinsics such as `global_id`, `barrier`, local memory,
/// atomics and work-group reductions) is in `docs/KERNEL_SUBSET.md`.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    function::entry(FnKind::Kernel, attr.into(), item.into()).into()
}

/// Translates a helper function callable from `#[kernel]`s, other device functions and
/// `expr!`; one of scalars that returns a scalar also gets `name::map(..)`, which applies
/// it elementwise to arrays as a lazy node.
///
/// ```
/// use lazycl::prelude::*;
///
/// #[device_fn]
/// fn softplus(x: f32) -> f32 {
///     if x > 20.0 { x } else { (1.0 + x.exp()).ln() }
/// }
///
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let x = ctx.from_slice(&[-1.0f32, 0.0, 30.0])?;
/// let y = softplus::map(&x) * 2.0; // lazy, and fused with the `* 2.0`
/// let want: Vec<f32> = [-1.0f32, 0.0, 30.0]
///     .iter()
///     .map(|&v| if v > 20.0 { v } else { (1.0 + v.exp()).ln() } * 2.0)
///     .collect();
/// for (got, want) in y.to_vec()?.iter().zip(&want) {
///     assert!((got - want).abs() < 1e-5);
/// }
/// # Ok(())
/// # }
/// ```
///
/// It must be defined before its callers, in the same module or a parent module (it
/// defines a hidden `macro_rules!` that callers expand). Parameters are scalars and
/// slices; the return type is a scalar or nothing. Recursion is not supported. A device
/// function may be generic over the element type like a kernel (it then has no `map`;
/// call it inside `expr!`).
#[proc_macro_attribute]
pub fn device_fn(attr: TokenStream, item: TokenStream) -> TokenStream {
    function::entry(FnKind::DeviceFn, attr.into(), item.into()).into()
}

/// An elementwise expression over arrays and scalars in scope, translated to OpenCL C at
/// compile time and recorded as one lazy node that fuses with the nodes around it; or a
/// closure with typed parameters, giving a value with `.apply(...)`.
///
/// ```
/// use lazycl::prelude::*;
///
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let x = ctx.from_slice(&[-2.0f32, 0.5, 3.0])?;
/// let y = ctx.from_slice(&[1.0f32, 1.0, 2.0])?;
/// let a = 4.0f32; // a scalar in scope: a kernel argument, never a new program
///
/// // Inside the expression `x` and `y` stand for one element each.
/// let z = expr!(if x > 0.0 { a * x + y } else { (x * 0.5).exp() });
/// let host = |x: f32, y: f32| if x > 0.0 { a * x + y } else { (x * 0.5).exp() };
/// assert_eq!(z.to_vec()?, [host(-2.0, 1.0), host(0.5, 1.0), host(3.0, 2.0)]);
///
/// // The closure form: typed parameters, no captures, applied to arrays or scalars.
/// let lerp = expr!(|a: f32, b: f32, t: f32| a + (b - a) * t);
/// assert_eq!(lerp.apply(&x, &y, 0.5).to_vec()?, [-0.5, 0.75, 2.5]);
///
/// let mask = expr!(x > 0.0 && y < 2.0); // an Array<bool>
/// assert_eq!(mask.to_vec()?, [false, true, false]);
/// # Ok(())
/// # }
/// ```
///
/// Inside a function generic over the element type, arrays `Array<T>` and host scalars `T`
/// are operands with no bound beyond the element kind; the expression compiles once and
/// picks the OpenCL C for `T` when called:
///
/// ```
/// use lazycl::prelude::*;
///
/// fn leaky_relu<T: lazycl::Float>(x: &Array<T>, slope: T) -> Array<T> {
///     expr!(if x > T::ZERO { x } else { x * slope })
/// }
///
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let x32 = ctx.from_slice(&[-2.0f32, 3.0])?;
/// assert_eq!(leaky_relu(&x32, 0.5).to_vec()?, [-1.0, 3.0]);
/// let x64 = ctx.from_slice(&[-2.0f64, 3.0])?;
/// assert_eq!(leaky_relu(&x64, 0.25).to_vec()?, [-0.5, 3.0]);
/// # Ok(())
/// # }
/// ```
///
/// An operand is a plain name: bind a field to a local first (`let w = &m.w;`), and call
/// an array's own methods (`x.sum()`) before the expression; the compile errors say so.
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
/// ```
/// use lazycl::prelude::*;
///
/// #[derive(Clone, Copy, KernelStruct)]
/// #[repr(C)]
/// struct Params {
///     dt: f32,
///     steps: u32,
/// }
///
/// #[kernel]
/// fn advance(p: Params, x: &mut [f32]) {
///     let i = global_id(0);
///     if i < x.len() {
///         x[i] += p.dt * p.steps as f32;
///     }
/// }
///
/// # fn main() -> lazycl::Result<()> {
/// let ctx = Context::new()?;
/// let mut x = ctx.from_slice(&[1.0f32, 2.0])?;
/// let p = Params { dt: 0.5, steps: 4 };
/// advance::bind(&ctx)?.global(2).launch(p, &mut x)?;
/// assert_eq!(x.to_vec()?, [3.0, 4.0]);
/// # Ok(())
/// # }
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
