//! The OpenCL objects: raw calls, devices, the context's internals, queues and the
//! per-buffer record of the commands that use them, buffers and their pool, programs and
//! the disk cache, kernels and the launch hot path. Nothing here knows the lazy graph.

pub(crate) mod access;
pub(crate) mod bridge;
pub(crate) mod buffer;
pub(crate) mod cache;
pub(crate) mod cl;
pub(crate) mod cl_context;
pub(crate) mod context;
pub(crate) mod device;
pub(crate) mod dispatch;
pub(crate) mod dispatch_mode;
pub(crate) mod kernel;
pub(crate) mod memory;
pub(crate) mod pool;
pub(crate) mod program;
pub(crate) mod queue;
pub(crate) mod submit;
pub(crate) mod tag;
pub(crate) mod tile_table;
