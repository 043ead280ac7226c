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

mod api;

// Temporary paths for codegen, which moves in its own step.
mod fuse {
    pub(crate) use crate::plan::*;
}
mod expr {
    pub(crate) use crate::graph::template::{instantiate, template};
}
mod queue {
    pub(crate) use crate::layout::ROW_TOTAL_COUNTER;
}

pub use api::array::Array;
pub use api::eval::{eval, EvalList, NodeHandle};
pub use api::expr::{expr_node, kind as expr_kind, ExprArg, ExprInput, ExprOperand, ExprTemplate};
pub use api::ops::{select, CtxRef, Operand};
pub use backend::cache::CacheDir;
pub use backend::context::{Context, ContextBuilder, DEFAULT_MAX_QUEUED_COMMANDS};
pub use backend::device::{device_table, devices, DeviceInfo, DeviceSelector, DeviceType};
pub use backend::kernel::{ArrayArg, Dims, Kernel, KernelArg, KernelSource, LaunchOptions};
pub use backend::queue::{Event, Queue};
pub use dtype::{DType, Element, Float, Integer, Numeric, ScalarBits, Signed};
pub use error::{Error, Result};
pub use graph::shape::IntoShape;
pub use graph::{BinaryOp, ReduceOp, TernaryOp, UnaryOp};
pub use profile::Tuning;
pub use stats::Stats;
