//! lazycl-clc: the OpenCL C that both halves of lazycl write, written once.
//!
//! The macros (`#[kernel]`, `#[device_fn]`, `expr!`) translate Rust at compile time and the
//! runtime generates fused kernels at run time; an `expr!` template ends up inside a
//! runtime kernel, so the two must agree on every type name and on every helper function
//! they define. This crate holds what they share, and depends on nothing:
//!
//! - `dtype`: the element-type table ([`DType`]): Rust and OpenCL C names, the unsigned
//!   type wrapping arithmetic is computed in, sizes, signedness. The runtime re-exports
//!   [`DType`]; the macros map their own `Scalar` (which also knows `usize`) onto it.
//! - `text`: small snippets with Rust's semantics (wrapping `+ - *`, negation and `abs`
//!   through the unsigned type), the pragmas every program starts with, include guards.
//! - `helpers`: the helper functions generated code calls where OpenCL C differs from
//!   Rust (integer division and remainder, integer `pow`, `signum`, `clamp`, float →
//!   integer casts), and the counter-based random numbers (Philox4x32-10): one
//!   [`Helper`] (name and definition) per function and type, each named `lzc_*` and
//!   defined under the guard `LZC_HELPER_<name>`, so that a program holding two copies
//!   (an `expr!` template's and the runtime's own) compiles one.
//! - `complex`: the helpers of complex arithmetic (`c32` is `float2`, `c64` is
//!   `double2`) that the vector types do not give: products, quotients, `exp`, `ln`,
//!   `sqrt`, powers, with `num-complex`'s formulas.
//! - `narrow`: what a type stored narrower than it computes (`f16`, `bf16`: 16 bits in
//!   memory, `float` in a kernel) needs: loads, stores and casts that round to it.
//! - `group`: `#[kernel]`'s work-group collectives (`work_group_reduce_add`, ...), helpers
//!   over a `__local` scratch array the kernel declares.
//!
//! Layers, bottom to top: `dtype` → `text` → `helpers` → `complex` → `narrow` → `group` (`tests/it/layers.rs`
//! checks them).

pub mod complex;
mod dtype;
mod group;
mod helpers;
mod narrow;
mod text;

pub use dtype::DType;
pub use group::{collective, scratch_name, Collective, GROUP_SCRATCH};
pub use helpers::{
    atomic_add_float, clamp, div, extension, int64_atomics, int_from_float, philox4x32_10, philox_stream,
    pow, random_value, rem, signum, Draw, Helper,
};
pub use narrow::{
    bf16_bits, cast_to_narrow, f16_bits, f16_value, float_odd, load, store, vector_load, vector_store,
    CallHelper, VectorAt,
};
pub use text::{
    from_unsigned, guarded, pragmas, wrapping, wrapping_abs, wrapping_neg, FP64_PRAGMA, NO_CONTRACT_PRAGMA,
};
