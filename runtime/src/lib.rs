//! lazycl-runtime: devices, typed device arrays, the lazy graph, fusion, code generation,
//! kernel caches and launches. Users normally depend on the `lazycl` facade crate.

#![warn(missing_docs)]

// The layers, bottom to top: each uses only those above it in this list (checked by
// `scripts/check-layers.sh`, which `make test` runs). ARCHITECTURE.md is the map.
mod dtype;
mod env;
mod error;
mod layout;
mod profile;
mod stats;

mod backend;

mod graph;

mod plan;

mod codegen;

mod exec;

mod multi;

mod api;

// Arrays split by rows across MPI ranks (feature `mpi`; its docs are the module's own,
// whose links resolve inside it).
#[cfg(feature = "mpi")]
pub mod dist;
// `expr!`'s run-time side is part of the api layer; it keeps its path because compiler
// diagnostics of user code name it (tests/ui/expr/*.stderr).
mod expr;

pub use api::array::Array;
pub use api::autodiff::{grad, value_and_grad};
pub use api::builder::{
    ContextBuilder, DEFAULT_BUILD_NOTICE_AFTER, DEFAULT_MAX_QUEUED_COMMANDS, DEFAULT_SPARE_BUFFERS,
};
pub use api::compact::Compacted;
pub use api::eval::{eval, EvalList, NodeHandle};
pub use api::fft::FftNorm;
pub use api::histogram::Histogram;
pub use api::indexing::scatter_add;
pub use api::kernel::{Kernel, LaunchOptions};
pub use api::ops::{select, CtxRef, Operand};
pub use api::queue::Queue;
pub use api::random::Rng;
pub use api::reduce_by_key::{reduce_by_key, KeyReduce, ReducedByKey};
pub use api::regions::{concatenate, stack};
pub use api::sets::{intersect1d, setdiff1d, union1d, UniqueAll, UniqueCounts, UniqueInverse};
pub use api::slice_mut::SliceMut;
pub use api::sort::{sort_by_key, SortedByKey};
pub use api::step::{Step, StepArg, StepArgs, StepArrays};
pub use api::topk::TopK;
pub use api::views::{AsAxes, AsAxis};
pub use backend::cache::CacheDir;
pub use backend::context::Context;
pub use backend::device::{device_table, devices, DeviceInfo, DeviceSelector, DeviceType};
pub use backend::dispatch_mode::Dispatch;
pub use backend::kernel::{
    ArrayArg, Dims, KernelArg, KernelConstant, KernelSource, KernelStruct, StructBytes, MAX_STRUCT_BYTES,
};
pub use backend::queue::Event;
pub use dtype::{
    c32, c64, Arithmetic, Bitwise, ComplexFloat, ComplexPart, DType, Element, Float, Index, Inexact, Integer,
    Numeric, ScalarBits, Signed,
};
pub use error::{Error, Result};
pub use expr::{expr_node, kind as expr_kind, Derivative, ExprArg, ExprInput, ExprOperand, ExprTemplate};
pub use graph::shape::IntoShape;
pub use graph::{BinaryOp, ReduceOp, SearchSide, TernaryOp, UnaryOp};
/// The `half` crate, whose `f16` and `bf16` are element types.
pub use half;
pub use half::{bf16, f16};
pub use layout::GemmTile;
pub use ndarray::{s, Axis, NewAxis, SliceInfoElem};
/// The `num-complex` crate, whose `Complex32` and `Complex64` are element types ([`c32`],
/// [`c64`]).
pub use num_complex;
pub use profile::Tuning;
pub use stats::{MemoryStats, Stats};
