//! # lazycl
//!
//! Array computing on OpenCL devices (GPUs and CPUs) from ordinary Rust:
//!
//! - [`Array`] records arithmetic, math, views and reductions lazily, fuses connected
//!   elementwise work into as few kernels as possible, and runs it only when a result is
//!   materialized ([`eval`](Array::eval), [`to_vec`](Array::to_vec),
//!   [`to_ndarray`](Array::to_ndarray), [`item`](Array::item));
//! - [`#[kernel]`](macro@kernel) translates a Rust function into OpenCL C at compile time
//!   and generates a typed launcher; [`#[device_fn]`](macro@device_fn) writes helpers
//!   they call; [`expr!`] turns a Rust expression over arrays into one lazy node.
//!
//! ## A tour
//!
//! ```
//! use lazycl::prelude::*;
//!
//! #[kernel]
//! fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
//!     let i = global_id(0);
//!     if i < y.len() {
//!         y[i] = a * x[i] + y[i];
//!     }
//! }
//!
//! fn main() -> lazycl::Result<()> {
//!     // A context owns one device: LAZYCL_DEVICE, else the first GPU, else the first device.
//!     let ctx = Context::new()?;
//!     let x = ctx.array(&ndarray::array![1.0f32, 2.0, 3.0, 4.0])?; // an upload
//!     let y = ctx.full(4, 0.5f32)?; // a fill on the device
//!
//!     // Operators record a lazy graph; materializing it runs one fused kernel.
//!     let before = ctx.stats();
//!     let z = (&x * 2.0 + &y).sqrt() * &x;
//!     assert_eq!(ctx.stats(), before); // nothing ran yet
//!     let host: Vec<f32> = [1.0f32, 2.0, 3.0, 4.0]
//!         .iter()
//!         .map(|x| (x * 2.0 + 0.5).sqrt() * x)
//!         .collect();
//!     for (got, want) in z.to_vec()?.iter().zip(&host) {
//!         assert!((got - want).abs() <= 1e-5 * want); // OpenCL's sqrt: within 3 ulp
//!     }
//!     assert_eq!((ctx.stats() - before).kernels_launched, 1); // four ops, one kernel
//!
//!     // Reductions stay on the device and feed later kernels: no host round trip.
//!     let centered = &x - x.mean();
//!     assert_eq!(centered.sum().item()?, 0.0);
//!     assert_eq!(x.sum_axis(Axis(0)).item()?, 10.0);
//!
//!     // A #[kernel]: built once per context, launched asynchronously.
//!     let mut acc = ctx.zeros::<f32>(4)?;
//!     let k = saxpy::bind(&ctx)?;
//!     k.global(4).launch(3.0, &x, &mut acc)?;
//!     assert_eq!(acc.to_vec()?, [3.0, 6.0, 9.0, 12.0]);
//!
//!     // expr!: a Rust expression over arrays and scalars in scope, one lazy node.
//!     let t = 2.5f32;
//!     let clipped = expr!(if x > t { t } else { x * acc });
//!     assert_eq!(clipped.to_vec()?, [3.0, 12.0, 2.5, 2.5]);
//!     Ok(())
//! }
//! ```
//!
//! ## Where to look
//!
//! | to | see |
//! |---|---|
//! | open a device, create arrays | [`Context`], [`Context::builder`], [`Context::array`], [`Context::full`], [`Context::arange`], [`Context::linspace`], [`Context::eye`], [`Context::iota`] |
//! | operators, math, comparisons | [`Array`] |
//! | reductions | [`Array::sum`], [`Array::sum_axis`], [`Array::mean`], [`Array::argmax`], [`Array::var_axis`] |
//! | views and regions | [`Array::slice`] (with [`s!`]), [`Array::t`], [`Array::reshape`], [`concatenate`], [`Array::slice_mut`] |
//! | matrix products | [`Array::matmul`], [`Array::dot`] |
//! | scans, gathers, sorts, counts | [`Array::cumsum`], [`Array::take`], [`Array::sort`], [`sort_by_key`], [`Array::compress`], [`Array::bincount`], [`Array::histogram`], [`Array::one_hot`] |
//! | sorted sets, reductions by key | [`Array::unique`], [`Array::unique_all`], [`union1d`], [`intersect1d`], [`setdiff1d`], [`reduce_by_key`] |
//! | random numbers | [`Context::random_uniform`], [`Rng`] |
//! | materializing | [`Array::eval`], [`eval()`], [`Array::assign`], [`Array::to_vec`] |
//! | queues and events | [`Queue`], [`Event`], [`Context::new_queue`] |
//! | counters | [`Stats`] ([`Context::stats`]) |
//! | kernels in Rust | [`macro@kernel`], [`macro@device_fn`], [`expr!`], [`KernelStruct`](derive@KernelStruct) |
//!
//! `docs/NAMES.md` in the repository maps numpy's and ndarray's names to lazycl's;
//! ARCHITECTURE.md explains how it works. Every example in these docs runs as a test
//! (`cargo test --doc`) on the default device.

pub use lazycl_macros::*;
pub use lazycl_runtime::*;

/// Everything a typical program needs: `use lazycl::prelude::*;`.
pub mod prelude {
    pub use lazycl_macros::*;
    pub use lazycl_runtime::{
        bf16, c32, c64, concatenate, eval, f16, s, scatter_add, select, sort_by_key, stack, Arithmetic,
        Array, Axis, ComplexFloat, Context, DType, DeviceSelector, Element, Error, Event, FftNorm, Float,
        Index, Inexact, NewAxis, Numeric, Queue, Result, Rng, SearchSide, Step,
    };
}

/// Items used by code that the macros generate. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use lazycl_runtime::{
        bf16, c32, c64, expr_kind, expr_node, f16, Arithmetic, Array, ArrayArg, Bitwise, ComplexFloat,
        Context, DType, Derivative, Element, Error, Event, ExprArg, ExprInput, ExprOperand, ExprTemplate,
        Float, Inexact, Integer, Numeric, Queue, Result, Signed,
    };
    pub use lazycl_runtime::{
        Dims, Kernel, KernelArg, KernelConstant, KernelSource, KernelStruct, LaunchOptions, StructBytes,
    };
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The examples of docs/FEATURES.md (the README's features at length), compiled and run as
/// doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/FEATURES.md")]
pub struct FeaturesDoctests;
