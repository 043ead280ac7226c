//! # lazycl
//!
//! Array computing on OpenCL devices from ordinary Rust:
//!
//! - `#[kernel]` translates a Rust function into OpenCL C at compile time and generates a
//!   typed launcher;
//! - [`Array`] records arithmetic lazily, fuses it into as few kernels as possible and
//!   runs it only when a result is materialized (`eval`, `to_vec`, `to_ndarray`, `item`).
//!
//! See the README for a tour and ARCHITECTURE.md for how it works.

pub use lazycl_macros::*;
pub use lazycl_runtime::*;

/// Everything a typical program needs: `use lazycl::prelude::*;`.
pub mod prelude {
    pub use lazycl_macros::*;
    pub use lazycl_runtime::{
        concatenate, eval, s, scatter_add, select, sort_by_key, stack, Array, Axis, Context, DType,
        DeviceSelector, Element, Error, Event, Float, NewAxis, Numeric, Queue, Result, Rng,
    };
}

/// Items used by code that the macros generate. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use lazycl_runtime::{
        expr_kind, expr_node, Array, ArrayArg, Context, DType, Element, Error, Event, ExprArg, ExprInput,
        ExprOperand, ExprTemplate, Float, Integer, Numeric, Queue, Result, Signed,
    };
    pub use lazycl_runtime::{
        Dims, Kernel, KernelArg, KernelConstant, KernelSource, KernelStruct, LaunchOptions, StructBytes,
    };
}
