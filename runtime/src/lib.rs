//! lazycl-runtime: devices, typed device arrays, the lazy graph, fusion, code generation,
//! kernel caches and launches. Users normally depend on the `lazycl` facade crate.

#![warn(missing_docs)]

mod array;
mod buffer;
mod cache;
mod cl;
mod codegen;
mod context;
mod device;
mod dtype;
mod env;
mod error;
mod exec;
mod expr;
mod fit;
mod fuse;
mod graph;
pub mod kernel;
mod layout;
mod ops;
mod program;
mod queue;
mod reduce;
mod shape;
mod stats;

pub use array::{Array, ArrayArg};
pub use cache::CacheDir;
pub use context::{Context, ContextBuilder, DEFAULT_MAX_QUEUED_COMMANDS};
pub use device::{device_table, devices, DeviceInfo, DeviceSelector, DeviceType};
pub use dtype::{DType, Element, Float, Integer, Numeric, ScalarBits, Signed};
pub use error::{Error, Result};
pub use exec::{eval, EvalList, NodeHandle};
pub use expr::{expr_node, kind as expr_kind, ExprArg, ExprInput, ExprOperand, ExprTemplate};
pub use graph::{BinaryOp, ReduceOp, TernaryOp, UnaryOp};
pub use kernel::{Dims, Kernel, KernelArg, KernelSource, LaunchOptions};
pub use ops::{select, CtxRef, Operand};
pub use queue::{Event, Queue};
pub use shape::IntoShape;
pub use stats::Stats;
